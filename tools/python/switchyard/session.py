"""switchyard.Session: a model placed on providers, memory planned, ready to run.

Inputs are borrowed, not copied: a C-contiguous, aligned array of the
input's dtype is handed to the library as it is (SY_INPUT_BORROW), and the
session keeps a reference to it until the input is set again, so the memory
stays valid for every run that reads it. Other arrays (non-contiguous,
lists) are converted once.

Outputs: run() returns arrays of their own by default (one memcpy each).
run(..., copy=False) returns read-only views of the session's output
buffers without a copy; they keep the session alive, and they hold the
values of that run only: the next run of the session refuses to start while
one of them (or a view of one) is still referenced, because it would
overwrite or move that memory (TFLite's Interpreter has the same rule).
"""
import ctypes
import os
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from . import _lib, dtypes, tensor
from ._handles import Handle
from .env import Env
from .errors import Error, StatusCode, check
from .model import Model, value_info

BORROW = 1  # SY_INPUT_BORROW


@dataclass(frozen=True)
class Placement:
    """Where a node runs and why (sy_node_placement)."""
    name: str
    op: str
    domain: str
    provider: str        # None when folded into a constant at creation
    reason: str          # "taken", "fallback", ... (sy_reason_name)
    reason_code: int
    detail: str          # the declines of higher-priority providers, or None
    folded: bool
    requant: str = None  # "onnx" / "gemmlowp" / "single_rounding" for a requantizing kernel, else None
    requant_source: str = None


@dataclass(frozen=True)
class Copy:
    """A boundary copy between memory domains (sy_copy_info)."""
    value: str
    src_domain: str
    dst_domain: str
    consumer: str
    consumer_provider: str
    via: str             # provider whose copy() runs it; None: a host bounce
    bytes: int


@dataclass(frozen=True)
class Partition:
    provider: str
    nodes: int
    compiled: bool
    from_cache: bool


@dataclass(frozen=True)
class MemoryReport:
    """The memory plan of one domain (sy_memory_report), in bytes."""
    domain: str
    arena_bytes: int
    lower_bound: int
    naive_bytes: int
    activations: int
    scratch: int
    persistent: int
    copies: int
    packed_weights: int
    weights: int


@dataclass(frozen=True)
class ProfileEvent:
    name: str
    category: str
    start_ns: int
    duration_ns: int
    cycles: int          # -1 when not modelled


class _OutputRef:
    """Owner of the output views of one run(copy=False): holds the session's
    handle and lets the next run see (by weak reference) whether a view lives."""

    def __init__(self, session, names):
        self.session = session
        self.names = names
        session._h.hold()

    def __del__(self):
        try:
            self.session._h.unhold()
        except Exception:  # interpreter shutdown
            pass


