/*
 * ops_random through the public API. The ONNX node tests of RandomUniformLike
 * and Bernoulli cannot compare values (their references come from numpy's
 * generator), so this checks what the spec does fix:
 *   - output shape and dtype (attribute, input's, float32 default);
 *   - with `seed`: two sessions give identical values, a second run
 *     continues the sequence, sy_session_reset restarts it, another seed
 *     gives other values;
 *   - the distribution: every uniform value in [low, high); the sample mean
 *     and variance within 6 standard errors of the formulas
 *     (uniform: (a + b)/2, (b - a)^2/12; normal: mean, scale^2;
 *     Bernoulli: p, and exactly 0 / 1 for p = 0 / 1).
 */
#include "../partition/pt_common.h"

#include <math.h>

#define N_SAMPLES 200000

static sy_env *env;

/* one node, output `y`; `x` (float32 [N_SAMPLES]) when the op has an input */
static pt_model *one_node(const char *op, bool with_x, int64_t n)
{
    pt_model *m = pt_model_new(op);
    const int64_t d[1] = {n};
    if (with_x)
        pt_input(m, "x", PT_F32, 1, d);
    pt_node(m, op, "r", with_x ? (const char *[]){"x", NULL} : (const char *[]){NULL}, (const char *[]){"y", NULL});
    return m;
}

/* a session must not outlive its model: the models stay loaded until main ends */
static sy_model *models[16];
static size_t n_models;

static sy_session *session_of(pt_model *m)
{
    if (n_models == sizeof models / sizeof models[0])
        return NULL;
    sy_model *model = pt_load(env, m);
    if (!model)
        return NULL;
    models[n_models++] = model;
    sy_session *s = NULL;
    sy_status *st = sy_session_create(env, model, NULL, &s);
    PT_CHECK(!st, "session %s: %s", m->graph.name, pt_msg(st));
    return s;
}

/* runs s (with x when given) and copies output 0 as doubles into out */
static bool run_to(sy_session *s, float *x, int64_t n, double *out, sy_dtype *dt, int32_t *rank, int64_t *dims)
{
    if (x) {
        const int64_t d[1] = {n};
        sy_tensor t = pt_tensor_f32(x, 1, d);
        sy_status *st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
        PT_CHECK(!st, "set_input: %s", pt_msg(st));
    }
    sy_status *st = sy_session_run(s);
    PT_CHECK(!st, "run: %s", pt_msg(st));
    const sy_tensor *y = NULL;
    st = sy_session_get_output(s, 0, &y);
    PT_CHECK(!st && y, "get_output: %s", pt_msg(st));
    if (st || !y)
        return false;
    *dt = y->dtype;
    *rank = y->rank;
    memcpy(dims, y->dims, sizeof y->dims);
    int64_t k = 1;
    for (int32_t i = 0; i < y->rank; i++)
        k *= y->dims[i];
    for (int64_t i = 0; i < k && out; i++)
        out[i] = y->dtype == SY_DT_FLOAT64 ? ((const double *)y->data)[i] : ((const float *)y->data)[i];
    return true;
}

static void moments(const double *v, int64_t n, double *mean, double *var)
{
    double m = 0, q = 0;
    for (int64_t i = 0; i < n; i++)
        m += v[i];
    m /= (double)n;
    for (int64_t i = 0; i < n; i++)
        q += (v[i] - m) * (v[i] - m);
    *mean = m;
    *var = q / (double)(n - 1);
}

static double *a, *b;
static float *xs;

