/*
 * The riscv_mcu codegen capture belongs to the session it records
 * (providers/riscv_mcu/riscv_mcu.c, docs/mcu.md "Where the capture lives").
 *
 *   test_mcu_capture PLUGIN_DIR GRAPHS_DIR WORK_DIR
 *
 * - other_sessions_stay_out: env A (ws63) captures graphs/elementwise_chain;
 *   between its capture_run and capture_emit, env B (hi3066) runs its own
 *   sessions of another model (one of them captured too) and env A runs a
 *   second, uncaptured session of its model. A's package must be byte for
 *   byte the package A writes alone. With the process-wide capture of the
 *   first layout (a plugin that predates session_create, which this test
 *   then drives through capture_begin/emit) B's kernels entered A's record
 *   and B's target replaced A's: the package differed.
 * - two_threads: two environments generate packages for two models at the
 *   same time from two threads, three rounds; each package equals the one
 *   written single-threaded (labelled tsan: .ci/run runs it under
 *   ThreadSanitizer, where a shared record is a reported race).
 * - misuse: the retired entry points refuse naming the new ones; a table
 *   used with another environment, an emit before any run, and an emit
 *   after the session's release are errors that say so.
 */
#include "sy_test.h"

#include <switchyard/ext/sy_mcu_codegen.h>
#include <switchyard/switchyard.h>
#include <switchyard/sy_tools.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>

static const char *plugin_dir, *graphs_dir, *work_dir;

/* the files of a package that depend on the record and the target (README
 * and the build files name the output folder) */
static const char *const package_files[] = {"src/model.c", "include/sy_model.h", "src/test_input.c",
                                            "expected_output.txt"};
#define N_FILES (sizeof package_files / sizeof package_files[0])

typedef struct package {
    char *file[N_FILES];
    size_t size[N_FILES];
    char summary[512];
} package;

static void package_free(package *p)
{
    for (size_t i = 0; i < N_FILES; i++)
        free(p->file[i]);
    memset(p, 0, sizeof *p);
}

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = 0;
        *size = (size_t)n;
    }
    return b;
}

static bool package_read(const char *dir, package *p)
{
    char path[1024];
    for (size_t i = 0; i < N_FILES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, package_files[i]);
        if (!(p->file[i] = slurp(path, &p->size[i])))
            return false;
    }
    return true;
}

/* which file differs, or NULL */
static const char *package_diff(const package *a, const package *b)
{
    for (size_t i = 0; i < N_FILES; i++)
        if (a->size[i] != b->size[i] || memcmp(a->file[i], b->file[i], a->size[i]))
            return package_files[i];
    return strcmp(a->summary, b->summary) ? "the summary" : NULL;
}

static sy_env *env_for(const char *target)
{
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugin_dirs = %s\nproviders = riscv_mcu\nstrict = true\nthreads = 1\n"
             "[provider.riscv_mcu]\ntarget = %s\n",
             plugin_dir, target);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(!st, "env %s: %s", target, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return env;
}

static const sy_mcu_codegen_ext *ext_of(sy_env *env)
{
    return env ? sy_get_extension(env, SY_MCU_EXT_NAME, SY_MCU_EXT_VERSION) : NULL;
}

/* the inputs: sin(0.1 i), like `switchyard codegen`'s pattern */
typedef struct inputs {
    size_t n;
    sy_tensor t[4];
    float *data[4];
} inputs;

static bool inputs_make(const sy_model *m, inputs *in)
{
    memset(in, 0, sizeof *in);
    in->n = sy_model_input_count(m);
    if (in->n > 4)
        return false;
    for (size_t i = 0; i < in->n; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        if (!sy_model_input_info(m, i, &vi) || vi.dtype != SY_DT_FLOAT32)
            return false;
        sy_tensor *t = &in->t[i];
        t->struct_size = sizeof *t;
        t->dtype = SY_DT_FLOAT32;
        t->rank = vi.rank;
        int64_t n = 1;
        for (int32_t d = 0; d < vi.rank; d++)
            n *= (t->dims[d] = vi.dims[d] > 0 ? vi.dims[d] : 1);
        in->data[i] = malloc((size_t)n * sizeof(float));
        if (!in->data[i])
            return false;
        for (int64_t k = 0; k < n; k++)
            in->data[i][k] = (float)sin(0.1 * (double)k);
        t->data = in->data[i];
        t->nbytes = (size_t)n * sizeof(float);
        t->name = vi.name;
    }
    return true;
}

