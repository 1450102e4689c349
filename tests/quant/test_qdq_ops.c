/*
 * The folded integer kernels of ops_quant's qelem.c on cpu_ref, one QDQ
 * model per op (DequantizeLinear -> float op -> QuantizeLinear, built here
 * in memory and folded by framework/src/pass_qdq.c):
 *
 *   fold   the plan holds the switchyard.quant kernel (or, for Reshape &
 *          co., the op itself on the codes) on cpu_ref, and neither the
 *          float op nor a Q/DQ node
 *   ref    output codes against a reference written plainly from the ONNX
 *          QDQ semantics: dequantize, the float op in double, quantize with
 *          round half to even and saturation. Scales are dyadic with
 *          dyadic ratios (3/64 over 1/16 = 0.75 ...), so the kernels'
 *          float forms (sa/sy*(a-za) + ..., sum/count*sx/sy, copies) are
 *          exact there and must match bit for bit, ties included.
 *          Sigmoid, Tanh and Softmax (float tables / expf) are allowed 1
 *          LSB; the count of such codes is printed and bounded.
 *   hand   one tie case per op that honours requant=gemmlowp (QAdd, QSub,
 *          QMul, QConcat, QAveragePool), worked by hand in both forms
 *   bad    bad quantization parameters refused, naming the tensor
 *   convt  DQ -> ConvTranspose -> Q as one QConvTranspose (1-D, uint8,
 *          groups on cpu_ref; riscv_mcu's 2-D int8) against ONNX's definition
 *          written out; W per channel on axis 0 stays float; a group = 2 one
 *          declined by riscv_mcu quoting Table B #113
 */
#include "emu_test.h"

#define PT_U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define QPLUGINS "cpu_ref ops_quant ops_tensor ops_math ops_activation ops_nn"
#define MAXN 512

/* ---- model building --------------------------------------------------------- */

static const int64_t no_dims[1] = {1};

static void init_code(pt_model *m, const char *name, bool u8, int32_t v)
{
    uint8_t b = (uint8_t)v;
    pt_init_raw(m, name, u8 ? PT_U8 : PT_I8, 0, no_dims, &b, 1);
}
static void init_f(pt_model *m, const char *name, float v) { pt_init_f32(m, name, 0, no_dims, &v); }

/* graph input NAME"q" (codes), its scale/zero point NAME"_s"/NAME"_z" and
 * DequantizeLinear -> float value NAME */
static void q_input(pt_model *m, const char *name, bool u8, int32_t rank, const int64_t *dims, float s, int32_t z)
{
    char q[64], sn[64], zn[64];
    snprintf(q, sizeof q, "%sq", name);
    snprintf(sn, sizeof sn, "%s_s", name);
    snprintf(zn, sizeof zn, "%s_z", name);
    pt_input(m, q, u8 ? PT_U8 : PT_I8, rank, dims);
    init_f(m, sn, s);
    init_code(m, zn, u8, z);
    char dn[64];
    snprintf(dn, sizeof dn, "dq_%s", name);
    pt_node(m, "DequantizeLinear", dn, (const char *[]){q, sn, zn, NULL}, (const char *[]){name, NULL});
}

/* QuantizeLinear(from, y_s, y_z) -> graph output "yq" */
static void q_output(pt_model *m, const char *from, bool u8, int32_t rank, const int64_t *dims, float s, int32_t z)
{
    init_f(m, "y_s", s);
    init_code(m, "y_z", u8, z);
    pt_node(m, "QuantizeLinear", "q_y", (const char *[]){from, "y_s", "y_z", NULL}, (const char *[]){"yq", NULL});
    pt_output(m, "yq", u8 ? PT_U8 : PT_I8, rank, dims);
}

/* ---- running ------------------------------------------------------------------ */

typedef struct qin {
    const char *name; /* graph input */
    bool u8;
    int32_t rank;
    int64_t dims[4];
    const int32_t *codes;
} qin;

typedef struct qrun {
    sy_env *env;
    sy_model *model;
    sy_session *s;
    int32_t y[MAXN];
    int64_t ny;
    char err[2048];
} qrun;

static void qrun_close(qrun *r)
{
    sy_session_release(r->s);
    sy_model_release(r->model);
    sy_env_release(r->env);
    memset(r, 0, sizeof *r);
}

/* Loads, plans and runs m with the session option requant = form. On
 * failure r->s is NULL and r->err holds the message. */
/* the deployment qrun_model uses: cpu_ref alone, or riscv_mcu first */
static const char *g_plugins = QPLUGINS, *g_ini = "";

static bool qrun_model(qrun *r, pt_model *m, const char *form, int n_in, const qin *ins)
{
    memset(r, 0, sizeof *r);
    sy_status *st = emu_env_st(&r->env, g_plugins, "%s", g_ini);
    uint8_t *buf = NULL;
    size_t len = 0;
    pt_model_pack(m, &buf, &len);
    if (!st)
        st = sy_model_load_buffer(r->env, buf, len, m->graph.name, NULL, &r->model);
    free(buf);
    if (!st) {
        sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1, .requant = form};
        st = sy_session_create(r->env, r->model, &o, &r->s);
    }
    for (int i = 0; !st && i < n_in; i++) {
        uint8_t b[MAXN];
        sy_tensor t = emu_tensor(ins[i].u8 ? SY_DT_UINT8 : SY_DT_INT8, b, ins[i].rank, ins[i].dims);
        for (int64_t k = 0; k < sy_tensor_numel(&t); k++)
            b[k] = (uint8_t)ins[i].codes[k];
        st = sy_session_set_input(r->s, ins[i].name, &t, SY_INPUT_COPY);
    }
    if (!st)
        st = sy_session_run(r->s);
    const sy_tensor *ty = NULL;
    if (!st)
        st = sy_session_get_output_by_name(r->s, "yq", &ty);
    if (st) {
        snprintf(r->err, sizeof r->err, "%.2000s", pt_msg(st)); /* err holds 2048 */
        sy_session_release(r->s);
        r->s = NULL;
        return false;
    }
    r->ny = sy_tensor_numel(ty);
    for (int64_t i = 0; i < r->ny && i < MAXN; i++)
        r->y[i] = ty->dtype == SY_DT_UINT8 ? ((const uint8_t *)ty->data)[i] : ((const int8_t *)ty->data)[i];
    return true;
}

/* The plan holds exactly one `qop` (domain `dom`) on cpu_ref, and none of
 * the float ops listed nor any Q/DQ. */
