"""k_sweep: equal to the k-sweep app's table on the same folds, and to scikit-learn's scores on
the same splits; the forms of cv, task inference, and the dict of arrays without pandas."""

import csv
import io
import os
import subprocess

import numpy as np
import pytest
import sklearn.neighbors as skn
from sklearn.metrics import balanced_accuracy_score, f1_score, mean_absolute_error, r2_score
from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

import libknn
from libknn import _sweep
from conftest import blobs

SWEEP = os.environ.get("KNN_SWEEP_PATH")
needs_app = pytest.mark.skipif(not SWEEP, reason="KNN_SWEEP_PATH (the k-sweep app) is not set")


def write_csv(path, X, y, target_format):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([f"f{j}" for j in range(X.shape[1])] + ["y"])
        for row, t in zip(X, y):
            # 9 significant digits give every float32 back exactly.
            w.writerow([f"{v:.9g}" for v in row] + [target_format(t)])


def app_table(*args):
    run = subprocess.run([SWEEP, *args], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return list(csv.DictReader(io.StringIO(run.stdout)))


def assert_equal_to_app(table, rows):
    assert list(table.columns) == list(rows[0].keys())
    assert len(table) == len(rows)
    for i, row in enumerate(rows):
        for name, text in row.items():
            got = table[name].iloc[i]
            if name in ("weights", "metric"):
                assert got == text, (i, name)
            else:
                assert got == float(text), (i, name, got, text)


@needs_app
@pytest.mark.parametrize("task", ["classify", "regress"])
def test_equal_to_the_app_on_its_own_folds(rng, tmp_path, task):
    X, y = blobs(rng, 180, 5, classes=3)
    if task == "regress":
        y = X[:, 0].astype(np.float64) * 2 + rng.normal(size=len(y))
    data = tmp_path / "data.csv"
    write_csv(data, X, y, repr if task == "regress" else str)
    rows = app_table("--data", str(data), "--task", task, "--k", "1:30", "--folds", "4", "--scale", "none",
                     "--device", "cpu", "--save-folds", str(tmp_path / "folds.csv"))
    table = libknn.k_sweep(X, y, k=range(1, 31), cv=4, device="cpu")
    assert table.attrs["task"] == task and table.attrs["folds"] == 4
    assert_equal_to_app(table, rows)
    # The app's folds given back as fold ids: the same table.
    folds = np.array([int(r["fold"]) for r in csv.DictReader(open(tmp_path / "folds.csv"))])
    assert_equal_to_app(libknn.k_sweep(X, y, k=range(1, 31), cv=folds, device="cpu"), rows)


@needs_app
def test_equal_to_the_app_over_weights_and_metrics(rng, tmp_path):
    X, y = blobs(rng, 150, 4)
    data = tmp_path / "data.csv"
    write_csv(data, X, y, str)
    rows = app_table("--data", str(data), "--k", "1:12:3", "--weights", "uniform,distance,gaussian:0.5",
                     "--metric", "l2,l1,cosine", "--scale", "minmax", "--device", "cpu")
    table = libknn.k_sweep(X, y, k=range(1, 13, 3), weights=["uniform", "distance", "gaussian:0.5"],
                           metric=["euclidean", "manhattan", "cosine"], scaling="minmax", device="cpu")
    assert_equal_to_app(table, rows)


def sklearn_scores(X, y, splits, k, classify):
    """Per-k mean and population std over the splits, from scikit-learn's brute-force models."""
    per_split = []
    for train, test in splits:
        cls = skn.KNeighborsClassifier if classify else skn.KNeighborsRegressor
        model = cls(n_neighbors=k, algorithm="brute").fit(X[train].astype(np.float64), y[train])
        p = model.predict(X[test].astype(np.float64))
        t = y[test]
        if classify:
            per_split.append([np.mean(p == t), balanced_accuracy_score(t, p), f1_score(t, p, average="macro")])
        else:
            per_split.append([np.sqrt(np.mean((p - t) ** 2)), mean_absolute_error(t, p), r2_score(t, p)])
    s = np.array(per_split)
    return s.mean(axis=0), s.std(axis=0)


@pytest.mark.parametrize("classify", [True, False])
def test_equal_to_sklearn_on_a_splitter(rng, classify):
    X, y = blobs(rng, 160, 4)
    if not classify:
        y = X[:, 1].astype(np.float64) + rng.normal(size=len(y))
    cv = StratifiedKFold(5, shuffle=True, random_state=3) if classify else KFold(5, shuffle=True, random_state=3)
    splits = list(cv.split(X, y))
    table = libknn.k_sweep(X, y, k=[1, 5, 17], cv=cv, device="cpu")
    names = ["accuracy", "balanced_accuracy", "f1_macro"] if classify else ["rmse", "mae", "r2"]
    for i, k in enumerate([1, 5, 17]):
        mean, std = sklearn_scores(X, y, splits, k, classify)
        for j, name in enumerate(names):
            np.testing.assert_allclose(table[f"{name}_mean"][i], mean[j], rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(table[f"{name}_std"][i], std[j], rtol=1e-9, atol=1e-12)
    # The same splits as a list of (train, test), and splits that are not a partition.
    same = libknn.k_sweep(X, y, k=[1, 5, 17], cv=splits, device="cpu")
    np.testing.assert_array_equal(same.to_numpy(), table.to_numpy())
    half = [(train[: len(train) // 2], test) for train, test in splits]
    mean, _ = sklearn_scores(X, y, half, 5, classify)
    np.testing.assert_allclose(libknn.k_sweep(X, y, k=5, cv=half, device="cpu")[f"{names[0]}_mean"][0], mean[0], rtol=1e-12)


def test_groups_reach_the_splitter(rng):
    X, y = blobs(rng, 90, 3)
    groups = np.repeat(np.arange(9), 10)
    splits = list(GroupKFold(3).split(X, y, groups))
    a = libknn.k_sweep(X, y, k=[3], cv=GroupKFold(3), groups=groups, device="cpu")
    b = libknn.k_sweep(X, y, k=[3], cv=splits, device="cpu")
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_fold_ids_with_rows_never_held_out(rng):
    X, y = blobs(rng, 60, 3)
    ids = np.tile([0, 1, 2, -1], 15)
    splits = [(np.flatnonzero(ids != f), np.flatnonzero(ids == f)) for f in (0, 1, 2)]
    a = libknn.k_sweep(X, y, k=[1, 4], cv=ids, device="cpu")
    b = libknn.k_sweep(X, y, k=[1, 4], cv=splits, device="cpu")
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
    assert a.attrs["folds"] == 3


def test_task_is_inferred_as_sklearn_does(rng):
    X, y = blobs(rng, 60, 2)
    assert libknn.k_sweep(X, y, k=3).attrs["task"] == "classify"
    assert list(libknn.k_sweep(X, y, k=3).columns)[:3] == ["k", "accuracy_mean", "accuracy_std"]
    t = X[:, 0].astype(np.float64) * 1.5
    assert libknn.k_sweep(X, t, k=3).attrs["task"] == "regress"
    assert list(libknn.k_sweep(X, t, k=3).columns)[:3] == ["k", "rmse_mean", "rmse_std"]
    with pytest.raises(ValueError, match="y should be a 1d array"):
        libknn.k_sweep(X, np.stack([y, y], axis=1), k=3)
    with pytest.raises(ValueError, match="Unknown label type"):
        libknn.k_sweep(X, t, k=3, task="classify")


def test_bad_arguments(rng):
    X, y = blobs(rng, 40, 2)
    with pytest.raises(ValueError, match=r"^parameter k: \"40\" is larger than the 32 training rows of the smallest fold"):
        libknn.k_sweep(X, y, k=[1, 40])
    with pytest.raises(ValueError, match=r"^parameter cv: \"1\" is not a whole number >= 2"):
        libknn.k_sweep(X, y, cv=1)
    with pytest.raises(ValueError, match="k == 0, must be >= 1"):
        libknn.k_sweep(X, y, k=[0, 3])
    with pytest.raises(ValueError, match=r"^parameter weights: "):
        libknn.k_sweep(X, y, k=3, weights="triangle")
    with pytest.raises(ValueError, match="Expected cv as an integer"):
        libknn.k_sweep(X, y, k=3, cv="five")
    with pytest.raises(ValueError, match=r"^parameter cv: split 1 of 1 names row 40"):
        libknn.k_sweep(X, y, k=1, cv=[(np.arange(10), np.array([40]))])


def test_a_dict_of_arrays_without_pandas(rng, monkeypatch):
    X, y = blobs(rng, 50, 2)
    table = libknn.k_sweep(X, y, k=range(1, 6), weights=["uniform", "distance"])
    monkeypatch.setattr(_sweep, "pandas", None)
    columns = libknn.k_sweep(X, y, k=range(1, 6), weights=["uniform", "distance"])
    assert isinstance(columns, dict) and list(columns) == list(table.columns)
    assert list(columns)[:3] == ["weights", "metric", "k"]
    for name, values in columns.items():
        assert isinstance(values, np.ndarray) and len(values) == 10
        np.testing.assert_array_equal(values, table[name].to_numpy())
