#!/usr/bin/python3
"""Writes tests/tabular/data/ and tests/tabular/expected/: scikit-learn's answers on two small
tables with text columns, missing cells and R's row names, for tests/test_tabular_sklearn.cpp.

Two synthetic sets are drawn from a fixed seed (numpy's default_rng(SEED)):

  classification  300 training rows, 100 queries; numeric x1..x4, text colour and size, label
                  class (alpha, beta, gamma);
  regression      300 training rows, 100 queries; numeric a..d, text material and zone (zone
                  holds "1", "2", "3" and "north": a column with one text cell is categorical
                  entirely), numeric label target.

Both look like R's write.csv output: a first column with an empty header holding row names,
quoted text and header cells, unquoted numbers. About 5% of every feature column's cells are
missing, written as one of the default NA tokens (NA, empty, ?, NaN, nan, null, N/A, NULL). Each
query file has a column ID that the training file lacks (knn-cli's --id), and categories that no
training row has (colour purple, size XXL; material carbon, zone 4). The classification query
file has no label column; the regression one keeps it. Training rows 10..15 and queries 0 and 1
share the same outlying feature cells (the labels differ), so those two queries are tied.

Configurations (expected/configs.csv): k = 5 with --impute mean, median and most_frequent
(uniform weights, l2, minmax scaling: the tools' defaults), and --impute median with
--weights distance --metric l1 --scale standard.

For every case and configuration the script records scikit-learn's prediction for each query
(and predict_proba for classification), and the per-fold score (accuracy, or RMSE) of 5-fold
cross-validation on the folds k-sweep uses (libknn's assign_folds: seed 42, stratified for
classification), each fold's preprocessing fitted on its training rows only, through
sklearn.model_selection.cross_validate with a PredefinedSplit built from the fold ids.

The preprocessing is that of sklearn_pipeline.py (SimpleImputer, OneHotEncoder with
handle_unknown='ignore', MinMaxScaler / StandardScaler on the numeric columns only), computed on
the numbers the C++ tool computes on, so that both sides can agree to the last bit:
  * every numeric cell is read as float32, correctly rounded from its text;
  * imputed values are SimpleImputer's statistics rounded to float32 (the tool stores a float);
    the script checks that they equal the tool's rules (mean: sequential sum in double; median:
    mean of the two middle values for an even count; most frequent: the smallest of the ties);
  * scaling is (x - offset) / scale in double, rounded to float32, with the offset and scale
    of docs/design.md#scaling (checked against MinMaxScaler's and StandardScaler's fitted values);
  * the encoded columns come in the file's order (a categorical column's one-hot columns where the
    column is), and the distances are summed in double in that order, then handed to
    KNeighborsClassifier / KNeighborsRegressor as a precomputed matrix (algorithm='brute'), which
    does the neighbour selection, the zero-distance rule, the weights and the votes.
As a check, the plain float64 pipeline of sklearn_pipeline.py (scikit-learn's own distances) is
run too; it must give the same predictions on every query without a near tie at 1e-6, and the
same probabilities and fold scores within 1e-6.

A query is marked tied when its k-th and (k+1)-th smallest distances are equal or within 1e-9
relative (the neighbour set then depends on how equal distances are broken), or, for
distance-weighted classification without a neighbour at distance 0, when its two largest class
votes are within 1e-9 relative. A fold is marked tied when any of its held-out rows is.

Run with Debian's python3-sklearn (the python3 first on PATH may lack scikit-learn):
    /usr/bin/python3 tests/tabular/make_expected.py [--k-sweep build/apps/k-sweep/k-sweep]
With --k-sweep the folds are also checked against `k-sweep --save-folds`.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import types

import numpy as np
import pandas as pd
import sklearn
from sklearn.base import BaseEstimator
from sklearn.impute import SimpleImputer
from sklearn.metrics import pairwise_distances
from sklearn.model_selection import PredefinedSplit, cross_validate
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
OUT = os.path.join(HERE, "expected")

sys.path.insert(0, HERE)
import sklearn_pipeline as ref  # noqa: E402  (the reading rules and the float64 pipeline)


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# libknn's fold assignment and the exact text -> float32 conversion, as tests/k_sweep reimplements them.
kfolds = load_module("k_sweep_expected", os.path.join(ROOT, "tests", "k_sweep", "make_expected.py"))

SEED = 20240917
N_TRAIN, N_QUERY = 300, 100
K = 5
FOLDS = 5
FOLD_SEED = 42
NEAR = 1e-9          # distances (or votes) this close count as tied
LOOSE = 1e-6         # the float64 pipeline against the float32 one
MISSING_SHARE = 0.05
SAME_FEATURES = (10, 11, 12, 13, 14, 15)   # training rows given the same outlying feature cells
SAME_QUERIES = (0, 1)                      # queries given them too
NUMERIC_NA = ["NA", "", "?", "NaN", "nan", "null"]
TEXT_NA = ["NA", "", "N/A", "NULL"]

# name, --impute, --weights, --metric, --scale
CONFIGS = (
    ("mean", "mean", "uniform", "l2", "minmax"),
    ("median", "median", "uniform", "l2", "minmax"),
    ("most_frequent", "most_frequent", "uniform", "l2", "minmax"),
    ("distance_l1_standard", "median", "distance", "l1", "standard"),
)
CASES = (("classification", "classify", "class"), ("regression", "regress", "target"))


def fmt(v):
    return repr(float(v))


def near(a, b, rel=NEAR):
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


# ---------------------------------------------------------------------------------------------
# The synthetic tables, written the way R's write.csv writes a data frame

def number_text(v, decimals):
    t = f"{v:.{decimals}f}"
    return "0" if float(t) == 0.0 else t


def with_missing(rng, cells, tokens):
    """About MISSING_SHARE of the cells replaced by NA tokens (None marks them for writing)."""
    out = list(cells)
    for i in np.flatnonzero(rng.random(len(out)) < MISSING_SHARE):
        out[i] = (None, tokens[int(rng.integers(len(tokens)))])
    return out


def write_r_csv(path, header, columns, kinds, row_names):
    """header: column names (row-name column excluded); kinds: "num" or "text" per column, and a
    cell is a str or (None, token) for a missing one, written unquoted."""
    lines = ['"",' + ",".join(f'"{h}"' for h in header)]
    for r, name in enumerate(row_names):
        cells = [f'"{name}"']
        for col, kind in zip(columns, kinds):
            c = col[r]
            if isinstance(c, tuple):
                cells.append(c[1])
            else:
                cells.append(f'"{c}"' if kind == "text" else c)
        lines.append(",".join(cells))
    with open(path, "w", newline="\n", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")


def draw_classification(rng):
    n = N_TRAIN + N_QUERY
    x1 = rng.normal(50.0, 15.0, n)
    x2 = rng.uniform(0.0, 1000.0, n)
    x3 = rng.integers(0, 21, n)
    x4 = rng.normal(0.0, 0.01, n)
    colour = rng.choice(["red", "green", "blue", "yellow"], n, p=[0.4, 0.3, 0.2, 0.1])
    size = rng.choice(["S", "M", "L", "XL"], n)
    effect = {"red": 0.8, "green": 0.0, "blue": -0.8, "yellow": 0.4, "S": -0.5, "M": 0.0, "L": 0.3, "XL": 0.6}
    score = ((x1 - 50.0) / 15.0 + (x2 - 500.0) / 300.0 - (x3 - 10) / 6.0 + x4 * 50.0
             + np.array([effect[c] for c in colour]) + np.array([effect[s] for s in size])
             + rng.normal(0.0, 0.7, n))
    lo, hi = np.quantile(score[:N_TRAIN], [1 / 3, 2 / 3])
    label = np.where(score < lo, "alpha", np.where(score < hi, "beta", "gamma"))
    # Categories only the queries have.
    colour[N_TRAIN + rng.choice(N_QUERY, 6, replace=False)] = "purple"
    size[N_TRAIN + rng.choice(N_QUERY, 4, replace=False)] = "XXL"
    numeric = {"x1": [number_text(v, 2) for v in x1], "x2": [number_text(v, 1) for v in x2],
               "x3": [str(v) for v in x3], "x4": [number_text(v, 5) for v in x4]}
    text = {"colour": list(colour), "size": list(size)}
    outlier = ["140.00", "1500.0", "30", "0.06000", "black", "XL"]
    return numeric, text, list(label), outlier


def draw_regression(rng):
    n = N_TRAIN + N_QUERY
    a = rng.uniform(0.0, 10.0, n)
    b = rng.lognormal(2.0, 0.8, n)          # skewed: mean and median differ
    c = rng.choice([1, 2, 3, 4, 5], n, p=[0.1, 0.2, 0.35, 0.2, 0.15])
    d = rng.normal(-100.0, 30.0, n)
    material = rng.choice(["wood", "steel", "glass", "plastic"], n)
    zone = rng.choice(["1", "2", "3", "north"], n, p=[0.3, 0.3, 0.2, 0.2])
    effect = {"wood": 2.0, "steel": 6.0, "glass": -3.0, "plastic": 0.0, "1": 0.0, "2": 1.5, "3": 3.0, "north": -4.0}
    target = (3.0 * a + 0.5 * b - 1.2 * c + 0.05 * d + np.array([effect[m] for m in material])
              + np.array([effect[z] for z in zone]) + rng.normal(0.0, 1.5, n))
    material[N_TRAIN + rng.choice(N_QUERY, 5, replace=False)] = "carbon"
    zone[N_TRAIN + rng.choice(N_QUERY, 5, replace=False)] = "4"
    numeric = {"a": [number_text(v, 3) for v in a], "b": [number_text(v, 2) for v in b],
               "c": [str(v) for v in c], "d": [number_text(v, 1) for v in d]}
    text = {"material": list(material), "zone": list(zone)}
    outlier = ["15.000", "90.00", "9", "60.0", "brass", "north"]
    return numeric, text, [number_text(v, 3) for v in target], outlier


def write_case(rng, name, drawn, label_name, query_has_label):
    numeric, text, label, outlier = drawn
    header = list(numeric) + list(text)
    kinds = ["num"] * len(numeric) + ["text"] * len(text)
    columns = [with_missing(rng, col, NUMERIC_NA) for col in numeric.values()]
    columns += [with_missing(rng, col, TEXT_NA) for col in text.values()]
    # Six training rows and two queries with the same feature cells, far from the other rows (the
    # labels differ): such a query has its 5th and 6th neighbours at the same distance, a tie the
    # test must skip, while the other rows keep the group out of their 5 nearest.
    for col, cell in zip(columns, outlier):
        for r in SAME_FEATURES:
            col[r] = cell
        for q in SAME_QUERIES:
            col[N_TRAIN + q] = cell
    label_kind = "text" if label_name == "class" else "num"
    train_cols = [c[:N_TRAIN] for c in columns] + [label[:N_TRAIN]]
    write_r_csv(os.path.join(DATA, f"{name}-train.csv"), header + [label_name], train_cols, kinds + [label_kind],
                [str(i + 1) for i in range(N_TRAIN)])
    ids = [f"q{i + 1:03d}" for i in range(N_QUERY)]
    query_cols = [ids] + [c[N_TRAIN:] for c in columns]
    query_header, query_kinds = ["ID"] + header, ["text"] + kinds
    if query_has_label:
        query_cols.append(label[N_TRAIN:])
        query_header.append(label_name)
        query_kinds.append(label_kind)
    write_r_csv(os.path.join(DATA, f"{name}-query.csv"), query_header, query_cols, query_kinds,
                [str(i + 1) for i in range(N_QUERY)])


# ---------------------------------------------------------------------------------------------
# Reading a table as the tool does (sklearn_pipeline.py's rules)

class Features:
    """The training file's feature columns: names, kinds ("num"/"cat") and file positions."""

    def __init__(self, train):
        self.positions = [j for j in range(len(train.header)) if train.header[j] != "" and j != len(train.header) - 1]
        self.names = [train.header[j] for j in self.positions]
        self.kinds = []
        for j in self.positions:
            text = any(ref.parse_number(c) is None for c, m in zip(train.cells[j], train.missing[j]) if not m)
            self.kinds.append("cat" if text else "num")

    def frame(self, table, rows, as_float32):
        """DataFrame of the given rows: numeric columns float64 (float32 values when as_float32),
        NaN where missing; categorical columns object, NaN where missing."""
        data = {}
        for name, kind in zip(self.names, self.kinds):
            j = table.position_of(name)
            if kind == "cat":
                col = table.cells[j][rows].copy()
                col[table.missing[j][rows]] = np.nan
                data[name] = col
                continue
            values = np.full(len(rows), np.nan)
            for n, r in enumerate(rows):
                if table.missing[j][r]:
                    continue
                text = table.cells[j][r]
                if ref.parse_number(text) is None:
                    raise ValueError(f"{table.path}: row {r}, column {name}: {text!r} is not a finite number")
                values[n] = float(kfolds.f32(text)) if as_float32 else float(text)
            data[name] = values
        return pd.DataFrame(data, columns=self.names)


