/*
 * Model tests through the public API only:
 *
 *   test_models <shared-dir> <model>
 *
 * Loads <shared>/models/onnx/<model>/model.onnx with the embedded default
 * configuration (the in-tree plugins), runs it and checks the outputs:
 * against the model's test_data_set_* where it has them, against NumPy
 * references computed from the model's weights (model_refs.h) for the small
 * MLPs, and by properties of the outputs (shape as declared, finite, softmax
 * rows summing to 1) for the rest. Exits 77 (skip) when the shared folder is
 * absent.
 */
#include "model_refs.h"
#include "switchyard/switchyard.h"
#include "sy_test.h"
#include "sy_test_status.h"

#include <math.h>
#include <sys/stat.h>

static const char *shared;

static char *path_of(const char *model, const char *rest)
{
    size_t n = strlen(shared) + strlen(model) + strlen(rest) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/models/onnx/%s/%s", shared, model, rest);
    return p;
}

typedef struct loaded {
    sy_env *env;
    sy_model *model;
    sy_session *session;
} loaded;

static bool load(const char *model, loaded *l)
{
    memset(l, 0, sizeof *l);
    char *p = path_of(model, "model.onnx");
    bool ok = sy_test_ok(sy_env_create(NULL, &l->env), "default environment") &&
              sy_test_ok(sy_model_load(l->env, p, &l->model), p) &&
              sy_test_ok(sy_session_create(l->env, l->model, NULL, &l->session), "session");
    free(p);
    return ok;
}

static void unload(loaded *l)
{
    sy_session_release(l->session);
    sy_model_release(l->model);
    sy_env_release(l->env);
}

/* float value of element i of a float32 or float16 tensor */
static double elem(const sy_tensor *t, int64_t i)
{
    if (t->dtype == SY_DT_FLOAT32)
        return ((const float *)t->data)[i];
    if (t->dtype == SY_DT_FLOAT16) {
        uint16_t h = ((const uint16_t *)t->data)[i];
        int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return s ? -v : v;
    }
    return NAN;
}

static uint16_t to_half(float f)
{
    /* round to nearest even, for |f| <= 1 (normal and subnormal range) */
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    float a = fabsf(f);
    if (a < 6.103515625e-05f) /* subnormal half: multiples of 2^-24 */
        return (uint16_t)(sign | (uint16_t)lrintf(a * 16777216.0f));
    int e;
    float mant = frexpf(a, &e); /* a = mant * 2^e, mant in [0.5, 1) */
    long m = lrintf((mant * 2.0f - 1.0f) * 1024.0f);
    int he = e - 1 + 15;
    if (m == 1024) {
        m = 0;
        he++;
    }
    return (uint16_t)(sign | (uint16_t)(he << 10) | (uint16_t)m);
}

/* The output's dims match the model's declared dims wherever those are fixed. */
static void check_declared_shape(const sy_model *m, size_t i, const sy_tensor *t)
{
    sy_value_info vi = {.struct_size = sizeof vi};
    REQUIRE(sy_model_output_info(m, i, &vi), "output info %zu", i);
    CHECK(t->dtype == vi.dtype, "output %zu dtype %s, declared %s", i, sy_dtype_name(t->dtype),
          sy_dtype_name(vi.dtype));
    CHECK(t->rank == vi.rank, "output %zu rank %d, declared %d", i, t->rank, vi.rank);
    for (int32_t d = 0; d < t->rank && d < vi.rank; d++)
        if (vi.dims[d] >= 0)
            CHECK(t->dims[d] == vi.dims[d], "output %zu dim %d is %lld, declared %lld", i, d,
                  (long long)t->dims[d], (long long)vi.dims[d]);
}

static int64_t count_nonfinite(const sy_tensor *t)
{
    int64_t n = sy_tensor_numel(t), bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += !isfinite(elem(t, i));
    return bad;
}

