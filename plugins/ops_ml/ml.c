/*
 * ops_ml: operators of the ai.onnx.ml domain, cpu_ref kernels.
 *
 *   Binarizer (1)      y = x > threshold ? 1 : 0 (float types)
 *   TreeEnsemble (5)   tree ensembles for regression and classification
 *                      scores: every tree walks from its root (node modes
 *                      BRANCH_LEQ, LT, GTE, GT, EQ, NEQ, MEMBER; NaN goes
 *                      the true way where nodes_missing_value_tracks_true
 *                      says so) to a leaf that adds its weight to its
 *                      target; targets aggregate by SUM, AVERAGE, MIN or
 *                      MAX, then post_transform NONE, SOFTMAX, LOGISTIC,
 *                      SOFTMAX_ZERO or PROBIT
 *
 *   LabelEncoder (2, 4) keys to values, strings or numbers (label_encoder.c)
 *   ArrayFeatureExtractor, Scaler, Normalizer, Imputer, OneHotEncoder,
 *   LinearRegressor (ml_feat.c); LinearClassifier, CategoryMapper,
 *   FeatureVectorizer (ml_linear.c); SVMRegressor, SVMClassifier
 *   (ml_svm.c); TreeEnsembleRegressor / Classifier 1 and 3 on this file's
 *   tree walker (ml_tree.c)
 *
 * and TfIdfVectorizer of the default domain on token ids (tfidf.c).
 */
#include "ml_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define ML "ai.onnx.ml"

/* ======================================================================== */
/* Binarizer                                                                */
/* ======================================================================== */

static sy_status *infer_binarizer(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!sy_dt_is_float(x->dtype) && !sy_dt_is_int(x->dtype))
        return ERR(SY_ERR_TYPE, "X must be numeric, got %s", sy_dt_name(x->dtype));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *prepare_binarizer(sy_node *n, void **state)
{
    double *thr = malloc(sizeof *thr);
    if (!thr)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    *thr = sy_attr_float_or(H, n, "threshold", 0.0f);
    *state = thr;
    return NULL;
}

static sy_status *run_binarizer(void *state, const sy_kernel_io *io)
{
    double thr = *(const double *)state;
    const sy_tensor *x = io->inputs[0];
    int64_t n = sy_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        double v = sy_load_f64(x->data, x->dtype, (size_t)i);
        sy_store_f64(io->outputs[0]->data, x->dtype, (size_t)i, v > thr ? 1.0 : 0.0);
    }
    return NULL;
}

/* ======================================================================== */
/* TreeEnsemble                                                             */
/* ======================================================================== */

enum { M_LEQ, M_LT, M_GTE, M_GT, M_EQ, M_NEQ, M_MEMBER };
enum { AGG_AVERAGE, AGG_SUM, AGG_MIN, AGG_MAX };
/* the post_transform codes of ml_internal.h */
enum { PT_NONE = ML_PT_NONE, PT_SOFTMAX = ML_PT_SOFTMAX, PT_LOGISTIC = ML_PT_LOGISTIC, PT_SOFTMAX_ZERO = ML_PT_SOFTMAX_ZERO,
       PT_PROBIT = ML_PT_PROBIT };


void ml_te_free(void *p)
{
    te_model *m = p;
    if (!m)
        return;
    free(m->owned);
    free(m->base);
    free(m->leaf_off);
    free(m->mode);
    free(m->split);
    free(m->weight);
    free(m->set_off);
    free(m->set_len);
    free(m->sets);
    free(m);
}

static bool ints_attr(const sy_node *n, const char *name, const int64_t **v, size_t *c)
{
    return H->attr_ints(n, name, v, c);
}

/* a float-typed attribute tensor as doubles (n values expected; -1 any) */
static sy_status *tensor_doubles(const sy_node *n, const char *name, int64_t want, double **out, int64_t *count)
{
    const sy_tensor *t = NULL;
    if (!H->attr_tensor(n, name, &t) || !t)
        return ERR(SY_ERR_INVALID_MODEL, "attribute %s (tensor) is required", name);
    if (!sy_dt_is_float(t->dtype) || !t->data)
        return ERR(SY_ERR_INVALID_MODEL, "attribute %s must be a float tensor with data", name);
    int64_t k = sy_tensor_numel(t);
    if (want >= 0 && k != want)
        return ERR(SY_ERR_INVALID_MODEL, "attribute %s has %lld values, expected %lld", name, (long long)k,
                   (long long)want);
    *out = malloc((size_t)(k ? k : 1) * sizeof **out);
    if (!*out)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t i = 0; i < k; i++)
        (*out)[i] = sy_load_f64(t->data, t->dtype, (size_t)i);
    if (count)
        *count = k;
    return NULL;
}

