/*
 * The backward operators of the switchyard.train domain against central
 * finite differences of their forward operators (cpu_ref kernels of the
 * default-domain families):
 *
 *   for a random cotangent dY and L(x) = sum_j dY_j * F(x)_j,
 *   dL/dx_i ~ (L(x + h e_i) - L(x - h e_i)) / 2h     (sums in double)
 *
 * must match the backward op's dX. Cases: Conv (grouped, strided, padded,
 * dilated; and the seed's depthwise FP32 form) for dX, dW and dB; MaxPool
 * (strided, padded, distinct values so no window ties move under h); Relu
 * and Abs (inputs away from the kink); Add with numpy broadcasting through
 * ReduceToShape for both operands; Concat through ConcatGrad; a rank-6
 * Slice with steps through SliceGrad (and two elements by hand), and one
 * of negative steps (elements by hand);
 * SoftmaxCrossEntropyLoss (mean and sum)
 * and the mean squared error. Then the refusals: a label outside the
 * classes, a group that does not fit.
 */
#include "pt_onnx.h"
#include "sy_test.h"
#include "switchyard/switchyard.h"

#include <math.h>

static sy_env *env;
static char last_err[2048];

/* Models must outlive their sessions: each one is kept here and released
 * after every session, at the end of main. */
static sy_model *models[64];
static int n_models;

static uint32_t rng = 12345u;
static float frand(void) /* uniform in [-1, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) * (1.0 / 8388608.0) - 1.0);
}

static int64_t numel(int32_t rank, const int64_t *d)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= d[i];
    return n;
}

static sy_session *open_session(pt_model *pm)
{
    uint8_t *buf;
    size_t len;
    pt_model_pack(pm, &buf, &len);
    sy_model *model = NULL;
    sy_session *s = NULL;
    sy_status *st = sy_model_load_buffer(env, buf, len, pm->graph.name, NULL, &model);
    free(buf);
    if (!st)
        st = sy_session_create(env, model, NULL, &s);
    if (model && n_models < (int)(sizeof models / sizeof models[0]))
        models[n_models++] = model;
    else
        sy_model_release(model); /* never reached with a session: the table is sized for every case */
    if (st) {
        snprintf(last_err, sizeof last_err, "%s", sy_status_get_message(st));
        sy_status_free(st);
        return NULL;
    }
    return s;
}

typedef struct in_spec {
    const char *name;
    sy_dtype dt;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    void *data;
} in_spec;

static sy_status *feed(sy_session *s, const in_spec *ins, int n)
{
    for (int i = 0; i < n; i++) {
        sy_tensor t = {.struct_size = sizeof t, .dtype = ins[i].dt, .rank = ins[i].rank, .data = ins[i].data};
        memcpy(t.dims, ins[i].dims, sizeof ins[i].dims);
        t.nbytes = (size_t)numel(t.rank, t.dims) * (ins[i].dt == SY_DT_INT64 ? 8 : 4);
        sy_status *st = sy_session_set_input(s, ins[i].name, &t, SY_INPUT_COPY);
        if (st)
            return st;
    }
    return sy_session_run(s);
}

