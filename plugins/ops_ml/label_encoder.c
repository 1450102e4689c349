/*
 * LabelEncoder (ai.onnx.ml 2 and 4): Y[i] = values[j] where keys[j] == X[i],
 * else the default.
 *
 * Keys and values come from keys_strings / keys_int64s / keys_floats and
 * values_strings / values_int64s / values_floats (2), or, from opset 4, from
 * keys_tensor / values_tensor (string, int64, int32, int16, float, double),
 * exactly one of each. X has the keys' type, Y the values'. The default is
 * default_tensor (4, one element), else default_string ("_Unused"),
 * default_int64 (-1) or default_float (-0.0) by Y's type. Float keys match
 * by value, and NaN matches a NaN key (as in ONNX Runtime); a key given
 * twice maps to its first value. Lookups go through a sorted copy of the
 * keys. String outputs are copied into the run's string heap: the
 * attributes may go away with the model before the outputs are read.
 */
#include "ml_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

/* one typed array read from an attribute (borrowed) */
typedef struct typed {
    sy_dtype dt;
    size_t n;
    const void *data;      /* numbers: dt elements; strings: sy_string records */
    sy_string *strs;       /* strings from a STRINGS attribute: records made here (owned) */
} typed;

typedef struct le_state {
    sy_dtype kdt, vdt;
    size_t n;
    uint32_t *order;       /* key indices sorted by key, first occurrence first among equals */
    void *keys, *values;   /* copies: numbers as stored, strings as records into `text` */
    unsigned char dflt[16];/* the default (a record for strings, into `text`) */
    char *text;
    bool nan_key;          /* some key is NaN: its first index in nan_index */
    size_t nan_index;
} le_state;

static bool le_type_ok(sy_dtype dt)
{
    return dt == SY_DT_STRING || dt == SY_DT_INT64 || dt == SY_DT_INT32 || dt == SY_DT_INT16 || dt == SY_DT_FLOAT32 ||
           dt == SY_DT_FLOAT64;
}

/* keys_* or values_* (prefix "keys" / "values"); exactly one source */
static sy_status *read_side(const sy_node *n, const char *prefix, typed *t)
{
    memset(t, 0, sizeof *t);
    char name[32];
    int found = 0;
    const char *const *ss;
    const int64_t *is;
    const float *fs;
    const sy_tensor *tt;
    size_t c;
    snprintf(name, sizeof name, "%s_strings", prefix);
    if (H->attr_strings(n, name, &ss, &c)) {
        found++;
        t->dt = SY_DT_STRING;
        t->n = c;
        t->strs = calloc(c ? c : 1, sizeof *t->strs);
        if (!t->strs)
            return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t i = 0; i < c; i++) {
            t->strs[i].data = ss[i];
            t->strs[i].size = strlen(ss[i]);
        }
        t->data = t->strs;
    }
    snprintf(name, sizeof name, "%s_int64s", prefix);
    if (H->attr_ints(n, name, &is, &c)) {
        found++;
        t->dt = SY_DT_INT64, t->n = c, t->data = is;
    }
    snprintf(name, sizeof name, "%s_floats", prefix);
    if (H->attr_floats(n, name, &fs, &c)) {
        found++;
        t->dt = SY_DT_FLOAT32, t->n = c, t->data = fs;
    }
    snprintf(name, sizeof name, "%s_tensor", prefix);
    if (H->attr_tensor(n, name, &tt) && tt) {
        found++;
        if (H->node_opset(n) < 4)
            return ERR(SY_ERR_INVALID_MODEL, "%s is an attribute of LabelEncoder 4, the node is opset %d", name,
                       (int)H->node_opset(n));
        if (!le_type_ok(tt->dtype))
            return ERR(SY_ERR_TYPE, "%s is %s; string, int64, int32, int16, float or double is supported", name,
                       sy_dt_name(tt->dtype));
        t->dt = tt->dtype, t->n = (size_t)sy_tensor_numel(tt), t->data = tt->data;
    }
    if (found != 1)
        return ERR(SY_ERR_INVALID_MODEL, "exactly one of %s_strings, %s_int64s, %s_floats, %s_tensor is needed, %d given",
                   prefix, prefix, prefix, prefix, found);
    return NULL;
}

static void free_side(typed *t) { free(t->strs); }

static size_t el_size(sy_dtype dt) { return dt == SY_DT_STRING ? sizeof(sy_string) : sy_dt_size(dt); }

static bool is_float(sy_dtype dt) { return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT64; }

static double num_at(sy_dtype dt, const void *d, size_t i)
{
    switch (dt) {
    case SY_DT_FLOAT32: return ((const float *)d)[i];
    case SY_DT_FLOAT64: return ((const double *)d)[i];
    default: return 0;
    }
}

static int64_t int_at(sy_dtype dt, const void *d, size_t i)
{
    switch (dt) {
    case SY_DT_INT64: return ((const int64_t *)d)[i];
    case SY_DT_INT32: return ((const int32_t *)d)[i];
    case SY_DT_INT16: return ((const int16_t *)d)[i];
    default: return 0;
    }
}

