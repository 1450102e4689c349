/*
 * Reductions (MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD and the ONNX
 * Reduce* family) and the ops along one axis (ARG_MAX ARG_MIN, CUMSUM,
 * TOPK, Hardmax, LpNormalization, L2_NORMALIZATION): the arithmetic of the
 * host reference (cpu_ref's tflite_math / tflite_nn / ops_reduce), written
 * once for cpu_ref, the riscv_mcu host run and the generated packages.
 * tflk.h says what each mode computes.
 */
#include "tflk.h"

#include <math.h> /* INFINITY, NAN only: no libm call */

/* sqrt in double: the correctly rounded float root refined by two Newton
 * steps (exact to about 1 ulp of double; no libm on the MCU) */
static double sqrt_d(double a)
{
    if (a == 0.0 || a == INFINITY)
        return a;
    if (!(a > 0.0))
        return NAN;
    double b = a, sc = 1.0; /* into float's range by even powers of ten */
    while (b > 1.0e30) {
        b *= 1.0e-30;
        sc *= 1.0e15;
    }
    while (b < 1.0e-30) {
        b *= 1.0e30;
        sc *= 1.0e-15;
    }
    double r = (double)tflk_sqrtf((float)b) * sc;
    for (int i = 0; i < 2; i++)
        r = 0.5 * (r + a / r);
    return r;
}

static int8_t wrap8(int64_t v) { return (int8_t)(uint8_t)((uint64_t)v & 0xffu); }

static int64_t isqrt64(int64_t n)
{
    if (n <= 0)
        return 0;
    uint64_t x = (uint64_t)n, r = 0, bit = (uint64_t)1 << 62;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return (int64_t)r;
}

/* int8 REDUCE_PROD (reduce.cc QuantizedReduceProd, tflk.h) */
int32_t tflk_prod_next_s8(const tflk_prod8 *p, int32_t acc, int32_t q)
{
    return tflk_mul_by_qm64((int64_t)acc * (int64_t)(q - p->in_zp), p->mult, p->shift);
}

int32_t tflk_prod_out_s8(const tflk_prod8 *p, int32_t acc)
{
    return tflk_clampi(tflk_mul_by_qm64(acc, p->mult, p->shift) + p->out_zp, -128, 127);
}

/* the next index of `n` dims (row-major) */
static void next_index(int32_t n, const int32_t *dims, int32_t *idx)
{
    for (int32_t d = n - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return;
        idx[d] = 0;
    }
}

static int32_t offset(int32_t n, const int32_t *idx, const int32_t *st)
{
    int32_t o = 0;
    for (int32_t d = 0; d < n; d++)
        o += idx[d] * st[d];
    return o;
}

static int32_t count(int32_t n, const int32_t *dims)
{
    int32_t c = 1;
    for (int32_t d = 0; d < n; d++)
        c *= dims[d];
    return c;
}

/* ONNX on int8 codes: the integer kinds in int64 (wrapping), MEAN as the
 * truncated quotient, L2 as the truncated root */
static int8_t reduce_raw8(const tflk_reduce *p, const int8_t *x, int32_t base, int32_t nred)
{
    int32_t ridx[TFLK_BIN_RANK] = {0};
    int64_t acc = p->kind == TFLK_R_PROD ? 1 : p->kind == TFLK_R_MAX ? INT64_MIN : p->kind == TFLK_R_MIN ? INT64_MAX : 0;
    for (int32_t i = 0; i < nred; i++) {
        int64_t v = x[base + offset(p->nr, ridx, p->rs)];
        switch (p->kind) {
        case TFLK_R_PROD: acc = (int64_t)((uint64_t)acc * (uint64_t)v); break;
        case TFLK_R_MAX: acc = v > acc ? v : acc; break;
        case TFLK_R_MIN: acc = v < acc ? v : acc; break;
        case TFLK_R_L1: acc += v < 0 ? -v : v; break;
        case TFLK_R_L2:
        case TFLK_R_SUMSQ: acc = (int64_t)((uint64_t)acc + (uint64_t)(v * v)); break;
        default: acc = (int64_t)((uint64_t)acc + (uint64_t)v); break; /* SUM MEAN */
        }
        next_index(p->nr, p->rd, ridx);
    }
    if (p->kind == TFLK_R_MEAN)
        return nred ? wrap8(acc / nred) : 0; /* the host's NaN stores as 0 */
    if (p->kind == TFLK_R_L2)
        return wrap8(isqrt64(acc));
    return wrap8(acc);
}

