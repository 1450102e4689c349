/* The seed's training constraints (seed 001 §4, the FP32 rows; the
 * translation is ../shared/spec/ops-mcu.md §4.2) as sy_train_build's rules
 * for target "ws63": a model that keeps to the rows builds; each rule's
 * decline names the node, says what broke the row and quotes it; hi3066 is
 * refused with the seed's sentence. The expected texts are the seed's rows,
 * written out here. */
#include "pt_onnx.h"
#include "sy_test.h"
#include "switchyard/switchyard.h"
#include "switchyard/sy_train.h"

#include <math.h>
#include <unistd.h>

static sy_env *env;
static char work[512];
static int seq;

static void write_model(pt_model *m, const char *path)
{
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(buf, 1, len, f);
        fclose(f);
    }
    free(buf);
    pt_model_free(m);
}

static float zeros[4096];
static float ramp[4096];

/* builds m for target (with loss) and returns the message, "" when it built */
static const char *build_for(pt_model *m, const char *target, int loss)
{
    static char buf[2048];
    char model[600], dir[600];
    snprintf(model, sizeof model, "%s/m%d.onnx", work, seq);
    snprintf(dir, sizeof dir, "%s/d%d", work, seq++);
    write_model(m, model);
    sy_train_build_options o = {.struct_size = sizeof o, .loss = loss, .target = target, .env = env};
    sy_status *st = sy_train_build(model, &o, dir, NULL);
    snprintf(buf, sizeof buf, "%s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return buf;
}

/* x [1,2,4,4] -> Conv (conv_* variants) -> Relu -> Flatten -> Gemm [3,32] transB -> y [1,3] */
typedef struct conv_case {
    int64_t group, w_in, stride, dilation;
    bool bias;
} conv_case;

static pt_model *cnn(conv_case c)
{
    pt_model *m = pt_model_new("cnn");
    pt_input(m, "x", PT_F32, 4, (int64_t[]){1, 2, 4, 4});
    pt_init_f32(m, "Wc", 4, (int64_t[]){2, c.w_in, 3, 3}, ramp);
    pt_init_f32(m, "Bc", 1, (int64_t[]){2}, zeros);
    pt_init_f32(m, "Wf", 2, (int64_t[]){3, 32}, ramp);
    pt_init_f32(m, "Bf", 1, (int64_t[]){3}, zeros);
    const int64_t pad = c.dilation; /* keeps 4x4 at stride 1 */
    pt_node(m, "Conv", "conv", (const char *[]){"x", "Wc", c.bias ? "Bc" : NULL, NULL}, (const char *[]){"c", NULL});
    pt_attr_int(m, "group", c.group);
    pt_attr_ints(m, "strides", 2, (int64_t[]){c.stride, c.stride});
    pt_attr_ints(m, "dilations", 2, (int64_t[]){c.dilation, c.dilation});
    pt_attr_ints(m, "pads", 4, (int64_t[]){pad, pad, pad, pad});
    pt_node(m, "Relu", "relu", (const char *[]){"c", NULL}, (const char *[]){"r", NULL});
    if (c.stride == 1) {
        pt_node(m, "Flatten", "flat", (const char *[]){"r", NULL}, (const char *[]){"f", NULL});
        pt_node(m, "Gemm", "fc", (const char *[]){"f", "Wf", "Bf", NULL}, (const char *[]){"y", NULL});
        pt_attr_int(m, "transB", 1);
        pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    } else
        pt_output(m, "r", PT_F32, 4, (int64_t[]){1, 2, 2, 2});
    return m;
}

#define ROW_CONV                                                                                                       \
    "\"FP32 Conv: rank 4, batch 1, no bias, no fused activation, stride = 1 and dilation = 1, depthwise-equivalent "  \
    "convolution only: group = input_channel = output_channel, weights OHWI with I = 1\""

static void test_conv_rows(void)
{
    const conv_case ok = {.group = 2, .w_in = 1, .stride = 1, .dilation = 1};
    const char *m = build_for(cnn(ok), "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK(!*m, "a depthwise stride-1 Conv without bias, Relu, Flatten, Gemm was declined: %s", m);

    conv_case c = ok;
    c.bias = true;
    m = build_for(cnn(c), "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(m, "node 'conv' (Conv): not trainable on ws63: it has a bias; seed 001 §4: " ROW_CONV);
    /* the host has no such rule */
    m = build_for(cnn(c), NULL, SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK(!*m, "the host declined a Conv with bias: %s", m);

    c = ok;
    c.group = 1;
    c.w_in = 2;
    m = build_for(cnn(c), "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(m, "group 1 with 2 input and 2 output channels and W [2,2,..] is not depthwise");
    CHECK_STR_HAS(m, ROW_CONV);

    c = ok;
    c.dilation = 2;
    m = build_for(cnn(c), "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(m, "node 'conv' (Conv): not trainable on ws63: dilations[0] = 2, not 1");

    c = ok;
    c.stride = 2;
    m = build_for(cnn(c), "ws63", SY_TRAIN_LOSS_MSE);
    CHECK_STR_HAS(m, "node 'conv' (Conv): not trainable on ws63: strides[0] = 2, not 1");
}

/* x [1,4] -> Gemm W [3,4] transB -> z [1,3] -> `tail` -> y */
static pt_model *fc_then(const char *name)
{
    pt_model *m = pt_model_new(name);
    pt_input(m, "x", PT_F32, 2, (int64_t[]){1, 4});
    pt_init_f32(m, "W", 2, (int64_t[]){3, 4}, ramp);
    pt_node(m, "Gemm", "fc", (const char *[]){"x", "W", NULL}, (const char *[]){"z", NULL});
    pt_attr_int(m, "transB", 1);
    return m;
}

static void test_elementwise_concat_pool(void)
{
    /* Add of a [3] bias to [1,3]: broadcasting */
    pt_model *m = fc_then("add");
    pt_init_f32(m, "B", 1, (int64_t[]){3}, zeros);
    pt_node(m, "Add", "add", (const char *[]){"z", "B", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    const char *s = build_for(m, "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(s, "node 'add' (Add): not trainable on ws63: it broadcasts: [1,3] and [3] to [1,3]; seed 001 §4: "
                     "\"FP32 Mul/Add/Sub: no broadcasting: both inputs and the output must have exactly the same "
                     "shape; fused activation none or ReLU\"");
    /* the same shape is the row */
    m = fc_then("add_same");
    pt_init_f32(m, "B", 2, (int64_t[]){1, 3}, zeros);
    pt_node(m, "Add", "add", (const char *[]){"z", "B", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    s = build_for(m, "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK(!*s, "an Add of equal shapes was declined: %s", s);

    /* Concat of three */
    m = fc_then("cat3");
    pt_node(m, "Concat", "cat", (const char *[]){"z", "z", "z", NULL}, (const char *[]){"y", NULL});
    pt_attr_int(m, "axis", 1);
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 9});
    s = build_for(m, "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(s, "node 'cat' (Concat): not trainable on ws63: 3 inputs and 1 outputs; seed 001 §4: \"FP32 "
                     "Concat: exactly 2 inputs and 1 output;");

    /* MaxPool: not trainable in FP32 */
    m = pt_model_new("pool");
    pt_input(m, "x", PT_F32, 4, (int64_t[]){1, 1, 4, 4});
    pt_init_f32(m, "W", 4, (int64_t[]){1, 1, 3, 3}, ramp);
    pt_node(m, "Conv", "conv", (const char *[]){"x", "W", NULL}, (const char *[]){"c", NULL});
    pt_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
    pt_node(m, "MaxPool", "pool", (const char *[]){"c", NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(m, "kernel_shape", 2, (int64_t[]){2, 2});
    pt_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
    pt_output(m, "y", PT_F32, 4, (int64_t[]){1, 1, 2, 2});
    s = build_for(m, "ws63", SY_TRAIN_LOSS_MSE);
    CHECK_STR_HAS(s, "node 'pool' (MaxPool): not trainable on ws63: a float MaxPool; seed 001 §4: \"FP32 training "
                     "is explicitly not supported for MaxPool2D/MaxPool");

    /* an operator the table does not list */
    m = fc_then("identity");
    pt_node(m, "Identity", "id", (const char *[]){"z", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    s = build_for(m, "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(s, "node 'id' (Identity): not trainable on ws63: Identity has no row in the training table");
}

static void test_pad_reduce(void)
{
    /* Pad reflect (the ONNX form of Mirror_Pad): CONSTANT only */
    pt_model *m = fc_then("pad");
    pt_init_i64(m, "pads", 1, (int64_t[]){4}, (int64_t[]){0, 1, 0, 1});
    pt_node(m, "Pad", "pad", (const char *[]){"z", "pads", NULL}, (const char *[]){"y", NULL});
    pt_attr_string(m, "mode", "reflect");
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 5});
    const char *s = build_for(m, "ws63", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(s, "node 'pad' (Pad): not trainable on ws63: mode 'reflect'; seed 001 §4: \"FP32 Pad: CONSTANT "
                     "mode only;");

    /* ReduceSum whose axes are not a constant */
    m = fc_then("reduce");
    pt_input(m, "ax", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, (int64_t[]){1});
    pt_node(m, "ReduceSum", "sum", (const char *[]){"z", "ax", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    s = build_for(m, "ws63", SY_TRAIN_LOSS_MSE);
    CHECK_STR_HAS(s, "node 'sum' (ReduceSum): not trainable on ws63: the axes (ax) are not a constant; seed 001 "
                     "§4: \"FP32 ReduceSum/ReduceMean: FP32 static non-empty of rank 1-8; axes an int32 constant");
}

/* The backward rules of Pad (constant) and ReduceSum/ReduceMean against
 * central differences of the eval model's loss (sums in double):
 * x [1,4] -> Gemm W [3,4] -> Pad [0,1 | 0,2] -> squared -> ReduceSum over
 * axis 1 (keepdims 0) and ReduceMean over axis 1 (keepdims 1) -> y [1,1].
 * h = 2e-3: the loss is quartic in W, so the quotient's truncation error
 * (h^2 f'''/6) stays well below the tolerance. */
/* m (x [1,4] -> Gemm W [3,4] -> ... -> y [1,1]) built with the MSE loss:
 * its dW against central differences of the eval model's loss (h = 2e-3,
 * sums in double); the model stays in WORK/NAME.onnx */
static void fd_dw(pt_model *m, const char *name, const char *what)
{
    char model[600], dir[600], path[700];
    snprintf(model, sizeof model, "%s/%s.onnx", work, name);
    snprintf(dir, sizeof dir, "%s/%s", work, name);
    write_model(m, model);
    sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE};
    sy_status *st = sy_train_build(model, &o, dir, NULL);
    REQUIRE(!st, "build: %s", st ? sy_status_get_message(st) : "");
    sy_model *tm = NULL, *em = NULL;
    sy_session *ts = NULL, *es = NULL;
    snprintf(path, sizeof path, "%s/training.onnx", dir);
    st = sy_model_load(env, path, &tm);
    st = st ? st : sy_session_create(env, tm, NULL, &ts);
    snprintf(path, sizeof path, "%s/eval.onnx", dir);
    st = st ? st : sy_model_load(env, path, &em);
    st = st ? st : sy_session_create(env, em, NULL, &es);
    REQUIRE(!st, "artifacts: %s", st ? sy_status_get_message(st) : "");
    float x[4] = {0.5f, -1.0f, 2.0f, 0.25f}, t[1] = {0.3f}, w[12];
    for (int i = 0; i < 12; i++)
        w[i] = 0.1f * (float)((i * 5) % 7) - 0.3f;
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {1, 4}, .data = x, .nbytes = 16};
    sy_tensor tt = {.struct_size = sizeof tt, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {1, 1}, .data = t, .nbytes = 4};
    sy_tensor tw = {.struct_size = sizeof tw, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {3, 4}, .data = w, .nbytes = 48};
    const sy_tensor *in[3] = {&tx, &tt, &tw};
    for (size_t i = 0; !st && i < 3; i++)
        st = sy_session_set_input_by_index(ts, i, in[i], SY_INPUT_COPY);
    st = st ? st : sy_session_run(ts);
    const sy_tensor *g = NULL;
    st = st ? st : sy_session_get_output(ts, 1, &g);
    REQUIRE(!st && g->nbytes == 48, "training run: %s", st ? sy_status_get_message(st) : "wrong gradient size");
    double worst = 0;
    for (int e = 0; e < 12; e++) {
        float keep = w[e];
        double l[2];
        for (int side = 0; side < 2; side++) {
            w[e] = keep + (side ? -2e-3f : 2e-3f);
            for (size_t i = 0; !st && i < 3; i++)
                st = sy_session_set_input_by_index(es, i, in[i], SY_INPUT_COPY);
            st = st ? st : sy_session_run(es);
            const sy_tensor *lo = NULL;
            st = st ? st : sy_session_get_output(es, 0, &lo);
            l[side] = st ? 0 : *(const float *)lo->data;
        }
        w[e] = keep;
        REQUIRE(!st, "eval run: %s", st ? sy_status_get_message(st) : "");
        double num = (l[0] - l[1]) / (2 * 2e-3), an = ((const float *)g->data)[e];
        double err = fabs(num - an) / fmax(fabs(num), 1e-2);
        worst = fmax(worst, err);
        CHECK(err < 1e-3, "dW[%d]: analytic %.6g, central differences %.6g", e, an, num);
    }
    printf("  %s: dW vs central differences, worst relative error %.2e\n", what, worst);
    sy_session_release(ts);
    sy_session_release(es);
    sy_model_release(tm);
    sy_model_release(em);
}

static void test_pad_reduce_gradients(void)
{
    pt_model *m = fc_then("pad_reduce");
    pt_init_i64(m, "pads", 1, (int64_t[]){4}, (int64_t[]){0, 1, 0, 2});
    pt_node(m, "Pad", "pad", (const char *[]){"z", "pads", NULL}, (const char *[]){"p", NULL});
    pt_node(m, "Mul", "sq", (const char *[]){"p", "p", NULL}, (const char *[]){"q", NULL});
    pt_init_i64(m, "ax", 1, (int64_t[]){1}, (int64_t[]){1});
    pt_node(m, "ReduceSum", "sum", (const char *[]){"q", "ax", NULL}, (const char *[]){"s", NULL});
    pt_attr_int(m, "keepdims", 0);
    pt_node(m, "ReduceMean", "mean", (const char *[]){"p", NULL}, (const char *[]){"u", NULL});
    pt_attr_ints(m, "axes", 1, (int64_t[]){1});
    pt_init_i64(m, "one", 1, (int64_t[]){1}, (int64_t[]){1});
    pt_node(m, "Unsqueeze", "unsq", (const char *[]){"s", "one", NULL}, (const char *[]){"s1", NULL});
    pt_node(m, "Add", "add", (const char *[]){"s1", "u", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    fd_dw(m, "pad_reduce", "Pad + ReduceSum + ReduceMean");
    char model[600], dir[600];
    snprintf(model, sizeof model, "%s/pad_reduce.onnx", work);
    snprintf(dir, sizeof dir, "%s/pad_reduce", work);
    sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE};
    sy_status *st;
    /* the same model keeps to the ws63 rows */
    o.target = "ws63";
    o.env = env;
    st = sy_train_build(model, &o, dir, NULL);
    CHECK(!st, "ws63 declined Pad/ReduceSum/ReduceMean within their rows: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
}

/* The backward rules of Tanh (dY (1 - y^2)) and Sigmoid (dY y (1 - y)),
 * written from the forward's output, against central differences:
 * x [1,4] -> Gemm W [3,4] -> 3z (z + z + z) -> Tanh -> 2t (t + t) ->
 * Sigmoid -> ReduceSum (keepdims) -> y [1,1]; the scalings put both into
 * their curved range. */
static void test_tanh_sigmoid_gradients(void)
{
    pt_model *m = fc_then("tanh_sigmoid");
    /* scalings as sums (a float initializer would be a trained input) */
    pt_node(m, "Add", "twice", (const char *[]){"z", "z", NULL}, (const char *[]){"z2", NULL});
    pt_node(m, "Add", "thrice", (const char *[]){"z2", "z", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Tanh", "tanh", (const char *[]){"a", NULL}, (const char *[]){"t", NULL});
    pt_node(m, "Add", "double_t", (const char *[]){"t", "t", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Sigmoid", "sigmoid", (const char *[]){"b", NULL}, (const char *[]){"s", NULL});
    pt_init_i64(m, "ax", 1, (int64_t[]){1}, (int64_t[]){1});
    pt_node(m, "ReduceSum", "sum", (const char *[]){"s", "ax", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    fd_dw(m, "tanh_sigmoid", "Tanh + Sigmoid");
}

/* The backward rule of Slice (constant full-rank starts and ends, steps 1:
 * dX is dY padded back with zeros) against central differences:
 * x [1,4] -> Gemm W [3,4] -> Slice [0,1 : 1,end] -> squared -> ReduceSum
 * (keepdims) -> y [1,1]; the same model keeps to the ws63 Slice row. Steps
 * of 2 (dY spread 2 apart, then cropped: z[0] and z[2] of 3) likewise, and
 * from start 1 (z[1] only), and of -1 (z reversed, times z); a negative
 * step is refused on ws63 by the Slice row ("stride/step > 0"), quoted. */
static pt_model *slice_sum(const char *name, const int64_t *st, const int64_t *en, const int64_t *sp,
                           const char *times)
{
    pt_model *m = fc_then(name);
    pt_init_i64(m, "starts", 1, (int64_t[]){2}, st);
    pt_init_i64(m, "ends", 1, (int64_t[]){2}, en);
    pt_init_i64(m, "axes", 1, (int64_t[]){2}, (int64_t[]){0, 1});
    if (sp)
        pt_init_i64(m, "steps", 1, (int64_t[]){2}, sp);
    pt_node(m, "Slice", "slice", (const char *[]){"z", "starts", "ends", "axes", sp ? "steps" : NULL, NULL},
            (const char *[]){"p", NULL});
    pt_node(m, "Mul", "times", (const char *[]){"p", times, NULL}, (const char *[]){"q", NULL});
    pt_init_i64(m, "ax", 1, (int64_t[]){1}, (int64_t[]){1});
    pt_node(m, "ReduceSum", "sum", (const char *[]){"q", "ax", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    return m;
}

static void test_slice_gradients(void)
{
    fd_dw(slice_sum("slice", (int64_t[]){0, 1}, (int64_t[]){1, INT64_MAX}, NULL, "p"), "slice", "Slice + ReduceSum");
    fd_dw(slice_sum("slice2", (int64_t[]){0, 0}, (int64_t[]){1, 3}, (int64_t[]){1, 2}, "p"), "slice2",
          "Slice steps 2 + ReduceSum");
    fd_dw(slice_sum("slice3", (int64_t[]){0, 1}, (int64_t[]){1, 3}, (int64_t[]){1, 2}, "p"), "slice3",
          "Slice steps 2 from 1 + ReduceSum");
    /* z reversed (step -1, SliceGrad placing dY downwards) times z: y =
     * 2·z0·z2 + z1², dy/dz = [2·z2, 2·z1, 2·z0]; a backward that placed dY
     * forwards would give [2·z0, 2·z1, 2·z2] */
    fd_dw(slice_sum("slice4", (int64_t[]){0, 2}, (int64_t[]){1, INT64_MIN}, (int64_t[]){1, -1}, "z"), "slice4",
          "Slice step -1 (reversed) x z + ReduceSum");
    /* on ws63 the seed's Slice row forbids a negative step ("stride/step >
     * 0"): declined by the rule, quoting the row, before any package is
     * written */
    pt_model *m = slice_sum("slice5", (int64_t[]){0, 2}, (int64_t[]){1, INT64_MIN}, (int64_t[]){1, -1}, "z");
    const char *s = build_for(m, "ws63", SY_TRAIN_LOSS_MSE);
    CHECK_STR_HAS(s, "node 'slice' (Slice): not trainable on ws63: step -1; seed 001 §4: \"FP32 StridedSlice/Slice: "
                     "FP32 static non-empty tensors of rank 1-8; full-rank normalized parameters required; no slice "
                     "masks; stride/step > 0; no empty slices\"");
}

/* The backward rule of a Div whose dividend is stretched by broadcasting
 * (the Div row: "broadcast-compatible shapes allowed") against central
 * differences: x [1,4] -> Gemm W [3,4] -> z [1,3] -> Unsqueeze -> [1,3,1]
 * -> Div by c [1,1,2] -> q [1,3,2] -> squared -> ReduceSum (all, keepdims)
 * -> Reshape -> y [1,1]. dz[i] = sum over j of dq[i][j] / c[j]: the gradient must be
 * summed over the axis broadcasting stretched (a dz of one j alone, or of
 * their mean, is off by the other c's share). The model keeps to the ws63
 * rows. The divisor stretched likewise, not squared: c / u -> ReduceSum,
 * dz[i] = -sum over j of dq[i][j]·c[j] / z[i]^2. */
static pt_model *div_bcast(const char *name, bool divisor)
{
    pt_model *m = fc_then(name);
    pt_init_i64(m, "two", 1, (int64_t[]){1}, (int64_t[]){2});
    pt_node(m, "Unsqueeze", "unsq", (const char *[]){"z", "two", NULL}, (const char *[]){"u", NULL});
    pt_init_f32(m, "c", 3, (int64_t[]){1, 1, 2}, (const float[]){1.25f, -0.5f});
    pt_node(m, "Div", "stretch", divisor ? (const char *[]){"c", "u", NULL} : (const char *[]){"u", "c", NULL},
            (const char *[]){"q", NULL});
    /* squared for the dividend (q linear in z), not for the divisor (1/z curves enough) */
    if (!divisor)
        pt_node(m, "Mul", "sq", (const char *[]){"q", "q", NULL}, (const char *[]){"p", NULL});
    pt_node(m, "ReduceSum", "sum", (const char *[]){divisor ? "q" : "p", NULL}, (const char *[]){"s", NULL});
    pt_init_i64(m, "shape", 1, (int64_t[]){2}, (int64_t[]){1, 1});
    pt_node(m, "Reshape", "flat", (const char *[]){"s", "shape", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    return m;
}

/* Two activations broadcast against each other, both stretched: u = z as
 * [1,3,1] divided by t = |z as [1,1,3]| (z is -0.4, -0.225, -0.225 here:
 * away from Abs's kink and from 0) -> q [1,3,3] -> ReduceSum -> y (not
 * squared: 1/|z| curves enough). dz gets u's gradient summed over q's last axis and t's summed over
 * its middle one (z feeds both). */
static pt_model *div_two_bcast(const char *name)
{
    pt_model *m = fc_then(name);
    pt_init_i64(m, "two", 1, (int64_t[]){1}, (int64_t[]){2});
    pt_node(m, "Unsqueeze", "unsq", (const char *[]){"z", "two", NULL}, (const char *[]){"u", NULL});
    pt_node(m, "Transpose", "turn", (const char *[]){"u", NULL}, (const char *[]){"ut", NULL});
    pt_attr_ints(m, "perm", 3, (int64_t[]){0, 2, 1});
    pt_node(m, "Abs", "abs", (const char *[]){"ut", NULL}, (const char *[]){"t", NULL});
    pt_node(m, "Div", "quot", (const char *[]){"u", "t", NULL}, (const char *[]){"q", NULL});
    pt_node(m, "ReduceSum", "sum", (const char *[]){"q", NULL}, (const char *[]){"s", NULL});
    pt_init_i64(m, "shape", 1, (int64_t[]){2}, (int64_t[]){1, 1});
    pt_node(m, "Reshape", "flat", (const char *[]){"s", "shape", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    return m;
}

static void test_div_broadcast_gradients(void)
{
    fd_dw(div_bcast("div_bcast", false), "div_bcast", "Div stretching its dividend");
    fd_dw(div_bcast("div_bcast2", true), "div_bcast2", "Div stretching its divisor");
    fd_dw(div_two_bcast("div_bcast3"), "div_bcast3", "Div of two activations, both stretched");
    for (int k = 0; k < 3; k++) {
        char model[600], dir[600];
        snprintf(model, sizeof model, "%s/div_bcast%s.onnx", work, k == 2 ? "3" : k ? "2" : "");
        snprintf(dir, sizeof dir, "%s/div_bcast_ws63_%d", work, k);
        sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE, .target = "ws63", .env = env};
        sy_status *st = sy_train_build(model, &o, dir, NULL);
        CHECK(!st, "ws63 declined a broadcasting Div within its row: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
    }
}

/* The Slice and ReduceMean rules at rank 8, the rows' highest ("rank 1-8"),
 * against central differences: z [1,3] -> Reshape [1,1,1,1,1,1,1,3] ->
 * Slice [.., 1:3] -> squared ->
 * ReduceMean over axes 2..7 (keepdims 0) -> y [1,1]; the model keeps to the
 * ws63 rows. */
static void test_rank8_gradients(void)
{
    pt_model *m = fc_then("rank8");
    pt_init_i64(m, "shape8", 1, (int64_t[]){8}, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 3});
    pt_node(m, "Reshape", "to8", (const char *[]){"z", "shape8", NULL}, (const char *[]){"z8", NULL});
    pt_init_i64(m, "starts", 1, (int64_t[]){8}, (int64_t[]){0, 0, 0, 0, 0, 0, 0, 1});
    pt_init_i64(m, "ends", 1, (int64_t[]){8}, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 3});
    pt_init_i64(m, "axes", 1, (int64_t[]){8}, (int64_t[]){0, 1, 2, 3, 4, 5, 6, 7});
    pt_node(m, "Slice", "slice", (const char *[]){"z8", "starts", "ends", "axes", NULL}, (const char *[]){"p", NULL});
    pt_node(m, "Mul", "sq", (const char *[]){"p", "p", NULL}, (const char *[]){"q", NULL});
    pt_node(m, "ReduceMean", "mean", (const char *[]){"q", NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(m, "axes", 6, (int64_t[]){2, 3, 4, 5, 6, 7});
    pt_attr_int(m, "keepdims", 0);
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    fd_dw(m, "rank8", "Slice + ReduceMean at rank 8");
    char model[600], dir[600];
    snprintf(model, sizeof model, "%s/rank8.onnx", work);
    snprintf(dir, sizeof dir, "%s/rank8_ws63", work);
    sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE, .target = "ws63", .env = env};
    sy_status *st = sy_train_build(model, &o, dir, NULL);
    CHECK(!st, "ws63 declined rank-8 Slice/ReduceMean within their rows: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
}

/* A Slice with steps above rank 4 (the host's SliceGrad scatters dY at its
 * own rank; the forward operators' spread took twice the rank): z [1,3]
 * -> Reshape to rank r -> Concat with itself on axis r - 2 ([.., 2, 3]) ->
 * Slice steps 2 on the last two axes from (1, 0) (z0, z2 of the second
 * copy; rank 5 from (0, 1): z1 of the first) -> squared -> ReduceMean ->
 * y [1,1], against central differences, and on ws63 within the Slice
 * row's "rank 1-8". */
static pt_model *slice_steps_high(const char *name, int r)
{
    pt_model *m = fc_then(name);
    int64_t shape[8], st[8], en[8], ax[8], sp[8], red[8];
    for (int d = 0; d < r; d++)
        shape[d] = 1, st[d] = 0, en[d] = 1, ax[d] = d, sp[d] = 1, red[d] = d;
    shape[r - 1] = 3;
    pt_init_i64(m, "shape_r", 1, (int64_t[]){r}, shape);
    pt_node(m, "Reshape", "to_r", (const char *[]){"z", "shape_r", NULL}, (const char *[]){"zr", NULL});
    pt_node(m, "Concat", "twice", (const char *[]){"zr", "zr", NULL}, (const char *[]){"z2", NULL});
    pt_attr_int(m, "axis", r - 2);
    st[r - 2] = r == 5 ? 0 : 1, st[r - 1] = r == 5 ? 1 : 0;
    en[r - 2] = 2, en[r - 1] = 3;
    sp[r - 2] = sp[r - 1] = 2;
    pt_init_i64(m, "starts", 1, (int64_t[]){r}, st);
    pt_init_i64(m, "ends", 1, (int64_t[]){r}, en);
    pt_init_i64(m, "axes", 1, (int64_t[]){r}, ax);
    pt_init_i64(m, "steps", 1, (int64_t[]){r}, sp);
    pt_node(m, "Slice", "slice", (const char *[]){"z2", "starts", "ends", "axes", "steps", NULL},
            (const char *[]){"p", NULL});
    pt_node(m, "Mul", "sq", (const char *[]){"p", "p", NULL}, (const char *[]){"q", NULL});
    pt_node(m, "ReduceMean", "mean", (const char *[]){"q", NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(m, "axes", (size_t)r - 2, red + 2);
    pt_attr_int(m, "keepdims", 0);
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 1});
    return m;
}

static void test_slice_steps_high_rank(void)
{
    fd_dw(slice_steps_high("slice_s5", 5), "slice_s5", "Slice steps 2 at rank 5 + ReduceMean");
    fd_dw(slice_steps_high("slice_s8", 8), "slice_s8", "Slice steps 2 at rank 8 + ReduceMean");
    for (int r = 5; r <= 8; r += 3) {
        char model[600], dir[600];
        snprintf(model, sizeof model, "%s/slice_s%d.onnx", work, r);
        snprintf(dir, sizeof dir, "%s/slice_s%d_ws63", work, r);
        sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE, .target = "ws63", .env = env};
        sy_status *st = sy_train_build(model, &o, dir, NULL);
        CHECK(!st, "ws63 declined a rank-%d stepped Slice within its row: %s", r, st ? sy_status_get_message(st) : "");
        sy_status_free(st);
    }
}

static void test_targets(void)
{
    const conv_case ok = {.group = 2, .w_in = 1, .stride = 1, .dilation = 1};
    const char *s = build_for(cnn(ok), "hi3066", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(s, "target hi3066: seed 001 §4: \"当前端侧训练仅在ws63支持\"");
    s = build_for(cnn(ok), "esp32", SY_TRAIN_LOSS_CROSS_ENTROPY);
    CHECK_STR_HAS(s, "unknown target 'esp32'");
}

int main(int argc, char **argv)
{
    snprintf(work, sizeof work, "%s/train_rules_XXXXXX", argc > 1 ? argv[1] : "/tmp");
    if (!mkdtemp(work)) {
        fprintf(stderr, "cannot make a work folder\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof ramp / sizeof ramp[0]; i++)
        ramp[i] = 0.01f * (float)((int)(i % 17) - 8);
    char ini[4096];
    int len = snprintf(ini, sizeof ini, "[switchyard]\n");
    static const char *const plugins[] = {"cpu_ref", "ops_nn", "ops_math", "ops_activation",
                                          "ops_reduce", "ops_tensor", "train"};
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++)
        len += snprintf(ini + len, sizeof ini - (size_t)len, "plugins = %s/libsy_%s.so\n", SY_PLUGIN_DIR, plugins[i]);
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    RUN_TEST(test_conv_rows);
    RUN_TEST(test_elementwise_concat_pool);
    RUN_TEST(test_pad_reduce);
    RUN_TEST(test_slice_gradients);
    RUN_TEST(test_pad_reduce_gradients);
    RUN_TEST(test_tanh_sigmoid_gradients);
    RUN_TEST(test_div_broadcast_gradients);
    RUN_TEST(test_rank8_gradients);
    RUN_TEST(test_slice_steps_high_rank);
    RUN_TEST(test_targets);
    sy_env_release(env);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", work);
    return SY_TEST_MAIN_RESULT();
}
