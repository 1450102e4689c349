"""Training from Python over the tools library's sy_train.h: build the
artifacts of a float ONNX model (train_build), run steps on them
(TrainSession), read IDX data (read_idx) and whole data sets in the layouts
of `switchyard train --data` (read_dataset). docs/training.md describes the
artifacts and the C API these calls wrap."""
import ctypes
import os
from dataclasses import dataclass

import numpy as np

from . import _lib
from ._handles import Handle
from .env import Env, default_env
from .errors import Error, StatusCode, check
from .tensor import describe, view
from .tools import tools_library

_P = ctypes.POINTER
LOSSES = {"cross_entropy": 0, "mse": 1}
OPTIMIZERS = {"sgd": 0, "adam": 1}


class _BuildOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("loss", ctypes.c_int), ("output", ctypes.c_char_p),
                ("trainable", ctypes.c_int), ("last_k", ctypes.c_int), ("optimizer", ctypes.c_int),
                ("momentum", ctypes.c_float), ("beta1", ctypes.c_float), ("beta2", ctypes.c_float),
                ("epsilon", ctypes.c_float), ("weight_decay", ctypes.c_float)]


class _BuildReport(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("n_trainable", ctypes.c_size_t),
                ("trainable_elements", ctypes.c_int64), ("forward_nodes", ctypes.c_size_t),
                ("backward_nodes", ctypes.c_size_t)]


@dataclass(frozen=True)
class TrainBuildReport:
    """sy_train_build_report: what train_build wrote."""
    n_trainable: int
    trainable_elements: int
    forward_nodes: int
    backward_nodes: int


_bound = set()


def _lib_train():
    lib = tools_library()
    if "train" not in _bound:
        lib.sy_train_build.restype = ctypes.c_void_p
        lib.sy_train_build.argtypes = [ctypes.c_char_p, _P(_BuildOptions), ctypes.c_char_p, _P(_BuildReport)]
        lib.sy_train_session_create.restype = ctypes.c_void_p
        lib.sy_train_session_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _P(ctypes.c_void_p)]
        lib.sy_train_session_release.restype = None
        lib.sy_train_session_release.argtypes = [ctypes.c_void_p]
        lib.sy_train_session_step.restype = ctypes.c_void_p
        lib.sy_train_session_step.argtypes = [ctypes.c_void_p, _P(_P(_lib.SyTensor)), ctypes.c_size_t,
                                              ctypes.c_float, _P(ctypes.c_float)]
        lib.sy_train_session_eval.restype = ctypes.c_void_p
        lib.sy_train_session_eval.argtypes = [ctypes.c_void_p, _P(_P(_lib.SyTensor)), ctypes.c_size_t,
                                              _P(ctypes.c_float), _P(_P(_lib.SyTensor))]
        lib.sy_train_session_steps.restype = ctypes.c_int64
        lib.sy_train_session_steps.argtypes = [ctypes.c_void_p]
        for fn in ("sy_train_session_save", "sy_train_session_load", "sy_train_session_export"):
            getattr(lib, fn).restype = ctypes.c_void_p
            getattr(lib, fn).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.sy_idx_read.restype = ctypes.c_void_p
        lib.sy_idx_read.argtypes = [ctypes.c_char_p, _P(_P(_lib.SyTensor))]
        lib.sy_idx_free.restype = None
        lib.sy_idx_free.argtypes = [_P(_lib.SyTensor)]
        lib.sy_dataset_open.restype = ctypes.c_void_p
        lib.sy_dataset_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p, _P(ctypes.c_void_p)]
        lib.sy_dataset_release.restype = None
        lib.sy_dataset_release.argtypes = [ctypes.c_void_p]
        lib.sy_dataset_size.restype = ctypes.c_int64
        lib.sy_dataset_size.argtypes = [ctypes.c_void_p]
        lib.sy_dataset_sample_shape.restype = ctypes.c_int32
        lib.sy_dataset_sample_shape.argtypes = [ctypes.c_void_p, _P(ctypes.c_int64)]
        lib.sy_dataset_batch.restype = ctypes.c_void_p
        lib.sy_dataset_batch.argtypes = [ctypes.c_void_p, _P(ctypes.c_int64), ctypes.c_int64, ctypes.c_int64,
                                         _P(ctypes.c_float), _P(ctypes.c_int64)]
        _bound.add("train")
    return lib


def train_build(model, out_dir, *, loss="cross_entropy", output=None, trainable="all", optimizer="sgd",
                momentum=0.0, beta1=0.0, beta2=0.0, epsilon=0.0, weight_decay=0.0):
    """The training artifacts of a float ONNX model file into out_dir
    (sy_train_build). `trainable`: "all", "bias" (biases only) or
    ("last", K) for the last K layers; `optimizer`: "sgd" (Momentum node,
    `momentum` 0 = plain SGD) or "adam" (0 for beta1/beta2/epsilon means
    0.9/0.999/1e-8)."""
    if loss not in LOSSES:
        raise Error(StatusCode.INVALID_ARGUMENT, "train_build: loss=%r: expected 'cross_entropy' or 'mse'" % (loss,))
    if optimizer not in OPTIMIZERS:
        raise Error(StatusCode.INVALID_ARGUMENT, "train_build: optimizer=%r: expected 'sgd' or 'adam'" % (optimizer,))
    o = _BuildOptions()
    o.struct_size = ctypes.sizeof(o)
    o.loss = LOSSES[loss]
    o.output = _lib.cstr(output) if output else None
    if trainable == "all":
        o.trainable = 0
    elif trainable == "bias":
        o.trainable = 2
    elif isinstance(trainable, tuple) and len(trainable) == 2 and trainable[0] == "last":
        o.trainable, o.last_k = 1, int(trainable[1])
    else:
        raise Error(StatusCode.INVALID_ARGUMENT, "train_build: trainable=%r: expected 'all', 'bias' or ('last', K)"
                    % (trainable,))
    o.optimizer = OPTIMIZERS[optimizer]
    o.momentum, o.beta1, o.beta2, o.epsilon, o.weight_decay = momentum, beta1, beta2, epsilon, weight_decay
    r = _BuildReport()
    r.struct_size = ctypes.sizeof(r)
    check(_lib_train().sy_train_build(_lib.cstr(os.fspath(model)), ctypes.byref(o), _lib.cstr(os.fspath(out_dir)),
                                      ctypes.byref(r)))
    return TrainBuildReport(r.n_trainable, r.trainable_elements, r.forward_nodes, r.backward_nodes)


