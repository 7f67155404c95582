//===- runtime/gloo/GroupStore.cpp - A gloo group's view of the rendezvous -===//

#include "runtime/gloo/GroupStore.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gloo/common/error.h>

#include <cerrno>
#include <optional>
#include <random>
#include <signal.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

/// Under the group's prefix: why the group cannot form, once a rank knows.
constexpr const char *RefusalKey = "collc.refused";
/// How often a wait asks the store again (as Gloo's own stores do).
constexpr std::chrono::milliseconds PollEvery{10};

std::string hostName() {
  char Name[256] = {};
  if (gethostname(Name, sizeof(Name) - 1) != 0 || !Name[0])
    return "unknown-host";
  return Name;
}

/// When process \p Pid started (clock ticks since boot, /proc/PID/stat's
/// 22nd field), or 0: with its pid, a process that a reused pid is not.
uint64_t startTicks(long Pid) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Stat =
      MemoryBuffer::getFileAsStream(formatv("/proc/{0}/stat", Pid).str());
  if (!Stat)
    return 0;
  // After the command's name (in parentheses, which it may contain).
  StringRef After = (*Stat)->getBuffer().rsplit(')').second;
  SmallVector<StringRef, 24> Fields;
  After.split(Fields, ' ', -1, /*KeepEmpty=*/false);
  uint64_t Ticks = 0;
  // Fields from the 3rd (state) on: the 22nd is the 20th here.
  if (Fields.size() < 20 || Fields[19].getAsInteger(10, Ticks))
    return 0;
  return Ticks;
}

/// A process as a claim names it: "HOST:PID START NONCE". The nonce tells
/// this process from an earlier one with the same host and pid (a
/// container's pid 1); the start time tells a running process from one
/// whose pid was reused.
struct ClaimHolder {
  std::string Host;
  long Pid = 0;
  uint64_t Start = 0;
  uint64_t Nonce = 0;

  static const ClaimHolder &thisProcess() {
    static const ClaimHolder Me = [] {
      ClaimHolder H;
      H.Host = hostName();
      H.Pid = long(getpid());
      H.Start = startTicks(H.Pid);
      std::random_device R;
      H.Nonce = (uint64_t(R()) << 32) ^ R();
      return H;
    }();
    return Me;
  }
  /// The holder \p Text names, if it is a claim collc wrote.
  static std::optional<ClaimHolder> parse(StringRef Text) {
    ClaimHolder H;
    SmallVector<StringRef, 3> Parts;
    Text.split(Parts, ' ');
    if (Parts.size() != 3)
      return std::nullopt;
    auto [Host, Pid] = Parts[0].rsplit(':');
    H.Host = Host.str();
    if (Host.empty() || Pid.getAsInteger(10, H.Pid) || H.Pid <= 0 ||
        Parts[1].getAsInteger(10, H.Start) || Parts[2].getAsInteger(16, H.Nonce))
      return std::nullopt;
    return H;
  }
  std::string text() const { return formatv("{0}:{1} {2} {3:x-}", Host, Pid, Start, Nonce).str(); }
  /// How errors name it.
  std::string name() const { return formatv("{0}:{1}", Host, Pid).str(); }
  bool onThisHost() const { return Host == hostName(); }
  /// Whether it runs now on this host: its pid is alive and started when
  /// the claim says.
  bool runningHere() const {
    if (!onThisHost() || Pid <= 0 || (kill(pid_t(Pid), 0) != 0 && errno != EPERM))
      return false;
    // 0: /proc could not say when it started (then the pid alone).
    return Start == 0 || startTicks(Pid) == Start;
  }
};

} // namespace

GroupStore::GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout)
    : Inner(Inner), Prefix(std::move(Prefix)), Timeout(Timeout) {}

void GroupStore::set(const std::string &Key, const std::vector<char> &Data) {
  Inner.set(key(Key), Data);
}

std::vector<char> GroupStore::get(const std::string &Key) {
  wait({Key});
  return Inner.get(key(Key));
}

void GroupStore::wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) {
  wait(Keys);
}

void GroupStore::wait(const std::vector<std::string> &Keys) {
  std::vector<std::string> Full;
  for (const std::string &K : Keys)
    Full.push_back(key(K));
  std::string Refusal = key(RefusalKey);
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  for (;;) {
    if (Inner.has(Full))
      return;
    if (std::optional<std::string> Why = Inner.claimed(Refusal))
      throw JoinRefused(*Why);
    if (std::chrono::steady_clock::now() >= Deadline)
      throw ::gloo::IoException(
          formatv("Wait timeout for key(s): {0}", join(Keys.begin(), Keys.end(), ", ")).str());
    std::this_thread::sleep_for(PollEvery);
  }
}

void GroupStore::refuse(const std::string &Why) {
  try {
    Inner.claim(key(RefusalKey), Why);
  } catch (const StoreWriteFailed &) {
    // This rank is refused all the same; the others wait out their timeout.
  }
  throw JoinRefused(Why);
}

void GroupStore::claimRank(size_t Rank, size_t Size) {
  const ClaimHolder &Me = ClaimHolder::thisProcess();
  std::string ClaimKey = key("collc.claim." + std::to_string(Rank));
  ProbedStore::Claim C = Inner.claim(ClaimKey, Me.text());
  const char *Kind = Inner.kind();
  if (C.Set) {
    // Refused by a rank of this run (one started as this rank too, just
    // now, or any other), or by an earlier run whose ranks were not this one.
    if (std::optional<std::string> Why = Inner.claimed(key(RefusalKey)))
      throw JoinRefused("the group was refused: " + *Why);
    ProbedStore::Claim Sized = Inner.claim(key("collc.size"), std::to_string(Size));
    if (!Sized.Set && Sized.Holder != std::to_string(Size))
      refuse(formatv("its ranks were started with different sizes: {0} (the rank that came "
                     "first) and {1} (process {2}, rank {3})",
                     Sized.Holder, Size, Me.name(), Rank));
    return;
  }
  std::optional<ClaimHolder> Parsed = ClaimHolder::parse(C.Holder);
  if (!Parsed)
    refuse(formatv("the rendezvous {0} holds a claim of rank {1} that collc did not write "
                   "('{2}' at {3}): expected HOST:PID START NONCE (give each run a new or empty "
                   "{0})",
                   Kind, Rank, StringRef(C.Holder).take_front(80), Inner.where(ClaimKey)));
  const ClaimHolder &Holder = *Parsed;
  if (Holder.Host == Me.Host && Holder.Pid == Me.Pid && Holder.Nonce == Me.Nonce)
    refuse(formatv("this process ({0}) already joined this group as rank {1} (a group's name "
                   "joins once per rendezvous)",
                   Me.name(), Rank));
  if (Holder.runningHere())
    refuse(formatv("two running processes were started as rank {0}: {1}, which holds it, and "
                   "{2} (each process of a run needs a rank of its own)",
                   Rank, Holder.name(), Me.name()));
  if (Holder.onThisHost())
    refuse(formatv("the rendezvous {0} holds the keys of an earlier run (give each run a new or "
                   "empty {0}; rank {1} was claimed there by process {2}, which is not running)",
                   Kind, Rank, Holder.name()));
  refuse(formatv("rank {0} is held by process {1} on another host, and {2} was started as rank "
                 "{0} too: either two processes of this run have that rank, or the rendezvous {3} "
                 "holds the keys of an earlier run (give each run a new or empty {3})",
                 Rank, Holder.name(), Me.name(), Kind));
}

} // namespace collc::rt::gloo
