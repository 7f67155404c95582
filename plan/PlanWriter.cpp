//===- plan/PlanWriter.cpp - Plan to text -------------------------===//
//
// One line per entity, in a fixed order; see docs/plan.md. The digest hashes
// the text without its note, why and loc lines (the explanations), so it is
// computed from the written text itself and can never drift from the format.
//
//===----------------------------------------------------------------------===//

#include "plan/Plan.h"
#include "plan/PlanDigest.h"
#include "ir/Quoting.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace collc::plan {

namespace {

/// Lists and types are single space-free words: [0,1,2], f32[768,3072].
template <typename T> void writeList(raw_ostream &OS, ArrayRef<T> Xs) {
  OS << '[';
  for (size_t I = 0; I != Xs.size(); ++I)
    OS << (I ? "," : "") << Xs[I];
  OS << ']';
}

void writeType(raw_ostream &OS, const TensorType &T) {
  OS << elemTypeName(T.Elem);
  writeList(OS, ArrayRef<int64_t>(T.Shape));
}

/// Per-rank values: one number when every running rank has the same one.
void writePeers(raw_ostream &OS, StringRef One, StringRef Many, ArrayRef<int32_t> Peers) {
  int32_t Uniform = -2;
  for (int32_t V : Peers) {
    if (V < 0)
      continue;
    if (Uniform == -2)
      Uniform = V;
    else if (Uniform != V)
      Uniform = -3;
  }
  if (Uniform >= 0) {
    OS << ' ' << One << ' ' << Uniform;
    return;
  }
  OS << ' ' << Many << ' ';
  writeList(OS, Peers);
}

/// Forwards everything to another stream and hashes all of it except the
/// explanation lines the writer brackets with pause()/resume(), so the plan
/// is written once, straight to its destination.
class DigestingStream : public raw_ostream {
public:
  explicit DigestingStream(raw_ostream &Out) : Out(Out) { SetBufferSize(1 << 16); }
  ~DigestingStream() override { flush(); }
  void pause() {
    flush();
    Paused = true;
  }
  void resume() {
    flush();
    Paused = false;
  }
  std::string digest() {
    flush();
    return Hash.final();
  }

private:
  void write_impl(const char *Ptr, size_t Size) override {
    Out.write(Ptr, Size);
    if (!Paused)
      Hash.update(StringRef(Ptr, Size));
    Pos += Size;
  }
  uint64_t current_pos() const override { return Pos; }

