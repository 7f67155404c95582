//===- runtime/exec/HostDriverBase.h - What every host driver is alike -*- C++ -*-===//
//
// The host drivers (local, mpi, gloo) name element types as collc does,
// read and write host memory (HostResource) and issue on a HostStream. A
// driver D derives from HostDriverBase<D> and declares only its
// communicator, its group id and the operations of
// runtime/exec/DriverOps.def; the types, elements(), the stream calls of
// ExecutorDriver and the reductions without a factor come from here, so
// they are written once. Everything here is static and inline: no virtual
// call and no allocation is added on the way to a collective.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_HOSTDRIVERBASE_H
#define COLLC_RUNTIME_EXEC_HOSTDRIVERBASE_H

#include "runtime/exec/HostDriverChecks.h"
#include "runtime/exec/HostStream.h"

#include <memory>

namespace collc::rt {

template <typename D> struct HostDriverBase {
  using DataType = ElemType;
  using CommStream = HostStream *;
  using Resource = HostResource;
  using Elems = HostElements;

  static llvm::Expected<Elems> elements(ElemType T, uint64_t Bytes) {
    return hostElements(T, Bytes);
  }
  static Resource resource(void *Data, uint64_t Bytes) {
    return Resource{static_cast<char *>(Data), Bytes};
  }

  // --- the reductions without a factor ---------------------------------------
  // The scaled ones with factor 1, in the type of \p E. (X = D names D's
  // communicator only when called, once D is complete.)
  template <typename X = D>
  static llvm::Error allReduce(const typename X::Communicator &C, const Resource &Src,
                               const Resource &Dst, Elems E, ReduceOp Op, CommStream S) {
    return X::allReduceScaled(C, Src, Dst, E, Op, E.Type, 1.0, S);
  }
  template <typename X = D>
  static llvm::Error reduceScatter(const typename X::Communicator &C, const Resource &Src,
                                   const Resource &Dst, Elems E, ReduceOp Op, CommStream S) {
    return X::reduceScatterScaled(C, Src, Dst, E, Op, E.Type, 1.0, S);
  }

  // --- streams ----------------------------------------------------------------
  using StreamOwner = std::unique_ptr<HostStream>;
  static StreamOwner createStream(llvm::StringRef Name) {
    return std::make_unique<HostStream>(Name.str());
  }
  static CommStream streamOf(const StreamOwner &S) { return S.get(); }
  /// A ticket for everything enqueued on \p S so far.
  static uint64_t record(CommStream S) { return S->lastTicket(); }
  static llvm::Error waitFor(CommStream S, uint64_t Ticket) { return S->waitFor(Ticket); }
  static llvm::Error synchronize(CommStream S) { return S->synchronize(); }
  /// Makes enqueued work progress while the caller does other things.
  static void flush(CommStream S) { S->kick(); }
};

} // namespace collc::rt

#endif
