#!/usr/bin/python3
"""Writes tests/k_sweep/expected/: what scikit-learn scores on k-sweep's own folds.

For iris and wine (classification: accuracy) and diabetes (regression: RMSE), with uniform and
distance weights, k = 1..30, l2, min-max scaling and k-sweep's default folds (5-fold, seed 42,
stratified for classification), this records the score of every (fold, k) as computed by
scikit-learn's KNeighborsClassifier / KNeighborsRegressor (algorithm='brute'), and the mean over
the folds for every k. tests/test_k_sweep.cpp compares k-sweep's table with these files.

The inputs are prepared the way libknn prepares them (DESIGN.md), so both sides compute on the
same numbers:
  - folds: libknn's assign_folds (libknn/src/core/evaluation/folds.cpp) reimplemented here: a
    splitmix64 stream drives a Fisher-Yates shuffle of each class's rows (classes in libknn's
    sorted order; regression: all rows as one group), and the shuffled rows are dealt to the folds
    in turn, the count running on from class to class. The result is written as CASE-folds.csv,
    which must equal `k-sweep --save-folds` byte for byte (the C++ test checks that; so does this
    script when given --k-sweep);
  - every feature cell is read as float32, correctly rounded from its text;
  - min-max scaling is fitted on the fold's training rows: (x - min) / (max - min) in double from
    the float32 values, 1 in place of a zero range, rounded to float32 once;
  - distances are accumulated in double in feature order and handed to scikit-learn as a
    precomputed matrix (scikit-learn's own Euclidean path, |x|^2 - 2 x.y + |y|^2, is off the
    direct sum by up to about 4e-11 relative, which could move neighbours across a near tie).

A (fold, k) entry is marked tied when the answer may depend on how (nearly) equal values are
broken, where libknn and scikit-learn may legitimately differ:
  - for some query of the fold, its k-th and (k+1)-th smallest distances are within 1e-9
    relative (the set of k neighbours is ambiguous);
  - classification with distance weights: for some query without a neighbour at distance 0, the
    two largest class votes are within 1e-9 relative (summation order decides).
A per-k mean is marked tied when any of its folds is.

Run with Debian's python3-sklearn (the python3 first on PATH may lack scikit-learn):
    /usr/bin/python3 tests/k_sweep/make_expected.py [--k-sweep build/apps/k-sweep/k-sweep]
"""

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
from fractions import Fraction

import numpy as np
import sklearn
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "expected")

CASES = (("iris", "classify"), ("wine", "classify"), ("diabetes", "regress"))
WEIGHTS = ("uniform", "distance")
K_MAX = 30
FOLDS = 5
SEED = 42
NEAR = 1e-9
MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------------------------------
# Folds, as libknn assigns them

class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def shuffled(rows, rng):
    """Fisher-Yates from the back: swap position i-1 with next() % i, for i = n down to 2."""
    rows = list(rows)
    for i in range(len(rows), 1, -1):
        j = rng.next() % i
        rows[i - 1], rows[j] = rows[j], rows[i - 1]
    return rows


NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def class_order(labels):
    """libknn's LabelEncoder: numeric order when every label is a number, else byte order."""
    distinct = sorted(set(labels), key=lambda s: s.encode())
    if distinct and all(NUMBER.match(s) for s in distinct):
        distinct.sort(key=float)  # stable: equal values keep byte order
    return distinct


def assign_folds(labels, folds, seed, stratified):
    rng = SplitMix64(seed)
    n = len(labels)
    if stratified:
        ids = {c: i for i, c in enumerate(class_order(labels))}
        groups = [[] for _ in ids]
        for row, label in enumerate(labels):
            groups[ids[label]].append(row)
    else:
        groups = [list(range(n))]
    fold = [0] * n
    dealt = 0
    for group in groups:
        for row in shuffled(group, rng):
            fold[row] = dealt % folds
            dealt += 1
    return fold


# ---------------------------------------------------------------------------------------------
# Inputs as libknn reads and scales them

def f32(text):
    """The float32 nearest to the decimal text, ties to even (checked exactly: text -> double ->
    float32 can round twice)."""
    exact = Fraction(text.strip())
    guess = np.float32(float(exact))
    below = np.nextafter(guess, np.float32(-np.inf))
    above = np.nextafter(guess, np.float32(np.inf))

    def rank(c):
        even = int(np.array([c], dtype=np.float32).view(np.uint32)[0]) % 2 == 0
        return (abs(Fraction(float(c)) - exact), not even)

    best = min((below, guess, above), key=rank)
    if not np.isfinite(best):
        raise ValueError(f"{text!r} is not a finite float32")
    return best


def load(name):
    with open(os.path.join(ROOT, "data", name + ".csv"), newline="", encoding="ascii") as f:
        rows = list(csv.reader(f))
    body = rows[1:]
    x = np.array([[f32(c) for c in r[:-1]] for r in body], dtype=np.float32)
    labels = [r[-1].strip() for r in body]
    return x, labels


def minmax(train32, test32):
    t = train32.astype(np.float64)
    lo = t.min(axis=0)
    span = t.max(axis=0) - lo
    span[span == 0.0] = 1.0
    return (((t - lo) / span).astype(np.float32),
            ((test32.astype(np.float64) - lo) / span).astype(np.float32))


