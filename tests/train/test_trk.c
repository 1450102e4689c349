/*
 * The FP32 training kernels the training packages run and the `train`
 * plugin's kernels do not (plugin_sdk/kernels/trk.c), against references
 * written out here:
 *
 *   trk_fc_backward_update   a Gemm layer's backward and update in one
 *                            pass: dx, dW and db against central finite
 *                            differences, in double, of the softmax
 *                            cross-entropy of y = x·Wᵀ + b (the gradients
 *                            read from the Momentum state: with alpha 0 and
 *                            b 1 the state after the step is the gradient
 *                            itself), the weights after the step against
 *                            x − r·v; frozen weights stay as they were
 *   trk_concat_self_grad, trk_concat_grad, trk_grad_add   hand-worked
 *   trk_concat_in_place      a Concat of two values over the input's buffer:
 *                            bit for bit the out-of-place Concat, both
 *                            orders, 8 shapes, nothing written past it
 *   trk_pad_grad, trk_slice_grad, trk_slice_step_grad, trk_transpose_grad, trk_reduce_grad
 *                            the backwards of a constant Pad, a Slice (and
 *                            one with steps 3, 3, 2), a Transpose (perm not its own inverse) and a
 *                            ReduceSum/ReduceMean over two axes (and at
 *                            ranks 7 and 8: Slice, Slice with steps,
 *                            ReduceSum, ReduceMean, Transpose): dL/dx of
 *                            L = Σ c·f(x) by central finite differences in
 *                            double, f written here by its index arithmetic
 *   trk_eltwise_grad         Add, Sub (both operand orders), Mul, Div with a
 *                            constant: dL/dx and dL/dc of L = Σ w·(x ∘ c)
 *                            by central finite differences in double
 *   trk_div_grad             y = a / b of two activations: dL/da and dL/db
 *                            of L = Σ w·(a / b) by central finite
 *                            differences in double; the divisor's gradient
 *                            in the host graph's float operations
 *                            −((dy·y) / b), bit for bit; both in place
 *   trk_div_bcast_grad       y = a / b of two activations broadcast against
 *                            each other (either or both stretched, ranks 2,
 *                            4 and 8; operands of ranks 4 and 2, 3 and 4,
 *                            aligned from the last axis as the packages pass
 *                            them): dL/da and dL/db likewise, and bit for
 *                            bit the host graph's Div, Mul, Neg and
 *                            ReduceToShape written out here
 *   trk_adam_rate            R·√(1 − βᵀ)/(1 − αᵀ) in double
 *   trk_dw_conv_in_place     the depthwise Conv written over its input with
 *                            a ring of pt + 1 rows, bit for bit
 *                            tflk_conv_f32 per channel out of place (the
 *                            FP32 packages' forward before the in-place
 *                            plan), over planes of 1 and 2 rows or
 *                            columns, leading pads from 0 to kh − 1,
 *                            kernels 1x1 to 5x5, 1 to 8 channels; the ring
 *                            is exactly (pt + 1)·w floats (guards after it)
 */
