/*
 * The training builder and runtime (sy_train.h) end to end:
 *
 *   - one SGD step of a Gemm + softmax cross-entropy model gives the weights
 *     of the update written out in the test (softmax, its gradient and
 *     W' = W - lr dW computed here in double);
 *   - one Adam step likewise (the ONNX Adam formulas written out);
 *   - the whole-model gradient of mnist-8 (Conv SAME_UPPER, Add bias,
 *     Relu, MaxPool, Reshape, MatMul) against central finite differences of
 *     the eval model's loss, for a sample of weights of every tensor
 *     (skipped when ../shared is absent);
 *   - a two-class problem trains to 100% and its loss falls;
 *   - checkpoint round trip, a checkpoint of another model refused with the
 *     tensors unchanged, the exported model giving the eval model's output;
 *   - biases-only and last-layer sets; a node without a backward rule on the
 *     gradient path refused naming it.
 */
#include "pt_onnx.h"
#include "sy_test.h"
#include "switchyard/switchyard.h"
#include "switchyard/sy_train.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static sy_env *env;
static char work[512];

static const char *msg(sy_status *st)
{
    static char buf[2048];
    snprintf(buf, sizeof buf, "%s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return buf;
}

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

/* X [n,4] -> Gemm(W [3,4], B [3], transB) -> logits [n,3] -> Softmax */
static const float W0[12] = {0.1f, -0.2f, 0.3f, 0.05f, -0.1f, 0.2f, 0.1f, -0.3f, 0.2f, 0.1f, -0.2f, 0.15f};
static const float B0[3] = {0.01f, -0.02f, 0.03f};

static void gemm_model(const char *path, bool softmax)
{
    pt_model *m = pt_model_new("gemm_cls");
    pt_input(m, "x", PT_F32, 2, (int64_t[]){1, 4});
    pt_init_f32(m, "W", 2, (int64_t[]){3, 4}, W0);
    pt_init_f32(m, "B", 1, (int64_t[]){3}, B0);
    pt_node(m, "Gemm", "fc", (const char *[]){"x", "W", "B", NULL}, (const char *[]){softmax ? "z" : "y", NULL});
    pt_attr_int(m, "transB", 1);
    if (softmax) {
        pt_node(m, "Softmax", "sm", (const char *[]){"z", NULL}, (const char *[]){"y", NULL});
        pt_attr_int(m, "axis", 1);
    }
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    write_model(m, path);
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
static sy_tensor i64(int64_t *d, int64_t n)
{
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_INT64, .rank = 1, .dims = {n}, .data = d,
                   .nbytes = (size_t)n * 8};
    return t;
}

/* The gradient of mean softmax cross-entropy w.r.t. W and B of the Gemm
 * model, in double: dz = (softmax(z) - onehot) / n, dW = dz^T x, dB = sum dz. */
static void hand_grad(const float *w, const float *b, const float *x, const int64_t *lab, int n, double *dw,
                      double *db)
{
    memset(dw, 0, 12 * sizeof *dw);
    memset(db, 0, 3 * sizeof *db);
    for (int s = 0; s < n; s++) {
        double z[3], mx = -1e300, sum = 0;
        for (int c = 0; c < 3; c++) {
            z[c] = b[c];
            for (int k = 0; k < 4; k++)
                z[c] += (double)w[c * 4 + k] * x[s * 4 + k];
            mx = fmax(mx, z[c]);
        }
        for (int c = 0; c < 3; c++)
            sum += exp(z[c] - mx);
        for (int c = 0; c < 3; c++) {
            double dz = (exp(z[c] - mx) / sum - (c == lab[s])) / n;
            db[c] += dz;
            for (int k = 0; k < 4; k++)
                dw[c * 4 + k] += dz * x[s * 4 + k];
        }
    }
}

static sy_status *build(const char *model, const char *dir, int optimizer, int trainable)
{
    sy_train_build_options o = {.struct_size = sizeof o, .optimizer = optimizer, .trainable = trainable, .last_k = 1};
    return sy_train_build(model, &o, dir, NULL);
}

/* the trained tensors through the exported model's initializers are not
 * public, so the tests read them back from a saved checkpoint */
static bool read_param(const char *ckpt, const char *name, float *out, size_t n)
{
    sy_model *m = NULL;
    (void)m;
    FILE *f = fopen(ckpt, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)sz);
    bool ok = buf && fread(buf, 1, (size_t)sz, f) == (size_t)sz;
    fclose(f);
    Onnx__ModelProto *mp = ok ? onnx__model_proto__unpack(NULL, (size_t)sz, buf) : NULL;
    free(buf);
    ok = false;
    for (size_t i = 0; mp && i < mp->graph->n_initializer; i++) {
        Onnx__TensorProto *t = mp->graph->initializer[i];
        if (strcmp(t->name, name))
            continue;
        if (t->has_raw_data && t->raw_data.len == n * 4) {
            memcpy(out, t->raw_data.data, n * 4);
            ok = true;
        } else if (t->n_float_data == n) {
            memcpy(out, t->float_data, n * 4);
            ok = true;
        }
    }
    if (mp)
        onnx__model_proto__free_unpacked(mp, NULL);
    return ok;
}

