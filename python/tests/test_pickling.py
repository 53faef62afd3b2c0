"""Pickling and copy.deepcopy: the estimator comes back with its parameters, its attributes (the
classes' dtype too) and a model loaded from the model format's bytes, answering bit for bit as the
original does."""

import copy
import pickle

import numpy as np
import pytest

import libknn
from conftest import blobs


def roundtrips(est):
    yield pickle.loads(pickle.dumps(est))
    yield pickle.loads(pickle.dumps(est, protocol=5))
    yield copy.deepcopy(est)


def assert_same_answers(a, b, Q):
    for u, v in zip(a.kneighbors(Q), b.kneighbors(Q)):
        np.testing.assert_array_equal(u, v)
    for u, v in zip(a.kneighbors(n_neighbors=2), b.kneighbors(n_neighbors=2)):
        np.testing.assert_array_equal(u, v)
    if hasattr(a, "predict"):
        np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
    if hasattr(a, "predict_proba"):
        np.testing.assert_array_equal(a.predict_proba(Q), b.predict_proba(Q))


@pytest.mark.parametrize("labels", [np.array(["cat", "dog", "emu"]), np.array([2.0, -1.0, 7.0]), np.array([10, 20, 30], dtype=np.int16)])
@pytest.mark.parametrize("scaling", ["none", "minmax", "standard"])
def test_classifier(rng, labels, scaling):
    X, y = blobs(rng, 120, 5)
    Q, _ = blobs(rng, 40, 5)
    est = libknn.KNeighborsClassifier(4, weights="gaussian:0.8", metric="manhattan", scaling=scaling, device="cpu").fit(X, labels[y])
    for back in roundtrips(est):
        assert back.get_params() == est.get_params()
        assert back.classes_.dtype == est.classes_.dtype
        np.testing.assert_array_equal(back.classes_, est.classes_)
        assert (back.n_features_in_, back.n_samples_fit_, back.effective_metric_) == (5, 120, "manhattan")
        assert back._model is not est._model
        assert_same_answers(est, back, Q)


def test_regressor_and_nearest_neighbors(rng):
    X, _ = blobs(rng, 90, 3)
    Q, _ = blobs(rng, 30, 3)
    for est in (libknn.KNeighborsRegressor(6, weights="distance", metric="cosine", device="cpu").fit(X, X[:, 0] * 2.0),
                libknn.NearestNeighbors(n_neighbors=7, scaling="minmax", device="cpu").fit(X)):
        for back in roundtrips(est):
            assert back.get_params() == est.get_params()
            assert_same_answers(est, back, Q)


def test_feature_names_survive(rng):
    pandas = pytest.importorskip("pandas")
    X, y = blobs(rng, 50, 2)
    frame = pandas.DataFrame(X, columns=["a", "b"])
    back = pickle.loads(pickle.dumps(libknn.KNeighborsClassifier(3).fit(frame, y)))
    np.testing.assert_array_equal(back.feature_names_in_, ["a", "b"])
    with pytest.warns(UserWarning, match="feature names"):
        back.predict(X)


def test_unfitted_and_state(rng):
    est = libknn.KNeighborsClassifier(3, scaling="minmax")
    back = pickle.loads(pickle.dumps(est))
    assert back.get_params() == est.get_params() and not hasattr(back, "_model")
    X, y = blobs(rng, 30, 2)
    state = est.fit(X, y).__getstate__()
    # The fitted model travels as the bytes of a model file, which start with its signature.
    assert isinstance(state["_model"], bytes) and state["_model"][:8] == b"\x89KNN\r\n\x1a\n"
    assert state["n_neighbors"] == 3 and state["scaling"] == "minmax"


def test_damaged_bytes_are_refused(rng):
    X, y = blobs(rng, 30, 2)
    state = libknn.KNeighborsClassifier(3).fit(X, y).__getstate__()
    data = bytearray(state["_model"])
    data[-3] ^= 0xFF
    state["_model"] = bytes(data)
    back = libknn.KNeighborsClassifier.__new__(libknn.KNeighborsClassifier)
    with pytest.raises(ValueError, match="checksum"):
        back.__setstate__(state)
