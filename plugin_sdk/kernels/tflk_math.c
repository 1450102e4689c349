/*
 * tflk_math: the float helpers every portable kernel may use. exp, tanh and
 * the sigmoid are computed here rather than by the C library so that the
 * host (glibc) and the MCU (picolibc) produce the same bits: range
 * reduction by ln 2 with a two-part constant (Cody-Waite) and a Taylor
 * polynomial, about 1 ulp from the correctly rounded result.
 */
#include "tflk.h"

#include <string.h>

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

float tflk_roundf(float x)
{
    float a = x < 0.0f ? -x : x;
    if (!(a < 8388608.0f)) /* already integral, infinite or NaN */
        return x;
    float t = (float)(int32_t)a;
    if (a - t >= 0.5f)
        t += 1.0f;
    return x < 0.0f ? -t : t;
}

int32_t tflk_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    float v = tflk_roundf(x / scale) + (float)zp;
    if (!(v >= (float)lo)) /* also NaN */
        return lo;
    if (v > (float)hi)
        return hi;
    return (int32_t)v;
}

float tflk_expf(float x)
{
    if (x != x)
        return x;
    if (x > 88.72283935546875f)
        return from_bits(0x7f800000u);
    if (x < -103.97208404541015625f)
        return 0.0f;
    float kf = tflk_roundf(x * 1.44269502162933349609f);
    int32_t k = (int32_t)kf;
    /* ln 2 = 0x1.62e4p-1 + 0x1.7f7d1cp-20: k * hi is exact for |k| < 256 */
    float r = (x - kf * 0.693145751953125f) - kf * 1.42860682030941723212e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
                                 r * (8.33333377e-3f + r * (1.38888892e-3f + r * 1.98412701e-4f))))));
    if (k > 127) {
        p *= 2.0f;
        k--;
    }
    if (k < -126) {
        p *= from_bits((uint32_t)(127 - 64) << 23); /* 2^-64 */
        k += 64;
    }
    return p * from_bits((uint32_t)(k + 127) << 23);
}

/* e^x evaluated in double and rounded once to float: the correctly rounded
 * value except when e^x lies within about 2^-40 ulp of a rounding boundary,
 * so it agrees with the float exp of glibc and of other libms that are
 * correctly rounded in practice (the ONNX cpu_ref's softmax uses libm's
 * expf). Double is software on rv32imfc, for the few kernels that need it. */
float tflk_expf_d(float x)
{
    if (x != x)
        return x;
    if (x > 88.72283935546875f)
        return from_bits(0x7f800000u);
    if (x < -103.97208404541015625f)
        return 0.0f;
    double kd = (double)tflk_roundf(x * 1.44269502162933349609f);
    int32_t k = (int32_t)kd;
    /* ln 2 in two parts, the first with 32 significant bits: k * hi is exact */
    double r = ((double)x - kd * 0.6931471803691238164901733398437500) - kd * 1.9082149292705877000220e-10;
    double p = 1.0;
    for (int n = 13; n >= 1; n--) /* Taylor to r^13: |r| <= 0.35, error below 2^-60 */
        p = 1.0 + p * r / (double)n;
    /* 2^k as a double (k in [-150, 128]) */
    double s = 1.0;
    double b = k < 0 ? 0.5 : 2.0;
    for (int32_t e = k < 0 ? -k : k; e; e >>= 1, b *= b)
        if (e & 1)
            s *= b;
    return (float)(p * s);
}

/* e^y - 1 for |y| <= 1.25 (series to y^12) */
static float expm1_small(float y)
{
    float s = 1.0f;
    for (int n = 12; n >= 2; n--)
        s = 1.0f + s * y / (float)n;
    return y * s;
}

float tflk_expm1f(float x)
{
    if (x != x)
        return x;
    if (x >= -1.25f && x <= 1.25f)
        return expm1_small(x);
    return tflk_expf(x) - 1.0f;
}

/* integral parts for |x| < 2^23 by integer truncation; larger values,
 * infinities and NaN are integral already */
float tflk_floorf(float x)
{
    if (!(x < 8388608.0f && x > -8388608.0f))
        return x;
    float t = (float)(int32_t)x;
    return t > x ? t - 1.0f : t;
}

float tflk_ceilf(float x)
{
    if (!(x < 8388608.0f && x > -8388608.0f))
        return x;
    float t = (float)(int32_t)x;
    return t < x ? t + 1.0f : t;
}

