#!/usr/bin/env bash
# Runs one command in a single process and under `mpirun -np N`, and checks that the outputs are
# byte-identical: standard output, every file named after --out-files, and the exit code; on
# failure, the error line (the launcher adds its own lines after it).
#   compare_ranks.sh MPIEXEC N WORKDIR [--out-files F1,F2] -- PROGRAM ARGS...
# In ARGS, @OUT@ stands for the run's own output folder.
set -euo pipefail
mpiexec=$1 np=$2 work=$3
shift 3
files=""
if [ "$1" = "--out-files" ]; then files=$2; shift 2; fi
[ "$1" = "--" ] && shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
rm -rf "$work" && mkdir -p "$work/one" "$work/many"
args_for() { local out=$1; shift; for a in "$@"; do printf '%s\0' "${a//@OUT@/$out}"; done; }
set +e
mapfile -d '' one < <(args_for "$work/one" "$@")
"${one[@]}" >"$work/one.out" 2>"$work/one.err"
code_one=$?
mapfile -d '' many < <(args_for "$work/many" "$@")
timeout 300 "$mpiexec" --oversubscribe -np "$np" "${many[@]}" >"$work/many.out" 2>"$work/many.err"
code_many=$?
set -e
fail=0
[ "$code_one" = "$code_many" ] || { echo "exit code: one process $code_one, $np ranks $code_many"; fail=1; }
cmp "$work/one.out" "$work/many.out" || { echo "standard output differs"; diff "$work/one.out" "$work/many.out" | head -20; fail=1; }
IFS=, read -ra outs <<<"$files"
for f in "${outs[@]}"; do
  cmp "$work/one/$f" "$work/many/$f" || { echo "output file $f differs"; fail=1; }
done
# Our own lines on stderr (notes, the best-k line, one error line) come first and must match,
# each run's output folder read as @OUT@.
n=$(wc -l <"$work/one.err")
if ! cmp <(sed "s|$work/one|@OUT@|g" "$work/one.err") <(head -n "$n" "$work/many.err" | sed "s|$work/many|@OUT@|g"); then
  echo "standard error differs:"; cat "$work/one.err"; echo "---"; cat "$work/many.err"; fail=1
fi
if [ "$code_one" != 0 ] && [ "$n" != 1 ]; then echo "expected one error line, got $n"; fail=1; fi
[ "$fail" = 0 ] && echo "identical: one process and $np ranks (exit $code_one)"
exit $fail
