/*
 * sy_sdk: quantization helpers of the ONNX quantized operators and of the
 * quantization schemes (declared in the "requantization, quantization
 * parameters and calibration" section of sy_sdk.h).
 *
 *   - rounding half to even without depending on the FPU rounding mode
 *   - element load/store of every quantized storage type, including the
 *     packed 4-bit ones (two per byte, low nibble first)
 *   - one requantizer with two explicit forms:
 *       SY_RQ_ONNX     q = sat(round_half_even(acc * real_mult) + zp)
 *                      (the ONNX QLinear* formula, float scale)
 *       SY_RQ_GEMMLOWP q = sat(MultiplyByQuantizedMultiplier(acc, m, s) + zp)
 *                      (int32 multiplier + shift, half away from zero; the
 *                      arithmetic is sdk_quant.c's, not repeated here)
 *       SY_RQ_SINGLE   the same multiplier and shift with one rounding half
 *                      up (TFLite's TFLITE_SINGLE_ROUNDING)
 *   - validation of quantization parameters with messages naming the tensor
 *   - choice of scale / zero point from a range, and calibration observers
 *     (min/max and percentile of a histogram)
 */
#include "switchyard/sy_sdk.h"
#include "switchyard/sy_fixedpoint.h"

#include <math.h>
#include <stdlib.h>

/* ---- rounding ------------------------------------------------------------ */

/* sy_fixedpoint.h's, which the portable kernels (qk.c) share */
double sy_rq_round_even(double v) { return sy_fx_round_even(v); }

static int32_t sat_i32(double v, int32_t lo, int32_t hi)
{
    if (!(v >= (double)lo)) /* also NaN */
        return lo;
    if (v > (double)hi)
        return hi;
    return (int32_t)v;
}

/* ---- storage types ------------------------------------------------------- */

bool sy_q_storage_range(sy_dtype dt, int32_t *lo, int32_t *hi)
{
    switch (dt) {
    case SY_DT_INT8: *lo = -128; *hi = 127; return true;
    case SY_DT_UINT8: *lo = 0; *hi = 255; return true;
    case SY_DT_INT16: *lo = -32768; *hi = 32767; return true;
    case SY_DT_UINT16: *lo = 0; *hi = 65535; return true;
    case SY_DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case SY_DT_INT4: *lo = -8; *hi = 7; return true;
    case SY_DT_UINT4: *lo = 0; *hi = 15; return true;
    default: *lo = 0; *hi = 0; return false;
    }
}

int32_t sy_q_load(const void *data, sy_dtype dt, size_t i)
{
    switch (dt) {
    case SY_DT_INT8: return ((const int8_t *)data)[i];
    case SY_DT_UINT8: return ((const uint8_t *)data)[i];
    case SY_DT_INT16: return ((const int16_t *)data)[i];
    case SY_DT_UINT16: return ((const uint16_t *)data)[i];
    case SY_DT_INT32: return ((const int32_t *)data)[i];
    case SY_DT_INT4:
    case SY_DT_UINT4: {
        uint8_t b = ((const uint8_t *)data)[i / 2];
        int32_t v = (i & 1) ? (b >> 4) : (b & 15);
        if (dt == SY_DT_INT4 && v >= 8)
            v -= 16;
        return v;
    }
    default: return 0;
    }
}

void sy_q_store(void *data, sy_dtype dt, size_t i, int32_t v)
{
    switch (dt) {
    case SY_DT_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
    case SY_DT_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case SY_DT_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
    case SY_DT_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case SY_DT_INT32: ((int32_t *)data)[i] = v; break;
    case SY_DT_INT4:
    case SY_DT_UINT4: {
        uint8_t *b = (uint8_t *)data + i / 2;
        uint8_t nib = (uint8_t)((uint32_t)v & 15u);
        *b = (i & 1) ? (uint8_t)((*b & 0x0f) | (nib << 4)) : (uint8_t)((*b & 0xf0) | nib);
        break;
    }
    default: break;
    }
}

size_t sy_q_storage_bytes(sy_dtype dt, size_t n)
{
    if (dt == SY_DT_INT4 || dt == SY_DT_UINT4)
        return (n + 1) / 2;
    return n * sy_dt_size(dt);
}

/* ---- ONNX-form quantize / dequantize ------------------------------------- */

int32_t sy_rq_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    /* x / scale in float, as the ONNX reference and ORT's MLAS compute it */
    float q = x / scale;
    return sat_i32(sy_rq_round_even((double)q) + (double)zp, lo, hi);
}

