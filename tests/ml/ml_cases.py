"""One-node ai.onnx.ml models (several attribute variants per operator) and
their inputs, shared by ml_ort.py (against ONNX Runtime) and
test_ml_hand.py (hand-worked values)."""
import numpy as np
from onnx import TensorProto, helper

ML = "ai.onnx.ml"
TP = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("float64"): TensorProto.DOUBLE,
      np.dtype("int64"): TensorProto.INT64, np.dtype("int32"): TensorProto.INT32}


def elem(a):
    return TensorProto.STRING if a.dtype.kind in "OUS" else TP[a.dtype]


def one_node(op, inputs, outputs, domain=ML, **attrs):
    """inputs: [(name, array)]; outputs: [(name, TensorProto type)]; a model whose
    inputs are graph inputs (an int64 index input too: ORT and switchyard both
    take it at run time)"""
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], domain=domain, name=op + "_0",
                            **attrs)
    gi = [helper.make_tensor_value_info(n, elem(a), list(a.shape)) for n, a in inputs]
    go = [helper.make_tensor_value_info(n, t, None) for n, t in outputs]
    g = helper.make_graph([node], op.lower(), gi, go)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)],
                          producer_name="switchyard-tests")
    m.ir_version = 8
    return m


F, I64, STR = TensorProto.FLOAT, TensorProto.INT64, TensorProto.STRING
rng = np.random.default_rng(7)


def f32(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def forest(n_trees, n_features, n_targets, seed, modes=("BRANCH_LEQ",), leaf_tree=False, multi=False,
           prefix="target", positive=False, only=None):
    """tree attributes: full trees of depth 2 (3 inner nodes, 4 leaves, node ids shuffled so that a
    tree's root is seldom node 0), plus one tree that is a single leaf when leaf_tree; every leaf
    weighs one target, two when multi"""
    g = np.random.default_rng(seed)
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
                         "target_treeids", "target_nodeids", "target_ids", "target_weights")}
    for t in range(n_trees):
        ids = [int(v) for v in g.permutation(7)]  # positions 0..6 of a heap -> node ids
        for pos in range(7):
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(ids[pos])
            if pos < 3:
                a["nodes_featureids"].append(int(g.integers(n_features)))
                a["nodes_modes"].append(modes[int(g.integers(len(modes)))])
                a["nodes_values"].append(float(np.float32(g.uniform(-1, 1))))
                a["nodes_truenodeids"].append(ids[2 * pos + 1])
                a["nodes_falsenodeids"].append(ids[2 * pos + 2])
                a["nodes_missing_value_tracks_true"].append(int(g.integers(2)))
            else:
                a["nodes_featureids"].append(0)
                a["nodes_modes"].append("LEAF")
                a["nodes_values"].append(0.0)
                a["nodes_truenodeids"].append(0)
                a["nodes_falsenodeids"].append(0)
                a["nodes_missing_value_tracks_true"].append(0)
                for k in range(2 if multi else 1):
                    a["target_treeids"].append(t)
                    a["target_nodeids"].append(ids[pos])
                    a["target_ids"].append((int(g.integers(n_targets)) + k) % n_targets if only is None
                                           else only[int(g.integers(len(only)))])
                    a["target_weights"].append(float(np.float32(g.uniform(0 if positive else -2, 2))))
    if leaf_tree:
        t = n_trees
        for k, v in (("nodes_treeids", t), ("nodes_nodeids", 0), ("nodes_featureids", 0), ("nodes_modes", "LEAF"),
                     ("nodes_values", 0.0), ("nodes_truenodeids", 0), ("nodes_falsenodeids", 0),
                     ("nodes_missing_value_tracks_true", 0)):
            a[k].append(v)
        for k, v in (("target_treeids", t), ("target_nodeids", 0), ("target_ids", 0), ("target_weights", 0.75)):
            a[k].append(v)
    if prefix != "target":
        a = {(prefix + k[6:] if k.startswith("target") else k): v for k, v in a.items()}
    return a