static sy_status *te_build(const sy_node *n, int64_t n_features, te_model **out)
{
    te_model *m = calloc(1, sizeof *m);
    if (!m)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = NULL;
    size_t c[9];
    const char *req[] = {"nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs",
                         "nodes_falseleafs"};
    const int64_t **dst[] = {&m->feat, &m->tnode, &m->fnode, &m->tleaf, &m->fleaf};
    for (int i = 0; i < 5 && !st; i++)
        if (!ints_attr(n, req[i], dst[i], &c[i]))
            st = ERR(SY_ERR_INVALID_MODEL, "attribute %s (ints) is required", req[i]);
    size_t n_roots = 0, n_lt = 0, n_miss = 0;
    if (!st && !ints_attr(n, "tree_roots", &m->roots, &n_roots))
        st = ERR(SY_ERR_INVALID_MODEL, "attribute tree_roots (ints) is required");
    if (!st && !ints_attr(n, "leaf_targetids", &m->ltarget, &n_lt))
        st = ERR(SY_ERR_INVALID_MODEL, "attribute leaf_targetids (ints) is required");
    if (st)
        goto fail;
    m->n_nodes = (int64_t)c[0];
    for (int i = 1; i < 5 && !st; i++)
        if ((int64_t)c[i] != m->n_nodes)
            st = ERR(SY_ERR_INVALID_MODEL, "%s has %zu values, nodes_featureids %lld", req[i], c[i], (long long)m->n_nodes);
    if (!st && ints_attr(n, "nodes_missing_value_tracks_true", &m->missing, &n_miss) && (int64_t)n_miss != m->n_nodes)
        st = ERR(SY_ERR_INVALID_MODEL, "nodes_missing_value_tracks_true has %zu values, expected %lld", n_miss,
                 (long long)m->n_nodes);
    if (st)
        goto fail;
    if (!n_miss)
        m->missing = NULL;
    m->n_trees = (int64_t)n_roots;
    m->n_leaves = (int64_t)n_lt;
    m->n_targets = sy_attr_int_or(H, n, "n_targets", 0);
    m->n_features = n_features;
    m->agg = (int32_t)sy_attr_int_or(H, n, "aggregate_function", AGG_SUM);
    m->post = (int32_t)sy_attr_int_or(H, n, "post_transform", PT_NONE);
    if (m->n_targets <= 0 || m->n_targets > (1 << 24))
        st = ERR(SY_ERR_INVALID_MODEL, "n_targets must be in [1, 2^24], got %lld", (long long)m->n_targets);
    else if (m->agg < AGG_AVERAGE || m->agg > AGG_MAX)
        st = ERR(SY_ERR_INVALID_MODEL, "aggregate_function must be 0..3, got %d", (int)m->agg);
    else if (m->post < PT_NONE || m->post > PT_PROBIT)
        st = ERR(SY_ERR_INVALID_MODEL, "post_transform must be 0..4, got %d", (int)m->post);
    if (!st)
        st = tensor_doubles(n, "nodes_splits", m->n_nodes, &m->split, NULL);
    if (!st)
        st = tensor_doubles(n, "leaf_weights", m->n_leaves, &m->weight, NULL);
    if (st)
        goto fail;
    {
        const sy_tensor *mt = NULL;
        if (!H->attr_tensor(n, "nodes_modes", &mt) || !mt || !mt->data || mt->dtype != SY_DT_UINT8 ||
            sy_tensor_numel(mt) != m->n_nodes) {
            st = ERR(SY_ERR_INVALID_MODEL, "nodes_modes must be a uint8 tensor of %lld values", (long long)m->n_nodes);
            goto fail;
        }
        m->mode = malloc((size_t)(m->n_nodes ? m->n_nodes : 1));
        m->set_off = calloc((size_t)(m->n_nodes ? m->n_nodes : 1), sizeof *m->set_off);
        m->set_len = calloc((size_t)(m->n_nodes ? m->n_nodes : 1), sizeof *m->set_len);
        if (!m->mode || !m->set_off || !m->set_len) {
            st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
            goto fail;
        }
        memcpy(m->mode, mt->data, (size_t)m->n_nodes);
    }
    /* membership sets: the values of each MEMBER node in order, NaN-separated */
    int64_t n_members = 0;
    for (int64_t i = 0; i < m->n_nodes; i++) {
        if (m->mode[i] > M_MEMBER) {
            st = ERR(SY_ERR_INVALID_MODEL, "nodes_modes[%lld] = %u is not a known mode (0..6)", (long long)i, m->mode[i]);
            goto fail;
        }
        n_members += m->mode[i] == M_MEMBER;
    }
    if (n_members) {
        int64_t nv = 0;
        st = tensor_doubles(n, "membership_values", -1, &m->sets, &nv);
        if (st)
            goto fail;
        int64_t pos = 0;
        for (int64_t i = 0; i < m->n_nodes; i++) {
            if (m->mode[i] != M_MEMBER)
                continue;
            if (pos > nv) {
                st = ERR(SY_ERR_INVALID_MODEL, "membership_values has fewer sets than the %lld BRANCH_MEMBER nodes",
                         (long long)n_members);
                goto fail;
            }
            m->set_off[i] = pos;
            while (pos < nv && !isnan(m->sets[pos]))
                pos++;
            m->set_len[i] = pos - m->set_off[i];
            pos++; /* the NaN separator */
        }
    }
    /* references stay inside the tables */
    for (int64_t i = 0; i < m->n_nodes; i++) {
        if (m->feat[i] < 0 || m->feat[i] >= n_features) {
            st = ERR(SY_ERR_INVALID_MODEL, "nodes_featureids[%lld] = %lld is outside the %lld features", (long long)i,
                     (long long)m->feat[i], (long long)n_features);
            goto fail;
        }
        int64_t t = m->tnode[i], f = m->fnode[i];
        int64_t tl = m->tleaf[i] ? m->n_leaves : m->n_nodes, fl = m->fleaf[i] ? m->n_leaves : m->n_nodes;
        if (t < 0 || t >= tl || f < 0 || f >= fl) {
            st = ERR(SY_ERR_INVALID_MODEL, "node %lld points outside the %lld nodes / %lld leaves", (long long)i,
                     (long long)m->n_nodes, (long long)m->n_leaves);
            goto fail;
        }
    }
    for (int64_t i = 0; i < m->n_trees; i++)
        if (m->roots[i] < 0 || m->roots[i] >= m->n_nodes) {
            st = ERR(SY_ERR_INVALID_MODEL, "tree_roots[%lld] = %lld is not a node", (long long)i, (long long)m->roots[i]);
            goto fail;
        }
    for (int64_t i = 0; i < m->n_leaves; i++)
        if (m->ltarget[i] < 0 || m->ltarget[i] >= m->n_targets) {
            st = ERR(SY_ERR_INVALID_MODEL, "leaf_targetids[%lld] = %lld is outside the %lld targets", (long long)i,
                     (long long)m->ltarget[i], (long long)m->n_targets);
            goto fail;
        }
    *out = m;
    return NULL;
fail:
    ml_te_free(m);
    return st;
}

