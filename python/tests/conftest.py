"""Shared by the package's tests: random data whose seed is printed when a test fails."""

import os

import numpy as np
import pytest


def pytest_report_header(config):
    import libknn
    import sklearn

    return f"libknn {libknn.__version__} from {os.path.dirname(libknn.__file__)}; scikit-learn {sklearn.__version__}; numpy {np.__version__}"


@pytest.fixture
def rng(request):
    """A generator on a fresh seed (KNN_TEST_SEED repeats one), reported with a failure."""
    seed = int(os.environ.get("KNN_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
    request.node.user_properties.append(("seed", seed))
    print(f"seed {seed} (KNN_TEST_SEED={seed} repeats it)")
    return np.random.default_rng(seed)


def blobs(rng, n, d, classes=3):
    """float32 rows around one centre per class, and their class ids."""
    centres = rng.normal(scale=2.0, size=(classes, d))
    y = rng.integers(0, classes, size=n)
    X = (centres[y] + rng.normal(size=(n, d))).astype(np.float32)
    return X, y