/* L = sum dY * output 0, in double */
static double loss_at(sy_session *s, const in_spec *ins, int n, const float *dy)
{
    sy_status *st = feed(s, ins, n);
    const sy_tensor *y = NULL;
    if (!st)
        st = sy_session_get_output(s, 0, &y);
    if (st) {
        fprintf(stderr, "forward run: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return NAN;
    }
    double l = 0;
    for (int64_t j = 0; j < sy_tensor_numel(y); j++)
        l += (double)dy[j] * ((const float *)y->data)[j];
    return l;
}

/* Compares the analytic gradient `g` of forward input `which` with central
 * differences (step h), element by element. */
static void check_fd(const char *what, sy_session *fwd, in_spec *ins, int n, int which, const float *dy,
                     const float *g, float h, double tol)
{
    float *x = ins[which].data;
    int64_t len = numel(ins[which].rank, ins[which].dims);
    double worst = 0;
    for (int64_t i = 0; i < len; i++) {
        float keep = x[i];
        x[i] = keep + h;
        double lp = loss_at(fwd, ins, n, dy);
        x[i] = keep - h;
        double lm = loss_at(fwd, ins, n, dy);
        x[i] = keep;
        double num = (lp - lm) / (2.0 * (double)h);
        double err = fabs(num - (double)g[i]) / fmax(1.0, fabs(num));
        worst = fmax(worst, err);
        CHECK(err <= tol, "%s d%s[%lld]: analytic %.7g, finite differences %.7g", what, ins[which].name,
              (long long)i, (double)g[i], num);
    }
    printf("  %-34s d%-6s %4lld elements, worst relative error %.2e\n", what, ins[which].name, (long long)len,
           worst);
}

/* Runs a backward model and copies its outputs into bufs. */
static bool run_backward(pt_model *pm, const in_spec *ins, int n, int n_out, float **bufs)
{
    sy_session *s = open_session(pm);
    pt_model_free(pm);
    if (!s) {
        CHECK(0, "backward model: %s", last_err);
        return false;
    }
    sy_status *st = feed(s, ins, n);
    for (int k = 0; !st && k < n_out; k++) {
        const sy_tensor *t = NULL;
        st = sy_session_get_output(s, (uint32_t)k, &t);
        if (!st)
            memcpy(bufs[k], t->data, t->nbytes);
    }
    if (st) {
        CHECK(0, "backward run: %s", sy_status_get_message(st));
        sy_status_free(st);
    }
    sy_session_release(s);
    return !st;
}

static void fill(float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        v[i] = frand();
}

/* ---- Conv ------------------------------------------------------------------ */

static void conv_case(const char *what, const int64_t xd[4], const int64_t wd[4], int64_t group, const int64_t s[2],
                      const int64_t p[4], const int64_t d[2])
{
    int64_t oh = (xd[2] + p[0] + p[2] - d[0] * (wd[2] - 1) - 1) / s[0] + 1;
    int64_t ow = (xd[3] + p[1] + p[3] - d[1] * (wd[3] - 1) - 1) / s[1] + 1;
    int64_t yd[4] = {xd[0], wd[0], oh, ow}, bd[1] = {wd[0]};
    int64_t nx = numel(4, xd), nw = numel(4, wd), ny = numel(4, yd);
    float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *b = malloc((size_t)wd[0] * 4);
    float *dy = malloc((size_t)ny * 4), *dx = malloc((size_t)nx * 4), *dw = malloc((size_t)nw * 4),
          *db = malloc((size_t)wd[0] * 4);
    fill(x, nx), fill(w, nw), fill(b, wd[0]), fill(dy, ny);

    pt_model *f = pt_model_new("conv_fwd");
    pt_input(f, "X", PT_F32, 4, xd);
    pt_input(f, "W", PT_F32, 4, wd);
    pt_input(f, "B", PT_F32, 1, bd);
    pt_node(f, "Conv", "conv", (const char *[]){"X", "W", "B", NULL}, (const char *[]){"Y", NULL});
    pt_attr_int(f, "group", group);
    pt_attr_ints(f, "strides", 2, s);
    pt_attr_ints(f, "pads", 4, p);
    pt_attr_ints(f, "dilations", 2, d);
    pt_output(f, "Y", PT_F32, 4, yd);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "%s forward: %s", what, last_err);

    pt_model *bm = pt_model_new("conv_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dY", PT_F32, 4, yd);
    pt_input(bm, "X", PT_F32, 4, xd);
    pt_input(bm, "W", PT_F32, 4, wd);
    pt_node(bm, "ConvGrad", "g", (const char *[]){"dY", "X", "W", NULL}, (const char *[]){"dX", "dW", "dB", NULL});
    pt_domain(bm, "switchyard.train");
    pt_attr_int(bm, "group", group);
    pt_attr_ints(bm, "strides", 2, s);
    pt_attr_ints(bm, "pads", 4, p);
    pt_attr_ints(bm, "dilations", 2, d);
    pt_output(bm, "dX", PT_F32, 4, xd);
    pt_output(bm, "dW", PT_F32, 4, wd);
    pt_output(bm, "dB", PT_F32, 1, bd);
    in_spec bin[3] = {{"dY", SY_DT_FLOAT32, 4, {yd[0], yd[1], yd[2], yd[3]}, dy},
                      {"X", SY_DT_FLOAT32, 4, {xd[0], xd[1], xd[2], xd[3]}, x},
                      {"W", SY_DT_FLOAT32, 4, {wd[0], wd[1], wd[2], wd[3]}, w}};
    if (run_backward(bm, bin, 3, 3, (float *[]){dx, dw, db})) {
        in_spec fin[3] = {bin[1], bin[2], {"B", SY_DT_FLOAT32, 1, {bd[0]}, b}};
        /* Conv is linear in each operand: the differences are exact up to rounding */
        check_fd(what, fs, fin, 3, 0, dy, dx, 0.05f, 1e-3);
        check_fd(what, fs, fin, 3, 1, dy, dw, 0.05f, 1e-3);
        check_fd(what, fs, fin, 3, 2, dy, db, 0.05f, 1e-3);
    }
    /* the first Conv of a net: nobody needs dX, so autodiff names it "";
     * the schema lets ConvGrad omit it (SY_SCHEMA_OPTIONAL_OUTPUTS) */
    pt_model *om = pt_model_new("conv_bwd_no_dx");
    pt_opset(om, "switchyard.train", 1);
    pt_input(om, "dY", PT_F32, 4, yd);
    pt_input(om, "X", PT_F32, 4, xd);
    pt_input(om, "W", PT_F32, 4, wd);
    pt_node(om, "ConvGrad", "g", (const char *[]){"dY", "X", "W", NULL}, (const char *[]){"", "dW", NULL});
    pt_domain(om, "switchyard.train");
    pt_attr_int(om, "group", group);
    pt_attr_ints(om, "strides", 2, s);
    pt_attr_ints(om, "pads", 4, p);
    pt_attr_ints(om, "dilations", 2, d);
    pt_output(om, "dW", PT_F32, 4, wd);
    memset(dw, 0, (size_t)nw * 4);
    if (run_backward(om, bin, 3, 1, (float *[]){dw})) {
        in_spec fin[3] = {bin[1], bin[2], {"B", SY_DT_FLOAT32, 1, {bd[0]}, b}};
        check_fd(what, fs, fin, 3, 1, dy, dw, 0.05f, 1e-3);
    }
    sy_session_release(fs);
    free(x), free(w), free(b), free(dy), free(dx), free(dw), free(db);
}