static void test_sgd_step(void)
{
    char model[600], dir[600], ck[700];
    snprintf(model, sizeof model, "%s/gemm.onnx", work);
    snprintf(dir, sizeof dir, "%s/gemm_sgd", work);
    snprintf(ck, sizeof ck, "%s/after.onnx", dir);
    gemm_model(model, true);
    sy_status *st = build(model, dir, SY_TRAIN_SGD, SY_TRAIN_ALL);
    REQUIRE(!st, "build: %s", msg(st));
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    REQUIRE(!st, "session: %s", msg(st));
    float x[8] = {1.0f, 0.5f, -1.0f, 2.0f, -0.5f, 1.5f, 0.25f, -1.0f};
    int64_t lab[2] = {2, 0};
    sy_tensor tx = f32(x, 2, (int64_t[]){2, 4}), tl = i64(lab, 2);
    const sy_tensor *ins[2] = {&tx, &tl};
    float loss = 0;
    const float lr = 0.5f;
    st = sy_train_session_step(s, ins, 2, lr, &loss);
    CHECK(!st, "step: %s", msg(st));
    double dw[12], db[3];
    hand_grad(W0, B0, x, lab, 2, dw, db);
    /* the loss of the starting weights, in double */
    double want_loss = 0;
    for (int n = 0; n < 2; n++) {
        double z[3], mx = -1e300, sum = 0;
        for (int c = 0; c < 3; c++) {
            z[c] = B0[c];
            for (int k = 0; k < 4; k++)
                z[c] += (double)W0[c * 4 + k] * x[n * 4 + k];
            mx = fmax(mx, z[c]);
        }
        for (int c = 0; c < 3; c++)
            sum += exp(z[c] - mx);
        want_loss += (log(sum) + mx - z[lab[n]]) / 2;
    }
    CHECK(fabs(loss - want_loss) < 1e-5, "loss %.7g, want %.7g", (double)loss, want_loss);
    st = sy_train_session_save(s, ck);
    CHECK(!st, "save: %s", msg(st));
    float w[12], b[3];
    REQUIRE(read_param(ck, "W", w, 12) && read_param(ck, "B", b, 3), "W and B in the checkpoint");
    for (int i = 0; i < 12; i++)
        CHECK(fabs(w[i] - (W0[i] - lr * dw[i])) < 1e-6, "W[%d] %.7g, want %.7g", i, (double)w[i],
              W0[i] - lr * dw[i]);
    for (int i = 0; i < 3; i++)
        CHECK(fabs(b[i] - (B0[i] - lr * db[i])) < 1e-6, "B[%d] %.7g, want %.7g", i, (double)b[i], B0[i] - lr * db[i]);
    CHECK(sy_train_session_steps(s) == 1, "steps %lld", (long long)sy_train_session_steps(s));

    /* checkpoint round trip: two more steps, then back to `after` */
    for (int k = 0; k < 2; k++)
        st = st ? st : sy_train_session_step(s, ins, 2, lr, &loss);
    CHECK(!st, "steps: %s", msg(st));
    st = sy_train_session_load(s, ck);
    CHECK(!st, "load: %s", msg(st));
    CHECK(sy_train_session_steps(s) == 1, "steps after load %lld", (long long)sy_train_session_steps(s));
    char ck2[700];
    snprintf(ck2, sizeof ck2, "%s/again.onnx", dir);
    st = sy_train_session_save(s, ck2);
    float w2[12];
    CHECK(!st && read_param(ck2, "W", w2, 12) && !memcmp(w, w2, sizeof w), "the loaded checkpoint's W");

    /* a checkpoint of another model (its tensors are named otherwise) */
    char other[700];
    snprintf(other, sizeof other, "%s/other.onnx", dir);
    pt_model *om = pt_model_new("other");
    pt_init_f32(om, "W", 2, (int64_t[]){4, 3}, W0);
    pt_input(om, "q", PT_F32, 1, (int64_t[]){1});
    pt_output(om, "q", PT_F32, 1, (int64_t[]){1});
    write_model(om, other);
    st = sy_train_session_load(s, other);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "has another shape than the model's");
    sy_status_free(st);
    st = sy_train_session_save(s, ck2);
    CHECK(!st && read_param(ck2, "W", w2, 12) && !memcmp(w, w2, sizeof w), "a refused load changed W");

    /* the exported model computes what the eval model computes */
    char exp_path[700];
    snprintf(exp_path, sizeof exp_path, "%s/trained.onnx", dir);
    st = sy_train_session_export(s, exp_path);
    CHECK(!st, "export: %s", msg(st));
    const sy_tensor *ev = NULL;
    float eloss;
    float x1[4] = {1.0f, 0.5f, -1.0f, 2.0f};
    int64_t l1[1] = {2};
    sy_tensor tx1 = f32(x1, 2, (int64_t[]){1, 4}), tl1 = i64(l1, 1);
    st = sy_train_session_eval(s, (const sy_tensor *[]){&tx1, &tl1}, 2, &eloss, &ev);
    CHECK(!st, "eval: %s", msg(st));
    sy_model *em = NULL;
    sy_session *es = NULL;
    st = sy_model_load(env, exp_path, &em);
    if (!st)
        st = sy_session_create(env, em, NULL, &es);
    if (!st)
        st = sy_session_set_input_by_index(es, 0, &tx1, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(es);
    const sy_tensor *y = NULL;
    if (!st)
        st = sy_session_get_output(es, 0, &y);
    CHECK(!st, "exported model: %s", msg(st));
    for (int c = 0; !st && ev && c < 3; c++)
        CHECK(((const float *)y->data)[c] == ((const float *)ev->data)[c], "exported output %d: %g vs eval %g", c,
              (double)((const float *)y->data)[c], (double)((const float *)ev->data)[c]);
    sy_session_release(es);
    sy_model_release(em);
    sy_train_session_release(s);
}

