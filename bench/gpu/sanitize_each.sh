#!/usr/bin/env bash
# compute-sanitizer over GPU test binaries one test at a time, several at once: racecheck on a
# whole backend binary outlasts any time limit, one test at a time does not. Each test gets its
# own timeout; the summary has one line per test and tool.
# Usage: bench/gpu/sanitize_each.sh BUILD_DIR TOOL JOBS TIMEOUT BINARY[:GTEST_FILTER] ...
#   e.g. sanitize_each.sh /tmp/knn-gpu-build racecheck 4 240 tests/test_cuda_scale 'tests/test_cuda_backend:*Duplicates*'
# Output: $OUT/sanitize_TOOL.txt (summary) and the logs in /tmp/knn-gpu-logs/sanitize_each/.
set -uo pipefail
b=$1 tool=$2 jobs=$3 limit=$4
shift 4
out=${OUT:-$PWD/gpu-logs}
logs=/tmp/knn-gpu-logs/sanitize_each
mkdir -p "$out" "$logs"
summary=$out/sanitize_$tool.txt
list=()
for spec in "$@"; do
  bin=${spec%%:*}
  filter='*'
  [[ $spec == *:* ]] && filter=${spec#*:}
  while read -r t; do list+=("$bin $t"); done < <("$b/$bin" --gtest_list_tests --gtest_filter="$filter" |
    awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}')
done
run_one() {
  local bin=$1 test=$2
  local log="$logs/${tool}_$(basename "$bin")_${test//\//_}.log"
  timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 "$b/$bin" --gtest_filter="$test" > "$log" 2>&1
  local rc=$?
  echo "$tool $(basename "$bin") $test rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1) $(grep -cE '^\[       OK \]' "$log") ok $(grep -cE '^\[  FAILED  \]' "$log") failed $(grep -cE '^\[  SKIPPED \]' "$log") skipped"
}
export -f run_one
export b tool limit logs
printf '%s\n' "${list[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}' >> "$summary"
sort "$summary" -o "$summary"
echo "$tool: $(grep -c 'rc=0 ' "$summary") of $(wc -l < "$summary") tests clean (rc=0); others: $(grep -v 'rc=0 ' "$summary" | awk '{print $3, $4}' | tr '\n' ';')"