static void test_conv(void)
{
    conv_case("Conv group 2, stride 2x1, dil 1x2", (int64_t[]){2, 4, 6, 5}, (int64_t[]){4, 2, 3, 3}, 2,
              (int64_t[]){2, 1}, (int64_t[]){1, 0, 1, 2}, (int64_t[]){1, 2});
    /* seed 001 FP32 training Conv: depthwise-equivalent, stride 1, dilation 1 */
    conv_case("Conv depthwise 3x3 (seed FP32 row)", (int64_t[]){1, 3, 5, 5}, (int64_t[]){3, 1, 3, 3}, 3,
              (int64_t[]){1, 1}, (int64_t[]){1, 1, 1, 1}, (int64_t[]){1, 1});
    /* seed 001 QAS-INT8 Conv: 3x3, group 1 (its float gradient) */
    conv_case("Conv 3x3 group 1 (seed QAS row)", (int64_t[]){1, 2, 4, 4}, (int64_t[]){3, 2, 3, 3}, 1,
              (int64_t[]){1, 1}, (int64_t[]){0, 0, 0, 0}, (int64_t[]){1, 1});
}

/* ---- MaxPool, Relu, Abs ----------------------------------------------------- */

/* A single-input forward op and its gradient op G(dY, X). */
static void unary_case(const char *what, const char *fop, const char *gop, int32_t rank, const int64_t *xd,
                       const int64_t *yd, const float *xv, void (*attrs)(pt_model *), float h)
{
    int64_t nx = numel(rank, xd), ny = numel(rank, yd);
    float *x = malloc((size_t)nx * 4), *dy = malloc((size_t)ny * 4), *dx = malloc((size_t)nx * 4);
    memcpy(x, xv, (size_t)nx * 4);
    fill(dy, ny);
    pt_model *f = pt_model_new("fwd");
    pt_input(f, "X", PT_F32, rank, xd);
    pt_node(f, fop, "f", (const char *[]){"X", NULL}, (const char *[]){"Y", NULL});
    if (attrs)
        attrs(f);
    pt_output(f, "Y", PT_F32, rank, yd);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "%s forward: %s", what, last_err);
    pt_model *bm = pt_model_new("bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dY", PT_F32, rank, yd);
    pt_input(bm, "X", PT_F32, rank, xd);
    pt_node(bm, gop, "g", (const char *[]){"dY", "X", NULL}, (const char *[]){"dX", NULL});
    pt_domain(bm, "switchyard.train");
    if (attrs)
        attrs(bm);
    pt_output(bm, "dX", PT_F32, rank, xd);
    in_spec bin[2] = {{"dY", SY_DT_FLOAT32, rank, {0}, dy}, {"X", SY_DT_FLOAT32, rank, {0}, x}};
    memcpy(bin[0].dims, yd, (size_t)rank * 8);
    memcpy(bin[1].dims, xd, (size_t)rank * 8);
    if (run_backward(bm, bin, 2, 1, (float *[]){dx}))
        check_fd(what, fs, &bin[1], 1, 0, dy, dx, h, 1e-3);
    sy_session_release(fs);
    free(x), free(dy), free(dx);
}

static void pool_attrs(pt_model *m)
{
    pt_attr_ints(m, "kernel_shape", 2, (int64_t[]){3, 3});
    pt_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
    pt_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
}

static void test_pool_relu_abs(void)
{
    /* distinct values 0.1 apart (a shuffled ramp): a step of 1e-2 moves no maximum */
    float xv[2 * 5 * 5];
    for (int i = 0; i < 50; i++)
        xv[i] = 0.1f * (float)((i * 37) % 50) - 2.5f;
    unary_case("MaxPool 3x3 stride 2 pads 1", "MaxPool", "MaxPoolGrad", 4, (int64_t[]){1, 2, 5, 5},
               (int64_t[]){1, 2, 3, 3}, xv, pool_attrs, 1e-2f);
    /* |x| >= 0.05: no kink within the step */
    float rv[24];
    for (int i = 0; i < 24; i++)
        rv[i] = (i % 2 ? -1.0f : 1.0f) * (0.05f + 0.1f * (float)i);
    unary_case("Relu", "Relu", "ReluGrad", 2, (int64_t[]){4, 6}, (int64_t[]){4, 6}, rv, NULL, 1e-2f);
    unary_case("Abs", "Abs", "AbsGrad", 2, (int64_t[]){4, 6}, (int64_t[]){4, 6}, rv, NULL, 1e-2f);
}

