/*
 * Feature operators of ai.onnx.ml (opset 1), cpu_ref kernels, as the ONNX
 * spec says and, where it is vague, as ONNX Runtime does:
 *
 *   ArrayFeatureExtractor  Z = X[..., Y] (indices on the last axis; a 1-D
 *                          X gives [1, len(Y)] as in ONNX Runtime)
 *   Scaler                 Y = (X - offset) * scale, offset/scale of 1 or C
 *                          values (C = the last axis), float output
 *   Normalizer             rows of [N, C] (or the whole of [C]) by MAX, L1
 *                          or L2; a zero divisor leaves the row as it is
 *   Imputer                X == replaced_value (NaN: isnan) -> imputed
 *                          value (1 or C of them)
 *   OneHotEncoder          X + [len(cats)] floats with a 1 at the
 *                          category; numbers are cast to int64 first;
 *                          zeros=0 makes an unknown category an error
 *   LinearRegressor        Y = X coefficients^T + intercepts, then the
 *                          post_transform (ml.c's, shared with TreeEnsemble)
 *
 * Every refusal names the node and the attribute.
 */
#include "ml_internal.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ML "ai.onnx.ml"
/* refusals: the host prefixes the node's name and op to every message */
#define NERR(n, code, ...) ((void)(n), H->status_new(code, __VA_ARGS__))

/* the feature count: the last axis (a scalar has one) */
static int64_t last_dim(const sy_tensor *x) { return x->rank ? x->dims[x->rank - 1] : 1; }

static bool numeric4(sy_dtype dt)
{
    return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT64 || dt == SY_DT_INT64 || dt == SY_DT_INT32;
}
#define NUM4 (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_INT32))

static sy_status *need_num4(const sy_node *n, const sy_tensor *x)
{
    if (!numeric4(x->dtype))
        return NERR(n, SY_ERR_TYPE, "X must be float, double, int64 or int32, got %s", sy_dt_name(x->dtype));
    return NULL;
}

/* ======================================================================== */
/* ArrayFeatureExtractor                                                    */
/* ======================================================================== */

static sy_status *infer_afe(sy_node *n)
{
    const sy_tensor *x, *y;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &y));
    if (!numeric4(x->dtype) && x->dtype != SY_DT_STRING)
        return NERR(n, SY_ERR_TYPE, "X must be float, double, int64, int32 or string, got %s", sy_dt_name(x->dtype));
    if (y->dtype != SY_DT_INT64)
        return NERR(n, SY_ERR_TYPE, "Y (the indices) must be int64, got %s", sy_dt_name(y->dtype));
    if (x->rank < 1)
        return NERR(n, SY_ERR_SHAPE, "X must have rank >= 1, got %d", x->rank);
    int64_t k = sy_tensor_numel(y);
    if (k < 1)
        return NERR(n, SY_ERR_SHAPE, "Y (the indices) must not be empty, got %lld values", (long long)k);
    int64_t d[SY_MAX_RANK];
    int32_t r = x->rank;
    if (r == 1) { /* ONNX Runtime: a 1-D X is one row */
        d[0] = 1, d[1] = k, r = 2;
    } else {
        memcpy(d, x->dims, (size_t)r * sizeof *d);
        d[r - 1] = k;
    }
    return H->node_set_output(n, 0, x->dtype, r, d);
}

static sy_status *prepare_afe(sy_node *n, void **state)
{
    (void)state;
    /* indices known at plan time are checked here, once */
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_input(n, 1);
    int64_t c = last_dim(x);
    for (int64_t i = 0; y->data && i < sy_tensor_numel(y); i++) {
        int64_t v = ((const int64_t *)y->data)[i];
        if (v < 0 || v >= c)
            return NERR(n, SY_ERR_INVALID_ARGUMENT, "Y[%lld] = %lld is outside the last axis of X (%lld)", (long long)i,
                        (long long)v, (long long)c);
    }
    return NULL;
}