def read_idx(path):
    """An IDX file (MNIST / Fashion-MNIST format, gzip or not) as a numpy array (a copy)."""
    lib = _lib_train()
    out = _P(_lib.SyTensor)()
    check(lib.sy_idx_read(_lib.cstr(os.fspath(path)), ctypes.byref(out)))
    try:
        return np.array(view(out.contents, None), copy=True)
    finally:
        lib.sy_idx_free(out)


def read_dataset(directory, split="train"):
    """One split ("train" or "test") of a data set in a layout of `switchyard
    train --data` (sy_dataset_open: IDX files with the MNIST names, pixels
    scaled by 1/255, or folders DIR/train, DIR/test of input_K / label_K .npy
    or .pb pairs) as (samples float32 [N, ...], labels int64 [N])."""
    lib = _lib_train()
    h = ctypes.c_void_p()
    check(lib.sy_dataset_open(_lib.cstr(os.fspath(directory)), _lib.cstr(split), ctypes.byref(h)))
    try:
        n = lib.sy_dataset_size(h)
        dims = (ctypes.c_int64 * 8)()
        rank = lib.sy_dataset_sample_shape(h, dims)
        x = np.empty((n,) + tuple(dims[:rank]), np.float32)
        y = np.empty(n, np.int64)
        index = np.arange(n, dtype=np.int64)
        check(lib.sy_dataset_batch(h, index.ctypes.data_as(_P(ctypes.c_int64)), n, 0,
                                   x.ctypes.data_as(_P(ctypes.c_float)), y.ctypes.data_as(_P(ctypes.c_int64))))
        return x, y
    finally:
        lib.sy_dataset_release(h)


class TrainSession:
    """Training steps on the artifacts in `artifacts_dir` (sy_train_session):
    step() updates the trainable tensors and returns the batch's loss,
    evaluate() runs the eval model, save()/load() a checkpoint, export() the
    trained inference model. Inputs are the data inputs (a list in the
    training model's order, or one array) and the labels."""

    def __init__(self, artifacts_dir, env=None):
        self.env = env if env is not None else default_env()
        if not isinstance(self.env, Env):
            raise Error(StatusCode.INVALID_ARGUMENT, "TrainSession: env must be a switchyard.Env")
        lib = _lib_train()
        out = ctypes.c_void_p()
        check(lib.sy_train_session_create(self.env._ptr(), _lib.cstr(os.fspath(artifacts_dir)), ctypes.byref(out)))
        self._h = Handle(out.value, "train_session", lib.sy_train_session_release, parents=(self.env._h,))

    def close(self):
        self._h.drop()

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None:
            h.drop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _ptr(self):
        if self._h._dropped or self._h.ptr is None:
            raise Error(StatusCode.INVALID_ARGUMENT, "this TrainSession is closed")
        return self._h.ptr

    @staticmethod
    def _tensors(data, labels):
        arrays = list(data) if isinstance(data, (list, tuple)) else [data]
        arrays = [np.ascontiguousarray(a) for a in arrays] + [np.ascontiguousarray(labels)]
        ts = [describe(a, "training input %d" % i) for i, a in enumerate(arrays)]
        ptrs = (_P(_lib.SyTensor) * len(ts))(*[ctypes.pointer(t) for t in ts])
        return arrays, ts, ptrs

    def step(self, data, labels, lr):
        """One optimizer step on the batch; the batch's mean loss before the update."""
        keep = self._tensors(data, labels)
        loss = ctypes.c_float()
        check(_lib_train().sy_train_session_step(self._ptr(), keep[2], len(keep[1]), float(lr), ctypes.byref(loss)))
        return loss.value

    def evaluate(self, data, labels):
        """(loss, model output) of the eval model on the batch; the output is a copy."""
        keep = self._tensors(data, labels)
        loss = ctypes.c_float()
        out = _P(_lib.SyTensor)()
        check(_lib_train().sy_train_session_eval(self._ptr(), keep[2], len(keep[1]), ctypes.byref(loss),
                                                 ctypes.byref(out)))
        return loss.value, np.array(view(out.contents, self), copy=True)

    @property
    def steps(self):
        return _lib_train().sy_train_session_steps(self._ptr())

    def save(self, path):
        check(_lib_train().sy_train_session_save(self._ptr(), _lib.cstr(os.fspath(path))))

    def load(self, path):
        check(_lib_train().sy_train_session_load(self._ptr(), _lib.cstr(os.fspath(path))))

    def export(self, path):
        check(_lib_train().sy_train_session_export(self._ptr(), _lib.cstr(os.fspath(path))))
