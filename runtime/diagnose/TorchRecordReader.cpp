//===- runtime/diagnose/TorchRecordReader.cpp - PyTorch Flight Recorder dumps ==//

#include "runtime/diagnose/TorchRecordReader.h"

#include "plan/Plan.h"
#include "runtime/diagnose/CollcRecordReader.h"
#include "runtime/diagnose/JsonFields.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <limits>
#include <map>

using namespace llvm;

namespace collc::diag {

namespace {

constexpr int64_t MaxInt = std::numeric_limits<int64_t>::max();
/// More entries than any ring holds is not a dump.
constexpr size_t MaxEntries = size_t(1) << 22;
constexpr size_t MaxTensorsPerOp = 4096;
constexpr size_t MaxDims = 64;

/// A process group as this rank's pg_config lists it.
struct ProcessGroup {
  std::string Desc;
  std::vector<int64_t> Ranks; ///< sorted global ranks
};

/// "[0, 1, 2]" (how the recorder writes ranks) or a JSON array.
Expected<std::vector<int64_t>> ranksOf(const json::Value &V, const JsonFields &PF) {
  std::vector<int64_t> Out;
  if (const json::Array *A = V.getAsArray()) {
    if (A->size() > size_t(plan::MaxWorld))
      return PF.error("ranks", formatv("{0} ranks: more than {1}", A->size(), plan::MaxWorld));
    for (size_t K = 0; K != A->size(); ++K) {
      Expected<int64_t> R = integerOf((*A)[K], 0, plan::MaxWorld - 1, PF.file(),
                                      PF.pathOf(formatv("ranks[{0}]", K).str()));
      if (!R)
        return R.takeError();
      Out.push_back(*R);
    }
  } else if (Optional<StringRef> S = V.getAsString()) {
    StringRef Text = S->trim();
    if (!Text.consume_front("[") || !Text.consume_back("]"))
      return PF.error("ranks", formatv("'{0}': expected a list such as [0, 1]", *S));
    SmallVector<StringRef, 16> Parts;
    Text.split(Parts, ',', -1, /*KeepEmpty=*/false);
    if (Parts.size() > size_t(plan::MaxWorld))
      return PF.error("ranks", formatv("{0} ranks: more than {1}", Parts.size(), plan::MaxWorld));
    for (StringRef P : Parts) {
      int64_t R = 0;
      if (P.trim().getAsInteger(10, R) || R < 0 || R >= plan::MaxWorld)
        return PF.error("ranks", formatv("'{0}' is not a rank in 0..{1}", P.trim(),
                                         plan::MaxWorld - 1));
      Out.push_back(R);
    }
  } else {
    return PF.error("ranks", "expected a list of ranks, got " + describeJson(V));
  }
  llvm::sort(Out);
  if (Out.empty() || std::adjacent_find(Out.begin(), Out.end()) != Out.end())
    return PF.error("ranks", "expected distinct ranks, at least one");
  return Out;
}

/// The rank a file's name ends in, as fr_trace reads it.
std::optional<int64_t> rankOfName(StringRef File) {
  StringRef Name = sys::path::filename(File);
  Name.consume_back(".json");
  size_t Digits = 0;
  while (Digits < Name.size() && isDigit(Name[Name.size() - 1 - Digits]))
    ++Digits;
  int64_t R = 0;
  if (!Digits || Name.take_back(Digits).getAsInteger(10, R) || R >= plan::MaxWorld)
    return std::nullopt;
  return R;
}

class Reader {
public:
  Reader(const json::Object &Top, StringRef File) : F(File, "", Top) {
    R.File = File.str();
    R.Format = RecordFormat::Torch;
  }

  Expected<RankRecord> read() {
    if (Error E = header())
      return E;
    if (Error E = groups())
      return E;
    if (Error E = entries())
      return E;
    return std::move(R);
  }

private:
  Error header() {
    Expected<std::string> Version = F.string("version");
    if (!Version)
      return Version.takeError();
    StringRef Major, Minor;
    std::tie(Major, Minor) = StringRef(*Version).split('.');
    int M = 0, N = 0;
    if (Major.getAsInteger(10, M) || Minor.getAsInteger(10, N) || M != TorchSchemaMajor)
      return F.error("version", formatv("'{0}': this collc reads version {1}.x of the Flight "
                                        "Recorder's dump ({1}.{2} and later)",
                                        *Version, TorchSchemaMajor, TorchSchemaMinor));
    Expected<std::optional<int64_t>> Rank = F.optionalInteger("rank", 0, plan::MaxWorld - 1);
    if (!Rank)
      return Rank.takeError();
    std::optional<int64_t> Named = *Rank ? *Rank : rankOfName(F.file());
    if (!Named)
      return F.error("rank", "missing, and the file's name does not end in the rank (name it "
                             "as the Flight Recorder does: nccl_trace_rank_3)");
    R.Rank = *Named;
    R.Backend = "torch";
    R.Reason = "dump";
    return Error::success();
  }

