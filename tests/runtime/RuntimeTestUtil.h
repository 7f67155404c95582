//===- tests/runtime/RuntimeTestUtil.h - Helpers for runtime tests -*- C++ -*-===//
#ifndef COLLC_TESTS_RUNTIME_RUNTIMETESTUTIL_H
#define COLLC_TESTS_RUNTIME_RUNTIMETESTUTIL_H

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace collc::test {

/// Runs \p Body(rank) on \p World threads at once.
inline void onThreads(int World, const std::function<void(int)> &Body) {
  std::vector<std::thread> Threads;
  for (int R = 0; R != World; ++R)
    Threads.emplace_back(Body, R);
  for (std::thread &T : Threads)
    T.join();
}

/// A group name no other test in this process uses.
inline std::string freshName(const char *What) {
  static std::atomic<unsigned> Counter{0};
  return llvm::formatv("test.{0}.{1}", What, Counter++).str();
}

/// What an error says, for assertions: kind, blamed peer, text.
struct ErrorFacts {
  bool Failed = false;
  rt::ErrorKind Kind = rt::ErrorKind::Backend;
  int64_t Peer = -1;
  std::string Text;
};

inline ErrorFacts factsOf(llvm::Error E) {
  ErrorFacts F;
  if (!E)
    return F;
  F.Failed = true;
  llvm::handleAllErrors(
      std::move(E),
      [&](const rt::RuntimeError &R) {
        F.Kind = R.kind();
        F.Peer = R.peer();
        F.Text = R.text();
      },
      [&](const llvm::ErrorInfoBase &B) { F.Text = B.message(); });
  return F;
}

} // namespace collc::test

#endif
