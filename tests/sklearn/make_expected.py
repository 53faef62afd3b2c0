#!/usr/bin/python3
"""Writes the scikit-learn agreement data in tests/sklearn/expected/.

For six cases (four real data sets from data/ and two synthetic ones made here) and every
configuration in {uniform, distance} weights x {l2, l1} metric x {minmax, none} scaling x k in
{1, 5, 15}, this records what scikit-learn's KNeighborsClassifier / KNeighborsRegressor
(algorithm='brute') predict, and the 15 nearest neighbours (indices and distances) of every query.
tests/test_sklearn_agreement.cpp checks libknn against these files.

Inputs are prepared exactly as libknn prepares them (DESIGN.md):
  - every cell is read as float32 (from its text, correctly rounded);
  - min-max scaling is fitted on the training rows: offset = min, scale = max - min (1 where the
    range is 0), x -> (x - offset) / scale computed in double from the float32 values, then
    rounded to float32 once; queries use the training parameters and are not clipped;
  - distances are computed from the float32 rows in double, one feature after another in feature
    order, each difference, product and sum rounded on its own; l2 is the square root of the sum.
Those exact distances are handed to scikit-learn as a precomputed matrix, so its neighbour
selection, voting, weighting and averaging run on the same numbers libknn uses. (scikit-learn's
own euclidean path computes |x|^2 - 2 x.y + |y|^2, which is not exact; the script reports how far
that is from the exact values, for the record.)

Rows where libknn may legitimately differ are marked tied (see tests/sklearn/README.md).

Run with Debian's python3-sklearn: /usr/bin/python3 tests/sklearn/make_expected.py
"""

import argparse
import csv
import os
import sys
from fractions import Fraction

import numpy as np
import sklearn
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.preprocessing import MinMaxScaler

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(HERE, "expected")

WEIGHTS = ("uniform", "distance")
METRICS = ("l2", "l1")
SCALINGS = ("minmax", "none")
KS = (1, 5, 15)
K_NEIGHBORS = 15           # length of the recorded neighbour lists
TIE_REL = 1e-9             # distances (or votes) this close count as tied
QUERY_EVERY = 4            # real data sets: rows 0, 4, 8, ... are the queries
SEED = 20240611            # synthetic data sets

REAL_CASES = (
    ("iris", "classification"),
    ("wine", "classification"),
    ("breast_cancer", "classification"),
    ("diabetes", "regression"),
)


# ----------------------------------------------------------------------------------------------
# Text -> float32, as libknn's loader does it

def f32_from_text(text):
    """The float32 nearest to the decimal text (ties to even), checked with exact arithmetic: going
    through double first could round twice."""
    value = np.float32(float(text))
    exact = Fraction(text)
    candidates = (np.nextafter(value, np.float32(-np.inf)), value,
                  np.nextafter(value, np.float32(np.inf)))

    def key(c):
        odd = int(np.array(c, dtype=np.float32).view(np.uint32)) & 1
        return (abs(Fraction(float(c)) - exact), odd)

    best = min(candidates, key=key)
    if best != value:
        raise ValueError(f"float32 of {text!r}: double rounding gives {value!r}, "
                         f"correct is {best!r}")
    if not np.isfinite(value):
        raise ValueError(f"{text!r} is not a finite float32")
    return value


def features_f32(rows, n_features):
    return np.array([[f32_from_text(cell) for cell in row[:n_features]] for row in rows],
                    dtype=np.float32)


# ----------------------------------------------------------------------------------------------
# Cases

class Case:
    def __init__(self, name, task, header, train_rows, query_rows):
        self.name = name
        self.task = task
        self.header = header          # feature names + label name
        self.train_rows = train_rows  # lists of cell texts, label last
        self.query_rows = query_rows

    @property
    def n_features(self):
        return len(self.header) - 1


def read_csv(path):
    with open(path, newline="", encoding="ascii") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def write_csv(path, header, rows):
    with open(path, "w", newline="\n", encoding="ascii") as f:
        f.write(",".join(header) + "\n")
        for row in rows:
            f.write(",".join(row) + "\n")


def real_case(name, task):
    header, rows = read_csv(os.path.join(REPO_ROOT, "data", name + ".csv"))
    queries = [r for i, r in enumerate(rows) if i % QUERY_EVERY == 0]
    train = [r for i, r in enumerate(rows) if i % QUERY_EVERY != 0]
    return Case(name, task, header, train, queries)


