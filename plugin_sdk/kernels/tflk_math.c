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

/* e^y - 1 for |y| <= 1.25 (series to y^12) */
static float expm1_small(float y)
{
    float s = 1.0f;
    for (int n = 12; n >= 2; n--)
        s = 1.0f + s * y / (float)n;
    return y * s;
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
