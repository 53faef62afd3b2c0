"""libknn: exact k-nearest neighbours with scikit-learn's estimator API.

KNeighborsClassifier, KNeighborsRegressor and NearestNeighbors take scikit-learn's parameter names
and give its results (no scaling unless asked), on the CPU or an NVIDIA GPU with the same
neighbours; k_sweep scores every k in one pass over cross-validation folds.
"""

from ._libknn import __version__, cuda_available
from ._classification import KNeighborsClassifier
from ._regression import KNeighborsRegressor
from ._unsupervised import NearestNeighbors
from ._sweep import k_sweep

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors", "k_sweep", "cuda_available", "__version__"]
