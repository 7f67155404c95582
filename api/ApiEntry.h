//===- api/ApiEntry.h - The one gate every C entry point goes through -*- C++ -*-===//
//
// Every function of collc.h is `return entry(__func__, [&] { ... });`:
//  - entry() clears this thread's last error, runs the body, turns its
//    llvm::Error into a result and text (api/ApiError.h), and catches every
//    exception, so nothing but a collcResult_t crosses the boundary;
//  - Args is the one place arguments are checked (null pointers, struct
//    sizes, ranges), so every refusal reads alike: "collcExecutorBind: name
//    is NULL: expected a tensor name". It holds the call's use of each
//    handle it checked (api/LiveHandles.h) until the call returns, so a
//    Destroy on another thread meanwhile is refused.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_APIENTRY_H
#define COLLC_API_APIENTRY_H

#include "api/ApiError.h"
#include "api/LiveHandles.h"
#include "api/StructVersions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <system_error>
#include <type_traits>

namespace collc::api {

template <class Body> collcResult_t entry(const char *Function, Body &&B) noexcept {
  clearLastError();
  CallScope Scope(Function);
  try {
    return finish(Function, B());
  } catch (const std::bad_alloc &) {
    return fail(collcSystemError, llvm::Twine(Function) + ": out of memory");
  } catch (const std::system_error &E) {
    // The system refused a resource: a thread (its streams' workers), a lock.
    return fail(collcSystemError, llvm::Twine(Function) + ": the system refused: " + E.what());
  } catch (...) {
    return fail(collcInternalError, llvm::Twine(Function) + ": internal error: an exception");
  }
}

/// Checks of the arguments of one call; the first failure is kept, and
/// done() returns it. Each check names the argument and what was expected.
class Args {
public:
  /// \p Name must not be null; \p What says what it should point at.
  Args &notNull(const void *P, const char *Name, const char *What) {
    if (!P)
      set(collcInvalidArgument, llvm::formatv("{0} is NULL: expected {1}", Name, What));
    return *this;
  }
  /// A plan or executor handle: not NULL, and one that collc made and has
  /// not destroyed (api/LiveHandles.h); this call uses it until Args ends.
  /// Not on a temporary `Args()`, whose use would end at once.
  Args &plan(const collcPlan *P, const char *Name) & {
    return take(use(P, Name, currentCall(), "a plan from collcCompile or collcPlanLoad"));
  }
  Args &executor(const collcExecutor *E, const char *Name) & {
    return take(use(E, Name, currentCall(), "an executor from collcExecutorCreate"));
  }
  Args &comm(const collcComm *C, const char *Name) & {
    return take(use(C, Name, currentCall(), "a communicator from collcCommCreate"));
  }
  Args &plan(const collcPlan *P, const char *Name) && = delete;
  Args &executor(const collcExecutor *E, const char *Name) && = delete;
  Args &comm(const collcComm *C, const char *Name) && = delete;
  /// A versioned struct (null allowed when \p Optional): its first field
  /// `size` must be at least the size of its first version
  /// (api/StructVersions.h); a larger one than this library's is read as far
  /// as this library knows.
  template <class T> Args &versioned(const T *S, const char *Name, bool Optional) {
    if (!S) {
      if (!Optional)
        set(collcInvalidArgument, llvm::formatv("{0} is NULL: expected a {0} struct", Name));
      return *this;
    }
    // Read once into a local: GCC 12 finds a function template named `size`
    // in scope and warns that `S->size <` may open a template argument list
    // (-Wmissing-template-keyword).
    size_t Size = S->size;
    if (!endsAVersion<T>(Size) || Size > (size_t(1) << 16))
      set(collcInvalidArgument,
          llvm::formatv("{0}->size is {1}: expected sizeof the struct ({2}, or {3} in version "
                        "1; initialize it with its Init call)",
                        Name, Size, sizeof(T), FirstVersionSize<T>));
    return *this;
  }
  /// \p Value must lie in Low..High.
  Args &inRange(int64_t Value, const char *Name, int64_t Low, int64_t High) {
    if (Value < Low || Value > High)
      set(collcInvalidArgument,
          llvm::formatv("{0} is {1}: expected {2}..{3}", Name, Value, Low, High));
    return *this;
  }
  /// An enum field a C or ctypes caller filled: its bits are read as an int
  /// (an out-of-range value loaded as the enum is undefined in C++).
  template <typename E>
    requires std::is_enum_v<E>
  Args &inRange(const E &Field, const char *Name, int64_t Low, int64_t High) {
    static_assert(sizeof(E) == sizeof(int));
    int Value;
    std::memcpy(&Value, &Field, sizeof Value);
    return inRange(int64_t(Value), Name, Low, High);
  }
  llvm::Error done() { return std::move(First); }
  /// Whether this call uses \p Handle: it passed plan(), executor() or comm().
  bool uses(const void *Handle) const {
    return llvm::any_of(Uses, [&](const HandleUse &U) { return U.handle() == Handle; });
  }
  /// This call's use of \p Handle, which it hands to destroy().
  HandleUse releaseUse(const void *Handle) {
    for (HandleUse &U : Uses)
      if (U.handle() == Handle)
        return std::move(U);
    return HandleUse();
  }

  ~Args() { llvm::consumeError(std::move(First)); }

private:
  void set(collcResult_t R, const std::string &Text) {
    if (!First)
      First = makeApiError(R, Text);
  }
  Args &take(llvm::Expected<HandleUse> Use) {
    if (!Use) {
      if (First)
        llvm::consumeError(Use.takeError());
      else
        First = Use.takeError();
    } else {
      Uses.push_back(std::move(*Use));
    }
    return *this;
  }
  llvm::Error First = llvm::Error::success();
  llvm::SmallVector<HandleUse, 2> Uses;
};

/// Stores in *\p Out a malloc'd copy of \p S, which the caller frees with
/// collcFree.
llvm::Error returnString(const std::string &S, char **Out);

} // namespace collc::api

#endif
