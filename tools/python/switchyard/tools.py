"""The tools library (libswitchyard_tools, sy_tools.h): quantize and llm_export.

libswitchyard_tools links libswitchyard, so it must be the one next to the
library this package loaded (the same build tree or prefix): a second copy of
libswitchyard in the process would not know the first one's objects. It is
looked for there, or at SWITCHYARD_TOOLS_LIBRARY.
"""
import ctypes
import os
import threading
from dataclasses import dataclass

import numpy as np

from . import _lib
from .env import Env, default_env
from .errors import Error, StatusCode, check
from .tensor import describe

TOOLS_ENV = "SWITCHYARD_TOOLS_LIBRARY"
_P = ctypes.POINTER
PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t,
                               ctypes.c_char_p)
OBSERVERS = {"minmax": 0, "percentile": 1}
MAX_VARIANTS = 8


class _QuantizeOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("scheme", ctypes.c_char_p), ("per_channel", ctypes.c_int),
                ("block_size", ctypes.c_int32), ("observer", ctypes.c_int), ("percentile", ctypes.c_double),
                ("skip_evaluation", ctypes.c_int), ("progress", PROGRESS_FN), ("progress_user", ctypes.c_void_p)]


class _CalibSource(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("dir", ctypes.c_char_p),
                ("tensors", _P(_P(_lib.SyTensor))), ("n_samples", ctypes.c_size_t)]


class _QuantizeReport(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("n_samples", ctypes.c_size_t), ("conv_folds", ctypes.c_int),
                ("weight_only", ctypes.c_int), ("block_size", ctypes.c_int32), ("weight_tensors", ctypes.c_size_t),
                ("opset", ctypes.c_int64), ("input_bytes", ctypes.c_size_t), ("output_bytes", ctypes.c_size_t),
                ("evaluated", ctypes.c_int), ("max_abs_error", ctypes.c_double), ("relative_error", ctypes.c_double),
                ("argmax_agree", ctypes.c_size_t), ("argmax_compared", ctypes.c_size_t)]


class _LlmExportOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("shards", ctypes.c_int), ("n_ar", ctypes.c_int),
                ("n_cl", ctypes.c_int), ("ar", ctypes.c_int * MAX_VARIANTS), ("cl", ctypes.c_int * MAX_VARIANTS),
                ("fp16", ctypes.c_int), ("onnx_attention", ctypes.c_int), ("progress", PROGRESS_FN),
                ("progress_user", ctypes.c_void_p)]


@dataclass(frozen=True)
class QuantizeReport:
    """sy_quantize_report: what the run did and, when evaluated, the written
    model against fp32 on the calibration samples."""
    n_samples: int
    conv_folds: int
    weight_only: bool
    block_size: int
    weight_tensors: int
    opset: int
    input_bytes: int
    output_bytes: int
    evaluated: bool
    max_abs_error: float
    relative_error: float
    argmax_agree: int
    argmax_compared: int


_lock = threading.Lock()
_tools = None


def tools_library():
    """The ctypes handle of libswitchyard_tools (loaded on first use)."""
    global _tools
    with _lock:
        if _tools is not None:
            return _tools
        main = _lib.library_path()
        path = os.environ.get(TOOLS_ENV) or os.path.join(os.path.dirname(main), "libswitchyard_tools.so")
        if not os.path.exists(path):
            raise Error(StatusCode.NOT_FOUND, "libswitchyard_tools not found next to %s (%s); set %s to its path"
                        % (main, path, TOOLS_ENV))
        lib = ctypes.CDLL(path)
        lib.sy_tools_version.restype = ctypes.c_int
        lib.sy_tools_version.argtypes = []
        lib.sy_quantize.restype = ctypes.c_void_p
        lib.sy_quantize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                    _P(_QuantizeOptions), _P(_CalibSource), ctypes.c_char_p, _P(_QuantizeReport)]
        lib.sy_llm_export.restype = ctypes.c_void_p
        lib.sy_llm_export.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, _P(_LlmExportOptions)]
        if lib.sy_tools_version() < 1:
            raise Error(StatusCode.ABI_MISMATCH, "%s: tools version %d, this package needs 1"
                        % (path, lib.sy_tools_version()))
        _tools = lib
        return lib


def _progress(fn):
    """A C progress callback calling fn(phase, done, total, message); exceptions in fn are kept."""
    if fn is None:
        return PROGRESS_FN(), None
    errors = []

    def cb(user, phase, done, total, message):
        if errors:
            return
        try:
            fn(_lib.text(phase), done, total, _lib.text(message))
        except BaseException as e:  # raised after the call returns
            errors.append(e)
    return PROGRESS_FN(cb), errors


