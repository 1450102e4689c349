/*
 * tflite_math: TFLite elementwise, activation, comparison, logical,
 * reduction and selection operators (domain "tflite"), cpu_ref kernels.
 *
 *   binary (numpy broadcasting, fused activation where TFLite has one):
 *     ADD SUB MUL     fp32, int32, int8 (TFLite reference integer kernels:
 *                     ADD/SUB with left shift 20 and per-input multipliers,
 *                     MUL with one multiplier; bit-exact)
 *     DIV             fp32, int32, int8 (reference_ops::DivElementwise: the
 *                     reciprocal in fixed point; bit-exact)
 *     MAXIMUM MINIMUM fp32, int32, int8 (the raw int8 values compared, as
 *                     TFLite Micro: the converter gives inputs and output one
 *                     quantization)
 *     SQUARED_DIFFERENCE fp32, int32, int8 (squared_difference.cc: inputs
 *                     << 7, rescaled, differenced, squared, rescaled; bit-exact)
 *     POW FLOOR_DIV FLOOR_MOD
 *                     fp32, int32; int8 through fp32 (TFLite has no int8 kernel)
 *     EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL -> bool
 *     LOGICAL_AND LOGICAL_OR (bool)
 *     PRELU           fp32; int8 with an int8 alpha as TFLite (two
 *                     multipliers, double rounding), with an fp32 alpha
 *                     through fp32
 *   unary: ABS CEIL COS EXP FLOOR LOG ROUND RSQRT SIN SQRT SQUARE NEG RELU
 *     RELU6 RELU_N1_TO_1 RELU_0_TO_1 LOGISTIC TANH ELU HARD_SWISH GELU
 *     LEAKY_RELU: fp32; int8 through a 256-entry table (tfl_unary8.h,
 *     shared with riscv_mcu): TFLite's LUTPopulate
 *     (float transform, times 1/scale, round half away; EXP LOG ELU GELU,
 *     and the ops TFLite has no int8 kernel for), ABS RSQRT SQRT and the
 *     RELU family as TFLite's integer kernels (elementwise.cc,
 *     activations.cc; SQRT/RSQRT refuse inputs below the zero point),
 *     except LOGISTIC with output 1/256 zero
 *     point -128 and TANH with output 1/128 zero point 0: TFLite Micro's
 *     fixed-point kernels (gemmlowp logistic/tanh on Q4.27; bit-exact; the
 *     desktop TFLite reference builds a float table instead); the table of
 *     LEAKY_RELU (alpha >= 0) uses TFLite's two requantization multipliers
 *     and that of HARD_SWISH its 16-bit fixed-point kernel (tflk_hswish.c);
 *     ABS NEG SQUARE also int32; LOGICAL_NOT bool
 *   SELECT SELECT_V2 (any dtype)
 *   reductions MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD (fp32, int32;
 *     int8: MEAN and SUM as TFLite Micro (an int32 sum of the raw values,
 *     then tflk_mean_s8 / tflk_sum_s8), REDUCE_MAX/MIN on the raw values
 *     when input and output quantization agree (TFLite Micro requires it);
 *     otherwise through fp32; REDUCE_PROD as reduce.cc's QuantizedReduceProd:
 *     requantized at every multiplication, bit-exact), ARG_MAX ARG_MIN, CUMSUM,
 *     TOPK_V2, UNIQUE
 */
#include "tfl_common.h"
#include "tfl_params.h"
#include "tfl_reduce.h"
#include "tfl_unary8.h"

#include <float.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")

static bool is_op(const sy_node *n, const char *name) { return !strcmp(H->node_op(n), name); }

#define q8_check(n, which, scale, zp) tfl_q8_check(H, (n), (which), (scale), (zp))

/* ======================================================================== */
/* binary                                                                   */
/* ======================================================================== */

enum {
    B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_POW, B_SQDIFF, B_FLOORDIV, B_FLOORMOD,
    B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_AND, B_OR, B_PRELU
};

static const struct {
    const char *name;
    int kind;
} binops[] = {
    {"ADD", B_ADD},       {"SUB", B_SUB},           {"MUL", B_MUL},           {"DIV", B_DIV},
    {"MAXIMUM", B_MAX},   {"MINIMUM", B_MIN},       {"POW", B_POW},           {"SQUARED_DIFFERENCE", B_SQDIFF},
    {"FLOOR_DIV", B_FLOORDIV}, {"FLOOR_MOD", B_FLOORMOD}, {"EQUAL", B_EQ},    {"NOT_EQUAL", B_NE},
    {"LESS", B_LT},       {"LESS_EQUAL", B_LE},     {"GREATER", B_GT},        {"GREATER_EQUAL", B_GE},
    {"LOGICAL_AND", B_AND}, {"LOGICAL_OR", B_OR},   {"PRELU", B_PRELU},
};

static int bin_kind(const sy_node *n)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (is_op(n, binops[i].name))
            return binops[i].kind;
    return -1;
}

static bool is_cmp(int k) { return k >= B_EQ && k <= B_GE; }

typedef struct bin_state {
    int kind;
    sy_dtype dt, out_dt;
    tfl_act act;
    /* int8 */
    bool q;
    float s1, s2, so;
    int32_t z1, z2, zo, lo, hi;
    int32_t m1, sh1, m2, sh2, mo, sho;
    tflk_div8 div8;
    tflk_sqdiff8 sqd;
    tflk_binary b8; /* ADD SUB MUL; PRELU with an int8 alpha */
    tflk_bin8f b8f; /* int8 POW, PRELU with an fp32 alpha: through float (tflk_bin8f_one) */
    bool f8;        /* b8f is in use */
} bin_state;

static sy_status *infer_binary(sy_node *n)
{
    int k = bin_kind(n);
    const sy_tensor *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &a));
    SY_TRY(sy_need_input(H, n, 1, &b));
    if (k == B_PRELU) {
        if (a->dtype != b->dtype && !(a->dtype == SY_DT_INT8 && b->dtype == SY_DT_FLOAT32))
            return ERR(SY_ERR_TYPE, "PRELU alpha is %s, input %s", sy_dt_name(b->dtype), sy_dt_name(a->dtype));
        sy_tensor bb = *b;
        int32_t rank;
        int64_t dims[SY_MAX_RANK];
        const sy_tensor *ts[2] = {a, &bb};
        SY_TRY(sy_broadcast_shapes(H, 2, ts, &rank, dims));
        return H->node_set_output(n, 0, a->dtype, rank, dims);
    }
    if (a->dtype != b->dtype)
        return ERR(SY_ERR_TYPE, "inputs are %s and %s", sy_dt_name(a->dtype), sy_dt_name(b->dtype));
    if ((k == B_AND || k == B_OR) && a->dtype != SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "%s takes bool inputs, got %s", H->node_op(n), sy_dt_name(a->dtype));
    return sy_infer_broadcast(H, n, is_cmp(k) || k == B_AND || k == B_OR ? SY_DT_BOOL : SY_DT_UNDEFINED, 2);
}

