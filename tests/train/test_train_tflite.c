/*
 * TFLite models as training input and the .tflite export (sy_train.h,
 * tools/lib/src/train_tflite.c; docs/training.md, "TFLite models"):
 *
 *   sine      TFLite Micro's float hello_world (three FULLY_CONNECTED, two
 *             fused RELUs) and the same model converted to ONNX by someone
 *             else (onnx2c's test model: MatMul + Add + Relu): artifacts from
 *             each (MSE), 20 SGD steps on the same samples (a shifted sine,
 *             so there is something to learn) from the .tflite's tensors
 *             (onnx2c's model is another training of the network: its session
 *             loads them); the losses of every step and the trained tensors
 *             agree. The exported
 *             .tflite run by switchyard gives the exported ONNX's outputs.
 *             Skipped (77) without the shared models.
 *   conv      a float CNN written here with tfl_writer (CONV_2D SAME + RELU,
 *             DEPTHWISE_CONV_2D SAME stride 2 multiplier 2 + RELU, RESHAPE,
 *             FULLY_CONNECTED): the translated forward.onnx against the
 *             .tflite run by the core's TFLite importer on random inputs (two
 *             implementations of the same arithmetic); a few training steps;
 *             the exported .tflite against the exported ONNX; a depthwise
 *             CNN within seed 001's FP32 rows builds for ws63 (the inserted
 *             Transposes in the Transpose row), with a bias it is declined.
 *   ops       TANH, LOGISTIC, BATCH_MATMUL (adj_x, adj_y, batched right
 *             operands: a constant and an activation), grouped CONV_2D,
 *             STRIDED_SLICE and the chain of ADD, MUL, SUB, ABS, DIV,
 *             CONCATENATION, TRANSPOSE, STRIDED_SLICE and SQUEEZE:
 *             the models of tflite_ops_models.py ($SY_TFLITE_OPS_MODELS), each
 *             next to the same network written by hand in ONNX: the forward
 *             pass of the .tflite, the translation and the reference agree,
 *             eight SGD steps from each give the same losses and trained
 *             tensors; chain's gradients (the translated training.onnx)
 *             against central differences of its eval loss, every element;
 *             batch axes that do not broadcast, a product past
 *             2^63 elements and ungroupable channels are refused with their
 *             messages.
 *   refusals  a quantized model, an untranslated operator, a truncated file,
 *             an unsupported form, and a .tflite export of ONNX-built
 *             artifacts, each with its message.
 *   export D  writes D/sine and D/conv (source.tflite, model.tflite,
 *             model.onnx) for tflite_export_real.mjs (real TFLite), and with
 *             $SY_TFLITE_OPS_MODELS D/tanh, D/logistic, D/bmm, D/bmmb, D/gconv, D/sslice,
 *             D/sslice_neg, D/sslice_off, D/chain, D/two_sg (its subgraph 1 trained).
 *   cli-files D  writes D/cnn.tflite and a data folder D/data for
 *             tflite_cli.sh (`switchyard train` on a TFLite model).
 *
 *   test_train_tflite GROUP SHARED_DIR WORK_DIR
 */
#include "pt_onnx.h"
#include "sy_test.h"
#include "switchyard/switchyard.h"
#include "switchyard/sy_train.h"
#include "tfl_writer.h"

#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

static sy_env *env;
static char work[512];
static const char *shared = "../shared";

static const char *msg(sy_status *st)
{
    static char buf[2048];
    snprintf(buf, sizeof buf, "%s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return buf;
}

static bool exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)sz + 1);
    if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static bool spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static sy_tensor f32(float *d, int32_t rank, const int64_t *dims)
{
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = rank, .data = d};
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)(t.dims[i] = dims[i]);
    t.nbytes = n * 4;
    return t;
}

/* model output 0 on one input, copied into out[cap]; the count */
static size_t run_model(const char *path, const sy_tensor *in, float *out, size_t cap)
{
    sy_model *m = NULL;
    sy_session *s = NULL;
    const sy_tensor *y = NULL;
    sy_status *st = sy_model_load(env, path, &m);
    if (!st)
        st = sy_session_create(env, m, NULL, &s);
    if (!st)
        st = sy_session_set_input_by_index(s, 0, in, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, &y);
    size_t n = 0;
    if (st) {
        CHECK(!st, "%s: %s", path, msg(st));
    } else {
        n = y->nbytes / 4 < cap ? y->nbytes / 4 : cap;
        memcpy(out, y->data, n * 4);
    }
    sy_session_release(s);
    sy_model_release(m);
    return n;
}

/* The trained tensors' names in training order: the checkpoint's
 * initializers are each tensor followed by its optimizer state (SGD: one),
 * then the step. The ONNX messages are not needed: the names are read
 * through the session, in the order sy_train_session_tensor finds them. */
typedef struct tensors {
    size_t n;
    char names[16][256];
} tensors;

/* Read names from the artifacts' checkpoint.onnx with a minimal protobuf
 * walk: GraphProto (field 7 of ModelProto) -> initializer (field 5) ->
 * name (field 8). */
static uint64_t varint(const uint8_t *p, size_t n, size_t *i)
{
    uint64_t v = 0;
    for (int s = 0; *i < n && s < 64; s += 7) {
        uint8_t b = p[(*i)++];
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80))
            break;
    }
    return v;
}
static bool pb_field(const uint8_t *p, size_t n, unsigned want, size_t *at, const uint8_t **sub, size_t *len)
{
    while (*at < n) {
        uint64_t key = varint(p, n, at);
        unsigned f = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
        if (wt == 2) {
            uint64_t l = varint(p, n, at);
            if (l > n - *at)
                return false;
            if (f == want) {
                *sub = p + *at;
                *len = (size_t)l;
                *at += (size_t)l;
                return true;
            }
            *at += (size_t)l;
        } else if (wt == 0) {
            varint(p, n, at);
        } else if (wt == 1) {
            *at += 8;
        } else if (wt == 5) {
            *at += 4;
        } else {
            return false;
        }
    }
    return false;
}
static void trained_names(const char *dir, tensors *t)
{
    char path[700];
    snprintf(path, sizeof path, "%s/checkpoint.onnx", dir);
    size_t n;
    uint8_t *b = slurp(path, &n);
    t->n = 0;
    if (!b)
        return;
    size_t at = 0, glen, k = 0;
    const uint8_t *g;
    if (pb_field(b, n, 7, &at, &g, &glen)) {
        size_t gi = 0, ilen;
        const uint8_t *init;
        while (pb_field(g, glen, 5, &gi, &init, &ilen)) {
            size_t ii = 0, nlen;
            const uint8_t *nm;
            if (pb_field(init, ilen, 8, &ii, &nm, &nlen) && k++ % 2 == 0 && t->n < 16 && nlen < 255 &&
                (nlen != 4 || memcmp(nm, "step", 4))) {
                memcpy(t->names[t->n], nm, nlen);
                t->names[t->n++][nlen] = 0;
            }
        }
    }
    free(b);
}

/* ---- sine --------------------------------------------------------------------- */

#define SINE_STEPS 20
#define SINE_BATCH 16
#define SINE_LR 0.01f

/* subgraph: sy_train_build_options.subgraph (NULL: subgraph 0) */
static sy_status *build_mse_sg(const char *model, const char *dir, const char *subgraph)
{
    sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE, .optimizer = SY_TRAIN_SGD,
                                .subgraph = subgraph};
    return sy_train_build(model, &o, dir, NULL);
}

static sy_status *build_mse(const char *model, const char *dir) { return build_mse_sg(model, dir, NULL); }

/* 20 SGD steps; losses[k] of step k; the session is returned */
static sy_train_session *train_sine(const char *dir, float *losses, const char *start)
{
    sy_train_session *s = NULL;
    sy_status *st = sy_train_session_create(env, dir, &s);
    if (!st && start)
        st = sy_train_session_load(s, start);
    CHECK(!st, "session %s: %s", dir, msg(st));
    if (st)
        return NULL;
    for (int k = 0; k < SINE_STEPS; k++) {
        float x[SINE_BATCH], y[SINE_BATCH];
        for (int i = 0; i < SINE_BATCH; i++) {
            /* spread over [0, 2 pi), a different phase each step */
            double u = fmod((i + 0.5) / SINE_BATCH + 0.137 * k, 1.0);
            x[i] = (float)(2 * M_PI * u);
            y[i] = (float)(0.8 * sin(x[i]) + 0.1); /* a new target: the model learns */
        }
        sy_tensor tx = f32(x, 2, (int64_t[]){SINE_BATCH, 1}), ty = f32(y, 2, (int64_t[]){SINE_BATCH, 1});
        st = sy_train_session_step(s, (const sy_tensor *[]){&tx, &ty}, 2, SINE_LR, &losses[k]);
        CHECK(!st, "step %d: %s", k, msg(st));
        if (st)
            break;
    }
    return s;
}

/* |a - b| <= rel max(|a|, |b|) + 1e-7 */
static bool close_to(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-7; }
/* two float implementations of one output: |a - b| <= 1e-5 max(1, |a|, |b|)
 * (sums of a few dozen products of magnitude up to ~10 in float32, added in
 * another order: a few ulp of the terms, well below 1e-5) */
