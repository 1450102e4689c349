/*
 * The fast integer path against plain reference loops written here.
 *
 *   sdk      sy_qgemm_s16 / sy_qgemm_pack / sy_qgemm_mac_row against a
 *            naive int64 triple loop reduced modulo 2^32 (odd sizes, both
 *            biases, K beyond the kernel's exact int32 block so the
 *            accumulator wraps); sy_rq_apply_n against sy_rq_apply (both
 *            forms, exact ties, saturation, folded clamps) and under every
 *            FPU rounding mode
 *   conv     random QLinearConv / ConvInteger models (groups, depthwise,
 *            strides, asymmetric pads, dilations, 1-D and 2-D, uint8/int8,
 *            zero points, per-channel weights, bias) run on cpu_ref and
 *            compared byte for byte with a direct convolution loop whose
 *            ONNX requantization is rint() of the double product
 *   matmul   random QLinearMatMul / MatMulInteger models (batch
 *            broadcasting, per-column B parameters, per-row A zero point)
 *            against a plain loop
 * Every case is checked in both requantization forms (onnx, gemmlowp).
 */
#include "emu_test.h"
#include "switchyard/sy_sdk.h"

#include <fenv.h>

#define PT_I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define PT_U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define QPLUGINS "cpu_ref ops_quant"

static const char *const FORMS[2] = {"onnx", "gemmlowp"};

/* ---- deterministic random numbers ---------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}
/* uniform in [lo, hi] */
static int32_t rr(int32_t lo, int32_t hi) { return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1)); }

/* ---- references ----------------------------------------------------------- */

static long g_inside, g_ties; /* ONNX-form reference outputs off saturation; of them exact ties */

static int32_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* ONNX QLinear requantization, written independently of the SDK: the
 * multiplier as numpy float32 scalars give it, the double product rounded
 * half to even by rint() in the default rounding mode. */
static int32_t ref_rq_onnx(int32_t acc, float sa, float sb, float sy, int32_t zp, int32_t lo, int32_t hi)
{
    float m = sa * sb;
    m = m / sy;
    double v = (double)acc * (double)m, r = rint(v) + zp;
    if (r > lo && r < hi) { /* how much of the output space the cases reach */
        g_inside++;
        g_ties += v - floor(v) == 0.5;
    }
    return r < lo ? lo : (r > hi ? hi : (int32_t)r);
}

/* gemmlowp form: TFLite's QuantizeMultiplier + MultiplyByQuantizedMultiplier
 * (sy_q_* are checked against hand vectors in test_requant.c) */
static int32_t ref_rq_gemmlowp(int32_t acc, float sa, float sb, float sy, int32_t zp, int32_t lo, int32_t hi)
{
    float m = sa * sb;
    m = m / sy;
    int32_t mult, shift;
    sy_q_quantize_multiplier((double)m, &mult, &shift);
    int64_t v = (int64_t)sy_q_mul_by_qm(acc, mult, shift) + zp;
    return v < lo ? lo : (v > hi ? hi : (int32_t)v);
}

static int32_t ref_rq_lo(int form, int32_t acc, float sa, float sb, float sy, int32_t zp, bool yu8, bool relu)
{
    int32_t lo = yu8 ? 0 : -128, hi = yu8 ? 255 : 127;
    if (relu) /* a folded Relu: real 0 quantizes to zp */
        lo = zp;
    return form ? ref_rq_gemmlowp(acc, sa, sb, sy, zp, lo, hi) : ref_rq_onnx(acc, sa, sb, sy, zp, lo, hi);
}

static int32_t ref_rq(int form, int32_t acc, float sa, float sb, float sy, int32_t zp, bool yu8)
{
    return ref_rq_lo(form, acc, sa, sb, sy, zp, yu8, false);
}

/* ---- sdk level ------------------------------------------------------------ */

