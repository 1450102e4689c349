/*
 * The constant operands of TFLite's slicing ops, resolved at prepare time:
 * SLICE's begin and size, STRIDED_SLICE's plan (the SDK's sy_ss_resolve).
 * Shared by cpu_ref's tflite_tensor and the riscv_mcu provider, so both
 * slice the same elements. Header-only, like tfl_params.h.
 */
#ifndef SY_TFL_SLICE_H
#define SY_TFL_SLICE_H

#include "tfl_common.h"

/* constant integer input (shape, axes, paddings...) */
static inline sy_status *tfl_const_ints(const sy_host_api *H, const sy_node *n, uint32_t i, const char *what, int64_t *out, size_t max, int64_t *count)
{
    const sy_tensor *t = H->node_input(n, i);
    /* defined on every path (GCC's -Wmaybe-uninitialized cannot follow SY_TRY) */
    *count = 0;
    if (max)
        out[0] = 0;
    if (!t)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s (input %u) is required", what, i);
    if (!t->data)
        return H->status_new(SY_ERR_DYNAMIC_SHAPE, "%s (input %u) is not known before running", what, i);
    if (t->dtype != SY_DT_INT32 && t->dtype != SY_DT_INT64)
        return H->status_new(SY_ERR_TYPE, "%s must be int32 or int64, got %s", what, sy_dt_name(t->dtype));
    int64_t n_el = sy_tensor_numel(t);
    if (n_el > (int64_t)max)
        return H->status_new(SY_ERR_SHAPE, "%s has %lld values; at most %zu are supported", what, (long long)n_el, max);
    for (int64_t k = 0; k < n_el; k++)
        out[k] = sy_load_i64(t->data, t->dtype, (size_t)k);
    *count = n_el;
    return NULL;
}

/* begin and size of SLICE, resolved */
static inline sy_status *tfl_slice_params(const sy_host_api *H, const sy_node *n, const sy_tensor *x, int64_t *begin, int64_t *size)
{
    int64_t c1 = 0, c2 = 0; /* set by const_ints; gcc -O3 cannot see it */
    SY_TRY(tfl_const_ints(H, n, 1, "begin", begin, SY_MAX_RANK, &c1));
    SY_TRY(tfl_const_ints(H, n, 2, "size", size, SY_MAX_RANK, &c2));
    if (c1 != x->rank || c2 != x->rank)
        return H->status_new(SY_ERR_SHAPE, "begin and size need %d values (got %lld and %lld)", x->rank, (long long)c1,
                   (long long)c2);
    for (int32_t d = 0; d < x->rank; d++) {
        if (size[d] == -1)
            size[d] = x->dims[d] - begin[d];
        if (begin[d] < 0 || size[d] < 0 || begin[d] + size[d] > x->dims[d])
            return H->status_new(SY_ERR_SHAPE, "slice [%lld, +%lld) is outside dimension %d of size %lld", (long long)begin[d],
                       (long long)size[d], d, (long long)x->dims[d]);
    }
    return NULL;
}

/* STRIDED_SLICE's plan, resolved by the SDK's sy_ss_resolve (TF's rules) */
typedef sy_ss_plan tfl_ss_plan;

static inline sy_status *tfl_ss_make(const sy_host_api *H, const sy_node *n, const sy_tensor *x, tfl_ss_plan *p)
{
    int64_t b[SY_MAX_RANK], e[SY_MAX_RANK], s[SY_MAX_RANK], c1 = 0, c2 = 0, c3 = 0;
    SY_TRY(tfl_const_ints(H, n, 1, "begin", b, SY_MAX_RANK, &c1));
    SY_TRY(tfl_const_ints(H, n, 2, "end", e, SY_MAX_RANK, &c2));
    SY_TRY(tfl_const_ints(H, n, 3, "strides", s, SY_MAX_RANK, &c3));
    if (c1 != c2 || c1 != c3)
        return H->status_new(SY_ERR_SHAPE, "begin, end and strides have %lld, %lld and %lld values", (long long)c1,
                   (long long)c2, (long long)c3);
    sy_ss_spec spec = {.n = (int32_t)c1, .begin = b, .end = e, .strides = s,
                       .begin_mask = sy_attr_int_or(H, n, "begin_mask", 0),
                       .end_mask = sy_attr_int_or(H, n, "end_mask", 0),
                       .ellipsis_mask = sy_attr_int_or(H, n, "ellipsis_mask", 0),
                       .new_axis_mask = sy_attr_int_or(H, n, "new_axis_mask", 0),
                       .shrink_axis_mask = sy_attr_int_or(H, n, "shrink_axis_mask", 0),
                       .offset = sy_attr_int_or(H, n, "offset", 0) != 0};
    char why[160];
    sy_status_code code = sy_ss_resolve(x->rank, x->dims, &spec, p, why, sizeof why);
    return code ? H->status_new(code, "STRIDED_SLICE: %s", why) : NULL;
}

#endif
