//===- plan/SignalHandlerThread.h - Where LLVM's handlers are installed -*- C++ -*-===//
//
// LLVM installs its signal handlers the first time something asks for them
// (a temporary file to remove on a signal: OutputFile; SIGUSR1's info
// function: the flight record), and gives the thread that asks an
// alternate signal stack of its own, from malloc. Under AddressSanitizer a
// thread that then exits makes ASan's own teardown abort (it unmaps the
// alternate stack as if it were its own: "unable to unmap"). So there the
// first request is made from a thread that lasts as long as the process;
// in other builds this does nothing and the handlers come as before.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_SIGNALHANDLERTHREAD_H
#define COLLC_PLAN_SIGNALHANDLERTHREAD_H

namespace collc {

/// Before anything that may install LLVM's signal handlers. Thread-safe;
/// the work is done once.
void installSignalHandlersFromALastingThread();

} // namespace collc

#endif