static sy_status *prepare_binary_impl(sy_node *n, void **state)
{
    bin_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->kind = bin_kind(n);
    const sy_tensor *a = H->node_input(n, 0), *b = H->node_input(n, 1), *y = H->node_output(n, 0);
    s->dt = a->dtype;
    s->out_dt = y->dtype;
    char act[32];
    sy_attr_string_or(H, n, "fused_activation_function", "NONE", act, sizeof act);
    if (!tfl_act_from_name(act, &s->act))
        return ERR(SY_ERR_INVALID_ARGUMENT, "unknown fused_activation_function '%s'", act);
    if (s->dt == SY_DT_INT8 || s->dt == SY_DT_INT16 || s->dt == SY_DT_UINT8) {
        s->q = true;
        bool bq = s->kind == B_PRELU && b->dtype == SY_DT_FLOAT32;
        if (!tfl_qparams(a, &s->s1, &s->z1) || (!bq && !tfl_qparams(b, &s->s2, &s->z2)))
            return ERR(SY_ERR_INVALID_ARGUMENT, "quantized %s needs per-tensor quantization on its inputs",
                       H->node_op(n));
        if (!is_cmp(s->kind)) {
            if (!tfl_qparams(y, &s->so, &s->zo))
                return ERR(SY_ERR_INVALID_ARGUMENT, "quantized %s needs output quantization", H->node_op(n));
            if (!sy_q_act_range(y->dtype, act, s->so, s->zo, &s->lo, &s->hi))
                return ERR(SY_ERR_UNSUPPORTED, "fused activation %s on a quantized output", act);
        }
        if (s->kind == B_ADD || s->kind == B_SUB || s->kind == B_MUL) {
            /* the portable kernel's arithmetic (tflk_binary.c), riscv_mcu's too */
            tfl_binary8_params(s->kind == B_ADD ? TFLK_ADD : s->kind == B_SUB ? TFLK_SUB : TFLK_MUL, s->s1, s->z1, s->s2,
                               s->z2, s->so, s->zo, s->lo, s->hi, tfl_rq_single(H, n), &s->b8);
        } else if (s->kind == B_PRELU && !bq && s->dt == SY_DT_INT8) {
            /* TFLite PRELU: x >= 0 requantizes by s1/so, x < 0 multiplies by
             * the int8 alpha and requantizes by s1*s2/so (prelu.cc); the
             * kernel riscv_mcu runs (tflk_prelu_s8_one) */
            tfl_prelu8_params(s->s1, s->z1, s->s2, s->z2, s->so, s->zo, s->lo, s->hi, &s->b8);
        } else if (s->kind == B_PRELU && !bq) {
            sy_q_quantize_multiplier((double)s->s1 / (double)s->so, &s->m1, &s->sh1);
            sy_q_quantize_multiplier((double)s->s1 * (double)s->s2 / (double)s->so, &s->m2, &s->sh2);
        } else if ((s->kind == B_POW || s->kind == B_PRELU) && s->dt == SY_DT_INT8 && s->out_dt == SY_DT_INT8) {
            /* no TFLite integer kernel (POW) or an fp32 alpha (the seed: alpha
             * stays FP32): dequantize, the float op, requantize, as riscv_mcu */
            tfl_bin8f_params(s->kind == B_POW ? TFLK_POW : TFLK_PRELU, s->s1, s->z1, s->s2, s->z2, s->so, s->zo, s->lo,
                             s->hi, bq, &s->b8f);
            s->f8 = true;
        } else if (s->kind == B_DIV && s->dt == SY_DT_INT8) {
            tfl_div8_params(s->s1, s->z1, s->s2, s->z2, s->so, s->zo, s->lo, s->hi, &s->div8);
        } else if (s->kind == B_SQDIFF && s->dt == SY_DT_INT8) {
            /* squared_difference.cc Prepare: twice the larger scale is a
             * float product, the multipliers double quotients, all three
             * QuantizeMultiplierSmallerThanOneExp (which rejects >= 1) */
            SY_TRY(q8_check(n, "first input", s->s1, s->z1));
            SY_TRY(q8_check(n, "second input", s->s2, s->z2));
            SY_TRY(q8_check(n, "output", s->so, s->zo));
            const float tm = 2 * (s->s1 > s->s2 ? s->s1 : s->s2);
            const double m1 = (double)s->s1 / (double)tm, m2 = (double)s->s2 / (double)tm;
            const double mo = ((double)tm * (double)tm) / (double)((float)(1 << 14) * s->so);
            if (!(mo < 1.0))
                return ERR(SY_ERR_UNSUPPORTED,
                           "int8 SQUARED_DIFFERENCE: (2 max input scale)^2 / (2^14 output scale) = %g is not below "
                           "1, which TFLite's kernel requires (output scale %g too small)",
                           mo, (double)s->so);
            tflk_sqdiff8 *q = &s->sqd;
            q->zp1 = s->z1;
            q->zp2 = s->z2;
            q->out_zp = s->zo;
            sy_q_quantize_multiplier(m1, &q->mult1, &q->shift1);
            sy_q_quantize_multiplier(m2, &q->mult2, &q->shift2);
            sy_q_quantize_multiplier(mo, &q->out_mult, &q->out_shift);
        }
    }
    return NULL;
}

static double fop(int k, double x, double y)
{
    switch (k) {
    case B_ADD: return x + y;
    case B_SUB: return x - y;
    case B_MUL: return x * y;
    case B_DIV: return x / y;
    case B_MAX: return x > y ? x : y;
    case B_MIN: return x < y ? x : y;
    case B_POW: return pow(x, y);
    case B_SQDIFF: return (x - y) * (x - y);
    case B_FLOORDIV: return floor(x / y);
    case B_FLOORMOD: {
        double r = fmod(x, y);
        return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
    }
    case B_EQ: return x == y;
    case B_NE: return x != y;
    case B_LT: return x < y;
    case B_LE: return x <= y;
    case B_GT: return x > y;
    case B_GE: return x >= y;
    case B_AND: return x != 0 && y != 0;
    case B_OR: return x != 0 || y != 0;
    case B_PRELU: return x >= 0 ? x : x * y;
    }
    return 0;
}

