/* The QAS-INT8 training kernels (qas.h): int8 forward, float backward,
 * the QAS scaling, the update and the re-quantization. */
#include "qas.h"

#include "tflk.h"

int32_t qas_round_clamp(float v, int32_t lo, int32_t hi)
{
    if (!(v >= (float)lo)) /* also NaN */
        return lo;
    if (v >= (float)hi)
        return hi;
    /* |v| < 2^31 here; truncate, then round the remainder half to even */
    float a = v < 0.0f ? -v : v;
    int32_t t = (int32_t)a;
    float r = a - (float)t;
    if (r > 0.5f || (r == 0.5f && (t & 1)))
        t += 1;
    return v < 0.0f ? -t : t;
}

void qas_fc_forward(const qas_fc *p, int32_t batch, const int8_t *x, const int8_t *w, const int32_t *bias, int8_t *y)
{
    for (int32_t n = 0; n < batch; n++) {
        const int8_t *xr = x + (int64_t)n * p->k;
        for (int32_t o = 0; o < p->o; o++) {
            const int8_t *wr = w + (int64_t)o * p->k;
            /* the bias is any int32 (a checkpoint's, or one re-quantized
             * near its range), so the sum is 64-bit; the products are summed
             * in int32 by blocks that cannot overflow (|x - x_zp| <= 255,
             * |w| <= 128: 65536 * 32640 < 2^31), which keeps a 32-bit MCU's
             * inner loop 32-bit. In range the result is the int32 sum's. */
            int64_t acc = bias ? bias[o] : 0;
            for (int32_t i0 = 0, end; i0 < p->k; i0 = end) {
                end = p->k - i0 > 65536 ? i0 + 65536 : p->k;
                int32_t dot = 0;
                for (int32_t i = i0; i < end; i++)
                    dot += ((int32_t)xr[i] - p->x_zp) * (int32_t)wr[i];
                acc += dot;
            }
            /* the multiplier is formed as the folded QDQ Gemm forms it:
             * (x_scale·w_scale)/y_scale in float */
            float m = p->x_scale * p->w_scale[o] / p->y_scale;
            int32_t q = qas_round_clamp((float)acc * m, -32768, 32767) + p->y_zp;
            y[(int64_t)n * p->o + o] = (int8_t)tflk_clampi(q, p->act_min, p->act_max);
        }
    }
}

void qas_fc_backward(const qas_fc *p, int32_t batch, const int8_t *x, const int8_t *w, const int8_t *y,
                     const float *dy, float *gw, float *gb, float *dx)
{
    for (int32_t o = 0; o < p->o; o++) {
        for (int32_t i = 0; gw && i < p->k; i++)
            gw[(int64_t)o * p->k + i] = 0.0f;
        if (gb)
            gb[o] = 0.0f;
    }
    if (dx)
        for (int64_t i = 0; i < (int64_t)batch * p->k; i++)
            dx[i] = 0.0f;
    for (int32_t n = 0; n < batch; n++) {
        const int8_t *xr = x + (int64_t)n * p->k;
        for (int32_t o = 0; o < p->o; o++) {
            int32_t q = y[(int64_t)n * p->o + o];
            if (q <= p->act_min || q >= p->act_max)
                continue; /* saturated or cut by the ReLU: no gradient passes */
            /* g: the gradient of the real accumulator x·Wᵀ + b */
            float g = dy[(int64_t)n * p->o + o];
            /* W = w_scale·W̄, so ∂L/∂W̄ = w_scale·g·x; b = x_scale·w_scale·b̄ */
            float gs = g * p->w_scale[o];
            if (gw) {
                float *gr = gw + (int64_t)o * p->k;
                for (int32_t i = 0; i < p->k; i++)
                    gr[i] += gs * (p->x_scale * (float)((int32_t)xr[i] - p->x_zp));
            }
            if (gb)
                gb[o] += gs * p->x_scale;
            if (dx) {
                const int8_t *wr = w + (int64_t)o * p->k;
                float *dr = dx + (int64_t)n * p->k;
                for (int32_t i = 0; i < p->k; i++)
                    dr[i] += gs * (float)wr[i];
            }
        }
    }
}

