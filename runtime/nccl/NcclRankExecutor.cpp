//===- runtime/nccl/NcclRankExecutor.cpp - One process's rank on its GPU ----===//

#include "runtime/nccl/NcclRankExecutor.h"

#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/IdGather.h"
#include "runtime/nccl/NcclExecutor.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

namespace {

/// What the executor keeps until its communicators are gone.
struct RankWorld {
  std::unique_ptr<WorldGather> World;
  std::unique_ptr<UniqueIdExchange> Ids;
};

} // namespace

Expected<std::unique_ptr<Executor>> createNcclRankExecutor(const plan::Plan &P,
                                                           const ProcessPlace &Place,
                                                           WorldJoin Join, ExecutorOptions Opts) {
  if (Opts.Trace)
    return makeError(ErrorKind::Unsupported,
                     "the nccl backend does not record host events of a step (a trace): its "
                     "steps run on the GPU");
  Expected<int> Devices = countCudaDevices();
  if (!Devices)
    return Devices.takeError();
  int64_t Device = Opts.Device >= 0 ? Opts.Device : Place.LocalRank % *Devices;
  if (Device >= *Devices)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("device {0}: expected 0..{1} (the CUDA devices this process sees) "
                             "or -1",
                             Device, *Devices - 1));
  Expected<NcclRankPlan> L = lowerForRank(P, Place.Rank);
  if (!L)
    return L.takeError();
  Expected<std::unique_ptr<WorldGather>> World = Join();
  if (!World)
    return World.takeError();
  auto Kept = std::make_shared<RankWorld>();
  Kept->World = std::move(*World);
  Expected<std::unique_ptr<UniqueIdExchange>> Ids =
      gatherUniqueIds(*L, Opts.CommPrefix, *Kept->World);
  if (!Ids)
    return Ids.takeError();
  Kept->Ids = std::move(*Ids);
  NcclExecutorOptions NO;
  NO.Device = int(Device);
  NO.CommPrefix = Opts.CommPrefix;
  NO.Timeout = Opts.Timeout;
  NO.DigestHandshake = Opts.DigestHandshake;
  NO.Ids = Kept->Ids.get();
  NO.World = Kept->World.get();
  NO.Keep = Kept;
  Expected<std::unique_ptr<NcclExecutor>> X =
      NcclExecutor::create(P, Place.Rank, std::move(*L), std::move(NO));
  if (!X)
    return X.takeError();
  return std::unique_ptr<Executor>(std::move(*X));
}

} // namespace collc::rt::nccl
