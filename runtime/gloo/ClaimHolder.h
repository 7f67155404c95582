//===- runtime/gloo/ClaimHolder.h - The process a rank's claim names -*- C++ -*-===//
//
// A gloo rank claims its rank in the rendezvous store (GroupStore.h) with
// the process that holds it: "HOST:PID START NONCE BOOT PIDNS". The nonce
// tells this process from an earlier one with the same host and pid (a
// container's pid 1); the start time tells a running process from one
// whose pid was reused; the boot and the pid namespace tell whether this
// process can see that pid at all. So a peer on this machine can be known
// to have ended: during the join (GroupStore's waits) and after it
// (GlooDriver's health()).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_CLAIMHOLDER_H
#define COLLC_RUNTIME_GLOO_CLAIMHOLDER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace collc::rt::gloo {

struct ClaimHolder {
  std::string Host;
  long Pid = 0;
  uint64_t Start = 0;
  uint64_t Nonce = 0;
  std::string Boot = "0";
  uint64_t PidNs = 0;

  /// This process, as its claims name it.
  static const ClaimHolder &thisProcess();
  /// The holder \p Text names, if it is a claim collc wrote.
  static std::optional<ClaimHolder> parse(llvm::StringRef Text);
  /// What a claim holds.
  std::string text() const;
  /// How errors name it (the host as read from the store, escaped).
  std::string name() const;
  /// Whether its pid means a process this one can see: the same host, boot
  /// and pid namespace, each known on both sides.
  bool seenFromHere() const;
  /// Whether it may be running: false only when it is known to have ended
  /// (a pid seen from here that is gone, a zombie, or reused by a process
  /// started at another time). Where /proc cannot say, kill() alone.
  bool mayRun() const;
  /// Whether it is known to run now, on this machine.
  bool runningHere() const { return seenFromHere() && mayRun(); }
  /// Whether it is known to have ended.
  bool gone() const { return !mayRun(); }
};

} // namespace collc::rt::gloo

#endif
