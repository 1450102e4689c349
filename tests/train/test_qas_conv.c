/*
 * The QAS-INT8 convolution kernels (plugin_sdk/kernels/qas.c, seed 001 §4's
 * "QAS INT8 Conv2D/Conv" row: 3x3, group 1, int8 in/out, int32 bias, per
 * tensor or per output channel) against references written out here:
 *
 *   forward    acc = Σ_window (x̄ − zx)·W̄ + b̄ (padding contributes the real
 *              0), ȳ = zy + rint(acc·sx·sw/sy) clamped, recomputed with
 *              64-bit sums and libm's rint
 *   backward   central finite differences, in double, of
 *              L(W̄, b̄, x) = mean_n CE(softmax(mask ⊙ y_n(W̄, b̄, x)))
 *              with y_n the sample's real output [o·oh·ow] as a function of
 *              the codes as reals and of the real input, mask the forward's
 *              unsaturated outputs (the straight-through estimator); pads 1
 *              stride 1, pads 0 stride 2, per-tensor, per-channel, a fused
 *              ReLU; then QAS's division per output channel
 */
#include "qas.h"
#include "sy_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 3066u;
static double urand(void) /* [0, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) * (1.0 / 16777216.0);
}

enum { B = 2, C = 2, HH = 5, WW = 5, O = 3, KH = 3, KW = 3 };
#define KSZ (C * KH * KW)
#define XN (B * C * HH * WW)

typedef struct conv_case {
    const char *name;
    qas_conv p;
    float ws[O];
    int8_t x[XN], w[O * KSZ], y[B * O * HH * WW];
    int32_t bias[O];
    int32_t labels[B];
} conv_case;

static int ny(const conv_case *c) { return c->p.o * c->p.oh * c->p.ow; }

static void make_case(conv_case *c, const char *name, int stride, int pad, int per_channel, int relu)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    for (int o = 0; o < O; o++)
        c->ws[o] = per_channel ? (float)(0.004 + 0.01 * urand()) : 0.007f;
    int oh = (HH + 2 * pad - KH) / stride + 1, ow = (WW + 2 * pad - KW) / stride + 1;
    c->p = (qas_conv){.c = C, .h = HH, .w = WW, .o = O, .oh = oh, .ow = ow, .kh = KH, .kw = KW, .sh = stride,
                      .sw = stride, .pt = pad, .pl = pad, .x_scale = 0.031f, .y_scale = 0.12f, .x_zp = -9,
                      .y_zp = relu ? -128 : 3, .act_min = -128, .act_max = 127, .w_scale = c->ws};
    for (int i = 0; i < XN; i++)
        c->x[i] = (int8_t)(int)(urand() * 255.0 - 128.0);
    for (int i = 0; i < O * KSZ; i++)
        c->w[i] = (int8_t)(int)(urand() * 254.0 - 127.0);
    for (int o = 0; o < O; o++)
        c->bias[o] = (int32_t)(urand() * 4000.0 - 2000.0);
    for (int n = 0; n < B; n++)
        c->labels[n] = (int32_t)(urand() * ny(c));
}

/* x's element at (n, ch, iy, ix) as the window reads it: outside is padding */
static int inside(int iy, int ix) { return iy >= 0 && iy < HH && ix >= 0 && ix < WW; }

static void test_forward(conv_case *c)
{
    qas_conv_forward(&c->p, B, c->x, c->w, c->bias, c->y);
    for (int n = 0; n < B; n++)
        for (int o = 0; o < O; o++)
            for (int oy = 0; oy < c->p.oh; oy++)
                for (int ox = 0; ox < c->p.ow; ox++) {
                    int64_t acc = c->bias[o];
                    for (int ch = 0; ch < C; ch++)
                        for (int ky = 0; ky < KH; ky++)
                            for (int kx = 0; kx < KW; kx++) {
                                int iy = oy * c->p.sh - c->p.pt + ky, ix = ox * c->p.sw - c->p.pl + kx;
                                if (inside(iy, ix))
                                    acc += (int64_t)(c->x[((n * C + ch) * HH + iy) * WW + ix] - c->p.x_zp) *
                                           c->w[((o * C + ch) * KH + ky) * KW + kx];
                            }
                    float m = c->p.x_scale * c->ws[o] / c->p.y_scale;
                    double q = rint((double)(float)acc * (double)m) + c->p.y_zp;
                    q = q < c->p.act_min ? c->p.act_min : q > c->p.act_max ? c->p.act_max : q;
                    int yi = ((n * O + o) * c->p.oh + oy) * c->p.ow + ox;
                    CHECK(c->y[yi] == (int8_t)q, "%s: forward y[%d] = %d, want %d", c->name, yi, c->y[yi], (int)q);
                }
}

/* the real outputs of sample n (saturated ones constant), in double */
static void real_out(const conv_case *c, int n, const double *wf, const double *bf, const double *xr, double *y)
{
    for (int o = 0; o < O; o++)
        for (int oy = 0; oy < c->p.oh; oy++)
            for (int ox = 0; ox < c->p.ow; ox++) {
                int j = (o * c->p.oh + oy) * c->p.ow + ox, q = c->y[n * ny(c) + j];
                double acc = 0;
                for (int ch = 0; ch < C; ch++)
                    for (int ky = 0; ky < KH; ky++)
                        for (int kx = 0; kx < KW; kx++) {
                            int iy = oy * c->p.sh - c->p.pt + ky, ix = ox * c->p.sw - c->p.pl + kx;
                            if (inside(iy, ix))
                                acc += xr[((n * C + ch) * HH + iy) * WW + ix] * wf[((o * C + ch) * KH + ky) * KW + kx];
                        }
                double v = (double)c->ws[o] * (acc + (double)c->p.x_scale * bf[o]);
                y[j] = q > c->p.act_min && q < c->p.act_max ? v : c->p.y_scale * (double)(q - c->p.y_zp);
            }
}

