/*
 * TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml 1 and 3),
 * cpu_ref: the trees are restated as ml.c's TreeEnsemble (5) model and
 * walked by its code.
 *
 * Nodes are named by (nodes_treeids, nodes_nodeids); children by
 * nodes_truenodeids / nodes_falsenodeids within the tree. A node whose mode
 * is LEAF ends a walk; its weights are the (target_ids, target_weights)
 * entries naming it, any number of them. A tree's root is its node that no
 * node names as a child. The per-target sums (or AVERAGE over the trees, MIN,
 * MAX) get base_values added, then post_transform; with one target only
 * PROBIT applies, and a target no leaf reached is 0, base value or not
 * (both as ONNX Runtime 1.30; the spec does not say).
 *
 * The classifier sums class weights (class_ids / class_weights) per class.
 * More than two classes: base values added (a class without a score takes
 * its base value), the label of the highest score, post_transform on the
 * row. Two classes follow ONNX Runtime 1.30's rules, which the spec does
 * not give: when the weights name one class only ("binary case") the
 * label is class 1 when the score is > 0.5 (all weights >= 0) or > 0, and a
 * lone score s becomes Z = [1 - s, s] (all weights >= 0) or [-s, s]
 * ([logistic(-s), logistic(s)] for LOGISTIC); with weights for both classes
 * the label is class 1 when its score is > 0 and Z is the two scores after
 * post_transform. Thresholds come from nodes_values, or
 * from nodes_values_as_tensor from opset 3.
 */
#include "ml_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ML "ai.onnx.ml"
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")
#define NUM4 (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_INT32))

/* ml.c's node modes, then LEAF */
enum { T_LEQ, T_LT, T_GTE, T_GT, T_EQ, T_NEQ, T_LEAF = 100 };

typedef struct key {
    int64_t tree, node, index;
} key;

static int key_cmp(const void *a, const void *b)
{
    const key *x = a, *y = b;
    if (x->tree != y->tree)
        return x->tree < y->tree ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int64_t find(const key *k, int64_t n, int64_t tree, int64_t node)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (k[mid].tree < tree || (k[mid].tree == tree && k[mid].node < node))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && k[lo].tree == tree && k[lo].node == node ? k[lo].index : -1;
}

/* a float attribute read as doubles: NAME (floats) or, from opset 3, NAME_as_tensor */
static sy_status *values(const sy_node *n, const char *name, int64_t want, bool required, double **out, int64_t *cnt)
{
    const float *f;
    size_t k = 0;
    const sy_tensor *t = NULL;
    char tn[64];
    snprintf(tn, sizeof tn, "%s_as_tensor", name);
    bool hf = H->attr_floats(n, name, &f, &k) && k;
    bool ht = H->node_opset(n) >= 3 && H->attr_tensor(n, tn, &t) && t && t->data;
    *out = NULL;
    *cnt = 0;
    if (hf && ht)
        return H->status_new(SY_ERR_INVALID_MODEL, "attributes %s and %s are both given; one is needed", name, tn);
    if (!hf && !ht) {
        if (required)
            return H->status_new(SY_ERR_INVALID_MODEL, "attribute %s is required", name);
        return NULL;
    }
    int64_t c = hf ? (int64_t)k : sy_tensor_numel(t);
    if (ht && !sy_dt_is_float(t->dtype))
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute %s must be a float tensor, it is %s", tn,
                             sy_dt_name(t->dtype));
    if (want >= 0 && c != want)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute %s has %lld values; %lld are needed", hf ? name : tn,
                             (long long)c, (long long)want);
    *out = malloc((size_t)(c ? c : 1) * sizeof **out);
    if (!*out)
        return OOM();
    for (int64_t i = 0; i < c; i++)
        (*out)[i] = hf ? f[i] : sy_load_f64(t->data, t->dtype, (size_t)i);
    *cnt = c;
    return NULL;
}

