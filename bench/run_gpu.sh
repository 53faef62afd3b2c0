#!/usr/bin/env bash
# Everything the GPU machine runs, in one command: build for sm_90a, the gpu-labelled tests,
# the benchmarks with PyTorch beside them, compute-sanitizer (memcheck, racecheck) over the
# primitives tests and the GPU backend's tests, and the gpu_large tests.
# $OUT/summary.txt grows as each step ends (so a run cut short still reports what it did); the
# full logs are packed into $OUT/logs.tar.gz at the end.
# Needs: .carry/include/libfccp/csv.h (fast-cpp-csv-parser), .carry/nlohmann (nlohmann-json3-dev's
# include/ and share/cmake/) and .carry/fm/*.gz (Fashion-MNIST).
# Usage: bench/run_gpu.sh [steps...]
#   steps: build tests bench primbench sanitize synccheck oom cli e2e mpi mpibench large (default: the first five and large)
#   PRIM_ARGS (arguments of bench_primitives), SANITIZE_TOOLS (default "memcheck racecheck"), SANITIZE_ONLY (test binaries, by name),
#   SANITIZE_BACKEND_FILTER (gtest filter for test_cuda_backend) and DEADLINE (seconds; steps
#   that would start later are skipped) tune a run.
set -uo pipefail
out=${OUT:-$PWD/gpu-logs}
logs=/tmp/knn-gpu-logs
mkdir -p "$out" "$logs"
b=/tmp/knn-gpu-build
steps=${*:-build tests bench primbench sanitize large}
deadline=${DEADLINE:-100000}
summary=$out/summary.txt
note() { echo "$*" | tee -a "$summary"; }
has() {
  [[ " $steps " == *" $1 "* ]] || return 1
  if ((SECONDS > deadline)); then note "skipped $1: past the deadline (${SECONDS} s)"; return 1; fi
}
pack() { tar -czf "$out/logs.tar.gz" -C "$logs" . 2>/dev/null; }
trap pack EXIT
note "$(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader)"

if has build; then
  start=$SECONDS
  cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DKNN_FCCP_INCLUDE_DIR=$PWD/.carry/include -Dnlohmann_json_DIR=$PWD/.carry/nlohmann/share/cmake/nlohmann_json > "$logs/configure.log" 2>&1 || { note "configure FAILED"; tail -30 "$logs/configure.log"; exit 1; }
  cmake --build $b -j16 > "$logs/build.log" 2>&1 || { note "build FAILED"; grep -E "error" -A5 "$logs/build.log" | head -60 | tee -a "$summary"; exit 1; }
  note "build ok in $((SECONDS - start)) s"
fi

if has tests; then
  ctest --test-dir $b -L '^gpu$' -j4 --output-on-failure --timeout 300 > "$logs/ctest_gpu.log" 2>&1
  note "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$logs/ctest_gpu.log")"
  grep -E "\*\*\*Failed|\*\*\*Exception|Not Run|Skipped" "$logs/ctest_gpu.log" | head -20 | tee -a "$summary"
fi

if has bench; then
  python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$logs/fm_convert.log" 2>&1
  timeout 200 $b/bench/bench_knn_gpu /tmp/fm/fashion-mnist-train.csv /tmp/fm/fashion-mnist-test.csv > "$logs/bench_knn_gpu.log" 2>&1
  note "bench_knn_gpu rc=$?"; cat "$logs/bench_knn_gpu.log" >> "$summary"
  timeout 120 $b/bench/bench_knn_gpu /tmp/fm/fashion-mnist-train.csv /tmp/fm/fashion-mnist-test.csv --stages > "$logs/stages.log" 2>&1
  note "bench_knn_gpu --stages rc=$?"; grep -v "^$" "$logs/stages.log" >> "$summary"
  timeout 120 python3 bench/gpu/torch_knn.py .carry/fm > "$logs/torch_knn.log" 2>&1
  note "torch_knn rc=$?"; cat "$logs/torch_knn.log" >> "$summary"
  SKIP_SKLEARN=1 timeout 150 bench/k_sweep/run_sweep_bench.sh $b /tmp/fm cuda > "$logs/k_sweep_gpu.log" 2>&1
  note "k-sweep GPU rc=$?"; cat "$logs/k_sweep_gpu.log" >> "$summary"
fi