static bool same_output(double a, double b) { return fabs(a - b) <= 1e-5 * fmax(1.0, fmax(fabs(a), fabs(b))); }

static void test_sine(void)
{
    char tfl[700], onnx[700], dt[700], dx[700];
    snprintf(tfl, sizeof tfl, "%s/models/tflite/hello_world_float/model.tflite", shared);
    snprintf(onnx, sizeof onnx, "%s/models/onnx/tfl_hello_world_sine/model.onnx", shared);
    snprintf(dt, sizeof dt, "%s/sine_tflite", work);
    snprintf(dx, sizeof dx, "%s/sine_onnx", work);
    sy_status *st = build_mse(tfl, dt);
    REQUIRE(!st, "build from TFLite: %s", msg(st));
    st = build_mse(onnx, dx);
    REQUIRE(!st, "build from ONNX: %s", msg(st));
    char p[800];
    snprintf(p, sizeof p, "%s/source.tflite", dt);
    CHECK(exists(p), "the artifacts keep the TFLite source");
    snprintf(p, sizeof p, "%s/source.tflite", dx);
    CHECK(!exists(p), "ONNX-built artifacts have no TFLite source");

    tensors nt, nx;
    trained_names(dt, &nt);
    trained_names(dx, &nx);
    REQUIRE(nt.n == 6 && nx.n == 6, "6 trained tensors each (3 weights, 3 biases): %zu and %zu", nt.n, nx.n);

    float lt[SINE_STEPS], lx[SINE_STEPS], start[6][256];
    sy_train_session *st_ = NULL, *sx = NULL;
    /* the starting tensors agree: the mapping (TFLite [O, K] weights are
     * onnx2c's MatMul [K, O] transposed, biases alike) is the right one */
    sy_train_session *s0t = NULL, *s0x = NULL;
    st = sy_train_session_create(env, dt, &s0t);
    if (!st)
        st = sy_train_session_create(env, dx, &s0x);
    REQUIRE(!st, "sessions: %s", msg(st));
    double worst0 = 0;
    for (size_t k = 0; k < 6; k++) {
        int64_t n1 = 0, n2 = 0;
        const float *a = sy_train_session_tensor(s0t, nt.names[k], &n1), *b = sy_train_session_tensor(s0x, nx.names[k], &n2);
        CHECK(a && b && n1 == n2, "tensor %zu: '%s' (%lld) and '%s' (%lld)", k, nt.names[k], (long long)n1,
              nx.names[k], (long long)n2);
        if (!a || !b || n1 != n2)
            continue;
        /* odd positions are biases; weights [O, K] vs [K, O] */
        int64_t O = k % 2 ? n1 : (k == 0 ? 16 : k == 2 ? 16 : 1), K = n1 / O;
        for (int64_t i = 0; i < n1; i++) {
            float bv = k % 2 ? b[i] : b[(i % K) * O + i / K];
            worst0 = fmax(worst0, fabs((double)a[i] - bv));
        }
    }
    sy_train_session_release(s0x);
    /* onnx2c's model is another training of the same network (its tensors
     * differ from the .tflite's by up to this much): the ONNX session starts
     * from the TFLite model's tensors, written into a checkpoint under the
     * ONNX names in the ONNX layout, so both train the same numbers */
    printf("sine: onnx2c's ONNX and the .tflite start %.3g apart; the ONNX session loads the .tflite's tensors\n",
           worst0);
    char ck[800];
    snprintf(ck, sizeof ck, "%s/from_tflite.onnx", work);
    pt_model *cm = pt_model_new("from_tflite");
    for (size_t k = 0; k < 6; k++) {
        int64_t n1 = 0;
        const float *a = sy_train_session_tensor(s0t, nt.names[k], &n1);
        REQUIRE(a && n1 <= 256, "tensor '%s'", nt.names[k]);
        memcpy(start[k], a, (size_t)n1 * 4);
        int64_t O = k % 2 ? n1 : (k == 0 ? 16 : k == 2 ? 16 : 1), K = n1 / O;
        float v[256], z[256] = {0};
        for (int64_t i = 0; i < n1; i++) /* ONNX [K, O] from TFLite [O, K] */
            v[k % 2 ? i : (i % K) * O + i / K] = a[i];
        char mname[300];
        snprintf(mname, sizeof mname, "%s.m", nx.names[k]);
        if (k % 2) {
            pt_init_f32(cm, nx.names[k], 1, (int64_t[]){n1}, v);
            pt_init_f32(cm, mname, 1, (int64_t[]){n1}, z);
        } else {
            pt_init_f32(cm, nx.names[k], 2, (int64_t[]){K, O}, v);
            pt_init_f32(cm, mname, 2, (int64_t[]){K, O}, z);
        }
    }
    pt_init_i64(cm, "step", 0, NULL, (const int64_t[]){0});
    uint8_t *cbuf;
    size_t clen;
    pt_model_pack(cm, &cbuf, &clen);
    pt_model_free(cm);
    CHECK(spit(ck, cbuf, clen), "write %s", ck);
    free(cbuf);
    sy_train_session_release(s0t);

    st_ = train_sine(dt, lt, NULL);
    sx = train_sine(dx, lx, ck);
    REQUIRE(st_ && sx, "training sessions");
    /* The losses are means of (y - t)^2 of at most 0.03 (|y - t| < 0.2): a
     * rounding difference d ~ 1e-7 in an output y (Gemm against MatMul + Add)
     * moves them by 2 |y - t| d < 4e-8, so 1e-7 absolute; the trained
     * tensors take 20 updates whose gradients differ by rounding alone:
     * 1e-5 relative (measured: 1.3e-8 and 4.6e-7) */
    double worst_loss = 0, worst_w = 0, moved = 0;
    for (int k = 0; k < SINE_STEPS; k++) {
        worst_loss = fmax(worst_loss, fabs((double)lt[k] - lx[k]));
        CHECK(fabs((double)lt[k] - lx[k]) <= 1e-7, "step %d: loss %.9g (TFLite) vs %.9g (ONNX)", k, (double)lt[k],
              (double)lx[k]);
    }
    for (size_t k = 0; k < 6; k++) {
        int64_t n1 = 0, n2 = 0;
        const float *a = sy_train_session_tensor(st_, nt.names[k], &n1), *b = sy_train_session_tensor(sx, nx.names[k], &n2);
        if (!a || !b || n1 != n2)
            continue;
        int64_t O = k % 2 ? n1 : (k == 0 ? 16 : k == 2 ? 16 : 1), K = n1 / O;
        for (int64_t i = 0; i < n1; i++) {
            float bv = k % 2 ? b[i] : b[(i % K) * O + i / K];
            worst_w = fmax(worst_w, fabs((double)a[i] - bv) / fmax(fabs((double)bv), 1e-3));
            moved = fmax(moved, fabs((double)a[i] - start[k][i]));
            CHECK(close_to(a[i], bv, 1e-5), "trained '%s'[%lld] %.9g vs '%s' %.9g", nt.names[k], (long long)i,
                  (double)a[i], nx.names[k], (double)bv);
        }
    }
    CHECK(moved > 1e-3, "training moved the tensors (by %g)", moved);
    CHECK(lt[SINE_STEPS - 1] < 0.5f * lt[0], "the loss falls: %g -> %g", (double)lt[0], (double)lt[SINE_STEPS - 1]);
    printf("sine: %d steps, losses %.6g -> %.6g; TFLite-built vs ONNX-built: losses differ by <= %.2g, trained "
           "tensors by <= %.2g relative (they moved up to %.3g)\n", SINE_STEPS, (double)lt[0],
           (double)lt[SINE_STEPS - 1], worst_loss, worst_w, moved);

    /* export: the .tflite and the .onnx compute the same sine */
    char et[800], ex[800];
    snprintf(et, sizeof et, "%s/model.tflite", dt);
    snprintf(ex, sizeof ex, "%s/model.onnx", dt);
    st = sy_train_session_export(st_, et);
    CHECK(!st, "export .tflite: %s", msg(st));
    st = sy_train_session_export(st_, ex);
    CHECK(!st, "export .onnx: %s", msg(st));
    double worst = 0;
    for (int i = 0; i < 8; i++) {
        float x = (float)(0.8 * i), a = 0, b = 0;
        sy_tensor tx = f32(&x, 2, (int64_t[]){1, 1});
        CHECK(run_model(et, &tx, &a, 1) == 1 && run_model(ex, &tx, &b, 1) == 1, "runs at x = %g", (double)x);
        worst = fmax(worst, fabs((double)a - b));
        CHECK(same_output(a, b), "x = %g: exported .tflite %.9g, .onnx %.9g", (double)x, (double)a, (double)b);
    }
    printf("sine: exported .tflite vs .onnx in switchyard: max |diff| %.3g\n", worst);
    sy_train_session_release(st_);
    sy_train_session_release(sx);
}

/* ---- a float CNN built here ----------------------------------------------------------- */

enum { OP_CONV_2D = 3, OP_DEPTHWISE_CONV_2D = 4, OP_FULLY_CONNECTED = 9, OP_RESHAPE = 22, OP_EXP = 47,
       OP_MEAN = 40, OP_STRIDED_SLICE = 45 };