void qas_conv_forward(const qas_conv *p, int32_t batch, const int8_t *x, const int8_t *w, const int32_t *bias,
                      int8_t *y)
{
    const int64_t plane = (int64_t)p->h * p->w, ksz = (int64_t)p->c * p->kh * p->kw;
    for (int32_t n = 0; n < batch; n++)
        for (int32_t o = 0; o < p->o; o++) {
            const float m = p->x_scale * p->w_scale[o] / p->y_scale;
            for (int32_t oy = 0; oy < p->oh; oy++)
                for (int32_t ox = 0; ox < p->ow; ox++) {
                    int32_t acc = bias ? bias[o] : 0;
                    for (int32_t c = 0; c < p->c; c++) {
                        const int8_t *xp = x + ((int64_t)n * p->c + c) * plane;
                        const int8_t *wp = w + (int64_t)o * ksz + (int64_t)c * p->kh * p->kw;
                        for (int32_t ky = 0; ky < p->kh; ky++) {
                            const int32_t iy = oy * p->sh - p->pt + ky;
                            if (iy < 0 || iy >= p->h)
                                continue; /* padding: the real 0 */
                            for (int32_t kx = 0; kx < p->kw; kx++) {
                                const int32_t ix = ox * p->sw - p->pl + kx;
                                if (ix >= 0 && ix < p->w)
                                    acc += ((int32_t)xp[(int64_t)iy * p->w + ix] - p->x_zp) *
                                           (int32_t)wp[ky * p->kw + kx];
                            }
                        }
                    }
                    int32_t q = qas_round_clamp((float)acc * m, -32768, 32767) + p->y_zp;
                    y[(((int64_t)n * p->o + o) * p->oh + oy) * p->ow + ox] =
                        (int8_t)tflk_clampi(q, p->act_min, p->act_max);
                }
        }
}

void qas_conv_backward(const qas_conv *p, int32_t batch, const int8_t *x, const int8_t *w, const int8_t *y,
                       const float *dy, float *gw, float *gb, float *dx)
{
    const int64_t plane = (int64_t)p->h * p->w, ksz = (int64_t)p->c * p->kh * p->kw;
    for (int64_t i = 0; gw && i < (int64_t)p->o * ksz; i++)
        gw[i] = 0.0f;
    for (int32_t o = 0; gb && o < p->o; o++)
        gb[o] = 0.0f;
    for (int64_t i = 0; dx && i < (int64_t)batch * p->c * plane; i++)
        dx[i] = 0.0f;
    for (int32_t n = 0; n < batch; n++)
        for (int32_t o = 0; o < p->o; o++)
            for (int32_t oy = 0; oy < p->oh; oy++)
                for (int32_t ox = 0; ox < p->ow; ox++) {
                    const int64_t yi = (((int64_t)n * p->o + o) * p->oh + oy) * p->ow + ox;
                    const int32_t q = y[yi];
                    if (q <= p->act_min || q >= p->act_max)
                        continue; /* saturated or cut by the ReLU: no gradient passes */
                    /* as qas_fc_backward: W = w_scale·W̄, b = x_scale·w_scale·b̄ */
                    const float gs = dy[yi] * p->w_scale[o];
                    if (gb)
                        gb[o] += gs * p->x_scale;
                    for (int32_t c = 0; c < p->c; c++) {
                        const int64_t xo = ((int64_t)n * p->c + c) * plane;
                        const int64_t wo = (int64_t)o * ksz + (int64_t)c * p->kh * p->kw;
                        for (int32_t ky = 0; ky < p->kh; ky++) {
                            const int32_t iy = oy * p->sh - p->pt + ky;
                            if (iy < 0 || iy >= p->h)
                                continue;
                            for (int32_t kx = 0; kx < p->kw; kx++) {
                                const int32_t ix = ox * p->sw - p->pl + kx;
                                if (ix < 0 || ix >= p->w)
                                    continue;
                                const int64_t xi = xo + (int64_t)iy * p->w + ix, wi = wo + ky * p->kw + kx;
                                if (gw)
                                    gw[wi] += gs * (p->x_scale * (float)((int32_t)x[xi] - p->x_zp));
                                if (dx)
                                    dx[xi] += gs * (float)w[wi];
                            }
                        }
                    }
                }
}

void qas_scale_grads(int32_t o, int32_t k, const float *w_scale, float x_scale, float *gw, float *gb)
{
    for (int32_t c = 0; c < o; c++) {
        float s2 = w_scale[c] * w_scale[c];
        for (int32_t i = 0; gw && i < k; i++)
            gw[(int64_t)c * k + i] /= s2;
        if (gb) {
            float sb = w_scale[c] * x_scale;
            gb[c] /= sb * sb;
        }
    }
}

