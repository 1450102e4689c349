"""Models through the Python API against independent references: mnist-8's
three ONNX reference sets, the int8 TFLite models' upstream expectations
(person_detect on its two images, hello_world_int8 against sin(x)), and the
QDQ int8 model the CLI's quantizer makes from mnist-8."""
import json
import os
import subprocess

import numpy as np

import sytest
import switchyard as sy

sytest.need_shared("models/onnx/mnist-8/model.onnx")


def reference_set(model_dir, k):
    d = os.path.join(model_dir, "test_data_set_%d" % k)
    ins = [sy.read_tensor(os.path.join(d, "input_0.pb"))]
    outs = [sy.read_tensor(os.path.join(d, "output_0.pb"))]
    return ins, outs


class Mnist8(sytest.unittest.TestCase):
    DIGITS = (2, 0, 9)  # the labels of the three reference images

    @classmethod
    def setUpClass(cls):
        cls.env = sy.Env()
        cls.model = sy.Model(os.path.join(sytest.MNIST, "model.onnx"), cls.env)

    def check_sets(self, session, copy=True):
        for k in range(3):
            (x,), (want,) = reference_set(sytest.MNIST, k)
            out = session.run({"Input3": x}, copy=copy)
            self.assertEqual(list(out), ["Plus214_Output_0"])
            got = out["Plus214_Output_0"]
            self.assertEqual(got.dtype, np.float32)
            self.assertEqual(got.shape, (1, 10))
            # the tolerance of tests/models (rtol 1e-3, atol 1e-5) against the ONNX reference outputs
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5, err_msg="test_data_set_%d" % k)
            self.assertEqual(int(np.argmax(want)), self.DIGITS[k])
            self.assertEqual(int(np.argmax(got)), self.DIGITS[k])
            del got, out

    def test_reference_sets(self):
        with sy.Session(self.env, self.model) as s:
            self.check_sets(s)

    def test_reference_sets_zero_copy_outputs(self):
        with sy.Session(self.env, self.model) as s:
            self.check_sets(s, copy=False)

    def test_threads_and_bytes(self):
        with open(os.path.join(sytest.MNIST, "model.onnx"), "rb") as f:
            m = sy.Model(f.read(), self.env, name="mnist-8 bytes")
        with sy.Session(self.env, m, threads=2) as s:
            self.check_sets(s)

    def test_info(self):
        s = sy.Session(self.env, self.model)
        (vi,) = s.inputs
        self.assertEqual((vi.name, vi.dtype_name, vi.dtype, vi.shape), ("Input3", "float32", np.float32, (1, 1, 28, 28)))
        (vo,) = s.outputs
        self.assertEqual((vo.name, vo.shape), ("Plus214_Output_0", (1, 10)))
        self.assertEqual(self.model.format, "onnx")
        self.assertEqual(self.model.opsets, {"": 8})
        ops = [n[2] for n in self.model.nodes]
        self.assertEqual(ops.count("Conv"), 2)
        self.assertIsNone(self.model.unsupported_ops())

    def test_explain_and_memory(self):
        s = sy.Session(self.env, self.model)
        pl = s.explain()
        self.assertEqual(len(pl), len(self.model.nodes))
        providers = [p.name for p in self.env.providers()]
        self.assertIn("cpu_ref", providers)
        for p in pl:  # a node is either folded into a constant or placed on a provider with a reason
            if p.folded:
                self.assertIsNone(p.provider)
            else:
                self.assertIn(p.provider, providers)
                self.assertIn(p.reason, ("taken", "fallback"))
                # a node on a later provider carries the declines of those before it
                for before in providers[:providers.index(p.provider)]:
                    self.assertIn(before + ": [", p.detail or "", p)
        (host,) = [r for r in s.memory_report() if r.domain == "host"]
        # the planner's report: arena at least the lower bound, at most the plan without reuse
        self.assertGreater(host.lower_bound, 0)
        self.assertLessEqual(host.lower_bound, host.arena_bytes)
        self.assertLessEqual(host.arena_bytes, host.naive_bytes)
        self.assertEqual(host.weights, self.model.initializer_bytes)
        self.assertEqual(s.copies(), [])  # one provider, one domain: nothing to copy

    def test_trace(self):
        s = sy.Session(self.env, self.model, profiling=True)
        (x,), _ = reference_set(sytest.MNIST, 0)
        s.run({"Input3": x})
        path = os.path.join(sytest.workdir("models"), "mnist8_trace.json")
        s.trace(path)
        with open(path) as f:
            trace = json.load(f)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        names = {e.get("name") for e in events}
        placed = {p.name for p in s.explain() if not p.folded}
        self.assertTrue(placed <= names, "nodes missing from the trace: %s" % (placed - names))
        op_of = {p.name: p.op for p in s.explain()}
        prof = s.profile()
        self.assertEqual({e.name for e in prof if e.name in placed}, placed)
        for e in prof:  # a node's event is named after the node, its category is the op
            if e.name in placed:
                self.assertEqual(e.category, op_of[e.name])
                self.assertGreater(e.duration_ns, 0)


