/*
 * The quantized paths of the emulators (switchyard.quant nodes):
 *
 *  1. an integer chain QConv (per-channel s8 weights, float bias, folded
 *     ReLU) -> QMaxPool -> Reshape -> QMatMul -> QAdd built in memory, in
 *     s8, u8, s16 and u16 (16x8) activations, on each emulator that takes the
 *     configuration: every node on the emulator, output bytes equal to
 *     cpu_ref's. The arithmetic is the same by construction: the MAC nodes
 *     carry requant = "gemmlowp" (cpu_ref's fixed-point form, the emulators'
 *     round-half-away requantization) and QAdd requant = "onnx" (cpu_ref's
 *     fp32 form, the emulators' "eltwise in fp32" rule);
 *  2. mnist-8 quantized by `switchyard quantize` at test time (int8, uint8,
 *     int16x8) on htp / lpai / aic deployments: argmax 2, 0, 9 on the three
 *     reference sets, the integer body on the emulator;
 *  3. capability rejections of each new rule (HTP-QCONFIG, HTP-QAXIS,
 *     *-QSTATIC, LPAI-DTYPE, LPAI-QAXIS, AIC-QCONFIG, *-QIO) naming the rule;
 *  3b. integer Transpose (a data move of codes) on each emulator, bytes
 *     against hand-indexed codes; declined by AIC-QCONFIG (int8) and
 *     LPAI-RANK (rank 5);
 *  3c. QConcat: copies where the encoding is the output's, else
 *     QuantizeLinear's requantization (hand-worked ties), equal to cpu_ref; int8 on aic
 *     declined (AIC-QCONFIG);
 *  3d. integer Slice (constant parameters, a negative step, a clamped end)
 *     on each emulator, codes against hand indexing; AIC int8 declined;
 *  3e. QSub / QMul with two activation operands (htp, lpai): hand-worked
 *     codes (a tie, clamping) and bytes equal to cpu_ref's fp32 form;
 *  4. a compile-cache round trip of a quantized partition (htp, aic, lpai):
 *     the cache run's bytes equal the plain run's.
 */
#include "emu_test.h"

#include <sys/stat.h>
#include <unistd.h>

#define PT_I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define PT_U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define PT_I16 ONNX__TENSOR_PROTO__DATA_TYPE__INT16
#define PT_U16 ONNX__TENSOR_PROTO__DATA_TYPE__UINT16
#define IS16(elem) ((elem) == PT_I16 || (elem) == PT_U16)
#define Q_PLUGINS EMU_ALL " ops_quant"

/* ---- 1. the in-memory integer chain ------------------------------------------ */
typedef struct qcfg {
    int elem;       /* activation element type */
    sy_dtype dt;
    int32_t zp;     /* activation zero point */
    bool per_axis;  /* per-channel weights */
    int wz;         /* weight zero point (per tensor, or every channel's) */
    int yel;        /* QConv output element type (0: the activation type) */
    bool dyn_w;     /* QConv weights a graph input (not a constant) */
} qcfg;

static void zp_init(pt_model *m, const char *name, const qcfg *c, int32_t v)
{
    int64_t d[1] = {1};
    if (IS16(c->elem)) {
        uint16_t z = (uint16_t)v;
        pt_init_raw(m, name, c->elem, 0, d, &z, 2);
    } else if (c->elem == PT_U8) {
        uint8_t z = (uint8_t)v;
        pt_init_raw(m, name, PT_U8, 0, d, &z, 1);
    } else {
        int8_t z = (int8_t)v;
        pt_init_raw(m, name, PT_I8, 0, d, &z, 1);
    }
}

static void scalar(pt_model *m, const char *name, float v)
{
    int64_t d[1] = {1};
    pt_init_f32(m, name, 0, d, &v);
}

/* x [1, 2, 8, 8] -> QConv 3x3 pad 1 (4 ch) -> QMaxPool 2x2 -> Reshape [1, 64]
 * -> QMatMul [64, 5] -> QAdd (constant [5]) -> y [1, 5] */
