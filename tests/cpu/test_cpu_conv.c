/*
 * The cpu provider's Conv against the convolution formula written out here
 * (in double, with the ONNX padding rules spelled out), on 1-D and 2-D,
 * strided, dilated, asymmetrically padded, SAME_UPPER/SAME_LOWER, grouped,
 * depthwise and pointwise cases, in fp32 and fp16 storage; the node must be
 * placed on `cpu`. Then: the same model gives bit-identical outputs with
 * [provider.cpu] threads = 1, 2, 3 and 8, also from three sessions running at
 * once on one environment (its pool shared); without [provider.cpu] threads the
 * provider follows the session's threads (1, 2, 3, 8: the same bits, its own
 * pool per session, also for sessions of different counts at once), and an
 * explicit [provider.cpu] threads = 1 wins over a session of 2; a non-constant weight falls back to
 * cpu_ref with the reason; a bad threads value is refused by name. Every
 * case also runs with [provider.cpu] isa = portable (the plain C layout
 * changes and fp16 conversions) and must give the same bits as the default
 * (AVX2/F16C where the CPU has them).
 */
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>
#include <pthread.h>

#define CHECK PT_CHECK

typedef struct conv_case {
    const char *name;
    int rank; /* 3: 1-D, 4: 2-D */
    int64_t n, c, h, w, m, group, kh, kw, sh, sw, dh, dw;
    int64_t pads[4]; /* top, left, bottom, right (2-D) */
    const char *auto_pad;
    bool bias, fp16;
} conv_case;

static const conv_case cases[] = {
    {"3x3 pad 1", 4, 1, 3, 8, 9, 5, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, true, false},
    {"stride 2 dilation 2 asymmetric pads", 4, 2, 4, 11, 10, 6, 1, 3, 3, 2, 2, 2, 2, {0, 1, 2, 1}, NULL, true, false},
    {"depthwise stride 2", 4, 1, 8, 9, 9, 8, 8, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, NULL, true, false},
    {"depthwise multiplier 2", 4, 1, 4, 7, 6, 8, 4, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, false, false},
    {"grouped 3 x (2 -> 3), kernel 2x3", 4, 1, 6, 6, 7, 9, 3, 2, 3, 1, 2, 1, 1, {0, 1, 1, 0}, NULL, true, false},
    {"SAME_UPPER stride 2", 4, 1, 3, 5, 6, 4, 1, 3, 3, 2, 2, 1, 1, {0, 0, 0, 0}, "SAME_UPPER", true, false},
    {"SAME_LOWER stride 2 kernel 4", 4, 1, 3, 7, 5, 4, 1, 4, 4, 2, 2, 1, 1, {0, 0, 0, 0}, "SAME_LOWER", true, false},
    {"VALID 5x5", 4, 1, 2, 9, 8, 3, 1, 5, 5, 1, 1, 1, 1, {0, 0, 0, 0}, "VALID", false, false},
    {"pointwise 16 -> 32", 4, 1, 16, 7, 7, 32, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, NULL, false, false},
    {"1-D kernel 5 stride 2 pad 2", 3, 1, 3, 1, 20, 4, 1, 1, 5, 1, 2, 1, 1, {0, 2, 0, 2}, NULL, true, false},
    {"fp16 3x3 8 -> 16", 4, 1, 8, 12, 12, 16, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, true, true},
    {"fp16 depthwise", 4, 1, 16, 10, 10, 16, 16, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, true, true},
    {"32 -> 64 3x3 on 20x20", 4, 1, 32, 20, 20, 64, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, true, false},
};

static uint32_t lcg = 12345u;
static float rnd(void) { return cpu_rnd(&lcg); }

/* the ONNX output size and begin padding of one axis */
static void axis(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, const char *ap, int64_t *out,
                 int64_t *pad_begin)
{
    int64_t ek = (k - 1) * d + 1;
    if (ap && (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))) {
        *out = (in + s - 1) / s; /* ceil(in / s) */
        int64_t total = (*out - 1) * s + ek - in;
        if (total < 0)
            total = 0;
        *pad_begin = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2; /* extra pad at the end for UPPER */
    } else if (ap && !strcmp(ap, "VALID")) {
        *out = (in - ek) / s + 1;
        *pad_begin = 0;
    } else {
        *out = (in + pb + pe - ek) / s + 1;
        *pad_begin = pb;
    }
}