/* |got - want| <= atol + rtol * |want| elementwise; reports the worst element. */
static void compare(const char *what, const sy_tensor *got, const sy_tensor *want, double rtol, double atol)
{
    CHECK(got->dtype == want->dtype, "%s: dtype %s, reference %s", what, sy_dtype_name(got->dtype),
          sy_dtype_name(want->dtype));
    bool same_shape = got->rank == want->rank;
    for (int32_t d = 0; same_shape && d < got->rank; d++)
        same_shape = got->dims[d] == want->dims[d];
    CHECK(same_shape, "%s: shape differs from the reference", what);
    if (!same_shape || got->dtype != want->dtype)
        return;
    int64_t n = sy_tensor_numel(want), bad = 0, worst = -1;
    double worst_excess = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = elem(got, i), w = elem(want, i);
        double excess = fabs(g - w) - (atol + rtol * fabs(w));
        if (!(excess <= 0)) { /* NaN counts as a mismatch */
            bad++;
            if (worst < 0 || !(excess <= worst_excess)) {
                worst = i;
                worst_excess = excess;
            }
        }
    }
    CHECK(bad == 0, "%s: %lld of %lld elements outside rtol %g atol %g; worst [%lld] got %.9g want %.9g", what,
          (long long)bad, (long long)n, rtol, atol, (long long)worst, worst >= 0 ? elem(got, worst) : 0.0,
          worst >= 0 ? elem(want, worst) : 0.0);
}

static int64_t argmax(const sy_tensor *t)
{
    int64_t n = sy_tensor_numel(t), best = 0;
    for (int64_t i = 1; i < n; i++)
        if (elem(t, i) > elem(t, best))
            best = i;
    return best;
}

/* Run test_data_set_<k>: inputs in graph input order, outputs compared in graph output order. */
static void run_reference_set(loaded *l, const char *model, int k, double rtol, double atol, int64_t want_argmax)
{
    char rel[64];
    size_t n_in = sy_model_input_count(l->model), n_out = sy_model_output_count(l->model);
    for (size_t i = 0; i < n_in; i++) {
        snprintf(rel, sizeof rel, "test_data_set_%d/input_%zu.pb", k, i);
        char *p = path_of(model, rel);
        sy_tensor *t = NULL;
        bool ok = sy_test_ok(sy_tensor_read_file(p, &t), p) &&
                  sy_test_ok(sy_session_set_input_by_index(l->session, i, t, SY_INPUT_COPY), p);
        sy_tensor_free(t);
        free(p);
        if (!ok)
            return;
    }
    if (!sy_test_ok(sy_session_run(l->session), "run"))
        return;
    CHECK(sy_session_output_count(l->session) == n_out, "session has %zu outputs, model %zu",
          sy_session_output_count(l->session), n_out);
    for (size_t i = 0; i < n_out; i++) {
        snprintf(rel, sizeof rel, "test_data_set_%d/output_%zu.pb", k, i);
        char *p = path_of(model, rel);
        sy_tensor *want = NULL;
        const sy_tensor *got = NULL;
        if (sy_test_ok(sy_tensor_read_file(p, &want), p) &&
            sy_test_ok(sy_session_get_output(l->session, i, &got), "get_output")) {
            check_declared_shape(l->model, i, got);
            compare(p, got, want, rtol, atol);
            if (want_argmax >= 0 && i == 0) {
                CHECK(argmax(want) == want_argmax, "%s: reference argmax %lld, expected %lld", p,
                      (long long)argmax(want), (long long)want_argmax);
                CHECK(argmax(got) == want_argmax, "%s: argmax %lld, expected %lld", p, (long long)argmax(got),
                      (long long)want_argmax);
            }
        }
        sy_tensor_free(want);
        free(p);
    }
}

/* ---- the models ---------------------------------------------------------- */

static void test_mnist8(void)
{
    static const int64_t digits[3] = {2, 0, 9};
    loaded l = {.env = NULL};
    if (load("mnist-8", &l))
        for (int k = 0; k < 3; k++)
            run_reference_set(&l, "mnist-8", k, 1e-3, 1e-5, digits[k]);
    unload(&l);
}