static pt_model *qchain(const qcfg *c, const char *mac_form)
{
    pt_model *m = pt_model_new("qchain");
    emu_opset(m, "switchyard.quant", 1);
    int64_t xd[4] = {1, 2, 8, 8}, wd[4] = {4, 2, 3, 3}, c4[1] = {4}, md[2] = {64, 5}, c5[1] = {5}, sh[1] = {2},
            shv[2] = {1, 64}, yd[2] = {1, 5};
    pt_input(m, "x", c->elem, 4, xd);
    int8_t w[72], wm[320];
    for (int i = 0; i < 72; i++)
        w[i] = (int8_t)((i * 37 + 11) % 255 - 127);
    for (int i = 0; i < 320; i++)
        wm[i] = (int8_t)((i * 53 + 7) % 251 - 125);
    if (c->dyn_w)
        pt_input(m, "w", PT_I8, 4, wd);
    else
        pt_init_raw(m, "w", PT_I8, 4, wd, w, sizeof w);
    /* power-of-two scales: multipliers 2^-k make exact ties (acc * M = n + 1/2) frequent, so the
     * rounding rule (half away from zero vs half to even) shows in the codes */
    float wsc[4] = {1.0f / 64, 1.0f / 128, 1.0f / 32, 1.0f / 256}, bias[4] = {0.31f, -0.47f, 0.05f, 1.3f};
    int8_t wz4[4] = {(int8_t)c->wz, (int8_t)c->wz, (int8_t)c->wz, (int8_t)c->wz};
    if (c->per_axis) {
        pt_init_f32(m, "ws", 1, c4, wsc);
        pt_init_raw(m, "wz", PT_I8, 1, c4, wz4, 4);
    } else {
        int8_t z = (int8_t)c->wz;
        int64_t d0[1] = {1};
        scalar(m, "ws", wsc[0]);
        pt_init_raw(m, "wz", PT_I8, 0, d0, &z, 1);
    }
    pt_init_f32(m, "b", 1, c4, bias);
    bool s16 = IS16(c->elem); /* 16-bit activations (s16 or u16) */
    float sx = s16 ? 1.0f / 4096 : 1.0f / 32, sy1 = s16 ? 1.0f / 2048 : 1.0f / 16, sy3 = s16 ? 1.0f / 1024 : 1.0f / 8;
    scalar(m, "xs", sx);
    zp_init(m, "xz", c, c->zp);
    scalar(m, "ys", sy1);
    qcfg yc = *c;
    if (c->yel) /* the conv's output in another type: the pool follows it */
        yc.elem = c->yel;
    zp_init(m, "yz", &yc, c->yel ? 0 : c->zp);
    const char *conv_in[] = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b", NULL};
    pt_node(m, "QConv", "qconv", conv_in, (const char *[]){"c", NULL});
    emu_domain(m, "switchyard.quant");
    emu_attr_ints(m, "pads", 4, (const int64_t[]){1, 1, 1, 1});
    emu_attr_ints(m, "kernel_shape", 2, (const int64_t[]){3, 3});
    emu_attr_f(m, "act_min", 0.0f);
    emu_attr_s(m, "requant", mac_form);
    pt_node(m, "QMaxPool", "qpool", (const char *[]){"c", "ys", "yz", "ys", "yz", NULL}, (const char *[]){"p", NULL});
    emu_domain(m, "switchyard.quant");
    emu_attr_ints(m, "kernel_shape", 2, (const int64_t[]){2, 2});
    emu_attr_ints(m, "strides", 2, (const int64_t[]){2, 2});
    emu_attr_s(m, "requant", mac_form);
    pt_init_i64(m, "shape", 1, sh, shv);
    pt_node(m, "Reshape", "flat", (const char *[]){"p", "shape", NULL}, (const char *[]){"f", NULL});
    pt_init_raw(m, "wm", PT_I8, 2, md, wm, sizeof wm);
    scalar(m, "wms", 1.0f / 128);
    int8_t z0 = 0;
    int64_t d0[1] = {1};
    pt_init_raw(m, "wmz", PT_I8, 0, d0, &z0, 1);
    scalar(m, "ms", sy3);
    zp_init(m, "mz", c, c->zp);
    pt_node(m, "QMatMul", "qmm", (const char *[]){"f", "ys", "yz", "wm", "wms", "wmz", "ms", "mz", NULL},
            (const char *[]){"mm", NULL});
    emu_domain(m, "switchyard.quant");
    emu_attr_s(m, "requant", mac_form);
    /* QAdd's B: a constant in the activation type */
    uint8_t braw[10];
    for (int i = 0; i < 5; i++) {
        int32_t v = c->zp + ((i * 29 % 41) - 20) * (s16 ? 64 : 1);
        if (s16) {
            uint16_t h = (uint16_t)v;
            memcpy(braw + 2 * i, &h, 2);
        } else {
            braw[i] = (uint8_t)v;
        }
    }
    pt_init_raw(m, "bb", c->elem, 1, c5, braw, s16 ? 10 : 5);
    scalar(m, "bs", s16 ? 1.0f / 512 : 1.0f / 4);
    zp_init(m, "bz", c, c->zp);
    scalar(m, "os", s16 ? 1.0f / 256 : 1.0f / 2);
    zp_init(m, "oz", c, c->zp);
    pt_node(m, "QAdd", "qadd", (const char *[]){"mm", "ms", "mz", "bb", "bs", "bz", "os", "oz", NULL},
            (const char *[]){"y", NULL});
    emu_domain(m, "switchyard.quant");
    emu_attr_s(m, "requant", "onnx");
    pt_output(m, "y", c->elem, 2, yd);
    /* the intermediate codes too: every node's arithmetic is compared */
    int64_t cd[4] = {1, 4, 8, 8};
    pt_output(m, "c", c->yel ? c->yel : c->elem, 4, cd);
    pt_output(m, "mm", c->elem, 2, yd);
    return m;
}

