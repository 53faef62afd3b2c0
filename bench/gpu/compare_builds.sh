#!/usr/bin/env bash
# Before and after in one command on the GPU machine: builds a base commit (unpacked from
# .carry/base.tar) beside the working tree, both with this tree's bench_knn_gpu.cpp, then runs the
# kNN benchmark's core tables (Fashion-MNIST k = 5, 10^6 x 128 at k = 10 and 1,000, k above 2,048)
# on each in turn, twice, so that ratios come from one machine and one run.
# Usage: bench/gpu/compare_builds.sh build | bench   (logs and a summary in $OUT)
set -uo pipefail
out=${OUT:-$PWD/gpu-logs}
mkdir -p "$out"
base_src=/tmp/knn-base-src
base=/tmp/knn-base-build
new=/tmp/knn-gpu-build
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a -DKNN_FCCP_INCLUDE_DIR=$PWD/.carry/include)
case "${1:-}" in
  build)
    rm -rf $base_src && mkdir -p $base_src && tar -xf .carry/base.tar -C $base_src
    cp bench/gpu/bench_knn_gpu.cpp $base_src/bench/gpu/bench_knn_gpu.cpp
    start=$SECONDS
    cmake -S $base_src -B $base "${cfg[@]}" -DKNN_BUILD_TESTS=OFF -DKNN_BUILD_APPS=OFF > "$out/base_configure.log" 2>&1 &&
      cmake --build $base -j16 --target bench_knn_gpu > "$out/base_build.log" 2>&1
    echo "base build rc=$? in $((SECONDS - start)) s" | tee -a "$out/summary.txt"
    ;;
  bench)
    [ -x $base/bench/bench_knn_gpu ] || "$0" build
    [ -x $new/bench/bench_knn_gpu ] || bash bench/run_gpu.sh build
    [ -f /tmp/fm/fashion-mnist-train.csv ] || python3 scripts/fashion_mnist_csv.py --idx .carry/fm --out /tmp/fm > "$out/fm_convert.log" 2>&1
    for round in $(seq "${FIRST_ROUND:-1}" "${ROUNDS:-2}"); do
      for which in ${ORDER:-base new}; do
        b=$base; [ $which = new ] && b=$new
        timeout 240 $b/bench/bench_knn_gpu /tmp/fm/fashion-mnist-train.csv /tmp/fm/fashion-mnist-test.csv --core > "$out/bench_${which}_$round.log" 2>&1
        echo "bench $which round $round rc=$?" | tee -a "$out/summary.txt"
      done
    done
    ;;
esac
