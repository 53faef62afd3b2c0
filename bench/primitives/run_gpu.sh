#!/usr/bin/env bash
# The whole GPU-machine sequence for the primitives, in one go, within about 9 minutes on a
# 16-core machine with one GPU: configure, build, the gpu-labelled tests, compute-sanitizer
# memcheck and racecheck over the primitives test binaries, the gpu_large tests, the benchmark
# against CUB and torch.topk. Logs go to $OUT (at most 8 files); a short summary comes last.
#
# Run from the repository root. fast-cpp-csv-parser's header must be at
# .carry/include/libfccp/csv.h (the GPU machine has no libfccp-dev package).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=${BUILD_DIR:-/tmp/b}
JOBS=${JOBS:-16}
start=$(date +%s)
deadline=$((start + ${BUDGET_S:-530}))
summary="$OUT/summary.txt"
: >"$summary"

note() { echo "$*" | tee -a "$summary"; }
left() { echo $((deadline - $(date +%s))); }
# cap CAP RESERVE: seconds a step may take, keeping RESERVE seconds for the steps after it.
cap() {
  local c=$1 r=$(( $(left) - $2 ))
  [ "$r" -lt "$c" ] && c=$r
  [ "$c" -lt 10 ] && c=10
  echo "$c"
}
# step NAME LOG SECONDS CMD...: runs CMD with a time limit, appends its output to LOG.
step() {
  local name=$1 log=$2 limit=$3
  shift 3
  local t0=$(date +%s)
  echo "=== $name (limit ${limit}s): $*" >>"$log"
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  local took=$(( $(date +%s) - t0 ))
  local what="rc=$rc"
  [ "$rc" -eq 124 ] && what="TIMED OUT"
  note "$(printf '%-28s %-10s %4ss' "$name" "$what" "$took")"
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/gpu.txt" 2>&1 || true
note "GPU: $(head -1 "$OUT/gpu.txt")"
note "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# Configure and build. -k 0: a target of another part of the tree that fails to compile does not
# stop the primitives (the log says what failed).
step configure "$OUT/build.log" "$(cap 90 400)" \
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DKNN_FCCP_INCLUDE_DIR="$PWD/.carry/include" -DKNN_BUILD_TESTS=ON -DKNN_BUILD_BENCH=ON
step build "$OUT/build.log" "$(cap 300 300)" cmake --build "$B" -j "$JOBS" -- -k 0

# gpu label only (the regex "gpu" alone would also match gpu_large).
step "ctest -L gpu" "$OUT/ctest_gpu.log" "$(cap 150 200)" \
  ctest --test-dir "$B" -L '^gpu$' --output-on-failure -j 4 --timeout 120

# compute-sanitizer over every primitives test binary of the gpu label, smaller sizes.
SAN_TMP=$(mktemp -d)
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
bins=$(ls "$B"/tests/primitives/test_* 2>/dev/null | grep -v -e large -e '\.' || true)
sanitize() {  # TOOL: all binaries in parallel, each with its own log section
  local tool=$1 limit=$2 rc=0 pids=() b
  for b in $bins; do
    ( KNN_PRIM_TEST_QUICK=1 timeout --kill-after=5 "$limit" "$SAN" --tool "$tool" --error-exitcode 97 \
        --print-limit 20 "$b" >"$SAN_TMP/$tool.$(basename "$b")" 2>&1
      echo "rc=$?" >>"$SAN_TMP/$tool.$(basename "$b")" ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  for b in $bins; do
    local f="$SAN_TMP/$tool.$(basename "$b")"
    local r=$(tail -1 "$f")
    echo "--- $tool $(basename "$b"): $r" >>"$OUT/sanitizer.log"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAILED|PASSED|Error|Hazard" "$f" | head -40 >>"$OUT/sanitizer.log"
    [ "$r" = "rc=0" ] || rc=1
    rm -f "$f"
  done
  return $rc
}
if [ -x "$SAN" ] && [ -n "$bins" ]; then
  step "memcheck" "$OUT/sanitizer.log" "$(cap 120 170)" bash -c "$(declare -f sanitize); bins='$bins' SAN='$SAN' OUT='$OUT' SAN_TMP='$SAN_TMP'; sanitize memcheck $(cap 110 180)"
  step "racecheck" "$OUT/sanitizer.log" "$(cap 140 110)" bash -c "$(declare -f sanitize); bins='$bins' SAN='$SAN' OUT='$OUT' SAN_TMP='$SAN_TMP'; sanitize racecheck $(cap 130 120)"
else
  note "compute-sanitizer or test binaries missing: sanitizers skipped"
fi

step "ctest -L gpu_large" "$OUT/ctest_large.log" "$(cap 120 70)" \
  ctest --test-dir "$B" -L '^gpu_large$' --output-on-failure --timeout 110

if [ -x "$B/bench/primitives/bench_primitives" ]; then
  step bench_primitives "$OUT/bench.log" "$(cap 90 25)" "$B/bench/primitives/bench_primitives" --sweep
else
  note "bench_primitives was not built"
fi
step topk_torch "$OUT/bench.log" "$(cap 60 0)" python3 bench/primitives/topk_torch.py

{
  echo
  echo "== tests"
  grep -h -E "tests passed|tests failed|Failed|\*\*\*" "$OUT/ctest_gpu.log" "$OUT/ctest_large.log" 2>/dev/null | head -40
  echo "== sanitizers"
  grep -E "^--- " "$OUT/sanitizer.log" 2>/dev/null
  echo "== benchmark"
  sed -n '/^device/,$p' "$OUT/bench.log" 2>/dev/null | grep -v "^===" | head -60
  echo "total $(( $(date +%s) - start ))s"
} >>"$summary"
echo
cat "$summary"
