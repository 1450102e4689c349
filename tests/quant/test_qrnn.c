/*
 * The integer ONNX RNN (switchyard.quant QRNN, plugins/ops_quant/qrnn.c on
 * kernels/qk_rnn.c): QDQ models DequantizeLinear(X, W, R[, initial_h]) ->
 * RNN -> QuantizeLinear(Y, Y_h) are built here in memory, folded by the
 * core's QDQ pass and run on cpu_ref.
 *
 *   hand     codes worked out by hand (comments show the arithmetic) for
 *            Relu with exact power-of-two scales (ties round to even, as
 *            QuantizeLinear), clip, sequence_lens, and a bidirectional
 *            Tanh / Sigmoid model at table nodes; both requant forms
 *   ref      an independent float reference written plainly below
 *            (dequantize -> RNN step in double -> quantize, the recurrent
 *            state being the int8 H_t): every code within 1 LSB, most
 *            exact; forward / reverse / bidirectional, clip, lengths,
 *            initial_h, per-hidden-unit weights, uint8 X, both forms
 *   fold     the plan holds QRNN on cpu_ref and no float RNN
 *   bad      bad quantization parameters refused, naming the tensor
 *   tool     `switchyard quantize` on a float RNN model gives a model
 *            whose RNN runs as QRNN on cpu_ref (`switchyard explain`)
 */
#include "emu_test.h"

#include <sys/stat.h>

#define PT_I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define PT_U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define QPLUGINS "cpu_ref ops_quant ops_recurrent"

enum { TANH, SIGMOID, RELU };
static const char *const ACT_NAME[] = {"Tanh", "Sigmoid", "Relu"};

/* ---- a QDQ RNN model ------------------------------------------------------ */

typedef struct rcase {
    const char *name;
    int32_t seq, batch, in, hid, ndir, reverse;
    int act[2];
    float clip;              /* <= 0: none */
    bool xu8;                /* X codes uint8 */
    float sx, sw[8], sr[8], sy, sh0; /* sw/sr: one, or hid when pc */
    int32_t zx, zy, zh0;
    bool pc;                 /* per-hidden-unit W/R scales */
    bool has_b, has_lens, has_h0;
    int32_t lens[4];
    int32_t x[256], w[128], r[128], h0[32]; /* codes */
    float b[32];             /* [ndir, 2*hid] */
} rcase;

static void attr_strings(pt_model *m, const char *name, int n, const char *const *v)
{
    Onnx__AttributeProto *a = emu_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    a->n_strings = (size_t)n;
    a->strings = pt_alloc(m, (size_t)n * sizeof *a->strings);
    for (int i = 0; i < n; i++) {
        a->strings[i].len = strlen(v[i]);
        a->strings[i].data = (uint8_t *)pt_strdup(m, v[i]);
    }
}

static void init_codes(pt_model *m, const char *name, bool u8, int32_t rank, const int64_t *dims, const int32_t *v)
{
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    uint8_t buf[512];
    for (size_t i = 0; i < n; i++)
        buf[i] = (uint8_t)v[i];
    pt_init_raw(m, name, u8 ? PT_U8 : PT_I8, rank, dims, buf, n);
}
/* scalars: rank 0 (dims must still point somewhere: pt_init_raw copies 0 of them) */
static const int64_t no_dims[1] = {1};
static void init_scalar_f(pt_model *m, const char *name, float v) { pt_init_f32(m, name, 0, no_dims, &v); }
static void init_scalar_q(pt_model *m, const char *name, bool u8, int32_t v) { init_codes(m, name, u8, 0, no_dims, &v); }

/* W/R scales (and zero points 0) of the case: per tensor or per hidden unit */
static void init_wparams(pt_model *m, const rcase *c, const char *s, const char *z, const float *sc)
{
    if (c->pc) {
        int64_t d = c->hid;
        int32_t zeros[8] = {0};
        pt_init_f32(m, s, 1, &d, sc);
        init_codes(m, z, false, 1, &d, zeros);
    } else {
        init_scalar_f(m, s, sc[0]);
        init_scalar_q(m, z, false, 0);
    }
}