/* TFLite int8: MEAN/SUM from the int32 sum of the codes, MAX/MIN on the
 * codes or through fp32, REDUCE_PROD requantized at every step */
static int8_t reduce_tfl8(const tflk_reduce *p, const int8_t *x, int32_t base, int32_t nred)
{
    int32_t ridx[TFLK_BIN_RANK] = {0};
    if (p->kind == TFLK_R_PROD) {
        int32_t acc = 0;
        for (int32_t i = 0; i < nred; i++) {
            int32_t q = x[base + offset(p->nr, ridx, p->rs)];
            acc = i ? tflk_prod_next_s8(&p->p8, acc, q) : q - p->xz;
            next_index(p->nr, p->rd, ridx);
        }
        return (int8_t)tflk_prod_out_s8(&p->p8, acc);
    }
    if (p->raw) {
        int32_t sum = 0, best = p->kind == TFLK_R_MAX ? -128 : 127;
        for (int32_t i = 0; i < nred; i++) {
            int32_t q = x[base + offset(p->nr, ridx, p->rs)];
            sum = (int32_t)((uint32_t)sum + (uint32_t)q);
            best = p->kind == TFLK_R_MAX ? (q > best ? q : best) : (q < best ? q : best);
            next_index(p->nr, p->rd, ridx);
        }
        if (p->kind == TFLK_R_MEAN)
            return (int8_t)tflk_mean_s8(&p->r8, sum, nred);
        if (p->kind == TFLK_R_SUM)
            return (int8_t)tflk_sum_s8(&p->r8, sum, nred);
        return (int8_t)best;
    }
    /* MAX / MIN between two quantizations: the real values compared */
    double acc = p->kind == TFLK_R_MAX ? -INFINITY : INFINITY;
    for (int32_t i = 0; i < nred; i++) {
        double v = (double)p->xs * (double)((int32_t)x[base + offset(p->nr, ridx, p->rs)] - p->xz);
        acc = p->kind == TFLK_R_MAX ? (v > acc ? v : acc) : (v < acc ? v : acc);
        next_index(p->nr, p->rd, ridx);
    }
    return (int8_t)tflk_quantize((float)acc, p->ys, p->yz, -128, 127);
}

static float reduce_f32(const tflk_reduce *p, const float *x, int32_t base, int32_t nred)
{
    int32_t ridx[TFLK_BIN_RANK] = {0};
    double mx = -INFINITY;
    if (p->kind == TFLK_R_LOGSUMEXP) { /* the maximum first, for range */
        for (int32_t i = 0; i < nred; i++) {
            double v = x[base + offset(p->nr, ridx, p->rs)];
            mx = v > mx ? v : mx;
            next_index(p->nr, p->rd, ridx);
        }
        if (!(mx > -INFINITY && mx < INFINITY))
            mx = 0;
    }
    double acc = p->kind == TFLK_R_PROD ? 1.0 : p->kind == TFLK_R_MAX ? -INFINITY : p->kind == TFLK_R_MIN ? INFINITY : 0.0;
    for (int32_t i = 0; i < nred; i++) {
        double v = x[base + offset(p->nr, ridx, p->rs)];
        switch (p->kind) {
        case TFLK_R_PROD: acc *= v; break;
        case TFLK_R_MAX: acc = (v > acc || (p->onnx && v != v)) ? v : acc; break;
        case TFLK_R_MIN: acc = (v < acc || (p->onnx && v != v)) ? v : acc; break;
        case TFLK_R_L1: acc += v < 0 ? -v : v; break;
        case TFLK_R_L2:
        case TFLK_R_SUMSQ: acc += v * v; break;
        case TFLK_R_LOGSUMEXP: acc += (double)tflk_expf_d((float)(v - mx)); break;
        default: acc += v; break; /* SUM MEAN LOGSUM */
        }
        next_index(p->nr, p->rd, ridx);
    }
    switch (p->kind) {
    case TFLK_R_MEAN: return nred ? (float)(acc / (double)nred) : NAN;
    case TFLK_R_L2: return (float)sqrt_d(acc);
    case TFLK_R_LOGSUM: return tflk_logf((float)acc);
    case TFLK_R_LOGSUMEXP: return (float)((double)tflk_logf((float)acc) + mx);
    default: return (float)acc;
    }
}