static sy_status *ints(const sy_node *n, const char *name, int64_t want, const int64_t **v)
{
    size_t k = 0;
    if (!H->attr_ints(n, name, v, &k))
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute %s is required", name);
    if (want >= 0 && (int64_t)k != want)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute %s has %zu values; %lld (one per node / weight) are "
                             "needed", name, k, (long long)want);
    return NULL;
}

static sy_status *agg_of(const sy_node *n, int32_t *out)
{
    static const char *names[] = {"AVERAGE", "SUM", "MIN", "MAX"}; /* ml.c's AGG_* order */
    const char *s;
    size_t len;
    *out = 1;
    if (!H->attr_string(n, "aggregate_function", &s, &len))
        return NULL;
    for (int i = 0; i < 4; i++)
        if (len == strlen(names[i]) && !memcmp(s, names[i], len)) {
            *out = i;
            return NULL;
        }
    return H->status_new(SY_ERR_INVALID_MODEL, "attribute aggregate_function = '%.*s' is not AVERAGE, SUM, MIN or MAX",
                         (int)len, s);
}

/* pre: "target" (regressor: n_targets from the attribute) or "class" (classifier: n_classes) */
static sy_status *build(const sy_node *n, int64_t n_features, const char *pre, int64_t n_classes, te_model **out)
{
    char a_ids[32], a_tree[32], a_node[32], a_w[32];
    snprintf(a_ids, sizeof a_ids, "%s_ids", pre);
    snprintf(a_tree, sizeof a_tree, "%s_treeids", pre);
    snprintf(a_node, sizeof a_node, "%s_nodeids", pre);
    snprintf(a_w, sizeof a_w, "%s_weights", pre);
    sy_status *st = NULL;
    const char *const *modes;
    size_t nn = 0;
    if (!H->attr_strings(n, "nodes_modes", &modes, &nn) || !nn)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute nodes_modes is required (non-empty)");
    int64_t N = (int64_t)nn;
    const int64_t *tid, *nid, *fid, *tt, *ft, *miss = NULL, *wt, *wn, *wi;
    SY_TRY(ints(n, "nodes_treeids", N, &tid));
    SY_TRY(ints(n, "nodes_nodeids", N, &nid));
    SY_TRY(ints(n, "nodes_featureids", N, &fid));
    SY_TRY(ints(n, "nodes_truenodeids", N, &tt));
    SY_TRY(ints(n, "nodes_falsenodeids", N, &ft));
    size_t nm = 0;
    if (H->attr_ints(n, "nodes_missing_value_tracks_true", &miss, &nm) && nm && (int64_t)nm != N)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute nodes_missing_value_tracks_true has %zu values; %lld "
                             "(one per node) are needed", nm, (long long)N);
    if (!nm)
        miss = NULL;
    size_t nw = 0;
    if (!H->attr_ints(n, a_ids, &wi, &nw))
        nw = 0;
    int64_t W = (int64_t)nw;
    SY_TRY(ints(n, a_tree, W, &wt));
    SY_TRY(ints(n, a_node, W, &wn));
    te_model *m = calloc(1, sizeof *m);
    if (!m)
        return OOM();
    double *split = NULL, *wv = NULL, *base = NULL;
    int64_t cnt;
    key *keys = NULL;
    m->n_targets = n_classes > 0 ? n_classes : sy_attr_int_or(H, n, "n_targets", 1);
    m->n_features = n_features;
    m->single_probit_only = true;
    int post;
    if ((st = ml_post_transform_attr(H, n, &post)) || (st = agg_of(n, &m->agg)))
        goto fail;
    m->post = post;
    if (m->n_targets < 1 || m->n_targets > (1 << 24)) {
        st = H->status_new(SY_ERR_INVALID_MODEL, "attribute n_targets must be in [1, 2^24], got %lld",
                           (long long)m->n_targets);
        goto fail;
    }
    if ((st = values(n, "nodes_values", N, true, &split, &cnt)) || (st = values(n, a_w, W, true, &wv, &cnt)))
        goto fail;
    if ((st = values(n, "base_values", -1, false, &base, &cnt)))
        goto fail;
    if (base && cnt != m->n_targets && !(n_classes == 2 && cnt == 1)) { /* binary: one base value may do */
        st = H->status_new(SY_ERR_INVALID_MODEL, "attribute base_values has %lld values; %lld (the %s) are needed",
                           (long long)cnt, (long long)m->n_targets, n_classes > 0 ? "classes" : "targets");
        goto fail;
    }
    m->base = base;
    m->n_base = base ? cnt : 0;
    base = NULL;
    /* modes */
    m->mode = malloc((size_t)N);
    uint8_t *is_leaf = calloc((size_t)N, 1);
    keys = malloc((size_t)N * sizeof *keys);
    int64_t *leaf_of = malloc((size_t)N * sizeof *leaf_of), *node_of = malloc((size_t)N * sizeof *node_of);
    int64_t *block = NULL;
    if (!m->mode || !is_leaf || !keys || !leaf_of || !node_of) {
        st = OOM();
        goto fail2;
    }
    static const char *mnames[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
    int64_t n_leaves = 0, n_inner = 0;
    for (int64_t i = 0; i < N; i++) {
        int md = -1;
        for (int k = 0; k < 6; k++)
            if (!strcmp(modes[i], mnames[k]))
                md = k;
        if (!strcmp(modes[i], "LEAF"))
            md = T_LEAF;
        if (md < 0) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "attribute nodes_modes[%lld] = '%s' is not BRANCH_LEQ, BRANCH_LT, "
                               "BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ or LEAF", (long long)i, modes[i]);
            goto fail2;
        }
        is_leaf[i] = md == T_LEAF;
        if (is_leaf[i]) {
            leaf_of[i] = n_leaves++;
        } else {
            if (fid[i] < 0 || fid[i] >= n_features) {
                st = H->status_new(SY_ERR_INVALID_MODEL, "attribute nodes_featureids[%lld] = %lld is outside the %lld "
                                   "features of X", (long long)i, (long long)fid[i], (long long)n_features);
                goto fail2;
            }
            node_of[i] = n_inner++;
        }
        keys[i] = (key){tid[i], nid[i], i};
    }
    qsort(keys, (size_t)N, sizeof *keys, key_cmp);
    for (int64_t i = 1; i < N; i++)
        if (keys[i].tree == keys[i - 1].tree && keys[i].node == keys[i - 1].node) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "node (tree %lld, node %lld) is given twice", (long long)keys[i].tree,
                               (long long)keys[i].node);
            goto fail2;
        }
    /* trees and their roots: a tree whose root is a leaf gets one inner node with both ways to it */
    int64_t n_trees = 0;
    for (int64_t i = 0; i < N; i++)
        n_trees += i == 0 || keys[i].tree != keys[i - 1].tree;
    int64_t inner = n_inner + n_trees; /* room for the single-leaf trees' nodes */
    /* one block: feat, tnode, fnode, tleaf, fleaf, missing [inner]; roots [n_trees]; ltarget [W]; leaf_off [leaves + 1] */
    block = calloc((size_t)(6 * inner + n_trees + W + n_leaves + 1), sizeof *block);
    double *splits2 = calloc((size_t)(inner ? inner : 1), sizeof *splits2);
    uint8_t *mode2 = calloc((size_t)(inner ? inner : 1), 1);
    uint8_t *referenced = calloc((size_t)N, 1);
    double *w2 = malloc((size_t)(W ? W : 1) * sizeof *w2);
    if (!block || !splits2 || !mode2 || !referenced || !w2) {
        free(splits2), free(mode2), free(referenced), free(w2);
        st = OOM();
        goto fail2;
    }
    int64_t *feat = block, *tnode = feat + inner, *fnode = tnode + inner, *tleaf = fnode + inner,
            *fleaf = tleaf + inner, *missing = fleaf + inner, *roots = missing + inner, *ltarget = roots + n_trees,
            *loff = ltarget + W;
    for (int64_t i = 0; i < N && !st; i++) {
        if (is_leaf[i])
            continue;
        int64_t j = node_of[i];
        feat[j] = fid[i];
        splits2[j] = split[i];
        missing[j] = miss ? miss[i] : 0;
        for (int side = 0; side < 2; side++) {
            int64_t c = find(keys, N, tid[i], side ? ft[i] : tt[i]);
            if (c < 0 || c == i) {
                st = H->status_new(SY_ERR_INVALID_MODEL, "attribute %s[%lld] = %lld is not a node of tree %lld",
                                   side ? "nodes_falsenodeids" : "nodes_truenodeids", (long long)i,
                                   (long long)(side ? ft[i] : tt[i]), (long long)tid[i]);
                break;
            }
            referenced[c] = 1;
            (side ? fnode : tnode)[j] = is_leaf[c] ? leaf_of[c] : node_of[c];
            (side ? fleaf : tleaf)[j] = is_leaf[c];
        }
        for (int k = 0; k < 6; k++)
            if (!strcmp(modes[i], mnames[k]))
                mode2[j] = (uint8_t)k;
    }
    int64_t t = 0, extra = n_inner;
    for (int64_t a = 0; a < N && !st; t++) {
        int64_t b = a, root = -1;
        while (b < N && keys[b].tree == keys[a].tree) {
            int64_t i = keys[b].index;
            if (!referenced[i] && (root < 0 || i < root))
                root = i; /* the first unreferenced node of the tree */
            b++;
        }
        if (root < 0) {
            st = H->status_new(SY_ERR_INVALID_MODEL, "tree %lld has no root (every node is a child)",
                               (long long)keys[a].tree);
            break;
        }
        if (is_leaf[root]) {
            int64_t j = extra++;
            mode2[j] = T_LEQ;
            feat[j] = 0;
            splits2[j] = 0;
            tnode[j] = fnode[j] = leaf_of[root];
            tleaf[j] = fleaf[j] = 1;
            roots[t] = j;
        } else {
            roots[t] = node_of[root];
        }
        a = b;
    }
    /* leaf weights, grouped by leaf in their order */
    for (int64_t q = 0; q < W && !st; q++) {
        int64_t c = find(keys, N, wt[q], wn[q]);
        if (c < 0 || !is_leaf[c])
            st = H->status_new(SY_ERR_INVALID_MODEL, "%s[%lld] = %lld is not a LEAF of tree %lld", a_node,
                               (long long)q, (long long)wn[q], (long long)wt[q]);
        else if (wi[q] < 0 || wi[q] >= m->n_targets)
            st = H->status_new(SY_ERR_INVALID_MODEL, "%s[%lld] = %lld is outside the %lld %s", a_ids, (long long)q,
                               (long long)wi[q], (long long)m->n_targets, n_classes > 0 ? "classes" : "targets");
        else
            loff[leaf_of[c] + 1]++;
    }
    for (int64_t l = 0; l < n_leaves && !st; l++)
        loff[l + 1] += loff[l];
    if (!st) {
        /* placement in the attributes' order: a cursor per leaf */
        int64_t *cur = malloc((size_t)(n_leaves ? n_leaves : 1) * sizeof *cur);
        if (!cur) {
            st = OOM();
        } else {
            for (int64_t l = 0; l < n_leaves; l++)
                cur[l] = loff[l];
            for (int64_t q = 0; q < W; q++) {
                int64_t l = leaf_of[find(keys, N, wt[q], wn[q])];
                ltarget[cur[l]] = wi[q];
                w2[cur[l]++] = wv[q];
            }
            free(cur);
        }
    }
    free(referenced);
    free(m->mode);
    m->mode = mode2;
    m->split = splits2;
    m->weight = w2;
    m->owned = block;
    block = NULL;
    m->feat = feat, m->tnode = tnode, m->fnode = fnode, m->tleaf = tleaf, m->fleaf = fleaf;
    m->missing = miss ? missing : NULL;
    m->roots = roots, m->ltarget = ltarget;
    m->n_nodes = extra;
    m->n_leaves = n_leaves;
    m->n_trees = n_trees;
    m->leaf_off = malloc((size_t)(n_leaves + 1) * sizeof *m->leaf_off);
    if (!st && !m->leaf_off)
        st = OOM();
    if (!st)
        memcpy(m->leaf_off, loff, (size_t)(n_leaves + 1) * sizeof *loff);
