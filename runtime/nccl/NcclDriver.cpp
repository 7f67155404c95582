//===- runtime/nccl/NcclDriver.cpp - The driver layer over NCCL -----------===//

#include "runtime/nccl/NcclDriver.h"

#include "runtime/nccl/CommStreamWait.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclVersion.h"
#include "runtime/nccl/UniqueIdExchange.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <dlfcn.h>

using namespace llvm;

namespace collc::rt::nccl {

static unsigned typeBytesOf(ncclDataType_t T) {
  switch (T) {
  case ncclInt8:
  case ncclUint8:
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
  case ncclFloat8e4m3:
  case ncclFloat8e5m2:
#endif
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  default:
    return 8;
  }
}

ncclResult_t ncclAllToAllAnyVersion(const void *Send, void *Recv, size_t Count,
                                    ncclDataType_t Type, int Ranks, ncclComm_t Comm,
                                    cudaStream_t S) {
  using AllToAllFn = ncclResult_t (*)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                                      cudaStream_t);
  static AllToAllFn Native = reinterpret_cast<AllToAllFn>(dlsym(RTLD_DEFAULT, "ncclAlltoAll"));
  if (Native)
    return Native(Send, Recv, Count, Type, Comm, S);
  // Groups nest: inside the lowering's group this joins it.
  size_t Chunk = Count * typeBytesOf(Type);
  ncclResult_t R = ncclGroupStart();
  for (int P = 0; P != Ranks && (R == ncclSuccess || R == ncclInProgress); ++P) {
    R = ncclSend(static_cast<const char *>(Send) + P * Chunk, Count, Type, P, Comm, S);
    if (R == ncclSuccess || R == ncclInProgress)
      R = ncclRecv(static_cast<char *>(Recv) + P * Chunk, Count, Type, P, Comm, S);
  }
  ncclResult_t End = ncclGroupEnd();
  return R == ncclSuccess || R == ncclInProgress ? End : R;
}

CommStreamOwner::~CommStreamOwner() {
  if (S)
    cudaStreamDestroy(S);
}

// --- types and ops --------------------------------------------------------------

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 24, 0)
// NCCL before 2.24 has no fp8: those types map to no NCCL type, and
// elements() refuses them by name.
constexpr ncclDataType_t ncclFloat8e4m3 = ncclNumTypes, ncclFloat8e5m2 = ncclNumTypes;
#endif

ncclDataType_t ncclTypeOf(ElemType T) {
  switch (T) {
#define COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                        \
  case ElemType::Enum:                                                                             \
    return Nccl;
#include "ir/ElemTypes.def"
  }
  return ncclNumTypes;
}

ncclRedOp_t ncclOpOf(ReduceOp Op) {
  switch (Op) {
#define COLLC_PLAIN_REDUCE(Enum, Spelling, Combine, Mpi, Nccl)                                     \
  case ReduceOp::Enum:                                                                             \
    return Nccl;
#define COLLC_SCALED_REDUCE(Enum, Spelling, Combine, Mpi)                                          \
  case ReduceOp::Enum:                                                                             \
    break;
#include "ir/ReduceOps.def"
  }
  return ncclNumOps;
}

namespace {

/// Streams and the communicators that issued on them, for synchronize().
struct StreamRegistry {
  std::mutex M;
  std::map<cudaStream_t, std::vector<std::weak_ptr<NcclMembership>>> Users;

  void note(cudaStream_t S, const std::shared_ptr<NcclMembership> &C) {
    std::lock_guard<std::mutex> Lock(M);
    auto &List = Users[S];
    for (auto &W : List)
      if (W.lock() == C)
        return;
    List.push_back(C);
  }
  std::vector<std::shared_ptr<NcclMembership>> of(cudaStream_t S) {
    std::lock_guard<std::mutex> Lock(M);
    std::vector<std::shared_ptr<NcclMembership>> Out;
    for (auto &W : Users[S])
      if (auto C = W.lock())
        Out.push_back(std::move(C));
    return Out;
  }
};

StreamRegistry &streams() {
  static StreamRegistry R;
  return R;
}

Error begin(const NcclDriver::Communicator &C, cudaStream_t S, const Twine &What) {
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  if (Error E = C->usable())
    return E;
  C->LastOp = formatv("{0} (op {1} on {2})", What.str(), ++C->Issued, C->name()).str();
  streams().note(S, C);
  return Error::success();
}

Error finish(const NcclDriver::Communicator &C, ncclResult_t R, const Twine &What) {
  if (Error E = checkNccl(R, C->name() + ": " + What))
    return E;
  if (R == ncclInProgress)
    return waitReady({C->comm()}, C->Timeout, C->name() + ": " + What);
  return Error::success();
}

Error need(const NcclDriver::Resource &R, uint64_t Bytes, const char *Role, const Twine &What) {
  if (R.Bytes < Bytes)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: the {1} buffer holds {2} bytes; {3} are needed", What.str(),
                             Role, R.Bytes, Bytes));
  if (!R.Data && Bytes)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: the {1} buffer is null", What.str(), Role));
  return Error::success();
}

} // namespace

