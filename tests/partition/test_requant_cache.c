/*
 * A compiled partition of integer nodes carries the requantization form it
 * was compiled with: test_npu (fuse = compile, ops = QAdd,QMul) compiles
 * QAdd -> QMul under one form; the compile cache is accepted under the same
 * form (whatever sets it) and refused under the other, naming both
 * compatibility strings; the compiled outputs follow the form at ties.
 *
 * "qchain" model, int8 codes in and out, x [8]:
 *   qadd0: t = QAdd(x, 0.5, -, k, 0.5, 0, 2.0, 1)     multiplier 0.5/2 = 0.25
 *   qmul0: y = QMul(t, 2.0, 1, c, 0.125, 0, 1.0, -3)  multiplier 2*0.125/1 = 0.25
 * (QAdd/QMul inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp; x's
 * zero point is omitted, i.e. 0.) t and y are both graph outputs.
 *
 * Expected codes, by hand. Every accumulator is even, so gemmlowp's
 * SRDHM(acc, 2^30) is exact (acc/2) and only its RoundingDivideByPOT(., 1)
 * rounds: half away from zero. onnx: acc * 0.25 rounded half to even.
 *   x            2    6   10   -2   -6    4  100 -128
 *   k            0    0    0    0    0    4  120 -128
 *   acc1 = x+k   2    6   10   -2   -6    8  220 -256
 *   acc1/4     0.5  1.5  2.5 -0.5 -1.5    2   55  -64
 *   onnx         0    2    2    0   -2    2   55  -64   -> t = +1
 *   gemmlowp     1    2    3   -1   -2    2   55  -64   -> t = +1
 *   c            2    2    2    2    2    6    6   10
 *   onnx:  acc2 = (t-1)*c = 0 4 4 0 -4 12 330 -640, /4 = 0 1 1 0 -1 3 82.5 -160
 *          -> 0 1 1 0 -1 3 82 -160, y = -3 -> -3 -2 -2 -3 -4 0 79 -128 (clamped)
 *   gemmlowp: acc2 = 2 4 6 -2 -4 12 330 -640, /4 = 0.5 1 1.5 -0.5 -1 3 82.5 -160
 *          -> 1 1 2 -1 -1 3 83 -160, y = -3 -> -2 -2 -1 -4 -4 0 80 -128 (clamped)
 */
#include "pt_common.h"

#include <stdint.h>

#define N 8
static const int64_t DIMS[1] = {N};
static const int64_t SCALAR_DIMS[1] = {1}; /* not read for rank 0 */

static const int8_t X[N] = {2, 6, 10, -2, -6, 4, 100, -128};
static const int8_t K[N] = {0, 0, 0, 0, 0, 4, 120, -128};
static const int8_t C[N] = {2, 2, 2, 2, 2, 6, 6, 10};
static const int8_t T_ONNX[N] = {1, 3, 3, 1, -1, 3, 56, -63};
static const int8_t T_GEMMLOWP[N] = {2, 3, 4, 0, -1, 3, 56, -63};
static const int8_t Y_ONNX[N] = {-3, -2, -2, -3, -4, 0, 79, -128};
static const int8_t Y_GEMMLOWP[N] = {-2, -2, -1, -4, -4, 0, 80, -128};

/* what test_npu reports for this env plus the form the core appends */
#define COMPAT_BASE "test_npu 0.1.0 ops=QAdd,QMul fuse=2"

static void scalar_f32(pt_model *m, const char *name, float v) { pt_init_raw(m, name, PT_F32, 0, SCALAR_DIMS, &v, sizeof v); }
static void scalar_i8(pt_model *m, const char *name, int8_t v) { pt_init_raw(m, name, PT_I8, 0, SCALAR_DIMS, &v, sizeof v); }