if has primbench && [ -x $b/bench/primitives/bench_primitives ]; then
  # PRIM_ARGS: e.g. --sweep (n from 2^16 up as well as 2^28)
  timeout 240 $b/bench/primitives/bench_primitives ${PRIM_ARGS:-} > "$logs/bench_primitives.log" 2>&1
  note "bench_primitives rc=$?"; cat "$logs/bench_primitives.log" >> "$summary"
  if [ -f bench/primitives/topk_torch.py ]; then
    timeout 90 python3 bench/primitives/topk_torch.py > "$logs/topk_torch.log" 2>&1
    note "topk_torch rc=$?"; cat "$logs/topk_torch.log" >> "$summary"
  fi
fi

sanitize_tools=${SANITIZE_TOOLS-memcheck racecheck}
if has synccheck; then sanitize_tools="$sanitize_tools synccheck"; steps="$steps sanitize"; fi
if has sanitize; then
  export KNN_PRIM_TEST_QUICK=1
  for tool in $sanitize_tools; do
    if ((SECONDS > deadline)); then note "skipped compute-sanitizer $tool: past the deadline"; continue; fi
    errors=0
    for t in $b/tests/primitives/test_* $b/tests/test_cuda_backend $b/tests/test_cuda_vote $b/tests/test_cuda_scale $b/tests/test_cuda_products; do
      [ -x "$t" ] || continue
      case "$t" in *large* | *radix_traits*) continue ;; esac  # long, or host code only
      [ -n "${SANITIZE_ONLY:-}" ] && [[ " $SANITIZE_ONLY " != *" $(basename "$t") "* ]] && continue
      filter='*'
      [ "$(basename "$t")" = test_cuda_backend ] && filter=${SANITIZE_BACKEND_FILTER:-'*Duplicates*:*Excluded*:*SmallMemory*:*Models*'}
      log="$logs/sanitize_${tool}_$(basename "$t").log"
      timeout 300 compute-sanitizer --tool $tool --error-exitcode 99 "$t" --gtest_filter="$filter" > "$log" 2>&1
      rc=$?
      [ $rc -eq 0 ] || errors=$((errors + 1))
      note "$tool $(basename "$t"): rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1) $(grep -E '^\[  (PASSED|FAILED)' "$log" | tr '\n' ' ')"
    done
    note "compute-sanitizer $tool: $errors binaries with errors or failures"
  done
fi

# A device-memory budget too small for the data: a smaller tile with the same answer, or one
# clear error line.
if has oom; then
  [ -f /tmp/fm/fashion-mnist-train.csv ] || python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$logs/fm_convert.log" 2>&1
  cli=$b/apps/knn-cli/knn-cli
  args=(predict --train /tmp/fm/fashion-mnist-train.csv --query /tmp/fm/fashion-mnist-test.csv -k 5)
  $cli "${args[@]}" --device cuda -o /tmp/pred_full.csv 2> "$logs/oom_full.err"; rc_full=$?
  $cli "${args[@]}" --device cuda --gpu-memory 256 -o /tmp/pred_256.csv 2> "$logs/oom_256.err"; rc_256=$?
  $cli "${args[@]}" --device cuda --gpu-memory 1 -o /tmp/pred_1.csv 2> "$logs/oom_1.err"; rc_1=$?
  $cli "${args[@]}" --device cpu -o /tmp/pred_cpu.csv 2> "$logs/oom_cpu.err"
  note "oom: default rc=$rc_full; --gpu-memory 256 rc=$rc_256, same predictions as default: $(cmp -s /tmp/pred_full.csv /tmp/pred_256.csv && echo yes || echo NO); as the CPU: $(cmp -s /tmp/pred_full.csv /tmp/pred_cpu.csv && echo yes || echo NO)"
  # 1 MiB holds no whole training set: the rows are searched in parts, or one clear error.
  if [ $rc_1 -eq 0 ]; then
    note "oom: --gpu-memory 1 rc=0 (searched in parts), same predictions as the CPU: $(cmp -s /tmp/pred_1.csv /tmp/pred_cpu.csv && echo yes || echo NO)"
  else
    note "oom: --gpu-memory 1 rc=$rc_1, output file left: $([ -e /tmp/pred_1.csv ] && echo YES || echo no), stderr: $(cat "$logs/oom_1.err")"
  fi
