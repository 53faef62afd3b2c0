#!/usr/bin/env bash
# One call: sanitizers on the changed GPU code, tabular CLI runs on the GPU against the CPU, and
# the kNN benchmark before and after.
set -uo pipefail
b=/tmp/knn-gpu-build
cli=$b/apps/knn-cli/knn-cli
( timeout 300 bench/gpu/sanitize_each.sh $b memcheck 3 280 tests/test_cuda_tabular tests/test_cuda_scale > /tmp/memcheck.out 2>&1 ) &
( timeout 300 bench/gpu/sanitize_each.sh $b racecheck 3 280 tests/test_cuda_tabular 'tests/test_cuda_scale:*Tiles*:*Overflow*' > /tmp/racecheck.out 2>&1 ) &
# The CLI on tabular files: the GPU's output byte for byte the CPU's.
for args in "evaluate --train data/survey.csv --label Exer --impute mean" \
            "evaluate --train data/survey.csv --label Sex --impute median --drop-missing --loo" \
            "predict --train tests/tabular/data/classification-train.csv --query tests/tabular/data/classification-query.csv --impute mean --proba --id ID" \
            "predict --train tests/tabular/data/regression-train.csv --query tests/tabular/data/regression-query.csv --impute median --task regress --id ID --scale standard --metric l1" \
            "neighbors --train tests/tabular/data/classification-train.csv --query tests/tabular/data/classification-query.csv --impute most_frequent -k 9 --id ID"; do
  $cli $args --device cpu > /tmp/cli_cpu.out 2>/tmp/cli_cpu.err; rc1=$?
  $cli $args --device cuda > /tmp/cli_gpu.out 2>/tmp/cli_gpu.err; rc2=$?
  echo "cli [$args]: cpu rc=$rc1 cuda rc=$rc2 bytes=$(wc -c < /tmp/cli_gpu.out) identical=$(cmp -s /tmp/cli_cpu.out /tmp/cli_gpu.out && echo yes || echo NO)" | tee -a $OUT/final.txt
done
wait
cat /tmp/memcheck.out /tmp/racecheck.out | tee -a $OUT/final.txt
ROUNDS=1 timeout 330 bench/gpu/compare_builds.sh bench > /dev/null 2>&1
echo "compare rc=$?" | tee -a $OUT/final.txt
for f in $OUT/bench_base_1.log $OUT/bench_new_1.log; do echo "== $f"; grep -v "^$" $f | tail -14; done | tee -a $OUT/final.txt
