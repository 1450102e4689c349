/*
 * The cpu provider's LSTM (cpu_lstm.c, gates in cpu_vmath.c) against the
 * ONNX LSTM equations written out here in double:
 *   g = X_t W^T + H_{t-1} R^T + Wb + Rb  (gate order i, o, f, c; clipped to
 *   [-clip, clip] when clip is set), i, o, f = sigmoid, c~ = tanh,
 *   C_t = f C_{t-1} + i c~, H_t = o tanh(C_t).
 * Cases: forward with bias and initial states, reverse, bidirectional with
 * clip, and a wider one (hidden 20, inputs scaled by 4) that drives the
 * gates through both branches of tanh and into saturation. Y, Y_h and Y_c
 * are checked; the node must run on cpu. Also: isa = portable and threads =
 * 2 give the default path's bits; peepholes and sequence_lens are declined
 * (the node runs on cpu_ref, with the reason).
 */
#include "cpu_test_common.h"
#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>

#define CHECK PT_CHECK

typedef struct lcase {
    const char *name;
    int seq, batch, in, hid;
    const char *dir;
    float clip, scale;
    bool bias, init;
} lcase;

static const lcase cases[] = {
    {"forward, bias, initial states", 5, 2, 3, 4, "forward", 0, 1, true, true},
    {"reverse, no bias", 4, 1, 3, 5, "reverse", 0, 1, false, false},
    {"bidirectional, clip 0.9", 6, 2, 4, 3, "bidirectional", 0.9f, 1, true, true},
    {"bidirectional, hidden 20, inputs x4", 7, 1, 9, 20, "bidirectional", 0, 4, true, false},
};

static uint32_t lcg = 4242u;
static float rnd(void) { return cpu_rnd(&lcg); }

typedef struct data {
    int ndir;
    float *x, *w, *r, *b, *h0, *c0;
    size_t nx, nw, nr, nb, nh;
    double *y, *yh, *yc; /* reference */
} data;

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

static void reference(const lcase *c, data *d)
{
    int G = 4 * c->hid;
    for (int dir = 0; dir < d->ndir; dir++) {
        bool rev = !strcmp(c->dir, "reverse") || dir == 1;
        double *h = calloc((size_t)(c->batch * c->hid), sizeof *h), *cc = calloc((size_t)(c->batch * c->hid), sizeof *cc);
        for (int i = 0; i < c->batch * c->hid; i++) {
            h[i] = d->h0 ? d->h0[dir * c->batch * c->hid + i] : 0;
            cc[i] = d->c0 ? d->c0[dir * c->batch * c->hid + i] : 0;
        }
        double *g = malloc((size_t)G * sizeof *g), *hn = malloc((size_t)(c->batch * c->hid) * sizeof *hn);
        for (int step = 0; step < c->seq; step++) {
            int t = rev ? c->seq - 1 - step : step;
            for (int bi = 0; bi < c->batch; bi++) {
                for (int j = 0; j < G; j++) {
                    double v = 0;
                    for (int k = 0; k < c->in; k++)
                        v += (double)d->x[(t * c->batch + bi) * c->in + k] * d->w[(dir * G + j) * c->in + k];
                    for (int k = 0; k < c->hid; k++)
                        v += h[bi * c->hid + k] * d->r[(dir * G + j) * c->hid + k];
                    if (d->b)
                        v += (double)d->b[dir * 2 * G + j] + d->b[dir * 2 * G + G + j];
                    if (c->clip > 0)
                        v = v > c->clip ? c->clip : v < -c->clip ? -c->clip : v;
                    g[j] = v;
                }
                for (int k = 0; k < c->hid; k++) {
                    double gi = sigm(g[k]), go = sigm(g[c->hid + k]), gf = sigm(g[2 * c->hid + k]);
                    double gc = tanh(g[3 * c->hid + k]);
                    double cn = gf * cc[bi * c->hid + k] + gi * gc;
                    cc[bi * c->hid + k] = cn;
                    hn[bi * c->hid + k] = go * tanh(cn);
                }
            }
            memcpy(h, hn, (size_t)(c->batch * c->hid) * sizeof *h);
            for (int bi = 0; bi < c->batch; bi++)
                for (int k = 0; k < c->hid; k++)
                    d->y[((t * d->ndir + dir) * c->batch + bi) * c->hid + k] = h[bi * c->hid + k];
        }
        for (int i = 0; i < c->batch * c->hid; i++) {
            d->yh[dir * c->batch * c->hid + i] = h[i];
            d->yc[dir * c->batch * c->hid + i] = cc[i];
        }
        free(h);
        free(cc);
        free(g);
        free(hn);
    }
}

