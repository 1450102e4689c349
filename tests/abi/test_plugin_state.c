/*
 * Per-environment plugin state (ABI 1.2): two environments of one process
 * with different plugin options, created, interleaved and run from two
 * threads, each giving its own bit-exact results; and a plugin whose state
 * is released exactly once per environment.
 *
 *   test_plugin_state PLUGIN_DIR REQUANT_MODEL
 *
 * PLUGIN_DIR holds libsy_state_count.so (plugin_state_count.c) and
 * libsy_example_scale.so (docs/examples/plugin_example.c); REQUANT_MODEL is
 * tests/quant/data/requant_ties.onnx.
 *
 * Expected values, by hand:
 *  - requant_ties.onnx folds into one QMatMul, multiplier 0.25, output zero
 *    point 100, on x itself (see test_requant_session.c):
 *      x          2    -2    6   -6   10   -10    9    127   -128
 *      x * 0.25   0.5 -0.5  1.5 -1.5  2.5  -2.5  2.25 31.75  -32
 *      onnx       0    0    2   -2    2    -2     2    32     -32  (half to even)
 *      gemmlowp   1   -1    2   -2    3    -3     3    32     -32  (half away)
 *    plus 100, saturated to int8 (132 -> 127).
 *  - example_scale: y = factor * x, exact for these small integers.
 *  - state_count AddK: y = x + k, exact.
 *  - quant_int4 recipe: weights w[i] = ((i mod 15) - 7) * 2^(i / 16), i < 64.
 *    Each 16-block holds every residue mod 15, so block b has max |w| =
 *    7 * 2^b. Symmetric int4 uses [-7, 7]: scale = max |w| / 7, code =
 *    round-half-even(w / scale). block_size 16: scale 2^b, code = (i mod 15)
 *    - 7 exactly. block_size 64: one block, scale 8.
 */
#include "onnx.pb-c.h"
#include "switchyard/ext/sy_emu_report.h"
#include "switchyard/switchyard.h"
#include "switchyard/sy_sdk.h" /* sy_quant_recipe: the types of the recipe extension */
#include "sy_test.h"
#include "sy_test_onnx.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* two threads check at once: sy_test.h's counters are taken under a lock */
static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
#undef CHECK
#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        bool ok_ = (cond);                                                                                         \
        pthread_mutex_lock(&check_lock);                                                                           \
        sy_test_checks_++;                                                                                         \
        if (!ok_) {                                                                                                \
            sy_test_failures_++;                                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                        \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
        }                                                                                                          \
        pthread_mutex_unlock(&check_lock);                                                                         \
    } while (0)

static const char *plugin_dir, *requant_model;

/* ---- a one-node float model, packed with protobuf-c ---------------------------- */
static uint8_t *make_model(const char *op, const char *domain, int64_t n, size_t *len)
{
    return sy_test_one_node_model("one_node", "node", op, domain, n, "test_plugin_state", len);
}

static sy_env *env_with(const char *sections)
{
    char ini[2048];
    /* state_npu first when state_count loads (fail = true refuses it) */
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugin_dirs = @default\nplugins = %s/libsy_state_count.so, %s/libsy_example_scale.so\n"
             "%slog_level = error\n%s",
             plugin_dir, plugin_dir, strstr(sections, "fail = true") ? "" : "providers = state_npu, cpu_ref\n",
             sections);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(!st, "environment: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return env;
}

/* a session of the one-node float model `op` */
static sy_session *float_session(sy_env *env, const char *op, const char *domain, sy_model **m)
{
    size_t len = 0;
    uint8_t *buf = make_model(op, domain, 4, &len);
    sy_session *s = NULL;
    sy_status *st = buf ? sy_model_load_buffer(env, buf, len, op, NULL, m) : NULL;
    if (!st && buf)
        st = sy_session_create(env, *m, NULL, &s);
    CHECK(buf && !st, "%s session: %s", op, st ? sy_status_get_message(st) : "out of memory");
    sy_status_free(st);
    free(buf);
    return s;
}

static bool run_float(sy_session *s, const float *x, float *y)
{
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {4}, .data = (void *)x,
                   .nbytes = 4 * sizeof(float)};
    const sy_tensor *out = NULL;
    sy_status *st = sy_session_set_input_by_index(s, 0, &t, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, &out);
    CHECK(!st && out && out->nbytes == 4 * sizeof(float), "run: %s", st ? sy_status_get_message(st) : "bad output");
    sy_status_free(st);
    if (!out || out->nbytes != 4 * sizeof(float))
        return false;
    memcpy(y, out->data, 4 * sizeof(float));
    return true;
}

