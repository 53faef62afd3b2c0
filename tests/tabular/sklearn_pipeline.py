#!/usr/bin/python3
"""scikit-learn reference for knn-cli on tables with text columns, missing values and row names.

Reads a CSV file the way knn-cli does (rules below), fits scikit-learn's pipeline of imputation,
scaling, one-hot encoding and k nearest neighbours, and prints what knn-cli must print:

  predict mode   --train FILE --query FILE [--proba]
                 CSV on standard output: header `prediction` (with --proba one more column
                 p_<class> per class, in the class order described below),
                 one row per query row; with --id the query's ID column comes first (named as
                 in the header, or "id" for the empty header of R's row names).
  evaluate mode  --train FILE --folds-file FILE
                 CSV on standard output: header `score,mean,std`, then `accuracy` (classify) or
                 `rmse` and `r2` (regress): mean and population standard deviation (ddof=0) of
                 the score over the folds. The folds file has the columns `row,fold`: `row` a
                 0-based data row of --train (header not counted), `fold` any text naming a fold.
                 Each fold fits the whole pipeline on the other folds' rows only.

Rules for reading a table (the C++ tool implements the same):
  * Every cell is read as text (pandas dtype=str, keep_default_na=False) and stripped of
    surrounding spaces and tabs; the stripped text is what every rule below and every category
    and class name uses. Quoting is no type signal: R's "4" is the number 4.
  * A cell equal to one of the --na-values tokens is missing.
  * A column whose header is empty (R's row names; pandas names it "Unnamed: 0") is dropped
    unless --id, --label or a column list names it explicitly. Duplicate header names are an
    error.
  * Columns are named by header name or by 0-based index over the file's columns, the row-name
    column included (negative counts from the end); a header name wins over an index.
  * Features are all columns but the label, the --id column, the --ignore columns and unnamed
    ones. A feature column is categorical when a non-missing cell of the training file (all its
    rows, before rows with a missing label are dropped) is not a decimal number
    ([+-]digits[.digits][e[+-]digits], finite as a double) or when --categorical names it;
    otherwise it is numeric (float64). --numeric forces numeric: then every cell must parse.
    In a query file, a numeric column's non-missing cells must parse as numbers.
  * Rows whose label is missing are dropped (a note goes to standard error). Classification
    labels stay text; regression labels must be numbers.
  * Class order (docs/design.md, "Voting"): numeric order when every label is a number as above,
    else the order of the text (code points, the same as UTF-8 byte order); labels equal as
    numbers but different as text ("1", "1.0") stay distinct, in text order between themselves.
    scikit-learn would sort text labels as text only, so the classes are given to it as their
    0-based positions in this order and mapped back to their text; its vote-tie rule (the
    smallest class wins) and the p_<class> columns then follow this order.

Pipeline (scikit-learn 1.2):
  ColumnTransformer([
      ("num", Pipeline([SimpleImputer(strategy=--impute), scaler]), numeric columns),
      ("cat", Pipeline([SimpleImputer(strategy="most_frequent"),
                        OneHotEncoder(handle_unknown="ignore")]), categorical columns)])
  -> KNeighborsClassifier / KNeighborsRegressor(n_neighbors=k, weights, metric, algorithm="brute")
  scaler: MinMaxScaler, StandardScaler or "passthrough". With --impute none the imputers are left
  out and a missing feature value (in training or query rows) is an error. The one-hot columns
  are not scaled. The one-hot output is dense (sparse_output=False), which changes no value.
"""

import argparse
import csv
import math
import re
import sys

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.metrics import r2_score
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler

DEFAULT_NA = ["", "NA", "N/A", "NaN", "nan", "?", "null", "NULL"]
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
METRICS = {"l2": "euclidean", "l1": "manhattan", "cosine": "cosine"}
STRIP = " \t"


class UsageError(Exception):
    pass


def parse_number(text):
    """The cell's value if it is a finite decimal number, else None."""
    if not NUMBER.fullmatch(text):
        return None
    v = float(text)
    return v if math.isfinite(v) else None


