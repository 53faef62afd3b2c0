#!/usr/bin/env bash
# CSV loading against R's data.table::fread and pandas.read_csv, in one run with the same
# threads, on the Fashion-MNIST training and query CSVs (scripts/fashion_mnist_csv.py).
#
# Usage: bench/cpu/csv_vs_fread.sh [THREADS=nproc] [BUILD_DIR=build-cpu] [DATA_DIR=data/fashion-mnist] [BASE_BUILD_DIR]
#
# Rounds in turns (libknn, the base build when given, fread, pandas), so that a machine whose
# pace drifts treats each the same; best of the rounds and median.
# - libknn: bench_csv_load in a fresh process per round (load_csv, then load_query_csv against
#   it, as knn-cli predict loads), OMP_NUM_THREADS=THREADS.
# - fread: setDTthreads(THREADS); fread(file) timed inside R (proc.time), R's start-up left out.
# - pandas: read_csv with its C engine, timed inside Python (one thread: pandas has no other).
# Prints a markdown table; the ratios are against fread's best.
set -euo pipefail
threads=${1:-$(nproc)}
build=${2:-build-cpu}
data=${3:-data/fashion-mnist}
base=${4:-}
rounds=${ROUNDS:-3}
train=$data/fashion-mnist-train.csv
query=$data/fashion-mnist-test.csv
for f in "$train" "$query"; do
  [ -f "$f" ] || { echo "no $f: run /usr/bin/python3 scripts/fashion_mnist_csv.py --out $data first" >&2; exit 2; }
done
loader=$build/bench/bench_csv_load
[ -x "$loader" ] || { echo "no $loader: build the bench_csv_load target first" >&2; exit 2; }
[ -z "$base" ] || [ -x "$base/bench/bench_csv_load" ] || { echo "no $base/bench/bench_csv_load" >&2; exit 2; }
Rscript -e 'suppressMessages(library(data.table))' 2>/dev/null || { echo "R's data.table is missing (Debian: r-cran-data.table)" >&2; exit 2; }
/usr/bin/python3 -c 'import pandas' 2>/dev/null || { echo "pandas is missing (Debian: python3-pandas)" >&2; exit 2; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for ((r = 1; r <= rounds; r++)); do
  OMP_NUM_THREADS=$threads "$loader" "$train" "$query" >>"$out/libknn"
  [ -z "$base" ] || OMP_NUM_THREADS=$threads "$base/bench/bench_csv_load" "$train" "$query" >>"$out/base"
  Rscript -e "suppressMessages(library(data.table)); setDTthreads($threads)
    t <- function(f) { s <- proc.time()[['elapsed']]; d <- fread(f); proc.time()[['elapsed']] - s }
    cat(sprintf('%.6f %.6f\n', t('$train'), t('$query')))" >>"$out/fread"
  /usr/bin/python3 -c "
import sys, time, pandas
def t(f):
    s = time.perf_counter(); pandas.read_csv(f); return time.perf_counter() - s
print('%.6f %.6f' % (t(sys.argv[1]), t(sys.argv[2])))" "$train" "$query" >>"$out/pandas"
done

/usr/bin/python3 - "$out" "$threads" "$train" "$query" <<'EOF'
import os, statistics, sys
out, threads, train, query = sys.argv[1:5]
def runs(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    rows = [list(map(float, l.split())) for l in open(path) if l.strip()]
    return [[r[i] for r in rows] for i in (0, 1)]
tools = [("libknn", runs("libknn")), ("libknn before", runs("base")), ("data.table::fread", runs("fread")),
         ("pandas.read_csv", runs("pandas"))]
tools = [(n, t) for n, t in tools if t]
fread = dict(tools)["data.table::fread"]
print(f"{threads} threads, best and median of {len(fread[0])} rounds, seconds; ratio = best / fread's best\n")
print("| file | " + " | ".join(n for n, _ in tools) + " | " + " | ".join(f"{n} / fread" for n, _ in tools if n != "data.table::fread") + " |")
print("|---" * (1 + 2 * len(tools) - 1) + "|")
for i, (label, path) in enumerate([("training", train), ("query", query)]):
    mb = os.path.getsize(path) / 1e6
    cells = [f"{min(t[i]):.3f} / {statistics.median(t[i]):.3f}" for _, t in tools]
    ratios = [f"{min(t[i]) / min(fread[i]):.2f}" for n, t in tools if n != "data.table::fread"]
    print(f"| {label} ({mb:.0f} MB) | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
EOF
