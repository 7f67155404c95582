//===- runtime/interfaces/DriverCommunicator.h - Communicator over any driver ---*- C++ -*-===//
//
// The Communicator adapter, written once over the driver concept: every call
// validates through the driver, enqueues on the communicator's comm stream
// and waits. Backends instantiate it (runtime/local, runtime/nccl,
// runtime/mpi, runtime/gloo), host backends through
// createDriverCommunicator below.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_DRIVERCOMMUNICATOR_H
#define COLLC_RUNTIME_INTERFACES_DRIVERCOMMUNICATOR_H

#include "runtime/exec/CollectiveDriver.h"
#include "runtime/exec/GroupJoin.h"
#include "runtime/interfaces/Communicator.h"

#include "llvm/Support/FormatVariadic.h"

#include <string>

namespace collc::rt {

template <typename D> class DriverCommunicator : public Communicator {
public:
  DriverCommunicator(typename D::Communicator Comm, size_t Rank, size_t Size, std::string Name)
      : Comm(std::move(Comm)), Rank(Rank), Size(Size), Name(std::move(Name)),
        Stream(D::createStream(this->Name + ".comm")) {}

  size_t rank() const override { return Rank; }
  size_t size() const override { return Size; }

  llvm::Error allReduce(ReduceOp Op, ElemType T, llvm::MutableArrayRef<uint8_t> Data) override {
    auto E = D::elements(T, Data.size());
    if (!E)
      return E.takeError();
    auto R = D::resource(Data.data(), Data.size());
    if (llvm::Error Err = D::allReduce(Comm, R, R, *E, Op, stream()))
      return Err;
    return D::synchronize(stream());
  }

  llvm::Error allGather(llvm::ArrayRef<uint8_t> In, llvm::MutableArrayRef<uint8_t> Out) override {
    if (Out.size() != In.size() * Size)
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("all_gather output holds {0} bytes; {1} ranks x {2} bytes "
                                     "need {3}",
                                     Out.size(), Size, In.size(), In.size() * Size));
    auto E = D::elements(ElemType::U8, In.size());
    if (!E)
      return E.takeError();
    if (llvm::Error Err =
            D::allGather(Comm, D::resource(const_cast<uint8_t *>(In.data()), In.size()),
                         D::resource(Out.data(), Out.size()), *E, stream()))
      return Err;
    return D::synchronize(stream());
  }

  llvm::Error send(size_t Dst, llvm::ArrayRef<uint8_t> Data) override {
    auto E = D::elements(ElemType::U8, Data.size());
    if (!E)
      return E.takeError();
    if (llvm::Error Err = D::send(
            Comm, D::resource(const_cast<uint8_t *>(Data.data()), Data.size()), *E, Dst, stream()))
      return Err;
    return D::synchronize(stream());
  }

  llvm::Error recv(size_t Src, llvm::MutableArrayRef<uint8_t> Data) override {
    auto E = D::elements(ElemType::U8, Data.size());
    if (!E)
      return E.takeError();
    if (llvm::Error Err = D::recv(Comm, D::resource(Data.data(), Data.size()), *E, Src, stream()))
      return Err;
    return D::synchronize(stream());
  }

  llvm::Error sumScatter(ElemType T, llvm::ArrayRef<uint8_t> In,
                         llvm::MutableArrayRef<uint8_t> Out) override {
    if (In.size() != Out.size() * Size)
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("sum_scatter input holds {0} bytes; {1} ranks x {2} output "
                                     "bytes need {3}",
                                     In.size(), Size, Out.size(), Out.size() * Size));
    auto E = D::elements(T, Out.size());
    if (!E)
      return E.takeError();
    if (llvm::Error Err =
            D::reduceScatter(Comm, D::resource(const_cast<uint8_t *>(In.data()), In.size()),
                             D::resource(Out.data(), Out.size()), *E, ReduceOp::Sum, stream()))
      return Err;
    return D::synchronize(stream());
  }

  llvm::Error health() const override { return D::health(Comm); }

  llvm::Expected<std::shared_ptr<Communicator>> split(int Color, int Key) override {
    if (llvm::Error E = D::synchronize(stream()))
      return E;
    auto Child = D::split(Comm, Color, Key);
    if (!Child)
      return Child.takeError();
    if (!*Child)
      return std::shared_ptr<Communicator>();
    size_t ChildRank, ChildSize;
    if constexpr (requires { D::rankOf(*Child); }) { // an opaque communicator (gloo)
      ChildRank = D::rankOf(*Child);
      ChildSize = D::sizeOf(*Child);
    } else {
      ChildRank = (*Child)->rank();
      ChildSize = (*Child)->size();
    }
    return std::shared_ptr<Communicator>(std::make_shared<DriverCommunicator<D>>(
        *Child, ChildRank, ChildSize, Name + ".color" + std::to_string(Color)));
  }

  const typename D::Communicator &driverComm() const { return Comm; }

private:
  typename D::CommStream stream() const { return D::streamOf(Stream); }

  typename D::Communicator Comm;
  size_t Rank, Size;
  std::string Name;
  typename D::StreamOwner Stream;
};

/// This rank's communicator in the group named \p GroupName, joined through
/// the driver (a driver whose groups come from split accepts its world).
template <typename D>
llvm::Expected<std::shared_ptr<Communicator>> createDriverCommunicator(llvm::StringRef GroupName,
                                                                       size_t Size, size_t Rank,
                                                                       CommunicatorOptions Opts) {
  llvm::Expected<typename D::Communicator> C = joinGroup<D>(GroupName, Size, Rank, Opts.Timeout);
  if (!C)
    return C.takeError();
  return std::shared_ptr<Communicator>(
      std::make_shared<DriverCommunicator<D>>(*C, Rank, Size, GroupName.str()));
}

} // namespace collc::rt

#endif