// --- the driver interface -----------------------------------------------------------

Expected<ncclUniqueId> NcclDriver::groupId(const CommunicationId &Id) {
  return inProcessIds().idFor(Id.Name, /*Mints=*/true);
}

Expected<NcclDriver::Communicator> NcclDriver::join(UniqueId Id, size_t Ranks, size_t Rank) {
  if (Rank >= Ranks)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("join as rank {0} of {1}: ranks are 0..{2}", Rank, Ranks, Ranks - 1));
  if (Error E = checkNcclVersion())
    return E;
  int Device = 0;
  if (Error E = checkCuda(cudaGetDevice(&Device), "cudaGetDevice"))
    return E;
  ncclConfig_t Config = NCCL_CONFIG_INITIALIZER;
  Config.blocking = 0;
  ncclComm_t Comm = nullptr;
  std::string Name = formatv("rank {0} of {1} on GPU {2}", Rank, Ranks, Device).str();
  if (Error E = checkNccl(ncclCommInitRankConfig(&Comm, int(Ranks), Id, int(Rank), &Config),
                          "ncclCommInitRankConfig (" + Name + ")"))
    return E;
  auto M = std::make_shared<NcclMembership>(Comm, int(Rank), int(Ranks), Device, Name);
  if (Error E = waitReady({Comm}, M->Timeout, "ncclCommInitRankConfig (" + Name + ")")) {
    M->abort("its initialization failed");
    return E;
  }
  return M;
}

Expected<NcclDriver::Elems> NcclDriver::elements(ElemType T, uint64_t Bytes) {
  ncclDataType_t D = ncclTypeOf(T);
  if (Error E = checkNcclSupports(T, D))
    return E;
  unsigned Size = typeBytesOf(D);
  if (Bytes % Size)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0} bytes are not a whole number of {1} elements ({2} bytes each)",
                             Bytes, elemTypeName(T), Size));
  return Elems{D, Bytes / Size};
}

/// all_reduce, or reduce_scatter (\p Scatter, E.Count per rank), with \p Op;
/// premul_sum scales by \p Scale in element type \p T. Checked before
/// anything is issued.
static Error reduce(bool Scatter, const NcclDriver::Communicator &C,
                    const NcclDriver::Resource &Src, const NcclDriver::Resource &Dst,
                    NcclDriver::Elems E, ReduceOp Op, ElemType T, double Scale, cudaStream_t S) {
  bool PreMul = Op == ReduceOp::PremulSum;
  std::string What = formatv("{0}{1} {2} {3} elements{4}", Scatter ? "reduce_scatter" : "all_reduce",
                             PreMul ? formatv(" premul_sum({0})", Scale).str() : std::string(),
                             Scatter ? "to" : "of", E.Count, Scatter ? " per rank" : "")
                         .str();
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  uint64_t Bytes = E.Count * typeBytesOf(E.Type);
  if (Error Err = need(Src, Scatter ? Bytes * uint64_t(C->size()) : Bytes, "source", What))
    return Err;
  if (Error Err = need(Dst, Bytes, "destination", What))
    return Err;
  if (Error Err = begin(C, S, What))
    return Err;
  ncclRedOp_t R = ncclOpOf(Op);
  if (PreMul) {
    Expected<ncclRedOp_t> Created = C->preMulSum(T, ncclTypeOf(T), Scale);
    if (!Created)
      return Created.takeError();
    R = *Created;
  }
  return finish(C,
                Scatter ? ncclReduceScatter(Src.Data, Dst.Data, E.Count, E.Type, R, C->comm(), S)
                        : ncclAllReduce(Src.Data, Dst.Data, E.Count, E.Type, R, C->comm(), S),
                What);
}

