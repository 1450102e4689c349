/*
 * ops_math: elementwise math of the default ONNX domain, cpu_ref kernels.
 *
 * Binary (numpy broadcasting, legacy axis broadcasting before opset 7):
 *   Add Sub Mul Div Pow Mod, BitShift, BitwiseAnd/Or/Xor
 * Variadic: Sum Mean Min Max
 * Unary: Abs Neg Reciprocal Floor Ceil Round Sqrt Exp Log Sin Cos Tan Asin
 *   Acos Atan Sinh Cosh Asinh Acosh Atanh Tanh Erf Sign IsNaN IsInf BitwiseNot
 *
 * Every kernel is one inner loop per dtype generated from an expression by
 * the sy_sdk loop generators; broadcasting is sy_sdk's iterator.
 * einsum.c: Einsum. signal.c: Hann/Hamming/BlackmanWindow, MelWeightMatrix, DFT, STFT.
 */
#include "math_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

/* ======================================================================== */
/* binary inner loops                                                       */
/* ======================================================================== */

#define U64(v) ((uint64_t)(v))

#define INT_ADD(DT, T, UT, S, SFX) SY_BINARY_FN(add_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(U64(x) + U64(y)))
#define INT_SUB(DT, T, UT, S, SFX) SY_BINARY_FN(sub_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(U64(x) - U64(y)))
#define INT_MUL(DT, T, UT, S, SFX) SY_BINARY_FN(mul_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(U64(x) * U64(y)))
#define INT_DIV(DT, T, UT, S, SFX)                                                                                 \
    SY_BINARY_FN(div_##SFX, T, T, T, SY_LD_ID, SY_LD_ID,                                                           \
                 (y == 0 ? (T)0 : (S && y == (T)-1) ? (T)(0 - U64(x)) : (T)(x / y)))
#define INT_MODT(DT, T, UT, S, SFX)                                                                                \
    SY_BINARY_FN(modt_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (y == 0 || (S && y == (T)-1)) ? (T)0 : (T)(x % y))
