"""Queries already in GPU memory: a CuPy array or a PyTorch CUDA tensor (anything else with
``__cuda_array_interface__`` is refused by name) is searched where it is, and the neighbours come
back in GPU memory as arrays of the same library, with no copy through the host."""


def is_device_array(X):
    return hasattr(X, "__cuda_array_interface__")


class _Library:
    """What the search needs of the array's library: new arrays on X's device, their addresses,
    and a wait for the work queued on that device."""

    def __init__(self, X):
        root = type(X).__module__.split(".")[0]
        if root == "cupy":
            import cupy

            device = cupy.cuda.Device(X.device.id)

            def empty(shape, dtype):
                with device:
                    return cupy.empty(shape, dtype=dtype)

            self.empty, self.address, self.synchronize = empty, lambda a: a.data.ptr, device.synchronize
        elif root == "torch":
            import torch

            self.empty = lambda shape, dtype: torch.empty(shape, dtype=getattr(torch, dtype), device=X.device)
            self.address = lambda a: a.data_ptr()
            self.synchronize = lambda: torch.cuda.synchronize(X.device)
        else:
            raise TypeError(f"X in GPU memory must be a CuPy array or a PyTorch tensor, not {type(X).__module__}.{type(X).__name__}")


def kneighbors(estimator, X, k):
    """(distances, indices) of the rows of X, each (n_queries, k), float64 and int64, in GPU memory
    on X's device. The model must run on the GPU (device 'cuda', or 'auto' with one) and not scale
    (scaling='none'): the library's refusal names the parameter."""
    face = X.__cuda_array_interface__
    shape = tuple(face["shape"])
    if len(shape) != 2:
        raise ValueError(f"X in GPU memory must be 2-d (n_queries, n_features); its shape is {shape}")
    if shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {shape[1]} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input")
    if face["typestr"] != "<f4":
        raise ValueError(f"X in GPU memory must be float32 (its typestr is {face['typestr']!r}): "
                         "convert it first, e.g. X.astype('float32') or X.float()")
    strides = face.get("strides")
    if strides is not None and ((shape[0] > 1 and strides[0] != 4 * shape[1]) or (shape[1] > 1 and strides[1] != 4)):
        raise ValueError("X in GPU memory must be C-contiguous: make it so first, e.g. "
                         "cupy.ascontiguousarray(X) or X.contiguous()")
    # The model's own checks (its scaling, sharding and backend; k) by a search of no rows,
    # before any result is allocated or the device waited on.
    estimator._model.kneighbors_on_device(0, 0, k, 0, 0)
    library = _Library(X)
    distances, indices = library.empty((shape[0], k), "float64"), library.empty((shape[0], k), "int64")
    if shape[0] > 0:
        library.synchronize()  # X as written by work still queued on its device
        estimator._model.kneighbors_on_device(face["data"][0], shape[0], k, library.address(indices),
                                              library.address(distances))
    return distances, indices