static void test_adam_step(void)
{
    char model[600], dir[600], ck[700];
    snprintf(model, sizeof model, "%s/gemm2.onnx", work);
    snprintf(dir, sizeof dir, "%s/gemm_adam", work);
    snprintf(ck, sizeof ck, "%s/after.onnx", dir);
    gemm_model(model, false);
    sy_status *st = build(model, dir, SY_TRAIN_ADAM, SY_TRAIN_ALL);
    REQUIRE(!st, "build: %s", msg(st));
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    REQUIRE(!st, "session: %s", msg(st));
    float x[4] = {0.5f, -1.0f, 2.0f, 1.0f};
    int64_t lab[1] = {1};
    sy_tensor tx = f32(x, 2, (int64_t[]){1, 4}), tl = i64(lab, 1);
    float loss;
    const float lr = 0.01f;
    st = sy_train_session_step(s, (const sy_tensor *[]){&tx, &tl}, 2, lr, &loss);
    CHECK(!st, "step: %s", msg(st));
    st = st ? st : sy_train_session_save(s, ck);
    float w[12];
    REQUIRE(!st && read_param(ck, "W", w, 12), "checkpoint: %s", msg(st));
    double dw[12], db[3];
    hand_grad(W0, B0, x, lab, 1, dw, db);
    /* Adam at T = 1, alpha 0.9, beta 0.999, eps 1e-8, zero state:
     *   V = 0.1 g, H = 0.001 g^2, r = lr sqrt(1 - 0.999) / (1 - 0.9),
     *   W' = W - r V / (sqrt(H) + eps) */
    double r = lr * sqrt(1.0 - 0.999) / (1.0 - 0.9);
    for (int i = 0; i < 12; i++) {
        double v = 0.1 * dw[i], h = 0.001 * dw[i] * dw[i];
        double want = W0[i] - r * v / (sqrt(h) + 1e-8);
        CHECK(fabs(w[i] - want) < 2e-6, "Adam W[%d] %.7g, want %.7g", i, (double)w[i], want);
    }
    sy_train_session_release(s);
}