static pt_model *qchain_model(void)
{
    pt_model *m = pt_model_new("qchain");
    pt_opset(m, "switchyard.quant", 1);
    pt_input(m, "x", PT_I8, 1, DIMS);
    scalar_f32(m, "xs", 0.5f);
    pt_init_raw(m, "k", PT_I8, 1, DIMS, K, sizeof K);
    scalar_f32(m, "ks", 0.5f);
    scalar_i8(m, "kz", 0);
    scalar_f32(m, "ts", 2.0f);
    scalar_i8(m, "tz", 1);
    pt_init_raw(m, "c", PT_I8, 1, DIMS, C, sizeof C);
    scalar_f32(m, "cs", 0.125f);
    scalar_i8(m, "cz", 0);
    scalar_f32(m, "ys", 1.0f);
    scalar_i8(m, "yz", -3);
    pt_node(m, "QAdd", "qadd0", (const char *[]){"x", "xs", "", "k", "ks", "kz", "ts", "tz", NULL},
            (const char *[]){"t", NULL});
    pt_domain(m, "switchyard.quant");
    pt_node(m, "QMul", "qmul0", (const char *[]){"t", "ts", "tz", "c", "cs", "cz", "ys", "yz", NULL},
            (const char *[]){"y", NULL});
    pt_domain(m, "switchyard.quant");
    pt_output(m, "y", PT_I8, 1, DIMS);
    pt_output(m, "t", PT_I8, 1, DIMS);
    return m;
}

/* test_npu compiles QAdd and QMul (schema from ops_quant); `extra` adds INI
 * lines to [provider.test_npu] */
static sy_env *qenv(const char *fuse, const char *extra)
{
    return pt_env("plugins = %s/libsy_ops_quant.so\nproviders = test_npu, cpu_ref\n"
                  "[provider.test_npu]\nfuse = %s\nops = QAdd,QMul\n%s",
                  PT_PLUGIN_DIR, fuse, extra);
}

/* one run: y and t codes into the arrays */
static sy_status *run(sy_session *s, int8_t *y, int8_t *t)
{
    int8_t x[N];
    memcpy(x, X, sizeof x);
    sy_tensor tx;
    memset(&tx, 0, sizeof tx);
    tx.struct_size = sizeof tx;
    tx.dtype = SY_DT_INT8;
    tx.rank = 1;
    tx.dims[0] = N;
    tx.data = x;
    tx.nbytes = sizeof x;
    const sy_tensor *ty, *tt;
    sy_status *st;
    if ((st = sy_session_set_input(s, "x", &tx, SY_INPUT_COPY)) || (st = sy_session_run(s)) ||
        (st = sy_session_get_output_by_name(s, "y", &ty)) || (st = sy_session_get_output_by_name(s, "t", &tt)))
        return st;
    memset(y, 0x55, N); /* not a code of either table: a wrong output fails the checks */
    memset(t, 0x55, N);
    bool ok = ty->dtype == SY_DT_INT8 && ty->nbytes == N && tt->dtype == SY_DT_INT8 && tt->nbytes == N;
    PT_CHECK(ok, "outputs are %s [%zu bytes] and %s [%zu bytes], expected int8 [8]", sy_dtype_name(ty->dtype), ty->nbytes,
             sy_dtype_name(tt->dtype), tt->nbytes);
    if (ok) {
        memcpy(y, ty->data, N);
        memcpy(t, tt->data, N);
    }
    return NULL;
}

static void check_codes(const char *what, const int8_t *got, const int8_t *want)
{
    for (int i = 0; i < N; i++)
        PT_CHECK(got[i] == want[i], "%s[%d] = %d, expected %d", what, i, got[i], want[i]);
}

static sy_session_options opts(const char *requant, const char *cache)
{
    sy_session_options o = {.struct_size = sizeof o, .strict = -1, .compiled_cache = cache, .requant = requant};
    return o;
}

/* the session's partition: one, by test_npu, of both nodes, compiled, and
 * from the cache or not as `cached` says */