  Error groups() {
    Expected<const json::Object *> Config = F.object("pg_config");
    if (!Config)
      return Config.takeError();
    if ((*Config)->size() > size_t(plan::MaxWorld))
      return F.error("pg_config", formatv("{0} process groups: more than {1}",
                                          (*Config)->size(), plan::MaxWorld));
    JsonFields CF = F.at("pg_config", **Config);
    for (const auto &[Key, Value] : **Config) {
      const json::Object *G = Value.getAsObject();
      if (!G)
        return CF.error(Key, "expected an object");
      JsonFields GF = CF.at(Key.str(), *G);
      Expected<std::string> Desc = GF.optionalString("desc", "undefined");
      if (!Desc)
        return Desc.takeError();
      const json::Value *Ranks = G->get("ranks");
      if (!Ranks)
        return GF.error("ranks", "missing");
      Expected<std::vector<int64_t>> Members = ranksOf(*Ranks, GF);
      if (!Members)
        return Members.takeError();
      R.World = std::max(R.World, Members->back() + 1);
      Groups[Key.str()] = ProcessGroup{*Desc, std::move(*Members)};
    }
    R.World = std::max(R.World, R.Rank + 1);
    return Error::success();
  }

  Error entries() {
    const json::Value *V = F.object().get("entries");
    if (!V) // the recorder leaves it out when it has none
      return Error::success();
    Expected<const json::Array *> Entries = F.array("entries");
    if (!Entries)
      return Entries.takeError();
    if ((*Entries)->size() > MaxEntries)
      return F.error("entries", formatv("{0} entries: more than {1}", (*Entries)->size(),
                                        MaxEntries));
    std::map<std::pair<int64_t, int64_t>, uint64_t> Ordinals;
    int64_t LastId = -1;
    for (size_t I = 0; I != (*Entries)->size(); ++I) {
      const json::Object *E = (**Entries)[I].getAsObject();
      if (!E)
        return F.error(formatv("entries[{0}]", I).str(), "expected an object");
      JsonFields EF = F.at(formatv("entries[{0}]", I), *E);
      Expected<int64_t> Id = EF.integer("record_id", LastId + 1, MaxInt);
      if (!Id)
        return Id.takeError();
      if (I == 0)
        R.Complete = *Id == 0; // the ring never wrapped
      LastId = *Id;
      Expected<std::optional<OpRecord>> Op = entry(EF, Ordinals);
      if (!Op)
        return Op.takeError();
      if (*Op) {
        (*Op)->Record = *Id;
        R.Ops.push_back(std::move(**Op));
      }
    }
    return Error::success();
  }

  /// "[[4, 8], [2]]": the sizes of an op's tensors, checked.
  Expected<std::string> sizesOf(const JsonFields &EF, StringRef Key) {
    Expected<const json::Array *> Tensors = EF.array(Key);
    if (!Tensors)
      return Tensors.takeError();
    if ((*Tensors)->size() > MaxTensorsPerOp)
      return EF.error(Key, formatv("{0} tensors: more than {1}", (*Tensors)->size(),
                                   MaxTensorsPerOp));
    std::string Out = "[";
    for (size_t T = 0; T != (*Tensors)->size(); ++T) {
      const json::Array *Dims = (**Tensors)[T].getAsArray();
      if (!Dims || Dims->size() > MaxDims)
        return EF.error(formatv("{0}[{1}]", Key, T).str(),
                        formatv("expected a list of at most {0} dimensions", MaxDims));
      Out += T ? ", [" : "[";
      for (size_t D = 0; D != Dims->size(); ++D) {
        Expected<int64_t> N = integerOf((*Dims)[D], 0, MaxInt, F.file(),
                                        EF.pathOf(formatv("{0}[{1}][{2}]", Key, T, D).str()));
        if (!N)
          return N.takeError();
        Out += (D ? ", " : "") + std::to_string(*N);
      }
      Out += "]";
    }
    return Out + "]";
  }

