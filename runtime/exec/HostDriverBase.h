//===- runtime/exec/HostDriverBase.h - What every host driver is alike -*- C++ -*-===//
//
// The host drivers (local, mpi, gloo) name element types as collc does,
// read and write host memory (HostResource) and issue on a HostStream. A
// driver derives from this base and declares only its communicator, its
// group id and its collectives; the types, elements() and the stream calls
// of ExecutorDriver come from here, so they are written once.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_HOSTDRIVERBASE_H
#define COLLC_RUNTIME_EXEC_HOSTDRIVERBASE_H

#include "runtime/exec/HostDriverChecks.h"
#include "runtime/exec/HostStream.h"

#include <memory>

namespace collc::rt {

struct HostDriverBase {
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
