"""KNeighborsRegressor: scikit-learn's API on the library's exact regressor."""

import numpy as np
from sklearn.base import RegressorMixin

from . import _libknn
from ._base import VotingBase


class KNeighborsRegressor(RegressorMixin, VotingBase):
    """Regressor predicting the (weighted) mean target of the k nearest training rows.

    Parameters are KNeighborsClassifier's: n_neighbors, weights, metric, scaling, device,
    precision, n_jobs. The target is one column of numbers.
    """

    _model_type = _libknn.KnnRegressor

    def fit(self, X, y):
        X, y = self._validate_X(X, y, reset=True, y_numeric=True)
        model, metric_name, k = self._new_model(X.shape[0], self.weights)
        model.fit(X, np.ascontiguousarray(y, dtype=np.float64))
        return self._fitted(model, metric_name, k)

    def predict(self, X):
        X = self._query(X)
        return self._model.predict(X)
