"""Training from Python (switchyard.train_build / TrainSession / read_idx over
sy_train.h): one SGD step of graphs/mlp.onnx gives the weights numpy computes
here from the formulas (softmax cross-entropy, its gradient through
MatMul/Add/Relu, W' = W - lr dW), read back from the checkpoint with onnx's
own reader; the exported model and the eval model agree with numpy's forward
pass on the new weights; refusals are Errors; IDX files read as numpy, and
a data set as IDX files and as .npy/.pb folders reads back the same."""
import os

import numpy as np

import sytest
import switchyard as sy

MLP = os.path.join(sytest.SOURCE, "graphs", "mlp.onnx")


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def forward(p, x):
    h = x @ p["fc1.W"] + p["fc1.B"]
    r = np.maximum(h, 0)
    return h, r, r @ p["fc2.W"] + p["fc2.B"]


def ce(z, lab):
    return float(np.mean(-np.log(softmax(z)[np.arange(len(lab)), lab])))


class Train(sytest.unittest.TestCase):
    def read_ckpt(self, path):
        try:
            import onnx
            from onnx import numpy_helper
        except ImportError:
            self.skipTest("python3-onnx is not installed (tools/dev/install-deps.sh installs it)")
        m = onnx.load(path)
        return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}

    def test_sgd_step_export_eval(self):
        w = sytest.workdir("train")
        art = os.path.join(w, "mlp")
        rep = sy.train_build(MLP, art, optimizer="sgd")
        self.assertEqual(rep.n_trainable, 4)
        p0 = self.read_ckpt(os.path.join(art, "checkpoint.onnx"))
        rng = np.random.default_rng(7)
        x = rng.standard_normal((4, 16)).astype(np.float32)
        lab = np.array([3, 0, 9, 3], dtype=np.int64)
        lr = 0.1
        with sy.TrainSession(art) as s:
            loss = s.step(x, lab, lr)
            h, r, z = forward(p0, x.astype(np.float64))
            self.assertAlmostEqual(loss, ce(z, lab), places=5)
            # the gradients written out: dz = (softmax - onehot) / n, back through the layers
            dz = softmax(z)
            dz[np.arange(4), lab] -= 1
            dz /= 4
            g = {"fc2.W": r.T @ dz, "fc2.B": dz.sum(0)}
            dh = (dz @ p0["fc2.W"].T) * (h > 0)
            g["fc1.W"] = x.astype(np.float64).T @ dh
            g["fc1.B"] = dh.sum(0)
            ck = os.path.join(w, "after.onnx")
            s.save(ck)
            p1 = self.read_ckpt(ck)
            for k in g:
                np.testing.assert_allclose(p1[k], p0[k] - lr * g[k], rtol=1e-5, atol=1e-6, err_msg=k)
            self.assertEqual(s.steps, 1)
            # the eval model and the exported model on the new weights
            eloss, out = s.evaluate(x, lab)
            z1 = forward(p1, x.astype(np.float64))[2]
            self.assertAlmostEqual(eloss, ce(z1, lab), places=5)
            np.testing.assert_allclose(out, z1, rtol=1e-5, atol=1e-5)
            exp = os.path.join(w, "trained.onnx")
            s.export(exp)
        env = sy.default_env()
        with sy.Session(env, sy.Model(exp, env)) as es:
            y = es.run({"x": x[:1]})["y"]
        np.testing.assert_allclose(y, z1[:1], rtol=1e-5, atol=1e-5)

    def test_refusals(self):
        with self.assertRaises(sy.Error) as e:
            sy.TrainSession(os.path.join(sytest.workdir("train"), "absent"))
        self.assertEqual(e.exception.code, sy.StatusCode.NOT_FOUND)
        with self.assertRaises(sy.Error) as e:
            sy.train_build(MLP, sytest.workdir("train"), trainable=("last", 0))
        self.assertIn("last_k must be >= 1", str(e.exception))
        art = os.path.join(sytest.workdir("train"), "mlp2")
        sy.train_build(MLP, art)
        with sy.TrainSession(art) as s:
            with self.assertRaises(sy.Error) as e:
                s.step(np.zeros((2, 16), np.float32), np.zeros(2, np.float32), 0.1)
            self.assertIn("labels", str(e.exception))

    def test_read_idx(self):
        d = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
        p = os.path.join(d, "t10k-labels-idx1-ubyte.gz")
        if not os.path.exists(p):
            self.skipTest("Fashion-MNIST is absent from %s (Debian's dataset-fashion-mnist)" % d)
        import gzip
        labels = sy.read_idx(p)
        with gzip.open(p) as f:
            raw = np.frombuffer(f.read()[8:], dtype=np.uint8)
        np.testing.assert_array_equal(labels, raw)
        images = sy.read_idx(os.path.join(d, "t10k-images-idx3-ubyte.gz"))
        self.assertEqual(images.shape, (10000, 28, 28))
        self.assertEqual(images.dtype, np.uint8)

    def test_read_dataset(self):
        # the same samples as IDX files and as a folder of .npy / .pb pairs
        # (tests/train/fashion_folders.py) read back equal, and equal to the
        # IDX bytes / 255 computed here
        d = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
        if not os.path.exists(os.path.join(d, "train-images-idx3-ubyte.gz")):
            self.skipTest("Fashion-MNIST is absent from %s (Debian's dataset-fashion-mnist)" % d)
        import subprocess
        import sys
        gen = os.path.join(sytest.SOURCE, "tests", "train", "fashion_folders.py")
        work = sytest.workdir("dataset")
        f, i = os.path.join(work, "folders"), os.path.join(work, "idx")
        subprocess.run([sys.executable, gen, d, f, "130", "7", i], check=True)
        for split, n in (("train", 130), ("test", 7)):
            xf, yf = sy.read_dataset(f, split)
            xi, yi = sy.read_dataset(i, split)
            self.assertEqual(xf.shape, (n, 1, 28, 28))
            self.assertEqual(yf.dtype, np.int64)
            np.testing.assert_array_equal(xf, xi)
            np.testing.assert_array_equal(yf, yi)
        raw = sy.read_idx(os.path.join(d, "train-images-idx3-ubyte.gz"))[:130]
        xi, yi = sy.read_dataset(i, "train")
        np.testing.assert_array_equal(xi[:, 0], raw.astype(np.float32) / np.float32(255))
        np.testing.assert_array_equal(yi, sy.read_idx(os.path.join(d, "train-labels-idx1-ubyte.gz"))[:130])
        with self.assertRaises(sy.Error) as e:
            sy.read_dataset(f, "validation")
        self.assertIn("expected train or test", str(e.exception))


if __name__ == "__main__":
    sytest.main()
