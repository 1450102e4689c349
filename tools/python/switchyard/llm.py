"""switchyard.Llm: text generation through the LLM plugin's "llm" extension (sy_llm.h).

Like `switchyard llm`, this only fetches the extension table from an Env and
calls it; the runner (KV cache, masks, RoPE, sampling, tokenizer) lives in
plugins/llm and runs on whatever providers the Env's INI selects.
"""
import contextlib
import ctypes
import os
import queue
import threading
import weakref
from dataclasses import dataclass

from . import _lib
from ._handles import Handle
from .env import Env, default_env
from .errors import Error, StatusCode, check

EXTENSION_NAME = b"llm"
EXTENSION_VERSION = 1

_P = ctypes.POINTER
_st = ctypes.c_void_p  # sy_status*
STREAM_FN = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, _P(ctypes.c_char), ctypes.c_size_t, ctypes.c_int32)

STOP_REASONS = {0: "none", 1: "eos", 2: "length", 3: "user", 4: "stop string", 5: "context exhausted"}


class _Params(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("max_tokens", ctypes.c_int32), ("temperature", ctypes.c_float),
                ("top_k", ctypes.c_int32), ("top_p", ctypes.c_float), ("min_p", ctypes.c_float),
                ("repetition_penalty", ctypes.c_float), ("penalty_last_n", ctypes.c_int32),
                ("seed", ctypes.c_uint64), ("stop", _P(ctypes.c_char_p)), ("n_stop", ctypes.c_uint32),
                ("stream", STREAM_FN), ("user", ctypes.c_void_p)]


class _Result(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("stop", ctypes.c_int), ("ids", _P(ctypes.c_int32)),
                ("n_ids", ctypes.c_size_t), ("text", _P(ctypes.c_char)), ("text_len", ctypes.c_size_t),
                ("n_prompt", ctypes.c_size_t)]


class _Stats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("ttft_ns", ctypes.c_uint64), ("prefill_ns", ctypes.c_uint64),
                ("decode_ns", ctypes.c_uint64), ("prefill_tokens", ctypes.c_uint64),
                ("decode_tokens", ctypes.c_uint64), ("prefill_tok_s", ctypes.c_double),
                ("decode_tok_s", ctypes.c_double), ("kernel_ns", ctypes.c_uint64), ("outside_ns", ctypes.c_uint64),
                ("kv_bytes_in_use", ctypes.c_size_t), ("kv_bytes_reserved", ctypes.c_size_t),
                ("n_past", ctypes.c_int32), ("active_cl", ctypes.c_int32), ("restrides", ctypes.c_uint64)]


class _Info(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32)] + [
        (n, ctypes.c_int32) for n in ("n_layers", "n_heads", "n_kv_heads", "head_dim", "hidden", "vocab",
                                      "n_shards", "n_ar", "n_cl")] + [
        ("ar", ctypes.c_int32 * 8), ("cl", ctypes.c_int32 * 8), ("bos", ctypes.c_int32),
        ("eos", ctypes.c_int32 * 4), ("n_eos", ctypes.c_int32), ("n_graphs", ctypes.c_int32)]


_r = ctypes.c_void_p  # sy_llm_runner*


