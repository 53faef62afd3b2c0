#!/usr/bin/env bash
# Sharded runs on a machine with several GPUs, one rank per GPU: byte-identity of 2 ranks against
# one process on Fashion-MNIST, then bench_knn_mpi (synthetic 10^7 x 128, and the Fashion-MNIST
# shape) and knn-cli end to end with 1 and 2 ranks. Prints a summary; logs go to $OUT.
#   bench/mpi/run_mpi_gpu.sh BIN_DIR FM_IDX_DIR
# BIN_DIR holds knn-cli and bench_knn_mpi built with CUDA and MPI. Without an MPI installation on
# the machine, source an env.sh that points at a carried one first (see bench/RESULTS.md).
set -uo pipefail
bin=$1 idx=$2
out=${OUT:-/tmp/mpi-gpu}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
now() { python3 -c "import time; print(time.time())"; }
since() { python3 -c "import time; print(round(time.time() - $1, 3))"; }
echo "$(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs) $(mpirun --version 2>&1 | head -1)"
python3 scripts/fashion_mnist_csv.py --idx "$idx" --out /tmp/fm > "$out/fm_convert.log" 2>&1
train=/tmp/fm/fashion-mnist-train.csv test=/tmp/fm/fashion-mnist-test.csv

for args in "predict --query $test -k 5 --proba" "neighbors --query $test -k 20" "evaluate --folds 3 -k 5"; do
  tests/mpi/compare_ranks.sh mpirun 2 /tmp/cmp -- "$bin/knn-cli" ${args%% *} --train $train ${args#* } --device cuda > "$out/compare.log" 2>&1
  echo "2 ranks vs one process, knn-cli ${args%% *} on Fashion-MNIST (cuda): rc=$? $(tail -1 "$out/compare.log")"
done

for shape in "10000000 128 10000 10" "10000000 128 10000 1000" "60000 784 10000 5"; do
  for np in 1 2; do
    timeout 240 mpirun --oversubscribe -np $np "$bin/bench_knn_mpi" $shape cuda 3 > "$out/bench.log" 2>&1
    echo "bench_knn_mpi $shape np=$np rc=$?: $(tail -1 "$out/bench.log")"
  done
done

for np in 1 2; do
  t=$(now)
  timeout 240 mpirun --oversubscribe -np $np "$bin/knn-cli" predict --train $train --query $test -k 5 --device cuda -o /tmp/fm_np$np.csv 2> "$out/cli_np$np.err"
  echo "knn-cli predict Fashion-MNIST end to end, np=$np: rc=$? $(since "$t") s"
done
cmp -s /tmp/fm_np1.csv /tmp/fm_np2.csv && echo "end-to-end outputs identical" || echo "end-to-end outputs DIFFER"