static sy_status *run_afe(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0], *y = io->inputs[1];
    sy_tensor *z = io->outputs[0];
    int64_t c = last_dim(x), k = sy_tensor_numel(y), rows = c ? sy_tensor_numel(x) / c : 0;
    const int64_t *idx = y->data;
    for (int64_t i = 0; i < k; i++)
        if (idx[i] < 0 || idx[i] >= c)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Y[%lld] = %lld is outside the last "
                                 "axis of X (%lld)", (long long)i, (long long)idx[i], (long long)c);
    size_t es = x->dtype == SY_DT_STRING ? sizeof(sy_string) : sy_dt_size(x->dtype);
    const unsigned char *src = x->data;
    unsigned char *dst = z->data;
    size_t text = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < k; i++) {
            memcpy(dst + (size_t)(r * k + i) * es, src + (size_t)(r * c + idx[i]) * es, es);
            if (x->dtype == SY_DT_STRING)
                text += (size_t)((const sy_string *)dst)[r * k + i].size;
        }
    if (x->dtype != SY_DT_STRING)
        return NULL;
    /* the output owns its text: the input's may be overwritten first */
    char *p;
    SY_TRY(sy_str_alloc(H, io, text, &p));
    sy_string *s = z->data;
    for (int64_t i = 0; i < rows * k; i++) {
        if (s[i].size)
            memcpy(p, s[i].data, (size_t)s[i].size);
        s[i].data = p;
        p += s[i].size;
    }
    return NULL;
}

/* ======================================================================== */
/* Scaler                                                                   */
/* ======================================================================== */

typedef struct scaler {
    int64_t n_off, n_scale;
    float *off, *scale;
} scaler;

static void release_scaler(void *p)
{
    scaler *s = p;
    if (s) {
        free(s->off);
        free(s->scale);
    }
    free(s);
}

/* a floats attribute of 1 or c values (absent: one `dflt`) */
static sy_status *floats_1_or_c(const sy_node *n, const char *name, int64_t c, float dflt, float **out, int64_t *cnt)
{
    const float *v = NULL;
    size_t k = 0;
    if (!H->attr_floats(n, name, &v, &k) || k == 0) {
        v = &dflt;
        k = 1;
    }
    if ((int64_t)k != 1 && (int64_t)k != c)
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute %s has %zu values; 1 or %lld (the last axis of X) are needed",
                    name, k, (long long)c);
    *out = malloc(k * sizeof **out);
    if (!*out)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(*out, v, k * sizeof **out);
    *cnt = (int64_t)k;
    return NULL;
}

static sy_status *build_scaler(const sy_node *n, scaler **out)
{
    const sy_tensor *x = H->node_input(n, 0);
    scaler *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = floats_1_or_c(n, "offset", last_dim(x), 0.0f, &s->off, &s->n_off);
    if (!st)
        st = floats_1_or_c(n, "scale", last_dim(x), 1.0f, &s->scale, &s->n_scale);
    if (st) {
        release_scaler(s);
        return st;
    }
    *out = s;
    return NULL;
}

static sy_status *infer_scaler(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(need_num4(n, x));
    scaler *s;
    SY_TRY(build_scaler(n, &s));
    release_scaler(s);
    return H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank, x->dims);
}

static sy_status *prepare_scaler(sy_node *n, void **state)
{
    scaler *s;
    SY_TRY(build_scaler(n, &s));
    *state = s;
    return NULL;
}

static sy_status *run_scaler(void *state, const sy_kernel_io *io)
{
    const scaler *s = state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    int64_t c = last_dim(x), n = sy_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = c ? i % c : 0;
        /* in float, as ONNX Runtime: the output is float */
        float v = (float)sy_load_f64(x->data, x->dtype, (size_t)i);
        y[i] = (v - s->off[s->n_off == 1 ? 0 : j]) * s->scale[s->n_scale == 1 ? 0 : j];
    }
    return NULL;
}

/* ======================================================================== */
/* Normalizer                                                               */
/* ======================================================================== */

enum { NORM_MAX, NORM_L1, NORM_L2 };