/* runs the chain on `ini`; the bytes of y, c and mm into out (up to 1024) */
static bool run_chain(const char *ini, const qcfg *c, const char *expect_provider, uint8_t *out, size_t *n_out)
{
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini);
    pt_model *pm = qchain(c, "gemmlowp");
    sy_model *model = env ? pt_load(env, pm) : NULL;
    pt_model_free(pm);
    sy_session *s = emu_session(env, model, true);
    bool ok = false;
    if (s) {
        uint8_t x[256];
        size_t es = IS16(c->elem) ? 2 : 1;
        for (int i = 0; i < 128; i++) { /* a spread of codes around the zero point */
            int32_t v = c->zp + (((i * 71 + 5) % 200) - 100) * (es == 2 ? 150 : 1);
            if (es == 2) {
                uint16_t h = (uint16_t)v;
                memcpy(x + 2 * i, &h, 2);
            } else {
                x[i] = (uint8_t)v;
            }
        }
        int64_t xd[4] = {1, 2, 8, 8};
        sy_tensor xt = emu_tensor(c->dt, x, 4, xd);
        if (emu_ok(sy_session_set_input_by_index(s, 0, &xt, SY_INPUT_COPY), "input") &&
            emu_ok(sy_session_run(s), "run")) {
            ok = true;
            *n_out = 0;
            for (size_t k = 0; k < sy_session_output_count(s) && ok; k++) {
                const sy_tensor *y = NULL;
                ok = emu_ok(sy_session_get_output(s, k, &y), "output") && *n_out + y->nbytes <= 1024;
                if (ok) {
                    memcpy(out + *n_out, y->data, y->nbytes);
                    *n_out += y->nbytes;
                }
            }
        }
        static const char *const nodes[] = {"qconv", "qpool", "flat", "qmm", "qadd"};
        for (int i = 0; ok && expect_provider && i < 5; i++) {
            const char *p = emu_provider_of(s, nodes[i], NULL);
            PT_CHECK(!strcmp(p, expect_provider), "%s: node %s on '%s'", expect_provider, nodes[i], p);
        }
        if (expect_provider) { /* one emulated event per integer node */
            size_t ev = 0;
            for (size_t i = 0; i < sy_session_profile_event_count(s); i++) {
                sy_profile_event e = {.struct_size = sizeof e};
                if (sy_session_profile_event(s, i, &e) && e.category && !strcmp(e.category, "emulated"))
                    ev++;
            }
            PT_CHECK(ev == 5, "%s: %zu emulated events, 5 expected", expect_provider, ev);
        }
    }
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    return ok;
}

static void chain_case(const char *target, const char *opts, const qcfg *c, const char *what)
{
    uint8_t ref[1024], emu[1024];
    size_t nr = 0, ne = 0;
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    if (!run_chain("[switchyard]\nproviders = cpu_ref\n", c, NULL, ref, &nr) || !run_chain(ini, c, target, emu, &ne))
        return;
    PT_CHECK(nr == ne && nr > 0 && !memcmp(ref, emu, nr), "%s %s: output bytes differ from cpu_ref", target, what);
    /* not a constant output: the first code of y differs from the last */
    size_t es = IS16(c->elem) ? 2 : 1;
    PT_CHECK(memcmp(ref, ref + 4 * es, es), "%s %s: flat output", target, what);
    printf("%s %s: %zu output bytes equal to cpu_ref\n", target, what, nr);
}

static void test_chain_bytes(void)
{
    qcfg s8 = {PT_I8, SY_DT_INT8, -3, true, 0, 0, false}, u8 = {PT_U8, SY_DT_UINT8, 121, false, 0, 0, false},
         s16 = {PT_I16, SY_DT_INT16, 0, true, 0, 0, false};
    chain_case("htp", "", &s8, "s8 (per-channel weights)");
    chain_case("htp", "", &u8, "u8");
    chain_case("htp", "", &s16, "s16 16x8");
    qcfg u16 = {PT_U16, SY_DT_UINT16, 32768, true, 0, 0, false};
    chain_case("htp", "", &u16, "u16 16x8");
    qcfg u16t = {PT_U16, SY_DT_UINT16, 32768, false, 0, 0, false}; /* LPAI: per-tensor weights */
    chain_case("lpai", "[provider.lpai]\nhw_version = v6\n", &u16t, "u16");
    chain_case("lpai", "[provider.lpai]\nhw_version = v6\n", &u8, "u8");
    qcfg s8t = {PT_I8, SY_DT_INT8, -3, false, 0, 0, false};
    chain_case("lpai", "[provider.lpai]\nhw_version = v6\n", &s8t, "s8");
    chain_case("aic", "", &u8, "u8");
}

/* ---- 2. mnist-8 through `switchyard quantize` ------------------------------- */
static char tmpdir[256];

static bool quantize(const char *scheme, char *out, size_t len)
{
    snprintf(out, len, "%s/mnist8-%s.onnx", tmpdir, scheme);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' quantize '%s/models/onnx/mnist-8/model.onnx' --calib '%s/models/onnx/mnist-8' "
             "--scheme %s -o '%s' >/dev/null 2>&1", EMU_CLI, EMU_SHARED_DIR, EMU_SHARED_DIR, scheme, out);
    int rc = system(cmd);
    PT_CHECK(rc == 0, "quantize --scheme %s failed (%d)", scheme, rc);
    return rc == 0;
}

static size_t taken_by(const sy_session *s, const char *provider)
{
    size_t k = 0;
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && p.provider && !strcmp(p.provider, provider))
            k++;
    }
    return k;
}

static void mnist_q(const char *target, const char *opts, const char *model)
{
    static const int64_t expect[3] = {2, 0, 9};
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini);
    sy_model *m = NULL;
    if (!env || !emu_ok(sy_model_load(env, model, &m), model)) {
        sy_env_release(env);
        return;
    }
    sy_session *s = emu_session(env, m, false);
    /* the integer body: QConv x2, QMaxPool x2, Reshape, QMatMul, QAdd */
    size_t taken = s ? taken_by(s, target) : 0;
    PT_CHECK(taken == 7, "%s %s: %zu nodes on the emulator, 7 expected", target, model, taken);
    for (int k = 0; s && k < 3; k++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/models/onnx/mnist-8/test_data_set_%d/input_0.pb", EMU_SHARED_DIR, k);
        sy_tensor *in = NULL;
        const sy_tensor *y = NULL;
        if (emu_ok(sy_tensor_read_file(p, &in), p) &&
            emu_ok(sy_session_set_input_by_index(s, 0, in, SY_INPUT_COPY), "input") && emu_ok(sy_session_run(s), "run") &&
            emu_ok(sy_session_get_output(s, 0, &y), "output")) {
            int64_t am = 0;
            for (int64_t i = 1; i < 10; i++)
                if (((const float *)y->data)[i] > ((const float *)y->data)[am])
                    am = i;
            PT_CHECK(am == expect[k], "%s %s set %d: argmax %lld, expected %lld", target, model, k, (long long)am,
                     (long long)expect[k]);
        }
        sy_tensor_free(in);
    }
    printf("%s %s: %zu/%zu nodes on %s, argmax checked on 3 sets\n", target, model, taken,
           s ? sy_session_node_count(s) : 0, target);
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