typedef struct built {
    pt_model *model;
    float *x, *wt, *b; /* fp32 values (fp16 cases: the values the fp16 tensors hold) */
    uint16_t *x16;
    int64_t xdims[4], ydims[4], oh, ow, pt, pl;
    size_t xn, yn;
} built;

static void build(const conv_case *cc, bool weight_as_input, built *o)
{
    memset(o, 0, sizeof *o);
    int64_t gic = cc->c / cc->group;
    size_t xn = (size_t)(cc->n * cc->c * cc->h * cc->w), wn = (size_t)(cc->m * gic * cc->kh * cc->kw);
    o->x = malloc(xn * sizeof(float));
    o->wt = malloc(wn * sizeof(float));
    o->b = calloc((size_t)cc->m, sizeof(float));
    o->x16 = malloc(xn * 2);
    uint16_t *w16 = malloc(wn * 2), *b16 = malloc((size_t)cc->m * 2);
    for (size_t i = 0; i < xn; i++)
        o->x[i] = rnd();
    for (size_t i = 0; i < wn; i++)
        o->wt[i] = rnd() * 0.5f;
    for (int64_t i = 0; cc->bias && i < cc->m; i++)
        o->b[i] = rnd();
    if (cc->fp16) { /* the reference sees the fp16 values */
        for (size_t i = 0; i < xn; i++)
            o->x[i] = sy_f16_to_f32(o->x16[i] = sy_f32_to_f16(o->x[i]));
        for (size_t i = 0; i < wn; i++)
            o->wt[i] = sy_f16_to_f32(w16[i] = sy_f32_to_f16(o->wt[i]));
        for (int64_t i = 0; i < cc->m; i++)
            o->b[i] = sy_f16_to_f32(b16[i] = sy_f32_to_f16(o->b[i]));
    }
    int64_t ph;
    axis(cc->h, cc->kh, cc->sh, cc->dh, cc->pads[0], cc->pads[2], cc->auto_pad, &o->oh, &ph);
    axis(cc->w, cc->kw, cc->sw, cc->dw, cc->pads[1], cc->pads[3], cc->auto_pad, &o->ow, &o->pl);
    o->pt = ph;
    int r = cc->rank;
    int64_t xd4[4] = {cc->n, cc->c, cc->h, cc->w}, wd4[4] = {cc->m, gic, cc->kh, cc->kw};
    int64_t yd4[4] = {cc->n, cc->m, o->oh, o->ow};
    int64_t xd3[3] = {cc->n, cc->c, cc->w}, wd3[3] = {cc->m, gic, cc->kw}, yd3[3] = {cc->n, cc->m, o->ow};
    const int64_t *xd = r == 4 ? xd4 : xd3, *wd = r == 4 ? wd4 : wd3, *yd = r == 4 ? yd4 : yd3;
    memcpy(o->xdims, xd, (size_t)r * sizeof *xd);
    memcpy(o->ydims, yd, (size_t)r * sizeof *yd);
    o->xn = xn;
    o->yn = (size_t)(cc->n * cc->m * o->oh * o->ow);
    int elem = cc->fp16 ? PT_F16 : PT_F32;
    size_t es = cc->fp16 ? 2 : 4;
    pt_model *m = pt_model_new(cc->name);
    pt_input(m, "x", elem, r, xd);
    if (weight_as_input)
        pt_input(m, "w", elem, r, wd);
    else
        pt_init_raw(m, "w", elem, r, wd, cc->fp16 ? (const void *)w16 : (const void *)o->wt, wn * es);
    if (cc->bias)
        pt_init_raw(m, "b", elem, 1, &cc->m, cc->fp16 ? (const void *)b16 : (const void *)o->b, (size_t)cc->m * es);
    pt_node(m, "Conv", "conv", (const char *[]){"x", "w", cc->bias ? "b" : NULL, NULL}, (const char *[]){"y", NULL});
    if (cc->group != 1)
        pt_attr_int(m, "group", cc->group);
    if (r == 4) {
        pt_attr_ints(m, "strides", 2, (int64_t[]){cc->sh, cc->sw});
        pt_attr_ints(m, "dilations", 2, (int64_t[]){cc->dh, cc->dw});
        if (!cc->auto_pad)
            pt_attr_ints(m, "pads", 4, (int64_t[]){cc->pads[0], cc->pads[1], cc->pads[2], cc->pads[3]});
    } else {
        pt_attr_ints(m, "strides", 1, (int64_t[]){cc->sw});
        pt_attr_ints(m, "dilations", 1, (int64_t[]){cc->dw});
        if (!cc->auto_pad)
            pt_attr_ints(m, "pads", 2, (int64_t[]){cc->pads[1], cc->pads[3]});
    }
    if (cc->auto_pad)
        pt_attr_string(m, "auto_pad", cc->auto_pad);
    pt_output(m, "y", elem, r, yd);
    o->model = m;
    free(w16);
    free(b16);
}

