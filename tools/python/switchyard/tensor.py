"""numpy arrays <-> sy_tensor, and the tensor files of the C API (.pb TensorProto, .npy)."""
import ctypes
import os

import numpy as np

from . import _lib, dtypes
from .errors import Error, StatusCode, check


def shape_str(shape):
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def describe(t, what):
    """A filled SyTensor that points at the memory of C-contiguous array `t` (no copy)."""
    dt = dtypes.from_numpy(t.dtype)
    if dt is None:
        raise Error(StatusCode.TYPE, "%s: numpy dtype %s has no Switchyard dtype" % (what, t.dtype))
    if t.ndim > _lib.MAX_RANK:
        raise Error(StatusCode.SHAPE, "%s: rank %d, at most %d" % (what, t.ndim, _lib.MAX_RANK))
    st = _lib.new(_lib.SyTensor)
    st.dtype = dt
    st.rank = t.ndim
    for i, d in enumerate(t.shape):
        st.dims[i] = d
    st.data = t.ctypes.data if t.size else None
    st.nbytes = t.nbytes
    return st


class _Memory:
    """The buffer of a tensor owned by the library, exposed to numpy through
    __array_interface__; every array viewing it keeps this object (and its
    owner) alive."""

    def __init__(self, tensor, owner, readonly=True):
        self.owner = owner
        dims = tuple(tensor.dims[i] for i in range(tensor.rank))
        self.dtype = dtypes.to_numpy(tensor.dtype, _lib.text(tensor.name) or "tensor")
        self.__array_interface__ = {
            "shape": dims,
            "typestr": self.dtype.str,
            "data": (tensor.data or 0, readonly),
            "version": 3,
        }


def view(tensor, owner, readonly=True):
    """A numpy array over a sy_tensor's data without a copy; `owner` is kept
    alive as long as the array (or any view of it) is."""
    dims = tuple(tensor.dims[i] for i in range(tensor.rank))
    if not tensor.data or int(np.prod(dims, dtype=np.int64)) == 0:
        return np.zeros(dims, dtypes.to_numpy(tensor.dtype, _lib.text(tensor.name) or "tensor"))
    mem = _Memory(tensor, owner, readonly)
    return np.asarray(mem)


class _OwnedTensor:
    """A sy_tensor* from sy_tensor_read_file; freed when the last view goes."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        try:
            _lib.lib().sy_tensor_free(self.ptr)
        except Exception:  # interpreter shutdown
            pass


def read_tensor(path):
    """Read an ONNX TensorProto .pb or NumPy .npy file with the library's reader.
    Returns a numpy array (sharing the reader's buffer, no copy)."""
    p = ctypes.POINTER(_lib.SyTensor)()
    check(_lib.lib().sy_tensor_read_file(_lib.cstr(os.fspath(path)), ctypes.byref(p)))
    owned = _OwnedTensor(p)
    return view(p.contents, owned, readonly=False)


def write_tensor(path, array, name=None):
    """Write `array` as .pb (TensorProto, with `name`) or .npy, chosen by the
    extension; the library writes a temporary file and renames it."""
    a = np.ascontiguousarray(array)
    st = describe(a, os.fspath(path))
    keep = _lib.cstr(name)
    st.name = keep
    check(_lib.lib().sy_tensor_write_file(_lib.cstr(os.fspath(path)), ctypes.byref(st)))