class _Api(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("runner_create", ctypes.CFUNCTYPE(_st, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, _P(_r))),
        ("runner_release", ctypes.CFUNCTYPE(None, _r)),
        ("generate", ctypes.CFUNCTYPE(_st, _r, ctypes.c_char_p, _P(_Params), _P(_Result))),
        ("generate_ids", ctypes.CFUNCTYPE(_st, _r, _P(ctypes.c_int32), ctypes.c_size_t, _P(_Params), _P(_Result))),
        ("prefill", ctypes.CFUNCTYPE(_st, _r, _P(ctypes.c_int32), ctypes.c_size_t)),
        ("logits", ctypes.CFUNCTYPE(_st, _r, _P(_P(ctypes.c_float)), _P(ctypes.c_size_t))),
        ("encode", ctypes.CFUNCTYPE(_st, _r, ctypes.c_char_p, ctypes.c_bool, _P(ctypes.c_int32), ctypes.c_size_t,
                                    _P(ctypes.c_size_t))),
        ("decode", ctypes.CFUNCTYPE(_st, _r, _P(ctypes.c_int32), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                    _P(ctypes.c_size_t))),
        ("reset", ctypes.CFUNCTYPE(None, _r)),
        ("save_state", ctypes.CFUNCTYPE(_st, _r, ctypes.c_char_p)),
        ("load_state", ctypes.CFUNCTYPE(_st, _r, ctypes.c_char_p)),
        ("save_state_buffer", ctypes.CFUNCTYPE(_st, _r, _P(ctypes.c_void_p), _P(ctypes.c_size_t))),
        ("load_state_buffer", ctypes.CFUNCTYPE(_st, _r, ctypes.c_void_p, ctypes.c_size_t)),
        ("free_buffer", ctypes.CFUNCTYPE(None, ctypes.c_void_p)),
        ("stats", ctypes.CFUNCTYPE(ctypes.c_bool, _r, _P(_Stats))),
        ("info", ctypes.CFUNCTYPE(ctypes.c_bool, _r, _P(_Info))),
    ]


class Token(str):
    """A piece of generated text (complete UTF-8 only) with the id that completed it."""

    def __new__(cls, text, id):
        t = super().__new__(cls, text)
        t.id = id
        return t


@dataclass(frozen=True)
class Result:
    text: str
    ids: tuple
    stop_reason: str
    n_prompt: int


def _struct_dict(s):
    return {name: (list(getattr(s, name)) if isinstance(getattr(s, name), ctypes.Array) else getattr(s, name))
            for name, _ in s._fields_ if name != "struct_size"}