class Table:
    """A CSV file as stripped text cells, with the missing cells marked."""

    def __init__(self, path, na_tokens):
        self.path = path
        with open(path, newline="", encoding="utf-8-sig") as f:
            header = next(csv.reader(f), None)
        if header is None:
            raise UsageError(f"{path}: empty file")
        self.header = [h.strip(STRIP) for h in header]
        seen = set()
        for h in self.header:
            if h and h in seen:
                raise UsageError(f"{path}: column name {h!r} occurs twice in the header")
            seen.add(h)
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False,
                         encoding="utf-8-sig")
        if df.shape[1] != len(self.header):
            raise UsageError(f"{path}: header has {len(self.header)} columns, rows have {df.shape[1]}")
        # Columns by position: pandas renames empty and duplicate names, the raw header does not.
        self.cells = [df.iloc[:, j].map(lambda s: s.strip(STRIP)).to_numpy(dtype=object)
                      for j in range(df.shape[1])]
        self.missing = [np.isin(c, list(na_tokens)) for c in self.cells]
        self.rows = len(df)

    def resolve(self, spec, option):
        """A column's position from its header name or its 0-based index (negative: from the end)."""
        s = spec.strip(STRIP)
        if s and s in self.header:
            return self.header.index(s)
        try:
            i = int(s)
        except ValueError:
            raise UsageError(f"--{option}: no column {spec!r} in {self.path}") from None
        n = len(self.header)
        if not -n <= i < n:
            raise UsageError(f"--{option}: column index {spec!r} is out of range for {self.path} ({n} columns)")
        return i % n

    def position_of(self, name):
        """A feature column of the training file found by name in this (query) file."""
        for j, h in enumerate(self.header):
            if h == name:
                return j
        raise UsageError(f"{self.path} has no column {name!r} (a feature of the training file)")


def class_order(labels):
    """The distinct labels in libknn's class order (see the module's description)."""
    distinct = sorted(set(labels))
    values = [parse_number(t) for t in distinct]
    if all(v is not None for v in values):
        return [t for _, t in sorted(zip(values, distinct))]
    return distinct


def column_list(table, text, option):
    if not text:
        return []
    return [table.resolve(part, option) for part in text.split(",")]


def numeric_column(table, j, rows, what):
    """Float64 values of column j (NaN where missing); raises on a cell that is not a number."""
    out = np.full(len(rows), np.nan)
    for n, r in enumerate(rows):
        if table.missing[j][r]:
            continue
        v = parse_number(table.cells[j][r])
        if v is None:
            raise UsageError(f"{table.path}: data row {r} (file line {r + 2}), column "
                             f"{table.header[j]!r}: {table.cells[j][r]!r} is not a number ({what})")
        out[n] = v
    return out


def feature_frame(table, positions, names, kinds, rows):
    """The features of the given rows as a DataFrame: float64 numeric columns, object categorical."""
    data = {}
    for j, name, kind in zip(positions, names, kinds):
        if kind == "num":
            data[name] = numeric_column(table, j, rows, "a numeric feature")
        else:
            col = table.cells[j][rows].copy()
            col[table.missing[j][rows]] = np.nan
            data[name] = col
    return pd.DataFrame(data, columns=names)


def make_pipeline(args, numeric, categorical):
    parts = []
    if numeric:
        steps = []
        if args.impute != "none":
            steps.append(("impute", SimpleImputer(strategy=args.impute)))
        scaler = {"minmax": MinMaxScaler(), "standard": StandardScaler(), "none": "passthrough"}[args.scale]
        steps.append(("scale", scaler))
        parts.append(("num", Pipeline(steps), numeric))
    if categorical:
        steps = []
        if args.impute != "none":
            steps.append(("impute", SimpleImputer(strategy="most_frequent")))
        steps.append(("onehot", OneHotEncoder(handle_unknown="ignore", sparse_output=False)))
        parts.append(("cat", Pipeline(steps), categorical))
    if not parts:
        raise UsageError("no feature columns")
    Knn = KNeighborsClassifier if args.task == "classify" else KNeighborsRegressor
    knn = Knn(n_neighbors=args.k, weights=args.weights, metric=METRICS[args.metric], algorithm="brute")
    return Pipeline([("columns", ColumnTransformer(parts)), ("knn", knn)])