static void check_gemm(int64_t m, int64_t n, int64_t k, int32_t amp, bool brow, bool bcol)
{
    int64_t kp = sy_qgemm_kpad(k);
    PT_CHECK(kp >= k && kp % SY_QGEMM_KALIGN == 0, "kpad(%lld) = %lld", (long long)k, (long long)kp);
    int64_t lda = kp + (m % 2) * SY_QGEMM_KALIGN, ldb = kp, ldc = n + 3;
    int8_t *a8 = malloc((size_t)(m * k)), *b8 = malloc((size_t)(n * k));
    int16_t *a = malloc((size_t)(m * lda) * sizeof *a), *b = malloc((size_t)(n * ldb) * sizeof *b);
    int32_t *c = malloc((size_t)(m * ldc) * sizeof *c), *bias_r = malloc((size_t)m * 4), *bias_c = malloc((size_t)n * 4);
    int32_t za = rr(-128, 127), zb = rr(-128, 127);
    if (amp == 255) /* extreme codes: products of +-255 so that sums wrap */
        za = -128, zb = 127;
    for (int64_t i = 0; i < m * k; i++)
        a8[i] = (int8_t)(amp == 255 ? 127 : rr(-128, 127));
    for (int64_t i = 0; i < n * k; i++)
        b8[i] = (int8_t)(amp == 255 ? -128 : rr(-128, 127));
    for (int64_t i = 0; i < m; i++)
        bias_r[i] = (int32_t)rnd();
    for (int64_t j = 0; j < n; j++)
        bias_c[j] = rr(-100000, 100000);
    for (int64_t i = 0; i < m; i++)
        sy_qgemm_pack(a8, SY_DT_INT8, (size_t)(i * k), k, kp, za, a + i * lda);
    for (int64_t j = 0; j < n; j++)
        sy_qgemm_pack(b8, SY_DT_INT8, (size_t)(j * k), k, kp, zb, b + j * ldb);
    for (int64_t i = 0; i < m * ldc; i++)
        c[i] = 0x5a5a5a5a;
    sy_qgemm_s16(m, n, kp, a, lda, b, ldb, brow ? bias_r : NULL, bcol ? bias_c : NULL, c, ldc);
    int64_t bad = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t s = (brow ? bias_r[i] : 0) + (bcol ? bias_c[j] : 0);
            for (int64_t p = 0; p < k; p++)
                s += (int64_t)(a8[i * k + p] - za) * (b8[j * k + p] - zb);
            if (c[i * ldc + j] != wrap32(s) && bad++ < 3)
                fprintf(stderr, "  gemm %lldx%lldx%lld [%lld][%lld]: %d, want %d\n", (long long)m, (long long)n,
                        (long long)k, (long long)i, (long long)j, c[i * ldc + j], wrap32(s));
        }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = n; j < ldc; j++)
            bad += c[i * ldc + j] != 0x5a5a5a5a; /* outside the n columns: untouched */
    PT_CHECK(bad == 0, "sy_qgemm_s16 m=%lld n=%lld k=%lld: %lld wrong", (long long)m, (long long)n, (long long)k,
             (long long)bad);
    free(a8), free(b8), free(a), free(b), free(c), free(bias_r), free(bias_c);
}

static void test_sdk_gemm(void)
{
    static const int64_t sz[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31};
    for (int i = 0; i < 120; i++) { /* one draw per statement: the same cases with every compiler */
        int64_t m = sz[rnd() % 12];
        int64_t n = sz[rnd() % 12] + (i % 3 == 0 ? 20 : 0);
        int64_t k = rr(1, 80);
        bool brow = rnd() & 1;
        bool bcol = rnd() & 1;
        check_gemm(m, n, k, 127, brow, bcol);
    }
    /* K = 40000 > the 32768-term exact block, all products 255 * -255: the
     * int32 accumulator wraps (40000 * 65025 > 2^31) */
    check_gemm(3, 5, 40000, 255, false, false);
    check_gemm(2, 4, 70001, 255, true, true);
    /* pack: every storage type the kernels take, tails zeroed */
    uint8_t u8[9] = {0, 1, 2, 100, 200, 255, 7, 8, 9};
    uint8_t i4[3] = {0x8f, 0x70, 0x21}; /* int4 low nibble first: -1, -8, 0, 7, 1, 2 */
    int16_t d[16];
    sy_qgemm_pack(u8, SY_DT_UINT8, 2, 5, 16, 200, d);
    int16_t want_u8[16] = {-198, -100, 0, 55, -193};
    PT_CHECK(!memcmp(d, want_u8, sizeof d), "pack uint8");
    sy_qgemm_pack(i4, SY_DT_INT4, 1, 5, 8, -8, d);
    int16_t want_i4[8] = {0, 8, 15, 9, 10, 0, 0, 0};
    PT_CHECK(!memcmp(d, want_i4, sizeof want_i4), "pack int4: %d %d %d %d %d", d[0], d[1], d[2], d[3], d[4]);
    /* mac_row: stride 1 and 3 */
    int16_t x[30];
    int32_t acc[10], want[10];
    for (int i = 0; i < 30; i++)
        x[i] = (int16_t)rr(-255, 255);
    for (int s = 1; s <= 3; s += 2) {
        for (int i = 0; i < 10; i++)
            acc[i] = want[i] = (int32_t)rnd();
        int32_t w = rr(-255, 255);
        sy_qgemm_mac_row(10, w, x, s, acc);
        for (int i = 0; i < 10; i++)
            want[i] = wrap32((int64_t)want[i] + (int64_t)w * x[i * s]);
        PT_CHECK(!memcmp(acc, want, sizeof acc), "mac_row stride %d", s);
    }
}