float sy_rq_dequantize(int32_t q, float scale, int32_t zp)
{
    return (float)((int64_t)q - zp) * scale;
}

/* ---- the requantizer ----------------------------------------------------- */

bool sy_rq_mode_parse(const char *s, sy_rq_mode *out)
{
    if (!s)
        return false;
    if (!strcmp(s, "onnx") || !strcmp(s, "float")) {
        *out = SY_RQ_ONNX;
        return true;
    }
    if (!strcmp(s, "gemmlowp") || !strcmp(s, "cmsis") || !strcmp(s, "fixed")) {
        *out = SY_RQ_GEMMLOWP;
        return true;
    }
    if (!strcmp(s, "single_rounding") || !strcmp(s, "single")) {
        *out = SY_RQ_SINGLE;
        return true;
    }
    return false;
}

const char *sy_rq_mode_name(sy_rq_mode m)
{
    return m == SY_RQ_GEMMLOWP ? "gemmlowp" : (m == SY_RQ_SINGLE ? "single_rounding" : "onnx");
}

void sy_rq_init(sy_requant *r, sy_rq_mode mode, double real_mult, int32_t zp, int32_t lo, int32_t hi)
{
    r->mode = mode;
    r->real_mult = real_mult;
    r->zp = zp;
    r->lo = lo;
    r->hi = hi;
    sy_q_quantize_multiplier(real_mult, &r->mult, &r->shift);
}

int32_t sy_rq_apply(const sy_requant *r, int64_t acc)
{
    if (r->mode == SY_RQ_GEMMLOWP || r->mode == SY_RQ_SINGLE) {
        /* the fixed-point forms take an int32 accumulator: saturate first */
        int32_t a = acc > INT32_MAX ? INT32_MAX : (acc < INT32_MIN ? INT32_MIN : (int32_t)acc);
        int64_t v = (int64_t)(r->mode == SY_RQ_SINGLE ? sy_q_mul_by_qm_single(a, r->mult, r->shift)
                                                      : sy_q_mul_by_qm(a, r->mult, r->shift)) +
                    r->zp;
        return v < r->lo ? r->lo : (v > r->hi ? r->hi : (int32_t)v);
    }
    return sat_i32(sy_rq_round_even((double)acc * r->real_mult) + (double)r->zp, r->lo, r->hi);
}

/* ---- parameter checks ---------------------------------------------------- */

sy_status *sy_qp_check(const sy_host_api *host, const char *tensor, const sy_quant_params *qp, int32_t axis_len)
{
    const char *nm = tensor ? tensor : "?";
    if (!qp || qp->count == 0 || !qp->scales)
        return host->status_new(SY_ERR_INVALID_MODEL, "tensor '%s': quantization parameters have no scale", nm);
    if (qp->axis >= 0 && qp->block_size <= 0 && axis_len >= 0 && (int64_t)qp->count != axis_len)
        return host->status_new(SY_ERR_INVALID_MODEL,
                                "tensor '%s': %u per-axis scales for axis %d of length %d (they must be equal)", nm,
                                qp->count, qp->axis, axis_len);
    int32_t lo, hi;
    if (!sy_q_storage_range(qp->storage, &lo, &hi))
        return host->status_new(SY_ERR_TYPE, "tensor '%s': %s is not a quantized storage type", nm,
                                sy_dt_name(qp->storage));
    for (uint32_t i = 0; i < qp->count; i++) {
        float s = qp->scales[i];
        if (!(s > 0.0f) || !isfinite(s))
            return host->status_new(SY_ERR_INVALID_MODEL,
                                    "tensor '%s': scale[%u] = %g; a scale must be positive and finite", nm, i,
                                    (double)s);
        if (qp->zero_points && (qp->zero_points[i] < lo || qp->zero_points[i] > hi))
            return host->status_new(SY_ERR_INVALID_MODEL,
                                    "tensor '%s': zero point[%u] = %d is outside the %s range [%d, %d]", nm, i,
                                    qp->zero_points[i], sy_dt_name(qp->storage), lo, hi);
    }
    return NULL;
}

/* ---- choosing parameters ------------------------------------------------- */