#include "sy_test.h"
#include "tflk.h" /* TFLK_ADD .. TFLK_DIV: trk_eltwise_grad's ops */
#include "trk.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 1515u;
static double urand(void) /* [-1, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) * (2.0 / 16777216.0) - 1.0;
}

enum { K = 9, O = 6, LABEL = 2 };

static double loss_of(const double *x, const double *w, const double *b, double *dy)
{
    double y[O], mx = -1e300, sum = 0;
    for (int o = 0; o < O; o++) {
        y[o] = b[o];
        for (int i = 0; i < K; i++)
            y[o] += x[i] * w[o * K + i];
        mx = fmax(mx, y[o]);
    }
    for (int o = 0; o < O; o++)
        sum += exp(y[o] - mx);
    for (int o = 0; dy && o < O; o++)
        dy[o] = exp(y[o] - mx) / sum - (o == LABEL);
    return log(sum) - (y[LABEL] - mx);
}

static void test_fc(void)
{
    float x[K], w[O * K], b[O], w0[O * K], b0[O], dyf[O], dx[K], row[K];
    float ws[O * K] = {0}, bs[O] = {0};
    double xd[K], wd[O * K], bd[O], dy[O];
    for (int i = 0; i < K; i++)
        xd[i] = x[i] = (float)urand();
    for (int i = 0; i < O * K; i++)
        wd[i] = w[i] = w0[i] = (float)(0.5 * urand());
    for (int o = 0; o < O; o++)
        bd[o] = b[o] = b0[o] = (float)(0.1 * urand());
    loss_of(xd, wd, bd, dy);
    for (int o = 0; o < O; o++)
        dyf[o] = (float)dy[o];
    const trk_opt opt = {.kind = TRK_MOMENTUM, .r = 0.25f, .alpha = 0.0f, .beta = 1.0f};
    trk_fc_backward_update(&opt, K, O, x, w, b, dyf, dx, 1, ws, NULL, bs, NULL, row);
    const double h = 1e-5, tol = 1e-4;
    double worst = 0;
    for (int i = 0; i < O * K + O + K; i++) {
        double *v = i < O * K ? &wd[i] : i < O * K + O ? &bd[i - O * K] : &xd[i - O * K - O];
        double got = i < O * K ? ws[i] : i < O * K + O ? bs[i - O * K] : dx[i - O * K - O];
        double s = *v;
        *v = s + h;
        double lp = loss_of(xd, wd, bd, NULL);
        *v = s - h;
        double lm = loss_of(xd, wd, bd, NULL);
        *v = s;
        double fd = (lp - lm) / (2 * h), e = fabs(got - fd) / fmax(fabs(fd), 1e-4);
        worst = fmax(worst, e);
        CHECK(e < tol, "gradient %d = %.8g, finite differences %.8g", i, got, fd);
    }
    printf("fc backward: worst relative error %.1e against finite differences (tolerance %.0e)\n", worst, tol);
    for (int i = 0; i < O * K; i++)
        CHECK(w[i] == w0[i] - 0.25f * ws[i], "w[%d] after the step = %.9g, want %.9g", i, (double)w[i],
              (double)(w0[i] - 0.25f * ws[i]));
    for (int o = 0; o < O; o++)
        CHECK(b[o] == b0[o] - 0.25f * bs[o], "b[%d] after the step", o);
    /* frozen weights (a biases-only update): W untouched, dx still formed from it */
    float w2[O * K], b2[O], dx2[K], bs2[O] = {0};
    memcpy(w2, w0, sizeof w2);
    memcpy(b2, b0, sizeof b2);
    trk_fc_backward_update(&opt, K, O, x, w2, b2, dyf, dx2, 0, NULL, NULL, bs2, NULL, NULL);
    CHECK(!memcmp(w2, w0, sizeof w2), "frozen weights changed");
    CHECK(!memcmp(dx2, dx, sizeof dx2) && !memcmp(bs2, bs, sizeof bs2), "frozen weights: dx or db differ");
}

static void test_concat_adam(void)
{
    const float dy[6] = {1, 2, 3, 10, 20, 30};
    float dx[3];
    trk_concat_self_grad(3, dy, dx);
    CHECK(dx[0] == 11 && dx[1] == 22 && dx[2] == 33, "concat grad %g %g %g", (double)dx[0], (double)dx[1],
          (double)dx[2]);
    /* two values concatenated, 2 rows of 1 + 2 elements: each row split at 1; one side not wanted */
    float da[2] = {0}, db[4] = {0};
    trk_concat_grad(2, 1, 2, dy, da, db);
    CHECK(da[0] == 1 && da[1] == 10 && db[0] == 2 && db[1] == 3 && db[2] == 20 && db[3] == 30,
          "concat grad of two: %g %g | %g %g %g %g", (double)da[0], (double)da[1], (double)db[0], (double)db[1],
          (double)db[2], (double)db[3]);
    float db2[4] = {0};
    trk_concat_grad(2, 1, 2, dy, NULL, db2);
    CHECK(!memcmp(db2, db, sizeof db2), "concat grad, da not wanted: db differs");
    /* a residual's two gradients of one value: their sum */
    float acc[3] = {1.5f, -2, 0.25f};
    trk_grad_add(3, (const float[]){0.5f, 2, -1}, acc);
    CHECK(acc[0] == 2 && acc[1] == 0 && acc[2] == -0.75f, "grad add %g %g %g", (double)acc[0], (double)acc[1],
          (double)acc[2]);
    const int64_t ts[] = {0, 1, 2, 10, 1000};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        int64_t t = ts[i];
        /* the attributes are float32: their values, not 0.999 and 0.9 */
        const double a = 0.9f, bt = 0.999f, r = 0.01f;
        double want = t ? r * sqrt(1 - pow(bt, (double)t)) / (1 - pow(a, (double)t)) : r;
        double got = trk_adam_rate(0.01f, 0.9f, 0.999f, t);
        CHECK(fabs(got - want) <= 1e-6 * want, "Adam rate at T = %lld: %.9g, want %.9g", (long long)t, got, want);
    }
}

/* ---- the data-movement backwards ----------------------------------------- */

/* rank 4, and 7 and 8: the Slice and Reduce rows' ranks go to 8 (tflk's TFLK_BIN_RANK) */
enum { RMAX = 8, NMAX = 512 };

static int64_t count(int r, const int32_t *d)
{
    int64_t n = 1;
    for (int k = 0; k < r; k++)
        n *= d[k];
    return n;
}
static void unravel(int r, int64_t i, const int32_t *d, int32_t *e)
{
    for (int k = r - 1; k >= 0; k--) {
        e[k] = (int32_t)(i % d[k]);
        i /= d[k];
    }
}
static int64_t ravel(int r, const int32_t *e, const int32_t *d)
{
    int64_t i = 0;
    for (int k = 0; k < r; k++)
        i = i * d[k] + e[k];
    return i;
}