static void unbuild(built *o)
{
    pt_model_free(o->model);
    free(o->x);
    free(o->wt);
    free(o->b);
    free(o->x16);
}

/* y[n][m][oy][ox] = b[m] + sum over the group's channels and the kernel of x * w
 * (zero outside the input); also the sum of |terms| for the error bound */
static void reference(const conv_case *cc, const built *o, double *ref, double *mag)
{
    int64_t gic = cc->c / cc->group, goc = cc->m / cc->group;
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t m = 0; m < cc->m; m++)
            for (int64_t oy = 0; oy < o->oh; oy++)
                for (int64_t ox = 0; ox < o->ow; ox++) {
                    double acc = o->b[m], a = fabs(o->b[m]);
                    int64_t g = m / goc;
                    for (int64_t i = 0; i < gic; i++)
                        for (int64_t ky = 0; ky < cc->kh; ky++)
                            for (int64_t kx = 0; kx < cc->kw; kx++) {
                                int64_t iy = oy * cc->sh - o->pt + ky * cc->dh, ix = ox * cc->sw - o->pl + kx * cc->dw;
                                if (iy < 0 || iy >= cc->h || ix < 0 || ix >= cc->w)
                                    continue;
                                double t = (double)o->x[((n * cc->c + g * gic + i) * cc->h + iy) * cc->w + ix] *
                                           o->wt[((m * gic + i) * cc->kh + ky) * cc->kw + kx];
                                acc += t;
                                a += fabs(t);
                            }
                    size_t at = (size_t)(((n * cc->m + m) * o->oh + oy) * o->ow + ox);
                    ref[at] = acc;
                    mag[at] = a;
                }
}

static sy_env *env_with(const char *extra)
{
    return cpu_env("ops_nn", "cpu", extra);
}

/* Runs the model once; copies output 0 into out (its byte size); returns
 * the provider node 0 was placed on (static storage) or NULL on failure. */
static const char *run_threads(sy_env *env, int threads, const conv_case *cc, const built *o, void *out,
                               size_t out_bytes, char *reason, size_t reason_len)
{
    static char prov[32];
    sy_model *model = pt_load(env, o->model);
    if (!model)
        return NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = threads, .strict = -1};
    sy_session *s = NULL;
    sy_status *st = sy_session_create(env, model, &so, &s);
    const char *res = NULL;
    CHECK(!st, "%s: session: %s", cc->name, pt_msg(st));
    if (s) {
        sy_tensor x = pt_tensor_f32(o->x, cc->rank, o->xdims);
        if (cc->fp16) {
            x.dtype = SY_DT_FLOAT16;
            x.data = o->x16;
            x.nbytes = o->xn * 2;
        }
        st = sy_session_set_input(s, "x", &x, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        const sy_tensor *y = NULL;
        if (!st)
            st = sy_session_get_output(s, 0, &y);
        CHECK(!st, "%s: run: %s", cc->name, pt_msg(st));
        if (y && y->nbytes == out_bytes) {
            memcpy(out, y->data, out_bytes);
            sy_node_placement pl = {.struct_size = sizeof pl};
            for (size_t i = 0; i < sy_session_node_count(s); i++)
                if (sy_session_node_placement(s, i, &pl) && !strcmp(pl.op, "Conv")) {
                    snprintf(prov, sizeof prov, "%s", pl.provider ? pl.provider : "(folded)");
                    if (reason)
                        snprintf(reason, reason_len, "%s", pl.reason_text ? pl.reason_text : "");
                    res = prov;
                }
        } else if (y) {
            CHECK(false, "%s: output has %zu bytes, expected %zu", cc->name, y->nbytes, out_bytes);
        }
        sy_session_release(s);
    }
    sy_model_release(model);
    return res;
}

