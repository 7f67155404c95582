//===- api/Handles.h - What collc.h's opaque handles hold -------*- C++ -*-===//
#ifndef COLLC_API_HANDLES_H
#define COLLC_API_HANDLES_H

#include "collc/collc.h"

#include "api/StepQueue.h"

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/interfaces/EagerComm.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

/// A plan, shared with the executors made from it: collcPlanDestroy may come
/// before theirs (a Python object may be collected in any order).
struct collcPlan {
  std::shared_ptr<const collc::plan::Plan> P;
};

struct collcExecutor {
  // Destroyed bottom to top: the executor before what it uses.
  std::shared_ptr<const collc::plan::Plan> Plan;
  std::string Backend;
  /// What the backend needs alive (MPI's session: api/BackendSessions.h).
  std::shared_ptr<void> Session;
  /// The thread running a step of Exec's replay (in its compute callback),
  /// or none: a call from that thread that changes, waits for or destroys
  /// the executor is refused (it would pull the step from under itself).
  std::atomic<std::thread::id> StepThread{};
  std::unique_ptr<collc::rt::Executor> Exec;
  /// asyncReplay on a host backend: the thread Exec's steps run on.
  std::unique_ptr<collc::api::StepQueue> Steps;
  int64_t Rank = 0;
  /// collcExecutorUnbound's first name, kept for the caller.
  std::string FirstUnbound;
  /// Whether capture() succeeded since the last bind.
  bool Captured = false;
  /// Device memory: whether collcExecutorSetStream gave the caller's stream.
  bool HasStream = false;
};

/// An eager communicator (collcCommCreate).
struct collcComm {
  // Destroyed bottom to top: the communicator before what it uses.
  std::shared_ptr<void> Session;
  std::unique_ptr<collc::rt::EagerComm> Comm;
  std::string Backend;
};

#endif
