/*
 * The cpu provider's Softmax (cpu_softmax.c, exp in cpu_vmath.c) against
 * the ONNX formula written out here in double:
 *   y = exp(x - max(row)) / sum(exp(x - max(row)))
 * over the last axis (opset 13) or over the 2-D rows at `axis` (opset 11).
 * Cases: rows shorter than a vector, with a tail, the attention rows of the
 * LLM decode step ([1, 8, 1, 512]), inputs spread over +-40 (exponentials
 * down to e^-80), a masked row (-inf entries give exactly 0) and rows
 * holding NaN or +inf (NaN where the formula gives NaN), and an opset-13
 * axis followed by axes of size 1 (contiguous rows). The node must run
 * on cpu; isa = portable and threads = 2 give the default path's bits; an
 * opset-13 axis with larger axes after it goes to cpu_ref with the reason.
 */
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

typedef struct scase {
    const char *name;
    int rank;
    int64_t dims[4];
    int opset, axis; /* axis as written in the node (INT32_MIN: absent) */
    float scale;
    int special; /* 0 none, 1 -inf mask in row 0, 2 NaN in row 0 and +inf in row 1 */
} scase;

static const scase cases[] = {
    {"[3, 5] (shorter than a vector)", 2, {3, 5}, 13, INT32_MIN, 2.0f, 0},
    {"[2, 3, 17] (a tail)", 3, {2, 3, 17}, 13, -1, 4.0f, 0},
    {"[1, 8, 1, 512] (attention)", 4, {1, 8, 1, 512}, 13, 3, 3.0f, 0},
    {"[4, 64] inputs over +-40", 2, {4, 64}, 13, 1, 40.0f, 0},
    {"[2, 3, 4] opset 11, axis 1 (rows of 12)", 3, {2, 3, 4}, 11, 1, 2.0f, 0},
    {"[3, 33] masked row", 2, {3, 33}, 13, -1, 2.0f, 1},
    {"[3, 20] NaN and +inf rows", 2, {3, 20}, 13, -1, 2.0f, 2},
    {"[2, 37, 1, 1] opset 13, axis 1 (trailing ones)", 4, {2, 37, 1, 1}, 13, 1, 3.0f, 0},
};

static uint32_t lcg = 777u;
static float rnd(void) { return cpu_rnd(&lcg); }

static int64_t numel(const scase *c)
{
    int64_t n = 1;
    for (int i = 0; i < c->rank; i++)
        n *= c->dims[i];
    return n;
}

static int64_t cols_of(const scase *c)
{
    int axis = c->axis == INT32_MIN ? (c->opset < 13 ? 1 : -1) : c->axis;
    if (axis < 0)
        axis += c->rank;
    int64_t cols = 1;
    for (int i = axis; i < c->rank; i++)
        cols *= c->dims[i];
    return cols;
}

static void reference(const float *x, int64_t n, int64_t cols, double *ref)
{
    for (int64_t r = 0; r < n / cols; r++) {
        const float *xr = x + r * cols;
        double mx = -INFINITY, sum = 0.0;
        bool nan = false;
        for (int64_t i = 0; i < cols; i++) {
            nan |= isnan(xr[i]);
            mx = xr[i] > mx ? xr[i] : mx;
        }
        for (int64_t i = 0; i < cols; i++)
            sum += exp((double)xr[i] - mx);
        for (int64_t i = 0; i < cols; i++)
            ref[r * cols + i] = nan ? NAN : exp((double)xr[i] - mx) / sum;
    }
}

static pt_model *build(const scase *c)
{
    pt_model *m = pt_model_new("softmax");
    m->opset.version = c->opset;
    pt_input(m, "x", PT_F32, c->rank, c->dims);
    pt_node(m, "Softmax", "sm", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    if (c->axis != INT32_MIN)
        pt_attr_int(m, "axis", c->axis);
    pt_output(m, "y", PT_F32, c->rank, c->dims);
    return m;
}

static sy_env *env_with(const char *extra)
{
    return cpu_env("ops_nn ops_activation", "cpu", extra);
}

/* runs once into out; returns the provider of the Softmax (static storage) or NULL */
static const char *run(sy_env *env, const scase *c, float *x, float *out, char *why, size_t why_len)
{
    static char prov[32];
    pt_model *pm = build(c);
    sy_model *model = env ? pt_load(env, pm) : NULL;
    pt_model_free(pm);
    if (!model)
        return NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_session *s = NULL;
    sy_status *st = sy_session_create(env, model, &so, &s);
    CHECK(!st, "%s: session: %s", c->name, pt_msg(st));
    const char *res = NULL;
    if (s) {
        sy_tensor xt = pt_tensor_f32(x, c->rank, c->dims);
        st = sy_session_set_input(s, "x", &xt, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        CHECK(!st, "%s: run: %s", c->name, pt_msg(st));
        const sy_tensor *y = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &y);
        bool ok = !st && y && y->nbytes == (size_t)numel(c) * 4;
        CHECK(ok, "%s: output: %s", c->name, pt_msg(st));
        if (ok)
            memcpy(out, y->data, y->nbytes);
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; ok && i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && !strcmp(pl.op, "Softmax")) {
                snprintf(prov, sizeof prov, "%s", pl.provider ? pl.provider : "?");
                if (why)
                    snprintf(why, why_len, "%s", pl.reason_text ? pl.reason_text : "");
                res = prov;
            }
        sy_session_release(s);
    }
    sy_model_release(model);
    return res;
}