fail2:
    free(is_leaf);
    free(keys);
    free(leaf_of);
    free(node_of);
    free(block);
    keys = NULL;
fail:
    free(split);
    free(wv);
    free(base);
    free(keys);
    if (st) {
        ml_te_free(m);
        return st;
    }
    *out = m;
    return NULL;
}

static sy_status *infer_ter(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_FLOAT64 && x->dtype != SY_DT_INT64 && x->dtype != SY_DT_INT32)
        return H->status_new(SY_ERR_TYPE, "X must be float, double, int64 or int32, got %s", sy_dt_name(x->dtype));
    if (x->rank != 2)
        return H->status_new(SY_ERR_SHAPE, "X must be [N, C], got rank %d", x->rank);
    te_model *m;
    SY_TRY(build(n, x->dims[1], "target", 0, &m));
    int64_t d[2] = {x->dims[0], m->n_targets};
    ml_te_free(m);
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 2, d);
}

static sy_status *prepare_ter(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    te_model *m;
    SY_TRY(build(n, x->dims[1], "target", 0, &m));
    H->node_set_scratch(n, (size_t)m->n_targets * (sizeof(double) + 1));
    *state = m;
    return NULL;
}

/* ======================================================================== */
/* TreeEnsembleClassifier                                                   */
/* ======================================================================== */

