/*
 * tflk_fixed: the integer arithmetic of TFLite Micro's int8 reference
 * kernels beyond the plain requantization, in plain C with no libm:
 *
 *  - gemmlowp's fixed-point exp on negative values, 1/(1+x), logistic and
 *    tanh on a Q(I).(31-I) int32 (what reference_integer_ops::Logistic and
 *    ::Tanh run for int8 with I = 4, and SOFTMAX's exp with I = 5);
 *  - the int16 sigmoid/tanh of the LSTM gates: linear interpolation in
 *    TFLite's 256-entry table of sigmoid(i/24) in 0.16 fixed point;
 *  - DIV's fixed-point reciprocal and the last step of int8 MEAN/SUM.
 *
 * Raw additions wrap like the int32 hardware TFLite runs on; the callers
 * keep operands in the ranges where the reference never overflows.
 */
#include "tflk.h"

/* the gemmlowp primitives are sy_fixedpoint.h's (the SDK's sy_q_* share
 * them); these names are the kernels' */
int32_t tflk_sat_shl(int32_t x, int32_t e) { return sy_fx_sat_shl(x, e); }

int32_t tflk_exp_on_negative(int32_t a, int32_t int_bits) { return sy_fx_exp_on_negative(a, int_bits); }

int32_t tflk_one_over_one_plus_x(int32_t a) { return sy_fx_one_over_one_plus_x(a); }

/* (1 - a) / (1 + a) for a in [0, 1), Q0.31 */
static int32_t one_minus_x_over_one_plus_x(int32_t a)
{
    return sy_fx_sat_shl(sy_fx_wsub(sy_fx_nr_reciprocal_q2(a), 1 << 29), 2);
}

int32_t tflk_logistic_fx(int32_t a, int32_t int_bits)
{
    if (a == 0)
        return 1 << 30;
    int32_t abs_a = a > 0 ? a : sy_fx_wsub(0, a);
    int32_t pos = tflk_one_over_one_plus_x(tflk_exp_on_negative(sy_fx_wsub(0, abs_a), int_bits));
    return a > 0 ? pos : sy_fx_wsub(INT32_MAX, pos);
}

int32_t tflk_tanh_fx(int32_t a, int32_t int_bits)
{
    if (a == 0)
        return 0;
    int32_t neg = a < 0 ? a : sy_fx_wsub(0, a);
    /* exp(2 * neg): the same raw value read with one more integer bit */
    int32_t t = one_minus_x_over_one_plus_x(tflk_exp_on_negative(neg, int_bits + 1));
    return a < 0 ? sy_fx_wsub(0, t) : t;
}

/* ---- int8 LOGISTIC / TANH (reference_integer_ops) ----------------------------- */

void tflk_logistic_s8(const tflk_act8 *p, const int8_t *x, int8_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t v = (int32_t)x[i] - p->in_zp;
        if (v <= -p->radius) {
            y[i] = -128;
        } else if (v >= p->radius) {
            y[i] = 127;
        } else {
            int32_t q4 = tflk_mul_by_qm(v, p->mult, p->shift);
            int32_t r = tflk_rdivpot(tflk_logistic_fx(q4, 4), 31 - 8) - 128; /* output 1/256, zero point -128 */
            y[i] = (int8_t)tflk_clampi(r, -128, 127);
        }
    }
}

void tflk_tanh_s8(const tflk_act8 *p, const int8_t *x, int8_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t v = (int32_t)x[i] - p->in_zp;
        if (v <= -p->radius) {
            y[i] = -128;
        } else if (v >= p->radius) {
            y[i] = 127;
        } else {
            int32_t q4 = tflk_mul_by_qm(v, p->mult, p->shift);
            int32_t r = tflk_rdivpot(tflk_tanh_fx(q4, 4), 31 - 7); /* output 1/128, zero point 0 */
            y[i] = (int8_t)tflk_clampi(r, -128, 127);
        }
    }
}

/* ---- int16 sigmoid / tanh of the integer LSTM --------------------------------- */

/* sigmoid(i / 24) in 0.16 fixed point, i = 0..255: the constant table of
 * TFLite's reference kernels (tensorflow/lite/kernels/internal/common.h,
 * sigmoid_table_uint16). Its entries are not a plain rounding of the
 * function (some are one above), so the values are TFLite's, as
 * bit-exactness requires; tanh(x) = 2 sigmoid(2x) - 1 reads the same table. */
static const uint16_t sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

/* x * mult >> shift with rounding; mult 0 means 3 << shift (a power-of-two
 * input scale), as in the reference */
static int32_t lut_input(int16_t x, int32_t mult, int32_t shift)
{
    if (mult == 0) {
        mult = 3 << shift;
        shift = 0;
    }
    int32_t round = shift > 0 ? 1 << (shift - 1) : 0;
    return ((int32_t)x * mult + round) >> shift;
}

