"""switchyard.Model: a parsed, validated model (ONNX or TFLite), immutable once loaded."""
import ctypes
import os
from dataclasses import dataclass

from . import _lib, dtypes
from ._handles import Handle
from .env import Env, default_env
from .errors import Error, StatusCode, check

SKIP_OP_CHECK = 1  # SY_LOAD_SKIP_OP_CHECK


@dataclass(frozen=True)
class ValueInfo:
    """A graph input or output: `shape` holds an int per fixed dim and, for a
    symbolic or unknown one, its name (str) or None; `dtype` is the numpy
    dtype that carries it (raw bits for bfloat16/float8), None when there is none."""
    name: str
    dtype_name: str
    dtype: object
    shape: tuple
    sy_dtype: int

    def __str__(self):
        dims = ",".join(str(d) if d is not None else "?" for d in self.shape)
        return "%s %s [%s]" % (self.name, self.dtype_name, dims)


def value_info(vi):
    try:
        npdt = dtypes.to_numpy(vi.dtype)
    except Error:
        npdt = None
    shape = []
    for d in range(max(vi.rank, 0)):
        if vi.dims[d] >= 0:
            shape.append(int(vi.dims[d]))
        else:
            shape.append(_lib.text(vi.dim_names[d]))
    return ValueInfo(_lib.text(vi.name), dtypes.name(vi.dtype), npdt, tuple(shape), vi.dtype)


class Model:
    """Model(source, env=None, *, name=None, base_dir=None, skip_op_check=False)

    `source`: a file path (str or PathLike) or the model's bytes. `env`: the
    Env whose plugins validate it (default: switchyard.default_env()); a
    session of the model must use the same env. For bytes, `name` appears in
    messages and external data resolves against `base_dir`."""

    def __init__(self, source, env=None, *, name=None, base_dir=None, skip_op_check=False):
        self.env = env if env is not None else default_env()
        if not isinstance(self.env, Env):
            raise Error(StatusCode.INVALID_ARGUMENT, "Model: env must be a switchyard.Env, got %s"
                        % type(self.env).__name__)
        lib = _lib.lib()
        out = ctypes.c_void_p()
        if isinstance(source, (bytes, bytearray, memoryview)):
            if skip_op_check:
                raise Error(StatusCode.INVALID_ARGUMENT, "Model: skip_op_check applies to files only")
            buf = bytes(source)
            self._buffer = buf  # the importer copies what it keeps; held anyway while the model lives
            check(lib.sy_model_load_buffer(self.env._ptr(), buf, len(buf), _lib.cstr(name or "<bytes>"),
                                           _lib.cstr(base_dir), ctypes.byref(out)))
            self.path = None
        else:
            self.path = os.fspath(source)
            check(lib.sy_model_load_flags(self.env._ptr(), _lib.cstr(self.path),
                                          SKIP_OP_CHECK if skip_op_check else 0, ctypes.byref(out)))
        self._h = Handle(out.value, "model", lib.sy_model_release, parents=(self.env._h,))

    def close(self):
        """Give up this model; released after the sessions made from it."""
        h = getattr(self, "_h", None)
        if h is not None:
            h.drop()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _ptr(self):
        if self._h._dropped or self._h.ptr is None:
            raise Error(StatusCode.INVALID_ARGUMENT, "this Model is closed")
        return self._h.ptr

    @property
    def inputs(self):
        lib, p = _lib.lib(), self._ptr()
        out = []
        for i in range(lib.sy_model_input_count(p)):
            vi = _lib.new(_lib.SyValueInfo)
            lib.sy_model_input_info(p, i, ctypes.byref(vi))
            out.append(value_info(vi))
        return out

    @property
    def outputs(self):
        lib, p = _lib.lib(), self._ptr()
        out = []
        for i in range(lib.sy_model_output_count(p)):
            vi = _lib.new(_lib.SyValueInfo)
            lib.sy_model_output_info(p, i, ctypes.byref(vi))
            out.append(value_info(vi))
        return out

    @property
    def format(self):
        return _lib.text(_lib.lib().sy_model_format(self._ptr()))

    @property
    def ir_version(self):
        return int(_lib.lib().sy_model_ir_version(self._ptr()))

    @property
    def opsets(self):
        """{domain: version}; "" is the default ONNX domain."""
        lib, p = _lib.lib(), self._ptr()
        out = {}
        for i in range(lib.sy_model_opset_count(p)):
            d, v = ctypes.c_char_p(), ctypes.c_int64()
            if lib.sy_model_opset(p, i, ctypes.byref(d), ctypes.byref(v)):
                out[_lib.text(d.value) or ""] = v.value
        return out

    @property
    def nodes(self):
        """[(name, domain, op)] in graph order."""
        lib, p = _lib.lib(), self._ptr()
        out = []
        for i in range(lib.sy_model_node_count(p)):
            n, d, o = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
            if lib.sy_model_node(p, i, ctypes.byref(n), ctypes.byref(d), ctypes.byref(o)):
                out.append((_lib.text(n.value), _lib.text(d.value) or "", _lib.text(o.value)))
        return out

    @property
    def initializer_bytes(self):
        return int(_lib.lib().sy_model_initializer_bytes(self._ptr()))

    def unsupported_ops(self):
        """Ops no loaded plugin defines, as the library's one line of text; None when there are none."""
        lib = _lib.lib()
        p = lib.sy_model_unsupported_ops(self._ptr())
        if not p:
            return None
        s = ctypes.string_at(p).decode("utf-8", "replace")
        _lib.free(p)
        return s