def quantize(model, calib, output, *, env=None, scheme="int8", per_channel=False, block_size=0,
             observer="minmax", percentile=0.0, evaluate=True, progress=None, name=None):
    """Post-training static quantization (sy_quantize): writes `output` and returns a QuantizeReport.

    `model`: a float ONNX file path, or its bytes (`name` then names it in
    messages). `calib`: a folder (input_0.pb ... or .npy, a folder of
    test_data_set_* folders, or .npy files one sample each), or a list of
    samples, each an array (one-input model) or a list/dict of arrays in the
    model's input order / by input name. `scheme`: a recipe a loaded quant_*
    plugin publishes ("int8", "uint8", "int16x8", "fp16", "int4").
    `observer`: "minmax" or "percentile". `progress(phase, done, total,
    message)` is called on this thread. The file is the one `switchyard
    quantize` writes for the same arguments."""
    env = env if env is not None else default_env()
    if not isinstance(env, Env):
        raise Error(StatusCode.INVALID_ARGUMENT, "quantize: env must be a switchyard.Env")
    if observer not in OBSERVERS:
        raise Error(StatusCode.INVALID_ARGUMENT, "quantize: observer=%r: expected 'minmax' or 'percentile'"
                    % (observer,))
    lib = tools_library()
    o = _QuantizeOptions()
    o.struct_size = ctypes.sizeof(o)
    o.scheme = scheme.encode()
    o.per_channel = int(bool(per_channel))
    o.block_size = int(block_size)
    o.observer = OBSERVERS[observer]
    o.percentile = float(percentile)
    o.skip_evaluation = 0 if evaluate else 1
    o.progress, errors = _progress(progress)
    c = _CalibSource()
    c.struct_size = ctypes.sizeof(c)
    keep = []
    if isinstance(calib, (str, os.PathLike)):
        c.dir = _lib.cstr(os.fspath(calib))
    else:
        keep = _calib_tensors(env, model, calib, name)
        ptrs = (_P(_lib.SyTensor) * max(len(keep), 1))(*[ctypes.pointer(t) for t, _ in keep])
        c.tensors = ptrs
        c.n_samples = len(calib)
    r = _QuantizeReport()
    r.struct_size = ctypes.sizeof(r)
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        st = lib.sy_quantize(env._ptr(), _lib.cstr(name or "<bytes>"), data, len(data), ctypes.byref(o),
                             ctypes.byref(c), _lib.cstr(os.fspath(output)), ctypes.byref(r))
    else:
        st = lib.sy_quantize(env._ptr(), _lib.cstr(os.fspath(model)), None, 0, ctypes.byref(o), ctypes.byref(c),
                             _lib.cstr(os.fspath(output)), ctypes.byref(r))
    del keep
    check(st)
    if errors:
        raise errors[0]
    return QuantizeReport(r.n_samples, r.conv_folds, bool(r.weight_only), r.block_size, r.weight_tensors, r.opset,
                          r.input_bytes, r.output_bytes, bool(r.evaluated), r.max_abs_error, r.relative_error,
                          r.argmax_agree, r.argmax_compared)


def _calib_tensors(env, model, samples, name):
    """Samples -> [(SyTensor, array)] sample-major in the model's input order, checked like Session.run."""
    from .model import Model
    m = model if isinstance(model, Model) else Model(model, env, name=name)
    inputs = m.inputs
    out = []
    for k, s in enumerate(samples):
        if isinstance(s, dict):
            unknown = set(s) - {vi.name for vi in inputs}
            if unknown:
                raise Error(StatusCode.NOT_FOUND, "quantize: calibration sample %d names no input '%s'"
                            % (k, sorted(unknown)[0]))
            s = [s.get(vi.name) for vi in inputs]
        elif not isinstance(s, (list, tuple)):
            s = [s]
        if len(s) != len(inputs) or any(a is None for a in s):
            raise Error(StatusCode.INVALID_ARGUMENT, "quantize: calibration sample %d has %d of the model's %d "
                        "inputs" % (k, sum(a is not None for a in s), len(inputs)))
        for vi, a in zip(inputs, s):
            a = np.ascontiguousarray(np.asarray(a, dtype=vi.dtype) if not isinstance(a, np.ndarray) else a)
            if a.dtype != vi.dtype:
                raise Error(StatusCode.TYPE, "quantize: sample %d input '%s': dtype %s, the model expects %s"
                            % (k, vi.name, a.dtype, vi.dtype_name))
            out.append((describe(a, "calibration sample %d input '%s'" % (k, vi.name)), a))
    return out


def llm_export(checkpoint, tokenizer, out_dir, *, shards=1, ar=(), cl=(), fp16=False, onnx_attention=False,
               progress=None):
    """A llama2.c checkpoint and tokenizer -> an LLM bundle in out_dir
    (sy_llm_export; what `switchyard llm-export` writes). `ar`/`cl`: prompt
    and context lengths, ascending (default (1, 128) and (128, 256, 512))."""
    lib = tools_library()
    o = _LlmExportOptions()
    o.struct_size = ctypes.sizeof(o)
    o.shards = int(shards)
    for field, values, count in (("ar", ar, "n_ar"), ("cl", cl, "n_cl")):
        values = list(values)
        if len(values) > MAX_VARIANTS:
            raise Error(StatusCode.INVALID_ARGUMENT, "llm_export: at most %d %s values, got %d"
                        % (MAX_VARIANTS, field, len(values)))
        arr = getattr(o, field)
        for i, v in enumerate(values):
            arr[i] = int(v)
        setattr(o, count, len(values))
    o.fp16 = int(bool(fp16))
    o.onnx_attention = int(bool(onnx_attention))
    o.progress, errors = _progress(progress)
    check(lib.sy_llm_export(_lib.cstr(os.fspath(checkpoint)), _lib.cstr(os.fspath(tokenizer)),
                            _lib.cstr(os.fspath(out_dir)), ctypes.byref(o)))
    if errors:
        raise errors[0]
