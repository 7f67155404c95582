//===- runtime/exec/RecordSignal.h - Flight records dumped on SIGUSR1 -*- C++ -*-===//
//
// A user whose run hangs sends the process SIGUSR1 (`kill -USR1 PID`), and
// every flight record enrolled here writes its dump to its directory
// (FlightRecordDump.h), reason "signal", without stopping the run.
//
// A signal handler may call only async-signal-safe functions, and a dump
// allocates, formats and renames files: so the handler only writes one
// byte to a pipe (write(2) is safe), and a thread of this module, blocked
// reading the pipe, wakes and dumps. The handler is LLVM Support's "info
// signal" function (SIGUSR1 on Linux): LLVM owns the process's handlers,
// and installs its own for SIGUSR1 whenever it writes a temporary file, so
// a handler of ours would not last. The pipe, the thread and the function
// start with the first enrollment. An executor enrolls its record when it
// has a dump directory, and withdraws it (waiting for a dump in progress)
// before the record goes.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_RECORDSIGNAL_H
#define COLLC_RUNTIME_EXEC_RECORDSIGNAL_H

#include "runtime/exec/FlightRecordDump.h"

#include "llvm/Support/Error.h"

namespace collc::rt {

/// While it lives, \p Record (with a dump directory) is dumped on SIGUSR1.
class RecordSignalEnrollment {
public:
  explicit RecordSignalEnrollment(const FlightRecorder &Record);
  ~RecordSignalEnrollment();
  RecordSignalEnrollment(const RecordSignalEnrollment &) = delete;
  RecordSignalEnrollment &operator=(const RecordSignalEnrollment &) = delete;

private:
  const FlightRecorder &Record;
};

/// Dumps every enrolled record now, as SIGUSR1 does, and waits for it;
/// the errors of every record that could not be written, joined.
llvm::Error dumpEnrolledRecords(DumpReason Why);

} // namespace collc::rt

#endif