static pt_model *build(const rcase *c, float w_scale_override, bool pc_axis_wrong)
{
    pt_model *m = pt_model_new(c->name);
    int64_t dx[3] = {c->seq, c->batch, c->in}, dw[3] = {c->ndir, c->hid, c->in}, dr[3] = {c->ndir, c->hid, c->hid};
    int64_t dy[4] = {c->seq, c->ndir, c->batch, c->hid}, dyh[3] = {c->ndir, c->batch, c->hid};
    int64_t db[2] = {c->ndir, 2 * c->hid}, dl = c->batch;
    pt_input(m, "xq", c->xu8 ? PT_U8 : PT_I8, 3, dx);
    if (c->has_lens)
        pt_input(m, "lens", PT_I32, 1, &dl);
    if (c->has_h0)
        pt_input(m, "h0q", PT_I8, 3, dyh);
    init_scalar_f(m, "xs", c->sx);
    init_scalar_q(m, "xz", c->xu8, c->zx);
    init_codes(m, "Wq", false, 3, dw, c->w);
    init_codes(m, "Rq", false, 3, dr, c->r);
    float sw[8];
    memcpy(sw, c->sw, sizeof sw);
    if (!isnan(w_scale_override))
        sw[0] = w_scale_override;
    init_wparams(m, c, "Ws", "Wz", sw);
    init_wparams(m, c, "Rs", "Rz", c->sr);
    init_scalar_f(m, "ys", c->sy);
    init_scalar_q(m, "yz", false, c->zy);
    if (c->has_b)
        pt_init_f32(m, "B", 2, db, c->b);
    if (c->has_h0) {
        init_scalar_f(m, "h0s", c->sh0);
        init_scalar_q(m, "h0z", false, c->zh0);
    }
    pt_node(m, "DequantizeLinear", "dq_x", (const char *[]){"xq", "xs", "xz", NULL}, (const char *[]){"x", NULL});
    pt_node(m, "DequantizeLinear", "dq_w", (const char *[]){"Wq", "Ws", "Wz", NULL}, (const char *[]){"W", NULL});
    if (c->pc)
        emu_attr_i(m, "axis", pc_axis_wrong ? 2 : 1);
    pt_node(m, "DequantizeLinear", "dq_r", (const char *[]){"Rq", "Rs", "Rz", NULL}, (const char *[]){"R", NULL});
    if (c->pc)
        emu_attr_i(m, "axis", 1);
    if (c->has_h0)
        pt_node(m, "DequantizeLinear", "dq_h0", (const char *[]){"h0q", "h0s", "h0z", NULL}, (const char *[]){"h0", NULL});
    pt_node(m, "RNN", "rnn",
            (const char *[]){"x", "W", "R", c->has_b ? "B" : "", c->has_lens ? "lens" : "", c->has_h0 ? "h0" : "", NULL},
            (const char *[]){"Y", "Y_h", NULL});
    emu_attr_i(m, "hidden_size", c->hid);
    emu_attr_s(m, "direction", c->ndir == 2 ? "bidirectional" : c->reverse ? "reverse" : "forward");
    const char *acts[2] = {ACT_NAME[c->act[0]], ACT_NAME[c->act[1]]};
    attr_strings(m, "activations", c->ndir, acts);
    if (c->clip > 0)
        emu_attr_f(m, "clip", c->clip);
    pt_node(m, "QuantizeLinear", "q_y", (const char *[]){"Y", "ys", "yz", NULL}, (const char *[]){"yq", NULL});
    pt_node(m, "QuantizeLinear", "q_yh", (const char *[]){"Y_h", "ys", "yz", NULL}, (const char *[]){"yhq", NULL});
    pt_output(m, "yq", PT_I8, 4, dy);
    pt_output(m, "yhq", PT_I8, 3, dyh);
    return m;
}

/* ---- the independent float reference ---------------------------------- */

static double act_ref(int a, double v)
{
    if (a == RELU)
        return v > 0 ? v : 0;
    if (a == SIGMOID)
        return 1.0 / (1.0 + exp(-v));
    return tanh(v);
}
static int32_t quant_ref(double v, float s, int32_t z)
{
    double q = nearbyint(v / s) + z; /* default rounding mode: half to even */
    return q < -128 ? -128 : (q > 127 ? 127 : (int32_t)q);
}

static void reference(const rcase *c, int32_t *y, int32_t *yh)
{
    int32_t S = c->seq, Bt = c->batch, I = c->in, Hd = c->hid, D = c->ndir;
    for (int32_t d = 0; d < D; d++) {
        bool rev = D == 2 ? d == 1 : c->reverse;
        for (int32_t b = 0; b < Bt; b++) {
            int32_t len = c->has_lens ? c->lens[b] : S;
            double h[8] = {0}, hn[8];
            if (c->has_h0)
                for (int32_t j = 0; j < Hd; j++)
                    h[j] = (c->h0[(d * Bt + b) * Hd + j] - c->zh0) * (double)c->sh0;
            int32_t last[8];
            for (int32_t j = 0; j < Hd; j++)
                last[j] = c->zy;
            for (int32_t s = 0; s < len; s++) {
                int32_t t = rev ? len - 1 - s : s;
                for (int32_t k = 0; k < Hd; k++) {
                    double sw = c->pc ? c->sw[k] : c->sw[0], sr = c->pc ? c->sr[k] : c->sr[0];
                    double acc = c->has_b ? (double)c->b[d * 2 * Hd + k] + (double)c->b[d * 2 * Hd + Hd + k] : 0.0;
                    for (int32_t i = 0; i < I; i++)
                        acc += (c->x[(t * Bt + b) * I + i] - c->zx) * (double)c->sx * (c->w[(d * Hd + k) * I + i] * sw);
                    for (int32_t j = 0; j < Hd; j++)
                        acc += h[j] * (c->r[(d * Hd + k) * Hd + j] * sr);
                    if (c->clip > 0)
                        acc = acc > c->clip ? c->clip : (acc < -c->clip ? -c->clip : acc);
                    int32_t q = quant_ref(act_ref(c->act[d], acc), c->sy, c->zy);
                    y[((t * D + d) * Bt + b) * Hd + k] = q;
                    last[k] = q;
                    hn[k] = (q - c->zy) * (double)c->sy; /* the state is the int8 H_t */
                }
                memcpy(h, hn, sizeof h);
            }
            for (int32_t t = len; t < S; t++)
                for (int32_t k = 0; k < Hd; k++)
                    y[((t * D + d) * Bt + b) * Hd + k] = c->zy;
            for (int32_t k = 0; k < Hd; k++)
                yh[(d * Bt + b) * Hd + k] = last[k];
        }
    }
}

