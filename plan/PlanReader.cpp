//===- plan/PlanReader.cpp - Text to Plan -------------------------===//
//
// Line by line; every error names the line, what was found and what was
// expected. After the last entity the digest line must match the digest of
// the text above it, and an `end` line must follow: a plan cut short or
// changed by hand is refused rather than half-run.
//
//===----------------------------------------------------------------------===//

#include "plan/Plan.h"

#include "plan/PlanValidator.h"
#include "ir/InputFile.h"
#include "ir/Quoting.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace collc::plan {

Expected<RankSet> RankSet::parse(StringRef Text, int64_t World) {
  RankSet S;
  if (Text == "all")
    return S;
  S.All = false;
  if (Text == "none")
    return S;
  SmallVector<StringRef, 8> Parts;
  Text.split(Parts, ',');
  for (StringRef Part : Parts) {
    auto [A, B] = Part.split('-');
    int64_t Lo, Hi;
    if (A.getAsInteger(10, Lo) || (B.empty() ? (Hi = Lo, false) : B.getAsInteger(10, Hi)) ||
        Lo < 0 || Hi < Lo || Hi >= World)
      return createStringError(inconvertibleErrorCode(),
                               "bad rank set '%s': expected 'all', 'none' or ranges such as "
                               "0-3,6 within 0..%lld",
                               Text.str().c_str(), (long long)World - 1);
    for (int64_t R = Lo; R <= Hi; ++R) {
      if (!S.Ranks.empty() && S.Ranks.back() >= R)
        return createStringError(inconvertibleErrorCode(), "bad rank set '%s': ranks must increase",
                                 Text.str().c_str());
      S.Ranks.push_back(R);
    }
  }
  return S;
}

namespace {

class Reader {
public:
  Reader(StringRef Text, StringRef Name) : Text(Text), Name(Name) {}
  Expected<Plan> run();

private:
  // --- one line at a time --------------------------------------------
  bool nextLine();
  Error err(const Twine &Msg) const {
    return createStringError(inconvertibleErrorCode(), "%s:%u: %s", Name.str().c_str(), LineNo,
                             Msg.str().c_str());
  }
  /// An error at column \p Col (from 1) of the current line.
  Error errAt(size_t Col, const Twine &Msg) const {
    return createStringError(inconvertibleErrorCode(), "%s:%u:%zu: %s", Name.str().c_str(), LineNo,
                             Col, Msg.str().c_str());
  }
  bool atEnd() const { return Pos == Words.size(); }
  StringRef peek() const { return atEnd() ? StringRef() : Words[Pos]; }
  Expected<StringRef> word(const Twine &What);
  Error keyword(StringRef K);
  bool consumeKeyword(StringRef K) {
    if (peek() != K)
      return false;
    ++Pos;
    return true;
  }
  Expected<int64_t> integer(const Twine &What, int64_t Min, int64_t Max);
  Expected<std::string> quoted();
  Expected<std::string> sigilName(char Sigil, const Twine &What);
  Expected<std::vector<int64_t>> list(const Twine &What, int64_t Min, int64_t Max);
  Expected<TensorType> type();
  Error endOfLine();
  /// `ranks SET`, as computes and comms write it.
  Error ranks(RankSet &Out);
  /// `in [..] out [..]`: tensor numbers, as computes and comms write them.
  Error tensorLists(std::vector<uint32_t> &In, std::vector<uint32_t> &Out);

  // --- entities -------------------------------------------------------
  Error header();
  Error group();
  Error tensor();
  Error buffer();
  Error slot();
  Error compute();
  Error comm();
  Error step();
  Error checkReferences();

