"""ai.onnx.ml operators on hand-worked values (no ONNX Runtime needed), and
refusals of bad attributes naming the node and the attribute.

  /usr/bin/python3 test_ml_hand.py SWITCHYARD WORK_DIR"""
import math
import os
import subprocess
import sys

try:  # Debian's python3-onnx (with python3-numpy) writes the models
    import numpy as np
    import onnx  # noqa: F401
except ImportError as e:
    print("SKIPPED: python3-onnx is needed to write the models (%s)" % e)
    sys.exit(77)
from onnx import TensorProto, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ml_cases import one_node  # noqa: E402
from ml_ort import to_proto  # noqa: E402

F, I64, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
sy, work = sys.argv[1], sys.argv[2]
failed = 0
count = 0


def run(name, op, inputs, outputs, **attrs):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(one_node(op, inputs, outputs, **attrs).SerializeToString())
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "input_%d.pb" % i), "wb") as f:
            f.write(to_proto(n, a).SerializeToString())
    r = subprocess.run([sy, "run", os.path.join(d, "model.onnx"), "--input-dir", d, "--output-dir",
                        os.path.join(d, "out")], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr
    outs = []
    for i in range(len(outputs)):
        t = TensorProto()
        t.ParseFromString(open(os.path.join(d, "out", "output_%d.pb" % i), "rb").read())
        outs.append(numpy_helper.to_array(t))
    return outs, r.stderr


def check(name, op, inputs, outputs, want, **attrs):
    """want: one array per output (floats within 1e-6 relative, others exact)"""
    global failed, count
    count += 1
    got, err = run(name, op, inputs, outputs, **attrs)
    if got is None:
        print("FAIL %s: %s" % (name, err.strip()))
        failed += 1
        return
    for g, w in zip(got, want):
        w = np.asarray(w)
        if w.dtype.kind == "f":
            ok = g.shape == w.shape and np.allclose(g, w, rtol=1e-6, atol=1e-7, equal_nan=True)
        elif w.dtype.kind in "OUS":
            ok = g.shape == w.shape and [s.decode() if isinstance(s, bytes) else s for s in g.reshape(-1)] == \
                list(w.reshape(-1))
        else:
            ok = g.shape == w.shape and (g == w).all()
        if not ok:
            print("FAIL %s: got %s %s, want %s %s" % (name, g.shape, g.tolist(), w.shape, w.tolist()))
            failed += 1
            return
    print("ok   " + name)


def refuse(name, op, inputs, outputs, words, **attrs):
    """the run fails with a message holding every one of words"""
    global failed, count
    count += 1
    got, err = run(name, op, inputs, outputs, **attrs)
    if got is not None or not all(w in err for w in words):
        print("FAIL %s: want a refusal naming %s, got %s" % (name, words, "success" if got is not None else err.strip()))
        failed += 1
        return
    print("ok   %s (refused: %s)" % (name, err.strip().splitlines()[-1][:150]))


x34 = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], np.float32)
check("afe", "ArrayFeatureExtractor", [("x", x34), ("y", np.array([3, 1], np.int64))], [("z", F)],
      [[[4, 2], [8, 6], [12, 10]]])
check("afe_string", "ArrayFeatureExtractor",
      [("x", np.array(["p", "qq", "r"], dtype=object)), ("y", np.array([1, 1, 2], np.int64))], [("z", S)],
      [np.array([["qq", "qq", "r"]], dtype=object)])
# ONNX's node test test_ai_onnx_ml_array_feature_extractor (not in python3-onnx 1.12's data): its x, y and z
check("afe_onnx_node_test", "ArrayFeatureExtractor",
      [("x", np.arange(12, dtype=np.float32).reshape(3, 4)), ("y", np.array([0, 1], np.int64))], [("z", F)],
      [[[0, 1], [4, 5], [8, 9]]])
refuse("afe_bad_index", "ArrayFeatureExtractor", [("x", x34), ("y", np.array([4], np.int64))], [("z", F)],
       ["Y[0] = 4", "outside"])

# (x - offset) * scale
check("scaler", "Scaler", [("x", np.array([[1, 2], [3, 4]], np.float32))], [("y", F)], [[[0, -1.5], [4, 1.5]]],
      offset=[1.0, 3.0], scale=[2.0, 1.5])
check("scaler_int", "Scaler", [("x", np.array([[10, -10]], np.int32))], [("y", F)], [[[4.5, -5.5]]],
      offset=[1.0], scale=[0.5])