static void check_fold(const qrun *r, const char *what, const char *qop, const char *dom, const char *const *gone)
{
    int n_q = 0, n_gone = 0, n_qdq = 0;
    for (size_t i = 0; r->s && i < sy_session_node_count(r->s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (!sy_session_node_placement(r->s, i, &p) || p.folded)
            continue;
        if (!strcmp(p.op, qop) && !strcmp(p.domain ? p.domain : "", dom)) {
            n_q++;
            PT_CHECK(p.provider && !strcmp(p.provider, "cpu_ref"), "%s: %s on %s", what, qop,
                     p.provider ? p.provider : "(none)");
        }
        for (int g = 0; gone && gone[g]; g++)
            n_gone += !strcmp(p.op, gone[g]) && !(p.domain && p.domain[0]);
        n_qdq += !strcmp(p.op, "DequantizeLinear") || !strcmp(p.op, "QuantizeLinear");
    }
    PT_CHECK(r->s && n_q == 1 && n_gone == 0 && n_qdq == 0, "%s: plan has %d %s, %d float op(s), %d Q/DQ", what, n_q,
             qop, n_gone, n_qdq);
}

/* ---- the reference --------------------------------------------------------------- */

static double deq(int32_t q, float s, int32_t z) { return (double)(q - z) * (double)s; }
static int32_t quant(double v, float s, int32_t z, bool u8)
{
    double q = nearbyint(v / (double)s) + z; /* default rounding mode: half to even */
    int32_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    return q < lo ? lo : (q > hi ? hi : (int32_t)q);
}

/* got vs want: |diff| <= tol for all; returns the count of non-exact codes */
static int compare(const char *what, const int32_t *got, const int32_t *want, int64_t n, int tol)
{
    int inexact = 0, worst = 0;
    for (int64_t i = 0; i < n; i++) {
        int d = abs(got[i] - want[i]);
        inexact += d != 0;
        worst = d > worst ? d : worst;
        PT_CHECK(d <= tol, "%s: y[%lld] = %d, reference %d", what, (long long)i, got[i], want[i]);
    }
    printf("  %-34s %4lld codes, %d not exact, max |diff| %d\n", what, (long long)n, inexact, worst);
    return inexact;
}

static uint32_t lcg = 2024u;
static int32_t rnd(int32_t lo, int32_t hi)
{
    lcg = lcg * 1664525u + 1013904223u;
    return lo + (int32_t)((lcg >> 8) % (uint32_t)(hi - lo + 1));
}
static void fill(int32_t *v, int n, bool u8)
{
    for (int i = 0; i < n; i++)
        v[i] = u8 ? rnd(0, 255) : rnd(-128, 127);
}


/* ---- Add / Sub / Mul (+ Relu / Clip folded into the requantization) ------------ */

enum { ACT_NONE, ACT_RELU, ACT_RELU6 };

typedef struct bcase {
    const char *op; /* Add, Sub, Mul */
    bool u8;
    float sa, sb, sy;
    int32_t za, zb, zy;
    int act;
} bcase;

/* a [2,3,4] op b [3,4] (broadcast) */
static pt_model *bin_model(const bcase *c)
{
    int64_t da[3] = {2, 3, 4}, db[2] = {3, 4};
    pt_model *m = pt_model_new(c->op);
    q_input(m, "a", c->u8, 3, da, c->sa, c->za);
    q_input(m, "b", c->u8, 2, db, c->sb, c->zb);
    pt_node(m, c->op, "op", (const char *[]){"a", "b", NULL}, (const char *[]){"f", NULL});
    const char *out = "f";
    if (c->act == ACT_RELU) {
        pt_node(m, "Relu", "act", (const char *[]){"f", NULL}, (const char *[]){"g", NULL});
        out = "g";
    } else if (c->act == ACT_RELU6) {
        init_f(m, "lo", 0.0f);
        init_f(m, "hi", 6.0f);
        pt_node(m, "Clip", "act", (const char *[]){"f", "lo", "hi", NULL}, (const char *[]){"g", NULL});
        out = "g";
    }
    q_output(m, out, c->u8, 3, da, c->sy, c->zy);
    return m;
}

static double bin_ref(const bcase *c, int32_t a, int32_t b)
{
    double x = deq(a, c->sa, c->za), y = deq(b, c->sb, c->zb);
    double v = !strcmp(c->op, "Add") ? x + y : !strcmp(c->op, "Sub") ? x - y : x * y;
    if (c->act != ACT_NONE && v < 0)
        v = 0;
    if (c->act == ACT_RELU6 && v > 6)
        v = 6;
    return v;
}

static void run_bin_case(const bcase *c, const char *form, const int32_t *a, const int32_t *b, const int32_t *want,
                         const char *what)
{
    pt_model *m = bin_model(c);
    qin ins[2] = {{"aq", c->u8, 3, {2, 3, 4}, a}, {"bq", c->u8, 2, {3, 4}, b}};
    qrun r;
    bool ok = qrun_model(&r, m, form, 2, ins);
    PT_CHECK(ok, "%s: %s", what, r.err);
    if (ok) {
        char qop[8];
        snprintf(qop, sizeof qop, "Q%s", c->op);
        const char *gone[] = {c->op, "Relu", "Clip", NULL};
        check_fold(&r, what, qop, "switchyard.quant", gone);
        PT_CHECK(r.ny == 24, "%s: %lld outputs", what, (long long)r.ny);
        compare(what, r.y, want, 24, 0);
    }
    qrun_close(&r);
    pt_model_free(m);
}

static void test_binary_ref(void)
{
    /* sa/sy = 0.75, sb/sy = 0.5, sa*sb/sy = 3/128: exact in float, so the
     * ONNX form must give the reference bit for bit (ties to even) */
    const char *ops[] = {"Add", "Sub", "Mul"};
    for (int o = 0; o < 3; o++)
        for (int u = 0; u < 2; u++)
            for (int act = ACT_NONE; act <= ACT_RELU6; act++) {
                bool u8 = u == 1;
                bcase c = {ops[o], u8, 3.0f / 64, 1.0f / 32, 1.0f / 16, u8 ? 131 : -3, u8 ? 120 : 5,
                           u8 ? 128 : 1, act};
                if (act == ACT_RELU6)
                    c.zy = u8 ? 3 : -100; /* 6 / (1/16) = 96 codes above the zero point */
                int32_t a[24], b[12], want[24];
                fill(a, 24, u8);
                fill(b, 12, u8);
                /* ties: da = 2, db = 0 -> 1.5; da = 0, db = 1 -> 0.5; da = 2, db = 1 -> 2 (Add) */
                a[0] = c.za + 2, a[1] = c.za, a[2] = c.za + 2, b[0] = c.zb, b[1] = c.zb + 1, b[2] = c.zb + 1;
                a[3] = u8 ? 255 : 127, b[3] = u8 ? 255 : 127; /* saturation high */
                a[4] = u8 ? 0 : -128, b[4] = u8 ? 0 : -128;   /* and low */
                for (int i = 0; i < 24; i++)
                    want[i] = quant(bin_ref(&c, a[i], b[i % 12]), c.sy, c.zy, u8);
                char what[96];
                snprintf(what, sizeof what, "%s%s %s onnx", ops[o],
                         act == ACT_RELU ? "+Relu" : act == ACT_RELU6 ? "+Relu6" : "", u8 ? "uint8" : "int8");
                run_bin_case(&c, "onnx", a, b, want, what);
            }
}

static void test_binary_hand(void)
{
    /* Add and Sub: sa = sb = 1/16, sy = 1/8, zero points 0: y = (da +- db) / 2.
     * gemmlowp: inputs << 20 times 0.5 (multiplier 2^30, shift 0: exact),
     * the sum times 2^-20 (2^30, shift -19): RoundingDivideByPOT, ties away
     * from zero. ONNX: ties to even. */
    int32_t a[24] = {2, 3, -2, -3, 127, 1}, b[12] = {3, 2, -3, -2, 127, 0};
    int32_t add_onnx[24] = {2, 2, -2, -2, 127, 0}, add_glp[24] = {3, 3, -3, -3, 127, 1};
    /* a - b: a[] = {2,3,-2,-3,127,1} - {3,2,-3,-2,127,0} = {-1,1,1,-1,0,1} -> halves */
    int32_t sub_onnx[24] = {0, 0, 0, 0, 0, 0}, sub_glp[24] = {-1, 1, 1, -1, 0, 1};
    /* the rest of a[] (rows 1, 2 of the broadcast) are 0: y = +-b/2 */
    for (int i = 6; i < 24; i++) {
        int32_t bb = b[i % 12];
        double h = bb / 2.0;
        add_onnx[i] = (int32_t)nearbyint(h), add_glp[i] = bb >= 0 ? (bb + 1) / 2 : -((-bb + 1) / 2);
        sub_onnx[i] = -add_onnx[i], sub_glp[i] = -add_glp[i];
    }
    bcase add = {"Add", false, 1.0f / 16, 1.0f / 16, 1.0f / 8, 0, 0, 0, ACT_NONE};
    bcase sub = add;
    sub.op = "Sub";
    run_bin_case(&add, "onnx", a, b, add_onnx, "Add hand onnx");
    run_bin_case(&add, "gemmlowp", a, b, add_glp, "Add hand gemmlowp");
    run_bin_case(&sub, "onnx", a, b, sub_onnx, "Sub hand onnx");
    run_bin_case(&sub, "gemmlowp", a, b, sub_glp, "Sub hand gemmlowp");

    /* Mul: sa = sb = sy = 1/4: y = da*db / 4. gemmlowp: multiplier 2^30,
     * shift -1: SRDHM halves exactly (even products), RoundingDivideByPOT(1)
     * rounds half away from zero: 6 -> 2, 10 -> 3, -10 -> -3, -6 -> -2.
     * ONNX: 1.5 -> 2, 2.5 -> 2, -2.5 -> -2, -1.5 -> -2. 127*127/4 saturates. */
    int32_t ma[24] = {2, 5, -5, -3, 127, -128}, mb[12] = {3, 2, 2, 2, 127, 127};
    int32_t mul_onnx[24] = {2, 2, -2, -2, 127, -128}, mul_glp[24] = {2, 3, -3, -2, 127, -128};
    for (int i = 6; i < 24; i++) /* a = 0 */
        mul_onnx[i] = mul_glp[i] = 0;
    bcase mul = {"Mul", false, 0.25f, 0.25f, 0.25f, 0, 0, 0, ACT_NONE};
    run_bin_case(&mul, "onnx", ma, mb, mul_onnx, "Mul hand onnx");
    run_bin_case(&mul, "gemmlowp", ma, mb, mul_glp, "Mul hand gemmlowp");
}

/* ---- Concat ------------------------------------------------------------------------ */

/* inputs x0 [2,n0,3], x1 [2,n1,3], ... concatenated on axis 1 */
typedef struct ccase {
    bool u8;
    int n;
    int64_t len[3];
    float s[3], sy;
    int32_t z[3], zy;
} ccase;

static void run_concat(const ccase *c, const char *form, int32_t *const *x, const int32_t *want_hand, const char *what)
{
    pt_model *m = pt_model_new("concat");
    const char *names[4] = {NULL};
    qin ins[3];
    int64_t total = 0;
    for (int i = 0; i < c->n; i++) {
        static const char *xn[] = {"x0", "x1", "x2"}, *qn[] = {"x0q", "x1q", "x2q"};
        int64_t d[3] = {2, c->len[i], 3};
        q_input(m, xn[i], c->u8, 3, d, c->s[i], c->z[i]);
        names[i] = xn[i];
        ins[i] = (qin){qn[i], c->u8, 3, {2, c->len[i], 3}, x[i]};
        total += c->len[i];
    }
    pt_node(m, "Concat", "cat", names, (const char *[]){"f", NULL});
    emu_attr_i(m, "axis", 1);
    int64_t dy[3] = {2, total, 3};
    q_output(m, "f", c->u8, 3, dy, c->sy, c->zy);
    int32_t want[MAXN];
    if (want_hand) {
        memcpy(want, want_hand, (size_t)(6 * total) * sizeof *want);
    } else { /* the reference: dequantize each input, place it, quantize */
        for (int64_t o = 0; o < 2; o++) {
            int64_t off = 0;
            for (int i = 0; i < c->n; i++) {
                for (int64_t j = 0; j < c->len[i] * 3; j++)
                    want[o * total * 3 + off + j] =
                        quant(deq(x[i][o * c->len[i] * 3 + j], c->s[i], c->z[i]), c->sy, c->zy, c->u8);
                off += c->len[i] * 3;
            }
        }
    }
    qrun r;
    bool ok = qrun_model(&r, m, form, c->n, ins);
    PT_CHECK(ok, "%s: %s", what, r.err);
    if (ok) {
        check_fold(&r, what, "QConcat", "switchyard.quant", (const char *[]){"Concat", NULL});
        PT_CHECK(r.ny == 6 * total, "%s: %lld outputs", what, (long long)r.ny);
        compare(what, r.y, want, 6 * total, 0);
    }
    qrun_close(&r);
    pt_model_free(m);
}

static void test_concat(void)
{
    for (int u = 0; u < 2; u++) {
        bool u8 = u == 1;
        /* x0 has the output's parameters (a copy); x1 sx/sy = 0.5 (ties);
         * x2 sx/sy = 0.75 with its own zero point (saturates at the ends) */
        ccase c = {u8, 3, {2, 1, 3}, {1.0f / 16, 1.0f / 32, 3.0f / 64}, 1.0f / 16, {u8 ? 120 : -2, u8 ? 128 : 7,
                   u8 ? 40 : -60}, u8 ? 120 : -2};
        int32_t x0[12], x1[6], x2[18];
        fill(x0, 12, u8);
        fill(x1, 6, u8);
        fill(x2, 18, u8);
        x1[0] = c.z[1] + 3, x1[1] = c.z[1] + 5, x1[2] = c.z[1] - 3, x1[3] = c.z[1] - 5; /* halves */
        x2[0] = u8 ? 255 : 127, x2[1] = u8 ? 0 : -128;
        int32_t *xs[3] = {x0, x1, x2};
        run_concat(&c, "onnx", xs, NULL, u8 ? "Concat uint8 onnx" : "Concat int8 onnx");
        /* equal scales everywhere: copies in either form */
        ccase e = c;
        e.s[1] = e.s[2] = e.sy;
        e.z[1] = e.z[2] = e.zy;
        run_concat(&e, "onnx", xs, NULL, u8 ? "Concat equal uint8 onnx" : "Concat equal int8 onnx");
        run_concat(&e, "gemmlowp", xs, NULL, u8 ? "Concat equal uint8 gemmlowp" : "Concat equal int8 gemmlowp");
    }
    /* hand: x0 codes {3,5,-3,-5, 0,1 | 7,...} at s = 1/16 into s_y = 1/8
     * (x1 a copy). ONNX: 1.5 -> 2, 2.5 -> 2, -1.5 -> -2, -2.5 -> -2, 0.5 -> 0.
     * gemmlowp: multiplier 2^30 shift 0, SRDHM nudges ties toward +inf:
     * 3 -> 2, 5 -> 3, -3 -> -1, -5 -> -2, 1 -> 1. */
    ccase h = {false, 2, {2, 1, 0}, {1.0f / 16, 1.0f / 8, 0}, 1.0f / 8, {0, 0, 0}, 0};
    int32_t h0[12] = {3, 5, -3, -5, 0, 1, 7, 9, -7, -9, 100, -100}, h1[6] = {1, 2, 3, 4, 5, 6};
    int32_t *hx[3] = {h0, h1, NULL};
    /* y [2,3,3]: per outer row o: x0[o] (6 codes) then x1[o] (3 codes) */
    const int32_t onnx[18] = {2, 2, -2, -2, 0, 0, 1, 2, 3, 4, 4, -4, -4, 50, -50, 4, 5, 6};
    const int32_t glp[18] = {2, 3, -1, -2, 0, 1, 1, 2, 3, 4, 5, -3, -4, 50, -50, 4, 5, 6};
    run_concat(&h, "onnx", hx, onnx, "Concat hand onnx");
    run_concat(&h, "gemmlowp", hx, glp, "Concat hand gemmlowp");
}

/* ---- AveragePool / GlobalAveragePool ------------------------------------------------- */

typedef struct pcase {
    bool u8, global, include_pad;
    int64_t x[4];  /* N C H W */
    int64_t k, st, pad; /* square kernel, stride, symmetric pad */
    float sx, sy;
    int32_t zx, zy;
} pcase;

static int64_t pool_out(const pcase *c, int d) { return c->global ? 1 : (c->x[d] + 2 * c->pad - c->k) / c->st + 1; }

static void pool_reference(const pcase *c, const int32_t *x, int32_t *y)
{
    int64_t H = c->x[2], W = c->x[3], OH = pool_out(c, 2), OW = pool_out(c, 3);
    int64_t k = c->global ? H : c->k, kw = c->global ? W : c->k, st = c->global ? 1 : c->st, p = c->global ? 0 : c->pad;
    for (int64_t nc = 0; nc < c->x[0] * c->x[1]; nc++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double sum = 0;
                int64_t cnt = 0, cells = 0;
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < kw; j++) {
                        int64_t ih = oh * st - p + i, iw = ow * st - p + j;
                        cells++; /* symmetric pads: every window lies inside the padded input */
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                            continue;
                        sum += deq(x[(nc * H + ih) * W + iw], c->sx, c->zx);
                        cnt++;
                    }
                y[(nc * OH + oh) * OW + ow] = quant(sum / (double)(c->include_pad ? cells : cnt), c->sy, c->zy, c->u8);
            }
}