/* round half to even (rintf in the default rounding mode, TFLite ROUND) */
float tflk_rintf(float x)
{
    float a = x < 0.0f ? -x : x;
    if (!(a < 8388608.0f))
        return x;
    int32_t i = (int32_t)a;
    float f = a - (float)i;
    if (f > 0.5f || (f == 0.5f && (i & 1)))
        i++;
    float r = (float)i;
    return x < 0.0f ? -r : r;
}

/* correctly rounded square root by the bit-by-bit integer method (as
 * fdlibm's e_sqrtf): the result is the IEEE one on every target */
float tflk_sqrtf(float x)
{
    uint32_t ix = to_bits(x);
    if (x != x || x < 0.0f)
        return from_bits(0x7fc00000u);
    if (x == 0.0f || ix == 0x7f800000u)
        return x;
    int32_t m = (int32_t)(ix >> 23);
    ix &= 0x007fffffu;
    if (m == 0) { /* subnormal: normalize */
        while (!(ix & 0x00800000u)) {
            ix <<= 1;
            m--;
        }
        m++;
    }
    ix |= 0x00800000u;
    m -= 127;
    if (m & 1)
        ix += ix;
    m >>= 1; /* arithmetic: m may be negative (floor division by 2) */
    ix += ix;
    uint32_t q = 0, s = 0, r = 0x01000000u;
    while (r) {
        uint32_t t = s + r;
        if (t <= ix) {
            s = t + r;
            ix -= t;
            q += r;
        }
        ix += ix;
        r >>= 1;
    }
    if (ix)
        q += q & 1u; /* round to nearest, ties to even */
    return from_bits((q >> 1) + 0x3f000000u + ((uint32_t)m << 23));
}

/* log by x = 2^k m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(f / (2 + f)) */
float tflk_logf(float x)
{
    if (x != x || x < 0.0f)
        return from_bits(0x7fc00000u);
    if (x == 0.0f)
        return from_bits(0xff800000u);
    if (to_bits(x) == 0x7f800000u)
        return x;
    int32_t k = 0;
    if (x < 1.17549435e-38f) { /* subnormal: times 2^25 */
        x *= 33554432.0f;
        k = -25;
    }
    uint32_t ix = to_bits(x);
    k += (int32_t)(ix >> 23) - 127;
    float m = from_bits((ix & 0x007fffffu) | 0x3f800000u);
    if (m > 1.41421356f) {
        m *= 0.5f;
        k++;
    }
    float f = m - 1.0f, s = f / (2.0f + f), z = s * s;
    float p = z * (0.666666667f + z * (0.4f + z * (0.285714286f + z * (0.222222222f + z * 0.181818182f))));
    float kf = (float)k;
    return kf * 0.693145751953125f + ((f - s * (f - p)) + kf * 1.42860682030941723212e-6f);
}

/* log x in double for finite x > 0: x = 2^k m, m in [sqrt(1/2), sqrt(2)),
 * log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: the series to
 * s^23 leaves an error below 2^-60 */
double tflk_log_d(double x)
{
    int32_t k = 0;
    while (x >= 2.0) {
        x *= 0.5;
        k++;
    }
    while (x < 1.0) {
        x *= 2.0;
        k--;
    }
    if (x > 1.4142135623730951) {
        x *= 0.5;
        k++;
    }
    double s = (x - 1.0) / (x + 1.0), z = s * s, p = 0.0;
    for (int n = 23; n >= 3; n -= 2)
        p = (p + 1.0 / (double)n) * z;
    return 2.0 * s * (1.0 + p) + (double)k * 0.6931471805599453;
}

/* e^t in double for |t| < 200 (tflk_expf_d's reduction with a double argument) */
static double exp_d(double t)
{
    double kd = (double)(int32_t)(t * 1.4426950408889634 + (t < 0.0 ? -0.5 : 0.5));
    int32_t k = (int32_t)kd;
    double r = (t - kd * 0.6931471803691238164901733398437500) - kd * 1.9082149292705877000220e-10;
    double p = 1.0;
    for (int n = 13; n >= 1; n--)
        p = 1.0 + p * r / (double)n;
    double s = 1.0, b = k < 0 ? 0.5 : 2.0;
    for (int32_t e = k < 0 ? -k : k; e; e >>= 1, b *= b)
        if (e & 1)
            s *= b;
    return p * s;
}

