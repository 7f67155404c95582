//===- runtime/nccl/NcclListing.cpp - One rank's CUDA/NCCL calls as text ---===//

#include "runtime/nccl/NcclListing.h"

#include "runtime/exec/PremulFactor.h"
#include "runtime/nccl/PackShape.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

namespace {

class Printer {
public:
  Printer(const plan::Plan &P, const NcclRankPlan &L, raw_ostream &OS) : P(P), L(L), OS(OS) {}

  void print() {
    OS << formatv("# NCCL calls of rank {0} of {1} for @{2} (plan {3})\n", L.Rank, P.World,
                  P.Program, P.Digest.empty() ? "without digest" : P.Digest);
    OS << "# comm: this rank's comm stream; ready[@c]: recorded by the model after compute @c;\n"
          "# done[#k]: recorded when comm #k is complete, waited on by the model before using "
          "its results\n";
    section("setup, once, eager", L.Setup, false);
    OS << formatv("\nwarm-up, once, eager: the captured work run as is ({0} NCCL calls), so "
                  "every communicator, op and peer is connected before capture\n",
                  ncclCallCount(L.WarmUp));
    section("capture, once", L.Capture, true);
    section("every step", L.Step, false);
  }

private:
  static unsigned ncclCallCount(const std::vector<Call> &Calls) {
    unsigned N = 0;
    for (const Call &C : Calls)
      N += C.Kind >= CallKind::AllReduce && C.Kind <= CallKind::Recv;
    return N;
  }

  void section(StringRef Title, const std::vector<Call> &Calls, bool Captured) {
    OS << '\n' << Title << ":\n";
    int64_t LastComm = -1;
    bool InGroup = false;
    for (const Call &C : Calls) {
      bool Stream = C.Kind >= CallKind::WaitReady && C.Kind <= CallKind::CountsToHost;
      if (Stream && C.Kind != CallKind::GroupStart && C.Kind != CallKind::GroupEnd &&
          C.Kind != CallKind::RecordDone &&
          int64_t(C.PlanComm) != LastComm && (C.Kind != CallKind::WaitReady || !InGroup)) {
        const plan::Comm &PC = P.Comms[C.PlanComm];
        OS << formatv("  # comm #{0}: {1}{2}{3}\n", C.PlanComm, commKindName(PC.Kind),
                      PC.Group >= 0 ? " in @" + P.Groups[PC.Group].Name : std::string(),
                      jointNote(PC));
        LastComm = C.PlanComm;
      }
      if (C.Kind == CallKind::GroupStart)
        InGroup = true;
      if (C.Kind == CallKind::GroupEnd)
        InGroup = false;
      OS << "  " << text(C, Captured);
      if (!C.Note.empty())
        OS << "  # " << C.Note;
      OS << '\n';
      if (C.Kind == CallKind::GroupEnd || C.Kind == CallKind::EndCapture)
        LastComm = -1;
    }
  }

  /// Which side of a joint comm this rank issues, and with what: the
  /// other ranks issue the same collective with tensors of their own.
  std::string jointNote(const plan::Comm &C) const {
    if (!C.isJoint())
      return "";
    size_t K = 0;
    while (K != C.numSides() && !C.side(K).Ranks.contains(L.Rank))
      ++K;
    std::string Others;
    for (size_t J = 0; J != C.numSides(); ++J)
      if (J != K)
        Others += formatv("{0}ranks {1}", Others.empty() ? "" : "; ", C.side(J).Ranks.str()).str();
    return formatv(" (joint: this rank issues side {0} of {1}; the same collective on {2})", K,
                   C.numSides(), Others)
        .str();
  }

  std::string ref(const Ref &R) const {
    std::string Base;
    if (R.Buffer == int32_t(P.Buffers.size()))
      Base = "scratch";
    else if (R.Buffer == int32_t(P.Buffers.size()) + 1)
      Base = "counts";
    else if (R.Buffer >= 0)
      Base = formatv("buf{0}", R.Buffer).str();
    else
      Base = R.Tensor >= 0 ? "%" + P.Tensors[R.Tensor].Name : "nullptr";
    if (R.Offset)
      Base += formatv("+{0}", R.Offset).str();
    return Base;
  }

