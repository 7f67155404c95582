//===- runtime/diagnose/CollcRecordReader.cpp - collc's flight record dumps ===//

#include "runtime/diagnose/CollcRecordReader.h"

#include "plan/Plan.h"
#include "runtime/diagnose/JsonFields.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

using namespace llvm;

namespace collc::diag {

namespace {

constexpr int64_t MaxInt = std::numeric_limits<int64_t>::max();
constexpr int64_t MaxU32 = int64_t(UINT32_MAX);

/// One dump, read field by field; each step returns the first error.
class Reader {
public:
  Reader(const json::Object &Top, StringRef File) : F(File, "", Top) { R.File = File.str(); }

  Expected<RankRecord> read() {
    if (Error E = header())
      return E;
    if (Error E = groups())
      return E;
    if (Error E = state())
      return E;
    if (Error E = events())
      return E;
    return std::move(R);
  }

private:
  Error header() {
    Expected<std::string> Format = F.string("format");
    if (!Format)
      return Format.takeError();
    if (*Format != rt::FlightRecordFormat)
      return F.error("format", formatv("'{0}': expected '{1}'", *Format, rt::FlightRecordFormat));
    Expected<int64_t> Version = F.integer("version", 0, MaxInt);
    if (!Version)
      return Version.takeError();
    if (*Version != rt::FlightRecordVersion)
      return F.error("version", formatv("{0}: this collc reads version {1} of {2}", *Version,
                                        rt::FlightRecordVersion, rt::FlightRecordFormat));
    Expected<int64_t> World = F.integer("world", 1, plan::MaxWorld);
    if (!World)
      return World.takeError();
    Expected<int64_t> Rank = F.integer("rank", 0, *World - 1);
    if (!Rank)
      return Rank.takeError();
    R.World = *World;
    R.Rank = *Rank;
    for (auto [Key, Into] : {std::pair<StringRef, std::string *>{"backend", &R.Backend},
                             {"reason", &R.Reason}}) {
      Expected<std::string> S = F.string(Key);
      if (!S)
        return S.takeError();
      *Into = std::move(*S);
    }
    R.Finished = R.Reason == "exit";
    Expected<int64_t> Dumped = F.integer("dumped_ns", 0, MaxInt);
    if (!Dumped)
      return Dumped.takeError();
    R.DumpedNs = *Dumped;
    Expected<const json::Object *> Plan = F.object("plan");
    if (!Plan)
      return Plan.takeError();
    JsonFields PF = F.at("plan", **Plan);
    for (auto [Key, Into] : {std::pair<StringRef, std::string *>{"program", &R.Program},
                             {"digest", &R.Identity},
                             {"source", &R.Source}}) {
      Expected<std::string> S = PF.string(Key);
      if (!S)
        return S.takeError();
      *Into = std::move(*S);
    }
    return Error::success();
  }

  /// The subgroups this rank belongs to, by (group, subgroup).
  Error groups() {
    Expected<const json::Array *> Groups = F.array("groups");
    if (!Groups)
      return Groups.takeError();
    // A group name may appear once per plan group; more than the world
    // holds is not a dump of collc's.
    if ((*Groups)->size() > size_t(plan::MaxWorld))
      return F.error("groups", formatv("{0} entries: expected at most {1}", (*Groups)->size(),
                                       plan::MaxWorld));
    for (size_t I = 0; I != (*Groups)->size(); ++I) {
      const json::Object *G = (**Groups)[I].getAsObject();
      if (!G)
        return F.error(formatv("groups[{0}]", I).str(), "expected an object");
      JsonFields GF = F.at(formatv("groups[{0}]", I), *G);
      Expected<std::string> Name = GF.string("name");
      if (!Name)
        return Name.takeError();
      Expected<int64_t> Sub = GF.integer("subgroup", 0, R.World - 1);
      if (!Sub)
        return Sub.takeError();
      Expected<const json::Array *> Ranks = GF.array("ranks");
      if (!Ranks)
        return Ranks.takeError();
      if ((*Ranks)->empty() || (*Ranks)->size() > size_t(R.World))
        return GF.error("ranks", formatv("{0} ranks: expected 1..{1}", (*Ranks)->size(),
                                         R.World));
      std::vector<int64_t> Members;
      for (size_t K = 0; K != (*Ranks)->size(); ++K) {
        Expected<int64_t> M = integerOf((**Ranks)[K], 0, R.World - 1, F.file(),
                                        GF.pathOf(formatv("ranks[{0}]", K).str()));
        if (!M)
          return M.takeError();
        Members.push_back(*M);
      }
      llvm::sort(Members);
      if (std::adjacent_find(Members.begin(), Members.end()) != Members.end())
        return GF.error("ranks", "a rank appears twice");
      if (!llvm::is_contained(Members, R.Rank))
        return GF.error("ranks", formatv("rank {0} itself is not among them", R.Rank));
      if (!Subgroups.emplace(groupChannel(*Name, *Sub), std::move(Members)).second)
        return GF.error("name", formatv("'{0}' subgroup {1} is listed twice", *Name, *Sub));
    }
    return Error::success();
  }

