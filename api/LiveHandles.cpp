//===- api/LiveHandles.cpp - Which handles collc made, and which calls use them -===//

#include "api/LiveHandles.h"

#include "api/ApiError.h"

#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace collc::api {

namespace {

/// How a kind of handle is named in a refusal.
template <class H> constexpr const char *NounOf = nullptr;
template <> constexpr const char *NounOf<collcPlan> = "plan";
template <> constexpr const char *NounOf<collcExecutor> = "executor";
template <> constexpr const char *NounOf<collcComm> = "communicator";

/// The thread that may still call on \p Handle while its Destroy runs: the
/// one its end waits for.
std::thread::id mayCallWhileDying(const collcPlan &) { return {}; }
std::thread::id mayCallWhileDying(const collcComm &) { return {}; }
std::thread::id mayCallWhileDying(const collcExecutor &E) {
  return E.Steps ? E.Steps->thread() : std::thread::id();
}

/// Ends that thread (it finishes its step): after, its id may name a new
/// thread, which must be refused.
void endWhatMayCall(collcPlan &) {}
void endWhatMayCall(collcComm &) {}
void endWhatMayCall(collcExecutor &E) { E.Steps.reset(); }

} // namespace

template <class H> class UseRegistry {
public:
  /// Never destroyed: a handle may be destroyed during the process's exit
  /// (a Python object collected at shutdown), after static destructors.
  static UseRegistry &get() {
    static UseRegistry *R = new UseRegistry;
    return *R;
  }

  H *adopt(std::unique_ptr<H> Handle) {
    std::lock_guard<std::mutex> L(M);
    Live.try_emplace(Handle.get());
    return Handle.release();
  }

  llvm::Expected<HandleUse> use(const H *Handle, const char *Name, const char *Call,
                                const char *Expected) {
    if (!Handle)
      return makeApiError(collcInvalidArgument,
                          llvm::formatv("{0} is NULL: expected {1}", Name, Expected));
    std::lock_guard<std::mutex> L(M);
    auto It = Live.find(Handle);
    if (It == Live.end())
      return makeApiError(collcInvalidArgument,
                          llvm::formatv("{0} ({1}) is not a live {2} (destroyed already, or not "
                                        "made by collc): expected {3}",
                                        Name, static_cast<const void *>(Handle), NounOf<H>, Expected));
    State &S = It->second;
    if (S.Dying && S.MayCallWhileDying != std::this_thread::get_id())
      return makeApiError(collcInvalidArgument,
                          llvm::formatv("{0} ({1}) is being destroyed by another call: expected "
                                        "no call on it once its Destroy has begun",
                                        Name, static_cast<const void *>(Handle)));
    uint64_t Token = NextToken++;
    S.Uses.push_back({Token, std::this_thread::get_id(), Call});
    return HandleUse(&endUse, Handle, Token);
  }

  llvm::Error destroy(H *Handle, const char *Name, HandleUse Own) {
    assert(Own.Handle == Handle && "the caller's use of the handle it destroys");
    // Read while this call's use keeps the handle whole and not dying.
    std::thread::id MayCall = mayCallWhileDying(*Handle);
    {
      std::lock_guard<std::mutex> L(M);
      State &S = Live.find(Handle)->second;
      assert(!S.Dying && "a use is refused once a Destroy has begun, but on the step thread, "
                         "which cannot destroy its executor (checkNotInItsStep)");
      for (const UseRecord &U : S.Uses)
        if (U.Token != Own.Token)
          return makeApiError(
              collcInvalidUsage,
              llvm::formatv("{0} ({1}) is in use by {2} {3}: expected {4} once that call "
                            "returns (one thread at a time uses a handle)",
                            Name, static_cast<const void *>(Handle), U.Call,
                            U.Thread == std::this_thread::get_id() ? "on this thread"
                                                                   : "on another thread",
                            currentCall()));
      S.Dying = true;
      S.MayCallWhileDying = MayCall;
      S.Uses.clear(); // only this call's
      Own.End = nullptr;
    }
    // Outside the lock: an executor's end waits for its step thread (and
    // its backend), and that step may still call on its executor. Its
    // storage stays allocated after, so no new handle takes its address.
    endWhatMayCall(*Handle);
    {
      std::lock_guard<std::mutex> L(M);
      Live.find(Handle)->second.MayCallWhileDying = std::thread::id();
    }
    Handle->~H();
    new (Handle) H();
    H *Oldest = nullptr;
    {
      std::lock_guard<std::mutex> L(M);
      Live.erase(Handle);
      Quarantine.push_back(Handle);
      if (Quarantine.size() > QuarantineSize) {
        Oldest = Quarantine.front();
        Quarantine.pop_front();
      }
    }
    delete Oldest;
    return llvm::Error::success();
  }

private:
  static void endUse(const void *Handle, uint64_t Token) {
    UseRegistry &R = get();
    std::lock_guard<std::mutex> L(R.M);
    // Not found: the use was this call's own, and it destroyed the handle.
    auto It = R.Live.find(static_cast<const H *>(Handle));
    if (It == R.Live.end())
      return;
    std::vector<UseRecord> &Uses = It->second.Uses;
    for (size_t I = 0; I != Uses.size(); ++I)
      if (Uses[I].Token == Token) {
        Uses.erase(Uses.begin() + I);
        return;
      }
  }

  struct UseRecord {
    uint64_t Token;
    std::thread::id Thread;
    const char *Call; ///< a collc.h function's name (__func__: static)
  };
  struct State {
    std::vector<UseRecord> Uses;
    bool Dying = false;
    std::thread::id MayCallWhileDying;
  };

  std::mutex M;
  /// Lookups only: no order is taken from it. Not llvm::DenseMap: two
  /// pointer values are its empty and deleted keys, and a caller's garbage
  /// pointer may be one of them.
  std::unordered_map<const H *, State> Live;
  /// Destroyed handles, oldest first, holding nothing.
  std::deque<H *> Quarantine;
  uint64_t NextToken = 1;
};