static int64_t iop(int k, int64_t x, int64_t y, bool *div0)
{
    switch (k) {
    case B_ADD: return (int64_t)((uint64_t)x + (uint64_t)y);
    case B_SUB: return (int64_t)((uint64_t)x - (uint64_t)y);
    case B_MUL: return (int64_t)((uint64_t)x * (uint64_t)y);
    case B_DIV:
    case B_FLOORDIV:
    case B_FLOORMOD: {
        if (y == 0) {
            *div0 = true;
            return 0;
        }
        if (y == -1)
            return k == B_FLOORMOD ? 0 : (int64_t)(0 - (uint64_t)x);
        int64_t q = x / y, r = x % y;
        if (k == B_DIV)
            return q; /* TFLite integer DIV truncates */
        if (r != 0 && ((r < 0) != (y < 0))) {
            q--;
            r += y;
        }
        return k == B_FLOORDIV ? q : r;
    }
    case B_POW: {
        if (y < 0)
            return x == 1 ? 1 : 0;
        int64_t r = 1;
        for (int64_t i = 0; i < y && i < 64; i++)
            r = (int64_t)((uint64_t)r * (uint64_t)x);
        return r;
    }
    case B_SQDIFF: {
        int64_t d = (int64_t)((uint64_t)x - (uint64_t)y);
        return (int64_t)((uint64_t)d * (uint64_t)d);
    }
    default: return (int64_t)fop(k, (double)x, (double)y);
    }
}

typedef struct bin_ctx {
    const bin_state *s;
    const sy_tensor *a, *b;
    sy_tensor *y;
    bool div0;
} bin_ctx;

static void bin_fn(const void *ctx_, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    bin_ctx *c = (bin_ctx *)ctx_;
    const bin_state *s = c->s;
    for (int64_t i = 0; i < n; i++) {
        size_t ia = (size_t)(i * st[0]), ib = (size_t)(i * st[1]);
        if (s->dt == SY_DT_FLOAT32 && (s->kind != B_PRELU || c->b->dtype == SY_DT_FLOAT32)) {
            float x = ((const float *)in[0])[ia], yv = ((const float *)in[1])[ib];
            double r = fop(s->kind, x, yv);
            if (s->out_dt == SY_DT_BOOL)
                ((bool *)out)[i] = r != 0;
            else
                ((float *)out)[i] = tfl_act_apply(&s->act, (float)r);
            continue;
        }
        if (s->dt == SY_DT_BOOL) {
            ((bool *)out)[i] = fop(s->kind, ((const bool *)in[0])[ia], ((const bool *)in[1])[ib]) != 0;
            continue;
        }
        if (s->q && s->kind == B_DIV && s->dt == SY_DT_INT8) {
            int32_t x = ((const int8_t *)in[0])[ia], yv = ((const int8_t *)in[1])[ib];
            if (yv == s->z2) /* a real divisor of 0: the reference asserts */
                c->div0 = true;
            ((int8_t *)out)[i] = (int8_t)tflk_div_s8(&s->div8, x, yv);
            continue;
        }
        if (s->q && s->kind == B_SQDIFF && s->dt == SY_DT_INT8) {
            ((int8_t *)out)[i] =
                (int8_t)tflk_sqdiff_s8(&s->sqd, ((const int8_t *)in[0])[ia], ((const int8_t *)in[1])[ib]);
            continue;
        }
        if (s->q && (s->kind == B_MAX || s->kind == B_MIN) && s->dt == SY_DT_INT8 && s->out_dt == SY_DT_INT8) {
            /* TFLite Micro compares the raw int8 values and stores the winner as is */
            int8_t x = ((const int8_t *)in[0])[ia], yv = ((const int8_t *)in[1])[ib];
            ((int8_t *)out)[i] = s->kind == B_MAX ? (x > yv ? x : yv) : (x < yv ? x : yv);
            continue;
        }
        if (s->f8) {
            int32_t x = ((const int8_t *)in[0])[ia];
            float bv = c->b->dtype == SY_DT_FLOAT32 ? ((const float *)in[1])[ib]
                                                    : s->s2 * (float)(((const int8_t *)in[1])[ib] - s->z2);
            ((int8_t *)out)[i] = (int8_t)tflk_bin8f_one(&s->b8f, x, bv);
            continue;
        }
        if (s->q && s->kind == B_PRELU && s->dt == SY_DT_INT8 && c->b->dtype == SY_DT_INT8) {
            ((int8_t *)out)[i] =
                (int8_t)tflk_prelu_s8_one(&s->b8, ((const int8_t *)in[0])[ia], ((const int8_t *)in[1])[ib]);
            continue;
        }
        if (s->q) {
            int32_t x = (int32_t)sy_load_i64(in[0], s->dt, ia);
            if (s->kind == B_PRELU && c->b->dtype != SY_DT_FLOAT32) {
                int32_t d = x - s->z1, al = (int32_t)sy_load_i64(in[1], s->dt, ib) - s->z2;
                int32_t r = (d >= 0 ? sy_q_mul_by_qm(d, s->m1, s->sh1) : sy_q_mul_by_qm(d * al, s->m2, s->sh2)) + s->zo;
                sy_store_i64(out, s->out_dt, (size_t)i, tfl_clampi(r, s->lo, s->hi));
                continue;
            }
            if (s->kind == B_ADD || s->kind == B_SUB || s->kind == B_MUL) {
                int32_t yv = (int32_t)sy_load_i64(in[1], s->dt, ib);
                sy_store_i64(out, s->out_dt, (size_t)i, tflk_binary_s8_one(&s->b8, x, yv));
                continue;
            }
            double xf = s->s1 * (double)(x - s->z1);
            double yf = c->b->dtype == SY_DT_FLOAT32 ? ((const float *)in[1])[ib]
                                                     : s->s2 * (double)((int32_t)sy_load_i64(in[1], s->dt, ib) - s->z2);
            double r = fop(s->kind, xf, yf);
            if (s->out_dt == SY_DT_BOOL)
                ((bool *)out)[i] = r != 0;
            else
                sy_store_i64(out, s->out_dt, (size_t)i, sy_q_quantize_f32((float)r, s->so, s->zo, s->lo, s->hi));
            continue;
        }
        if (sy_dt_is_int(s->dt)) {
            int64_t r = iop(s->kind, sy_load_i64(in[0], s->dt, ia), sy_load_i64(in[1], s->dt, ib), &c->div0);
            if (s->out_dt == SY_DT_BOOL) {
                ((bool *)out)[i] = r != 0;
            } else {
                if (s->act.kind == 0 && s->act.lo != -INFINITY && r < (int64_t)s->act.lo)
                    r = (int64_t)s->act.lo;
                if (s->act.kind == 0 && s->act.hi != INFINITY && r > (int64_t)s->act.hi)
                    r = (int64_t)s->act.hi;
                sy_store_i64(out, s->out_dt, (size_t)i, r);
            }
            continue;
        }
        double r = fop(s->kind, sy_load_f64(in[0], s->dt, ia), sy_load_f64(in[1], c->b->dtype, ib));
        sy_store_f64(out, s->out_dt, (size_t)i, r);
    }
}