typedef struct tec {
    te_model *m;
    ml_labels lab;
    bool binary_case;  /* two classes, weights for one class id only */
    bool all_positive; /* every class weight >= 0 */
} tec;

static void tec_free(void *p)
{
    tec *c = p;
    if (c)
        ml_te_free(c->m);
    free(c);
}

static sy_status *tec_build(const sy_node *n, int64_t n_features, tec **out)
{
    tec *c = calloc(1, sizeof *c);
    if (!c)
        return OOM();
    size_t ni = 0, ns = 0;
    bool hi = H->attr_ints(n, "classlabels_int64s", &c->lab.ints, &ni) && ni;
    bool hs = H->attr_strings(n, "classlabels_strings", &c->lab.strs, &ns) && ns;
    sy_status *st = NULL;
    if (hi == hs)
        st = H->status_new(SY_ERR_INVALID_MODEL, "exactly one of classlabels_int64s and classlabels_strings is needed "
                           "(non-empty), %d given", (int)hi + (int)hs);
    if (!st) {
        c->lab.strings = hs;
        c->lab.n = (int64_t)(hs ? ns : ni);
        st = build(n, n_features, "class", c->lab.n, &c->m);
    }
    if (st) {
        tec_free(c);
        return st;
    }
    const int64_t *ids;
    size_t k = 0;
    int64_t first = -1;
    c->binary_case = c->lab.n == 2;
    if (H->attr_ints(n, "class_ids", &ids, &k))
        for (size_t i = 0; i < k; i++) {
            if (first < 0)
                first = ids[i];
            c->binary_case &= ids[i] == first;
        }
    c->all_positive = true;
    int64_t W = c->m->leaf_off ? c->m->leaf_off[c->m->n_leaves] : 0;
    for (int64_t i = 0; i < W; i++)
        c->all_positive &= c->m->weight[i] >= 0;
    *out = c;
    return NULL;
}