static void run_pool(const pcase *c, const char *form, const int32_t *x, const int32_t *want_hand, const char *what)
{
    pt_model *m = pt_model_new("pool");
    int64_t dy[4] = {c->x[0], c->x[1], pool_out(c, 2), pool_out(c, 3)};
    int64_t ny = dy[0] * dy[1] * dy[2] * dy[3];
    q_input(m, "x", c->u8, 4, c->x, c->sx, c->zx);
    pt_node(m, c->global ? "GlobalAveragePool" : "AveragePool", "pool", (const char *[]){"x", NULL},
            (const char *[]){"f", NULL});
    if (!c->global) {
        emu_attr_ints(m, "kernel_shape", 2, (const int64_t[]){c->k, c->k});
        emu_attr_ints(m, "strides", 2, (const int64_t[]){c->st, c->st});
        emu_attr_ints(m, "pads", 4, (const int64_t[]){c->pad, c->pad, c->pad, c->pad});
        emu_attr_i(m, "count_include_pad", c->include_pad);
    }
    q_output(m, "f", c->u8, 4, dy, c->sy, c->zy);
    int32_t want[MAXN];
    if (want_hand)
        memcpy(want, want_hand, (size_t)ny * sizeof *want);
    else
        pool_reference(c, x, want);
    qin in = {"xq", c->u8, 4, {c->x[0], c->x[1], c->x[2], c->x[3]}, x};
    qrun r;
    bool ok = qrun_model(&r, m, form, 1, &in);
    PT_CHECK(ok, "%s: %s", what, r.err);
    if (ok) {
        check_fold(&r, what, "QAveragePool", "switchyard.quant", (const char *[]){"AveragePool", "GlobalAveragePool", NULL});
        PT_CHECK(r.ny == ny, "%s: %lld outputs, expected %lld", what, (long long)r.ny, (long long)ny);
        compare(what, r.y, want, ny, 0);
    }
    qrun_close(&r);
    pt_model_free(m);
}

