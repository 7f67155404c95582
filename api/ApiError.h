//===- api/ApiError.h - Results and the per-thread last error -*- C++ -*-===//
//
// Inside the API everything is an llvm::Error; at the boundary it becomes a
// collcResult_t and this thread's last-error text. ApiError carries a result
// the runtime's ErrorKind cannot say (invalid usage, a system failure); the
// runtime's own errors map by kind (resultOf).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_APIERROR_H
#define COLLC_API_APIERROR_H

#include "collc/collc.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace collc::api {

class ApiError : public llvm::ErrorInfo<ApiError> {
public:
  static char ID;
  ApiError(collcResult_t Result, std::string Message)
      : Result(Result), Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  collcResult_t result() const { return Result; }

private:
  collcResult_t Result;
  std::string Message;
};

llvm::Error makeApiError(collcResult_t Result, const llvm::Twine &Message);

/// Consumes \p E: collcSuccess, or its result with the last error set to
/// "Function: text".
collcResult_t finish(const char *Function, llvm::Error E);

/// Sets this thread's last error and returns \p R (for failures outside any
/// llvm::Error: a caught exception).
collcResult_t fail(collcResult_t R, const llvm::Twine &Text);

void clearLastError();

/// The collc.h function this thread runs (the innermost, when a callback
/// calls into collc), for texts that name a call other than their own: "in
/// use by collcExecutorReplay". Set by entry() through CallScope.
const char *currentCall();

class CallScope {
public:
  explicit CallScope(const char *Function) noexcept;
  ~CallScope();
  CallScope(const CallScope &) = delete;
  CallScope &operator=(const CallScope &) = delete;

private:
  const char *Outer;
};

} // namespace collc::api

#endif
