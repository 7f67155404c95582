//===- runtime/gloo/LoopFailureExit.cpp - Gloo's loop thread fails as a rank -===//

#include "runtime/gloo/LoopFailureExit.h"

#include <gloo/common/error.h>
#include <gloo/common/logging.h>

#include <exception>
#include <mutex>
#include <string>

#include <unistd.h>

namespace collc::rt::gloo {

namespace {

std::terminate_handler Previous = nullptr;

/// Writes \p Text to stderr with write(2) alone: the process is ending on
/// some thread while others run, and stdio's locks may be held.
void writeAll(const std::string &Text) {
  const char *P = Text.data();
  size_t Left = Text.size();
  while (Left) {
    ssize_t N = ::write(STDERR_FILENO, P, Left);
    if (N <= 0)
      return;
    P += N;
    Left -= size_t(N);
  }
}

[[noreturn]] void endOnGlooFailure() {
  std::string What;
  bool Gloos = false;
  if (std::exception_ptr E = std::current_exception()) {
    try {
      std::rethrow_exception(E);
    } catch (const ::gloo::EnforceNotMet &X) {
      Gloos = true;
      What = X.what();
    } catch (const ::gloo::Exception &X) {
      Gloos = true;
      What = X.what();
    } catch (...) {
    }
  }
  if (Gloos) {
    writeAll("collc: gloo: its network thread failed: " + What +
             " (a connection was reset before this process accepted it: a peer ended, or gave up "
             "joining a group); this process ends with status 1\n");
    ::_exit(1);
  }
  if (Previous)
    Previous();
  std::abort();
}

} // namespace

void endProcessOnGlooLoopFailure() {
  static std::once_flag Once;
  std::call_once(Once, [] { Previous = std::set_terminate(endOnGlooFailure); });
}

} // namespace collc::rt::gloo
