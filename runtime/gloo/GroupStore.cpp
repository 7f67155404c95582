//===- runtime/gloo/GroupStore.cpp - A gloo group's view of the rendezvous -===//

#include "runtime/gloo/GroupStore.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <gloo/common/error.h>

#include <cerrno>
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

std::vector<char> bytes(StringRef S) { return std::vector<char>(S.begin(), S.end()); }
std::string text(const std::vector<char> &B) { return std::string(B.begin(), B.end()); }

std::string hostName() {
  char Name[256] = {};
  if (gethostname(Name, sizeof(Name) - 1) != 0 || !Name[0])
    return "unknown-host";
  return Name;
}

/// Whether \p Holder (host:pid) is a process running on this host.
bool runningHere(StringRef Holder) {
  auto [Host, Pid] = Holder.rsplit(':');
  pid_t P = 0;
  if (Host != hostName() || !to_integer(Pid, P, 10) || P <= 0)
    return false;
  return kill(P, 0) == 0 || errno == EPERM;
}

/// Whether \p Holder is on this host.
bool onThisHost(StringRef Holder) { return Holder.rsplit(':').first == hostName(); }

} // namespace

GroupStore::GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout)
    : Inner(Inner), Prefix(std::move(Prefix)), Timeout(Timeout) {}

std::string GroupStore::thisProcess() { return formatv("{0}:{1}", hostName(), getpid()).str(); }

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
    if (Inner.has({Refusal}))
      throw JoinRefused(text(Inner.get(Refusal)));
    if (std::chrono::steady_clock::now() >= Deadline)
      throw ::gloo::IoException(
          formatv("Wait timeout for key(s): {0}", join(Keys.begin(), Keys.end(), ", ")).str());
    std::this_thread::sleep_for(PollEvery);
  }
}

void GroupStore::refuse(const std::string &Why) {
  try {
    Inner.set(key(RefusalKey), bytes(Why));
  } catch (const std::exception &) {
    // Another rank posted first: its reason stands for the group.
  }
  throw JoinRefused(Why);
}

void GroupStore::claimRank(size_t Rank) {
  std::string Refusal = key(RefusalKey);
  if (Inner.has({Refusal}))
    throw JoinRefused("the group was refused before this process claimed rank " +
                      std::to_string(Rank) + ": " + text(Inner.get(Refusal)));
  std::string Me = thisProcess();
  ProbedStore::Claim C = Inner.claim(key("collc.claim." + std::to_string(Rank)), Me);
  if (C.Set)
    return;
  const std::string &Holder = C.Holder;
  const char *Kind = Inner.kind();
  if (Holder == Me)
    refuse(formatv("this process ({0}) already joined this group as rank {1} (a group's name "
                   "joins once per rendezvous)",
                   Me, Rank));
  if (runningHere(Holder))
    refuse(formatv("two running processes were started as rank {0}: {1}, which holds it, and "
                   "{2} (each process of a run needs a rank of its own)",
                   Rank, Holder, Me));
  if (onThisHost(Holder))
    refuse(formatv("the rendezvous {0} holds the keys of an earlier run (give each run a new or "
                   "empty {0}; rank {1} was claimed there by process {2}, which is not running)",
                   Kind, Rank, Holder));
  refuse(formatv("rank {0} is held by process {1} on another host, and {2} was started as rank "
                 "{0} too: either two processes of this run have that rank, or the rendezvous {3} "
                 "holds the keys of an earlier run (give each run a new or empty {3})",
                 Rank, Holder, Me, Kind));
}

} // namespace collc::rt::gloo