  /// The rank's error and position.
  Error state() {
    Expected<int64_t> Replays = F.integer("replays", 0, MaxReplay);
    if (!Replays)
      return Replays.takeError();
    Expected<const json::Object *> Pos = F.object("position");
    if (!Pos)
      return Pos.takeError();
    JsonFields PF = F.at("position", **Pos);
    Expected<int64_t> Step = PF.integer("step", 0, MaxU32);
    Expected<std::string> Activity = Step ? PF.string("activity") : Step.takeError();
    if (!Activity)
      return Activity.takeError();
    std::optional<rt::RankActivity> A = rt::parseRankActivity(*Activity);
    if (!A)
      return PF.error("activity", formatv("'{0}': expected idle, compute, launch or wait",
                                          *Activity));
    R.InCompute = *A == rt::RankActivity::Compute;
    if (*A == rt::RankActivity::Compute)
      R.Position = formatv("in compute at step {0} of replay {1}", *Step, *Replays).str();
    else if (*A == rt::RankActivity::Idle)
      R.Position = *Replays ? formatv("between replays, after replay {0}", *Replays).str()
                            : std::string("before its first replay");
    Expected<const json::Object *> Err = F.optionalObject("error");
    if (!Err)
      return Err.takeError();
    if (*Err) {
      JsonFields EF = F.at("error", **Err);
      RankFailure Fail;
      Expected<std::string> Kind = EF.string("kind");
      if (!Kind)
        return Kind.takeError();
      std::optional<rt::ErrorKind> K = rt::parseErrorKindKey(*Kind);
      if (!K)
        return EF.error("kind", formatv("'{0}' is no error kind of collc's", *Kind));
      Fail.Kind = *K;
      Expected<int64_t> Peer = EF.integer("peer", -1, R.World - 1);
      if (!Peer)
        return Peer.takeError();
      Fail.Peer = *Peer;
      Expected<std::string> Message = EF.string("message");
      if (!Message)
        return Message.takeError();
      Fail.Message = std::move(*Message);
      R.Failure = std::move(Fail);
    }
    this->Replays = *Replays;
    return Error::success();
  }

  Error events() {
    Expected<int64_t> Capacity = F.integer("capacity", 1, int64_t(1) << 20);
    if (!Capacity)
      return Capacity.takeError();
    Expected<int64_t> Recorded = F.integer("recorded", 0, MaxInt);
    if (!Recorded)
      return Recorded.takeError();
    Expected<const json::Array *> Events = F.array("events");
    if (!Events)
      return Events.takeError();
    size_t N = (*Events)->size();
    if (N > size_t(*Capacity) || int64_t(N) > *Recorded)
      return F.error("events", formatv("{0} events: more than the ring's capacity ({1}) or "
                                       "the events recorded ({2})",
                                       N, *Capacity, *Recorded));
    R.Complete = int64_t(N) == *Recorded;
    int64_t LastSeq = -1;
    for (size_t I = 0; I != N; ++I) {
      const json::Object *E = (**Events)[I].getAsObject();
      if (!E)
        return F.error(formatv("events[{0}]", I).str(), "expected an object");
      Expected<OpRecord> Op = event(F.at(formatv("events[{0}]", I), *E), LastSeq, *Recorded);
      if (!Op)
        return Op.takeError();
      R.Ops.push_back(std::move(*Op));
    }
    return Error::success();
  }