static sy_status *infer_tec(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_FLOAT64 && x->dtype != SY_DT_INT64 && x->dtype != SY_DT_INT32)
        return H->status_new(SY_ERR_TYPE, "X must be float, double, int64 or int32, got %s", sy_dt_name(x->dtype));
    if (x->rank != 2)
        return H->status_new(SY_ERR_SHAPE, "X must be [N, C], got rank %d", x->rank);
    tec *c;
    SY_TRY(tec_build(n, x->dims[1], &c));
    int64_t N = x->dims[0], d[2] = {N, c->lab.n};
    bool strings = c->lab.strings;
    tec_free(c);
    SY_TRY(H->node_set_output(n, 0, strings ? SY_DT_STRING : SY_DT_INT64, 1, &N));
    return H->node_set_output(n, 1, SY_DT_FLOAT32, 2, d);
}

static sy_status *prepare_tec(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    tec *c;
    SY_TRY(tec_build(n, x->dims[1], &c));
    H->node_set_scratch(n, (size_t)c->m->n_targets * (sizeof(double) + 1));
    *state = c;
    return NULL;
}

static double logistic(double v) { return 1.0 / (1.0 + exp(-v)); }

static sy_status *run_tec(void *state, const sy_kernel_io *io)
{
    const tec *c = state;
    const te_model *m = c->m;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    float *z = io->outputs[1]->data;
    int64_t N = x->dims[0], K = m->n_targets;
    double *s = io->scratch;
    uint8_t *seen = (uint8_t *)(s + K);
    for (int64_t r = 0; r < N; r++) {
        SY_TRY(ml_te_row(m, x, r, s, seen));
        float *zr = z + r * K;
        if (K != 2) {
            /* base values; a class without a score takes its base value (ONNX Runtime) */
            for (int64_t k = 0; k < m->n_base; k++) {
                s[k] = seen[k] ? s[k] + m->base[k] : m->base[k];
                seen[k] = 1;
            }
            int64_t best = -1;
            for (int64_t k = 0; k < K; k++)
                if (seen[k] && (best < 0 || s[k] > s[best]))
                    best = k;
            ml_label_store(&c->lab, y, r, best < 0 ? 0 : best);
            ml_post_transform(m->post, s, K);
            for (int64_t k = 0; k < K; k++)
                zr[k] = (float)s[k];
            continue;
        }
        /* two classes, as ONNX Runtime 1.30 (the spec does not say): one score when class 1 has none */
        int width = 2, extra = -1; /* extra: ORT's second-score rule when only one score is left */
        if (m->n_base == 2) {
            if (seen[1]) {
                s[1] = m->base[1] + s[0];
                s[0] = -s[1];
            } else {
                s[1] += m->base[1];
                s[0] += m->base[0];
            }
        } else if (m->n_base == 1) {
            s[0] += m->base[0];
            width = seen[1] ? 2 : 1;
        } else {
            extra = 3;
            width = seen[1] ? 2 : 1;
        }
        double pos = width == 2 && seen[1] ? s[1] : seen[0] ? s[0] : 0.0;
        int64_t label;
        if (c->binary_case && c->all_positive) {
            label = pos > 0.5;
            extra = pos > 0.5 ? 0 : 1;
        } else if (c->binary_case) {
            label = pos > 0;
            extra = pos > 0 ? 2 : 3;
        } else {
            label = pos > 0;
        }
        ml_label_store(&c->lab, y, r, label);
        if (width == 2) {
            ml_post_transform(m->post, s, 2);
            zr[0] = (float)s[0], zr[1] = (float)s[1];
        } else if (m->post == ML_PT_PROBIT) {
            ml_post_transform(ML_PT_PROBIT, s, 1);
            zr[0] = (float)s[0], zr[1] = 0.0f; /* ONNX Runtime leaves the second score unset */
        } else if (extra == 0 || extra == 1) {
            zr[0] = (float)(1.0 - s[0]), zr[1] = (float)s[0];
        } else if (m->post == ML_PT_LOGISTIC) {
            zr[0] = (float)logistic(-s[0]), zr[1] = (float)logistic(s[0]);
        } else {
            zr[0] = (float)-s[0], zr[1] = (float)s[0];
        }
    }
    return ml_labels_own(H, io, &c->lab, y, N);
}