def synthetic_classification(rng):
    """300 training rows and 100 queries, 7 features of mixed scales, classes "a", "b", "c".
    Column x6 is constant over the training rows (zero range: scaled by 1) but not over the
    queries; some queries repeat training rows (distance 0), and two training rows share their
    features but not their class."""
    n_train, n_query = 300, 100
    n = n_train + n_query
    names = np.array(["a", "b", "c"])
    cls = rng.integers(0, 3, size=n)
    cols = [
        ["%.4f" % v for v in rng.normal(cls * 0.8, 1.0)],
        ["%.2f" % v for v in rng.normal(500.0 + 60.0 * cls, 100.0)],
        ["%.5f" % v for v in rng.uniform(0.0, 1.0, size=n) + 0.25 * cls],
        ["%d" % v for v in rng.integers(0, 6, size=n) + cls],
        ["%.4f" % v for v in rng.lognormal(0.3 * cls, 0.5)],
        ["2.5"] * n_train + ["%.3f" % v for v in rng.uniform(0.0, 5.0, size=n_query)],
        ["%.3f" % v for v in rng.normal(-1000.0 + 2.0 * cls, 3.0)],
    ]
    rows = [[c[i] for c in cols] + [str(names[cls[i]])] for i in range(n)]
    train, queries = rows[:n_train], rows[n_train:]
    # Same features as training row 7, the other class: a zero-distance tie between classes.
    twin_class = "b" if train[7][-1] != "b" else "c"
    train[n_train - 1] = train[7][:-1] + [twin_class]
    # Queries 0, 10, 20, 30, 40 repeat training rows exactly (query 0 repeats the twins).
    for q, t in zip((0, 10, 20, 30, 40), (7, 50, 120, 200, 260)):
        queries[q] = list(train[t])
    header = ["x%d" % j for j in range(1, 8)] + ["label"]
    return Case("synthetic_classification", "classification", header, train, queries)


def synthetic_regression(rng):
    """300 training rows and 100 queries, 5 features (one integer-valued, one of tiny spread),
    a smooth non-linear target plus noise; some queries repeat training rows."""
    n_train, n_query = 300, 100
    n = n_train + n_query
    x1 = rng.uniform(-3.0, 3.0, size=n)
    x2 = rng.normal(0.0, 2.0, size=n)
    x3 = rng.integers(0, 10, size=n)
    x4 = rng.uniform(0.0, 1000.0, size=n)
    x5 = rng.normal(50.0, 0.01, size=n)
    target = (50.0 + 10.0 * np.sin(x1) + x2 ** 2 + 0.5 * x3 + 0.002 * x4
              + 100.0 * (x5 - 50.0) + rng.normal(0.0, 0.5, size=n))
    rows = [["%.4f" % x1[i], "%.4f" % x2[i], "%d" % x3[i], "%.2f" % x4[i], "%.5f" % x5[i],
             "%.6f" % target[i]] for i in range(n)]
    train, queries = rows[:n_train], rows[n_train:]
    train[n_train - 1] = train[11][:-1] + [train[n_train - 1][-1]]  # twin features, other target
    for q, t in zip((0, 25, 50), (11, 100, 299)):
        queries[q] = list(train[t])
    header = ["x1", "x2", "x3", "x4", "x5", "target"]
    return Case("synthetic_regression", "regression", header, train, queries)


def load_synthetic(name, task):
    header, train = read_csv(os.path.join(OUT_DIR, name + "-train.csv"))
    header_q, queries = read_csv(os.path.join(OUT_DIR, name + "-query.csv"))
    if header_q != header:
        raise ValueError(f"{name}: train and query headers differ")
    return Case(name, task, header, train, queries)


# ----------------------------------------------------------------------------------------------
# libknn's scaling and distance, in numpy