static sy_status *norm_of(const sy_node *n, int *out)
{
    const char *s;
    size_t len;
    if (!H->attr_string(n, "norm", &s, &len))
        s = "MAX", len = 3; /* the schema's default */
    static const char *names[] = {"MAX", "L1", "L2"};
    for (int i = 0; i < 3; i++)
        if (len == strlen(names[i]) && !memcmp(s, names[i], len)) {
            *out = i;
            return NULL;
        }
    return NERR(n, SY_ERR_INVALID_MODEL, "attribute norm = '%.*s' is not MAX, L1 or L2", (int)len, s);
}

static sy_status *infer_norm(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(need_num4(n, x));
    if (x->rank != 1 && x->rank != 2)
        return NERR(n, SY_ERR_SHAPE, "X must be [C] or [N, C], got rank %d", x->rank);
    int m;
    SY_TRY(norm_of(n, &m));
    return H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank, x->dims);
}

static sy_status *prepare_norm(sy_node *n, void **state)
{
    int *m = malloc(sizeof *m);
    if (!m)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = norm_of(n, m);
    if (st) {
        free(m);
        return st;
    }
    *state = m;
    return NULL;
}

static sy_status *run_norm(void *state, const sy_kernel_io *io)
{
    int mode = *(const int *)state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    int64_t c = last_dim(x), rows = c ? sy_tensor_numel(x) / c : 0;
    for (int64_t r = 0; r < rows; r++) {
        float *o = y + r * c;
        for (int64_t j = 0; j < c; j++)
            o[j] = (float)sy_load_f64(x->data, x->dtype, (size_t)(r * c + j));
        /* float accumulation, as ONNX Runtime */
        float d = mode == NORM_MAX ? -INFINITY : 0.0f;
        for (int64_t j = 0; j < c; j++)
            d = mode == NORM_MAX ? (o[j] > d ? o[j] : d) : mode == NORM_L1 ? d + fabsf(o[j]) : d + o[j] * o[j];
        if (d == 0.0f || c == 0)
            continue; /* the spec: a zero divisor leaves X */
        for (int64_t j = 0; j < c; j++) {
            if (mode == NORM_L2) /* sqrt(x^2 / sum x^2) keeps x's sign, as in ONNX Runtime */
                o[j] = copysignf(sqrtf(o[j] * o[j] / d), o[j]);
            else
                o[j] = o[j] / d;
        }
    }
    return NULL;
}

/* ======================================================================== */
/* Imputer                                                                  */
/* ======================================================================== */

typedef struct imputer {
    bool is_float;
    int64_t k;
    double *fv;    /* imputed floats */
    int64_t *iv;   /* imputed ints */
    double frep;
    int64_t irep;
} imputer;

static void release_imputer(void *p)
{
    imputer *s = p;
    if (s) {
        free(s->fv);
        free(s->iv);
    }
    free(s);
}

static sy_status *build_imputer(const sy_node *n, imputer **out)
{
    const sy_tensor *x = H->node_input(n, 0);
    bool is_float = x->dtype == SY_DT_FLOAT32 || x->dtype == SY_DT_FLOAT64;
    const float *fs = NULL;
    const int64_t *is = NULL;
    size_t nf = 0, ni = 0;
    bool hf = H->attr_floats(n, "imputed_value_floats", &fs, &nf) && nf;
    bool hi = H->attr_ints(n, "imputed_value_int64s", &is, &ni) && ni;
    if (hf == hi)
        return NERR(n, SY_ERR_INVALID_MODEL, "exactly one of imputed_value_floats and imputed_value_int64s is needed, "
                    "%d given", (int)hf + (int)hi);
    if (hf != is_float)
        return NERR(n, SY_ERR_INVALID_MODEL, "X is %s, so attribute %s is needed, not %s", sy_dt_name(x->dtype),
                    is_float ? "imputed_value_floats" : "imputed_value_int64s",
                    is_float ? "imputed_value_int64s" : "imputed_value_floats");
    int64_t k = (int64_t)(hf ? nf : ni), c = last_dim(x);
    if (k != 1 && k != c)
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute %s has %lld values; 1 or %lld (the last axis of X) are needed",
                    hf ? "imputed_value_floats" : "imputed_value_int64s", (long long)k, (long long)c);
    imputer *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->is_float = is_float;
    s->k = k;
    if (hf) {
        s->fv = malloc((size_t)k * sizeof *s->fv);
        for (int64_t i = 0; s->fv && i < k; i++)
            s->fv[i] = fs[i];
    } else {
        s->iv = malloc((size_t)k * sizeof *s->iv);
        if (s->iv)
            memcpy(s->iv, is, (size_t)k * sizeof *s->iv);
    }
    if (!s->fv && !s->iv) {
        release_imputer(s);
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s->frep = sy_attr_float_or(H, n, "replaced_value_float", 0.0f);
    s->irep = sy_attr_int_or(H, n, "replaced_value_int64", 0);
    *out = s;
    return NULL;
}