refuse("scaler_bad_scale", "Scaler", [("x", x34)], [("y", F)], ["Scaler_0", "scale", "3 values"],
       scale=[1.0, 2.0, 3.0])

# rows: [3, -4, 0] -> MAX 3, L1 7, L2 5; a zero row stays
xn = np.array([[3, -4, 0], [0, 0, 0], [-1, -2, -1]], np.float32)
check("norm_max", "Normalizer", [("x", xn)], [("y", F)], [[[1, -4 / 3, 0], [0, 0, 0], [1, 2, 1]]], norm="MAX")
check("norm_l1", "Normalizer", [("x", xn)], [("y", F)], [[[3 / 7, -4 / 7, 0], [0, 0, 0], [-.25, -.5, -.25]]],
      norm="L1")
check("norm_l2", "Normalizer", [("x", xn)], [("y", F)],
      [[[.6, -.8, 0], [0, 0, 0], [-1 / math.sqrt(6), -2 / math.sqrt(6), -1 / math.sqrt(6)]]], norm="L2")
refuse("norm_bad", "Normalizer", [("x", xn)], [("y", F)], ["Normalizer_0", "norm", "L3"], norm="L3")

xi = np.array([[np.nan, 1], [2, np.nan]], np.float32)
check("imputer_nan", "Imputer", [("x", xi)], [("y", F)], [[[7, 1], [2, 8]]], imputed_value_floats=[7.0, 8.0],
      replaced_value_float=float("nan"))
check("imputer_int", "Imputer", [("x", np.array([3, 0, 3], np.int64))], [("y", I64)], [[-5, 0, -5]],
      imputed_value_int64s=[-5], replaced_value_int64=3)
refuse("imputer_bad_count", "Imputer", [("x", xi)], [("y", F)], ["Imputer_0", "imputed_value_floats", "3 values"],
       imputed_value_floats=[1.0, 2.0, 3.0])
refuse("imputer_wrong_kind", "Imputer", [("x", xi)], [("y", F)], ["Imputer_0", "imputed_value_floats"],
       imputed_value_int64s=[1])

check("ohe", "OneHotEncoder", [("x", np.array([5, 2, 8], np.int64))], [("y", F)],
      [[[0, 1, 0], [1, 0, 0], [0, 0, 0]]], cats_int64s=[2, 5, 7])
check("ohe_float_trunc", "OneHotEncoder", [("x", np.array([2.9, 7.0], np.float32))], [("y", F)],
      [[[1, 0, 0], [0, 0, 1]]], cats_int64s=[2, 5, 7])
check("ohe_str", "OneHotEncoder", [("x", np.array([["b"], ["a"]], dtype=object))], [("y", F)],
      [[[[0, 1]], [[1, 0]]]], cats_strings=["a", "b"])
refuse("ohe_unknown_zeros0", "OneHotEncoder", [("x", np.array([5, 3], np.int64))], [("y", F)],
       ["OneHotEncoder", "X[1]", "zeros = 0"], cats_int64s=[2, 5, 7], zeros=0)

# y = 1*1 + 2*(-1) + 3*0.5 + 0.25 = 0.75; second target 2*1 + 0 + 3*1 - 1 = 4
xl = np.array([[1, 2, 3]], np.float32)
check("linreg", "LinearRegressor", [("x", xl)], [("y", F)], [[[0.75, 4]]], coefficients=[1.0, -1, 0.5, 2, 0, 1],
      intercepts=[0.25, -1.0], targets=2)
check("linreg_int64", "LinearRegressor", [("x", np.array([[1, 2], [-3, 4]], np.int64))], [("y", F)], [[[2], [0.5]]],
      coefficients=[0.5, 0.25], intercepts=[1.0])
check("linreg_logistic", "LinearRegressor", [("x", xl)], [("y", F)], [[[1 / (1 + math.exp(-0.75))]]],
      coefficients=[1.0, -1, 0.5], intercepts=[0.25], post_transform="LOGISTIC")
refuse("linreg_bad_coef", "LinearRegressor", [("x", xl)], [("y", F)], ["LinearRegressor_0", "coefficients", "5 values"],
       coefficients=[1.0, 2, 3, 4, 5], targets=2)
refuse("linreg_bad_post", "LinearRegressor", [("x", xl)], [("y", F)], ["LinearRegressor_0", "post_transform", "CUBE"],
       coefficients=[1.0, 2, 3], post_transform="CUBE")