static void test_super_resolution(void)
{
    loaded l = {.env = NULL};
    if (load("super_resolution-10", &l))
        run_reference_set(&l, "super_resolution-10", 0, 1e-3, 1e-5, -1);
    unload(&l);
}

/* Sets one float input of the given shape; data borrowed until the run. */
static bool set_f32(loaded *l, size_t index, int32_t rank, const int64_t *dims, float *data, size_t n)
{
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = rank, .data = data,
                   .nbytes = n * sizeof(float)};
    memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
    return sy_test_ok(sy_session_set_input_by_index(l->session, index, &t, SY_INPUT_COPY), "set_input");
}

static void test_sine(void)
{
    /* 16 points in one batch of the symbolic dim N (model_refs.h) */
    enum { N = 16 };
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)sine_ref_x[i];
    loaded l = {.env = NULL};
    if (load("tfl_hello_world_sine", &l) && set_f32(&l, 0, 2, (int64_t[]){N, 1}, x, N) &&
        sy_test_ok(sy_session_run(l.session), "run")) {
        const sy_tensor *y = NULL;
        if (sy_test_ok(sy_session_get_output(l.session, 0, &y), "output")) {
            CHECK(y->dtype == SY_DT_FLOAT32 && y->rank == 2 && y->dims[0] == N && y->dims[1] == 1,
                  "output float32[16,1]");
            if (y->dtype == SY_DT_FLOAT32 && sy_tensor_numel(y) == N) {
                const float *ys = y->data;
                for (int i = 0; i < N; i++) {
                    CHECK(fabs(ys[i] - sine_ref_y[i]) <= 1e-5 + 1e-4 * fabs(sine_ref_y[i]),
                          "y(%g) = %.9g, reference %.9g", x[i], ys[i], sine_ref_y[i]);
                    /* what the model was trained for: within 0.1 of sin(x) on [0, 2pi] */
                    CHECK(fabs(ys[i] - sin(x[i])) < 0.1, "y(%g) = %g is far from sin = %g", x[i], ys[i], sin(x[i]));
                }
            }
        }
    }
    unload(&l);
}

static void test_mnist_mlp(void)
{
    float x[784];
    for (int i = 0; i < 784; i++)
        x[i] = (float)sin(0.1 * (double)i);
    loaded l = {.env = NULL};
    if (load("mnist_mlp_pytorch", &l) && set_f32(&l, 0, 2, (int64_t[]){1, 784}, x, 784) &&
        sy_test_ok(sy_session_run(l.session), "run")) {
        const sy_tensor *y = NULL;
        if (sy_test_ok(sy_session_get_output(l.session, 0, &y), "output")) {
            check_declared_shape(l.model, 0, y);
            CHECK(count_nonfinite(y) == 0, "outputs finite");
            if (y->dtype == SY_DT_FLOAT32 && sy_tensor_numel(y) == 10) {
                const float *ys = y->data;
                for (int i = 0; i < 10; i++)
                    CHECK(fabs(ys[i] - mlp_ref_y[i]) <= 1e-4 + 1e-3 * fabs(mlp_ref_y[i]),
                          "logit %d = %.9g, reference %.9g", i, ys[i], mlp_ref_y[i]);
            }
        }
    }
    unload(&l);
}

/* the CLI's deterministic pattern: sin(0.1 * i) */
static float *pattern(size_t n)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)sin(0.1 * (double)i);
    return p;
}