static void test_avgpool(void)
{
    int32_t x[64];
    /* int8: sx/sy = 2 (saturates), pads counted; uint8: sx/sy = 0.5 (ties), pads not counted */
    pcase a = {false, false, true, {1, 2, 4, 4}, 2, 1, 1, 1.0f / 16, 1.0f / 32, 3, -1};
    fill(x, 32, false);
    x[0] = x[1] = x[4] = x[5] = 127;
    run_pool(&a, "onnx", x, NULL, "AveragePool int8 pads counted onnx");
    pcase b = {true, false, false, {1, 2, 4, 4}, 2, 1, 1, 1.0f / 16, 1.0f / 8, 128, 120};
    fill(x, 32, true);
    run_pool(&b, "onnx", x, NULL, "AveragePool uint8 onnx");
    pcase g = {false, true, false, {1, 3, 2, 4}, 0, 0, 0, 1.0f / 16, 1.0f / 32, -5, 0};
    fill(x, 24, false);
    run_pool(&g, "onnx", x, NULL, "GlobalAveragePool int8 onnx");
    g.u8 = true, g.zx = 100, g.zy = 128, g.sy = 1.0f / 4;
    fill(x, 24, true);
    run_pool(&g, "onnx", x, NULL, "GlobalAveragePool uint8 onnx");

    /* hand: 2x2 windows, stride 2, the output's parameters (s = 1/16, z = 0);
     * window sums 6, 10, -10, -6 over 4 cells. ONNX: 1.5 -> 2, 2.5 -> 2,
     * -2.5 -> -2, -1.5 -> -2. gemmlowp (TFLite): the average rounded half
     * away from zero: 2, 3, -3, -2. */
    pcase h = {false, false, false, {1, 1, 2, 8}, 2, 2, 0, 1.0f / 16, 1.0f / 16, 0, 0};
    int32_t hx[16] = {1, 2, 2, 3, -2, -3, -1, -2, 1, 2, 2, 3, -2, -3, -1, -2};
    run_pool(&h, "onnx", hx, (const int32_t[]){2, 2, -2, -2}, "AveragePool hand onnx");
    run_pool(&h, "gemmlowp", hx, (const int32_t[]){2, 3, -3, -2}, "AveragePool hand gemmlowp");
}

/* ---- QUnary (Relu, Clip, Sigmoid, Tanh) and Softmax ----------------------------------- */

enum { U_RELU, U_CLIP, U_SIGMOID, U_TANH };

static double unary_ref(int fn, double v, float lo, float hi)
{
    switch (fn) {
    case U_RELU: return v > 0 ? v : 0;
    case U_CLIP: return v < lo ? lo : (v > hi ? hi : v);
    case U_SIGMOID: return 1.0 / (1.0 + exp(-v));
    default: return tanh(v);
    }
}

