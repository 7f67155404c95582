//===- runtime/exec/CollectiveDriver.h - The driver interface (seed 000) -*- C++ -*-===//
//
// A driver runs collectives across the devices (or host threads) of a
// backend. Like the seed it comes from, it is a static interface (a concept
// with associated types), not a virtual class: the executor and the adapters
// are written once over any driver. Implementations: runtime/local
// (threads of one process over host memory), runtime/nccl (CUDA + NCCL).
//
// Every call validates its arguments and enqueues the work on a comm stream
// kept apart from the caller's thread, so a collective never blocks compute;
// a returned error is a refusal to enqueue (nothing happened). Failures while
// running (a peer that does not arrive) are reported when the stream is
// synchronized, and leave the communicator broken rather than half-done.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_COLLECTIVEDRIVER_H
#define COLLC_RUNTIME_COLLECTIVEDRIVER_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/Error.h"

#include <concepts>
#include <cstdint>
#include <string>

namespace collc::rt {

/// Names one group in a process: every rank of the group asks for the same
/// id ("world", "tp.3", a plan group name).
struct CommunicationId {
  std::string Name;
};

/// How many elements of which type, as the driver names types.
template <typename DataType> struct Elements {
  DataType Type;
  uint64_t Count = 0;
};

/// The collectives beyond the seed's list that drivers also provide.
template <typename D>
concept CollectiveDriver = requires(const CommunicationId &Id, typename D::UniqueId U,
                                    const typename D::Communicator &C,
                                    const typename D::Resource &Src,
                                    const typename D::Resource &Dst,
                                    Elements<typename D::DataType> E, ReduceOp Op,
                                    typename D::CommStream S, size_t N, ElemType T,
                                    uint64_t Bytes) {
  typename D::Communicator; ///< this device's membership of one group
  typename D::UniqueId;     ///< what every rank of a group joins under
  typename D::DataType;     ///< how the driver names an element type
  typename D::CommStream;   ///< where collectives are issued
  typename D::Resource;     ///< memory the driver reads or writes
  /// Minted by whichever rank asks first, remembered for the rest.
  { D::groupId(Id) } -> std::same_as<llvm::Expected<typename D::UniqueId>>;
  /// Join as rank \p N of \p N ranks.
  { D::join(U, N, N) } -> std::same_as<llvm::Expected<typename D::Communicator>>;
  /// The elements \p Bytes hold; an unknown type or a partial element is an
  /// error value, not fatal.
  { D::elements(T, Bytes) } -> std::same_as<llvm::Expected<Elements<typename D::DataType>>>;
  { D::allReduce(C, Src, Dst, E, Op, S) } -> std::same_as<llvm::Error>;
  { D::allGather(C, Src, Dst, E, S) } -> std::same_as<llvm::Error>;
  { D::reduceScatter(C, Src, Dst, E, Op, S) } -> std::same_as<llvm::Error>;
  /// Only the root has a source.
  { D::broadcast(C, &Src, Dst, E, N, S) } -> std::same_as<llvm::Error>;
  /// Chunk r of Src goes to rank r; chunk r of Dst comes from rank r.
  { D::allToAll(C, Src, Dst, E, N, S) } -> std::same_as<llvm::Error>;
  { D::send(C, Src, E, N, S) } -> std::same_as<llvm::Error>;
  { D::recv(C, Dst, E, N, S) } -> std::same_as<llvm::Error>;
};

} // namespace collc::rt

#endif