def minmax_fit_transform(train32, query32):
    t64 = train32.astype(np.float64)
    offset = t64.min(axis=0)
    scale = t64.max(axis=0) - offset
    scale[scale == 0.0] = 1.0
    train_s = ((t64 - offset) / scale).astype(np.float32)
    query_s = ((query32.astype(np.float64) - offset) / scale).astype(np.float32)
    # Same transform as scikit-learn's MinMaxScaler up to rounding (it multiplies by 1/range).
    ref = MinMaxScaler().fit(t64)
    for mine, x in ((train_s, t64), (query_s, query32.astype(np.float64))):
        if not np.allclose(mine, ref.transform(x), rtol=1e-5, atol=1e-6):
            raise AssertionError("min-max scaling disagrees with MinMaxScaler")
    return train_s, query_s


def exact_distances(queries32, train32, metric):
    """queries x train matrix of DESIGN.md's distance: double accumulation in feature order."""
    q = queries32.astype(np.float64)
    t = train32.astype(np.float64)
    acc = np.zeros((q.shape[0], t.shape[0]), dtype=np.float64)
    for j in range(q.shape[1]):
        diff = q[:, j][:, None] - t[:, j][None, :]
        if metric == "l2":
            acc = acc + diff * diff
        else:
            acc = acc + np.abs(diff)
    return np.sqrt(acc) if metric == "l2" else acc


def near(a, b):
    return a == b or abs(a - b) <= TIE_REL * max(abs(a), abs(b))


def fmt(x):
    return "%.17g" % float(x)


# ----------------------------------------------------------------------------------------------

def run_case(case, notes):
    nf = case.n_features
    train32 = features_f32(case.train_rows, nf)
    query32 = features_f32(case.query_rows, nf)
    if case.task == "classification":
        y_train = np.array([r[-1] for r in case.train_rows], dtype=object)
        classes = sorted(set(y_train))
    else:
        y_train = np.array([float(r[-1]) for r in case.train_rows], dtype=np.float64)
    n_query = len(case.query_rows)
    predictions, neighbors = [], []
    stats = {"pred": 0, "pred_tied": 0, "nbr": 0, "nbr_tied": 0}

    for metric in METRICS:
        for scaling in SCALINGS:
            if scaling == "minmax":
                tr, qu = minmax_fit_transform(train32, query32)
            else:
                tr, qu = train32, query32
            d_query = exact_distances(qu, tr, metric)
            d_train = exact_distances(tr, tr, metric)

            # 16 nearest by scikit-learn on the exact distances; the 16th decides ties at 15.
            probe = KNeighborsClassifier if case.task == "classification" else KNeighborsRegressor
            model = probe(n_neighbors=K_NEIGHBORS + 1, algorithm="brute", metric="precomputed")
            model.fit(d_train, y_train)
            dist16, ind16 = model.kneighbors(d_query)
            # scikit-learn leaves the order of equal distances open; DESIGN.md orders them by
            # training index. Same set, same distances, canonical order.
            for q in range(n_query):
                order = np.lexsort((ind16[q], dist16[q]))
                dist16[q], ind16[q] = dist16[q][order], ind16[q][order]
                assert np.array_equal(dist16[q], d_query[q, ind16[q]])
                assert np.array_equal(dist16[q], np.sort(d_query[q])[:K_NEIGHBORS + 1])

            # For the record: scikit-learn's own distance computation against the exact one.
            native = probe(n_neighbors=K_NEIGHBORS, algorithm="brute", metric="minkowski",
                           p=2 if metric == "l2" else 1)
            native.fit(tr.astype(np.float64), y_train)
            nd, ni = native.kneighbors(qu.astype(np.float64))
            rel = np.abs(np.sort(nd, axis=1) - dist16[:, :K_NEIGHBORS])
            rel = rel / np.maximum(dist16[:, :K_NEIGHBORS], 1e-300)
            rel[dist16[:, :K_NEIGHBORS] == 0] = 0.0
            set_diff = sum(set(ni[q]) != set(ind16[q, :K_NEIGHBORS])
                           and not near(dist16[q, K_NEIGHBORS - 1], dist16[q, K_NEIGHBORS])
                           for q in range(n_query))
            notes.append(f"{case.name} {metric} {scaling}: scikit-learn's own {metric} distances: "
                         f"max relative error {rel.max():.2e} over neighbours at distance > 0, "
                         f"{set_diff} untied queries with another 15-neighbour set")

            # Neighbour lists.
            for q in range(n_query):
                boundary = near(dist16[q, K_NEIGHBORS - 1], dist16[q, K_NEIGHBORS])
                for r in range(K_NEIGHBORS):
                    tied = boundary and near(dist16[q, r], dist16[q, K_NEIGHBORS])
                    neighbors.append([case.name, metric, scaling, str(q), str(r + 1),
                                      str(ind16[q, r]), fmt(dist16[q, r]), str(int(tied))])
                    stats["nbr"] += 1
                    stats["nbr_tied"] += tied

            # Predictions.
            for weights in WEIGHTS:
                for k in KS:
                    est = (KNeighborsClassifier if case.task == "classification"
                           else KNeighborsRegressor)
                    model = est(n_neighbors=k, weights=weights, algorithm="brute",
                                metric="precomputed").fit(d_train, y_train)
                    pred = model.predict(d_query)
                    dk, ik = model.kneighbors(d_query)
                    for q in range(n_query):
                        tied = near(dist16[q, k - 1], dist16[q, k])
                        if case.task == "classification" and weights == "distance" and not tied:
                            tied = vote_near_tie(dk[q], y_train[ik[q]], classes)
                        text = str(pred[q]) if case.task == "classification" else fmt(pred[q])
                        predictions.append([case.name, weights, metric, scaling, str(k), str(q),
                                            text, str(int(tied))])
                        stats["pred"] += 1
                        stats["pred_tied"] += tied
    return predictions, neighbors, stats


