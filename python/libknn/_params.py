"""The estimators' parameters in the library's spelling. Values the library itself parses (named
weights, scaling, device, precision) are passed on as text, so that one rule decides them."""

import numbers

import joblib
from sklearn.utils.validation import check_scalar

# scikit-learn's metric names and our aliases -> the library's name, and the name scikit-learn
# reports as effective_metric_.
_METRICS = {
    "euclidean": ("l2", "euclidean"),
    "l2": ("l2", "euclidean"),
    "manhattan": ("l1", "manhattan"),
    "cityblock": ("l1", "manhattan"),
    "l1": ("l1", "manhattan"),
    "cosine": ("cosine", "cosine"),
}


def metric(value):
    """(library name, scikit-learn name) of a metric parameter."""
    if isinstance(value, str) and value in _METRICS:
        return _METRICS[value]
    raise ValueError(
        f"metric={value!r} is not supported; use one of {', '.join(repr(m) for m in _METRICS)}"
    )


def text(name, value):
    """A parameter the library parses: it must be text; the library says which texts it takes."""
    if not isinstance(value, str):
        raise ValueError(f"{name}={value!r} must be a string")
    return value


def weights(value):
    if callable(value):
        raise ValueError(
            "weights: a callable is not supported; use 'uniform', 'distance', or a named weight "
            "function: 'gaussian[:SIGMA]', 'inverse[:C]', 'subtract[:C]'"
        )
    return text("weights", value)


def n_neighbors(value, name="n_neighbors"):
    check_scalar(value, name, numbers.Integral, min_val=1)
    return int(value)


def threads(n_jobs):
    """n_jobs as joblib reads it -> the library's thread count (0: every core)."""
    if n_jobs is None or n_jobs == -1:
        return 0
    check_scalar(n_jobs, "n_jobs", numbers.Integral)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use a positive count, or -1 for every core")
    # joblib counts the cores this process may use (affinity, cgroup limits), as scikit-learn does.
    return joblib.effective_n_jobs(int(n_jobs))