static inline int64_t imod_floor(int64_t x, int64_t y)
{
    if (y == 0 || y == -1)
        return 0;
    int64_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
#define INT_MODF(DT, T, UT, S, SFX)                                                                                \
    SY_BINARY_FN(modf_##SFX, T, T, T, SY_LD_ID, SY_LD_ID,                                                          \
                 S ? (T)imod_floor((int64_t)x, (int64_t)y) : (y == 0 ? (T)0 : (T)(x % y)))
#define INT_MIN_(DT, T, UT, S, SFX) SY_BINARY_FN(min_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (x < y ? x : y))
#define INT_MAX_(DT, T, UT, S, SFX) SY_BINARY_FN(max_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (x > y ? x : y))
#define INT_AND(DT, T, UT, S, SFX) SY_BINARY_FN(band_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(x & y))
#define INT_OR(DT, T, UT, S, SFX) SY_BINARY_FN(bor_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(x | y))
#define INT_XOR(DT, T, UT, S, SFX) SY_BINARY_FN(bxor_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(x ^ y))
SY_FOREACH_INT_U(INT_ADD)
SY_FOREACH_INT_U(INT_SUB)
SY_FOREACH_INT_U(INT_MUL)
SY_FOREACH_INT_U(INT_DIV)
SY_FOREACH_INT_U(INT_MODT)
SY_FOREACH_INT_U(INT_MODF)
SY_FOREACH_INT_U(INT_MIN_)
SY_FOREACH_INT_U(INT_MAX_)
SY_FOREACH_INT_U(INT_AND)
SY_FOREACH_INT_U(INT_OR)
SY_FOREACH_INT_U(INT_XOR)

#define UINT_SHL(DT, T, UT, S, SFX)                                                                                \
    SY_BINARY_FN(shl_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (y >= (T)(sizeof(T) * 8) ? (T)0 : (T)(U64(x) << y)))
#define UINT_SHR(DT, T, UT, S, SFX)                                                                                \
    SY_BINARY_FN(shr_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (y >= (T)(sizeof(T) * 8) ? (T)0 : (T)(U64(x) >> y)))
#define SY_FOREACH_UINT_U(X)                                                                                       \
    X(SY_DT_UINT8, uint8_t, uint8_t, 0, u8)                                                                        \
    X(SY_DT_UINT16, uint16_t, uint16_t, 0, u16)                                                                    \
    X(SY_DT_UINT32, uint32_t, uint32_t, 0, u32) X(SY_DT_UINT64, uint64_t, uint64_t, 0, u64)
SY_FOREACH_UINT_U(UINT_SHL)
SY_FOREACH_UINT_U(UINT_SHR)

static inline float fmodf_floor(float x, float y)
{
    float r = fmodf(x, y);
    return (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) ? r + y : r;
}
static inline double fmod_floor(double x, double y)
{
    double r = fmod(x, y);
    return (r != 0.0 && ((r < 0.0) != (y < 0.0))) ? r + y : r;
}

SY_BINARY_FLOAT_FNS(add, x + y, x + y)
SY_BINARY_FLOAT_FNS(sub, x - y, x - y)
SY_BINARY_FLOAT_FNS(mul, x *y, x *y)
SY_BINARY_FLOAT_FNS(div, x / y, x / y)
SY_BINARY_FLOAT_FNS(pow, powf(x, y), pow(x, y))
SY_BINARY_FLOAT_FNS(modt, fmodf(x, y), fmod(x, y))
SY_BINARY_FLOAT_FNS(modf, fmodf_floor(x, y), fmod_floor(x, y))
SY_BINARY_FLOAT_FNS(min, ((x < y || x != x) ? x : y), ((x < y || x != x) ? x : y))
SY_BINARY_FLOAT_FNS(max, ((x > y || x != x) ? x : y), ((x > y || x != x) ? x : y))

#define FI_TABLE(name) {SY_FLOAT_TABLE_ENTRIES(name), SY_INT_TABLE_ENTRIES(name)}
static const sy_bcast_fn add_tab[SY_DT__COUNT] = FI_TABLE(add);
static const sy_bcast_fn sub_tab[SY_DT__COUNT] = FI_TABLE(sub);
static const sy_bcast_fn mul_tab[SY_DT__COUNT] = FI_TABLE(mul);
static const sy_bcast_fn div_tab[SY_DT__COUNT] = FI_TABLE(div);
static const sy_bcast_fn modt_tab[SY_DT__COUNT] = FI_TABLE(modt);
static const sy_bcast_fn modf_tab[SY_DT__COUNT] = FI_TABLE(modf);
static const sy_bcast_fn min_tab[SY_DT__COUNT] = FI_TABLE(min);
static const sy_bcast_fn max_tab[SY_DT__COUNT] = FI_TABLE(max);
static const sy_bcast_fn pow_tab[SY_DT__COUNT] = {SY_FLOAT_TABLE_ENTRIES(pow)};
static const sy_bcast_fn band_tab[SY_DT__COUNT] = {SY_INT_TABLE_ENTRIES(band), [SY_DT_BOOL] = band_u8};
static const sy_bcast_fn bor_tab[SY_DT__COUNT] = {SY_INT_TABLE_ENTRIES(bor), [SY_DT_BOOL] = bor_u8};
static const sy_bcast_fn bxor_tab[SY_DT__COUNT] = {SY_INT_TABLE_ENTRIES(bxor), [SY_DT_BOOL] = bxor_u8};
static const sy_bcast_fn shl_tab[SY_DT__COUNT] = {[SY_DT_UINT8] = shl_u8, [SY_DT_UINT16] = shl_u16,
                                                   [SY_DT_UINT32] = shl_u32, [SY_DT_UINT64] = shl_u64};
static const sy_bcast_fn shr_tab[SY_DT__COUNT] = {[SY_DT_UINT8] = shr_u8, [SY_DT_UINT16] = shr_u16,
                                                   [SY_DT_UINT32] = shr_u32, [SY_DT_UINT64] = shr_u64};

/* Pow with different base/exponent types (opset 12+): through double. */
typedef struct mixed_ctx {
    sy_dtype a, b, o;
} mixed_ctx;

static void pow_mixed(const void *c, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    const mixed_ctx *m = c;
    for (int64_t i = 0; i < n; i++) {
        double x = sy_load_f64(in[0], m->a, (size_t)(i * st[0]));
        double y = sy_load_f64(in[1], m->b, (size_t)(i * st[1]));
        double r = pow(x, y);
        if (sy_dt_is_int(m->o))
            sy_store_i64(out, m->o, (size_t)i, (int64_t)llround(r));
        else
            sy_store_f64(out, m->o, (size_t)i, r);
    }
}

/* ======================================================================== */
/* binary kernels                                                           */
/* ======================================================================== */

typedef struct bin_op {
    const char *name;
    const sy_bcast_fn *tab;
} bin_op;

static const bin_op bin_ops[] = {
    {"Add", add_tab},         {"Sub", sub_tab},         {"Mul", mul_tab},        {"Div", div_tab},
    {"Pow", pow_tab},         {"Mod", modt_tab},        {"BitShift", shl_tab},  {"BitwiseAnd", band_tab},
    {"BitwiseOr", bor_tab},   {"BitwiseXor", bxor_tab}, {"Min", min_tab},        {"Max", max_tab},
    {"Sum", add_tab},         {"Mean", add_tab},
};

static const bin_op *find_bin(const char *name)
{
    for (size_t i = 0; i < sizeof bin_ops / sizeof bin_ops[0]; i++)
        if (!strcmp(bin_ops[i].name, name))
            return &bin_ops[i];
    return NULL;
}

typedef struct bin_state {
    sy_bcast_fn fn;
    mixed_ctx mixed;  /* Pow with mixed dtypes */
    bool legacy;      /* opset < 7 with broadcast=1: B aligned at `axis` */
    int64_t axis;     /* -1: suffix alignment */
    bool mean;        /* variadic Mean: divide at the end */
    bool int_divisor; /* integer Div / Mod: a 0 divisor fails the run */
    const char *op;   /* a string literal of bin_ops */
    char name[128];   /* the node's, for the message */
} bin_state;

static sy_status *legacy_dims(const sy_tensor *a, const sy_tensor *b, int64_t axis, int64_t *out)
{
    return sy_legacy_broadcast_dims(H, a, b, axis, out);
}

static bool is_legacy(const sy_node *n, int32_t numpy_since)
{
    return H->node_opset(n) < numpy_since && sy_attr_int_or(H, n, "broadcast", 0) != 0;
}

static sy_status *infer_binary(sy_node *n)
{
    const char *op = H->node_op(n);
    bool pow_like = !strcmp(op, "Pow");
    if (H->node_num_inputs(n) == 2 && H->node_opset(n) < 7) {
        const sy_tensor *a, *b;
        SY_TRY(sy_need_input(H, n, 0, &a));
        SY_TRY(sy_need_input(H, n, 1, &b));
        if (a->dtype != b->dtype)
            return H->status_new(SY_ERR_TYPE, "A is %s but B is %s", sy_dt_name(a->dtype), sy_dt_name(b->dtype));
        if (is_legacy(n, 7)) {
            int64_t d[SY_MAX_RANK];
            SY_TRY(legacy_dims(a, b, sy_attr_int_or(H, n, "axis", -1), d));
        } else if (!sy_shape_equal(a->rank, a->dims, b->rank, b->dims)) {
            return H->status_new(SY_ERR_SHAPE, "without broadcast=1 (opset < 7), A and B must have equal shapes");
        }
        return H->node_set_output(n, 0, a->dtype, a->rank, a->dims);
    }
    if (!strcmp(op, "BitShift")) {
        char dir[16];
        sy_attr_string_or(H, n, "direction", "", dir, sizeof dir);
        if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "direction must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir);
    }
    if (!strcmp(op, "Mod")) {
        const sy_tensor *a = H->node_input(n, 0);
        if (a && sy_dt_is_float(a->dtype) && sy_attr_int_or(H, n, "fmod", 0) == 0)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Mod on floating-point inputs requires fmod = 1");
    }
    return sy_infer_broadcast(H, n, SY_DT_UNDEFINED, pow_like ? 1 : -1);
}

static sy_status *prepare_binary(sy_node *n, void **state)
{
    const char *op = H->node_op(n);
    const bin_op *bo = find_bin(op);
    const sy_tensor *a = H->node_input(n, 0);
    const sy_tensor *o = H->node_output(n, 0);
    if (!bo || !a || !o)
        return H->status_new(SY_ERR_INTERNAL, "binary kernel bound to unknown op %s", op);
    const sy_bcast_fn *tab = bo->tab;
    if (!strcmp(op, "Mod") && sy_attr_int_or(H, n, "fmod", 0) == 0)
        tab = modf_tab;
    if (!strcmp(op, "BitShift") && sy_attr_string_is(H, n, "direction", "", "RIGHT"))
        tab = shr_tab;
    bin_state *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->fn = (unsigned)a->dtype < SY_DT__COUNT ? tab[a->dtype] : NULL;
    if (!strcmp(op, "Pow")) {
        const sy_tensor *b = H->node_input(n, 1);
        if (!b || b->dtype != a->dtype || !sy_dt_is_float(a->dtype)) {
            s->fn = pow_mixed;
            s->mixed.a = a->dtype;
            s->mixed.b = b ? b->dtype : a->dtype;
            s->mixed.o = o->dtype;
        }
    }
    if (!s->fn) {
        free(s);
        return H->status_new(SY_ERR_TYPE, "%s has no cpu_ref kernel for %s", op, sy_dt_name(a->dtype));
    }
    s->legacy = H->node_num_inputs(n) == 2 && is_legacy(n, 7);
    s->axis = sy_attr_int_or(H, n, "axis", -1);
    s->mean = !strcmp(op, "Mean");
    s->int_divisor = (!strcmp(op, "Div") || !strcmp(op, "Mod")) && sy_dt_is_int(a->dtype);
    s->op = bo->name;
    snprintf(s->name, sizeof s->name, "%s", H->node_name(n) ? H->node_name(n) : "");
    *state = s;
    return NULL;
}

static void scale_out(sy_tensor *o, double f)
{
    size_t n = (size_t)sy_tensor_numel(o);
    if (o->dtype == SY_DT_FLOAT32) {
        float *p = o->data;
        for (size_t i = 0; i < n; i++)
            p[i] = (float)(p[i] * f);
        return;
    }
    for (size_t i = 0; i < n; i++)
        sy_store_f64(o->data, o->dtype, i, sy_load_f64(o->data, o->dtype, i) * f);
}

static void copy_fn(const void *c, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    size_t es = *(const size_t *)c;
    const char *src = in[0];
    char *dst = out;
    if (st[0])
        memmove(dst, src, (size_t)n * es);
    else
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + (size_t)i * es, src, es);
}