static sy_status *infer_tree_ensemble(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!sy_dt_is_float(x->dtype))
        return ERR(SY_ERR_TYPE, "X must be a float type, got %s", sy_dt_name(x->dtype));
    if (x->rank != 2)
        return ERR(SY_ERR_SHAPE, "X must be [N, features], got rank %d", x->rank);
    te_model *m;
    SY_TRY(te_build(n, x->dims[1], &m));
    int64_t d[2] = {x->dims[0], m->n_targets};
    ml_te_free(m);
    return H->node_set_output(n, 0, x->dtype, 2, d);
}

static sy_status *prepare_tree_ensemble(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    te_model *m;
    SY_TRY(te_build(n, x->dims[1], &m));
    H->node_set_scratch(n, (size_t)m->n_targets * (sizeof(double) + 1));
    *state = m;
    return NULL;
}

static bool te_cond(const te_model *m, int64_t node, double x)
{
    double s = m->split[node];
    if (isnan(x) && m->missing && m->missing[node])
        return true;
    switch (m->mode[node]) {
    case M_LEQ: return x <= s;
    case M_LT: return x < s;
    case M_GTE: return x >= s;
    case M_GT: return x > s;
    case M_EQ: return x == s;
    case M_NEQ: return x != s;
    default:
        for (int64_t k = 0; k < m->set_len[node]; k++)
            if (m->sets[m->set_off[node] + k] == x)
                return true;
        return false;
    }
}

