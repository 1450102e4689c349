/* qk: the portable integer kernels of switchyard.quant (see qk.h). The
 * fixed-point and rounding arithmetic is sy_fixedpoint.h's (the SDK's own),
 * included by its bare name because codegen packages ship it next to qk.c. */
#include "qk.h"
#include "sy_fixedpoint.h"
#include "tflk.h" /* tflk_powf (tflk_math.c, which every package ships): QPow */

static int32_t ld(const void *p, int32_t dt, size_t i)
{
    return dt == QK_U8 ? (int32_t)((const uint8_t *)p)[i] : (int32_t)((const int8_t *)p)[i];
}
static void st(void *p, int32_t dt, size_t i, int32_t v)
{
    if (dt == QK_U8)
        ((uint8_t *)p)[i] = (uint8_t)v;
    else
        ((int8_t *)p)[i] = (int8_t)v;
}

double qk_round_even(double v) { return sy_fx_round_even(v); }

static int32_t sat(double v, int32_t lo, int32_t hi)
{
    return !(v >= lo) ? lo : (v > hi ? hi : (int32_t)v);
}

int32_t qk_mul_by_qm(int32_t x, int32_t mult, int32_t shift) { return sy_fx_mul_by_qm(x, mult, shift); }

int32_t qk_mul_by_qm_form(int32_t mode, int32_t x, int32_t mult, int32_t shift)
{
    return mode == QK_RQ_SINGLE ? sy_fx_mul_by_qm_single(x, mult, shift) : sy_fx_mul_by_qm(x, mult, shift);
}

int32_t qk_rq_apply(const qk_rq *r, int64_t acc)
{
    if (r->mode == QK_RQ_GEMMLOWP || r->mode == QK_RQ_SINGLE) {
        int32_t a = acc > INT32_MAX ? INT32_MAX : (acc < INT32_MIN ? INT32_MIN : (int32_t)acc);
        int64_t v = (int64_t)qk_mul_by_qm_form(r->mode, a, r->mult, r->shift) + r->zp;
        return v < r->lo ? r->lo : (v > r->hi ? r->hi : (int32_t)v);
    }
    return sat(qk_round_even((double)acc * r->real_mult) + (double)r->zp, r->lo, r->hi);
}

int32_t qk_quantize1(float x, float scale, int32_t zp, int32_t lo, int32_t hi)
{
    float q = x / scale;
    return sat(qk_round_even((double)q) + (double)zp, lo, hi);
}

void qk_conv_run(const qk_conv *p, const void *x, const void *w, void *y)
{
    int32_t cg = p->c / p->group, ocg = p->oc / p->group, K = cg * p->kh * p->kw;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t o = 0; o < p->oc; o++) {
            int32_t gr = o / ocg, wz = p->w_zp ? p->w_zp[p->n_wzp > 1 ? o : 0] : 0;
            for (int32_t oh = 0; oh < p->oh; oh++)
                for (int32_t ow = 0; ow < p->ow; ow++) {
                    uint32_t acc = p->bias ? (uint32_t)p->bias[o] : 0u; /* wrapping, as ops_quant */
                    for (int32_t ci = 0; ci < cg; ci++)
                        for (int32_t kh = 0; kh < p->kh; kh++) {
                            int32_t ih = oh * p->sh - p->pt + kh * p->dh;
                            if (ih < 0 || ih >= p->ih)
                                continue;
                            for (int32_t kw = 0; kw < p->kw; kw++) {
                                int32_t iw = ow * p->sw - p->pl + kw * p->dw;
                                if (iw < 0 || iw >= p->iw)
                                    continue;
                                size_t xi = (((size_t)b * p->c + (size_t)(gr * cg + ci)) * p->ih + ih) * p->iw + iw;
                                size_t wi = (size_t)o * K + ((size_t)ci * p->kh + kh) * p->kw + kw;
                                int32_t xv = ld(x, p->xdt, xi) - p->x_zp, wv = ld(w, p->wdt, wi) - wz;
                                acc += (uint32_t)(xv * wv);
                            }
                        }
                    size_t yi = (((size_t)b * p->oc + o) * p->oh + oh) * p->ow + ow;
                    if (p->ydt == QK_S32)
                        ((int32_t *)y)[yi] = (int32_t)acc;
                    else
                        st(y, p->ydt, yi, qk_rq_apply(&p->rq[o], (int32_t)acc));
                }
        }
}