  Expected<std::string> dtypesOf(const JsonFields &EF, StringRef Key) {
    Expected<const json::Array *> Types = EF.array(Key);
    if (!Types)
      return Types.takeError();
    if ((*Types)->size() > MaxTensorsPerOp)
      return EF.error(Key, formatv("{0} types: more than {1}", (*Types)->size(), MaxTensorsPerOp));
    std::string Out;
    for (size_t T = 0; T != (*Types)->size(); ++T) {
      Optional<StringRef> S = (**Types)[T].getAsString();
      if (!S)
        return EF.error(formatv("{0}[{1}]", Key, T).str(), "expected a type name");
      Out += (T ? "," : "") + S->str();
    }
    return Out;
  }

  Expected<std::optional<OpRecord>>
  entry(const JsonFields &EF, std::map<std::pair<int64_t, int64_t>, uint64_t> &Ordinals) {
    OpRecord Op;
    Expected<const json::Array *> PG = EF.array("process_group");
    if (!PG)
      return PG.takeError();
    Optional<StringRef> Name = (*PG)->size() == 2 ? (**PG)[0].getAsString() : None;
    if (!Name || !(**PG)[1].getAsString())
      return EF.error("process_group", "expected [name, description]");
    auto G = Groups.find(Name->str());
    if (G == Groups.end())
      return EF.error("process_group", formatv("'{0}' is not in pg_config", *Name));
    Expected<std::string> Profiling = EF.string("profiling_name");
    if (!Profiling)
      return Profiling.takeError();
    Expected<int64_t> CollSeq = EF.integer("collective_seq_id", 0, MaxInt);
    Expected<int64_t> P2PSeq = CollSeq ? EF.integer("p2p_seq_id", 0, MaxInt) : CollSeq.takeError();
    Expected<bool> IsP2P = P2PSeq ? EF.boolean("is_p2p") : P2PSeq.takeError();
    Expected<std::string> State = IsP2P ? EF.string("state") : IsP2P.takeError();
    if (!State)
      return State.takeError();
    Expected<std::string> InSizes = sizesOf(EF, "input_sizes");
    Expected<std::string> OutSizes = InSizes ? sizesOf(EF, "output_sizes") : InSizes.takeError();
    Expected<std::string> InTypes = OutSizes ? dtypesOf(EF, "input_dtypes") : OutSizes.takeError();
    Expected<std::string> OutTypes = InTypes ? dtypesOf(EF, "output_dtypes") : InTypes.takeError();
    if (!OutTypes)
      return OutTypes.takeError();
    if (Error E = times(EF, Op))
      return E;
    Expected<int64_t> Timeout = EF.integer("timeout_ms", 0, MaxInt);
    if (!Timeout)
      return Timeout.takeError();
    Expected<std::optional<int64_t>> Retired = optionalBool(EF, "retired");
    if (!Retired)
      return Retired.takeError();
    // Markers of a batch's end, not ops.
    if (StringRef(*Profiling).endswith("coalesced"))
      return std::optional<OpRecord>();
    if (*State == "scheduled")
      Op.State = rt::CommState::Issued;
    else if (*State == "started")
      Op.State = rt::CommState::Started;
    else if (*State == "completed")
      Op.State = rt::CommState::Completed;
    else
      return EF.error("state", formatv("'{0}': expected scheduled, started or completed", *State));
    if (**Retired && Op.State != rt::CommState::Completed) {
      // Retired unfinished: its watchdog gave up on it (a timeout).
      Op.State = rt::CommState::Failed;
      Op.Error = rt::ErrorKind::Timeout;
    }
    Op.Op = *Profiling;
    Op.Signature = formatv("{0} in {1} {2} out {3} {4}", *Profiling, *InSizes, *InTypes, *OutSizes,
                           *OutTypes)
                       .str();
    Op.Members = G->second.Ranks;
    std::string Desc = G->second.Desc;
    Op.Group = Desc.empty() || Desc == "undefined" ? formatv("pg '{0}'", *Name).str()
                                                   : formatv("pg '{0}' ({1})", *Name, Desc).str();
    Op.Loc = locOf(EF);
    if (!*IsP2P) {
      Op.Channel = formatv("pg {0} {1}", *Name, rankList(Op.Members)).str();
      Op.Seq = uint64_t(*CollSeq);
      Op.Comm = *CollSeq;
      Op.Label = formatv("{0} #{1} in {2}", *Profiling, *CollSeq, Op.Group).str();
      return std::optional<OpRecord>(std::move(Op));
    }
    return pointToPoint(EF, std::move(Op), *P2PSeq, Ordinals);
  }

