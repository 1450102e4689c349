/*
 * switchyard cts: the ops the kit knows, the cases it generates for each
 * (op, dtype), and how outputs are compared with the cpu_ref reference.
 *
 * Input data is deterministic (a fixed-seed LCG) and exactly representable in
 * every float type (normal values are multiples of 1/64 in [-2, 2]), so the
 * plugin and the reference read the very same numbers whatever their storage.
 */
#include "cts.h"

#include <switchyard/sy_sdk.h> /* fp16 / bf16 conversions (after switchyard.h) */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16) | SY_DT_BIT(SY_DT_BFLOAT16) | SY_DT_BIT(SY_DT_FLOAT64))
#define SI (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT64))
#define UI (SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_UINT16) | SY_DT_BIT(SY_DT_UINT32) | SY_DT_BIT(SY_DT_UINT64))
#define B SY_DT_BIT(SY_DT_BOOL)

/* The op table: every op here is probed; a provider "claims" (op, dtype)
 * when it takes the probe node. Opset: --opset (default 17). */
const cts_op cts_ops[] = {
    /* elementwise binary */
    {"Add", CTS_BINARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Sub", CTS_BINARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Mul", CTS_BINARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Div", CTS_BINARY, F | SI | UI, CTS_TOL_EXACT_ELEM, CTS_OP_NONZERO_DIVISOR},
    {"Pow", CTS_BINARY, F | SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT64), CTS_TOL_TRANSCENDENTAL,
     CTS_OP_SMALL_INT_EXP},
    {"Max", CTS_BINARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Min", CTS_BINARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"PRelu", CTS_BINARY, F, CTS_TOL_EXACT_ELEM, 0},
    /* comparisons and logic */
    {"Equal", CTS_COMPARE, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Less", CTS_COMPARE, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Greater", CTS_COMPARE, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"LessOrEqual", CTS_COMPARE, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"GreaterOrEqual", CTS_COMPARE, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"And", CTS_LOGIC, B, CTS_TOL_EXACT_ELEM, 0},
    {"Or", CTS_LOGIC, B, CTS_TOL_EXACT_ELEM, 0},
    {"Xor", CTS_LOGIC, B, CTS_TOL_EXACT_ELEM, 0},
    /* elementwise unary */
    {"Relu", CTS_UNARY, F | SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_INT32) |
                            SY_DT_BIT(SY_DT_INT64),
     CTS_TOL_EXACT_ELEM, 0},
    {"Abs", CTS_UNARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Neg", CTS_UNARY, F | SI, CTS_TOL_EXACT_ELEM, 0},
    {"Sign", CTS_UNARY, F | SI | UI, CTS_TOL_EXACT_ELEM, 0},
    {"Floor", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    {"Ceil", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    {"Round", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    {"Reciprocal", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    {"Sqrt", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    {"Identity", CTS_UNARY, F | SI | UI | B, CTS_TOL_EXACT_ELEM, 0},
    {"Not", CTS_UNARY, B, CTS_TOL_EXACT_ELEM, 0},
    {"Exp", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Log", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Tanh", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Sigmoid", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Erf", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Sin", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Cos", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Softplus", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Softsign", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Elu", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"Selu", CTS_UNARY, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"LeakyRelu", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    {"HardSigmoid", CTS_UNARY, F, CTS_TOL_EXACT_ELEM, 0},
    /* matrix products and normalisations */
    {"MatMul", CTS_MATMUL, F | SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT64), CTS_TOL_ACCUM, 0},
    {"Gemm", CTS_GEMM, F, CTS_TOL_ACCUM, 0},
    {"Softmax", CTS_SOFTMAX, F, CTS_TOL_TRANSCENDENTAL, 0},
    {"LogSoftmax", CTS_SOFTMAX, F, CTS_TOL_TRANSCENDENTAL, 0},
};
const size_t cts_n_ops = sizeof cts_ops / sizeof cts_ops[0];

/* ---- element access ----------------------------------------------------------- */

static size_t dt_size(sy_dtype dt) { return sy_dtype_size(dt); }

static bool dt_float(sy_dtype dt)
{
    return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT64 || dt == SY_DT_FLOAT16 || dt == SY_DT_BFLOAT16;
}

static bool dt_signed(sy_dtype dt)
{
    return dt == SY_DT_INT8 || dt == SY_DT_INT16 || dt == SY_DT_INT32 || dt == SY_DT_INT64;
}

static double load_f(const void *d, sy_dtype dt, size_t i)
{
    switch (dt) {
    case SY_DT_FLOAT32: return ((const float *)d)[i];
    case SY_DT_FLOAT64: return ((const double *)d)[i];
    case SY_DT_FLOAT16: return sy_f16_to_f32(((const uint16_t *)d)[i]);
    case SY_DT_BFLOAT16: return sy_bf16_to_f32(((const uint16_t *)d)[i]);
    case SY_DT_INT8: return ((const int8_t *)d)[i];
    case SY_DT_INT16: return ((const int16_t *)d)[i];
    case SY_DT_INT32: return ((const int32_t *)d)[i];
    case SY_DT_INT64: return (double)((const int64_t *)d)[i];
    case SY_DT_UINT8: case SY_DT_BOOL: return ((const uint8_t *)d)[i];
    case SY_DT_UINT16: return ((const uint16_t *)d)[i];
    case SY_DT_UINT32: return ((const uint32_t *)d)[i];
    case SY_DT_UINT64: return (double)((const uint64_t *)d)[i];
    default: return NAN;
    }
}

static void store_f(void *d, sy_dtype dt, size_t i, double v)
{
    switch (dt) {
    case SY_DT_FLOAT32: ((float *)d)[i] = (float)v; break;
    case SY_DT_FLOAT64: ((double *)d)[i] = v; break;
    case SY_DT_FLOAT16: ((uint16_t *)d)[i] = sy_f32_to_f16((float)v); break; /* exact: the generator's values are representable */
    case SY_DT_BFLOAT16: ((uint16_t *)d)[i] = sy_f32_to_bf16((float)v); break;
    default: break;
    }
}

/* integers are written from int64 with two's complement wrap (memcpy of the
 * low bytes, little-endian hosts) */
static void store_i(void *d, sy_dtype dt, size_t i, int64_t v)
{
    size_t es = dt_size(dt);
    uint64_t u = (uint64_t)v;
    memcpy((uint8_t *)d + i * es, &u, es);
}

static void int_range(sy_dtype dt, int64_t *lo, uint64_t *hi)
{
    switch (dt) {
    case SY_DT_INT8: *lo = INT8_MIN, *hi = INT8_MAX; break;
    case SY_DT_INT16: *lo = INT16_MIN, *hi = INT16_MAX; break;
    case SY_DT_INT32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    case SY_DT_INT64: *lo = INT64_MIN, *hi = INT64_MAX; break;
    case SY_DT_UINT8: *lo = 0, *hi = UINT8_MAX; break;
    case SY_DT_UINT16: *lo = 0, *hi = UINT16_MAX; break;
    case SY_DT_UINT32: *lo = 0, *hi = UINT32_MAX; break;
    case SY_DT_UINT64: *lo = 0, *hi = UINT64_MAX; break;
    default: *lo = 0, *hi = 1; break;
    }
}

/* ---- data ----------------------------------------------------------------------- */

typedef enum fill_mode { FILL_NORMAL, FILL_LARGE, FILL_SPECIAL, FILL_POSITIVE } fill_mode;

static uint32_t lcg_next(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static int64_t lcg_range(uint32_t *s, int64_t lo, int64_t hi) /* [lo, hi] */
{
    return lo + (int64_t)(lcg_next(s) % (uint32_t)(hi - lo + 1));
}

static const uint32_t f32_special[] = {0x7fc00000u, 0x7f800000u, 0xff800000u, 0x80000000u, 0x00000001u, 0x80000001u,
                                       0x7f7fffffu, 0xff7fffffu, 0x3f800000u, 0xbf800000u, 0x3f000000u, 0u};
static const uint64_t f64_special[] = {0x7ff8000000000000u, 0x7ff0000000000000u, 0xfff0000000000000u,
                                       0x8000000000000000u, 1u, 0x8000000000000001u, 0x7fefffffffffffffu,
                                       0xffefffffffffffffu, 0x3ff0000000000000u, 0xbff0000000000000u,
                                       0x3fe0000000000000u, 0u};
static const uint16_t f16_special[] = {0x7e00, 0x7c00, 0xfc00, 0x8000, 0x0001, 0x8001,
                                       0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3800, 0};
static const uint16_t bf16_special[] = {0x7fc0, 0x7f80, 0xff80, 0x8000, 0x0001, 0x8001,
                                        0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3f00, 0};
#define N_SPECIAL 12

/* exponent of "large" values: near the top of each float type's range */
static int large_exp(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT64: return 1000;
    case SY_DT_FLOAT16: return 8; /* k * 2^8, |k| <= 255: up to 65280 */
    default: return 100;          /* f32 and bf16: ~1e30 */
    }
}

static void fill(cts_value *v, fill_mode mode, uint32_t seed, uint32_t op_flags, int which_input)
{
    size_t n = 1;
    for (int32_t d = 0; d < v->rank; d++)
        n *= (size_t)v->dims[d];
    size_t es = dt_size(v->dtype);
    v->nbytes = n * es;
    v->data = n ? calloc(n, es) : NULL;
    if (n && !v->data) {
        v->nbytes = 0;
        return;
    }
    uint32_t s = seed * 2654435761u + 12345u;
    sy_dtype dt = v->dtype;
    bool divisor = (op_flags & CTS_OP_NONZERO_DIVISOR) && which_input == 1;
    bool exponent = (op_flags & CTS_OP_SMALL_INT_EXP) && which_input == 1;
    for (size_t i = 0; i < n; i++) {
        if (dt == SY_DT_BOOL) {
            ((uint8_t *)v->data)[i] = (uint8_t)(lcg_next(&s) & 1u);
        } else if (dt_float(dt)) {
            double x;
            if (mode == FILL_SPECIAL) {
                size_t k = (i + (size_t)seed) % N_SPECIAL;
                switch (dt) {
                case SY_DT_FLOAT32: memcpy((uint8_t *)v->data + i * 4, &f32_special[k], 4); break;
                case SY_DT_FLOAT64: memcpy((uint8_t *)v->data + i * 8, &f64_special[k], 8); break;
                case SY_DT_FLOAT16: ((uint16_t *)v->data)[i] = f16_special[k]; break;
                default: ((uint16_t *)v->data)[i] = bf16_special[k]; break;
                }
                continue;
            }
            int64_t k = lcg_range(&s, -128, 128);
            if (mode == FILL_POSITIVE)
                k = k < 0 ? -k : k == 0 ? 1 : k;
            if (mode == FILL_LARGE)
                x = ldexp((double)(k ? k : 1) * (dt == SY_DT_FLOAT16 ? 2.0 : 1.0), large_exp(dt)) / 2.0;
            else
                x = (double)k / 64.0;
            store_f(v->data, dt, i, x);
        } else {
            int64_t lo;
            uint64_t hi;
            int_range(dt, &lo, &hi);
            int64_t x;
            if (exponent) {
                x = lcg_range(&s, 0, 3);
            } else if (mode == FILL_SPECIAL) {
                /* the extremes: min, max, min+1, max-1, 0, -1, 1, 2 */
                int64_t ext[8] = {lo, (int64_t)hi, lo + 1, (int64_t)(hi - 1), 0, dt_signed(dt) ? -1 : 3, 1, 2};
                x = ext[(i + seed) % 8];
            } else if (mode == FILL_LARGE) {
                /* within 1/16 of the top or bottom of the range: sums wrap */
                uint64_t span = (hi - (uint64_t)lo) / 16u;
                uint64_t off = ((uint64_t)lcg_next(&s) << 24 ^ lcg_next(&s)) % (span ? span : 1);
                x = (lcg_next(&s) & 1u) && dt_signed(dt) ? (int64_t)((uint64_t)lo + off) : (int64_t)(hi - off);
            } else {
                x = dt_signed(dt) ? lcg_range(&s, -10, 10) : lcg_range(&s, 0, 20);
            }
            if (divisor) {
                /* no division by 0, and no INT_MIN / -1 (both undefined in C and in ONNX) */
                if (x == 0 || x == -1)
                    x = 3;
            }
            store_i(v->data, dt, i, x);
        }
    }
}

/* ---- cases ------------------------------------------------------------------------ */

typedef struct shape {
    int32_t rank;
    int64_t d[SY_MAX_RANK];
} shape;

#define SH(...) {(int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}}
#define SH0 {0, {0}}

typedef struct case_list {
    cts_case *v;
    size_t n, cap;
} case_list;

static cts_case *add_case(case_list *l, const cts_op *op, int64_t opset, const char *fmt, const char *suffix)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        cts_case *g = realloc(l->v, cap * sizeof *g);
        if (!g)
            return NULL;
        l->v = g;
        l->cap = cap;
    }
    cts_case *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s%s", fmt, suffix);
    c->node.op = op->op;
    c->node.opset = opset;
    c->node.n_outputs = 1;
    return c;
}

static void shape_str(const shape *s, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int32_t i = 0; i < s->rank && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)s->d[i]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
}

static void set_input(cts_case *c, uint32_t i, sy_dtype dt, const shape *s, fill_mode mode, uint32_t seed,
                      uint32_t flags)
{
    cts_value *v = &c->node.in[i];
    v->dtype = dt;
    v->rank = s->rank;
    memcpy(v->dims, s->d, sizeof s->d);
    fill(v, mode, seed, flags, (int)i);
    if (c->node.n_inputs < i + 1)
        c->node.n_inputs = i + 1;
}

static double max_abs(const cts_value *v)
{
    double m = 0;
    size_t n = dt_size(v->dtype) ? v->nbytes / dt_size(v->dtype) : 0;
    for (size_t i = 0; i < n; i++) {
        double x = fabs(load_f(v->data, v->dtype, i));
        if (isfinite(x) && x > m)
            m = x;
    }
    return m;
}

static const char *mode_suffix(fill_mode m)
{
    switch (m) {
    case FILL_LARGE: return "_large";
    case FILL_SPECIAL: return "_special";
    default: return "";
    }
}

static void unary_cases(case_list *l, const cts_op *op, sy_dtype dt, int64_t opset)
{
    static const struct {
        const char *name;
        shape s;
    } shapes[] = {
        {"scalar", SH0},          {"vector", SH(7)},       {"3d", SH(2, 3, 4)},
        {"size1_dims", SH(1, 1, 5)}, {"zero_size", SH(0, 3)}, {"long", SH(1000)},
    };
    uint32_t seed = 1;
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        char nm[64], sh[48];
        shape_str(&shapes[k].s, sh, sizeof sh);
        snprintf(nm, sizeof nm, "%s%s", shapes[k].name, sh);
        cts_case *c = add_case(l, op, opset, nm, "");
        if (c)
            set_input(c, 0, dt, &shapes[k].s, FILL_NORMAL, seed++, op->flags);
    }
    if (dt == SY_DT_BOOL)
        return;
    shape s16 = SH(4, 6);
    for (fill_mode m = FILL_LARGE; m <= FILL_SPECIAL; m++) {
        cts_case *c = add_case(l, op, opset, "values[4,6]", mode_suffix(m));
        if (c)
            set_input(c, 0, dt, &s16, m, seed++, op->flags);
    }
}

static void binary_cases(case_list *l, const cts_op *op, sy_dtype dt, int64_t opset)
{
    static const struct {
        const char *name;
        shape a, b;
    } pairs[] = {
        {"same_shape", SH(2, 3, 4), SH(2, 3, 4)},
        {"bcast_trailing", SH(2, 3, 4), SH(4)},
        {"bcast_both", SH(2, 1, 4), SH(3, 1)},
        {"bcast_first", SH(1, 5), SH(3, 5)},
        {"scalar_rhs", SH(5), SH0},
        {"scalar_lhs", SH0, SH(2, 2)},
        {"scalars", SH0, SH0},
        {"size1", SH(1, 1), SH(1, 1)},
        {"zero_size", SH(0, 4), SH(4)},
        {"zero_size_bcast", SH(2, 0), SH(1, 1)},
        {"rank6", SH(2, 1, 2, 1, 2, 3), SH(2, 1, 2, 1, 3)},
    };
    uint32_t seed = 11;
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
        char nm[80], sa[40], sb[40];
        shape_str(&pairs[k].a, sa, sizeof sa);
        shape_str(&pairs[k].b, sb, sizeof sb);
        snprintf(nm, sizeof nm, "%s%s%s", pairs[k].name, sa, sb);
        /* PRelu's slope broadcasts unidirectionally onto X */
        if (!strcmp(op->op, "PRelu") && (k == 2 || k == 3 || k == 5 || k == 9 || k == 10))
            continue;
        cts_case *c = add_case(l, op, opset, nm, "");
        if (!c)
            return;
        set_input(c, 0, dt, &pairs[k].a, FILL_NORMAL, seed++, op->flags);
        set_input(c, 1, dt, &pairs[k].b, FILL_NORMAL, seed++, op->flags);
    }
    if (dt == SY_DT_BOOL)
        return;
    if ((op->flags & CTS_OP_SMALL_INT_EXP) && !dt_float(dt))
        return; /* integer Pow: only small exponents (overflow is undefined) */
    shape s = SH(4, 6);
    for (fill_mode m = FILL_LARGE; m <= FILL_SPECIAL; m++) {
        cts_case *c = add_case(l, op, opset, "values[4,6][4,6]", mode_suffix(m));
        if (!c)
            return;
        set_input(c, 0, dt, &s, m, seed++, op->flags);
        set_input(c, 1, dt, &s, m, seed + 5, op->flags); /* another phase of the same values */
        seed++;
    }
}

static void matmul_cases(case_list *l, const cts_op *op, sy_dtype dt, int64_t opset)
{
    static const struct {
        const char *name;
        shape a, b;
    } pairs[] = {
        {"2d", SH(3, 4), SH(4, 5)},
        {"size1", SH(1, 4), SH(4, 1)},
        {"inner1", SH(3, 1), SH(1, 5)},
        {"batched", SH(2, 3, 4), SH(2, 4, 5)},
        {"bcast_rhs_2d", SH(2, 3, 4), SH(4, 5)},
        {"bcast_batch", SH(2, 1, 3, 4), SH(3, 4, 2)},
        {"vec_lhs", SH(4), SH(4, 3)},
        {"vec_rhs", SH(3, 4), SH(4)},
        {"vec_vec", SH(6), SH(6)},
        {"zero_m", SH(0, 4), SH(4, 5)},
        {"zero_k", SH(3, 0), SH(0, 5)},
        {"larger", SH(17, 33), SH(33, 9)},
    };
    uint32_t seed = 31;
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++) {
        char nm[80], sa[40], sb[40];
        shape_str(&pairs[k].a, sa, sizeof sa);
        shape_str(&pairs[k].b, sb, sizeof sb);
        snprintf(nm, sizeof nm, "%s%s%s", pairs[k].name, sa, sb);
        cts_case *c = add_case(l, op, opset, nm, "");
        if (!c)
            return;
        set_input(c, 0, dt, &pairs[k].a, FILL_NORMAL, seed++, op->flags);
        set_input(c, 1, dt, &pairs[k].b, FILL_NORMAL, seed++, op->flags);
        int64_t kdim = pairs[k].a.d[pairs[k].a.rank - 1];
        c->accum_scale = (double)kdim * max_abs(&c->node.in[0]) * max_abs(&c->node.in[1]);
    }
    if (!dt_float(dt))
        return; /* integer MatMul with huge values overflows: undefined */
    shape a = SH(4, 6), b = SH(6, 3);
    for (fill_mode m = FILL_LARGE; m <= FILL_SPECIAL; m++) {
        cts_case *c = add_case(l, op, opset, "values[4,6][6,3]", mode_suffix(m));
        if (!c)
            return;
        set_input(c, 0, dt, &a, m, seed++, op->flags);
        set_input(c, 1, dt, &b, m, seed++, op->flags);
        c->accum_scale = 6.0 * max_abs(&c->node.in[0]) * max_abs(&c->node.in[1]);
    }
}

