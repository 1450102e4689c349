"""Finding and binding libswitchyard with ctypes (the public API of switchyard.h only).

The library is located, in this order, by:
  1. an explicit path given to switchyard.load_library(path) before first use;
  2. the SWITCHYARD_LIBRARY environment variable (a file path);
  3. a build tree or install prefix above this package: each parent folder P of
     the package is tried as P/build/lib (source checkout: tools/python/ in the
     repository) and P/lib (pip install into a prefix next to `cmake --install`);
  4. sys.prefix/lib and /usr/local/lib (cmake's default prefix);
  5. the dynamic loader's own search (ld.so.cache, LD_LIBRARY_PATH).
The embedded default configuration then finds the plugins next to the library
(lib/switchyard/plugins/), so no other path is needed.
"""
import ctypes
import ctypes.util
import os
import sys
import threading
from pathlib import Path

LIBRARY_ENV = "SWITCHYARD_LIBRARY"
SONAME = "libswitchyard.so"
MAX_RANK = 8

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
c_int = ctypes.c_int
c_bool = ctypes.c_bool
c_uint16 = ctypes.c_uint16
c_uint32 = ctypes.c_uint32
c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_uint64 = ctypes.c_uint64


# ---- structs of switchyard.h / sy_types.h / sy_app_types.h (ABI v1 layouts) ----
class SyTensor(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("dtype", c_int), ("rank", c_int32),
                ("dims", c_int64 * MAX_RANK), ("data", c_void_p), ("nbytes", c_size_t),
                ("quant", c_void_p), ("domain", c_uint32), ("name", c_char_p)]


class SyValueInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("dtype", c_int), ("rank", c_int32),
                ("dims", c_int64 * MAX_RANK), ("dim_names", c_char_p * MAX_RANK)]


class SySessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("threads", c_int32), ("strict", c_int32),
                ("profiling", c_bool), ("compiled_cache", c_char_p), ("requant", c_char_p)]


class SyPluginInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("path", c_char_p), ("name", c_char_p),
                ("version", c_char_p), ("description", c_char_p), ("abi_major", c_uint16),
                ("abi_minor", c_uint16), ("loaded", c_bool), ("refusal", c_char_p),
                ("n_schemas", c_uint32), ("n_kernels", c_uint32), ("n_providers", c_uint32),
                ("n_schemes", c_uint32), ("n_extensions", c_uint32), ("registered", c_char_p)]


class SyNodePlacement(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("op", c_char_p), ("domain", c_char_p),
                ("provider", c_char_p), ("reason", c_int), ("reason_text", c_char_p), ("folded", c_bool)]


class SyCopyInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("value", c_char_p), ("src_domain", c_char_p),
                ("dst_domain", c_char_p), ("consumer", c_char_p), ("consumer_provider", c_char_p),
                ("via", c_char_p), ("bytes", c_size_t)]


class SyMemoryReport(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("domain", c_char_p), ("arena_bytes", c_size_t),
                ("lower_bound", c_size_t), ("naive_bytes", c_size_t), ("activations", c_size_t),
                ("scratch", c_size_t), ("persistent", c_size_t), ("copies", c_size_t),
                ("packed_weights", c_size_t), ("weights", c_size_t)]


class SyProfileEvent(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("category", c_char_p),
                ("start_ns", c_uint64), ("duration_ns", c_uint64), ("cycles", c_int64)]


def _new(struct):
    """A zeroed struct with struct_size set, as the C API expects."""
    s = struct()
    s.struct_size = ctypes.sizeof(struct)
    return s


new = _new