class Int8(sytest.unittest.TestCase):
    def test_person_detect(self):
        d = sytest.need_shared("models/tflite/person_detect")
        m = sy.Model(os.path.join(d, "model.tflite"))
        s = sy.Session(m)
        (vi,) = s.inputs
        self.assertEqual((vi.dtype, vi.shape), (np.int8, (1, 96, 96, 1)))

        def image(name):
            # models/README.md: 8-bit BMP, pixels at 1078, rows bottom-up; upstream
            # copies the top-down bytes into the int8 input unchanged
            with open(os.path.join(d, "testdata", name), "rb") as f:
                raw = f.read()
            px = np.frombuffer(raw, np.uint8, 96 * 96, 1078).reshape(96, 96)[::-1]
            return px.view(np.int8).reshape(1, 96, 96, 1)

        # upstream person_detection_test: person -> out[1] > out[0], no person -> out[0] > out[1]
        out = s.run({vi.name: image("person.bmp")})[s.outputs[0].name]
        self.assertEqual(out.dtype, np.int8)
        self.assertGreater(out[0, 1], out[0, 0])
        out = s.run({vi.name: image("no_person.bmp")})[s.outputs[0].name]
        self.assertGreater(out[0, 0], out[0, 1])

    def test_hello_world_int8_batch(self):
        d = sytest.need_shared("models/tflite/hello_world_int8")
        m = sy.Model(os.path.join(d, "model.tflite"))
        s = sy.Session(m)
        (vi,) = s.inputs
        self.assertEqual(vi.shape, ("batch", 1))  # symbolic: any batch
        # input int8 s=0.024480115622282028 zp=-128, output s=0.008291 zp=5 (models/README.md)
        x = np.linspace(0.2, 6.0, 24)
        q = np.clip(np.round(x / 0.024480115622282028) - 128, -128, 127).astype(np.int8).reshape(24, 1)
        y = s.run({vi.name: q})[s.outputs[0].name]
        self.assertEqual(y.shape, (24, 1))
        got = (y.astype(np.float64).ravel() - 5) * 0.008291
        # what the model was trained for: sin(x) on [0, 2pi], within its fit error
        self.assertLess(np.max(np.abs(got - np.sin(x))), 0.2, "%s vs %s" % (got, np.sin(x)))

    def test_quantized_mnist8(self):
        out = os.path.join(sytest.workdir("models"), "mnist8_int8.onnx")
        r = sytest.run_c([sytest.CLI, "quantize", os.path.join(sytest.MNIST, "model.onnx"), "--calib",
                            sytest.MNIST, "-o", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        env = sy.Env()
        m = sy.Model(out, env)
        for form in ("onnx", "gemmlowp"):
            s = sy.Session(env, m, requant=form)
            q = [p for p in s.explain() if p.requant]
            self.assertTrue(q, "no integer kernel in the quantized model")
            self.assertTrue(all(p.requant == form and p.requant_source == "session" for p in q))
            for k, digit in enumerate(Mnist8.DIGITS):
                (x,), (want,) = reference_set(sytest.MNIST, k)
                got = s.run({"Input3": x})["Plus214_Output_0"]
                self.assertEqual(int(np.argmax(got)), digit, "int8 %s, set %d" % (form, k))
                # int8 error bound: within 5% of the float reference's range
                self.assertLess(np.max(np.abs(got - want)), 0.05 * np.ptp(want))

    def test_convinteger_model(self):
        d = sytest.need_shared("models/onnx/mnist-convinteger-quant")
        m = sy.Model(os.path.join(d, "model.onnx"))
        s = sy.Session(m)
        self.assertIn("ConvInteger", [p.op for p in s.explain()])
        (x,), (want,) = reference_set(d, 0)
        got = s.run({"Input3": x})["Plus214_Output_0"]
        # its reference set holds mnist-8's float output: the same digit
        self.assertEqual(int(np.argmax(got)), int(np.argmax(want)))
        self.assertEqual(int(np.argmax(got)), 2)


if __name__ == "__main__":
    sytest.main()
