//===- runtime/exec/FlightRecordDump.cpp - A flight record as a JSON file ===//

#include "runtime/exec/FlightRecordDump.h"

#include "plan/OutputFile.h"
#include "runtime/exec/CommFacts.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <unistd.h>

using namespace llvm;

namespace collc::rt {

StringRef dumpReasonName(DumpReason R) {
  switch (R) {
  case DumpReason::Failure:
    return "failure";
  case DumpReason::Timeout:
    return "timeout";
  case DumpReason::Signal:
    return "signal";
  case DumpReason::Exit:
    return "exit";
  case DumpReason::Request:
    return "request";
  }
  llvm_unreachable("bad dump reason");
}

std::string flightRecordPath(StringRef Dir, int64_t Rank) {
  SmallString<256> Path(Dir);
  sys::path::append(Path, formatv("collc-record-rank{0}.json", Rank).str());
  return std::string(Path);
}

static std::string hostName() {
  char Buf[256] = {};
  if (gethostname(Buf, sizeof Buf - 1) != 0)
    return "";
  return Buf;
}

static void writeGroups(json::OStream &J, const plan::Plan &P, int64_t Rank) {
  J.attributeArray("groups", [&] {
    auto Write = [&](StringRef Name, int64_t Subgroup, int32_t Group) {
      J.object([&] {
        J.attribute("name", Name);
        J.attribute("subgroup", Subgroup);
        J.attributeArray("ranks", [&] {
          for (int64_t R : membersOf(P, Group, Rank))
            J.value(R);
        });
      });
    };
    Write("", 0, -1);
    for (size_t G = 0; G != P.Groups.size(); ++G)
      if (size_t(Rank) < P.Groups[G].SubgroupOf.size() && P.Groups[G].SubgroupOf[Rank] >= 0)
        Write(P.Groups[G].Name, P.Groups[G].SubgroupOf[Rank], int32_t(G));
  });
}

static void writeEvent(json::OStream &J, const FlightRecorder::Event &E, const CommFacts &F) {
  J.object([&] {
    J.attribute("seq", int64_t(E.Seq));
    J.attribute("replay", int64_t(E.Replay));
    J.attribute("step", int64_t(E.Step));
    J.attribute("comm", int64_t(E.Comm));
    J.attribute("op", F.Op);
    J.attribute("group", F.Group);
    J.attribute("subgroup", F.Subgroup);
    J.attribute("loc", F.Loc);
    J.attribute("dtype", F.DType);
    J.attribute("bytes", int64_t(F.Bytes));
    J.attribute("peer", F.Peer);
    J.attribute("root", F.Root);
    J.attribute("p2p", F.P2POrdinal);
    J.attributeArray("splits", [&] {
      for (int64_t X : E.Splits)
        J.value(X);
    });
    J.attribute("splits_truncated", E.SplitsTruncated);
    J.attribute("state", commStateName(E.State));
    if (E.State == CommState::Failed) {
      J.attribute("error", errorKindKey(E.Error));
      J.attribute("blamed", E.Peer);
    }
    J.attribute("issued_ns", E.IssuedNs);
    J.attribute("started_ns", E.StartedNs);
    J.attribute("ended_ns", E.EndedNs);
  });
}

void writeFlightRecord(const FlightRecorder &Record, DumpReason Why, raw_ostream &OS) {
  FlightRecorder::Snapshot S = Record.snapshot();
  const plan::Plan &P = Record.plan();
  std::vector<CommFacts> Facts = commFactsOfRank(P, Record.rank());
  json::OStream J(OS, 1);
  J.object([&] {
    J.attribute("format", FlightRecordFormat);
    J.attribute("version", int64_t(FlightRecordVersion));
    J.attribute("rank", Record.rank());
    J.attribute("world", P.World);
    J.attribute("backend", Record.backend());
    J.attribute("pid", int64_t(getpid()));
    J.attribute("host", hostName());
    J.attribute("reason", dumpReasonName(Why));
    J.attribute("dumped_ns", S.TakenNs);
    J.attributeObject("plan", [&] {
      J.attribute("program", P.Program);
      J.attribute("digest", P.Digest);
      J.attribute("source", P.Source);
    });
    writeGroups(J, P, Record.rank());
    J.attribute("replays", int64_t(S.Replays));
    J.attributeObject("position", [&] {
      J.attribute("replay", int64_t(S.Replays));
      J.attribute("step", int64_t(S.PositionStep));
      J.attribute("activity", rankActivityName(S.Position));
    });
    if (S.Fail)
      J.attributeObject("error", [&] {
        J.attribute("kind", errorKindKey(S.Fail->Kind));
        J.attribute("peer", S.Fail->Peer);
        J.attribute("message", S.Fail->Message);
      });
    J.attribute("capacity", int64_t(S.Capacity));
    J.attribute("recorded", int64_t(S.Recorded));
    J.attributeArray("events", [&] {
      for (const FlightRecorder::Event &E : S.Events)
        if (E.Comm < Facts.size())
          writeEvent(J, E, Facts[E.Comm]);
    });
  });
  OS << '\n';
}

Error dumpFlightRecord(const FlightRecorder &Record, StringRef Dir, DumpReason Why) {
  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "flight record of rank %lld: cannot make directory '%s': %s",
                             (long long)Record.rank(), Dir.str().c_str(),
                             EC.message().c_str());
  std::string Path = flightRecordPath(Dir, Record.rank());
  Expected<std::unique_ptr<OutputFile>> Out =
      OutputFile::create(Path, {}, /*DashIsStandardOutput=*/false);
  if (!Out)
    return Out.takeError();
  writeFlightRecord(Record, Why, (*Out)->os());
  return (*Out)->commit();
}

Error recordFailure(FlightRecorder &Record, Error E, std::optional<int64_t> Blamed) {
  if (!E)
    return E;
  FlightRecorder::Failure F;
  // The first error of a list gives the kind and the peer; every one's
  // text is kept.
  int64_t Peer = -1;
  bool First = true;
  auto Add = [&](const std::string &Text) {
    F.Message += (F.Message.empty() ? "" : "\n") + Text;
  };
  handleAllErrors(
      std::move(E),
      [&](const RuntimeError &R) {
        if (First) {
          F.Kind = R.kind();
          Peer = R.peer();
        }
        First = false;
        Add(R.text());
      },
      [&](const ErrorInfoBase &B) {
        First = false;
        Add(B.message());
      });
  F.Peer = Blamed.value_or(Peer);
  std::string Message = F.Message;
  ErrorKind Kind = F.Kind;
  Record.noteFailure(std::move(F));
  StringRef Dir = Record.options().Dir;
  if (!Dir.empty())
    if (Error D = dumpFlightRecord(Record, Dir,
                                   Kind == ErrorKind::Timeout ? DumpReason::Timeout
                                                              : DumpReason::Failure))
      Message += " (and its flight record could not be dumped: " + toString(std::move(D)) + ")";
  return makeError(Kind, Message, Peer);
}

} // namespace collc::rt
