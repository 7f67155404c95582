//===- api/StepQueue.cpp - The steps of an asyncReplay executor ----------===//

#include "api/StepQueue.h"

#include "api/ApiError.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::api {

StepQueue::StepQueue(int64_t Rank) : Rank(Rank), Worker([this] { run(); }) {}

StepQueue::~StepQueue() {
  {
    std::lock_guard<std::mutex> G(Lock);
    Stopping = true;
    Queue.clear();
  }
  Changed.notify_all();
  Worker.join();
  consumeError(std::move(Failed));
}

void StepQueue::run() {
  std::unique_lock<std::mutex> G(Lock);
  for (;;) {
    Changed.wait(G, [&] { return Stopping || !Queue.empty(); });
    if (Queue.empty()) // stopping
      return;
    Step S = std::move(Queue.front());
    Queue.pop_front();
    Running = true;
    ++Started;
    StartedAt = std::chrono::steady_clock::now();
    Where = "before its first compute";
    G.unlock();
    Error E = S();
    G.lock();
    Running = false;
    if (E) {
      // The steps after a failed one would meet peers in another state.
      consumeError(std::move(Failed)); // success: a failure stops the queue
      Failed = std::move(E);
      Queue.clear();
    }
    Changed.notify_all();
  }
}

Error StepQueue::push(Step S) {
  std::lock_guard<std::mutex> G(Lock);
  if (Failed)
    return std::move(Failed);
  Queue.push_back(std::move(S));
  Changed.notify_all();
  return Error::success();
}

Error StepQueue::wait(std::chrono::milliseconds Limit) {
  std::unique_lock<std::mutex> G(Lock);
  auto Idle = [&] { return !Running && Queue.empty(); };
  Changed.wait_for(G, Limit, Idle);
  if (Failed)
    return std::move(Failed);
  if (Idle())
    return Error::success();
  auto Ran = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - StartedAt);
  return makeApiError(
      collcTimeout,
      formatv("rank {0}: {1} step(s) still pending after {2} ms: replay #{3} has run {4} ms and is "
              "{5}{6}; a peer that has not replayed holds its collectives (each wait ends at "
              "the executor's timeoutMs); synchronize again, or destroy the executor",
              Rank, Queue.size() + (Running ? 1 : 0), Limit.count(), Started, Ran.count(), Where,
              Queue.empty() ? "" : formatv(", {0} more queued", Queue.size()).str()));
}

size_t StepQueue::pending() const {
  std::lock_guard<std::mutex> G(Lock);
  return Queue.size() + (Running ? 1 : 0);
}

void StepQueue::at(std::string Now) {
  std::lock_guard<std::mutex> G(Lock);
  Where = std::move(Now);
}

} // namespace collc::api