static const char *run_once(sy_env *env, const conv_case *cc, const built *o, void *out, size_t out_bytes,
                            char *reason, size_t reason_len)
{
    return run_threads(env, 1, cc, o, out, out_bytes, reason, reason_len);
}

static void test_cases(void)
{
    sy_env *env = env_with(""), *portable = env_with("[provider.cpu]\nisa = portable\n");
    if (!env || !portable) {
        sy_env_release(env);
        sy_env_release(portable);
        return;
    }
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const conv_case *cc = &cases[ci];
        built o;
        build(cc, false, &o);
        double *ref = malloc(o.yn * sizeof *ref), *mag = malloc(o.yn * sizeof *mag);
        float *y = malloc(o.yn * sizeof *y);
        uint16_t *y16 = malloc(o.yn * 2);
        reference(cc, &o, ref, &mag[0]);
        const char *prov = run_once(env, cc, &o, cc->fp16 ? (void *)y16 : (void *)y, o.yn * (cc->fp16 ? 2 : 4), NULL, 0);
        CHECK(prov && !strcmp(prov, "cpu"), "%s: Conv placed on %s, expected cpu", cc->name, prov ? prov : "?");
        int bad = 0;
        for (size_t i = 0; prov && i < o.yn; i++) {
            double got = cc->fp16 ? sy_f16_to_f32(y16[i]) : y[i];
            /* fp32: accumulation error of single precision; fp16: plus one
             * rounding of the result to half precision (2^-11 relative) */
            double tol = 2e-6 * mag[i] + 1e-7 + (cc->fp16 ? fabs(ref[i]) / 1024.0 + 6e-8 : 0.0);
            if (fabs(got - ref[i]) > tol && bad++ < 3)
                CHECK(false, "%s: y[%zu] = %.9g, reference %.9g (tolerance %.3g)", cc->name, i, got, ref[i], tol);
        }
        CHECK(bad == 0, "%s: %d of %zu outputs off", cc->name, bad, o.yn);
        size_t ybytes = o.yn * (cc->fp16 ? 2 : 4);
        void *yp = calloc(1, ybytes);
        const char *pprov = run_once(portable, cc, &o, yp, ybytes, NULL, 0);
        CHECK(pprov && !strcmp(pprov, "cpu") && !memcmp(yp, cc->fp16 ? (void *)y16 : (void *)y, ybytes),
              "%s: isa = portable gives other bits than the default path", cc->name);
        free(yp);
        printf("  %-40s on %s, %zu outputs, %d off\n", cc->name, prov ? prov : "?", o.yn, bad);
        free(ref);
        free(mag);
        free(y);
        free(y16);
        unbuild(&o);
    }
    sy_env_release(env);
    sy_env_release(portable);
}

/* Intra-op threads split the work, never the sum of one output. */
static void test_threads_bit_identical(void)
{
    const conv_case *cc = &cases[sizeof cases / sizeof cases[0] - 1];
    built o;
    build(cc, false, &o);
    static const int counts[4] = {1, 2, 3, 8}; /* 8: more workers than this host has cores */
    float *y[4];
    for (int t = 0; t < 4; t++) {
        char extra[64];
        snprintf(extra, sizeof extra, "[provider.cpu]\nthreads = %d\n", counts[t]);
        y[t] = calloc(o.yn, sizeof(float));
        sy_env *env = env_with(extra);
        if (!env)
            continue;
        const char *prov = run_once(env, cc, &o, y[t], o.yn * 4, NULL, 0);
        CHECK(prov && !strcmp(prov, "cpu"), "threads = %d: Conv on %s", counts[t], prov ? prov : "?");
        sy_env_release(env);
    }
    for (int t = 1; t < 4; t++)
        CHECK(!memcmp(y[0], y[t], o.yn * 4), "threads = %d differs from threads = 1", counts[t]);
    for (int t = 0; t < 4; t++)
        free(y[t]);
    unbuild(&o);
}

