#!/usr/bin/env bash
# Installs the Debian packages collc builds and tests with. Idempotent: on a
# machine that has them it only refreshes the package lists.
set -euo pipefail

packages=(
  cmake ninja-build g++ clang python3
  llvm-14-dev llvm-14-tools          # LLVM ADT/Support, FileCheck, lit, not
  libclang-rt-14-dev                 # libFuzzer and sanitizer runtimes for clang
  libgtest-dev libgmock-dev libbenchmark-dev
  graphviz                           # renders `collc dump --format dot` in the tests
  libopenmpi-dev openmpi-bin         # Open MPI: the mpi backend, mpirun, MPI_Allreduce in `collc bench`
  libgloo-dev                        # Gloo (TCP): the gloo backend
  libhiredis-dev                     # hiredis, which the gloo backend's Redis rank claims call
  redis-server                       # a real Redis for the gloo backend's RedisStore tests
  python3-numpy python3-pytest python3-torch  # the Python package's tests (docs/python.md)
  libtorch-dev pybind11-dev python3-dev       # torch.distributed's "collc" backend (docs/torch.md)
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get update -qq; then
  echo "install-deps: apt-get update failed" >&2
  [ ${#missing[@]} -eq 0 ] || exit 1
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The NCCL backend needs the CUDA toolkit (with NCCL inside it) at its
# standard location; without it the build goes on and says the backend is off.
if [ ! -e /usr/local/cuda/include/nccl.h ]; then
  echo "install-deps: no CUDA toolkit with NCCL at /usr/local/cuda; the NCCL backend will be off"
fi
