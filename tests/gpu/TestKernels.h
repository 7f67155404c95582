//===- tests/gpu/TestKernels.h - A model's compute, for the GPU tests -*- C++ -*-===//
//
// Two kernels that stand for a model's compute around a collective: a
// producer that writes a gradient and a consumer that reads the result;
// and one that holds a stream for a while.
// The host computes the same values (producedValue, consumedValue), so a
// step captured with them is checked bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_GPU_TESTKERNELS_H
#define COLLC_TESTS_GPU_TESTKERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace collc::gpu {

/// Exact in f32 on host and device alike.
inline float producedValue(uint32_t I) { return float(I % 251) * 0.75f - 17.0f; }
inline float consumedValue(float In) { return In * 2.0f + 1.0f; }

/// Out[i] = producedValue(i).
cudaError_t launchProduce(float *Out, uint32_t N, cudaStream_t S);
/// Out[i] = consumedValue(In[i]).
cudaError_t launchConsume(const float *In, float *Out, uint32_t N, cudaStream_t S);

/// One thread that holds \p S for \p Ms milliseconds of the GPU's clock:
/// a step queued behind it stands for one waiting on a dead peer, and it
/// still ends (so that what waits for the stream ends too).
cudaError_t launchHold(uint32_t Ms, cudaStream_t S);

} // namespace collc::gpu

#endif