static void test_ultraface(void)
{
    const size_t n = 1 * 3 * 240 * 320;
    float *x = pattern(n);
    loaded l = {.env = NULL};
    if (x && load("ultraface_rfb_320", &l) && set_f32(&l, 0, 4, (int64_t[]){1, 3, 240, 320}, x, n) &&
        sy_test_ok(sy_session_run(l.session), "run")) {
        CHECK(sy_session_output_count(l.session) == 2, "2 outputs (scores, boxes)");
        for (size_t i = 0; i < sy_session_output_count(l.session); i++) {
            const sy_tensor *t = NULL;
            if (!sy_test_ok(sy_session_get_output(l.session, i, &t), "output"))
                continue;
            check_declared_shape(l.model, i, t);
            CHECK(count_nonfinite(t) == 0, "output %zu: %lld non-finite values", i, (long long)count_nonfinite(t));
        }
        /* scores: a softmax over 2 classes per anchor */
        const sy_tensor *scores = NULL;
        if (sy_test_ok(sy_session_get_output_by_name(l.session, "scores", &scores), "scores") &&
            scores->dtype == SY_DT_FLOAT32 && scores->rank == 3 && scores->dims[2] == 2) {
            int64_t anchors = scores->dims[1], bad = 0;
            for (int64_t a = 0; a < anchors; a++) {
                double p0 = elem(scores, 2 * a), p1 = elem(scores, 2 * a + 1);
                bad += !(p0 >= 0 && p0 <= 1 && p1 >= 0 && p1 <= 1 && fabs(p0 + p1 - 1) <= 1e-5);
            }
            CHECK(bad == 0, "%lld of %lld score rows are not a probability pair", (long long)bad, (long long)anchors);
        }
    }
    free(x);
    unload(&l);
}

static void test_squeezenet_fp16(void)
{
    const size_t n = 1 * 3 * 224 * 224;
    uint16_t *x = malloc(n * sizeof *x);
    for (size_t i = 0; x && i < n; i++)
        x[i] = to_half((float)sin(0.1 * (double)i));
    loaded l = {.env = NULL};
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT16, .rank = 4, .dims = {1, 3, 224, 224}, .data = x,
                   .nbytes = n * sizeof *x};
    if (x && load("squeezenet1.0_fp16", &l) &&
        sy_test_ok(sy_session_set_input_by_index(l.session, 0, &t, SY_INPUT_COPY), "set_input") &&
        sy_test_ok(sy_session_run(l.session), "run")) {
        const sy_tensor *y = NULL;
        if (sy_test_ok(sy_session_get_output(l.session, 0, &y), "output")) {
            check_declared_shape(l.model, 0, y);
            CHECK(count_nonfinite(y) == 0, "outputs finite");
            if (y->dtype == SY_DT_FLOAT16) {
                /* a softmax over 1000 classes: each in [0,1], summing to 1 within fp16 rounding */
                double sum = 0;
                int64_t out_of_range = 0;
                for (int64_t i = 0; i < sy_tensor_numel(y); i++) {
                    double v = elem(y, i);
                    sum += v;
                    out_of_range += !(v >= 0 && v <= 1);
                }
                CHECK(out_of_range == 0, "%lld probabilities outside [0,1]", (long long)out_of_range);
                CHECK(fabs(sum - 1.0) <= 1e-2, "probabilities sum to %g", sum);
            }
        }
    }
    free(x);
    unload(&l);
}

int main(int argc, char **argv)
{
    struct stat sb;
    if (argc < 3) {
        fprintf(stderr, "usage: test_models SHARED_DIR MODEL\n");
        return 2;
    }
    shared = argv[1];
    char models[4096];
    snprintf(models, sizeof models, "%s/models/onnx", shared);
    if (stat(models, &sb) != 0 || !S_ISDIR(sb.st_mode))
        SY_TEST_SKIP("shared folder '%s' is absent (no %s): model tests need the shared models; set "
                     "-DSY_SHARED_DIR=<path> to run them",
                     shared, models);
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"mnist-8", test_mnist8},
        {"super_resolution-10", test_super_resolution},
        {"tfl_hello_world_sine", test_sine},
        {"mnist_mlp_pytorch", test_mnist_mlp},
        {"ultraface_rfb_320", test_ultraface},
        {"squeezenet1.0_fp16", test_squeezenet_fp16},
    };
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++)
        if (!strcmp(argv[2], tests[i].name)) {
            printf("model %s\n", tests[i].name);
            tests[i].fn();
            return SY_TEST_MAIN_RESULT();
        }
    fprintf(stderr, "unknown model '%s'\n", argv[2]);
    return 2;
}
