"""KNeighborsClassifier: scikit-learn's API on the library's exact classifier."""

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from . import _libknn
from ._base import VotingBase


class KNeighborsClassifier(ClassifierMixin, VotingBase):
    """Classifier voting among the k nearest training rows, exact on the CPU and the GPU alike.

    Parameters
    ----------
    n_neighbors : int, default=5
        Neighbours that vote.
    weights : str, default='uniform'
        'uniform', 'distance' (1/d; neighbours at distance 0 alone where there are any), or a
        named weight function: 'gaussian[:SIGMA]', 'inverse[:C]', 'subtract[:C]'.
    metric : str, default='euclidean'
        'euclidean' ('l2'), 'manhattan' ('l1', 'cityblock') or 'cosine'.
    scaling : str, default='none'
        'none', 'minmax' or 'standard', fitted on the training rows (not scikit-learn's: it
        scales nothing, and 'none' gives its results).
    device : str, default='auto'
        'auto' (the GPU where one is usable), 'cpu' or 'cuda'. Both give the same neighbours.
    precision : str, default='auto'
        The GPU's candidate pass: 'auto' (the faster for the data's shape), 'fp32' or 'tf32';
        the neighbours are exact either way.
    n_jobs : int, default=None
        CPU threads; None or -1: every core.

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_ (fitted on a DataFrame), effective_metric_,
    n_samples_fit_.

    Ties in the vote go to the class that comes first in ``classes_``, as in scikit-learn.
    """

    _model_type = _libknn.KnnClassifier

    def fit(self, X, y):
        X, y = self._validate_X(X, y, reset=True)
        check_classification_targets(y)
        classes, ids = np.unique(y, return_inverse=True)
        model, metric_name, k = self._new_model(X.shape[0], self.weights)
        model.fit(X, np.ascontiguousarray(ids.reshape(-1), dtype=np.int64), len(classes))
        self.classes_ = classes
        return self._fitted(model, metric_name, k)

    def predict(self, X):
        X = self._query(X)
        return self.classes_[self._model.predict_ids(X)]

    def predict_proba(self, X):
        """Each class's share of the (weighted) vote, columns in ``classes_`` order."""
        X = self._query(X)
        return self._model.predict_proba(X)