/* ---- one environment, as one thread drives it ------------------------------------ */
#define NQ 9
static const int8_t QX[NQ] = {2, -2, 6, -6, 10, -10, 9, 127, -128};
static const int8_t Y_ONNX[NQ] = {100, 100, 102, 98, 102, 98, 102, 127, 68};
static const int8_t Y_GEMMLOWP[NQ] = {101, 99, 102, 98, 103, 97, 103, 127, 68};

typedef struct lane {
    const char *requant; /* onnx | gemmlowp */
    int block;           /* [plugin.quant_int4] block_size */
    float factor;        /* [plugin.example_scale] factor */
    float k;             /* [plugin.state_count] k */
} lane;

static pthread_barrier_t sync2;

/* int4 recipe of this env: block size and the codes of the weights above,
 * each block through the recipe's observer, quantize and dequantize */
static void check_int4(sy_env *env, const lane *L)
{
    const sy_quant_recipe *r = sy_get_extension(env, "quant_recipe.int4", SY_QUANT_RECIPE_VERSION);
    CHECK(r && r->weights && r->observer_new, "quant_recipe.int4 missing");
    if (!r || !r->weights || !r->observer_new)
        return;
    CHECK(r->block_size == L->block, "int4 recipe block_size %d, the env says %d", r->block_size, L->block);
    int bs = r->block_size > 0 && r->block_size <= 64 ? r->block_size : 64;
    float w[64];
    for (int i = 0; i < 64; i++)
        w[i] = (float)((i % 15) - 7) * (float)(1 << (i / 16));
    for (int b0 = 0; b0 < 64; b0 += bs) {
        int n = 64 - b0 < bs ? 64 - b0 : bs;
        /* the scale by hand: 2^b for blocks of 16, 8 for the one block of 64 */
        float scale = L->block == 16 ? (float)(1 << (b0 / 16)) : 8.0f;
        sy_observer *obs = NULL;
        sy_quant_params qp = {0};
        sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {n}, .data = w + b0,
                       .nbytes = (size_t)n * sizeof(float)};
        sy_status *st = r->observer_new(r->weights, SY_CALIB_MINMAX, 0.0, &obs);
        if (!st)
            st = r->weights->observer_update(obs, &t);
        if (!st)
            st = r->weights->observer_finalize(obs, &qp);
        uint8_t codes[32] = {0};
        float back[64];
        if (!st)
            st = r->weights->quantize(w + b0, (size_t)n, &qp, 0, codes);
        if (!st)
            st = r->weights->dequantize(codes, (size_t)n, &qp, 0, back);
        CHECK(!st, "int4 block at %d: %s", b0, st ? sy_status_get_message(st) : "");
        if (!st) {
            CHECK(qp.scales[0] == scale, "block at %d: scale %g, expected %g", b0, (double)qp.scales[0], (double)scale);
            for (int i = 0; i < n; i++) {
                int nib = (codes[i / 2] >> (4 * (i % 2))) & 0xF;
                int code = nib >= 8 ? nib - 16 : nib;
                int want = (int)rintf(w[b0 + i] / scale); /* round half to even */
                CHECK(code == want && back[i] == (float)want * scale, "w[%d] = %g: code %d (%g), expected %d",
                      b0 + i, (double)w[b0 + i], code, (double)back[i], want);
            }
        }
        sy_status_free(st);
        if (r->params_free)
            r->params_free(&qp);
        if (obs)
            r->weights->observer_release(obs);
    }
}

