/*
 * The ONNX training optimizers (ai.onnx.preview.training Adagrad, Momentum,
 * Adam) on hand-worked steps, beside the ONNX node tests that the
 * conformance suite runs: Nesterov momentum, T = 0 (no bias correction, beta
 * not yet applied), decay of Adagrad's rate, Adam's norm_coefficient_post,
 * two tensors in one node; and the refusals (missing required attribute,
 * unknown mode, wrong input count, R not a scalar).
 *
 * Every expected value below is worked out by hand from the formulas of the
 * ONNX operator documents (written next to each case).
 */
#include "pt_onnx.h"
#include "sy_test.h"
#include "switchyard/switchyard.h"

#include <math.h>

static sy_env *env;

static const char *msg_of(sy_status *st)
{
    static char buf[2048];
    snprintf(buf, sizeof buf, "%s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return buf;
}

/* One optimizer node: X_i are graph inputs, R, T and the other groups
 * initializers; outputs out_0.. in order. `attrs` sets the attributes. */
typedef struct optim_case {
    const char *op;
    float r;
    int64_t t;
    int n_tensors, n_groups; /* tensors updated; groups incl. X and G */
    int64_t len;             /* elements per tensor */
    const float *groups[4][2];
} optim_case;

static pt_model *optim_model(const optim_case *c)
{
    pt_model *m = pt_model_new(c->op);
    pt_opset(m, "ai.onnx.preview.training", 1);
    int64_t dims[1] = {c->len};
    pt_init_f32(m, "R", 0, NULL, &c->r);
    pt_init_i64(m, "T", 0, NULL, &c->t);
    const char *ins[2 + 4 * 2 + 1] = {"R", "T"};
    const char *outs[3 * 2 + 1] = {0};
    static char names[16][32]; /* "out_" + two ints: room for any int */
    int k = 2, o = 0;
    for (int g = 0; g < c->n_groups; g++)
        for (int i = 0; i < c->n_tensors; i++) {
            char *nm = names[g * 2 + i];
            snprintf(nm, sizeof names[0], "in_%d_%d", g, i);
            ins[k++] = nm;
            if (g == 0)
                pt_input(m, nm, PT_F32, 1, dims);
            else
                pt_init_f32(m, nm, 1, dims, c->groups[g][i]);
        }
    ins[k] = NULL;
    for (int g = 0; g + 1 < c->n_groups; g++)
        for (int i = 0; i < c->n_tensors; i++) {
            char *nm = names[8 + g * 2 + i];
            snprintf(nm, sizeof names[0], "out_%d_%d", g, i);
            outs[o++] = nm;
        }
    outs[o] = NULL;
    pt_node(m, c->op, "opt", ins, outs);
    pt_domain(m, "ai.onnx.preview.training");
    for (int i = 0; i < o; i++)
        pt_output(m, outs[i], PT_F32, 1, dims);
    return m;
}

/* Runs the model and compares output j (in order) with want[j]; returns the
 * load/plan/run error message, "" on success. */
static const char *run_case(const optim_case *c, pt_model *m, const float *const *want)
{
    static char err[2048];
    err[0] = '\0';
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    sy_model *model = NULL;
    sy_session *s = NULL;
    sy_status *st = sy_model_load_buffer(env, buf, len, c->op, NULL, &model);
    free(buf);
    if (!st)
        st = sy_session_create(env, model, NULL, &s);
    for (int i = 0; !st && i < c->n_tensors; i++) {
        sy_tensor x = {.struct_size = sizeof x, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {c->len},
                       .data = (void *)c->groups[0][i], .nbytes = (size_t)c->len * sizeof(float)};
        char nm[16];
        snprintf(nm, sizeof nm, "in_0_%d", i);
        st = sy_session_set_input(s, nm, &x, SY_INPUT_COPY);
    }
    if (!st)
        st = sy_session_run(s);
    int n_out = (c->n_groups - 1) * c->n_tensors;
    for (int j = 0; !st && j < n_out; j++) {
        const sy_tensor *y = NULL;
        st = sy_session_get_output(s, (uint32_t)j, &y);
        if (st)
            break;
        for (int64_t e = 0; e < c->len; e++) {
            float got = ((const float *)y->data)[e], w = want[j][e];
            CHECK(fabsf(got - w) <= 1e-6f * fmaxf(1.0f, fabsf(w)), "%s output %d[%lld]: got %.9g, want %.9g",
                  c->op, j, (long long)e, (double)got, (double)w);
        }
    }
    if (st)
        snprintf(err, sizeof err, "%s", msg_of(st));
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(m);
    return err;
}

static const float mx[2] = {1.0f, -2.0f}, mg[2] = {0.5f, 1.0f}, mv[2] = {1.0f, -1.0f};

/* Momentum, R 0.1, alpha 0.5, beta 2, norm 0.25, X [1,-2], G [.5,1], V [1,-1]:
 *   g = 0.25 X + G = [0.75, 0.5]
 *   T = 1: V' = 0.5 V + 2 g = [2, 0.5]
 *     standard X' = X - 0.1 V'             = [0.8, -2.05]
 *     nesterov X' = X - 0.1 (g + 0.5 V')   = [0.825, -2.075]
 *   T = 0: beta is replaced by 1: V' = 0.5 V + g = [1.25, 0]
 *     standard X' = [0.875, -2] */
static void test_momentum(void)
{
    static const struct {
        const char *mode;
        int64_t t;
        float x[2], v[2];
    } rows[] = {{"standard", 1, {0.8f, -2.05f}, {2.0f, 0.5f}},
                {"nesterov", 1, {0.825f, -2.075f}, {2.0f, 0.5f}},
                {"standard", 0, {0.875f, -2.0f}, {1.25f, 0.0f}}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        optim_case c = {"Momentum", 0.1f, rows[r].t, 1, 3, 2, {{mx}, {mg}, {mv}}};
        pt_model *m = optim_model(&c);
        pt_attr_float(m, "alpha", 0.5f);
        pt_attr_float(m, "beta", 2.0f);
        pt_attr_float(m, "norm_coefficient", 0.25f);
        pt_attr_string(m, "mode", rows[r].mode);
        const float *want[2] = {rows[r].x, rows[r].v};
        const char *e = run_case(&c, m, want);
        CHECK(!*e, "Momentum %s T=%lld: %s", rows[r].mode, (long long)rows[r].t, e);
    }
}

/* Adagrad, R 0.5, T 3, decay 1/3, epsilon 0, X [2], G [3], H [16]:
 *   r = 0.5 / (1 + 3/3) = 0.25;  H' = 16 + 9 = 25;  X' = 2 - 0.25*3/5 = 1.85
 * with norm_coefficient 0.5 and X [2, 4], G [3, -1], H [16, 0]:
 *   g = [4, 1];  H' = [32, 1];  X' = [2 - 0.25*4/sqrt(32), 4 - 0.25*1/1] */
static void test_adagrad(void)
{
    static const float x[1] = {2}, g[1] = {3}, h[1] = {16}, wx[1] = {1.85f}, wh[1] = {25};
    optim_case c = {"Adagrad", 0.5f, 3, 1, 3, 1, {{x}, {g}, {h}}};
    pt_model *m = optim_model(&c);
    pt_attr_float(m, "decay_factor", 1.0f / 3.0f);
    pt_attr_float(m, "epsilon", 0.0f);
    const char *e = run_case(&c, m, (const float *const[]){wx, wh});
    CHECK(!*e, "Adagrad: %s", e);

    static const float x2[2] = {2, 4}, g2[2] = {3, -1}, h2[2] = {16, 0};
    float wx2[2] = {2.0f - 0.25f * 4.0f / sqrtf(32.0f), 3.75f}, wh2[2] = {32, 1};
    optim_case c2 = {"Adagrad", 0.5f, 3, 1, 3, 2, {{x2}, {g2}, {h2}}};
    m = optim_model(&c2);
    pt_attr_float(m, "decay_factor", 1.0f / 3.0f);
    pt_attr_float(m, "epsilon", 0.0f);
    pt_attr_float(m, "norm_coefficient", 0.5f);
    e = run_case(&c2, m, (const float *const[]){wx2, wh2});
    CHECK(!*e, "Adagrad norm: %s", e);
}

/* Adam, R 0.3, alpha 0.5, beta 0.75, epsilon 0.5, norm_post 0.5, two
 * tensors in one node: X1 [1] G1 [2] V1 [0] H1 [0]; X2 [-1] G2 [-2] V2 [0] H2 [0]:
 *   V' = 0.5*0 + 0.5*2 = 1;  H' = 0.25*4 = 1;  sqrt(H') + eps = 1.5
 *   T = 0: X' = 0.5 (1 - 0.3*1/1.5) = 0.4            (X2: -0.4, V2' = -1)
 *   T = 2: r = 0.3 sqrt(1 - 0.75^2) / (1 - 0.5^2) = 0.4 sqrt(0.4375)
 *          X' = 0.5 (1 - r/1.5) */
static void test_adam(void)
{
    static const float x1[1] = {1}, x2[1] = {-1}, g1[1] = {2}, g2[1] = {-2}, z[1] = {0};
    for (int64_t t = 0; t <= 2; t += 2) {
        float r = t ? 0.4f * sqrtf(0.4375f) : 0.3f;
        float wx1[1] = {0.5f * (1.0f - r / 1.5f)}, wx2[1] = {-wx1[0]};
        float wv1[1] = {1}, wv2[1] = {-1}, wh[1] = {1};
        optim_case c = {"Adam", 0.3f, t, 2, 4, 1, {{x1, x2}, {g1, g2}, {z, z}, {z, z}}};
        pt_model *m = optim_model(&c);
        pt_attr_float(m, "alpha", 0.5f);
        pt_attr_float(m, "beta", 0.75f);
        pt_attr_float(m, "epsilon", 0.5f);
        pt_attr_float(m, "norm_coefficient_post", 0.5f);
        const char *e = run_case(&c, m, (const float *const[]){wx1, wx2, wv1, wv2, wh, wh});
        CHECK(!*e, "Adam T=%lld: %s", (long long)t, e);
    }
}

static void test_refusals(void)
{
    const float *w[2] = {mx, mv};
    optim_case c = {"Momentum", 0.1f, 1, 1, 3, 2, {{mx}, {mg}, {mv}}};
    pt_model *m = optim_model(&c); /* no attributes: alpha is required */
    CHECK_STR_HAS(run_case(&c, m, w), "Momentum needs the attribute alpha");

    m = optim_model(&c);
    pt_attr_float(m, "alpha", 0.5f);
    pt_attr_float(m, "beta", 1.0f);
    pt_attr_float(m, "norm_coefficient", 0.0f);
    pt_attr_string(m, "mode", "heavy_ball");
    CHECK_STR_HAS(run_case(&c, m, w), "mode must be \"standard\" or \"nesterov\", got \"heavy_ball\"");

    /* Adam with Momentum's three groups: 2 + 3 inputs is not 2 + 4k */
    optim_case a = {"Adam", 0.1f, 1, 1, 3, 2, {{mx}, {mg}, {mv}}};
    m = optim_model(&a);
    CHECK_STR_HAS(run_case(&a, m, w), "Adam takes R, T and 4 groups");

    /* R with two values */
    m = pt_model_new("bad_r");
    pt_opset(m, "ai.onnx.preview.training", 1);
    int64_t d2[1] = {2};
    static const float r2[2] = {0.1f, 0.2f};
    static const int64_t t1 = 1;
    pt_init_f32(m, "R", 1, d2, r2);
    pt_init_i64(m, "T", 0, NULL, &t1);
    pt_input(m, "x", PT_F32, 1, d2);
    pt_init_f32(m, "g", 1, d2, mg);
    pt_init_f32(m, "h", 1, d2, mv);
    pt_node(m, "Adagrad", "opt", (const char *[]){"R", "T", "x", "g", "h", NULL},
            (const char *[]){"x2", "h2", NULL});
    pt_domain(m, "ai.onnx.preview.training");
    pt_output(m, "x2", PT_F32, 1, d2);
    pt_output(m, "h2", PT_F32, 1, d2);
    optim_case b = {"Adagrad", 0, 0, 1, 3, 2, {{mx}, {mg}, {mv}}};
    CHECK_STR_HAS(run_case(&b, m, w), "learning rate R (input 0) must hold one value, got 2");
}

int main(void)
{
    char ini[4096];
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_train.so\n",
             SY_PLUGIN_DIR, SY_PLUGIN_DIR);
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", msg_of(st));
        return 1;
    }
    RUN_TEST(test_momentum);
    RUN_TEST(test_adagrad);
    RUN_TEST(test_adam);
    RUN_TEST(test_refusals);
    sy_env_release(env);
    return SY_TEST_MAIN_RESULT();
}
