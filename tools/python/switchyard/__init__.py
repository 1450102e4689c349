"""Switchyard for Python: numpy in and out of libswitchyard's public C API (ctypes).

    import numpy as np, switchyard as sy
    env = sy.Env()                                   # the embedded default configuration
    model = sy.Model("mnist-8/model.onnx", env)
    with sy.Session(env, model, threads=2) as s:
        probs = s.run({"Input3": image})["Plus214_Output_0"]

See docs/python.md for the whole API.
"""
from ._lib import load_library, library_path
from .env import Env, PluginInfo, ProviderInfo, default_env
from .errors import Error, StatusCode
from .llm import Generation, Llm, Result, Token
from .model import Model, ValueInfo
from .session import Copy, MemoryReport, Partition, Placement, ProfileEvent, Session
from .tensor import read_tensor, write_tensor
from .tools import QuantizeReport, llm_export, quantize
from .train import TrainBuildReport, TrainSession, read_dataset, read_idx, train_build

__version__ = "0.1.0"


def version():
    """The loaded library's version string (sy_version)."""
    from . import _lib
    return _lib.text(_lib.lib().sy_version())


__all__ = ["Env", "Model", "Session", "Llm", "Error", "StatusCode", "Placement", "Copy", "Partition",
           "MemoryReport", "ProfileEvent", "PluginInfo", "ProviderInfo", "ValueInfo", "Generation", "Result",
           "Token", "load_library", "library_path", "default_env", "read_tensor", "write_tensor", "version",
           "quantize", "llm_export", "QuantizeReport", "train_build", "TrainSession", "TrainBuildReport",
           "read_idx", "read_dataset"]
