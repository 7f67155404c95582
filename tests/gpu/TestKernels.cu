//===- tests/gpu/TestKernels.cu - A model's compute, for the GPU tests ----===//

#include "TestKernels.h"

namespace collc::gpu {
namespace {

__global__ void produce(float *Out, uint32_t N) {
  for (uint32_t I = blockIdx.x * blockDim.x + threadIdx.x; I < N; I += gridDim.x * blockDim.x)
    Out[I] = float(I % 251) * 0.75f - 17.0f;
}

__global__ void consume(const float *In, float *Out, uint32_t N) {
  // In * 2 is exact, so a fused multiply-add rounds as the host does.
  for (uint32_t I = blockIdx.x * blockDim.x + threadIdx.x; I < N; I += gridDim.x * blockDim.x)
    Out[I] = In[I] * 2.0f + 1.0f;
}

__global__ void hold(uint64_t Ns) {
  uint64_t Start = 0, Now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(Start));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(Now));
  while (Now - Start < Ns);
}

} // namespace

cudaError_t launchHold(uint32_t Ms, cudaStream_t S) {
  hold<<<1, 1, 0, S>>>(uint64_t(Ms) * 1000000);
  return cudaGetLastError();
}

cudaError_t launchProduce(float *Out, uint32_t N, cudaStream_t S) {
  produce<<<(N + 255) / 256, 256, 0, S>>>(Out, N);
  return cudaGetLastError();
}

cudaError_t launchConsume(const float *In, float *Out, uint32_t N, cudaStream_t S) {
  consume<<<(N + 255) / 256, 256, 0, S>>>(In, Out, N);
  return cudaGetLastError();
}

} // namespace collc::gpu