static void check_partition(sy_session *s, bool want_cached)
{
    const char *prov = NULL;
    uint32_t nn = 0;
    bool compiled = false, cached = !want_cached;
    PT_CHECK(sy_session_partition_count(s) == 1, "one partition, got %zu", sy_session_partition_count(s));
    PT_CHECK(sy_session_partition_info(s, 0, &prov, &nn, &compiled, &cached), "partition info");
    PT_CHECK(prov && !strcmp(prov, "test_npu") && nn == 2 && compiled && cached == want_cached,
             "partition: %s, %u nodes, compiled %d, cached %d (want cached %d)", prov ? prov : "(none)", nn, compiled,
             cached, want_cached);
}

/* Compiled under each form (no cache): the outputs are that form's codes, and
 * each node records the form and where it came from. Unfused test_npu
 * kernels give the same codes. */
static void test_forms_differ(void)
{
    pt_model *m = qchain_model();
    sy_env *env = qenv("compile", ""), *plain = qenv("none", "");
    sy_model *model = env ? pt_load(env, m) : NULL, *pmodel = plain ? pt_load(plain, m) : NULL;
    sy_session *s = NULL;
    int8_t y[N], t[N];
    PT_REQUIRE(model && pmodel, "setup");
    static const struct {
        const char *form;
        const int8_t *y, *t;
    } cases[] = {{"gemmlowp", Y_GEMMLOWP, T_GEMMLOWP}, {"onnx", Y_ONNX, T_ONNX}};
    for (size_t c = 0; c < 2; c++) {
        sy_session_options o = opts(cases[c].form, NULL);
        const char *e = pt_msg(sy_session_create(env, model, &o, &s));
        PT_REQUIRE(!e[0], "session (%s): %s", cases[c].form, e);
        check_partition(s, false);
        for (size_t i = 0; i < 2; i++) {
            const char *src = NULL, *f = sy_session_node_requant(s, i, &src);
            PT_CHECK(f && !strcmp(f, cases[c].form) && src && !strcmp(src, "session"), "node %zu: requant %s (%s)", i,
                     f ? f : "(none)", src ? src : "-");
        }
        e = pt_msg(run(s, y, t));
        PT_REQUIRE(!e[0], "run (%s): %s", cases[c].form, e);
        check_codes(cases[c].form, y, cases[c].y);
        check_codes(cases[c].form, t, cases[c].t);
        sy_session_release(s);
        s = NULL;

        /* the same form through test_npu's own kernels, one node at a time */
        e = pt_msg(sy_session_create(plain, pmodel, &o, &s));
        PT_REQUIRE(!e[0], "unfused session (%s): %s", cases[c].form, e);
        PT_CHECK(sy_session_partition_count(s) == 0, "unfused: no partition, got %zu", sy_session_partition_count(s));
        e = pt_msg(run(s, y, t));
        PT_REQUIRE(!e[0], "unfused run (%s): %s", cases[c].form, e);
        check_codes(cases[c].form, y, cases[c].y);
        check_codes(cases[c].form, t, cases[c].t);
        sy_session_release(s);
        s = NULL;
    }
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_model_release(pmodel);
    sy_env_release(env);
    sy_env_release(plain);
    pt_model_free(m);
}

/* A cache compiled under gemmlowp: accepted under gemmlowp (session option
 * or [provider.test_npu] requant) with the same bytes; refused under onnx
 * (session option, provider key, or the default), naming both strings. */