/* ---- running ------------------------------------------------------------ */

static sy_model *g_model; /* of the last run_case, released by close_run after its session */

/* Runs the case; y/yh get the codes. Returns the session (for placement
 * checks) or NULL; *err gets the message of a refused model. */
static sy_session *run_case(const rcase *c, const char *requant, const pt_model *m, int32_t *y, int32_t *yh,
                            sy_env **envp, char *err, size_t elen)
{
    sy_env *env = emu_env(QPLUGINS, "[plugin.ops_quant]\nrequant = %s", requant);
    *envp = env;
    if (err)
        err[0] = '\0';
    if (!env)
        return NULL;
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    sy_model *model = NULL;
    sy_status *st = sy_model_load_buffer(env, buf, len, c->name, NULL, &model);
    free(buf);
    sy_session *s = NULL;
    if (!st) {
        sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1};
        st = sy_session_create(env, model, &o, &s);
    }
    uint8_t xb[256], hb[32];
    int64_t dx[3] = {c->seq, c->batch, c->in}, dh[3] = {c->ndir, c->batch, c->hid}, dl = c->batch;
    int32_t lens[4];
    for (int32_t i = 0; i < c->seq * c->batch * c->in; i++)
        xb[i] = (uint8_t)c->x[i];
    for (int32_t i = 0; i < c->ndir * c->batch * c->hid; i++)
        hb[i] = (uint8_t)c->h0[i];
    memcpy(lens, c->lens, sizeof lens);
    sy_tensor tx = emu_tensor(c->xu8 ? SY_DT_UINT8 : SY_DT_INT8, xb, 3, dx), th = emu_tensor(SY_DT_INT8, hb, 3, dh),
              tl = emu_tensor(SY_DT_INT32, lens, 1, &dl);
    if (!st)
        st = sy_session_set_input(s, "xq", &tx, SY_INPUT_COPY);
    if (!st && c->has_lens)
        st = sy_session_set_input(s, "lens", &tl, SY_INPUT_COPY);
    if (!st && c->has_h0)
        st = sy_session_set_input(s, "h0q", &th, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    const sy_tensor *ty = NULL, *tyh = NULL;
    if (!st)
        st = sy_session_get_output_by_name(s, "yq", &ty);
    if (!st)
        st = sy_session_get_output_by_name(s, "yhq", &tyh);
    if (!st) {
        for (int64_t i = 0; i < sy_tensor_numel(ty); i++)
            y[i] = ((const int8_t *)ty->data)[i];
        for (int64_t i = 0; i < sy_tensor_numel(tyh); i++)
            yh[i] = ((const int8_t *)tyh->data)[i];
    }
    g_model = model;
    if (st) {
        if (err)
            snprintf(err, elen, "%s", pt_msg(st));
        else
            PT_CHECK(st == NULL, "%s (%s): %s", c->name, requant, pt_msg(st));
        sy_session_release(s);
        return NULL;
    }
    return s;
}

static void close_run(sy_session *s, sy_env *env)
{
    sy_session_release(s);
    sy_model_release(g_model);
    g_model = NULL;
    sy_env_release(env);
}

static const char *const FORMS[] = {"onnx", "gemmlowp"};

/* ---- hand-worked codes -------------------------------------------------- */

/* hidden 2, input 1, Relu; s_x = 0.5, s_w = s_r = 0.25, s_y = 0.125, all zero
 * points 0; W = [2, -1] * 0.25 = [0.5, -0.25]; R = [[1, 2], [0, -2]] * 0.25;
 * B: Wb = [0.25, 1.0], Rb = 0; x codes [2, 4, -2] = [1, 2, -1]. */
static rcase relu_case(void)
{
    rcase c = {.name = "hand_relu", .seq = 3, .batch = 1, .in = 1, .hid = 2, .ndir = 1, .act = {RELU, RELU},
               .sx = 0.5f, .sw = {0.25f}, .sr = {0.25f}, .sy = 0.125f, .has_b = true,
               .x = {2, 4, -2}, .w = {2, -1}, .r = {1, 2, 0, -2}, .b = {0.25f, 1.0f, 0, 0}};
    return c;
}

