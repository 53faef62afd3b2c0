#!/usr/bin/env bash
# racecheck over every kernel of the GPU backend at sizes it finishes in seconds: knn-cli runs on
# small files that take each path (small k in fp32 and tf32, the fused pass, large k through the
# radix select and the segmented sort, l1 sums, rows tied past shared memory, votes, means and
# min-max scaling on the device). The backend's own tests are too large for racecheck's pace.
# Usage: bench/gpu/racecheck_cli.sh BUILD_DIR   (summary in $OUT/racecheck_cli.txt)
set -uo pipefail
b=$1
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out" /tmp/rc
cli=$b/apps/knn-cli/knn-cli
python3 - <<'PY'
import random
r = random.Random(5)
with open("/tmp/rc/train.csv", "w") as f:
    f.write(",".join(f"f{i}" for i in range(16)) + ",label\n")
    for i in range(3000):
        f.write(",".join(f"{r.uniform(-1, 1):.4f}" for _ in range(16)) + f",c{r.randint(0, 4)}\n")
with open("/tmp/rc/query.csv", "w") as f:
    f.write(",".join(f"f{i}" for i in range(16)) + "\n")
    for i in range(300):
        f.write(",".join(f"{r.uniform(-1, 1):.4f}" for _ in range(16)) + "\n")
# 40 distinct rows repeated: thousands of rows tied within the margin.
with open("/tmp/rc/ties.csv", "w") as f:
    f.write("a,b,label\n")
    for i in range(6000):
        f.write(f"{i % 40},{(i % 40) * 2},{i % 3}\n")
with open("/tmp/rc/ties_query.csv", "w") as f:
    f.write("a,b\n")
    for i in range(50):
        f.write(f"{i % 45},{(i % 45) * 2 + 0.5}\n")
PY
run() {
  local name=$1; shift
  timeout 280 compute-sanitizer --tool racecheck --error-exitcode 99 "$@" > /tmp/rc/$name.out 2> /tmp/rc/$name.log
  local rc=$?
  echo "racecheck $name rc=$rc $(grep -E 'RACECHECK SUMMARY' /tmp/rc/$name.out | tail -1)" | tee -a "$out/racecheck_cli.txt"
}
q="--train /tmp/rc/train.csv --query /tmp/rc/query.csv --device cuda"
run small_k_fp32 $cli predict $q -k 5 --precision fp32 &
run small_k_tf32 $cli predict $q -k 5 --precision tf32 &
run l1 $cli predict $q -k 9 --metric l1 &
run cosine_proba $cli predict $q -k 40 --metric cosine --proba --weights distance &
wait
run fused env KNN_GPU_FUSED=1 $cli predict $q -k 10 --precision tf32 &
run large_k $cli neighbors $q -k 2500 --precision fp32 &
run large_k_tf32 $cli neighbors $q -k 2049 --precision tf32 &
run tied_rows $cli neighbors --train /tmp/rc/ties.csv --query /tmp/rc/ties_query.csv -k 20 --device cuda &
wait
run evaluate_sweep $b/apps/k-sweep/k-sweep --data /tmp/rc/train.csv --k 1:60 --weights uniform,distance --folds 3 --device cuda &
run regress_standard $cli evaluate --train data/diabetes.csv --task regress --scale standard -k 7 --device cuda &
run tabular $cli evaluate --train data/survey.csv --label Exer --impute mean --device cuda &
wait