/* Integer x / 0 and x % 0 have no value (C leaves them undefined, ONNX says
 * nothing): rather than write some number, the run fails, as it does on
 * riscv_mcu and in the packages. The divisor is read once before any output
 * is written. */
static sy_status *check_divisor(const bin_state *s, const sy_tensor *b)
{
    size_t n = (size_t)sy_tensor_numel(b), es = sy_dt_size(b->dtype);
    static const uint8_t zero[8];
    for (size_t i = 0; i < n; i++)
        if (!memcmp((const uint8_t *)b->data + i * es, zero, es))
            return H->status_new(SY_ERR_RUNTIME, "%s '%s': divisor element %zu of %zu is 0 (integer division by zero "
                                 "on %s has no result)", s->op, s->name, i, n, sy_dt_name(b->dtype));
    return NULL;
}

static sy_status *run_binary(void *state, const sy_kernel_io *io)
{
    const bin_state *s = state;
    sy_tensor *o = io->outputs[0];
    if (s->int_divisor && io->n_inputs == 2 && io->inputs[1])
        SY_TRY(check_divisor(s, io->inputs[1]));
    const void *ctx = s->fn == pow_mixed ? (const void *)&s->mixed : NULL;
    if (s->legacy) {
        const sy_tensor *a = io->inputs[0], *b = io->inputs[1];
        int64_t bd[2][SY_MAX_RANK];
        int32_t ranks[2] = {a->rank, a->rank};
        memcpy(bd[0], a->dims, sizeof(int64_t) * (size_t)a->rank);
        SY_TRY(legacy_dims(a, b, s->axis, bd[1]));
        size_t es[2] = {sy_dt_size(a->dtype), sy_dt_size(b->dtype)};
        sy_bcast plan;
        if (!sy_bcast_plan_shapes(&plan, 2, ranks, (const int64_t(*)[SY_MAX_RANK])bd, es, o->rank, o->dims,
                                  sy_dt_size(o->dtype)))
            return H->status_new(SY_ERR_SHAPE, "legacy broadcast failed");
        const void *data[2] = {a->data, b->data};
        sy_bcast_exec(&plan, data, o->data, s->fn, ctx);
        return NULL;
    }
    uint32_t ni = io->n_inputs;
    if (ni == 1) { /* variadic with one input: copy (broadcast to out) */
        size_t es = sy_dt_size(o->dtype);
        return sy_bcast_apply(H, 1, io->inputs, o, copy_fn, &es);
    }
    const sy_tensor *pair[2] = {io->inputs[0], io->inputs[1]};
    SY_TRY(sy_bcast_apply(H, 2, pair, o, s->fn, ctx));
    for (uint32_t k = 2; k < ni; k++) { /* fold the rest into the output */
        const sy_tensor *p2[2] = {o, io->inputs[k]};
        SY_TRY(sy_bcast_apply(H, 2, p2, o, s->fn, ctx));
    }
    if (s->mean)
        scale_out(o, 1.0 / (double)ni);
    return NULL;
}