/* one layer's forward in double: y over ydims from x over xdims */
typedef struct shape_case {
    const char *name;
    int kind; /* 0 Pad, 1 Slice, 2 Transpose, 3 ReduceSum, 4 ReduceMean, 5 Slice with steps */
    int32_t xd[RMAX], yd[RMAX], at[RMAX], perm[RMAX];
    uint32_t axes;
    double value;
    int32_t sp[RMAX]; /* Slice with steps: the steps */
    int rank;
} shape_case;

static int rank_of(const shape_case *c) { return c->rank; }

static void fwd(const shape_case *c, const double *x, double *y)
{
    const int r = rank_of(c);
    int32_t e[RMAX], f[RMAX];
    for (int64_t j = 0; j < count(r, c->yd); j++)
        y[j] = c->kind == 0 ? c->value : 0.0;
    for (int64_t i = 0; i < count(r, c->xd); i++) {
        unravel(r, i, c->xd, e);
        bool inside = true;
        for (int k = 0; k < r; k++) {
            switch (c->kind) {
            case 0: f[k] = e[k] + c->at[k]; break;                      /* Pad: x lands at + before */
            case 1: f[k] = e[k] - c->at[k]; break;                      /* Slice: x at start lands at 0 */
            case 5: /* x at start + j·step lands at j; the elements between, nowhere */
                f[k] = (e[k] - c->at[k]) % c->sp[k] ? -1 : (e[k] - c->at[k]) / c->sp[k];
                break;
            case 2: f[k] = e[c->perm[k]]; break;                        /* y's axis k is x's perm[k] */
            default: f[k] = (c->axes >> k) & 1u ? 0 : e[k]; break;       /* Reduce: keepdims */
            }
            inside = inside && f[k] >= 0 && f[k] < c->yd[k];
        }
        if (!inside)
            continue;
        double v = x[i];
        if (c->kind == 4)
            v /= (double)(count(r, c->xd) / count(r, c->yd));
        if (c->kind == 3 || c->kind == 4)
            y[ravel(r, f, c->yd)] += v;
        else
            y[ravel(r, f, c->yd)] = v;
    }
}

static double lin_loss(const shape_case *c, const double *x, const double *w)
{
    double y[NMAX], l = 0;
    fwd(c, x, y);
    for (int64_t j = 0; j < count(rank_of(c), c->yd); j++)
        l += w[j] * y[j];
    return l;
}

static void test_shape_grads(void)
{
    static const shape_case cases[] = {
        {"Pad", 0, {1, 2, 3, 4}, {1, 3, 5, 7}, {0, 1, 0, 2}, {0}, 0, 0.25, {0}, 4},
        {"Slice", 1, {1, 3, 5, 4}, {1, 2, 2, 3}, {0, 1, 2, 1}, {0}, 0, 0, {0}, 4},
        {"Transpose", 2, {1, 2, 3, 4}, {1, 3, 4, 2}, {0}, {0, 2, 3, 1}, 0, 0, {0}, 4},
        {"ReduceSum", 3, {1, 3, 4, 2}, {1, 1, 4, 1}, {0}, {0}, 0xau, 0, {0}, 4},
        {"ReduceMean", 4, {1, 3, 4, 2}, {1, 1, 4, 1}, {0}, {0}, 0xau, 0, {0}, 4},
        {"Slice steps", 5, {1, 5, 7, 4}, {1, 2, 3, 2}, {0, 1, 0, 1}, {0}, 0, 0, {1, 3, 3, 2}, 4},
        /* ranks 7 and 8 */
        {"Slice rank 8", 1, {1, 2, 3, 2, 2, 3, 2, 2}, {1, 1, 2, 2, 1, 2, 1, 2}, {0, 1, 1, 0, 1, 0, 1, 0}, {0}, 0, 0,
         {0}, 8},
        {"Slice steps rank 8", 5, {1, 2, 3, 2, 2, 3, 2, 2}, {1, 1, 2, 1, 2, 1, 1, 2}, {0, 1, 0, 1, 0, 1, 1, 0}, {0}, 0,
         0, {1, 1, 2, 1, 1, 2, 1, 1}, 8},
        {"ReduceSum rank 8", 3, {1, 2, 3, 2, 2, 3, 2, 2}, {1, 2, 1, 2, 2, 1, 2, 1}, {0}, {0}, 0xa4u, 0, {0}, 8},
        {"ReduceMean rank 8", 4, {1, 2, 3, 2, 2, 3, 2, 2}, {1, 1, 3, 2, 1, 3, 1, 2}, {0}, {0}, 0x52u, 0, {0}, 8},
        {"Transpose rank 7", 2, {1, 2, 3, 2, 2, 1, 3}, {1, 3, 2, 2, 1, 3, 2}, {0}, {0, 6, 4, 1, 5, 2, 3}, 0, 0, {0}, 7},
        {"ReduceMean rank 7", 4, {1, 2, 3, 2, 2, 1, 3}, {1, 2, 1, 2, 1, 1, 3}, {0}, {0}, 0x14u, 0, {0}, 7},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const shape_case *c = &cases[t];
        const int r = rank_of(c);
        const int64_t nx = count(r, c->xd), ny = count(r, c->yd);
        double xd[NMAX], wd[NMAX];
        float dy[NMAX], dx[NMAX];
        for (int64_t i = 0; i < nx; i++)
            xd[i] = urand();
        for (int64_t j = 0; j < ny; j++)
            dy[j] = (float)(wd[j] = (float)urand());
        for (int64_t i = 0; i < nx; i++)
            dx[i] = 1e30f; /* every element must be written */
        switch (c->kind) {
        case 0: trk_pad_grad(r, c->xd, c->yd, c->at, dy, dx); break;
        case 1: trk_slice_grad(r, c->xd, c->yd, c->at, dy, dx); break;
        case 5: trk_slice_step_grad(r, c->xd, c->yd, c->at, c->sp, dy, dx); break;
        case 2: trk_transpose_grad(r, c->xd, c->perm, dy, dx); break;
        default:
            trk_reduce_grad(r, c->xd, c->axes, c->kind == 4 ? (float)ny / (float)nx : 1.0f, dy, dx);
            break;
        }
        double worst = 0;
        for (int64_t i = 0; i < nx; i++) {
            const double h = 1e-3, s = xd[i];
            xd[i] = s + h;
            double lp = lin_loss(c, xd, wd);
            xd[i] = s - h;
            double lm = lin_loss(c, xd, wd);
            xd[i] = s;
            double fd = (lp - lm) / (2 * h), e = fabs(dx[i] - fd);
            worst = fmax(worst, e);
            CHECK(e <= 1e-6, "%s: dx[%lld] = %.9g, finite differences %.9g", c->name, (long long)i, (double)dx[i],
                  fd);
        }
        printf("%s backward: %lld values, worst absolute error %.1e against finite differences\n", c->name,
               (long long)nx, worst);
    }
}

