/*
 * ops_quant: QuantizeLinear (10, 13, 19, 21, 23), DequantizeLinear (10, 13,
 * 19, 21, 23), DynamicQuantizeLinear (11), and the helpers the other files
 * of the family share (parameter checks, requantization mode, clamps).
 *
 * Rounding is ONNX's: x / scale in the scale's precision, rounded half to
 * even, plus the zero point, saturated to the output type. Per-tensor,
 * per-axis and blocked (opset 21) parameters; int8, uint8, int16, uint16,
 * int4, uint4 (packed, low nibble first), int2, uint2 (four per byte) and
 * int32 (Dequantize only). The float8 kinds and float4e2m1 (19, 21, 23)
 * follow the spec's cast form: y = cast(x / scale + zero_point) rounding to
 * nearest even, `saturate` for float8.
 */
#include "quant_internal.h"

/* ======================================================================== */
/* shared helpers                                                           */
/* ======================================================================== */

sy_status *q_check_pair(const sy_tensor *x, const sy_tensor *s, const sy_tensor *z, sy_dtype qdt, int64_t axis_len)
{
    const char *xn = x && x->name ? x->name : "?";
    const char *sn = s && s->name ? s->name : "?";
    if (!s)
        return QERR(SY_ERR_INVALID_MODEL, "tensor '%s': the scale is missing", xn);
    if (!q_is_scale_dtype(s->dtype))
        return QERR(SY_ERR_TYPE, "tensor '%s': scale '%s' has dtype %s; float32, float16 or bfloat16 is required", xn,
                    sn, sy_dt_name(s->dtype));
    int64_t ns = q_numel(s);
    if (axis_len < 0 && ns != 1)
        return QERR(SY_ERR_SHAPE, "tensor '%s': scale '%s' has %lld elements; per-tensor quantization needs 1", xn, sn,
                    (long long)ns);
    if (axis_len >= 0 && ns != 1 && ns != axis_len)
        return QERR(SY_ERR_SHAPE,
                    "tensor '%s': scale '%s' has %lld elements but the quantization axis has length %lld "
                    "(per-axis length mismatch)",
                    xn, sn, (long long)ns, (long long)axis_len);
    if (z) {
        int64_t nz = q_numel(z);
        if (nz != ns)
            return QERR(SY_ERR_SHAPE,
                        "tensor '%s': zero point '%s' has %lld elements, scale '%s' has %lld (they must match)", xn,
                        z->name ? z->name : "?", (long long)nz, sn, (long long)ns);
    }
    if (s->data)
        for (int64_t i = 0; i < ns; i++) {
            float v = q_scale_at(s, (size_t)i);
            if (!(v > 0.0f) || !isfinite(v))
                return QERR(SY_ERR_INVALID_MODEL,
                            "tensor '%s': scale '%s'[%lld] = %g; a quantization scale must be positive and finite",
                            xn, sn, (long long)i, (double)v);
        }
    if (z && z->data) {
        int32_t lo, hi;
        if (!sy_q_storage_range(qdt, &lo, &hi))
            return QERR(SY_ERR_TYPE, "tensor '%s': %s is not a quantized type", xn, sy_dt_name(qdt));
        if (!q_is_qtype(z->dtype))
            return QERR(SY_ERR_TYPE, "tensor '%s': zero point '%s' has dtype %s, which is not an integer type", xn,
                        z->name ? z->name : "?", sy_dt_name(z->dtype));
        for (int64_t i = 0; i < q_numel(z); i++) {
            int32_t v = sy_q_load(z->data, z->dtype, (size_t)i);
            if (v < lo || v > hi)
                return QERR(SY_ERR_INVALID_MODEL,
                            "tensor '%s': zero point '%s'[%lld] = %d is out of the %s range [%d, %d]", xn,
                            z->name ? z->name : "?", (long long)i, v, sy_dt_name(qdt), lo, hi);
        }
    }
    return NULL;
}

sy_status *q_node_rq_mode(const sy_node *n, sy_rq_mode *mode)
{
    const char *s = NULL;
    size_t len = 0;
    *mode = q_env_default_rq(n);
    if (H->attr_string(n, "requant", &s, &len)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < 31 ? len : 31), s);
        if (!sy_rq_mode_parse(buf, mode))
            return QERR(SY_ERR_INVALID_ARGUMENT, "attribute requant = \"%s\": expected \"onnx\", \"gemmlowp\" or \"single_rounding\"", buf);
    }
    return NULL;
}

