/*
 * ai.onnx.ml (opset 1) classifiers and mappings, cpu_ref kernels:
 *
 *   LinearClassifier   scores Z = X coefficients^T + intercepts ([N, E]),
 *                      labels Y = the label of the highest raw score, then
 *                      post_transform on every row. One class (E = 1) is
 *                      binary and needs two labels: Y = classlabels[1]
 *                      when the score s is > 0, else classlabels[0], and
 *                      Z = [1 - p, p] with p = s, or logistic(s) for
 *                      LOGISTIC (SOFTMAX* leave s: ONNX Runtime 1.30's
 *                      behaviour, the spec says nothing of it); PROBIT
 *                      gives p = probit(s) (ONNX Runtime's Z is undefined).
 *   CategoryMapper     strings -> int64 or int64 -> strings through
 *                      cats_strings / cats_int64s (by X's type, as ONNX
 *                      Runtime), unknown -> default_int64 / default_string
 *   FeatureVectorizer  the first inputdimensions[i] columns of every input
 *                      side by side, as float ([N, sum]); missing columns
 *                      are 0 (ONNX Runtime)
 */
#include "ml_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ML "ai.onnx.ml"
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")
#define NUM4 (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_INT32))

static bool numeric4(sy_dtype dt)
{
    return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT64 || dt == SY_DT_INT64 || dt == SY_DT_INT32;
}

/* string outputs own their text in the run's string heap: attributes and
 * inputs may be gone before the outputs are read */
static sy_status *own_strings(const sy_kernel_io *io, sy_string *s, int64_t n)
{
    size_t text = 0;
    for (int64_t i = 0; i < n; i++)
        text += (size_t)s[i].size;
    char *p;
    SY_TRY(sy_str_alloc(H, io, text, &p));
    for (int64_t i = 0; i < n; i++) {
        if (s[i].size)
            memcpy(p, s[i].data, (size_t)s[i].size);
        s[i].data = p;
        p += s[i].size;
    }
    return NULL;
}

/* ======================================================================== */
/* class labels (LinearClassifier, SVMClassifier)                           */
/* ======================================================================== */

sy_status *ml_labels_read(const sy_host_api *host, const sy_node *n, ml_labels *l)
{
    size_t ni = 0, ns = 0;
    memset(l, 0, sizeof *l);
    bool hi = host->attr_ints(n, "classlabels_ints", &l->ints, &ni) && ni;
    bool hs = host->attr_strings(n, "classlabels_strings", &l->strs, &ns) && ns;
    if (hi == hs)
        return host->status_new(SY_ERR_INVALID_MODEL, "exactly one of classlabels_ints and classlabels_strings is "
                                "needed (non-empty), %d given", (int)hi + (int)hs);
    l->strings = hs;
    l->n = (int64_t)(hs ? ns : ni);
    return NULL;
}

void ml_label_store(const ml_labels *l, sy_tensor *y, int64_t i, int64_t k)
{
    if (l->strings) {
        sy_string *s = &((sy_string *)y->data)[i];
        s->data = l->strs[k];
        s->size = strlen(l->strs[k]);
    } else {
        ((int64_t *)y->data)[i] = l->ints[k];
    }
}

sy_status *ml_labels_own(const sy_host_api *host, const sy_kernel_io *io, const ml_labels *l, sy_tensor *y, int64_t n)
{
    (void)host;
    return l->strings ? own_strings(io, y->data, n) : NULL;
}

/* ======================================================================== */
/* LinearClassifier                                                         */
/* ======================================================================== */

typedef struct lincls {
    int64_t c, e, zcols;
    const float *coef, *icpt; /* borrowed; icpt may be NULL */
    int post;
    ml_labels lab;
} lincls;