  StringRef Text, Name;
  StringRef Rest;
  const char *LineStart = nullptr;
  unsigned LineNo = 0;
  std::vector<std::string> Words;
  std::vector<size_t> Cols; ///< the column (from 1) where each word starts
  size_t Pos = 0;
  Plan P;
  StringMap<int32_t> GroupIndex;
  enum class Last { None, Compute, Comm, Buffer } LastEntity = Last::None;
};

bool Reader::nextLine() {
  while (!Rest.empty()) {
    LineStart = Rest.data();
    auto [Line, Tail] = Rest.split('\n');
    Rest = Tail;
    ++LineNo;
    Words.clear();
    Cols.clear();
    Pos = 0;
    // Words are space separated; a quoted string is one word.
    StringRef L = Line.rtrim("\r");
    size_t I = 0;
    while (I < L.size()) {
      if (L[I] == ' ') {
        ++I;
        continue;
      }
      Cols.push_back(I + 1);
      if (L[I] == '"') {
        // Kept escaped, with its opening quote; quoted() decodes it.
        size_t Close = findClosingQuote(L.drop_front(I + 1));
        if (Close == StringRef::npos) {
          Words.push_back("\x01unterminated");
          break;
        }
        Words.push_back(L.substr(I, Close + 1).str());
        I += Close + 2;
        continue;
      }
      size_t J = L.find(' ', I);
      if (J == StringRef::npos)
        J = L.size();
      Words.push_back(L.slice(I, J).str());
      I = J;
    }
    if (!Words.empty())
      return true;
  }
  return false;
}

Expected<StringRef> Reader::word(const Twine &What) {
  if (atEnd())
    return err("expected " + What + ", found the end of the line");
  return StringRef(Words[Pos++]);
}

Error Reader::keyword(StringRef K) {
  if (consumeKeyword(K))
    return Error::success();
  return err("expected '" + K + "', found " +
             (atEnd() ? "the end of the line" : "'" + peek() + "'"));
}

Expected<int64_t> Reader::integer(const Twine &What, int64_t Min, int64_t Max) {
  Expected<StringRef> W = word(What);
  if (!W)
    return W.takeError();
  int64_t V;
  if (W->getAsInteger(10, V))
    return err("expected " + What + ", found '" + *W + "'");
  if (V < Min || V > Max)
    return err(What + " " + Twine(V) + " is not in " + Twine(Min) + ".." + Twine(Max));
  return V;
}

Expected<std::string> Reader::quoted() {
  Expected<StringRef> W = word("a quoted string");
  if (!W)
    return W.takeError();
  if (*W == "\x01unterminated")
    return err("unterminated string");
  if (!W->startswith("\""))
    return err("expected a quoted string, found '" + *W + "'");
  Expected<std::string> S = unquote(W->drop_front());
  if (!S) {
    size_t Col = Cols[Pos - 1] + 1;
    std::string Msg;
    handleAllErrors(S.takeError(), [&](const UnquoteError &E) {
      Col += E.Offset;
      Msg = E.Msg;
    });
    return errAt(Col, Msg);
  }
  return S;
}

Expected<std::string> Reader::sigilName(char Sigil, const Twine &What) {
  Expected<StringRef> W = word(What);
  if (!W)
    return W.takeError();
  if (W->size() < 2 || W->front() != Sigil)
    return err("expected " + What + " (" + Twine(Sigil) + "name), found '" + *W + "'");
  return W->drop_front().str();
}

Expected<std::vector<int64_t>> Reader::list(const Twine &What, int64_t Min, int64_t Max) {
  Expected<StringRef> W = word(What);
  if (!W)
    return W.takeError();
  if (!W->startswith("[") || !W->endswith("]"))
    return err("expected " + What + " as [a,b,...], found '" + *W + "'");
  std::vector<int64_t> Out;
  StringRef Inner = W->drop_front().drop_back();
  if (Inner.empty())
    return Out;
  SmallVector<StringRef, 16> Parts;
  Inner.split(Parts, ',');
  for (StringRef Part : Parts) {
    int64_t V;
    if (Part.getAsInteger(10, V))
      return err("expected " + What + " as [a,b,...], found '" + Part + "' in '" + *W + "'");
    if (V < Min || V > Max)
      return err("in " + What + ": " + Twine(V) + " is not in " + Twine(Min) + ".." + Twine(Max));
    Out.push_back(V);
  }
  return Out;
}

Expected<TensorType> Reader::type() {
  Expected<StringRef> W = word("a tensor type such as f32[768,3072]");
  if (!W)
    return W.takeError();
  size_t Bracket = W->find('[');
  Optional<ElemType> E = parseElemType(W->take_front(Bracket));
  if (!E)
    return err("unknown element type '" + W->take_front(Bracket) + "'; expected one of " +
               allElemTypeNames());
  TensorType T;
  T.Elem = *E;
  if (Bracket == StringRef::npos)
    return T;
  --Pos; // re-read the dims as a list
  Words[Pos].erase(0, Bracket);
  Expected<std::vector<int64_t>> Dims = list("dimensions", 0, MaxDimension);
  if (!Dims)
    return Dims.takeError();
  T.Shape.assign(Dims->begin(), Dims->end());
  return T;
}

Error Reader::endOfLine() {
  if (atEnd())
    return Error::success();
  return err("unexpected '" + peek() + "' at the end of the line");
}

Error Reader::header() {
  if (!nextLine())
    return err("empty plan: expected 'collc-plan " + Twine(FormatVersion) + "'");
  if (Error E = keyword("collc-plan"))
    return createStringError(inconvertibleErrorCode(),
                             "%s:%u: not a collc plan: it must start with 'collc-plan %d'",
                             Name.str().c_str(), LineNo, FormatVersion);
  Expected<int64_t> V = integer("the format version", 0, INT32_MAX);
  if (!V)
    return V.takeError();
  if (*V != FormatVersion)
    return err("plan format version " + Twine(*V) +
               " is not supported; this collc reads "
               "version " +
               Twine(FormatVersion) + " (compile the plan again with this collc)");
  P.Version = *V;
  if (!nextLine())
    return err("plan is truncated after its first line");
  if (Error E = keyword("program"))
    return E;
  Expected<std::string> N = sigilName('@', "the program name");
  if (!N)
    return N.takeError();
  P.Program = *N;
  if (Error E = keyword("world"))
    return E;
  Expected<int64_t> W = integer("world size", 1, MaxWorld);
  if (!W)
    return W.takeError();
  P.World = *W;
  if (Error E = keyword("align"))
    return E;
  Expected<int64_t> A = integer("alignment", 1, MaxAlignment);
  if (!A)
    return A.takeError();
  if (*A & (*A - 1))
    return err("alignment " + Twine(*A) + " is not a power of two");
  P.Alignment = *A;
  return endOfLine();
}

Error Reader::group() {
  Group G;
  Expected<std::string> N = sigilName('@', "the group name");
  if (!N)
    return N.takeError();
  G.Name = *N;
  if (GroupIndex.count(G.Name))
    return err("group @" + G.Name + " is defined twice");
  std::vector<uint8_t> Seen(P.World, 0);
  while (!atEnd()) {
    Expected<std::vector<int64_t>> Members = list("a subgroup's ranks", 0, P.World - 1);
    if (!Members)
      return Members.takeError();
    if (Members->empty())
      return err("group @" + G.Name + " has an empty subgroup");
    for (int64_t R : *Members) {
      if (Seen[R])
        return err("rank " + Twine(R) + " is in two subgroups of @" + G.Name);
      Seen[R] = 1;
    }
    G.Subgroups.emplace_back(Members->begin(), Members->end());
  }
  // No subgroups is a group nobody is in (a split whose colors exclude
  // every rank): the writer writes it, so the reader takes it; a comm on it
  // is refused by the validator, since none of its ranks is a member.
  GroupIndex[G.Name] = P.Groups.size();
  P.Groups.push_back(std::move(G));
  return Error::success();
}

Error Reader::tensor() {
  Expected<int64_t> I = integer("the tensor number", 0, INT32_MAX);
  if (!I)
    return I.takeError();
  if (*I != int64_t(P.Tensors.size()))
    return err("tensor " + Twine(*I) + " out of sequence; expected tensor " +
               Twine(P.Tensors.size()));
  Tensor T;
  Expected<std::string> N = sigilName('%', "the tensor name");
  if (!N)
    return N.takeError();
  T.Name = *N;
  Expected<TensorType> Ty = type();
  if (!Ty)
    return Ty.takeError();
  T.Type = *Ty;
  P.Tensors.push_back(std::move(T));
  return endOfLine();
}

Error Reader::buffer() {
  Expected<int64_t> I = integer("the buffer number", 0, INT32_MAX);
  if (!I)
    return I.takeError();
  if (*I != int64_t(P.Buffers.size()))
    return err("buffer " + Twine(*I) + " out of sequence; expected buffer " +
               Twine(P.Buffers.size()));
  Buffer B;
  if (Error E = keyword("bytes"))
    return E;
  Expected<int64_t> Bytes = integer("buffer bytes", 0, INT64_MAX);
  if (!Bytes)
    return Bytes.takeError();
  B.Bytes = *Bytes;
  if (Error E = keyword("segments"))
    return E;
  Expected<int64_t> Seg = integer("segments", 1, P.World);
  if (!Seg)
    return Seg.takeError();
  B.Segments = *Seg;
  P.Buffers.push_back(std::move(B));
  LastEntity = Last::Buffer;
  return endOfLine();
}

Error Reader::slot() {
  if (LastEntity != Last::Buffer)
    return err("a slot must follow its buffer");
  Buffer &B = P.Buffers.back();
  Slot S;
  Expected<int64_t> T = integer("the slot's tensor", 0, int64_t(P.Tensors.size()) - 1);
  if (!T)
    return T.takeError();
  S.Tensor = *T;
  if (Error E = keyword("offset"))
    return E;
  Expected<int64_t> Off = integer("offset", 0, INT64_MAX);
  if (!Off)
    return Off.takeError();
  S.Offset = *Off;
  if (Error E = keyword("bytes"))
    return E;
  Expected<int64_t> Bytes = integer("slot bytes", 0, INT64_MAX);
  if (!Bytes)
    return Bytes.takeError();
  S.Bytes = *Bytes;
  Expected<StringRef> Mode = word("a slot mode (view, pack, unpack)");
  if (!Mode)
    return Mode.takeError();
  if (*Mode == "view")
    S.Mode = SlotMode::View;
  else if (*Mode == "pack")
    S.Mode = SlotMode::Pack;
  else if (*Mode == "unpack")
    S.Mode = SlotMode::Unpack;
  else
    return err("unknown slot mode '" + *Mode + "'; expected view, pack or unpack");
  if (S.Bytes != uint64_t(P.Tensors[S.Tensor].Type.bytes()))
    return err("slot of %" + P.Tensors[S.Tensor].Name + " has " + Twine(S.Bytes) +
               " bytes; the tensor has " + Twine(P.Tensors[S.Tensor].Type.bytes()));
  uint64_t Segment = B.Bytes / uint64_t(B.Segments);
  if (S.Offset + S.Bytes / uint64_t(B.Segments) > Segment)
    return err("slot of %" + P.Tensors[S.Tensor].Name + " at offset " + Twine(S.Offset) +
               " does not fit its buffer of " + Twine(B.Bytes) + " bytes");
  B.Slots.push_back(S);
  return endOfLine();
}

Error Reader::ranks(RankSet &Out) {
  if (Error E = keyword("ranks"))
    return E;
  Expected<StringRef> RS = word("a rank set");
  if (!RS)
    return RS.takeError();
  Expected<RankSet> Ranks = RankSet::parse(*RS, P.World);
  if (!Ranks)
    return err(toString(Ranks.takeError()));
  Out = *Ranks;
  return Error::success();
}

Error Reader::tensorLists(std::vector<uint32_t> &In, std::vector<uint32_t> &Out) {
  int64_t MaxT = int64_t(P.Tensors.size()) - 1;
  if (Error E = keyword("in"))
    return E;
  Expected<std::vector<int64_t>> Ins = list("input tensors", 0, MaxT);
  if (!Ins)
    return Ins.takeError();
  if (Error E = keyword("out"))
    return E;
  Expected<std::vector<int64_t>> Outs = list("output tensors", 0, MaxT);
  if (!Outs)
    return Outs.takeError();
  In.assign(Ins->begin(), Ins->end());
  Out.assign(Outs->begin(), Outs->end());
  return Error::success();
}

Error Reader::compute() {
  Expected<int64_t> I = integer("the compute number", 0, INT32_MAX);
  if (!I)
    return I.takeError();
  if (*I != int64_t(P.Computes.size()))
    return err("compute " + Twine(*I) + " out of sequence; expected compute " +
               Twine(P.Computes.size()));
  Compute C;
  Expected<std::string> N = sigilName('@', "the compute name");
  if (!N)
    return N.takeError();
  C.Name = *N;
  if (Error E = keyword("stream"))
    return E;
  Expected<int64_t> S = integer("stream", 0, 1023);
  if (!S)
    return S.takeError();
  C.Stream = *S;
  if (Error E = keyword("cost"))
    return E;
  Expected<int64_t> Cost = integer("cost in ns", 0, INT64_MAX);
  if (!Cost)
    return Cost.takeError();
  C.CostNs = *Cost;
  if (Error E = ranks(C.Ranks))
    return E;
  if (Error E = tensorLists(C.Inputs, C.Outputs))
    return E;
  P.Computes.push_back(std::move(C));
  LastEntity = Last::Compute;
  return endOfLine();
}

Error Reader::comm() {
  Expected<int64_t> I = integer("the comm number", 0, INT32_MAX);
  if (!I)
    return I.takeError();
  if (*I != int64_t(P.Comms.size()))
    return err("comm " + Twine(*I) + " out of sequence; expected comm " + Twine(P.Comms.size()));
  Comm C;
  Expected<StringRef> K = word("a communication kind");
  if (!K)
    return K.takeError();
  Optional<CommKind> Kind = parseCommKind(*K);
  if (!Kind)
    return err("unknown communication kind '" + *K + "'");
  C.Kind = *Kind;
  if (hasReduceOp(C.Kind)) {
    Expected<StringRef> R = word("a reduce op");
    if (!R)
      return R.takeError();
    Optional<ReduceOp> Op = parseReduceOp(*R);
    if (!Op)
      return err("unknown reduce op '" + *R + "'");
    C.Reduce = *Op;
    if (takesScale(C.Reduce)) {
      if (Error E = keyword("scale"))
        return E;
      Expected<StringRef> S = word("the scale");
      if (!S)
        return S.takeError();
      if (S->getAsDouble(C.Scale))
        return err("bad scale '" + *S + "'");
    }
  }
  Expected<StringRef> Elem = word("an element type");
  if (!Elem)
    return Elem.takeError();
  Optional<ElemType> ET = parseElemType(*Elem);
  if (!ET)
    return err("unknown element type '" + *Elem + "'");
  C.Elem = *ET;
  if (consumeKeyword("group")) {
    Expected<std::string> G = sigilName('@', "the group name");
    if (!G)
      return G.takeError();
    auto It = GroupIndex.find(*G);
    if (It == GroupIndex.end())
      return err("comm uses undefined group @" + *G);
    C.Group = It->second;
  }
  if (Error E = ranks(C.Ranks))
    return E;
  // `fenced` is read as written, `async` or not: the validator refuses a
  // fenced blocking comm, naming it, rather than a word out of place here.
  C.Async = consumeKeyword("async");
  C.Fenced = consumeKeyword("fenced");
  if (Error E = tensorLists(C.Inputs, C.Outputs))
    return E;
  int64_t MaxB = int64_t(P.Buffers.size()) - 1;
  if (Error E = keyword("inbuf"))
    return E;
  Expected<int64_t> IB = integer("input buffer", -1, MaxB);
  if (!IB)
    return IB.takeError();
  if (Error E = keyword("outbuf"))
    return E;
  Expected<int64_t> OB = integer("output buffer", -1, MaxB);
  if (!OB)
    return OB.takeError();
  C.InBuffer = *IB;
  C.OutBuffer = *OB;
  StringRef PK = peek();
  if (PK == "peer" || PK == "root") {
    ++Pos;
    Expected<int64_t> V = integer(PK, 0, P.World - 1);
    if (!V)
      return V.takeError();
    C.Peers.assign(P.World, -1);
    for (int64_t R = 0; R != P.World; ++R)
      if (C.Ranks.contains(R))
        C.Peers[R] = *V;
  } else if (PK == "peers" || PK == "roots") {
    ++Pos;
    Expected<std::vector<int64_t>> V = list(PK, -1, P.World - 1);
    if (!V)
      return V.takeError();
    if (int64_t(V->size()) != P.World)
      return err(PK + " lists " + Twine(V->size()) +
                 " ranks; expected one per rank of the "
                 "world (" +
                 Twine(P.World) + ")");
    C.Peers.assign(V->begin(), V->end());
  }
  if (consumeKeyword("counts")) {
    Expected<int64_t> T = integer("counts tensor", 0, int64_t(P.Tensors.size()) - 1);
    if (!T)
      return T.takeError();
    C.Counts = *T;
  } else if (consumeKeyword("splits")) {
    Expected<std::vector<int64_t>> S = list("split sizes", 0, INT64_MAX);
    if (!S)
      return S.takeError();
    C.Splits = std::move(*S);
  }
  if (consumeKeyword("bucket")) {
    Expected<int64_t> B = integer("bucket", 0, INT32_MAX);
    if (!B)
      return B.takeError();
    C.Bucket = *B;
  }
  if (consumeKeyword("batch")) {
    Expected<int64_t> B = integer("p2p batch", 0, INT32_MAX);
    if (!B)
      return B.takeError();
    C.Batch = *B;
  }
  P.Comms.push_back(std::move(C));
  LastEntity = Last::Comm;
  return endOfLine();
}

Error Reader::step() {
  Expected<StringRef> K = word("a step kind (compute, launch, wait)");
  if (!K)
    return K.takeError();
  Step S;
  if (*K == "compute")
    S.Kind = StepKind::Compute;
  else if (*K == "launch")
    S.Kind = StepKind::Launch;
  else if (*K == "wait")
    S.Kind = StepKind::Wait;
  else
    return err("unknown step kind '" + *K + "'; expected compute, launch or wait");
  int64_t Max =
      S.Kind == StepKind::Compute ? int64_t(P.Computes.size()) - 1 : int64_t(P.Comms.size()) - 1;
  Expected<int64_t> I = integer(S.Kind == StepKind::Compute ? "compute" : "comm", 0, Max);
  if (!I)
    return I.takeError();
  S.Index = *I;
  P.Steps.push_back(S);
  return endOfLine();
}

Error Reader::checkReferences() {
  for (size_t I = 0; I != P.Comms.size(); ++I) {
    const Comm &C = P.Comms[I];
    if (isCollective(C.Kind) && C.Group < 0)
      return createStringError(inconvertibleErrorCode(), "%s: comm %zu (%s) has no group",
                               Name.str().c_str(), I, commKindName(C.Kind).str().c_str());
    if ((!isCollective(C.Kind) || hasRoot(C.Kind)) && int64_t(C.Peers.size()) != P.World)
      return createStringError(inconvertibleErrorCode(), "%s: comm %zu (%s) has no %s",
                               Name.str().c_str(), I, commKindName(C.Kind).str().c_str(),
                               hasRoot(C.Kind) ? (const char *)"root" : (const char *)"peer");
  }
  return Error::success();
}

Expected<Plan> Reader::run() {
  Rest = Text;
  if (Error E = header())
    return E;
  while (true) {
    if (!nextLine())
      return createStringError(inconvertibleErrorCode(),
                               "%s: plan is truncated: it ends at line %u without its digest "
                               "and 'end' lines",
                               Name.str().c_str(), LineNo);
    StringRef K = Words[Pos++];
    Error E = Error::success();
    if (K == "note") {
      Expected<std::string> N = quoted();
      if (!N)
        return N.takeError();
      P.Notes.push_back(*N);
      E = endOfLine();
    } else if (K == "group") {
      E = group();
    } else if (K == "tensor") {
      E = tensor();
    } else if (K == "buffer") {
      E = buffer();
    } else if (K == "slot") {
      E = slot();
    } else if (K == "compute") {
      E = compute();
    } else if (K == "comm") {
      E = comm();
    } else if (K == "source") {
      Expected<std::string> S = quoted();
      if (!S)
        return S.takeError();
      P.Source = *S;
      E = endOfLine();
    } else if (K == "loc") {
      if (LastEntity != Last::Comm && LastEntity != Last::Compute)
        return err("'loc' must follow a compute or comm line");
      Expected<StringRef> S = word("a location line:col");
      if (!S)
        return S.takeError();
      (LastEntity == Last::Comm ? P.Comms.back().Loc : P.Computes.back().Loc) = S->str();
      E = endOfLine();
    } else if (K == "why") {
      if (LastEntity != Last::Comm)
        return err("'why' must follow a comm line");
      Expected<std::string> S = quoted();
      if (!S)
        return S.takeError();
      P.Comms.back().Why.push_back(*S);
      E = endOfLine();
    } else if (K == "step") {
      E = step();
    } else if (K == "digest") {
      StringRef Above(Text.data(), LineStart - Text.data());
      Expected<StringRef> D = word("the digest");
      if (!D)
        return D.takeError();
      std::string Want = digestOfText(Above);
      if (*D != Want)
        return err("digest mismatch: the digest " + *D +
                   " does not match the plan's content; the file was edited or corrupted, and an "
                   "edited plan must be recompiled from its program (collc compile)");
      P.Digest = D->str();
      if (Error EE = endOfLine())
        return EE;
      if (!nextLine() || Words.size() != 1 || Words[0] != "end")
        return createStringError(inconvertibleErrorCode(),
                                 "%s: plan is truncated: expected 'end' after the digest",
                                 Name.str().c_str());
      if (nextLine())
        return err("unexpected '" + Words[0] + "' after 'end'");
      break;
    } else if (K == "end") {
      return err("'end' before the digest line: the plan is incomplete");
    } else {
      return err("unknown line '" + K + "'");
    }
    if (E)
      return E;
  }
  if (Error E = checkReferences())
    return E;
  P.finalize();
  return std::move(P);
}

} // namespace

Expected<Plan> readPlan(StringRef Text, StringRef Name) {
  Expected<Plan> P = Reader(Text, Name).run();
  if (!P)
    return P.takeError();
  // A digest is no seal: everything the file says is checked before use.
  if (Error E = validatePlan(*P, Name))
    return E;
  return P;
}

Expected<Plan> readPlanFile(StringRef Path) {
  Expected<std::unique_ptr<MemoryBuffer>> Buf = readInputFile(Path, "plan");
  if (!Buf)
    return Buf.takeError();
  return readPlan((*Buf)->getBuffer(), Path);
}

} // namespace collc::plan