  std::string op(const Call &C) const {
    if (C.PreMulSum >= 0)
      return formatv("premul{0}", C.PreMulSum).str();
    return ncclOpName(C.Op).str();
  }

  std::string comm(int32_t K) const { return formatv("c{0}", K).str(); }

  std::string copies(const Call &C) const {
    uint64_t Bytes = 0;
    for (const CopySegment &S : C.Copies)
      Bytes += S.Bytes;
    std::string Text = formatv("{0} copies, {1} B:", C.Copies.size(), Bytes).str();
    for (size_t I = 0; I != C.Copies.size() && I != 4; ++I)
      Text += formatv(" {0} <- {1} ({2} B);", ref(C.Copies[I].Dst), ref(C.Copies[I].Src),
                      C.Copies[I].Bytes)
                  .str();
    if (C.Copies.size() > 4)
      Text += formatv(" ... {0} more", C.Copies.size() - 4).str();
    return Text;
  }

  /// A call as issued; \p Captured: inside a capture, where events cross
  /// the graph's boundary (external waits and records).
  std::string text(const Call &C, bool Captured) const {
    switch (C.Kind) {
    case CallKind::SetDevice:
      return "cudaSetDevice(device of this rank)";
    case CallKind::CreateStream:
      return "cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking, greatest priority)";
    case CallKind::CommInit:
      return formatv("ncclCommInitRankConfig(&root, {0}, id(\"{1}\"), {2}, &{{.blocking = 0})  # "
                     "{3}",
                     L.Root.Size, L.Root.Key, L.Root.Rank, L.Root.Label);
    case CallKind::CommSplit: {
      std::string Config = "&{.blocking = 1, .splitShare = 1}";
      if (C.Comm < 0)
        return formatv("ncclCommSplit(root, NCCL_SPLIT_NOCOLOR, {0}, &none, {1})  # @{2}: no "
                       "subgroup of it holds this rank",
                       L.Rank, Config, P.Groups[C.SplitGroup].Name);
      const CommDesc &D = L.Comms[C.Comm];
      return formatv("ncclCommSplit(root, {0}, {1}, &{2}, {3})  # {4}", D.Color, D.Rank,
                     comm(C.Comm), Config, D.Label);
    }
    case CallKind::CreatePreMulSum: {
      // The factor as NCCL reads it, a value of the element type.
      const PreMulSumDesc &D = L.PreMulSums[C.PreMulSum];
      double Value = premulFactorValue(D.Elem, D.Scale);
      std::string Rounded =
          Value == D.Scale ? std::string()
                           : formatv("  # {0} rounded to {1}", formatExactDouble(D.Scale),
                                     elemTypeName(D.Elem))
                                 .str();
      return formatv("ncclRedOpCreatePreMulSum(&premul{0}, &{1}, {2}, ncclScalarHostImmediate, "
                     "{3}){4}",
                     C.PreMulSum, formatExactDouble(Value), ncclTypeName(D.Elem), comm(D.Comm),
                     Rounded);
    }
    case CallKind::Malloc:
      return formatv("cudaMalloc(&{0}, {1})", ref({C.Buffer, -1, 0}), C.Bytes);
    case CallKind::CreateEvents:
      return formatv("cudaEventCreateWithFlags(..., cudaEventDisableTiming) x{0}  # {1} ready, "
                     "{2} done",
                     L.ReadyEvents + L.DoneEvents, L.ReadyEvents, L.DoneEvents);
    case CallKind::WaitReady:
      return formatv("cudaStreamWaitEvent(comm, ready[@{0}], {1})", P.Computes[C.Compute].Name,
                     Captured ? "cudaEventWaitExternal" : "0");
    case CallKind::Pack:
      return formatv("collc_pack<<<grid, {0}, 0, comm>>>(buf{1}, {2})", kPackThreadsPerBlock,
                     C.Buffer, copies(C));
    case CallKind::Unpack:
      return formatv("collc_unpack<<<grid, {0}, 0, comm>>>(buf{1}, {2})", kPackThreadsPerBlock,
                     C.Buffer, copies(C));
    case CallKind::GroupStart:
      return "ncclGroupStart()";
    case CallKind::GroupEnd:
      return "ncclGroupEnd()";
    case CallKind::AllReduce:
      return formatv("ncclAllReduce({0}, {1}, {2}, {3}, {4}, {5}, comm)", ref(C.SendBuf),
                     ref(C.RecvBuf), C.Count, ncclTypeName(C.Elem), op(C), comm(C.Comm));
    case CallKind::ReduceScatter:
      return formatv("ncclReduceScatter({0}, {1}, {2}, {3}, {4}, {5}, comm)", ref(C.SendBuf),
                     ref(C.RecvBuf), C.Count, ncclTypeName(C.Elem), op(C), comm(C.Comm));
    case CallKind::AllGather:
      return formatv("ncclAllGather({0}, {1}, {2}, {3}, {4}, comm)", ref(C.SendBuf),
                     ref(C.RecvBuf), C.Count, ncclTypeName(C.Elem), comm(C.Comm));
    case CallKind::Broadcast:
      return formatv("ncclBroadcast({0}, {1}, {2}, {3}, {4}, {5}, comm)", ref(C.SendBuf),
                     ref(C.RecvBuf), C.Count, ncclTypeName(C.Elem), C.Peer, comm(C.Comm));
    case CallKind::AllToAll:
      return formatv("ncclAlltoAll({0}, {1}, {2}, {3}, {4}, comm)", ref(C.SendBuf),
                     ref(C.RecvBuf), C.Count, ncclTypeName(C.Elem), comm(C.Comm));
    case CallKind::Send:
      return formatv("ncclSend({0}, {1}, {2}, {3}, {4}, comm)", ref(C.SendBuf),
                     C.CountAtRunTime ? std::string("n") : std::to_string(C.Count), ncclTypeName(C.Elem),
                     C.Peer, comm(C.Comm));
    case CallKind::Recv:
      return formatv("ncclRecv({0}, {1}, {2}, {3}, {4}, comm)", ref(C.RecvBuf),
                     C.CountAtRunTime ? std::string("n") : std::to_string(C.Count), ncclTypeName(C.Elem),
                     C.Peer, comm(C.Comm));
    case CallKind::RecordDone:
      return formatv("cudaEventRecordWithFlags(done[#{0}], comm, {1})", C.PlanComm,
                     Captured ? "cudaEventRecordExternal" : "cudaEventRecordDefault");
    case CallKind::CountsToHost:
      return formatv("ncclAllGather(%{0}, counts, {1}, {2}, {3}, comm); cudaMemcpyAsync(host, "
                     "counts, D2H, comm); cudaStreamSynchronize(comm)",
                     P.Tensors[C.Tensor].Name, C.Count,
                     ncclTypeName(P.Tensors[C.Tensor].Type.Elem), comm(C.Comm));
    case CallKind::StreamSync:
      return "cudaStreamSynchronize(comm)";
    case CallKind::BeginCapture:
      return "cudaStreamBeginCapture(comm, cudaStreamCaptureModeThreadLocal)";
    case CallKind::EndCapture:
      return formatv("cudaStreamEndCapture(comm, &graph{0})", C.Graph);
    case CallKind::Instantiate:
      return formatv("cudaGraphInstantiate(&exec{0}, graph{0}, 0)", C.Graph);
    case CallKind::GraphLaunch:
      return formatv("cudaGraphLaunch(exec{0}, comm)", C.Graph);
    }
    return "?";
  }

  const plan::Plan &P;
  const NcclRankPlan &L;
  raw_ostream &OS;
};

} // namespace

void printRankPlan(const plan::Plan &P, const NcclRankPlan &L, raw_ostream &OS) {
  Printer(P, L, OS).print();
}

} // namespace collc::rt::nccl
