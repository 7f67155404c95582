//===- runtime/exec/RecordSignal.cpp - Flight records dumped on SIGUSR1 ----===//

#include "runtime/exec/RecordSignal.h"

#include "plan/SignalHandlerThread.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <fcntl.h>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace collc::rt {

namespace {

/// The enrolled records, the pipe and the waking thread. Made once and never
/// destroyed: the thread and a late signal may outlive every static.
struct Registry {
  std::mutex Lock; ///< held while records are enrolled, withdrawn or dumped
  std::vector<const FlightRecorder *> Records;
  int Pipe[2] = {-1, -1};
  bool Started = false;
};

Registry &registry() {
  static Registry *R = new Registry;
  return *R;
}

// What the handler touches: set before it is installed.
int WakeFd = -1;

/// Runs in the signal handler: one byte to the pipe (non-blocking: a full
/// pipe already holds a wake-up).
void wake() {
  int Saved = errno;
  char Byte = 1;
  [[maybe_unused]] ssize_t N = write(WakeFd, &Byte, 1);
  errno = Saved;
}

Error dumpAll(Registry &R, DumpReason Why) {
  std::lock_guard<std::mutex> L(R.Lock);
  Error All = Error::success();
  for (const FlightRecorder *Record : R.Records)
    All = joinErrors(std::move(All),
                     dumpFlightRecord(*Record, Record->options().Dir, Why));
  return All;
}

void wakeLoop(int Fd) {
  Registry &R = registry();
  for (;;) {
    char Bytes[64];
    ssize_t N = read(Fd, Bytes, sizeof Bytes);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return; // the pipe is gone: nothing will wake us again
    // Nobody to return an error to: it is said, once per wake-up.
    if (Error E = dumpAll(R, DumpReason::Signal))
      errs() << "collc: a flight record dump on SIGUSR1 failed: " << toString(std::move(E))
             << '\n';
  }
}

/// The pipe, the thread and the handler, once (under the registry's lock).
void startOnce(Registry &R) {
  if (R.Started)
    return;
  R.Started = true;
  if (pipe2(R.Pipe, O_CLOEXEC) != 0) {
    errs() << "collc: no SIGUSR1 flight record dumps: cannot make a pipe\n";
    return;
  }
  fcntl(R.Pipe[1], F_SETFL, O_NONBLOCK);
  WakeFd = R.Pipe[1];
  try {
    std::thread(wakeLoop, R.Pipe[0]).detach();
  } catch (const std::system_error &) {
    errs() << "collc: no SIGUSR1 flight record dumps: cannot start a thread\n";
    return;
  }
  // LLVM Support owns the process's signal handlers (a temporary file it
  // writes installs them, SIGUSR1 among them, and would replace one of
  // ours): its "info" signal is SIGUSR1, and it calls this function there.
  installSignalHandlersFromALastingThread();
  sys::SetInfoSignalFunction(wake);
}

} // namespace

RecordSignalEnrollment::RecordSignalEnrollment(const FlightRecorder &Record) : Record(Record) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.Lock);
  startOnce(R);
  R.Records.push_back(&Record);
}

RecordSignalEnrollment::~RecordSignalEnrollment() {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.Lock);
  llvm::erase_value(R.Records, &Record);
}

Error dumpEnrolledRecords(DumpReason Why) { return dumpAll(registry(), Why); }

} // namespace collc::rt
