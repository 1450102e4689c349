/* sy_sdk: attribute helpers with defaults, infer helpers, registration. */
#include "switchyard/sy_sdk.h"

#include <stdlib.h>

int64_t sy_attr_int_or(const sy_host_api *host, const sy_node *n, const char *name, int64_t def)
{
    int64_t v;
    return host->attr_int(n, name, &v) ? v : def;
}

float sy_attr_float_or(const sy_host_api *host, const sy_node *n, const char *name, float def)
{
    float v;
    return host->attr_float(n, name, &v) ? v : def;
}

const char *sy_attr_string_or(const sy_host_api *host, const sy_node *n, const char *name, const char *def,
                              char *buf, size_t len)
{
    const char *s = NULL;
    size_t sl = 0;
    if (!len)
        return buf;
    if (!host->attr_string(n, name, &s, &sl) || !s) {
        s = def ? def : "";
        sl = strlen(s);
    }
    if (sl >= len)
        sl = len - 1;
    memcpy(buf, s, sl);
    buf[sl] = '\0';
    return buf;
}

bool sy_attr_string_is(const sy_host_api *host, const sy_node *n, const char *name, const char *def,
                       const char *value)
{
    const char *s = NULL;
    size_t sl = 0;
    if (!host->attr_string(n, name, &s, &sl) || !s) {
        s = def ? def : "";
        sl = strlen(s);
    }
    return strlen(value) == sl && memcmp(s, value, sl) == 0;
}

int64_t sy_attr_ints_copy(const sy_host_api *host, const sy_node *n, const char *name, int64_t *out, size_t max)
{
    const int64_t *v = NULL;
    size_t c = 0;
    if (!host->attr_ints(n, name, &v, &c))
        return -1;
    for (size_t i = 0; i < c && i < max; i++)
        out[i] = v[i];
    return (int64_t)c;
}

int64_t sy_attr_floats_copy(const sy_host_api *host, const sy_node *n, const char *name, float *out, size_t max)
{
    const float *v = NULL;
    size_t c = 0;
    if (!host->attr_floats(n, name, &v, &c))
        return -1;
    for (size_t i = 0; i < c && i < max; i++)
        out[i] = v[i];
    return (int64_t)c;
}

bool sy_attr_has(const sy_host_api *host, const sy_node *n, const char *name, sy_attr_type type)
{
    int64_t i;
    float f;
    const char *s;
    size_t c;
    const int64_t *is;
    const float *fs;
    const sy_tensor *t;
    const char *const *ss;
    switch (type) {
    case SY_ATTR_INT: return host->attr_int(n, name, &i);
    case SY_ATTR_FLOAT: return host->attr_float(n, name, &f);
    case SY_ATTR_STRING: return host->attr_string(n, name, &s, &c);
    case SY_ATTR_INTS: return host->attr_ints(n, name, &is, &c);
    case SY_ATTR_FLOATS: return host->attr_floats(n, name, &fs, &c);
    case SY_ATTR_TENSOR: return host->attr_tensor(n, name, &t);
    case SY_ATTR_STRINGS: return host->attr_strings(n, name, &ss, &c);
    default: return false;
    }
}

sy_status *sy_need_input(const sy_host_api *host, const sy_node *n, uint32_t i, const sy_tensor **out)
{
    const sy_tensor *t = i < host->node_num_inputs(n) ? host->node_input(n, i) : NULL;
    if (!t)
        return host->status_new(SY_ERR_INVALID_ARGUMENT, "input %u is required but missing", i);
    *out = t;
    return NULL;
}

sy_status *sy_infer_like_input(const sy_host_api *host, sy_node *n, uint32_t i, uint32_t o, sy_dtype dt)
{
    const sy_tensor *t = NULL;
    SY_TRY(sy_need_input(host, n, i, &t));
    return host->node_set_output(n, o, dt != SY_DT_UNDEFINED ? dt : t->dtype, t->rank, t->dims);
}

sy_status *sy_infer_unary(const sy_host_api *host, sy_node *n) { return sy_infer_like_input(host, n, 0, 0, SY_DT_UNDEFINED); }

sy_status *sy_check_same_dtype(const sy_host_api *host, const sy_node *n, int32_t n_typed)
{
    uint32_t ni = host->node_num_inputs(n);
    if (n_typed >= 0 && (uint32_t)n_typed < ni)
        ni = (uint32_t)n_typed;
    const sy_tensor *first = NULL;
    for (uint32_t i = 0; i < ni; i++) {
        const sy_tensor *t = host->node_input(n, i);
        if (!t)
            continue;
        if (!first)
            first = t;
        else if (t->dtype != first->dtype)
            return host->status_new(SY_ERR_TYPE, "inputs must share one element type: input %u is %s, input 0 is %s", i,
                                    sy_dt_name(t->dtype), sy_dt_name(first->dtype));
    }
    return NULL;
}

