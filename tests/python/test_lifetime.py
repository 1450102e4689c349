"""Handles are released in the order the C API needs (sessions, then models,
then the env) whatever order Python drops the objects in, also inside a
reference cycle broken by gc.collect(), and while an output view lives."""
import gc
import os
import subprocess
import sys

import numpy as np

import sytest
import switchyard as sy
from switchyard import _handles

TINY = os.path.join(sytest.SOURCE, "graphs/tiny_cnn.onnx")
X = np.load(os.path.join(sytest.SOURCE, "graphs/tiny_cnn/test_data_set_0/input_0.npy"))
WANT = np.load(os.path.join(sytest.SOURCE, "graphs/tiny_cnn/test_data_set_0/output_0.npy"))


class Lifetime(sytest.unittest.TestCase):
    def setUp(self):
        gc.collect()
        _handles.release_log = []

    def tearDown(self):
        _handles.release_log = None

    def kinds(self):
        return [k for k, _ in _handles.release_log]

    def make(self):
        env = sy.Env()
        model = sy.Model(TINY, env)
        session = sy.Session(env, model)
        return env, model, session

    def test_dropped_in_the_wrong_order(self):
        env, model, session = self.make()
        ptrs = (env._h.ptr, model._h.ptr, session._h.ptr)
        del env
        gc.collect()
        self.assertEqual(self.kinds(), [])  # the model and session still need it
        del model
        gc.collect()
        self.assertEqual(self.kinds(), [])
        np.testing.assert_allclose(session.run({"image": X})["probs"], WANT, rtol=1e-5, atol=1e-7)
        del session
        gc.collect()
        self.assertEqual(_handles.release_log, [("session", ptrs[2]), ("model", ptrs[1]), ("env", ptrs[0])])

    def test_reference_cycle(self):
        for rotation in range(3):  # the finalizers of a cycle run in no set order
            _handles.release_log = []
            objs = list(self.make())
            objs = objs[rotation:] + objs[:rotation]
            box = [objs]
            for o in objs:
                o.cycle = box  # every object reaches every other: one cycle
            box.append(box)
            del objs, o, box
            self.assertEqual(self.kinds(), [])
            gc.collect()
            self.assertEqual(self.kinds(), ["session", "model", "env"], "rotation %d" % rotation)

    def test_explicit_close_in_the_wrong_order(self):
        env, model, session = self.make()
        env.close()
        model.close()
        self.assertEqual(self.kinds(), [])
        session.close()
        self.assertEqual(self.kinds(), ["session", "model", "env"])
        session.close()  # twice is harmless
        self.assertEqual(len(self.kinds()), 3)

    def test_view_outlives_everything(self):
        env, model, session = self.make()
        y = session.run({"image": X}, copy=False)["probs"]
        session.close()
        model.close()
        env.close()
        del env, model, session
        gc.collect()
        self.assertEqual(self.kinds(), [])  # the view still reads the session's memory
        np.testing.assert_allclose(y, WANT, rtol=1e-5, atol=1e-7)
        del y
        gc.collect()
        self.assertEqual(self.kinds(), ["session", "model", "env"])

    def test_many_sessions_one_model(self):
        env = sy.Env()
        model = sy.Model(TINY, env)
        sessions = [sy.Session(env, model) for _ in range(5)]
        del env, model
        for s in sessions[:4]:
            s.close()
        self.assertEqual(self.kinds(), ["session"] * 4)
        sessions[4].close()
        self.assertEqual(self.kinds(), ["session"] * 5)  # the sessions' objects still name the model
        del sessions, s
        gc.collect()
        self.assertEqual(self.kinds(), ["session"] * 5 + ["model", "env"])

    def test_interpreter_exit_with_live_objects(self):
        # objects still alive at exit, the env dropped first: no crash, nothing on stderr
        code = ("import numpy as np, switchyard as sy\n"
                "env = sy.Env(); m = sy.Model(%r, env); s = sy.Session(env, m)\n"
                "y = s.run({'image': np.zeros((1,1,8,8), np.float32)}, copy=False)['probs']\n"
                "cycle = [env, m, s, y]; cycle.append(cycle)\n"
                "del env\n" % TINY)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")


if __name__ == "__main__":
    sytest.main()