static sy_status *infer_imputer(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(need_num4(n, x));
    imputer *s;
    SY_TRY(build_imputer(n, &s));
    release_imputer(s);
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *prepare_imputer(sy_node *n, void **state)
{
    imputer *s;
    SY_TRY(build_imputer(n, &s));
    *state = s;
    return NULL;
}

static sy_status *run_imputer(void *state, const sy_kernel_io *io)
{
    const imputer *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t c = last_dim(x), n = sy_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = s->k == 1 || !c ? 0 : i % c;
        if (s->is_float) {
            double v = sy_load_f64(x->data, x->dtype, (size_t)i);
            bool hit = isnan(s->frep) ? isnan(v) : v == (x->dtype == SY_DT_FLOAT32 ? (double)(float)s->frep : s->frep);
            sy_store_f64(y->data, y->dtype, (size_t)i, hit ? s->fv[j] : v);
        } else if (x->dtype == SY_DT_INT64) {
            int64_t v = ((const int64_t *)x->data)[i];
            ((int64_t *)y->data)[i] = v == s->irep ? s->iv[j] : v;
        } else {
            int32_t v = ((const int32_t *)x->data)[i];
            ((int32_t *)y->data)[i] = v == s->irep ? (int32_t)s->iv[j] : v;
        }
    }
    return NULL;
}

/* ======================================================================== */
/* OneHotEncoder                                                            */
/* ======================================================================== */

typedef struct ohe {
    bool strings;
    int64_t k;
    const int64_t *ints;       /* borrowed: attributes live as long as the session */
    const char *const *strs;
    bool zeros;
} ohe;

static sy_status *build_ohe(const sy_node *n, ohe *o)
{
    const sy_tensor *x = H->node_input(n, 0);
    size_t ni = 0, ns = 0;
    bool hi = H->attr_ints(n, "cats_int64s", &o->ints, &ni) && ni;
    bool hs = H->attr_strings(n, "cats_strings", &o->strs, &ns) && ns;
    if (hi == hs)
        return NERR(n, SY_ERR_INVALID_MODEL, "exactly one of cats_int64s and cats_strings is needed (non-empty), %d "
                    "given", (int)hi + (int)hs);
    o->strings = hs;
    o->k = (int64_t)(hs ? ns : ni);
    if (hs != (x->dtype == SY_DT_STRING))
        return NERR(n, SY_ERR_INVALID_MODEL, "X is %s but the categories are attribute %s", sy_dt_name(x->dtype),
                    hs ? "cats_strings" : "cats_int64s");
    int64_t z = sy_attr_int_or(H, n, "zeros", 1);
    if (z != 0 && z != 1)
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute zeros must be 0 or 1, got %lld", (long long)z);
    o->zeros = z == 1;
    return NULL;
}

static sy_status *infer_ohe(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (!numeric4(x->dtype) && x->dtype != SY_DT_STRING)
        return NERR(n, SY_ERR_TYPE, "X must be string, int64, int32, float or double, got %s", sy_dt_name(x->dtype));
    if (x->rank >= SY_MAX_RANK)
        return NERR(n, SY_ERR_SHAPE, "X has rank %d; the output needs one more axis", x->rank);
    ohe o;
    SY_TRY(build_ohe(n, &o));
    int64_t d[SY_MAX_RANK];
    memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
    d[x->rank] = o.k;
    return H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank + 1, d);
}

