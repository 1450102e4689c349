/*
 * tflk_binary: ADD, SUB and MUL (TFLite, Table A #11-#13) in fp32 and int8
 * with numpy broadcasting over up to 8 dims (TFLK_BIN_RANK), the strides precomputed by the
 * host (0 along a broadcast dim); on the same walk MAXIMUM, MINIMUM (fp32,
 * raw int8 codes), fp32 DIV, the comparisons (fp32 and bool operands, bool
 * out) and LOGICAL_AND / LOGICAL_OR; ONNX PRelu, Pow, Mod (fmod = 1) in
 * fp32, BitShift on uint8 and Div on int8 codes; int8 PRELU (TFLite's
 * integer form) and, through float, int8 POW and PRELU with an fp32 alpha.
 */
#include "tflk.h"

/* ADD/SUB rounded once (p->one): the sum of the centred codes times their
 * multipliers, one round-half-up shift (the bounds in tflk.h keep it in
 * int32) */
static inline int32_t add_one_round(const tflk_binary *p, int32_t a, int32_t b)
{
    return ((a - p->z1) * p->om1 + (b - p->z2) * p->om2 + (1 << (p->osh - 1))) >> p->osh;
}

int32_t tflk_binary_s8_one(const tflk_binary *p, int32_t a, int32_t b)
{
    int32_t r;
    if (p->op == TFLK_MUL) {
        r = tflk_rescale(p->rq_single, (a - p->z1) * (b - p->z2), p->mo, p->so) + p->zo;
    } else if (p->one) {
        r = add_one_round(p, a, b) + p->zo;
    } else {
        int32_t a1 = tflk_rescale(p->rq_single, (a - p->z1) * (1 << 20), p->m1, p->s1);
        int32_t a2 = tflk_rescale(p->rq_single, (b - p->z2) * (1 << 20), p->m2, p->s2);
        r = tflk_rescale(p->rq_single, p->op == TFLK_ADD ? a1 + a2 : a1 - a2, p->mo, p->so) + p->zo;
    }
    return tflk_clampi(r, p->lo, p->hi);
}

static float f32_one(const tflk_binary *p, float a, float b)
{
    float r;
    switch (p->op) {
    case TFLK_ADD: r = a + b; break;
    case TFLK_SUB: r = a - b; break;
    case TFLK_MAX: r = a > b ? a : b; break;
    case TFLK_MIN: r = a < b ? a : b; break;
    case TFLK_DIV: r = a / b; break;
    case TFLK_MAXN: r = a != a || b != b ? a + b : (a > b ? a : b); break;
    case TFLK_MINN: r = a != a || b != b ? a + b : (a < b ? a : b); break;
    case TFLK_PRELU: r = a < 0.0f ? b * a : a; break;
    case TFLK_POW: r = tflk_powf(a, b); break;
    case TFLK_FMOD: r = tflk_fmodf(a, b); break;
    default: r = a * b; break;
    }
    return tflk_act_apply(&p->act, r);
}

/* the one walk of both dtypes: an odometer over the output's dims, each
 * input's offset moved by its stride */