enum { BO_CONV2D = 1, BO_DWCONV = 2, BO_FC = 8, BO_RESHAPE = 17, BO_REDUCER = 27, BO_STRIDED_SLICE = 32 };

static uint32_t rng = 12345;
static float urand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 16777216.0f * 2.0f - 1.0f;
}

/* x [1,6,6,2] -> CONV_2D 3x3 SAME RELU [1,6,6,4] -> DEPTHWISE 3x3 SAME
 * stride 2 multiplier 2 RELU [1,3,3,8] -> RESHAPE [1,72] -> FULLY_CONNECTED
 * [1,3]; `tail` picks the last operator (0 the model as described, other
 * values a refusal case). */
enum { TAIL_FC = 0, TAIL_EXP = 1, TAIL_SS_ZERO_STEP = 2 };
static uint8_t *cnn_model(size_t *size, int tail)
{
    static float w1[4 * 3 * 3 * 2], b1[4], w2[1 * 3 * 3 * 8], b2[8], w3[3 * 72], b3[3];
    static const int32_t shape[2] = {1, 72}, ss[2] = {0, 0}, se[2] = {1, 3}, sst[2] = {1, 0};
    rng = 777;
    for (size_t i = 0; i < sizeof w1 / 4; i++)
        w1[i] = 0.4f * urand();
    for (size_t i = 0; i < 4; i++)
        b1[i] = 0.1f * urand();
    for (size_t i = 0; i < sizeof w2 / 4; i++)
        w2[i] = 0.4f * urand();
    for (size_t i = 0; i < 8; i++)
        b2[i] = 0.1f * urand();
    for (size_t i = 0; i < sizeof w3 / 4; i++)
        w3[i] = 0.2f * urand();
    for (size_t i = 0; i < 3; i++)
        b3[i] = 0.1f * urand();
    tflw_tensor t[16] = {
        {.name = "x", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 6, 6, 2}},
        {.name = "conv/filter", .type = TFLW_FLOAT32, .rank = 4, .dims = {4, 3, 3, 2}, .data = w1, .nbytes = sizeof w1},
        {.name = "conv/bias", .type = TFLW_FLOAT32, .rank = 1, .dims = {4}, .data = b1, .nbytes = sizeof b1},
        {.name = "conv/out", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 6, 6, 4}},
        {.name = "dw/filter", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 3, 3, 8}, .data = w2, .nbytes = sizeof w2},
        {.name = "dw/bias", .type = TFLW_FLOAT32, .rank = 1, .dims = {8}, .data = b2, .nbytes = sizeof b2},
        {.name = "dw/out", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 3, 3, 8}},
        {.name = "flat/shape", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = shape, .nbytes = sizeof shape},
        {.name = "flat", .type = TFLW_FLOAT32, .rank = 2, .dims = {1, 72}},
        {.name = "fc/weights", .type = TFLW_FLOAT32, .rank = 2, .dims = {3, 72}, .data = w3, .nbytes = sizeof w3},
        {.name = "fc/bias", .type = TFLW_FLOAT32, .rank = 1, .dims = {3}, .data = b3, .nbytes = sizeof b3},
        {.name = "y", .type = TFLW_FLOAT32, .rank = 2, .dims = {1, 3}},
        {.name = "ss/begin", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = ss, .nbytes = sizeof ss},
        {.name = "ss/end", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = se, .nbytes = sizeof se},
        {.name = "ss/strides", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = sst, .nbytes = sizeof sst},
    };
    int nt = 12;
    const tflw_opt oc[4] = {{.id = 0, .kind = TFLW_OPT_U8, .i = 0}, {.id = 1, .kind = TFLW_OPT_I32, .i = 1},
                            {.id = 2, .kind = TFLW_OPT_I32, .i = 1}, {.id = 3, .kind = TFLW_OPT_U8, .i = 1}};
    const tflw_opt od[5] = {{.id = 0, .kind = TFLW_OPT_U8, .i = 0}, {.id = 1, .kind = TFLW_OPT_I32, .i = 2},
                            {.id = 2, .kind = TFLW_OPT_I32, .i = 2}, {.id = 3, .kind = TFLW_OPT_I32, .i = 2},
                            {.id = 4, .kind = TFLW_OPT_U8, .i = 1}};
    const tflw_opt orr = {.id = 0, .kind = TFLW_OPT_I32VEC, .vec = shape, .n_vec = 2};
    const tflw_opt of = {.id = 0, .kind = TFLW_OPT_U8, .i = 0};
    /* a STRIDED_SLICE whose strides [1, 0] sy_ss_resolve refuses (shrink_axis_mask 1) */
    const tflw_opt oss = {.id = 4, .kind = TFLW_OPT_I32, .i = 1};
    static const int32_t i0[3] = {0, 1, 2}, o0 = 3, i1[3] = {3, 4, 5}, o1 = 6, i2[2] = {6, 7}, o2 = 8,
                         i3[3] = {8, 9, 10}, o3 = 11, i4[1] = {8}, i5[4] = {8, 12, 13, 14};
    tflw_op ops[4] = {
        {.code = OP_CONV_2D, .inputs = i0, .n_inputs = 3, .outputs = &o0, .n_outputs = 1, .options_type = BO_CONV2D,
         .opts = oc, .n_opts = 4},
        {.code = OP_DEPTHWISE_CONV_2D, .version = 2, .inputs = i1, .n_inputs = 3, .outputs = &o1, .n_outputs = 1,
         .options_type = BO_DWCONV, .opts = od, .n_opts = 5},
        {.code = OP_RESHAPE, .inputs = i2, .n_inputs = 2, .outputs = &o2, .n_outputs = 1, .options_type = BO_RESHAPE,
         .opts = &orr, .n_opts = 1},
        {.code = OP_FULLY_CONNECTED, .inputs = i3, .n_inputs = 3, .outputs = &o3, .n_outputs = 1, .options_type = BO_FC,
         .opts = &of, .n_opts = 1},
    };
    if (tail == TAIL_EXP) {
        t[11].dims[1] = 72;
        ops[3] = (tflw_op){.code = OP_EXP, .inputs = i4, .n_inputs = 1, .outputs = &o3, .n_outputs = 1};
    } else if (tail == TAIL_SS_ZERO_STEP) {
        t[11].dims[1] = 3;
        nt = 15;
        ops[3] = (tflw_op){.code = OP_STRIDED_SLICE, .inputs = i5, .n_inputs = 4, .outputs = &o3, .n_outputs = 1,
                           .options_type = BO_STRIDED_SLICE, .opts = &oss, .n_opts = 1};
    }
    static const int32_t gin = 0, gout = 11;
    tflw_model m = {.tensors = t, .n_tensors = nt, .ops = ops, .n_ops = 4, .inputs = &gin, .n_inputs = 1,
                    .outputs = &gout, .n_outputs = 1};
    return tflw_build(&m, size);
}

static bool write_cnn(const char *path, int tail)
{
    size_t n;
    uint8_t *b = cnn_model(&n, tail);
    bool ok = b && spit(path, b, n);
    free(b);
    return ok;
}