static void test_hand(void)
{
    for (int f = 0; f < 2; f++) {
        int32_t y[64], yh[16];
        sy_env *env;
        /* t0: pre = [0.5 + 0.25, -0.25 + 1] = [0.75, 0.75] -> [6, 6]
         * t1: x = 2: xW = [1, -0.5]; hR = [0.75*0.25 + 0.75*0.5, -0.75*0.5] = [0.5625, -0.375]
         *     pre = [1.8125, 0.125] -> 14.5 (tie: even 14), 1
         * t2: x = -1: xW = [-0.5, 0.25]; h = [1.75, 0.125]; hR = [0.4375 + 0.0625, -0.0625]
         *     pre = [0.25, 1.1875] -> 2, 9.5 (tie: even 10) */
        rcase c = relu_case();
        pt_model *m = build(&c, NAN, false);
        sy_session *s = run_case(&c, FORMS[f], m, y, yh, &env, NULL, 0);
        const int32_t want[6] = {6, 6, 14, 1, 2, 10};
        for (int i = 0; s && i < 6; i++)
            PT_CHECK(y[i] == want[i], "%s relu Y[%d] = %d, hand-worked %d", FORMS[f], i, y[i], want[i]);
        PT_CHECK(s && yh[0] == 2 && yh[1] == 10, "%s relu Y_h = [%d, %d], hand-worked [2, 10]", FORMS[f], yh[0], yh[1]);
        close_run(s, env);
        pt_model_free(m);

        /* clip = 1: t1 pre0 1.8125 -> 1 -> 8; h = [1, 0.125]; t2: hR0 = 0.25 + 0.0625,
         * pre = [-0.5 + 0.3125 + 0.25, 1.1875 -> 1] = [0.0625 -> 0.5 (tie: 0), 8] */
        c.name = "hand_clip";
        c.clip = 1.0f;
        m = build(&c, NAN, false);
        s = run_case(&c, FORMS[f], m, y, yh, &env, NULL, 0);
        const int32_t want_clip[6] = {6, 6, 8, 1, 0, 8};
        for (int i = 0; s && i < 6; i++)
            PT_CHECK(y[i] == want_clip[i], "%s clip Y[%d] = %d, hand-worked %d", FORMS[f], i, y[i], want_clip[i]);
        close_run(s, env);
        pt_model_free(m);

        /* batch 2 with lengths [3, 1]: row 0 as above (no clip); row 1 has x
         * codes [4, 0, 0]: t0 pre = [1 + 0.25, -0.5 + 1] = [1.25, 0.5] -> 10, 4;
         * then Y = 0 (code 0) at t1, t2; Y_h = [10, 4] */
        c = relu_case();
        c.name = "hand_lens";
        c.batch = 2;
        c.has_lens = true;
        c.lens[0] = 3;
        c.lens[1] = 1;
        const int32_t xs[6] = {2, 4, 4, 0, -2, 0}; /* [t][b] */
        memcpy(c.x, xs, sizeof xs);
        m = build(&c, NAN, false);
        s = run_case(&c, FORMS[f], m, y, yh, &env, NULL, 0);
        const int32_t want_lens[12] = {6, 6, 10, 4, 14, 1, 0, 0, 2, 10, 0, 0}; /* [t][b][k] */
        for (int i = 0; s && i < 12; i++)
            PT_CHECK(y[i] == want_lens[i], "%s lens Y[%d] = %d, hand-worked %d", FORMS[f], i, y[i], want_lens[i]);
        PT_CHECK(s && yh[0] == 2 && yh[1] == 10 && yh[2] == 10 && yh[3] == 4, "%s lens Y_h = [%d %d %d %d]", FORMS[f],
                 yh[0], yh[1], yh[2], yh[3]);
        close_run(s, env);
        pt_model_free(m);

        /* bidirectional, Tanh forward and Sigmoid reverse, R = 0, no bias:
         * x codes [1, 2, -1] * 0.5 times W (code 1) * 0.5 give pre = [0.25,
         * 0.5, -0.25]; s_y = 1/128, zero point 0.
         * tanh(0.25) = 0.2449187 -> 31.35 -> 31; tanh(0.5) = 0.4621172 -> 59.15
         * -> 59; tanh(-0.25) -> -31. sigmoid(0.25) = 0.5621765 -> 71.96 -> 72;
         * sigmoid(0.5) = 0.6224593 -> 79.67 -> 80; sigmoid(-0.25) = 0.4378235
         * -> 56.04 -> 56 (all table nodes of both activations).
         * Y_h: forward = t2 -> -31, reverse = t0 -> 72. */
        rcase b = {.name = "hand_bidi", .seq = 3, .batch = 1, .in = 1, .hid = 1, .ndir = 2, .act = {TANH, SIGMOID},
                   .sx = 0.5f, .sw = {0.5f}, .sr = {0.5f}, .sy = 1.0f / 128, .x = {1, 2, -1}, .w = {1, 1},
                   .r = {0, 0}};
        m = build(&b, NAN, false);
        s = run_case(&b, FORMS[f], m, y, yh, &env, NULL, 0);
        const int32_t want_bidi[6] = {31, 72, 59, 80, -31, 56}; /* [t][d] */
        for (int i = 0; s && i < 6; i++)
            PT_CHECK(y[i] == want_bidi[i], "%s bidi Y[%d] = %d, hand-worked %d", FORMS[f], i, y[i], want_bidi[i]);
        PT_CHECK(s && yh[0] == -31 && yh[1] == 72, "%s bidi Y_h = [%d, %d], hand-worked [-31, 72]", FORMS[f], yh[0],
                 yh[1]);
        close_run(s, env);
        pt_model_free(m);
    }
}

