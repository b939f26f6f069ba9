#!/usr/bin/env bash
# Sets up a fresh machine, builds, and runs the whole test suite (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
source scripts/env.sh
cmake --workflow --preset ci