static void test_conv(void)
{
    char model[700], dir[700], fwd[800];
    snprintf(model, sizeof model, "%s/cnn.tflite", work);
    snprintf(dir, sizeof dir, "%s/cnn", work);
    snprintf(fwd, sizeof fwd, "%s/forward.onnx", dir);
    REQUIRE(write_cnn(model, TAIL_FC), "write %s", model);
    sy_status *st = build_mse(model, dir);
    REQUIRE(!st, "build: %s", msg(st));
    /* the translation against the core's TFLite import of the same file */
    double worst = 0, big = 0;
    rng = 99;
    for (int k = 0; k < 4; k++) {
        float x[72], a[3] = {0}, b[3] = {0};
        for (int i = 0; i < 72; i++)
            x[i] = urand();
        sy_tensor tx = f32(x, 4, (int64_t[]){1, 6, 6, 2});
        CHECK(run_model(model, &tx, a, 3) == 3 && run_model(fwd, &tx, b, 3) == 3, "forward runs");
        for (int c = 0; c < 3; c++) {
            worst = fmax(worst, fabs((double)a[c] - b[c]));
            big = fmax(big, fabs((double)a[c]));
            CHECK(same_output(a[c], b[c]), "input %d output %d: .tflite %.9g, translated %.9g", k, c, (double)a[c],
                  (double)b[c]);
        }
    }
    CHECK(big > 0.05, "the outputs are not all near zero (max %g)", big);
    printf("conv: translated forward.onnx vs the .tflite (core importer), 4 random inputs: max |diff| %.3g (outputs "
           "up to %.3g)\n", worst, big);

    /* training steps: the loss falls; the export keeps computing the same */
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    REQUIRE(!st, "session: %s", msg(st));
    float x[4 * 72], y[4 * 3], loss[6] = {0};
    rng = 5;
    for (int i = 0; i < 4 * 72; i++)
        x[i] = urand();
    for (int i = 0; i < 12; i++)
        y[i] = 0.5f * urand();
    sy_tensor tx = f32(x, 4, (int64_t[]){4, 6, 6, 2}), ty = f32(y, 2, (int64_t[]){4, 3});
    for (int k = 0; k < 6 && !st; k++)
        st = sy_train_session_step(s, (const sy_tensor *[]){&tx, &ty}, 2, 0.05f, &loss[k]);
    CHECK(!st, "steps: %s", msg(st));
    CHECK(loss[5] < loss[0], "the loss falls: %g -> %g", (double)loss[0], (double)loss[5]);
    char et[800], ex[800];
    snprintf(et, sizeof et, "%s/model.tflite", dir);
    snprintf(ex, sizeof ex, "%s/model.onnx", dir);
    st = sy_train_session_export(s, et);
    CHECK(!st, "export .tflite: %s", msg(st));
    st = sy_train_session_export(s, ex);
    CHECK(!st, "export .onnx: %s", msg(st));
    double worst_e = 0, moved = 0;
    for (int k = 0; k < 2; k++) {
        float a[3] = {0}, b[3] = {0}, o[3] = {0};
        sy_tensor t1 = f32(x + 72 * k, 4, (int64_t[]){1, 6, 6, 2});
        CHECK(run_model(et, &t1, a, 3) == 3 && run_model(ex, &t1, b, 3) == 3 && run_model(model, &t1, o, 3) == 3,
              "exported models run");
        for (int c = 0; c < 3; c++) {
            worst_e = fmax(worst_e, fabs((double)a[c] - b[c]));
            moved = fmax(moved, fabs((double)a[c] - o[c]));
            CHECK(same_output(a[c], b[c]), "sample %d output %d: exported .tflite %.9g, .onnx %.9g", k, c,
                  (double)a[c], (double)b[c]);
        }
    }
    CHECK(moved > 1e-4, "training changed the exported model's outputs (by %g)", moved);
    printf("conv: loss %.5f -> %.5f in 6 steps; exported .tflite vs .onnx: max |diff| %.3g (moved %.3g from the "
           "source)\n", (double)loss[0], (double)loss[5], worst_e, moved);
    /* the exported file is the source's size: buffers overwritten in place */
    size_t n1 = 0, n2 = 0;
    uint8_t *b1 = slurp(model, &n1), *b2 = slurp(et, &n2);
    CHECK(b1 && b2 && n1 == n2, "sizes %zu and %zu", n1, n2);
    free(b1);
    free(b2);
    sy_train_session_release(s);
}

/* Within seed 001's FP32 rows: x [1,5,5,3] -> DEPTHWISE_CONV_2D 3x3 SAME
 * stride 1 multiplier 1, no bias, fused RELU -> RESHAPE [1,75] ->
 * FULLY_CONNECTED [4,75] with bias. Its translation (Transposes around the
 * Conv, the Relu after) builds for target ws63; with a bias on the
 * depthwise filter the Conv is declined quoting its row. */
static uint8_t *dw_model(size_t *size, bool dw_bias)
{
    static float w1[27], b1[3], w2[4 * 75], b2[4];
    static const int32_t shape[2] = {1, 75};
    rng = 4242;
    for (size_t i = 0; i < 27; i++)
        w1[i] = 0.5f * urand();
    for (size_t i = 0; i < 3; i++)
        b1[i] = 0.1f * urand();
    for (size_t i = 0; i < 300; i++)
        w2[i] = 0.2f * urand();
    for (size_t i = 0; i < 4; i++)
        b2[i] = 0.1f * urand();
    const tflw_tensor t[9] = {
        {.name = "x", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 5, 5, 3}},
        {.name = "dw/filter", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 3, 3, 3}, .data = w1, .nbytes = sizeof w1},
        {.name = "dw/out", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 5, 5, 3}},
        {.name = "flat/shape", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = shape, .nbytes = sizeof shape},
        {.name = "flat", .type = TFLW_FLOAT32, .rank = 2, .dims = {1, 75}},
        {.name = "fc/weights", .type = TFLW_FLOAT32, .rank = 2, .dims = {4, 75}, .data = w2, .nbytes = sizeof w2},
        {.name = "fc/bias", .type = TFLW_FLOAT32, .rank = 1, .dims = {4}, .data = b2, .nbytes = sizeof b2},
        {.name = "y", .type = TFLW_FLOAT32, .rank = 2, .dims = {1, 4}},
        {.name = "dw/bias", .type = TFLW_FLOAT32, .rank = 1, .dims = {3}, .data = b1, .nbytes = sizeof b1},
    };
    const tflw_opt od[5] = {{.id = 0, .kind = TFLW_OPT_U8, .i = 0}, {.id = 1, .kind = TFLW_OPT_I32, .i = 1},
                            {.id = 2, .kind = TFLW_OPT_I32, .i = 1}, {.id = 3, .kind = TFLW_OPT_I32, .i = 1},
                            {.id = 4, .kind = TFLW_OPT_U8, .i = 1}};
    const tflw_opt orr = {.id = 0, .kind = TFLW_OPT_I32VEC, .vec = shape, .n_vec = 2};
    const tflw_opt of = {.id = 0, .kind = TFLW_OPT_U8, .i = 0};
    static const int32_t i0[3] = {0, 1, -1}, i0b[3] = {0, 1, 8}, o0 = 2, i1[2] = {2, 3}, o1 = 4, i2[3] = {4, 5, 6},
                         o2 = 7;
    const tflw_op ops[3] = {
        {.code = OP_DEPTHWISE_CONV_2D, .inputs = dw_bias ? i0b : i0, .n_inputs = 3, .outputs = &o0, .n_outputs = 1,
         .options_type = BO_DWCONV, .opts = od, .n_opts = 5},
        {.code = OP_RESHAPE, .inputs = i1, .n_inputs = 2, .outputs = &o1, .n_outputs = 1, .options_type = BO_RESHAPE,
         .opts = &orr, .n_opts = 1},
        {.code = OP_FULLY_CONNECTED, .inputs = i2, .n_inputs = 3, .outputs = &o2, .n_outputs = 1, .options_type = BO_FC,
         .opts = &of, .n_opts = 1},
    };
    static const int32_t gin = 0, gout = 7;
    tflw_model m = {.tensors = t, .n_tensors = 9, .ops = ops, .n_ops = 3, .inputs = &gin, .n_inputs = 1,
                    .outputs = &gout, .n_outputs = 1};
    return tflw_build(&m, size);
}

static void test_ws63(void)
{
    for (int bias = 0; bias < 2; bias++) {
        char model[700], dir[700];
        snprintf(model, sizeof model, "%s/dw%d.tflite", work, bias);
        snprintf(dir, sizeof dir, "%s/dw%d", work, bias);
        size_t n;
        uint8_t *b = dw_model(&n, bias);
        REQUIRE(b && spit(model, b, n), "write %s", model);
        free(b);
        sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_CROSS_ENTROPY, .target = "ws63",
                                    .env = env};
        sy_status *st = sy_train_build(model, &o, dir, NULL);
        if (!bias) {
            CHECK(!st, "the depthwise TFLite CNN on ws63: %s", msg(st));
            continue;
        }
        CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "(Conv): not trainable on ws63: it has a bias; seed 001 "
                      "\xc2\xa7" "4: \"FP32 Conv:");
        if (st)
            printf("ws63: %s\n", sy_status_get_message(st));
        sy_status_free(st);
    }
}

static void expect_build(const char *model, const char *want);

/* ---- TANH, LOGISTIC, BATCH_MATMUL, grouped CONV_2D ------------------------------------------------ */

/* The models of tflite_ops_models.py (in $SY_TFLITE_OPS_MODELS): NAME.tflite
 * and NAME_ref.onnx, the same network written by hand in ONNX with its
 * initializers named after the TFLite tensors and in ONNX's layouts. */
typedef struct op_case {
    const char *name;
    int32_t rank;
    int64_t in[4];      /* one sample's input shape, batch 1 */
    int64_t out;        /* one sample's output values */
    size_t n_trained;
    const char *subgraph; /* the subgraph trained (NULL: 0) */
} op_case;

static const op_case OP_CASES[] = {
    {"tanh", 2, {1, 8}, 3, 4, NULL},
    {"logistic", 2, {1, 8}, 3, 4, NULL},
    {"bmm", 3, {1, 4, 6}, 15, 2, NULL},
    {"bmmb", 4, {1, 2, 4, 6}, 30, 2, NULL},
    {"gconv", 4, {1, 5, 5, 4}, 3, 4, NULL},
    {"sslice", 2, {1, 12}, 3, 4, NULL},
    {"sslice_neg", 2, {1, 12}, 3, 4, NULL}, /* negative strides */
    {"sslice_off", 2, {1, 12}, 3, 4, NULL}, /* offset = true */
    /* ADD, MUL, SUB, ABS, DIV, CONCATENATION, TRANSPOSE, STRIDED_SLICE,
     * SQUEEZE: fc1 and fc2 (weights, biases) and the constants of ADD, MUL
     * and SUB (weight operands: 2 + 2 + 3 trained); DIV's divisor stays */
    {"chain", 2, {1, 8}, 3, 7, NULL},
    /* subgraph 1 of two, chosen by its signature name */
    {"two_sg", 2, {1, 8}, 3, 4, "train_head"},
};
#define OPS_STEPS 8
#define OPS_BATCH 4
#define OPS_LR 0.05f