/* Sessions of one environment share its pool: run from several threads at
 * once, a region that finds the pool busy runs on its caller, and every
 * result is the one of threads = 1. */
typedef struct conc_job {
    sy_env *env;
    sy_model *model; /* loaded once; sessions of one model may run at once */
    const conv_case *cc;
    const built *o;
    float *y;
    int threads; /* the session's sy_session_options.threads */
    bool ok;
} conc_job;

/* one session, four runs; no CHECK here (its counters belong to the main thread) */
static void *conc_main(void *arg)
{
    conc_job *j = arg;
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = j->threads, .strict = -1};
    sy_status *st = sy_session_create(j->env, j->model, &so, &s);
    sy_tensor x = pt_tensor_f32(j->o->x, j->cc->rank, j->o->xdims);
    for (int r = 0; r < 4 && !st; r++) {
        const sy_tensor *y = NULL;
        st = sy_session_set_input(s, "x", &x, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        if (!st)
            st = sy_session_get_output(s, 0, &y);
        if (!st && y->nbytes == j->o->yn * 4)
            memcpy(j->y + (size_t)r * j->o->yn, y->data, y->nbytes);
        else if (!st)
            st = sy_status_create(SY_ERR_SHAPE, "output size");
    }
    j->ok = !st;
    sy_status_free(st);
    sy_session_release(s);
    return NULL;
}

static void test_concurrent_sessions(void)
{
    const conv_case *cc = &cases[sizeof cases / sizeof cases[0] - 1];
    built o;
    build(cc, false, &o);
    float *ref = calloc(o.yn, sizeof(float));
    sy_env *one = env_with(""), *env = env_with("[provider.cpu]\nthreads = 2\n");
    sy_model *model = env ? pt_load(env, o.model) : NULL;
    if (one && model && run_once(one, cc, &o, ref, o.yn * 4, NULL, 0)) {
        enum { NT = 3 };
        conc_job jobs[NT];
        pthread_t th[NT];
        for (int i = 0; i < NT; i++) {
            jobs[i] = (conc_job){env, model, cc, &o, calloc(4 * o.yn, sizeof(float)), 1, false};
            CHECK(!pthread_create(&th[i], NULL, conc_main, &jobs[i]), "pthread_create");
        }
        for (int i = 0; i < NT; i++) {
            pthread_join(th[i], NULL);
            CHECK(jobs[i].ok, "thread %d: a run failed", i);
            for (int r = 0; r < 4 && jobs[i].ok; r++)
                CHECK(!memcmp(ref, jobs[i].y + (size_t)r * o.yn, o.yn * 4),
                      "thread %d run %d differs from threads = 1", i, r);
            free(jobs[i].y);
        }
    }
    sy_model_release(model);
    sy_env_release(one);
    sy_env_release(env);
    free(ref);
    unbuild(&o);
}

/* ---- the session's thread count reaching the provider (ABI 1.5) ---- */

/* what the cpu provider logged (origin "cpu"), for the checks below */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char cpu_log[1024];

static void capture(void *user, sy_log_level level, const char *origin, const char *message)
{
    (void)user;
    (void)level;
    pthread_mutex_lock(&log_mu);
    if (!strcmp(origin, "cpu")) {
        size_t at = strlen(cpu_log);
        snprintf(cpu_log + at, sizeof cpu_log - at, "%s\n", message);
    }
    pthread_mutex_unlock(&log_mu);
}

/* threads of this process now (Linux): the workers a session's pool started */
static int task_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "Threads:", 8))
            n = atoi(line + 8);
    if (f)
        fclose(f);
    return n;
}

/* the threads a session of `threads` adds while it lives (the core's branch
 * pool and the cpu provider's session pool), 0 threads after its release */