static sy_status *run_binary(void *state, const sy_kernel_io *io)
{
    bin_ctx c = {state, io->inputs[0], io->inputs[1], io->outputs[0], false};
    SY_TRY(sy_bcast_apply(H, 2, io->inputs, io->outputs[0], bin_fn, &c));
    if (c.div0)
        return c.s->q ? ERR(SY_ERR_RUNTIME, "int8 DIV: a divisor element equals its zero point %d (a real 0)", c.s->z2)
                      : ERR(SY_ERR_RUNTIME, "integer division by zero");
    return NULL;
}

/* ======================================================================== */
/* unary                                                                    */
/* ======================================================================== */

typedef struct un_state {
    tfl_un u;
    sy_dtype dt;
    tfl_unary8 t8; /* int8: the table of output codes (tfl_unary8.h) */
} un_state;

static sy_status *infer_unary(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int k = tfl_unary_kind(H->node_op(n));
    if (k == U_NOT && x->dtype != SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "LOGICAL_NOT takes bool, got %s", sy_dt_name(x->dtype));
    return sy_infer_unary(H, n);
}

static sy_status *prepare_unary_impl(sy_node *n, void **state)
{
    un_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->u.kind = tfl_unary_kind(H->node_op(n));
    s->u.alpha = sy_attr_float_or(H, n, "alpha", 0.0f);
    s->u.approx = sy_attr_int_or(H, n, "approximate", 0) != 0;
    s->dt = H->node_input(n, 0)->dtype;
    int k = s->u.kind;
    if (s->dt == SY_DT_INT8)
        return tfl_build_unary8(H, n, &s->u, &s->t8);
    if (s->dt == SY_DT_INT32 && k != U_ABS && k != U_NEG && k != U_SQUARE && k != U_RELU)
        return ERR(SY_ERR_TYPE, "%s on int32 is not supported", H->node_op(n));
    return NULL;
}

static sy_status *run_unary(void *state, const sy_kernel_io *io)
{
    const un_state *s = state;
    const sy_tensor *x = io->inputs[0];
    void *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(x);
    const int k = s->u.kind;
    switch (s->dt) {
    case SY_DT_FLOAT32:
        for (int64_t i = 0; i < n; i++)
            ((float *)y)[i] = tfl_unary_f(&s->u, ((const float *)x->data)[i]);
        break;
    case SY_DT_INT8: {
        const int8_t *xi = x->data;
        if (s->t8.min_valid > -128)
            for (int64_t i = 0; i < n; i++)
                if (xi[i] < s->t8.min_valid)
                    return ERR(SY_ERR_RUNTIME,
                               "int8 %s: element %lld is %d, below the input zero point %d (a negative real "
                               "value), which TFLite's kernel refuses",
                               k == U_SQRT ? "SQRT" : "RSQRT", (long long)i, xi[i], s->t8.min_valid);
        for (int64_t i = 0; i < n; i++)
            ((int8_t *)y)[i] = s->t8.lut[xi[i] + 128];
        break;
    }
    case SY_DT_BOOL:
        for (int64_t i = 0; i < n; i++)
            ((bool *)y)[i] = !((const bool *)x->data)[i];
        break;
    default:
        for (int64_t i = 0; i < n; i++) {
            int64_t v = sy_load_i64(x->data, s->dt, (size_t)i);
            v = k == U_ABS ? (v < 0 ? -v : v) : k == U_NEG ? -v : k == U_RELU ? (v > 0 ? v : 0) : v * v;
            sy_store_i64(y, s->dt, (size_t)i, v);
        }
    }
    return NULL;
}

/* ======================================================================== */
/* SELECT / SELECT_V2                                                       */
/* ======================================================================== */

static sy_status *infer_select(sy_node *n)
{
    const sy_tensor *c, *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &c));
    SY_TRY(sy_need_input(H, n, 1, &a));
    SY_TRY(sy_need_input(H, n, 2, &b));
    if (c->dtype != SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "condition must be bool, got %s", sy_dt_name(c->dtype));
    if (a->dtype != b->dtype)
        return ERR(SY_ERR_TYPE, "x and y are %s and %s", sy_dt_name(a->dtype), sy_dt_name(b->dtype));
    if (is_op(n, "SELECT")) {
        /* TFLite SELECT: equal shapes, or a 1-D condition over the first dim */
        if (!sy_shape_equal(a->rank, a->dims, b->rank, b->dims))
            return ERR(SY_ERR_SHAPE, "SELECT does not broadcast: x and y shapes differ");
        if (!sy_shape_equal(c->rank, c->dims, a->rank, a->dims) && !(c->rank == 1 && a->rank >= 1 && c->dims[0] == a->dims[0]))
            return ERR(SY_ERR_SHAPE, "SELECT condition must have x's shape or be 1-D over its first dimension");
        return sy_infer_like_input(H, n, 1, 0, SY_DT_UNDEFINED);
    }
    const sy_tensor *ts[3] = {c, a, b};
    int32_t r;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(sy_broadcast_shapes(H, 3, ts, &r, dims));
    return H->node_set_output(n, 0, a->dtype, r, dims);
}

typedef struct sel_ctx {
    size_t es;
} sel_ctx;

static void sel_fn(const void *ctx_, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    const sel_ctx *c = ctx_;
    for (int64_t i = 0; i < n; i++) {
        bool cond = ((const bool *)in[0])[i * st[0]];
        const char *src = cond ? (const char *)in[1] + (size_t)(i * st[1]) * c->es
                               : (const char *)in[2] + (size_t)(i * st[2]) * c->es;
        memcpy((char *)out + (size_t)i * c->es, src, c->es);
    }
}

static sy_status *run_select(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *c = io->inputs[0], *a = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    sel_ctx ctx = {sy_dt_size(a->dtype)};
    if (c->rank == 1 && a->rank > 1 && c->dims[0] == a->dims[0] && !sy_shape_equal(c->rank, c->dims, a->rank, a->dims)) {
        int64_t inner = sy_dims_prod(a->dims, 1, a->rank);
        for (int64_t o = 0; o < a->dims[0]; o++) {
            const sy_tensor *src = ((const bool *)c->data)[o] ? io->inputs[1] : io->inputs[2];
            memcpy((char *)y->data + (size_t)(o * inner) * ctx.es, (const char *)src->data + (size_t)(o * inner) * ctx.es,
                   (size_t)inner * ctx.es);
        }
        return NULL;
    }
    return sy_bcast_apply(H, 3, io->inputs, y, sel_fn, &ctx);
}

/* ======================================================================== */
/* reductions                                                               */
/* ======================================================================== */