def check_complete(frame, path, rows):
    """With --impute none a missing feature value is an error."""
    na = frame.isna().to_numpy()
    if na.any():
        i, j = np.argwhere(na)[0]
        raise UsageError(f"{path}: data row {rows[i]} (file line {rows[i] + 2}), column "
                         f"{frame.columns[j]!r} is missing; give --impute to fill missing values")


def fmt(v):
    return repr(float(v))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--train", required=True, metavar="FILE")
    p.add_argument("--query", metavar="FILE")
    p.add_argument("--folds-file", metavar="FILE")
    p.add_argument("--proba", action="store_true")
    p.add_argument("--label", metavar="COL")
    p.add_argument("--ignore", metavar="COLS")
    p.add_argument("--id", metavar="COL")
    p.add_argument("-k", "--k", type=int, default=5)
    p.add_argument("--weights", choices=["uniform", "distance"], default="uniform")
    p.add_argument("--metric", choices=list(METRICS), default="l2")
    p.add_argument("--scale", choices=["minmax", "standard", "none"], default="minmax")
    p.add_argument("--impute", choices=["mean", "median", "most_frequent", "none"], default="none")
    p.add_argument("--na-values", metavar="LIST",
                   help="comma-separated tokens read as missing (default: empty,NA,N/A,NaN,nan,?,null,NULL)")
    p.add_argument("--task", choices=["classify", "regress"], default="classify")
    p.add_argument("--categorical", metavar="COLS")
    p.add_argument("--numeric", metavar="COLS")
    p.add_argument("--verbose", action="store_true", help="each fold's scores to standard error")
    a = p.parse_args(argv)
    if (a.query is None) == (a.folds_file is None):
        p.error("give exactly one of --query (predict) and --folds-file (evaluate)")
    if a.proba and a.query is None:
        p.error("--proba needs --query")
    if a.proba and a.task != "classify":
        p.error("--proba needs --task classify")
    if a.k < 1:
        p.error("-k must be at least 1")
    return a