/* ---- broadcasting Add through ReduceToShape --------------------------------- */

static void test_broadcast(void)
{
    int64_t ad[3] = {2, 1, 3}, bd[2] = {4, 1}, yd[3] = {2, 4, 3};
    float a[6], b[4], dy[24], da[6], db[4];
    fill(a, 6), fill(b, 4), fill(dy, 24);
    pt_model *f = pt_model_new("add_fwd");
    pt_input(f, "A", PT_F32, 3, ad);
    pt_input(f, "B", PT_F32, 2, bd);
    pt_node(f, "Add", "add", (const char *[]){"A", "B", NULL}, (const char *[]){"Y", NULL});
    pt_output(f, "Y", PT_F32, 3, yd);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "Add forward: %s", last_err);
    /* dA = ReduceToShape(dY, shape(A)), dB = ReduceToShape(dY, shape(B)) */
    pt_model *bm = pt_model_new("add_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dY", PT_F32, 3, yd);
    pt_init_i64(bm, "sa", 1, (int64_t[]){3}, ad);
    pt_init_i64(bm, "sb", 1, (int64_t[]){2}, bd);
    pt_node(bm, "ReduceToShape", "ra", (const char *[]){"dY", "sa", NULL}, (const char *[]){"dA", NULL});
    pt_domain(bm, "switchyard.train");
    pt_node(bm, "ReduceToShape", "rb", (const char *[]){"dY", "sb", NULL}, (const char *[]){"dB", NULL});
    pt_domain(bm, "switchyard.train");
    pt_output(bm, "dA", PT_F32, 3, ad);
    pt_output(bm, "dB", PT_F32, 2, bd);
    in_spec bin[1] = {{"dY", SY_DT_FLOAT32, 3, {2, 4, 3}, dy}};
    if (run_backward(bm, bin, 1, 2, (float *[]){da, db})) {
        in_spec fin[2] = {{"A", SY_DT_FLOAT32, 3, {2, 1, 3}, a}, {"B", SY_DT_FLOAT32, 2, {4, 1}, b}};
        check_fd("Add [2,1,3] + [4,1]", fs, fin, 2, 0, dy, da, 0.05f, 1e-3);
        check_fd("Add [2,1,3] + [4,1]", fs, fin, 2, 1, dy, db, 0.05f, 1e-3);
        /* hand-worked: dB[1] = sum of dY[:, 1, :] */
        double s = 0;
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 3; k++)
                s += dy[i * 12 + 1 * 3 + k];
        CHECK(fabs(s - db[1]) < 1e-5, "dB[1] %.7g, sum of dY[:,1,:] %.7g", (double)db[1], s);
    }
    sy_session_release(fs);
}

/* ---- Div of two ranks ------------------------------------------------------ */

/* y = a / b with a and b of different ranks (numpy's alignment from the last
 * axis: the lower-ranked operand's leading axes are broadcast), through the
 * nodes train_autodiff.c's Div rule writes: dA = ReduceToShape(Div(dY, B),
 * Shape(A)), dB = ReduceToShape(Neg(Div(Mul(dY, Y), B)), Shape(B)). The FP32
 * training packages run the same Div (trk_div_bcast_grad, the lower-ranked
 * operand at the output's rank after leading 1s); here the host's graph
 * against central differences of the forward Div. */