static void gemm_cases(case_list *l, const cts_op *op, sy_dtype dt, int64_t opset)
{
    static const struct {
        const char *name;
        int64_t m, k, n;
        int ta, tb;
        float alpha, beta;
        int c_kind; /* 0 none, 1 [M,N], 2 [N], 3 [M,1], 4 scalar */
    } cs[] = {
        {"plain", 3, 4, 5, 0, 0, 1.0f, 1.0f, 1}, {"transA", 3, 4, 5, 1, 0, 1.0f, 1.0f, 1},
        {"transB", 3, 4, 5, 0, 1, 1.0f, 1.0f, 2}, {"transAB", 2, 3, 4, 1, 1, 1.0f, 1.0f, 3},
        {"alpha_beta", 3, 4, 5, 0, 0, 0.5f, 2.0f, 4}, {"no_c", 3, 4, 5, 0, 0, 1.0f, 1.0f, 0},
        {"size1", 1, 1, 1, 0, 0, 1.0f, 1.0f, 1},    {"zero_m", 0, 4, 5, 0, 0, 1.0f, 1.0f, 2},
        {"larger", 9, 31, 7, 0, 1, 1.0f, 1.0f, 2},
    };
    uint32_t seed = 51;
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        char nm[80];
        snprintf(nm, sizeof nm, "%s_m%lld_k%lld_n%lld", cs[k].name, (long long)cs[k].m, (long long)cs[k].k,
                 (long long)cs[k].n);
        cts_case *c = add_case(l, op, opset, nm, "");
        if (!c)
            return;
        shape a = {2, {cs[k].ta ? cs[k].k : cs[k].m, cs[k].ta ? cs[k].m : cs[k].k}};
        shape b = {2, {cs[k].tb ? cs[k].n : cs[k].k, cs[k].tb ? cs[k].k : cs[k].n}};
        set_input(c, 0, dt, &a, FILL_NORMAL, seed++, op->flags);
        set_input(c, 1, dt, &b, FILL_NORMAL, seed++, op->flags);
        shape cc = SH0;
        if (cs[k].c_kind == 1)
            cc = (shape){2, {cs[k].m, cs[k].n}};
        else if (cs[k].c_kind == 2)
            cc = (shape){1, {cs[k].n}};
        else if (cs[k].c_kind == 3)
            cc = (shape){2, {cs[k].m, 1}};
        if (cs[k].c_kind)
            set_input(c, 2, dt, &cc, FILL_NORMAL, seed++, op->flags);
        c->node.attrs[0] = (cts_attr){"transA", CTS_ATTR_INT, cs[k].ta, 0};
        c->node.attrs[1] = (cts_attr){"transB", CTS_ATTR_INT, cs[k].tb, 0};
        c->node.attrs[2] = (cts_attr){"alpha", CTS_ATTR_FLOAT, 0, cs[k].alpha};
        c->node.attrs[3] = (cts_attr){"beta", CTS_ATTR_FLOAT, 0, cs[k].beta};
        c->node.n_attrs = 4;
        c->accum_scale = (double)cs[k].k * max_abs(&c->node.in[0]) * max_abs(&c->node.in[1]) * cs[k].alpha +
                         (cs[k].c_kind ? max_abs(&c->node.in[2]) * cs[k].beta : 0);
    }
}