/* post_transform on one row of scores, in place (ONNX's NONE, SOFTMAX,
 * LOGISTIC, SOFTMAX_ZERO, PROBIT); TreeEnsemble, LinearRegressor,
 * LinearClassifier and the SVMs share it */
void ml_post_transform(int post, double *v, int64_t n)
{
    if (post == PT_LOGISTIC) {
        for (int64_t t = 0; t < n; t++)
            v[t] = 1.0 / (1.0 + exp(-v[t]));
    } else if (post == PT_SOFTMAX || post == PT_SOFTMAX_ZERO) {
        double mx = -INFINITY, sum = 0;
        for (int64_t t = 0; t < n; t++)
            mx = v[t] > mx ? v[t] : mx;
        for (int64_t t = 0; t < n; t++) {
            v[t] = post == PT_SOFTMAX_ZERO && v[t] == 0.0 ? 0.0 : exp(v[t] - mx);
            sum += v[t];
        }
        for (int64_t t = 0; t < n && sum > 0; t++)
            v[t] /= sum;
    } else if (post == PT_PROBIT) {
        /* sqrt(2) erfinv(2p - 1), by Newton on erf from an initial guess */
        for (int64_t t = 0; t < n; t++) {
            double p = v[t];
            if (!(p > 0.0 && p < 1.0)) {
                v[t] = p <= 0.0 ? -INFINITY : p >= 1.0 ? INFINITY : NAN;
                continue;
            }
            double z = 0.0;
            for (int it = 0; it < 60; it++) {
                double f = 0.5 * erfc(-z / sqrt(2.0)) - p, d = exp(-0.5 * z * z) / sqrt(2.0 * 3.141592653589793);
                double step = f / d;
                z -= step;
                if (fabs(step) < 1e-15)
                    break;
            }
            v[t] = z;
        }
    }
}

sy_status *ml_post_transform_attr(const sy_host_api *host, const sy_node *n, int *out)
{
    static const char *names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
    const char *s;
    size_t len;
    *out = PT_NONE;
    if (!host->attr_string(n, "post_transform", &s, &len))
        return NULL;
    for (int i = 0; i < 5; i++)
        if (len == strlen(names[i]) && !memcmp(s, names[i], len)) {
            *out = i;
            return NULL;
        }
    return host->status_new(SY_ERR_INVALID_MODEL, "attribute post_transform = '%.*s' is not NONE, SOFTMAX, LOGISTIC, "
                            "SOFTMAX_ZERO or PROBIT", (int)len, s);
}

sy_status *ml_te_row(const te_model *m, const sy_tensor *x, int64_t r, double *acc, uint8_t *seen)
{
    int64_t T = m->n_targets;
    for (int64_t t = 0; t < T; t++) {
        acc[t] = 0.0;
        seen[t] = 0;
    }
    for (int64_t tr = 0; tr < m->n_trees; tr++) {
        int64_t node = m->roots[tr], leaf = -1, steps = 0;
        while (leaf < 0) {
            if (++steps > m->n_nodes) /* a walk longer than the node count is a cycle */
                return ERR(SY_ERR_INVALID_MODEL, "tree %lld has a cycle through node %lld", (long long)tr,
                           (long long)node);
            double v = sy_load_f64(x->data, x->dtype, (size_t)(r * m->n_features + m->feat[node]));
            bool c = te_cond(m, node, v);
            int64_t next = c ? m->tnode[node] : m->fnode[node];
            if (c ? m->tleaf[node] : m->fleaf[node])
                leaf = next;
            else
                node = next;
        }
        /* a leaf of ml 1/3 may carry several (target, weight) pairs */
        int64_t q0 = m->leaf_off ? m->leaf_off[leaf] : leaf, q1 = m->leaf_off ? m->leaf_off[leaf + 1] : leaf + 1;
        for (int64_t q = q0; q < q1; q++) {
            int64_t t = m->ltarget[q];
            double w = m->weight[q];
            if (m->agg == AGG_MIN)
                acc[t] = seen[t] && acc[t] < w ? acc[t] : w;
            else if (m->agg == AGG_MAX)
                acc[t] = seen[t] && acc[t] > w ? acc[t] : w;
            else
                acc[t] += w;
            seen[t] = 1;
        }
    }
    return NULL;
}

