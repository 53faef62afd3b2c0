#!/usr/bin/env bash
# Nsight Compute on one onesweep pass of our u32 key sort and one of CUB's, from bench_primitives
# at n = 2^24 (both sorts run in the same binary on the same keys). Writes ncu_ours.txt and
# ncu_cub.txt to OUT_DIR. The GPU's clocks are left as they are (--clock-control none).
#   bench/primitives/profile_sort.sh BUILD_DIR OUT_DIR
set -euo pipefail
b=$1
out=$2
bench=$b/bench/primitives/bench_primitives
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
          --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats)
# Skip the warm-up sorts' passes; the first pass of a timed sort is as any other.
ncu --clock-control none -k regex:onesweep_kernel --launch-skip 8 --launch-count 1 "${sections[@]}" \
  "$bench" --n 16777216 --quick --reps 1 > "$out/ncu_ours.txt" 2>&1
ncu --clock-control none -k regex:Onesweep --launch-skip 8 --launch-count 1 "${sections[@]}" \
  "$bench" --n 16777216 --quick --reps 1 > "$out/ncu_cub.txt" 2>&1