/* y[o, oh, ow] = sum over the group's input channels ci and taps (kh, kw)
 * with oh = ih * sh - pt + kh * dh (and so for w) of (x - zx)(w - zw): the
 * input row is (oh + pt - kh * dh) / sh when that divides exactly. The sum
 * wraps modulo 2^32 as qk_conv_run's, so any order gives the same int32. */
void qk_conv_transpose_run(const qk_conv *p, const void *x, const void *w, void *y)
{
    const int32_t cg = p->c / p->group, ocg = p->oc / p->group, KK = p->kh * p->kw;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t o = 0; o < p->oc; o++) {
            const int32_t gr = o / ocg, om = o % ocg, wz = p->w_zp ? p->w_zp[p->n_wzp > 1 ? om : 0] : 0;
            for (int32_t oh = 0; oh < p->oh; oh++)
                for (int32_t ow = 0; ow < p->ow; ow++) {
                    uint32_t acc = p->bias ? (uint32_t)p->bias[o] : 0u;
                    for (int32_t kh = 0; kh < p->kh; kh++) {
                        const int32_t th = oh + p->pt - kh * p->dh;
                        if (th < 0 || th % p->sh)
                            continue;
                        const int32_t ih = th / p->sh;
                        if (ih >= p->ih)
                            continue;
                        for (int32_t kw = 0; kw < p->kw; kw++) {
                            const int32_t tw = ow + p->pl - kw * p->dw;
                            if (tw < 0 || tw % p->sw)
                                continue;
                            const int32_t iw = tw / p->sw;
                            if (iw >= p->iw)
                                continue;
                            for (int32_t ci = 0; ci < cg; ci++) {
                                const int32_t cc = gr * cg + ci;
                                size_t xi = (((size_t)b * p->c + (size_t)cc) * p->ih + ih) * p->iw + iw;
                                size_t wi = ((size_t)cc * ocg + om) * KK + (size_t)kh * p->kw + kw;
                                int32_t xv = ld(x, p->xdt, xi) - p->x_zp, wv = ld(w, p->wdt, wi) - wz;
                                acc += (uint32_t)(xv * wv);
                            }
                        }
                    }
                    size_t yi = (((size_t)b * p->oc + o) * p->oh + oh) * p->ow + ow;
                    st(y, p->ydt, yi, qk_rq_apply(&p->rq[o], (int32_t)acc));
                }
        }
}

void qk_maxpool_run(const qk_pool *p, const void *x, void *y)
{
    for (int32_t nc = 0; nc < p->nc; nc++)
        for (int32_t oh = 0; oh < p->oh; oh++)
            for (int32_t ow = 0; ow < p->ow; ow++) {
                int32_t best = INT32_MIN, count = 0;
                for (int32_t kh = 0; kh < p->kh; kh++) {
                    int32_t ih = oh * p->sh - p->pt + kh * p->dh;
                    for (int32_t kw = 0; kw < p->kw; kw++) {
                        int32_t iw = ow * p->sw - p->pl + kw * p->dw;
                        if (ih < 0 || ih >= p->ih || iw < 0 || iw >= p->iw)
                            continue;
                        int32_t v = ld(x, p->xdt, ((size_t)nc * p->ih + ih) * p->iw + iw);
                        best = v > best ? v : best;
                        count++;
                    }
                }
                int32_t out = !count ? p->y_zp : (p->same ? best : qk_rq_apply(&p->rq, (int64_t)best - p->x_zp));
                st(y, p->ydt, ((size_t)nc * p->oh + oh) * p->ow + ow, out);
            }
}