static double elt(int op, int c_first, double x, double c)
{
    double a = c_first ? c : x, b = c_first ? x : c;
    return op == TFLK_ADD ? a + b : op == TFLK_SUB ? a - b : op == TFLK_MUL ? a * b : a / b;
}

static void test_eltwise_grad(void)
{
    enum { N = 12 };
    static const struct {
        int op, c_first;
        const char *name;
    } cases[] = {{TFLK_ADD, 0, "Add"}, {TFLK_SUB, 0, "Sub x - c"}, {TFLK_SUB, 1, "Sub c - x"},
                 {TFLK_MUL, 0, "Mul"}, {TFLK_DIV, 0, "Div x / c"}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        float x[N], c[N], dy[N], dx[N], dc[N], dxi[N];
        double w[N];
        for (int i = 0; i < N; i++) {
            x[i] = (float)urand();
            c[i] = (float)(1.5 + 0.5 * urand()); /* away from 0: Div's divisor */
            dy[i] = (float)(w[i] = (float)urand());
        }
        trk_eltwise_grad(cases[t].op, cases[t].c_first, N, dy, x, c, dx, cases[t].op == TFLK_DIV ? NULL : dc);
        double worst = 0;
        for (int i = 0; i < N; i++) {
            /* L = Σ w·f: element i's derivatives are w_i·∂f/∂x_i and w_i·∂f/∂c_i */
            const double h = 1e-4;
            double fx = w[i] * (elt(cases[t].op, cases[t].c_first, x[i] + h, c[i]) -
                                elt(cases[t].op, cases[t].c_first, x[i] - h, c[i])) / (2 * h);
            double fc = w[i] * (elt(cases[t].op, cases[t].c_first, x[i], c[i] + h) -
                                elt(cases[t].op, cases[t].c_first, x[i], c[i] - h)) / (2 * h);
            double ex = fabs(dx[i] - fx), ec = cases[t].op == TFLK_DIV ? 0 : fabs(dc[i] - fc);
            worst = fmax(worst, fmax(ex, ec));
            CHECK(ex <= 1e-6, "%s: dx[%d] = %.9g, finite differences %.9g", cases[t].name, i, (double)dx[i], fx);
            CHECK(ec <= 1e-6, "%s: dc[%d] = %.9g, finite differences %.9g", cases[t].name, i, (double)dc[i], fc);
        }
        /* dx over dy itself (the packages' in-place call): the same values */
        memcpy(dxi, dy, sizeof dxi);
        trk_eltwise_grad(cases[t].op, cases[t].c_first, N, dxi, x, c, dxi, NULL);
        CHECK(!memcmp(dxi, dx, sizeof dxi), "%s: dx in place differs", cases[t].name);
        printf("%s backward: worst absolute error %.1e against finite differences\n", cases[t].name, worst);
    }
}

