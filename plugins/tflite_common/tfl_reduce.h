/*
 * Parameters of tflk_reduce.c's kernels from a TFLite node: MEAN SUM
 * REDUCE_MAX REDUCE_MIN REDUCE_PROD (tflk_reduce), ARG_MAX ARG_MIN CUMSUM
 * TOPK_V2 L2_NORMALIZATION (tflk_axisop), fp32 and int8. Shared by cpu_ref's
 * tflite_math / tflite_nn and riscv_mcu, so the host reference, the MCU's
 * host run and a generated package run one kernel with one set of values.
 * Header-only, like tfl_params.h.
 */
#ifndef SY_TFL_REDUCE_H
#define SY_TFL_REDUCE_H

#include "tfl_params.h"
#include "tfl_unary8.h"

#include <math.h>

/* the reduced dims: input 1, a constant non-empty list in [-rank, rank) */
static inline sy_status *tfl_reduce_mask(const sy_host_api *H, const sy_node *n, const sy_tensor *x, uint32_t *mask)
{
    const sy_tensor *at = H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL;
    if (!at || !at->data)
        return H->status_new(at ? SY_ERR_DYNAMIC_SHAPE : SY_ERR_INVALID_ARGUMENT, "%s: axes must be a constant",
                             H->node_op(n));
    int64_t cnt = sy_tensor_numel(at);
    if (cnt < 1)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "%s: axes must not be empty", H->node_op(n));
    *mask = 0;
    for (int64_t i = 0; i < cnt; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, sy_load_i64(at->data, at->dtype, (size_t)i), x->rank, false, "axes", &a));
        *mask |= 1u << a;
    }
    return NULL;
}

static inline int32_t tfl_reduce_kind(const char *op)
{
    return !strcmp(op, "MEAN")         ? TFLK_R_MEAN
           : !strcmp(op, "SUM")        ? TFLK_R_SUM
           : !strcmp(op, "REDUCE_MAX") ? TFLK_R_MAX
           : !strcmp(op, "REDUCE_MIN") ? TFLK_R_MIN
           : !strcmp(op, "REDUCE_PROD") ? TFLK_R_PROD
                                        : -1;
}

/* fp32 or int8 (TFLite's integer arithmetic, tflk.h) */
static inline sy_status *tfl_build_reduce(const sy_host_api *H, const sy_node *n, tflk_reduce *p)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    const char *op = H->node_op(n);
    memset(p, 0, sizeof *p);
    p->kind = tfl_reduce_kind(op);
    uint32_t mask = 0;
    SY_TRY(tfl_reduce_mask(H, n, x, &mask));
    if (x->rank > 32 || tflk_reduce_plan(p, x->rank, x->dims, mask))
        return H->status_new(SY_ERR_UNSUPPORTED, "%s: input '%s' needs more than %d kept or reduced dims, or has more "
                             "than 2^31 - 1 elements", op, x->name ? x->name : "", TFLK_BIN_RANK);
    if (x->dtype == SY_DT_FLOAT32)
        return NULL;
    if (x->dtype != SY_DT_INT8)
        return H->status_new(SY_ERR_TYPE, "%s: the kernel takes fp32 or int8, got %s", op, sy_dt_name(x->dtype));
    p->mode = TFLK_RQ_TFL8;
    if (!tfl_qparams(x, &p->xs, &p->xz) || !tfl_qparams(y, &p->ys, &p->yz))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s needs per-tensor quantization", op);
    int32_t same = p->xs == p->ys && p->xz == p->yz;
    p->raw = p->kind == TFLK_R_MEAN || p->kind == TFLK_R_SUM ||
             ((p->kind == TFLK_R_MAX || p->kind == TFLK_R_MIN) && same);
    p->r8.same = same;
    p->r8.in_zp = p->xz;
    p->r8.out_zp = p->yz;
    p->r8.scale = p->xs / p->ys; /* float, as TFLite */
    if (p->kind != TFLK_R_PROD)
        return NULL;
    SY_TRY(tfl_q8_check(H, n, "input", p->xs, p->xz));
    SY_TRY(tfl_q8_check(H, n, "output", p->ys, p->yz));
    /* reduce.cc PrepareProd: every multiplication step rescales by
     * in_scale / out_scale^(1/n), n = numel(in) / numel(out) */
    int64_t nx = sy_tensor_numel(x), ny = sy_tensor_numel(y);
    if (nx == 0 || ny == 0 || nx / ny > INT32_MAX)
        return H->status_new(SY_ERR_UNSUPPORTED, "int8 REDUCE_PROD of %lld elements into %lld: TFLite's kernel needs a "
                             "non-empty reduction of at most 2^31 - 1 elements", (long long)nx, (long long)ny);
    int cnt = (int)(nx / ny);
    double scaling = (double)p->xs / pow((double)p->ys, 1.0 / cnt);
    p->p8.in_zp = p->xz;
    p->p8.out_zp = p->yz;
    sy_q_quantize_multiplier(scaling, &p->p8.mult, &p->p8.shift);
    if (p->p8.shift < -31 || p->p8.shift > 7)
        return H->status_new(SY_ERR_UNSUPPORTED,
                             "int8 REDUCE_PROD: the step scaling %g (input scale %g over the %d-th root of output scale "
                             "%g) needs a shift of %d, outside TFLite's [-31, 7]",
                             scaling, (double)p->xs, cnt, (double)p->ys, (int)p->p8.shift);
    return NULL;
}

