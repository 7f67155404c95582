//===- api/LiveHandles.h - Which handles collc made and has not destroyed -*- C++ -*-===//
//
// A C caller can pass a handle it already destroyed, or a pointer collc
// never made. Every plan and executor handle is registered here when it is
// made, and every call looks its handles up first (Args::plan,
// Args::executor in ApiEntry.h), so such a handle is refused with
// collcInvalidArgument instead of being used as freed memory; a second
// Destroy is refused the same way instead of freeing twice.
//
// This is no lock: one handle is used by one thread at a time (collc.h),
// and a call that races the Destroy of its handle on another thread is not
// caught. A second Destroy while the first runs is.
//
// A destroyed handle's contents are released at once, but its few bytes
// are kept for the next QuarantineSize destroys of its kind: a new handle
// cannot take its address meanwhile, so a stale pointer is known for a
// stale one and never names a newer handle by accident.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_LIVEHANDLES_H
#define COLLC_API_LIVEHANDLES_H

#include "api/Handles.h"

#include "llvm/Support/Error.h"

#include <cstddef>
#include <memory>

namespace collc::api {

/// How many destroyed handles of each kind keep their address.
constexpr size_t QuarantineSize = 4096;

/// Registers \p H as live and hands it to the caller.
collcPlan *adopt(std::unique_ptr<collcPlan> H);
collcExecutor *adopt(std::unique_ptr<collcExecutor> H);
collcComm *adopt(std::unique_ptr<collcComm> H);

/// Whether \p H is a handle collc made and has not destroyed.
bool isLive(const collcPlan *H);
bool isLive(const collcExecutor *H);
bool isLive(const collcComm *H);

/// Releases \p H's contents and marks it destroyed; an error naming it as
/// \p Name (nothing done) when its Destroy runs already on another call. It
/// is live until its contents are released (a step that an executor's end
/// waits for may call on it). \p H must have passed Args::plan,
/// Args::executor or Args::comm.
llvm::Error destroy(collcPlan *H, const char *Name);
llvm::Error destroy(collcExecutor *H, const char *Name);
llvm::Error destroy(collcComm *H, const char *Name);

} // namespace collc::api

#endif
