#!/usr/bin/env bash
# One drop-in test: a program written against plain cuSPARSE runs three ways on the same random
# input (a fresh seed per run, SPARSETC_DROPIN_SEED to repeat one):
#   1. as built (the real cuSPARSE);
#   2. with LD_PRELOAD=libsparsetc_cusparse.so and SPARSETC_CUSPARSE_LOG=1: the log must show
#      <expect> (e.g. "served cusparseSpMM "; a leading '!' means it must not appear);
#   3. the same source renamed to sparsetc_cusparse (when given; '-' for none).
# Each run checks its own results against a float64 reference; the runs' results must agree to
# <rtol>. Exit 77 (skipped) when the program finds no GPU.
#   run_dropin.sh <program> <renamed program|-> <preload library> <expect> <rtol> <program arguments...>
# SPARSETC_DROPIN_PRELOAD_ENV: extra VAR=value settings for the preloaded run.
set -u
program=$1 renamed=$2 preload=$3 expect=$4 rtol=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed=${SPARSETC_DROPIN_SEED:-$(( (RANDOM << 15) | RANDOM ))}
echo "seed $seed (SPARSETC_DROPIN_SEED=$seed repeats this run)"

"$program" "$@" "$seed" "$work/cusparse.txt"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAILED: the program on the real cuSPARSE (exit $rc)"; exit 1; }

# shellcheck disable=SC2086
env ${SPARSETC_DROPIN_PRELOAD_ENV:-} SPARSETC_CUSPARSE_LOG=1 LD_PRELOAD="$preload" \
  "$program" "$@" "$seed" "$work/preload.txt" 2> "$work/log"
rc=$?
sed 's/^/  [preload] /' "$work/log" | sort | uniq -c | sed 's/^ *//'
[ $rc -eq 0 ] || { echo "FAILED: the program under LD_PRELOAD (exit $rc)"; exit 1; }
if [ "${expect#!}" != "$expect" ]; then
  if grep -qF -- "${expect#!}" "$work/log"; then echo "FAILED: the log shows '${expect#!}'"; exit 1; fi
else
  grep -qF -- "$expect" "$work/log" || { echo "FAILED: the log lacks '$expect'"; exit 1; }
fi
"$program" --compare "$work/cusparse.txt" "$work/preload.txt" "$rtol" ||
  { echo "FAILED: results with and without the preload differ"; exit 1; }
echo "preloaded run agrees with cuSPARSE"

if [ "$renamed" != "-" ]; then
  "$renamed" "$@" "$seed" "$work/renamed.txt" || { echo "FAILED: the renamed program"; exit 1; }
  "$program" --compare "$work/cusparse.txt" "$work/renamed.txt" "$rtol" ||
    { echo "FAILED: results of the renamed program differ"; exit 1; }
  echo "renamed program agrees with cuSPARSE"
fi
exit 0