static void softmax_cases(case_list *l, const cts_op *op, sy_dtype dt, int64_t opset)
{
    static const struct {
        const char *name;
        shape s;
        int64_t axis;
    } cs[] = {
        {"last_axis", SH(3, 5), -1}, {"axis0", SH(3, 5), 0},     {"3d_axis1", SH(2, 3, 4), 1},
        {"size1", SH(1, 1), -1},     {"zero_rows", SH(0, 5), -1}, {"wide", SH(2, 257), 1},
    };
    uint32_t seed = 71;
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        char nm[80], sh[40];
        shape_str(&cs[k].s, sh, sizeof sh);
        snprintf(nm, sizeof nm, "%s%s", cs[k].name, sh);
        cts_case *c = add_case(l, op, opset, nm, "");
        if (!c)
            return;
        set_input(c, 0, dt, &cs[k].s, FILL_NORMAL, seed++, op->flags);
        c->node.attrs[0] = (cts_attr){"axis", CTS_ATTR_INT, cs[k].axis, 0};
        c->node.n_attrs = 1;
    }
    shape s = SH(3, 8);
    for (fill_mode m = FILL_LARGE; m <= FILL_SPECIAL; m++) {
        cts_case *c = add_case(l, op, opset, "values[3,8]", mode_suffix(m));
        if (!c)
            return;
        set_input(c, 0, dt, &s, m, seed++, op->flags);
        c->node.attrs[0] = (cts_attr){"axis", CTS_ATTR_INT, -1, 0};
        c->node.n_attrs = 1;
    }
}

