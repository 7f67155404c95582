//===- runtime/nccl/PackKernels.h - Bucket pack/unpack on the GPU -*- C++ -*-===//
//
// A fused bucket is packed (tensors copied into its buffer) and unpacked
// (results copied out) by one kernel launch per bucket, whatever the number
// of tensors: the copies are cut into tiles of at most kTileBytes, and the
// blocks of one launch take tiles in turn, moving 16 bytes per thread and
// instruction where source and destination allow it. The tile table lives
// in device memory, built once when the plan is captured, so the launch is
// a fixed node of the CUDA graph.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_PACKKERNELS_H
#define COLLC_RUNTIME_NCCL_PACKKERNELS_H

#include "runtime/nccl/PackShape.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace collc::rt::nccl {

/// One piece of a copy, by device address.
struct CopyTile {
  uint64_t Dst;
  uint64_t Src;
  uint64_t Bytes;
};

/// Cuts the copies (Dst, Src, Bytes) into tiles; empty copies vanish.
void appendTiles(std::vector<CopyTile> &Tiles, uint64_t Dst, uint64_t Src, uint64_t Bytes);

/// Launches the copies of \p NumTiles tiles at \p DeviceTiles on \p Stream
/// (one launch; nothing for zero tiles). \p SMs sizes the grid.
cudaError_t launchCopyTiles(const CopyTile *DeviceTiles, uint32_t NumTiles, int SMs,
                            cudaStream_t Stream);

} // namespace collc::rt::nccl

#endif
