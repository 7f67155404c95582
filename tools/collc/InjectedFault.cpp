//===- tools/collc/InjectedFault.cpp - A fault a test injects into a run --===//

#include "tools/collc/InjectedFault.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <optional>

using namespace llvm;

namespace collc::tool {

namespace {

struct PointName {
  FaultPoint Point;
  const char *Name;
};
constexpr PointName Points[] = {{FaultPoint::Start, "start"},
                                {FaultPoint::Join, "join"},
                                {FaultPoint::MidStep, "mid-step"},
                                {FaultPoint::BetweenSteps, "between-steps"},
                                {FaultPoint::Finalize, "finalize"}};

const char *nameOf(FaultPoint P) {
  for (const PointName &N : Points)
    if (N.Point == P)
      return N.Name;
  return "?";
}

} // namespace

Expected<InjectedFault> InjectedFault::parse(StringRef Text) {
  auto Bad = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(),
                             "--inject-fault '" + Text + "': " + Why +
                                 " (expected RANK:POINT:SIGNAL, POINT one of start, join, "
                                 "mid-step, between-steps, finalize, SIGNAL stop or kill)");
  };
  SmallVector<StringRef, 3> Parts;
  Text.split(Parts, ':');
  if (Parts.size() != 3)
    return Bad("three fields");
  InjectedFault F;
  if (Parts[0].getAsInteger(10, F.OnRank) || F.OnRank < 0)
    return Bad("the rank '" + Parts[0] + "' is not a non-negative number");
  std::optional<FaultPoint> Point;
  for (const PointName &N : Points)
    if (Parts[1] == N.Name)
      Point = N.Point;
  if (!Point)
    return Bad("unknown point '" + Parts[1] + "'");
  F.Point = *Point;
  F.Signal = StringSwitch<int>(Parts[2]).Case("stop", SIGSTOP).Case("kill", SIGKILL).Default(0);
  if (!F.Signal)
    return Bad("unknown signal '" + Parts[2] + "'");
  return F;
}

void InjectedFault::at(FaultPoint P, int64_t Rank) const {
  if (!isAt(P, Rank))
    return;
  errs() << formatv("collc run: rank {0}: injected {1} at {2}\n", Rank,
                    Signal == SIGSTOP ? "SIGSTOP" : "SIGKILL", nameOf(P));
  errs().flush();
  raise(Signal);
}

} // namespace collc::tool
