"""Element types: sy_dtype (ONNX TensorProto numbering) <-> numpy dtypes."""
import numpy as np

from . import _lib
from .errors import Error, StatusCode

FLOAT32, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, FLOAT64, UINT32, UINT64 = range(1, 14)
BFLOAT16 = 16

# dtypes numpy holds natively
_NUMPY = {
    FLOAT32: np.float32, UINT8: np.uint8, INT8: np.int8, UINT16: np.uint16, INT16: np.int16,
    INT32: np.int32, INT64: np.int64, BOOL: np.bool_, FLOAT16: np.float16, FLOAT64: np.float64,
    UINT32: np.uint32, UINT64: np.uint64,
}
# no numpy dtype: the raw bits in an unsigned integer of the same width
# (bfloat16 -> uint16, the five float8 kinds -> uint8)
_BITS = {BFLOAT16: np.uint16, 17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8, 24: np.uint8}

_FROM_NUMPY = {np.dtype(v): k for k, v in _NUMPY.items()}


def name(dt):
    """The library's name of a sy_dtype ("float32", "bfloat16", ...)."""
    return _lib.text(_lib.lib().sy_dtype_name(dt))


def to_numpy(dt, what="tensor"):
    """The numpy dtype that holds sy_dtype `dt`; Error(UNSUPPORTED) for packed types and strings."""
    t = _NUMPY.get(dt) or _BITS.get(dt)
    if t is None:
        raise Error(StatusCode.UNSUPPORTED, "%s: dtype %s has no numpy representation in this package "
                    "(packed 2/4-bit and string tensors are not exchanged)" % (what, name(dt)))
    return np.dtype(t)


def from_numpy(dtype):
    """sy_dtype of a numpy dtype (native byte order only), or None."""
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        return None
    return _FROM_NUMPY.get(dtype)
