//===- tests/gpu/NcclConformanceTest.cpp - The conformance suite on `nccl` -===//
//
// The same driver conformance suite the local backend passes, run on the
// NCCL driver through its harness: device memory, one rank per GPU. NCCL
// refuses two ranks on one GPU, so with one GPU the worlds are one rank
// (every collective takes NCCL's one-rank path; multi-rank semantics are
// the CPU backends' to prove); with G GPUs of one process, worlds up to G.
// Without a GPU every case reports itself skipped, with the reason.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/ConformanceSuite.h"
#include "tests/gpu/GpuTestUtil.h"

#include "runtime/nccl/NcclDriver.h"

#include <thread>

namespace collc::test {

template <> struct DriverHarness<rt::nccl::NcclDriver> {
  using Driver = rt::nccl::NcclDriver;
  static std::string name() { return "nccl"; }
  /// One communicator per world for the suite: an NCCL init costs more
  /// than a case (device-run.sh reports the time per case).
  static constexpr bool ShareCommunicators = true;
  static int gpus() {
    int Count = 0;
    if (cudaGetDeviceCount(&Count) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return Count;
  }
  /// One rank per GPU: worlds 1 and, with more GPUs, 2 and all of them.
  static std::vector<int> worlds() {
    std::vector<int> W{1};
    int G = gpus();
    if (G >= 2)
      W.push_back(2);
    if (G > 2)
      W.push_back(G);
    return W;
  }
  static std::string unavailable() { return gpu::whyNoGpu(); }

  /// Device memory, filled and read through host copies.
  class Buffer {
  public:
    explicit Buffer(uint64_t Bytes) : Bytes(Bytes) {
      if (cudaMalloc(&Dev, std::max<uint64_t>(Bytes, 1)) != cudaSuccess) {
        cudaGetLastError();
        ADD_FAILURE() << "cudaMalloc of " << Bytes << " bytes failed";
        Dev = nullptr;
      }
    }
    ~Buffer() { cudaFree(Dev); }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    Driver::Resource resource(uint64_t Offset = 0) {
      return Driver::resource(static_cast<char *>(Dev) + Offset, Bytes - Offset);
    }
    /// From pageable memory, cudaMemcpy may return before the copy has
    /// reached the device, and the driver's non-blocking comm streams do
    /// not wait for the legacy stream it ran on: the device is synchronized.
    void write(llvm::ArrayRef<char> Data, uint64_t Offset = 0) {
      if (!Data.empty()) {
        EXPECT_EQ(cudaMemcpy(static_cast<char *>(Dev) + Offset, Data.data(), Data.size(),
                             cudaMemcpyHostToDevice),
                  cudaSuccess);
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
    }
    std::vector<char> read() const {
      // The driver's work ran on non-blocking comm streams, which the
      // synchronous copy does not wait for: the suite synchronized them.
      std::vector<char> Host(Bytes);
      if (Bytes) {
        EXPECT_EQ(cudaMemcpy(Host.data(), Dev, Bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      }
      return Host;
    }
    uint64_t size() const { return Bytes; }

  private:
    void *Dev = nullptr;
    uint64_t Bytes;
  };

  /// Rank r drives GPU r from a thread of its own.
  static void runRanks(int World, llvm::function_ref<void(int)> Body) {
    std::vector<std::thread> Threads;
    for (int R = 0; R != World; ++R)
      Threads.emplace_back([&Body, R] {
        cudaSetDevice(R);
        Body(R);
      });
    for (std::thread &T : Threads)
      T.join();
  }
};

} // namespace collc::test

using NcclHarness = collc::test::DriverHarness<collc::rt::nccl::NcclDriver>;
COLLC_CONFORMANCE_SUITE(NcclHarness, NcclConformance);
