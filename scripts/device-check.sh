#!/usr/bin/env bash
# On the GPU machine (nvcc 13, CMake 4, no network, no apt): configure the release sm_90 build,
# build, run the whole test suite including the GPU tests, and print a short summary.
# Usage: scripts/device-check.sh [extra ctest arguments]
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
out="${OUT:-build/device-check}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
start=$(date +%s)
cmake --preset release -DSPARSETC_MATRIX_DIR="${SPARSETC_MATRIX_DIR:-$PWD/.matrices}" >"$out/configure.log" 2>&1 \
  || { tail -30 "$out/configure.log"; exit 1; }
cmake --build --preset release -j 16 >"$out/build.log" 2>&1 || { grep -E "error|Error" "$out/build.log" | head -40; exit 1; }
echo "build: ok ($(( $(date +%s) - start )) s)"
ctest --preset release -j 8 "$@" >"$out/ctest.log" 2>&1
rc=$?
if grep -q "CMake Error" "$out/ctest.log"; then
  grep -A4 "CMake Error" "$out/ctest.log" | head -20
  sed -n 1,12p build/release/tests/*_tests.cmake 2>/dev/null | head -30
fi
echo "---- summary"
grep -E "tests passed|tests failed" "$out/ctest.log"
sed -n '/Label Time Summary/,/^$/p' "$out/ctest.log"
echo "skipped: $(grep -c '(Skipped)' "$out/ctest.log" || true)"
grep -E "\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)" "$out/ctest.log" | head -30
build/release/bench/sparsetc_cli --gen poisson2d5:512 --n 32 --precision f32 || rc=1
# compute-sanitizer memcheck on small cases of every GPU kernel family (SPARSETC_SANITIZE=0 skips it).
if [ "${SPARSETC_SANITIZE:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
  filter='BcsrTcSpmm.OddShapesEveryLayout:BcsrTcSpmm.EmptyRowsAndBlockRows:BcsrTcSpmm.FewPanelsSpreadOverTheDevice'
  filter+=':CudaCoreSpmm.EmptyStripsAndEmptyMatrix'
  filter+=':CudaCoreSpmm.ShortRowModes:BinnedSpgemm.RectangularShapes:BinnedSpgemm.EmptyRowsAndEmptyMatrices'
  filter+=':TsparseSpgemm.OddRectangularShapes:TsparseSpgemm.CancelledEntriesAndEmptyTilesAreRemoved'
  filter+=':BinnedSpgemm.BlockDenseAccumulatorMatchesPaperKernelsFloat:BinnedSpgemm.RegisterSortMatchesHeapFloat'
  filter+=':GpuLocalTranspose.SmallCaseForTheSanitizers:GpuMirrorTranspose.SmallCasesForTheSanitizers'
  filter+=':GpuConvert.InvalidArgumentsAreReportedLikeTheHost'
  filter+=':GpuConvert.TiledDcsrEveryWayOnSmallInputs:GpuConvert.TiledDcsrStripWindowsAndTheirLimits:GpuConvertPoisoned.*:ColumnReuseGaps.MatchTheHostCount'
  filter+=':GpuConvert.NormalizeCooWithAndWithoutDuplicates:GpuConvert.NormalizeCooByRowBucketsAndTheirLimits'
  filter+="${SPARSETC_SANITIZE_EXTRA:+:$SPARSETC_SANITIZE_EXTRA}"
  if timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
      build/release/tests/sparsetc_gpu_engine_tests --gtest_filter="$filter" >"$out/memcheck.log" 2>&1; then
    echo "memcheck: clean ($(grep -c '^\[       OK' "$out/memcheck.log") tests: $filter)"
  else
    echo "memcheck: FAILED (see memcheck.log)"; grep -E "ERROR SUMMARY|Invalid|FAILED" "$out/memcheck.log" | head -20
    rc=1
  fi
  # Through the C API: B off 16-byte boundaries in buffers that end at its last element.
  api_filter='GpuTest.UnalignedRowMajor*'
  if timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
      build/release/tests/sparsetc_gpu_tests --gtest_filter="$api_filter" >"$out/memcheck_api.log" 2>&1; then
    echo "memcheck (C API): clean ($(grep -c '^\[       OK' "$out/memcheck_api.log") tests: $api_filter)"
  else
    echo "memcheck (C API): FAILED (see memcheck_api.log)"
    grep -E "ERROR SUMMARY|Invalid|FAILED" "$out/memcheck_api.log" | head -20
    rc=1
  fi
fi
exit $rc