  /// A send or recv: "nccl:send 0->1", "nccl:recv 1<-0", in group ranks.
  Expected<std::optional<OpRecord>>
  pointToPoint(const JsonFields &EF, OpRecord Op, int64_t P2PSeq,
               std::map<std::pair<int64_t, int64_t>, uint64_t> &Ordinals) {
    StringRef Kind, Pair;
    std::tie(Kind, Pair) = StringRef(Op.Op).split(' ');
    bool Sends = Kind.endswith("send"), Receives = Kind.endswith("recv");
    StringRef A, B;
    std::tie(A, B) = Pair.split(Sends ? "->" : "<-");
    int64_t LocalA = 0, LocalB = 0;
    size_t Size = Op.Members.size();
    if ((!Sends && !Receives) || A.getAsInteger(10, LocalA) || B.getAsInteger(10, LocalB) ||
        LocalA < 0 || LocalB < 0 || size_t(LocalA) >= Size || size_t(LocalB) >= Size)
      return EF.error("profiling_name",
                      formatv("'{0}': expected 'nccl:send A->B' or 'nccl:recv B<-A' with A and B "
                              "in 0..{1}",
                              Op.Op, int64_t(Size) - 1));
    // Group ranks to global ranks: the group's ranks sorted (fr_trace's rule).
    int64_t From = Op.Members[Sends ? LocalA : LocalB], To = Op.Members[Sends ? LocalB : LocalA];
    if ((Sends ? From : To) != R.Rank)
      return EF.error("profiling_name", formatv("'{0}' is not an op of rank {1}", Op.Op, R.Rank));
    Op.PointToPoint = true;
    Op.Channel = p2pChannel(From, To);
    Op.Members = {std::min(From, To), std::max(From, To)};
    Op.Seq = Ordinals[{From, To}]++;
    Op.Placed = R.Complete; // an ordinal counted from the start of the run only
    Op.Comm = P2PSeq;
    Op.Label = formatv("{0} (p2p #{1} in {2})", Op.Op, P2PSeq, Op.Group).str();
    return std::optional<OpRecord>(std::move(Op));
  }

  static std::string rankList(const std::vector<int64_t> &Ranks) {
    std::string Out = "[";
    for (size_t I = 0; I != Ranks.size(); ++I)
      Out += (I ? "," : "") + std::to_string(Ranks[I]);
    return Out + "]";
  }

  Expected<std::optional<int64_t>> optionalBool(const JsonFields &EF, StringRef Key) {
    const json::Value *V = EF.object().get(Key);
    if (!V || V->kind() == json::Value::Null)
      return std::optional<int64_t>(0);
    Expected<bool> B = EF.boolean(Key);
    if (!B)
      return B.takeError();
    return std::optional<int64_t>(*B ? 1 : 0);
  }

  Error times(const JsonFields &EF, OpRecord &Op) {
    Expected<int64_t> Created = EF.integer("time_created_ns", 0, MaxInt);
    if (!Created)
      return Created.takeError();
    Op.IssuedNs = *Created;
    for (auto [Key, Into] : {std::pair<StringRef, int64_t *>{"time_discovered_started_ns",
                                                             &Op.StartedNs},
                             {"time_discovered_completed_ns", &Op.EndedNs}}) {
      // Null in the pickle form, 0 in the JSON form: not seen.
      Expected<std::optional<int64_t>> T = EF.optionalInteger(Key, 0, MaxInt);
      if (!T)
        return T.takeError();
      *Into = T->value_or(0);
    }
    return Error::success();
  }

  /// The innermost frame of the user's code, where the recorder kept
  /// frames: "file:line".
  static std::string locOf(const JsonFields &EF) {
    const json::Value *V = EF.object().get("frames");
    const json::Array *Frames = V ? V->getAsArray() : nullptr;
    if (!Frames)
      return "";
    for (const json::Value &Frame : *Frames) {
      const json::Object *O = Frame.getAsObject();
      if (!O)
        continue;
      Optional<StringRef> File = O->getString("filename");
      Optional<int64_t> Line = O->getInteger("line");
      if (File && Line && !File->contains("torch/distributed"))
        return formatv("{0}:{1}", *File, *Line).str();
    }
    return "";
  }

  JsonFields F;
  RankRecord R;
  std::map<std::string, ProcessGroup> Groups;
};

} // namespace

bool isTorchRecord(const json::Object &Top) {
  return !Top.get("format") && Top.get("version") && Top.get("pg_config");
}

Expected<RankRecord> readTorchRecord(const json::Object &Top, StringRef File) {
  return Reader(Top, File).read();
}

} // namespace collc::diag
