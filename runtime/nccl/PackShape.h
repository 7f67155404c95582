//===- runtime/nccl/PackShape.h - The shape of a pack/unpack launch -*- C++ -*-===//
//
// The numbers a pack or unpack launch is made of, in one CUDA-free place:
// the kernel (PackKernels.cu) launches with them and the listing
// (`collc dump --format nccl`) prints them, so the two cannot disagree.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_PACKSHAPE_H
#define COLLC_RUNTIME_NCCL_PACKSHAPE_H

#include <cstdint>

namespace collc::rt::nccl {

/// Threads per block of the pack and unpack kernels.
constexpr int kPackThreadsPerBlock = 512;
/// The largest piece of one copy that one block moves.
constexpr uint64_t kTileBytes = 64 * 1024;

} // namespace collc::rt::nccl

#endif