static float *fill(size_t n, float scale)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = rnd() * scale;
    return v;
}

static void make(const lcase *c, data *d)
{
    memset(d, 0, sizeof *d);
    d->ndir = !strcmp(c->dir, "bidirectional") ? 2 : 1;
    int G = 4 * c->hid;
    d->nx = (size_t)(c->seq * c->batch * c->in);
    d->nw = (size_t)(d->ndir * G * c->in);
    d->nr = (size_t)(d->ndir * G * c->hid);
    d->nb = (size_t)(d->ndir * 2 * G);
    d->nh = (size_t)(d->ndir * c->batch * c->hid);
    d->x = fill(d->nx, c->scale);
    d->w = fill(d->nw, 0.6f);
    d->r = fill(d->nr, 0.6f);
    d->b = c->bias ? fill(d->nb, 0.5f) : NULL;
    d->h0 = c->init ? fill(d->nh, 0.8f) : NULL;
    d->c0 = c->init ? fill(d->nh, 0.8f) : NULL;
    d->y = calloc((size_t)c->seq * d->nh, sizeof(double));
    d->yh = calloc(d->nh, sizeof(double));
    d->yc = calloc(d->nh, sizeof(double));
    reference(c, d);
}

static void unmake(data *d)
{
    free(d->x);
    free(d->w);
    free(d->r);
    free(d->b);
    free(d->h0);
    free(d->c0);
    free(d->y);
    free(d->yh);
    free(d->yc);
}

/* extra: "peephole" or "seqlens" to build a form cpu declines */
static pt_model *build(const lcase *c, const data *d, const char *extra)
{
    int G = 4 * c->hid;
    pt_model *m = pt_model_new("lstm");
    pt_input(m, "x", PT_F32, 3, (int64_t[]){c->seq, c->batch, c->in});
    pt_init_f32(m, "w", 3, (int64_t[]){d->ndir, G, c->in}, d->w);
    pt_init_f32(m, "r", 3, (int64_t[]){d->ndir, G, c->hid}, d->r);
    if (d->b)
        pt_init_f32(m, "b", 2, (int64_t[]){d->ndir, 2 * G}, d->b);
    if (d->h0) {
        pt_input(m, "h0", PT_F32, 3, (int64_t[]){d->ndir, c->batch, c->hid});
        pt_init_f32(m, "c0", 3, (int64_t[]){d->ndir, c->batch, c->hid}, d->c0);
    }
    bool peep = extra && !strcmp(extra, "peephole"), sl = extra && !strcmp(extra, "seqlens");
    if (peep) {
        float *p = calloc((size_t)(d->ndir * 3 * c->hid), sizeof(float));
        pt_init_f32(m, "p", 2, (int64_t[]){d->ndir, 3 * c->hid}, p);
        free(p);
    }
    if (sl) {
        int32_t lens[8];
        for (int i = 0; i < c->batch; i++)
            lens[i] = c->seq;
        pt_init_raw(m, "sl", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, (int64_t[]){c->batch}, lens,
                    (size_t)c->batch * 4);
    }
    pt_node(m, "LSTM", "lstm",
            (const char *[]){"x", "w", "r", d->b ? "b" : "", sl ? "sl" : "", d->h0 ? "h0" : "", d->h0 ? "c0" : "",
                             peep ? "p" : "", NULL},
            (const char *[]){"y", "yh", "yc", NULL});
    pt_attr_int(m, "hidden_size", c->hid);
    pt_attr_string(m, "direction", c->dir);
    if (c->clip > 0)
        pt_attr_float(m, "clip", c->clip);
    pt_output(m, "y", PT_F32, 4, (int64_t[]){c->seq, d->ndir, c->batch, c->hid});
    pt_output(m, "yh", PT_F32, 3, (int64_t[]){d->ndir, c->batch, c->hid});
    pt_output(m, "yc", PT_F32, 3, (int64_t[]){d->ndir, c->batch, c->hid});
    return m;
}

static sy_env *env_with(const char *extra)
{
    return cpu_env("ops_recurrent", "cpu", extra);
}

/* runs once; out: Y, Y_h, Y_c one after the other; returns the provider of
 * the LSTM node (static storage) or NULL */
