#!/usr/bin/env bash
# The main job on the embedded default (the local in-process backend):
# installs what it needs, builds collc, and runs the GPT-2 DDP example on
# eight local ranks: compiled, captured, replayed, and every result checked
# against an independently computed reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target collc
build/bin/collc run examples/gpt2_ddp.coll "$@"
