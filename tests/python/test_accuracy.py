"""docs/examples/accuracy.py on mnist-8 and its int8 quantization: the
numbers it prints equal the formulas written out here over outputs taken
directly from the sessions; the IDX reader on a file this test writes (and on
Debian's Fashion-MNIST when installed); the chart with and without matplotlib."""
import gzip
import os
import re
import subprocess
import sys

import numpy as np

import sytest
import switchyard as sy

sytest.need_shared("models/onnx/mnist-8/model.onnx")
SCRIPT = os.path.join(sytest.SOURCE, "docs/examples/accuracy.py")
FLOAT = os.path.join(sytest.MNIST, "model.onnx")
FASHION = "/usr/share/datasets/fashion-mnist"


def write_idx(path, a):
    a = np.ascontiguousarray(a, np.uint8)
    head = bytes([0, 0, 0x08, a.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in a.shape)
    with gzip.open(path, "wb") as f:
        f.write(head + a.tobytes())


class Accuracy(sytest.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.w = sytest.workdir("accuracy")
        cls.int8 = os.path.join(cls.w, "mnist8_int8.onnx")
        r = sytest.run_c([sytest.CLI, "quantize", FLOAT, "--calib", sytest.MNIST, "-o", cls.int8],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        env = sy.Env()
        cls.f = sy.Session(env, sy.Model(FLOAT, env))
        cls.q = sy.Session(env, sy.Model(cls.int8, env))

    def script(self, *args, env=None):
        r = subprocess.run([sys.executable, SCRIPT, FLOAT, self.int8] + list(args), capture_output=True, text=True,
                           env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def expected(self, images):
        """The statistics by their definitions, over both models' outputs."""
        fo = np.stack([self.f.run([x])["Plus214_Output_0"].ravel() for x in images]).astype(np.float64)
        qo = np.stack([self.q.run([x])["Plus214_Output_0"].ravel() for x in images]).astype(np.float64)
        agree = np.mean(fo.argmax(1) == qo.argmax(1))
        max_abs = np.max(np.abs(qo - fo), axis=1)
        rel = np.sqrt(np.sum((qo - fo) ** 2, axis=1)) / np.sqrt(np.sum(fo ** 2, axis=1))
        return fo, qo, agree, max_abs, rel

    def check_lines(self, out, n, agree, max_abs, rel):
        self.assertIn("samples: %d " % n, out)
        m = re.search(r"top-1 agreement: ([0-9.]+)% \((\d+) of (\d+) differ\)", out)
        self.assertIsNotNone(m, out)
        self.assertEqual(m.group(1), "%.2f" % (agree * 100))
        self.assertEqual(int(m.group(2)), round((1 - agree) * n))
        self.assertIn("max |int8 - float| per sample: mean %.6g, max %.6g" % (max_abs.mean(), max_abs.max()), out)
        self.assertIn("relative error ||int8 - float|| / ||float||: mean %.6g, max %.6g" % (rel.mean(), rel.max()),
                      out)

    def reference_images(self):
        return [sy.read_tensor(os.path.join(sytest.MNIST, "test_data_set_%d/input_0.pb" % k)) for k in range(3)]

    def test_folder(self):
        images = self.reference_images()
        _, _, agree, max_abs, rel = self.expected(images)
        out = self.script("--inputs", sytest.MNIST)
        self.check_lines(out, 3, agree, max_abs, rel)
        self.assertEqual(agree, 1.0)  # the three calibration images keep their digit
        # --calib: the script quantizes first, into the file the CLI wrote
        mine = os.path.join(self.w, "mine_int8.onnx")
        r = subprocess.run([sys.executable, SCRIPT, FLOAT, mine, "--calib", sytest.MNIST, "--inputs", sytest.MNIST],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("quantized: %s (int8, " % mine, r.stdout)
        self.check_lines(r.stdout, 3, agree, max_abs, rel)
        with open(mine, "rb") as f1, open(self.int8, "rb") as f2:
            self.assertEqual(f1.read(), f2.read())

    def test_idx_with_labels(self):
        images = self.reference_images()
        px = np.stack([x.reshape(28, 28) for x in images])
        self.assertTrue(np.array_equal(px, np.round(px)) and px.min() >= 0 and px.max() <= 255)
        write_idx(os.path.join(self.w, "img.gz"), px)
        write_idx(os.path.join(self.w, "lab.gz"), np.array([2, 0, 9]))
        _, _, agree, max_abs, rel = self.expected(images)
        out = self.script("--idx", os.path.join(self.w, "img.gz"), "--labels", os.path.join(self.w, "lab.gz"))
        self.check_lines(out, 3, agree, max_abs, rel)
        self.assertIn("accuracy against the labels: float 100.00%, int8 100.00%", out)

    def test_fashion_mnist(self):
        imgs = os.path.join(FASHION, "t10k-images-idx3-ubyte.gz")
        if not os.path.exists(imgs):
            self.skipTest("Debian's dataset-fashion-mnist is not installed")
        with gzip.open(imgs) as f:
            raw = f.read(16 + 200 * 784)
        px = np.frombuffer(raw, np.uint8, 200 * 784, 16).reshape(200, 1, 1, 28, 28).astype(np.float32)
        _, _, agree, max_abs, rel = self.expected(list(px))
        out = self.script("--idx", imgs, "--limit", "200")
        self.check_lines(out, 200, agree, max_abs, rel)

    def test_chart(self):
        png = os.path.join(self.w, "chart.png")
        if os.path.exists(png):
            os.unlink(png)
        try:
            import matplotlib  # noqa: F401
            have = True
        except ImportError:
            have = False
        out = self.script("--inputs", sytest.MNIST, "--chart", png)
        if have:
            self.assertIn("chart: wrote " + png, out)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        # without matplotlib (a package that fails to import shadows it): a message, no file, exit 0
        fake = os.path.join(self.w, "no_matplotlib/matplotlib")
        os.makedirs(fake, exist_ok=True)
        with open(os.path.join(fake, "__init__.py"), "w") as f:
            f.write("raise ImportError('matplotlib hidden by the test')\n")
        env = dict(os.environ, PYTHONPATH=os.path.dirname(fake) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        png2 = os.path.join(self.w, "chart2.png")
        out = self.script("--inputs", sytest.MNIST, "--chart", png2, env=env)
        self.assertIn("chart: skipped, matplotlib is not installed", out)
        self.assertFalse(os.path.exists(png2))


if __name__ == "__main__":
    sytest.main()