#define TFLK_BINARY_WALK(ONE)                                                                                      \
    do {                                                                                                           \
        int32_t idx[TFLK_BIN_RANK] = {0}, n = 1;                                                                   \
        for (int32_t d = 0; d < p->rank; d++)                                                                      \
            n *= p->dims[d];                                                                                       \
        int32_t ia = 0, ib = 0;                                                                                    \
        for (int32_t i = 0; i < n; i++) {                                                                          \
            y[i] = ONE(p, a[ia], b[ib]);                                                                           \
            for (int32_t d = p->rank - 1; d >= 0; d--) {                                                           \
                ia += p->sa[d];                                                                                    \
                ib += p->sb[d];                                                                                    \
                if (++idx[d] < p->dims[d])                                                                         \
                    break;                                                                                         \
                ia -= p->sa[d] * p->dims[d];                                                                       \
                ib -= p->sb[d] * p->dims[d];                                                                       \
                idx[d] = 0;                                                                                        \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)

/* tflk_binary_s8_one with the three rescales' choices made once per call
 * (tflk_rq: equal to tflk_mul_by_qm for every value): q[0], q[1] rescale
 * the inputs of ADD/SUB, q[2] the sum, difference or product */
static inline int8_t s8_one_rq(const tflk_binary *p, const tflk_rq *q, int32_t a, int32_t b)
{
    int32_t r;
    if (p->op == TFLK_MUL) {
        r = tflk_rq_apply(&q[2], (a - p->z1) * (b - p->z2)) + p->zo;
    } else if (p->one) {
        r = add_one_round(p, a, b) + p->zo;
    } else {
        const int32_t a1 = tflk_rq_apply(&q[0], (a - p->z1) * (1 << 20));
        const int32_t a2 = tflk_rq_apply(&q[1], (b - p->z2) * (1 << 20));
        r = tflk_rq_apply(&q[2], p->op == TFLK_ADD ? a1 + a2 : a1 - a2) + p->zo;
    }
    return (int8_t)tflk_clampi(r, p->lo, p->hi);
}
#define S8_ONE(p, x, yv) s8_one_rq((p), q, (x), (yv))

void tflk_binary_s8(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y)
{
    tflk_rq q[3];
    tflk_rq_init(&q[0], p->rq_single, p->m1, p->s1);
    tflk_rq_init(&q[1], p->rq_single, p->m2, p->s2);
    tflk_rq_init(&q[2], p->rq_single, p->mo, p->so);
    /* both inputs dense in the output's layout (a residual ADD): one flat loop, no odometer */
    int32_t n = 1, dense = 1;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        dense &= (p->sa[d] == n && p->sb[d] == n) || p->dims[d] == 1; /* a dim of 1 moves neither */
        n *= p->dims[d];
    }
    if (dense) {
        for (int32_t i = 0; i < n; i++)
            y[i] = s8_one_rq(p, q, a[i], b[i]);
        return;
    }
    TFLK_BINARY_WALK(S8_ONE);
}
void tflk_binary_f32(const tflk_binary *p, const float *a, const float *b, float *y) { TFLK_BINARY_WALK(f32_one); }

static int8_t s8_raw_one(const tflk_binary *p, int8_t a, int8_t b)
{
    return p->op == TFLK_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

static uint8_t cmp_one(const tflk_binary *p, float a, float b)
{
    switch (p->op) {
    case TFLK_EQ: return a == b;
    case TFLK_NE: return a != b;
    case TFLK_LT: return a < b;
    case TFLK_LE: return a <= b;
    case TFLK_GT: return a > b;
    default: return a >= b;
    }
}

static uint8_t bool_one(const tflk_binary *p, uint8_t a, uint8_t b)
{
    int x = a != 0, y = b != 0;
    switch (p->op) {
    case TFLK_EQ: return x == y;
    case TFLK_NE: return x != y;
    case TFLK_AND: return x && y;
    case TFLK_XOR: return x != y;
    case TFLK_LT: return x < y;
    case TFLK_LE: return x <= y;
    case TFLK_GT: return x > y;
    case TFLK_GE: return x >= y;
    default: return x || y;
    }
}

void tflk_binary_s8_raw(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y) { TFLK_BINARY_WALK(s8_raw_one); }
void tflk_compare_f32(const tflk_binary *p, const float *a, const float *b, uint8_t *y) { TFLK_BINARY_WALK(cmp_one); }
void tflk_compare_b(const tflk_binary *p, const uint8_t *a, const uint8_t *b, uint8_t *y) { TFLK_BINARY_WALK(bool_one); }

static uint8_t shift_one(const tflk_binary *p, uint8_t a, uint8_t b)
{
    if (b >= 8)
        return 0;
    return (uint8_t)(p->op == TFLK_SHL ? (uint32_t)a << b : (uint32_t)a >> b);
}

void tflk_shift_u8(const tflk_binary *p, const uint8_t *a, const uint8_t *b, uint8_t *y) { TFLK_BINARY_WALK(shift_one); }

static int8_t div_one(const tflk_binary *p, int8_t a, int8_t b)
{
    const tflk_div8 d = {p->z1, p->z2, p->zo, p->mo, p->so, p->lo, p->hi};
    return (int8_t)tflk_div_s8(&d, a, b);
}

int32_t tflk_div_s8_run(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y)
{
    int32_t nb = 1; /* b's elements: the dims it is not broadcast along */
    for (int32_t d = 0; d < p->rank; d++)
        if (p->sb[d])
            nb *= p->dims[d];
    for (int32_t i = 0; i < nb; i++)
        if (b[i] == p->z2)
            return -1;
    TFLK_BINARY_WALK(div_one);
    return 0;
}

/* ONNX Div of int8 tensors: integer division of the codes (ONNX tensors
 * carry no scale), truncated toward zero as C's (ONNX Runtime's and
 * cpu_ref's); -128 / -1 = 128 wraps to -128 as the int8 store of both */
static int8_t idiv_one(const tflk_binary *p, int8_t a, int8_t b)
{
    (void)p;
    int32_t r = (int32_t)a / (int32_t)b;
    return (int8_t)(r > 127 ? r - 256 : r);
}

int32_t tflk_idiv_s8_run(const tflk_binary *p, const int8_t *a, const int8_t *b, int8_t *y)
{
    int32_t nb = 1;
    for (int32_t d = 0; d < p->rank; d++)
        if (p->sb[d])
            nb *= p->dims[d];
    for (int32_t i = 0; i < nb; i++)
        if (b[i] == 0)
            return -1;
    TFLK_BINARY_WALK(idiv_one);
    return 0;
}

int32_t tflk_prelu_s8_one(const tflk_binary *p, int32_t a, int32_t alpha)
{
    const int32_t d = a - p->z1;
    const int32_t r = d >= 0 ? tflk_mul_by_qm(d, p->m1, p->s1) : tflk_mul_by_qm(d * (alpha - p->z2), p->m2, p->s2);
    return tflk_clampi(r + p->zo, p->lo, p->hi);
}

static int8_t prelu_one(const tflk_binary *p, int8_t a, int8_t alpha) { return (int8_t)tflk_prelu_s8_one(p, a, alpha); }

void tflk_prelu_s8(const tflk_binary *p, const int8_t *a, const int8_t *alpha, int8_t *y)
{
    const int8_t *b = alpha;
    TFLK_BINARY_WALK(prelu_one);
}

int32_t tflk_bin8f_one(const tflk_bin8f *p, int32_t a, float b)
{
    const float x = p->s1 * (float)(a - p->w.z1);
    return tflk_quantize(f32_one(&p->w, x, b), p->so, p->w.zo, p->w.lo, p->w.hi);
}

/* the walk's ONE for each kind of second operand: an int8 code dequantized, an fp32 value as it is */
#define S8F_Q(p, x, v) ((int8_t)tflk_bin8f_one(q, (x), q->s2 * (float)((v) - (p)->z2)))
#define S8F_F(p, x, v) ((int8_t)tflk_bin8f_one(q, (x), (v)))

void tflk_binary_s8f(const tflk_bin8f *q, const int8_t *a, const void *bv, int8_t *y)
{
    const tflk_binary *p = &q->w;
    if (q->b_f32) {
        const float *b = bv;
        TFLK_BINARY_WALK(S8F_F);
    } else {
        const int8_t *b = bv;
        TFLK_BINARY_WALK(S8F_Q);
    }
}