void qas_sgd(int32_t n, float lr, float momentum, const float *g, float *vel, float *master)
{
    for (int32_t i = 0; i < n; i++) {
        vel[i] = momentum * vel[i] + g[i];
        master[i] -= lr * vel[i];
    }
}

void qas_requant_w(int32_t n, const float *master, int8_t *w)
{
    for (int32_t i = 0; i < n; i++)
        w[i] = (int8_t)qas_round_clamp(master[i], -127, 127);
}

void qas_requant_b(int32_t n, const float *master, int32_t *b)
{
    for (int32_t i = 0; i < n; i++)
        b[i] = qas_round_clamp(master[i], -(1 << 30), 1 << 30);
}

void qas_relu_s8(int32_t n, int32_t zp, const int8_t *x, int8_t *y)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = (int8_t)(x[i] > zp ? x[i] : zp);
}

void qas_relu_backward(int32_t n, int32_t zp, const int8_t *x, const float *dy, float *dx)
{
    for (int32_t i = 0; i < n; i++)
        dx[i] = x[i] > zp ? dy[i] : 0.0f;
}

/* the first maximal position (ky, kx row-major) of output (oy, ox)'s window
 * in one channel's plane, or -1 when the window holds no input position */
static int32_t pool_argmax(const qas_pool *p, const int8_t *plane, int32_t oy, int32_t ox)
{
    int32_t best = -1, bv = 0;
    for (int32_t ky = 0; ky < p->kh; ky++) {
        int32_t iy = oy * p->sh - p->pt + ky;
        if (iy < 0 || iy >= p->h)
            continue;
        for (int32_t kx = 0; kx < p->kw; kx++) {
            int32_t ix = ox * p->sw - p->pl + kx;
            if (ix < 0 || ix >= p->w)
                continue;
            int32_t v = plane[iy * p->w + ix];
            if (best < 0 || v > bv)
                best = iy * p->w + ix, bv = v;
        }
    }
    return best;
}

void qas_maxpool_forward(const qas_pool *p, int32_t batch, const int8_t *x, int8_t *y)
{
    const int32_t hw = p->h * p->w, ohw = p->oh * p->ow;
    for (int32_t n = 0; n < batch * p->c; n++) {
        const int8_t *plane = x + (int64_t)n * hw;
        for (int32_t oy = 0; oy < p->oh; oy++)
            for (int32_t ox = 0; ox < p->ow; ox++) {
                int32_t a = pool_argmax(p, plane, oy, ox);
                y[(int64_t)n * ohw + oy * p->ow + ox] = a < 0 ? (int8_t)-128 : plane[a];
            }
    }
}

void qas_maxpool_backward(const qas_pool *p, int32_t batch, const int8_t *x, const float *dy, float *dx)
{
    const int32_t hw = p->h * p->w, ohw = p->oh * p->ow;
    for (int64_t i = 0; i < (int64_t)batch * p->c * hw; i++)
        dx[i] = 0.0f;
    for (int32_t n = 0; n < batch * p->c; n++) {
        const int8_t *plane = x + (int64_t)n * hw;
        for (int32_t oy = 0; oy < p->oh; oy++)
            for (int32_t ox = 0; ox < p->ow; ox++) {
                int32_t a = pool_argmax(p, plane, oy, ox);
                if (a >= 0)
                    dx[(int64_t)n * hw + a] += dy[(int64_t)n * ohw + oy * p->ow + ox];
            }
    }
}

int32_t qas_softmax_xent_grad(int32_t batch, int32_t classes, const int8_t *logits, float scale,
                              const int32_t *labels, float *dlogits)
{
    for (int32_t n = 0; n < batch; n++)
        if (labels[n] < 0 || labels[n] >= classes)
            return n;
    for (int32_t n = 0; n < batch; n++) {
        const int8_t *l = logits + (int64_t)n * classes;
        float *d = dlogits + (int64_t)n * classes;
        int32_t mx = l[0];
        for (int32_t c = 1; c < classes; c++)
            mx = l[c] > mx ? l[c] : mx;
        float sum = 0.0f;
        for (int32_t c = 0; c < classes; c++) {
            d[c] = tflk_expf(scale * (float)(l[c] - mx));
            sum += d[c];
        }
        for (int32_t c = 0; c < classes; c++)
            d[c] = (d[c] / sum - (c == labels[n] ? 1.0f : 0.0f)) / (float)batch;
    }
    return -1;
}