static void test_cache_by_form(void)
{
    pt_model *m = qchain_model();
    char path[] = "/tmp/sy_rq_cache_test.XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    sy_env *env = qenv("compile", "");
    sy_env *pgl = qenv("compile", "requant = gemmlowp\n"), *ponnx = qenv("compile", "requant = onnx\n");
    sy_model *model = env ? pt_load(env, m) : NULL;
    sy_model *mgl = pgl ? pt_load(pgl, m) : NULL, *monnx = ponnx ? pt_load(ponnx, m) : NULL;
    sy_session *s = NULL, *c = NULL;
    int8_t y[N], t[N], cy[N], ct[N];
    PT_REQUIRE(fd >= 0 && model && mgl && monnx, "setup");
    sy_session_options o = opts("gemmlowp", NULL);
    const char *e = pt_msg(sy_session_create(env, model, &o, &s));
    PT_REQUIRE(!e[0], "compiling session: %s", e);
    check_partition(s, false);
    e = pt_msg(run(s, y, t));
    PT_REQUIRE(!e[0], "run: %s", e);
    check_codes("compiled y", y, Y_GEMMLOWP);
    check_codes("compiled t", t, T_GEMMLOWP);
    e = pt_msg(sy_session_save_compiled(s, path));
    PT_REQUIRE(!e[0], "save: %s", e);

    /* (1) the same form: from the session option, then from the provider key */
    struct {
        sy_env *env;
        sy_model *model;
        const char *requant, *what;
    } same[] = {{env, model, "gemmlowp", "session requant = gemmlowp"},
                {pgl, mgl, NULL, "[provider.test_npu] requant = gemmlowp"}};
    for (size_t k = 0; k < 2; k++) {
        sy_session_options co = opts(same[k].requant, path);
        e = pt_msg(sy_session_create(same[k].env, same[k].model, &co, &c));
        PT_REQUIRE(!e[0], "%s: cache refused: %s", same[k].what, e);
        check_partition(c, true);
        e = pt_msg(run(c, cy, ct));
        PT_REQUIRE(!e[0], "%s: cached run: %s", same[k].what, e);
        PT_CHECK(!memcmp(y, cy, N) && !memcmp(t, ct, N), "%s: cached run == compiled run", same[k].what);
        check_codes("cached y", cy, Y_GEMMLOWP);
        check_codes("cached t", ct, T_GEMMLOWP);
        sy_session_release(c);
        c = NULL;
    }

    /* (2) the other form: refused before anything runs, naming both strings */
    struct {
        sy_env *env;
        sy_model *model;
        const char *requant, *what;
    } other[] = {{env, model, "onnx", "session requant = onnx"},
                 {ponnx, monnx, NULL, "[provider.test_npu] requant = onnx"},
                 {env, model, NULL, "the default form (onnx)"}};
    for (size_t k = 0; k < 3; k++) {
        sy_session_options co = opts(other[k].requant, path);
        sy_status *st = sy_session_create(other[k].env, other[k].model, &co, &c);
        PT_CHECK(st && sy_status_get_code(st) == SY_ERR_ABI_MISMATCH, "%s: expected SY_ERR_ABI_MISMATCH, got %s",
                 other[k].what, st ? sy_status_code_name(sy_status_get_code(st)) : "success");
        const char *msg = pt_msg(st);
        PT_HAS(msg, "\"" COMPAT_BASE " requant=gemmlowp\"");
        PT_HAS(msg, "\"" COMPAT_BASE " requant=onnx\"");
        PT_HAS(msg, path);
        PT_CHECK(c == NULL, "%s: no session from a refused cache", other[k].what);
        sy_session_release(c);
        c = NULL;
    }
done:
    sy_session_release(s);
    sy_session_release(c);
    sy_model_release(model);
    sy_model_release(mgl);
    sy_model_release(monnx);
    sy_env_release(env);
    sy_env_release(pgl);
    sy_env_release(ponnx);
    pt_model_free(m);
    unlink(path);
}

int main(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/libsy_ops_quant.so", PT_PLUGIN_DIR);
    if (access(path, R_OK) != 0) {
        printf("skip: %s not built (QAdd/QMul schemas come from ops_quant)\n", path);
        return 77;
    }
    PT_RUN(test_forms_differ);
    PT_RUN(test_cache_by_form);
    return pt_result();
}