# (name, restype, argtypes) of every function of switchyard.h the package calls
_PROTOTYPES = [
    ("sy_status_get_code", c_int, [c_void_p]),
    ("sy_status_get_message", c_char_p, [c_void_p]),
    ("sy_status_free", None, [c_void_p]),
    ("sy_status_code_name", c_char_p, [c_int]),
    ("sy_dtype_name", c_char_p, [c_int]),
    ("sy_dtype_size", c_size_t, [c_int]),
    ("sy_version", c_char_p, []),
    ("sy_env_create", c_void_p, [c_char_p, ctypes.POINTER(c_void_p)]),
    ("sy_env_create_from_string", c_void_p, [c_char_p, c_char_p, ctypes.POINTER(c_void_p)]),
    ("sy_env_release", None, [c_void_p]),
    ("sy_env_plugin_count", c_size_t, [c_void_p]),
    ("sy_env_plugin_info", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyPluginInfo)]),
    ("sy_env_provider_count", c_size_t, [c_void_p]),
    ("sy_env_provider_name", c_char_p, [c_void_p, c_size_t]),
    ("sy_env_provider_description", c_char_p, [c_void_p, c_size_t]),
    ("sy_env_provider_is_emulator", c_bool, [c_void_p, c_size_t]),
    ("sy_env_has_op", c_bool, [c_void_p, c_char_p, c_char_p, c_int32]),
    ("sy_get_extension", c_void_p, [c_void_p, c_char_p, c_uint32]),
    ("sy_model_load_flags", c_void_p, [c_void_p, c_char_p, c_uint32, ctypes.POINTER(c_void_p)]),
    ("sy_model_load_buffer", c_void_p, [c_void_p, c_void_p, c_size_t, c_char_p, c_char_p,
                                        ctypes.POINTER(c_void_p)]),
    ("sy_model_unsupported_ops", c_void_p, [c_void_p]),
    ("sy_model_release", None, [c_void_p]),
    ("sy_model_input_count", c_size_t, [c_void_p]),
    ("sy_model_output_count", c_size_t, [c_void_p]),
    ("sy_model_input_info", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyValueInfo)]),
    ("sy_model_output_info", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyValueInfo)]),
    ("sy_model_ir_version", c_int64, [c_void_p]),
    ("sy_model_format", c_char_p, [c_void_p]),
    ("sy_model_opset_count", c_size_t, [c_void_p]),
    ("sy_model_opset", c_bool, [c_void_p, c_size_t, ctypes.POINTER(c_char_p), ctypes.POINTER(c_int64)]),
    ("sy_model_node_count", c_size_t, [c_void_p]),
    ("sy_model_node", c_bool, [c_void_p, c_size_t, ctypes.POINTER(c_char_p), ctypes.POINTER(c_char_p),
                               ctypes.POINTER(c_char_p)]),
    ("sy_model_initializer_bytes", c_size_t, [c_void_p]),
    ("sy_session_create", c_void_p, [c_void_p, c_void_p, ctypes.POINTER(SySessionOptions),
                                     ctypes.POINTER(c_void_p)]),
    ("sy_session_release", None, [c_void_p]),
    ("sy_session_set_input_by_index", c_void_p, [c_void_p, c_size_t, ctypes.POINTER(SyTensor), c_int]),
    ("sy_session_run", c_void_p, [c_void_p]),
    ("sy_session_get_output", c_void_p, [c_void_p, c_size_t, ctypes.POINTER(ctypes.POINTER(SyTensor))]),
    ("sy_session_output_count", c_size_t, [c_void_p]),
    ("sy_session_reset", None, [c_void_p]),
    ("sy_session_node_count", c_size_t, [c_void_p]),
    ("sy_session_node_placement", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyNodePlacement)]),
    ("sy_reason_name", c_char_p, [c_int]),
    ("sy_session_node_requant", c_char_p, [c_void_p, c_size_t, ctypes.POINTER(c_char_p)]),
    ("sy_session_copy_count", c_size_t, [c_void_p]),
    ("sy_session_copy_info", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyCopyInfo)]),
    ("sy_session_partition_count", c_size_t, [c_void_p]),
    ("sy_session_partition_info", c_bool, [c_void_p, c_size_t, ctypes.POINTER(c_char_p),
                                           ctypes.POINTER(c_uint32), ctypes.POINTER(c_bool),
                                           ctypes.POINTER(c_bool)]),
    ("sy_session_memory_domain_count", c_size_t, [c_void_p]),
    ("sy_session_memory_report", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyMemoryReport)]),
    ("sy_session_profile_event_count", c_size_t, [c_void_p]),
    ("sy_session_profile_event", c_bool, [c_void_p, c_size_t, ctypes.POINTER(SyProfileEvent)]),
    ("sy_session_profile_clear", None, [c_void_p]),
    ("sy_session_write_trace", c_void_p, [c_void_p, c_char_p]),
    ("sy_session_save_compiled", c_void_p, [c_void_p, c_char_p]),
    ("sy_tensor_read_file", c_void_p, [c_char_p, ctypes.POINTER(ctypes.POINTER(SyTensor))]),
    ("sy_tensor_write_file", c_void_p, [c_char_p, ctypes.POINTER(SyTensor)]),
    ("sy_tensor_free", None, [c_void_p]),
]