/* [outer, len, inner] around `axis` of t, int32 */
static inline sy_status *tfl_axis_split(const sy_host_api *H, const sy_node *n, const sy_tensor *t, int32_t axis,
                                        tflk_axisop *p)
{
    if (sy_tensor_numel(t) > INT32_MAX)
        return H->status_new(SY_ERR_UNSUPPORTED, "%s: tensor '%s' has more than 2^31 - 1 elements", H->node_op(n),
                             t->name ? t->name : "");
    p->outer = (int32_t)sy_dims_prod(t->dims, 0, axis);
    p->len = (int32_t)t->dims[axis];
    p->inner = (int32_t)sy_dims_prod(t->dims, axis + 1, t->rank);
    return NULL;
}

/* a constant scalar axis in input `in` */
static inline sy_status *tfl_const_axis(const sy_host_api *H, const sy_node *n, const sy_tensor *x, uint32_t in,
                                        int32_t *axis)
{
    const sy_tensor *at = in < H->node_num_inputs(n) ? H->node_input(n, in) : NULL;
    if (!at || !at->data || sy_tensor_numel(at) != 1)
        return H->status_new(at && !at->data ? SY_ERR_DYNAMIC_SHAPE : SY_ERR_INVALID_ARGUMENT,
                             "%s: axis must be a constant scalar", H->node_op(n));
    return sy_norm_axis(H, sy_load_i64(at->data, at->dtype, 0), x->rank, false, "axis", axis);
}

/* the input's real-valued mode: fp32, or int8 with its quantization and the output's */
static inline sy_status *tfl_axis_q(const sy_host_api *H, const sy_node *n, const sy_tensor *x, const sy_tensor *y,
                                    tflk_axisop *p)
{
    if (x->dtype == SY_DT_FLOAT32)
        return NULL;
    if (x->dtype != SY_DT_INT8)
        return H->status_new(SY_ERR_TYPE, "%s: the kernel takes fp32 or int8, got %s", H->node_op(n),
                             sy_dt_name(x->dtype));
    p->mode = TFLK_RQ_TFL8;
    if (!tfl_qparams(x, &p->xs, &p->xz) || (y && !tfl_qparams(y, &p->ys, &p->yz)))
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 %s needs per-tensor quantization", H->node_op(n));
    return NULL;
}

/* ARG_MAX ARG_MIN CUMSUM TOPK_V2 L2_NORMALIZATION */
static inline sy_status *tfl_build_axisop(const sy_host_api *H, const sy_node *n, tflk_axisop *p)
{
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    const char *op = H->node_op(n);
    memset(p, 0, sizeof *p);
    p->act.lo = -INFINITY;
    p->act.hi = INFINITY;
    int32_t axis = x->rank - 1;
    if (!strcmp(op, "ARG_MAX") || !strcmp(op, "ARG_MIN")) {
        p->op = op[4] == 'M' && op[5] == 'A' ? TFLK_A_ARGMAX : TFLK_A_ARGMIN;
        SY_TRY(tfl_const_axis(H, n, x, 1, &axis));
        if (x->dtype != SY_DT_FLOAT32)
            return H->status_new(SY_ERR_TYPE, "%s: the kernel takes fp32 input, got %s", op, sy_dt_name(x->dtype));
        if (y->dtype != SY_DT_INT32 && y->dtype != SY_DT_INT64)
            return H->status_new(SY_ERR_TYPE, "%s: the output is int32 or int64", op);
        p->idx64 = y->dtype == SY_DT_INT64;
        return tfl_axis_split(H, n, x, axis, p);
    }
    if (!strcmp(op, "CUMSUM")) {
        p->op = TFLK_A_CUMSUM;
        SY_TRY(tfl_const_axis(H, n, x, 1, &axis));
        p->flags = (sy_attr_int_or(H, n, "exclusive", 0) != 0) | (sy_attr_int_or(H, n, "reverse", 0) != 0) << 1;
        SY_TRY(tfl_axis_q(H, n, x, y, p));
        return tfl_axis_split(H, n, x, axis, p);
    }
    if (!strcmp(op, "TOPK_V2")) {
        p->op = TFLK_A_TOPK;
        if (x->rank < 1 || (x->dtype != SY_DT_FLOAT32 && x->dtype != SY_DT_INT8))
            return H->status_new(SY_ERR_TYPE, "TOPK_V2: the kernel takes fp32 or int8 input of rank >= 1");
        p->mode = x->dtype == SY_DT_INT8 ? TFLK_RQ_TFL8 : TFLK_RQ_F32; /* int8: the codes compared and copied */
        p->esize = (int32_t)sy_dt_size(x->dtype);
        p->k = (int32_t)y->dims[y->rank - 1];
        p->idx64 = H->node_num_outputs(n) > 1 && H->node_output(n, 1)->dtype == SY_DT_INT64;
        return tfl_axis_split(H, n, x, axis, p);
    }
    /* L2_NORMALIZATION: the last axis */
    p->op = TFLK_A_L2NORM;
    if (x->rank < 1)
        return H->status_new(SY_ERR_SHAPE, "L2_NORMALIZATION: the input needs rank >= 1");
    SY_TRY(tfl_act_of(H, n, "NONE", &p->act));
    SY_TRY(tfl_axis_q(H, n, x, y, p));
    return tfl_axis_split(H, n, x, axis, p);
}

#endif