Error NcclDriver::allReduce(const Communicator &C, const Resource &Src, const Resource &Dst,
                            Elems E, ReduceOp Op, CommStream S) {
  if (Op == ReduceOp::PremulSum)
    return makeError(ErrorKind::InvalidArgument,
                     "all_reduce premul_sum needs its factor: use allReduceScaled");
  return reduce(/*Scatter=*/false, C, Src, Dst, E, Op, ElemType::F32, 1.0, S);
}

Error NcclDriver::allReduceScaled(const Communicator &C, const Resource &Src, const Resource &Dst,
                                  Elems E, ReduceOp Op, ElemType T, double Scale, CommStream S) {
  return reduce(/*Scatter=*/false, C, Src, Dst, E, Op, T, Scale, S);
}

Error NcclDriver::reduceScatter(const Communicator &C, const Resource &Src, const Resource &Dst,
                                Elems E, ReduceOp Op, CommStream S) {
  if (Op == ReduceOp::PremulSum)
    return makeError(ErrorKind::InvalidArgument,
                     "reduce_scatter premul_sum needs its factor: use reduceScatterScaled");
  return reduce(/*Scatter=*/true, C, Src, Dst, E, Op, ElemType::F32, 1.0, S);
}

Error NcclDriver::reduceScatterScaled(const Communicator &C, const Resource &Src,
                                      const Resource &Dst, Elems E, ReduceOp Op, ElemType T,
                                      double Scale, CommStream S) {
  return reduce(/*Scatter=*/true, C, Src, Dst, E, Op, T, Scale, S);
}

Error NcclDriver::allGather(const Communicator &C, const Resource &Src, const Resource &Dst,
                            Elems E, CommStream S) {
  std::string What = formatv("all_gather of {0} elements per rank", E.Count).str();
  uint64_t Bytes = E.Count * typeBytesOf(E.Type);
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  if (Error Err = need(Src, Bytes, "source", What))
    return Err;
  if (Error Err = need(Dst, Bytes * uint64_t(C->size()), "destination", What))
    return Err;
  if (Error Err = begin(C, S, What))
    return Err;
  return finish(C, ncclAllGather(Src.Data, Dst.Data, E.Count, E.Type, C->comm(), S), What);
}

Error NcclDriver::broadcast(const Communicator &C, const Resource *Src, const Resource &Dst,
                            Elems E, size_t Root, CommStream S) {
  std::string What = formatv("broadcast of {0} elements from rank {1}", E.Count, Root).str();
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  if (Root >= size_t(C->size()))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: the root is not a rank of the {1}", What, C->size()));
  uint64_t Bytes = E.Count * typeBytesOf(E.Type);
  bool IsRoot = size_t(C->rank()) == Root;
  if (IsRoot && !Src)
    return makeError(ErrorKind::InvalidArgument, What + ": the root has no source");
  if (IsRoot)
    if (Error Err = need(*Src, Bytes, "source", What))
      return Err;
  if (Error Err = need(Dst, Bytes, "destination", What))
    return Err;
  if (Error Err = begin(C, S, What))
    return Err;
  return finish(C,
                ncclBroadcast(IsRoot ? Src->Data : nullptr, Dst.Data, E.Count, E.Type, int(Root),
                              C->comm(), S),
                What);
}

Error NcclDriver::allToAll(const Communicator &C, const Resource &Src, const Resource &Dst,
                           Elems E, size_t Ranks, CommStream S) {
  std::string What = formatv("all_to_all of {0} elements per peer", E.Count).str();
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  if (Ranks != size_t(C->size()))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: {1} ranks given, the communicator has {2}", What, Ranks,
                             C->size()));
  uint64_t Bytes = E.Count * typeBytesOf(E.Type) * Ranks;
  if (Error Err = need(Src, Bytes, "source", What))
    return Err;
  if (Error Err = need(Dst, Bytes, "destination", What))
    return Err;
  if (Error Err = begin(C, S, What))
    return Err;
  return finish(C,
                ncclAllToAllAnyVersion(Src.Data, Dst.Data, E.Count, E.Type, int(Ranks),
                                       C->comm(), S),
                What);
}

