/*
 * Concurrent sessions: for every deployment INI in conf/, one environment and
 * 4 threads that each create their own sessions of the same models at the
 * same moment (switchyard.h allows this) and run them. Meant to run under
 * ThreadSanitizer as well (.ci/run's TSan step): placement, planning and
 * running of one session must not touch what another session writes.
 *
 *   test_concurrent_sessions CONF_DIR REQUANT_MODEL
 *
 * Models and expected values, by hand:
 *  - a chain of 96 float nodes (more than the 64 records an emulator's
 *    report starts with), built here: y = x, then 48 times
 *    y = Relu(y + c) with c = +2, -1, +2, -1, ...; x[i] = i - 8 (i < 16).
 *    Every value is a small integer, exact in fp16 as in fp32, so the
 *    expected y is the same loop in the test, on every provider.
 *  - tests/quant/data/requant_ties.onnx: one QMatMul with multiplier 0.25 and
 *    output zero point 100 on x itself (test_requant_session.c). No conf
 *    sets requant, so the onnx form (round half to even) wherever the host
 *    chooses; the HTP and LPAI emulators requantize in the spec's
 *    fixed-point form, round half away (docs/emulators.md):
 *      x         2  -2   6  -6  10  -10   9  127  -128
 *      onnx    100 100 102  98 102   98 102  127    68
 *      htp/lpai 101  99 102  98 103   97 103  127    68
 *
 * Then two environments of the HTP emulator with different SoCs (SM8550,
 * SM8750; created in that order), one thread each placing the chain at once:
 * each thread reads the report of its own environment (report_env, the way
 * `switchyard explain --emulator-report` does) and finds its own SoC and the
 * chain's 96 nodes, although the other environment was created later.
 */
#include "onnx.pb-c.h"
#include "switchyard/switchyard.h"
#include "switchyard/ext/sy_emu_report.h"
#include "sy_test_onnx.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define RUNS 5
#define PAIRS 48
#define N 16

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static int failures;

static void fail(const char *conf, const char *fmt, const char *detail)
{
    pthread_mutex_lock(&fail_lock);
    fprintf(stderr, "FAIL %s: %s%s%s\n", conf, fmt, detail ? ": " : "", detail ? detail : "");
    failures++;
    pthread_mutex_unlock(&fail_lock);
}

/* ---- the float chain, packed with protobuf-c -------------------------------------- */
static uint8_t *make_chain(size_t *len)
{
    static const int64_t shape[] = {1, N};
    sy_test_float_type t;
    sy_test_float_type_init(&t, 2, shape);
    Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT, out = ONNX__VALUE_INFO_PROTO__INIT;
    in.name = "x";
    in.type = &t.type;
    out.name = "y";
    out.type = &t.type;
    Onnx__ValueInfoProto *ins[] = {&in}, *outs[] = {&out};

    static Onnx__NodeProto nodes[2 * PAIRS];
    static Onnx__NodeProto *node_ptrs[2 * PAIRS];
    static char names[2 * PAIRS][16], values[2 * PAIRS + 1][16], consts[2][8];
    static char *node_in[2 * PAIRS][2], *node_out[2 * PAIRS][1];
    static float cval[2] = {2.0f, -1.0f};
    static int64_t one = 1;
    static Onnx__TensorProto init[2];
    static Onnx__TensorProto *init_ptrs[2];
    for (int c = 0; c < 2; c++) {
        snprintf(consts[c], sizeof consts[c], "c%d", c);
        Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
        t.name = consts[c];
        t.has_data_type = 1;
        t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        t.n_dims = 1;
        t.dims = &one;
        t.n_float_data = 1;
        t.float_data = &cval[c];
        init[c] = t;
        init_ptrs[c] = &init[c];
    }
    snprintf(values[0], sizeof values[0], "x");
    for (int k = 0; k < 2 * PAIRS; k++) {
        snprintf(values[k + 1], sizeof values[k + 1], k + 1 == 2 * PAIRS ? "y" : "v%d", k);
        snprintf(names[k], sizeof names[k], "n%d", k);
        Onnx__NodeProto nd = ONNX__NODE_PROTO__INIT;
        nd.name = names[k];
        node_in[k][0] = values[k];
        node_out[k][0] = values[k + 1];
        nd.input = node_in[k];
        nd.output = node_out[k];
        nd.n_output = 1;
        if (k % 2 == 0) {
            nd.op_type = "Add";
            node_in[k][1] = consts[(k / 2) % 2];
            nd.n_input = 2;
        } else {
            nd.op_type = "Relu";
            nd.n_input = 1;
        }
        nodes[k] = nd;
        node_ptrs[k] = &nodes[k];
    }
    Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
    graph.name = "chain";
    graph.n_node = 2 * PAIRS;
    graph.node = node_ptrs;
    graph.n_initializer = 2;
    graph.initializer = init_ptrs;
    graph.n_input = 1;
    graph.input = ins;
    graph.n_output = 1;
    graph.output = outs;
    return sy_test_pack_model(&graph, "test_concurrent_sessions", NULL, len);
}

