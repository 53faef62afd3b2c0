#!/usr/bin/env bash
# Runs a primitives test on the CPU, for machines without a GPU: every CUDA thread is an OS
# thread, blocks run one after another, warp collectives go through per-warp barriers, device
# memory is host memory (so AddressSanitizer plays memcheck, and a __syncthreads() that not every
# thread reaches hangs instead of passing silently). Slow: a few hundred blocks per second, so
# run with KNN_PRIM_TEST_QUICK=1 and a --gtest_filter. Not a substitute for the GPU run: the
# memory model, timing and occupancy are the host's.
#
#   tests/primitives/cpu_emulation/run.sh test_device_scan --gtest_filter='*SumU32*'
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
name=$1
shift
work=${EMU_DIR:-/tmp/knn_prim_emu}
rm -rf "$work/src" && mkdir -p "$work/include"
cp "$here/cudaemu.hpp" "$work/include/"
printf '#pragma once\n#include "cudaemu.hpp"\n' >"$work/include/cuda_runtime_api.h"
cp "$work/include/cuda_runtime_api.h" "$work/include/cuda_runtime.h"
# kernel<<<grid, block, ...>>>(args) is not C++: rewrite launches into emu::launch calls.
python3 "$here/launch_rewrite.py" "$root/primitives/include" "$work/src/include"
python3 "$here/launch_rewrite.py" "$root/tests/primitives" "$work/src/tests"
extra=()
[ "$name" = test_device_radix_select ] && extra=("$work/src/tests/all_headers.cu")
g++ -std=c++17 -D__CUDACC__ -include "$work/include/cudaemu.hpp" -x c++ -I"$work/include" \
  -I"$work/src/include" -I"$work/src/tests" -O1 -g -pthread -fsanitize=address,undefined \
  -fno-sanitize-recover=undefined -Wno-unknown-pragmas "$work/src/tests/$name.cu" "${extra[@]}" \
  -x none -lgtest -lgtest_main -o "$work/$name"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} KNN_PRIM_TEST_QUICK=${KNN_PRIM_TEST_QUICK:-1} "$work/$name" "$@"
