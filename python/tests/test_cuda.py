"""device='cuda' against device='cpu': the same neighbours and distances, bit for bit, the same
class predictions, and vote shares, means and k_sweep scores within 1e-9 relative
(docs/design.md#contracts). Skips where no GPU is usable."""

import numpy as np
import pytest

import libknn
from conftest import blobs

pytestmark = pytest.mark.skipif(not libknn.cuda_available(), reason="no usable GPU (or a build without CUDA)")

METRICS = ["euclidean", "manhattan", "cosine"]
WEIGHTS = ["uniform", "distance", "gaussian:0.7"]


def both(cls, X, y, **params):
    cpu = cls(device="cpu", **params).fit(X, y)
    gpu = cls(device="cuda", **params).fit(X, y)
    assert gpu._model.backend != "cpu"
    return cpu, gpu


def assert_same_neighbours(cpu, gpu, Q, k=None):
    for kwargs in ({"X": Q, "n_neighbors": k}, {"X": None, "n_neighbors": k}):
        dc, ic = cpu.kneighbors(**kwargs)
        dg, ig = gpu.kneighbors(**kwargs)
        np.testing.assert_array_equal(ig, ic)
        np.testing.assert_array_equal(dg, dc)


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("precision", ["auto", "fp32", "tf32"])
def test_classifier(rng, metric, weights, precision):
    X, y = blobs(rng, 3000, 24, classes=5)
    Q, _ = blobs(rng, 700, 24, classes=5)
    for k in (1, 9, 64):
        cpu, gpu = both(libknn.KNeighborsClassifier, X, y, n_neighbors=k, weights=weights, metric=metric, precision=precision)
        assert_same_neighbours(cpu, gpu, Q)
        np.testing.assert_array_equal(gpu.predict(Q), cpu.predict(Q))
        np.testing.assert_allclose(gpu.predict_proba(Q), cpu.predict_proba(Q), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("features", [5, 8])
def test_default_precision_on_both_sides_of_its_threshold(rng, features):
    # precision='auto' takes the split float32 pass below 8 features, the TF32 pass from 8.
    X, y = blobs(rng, 3000, features, classes=4)
    Q, _ = blobs(rng, 500, features, classes=4)
    cpu, gpu = both(libknn.KNeighborsClassifier, X, y, n_neighbors=7)
    assert_same_neighbours(cpu, gpu, Q)
    np.testing.assert_array_equal(gpu.predict(Q), cpu.predict(Q))


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("weights", WEIGHTS)
@pytest.mark.parametrize("scaling", ["none", "minmax", "standard"])
def test_regressor(rng, metric, weights, scaling):
    X, _ = blobs(rng, 2500, 12)
    Q, _ = blobs(rng, 600, 12)
    y = X[:, 0].astype(np.float64) * 4 + rng.normal(size=len(X))
    cpu, gpu = both(libknn.KNeighborsRegressor, X, y, n_neighbors=11, weights=weights, metric=metric, scaling=scaling)
    assert_same_neighbours(cpu, gpu, Q)
    np.testing.assert_allclose(gpu.predict(Q), cpu.predict(Q), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("metric", METRICS)
def test_nearest_neighbors_large_k(rng, metric):
    X, _ = blobs(rng, 6000, 20)
    Q, _ = blobs(rng, 300, 20)
    cpu, gpu = both(libknn.NearestNeighbors, X, None, n_neighbors=3000, metric=metric)
    assert_same_neighbours(cpu, gpu, Q)
    assert_same_neighbours(cpu, gpu, Q, k=5)


@pytest.mark.parametrize("task", ["classify", "regress"])
def test_k_sweep(rng, task):
    X, y = blobs(rng, 1500, 10, classes=4)
    if task == "regress":
        y = X[:, 2].astype(np.float64) + rng.normal(size=len(y))
    kwargs = dict(k=range(1, 41), weights=["uniform", "distance"], metric=["euclidean", "manhattan"], scaling="minmax")
    cpu = libknn.k_sweep(X, y, device="cpu", **kwargs)
    gpu = libknn.k_sweep(X, y, device="cuda", **kwargs)
    assert list(gpu.columns) == list(cpu.columns)
    for name in cpu.columns:
        # Text columns (weights, metric) are object or, with pandas 2's string dtype, "str".
        if not np.issubdtype(np.asarray(cpu[name]).dtype, np.number):
            np.testing.assert_array_equal(gpu[name], cpu[name])
        else:
            np.testing.assert_allclose(gpu[name], cpu[name], rtol=1e-9, atol=1e-12)


def device_copy(library, A):
    """A's values in GPU memory as an array of `library` (its tests skip where it is absent)."""
    xp = pytest.importorskip(library)
    return xp.asarray(A) if library == "cupy" else xp.from_numpy(A).cuda()


def to_host(library, A):
    assert type(A).__module__.split(".")[0] == library, type(A)
    return A.get() if library == "cupy" else A.cpu().numpy()


# Queries in GPU memory (CuPy arrays, PyTorch tensors) are searched there and answered there, with
# the CPU's neighbours and distances bit for bit: both selection paths (k up to 700), every
# metric, and a classifier's search as well as NearestNeighbors'.
@pytest.mark.parametrize("library", ["cupy", "torch"])
@pytest.mark.parametrize("metric", METRICS)
def test_kneighbors_of_queries_in_gpu_memory(rng, library, metric):
    X, y = blobs(rng, 3000, 40, classes=4)
    Q, _ = blobs(rng, 900, 40, classes=4)
    Qd = device_copy(library, Q)
    for cls, fit_y in ((libknn.NearestNeighbors, None), (libknn.KNeighborsClassifier, y)):
        cpu = cls(device="cpu", metric=metric).fit(X, fit_y)
        gpu = cls(device="cuda", metric=metric).fit(X, fit_y)
        for k in (1, 16, 700):
            dc, ic = cpu.kneighbors(Q, n_neighbors=k)
            dg, ig = gpu.kneighbors(Qd, n_neighbors=k)
            np.testing.assert_array_equal(to_host(library, ig), ic)
            np.testing.assert_array_equal(to_host(library, dg), dc)
            np.testing.assert_array_equal(to_host(library, gpu.kneighbors(Qd, n_neighbors=k, return_distance=False)), ic)
    d0, i0 = gpu.kneighbors(Qd[:0], n_neighbors=3)
    assert to_host(library, d0).shape == (0, 3) and to_host(library, i0).shape == (0, 3)


# What the search of GPU memory refuses, each with one line that says what to do.
@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_queries_in_gpu_memory_refused(rng, library):
    X, _ = blobs(rng, 500, 8)
    Q, _ = blobs(rng, 20, 8)
    Qd = device_copy(library, Q)
    gpu = libknn.NearestNeighbors(device="cuda").fit(X)
    with pytest.raises(ValueError, match="float32"):
        gpu.kneighbors(device_copy(library, Q.astype(np.float64)))
    with pytest.raises(ValueError, match="C-contiguous"):
        gpu.kneighbors(device_copy(library, np.ascontiguousarray(np.concatenate([Q, Q], axis=1)))[:, ::2])
    with pytest.raises(ValueError, match="features"):
        gpu.kneighbors(device_copy(library, Q[:, :5].copy()))
    with pytest.raises(ValueError, match="n_neighbors"):
        gpu.kneighbors(Qd, n_neighbors=501)
    bad = Q.copy()
    bad[3, 5] = np.nan
    with pytest.raises(ValueError, match="row 4, feature 6 is nan"):
        gpu.kneighbors(device_copy(library, bad))
    with pytest.raises(ValueError, match="scaling"):
        libknn.NearestNeighbors(device="cuda", scaling="minmax").fit(X).kneighbors(Qd)
    with pytest.raises((ValueError, RuntimeError), match="cuda backend"):
        libknn.NearestNeighbors(device="cpu").fit(X).kneighbors(Qd)
