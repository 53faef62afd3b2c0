"""Input validation: scikit-learn's exceptions and messages before the library is called, the
library's own errors as ValueError with the Python names of its parameters, and arrays that reach
the library as they are where they can."""

import threading

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import libknn
from conftest import blobs

ESTIMATORS = [libknn.KNeighborsClassifier, libknn.KNeighborsRegressor, libknn.NearestNeighbors]


def fitted(cls, X, y, **params):
    return cls(**params).fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_not_fitted(cls):
    est = cls()
    with pytest.raises(NotFittedError):
        est.kneighbors(np.zeros((1, 2)))
    if hasattr(est, "predict"):
        with pytest.raises(NotFittedError):
            est.predict(np.zeros((1, 2)))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_n_neighbors_is_checked_when_searching_not_when_fitting(rng, cls):
    X, y = blobs(rng, 4, 2)
    est = fitted(cls, X, y, n_neighbors=6)  # more neighbours than rows: fitting is fine
    message = "Expected n_neighbors <= n_samples_fit, but n_neighbors = 6, n_samples_fit = 4, n_samples = 3"
    with pytest.raises(ValueError, match=message):
        est.kneighbors(X[:3])
    if hasattr(est, "predict"):
        with pytest.raises(ValueError, match=message):
            est.predict(X[:3])
    d, i = est.kneighbors(X[:3], n_neighbors=4)
    assert i.shape == (3, 4)
    # Without X each training row's neighbours are the other rows: one more is looked for.
    assert est.kneighbors(n_neighbors=3)[1].shape == (4, 3)
    with pytest.raises(ValueError, match="n_neighbors = 5, n_samples_fit = 4, n_samples = 4"):
        est.kneighbors(n_neighbors=4)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_parameters_are_value_errors_at_fit(rng, cls):
    X, y = blobs(rng, 20, 2)
    with pytest.raises(ValueError, match="n_neighbors == 0, must be >= 1"):
        cls(n_neighbors=0).fit(X, y)
    with pytest.raises(TypeError, match="n_neighbors must be an instance of"):
        cls(n_neighbors=2.5).fit(X, y)
    with pytest.raises(ValueError, match="metric='minkowski' is not supported"):
        cls(metric="minkowski").fit(X, y)
    # Values the library parses: its message, with the parameter as Python spells it.
    with pytest.raises(ValueError, match=r'^parameter scaling: unknown scaling "zscore"'):
        cls(scaling="zscore").fit(X, y)
    with pytest.raises(ValueError, match=r'^parameter device: unknown device "tpu"'):
        cls(device="tpu").fit(X, y)
    with pytest.raises(ValueError, match=r'^parameter precision: unknown precision "fp8"'):
        cls(precision="fp8").fit(X, y)
    with pytest.raises(ValueError, match="n_jobs == 0"):
        cls(n_jobs=0).fit(X, y)


@pytest.mark.parametrize("cls", [libknn.KNeighborsClassifier, libknn.KNeighborsRegressor])
def test_bad_weights(rng, cls):
    X, y = blobs(rng, 20, 2)
    with pytest.raises(ValueError, match=r"^parameter weights: .*gaussian"):
        cls(weights="gaussian:-1").fit(X, y)
    with pytest.raises(ValueError, match=r"^parameter weights: "):
        cls(weights="triangle").fit(X, y)
    with pytest.raises(ValueError, match="a callable is not supported"):
        cls(weights=lambda d: d).fit(X, y)


def test_cuda_without_a_gpu_says_so(rng):
    if libknn.cuda_available():
        pytest.skip("a GPU is usable here")
    X, y = blobs(rng, 20, 2)
    with pytest.raises(ValueError, match=r"^parameter device: cuda: "):
        libknn.KNeighborsClassifier(device="cuda").fit(X, y)
    # auto falls back to the CPU.
    assert libknn.KNeighborsClassifier(device="auto").fit(X, y)._model.backend == "cpu"


class FakeDeviceArray:
    """An object that says it is in GPU memory (``__cuda_array_interface__``) and is not: every
    check below refuses it before its address is read."""

    def __init__(self, shape, typestr="<f4", strides=None):
        self.shape = shape
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": strides,
                                         "data": (0, False), "version": 3}