static void test_uniform_shape_dtype_moments(void)
{
    pt_model *m = pt_model_new("uniform");
    const int64_t shape[2] = {400, 500};
    pt_node(m, "RandomUniform", "r", (const char *[]){NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(m, "shape", 2, shape);
    pt_attr_float(m, "low", -3.0f);
    pt_attr_float(m, "high", 5.0f);
    pt_attr_int(m, "dtype", SY_DT_FLOAT64);
    pt_attr_float(m, "seed", 11.0f);
    pt_output(m, "y", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, shape);
    sy_session *s = session_of(m);
    PT_REQUIRE(s, "session");
    sy_dtype dt;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    PT_REQUIRE(run_to(s, NULL, 0, a, &dt, &rank, dims), "run");
    PT_CHECK(dt == SY_DT_FLOAT64 && rank == 2 && dims[0] == 400 && dims[1] == 500, "float64 [400, 500], got %s rank %d",
             sy_dtype_name(dt), rank);
    double lo = 1e9, hi = -1e9, mean, var;
    for (int64_t i = 0; i < N_SAMPLES; i++) {
        lo = a[i] < lo ? a[i] : lo;
        hi = a[i] > hi ? a[i] : hi;
    }
    PT_CHECK(lo >= -3.0 && hi < 5.0, "values in [-3, 5): min %g max %g", lo, hi);
    moments(a, N_SAMPLES, &mean, &var);
    double w = 8.0, se_mean = w / sqrt(12.0 * N_SAMPLES), se_var = w * w * sqrt(1.0 / 180.0 / N_SAMPLES); /* Var(s^2) = (mu4 - sigma^4) / N */
    PT_CHECK(fabs(mean - 1.0) < 6 * se_mean, "mean %g, want 1 +- %g", mean, 6 * se_mean);
    PT_CHECK(fabs(var - w * w / 12.0) < 6 * se_var, "variance %g, want %g +- %g", var, w * w / 12.0, 6 * se_var);
    printf("     RandomUniform [-3, 5): mean %.4f (1), variance %.4f (%.4f)\n", mean, var, w * w / 12.0);
done:
    sy_session_release(s);
    pt_model_free(m);
}

static void test_uniform_like_seed(void)
{
    pt_model *m = one_node("RandomUniformLike", true, N_SAMPLES);
    pt_attr_float(m, "seed", 7.0f);
    const int64_t d[1] = {N_SAMPLES};
    pt_output(m, "y", PT_F32, 1, d);
    pt_model *m2 = one_node("RandomUniformLike", true, N_SAMPLES);
    pt_attr_float(m2, "seed", 8.0f);
    pt_output(m2, "y", PT_F32, 1, d);
    sy_session *s1 = session_of(m), *s2 = session_of(m), *s3 = session_of(m2);
    PT_REQUIRE(s1 && s2 && s3, "sessions");
    sy_dtype dt;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    PT_REQUIRE(run_to(s1, xs, N_SAMPLES, a, &dt, &rank, dims), "run 1");
    PT_CHECK(dt == SY_DT_FLOAT32 && rank == 1 && dims[0] == N_SAMPLES, "the input's dtype and shape");
    PT_REQUIRE(run_to(s2, xs, N_SAMPLES, b, &dt, &rank, dims), "run 2");
    PT_CHECK(!memcmp(a, b, N_SAMPLES * sizeof *a), "one seed: two sessions give the same values");
    PT_REQUIRE(run_to(s2, xs, N_SAMPLES, b, &dt, &rank, dims), "run 2 again");
    PT_CHECK(memcmp(a, b, N_SAMPLES * sizeof *a), "the second run continues the sequence");
    sy_session_reset(s2);
    PT_REQUIRE(run_to(s2, xs, N_SAMPLES, b, &dt, &rank, dims), "run 2 after reset");
    PT_CHECK(!memcmp(a, b, N_SAMPLES * sizeof *a), "reset restarts the sequence");
    PT_REQUIRE(run_to(s3, xs, N_SAMPLES, b, &dt, &rank, dims), "run 3");
    int64_t same = 0;
    for (int64_t i = 0; i < N_SAMPLES; i++)
        same += a[i] == b[i];
    PT_CHECK(same < N_SAMPLES / 100, "another seed gives other values (%lld equal)", (long long)same);
    double mean, var;
    moments(a, N_SAMPLES, &mean, &var);
    PT_CHECK(fabs(mean - 0.5) < 6 / sqrt(12.0 * N_SAMPLES), "default [0, 1): mean %g", mean);
done:
    sy_session_release(s1);
    sy_session_release(s2);
    sy_session_release(s3);
    pt_model_free(m);
    pt_model_free(m2);
}

static void test_normal_moments(void)
{
    pt_model *m = one_node("RandomNormalLike", true, N_SAMPLES);
    pt_attr_float(m, "mean", 2.0f);
    pt_attr_float(m, "scale", 0.5f);
    pt_attr_float(m, "seed", 1.0f);
    const int64_t d[1] = {N_SAMPLES};
    pt_output(m, "y", PT_F32, 1, d);
    sy_session *s = session_of(m);
    PT_REQUIRE(s, "session");
    sy_dtype dt;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    PT_REQUIRE(run_to(s, xs, N_SAMPLES, a, &dt, &rank, dims), "run");
    double mean, var;
    moments(a, N_SAMPLES, &mean, &var);
    double se_mean = 0.5 / sqrt((double)N_SAMPLES), se_var = 0.25 * sqrt(2.0 / N_SAMPLES);
    PT_CHECK(fabs(mean - 2.0) < 6 * se_mean, "mean %g, want 2 +- %g", mean, 6 * se_mean);
    PT_CHECK(fabs(var - 0.25) < 6 * se_var, "variance %g, want 0.25 +- %g", var, 6 * se_var);
    int64_t within = 0;
    for (int64_t i = 0; i < N_SAMPLES; i++)
        within += fabs(a[i] - 2.0) < 0.5;
    double frac = (double)within / N_SAMPLES; /* P(|z| < 1) = erf(1/sqrt 2) */
    PT_CHECK(fabs(frac - erf(1 / sqrt(2.0))) < 6 * sqrt(0.68 * 0.32 / N_SAMPLES), "one-sigma share %g", frac);
    printf("     RandomNormalLike (2, 0.5): mean %.4f, variance %.4f, within 1 sigma %.4f (%.4f)\n", mean, var, frac,
           erf(1 / sqrt(2.0)));
done:
    sy_session_release(s);
    pt_model_free(m);
}

static void test_bernoulli(void)
{
    pt_model *m = one_node("Bernoulli", true, N_SAMPLES);
    m->opset.version = 15; /* Bernoulli is opset 15 */
    pt_attr_float(m, "seed", 3.0f);
    const int64_t d[1] = {N_SAMPLES};
    pt_output(m, "y", PT_F32, 1, d);
    sy_session *s = session_of(m);
    PT_REQUIRE(s, "session");
    /* thirds: p = 0, p = 1, p = 0.3 */
    int64_t third = N_SAMPLES / 3;
    for (int64_t i = 0; i < N_SAMPLES; i++)
        xs[i] = i < third ? 0.0f : i < 2 * third ? 1.0f : 0.3f;
    sy_dtype dt;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    PT_REQUIRE(run_to(s, xs, N_SAMPLES, a, &dt, &rank, dims), "run");
    PT_CHECK(dt == SY_DT_FLOAT32, "the input's dtype by default");
    int64_t bad = 0, ones = 0, rest = N_SAMPLES - 2 * third;
    for (int64_t i = 0; i < 2 * third; i++)
        bad += a[i] != (i < third ? 0.0 : 1.0);
    for (int64_t i = 2 * third; i < N_SAMPLES; i++) {
        bad += a[i] != 0.0 && a[i] != 1.0;
        ones += a[i] == 1.0;
    }
    double p = (double)ones / (double)rest;
    PT_CHECK(bad == 0, "p 0 gives 0, p 1 gives 1, others 0 or 1 (%lld wrong)", (long long)bad);
    PT_CHECK(fabs(p - 0.3) < 6 * sqrt(0.21 / (double)rest), "p 0.3: share of ones %g", p);
    printf("     Bernoulli(0.3): share of ones %.4f\n", p);
done:
    sy_session_release(s);
    pt_model_free(m);
    for (int64_t i = 0; i < N_SAMPLES; i++)
        xs[i] = 0.0f;
}

static void test_bad_attributes(void)
{
    pt_model *m = pt_model_new("bad_uniform");
    const int64_t shape[1] = {4};
    pt_node(m, "RandomUniform", "bad_range", (const char *[]){NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(m, "shape", 1, shape);
    pt_attr_float(m, "low", 2.0f);
    pt_attr_float(m, "high", 1.0f);
    pt_output(m, "y", PT_F32, 1, shape);
    sy_model *model = pt_load(env, m);
    sy_session *s = NULL;
    if (model) {
        sy_status *st = sy_session_create(env, model, NULL, &s);
        PT_CHECK(st != NULL, "low > high is refused");
        const char *msg = pt_msg(st); /* frees st */
        PT_HAS(msg, "bad_range");
        PT_HAS(msg, "low (2) must not exceed high (1)");
    }
    sy_session_release(s);
    sy_model_release(model);
    pt_model_free(m);
}

int main(void)
{
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_ops_random.so\n",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR);
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "FAIL: environment: %s\n", pt_msg(st));
        return 1;
    }
    a = calloc(N_SAMPLES, sizeof *a);
    b = calloc(N_SAMPLES, sizeof *b);
    xs = calloc(N_SAMPLES, sizeof *xs);
    if (!env || !a || !b || !xs)
        return 1;
    PT_RUN(test_uniform_shape_dtype_moments);
    PT_RUN(test_uniform_like_seed);
    PT_RUN(test_normal_moments);
    PT_RUN(test_bernoulli);
    PT_RUN(test_bad_attributes);
    free(a);
    free(b);
    free(xs);
    for (size_t i = 0; i < n_models; i++)
        sy_model_release(models[i]);
    sy_env_release(env);
    return pt_result();
}