void qk_avgpool_run(const qk_pool *p, const void *x, void *y)
{
    for (int32_t nc = 0; nc < p->nc; nc++)
        for (int32_t oh = 0; oh < p->oh; oh++)
            for (int32_t ow = 0; ow < p->ow; ow++) {
                int64_t sum = 0, count = 0;
                for (int32_t kh = 0; kh < p->kh; kh++) {
                    int32_t ih = oh * p->sh - p->pt + kh * p->dh;
                    for (int32_t kw = 0; kw < p->kw; kw++) {
                        int32_t iw = ow * p->sw - p->pl + kw * p->dw;
                        if (ih < 0 || ih >= p->ih || iw < 0 || iw >= p->iw)
                            continue;
                        sum += ld(x, p->xdt, ((size_t)nc * p->ih + ih) * p->iw + iw) - p->x_zp;
                        count++;
                    }
                }
                int32_t out;
                if (!count) {
                    out = p->y_zp;
                } else if (p->rq.mode != QK_RQ_ONNX) {
                    int64_t avg = sum >= 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
                    int64_t v = avg + p->y_zp;
                    out = p->same ? (int32_t)(v < p->rq.lo ? p->rq.lo : (v > p->rq.hi ? p->rq.hi : v))
                                  : qk_rq_apply(&p->rq, avg);
                } else {
                    double v = (double)sum / (double)count * p->rq.real_mult;
                    out = sat(qk_round_even(v) + p->y_zp, p->rq.lo, p->rq.hi);
                }
                st(y, p->ydt, ((size_t)nc * p->oh + oh) * p->ow + ow, out);
            }
}

void qk_matmul_run(const qk_mm *p, const void *a, const void *b, void *y)
{
    for (int32_t bt = 0; bt < p->batch; bt++)
        for (int32_t i = 0; i < p->m; i++)
            for (int32_t j = 0; j < p->nn; j++) {
                int32_t bz = p->b_zp ? p->b_zp[p->n_bzp > 1 ? j : 0] : 0;
                uint32_t acc = p->bias ? (uint32_t)p->bias[j] : 0u;
                for (int32_t k = 0; k < p->k; k++) {
                    int32_t av = ld(a, p->adt, ((size_t)bt * p->m + i) * p->k + k) - p->a_zp;
                    size_t bi = (p->b_batched ? (size_t)bt * p->k * p->nn : 0) +
                                (p->trans_b ? (size_t)j * p->k + k : (size_t)k * p->nn + j);
                    int32_t bv = ld(b, p->bdt, bi) - bz;
                    acc += (uint32_t)(av * bv);
                }
                size_t yi = ((size_t)bt * p->m + i) * p->nn + j;
                if (p->ydt == QK_S32)
                    ((int32_t *)y)[yi] = (int32_t)acc;
                else
                    st(y, p->ydt, yi, qk_rq_apply(&p->rq[j], (int32_t)acc));
            }
}

int32_t qk_bin_one(const qk_add *p, int32_t a, int32_t b)
{
    int64_t da = (int64_t)a - p->za, db = (int64_t)b - p->zb;
    if (p->mode == QK_RQ_GEMMLOWP || p->mode == QK_RQ_SINGLE) {
        int64_t r;
        if (p->op == QK_MUL) {
            r = (int64_t)qk_mul_by_qm_form(p->mode, (int32_t)(da * db), p->mo, p->so) + p->zy;
        } else {
            int32_t sa = qk_mul_by_qm_form(p->mode, (int32_t)(da * (1 << 20)), p->m1, p->s1);
            int32_t sb = qk_mul_by_qm_form(p->mode, (int32_t)(db * (1 << 20)), p->m2, p->s2);
            int64_t sum = p->op == QK_SUB ? (int64_t)sa - sb : (int64_t)sa + sb;
            sum = sum > INT32_MAX ? INT32_MAX : (sum < INT32_MIN ? INT32_MIN : sum);
            r = (int64_t)qk_mul_by_qm_form(p->mode, (int32_t)sum, p->mo, p->so) + p->zy;
        }
        return r < p->lo ? p->lo : (r > p->hi ? p->hi : (int32_t)r);
    }
    /* round, then add the output zero point (QuantizeLinear's order): adding
     * it first moves ties with an odd zero point by one code */
    float v;
    if (p->op == QK_PRELU || p->op == QK_POW) {
        const float x = p->ra * (float)da, w = p->rb * (float)db;
        /* a NaN (a negative base to a fractional power) saturates to lo, as sat() does */
        v = (p->op == QK_POW ? tflk_powf(x, w) : x < 0.0f ? w * x : x) / p->rm;
    } else if (p->op == QK_MUL)
        v = (float)(da * db) * p->rm;
    else if (p->op == QK_SUB)
        v = p->ra * (float)da - p->rb * (float)db;
    else
        v = p->ra * (float)da + p->rb * (float)db;
    return sat(qk_round_even((double)v) + p->zy, p->lo, p->hi);
}