static void div_ranks_case(const char *what, int32_t ra, const int64_t *ad, int32_t rb, const int64_t *bd)
{
    enum { N = 64 };
    const int32_t ry = ra > rb ? ra : rb;
    int64_t yd[SY_MAX_RANK];
    for (int32_t d = 0; d < ry; d++) {
        const int64_t x = d < ry - ra ? 1 : ad[d - (ry - ra)], z = d < ry - rb ? 1 : bd[d - (ry - rb)];
        yd[d] = x > z ? x : z;
    }
    const int64_t na = numel(ra, ad), nb = numel(rb, bd), ny = numel(ry, yd);
    REQUIRE(na <= N && nb <= N && ny <= N, "%s: the buffers hold %d values", what, N);
    float a[N], b[N], y[N], dy[N], da[N], db[N];
    fill(a, na), fill(dy, ny);
    for (int64_t i = 0; i < nb; i++)
        b[i] = 1.5f + 0.5f * frand(); /* away from 0 */
    pt_model *f = pt_model_new("div_fwd");
    pt_input(f, "A", PT_F32, ra, ad);
    pt_input(f, "B", PT_F32, rb, bd);
    pt_node(f, "Div", "div", (const char *[]){"A", "B", NULL}, (const char *[]){"Y", NULL});
    pt_output(f, "Y", PT_F32, ry, yd);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "%s forward: %s", what, last_err);
    in_spec fin[2] = {{"A", SY_DT_FLOAT32, ra, {0}, a}, {"B", SY_DT_FLOAT32, rb, {0}, b}};
    memcpy(fin[0].dims, ad, (size_t)ra * sizeof *ad);
    memcpy(fin[1].dims, bd, (size_t)rb * sizeof *bd);
    sy_status *st = feed(fs, fin, 2);
    const sy_tensor *yt = NULL;
    if (!st)
        st = sy_session_get_output(fs, 0, &yt);
    if (st) {
        CHECK(0, "%s forward run: %s", what, sy_status_get_message(st));
        sy_status_free(st);
        sy_session_release(fs);
        return;
    }
    memcpy(y, yt->data, (size_t)ny * sizeof *y);
    pt_model *bm = pt_model_new("div_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dY", PT_F32, ry, yd);
    pt_input(bm, "Y", PT_F32, ry, yd);
    pt_input(bm, "B", PT_F32, rb, bd);
    pt_init_i64(bm, "sa", 1, (int64_t[]){ra}, ad);
    pt_init_i64(bm, "sb", 1, (int64_t[]){rb}, bd);
    pt_node(bm, "Div", "q", (const char *[]){"dY", "B", NULL}, (const char *[]){"q", NULL});
    pt_node(bm, "ReduceToShape", "ra", (const char *[]){"q", "sa", NULL}, (const char *[]){"dA", NULL});
    pt_domain(bm, "switchyard.train");
    pt_node(bm, "Mul", "m", (const char *[]){"dY", "Y", NULL}, (const char *[]){"m", NULL});
    pt_node(bm, "Div", "mq", (const char *[]){"m", "B", NULL}, (const char *[]){"mq", NULL});
    pt_node(bm, "Neg", "neg", (const char *[]){"mq", NULL}, (const char *[]){"n", NULL});
    pt_node(bm, "ReduceToShape", "rb", (const char *[]){"n", "sb", NULL}, (const char *[]){"dB", NULL});
    pt_domain(bm, "switchyard.train");
    pt_output(bm, "dA", PT_F32, ra, ad);
    pt_output(bm, "dB", PT_F32, rb, bd);
    in_spec bin[3] = {{"dY", SY_DT_FLOAT32, ry, {0}, dy}, {"Y", SY_DT_FLOAT32, ry, {0}, y},
                      {"B", SY_DT_FLOAT32, rb, {0}, b}};
    memcpy(bin[0].dims, yd, (size_t)ry * sizeof *yd);
    memcpy(bin[1].dims, yd, (size_t)ry * sizeof *yd);
    memcpy(bin[2].dims, bd, (size_t)rb * sizeof *bd);
    if (run_backward(bm, bin, 3, 2, (float *[]){da, db})) {
        check_fd(what, fs, fin, 2, 0, dy, da, 1e-2f, 1e-3);
        check_fd(what, fs, fin, 2, 1, dy, db, 1e-2f, 1e-3);
    }
    sy_session_release(fs);
}

static void test_div_ranks(void)
{
    /* the divisor of lower rank (the FP32 packages' bcast_rank case: [1, 28] against [1, 2, 28, 28]) */
    div_ranks_case("Div [1,2,3,4] / [1,4]", 4, (const int64_t[]){1, 2, 3, 4}, 2, (const int64_t[]){1, 4});
    /* the dividend of lower rank, both stretched */
    div_ranks_case("Div [1,3,1] / [1,2,1,4]", 3, (const int64_t[]){1, 3, 1}, 4, (const int64_t[]){1, 2, 1, 4});
}

/* ---- Slice with steps through SliceGrad ------------------------------------- */

/* X [xd] -> Slice (starts st, ends en, axes 0..r-1, steps sp) -> Y [yd]:
 * SliceGrad's dX of a random dY (attributes st and sp) against central
 * differences of the forward; x, dy and dx (numel of xd, yd, xd) are
 * filled for the checks by hand. False when a model did not run. */