/* ---- against the float reference ---------------------------------------- */

static uint32_t lcg = 12345u;
static int32_t rnd(int32_t lo, int32_t hi)
{
    lcg = lcg * 1664525u + 1013904223u;
    return lo + (int32_t)((lcg >> 8) % (uint32_t)(hi - lo + 1));
}

static rcase random_case(const char *name, int32_t ndir, int32_t reverse, int a0, int a1)
{
    rcase c = {.name = name, .seq = 5, .batch = 3, .in = 4, .hid = 3, .ndir = ndir, .reverse = reverse,
               .act = {a0, a1}, .sx = 0.05f, .sw = {0.01f}, .sr = {0.008f}, .sy = 1.0f / 128, .zx = 3, .zy = 0,
               .has_b = true};
    if (a0 == SIGMOID || a0 == RELU) /* outputs >= 0: use the whole int8 range */
        c.zy = -128, c.sy = a0 == SIGMOID ? 1.0f / 256 : 0.02f;
    for (int32_t i = 0; i < c.seq * c.batch * c.in; i++)
        c.x[i] = rnd(-100, 100);
    for (int32_t i = 0; i < ndir * c.hid * c.in; i++)
        c.w[i] = rnd(-127, 127);
    for (int32_t i = 0; i < ndir * c.hid * c.hid; i++)
        c.r[i] = rnd(-127, 127);
    for (int32_t i = 0; i < ndir * 2 * c.hid; i++)
        c.b[i] = (float)rnd(-40, 40) / 100.0f;
    return c;
}

static void compare(const rcase *c, const char *form, int *n_exact, int *n_total)
{
    int32_t y[512], yh[64], ry[512], ryh[64];
    sy_env *env;
    pt_model *m = build(c, NAN, false);
    sy_session *s = run_case(c, form, m, y, yh, &env, NULL, 0);
    pt_model_free(m);
    if (!s) {
        close_run(NULL, env);
        return;
    }
    reference(c, ry, ryh);
    int ny = c->seq * c->ndir * c->batch * c->hid, nh = c->ndir * c->batch * c->hid, worst = 0;
    for (int i = 0; i < ny + nh; i++) {
        int32_t got = i < ny ? y[i] : yh[i - ny], want = i < ny ? ry[i] : ryh[i - ny];
        int dlt = abs(got - want);
        worst = dlt > worst ? dlt : worst;
        *n_exact += dlt == 0;
        (*n_total)++;
        PT_CHECK(dlt <= 1, "%s (%s): %s[%d] = %d, reference %d", c->name, form, i < ny ? "Y" : "Y_h",
                 i < ny ? i : i - ny, got, want);
    }
    printf("  %-22s %-8s %d codes, max |int - ref| = %d\n", c->name, form, ny + nh, worst);
    close_run(s, env);
}

static void test_reference(void)
{
    rcase cs[10];
    int n = 0;
    cs[n++] = random_case("fwd_tanh", 1, 0, TANH, TANH);
    cs[n++] = random_case("rev_sigmoid", 1, 1, SIGMOID, SIGMOID);
    cs[n++] = random_case("fwd_relu", 1, 0, RELU, RELU);
    cs[n] = random_case("bidi_tanh_relu_clip", 2, 0, TANH, RELU);
    cs[n++].clip = 0.6f;
    cs[n] = random_case("bidi_lens", 2, 0, TANH, TANH);
    cs[n].has_lens = true;
    cs[n].lens[0] = 5, cs[n].lens[1] = 2, cs[n++].lens[2] = 0;
    cs[n] = random_case("rev_lens_h0", 1, 1, TANH, TANH);
    cs[n].has_lens = cs[n].has_h0 = true;
    cs[n].lens[0] = 3, cs[n].lens[1] = 5, cs[n].lens[2] = 1;
    cs[n].sh0 = 0.01f, cs[n].zh0 = -5;
    for (int i = 0; i < 9; i++)
        cs[n].h0[i] = rnd(-90, 90);
    n++;
    cs[n] = random_case("bidi_h0_per_unit", 2, 0, TANH, TANH);
    cs[n].has_h0 = cs[n].pc = true;
    cs[n].sh0 = 0.006f;
    for (int i = 0; i < 18; i++)
        cs[n].h0[i] = rnd(-120, 120);
    const float sw[3] = {0.004f, 0.012f, 0.02f}, sr[3] = {0.01f, 0.003f, 0.007f};
    memcpy(cs[n].sw, sw, sizeof sw);
    memcpy(cs[n++].sr, sr, sizeof sr);
    cs[n] = random_case("fwd_x_uint8_no_bias", 1, 0, TANH, TANH);
    cs[n].xu8 = true;
    cs[n].zx = 128;
    cs[n].has_b = false;
    for (int i = 0; i < 60; i++)
        cs[n].x[i] = rnd(0, 255);
    n++;
    int exact = 0, total = 0;
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < n; i++)
            compare(&cs[i], FORMS[f], &exact, &total);
    printf("  %d of %d codes equal the reference, the rest within 1\n", exact, total);
    /* the requantization to the pre-activation and the table are far finer
     * than an output step: a difference is a rounding-boundary case, rare */
    PT_CHECK(total > 0 && exact * 100 >= total * 95, "only %d of %d codes equal the reference", exact, total);
}