static sy_status *prepare_ohe(sy_node *n, void **state)
{
    ohe *o = malloc(sizeof *o);
    if (!o)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = build_ohe(n, o);
    if (st) {
        free(o);
        return st;
    }
    *state = o;
    return NULL;
}

static sy_status *run_ohe(void *state, const sy_kernel_io *io)
{
    const ohe *o = state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(x);
    memset(y, 0, (size_t)(n * o->k) * sizeof *y);
    for (int64_t i = 0; i < n; i++) {
        int64_t hit = -1;
        if (o->strings) {
            const sy_string *s = &((const sy_string *)x->data)[i];
            for (int64_t c = 0; c < o->k && hit < 0; c++)
                if (strlen(o->strs[c]) == s->size && (!s->size || !memcmp(o->strs[c], s->data, (size_t)s->size)))
                    hit = c;
        } else {
            /* numbers are cast to integers (truncation, as ONNX Runtime's static_cast) */
            int64_t v = x->dtype == SY_DT_INT64 ? ((const int64_t *)x->data)[i]
                                                : (int64_t)sy_load_f64(x->data, x->dtype, (size_t)i);
            for (int64_t c = 0; c < o->k && hit < 0; c++)
                if (o->ints[c] == v)
                    hit = c;
        }
        if (hit >= 0)
            y[i * o->k + hit] = 1.0f;
        else if (!o->zeros)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "X[%lld] is not a category and zeros = 0",
                                 (long long)i);
    }
    return NULL;
}

/* ======================================================================== */
/* LinearRegressor                                                          */
/* ======================================================================== */

typedef struct linreg {
    int64_t targets, c;
    const float *coef, *icpt; /* borrowed from the attributes; icpt may be NULL */
    int post;
} linreg;

static sy_status *build_linreg(const sy_node *n, linreg *m)
{
    const sy_tensor *x = H->node_input(n, 0);
    m->c = last_dim(x);
    m->targets = sy_attr_int_or(H, n, "targets", 1);
    if (m->targets < 1)
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute targets must be >= 1, got %lld", (long long)m->targets);
    size_t nc = 0, ni = 0;
    if (!H->attr_floats(n, "coefficients", &m->coef, &nc))
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute coefficients is required");
    if ((int64_t)nc != m->targets * m->c)
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute coefficients has %zu values; targets (%lld) x features (%lld) "
                    "= %lld are needed", nc, (long long)m->targets, (long long)m->c, (long long)(m->targets * m->c));
    if (!H->attr_floats(n, "intercepts", &m->icpt, &ni) || !ni)
        m->icpt = NULL;
    else if ((int64_t)ni != m->targets)
        return NERR(n, SY_ERR_INVALID_MODEL, "attribute intercepts has %zu values; targets = %lld are needed", ni,
                    (long long)m->targets);
    return ml_post_transform_attr(H, n, &m->post);
}

static sy_status *infer_linreg(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(need_num4(n, x));
    if (x->rank != 1 && x->rank != 2)
        return NERR(n, SY_ERR_SHAPE, "X must be [C] or [N, C], got rank %d", x->rank);
    linreg m;
    SY_TRY(build_linreg(n, &m));
    int64_t d[2] = {x->rank == 2 ? x->dims[0] : 1, m.targets};
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 2, d);
}

static sy_status *prepare_linreg(sy_node *n, void **state)
{
    linreg *m = malloc(sizeof *m);
    if (!m)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = build_linreg(n, m);
    if (st) {
        free(m);
        return st;
    }
    H->node_set_scratch(n, (size_t)m->targets * sizeof(double));
    *state = m;
    return NULL;
}