sy_status *ml_te_run(void *state, const sy_kernel_io *io)
{
    const te_model *m = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t N = x->dims[0], T = m->n_targets;
    double *acc = io->scratch;
    uint8_t *seen = (uint8_t *)(acc + T);
    for (int64_t r = 0; r < N; r++) {
        SY_TRY(ml_te_row(m, x, r, acc, seen));
        if (m->agg == AGG_AVERAGE && m->n_trees)
            for (int64_t t = 0; t < T; t++)
                acc[t] /= (double)m->n_trees;
        /* base values go to the targets some leaf reached; the others stay 0 (ONNX Runtime 1.30) */
        for (int64_t t = 0; m->base && t < T; t++)
            acc[t] = seen[t] ? acc[t] + m->base[t] : 0.0;
        /* ONNX Runtime's TreeEnsembleRegressor 1/3: one target takes only PROBIT */
        if (!(m->single_probit_only && T == 1 && m->post != PT_PROBIT))
            ml_post_transform(m->post, acc, T);
        for (int64_t t = 0; t < T; t++)
            sy_store_f64(y->data, y->dtype, (size_t)(r * T + t), acc[t]);
    }
    return NULL;
}

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_bin[] = {ATTR("threshold", FLOAT)};
static const sy_attr_def a_te[] = {
    ATTR("aggregate_function", INT),  {"leaf_targetids", SY_ATTR_INTS, true}, {"leaf_weights", SY_ATTR_TENSOR, true},
    ATTR("membership_values", TENSOR), {"n_targets", SY_ATTR_INT, true},     {"nodes_falseleafs", SY_ATTR_INTS, true},
    {"nodes_falsenodeids", SY_ATTR_INTS, true}, {"nodes_featureids", SY_ATTR_INTS, true},
    ATTR("nodes_hitrates", TENSOR), ATTR("nodes_missing_value_tracks_true", INTS),
    {"nodes_modes", SY_ATTR_TENSOR, true}, {"nodes_splits", SY_ATTR_TENSOR, true},
    {"nodes_trueleafs", SY_ATTR_INTS, true}, {"nodes_truenodeids", SY_ATTR_INTS, true}, ATTR("post_transform", INT),
    {"tree_roots", SY_ATTR_INTS, true},
};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), ML, "Binarizer", 1, 1, 1, 1, 1, SY_ATTRS(a_bin), infer_binarizer, SY_NO_INPLACE, 0,
     "x > threshold ? 1 : 0"},
    {sizeof(sy_op_schema), ML, "TreeEnsemble", 5, 1, 1, 1, 1, SY_ATTRS(a_te), infer_tree_ensemble, SY_NO_INPLACE, 0,
     "tree ensemble regressor / classifier scores"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), ML, "Binarizer", 1, 0, "cpu_ref", SY_DT_MASK_NUMERIC, 0, 0, NULL, prepare_binarizer,
     run_binarizer, sy_release_free, NULL},
    {sizeof(sy_kernel_def), ML, "TreeEnsemble", 1, 0, "cpu_ref", SY_DT_MASK_FLOATS, 0, 0, NULL, prepare_tree_ensemble,
     ml_te_run, ml_te_free, NULL},
};

static sy_status *ml_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    SY_TRY(sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)));
    SY_TRY(ml_label_encoder_register(host, p));
    SY_TRY(ml_feat_register(host, p));
    SY_TRY(ml_linear_register(host, p));
    SY_TRY(ml_svm_register(host, p));
    SY_TRY(ml_tree_register(host, p));
    return ml_tfidf_register(host, p);
}

static void ml_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_ml",
    .version = "0.1.0",
    .description = "ai.onnx.ml operators (sklearn-onnx's: scalers, encoders, linear, SVM, tree ensembles) and TfIdfVectorizer, cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = ml_init,
    .fini = ml_fini,
};

SY_PLUGIN_DEFINE(desc)
