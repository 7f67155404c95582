//===- runtime/exec/CollectiveDriver.h - The driver interface -*- C++ -*-===//
//
// A driver runs collectives across the devices (or host threads) of a
// backend. It is a static interface (a concept
// with associated types), not a virtual class: the executor and the adapters
// are written once over any driver. Implementations: runtime/local
// (threads of one process over host memory), runtime/mpi (Open MPI),
// runtime/gloo (Gloo over TCP), runtime/nccl (CUDA + NCCL).
//
// Every call validates its arguments and enqueues the work on a comm stream
// kept apart from the caller's thread, so a collective never blocks compute;
// a returned error is a refusal to enqueue (nothing happened). Failures while
// running (a peer that does not arrive) are reported when the stream is
// synchronized, and leave the communicator broken rather than half-done.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_COLLECTIVEDRIVER_H
#define COLLC_RUNTIME_EXEC_COLLECTIVEDRIVER_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

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

/// The driver interface: the collectives every backend provides.
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

/// Everything an executor calls on a driver, beyond that list: the
/// scaled reductions (premul_sum and avg), all_to_all_v, barrier, the
/// word-sized all_gather of the digest handshake and runtime split sizes,
/// split, health and timeouts, and the comm stream (tickets that a wait
/// waits for, flush to make enqueued work progress). Every backend states
/// `static_assert(ExecutorDriver<ItsDriver>)`, so a backend that lacks one
/// of them fails to compile at its own header, not inside an executor.
template <typename D>
concept ExecutorDriver =
    CollectiveDriver<D> &&
    requires(const typename D::Communicator &C, const typename D::Resource &Src,
             const typename D::Resource &Dst, Elements<typename D::DataType> E, ReduceOp Op,
             ElemType T, double Scale, llvm::ArrayRef<uint64_t> Counts,
             llvm::ArrayRef<uint32_t> Words, typename D::CommStream S, int Color,
             std::chrono::milliseconds Timeout, uint64_t Ticket, void *Data, uint64_t Bytes,
             const typename D::StreamOwner &Owner) {
      typename D::StreamOwner; ///< owns a comm stream
      { D::name() } -> std::convertible_to<llvm::StringRef>;
      /// premul_sum with its factor; \p T is the element type as collc names it.
      { D::allReduceScaled(C, Src, Dst, E, Op, T, Scale, S) } -> std::same_as<llvm::Error>;
      { D::reduceScatterScaled(C, Src, Dst, E, Op, T, Scale, S) } -> std::same_as<llvm::Error>;
      /// Counts in elements of \p T, packed in rank order.
      { D::allToAllV(C, Src, Dst, T, Counts, Counts, S) } -> std::same_as<llvm::Error>;
      { D::barrier(C, S) } -> std::same_as<llvm::Error>;
      /// Synchronous: returns every rank's words in rank order.
      { D::allGatherWords(C, Words, S) } -> std::same_as<llvm::Expected<std::vector<uint32_t>>>;
      { D::split(C, Color, Color) } -> std::same_as<llvm::Expected<typename D::Communicator>>;
      { D::health(C) } -> std::same_as<llvm::Error>;
      D::setTimeout(C, Timeout);
      { D::createStream(llvm::StringRef()) } -> std::same_as<typename D::StreamOwner>;
      { D::streamOf(Owner) } -> std::same_as<typename D::CommStream>;
      /// A ticket for everything enqueued on S so far, and a bounded wait
      /// for it.
      { D::record(S) } -> std::same_as<uint64_t>;
      { D::waitFor(S, Ticket) } -> std::same_as<llvm::Error>;
      { D::synchronize(S) } -> std::same_as<llvm::Error>;
      D::flush(S);
      { D::resource(Data, Bytes) } -> std::same_as<typename D::Resource>;
    };

} // namespace collc::rt

#endif