static void check_rq(const sy_requant *r, const int32_t *acc, size_t n, const char *what)
{
    int32_t *out = malloc(n * sizeof *out);
    sy_rq_apply_n(r, 0, acc, out, n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t want = sy_rq_apply(r, acc[i]);
        if (out[i] != want && bad++ < 3)
            fprintf(stderr, "  %s mult %.17g zp %d [%d, %d]: acc %d -> %d, want %d\n", what, r->real_mult, r->zp,
                    r->lo, r->hi, acc[i], out[i], want);
    }
    PT_CHECK(bad == 0, "sy_rq_apply_n (%s, %s): %zu of %zu differ", what, sy_rq_mode_name(r->mode), bad, n);
    free(out);
}

static void test_sdk_requant(void)
{
    enum { N = 4096 };
    int32_t *acc = malloc(N * sizeof *acc);
    static const int modes[] = {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    static const char *const mode_names[] = {"nearest", "upward", "downward", "toward zero"};
    for (int fm = 0; fm < 4; fm++) {
        PT_CHECK(fesetround(modes[fm]) == 0, "fesetround");
        for (int t = 0; t < 40; t++) {
            sy_requant r;
            /* powers of two make acc * mult land on .5 ties; others random */
            double mult = t % 4 == 0 ? ldexp(1.0, -rr(1, 12)) : (double)(rnd() % 100000 + 1) * 1e-7 * (t % 3 + 1);
            if (t == 1)
                mult = 1.5;
            int32_t zp = t % 2 ? rr(-128, 127) : rr(0, 255);
            int32_t lo = t % 2 ? -128 : 0, hi = t % 2 ? 127 : 255;
            if (t % 5 == 2) /* a folded clamp (Relu6-like) */
                lo = zp, hi = zp + 40 < hi ? zp + 40 : hi;
            if (t == 7) /* 16-bit output */
                lo = -32768, hi = 32767, zp = rr(-300, 300);
            sy_rq_init(&r, t % 2 ? SY_RQ_GEMMLOWP : SY_RQ_ONNX, mult, zp, lo, hi);
            for (int i = 0; i < N; i++) {
                switch (i % 4) {
                case 0: acc[i] = (int32_t)rnd(); break;                              /* saturating */
                case 1: acc[i] = rr(-(int32_t)(300 / mult), (int32_t)(300 / mult)); break; /* in range */
                case 2: acc[i] = rr(-4096, 4096); break;                              /* ties for 2^-k */
                default: acc[i] = i % 8 == 3 ? INT32_MIN + rr(0, 3) : INT32_MAX - rr(0, 3); break;
                }
            }
            char what[64];
            snprintf(what, sizeof what, "case %d, rounding %s", t, mode_names[fm]);
            check_rq(&r, acc, N, what);
            if (r.mode == SY_RQ_ONNX) { /* both forms on the same values */
                r.mode = SY_RQ_GEMMLOWP;
                check_rq(&r, acc, N, what);
            }
        }
    }
    fesetround(FE_TONEAREST);
    /* sy_rq_round_even against rint() in the default mode (values; the sign
     * of a zero result may differ: -0.3 rounds to +0 there, -0 in rint) */
    static const double special[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
                                     -0.49999999999999994, 4503599627370495.5, -4503599627370495.5,
                                     4503599627370496.0, 9007199254740993.0, -9.3e18, 1e300, -1e300, INFINITY,
                                     -INFINITY, 2147483647.5, -2147483648.5, 1e-320};
    long rbad = 0;
    for (int i = 0; i < 100000 + (int)(sizeof special / sizeof *special); i++) {
        double hi = (double)(int32_t)rnd(), lo = (double)rnd();
        double v = i >= 100000 ? special[i - 100000]
                   : i % 3 ? hi / 4.0 /* quarters: ties every other */
                           : hi * 1e-3 + lo * 1e-12;
        double got = sy_rq_round_even(v), want = rint(v);
        rbad += !(got == want);
    }
    rbad += !signbit(sy_rq_round_even(-0.0)) + !!signbit(sy_rq_round_even(0.0)) + !isnan(sy_rq_round_even(NAN));
    PT_CHECK(rbad == 0, "sy_rq_round_even differs from rint on %ld values", rbad);
    /* one requantizer per element */
    sy_requant rs[64];
    int32_t out[64];
    for (int i = 0; i < 64; i++) {
        sy_rq_init(&rs[i], i % 2 ? SY_RQ_GEMMLOWP : SY_RQ_ONNX, ldexp(1.0, -(i % 9) - 1), i - 32, -128, 127);
        acc[i] = rr(-2000, 2000);
    }
    sy_rq_apply_n(rs, 1, acc, out, 64);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += out[i] != sy_rq_apply(&rs[i], acc[i]);
    PT_CHECK(bad == 0, "sy_rq_apply_n with one requantizer per element: %d differ", bad);
    /* a non-finite multiplier takes sy_rq_apply's own path */
    sy_requant rinf;
    sy_rq_init(&rinf, SY_RQ_ONNX, INFINITY, 3, -128, 127);
    int32_t a3[3] = {-5, 0, 5};
    check_rq(&rinf, a3, 3, "infinite multiplier");
    free(acc);
}

/* ---- models --------------------------------------------------------------- */

static void init_codes(pt_model *m, const char *name, bool u8, int32_t rank, const int64_t *dims, const uint8_t *v)
{
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    pt_init_raw(m, name, u8 ? PT_U8 : PT_I8, rank, dims, v, n);
}
/* scalars: rank 0 (a dims pointer all the same: pt_init_raw copies 0 dims from it) */
static const int64_t NO_DIMS[1] = {1};
static void init_scalar_f(pt_model *m, const char *name, float v) { pt_init_f32(m, name, 0, NO_DIMS, &v); }
static void init_scalar_q(pt_model *m, const char *name, bool u8, int32_t v)
{
    uint8_t b = (uint8_t)v;
    init_codes(m, name, u8, 0, NO_DIMS, &b);
}
static int32_t code(const uint8_t *v, bool u8, size_t i) { return u8 ? v[i] : (int8_t)v[i]; }
static uint8_t rcode(bool u8) { return (uint8_t)(u8 ? rr(0, 255) : rr(-128, 127)); }
/* a code within amp of zp (clamped to the type): small amplitudes keep
 * outputs off saturation so that rounding, ties included, is exercised */
static uint8_t rcode_near(bool u8, int32_t zp, int32_t amp)
{
    int32_t v = zp + rr(-amp, amp), lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
    return (uint8_t)(v < lo ? lo : (v > hi ? hi : v));
}
static const int32_t AMPS[3] = {3, 20, 255};

/* Runs model m with input "x" (dtype, dims, bytes) in requant form `form`;
 * copies output "y" (nbytes) into y. */
static bool run_model(pt_model *m, const char *name, int form, sy_dtype xdt, int32_t rank, const int64_t *dims,
                      void *x, void *y, size_t nbytes)
{
    sy_env *env = emu_env(QPLUGINS, "[plugin.ops_quant]\nrequant = %s", FORMS[form]);
    if (!env)
        return false;
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    sy_model *model = NULL;
    sy_session *s = NULL;
    const sy_tensor *ty = NULL;
    sy_tensor tx = emu_tensor(xdt, x, rank, dims);
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1};
    bool ok = emu_ok(sy_model_load_buffer(env, buf, len, name, NULL, &model), name) &&
              emu_ok(sy_session_create(env, model, &o, &s), name) &&
              emu_ok(sy_session_set_input(s, "x", &tx, SY_INPUT_COPY), name) && emu_ok(sy_session_run(s), name) &&
              emu_ok(sy_session_get_output_by_name(s, "y", &ty), name);
    if (ok) {
        size_t got = (size_t)sy_tensor_numel(ty) * sy_dt_size(ty->dtype);
        PT_CHECK(got == nbytes, "%s: output has %zu bytes, %zu expected", name, got, nbytes);
        ok = got == nbytes;
        if (ok)
            memcpy(y, ty->data, nbytes);
    }
    free(buf);
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    return ok;
}