/* Two Gaussian-free blobs: class = (x0 + x1 > 0); 100% after training. */
static void test_converges(void)
{
    char model[600], dir[600];
    snprintf(model, sizeof model, "%s/blob.onnx", work);
    snprintf(dir, sizeof dir, "%s/blob", work);
    pt_model *m = pt_model_new("blob");
    static const float w[8] = {0.01f, -0.02f, 0.03f, 0.0f, -0.01f, 0.02f, 0.0f, 0.01f};
    static const float b[2] = {0, 0};
    pt_input(m, "x", PT_F32, 2, (int64_t[]){1, 4});
    pt_init_f32(m, "W", 2, (int64_t[]){4, 2}, w);
    pt_init_f32(m, "b", 1, (int64_t[]){2}, b);
    pt_node(m, "MatMul", "mm", (const char *[]){"x", "W", NULL}, (const char *[]){"z", NULL});
    pt_node(m, "Add", "add", (const char *[]){"z", "b", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 2});
    write_model(m, model);
    sy_status *st = build(model, dir, SY_TRAIN_SGD, SY_TRAIN_ALL);
    REQUIRE(!st, "build: %s", msg(st));
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    REQUIRE(!st, "session: %s", msg(st));
    enum { N = 16 };
    float x[N * 4];
    int64_t lab[N];
    for (int i = 0; i < N; i++) {
        float a = (float)((i * 7) % 11) / 5.0f - 1.0f, c = (float)((i * 5) % 13) / 6.0f - 1.0f;
        x[i * 4] = a, x[i * 4 + 1] = c, x[i * 4 + 2] = 0.5f * a, x[i * 4 + 3] = -c;
        lab[i] = a + c > 0;
    }
    sy_tensor tx = f32(x, 2, (int64_t[]){N, 4}), tl = i64(lab, N);
    const sy_tensor *ins[2] = {&tx, &tl};
    float first = 0, loss = 0;
    for (int k = 0; k < 200 && !st; k++) {
        st = sy_train_session_step(s, ins, 2, 0.5f, &loss);
        if (k == 0)
            first = loss;
    }
    CHECK(!st, "steps: %s", msg(st));
    CHECK(loss < 0.25f * first, "loss %.4f after 200 steps, %.4f at the first", (double)loss, (double)first);
    const sy_tensor *out = NULL;
    st = sy_train_session_eval(s, ins, 2, &loss, &out);
    CHECK(!st, "eval: %s", msg(st));
    int right = 0;
    for (int i = 0; !st && i < N; i++) {
        const float *z = (const float *)out->data + i * 2;
        right += (z[1] > z[0]) == (lab[i] == 1);
    }
    CHECK(right == N, "%d of %d right after training", right, N);
    sy_train_session_release(s);
}

static void test_sets_and_refusals(void)
{
    char model[600], dir[600];
    snprintf(model, sizeof model, "%s/gemm.onnx", work);
    sy_train_build_report rep = {.struct_size = sizeof rep};
    sy_train_build_options o = {.struct_size = sizeof o, .trainable = SY_TRAIN_BIASES};
    snprintf(dir, sizeof dir, "%s/bias_only", work);
    sy_status *st = sy_train_build(model, &o, dir, &rep);
    CHECK(!st && rep.n_trainable == 1 && rep.trainable_elements == 3, "biases only: %zu tensors, %lld elements: %s",
          rep.n_trainable, (long long)rep.trainable_elements, msg(st));

    /* a Sin between the weights and the loss has no backward rule */
    pt_model *m = pt_model_new("sin");
    pt_input(m, "x", PT_F32, 2, (int64_t[]){1, 4});
    pt_init_f32(m, "W", 2, (int64_t[]){4, 3}, W0);
    pt_node(m, "MatMul", "mm", (const char *[]){"x", "W", NULL}, (const char *[]){"z", NULL});
    pt_node(m, "Sin", "the_sine", (const char *[]){"z", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 3});
    snprintf(model, sizeof model, "%s/sin.onnx", work);
    write_model(m, model);
    snprintf(dir, sizeof dir, "%s/sin", work);
    st = sy_train_build(model, NULL, dir, NULL);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "node 'the_sine' (Sin): no backward rule");
    sy_status_free(st);

    o.trainable = SY_TRAIN_LAST_K;
    o.last_k = 0;
    st = sy_train_build(model, &o, dir, NULL);
    CHECK_STR_HAS(st ? sy_status_get_message(st) : NULL, "last_k must be >= 1");
    sy_status_free(st);
}

