#!/usr/bin/env bash
# A tuning switch on and off in one build, in one command on the GPU machine: the searches of
# bench_knn_gpu --targets (the row named by ROW, default all four), runs alternating between the
# two settings, then one run of each with KNN_GPU_TIMING=1 for the stage times. A switch changes
# no answer, so this times one build against itself.
# Usage: bench/gpu/switch_ab.sh VAR=VALUE [VAR=VALUE...]   (after bench/run_gpu.sh build)
#   ROUNDS (default 3), ROW (text of a --targets row name, say "k = 10"); logs and summary.txt in $OUT
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: $0 VAR=VALUE [VAR=VALUE...]" >&2; exit 2; }
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out"
b=/tmp/knn-gpu-build
summary=$out/summary.txt
note() { echo "$*" | tee -a "$summary"; }
[ -x $b/bench/bench_knn_gpu ] || { note "no $b/bench/bench_knn_gpu: run bench/run_gpu.sh build first"; exit 1; }
[ -f /tmp/fm/fashion-mnist-train.csv ] || python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$out/fm_convert.log" 2>&1
bench() {  # name, then the environment of the run
  local name=$1
  shift
  env "$@" timeout 200 $b/bench/bench_knn_gpu /tmp/fm/fashion-mnist-train.csv /tmp/fm/fashion-mnist-test.csv --targets "${ROW:-}" > "$out/$name.log" 2>&1
  note "$name rc=$?: $(grep -E '^\| (synthetic|Fashion)' "$out/$name.log" | tr '\n' ' ')"
}
for round in $(seq 1 "${ROUNDS:-3}"); do
  bench "off_$round"
  bench "on_$round" "$@"
done
for setting in off on; do
  set_env=()
  [ $setting = on ] && set_env=("$@")
  env "${set_env[@]}" KNN_GPU_TIMING=1 timeout 200 $b/bench/bench_knn_gpu /tmp/fm/fashion-mnist-train.csv /tmp/fm/fashion-mnist-test.csv \
    --targets "${ROW:-}" > "$out/stages_$setting.log" 2>&1
  note "stages $setting: $(grep -E '^gpu stages: .*total' "$out/stages_$setting.log" | tail -2 | tr '\n' ' ')"
done