static const char *run(sy_env *env, const lcase *c, const data *d, const char *extra, float *out, char *why,
                       size_t why_len)
{
    static char prov[32];
    pt_model *pm = build(c, d, extra);
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
        sy_tensor x = pt_tensor_f32(d->x, 3, (int64_t[]){c->seq, c->batch, c->in});
        st = sy_session_set_input(s, "x", &x, SY_INPUT_COPY);
        if (!st && d->h0) {
            sy_tensor h0 = pt_tensor_f32(d->h0, 3, (int64_t[]){d->ndir, c->batch, c->hid});
            st = sy_session_set_input(s, "h0", &h0, SY_INPUT_COPY);
        }
        if (!st)
            st = sy_session_run(s);
        CHECK(!st, "%s: run: %s", c->name, pt_msg(st));
        size_t cnt[3] = {(size_t)c->seq * d->nh, d->nh, d->nh}, at = 0;
        bool ok = !st;
        for (size_t o = 0; ok && o < 3; o++) {
            const sy_tensor *y = NULL;
            st = sy_session_get_output(s, o, &y);
            ok = !st && y && y->nbytes == cnt[o] * 4;
            CHECK(ok, "%s: output %zu: %s", c->name, o, pt_msg(st));
            if (ok)
                memcpy(out + at, y->data, y->nbytes);
            at += cnt[o];
        }
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; ok && i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && !strcmp(pl.op, "LSTM")) {
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

static size_t total(const lcase *c, const data *d) { return (size_t)(c->seq + 2) * d->nh; }

static void test_cases(void)
{
    sy_env *env = env_with(""), *portable = env_with("[provider.cpu]\nisa = portable\n");
    sy_env *two = env_with("[provider.cpu]\nthreads = 2\n");
    for (size_t ci = 0; env && portable && two && ci < sizeof cases / sizeof cases[0]; ci++) {
        const lcase *c = &cases[ci];
        data d;
        make(c, &d);
        size_t n = total(c, &d);
        float *got = calloc(n, sizeof *got), *gp = calloc(n, sizeof *gp), *g2 = calloc(n, sizeof *g2);
        double *ref = malloc(n * sizeof *ref);
        memcpy(ref, d.y, (size_t)c->seq * d.nh * sizeof *ref);
        memcpy(ref + (size_t)c->seq * d.nh, d.yh, d.nh * sizeof *ref);
        memcpy(ref + (size_t)(c->seq + 1) * d.nh, d.yc, d.nh * sizeof *ref);
        const char *prov = run(env, c, &d, NULL, got, NULL, 0);
        CHECK(prov && !strcmp(prov, "cpu"), "%s: LSTM ran on %s", c->name, prov ? prov : "?");
        /* float32 sums of a few terms and float32 gate functions, over a few
         * recurrent steps: 1e-5 absolute plus 1e-4 relative */
        int bad = 0;
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            double e = fabs((double)got[i] - ref[i]);
            worst = e > worst ? e : worst;
            if (!(e <= 1e-5 + 1e-4 * fabs(ref[i])) && bad++ < 5)
                CHECK(false, "%s: [%zu] = %.9g, reference %.9g", c->name, i, got[i], ref[i]);
        }
        CHECK(bad == 0, "%s: %d of %zu off", c->name, bad, n);
        printf("  %-40s %zu outputs, max abs error %.3g\n", c->name, n, worst);
        run(portable, c, &d, NULL, gp, NULL, 0);
        CHECK(!memcmp(got, gp, n * sizeof *got), "%s: isa = portable differs from the default path", c->name);
        run(two, c, &d, NULL, g2, NULL, 0);
        CHECK(!memcmp(got, g2, n * sizeof *got), "%s: threads = 2 differs from threads = 1", c->name);
        free(got);
        free(gp);
        free(g2);
        free(ref);
        unmake(&d);
    }
    sy_env_release(env);
    sy_env_release(portable);
    sy_env_release(two);
}

static void test_declines(void)
{
    sy_env *env = env_with("");
    const lcase *c = &cases[0];
    data d;
    make(c, &d);
    float *got = calloc(total(c, &d), sizeof *got);
    static const char *const forms[2] = {"peephole", "seqlens"};
    static const char *const words[2] = {"peephole", "sequence_lens"};
    for (int f = 0; env && f < 2; f++) {
        char why[256] = "";
        const char *prov = run(env, c, &d, forms[f], got, why, sizeof why);
        CHECK(prov && !strcmp(prov, "cpu_ref"), "%s: LSTM ran on %s", forms[f], prov ? prov : "?");
        CHECK(strstr(why, words[f]) != NULL, "%s: reason '%s' does not name %s", forms[f], why, words[f]);
    }
    free(got);
    unmake(&d);
    sy_env_release(env);
}

int main(void)
{
    PT_RUN(test_cases);
    PT_RUN(test_declines);
    return pt_result();
}
