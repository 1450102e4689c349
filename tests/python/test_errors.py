"""Bad input through the Python API: each is a switchyard.Error with the
library's status code and a message saying what and where, never a crash."""
import os

import numpy as np

import sytest
import switchyard as sy
from switchyard import StatusCode as C

TINY = os.path.join(sytest.SOURCE, "graphs/tiny_cnn.onnx")  # image float32 [1,1,8,8] -> probs [1,10]


class Errors(sytest.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = sy.Env()
        cls.model = sy.Model(TINY, cls.env)

    def raises(self, code, *fragments):
        test = self

        class Ctx:
            def __enter__(self):
                return self

            def __exit__(self, typ, e, tb):
                test.assertIsNotNone(e, "no error raised")
                test.assertIsInstance(e, sy.Error)
                test.assertEqual(e.code, code, str(e))
                for f in fragments:
                    test.assertIn(f, e.message)
                test.assertTrue(str(e).startswith("SY_ERR_"))
                self.error = e
                return True
        return Ctx()

    def test_wrong_dtype_names_input_and_both_shapes(self):
        s = sy.Session(self.env, self.model)
        with self.raises(C.TYPE, "'image'", "float64", "[1,1,8,8]", "float32") as r:
            s.run({"image": np.zeros((1, 1, 8, 8))})
        self.assertEqual(r.error.message, "input 'image': dtype float64 shape [1,1,8,8] given, "
                                          "the model expects float32 [1,1,8,8]")

    def test_wrong_shape_names_input_and_both_shapes(self):
        s = sy.Session(self.env, self.model)
        with self.raises(C.SHAPE) as r:
            s.run({"image": np.zeros((1, 8, 8), np.float32)})
        self.assertEqual(r.error.message, "input 'image': shape [1,8,8] given, the model expects [1,1,8,8]")
        with self.raises(C.SHAPE, "'image'", "[1,1,8,9]", "[1,1,8,8]"):
            s.run({"image": np.zeros((1, 1, 8, 9), np.float32)})

    def test_library_checks_shape_too(self):
        # a symbolic dim accepts any size; the library still refuses a bad rank
        d = sytest.shared("models/tflite/hello_world_int8/model.tflite")
        if not os.path.exists(d):
            self.skipTest("../shared absent")
        s = sy.Session(sy.Model(d, self.env))
        with self.raises(C.SHAPE, "'serving_default_dense_input:0'", "[3]", "[batch,1]"):
            s.run([np.zeros(3, np.int8)])

    def test_unknown_and_missing_inputs(self):
        s = sy.Session(self.env, self.model)
        with self.raises(C.NOT_FOUND, "no input named 'imag'", "'image'"):
            s.run({"imag": np.zeros((1, 1, 8, 8), np.float32)})
        with self.raises(C.INVALID_ARGUMENT, "input 'image' has not been set"):  # the library's check
            s.run({})
        with self.raises(C.INVALID_ARGUMENT, "2 inputs given, the model has 1"):
            s.run([np.zeros((1, 1, 8, 8), np.float32)] * 2)
        with self.raises(C.INVALID_ARGUMENT, "feeds must be"):
            s.run(42)

    def test_list_input_takes_the_model_dtype(self):
        s = sy.Session(self.env, self.model)
        x = sy.read_tensor(os.path.join(sytest.SOURCE, "graphs/tiny_cnn/test_data_set_0/input_0.npy"))
        want = sy.read_tensor(os.path.join(sytest.SOURCE, "graphs/tiny_cnn/test_data_set_0/output_0.npy"))
        got = s.run({"image": x.tolist()})["probs"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        # a non-contiguous view is accepted (copied once), same values
        big = np.zeros((1, 1, 8, 16), np.float32)
        big[..., ::2] = x
        got = s.run({"image": big[..., ::2]})["probs"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)

    def test_files(self):
        with self.raises(C.NOT_FOUND, "/nonexistent/model.onnx", "cannot open"):
            sy.Model("/nonexistent/model.onnx", self.env)
        with self.raises(C.INVALID_MODEL, "garbage"):
            sy.Model(b"\x08\x07 this is not a model", self.env, name="garbage")
        with self.raises(C.NOT_FOUND, "/nonexistent/input_0.pb"):
            sy.read_tensor("/nonexistent/input_0.pb")

    def test_config(self):
        with self.raises(C.INVALID_CONFIG, "threadz"):
            sy.Env(ini_string="[switchyard]\nplugin_dirs = @default\nthreadz = 2\n")
        with self.raises(C.INVALID_ARGUMENT, "not both"):
            sy.Env("a.ini", ini_string="")

    def test_session_options(self):
        with self.raises(C.INVALID_ARGUMENT, "requant='fast'"):
            sy.Session(self.env, self.model, requant="fast")
        with self.raises(C.INVALID_ARGUMENT, "threads=-1"):
            sy.Session(self.env, self.model, threads=-1)
        with self.raises(C.INVALID_ARGUMENT, "another Env"):
            sy.Session(sy.Env(), self.model)
        with self.raises(C.INVALID_ARGUMENT, "profiling was not enabled"):  # the library's message
            sy.Session(self.env, self.model).trace(os.path.join(sytest.workdir("errors"), "t.json"))

    def test_closed_objects(self):
        s = sy.Session(self.env, self.model)
        s.close()
        with self.raises(C.INVALID_ARGUMENT, "Session is closed"):
            s.run({"image": np.zeros((1, 1, 8, 8), np.float32)})
        e = sy.Env()
        e.close()
        with self.raises(C.INVALID_ARGUMENT, "Env is closed"):
            sy.Model(TINY, e)

    def test_zero_copy_outputs_are_not_overwritten(self):
        s = sy.Session(self.env, self.model)
        x = np.zeros((1, 1, 8, 8), np.float32)
        y = s.run({"image": x}, copy=False)["probs"]
        first = y.copy()
        self.assertFalse(y.flags.writeable)
        row = y[0]  # a view of the view keeps it referenced too
        del y
        with self.raises(C.INVALID_ARGUMENT, "'probs'", "still referenced"):
            s.run({"image": x + 1})
        np.testing.assert_array_equal(row, first[0])  # untouched by the refused run
        del row
        z = s.run({"image": x + 1}, copy=False)["probs"]
        self.assertFalse(np.array_equal(z, first))

    def test_llm_errors(self):
        with self.raises(C.NOT_FOUND):
            sy.Llm("/nonexistent/bundle", self.env)
        with self.raises(C.NOT_FOUND, "'llm' extension"):
            sy.Llm("/tmp", sy.Env(ini_string="[switchyard]\nplugin_dirs =\n"))


if __name__ == "__main__":
    sytest.main()