static bool slice_grad_fd(const char *what, int32_t r, const int64_t *xd, const int64_t *yd, const int64_t *st,
                          const int64_t *en, const int64_t *sp, float *x, float *dy, float *dx)
{
    int64_t ax[SY_MAX_RANK];
    for (int32_t d = 0; d < r; d++)
        ax[d] = d;
    fill(x, numel(r, xd)), fill(dy, numel(r, yd));
    pt_model *f = pt_model_new("slice_fwd");
    pt_input(f, "X", PT_F32, r, xd);
    pt_init_i64(f, "st", 1, (int64_t[]){r}, st);
    pt_init_i64(f, "en", 1, (int64_t[]){r}, en);
    pt_init_i64(f, "ax", 1, (int64_t[]){r}, ax);
    pt_init_i64(f, "sp", 1, (int64_t[]){r}, sp);
    pt_node(f, "Slice", "slice", (const char *[]){"X", "st", "en", "ax", "sp", NULL}, (const char *[]){"Y", NULL});
    pt_output(f, "Y", PT_F32, r, yd);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    CHECK(fs, "%s: Slice forward: %s", what, last_err);
    if (!fs)
        return false;
    pt_model *bm = pt_model_new("slice_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dY", PT_F32, r, yd);
    pt_init_i64(bm, "sx", 1, (int64_t[]){r}, xd);
    pt_node(bm, "SliceGrad", "g", (const char *[]){"dY", "sx", NULL}, (const char *[]){"dX", NULL});
    pt_domain(bm, "switchyard.train");
    pt_attr_ints(bm, "starts", r, st);
    pt_attr_ints(bm, "steps", r, sp);
    pt_output(bm, "dX", PT_F32, r, xd);
    in_spec bin[1] = {{"dY", SY_DT_FLOAT32, r, {0}, dy}}, fin[1] = {{"X", SY_DT_FLOAT32, r, {0}, x}};
    memcpy(bin[0].dims, yd, (size_t)r * sizeof *yd);
    memcpy(fin[0].dims, xd, (size_t)r * sizeof *xd);
    bool ran = run_backward(bm, bin, 1, 1, (float *[]){dx});
    if (ran)
        check_fd(what, fs, fin, 1, 0, dy, dx, 0.05f, 1e-3);
    sy_session_release(fs);
    return ran;
}

/* rank 6 (twice that is past SY_MAX_RANK: the standard-operator spread of dY
 * could not hold it): X [1,2,5,1,4,3], starts [0,1,0,0,1,0], steps
 * [1,1,2,1,2,2] -> Y [1,1,3,1,2,2] */
static void test_slice_grad(void)
{
    float x[120], dy[12], dx[120];
    if (slice_grad_fd("Slice rank 6 steps [1,1,2,1,2,2]", 6, (int64_t[]){1, 2, 5, 1, 4, 3},
                      (int64_t[]){1, 1, 3, 1, 2, 2}, (int64_t[]){0, 1, 0, 0, 1, 0}, (int64_t[]){1, 2, 5, 1, 4, 3},
                      (int64_t[]){1, 1, 2, 1, 2, 2}, x, dy, dx)) {
        /* hand-worked: dY[0,0,1,0,1,1] lands at X[0, 1, 0 + 1·2, 0, 1 + 1·2, 0 + 1·2] = X[0,1,2,0,3,2]
         * (flat 60 + 2·12 + 3·3 + 2 = 95); X[0,1,1,0,3,2] (flat 83) lies between the steps: 0 */
        CHECK(dx[95] == dy[1 * 4 + 1 * 2 + 1], "dX[0,1,2,0,3,2] %.7g, dY[0,0,1,0,1,1] %.7g", (double)dx[95],
              (double)dy[7]);
        CHECK(dx[83] == 0.0f, "dX[0,1,1,0,3,2] %.7g between the steps", (double)dx[83]);
    }
}

/* negative steps: X [2,5], starts [1,4], steps [-1,-2] (ends INT64_MIN:
 * down to element 0) -> Y [2,3], rows 1, 0 and columns 4, 2, 0 */
static void test_slice_grad_negative(void)
{
    float x[10], dy[6], dx[10];
    if (slice_grad_fd("Slice steps [-1,-2]", 2, (int64_t[]){2, 5}, (int64_t[]){2, 3}, (int64_t[]){1, 4},
                      (int64_t[]){INT64_MIN, INT64_MIN}, (int64_t[]){-1, -2}, x, dy, dx)) {
        /* hand-worked: dY[0,0] lands at X[1, 4] (flat 9), dY[0,1] at X[1, 2]
         * (flat 7), dY[1,2] at X[1 - 1, 4 - 2·2] = X[0,0] (flat 0);
         * X[0,1] (flat 1) and X[1,3] (flat 8) lie between the steps: 0 */
        CHECK(dx[9] == dy[0] && dx[7] == dy[1] && dx[0] == dy[5], "dX[1,4] %.7g dX[1,2] %.7g dX[0,0] %.7g",
              (double)dx[9], (double)dx[7], (double)dx[0]);
        CHECK(dx[1] == 0.0f && dx[8] == 0.0f, "dX[0,1] %.7g dX[1,3] %.7g between the steps", (double)dx[1],
              (double)dx[8]);
    }
}

/* ---- Concat through ConcatGrad ------------------------------------------------ */

