"""Packaging: `cmake --install` into a temporary prefix, then
`python3 -m pip install --no-build-isolation --no-index --prefix PREFIX
tools/python` (offline, Debian's pip/setuptools); the installed package finds
PREFIX/lib/libswitchyard.so by itself and runs a model with the prefix's
plugins. Also the other ways to name the library: SWITCHYARD_LIBRARY and
switchyard.load_library(path)."""
import glob
import os
import shutil
import subprocess
import sys

import sytest

TINY = os.path.join(sytest.SOURCE, "graphs/tiny_cnn.onnx")
SET = os.path.join(sytest.SOURCE, "graphs/tiny_cnn/test_data_set_0")
CHECK = ("import sys, numpy as np, switchyard as sy\n"
         "print(sy.library_path())\n"
         "s = sy.Session(sy.Model(%r))\n"
         "y = s.run({'image': np.load(%r)})['probs']\n"
         "want = np.load(%r)\n"
         "assert np.allclose(y, want, rtol=1e-5, atol=1e-7), (y, want)\n"
         "print('plugins', sy.default_env().plugins()[0].path)\n"
         % (TINY, SET + "/input_0.npy", SET + "/output_0.npy"))


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SWITCHYARD_LIBRARY")}
    env.update(extra)
    return env


class Install(sytest.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        w = sytest.workdir("install")
        cls.prefix = os.path.join(w, "prefix")
        shutil.rmtree(w, ignore_errors=True)
        os.makedirs(w)
        r = sytest.run_c(["cmake", "--install", sytest.BUILD, "--prefix", cls.prefix], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        # pip builds in the source folder: build from a copy, so the tree stays clean
        src = os.path.join(w, "src")
        shutil.copytree(os.path.join(sytest.SOURCE, "tools/python"), src,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                            "--no-deps", "--disable-pip-version-check", "--prefix", cls.prefix, src],
                           capture_output=True, text=True, cwd=w)
        assert r.returncode == 0, r.stdout + r.stderr
        site = glob.glob(os.path.join(cls.prefix, "**/switchyard/__init__.py"), recursive=True)
        assert len(site) == 1, site
        cls.site = os.path.dirname(os.path.dirname(site[0]))

    def run_py(self, code, env, cwd="/"):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()

    def test_installed_package_finds_the_prefix(self):
        lines = self.run_py(CHECK, clean_env(PYTHONPATH=self.site))
        lib = os.path.realpath(lines[0])
        self.assertTrue(lib.startswith(os.path.realpath(self.prefix) + "/"), lib)
        self.assertTrue(lines[1].startswith("plugins " + os.path.realpath(self.prefix)) or
                        lines[1].startswith("plugins " + self.prefix), lines[1])

    def test_tools_library_of_the_prefix(self):
        out = os.path.join(sytest.workdir("install"), "tiny_int8.onnx")
        code = ("import os, switchyard as sy, switchyard.tools as t\n"
                "r = sy.quantize(%r, %r, %r)\n"
                "print(t.tools_library()._name)\n"
                "print(r.n_samples, r.argmax_agree, os.path.getsize(%r) == r.output_bytes)\n"
                % (TINY, os.path.dirname(SET), out, out))
        lines = self.run_py(code, clean_env(PYTHONPATH=self.site))
        self.assertTrue(os.path.realpath(lines[0]).startswith(os.path.realpath(self.prefix) + "/"), lines[0])
        self.assertEqual(lines[1], "1 1 True")

    def test_entry_point_and_module(self):
        script = glob.glob(os.path.join(self.prefix, "**/bin/switchyard-py"), recursive=True)
        self.assertEqual(len(script), 1)
        r = subprocess.run([sys.executable, script[0], "run", TINY, "--input-dir", SET], capture_output=True,
                           text=True, env=clean_env(PYTHONPATH=self.site))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("output 0 'probs' float32 [1,10]: min 0.0371523 max 0.212889 mean 0.1", r.stdout)

    def test_explicit_library(self):
        built = glob.glob(os.path.join(sytest.BUILD, "lib/libswitchyard.so"))[0]
        # the variable wins over the prefix next to the package
        lines = self.run_py(CHECK, clean_env(PYTHONPATH=self.site, SWITCHYARD_LIBRARY=built))
        self.assertEqual(os.path.realpath(lines[0]), os.path.realpath(built))
        lines = self.run_py("import switchyard as sy; sy.load_library(%r)\n" % built + CHECK,
                            clean_env(PYTHONPATH=self.site))
        self.assertEqual(os.path.realpath(lines[0]), os.path.realpath(built))
        r = subprocess.run([sys.executable, "-c", "import switchyard as sy; sy.Env()"], capture_output=True,
                           text=True, env=clean_env(PYTHONPATH=self.site, SWITCHYARD_LIBRARY="/nonexistent/libsy.so"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot load /nonexistent/libsy.so", r.stderr)

    def test_source_tree(self):
        # the README's steps: PYTHONPATH=tools/python finds build/lib of the checkout
        # (only when the build folder is the checkout's build/)
        if os.path.realpath(sytest.BUILD) != os.path.realpath(os.path.join(sytest.SOURCE, "build")):
            self.skipTest("the build folder is not SOURCE/build")
        lines = self.run_py(CHECK, clean_env(PYTHONPATH=os.path.join(sytest.SOURCE, "tools/python")))
        self.assertTrue(os.path.realpath(lines[0]).startswith(os.path.realpath(sytest.BUILD)), lines[0])


if __name__ == "__main__":
    sytest.main()
