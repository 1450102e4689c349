"""What the Python tests share: paths from CTest's environment, skipping
(exit 77) when ../shared is absent, and a unittest runner that exits 1 on a
failure and 77 when every test was skipped (never a skip counted as a pass)."""
import os
import sys
import tempfile
import unittest

SHARED = os.environ.get("SY_SHARED_DIR", os.path.join(os.path.dirname(__file__), "../../../shared"))
SOURCE = os.environ.get("SY_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "../..")))
CLI = os.environ.get("SY_CLI", os.path.join(SOURCE, "build/bin/switchyard"))
BUILD = os.environ.get("SY_BUILD_DIR", os.path.join(SOURCE, "build"))
MNIST = os.path.join(SHARED, "models/onnx/mnist-8")

try:
    import numpy as np  # noqa: F401
except ImportError:
    sys.stderr.write("%s has no numpy: install Debian's python3-numpy (tools/dev/install-deps.sh)\n" % sys.executable)
    sys.exit(1)


def c_env():
    """The environment for the project's own C programs (the CLI): without the
    LD_PRELOAD a sanitizer build gives python3 (tests/python/CMakeLists.txt);
    those programs carry their sanitizer runtime linked in."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def run_c(argv, **kw):
    """subprocess.run for a C program of the build (see c_env)."""
    import subprocess
    kw.setdefault("env", c_env())
    return subprocess.run(argv, **kw)


def shared(*parts):
    return os.path.join(SHARED, *parts)


def need_shared(*parts):
    """Exit 77 (CTest: skipped) with a message when a file of ../shared is absent."""
    p = shared(*parts)
    if not os.path.exists(p):
        print("SKIP: %s is absent (the shared data folder; set SY_SHARED_DIR)" % p)
        sys.exit(77)
    return p


def workdir(name):
    base = os.environ.get("SY_TEST_WORK") or tempfile.gettempdir()
    d = os.path.join(base, "python_" + name)
    os.makedirs(d, exist_ok=True)
    return d


def main():
    prog = unittest.main(exit=False, verbosity=2)
    r = prog.result
    if not r.wasSuccessful():
        sys.exit(1)
    if r.testsRun and len(r.skipped) == r.testsRun:
        sys.exit(77)
    if not r.testsRun:
        print("no test ran")
        sys.exit(1)
    # the closing line CTest logs keep: N passed, N failed, N skipped
    print("%d passed, 0 failed, %d skipped" % (r.testsRun - len(r.skipped), len(r.skipped)))
    sys.exit(0)
