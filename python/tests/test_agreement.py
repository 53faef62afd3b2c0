"""Agreement with scikit-learn's brute-force estimators on random float32 data, scaling='none':
the same neighbours and distances, predictions and probabilities, for every metric and weights.
scikit-learn runs on float64 copies of the same values, where its own arithmetic is closest to
the exact distances this package reports."""

import numpy as np
import pytest
import scipy.sparse
import sklearn.neighbors as skn

import libknn
from conftest import blobs

METRICS = ["euclidean", "manhattan", "cosine"]
ALIASES = {"l2": "euclidean", "l1": "manhattan", "cityblock": "manhattan"}
# Our named weights, and the same functions as scikit-learn callables.
NAMED_WEIGHTS = {
    "gaussian:0.7": lambda d: np.exp(-d * d / (2 * 0.7 * 0.7)),
    "inverse:0.1": lambda d: 1.0 / (d + 0.1),
    "subtract:50": lambda d: np.maximum(50.0 - d, 0.0),
}


def reference(cls, k, X, y=None, **params):
    model = cls(n_neighbors=k, algorithm="brute", **params)
    return model.fit(X.astype(np.float64), y)


def assert_same_neighbours(ours, theirs, Q):
    d, i = ours.kneighbors(Q)
    rd, ri = theirs.kneighbors(Q.astype(np.float64))
    np.testing.assert_array_equal(i, ri)
    np.testing.assert_allclose(d, rd, rtol=1e-12, atol=1e-12)
    assert i.dtype == np.intp and d.dtype == np.float64


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_classifier_equals_sklearn(rng, metric, weights):
    X, y = blobs(rng, 300, 6, classes=4)
    Q, _ = blobs(rng, 120, 6, classes=4)
    labels = np.array(["ant", "bee", "cat", "dog"])[y]
    for k in (1, 6, 15):
        ours = libknn.KNeighborsClassifier(k, weights=weights, metric=metric, device="cpu").fit(X, labels)
        theirs = reference(skn.KNeighborsClassifier, k, X, labels, weights=weights, metric=metric)
        assert_same_neighbours(ours, theirs, Q)
        np.testing.assert_array_equal(ours.classes_, theirs.classes_)
        np.testing.assert_array_equal(ours.predict(Q), theirs.predict(Q.astype(np.float64)))
        np.testing.assert_allclose(ours.predict_proba(Q), theirs.predict_proba(Q.astype(np.float64)), rtol=1e-12, atol=1e-15)
        assert ours.score(Q, labels[:120]) == theirs.score(Q.astype(np.float64), labels[:120])


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_regressor_equals_sklearn(rng, metric, weights):
    X, _ = blobs(rng, 250, 5)
    Q, _ = blobs(rng, 90, 5)
    y = X[:, 0].astype(np.float64) * 3 + rng.normal(size=250)
    for k in (1, 7, 20):
        ours = libknn.KNeighborsRegressor(k, weights=weights, metric=metric, device="cpu").fit(X, y)
        theirs = reference(skn.KNeighborsRegressor, k, X, y, weights=weights, metric=metric)
        assert_same_neighbours(ours, theirs, Q)
        np.testing.assert_allclose(ours.predict(Q), theirs.predict(Q.astype(np.float64)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("named", sorted(NAMED_WEIGHTS))
def test_named_weights_equal_sklearn_callables(rng, named):
    X, y = blobs(rng, 200, 4)
    Q, _ = blobs(rng, 80, 4)
    ours = libknn.KNeighborsClassifier(9, weights=named, device="cpu").fit(X, y)
    theirs = reference(skn.KNeighborsClassifier, 9, X, y, weights=NAMED_WEIGHTS[named])
    np.testing.assert_array_equal(ours.predict(Q), theirs.predict(Q.astype(np.float64)))
    np.testing.assert_allclose(ours.predict_proba(Q), theirs.predict_proba(Q.astype(np.float64)), rtol=1e-12, atol=1e-15)
    target = X[:, 1].astype(np.float64)
    ours_r = libknn.KNeighborsRegressor(9, weights=named, device="cpu").fit(X, target)
    theirs_r = reference(skn.KNeighborsRegressor, 9, X, target, weights=NAMED_WEIGHTS[named])
    np.testing.assert_allclose(ours_r.predict(Q), theirs_r.predict(Q.astype(np.float64)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_nearest_neighbors_equal_sklearn(rng, metric):
    X, _ = blobs(rng, 400, 8)
    Q, _ = blobs(rng, 50, 8)
    ours = libknn.NearestNeighbors(n_neighbors=4, metric=metric, device="cpu").fit(X)
    theirs = skn.NearestNeighbors(n_neighbors=4, metric=metric, algorithm="brute").fit(X.astype(np.float64))
    assert_same_neighbours(ours, theirs, Q)
    assert ours.effective_metric_ == metric and ours.n_samples_fit_ == 400 and ours.n_features_in_ == 8
    # Another k per call, and the training rows' own neighbours (a row is not its own neighbour).
    for k in (1, 11):
        d, i = ours.kneighbors(Q, n_neighbors=k)
        rd, ri = theirs.kneighbors(Q.astype(np.float64), n_neighbors=k)
        np.testing.assert_array_equal(i, ri)
        np.testing.assert_allclose(d, rd, rtol=1e-12, atol=1e-12)
        d, i = ours.kneighbors(n_neighbors=k)
        rd, ri = theirs.kneighbors(n_neighbors=k)
        np.testing.assert_array_equal(i, ri)
        np.testing.assert_allclose(d, rd, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours.kneighbors(Q, return_distance=False), theirs.kneighbors(Q.astype(np.float64), return_distance=False))
    for mode in ("connectivity", "distance"):
        a = ours.kneighbors_graph(Q, 3, mode=mode)
        b = theirs.kneighbors_graph(Q.astype(np.float64), 3, mode=mode)
        assert scipy.sparse.isspmatrix_csr(a) and a.shape == b.shape == (50, 400)
        np.testing.assert_allclose(a.toarray(), b.toarray(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_metric_aliases(rng, alias):
    X, y = blobs(rng, 100, 3)
    a = libknn.KNeighborsClassifier(5, metric=alias, device="cpu").fit(X, y)
    b = libknn.KNeighborsClassifier(5, metric=ALIASES[alias], device="cpu").fit(X, y)
    assert a.effective_metric_ == ALIASES[alias]
    for u, v in zip(a.kneighbors(X[:20]), b.kneighbors(X[:20])):
        np.testing.assert_array_equal(u, v)


def test_ties_go_to_the_smaller_training_row():
    # Four training rows at the same distance from the query: the lower rows come first, and a
    # tied vote goes to the class first in classes_, as in scikit-learn.
    X = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=np.float32)
    y = np.array(["b", "a", "b", "a"])
    clf = libknn.KNeighborsClassifier(2, device="cpu").fit(X, y)
    d, i = clf.kneighbors(np.zeros((1, 2), dtype=np.float32))
    np.testing.assert_array_equal(i, [[0, 1]])
    np.testing.assert_array_equal(d, [[1.0, 1.0]])
    assert clf.predict(np.zeros((1, 2)))[0] == "a"
    np.testing.assert_array_equal(clf.predict_proba(np.zeros((1, 2))), [[0.5, 0.5]])


def test_dataframe_feature_names(rng):
    pandas = pytest.importorskip("pandas")
    X, y = blobs(rng, 60, 3)
    frame = pandas.DataFrame(X, columns=["width", "height", "depth"])
    clf = libknn.KNeighborsClassifier(3).fit(frame, y)
    np.testing.assert_array_equal(clf.feature_names_in_, ["width", "height", "depth"])
    np.testing.assert_array_equal(clf.predict(frame), libknn.KNeighborsClassifier(3).fit(X, y).predict(X))
    with pytest.warns(UserWarning, match="feature names"):
        clf.predict(X)


def test_minmax_and_standard_scaling_match_a_scaler_pipeline(rng):
    # scaling= fits on the training rows only, as a scaler in a pipeline does; columns of very
    # different ranges make the choice matter.
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    X, y = blobs(rng, 200, 4)
    X = (X * np.array([1, 100, 0.01, 10], dtype=np.float32)).astype(np.float32)
    Q, _ = blobs(rng, 60, 4)
    Q = (Q * np.array([1, 100, 0.01, 10], dtype=np.float32)).astype(np.float32)
    for scaling, scaler in (("minmax", MinMaxScaler), ("standard", StandardScaler)):
        ours = libknn.KNeighborsClassifier(5, scaling=scaling, device="cpu").fit(X, y)
        theirs = make_pipeline(scaler(), skn.KNeighborsClassifier(5, algorithm="brute")).fit(X.astype(np.float64), y)
        agree = np.mean(ours.predict(Q) == theirs.predict(Q.astype(np.float64)))
        assert agree == 1.0, f"{scaling}: {agree}"
