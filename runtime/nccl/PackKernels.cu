//===- runtime/nccl/PackKernels.cu - Bucket pack/unpack on the GPU --------===//

#include "runtime/nccl/PackKernels.h"

#include <algorithm>

namespace collc::rt::nccl {

void appendTiles(std::vector<CopyTile> &Tiles, uint64_t Dst, uint64_t Src, uint64_t Bytes) {
  for (uint64_t At = 0; At < Bytes; At += kTileBytes)
    Tiles.push_back({Dst + At, Src + At, std::min(kTileBytes, Bytes - At)});
}

namespace {

constexpr int kThreads = kPackThreadsPerBlock;
constexpr int kUnroll = 4;

/// 16-byte moves while both sides are 16-byte aligned; bytes otherwise.
/// Tiles of one copy start at multiples of 64 KiB from its start, so a
/// copy whose ends are aligned has only aligned tiles.
__global__ void __launch_bounds__(kThreads) copyTiles(const CopyTile *Tiles, uint32_t N) {
  for (uint32_t T = blockIdx.x; T < N; T += gridDim.x) {
    const CopyTile Tile = Tiles[T];
    char *Dst = reinterpret_cast<char *>(Tile.Dst);
    const char *Src = reinterpret_cast<const char *>(Tile.Src);
    uint64_t Bytes = Tile.Bytes;
    uint64_t Head = 0;
    if ((Tile.Dst & 15) == (Tile.Src & 15)) {
      // Bytes up to the first 16-byte boundary, then vectors, then the tail.
      Head = (16 - (Tile.Dst & 15)) & 15;
      Head = Head < Bytes ? Head : Bytes;
      uint64_t Vectors = (Bytes - Head) / 16;
      const uint4 *S4 = reinterpret_cast<const uint4 *>(Src + Head);
      uint4 *D4 = reinterpret_cast<uint4 *>(Dst + Head);
      uint64_t V = threadIdx.x;
      for (; V + (kUnroll - 1) * kThreads < Vectors; V += kUnroll * kThreads) {
        uint4 R[kUnroll];
#pragma unroll
        for (int U = 0; U != kUnroll; ++U)
          R[U] = S4[V + U * kThreads];
#pragma unroll
        for (int U = 0; U != kUnroll; ++U)
          D4[V + U * kThreads] = R[U];
      }
      for (; V < Vectors; V += kThreads)
        D4[V] = S4[V];
      uint64_t Done = Head + Vectors * 16;
      for (uint64_t B = Done + threadIdx.x; B < Bytes; B += kThreads)
        Dst[B] = Src[B];
      if (threadIdx.x < Head)
        Dst[threadIdx.x] = Src[threadIdx.x];
    } else {
      for (uint64_t B = threadIdx.x; B < Bytes; B += kThreads)
        Dst[B] = Src[B];
    }
  }
}

} // namespace

cudaError_t launchCopyTiles(const CopyTile *DeviceTiles, uint32_t NumTiles, int SMs,
                            cudaStream_t Stream) {
  if (NumTiles == 0)
    return cudaSuccess;
  // Enough blocks to fill every SM a few times over, never more than tiles.
  uint32_t Blocks = std::min<uint32_t>(NumTiles, uint32_t(std::max(1, SMs)) * 4);
  copyTiles<<<Blocks, kThreads, 0, Stream>>>(DeviceTiles, NumTiles);
  return cudaGetLastError();
}

} // namespace collc::rt::nccl