static void *drive(void *arg)
{
    const lane *L = arg;
    char sections[512];
    snprintf(sections, sizeof sections,
             "[plugin.ops_quant]\nrequant = %s\n[plugin.quant_int4]\nblock_size = %d\n"
             "[plugin.example_scale]\nfactor = %g\n[plugin.state_count]\nk = %g\n",
             L->requant, L->block, (double)L->factor, (double)L->k);
    sy_env *env = env_with(sections);
    pthread_barrier_wait(&sync2); /* both environments exist before either builds sessions */
    sy_model *mq = NULL, *ms = NULL, *mk = NULL;
    sy_session *sq = NULL, *ss = NULL, *sk = NULL;
    if (env) {
        sy_status *st = sy_model_load(env, requant_model, &mq);
        if (!st)
            st = sy_session_create(env, mq, NULL, &sq);
        CHECK(!st, "requant session: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        ss = float_session(env, "Scale", "com.example", &ms);
        sk = float_session(env, "AddK", "test.switchyard.state", &mk);
    }
    pthread_barrier_wait(&sync2); /* ... and both have sessions before either runs */
    const int8_t *want = !strcmp(L->requant, "gemmlowp") ? Y_GEMMLOWP : Y_ONNX;
    for (int it = 0; it < 20; it++) {
        if (sq) {
            sy_tensor x = {.struct_size = sizeof x, .dtype = SY_DT_INT8, .rank = 2, .dims = {1, NQ},
                           .data = (void *)QX, .nbytes = NQ};
            const sy_tensor *y = NULL;
            sy_status *st = sy_session_set_input_by_index(sq, 0, &x, SY_INPUT_COPY);
            if (!st)
                st = sy_session_run(sq);
            if (!st)
                st = sy_session_get_output(sq, 0, &y);
            CHECK(!st && y && y->nbytes == NQ && !memcmp(y->data, want, NQ), "requant %s, iteration %d: %s",
                  L->requant, it, st ? sy_status_get_message(st) : "wrong bytes");
            sy_status_free(st);
        }
        const float x[4] = {-2.0f, 0.0f, 1.0f, 3.0f};
        float y[4];
        if (ss && run_float(ss, x, y))
            for (int i = 0; i < 4; i++)
                CHECK(y[i] == L->factor * x[i], "Scale factor %g: y[%d] = %g", (double)L->factor, i, (double)y[i]);
        if (sk && run_float(sk, x, y))
            for (int i = 0; i < 4; i++)
                CHECK(y[i] == x[i] + L->k, "AddK k %g: y[%d] = %g", (double)L->k, i, (double)y[i]);
        if (env && it % 5 == 0)
            check_int4(env, L);
        pthread_barrier_wait(&sync2); /* lockstep: the two environments alternate with each other */
    }
    if (sq) /* the form and where it came from, as explain shows it */
        for (size_t i = 0; i < sy_session_node_count(sq); i++) {
            sy_node_placement p = {.struct_size = sizeof p};
            const char *src = NULL, *form = sy_session_node_requant(sq, i, &src);
            if (sy_session_node_placement(sq, i, &p) && !strcmp(p.op, "QMatMul"))
                CHECK(form && !strcmp(form, L->requant) && src && !strcmp(src, "[plugin.ops_quant]"),
                      "QMatMul records requant=%s (%s), expected %s ([plugin.ops_quant])", form ? form : "-",
                      src ? src : "-", L->requant);
        }
    if (sk) {
        sy_node_placement p = {.struct_size = sizeof p};
        CHECK(sy_session_node_placement(sk, 0, &p) && p.provider && !strcmp(p.provider, "state_npu"),
              "AddK placed on %s: %s", p.provider ? p.provider : "?", p.reason_text ? p.reason_text : "");
    }
    sy_session_release(sq);
    sy_session_release(ss);
    sy_session_release(sk);
    sy_model_release(mq);
    sy_model_release(ms);
    sy_model_release(mk);
    sy_env_release(env);
    return NULL;
}

typedef struct state_count_stats {
    uint32_t struct_size;
    int (*made)(void);
    int (*released)(void);
    int (*bad_release)(void);
    int (*bad_callback)(void);
} state_count_stats;

static void test_two_environments_and_release_once(void)
{
    /* holds libsy_state_count.so mapped, so its counters survive the others */
    sy_env *keep = env_with("");
    REQUIRE(keep, "first environment");
    const state_count_stats *c = sy_get_extension(keep, "state_count.stats", 1);
    REQUIRE(c && c->struct_size >= sizeof *c, "state_count.stats missing");
    CHECK(c->made() == 1 && c->released() == 0, "one env: %d made, %d released", c->made(), c->released());

    lane lanes[2] = {{"gemmlowp", 16, 3.0f, 10.0f}, {"onnx", 64, 5.0f, 20.0f}};
    pthread_t th[2];
    pthread_barrier_init(&sync2, NULL, 2);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, drive, &lanes[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&sync2);
    CHECK(c->made() == 3 && c->released() == 2, "after two envs: %d made, %d released (expected 3, 2)", c->made(),
          c->released());

    /* init fails after setting its state: released right away, once */
    sy_env *failed = env_with("[plugin.state_count]\nfail = true\n");
    CHECK(c->made() == 4 && c->released() == 3, "failed init: %d made, %d released (expected 4, 3)", c->made(),
          c->released());
    sy_env_release(failed);
    CHECK(c->released() == 3, "releasing the env of a failed init released again: %d", c->released());

    /* a session outlives its environment's release: the state stays until
     * the session is gone, then goes once */
    sy_env *e = env_with("[plugin.state_count]\nk = 7\n");
    sy_model *m = NULL;
    sy_session *s = e ? float_session(e, "AddK", "test.switchyard.state", &m) : NULL;
    sy_env_release(e);
    CHECK(c->made() == 5 && c->released() == 3, "env released under a live session: %d made, %d released",
          c->made(), c->released());
    const float x[4] = {1, 2, 3, 4};
    float y[4];
    if (s && run_float(s, x, y))
        CHECK(y[0] == 8.0f && y[3] == 11.0f, "AddK k 7 after the env's release: %g %g", (double)y[0],
              (double)y[3]);
    sy_session_release(s);
    sy_model_release(m);
    CHECK(c->released() == 4, "after the session: %d released (expected 4)", c->released());
    CHECK(c->bad_release() == 0, "%d releases of a state that was not live", c->bad_release());
    CHECK(c->bad_callback() == 0, "%d callbacks saw no or a foreign state", c->bad_callback());
    printf("plugin state: %d made, %d released, each once\n", c->made(), c->released());
    sy_env_release(keep);
}

/* ---- the emulators' report tables, per environment -------------------------------- */
typedef sy_emu_report_ext report_ext; /* switchyard/ext/sy_emu_report.h */

typedef struct lpai_ext { /* providers/lpai/lpai.c */
    uint32_t struct_size;
    size_t (*report)(char *buf, size_t len);
    const char *(*compat)(void);
    uint64_t (*persistent_size)(void);
    bool (*check_client_mem)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, char *, size_t);
    size_t (*report_env)(const struct lpai_ext *self, char *buf, size_t len);
    const char *(*compat_env)(const struct lpai_ext *self);
    uint64_t (*persistent_size_env)(const struct lpai_ext *self);
    bool (*check_client_mem_env)(const struct lpai_ext *self, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, char *,
                                 size_t);
} lpai_ext;