/// A send (\p IsSend) or a receive of \p E at \p R with \p Peer.
static Error pointToPoint(const NcclDriver::Communicator &C, const NcclDriver::Resource &R,
                          NcclDriver::Elems E, size_t Peer, cudaStream_t S, bool IsSend) {
  std::string What = formatv("{0} of {1} elements {2} rank {3}", IsSend ? "send" : "recv",
                             E.Count, IsSend ? "to" : "from", Peer)
                         .str();
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  if (Peer >= size_t(C->size()))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: the peer is not a rank of the {1}", What, C->size()));
  // A lone send or receive with oneself waits forever for its other half
  // (NCCL pairs them only inside one group): refuse it, as `local` does.
  if (Peer == size_t(C->rank()))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: the peer is this rank; a send or receive needs another rank "
                             "of the {1}",
                             What, C->size()));
  if (Error Err = need(R, E.Count * typeBytesOf(E.Type), IsSend ? "source" : "destination", What))
    return Err;
  if (Error Err = begin(C, S, What))
    return Err;
  return finish(C,
                IsSend ? ncclSend(R.Data, E.Count, E.Type, int(Peer), C->comm(), S)
                       : ncclRecv(R.Data, E.Count, E.Type, int(Peer), C->comm(), S),
                What);
}

Error NcclDriver::send(const Communicator &C, const Resource &Src, Elems E, size_t Peer,
                       CommStream S) {
  return pointToPoint(C, Src, E, Peer, S, /*IsSend=*/true);
}

Error NcclDriver::recv(const Communicator &C, const Resource &Dst, Elems E, size_t Peer,
                       CommStream S) {
  return pointToPoint(C, Dst, E, Peer, S, /*IsSend=*/false);
}

// --- beyond the driver interface -------------------------------------------------------

Error NcclDriver::allToAllV(const Communicator &C, const Resource &Src, const Resource &Dst,
                            ElemType T, ArrayRef<uint64_t> SendCounts,
                            ArrayRef<uint64_t> RecvCounts, CommStream S) {
  std::string What = "all_to_all_v";
  if (!C)
    return makeError(ErrorKind::InvalidArgument, What + ": no communicator");
  size_t N = size_t(C->size());
  if (SendCounts.size() != N || RecvCounts.size() != N)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: {1} send and {2} receive counts for {3} ranks", What,
                             SendCounts.size(), RecvCounts.size(), N));
  Expected<Elems> E = elements(T, 0);
  if (!E)
    return E.takeError();
  unsigned Size = typeBytesOf(E->Type);
  uint64_t SendTotal = 0, RecvTotal = 0;
  for (size_t P = 0; P != N; ++P) {
    SendTotal += SendCounts[P];
    RecvTotal += RecvCounts[P];
  }
  if (Error Err = need(Src, SendTotal * Size, "source", What))
    return Err;
  if (Error Err = need(Dst, RecvTotal * Size, "destination", What))
    return Err;
  if (Error Err = begin(C, S, What))
    return Err;
  if (Error Err = checkNccl(ncclGroupStart(), What + ": ncclGroupStart"))
    return Err;
  uint64_t SendAt = 0, RecvAt = 0;
  for (size_t P = 0; P != N; ++P) {
    // Zero counts are skipped on both sides: both know them.
    if (SendCounts[P])
      ncclSend(static_cast<char *>(Src.Data) + SendAt * Size, SendCounts[P], E->Type, int(P),
               C->comm(), S);
    if (RecvCounts[P])
      ncclRecv(static_cast<char *>(Dst.Data) + RecvAt * Size, RecvCounts[P], E->Type, int(P),
               C->comm(), S);
    SendAt += SendCounts[P];
    RecvAt += RecvCounts[P];
  }
  return finish(C, ncclGroupEnd(), What);
}

Expected<std::vector<uint32_t>> NcclDriver::allGatherWords(const Communicator &C,
                                                            ArrayRef<uint32_t> Local,
                                                            CommStream S) {
  return allGatherWords(C, Local, S, nullptr);
}