# Queries in GPU memory are checked before any work: their shape, dtype and layout, then the
# model (its scaling, its backend), and kneighbors_graph refuses them; the GPU's answers are in
# test_cuda.py.
def test_queries_in_gpu_memory_are_checked_first(rng):
    X, y = blobs(rng, 30, 4)
    plain = libknn.NearestNeighbors(device="cpu").fit(X)
    with pytest.raises(ValueError, match="must be 2-d"):
        plain.kneighbors(FakeDeviceArray((2, 4, 1)))
    with pytest.raises(ValueError, match="X has 3 features, but NearestNeighbors is expecting 4"):
        plain.kneighbors(FakeDeviceArray((2, 3)))
    with pytest.raises(ValueError, match="must be float32"):
        plain.kneighbors(FakeDeviceArray((2, 4), "<f8"))
    with pytest.raises(ValueError, match="C-contiguous"):
        plain.kneighbors(FakeDeviceArray((2, 4), strides=(32, 8)))
    with pytest.raises(ValueError, match="n_neighbors"):
        plain.kneighbors(FakeDeviceArray((2, 4)), n_neighbors=31)
    for rows in (0, 2):
        with pytest.raises(ValueError, match="this backend searches host memory; queries and results in GPU memory need the cuda backend"):
            plain.kneighbors(FakeDeviceArray((rows, 4)))
        with pytest.raises(ValueError, match=r"^parameter scaling: .* this model scales its rows \(minmax\); fit it with scaling none"):
            libknn.KNeighborsClassifier(device="cpu", scaling="minmax").fit(X, y).kneighbors(FakeDeviceArray((rows, 4)))
    with pytest.raises(TypeError, match="kneighbors_graph builds a SciPy matrix in host memory"):
        plain.kneighbors_graph(FakeDeviceArray((2, 4)))


def test_library_error_names_the_row_and_column(rng):
    # A query value that overflows float32 once min-max scaled by a tiny training range: the
    # library's error, as ValueError, naming the query's row and column (1-based).
    X = np.array([[0.0, 0.0], [1e-30, 1.0]], dtype=np.float32)
    clf = libknn.KNeighborsClassifier(1, scaling="minmax", device="cpu").fit(X, [0, 1])
    Q = np.array([[0.0, 0.5], [3e38, 0.5]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"^row 2, feature 1: value .* overflows float32 once scaled"):
        clf.predict(Q)


def test_input_errors_are_sklearn_s(rng):
    X, y = blobs(rng, 20, 3)
    clf = libknn.KNeighborsClassifier(3).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features, but KNeighborsClassifier is expecting 3 features as input"):
        clf.predict(X[:, :2])
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.predict(bad)
    with pytest.raises(ValueError, match="Unknown label type"):
        libknn.KNeighborsClassifier().fit(X, rng.normal(size=20))
    with pytest.raises(ValueError, match="too large for dtype\\('float32'\\)"):
        clf.predict(np.full((1, 3), 1e300))


def test_float32_c_arrays_pass_as_they_are_others_are_converted_once(rng):
    X, y = blobs(rng, 50, 4)
    clf = libknn.KNeighborsClassifier(3).fit(X, y)
    assert clf._validate_X(X) is X
    for other in (X.astype(np.float64), np.asfortranarray(X), X[:, ::-1], X.astype(np.int32)):
        converted = clf._validate_X(other)
        assert converted.dtype == np.float32 and converted.flags.c_contiguous
    # The module takes nothing else: no conversion hides in the binding.
    with pytest.raises(TypeError):
        clf._model.kneighbors(X.astype(np.float64), 3)
    with pytest.raises(TypeError):
        clf._model.kneighbors(np.asfortranarray(X), 3)
    np.testing.assert_array_equal(clf.predict(X.astype(np.float64)), clf.predict(X))
    np.testing.assert_array_equal(clf.predict(np.asfortranarray(X)), clf.predict(X))


def test_read_only_and_memory_mapped_input(rng, tmp_path):
    X, y = blobs(rng, 80, 3)
    path = tmp_path / "x.npy"
    np.save(path, X)
    mapped = np.load(path, mmap_mode="r")
    clf = libknn.KNeighborsClassifier(4).fit(mapped, y)
    np.testing.assert_array_equal(clf.predict(mapped), libknn.KNeighborsClassifier(4).fit(X, y).predict(X))


def test_searches_from_several_threads_give_the_single_thread_answer(rng):
    # The search runs without the GIL; a fitted model answers several threads at once.
    X, y = blobs(rng, 2000, 16)
    Q, _ = blobs(rng, 500, 16)
    clf = libknn.KNeighborsClassifier(7, weights="distance", device="cpu", n_jobs=1).fit(X, y)
    want = clf.predict_proba(Q)
    results = [None] * 4

    def work(i):
        results[i] = clf.predict_proba(Q)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_a_misaligned_buffer_is_copied_and_answers_alike(rng):
    X, y = blobs(rng, 60, 5)
    raw = np.zeros(X.size * 4 + 1, dtype=np.uint8)
    raw[1:] = np.frombuffer(X.astype(np.float32).tobytes(), dtype=np.uint8)
    odd = np.frombuffer(raw.data, dtype=np.float32, offset=1).reshape(X.shape)
    assert not odd.flags.aligned and odd.flags.c_contiguous
    clf = libknn.KNeighborsClassifier(3).fit(X, y)
    assert np.array_equal(clf.predict_proba(odd), clf.predict_proba(X))
    assert np.array_equal(libknn.KNeighborsClassifier(3).fit(odd, y).predict(X), clf.predict(X))