typedef struct conv_case {
    bool integer, xu8, wu8, yu8, per_ch, bias;
    int nsp; /* 1 or 2 spatial dims */
    int64_t N, C, OC, group, H, W, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
} conv_case;

static void conv_case_random(conv_case *c, int i)
{
    memset(c, 0, sizeof *c);
    c->integer = i % 4 == 3;
    c->xu8 = rnd() & 1, c->wu8 = rnd() & 1, c->yu8 = rnd() & 1;
    c->per_ch = rnd() & 1, c->bias = !c->integer && rr(0, 3) != 0;
    c->nsp = i % 7 == 5 ? 1 : 2;
    c->N = rr(1, 2);
    int kind = i % 5; /* 0 dense, 1 grouped, 2 depthwise, 3 depthwise x2, 4 pointwise */
    c->group = kind == 0 ? 1 : kind == 4 ? (i % 10 == 9 ? 2 : 1) : (kind == 1 ? rr(2, 3) : rr(2, 6));
    /* pointwise: 8-channel blocks and a remainder; every tenth case K > 360
     * so that the output is split into several im2row tiles */
    int64_t cg = kind == 2 || kind == 3 ? 1 : kind == 4 ? rr(1, 20) : i % 10 == 0 ? rr(40, 70) : rr(1, 5);
    c->C = c->group * cg;
    c->OC = c->group * (kind == 3 ? 2 : kind >= 2 && kind != 4 ? 1 : rr(1, 6));
    if (kind == 4)
        c->OC = c->group * rr(1, 9);
    c->H = c->nsp == 1 ? 1 : rr(1, 11);
    c->W = rr(1, 13);
    c->KH = c->nsp == 1 || kind == 4 ? 1 : rr(1, 3);
    c->KW = kind == 4 ? 1 : rr(1, 3);
    c->sh = c->nsp == 1 || kind == 4 ? 1 : rr(1, 3);
    c->sw = kind == 4 ? 1 : rr(1, 3);
    c->dh = c->nsp == 1 || kind == 4 ? 1 : rr(1, 2);
    c->dw = kind == 4 ? 1 : rr(1, 2);
    if (kind != 4 && c->nsp == 2)
        c->pt = rr(0, 2), c->pb = rr(0, 2);
    if (kind != 4)
        c->pl = rr(0, 2), c->pr = rr(0, 2);
    if (i == 0) /* K = 576 over 99+ pixels: several im2row tiles and a partial one */
        c->C = 64, c->KH = c->KW = 3, c->sh = c->sw = c->dh = c->dw = 1, c->H = 11, c->W = 13;
    /* the dilated kernel must fit the padded input */
    while ((c->KH - 1) * c->dh + 1 > c->H + c->pt + c->pb)
        c->H++;
    while ((c->KW - 1) * c->dw + 1 > c->W + c->pl + c->pr)
        c->W++;
}