static double loss_of(const conv_case *c, const double *wf, const double *bf, const double *xr, float *dy)
{
    double L = 0, y[O * HH * WW];
    for (int n = 0; n < B; n++) {
        real_out(c, n, wf, bf, xr, y);
        double mx = -1e300, sum = 0;
        for (int j = 0; j < ny(c); j++)
            mx = fmax(mx, y[j]);
        for (int j = 0; j < ny(c); j++)
            sum += exp(y[j] - mx);
        L += -(y[c->labels[n]] - mx - log(sum));
        for (int j = 0; dy && j < ny(c); j++)
            dy[n * ny(c) + j] = (float)((exp(y[j] - mx) / sum - (j == c->labels[n])) / B);
    }
    return L / B;
}

static double rel_err(double got, double want, double floor_) { return fabs(got - want) / fmax(fabs(want), floor_); }

static void test_backward(conv_case *c)
{
    qas_conv_forward(&c->p, B, c->x, c->w, c->bias, c->y);
    float dy[B * O * HH * WW], gw[O * KSZ], gb[O], dx[XN];
    double wf[O * KSZ], bf[O], xr[XN];
    for (int i = 0; i < O * KSZ; i++)
        wf[i] = c->w[i];
    for (int o = 0; o < O; o++)
        bf[o] = c->bias[o];
    for (int i = 0; i < XN; i++)
        xr[i] = (double)c->p.x_scale * (double)(c->x[i] - c->p.x_zp);
    /* dy: the softmax CE gradient at the real output (the backward is linear in dy) */
    loss_of(c, wf, bf, xr, dy);
    qas_conv_backward(&c->p, B, c->x, c->w, c->y, dy, gw, gb, dx);
    int passing = 0;
    for (int i = 0; i < B * ny(c); i++)
        passing += c->y[i] > c->p.act_min && c->y[i] < c->p.act_max;
    CHECK(passing > 0 && passing < B * ny(c) + (c->p.y_zp != -128),
          "%s: %d of %d outputs pass: the case checks too little", c->name, passing, B * ny(c));
    const double h = 1e-3, tol = 1e-3;
    double worst = 0;
    for (int i = 0; i < O * KSZ; i++) {
        double s = wf[i];
        wf[i] = s + h;
        double lp = loss_of(c, wf, bf, xr, NULL);
        wf[i] = s - h;
        double lm = loss_of(c, wf, bf, xr, NULL);
        wf[i] = s;
        double e = rel_err(gw[i], (lp - lm) / (2 * h), 1e-4);
        worst = fmax(worst, e);
        CHECK(e < tol, "%s: dW̄[%d] = %.8g, finite differences %.8g", c->name, i, (double)gw[i], (lp - lm) / (2 * h));
    }
    for (int o = 0; o < O; o++) {
        double s = bf[o];
        bf[o] = s + h;
        double lp = loss_of(c, wf, bf, xr, NULL);
        bf[o] = s - h;
        double lm = loss_of(c, wf, bf, xr, NULL);
        bf[o] = s;
        double e = rel_err(gb[o], (lp - lm) / (2 * h), 1e-6);
        worst = fmax(worst, e);
        CHECK(e < tol, "%s: db̄[%d] = %.8g, finite differences %.8g", c->name, o, (double)gb[o], (lp - lm) / (2 * h));
    }
    for (int i = 0; i < XN; i++) {
        double s = xr[i], hx = 1e-4;
        xr[i] = s + hx;
        double lp = loss_of(c, wf, bf, xr, NULL);
        xr[i] = s - hx;
        double lm = loss_of(c, wf, bf, xr, NULL);
        xr[i] = s;
        double e = rel_err(dx[i], (lp - lm) / (2 * hx), 1e-4);
        worst = fmax(worst, e);
        CHECK(e < tol, "%s: dx[%d] = %.8g, finite differences %.8g", c->name, i, (double)dx[i], (lp - lm) / (2 * hx));
    }
    printf("%s: %d of %d outputs pass the gradient; worst relative error %.1e (tolerance %.0e)\n", c->name, passing,
           B * ny(c), worst, tol);
    /* QAS over the [o, c·kh·kw] rows: each divided by its channel's s_W² (bias (s_W·s_x)²) */
    float sw[O * KSZ], sb[O];
    memcpy(sw, gw, sizeof sw);
    memcpy(sb, gb, sizeof sb);
    qas_scale_grads(O, KSZ, c->ws, c->p.x_scale, sw, sb);
    for (int o = 0; o < O; o++) {
        for (int i = 0; i < KSZ; i++)
            CHECK(sw[o * KSZ + i] == gw[o * KSZ + i] / (c->ws[o] * c->ws[o]), "%s: QAS weight grad [%d][%d]", c->name,
                  o, i);
        float sbw = c->ws[o] * c->p.x_scale;
        CHECK(sb[o] == gb[o] / (sbw * sbw), "%s: QAS bias grad [%d]", c->name, o);
    }
}

int main(void)
{
    static conv_case cs[4];
    make_case(&cs[0], "3x3 pads 1, per tensor", 1, 1, 0, 0);
    make_case(&cs[1], "3x3 pads 1, per channel", 1, 1, 1, 0);
    make_case(&cs[2], "3x3 stride 2, per channel", 2, 0, 1, 0);
    make_case(&cs[3], "3x3 pads 1, per channel, fused ReLU", 1, 1, 1, 1);
    for (int i = 0; i < 4; i++) {
        test_forward(&cs[i]);
        test_backward(&cs[i]);
    }
    return SY_TEST_MAIN_RESULT();
}