void q_act_clamp(float act_min, float act_max, float y_scale, int32_t y_zp, sy_dtype ydt, int32_t *lo, int32_t *hi)
{
    sy_q_storage_range(ydt, lo, hi);
    if (isfinite(act_min)) {
        int32_t v = sy_rq_quantize(act_min, y_scale, y_zp, *lo, *hi);
        if (v > *lo)
            *lo = v;
    }
    if (isfinite(act_max)) {
        int32_t v = sy_rq_quantize(act_max, y_scale, y_zp, *lo, *hi);
        if (v < *hi)
            *hi = v;
    }
}

static float bf16r(float v) { return sy_bf16_to_f32(sy_f32_to_bf16(v)); }

double q_mult3(float sa, float sb, float sy, sy_dtype dt)
{
    if (dt == SY_DT_FLOAT16)
        return (double)sy_f16_round(sy_f16_round(sa * sb) / sy);
    if (dt == SY_DT_BFLOAT16)
        return (double)bf16r(bf16r(sa * sb) / sy);
    float m = sa * sb;
    m = m / sy;
    return (double)m;
}

/* ======================================================================== */
/* parameter layout: per tensor, per axis, blocked                          */
/* ======================================================================== */

typedef struct qlayout {
    int mode; /* 0 tensor, 1 axis, 2 block */
    int64_t D, inner, nb, bs;
} qlayout;

static sy_status *q_layout(const sy_tensor *x, const sy_tensor *s, int64_t axis_attr, int64_t block, bool allow_axis,
                           qlayout *L)
{
    memset(L, 0, sizeof *L);
    const char *xn = x->name ? x->name : "?";
    int64_t ns = q_numel(s);
    if (block <= 0 && (s->rank == 0 || (s->rank == 1 && ns == 1))) {
        L->mode = 0;
        return NULL;
    }
    if (!allow_axis)
        return QERR(SY_ERR_SHAPE, "tensor '%s': scale '%s' must be a scalar at this opset", xn,
                    s->name ? s->name : "?");
    int32_t axis;
    SY_TRY(sy_norm_axis(H, axis_attr, x->rank, false, "axis", &axis));
    L->D = x->dims[axis];
    L->inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    if (block > 0) {
        if (s->rank != x->rank)
            return QERR(SY_ERR_SHAPE, "tensor '%s': blocked scale '%s' must have the rank of the input (%d), got %d",
                        xn, s->name ? s->name : "?", (int)x->rank, (int)s->rank);
        int64_t nb = (L->D + block - 1) / block;
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t want = d == axis ? nb : x->dims[d];
            if (s->dims[d] != want)
                return QERR(SY_ERR_SHAPE,
                            "tensor '%s': blocked scale '%s' has %lld on axis %d, %lld expected (block_size %lld)",
                            xn, s->name ? s->name : "?", (long long)s->dims[d], (int)d, (long long)want,
                            (long long)block);
        }
        L->mode = 2;
        L->nb = nb;
        L->bs = block;
        return NULL;
    }
    if (s->rank != 1 || s->dims[0] != L->D)
        return QERR(SY_ERR_SHAPE,
                    "tensor '%s': per-axis scale '%s' has %lld elements but axis %d has length %lld "
                    "(per-axis length mismatch)",
                    xn, s->name ? s->name : "?", (long long)ns, (int)axis, (long long)L->D);
    L->mode = 1;
    return NULL;
}

static inline size_t q_pidx(const qlayout *L, size_t i)
{
    if (L->mode == 0)
        return 0;
    size_t a = (size_t)((int64_t)i / L->inner % L->D);
    if (L->mode == 1)
        return a;
    size_t o = (size_t)((int64_t)i / (L->inner * L->D));
    size_t j = (size_t)((int64_t)i % L->inner);
    return (o * (size_t)L->nb + a / (size_t)L->bs) * (size_t)L->inner + j;
}

/* ======================================================================== */
/* QuantizeLinear / DequantizeLinear                                        */
/* ======================================================================== */

typedef struct qdq_state {
    int64_t axis, block;
    bool allow_axis;
    bool saturate; /* float8 outputs: out-of-range values to +-max (else inf / NaN) */
    sy_dtype out_dt;
} qdq_state;