static void test_div_grad(void)
{
    enum { N = 12 };
    float a[N], b[N], y[N], dy[N], da[N], db[N], t[N];
    double w[N], worst = 0;
    for (int i = 0; i < N; i++) {
        a[i] = (float)urand();
        b[i] = (float)(1.5 + 0.5 * urand()); /* away from 0 */
        y[i] = a[i] / b[i];                  /* the forward's quotient, as tflk_binary_f32 rounds it */
        dy[i] = (float)(w[i] = (float)urand());
    }
    trk_div_grad(N, dy, y, b, da, db);
    for (int i = 0; i < N; i++) {
        const double h = 1e-4;
        double fa = w[i] * ((a[i] + h) / (double)b[i] - (a[i] - h) / (double)b[i]) / (2 * h);
        double fb = w[i] * (a[i] / (b[i] + h) - a[i] / (b[i] - h)) / (2 * h);
        double ea = fabs(da[i] - fa), eb = fabs(db[i] - fb);
        worst = fmax(worst, fmax(ea, eb));
        CHECK(ea <= 1e-6, "Div a / b: da[%d] = %.9g, finite differences %.9g", i, (double)da[i], fa);
        CHECK(eb <= 1e-6, "Div a / b: db[%d] = %.9g, finite differences %.9g", i, (double)db[i], fb);
        /* the host's Mul(dY, Y) → Div(·, B) → Neg, each rounded to float */
        volatile float m = dy[i] * y[i];
        volatile float q = m / b[i];
        CHECK(db[i] == -q, "Div a / b: db[%d] = %a, the host's operations give %a", i, (double)db[i], (double)-q);
    }
    /* the packages' in-place calls: da over dy (the input the dividend), then db over dy (the input the divisor) */
    memcpy(t, dy, sizeof t);
    trk_div_grad(N, t, y, b, t, NULL);
    CHECK(!memcmp(t, da, sizeof t), "Div: da in place differs");
    memcpy(t, dy, sizeof t);
    trk_div_grad(N, t, y, b, NULL, t);
    CHECK(!memcmp(t, db, sizeof t), "Div: db in place differs");
    printf("Div of two activations backward: worst absolute error %.1e against finite differences\n", worst);
}

/* element i of y (ydims) read from operand dims at its broadcast index */
static int64_t bcast_at(int r, int64_t i, const int32_t *yd, const int32_t *d)
{
    int32_t e[RMAX];
    unravel(r, i, yd, e);
    for (int k = 0; k < r; k++)
        e[k] = d[k] == 1 ? 0 : e[k];
    return ravel(r, e, d);
}

static double div_loss(int r, const int32_t *yd, const int32_t *ad, const int32_t *bd, const double *a,
                       const double *b, const double *w)
{
    double l = 0;
    for (int64_t i = 0; i < count(r, yd); i++)
        l += w[i] * (a[bcast_at(r, i, yd, ad)] / b[bcast_at(r, i, yd, bd)]);
    return l;
}

/* y = a / b broadcast: dL/da and dL/db of L = Σ w·(a / b) by central
 * differences in double, and bit for bit the host graph's float
 * operations, Div(dy, b) then ReduceToShape (the sum in dy's order from 0),
 * Mul(dy, y), Div, Neg then ReduceToShape */
