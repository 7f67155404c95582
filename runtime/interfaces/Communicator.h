//===- runtime/interfaces/Communicator.h - Eager collectives over host memory -*- C++ -*-===//
//
// The transport of a group as a virtual class: every rank calls the same
// operations in the same order; each call returns when it is done. Buffers
// are row-contiguous elements; a failure names the peer. Backed by any
// driver (runtime/local, runtime/nccl), each call enqueued on the
// communicator's own comm stream and waited for.
//
//   auto Comm = createLocalCommunicator("world", 8, Rank);   // one per thread
//   std::vector<float> G = ...;
//   if (Error E = (*Comm)->allReduce(ReduceOp::Avg, ElemType::F32, asBytes(G)))
//     ...  // names the rank that failed, or the mismatch
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_COMMUNICATOR_H
#define COLLC_RUNTIME_INTERFACES_COMMUNICATOR_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>

namespace collc::rt {

class Communicator {
public:
  virtual ~Communicator();

  /// This process's (thread's) rank, 0..size-1.
  virtual size_t rank() const = 0;
  virtual size_t size() const = 0;

  /// Reduces \p Data (elements of \p T) with every rank's, in place; every
  /// rank gets the same bits.
  virtual llvm::Error allReduce(ReduceOp Op, ElemType T, llvm::MutableArrayRef<uint8_t> Data) = 0;
  /// Every rank's \p Input (equal lengths), concatenated in rank order.
  virtual llvm::Error allGather(llvm::ArrayRef<uint8_t> Input,
                                llvm::MutableArrayRef<uint8_t> Output) = 0;
  virtual llvm::Error send(size_t Dst, llvm::ArrayRef<uint8_t> Data) = 0;
  /// Receives exactly Data.size() bytes from \p Src; a send of another size
  /// is an error on both sides.
  virtual llvm::Error recv(size_t Src, llvm::MutableArrayRef<uint8_t> Data) = 0;

  /// Rank r's output is the element-wise sum of every rank's r-th chunk of
  /// \p Input (Input.size() == size() * Output.size()). Provided: an
  /// all_reduce of a copy, then this rank's chunk.
  virtual llvm::Error sumScatter(ElemType T, llvm::ArrayRef<uint8_t> Input,
                                 llvm::MutableArrayRef<uint8_t> Output);
  /// Whether every peer is still reachable, checked without a collective and
  /// without blocking; an error names a lost peer. Provided: success (a
  /// backend that cannot tell).
  virtual llvm::Error health() const;
  /// A subgroup of the ranks with the same color, ordered by key (ties by
  /// rank). Collective. Null for a negative color. Provided: unsupported.
  virtual llvm::Expected<std::shared_ptr<Communicator>> split(int Color, int Key);
};

struct CommunicatorOptions {
  std::chrono::milliseconds Timeout = defaultTimeout(); ///< runtime/exec/Timeout.h
};

/// Views a container of trivially copyable elements as bytes.
template <typename C> llvm::MutableArrayRef<uint8_t> asBytes(C &Container) {
  return {reinterpret_cast<uint8_t *>(Container.data()),
          Container.size() * sizeof(typename C::value_type)};
}
template <typename C> llvm::ArrayRef<uint8_t> asConstBytes(const C &Container) {
  return {reinterpret_cast<const uint8_t *>(Container.data()),
          Container.size() * sizeof(typename C::value_type)};
}

} // namespace collc::rt

#endif