/* ======================================================================== */
/* unary                                                                    */
/* ======================================================================== */

static inline float sgnf(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
static inline double sgnd(double x) { return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x; }

SY_UNARY_FLOAT_FNS(abs, fabsf(x), fabs(x))
SY_UNARY_FLOAT_FNS(neg, -x, -x)
SY_UNARY_FLOAT_FNS(recip, 1.0f / x, 1.0 / x)
SY_UNARY_FLOAT_FNS(floor, floorf(x), floor(x))
SY_UNARY_FLOAT_FNS(ceil, ceilf(x), ceil(x))
SY_UNARY_FLOAT_FNS(round, nearbyintf(x), nearbyint(x))
SY_UNARY_FLOAT_FNS(sqrt, sqrtf(x), sqrt(x))
SY_UNARY_FLOAT_FNS(exp, expf(x), exp(x))
SY_UNARY_FLOAT_FNS(log, logf(x), log(x))
SY_UNARY_FLOAT_FNS(sin, sinf(x), sin(x))
SY_UNARY_FLOAT_FNS(cos, cosf(x), cos(x))
SY_UNARY_FLOAT_FNS(tan, tanf(x), tan(x))
SY_UNARY_FLOAT_FNS(asin, asinf(x), asin(x))
SY_UNARY_FLOAT_FNS(acos, acosf(x), acos(x))
SY_UNARY_FLOAT_FNS(atan, atanf(x), atan(x))
SY_UNARY_FLOAT_FNS(sinh, sinhf(x), sinh(x))
SY_UNARY_FLOAT_FNS(cosh, coshf(x), cosh(x))
SY_UNARY_FLOAT_FNS(asinh, asinhf(x), asinh(x))
SY_UNARY_FLOAT_FNS(acosh, acoshf(x), acosh(x))
SY_UNARY_FLOAT_FNS(atanh, atanhf(x), atanh(x))
SY_UNARY_FLOAT_FNS(tanh, tanhf(x), tanh(x))
SY_UNARY_FLOAT_FNS(erf, erff(x), erf(x))
SY_UNARY_FLOAT_FNS(sign, sgnf(x), sgnd(x))

static inline bool neg64(int64_t v) { return v < 0; }
#define INT_ABS(DT, T, UT, S, SFX)                                                                                 \
    SY_UNARY_FN(abs_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, ((S && neg64((int64_t)x)) ? (T)(0 - U64(x)) : x))
#define INT_NEG(DT, T, UT, S, SFX) SY_UNARY_FN(neg_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(0 - U64(x)))
#define INT_SIGN(DT, T, UT, S, SFX)                                                                                \
    SY_UNARY_FN(sign_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (x > (T)0 ? (T)1 : (S && neg64((int64_t)x)) ? (T)-1 : (T)0))
#define INT_BNOT(DT, T, UT, S, SFX) SY_UNARY_FN(bnot_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (T)(~U64(x)))
SY_FOREACH_INT_U(INT_ABS)
SY_FOREACH_INT_U(INT_NEG)
SY_FOREACH_INT_U(INT_SIGN)
SY_FOREACH_INT_U(INT_BNOT)

/* IsNaN / IsInf: bool out; IsInf ctx = {detect_negative, detect_positive} */
#define FLOAT_ISX(DT, TS, CT, LD, ST, SFX)                                                                         \
    SY_UNARY_FN(isnan_##SFX, TS, uint8_t, CT, LD, SY_LD_ID, (uint8_t)(x != x))                                     \
    SY_UNARY_FN(isinf_##SFX, TS, uint8_t, CT, LD, SY_LD_ID,                                                        \
                (uint8_t)(isinf(x) && ((x > 0 && c[1] != 0.0f) || (x < 0 && c[0] != 0.0f))))
SY_FOREACH_FLOAT_LS(FLOAT_ISX)

typedef struct un_op {
    const char *name;
    sy_unary_fn tab[SY_DT__COUNT];
    bool bool_out;
} un_op;

#define UF(name) {SY_FLOAT_TABLE_ENTRIES(name)}
#define UFI(name) {SY_FLOAT_TABLE_ENTRIES(name), SY_INT_TABLE_ENTRIES(name)}
static const un_op un_ops[] = {
    {"Abs", UFI(abs), false},     {"Neg", UFI(neg), false},     {"Reciprocal", UF(recip), false},
    {"Floor", UF(floor), false},  {"Ceil", UF(ceil), false},    {"Round", UF(round), false},
    {"Sqrt", UF(sqrt), false},    {"Exp", UF(exp), false},      {"Log", UF(log), false},
    {"Sin", UF(sin), false},      {"Cos", UF(cos), false},      {"Tan", UF(tan), false},
    {"Asin", UF(asin), false},    {"Acos", UF(acos), false},    {"Atan", UF(atan), false},
    {"Sinh", UF(sinh), false},    {"Cosh", UF(cosh), false},    {"Asinh", UF(asinh), false},
    {"Acosh", UF(acosh), false},  {"Atanh", UF(atanh), false},  {"Tanh", UF(tanh), false},
    {"Erf", UF(erf), false},     {"Sign", UFI(sign), false},   {"IsNaN", UF(isnan), true},
    {"IsInf", UF(isinf), true},   {"BitwiseNot", {SY_INT_TABLE_ENTRIES(bnot)}, false},
};


static const un_op *find_un(const char *name)
{
    for (size_t i = 0; i < sizeof un_ops / sizeof un_ops[0]; i++)
        if (!strcmp(un_ops[i].name, name))
            return &un_ops[i];
    return NULL;
}

typedef struct un_state {
    sy_unary_fn fn;
    float params[4];
} un_state;

static sy_status *infer_unary(sy_node *n)
{
    const un_op *u = find_un(H->node_op(n));
    return sy_infer_like_input(H, n, 0, 0, u && u->bool_out ? SY_DT_BOOL : SY_DT_UNDEFINED);
}

static sy_status *prepare_unary(sy_node *n, void **state)
{
    const un_op *u = find_un(H->node_op(n));
    const sy_tensor *x = H->node_input(n, 0);
    if (!u || !x)
        return H->status_new(SY_ERR_INTERNAL, "unary kernel bound to unknown op %s", H->node_op(n));
    sy_unary_fn fn = (unsigned)x->dtype < SY_DT__COUNT ? u->tab[x->dtype] : NULL;
    if (!fn)
        return H->status_new(SY_ERR_TYPE, "%s has no cpu_ref kernel for %s", u->name, sy_dt_name(x->dtype));
    un_state *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->fn = fn;
    s->params[0] = (float)sy_attr_int_or(H, n, "detect_negative", 1);
    s->params[1] = (float)sy_attr_int_or(H, n, "detect_positive", 1);
    *state = s;
    return NULL;
}

static sy_status *run_unary(void *state, const sy_kernel_io *io)
{
    const un_state *s = state;
    s->fn(io->inputs[0]->data, io->outputs[0]->data, sy_tensor_numel(io->inputs[0]), s->params);
    return NULL;
}

/* ======================================================================== */
/* schemas and kernels                                                      */
/* ======================================================================== */

static const sy_attr_def a_bin_v1[] = {{"axis", SY_ATTR_INT, false}, {"broadcast", SY_ATTR_INT, false},
                                       {"consumed_inputs", SY_ATTR_INTS, false}};
static const sy_attr_def a_bin_v6[] = {{"axis", SY_ATTR_INT, false}, {"broadcast", SY_ATTR_INT, false}};
static const sy_attr_def a_consumed[] = {{"consumed_inputs", SY_ATTR_INTS, false}};
static const sy_attr_def a_mod[] = {{"fmod", SY_ATTR_INT, false}};
static const sy_attr_def a_shift[] = {{"direction", SY_ATTR_STRING, true}};
static const sy_attr_def a_isinf[] = {{"detect_negative", SY_ATTR_INT, false},
                                      {"detect_positive", SY_ATTR_INT, false}};
static const sy_inplace_pair ip00[] = {{0, 0, false}};

#define BIN(op, since, attrs) SY_SCHEMA(op, since, 2, 2, 1, 1, attrs, infer_binary, SY_INPLACE(ip00), 0)
#define VAR(op, since, attrs) SY_SCHEMA(op, since, 1, -1, 1, 1, attrs, infer_binary, SY_NO_INPLACE, 0)
#define UN(op, since, attrs) SY_SCHEMA(op, since, 1, 1, 1, 1, attrs, infer_unary, SY_INPLACE(ip00), 0)
#define UNB(op, since, attrs) SY_SCHEMA(op, since, 1, 1, 1, 1, attrs, infer_unary, SY_NO_INPLACE, 0)
#define BIN3(op) BIN(op, 1, SY_ATTRS(a_bin_v1)), BIN(op, 6, SY_ATTRS(a_bin_v6)), BIN(op, 7, SY_NO_ATTRS)
#define VAR3(op) VAR(op, 1, SY_ATTRS(a_consumed)), VAR(op, 6, SY_NO_ATTRS), VAR(op, 8, SY_NO_ATTRS)
#define UN2(op) UN(op, 1, SY_ATTRS(a_consumed)), UN(op, 6, SY_NO_ATTRS)

static const sy_op_schema schemas[] = {
    BIN3("Add"), BIN3("Sub"), BIN3("Mul"), BIN3("Div"),
    BIN("Pow", 1, SY_ATTRS(a_bin_v6)), BIN("Pow", 7, SY_NO_ATTRS),
    BIN("Mod", 10, SY_ATTRS(a_mod)),
    BIN("BitShift", 11, SY_ATTRS(a_shift)),
    BIN("BitwiseAnd", 18, SY_NO_ATTRS), BIN("BitwiseOr", 18, SY_NO_ATTRS), BIN("BitwiseXor", 18, SY_NO_ATTRS),
    VAR3("Sum"), VAR3("Mean"), VAR3("Min"), VAR3("Max"),
    UN2("Abs"), UN2("Neg"), UN2("Reciprocal"), UN2("Floor"), UN2("Ceil"), UN2("Sqrt"), UN2("Exp"), UN2("Log"),
    UN2("Tanh"),
    UN("Round", 11, SY_NO_ATTRS),
    UN("Sin", 7, SY_NO_ATTRS), UN("Cos", 7, SY_NO_ATTRS), UN("Tan", 7, SY_NO_ATTRS),
    UN("Asin", 7, SY_NO_ATTRS), UN("Acos", 7, SY_NO_ATTRS), UN("Atan", 7, SY_NO_ATTRS),
    UN("Sinh", 9, SY_NO_ATTRS), UN("Cosh", 9, SY_NO_ATTRS), UN("Asinh", 9, SY_NO_ATTRS),
    UN("Acosh", 9, SY_NO_ATTRS), UN("Atanh", 9, SY_NO_ATTRS),
    UN("Erf", 9, SY_NO_ATTRS), UN("Sign", 9, SY_NO_ATTRS),
    UNB("IsNaN", 9, SY_NO_ATTRS), UNB("IsInf", 10, SY_ATTRS(a_isinf)),
    UN("BitwiseNot", 18, SY_NO_ATTRS),
};

#define FL SY_DT_MASK_FLOATS
#define NUM SY_DT_MASK_NUMERIC
#define KB(op, mask) SY_CPU_KERNEL(op, 1, 0, mask, 0, prepare_binary, run_binary, sy_release_free)
#define KU(op, mask) SY_CPU_KERNEL(op, 1, 0, mask, 0, prepare_unary, run_unary, sy_release_free)

static const sy_kernel_def kernels[] = {
    KB("Add", NUM), KB("Sub", NUM), KB("Mul", NUM), KB("Div", NUM), KB("Pow", NUM), KB("Mod", NUM),
    KB("BitShift", SY_DT_MASK_INTS), KB("BitwiseAnd", SY_DT_MASK_INTS), KB("BitwiseOr", SY_DT_MASK_INTS),
    KB("BitwiseXor", SY_DT_MASK_INTS),
    KB("Sum", NUM), KB("Mean", FL), KB("Min", NUM), KB("Max", NUM),
    KU("Abs", NUM), KU("Neg", SY_DT_MASK_SIGNED), KU("Reciprocal", FL), KU("Floor", FL), KU("Ceil", FL),
    KU("Round", FL), KU("Sqrt", FL), KU("Exp", FL), KU("Log", FL), KU("Tanh", FL), KU("Sin", FL), KU("Cos", FL),
    KU("Tan", FL), KU("Asin", FL), KU("Acos", FL), KU("Atan", FL), KU("Sinh", FL), KU("Cosh", FL),
    KU("Asinh", FL), KU("Acosh", FL), KU("Atanh", FL), KU("Erf", FL), KU("Sign", NUM), KU("IsNaN", FL),
    KU("IsInf", FL), KU("BitwiseNot", SY_DT_MASK_INTS),
};

static sy_status *math_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    SY_TRY(sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)));
    SY_TRY(math_einsum_register(host, p));
    SY_TRY(math_signal_register(host, p));
    return math_linalg_register(host, p);
}

static void math_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_math",
    .version = "0.1.0",
    .description = "elementwise math (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = math_init,
    .fini = math_fini,
};

SY_PLUGIN_DEFINE(desc)
