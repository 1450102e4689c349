"""The tools library from Python (switchyard.quantize, switchyard.llm_export):
the files equal those of `switchyard quantize` / `switchyard llm-export` for
the same arguments (both are thin shells over libswitchyard_tools), the
quantize report's relative error and argmax agreement equal the formulas
written out here over the two models' outputs, samples from memory give the
file a folder gives, and refusals are Errors."""
import filecmp
import os
import shutil
import subprocess

import numpy as np

import sytest
import switchyard as sy

sytest.need_shared("models/onnx/mnist-8/model.onnx")
FLOAT = os.path.join(sytest.MNIST, "model.onnx")


def read(p):
    with open(p, "rb") as f:
        return f.read()


class Quantize(sytest.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.w = sytest.workdir("tools")
        cls.samples = [sy.read_tensor(os.path.join(sytest.MNIST, "test_data_set_%d/input_0.pb" % k))
                       for k in range(3)]

    def cli(self, out, *args):
        r = sytest.run_c([sytest.CLI, "quantize", FLOAT, "--calib", sytest.MNIST, "-o", out] + list(args),
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return read(out)

    def test_same_file_as_the_cli_and_report(self):
        want = self.cli(os.path.join(self.w, "cli_int8.onnx"))
        out = os.path.join(self.w, "py_int8.onnx")
        seen = []
        rep = sy.quantize(FLOAT, sytest.MNIST, out, progress=lambda *a: seen.append(a))
        self.assertEqual(read(out), want)
        self.assertTrue(any(p[0] == "calibrating" for p in seen), seen)
        self.assertEqual((rep.n_samples, rep.evaluated, rep.argmax_compared), (3, True, 3))
        self.assertEqual(rep.output_bytes, len(want))
        # the report against its definitions over the outputs of both models
        env = sy.Env()
        f = sy.Session(env, sy.Model(FLOAT, env))
        q = sy.Session(env, sy.Model(out, env))
        fo = np.concatenate([f.run([x])["Plus214_Output_0"].ravel() for x in self.samples]).astype(np.float64)
        qo = np.concatenate([q.run([x])["Plus214_Output_0"].ravel() for x in self.samples]).astype(np.float64)
        self.assertAlmostEqual(rep.relative_error, np.linalg.norm(qo - fo) / np.linalg.norm(fo), places=6)
        self.assertAlmostEqual(rep.max_abs_error, np.max(np.abs(qo - fo)), delta=1e-3)
        agree = sum(int(np.argmax(fo[10 * k:10 * k + 10]) == np.argmax(qo[10 * k:10 * k + 10])) for k in range(3))
        self.assertEqual(rep.argmax_agree, agree)

    def test_options_and_memory_samples(self):
        want = self.cli(os.path.join(self.w, "cli_u8pc.onnx"), "--scheme", "uint8", "--per-channel")
        out = os.path.join(self.w, "py_u8pc.onnx")
        sy.quantize(FLOAT, sytest.MNIST, out, scheme="uint8", per_channel=True)
        self.assertEqual(read(out), want)
        # the same samples from memory (folder order), the model as bytes
        out2 = os.path.join(self.w, "py_u8pc_mem.onnx")
        rep = sy.quantize(read(FLOAT), [{"Input3": x} for x in self.samples], out2, scheme="uint8",
                          per_channel=True, name="mnist-8", evaluate=False)
        self.assertEqual(read(out2), want)
        self.assertFalse(rep.evaluated)

    def test_refusals(self):
        out = os.path.join(self.w, "never.onnx")
        with self.assertRaises(sy.Error) as c:
            sy.quantize(FLOAT, sytest.MNIST, out, scheme="int3")
        self.assertEqual(c.exception.code, sy.StatusCode.NOT_FOUND)
        self.assertIn("int3", c.exception.message)
        with self.assertRaises(sy.Error) as c:
            sy.quantize(FLOAT, [self.samples[0].astype(np.float64)], out)
        self.assertEqual(c.exception.code, sy.StatusCode.TYPE)
        self.assertIn("'Input3'", c.exception.message)
        with self.assertRaises(sy.Error) as c:
            sy.quantize(FLOAT, sytest.MNIST, out, observer="mean")
        self.assertEqual(c.exception.code, sy.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(sy.Error) as c:
            sy.quantize(FLOAT, "/nonexistent/calib", out)
        self.assertFalse(os.path.exists(out))


class LlmExport(sytest.unittest.TestCase):
    def test_same_bundle_as_the_cli(self):
        model = sytest.need_shared("models/llm/stories260K.bin")
        tok = sytest.need_shared("models/llm/tok512.bin")
        w = sytest.workdir("tools")
        a, b = os.path.join(w, "cli_bundle"), os.path.join(w, "py_bundle")
        for d in (a, b):
            shutil.rmtree(d, ignore_errors=True)
        r = sytest.run_c([sytest.CLI, "llm-export", model, tok, "-o", a, "--quiet", "--ar", "1,32", "--cl",
                            "64,128"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        graphs = []
        sy.llm_export(model, tok, b, ar=(1, 32), cl=(64, 128), progress=lambda ph, d, t, m: graphs.append(ph))
        names = sorted(os.listdir(a))
        self.assertEqual(sorted(os.listdir(b)), names)
        self.assertIn("prompt_ar32_cl64_1_of_1.onnx", names)
        match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
        self.assertEqual((mismatch, errors), ([], []))
        self.assertIn("graph", graphs)
        text = sy.Llm(b).complete("Once upon a time", max_tokens=20).text
        self.assertEqual(text, sy.Llm(a).complete("Once upon a time", max_tokens=20).text)
        with self.assertRaises(sy.Error) as c:
            sy.llm_export(model, "/nonexistent/tok.bin", os.path.join(w, "never"))
        self.assertIn("/nonexistent/tok.bin", c.exception.message)


if __name__ == "__main__":
    sytest.main()