#define A(nm, t) {nm, SY_ATTR_##t, false}
#define TER_ATTRS                                                                                                  \
    A("aggregate_function", STRING), A("base_values", FLOATS), A("n_targets", INT), A("nodes_falsenodeids", INTS),  \
        A("nodes_featureids", INTS), A("nodes_hitrates", FLOATS), A("nodes_missing_value_tracks_true", INTS),       \
        A("nodes_modes", STRINGS), A("nodes_nodeids", INTS), A("nodes_treeids", INTS), A("nodes_truenodeids", INTS), \
        A("nodes_values", FLOATS), A("post_transform", STRING), A("target_ids", INTS), A("target_nodeids", INTS),   \
        A("target_treeids", INTS), A("target_weights", FLOATS)
static const sy_attr_def a_ter1[] = {TER_ATTRS};
static const sy_attr_def a_ter3[] = {TER_ATTRS, A("base_values_as_tensor", TENSOR), A("nodes_hitrates_as_tensor", TENSOR),
                                     A("nodes_values_as_tensor", TENSOR), A("target_weights_as_tensor", TENSOR)};

#define TEC_ATTRS                                                                                                  \
    A("base_values", FLOATS), A("class_ids", INTS), A("class_nodeids", INTS), A("class_treeids", INTS),             \
        A("class_weights", FLOATS), A("classlabels_int64s", INTS), A("classlabels_strings", STRINGS),              \
        A("nodes_falsenodeids", INTS), A("nodes_featureids", INTS), A("nodes_hitrates", FLOATS),                   \
        A("nodes_missing_value_tracks_true", INTS), A("nodes_modes", STRINGS), A("nodes_nodeids", INTS),           \
        A("nodes_treeids", INTS), A("nodes_truenodeids", INTS), A("nodes_values", FLOATS), A("post_transform", STRING)
