#!/usr/bin/env bash
# Every test: installs what it needs, builds collc with GCC and runs the whole
# suite; builds it again with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer (with the libFuzzer target) and runs the suite
# there too; then builds the runtime tests under ThreadSanitizer and runs the
# driver conformance suite and the runtime tests there. Under the sanitizers
# the conformance suite's largest size is 64 KiB instead of 1 MiB: they are
# 5-15x slower, and every driver path below the 8 MiB streaming threshold is
# already taken from 2 KiB up. The sanitizer builds leave the NCCL backend
# out (its device code is not instrumented, and its GPU tests skip here);
# the GCC build has it. COLLC_SKIP_SANITIZERS=1 skips those builds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== build (gcc, Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
echo "== tests (gcc, Release)"
ctest --test-dir build --output-on-failure -j "$jobs"

if [ "${COLLC_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build (clang, ASan+UBSan, libFuzzer)"
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOLLC_SANITIZE=address,undefined -DCOLLC_ENABLE_FUZZER=ON -DCOLLC_ENABLE_NCCL=OFF
  cmake --build build-asan -j "$jobs"
  echo "== tests (clang, ASan+UBSan)"
  COLLC_CONFORMANCE_BIG_BYTES=65536 ctest --test-dir build-asan --output-on-failure -j "$jobs"

  echo "== build (clang, TSan: the runtime tests)"
  CC=clang CXX=clang++ cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCOLLC_SANITIZE=thread -DCOLLC_ENABLE_NCCL=OFF
  cmake --build build-tsan -j "$jobs" --target collc_conformance_local collc_conformance_shm \
    collc_runtime_tests collc_shm_tests
  echo "== tests (clang, TSan: conformance and runtime)"
  COLLC_CONFORMANCE_BIG_BYTES=65536 \
    TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" \
    ctest --test-dir build-tsan --output-on-failure -j "$jobs" -L 'conformance|runtime'
fi