def main(argv):
    args = parse_args(argv)
    na_tokens = DEFAULT_NA if args.na_values is None else [t.strip(STRIP) for t in args.na_values.split(",")]
    train = Table(args.train, na_tokens)
    ncol = len(train.header)

    label = train.resolve(args.label, "label") if args.label is not None else ncol - 1
    id_col = train.resolve(args.id, "id") if args.id is not None else None
    ignored = set(column_list(train, args.ignore, "ignore"))
    features = [j for j in range(ncol)
                if j != label and j != id_col and j not in ignored and train.header[j] != ""]
    if id_col == label:
        raise UsageError("--id and --label name the same column")
    forced_cat = set(column_list(train, args.categorical, "categorical"))
    forced_num = set(column_list(train, args.numeric, "numeric"))
    for option, cols in (("categorical", forced_cat), ("numeric", forced_num)):
        for j in cols:
            if j not in features:
                raise UsageError(f"--{option}: column {train.header[j]!r} is not a feature")
    both = forced_cat & forced_num
    if both:
        raise UsageError(f"column {train.header[min(both)]!r} is named by both --categorical and --numeric")

    kinds = []
    for j in features:
        if j in forced_cat:
            kinds.append("cat")
        elif j in forced_num:
            kinds.append("num")
        else:
            text = any(parse_number(c) is None for c, m in zip(train.cells[j], train.missing[j]) if not m)
            kinds.append("cat" if text else "num")
    names = [train.header[j] for j in features]
    numeric = [n for n, k in zip(names, kinds) if k == "num"]
    categorical = [n for n, k in zip(names, kinds) if k == "cat"]
    print(f"note: {len(numeric)} numeric features: {','.join(numeric) or '-'}", file=sys.stderr)
    print(f"note: {len(categorical)} categorical features: {','.join(categorical) or '-'}", file=sys.stderr)

    # Rows with a missing label take no part in fitting or scoring.
    kept = np.flatnonzero(~train.missing[label])
    dropped = np.flatnonzero(train.missing[label])
    if len(dropped):
        shown = ", ".join(str(r) for r in dropped[:10]) + (", ..." if len(dropped) > 10 else "")
        print(f"note: dropped {len(dropped)} rows with a missing label "
              f"(0-based data rows {shown})", file=sys.stderr)
    if args.task == "classify":
        classes = class_order(train.cells[label][kept])
        code = {c: i for i, c in enumerate(classes)}
        y_all = np.array([code.get(t, -1) for t in train.cells[label]])
    else:
        y_all = numeric_column(train, label, np.arange(train.rows), "the regression target")
    X_all = feature_frame(train, features, names, kinds, np.arange(train.rows))

    if args.query is not None:
        X, y = X_all.iloc[kept], y_all[kept]
        if args.impute == "none":
            check_complete(X, train.path, kept)
        query = Table(args.query, na_tokens)
        qpos = [query.position_of(n) for n in names]
        qrows = np.arange(query.rows)
        Q = feature_frame(query, qpos, names, kinds, qrows)
        if args.impute == "none":
            check_complete(Q, query.path, qrows)
        model = make_pipeline(args, numeric, categorical).fit(X, y)
        pred = model.predict(Q)
        w = csv.writer(sys.stdout, lineterminator="\n")
        # R's row-name column has an empty header; its output column is named "id".
        head = [] if id_col is None else [train.header[id_col] or "id"]
        qid = None if id_col is None else query.cells[query.position_of(train.header[id_col])]
        if args.task == "classify":
            head.append("prediction")
            if args.proba:
                proba = model.predict_proba(Q)
                head += ["p_" + classes[c] for c in model.classes_]
            w.writerow(head)
            for i, v in enumerate(pred):
                row = ([] if qid is None else [qid[i]]) + [classes[v]]
                if args.proba:
                    row += [fmt(p) for p in proba[i]]
                w.writerow(row)
        else:
            w.writerow(head + ["prediction"])
            for i, v in enumerate(pred):
                w.writerow(([] if qid is None else [qid[i]]) + [fmt(v)])
        return 0

    # Evaluate mode.
    folds = pd.read_csv(args.folds_file, dtype=str, keep_default_na=False)
    if list(folds.columns[:2]) != ["row", "fold"]:
        raise UsageError(f"{args.folds_file}: the header must start with row,fold")
    fold_of = {}
    for r, f in zip(folds["row"], folds["fold"]):
        r = int(r)
        if not 0 <= r < train.rows:
            raise UsageError(f"{args.folds_file}: row {r} is not a data row of {train.path} ({train.rows} rows)")
        if r in fold_of:
            raise UsageError(f"{args.folds_file}: row {r} is listed twice")
        fold_of[r] = f.strip(STRIP)
    unassigned = [r for r in kept if r not in fold_of]
    if unassigned:
        raise UsageError(f"{args.folds_file}: data row {unassigned[0]} has no fold")
    fold = np.array([fold_of[r] for r in kept], dtype=object)
    labels = sorted(set(fold), key=lambda f: (0, int(f), "") if re.fullmatch(r"-?[0-9]+", f) else (1, 0, f))
    scores = {"accuracy": []} if args.task == "classify" else {"rmse": [], "r2": []}
    for f in labels:
        test, fit = kept[fold == f], kept[fold != f]
        X, y = X_all.iloc[fit], y_all[fit]
        Xt, yt = X_all.iloc[test], y_all[test]
        if args.impute == "none":
            check_complete(X, train.path, fit)
            check_complete(Xt, train.path, test)
        pred = make_pipeline(args, numeric, categorical).fit(X, y).predict(Xt)
        if args.task == "classify":
            scores["accuracy"].append(float(np.mean(pred == yt)))
        else:
            scores["rmse"].append(math.sqrt(float(np.mean((pred - yt) ** 2))))
            scores["r2"].append(float(r2_score(yt, pred)))
        if args.verbose:
            shown = " ".join(f"{s}={v[-1]!r}" for s, v in scores.items())
            print(f"fold {f}: train {len(fit)} test {len(test)} {shown}", file=sys.stderr)
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["score", "mean", "std"])
    for s, v in scores.items():
        w.writerow([s, fmt(np.mean(v)), fmt(np.std(v))])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
