//===- runtime/exec/TensorBindings.h - Plan tensors bound by name -*- C++ -*-===//
//
// Where each tensor of a plan lives on one rank, for every backend's
// executor: a zero-copy view inside a plan buffer (the executor places it),
// or memory the model binds by name. This is the one place that checks a
// binding, in one order (unknown name, a view, a wrong size, null memory),
// and that refuses to run while a tensor the rank's comms touch is unbound,
// or while two of them overlap without being the same memory.
// Addresses are opaque here: host memory for `local`, device memory for
// `nccl`.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_TENSORBINDINGS_H
#define COLLC_RUNTIME_EXEC_TENSORBINDINGS_H

#include "plan/Plan.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace collc::rt {

class TensorBindings {
public:
  /// The tensors of \p P that rank \p Rank's comms read or write (inputs,
  /// outputs, split-size tensors) must be bound or be views before a run.
  TensorBindings(const plan::Plan &P, int64_t Rank);

  /// Tensor \p T lives at \p Addr inside a plan buffer (a view).
  void setView(uint32_t T, char *Addr);
  /// Binds tensor \p Name (`g0` or `%g0`) to \p Bytes at \p Data.
  llvm::Error bind(llvm::StringRef Name, void *Data, uint64_t Bytes);
  /// Where tensor \p Name lives: its view or its binding.
  llvm::Expected<char *> lookup(llvm::StringRef Name) const;
  /// The index of tensor \p Name, or an error naming the plan.
  llvm::Expected<uint32_t> indexOf(llvm::StringRef Name) const;

  char *home(uint32_t T) const { return Home[T]; }
  bool isView(uint32_t T) const { return IsView[T]; }
  /// Touched tensors that are neither views nor bound, in tensor order.
  std::vector<std::string> unbound() const;
  std::vector<uint32_t> touched() const;
  /// Refuses to \p Verb ("capture", "run") while unbound() is not empty,
  /// naming the first few, or while two touched tensors overlap without
  /// being the same memory (in place: the same address and size), naming
  /// both: a comm would read one while it writes the other.
  llvm::Error checkBindings(llvm::StringRef Verb) const;

private:
  /// The first pair of touched tensors that overlap without being the same
  /// memory, in address order.
  std::optional<std::pair<uint32_t, uint32_t>> partialOverlap() const;

  const plan::Plan &P;
  int64_t Rank;
  std::vector<char *> Home;
  std::vector<uint8_t> IsView, Touched;
  llvm::StringMap<uint32_t> ByName;
};

} // namespace collc::rt

#endif
