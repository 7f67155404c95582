//===- api/LiveHandles.h - Which handles collc made, and which calls use them -*- C++ -*-===//
//
// A C caller can pass a handle it already destroyed, or a pointer collc
// never made. Every plan and executor handle is registered here when it is
// made, and every call takes a use of its handles first (Args::plan,
// Args::executor in ApiEntry.h), so such a handle is refused with
// collcInvalidArgument instead of being used as freed memory; a second
// Destroy is refused the same way instead of freeing twice.
//
// A use lasts until its call returns. A Destroy while another call uses
// the handle (a replay on another thread; Python's __del__ or close() may
// run on any thread) is refused with collcInvalidUsage naming that call,
// instead of freeing what the call still reads; a call that starts while
// a Destroy runs is refused. The lookup and the use are one step under the
// registry's lock, so no call slips between them. The one exception: while
// an executor's Destroy waits for the step on its thread (asyncReplay),
// that step's compute callback may still call on it.
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
#include <cstdint>
#include <memory>
#include <thread>

namespace collc::api {

/// How many destroyed handles of each kind keep their address.
constexpr size_t QuarantineSize = 4096;

/// One call's use of one live handle, from its argument check to its
/// return; ends when destroyed (or when its handle is destroyed by this
/// call: see destroy()).
class HandleUse {
public:
  HandleUse() = default;
  HandleUse(HandleUse &&Other) noexcept { *this = std::move(Other); }
  HandleUse &operator=(HandleUse &&Other) noexcept;
  ~HandleUse() { end(); }

  const void *handle() const { return Handle; }

private:
  template <class H> friend class UseRegistry;
  using EndFn = void (*)(const void *Handle, uint64_t Token);
  HandleUse(EndFn End, const void *Handle, uint64_t Token)
      : End(End), Handle(Handle), Token(Token) {}
  void end();

  EndFn End = nullptr;
  const void *Handle = nullptr;
  uint64_t Token = 0; ///< unique among the uses of the process
};

/// Registers \p H as live and hands it to the caller.
collcPlan *adopt(std::unique_ptr<collcPlan> H);
collcExecutor *adopt(std::unique_ptr<collcExecutor> H);
collcComm *adopt(std::unique_ptr<collcComm> H);

/// A use of \p H, passed as argument \p Name, by the collc.h function
/// \p Call; or an error (collcInvalidArgument) saying why it cannot be
/// used: NULL, not live (destroyed already, or never made by collc), or
/// being destroyed. \p Expected says what the argument should be.
llvm::Expected<HandleUse> use(const collcPlan *H, const char *Name, const char *Call,
                              const char *Expected);
llvm::Expected<HandleUse> use(const collcExecutor *H, const char *Name, const char *Call,
                              const char *Expected);
llvm::Expected<HandleUse> use(const collcComm *H, const char *Name, const char *Call,
                              const char *Expected);

/// Releases \p H's contents and marks it destroyed, ending \p Own (this
/// call's use of it). Refused, with nothing done, while another call uses
/// it (collcInvalidUsage, naming that call) or another Destroy of it runs
/// (collcInvalidArgument). It stays live until its contents are released,
/// for the one thread that may still call on it meanwhile: an executor's
/// step thread (asyncReplay), which its end waits for.
llvm::Error destroy(collcPlan *H, const char *Name, HandleUse Own);
llvm::Error destroy(collcExecutor *H, const char *Name, HandleUse Own);
llvm::Error destroy(collcComm *H, const char *Name, HandleUse Own);

} // namespace collc::api

#endif