static void test_mnist_quantized(void)
{
    char q8[512], u8[512], s16[512];
    if (!quantize("int8", q8, sizeof q8) || !quantize("uint8", u8, sizeof u8) || !quantize("int16x8", s16, sizeof s16))
        return;
    mnist_q("htp", "", q8);
    mnist_q("htp", "", u8);
    mnist_q("htp", "", s16);
    mnist_q("lpai", "[provider.lpai]\nhw_version = v6\n", q8);
    mnist_q("lpai", "[provider.lpai]\nhw_version = v6\n", u8);
    mnist_q("aic", "", u8);
}

/* ---- 3. rejections ------------------------------------------------------------ */
static void expect_rule(const char *target, const char *opts, const qcfg *c, const char *node, const char *rule)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini);
    pt_model *pm = qchain(c, "gemmlowp");
    sy_model *model = env ? pt_load(env, pm) : NULL;
    pt_model_free(pm);
    sy_session *s = emu_session(env, model, false);
    sy_node_placement p = {.struct_size = sizeof p};
    if (s && *emu_provider_of(s, node, &p)) {
        PT_CHECK(!strcmp(p.provider, "cpu_ref"), "%s %s: on '%s', expected cpu_ref (%s)", target, node, p.provider, rule);
        PT_HAS(p.reason_text ? p.reason_text : "", rule);
    } else {
        PT_CHECK(false, "%s: node %s not found", target, node);
    }
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
}

static void test_rules(void)
{
    qcfg s16 = {PT_I16, SY_DT_INT16, 0, true, 0, 0, false}, s8 = {PT_I8, SY_DT_INT8, -3, true, 0, 0, false},
         axis_asym = {PT_I8, SY_DT_INT8, -3, true, 5, 0, false},
         mixed = {PT_I8, SY_DT_INT8, -3, false, 0, PT_I16, false};
    const char *v6 = "[provider.lpai]\nhw_version = v6\n";
    expect_rule("htp", "", &axis_asym, "qconv", "HTP-QAXIS"); /* per-axis weights must be symmetric */
    expect_rule("htp", "", &mixed, "qconv", "HTP-QCONFIG");   /* s8 -> s16: not one configuration */
    expect_rule("lpai", v6, &s16, "qconv", "LPAI-DTYPE");     /* s16 activations */
    expect_rule("lpai", v6, &s8, "qconv", "LPAI-QAXIS");      /* per-axis encodings */
    expect_rule("aic", "", &s8, "qconv", "AIC-QCONFIG");      /* int8 activations: AIC is uint8 */
    expect_rule("aic", "", &s16, "qmm", "AIC-QCONFIG");
    qcfg dyn = {PT_U8, SY_DT_UINT8, 121, false, 0, 0, true}; /* weights fed at run time */
    expect_rule("htp", "", &dyn, "qconv", "HTP-QSTATIC");
    expect_rule("lpai", v6, &dyn, "qconv", "LPAI-QSTATIC");
    expect_rule("aic", "", &dyn, "qconv", "AIC-QSTATIC");
}

/* ---- integer Transpose: codes moved unchanged ---------------------------------- */
/* x [2, 3, 4] (or [1, 2, 3, 4, 1] for the rank rule) of `elem` codes,
 * Transpose perm [2, 0, 1] -> y [4, 2, 3]: y[c][a][b] = x[a][b][c], indices
 * worked out here, bytes compared. `rule` NULL: taken by `target`; else
 * declined naming it. */
