/*
 * The QAS-INT8 kernels (plugin_sdk/kernels/qas.c) against independent
 * references written out here:
 *
 *   rounding       half to even, hand-worked values
 *   forward        acc = Σ (x̄ − zx)·W̄ + b̄, ȳ = zy + rint(acc·sx·sw/sy)
 *                  clamped, recomputed in double with libm's rint
 *   backward       central finite differences, in double, of
 *                  L(W̄, b̄, x) = CE(softmax(mask ⊙ y(W̄, b̄, x)))
 *                  with y = sx·sw·(Σ x·W̄ + b̄) the real output taken as a
 *                  function of the codes as reals and mask the forward's
 *                  unsaturated outputs (the straight-through estimator);
 *                  per-tensor and per-channel scales, a fused ReLU
 *   softmax CE     finite differences of the mean cross-entropy
 *   QAS            grad_W /= s_W², grad_b /= (s_W·s_x)², element by element
 *   update         SGD with momentum and the re-quantization, hand-worked
 *   MaxPool        the forward against the re-quantized maximum of the
 *                  dequantized values (double); the backward against
 *                  central finite differences, in double, of
 *                  L(v) = Σ c_j·max_{window j} v away from ties (distinct
 *                  codes), overlapping and padded windows; at ties and in
 *                  padded windows against hand-worked values (the first
 *                  maximal position in row-major order takes the gradient)
 */
#include "qas.h"
#include "sy_test.h"

#include <math.h>
#include <string.h>

static uint32_t rng = 2024u;
static double urand(void) /* [0, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) * (1.0 / 16777216.0);
}

static void test_round(void)
{
    const float in[] = {2.5f, 3.5f, -2.5f, -3.5f, 0.5f, -0.5f, 1.49999f, 1.5f, -1.5f, 126.6f, 300.0f, -300.0f};
    const int32_t want[] = {2, 4, -2, -4, 0, 0, 1, 2, -2, 127, 127, -128};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        CHECK(qas_round_clamp(in[i], -128, 127) == want[i], "round(%g) = %d, want %d", (double)in[i],
              qas_round_clamp(in[i], -128, 127), want[i]);
}

enum { B = 3, K = 7, O = 5 };

typedef struct fc_case {
    const char *name;
    qas_fc p;
    float ws[O];
    int8_t x[B * K], w[O * K], y[B * O];
    int32_t bias[O];
} fc_case;

static void make_case(fc_case *c, const char *name, int per_channel, int relu)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    for (int o = 0; o < O; o++)
        c->ws[o] = per_channel ? (float)(0.004 + 0.01 * urand()) : 0.007f;
    c->p = (qas_fc){.k = K, .o = O, .x_scale = 0.031f, .y_scale = 0.06f, .x_zp = -9, .y_zp = relu ? -128 : 3,
                    .act_min = -128, .act_max = 127, .w_scale = c->ws};
    for (int i = 0; i < B * K; i++)
        c->x[i] = (int8_t)(int)(urand() * 255.0 - 128.0);
    for (int i = 0; i < O * K; i++)
        c->w[i] = (int8_t)(int)(urand() * 254.0 - 127.0);
    for (int o = 0; o < O; o++)
        c->bias[o] = (int32_t)(urand() * 2000.0 - 1000.0);
}

/* the forward written out from the formula, in double */
static void test_forward(fc_case *c)
{
    qas_fc_forward(&c->p, B, c->x, c->w, c->bias, c->y);
    for (int n = 0; n < B; n++)
        for (int o = 0; o < O; o++) {
            int64_t acc = c->bias[o];
            for (int i = 0; i < K; i++)
                acc += (int64_t)(c->x[n * K + i] - c->p.x_zp) * c->w[o * K + i];
            /* the multiplier as the kernel forms it, in float; the product and rounding in double */
            float m = c->p.x_scale * c->ws[o] / c->p.y_scale;
            double q = rint((double)(float)acc * (double)m) + c->p.y_zp;
            q = q < c->p.act_min ? c->p.act_min : q > c->p.act_max ? c->p.act_max : q;
            CHECK(c->y[n * O + o] == (int8_t)q, "%s: forward y[%d][%d] = %d, want %d", c->name, n, o, c->y[n * O + o],
                  (int)q);
        }
}

static const int32_t labels[B] = {1, 4, 0};