/* the number of nodes of `op_type` in the ONNX file `path` (-1: unreadable) */
static int count_op(const char *path, const char *op_type)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = sz > 0 ? malloc((size_t)sz) : NULL;
    bool ok = buf && fread(buf, 1, (size_t)sz, f) == (size_t)sz;
    fclose(f);
    Onnx__ModelProto *mp = ok ? onnx__model_proto__unpack(NULL, (size_t)sz, buf) : NULL;
    free(buf);
    if (!mp)
        return -1;
    int n = 0;
    for (size_t i = 0; i < mp->graph->n_node; i++)
        n += !strcmp(mp->graph->node[i]->op_type, op_type);
    onnx__model_proto__free_unpacked(mp, NULL);
    return n;
}

/* The trainable set and the backward pruning on graphs/fashion_cnn.onnx:
 *   Concat x3 (the image to 8 channels) -> Conv dwconv (W [8, 1, 3, 3], no
 *   bias) -> Relu -> Flatten -> Gemm fc1 (W [64, 6272], B [64], transB) ->
 *   Relu -> Gemm fc2 (W [10, 64], B [10], transB) -> Softmax.
 * last:1 trains fc2 alone: 2 tensors, 10 * 64 + 10 = 650 values. Its
 * backward, by train_autodiff.c's Gemm rule (transB = 1, alpha = beta = 1:
 * no scaling Mul) from the loss's SoftmaxCrossEntropyGrad (the seed, not a
 * counted backward node): dW = dY^T . A is a Transpose and a MatMul, dB the
 * ReduceToShape of dY to B's Shape: 4 nodes. fc2's input gradient (dY . W)
 * is pruned (nothing before fc2 is trained), so nothing reaches relu2, fc1,
 * Flatten, relu1 or the Conv: no ReluGrad and no ConvGrad.
 * all trains dwconv.W, fc1 and fc2: 5 tensors, 72 + 401,408 + 64 + 640 + 10
 * = 402,194 values, and the backward also holds fc2's dA (a MatMul), relu2's
 * ReluGrad, fc1's dA (MatMul), dW (Transpose, MatMul) and dB (Shape,
 * ReduceToShape), the Flatten's gradient (Shape of its input, Reshape),
 * relu1's ReluGrad and one ConvGrad (weights only: the Concats' inputs are
 * the image): 4 + 1 + 1 + 5 + 2 + 1 + 1 = 15 nodes. */
static const char *graphs_dir; /* argv[3]: the repository's graphs/ */

static void test_last_k_pruning(void)
{
    REQUIRE(graphs_dir, "usage: test_train_session SHARED_DIR WORK_DIR GRAPHS_DIR (the folder of fashion_cnn.onnx)");
    char model[600], dir[600], p[700];
    snprintf(model, sizeof model, "%s/fashion_cnn.onnx", graphs_dir);
    static const struct {
        const char *name;
        int trainable, last_k;
        size_t tensors;
        int64_t values;
        size_t backward;
        int conv_grads, relu_grads;
    } cases[] = {
        {"last1", SY_TRAIN_LAST_K, 1, 2, 650, 4, 0, 0},
        {"all", SY_TRAIN_ALL, 0, 5, 402194, 15, 1, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sy_train_build_report rep = {.struct_size = sizeof rep};
        sy_train_build_options o = {.struct_size = sizeof o, .trainable = cases[c].trainable,
                                    .last_k = cases[c].last_k};
        snprintf(dir, sizeof dir, "%s/fashion_%s", work, cases[c].name);
        sy_status *st = sy_train_build(model, &o, dir, &rep);
        CHECK(!st, "fashion_cnn %s: %s", cases[c].name, msg(st));
        if (st)
            continue;
        snprintf(p, sizeof p, "%s/training.onnx", dir);
        int conv = count_op(p, "ConvGrad"), relu = count_op(p, "ReluGrad");
        printf("  fashion_cnn %s: %zu tensors (%lld values), %zu backward nodes, %d ConvGrad, %d ReluGrad\n",
               cases[c].name, rep.n_trainable, (long long)rep.trainable_elements, rep.backward_nodes, conv, relu);
        CHECK(rep.n_trainable == cases[c].tensors && rep.trainable_elements == cases[c].values,
              "fashion_cnn %s: %zu tensors of %lld values, want %zu of %lld", cases[c].name, rep.n_trainable,
              (long long)rep.trainable_elements, cases[c].tensors, (long long)cases[c].values);
        CHECK(rep.backward_nodes == cases[c].backward, "fashion_cnn %s: %zu backward nodes, want %zu",
              cases[c].name, rep.backward_nodes, cases[c].backward);
        CHECK(conv == cases[c].conv_grads && relu == cases[c].relu_grads,
              "fashion_cnn %s: %d ConvGrad and %d ReluGrad nodes in training.onnx, want %d and %d", cases[c].name,
              conv, relu, cases[c].conv_grads, cases[c].relu_grads);
    }
}

static size_t read_all(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap, f) : 0;
    if (f)
        fclose(f);
    return n;
}