static const char *ops_models(void)
{
    const char *d = getenv("SY_TFLITE_OPS_MODELS");
    return d && *d ? d : NULL;
}

/* OPS_STEPS SGD steps on one batch (the same for both builds); the session */
static sy_train_session *train_ops(const char *dir, const op_case *k, float *losses)
{
    sy_train_session *s = NULL;
    sy_status *st = sy_train_session_create(env, dir, &s);
    CHECK(!st, "session %s: %s", dir, msg(st));
    if (st)
        return NULL;
    int64_t per = 1;
    for (int32_t d = 1; d < k->rank; d++)
        per *= k->in[d];
    static float x[OPS_BATCH * 150], y[OPS_BATCH * 30];
    rng = 4242;
    for (int64_t i = 0; i < OPS_BATCH * per; i++)
        x[i] = urand();
    for (int64_t i = 0; i < OPS_BATCH * k->out; i++)
        y[i] = 0.5f * urand();
    int64_t dims[4];
    memcpy(dims, k->in, sizeof dims);
    dims[0] = OPS_BATCH;
    sy_tensor tx = f32(x, k->rank, dims), ty = f32(y, 2, (int64_t[]){OPS_BATCH, k->out});
    for (int i = 0; i < OPS_STEPS && !st; i++)
        st = sy_train_session_step(s, (const sy_tensor *[]){&tx, &ty}, 2, OPS_LR, &losses[i]);
    CHECK(!st, "steps %s: %s", dir, msg(st));
    return s;
}

/* Each model built from its .tflite and from its ONNX reference: the
 * translated forward.onnx computes what the .tflite (the core's TFLite
 * import) and the reference compute; eight SGD steps from each give the
 * same losses and the same trained tensors (compared by name: the
 * reference holds them in the translation's ONNX layouts). Both are run by
 * switchyard's kernels, but from two graphs written independently: a
 * translation that read an option (adj_x, adj_y, the group count) or a
 * layout wrongly trains another network. */
static void test_ops(void)
{
    const char *md = ops_models();
    REQUIRE(md, "SY_TFLITE_OPS_MODELS names the folder of tflite_ops_models.py's models");
    for (size_t c = 0; c < sizeof OP_CASES / sizeof OP_CASES[0]; c++) {
        const op_case *k = &OP_CASES[c];
        char tfl[800], ref[800], dt[800], dx[800], fwd[900];
        snprintf(tfl, sizeof tfl, "%s/%s.tflite", md, k->name);
        snprintf(ref, sizeof ref, "%s/%s_ref.onnx", md, k->name);
        snprintf(dt, sizeof dt, "%s/%s_tflite", work, k->name);
        snprintf(dx, sizeof dx, "%s/%s_onnx", work, k->name);
        snprintf(fwd, sizeof fwd, "%s/forward.onnx", dt);
        sy_status *st = build_mse_sg(tfl, dt, k->subgraph);
        CHECK(!st, "%s: build from TFLite: %s", k->name, msg(st));
        if (st)
            continue;
        st = build_mse(ref, dx);
        CHECK(!st, "%s: build from the ONNX reference: %s", k->name, msg(st));
        if (st)
            continue;
        /* the forward pass, three ways */
        double worst_f = 0, big = 0;
        rng = 99;
        for (int r = 0; r < 3; r++) {
            float x[150], a[30] = {0}, b[30] = {0}, e[30] = {0};
            int64_t per = 1;
            for (int32_t d = 1; d < k->rank; d++)
                per *= k->in[d];
            for (int64_t i = 0; i < per; i++)
                x[i] = urand();
            sy_tensor tx = f32(x, k->rank, k->in);
            size_t n = (size_t)k->out;
            bool ran = run_model(fwd, &tx, b, n) == n && run_model(ref, &tx, e, n) == n;
            if (k->subgraph) /* the core's TFLite importer runs subgraph 0: the reference alone */
                memcpy(a, e, sizeof a);
            else
                ran = ran && run_model(tfl, &tx, a, n) == n;
            CHECK(ran, "%s: forward runs", k->name);
            for (size_t i = 0; i < n; i++) {
                worst_f = fmax(worst_f, fmax(fabs((double)a[i] - b[i]), fabs((double)e[i] - b[i])));
                big = fmax(big, fabs((double)a[i]));
                CHECK(same_output(a[i], b[i]) && same_output(e[i], b[i]),
                      "%s: input %d output %zu: .tflite %.9g, translated %.9g, reference %.9g", k->name, r, i,
                      (double)a[i], (double)b[i], (double)e[i]);
            }
        }
        CHECK(big > 0.05, "%s: the outputs are not all near zero (max %g)", k->name, big);
        tensors nt;
        trained_names(dt, &nt);
        CHECK(nt.n == k->n_trained, "%s: %zu trained tensors, want %zu", k->name, nt.n, k->n_trained);
        float lt[OPS_STEPS] = {0}, lx[OPS_STEPS] = {0};
        sy_train_session *sa = train_ops(dt, k, lt), *sb = train_ops(dx, k, lx);
        if (sa && sb) {
            double worst_l = 0, worst_w = 0, moved = 0;
            for (int i = 0; i < OPS_STEPS; i++) {
                worst_l = fmax(worst_l, fabs((double)lt[i] - lx[i]));
                CHECK(same_output(lt[i], lx[i]), "%s: step %d: loss %.9g (TFLite) vs %.9g (reference)", k->name, i,
                      (double)lt[i], (double)lx[i]);
            }
            CHECK(lt[OPS_STEPS - 1] < lt[0], "%s: the loss falls: %g -> %g", k->name, (double)lt[0],
                  (double)lt[OPS_STEPS - 1]);
            sy_train_session *s0 = NULL;
            st = sy_train_session_create(env, dt, &s0);
            CHECK(!st, "session: %s", msg(st));
            for (size_t t = 0; t < nt.n && s0; t++) {
                int64_t n1 = 0, n2 = 0, n0 = 0;
                const float *a = sy_train_session_tensor(sa, nt.names[t], &n1);
                const float *b = sy_train_session_tensor(sb, nt.names[t], &n2);
                const float *o = sy_train_session_tensor(s0, nt.names[t], &n0);
                CHECK(a && b && o && n1 == n2 && n1 == n0, "%s: tensor '%s' in both sessions (%lld, %lld values)",
                      k->name, nt.names[t], (long long)n1, (long long)n2);
                for (int64_t i = 0; a && b && o && n1 == n2 && n1 == n0 && i < n1; i++) {
                    worst_w = fmax(worst_w, fabs((double)a[i] - b[i]));
                    moved = fmax(moved, fabs((double)a[i] - o[i]));
                    CHECK(same_output(a[i], b[i]), "%s: trained '%s'[%lld] %.9g (TFLite) vs %.9g (reference)",
                          k->name, nt.names[t], (long long)i, (double)a[i], (double)b[i]);
                }
            }
            sy_train_session_release(s0);
            CHECK(moved > 1e-3, "%s: training moved the tensors (by %g)", k->name, moved);
            printf("%s: forward %s / translated / reference agree to %.3g (outputs up to %.3g); %d steps, loss "
                   "%.6g -> %.6g; TFLite-built vs reference: losses differ by <= %.2g, trained tensors by <= %.2g "
                   "(moved up to %.3g)\n", k->name, k->subgraph ? "(subgraph 0's .tflite run left out)" : ".tflite",
                   worst_f, big, OPS_STEPS, (double)lt[0],
                   (double)lt[OPS_STEPS - 1], worst_l, worst_w, moved);
        }
        sy_train_session_release(sa);
        sy_train_session_release(sb);
    }
    /* the forms refused: batch axes that do not broadcast, channels that do not group */
    char p[800], want[2400];
    snprintf(p, sizeof p, "%s/bmm_batched.tflite", md);
    snprintf(want, sizeof want, "sy_train_build: %s: operator #0 (BATCH_MATMUL): batch axis 0: 'x' has 2 and 'w' 3, "
             "which do not broadcast", p);
    expect_build(p, want);
    snprintf(p, sizeof p, "%s/bmm_huge.tflite", md);
    snprintf(want, sizeof want, "sy_train_build: %s: operator #0 (BATCH_MATMUL): the product's [.., M, K, N] "
             "intermediate would have more than 2^63 elements", p);
    expect_build(p, want);
    snprintf(p, sizeof p, "%s/conv_bad_group.tflite", md);
    snprintf(want, sizeof want, "sy_train_build: %s: operator #0 (CONV_2D): filter 'conv/filter' has 3 input channels "
             "and 6 output channels for an input of 4 channels (a grouped convolution needs the filter's input "
             "channels to divide the input's, and the groups to divide the output channels)", p);
    expect_build(p, want);
}

static bool tensor_of(const char *dir, const char *name, float *v, int64_t cap, int64_t *n);

/* chain.tflite's gradients (ADD, MUL, SUB, ABS, DIV, CONCATENATION,
 * TRANSPOSE, STRIDED_SLICE, SQUEEZE between two FULLY_CONNECTED): the
 * translated training.onnx run directly for one batch gives d loss / d t for
 * every trained tensor t; each of their 123 elements against the central
 * difference of eval.onnx's loss (step 1e-3), as train.session checks
 * mnist-8's: within 2e-2 relative beyond the float32 resolution of the
 * difference quotient (4 ulp of the loss / 2h). */