void tflk_sigmoid_s16(int32_t mult, int32_t shift, const int16_t *x, int16_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t v = lut_input(x[i], mult, shift);
        uint32_t a = (uint32_t)(v < 0 ? -v : v);
        uint32_t uh = a >> 9, r;
        if (uh >= 255) {
            r = 0x7FFFu << 10;
        } else {
            uint32_t ua = sigmoid_table[uh], ub = sigmoid_table[uh + 1];
            r = (ua << 9) + (a & 0x1ffu) * (ub - ua);
        }
        r = v >= 0 ? r + (1u << 9) : (1u << (16 + 9)) - r + (1u << 9) - 1u;
        y[i] = (int16_t)(r >> 10);
    }
}

void tflk_tanh_s16(int32_t mult, int32_t shift, const int16_t *x, int16_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        int32_t v = lut_input(x[i], mult, shift);
        uint32_t a = (uint32_t)(v < 0 ? -v : v);
        uint32_t uh = a >> 8;
        int32_t r;
        if (uh >= 255) {
            r = 0xFFFF << 8;
        } else {
            uint32_t ua = sigmoid_table[uh], ub = sigmoid_table[uh + 1];
            r = (int32_t)((ua << 8) + (a & 0xffu) * (ub - ua));
        }
        r = v >= 0 ? r - (1 << (14 + 9)) + (1 << (9 - 2)) : -r + (1 << (14 + 9)) + (1 << (9 - 2)) - 1;
        /* an arithmetic shift, as the reference's int32 >> */
        y[i] = (int16_t)(r >= 0 ? r >> 8 : -(int32_t)((uint32_t)(-(r + 1)) >> 8) - 1);
    }
}

/* ---- reciprocal (SOFTMAX, DIV) -------------------------------------------------- */

int32_t tflk_get_reciprocal(int32_t x, int32_t integer_digits, int32_t *num_bits_over_unit)
{
    return sy_fx_get_reciprocal(x, integer_digits, num_bits_over_unit);
}

/* leading sign bits of an int32 (31 for 0), as TFLite's CountLeadingSignBits */
static int32_t clrsb32(int32_t x)
{
    return x >= 0 ? sy_fx_clz32((uint32_t)x) - 1 : sy_fx_clz32(~(uint32_t)x) - 1;
}

int32_t tflk_div_s8(const tflk_div8 *p, int32_t a, int32_t b)
{
    int32_t x1 = a - p->zp1, x2 = b - p->zp2;
    if (x2 == 0) /* the reference asserts; a quotient of 0 is the caller's error to report */
        return tflk_clampi(p->out_zp, p->lo, p->hi);
    if (x2 < 0) { /* the reciprocal is a positive multiplier */
        x1 = -x1;
        x2 = -x2;
    }
    int32_t recip_shift;
    int32_t inv = tflk_get_reciprocal(x2, 31, &recip_shift);
    int32_t headroom = clrsb32(x1);
    int32_t unscaled = tflk_srdhm((int32_t)((uint32_t)x1 << headroom), inv);
    int32_t total_shift = p->shift - recip_shift - headroom;
    int32_t r = p->out_zp + tflk_rdivpot(tflk_srdhm(unscaled, p->mult), -total_shift);
    return tflk_clampi(r, p->lo, p->hi);
}

/* ---- int8 MEAN / SUM: the last step of TFLite Micro's reduce ---------------------- */

int32_t tflk_mean_s8(const tflk_reduce8 *p, int32_t sum, int32_t count)
{
    if (count <= 0)
        return 0;
    if (p->same) /* reference_ops::Mean: the integer quotient, truncated toward zero */
        return tflk_clampi(sum / count, -128, 127);
    /* QuantizedMeanOrSum: the mean in float, rescaled, rounded half away from zero */
    float mean = (float)sum / (float)count;
    float bias = (float)(-p->in_zp) * p->scale;
    float r = tflk_roundf(mean * p->scale + bias) + (float)p->out_zp;
    r = r > 127.0f ? 127.0f : r;
    r = r < -128.0f ? -128.0f : r;
    return (int32_t)r;
}

int32_t tflk_sum_s8(const tflk_reduce8 *p, int32_t sum, int32_t count)
{
    float bias = (float)(-p->in_zp) * p->scale * (float)count;
    float r = tflk_roundf((float)sum * p->scale + bias);
    /* the reference casts the int32 to int8 without a clamp: two's complement wrap */
    if (!(r > -2147483648.0f && r < 2147483648.0f))
        r = 0.0f;
    uint32_t v = (uint32_t)(int32_t)r + (uint32_t)p->out_zp;
    return (int32_t)(int8_t)(uint8_t)(v & 0xffu);
}

/* MultiplyByQuantizedMultiplier for an int64 x (common.h): the multiplier
 * rounded to 16 bits, one rounding shift. shift must be in [-31, 7]. The
 * reference's int32 result is a plain cast, so it wraps. */
int32_t tflk_mul_by_qm64(int64_t x, int32_t mult, int32_t shift)
{
    const int64_t reduced = mult < 0x7FFF0000 ? (int64_t)((mult + (1 << 15)) >> 16) : 0x7FFF;
    const int32_t total_shift = 15 - shift;
    const int64_t r = (x * reduced + ((int64_t)1 << (total_shift - 1))) >> total_shift;
    return (int32_t)(uint32_t)(uint64_t)r;
}