HandleUse &HandleUse::operator=(HandleUse &&Other) noexcept {
  if (this != &Other) {
    end();
    End = Other.End;
    Handle = Other.Handle;
    Token = Other.Token;
    Other.End = nullptr;
  }
  return *this;
}

void HandleUse::end() {
  if (End)
    End(Handle, Token);
  End = nullptr;
}

collcPlan *adopt(std::unique_ptr<collcPlan> H) {
  return UseRegistry<collcPlan>::get().adopt(std::move(H));
}
collcExecutor *adopt(std::unique_ptr<collcExecutor> H) {
  return UseRegistry<collcExecutor>::get().adopt(std::move(H));
}
collcComm *adopt(std::unique_ptr<collcComm> H) {
  return UseRegistry<collcComm>::get().adopt(std::move(H));
}

llvm::Expected<HandleUse> use(const collcPlan *H, const char *Name, const char *Call,
                              const char *Expected) {
  return UseRegistry<collcPlan>::get().use(H, Name, Call, Expected);
}
llvm::Expected<HandleUse> use(const collcExecutor *H, const char *Name, const char *Call,
                              const char *Expected) {
  return UseRegistry<collcExecutor>::get().use(H, Name, Call, Expected);
}
llvm::Expected<HandleUse> use(const collcComm *H, const char *Name, const char *Call,
                              const char *Expected) {
  return UseRegistry<collcComm>::get().use(H, Name, Call, Expected);
}

llvm::Error destroy(collcPlan *H, const char *Name, HandleUse Own) {
  return UseRegistry<collcPlan>::get().destroy(H, Name, std::move(Own));
}
llvm::Error destroy(collcExecutor *H, const char *Name, HandleUse Own) {
  return UseRegistry<collcExecutor>::get().destroy(H, Name, std::move(Own));
}
llvm::Error destroy(collcComm *H, const char *Name, HandleUse Own) {
  return UseRegistry<collcComm>::get().destroy(H, Name, std::move(Own));
}

} // namespace collc::api