static void test_chain_gradients(void)
{
    const char *md = ops_models();
    REQUIRE(md, "SY_TFLITE_OPS_MODELS names the folder of tflite_ops_models.py's models");
    char tfl[800], dir[800], p[900];
    snprintf(tfl, sizeof tfl, "%s/chain.tflite", md);
    snprintf(dir, sizeof dir, "%s/chain_fd", work);
    sy_status *st = build_mse(tfl, dir);
    REQUIRE(!st, "build %s: %s", tfl, msg(st));
    sy_model *tm = NULL, *em = NULL;
    sy_session *ts = NULL, *es = NULL;
    snprintf(p, sizeof p, "%s/training.onnx", dir);
    st = sy_model_load(env, p, &tm);
    st = st ? st : sy_session_create(env, tm, NULL, &ts);
    snprintf(p, sizeof p, "%s/eval.onnx", dir);
    st = st ? st : sy_model_load(env, p, &em);
    st = st ? st : sy_session_create(env, em, NULL, &es);
    REQUIRE(!st, "chain artifacts: %s", msg(st));
    float x[OPS_BATCH * 8], y[OPS_BATCH * 3];
    rng = 4242;
    for (int i = 0; i < OPS_BATCH * 8; i++)
        x[i] = urand();
    for (int i = 0; i < OPS_BATCH * 3; i++)
        y[i] = 0.5f * urand();
    sy_tensor tx = f32(x, 2, (int64_t[]){OPS_BATCH, 8}), ty = f32(y, 2, (int64_t[]){OPS_BATCH, 3});
    const size_t n_in = sy_model_input_count(tm);
    REQUIRE(n_in == 2 + 7 && sy_model_input_count(em) == n_in, "training.onnx has %zu inputs, want x, labels and 7 "
            "trained tensors", n_in);
    float vals[7][64];
    int64_t lens[7] = {0};
    sy_tensor tv[7];
    const char *names[7];
    for (size_t i = 2; i < n_in; i++) {
        sy_value_info vi = {.struct_size = sizeof vi}, ve = {.struct_size = sizeof ve};
        REQUIRE(sy_model_input_info(tm, i, &vi) && sy_model_input_info(em, i, &ve) && !strcmp(vi.name, ve.name),
                "input %zu of training.onnx and eval.onnx", i);
        names[i - 2] = vi.name;
        REQUIRE(tensor_of(dir, vi.name, vals[i - 2], 64, &lens[i - 2]), "the initial values of '%s'", vi.name);
        tv[i - 2] = f32(vals[i - 2], vi.rank, vi.dims);
    }
    st = sy_session_set_input_by_index(ts, 0, &tx, SY_INPUT_COPY);
    st = st ? st : sy_session_set_input_by_index(ts, 1, &ty, SY_INPUT_COPY);
    for (size_t i = 2; !st && i < n_in; i++)
        st = sy_session_set_input_by_index(ts, i, &tv[i - 2], SY_INPUT_BORROW);
    st = st ? st : sy_session_run(ts);
    REQUIRE(!st, "chain training run: %s", msg(st));
    double worst = 0, worst_abs = 0, biggest = 0;
    int checked = 0;
    for (size_t k = 0; k + 2 < n_in; k++) {
        const sy_tensor *g = NULL;
        char want[300];
        snprintf(want, sizeof want, "grad.%s", names[k]);
        sy_value_info vo = {.struct_size = sizeof vo};
        REQUIRE(sy_model_output_info(tm, 1 + k, &vo) && !strcmp(vo.name, want), "output %zu of training.onnx is %s",
                1 + k, want);
        st = sy_session_get_output(ts, 1 + k, &g);
        REQUIRE(!st && sy_tensor_numel(g) == lens[k], "gradient of '%s': %s", names[k], msg(st));
        for (int64_t e = 0; e < lens[k]; e++) {
            float keep = vals[k][e];
            double l[2];
            for (int side = 0; side < 2; side++) {
                vals[k][e] = keep + (side ? -1.0f : 1.0f) * 1e-3f;
                st = sy_session_set_input_by_index(es, 0, &tx, SY_INPUT_COPY);
                st = st ? st : sy_session_set_input_by_index(es, 1, &ty, SY_INPUT_COPY);
                for (size_t i = 2; !st && i < n_in; i++)
                    st = sy_session_set_input_by_index(es, i, &tv[i - 2], SY_INPUT_BORROW);
                st = st ? st : sy_session_run(es);
                const sy_tensor *lo = NULL;
                st = st ? st : sy_session_get_output(es, 0, &lo);
                l[side] = st ? NAN : *(const float *)lo->data;
            }
            vals[k][e] = keep;
            REQUIRE(!st, "eval run: %s", msg(st));
            double num = (l[0] - l[1]) / 2e-3, an = ((const float *)g->data)[e];
            double resolution = 4.0 * fabs(l[0]) * 1.1920929e-7 / 2e-3;
            double err = fmax(0.0, fabs(num - an) - resolution) / fmax(fabs(num), 1e-2);
            worst = err == err ? fmax(worst, err) : INFINITY;
            worst_abs = fmax(worst_abs, fabs(num - an));
            biggest = fmax(biggest, fabs(an));
            checked++;
            CHECK(err < 2e-2, "chain gradient '%s'[%lld]: analytic %.6g, finite differences %.6g", names[k],
                  (long long)e, an, num);
        }
    }
    CHECK(biggest > 1e-2, "chain: the gradients are not all near zero (max %g)", biggest);
    printf("chain: %d gradient elements of 7 tensors (up to %.3g) vs central differences: largest difference %.2e, "
           "worst relative error beyond the float32 resolution %.2e\n", checked, biggest, worst_abs, worst);
    sy_session_release(ts);
    sy_session_release(es);
    sy_model_release(tm);
    sy_model_release(em);
}

/* ---- subgraphs ------------------------------------------------------------------------------ */

/* a fresh session's values of tensor `name` in the artifacts of `dir` */
static bool tensor_of(const char *dir, const char *name, float *v, int64_t cap, int64_t *n)
{
    sy_train_session *s = NULL;
    sy_status *st = sy_train_session_create(env, dir, &s);
    CHECK(!st, "session %s: %s", dir, msg(st));
    const float *p = s ? sy_train_session_tensor(s, name, n) : NULL;
    bool ok = p && *n <= cap;
    if (ok)
        memcpy(v, p, (size_t)*n * sizeof *v);
    sy_train_session_release(s);
    return ok;
}

/* two_sg.tflite (tflite_ops_models.py): subgraph 0 'infer', subgraph 1
 * 'train_head'. The name and the index choose the same translation; the
 * default is subgraph 0; the .tflite export of subgraph 1's training
 * rewrites subgraph 1's buffers and leaves subgraph 0's; an unknown name,
 * an index out of range, a signature naming a subgraph the model lacks and
 * a subgraph for an ONNX model are refused. */