/* The storage types that are not plain integer codes: the float8 kinds and
 * float4e2m1 (y = cast(x / scale + zero_point) with Cast's rounding and
 * `saturate`), and int2 / uint2 (integer codes, four per byte). Their zero
 * point has their own type and is read as a value. */
static bool q_is_lowbit_q(sy_dtype dt)
{
    return sy_dt_is_float8(dt) || dt == SY_DT_FLOAT4E2M1 || dt == SY_DT_INT2 || dt == SY_DT_UINT2;
}

static double lowbit_zp(const sy_tensor *z, size_t p)
{
    return z ? sy_load_any_f64(z->data, z->dtype, q_numel(z) == 1 ? 0 : p) : 0.0;
}

static sy_dtype q_out_dtype(const sy_node *n)
{
    const sy_tensor *z = q_nin(n, 2);
    if (z)
        return z->dtype;
    int64_t od = sy_attr_int_or(H, n, "output_dtype", 0);
    return od ? (sy_dtype)od : SY_DT_UINT8;
}

static sy_status *qdq_common_check(sy_node *n, bool quantize, qdq_state *st)
{
    const sy_tensor *x, *s;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &s));
    const sy_tensor *z = q_nin(n, 2);
    int32_t opset = H->node_opset(n);
    st->allow_axis = opset >= 13;
    st->axis = sy_attr_int_or(H, n, "axis", 1);
    st->block = sy_attr_int_or(H, n, "block_size", 0);
    if (st->block < 0)
        return QERR(SY_ERR_INVALID_ARGUMENT, "block_size = %lld must be >= 0", (long long)st->block);
    if (!q_is_scale_dtype(s->dtype))
        return QERR(SY_ERR_TYPE, "tensor '%s': scale '%s' has dtype %s; float32, float16 or bfloat16 is required",
                    x->name ? x->name : "?", s->name ? s->name : "?", sy_dt_name(s->dtype));
    qlayout L;
    SY_TRY(q_layout(x, s, st->axis, st->block, st->allow_axis, &L));
    sy_dtype qdt = quantize ? q_out_dtype(n) : x->dtype;
    int32_t lo, hi;
    if (q_is_lowbit_q(qdt)) {
        if (z && z->dtype != qdt)
            return QERR(SY_ERR_TYPE, "tensor '%s': zero point '%s' has dtype %s, the quantized type is %s",
                        x->name ? x->name : "?", z->name ? z->name : "?", sy_dt_name_full(z->dtype),
                        sy_dt_name_full(qdt));
        if (z && !sy_shape_equal(z->rank, z->dims, s->rank, s->dims) && !(q_numel(z) == 1 && q_numel(s) == 1))
            return QERR(SY_ERR_SHAPE, "tensor '%s': zero point '%s' and scale '%s' must have the same shape",
                        x->name ? x->name : "?", z->name ? z->name : "?", s->name ? s->name : "?");
        if (quantize && !q_is_scale_dtype(x->dtype))
            return QERR(SY_ERR_TYPE, "input '%s' has dtype %s; QuantizeLinear takes float32, float16 or bfloat16",
                        x->name ? x->name : "?", sy_dt_name(x->dtype));
        SY_TRY(q_check_pair(x, s, NULL, qdt, L.mode == 0 ? -1 : q_numel(s)));
        st->out_dt = quantize ? qdt : s->dtype;
        return NULL;
    }
    if (!sy_q_storage_range(qdt, &lo, &hi) || (quantize && qdt == SY_DT_INT32))
        return QERR(SY_ERR_UNSUPPORTED, "%s: quantized dtype %s (%d) is not supported (int8, uint8, int16, uint16, "
                    "int4, uint4, int2, uint2, float8, float4e2m1%s)", quantize ? "output" : "input", sy_dt_name(qdt), (int)qdt,
                    quantize ? "" : ", int32");
    if (z && !sy_shape_equal(z->rank, z->dims, s->rank, s->dims) && !(q_numel(z) == 1 && q_numel(s) == 1))
        return QERR(SY_ERR_SHAPE, "tensor '%s': zero point '%s' and scale '%s' must have the same shape",
                    x->name ? x->name : "?", z->name ? z->name : "?", s->name ? s->name : "?");
    if (!quantize && z && z->dtype != x->dtype && !(z->data && q_is_qtype(z->dtype)))
        return QERR(SY_ERR_TYPE, "tensor '%s': zero point '%s' has dtype %s, the input is %s", x->name ? x->name : "?",
                    z->name ? z->name : "?", sy_dt_name(z->dtype), sy_dt_name(x->dtype));
    if (quantize && !q_is_scale_dtype(x->dtype))
        return QERR(SY_ERR_TYPE, "input '%s' has dtype %s; QuantizeLinear takes float32, float16 or bfloat16",
                    x->name ? x->name : "?", sy_dt_name(x->dtype));
    /* value checks (scales > 0, zero points in range) when the values are known */
    SY_TRY(q_check_pair(x, s, z, qdt, L.mode == 0 ? -1 : q_numel(s)));
    st->out_dt = quantize ? qdt : s->dtype;
    return NULL;
}