def cases():
    """[(name, model, [(input name, array)])]"""
    out = []

    def add(name, op, inputs, outputs, **attrs):
        out.append((name, one_node(op, inputs, outputs, **attrs), inputs))

    # ArrayFeatureExtractor: float, int64, int32, string, rank 3, a 1-D X
    add("afe_float", "ArrayFeatureExtractor", [("x", f32(3, 4)), ("y", np.array([0, 2, 3], np.int64))], [("z", F)])
    add("afe_int64_rank3", "ArrayFeatureExtractor",
        [("x", np.arange(24, dtype=np.int64).reshape(2, 3, 4) - 7), ("y", np.array([3, 3, 0], np.int64))],
        [("z", TensorProto.INT64)])
    add("afe_int32", "ArrayFeatureExtractor", [("x", np.arange(6, dtype=np.int32).reshape(2, 3)),
                                               ("y", np.array([1], np.int64))], [("z", TensorProto.INT32)])
    add("afe_string", "ArrayFeatureExtractor",
        [("x", np.array([["a", "bb", ""], ["ccc", "d", "ee"]], dtype=object)), ("y", np.array([2, 0, 2], np.int64))],
        [("z", TensorProto.STRING)])
    add("afe_1d", "ArrayFeatureExtractor", [("x", f32(5)), ("y", np.array([4, 0], np.int64))], [("z", F)])

    # Scaler: per-feature and single offset/scale; int64 and double inputs
    add("scaler_perfeat", "Scaler", [("x", f32(4, 3))], [("y", F)], offset=[0.5, -1.0, 2.0], scale=[2.0, 0.25, -3.0])
    add("scaler_single", "Scaler", [("x", f32(2, 5))], [("y", F)], offset=[1.5], scale=[0.5])
    add("scaler_int64", "Scaler", [("x", np.array([[1, -2], [30, 4]], np.int64))], [("y", F)], offset=[1.0, 2.0],
        scale=[0.5, 3.0])
    add("scaler_double", "Scaler", [("x", f32(3, 2).astype(np.float64))], [("y", F)], offset=[0.1, 0.2],
        scale=[10.0, -1.0])

    # Normalizer: MAX, L1, L2 with negative values and an all-zero row; int32
    xz = f32(4, 3)
    xz[2] = 0
    for norm in ("MAX", "L1", "L2"):
        add("normalizer_" + norm.lower(), "Normalizer", [("x", xz)], [("y", F)], norm=norm)
    add("normalizer_l2_int32", "Normalizer", [("x", np.array([[3, -4], [0, 0], [1, 1]], np.int32))], [("y", F)],
        norm="L2")
    add("normalizer_l1_1d", "Normalizer", [("x", f32(6))], [("y", F)], norm="L1")

    # Imputer: NaN per feature, a single value, int64 with -1
    xn = f32(3, 4)
    xn[0, 1] = xn[2, 3] = xn[1, 0] = np.nan
    add("imputer_nan", "Imputer", [("x", xn)], [("y", F)], imputed_value_floats=[1.0, 2.0, 3.0, 4.0],
        replaced_value_float=float("nan"))
    xq = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]], np.float32)
    add("imputer_zero_single", "Imputer", [("x", xq)], [("y", F)], imputed_value_floats=[9.5], replaced_value_float=0.0)
    add("imputer_int64", "Imputer", [("x", np.array([[-1, 5, -1], [7, -1, 2]], np.int64))], [("y", TensorProto.INT64)],
        imputed_value_int64s=[10, 20, 30], replaced_value_int64=-1)

    # OneHotEncoder: int64 categories with an unknown, strings, floats cast to integers
    add("ohe_int64", "OneHotEncoder", [("x", np.array([[1, 4, 9], [4, 0, 1]], np.int64))], [("y", F)],
        cats_int64s=[0, 1, 4, 7], zeros=1)
    add("ohe_string", "OneHotEncoder", [("x", np.array(["cat", "dog", "eel", "cat"], dtype=object))], [("y", F)],
        cats_strings=["dog", "cat", "bird"])
    add("ohe_float", "OneHotEncoder", [("x", np.array([[2.0, 3.0], [5.0, 2.0]], np.float32))], [("y", F)],
        cats_int64s=[2, 3, 5])

    # LinearRegressor: 1 and 3 targets, with and without intercepts, post_transforms
    add("linreg_1", "LinearRegressor", [("x", f32(5, 3))], [("y", F)], coefficients=[0.5, -1.25, 2.0],
        intercepts=[0.75])
    c3 = [float(v) for v in f32(9)]
    add("linreg_3", "LinearRegressor", [("x", f32(4, 3))], [("y", F)], coefficients=c3, intercepts=[0.1, -0.2, 0.3],
        targets=3)
    add("linreg_3_nointercept", "LinearRegressor", [("x", f32(4, 3))], [("y", F)], coefficients=c3, targets=3)
    add("linreg_softmax", "LinearRegressor", [("x", f32(4, 3))], [("y", F)], coefficients=c3,
        intercepts=[0.1, -0.2, 0.3], targets=3, post_transform="SOFTMAX")
    add("linreg_logistic", "LinearRegressor", [("x", f32(4, 3))], [("y", F)], coefficients=c3, targets=3,
        post_transform="LOGISTIC")
    # LinearClassifier: 3 classes (int and string labels, each post_transform
    # but PROBIT, whose ONNX Runtime form is an approximation), one class with
    # two labels (binary: Z = [1 - p, p])
    c9 = [float(v) for v in f32(9)]
    X = f32(6, 3)
    for post in ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO"):
        add("lincls_int_" + post.lower(), "LinearClassifier", [("x", X)], [("y", I64), ("z", F)], coefficients=c9,
            intercepts=[0.2, -0.1, 0.0], classlabels_ints=[10, 20, 30], post_transform=post)
    add("lincls_str_softmax", "LinearClassifier", [("x", X)], [("y", STR), ("z", F)], coefficients=c9,
        intercepts=[0.2, -0.1, 0.0], classlabels_strings=["setosa", "versicolor", "virginica"],
        post_transform="SOFTMAX", multi_class=1)
    for post in ("NONE", "LOGISTIC", "SOFTMAX"):
        add("lincls_binary_int_" + post.lower(), "LinearClassifier", [("x", X)], [("y", I64), ("z", F)],
            coefficients=c9[:3], intercepts=[0.1], classlabels_ints=[-1, 7], post_transform=post)
    add("lincls_binary_str", "LinearClassifier", [("x", X)], [("y", STR), ("z", F)], coefficients=c9[:3],
        intercepts=[0.1], classlabels_strings=["no", "yes"])
    add("lincls_double_1d", "LinearClassifier", [("x", X[0].astype(np.float64))], [("y", I64), ("z", F)],
        coefficients=c9, intercepts=[0.2, -0.1, 0.0], classlabels_ints=[0, 1, 2])

    # CategoryMapper both ways, with unknowns and defaults
    add("catmap_str2int", "CategoryMapper", [("x", np.array([["a", "zz"], ["c", "b"]], dtype=object))], [("y", I64)],
        cats_strings=["a", "b", "c"], cats_int64s=[7, 8, 9], default_int64=-5)
    add("catmap_int2str", "CategoryMapper", [("x", np.array([9, 1, 7, 8], np.int64))], [("y", STR)],
        cats_strings=["a", "b", "c"], cats_int64s=[7, 8, 9], default_string="none")
    add("catmap_int2str_default", "CategoryMapper", [("x", np.array([[3], [8]], np.int64))], [("y", STR)],
        cats_strings=["a", "b"], cats_int64s=[7, 8])

    # FeatureVectorizer: mixed types, a 1-D input, truncation and zero padding
    # (ONNX Runtime binds one type to all inputs, as the schema's single T1 says)
    add("featvec", "FeatureVectorizer", [("a", f32(2, 3)), ("b", f32(2, 2)), ("c", f32(2, 1))], [("y", F)],
        inputdimensions=[3, 2, 1])
    add("featvec_int64_1d", "FeatureVectorizer", [("a", np.array([4, 5, 6], np.int64)),
                                                  ("b", np.array([-1], np.int64))], [("y", F)], inputdimensions=[3, 1])
    add("featvec_trunc_pad", "FeatureVectorizer", [("a", f32(3, 4)), ("b", f32(3, 1))], [("y", F)],
        inputdimensions=[2, 3])
    # SVMRegressor (ONNX Runtime: float X only): liblinear, every kernel, one-class
    sv = [float(v) for v in f32(4, 3).reshape(-1)]
    X = f32(5, 3)
    add("svr_linear", "SVMRegressor", [("x", X)], [("y", F)], coefficients=[0.5, -0.25, 1.0], rho=[0.3],
        kernel_params=[0.0, 0.0, 0.0])
    for kt, kp in (("LINEAR", [0.0, 0.0, 0.0]), ("RBF", [0.5, 0.0, 0.0]), ("POLY", [0.3, 1.0, 3.0]),
                   ("SIGMOID", [0.2, -0.1, 0.0])):
        add("svr_" + kt.lower(), "SVMRegressor", [("x", X)], [("y", F)], n_supports=4, support_vectors=sv,
            coefficients=[0.7, -0.4, 0.2, -0.9], rho=[0.1], kernel_type=kt, kernel_params=kp)
    add("svr_one_class", "SVMRegressor", [("x", X)], [("y", F)], n_supports=4, support_vectors=sv,
        coefficients=[0.25, 0.25, 0.25, 0.25], rho=[-0.5], kernel_type="RBF", kernel_params=[0.5, 0.0, 0.0],
        one_class=1)

    # SVMClassifier: SVC with 3 classes (2, 1, 2 vectors) with and without probabilities, binary SVCs, liblinear
    sv5 = [float(v) for v in f32(5, 3).reshape(-1)]
    co3 = [float(v) for v in f32(2 * 5)]
    X = f32(6, 3)
    for post in ("NONE", "SOFTMAX", "LOGISTIC"):
        add("svc_rbf3_" + post.lower(), "SVMClassifier", [("x", X)], [("y", I64), ("z", F)],
            classlabels_ints=[0, 1, 2], vectors_per_class=[2, 1, 2], support_vectors=sv5, coefficients=co3,
            rho=[0.1, -0.2, 0.05], kernel_type="RBF", kernel_params=[0.4, 0.0, 0.0], post_transform=post)
    add("svc_rbf3_proba_str", "SVMClassifier", [("x", X)], [("y", STR), ("z", F)],
        classlabels_strings=["a", "b", "c"], vectors_per_class=[2, 1, 2], support_vectors=sv5, coefficients=co3,
        rho=[0.1, -0.2, 0.05], prob_a=[-1.5, -2.0, -0.8], prob_b=[0.1, -0.05, 0.2], kernel_type="RBF",
        kernel_params=[0.4, 0.0, 0.0])
    add("svc_poly3_proba_softmax", "SVMClassifier", [("x", X)], [("y", I64), ("z", F)],
        classlabels_ints=[4, 5, 6], vectors_per_class=[2, 1, 2], support_vectors=sv5, coefficients=co3,
        rho=[0.1, -0.2, 0.05], prob_a=[-1.5, -2.0, -0.8], prob_b=[0.1, -0.05, 0.2], kernel_type="POLY",
        kernel_params=[0.5, 1.0, 2.0], post_transform="SOFTMAX")
    for post in ("NONE", "LOGISTIC"):
        add("svc_bin_" + post.lower(), "SVMClassifier", [("x", X)], [("y", I64), ("z", F)],
            classlabels_ints=[-1, 1], vectors_per_class=[2, 3], support_vectors=sv5, coefficients=co3[:5], rho=[0.2],
            kernel_type="SIGMOID", kernel_params=[0.3, 0.1, 0.0], post_transform=post)
    add("svc_bin_proba", "SVMClassifier", [("x", X)], [("y", STR), ("z", F)], classlabels_strings=["neg", "pos"],
        vectors_per_class=[2, 3], support_vectors=sv5, coefficients=co3[:5], rho=[0.2], prob_a=[-1.2], prob_b=[0.3],
        kernel_type="LINEAR", kernel_params=[0.0, 0.0, 0.0])
    add("svc_liblinear3", "SVMClassifier", [("x", X)], [("y", I64), ("z", F)], classlabels_ints=[7, 8, 9],
        coefficients=[float(v) for v in f32(9)], rho=[0.25], kernel_params=[0.0, 0.0, 0.0])
    add("svc_liblinear_bin", "SVMClassifier", [("x", X)], [("y", I64), ("z", F)], classlabels_ints=[0, 1],
        coefficients=[float(v) for v in f32(6)], rho=[0.1], post_transform="LOGISTIC", kernel_params=[0.0, 0.0, 0.0])
    # TreeEnsembleRegressor: every aggregate, base values, several targets per leaf, a single-leaf
    # tree, every branch mode, NaN with missing_value_tracks_true, double thresholds (opset 3)
    X = f32(8, 4)
    X[1, 0] = X[3, 2] = X[5, 1] = np.nan
    allm = ("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ")
    add("ter_sum1", "TreeEnsembleRegressor", [("x", X)], [("y", F)], n_targets=1, base_values=[0.5],
        **forest(3, 4, 1, 1))
    for agg in ("AVERAGE", "MIN", "MAX", "SUM"):
        add("ter_%s3_multi" % agg.lower(), "TreeEnsembleRegressor", [("x", X)], [("y", F)], n_targets=3,
            aggregate_function=agg, base_values=[0.1, -0.2, 0.3], **forest(4, 4, 3, 2, modes=allm, multi=True))
    add("ter_leaf_tree", "TreeEnsembleRegressor", [("x", X)], [("y", F)], n_targets=2,
        **forest(2, 4, 2, 3, leaf_tree=True))
    add("ter_softmax", "TreeEnsembleRegressor", [("x", X)], [("y", F)], n_targets=3, post_transform="SOFTMAX",
        **forest(3, 4, 3, 4))
    add("ter_logistic_1", "TreeEnsembleRegressor", [("x", X)], [("y", F)], n_targets=1, post_transform="LOGISTIC",
        **forest(3, 4, 1, 5))
    ft = forest(3, 4, 2, 6, modes=allm)
    nv = ft.pop("nodes_values")
    tw = ft.pop("target_weights")
    add("ter_as_tensor", "TreeEnsembleRegressor", [("x", X.astype(np.float64))], [("y", F)], n_targets=2,
        nodes_values_as_tensor=helper.make_tensor("v", TensorProto.DOUBLE, [len(nv)], nv),
        target_weights_as_tensor=helper.make_tensor("w", TensorProto.DOUBLE, [len(tw)], tw), **ft)
    # TreeEnsembleClassifier: 3 classes (int / string labels, base values, post_transforms, several
    # classes per leaf), two classes with weights for both (random forests), for one class only
    # (gradient boosting: one base value, LOGISTIC or NONE; all-positive weights)
    for post in ("NONE", "SOFTMAX", "LOGISTIC"):
        add("tec3_" + post.lower(), "TreeEnsembleClassifier", [("x", X)], [("y", I64), ("z", F)],
            classlabels_int64s=[3, 5, 7], post_transform=post, base_values=[0.1, 0.2, -0.3],
            **forest(4, 4, 3, 11, modes=allm, multi=True, prefix="class"))
    add("tec3_str_nobase", "TreeEnsembleClassifier", [("x", X)], [("y", STR), ("z", F)],
        classlabels_strings=["r", "g", "b"], **forest(3, 4, 3, 12, prefix="class", positive=True))
    add("tec2_rf", "TreeEnsembleClassifier", [("x", X)], [("y", I64), ("z", F)], classlabels_int64s=[0, 1],
        **forest(3, 4, 2, 13, prefix="class", positive=True, multi=True))
    add("tec2_rf_str_softmax", "TreeEnsembleClassifier", [("x", X)], [("y", STR), ("z", F)],
        classlabels_strings=["no", "yes"], post_transform="SOFTMAX",
        **forest(3, 4, 2, 14, prefix="class", multi=True))
    for post in ("LOGISTIC", "NONE"):
        add("tec2_gb_" + post.lower(), "TreeEnsembleClassifier", [("x", X)], [("y", I64), ("z", F)],
            classlabels_int64s=[0, 1], post_transform=post, base_values=[0.2],
            **forest(3, 4, 2, 15, prefix="class", only=[0]))
    add("tec2_gb_nobase", "TreeEnsembleClassifier", [("x", X)], [("y", I64), ("z", F)],
        classlabels_int64s=[10, 20], post_transform="LOGISTIC", **forest(3, 4, 2, 16, prefix="class", only=[0]))
    add("tec2_one_class_positive", "TreeEnsembleClassifier", [("x", X)], [("y", I64), ("z", F)],
        classlabels_int64s=[0, 1], **forest(3, 4, 2, 17, prefix="class", only=[1], positive=True))
    # MaxRoiPool (default domain): regions inside, partly outside, reversed (1 x 1), half-way corners
    Xi = f32(2, 3, 8, 10)
    rois = np.array([[0, 0, 0, 9, 7], [1, 2.5, 1.5, 6.5, 5.4], [0, 7, 5, 14, 12], [1, 5, 5, 2, 2], [1, 0, 0, 0, 0]],
                    np.float32)
    add("maxroipool", "MaxRoiPool", [("x", Xi), ("rois", rois)], [("y", F)], domain="", pooled_shape=[2, 3])
    r2 = rois.copy()
    r2[:, 1:] *= 2
    add("maxroipool_scale", "MaxRoiPool", [("x", Xi), ("rois", r2)], [("y", F)], domain="", pooled_shape=[3, 2],
        spatial_scale=0.5)
    add("maxroipool_4x4", "MaxRoiPool", [("x", Xi), ("rois", rois)], [("y", F)], domain="", pooled_shape=[4, 4])
    # a pipeline as sklearn-onnx writes one (Imputer -> Scaler -> Normalizer -> ArrayFeatureExtractor ->
    # LinearClassifier with string labels, and a TreeEnsembleClassifier beside it on the scaled features)
    Xp = f32(7, 4)
    Xp[2, 1] = Xp[5, 3] = np.nan
    nodes = [
        helper.make_node("Imputer", ["x"], ["imp"], domain=ML, name="imputer", imputed_value_floats=[0.5, -0.5, 1.0, 0.0],
                         replaced_value_float=float("nan")),
        helper.make_node("Scaler", ["imp"], ["sc"], domain=ML, name="scaler", offset=[0.1, 0.2, -0.3, 0.0],
                         scale=[1.5, 0.5, 2.0, 1.0]),
        helper.make_node("Normalizer", ["sc"], ["nm"], domain=ML, name="normalizer", norm="L2"),
        helper.make_node("ArrayFeatureExtractor", ["nm", "cols"], ["sel"], domain=ML, name="select"),
        helper.make_node("LinearClassifier", ["sel"], ["label", "prob"], domain=ML, name="logreg",
                         coefficients=[float(v) for v in f32(9)], intercepts=[0.1, 0.0, -0.1],
                         classlabels_strings=["setosa", "versicolor", "virginica"], post_transform="SOFTMAX"),
        helper.make_node("TreeEnsembleClassifier", ["sc"], ["tlabel", "tprob"], domain=ML, name="forest",
                         classlabels_int64s=[0, 1, 2], **forest(3, 4, 3, 21, prefix="class", positive=True)),
    ]
    g = helper.make_graph(nodes, "pipeline",
                          [helper.make_tensor_value_info("x", F, [7, 4]), helper.make_tensor_value_info("cols", I64, [3])],
                          [helper.make_tensor_value_info(n, t, None) for n, t in
                           (("label", STR), ("prob", F), ("tlabel", I64), ("tprob", F))])
    pm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])
    pm.ir_version = 8
    out.append(("pipeline", pm, [("x", Xp), ("cols", np.array([0, 2, 3], np.int64))]))
    return out