static int session_extra_threads(sy_env *env, const built *o, int threads)
{
    sy_model *model = pt_load(env, o->model);
    sy_session_options so = {.struct_size = sizeof so, .threads = threads, .strict = -1};
    sy_session *s = NULL;
    int before = task_count();
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st && s, "session of %d threads: %s", threads, pt_msg(st));
    int during = task_count();
    sy_session_release(s);
    sy_model_release(model);
    CHECK(task_count() == before, "threads left after the session's release: %d, before %d", task_count(), before);
    return during - before;
}

/* No [provider.cpu] threads: a session of 2 threads makes the provider split
 * over 2 workers, says so, and gives the bits of 1 thread; so do 3 and 8.
 * One more thread lives with it than with [provider.cpu] threads = 1 (the
 * core's branch pool is the same in both: only the provider's pool differs). */
static void test_session_threads(void)
{
    const conv_case *cc = &cases[sizeof cases / sizeof cases[0] - 1];
    built o;
    build(cc, false, &o);
    sy_env *env = env_with("log_level = info\n");
    sy_env *fixed = env_with("log_level = info\n[provider.cpu]\nthreads = 1\n");
    if (!env || !fixed) {
        sy_env_release(env);
        sy_env_release(fixed);
        unbuild(&o);
        return;
    }
    sy_env_set_logger(env, capture, NULL);
    sy_env_set_logger(fixed, capture, NULL);
    static const int counts[4] = {1, 2, 3, 8};
    float *y[4];
    for (int t = 0; t < 4; t++) {
        y[t] = calloc(o.yn, sizeof(float));
        cpu_log[0] = '\0';
        const char *prov = run_threads(env, counts[t], cc, &o, y[t], o.yn * 4, NULL, 0);
        CHECK(prov && !strcmp(prov, "cpu"), "session threads = %d: Conv on %s", counts[t], prov ? prov : "?");
        char want[96];
        snprintf(want, sizeof want, "%d intra-op thread%s (from the session)\n", counts[t], counts[t] > 1 ? "s" : "");
        CHECK(strstr(cpu_log, want) != NULL, "session threads = %d: the cpu provider said '%s', expected '%s'",
              counts[t], cpu_log, want);
    }
    for (int t = 1; t < 4; t++)
        CHECK(!memcmp(y[0], y[t], o.yn * 4), "session threads = %d differs from threads = 1", counts[t]);

    /* [provider.cpu] threads = 1 wins over the session's 2 */
    float *yf = calloc(o.yn, sizeof(float));
    cpu_log[0] = '\0';
    const char *prov = run_threads(fixed, 2, cc, &o, yf, o.yn * 4, NULL, 0);
    CHECK(prov && !strcmp(prov, "cpu") && !memcmp(y[0], yf, o.yn * 4), "[provider.cpu] threads = 1, session 2: "
                                                                         "Conv on %s, or other bits than threads = 1",
          prov ? prov : "?");
    CHECK(strstr(cpu_log, "1 intra-op thread ([provider.cpu] threads)\n") && !strstr(cpu_log, "from the session"),
          "[provider.cpu] threads = 1, session 2: the cpu provider said '%s'", cpu_log);
    int follow = session_extra_threads(env, &o, 2), pinned = session_extra_threads(fixed, &o, 2);
    CHECK(follow == pinned + 1, "session of 2 threads: %d more threads following the session, %d with "
                                "[provider.cpu] threads = 1 (expected one worker more)", follow, pinned);
    CHECK(session_extra_threads(env, &o, 1) == 0, "a session of 1 thread started threads");
    printf("  session of 2 threads adds %d threads (cpu follows the session), %d ([provider.cpu] threads = 1)\n",
           follow, pinned);
    free(yf);
    for (int t = 0; t < 4; t++)
        free(y[t]);
    sy_env_release(env);
    sy_env_release(fixed);
    unbuild(&o);
}

/* Sessions of 1, 2, 3 and 8 threads of one environment without
 * [provider.cpu] threads, created and run at once: each has its own pool,
 * and every run gives the bits of threads = 1. */