/* A full disk while writing the checkpoint: the file size limit
 * (RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG as on a full
 * disk) is lowered under the checkpoint's size; the save fails with an I/O
 * error naming the file, the old checkpoint is intact byte for byte, no
 * temporary file is left, and it still loads. */
static void test_full_disk(void)
{
    char model[600], dir[600], ck[700];
    snprintf(model, sizeof model, "%s/gemm.onnx", work);
    snprintf(dir, sizeof dir, "%s/full_disk", work);
    snprintf(ck, sizeof ck, "%s/ck.onnx", dir);
    sy_status *st = build(model, dir, SY_TRAIN_ADAM, SY_TRAIN_ALL);
    REQUIRE(!st, "build: %s", msg(st));
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    REQUIRE(!st, "session: %s", msg(st));
    float x[4] = {0.5f, -1.0f, 0.25f, 2.0f};
    int64_t lab[1] = {2};
    sy_tensor tx = f32(x, 2, (int64_t[]){1, 4}), tl = i64(lab, 1);
    const sy_tensor *ins[2] = {&tx, &tl};
    float loss;
    st = sy_train_session_step(s, ins, 2, 0.1f, &loss);
    st = st ? st : sy_train_session_save(s, ck);
    REQUIRE(!st, "first checkpoint: %s", msg(st));
    static uint8_t before[1 << 16], after[1 << 16];
    size_t nb = read_all(ck, before, sizeof before);
    REQUIRE(nb > 64 && nb < sizeof before, "checkpoint of %zu bytes", nb);
    st = sy_train_session_step(s, ins, 2, 0.1f, &loss); /* new values to save */
    REQUIRE(!st, "step: %s", msg(st));
    struct rlimit old;
    getrlimit(RLIMIT_FSIZE, &old);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {.rlim_cur = (rlim_t)(nb / 2), .rlim_max = old.rlim_max};
    REQUIRE(!setrlimit(RLIMIT_FSIZE, &lim), "setrlimit");
    st = sy_train_session_save(s, ck);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    CHECK(st && sy_status_get_code(st) == SY_ERR_IO && strstr(sy_status_get_message(st), "ck.onnx"),
          "a save that cannot be written: %s", st ? sy_status_get_message(st) : "succeeded");
    sy_status_free(st);
    size_t na = read_all(ck, after, sizeof after);
    CHECK(na == nb && !memcmp(before, after, nb), "the old checkpoint changed (%zu bytes, was %zu)", na, nb);
    DIR *d = opendir(dir);
    int tmp = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        tmp += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    CHECK(tmp == 0, "%d temporary files left in %s", tmp, dir);
    st = sy_train_session_load(s, ck);
    CHECK(!st && sy_train_session_steps(s) == 1, "the old checkpoint does not load: %s", msg(st));
    sy_train_session_release(s);
}

/* mnist-8: every rule of a real network against central differences of
 * the eval model's loss, for a few elements of each trained tensor. */