static void transpose_case(const char *target, const char *opts, int elem, bool rank5, const char *rule)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini);
    pt_model *pm = pt_model_new("qtranspose");
    int64_t xd5[5] = {1, 2, 3, 4, 1}, xd[3] = {2, 3, 4}, yd[3] = {4, 2, 3}, yd5[5] = {1, 4, 2, 3, 1};
    int64_t perm3[3] = {2, 0, 1}, perm5[5] = {0, 3, 1, 2, 4};
    pt_input(pm, "x", elem, rank5 ? 5 : 3, rank5 ? xd5 : xd);
    pt_node(pm, "Transpose", "tr", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    emu_attr_ints(pm, "perm", rank5 ? 5 : 3, rank5 ? perm5 : perm3);
    pt_output(pm, "y", elem, rank5 ? 5 : 3, rank5 ? yd5 : yd);
    sy_model *m = env ? pt_load(env, pm) : NULL;
    pt_model_free(pm);
    sy_session *s = emu_session(env, m, false);
    sy_node_placement p = {.struct_size = sizeof p};
    const char *on = s ? emu_provider_of(s, "tr", &p) : "";
    bool wide = IS16(elem);
    sy_dtype dt = elem == PT_U8 ? SY_DT_UINT8 : elem == PT_I8 ? SY_DT_INT8 : elem == PT_U16 ? SY_DT_UINT16 : SY_DT_INT16;
    if (rule) {
        PT_CHECK(!strcmp(on, "cpu_ref"), "%s Transpose of %s: on '%s', expected cpu_ref (%s)", target, sy_dtype_name(dt), on,
                 rule);
        PT_HAS(p.reason_text ? p.reason_text : "", rule);
    } else if (s) {
        PT_CHECK(!strcmp(on, target), "%s Transpose of %s: on '%s' (%s)", target, sy_dtype_name(dt), on,
                 p.reason_text ? p.reason_text : "");
        uint16_t x[24];
        uint8_t xb[48];
        for (int i = 0; i < 24; i++) {
            x[i] = (uint16_t)(wide ? (i * 4099 + 7) & 0xffff : (i * 37 + 11) & 0xff);
            if (wide)
                memcpy(xb + 2 * i, &x[i], 2);
            else
                xb[i] = (uint8_t)x[i];
        }
        sy_tensor xt = emu_tensor(dt, xb, rank5 ? 5 : 3, rank5 ? xd5 : xd);
        const sy_tensor *y = NULL;
        if (emu_ok(sy_session_set_input_by_index(s, 0, &xt, SY_INPUT_COPY), "input") && emu_ok(sy_session_run(s), "run") &&
            emu_ok(sy_session_get_output(s, 0, &y), "output")) {
            int bad = 0;
            for (int c = 0; c < 4; c++)
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 3; b++) {
                        int yi = (c * 2 + a) * 3 + b, xi = (a * 3 + b) * 4 + c;
                        uint16_t got = wide ? ((const uint16_t *)y->data)[yi] : ((const uint8_t *)y->data)[yi];
                        bad += got != x[xi];
                    }
            PT_CHECK(bad == 0, "%s Transpose of %s: %d of 24 codes moved wrongly", target, sy_dtype_name(dt), bad);
        }
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

static void test_transpose(void)
{
    const char *v6 = "[provider.lpai]\nhw_version = v6\n";
    transpose_case("htp", "", PT_I8, false, NULL);
    transpose_case("htp", "", PT_U16, false, NULL);
    transpose_case("lpai", v6, PT_U8, false, NULL);
    transpose_case("lpai", v6, PT_U16, false, NULL);
    transpose_case("aic", "", PT_U8, false, NULL);
    transpose_case("aic", "", PT_I8, false, "AIC-QCONFIG"); /* the AIC int8 path is uint8 */
    transpose_case("lpai", v6, PT_U8, true, "LPAI-RANK");   /* rank 5 */
}

/* ---- QConcat: copies and fp32 rescaling ---------------------------------------- */
/* y = QConcat(axis 1) of x0 [1, 2, 3] (the output's encoding: s 0.1, z 3) and
 * x1 [1, 1, 3] (s 0.05, z -1): x0's codes are copied; x1's are requantized
 * as QuantizeLinear does, round(x / s_y) + z_y with x / s_y = (q - z1) * 0.5
 * (0.05f / 0.1f is 0.5 exactly), so the values land on halves and show the
 * rounding rule, half to even, and that the zero point is added after it:
 * q1 = {0, 2, 4} -> 0.5, 1.5, 2.5 -> 0, 2, 2 -> 3, 5, 5 (half away from
 * zero: 4, 5, 6; rounding after adding z_y = 3: 4, 4, 6).
 * (Inputs of different types are refused by the schema, before placement.) */
static pt_model *qconcat_model(int el)
{
    pt_model *m = pt_model_new("qconcat");
    emu_opset(m, "switchyard.quant", 1);
    int64_t d0[3] = {1, 2, 3}, d1[3] = {1, 1, 3}, dy[3] = {1, 3, 3}, one[1] = {1};
    pt_input(m, "x0", el, 3, d0);
    pt_input(m, "x1", el, 3, d1);
    scalar(m, "ys", 0.1f);
    scalar(m, "s1", 0.05f);
    if (el == PT_U8) {
        uint8_t zy = 3, z1 = 1;
        pt_init_raw(m, "yz", PT_U8, 0, one, &zy, 1);
        pt_init_raw(m, "z1", PT_U8, 0, one, &z1, 1);
    } else {
        int8_t zy = 3, z1 = -1;
        pt_init_raw(m, "yz", PT_I8, 0, one, &zy, 1);
        pt_init_raw(m, "z1", PT_I8, 0, one, &z1, 1);
    }
    pt_node(m, "QConcat", "qcat", (const char *[]){"ys", "yz", "x0", "ys", "yz", "x1", "s1", "z1", NULL},
            (const char *[]){"y", NULL});
    emu_domain(m, "switchyard.quant");
    emu_attr_i(m, "axis", 1);
    pt_output(m, "y", el, 3, dy);
    return m;
}

static void qconcat_case(const char *target, const char *opts, int el, const char *rule)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini), *ref = emu_env(Q_PLUGINS, "[switchyard]\nproviders = cpu_ref\n");
    pt_model *pm = qconcat_model(el);
    sy_model *m = env ? pt_load(env, pm) : NULL, *mr = ref ? pt_load(ref, pm) : NULL;
    pt_model_free(pm);
    sy_session *s = emu_session(env, m, false), *sr = emu_session(ref, mr, false);
    sy_node_placement p = {.struct_size = sizeof p};
    const char *on = s ? emu_provider_of(s, "qcat", &p) : "";
    sy_dtype dt = el == PT_U8 ? SY_DT_UINT8 : SY_DT_INT8;
    if (rule) {
        PT_CHECK(!strcmp(on, "cpu_ref"), "%s QConcat: on '%s', expected cpu_ref (%s)", target, on, rule);
        PT_HAS(p.reason_text ? p.reason_text : "", rule);
    } else if (s && sr) {
        PT_CHECK(!strcmp(on, target), "%s QConcat: on '%s' (%s)", target, on, p.reason_text ? p.reason_text : "");
        /* int8: x0 copied, x1 {0, 2, 4} with z1 = -1; uint8: the same values
         * shifted by +128 in x0 and z1 = 1, q1 = {2, 4, 6} (centered 1, 3, 5) */
        int8_t x0s[6] = {-128, 0, 127, 5, -7, 100}, x1s[3] = {0, 2, 4};
        int8_t ys[9] = {-128, 0, 127, 5, -7, 100, 3, 5, 5};
        uint8_t x0u[6] = {0, 128, 255, 133, 121, 228}, x1u[3] = {2, 4, 6};
        uint8_t yu[9] = {0, 128, 255, 133, 121, 228, 3, 5, 5};
        int64_t d0[3] = {1, 2, 3}, d1[3] = {1, 1, 3};
        sy_tensor t0 = emu_tensor(dt, el == PT_U8 ? (void *)x0u : (void *)x0s, 3, d0);
        sy_tensor t1 = emu_tensor(dt, el == PT_U8 ? (void *)x1u : (void *)x1s, 3, d1);
        const sy_tensor *y = NULL, *yr = NULL;
        if (emu_ok(sy_session_set_input_by_index(s, 0, &t0, SY_INPUT_COPY), "x0") &&
            emu_ok(sy_session_set_input_by_index(s, 1, &t1, SY_INPUT_COPY), "x1") && emu_ok(sy_session_run(s), "run") &&
            emu_ok(sy_session_get_output(s, 0, &y), "y") &&
            emu_ok(sy_session_set_input_by_index(sr, 0, &t0, SY_INPUT_COPY), "x0") &&
            emu_ok(sy_session_set_input_by_index(sr, 1, &t1, SY_INPUT_COPY), "x1") && emu_ok(sy_session_run(sr), "run") &&
            emu_ok(sy_session_get_output(sr, 0, &yr), "y")) {
            PT_CHECK(!memcmp(y->data, el == PT_U8 ? (const void *)yu : (const void *)ys, 9),
                     "%s QConcat %s: codes differ from the hand-worked ones", target, sy_dtype_name(dt));
            /* cpu_ref's default (onnx) form is the same QuantizeLinear: same bytes */
            PT_CHECK(!memcmp(y->data, yr->data, 9), "%s QConcat %s: differs from cpu_ref", target, sy_dtype_name(dt));
        }
    }
    sy_session_release(s);
    sy_session_release(sr);
    sy_model_release(m);
    sy_model_release(mr);
    sy_env_release(env);
    sy_env_release(ref);
}