def vote_near_tie(dist, labels, classes):
    """True when the two largest distance-weighted class votes are within TIE_REL of each other
    and the weights are not whole numbers (whole-number votes are exact; their ties follow the
    class-order rule on every side)."""
    if np.any(dist == 0.0):
        return False  # only the zero-distance neighbours count, each with weight 1
    w = 1.0 / dist
    votes = sorted((sum(w[labels == c]) for c in classes), reverse=True)
    return len(votes) > 1 and near(votes[0], votes[1])


def main(argv):
    parser = argparse.ArgumentParser(description="Write tests/sklearn/expected/.")
    parser.add_argument("--new-inputs", action="store_true",
                        help="generate the synthetic inputs anew from the seed instead of "
                             "reusing the CSV files already in expected/")
    args = parser.parse_args(argv)
    os.makedirs(OUT_DIR, exist_ok=True)

    cases = [real_case(name, task) for name, task in REAL_CASES]
    synthetic_files = [os.path.join(OUT_DIR, n + s) for n in
                       ("synthetic_classification", "synthetic_regression")
                       for s in ("-train.csv", "-query.csv")]
    if args.new_inputs or not all(os.path.exists(p) for p in synthetic_files):
        rng = np.random.default_rng(SEED)
        cases.append(synthetic_classification(rng))
        cases.append(synthetic_regression(rng))
    else:
        cases.append(load_synthetic("synthetic_classification", "classification"))
        cases.append(load_synthetic("synthetic_regression", "regression"))

    notes = []
    summary = []
    for case in cases:
        write_csv(os.path.join(OUT_DIR, case.name + "-train.csv"), case.header, case.train_rows)
        write_csv(os.path.join(OUT_DIR, case.name + "-query.csv"), case.header, case.query_rows)
        predictions, neighbors, stats = run_case(case, notes)
        write_csv(os.path.join(OUT_DIR, case.name + "-predictions.csv"),
                  ["case", "weights", "metric", "scaling", "k", "query", "prediction", "tied"],
                  predictions)
        write_csv(os.path.join(OUT_DIR, case.name + "-neighbors.csv"),
                  ["case", "metric", "scaling", "query", "rank", "index", "distance", "tied"],
                  neighbors)
        summary.append([case.name, case.task, str(len(case.train_rows)),
                        str(len(case.query_rows)), str(case.n_features), str(stats["pred"]),
                        str(stats["pred_tied"]), str(stats["nbr"]), str(stats["nbr_tied"])])
        print(f"{case.name}: {len(case.train_rows)} train, {len(case.query_rows)} queries; "
              f"predictions {stats['pred']} ({stats['pred_tied']} tied), "
              f"neighbours {stats['nbr']} ({stats['nbr_tied']} tied)")
    write_csv(os.path.join(OUT_DIR, "cases.csv"),
              ["case", "task", "train_rows", "query_rows", "features", "predictions",
               "predictions_tied", "neighbors", "neighbors_tied"], summary)
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}")
    for line in notes:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