/* the loss as a function of the real-valued codes W̄ (wf), b̄ (bf) and the
 * real input xr, the mask from the int8 forward */
static double loss_of(const fc_case *c, const double *wf, const double *bf, const double *xr)
{
    double L = 0;
    for (int n = 0; n < B; n++) {
        double y[O], mx = -1e300, sum = 0;
        for (int o = 0; o < O; o++) {
            int q = c->y[n * O + o];
            double acc = 0;
            for (int i = 0; i < K; i++)
                acc += xr[n * K + i] * wf[o * K + i];
            double v = (double)c->ws[o] * (acc + (double)c->p.x_scale * bf[o]);
            /* unsaturated outputs follow the real function; saturated ones are constants */
            y[o] = q > c->p.act_min && q < c->p.act_max ? v : c->p.y_scale * (double)(q - c->p.y_zp);
            mx = y[o] > mx ? y[o] : mx;
        }
        for (int o = 0; o < O; o++)
            sum += exp(y[o] - mx);
        L += -(y[labels[n]] - mx - log(sum));
    }
    return L / B;
}

static double rel_err(double got, double want, double floor_)
{
    return fabs(got - want) / fmax(fabs(want), floor_);
}

static void test_backward(fc_case *c)
{
    qas_fc_forward(&c->p, B, c->x, c->w, c->bias, c->y);
    /* the point: the codes as reals and the real input; dy is the softmax
     * CE gradient at the real output there (the backward is linear in dy),
     * so both sides differentiate the same function at the same point */
    float dy[B * O], gw[O * K], gb[O], dx[B * K];
    double wf[O * K], bf[O], xr[B * K];
    for (int i = 0; i < O * K; i++)
        wf[i] = c->w[i];
    for (int o = 0; o < O; o++)
        bf[o] = c->bias[o];
    for (int i = 0; i < B * K; i++)
        xr[i] = (double)c->p.x_scale * (double)(c->x[i] - c->p.x_zp);
    for (int n = 0; n < B; n++) {
        double y[O], mx = -1e300, sum = 0;
        for (int o = 0; o < O; o++) {
            int q = c->y[n * O + o];
            double acc = 0;
            for (int i = 0; i < K; i++)
                acc += xr[n * K + i] * wf[o * K + i];
            double v = (double)c->ws[o] * (acc + (double)c->p.x_scale * bf[o]);
            y[o] = q > c->p.act_min && q < c->p.act_max ? v : c->p.y_scale * (double)(q - c->p.y_zp);
            mx = fmax(mx, y[o]);
        }
        for (int o = 0; o < O; o++)
            sum += exp(y[o] - mx);
        for (int o = 0; o < O; o++)
            dy[n * O + o] = (float)((exp(y[o] - mx) / sum - (o == labels[n])) / B);
    }
    qas_fc_backward(&c->p, B, c->x, c->w, c->y, dy, gw, gb, dx);
    int passing = 0;
    for (int i = 0; i < B * O; i++)
        passing += c->y[i] > c->p.act_min && c->y[i] < c->p.act_max;
    CHECK(passing > 0, "%s: every output saturated: the case checks nothing", c->name);
    const double h = 1e-3, tol = 1e-3;
    double worst = 0;
    for (int i = 0; i < O * K; i++) {
        double s = wf[i];
        wf[i] = s + h;
        double lp = loss_of(c, wf, bf, xr);
        wf[i] = s - h;
        double lm = loss_of(c, wf, bf, xr);
        wf[i] = s;
        double e = rel_err(gw[i], (lp - lm) / (2 * h), 1e-4);
        worst = fmax(worst, e);
        CHECK(e < tol, "%s: dW̄[%d] = %.8g, finite differences %.8g", c->name, i, (double)gw[i], (lp - lm) / (2 * h));
    }
    for (int o = 0; o < O; o++) {
        double s = bf[o];
        bf[o] = s + h;
        double lp = loss_of(c, wf, bf, xr);
        bf[o] = s - h;
        double lm = loss_of(c, wf, bf, xr);
        bf[o] = s;
        double e = rel_err(gb[o], (lp - lm) / (2 * h), 1e-6);
        worst = fmax(worst, e);
        CHECK(e < tol, "%s: db̄[%d] = %.8g, finite differences %.8g", c->name, o, (double)gb[o], (lp - lm) / (2 * h));
    }
    for (int i = 0; i < B * K; i++) {
        double s = xr[i], hx = 1e-4;
        xr[i] = s + hx;
        double lp = loss_of(c, wf, bf, xr);
        xr[i] = s - hx;
        double lm = loss_of(c, wf, bf, xr);
        xr[i] = s;
        double e = rel_err(dx[i], (lp - lm) / (2 * hx), 1e-4);
        worst = fmax(worst, e);
        CHECK(e < tol, "%s: dx[%d] = %.8g, finite differences %.8g", c->name, i, (double)dx[i], (lp - lm) / (2 * hx));
    }
    printf("%s: %d of %d outputs pass the gradient; worst relative error %.1e (tolerance %.0e)\n", c->name, passing,
           B * O, worst, tol);

    /* QAS: each element divided by its channel's s_W² (weights) or (s_W·s_x)² (bias) */
    float sw[O * K], sb[O];
    memcpy(sw, gw, sizeof sw);
    memcpy(sb, gb, sizeof sb);
    qas_scale_grads(O, K, c->ws, c->p.x_scale, sw, sb);
    for (int o = 0; o < O; o++) {
        for (int i = 0; i < K; i++) {
            float want = gw[o * K + i] / (c->ws[o] * c->ws[o]);
            CHECK(sw[o * K + i] == want, "%s: QAS weight grad [%d][%d] = %g, want %g", c->name, o, i,
                  (double)sw[o * K + i], (double)want);
        }
        float sbw = c->ws[o] * c->p.x_scale;
        CHECK(sb[o] == gb[o] / (sbw * sbw), "%s: QAS bias grad [%d] = %g, want %g", c->name, o, (double)sb[o],
              (double)(gb[o] / (sbw * sbw)));
    }
}

