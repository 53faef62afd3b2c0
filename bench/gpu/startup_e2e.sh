#!/usr/bin/env bash
# knn-cli predict on the Fashion-MNIST CSVs end to end on the GPU machine, stage by stage
# (bench/e2e/bench_predict_e2e.py), this build against a baseline build in the same run, and the
# start-up of short runs (bench/startup/bench_startup.py).
# Usage: bench/gpu/startup_e2e.sh NEW_BUILD [BASE_BUILD] CSV_DIR
#   With a model file: the new build's `knn-cli fit` writes one and predict --model is timed too.
set -uo pipefail
new=$1
if [ $# -ge 3 ]; then base=$2; data=$3; else base=""; data=$2; fi
here=$(cd "$(dirname "$0")/../.." && pwd)
train=$data/fashion-mnist-train.csv
test=$data/fashion-mnist-test.csv
cli=$new/apps/knn-cli/knn-cli
args=(predict --train "$train" --query "$test" -k 5 --device cuda)
runs=${RUNS:-7}
cmds=(--label "this build, from the CSVs" -- "$cli" "${args[@]}")
if [ -n "$base" ]; then
  cmds+=(--label "baseline build, from the CSVs" -- "$base/apps/knn-cli/knn-cli" "${args[@]}")
fi
if "$cli" fit --help > /dev/null 2>&1; then
  "$cli" fit --train "$train" -k 5 --device cuda -o /tmp/fm.knnmodel || exit 1
  cmds+=(--label "this build, from a model file" -- "$cli" predict --model /tmp/fm.knnmodel --query "$test" --device cuda)
fi
python3 "$here/bench/e2e/bench_predict_e2e.py" --runs "$runs" "${cmds[@]}"
echo
if [ -n "$base" ]; then
  python3 "$here/bench/startup/bench_startup.py" "$cli" "$base/apps/knn-cli/knn-cli" --gpu --runs 7 --data "$here/data"
else
  python3 "$here/bench/startup/bench_startup.py" "$cli" --gpu --runs 7 --data "$here/data"
fi
# The answers: the GPU from the CSVs, the CPU, and (where written) from the model file, byte for byte.
"$cli" "${args[@]}" -o /tmp/e2e_gpu.csv && "$cli" predict --train "$train" --query "$test" -k 5 --device cpu -o /tmp/e2e_cpu.csv
echo "GPU and CPU predictions identical: $(cmp -s /tmp/e2e_gpu.csv /tmp/e2e_cpu.csv && echo yes || echo NO)"
if [ -f /tmp/fm.knnmodel ]; then
  "$cli" predict --model /tmp/fm.knnmodel --query "$test" --device cuda -o /tmp/e2e_model.csv
  echo "predict --model and --train identical: $(cmp -s /tmp/e2e_gpu.csv /tmp/e2e_model.csv && echo yes || echo NO)"
fi
