#!/usr/bin/env bash
# The k-sweep benchmark of bench/RESULTS.md: k = 1..100 with 5-fold CV on the Fashion-MNIST
# training rows, against one 5-fold evaluation at k = 100 (same folds) and scikit-learn's
# per-k refits (timed for a few k, extrapolated to 100).
# Usage: bench/k_sweep/run_sweep_bench.sh [BUILD_DIR=build] [DATA_DIR=data/fashion-mnist] [DEVICE=cpu]
set -euo pipefail
build=${1:-build}
data=${2:-data/fashion-mnist}/fashion-mnist-train.csv
device=${3:-cpu}
[ -f "$data" ] || { echo "no $data: run scripts/fashion_mnist_csv.py first" >&2; exit 2; }
tmp=$(mktemp -d)
export OPENBLAS_CORETYPE=SkylakeX
t0=$(date +%s.%N)
"$build/apps/k-sweep/k-sweep" --data "$data" --k 1:100 --folds 5 --device "$device" --save-folds "$tmp/folds.csv" -o "$tmp/sweep.csv"
t1=$(date +%s.%N)
"$build/apps/knn-cli/knn-cli" evaluate --train "$data" -k 100 --folds 5 --device "$device" --format csv > "$tmp/eval.csv"
t2=$(date +%s.%N)
calc() { python3 -c "print($1)"; }
sweep=$(calc "$t1 - $t0"); single=$(calc "$t2 - $t1")
printf '| run (%s) | seconds |\n|---|---|\n' "$device"
printf '| k-sweep k = 1..100, 5 folds | %.2f |\n| knn-cli evaluate k = 100, 5 folds | %.2f |\n| ratio sweep / one evaluation | %.2f |\n' \
  "$sweep" "$single" "$(calc "$sweep / $single")"
grep -E '^100,' "$tmp/sweep.csv" | cut -d, -f1-3 | sed 's/^/sweep row k=100: /'
grep accuracy "$tmp/eval.csv" | sed 's/^/evaluate k=100: /'
if [ "${SKIP_SKLEARN:-0}" != 1 ]; then
  /usr/bin/python3 "$(dirname "$0")/sklearn_validation_curve.py" "$data" "$tmp/folds.csv" 1 100 | tee "$tmp/sk.txt"
  per_k=$(sed -n 's/^sklearn mean per k: \([0-9.]*\) s/\1/p' "$tmp/sk.txt")
  printf '| scikit-learn, 100 values of k (estimated from k = 1 and 100) | %.0f |\n| ratio scikit-learn / k-sweep | %.0f |\n' \
    "$(calc "$per_k * 100")" "$(calc "$per_k * 100 / $sweep")"
fi
rm -rf "$tmp"
