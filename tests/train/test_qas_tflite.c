/*
 * int8 TFLite models as QAS-INT8 input (train_tflite_int8.c, sy_qas_session_*
 * on a .tflite): the models of qas_tflite_models.py (in $SY_QAS_TFLITE_MODELS)
 *   - mlp.tflite (QUANTIZE, FULLY_CONNECTED + RELU, FULLY_CONNECTED,
 *     SOFTMAX, DEQUANTIZE; both layers trained) and cnn.tflite (CONV_2D +
 *     RELU in the frozen front, RESHAPE, the FULLY_CONNECTED trained) and
 *     dw.tflite (DEPTHWISE_CONV_2D + RELU and MAX_POOL_2D in the front),
 *     ops.tflite (AVERAGE_POOL_2D, an int8-to-int8 QUANTIZE, MAX_POOL_2D,
 *     two ADDs of inputs of different scales and a CONCATENATION in the
 *     front), elem.tflite (broadcasting ADD, SUB and MUL, with int8
 *     constants too, fused RELU6 and RELU), padmean.tflite (PAD, PADV2,
 *     MEAN with and without keep_dims) and shape.tflite (TRANSPOSE,
 *     STRIDED_SLICE with negative strides, new axes and a shrink, SQUEEZE,
 *     MAXIMUM and MINIMUM broadcast or with an int8 constant, ADD with a
 *     fused RELU_N1_TO_1) in the front, each
 *     against NAME_ref.onnx, the same network written by hand in ONNX QDQ:
 *     the codes the session read are the ones the generator wrote
 *     (NAME_codes.bin); the front's codes, the forward's logits and loss,
 *     every step's loss and logits, and after the steps every trained int8
 *     code, int32 bias and float master copy are bit-identical, and the
 *     steps changed codes;
 *   - conv.tflite (two CONV_2D, 3x3 SAME per-channel + RELU and 3x3 VALID
 *     per-tensor, RESHAPE, FULLY_CONNECTED; all three layers trained, with
 *     --target ws63's rows) against conv_ref.onnx, the same network written
 *     in NCHW: the front's codes (transposed here), the logits and losses of
 *     the forward and every step, and after the steps the filters' and the
 *     Gemm's codes, biases and master copies (the Gemm's columns reordered
 *     here from the NCHW to the NHWC flattening) bit-identical; the .tflite
 *     export holds the twin's trained OIHW filter codes transposed here to
 *     OHWI, its Gemm codes in the NHWC order, every other byte unchanged;
 *     conv_nhwc.onnx (that NHWC form by hand, a Relu before the second
 *     Transpose) trains as conv.tflite does, bit for bit;
 *     a 5x5 CONV_2D trained for ws63 is refused quoting the seed's row, a
 *     dilated one as outside the kernels;
 *   - pool.tflite (CONV_2D + RELU, MAX_POOL_2D 2x2, RESHAPE,
 *     FULLY_CONNECTED; last:2 for ws63, the gradient through the pool)
 *     against pool_ref.onnx in NCHW: the forward and every step bit for
 *     bit, the trained codes and master copies the twin's (the Gemm's
 *     columns reordered), the .tflite export read back; bad_pool_u8.onnx
 *     (a pool of uint8 codes) declined for ws63 quoting the MaxPool row;
 *   - the refusals: bad_TAG.tflite, the mlp with one thing wrong in its
 *     quantization or operators, and a float model, each refused with its
 *     status code and a message naming what and where.
 *
 *   - `cli OUT`: after `switchyard train --mode qas-int8 mlp.tflite -o OUT`,
 *     OUT/model.tflite and OUT/model.onnx read back with the same codes,
 *     which training changed.
 *
 *   - `cli OUT SRC SUBGRAPH`: the same after `switchyard train --mode qas-int8
 *     SRC --subgraph SUBGRAPH -o OUT`, OUT/model.tflite read with that
 *     subgraph.
 *
 *   test_qas_tflite WORKDIR | cli OUT [SRC SUBGRAPH]   (SY_QAS_TFLITE_MODELS set)
 */
#include "sy_test.h"
#include "switchyard/switchyard.h"
#include "switchyard/sy_train.h"

#include <stdint.h>

static sy_env *env;
static const char *models;

static uint32_t rng = 12345u;
static float urand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) * (1.0 / 16777216.0));
}

static const char *path_of(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", models, name);
    return buf[k];
}

static size_t read_all(const char *path, void *out, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(out, 1, cap, f);
    fclose(f);
    return n;
}

enum { BATCH = 3, STEPS = 8 };

typedef struct model_case {
    const char *name; /* the twin NAME_ref.onnx, the codes NAME_codes.bin */
    int last_k;
    int32_t rank;
    int64_t dims[4];
    const char *file;     /* the .tflite (NULL: NAME.tflite) */
    const char *subgraph; /* its subgraph chosen (NULL: 0) */
} model_case;

/* the subgraph chosen for the .tflite files the sessions read */
static const char *tfl_subgraph;

static bool is_tflite(const char *file)
{
    size_t n = strlen(file);
    return n > 7 && !strcmp(file + n - 7, ".tflite");
}

