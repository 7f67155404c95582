//===- runtime/nccl/NcclCallIssuer.cpp - One lowered call on the comm stream ===//

#include "runtime/nccl/NcclCallIssuer.h"

#include "runtime/exec/SplitSizes.h"
#include "runtime/nccl/CommStreamWait.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclDriver.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

NcclCallIssuer::~NcclCallIssuer() { freeTiles(); }

namespace {

/// A call that may wait on the host for a peer when it is not captured: an
/// NCCL call, or the group end that launches a group of them.
bool mayWaitForAPeer(CallKind K) {
  return K == CallKind::GroupEnd || K == CallKind::CountsToHost ||
         (K >= CallKind::AllReduce && K <= CallKind::Recv);
}

} // namespace

Error NcclCallIssuer::issue(const Call &C, IssueMode M) {
  if (M != IssueMode::Eager || !Dog || !mayWaitForAPeer(C.Kind))
    return issueNow(C, M);
  auto What = [this, &C] {
    return C.Kind == CallKind::GroupEnd
               ? formatv("rank {0}'s ncclGroupEnd ({1})", R.Rank, Phase).str()
               : formatv("rank {0}'s NCCL call of comm #{1} ({2})", R.Rank, C.PlanComm, Phase)
                     .str();
  };
  return Dog->watch(What, R.Opts.Timeout, [&] { return issueNow(C, M); });
}

Error NcclCallIssuer::issueNow(const Call &C, IssueMode M) {
  const plan::Plan &P = R.P;
  cudaStream_t S = R.Stream;
  switch (C.Kind) {
  case CallKind::WaitReady:
    return checkCuda(cudaStreamWaitEvent(S, R.Ready[C.Compute],
                                         M == IssueMode::OwnCapture ? cudaEventWaitExternal : 0),
                     formatv("cudaStreamWaitEvent on ready[@{0}]", P.Computes[C.Compute].Name));
  case CallKind::RecordDone:
    return checkCuda(cudaEventRecordWithFlags(R.Done[C.PlanComm], S,
                                              M == IssueMode::OwnCapture ? cudaEventRecordExternal
                                                                         : cudaEventRecordDefault),
                     formatv("cudaEventRecordWithFlags on done[#{0}]", C.PlanComm));
  case CallKind::Pack:
  case CallKind::Unpack: {
    const DeviceTiles &T = Tiles[{int(C.Kind), C.PlanComm}];
    return checkCuda(launchCopyTiles(T.Tiles, T.Count, R.SMs, S),
                     formatv("{0} kernel of comm #{1}",
                             C.Kind == CallKind::Pack ? "pack" : "unpack", C.PlanComm));
  }
  case CallKind::GroupStart:
    return checkNccl(ncclGroupStart(), "ncclGroupStart");
  case CallKind::GroupEnd: {
    ncclResult_t Result = ncclGroupEnd();
    if (Error E = checkNccl(Result, "ncclGroupEnd (" + Phase + ")"))
      return E;
    if (Result == ncclInProgress)
      return waitReady(R.rawComms(), R.Opts.Timeout, "ncclGroupEnd (" + Phase + ")");
    return Error::success();
  }
  case CallKind::AllReduce:
    return ncclDone(ncclAllReduce(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                  ncclTypeOf(C.Elem), opOf(C), comm(C), S),
                    C, "ncclAllReduce");
  case CallKind::ReduceScatter:
    return ncclDone(ncclReduceScatter(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                      ncclTypeOf(C.Elem), opOf(C), comm(C), S),
                    C, "ncclReduceScatter");
  case CallKind::AllGather:
    return ncclDone(ncclAllGather(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                  ncclTypeOf(C.Elem), comm(C), S),
                    C, "ncclAllGather");
  case CallKind::Broadcast:
    return ncclDone(ncclBroadcast(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                  ncclTypeOf(C.Elem), int(C.Peer), comm(C), S),
                    C, "ncclBroadcast");
  case CallKind::AllToAll:
    return ncclDone(ncclAllToAllAnyVersion(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                           ncclTypeOf(C.Elem), int(R.L.Comms[C.Comm].Size), comm(C),
                                           S),
                    C, "ncclAlltoAll");
  case CallKind::Send:
  case CallKind::Recv:
    return sendRecv(C);
  case CallKind::CountsToHost:
    return exchangeCounts(C);
  case CallKind::StreamSync:
    return waitForStream(S, R.memberships(), formatv("rank {0}, {1}", R.Rank, Phase).str(),
                         std::nullopt, Abort);
  default:
    return makeError(ErrorKind::InvalidArgument,
                     formatv("call kind {0} cannot be issued on the comm stream", int(C.Kind)));
  }
}

ncclRedOp_t NcclCallIssuer::opOf(const Call &C) const {
  return C.PreMulSum >= 0 ? R.PreMulOps[C.PreMulSum] : ncclOpOf(C.Op);
}

char *NcclCallIssuer::resolve(const Ref &Ref) const {
  if (Ref.Buffer >= 0) {
    char *B = R.buffer(Ref.Buffer);
    return B ? B + Ref.Offset : nullptr;
  }
  if (Ref.Tensor >= 0)
    return Bindings.home(Ref.Tensor) ? Bindings.home(Ref.Tensor) + Ref.Offset : nullptr;
  return nullptr;
}