static sy_env *plain_env(const char *ini)
{
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(!st, "environment: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return env;
}

/* Each environment's table answers for its own provider; version 1's
 * handle-less functions answer for the one created last. */
static void test_emulator_reports_per_environment(void)
{
    sy_env *a = plain_env("[switchyard]\nplugin_dirs = @default\nproviders = htp, lpai, cpu_ref\nlog_level = error\n"
                          "[provider.htp]\nsoc_model = SM8550\n[provider.lpai]\nhw_version = v6\nmem_alignment = 128\n");
    sy_env *b = plain_env("[switchyard]\nplugin_dirs = @default\nproviders = htp, lpai, cpu_ref\nlog_level = error\n"
                          "[provider.htp]\nsoc_model = SM8750\n[provider.lpai]\nhw_version = v6\nmem_alignment = 512\n");
    const report_ext *ha = a ? sy_get_extension(a, "qnn_emu.htp", 1) : NULL, *hb = b ? sy_get_extension(b, "qnn_emu.htp", 1) : NULL;
    const lpai_ext *la = a ? sy_get_extension(a, "qnn_emu.lpai", 1) : NULL, *lb = b ? sy_get_extension(b, "qnn_emu.lpai", 1) : NULL;
    CHECK(ha && hb && ha != hb && ha->struct_size >= sizeof *ha, "one qnn_emu.htp table per environment");
    CHECK(la && lb && la != lb && la->struct_size >= sizeof *la, "one qnn_emu.lpai table per environment");
    if (ha && hb && ha->struct_size >= sizeof *ha) {
        CHECK_STR_HAS(ha->compat_env(ha), "soc=SM8550");
        CHECK_STR_HAS(hb->compat_env(hb), "soc=SM8750");
        CHECK_STR_HAS(ha->compat(), "soc=SM8750"); /* v1: the latest environment */
        char buf[512];
        ha->report_env(ha, buf, sizeof buf);
        CHECK_STR_HAS(buf, "soc=SM8550");
    }
    if (la && lb && la->struct_size >= sizeof *la) {
        char why[256] = "";
        /* a buffer at 0x1080: 128-byte aligned, not 512-byte aligned */
        CHECK(la->check_client_mem_env(la, 64, 64, 0x1080, 0, 0x2000, why, sizeof why),
              "mem_alignment 128 refused 0x1080: %s", why);
        CHECK(!lb->check_client_mem_env(lb, 64, 64, 0x1080, 0, 0x2000, why, sizeof why),
              "mem_alignment 512 accepted 0x1080");
        CHECK_STR_HAS(why, "not 512-byte aligned");
        CHECK_STR_HAS(la->compat_env(la), "align=128");
    }
    sy_env_release(b);
    if (ha && ha->struct_size >= sizeof *ha)
        CHECK_STR_HAS(ha->compat_env(ha), "soc=SM8550"); /* unaffected by the other environment's release */
    sy_env_release(a);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_plugin_state PLUGIN_DIR REQUANT_MODEL\n");
        return 2;
    }
    plugin_dir = argv[1];
    requant_model = argv[2];
    RUN_TEST(test_two_environments_and_release_once);
    RUN_TEST(test_emulator_reports_per_environment);
    return SY_TEST_MAIN_RESULT();
}
