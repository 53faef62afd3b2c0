#!/usr/bin/env python3
"""knn-cli end to end, stage by stage: what a user waits for.

usage: bench_predict_e2e.py --runs N --label NAME -- KNN_CLI ARGS... [--label NAME -- KNN_CLI ARGS...]

Runs each command N times (the commands in turns) with KNN_STAGE_TIMES=1, stdout to /dev/null,
and prints per command the median wall time, the peak resident memory, and the median of each
stage that knn-cli reports on stderr (knn/stage_times.hpp). "process start" is the time from the
harness's spawn to knn-cli's first mark (exec, dynamic loading, static initialisation).
"""
import os
import statistics
import subprocess
import sys
import time


def parse(argv):
    runs, cmds, label, i = 5, [], None, 0
    while i < len(argv):
        a = argv[i]
        if a == "--runs":
            runs = int(argv[i + 1]); i += 2
        elif a == "--label":
            label = argv[i + 1]; i += 2
        elif a == "--":
            j = i + 1
            while j < len(argv) and argv[j] != "--label":
                j += 1
            cmds.append((label or f"command {len(cmds) + 1}", argv[i + 1:j])); label = None; i = j
        else:
            sys.exit(f"unexpected argument {a}")
    if not cmds:
        sys.exit(__doc__)
    return runs, cmds


def one_run(cmd):
    env = dict(os.environ, KNN_STAGE_TIMES="1")
    t0_epoch = time.time()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err.decode(errors='replace')}")
    stages, first, last = [], None, None
    for line in err.decode(errors="replace").splitlines():
        if not line.startswith("stage "):
            continue
        head, at = line.rsplit(" at ", 1)
        name_secs = head[len("stage "):].rstrip()
        name, secs = name_secs.rsplit(None, 2)[0], float(name_secs.rsplit(None, 2)[1])
        at = float(at)
        if first is None:
            first = at
        last = at if last is None else max(last, at)
        stages.append((name.strip(), secs))
    start = (first - t0_epoch) if first is not None else float("nan")
    # From the last mark to the process's end: static destructors and the libraries' teardown.
    end = (t0_epoch + wall - last) if last is not None else float("nan")
    return wall, start, stages, usage.ru_maxrss, end


def main():
    runs, cmds = parse(sys.argv[1:])
    results = {label: [] for label, _ in cmds}
    for label, cmd in cmds:  # one untimed run each: files in the page cache
        one_run(cmd)
    for _ in range(runs):
        for label, cmd in cmds:
            results[label].append(one_run(cmd))
    for label, cmd in cmds:
        rs = results[label]
        print(f"\n### {label}\n")
        print("`" + " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd)) + "`\n")
        print("| stage | median | min | max |")
        print("|---|---|---|---|")
        starts = [r[1] for r in rs]
        print(f"| process start (spawn to first mark) | {statistics.median(starts):.4f} s | {min(starts):.4f} s | {max(starts):.4f} s |")
        # By name: the GPU's start-up marks its stages from a thread of its own, so the order of
        # the lines differs from run to run. The first mark ("start") closes no stage.
        names = [n for n, _ in rs[0][2]][1:]
        for n in names:
            vals = [secs for r in rs for name, secs in r[2][1:] if name == n]
            print(f"| {n} | {statistics.median(vals):.4f} s | {min(vals):.4f} s | {max(vals):.4f} s |")
        ends = [r[4] for r in rs]
        print(f"| process end (last mark to exit) | {statistics.median(ends):.4f} s | {min(ends):.4f} s | {max(ends):.4f} s |")
        walls = [r[0] for r in rs]
        print(f"| **wall, whole process** | **{statistics.median(walls):.4f} s** | {min(walls):.4f} s | {max(walls):.4f} s |")
        print(f"\npeak resident memory of the process: {max(r[3] for r in rs) / 1024:.0f} MB (largest of {runs} runs)")


if __name__ == "__main__":
    main()