  Expected<OpRecord> event(const JsonFields &EF, int64_t &LastSeq, int64_t Recorded) {
    OpRecord Op;
    Expected<int64_t> Seq = EF.integer("seq", LastSeq + 1, Recorded - 1);
    if (!Seq)
      return Seq.takeError();
    LastSeq = *Seq;
    Op.Record = *Seq;
    std::map<StringRef, int64_t *> Numbers = {{"replay", &Op.Replay}, {"step", &Op.Step},
                                              {"comm", &Op.Comm}};
    for (auto [Key, Into] : Numbers) {
      Expected<int64_t> V = EF.integer(Key, Key == "replay" ? 1 : 0,
                                       Key == "replay" ? std::max<int64_t>(Replays, 1) : MaxU32);
      if (!V)
        return V.takeError();
      *Into = *V;
    }
    Expected<std::string> OpName = EF.string("op");
    if (!OpName)
      return OpName.takeError();
    Optional<plan::CommKind> Kind = plan::parseCommKind(*OpName);
    if (!Kind)
      return EF.error("op", formatv("'{0}' is no op of collc's", *OpName));
    Op.Op = *OpName;
    Expected<std::string> Group = EF.string("group");
    Expected<int64_t> Sub = Group ? EF.integer("subgroup", 0, R.World - 1) : Group.takeError();
    Expected<std::string> Loc = Sub ? EF.string("loc") : Sub.takeError();
    Expected<std::string> DType = Loc ? EF.string("dtype") : Loc.takeError();
    if (!DType)
      return DType.takeError();
    if (!parseElemType(*DType))
      return EF.error("dtype", formatv("'{0}' is no element type", *DType));
    Op.Loc = std::move(*Loc);
    Expected<int64_t> Bytes = EF.integer("bytes", 0, MaxInt);
    Expected<int64_t> Peer = Bytes ? EF.integer("peer", -1, R.World - 1) : Bytes.takeError();
    Expected<int64_t> Root = Peer ? EF.integer("root", -1, R.World - 1) : Peer.takeError();
    Expected<int64_t> Ordinal = Root ? EF.integer("p2p", -1, MaxU32) : Root.takeError();
    if (!Ordinal)
      return Ordinal.takeError();
    Op.Signature = collcSignature(*OpName, *DType, uint64_t(*Bytes));
    if (*Kind == plan::CommKind::Send || *Kind == plan::CommKind::Recv) {
      if (*Peer < 0 || *Peer == R.Rank || *Ordinal < 0)
        return EF.error("peer", formatv("a {0} needs a peer other than rank {1} and a p2p "
                                        "ordinal (got peer {2}, ordinal {3})",
                                        *OpName, R.Rank, *Peer, *Ordinal));
      bool Sends = *Kind == plan::CommKind::Send;
      int64_t From = Sends ? R.Rank : *Peer, To = Sends ? *Peer : R.Rank;
      Op.PointToPoint = true;
      Op.Channel = p2pChannel(From, To);
      Op.Members = {std::min(From, To), std::max(From, To)};
      Op.Seq = uint64_t(Op.Replay) << 32 | uint64_t(*Ordinal);
      Op.Group = formatv("rank {0} to rank {1}", From, To).str();
    } else {
      Op.Channel = groupChannel(*Group, *Sub);
      auto It = Subgroups.find(Op.Channel);
      if (It == Subgroups.end())
        return EF.error("group", formatv("'{0}' subgroup {1} is not among this dump's groups",
                                         *Group, *Sub));
      Op.Members = It->second;
      Op.Seq = uint64_t(Op.Replay) << 32 | uint64_t(Op.Step);
      Op.Group = collcGroupName(*Group, *Sub);
    }
    Op.Label = collcOpLabel(Op.Comm, Op.Op, Op.Group, Op.Step, Op.Replay);
    if (Error E = splits(EF, Op))
      return E;
    if (Error E = stateOf(EF, Op))
      return E;
    return Op;
  }

