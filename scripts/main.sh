#!/usr/bin/env bash
# The main job on the embedded default: installs what it needs, builds collc,
# checks the GPT-2 example and prints it back through the pass pipeline.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target collc
build/bin/collc check examples/gpt2_ddp.coll
build/bin/collc opt examples/gpt2_ddp.coll --passes=verify
