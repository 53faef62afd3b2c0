#!/usr/bin/env python3
"""Wall time of short knn-cli runs, where start-up is most of the cost.

usage: bench_startup.py KNN_CLI [BASELINE_KNN_CLI] [--runs N] [--data DIR]

Times `knn-cli --help` and `knn-cli evaluate --train data/iris.csv --device cpu` (and, with
--gpu, the same evaluate with --device cuda) N times each, the programs in turns, and prints a
markdown table of the median and best wall times with the ratio to the baseline where one is
given. The time is the child's whole life: exec, dynamic loading, the run and exit.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


def wall(cmd):
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t1 = time.perf_counter()
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}")
    return t1 - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "data"))
    ap.add_argument("--gpu", action="store_true", help="also time evaluate with --device cuda")
    a = ap.parse_args()
    iris = os.path.join(a.data, "iris.csv")
    works = [("`knn-cli --help`", ["--help"]),
             ("`knn-cli evaluate --train data/iris.csv --device cpu`", ["evaluate", "--train", iris, "--device", "cpu"])]
    if a.gpu:
        works.append(("`knn-cli evaluate --train data/iris.csv --device cuda`", ["evaluate", "--train", iris, "--device", "cuda"]))
    programs = [("libknn", a.cli)] + ([("baseline", a.baseline)] if a.baseline else [])
    times = {(w, p): [] for w, _ in works for p, _ in programs}
    for w, args in works:
        for _, path in programs:
            wall([path] + args)  # one untimed run: the page cache holds the files
        for _ in range(a.runs):
            for p, path in programs:
                times[(w, p)].append(wall([path] + args))
    head = "| run | libknn median | libknn best |"
    if a.baseline:
        head += " baseline median | baseline best | ratio (medians) |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for w, _ in works:
        ours = times[(w, "libknn")]
        row = f"| {w} | {statistics.median(ours):.3f} s | {min(ours):.3f} s |"
        if a.baseline:
            base = times[(w, "baseline")]
            row += f" {statistics.median(base):.3f} s | {min(base):.3f} s | {statistics.median(ours) / statistics.median(base):.3f}x |"
        print(row)
    print(f"\n{a.runs} runs each, in turns; wall time of the whole process.")


if __name__ == "__main__":
    main()