static void test_concurrent_session_threads(void)
{
    const conv_case *cc = &cases[sizeof cases / sizeof cases[0] - 1];
    built o;
    build(cc, false, &o);
    float *ref = calloc(o.yn, sizeof(float));
    sy_env *env = env_with("");
    sy_model *model = env ? pt_load(env, o.model) : NULL;
    if (model && run_once(env, cc, &o, ref, o.yn * 4, NULL, 0)) {
        enum { NT = 4 };
        static const int counts[NT] = {1, 2, 3, 8};
        conc_job jobs[NT];
        pthread_t th[NT];
        for (int i = 0; i < NT; i++) {
            jobs[i] = (conc_job){env, model, cc, &o, calloc(4 * o.yn, sizeof(float)), counts[i], false};
            CHECK(!pthread_create(&th[i], NULL, conc_main, &jobs[i]), "pthread_create");
        }
        for (int i = 0; i < NT; i++) {
            pthread_join(th[i], NULL);
            CHECK(jobs[i].ok, "session of %d threads: a run failed", counts[i]);
            for (int r = 0; r < 4 && jobs[i].ok; r++)
                CHECK(!memcmp(ref, jobs[i].y + (size_t)r * o.yn, o.yn * 4),
                      "session of %d threads, run %d differs from threads = 1", counts[i], r);
            free(jobs[i].y);
        }
    }
    sy_model_release(model);
    sy_env_release(env);
    free(ref);
    unbuild(&o);
}

/* A weight that is a graph input cannot be packed: cpu_ref runs it. */
static void test_fallback(void)
{
    sy_env *env = env_with("");
    if (!env)
        return;
    const conv_case *cc = &cases[0];
    built o;
    build(cc, true, &o);
    sy_model *model = pt_load(env, o.model);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    CHECK(!st, "session: %s", pt_msg(st));
    sy_node_placement pl = {.struct_size = sizeof pl};
    bool found = false;
    for (size_t i = 0; s && i < sy_session_node_count(s); i++)
        if (sy_session_node_placement(s, i, &pl) && !strcmp(pl.op, "Conv")) {
            found = true;
            CHECK(pl.provider && !strcmp(pl.provider, "cpu_ref"), "Conv with input weights on %s",
                  pl.provider ? pl.provider : "?");
            CHECK(pl.reason_text && strstr(pl.reason_text, "weights and bias must be constants"), "reason: %s",
                  pl.reason_text ? pl.reason_text : "(none)");
        }
    CHECK(found, "no Conv node in the placement");
    sy_session_release(s);
    sy_model_release(model);
    unbuild(&o);
    sy_env_release(env);
}

static void test_bad_isa(void)
{
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_cpu.so\n[provider.cpu]\nisa = sse9\n",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(st != NULL, "isa = sse9 was accepted");
    const char *msg = pt_msg(st);
    CHECK(strstr(msg, "[provider.cpu] isa = sse9: expected auto, avx512, avx2 or portable") != NULL, "message: %s", msg);
    sy_env_release(env);
}

static void test_bad_threads(void)
{
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_cpu.so\n[provider.cpu]\nthreads = 0\n",
             PT_PLUGIN_DIR, PT_PLUGIN_DIR);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(st != NULL, "threads = 0 was accepted");
    const char *msg = pt_msg(st);
    CHECK(strstr(msg, "[provider.cpu] threads = 0") != NULL, "message: %s", msg);
    sy_env_release(env);
}

int main(int argc, char **argv)
{
    /* `session_threads`: only the tests of the session's thread count (the
     * tsan-labelled cpu.session_threads) */
    if (argc > 1 && !strcmp(argv[1], "session_threads")) {
        PT_RUN(test_session_threads);
        PT_RUN(test_concurrent_session_threads);
        return pt_result();
    }
    PT_RUN(test_cases);
    PT_RUN(test_threads_bit_identical);
    PT_RUN(test_concurrent_sessions);
    PT_RUN(test_session_threads);
    PT_RUN(test_concurrent_session_threads);
    PT_RUN(test_fallback);
    PT_RUN(test_bad_threads);
    PT_RUN(test_bad_isa);
    return pt_result();
}