void tflk_reduce_run(const tflk_reduce *p, const void *x, void *y)
{
    int32_t nout = count(p->nk, p->kd), nred = count(p->nr, p->rd);
    int32_t kidx[TFLK_BIN_RANK] = {0};
    for (int32_t o = 0; o < nout; o++) {
        int32_t base = offset(p->nk, kidx, p->ks);
        if (p->mode == TFLK_RQ_F32)
            ((float *)y)[o] = reduce_f32(p, x, base, nred);
        else if (p->mode == TFLK_RQ_TFL8)
            ((int8_t *)y)[o] = reduce_tfl8(p, x, base, nred);
        else
            ((int8_t *)y)[o] = reduce_raw8(p, x, base, nred);
        next_index(p->nk, p->kd, kidx);
    }
}

int32_t tflk_reduce_plan(tflk_reduce *p, int32_t rank, const int64_t *dims, uint32_t mask)
{
    int64_t total = 1, st = 1;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || (dims[d] && total > INT32_MAX / dims[d]))
            return -1;
        total *= dims[d];
    }
    p->nk = p->nr = 0;
    int32_t prev = -1; /* the kind of dim d + 1 when it was not of size 1 */
    for (int32_t d = rank - 1; d >= 0; d--) {
        int32_t red = (mask >> d) & 1u;
        if (dims[d] == 1) /* no element to step over: no dim */
            continue;
        int32_t *n = red ? &p->nr : &p->nk, *dd = red ? p->rd : p->kd, *ss = red ? p->rs : p->ks;
        if (prev == red && ss[0] * dd[0] == (int32_t)st) { /* continues the dim after it */
            dd[0] *= (int32_t)dims[d];
        } else {
            if (*n == TFLK_BIN_RANK)
                return -1;
            for (int32_t i = *n; i > 0; i--) { /* dims outermost first */
                dd[i] = dd[i - 1];
                ss[i] = ss[i - 1];
            }
            dd[0] = (int32_t)dims[d];
            ss[0] = (int32_t)st;
            (*n)++;
        }
        prev = red;
        st *= dims[d];
    }
    return 0;
}

/* ---- along one axis ------------------------------------------------------ */

static void put_index(void *y, int32_t idx64, int32_t at, int32_t v)
{
    if (idx64)
        ((int64_t *)y)[at] = v;
    else
        ((int32_t *)y)[at] = v;
}

static double elem(const tflk_axisop *p, const void *x, int32_t at)
{
    if (p->mode == TFLK_RQ_F32)
        return ((const float *)x)[at];
    if (p->mode == TFLK_RQ_TFL8)
        return (double)p->xs * (double)((int32_t)((const int8_t *)x)[at] - p->xz);
    return ((const int8_t *)x)[at];
}

/* does (v, i) come before (w, j) in TOPK's order */
static int before(int32_t smallest, double v, int32_t i, double w, int32_t j)
{
    return (smallest ? v < w : v > w) || (v == w && i < j);
}

static void topk(const tflk_axisop *p, const void *x, void *y, void *y2, int32_t o, int32_t in)
{
    int32_t len = p->len, inner = p->inner, sm = p->flags & 1;
    double pv = 0;
    int32_t pi = -1;
    for (int32_t j = 0; j < p->k; j++) {
        /* the first element after the previous pick */
        int32_t best = -1;
        double bv = 0;
        for (int32_t c = 0; c < len; c++) {
            double v = p->mode == TFLK_RQ_F32 ? ((const float *)x)[(o * len + c) * inner + in]
                                              : ((const int8_t *)x)[(o * len + c) * inner + in];
            if (pi >= 0 && !before(sm, pv, pi, v, c))
                continue;
            if (best < 0 || before(sm, v, c, bv, best)) {
                best = c;
                bv = v;
            }
        }
        if (best < 0)
            best = 0; /* only with NaN: keep the outputs defined */
        int32_t at = (o * p->k + j) * inner + in, src = (o * len + best) * inner + in;
        const unsigned char *s = (const unsigned char *)x + (size_t)src * (size_t)p->esize;
        unsigned char *d = (unsigned char *)y + (size_t)at * (size_t)p->esize;
        for (int32_t b = 0; b < p->esize; b++)
            d[b] = s[b];
        if (y2)
            put_index(y2, p->idx64, at, best);
        pv = bv;
        pi = best;
    }
}

