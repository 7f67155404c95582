//===- api/LiveHandles.cpp - Which handles collc made and has not destroyed -===//

#include "api/LiveHandles.h"

#include "api/ApiEntry.h"

#include "llvm/Support/FormatVariadic.h"

#include <deque>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <unordered_set>

namespace collc::api {

namespace {

template <class H> class Registry {
public:
  /// Never destroyed: a handle may be destroyed during the process's exit
  /// (a Python object collected at shutdown), after static destructors.
  static Registry &get() {
    static Registry *R = new Registry;
    return *R;
  }

  H *adopt(std::unique_ptr<H> Handle) {
    std::lock_guard<std::mutex> L(M);
    Live.insert(Handle.get());
    return Handle.release();
  }

  bool isLive(const H *Handle) {
    std::lock_guard<std::mutex> L(M);
    return Live.count(Handle) != 0;
  }

  bool destroy(H *Handle) {
    {
      std::lock_guard<std::mutex> L(M);
      if (!Live.count(Handle) || !Dying.insert(Handle).second)
        return false;
    }
    // Outside the lock: an executor's end may wait (its step thread, its
    // backend), and that step may still call on its executor, which stays
    // live until its end. Its storage stays allocated after, so no new
    // handle takes its address.
    Handle->~H();
    new (Handle) H();
    H *Oldest = nullptr;
    {
      std::lock_guard<std::mutex> L(M);
      Live.erase(Handle);
      Dying.erase(Handle);
      Quarantine.push_back(Handle);
      if (Quarantine.size() > QuarantineSize) {
        Oldest = Quarantine.front();
        Quarantine.pop_front();
      }
    }
    delete Oldest;
    return true;
  }

private:
  std::mutex M;
  /// No order is taken from these (lookups only). Not llvm::DenseSet: two
  /// pointer values are its empty and deleted keys, and a caller's garbage
  /// pointer may be one of them.
  std::unordered_set<const H *> Live;
  /// Live handles whose Destroy runs: a second Destroy is refused.
  std::unordered_set<const H *> Dying;
  /// Destroyed handles, oldest first, holding nothing.
  std::deque<H *> Quarantine;
};

} // namespace

collcPlan *adopt(std::unique_ptr<collcPlan> H) {
  return Registry<collcPlan>::get().adopt(std::move(H));
}
collcExecutor *adopt(std::unique_ptr<collcExecutor> H) {
  return Registry<collcExecutor>::get().adopt(std::move(H));
}
collcComm *adopt(std::unique_ptr<collcComm> H) {
  return Registry<collcComm>::get().adopt(std::move(H));
}
bool isLive(const collcPlan *H) { return Registry<collcPlan>::get().isLive(H); }
bool isLive(const collcExecutor *H) { return Registry<collcExecutor>::get().isLive(H); }
bool isLive(const collcComm *H) { return Registry<collcComm>::get().isLive(H); }
namespace {
/// Destroys \p Handle through its registry, or says why not.
template <class H> llvm::Error destroyHandle(H *Handle, const char *Name) {
  if (Registry<H>::get().destroy(Handle))
    return llvm::Error::success();
  return makeApiError(collcInvalidArgument,
                      llvm::formatv("{0} ({1}) is being destroyed by another call", Name,
                                    static_cast<const void *>(Handle)));
}
} // namespace

llvm::Error destroy(collcPlan *H, const char *Name) { return destroyHandle(H, Name); }
llvm::Error destroy(collcExecutor *H, const char *Name) { return destroyHandle(H, Name); }
llvm::Error destroy(collcComm *H, const char *Name) { return destroyHandle(H, Name); }

namespace {
/// What is wrong with \p Handle, a \p Noun, if anything; \p Expected says
/// what it should be.
template <class H>
std::optional<std::string> handleProblem(const H *Handle, const char *Name, const char *Noun,
                                         const char *Expected) {
  if (!Handle)
    return llvm::formatv("{0} is NULL: expected {1}", Name, Expected).str();
  if (!isLive(Handle))
    return llvm::formatv("{0} ({1}) is not a live {2} (destroyed already, or not made by collc): "
                         "expected {3}",
                         Name, static_cast<const void *>(Handle), Noun, Expected)
        .str();
  return std::nullopt;
}
} // namespace

Args &Args::plan(const collcPlan *P, const char *Name) {
  if (std::optional<std::string> Why =
          handleProblem(P, Name, "plan", "a plan from collcCompile or collcPlanLoad"))
    set(collcInvalidArgument, *Why);
  return *this;
}

Args &Args::executor(const collcExecutor *E, const char *Name) {
  if (std::optional<std::string> Why =
          handleProblem(E, Name, "executor", "an executor from collcExecutorCreate"))
    set(collcInvalidArgument, *Why);
  return *this;
}

Args &Args::comm(const collcComm *C, const char *Name) {
  if (std::optional<std::string> Why =
          handleProblem(C, Name, "communicator", "a communicator from collcCommCreate"))
    set(collcInvalidArgument, *Why);
  return *this;
}

} // namespace collc::api
