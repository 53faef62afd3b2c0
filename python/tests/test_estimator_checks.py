"""scikit-learn's own estimator checks, every one of them, for the three estimators: a check that
skips itself (SkipTest) fails here, so that none passes by being left out."""

import unittest

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import libknn


@parametrize_with_checks([libknn.KNeighborsClassifier(), libknn.KNeighborsRegressor(), libknn.NearestNeighbors()])
def test_sklearn_check(estimator, check):
    try:
        check(estimator)
    except unittest.SkipTest as e:
        pytest.fail(f"the check skipped itself: {e}")