Expected<std::vector<uint32_t>> NcclDriver::allGatherWords(
    const Communicator &C, ArrayRef<uint32_t> Local, CommStream S,
    function_ref<void(const std::string &)> Break) {
  if (!C)
    return makeError(ErrorKind::InvalidArgument, "all_gather_words: no communicator");
  size_t N = size_t(C->size()), W = Local.size();
  std::vector<uint32_t> All(N * W);
  if (W == 0)
    return All;
  // Pinned host memory on both sides: with pageable memory a copy may wait
  // on the host for the stream, so a dead or late peer would block it
  // before the deadline and the abort below could act. Here every copy is
  // asynchronous on the comm stream and the only wait is waitForStream's.
  // After a failure the stream may still use both buffers and freeing them
  // would wait for it (cudaFree synchronizes): a few bytes are left to the
  // process instead.
  void *Dev = nullptr, *Host = nullptr;
  bool Freeable = true; ///< no work of the stream may use them
  auto Free = llvm::make_scope_exit([&] {
    if (!Freeable)
      return;
    if (Host)
      cudaFreeHost(Host);
    cudaFree(Dev);
  });
  if (Error E = checkCuda(cudaMalloc(&Dev, (N + 1) * W * 4), "cudaMalloc for all_gather_words"))
    return E;
  if (Error E = checkCuda(cudaMallocHost(&Host, (N + 1) * W * 4),
                          "cudaMallocHost for all_gather_words"))
    return E;
  char *HostMine = static_cast<char *>(Host) + N * W * 4;
  memcpy(HostMine, Local.data(), W * 4);
  char *Mine = static_cast<char *>(Dev) + N * W * 4;
  Freeable = false;
  if (Error E = checkCuda(cudaMemcpyAsync(Mine, HostMine, W * 4, cudaMemcpyHostToDevice, S),
                          "cudaMemcpyAsync for all_gather_words"))
    return E;
  if (Error E = allGather(C, Resource{Mine, W * 4}, Resource{Dev, N * W * 4},
                          Elems{ncclUint32, W}, S))
    return E;
  if (Error E = checkCuda(cudaMemcpyAsync(Host, Dev, N * W * 4, cudaMemcpyDeviceToHost, S),
                          "cudaMemcpyAsync for all_gather_words"))
    return E;
  if (Error E = waitForStream(S, {C.get()}, "all_gather_words", std::nullopt, Break))
    return E;
  Freeable = true;
  memcpy(All.data(), Host, N * W * 4);
  return All;
}

Expected<NcclDriver::Communicator> NcclDriver::split(const Communicator &C, int Color, int Key) {
  if (!C)
    return makeError(ErrorKind::InvalidArgument, "split: no communicator");
  if (Error E = C->usable())
    return E;
  ncclConfig_t Config = NCCL_CONFIG_INITIALIZER;
  Config.blocking = 0;
  ncclComm_t Child = nullptr;
  std::string What = formatv("ncclCommSplit of {0} (color {1}, key {2})", C->name(), Color, Key);
  if (Error E = checkNccl(ncclCommSplit(C->comm(), Color < 0 ? NCCL_SPLIT_NOCOLOR : Color, Key,
                                        &Child, &Config),
                          What))
    return E;
  if (Error E = waitReady({C->comm()}, C->Timeout, What))
    return E;
  if (!Child)
    return Communicator();
  if (Error E = waitReady({Child}, C->Timeout, What))
    return E;
  int Rank = 0, Size = 0;
  if (Error E = checkNccl(ncclCommUserRank(Child, &Rank), What + ": ncclCommUserRank"))
    return E;
  if (Error E = checkNccl(ncclCommCount(Child, &Size), What + ": ncclCommCount"))
    return E;
  auto M = std::make_shared<NcclMembership>(
      Child, Rank, Size, C->device(),
      formatv("{0}.color{1} (rank {2} of {3})", C->name(), Color, Rank, Size).str());
  M->Timeout = C->Timeout;
  return M;
}

// --- streams ---------------------------------------------------------------------------

NcclDriver::StreamOwner NcclDriver::createStream(StringRef) {
  int Least = 0, Greatest = 0;
  cudaDeviceGetStreamPriorityRange(&Least, &Greatest);
  cudaStream_t S = nullptr;
  if (cudaStreamCreateWithPriority(&S, cudaStreamNonBlocking, Greatest) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return std::make_unique<CommStreamOwner>(S);
}

Error NcclDriver::barrier(const Communicator &C, CommStream S) {
  const char *What = "barrier";
  if (!C)
    return makeError(ErrorKind::InvalidArgument, "barrier: no communicator");
  Expected<void *> Scratch = C->barrierScratch(S);
  if (!Scratch)
    return Scratch.takeError();
  if (Error Err = begin(C, S, What))
    return Err;
  return finish(C, ncclAllReduce(*Scratch, *Scratch, 1, ncclInt32, ncclSum, C->comm(), S), What);
}

Error NcclDriver::synchronize(CommStream S) {
  std::vector<std::shared_ptr<NcclMembership>> Users = streams().of(S);
  std::vector<NcclMembership *> Raw;
  for (auto &U : Users)
    Raw.push_back(U.get());
  return waitForStream(S, Raw, "synchronize");
}

} // namespace collc::rt::nccl