/* every code of the input type through the op; returns the inexact count */
static int run_unary(int fn, bool u8, float sx, int32_t zx, float sy, int32_t zy, float lo, float hi, int tol)
{
    static const char *const ops[] = {"Relu", "Clip", "Sigmoid", "Tanh"};
    pt_model *m = pt_model_new(ops[fn]);
    int64_t d = 256;
    q_input(m, "x", u8, 1, &d, sx, zx);
    if (fn == U_CLIP) {
        init_f(m, "lo", lo);
        init_f(m, "hi", hi);
        pt_node(m, "Clip", "op", (const char *[]){"x", "lo", "hi", NULL}, (const char *[]){"f", NULL});
    } else {
        pt_node(m, ops[fn], "op", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
    }
    q_output(m, "f", u8, 1, &d, sy, zy);
    int32_t x[256], want[256];
    for (int i = 0; i < 256; i++) {
        x[i] = u8 ? i : i - 128;
        want[i] = quant(unary_ref(fn, deq(x[i], sx, zx), lo, hi), sy, zy, u8);
    }
    qin in = {"xq", u8, 1, {256}, x};
    char what[64];
    snprintf(what, sizeof what, "%s %s", ops[fn], u8 ? "uint8" : "int8");
    qrun r;
    int inexact = 0;
    bool ok = qrun_model(&r, m, "onnx", 1, &in);
    PT_CHECK(ok, "%s: %s", what, r.err);
    if (ok) {
        check_fold(&r, what, "QUnary", "switchyard.quant", (const char *[]){ops[fn], NULL});
        inexact = compare(what, r.y, want, 256, tol);
        /* a table entry can only differ where the exact value lies within
         * float rounding of a half-way point: a handful of the 256 codes */
        PT_CHECK(inexact <= 4, "%s: %d of 256 codes differ from the reference", what, inexact);
    }
    qrun_close(&r);
    pt_model_free(m);
    return inexact;
}

static void test_unary(void)
{
    /* Relu: sx/sy = 0.5 (ties to even on odd codes), saturates above */
    run_unary(U_RELU, false, 1.0f / 16, -20, 1.0f / 8, 60, 0, 0, 0);
    run_unary(U_RELU, true, 1.0f / 16, 100, 1.0f / 8, 200, 0, 0, 0);
    /* Relu6 as Clip(0, 6) and a Clip(-1, 6) */
    run_unary(U_CLIP, false, 1.0f / 16, 0, 3.0f / 64, -128, 0.0f, 6.0f, 0);
    run_unary(U_CLIP, true, 1.0f / 16, 100, 1.0f / 32, 40, -1.0f, 6.0f, 0);
    /* Sigmoid / Tanh: float tables, 1 LSB; both saturate near +-1 */
    run_unary(U_SIGMOID, false, 1.0f / 16, 0, 1.0f / 256, -128, 0, 0, 1);
    run_unary(U_SIGMOID, true, 1.0f / 16, 128, 1.0f / 256, 0, 0, 0, 1);
    run_unary(U_TANH, false, 1.0f / 32, 0, 1.0f / 128, 0, 0, 0, 1);
    run_unary(U_TANH, true, 1.0f / 32, 128, 1.0f / 128, 128, 0, 0, 1);
}

static void test_softmax(void)
{
    for (int u = 0; u < 2; u++) {
        bool u8 = u == 1;
        float sx = 1.0f / 8, sy = 1.0f / 256;
        int32_t zx = u8 ? 128 : 3, zy = u8 ? 0 : -128;
        pt_model *m = pt_model_new("softmax");
        int64_t d[2] = {6, 8};
        q_input(m, "x", u8, 2, d, sx, zx);
        pt_node(m, "Softmax", "op", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
        emu_attr_i(m, "axis", -1);
        q_output(m, "f", u8, 2, d, sy, zy);
        int32_t x[48], want[48];
        fill(x, 48, u8);
        for (int j = 0; j < 8; j++) { /* row 0: all equal; row 1: one dominant code */
            x[j] = u8 ? 77 : 7;
            x[8 + j] = u8 ? 0 : -128;
        }
        x[8] = u8 ? 255 : 127;
        for (int r = 0; r < 6; r++) {
            double e[8], sum = 0, mx = -1e9;
            for (int j = 0; j < 8; j++)
                mx = fmax(mx, deq(x[r * 8 + j], sx, zx));
            for (int j = 0; j < 8; j++)
                sum += e[j] = exp(deq(x[r * 8 + j], sx, zx) - mx);
            for (int j = 0; j < 8; j++)
                want[r * 8 + j] = quant(e[j] / sum, sy, zy, u8);
        }
        /* hand: row 0 is 1/8 each = 32 codes above the zero point; row 1's
         * top code: 1 / (1 + 7 e^-31.875) -> 256 codes, saturating */
        PT_CHECK(want[0] == zy + 32 && want[8] == (u8 ? 255 : 127), "softmax hand rows: %d, %d", want[0], want[8]);
        qin in = {"xq", u8, 2, {6, 8}, x};
        const char *what = u8 ? "Softmax uint8" : "Softmax int8";
        qrun r;
        bool ok = qrun_model(&r, m, "onnx", 1, &in);
        PT_CHECK(ok, "%s: %s", what, r.err);
        if (ok) {
            check_fold(&r, what, "QSoftmax", "switchyard.quant", (const char *[]){"Softmax", NULL});
            PT_CHECK(r.y[0] == zy + 32 && r.y[8] == (u8 ? 255 : 127), "%s hand rows: %d, %d", what, r.y[0], r.y[8]);
            int inexact = compare(what, r.y, want, 48, 1);
            PT_CHECK(inexact <= 2, "%s: %d of 48 codes differ from the reference", what, inexact);
        }
        qrun_close(&r);
        pt_model_free(m);
    }
}

/* ---- Transpose / Reshape / Slice / Pad on the codes ------------------------------------ */

static void run_pass(pt_model *m, bool u8, const int32_t *x, const int32_t *want, int64_t ny, const char *op,
                     const char *what)
{
    qin in = {"xq", u8, 3, {2, 3, 4}, x};
    qrun r;
    bool ok = qrun_model(&r, m, "onnx", 1, &in);
    PT_CHECK(ok, "%s: %s", what, r.err);
    if (ok) {
        check_fold(&r, what, op, "", NULL);
        PT_CHECK(r.ny == ny, "%s: %lld outputs, expected %lld", what, (long long)r.ny, (long long)ny);
        compare(what, r.y, want, ny, 0);
    }
    qrun_close(&r);
    pt_model_free(m);
}

static void test_passthrough(void)
{
    int64_t dx[3] = {2, 3, 4};
    for (int u = 0; u < 2; u++) {
        bool u8 = u == 1;
        float s = 0.25f;
        int32_t z = u8 ? 3 : -7, x[24], want[48];
        fill(x, 24, u8);
        x[0] = u8 ? 255 : 127, x[1] = u8 ? 0 : -128;

        /* Transpose perm [2, 0, 1]: y[k][i][j] = x[i][j][k] */
        pt_model *m = pt_model_new("transpose");
        q_input(m, "x", u8, 3, dx, s, z);
        pt_node(m, "Transpose", "op", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
        emu_attr_ints(m, "perm", 3, (const int64_t[]){2, 0, 1});
        q_output(m, "f", u8, 3, (const int64_t[]){4, 2, 3}, s, z);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 4; k++)
                    want[(k * 2 + i) * 3 + j] = quant(deq(x[(i * 3 + j) * 4 + k], s, z), s, z, u8);
        run_pass(m, u8, x, want, 24, "Transpose", u8 ? "Transpose uint8" : "Transpose int8");

        /* Reshape to [4, 6]: the same codes in order */
        m = pt_model_new("reshape");
        q_input(m, "x", u8, 3, dx, s, z);
        pt_init_i64(m, "shape", 1, (const int64_t[]){2}, (const int64_t[]){4, 6});
        pt_node(m, "Reshape", "op", (const char *[]){"x", "shape", NULL}, (const char *[]){"f", NULL});
        q_output(m, "f", u8, 2, (const int64_t[]){4, 6}, s, z);
        for (int i = 0; i < 24; i++)
            want[i] = quant(deq(x[i], s, z), s, z, u8);
        run_pass(m, u8, x, want, 24, "Reshape", u8 ? "Reshape uint8" : "Reshape int8");

        /* Slice axes [1, 2], starts [1, 3], ends [3, 0], steps [1, -2]:
         * j in {1, 2}, k in {3, 1} */
        m = pt_model_new("slice");
        q_input(m, "x", u8, 3, dx, s, z);
        const int64_t two = 2;
        pt_init_i64(m, "starts", 1, &two, (const int64_t[]){1, 3});
        pt_init_i64(m, "ends", 1, &two, (const int64_t[]){3, 0});
        pt_init_i64(m, "axes", 1, &two, (const int64_t[]){1, 2});
        pt_init_i64(m, "steps", 1, &two, (const int64_t[]){1, -2});
        pt_node(m, "Slice", "op", (const char *[]){"x", "starts", "ends", "axes", "steps", NULL},
                (const char *[]){"f", NULL});
        q_output(m, "f", u8, 3, (const int64_t[]){2, 2, 2}, s, z);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (int k = 0; k < 2; k++)
                    want[(i * 2 + j) * 2 + k] = quant(deq(x[(i * 3 + 1 + j) * 4 + 3 - 2 * k], s, z), s, z, u8);
        run_pass(m, u8, x, want, 8, "Slice", u8 ? "Slice uint8" : "Slice int8");

        /* Pad [0,1,0, 0,0,2] with constant 0.375: 0.375 / 0.25 = 1.5, a tie
         * to even: code z + 2 */
        m = pt_model_new("pad");
        q_input(m, "x", u8, 3, dx, s, z);
        pt_init_i64(m, "pads", 1, (const int64_t[]){6}, (const int64_t[]){0, 1, 0, 0, 0, 2});
        init_f(m, "pv", 0.375f);
        pt_node(m, "Pad", "op", (const char *[]){"x", "pads", "pv", NULL}, (const char *[]){"f", NULL});
        q_output(m, "f", u8, 3, (const int64_t[]){2, 4, 6}, s, z);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++)
                for (int k = 0; k < 6; k++) {
                    bool in = j >= 1 && k < 4;
                    want[(i * 4 + j) * 6 + k] = quant(in ? deq(x[(i * 3 + j - 1) * 4 + k], s, z) : 0.375, s, z, u8);
                }
        PT_CHECK(want[0] == z + 2, "pad value code %d, hand-worked %d", want[0], z + 2);
        run_pass(m, u8, x, want, 48, "Pad", u8 ? "Pad uint8" : "Pad int8");
    }
}

/* ---- bad quantization parameters ------------------------------------------------------- */

static void expect_refusal(pt_model *m, int n_in, const qin *ins, const char *what, const char *sub1, const char *sub2)
{
    qrun r;
    bool ok = qrun_model(&r, m, "onnx", n_in, ins);
    PT_CHECK(!ok, "%s: accepted", what);
    if (!ok) {
        PT_HAS(r.err, sub1);
        PT_HAS(r.err, sub2);
        printf("  %s: %s\n", what, r.err);
    }
    qrun_close(&r);
    pt_model_free(m);
}

static void test_bad(void)
{
    int32_t x[64] = {0};
    bcase c = {"Add", false, 0.0f, 0.25f, 0.25f, 0, 0, 0, ACT_NONE};
    qin bins[2] = {{"aq", false, 3, {2, 3, 4}, x}, {"bq", false, 2, {3, 4}, x}};
    expect_refusal(bin_model(&c), 2, bins, "Add a scale 0", "tensor 'aq'", "scale 'a_s'[0] = 0");
    c = (bcase){"Mul", true, 0.25f, -0.5f, 0.25f, 0, 0, 0, ACT_RELU};
    bins[0].u8 = bins[1].u8 = true;
    expect_refusal(bin_model(&c), 2, bins, "Mul+Relu b scale < 0", "tensor 'bq'", "scale 'b_s'[0] = -0.5");
    c = (bcase){"Sub", false, 0.25f, 0.25f, INFINITY, 0, 0, 0, ACT_NONE};
    bins[0].u8 = bins[1].u8 = false;
    expect_refusal(bin_model(&c), 2, bins, "Sub y scale inf", "tensor 'yq'", "scale 'y_s'[0] = inf");

    /* pooling, unary, softmax: one bad scale each */
    int64_t dp[4] = {1, 1, 2, 2}, d1 = 8;
    pt_model *m = pt_model_new("bad_pool");
    q_input(m, "x", false, 4, dp, 0.25f, 0);
    pt_node(m, "GlobalAveragePool", "pool", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
    q_output(m, "f", false, 4, (const int64_t[]){1, 1, 1, 1}, -0.125f, 0);
    qin pin = {"xq", false, 4, {1, 1, 2, 2}, x};
    expect_refusal(m, 1, &pin, "GlobalAveragePool y scale < 0", "tensor 'yq'", "scale 'y_s'[0] = -0.125");

    const char *un[] = {"Sigmoid", "Tanh", "Relu", "Softmax"};
    for (int i = 0; i < 4; i++) {
        m = pt_model_new(un[i]);
        q_input(m, "x", true, 1, &d1, i % 2 ? NAN : 0.0f, 0);
        pt_node(m, un[i], "op", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
        q_output(m, "f", true, 1, &d1, 1.0f / 256, 0);
        qin in = {"xq", true, 1, {8}, x};
        char what[64];
        snprintf(what, sizeof what, "%s x scale %s", un[i], i % 2 ? "nan" : "0");
        expect_refusal(m, 1, &in, what, "tensor 'xq'", i % 2 ? "scale 'x_s'[0] = nan" : "scale 'x_s'[0] = 0");
    }

    /* Concat: the second input's scale is 0 */
    m = pt_model_new("bad_concat");
    q_input(m, "x0", false, 1, &d1, 0.25f, 0);
    q_input(m, "x1", false, 1, &d1, 0.0f, 0);
    pt_node(m, "Concat", "cat", (const char *[]){"x0", "x1", NULL}, (const char *[]){"f", NULL});
    emu_attr_i(m, "axis", 0);
    q_output(m, "f", false, 1, (const int64_t[]){16}, 0.25f, 0);
    qin cin[2] = {{"x0q", false, 1, {8}, x}, {"x1q", false, 1, {8}, x}};
    expect_refusal(m, 2, cin, "Concat x1 scale 0", "tensor 'x1q'", "scale 'x1_s'[0] = 0");

    /* Transpose of codes whose (shared) scale is 0 */
    m = pt_model_new("bad_transpose");
    q_input(m, "x", false, 1, &d1, 0.0f, 0);
    pt_node(m, "Transpose", "op", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
    q_output(m, "f", false, 1, &d1, 0.0f, 0);
    qin tin = {"xq", false, 1, {8}, x};
    expect_refusal(m, 1, &tin, "Transpose scale 0", "tensor 'xq'", "scale 'x_s'[0] = 0");
}

/* riscv_mcu runs QAdd with the portable kernel plugin_sdk/kernels/qk.c
 * (the one generated MCU packages compile): the same codes as the ONNX-QDQ
 * reference, ties with odd zero points included (qk.c once added the zero
 * point before rounding and moved them by one code). */
static void test_add_mcu(void)
{
    bcase c = {"Add", false, 3.0f / 64, 1.0f / 32, 1.0f / 16, -3, 5, 1, ACT_NONE};
    int64_t d[3] = {2, 3, 4};
    pt_model *m = pt_model_new("add_mcu");
    q_input(m, "a", false, 3, d, c.sa, c.za);
    q_input(m, "b", false, 3, d, c.sb, c.zb);
    pt_node(m, "Add", "op", (const char *[]){"a", "b", NULL}, (const char *[]){"f", NULL});
    q_output(m, "f", false, 3, d, c.sy, c.zy);
    int32_t a[24], b[24], want[24];
    fill(a, 24, false);
    fill(b, 24, false);
    /* 0.75*2 = 1.5 -> 2 (+1 = 3), 0.5*1 = 0.5 -> 0 (+1 = 1), 0.75*2 + 0.5*1 = 2
     * -> 2 (+1 = 3), -1.5 -> -2 (+1 = -1), then saturation at both ends */
    a[0] = c.za + 2, b[0] = c.zb;
    a[1] = c.za, b[1] = c.zb + 1;
    a[2] = c.za + 2, b[2] = c.zb + 1;
    a[3] = c.za - 2, b[3] = c.zb;
    a[4] = 127, b[4] = 127;
    a[5] = -128, b[5] = -128;
    int32_t hand[4] = {3, 1, 3, -1};
    for (int i = 0; i < 24; i++)
        want[i] = quant(bin_ref(&c, a[i], b[i]), c.sy, c.zy, false);
    compare("Add mcu reference (hand)", want, hand, 4, 0);
    g_plugins = "riscv_mcu " QPLUGINS;
    g_ini = "providers = riscv_mcu, cpu_ref\n[provider.riscv_mcu]\ntarget = ws63";
    qin ins[2] = {{"aq", false, 3, {2, 3, 4}, a}, {"bq", false, 3, {2, 3, 4}, b}};
    qrun r;
    bool ok = qrun_model(&r, m, "onnx", 2, ins);
    PT_CHECK(ok, "Add on riscv_mcu: %s", r.err);
    if (ok) {
        int on_mcu = 0;
        for (size_t i = 0; i < sy_session_node_count(r.s); i++) {
            sy_node_placement p = {.struct_size = sizeof p};
            if (sy_session_node_placement(r.s, i, &p) && !p.folded && !strcmp(p.op, "QAdd"))
                on_mcu += p.provider && !strcmp(p.provider, "riscv_mcu");
        }
        PT_CHECK(on_mcu == 1, "QAdd is not on riscv_mcu");
        compare("Add int8 onnx on riscv_mcu", r.y, want, 24, 0);
    }
    qrun_close(&r);
    g_plugins = QPLUGINS;
    g_ini = "";
    pt_model_free(m);
}

/* A quantized Gemm with transB = 1 (W stored [N, K], per-output-channel
 * scales on axis 0) on riscv_mcu: the QDQ pass writes the attribute transB
 * (the provider once read "trans_b", ran B untransposed and, with K > N and
 * no bias, wrote K columns into an output of N). Scales are powers of two
 * and the bias a multiple of sa * sw[j], so the formula below is exact and
 * the kernel must match it to the code, and cpu_ref too. */
static void run_gemm_mcu(bool with_bias, int32_t K)
{
    enum { M = 2, N = 16 };
    const float sa = 1.0f / 16, sy = 1.0f / 2;
    const int32_t za = 3, zy = -5;
    float sw[N], bias[N];
    int8_t w[N * 32];
    int32_t a[M * 32], want[M * N];
    for (int j = 0; j < N; j++) {
        sw[j] = j % 2 ? 1.0f / 32 : 1.0f / 64;
        bias[j] = (float)(rnd(-300, 300)) * sa * sw[j];
        for (int32_t k = 0; k < K; k++)
            w[j * K + k] = (int8_t)rnd(-128, 127);
    }
    fill(a, M * K, false);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = with_bias ? (double)bias[j] : 0.0;
            for (int32_t k = 0; k < K; k++) /* y = A W^T + bias */
                acc += deq(a[i * K + k], sa, za) * (double)w[j * K + k] * (double)sw[j];
            want[i * N + j] = quant(acc, sy, zy, false);
        }
    char name[64];
    snprintf(name, sizeof name, "gemm_tb_%s_k%d", with_bias ? "bias" : "nobias", (int)K);
    pt_model *m = pt_model_new(name);
    int64_t da[2] = {M, K}, dw[2] = {N, K}, dn[1] = {N}, dy[2] = {M, N};
    q_input(m, "a", false, 2, da, sa, za);
    pt_init_raw(m, "wq", PT_I8, 2, dw, w, (size_t)(N * K));
    pt_init_f32(m, "w_s", 1, dn, sw);
    int8_t wz[N] = {0};
    pt_init_raw(m, "w_z", PT_I8, 1, dn, wz, N);
    pt_node(m, "DequantizeLinear", "dq_w", (const char *[]){"wq", "w_s", "w_z", NULL}, (const char *[]){"w", NULL});
    emu_attr_i(m, "axis", 0);
    if (with_bias)
        pt_init_f32(m, "bias", 1, dn, bias);
    pt_node(m, "Gemm", "op", with_bias ? (const char *[]){"a", "w", "bias", NULL} : (const char *[]){"a", "w", NULL},
            (const char *[]){"f", NULL});
    emu_attr_i(m, "transB", 1);
    q_output(m, "f", false, 2, dy, sy, zy);
    qin in = {"aq", false, 2, {M, K}, a};
    char what[96];
    for (int mcu = 0; mcu < 2; mcu++) {
        g_plugins = mcu ? "riscv_mcu " QPLUGINS : QPLUGINS;
        g_ini = mcu ? "providers = riscv_mcu, cpu_ref\n[provider.riscv_mcu]\ntarget = ws63" : "";
        qrun r;
        bool ok = qrun_model(&r, m, "onnx", 1, &in);
        PT_CHECK(ok, "%s on %s: %s", name, mcu ? "riscv_mcu" : "cpu_ref", r.err);
        if (ok) {
            int on_mcu = 0;
            for (size_t i = 0; i < sy_session_node_count(r.s); i++) {
                sy_node_placement p = {.struct_size = sizeof p};
                if (sy_session_node_placement(r.s, i, &p) && !p.folded && !strcmp(p.op, "QMatMul"))
                    on_mcu += p.provider && !strcmp(p.provider, "riscv_mcu");
            }
            PT_CHECK(on_mcu == mcu, "%s: QMatMul on riscv_mcu %d times, expected %d", name, on_mcu, mcu);
            PT_CHECK(r.ny == M * N, "%s: %lld outputs", name, (long long)r.ny);
            snprintf(what, sizeof what, "%s %s", name, mcu ? "riscv_mcu" : "cpu_ref");
            compare(what, r.y, want, M * N, 0);
        }
        qrun_close(&r);
    }
    g_plugins = QPLUGINS;
    g_ini = "";
    pt_model_free(m);
}

static void test_gemm_transb_mcu(void)
{
    run_gemm_mcu(true, 16);  /* the 16x16 case of the report */
    run_gemm_mcu(false, 24); /* K > N, no bias */
}

/* ops-mcu.md Table B on the ONNX path: a group = 2 Conv (#1: group 1 only)
 * and a MaxPool with dilations = 2 (#3: dilations 1 only) stay off the MCU
 * and the decline quotes the row; riscv_mcu once took both. */
static void expect_mcu_decline(pt_model *m, const qin *in, const char *qop, const char *row)
{
    g_plugins = "riscv_mcu " QPLUGINS;
    g_ini = "providers = riscv_mcu, cpu_ref\n[provider.riscv_mcu]\ntarget = ws63";
    qrun r;
    bool ok = qrun_model(&r, m, "onnx", 1, in);
    PT_CHECK(ok, "%s: %s", qop, r.err);
    int seen = 0;
    for (size_t i = 0; ok && i < sy_session_node_count(r.s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (!sy_session_node_placement(r.s, i, &p) || p.folded || strcmp(p.op, qop))
            continue;
        seen++;
        PT_CHECK(p.provider && !strcmp(p.provider, "cpu_ref"), "%s placed on %s", qop, p.provider ? p.provider : "-");
        PT_CHECK(p.reason_text && strstr(p.reason_text, row), "%s: decline '%s' does not quote '%s'", qop,
                 p.reason_text ? p.reason_text : "", row);
        printf("  %s declined: %s\n", qop, p.reason_text ? p.reason_text : "");
    }
    PT_CHECK(!ok || seen == 1, "%s: %d nodes", qop, seen);
    qrun_close(&r);
    g_plugins = QPLUGINS;
    g_ini = "";
}

static void test_table_b_mcu(void)
{
    int32_t x[100];
    fill(x, 100, false);
    /* Conv group 2: X [1, 4, 5, 5], W [4, 2, 3, 3] */
    pt_model *m = pt_model_new("conv_group2");
    int64_t dx[4] = {1, 4, 5, 5}, dw[4] = {4, 2, 3, 3}, dy[4] = {1, 4, 3, 3};
    q_input(m, "x", false, 4, dx, 1.0f / 16, 0);
    int8_t w[72];
    for (int i = 0; i < 72; i++)
        w[i] = (int8_t)rnd(-128, 127);
    pt_init_raw(m, "wq", PT_I8, 4, dw, w, sizeof w);
    init_f(m, "w_s", 1.0f / 64);
    init_code(m, "w_z", false, 0);
    pt_node(m, "DequantizeLinear", "dq_w", (const char *[]){"wq", "w_s", "w_z", NULL}, (const char *[]){"w", NULL});
    pt_node(m, "Conv", "op", (const char *[]){"x", "w", NULL}, (const char *[]){"f", NULL});
    emu_attr_i(m, "group", 2);
    q_output(m, "f", false, 4, dy, 1.0f / 4, 0);
    qin in = {"xq", false, 4, {1, 4, 5, 5}, x};
    expect_mcu_decline(m, &in, "QConv", "Table B #1 Conv");
    pt_model_free(m);
    /* MaxPool dilations 2: X [1, 4, 5, 5], 2x2 window -> [1, 4, 3, 3] */
    m = pt_model_new("maxpool_dil2");
    q_input(m, "x", false, 4, dx, 1.0f / 16, 0);
    pt_node(m, "MaxPool", "op", (const char *[]){"x", NULL}, (const char *[]){"f", NULL});
    emu_attr_ints(m, "kernel_shape", 2, (const int64_t[]){2, 2});
    emu_attr_ints(m, "dilations", 2, (const int64_t[]){2, 2});
    q_output(m, "f", false, 4, dy, 1.0f / 16, 0);
    expect_mcu_decline(m, &in, "QMaxPool", "Table B #3 MaxPool");
    pt_model_free(m);
}

/* ---- ConvTranspose (ops-mcu.md Table B #113 int8) ------------------------------------
 * DQ(x), DQ(W) [, bias] -> ConvTranspose -> Q folds into one QConvTranspose
 * when W is per tensor or per channel on axis 1 (W [C_in, C_out / group,
 * k...]: its output channels). The reference is ONNX's definition written
 * out: every input pixel scatters x * W into y[o], o = i * s - pad + k * d,
 * in double from the dequantized values, then QuantizeLinear. Scales are
 * dyadic, so every form is exact there and must match bit for bit. */
typedef struct tcase {
    const char *name;
    bool u8;       /* x and y uint8 (W int8) */
    int32_t rank;  /* 3 (1-D) or 4 */
    int64_t x[4];  /* X dims */
    int32_t group, ocg, k[2], s[2], d[2], pb[2], pe[2], opad[2];
    int32_t w_axis; /* -1 per tensor, else the DQ axis of W's per-channel scales */
    bool bias;
} tcase;

static int64_t tc_out(const tcase *c, int j) /* j: 0 height, 1 width (height 1 for 1-D) */
{
    int64_t in = c->rank == 3 ? (j ? c->x[2] : 1) : c->x[2 + j];
    return (int64_t)c->s[j] * (in - 1) + c->opad[j] + (int64_t)(c->k[j] - 1) * c->d[j] + 1 - c->pb[j] - c->pe[j];
}

static void run_convt(const tcase *c, bool mcu, bool want_fold)
{
    const int64_t C = c->x[1], IH = c->rank == 3 ? 1 : c->x[2], IW = c->x[c->rank - 1];
    const int64_t OC = (int64_t)c->ocg * c->group, OH = tc_out(c, 0), OW = tc_out(c, 1), cg = C / c->group;
    const int64_t KK = (int64_t)c->k[0] * c->k[1], nw = C * c->ocg * KK;
    const float sx = 1.0f / 16, sy = 1.0f / 4;
    const int32_t zx = c->u8 ? 100 : -3, zy = c->u8 ? 128 : 5;
    int32_t x[MAXN], want[MAXN];
    int8_t w[MAXN];
    float sw[16], bias[16];
    const int64_t nsw = c->w_axis < 0 ? 1 : c->w_axis == 0 ? C : c->ocg;
    fill(x, (int)(C * IH * IW), c->u8);
    for (int64_t i = 0; i < nw; i++)
        w[i] = (int8_t)rnd(-128, 127);
    for (int64_t i = 0; i < nsw; i++)
        sw[i] = i % 3 == 0 ? 1.0f / 64 : i % 3 == 1 ? 1.0f / 32 : 1.0f / 128;
    for (int64_t o = 0; o < OC; o++) /* a multiple of sx * sw for every sw: its int32 codes are exact */
        bias[o] = (float)rnd(-400, 400) * sx * (1.0f / 32);
    double acc[MAXN];
    for (int64_t i = 0; i < OC * OH * OW; i++)
        acc[i] = c->bias ? (double)bias[i / (OH * OW)] : 0.0;
    for (int64_t ci = 0; ci < C; ci++)
        for (int64_t m = 0; m < c->ocg; m++) {
            int64_t o = ci / cg * c->ocg + m;
            float swv = sw[c->w_axis < 0 ? 0 : c->w_axis == 0 ? ci : m];
            for (int64_t ih = 0; ih < IH; ih++)
                for (int64_t iw = 0; iw < IW; iw++)
                    for (int64_t a = 0; a < c->k[0]; a++)
                        for (int64_t b = 0; b < c->k[1]; b++) {
                            int64_t oy = ih * c->s[0] - c->pb[0] + a * c->d[0], ox = iw * c->s[1] - c->pb[1] + b * c->d[1];
                            if (oy < 0 || oy >= OH || ox < 0 || ox >= OW)
                                continue;
                            acc[(o * OH + oy) * OW + ox] += deq(x[(ci * IH + ih) * IW + iw], sx, zx) *
                                                            (double)w[(ci * c->ocg + m) * KK + a * c->k[1] + b] *
                                                            (double)swv;
                        }
        }
    for (int64_t i = 0; i < OC * OH * OW; i++)
        want[i] = quant(acc[i], sy, zy, c->u8);
    pt_model *m = pt_model_new(c->name);
    int64_t dw[4] = {C, c->ocg, c->rank == 3 ? c->k[1] : c->k[0], c->k[1]}, dn[1] = {nsw}, db[1] = {OC};
    int64_t dy[4] = {1, OC, c->rank == 3 ? OW : OH, OW};
    q_input(m, "x", c->u8, c->rank, c->x, sx, zx);
    pt_init_raw(m, "wq", PT_I8, c->rank, dw, w, (size_t)nw);
    int8_t wz[16] = {0};
    if (c->w_axis < 0) {
        init_f(m, "w_s", sw[0]);
        init_code(m, "w_z", false, 0);
    } else {
        pt_init_f32(m, "w_s", 1, dn, sw);
        pt_init_raw(m, "w_z", PT_I8, 1, dn, wz, (size_t)nsw);
    }
    pt_node(m, "DequantizeLinear", "dq_w", (const char *[]){"wq", "w_s", "w_z", NULL}, (const char *[]){"w", NULL});
    if (c->w_axis >= 0)
        emu_attr_i(m, "axis", c->w_axis);
    if (c->bias)
        pt_init_f32(m, "bias", 1, db, bias);
    pt_node(m, "ConvTranspose", "op", c->bias ? (const char *[]){"x", "w", "bias", NULL} : (const char *[]){"x", "w", NULL},
            (const char *[]){"f", NULL});
    int nsp = c->rank - 2, o0 = 2 - nsp;
    emu_attr_i(m, "group", c->group);
    emu_attr_ints(m, "strides", (size_t)nsp, (const int64_t[]){c->s[o0], c->s[1]});
    emu_attr_ints(m, "dilations", (size_t)nsp, (const int64_t[]){c->d[o0], c->d[1]});
    emu_attr_ints(m, "output_padding", (size_t)nsp, (const int64_t[]){c->opad[o0], c->opad[1]});
    if (nsp == 2)
        emu_attr_ints(m, "pads", 4, (const int64_t[]){c->pb[0], c->pb[1], c->pe[0], c->pe[1]});
    else
        emu_attr_ints(m, "pads", 2, (const int64_t[]){c->pb[1], c->pe[1]});
    q_output(m, "f", c->u8, c->rank, dy, sy, zy);
    qin in = {"xq", c->u8, c->rank, {c->x[0], c->x[1], c->x[2], c->x[3]}, x};
    g_plugins = mcu ? "riscv_mcu " QPLUGINS : QPLUGINS;
    g_ini = mcu ? "providers = riscv_mcu, cpu_ref\n[provider.riscv_mcu]\ntarget = ws63" : "";
    qrun r;
    char what[96];
    snprintf(what, sizeof what, "%s %s", c->name, mcu ? "riscv_mcu" : "cpu_ref");
    bool ok = qrun_model(&r, m, "onnx", 1, &in);
    PT_CHECK(ok, "%s: %s", what, r.err);
    if (ok) {
        int n_q = 0, n_float = 0, on_mcu = 0;
        for (size_t i = 0; i < sy_session_node_count(r.s); i++) {
            sy_node_placement p = {.struct_size = sizeof p};
            if (!sy_session_node_placement(r.s, i, &p) || p.folded)
                continue;
            n_q += !strcmp(p.op, "QConvTranspose");
            n_float += !strcmp(p.op, "ConvTranspose");
            on_mcu += !strcmp(p.op, "QConvTranspose") && p.provider && !strcmp(p.provider, "riscv_mcu");
        }
        PT_CHECK(n_q == (want_fold ? 1 : 0) && n_float == (want_fold ? 0 : 1), "%s: %d QConvTranspose, %d ConvTranspose",
                 what, n_q, n_float);
        PT_CHECK(on_mcu == (mcu ? 1 : 0), "%s: QConvTranspose on riscv_mcu %d times", what, on_mcu);
        PT_CHECK(r.ny == OC * OH * OW, "%s: %lld outputs, %lld expected", what, (long long)r.ny,
                 (long long)(OC * OH * OW));
        compare(what, r.y, want, OC * OH * OW, 0);
    }
    qrun_close(&r);
    g_plugins = QPLUGINS;
    g_ini = "";
    pt_model_free(m);
}

static void test_convtranspose(void)
{
    /* 1-D, uint8, group 2, W per channel on axis 1, stride 2, dilation 2, pads: cpu_ref */
    const tcase g2 = {"convt_1d_u8_group2", true, 3, {1, 4, 6, 0}, 2, 3, {1, 3}, {1, 2}, {1, 2}, {0, 1}, {0, 2},
                      {0, 1}, 1, true};
    run_convt(&g2, false, true);
    /* 2-D int8: stride (2, 1), dilations (1, 2), asymmetric pads, output_padding, bias: cpu_ref and riscv_mcu */
    const tcase s2 = {"convt_2d_s8_dil_opad", false, 4, {1, 2, 3, 4}, 1, 3, {3, 3}, {2, 1}, {1, 2}, {0, 1}, {1, 0},
                      {1, 0}, 1, true};
    run_convt(&s2, false, true);
    run_convt(&s2, true, true);
    /* W per tensor, no bias, on riscv_mcu */
    const tcase pt = {"convt_2d_s8_per_tensor", false, 4, {1, 3, 3, 3}, 1, 2, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1},
                      {0, 0}, -1, false};
    run_convt(&pt, true, true);
    /* W per channel on axis 0 (its input channels): not what QConvTranspose
     * requantizes per output channel, so the pass leaves it float */
    const tcase a0 = {"convt_w_axis0_float", false, 4, {1, 2, 3, 4}, 1, 3, {3, 3}, {2, 1}, {1, 2}, {0, 1}, {1, 0},
                      {1, 0}, 0, true};
    run_convt(&a0, false, false);
    /* group 2 on riscv_mcu: Table B #113 takes group 1 only; cpu_ref runs it */
    pt_model *m = pt_model_new("convt_group2_mcu");
    int64_t dx[4] = {1, 4, 3, 3}, dw[4] = {4, 1, 2, 2}, dy[4] = {1, 2, 4, 4};
    int32_t x[36];
    int8_t w[16];
    fill(x, 36, false);
    for (int i = 0; i < 16; i++)
        w[i] = (int8_t)rnd(-128, 127);
    q_input(m, "x", false, 4, dx, 1.0f / 16, 0);
    pt_init_raw(m, "wq", PT_I8, 4, dw, w, sizeof w);
    init_f(m, "w_s", 1.0f / 64);
    init_code(m, "w_z", false, 0);
    pt_node(m, "DequantizeLinear", "dq_w", (const char *[]){"wq", "w_s", "w_z", NULL}, (const char *[]){"w", NULL});
    pt_node(m, "ConvTranspose", "op", (const char *[]){"x", "w", NULL}, (const char *[]){"f", NULL});
    emu_attr_i(m, "group", 2);
    q_output(m, "f", false, 4, dy, 1.0f / 4, 0);
    qin in = {"xq", false, 4, {1, 4, 3, 3}, x};
    expect_mcu_decline(m, &in, "QConvTranspose", "Table B #113 ConvTranspose");
    pt_model_free(m);
}

int main(void)
{
    PT_RUN(test_binary_ref);
    PT_RUN(test_binary_hand);
    PT_RUN(test_add_mcu);
    PT_RUN(test_gemm_transb_mcu);
    PT_RUN(test_table_b_mcu);
    PT_RUN(test_convtranspose);
    PT_RUN(test_concat);
    PT_RUN(test_avgpool);
    PT_RUN(test_unary);
    PT_RUN(test_softmax);
    PT_RUN(test_passthrough);
    PT_RUN(test_bad);
    return pt_result();
}