static void test_mnist_gradients(const char *shared)
{
    char model[600], dir[600];
    snprintf(model, sizeof model, "%s/models/onnx/mnist-8/model.onnx", shared);
    if (access(model, R_OK)) {
        printf("  (mnist-8 gradient check skipped: %s is absent)\n", model);
        return;
    }
    snprintf(dir, sizeof dir, "%s/mnist", work);
    sy_train_build_report rep = {.struct_size = sizeof rep};
    sy_train_build_options o = {.struct_size = sizeof o};
    sy_status *st = sy_train_build(model, &o, dir, &rep);
    REQUIRE(!st, "build mnist-8: %s", msg(st));
    printf("  mnist-8: %zu tensors (%lld elements), %zu forward and %zu backward nodes\n", rep.n_trainable,
           (long long)rep.trainable_elements, rep.forward_nodes, rep.backward_nodes);
    /* the gradients: the training model run directly */
    sy_model *tm = NULL, *em = NULL, *fm = NULL;
    sy_session *ts = NULL, *es = NULL;
    char p[700];
    snprintf(p, sizeof p, "%s/training.onnx", dir);
    st = sy_model_load(env, p, &tm);
    st = st ? st : sy_session_create(env, tm, NULL, &ts);
    snprintf(p, sizeof p, "%s/eval.onnx", dir);
    st = st ? st : sy_model_load(env, p, &em);
    st = st ? st : sy_session_create(env, em, NULL, &es);
    st = st ? st : sy_model_load(env, model, &fm);
    REQUIRE(!st, "mnist-8 artifacts: %s", msg(st));
    float img[784];
    for (int i = 0; i < 784; i++)
        img[i] = (float)((i * 37) % 255) / 255.0f * (i % 28 > 5 && i % 28 < 22 ? 1.0f : 0.1f);
    int64_t lab[1] = {3};
    sy_tensor ti = f32(img, 4, (int64_t[]){1, 1, 28, 28}), tl = i64(lab, 1);
    size_t n_in = sy_model_input_count(tm);
    /* the trained tensors, copied from the forward model's initializers via the checkpoint */
    snprintf(p, sizeof p, "%s/checkpoint.onnx", dir);
    float *vals[16] = {0};
    size_t lens[16] = {0};
    sy_tensor tv[16];
    for (size_t i = 2; i < n_in && i < 18; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_input_info(tm, i, &vi);
        size_t n = 1;
        for (int32_t d = 0; d < vi.rank; d++)
            n *= (size_t)vi.dims[d];
        vals[i - 2] = malloc(n * 4);
        lens[i - 2] = n;
        CHECK(read_param(p, vi.name, vals[i - 2], n), "checkpoint tensor %s", vi.name);
        tv[i - 2] = f32(vals[i - 2], vi.rank, vi.dims);
    }
    st = sy_session_set_input_by_index(ts, 0, &ti, SY_INPUT_COPY);
    st = st ? st : sy_session_set_input_by_index(ts, 1, &tl, SY_INPUT_COPY);
    for (size_t i = 2; !st && i < n_in; i++)
        st = sy_session_set_input_by_index(ts, i, &tv[i - 2], SY_INPUT_BORROW);
    st = st ? st : sy_session_run(ts);
    REQUIRE(!st, "mnist-8 training run: %s", msg(st));
    double worst = 0, worst_abs = 0;
    for (size_t k = 0; k + 2 < n_in; k++) {
        const sy_tensor *g = NULL;
        st = sy_session_get_output(ts, 1 + k, &g);
        REQUIRE(!st, "gradient %zu: %s", k, msg(st));
        for (size_t e = 0; e < lens[k]; e += lens[k] / 5 + 1) {
            float keep = vals[k][e];
            double l[2];
            for (int side = 0; side < 2; side++) {
                vals[k][e] = keep + (side ? -1.0f : 1.0f) * 1e-3f;
                float loss = 0;
                st = sy_session_set_input_by_index(es, 0, &ti, SY_INPUT_COPY);
                st = st ? st : sy_session_set_input_by_index(es, 1, &tl, SY_INPUT_COPY);
                for (size_t i = 2; !st && i < n_in; i++)
                    st = sy_session_set_input_by_index(es, i, &tv[i - 2], SY_INPUT_BORROW);
                st = st ? st : sy_session_run(es);
                const sy_tensor *lo = NULL;
                st = st ? st : sy_session_get_output(es, 0, &lo);
                if (!st)
                    loss = *(const float *)lo->data;
                l[side] = loss;
            }
            vals[k][e] = keep;
            REQUIRE(!st, "eval run: %s", msg(st));
            double num = (l[0] - l[1]) / 2e-3, an = ((const float *)g->data)[e];
            /* the float32 loss resolves differences of about 4 ulp / 2h: an
             * error below that is the difference quotient's own */
            double resolution = 4.0 * fabs(l[0]) * 1.1920929e-7 / 2e-3;
            double err = fmax(0.0, fabs(num - an) - resolution) / fmax(fabs(num), 1e-2);
            worst = err == err ? fmax(worst, err) : INFINITY;
            worst_abs = fmax(worst_abs, fabs(num - an));
            CHECK(err < 2e-2, "mnist-8 gradient %zu[%zu]: analytic %.6g, finite differences %.6g", k, e, an, num);
        }
    }
    printf("  mnist-8 gradients vs finite differences: largest difference %.2e, worst relative error beyond the "
           "float32 resolution %.2e\n", worst_abs, worst);
    for (int i = 0; i < 16; i++)
        free(vals[i]);
    sy_session_release(ts);
    sy_session_release(es);
    sy_model_release(tm);
    sy_model_release(em);
    sy_model_release(fm);
}