static void test_qconcat(void)
{
    const char *v6 = "[provider.lpai]\nhw_version = v6\n";
    qconcat_case("htp", "", PT_I8, NULL);
    qconcat_case("htp", "", PT_U8, NULL);
    qconcat_case("lpai", v6, PT_I8, NULL);
    qconcat_case("lpai", v6, PT_U8, NULL);
    qconcat_case("aic", "", PT_U8, NULL);
    qconcat_case("aic", "", PT_I8, "AIC-QCONFIG"); /* int8 activations: the AIC int8 path is uint8 */
}

/* ---- integer Slice: codes selected unchanged ----------------------------------- */
/* x [2, 3, 4] codes x[i] = (37 i + 11) mod 256; Slice starts {1, -1},
 * ends {3, -100}, axes {1, 2}, steps {1, -2} -> y [2, 2, 2]:
 * axis 1 takes rows 1, 2; axis 2 starts at -1 = 3 and steps -2 down to the
 * clamped end (-100 -> -1): columns 3, 1. So y[a][b][c] = x[a][1 + b][3 - 2c],
 * indices worked out here from the ONNX definition. */
static void slice_case(const char *target, const char *opts, int elem, const char *rule)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini);
    pt_model *pm = pt_model_new("qslice");
    int64_t xd[3] = {2, 3, 4}, yd[3] = {2, 2, 2}, two[1] = {2};
    int64_t starts[2] = {1, -1}, ends[2] = {3, -100}, axes[2] = {1, 2}, steps[2] = {1, -2};
    pt_input(pm, "x", elem, 3, xd);
    pt_init_raw(pm, "starts", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, two, starts, sizeof starts);
    pt_init_raw(pm, "ends", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, two, ends, sizeof ends);
    pt_init_raw(pm, "axes", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, two, axes, sizeof axes);
    pt_init_raw(pm, "steps", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, two, steps, sizeof steps);
    pt_node(pm, "Slice", "sl", (const char *[]){"x", "starts", "ends", "axes", "steps", NULL}, (const char *[]){"y", NULL});
    pt_output(pm, "y", elem, 3, yd);
    sy_model *m = env ? pt_load(env, pm) : NULL;
    pt_model_free(pm);
    sy_session *s = emu_session(env, m, false);
    sy_node_placement p = {.struct_size = sizeof p};
    const char *on = s ? emu_provider_of(s, "sl", &p) : "";
    sy_dtype dt = elem == PT_U8 ? SY_DT_UINT8 : SY_DT_INT8;
    if (rule) {
        PT_CHECK(!strcmp(on, "cpu_ref"), "%s Slice of %s: on '%s', expected cpu_ref (%s)", target, sy_dtype_name(dt), on,
                 rule);
        PT_HAS(p.reason_text ? p.reason_text : "", rule);
    } else if (s) {
        PT_CHECK(!strcmp(on, target), "%s Slice of %s: on '%s' (%s)", target, sy_dtype_name(dt), on,
                 p.reason_text ? p.reason_text : "");
        uint8_t x[24];
        for (int i = 0; i < 24; i++)
            x[i] = (uint8_t)((i * 37 + 11) & 0xff);
        sy_tensor xt = emu_tensor(dt, x, 3, xd);
        const sy_tensor *y = NULL;
        if (emu_ok(sy_session_set_input_by_index(s, 0, &xt, SY_INPUT_COPY), "input") && emu_ok(sy_session_run(s), "run") &&
            emu_ok(sy_session_get_output(s, 0, &y), "output")) {
            int bad = 0;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    for (int c = 0; c < 2; c++)
                        bad += ((const uint8_t *)y->data)[(a * 2 + b) * 2 + c] != x[(a * 3 + 1 + b) * 4 + 3 - 2 * c];
            PT_CHECK(bad == 0, "%s Slice of %s: %d of 8 codes wrong", target, sy_dtype_name(dt), bad);
        }
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

static void test_slice(void)
{
    const char *v6 = "[provider.lpai]\nhw_version = v6\n";
    slice_case("htp", "", PT_I8, NULL);
    slice_case("lpai", v6, PT_U8, NULL);
    slice_case("aic", "", PT_U8, NULL);
    slice_case("aic", "", PT_I8, "AIC-QCONFIG"); /* the AIC int8 path is uint8 */
}

/* ---- QSub / QMul: the element-wise rule in fp32 -------------------------------- */
/* a, b [1, 4] int8 activations; s_a 0.5, z_a 1; s_b 0.25, z_b -2; s_y 0.5,
 * z_y 3. a = {10, -5, 1, 127}, b = {0, 1, -2, -128}: centered da = {9, -6,
 * 0, 126}, db = {2, 3, 0, -126}.
 * QuantizeLinear rounds before it adds z_y:
 * QSub: da - 0.5 db = 8, -7.5, 0, 189 -> 8, -8 (half to even), 0, 189; + 3 -> 11, -5, 3, 127 (clamped).
 * QMul: 0.25 da db = 4.5, -4.5, 0, -3969 -> 4, -4 (half to even), 0; + 3 -> 7, -1, 3, -128 (clamped). */
static void qbin_case(const char *target, const char *opts, const char *op, const int8_t *expect)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini), *ref = emu_env(Q_PLUGINS, "[switchyard]\nproviders = cpu_ref\n");
    pt_model *pm = pt_model_new("qbin");
    emu_opset(pm, "switchyard.quant", 1);
    int64_t d[2] = {1, 4}, one[1] = {1};
    pt_input(pm, "a", PT_I8, 2, d);
    pt_input(pm, "b", PT_I8, 2, d);
    scalar(pm, "as", 0.5f);
    scalar(pm, "bs", 0.25f);
    scalar(pm, "ys", 0.5f);
    int8_t za = 1, zb = -2, zy = 3;
    pt_init_raw(pm, "az", PT_I8, 0, one, &za, 1);
    pt_init_raw(pm, "bz", PT_I8, 0, one, &zb, 1);
    pt_init_raw(pm, "yz", PT_I8, 0, one, &zy, 1);
    pt_node(pm, op, "qb", (const char *[]){"a", "as", "az", "b", "bs", "bz", "ys", "yz", NULL}, (const char *[]){"y", NULL});
    emu_domain(pm, "switchyard.quant");
    pt_output(pm, "y", PT_I8, 2, d);
    sy_model *m = env ? pt_load(env, pm) : NULL, *mr = ref ? pt_load(ref, pm) : NULL;
    pt_model_free(pm);
    sy_session *s = emu_session(env, m, false), *sr = emu_session(ref, mr, false);
    sy_node_placement p = {.struct_size = sizeof p};
    const char *on = s ? emu_provider_of(s, "qb", &p) : "";
    PT_CHECK(!strcmp(on, target), "%s %s: on '%s' (%s)", target, op, on, p.reason_text ? p.reason_text : "");
    int8_t a[4] = {10, -5, 1, 127}, b[4] = {0, 1, -2, -128};
    sy_tensor ta = emu_tensor(SY_DT_INT8, a, 2, d), tb = emu_tensor(SY_DT_INT8, b, 2, d);
    const sy_tensor *y = NULL, *yr = NULL;
    if (s && sr && emu_ok(sy_session_set_input_by_index(s, 0, &ta, SY_INPUT_COPY), "a") &&
        emu_ok(sy_session_set_input_by_index(s, 1, &tb, SY_INPUT_COPY), "b") && emu_ok(sy_session_run(s), "run") &&
        emu_ok(sy_session_get_output(s, 0, &y), "y") && emu_ok(sy_session_set_input_by_index(sr, 0, &ta, SY_INPUT_COPY), "a") &&
        emu_ok(sy_session_set_input_by_index(sr, 1, &tb, SY_INPUT_COPY), "b") && emu_ok(sy_session_run(sr), "run") &&
        emu_ok(sy_session_get_output(sr, 0, &yr), "y")) {
        const int8_t *g = y->data;
        PT_CHECK(!memcmp(g, expect, 4), "%s %s: %d %d %d %d, expected %d %d %d %d", target, op, g[0], g[1], g[2], g[3],
                 expect[0], expect[1], expect[2], expect[3]);
        /* cpu_ref's default (onnx) element-wise form is the same fp32 arithmetic */
        PT_CHECK(!memcmp(g, yr->data, 4), "%s %s: differs from cpu_ref", target, op);
    }
    sy_session_release(s);
    sy_session_release(sr);
    sy_model_release(m);
    sy_model_release(mr);
    sy_env_release(env);
    sy_env_release(ref);
}