float tflk_powf(float x, float y)
{
    if (y == 0.0f || x == 1.0f)
        return 1.0f;
    if (x != x || y != y)
        return from_bits(0x7fc00000u);
    float ay = y < 0.0f ? -y : y, ax = x < 0.0f ? -x : x;
    int integral = ay >= 16777216.0f || tflk_floorf(ay) == ay;
    int odd = integral && ay < 16777216.0f && ((int32_t)ay & 1);
    if (to_bits(ay) == 0x7f800000u) { /* y = +-inf */
        if (ax == 1.0f)
            return 1.0f;
        return (ax > 1.0f) == (y > 0.0f) ? ay : 0.0f;
    }
    if (x < 0.0f && !integral)
        return from_bits(0x7fc00000u);
    int neg = (int)(to_bits(x) >> 31); /* -0 too */
    float sign = neg && odd ? -1.0f : 1.0f;
    if (ax == 0.0f || to_bits(ax) == 0x7f800000u) { /* 0 or inf: 0, inf with the sign of an odd y */
        int big = (ax == 0.0f) == (y < 0.0f);
        float r = big ? from_bits(0x7f800000u) : 0.0f;
        return neg && odd ? -r : r;
    }
    double r;
    if (integral && ay <= 64.0f) { /* by squaring: at most 12 products, each rounded in double */
        double b = (double)ax;
        r = 1.0;
        for (int32_t e = (int32_t)ay; e; e >>= 1, b *= b)
            if (e & 1)
                r *= b;
        if (y < 0.0f)
            r = 1.0 / r;
    } else {
        double t = (double)y * tflk_log_d((double)ax);
        if (t > 89.0)
            return sign * from_bits(0x7f800000u);
        if (t < -104.0)
            return sign * 0.0f;
        r = exp_d(t);
    }
    return sign * (float)r;
}

/* fmod by long division of the significands (the remainder of floats is
 * exact, so this is C's fmodf bit for bit) */
float tflk_fmodf(float x, float y)
{
    uint32_t ux = to_bits(x), uy = to_bits(y), sx = ux & 0x80000000u;
    uint32_t ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
    if (ay == 0 || ax >= 0x7f800000u || ay > 0x7f800000u)
        return from_bits(0x7fc00000u);
    if (ax < ay)
        return x;
    if (ax == ay)
        return from_bits(sx);
    int32_t ex = (int32_t)(ax >> 23), ey = (int32_t)(ay >> 23);
    uint32_t mx = ax & 0x7fffffu, my = ay & 0x7fffffu;
    if (ex)
        mx |= 0x800000u;
    else
        for (ex = 1; mx < 0x800000u; ex--)
            mx <<= 1;
    if (ey)
        my |= 0x800000u;
    else
        for (ey = 1; my < 0x800000u; ey--)
            my <<= 1;
    for (; ex > ey; ex--) {
        if (mx >= my)
            mx -= my;
        mx <<= 1;
    }
    if (mx >= my)
        mx -= my;
    if (!mx)
        return from_bits(sx);
    for (; mx < 0x800000u; ex--)
        mx <<= 1;
    if (ex > 0)
        return from_bits(sx | ((uint32_t)ex << 23) | (mx & 0x7fffffu));
    return from_bits(sx | (mx >> (1 - ex))); /* subnormal: exact, the low bits are zero */
}

/* sin and cos: x - k pi/2 with a three-part pi/2 (k pi/2's first parts
 * exact for |k| < 2^12), Taylor polynomials on [-pi/4, pi/4] */
static float sin_poly(float r)
{
    float z = r * r;
    return r + r * z * (-1.66666667e-1f + z * (8.33333333e-3f + z * (-1.98412698e-4f + z * 2.75573192e-6f)));
}

static float cos_poly(float r)
{
    float z = r * r;
    return 1.0f + z * (-0.5f + z * (4.16666667e-2f + z * (-1.38888889e-3f + z * (2.48015873e-5f + z * -2.75573192e-7f))));
}

/* 2/pi to 256 bits: word 0 holds the first 32 bits after the binary point */
static const uint32_t two_over_pi[8] = {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                        0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u};

/* 32 bits of 2/pi from bit `off` (0 = the first after the point) */
static uint32_t tpi_bits(int32_t off)
{
    int32_t w = off >> 5, b = off & 31;
    return b ? (two_over_pi[w] << b) | (two_over_pi[w + 1] >> (32 - b)) : two_over_pi[w];
}