Error NcclCallIssuer::ncclDone(ncclResult_t Result, const Call &C, const char *Name) {
  NcclMembership &M = *R.Comms[C.Comm];
  auto What = [&] {
    return formatv("{0} of comm #{1} ({2}) on {3}, {4}", Name, C.PlanComm,
                   commKindName(R.P.Comms[C.PlanComm].Kind), M.name(), Phase)
        .str();
  };
  if (Result != ncclSuccess)
    if (Error E = checkNccl(Result, What()))
      return E;
  M.LastOp = What();
  ++M.Issued;
  if (Result == ncclInProgress)
    return waitReady({M.comm()}, R.Opts.Timeout, What());
  return Error::success();
}

Error NcclCallIssuer::sendRecv(const Call &C) {
  bool IsSend = C.Kind == CallKind::Send;
  char *Ptr = resolve(IsSend ? C.SendBuf : C.RecvBuf);
  uint64_t Count = C.Count;
  if (C.CountAtRunTime) {
    // Runtime all_to_all_v: rows from the counts exchanged just before.
    RuntimeSlice Slice = runtimeSlice(C, IsSend ? SendRows : RecvRows);
    Count = Slice.Count;
    Ptr += Slice.Offset;
    if (Count == 0)
      return Error::success(); // both sides know it is zero
  }
  if (IsSend)
    return ncclDone(ncclSend(Ptr, Count, ncclTypeOf(C.Elem), int(C.Peer), comm(C), R.Stream), C,
                    "ncclSend");
  return ncclDone(ncclRecv(Ptr, Count, ncclTypeOf(C.Elem), int(C.Peer), comm(C), R.Stream), C,
                  "ncclRecv");
}

Error NcclCallIssuer::exchangeCounts(const Call &C) {
  const plan::Plan &P = R.P;
  const plan::Comm &PC = P.Comms[C.PlanComm];
  const plan::Tensor &CountsT = P.Tensors[C.Tensor];
  int64_t N = R.L.Comms[C.Comm].Size;
  unsigned Size = elemTypeBytes(CountsT.Type.Elem);
  char *Gathered = R.buffer(int32_t(P.Buffers.size()) + 1);
  if (Error E = ncclDone(ncclAllGather(Bindings.home(C.Tensor), Gathered, uint64_t(N),
                                       ncclTypeOf(CountsT.Type.Elem), comm(C), R.Stream),
                         C, "ncclAllGather of split sizes"))
    return E;
  if (Error E = checkCuda(cudaMemcpyAsync(R.HostCounts, Gathered, uint64_t(N * N) * Size,
                                          cudaMemcpyDeviceToHost, R.Stream),
                          "cudaMemcpyAsync of split sizes"))
    return E;
  std::vector<NcclMembership *> Raw{R.Comms[C.Comm].get()};
  if (Error E = waitForStream(R.Stream, Raw,
                              formatv("rank {0}, split sizes of comm #{1}", R.Rank, C.PlanComm),
                              std::nullopt, Abort))
    return E;
  int64_t InRows = P.Tensors[PC.Inputs[0]].Type.Shape[0];
  int64_t OutRows = P.Tensors[PC.Outputs[0]].Type.Shape[0];
  std::vector<int64_t> Matrix;
  for (uint64_t K = 0; K != uint64_t(N * N); ++K) {
    Expected<int64_t> V = readSplitSize(CountsT.Type.Elem, R.HostCounts, K);
    if (!V)
      return V.takeError();
    Matrix.push_back(*V);
  }
  Expected<SplitRows> Rows =
      checkSplitMatrix(C.PlanComm, Matrix, N, R.L.Comms[C.Comm].Rank, InRows, OutRows);
  if (!Rows)
    return Rows.takeError();
  SendRows = std::move(Rows->Send);
  RecvRows = std::move(Rows->Recv);
  return Error::success();
}

void NcclCallIssuer::freeTiles() {
  // In the comm stream's order: a step in flight may still read them.
  for (auto &[Key, T] : Tiles)
    if (T.Tiles)
      cudaFreeAsync(T.Tiles, R.Stream);
  Tiles.clear();
}

Error NcclCallIssuer::uploadTiles() {
  if (Error E = waitForStream(R.Stream, R.memberships(),
                              formatv("rank {0}, rebinding: the steps in flight", R.Rank).str(),
                              std::nullopt, Abort))
    return E;
  freeTiles();
  for (const Call &C : R.L.Capture) {
    if (C.Kind != CallKind::Pack && C.Kind != CallKind::Unpack)
      continue;
    std::vector<CopyTile> List;
    for (const CopySegment &S : C.Copies)
      appendTiles(List, uint64_t(resolve(S.Dst)), uint64_t(resolve(S.Src)), S.Bytes);
    DeviceTiles &D = Tiles[{int(C.Kind), C.PlanComm}];
    D.Count = uint32_t(List.size());
    if (List.empty())
      continue;
    uint64_t Bytes = List.size() * sizeof(CopyTile);
    if (Error E = checkCuda(cudaMallocAsync(reinterpret_cast<void **>(&D.Tiles), Bytes, R.Stream),
                            "cudaMallocAsync of a tile table"))
      return E;
    // Staged by CUDA before it returns (List may go); ordered before every
    // pack and unpack on the stream.
    if (Error E = checkCuda(
            cudaMemcpyAsync(D.Tiles, List.data(), Bytes, cudaMemcpyHostToDevice, R.Stream),
            "cudaMemcpyAsync of a tile table"))
      return E;
  }
  return Error::success();
}

} // namespace collc::rt::nccl