static void test_cases(void)
{
    sy_env *env = env_with(""), *portable = env_with("[provider.cpu]\nisa = portable\n");
    sy_env *two = env_with("[provider.cpu]\nthreads = 2\n");
    for (size_t ci = 0; env && portable && two && ci < sizeof cases / sizeof cases[0]; ci++) {
        const scase *c = &cases[ci];
        int64_t n = numel(c), cols = cols_of(c);
        float *x = malloc((size_t)n * sizeof *x), *got = calloc((size_t)n, sizeof *got);
        float *gp = calloc((size_t)n, sizeof *gp), *g2 = calloc((size_t)n, sizeof *g2);
        double *ref = malloc((size_t)n * sizeof *ref);
        for (int64_t i = 0; i < n; i++)
            x[i] = rnd() * c->scale;
        if (c->special == 1)
            for (int64_t i = 0; i < cols; i += 3)
                x[i] = -INFINITY;
        if (c->special == 2) {
            x[4] = NAN;
            x[cols + 7] = INFINITY;
        }
        reference(x, n, cols, ref);
        const char *prov = run(env, c, x, got, NULL, 0);
        CHECK(prov && !strcmp(prov, "cpu"), "%s: Softmax ran on %s", c->name, prov ? prov : "?");
        /* about 1 ulp from the exponential, the float sum of a row (eight
         * partial sums: relative error near cols / 8 ulp at worst) and the
         * division, about 2 ulp seen: 1e-6 relative, 1e-30 absolute for the
         * smallest values */
        int bad = 0;
        double worst = 0;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(ref[i])) {
                if (!isnan(got[i]) && bad++ < 5)
                    CHECK(false, "%s: [%lld] = %.9g, the formula gives NaN", c->name, (long long)i, got[i]);
                continue;
            }
            double e = fabs((double)got[i] - ref[i]), rel = ref[i] ? e / ref[i] : e;
            worst = rel > worst && ref[i] > 1e-30 ? rel : worst;
            if (!(e <= 1e-30 + 1e-6 * ref[i]) && bad++ < 5)
                CHECK(false, "%s: [%lld] = %.9g, reference %.9g", c->name, (long long)i, got[i], ref[i]);
        }
        CHECK(bad == 0, "%s: %d of %lld off", c->name, bad, (long long)n);
        if (c->special == 1)
            for (int64_t i = 0; i < cols; i += 3)
                CHECK(got[i] == 0.0f, "%s: masked [%lld] = %g, not 0", c->name, (long long)i, got[i]);
        printf("  %-42s %lld outputs, max relative error %.3g\n", c->name, (long long)n, worst);
        run(portable, c, x, gp, NULL, 0);
        CHECK(!memcmp(got, gp, (size_t)n * sizeof *got), "%s: isa = portable differs from the default path", c->name);
        run(two, c, x, g2, NULL, 0);
        CHECK(!memcmp(got, g2, (size_t)n * sizeof *got), "%s: threads = 2 differs from threads = 1", c->name);
        free(x);
        free(got);
        free(gp);
        free(g2);
        free(ref);
    }
    sy_env_release(env);
    sy_env_release(portable);
    sy_env_release(two);
}

static void test_decline(void)
{
    sy_env *env = env_with("");
    const scase c = {"[4, 6] opset 13, axis 0", 2, {4, 6}, 13, 0, 1.0f, 0};
    float x[24], got[24];
    for (int i = 0; i < 24; i++)
        x[i] = rnd();
    char why[256] = "";
    const char *prov = run(env, &c, x, got, why, sizeof why);
    CHECK(prov && !strcmp(prov, "cpu_ref"), "%s: Softmax ran on %s", c.name, prov ? prov : "?");
    CHECK(strstr(why, "last axis") != NULL, "%s: reason '%s' does not name the last axis", c.name, why);
    /* cpu_ref's answer is the formula's along axis 0 */
    for (int j = 0; env && j < 6; j++) {
        double mx = -INFINITY, sum = 0;
        for (int i = 0; i < 4; i++)
            mx = x[i * 6 + j] > mx ? x[i * 6 + j] : mx;
        for (int i = 0; i < 4; i++)
            sum += exp((double)x[i * 6 + j] - mx);
        for (int i = 0; i < 4; i++) {
            double r = exp((double)x[i * 6 + j] - mx) / sum;
            CHECK(fabs(got[i * 6 + j] - r) <= 4e-6 * r, "axis 0: [%d, %d] = %g, reference %g", i, j, got[i * 6 + j], r);
        }
    }
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_cases);
    PT_RUN(test_decline);
    return pt_result();
}