  raw_ostream &Out;
  PlanDigester Hash;
  bool Paused = false;
  uint64_t Pos = 0;
};

void writeBody(const Plan &P, DigestingStream &OS) {
  OS << "collc-plan " << P.Version << '\n';
  OS << "program @" << P.Program << " world " << P.World << " align " << P.Alignment << '\n';
  if (!P.Source.empty()) {
    OS.pause();
    OS << "source ";
    writeQuoted(OS, P.Source);
    OS << '\n';
    OS.resume();
  }
  for (const std::string &N : P.Notes) {
    OS.pause();
    OS << "note ";
    writeQuoted(OS, N);
    OS << '\n';
    OS.resume();
  }
  for (const Group &G : P.Groups) {
    OS << "group @" << G.Name;
    for (const auto &S : G.Subgroups) {
      OS << ' ';
      writeList(OS, ArrayRef<int32_t>(S));
    }
    OS << '\n';
  }
  for (size_t I = 0; I != P.Tensors.size(); ++I) {
    OS << "tensor " << I << " %" << P.Tensors[I].Name << ' ';
    writeType(OS, P.Tensors[I].Type);
    OS << '\n';
  }
  for (size_t I = 0; I != P.Buffers.size(); ++I) {
    const Buffer &B = P.Buffers[I];
    OS << "buffer " << I << " bytes " << B.Bytes << " segments " << B.Segments << '\n';
    for (const Slot &S : B.Slots)
      OS << "  slot " << S.Tensor << " offset " << S.Offset << " bytes " << S.Bytes << ' '
         << slotModeName(S.Mode) << '\n';
  }
  for (size_t I = 0; I != P.Computes.size(); ++I) {
    const Compute &C = P.Computes[I];
    OS << "compute " << I << " @" << C.Name << " stream " << C.Stream << " cost " << C.CostNs
       << " ranks " << C.Ranks.str() << " in ";
    writeList(OS, ArrayRef<uint32_t>(C.Inputs));
    OS << " out ";
    writeList(OS, ArrayRef<uint32_t>(C.Outputs));
    OS << '\n';
    if (!C.Loc.empty()) {
      OS.pause();
      OS << "  loc " << C.Loc << '\n';
      OS.resume();
    }
  }
  for (size_t I = 0; I != P.Comms.size(); ++I) {
    const Comm &C = P.Comms[I];
    OS << "comm " << I << ' ' << commKindName(C.Kind);
    if (hasReduceOp(C.Kind)) {
      OS << ' ' << reduceOpName(C.Reduce);
      if (takesScale(C.Reduce))
        OS << " scale " << formatExactDouble(C.Scale);
    }
    OS << ' ' << elemTypeName(C.Elem);
    if (C.Group >= 0)
      OS << " group @" << P.Groups[C.Group].Name;
    OS << " ranks " << C.Ranks.str();
    if (C.Async)
      OS << " async";
    if (C.Fenced)
      OS << " fenced";
    OS << " in ";
    writeList(OS, ArrayRef<uint32_t>(C.Inputs));
    OS << " out ";
    writeList(OS, ArrayRef<uint32_t>(C.Outputs));
    OS << " inbuf " << C.InBuffer << " outbuf " << C.OutBuffer;
    if (!C.Peers.empty())
      writePeers(OS, hasRoot(C.Kind) ? "root" : "peer", hasRoot(C.Kind) ? "roots" : "peers",
                 C.Peers);
    if (takesSplits(C.Kind)) {
      if (C.Counts >= 0) {
        OS << " counts " << C.Counts;
      } else {
        OS << " splits ";
        writeList(OS, ArrayRef<int64_t>(C.Splits));
      }
    }
    if (C.Bucket >= 0)
      OS << " bucket " << C.Bucket;
    if (C.Batch >= 0)
      OS << " batch " << C.Batch;
    OS << '\n';
    if (C.Why.empty() && C.Loc.empty())
      continue;
    OS.pause();
    for (const std::string &W : C.Why) {
      OS << "  why ";
      writeQuoted(OS, W);
      OS << '\n';
    }
    if (!C.Loc.empty())
      OS << "  loc " << C.Loc << '\n';
    OS.resume();
  }
  for (const Step &S : P.Steps)
    OS << "step " << stepKindName(S.Kind) << ' ' << S.Index << '\n';
}

} // namespace

/// Whether a line of the text form is outside the digest.
static bool isExplanation(StringRef Line) {
  StringRef T = Line.ltrim(' ');
  return T.startswith("note ") || T.startswith("why ") || T.startswith("loc ") ||
         T.startswith("source ");
}

std::string digestOfText(StringRef Text) {
  PlanDigester Hash;
  while (!Text.empty()) {
    size_t End = Text.find('\n');
    StringRef Line = Text.take_front(End == StringRef::npos ? Text.size() : End + 1);
    Text = Text.drop_front(Line.size());
    if (!isExplanation(Line))
      Hash.update(Line);
  }
  return Hash.final();
}

std::string computeDigest(const Plan &P) {
  raw_null_ostream Null;
  DigestingStream OS(Null);
  writeBody(P, OS);
  return OS.digest();
}

std::string writePlan(const Plan &P, raw_ostream &Out) {
  std::string Digest;
  {
    DigestingStream OS(Out);
    writeBody(P, OS);
    Digest = OS.digest();
  }
  Out << "digest " << Digest << "\nend\n";
  return Digest;
}

std::string writePlan(const Plan &P) {
  std::string S;
  raw_string_ostream OS(S);
  writePlan(P, OS);
  return S;
}

} // namespace collc::plan