enum { R_MEAN, R_SUM, R_MAX, R_MIN, R_PROD };

static int red_kind(const sy_node *n)
{
    return is_op(n, "MEAN") ? R_MEAN : is_op(n, "SUM") ? R_SUM : is_op(n, "REDUCE_MAX") ? R_MAX
                                                            : is_op(n, "REDUCE_MIN") ? R_MIN : R_PROD;
}

static sy_status *red_axes(const sy_node *n, const sy_tensor *x, bool *mask)
{
    const sy_tensor *at = H->node_input(n, 1);
    if (!at || !at->data)
        return ERR(at ? SY_ERR_DYNAMIC_SHAPE : SY_ERR_INVALID_ARGUMENT, "axes must be a constant");
    int64_t cnt = sy_tensor_numel(at);
    if (cnt < 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "axes must not be empty");
    for (int32_t d = 0; d < SY_MAX_RANK; d++)
        mask[d] = false;
    for (int64_t i = 0; i < cnt; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, sy_load_i64(at->data, at->dtype, (size_t)i), x->rank, false, "axes", &a));
        mask[a] = true;
    }
    return NULL;
}

static sy_status *infer_reduce(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    bool mask[SY_MAX_RANK];
    SY_TRY(red_axes(n, x, mask));
    bool keep = sy_attr_int_or(H, n, "keep_dims", 0) != 0;
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (!mask[d])
            dims[r++] = x->dims[d];
        else if (keep)
            dims[r++] = 1;
    }
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

typedef struct red_state {
    int kind;
    bool mask[SY_MAX_RANK];
    bool shared;   /* fp32 and int8: tflk_reduce.c, the kernel riscv_mcu and its packages run */
    tflk_reduce k;
} red_state;

static sy_status *prepare_reduce_impl(sy_node *n, void **state)
{
    red_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->kind = red_kind(n);
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    SY_TRY(red_axes(n, x, s->mask));
    if (x->dtype == SY_DT_FLOAT32 || x->dtype == SY_DT_INT8) {
        s->shared = true;
        return tfl_build_reduce(H, n, &s->k);
    }
    size_t cnt = (size_t)sy_tensor_numel(y);
    H->node_set_scratch(n, (cnt ? cnt : 1) * (sizeof(double) + sizeof(int64_t)));
    return NULL;
}

/* the integer dtypes beyond the seed's (int32, int64, uint8, int16):
 * accumulated in double, MEAN truncated */
static sy_status *run_reduce(void *state, const sy_kernel_io *io)
{
    const red_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (s->shared) {
        tflk_reduce_run(&s->k, x->data, y->data);
        return NULL;
    }
    int64_t ny = sy_tensor_numel(y), nx = sy_tensor_numel(x);
    double *acc = io->scratch;
    int64_t *cnt = (int64_t *)(acc + (ny ? ny : 1));
    int64_t rdims[SY_MAX_RANK], rst[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    for (int32_t d = 0; d < x->rank; d++)
        rdims[d] = s->mask[d] ? 1 : x->dims[d];
    sy_strides(x->rank, rdims, rst);
    for (int64_t i = 0; i < ny; i++) {
        acc[i] = s->kind == R_MAX ? -INFINITY : s->kind == R_MIN ? INFINITY : s->kind == R_PROD ? 1.0 : 0.0;
        cnt[i] = 0;
    }
    for (int64_t i = 0; i < nx; i++) {
        int64_t o = 0;
        for (int32_t d = 0; d < x->rank; d++)
            o += (s->mask[d] ? 0 : idx[d]) * rst[d];
        double v = sy_load_f64(x->data, x->dtype, (size_t)i);
        switch (s->kind) {
        case R_MEAN:
        case R_SUM: acc[o] += v; break;
        case R_MAX: acc[o] = v > acc[o] ? v : acc[o]; break;
        case R_MIN: acc[o] = v < acc[o] ? v : acc[o]; break;
        case R_PROD: acc[o] *= v; break;
        }
        cnt[o]++;
        sy_index_next(x->rank, x->dims, idx);
    }
    for (int64_t i = 0; i < ny; i++) {
        double v = s->kind == R_MEAN ? (cnt[i] ? acc[i] / (double)cnt[i] : NAN) : acc[i];
        sy_store_i64(y->data, y->dtype, (size_t)i, (int64_t)(s->kind == R_MEAN ? trunc(v) : v));
    }
    return NULL;
}

/* ======================================================================== */
/* ARG_MAX / ARG_MIN / CUMSUM / TOPK_V2 / UNIQUE                            */
/* ======================================================================== */

static sy_status *arg_axis(const sy_node *n, const sy_tensor *x, uint32_t in, int32_t *axis)
{
    const sy_tensor *at = H->node_input(n, in);
    if (!at || !at->data || sy_tensor_numel(at) != 1)
        return ERR(at && !at->data ? SY_ERR_DYNAMIC_SHAPE : SY_ERR_INVALID_ARGUMENT, "axis must be a constant scalar");
    return sy_norm_axis(H, sy_load_i64(at->data, at->dtype, 0), x->rank, false, "axis", axis);
}

static sy_status *infer_arg(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(arg_axis(n, x, 1, &axis));
    char buf[16];
    sy_attr_string_or(H, n, "output_type", "INT64", buf, sizeof buf);
    sy_dtype dt = !strcmp(buf, "INT32") ? SY_DT_INT32 : SY_DT_INT64;
    const sy_tensor *yd = H->node_output(n, 0);
    if (yd && (yd->dtype == SY_DT_INT32 || yd->dtype == SY_DT_INT64))
        dt = yd->dtype;
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis)
            dims[r++] = x->dims[d];
    return H->node_set_output(n, 0, dt, r, dims);
}

typedef struct arg_state {
    bool is_max;
    bool shared; /* fp32: tflk_reduce.c */
    tflk_axisop k;
} arg_state;

static sy_status *prepare_arg_impl(sy_node *n, void **state)
{
    arg_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    s->is_max = is_op(n, "ARG_MAX");
    *state = s;
    if (H->node_input(n, 0)->dtype == SY_DT_FLOAT32) {
        s->shared = true;
        return tfl_build_axisop(H, n, &s->k);
    }
    return NULL;
}

/* integer inputs (beyond the seed's fp32) */
static sy_status *run_arg(void *state, const sy_kernel_io *io)
{
    const arg_state *s = state;
    const sy_tensor *x = io->inputs[0], *at = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    if (s->shared) {
        tflk_axis_run(&s->k, x->data, y->data, NULL);
        return NULL;
    }
    int64_t a = sy_load_i64(at->data, at->dtype, 0);
    int32_t axis = (int32_t)(a < 0 ? a + x->rank : a);
    int64_t outer = sy_dims_prod(x->dims, 0, axis), len = x->dims[axis], inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best = 0;
            double bv = 0;
            for (int64_t k = 0; k < len; k++) {
                double v = sy_load_f64(x->data, x->dtype, (size_t)((o * len + k) * inner + i));
                if (k == 0 || (s->is_max ? v > bv : v < bv)) {
                    bv = v;
                    best = k;
                }
            }
            sy_store_i64(y->data, y->dtype, (size_t)(o * inner + i), best);
        }
    return NULL;
}

