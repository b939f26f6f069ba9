#!/usr/bin/env bash
# The drop-in's speedup: dropin_bench as built (cuSPARSE), under the preload with the default
# SPARSETC_CUSPARSE_VALUES=reread, and with =stable; prints each case's medians and ratios.
#   run_dropin_bench.sh <dropin_bench> <libsparsetc_cusparse.so> [bench arguments...]
set -eu
bench=$1 preload=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bench" "$@" > "$work/cusparse.txt"
LD_PRELOAD="$preload" "$bench" "$@" > "$work/reread.txt"
SPARSETC_CUSPARSE_VALUES=stable LD_PRELOAD="$preload" "$bench" "$@" > "$work/stable.txt"
echo "op matrix rows nnz N|nnzC cusparse_ms dropin_ms(reread) speedup dropin_ms(stable) speedup"
paste -d' ' "$work/cusparse.txt" "$work/reread.txt" "$work/stable.txt" |
  awk '{ printf "%s %s %s %s %s %.4f %.4f %.2fx %.4f %.2fx\n", $1, $2, $3, $4, $5, $6, $12, $6 / $12, $18, $6 / $18 }'
