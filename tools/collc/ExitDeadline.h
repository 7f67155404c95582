//===- tools/collc/ExitDeadline.h - A deadline for a call that takes none -*- C++ -*-===//
//
// MPI_Init_thread and MPI_Finalize wait for every process of the job and
// take no timeout: a process stopped (or stuck) before or inside them holds
// the others there for as long as it stays so. The collc tool bounds them
// by the run's --timeout-ms (the run's meeting arms one over each:
// runtime/process/ProcessMeeting.h): an ExitDeadline armed around such a
// call ends the process with status 1, saying what it waited for, when the
// call has not returned in time. Under mpirun a process that ends without
// MPI_Finalize ends the job, the stopped one included.
//
// Only a program's main may end its process: the libraries (the C API,
// Python) wait as long as MPI does, and docs/runtime.md says so.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_EXITDEADLINE_H
#define COLLC_TOOLS_COLLC_EXITDEADLINE_H

#include "llvm/ADT/Twine.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace collc::tool {

class ExitDeadline {
public:
  /// Ends the process after \p Limit, printing \p Why on standard error,
  /// unless destroyed first. Standard output is flushed now. Where no
  /// thread can be started to keep it, there is no deadline.
  ExitDeadline(std::chrono::milliseconds Limit, const llvm::Twine &Why);
  ~ExitDeadline();
  ExitDeadline(const ExitDeadline &) = delete;
  ExitDeadline &operator=(const ExitDeadline &) = delete;

private:
  std::mutex M;
  std::condition_variable Done;
  bool Disarmed = false;
  std::string Message;
  std::thread Keeper;
};

} // namespace collc::tool

#endif