static sy_status *infer_cumsum(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(arg_axis(n, x, 1, &axis));
    return sy_infer_unary(H, n);
}

typedef struct cs_state {
    bool exclusive, reverse;
    bool shared; /* fp32 and int8: tflk_reduce.c */
    tflk_axisop k;
} cs_state;

static sy_status *prepare_cumsum_impl(sy_node *n, void **state)
{
    cs_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->exclusive = sy_attr_int_or(H, n, "exclusive", 0) != 0;
    s->reverse = sy_attr_int_or(H, n, "reverse", 0) != 0;
    sy_dtype dt = H->node_input(n, 0)->dtype;
    if (dt == SY_DT_FLOAT32 || dt == SY_DT_INT8) {
        s->shared = true;
        return tfl_build_axisop(H, n, &s->k);
    }
    return NULL;
}

/* the integer dtypes beyond the seed's: an int64 running sum */
static sy_status *run_cumsum(void *state, const sy_kernel_io *io)
{
    const cs_state *s = state;
    const sy_tensor *x = io->inputs[0], *at = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    if (s->shared) {
        tflk_axis_run(&s->k, x->data, y->data, NULL);
        return NULL;
    }
    int64_t a = sy_load_i64(at->data, at->dtype, 0);
    int32_t axis = (int32_t)(a < 0 ? a + x->rank : a);
    int64_t outer = sy_dims_prod(x->dims, 0, axis), len = x->dims[axis], inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t iacc = 0;
            for (int64_t k0 = 0; k0 < len; k0++) {
                int64_t k = s->reverse ? len - 1 - k0 : k0;
                size_t at_ = (size_t)((o * len + k) * inner + i);
                int64_t iv = sy_load_i64(x->data, x->dtype, at_);
                if (!s->exclusive)
                    iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
                sy_store_i64(y->data, y->dtype, at_, iacc);
                if (s->exclusive)
                    iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
            }
        }
    return NULL;
}

static sy_status *infer_topk(sy_node *n)
{
    const sy_tensor *x, *kt;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &kt));
    if (!kt->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "k is not known before running");
    if (x->rank < 1 || kt->dtype != SY_DT_INT32 || sy_tensor_numel(kt) != 1)
        return ERR(SY_ERR_SHAPE, "TOPK_V2 needs rank >= 1 and an int32 scalar k");
    if (x->dtype == SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "TOPK_V2 does not take int64 input");
    int64_t k = ((const int32_t *)kt->data)[0];
    if (k < 0 || k > x->dims[x->rank - 1])
        return ERR(SY_ERR_SHAPE, "k = %lld is outside [0, %lld]", (long long)k, (long long)x->dims[x->rank - 1]);
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    dims[x->rank - 1] = k;
    SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, dims));
    return H->node_set_output(n, 1, SY_DT_INT32, x->rank, dims);
}

typedef struct topk_state {
    bool shared; /* fp32 and int8: tflk_reduce.c */
    tflk_axisop k;
} topk_state;

static sy_status *prepare_topk_impl(sy_node *n, void **state)
{
    topk_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    sy_dtype dt = H->node_input(n, 0)->dtype;
    if (dt == SY_DT_FLOAT32 || dt == SY_DT_INT8) {
        s->shared = true;
        return tfl_build_axisop(H, n, &s->k);
    }
    return NULL;
}

/* the other dtypes: selection of the j-th largest, ties to the lower index */
static sy_status *run_topk(void *state, const sy_kernel_io *io)
{
    const topk_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *v = io->outputs[0], *ix = io->outputs[1];
    if (s->shared) {
        tflk_axis_run(&s->k, x->data, v->data, ix->data);
        return NULL;
    }
    int64_t len = x->dims[x->rank - 1], k = v->dims[v->rank - 1], rows = len ? sy_tensor_numel(x) / len : 0;
    size_t es = sy_dt_size(x->dtype);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < k; j++) {
            /* selection: the j-th largest, ties to the lower index */
            int64_t best = -1;
            double bv = 0;
            for (int64_t c = 0; c < len; c++) {
                bool taken = false;
                for (int64_t p = 0; p < j && !taken; p++)
                    taken = ((const int32_t *)ix->data)[r * k + p] == c;
                if (taken)
                    continue;
                double val = sy_load_f64(x->data, x->dtype, (size_t)(r * len + c));
                if (best < 0 || val > bv) {
                    best = c;
                    bv = val;
                }
            }
            ((int32_t *)ix->data)[r * k + j] = (int32_t)best;
            memcpy((char *)v->data + (size_t)(r * k + j) * es, (const char *)x->data + (size_t)(r * len + best) * es, es);
        }
    return NULL;
}

/* UNIQUE: values in first-occurrence order (data-dependent length) and the
 * index of each input element's value: tflk_unique.c, the kernel riscv_mcu
 * runs (outer = inner = 1, unsorted) */
static sy_status *unique_params(const sy_node *n, const sy_tensor *x, tflk_unique *p)
{
    memset(p, 0, sizeof *p);
    if (x->rank != 1)
        return ERR(SY_ERR_SHAPE, "UNIQUE takes a 1-D input, got rank %d", x->rank);
    if (x->dims[0] >= (int64_t)1 << 30)
        return ERR(SY_ERR_UNSUPPORTED, "UNIQUE of 2^30 elements or more is not supported");
    switch (x->dtype) {
    case SY_DT_FLOAT32: p->dt = TFLK_F32; break;
    case SY_DT_INT8: p->dt = TFLK_S8; break;
    case SY_DT_UINT8: p->dt = TFLK_U8; break;
    case SY_DT_INT16: p->dt = TFLK_S16; break;
    case SY_DT_INT32: p->dt = TFLK_S32; break;
    case SY_DT_INT64: p->dt = TFLK_S64; break;
    default: return ERR(SY_ERR_UNSUPPORTED, "UNIQUE of %s is not supported", sy_dt_name(x->dtype));
    }
    char buf[16];
    sy_attr_string_or(H, n, "idx_out_type", "INT32", buf, sizeof buf);
    p->idx64 = !strcmp(buf, "INT64");
    p->outer = p->inner = 1;
    p->n_items = (int32_t)x->dims[0];
    return NULL;
}