static sy_status *run_linreg(void *state, const sy_kernel_io *io)
{
    const linreg *m = state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    double *acc = io->scratch;
    int64_t rows = m->c ? sy_tensor_numel(x) / m->c : (x->rank == 2 ? x->dims[0] : 1);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t t = 0; t < m->targets; t++) {
            double s = m->icpt ? m->icpt[t] : 0.0;
            for (int64_t j = 0; j < m->c; j++)
                s += (double)m->coef[t * m->c + j] * sy_load_f64(x->data, x->dtype, (size_t)(r * m->c + j));
            acc[t] = s;
        }
        ml_post_transform(m->post, acc, m->targets);
        for (int64_t t = 0; t < m->targets; t++)
            y[r * m->targets + t] = (float)acc[t];
    }
    return NULL;
}

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

#define A(nm, t) {nm, SY_ATTR_##t, false}
static const sy_attr_def a_scaler[] = {A("offset", FLOATS), A("scale", FLOATS)};
static const sy_attr_def a_norm[] = {A("norm", STRING)};
static const sy_attr_def a_imp[] = {A("imputed_value_floats", FLOATS), A("imputed_value_int64s", INTS),
                                    A("replaced_value_float", FLOAT), A("replaced_value_int64", INT)};
static const sy_attr_def a_ohe[] = {A("cats_int64s", INTS), A("cats_strings", STRINGS), A("zeros", INT)};
static const sy_attr_def a_linreg[] = {A("coefficients", FLOATS), A("intercepts", FLOATS), A("post_transform", STRING),
                                       A("targets", INT)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), ML, "ArrayFeatureExtractor", 1, 2, 2, 1, 1, NULL, 0, infer_afe, SY_NO_INPLACE, 0,
     "Z = X[..., Y] on the last axis"},
    {sizeof(sy_op_schema), ML, "Scaler", 1, 1, 1, 1, 1, SY_ATTRS(a_scaler), infer_scaler, SY_NO_INPLACE, 0,
     "Y = (X - offset) * scale"},
    {sizeof(sy_op_schema), ML, "Normalizer", 1, 1, 1, 1, 1, SY_ATTRS(a_norm), infer_norm, SY_NO_INPLACE, 0,
     "rows divided by their MAX, L1 or L2 norm"},
    {sizeof(sy_op_schema), ML, "Imputer", 1, 1, 1, 1, 1, SY_ATTRS(a_imp), infer_imputer, SY_NO_INPLACE, 0,
     "replaced value -> imputed value"},
    {sizeof(sy_op_schema), ML, "OneHotEncoder", 1, 1, 1, 1, 1, SY_ATTRS(a_ohe), infer_ohe, SY_NO_INPLACE, 0,
     "categories to one-hot floats"},
    {sizeof(sy_op_schema), ML, "LinearRegressor", 1, 1, 1, 1, 1, SY_ATTRS(a_linreg), infer_linreg, SY_NO_INPLACE, 0,
     "Y = X coefficients^T + intercepts, post_transform"},
};

#define AFE_TYPES (NUM4 | SY_DT_BIT(SY_DT_STRING))
static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), ML, "ArrayFeatureExtractor", 1, 0, "cpu_ref", AFE_TYPES, 0, 0, NULL, prepare_afe, run_afe,
     NULL, NULL},
    {sizeof(sy_kernel_def), ML, "Scaler", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_scaler, run_scaler,
     release_scaler, NULL},
    {sizeof(sy_kernel_def), ML, "Normalizer", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_norm, run_norm,
     sy_release_free, NULL},
    {sizeof(sy_kernel_def), ML, "Imputer", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_imputer, run_imputer,
     release_imputer, NULL},
    {sizeof(sy_kernel_def), ML, "OneHotEncoder", 1, 0, "cpu_ref", AFE_TYPES, 0, 0, NULL, prepare_ohe, run_ohe,
     sy_release_free, NULL},
    {sizeof(sy_kernel_def), ML, "LinearRegressor", 1, 0, "cpu_ref", NUM4, 0, 0, NULL, prepare_linreg, run_linreg,
     sy_release_free, NULL},
};

sy_status *ml_feat_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