def l2_distances(a32, b32):
    """rows of a x rows of b: sum of squared differences in double, feature by feature, then sqrt."""
    a = a32.astype(np.float64)
    b = b32.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[0]))
    for j in range(a.shape[1]):
        d = a[:, j][:, None] - b[:, j][None, :]
        acc = acc + d * d
    return np.sqrt(acc)


def near(a, b):
    return a == b or abs(a - b) <= NEAR * max(abs(a), abs(b))


def fmt(v):
    return repr(float(v))


# ---------------------------------------------------------------------------------------------

def sequential_mean(values):
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def vote_tie(dist, classes_of_neighbours):
    """Two largest distance-weighted class votes near each other (no zero distance present)."""
    if np.any(dist == 0.0):
        return False
    votes = {}
    for d, c in zip(dist, classes_of_neighbours):
        votes[c] = votes.get(c, 0.0) + 1.0 / d
    top = sorted(votes.values(), reverse=True)
    return len(top) > 1 and near(top[0], top[1])


def run_case(name, task):
    x, labels = load(name)
    cls = task == "classify"
    fold = assign_folds(labels, FOLDS, SEED, stratified=cls)
    y = np.array(labels, dtype=object) if cls else np.array([float(v) for v in labels])
    per_fold = []   # weights, fold, k, score, tied
    table = {}      # (weights, k) -> ([scores per fold], tied)
    for f in range(FOLDS):
        test_rows = [i for i in range(len(fold)) if fold[i] == f]
        train_rows = [i for i in range(len(fold)) if fold[i] != f]
        train, test = minmax(x[train_rows], x[test_rows])
        d_test = l2_distances(test, train)
        d_train = l2_distances(train, train)
        ordered = np.sort(d_test, axis=1)
        set_tied = [any(near(ordered[q, k - 1], ordered[q, k]) for q in range(len(test_rows)))
                    for k in range(1, K_MAX + 1)]
        y_train, y_test = y[train_rows], y[test_rows]
        for w in WEIGHTS:
            for k in range(1, K_MAX + 1):
                est = KNeighborsClassifier if cls else KNeighborsRegressor
                model = est(n_neighbors=k, weights=w, algorithm="brute", metric="precomputed")
                model.fit(d_train, y_train)
                pred = model.predict(d_test)
                tied = set_tied[k - 1]
                if cls:
                    score = sum(int(p == t) for p, t in zip(pred, y_test)) / len(y_test)
                    if w == "distance" and not tied:
                        dk, ik = model.kneighbors(d_test)
                        tied = any(vote_tie(dk[q], y_train[ik[q]]) for q in range(len(test_rows)))
                else:
                    total = 0.0
                    for p, t in zip(pred, y_test):
                        total += (t - p) * (t - p)
                    score = float(np.sqrt(total / len(y_test)))
                per_fold.append([w, str(f), str(k), fmt(score), str(int(tied))])
                scores, any_tied = table.setdefault((w, k), ([], False))
                scores.append(score)
                table[(w, k)] = (scores, any_tied or tied)
    means = [[w, str(k), fmt(sequential_mean(table[(w, k)][0])), str(int(table[(w, k)][1]))]
             for w in WEIGHTS for k in range(1, K_MAX + 1)]
    return fold, per_fold, means


def write_csv(path, header, rows):
    with open(path, "w", newline="\n", encoding="ascii") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


def folds_text(fold):
    return "row,fold\n" + "".join(f"{i},{f}\n" for i, f in enumerate(fold))


def check_against_k_sweep(binary, name, task, expected_text):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "folds.csv")
        cmd = [binary, "--data", os.path.join(ROOT, "data", name + ".csv"), "--task", task,
               "--k", "1", "--save-folds", path, "-o", os.path.join(tmp, "table.csv")]
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        with open(path, encoding="ascii") as f:
            if f.read() != expected_text:
                raise AssertionError(f"{name}: k-sweep --save-folds differs from this script's folds")


def main(argv):
    parser = argparse.ArgumentParser(description="Write tests/k_sweep/expected/.")
    parser.add_argument("--k-sweep", help="a built k-sweep: also check its --save-folds output")
    args = parser.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    summary = []
    for name, task in CASES:
        fold, per_fold, means = run_case(name, task)
        text = folds_text(fold)
        with open(os.path.join(OUT, name + "-folds.csv"), "w", newline="\n", encoding="ascii") as f:
            f.write(text)
        if args.k_sweep:
            check_against_k_sweep(args.k_sweep, name, task, text)
        score = "accuracy" if task == "classify" else "rmse"
        write_csv(os.path.join(OUT, name + "-per-fold.csv"), ["weights", "fold", "k", score, "tied"], per_fold)
        write_csv(os.path.join(OUT, name + "-means.csv"), ["weights", "k", score + "_mean", "tied"], means)
        tied_folds = sum(r[-1] == "1" for r in per_fold)
        tied_means = sum(r[-1] == "1" for r in means)
        summary.append([name, task, score, str(len(per_fold)), str(tied_folds), str(len(means)), str(tied_means)])
        print(f"{name}: {len(per_fold)} (fold, k) entries, {tied_folds} tied; "
              f"{len(means)} means, {tied_means} tied")
    write_csv(os.path.join(OUT, "cases.csv"),
              ["case", "task", "score", "per_fold", "per_fold_tied", "means", "means_tied"], summary)
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}")
    if args.k_sweep:
        print("k-sweep --save-folds agrees with the folds computed here")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
