#!/usr/bin/env bash
# Packs the sm_90 test binaries, tools and library of build/ci, stripped (the device code stays),
# into .device/prebuilt.txz (git-ignored, ~27 MB: room left in the device tool's 64 MiB carry for
# matrices) for scripts/device-check-prebuilt.sh on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build --preset ci
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
tar cf - build/ci/capi/libsparsetc.so* build/ci/tests/sparsetc_*_tests build/ci/bench/sparsetc_bench \
  build/ci/bench/sparsetc_cli | tar xf - -C "$stage"
strip "$stage"/build/ci/tests/sparsetc_*_tests "$stage"/build/ci/bench/sparsetc_bench "$stage"/build/ci/bench/sparsetc_cli \
  "$stage"/build/ci/capi/libsparsetc.so.*.*.*
mkdir -p .device
tar cJf .device/prebuilt.txz -C "$stage" build
ls -la .device/prebuilt.txz
