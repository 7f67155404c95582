//===- runtime/interfaces/DistributedSession.h - Submissions over a session -*- C++ -*-===//
//
// The optional collective capability of a model runtime's session: a few
// asynchronous submissions over backend-owned values, each with a completion
// that keeps the communication's resources alive until it is waited for.
// Capabilities are fail-closed: a session claims only what it can do, and
// anything it does not claim is refused with an Unsupported error.
//
//   LocalSession S = ...;                     // one per rank
//   auto Sub = S.allReduceSum(CollectiveScope::world(), Grad);
//   ... compute overlaps here ...
//   Expected<HostValue> Sum = Sub->Done.wait();
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_DISTRIBUTEDSESSION_H
#define COLLC_RUNTIME_INTERFACES_DISTRIBUTEDSESSION_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace collc::rt {

/// Stable topology and rank identity.
struct DistributedSessionDescriptor {
  std::string Backend;
  size_t WorldSize = 1;
  size_t Rank = 0;
  std::string Device; ///< "cpu", "cuda:0"
};

/// What a session can do; everything false unless the backend says so.
struct DistributedCapabilities {
  bool AllReduceSum = false;
  bool AllGather = false;
  bool AllToAllV = false;
  bool SendReceive = false;
  bool AllGatherWords = false;
};

/// Where a collective runs: the session's whole world (the only scope a
/// session is selected for).
struct CollectiveScope {
  std::string Group = "world";
  static CollectiveScope world() { return {}; }
};

struct ValueDescriptor {
  ElemType Type = ElemType::F32;
  llvm::SmallVector<int64_t, 4> Shape;
  int64_t numElements() const;
  uint64_t bytes() const { return uint64_t(numElements()) * elemTypeBytes(Type); }
};

/// A completion: wait() returns the operation's result value once.
template <typename ValueT> class Completion {
public:
  virtual ~Completion() = default;
  virtual bool ready() const = 0;
  virtual llvm::Expected<ValueT> wait() = 0;
};

template <typename ValueT> struct Submission { std::unique_ptr<Completion<ValueT>> Done; };

template <typename ValueT> class DistributedSession {
public:
  using Value = ValueT;
  virtual ~DistributedSession() = default;
  virtual DistributedSessionDescriptor descriptor() const = 0;
  virtual DistributedCapabilities capabilities() const = 0;
  virtual llvm::Expected<Submission<ValueT>> allReduceSum(const CollectiveScope &Scope,
                                                          const ValueT &Input) = 0;
  /// A leading rank axis: the result has shape [world, ...input shape].
  virtual llvm::Expected<Submission<ValueT>> allGather(const CollectiveScope &Scope,
                                                       const ValueT &Input) = 0;
  /// Rows of dimension 0: \p SendCounts[r] rows to rank r (packed in rank
  /// order), \p ReceiveCounts[r] rows from rank r.
  virtual llvm::Expected<Submission<ValueT>> allToAllV(const CollectiveScope &Scope,
                                                       const ValueT &Input,
                                                       llvm::ArrayRef<size_t> SendCounts,
                                                       llvm::ArrayRef<size_t> ReceiveCounts) = 0;
  virtual llvm::Expected<Submission<ValueT>> send(const CollectiveScope &Scope, size_t Peer,
                                                  const ValueT &Input) = 0;
  virtual llvm::Expected<Submission<ValueT>> receive(const CollectiveScope &Scope, size_t Peer,
                                                     const ValueDescriptor &Desc) = 0;
  /// Synchronously gathers a few words from every rank (scheduler metadata,
  /// the plan-digest handshake), in rank order.
  virtual llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Local) = 0;
};

/// The local backend's value: a host tensor it owns (shared, so that a
/// completion can keep it alive).
struct HostValue {
  ValueDescriptor Desc;
  std::shared_ptr<std::vector<uint8_t>> Data;
  static HostValue zeros(ValueDescriptor D);
  template <typename T> T *as() const { return reinterpret_cast<T *>(Data->data()); }
};

} // namespace collc::rt

#endif