class Llm:
    """Llm(bundle, env=None, *, options=None)

    `bundle`: a bundle directory (`switchyard llm-export`, docs/llm.md).
    `env`: its providers and plugins (default: switchyard.default_env()).
    `options`: {"threads": 2, ...} or "key=value;..." (threads, profiling,
    kv_zero_check); an unknown key is an Error naming it.

    One runner is one conversation: calls on it are serialized; use one Llm
    per thread for concurrent generation."""

    def __init__(self, bundle, env=None, *, options=None):
        self.env = env if env is not None else default_env()
        if not isinstance(self.env, Env):
            raise Error(StatusCode.INVALID_ARGUMENT, "Llm: env must be a switchyard.Env")
        api = _lib.lib().sy_get_extension(self.env._ptr(), EXTENSION_NAME, EXTENSION_VERSION)
        if not api:
            raise Error(StatusCode.NOT_FOUND, "no plugin provides the 'llm' extension v%d (is libsy_llm in the "
                        "plugin directory or listed in the INI?)" % EXTENSION_VERSION)
        size = ctypes.cast(api, _P(ctypes.c_uint32)).contents.value
        if size < ctypes.sizeof(_Api):
            raise Error(StatusCode.ABI_MISMATCH, "the 'llm' extension table has %d bytes, this package needs %d"
                        % (size, ctypes.sizeof(_Api)))
        self._api = ctypes.cast(api, _P(_Api)).contents
        if isinstance(options, dict):
            options = ";".join("%s=%s" % (k, int(v) if isinstance(v, bool) else v) for k, v in options.items())
        self.bundle = os.fspath(bundle)
        r = _r()
        check(self._api.runner_create(self.env._ptr(), _lib.cstr(self.bundle), _lib.cstr(options), ctypes.byref(r)))
        release = self._api.runner_release
        self._h = Handle(r.value, "llm", lambda p: release(p), parents=(self.env._h,))
        self._lock = threading.Lock()
        self._open = None  # weakref to the Generation whose worker holds _lock

    @contextlib.contextmanager
    def _locked(self):
        """Hold the runner for one call. A generation this thread was reading
        and left open is closed first: its worker waits for this thread to ask
        for the next piece, which it never will while it waits here."""
        g = self._open() if self._open is not None else None
        if g is not None and g._reader == threading.get_ident():
            g.close()
        with self._lock:
            yield

    def close(self):
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
            raise Error(StatusCode.INVALID_ARGUMENT, "this Llm is closed")
        return self._h.ptr

    # -- generation ----------------------------------------------------------
    @staticmethod
    def _params(max_tokens, temperature, top_k, top_p, min_p, repetition_penalty, penalty_last_n, seed, stop):
        p = _Params()
        p.struct_size = ctypes.sizeof(_Params)
        p.max_tokens = int(max_tokens or 0)
        p.temperature = float(temperature)
        p.top_k = int(top_k)
        p.top_p = float(top_p)
        p.min_p = float(min_p)
        p.repetition_penalty = float(repetition_penalty)
        p.penalty_last_n = int(penalty_last_n)
        if seed < 0:
            raise Error(StatusCode.INVALID_ARGUMENT, "seed must be >= 0, got %d" % seed)
        p.seed = int(seed)
        keep = None
        if stop:
            if isinstance(stop, str):
                stop = [stop]
            keep = (ctypes.c_char_p * len(stop))(*[s.encode("utf-8") for s in stop])
            p.stop = ctypes.cast(keep, _P(ctypes.c_char_p))
            p.n_stop = len(stop)
        return p, keep

    def _call(self, prompt, params, out):
        """One generate call; the caller holds self._lock."""
        if isinstance(prompt, str):
            return self._api.generate(self._ptr(), prompt.encode("utf-8"), ctypes.byref(params), ctypes.byref(out))
        ids = list(prompt)
        arr = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        return self._api.generate_ids(self._ptr(), arr, len(ids), ctypes.byref(params), ctypes.byref(out))

    @staticmethod
    def _result(out):
        text = ctypes.string_at(out.text, out.text_len).decode("utf-8", "replace") if out.text else ""
        ids = tuple(out.ids[i] for i in range(out.n_ids)) if out.ids else ()
        return Result(text, ids, STOP_REASONS.get(out.stop, str(out.stop)), out.n_prompt)

    def complete(self, prompt="", max_tokens=0, temperature=0.0, *, top_k=0, top_p=1.0, min_p=0.0,
                 repetition_penalty=1.0, penalty_last_n=64, seed=42, stop=None):
        """Generate and return a Result (text, ids, stop_reason, n_prompt) at once.
        `prompt`: text (BOS is prepended when the cache is empty) or a list of
        token ids (nothing added); "" continues from the current state.
        Defaults as `switchyard llm`: greedy, until EOS or the context is full."""
        params, keep = self._params(max_tokens, temperature, top_k, top_p, min_p, repetition_penalty,
                                    penalty_last_n, seed, stop)
        out = _Result()
        out.struct_size = ctypes.sizeof(_Result)
        with self._locked():
            check(self._call(prompt, params, out))
            del keep
            return self._result(out)

    def generate(self, prompt="", max_tokens=0, temperature=0.0, *, top_k=0, top_p=1.0, min_p=0.0,
                 repetition_penalty=1.0, penalty_last_n=64, seed=42, stop=None):
        """The same as complete(), as an iterator of Token pieces while they are
        generated. After the last one, the iterator's .result holds the Result;
        closing it early (close(), or dropping it) stops generation (stop "user")
        where the reader stopped: the worker runs at most one piece ahead. Another
        call on this Llm from the thread reading it closes it first."""
        params, keep = self._params(max_tokens, temperature, top_k, top_p, min_p, repetition_penalty,
                                    penalty_last_n, seed, stop)
        return Generation(self, prompt, params, keep)

    # -- tokenizer and state -------------------------------------------------
    def encode(self, text, add_bos=False):
        """Text -> token ids with the bundle's tokenizer."""
        b = text.encode("utf-8")
        n = ctypes.c_size_t()
        cap = len(b) + 8
        while True:
            ids = (ctypes.c_int32 * cap)()
            with self._locked():
                st = self._api.encode(self._ptr(), b, add_bos, ids, cap, ctypes.byref(n))
            if st and n.value > cap:
                _lib.lib().sy_status_free(st)
                cap = n.value
                continue
            check(st)
            return [ids[i] for i in range(n.value)]

    def decode(self, ids):
        ids = list(ids)
        arr = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        n = ctypes.c_size_t()
        with self._locked():
            st = self._api.decode(self._ptr(), arr, len(ids), None, 0, ctypes.byref(n))  # the size it needs
            if st:
                _lib.lib().sy_status_free(st)
            buf = ctypes.create_string_buffer(n.value + 1)
            check(self._api.decode(self._ptr(), arr, len(ids), buf, n.value + 1, ctypes.byref(n)))
        return buf.raw[:n.value].decode("utf-8", "replace")

    def reset(self):
        """Forget the conversation (KV cache, sampler history)."""
        with self._locked():
            self._api.reset(self._ptr())

    def save_state(self, path):
        with self._locked():
            check(self._api.save_state(self._ptr(), _lib.cstr(os.fspath(path))))

    def load_state(self, path):
        with self._locked():
            check(self._api.load_state(self._ptr(), _lib.cstr(os.fspath(path))))

    def stats(self):
        """Timings and KV use of the last generate (sy_llm_stats) as a dict."""
        s = _Stats()
        s.struct_size = ctypes.sizeof(_Stats)
        with self._locked():
            self._api.stats(self._ptr(), ctypes.byref(s))
        return _struct_dict(s)

    def info(self):
        """What the bundle contains (sy_llm_info) as a dict."""
        s = _Info()
        s.struct_size = ctypes.sizeof(_Info)
        with self._locked():
            self._api.info(self._ptr(), ctypes.byref(s))
        d = _struct_dict(s)
        d["ar"], d["cl"], d["eos"] = d["ar"][:s.n_ar], d["cl"][:s.n_cl], d["eos"][:s.n_eos]
        return d