static void test_div_bcast_grad(void)
{
    static const struct {
        const char *name;
        int r;
        int32_t yd[RMAX], ad[RMAX], bd[RMAX];
    } cases[] = {
        {"both stretched", 4, {1, 3, 2, 4}, {1, 3, 1, 4}, {1, 1, 2, 4}},
        {"divisor stretched", 4, {1, 2, 3, 2}, {1, 2, 3, 2}, {1, 2, 1, 1}},
        {"dividend stretched", 4, {1, 2, 3, 2}, {1, 1, 3, 1}, {1, 2, 3, 2}},
        {"rank 2", 2, {1, 5}, {1, 1}, {1, 5}},
        {"rank 8", 8, {1, 2, 1, 2, 3, 1, 2, 2}, {1, 2, 1, 1, 3, 1, 1, 2}, {1, 1, 1, 2, 1, 1, 2, 2}},
        /* two ranks as the packages pass them: the lower-ranked operand ([1, 4] by [1, 2, 3, 4]; [1, 3, 1]
         * by [1, 2, 1, 4]) at the output's rank after leading 1s, numpy's alignment from the last axis */
        {"ranks 4 and 2", 4, {1, 2, 3, 4}, {1, 2, 3, 4}, {1, 1, 1, 4}},
        {"ranks 3 and 4", 4, {1, 2, 3, 4}, {1, 1, 3, 1}, {1, 2, 1, 4}},
    };
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        const int r = cases[t].r;
        const int32_t *yd = cases[t].yd, *ad = cases[t].ad, *bd = cases[t].bd;
        const int64_t ny = count(r, yd), na = count(r, ad), nb = count(r, bd);
        float a[NMAX], b[NMAX], y[NMAX], dy[NMAX], da[NMAX], db[NMAX], ra[NMAX], rb[NMAX];
        double ax[NMAX], bx[NMAX], w[NMAX], worst = 0;
        for (int64_t i = 0; i < na; i++)
            ax[i] = a[i] = (float)urand();
        for (int64_t i = 0; i < nb; i++)
            bx[i] = b[i] = (float)(1.5 + 0.5 * urand()); /* away from 0 */
        for (int64_t i = 0; i < ny; i++) {
            y[i] = a[bcast_at(r, i, yd, ad)] / b[bcast_at(r, i, yd, bd)]; /* the forward's float quotient */
            dy[i] = (float)(w[i] = (float)urand());
        }
        for (int64_t i = 0; i < NMAX; i++)
            da[i] = db[i] = 1e30f; /* every element must be written */
        trk_div_bcast_grad(r, yd, ad, bd, dy, y, b, da, db);
        const double h = 1e-4;
        for (int64_t i = 0; i < na; i++) {
            const double s = ax[i];
            ax[i] = s + h;
            double lp = div_loss(r, yd, ad, bd, ax, bx, w);
            ax[i] = s - h;
            double lm = div_loss(r, yd, ad, bd, ax, bx, w);
            ax[i] = s;
            double fd = (lp - lm) / (2 * h), e = fabs(da[i] - fd);
            worst = fmax(worst, e);
            CHECK(e <= 1e-6, "Div %s: da[%lld] = %.9g, finite differences %.9g", cases[t].name, (long long)i,
                  (double)da[i], fd);
        }
        for (int64_t i = 0; i < nb; i++) {
            const double s = bx[i];
            bx[i] = s + h;
            double lp = div_loss(r, yd, ad, bd, ax, bx, w);
            bx[i] = s - h;
            double lm = div_loss(r, yd, ad, bd, ax, bx, w);
            bx[i] = s;
            double fd = (lp - lm) / (2 * h), e = fabs(db[i] - fd);
            worst = fmax(worst, e);
            CHECK(e <= 1e-6, "Div %s: db[%lld] = %.9g, finite differences %.9g", cases[t].name, (long long)i,
                  (double)db[i], fd);
        }
        /* the host's nodes one by one, each rounded to float, the sums in dy's order */
        for (int64_t i = 0; i < na; i++)
            ra[i] = 0.0f;
        for (int64_t i = 0; i < nb; i++)
            rb[i] = 0.0f;
        for (int64_t i = 0; i < ny; i++) {
            const int64_t ai = bcast_at(r, i, yd, ad), bi = bcast_at(r, i, yd, bd);
            volatile float q = dy[i] / b[bi], m = dy[i] * y[i];
            volatile float mq = m / b[bi], n = -mq;
            ra[ai] = ra[ai] + q;
            rb[bi] = rb[bi] + n;
        }
        CHECK(!memcmp(da, ra, (size_t)na * sizeof *da), "Div %s: da is not the host's Div then ReduceToShape",
              cases[t].name);
        CHECK(!memcmp(db, rb, (size_t)nb * sizeof *db), "Div %s: db is not the host's Mul, Div, Neg then "
              "ReduceToShape", cases[t].name);
        /* either one alone: the same values */
        float only[NMAX];
        trk_div_bcast_grad(r, yd, ad, bd, dy, y, b, only, NULL);
        CHECK(!memcmp(only, da, (size_t)na * sizeof *da), "Div %s: da alone differs", cases[t].name);
        trk_div_bcast_grad(r, yd, ad, bd, dy, y, b, NULL, only);
        CHECK(!memcmp(only, db, (size_t)nb * sizeof *db), "Div %s: db alone differs", cases[t].name);
        printf("Div broadcast (%s) backward: %lld + %lld values, worst absolute error %.1e against finite "
               "differences\n", cases[t].name, (long long)na, (long long)nb, worst);
    }
}

/* trk_concat_in_place against the out-of-place Concat (the operands' rows
 * interleaved from two buffers), bit for bit, the floats after the output
 * untouched: outer rows of 1 (the channel axis at batch 1) and more (a
 * later axis), the input's rows shorter, longer and as long as the other's,
 * the other first and second */