static sy_status *build_lincls(const sy_node *n, lincls *m)
{
    const sy_tensor *x = H->node_input(n, 0);
    m->c = x->rank == 2 ? x->dims[1] : x->dims[0];
    size_t nc = 0, ni = 0;
    if (!H->attr_floats(n, "coefficients", &m->coef, &nc) || !nc)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute coefficients is required (non-empty)");
    if (!H->attr_floats(n, "intercepts", &m->icpt, &ni) || !ni)
        m->icpt = NULL;
    if (m->c < 1 || nc % (size_t)m->c)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute coefficients has %zu values, not a multiple of the %lld "
                             "features of X", nc, (long long)m->c);
    m->e = (int64_t)nc / m->c;
    if (m->icpt && (int64_t)ni != m->e)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute intercepts has %zu values; coefficients give %lld classes "
                             "(%zu / %lld features)", ni, (long long)m->e, nc, (long long)m->c);
    SY_TRY(ml_labels_read(H, n, &m->lab));
    /* one class is binary classification: two labels (ONNX Runtime refuses other counts too) */
    if (m->lab.n != (m->e == 1 ? 2 : m->e))
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute %s has %lld labels; the coefficients give %lld classes, "
                             "so %lld are needed", m->lab.strings ? "classlabels_strings" : "classlabels_ints",
                             (long long)m->lab.n, (long long)m->e, (long long)(m->e == 1 ? 2 : m->e));
    m->zcols = m->e == 1 ? 2 : m->e;
    int64_t mc = sy_attr_int_or(H, n, "multi_class", 0);
    (void)mc; /* ONNX Runtime ignores it too: scores are always one per class */
    return ml_post_transform_attr(H, n, &m->post);
}

static sy_status *infer_lincls(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!numeric4(x->dtype))
        return H->status_new(SY_ERR_TYPE, "X must be float, double, int64 or int32, got %s", sy_dt_name(x->dtype));
    if (x->rank != 1 && x->rank != 2)
        return H->status_new(SY_ERR_SHAPE, "X must be [C] or [N, C], got rank %d", x->rank);
    lincls m;
    SY_TRY(build_lincls(n, &m));
    int64_t N = x->rank == 2 ? x->dims[0] : 1, dz[2] = {N, m.zcols};
    SY_TRY(H->node_set_output(n, 0, m.lab.strings ? SY_DT_STRING : SY_DT_INT64, 1, &N));
    return H->node_set_output(n, 1, SY_DT_FLOAT32, 2, dz);
}

static sy_status *prepare_lincls(sy_node *n, void **state)
{
    lincls *m = malloc(sizeof *m);
    if (!m)
        return OOM();
    sy_status *st = build_lincls(n, m);
    if (st) {
        free(m);
        return st;
    }
    H->node_set_scratch(n, (size_t)m->e * sizeof(double));
    *state = m;
    return NULL;
}

static sy_status *run_lincls(void *state, const sy_kernel_io *io)
{
    const lincls *m = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    float *z = io->outputs[1]->data;
    double *s = io->scratch;
    int64_t N = x->rank == 2 ? x->dims[0] : 1;
    for (int64_t r = 0; r < N; r++) {
        for (int64_t k = 0; k < m->e; k++) {
            /* in float, as ONNX Runtime's GEMM: the label picks follow its rounding */
            float v = m->icpt ? m->icpt[k] : 0.0f;
            for (int64_t j = 0; j < m->c; j++)
                v += m->coef[k * m->c + j] * (float)sy_load_f64(x->data, x->dtype, (size_t)(r * m->c + j));
            s[k] = v;
        }
        float *zr = z + r * m->zcols;
        if (m->e == 1) { /* binary: two labels, Z = [1 - p, p] */
            ml_label_store(&m->lab, y, r, s[0] > 0 ? 1 : 0);
            if (m->post == ML_PT_LOGISTIC || m->post == ML_PT_PROBIT)
                ml_post_transform(m->post, s, 1);
            zr[0] = (float)(1.0 - s[0]);
            zr[1] = (float)s[0];
            continue;
        }
        int64_t best = 0; /* the first of equal scores, as ONNX Runtime */
        for (int64_t k = 1; k < m->e; k++)
            if (s[k] > s[best])
                best = k;
        ml_label_store(&m->lab, y, r, best);
        ml_post_transform(m->post, s, m->e);
        for (int64_t k = 0; k < m->e; k++)
            zr[k] = (float)s[k];
    }
    return ml_labels_own(H, io, &m->lab, y, N);
}