static void test_concat(void)
{
    int64_t ad[3] = {2, 3, 2}, bd[3] = {2, 1, 2}, yd[3] = {2, 4, 2};
    float a[12], b[4], dy[16], da[12], db[4];
    fill(a, 12), fill(b, 4), fill(dy, 16);
    pt_model *f = pt_model_new("concat_fwd");
    pt_input(f, "A", PT_F32, 3, ad);
    pt_input(f, "B", PT_F32, 3, bd);
    pt_node(f, "Concat", "cat", (const char *[]){"A", "B", NULL}, (const char *[]){"Y", NULL});
    pt_attr_int(f, "axis", -2);
    pt_output(f, "Y", PT_F32, 3, yd);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "Concat forward: %s", last_err);
    pt_model *bm = pt_model_new("concat_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dY", PT_F32, 3, yd);
    pt_input(bm, "A", PT_F32, 3, ad);
    pt_input(bm, "B", PT_F32, 3, bd);
    pt_node(bm, "ConcatGrad", "g", (const char *[]){"dY", "A", "B", NULL}, (const char *[]){"dA", "dB", NULL});
    pt_domain(bm, "switchyard.train");
    pt_attr_int(bm, "axis", -2);
    pt_output(bm, "dA", PT_F32, 3, ad);
    pt_output(bm, "dB", PT_F32, 3, bd);
    in_spec bin[3] = {{"dY", SY_DT_FLOAT32, 3, {2, 4, 2}, dy}, {"A", SY_DT_FLOAT32, 3, {2, 3, 2}, a},
                      {"B", SY_DT_FLOAT32, 3, {2, 1, 2}, b}};
    if (run_backward(bm, bin, 3, 2, (float *[]){da, db})) {
        check_fd("Concat [2,3,2] + [2,1,2] axis -2", fs, &bin[1], 2, 0, dy, da, 0.05f, 1e-3);
        check_fd("Concat [2,3,2] + [2,1,2] axis -2", fs, &bin[1], 2, 1, dy, db, 0.05f, 1e-3);
        /* hand-worked: dB[1][0][1] is dY[1][3][1] */
        CHECK(db[3] == dy[15], "dB[1,0,1] %g, dY[1,3,1] %g", (double)db[3], (double)dy[15]);
    }
    sy_session_release(fs);
}

/* ---- losses -------------------------------------------------------------------- */

static void sce_case(const char *reduction)
{
    int64_t sd[2] = {3, 5}, ld[1] = {3}, one[1] = {1};
    float sc[15], ds[15], dl[1] = {1.0f};
    int64_t lab[3] = {4, 0, 2};
    fill(sc, 15);
    for (int i = 0; i < 15; i++)
        sc[i] *= 3.0f;
    pt_model *f = pt_model_new("sce_fwd");
    pt_input(f, "S", PT_F32, 2, sd);
    pt_input(f, "L", PT_I64, 1, ld);
    pt_node(f, "SoftmaxCrossEntropyLoss", "loss", (const char *[]){"S", "L", NULL}, (const char *[]){"Y", NULL});
    pt_attr_string(f, "reduction", reduction);
    pt_output(f, "Y", PT_F32, 0, NULL);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "SoftmaxCrossEntropyLoss forward: %s", last_err);
    pt_model *bm = pt_model_new("sce_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dL", PT_F32, 1, one);
    pt_input(bm, "S", PT_F32, 2, sd);
    pt_input(bm, "L", PT_I64, 1, ld);
    pt_node(bm, "SoftmaxCrossEntropyGrad", "g", (const char *[]){"dL", "S", "L", NULL}, (const char *[]){"dS", NULL});
    pt_domain(bm, "switchyard.train");
    pt_attr_string(bm, "reduction", reduction);
    pt_output(bm, "dS", PT_F32, 2, sd);
    in_spec bin[3] = {{"dL", SY_DT_FLOAT32, 1, {1}, dl}, {"S", SY_DT_FLOAT32, 2, {3, 5}, sc},
                      {"L", SY_DT_INT64, 1, {3}, lab}};
    char what[64];
    snprintf(what, sizeof what, "SoftmaxCrossEntropyLoss (%s)", reduction);
    if (run_backward(bm, bin, 3, 1, (float *[]){ds}))
        check_fd(what, fs, &bin[1], 2, 0, dl, ds, 1e-2f, 2e-3);
    sy_session_release(fs);
}