static void test_concat_in_place(void)
{
    static const struct {
        int64_t outer, ra, rb;
    } cases[] = {{1, 1568, 1568}, {1, 5, 3}, {4, 3, 5}, {4, 5, 3}, {28, 28, 28}, {7, 1, 9}, {7, 9, 1}, {3, 4, 4}};
    enum { GUARD = 8 };
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        const int64_t outer = cases[t].outer, ra = cases[t].ra, rb = cases[t].rb, n = outer * (ra + rb);
        float *a = malloc((size_t)(outer * ra) * sizeof *a), *b = malloc((size_t)(outer * rb) * sizeof *b);
        float *want = malloc((size_t)n * sizeof *want), *buf = malloc((size_t)(n + GUARD) * sizeof *buf);
        REQUIRE(a && b && want && buf, "out of memory");
        for (int64_t i = 0; i < outer * ra; i++)
            a[i] = (float)urand();
        for (int64_t i = 0; i < outer * rb; i++)
            b[i] = (float)urand();
        for (int b_first = 0; b_first < 2; b_first++) {
            for (int64_t o = 0; o < outer; o++)
                for (int64_t e = 0; e < ra + rb; e++) {
                    const bool in_b = b_first ? e < rb : e >= ra;
                    want[o * (ra + rb) + e] = in_b ? b[o * rb + (b_first ? e : e - ra)] : a[o * ra + (b_first ? e - rb : e)];
                }
            for (int64_t i = 0; i < n + GUARD; i++)
                buf[i] = i < outer * ra ? a[i] : NAN; /* the input, then what the output's block holds */
            trk_concat_in_place(outer, ra, rb, b_first, b, buf);
            CHECK(!memcmp(buf, want, (size_t)n * sizeof *buf),
                  "concat in place %lld x (%lld + %lld), other %s: not the out-of-place Concat", (long long)outer,
                  (long long)ra, (long long)rb, b_first ? "first" : "second");
            bool guards = true;
            for (int64_t i = n; i < n + GUARD; i++)
                guards &= isnan(buf[i]);
            CHECK(guards, "concat in place %lld x (%lld + %lld): wrote past its output", (long long)outer,
                  (long long)ra, (long long)rb);
        }
        free(a);
        free(b);
        free(want);
        free(buf);
    }
    printf("Concat of two values in place: %zu shapes, both orders, the out-of-place bits\n",
           sizeof cases / sizeof *cases);
}

/* the in-place depthwise Conv against tflk_conv_f32 out of place, channel by
 * channel as the packages ran it: c, h, w, kh, kw, pt, pl (pb = kh − 1 − pt) */
static void test_dw_conv_in_place(void)
{
    static const int32_t cases[][7] = {
        {1, 1, 1, 3, 3, 1, 1}, {2, 2, 2, 3, 3, 1, 1}, {3, 1, 5, 3, 3, 1, 1}, {1, 5, 1, 3, 3, 1, 1},
        {2, 2, 7, 3, 3, 2, 0}, {3, 6, 5, 3, 3, 0, 2}, {1, 4, 4, 1, 1, 0, 0}, {4, 5, 6, 5, 5, 2, 2},
        {2, 6, 3, 5, 3, 4, 1}, {1, 3, 3, 2, 2, 1, 0}, {2, 1, 2, 3, 3, 2, 2}, {8, 28, 28, 3, 3, 1, 1},
    };
    enum { GUARD = 8 };
    int checked = 0;
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        const int32_t c = cases[t][0], h = cases[t][1], w = cases[t][2], kh = cases[t][3], kw = cases[t][4],
                      pt = cases[t][5], pl = cases[t][6];
        const size_t plane = (size_t)h * w, nline = (size_t)(pt + 1) * w;
        float *x = malloc(c * plane * sizeof *x), *ref = malloc(c * plane * sizeof *ref),
              *wt = malloc((size_t)c * kh * kw * sizeof *wt), *line = malloc((nline + GUARD) * sizeof *line);
        REQUIRE(x && ref && wt && line, "out of memory");
        for (size_t i = 0; i < c * plane; i++)
            x[i] = (float)urand();
        for (size_t i = 0; i < (size_t)c * kh * kw; i++)
            wt[i] = (float)urand();
        for (size_t i = 0; i < nline + GUARD; i++)
            line[i] = NAN; /* what the ring holds before is never read */
        const tflk_conv cv = {.n = 1, .ih = h, .iw = w, .ic = 1, .oh = h, .ow = w, .oc = 1, .kh = kh, .kw = kw,
                              .fic = 1, .depthwise = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .pt = pt, .pl = pl,
                              .act = {0, -INFINITY, INFINITY}};
        for (int32_t ch = 0; ch < c; ch++)
            tflk_conv_f32(&cv, x + ch * plane, wt + (size_t)ch * kh * kw, NULL, ref + ch * plane);
        trk_dw_conv_in_place(c, h, w, kh, kw, pt, pl, wt, x, line);
        CHECK(memcmp(x, ref, c * plane * sizeof *x) == 0,
                      "case %zu (c %d, %dx%d, kernel %dx%d, pads %d %d): not tflk_conv_f32's bits", t, (int)c,
                      (int)h, (int)w, (int)kh, (int)kw, (int)pt, (int)pl);
        for (size_t i = nline; i < nline + GUARD; i++)
            CHECK(isnan(line[i]), "case %zu: written past the ring's (pt + 1)·w floats", t);
        checked++;
        free(x), free(ref), free(wt), free(line);
    }
    CHECK(checked == 12, "%d cases", checked);
}

/* the in-place depthwise Conv of a smaller output (strides 2 and 3, or stride
 * 1 without the pads that keep the shape) against tflk_conv_f32 out of
 * place, channel by channel: c, ih, iw, kh, kw, sh, sw, pt, pl, pb, pr */
