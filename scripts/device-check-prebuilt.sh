#!/usr/bin/env bash
# The device check without building on the GPU machine: runs test binaries built elsewhere for
# sm_90 (scripts/pack-prebuilt.sh packs them from build/ci into .device/prebuilt.txz) and prints a
# short summary. Device time is scarce; the compile is the same either way (the ci preset is the
# release sm_90 build). The full CTest run (scripts/device-check.sh) adds only the CPU-side
# checks that need the source tree (install consumers, ABI, CLI).
# Usage (on the GPU machine, with carry [".device", ".matrices"]):
#   bash scripts/device-check-prebuilt.sh [gtest filter]
set -uo pipefail
cd "$(dirname "$0")/.."
filter="${1:-*}"
out="${OUT:-build/device-check}"
mkdir -p "$out"
tar xJf .device/prebuilt.txz || { echo "no .device/prebuilt.txz (run scripts/pack-prebuilt.sh)"; exit 1; }
export LD_LIBRARY_PATH="$PWD/build/ci/capi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SPARSETC_MATRIX_DIR="${SPARSETC_MATRIX_DIR:-$PWD/.matrices}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
rc=0
for t in sparsetc_unit_tests sparsetc_capi_tests sparsetc_gpu_tests sparsetc_gpu_engine_tests; do
  start=$(date +%s)
  "build/ci/tests/$t" --gtest_filter="$filter" >"$out/$t.log" 2>&1 || rc=1
  passed=$(grep -c '^\[       OK \]' "$out/$t.log")
  skipped=$(grep -c '^\[  SKIPPED \]' "$out/$t.log")
  failed=$(grep -c '^\[  FAILED  \].*(' "$out/$t.log")
  echo "$t: $passed passed, $skipped skipped, $failed failed ($(( $(date +%s) - start )) s)"
  grep '^\[  FAILED  \].*(' "$out/$t.log" | head -20
done
grep -h '^\[ error \]' "$out"/*.log | sort | uniq | head -30
exit $rc