cts_case *cts_make_cases(const cts_op *op, sy_dtype dt, int64_t opset, size_t *n)
{
    case_list l = {0};
    switch (op->kind) {
    case CTS_UNARY: unary_cases(&l, op, dt, opset); break;
    case CTS_BINARY:
    case CTS_COMPARE:
    case CTS_LOGIC: binary_cases(&l, op, dt, opset); break;
    case CTS_MATMUL: matmul_cases(&l, op, dt, opset); break;
    case CTS_GEMM: gemm_cases(&l, op, dt, opset); break;
    case CTS_SOFTMAX: softmax_cases(&l, op, dt, opset); break;
    }
    *n = l.n;
    return l.v;
}

bool cts_make_probe(const cts_op *op, sy_dtype dt, int64_t opset, cts_case *out)
{
    size_t n = 0;
    cts_case *all = cts_make_cases(op, dt, opset, &n);
    if (!all || !n) {
        free(all);
        return false;
    }
    /* the first case of every kind is an ordinary one */
    *out = all[0];
    for (size_t i = 1; i < n; i++)
        cts_free_node(&all[i].node);
    free(all);
    snprintf(out->name, sizeof out->name, "probe");
    return true;
}

void cts_free_node(cts_node *n)
{
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        free(n->in[i].data);
        n->in[i].data = NULL;
    }
}