static void test_losses(void)
{
    sce_case("mean");
    sce_case("sum");

    /* mean squared error: L = ReduceMean((P - T)^2) */
    int64_t pd[2] = {2, 3}, one[1] = {1};
    float p[6], t[6], dp[6], dl[1] = {1.0f};
    fill(p, 6), fill(t, 6);
    pt_model *f = pt_model_new("mse_fwd");
    pt_input(f, "P", PT_F32, 2, pd);
    pt_input(f, "T", PT_F32, 2, pd);
    pt_node(f, "Sub", "d", (const char *[]){"P", "T", NULL}, (const char *[]){"D", NULL});
    pt_node(f, "Mul", "sq", (const char *[]){"D", "D", NULL}, (const char *[]){"Q", NULL});
    pt_node(f, "ReduceMean", "m", (const char *[]){"Q", NULL}, (const char *[]){"Y", NULL});
    pt_attr_int(f, "keepdims", 0);
    pt_output(f, "Y", PT_F32, 0, NULL);
    sy_session *fs = open_session(f);
    pt_model_free(f);
    REQUIRE(fs, "MSE forward: %s", last_err);
    pt_model *bm = pt_model_new("mse_bwd");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dL", PT_F32, 1, one);
    pt_input(bm, "P", PT_F32, 2, pd);
    pt_input(bm, "T", PT_F32, 2, pd);
    pt_node(bm, "MSEGrad", "g", (const char *[]){"dL", "P", "T", NULL}, (const char *[]){"dP", NULL});
    pt_domain(bm, "switchyard.train");
    pt_output(bm, "dP", PT_F32, 2, pd);
    in_spec bin[3] = {{"dL", SY_DT_FLOAT32, 1, {1}, dl}, {"P", SY_DT_FLOAT32, 2, {2, 3}, p},
                      {"T", SY_DT_FLOAT32, 2, {2, 3}, t}};
    if (run_backward(bm, bin, 3, 1, (float *[]){dp}))
        check_fd("mean squared error", fs, &bin[1], 2, 0, dl, dp, 1e-2f, 1e-3);
    sy_session_release(fs);
}

/* ---- refusals -------------------------------------------------------------------- */

static void test_refusals(void)
{
    int64_t sd[2] = {2, 3}, ld[1] = {2}, one[1] = {1};
    float sc[6] = {0}, dl[1] = {1}, ds[6];
    int64_t lab[2] = {1, 3}; /* 3 is not one of the 3 classes */
    pt_model *bm = pt_model_new("sce_bad");
    pt_opset(bm, "switchyard.train", 1);
    pt_input(bm, "dL", PT_F32, 1, one);
    pt_input(bm, "S", PT_F32, 2, sd);
    pt_input(bm, "L", PT_I64, 1, ld);
    pt_node(bm, "SoftmaxCrossEntropyGrad", "g", (const char *[]){"dL", "S", "L", NULL}, (const char *[]){"dS", NULL});
    pt_domain(bm, "switchyard.train");
    pt_output(bm, "dS", PT_F32, 2, sd);
    sy_session *s = open_session(bm);
    pt_model_free(bm);
    REQUIRE(s, "%s", last_err);
    in_spec bin[3] = {{"dL", SY_DT_FLOAT32, 1, {1}, dl}, {"S", SY_DT_FLOAT32, 2, {2, 3}, sc},
                      {"L", SY_DT_INT64, 1, {2}, lab}};
    sy_status *st = feed(s, bin, 3);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "label 3 of sample 1 is outside [0, 3)");
    sy_status_free(st);
    (void)ds;
    sy_session_release(s);

    pt_model *cm = pt_model_new("conv_bad");
    pt_opset(cm, "switchyard.train", 1);
    pt_input(cm, "dY", PT_F32, 4, (int64_t[]){1, 4, 3, 3});
    pt_input(cm, "X", PT_F32, 4, (int64_t[]){1, 3, 5, 5});
    pt_input(cm, "W", PT_F32, 4, (int64_t[]){4, 3, 3, 3});
    pt_node(cm, "ConvGrad", "g", (const char *[]){"dY", "X", "W", NULL}, (const char *[]){"dX", NULL});
    pt_domain(cm, "switchyard.train");
    pt_attr_int(cm, "group", 2);
    pt_output(cm, "dX", PT_F32, 4, (int64_t[]){1, 3, 5, 5});
    s = open_session(cm);
    pt_model_free(cm);
    CHECK(!s, "a group that does not divide 3 channels was accepted");
    CHECK_STR_HAS(last_err, "group 2 does not fit X's 3 channels");
    sy_session_release(s);
}

int main(void)
{
    char ini[4096];
    int len = snprintf(ini, sizeof ini, "[switchyard]\n");
    static const char *const plugins[] = {"cpu_ref", "ops_nn", "ops_math", "ops_activation", "ops_reduce", "ops_tensor",
                                          "train"};
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++)
        len += snprintf(ini + len, sizeof ini - (size_t)len, "plugins = %s/libsy_%s.so\n", SY_PLUGIN_DIR, plugins[i]);
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    RUN_TEST(test_conv);
    RUN_TEST(test_pool_relu_abs);
    RUN_TEST(test_broadcast);
    RUN_TEST(test_div_ranks);
    RUN_TEST(test_concat);
    RUN_TEST(test_slice_grad);
    RUN_TEST(test_slice_grad_negative);
    RUN_TEST(test_losses);
    RUN_TEST(test_refusals);
    for (int i = 0; i < n_models; i++)
        sy_model_release(models[i]);
    sy_env_release(env);
    return SY_TEST_MAIN_RESULT();
}
