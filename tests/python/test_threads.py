"""Thread safety as switchyard.h states it: a model is shared by many
sessions and threads at once; different sessions run concurrently; one
session is used by one thread at a time (the Session class serializes
concurrent callers, so sharing one across threads still gives right answers)."""
import os
import threading

import numpy as np

import sytest
import switchyard as sy

sytest.need_shared("models/onnx/mnist-8/model.onnx")

SETS = []
for k in range(3):
    d = os.path.join(sytest.MNIST, "test_data_set_%d" % k)
    SETS.append((sy.read_tensor(os.path.join(d, "input_0.pb")), sy.read_tensor(os.path.join(d, "output_0.pb"))))
ROUNDS = 8


def run_threads(n, target):
    errors = []

    def wrap(i):
        try:
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append((i, e))

    ts = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


class Threads(sytest.unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = sy.Env()
        cls.model = sy.Model(os.path.join(sytest.MNIST, "model.onnx"), cls.env)

    def test_one_session_per_thread_shared_model(self):
        def work(i):
            s = sy.Session(self.env, self.model, threads=1 + i % 2)
            for r in range(ROUNDS):
                x, want = SETS[(i + r) % 3]
                got = s.run({"Input3": x}, copy=(r % 2 == 0))["Plus214_Output_0"]
                np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
                del got
        self.assertEqual(run_threads(4, work), [])

    def test_one_session_shared_by_threads(self):
        s = sy.Session(self.env, self.model)

        def work(i):
            for r in range(ROUNDS):
                x, want = SETS[(i + r) % 3]
                got = s.run({"Input3": x})["Plus214_Output_0"]
                np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)
        self.assertEqual(run_threads(4, work), [])

    def test_sessions_made_and_dropped_concurrently(self):
        def work(i):
            for r in range(ROUNDS):
                with sy.Session(self.env, self.model) as s:
                    x, want = SETS[r % 3]
                    np.testing.assert_allclose(s.run([x])["Plus214_Output_0"], want, rtol=1e-3, atol=1e-5)
                    s.explain()
                    s.memory_report()
        self.assertEqual(run_threads(4, work), [])


if __name__ == "__main__":
    sytest.main()