  Error splits(const JsonFields &EF, OpRecord &Op) {
    Expected<const json::Array *> Splits = EF.array("splits");
    if (!Splits)
      return Splits.takeError();
    if ((*Splits)->size() > rt::FlightRecorder::MaxSplits)
      return EF.error("splits", formatv("{0} entries: a record keeps at most {1}",
                                        (*Splits)->size(), rt::FlightRecorder::MaxSplits));
    for (size_t K = 0; K != (*Splits)->size(); ++K) {
      Expected<int64_t> V = integerOf((**Splits)[K], std::numeric_limits<int64_t>::min(), MaxInt,
                                      F.file(), EF.pathOf(formatv("splits[{0}]", K).str()));
      if (!V)
        return V.takeError();
      Op.Splits.push_back(*V);
    }
    return Error::success();
  }

  Error stateOf(const JsonFields &EF, OpRecord &Op) {
    Expected<std::string> State = EF.string("state");
    if (!State)
      return State.takeError();
    std::optional<rt::CommState> S = rt::parseCommState(*State);
    if (!S)
      return EF.error("state", formatv("'{0}': expected issued, started, completed or failed",
                                       *State));
    Op.State = *S;
    if (*S == rt::CommState::Failed) {
      Expected<std::string> Kind = EF.string("error");
      if (!Kind)
        return Kind.takeError();
      std::optional<rt::ErrorKind> K = rt::parseErrorKindKey(*Kind);
      if (!K)
        return EF.error("error", formatv("'{0}' is no error kind of collc's", *Kind));
      Expected<int64_t> Blamed = EF.integer("blamed", -1, R.World - 1);
      if (!Blamed)
        return Blamed.takeError();
      Op.Error = *K;
      Op.Blamed = *Blamed;
    }
    std::map<StringRef, int64_t *> Times = {
        {"issued_ns", &Op.IssuedNs}, {"started_ns", &Op.StartedNs}, {"ended_ns", &Op.EndedNs}};
    for (auto [Key, Into] : Times) {
      Expected<int64_t> T = EF.integer(Key, 0, MaxInt);
      if (!T)
        return T.takeError();
      *Into = *T;
    }
    return Error::success();
  }

  JsonFields F;
  RankRecord R;
  int64_t Replays = 0;
  std::map<std::string, std::vector<int64_t>> Subgroups;
};

} // namespace

std::string groupChannel(StringRef Group, int64_t Subgroup) {
  return Group.empty() ? std::string("world") : formatv("{0}/{1}", Group, Subgroup).str();
}

std::string collcOpLabel(int64_t Comm, StringRef Op, StringRef Group, int64_t Step,
                         int64_t Replay) {
  return formatv("comm #{0} {1} in {2}, step {3} of replay {4}", Comm, Op, Group, Step, Replay)
      .str();
}

std::string collcSignature(StringRef Op, StringRef DType, uint64_t Bytes) {
  return formatv("{0} {1} {2} B", Op, DType, Bytes).str();
}

std::string collcGroupName(StringRef Group, int64_t Subgroup) {
  return Group.empty() ? std::string("the world") : "@" + groupChannel(Group, Subgroup);
}

std::string p2pChannel(int64_t From, int64_t To) {
  return formatv("p2p {0}->{1}", From, To).str();
}

bool isCollcRecord(const json::Object &Top) {
  Optional<StringRef> Format = Top.getString("format");
  return Format && *Format == rt::FlightRecordFormat;
}

Expected<RankRecord> readCollcRecord(const json::Object &Top, StringRef File) {
  return Reader(Top, File).read();
}

} // namespace collc::diag
