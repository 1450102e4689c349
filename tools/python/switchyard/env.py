"""switchyard.Env: a loaded configuration (plugins, providers, options)."""
import ctypes
import os
from dataclasses import dataclass

from . import _lib
from ._handles import Handle
from .errors import Error, StatusCode, check


@dataclass(frozen=True)
class PluginInfo:
    path: str
    name: str          # None when refused before its descriptor was read
    version: str
    description: str
    abi: tuple         # (major, minor)
    loaded: bool
    refusal: str       # why it was refused; None when loaded
    n_schemas: int
    n_kernels: int
    n_providers: int
    n_schemes: int
    n_extensions: int
    registered: tuple  # names of what it registered


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    description: str
    emulator: bool


class Env:
    """Env(config=None, *, ini_string=None, base_dir=None)

    `config`: path of an INI file; neither it nor `ini_string`: the embedded
    default configuration, which loads every plugin next to the library.
    `ini_string`: the INI text itself; its relative paths resolve against
    `base_dir` (default: the current directory)."""

    def __init__(self, config=None, *, ini_string=None, base_dir=None):
        if config is not None and ini_string is not None:
            raise Error(StatusCode.INVALID_ARGUMENT, "Env: give config (a path) or ini_string, not both")
        lib = _lib.lib()
        out = ctypes.c_void_p()
        if ini_string is not None:
            if not isinstance(ini_string, str):
                raise Error(StatusCode.INVALID_ARGUMENT, "Env: ini_string must be a str")
            check(lib.sy_env_create_from_string(ini_string.encode("utf-8"), _lib.cstr(base_dir), ctypes.byref(out)))
        else:
            check(lib.sy_env_create(_lib.cstr(None if config is None else os.fspath(config)), ctypes.byref(out)))
        self._h = Handle(out.value, "env", lib.sy_env_release)

    # -- lifetime ----------------------------------------------------------
    def close(self):
        """Give up this env; the C object is released after every model,
        session and LLM runner made from it."""
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
        p = self._h.ptr if not self._h._dropped else None
        if p is None:
            raise Error(StatusCode.INVALID_ARGUMENT, "this Env is closed")
        return p

    # -- queries -------------------------------------------------------------
    def plugins(self):
        """Each plugin library the configuration named: loaded or refused, and why."""
        lib, p = _lib.lib(), self._ptr()
        out = []
        for i in range(lib.sy_env_plugin_count(p)):
            info = _lib.new(_lib.SyPluginInfo)
            if not lib.sy_env_plugin_info(p, i, ctypes.byref(info)):
                continue
            t = _lib.text
            reg = t(info.registered)
            out.append(PluginInfo(t(info.path), t(info.name), t(info.version), t(info.description),
                                  (info.abi_major, info.abi_minor), bool(info.loaded), t(info.refusal),
                                  info.n_schemas, info.n_kernels, info.n_providers, info.n_schemes,
                                  info.n_extensions, tuple(x.strip() for x in (reg or "").split(",") if x.strip())))
        return out

    def providers(self):
        """Providers in priority order."""
        lib, p = _lib.lib(), self._ptr()
        return [ProviderInfo(_lib.text(lib.sy_env_provider_name(p, i)),
                             _lib.text(lib.sy_env_provider_description(p, i)),
                             bool(lib.sy_env_provider_is_emulator(p, i)))
                for i in range(lib.sy_env_provider_count(p))]

    def has_op(self, op, opset, domain=""):
        """Does a loaded plugin define (domain, op) at `opset`?"""
        return bool(_lib.lib().sy_env_has_op(self._ptr(), domain.encode(), op.encode(), opset))


_default = None


def default_env():
    """The process-wide Env of the embedded default configuration, made on first use."""
    global _default
    if _default is None:
        _default = Env()
    return _default