/* A weight fed as a graph input is a variable: after a re-plan (a new
 * batch size), a new weight must be read by the next run, on whichever
 * provider takes the Conv (the default configuration puts the cpu provider
 * first, whose Conv packs constant weights at prepare). Y = Conv 1x1 of a
 * one-channel X with weight w is w * X, worked out by hand. */
static void test_weights_are_inputs(void)
{
    char model[600];
    snprintf(model, sizeof model, "%s/conv_w_input.onnx", work);
    pt_model *m = pt_model_new("conv_w_input");
    pt_input(m, "x", PT_F32, 4, (int64_t[]){1, 1, 2, 2});
    pt_input(m, "w", PT_F32, 4, (int64_t[]){1, 1, 1, 1});
    pt_node(m, "Conv", "conv", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 4, (int64_t[]){1, 1, 2, 2});
    /* a symbolic batch: the first run with 2 samples re-plans */
    m->graph.input[0]->type->tensor_type->shape->dim[0]->value_case =
        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    m->graph.input[0]->type->tensor_type->shape->dim[0]->dim_param = "N";
    write_model(m, model);
    sy_env *denv = NULL;
    sy_model *mm = NULL;
    sy_session *s = NULL;
    sy_status *st = sy_env_create(NULL, &denv); /* the embedded default */
    st = st ? st : sy_model_load(denv, model, &mm);
    st = st ? st : sy_session_create(denv, mm, NULL, &s);
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[1] = {2.0f};
    sy_tensor tx = f32(x, 4, (int64_t[]){2, 1, 2, 2}), tw = f32(w, 4, (int64_t[]){1, 1, 1, 1});
    for (int run = 0; !st && run < 3; run++) {
        w[0] = (float)(2 + run); /* 2, 3, 4 */
        st = sy_session_set_input(s, "x", &tx, SY_INPUT_BORROW);
        st = st ? st : sy_session_set_input(s, "w", &tw, SY_INPUT_BORROW);
        st = st ? st : sy_session_run(s);
        const sy_tensor *y = NULL;
        st = st ? st : sy_session_get_output(s, 0, &y);
        for (int i = 0; !st && i < 8; i++)
            CHECK(((const float *)y->data)[i] == w[0] * x[i], "run %d: y[%d] = %g, want %g * %g", run, i,
                  (double)((const float *)y->data)[i], (double)w[0], (double)x[i]);
    }
    CHECK(!st, "conv with an input weight: %s", msg(st));
    sy_session_release(s);
    sy_model_release(mm);
    sy_env_release(denv);
}

int main(int argc, char **argv)
{
    snprintf(work, sizeof work, "%s/train_session_XXXXXX", argc > 2 ? argv[2] : "/tmp");
    if (!mkdtemp(work)) {
        fprintf(stderr, "cannot make a work folder under %s\n", argc > 2 ? argv[2] : "/tmp");
        return 1;
    }
    char ini[4096];
    int len = snprintf(ini, sizeof ini, "[switchyard]\n");
    static const char *const plugins[] = {"cpu_ref", "ops_nn", "ops_math", "ops_activation",
                                          "ops_reduce", "ops_tensor", "train"};
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++)
        len += snprintf(ini + len, sizeof ini - (size_t)len, "plugins = %s/libsy_%s.so\n", SY_PLUGIN_DIR, plugins[i]);
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", msg(st));
        return 1;
    }
    RUN_TEST(test_sgd_step);
    RUN_TEST(test_adam_step);
    RUN_TEST(test_converges);
    RUN_TEST(test_sets_and_refusals);
    graphs_dir = argc > 3 ? argv[3] : NULL;
    RUN_TEST(test_last_k_pruning);
    RUN_TEST(test_full_disk);
    RUN_TEST(test_weights_are_inputs);
    test_mnist_gradients(argc > 1 ? argv[1] : "../shared");
    sy_env_release(env);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", work);
    return SY_TEST_MAIN_RESULT();
}
