#!/usr/bin/env bash
# On the GPU machine: build sparsetc_bench (release, sm_90, in its own build folder build/bench so
# that no other configuration is touched), run it with the given arguments, and draw the plots.
# Writes to $OUT (the device tool's output folder) or build/bench-out:
#   bench.txt (the table), bench.log (progress and errors), bench.csv, bench.json, *.png
# Usage: bash bench/scripts/run_bench.sh [sparsetc_bench arguments]
# Example (the baseline): see docs/benchmarking.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/env.sh
out="${OUT:-build/bench-out}"
mkdir -p "$out" build/bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader \
  2>/dev/null | sed 's/^/gpu: /'
start=$(date +%s)
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DSPARSETC_BUILD_TESTS=OFF >build/bench/configure.log 2>&1 || { tail -30 build/bench/configure.log; exit 1; }
cmake --build build/bench --target sparsetc_bench -j "$(nproc)" >build/bench/build.log 2>&1 \
  || { grep -E "error|Error" build/bench/build.log | head -40; exit 1; }
echo "build: ok ($(( $(date +%s) - start )) s)"
build/bench/bench/sparsetc_bench --csv "$out/bench.csv" --json "$out/bench.json" "$@" \
  2> >(tee "$out/bench.log" >&2) | tee "$out/bench.txt"
rc=${PIPESTATUS[0]}
echo "sparsetc_bench: exit $rc ($(( $(date +%s) - start )) s in all)"
if [ -s "$out/bench.csv" ]; then
  python3 bench/scripts/plot_bench.py "$out/bench.csv" --out "$out" || echo "plots: failed (see above)"
fi
exit $rc
