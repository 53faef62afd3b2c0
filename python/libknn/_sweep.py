"""k_sweep: cross-validated scores of every k in one pass, as the k-sweep app computes them."""

import numbers
from collections.abc import Iterator

import numpy as np
from sklearn.model_selection import PredefinedSplit, check_cv
from sklearn.utils.validation import check_scalar
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_X_y

from . import _libknn, _params

try:
    import pandas
except ImportError:  # pragma: no cover - pandas is optional
    pandas = None


def _task(task, y):
    if task is None:
        kind = type_of_target(y, input_name="y")
        if kind in ("binary", "multiclass"):
            return "classify"
        if kind == "continuous":
            return "regress"
        raise ValueError(f"task=None: y is {kind!r}, neither class labels nor a continuous target")
    task = _params.text("task", task)
    if task in ("classify", "classification"):
        return "classify"
    if task in ("regress", "regression"):
        return "regress"
    raise ValueError(f"task={task!r} is not one of None, 'classify' or 'regress'")


def _ks(k):
    values = [k] if isinstance(k, numbers.Integral) else list(k)
    if not values:
        raise ValueError("k: no value given")
    for v in values:
        _params.n_neighbors(v, name="k")
    return sorted({int(v) for v in values})


def _names(name, value, spell=lambda v: v):
    values = [value] if isinstance(value, str) or callable(value) else list(value)
    if not values:
        raise ValueError(f"{name}: no value given")
    return [spell(v) for v in values]


def _splits(cv, X, y, groups, classify):
    """None for the app's k-fold folds (cv an int), else the (train, test) rows of every split."""
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        return None
    if not hasattr(cv, "split") and not isinstance(cv, (str, Iterator)):
        try:
            ids = np.asarray(cv)
        except ValueError:  # a list of (train, test) of different sizes
            ids = None
        if ids is not None and ids.ndim == 1 and ids.dtype.kind in "iu" and ids.shape[0] == X.shape[0]:
            cv = PredefinedSplit(ids)  # fold ids; -1: a row that is never held out
    splitter = check_cv(cv, y, classifier=classify)
    return [
        (np.ascontiguousarray(train, dtype=np.int64), np.ascontiguousarray(test, dtype=np.int64))
        for train, test in splitter.split(X, y, groups)
    ]


def k_sweep(X, y, k=range(1, 51), cv=5, task=None, weights="uniform", metric="euclidean", scaling="none",
            *, groups=None, device="auto", precision="auto", n_jobs=None):
    """Cross-validated scores of every k, in one pass over the folds.

    The k-max nearest neighbours are selected once per fold; every smaller k is a prefix of that
    list, so the whole curve costs about one evaluation at the largest k.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels or a continuous target.
    k : int or iterable of int, default=range(1, 51)
    cv : int, cross-validation splitter, iterable of (train, test) or array of fold ids, default=5
        An int: the k-sweep app's folds (stratified for classification, seed 42), so that the
        scores equal the app's. A splitter (KFold, StratifiedKFold, GroupKFold with ``groups``,
        ...) or an iterable of (train, test) row arrays: those splits. An array of one fold id per
        row: each fold held out in turn (-1: a row that is never held out).
    task : None, 'classify' or 'regress', default=None
        None infers it from y as scikit-learn does (``type_of_target``).
    weights, metric : str or list of str
        As the estimators take them; a list sweeps every combination.
    scaling : 'none', 'minmax' or 'standard', default='none'
        Fitted on each fold's training rows only.
    groups : array-like, default=None
        Passed to the splitter's ``split``.
    device, precision, n_jobs
        As the estimators take them.

    Returns
    -------
    pandas.DataFrame (a dict of numpy arrays where pandas is absent)
        One row per k (per weights and metric, then with columns ``weights`` and ``metric``), with
        the app's columns: ``k``, ``accuracy_mean``, ``accuracy_std``, ``balanced_accuracy_*``,
        ``f1_macro_*``, or ``rmse_*``, ``mae_*``, ``r2_*``. Standard deviations are over the folds
        (population, as numpy's default). A DataFrame's ``attrs`` hold ``task``, ``folds`` and
        ``best`` (the row of highest accuracy or lowest RMSE, ties to the smaller k).
    """
    X, y = check_X_y(X, y, dtype=np.float32, order="C", estimator="k_sweep")
    task = _task(task, y)
    classify = task == "classify"
    if classify:
        check_classification_targets(y)
        _, ids = np.unique(y, return_inverse=True)
        targets = np.ascontiguousarray(ids.reshape(-1), dtype=np.int64)
    else:
        targets = np.ascontiguousarray(y, dtype=np.float64)
    splits = _splits(cv, X, y, groups, classify)
    folds = 0
    if splits is None:
        folds = int(check_scalar(cv, "cv", numbers.Integral))
    weight_list = _names("weights", weights, _params.weights)
    metric_list = _names("metric", metric, lambda m: _params.metric(m)[0])
    result = _libknn.evaluate(
        X, targets, task, _ks(k), weight_list, metric_list,
        _params.text("scaling", scaling), folds, splits,
        _params.text("device", device), _params.text("precision", precision), _params.threads(n_jobs),
    )
    columns, info = result["columns"], result["info"]
    # As in the app's table: the weights and metric of a row are columns only when several are swept.
    if len(weight_list) == 1 and len(metric_list) == 1:
        del columns["weights"], columns["metric"]
    else:
        columns["weights"] = np.array(columns["weights"], dtype=object)
        columns["metric"] = np.array(columns["metric"], dtype=object)
    if pandas is None:
        return columns
    table = pandas.DataFrame(columns)
    table.attrs.update(task=task, folds=info["folds"], best=info["best"])
    return table