/* ---- the fold and the placement ---------------------------------------- */

static void test_fold(void)
{
    rcase c = random_case("fold_bidi", 2, 0, TANH, TANH);
    c.has_h0 = c.has_lens = true;
    c.lens[0] = c.lens[1] = c.lens[2] = 5;
    c.sh0 = 0.01f;
    int32_t y[512], yh[64];
    sy_env *env;
    pt_model *m = build(&c, NAN, false);
    sy_session *s = run_case(&c, "onnx", m, y, yh, &env, NULL, 0);
    pt_model_free(m);
    int n_qrnn = 0, n_rnn = 0, n_dq = 0;
    for (size_t i = 0; s && i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (!sy_session_node_placement(s, i, &p) || p.folded)
            continue;
        if (!strcmp(p.op, "QRNN")) {
            n_qrnn++;
            PT_CHECK(p.provider && !strcmp(p.provider, "cpu_ref"), "QRNN on %s", p.provider ? p.provider : "(none)");
            PT_CHECK(p.domain && !strcmp(p.domain, "switchyard.quant"), "QRNN domain %s", p.domain ? p.domain : "");
        }
        n_rnn += !strcmp(p.op, "RNN");
        n_dq += !strcmp(p.op, "DequantizeLinear") || !strcmp(p.op, "QuantizeLinear");
    }
    PT_CHECK(s && n_qrnn == 1 && n_rnn == 0 && n_dq == 0, "plan: %d QRNN, %d float RNN, %d Q/DQ at run time", n_qrnn,
             n_rnn, n_dq);
    close_run(s, env);

    /* an activation without an integer form keeps the float RNN */
    rcase e = random_case("fold_elu", 1, 0, TANH, TANH);
    m = build(&e, NAN, false);
    Onnx__NodeProto *rnn = NULL;
    for (size_t i = 0; i < m->graph.n_node; i++)
        if (!strcmp(m->graph.node[i]->op_type, "RNN"))
            rnn = m->graph.node[i];
    for (size_t i = 0; rnn && i < rnn->n_attribute; i++)
        if (!strcmp(rnn->attribute[i]->name, "activations"))
            rnn->attribute[i]->strings[0] = (ProtobufCBinaryData){3, (uint8_t *)"Elu"};
    s = run_case(&e, "onnx", m, y, yh, &env, NULL, 0);
    pt_model_free(m);
    n_qrnn = n_rnn = 0;
    for (size_t i = 0; s && i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && !p.folded) {
            n_qrnn += !strcmp(p.op, "QRNN");
            n_rnn += !strcmp(p.op, "RNN");
        }
    }
    PT_CHECK(s && n_qrnn == 0 && n_rnn == 1, "Elu: %d QRNN, %d RNN (the float RNN should stay)", n_qrnn, n_rnn);
    close_run(s, env);
}

/* ---- bad parameters ------------------------------------------------------ */

static void expect_refusal(const rcase *c, pt_model *m, const char *what, const char *sub1, const char *sub2)
{
    int32_t y[512], yh[64];
    sy_env *env;
    char err[2048];
    sy_session *s = run_case(c, "onnx", m, y, yh, &env, err, sizeof err);
    PT_CHECK(!s, "%s: accepted", what);
    PT_HAS(err, sub1);
    PT_HAS(err, sub2);
    if (err[0])
        printf("  %s: %s\n", what, err);
    close_run(s, env);
    pt_model_free(m);
}

