#!/usr/bin/env bash
# The CPU benchmark of bench/RESULTS.md in one run: libknn, FAISS and scikit-learn on the
# Fashion-MNIST CSVs (made by scripts/fashion_mnist_csv.py), plus the whole knn-cli run.
# Usage: bench/cpu/run_cpu_bench.sh [BUILD_DIR=build] [DATA_DIR=data/fashion-mnist]
set -euo pipefail
build=${1:-build}
data=${2:-data/fashion-mnist}
train=$data/fashion-mnist-train.csv
test=$data/fashion-mnist-test.csv
[ -f "$train" ] || { echo "no $train: run scripts/fashion_mnist_csv.py first" >&2; exit 2; }
export OPENBLAS_CORETYPE=SkylakeX
unset OPENBLAS_L2_SIZE
threads=$(nproc)
echo "## $(date -u +%F), $(lscpu | sed -n 's/^Model name: *//p'), $threads cores"
echo
echo "### libknn (bench_knn_cpu, best of 3)"
"$build/bench/bench_knn_cpu" "$train" "$test" 5 3
echo
echo "### FAISS IndexFlatL2 (best of 3)"
if [ -x "$build/bench/bench_faiss_cpu" ]; then
  OMP_NUM_THREADS=$threads "$build/bench/bench_faiss_cpu" "$train" "$test" 5 3
else
  echo "bench_faiss_cpu not built (libfaiss-dev missing)"
fi
echo
echo "### scikit-learn brute force"
/usr/bin/python3 bench/cpu/sklearn_baseline.py "$train" "$test" 5 "$threads"
echo
echo "### knn-cli predict from the CSV files (whole run)"
/usr/bin/time -f "knn-cli predict: %e s wall, peak resident %M KiB" \
  "$build/apps/knn-cli/knn-cli" predict --train "$train" --query "$test" -k 5 -o /tmp/knn_bench_pred.csv