fi

# The whole knn-cli predict on the Fashion-MNIST CSVs, GPU and CPU, and how much of it is parsing.
if has cli; then
  [ -f /tmp/fm/fashion-mnist-train.csv ] || python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$logs/fm_convert.log" 2>&1
  timeout 300 bench/gpu/cli_end_to_end.sh $b /tmp/fm > "$logs/cli_end_to_end.log" 2>&1
  note "cli_end_to_end rc=$?"; cat "$logs/cli_end_to_end.log" >> "$summary"
fi

# knn-cli predict end to end, stage by stage, against a baseline tree in .carry/base where there is
# one (its knn-cli built alone), with start-up times.
if has e2e; then
  [ -f /tmp/fm/fashion-mnist-train.csv ] || python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$logs/fm_convert.log" 2>&1
  base_build=""
  if [ -d .carry/base ]; then
    cmake -S .carry/base -B /tmp/knn-base-build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DKNN_BUILD_TESTS=OFF -DKNN_BUILD_BENCH=OFF -DKNN_FCCP_INCLUDE_DIR=$PWD/.carry/include \
      -Dnlohmann_json_DIR=$PWD/.carry/nlohmann/share/cmake/nlohmann_json > "$logs/base_configure.log" 2>&1 &&
      cmake --build /tmp/knn-base-build -j16 --target knn-cli > "$logs/base_build.log" 2>&1 && base_build=/tmp/knn-base-build
    note "baseline build: ${base_build:-FAILED}"
  fi
  timeout 400 bench/gpu/startup_e2e.sh $b $base_build /tmp/fm > "$logs/startup_e2e.log" 2>&1
  note "startup_e2e rc=$?"; cat "$logs/startup_e2e.log" >> "$summary"
fi

# MPI on the GPU machine: sharded runs against one process, one rank per GPU.
if has mpi; then
  note "mpi: mpirun=$(command -v mpirun || echo none); gpus=$(nvidia-smi -L | wc -l); bench_knn_mpi=$([ -x $b/bench/bench_knn_mpi ] && echo built || echo absent)"
  if command -v mpirun >/dev/null && [ -x $b/bench/bench_knn_mpi ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    [ -f /tmp/fm/fashion-mnist-train.csv ] || python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$logs/fm_convert.log" 2>&1
    for d in cuda; do
      tests/mpi/compare_ranks.sh mpirun 2 /tmp/mpi_fm_$d -- $b/apps/knn-cli/knn-cli predict --train /tmp/fm/fashion-mnist-train.csv \
        --query /tmp/fm/fashion-mnist-test.csv -k 5 --proba --device $d > "$logs/mpi_fm_$d.log" 2>&1
      note "mpi FM predict --device $d, 2 ranks vs one process: rc=$? $(tail -1 "$logs/mpi_fm_$d.log")"
    done
  fi
fi

if has mpibench && command -v mpirun >/dev/null && [ -x $b/bench/bench_knn_mpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for shape in "10000000 128 10000 10" "60000 784 10000 5"; do
    for np in 1 2; do
      timeout 200 mpirun --oversubscribe -np $np $b/bench/bench_knn_mpi $shape cuda 3 > "$logs/mpibench.log" 2>&1
      note "bench_knn_mpi $shape np=$np rc=$?: $(tail -1 "$logs/mpibench.log")"
    done
  done
  for np in 1 2; do
    start=$(python3 -c "import time; print(time.time())")
    timeout 200 mpirun --oversubscribe -np $np $b/apps/knn-cli/knn-cli predict --train /tmp/fm/fashion-mnist-train.csv \
      --query /tmp/fm/fashion-mnist-test.csv -k 5 --device cuda -o /tmp/fm_np$np.csv 2> "$logs/mpi_cli_np$np.err"
    rc=$?
    note "knn-cli predict FM end to end np=$np rc=$rc $(python3 -c "import time; print(round(time.time() - $start, 3))") s"
  done
fi

if has large; then
  ctest --test-dir $b -L gpu_large --output-on-failure --timeout 400 > "$logs/ctest_gpu_large.log" 2>&1
  note "ctest -L gpu_large: $(grep -E 'tests passed|tests failed|No tests were found' "$logs/ctest_gpu_large.log")"
fi
note "$(date -u +%FT%TZ) done"