# LinearClassifier: scores [1*1 + 2*0 + 0.5, 1*0 + 2*1 - 1] = [1.5, 1] -> label 20; softmax of [1.5, 1]
xc = np.array([[1, 2]], np.float32)
e = [math.exp(0.5), 1.0]
check("lincls", "LinearClassifier", [("x", xc)], [("y", I64), ("z", F)], [[20], [[1.5, 1.0]]],
      coefficients=[1.0, 0, 0, 1], intercepts=[0.5, -1.0], classlabels_ints=[20, 10])
check("lincls_softmax_str", "LinearClassifier", [("x", xc)], [("y", S), ("z", F)],
      [np.array(["a"], dtype=object), [[e[0] / sum(e), e[1] / sum(e)]]], coefficients=[1.0, 0, 0, 1],
      intercepts=[0.5, -1.0], classlabels_strings=["a", "b"], post_transform="SOFTMAX")
# binary: s = 1 - 2*0.75 = -0.5 -> label of class 0; Z = [1 - s, s], LOGISTIC: [1 - sig(s), sig(s)]
sig = 1 / (1 + math.exp(0.5))
check("lincls_binary", "LinearClassifier", [("x", xc)], [("y", S), ("z", F)],
      [np.array(["neg"], dtype=object), [[1.5, -0.5]]], coefficients=[1.0, -0.75], classlabels_strings=["neg", "pos"])
check("lincls_binary_logistic", "LinearClassifier", [("x", xc)], [("y", I64), ("z", F)], [[0], [[1 - sig, sig]]],
      coefficients=[1.0, -0.75], classlabels_ints=[0, 1], post_transform="LOGISTIC")
refuse("lincls_bad_labels", "LinearClassifier", [("x", xc)], [("y", I64), ("z", F)],
       ["LinearClassifier_0", "classlabels_ints", "3 labels"], coefficients=[1.0, 0, 0, 1], classlabels_ints=[1, 2, 3])
refuse("lincls_bad_coef", "LinearClassifier", [("x", xc)], [("y", I64), ("z", F)],
       ["LinearClassifier_0", "coefficients", "3 values"], coefficients=[1.0, 0, 0], classlabels_ints=[1, 2, 3])
refuse("lincls_bad_intercepts", "LinearClassifier", [("x", xc)], [("y", I64), ("z", F)],
       ["LinearClassifier_0", "intercepts", "3 values"], coefficients=[1.0, 0, 0, 1], intercepts=[1.0, 2, 3],
       classlabels_ints=[1, 2])
refuse("lincls_bad_post", "LinearClassifier", [("x", xc)], [("y", I64), ("z", F)],
       ["LinearClassifier_0", "post_transform", "SOFTMAXX"], coefficients=[1.0, 0, 0, 1], classlabels_ints=[1, 2],
       post_transform="SOFTMAXX")

check("catmap_s2i", "CategoryMapper", [("x", np.array(["y", "q", "x"], dtype=object))], [("y", I64)], [[2, 0, 1]],
      cats_strings=["x", "y"], cats_int64s=[1, 2], default_int64=0)
check("catmap_i2s", "CategoryMapper", [("x", np.array([2, 5], np.int64))], [("y", S)],
      [np.array(["y", "_Unused"], dtype=object)], cats_strings=["x", "y"], cats_int64s=[1, 2])
refuse("catmap_bad", "CategoryMapper", [("x", np.array([2], np.int64))], [("y", S)],
       ["CategoryMapper_0", "cats_int64s", "cats_strings"], cats_strings=["x", "y"], cats_int64s=[1])

check("featvec", "FeatureVectorizer", [("a", np.array([[1, 2, 3], [4, 5, 6]], np.float32)),
                                       ("b", np.array([[7], [8]], np.float32))], [("y", F)],
      [[[1, 2, 7, 0], [4, 5, 8, 0]]], inputdimensions=[2, 2])
refuse("featvec_bad_dims", "FeatureVectorizer", [("a", np.array([[1.0]], np.float32))], [("y", F)],
       ["FeatureVectorizer_0", "inputdimensions", "2 values"], inputdimensions=[1, 1])
refuse("featvec_mixed", "FeatureVectorizer", [("a", np.array([[1.0]], np.float32)), ("b", np.array([[1]], np.int64))],
       [("y", F)], ["FeatureVectorizer_0", "input 1 is int64"], inputdimensions=[1, 1])