void cts_free_cases(cts_case *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        cts_free_node(&c[i].node);
    free(c);
}

/* ---- comparison -------------------------------------------------------------------- */

sy_dtype cts_storage_precision = SY_DT_FLOAT32;

/* Largest finite value of a storage precision. */
static double storage_max(sy_dtype dt) { return dt == SY_DT_FLOAT16 ? 65504.0 : dt == SY_DT_BFLOAT16 ? 3.39e38 : 0.0; }

bool cts_outside_storage(const cts_node *n)
{
    double range = storage_max(cts_storage_precision);
    if (range <= 0.0)
        return false;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const cts_value *v = &n->in[i];
        if (v->dtype != SY_DT_FLOAT32 || !v->data)
            continue;
        for (size_t k = 0; k < v->nbytes / sizeof(float); k++) {
            float x = ((const float *)v->data)[k];
            if (isfinite(x) && fabs((double)x) > range)
                return true;
        }
    }
    return false;
}

/* Documented in docs/plugin-guide.md ("Conformance kit: tolerances"). */
void cts_tolerance(sy_dtype dt, cts_tol tol, double *rtol, double *atol)
{
    /* per dtype: {elementwise, transcendental, accumulating} relative tolerance */
    double r[3] = {0, 0, 0}, a[3] = {0, 0, 0};
    switch (dt) {
    case SY_DT_FLOAT32:
        r[0] = 1e-6, r[1] = 1e-5, r[2] = 1e-5;
        a[0] = 1e-7, a[1] = 1e-6, a[2] = 1e-6;
        break;
    case SY_DT_FLOAT64:
        r[0] = 1e-14, r[1] = 1e-12, r[2] = 1e-12;
        a[0] = 1e-15, a[1] = 1e-13, a[2] = 1e-13;
        break;
    case SY_DT_FLOAT16:
        r[0] = 1e-3, r[1] = 5e-3, r[2] = 5e-3;
        a[0] = 1e-4, a[1] = 1e-3, a[2] = 1e-3;
        break;
    case SY_DT_BFLOAT16:
        r[0] = 8e-3, r[1] = 3e-2, r[2] = 3e-2;
        a[0] = 1e-3, a[1] = 1e-2, a[2] = 1e-2;
        break;
    default: break; /* integers and bool: exact */
    }
    *rtol = r[tol];
    *atol = a[tol];
}

