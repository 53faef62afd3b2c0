"""What differs between the scikit-learn versions the package supports (1.2 to 1.9)."""

try:  # scikit-learn 1.6 and later: a function; the estimator method is gone
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:  # pragma: no cover - exercised on scikit-learn < 1.6
    _validate_data = None


def validate_data(estimator, X="no_validation", y="no_validation", reset=True, **check_params):
    """scikit-learn's own input validation: checks X (and y), sets or checks n_features_in_ and
    feature_names_in_, and raises scikit-learn's exceptions with its messages."""
    if _validate_data is not None:
        return _validate_data(estimator, X, y, reset=reset, **check_params)
    return estimator._validate_data(X, y, reset=reset, **check_params)
