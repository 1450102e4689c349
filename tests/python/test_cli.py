"""python3 -m switchyard run mirrors `switchyard run`: the same lines for the
same model and inputs, the same output files, the same exit codes."""
import os
import subprocess
import sys

import sytest

TINY = os.path.join(sytest.SOURCE, "graphs/tiny_cnn.onnx")
TINY_SET = os.path.join(sytest.SOURCE, "graphs/tiny_cnn/test_data_set_0")


def both(*args):
    c = sytest.run_c([sytest.CLI, "run"] + list(args), capture_output=True, text=True)
    p = subprocess.run([sys.executable, "-m", "switchyard", "run"] + list(args), capture_output=True, text=True)
    return c, p


class Run(sytest.unittest.TestCase):
    def same(self, *args):
        c, p = both(*args)
        self.assertEqual(c.returncode, 0, c.stderr)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, c.stdout)
        return p.stdout

    def test_tiny_cnn(self):
        out = self.same(TINY, "--input-dir", TINY_SET)
        self.assertIn("output 0 'probs' float32 [1,10]: min 0.0371523 max 0.212889 mean 0.1", out)

    def test_pattern_and_threads(self):
        out = self.same(TINY, "--threads", "2")
        self.assertIn("no input given, using a deterministic pattern (sin(0.1*i))", out)
        self.same(os.path.join(sytest.SOURCE, "graphs/mlp.onnx"))
        self.same(os.path.join(sytest.SOURCE, "graphs/elementwise_chain.onnx"))

    def test_shared_models(self):
        if not os.path.isdir(sytest.MNIST):
            self.skipTest("../shared absent")
        m = os.path.join(sytest.MNIST, "model.onnx")
        for k in range(3):
            self.same(m, "--input-dir", os.path.join(sytest.MNIST, "test_data_set_%d" % k))
        self.same(m, "--input", "Input3=" + os.path.join(sytest.MNIST, "test_data_set_1/input_0.pb"))
        for t in ("person_detect", "hello_world_int8", "mnist_lstm_int8"):  # int8 in and out
            self.same(sytest.shared("models/tflite", t, "model.tflite"))
        self.same(sytest.shared("models/onnx/mnist-convinteger-quant/model.onnx"), "--requant", "gemmlowp")

    def test_output_dir(self):
        w = sytest.workdir("cli")
        c, p = both(TINY, "--input-dir", TINY_SET, "--output-dir", os.path.join(w, "out"))
        self.assertEqual(c.returncode, 0, c.stderr)
        with open(os.path.join(w, "out/output_0.pb"), "rb") as f:
            cli_bytes = f.read()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, c.stdout)  # same path: the Python run rewrote the file
        with open(os.path.join(w, "out/output_0.pb"), "rb") as f:
            self.assertEqual(f.read(), cli_bytes)

    def test_failures(self):
        for args, code, text in [
            ((), 2, "a MODEL path is required"),
            ((TINY, "--threads", "0"), 2, "--threads expects an integer from 1 to 256, got '0'"),
            ((TINY, "--requant", "x"), 2, "--requant expects onnx, gemmlowp or single_rounding, got 'x'"),
            ((TINY, "--bogus"), 2, "unexpected argument '--bogus'"),
            ((TINY, "--input-dir", TINY_SET, "--input", "image=x"), 2, "cannot be combined"),
            (("/nonexistent.onnx",), 1, "/nonexistent.onnx: cannot open"),
            ((TINY, "--input", "pixels=" + TINY_SET + "/input_0.npy"), 1, "no input named 'pixels'"),
            ((TINY, "--input-dir", "/nonexistent"), 1, "/nonexistent/input_0.pb (or .npy) not found"),
        ]:
            c, p = both(*args)
            self.assertEqual((c.returncode, p.returncode), (code, code), "%s: %s / %s" % (args, c.stderr, p.stderr))
            self.assertIn(text, c.stderr)
            self.assertIn(text, p.stderr)


if __name__ == "__main__":
    sytest.main()