static const char *fmt_elem(char *buf, size_t len, const sy_tensor *t, size_t i)
{
    if (dt_float(t->dtype))
        snprintf(buf, len, "%.9g", load_f(t->data, t->dtype, i));
    else if (t->dtype == SY_DT_UINT64)
        snprintf(buf, len, "%llu", (unsigned long long)((const uint64_t *)t->data)[i]);
    else if (t->dtype == SY_DT_INT64)
        snprintf(buf, len, "%lld", (long long)((const int64_t *)t->data)[i]);
    else
        snprintf(buf, len, "%.0f", load_f(t->data, t->dtype, i));
    return buf;
}

bool cts_compare(const cts_op *op, const cts_case *c, const sy_tensor *got, const sy_tensor *ref, char *msg,
                 size_t msg_len)
{
    if (got->dtype != ref->dtype) {
        snprintf(msg, msg_len, "dtype %s, expected %s", sy_dtype_name(got->dtype), sy_dtype_name(ref->dtype));
        return false;
    }
    bool same_shape = got->rank == ref->rank;
    for (int32_t d = 0; same_shape && d < got->rank; d++)
        same_shape = got->dims[d] == ref->dims[d];
    if (!same_shape) {
        shape g = {got->rank, {0}}, r = {ref->rank, {0}};
        memcpy(g.d, got->dims, sizeof g.d);
        memcpy(r.d, ref->dims, sizeof r.d);
        char gs[64], rs[64];
        shape_str(&g, gs, sizeof gs);
        shape_str(&r, rs, sizeof rs);
        snprintf(msg, msg_len, "shape %s, expected %s", gs, rs);
        return false;
    }
    size_t es = dt_size(ref->dtype);
    size_t n = (size_t)sy_tensor_numel(ref);
    if (!es) {
        snprintf(msg, msg_len, "dtype %s cannot be compared", sy_dtype_name(ref->dtype));
        return false;
    }
    if (n && (!got->data || !ref->data || got->nbytes < n * es)) {
        snprintf(msg, msg_len, "output has %zu bytes (data %s), expected %zu", got->nbytes,
                 got->data ? "set" : "NULL", n * es);
        return false;
    }
    double rtol, atol;
    /* a provider storing float32 as fp16/bf16 is judged with that precision */
    sy_dtype judged = ref->dtype == SY_DT_FLOAT32 && cts_storage_precision != SY_DT_FLOAT32 ? cts_storage_precision
                                                                                          : ref->dtype;
    double range = judged != ref->dtype ? storage_max(judged) : 0.0;
    cts_tolerance(judged, op->tol, &rtol, &atol);
    if (op->tol == CTS_TOL_ACCUM && c->accum_scale > 0)
        atol = rtol * c->accum_scale > atol ? rtol * c->accum_scale : atol;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        bool ok;
        if (!dt_float(ref->dtype)) {
            if (ref->dtype == SY_DT_BOOL)
                ok = (((const uint8_t *)got->data)[i] != 0) == (((const uint8_t *)ref->data)[i] != 0);
            else
                ok = !memcmp((const uint8_t *)got->data + i * es, (const uint8_t *)ref->data + i * es, es);
        } else {
            double g = load_f(got->data, ref->dtype, i), r = load_f(ref->data, ref->dtype, i);
            if (range > 0.0 && !isfinite(g) && (!isfinite(r) || fabs(r) > range))
                ok = true; /* beyond the storage range: overflow is the right answer */
            else if (isnan(r) || isnan(g))
                ok = isnan(r) && isnan(g);
            else if (isinf(r) || isinf(g))
                ok = g == r;
            else
                ok = fabs(g - r) <= atol + rtol * fabs(r);
        }
        if (!ok && bad++ == 0)
            first = i;
    }
    if (bad) {
        char gb[48], rb[48];
        snprintf(msg, msg_len, "%zu of %zu elements differ; first at [%zu]: got %s, expected %s (rtol %g, atol %g)",
                 bad, n, first, fmt_elem(gb, sizeof gb, got, first), fmt_elem(rb, sizeof rb, ref, first), rtol, atol);
        return false;
    }
    return true;
}