void qk_add_run(const qk_add *p, const void *a, const void *b, void *y)
{
    for (int32_t i = 0; i < p->n; i++) {
        const int32_t ib = p->binner > 1 ? (i / p->binner) % p->nb : p->nb == p->n ? i : i % p->nb;
        st(y, p->ydt, (size_t)i, qk_bin_one(p, ld(a, p->adt, (size_t)i), ld(b, p->bdt, (size_t)ib)));
    }
}

void qk_add_bc_run(const qk_add_bc *p, const void *a, const void *b, void *y)
{
    const qk_add *q = &p->q;
    size_t i = 0;
    for (int32_t i0 = 0; i0 < p->yd[0]; i0++)
        for (int32_t i1 = 0; i1 < p->yd[1]; i1++)
            for (int32_t i2 = 0; i2 < p->yd[2]; i2++)
                for (int32_t i3 = 0; i3 < p->yd[3]; i3++) {
                    const size_t ia = (size_t)i0 * (size_t)p->as[0] + (size_t)i1 * (size_t)p->as[1] +
                                      (size_t)i2 * (size_t)p->as[2] + (size_t)i3 * (size_t)p->as[3];
                    const size_t ib = (size_t)i0 * (size_t)p->bs[0] + (size_t)i1 * (size_t)p->bs[1] +
                                      (size_t)i2 * (size_t)p->bs[2] + (size_t)i3 * (size_t)p->bs[3];
                    st(y, q->ydt, i++, qk_bin_one(q, ld(a, q->adt, ia), ld(b, q->bdt, ib)));
                }
}

void qk_concat_run(const qk_concat *p, const void *const *x, void *y)
{
    int32_t off = 0;
    for (int32_t i = 0; i < p->n; i++) {
        const int32_t inner = p->inner[i];
        for (int32_t o = 0; o < p->outer; o++) {
            const size_t xi = (size_t)o * (size_t)inner, yi = (size_t)o * (size_t)p->yinner + (size_t)off;
            if (p->copy[i]) {
                for (int32_t j = 0; j < inner; j++)
                    st(y, p->ydt, yi + (size_t)j, ld(x[i], p->xdt, xi + (size_t)j));
            } else {
                for (int32_t j = 0; j < inner; j++)
                    st(y, p->ydt, yi + (size_t)j,
                       qk_rq_apply(&p->rq[i], (int64_t)ld(x[i], p->xdt, xi + (size_t)j) - p->zx[i]));
            }
        }
        off += inner;
    }
}

void qk_quantize_run(size_t n, const float *x, float scale, int32_t zp, int32_t ydt, void *y)
{
    int32_t lo = ydt == QK_U8 ? 0 : -128, hi = ydt == QK_U8 ? 255 : 127;
    for (size_t i = 0; i < n; i++)
        st(y, ydt, i, qk_quantize1(x[i], scale, zp, lo, hi));
}

void qk_dequantize_run(size_t n, const void *x, int32_t xdt, float scale, int32_t zp, float *y)
{
    for (size_t i = 0; i < n; i++)
        y[i] = (float)((int64_t)ld(x, xdt, i) - zp) * scale;
}