# SVMRegressor, RBF with gamma 1: vectors [0, 0] and [1, 1], x = [1, 0]: both at distance 1 -> k = e^-1;
# y = 2 e^-1 - 1 e^-1 + 0.5
xs = np.array([[1, 0]], np.float32)
check("svr_rbf", "SVMRegressor", [("x", xs)], [("y", F)], [[[math.exp(-1) + 0.5]]], n_supports=2,
      support_vectors=[0.0, 0, 1, 1], coefficients=[2.0, -1.0], rho=[0.5], kernel_type="RBF",
      kernel_params=[1.0, 0.0, 0.0])
# POLY (0.5 x.v + 1)^2 with v = [2, 2]: (1 + 1)^2 = 4 -> 3 * 4 - 1
check("svr_poly", "SVMRegressor", [("x", xs)], [("y", F)], [[[11.0]]], n_supports=1, support_vectors=[2.0, 2],
      coefficients=[3.0], rho=[-1.0], kernel_type="POLY", kernel_params=[0.5, 1.0, 2.0])
check("svr_one_class", "SVMRegressor", [("x", np.array([[1, 0], [0, 0]], np.float32))], [("y", F)], [[[1.0], [-1.0]]],
      coefficients=[1.0, 0], rho=[-0.5], one_class=1)
# SVC, 3 classes of one linear vector each: v0 = [1, 0], v1 = [0, 1], v2 = [1, 1]; x = [2, 1]: k = [2, 1, 3];
# pairs (0,1): c[0][0] k0 + c[0][1] k1 = 2 - 1 = 1 > 0 -> vote 0; (0,2): c[1][0] k0 + c[0][2] k2 = 1 - 3 = -2
# -> vote 2; (1,2): c[1][1] k1 + c[1][2] k2 = 1 - 3 + 0.5 = -1.5 -> vote 2: class 2
check("svc_votes", "SVMClassifier", [("x", np.array([[2, 1]], np.float32))], [("y", S), ("z", F)],
      [np.array(["c"], dtype=object), [[1.0, -2.0, -1.5]]], classlabels_strings=["a", "b", "c"],
      vectors_per_class=[1, 1, 1], support_vectors=[1.0, 0, 0, 1, 1, 1], coefficients=[1.0, -1, -1, 0.5, 1, -1],
      rho=[0.0, 0.0, 0.5], kernel_params=[0.0, 0.0, 0.0])
# binary SVC, NONE: Z = [-s, s] with s = 1 * 2 + 0.5 -> vote class 0
check("svc_binary", "SVMClassifier", [("x", np.array([[2, 1]], np.float32))], [("y", I64), ("z", F)],
      [[3], [[-2.5, 2.5]]], classlabels_ints=[3, 4], vectors_per_class=[1, 1], support_vectors=[1.0, 0, 0, 1],
      coefficients=[1.0, 0], rho=[0.5], kernel_params=[0.0, 0.0, 0.0])
refuse("svc_bad_vpc", "SVMClassifier", [("x", xs)], [("y", I64), ("z", F)],
       ["SVMClassifier_0", "vectors_per_class", "2 values"], classlabels_ints=[3, 4, 5], vectors_per_class=[1, 1],
       support_vectors=[1.0, 0, 0, 1], coefficients=[1.0, 0, 1, 1], rho=[0.5, 1, 1])
refuse("svc_bad_rho", "SVMClassifier", [("x", xs)], [("y", I64), ("z", F)], ["SVMClassifier_0", "rho", "2 values"],
       classlabels_ints=[3, 4], vectors_per_class=[1, 1], support_vectors=[1.0, 0, 0, 1], coefficients=[1.0, 0],
       rho=[0.5, 1])
refuse("svr_bad_kernel", "SVMRegressor", [("x", xs)], [("y", F)], ["SVMRegressor_0", "kernel_type", "GAUSS"],
       n_supports=1, support_vectors=[2.0, 2], coefficients=[3.0], rho=[-1.0], kernel_type="GAUSS")
refuse("svr_bad_sv", "SVMRegressor", [("x", xs)], [("y", F)], ["SVMRegressor_0", "support_vectors", "3 values"],
       n_supports=2, support_vectors=[2.0, 2, 1], coefficients=[3.0, 1], rho=[-1.0])

# one tree: x0 <= 0.5 ? leaf (t0 += 1, t1 += 2) : (x1 < 0 ? leaf (t1 += 4) : leaf (t0 += 8)); NaN goes true at node 0
tree = dict(nodes_treeids=[0, 0, 0, 0, 0], nodes_nodeids=[4, 1, 2, 3, 0], nodes_featureids=[0, 0, 0, 0, 1],
            nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "BRANCH_LT"], nodes_values=[0.5, 0, 0, 0, 0],
            nodes_truenodeids=[1, 0, 0, 0, 2], nodes_falsenodeids=[0, 0, 0, 0, 3],
            nodes_missing_value_tracks_true=[1, 0, 0, 0, 0], target_treeids=[0, 0, 0, 0], target_nodeids=[1, 1, 2, 3],
            target_ids=[0, 1, 1, 0], target_weights=[1.0, 2.0, 4.0, 8.0])