static void inputs_free(inputs *in)
{
    for (size_t i = 0; i < in->n; i++)
        free(in->data[i]);
}

static sy_status *set_inputs(sy_session *s, const inputs *in)
{
    sy_status *st = NULL;
    for (size_t i = 0; i < in->n && !st; i++)
        st = sy_session_set_input_by_index(s, i, &in->t[i], SY_INPUT_COPY);
    return st;
}

/* a plain run of `m` in `env`, not captured */
static sy_status *plain_run(sy_env *env, const sy_model *m)
{
    inputs in;
    if (!inputs_make(m, &in))
        return sy_status_create(SY_ERR_INTERNAL, "plain_run: unexpected inputs");
    sy_session *s = NULL;
    sy_status *st = sy_session_create(env, m, NULL, &s);
    if (!st)
        st = set_inputs(s, &in);
    if (!st)
        st = sy_session_run(s);
    sy_session_release(s);
    inputs_free(&in);
    return st;
}

typedef sy_status *(*between_fn)(void *user);

/* Write the package of `m` in `env` to `dir`, running between(user) after
 * the captured run and before the emit. A plugin that predates the session
 * capture is driven through the first layout's entry points, so that this
 * test shows what the process-wide capture did. */
static sy_status *generate(sy_env *env, const sy_model *m, const char *name, const char *dir, between_fn between,
                           void *user, package *out)
{
    const sy_mcu_codegen_ext *x = ext_of(env);
    if (!x)
        return sy_status_create(SY_ERR_NOT_FOUND, "no %s extension", SY_MCU_EXT_NAME);
    bool v1 = !sy_mcu_ext_has_capture(x);
    inputs in;
    if (!inputs_make(m, &in))
        return sy_status_create(SY_ERR_INTERNAL, "%s: unexpected inputs", name);
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_session *s = NULL;
    sy_mcu_capture *cap = NULL;
    sy_status *st = v1 ? sy_session_create(env, m, &so, &s) : x->session_create(x, env, m, &so, &s, &cap);
    if (!st)
        st = set_inputs(s, &in);
    if (!st && v1) {
        x->capture_begin();
        st = sy_session_run(s);
    } else if (!st) {
        st = x->capture_run(cap);
    }
    if (!st && between)
        st = between(user);
    const sy_tensor *outs[4] = {0};
    sy_tensor named[4];
    size_t n_out = sy_model_output_count(m);
    if (!st && n_out > 4)
        st = sy_status_create(SY_ERR_INTERNAL, "%s: too many outputs", name);
    for (size_t i = 0; i < n_out && !st; i++) {
        const sy_tensor *t = NULL;
        st = sy_session_get_output(s, i, &t);
        if (!st) {
            sy_value_info vi = {.struct_size = sizeof vi};
            sy_model_output_info(m, i, &vi);
            named[i] = *t;
            named[i].name = vi.name;
            outs[i] = &named[i];
        }
    }
    size_t ws = 0;
    for (size_t d = 0; !st && d < sy_session_memory_domain_count(s); d++) {
        sy_memory_report r = {.struct_size = sizeof r};
        if (sy_session_memory_report(s, d, &r) && r.domain && !strcmp(r.domain, "mcu_sram"))
            ws = r.arena_bytes;
    }
    const sy_tensor *ins[4] = {&in.t[0], &in.t[1], &in.t[2], &in.t[3]};
    sy_mcu_codegen_request req = {.struct_size = sizeof req,
                                  .dir = dir,
                                  .model_name = name,
                                  .workspace_bytes = ws,
                                  .n_inputs = (uint32_t)in.n,
                                  .n_outputs = (uint32_t)n_out,
                                  .inputs = ins,
                                  .outputs = outs};
    memset(out, 0, sizeof *out);
    if (!st)
        st = v1 ? x->emit(&req, out->summary, sizeof out->summary)
                : x->capture_emit(cap, &req, out->summary, sizeof out->summary);
    if (!st && !package_read(dir, out))
        st = sy_status_create(SY_ERR_IO, "%s: the package in %s is incomplete", name, dir);
    if (v1)
        x->capture_end();
    else
        x->capture_release(cap);
    sy_session_release(s);
    inputs_free(&in);
    return st;
}