static void row(const tflk_axisop *p, const void *x, void *y, void *y2, int32_t o, int32_t in)
{
    int32_t len = p->len, inner = p->inner;
#define AT(k) ((o * len + (k)) * inner + in)
    switch (p->op) {
    case TFLK_A_ARGMAX:
    case TFLK_A_ARGMIN: {
        const float *xf = x;
        int32_t best = 0, last = p->flags & 1, mx = p->op == TFLK_A_ARGMAX;
        float bv = 0;
        for (int32_t k = 0; k < len; k++) {
            float v = xf[AT(k)];
            if (k == 0 || (mx ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv)))) {
                bv = v;
                best = k;
            }
        }
        put_index(y, p->idx64, o * inner + in, best);
        return;
    }
    case TFLK_A_CUMSUM: {
        int32_t excl = p->flags & 1, rev = (p->flags >> 1) & 1;
        double acc = 0;
        int64_t iacc = 0;
        for (int32_t k0 = 0; k0 < len; k0++) {
            int32_t k = rev ? len - 1 - k0 : k0, at = AT(k);
            double v = p->mode == TFLK_RQ_RAW8 ? 0 : elem(p, x, at);
            int64_t iv = p->mode == TFLK_RQ_RAW8 ? ((const int8_t *)x)[at] : 0;
            if (!excl) {
                acc += v;
                iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
            }
            if (p->mode == TFLK_RQ_F32)
                ((float *)y)[at] = (float)acc;
            else if (p->mode == TFLK_RQ_TFL8)
                ((int8_t *)y)[at] = (int8_t)tflk_quantize((float)acc, p->ys, p->yz, -128, 127);
            else
                ((int8_t *)y)[at] = wrap8(iacc);
            if (excl) {
                acc += v;
                iacc = (int64_t)((uint64_t)iacc + (uint64_t)iv);
            }
        }
        return;
    }
    case TFLK_A_TOPK: topk(p, x, y, y2, o, in); return;
    case TFLK_A_HARDMAX: {
        const float *xf = x;
        int32_t arg = 0;
        float m = -INFINITY;
        for (int32_t k = 0; k < len; k++)
            if (xf[AT(k)] > m || k == 0) {
                m = xf[AT(k)];
                arg = k;
            }
        for (int32_t k = 0; k < len; k++)
            ((float *)y)[AT(k)] = k == arg ? 1.0f : 0.0f;
        return;
    }
    case TFLK_A_LPNORM: {
        double acc = 0;
        for (int32_t k = 0; k < len; k++) {
            double v = elem(p, x, AT(k));
            acc += p->flags == 1 ? (v < 0 ? -v : v) : v * v;
        }
        double norm = p->flags == 1 ? acc : sqrt_d(acc);
        for (int32_t k = 0; k < len; k++) {
            float r = norm > 0 ? (float)(elem(p, x, AT(k)) / norm) : 0.0f;
            if (p->mode == TFLK_RQ_F32)
                ((float *)y)[AT(k)] = r;
            else
                ((int8_t *)y)[AT(k)] = (int8_t)tflk_quantize(r, p->ys, p->yz, -128, 127);
        }
        return;
    }
    default: { /* TFLK_A_L2NORM: the row's values as float (int8 dequantized in float) */
        double sq = 0;
        for (int32_t k = 0; k < len; k++) {
            float v = p->mode == TFLK_RQ_F32 ? ((const float *)x)[AT(k)]
                                             : p->xs * (float)((int32_t)((const int8_t *)x)[AT(k)] - p->xz);
            sq += (double)v * v;
        }
        float norm = tflk_sqrtf((float)sq);
        if (norm < 1e-6f)
            norm = 1e-6f;
        for (int32_t k = 0; k < len; k++) {
            float v = p->mode == TFLK_RQ_F32 ? ((const float *)x)[AT(k)]
                                             : p->xs * (float)((int32_t)((const int8_t *)x)[AT(k)] - p->xz);
            float r = tflk_act_apply(&p->act, v / norm);
            if (p->mode == TFLK_RQ_F32)
                ((float *)y)[AT(k)] = r;
            else
                ((int8_t *)y)[AT(k)] = (int8_t)tflk_quantize(r, p->ys, p->yz, -128, 127);
        }
        return;
    }
    }
#undef AT
}

void tflk_axis_run(const tflk_axisop *p, const void *x, void *y, void *y2)
{
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t in = 0; in < p->inner; in++)
            row(p, x, y, y2, o, in);
}
