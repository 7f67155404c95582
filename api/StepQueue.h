//===- api/StepQueue.h - The steps of an asyncReplay executor -*- C++ -*-===//
//
// A CPU backend's replay runs the whole step on the calling thread. With
// collcExecutorOptions_t::asyncReplay, the C API runs the steps on one
// thread per executor instead, in the order they were queued, so that
// collcExecutorSynchronize has something to wait for and a deadline means
// what it says: past it, the wait returns a Timeout naming the step still
// pending and where it is (the compute it runs or the one it last ran), and
// the step goes on. A failed step's error is kept, the steps queued after
// it are dropped, and the next push or wait returns it (once).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_STEPQUEUE_H
#define COLLC_API_STEPQUEUE_H

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace collc::api {

class StepQueue {
public:
  /// A step; it reports where it is through at().
  using Step = llvm::unique_function<llvm::Error()>;

  explicit StepQueue(int64_t Rank);
  /// Waits for the running step (its waits are bounded by the executor's
  /// timeout), drops the queued ones and ends the thread.
  ~StepQueue();

  /// Queues \p S, or returns the kept error of an earlier step (and queues
  /// nothing).
  llvm::Error push(Step S);
  /// Waits until every queued step is done, at most \p Limit; returns the
  /// kept error of a failed step, or a Timeout naming what is pending.
  llvm::Error wait(std::chrono::milliseconds Limit);
  /// Steps queued or running.
  size_t pending() const;
  /// Where the running step is, for the timeout's text ("in compute @x").
  void at(std::string Where);
  /// The thread the steps run on.
  std::thread::id thread() const { return Worker.get_id(); }

private:
  void run();

  const int64_t Rank;
  mutable std::mutex Lock;
  std::condition_variable Changed;
  std::deque<Step> Queue;
  bool Running = false, Stopping = false;
  uint64_t Started = 0; ///< steps started: the running one's number
  std::chrono::steady_clock::time_point StartedAt;
  std::string Where;
  llvm::Error Failed = llvm::Error::success();
  std::thread Worker;
};

} // namespace collc::api

#endif
