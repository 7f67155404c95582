//===- plan/SignalHandlerThread.cpp - Where LLVM's handlers are installed ===//

#include "plan/SignalHandlerThread.h"

#include "llvm/Support/Signals.h"

#include <future>
#include <mutex>
#include <thread>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define COLLC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COLLC_ASAN 1
#endif
#endif

namespace collc {

void installSignalHandlersFromALastingThread() {
#ifdef COLLC_ASAN
  static std::once_flag Once;
  std::call_once(Once, [] {
    std::promise<void> Installed;
    std::future<void> Done = Installed.get_future();
    try {
      std::thread([&Installed] {
        // A callback that does nothing: asking for one installs the
        // handlers, on this thread.
        llvm::sys::AddSignalHandler([](void *) {}, nullptr);
        Installed.set_value();
        for (;;)
          pause(); // lasts as long as the process: its alternate stack too
      }).detach();
    } catch (const std::system_error &) {
      return; // no thread: the handlers come where they are first asked for
    }
    Done.wait();
  });
#endif
}

} // namespace collc
