//===- runtime/nccl/NcclResources.cpp - What an NCCL executor sets up once ===//

#include "runtime/nccl/NcclResources.h"

#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclDriver.h"
#include "runtime/nccl/NcclVersion.h"
#include "runtime/nccl/UniqueIdExchange.h"

#include "llvm/Support/FormatVariadic.h"

#include <bitset>

using namespace llvm;

namespace collc::rt::nccl {

NcclResources::~NcclResources() {
  cudaSetDevice(Opts.Device);
  for (auto &[B, Ptr] : Buffers)
    cudaFree(Ptr);
  for (void *Ptr : Owned)
    cudaFree(Ptr);
  if (HostCounts)
    cudaFreeHost(HostCounts);
  for (cudaEvent_t E : Ready)
    cudaEventDestroy(E);
  for (cudaEvent_t E : Done)
    if (E)
      cudaEventDestroy(E);
  if (Fork)
    cudaEventDestroy(Fork);
  if (Join)
    cudaEventDestroy(Join);
  // Finalize or abort, then destroy: the split communicators in reverse,
  // then the root they share resources with.
  while (!Comms.empty())
    Comms.pop_back();
  Root.reset();
  if (Stream)
    cudaStreamDestroy(Stream);
  if (Model)
    cudaStreamDestroy(Model);
}

Error NcclResources::setup() {
  if (Error E = checkElementTypes())
    return E;
  for (const Call &C : L.Setup)
    if (Error E = setupCall(C))
      return E;
  for (const PreMulSumDesc &D : L.PreMulSums) {
    Expected<ncclRedOp_t> Op = Comms[D.Comm]->preMulSum(D.Elem, ncclTypeOf(D.Elem), D.Scale);
    if (!Op)
      return Op.takeError();
    PreMulOps.push_back(*Op);
  }
  return Error::success();
}

Error NcclResources::checkElementTypes() const {
  std::bitset<NumElemTypes> Seen;
  for (const std::vector<Call> *List : {&L.Capture, &L.Step})
    for (const Call &C : *List) {
      bool Typed = C.Kind >= CallKind::AllReduce && C.Kind <= CallKind::Recv;
      if (!Typed || Seen.test(unsigned(C.Elem)))
        continue;
      Seen.set(unsigned(C.Elem));
      if (Error E = checkNcclSupports(C.Elem, ncclTypeOf(C.Elem), Opts.Device))
        return makeError(ErrorKind::Unsupported, formatv("rank {0} of plan @{1}: {2}", Rank,
                                                         P.Program, toString(std::move(E))));
    }
  return Error::success();
}

Expected<void *> NcclResources::allocateOwned(uint64_t Bytes, cudaStream_t S, StringRef What) {
  if (Error E = checkCuda(cudaSetDevice(Opts.Device), "cudaSetDevice"))
    return E;
  void *Ptr = nullptr;
  if (Error E = checkCuda(cudaMalloc(&Ptr, std::max<uint64_t>(Bytes, 1)),
                          formatv("cudaMalloc of {0} ({1} bytes)", What, Bytes)))
    return E;
  Owned.push_back(Ptr);
  // On \p S: a non-blocking stream would not wait for a cudaMemset on the
  // legacy one.
  if (Error E =
          checkCuda(cudaMemsetAsync(Ptr, 0, Bytes, S), formatv("cudaMemsetAsync of {0}", What)))
    return E;
  return Ptr;
}

std::vector<NcclMembership *> NcclResources::memberships() const {
  std::vector<NcclMembership *> Raw;
  for (const auto &C : Comms)
    Raw.push_back(C.get());
  return Raw;
}

std::vector<ncclComm_t> NcclResources::rawComms() const {
  std::vector<ncclComm_t> Out;
  for (const auto &C : Comms)
    Out.push_back(C->comm());
  return Out;
}

char *NcclResources::buffer(int32_t B) const {
  auto It = Buffers.find(B);
  return It == Buffers.end() ? nullptr : It->second;
}

Error NcclResources::setupCall(const Call &C) {
  switch (C.Kind) {
  case CallKind::SetDevice:
    if (Error E = checkCuda(cudaSetDevice(Opts.Device), formatv("cudaSetDevice({0})", Opts.Device)))
      return E;
    return checkCuda(cudaDeviceGetAttribute(&SMs, cudaDevAttrMultiProcessorCount, Opts.Device),
                     "cudaDeviceGetAttribute");
  case CallKind::CreateStream:
    return createStreams();
  case CallKind::CommInit:
    return createRoot();
  case CallKind::CommSplit:
    return splitFromRoot(C);
  case CallKind::CreatePreMulSum:
    return Error::success(); // once the communicators are ready (setup())
  case CallKind::Malloc: {
    char *Ptr = nullptr;
    if (Error E = checkCuda(cudaMalloc(reinterpret_cast<void **>(&Ptr), C.Bytes),
                            formatv("cudaMalloc of buffer {0} ({1} bytes)", C.Buffer, C.Bytes)))
      return E;
    Buffers[C.Buffer] = Ptr;
    // On the comm stream: it is non-blocking, so it would not wait for a
    // cudaMemset on the legacy stream.
    if (Error E = checkCuda(cudaMemsetAsync(Ptr, 0, C.Bytes, Stream),
                            formatv("cudaMemsetAsync of buffer {0}", C.Buffer)))
      return E;
    if (C.Buffer != int32_t(P.Buffers.size()) + 1)
      return Error::success();
    HasRuntimeAllToAllV = true;
    return checkCuda(cudaMallocHost(reinterpret_cast<void **>(&HostCounts), C.Bytes),
                     "cudaMallocHost for split sizes");
  }
  case CallKind::CreateEvents:
    return createEvents();
  default:
    return makeError(ErrorKind::InvalidArgument, "a setup list with a stream call");
  }
}

Error NcclResources::createStreams() {
  int Least = 0, Greatest = 0;
  if (Error E = checkCuda(cudaDeviceGetStreamPriorityRange(&Least, &Greatest),
                          "cudaDeviceGetStreamPriorityRange"))
    return E;
  for (cudaEvent_t *E : {&Fork, &Join})
    if (Error Err = checkCuda(cudaEventCreateWithFlags(E, cudaEventDisableTiming),
                              "cudaEventCreateWithFlags"))
      return Err;
  if (Error E = checkCuda(cudaStreamCreateWithPriority(&Stream, cudaStreamNonBlocking, Greatest),
                          "cudaStreamCreateWithPriority"))
    return E;
  return checkCuda(cudaStreamCreateWithFlags(&Model, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags (the model's stream)");
}

Error NcclResources::createRoot() {
  const CommDesc &D = L.Root;
  std::string Key = commKey(Opts.CommPrefix, D.Key);
  UniqueIdExchange &Ids = Opts.Ids ? *Opts.Ids : inProcessIds();
  Expected<ncclUniqueId> Id = Ids.idFor(Key, D.Rank == 0, D.Size);
  if (!Id)
    return Id.takeError();
  // Non-blocking, so that the wait for every rank to join is bounded.
  ncclConfig_t Config = NCCL_CONFIG_INITIALIZER;
  Config.blocking = 0;
  ncclComm_t Comm = nullptr;
  std::string What =
      formatv("ncclCommInitRankConfig of {0} (rank {1} of {2})", D.Label, D.Rank, D.Size).str();
  if (Error E =
          checkNccl(ncclCommInitRankConfig(&Comm, int(D.Size), *Id, int(D.Rank), &Config), What))
    return E;
  Root = std::make_shared<NcclMembership>(Comm, int(D.Rank), int(D.Size), Opts.Device, D.Label);
  Root->Timeout = Opts.Timeout;
  return waitReady({Comm}, Opts.Timeout, What);
}

Error NcclResources::splitFromRoot(const Call &C) {
  // Blocking: a non-blocking group end starts a thread (NCCL's group.c),
  // which every eager call and every runtime all_to_all_v would pay. What
  // a blocking call may wait for on the host (a peer's first connection)
  // is bounded by the executor's watchdog instead. Sharing the root's
  // resources, a split costs no bootstrap, topology search or proxy.
  ncclConfig_t Config = NCCL_CONFIG_INITIALIZER;
  Config.blocking = 1;
  Config.splitShare = 1;
  bool Member = C.Comm >= 0;
  int Color = Member ? int(L.Comms[C.Comm].Color) : NCCL_SPLIT_NOCOLOR;
  int Key = Member ? int(L.Comms[C.Comm].Rank) : int(Rank);
  std::string What = Member ? formatv("ncclCommSplit of {0}", L.Comms[C.Comm].Label).str()
                            : formatv("ncclCommSplit of @{0}, which holds this rank in no subgroup",
                                      P.Groups[C.SplitGroup].Name)
                                  .str();
  ncclComm_t Child = nullptr;
  if (Error E = checkNccl(ncclCommSplit(Root->comm(), Color, Key, &Child, &Config), What))
    return E;
  // Issued on the non-blocking root: in progress until every rank split.
  if (Error E = waitReady({Root->comm()}, Opts.Timeout, What))
    return E;
  if (!Member)
    return Error::success();
  if (!Child)
    return makeError(ErrorKind::Backend, What + ": NCCL made no communicator");
  const CommDesc &D = L.Comms[C.Comm];
  auto M = std::make_shared<NcclMembership>(Child, int(D.Rank), int(D.Size), Opts.Device, D.Label);
  M->Timeout = Opts.Timeout;
  Comms.push_back(std::move(M));
  return Error::success();
}

Error NcclResources::createEvents() {
  Ready.assign(P.Computes.size(), nullptr);
  for (cudaEvent_t &E : Ready)
    if (Error Err = checkCuda(cudaEventCreateWithFlags(&E, cudaEventDisableTiming),
                              "cudaEventCreateWithFlags"))
      return Err;
  Done.assign(P.Comms.size(), nullptr);
  MadeBy.assign(P.Tensors.size(), -1);
  for (size_t K = 0; K != P.Comms.size(); ++K) {
    if (!P.Comms[K].Ranks.contains(Rank))
      continue;
    if (Error Err = checkCuda(cudaEventCreateWithFlags(&Done[K], cudaEventDisableTiming),
                              "cudaEventCreateWithFlags"))
      return Err;
    for (uint32_t T : P.Comms[K].Outputs)
      if (MadeBy[T] < 0)
        MadeBy[T] = int32_t(K);
  }
  return Error::success();
}

} // namespace collc::rt::nccl