static sy_status *infer_quantize(sy_node *n)
{
    qdq_state st;
    SY_TRY(qdq_common_check(n, true, &st));
    return sy_infer_like_input(H, n, 0, 0, st.out_dt);
}

static sy_status *infer_dequantize(sy_node *n)
{
    qdq_state st;
    SY_TRY(qdq_common_check(n, false, &st));
    sy_dtype odt = st.out_dt;
    int64_t od = sy_attr_int_or(H, n, "output_dtype", 0);
    if (od)
        odt = (sy_dtype)od;
    if (!q_is_scale_dtype(odt))
        return QERR(SY_ERR_TYPE, "output dtype %s is not a float type", sy_dt_name(odt));
    return sy_infer_like_input(H, n, 0, 0, odt);
}

static sy_status *prepare_qdq(sy_node *n, void **state)
{
    qdq_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    st->allow_axis = H->node_opset(n) >= 13;
    st->axis = sy_attr_int_or(H, n, "axis", 1);
    st->block = sy_attr_int_or(H, n, "block_size", 0);
    st->saturate = sy_attr_int_or(H, n, "saturate", 1) != 0;
    *state = st;
    return NULL;
}

static sy_status *run_quantize_lowbit(const qdq_state *st, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0], *s = io->inputs[1], *z = q_in(io, 2);
    sy_tensor *y = io->outputs[0];
    qlayout L;
    SY_TRY(q_layout(x, s, st->axis, st->block, st->allow_axis, &L));
    SY_TRY(q_check_pair(x, s, NULL, y->dtype, L.mode == 0 ? -1 : q_numel(s)));
    bool ints = y->dtype == SY_DT_INT2 || y->dtype == SY_DT_UINT2;
    double lo = y->dtype == SY_DT_INT2 ? -2 : 0, hi = y->dtype == SY_DT_INT2 ? 1 : 3;
    size_t n = (size_t)sy_tensor_numel(x);
    if (y->nbytes)
        memset(y->data, 0, y->nbytes);
    bool half = s->dtype == SY_DT_FLOAT16, bhalf = s->dtype == SY_DT_BFLOAT16;
    for (size_t i = 0; i < n; i++) {
        size_t p = q_pidx(&L, i);
        float v = q_scale_at(x, i) / q_scale_at(s, p);
        if (half)
            v = sy_f16_round(v);
        else if (bhalf)
            v = bf16r(v);
        double r;
        if (ints) {
            r = sy_rq_round_even((double)v) + lowbit_zp(z, p);
            r = !(r >= lo) ? lo : (r > hi ? hi : r);
        } else {
            r = (double)v + lowbit_zp(z, p);
        }
        sy_store_any_f64(y->data, y->dtype, i, r, st->saturate, SY_ROUND_NEAREST);
    }
    return NULL;
}

static sy_status *run_dequantize_lowbit(const qdq_state *st, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0], *s = io->inputs[1], *z = q_in(io, 2);
    sy_tensor *y = io->outputs[0];
    qlayout L;
    SY_TRY(q_layout(x, s, st->axis, st->block, st->allow_axis, &L));
    SY_TRY(q_check_pair(x, s, NULL, x->dtype, L.mode == 0 ? -1 : q_numel(s)));
    size_t n = (size_t)sy_tensor_numel(x);
    for (size_t i = 0; i < n; i++) {
        size_t p = q_pidx(&L, i);
        float v = (float)(sy_load_any_f64(x->data, x->dtype, i) - lowbit_zp(z, p)) * q_scale_at(s, p);
        switch (y->dtype) {
        case SY_DT_FLOAT16: ((uint16_t *)y->data)[i] = sy_f32_to_f16(v); break;
        case SY_DT_BFLOAT16: ((uint16_t *)y->data)[i] = sy_f32_to_bf16(v); break;
        default: ((float *)y->data)[i] = v; break;
        }
    }
    return NULL;
}