xt = np.array([[0, 5], [1, -1], [1, 1], [np.nan, 0]], np.float32)
check("ter_hand", "TreeEnsembleRegressor", [("x", xt)], [("y", F)], [[[1.5, 2.25], [0, 4.25], [8.5, 0], [1.5, 2.25]]],
      n_targets=2, base_values=[0.5, 0.25], **tree)
refuse("ter_bad_child", "TreeEnsembleRegressor", [("x", xt)], [("y", F)], ["TreeEnsembleRegressor_0", "nodes_truenodeids"],
       n_targets=2, **dict(tree, nodes_truenodeids=[9, 0, 0, 0, 2]))
refuse("ter_bad_mode", "TreeEnsembleRegressor", [("x", xt)], [("y", F)], ["TreeEnsembleRegressor_0", "nodes_modes", "BRANCH_XX"],
       n_targets=2, **dict(tree, nodes_modes=["BRANCH_XX", "LEAF", "LEAF", "LEAF", "BRANCH_LT"]))
refuse("ter_bad_target", "TreeEnsembleRegressor", [("x", xt)], [("y", F)], ["TreeEnsembleRegressor_0", "target_ids"],
       n_targets=1, **tree)
refuse("ter_bad_agg", "TreeEnsembleRegressor", [("x", xt)], [("y", F)], ["aggregate_function", "MEDIAN"], n_targets=2,
       aggregate_function="MEDIAN", **tree)

# the same tree as a 3-class classifier: leaves add to classes 0/1, 1, 0; base values [0, 0, 0.25] give
# class 2 a score everywhere; labels by the highest score
ctree = {(("class" + k[6:]) if k.startswith("target") else k): v for k, v in tree.items()}
check("tec_hand", "TreeEnsembleClassifier", [("x", xt[:3])], [("y", S), ("z", F)],
      [np.array(["b", "b", "a"], dtype=object), [[1, 2, 0.25], [0, 4, 0.25], [8, 0, 0.25]]],
      classlabels_strings=["a", "b", "c"], base_values=[0.0, 0.0, 0.25], **ctree)
refuse("tec_bad_class", "TreeEnsembleClassifier", [("x", xt)], [("y", I64), ("z", F)],
       ["TreeEnsembleClassifier_0", "class_ids", "outside the 1 classes"], classlabels_int64s=[4], **ctree)
refuse("tec_bad_base", "TreeEnsembleClassifier", [("x", xt)], [("y", I64), ("z", F)],
       ["TreeEnsembleClassifier_0", "base_values", "2 values"], classlabels_int64s=[4, 5, 6], base_values=[1.0, 2.0],
       **ctree)

# MaxRoiPool: a 4 x 4 image 0..15, the region x 1..3 (3 wide), y 0..1 in 1 x 2 bins of 1.5 columns: bin 0
# covers [floor(0), ceil(1.5)) = columns 1, 2, bin 1 [floor(1.5), ceil(3)) = columns 2, 3; rows 0..1 -> 6 and 7
# (double X)
xr = np.arange(16, dtype=np.float64).reshape(1, 1, 4, 4)
check("maxroipool_double", "MaxRoiPool", [("x", xr), ("rois", np.array([[0, 1, 0, 3, 1]], np.float64))],
      [("y", TensorProto.DOUBLE)], [np.array([[[[6, 7]]]], np.float64)], domain="", pooled_shape=[1, 2])
refuse("maxroipool_bad_batch", "MaxRoiPool", [("x", xr), ("rois", np.array([[1, 1, 0, 3, 1]], np.float64))],
       [("y", TensorProto.DOUBLE)], ["MaxRoiPool_0", "batch 1"], domain="", pooled_shape=[1, 2])
refuse("maxroipool_bad_shape", "MaxRoiPool", [("x", xr), ("rois", np.array([[0, 1, 0, 3, 1]], np.float64))],
       [("y", TensorProto.DOUBLE)], ["MaxRoiPool_0", "pooled_shape"], domain="", pooled_shape=[2])

print("%d of %d hand-worked cases pass" % (count - failed, count))
sys.exit(1 if failed else 0)