_lock = threading.Lock()
_lib = None
_path = None
_libc = None


def candidates():
    """Where the library is looked for, in order (see the module docstring)."""
    out = []
    env = os.environ.get(LIBRARY_ENV)
    if env:
        out.append(Path(env))
    here = Path(__file__).resolve().parent
    multiarch = getattr(sys.implementation, "_multiarch", None)  # Debian: x86_64-linux-gnu
    libdirs = ["lib"] + (["lib/" + multiarch] if multiarch else [])
    for parent in list(here.parents)[:6]:
        out.append(parent / "build" / "lib" / SONAME)
        out.extend(parent / d / SONAME for d in libdirs)
    out.extend(Path(sys.prefix) / d / SONAME for d in libdirs)
    out.append(Path("/usr/local/lib") / SONAME)
    return out


def _bind(lib):
    for name, restype, argtypes in _PROTOTYPES:
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes


def load_library(path=None):
    """Load libswitchyard (once per process) and return the ctypes handle.

    `path` names the file explicitly; without it the search of the module
    docstring runs. Loading a second, different file raises RuntimeError."""
    global _lib, _path, _libc
    with _lock:
        if _lib is not None:
            if path is not None and Path(path).resolve() != _path:
                raise RuntimeError("switchyard: %s is already loaded; cannot switch to %s" % (_path, path))
            return _lib
        tried = []
        if path is not None:
            found = [Path(path)]
        else:
            found = candidates()
        for cand in found:
            tried.append(str(cand))
            if cand.is_file() or path is not None or str(cand) == os.environ.get(LIBRARY_ENV):
                try:
                    lib = ctypes.CDLL(str(cand))
                except OSError as e:
                    raise OSError("switchyard: cannot load %s: %s" % (cand, e)) from None
                _path = cand.resolve()
                break
        else:
            name = ctypes.util.find_library("switchyard")
            try:
                lib = ctypes.CDLL(name or SONAME)
            except OSError:
                raise OSError("switchyard: libswitchyard not found; set %s=/path/to/libswitchyard.so or call "
                              "switchyard.load_library(path). Tried: %s, then the dynamic loader's search"
                              % (LIBRARY_ENV, ", ".join(tried))) from None
            _path = Path(name or SONAME)
        _bind(lib)
        _libc = ctypes.CDLL(None)
        _libc.free.argtypes = [c_void_p]
        _libc.free.restype = None
        _lib = lib
        return lib


def lib():
    return _lib if _lib is not None else load_library()


def library_path():
    """The file of the loaded library (loads it first if needed)."""
    lib()
    return str(_path)


def free(ptr):
    """free() of the C library, for strings the API hands over (sy_model_unsupported_ops)."""
    lib()
    _libc.free(ptr)


def text(b):
    return None if b is None else b.decode("utf-8", "replace")


def cstr(s):
    """str / PathLike -> bytes for a const char* parameter (None stays NULL)."""
    if s is None:
        return None
    return os.fsencode(s)