_DONE = object()


class Generation:
    """Iterator of Token pieces of one generate call. The C call runs on a
    worker thread that streams pieces through a queue; .result is set once
    the iterator is exhausted. The worker waits after each piece until the
    consumer asks for the next one, so it is never more than one piece ahead
    and close() stops it where the consumer stopped reading."""

    def __init__(self, llm, prompt, params, keep):
        self.result = None
        self._q = queue.SimpleQueue()
        self._stop = threading.Event()
        self._more = threading.Semaphore(0)  # one release per piece the consumer asks for
        self._thread = None
        self._reader = None  # the thread that last asked for a piece
        self._state = (llm, prompt, params, keep)

    def _start(self):
        llm, prompt, params, keep = self._state
        q, stop, more = self._q, self._stop, self._more

        def on_piece(user, piece, n, token):
            q.put(Token(ctypes.string_at(piece, n).decode("utf-8", "replace"), token))
            more.acquire()  # until the consumer wants another piece, or closes
            return not stop.is_set()

        def work():
            strings = keep  # the stop strings params points at, alive for the call
            cb = STREAM_FN(on_piece)
            params.stream = cb
            out = _Result()
            out.struct_size = ctypes.sizeof(_Result)
            try:
                with llm._lock:
                    check(llm._call(prompt, params, out))
                    q.put((_DONE, Llm._result(out), None))
            except Exception as e:  # handed to the consumer's thread
                q.put((_DONE, None, e))
            del strings

        self._thread = threading.Thread(target=work, name="switchyard-llm", daemon=True)
        self._thread.start()

    def __iter__(self):
        return self

    def __next__(self):
        if self.result is not None or self._state is None:
            raise StopIteration
        self._reader = threading.get_ident()
        if self._thread is None:
            llm = self._state[0]
            g = llm._open() if llm._open is not None else None
            if g is not None and g._reader == self._reader:
                g.close()  # as Llm._locked: an open generation of this thread would hold the runner forever
            llm._open = weakref.ref(self)
            self._start()
        else:
            self._more.release()
        item = self._q.get()
        if isinstance(item, Token):
            return item
        _, result, err = item
        self._thread.join()
        self._state = None
        if err is not None:
            raise err
        self.result = result
        raise StopIteration

    def close(self):
        """Stop generating (the runner returns with stop reason "user") and wait for it."""
        self._stop.set()
        if self._thread is not None:
            self._more.release()
            self._thread.join()
            while True:  # the result of a stopped call
                try:
                    item = self._q.get_nowait()
                except queue.Empty:
                    break
                if not isinstance(item, Token) and item[1] is not None:
                    self.result = item[1]
        self._state = None

    def __del__(self):
        self._stop.set()
        self._more.release()