static void test_subgraphs(void)
{
    const char *md = ops_models();
    REQUIRE(md, "SY_TFLITE_OPS_MODELS names the folder of tflite_ops_models.py's models");
    char tfl[800], ref[800], d1[800], di[800], d0[800], p[900], q[900];
    snprintf(tfl, sizeof tfl, "%s/two_sg.tflite", md);
    snprintf(ref, sizeof ref, "%s/two_sg_ref.onnx", md);
    snprintf(d1, sizeof d1, "%s/sg_name", work);
    snprintf(di, sizeof di, "%s/sg_index", work);
    snprintf(d0, sizeof d0, "%s/sg_default", work);
    sy_status *st = build_mse_sg(tfl, d1, "train_head");
    CHECK(!st, "build 'train_head': %s", msg(st));
    sy_status_free(st);
    st = build_mse_sg(tfl, di, "1");
    CHECK(!st, "build '1': %s", msg(st));
    sy_status_free(st);
    st = build_mse(tfl, d0);
    CHECK(!st, "build (default): %s", msg(st));
    sy_status_free(st);
    size_t n1 = 0, ni = 0;
    snprintf(p, sizeof p, "%s/forward.onnx", d1);
    snprintf(q, sizeof q, "%s/forward.onnx", di);
    uint8_t *a = slurp(p, &n1), *b = slurp(q, &ni);
    CHECK(a && b && n1 == ni && !memcmp(a, b, n1), "'train_head' and '1' give the same forward.onnx (%zu, %zu bytes)",
          n1, ni);
    free(a);
    free(b);
    tensors t0, t1;
    trained_names(d0, &t0);
    trained_names(d1, &t1);
    CHECK(t0.n == 2 && !strcmp(t0.names[0], "infer_fc/weights"), "subgraph 0 trains infer_fc (%zu tensors, '%s')",
          t0.n, t0.n ? t0.names[0] : "");
    CHECK(t1.n == 4, "subgraph 1 trains 4 tensors (%zu)", t1.n);
    /* train subgraph 1, export, read both subgraphs of the export back */
    const op_case *k = &OP_CASES[sizeof OP_CASES / sizeof OP_CASES[0] - 1];
    REQUIRE(k->subgraph, "the last case is two_sg");
    float l[OPS_STEPS];
    sy_train_session *s = train_ops(d1, k, l);
    REQUIRE(s, "train subgraph 1");
    char exp[900], e1[800], e0[800];
    snprintf(exp, sizeof exp, "%s/two_sg_trained.tflite", work);
    st = sy_train_session_export(s, exp);
    CHECK(!st, "export: %s", msg(st));
    sy_status_free(st);
    snprintf(e1, sizeof e1, "%s/sg_export1", work);
    snprintf(e0, sizeof e0, "%s/sg_export0", work);
    st = build_mse_sg(exp, e1, "train_head");
    CHECK(!st, "build the export's 'train_head': %s", msg(st));
    sy_status_free(st);
    st = build_mse_sg(exp, e0, "infer");
    CHECK(!st, "build the export's 'infer': %s", msg(st));
    sy_status_free(st);
    double moved = 0;
    for (size_t t = 0; t < t1.n; t++) {
        int64_t n = 0, m = 0;
        float v[64], w[64];
        const float *trained = sy_train_session_tensor(s, t1.names[t], &n);
        bool ok = trained && n <= 64 && tensor_of(e1, t1.names[t], v, 64, &m) && m == n &&
                  tensor_of(di, t1.names[t], w, 64, &m);
        CHECK(ok, "'%s' in the trained session, the export's subgraph 1 and the untrained build", t1.names[t]);
        for (int64_t i = 0; ok && i < n; i++) {
            moved = fmax(moved, fabs((double)v[i] - w[i]));
            CHECK(v[i] == trained[i], "'%s'[%lld]: exported %.9g, trained %.9g", t1.names[t], (long long)i,
                  (double)v[i], (double)trained[i]);
        }
    }
    CHECK(moved > 1e-3, "the export's subgraph 1 holds trained values (moved by %g)", moved);
    for (size_t t = 0; t < t0.n; t++) {
        int64_t n = 0, m = 0;
        float v[64], w[64];
        bool ok = tensor_of(e0, t0.names[t], v, 64, &n) && tensor_of(d0, t0.names[t], w, 64, &m) && n == m;
        CHECK(ok && !memcmp(v, w, (size_t)n * sizeof *v), "'%s' of subgraph 0 is the source's in the export",
              t0.names[t]);
    }
    sy_train_session_release(s);
    /* sig_one.tflite: the signature '1' is subgraph 0 (a name before an
     * index), and the export of 'head' (subgraph 1) writes subgraph 1: the
     * artifacts keep the index, which the export does not read as a name */
    char one[800], o1[800], oh[800], oe[800];
    snprintf(one, sizeof one, "%s/sig_one.tflite", md);
    snprintf(o1, sizeof o1, "%s/sig_one_1", work);
    snprintf(oh, sizeof oh, "%s/sig_one_head", work);
    snprintf(oe, sizeof oe, "%s/sig_one_export", work);
    tensors tn;
    st = build_mse_sg(one, o1, "1");
    CHECK(!st, "build sig_one '1': %s", msg(st));
    sy_status_free(st);
    trained_names(o1, &tn);
    CHECK(tn.n == 2 && !strcmp(tn.names[0], "infer_fc/weights"), "signature '1' is subgraph 0 (%zu tensors)", tn.n);
    st = build_mse_sg(one, oh, "head");
    CHECK(!st, "build sig_one 'head': %s", msg(st));
    sy_status_free(st);
    s = train_ops(oh, k, l);
    REQUIRE(s, "train sig_one 'head'");
    snprintf(exp, sizeof exp, "%s/sig_one_trained.tflite", work);
    st = sy_train_session_export(s, exp);
    CHECK(!st, "export sig_one: %s", msg(st));
    sy_status_free(st);
    st = build_mse_sg(exp, oe, "head");
    CHECK(!st, "build the export's 'head': %s", msg(st));
    sy_status_free(st);
    {
        int64_t n = 0, m = 0;
        float v[64];
        const float *trained = sy_train_session_tensor(s, "fc2/weights", &n);
        CHECK(trained && tensor_of(oe, "fc2/weights", v, 64, &m) && m == n &&
                  !memcmp(v, trained, (size_t)n * sizeof *v),
              "the export of 'head' holds subgraph 1's trained fc2/weights");
    }
    sy_train_session_release(s);
    printf("two_sg: subgraph 'train_head' = '1' (%zu bytes of forward.onnx); trained %zu tensors (moved up to %.3g), "
           "exported into subgraph 1, subgraph 0's %zu untouched; sig_one: signature '1' is subgraph 0, the export "
           "of 'head' writes subgraph 1\n", n1, t1.n, moved, t0.n);
    /* refusals: a name no signature has, an index past the last, an ONNX model */
    char want[2400];
    snprintf(p, sizeof p, "%s/refused", work);
    st = build_mse_sg(tfl, p, "nope");
    CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_FOUND, "an unknown name is SY_ERR_NOT_FOUND");
    snprintf(want, sizeof want, "sy_train_build: %s: no subgraph 'nope': the model's signatures are 'infer' (subgraph "
             "0), 'train_head' (subgraph 1); give a signature name or an index from 0 to 1", tfl);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, want);
    if (st)
        printf("refused: %s\n", sy_status_get_message(st));
    sy_status_free(st);
    st = build_mse_sg(tfl, p, "2");
    CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_FOUND, "an index out of range is SY_ERR_NOT_FOUND");
    snprintf(want, sizeof want, "sy_train_build: %s: subgraph 2 is out of range: the model has 2 subgraphs (0 to 1)",
             tfl);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, want);
    if (st)
        printf("refused: %s\n", sy_status_get_message(st));
    sy_status_free(st);
    char far[800];
    snprintf(far, sizeof far, "%s/sig_far.tflite", md);
    st = build_mse_sg(far, p, "far");
    CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL, "a signature past the subgraphs is INVALID_MODEL");
    snprintf(want, sizeof want, "sy_train_build: %s: signature 'far' names subgraph 5, but the model has 1 "
             "subgraph", far);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, want);
    if (st)
        printf("refused: %s\n", sy_status_get_message(st));
    sy_status_free(st);
    st = build_mse_sg(ref, p, "train_head");
    CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_ARGUMENT, "a subgraph for an ONNX model is refused");
    snprintf(want, sizeof want, "sy_train_build: %s: subgraph 'train_head' was chosen, but this is not a TFLite model "
             "(subgraphs are chosen in TFLite models only)", ref);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, want);
    if (st)
        printf("refused: %s\n", sy_status_get_message(st));
    sy_status_free(st);
}

/* ---- refusals ------------------------------------------------------------------------------ */

static void expect_build(const char *model, const char *want)
{
    char dir[800];
    snprintf(dir, sizeof dir, "%s/refused", work);
    sy_status *st = build_mse(model, dir);
    CHECK(st != NULL, "%s was accepted", model);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, want);
    if (st)
        printf("refused: %s\n", sy_status_get_message(st));
    sy_status_free(st);
}

static void test_refusals(void)
{
    char p[800], want[2400];
    /* an operator with no translation (EXP), named with its index */
    snprintf(p, sizeof p, "%s/exp.tflite", work);
    REQUIRE(write_cnn(p, TAIL_EXP), "write");
    snprintf(want, sizeof want, "sy_train_build: %s: operator #3 (EXP, builtin code 47) has no ONNX translation for "
             "training (the translated operators are listed in docs/training.md)", p);
    expect_build(p, want);
    /* a STRIDED_SLICE sy_ss_resolve refuses (a zero stride), its reason relayed */
    snprintf(p, sizeof p, "%s/ss_zero_step.tflite", work);
    REQUIRE(write_cnn(p, TAIL_SS_ZERO_STEP), "write");
    snprintf(want, sizeof want, "sy_train_build: %s: operator #3 (STRIDED_SLICE): strides[1] is 0", p);
    expect_build(p, want);
    /* truncated: the identifier is there, the tables are not */
    size_t n;
    uint8_t *b = cnn_model(&n, TAIL_FC);
    REQUIRE(b, "model");
    snprintf(p, sizeof p, "%s/truncated.tflite", work);
    CHECK(spit(p, b, n / 3), "write");
    snprintf(want, sizeof want, "sy_train_build: %s: corrupt TFLite file: ", p);
    expect_build(p, want);
    /* every shorter prefix is refused without a crash (the reader bounds-checks) */
    int refused = 0, tried = 0;
    for (size_t len = 8; len < n; len += 7) {
        char d2[800];
        snprintf(d2, sizeof d2, "%s/prefix", work);
        CHECK(spit(p, b, len), "write");
        sy_status *st = build_mse(p, d2);
        refused += st != NULL;
        tried++;
        sy_status_free(st);
    }
    CHECK(refused == tried, "%d of %d truncated files refused", refused, tried);
    free(b);
    /* a quantized model: the first quantized tensor is named */
    snprintf(p, sizeof p, "%s/models/tflite/hello_world_int8/model.tflite", shared);
    if (exists(p)) {
        snprintf(want, sizeof want, "sy_train_build: %s: tensor #0 'serving_default_dense_input:0' is quantized "
                 "INT8: only float TFLite models are translated for training", p);
        expect_build(p, want);
    } else {
        printf("note: %s is absent: the quantized refusal is not checked\n", p);
    }
    /* .tflite export of artifacts built from ONNX */
    char onnx[800], dir[800], out[900];
    snprintf(onnx, sizeof onnx, "%s/cnn_fwd.onnx", work);
    snprintf(dir, sizeof dir, "%s/cnn_onnx", work);
    snprintf(p, sizeof p, "%s/cnn2.tflite", work);
    char d1[800], fwd[900];
    snprintf(d1, sizeof d1, "%s/cnn2", work);
    snprintf(fwd, sizeof fwd, "%s/forward.onnx", d1);
    REQUIRE(write_cnn(p, TAIL_FC), "write");
    sy_status *st = build_mse(p, d1);
    REQUIRE(!st, "build: %s", msg(st));
    st = build_mse(fwd, dir);
    REQUIRE(!st, "build from the translated ONNX: %s", msg(st));
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    REQUIRE(!st, "session: %s", msg(st));
    snprintf(out, sizeof out, "%s/out.tflite", dir);
    st = sy_train_session_export(s, out);
    snprintf(want, sizeof want, "sy_train_session_export: %s: a .tflite export needs artifacts built from a TFLite "
             "model, and %s has no source.tflite (built from an ONNX model: export .onnx)", out, dir);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, want);
    if (st)
        printf("refused: %s\n", sy_status_get_message(st));
    sy_status_free(st);
    CHECK(!exists(out), "nothing written");
    sy_train_session_release(s);
}