static void test_dw_conv_s_in_place(void)
{
    static const int32_t cases[][11] = {
        {2, 28, 28, 3, 3, 2, 2, 1, 1, 1, 1}, {3, 7, 9, 3, 3, 2, 2, 1, 1, 1, 1},  {2, 28, 28, 5, 5, 2, 2, 2, 2, 2, 2},
        {4, 8, 8, 3, 3, 2, 2, 0, 0, 0, 0},   {1, 1, 5, 3, 3, 2, 2, 1, 1, 1, 1},  {2, 6, 1, 3, 1, 2, 1, 1, 0, 1, 0},
        {2, 10, 10, 3, 3, 1, 1, 0, 0, 0, 0}, {3, 9, 9, 3, 3, 3, 3, 1, 1, 1, 1},  {2, 12, 12, 7, 7, 2, 2, 3, 3, 3, 3},
        {8, 28, 28, 3, 3, 2, 2, 1, 1, 0, 0}, {2, 6, 6, 3, 3, 2, 1, 1, 1, 1, 1},  {1, 5, 5, 5, 5, 2, 2, 4, 4, 0, 0},
    };
    enum { GUARD = 8 };
    int checked = 0, ringed = 0;
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        const int32_t *q = cases[t];
        const int32_t c = q[0], ih = q[1], iw = q[2], kh = q[3], kw = q[4], sh = q[5], sw = q[6], pt = q[7], pl = q[8];
        const int32_t oh = (ih + pt + q[9] - kh) / sh + 1, ow = (iw + pl + q[10] - kw) / sw + 1;
        const size_t ip = (size_t)ih * iw, op = (size_t)oh * ow;
        REQUIRE(op <= ip && oh >= 1 && ow >= 1, "case %zu: the output plane must fit the input's", t);
        const int32_t nring = trk_dw_conv_ring_rows(c, ih, iw, sh, pt, oh, ow);
        const size_t nr = (size_t)nring * iw + ow;
        float *x = malloc(c * ip * sizeof *x), *ref = malloc(c * op * sizeof *ref),
              *wt = malloc((size_t)c * kh * kw * sizeof *wt), *ring = malloc((nr + GUARD) * sizeof *ring);
        REQUIRE(x && ref && wt && ring, "out of memory");
        for (size_t i = 0; i < c * ip; i++)
            x[i] = (float)urand();
        for (size_t i = 0; i < (size_t)c * kh * kw; i++)
            wt[i] = (float)urand();
        for (size_t i = 0; i < nr + GUARD; i++)
            ring[i] = NAN; /* what the ring holds before is never read */
        const tflk_conv cv = {.n = 1, .ih = ih, .iw = iw, .ic = 1, .oh = oh, .ow = ow, .oc = 1, .kh = kh, .kw = kw,
                              .fic = 1, .depthwise = 1, .sh = sh, .sw = sw, .dh = 1, .dw = 1, .pt = pt, .pl = pl,
                              .act = {0, -INFINITY, INFINITY}};
        for (int32_t ch = 0; ch < c; ch++)
            tflk_conv_f32(&cv, x + ch * ip, wt + (size_t)ch * kh * kw, NULL, ref + ch * op);
        trk_dw_conv_s_in_place(c, ih, iw, kh, kw, sh, sw, pt, pl, oh, ow, wt, x, ring, nring);
        CHECK(memcmp(x, ref, c * op * sizeof *x) == 0,
              "case %zu (c %d, %dx%d, kernel %dx%d, strides %d %d, pads %d %d): not tflk_conv_f32's bits", t, (int)c,
              (int)ih, (int)iw, (int)kh, (int)kw, (int)sh, (int)sw, (int)pt, (int)pl);
        for (size_t i = nr; i < nr + GUARD; i++)
            CHECK(isnan(ring[i]), "case %zu: written past the ring's nring·iw + ow floats", t);
        printf("case %zu: %d channels %dx%d -> %dx%d (kernel %dx%d, strides %d %d): ring %d rows + a line, %zu "
               "floats\n", t, (int)c, (int)ih, (int)iw, (int)oh, (int)ow, (int)kh, (int)kw, (int)sh, (int)sw,
               (int)nring, nr);
        checked++;
        ringed += nring > 0;
        free(x), free(ref), free(wt), free(ring);
    }
    CHECK(checked == 12, "%d cases", checked);
    CHECK(ringed > 0, "no case keeps an input row in the ring");
}

int main(void)
{
    RUN_TEST(test_fc);
    RUN_TEST(test_concat_adam);
    RUN_TEST(test_shape_grads);
    RUN_TEST(test_eltwise_grad);
    RUN_TEST(test_div_grad);
    RUN_TEST(test_div_bcast_grad);
    RUN_TEST(test_concat_in_place);
    RUN_TEST(test_dw_conv_in_place);
    RUN_TEST(test_dw_conv_s_in_place);
    return SY_TEST_MAIN_RESULT();
}