/* <0, 0, >0 between element i of keys and element j (NaN sorts last) */
static int cmp_keys(sy_dtype dt, const void *a, size_t i, const void *b, size_t j)
{
    if (dt == SY_DT_STRING) {
        const sy_string *x = &((const sy_string *)a)[i], *y = &((const sy_string *)b)[j];
        size_t m = x->size < y->size ? (size_t)x->size : (size_t)y->size;
        int c = m ? memcmp(x->data, y->data, m) : 0;
        return c ? c : (x->size > y->size) - (x->size < y->size);
    }
    if (is_float(dt)) {
        double x = num_at(dt, a, i), y = num_at(dt, b, j);
        if (isnan(x) || isnan(y))
            return isnan(x) - isnan(y);
        return (x > y) - (x < y);
    }
    int64_t x = int_at(dt, a, i), y = int_at(dt, b, j);
    return (x > y) - (x < y);
}

/* merge sort of key indices (stable: the first of equal keys stays first) */
static void sort_idx(const le_state *s, uint32_t *v, uint32_t *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    sort_idx(s, v, tmp, h);
    sort_idx(s, v + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = cmp_keys(s->kdt, s->keys, v[j], s->keys, v[i]) < 0 ? v[j++] : v[i++];
    while (i < h)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
}

static sy_status *default_of(const sy_node *n, sy_dtype vdt, unsigned char *out, sy_string *sdef)
{
    const sy_tensor *dt;
    if (H->node_opset(n) >= 4 && H->attr_tensor(n, "default_tensor", &dt) && dt) {
        if (dt->dtype != vdt || sy_tensor_numel(dt) != 1)
            return ERR(SY_ERR_INVALID_MODEL, "default_tensor must hold one %s (the values' type), it is %s with %lld "
                       "elements", sy_dt_name(vdt), sy_dt_name(dt->dtype), (long long)sy_tensor_numel(dt));
        if (vdt == SY_DT_STRING)
            *sdef = *(const sy_string *)dt->data;
        else
            memcpy(out, dt->data, el_size(vdt));
        return NULL;
    }
    if (vdt == SY_DT_STRING) {
        const char *s;
        size_t len;
        if (H->attr_string(n, "default_string", &s, &len))
            sdef->data = s, sdef->size = len;
        else
            sdef->data = "_Unused", sdef->size = 7;
        return NULL;
    }
    if (is_float(vdt)) {
        float f = sy_attr_float_or(H, n, "default_float", -0.0f);
        double d = f;
        if (vdt == SY_DT_FLOAT32)
            memcpy(out, &f, 4);
        else
            memcpy(out, &d, 8);
        return NULL;
    }
    int64_t v = sy_attr_int_or(H, n, "default_int64", -1);
    int32_t v32 = (int32_t)v;
    int16_t v16 = (int16_t)v;
    memcpy(out, vdt == SY_DT_INT64 ? (void *)&v : vdt == SY_DT_INT32 ? (void *)&v32 : (void *)&v16, el_size(vdt));
    return NULL;
}

static sy_status *infer_le(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    typed k, v;
    sy_status *st = read_side(n, "keys", &k);
    if (!st)
        st = read_side(n, "values", &v);
    else
        memset(&v, 0, sizeof v);
    if (!st && k.n != v.n)
        st = ERR(SY_ERR_INVALID_MODEL, "%zu keys but %zu values", k.n, v.n);
    if (!st && x->dtype != k.dt)
        st = ERR(SY_ERR_TYPE, "X is %s but the keys are %s", sy_dt_name(x->dtype), sy_dt_name(k.dt));
    sy_dtype vdt = v.dt;
    free_side(&k);
    free_side(&v);
    if (st)
        return st;
    return H->node_set_output(n, 0, vdt, x->rank, x->dims);
}

static void release_le(void *state)
{
    le_state *s = state;
    if (!s)
        return;
    free(s->order);
    free(s->keys);
    free(s->values);
    free(s->text);
    free(s);
}

/* copy n elements of t (strings: records into *cursor text) */
static void *copy_side(const typed *t, char **cursor)
{
    size_t es = el_size(t->dt);
    void *out = malloc(t->n * es + 1);
    if (!out)
        return NULL;
    if (t->dt != SY_DT_STRING) {
        if (t->n)
            memcpy(out, t->data, t->n * es);
        return out;
    }
    const sy_string *src = t->data;
    sy_string *dst = out;
    for (size_t i = 0; i < t->n; i++) {
        if (src[i].size)
            memcpy(*cursor, src[i].data, (size_t)src[i].size);
        dst[i].data = *cursor;
        dst[i].size = src[i].size;
        *cursor += src[i].size;
    }
    return out;
}

static size_t text_of(const typed *t)
{
    size_t n = 0;
    for (size_t i = 0; t->dt == SY_DT_STRING && i < t->n; i++)
        n += (size_t)((const sy_string *)t->data)[i].size;
    return n;
}

static sy_status *prepare_le(sy_node *n, void **state)
{
    typed k, v;
    memset(&v, 0, sizeof v);
    sy_status *st = read_side(n, "keys", &k);
    if (!st)
        st = read_side(n, "values", &v);
    le_state *s = st ? NULL : calloc(1, sizeof *s);
    if (!st && !s)
        st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_string sdef = {"", 0};
    if (!st) {
        s->kdt = k.dt, s->vdt = v.dt, s->n = k.n;
        st = default_of(n, v.dt, s->dflt, &sdef);
    }
    if (!st) {
        size_t text = text_of(&k) + text_of(&v) + (size_t)sdef.size;
        s->text = malloc(text ? text : 1);
        char *cur = s->text;
        s->keys = s->text ? copy_side(&k, &cur) : NULL;
        s->values = s->keys ? copy_side(&v, &cur) : NULL;
        s->order = malloc((k.n ? k.n : 1) * sizeof *s->order);
        uint32_t *tmp = malloc((k.n ? k.n : 1) * sizeof *tmp);
        if (!s->values || !s->order || !tmp || k.n > UINT32_MAX) {
            st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            if (v.dt == SY_DT_STRING) {
                if (sdef.size)
                    memcpy(cur, sdef.data, (size_t)sdef.size);
                sy_string d = {cur, sdef.size};
                memcpy(s->dflt, &d, sizeof d);
            }
            for (size_t i = 0; i < k.n; i++)
                s->order[i] = (uint32_t)i;
            sort_idx(s, s->order, tmp, k.n);
            for (size_t i = 0; is_float(k.dt) && i < k.n; i++)
                if (isnan(num_at(k.dt, s->keys, i))) {
                    s->nan_key = true;
                    s->nan_index = i;
                    break;
                }
        }
        free(tmp);
    }
    free_side(&k);
    free_side(&v);
    if (st) {
        release_le(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* index of the value for element i of x, or -1 */
static int64_t lookup(const le_state *s, const void *x, size_t i)
{
    if (is_float(s->kdt) && isnan(num_at(s->kdt, x, i)))
        return s->nan_key ? (int64_t)s->nan_index : -1;
    size_t lo = 0, hi = s->n;
    while (lo < hi) { /* the first sorted position whose key is >= x[i] */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_keys(s->kdt, s->keys, s->order[mid], x, i) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && cmp_keys(s->kdt, s->keys, s->order[lo], x, i) == 0 ? (int64_t)s->order[lo] : -1;
}

static sy_status *run_le(void *state, const sy_kernel_io *io)
{
    const le_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t n = (size_t)sy_tensor_numel(x), es = el_size(s->vdt);
    unsigned char *o = y->data;
    size_t text = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t j = lookup(s, x->data, i);
        memcpy(o + i * es, j >= 0 ? (const unsigned char *)s->values + (size_t)j * es : s->dflt, es);
        if (s->vdt == SY_DT_STRING)
            text += (size_t)((const sy_string *)(o + i * es))->size;
    }
    if (s->vdt != SY_DT_STRING)
        return NULL;
    /* the records point into the state: give the output its own text */
    char *p;
    SY_TRY(sy_str_alloc(H, io, text, &p));
    sy_string *r = y->data;
    for (size_t i = 0; i < n; i++) {
        if (r[i].size)
            memcpy(p, r[i].data, (size_t)r[i].size);
        r[i].data = p;
        p += r[i].size;
    }
    return NULL;
}

#define ML "ai.onnx.ml"
#define A(nm, t) {nm, SY_ATTR_##t, false}
static const sy_attr_def a_le2[] = {A("default_float", FLOAT), A("default_int64", INT),  A("default_string", STRING),
                                    A("keys_floats", FLOATS),  A("keys_int64s", INTS),   A("keys_strings", STRINGS),
                                    A("values_floats", FLOATS), A("values_int64s", INTS), A("values_strings", STRINGS)};
static const sy_attr_def a_le4[] = {A("default_float", FLOAT),  A("default_int64", INT),   A("default_string", STRING),
                                    A("default_tensor", TENSOR), A("keys_floats", FLOATS),  A("keys_int64s", INTS),
                                    A("keys_strings", STRINGS),  A("keys_tensor", TENSOR),  A("values_floats", FLOATS),
                                    A("values_int64s", INTS),    A("values_strings", STRINGS), A("values_tensor", TENSOR)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), ML, "LabelEncoder", 2, 1, 1, 1, 1, SY_ATTRS(a_le2), infer_le, SY_NO_INPLACE, 0,
     "maps keys to values (strings, int64, floats)"},
    {sizeof(sy_op_schema), ML, "LabelEncoder", 4, 1, 1, 1, 1, SY_ATTRS(a_le4), infer_le, SY_NO_INPLACE, 0,
     "maps keys to values (also from tensors)"},
};

#define LE_TYPES                                                                                                   \
    (SY_DT_BIT(SY_DT_STRING) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT16) |          \
     SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT64))
static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), ML, "LabelEncoder", 2, 0, "cpu_ref", LE_TYPES, 0, 0, NULL, prepare_le, run_le, release_le,
     NULL},
};

sy_status *ml_label_encoder_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