static void test_bad(void)
{
    rcase c = relu_case();
    c.name = "bad_w_scale";
    expect_refusal(&c, build(&c, 0.0f, false), "W scale 0", "tensor 'Wq'", "scale 'Ws'[0] = 0");
    c.name = "bad_w_scale_neg";
    expect_refusal(&c, build(&c, -0.25f, false), "W scale < 0", "tensor 'Wq'", "must be positive");
    c = relu_case();
    c.name = "bad_y_scale";
    c.sy = INFINITY;
    expect_refusal(&c, build(&c, NAN, false), "Y scale inf", "tensor 'yq'", "scale 'ys'[0] = inf");
    c = relu_case();
    c.name = "bad_x_scale";
    c.sx = -1.0f;
    expect_refusal(&c, build(&c, NAN, false), "X scale < 0", "tensor 'xq'", "scale 'xs'[0] = -1");

    c = relu_case();
    c.name = "bad_lens";
    c.has_lens = true;
    c.lens[0] = 4; /* seq is 3 */
    expect_refusal(&c, build(&c, NAN, false), "sequence_lens > seq", "sequence_lens 'lens'[0] = 4",
                   "outside [0, 3]");

    /* a QRNN written directly: per-axis scale of the wrong length, a zero
     * point of the wrong type */
    rcase d = relu_case();
    pt_model *m = pt_model_new("bad_direct");
    emu_opset(m, "switchyard.quant", 1);
    int64_t dx[3] = {3, 1, 1}, dw[3] = {1, 2, 1}, dr[3] = {1, 2, 2}, d3 = 3, dy[4] = {3, 1, 1, 2};
    pt_input(m, "xq", PT_I8, 3, dx);
    init_scalar_f(m, "xs", 0.5f);
    init_scalar_q(m, "xz", false, 0);
    init_codes(m, "Wq", false, 3, dw, d.w);
    pt_init_f32(m, "Ws3", 1, &d3, (const float[]){0.25f, 0.25f, 0.25f});
    init_codes(m, "Rq", false, 3, dr, d.r);
    init_scalar_f(m, "Rs", 0.25f);
    init_scalar_f(m, "ys", 0.125f);
    init_scalar_q(m, "yz", false, 0);
    pt_node(m, "QRNN", "qrnn", (const char *[]){"xq", "xs", "xz", "Wq", "Ws3", "", "Rq", "Rs", "", "ys", "yz", NULL},
            (const char *[]){"yq", NULL});
    emu_domain(m, "switchyard.quant");
    emu_attr_i(m, "hidden_size", 2);
    pt_output(m, "yq", PT_I8, 4, dy);
    expect_refusal(&d, m, "W per-axis length", "tensor 'Wq'", "per-axis length mismatch");

    m = pt_model_new("bad_direct_zp");
    emu_opset(m, "switchyard.quant", 1);
    pt_input(m, "xq", PT_I8, 3, dx);
    init_scalar_f(m, "xs", 0.5f);
    init_scalar_q(m, "xz_u8", true, 200);
    init_codes(m, "Wq", false, 3, dw, d.w);
    init_scalar_f(m, "Ws", 0.25f);
    init_codes(m, "Rq", false, 3, dr, d.r);
    init_scalar_f(m, "Rs", 0.25f);
    init_scalar_f(m, "ys", 0.125f);
    pt_node(m, "QRNN", "qrnn", (const char *[]){"xq", "xs", "xz_u8", "Wq", "Ws", "", "Rq", "Rs", "", "ys", NULL},
            (const char *[]){"yq", NULL});
    emu_domain(m, "switchyard.quant");
    pt_output(m, "yq", PT_U8, 4, dy);
    expect_refusal(&d, m, "X zero point type", "tensor 'xq'", "zero point 'xz_u8' is uint8 but the codes are int8");
}

/* ---- the quantize tool ---------------------------------------------------- */