static const sy_attr_def a_tec1[] = {TEC_ATTRS};
static const sy_attr_def a_tec3[] = {TEC_ATTRS, A("base_values_as_tensor", TENSOR), A("class_weights_as_tensor", TENSOR),
                                     A("nodes_hitrates_as_tensor", TENSOR), A("nodes_values_as_tensor", TENSOR)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), ML, "TreeEnsembleClassifier", 1, 1, 1, 2, 2, SY_ATTRS(a_tec1), infer_tec, SY_NO_INPLACE, 0,
     "tree ensemble classification: labels and scores"},
    {sizeof(sy_op_schema), ML, "TreeEnsembleClassifier", 3, 1, 1, 2, 2, SY_ATTRS(a_tec3), infer_tec, SY_NO_INPLACE, 0,
     "tree ensemble classification (also double attributes)"},
    {sizeof(sy_op_schema), ML, "TreeEnsembleRegressor", 1, 1, 1, 1, 1, SY_ATTRS(a_ter1), infer_ter, SY_NO_INPLACE, 0,
     "tree ensemble regression"},
    {sizeof(sy_op_schema), ML, "TreeEnsembleRegressor", 3, 1, 1, 1, 1, SY_ATTRS(a_ter3), infer_ter, SY_NO_INPLACE, 0,
     "tree ensemble regression (also double attributes)"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), ML, "TreeEnsembleClassifier", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_tec, run_tec,
     tec_free, NULL},
    {sizeof(sy_kernel_def), ML, "TreeEnsembleRegressor", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_ter, ml_te_run,
     ml_te_free, NULL},
};

sy_status *ml_tree_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