/* a ReLU at the output (act_min = y_zp = −128): cut outputs pass nothing */
static void test_relu(void)
{
    const int8_t x[6] = {-128, -127, 0, 5, -128, 127};
    int8_t y[6];
    const float dy[6] = {1, 2, 3, 4, 5, 6};
    float dx[6];
    qas_relu_s8(6, -100, x, y);
    qas_relu_backward(6, -100, x, dy, dx);
    const int8_t wy[6] = {-100, -100, 0, 5, -100, 127};
    const float wdx[6] = {0, 0, 3, 4, 0, 6};
    for (int i = 0; i < 6; i++) {
        CHECK(y[i] == wy[i], "relu y[%d] = %d, want %d", i, y[i], wy[i]);
        CHECK(dx[i] == wdx[i], "relu dx[%d] = %g, want %g", i, (double)dx[i], (double)wdx[i]);
    }
}

static void test_xent(void)
{
    const int8_t lg[2 * 4] = {10, -3, 40, 7, -128, 127, 0, 2};
    const int32_t lab[2] = {2, 0}, bad[2] = {2, 4};
    const float sc = 0.05f;
    float d[8];
    CHECK(qas_softmax_xent_grad(2, 4, lg, sc, bad, d) == 1, "label 4 of 4 classes not refused at sample 1");
    REQUIRE(qas_softmax_xent_grad(2, 4, lg, sc, lab, d) == -1, "labels refused");
    double worst = 0;
    for (int j = 0; j < 8; j++) {
        double l[2][4], Lp = 0, Lm = 0;
        for (int s = -1; s <= 1; s += 2) {
            for (int i = 0; i < 8; i++)
                l[i / 4][i % 4] = sc * lg[i] + (i == j ? s * 1e-4 : 0);
            double L = 0;
            for (int n = 0; n < 2; n++) {
                double sum = 0;
                for (int c = 0; c < 4; c++)
                    sum += exp(l[n][c]);
                L += -(l[n][lab[n]] - log(sum)) / 2;
            }
            *(s < 0 ? &Lm : &Lp) = L;
        }
        double e = rel_err(d[j], (Lp - Lm) / 2e-4, 1e-4);
        worst = fmax(worst, e);
        CHECK(e < 1e-3, "dlogits[%d] = %g, finite differences %g", j, (double)d[j], (Lp - Lm) / 2e-4);
    }
    printf("softmax cross-entropy of int8 logits: worst relative error %.1e\n", worst);
}