# ---------------------------------------------------------------------------------------------
# The pipeline on the tool's float32 numbers

def tool_fill(values, impute):
    """The tool's rule for a numeric column's fill value (float32), from float32 values."""
    if impute == "mean":
        total = 0.0
        for v in values:
            total += float(v)
        return np.float32(total / len(values))
    v = np.sort(values)
    if impute == "median":
        n = len(v)
        return np.float32(v[n // 2]) if n % 2 else np.float32((float(v[n // 2 - 1]) + float(v[n // 2])) / 2.0)
    uniq, counts = np.unique(v, return_counts=True)
    return np.float32(uniq[np.argmax(counts)])  # argmax: the first (smallest) of the most frequent


def scaler_parameters(col, scale):
    """offset and scale of docs/design.md#scaling for one numeric column (float32 values)."""
    x = col.astype(np.float64)
    if scale == "none":
        return 0.0, 1.0
    if scale == "minmax":
        lo, hi = float(x.min()), float(x.max())
        fitted = MinMaxScaler().fit(x.reshape(-1, 1))
        assert fitted.data_min_[0] == lo and fitted.data_max_[0] == hi
        return lo, (hi - lo if hi - lo > 0.0 else 1.0)
    total = 0.0
    for v in x:
        total += v
    mean = total / len(x)
    sq = 0.0
    for v in x:
        sq += (v - mean) * (v - mean)
    sd = float(np.sqrt(sq / len(x)))
    sd = sd if sd > 0.0 else 1.0
    fitted = StandardScaler().fit(x.reshape(-1, 1))
    assert near(fitted.mean_[0], mean, 1e-12) and near(fitted.scale_[0], sd, 1e-12), (fitted.mean_, mean, fitted.scale_, sd)
    return mean, sd


def distances(q32, t32, metric):
    """Query x training distances from float32 rows, summed in double in column order."""
    q = q32.astype(np.float64)
    t = t32.astype(np.float64)
    acc = np.zeros((q.shape[0], t.shape[0]))
    for j in range(q.shape[1]):
        d = q[:, j][:, None] - t[:, j][None, :]
        acc = acc + (d * d if metric == "l2" else np.abs(d))
    return np.sqrt(acc) if metric == "l2" else acc


class ToolNumbersKnn(BaseEstimator):
    """SimpleImputer + OneHotEncoder + scaler + k nearest neighbours on the tool's float32 numbers
    (see the module's description). X: a Features.frame(..., as_float32=True); y: class ids in
    the tool's class order, or regression targets."""

    def __init__(self, kinds=(), task="classify", impute="mean", weights="uniform", metric="l2", scale="minmax", k=K):
        self.kinds = kinds
        self.task = task
        self.impute = impute
        self.weights = weights
        self.metric = metric
        self.scale = scale
        self.k = k

    def fit(self, X, y):
        self.steps_ = []
        for name, kind in zip(X.columns, self.kinds):
            col = X[name].to_numpy()
            if kind == "num":
                imputer = SimpleImputer(strategy=self.impute).fit(col.reshape(-1, 1).astype(np.float64))
                fill = np.float32(imputer.statistics_[0])
                rule = tool_fill(col[~np.isnan(col)].astype(np.float32), self.impute)
                assert fill == rule, (name, self.impute, fill, rule)
                filled = np.where(np.isnan(col), float(fill), col).astype(np.float32)
                self.steps_.append(("num", fill, scaler_parameters(filled, self.scale)))
            else:
                cat = col.reshape(-1, 1).astype(object)
                imputer = SimpleImputer(strategy="most_frequent").fit(cat)
                encoder = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(imputer.transform(cat))
                assert list(encoder.categories_[0]) == sorted(encoder.categories_[0], key=lambda s: s.encode())
                self.steps_.append(("cat", imputer, encoder))
        self.train_ = self.encode(X)
        Knn = KNeighborsClassifier if self.task == "classify" else KNeighborsRegressor
        self.knn_ = Knn(n_neighbors=self.k, weights=self.weights, metric="precomputed", algorithm="brute")
        self.knn_.fit(distances(self.train_, self.train_, self.metric), y)
        self.y_ = np.asarray(y)
        return self

    def encode(self, X):
        parts = []
        for name, step in zip(X.columns, self.steps_):
            col = X[name].to_numpy()
            if step[0] == "num":
                _, fill, (offset, scale) = step
                filled = np.where(np.isnan(col), float(fill), col).astype(np.float32).astype(np.float64)
                parts.append(((filled - offset) / scale).astype(np.float32).reshape(-1, 1))
            else:
                _, imputer, encoder = step
                parts.append(encoder.transform(imputer.transform(col.reshape(-1, 1).astype(object))).astype(np.float32))
        return np.hstack(parts)

    def distances_to(self, X):
        return distances(self.encode(X), self.train_, self.metric)

    def predict(self, X):
        return self.knn_.predict(self.distances_to(X))

    def predict_proba(self, X):
        return self.knn_.predict_proba(self.distances_to(X))

    def tied(self, X):
        """Per row of X: whether the answer depends on how (nearly) equal values are broken."""
        dist = self.distances_to(X)
        ordered = np.sort(dist, axis=1)
        out = np.array([near(ordered[q, self.k - 1], ordered[q, self.k]) for q in range(len(dist))])
        if self.task == "classify" and self.weights == "distance":
            dk, ik = self.knn_.kneighbors(dist)
            for q in range(len(dist)):
                if out[q] or np.any(dk[q] == 0.0):
                    continue
                votes = {}
                for d, c in zip(dk[q], self.y_[ik[q]]):
                    votes[c] = votes.get(c, 0.0) + 1.0 / d
                top = sorted(votes.values(), reverse=True)
                out[q] = len(top) > 1 and near(top[0], top[1])
        return out


def reference_pipeline(config, task, features):
    """sklearn_pipeline.py's float64 pipeline (scikit-learn's own distances)."""
    _, impute, weights, metric, scale = config
    args = types.SimpleNamespace(task=task, impute=impute, weights=weights, metric=metric, scale=scale, k=K)
    numeric = [n for n, k in zip(features.names, features.kinds) if k == "num"]
    categorical = [n for n, k in zip(features.names, features.kinds) if k == "cat"]
    return ref.make_pipeline(args, numeric, categorical)


def loose_ties(model, X):
    """Queries whose k-th and (k+1)-th distances in the float64 pipeline are within LOOSE."""
    knn = model[-1]
    d = pairwise_distances(model[:-1].transform(X), knn._fit_X, metric=knn.effective_metric_)
    ordered = np.sort(d, axis=1)
    return np.array([near(ordered[q, K - 1], ordered[q, K], LOOSE) for q in range(len(d))])


# ---------------------------------------------------------------------------------------------

def write_csv(path, header, rows):
    with open(path, "w", newline="\n", encoding="ascii") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


def run_case(name, task, label_name, k_sweep):
    train = ref.Table(os.path.join(DATA, f"{name}-train.csv"), ref.DEFAULT_NA)
    query = ref.Table(os.path.join(DATA, f"{name}-query.csv"), ref.DEFAULT_NA)
    assert train.header[-1] == label_name and not train.missing[-1].any()
    features = Features(train)
    rows, qrows = np.arange(train.rows), np.arange(query.rows)
    X, Q = features.frame(train, rows, True), features.frame(query, qrows, True)
    X64, Q64 = features.frame(train, rows, False), features.frame(query, qrows, False)
    labels = list(train.cells[-1])
    if task == "classify":
        classes = ref.class_order(labels)
        y = np.array([classes.index(t) for t in labels])
    else:
        classes = None
        y = np.array([float(t) for t in labels])
    ids = query.cells[query.position_of("ID")]
    print(f"{name}: {train.rows} training rows, {query.rows} queries; features "
          + ", ".join(f"{n} ({k})" for n, k in zip(features.names, features.kinds)))

    # Predictions.
    head = ["config", "query", "id", "prediction"] + ([f"p_{c}" for c in classes] if classes else []) + ["tied"]
    out, summary = [], []
    for config in CONFIGS:
        cname, impute, weights, metric, scale = config
        model = ToolNumbersKnn(features.kinds, task, impute, weights, metric, scale, K).fit(X, y)
        pred, tied = model.predict(Q), model.tied(Q)
        proba = model.predict_proba(Q) if classes else None
        for q in range(query.rows):
            row = [cname, str(q), ids[q], classes[pred[q]] if classes else fmt(pred[q])]
            if classes:
                assert list(model.knn_.classes_) == list(range(len(classes)))
                row += [fmt(p) for p in proba[q]]
            out.append(row + [str(int(tied[q]))])
        # The float64 pipeline agrees wherever float32 rounding cannot matter.
        plain = reference_pipeline(config, task, features).fit(X64, y)
        loose = loose_ties(plain, Q64) | tied
        plain_pred = plain.predict(Q64)
        if classes:
            same = (plain_pred == pred) | loose
            assert np.all(np.abs(plain.predict_proba(Q64) - proba)[~loose] <= LOOSE)
        else:
            # Relative to the targets' scale: a mean near 0 can lose its relative accuracy.
            same = (np.abs(plain_pred - pred) <= LOOSE * np.abs(y).max()) | loose
        assert same.all(), f"{name} {cname}: float64 pipeline differs on queries {np.flatnonzero(~same)}"
        summary.append([name, cname, "predict", str(query.rows), str(int(tied.sum()))])
        print(f"  predict {cname}: {int(tied.sum())} of {query.rows} queries tied; "
              f"{int((~loose).sum())} compared with the float64 pipeline, all equal")
    write_csv(os.path.join(OUT, f"{name}-predictions.csv"), head, out)

    # Folds and per-fold scores.
    fold = kfolds.assign_folds(labels, FOLDS, FOLD_SEED, stratified=task == "classify")
    folds_text = kfolds.folds_text(fold)
    with open(os.path.join(OUT, f"{name}-folds.csv"), "w", newline="\n", encoding="ascii") as f:
        f.write(folds_text)
    if k_sweep:
        check_folds(k_sweep, name, task, folds_text)
    split = PredefinedSplit(np.array(fold))
    for f, (fit_rows, test_rows) in enumerate(split.split()):
        assert np.all(np.array(fold)[test_rows] == f)
        for j, kind in zip(features.positions, features.kinds):
            # A fold's training rows alone must type every column as the whole file does (the test
            # runs k-sweep --test on them).
            has_text = any(ref.parse_number(train.cells[j][r]) is None for r in fit_rows if not train.missing[j][r])
            assert has_text == (kind == "cat"), (name, f, train.header[j])
    score = "accuracy" if task == "classify" else "rmse"
    scoring = "accuracy" if task == "classify" else "neg_root_mean_squared_error"
    per_fold = []
    for config in CONFIGS:
        cname, impute, weights, metric, scale = config
        model = ToolNumbersKnn(features.kinds, task, impute, weights, metric, scale, K)
        cv = cross_validate(model, X, y, cv=split, scoring=scoring, return_estimator=True)
        values = cv["test_score"] if task == "classify" else -cv["test_score"]
        plain = cross_validate(reference_pipeline(config, task, features), X64, y, cv=split, scoring=scoring)
        plain_values = plain["test_score"] if task == "classify" else -plain["test_score"]
        n_tied = 0
        for f, ((_, test_rows), est) in enumerate(zip(split.split(), cv["estimator"])):
            tied = bool(est.tied(X.iloc[test_rows]).any())
            n_tied += tied
            if not tied:
                assert near(values[f], plain_values[f], LOOSE), (name, cname, f, values[f], plain_values[f])
            per_fold.append([cname, str(f), fmt(values[f]), str(int(tied))])
        summary.append([name, cname, "folds", str(FOLDS), str(n_tied)])
        print(f"  folds {cname}: {score} " + " ".join(f"{v:.6f}" for v in values) + f"; {n_tied} folds tied")
    write_csv(os.path.join(OUT, f"{name}-per-fold.csv"), ["config", "fold", score, "tied"], per_fold)
    return summary


def check_folds(binary, name, task, expected_text):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "folds.csv")
        cmd = [binary, "--data", os.path.join(DATA, f"{name}-train.csv"), "--task", task, "--impute", "mean",
               "--k", str(K), "--save-folds", path, "-o", os.path.join(tmp, "table.csv")]
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL)
        with open(path, encoding="ascii") as f:
            if f.read() != expected_text:
                raise AssertionError(f"{name}: k-sweep --save-folds differs from this script's folds")


def main(argv):
    parser = argparse.ArgumentParser(description="Write tests/tabular/data/ and tests/tabular/expected/.")
    parser.add_argument("--k-sweep", help="a built k-sweep: also check its --save-folds output")
    args = parser.parse_args(argv)
    os.makedirs(DATA, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(SEED)
    write_case(rng, "classification", draw_classification(rng), "class", query_has_label=False)
    write_case(rng, "regression", draw_regression(rng), "target", query_has_label=True)
    write_csv(os.path.join(OUT, "configs.csv"), ["config", "impute", "weights", "metric", "scale", "k"],
              [list(c) + [str(K)] for c in CONFIGS])
    summary = []
    for name, task, label_name in CASES:
        summary += run_case(name, task, label_name, args.k_sweep)
    write_csv(os.path.join(OUT, "cases.csv"), ["case", "config", "part", "rows", "tied"], summary)
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, pandas {pd.__version__}")
    if args.k_sweep:
        print("k-sweep --save-folds agrees with the folds computed here")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