static sy_status *infer_unique(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    tflk_unique p;
    SY_TRY(unique_params(n, x, &p));
    /* before the run: the values at their bound, one per element, when the
     * core plans them so (nobody reads them; ABI 1.6) */
    bool bounded = !x->data;
    if (bounded && !sy_host_has_bounded_outputs(H))
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the number of unique values is known only at run time");
    int64_t u = x->dims[0];
    if (!bounded) {
        void *tmp = malloc(tflk_unique_scratch_bytes(&p) + 1);
        if (!tmp)
            return OOM();
        u = tflk_unique_run(&p, x->data, NULL, NULL, NULL, NULL, tmp);
        free(tmp);
    }
    SY_TRY(H->node_set_output(n, 0, x->dtype, 1, &u));
    SY_TRY(H->node_set_output(n, 1, p.idx64 ? SY_DT_INT64 : SY_DT_INT32, 1, x->dims));
    return bounded ? H->node_bound_output(n, 0) : NULL;
}

/* the kernel's parameters and whether the values are planned at their bound */
typedef struct unique_state {
    tflk_unique p;
    bool bounded;
} unique_state;

static sy_status *prepare_unique_impl(sy_node *n, void **state)
{
    unique_state *us = calloc(1, sizeof *us);
    if (!us)
        return OOM();
    *state = us;
    tflk_unique *p = &us->p;
    SY_TRY(unique_params(n, H->node_input(n, 0), p));
    p->idx64 = H->node_output(n, 1)->dtype == SY_DT_INT64;
    us->bounded = sy_host_has_bounded_outputs(H) && H->node_output_bounded(n, 0);
    H->node_set_scratch(n, tflk_unique_scratch_bytes(p) + 1);
    return NULL;
}

static sy_status *run_unique(void *state, const sy_kernel_io *io)
{
    const unique_state *us = state;
    const tflk_unique *p = &us->p;
    sy_tensor *v = io->outputs[0], *ix = io->n_outputs > 1 ? io->outputs[1] : NULL;
    int32_t u = tflk_unique_run(p, io->inputs[0]->data, NULL, NULL, NULL, NULL, io->scratch);
    if (us->bounded ? u > v->dims[0] : u != v->dims[0])
        return ERR(SY_ERR_RUNTIME, "UNIQUE found %d values but the output was planned for %s%lld", (int)u,
                   us->bounded ? "at most " : "", (long long)v->dims[0]);
    tflk_unique_run(p, io->inputs[0]->data, v->data, NULL, ix ? ix->data : NULL, NULL, io->scratch);
    if (us->bounded)
        sy_bound_set_len(v, 0, u);
    return NULL;
}

/* a failed prepare releases what it allocated: the core keeps no state then */
TFL_PREPARE_GUARDED(prepare_binary, prepare_binary_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_unary, prepare_unary_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_reduce, prepare_reduce_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_arg, prepare_arg_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_cumsum, prepare_cumsum_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_topk, prepare_topk_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_unique, prepare_unique_impl, sy_release_free)

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

static const sy_attr_def act_attrs[] = {TFL_ATTR_ACT, {"pot_scale_int16", SY_ATTR_INT, false}};
static const sy_attr_def leaky_attrs[] = {{"alpha", SY_ATTR_FLOAT, false}};
static const sy_attr_def gelu_attrs[] = {{"approximate", SY_ATTR_INT, false}};
static const sy_attr_def red_attrs[] = {{"keep_dims", SY_ATTR_INT, false}};
static const sy_attr_def arg_attrs[] = {{"output_type", SY_ATTR_STRING, false}};
static const sy_attr_def cs_attrs[] = {{"exclusive", SY_ATTR_INT, false}, {"reverse", SY_ATTR_INT, false}};
static const sy_attr_def uq_attrs[] = {{"idx_out_type", SY_ATTR_STRING, false}};

#define BIN(name, attrs) TFL_SCHEMA(name, 2, 2, 1, 1, attrs, infer_binary, SY_NO_INPLACE, 0, "elementwise " name)
#define UN(name, attrs) TFL_SCHEMA(name, 1, 1, 1, 1, attrs, infer_unary, SY_NO_INPLACE, 0, "elementwise " name)
static const sy_op_schema schemas[] = {
    BIN("ADD", SY_ATTRS(act_attrs)), BIN("SUB", SY_ATTRS(act_attrs)), BIN("MUL", SY_ATTRS(act_attrs)),
    BIN("DIV", SY_ATTRS(act_attrs)), BIN("MAXIMUM", SY_NO_ATTRS), BIN("MINIMUM", SY_NO_ATTRS),
    BIN("POW", SY_NO_ATTRS), BIN("SQUARED_DIFFERENCE", SY_NO_ATTRS), BIN("FLOOR_DIV", SY_NO_ATTRS),
    BIN("FLOOR_MOD", SY_NO_ATTRS), BIN("EQUAL", SY_NO_ATTRS), BIN("NOT_EQUAL", SY_NO_ATTRS),
    BIN("LESS", SY_NO_ATTRS), BIN("LESS_EQUAL", SY_NO_ATTRS), BIN("GREATER", SY_NO_ATTRS),
    BIN("GREATER_EQUAL", SY_NO_ATTRS), BIN("LOGICAL_AND", SY_NO_ATTRS), BIN("LOGICAL_OR", SY_NO_ATTRS),
    BIN("PRELU", SY_NO_ATTRS),
    UN("ABS", SY_NO_ATTRS), UN("CEIL", SY_NO_ATTRS), UN("COS", SY_NO_ATTRS), UN("EXP", SY_NO_ATTRS),
    UN("FLOOR", SY_NO_ATTRS), UN("LOG", SY_NO_ATTRS), UN("ROUND", SY_NO_ATTRS), UN("RSQRT", SY_NO_ATTRS),
    UN("SIN", SY_NO_ATTRS), UN("SQRT", SY_NO_ATTRS), UN("SQUARE", SY_NO_ATTRS), UN("NEG", SY_NO_ATTRS),
    UN("RELU", SY_NO_ATTRS), UN("RELU6", SY_NO_ATTRS), UN("RELU_N1_TO_1", SY_NO_ATTRS), UN("RELU_0_TO_1", SY_NO_ATTRS),
    UN("LOGISTIC", SY_NO_ATTRS), UN("TANH", SY_NO_ATTRS), UN("ELU", SY_NO_ATTRS), UN("HARD_SWISH", SY_NO_ATTRS),
    UN("GELU", SY_ATTRS(gelu_attrs)), UN("LEAKY_RELU", SY_ATTRS(leaky_attrs)), UN("LOGICAL_NOT", SY_NO_ATTRS),
    TFL_SCHEMA("SELECT", 3, 3, 1, 1, SY_NO_ATTRS, infer_select, SY_NO_INPLACE, 0, "select without broadcasting"),
    TFL_SCHEMA("SELECT_V2", 3, 3, 1, 1, SY_NO_ATTRS, infer_select, SY_NO_INPLACE, 0, "select with broadcasting"),
    TFL_SCHEMA("MEAN", 2, 2, 1, 1, SY_ATTRS(red_attrs), infer_reduce, SY_NO_INPLACE, 0, "mean over axes"),
    TFL_SCHEMA("SUM", 2, 2, 1, 1, SY_ATTRS(red_attrs), infer_reduce, SY_NO_INPLACE, 0, "sum over axes"),
    TFL_SCHEMA("REDUCE_MAX", 2, 2, 1, 1, SY_ATTRS(red_attrs), infer_reduce, SY_NO_INPLACE, 0, "max over axes"),
    TFL_SCHEMA("REDUCE_MIN", 2, 2, 1, 1, SY_ATTRS(red_attrs), infer_reduce, SY_NO_INPLACE, 0, "min over axes"),
    TFL_SCHEMA("REDUCE_PROD", 2, 2, 1, 1, SY_ATTRS(red_attrs), infer_reduce, SY_NO_INPLACE, 0, "product over axes"),
    TFL_SCHEMA("ARG_MAX", 2, 2, 1, 1, SY_ATTRS(arg_attrs), infer_arg, SY_NO_INPLACE, 0, "index of the max"),
    TFL_SCHEMA("ARG_MIN", 2, 2, 1, 1, SY_ATTRS(arg_attrs), infer_arg, SY_NO_INPLACE, 0, "index of the min"),
    TFL_SCHEMA("CUMSUM", 2, 2, 1, 1, SY_ATTRS(cs_attrs), infer_cumsum, SY_NO_INPLACE, 0, "cumulative sum"),
    TFL_SCHEMA("TOPK_V2", 2, 2, 2, 2, SY_NO_ATTRS, infer_topk, SY_NO_INPLACE, 0, "k largest on the last axis"),
    TFL_SCHEMA("UNIQUE", 1, 1, 2, 2, SY_ATTRS(uq_attrs), infer_unique, SY_NO_INPLACE, SY_SCHEMA_DATA_DEPENDENT_SHAPE,
               "unique values in first-occurrence order"),
};
#undef BIN
#undef UN