static void test_qsub_qmul(void)
{
    static const int8_t sub[4] = {11, -5, 3, 127}, mul[4] = {7, -1, 3, -128};
    const char *v6 = "[provider.lpai]\nhw_version = v6\n";
    qbin_case("htp", "", "QSub", sub);
    qbin_case("htp", "", "QMul", mul);
    qbin_case("lpai", v6, "QSub", sub);
    qbin_case("lpai", v6, "QMul", mul);
}

/* the float boundary: Quantize/DequantizeLinear stay on the host, naming the rule */
static void qio_rule(const char *target, const char *opts, const char *model, const char *rule)
{
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nproviders = %s, cpu_ref\n%s", target, opts);
    sy_env *env = emu_env(Q_PLUGINS, "%s", ini);
    sy_model *m = NULL;
    if (env && emu_ok(sy_model_load(env, model, &m), model)) {
        sy_session *s = emu_session(env, m, false);
        size_t seen = 0;
        for (size_t i = 0; s && i < sy_session_node_count(s); i++) {
            sy_node_placement p = {.struct_size = sizeof p};
            if (!sy_session_node_placement(s, i, &p) || p.folded ||
                (strcmp(p.op, "QuantizeLinear") && strcmp(p.op, "DequantizeLinear")))
                continue;
            seen++;
            PT_CHECK(!strcmp(p.provider, "cpu_ref"), "%s: %s on '%s'", target, p.op, p.provider);
            PT_HAS(p.reason_text ? p.reason_text : "", rule);
        }
        PT_CHECK(seen == 2, "%s: %zu boundary nodes, 2 expected", target, seen);
        sy_session_release(s);
    }
    sy_model_release(m);
    sy_env_release(env);
}

