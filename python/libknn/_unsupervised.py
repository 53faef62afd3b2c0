"""NearestNeighbors: scikit-learn's API on the library's exact search."""

from . import _libknn
from ._base import NeighborsBase


class NearestNeighbors(NeighborsBase):
    """The k nearest training rows of queries, exact on the CPU and the GPU alike.

    Parameters are KNeighborsClassifier's but weights: n_neighbors (the default of kneighbors),
    metric, scaling, device, precision, n_jobs.
    """

    _model_type = _libknn.NearestNeighbors

    def __init__(self, n_neighbors=5, *, metric="euclidean", scaling="none", device="auto",
                 precision="auto", n_jobs=None):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.scaling = scaling
        self.device = device
        self.precision = precision
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Keeps the rows of X (scaled as ``scaling`` says) to search; y is ignored."""
        X = self._validate_X(X, reset=True)
        model, metric_name, k = self._new_model(X.shape[0])
        model.fit(X)
        return self._fitted(model, metric_name, k)
