#!/usr/bin/env bash
# Builds the NCCL backend's GPU tests and GPU benchmark into build-gpu/ (or
# uses a build carried there), then runs the device check,
# tests/gpu/device-run.sh, which writes its logs and summary under $OUT
# (./gpu-out when unset).
#
#   tests/gpu/check.sh               build if needed, then tests/gpu/device-run.sh
#   tests/gpu/check.sh --build-only  build build-gpu/bin here, to carry to a GPU machine
#                                    whose image lacks LLVM 14 and GoogleTest
# Exit status: that of device-run.sh (0: nothing failed), or 1 when the build failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${COLLC_GPU_BUILD:-build-gpu}
BUILDLOG=$BUILD/check-build.log
log() { echo "== $*"; }

have_build() { [ -x "$BUILD/bin/collc_gpu_tests" ] && [ -x "$BUILD/bin/collc_gpu_bench" ] &&
  [ -x "$BUILD/bin/collc_gpu_conformance" ]; }

if [ "${1:-}" = --build-only ] || ! have_build; then
  if ! command -v cmake >/dev/null || [ ! -d /usr/lib/llvm-14/lib/cmake/llvm ]; then
    log "no build at $BUILD and no LLVM 14 here to make one: run 'tests/gpu/check.sh --build-only'" \
        "on a machine with the project's dependencies and carry $BUILD/bin"
    exit 1
  fi
  log "building $BUILD (Release, SM90; log: $BUILDLOG)"
  mkdir -p "$BUILD"
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    >"$BUILDLOG" 2>&1 &&
    cmake --build "$BUILD" -j1 --target collc_gpu_tests collc_gpu_bench collc_gpu_conformance \
      collc_gpu_capi_tests collc >>"$BUILDLOG" 2>&1 || {
    log "build failed (tail of $BUILDLOG follows)"
    tail -30 "$BUILDLOG"
    exit 1
  }
fi
# The libraries the binaries load that a bare GPU image lacks (Open MPI,
# Gloo, hiredis and theirs) travel beside them in bin/lib, where
# device-run.sh puts them on LD_LIBRARY_PATH; glibc, the C++ runtime and
# NCCL are the GPU machine's own.
. tests/gpu/bare-image.sh
rm -rf "$BUILD/bin/lib" && mkdir -p "$BUILD/bin/lib"
BIN_ABS=$(cd "$BUILD/bin" && pwd)
for F in "$BUILD"/bin/collc "$BUILD"/bin/collc_gpu_* "$BUILD"/bin/libcollc.so*; do
  [ -f "$F" ] && ldd "$F"
done | awk '/=> \// {print $1, $3}' | sort -u | while read -r NAME FROM; do
  case $FROM in "$BIN_ABS"/*) continue ;; esac # carried already (libcollc.so)
  echo "$NAME" | grep -qE "$BARE_IMAGE_LIBS" || cp -L "$FROM" "$BUILD/bin/lib/$NAME"
done
log "carried in $BUILD/bin/lib: $(ls "$BUILD/bin/lib" | tr '\n' ' ')($(du -sh "$BUILD/bin" | cut -f1) in all)"
[ "${1:-}" = --build-only ] && { log "built $BUILD/bin"; exit 0; }

COLLC_GPU_BIN=$BUILD/bin exec tests/gpu/device-run.sh
