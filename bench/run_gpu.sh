#!/usr/bin/env bash
# Everything the GPU machine runs, in one command: build for sm_90, the gpu-labelled tests,
# compute-sanitizer (memcheck, racecheck) over the primitives tests, the gpu_large tests, and
# the benchmarks with PyTorch beside them. Logs go to $OUT (or ./gpu-logs).
# Needs: .carry/include/libfccp/csv.h (fast-cpp-csv-parser) and .carry/fm/*.gz (Fashion-MNIST).
# Usage: bench/run_gpu.sh [steps...]   steps: build tests sanitize large bench (default: all)
set -uo pipefail
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out"
b=/tmp/knn-gpu-build
steps=${*:-build tests sanitize large bench}
summary=$out/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
has() { [[ " $steps " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$summary"

if has build; then
  start=$SECONDS
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DKNN_FCCP_INCLUDE_DIR=$PWD/.carry/include > "$out/configure.log" 2>&1 || { note "configure FAILED"; tail -30 "$out/configure.log"; exit 1; }
  cmake --build $b -j16 > "$out/build.log" 2>&1 || { note "build FAILED"; grep -E "error" -A5 "$out/build.log" | head -60; exit 1; }
  note "build ok in $((SECONDS - start)) s"
fi

if has tests; then
  ctest --test-dir $b -L '^gpu$' -j4 --output-on-failure --timeout 300 > "$out/ctest_gpu.log" 2>&1
  note "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$out/ctest_gpu.log")"
  grep -E "\*\*\*Failed|\*\*\*Exception|Not Run" "$out/ctest_gpu.log" | head -20 | tee -a "$summary"
  note "skipped: $(grep -c 'Skipped' "$out/ctest_gpu.log")"
fi

if has sanitize; then
  for tool in memcheck racecheck; do
    errors=0
    for t in $b/tests/primitives/test_*; do
      [ -x "$t" ] || continue
      log="$out/sanitize_${tool}_$(basename "$t").log"
      compute-sanitizer --tool $tool --error-exitcode 99 "$t" --gtest_filter='-*Large*' > "$log" 2>&1
      rc=$?
      summary_line=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
      [ $rc -eq 0 ] || errors=$((errors + 1))
      echo "$tool $(basename "$t"): rc=$rc $summary_line" >> "$summary"
    done
    t=$b/tests/test_cuda_backend
    log="$out/sanitize_${tool}_test_cuda_backend.log"
    compute-sanitizer --tool $tool --error-exitcode 99 "$t" --gtest_filter='*Duplicates*:*Excluded*:*SmallMemory*' > "$log" 2>&1
    rc=$?
    echo "$tool test_cuda_backend: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" >> "$summary"
    [ $rc -eq 0 ] || errors=$((errors + 1))
    note "compute-sanitizer $tool: $errors binaries with errors"
  done
fi

if has large; then
  ctest --test-dir $b -L gpu_large --output-on-failure --timeout 400 > "$out/ctest_gpu_large.log" 2>&1
  note "ctest -L gpu_large: $(grep -E 'tests passed|tests failed|No tests were found' "$out/ctest_gpu_large.log")"
fi

if has bench; then
  if [ -x $b/bench/primitives/bench_primitives ]; then
    timeout 180 $b/bench/primitives/bench_primitives > "$out/bench_primitives.log" 2>&1
    note "bench_primitives rc=$?"
    [ -f bench/primitives/topk_torch.py ] && timeout 120 python3 bench/primitives/topk_torch.py > "$out/topk_torch.log" 2>&1
  fi
  python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$out/fm_convert.log" 2>&1
  timeout 240 $b/bench/bench_knn_gpu /tmp/fm/fashion-mnist-train.csv /tmp/fm/fashion-mnist-test.csv > "$out/bench_knn_gpu.log" 2>&1
  note "bench_knn_gpu rc=$?"
  timeout 120 python3 bench/gpu/torch_knn.py .carry/fm > "$out/torch_knn.log" 2>&1
  note "torch_knn rc=$?"
  SKIP_SKLEARN=1 timeout 200 bench/k_sweep/run_sweep_bench.sh $b /tmp/fm cuda > "$out/k_sweep_gpu.log" 2>&1
  note "k-sweep GPU rc=$?"
fi
echo "==== summary"; cat "$summary"
for f in bench_knn_gpu torch_knn k_sweep_gpu bench_primitives topk_torch; do [ -f "$out/$f.log" ] && { echo "==== $f"; tail -40 "$out/$f.log"; }; done