/* ---- one environment, THREADS sessions at once ------------------------------------- */
typedef struct shared {
    const char *conf;
    sy_env *env;
    const sy_model *chain, *quant;
    pthread_barrier_t start;
} shared;

static const int8_t QX[9] = {2, -2, 6, -6, 10, -10, 9, 127, -128};
static const int8_t QY_ONNX[9] = {100, 100, 102, 98, 102, 98, 102, 127, 68};
static const int8_t QY_AWAY[9] = {101, 99, 102, 98, 103, 97, 103, 127, 68};

/* the codes expected of the session: by the provider its QMatMul runs on */
static const int8_t *expected_q(const sy_session *s)
{
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && !strcmp(p.op, "QMatMul"))
            return !strcmp(p.provider, "htp") || !strcmp(p.provider, "lpai") ? QY_AWAY : QY_ONNX;
    }
    return NULL;
}

static bool run(const char *conf, sy_session *s, const sy_tensor *x, const char *what, const sy_tensor **y)
{
    sy_status *st = sy_session_set_input_by_index(s, 0, x, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, y);
    if (st) {
        fail(conf, what, sy_status_get_message(st));
        sy_status_free(st);
        return false;
    }
    return true;
}

static void *worker(void *arg)
{
    shared *sh = arg;
    float x[N], want[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i - 8);
        float v = x[i];
        for (int p = 0; p < PAIRS; p++) {
            v += p % 2 == 0 ? 2.0f : -1.0f;
            v = v > 0.0f ? v : 0.0f;
        }
        want[i] = v;
    }
    pthread_barrier_wait(&sh->start); /* every thread creates its sessions at once */
    sy_session *sc = NULL, *sq = NULL;
    sy_status *st = sy_session_create(sh->env, sh->chain, NULL, &sc);
    if (!st && sh->quant)
        st = sy_session_create(sh->env, sh->quant, NULL, &sq);
    if (st) {
        fail(sh->conf, "session", sy_status_get_message(st));
        sy_status_free(st);
    }
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {1, N}, .data = x,
                    .nbytes = sizeof x};
    sy_tensor tq = {.struct_size = sizeof tq, .dtype = SY_DT_INT8, .rank = 2, .dims = {1, 9}, .data = (void *)QX,
                    .nbytes = 9};
    const int8_t *qy = sq ? expected_q(sq) : NULL;
    if (sq && !qy)
        fail(sh->conf, "requant_ties has no QMatMul node in the session", NULL);
    for (int r = 0; r < RUNS; r++) {
        const sy_tensor *y = NULL;
        if (sc && run(sh->conf, sc, &tx, "chain run", &y) &&
            (y->nbytes != sizeof want || memcmp(y->data, want, sizeof want)))
            fail(sh->conf, "chain output differs from the hand-computed values", NULL);
        if (sq && qy && run(sh->conf, sq, &tq, "requant run", &y) && (y->nbytes != 9 || memcmp(y->data, qy, 9)))
            fail(sh->conf, "requant_ties output differs from the hand-worked codes", NULL);
    }
    sy_session_release(sc);
    sy_session_release(sq);
    return NULL;
}