static sy_status *run_quantize(void *state, const sy_kernel_io *io)
{
    const qdq_state *st = state;
    const sy_tensor *x = io->inputs[0], *s = io->inputs[1], *z = q_in(io, 2);
    sy_tensor *y = io->outputs[0];
    if (q_is_lowbit_q(y->dtype))
        return run_quantize_lowbit(st, io);
    qlayout L;
    SY_TRY(q_layout(x, s, st->axis, st->block, st->allow_axis, &L));
    SY_TRY(q_check_pair(x, s, z, y->dtype, L.mode == 0 ? -1 : q_numel(s)));
    int32_t lo, hi;
    sy_q_storage_range(y->dtype, &lo, &hi);
    size_t n = (size_t)sy_tensor_numel(x);
    if (y->nbytes)
        memset(y->data, 0, y->nbytes);
    bool half = s->dtype == SY_DT_FLOAT16, bhalf = s->dtype == SY_DT_BFLOAT16;
    for (size_t i = 0; i < n; i++) {
        size_t p = q_pidx(&L, i);
        float sc = q_scale_at(s, p);
        float v = q_scale_at(x, i) / sc;
        if (half)
            v = sy_f16_round(v);
        else if (bhalf)
            v = bf16r(v);
        double r = sy_rq_round_even((double)v) + (double)q_zp_at(z, p);
        int32_t q = !(r >= lo) ? lo : (r > hi ? hi : (int32_t)r);
        sy_q_store(y->data, y->dtype, i, q);
    }
    return NULL;
}

static sy_status *run_dequantize(void *state, const sy_kernel_io *io)
{
    const qdq_state *st = state;
    const sy_tensor *x = io->inputs[0], *s = io->inputs[1], *z = q_in(io, 2);
    sy_tensor *y = io->outputs[0];
    if (q_is_lowbit_q(x->dtype))
        return run_dequantize_lowbit(st, io);
    qlayout L;
    SY_TRY(q_layout(x, s, st->axis, st->block, st->allow_axis, &L));
    SY_TRY(q_check_pair(x, s, z, x->dtype, L.mode == 0 ? -1 : q_numel(s)));
    size_t n = (size_t)sy_tensor_numel(x);
    for (size_t i = 0; i < n; i++) {
        size_t p = q_pidx(&L, i);
        float v = (float)((int64_t)sy_q_load(x->data, x->dtype, i) - q_zp_at(z, p)) * q_scale_at(s, p);
        switch (y->dtype) {
        case SY_DT_FLOAT16: ((uint16_t *)y->data)[i] = sy_f32_to_f16(v); break;
        case SY_DT_BFLOAT16: ((uint16_t *)y->data)[i] = sy_f32_to_bf16(v); break;
        default: ((float *)y->data)[i] = v; break;
        }
    }
    return NULL;
}

/* ======================================================================== */
/* DynamicQuantizeLinear (uint8)                                            */
/* ======================================================================== */

static sy_status *infer_dynq(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_FLOAT32)
        return QERR(SY_ERR_TYPE, "input '%s' has dtype %s; DynamicQuantizeLinear takes float32",
                    x->name ? x->name : "?", sy_dt_name(x->dtype));
    SY_TRY(sy_infer_like_input(H, n, 0, 0, SY_DT_UINT8));
    SY_TRY(H->node_set_output(n, 1, SY_DT_FLOAT32, 0, NULL));
    return H->node_set_output(n, 2, SY_DT_UINT8, 0, NULL);
}