void qas_fc_backward_update(const qas_fc *p, int32_t batch, const int8_t *x, int8_t *w, int32_t *bias,
                            const int8_t *y, const float *dy, float *dx, float lr, float momentum, float *wm,
                            float *wv, float *bm, float *bv, float *row)
{
    /* the input gradient first: it reads the weights before the update */
    if (dx) {
        for (int64_t i = 0; i < (int64_t)batch * p->k; i++)
            dx[i] = 0.0f;
        for (int32_t n = 0; n < batch; n++)
            for (int32_t o = 0; o < p->o; o++) {
                int32_t q = y[(int64_t)n * p->o + o];
                if (q <= p->act_min || q >= p->act_max)
                    continue;
                float gs = dy[(int64_t)n * p->o + o] * p->w_scale[o];
                const int8_t *wr = w + (int64_t)o * p->k;
                float *dr = dx + (int64_t)n * p->k;
                for (int32_t i = 0; i < p->k; i++)
                    dr[i] += gs * (float)wr[i];
            }
    }
    /* then channel by channel: its gradient row, the QAS scaling, the step
     * and the new codes (the sums, in the order qas_fc_backward takes them) */
    for (int32_t o = 0; o < p->o; o++) {
        float gb = 0.0f;
        if (wm)
            for (int32_t i = 0; i < p->k; i++)
                row[i] = 0.0f;
        for (int32_t n = 0; n < batch; n++) {
            int32_t q = y[(int64_t)n * p->o + o];
            if (q <= p->act_min || q >= p->act_max)
                continue;
            float gs = dy[(int64_t)n * p->o + o] * p->w_scale[o];
            if (wm) {
                const int8_t *xr = x + (int64_t)n * p->k;
                for (int32_t i = 0; i < p->k; i++)
                    row[i] += gs * (p->x_scale * (float)((int32_t)xr[i] - p->x_zp));
            }
            gb += gs * p->x_scale;
        }
        if (wm) {
            float s2 = p->w_scale[o] * p->w_scale[o];
            for (int32_t i = 0; i < p->k; i++)
                row[i] /= s2;
            float *m = wm + (int64_t)o * p->k, *v = wv + (int64_t)o * p->k;
            qas_sgd(p->k, lr, momentum, row, v, m);
            qas_requant_w(p->k, m, w + (int64_t)o * p->k);
        }
        if (bias) {
            float sb = p->w_scale[o] * p->x_scale;
            gb /= sb * sb;
            qas_sgd(1, lr, momentum, &gb, bv + o, bm + o);
            qas_requant_b(1, bm + o, bias + o);
        }
    }
}

void qas_perm_s8(int32_t batch, const int32_t d[4], const int32_t perm[4], const int8_t *x, int8_t *y)
{
    const int32_t od[4] = {1, d[perm[1]], d[perm[2]], d[perm[3]]}, n = d[1] * d[2] * d[3];
    const int32_t st[4] = {0, d[2] * d[3], d[3], 1};
    for (int32_t b = 0; b < batch; b++, x += n, y += n)
        for (int32_t i = 0, o = 0; i < od[1]; i++)
            for (int32_t j = 0; j < od[2]; j++)
                for (int32_t l = 0; l < od[3]; l++, o++)
                    y[o] = x[i * st[perm[1]] + j * st[perm[2]] + l * st[perm[3]]];
}

void qas_unperm_f32(int32_t batch, const int32_t d[4], const int32_t perm[4], const float *dy, float *dx)
{
    const int32_t od[4] = {1, d[perm[1]], d[perm[2]], d[perm[3]]}, n = d[1] * d[2] * d[3];
    const int32_t st[4] = {0, d[2] * d[3], d[3], 1};
    for (int32_t b = 0; b < batch; b++, dx += n, dy += n)
        for (int32_t i = 0, o = 0; i < od[1]; i++)
            for (int32_t j = 0; j < od[2]; j++)
                for (int32_t l = 0; l < od[3]; l++, o++)
                    dx[i * st[perm[1]] + j * st[perm[2]] + l * st[perm[3]]] = dy[o];
}