static void test_conv(void)
{
    for (int i = 0; i < 90; i++) {
        conv_case c;
        conv_case_random(&c, i);
        int64_t OH = (c.H + c.pt + c.pb - ((c.KH - 1) * c.dh + 1)) / c.sh + 1;
        int64_t OW = (c.W + c.pl + c.pr - ((c.KW - 1) * c.dw + 1)) / c.sw + 1;
        int64_t Cg = c.C / c.group, OCg = c.OC / c.group;
        int64_t nx = c.N * c.C * c.H * c.W, nw = c.OC * Cg * c.KH * c.KW, ny = c.N * c.OC * OH * OW;
        uint8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), *wz = malloc((size_t)c.OC);
        int32_t *bias = malloc((size_t)c.OC * 4), *want = malloc((size_t)ny * 4), *got = malloc((size_t)ny * 4);
        float *ws = malloc((size_t)c.OC * 4);
        bool ties = i % 6 == 1; /* power-of-two scales: exact ties in the ONNX form */
        int32_t amp = ties ? 3 : AMPS[i % 3];
        if (ties)
            c.per_ch = false, c.bias = false;
        int32_t zx = code((uint8_t[]){rcode(c.xu8)}, c.xu8, 0), zy = c.yu8 ? rr(0, 255) : rr(-128, 127);
        for (int64_t j = 0; j < c.OC; j++) {
            wz[j] = c.per_ch || j == 0 ? rcode(c.wu8) : wz[0];
            ws[j] = c.per_ch || j == 0 ? (float)rr(1, 1000) * 1e-4f : ws[0];
            bias[j] = c.bias ? rr(-20000, 20000) : 0;
        }
        for (int64_t j = 0; j < nx; j++)
            x[j] = rcode_near(c.xu8, zx, amp);
        for (int64_t j = 0; j < nw; j++)
            w[j] = rcode_near(c.wu8, code(wz, c.wu8, (size_t)(j / (nw / c.OC))), amp);
        float sx = (float)rr(1, 1000) * 1e-3f, sy = (float)rr(1, 1000) * 1e-2f;
        if (ties) /* multiplier 1/4: acc = 4n + 2 is a tie */
            for (int64_t j = 0; j < c.OC; j++)
                sx = 0.5f, ws[j] = 0.5f, sy = 1.0f;

        /* the model */
        char name[64];
        snprintf(name, sizeof name, "conv%d", i);
        pt_model *m = pt_model_new(name);
        int32_t rank = 2 + c.nsp;
        int64_t dx[4] = {c.N, c.C, c.H, c.W}, dwt[4] = {c.OC, Cg, c.KH, c.KW}, dy[4] = {c.N, c.OC, OH, OW};
        if (c.nsp == 1)
            dx[2] = c.W, dwt[2] = c.KW, dy[2] = OW;
        pt_input(m, "x", c.xu8 ? PT_U8 : PT_I8, rank, dx);
        init_codes(m, "w", c.wu8, rank, dwt, w);
        init_scalar_q(m, "xz", c.xu8, zx);
        if (c.per_ch)
            init_codes(m, "wz", c.wu8, 1, &c.OC, wz);
        else
            init_scalar_q(m, "wz", c.wu8, code(wz, c.wu8, 0));
        const char *in_int[] = {"x", "w", "xz", "wz", NULL};
        const char *in_q[] = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", c.bias ? "b" : NULL, NULL};
        if (c.integer) {
            pt_node(m, "ConvInteger", "conv", in_int, (const char *[]){"y", NULL});
        } else {
            init_scalar_f(m, "xs", sx);
            if (c.per_ch)
                pt_init_f32(m, "ws", 1, &c.OC, ws);
            else
                init_scalar_f(m, "ws", ws[0]);
            init_scalar_f(m, "ys", sy);
            init_scalar_q(m, "yz", c.yu8, zy);
            if (c.bias)
                pt_init_raw(m, "b", PT_I32, 1, &c.OC, bias, (size_t)c.OC * 4);
            pt_node(m, "QLinearConv", "conv", in_q, (const char *[]){"y", NULL});
        }
        emu_attr_i(m, "group", c.group);
        int64_t strides[2] = {c.sh, c.sw}, dil[2] = {c.dh, c.dw}, pads[4] = {c.pt, c.pl, c.pb, c.pr};
        int64_t strides1[1] = {c.sw}, dil1[1] = {c.dw}, pads1[2] = {c.pl, c.pr};
        emu_attr_ints(m, "strides", (size_t)c.nsp, c.nsp == 1 ? strides1 : strides);
        emu_attr_ints(m, "dilations", (size_t)c.nsp, c.nsp == 1 ? dil1 : dil);
        emu_attr_ints(m, "pads", 2 * (size_t)c.nsp, c.nsp == 1 ? pads1 : pads);
        pt_output(m, "y", c.integer ? PT_I32 : (c.yu8 ? PT_U8 : PT_I8), rank, dy);

        /* the reference: a direct convolution */
        for (int form = 0; form < (c.integer ? 1 : 2); form++) {
            for (int64_t b = 0; b < c.N; b++)
                for (int64_t oc = 0; oc < c.OC; oc++) {
                    int64_t g = oc / OCg;
                    for (int64_t oh = 0; oh < OH; oh++)
                        for (int64_t ow = 0; ow < OW; ow++) {
                            int64_t s = bias[oc];
                            for (int64_t ci = 0; ci < Cg; ci++)
                                for (int64_t kh = 0; kh < c.KH; kh++)
                                    for (int64_t kw = 0; kw < c.KW; kw++) {
                                        int64_t ih = oh * c.sh - c.pt + kh * c.dh, iw = ow * c.sw - c.pl + kw * c.dw;
                                        if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W)
                                            continue;
                                        size_t xi = (size_t)(((b * c.C + g * Cg + ci) * c.H + ih) * c.W + iw);
                                        size_t wi = (size_t)(((oc * Cg + ci) * c.KH + kh) * c.KW + kw);
                                        s += (int64_t)(code(x, c.xu8, xi) - zx) *
                                             (code(w, c.wu8, wi) - code(wz, c.wu8, (size_t)oc));
                                    }
                            size_t yi = (size_t)(((b * c.OC + oc) * OH + oh) * OW + ow);
                            want[yi] = c.integer ? wrap32(s) : ref_rq(form, wrap32(s), sx, ws[oc], sy, zy, c.yu8);
                        }
                }
            size_t esz = c.integer ? 4 : 1;
            uint8_t *yb = malloc((size_t)ny * esz);
            if (run_model(m, name, form, c.xu8 ? SY_DT_UINT8 : SY_DT_INT8, rank, dx, x, yb, (size_t)ny * esz)) {
                for (int64_t j = 0; j < ny; j++)
                    got[j] = c.integer ? ((int32_t *)yb)[j] : code(yb, c.yu8, (size_t)j);
                int64_t bad = 0, first = -1;
                for (int64_t j = 0; j < ny; j++)
                    if (got[j] != want[j] && bad++ == 0)
                        first = j;
                PT_CHECK(bad == 0,
                         "%s (%s, %s): N%lld C%lld OC%lld g%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld "
                         "p%lld,%lld,%lld,%lld: %lld of %lld differ (first [%lld] %d, want %d)",
                         name, c.integer ? "ConvInteger" : "QLinearConv", FORMS[form], (long long)c.N,
                         (long long)c.C, (long long)c.OC, (long long)c.group, (long long)c.H, (long long)c.W,
                         (long long)c.KH, (long long)c.KW, (long long)c.sh, (long long)c.sw, (long long)c.dh,
                         (long long)c.dw, (long long)c.pt, (long long)c.pl, (long long)c.pb, (long long)c.pr,
                         (long long)bad, (long long)ny, (long long)first, first >= 0 ? got[first] : 0,
                         first >= 0 ? want[first] : 0);
            }
            free(yb);
        }
        pt_model_free(m);
        free(x), free(w), free(wz), free(bias), free(want), free(got), free(ws);
    }
}