/* ======================================================================== */
/* CategoryMapper                                                           */
/* ======================================================================== */

typedef struct catmap {
    int64_t n;
    const int64_t *ints;
    const char *const *strs;
    int64_t dint;
    const char *dstr;
    size_t dlen;
} catmap;

static sy_status *build_catmap(const sy_node *n, catmap *m)
{
    size_t ni = 0, ns = 0;
    if (!H->attr_ints(n, "cats_int64s", &m->ints, &ni))
        ni = 0;
    if (!H->attr_strings(n, "cats_strings", &m->strs, &ns))
        ns = 0;
    if (ni != ns)
        return H->status_new(SY_ERR_INVALID_MODEL, "attributes cats_int64s (%zu values) and cats_strings (%zu) must "
                             "have the same length", ni, ns);
    m->n = (int64_t)ni;
    m->dint = sy_attr_int_or(H, n, "default_int64", -1);
    if (!H->attr_string(n, "default_string", &m->dstr, &m->dlen))
        m->dstr = "_Unused", m->dlen = 7;
    return NULL;
}

static sy_status *infer_catmap(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_STRING && x->dtype != SY_DT_INT64)
        return H->status_new(SY_ERR_TYPE, "X must be string or int64, got %s", sy_dt_name(x->dtype));
    catmap m;
    SY_TRY(build_catmap(n, &m));
    return H->node_set_output(n, 0, x->dtype == SY_DT_STRING ? SY_DT_INT64 : SY_DT_STRING, x->rank, x->dims);
}

static sy_status *prepare_catmap(sy_node *n, void **state)
{
    catmap *m = malloc(sizeof *m);
    if (!m)
        return OOM();
    sy_status *st = build_catmap(n, m);
    if (st) {
        free(m);
        return st;
    }
    *state = m;
    return NULL;
}

static sy_status *run_catmap(void *state, const sy_kernel_io *io)
{
    const catmap *m = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t n = sy_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        if (x->dtype == SY_DT_STRING) {
            const sy_string *s = &((const sy_string *)x->data)[i];
            int64_t v = m->dint; /* the first equal category wins */
            for (int64_t k = 0; k < m->n; k++)
                if (strlen(m->strs[k]) == s->size && (!s->size || !memcmp(m->strs[k], s->data, (size_t)s->size))) {
                    v = m->ints[k];
                    break;
                }
            ((int64_t *)y->data)[i] = v;
        } else {
            int64_t v = ((const int64_t *)x->data)[i];
            sy_string *o = &((sy_string *)y->data)[i];
            o->data = m->dstr;
            o->size = m->dlen;
            for (int64_t k = 0; k < m->n; k++)
                if (m->ints[k] == v) {
                    o->data = m->strs[k];
                    o->size = strlen(m->strs[k]);
                    break;
                }
        }
    }
    return x->dtype == SY_DT_INT64 ? own_strings(io, y->data, n) : NULL;
}

/* ======================================================================== */
/* FeatureVectorizer                                                        */
/* ======================================================================== */

static sy_status *fv_dims(const sy_node *n, const int64_t **d, size_t *k)
{
    uint32_t ni = H->node_num_inputs(n);
    if (!H->attr_ints(n, "inputdimensions", d, k) || *k != ni)
        return H->status_new(SY_ERR_INVALID_MODEL, "attribute inputdimensions has %zu values; one per input (%u) is "
                             "needed", H->attr_ints(n, "inputdimensions", d, k) ? *k : 0, ni);
    for (size_t i = 0; i < *k; i++)
        if ((*d)[i] < 0)
            return H->status_new(SY_ERR_INVALID_MODEL, "attribute inputdimensions[%zu] = %lld is negative", i,
                                 (long long)(*d)[i]);
    return NULL;
}

