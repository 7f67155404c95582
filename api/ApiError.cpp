//===- api/ApiError.cpp - Results and the per-thread last error -----------===//

#include "api/ApiError.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

namespace collc::api {

char ApiError::ID = 0;

void ApiError::log(raw_ostream &OS) const { OS << Message; }

Error makeApiError(collcResult_t Result, const Twine &Message) {
  return make_error<ApiError>(Result, Message.str());
}

// Per thread, as NCCL's ncclGetLastError: ranks of the local backend are
// threads, and one rank's failure must not overwrite another's text.
static thread_local std::string LastError;

void clearLastError() { LastError.clear(); }

static thread_local const char *CurrentCall = "a collc call";

const char *currentCall() { return CurrentCall; }

CallScope::CallScope(const char *Function) noexcept : Outer(CurrentCall) {
  CurrentCall = Function;
}

CallScope::~CallScope() { CurrentCall = Outer; }

collcResult_t fail(collcResult_t R, const Twine &Text) {
  LastError = Text.str();
  return R;
}

static collcResult_t resultOfKind(rt::ErrorKind K) {
  switch (K) {
  case rt::ErrorKind::InvalidArgument:
    return collcInvalidArgument;
  case rt::ErrorKind::Unsupported:
    return collcUnsupported;
  case rt::ErrorKind::Mismatch:
    return collcMismatch;
  case rt::ErrorKind::Timeout:
    return collcTimeout;
  case rt::ErrorKind::PeerLost:
  case rt::ErrorKind::Broken:
    return collcRemoteError;
  case rt::ErrorKind::Backend:
    return collcSystemError;
  }
  return collcInternalError;
}

collcResult_t finish(const char *Function, Error E) {
  if (!E)
    return collcSuccess;
  // The first error decides the result; all of their texts are kept.
  collcResult_t R = collcSuccess;
  std::string Text;
  handleAllErrors(std::move(E), [&](const ErrorInfoBase &Info) {
    collcResult_t Mine;
    if (Info.isA<ApiError>())
      Mine = static_cast<const ApiError &>(Info).result();
    else if (Info.isA<rt::RuntimeError>())
      Mine = resultOfKind(static_cast<const rt::RuntimeError &>(Info).kind());
    else if (StringRef(Info.message()).startswith("internal error"))
      Mine = collcInternalError;
    else
      // Everything else is a refusal of the caller's input: program text, a
      // plan file, an option's value (each message names the value).
      Mine = collcInvalidArgument;
    if (R == collcSuccess)
      R = Mine;
    Text += (Text.empty() ? "" : "\n") + Info.message();
  });
  return fail(R, Twine(Function) + ": " + Text);
}

} // namespace collc::api

using namespace collc::api;

extern "C" {

const char *collcGetErrorString(collcResult_t R) {
  // A C or ctypes caller may pass any int: read the bits as an int, since
  // loading an out-of-range value as the enum is undefined in C++.
  static_assert(sizeof(collcResult_t) == sizeof(int));
  int Code;
  std::memcpy(&Code, &R, sizeof Code);
  switch (Code) {
  case collcSuccess:
    return "collcSuccess: no error";
  case collcInvalidArgument:
    return "collcInvalidArgument: an argument or its input text is invalid";
  case collcInvalidUsage:
    return "collcInvalidUsage: a call out of order";
  case collcSystemError:
    return "collcSystemError: the system or a library underneath failed";
  case collcInternalError:
    return "collcInternalError: an internal error of collc";
  case collcTimeout:
    return "collcTimeout: a peer did not arrive in time";
  case collcMismatch:
    return "collcMismatch: the ranks disagree";
  case collcUnsupported:
    return "collcUnsupported: this build or machine cannot do it";
  case collcRemoteError:
    return "collcRemoteError: a peer is gone or the group broke";
  case collcNumResults:
    break;
  }
  return "unknown collcResult_t";
}

const char *collcGetLastError(void) { return LastError.c_str(); }

} // extern "C"