static void test_matmul(void)
{
    for (int i = 0; i < 50; i++) {
        bool integer = i % 3 == 2, au8 = rnd() & 1, bu8 = rnd() & 1, yu8 = rnd() & 1;
        bool per_col = rnd() & 1, per_row = integer && (rnd() & 1);
        /* switchyard.quant QMatMul (what the QDQ pass folds Gemm into): B
         * stored [N, K] (transB), int32 bias per column, folded Relu */
        bool qmm = !integer && i % 4 == 0;
        int64_t M = rr(1, 9), K = rr(1, 40), N = rr(1, 11);
        int64_t ba = i % 4 == 1 ? rr(2, 3) : 1, bb = i % 4 == 2 ? rr(2, 3) : 1;
        if (ba > 1 && bb > 1)
            bb = ba;
        int32_t ra = ba > 1 || i % 4 == 3 ? 3 : 2, rb = bb > 1 ? 3 : 2;
        int64_t batch = ba > bb ? ba : bb;
        int64_t na = ba * M * K, nb = bb * K * N, ny = batch * M * N;
        int32_t *bias = calloc((size_t)N, sizeof *bias);
        for (int64_t j = 0; qmm && j < N; j++)
            bias[j] = rr(-3000, 3000);
        uint8_t *a = malloc((size_t)na), *b = malloc((size_t)nb), *bz = malloc((size_t)N), *az = malloc((size_t)M);
        float *bs = malloc((size_t)N * 4);
        int32_t *want = malloc((size_t)ny * 4);
        int32_t amp = AMPS[i % 3];
        for (int64_t j = 0; j < N; j++) {
            bz[j] = per_col || j == 0 ? rcode(bu8) : bz[0];
            bs[j] = per_col || j == 0 ? (float)rr(1, 1000) * 1e-4f : bs[0];
        }
        for (int64_t j = 0; j < M; j++)
            az[j] = per_row || j == 0 ? rcode(au8) : az[0];
        for (int64_t j = 0; j < na; j++)
            a[j] = rcode_near(au8, code(az, au8, (size_t)(j / K % M)), amp);
        for (int64_t j = 0; j < nb; j++)
            b[j] = rcode_near(bu8, code(bz, bu8, (size_t)(qmm ? j / K % N : j % N)), amp);
        float sa = (float)rr(1, 1000) * 1e-3f, sy = (float)rr(1, 1000) * 1e-2f;
        if (i % 5 == 4) /* multiplier 1/4: ties */
            for (int64_t j = 0; j < N; j++)
                sa = 0.5f, bs[j] = 0.5f, sy = 1.0f;
        int32_t zy = yu8 ? rr(0, 255) : rr(-128, 127);

        char name[64];
        snprintf(name, sizeof name, "matmul%d", i);
        pt_model *m = pt_model_new(name);
        int64_t da[3] = {ba, M, K}, db[3] = {bb, qmm ? N : K, qmm ? K : N}, dy[3] = {batch, M, N};
        pt_input(m, "x", au8 ? PT_U8 : PT_I8, ra, ra == 3 ? da : da + 1);
        init_codes(m, "b", bu8, rb, rb == 3 ? db : db + 1, b);
        if (per_row)
            init_codes(m, "az", au8, 1, &M, az);
        else
            init_scalar_q(m, "az", au8, code(az, au8, 0));
        if (per_col)
            init_codes(m, "bz", bu8, 1, &N, bz);
        else
            init_scalar_q(m, "bz", bu8, code(bz, bu8, 0));
        int32_t ry = ra > rb ? ra : rb;
        if (integer) {
            pt_node(m, "MatMulInteger", "mm", (const char *[]){"x", "b", "az", "bz", NULL},
                    (const char *[]){"y", NULL});
        } else {
            init_scalar_f(m, "as", sa);
            if (per_col)
                pt_init_f32(m, "bs", 1, &N, bs);
            else
                init_scalar_f(m, "bs", bs[0]);
            init_scalar_f(m, "ys", sy);
            init_scalar_q(m, "yz", yu8, zy);
            if (qmm) {
                pt_init_raw(m, "bias", PT_I32, 1, &N, bias, (size_t)N * 4);
                emu_opset(m, "switchyard.quant", 1);
                pt_node(m, "QMatMul", "mm",
                        (const char *[]){"x", "as", "az", "b", "bs", "bz", "ys", "yz", "bias", NULL},
                        (const char *[]){"y", NULL});
                emu_domain(m, "switchyard.quant");
                emu_attr_i(m, "transB", 1);
                emu_attr_f(m, "act_min", 0.0f);
            } else {
                pt_node(m, "QLinearMatMul", "mm",
                        (const char *[]){"x", "as", "az", "b", "bs", "bz", "ys", "yz", NULL},
                        (const char *[]){"y", NULL});
            }
        }
        pt_output(m, "y", integer ? PT_I32 : (yu8 ? PT_U8 : PT_I8), ry, ry == 3 ? dy : dy + 1);
        for (int form = 0; form < (integer ? 1 : 2); form++) {
            for (int64_t t = 0; t < batch; t++)
                for (int64_t r = 0; r < M; r++)
                    for (int64_t j = 0; j < N; j++) {
                        int64_t s = bias[j];
                        for (int64_t k = 0; k < K; k++) {
                            size_t ai = (size_t)(((ba > 1 ? t : 0) * M + r) * K + k);
                            size_t bi = qmm ? (size_t)(((bb > 1 ? t : 0) * N + j) * K + k)
                                            : (size_t)(((bb > 1 ? t : 0) * K + k) * N + j);
                            s += (int64_t)(code(a, au8, ai) - code(az, au8, (size_t)r)) *
                                 (code(b, bu8, bi) - code(bz, bu8, (size_t)j));
                        }
                        size_t yi = (size_t)((t * M + r) * N + j);
                        want[yi] = integer ? wrap32(s) : ref_rq_lo(form, wrap32(s), sa, bs[j], sy, zy, yu8, qmm);
                    }
            size_t esz = integer ? 4 : 1;
            uint8_t *yb = malloc((size_t)ny * esz);
            if (run_model(m, name, form, au8 ? SY_DT_UINT8 : SY_DT_INT8, ra, ra == 3 ? da : da + 1, a, yb,
                          (size_t)ny * esz)) {
                int64_t bad = 0;
                for (int64_t j = 0; j < ny; j++)
                    bad += (integer ? ((int32_t *)yb)[j] : code(yb, yu8, (size_t)j)) != want[j];
                PT_CHECK(bad == 0, "%s (%s, %s): batch %lld/%lld M%lld K%lld N%lld per_col %d per_row %d: %lld differ",
                         name, integer ? "MatMulInteger" : qmm ? "QMatMul" : "QLinearMatMul", FORMS[form], (long long)ba, (long long)bb,
                         (long long)M, (long long)K, (long long)N, per_col, per_row, (long long)bad);
            }
            free(yb);
        }
        pt_model_free(m);
        free(a), free(b), free(bz), free(az), free(bs), free(want), free(bias);
    }
}

int main(void)
{
    PT_RUN(test_sdk_gemm);
    PT_RUN(test_sdk_requant);
    PT_RUN(test_conv);
    PT_RUN(test_matmul);
    printf("model cases: %ld ONNX-form outputs off saturation, %ld of them exact ties\n", g_inside, g_ties);
    PT_CHECK(g_inside > 2000 && g_ties > 100, "the random cases must reach unsaturated outputs and ties");
    return pt_result();
}