void sy_q_choose_params(float min, float max, sy_dtype dt, bool symmetric, float *scale, int32_t *zp)
{
    int32_t lo, hi;
    sy_q_storage_range(dt, &lo, &hi);
    if (!isfinite(min))
        min = 0.0f;
    if (!isfinite(max))
        max = 0.0f;
    if (min > 0.0f)
        min = 0.0f; /* zero must be exactly representable (padding, ReLU) */
    if (max < 0.0f)
        max = 0.0f;
    if (symmetric) {
        float a = fabsf(min) > fabsf(max) ? fabsf(min) : fabsf(max);
        /* signed types use [-hi, hi] so that -x is representable;
         * unsigned symmetric centres on the middle code */
        double half = lo < 0 ? (double)hi : ((double)hi - (double)lo) / 2.0;
        double s = (double)a / half;
        *scale = s > 0.0 ? (float)s : 1.0f;
        *zp = lo < 0 ? 0 : (int32_t)((hi + lo + 1) / 2);
        return;
    }
    double s = ((double)max - (double)min) / ((double)hi - (double)lo);
    if (!(s > 0.0)) {
        *scale = 1.0f;
        *zp = lo < 0 ? 0 : lo;
        return;
    }
    *scale = (float)s;
    double z = sy_rq_round_even((double)lo - (double)min / (double)*scale);
    *zp = z < lo ? lo : (z > hi ? hi : (int32_t)z);
}

/* ---- calibration observers ----------------------------------------------- */

#define OBS_BINS 4096

struct sy_calib {
    sy_calib_method method;
    double percentile; /* e.g. 99.99 */
    bool any;
    float min, max;
    double range;      /* histogram covers [-range, range) */
    uint64_t *hist;    /* OBS_BINS bins, allocated for the percentile method */
    uint64_t total;
};

sy_calib *sy_calib_new(sy_calib_method method, double percentile)
{
    sy_calib *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->method = method;
    c->percentile = percentile > 0.0 && percentile <= 100.0 ? percentile : 99.999;
    if (method == SY_CALIB_PERCENTILE) {
        c->hist = calloc(OBS_BINS, sizeof *c->hist);
        if (!c->hist) {
            free(c);
            return NULL;
        }
    }
    return c;
}

void sy_calib_free(sy_calib *c)
{
    if (!c)
        return;
    free(c->hist);
    free(c);
}

/* widen the histogram (power-of-two growth) until it covers [-a, a] */
static void hist_grow(sy_calib *c, double a)
{
    while (a >= c->range) {
        /* merge pairs of bins toward the middle: range doubles */
        uint64_t nh[OBS_BINS] = {0};
        for (int b = 0; b < OBS_BINS; b++) {
            int nb = OBS_BINS / 4 + b / 2;
            nh[nb] += c->hist[b];
        }
        memcpy(c->hist, nh, sizeof nh);
        c->range *= 2.0;
    }
}

void sy_calib_update(sy_calib *c, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (!isfinite(v))
            continue;
        if (!c->any) {
            c->min = c->max = v;
            c->any = true;
        }
        if (v < c->min)
            c->min = v;
        if (v > c->max)
            c->max = v;
    }
    if (c->method != SY_CALIB_PERCENTILE || !c->any)
        return;
    double a = fmax(fabs((double)c->min), fabs((double)c->max));
    if (c->range == 0.0)
        c->range = a > 0.0 ? ldexp(1.0, ilogb(a) + 1) : 1.0;
    hist_grow(c, a);
    double w = 2.0 * c->range / OBS_BINS;
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (!isfinite(v))
            continue;
        long b = (long)floor(((double)v + c->range) / w);
        if (b < 0)
            b = 0;
        if (b >= OBS_BINS)
            b = OBS_BINS - 1;
        c->hist[b]++;
        c->total++;
    }
}

void sy_calib_range(const sy_calib *c, float *min, float *max)
{
    if (!c->any) {
        *min = *max = 0.0f;
        return;
    }
    *min = c->min;
    *max = c->max;
    if (c->method != SY_CALIB_PERCENTILE || c->total == 0)
        return;
    double tail = (100.0 - c->percentile) / 100.0 * (double)c->total;
    double w = 2.0 * c->range / OBS_BINS;
    uint64_t acc = 0;
    int lo_b = 0, hi_b = OBS_BINS - 1;
    for (int b = 0; b < OBS_BINS; b++) {
        acc += c->hist[b];
        if ((double)acc > tail) {
            lo_b = b;
            break;
        }
    }
    acc = 0;
    for (int b = OBS_BINS - 1; b >= 0; b--) {
        acc += c->hist[b];
        if ((double)acc > tail) {
            hi_b = b;
            break;
        }
    }
    float plo = (float)(-c->range + lo_b * w), phi = (float)(-c->range + (hi_b + 1) * w);
    if (plo > *min)
        *min = plo;
    if (phi < *max)
        *max = phi;
}