#define NUMQ (TFL_F32_I8 | SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16))
#define CMPT (NUMQ | SY_DT_BIT(SY_DT_BOOL))
#define BOOLT SY_DT_BIT(SY_DT_BOOL)
#define KB(name, mask) TFL_KERNEL(name, mask, 0, prepare_binary, run_binary, sy_release_free)
#define KU(name, mask) TFL_KERNEL(name, mask, 0, prepare_unary, run_unary, sy_release_free)
static const sy_kernel_def kernels[] = {
    KB("ADD", NUMQ), KB("SUB", NUMQ), KB("MUL", NUMQ), KB("DIV", NUMQ), KB("MAXIMUM", NUMQ), KB("MINIMUM", NUMQ),
    KB("POW", NUMQ), KB("SQUARED_DIFFERENCE", NUMQ), KB("FLOOR_DIV", NUMQ), KB("FLOOR_MOD", NUMQ),
    KB("EQUAL", CMPT), KB("NOT_EQUAL", CMPT), KB("LESS", CMPT), KB("LESS_EQUAL", CMPT), KB("GREATER", CMPT),
    KB("GREATER_EQUAL", CMPT), KB("LOGICAL_AND", BOOLT), KB("LOGICAL_OR", BOOLT), KB("PRELU", TFL_F32_I8),
    KU("ABS", TFL_F32_I8 | SY_DT_BIT(SY_DT_INT32)), KU("CEIL", TFL_F32_I8), KU("COS", TFL_F32_I8),
    KU("EXP", TFL_F32_I8), KU("FLOOR", TFL_F32_I8), KU("LOG", TFL_F32_I8), KU("ROUND", TFL_F32_I8),
    KU("RSQRT", TFL_F32_I8), KU("SIN", TFL_F32_I8), KU("SQRT", TFL_F32_I8),
    KU("SQUARE", TFL_F32_I8 | SY_DT_BIT(SY_DT_INT32)), KU("NEG", TFL_F32_I8 | SY_DT_BIT(SY_DT_INT32)),
    KU("RELU", TFL_F32_I8 | SY_DT_BIT(SY_DT_INT32)), KU("RELU6", TFL_F32_I8), KU("RELU_N1_TO_1", TFL_F32_I8),
    KU("RELU_0_TO_1", TFL_F32_I8), KU("LOGISTIC", TFL_F32_I8), KU("TANH", TFL_F32_I8), KU("ELU", TFL_F32_I8),
    KU("HARD_SWISH", TFL_F32_I8), KU("GELU", TFL_F32_I8), KU("LEAKY_RELU", TFL_F32_I8), KU("LOGICAL_NOT", BOOLT),
    TFL_KERNEL("SELECT", SY_DT_MASK_PLAIN, 1, sy_prepare_nothing, run_select, NULL),
    TFL_KERNEL("SELECT_V2", SY_DT_MASK_PLAIN, 1, sy_prepare_nothing, run_select, NULL),
    TFL_KERNEL("MEAN", NUMQ, 0, prepare_reduce, run_reduce, sy_release_free),
    TFL_KERNEL("SUM", NUMQ, 0, prepare_reduce, run_reduce, sy_release_free),
    TFL_KERNEL("REDUCE_MAX", NUMQ, 0, prepare_reduce, run_reduce, sy_release_free),
    TFL_KERNEL("REDUCE_MIN", NUMQ, 0, prepare_reduce, run_reduce, sy_release_free),
    TFL_KERNEL("REDUCE_PROD", NUMQ, 0, prepare_reduce, run_reduce, sy_release_free),
    TFL_KERNEL("ARG_MAX", NUMQ, 0, prepare_arg, run_arg, sy_release_free),
    TFL_KERNEL("ARG_MIN", NUMQ, 0, prepare_arg, run_arg, sy_release_free),
    TFL_KERNEL("CUMSUM", NUMQ, 0, prepare_cumsum, run_cumsum, sy_release_free),
    TFL_KERNEL("TOPK_V2", NUMQ, 0, prepare_topk, run_topk, sy_release_free),
    TFL_KERNEL("UNIQUE", NUMQ, 0, prepare_unique, run_unique, sy_release_free),
};

static sy_status *math_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void math_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "tflite_math",
    .version = "0.1.0",
    .description = "TFLite elementwise, activation, comparison, reduction and selection operators, cpu_ref",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = math_init,
    .fini = math_fini,
};

SY_PLUGIN_DEFINE(desc)