/* 64 bits of the 128-bit hi:lo from bit b (0 < b < 128) */
static uint64_t bits64(uint64_t hi, uint64_t lo, int32_t b)
{
    if (b >= 64)
        return hi >> (b - 64);
    return (hi << (64 - b)) | (lo >> b);
}

/* |x| > 6433, finite (Payne-Hanek): x = m 2^e, m the 24-bit significand;
 * x 2/pi mod 4 from m times a 96-bit window of 2/pi (the bits before it
 * give multiples of 4), the quadrant in *q and x - q pi/2 in double */
static double reduce_large(float ax, int32_t *q)
{
    uint32_t ix = to_bits(ax);
    int32_t e = (int32_t)(ix >> 23) - 150;
    uint64_t m = (ix & 0x7fffffu) | 0x800000u;
    int32_t s = e - 1 > 1 ? e - 1 : 1; /* the first bit of 2/pi that matters */
    uint64_t w0 = tpi_bits(s - 1), w1 = tpi_bits(s + 31), w2 = tpi_bits(s + 63);
    uint64_t p0 = m * w0, p1 = m * w1, p2 = m * w2;
    uint64_t lo = p2 + (p1 << 32);
    uint64_t hi = p0 + (p1 >> 32) + (lo < p2);
    int32_t sh = s + 95 - e; /* x 2/pi = (hi:lo) / 2^sh */
    uint64_t f = bits64(hi, lo, sh - 64);
    *q = (int32_t)(bits64(hi, lo, sh) & 3u);
    double fr;
    if (f >> 63) { /* the fraction is >= 1/2: round the quadrant up */
        *q = (*q + 1) & 3;
        fr = -((double)(~f) + 1.0);
    } else {
        fr = (double)f;
    }
    return fr * (1.5707963267948966 * 5.421010862427522e-20); /* pi/2 * 2^-64 */
}

static float sincos_q(float x, int cos)
{
    if (x != x || to_bits(x < 0.0f ? -x : x) == 0x7f800000u)
        return from_bits(0x7fc00000u);
    float r;
    int32_t q;
    if (x > 6433.0f || x < -6433.0f) {
        /* beyond 2^12 quadrants the parts of k pi/2 are no longer exact */
        r = (float)reduce_large(x < 0.0f ? -x : x, &q);
        if (x < 0.0f) {
            r = -r;
            q = (4 - q) & 3;
        }
    } else {
        float kf = tflk_rintf(x * 0.636619772f);
        r = ((x - kf * 1.5703125f) - kf * 4.838705062866211e-4f) - kf * -4.371138828673793e-08f;
        q = (int32_t)(kf < 0.0f ? -kf : kf) & 3;
        if (kf < 0.0f)
            q = (4 - q) & 3;
    }
    q = (q + cos) & 3;
    switch (q) {
    case 0: return sin_poly(r);
    case 1: return cos_poly(r);
    case 2: return -sin_poly(r);
    default: return -cos_poly(r);
    }
}

float tflk_sinf(float x) { return sincos_q(x, 0); }
float tflk_cosf(float x) { return sincos_q(x, 1); }

/* erf by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7) */
float tflk_erff(float x)
{
    if (x != x)
        return x;
    float a = x < 0.0f ? -x : x;
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float y = 1.0f - t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f)))) *
                         tflk_expf(-a * a);
    return x < 0.0f ? -y : y;
}

float tflk_tanhf(float x)
{
    float a = x < 0.0f ? -x : x;
    float r;
    if (a != a)
        return x;
    if (a > 9.0f) {
        r = 1.0f;
    } else if (a < 0.625f) {
        float e = expm1_small(2.0f * a);
        r = e / (e + 2.0f);
    } else {
        float e = tflk_expf(2.0f * a);
        r = 1.0f - 2.0f / (e + 1.0f);
    }
    return x < 0.0f ? -r : r;
}

float tflk_sigmoidf(float v)
{
    if (v >= 0.0f)
        return 1.0f / (1.0f + tflk_expf(-v));
    float e = tflk_expf(v);
    return e / (1.0f + e);
}

float tflk_act_apply(const tflk_act *a, float v)
{
    if (a->kind == 1)
        return tflk_tanhf(v);
    if (a->kind == 2)
        return (to_bits(v) >> 31) ? 1.0f : 0.0f;
    return v < a->lo ? a->lo : (v > a->hi ? a->hi : v);
}

void tflk_copy(void *dst, const void *src, size_t bytes)
{
    if (dst != src && bytes)
        memmove(dst, src, bytes);
}
