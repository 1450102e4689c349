/*
 * TensorScatter (24): writes a key/value-cache update into the cache.
 * present = past_cache with update[b] placed along `axis` (default -2) at
 * positions write_indices[b] + i (0 without write_indices); mode "linear"
 * requires them inside the cache, "circular" wraps them modulo its length.
 * Every dim but axis must agree between past_cache and update.
 */
#include "tensor_internal.h"

#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

typedef struct ts_state {
    int32_t axis;
    bool circular;
} ts_state;

static sy_status *ts_check(const sy_node *n, ts_state *s)
{
    const sy_tensor *past, *upd;
    SY_TRY(sy_need_input(H, n, 0, &past));
    SY_TRY(sy_need_input(H, n, 1, &upd));
    if (upd->dtype != past->dtype)
        return ERR(SY_ERR_TYPE, "update (%s) must have past_cache's dtype (%s)", sy_dt_name(upd->dtype),
                   sy_dt_name(past->dtype));
    if (!sy_dt_size(past->dtype))
        return ERR(SY_ERR_TYPE, "TensorScatter of %s is not supported", sy_dt_name(past->dtype));
    if (past->rank < 2 || upd->rank != past->rank)
        return ERR(SY_ERR_SHAPE, "past_cache and update must have one rank >= 2, got %d and %d", past->rank, upd->rank);
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -2), past->rank, false, "axis", &s->axis));
    if (s->axis == 0)
        return ERR(SY_ERR_INVALID_MODEL, "axis must not be the batch axis 0");
    for (int32_t d = 0; d < past->rank; d++)
        if (d != s->axis && upd->dims[d] != past->dims[d])
            return ERR(SY_ERR_SHAPE, "update dim %d is %lld, past_cache's %lld", (int)d, (long long)upd->dims[d],
                       (long long)past->dims[d]);
    if (upd->dims[s->axis] > past->dims[s->axis])
        return ERR(SY_ERR_SHAPE, "update has %lld positions on axis %d, the cache only %lld",
                   (long long)upd->dims[s->axis], (int)s->axis, (long long)past->dims[s->axis]);
    char mode[12];
    sy_attr_string_or(H, n, "mode", "linear", mode, sizeof mode);
    if (strcmp(mode, "linear") && strcmp(mode, "circular"))
        return ERR(SY_ERR_INVALID_MODEL, "mode must be \"linear\" or \"circular\", got \"%s\"", mode);
    s->circular = !strcmp(mode, "circular");
    const sy_tensor *wi = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (wi && (wi->dtype != SY_DT_INT64 || wi->rank != 1 || wi->dims[0] != past->dims[0]))
        return ERR(SY_ERR_SHAPE, "write_indices must be int64 [%lld]", (long long)past->dims[0]);
    return NULL;
}

static sy_status *infer_ts(sy_node *n)
{
    ts_state s;
    SY_TRY(ts_check(n, &s));
    const sy_tensor *past = H->node_input(n, 0);
    return H->node_set_output(n, 0, past->dtype, past->rank, past->dims);
}

static sy_status *prepare_ts(sy_node *n, void **state)
{
    ts_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = ts_check(n, s);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_ts(void *state, const sy_kernel_io *io)
{
    const ts_state *s = state;
    const sy_tensor *past = io->inputs[0], *upd = io->inputs[1];
    const sy_tensor *wi = io->n_inputs > 2 ? io->inputs[2] : NULL;
    sy_tensor *y = io->outputs[0];
    if (y->data != past->data)
        memcpy(y->data, past->data, past->nbytes);
    size_t es = sy_dt_size(past->dtype);
    int64_t B = past->dims[0], L = past->dims[s->axis], U = upd->dims[s->axis];
    int64_t mid = sy_dims_prod(past->dims, 1, s->axis), inner = sy_dims_prod(past->dims, s->axis + 1, past->rank);
    size_t row = (size_t)inner * es;
    for (int64_t b = 0; b < B; b++) {
        int64_t start = wi ? ((const int64_t *)wi->data)[b] : 0;
        if (!s->circular && (start < 0 || start + U > L))
            return ERR(SY_ERR_RUNTIME, "write_indices[%lld] = %lld: positions %lld..%lld leave the cache of %lld",
                       (long long)b, (long long)start, (long long)start, (long long)(start + U - 1), (long long)L);
        for (int64_t m = 0; m < mid; m++)
            for (int64_t i = 0; i < U; i++) {
                int64_t pos = start + i;
                if (s->circular)
                    pos = ((pos % L) + L) % L;
                memcpy((char *)y->data + (size_t)(((b * mid + m) * L + pos)) * row,
                       (const char *)upd->data + (size_t)(((b * mid + m) * U + i)) * row, row);
            }
    }
    return NULL;
}

static const sy_attr_def a_ts[] = {{"axis", SY_ATTR_INT, false}, {"mode", SY_ATTR_STRING, false}};
static const sy_inplace_pair ip00[] = {{0, 0, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("TensorScatter", 24, 2, 3, 1, 1, SY_ATTRS(a_ts), infer_ts, SY_INPLACE(ip00), 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("TensorScatter", 1, 0, 0, 0, prepare_ts, run_ts, sy_release_free),
};

sy_status *tensor_cache_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
