#!/usr/bin/env bash
# Packs the sm_90 test binaries, tools and library of build/ci into .device/prebuilt.tgz (git-ignored,
# ~20 MB) for scripts/device-check-prebuilt.sh on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build --preset ci
mkdir -p .device
tar czf .device/prebuilt.tgz build/ci/capi/libsparsetc.so* build/ci/tests/sparsetc_*_tests build/ci/bench/sparsetc_bench \
  build/ci/bench/sparsetc_cli
ls -la .device/prebuilt.tgz