static void test_update(void)
{
    /* v = 0.9·v + g, w −= 0.5·v; then rounded half to even and clamped */
    float g[4] = {1.0f, -2.0f, 0.5f, 100.0f}, v[4] = {0.0f, 1.0f, 0.0f, 0.0f}, m[4] = {3.0f, 0.25f, -1.0f, 20.0f};
    qas_sgd(4, 0.5f, 0.9f, g, v, m);
    const float wv[4] = {1.0f, -1.1f, 0.5f, 100.0f}, wm[4] = {2.5f, 0.8f, -1.25f, -30.0f};
    for (int i = 0; i < 4; i++) {
        CHECK(fabsf(v[i] - wv[i]) < 1e-6f, "v[%d] = %g, want %g", i, (double)v[i], (double)wv[i]);
        CHECK(fabsf(m[i] - wm[i]) < 1e-6f, "master[%d] = %g, want %g", i, (double)m[i], (double)wm[i]);
    }
    int8_t w[4];
    qas_requant_w(4, m, w);
    const int8_t ww[4] = {2, 1, -1, -30};
    for (int i = 0; i < 4; i++)
        CHECK(w[i] == ww[i], "requantized w[%d] = %d, want %d", i, w[i], ww[i]);
    const float big[3] = {200.0f, -200.0f, 1e12f};
    int8_t wb[3];
    int32_t bb[3];
    qas_requant_w(3, big, wb);
    qas_requant_b(3, big, bb);
    CHECK(wb[0] == 127 && wb[1] == -127, "weights clamp to the symmetric range: %d %d", wb[0], wb[1]);
    CHECK(bb[0] == 200 && bb[1] == -200 && bb[2] == (1 << 30), "bias codes: %d %d %d", bb[0], bb[1], bb[2]);
}

/* qas_fc_backward_update (the in-place update) gives the bits of the
 * separate passes: backward, QAS scaling, SGD, re-quantization */
static void test_fused(fc_case *c, int biases_only)
{
    qas_fc_forward(&c->p, B, c->x, c->w, c->bias, c->y);
    float dy[B * O];
    for (int i = 0; i < B * O; i++)
        dy[i] = (float)(urand() - 0.5) * 0.1f;
    int8_t w1[O * K], w2[O * K];
    int32_t b1[O], b2[O];
    float wm1[O * K], wm2[O * K], wv1[O * K], wv2[O * K], bm1[O], bm2[O], bv1[O], bv2[O];
    float gw[O * K], gb[O], dx1[B * K], dx2[B * K], row[K];
    for (int step = 0; step < 3; step++) { /* three steps: the momentum matters */
        if (!step) {
            memcpy(w1, c->w, sizeof w1), memcpy(w2, c->w, sizeof w2);
            memcpy(b1, c->bias, sizeof b1), memcpy(b2, c->bias, sizeof b2);
            for (int i = 0; i < O * K; i++)
                wm1[i] = wm2[i] = (float)c->w[i], wv1[i] = wv2[i] = 0;
            for (int o = 0; o < O; o++)
                bm1[o] = bm2[o] = (float)c->bias[o], bv1[o] = bv2[o] = 0;
        }
        qas_fc_backward(&c->p, B, c->x, w1, c->y, dy, biases_only ? NULL : gw, gb, dx1);
        qas_scale_grads(O, K, c->ws, c->p.x_scale, biases_only ? NULL : gw, gb);
        if (!biases_only) {
            qas_sgd(O * K, 0.3f, 0.9f, gw, wv1, wm1);
            qas_requant_w(O * K, wm1, w1);
        }
        qas_sgd(O, 0.3f, 0.9f, gb, bv1, bm1);
        qas_requant_b(O, bm1, b1);
        qas_fc_backward_update(&c->p, B, c->x, w2, b2, c->y, dy, dx2, 0.3f, 0.9f, biases_only ? NULL : wm2, wv2,
                               bm2, bv2, row);
    }
    CHECK(!memcmp(w1, w2, sizeof w1) && !memcmp(b1, b2, sizeof b1) && !memcmp(dx1, dx2, sizeof dx1),
          "%s%s: the in-place update differs in codes or dx", c->name, biases_only ? " (biases only)" : "");
    CHECK(!memcmp(bm1, bm2, sizeof bm1) && !memcmp(bv1, bv2, sizeof bv1) &&
              (biases_only || (!memcmp(wm1, wm2, sizeof wm1) && !memcmp(wv1, wv2, sizeof wv1))),
          "%s%s: the in-place update differs in the master copies or momentum", c->name,
          biases_only ? " (biases only)" : "");
    if (biases_only)
        CHECK(!memcmp(w2, c->w, sizeof w2), "%s: biases only changed a weight", c->name);
}