/* ---- 4. compile cache of quantized partitions --------------------------------- */
static bool read_all(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc(n > 0 ? (size_t)n : 1);
    *len = *buf ? fread(*buf, 1, (size_t)(n > 0 ? n : 0), f) : 0;
    fclose(f);
    return *buf && (long)*len == n;
}

static void cache_round_trip(const char *target, const char *opts, const char *model)
{
    char ini[512], cache[512], cmd[4096];
    snprintf(ini, sizeof ini, "%s/%s.ini", tmpdir, target);
    snprintf(cache, sizeof cache, "%s/%s.cache", tmpdir, target);
    FILE *f = fopen(ini, "w");
    if (!f) {
        PT_CHECK(false, "cannot write %s", ini);
        return;
    }
    fprintf(f, "[switchyard]\nplugin_dirs = %s\nproviders = %s, cpu_ref\n%s", EMU_PLUGIN_DIR, target, opts);
    fclose(f);
    int rc = 0;
    const char *in = EMU_SHARED_DIR "/models/onnx/mnist-8/test_data_set_0";
    snprintf(cmd, sizeof cmd,
             "'%s' compile '%s' --config '%s' -o '%s' > '%s/%s.compile.txt' 2>&1 && "
             "'%s' run '%s' --config '%s' --input-dir '%s' --output-dir '%s/%s-plain' >/dev/null 2>&1 && "
             "'%s' run '%s' --config '%s' --input-dir '%s' --output-dir '%s/%s-cached' --compiled '%s' >/dev/null 2>&1",
             EMU_CLI, model, ini, cache, tmpdir, target, EMU_CLI, model, ini, in, tmpdir, target, EMU_CLI, model, ini,
             in, tmpdir, target, cache);
    rc = system(cmd);
    PT_CHECK(rc == 0, "%s: compile / run / run --compiled failed (%d)", target, rc);
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/%s-plain/output_0.pb", tmpdir, target);
    snprintf(pb, sizeof pb, "%s/%s-cached/output_0.pb", tmpdir, target);
    uint8_t *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    if (rc == 0 && read_all(pa, &a, &la) && read_all(pb, &b, &lb))
        PT_CHECK(la == lb && la > 0 && !memcmp(a, b, la), "%s: the cached run's output differs", target);
    else if (rc == 0)
        PT_CHECK(false, "%s: outputs missing", target);
    /* the cache holds a partition of integer nodes */
    struct stat sb;
    PT_CHECK(stat(cache, &sb) == 0 && sb.st_size > 0, "%s: no cache written", target);
    free(a);
    free(b);
}

static void test_cache(void)
{
    char q8[512], u8[512];
    snprintf(q8, sizeof q8, "%s/mnist8-int8.onnx", tmpdir);
    snprintf(u8, sizeof u8, "%s/mnist8-uint8.onnx", tmpdir);
    cache_round_trip("htp", "", q8);
    cache_round_trip("lpai", "[provider.lpai]\nhw_version = v6\n", q8);
    cache_round_trip("aic", "", u8);
    qio_rule("htp", "", q8, "HTP-QIO");
    qio_rule("lpai", "[provider.lpai]\nhw_version = v6\n", q8, "LPAI-QIO");
    qio_rule("aic", "", u8, "AIC-QIO");
}

int main(void)
{
    PT_RUN(test_chain_bytes);
    PT_RUN(test_rules);
    PT_RUN(test_transpose);
    PT_RUN(test_qconcat);
    PT_RUN(test_slice);
    PT_RUN(test_qsub_qmul);
    struct stat sb;
    char p[1024];
    snprintf(p, sizeof p, "%s/models/onnx/mnist-8/model.onnx", EMU_SHARED_DIR);
    if (stat(p, &sb) != 0) {
        printf("SKIP: shared models absent (%s): the mnist-8 and cache cases did not run\n", p);
        return pt_failures ? pt_result() : 77;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sy_emu_quant_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("FAIL: mkdtemp\n");
        return 1;
    }
    PT_RUN(test_mnist_quantized);
    PT_RUN(test_cache);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", tmpdir);
    return pt_result();
}