/* ---- files for the real-TFLite check --------------------------------------------------------- */

static void export_for_real(const char *out)
{
    char d[800], cmd[2000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/sine' '%s/conv'", out, out);
    REQUIRE(system(cmd) == 0, "mkdir");
    /* the sine model trained as in test_sine, the CNN as in test_conv */
    char tfl[800];
    snprintf(tfl, sizeof tfl, "%s/models/tflite/hello_world_float/model.tflite", shared);
    if (exists(tfl)) {
        snprintf(d, sizeof d, "%s/sine", out);
        sy_status *st = build_mse(tfl, d);
        REQUIRE(!st, "build: %s", msg(st));
        float l[SINE_STEPS];
        sy_train_session *s = train_sine(d, l, NULL);
        REQUIRE(s, "train");
        char p[900];
        snprintf(p, sizeof p, "%s/model.tflite", d);
        st = sy_train_session_export(s, p);
        snprintf(p, sizeof p, "%s/model.onnx", d);
        st = st ? st : sy_train_session_export(s, p);
        CHECK(!st, "export: %s", msg(st));
        sy_train_session_release(s);
    }
    char model[900];
    snprintf(d, sizeof d, "%s/conv", out);
    snprintf(model, sizeof model, "%s/conv/cnn.tflite", out);
    REQUIRE(write_cnn(model, TAIL_FC), "write");
    sy_status *st = build_mse(model, d);
    REQUIRE(!st, "build: %s", msg(st));
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, d, &s);
    REQUIRE(!st, "session: %s", msg(st));
    float x[4 * 72], y[12], loss;
    rng = 5;
    for (int i = 0; i < 4 * 72; i++)
        x[i] = urand();
    for (int i = 0; i < 12; i++)
        y[i] = 0.5f * urand();
    sy_tensor tx = f32(x, 4, (int64_t[]){4, 6, 6, 2}), ty = f32(y, 2, (int64_t[]){4, 3});
    for (int k = 0; k < 6 && !st; k++)
        st = sy_train_session_step(s, (const sy_tensor *[]){&tx, &ty}, 2, 0.05f, &loss);
    char p[900];
    snprintf(p, sizeof p, "%s/model.tflite", d);
    st = st ? st : sy_train_session_export(s, p);
    snprintf(p, sizeof p, "%s/model.onnx", d);
    st = st ? st : sy_train_session_export(s, p);
    CHECK(!st, "train and export: %s", msg(st));
    sy_train_session_release(s);
    /* the models of tflite_ops_models.py, trained as in test_ops */
    for (size_t c = 0; ops_models() && c < sizeof OP_CASES / sizeof OP_CASES[0]; c++) {
        const op_case *k = &OP_CASES[c];
        snprintf(d, sizeof d, "%s/%s", out, k->name);
        snprintf(model, sizeof model, "%s/%s.tflite", ops_models(), k->name);
        st = build_mse_sg(model, d, k->subgraph);
        REQUIRE(!st, "build %s: %s", model, msg(st));
        float l[OPS_STEPS];
        s = train_ops(d, k, l);
        REQUIRE(s, "train %s", k->name);
        snprintf(p, sizeof p, "%s/model.tflite", d);
        st = sy_train_session_export(s, p);
        snprintf(p, sizeof p, "%s/model.onnx", d);
        st = st ? st : sy_train_session_export(s, p);
        CHECK(!st, "export %s: %s", k->name, msg(st));
        sy_train_session_release(s);
    }
}

/* ---- files for the `switchyard train` check (tflite_cli.sh) ------------------------------------- */

static bool npy(const char *path, const char *descr, const int64_t *dims, int rank, const void *data, size_t nbytes)
{
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int d = 0; d < rank; d++)
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld, ", (long long)dims[d]);
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
    while ((10 + n + 1) % 64)
        hdr[n++] = ' ';
    hdr[n++] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(n & 0xff), (uint8_t)(n >> 8)};
    bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, (size_t)n, f) == (size_t)n &&
              fwrite(data, 1, nbytes, f) == nbytes;
    return fclose(f) == 0 && ok;
}

/* D/cnn.tflite and D/data/{train,test}: 32 and 8 samples [6, 6, 2] of 3
 * classes (the class is where the sample's largest value lies) */
static void cli_files(const char *out)
{
    char p[900], cmd[2000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/data/train' '%s/data/test'", out, out);
    REQUIRE(system(cmd) == 0, "mkdir");
    snprintf(p, sizeof p, "%s/cnn.tflite", out);
    REQUIRE(write_cnn(p, TAIL_FC), "write %s", p);
    static float x[32 * 72];
    static int64_t lab[32];
    rng = 31;
    for (int i = 0; i < 32; i++) {
        int best = 0;
        for (int k = 0; k < 72; k++) {
            x[i * 72 + k] = urand();
            if (x[i * 72 + k] > x[i * 72 + best])
                best = k;
        }
        lab[i] = best % 3;
    }
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/in'", out);
    REQUIRE(system(cmd) == 0, "mkdir");
    snprintf(p, sizeof p, "%s/in/input_0.npy", out); /* one sample, as the model's input [1, 6, 6, 2] */
    CHECK(npy(p, "<f4", (int64_t[]){1, 6, 6, 2}, 4, x, 72 * 4), "write %s", p);
    const char *split[2] = {"train", "test"};
    for (int sp = 0; sp < 2; sp++) {
        int64_t n = sp ? 8 : 32;
        snprintf(p, sizeof p, "%s/data/%s/input_0.npy", out, split[sp]);
        CHECK(npy(p, "<f4", (int64_t[]){n, 6, 6, 2}, 4, x, (size_t)n * 72 * 4), "write %s", p);
        snprintf(p, sizeof p, "%s/data/%s/label_0.npy", out, split[sp]);
        CHECK(npy(p, "<i8", (int64_t[]){n}, 1, lab, (size_t)n * 8), "write %s", p);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_train_tflite sine|conv|refusals|ops|export SHARED_DIR WORK_DIR\n");
        return 2;
    }
    const char *group = argv[1];
    shared = argv[2];
    char hw[700];
    snprintf(hw, sizeof hw, "%s/models/tflite/hello_world_float/model.tflite", shared);
    if (!strcmp(group, "sine") && !exists(hw))
        SY_TEST_SKIP("%s is absent (the shared folder)", hw);
    sy_status *st = sy_env_create_from_string("[switchyard]\nplugin_dirs = @default\nproviders = cpu_ref\n", NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", msg(st));
        return 1;
    }
    if (!strcmp(group, "cli-files")) {
        cli_files(argv[3]);
        sy_env_release(env);
        return SY_TEST_MAIN_RESULT();
    }
    if (!strcmp(group, "export")) {
        snprintf(work, sizeof work, "%s", argv[3]);
        export_for_real(argv[3]);
        sy_env_release(env);
        return SY_TEST_MAIN_RESULT();
    }
    snprintf(work, sizeof work, "%s/train_tflite_XXXXXX", argv[3]);
    if (!mkdtemp(work)) {
        fprintf(stderr, "cannot make a work folder under %s\n", argv[3]);
        return 1;
    }
    if (!strcmp(group, "sine"))
        RUN_TEST(test_sine);
    else if (!strcmp(group, "conv")) {
        RUN_TEST(test_conv);
        RUN_TEST(test_ws63);
    }
    else if (!strcmp(group, "refusals"))
        RUN_TEST(test_refusals);
    else if (!strcmp(group, "ops")) {
        RUN_TEST(test_ops);
        RUN_TEST(test_chain_gradients);
        RUN_TEST(test_subgraphs);
    }
    else {
        fprintf(stderr, "unknown group '%s'\n", group);
        return 2;
    }
    sy_env_release(env);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", work);
    return SY_TEST_MAIN_RESULT();
}