static void write_tensor_pb(const char *path, const float *v, int64_t *dims, size_t rank)
{
    Onnx__TensorProto t;
    onnx__tensor_proto__init(&t);
    t.n_dims = rank;
    t.dims = dims;
    t.has_data_type = 1;
    t.data_type = PT_F32;
    size_t n = 1;
    for (size_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    t.has_raw_data = 1;
    t.raw_data.len = n * sizeof(float);
    t.raw_data.data = (uint8_t *)v;
    size_t len = onnx__tensor_proto__get_packed_size(&t);
    uint8_t *buf = malloc(len);
    onnx__tensor_proto__pack(&t, buf);
    FILE *f = fopen(path, "wb");
    PT_CHECK(f && fwrite(buf, 1, len, f) == len, "writing %s", path);
    if (f)
        fclose(f);
    free(buf);
}

static int sh(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    return pclose(p);
}

/* A float bidirectional RNN (seq 6, batch 1, input 4, hidden 5, Tanh) as
 * DIR/rnn.onnx and 8 calibration inputs DIR/calib/set_K/input_0.pb (also
 * the model of tests/mcu/test_mcu_qrnn.sh, through --write-model DIR). */
static int64_t tool_dx[3] = {6, 1, 4};
static float tool_xs[8][24];
static void write_float_model(const char *dir)
{
    char path[512];
    pt_model *m = pt_model_new("float_rnn");
    int64_t dw[3] = {2, 5, 4}, dr[3] = {2, 5, 5}, db[2] = {2, 10}, dy[4] = {6, 2, 1, 5}, dyh[3] = {2, 1, 5};
    float w[40], r[50], b[20];
    for (int i = 0; i < 40; i++)
        w[i] = (float)rnd(-100, 100) / 150.0f;
    for (int i = 0; i < 50; i++)
        r[i] = (float)rnd(-100, 100) / 300.0f;
    for (int i = 0; i < 20; i++)
        b[i] = (float)rnd(-100, 100) / 500.0f;
    pt_input(m, "X", PT_F32, 3, tool_dx);
    pt_init_f32(m, "W", 3, dw, w);
    pt_init_f32(m, "R", 3, dr, r);
    pt_init_f32(m, "B", 2, db, b);
    pt_node(m, "RNN", "rnn", (const char *[]){"X", "W", "R", "B", NULL}, (const char *[]){"Y", "Y_h", NULL});
    emu_attr_i(m, "hidden_size", 5);
    emu_attr_s(m, "direction", "bidirectional");
    pt_output(m, "Y", PT_F32, 4, dy);
    pt_output(m, "Y_h", PT_F32, 3, dyh);
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    snprintf(path, sizeof path, "%s/rnn.onnx", dir);
    FILE *f = fopen(path, "wb");
    PT_CHECK(f && fwrite(buf, 1, len, f) == len, "writing %s", path);
    if (f)
        fclose(f);
    free(buf);
    pt_model_free(m);
    for (int k = 0; k < 8; k++) {
        for (int i = 0; i < 24; i++)
            tool_xs[k][i] = (float)rnd(-100, 100) / 60.0f;
        snprintf(path, sizeof path, "%s/calib", dir);
        mkdir(path, 0755);
        snprintf(path, sizeof path, "%s/calib/set_%d", dir, k);
        mkdir(path, 0755);
        strncat(path, "/input_0.pb", sizeof path - strlen(path) - 1);
        write_tensor_pb(path, tool_xs[k], tool_dx, 3);
    }
}

static void test_tool(void)
{
    char dir[] = "/tmp/sy_qrnn_XXXXXX", path[512], cmd[2048];
    static char out[65536];
    int64_t *dx = tool_dx;
    PT_REQUIRE(mkdtemp(dir), "mkdtemp");
    write_float_model(dir);
    snprintf(cmd, sizeof cmd, "'%s' quantize '%s/rnn.onnx' --calib '%s/calib' -o '%s/rnn_int8.onnx' 2>&1", EMU_CLI,
             dir, dir, dir);
    int rc = sh(cmd, out, sizeof out);
    PT_CHECK(rc == 0, "quantize failed (%d):\n%s", rc, out);
    snprintf(cmd, sizeof cmd, "'%s' explain '%s/rnn_int8.onnx' 2>&1", EMU_CLI, dir);
    rc = sh(cmd, out, sizeof out);
    PT_CHECK(rc == 0, "explain failed:\n%s", out);
    printf("%s", out);
    bool qrnn_cpu = false, float_rnn = false;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "QRNN") && strstr(line, "cpu_ref"))
            qrnn_cpu = true;
        if (strstr(line, " RNN ") && !strstr(line, "QRNN"))
            float_rnn = true;
    }
    PT_CHECK(qrnn_cpu && !float_rnn, "explain: QRNN on cpu_ref %d, a float RNN %d", qrnn_cpu, float_rnn);

    /* the int8 model against the float one on a calibration input: the
     * output scale is about 1/128 and the int8 state adds a few steps */
    sy_env *env = emu_env(QPLUGINS, "");
    double worst = 0;
    for (int which = 0; env && which < 2; which++) {
        snprintf(path, sizeof path, "%s/%s", dir, which ? "rnn_int8.onnx" : "rnn.onnx");
        sy_model *md = NULL;
        sy_session *s = NULL;
        const sy_tensor *ty = NULL;
        sy_tensor tx = emu_tensor(SY_DT_FLOAT32, tool_xs[3], 3, dx);
        sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1};
        static float ref[60];
        if (emu_ok(sy_model_load(env, path, &md), path) && emu_ok(sy_session_create(env, md, &o, &s), "session") &&
            emu_ok(sy_session_set_input(s, "X", &tx, SY_INPUT_COPY), "X") && emu_ok(sy_session_run(s), "run") &&
            emu_ok(sy_session_get_output_by_name(s, "Y", &ty), "Y")) {
            for (int i = 0; i < 60; i++) {
                float v = ((const float *)ty->data)[i];
                if (!which)
                    ref[i] = v;
                else
                    worst = fabs(v - ref[i]) > worst ? fabs(v - ref[i]) : worst;
            }
        }
        sy_session_release(s);
        sy_model_release(md);
    }
    printf("  quantized vs float RNN: max |dY| = %.4f\n", worst);
    PT_CHECK(worst < 0.06, "quantized RNN differs from the float one by %.4f", worst);
    sy_env_release(env);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    PT_CHECK(system(cmd) == 0, "cleanup");
done:;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-model")) { /* for tests/mcu/test_mcu_qrnn.sh */
        write_float_model(argv[2]);
        return pt_result();
    }
    PT_RUN(test_hand);
    PT_RUN(test_reference);
    PT_RUN(test_fold);
    PT_RUN(test_bad);
    PT_RUN(test_tool);
    return pt_result();
}
