#!/usr/bin/env bash
# The main job: set up, build the release configuration, and multiply the embedded default
# problem (or the given arguments, passed to sparsetc_cli) on the GPU when present, else the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
source scripts/env.sh
cmake --preset release >/dev/null
cmake --build --preset release --target sparsetc_cli
exec build/release/bench/sparsetc_cli "$@"