static sy_status *infer_fv(sy_node *n)
{
    const int64_t *d;
    size_t k;
    SY_TRY(fv_dims(n, &d, &k));
    int64_t N = -1, total = 0;
    for (uint32_t i = 0; i < k; i++) {
        const sy_tensor *x;
        SY_TRY(sy_need_input(H, n, i, &x));
        if (!numeric4(x->dtype))
            return H->status_new(SY_ERR_TYPE, "input %u must be int32, int64, float or double, got %s", i,
                                 sy_dt_name(x->dtype));
        if (x->dtype != H->node_input(n, 0)->dtype) /* the schema's one T1 */
            return H->status_new(SY_ERR_TYPE, "input %u is %s, input 0 %s: the inputs share one type", i,
                                 sy_dt_name(x->dtype), sy_dt_name(H->node_input(n, 0)->dtype));
        if (x->rank != 1 && x->rank != 2)
            return H->status_new(SY_ERR_SHAPE, "input %u must be [C] or [N, C], got rank %d", i, x->rank);
        int64_t rows = x->rank == 2 ? x->dims[0] : 1;
        if (N >= 0 && rows != N)
            return H->status_new(SY_ERR_SHAPE, "input %u has %lld rows, input 0 %lld", i, (long long)rows,
                                 (long long)N);
        N = rows;
        total += d[i];
    }
    int64_t dy[2] = {N, total};
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 2, dy);
}

static sy_status *prepare_fv(sy_node *n, void **state)
{
    const int64_t *d;
    size_t k;
    SY_TRY(fv_dims(n, &d, &k));
    *state = (void *)d; /* the attribute lives as long as the session */
    return NULL;
}

static sy_status *run_fv(void *state, const sy_kernel_io *io)
{
    const int64_t *d = state;
    float *y = io->outputs[0]->data;
    const sy_tensor *y0 = io->outputs[0];
    int64_t N = y0->dims[0], total = y0->dims[1], col = 0;
    for (uint32_t i = 0; i < io->n_inputs; i++) {
        const sy_tensor *x = io->inputs[i];
        int64_t c = x->rank == 2 ? x->dims[1] : x->dims[0];
        for (int64_t r = 0; r < N; r++)
            for (int64_t j = 0; j < d[i]; j++)
                y[r * total + col + j] = j < c ? (float)sy_load_f64(x->data, x->dtype, (size_t)(r * c + j)) : 0.0f;
        col += d[i];
    }
    return NULL;
}

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

#define A(nm, t) {nm, SY_ATTR_##t, false}
static const sy_attr_def a_lincls[] = {A("classlabels_ints", INTS), A("classlabels_strings", STRINGS),
                                       {"coefficients", SY_ATTR_FLOATS, true}, A("intercepts", FLOATS),
                                       A("multi_class", INT), A("post_transform", STRING)};
static const sy_attr_def a_catmap[] = {A("cats_int64s", INTS), A("cats_strings", STRINGS), A("default_int64", INT),
                                       A("default_string", STRING)};
static const sy_attr_def a_fv[] = {A("inputdimensions", INTS)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), ML, "LinearClassifier", 1, 1, 1, 2, 2, SY_ATTRS(a_lincls), infer_lincls, SY_NO_INPLACE, 0,
     "linear classifier: labels and scores"},
    {sizeof(sy_op_schema), ML, "CategoryMapper", 1, 1, 1, 1, 1, SY_ATTRS(a_catmap), infer_catmap, SY_NO_INPLACE, 0,
     "strings <-> int64 through two category lists"},
    {sizeof(sy_op_schema), ML, "FeatureVectorizer", 1, 1, -1, 1, 1, SY_ATTRS(a_fv), infer_fv, SY_NO_INPLACE, 0,
     "inputs side by side as float"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), ML, "LinearClassifier", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_lincls, run_lincls,
     sy_release_free, NULL},
    {sizeof(sy_kernel_def), ML, "CategoryMapper", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_STRING) | SY_DT_BIT(SY_DT_INT64), 0,
     0, NULL, prepare_catmap, run_catmap, sy_release_free, NULL},
    {sizeof(sy_kernel_def), ML, "FeatureVectorizer", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_fv, run_fv, NULL,
     NULL},
};

sy_status *ml_linear_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