/* the real values v = s·(x̄ − z) of one plane; L(v) = Σ_j c_j·max over window j */
static double pool_loss(const qas_pool *p, const double *v, const double *cj)
{
    double L = 0;
    for (int32_t oy = 0; oy < p->oh; oy++)
        for (int32_t ox = 0; ox < p->ow; ox++) {
            double m = -INFINITY;
            for (int32_t ky = 0; ky < p->kh; ky++)
                for (int32_t kx = 0; kx < p->kw; kx++) {
                    int32_t iy = oy * p->sh - p->pt + ky, ix = ox * p->sw - p->pl + kx;
                    if (iy >= 0 && iy < p->h && ix >= 0 && ix < p->w && v[iy * p->w + ix] > m)
                        m = v[iy * p->w + ix];
                }
            L += cj[oy * p->ow + ox] * m;
        }
    return L;
}

static void test_maxpool(void)
{
    /* 2x2 stride 2 (the usual), and 3x3 stride 2 pads 1 (overlapping and padded windows) on a 6x6 plane */
    const qas_pool ps[2] = {{.c = 2, .h = 6, .w = 6, .oh = 3, .ow = 3, .kh = 2, .kw = 2, .sh = 2, .sw = 2},
                            {.c = 2, .h = 6, .w = 6, .oh = 3, .ow = 3, .kh = 3, .kw = 3, .sh = 2, .sw = 2, .pt = 1,
                             .pl = 1}};
    const float s = 0.043f;
    const int32_t z = -7;
    double worst = 0;
    for (int t = 0; t < 2; t++) {
        const qas_pool *p = &ps[t];
        enum { NB = 2, HW = 36, OHW = 9 };
        int8_t x[NB * 2 * HW], y[NB * 2 * OHW];
        float dy[NB * 2 * OHW], dx[NB * 2 * HW];
        /* distinct codes in every plane: a shuffled ramp (no ties) */
        for (int pl = 0; pl < NB * 2; pl++) {
            int8_t *xp = x + pl * HW;
            for (int i = 0; i < HW; i++)
                xp[i] = (int8_t)(-100 + 5 * i);
            for (int i = HW - 1; i > 0; i--) {
                int j = (int)(urand() * (i + 1));
                int8_t tmp = xp[i];
                xp[i] = xp[j], xp[j] = tmp;
            }
        }
        for (int i = 0; i < NB * 2 * OHW; i++)
            dy[i] = (float)(urand() * 2.0 - 1.0);
        qas_maxpool_forward(p, NB, x, y);
        qas_maxpool_backward(p, NB, x, dy, dx);
        for (int pl = 0; pl < NB * 2; pl++) {
            double v[HW], cj[OHW];
            for (int i = 0; i < HW; i++)
                v[i] = (double)s * (x[pl * HW + i] - z);
            for (int j = 0; j < OHW; j++)
                cj[j] = dy[pl * OHW + j];
            /* forward: the code of the maximum value, re-quantized with the same s, z */
            for (int oy = 0; oy < 3; oy++)
                for (int ox = 0; ox < 3; ox++) {
                    double m = -INFINITY;
                    for (int ky = 0; ky < p->kh; ky++)
                        for (int kx = 0; kx < p->kw; kx++) {
                            int iy = oy * p->sh - p->pt + ky, ix = ox * p->sw - p->pl + kx;
                            if (iy >= 0 && iy < 6 && ix >= 0 && ix < 6 && v[iy * 6 + ix] > m)
                                m = v[iy * 6 + ix];
                        }
                    int32_t want = (int32_t)rint(m / s) + z;
                    CHECK(y[pl * OHW + oy * 3 + ox] == want, "maxpool %d: y[%d][%d,%d] = %d, want %d", t, pl, oy,
                          ox, y[pl * OHW + oy * 3 + ox], want);
                }
            /* backward: ∂L/∂v_i by central differences (h well under the gap of s·5 between values) */
            for (int i = 0; i < HW; i++) {
                const double h = 1e-4;
                double vp[HW], vm[HW];
                memcpy(vp, v, sizeof v), memcpy(vm, v, sizeof v);
                vp[i] += h, vm[i] -= h;
                double fd = (pool_loss(p, vp, cj) - pool_loss(p, vm, cj)) / (2 * h);
                double e = fabs(fd - dx[pl * HW + i]);
                worst = e > worst ? e : worst;
                CHECK(e < 1e-6, "maxpool %d: dx[%d][%d] = %g, finite differences %g", t, pl, i,
                      (double)dx[pl * HW + i], fd);
            }
        }
    }
    printf("maxpool backward vs central differences: worst |error| %.3g\n", worst);
    /* ties, hand-worked: window 0 {5, 7 | 7, 2} has 7 at (0,1) and (1,0): (0,1) comes first; window 1 is all 1s:
     * its first position (0,2) */
    const qas_pool pt = {.c = 1, .h = 2, .w = 4, .oh = 1, .ow = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2};
    const int8_t xt[8] = {5, 7, 1, 1, 7, 2, 1, 1};
    const float dyt[2] = {0.5f, -2.0f}, wdx[8] = {0, 0.5f, -2.0f, 0, 0, 0, 0, 0};
    int8_t yt[2];
    float dxt[8];
    qas_maxpool_forward(&pt, 1, xt, yt);
    qas_maxpool_backward(&pt, 1, xt, dyt, dxt);
    CHECK(yt[0] == 7 && yt[1] == 1, "maxpool ties: y = %d %d, want 7 1", yt[0], yt[1]);
    for (int i = 0; i < 8; i++)
        CHECK(dxt[i] == wdx[i], "maxpool ties: dx[%d] = %g, want %g", i, (double)dxt[i], (double)wdx[i]);
    /* padded windows (2x2 stride 2, pads 1 on a 2x2 plane of -128s): each window's one real position is its
     * maximum, never a pad; overlapping 2x2 stride 1 windows on {1, 1 | 1, 1}: each output's gradient to its
     * window's first position, summed */
    const qas_pool pp = {.c = 1, .h = 2, .w = 2, .oh = 2, .ow = 2, .kh = 2, .kw = 2, .sh = 2, .sw = 2, .pt = 1,
                         .pl = 1};
    const int8_t xp[4] = {-128, -128, -128, -128};
    const float dyp[4] = {1, 2, 3, 4};
    int8_t yp[4];
    float dxp[4];
    qas_maxpool_forward(&pp, 1, xp, yp);
    qas_maxpool_backward(&pp, 1, xp, dyp, dxp);
    for (int i = 0; i < 4; i++)
        CHECK(yp[i] == -128 && dxp[i] == dyp[i], "maxpool pads: y[%d] = %d, dx = %g, want -128, %g", i, yp[i],
              (double)dxp[i], (double)dyp[i]);
    const qas_pool po = {.c = 1, .h = 3, .w = 3, .oh = 2, .ow = 2, .kh = 2, .kw = 2, .sh = 1, .sw = 1};
    const int8_t xo[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const float dyo[4] = {1, 2, 4, 8}, wdo[9] = {1, 2, 0, 4, 8, 0, 0, 0, 0};
    int8_t yo[4];
    float dxo[9];
    qas_maxpool_forward(&po, 1, xo, yo);
    qas_maxpool_backward(&po, 1, xo, dyo, dxo);
    for (int i = 0; i < 9; i++)
        CHECK(dxo[i] == wdo[i], "maxpool overlapping ties: dx[%d] = %g, want %g", i, (double)dxo[i], (double)wdo[i]);
}

int main(void)
{
    RUN_TEST(test_round);
    fc_case c;
    make_case(&c, "per-tensor", 0, 0);
    test_forward(&c);
    test_backward(&c);
    make_case(&c, "per-channel", 1, 0);
    test_forward(&c);
    test_backward(&c);
    make_case(&c, "per-channel, fused ReLU", 1, 1);
    c.p.act_min = c.p.y_zp; /* the ReLU as the output's code range */
    test_forward(&c);
    test_backward(&c);
    test_fused(&c, 0);
    test_fused(&c, 1);
    make_case(&c, "per-tensor", 0, 0);
    test_fused(&c, 0);
    printf("in-place update: the bits of the separate passes\n");
    RUN_TEST(test_relu);
    RUN_TEST(test_xent);
    RUN_TEST(test_update);
    RUN_TEST(test_maxpool);
    return SY_TEST_MAIN_RESULT();
}