static sy_status *run_dynq(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    const float *xv = x->data;
    size_t n = (size_t)sy_tensor_numel(x);
    float mn = 0.0f, mx = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (xv[i] < mn)
            mn = xv[i];
        if (xv[i] > mx)
            mx = xv[i];
    }
    float scale = (mx - mn) / 255.0f;
    int32_t zp = 0;
    if (scale > 0.0f) {
        float izp = 0.0f - mn / scale;
        izp = izp < 0.0f ? 0.0f : (izp > 255.0f ? 255.0f : izp);
        zp = (int32_t)sy_rq_round_even((double)izp);
    }
    uint8_t *y = io->outputs[0]->data;
    for (size_t i = 0; i < n; i++)
        y[i] = scale > 0.0f ? (uint8_t)sy_rq_quantize(xv[i], scale, zp, 0, 255) : (uint8_t)zp;
    if (io->n_outputs > 1 && io->outputs[1])
        *(float *)io->outputs[1]->data = scale;
    if (io->n_outputs > 2 && io->outputs[2])
        *(uint8_t *)io->outputs[2]->data = (uint8_t)zp;
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define A_(name, type) {name, SY_ATTR_##type, false}
static const sy_attr_def a_q13[] = {A_("axis", INT)};
static const sy_attr_def a_q19[] = {A_("axis", INT), A_("saturate", INT)};
static const sy_attr_def a_q21[] = {A_("axis", INT), A_("saturate", INT), A_("block_size", INT),
                                    A_("output_dtype", INT)};
static const sy_attr_def a_q23[] = {A_("axis", INT), A_("saturate", INT), A_("block_size", INT),
                                    A_("output_dtype", INT), A_("precision", INT)};
static const sy_attr_def a_dq21[] = {A_("axis", INT), A_("block_size", INT)};
static const sy_attr_def a_dq23[] = {A_("axis", INT), A_("block_size", INT), A_("output_dtype", INT)};

#define QS(op, since, mn, mx, no, attrs, infer)                                                                    \
    SY_SCHEMA(op, since, mn, mx, no, no, attrs, infer, SY_NO_INPLACE, 0u)

static const sy_op_schema schemas[] = {
    QS("QuantizeLinear", 10, 2, 3, 1, SY_NO_ATTRS, infer_quantize),
    QS("QuantizeLinear", 13, 2, 3, 1, SY_ATTRS(a_q13), infer_quantize),
    QS("QuantizeLinear", 19, 2, 3, 1, SY_ATTRS(a_q19), infer_quantize),
    QS("QuantizeLinear", 21, 2, 3, 1, SY_ATTRS(a_q21), infer_quantize),
    QS("QuantizeLinear", 23, 2, 3, 1, SY_ATTRS(a_q23), infer_quantize),
    QS("DequantizeLinear", 10, 2, 3, 1, SY_NO_ATTRS, infer_dequantize),
    QS("DequantizeLinear", 13, 2, 3, 1, SY_ATTRS(a_q13), infer_dequantize),
    QS("DequantizeLinear", 19, 2, 3, 1, SY_ATTRS(a_q13), infer_dequantize),
    QS("DequantizeLinear", 21, 2, 3, 1, SY_ATTRS(a_dq21), infer_dequantize),
    QS("DequantizeLinear", 23, 2, 3, 1, SY_ATTRS(a_dq23), infer_dequantize),
    SY_SCHEMA("DynamicQuantizeLinear", 11, 1, 1, 3, 3, SY_NO_ATTRS, infer_dynq, SY_NO_INPLACE, 0u),
};

#define QMASK_IN                                                                                                   \
    (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_UINT16) |            \
     SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT4) | SY_DT_BIT(SY_DT_UINT4) | SY_DT_MASK_FLOAT8 |                  \
     SY_DT_BIT(SY_DT_FLOAT4E2M1) | SY_DT_BIT(SY_DT_INT2) | SY_DT_BIT(SY_DT_UINT2))
#define FMASK (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16) | SY_DT_BIT(SY_DT_BFLOAT16))

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("QuantizeLinear", 10, 0, FMASK, 0, prepare_qdq, run_quantize, sy_release_free),
    SY_CPU_KERNEL("DequantizeLinear", 10, 0, QMASK_IN, 0, prepare_qdq, run_dequantize, sy_release_free),
    SY_CPU_KERNEL("DynamicQuantizeLinear", 11, 0, SY_DT_BIT(SY_DT_FLOAT32), 0, sy_prepare_nothing, run_dynq, NULL),
};

void q_tables_qdq(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk)
{
    *s = schemas;
    *ns = SY_COUNT_OF(schemas);
    *k = kernels;
    *nk = SY_COUNT_OF(kernels);
}
