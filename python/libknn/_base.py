"""What the three estimators share: parameters, validation, the fitted model and its search."""

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _device_arrays, _params
from ._compat import validate_data


def _aligned(X):
    """X itself where its float32 values are aligned, else an aligned copy (a buffer at an odd
    offset, e.g. np.frombuffer(..., offset=1))."""
    return X if X.flags.aligned else np.require(X, requirements=["C", "A"])


class NeighborsBase(BaseEstimator):
    """Holds the library's fitted model in ``_model``; subclasses say which model and what y is.

    Parameters take effect when ``fit`` is called, except ``n_neighbors`` as the default of
    ``kneighbors``: ``predict`` uses the model as fitted.
    """

    # The library's model class (_libknn.NearestNeighbors, KnnClassifier or KnnRegressor).
    _model_type = None

    def _new_model(self, n_samples, weights="uniform"):
        """An unfitted model of this estimator's parameters. Its k is capped at the training rows:
        scikit-learn checks n_neighbors against them when searching, not when fitting."""
        k = _params.n_neighbors(self.n_neighbors)
        library_metric, self_metric = _params.metric(self.metric)
        model = self._model_type(
            k=min(k, n_samples),
            weights=_params.weights(weights),
            metric=library_metric,
            scaling=_params.text("scaling", self.scaling),
            device=_params.text("device", self.device),
            precision=_params.text("precision", self.precision),
            threads=_params.threads(self.n_jobs),
        )
        return model, self_metric, k

    def _validate_X(self, X, y="no_validation", reset=False, **check_params):
        # C-contiguous, aligned float32 arrays pass as they are (the library reads them in place);
        # anything else is converted once.
        out = validate_data(self, X, y, reset=reset, dtype=np.float32, order="C", **check_params)
        if isinstance(out, tuple):
            return (_aligned(out[0]),) + tuple(out[1:])
        return _aligned(out)

    def _fitted(self, model, metric_name, k):
        self._model = model
        self._k = k  # n_neighbors as fitted: predict checks it against the training rows
        self.effective_metric_ = metric_name
        self.n_samples_fit_ = model.train_size
        return self

    def __sklearn_is_fitted__(self):
        return hasattr(self, "_model")

    # Pickling and copy.deepcopy: the parameters and Python attributes as they are (classes_ keeps
    # its dtype), and the fitted model as the bytes of a model file (docs/model-format.md), loaded
    # back to run where the estimator's device, precision and n_jobs say.
    def __getstate__(self):
        state = dict(super().__getstate__())
        if "_model" in state:
            state["_model"] = state["_model"].save()
        return state

    def __setstate__(self, state):
        state = dict(state)
        saved = state.pop("_model", None)
        super().__setstate__(state)
        if saved is not None:
            self._model = self._model_type.load(
                saved,
                device=_params.text("device", self.device),
                precision=_params.text("precision", self.precision),
                threads=_params.threads(self.n_jobs),
            )

    def _check_n_neighbors(self, n_neighbors, n_samples):
        if n_neighbors > self.n_samples_fit_:
            raise ValueError(
                f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {n_neighbors}, "
                f"n_samples_fit = {self.n_samples_fit_}, n_samples = {n_samples}"
            )

    def _query(self, X):
        """X validated against the fit, with the model's k checked against the training rows."""
        check_is_fitted(self)
        X = self._validate_X(X)
        self._check_n_neighbors(self._k, X.shape[0])
        return X

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """The k nearest training rows of each row of X, as scikit-learn's ``kneighbors``.

        Returns ``(distances, indices)``, each of shape (n_queries, n_neighbors), nearest first, ties
        to the smaller training row; ``indices`` alone when ``return_distance`` is False. With X
        None, each training row's neighbours among the other rows. With X in GPU memory (a CuPy
        array or a PyTorch CUDA tensor of float32, C-contiguous), a model on the GPU that does not
        scale searches it there, and both results are arrays of X's library on X's device.
        """
        check_is_fitted(self)
        k = _params.n_neighbors(self.n_neighbors if n_neighbors is None else n_neighbors)
        if X is None:
            self._check_n_neighbors(k + 1, self.n_samples_fit_)
            dist, ind = self._model.kneighbors_of_train(k)
        elif _device_arrays.is_device_array(X):
            self._check_n_neighbors(k, X.shape[0])
            dist, ind = _device_arrays.kneighbors(self, X, k)
        else:
            X = self._validate_X(X)
            self._check_n_neighbors(k, X.shape[0])
            dist, ind = self._model.kneighbors(X, k)
        return (dist, ind) if return_distance else ind

    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """A sparse (n_queries, n_samples_fit) matrix of the neighbours, as scikit-learn's:
        ones ('connectivity') or distances ('distance') where row q has neighbour j."""
        if mode not in ("connectivity", "distance"):
            raise ValueError(f'Unsupported mode, must be one of "connectivity", or "distance" but got "{mode}" instead')
        if X is not None and _device_arrays.is_device_array(X):
            raise TypeError("kneighbors_graph builds a SciPy matrix in host memory: pass X as a numpy array, "
                            "or call kneighbors on the GPU array")
        dist, ind = self.kneighbors(X, n_neighbors, return_distance=True)
        n_queries, k = ind.shape
        data = np.ones(n_queries * k) if mode == "connectivity" else dist.ravel()
        indptr = np.arange(0, n_queries * k + 1, k)
        return scipy.sparse.csr_matrix((data, ind.ravel(), indptr), shape=(n_queries, self.n_samples_fit_))


class VotingBase(NeighborsBase):
    """The classifier's and the regressor's parameters: the search's, and the neighbours' weights."""

    def __init__(self, n_neighbors=5, *, weights="uniform", metric="euclidean", scaling="none",
                 device="auto", precision="auto", n_jobs=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.scaling = scaling
        self.device = device
        self.precision = precision
        self.n_jobs = n_jobs
