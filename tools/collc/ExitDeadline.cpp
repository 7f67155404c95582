//===- tools/collc/ExitDeadline.cpp - A deadline for a call that takes none --===//

#include "tools/collc/ExitDeadline.h"

#include "tools/collc/ToolSupport.h"

#include "llvm/Support/raw_ostream.h"

#include <system_error>
#include <unistd.h>

using namespace llvm;

namespace collc::tool {

ExitDeadline::ExitDeadline(std::chrono::milliseconds Limit, const Twine &Why)
    : Message(Why.str() + "\n") {
  // The process may end in the call: what it printed goes out first.
  outs().flush();
  errs().flush();
  auto Until = std::chrono::steady_clock::now() + Limit;
  try {
    Keeper = std::thread([this, Until] {
      std::unique_lock<std::mutex> L(M);
      if (Done.wait_until(L, Until, [&] { return Disarmed; }))
        return;
      // The caller's thread is inside the call: only write(2) and _exit,
      // which take no lock it may hold.
      for (size_t Off = 0; Off < Message.size();) {
        ssize_t N = ::write(STDERR_FILENO, Message.data() + Off, Message.size() - Off);
        if (N <= 0)
          break;
        Off += size_t(N);
      }
      _exit(ExitUserError);
    });
  } catch (const std::system_error &) {
    // No thread to keep the deadline: the call waits as long as it does.
  }
}

ExitDeadline::~ExitDeadline() {
  if (!Keeper.joinable())
    return;
  {
    std::lock_guard<std::mutex> L(M);
    Disarmed = true;
  }
  Done.notify_all();
  Keeper.join();
}

} // namespace collc::tool