static void one_conf(const char *path, const char *requant_model)
{
    shared sh = {.conf = path};
    sy_status *st = sy_env_create(path, &sh.env);
    size_t len = 0;
    uint8_t *buf = make_chain(&len);
    sy_model *chain = NULL, *quant = NULL;
    if (!st)
        st = buf ? sy_model_load_buffer(sh.env, buf, len, "chain", NULL, &chain) : NULL;
    if (!st)
        st = sy_model_load(sh.env, requant_model, &quant);
    free(buf);
    if (st || !chain) {
        fail(path, "environment or model", st ? sy_status_get_message(st) : "out of memory");
        sy_status_free(st);
    } else {
        sh.chain = chain;
        sh.quant = quant;
        pthread_t th[THREADS];
        pthread_barrier_init(&sh.start, NULL, THREADS);
        for (int i = 0; i < THREADS; i++)
            pthread_create(&th[i], NULL, worker, &sh);
        for (int i = 0; i < THREADS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&sh.start);
        printf("%s: %d threads x (create + %d runs) of 2 models\n", path, THREADS, RUNS);
    }
    sy_model_release(chain);
    sy_model_release(quant);
    sy_env_release(sh.env);
}

/* ---- two environments, one thread each: each reads its own report ------------------ */
typedef struct env_thread {
    const char *soc;
    sy_env *env;
    const sy_model *chain;
    pthread_barrier_t *start;
} env_thread;

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void *env_worker(void *arg)
{
    env_thread *t = arg;
    pthread_barrier_wait(t->start);
    sy_session *s = NULL;
    sy_status *st = sy_session_create(t->env, t->chain, NULL, &s);
    if (st) {
        fail(t->soc, "session", sy_status_get_message(st));
        sy_status_free(st);
        return NULL;
    }
    const sy_emu_report_ext *r = sy_get_extension(t->env, SY_EMU_REPORT_PREFIX "htp", SY_EMU_REPORT_VERSION);
    if (!r || r->struct_size < sizeof *r || !r->report_env) {
        fail(t->soc, "qnn_emu.htp has no report_env", NULL);
    } else {
        size_t len = r->report_env(r, NULL, 0) + 1;
        char *buf = malloc(len);
        if (buf) {
            r->report_env(r, buf, len);
            char want[64];
            snprintf(want, sizeof want, "soc=%s ", t->soc);
            if (!strstr(buf, want))
                fail(t->soc, "the environment's report names another SoC", buf);
            /* one record per node of the chain: 2 x PAIRS lines with a vtcm figure */
            if (count_of(buf, " vtcm ") != 2 * PAIRS)
                fail(t->soc, "the environment's report does not list the chain's 96 nodes", buf);
            free(buf);
        }
    }
    sy_session_release(s);
    return NULL;
}

static void two_environments(void)
{
    static const char *const socs[2] = {"SM8550", "SM8750"};
    env_thread t[2];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    size_t len = 0;
    uint8_t *buf = make_chain(&len);
    sy_model *chain[2] = {NULL, NULL};
    bool ok = buf != NULL;
    for (int i = 0; i < 2; i++) {
        char ini[256];
        snprintf(ini, sizeof ini,
                 "[switchyard]\nplugin_dirs = @default\nproviders = htp, cpu_ref\nlog_level = error\n"
                 "[provider.htp]\nsoc_model = %s\n",
                 socs[i]);
        t[i] = (env_thread){.soc = socs[i], .start = &start};
        sy_status *st = sy_env_create_from_string(ini, NULL, &t[i].env);
        if (!st && buf)
            st = sy_model_load_buffer(t[i].env, buf, len, "chain", NULL, &chain[i]);
        if (st) {
            fail(socs[i], "environment or model", sy_status_get_message(st));
            sy_status_free(st);
            ok = false;
        }
        t[i].chain = chain[i];
    }
    free(buf);
    if (ok) {
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, env_worker, &t[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        printf("two htp environments (%s, %s), one thread each: each report is its own\n", socs[0], socs[1]);
    }
    pthread_barrier_destroy(&start);
    for (int i = 0; i < 2; i++) {
        sy_model_release(chain[i]);
        sy_env_release(t[i].env);
    }
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_concurrent_sessions CONF_DIR REQUANT_MODEL\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "FAIL: cannot read %s\n", argv[1]);
        return 1;
    }
    char *names[64];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 64) {
        size_t l = strlen(de->d_name);
        if (l > 4 && !strcmp(de->d_name + l - 4, ".ini"))
            names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp);
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        one_conf(path, argv[2]);
        free(names[i]);
    }
    two_environments();
    if (!n) {
        fprintf(stderr, "FAIL: no .ini in %s\n", argv[1]);
        return 1;
    }
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("concurrent sessions: %d configurations, no failure\n", n);
    return 0;
}
