//===- runtime/launch/DriverWorldGather.h - A driver's world as a WorldGather -*- C++ -*-===//
//
// The world communicator of any host driver (runtime/exec/CollectiveDriver.h)
// that offers allGatherWords, joined under a name of the caller's (one that
// no executor of the run uses), as a WorldGather. The mpi and gloo drivers
// are both used this way by the tool; this header names neither.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LAUNCH_DRIVERWORLDGATHER_H
#define COLLC_RUNTIME_LAUNCH_DRIVERWORLDGATHER_H

#include "runtime/exec/GroupJoin.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/WorldGather.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <memory>
#include <string>

namespace collc::rt {

template <class D> class DriverWorldGather : public WorldGather {
public:
  DriverWorldGather(typename D::Communicator C, int64_t Rank, int64_t Size)
      : C(std::move(C)), Rank(Rank), Size(Size) {}
  int64_t rank() const override { return Rank; }
  int64_t size() const override { return Size; }
  llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Local) override {
    return D::allGatherWords(C, Local);
  }

private:
  typename D::Communicator C;
  int64_t Rank, Size;
};

/// Joins \p Place's world on driver \p D as group \p Name, every wait
/// bounded by \p Timeout.
template <class D>
llvm::Expected<std::unique_ptr<WorldGather>> joinDriverWorldGather(llvm::StringRef Name,
                                                             const ProcessPlace &Place,
                                                             std::chrono::milliseconds Timeout) {
  auto C = joinGroup<D>(Name, size_t(Place.World), size_t(Place.Rank), Timeout);
  if (!C)
    return C.takeError();
  return std::unique_ptr<WorldGather>(
      std::make_unique<DriverWorldGather<D>>(std::move(*C), Place.Rank, Place.World));
}

} // namespace collc::rt

#endif