class Session:
    """Session(env, model, *, threads=0, requant=None, strict=None, profiling=False, compiled_cache=None)

    `threads` 0 takes the INI's value; `requant` "onnx" or "gemmlowp" sets the
    requantization form of the integer kernels; `strict` True/False overrides
    the INI's strict mode; `profiling` collects the events trace() writes.
    Session(model) uses the model's env.

    Thread safety (switchyard.h): one thread at a time per session; this
    class serializes concurrent calls on one session with a lock. Different
    sessions run concurrently on any threads (the library call releases the GIL).
    """

    def __init__(self, env, model=None, *, threads=0, requant=None, strict=None, profiling=False,
                 compiled_cache=None):
        if model is None and isinstance(env, Model):
            env, model = env.env, env
        if not isinstance(env, Env) or not isinstance(model, Model):
            raise Error(StatusCode.INVALID_ARGUMENT, "Session(env, model): expected a switchyard.Env and a "
                        "switchyard.Model, got %s and %s" % (type(env).__name__, type(model).__name__))
        if model.env is not env:
            raise Error(StatusCode.INVALID_ARGUMENT, "Session: the model %s was loaded in another Env; load it "
                        "with Model(..., env=env)" % (model.path or "<bytes>"))
        if requant is not None and requant not in ("onnx", "gemmlowp"):
            raise Error(StatusCode.INVALID_ARGUMENT, "Session: requant=%r: expected 'onnx' or 'gemmlowp'" % (requant,))
        if not isinstance(threads, int) or threads < 0:
            raise Error(StatusCode.INVALID_ARGUMENT, "Session: threads=%r: expected an integer >= 0" % (threads,))
        self.env, self.model = env, model
        lib = _lib.lib()
        o = _lib.new(_lib.SySessionOptions)
        o.threads = threads
        o.strict = -1 if strict is None else int(bool(strict))
        o.profiling = bool(profiling)
        o.compiled_cache = _lib.cstr(None if compiled_cache is None else os.fspath(compiled_cache))
        o.requant = _lib.cstr(requant)
        out = ctypes.c_void_p()
        check(lib.sy_session_create(env._ptr(), model._ptr(), ctypes.byref(o), ctypes.byref(out)))
        self._h = Handle(out.value, "session", lib.sy_session_release, parents=(model._h, env._h))
        self._lock = threading.Lock()
        self.inputs = model.inputs
        self.outputs = model.outputs
        self._index = {vi.name: i for i, vi in enumerate(self.inputs)}
        self._borrowed = [None] * len(self.inputs)  # arrays the library reads in place
        self._views = None  # weak reference to the _OutputRef of the last run(copy=False)

    # -- lifetime ----------------------------------------------------------
    def close(self):
        """Give up this session; the C session is released once no output view of it lives."""
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
            raise Error(StatusCode.INVALID_ARGUMENT, "this Session is closed")
        return self._h.ptr

    # -- running -------------------------------------------------------------
    def _prepare(self, i, value):
        """The array for input i, checked against the model: dtype, rank, fixed dims."""
        vi = self.inputs[i]
        if vi.dtype is None:
            raise Error(StatusCode.UNSUPPORTED, "input '%s': dtype %s cannot be given from numpy"
                        % (vi.name, vi.dtype_name))
        if isinstance(value, np.ndarray):
            a = value
        elif np.isscalar(value) or isinstance(value, (list, tuple)):
            a = np.asarray(value, dtype=vi.dtype)  # no dtype of its own: take the model's
        else:
            a = np.asarray(value)
        want = tensor.shape_str(vi.shape)
        if a.dtype != vi.dtype:
            raise Error(StatusCode.TYPE, "input '%s': dtype %s shape %s given, the model expects %s %s"
                        % (vi.name, a.dtype, tensor.shape_str(a.shape), vi.dtype_name, want))
        fixed = all(not isinstance(d, int) or d == s for d, s in zip(vi.shape, a.shape))
        if a.ndim != len(vi.shape) or not fixed:
            raise Error(StatusCode.SHAPE, "input '%s': shape %s given, the model expects %s"
                        % (vi.name, tensor.shape_str(a.shape), want))
        if not (a.flags.c_contiguous and a.flags.aligned):
            a = np.ascontiguousarray(a)
        return a

    def _set_inputs(self, feeds):
        lib, p = _lib.lib(), self._ptr()
        if isinstance(feeds, dict):
            items = []
            for name, value in feeds.items():
                if name not in self._index:
                    raise Error(StatusCode.NOT_FOUND, "run: the model has no input named '%s' (inputs: %s)"
                                % (name, ", ".join("'%s'" % v.name for v in self.inputs)))
                items.append((self._index[name], value))
        elif isinstance(feeds, (list, tuple)):
            if len(feeds) > len(self.inputs):
                raise Error(StatusCode.INVALID_ARGUMENT, "run: %d inputs given, the model has %d"
                            % (len(feeds), len(self.inputs)))
            items = list(enumerate(feeds))
        elif isinstance(feeds, np.ndarray) and len(self.inputs) == 1:
            items = [(0, feeds)]
        else:
            raise Error(StatusCode.INVALID_ARGUMENT, "run: feeds must be a dict {name: array}, a list in input "
                        "order, or one array for a one-input model; got %s" % type(feeds).__name__)
        arrays = [(i, self._prepare(i, v)) for i, v in items]
        for i, a in arrays:
            t = tensor.describe(a, "input '%s'" % self.inputs[i].name)
            check(lib.sy_session_set_input_by_index(p, i, ctypes.byref(t), BORROW))
            self._borrowed[i] = a  # read in place by this and later runs until set again

    def run(self, feeds=None, *, copy=True):
        """Run once. `feeds`: {input name: array} (or a list in input order);
        inputs not given keep the value set by an earlier run. Returns
        {output name: array}; copy=False returns views (see the module doc)."""
        with self._lock:
            if self._views is not None and self._views() is not None:
                live = self._views().names
                raise Error(StatusCode.INVALID_ARGUMENT,
                            "run: the outputs (%s) of the previous run(copy=False) are still referenced and this "
                            "run would overwrite them; copy them (np.array(v)) or drop them (del) first"
                            % ", ".join("'%s'" % n for n in live))
            self._views = None
            if feeds is not None:
                self._set_inputs(feeds)
            lib, p = _lib.lib(), self._ptr()
            check(lib.sy_session_run(p))
            return self._outputs(copy)

    def _outputs(self, copy):
        lib, p = _lib.lib(), self._ptr()
        names = [vi.name for vi in self.outputs]
        owner = None if copy else _OutputRef(self, names)
        out = {}
        for i in range(lib.sy_session_output_count(p)):
            tp = ctypes.POINTER(_lib.SyTensor)()
            check(lib.sy_session_get_output(p, i, ctypes.byref(tp)))
            t = tp.contents
            name = _lib.text(t.name) or names[i]
            if copy:
                out[name] = np.array(tensor.view(t, None))
            else:
                out[name] = tensor.view(t, owner)
        if owner is not None:
            self._views = weakref.ref(owner)
        return out

    def reset(self):
        """Clear the state of stateful kernels."""
        with self._lock:
            _lib.lib().sy_session_reset(self._ptr())

    # -- explain / memory / profiling ----------------------------------------
    def explain(self):
        """[Placement] per node: provider, reason code and the declines of the others."""
        lib, p = _lib.lib(), self._ptr()
        out = []
        t = _lib.text
        for i in range(lib.sy_session_node_count(p)):
            pl = _lib.new(_lib.SyNodePlacement)
            if not lib.sy_session_node_placement(p, i, ctypes.byref(pl)):
                continue
            src = ctypes.c_char_p()
            form = lib.sy_session_node_requant(p, i, ctypes.byref(src))
            out.append(Placement(t(pl.name), t(pl.op), t(pl.domain) or "", t(pl.provider),
                                 t(lib.sy_reason_name(pl.reason)), pl.reason, t(pl.reason_text), bool(pl.folded),
                                 t(form), t(src.value) if form else None))
        return out

    def copies(self):
        """[Copy] boundary copies between memory domains."""
        lib, p = _lib.lib(), self._ptr()
        out = []
        t = _lib.text
        for i in range(lib.sy_session_copy_count(p)):
            c = _lib.new(_lib.SyCopyInfo)
            if lib.sy_session_copy_info(p, i, ctypes.byref(c)):
                out.append(Copy(t(c.value), t(c.src_domain), t(c.dst_domain), t(c.consumer),
                                t(c.consumer_provider), t(c.via), c.bytes))
        return out

    def partitions(self):
        lib, p = _lib.lib(), self._ptr()
        out = []
        for i in range(lib.sy_session_partition_count(p)):
            prov, n = ctypes.c_char_p(), ctypes.c_uint32()
            comp, cached = ctypes.c_bool(), ctypes.c_bool()
            if lib.sy_session_partition_info(p, i, ctypes.byref(prov), ctypes.byref(n), ctypes.byref(comp),
                                             ctypes.byref(cached)):
                out.append(Partition(_lib.text(prov.value), n.value, comp.value, cached.value))
        return out

    def memory_report(self):
        """[MemoryReport] per memory domain: arena against its lower bound, and the breakdown."""
        lib, p = _lib.lib(), self._ptr()
        out = []
        for i in range(lib.sy_session_memory_domain_count(p)):
            r = _lib.new(_lib.SyMemoryReport)
            if lib.sy_session_memory_report(p, i, ctypes.byref(r)):
                out.append(MemoryReport(_lib.text(r.domain), r.arena_bytes, r.lower_bound, r.naive_bytes,
                                        r.activations, r.scratch, r.persistent, r.copies, r.packed_weights,
                                        r.weights))
        return out

    def profile(self):
        """[ProfileEvent] collected so far (Session(..., profiling=True))."""
        with self._lock:
            lib, p = _lib.lib(), self._ptr()
            out = []
            for i in range(lib.sy_session_profile_event_count(p)):
                e = _lib.new(_lib.SyProfileEvent)
                if lib.sy_session_profile_event(p, i, ctypes.byref(e)):
                    out.append(ProfileEvent(_lib.text(e.name), _lib.text(e.category), e.start_ns, e.duration_ns,
                                            e.cycles))
            return out

    def trace(self, path):
        """Write the profiling events as a Chrome trace (Perfetto, chrome://tracing);
        needs Session(..., profiling=True)."""
        with self._lock:
            check(_lib.lib().sy_session_write_trace(self._ptr(), _lib.cstr(os.fspath(path))))

    def save_compiled(self, path):
        """Write the compiled partitions (emulated targets) to a compile cache."""
        with self._lock:
            check(_lib.lib().sy_session_save_compiled(self._ptr(), _lib.cstr(os.fspath(path))))