static sy_qas_session *open_session(const char *file, int last_k)
{
    sy_qas_options o = {.struct_size = sizeof o, .last_k = last_k, .momentum = 0.9f,
                        .subgraph = is_tflite(file) ? tfl_subgraph : NULL};
    sy_qas_session *s = NULL;
    sy_status *st = sy_qas_session_create(env, path_of(file), &o, &s, NULL);
    CHECK(!st, "%s: %s", file, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return s;
}

static bool same_layers(sy_qas_session *a, sy_qas_session *b, const char *what)
{
    bool ok = sy_qas_session_layer_count(a) == sy_qas_session_layer_count(b);
    CHECK(ok, "%s: %zu and %zu layers", what, sy_qas_session_layer_count(a), sy_qas_session_layer_count(b));
    for (size_t i = 0; ok && i < sy_qas_session_layer_count(a); i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        bool got = sy_qas_session_layer(a, i, &x) && sy_qas_session_layer(b, i, &y);
        CHECK(got, "%s: layer %zu", what, i);
        if (!got)
            return false;
        size_t o = (size_t)x.o, ok_ = (size_t)x.o * (size_t)x.k;
        bool geo = x.k == y.k && x.o == y.o && x.relu == y.relu && x.conv == y.conv && x.x_zp == y.x_zp &&
                   x.y_zp == y.y_zp && !memcmp(&x.x_scale, &y.x_scale, 4) && !memcmp(&x.y_scale, &y.y_scale, 4);
        CHECK(geo, "%s: layer %zu: shapes, scales or zero points differ", what, i);
        if (!geo)
            return false;
        bool eq = !memcmp(x.w_scale, y.w_scale, o * 4) && !memcmp(x.w, y.w, ok_) &&
                  (!x.bias) == (!y.bias) && (!x.bias || !memcmp(x.bias, y.bias, o * 4)) &&
                  !memcmp(x.w_master, y.w_master, ok_ * 4) && (!x.b_master || !memcmp(x.b_master, y.b_master, o * 4));
        CHECK(eq, "%s: layer %zu ('%s' and '%s'): codes, biases, scales or master copies differ", what, i, x.name,
              y.name);
        ok = eq;
    }
    return ok;
}

/* the trained codes, biases, scales and zero points of a and b are the same
 * (not the master copies: a session read from an exported model starts its
 * masters at the codes) */
static bool same_codes(sy_qas_session *a, sy_qas_session *b, const char *what)
{
    bool ok = sy_qas_session_layer_count(a) == sy_qas_session_layer_count(b);
    CHECK(ok, "%s: %zu and %zu layers", what, sy_qas_session_layer_count(a), sy_qas_session_layer_count(b));
    for (size_t i = 0; ok && i < sy_qas_session_layer_count(a); i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        ok = sy_qas_session_layer(a, i, &x) && sy_qas_session_layer(b, i, &y) && x.k == y.k && x.o == y.o &&
             x.x_zp == y.x_zp && x.y_zp == y.y_zp && !memcmp(&x.x_scale, &y.x_scale, 4) &&
             !memcmp(&x.y_scale, &y.y_scale, 4) && !memcmp(x.w_scale, y.w_scale, (size_t)x.o * 4) &&
             !memcmp(x.w, y.w, (size_t)x.o * (size_t)x.k) && x.bias && y.bias &&
             !memcmp(x.bias, y.bias, (size_t)x.o * 4);
        CHECK(ok, "%s: layer %zu: the codes, biases or scales differ", what, i);
    }
    return ok;
}

/* where `what` (n bytes) sits in buf, once; -1 when absent or not unique */
static long find_once(const uint8_t *buf, size_t len, const void *what, size_t n)
{
    long at = -1;
    for (size_t i = 0; n && i + n <= len; i++)
        if (!memcmp(buf + i, what, n)) {
            if (at >= 0)
                return -1;
            at = (long)i;
        }
    return at;
}

/* The export of trained session a (read from TFL, whose original codes are
 * codes[0..nc)): OUT.tflite is the source with the trained codes and biases
 * where the generator wrote the original ones and every other byte as it
 * was; read back, it and OUT.onnx give a's codes. */
static void check_export(sy_qas_session *a, int last_k, const char *tfl, const uint8_t *codes, size_t nc,
                         const char *out)
{
    static uint8_t src[1 << 16], exp[1 << 16], mask[1 << 16];
    char pt[1200], po[1200];
    snprintf(pt, sizeof pt, "%s/%s.tflite", models, out);
    snprintf(po, sizeof po, "%s/%s.onnx", models, out);
    sy_status *st = sy_qas_session_export(a, pt);
    CHECK(!st, "export %s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    st = sy_qas_session_export(a, po);
    CHECK(!st, "export %s: %s", po, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    size_t ns = read_all(path_of(tfl), src, sizeof src), ne = read_all(pt, exp, sizeof exp);
    REQUIRE(ns > 0 && ns < sizeof src && ne == ns, "%s: %zu bytes, the source %zu", pt, ne, ns);
    memset(mask, 0, ns);
    size_t at = 0, changed = 0;
    for (size_t i = 0; i < sy_qas_session_layer_count(a); i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x};
        REQUIRE(sy_qas_session_layer(a, i, &x), "layer %zu", i);
        size_t wb = (size_t)x.o * (size_t)x.k, bb = (size_t)x.o * 4;
        REQUIRE(at + wb + bb <= nc, "codes of layer %zu", i);
        long wo = find_once(src, ns, codes + at, wb), bo = find_once(src, ns, codes + at + wb, bb);
        REQUIRE(wo >= 0 && bo >= 0, "%s: layer %zu's original codes and biases are found once in the source", tfl, i);
        CHECK(!memcmp(exp + wo, x.w, wb), "%s: layer %zu's buffer holds its trained codes", pt, i);
        CHECK(!memcmp(exp + bo, x.bias, bb), "%s: layer %zu's bias buffer holds its trained biases", pt, i);
        changed += (size_t)(memcmp(exp + wo, src + wo, wb) != 0);
        memset(mask + wo, 1, wb);
        memset(mask + bo, 1, bb);
        at += wb + bb;
    }
    CHECK(changed > 0, "%s: no trained buffer changed", pt);
    size_t other = 0;
    for (size_t i = 0; i < ns; i++)
        other += !mask[i] && exp[i] != src[i];
    CHECK(other == 0, "%s: %zu bytes outside the trained buffers changed", pt, other);
    sy_qas_options o = {.struct_size = sizeof o, .last_k = last_k, .subgraph = tfl_subgraph};
    sy_qas_session *t = NULL, *q = NULL;
    st = sy_qas_session_create(env, pt, &o, &t, NULL);
    o.subgraph = NULL;
    CHECK(!st, "%s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    st = sy_qas_session_create(env, po, &o, &q, NULL);
    CHECK(!st, "%s: %s", po, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (t)
        same_codes(a, t, pt);
    if (q)
        same_codes(a, q, po);
    CHECK(t && sy_qas_session_from_tflite(t) && q && !sy_qas_session_from_tflite(q), "from_tflite");
    /* an ONNX model's session has no .tflite to write into */
    char bad[1200];
    snprintf(bad, sizeof bad, "%s/%s_from_onnx.tflite", models, out);
    st = q ? sy_qas_session_export(q, bad) : NULL;
    CHECK(st && sy_status_get_code(st) == SY_ERR_UNSUPPORTED, "a .tflite export of an ONNX model's session");
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "a .tflite export needs a session built from an int8 TFLite "
                                                         "model (this one is an ONNX model's: export it as .onnx)");
    sy_status_free(st);
    sy_qas_session_release(t);
    sy_qas_session_release(q);
}

static void test_twin(const model_case *mc)
{
    char tfl[128], ref[128], codes[128];
    snprintf(tfl, sizeof tfl, "%s", mc->file ? mc->file : "");
    if (!mc->file)
        snprintf(tfl, sizeof tfl, "%s.tflite", mc->name);
    tfl_subgraph = mc->subgraph;
    snprintf(ref, sizeof ref, "%s_ref.onnx", mc->name);
    snprintf(codes, sizeof codes, "%s_codes.bin", mc->name);
    sy_qas_session *a = open_session(tfl, mc->last_k), *b = open_session(ref, mc->last_k);
    if (!a || !b)
        goto done;
    CHECK(sy_qas_session_layer_count(a) == (size_t)mc->last_k, "%s: %zu layers", tfl, sy_qas_session_layer_count(a));

    /* the codes read are the ones written */
    static uint8_t want[4096];
    size_t nw = read_all(path_of(codes), want, sizeof want), at = 0;
    CHECK(nw > 0, "%s is readable", codes);
    for (size_t i = 0; i < sy_qas_session_layer_count(a); i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x};
        REQUIRE(sy_qas_session_layer(a, i, &x), "layer %zu", i);
        size_t wb = (size_t)x.o * (size_t)x.k, bb = (size_t)x.o * 4;
        CHECK(at + wb + bb <= nw && !memcmp(x.w, want + at, wb) && x.bias && !memcmp(x.bias, want + at + wb, bb),
              "%s: layer %zu ('%s'): its int8 codes and int32 biases are the model's", tfl, i, x.name);
        at += wb + bb;
    }
    CHECK(at == nw, "%s: %zu of %zu code bytes compared", tfl, at, nw);

    /* inputs and labels */
    int64_t n = 1;
    for (int32_t d = 0; d < mc->rank; d++)
        n *= mc->dims[d];
    float *X = malloc((size_t)n * sizeof *X);
    int64_t Y[BATCH];
    REQUIRE(X, "memory");
    for (int64_t i = 0; i < n; i++)
        X[i] = 2.0f * urand() - 1.0f;
    for (int i = 0; i < BATCH; i++)
        Y[i] = i % 4;
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = mc->rank, .data = X,
                    .nbytes = (size_t)n * 4};
    memcpy(tx.dims, mc->dims, sizeof mc->dims);
    sy_tensor ty = {.struct_size = sizeof ty, .dtype = SY_DT_INT64, .rank = 1, .dims = {BATCH}, .data = Y,
                    .nbytes = sizeof Y};
    const sy_tensor *in[2] = {&tx, &ty};

    /* the front's codes */
    const sy_tensor *fa = NULL, *fb = NULL;
    sy_status *st = sy_qas_session_front(a, in, 1, &fa);
    CHECK(!st, "front %s: %s", tfl, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    static uint8_t fcopy[4096];
    size_t fn = fa ? fa->nbytes : 0;
    if (fa && fn <= sizeof fcopy)
        memcpy(fcopy, fa->data, fn);
    st = sy_qas_session_front(b, in, 1, &fb);
    CHECK(!st, "front %s: %s", ref, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    CHECK(fa && fb && fn <= sizeof fcopy && fb->nbytes == fn && fa->dtype == SY_DT_INT8 && !memcmp(fcopy, fb->data, fn),
          "%s: the frozen front's int8 codes are the twin's", tfl);

    /* the forward, then the steps, bit for bit */
    float la = 0, lb = 0;
    const sy_tensor *oa = NULL, *ob = NULL;
    static float ocopy[64];
    st = sy_qas_session_eval(a, in, 2, &la, &oa);
    CHECK(!st, "eval %s: %s", tfl, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (oa && oa->nbytes <= sizeof ocopy)
        memcpy(ocopy, oa->data, oa->nbytes);
    st = sy_qas_session_eval(b, in, 2, &lb, &ob);
    CHECK(!st, "eval %s: %s", ref, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    CHECK(oa && ob && oa->nbytes == (size_t)BATCH * 4 * 4 && ob->nbytes == oa->nbytes &&
              !memcmp(ocopy, ob->data, ob->nbytes) && !memcmp(&la, &lb, 4),
          "%s: the forward's logits and loss (%.9g) are the twin's (%.9g)", tfl, (double)la, (double)lb);
    printf("%s: forward loss %.9g (the twin's %.9g)\n", tfl, (double)la, (double)lb);

    static int8_t w0[4096];
    sy_qas_layer_info l0 = {.struct_size = sizeof l0};
    REQUIRE(sy_qas_session_layer(a, 0, &l0), "layer 0");
    size_t n0 = (size_t)l0.o * (size_t)l0.k;
    REQUIRE(n0 <= sizeof w0, "layer 0 size");
    memcpy(w0, l0.w, n0);
    for (int k = 0; k < STEPS; k++) {
        st = sy_qas_session_step(a, in, 2, 0.5f, &la, &oa);
        CHECK(!st, "step %d %s: %s", k, tfl, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        if (oa && oa->nbytes <= sizeof ocopy)
            memcpy(ocopy, oa->data, oa->nbytes);
        st = sy_qas_session_step(b, in, 2, 0.5f, &lb, &ob);
        CHECK(!st, "step %d %s: %s", k, ref, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        CHECK(oa && ob && ob->nbytes == oa->nbytes && !memcmp(ocopy, ob->data, ob->nbytes) && !memcmp(&la, &lb, 4),
              "%s: step %d: the logits and loss (%.9g) are the twin's (%.9g)", tfl, k, (double)la, (double)lb);
    }
    printf("%s: loss after %d steps %.9g (the twin's %.9g)\n", tfl, STEPS, (double)la, (double)lb);
    same_layers(a, b, tfl);
    REQUIRE(sy_qas_session_layer(a, 0, &l0), "layer 0");
    size_t changed = 0;
    for (size_t i = 0; i < n0; i++)
        changed += l0.w[i] != w0[i];
    CHECK(changed > 0, "%s: the steps changed none of layer 0's %zu codes", tfl, n0);
    printf("%s: %zu of layer 0's %zu int8 codes changed in %d steps\n", tfl, changed, n0, STEPS);
    char out[160];
    snprintf(out, sizeof out, "%s%s%s_trained", mc->name, mc->subgraph ? "_sg_" : "", mc->subgraph ? mc->subgraph : "");
    check_export(a, mc->last_k, tfl, want, nw, out);
    free(X);
done:
    sy_qas_session_release(a);
    sy_qas_session_release(b);
    tfl_subgraph = NULL;
}

static void test_twins(void)
{
    static const model_case mlp = {"mlp", 2, 2, {BATCH, 8}, NULL, NULL},
                            cnn = {"cnn", 1, 4, {BATCH, 6, 6, 2}, NULL, NULL},
                            dw = {"dw", 1, 4, {BATCH, 8, 8, 2}, NULL, NULL},
                            ops = {"ops", 1, 4, {BATCH, 6, 6, 2}, NULL, NULL};
    test_twin(&mlp);
    test_twin(&cnn);
    test_twin(&dw);
    test_twin(&ops);
    /* two.tflite's subgraphs, by signature name and by index, against the twins of the models they hold */
    static const model_case two_mlp = {"mlp", 2, 2, {BATCH, 8}, "two.tflite", "train_mlp"},
                            two_cnn = {"cnn", 1, 4, {BATCH, 6, 6, 2}, "two.tflite", "0"},
                            two_mlp1 = {"mlp", 2, 2, {BATCH, 8}, "two.tflite", "1"};
    test_twin(&two_mlp);
    test_twin(&two_cnn);
    test_twin(&two_mlp1);
}

/* elem.tflite, padmean.tflite (ADD, SUB, MUL, PAD, PADV2, MEAN in the front) and shape.tflite (TRANSPOSE,
 * STRIDED_SLICE, SQUEEZE, MAXIMUM, MINIMUM, a fused RELU_N1_TO_1) against their twins; run after the other
 * tests, so the inputs those draw from urand are what they were before these models */
static void test_front_twins(void)
{
    static const model_case elem = {"elem", 1, 4, {BATCH, 6, 6, 2}, NULL, NULL},
                            padmean = {"padmean", 1, 4, {BATCH, 6, 6, 2}, NULL, NULL},
                            shape = {"shape", 1, 4, {BATCH, 6, 6, 2}, NULL, NULL};
    test_twin(&elem);
    test_twin(&padmean);
    test_twin(&shape);
}

/* ---- conv.tflite: trained CONV_2D layers against the NCHW twin ---------------------- */

enum { CH = 6, CW = 6, CC = 2, C1 = 3, C2 = 2, O2 = 4, CK = C2 * O2 * O2, NCLS = 4 };

/* [n][h][w][c] -> [n][c][h][w] */
static void nhwc_to_nchw_f(const float *x, float *y, int n, int h, int w, int c)
{
    for (int a = 0; a < n; a++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                for (int k = 0; k < c; k++)
                    y[((a * c + k) * h + i) * w + j] = x[((a * h + i) * w + j) * c + k];
}

/* an [O, I, kh, kw] filter as [O, kh, kw, I] */
static void oihw_to_ohwi(const int8_t *x, int8_t *y, int o, int in, int kh, int kw)
{
    for (int a = 0; a < o; a++)
        for (int i = 0; i < in; i++)
            for (int h = 0; h < kh; h++)
                for (int w = 0; w < kw; w++)
                    y[((a * kh + h) * kw + w) * in + i] = x[((a * in + i) * kh + h) * kw + w];
}

/* the FC column of NCHW-flattened index (c, h, w) is the NHWC-flattened (h, w, c) */
static int col_nhwc(int k_nchw)
{
    int c = k_nchw / (O2 * O2), h = k_nchw / O2 % O2, w = k_nchw % O2;
    return (h * O2 + w) * C2 + c;
}

static sy_qas_session *open_ws63(const char *file, int last_k, sy_status **st)
{
    sy_qas_options o = {.struct_size = sizeof o, .last_k = last_k, .momentum = 0.9f, .target = "ws63"};
    sy_qas_session *s = NULL;
    *st = sy_qas_session_create(env, path_of(file), &o, &s, NULL);
    return s;
}

static void test_conv_twin(void)
{
    sy_status *st = NULL;
    sy_qas_session *a = open_ws63("conv.tflite", 3, &st);
    CHECK(!st, "conv.tflite: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    sy_qas_session *b = open_ws63("conv_ref.onnx", 3, &st);
    CHECK(!st, "conv_ref.onnx: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (!a || !b)
        goto done;
    REQUIRE(sy_qas_session_layer_count(a) == 3 && sy_qas_session_layer_count(b) == 3, "three trained layers");

    /* the codes read: conv_codes.bin has the filters OIHW and the FC weights in the NHWC flattening */
    static uint8_t want[4096];
    size_t nw = read_all(path_of("conv_codes.bin"), want, sizeof want), at = 0;
    const int32_t wo[3] = {C1, C2, NCLS}, wk[3] = {CC * 9, C1 * 9, CK};
    for (size_t i = 0; i < 3; i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        REQUIRE(sy_qas_session_layer(a, i, &x) && sy_qas_session_layer(b, i, &y), "layer %zu", i);
        REQUIRE(x.o == wo[i] && x.k == wk[i] && y.o == wo[i] && y.k == wk[i], "layer %zu is [%d, %d]", i, wo[i],
                wk[i]);
        CHECK(x.conv == (i < 2) && y.conv == (i < 2) && x.nhwc == (i < 2) && !y.nhwc,
              "layer %zu: a Conv (NHWC from the .tflite, NCHW in the twin) or the Gemm", i);
        size_t wb = (size_t)x.o * (size_t)x.k, bb = (size_t)x.o * 4;
        REQUIRE(at + wb + bb <= nw, "conv_codes.bin holds layer %zu", i);
        CHECK(!memcmp(x.w, want + at, wb) && x.bias && !memcmp(x.bias, want + at + wb, bb),
              "conv.tflite: layer %zu ('%s'): its int8 codes and int32 biases are the model's", i, x.name);
        bool twin = y.bias && !memcmp(y.bias, want + at + wb, bb);
        for (size_t k = 0; twin && k < wb; k++)
            twin = y.w[k] == (int8_t)want[at + (i < 2 ? k : k / CK * CK + (size_t)col_nhwc((int)(k % CK)))];
        CHECK(twin, "conv_ref.onnx: layer %zu ('%s'): its codes are the .tflite's (the Gemm's columns reordered)", i,
              y.name);
        at += wb + bb;
    }
    CHECK(at == nw, "conv_codes.bin: %zu of %zu bytes compared", at, nw);

    /* inputs: NHWC for the .tflite, the same values NCHW for the twin */
    enum { NX = BATCH * CH * CW * CC };
    static float X[NX], Xc[NX];
    int64_t Y[BATCH];
    for (int i = 0; i < NX; i++)
        X[i] = 2.0f * urand() - 1.0f;
    nhwc_to_nchw_f(X, Xc, BATCH, CH, CW, CC);
    for (int i = 0; i < BATCH; i++)
        Y[i] = (i + 1) % NCLS;
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 4, .dims = {BATCH, CH, CW, CC},
                    .data = X, .nbytes = sizeof X};
    sy_tensor tc = {.struct_size = sizeof tc, .dtype = SY_DT_FLOAT32, .rank = 4, .dims = {BATCH, CC, CH, CW},
                    .data = Xc, .nbytes = sizeof Xc};
    sy_tensor ty = {.struct_size = sizeof ty, .dtype = SY_DT_INT64, .rank = 1, .dims = {BATCH}, .data = Y,
                    .nbytes = sizeof Y};
    const sy_tensor *ia[2] = {&tx, &ty}, *ib[2] = {&tc, &ty};

    /* the fronts' codes: NHWC [3, 6, 6, 2] and NCHW [3, 2, 6, 6], the same values */
    const sy_tensor *fa = NULL, *fb = NULL;
    static int8_t fcopy[NX], ft[NX];
    st = sy_qas_session_front(a, ia, 1, &fa);
    CHECK(!st, "front conv.tflite: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    bool fok = fa && fa->dtype == SY_DT_INT8 && fa->rank == 4 && fa->dims[1] == CH && fa->dims[3] == CC &&
               fa->nbytes == NX;
    if (fok)
        memcpy(fcopy, fa->data, NX);
    st = sy_qas_session_front(b, ib, 1, &fb);
    CHECK(!st, "front conv_ref.onnx: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    fok = fok && fb && fb->rank == 4 && fb->dims[1] == CC && fb->nbytes == NX;
    for (int n = 0; fok && n < BATCH; n++)
        for (int i = 0; i < CH * CW; i++)
            for (int c = 0; c < CC; c++)
                ft[(n * CC + c) * CH * CW + i] = fcopy[(n * CH * CW + i) * CC + c];
    CHECK(fok && !memcmp(ft, fb->data, NX), "conv.tflite: the front's NHWC codes are the twin's NCHW codes");

    float la = 0, lb = 0, l0 = 0;
    const sy_tensor *oa = NULL, *ob = NULL;
    static float ocopy[BATCH * NCLS];
    st = sy_qas_session_eval(a, ia, 2, &la, &oa);
    CHECK(!st, "eval conv.tflite: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (oa && oa->nbytes == sizeof ocopy)
        memcpy(ocopy, oa->data, sizeof ocopy);
    st = sy_qas_session_eval(b, ib, 2, &lb, &ob);
    CHECK(!st, "eval conv_ref.onnx: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    CHECK(oa && ob && oa->nbytes == sizeof ocopy && ob->nbytes == sizeof ocopy &&
              !memcmp(ocopy, ob->data, sizeof ocopy) && !memcmp(&la, &lb, 4),
          "conv.tflite: the forward's logits and loss (%.9g) are the twin's (%.9g)", (double)la, (double)lb);
    printf("conv.tflite: forward loss %.9g (the twin's %.9g)\n", (double)la, (double)lb);
    l0 = la;

    static int8_t w0[2][64];
    for (size_t i = 0; i < 2; i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x};
        REQUIRE(sy_qas_session_layer(a, i, &x) && (size_t)x.o * (size_t)x.k <= sizeof w0[i], "layer %zu", i);
        memcpy(w0[i], x.w, (size_t)x.o * (size_t)x.k);
    }
    for (int k = 0; k < STEPS; k++) {
        st = sy_qas_session_step(a, ia, 2, 0.5f, &la, &oa);
        CHECK(!st, "step %d conv.tflite: %s", k, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        if (oa && oa->nbytes == sizeof ocopy)
            memcpy(ocopy, oa->data, sizeof ocopy);
        st = sy_qas_session_step(b, ib, 2, 0.5f, &lb, &ob);
        CHECK(!st, "step %d conv_ref.onnx: %s", k, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        CHECK(oa && ob && ob->nbytes == sizeof ocopy && !memcmp(ocopy, ob->data, sizeof ocopy) && !memcmp(&la, &lb, 4),
              "conv.tflite: step %d: the logits and loss (%.9g) are the twin's (%.9g)", k, (double)la, (double)lb);
    }
    printf("conv.tflite: loss after %d steps %.9g (the twin's %.9g)\n", STEPS, (double)la, (double)lb);
    CHECK(la < l0, "conv.tflite: the loss fell (%.9g -> %.9g)", (double)l0, (double)la);

    /* the trained state: the filters as they are, the Gemm's columns reordered */
    for (size_t i = 0; i < 3; i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        REQUIRE(sy_qas_session_layer(a, i, &x) && sy_qas_session_layer(b, i, &y), "layer %zu", i);
        size_t o = (size_t)x.o, nk = (size_t)x.o * (size_t)x.k;
        bool eq = x.bias && y.bias && !memcmp(x.bias, y.bias, o * 4) && x.b_master && y.b_master &&
                  !memcmp(x.b_master, y.b_master, o * 4) && x.w_master && y.w_master;
        for (size_t k = 0; eq && k < nk; k++) {
            size_t kx = i < 2 ? k : k / CK * CK + (size_t)col_nhwc((int)(k % CK));
            eq = x.w[kx] == y.w[k] && !memcmp(&x.w_master[kx], &y.w_master[k], 4);
        }
        CHECK(eq, "conv.tflite: layer %zu ('%s'): the trained codes, biases and master copies are the twin's", i,
              x.name);
        if (i < 2) {
            size_t changed = 0;
            for (size_t k = 0; k < nk; k++)
                changed += x.w[k] != w0[i][k];
            CHECK(changed > 0, "conv.tflite: the steps changed none of Conv %zu's %zu codes", i, nk);
            printf("conv.tflite: %zu of Conv %zu's %zu int8 filter codes changed in %d steps\n", changed, i, nk, STEPS);
        }
    }

    /* the .tflite export: the twin's trained OIHW filters transposed to OHWI where the
     * originals were, the Gemm's codes in the NHWC order, every other byte unchanged */
    static uint8_t src[1 << 16], exp[1 << 16], mask[1 << 16];
    char pt[1200];
    snprintf(pt, sizeof pt, "%s/conv_trained.tflite", models);
    st = sy_qas_session_export(a, pt);
    CHECK(!st, "export %s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    size_t ns = read_all(path_of("conv.tflite"), src, sizeof src), ne = read_all(pt, exp, sizeof exp);
    REQUIRE(ns > 0 && ns < sizeof src && ne == ns, "%s: %zu bytes, the source %zu", pt, ne, ns);
    memset(mask, 0, ns);
    at = 0;
    for (size_t i = 0; i < 3; i++) {
        sy_qas_layer_info y = {.struct_size = sizeof y};
        REQUIRE(sy_qas_session_layer(b, i, &y), "twin layer %zu", i);
        size_t wb = (size_t)y.o * (size_t)y.k, bb = (size_t)y.o * 4;
        static int8_t orig[4096], trained[4096];
        REQUIRE(wb <= sizeof orig, "layer %zu size", i);
        if (i < 2) { /* [O, I, 3, 3] */
            int in = y.k / 9;
            oihw_to_ohwi((const int8_t *)want + at, orig, y.o, in, 3, 3);
            oihw_to_ohwi(y.w, trained, y.o, in, 3, 3);
        } else {
            memcpy(orig, want + at, wb);
            for (size_t k = 0; k < wb; k++)
                trained[k / CK * CK + (size_t)col_nhwc((int)(k % CK))] = y.w[k];
        }
        long wo_ = find_once(src, ns, orig, wb), bo = find_once(src, ns, want + at + wb, bb);
        REQUIRE(wo_ >= 0 && bo >= 0, "conv.tflite: layer %zu's original codes (OHWI for a filter) and biases are "
                "found once in the source", i);
        CHECK(!memcmp(exp + wo_, trained, wb), "%s: layer %zu's buffer holds the twin's trained codes (%s)", pt, i,
              i < 2 ? "OIHW transposed to OHWI" : "columns in the NHWC order");
        CHECK(!memcmp(exp + bo, y.bias, bb), "%s: layer %zu's bias buffer holds the twin's trained biases", pt, i);
        CHECK(memcmp(exp + wo_, src + wo_, wb) != 0, "%s: layer %zu's codes changed", pt, i);
        memset(mask + wo_, 1, wb);
        memset(mask + bo, 1, bb);
        at += wb + bb;
    }
    size_t other = 0;
    for (size_t i = 0; i < ns; i++)
        other += !mask[i] && exp[i] != src[i];
    CHECK(other == 0, "%s: %zu bytes outside the trained buffers changed", pt, other);
    char po[1200]; /* for qas_tflite_real.mjs: the trained model in real TFLite and in switchyard */
    snprintf(po, sizeof po, "%s/conv_trained.onnx", models);
    st = sy_qas_session_export(a, po);
    CHECK(!st, "export %s: %s", po, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    sy_qas_session *t = open_ws63("conv_trained.tflite", 3, &st);
    CHECK(!st, "%s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (t)
        same_codes(a, t, pt);
    sy_qas_session_release(t);
done:
    sy_qas_session_release(a);
    sy_qas_session_release(b);
}

/* pool.tflite (CONV_2D -> MAX_POOL_2D -> RESHAPE -> FULLY_CONNECTED, last:2 for ws63: the gradient through the
 * NHWC MAX_POOL_2D into the Conv) against pool_ref.onnx, the same network in NCHW: the .tflite's Conv and pool
 * are NHWC (the session pools its NCHW buffer: a max per channel picks the same codes), the twin's NCHW */
enum { PH = 6, PW = 6, PC = 2, PO = 3, PQ = 3, PK = PO * PQ * PQ };

static int col_pool(int k_nchw)
{
    int c = k_nchw / (PQ * PQ), h = k_nchw / PQ % PQ, w = k_nchw % PQ;
    return (h * PQ + w) * PO + c;
}

static void test_pool_twin(void)
{
    sy_status *st = NULL;
    sy_qas_session *a = open_ws63("pool.tflite", 2, &st);
    CHECK(!st, "pool.tflite: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    sy_qas_session *b = open_ws63("pool_ref.onnx", 2, &st);
    CHECK(!st, "pool_ref.onnx: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (!a || !b)
        goto done;
    REQUIRE(sy_qas_session_layer_count(a) == 2 && sy_qas_session_layer_count(b) == 2, "two trained layers");
    static uint8_t want[4096];
    size_t nw = read_all(path_of("pool_codes.bin"), want, sizeof want), at = 0;
    const int32_t wo[2] = {PO, NCLS}, wk[2] = {PC * 9, PK};

    enum { NX = BATCH * PH * PW * PC };
    static float X[NX], Xc[NX];
    int64_t Y[BATCH];
    for (int i = 0; i < NX; i++)
        X[i] = 2.0f * urand() - 1.0f;
    nhwc_to_nchw_f(X, Xc, BATCH, PH, PW, PC);
    for (int i = 0; i < BATCH; i++)
        Y[i] = (i + 2) % NCLS;
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 4, .dims = {BATCH, PH, PW, PC},
                    .data = X, .nbytes = sizeof X};
    sy_tensor tc = {.struct_size = sizeof tc, .dtype = SY_DT_FLOAT32, .rank = 4, .dims = {BATCH, PC, PH, PW},
                    .data = Xc, .nbytes = sizeof Xc};
    sy_tensor ty = {.struct_size = sizeof ty, .dtype = SY_DT_INT64, .rank = 1, .dims = {BATCH}, .data = Y,
                    .nbytes = sizeof Y};
    const sy_tensor *ia[2] = {&tx, &ty}, *ib[2] = {&tc, &ty};
    float la = 0, lb = 0, l0 = 0;
    const sy_tensor *oa = NULL, *ob = NULL;
    static float ocopy[BATCH * NCLS];
    st = sy_qas_session_eval(a, ia, 2, &la, &oa);
    CHECK(!st, "eval pool.tflite: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (oa && oa->nbytes == sizeof ocopy)
        memcpy(ocopy, oa->data, sizeof ocopy);
    st = sy_qas_session_eval(b, ib, 2, &lb, &ob);
    CHECK(!st, "eval pool_ref.onnx: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    CHECK(oa && ob && oa->nbytes == sizeof ocopy && ob->nbytes == sizeof ocopy &&
              !memcmp(ocopy, ob->data, sizeof ocopy) && !memcmp(&la, &lb, 4),
          "pool.tflite: the forward's logits and loss (%.9g) are the twin's (%.9g)", (double)la, (double)lb);
    printf("pool.tflite: forward loss %.9g (the twin's %.9g)\n", (double)la, (double)lb);
    l0 = la;

    /* the codes read (after the first forward, which sets the geometry) */
    for (size_t i = 0; i < 2; i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        REQUIRE(sy_qas_session_layer(a, i, &x) && sy_qas_session_layer(b, i, &y), "layer %zu", i);
        REQUIRE(x.o == wo[i] && x.k == wk[i] && y.o == wo[i] && y.k == wk[i], "layer %zu is [%d, %d]", i, wo[i],
                wk[i]);
        CHECK(x.conv == !i && y.conv == !i && x.nhwc == !i && !y.nhwc && x.pool == !i && y.pool == !i &&
                  (i || (x.pool_kh == 2 && x.pool_sh == 2 && x.pool_oh == PQ && y.pool_oh == PQ && x.oh == PH)),
              "layer %zu: the Conv and its 2x2 MaxPool (NHWC from the .tflite, NCHW in the twin) or the Gemm", i);
        size_t wb = (size_t)x.o * (size_t)x.k, bb = (size_t)x.o * 4;
        REQUIRE(at + wb + bb <= nw, "pool_codes.bin holds layer %zu", i);
        CHECK(!memcmp(x.w, want + at, wb) && x.bias && !memcmp(x.bias, want + at + wb, bb),
              "pool.tflite: layer %zu ('%s'): its int8 codes and int32 biases are the model's", i, x.name);
        bool twin = y.bias && !memcmp(y.bias, want + at + wb, bb);
        for (size_t k = 0; twin && k < wb; k++)
            twin = y.w[k] == (int8_t)want[at + (!i ? k : k / PK * PK + (size_t)col_pool((int)(k % PK)))];
        CHECK(twin, "pool_ref.onnx: layer %zu ('%s'): its codes are the .tflite's (the Gemm's columns reordered)", i,
              y.name);
        at += wb + bb;
    }
    CHECK(at == nw, "pool_codes.bin: %zu of %zu bytes compared", at, nw);

    static int8_t w0[64];
    sy_qas_layer_info c0 = {.struct_size = sizeof c0};
    REQUIRE(sy_qas_session_layer(a, 0, &c0) && (size_t)c0.o * (size_t)c0.k <= sizeof w0, "layer 0");
    memcpy(w0, c0.w, (size_t)c0.o * (size_t)c0.k);
    for (int k = 0; k < STEPS; k++) {
        st = sy_qas_session_step(a, ia, 2, 0.5f, &la, &oa);
        CHECK(!st, "step %d pool.tflite: %s", k, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        if (oa && oa->nbytes == sizeof ocopy)
            memcpy(ocopy, oa->data, sizeof ocopy);
        st = sy_qas_session_step(b, ib, 2, 0.5f, &lb, &ob);
        CHECK(!st, "step %d pool_ref.onnx: %s", k, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        CHECK(oa && ob && ob->nbytes == sizeof ocopy && !memcmp(ocopy, ob->data, sizeof ocopy) && !memcmp(&la, &lb, 4),
              "pool.tflite: step %d: the logits and loss (%.9g) are the twin's (%.9g)", k, (double)la, (double)lb);
    }
    printf("pool.tflite: loss after %d steps %.9g (the twin's %.9g)\n", STEPS, (double)la, (double)lb);
    CHECK(la < l0, "pool.tflite: the loss fell (%.9g -> %.9g)", (double)l0, (double)la);
    for (size_t i = 0; i < 2; i++) {
        sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
        REQUIRE(sy_qas_session_layer(a, i, &x) && sy_qas_session_layer(b, i, &y), "layer %zu", i);
        size_t o = (size_t)x.o, nk = (size_t)x.o * (size_t)x.k;
        bool eq = x.bias && y.bias && !memcmp(x.bias, y.bias, o * 4) && x.b_master && y.b_master &&
                  !memcmp(x.b_master, y.b_master, o * 4) && x.w_master && y.w_master;
        for (size_t k = 0; eq && k < nk; k++) {
            size_t kx = !i ? k : k / PK * PK + (size_t)col_pool((int)(k % PK));
            eq = x.w[kx] == y.w[k] && !memcmp(&x.w_master[kx], &y.w_master[k], 4);
        }
        CHECK(eq, "pool.tflite: layer %zu ('%s'): the trained codes, biases and master copies are the twin's", i,
              x.name);
        if (!i) {
            size_t changed = 0;
            for (size_t k = 0; k < nk; k++)
                changed += x.w[k] != w0[k];
            CHECK(changed > 0, "pool.tflite: the steps changed none of the Conv's %zu codes", nk);
            printf("pool.tflite: %zu of the Conv's %zu int8 filter codes changed in %d steps (through the "
                   "MAX_POOL_2D)\n", changed, nk, STEPS);
        }
    }
    /* the trained .tflite, read back, gives the same codes */
    char pt[1200];
    snprintf(pt, sizeof pt, "%s/pool_trained.tflite", models);
    st = sy_qas_session_export(a, pt);
    CHECK(!st, "export %s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    snprintf(pt, sizeof pt, "%s/pool_trained.onnx", models); /* (for qas_tflite_real.mjs) */
    st = sy_qas_session_export(a, pt);
    CHECK(!st, "export %s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    sy_qas_session *t = open_ws63("pool_trained.tflite", 2, &st);
    CHECK(!st && t, "pool_trained.tflite: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (t)
        same_codes(a, t, "pool_trained.tflite");
    sy_qas_session_release(t);
    /* for ws63 the seed's MaxPool2D row decides on the NHWC pool (its input's codes uint8), and is quoted */
    sy_qas_session *u = open_ws63("bad_pool_u8.onnx", 2, &st);
    CHECK(st && sy_status_get_code(st) == SY_ERR_UNSUPPORTED && !u, "bad_pool_u8.onnx, last:2 for ws63: refused");
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL,
                  "sy_qas: node 'pool' (MaxPool): not trainable in QAS-INT8 on ws63: its input or output carries no "
                  "INT8 quantization; seed 001 §4: \"QAS INT8 MaxPool2D/MaxPool: MaxPool only; input and output are "
                  "INT8 NHWC 4D tensors and must carry quantization parameters\"");
    sy_status_free(st);
    sy_qas_session_release(u);
done:
    sy_qas_session_release(a);
    sy_qas_session_release(b);
}

/* conv_nhwc.onnx, the translation's NHWC form written by hand (conv1's Relu
 * before its second Transpose), trains for ws63 as conv.tflite does */
static void test_conv_nhwc_onnx(void)
{
    sy_status *st = NULL;
    sy_qas_session *a = open_ws63("conv.tflite", 3, &st);
    sy_status_free(st);
    sy_qas_session *b = open_ws63("conv_nhwc.onnx", 3, &st);
    CHECK(!st, "conv_nhwc.onnx: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (!a || !b)
        goto done;
    for (size_t i = 0; i < 2; i++) {
        sy_qas_layer_info y = {.struct_size = sizeof y};
        CHECK(sy_qas_session_layer(b, i, &y) && y.conv && y.nhwc && y.relu == (i == 0),
              "conv_nhwc.onnx: layer %zu is an NHWC Conv%s", i, i ? "" : " with its Relu");
    }
    enum { NX = BATCH * CH * CW * CC };
    static float X[NX];
    int64_t Y[BATCH];
    for (int i = 0; i < NX; i++)
        X[i] = 2.0f * urand() - 1.0f;
    for (int i = 0; i < BATCH; i++)
        Y[i] = (i + 2) % NCLS;
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 4, .dims = {BATCH, CH, CW, CC},
                    .data = X, .nbytes = sizeof X};
    sy_tensor ty = {.struct_size = sizeof ty, .dtype = SY_DT_INT64, .rank = 1, .dims = {BATCH}, .data = Y,
                    .nbytes = sizeof Y};
    const sy_tensor *in[2] = {&tx, &ty};
    static float ocopy[BATCH * NCLS];
    float la = 0, lb = 0;
    for (int k = 0; k < STEPS; k++) {
        const sy_tensor *oa = NULL, *ob = NULL;
        st = sy_qas_session_step(a, in, 2, 0.5f, &la, &oa);
        CHECK(!st, "step %d conv.tflite: %s", k, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        if (oa && oa->nbytes == sizeof ocopy)
            memcpy(ocopy, oa->data, sizeof ocopy);
        st = sy_qas_session_step(b, in, 2, 0.5f, &lb, &ob);
        CHECK(!st, "step %d conv_nhwc.onnx: %s", k, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        CHECK(oa && ob && ob->nbytes == sizeof ocopy && !memcmp(ocopy, ob->data, sizeof ocopy) && !memcmp(&la, &lb, 4),
              "conv_nhwc.onnx: step %d: the logits and loss (%.9g) are conv.tflite's (%.9g)", k, (double)lb,
              (double)la);
    }
    printf("conv_nhwc.onnx: loss after %d steps %.9g (conv.tflite's %.9g)\n", STEPS, (double)lb, (double)la);
    same_layers(a, b, "conv_nhwc.onnx");
done:
    sy_qas_session_release(a);
    sy_qas_session_release(b);
}

/* CONV_2D layers outside the seed's row or the kernels */
static void test_conv_refusals(void)
{
    sy_status *st = NULL;
    sy_qas_session *s = open_ws63("bad_conv5x5.tflite", 2, &st);
    CHECK(st && sy_status_get_code(st) == SY_ERR_UNSUPPORTED && !s, "bad_conv5x5.tflite, last:2 for ws63: refused");
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "bad_conv5x5.tflite");
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL,
                  "(Conv): not trainable in QAS-INT8 on ws63: a 5x5 kernel; seed 001 §4: \"QAS INT8 Conv2D/Conv: "
                  "INT8 input, weight and output; INT32 bias; rank 4; group 1; 3x3 convolution only; no fused "
                  "activation or fused ReLU; weights in OHWI format; per-tensor or per-output-channel weight "
                  "quantization\"");
    sy_status_free(st);
    sy_qas_session_release(s);
    /* in the frozen front the 5x5 CONV_2D is no trained layer */
    s = open_ws63("bad_conv5x5.tflite", 1, &st);
    CHECK(!st && s, "bad_conv5x5.tflite, last:1 for ws63: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    sy_qas_session_release(s);
    sy_qas_options o = {.struct_size = sizeof o, .last_k = 2};
    s = NULL;
    st = sy_qas_session_create(env, path_of("bad_dilation2.tflite"), &o, &s, NULL);
    CHECK(st && sy_status_get_code(st) == SY_ERR_UNSUPPORTED && !s, "bad_dilation2.tflite, last:2: refused");
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "bad_dilation2.tflite");
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "(Conv): dilation 2: the QAS kernels take 1");
    sy_status_free(st);
    sy_qas_session_release(s);
}

typedef struct refusal {
    const char *file;
    sy_status_code code;
    const char *msg;
} refusal;

/* file (with its subgraph chosen: NULL none) refused with r's code and message, naming the path */
static void check_refusal(const refusal *r, const char *subgraph)
{
    sy_qas_options o = {.struct_size = sizeof o, .last_k = 2, .subgraph = subgraph};
    sy_qas_session *s = NULL;
    sy_status *st = sy_qas_session_create(env, path_of(r->file), &o, &s, NULL);
    CHECK(st && sy_status_get_code(st) == r->code, "%s (subgraph %s): refused with code %d (got %d)", r->file,
          subgraph ? subgraph : "none", (int)r->code, st ? (int)sy_status_get_code(st) : 0);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, r->msg);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, r->file); /* the path */
    CHECK(!s, "%s: no session", r->file);
    sy_status_free(st);
    sy_qas_session_release(s);
}

static void test_refusals(void)
{
    static const refusal R[] = {
        {"bad_uint8.tflite", SY_ERR_UNSUPPORTED,
         "sy_qas: TFLite: tensor #1 'xq': uint8 (asymmetric uint8 quantization) is not translated"},
        {"bad_int16.tflite", SY_ERR_UNSUPPORTED,
         "sy_qas: TFLite: tensor #1 'xq': int16 (16x8 quantization) is not translated"},
        {"bad_no_quant.tflite", SY_ERR_UNSUPPORTED,
         "tensor #1 'xq': int8 without quantization parameters (no scale)"},
        {"bad_scale_zero.tflite", SY_ERR_UNSUPPORTED,
         "tensor #1 'xq': scale 0 is 0: a scale must be finite and positive"},
        {"bad_scale_nan.tflite", SY_ERR_UNSUPPORTED,
         "tensor #1 'xq': scale 0 is nan: a scale must be finite and positive"},
        {"bad_zp_range.tflite", SY_ERR_UNSUPPORTED,
         "tensor #1 'xq': zero point 200 (index 0) is out of range for INT8 (-128 to 127)"},
        {"bad_zp_count.tflite", SY_ERR_UNSUPPORTED, "tensor #1 'xq': 1 scales but 2 zero points"},
        {"bad_act_per_channel.tflite", SY_ERR_UNSUPPORTED,
         "tensor #1 'xq': an int8 activation with 8 scales: activations are quantized per tensor"},
        {"bad_asym_weights.tflite", SY_ERR_UNSUPPORTED,
         "operator #1 (FULLY_CONNECTED): the weights (tensor #2 'fc1/weights') are asymmetric (zero point 3 of "
         "channel 2)"},
        {"bad_weights_dim1.tflite", SY_ERR_UNSUPPORTED,
         "operator #1 (FULLY_CONNECTED): the weights (tensor #2 'fc1/weights') have 8 scales along dimension 1"},
        {"bad_bias_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #1 (FULLY_CONNECTED): the bias (tensor #3 'fc1/bias') scale 0 is"},
        {"bad_bias_zp.tflite", SY_ERR_UNSUPPORTED,
         "tensor #3 'fc1/bias': zero point 1 (index 0) is out of range for INT32 (an int32 bias has 0)"},
        {"bad_relu6.tflite", SY_ERR_UNSUPPORTED,
         "operator #1 (FULLY_CONNECTED): the fused activation RELU6 is not translated for QAS-INT8"},
        {"bad_sub.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (SUB): the fused activation TANH is not translated for QAS-INT8 (NONE, RELU, RELU6 and "
         "RELU_N1_TO_1 are)"},
        {"bad_transpose_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (TRANSPOSE): input tensor #4 'h' is quantized with scale 0.05 and zero point -10, output tensor "
         "#9 'h2' with 0.1 and -10: an int8 TRANSPOSE moves the codes, so both must have one quantization"},
        {"bad_sslice_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (STRIDED_SLICE): input tensor #4 'h' is quantized with scale 0.05 and zero point -10, output "
         "tensor #11 'h2' with 0.1 and -10: an int8 STRIDED_SLICE moves the codes, so both must have one "
         "quantization"},
        {"bad_sslice_stride0.tflite", SY_ERR_UNSUPPORTED, "operator #2 (STRIDED_SLICE): strides[1] is 0"},
        {"bad_squeeze_dim.tflite", SY_ERR_UNSUPPORTED, "operator #2 (SQUEEZE): squeezes axis 1 of size 6"},
        {"bad_max_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (MAXIMUM): input 1 (tensor #8 'row') is quantized with scale 0.1 and zero point -10, the output "
         "(tensor #9 'h2') with 0.05 and -10: an int8 MAXIMUM compares the codes, so its inputs and output must have "
         "one quantization"},
        {"bad_min_consts.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (MINIMUM): both inputs ('k' and 'k') are constants (a converter folds such an operator)"},
        {"bad_add_bcast.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (ADD): inputs 'h' [3,6] and 'row' [1,4] do not broadcast (axis 1: 6 and 4)"},
        {"bad_mul_per_channel.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (MUL): constant input tensor #8 'k' has 6 scales: an int8 MUL reads its operands quantized per "
         "tensor"},
        {"bad_mul_consts.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (MUL): both inputs ('k' and 'k') are constants (a converter folds such an operator)"},
        {"bad_pad_runtime.tflite", SY_ERR_UNSUPPORTED,
         "tensor #8 'pad/paddings': a runtime INT32 tensor (no constant buffer) is not translated: shapes, paddings "
         "and axes are translated as constants"},
        {"bad_pad_negative.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (PAD): the paddings (tensor #8 'pad/paddings') of axis 1 are 1 and -1: negative paddings are not "
         "translated"},
        {"bad_pad_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (PAD): output 'h2' is quantized with another scale or zero point than input 'h' (an int8 PAD "
         "copies the codes)"},
        {"bad_padv2_value.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (PADV2): constant_values (tensor #9 'pad/value') is not quantized as the output 'h2' (TFLite "
         "pads with its code)"},
        {"bad_mean_runtime.tflite", SY_ERR_UNSUPPORTED,
         "tensor #8 'mean/axes': a runtime INT32 tensor (no constant buffer) is not translated"},
        {"bad_mean_axis.tflite", SY_ERR_UNSUPPORTED, "operator #2 (MEAN): axis 2 is out of range for rank 2"},
        {"bad_concat_axis.tflite", SY_ERR_UNSUPPORTED, "operator #2 (CONCATENATION): axis 2 of inputs of rank 2"},
        {"bad_concat_relu.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (CONCATENATION): the fused activation RELU: TFLite's CONCATENATION takes none (its kernel refuses "
         "one)"},
        {"bad_softmax_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #3 (SOFTMAX): output 'probs' has scale 0.0078125 and zero point -128: an int8 SOFTMAX's is 1/256 "
         "and -128"},
        {"bad_dw_qdim0.tflite", SY_ERR_UNSUPPORTED,
         "tensor #2 'dw/filter': 4 scales with quantized_dimension 0 of a tensor of rank 4: per-channel scales need "
         "one scale per index of that dimension"},
        {"bad_pool_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (MAX_POOL_2D): output 'pool' is quantized with another scale or zero point than input 'dw'"},
        {"bad_concat_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #6 (CONCATENATION): input 0 'sm' is quantized with scale 0.04 and zero point -6, the output 'cat' "
         "with 0.045 and -3: TFLite's int8 CONCATENATION keeps the codes (real TFLite refuses inputs quantized "
         "otherwise than the output), so a requantizing one is not translated"},
        {"bad_avgpool_scale.tflite", SY_ERR_UNSUPPORTED,
         "operator #2 (AVERAGE_POOL_2D): output 'pool' is quantized with another scale or zero point than input 'dw' "
         "(an int8 AVERAGE_POOL_2D keeps the codes' quantization)"},
        {"bad_fc_rank4.tflite", SY_ERR_UNSUPPORTED,
         "operator #3 (FULLY_CONNECTED): input 'pool' is not [N, 64] (an int8 FULLY_CONNECTED is translated for a "
         "rank-2 input; a RESHAPE before it gives one)"},
        {"float.tflite", SY_ERR_UNSUPPORTED,
         "sy_qas: TFLite: a float TFLite model (no int8 tensor): QAS-INT8 trains int8 codes and needs an int8 (fully "
         "quantized) TFLite model"},
    };
    for (size_t i = 0; i < sizeof R / sizeof R[0]; i++)
        check_refusal(&R[i], NULL);
    /* subgraphs chosen: an unknown signature, an index out of range, a name in a model without signatures, a
     * subgraph for an ONNX model */
    static const struct {
        refusal r;
        const char *subgraph;
    } SG[] = {
        {{"two.tflite", SY_ERR_NOT_FOUND,
          "sy_qas: TFLite: no subgraph 'nope': the model's signatures are 'serving_cnn' (subgraph 0), 'train_mlp' "
          "(subgraph 1); give a signature name or an index from 0 to 1"}, "nope"},
        {{"two.tflite", SY_ERR_NOT_FOUND, "sy_qas: TFLite: subgraph 2 is out of range: the model has 2 subgraphs (0 "
          "to 1)"}, "2"},
        {{"mlp.tflite", SY_ERR_NOT_FOUND, "sy_qas: TFLite: no subgraph 'train_mlp': the model has no signatures; give "
          "a signature name or an index from 0 to 0"}, "train_mlp"},
        {{"mlp_ref.onnx", SY_ERR_INVALID_ARGUMENT, "mlp_ref.onnx: subgraph '1' was chosen, but this is not a TFLite "
          "model (subgraphs are chosen in TFLite models only)"}, "1"},
    };
    for (size_t i = 0; i < sizeof SG / sizeof SG[0]; i++)
        check_refusal(&SG[i].r, SG[i].subgraph);
    /* a truncated int8 model: a corrupt file, not a crash */
    static uint8_t buf[1 << 16];
    size_t n = read_all(path_of("mlp.tflite"), buf, sizeof buf);
    REQUIRE(n > 64 && n < sizeof buf, "mlp.tflite is readable");
    char cut[1200];
    snprintf(cut, sizeof cut, "%s/cut.tflite", models);
    for (size_t len = 16; len < n; len += n / 7) {
        FILE *f = fopen(cut, "wb");
        REQUIRE(f && fwrite(buf, 1, len, f) == len && !fclose(f), "write %s", cut);
        sy_qas_options o = {.struct_size = sizeof o, .last_k = 2};
        sy_qas_session *s = NULL;
        sy_status *st = sy_qas_session_create(env, cut, &o, &s, NULL);
        CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL, "%zu of %zu bytes: refused as INVALID_MODEL (%d)",
              len, n, st ? (int)sy_status_get_code(st) : 0);
        CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "corrupt TFLite file");
        sy_status_free(st);
        sy_qas_session_release(s);
    }
}

/* `switchyard train --mode qas-int8 SRC [--subgraph SG] -o OUT` (SRC
 * mlp.tflite, or cli_src with cli_subgraph): OUT/model.tflite (its subgraph
 * SG) and OUT/model.onnx hold the same trained codes, and they are not
 * SRC's */
static const char *cli_out, *cli_src = "mlp.tflite", *cli_subgraph;
static void test_cli(void)
{
    char pt[1200], po[1200];
    snprintf(pt, sizeof pt, "%s/model.tflite", cli_out);
    snprintf(po, sizeof po, "%s/model.onnx", cli_out);
    sy_qas_options o = {.struct_size = sizeof o, .last_k = 2, .subgraph = cli_subgraph};
    sy_qas_session *t = NULL, *q = NULL, *m = NULL;
    sy_status *st = sy_qas_session_create(env, pt, &o, &t, NULL);
    CHECK(!st, "%s: %s", pt, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    o.subgraph = NULL;
    st = sy_qas_session_create(env, po, &o, &q, NULL);
    CHECK(!st, "%s: %s", po, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    o.subgraph = cli_subgraph;
    st = sy_qas_session_create(env, path_of(cli_src), &o, &m, NULL);
    CHECK(!st, "%s: %s", cli_src, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (t && q && m) {
        same_codes(t, q, pt);
        size_t changed = 0;
        for (size_t i = 0; i < 2; i++) {
            sy_qas_layer_info x = {.struct_size = sizeof x}, y = {.struct_size = sizeof y};
            if (sy_qas_session_layer(t, i, &x) && sy_qas_session_layer(m, i, &y))
                for (int32_t k = 0; k < x.o * x.k; k++)
                    changed += x.w[k] != y.w[k];
        }
        CHECK(changed > 0, "%s: the trained codes are %s's", pt, cli_src);
        printf("%s: %zu int8 codes differ from %s's; its codes and biases are model.onnx's\n", pt, changed, cli_src);
    }
    sy_qas_session_release(t);
    sy_qas_session_release(q);
    sy_qas_session_release(m);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "cli"))
        cli_out = argv[2];
    if (cli_out && argc >= 5)
        cli_src = argv[3], cli_subgraph = argv[4];
    models = getenv("SY_QAS_TFLITE_MODELS");
    if (!models || !*models) {
        fprintf(stderr, "SY_QAS_TFLITE_MODELS names the folder of qas_tflite_models.py's models\n");
        return 2;
    }
    sy_status *st = sy_env_create(NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        return 1;
    }
    if (cli_out) {
        RUN_TEST(test_cli);
    } else {
        RUN_TEST(test_twins);
        RUN_TEST(test_conv_twin);
        RUN_TEST(test_conv_nhwc_onnx);
        RUN_TEST(test_conv_refusals);
        RUN_TEST(test_refusals);
        RUN_TEST(test_front_twins);
        RUN_TEST(test_pool_twin); /* after the others: their urand draws are as they were */
    }
    sy_env_release(env);
    return SY_TEST_MAIN_RESULT();
}
