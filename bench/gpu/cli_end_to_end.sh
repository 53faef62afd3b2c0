#!/usr/bin/env bash
# The whole `knn-cli predict` on the Fashion-MNIST CSVs (scripts/fashion_mnist_csv.py writes
# them), with --device cuda and --device cpu, and how much of it is CSV parsing. Prints a markdown
# table of wall-clock medians of 3 runs:
#   total    knn-cli predict --train TRAIN --query TEST -k 5 -o FILE --device DEV
#   parsing  bench_csv_load TRAIN TEST: the two loads knn-cli makes (load_csv, then load_query_csv,
#            default options, all cores), each run in a fresh process as knn-cli's are
#   the rest total less parsing: start-up, scaling, the search (on the GPU with CUDA's start and
#            the uploads), the votes and writing the predictions
# Usage: bench/gpu/cli_end_to_end.sh BUILD_DIR CSV_DIR
# Exit status: 0 when every run worked (and the two devices' predictions are identical); 1 when
# some failed (its row says why, so a machine without a GPU still gets the CPU row) or the
# predictions differ; 2 when a program or a file is missing.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: bench/gpu/cli_end_to_end.sh BUILD_DIR CSV_DIR" >&2; exit 2; }
build=$1
data=$2
cli=$build/apps/knn-cli/knn-cli
load=$build/bench/bench_csv_load
train=$data/fashion-mnist-train.csv
test=$data/fashion-mnist-test.csv
for f in "$cli" "$load"; do
  [ -x "$f" ] || { echo "cli_end_to_end: no $f (build the knn-cli and bench_csv_load targets)" >&2; exit 2; }
done
for f in "$train" "$test"; do
  [ -f "$f" ] || { echo "cli_end_to_end: no $f (run scripts/fashion_mnist_csv.py --out $data)" >&2; exit 2; }
done
reps=3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Microseconds since the epoch; all arithmetic below is on integer microseconds.
now_us() { echo $(($(date +%s%N) / 1000)); }
# The median of the numbers on stdin, one a line.
median() { sort -n | sed -n "$(((reps + 1) / 2))p"; }
# Microseconds as seconds with three decimals.
secs() {
  local ms=$((($1 + 500) / 1000))
  printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}
# "0.632145" (bench_csv_load's seconds, always six decimals) as microseconds.
to_us() { echo $((10#${1/./})); }
# One line of a program's stderr, fit for a table cell.
reason() {
  local line
  line=$(grep -m1 . "$1" | cut -c1-120)
  echo "${line//|/\\|}"
}

status=0
# Both files are read once before any run, so that no run pays for reading them from disk.
cat "$train" "$test" > /dev/null

# Parsing: per run "sum train query"; the run of median sum is reported, its two parts below.
parse_runs=() parse_failed=""
for ((i = 0; i < reps; ++i)); do
  if ! read -r t q < <("$load" "$train" "$test" 2> "$tmp/load.err") || [ -z "${q:-}" ]; then
    parse_failed="bench_csv_load failed: $(reason "$tmp/load.err")"
    status=1
    break
  fi
  t=$(to_us "$t") q=$(to_us "$q")
  parse_runs+=("$((t + q)) $t $q")
done

# Totals per device; a device whose run fails gets the reason instead.
declare -A total failed
for dev in cuda cpu; do
  times=()
  for ((i = 0; i < reps; ++i)); do
    start=$(now_us)
    "$cli" predict --train "$train" --query "$test" -k 5 --device "$dev" -o "$tmp/pred_$dev.csv" 2> "$tmp/cli_$dev.err"
    rc=$?
    end=$(now_us)
    if ((rc != 0)); then
      failed[$dev]="not run: knn-cli exit $rc: $(reason "$tmp/cli_$dev.err")"
      status=1
      break
    fi
    times+=($((end - start)))
  done
  [ -n "${failed[$dev]:-}" ] || total[$dev]=$(printf '%s\n' "${times[@]}" | median)
done

parse=""
[ -n "$parse_failed" ] || read -r parse parse_train parse_test < <(printf '%s\n' "${parse_runs[@]}" | median)
rows=$(($(wc -l < "$train") - 1))
queries=$(($(wc -l < "$test") - 1))
echo "| knn-cli predict, $rows training rows, $queries queries, k = 5 (median of $reps, $(nproc) cores) | total (s) | CSV parsing, train + query (s) | the rest (s) | parsing's share |"
echo "|---|---|---|---|---|"
for dev in cuda cpu; do
  if [ -n "${failed[$dev]:-}" ]; then
    echo "| --device $dev | ${failed[$dev]} | | | |"
  elif [ -z "$parse" ]; then
    echo "| --device $dev | $(secs "${total[$dev]}") | $parse_failed | | |"
  else
    t=${total[$dev]}
    share=$(((1000 * parse + t / 2) / t))  # tenths of a per cent
    echo "| --device $dev | $(secs "$t") | $(secs "$parse") | $(secs $((t - parse))) | $((share / 10)).$((share % 10))% |"
  fi
done
echo
if [ -z "$parse_failed" ]; then
  echo "CSV parsing: $(secs "$parse_train") s for $train, $(secs "$parse_test") s for $test (bench_csv_load: load_csv and load_query_csv, as knn-cli calls them)."
else
  echo "CSV parsing: $parse_failed"
fi
if [ -z "${failed[cuda]:-}" ] && [ -z "${failed[cpu]:-}" ]; then
  same=yes
  cmp -s "$tmp/pred_cuda.csv" "$tmp/pred_cpu.csv" || { same=NO; status=1; }
  echo "Predictions of --device cuda and --device cpu identical: $same."
fi
exit $status