static char *path_in(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* the second model: graphs/mlp.onnx quantized to int8 (QMatMul, QAdd) */
static sy_model *load_mlp_int8(sy_env *env)
{
    char *src = path_in(graphs_dir, "mlp.onnx"), *calib = path_in(graphs_dir, "mlp/test_data_set_0"),
         *dst = path_in(work_dir, "mlp_int8.onnx");
    sy_env *qenv = NULL;
    sy_status *st = sy_env_create(NULL, &qenv); /* the default plugins: the int8 recipe and cpu_ref */
    sy_quantize_options qo = {.struct_size = sizeof qo, .skip_evaluation = 1};
    sy_calib_source cs = {.struct_size = sizeof cs, .dir = calib};
    if (!st)
        st = sy_quantize(qenv, src, NULL, 0, &qo, &cs, dst, NULL);
    sy_model *m = NULL;
    if (!st)
        st = sy_model_load(env, dst, &m);
    CHECK(!st, "mlp int8: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    sy_env_release(qenv);
    free(src);
    free(calib);
    free(dst);
    return m;
}

static sy_model *load_chain(sy_env *env)
{
    char *p = path_in(graphs_dir, "elementwise_chain.onnx");
    sy_model *m = NULL;
    sy_status *st = sy_model_load(env, p, &m);
    CHECK(!st, "%s: %s", p, st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    free(p);
    return m;
}

/* ---- other sessions, of this environment and another, stay out ---------- */

typedef struct interference {
    sy_env *env_b, *env_a;
    const sy_model *m_b, *m_a;
    package pkg_b;
} interference;

static sy_status *interfere(void *user)
{
    interference *it = user;
    char *dir = path_in(work_dir, "b_between");
    /* env B: a captured codegen of its own and a plain run */
    sy_status *st = generate(it->env_b, it->m_b, "mlp_int8", dir, NULL, NULL, &it->pkg_b);
    free(dir);
    if (!st)
        st = plain_run(it->env_b, it->m_b);
    /* env A: a second session of the same model, not captured */
    if (!st)
        st = plain_run(it->env_a, it->m_a);
    return st;
}

static void other_sessions_stay_out(void)
{
    sy_env *a = env_for("ws63"), *b = env_for("hi3066");
    REQUIRE(a && b, "environments");
    sy_model *chain = load_chain(a), *mlp = load_mlp_int8(b);
    package alone, b_alone, with;
    memset(&alone, 0, sizeof alone);
    memset(&b_alone, 0, sizeof b_alone);
    memset(&with, 0, sizeof with);
    if (chain && mlp) {
        char *d_alone = path_in(work_dir, "a_alone"), *d_b = path_in(work_dir, "b_alone"),
             *d_with = path_in(work_dir, "a_with_b");
        sy_status *st = generate(a, chain, "elementwise_chain", d_alone, NULL, NULL, &alone);
        CHECK(!st, "A alone: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        st = generate(b, mlp, "mlp_int8", d_b, NULL, NULL, &b_alone);
        CHECK(!st, "B alone: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        /* hand-checked figures of the package A writes alone: the chain's 32
         * nodes on the ws63 */
        CHECK_STR_HAS(alone.summary, "target ws63 (rv32imfc): 32 nodes");
        CHECK_STR_HAS(b_alone.summary, "target hi3066");
        interference it = {.env_b = b, .env_a = a, .m_b = mlp, .m_a = chain};
        st = generate(a, chain, "elementwise_chain", d_with, interfere, &it, &with);
        CHECK(!st, "A with B between: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        const char *d = package_diff(&alone, &with);
        CHECK(!d, "A's package differs in %s when B ran between A's capture and emit:\n  alone: %s\n  with:  %s", d,
              alone.summary, with.summary);
        d = package_diff(&b_alone, &it.pkg_b);
        CHECK(!d, "B's package written inside A's capture differs in %s", d);
        package_free(&it.pkg_b);
        free(d_alone);
        free(d_b);
        free(d_with);
    }
    package_free(&alone);
    package_free(&b_alone);
    package_free(&with);
    sy_model_release(chain);
    sy_model_release(mlp);
    sy_env_release(a);
    sy_env_release(b);
}

/* ---- two threads generate at once ---------------------------------------- */

typedef struct lane {
    sy_env *env;
    const sy_model *m;
    const char *name;
    char dir[1024];
    const package *want;
    int round;
    const char *diff;
    sy_status *st;
} lane;

static void *lane_run(void *arg)
{
    lane *l = arg;
    package got;
    l->st = generate(l->env, l->m, l->name, l->dir, NULL, NULL, &got);
    l->diff = l->st ? NULL : package_diff(l->want, &got);
    package_free(&got);
    return NULL;
}

static void two_threads(void)
{
    sy_env *a = env_for("ws63"), *b = env_for("ws63");
    REQUIRE(a && b, "environments");
    sy_model *chain = load_chain(a), *mlp = load_mlp_int8(b);
    package want[2];
    memset(want, 0, sizeof want);
    if (chain && mlp) {
        lane lanes[2] = {{.env = a, .m = chain, .name = "elementwise_chain", .want = &want[0]},
                         {.env = b, .m = mlp, .name = "mlp_int8", .want = &want[1]}};
        bool ok = true;
        for (int i = 0; i < 2; i++) {
            snprintf(lanes[i].dir, sizeof lanes[i].dir, "%s/thread_ref_%d", work_dir, i);
            sy_status *st = generate(lanes[i].env, lanes[i].m, lanes[i].name, lanes[i].dir, NULL, NULL, &want[i]);
            CHECK(!st, "%s single-threaded: %s", lanes[i].name, st ? sy_status_get_message(st) : "");
            ok &= !st;
            sy_status_free(st);
        }
        CHECK(package_diff(&want[0], &want[1]) != NULL, "the two models give the same package");
        for (int round = 0; round < 3 && ok; round++) {
            pthread_t th[2];
            for (int i = 0; i < 2; i++) {
                snprintf(lanes[i].dir, sizeof lanes[i].dir, "%s/thread_%d_round_%d", work_dir, i, round);
                pthread_create(&th[i], NULL, lane_run, &lanes[i]);
            }
            for (int i = 0; i < 2; i++) {
                pthread_join(th[i], NULL);
                CHECK(!lanes[i].st, "round %d %s: %s", round, lanes[i].name,
                      lanes[i].st ? sy_status_get_message(lanes[i].st) : "");
                CHECK(!lanes[i].diff, "round %d %s: %s differs from the single-threaded package", round,
                      lanes[i].name, lanes[i].diff);
                sy_status_free(lanes[i].st);
                lanes[i].st = NULL;
            }
        }
    }
    package_free(&want[0]);
    package_free(&want[1]);
    sy_model_release(chain);
    sy_model_release(mlp);
    sy_env_release(a);
    sy_env_release(b);
}

/* ---- refusals ------------------------------------------------------------ */

static void check_refusal(sy_status *st, sy_status_code code, const char *what, const char *says)
{
    CHECK(st && sy_status_get_code(st) == code, "%s: expected %s, got %s", what, sy_status_code_name(code),
          st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    if (st)
        CHECK_STR_HAS(sy_status_get_message(st), says);
    sy_status_free(st);
}

static void misuse(void)
{
    sy_env *a = env_for("ws63"), *b = env_for("hi3066");
    REQUIRE(a && b, "environments");
    const sy_mcu_codegen_ext *xa = ext_of(a), *xb = ext_of(b);
    REQUIRE(xa && xb && sy_mcu_ext_has_capture(xa), "the extension with session captures");
    CHECK(xa != xb, "each environment has its own table");
    sy_model *chain = load_chain(a), *chain_b = load_chain(b);
    REQUIRE(chain && chain_b, "model");
    char summary[256] = "";
    sy_mcu_codegen_request req = {.struct_size = sizeof req, .dir = work_dir, .model_name = "x"};
    /* the first layout refuses and names what replaces it */
    xa->capture_begin();
    xa->capture_end();
    check_refusal(xa->emit(&req, summary, sizeof summary), SY_ERR_UNSUPPORTED, "emit", "capture_emit");
    sy_mcu_train_request treq = {.struct_size = sizeof treq};
    check_refusal(xa->emit_train(&treq, summary, sizeof summary), SY_ERR_UNSUPPORTED, "emit_train",
                  "emit_train_env");
    /* A's table with env B: nothing is created */
    sy_session *s = (sy_session *)&req;
    sy_mcu_capture *cap = (sy_mcu_capture *)&req;
    check_refusal(xa->session_create(xa, b, chain_b, NULL, &s, &cap), SY_ERR_INVALID_ARGUMENT, "A's table, env B",
                  "not the environment");
    CHECK(!s && !cap, "a refused session_create leaves no session or capture");
    /* an environment whose riscv_mcu has no target */
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n", plugin_dir);
    sy_env *none = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &none);
    CHECK(!st, "env without a target: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    const sy_mcu_codegen_ext *xn = ext_of(none);
    if (xn)
        check_refusal(xn->session_create(xn, none, chain, NULL, &s, &cap), SY_ERR_INVALID_CONFIG, "no target",
                      "target");
    sy_env_release(none);
    /* emit before a run, then after the session is gone */
    st = xa->session_create(xa, a, chain, NULL, &s, &cap);
    CHECK(!st, "session_create: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (cap) {
        check_refusal(xa->capture_emit(cap, &req, summary, sizeof summary), SY_ERR_INVALID_ARGUMENT,
                      "emit before a run", "no capture_run");
        sy_session_release(s);
        check_refusal(xa->capture_run(cap), SY_ERR_INVALID_ARGUMENT, "run after release", "released");
        check_refusal(xa->capture_emit(cap, &req, summary, sizeof summary), SY_ERR_INVALID_ARGUMENT,
                      "emit after release", "released");
        xa->capture_release(cap);
    }
    /* and the other order: the capture first, then the session */
    st = xa->session_create(xa, a, chain, NULL, &s, &cap);
    CHECK(!st, "session_create: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    xa->capture_release(cap);
    sy_session_release(s);
    sy_model_release(chain);
    sy_model_release(chain_b);
    sy_env_release(a);
    sy_env_release(b);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PLUGIN_DIR GRAPHS_DIR WORK_DIR\n", argv[0]);
        return 2;
    }
    plugin_dir = argv[1];
    graphs_dir = argv[2];
    work_dir = argv[3];
    mkdir(work_dir, 0777);
    RUN_TEST(other_sessions_stay_out);
    sy_env *probe = env_for("ws63");
    const sy_mcu_codegen_ext *x = ext_of(probe);
    bool current = x && sy_mcu_ext_has_capture(x);
    sy_env_release(probe);
    if (current) { /* the rest needs the session capture */
        RUN_TEST(two_threads);
        RUN_TEST(misuse);
    }
    return SY_TEST_MAIN_RESULT();
}