sy_status *sy_broadcast_shapes(const sy_host_api *host, uint32_t count, const sy_tensor *const *ts, int32_t *rank,
                               int64_t *dims)
{
    int32_t r = 0;
    for (uint32_t k = 0; k < count; k++)
        if (ts[k] && ts[k]->rank > r)
            r = ts[k]->rank;
    for (int32_t d = 0; d < r; d++)
        dims[d] = 1;
    for (uint32_t k = 0; k < count; k++) {
        const sy_tensor *t = ts[k];
        if (!t)
            continue;
        int32_t off = r - t->rank;
        for (int32_t d = 0; d < t->rank; d++) {
            int64_t a = dims[off + d], b = t->dims[d];
            if (a == b || b == 1)
                continue;
            if (a == 1) {
                dims[off + d] = b;
                continue;
            }
            char s1[96], s2[96];
            sy_shape_str(t->rank, t->dims, s2, sizeof s2);
            sy_shape_str(r, dims, s1, sizeof s1);
            return host->status_new(SY_ERR_SHAPE,
                                    "shapes do not broadcast (numpy rule: dims equal or 1): input %u %s against %s at "
                                    "axis %d",
                                    k, s2, s1, (int)(off + d));
        }
    }
    *rank = r;
    return NULL;
}

sy_status *sy_infer_broadcast(const sy_host_api *host, sy_node *n, sy_dtype dt, int32_t n_same)
{
    uint32_t ni = host->node_num_inputs(n);
    const sy_tensor *ts[64];
    if (ni > 64)
        return host->status_new(SY_ERR_UNSUPPORTED, "at most 64 inputs are supported, got %u", ni);
    for (uint32_t i = 0; i < ni; i++)
        ts[i] = host->node_input(n, i);
    if (!ni || !ts[0])
        return host->status_new(SY_ERR_INVALID_ARGUMENT, "input 0 is required");
    SY_TRY(sy_check_same_dtype(host, n, n_same));
    int32_t r;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(sy_broadcast_shapes(host, ni, ts, &r, dims));
    return host->node_set_output(n, 0, dt != SY_DT_UNDEFINED ? dt : ts[0]->dtype, r, dims);
}

sy_status *sy_register_tables(const sy_host_api *host, sy_plugin *p, const sy_op_schema *schemas, uint32_t n_schemas,
                              const sy_kernel_def *kernels, uint32_t n_kernels)
{
    for (uint32_t i = 0; i < n_schemas; i++)
        SY_TRY(host->register_schema(p, &schemas[i]));
    for (uint32_t i = 0; i < n_kernels; i++)
        SY_TRY(host->register_kernel(p, &kernels[i]));
    return NULL;
}

sy_status *sy_prepare_nothing(sy_node *n, void **state)
{
    (void)n;
    *state = NULL;
    return NULL;
}

void sy_release_free(void *state) { free(state); }

sy_status *sy_run_copy_input0(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *in = io->inputs[0];
    sy_tensor *out = io->outputs[0];
    if (out->data != in->data) {
        size_t n = in->nbytes < out->nbytes ? in->nbytes : out->nbytes;
        if (n)
            memmove(out->data, in->data, n);
    }
    return NULL;
}

static void bcopy_fn(const void *c, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    size_t es = *(const size_t *)c;
    const char *src = in[0];
    char *dst = out;
    if (st[0]) {
        memmove(dst, src, (size_t)n * es);
    } else if (es == 4) {
        uint32_t v;
        memcpy(&v, src, 4);
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * 4, &v, 4);
    } else {
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + (size_t)i * es, src, es);
    }
}

bool sy_broadcast_copy(const sy_tensor *in, sy_tensor *out)
{
    sy_bcast b;
    const sy_tensor *ins[1] = {in};
    if (!sy_bcast_plan(&b, 1, ins, out))
        return false;
    size_t es = sy_dt_size(out->dtype);
    const void *data[1] = {in->data};
    sy_bcast_exec(&b, data, out->data, bcopy_fn, &es);
    return true;
}

sy_status *sy_legacy_broadcast_dims(const sy_host_api *host, const sy_tensor *a, const sy_tensor *b, int64_t axis,
                                    int64_t *out)
{
    int64_t ax = axis < 0 ? a->rank - b->rank : axis;
    if (b->rank > a->rank || ax < 0 || ax + b->rank > a->rank)
        return host->status_new(SY_ERR_SHAPE, "legacy broadcast: B (rank %d) does not fit A (rank %d) at axis %lld",
                                (int)b->rank, (int)a->rank, (long long)ax);
    for (int32_t d = 0; d < a->rank; d++)
        out[d] = 1;
    for (int32_t d = 0; d < b->rank; d++) {
        int64_t bd = b->dims[d], ad = a->dims[ax + d];
        if (bd != ad && bd != 1)
            return host->status_new(SY_ERR_SHAPE, "legacy broadcast: B dim %d (%lld) differs from A dim %lld (%lld)",
                                    (int)d, (long long)bd, (long long)(ax + d), (long long)ad);
        out[ax + d] = bd;
    }
    return NULL;
}
