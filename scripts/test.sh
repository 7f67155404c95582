#!/usr/bin/env bash
# Every test: installs what it needs, builds collc with GCC and runs the whole
# suite, then builds it again with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer (with the libFuzzer target) and runs the suite
# there too. COLLC_SKIP_SANITIZERS=1 skips the second build.
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
    -DCOLLC_SANITIZE=address,undefined -DCOLLC_ENABLE_FUZZER=ON
  cmake --build build-asan -j "$jobs"
  echo "== tests (clang, ASan+UBSan)"
  ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
