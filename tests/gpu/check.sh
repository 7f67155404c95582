#!/usr/bin/env bash
# The NCCL backend's device check in one command: builds the GPU tests and
# the GPU benchmark (or uses a build carried from a machine that has LLVM 14
# and GoogleTest), runs both, and writes every log under $OUT (./gpu-out
# when unset):
#   $OUT/nvidia-smi.txt   the GPU and its driver
#   $OUT/gpu-tests.log    collc_gpu_tests (and gpu-tests.xml)
#   $OUT/gpu-bench.txt    collc_gpu_bench: eager vs graph host time, pack/unpack vs cudaMemcpy
#   $OUT/check.log        what this script did
#
#   tests/gpu/check.sh               build if needed, then run
#   tests/gpu/check.sh --build-only  build build-gpu/bin here, to carry to a GPU machine
#                                    whose image lacks LLVM 14 and GoogleTest
# Exit status: 0 when the tests pass (or skip without a GPU) and the bench ran.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
BUILD=${COLLC_GPU_BUILD:-build-gpu}
log() { echo "== $*" | tee -a "$OUT/check.log"; }

have_build() { [ -x "$BUILD/bin/collc_gpu_tests" ] && [ -x "$BUILD/bin/collc_gpu_bench" ]; }

if [ "${1:-}" = --build-only ] || ! have_build; then
  if ! command -v cmake >/dev/null || [ ! -d /usr/lib/llvm-14/lib/cmake/llvm ]; then
    log "no build at $BUILD and no LLVM 14 here to make one: run 'tests/gpu/check.sh --build-only'" \
        "on a machine with the project's dependencies and carry $BUILD/bin"
    exit 1
  fi
  log "building $BUILD (Release, SM90)"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    >>"$OUT/check.log" 2>&1 &&
    cmake --build "$BUILD" --target collc_gpu_tests collc_gpu_bench >>"$OUT/check.log" 2>&1 || {
    log "build failed (tail of check.log follows)"
    tail -30 "$OUT/check.log"
    exit 1
  }
fi
[ "${1:-}" = --build-only ] && { log "built $BUILD/bin"; exit 0; }

# The GPU machine's own NCCL: the CUDA toolkit's, the system's, or pip's.
for Dir in /usr/local/cuda/lib64 /usr/local/cuda/lib \
  $(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null); do
  if [ -e "$Dir/libnccl.so.2" ]; then
    export LD_LIBRARY_PATH="$Dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    log "NCCL from $Dir"
    break
  fi
done
(nvidia-smi || echo "nvidia-smi: not available") >"$OUT/nvidia-smi.txt" 2>&1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

log "collc_gpu_tests"
"$BUILD/bin/collc_gpu_tests" --gtest_output=xml:"$OUT/gpu-tests.xml" >"$OUT/gpu-tests.log" 2>&1
TESTS=$?
tail -25 "$OUT/gpu-tests.log"
log "collc_gpu_tests exit $TESTS"

log "collc_gpu_bench"
"$BUILD/bin/collc_gpu_bench" --examples "$PWD/examples" 2>&1 | tee "$OUT/gpu-bench.txt"
BENCH=${PIPESTATUS[0]}
log "collc_gpu_bench exit $BENCH"
[ "$TESTS" = 0 ] && [ "$BENCH" = 0 ]
