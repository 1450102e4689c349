/*
 * ABI stability: a plugin built against the ABI 1.0 headers (libsy_abi10.so)
 * or the ABI 1.1 headers (libsy_abi11.so) must load into the current core
 * and work, and today's headers must keep that layout (every member at the
 * same offset with the same size, no struct smaller, fixed-size structs
 * unchanged, constants unchanged).
 *
 *   test_abi_stability PATH/libsy_abi10.so
 *   test_abi_stability --abi11 PATH/libsy_abi11.so
 */
#include "abi_layout.h"
#include "cts_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fprintf(stderr, "\n");                                                                                 \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

static void compare_layout(const char *abi, const abi_entry *v10, size_t n10, const abi_entry *cur, size_t ncur)
{
    CHECK(n10 == ncur, "entry lists differ in length");
    for (size_t i = 0; i < n10 && i < ncur; i++) {
        const abi_entry *a = &v10[i], *b = &cur[i];
        switch (a->kind) {
        case ABI_STRUCT:
            CHECK(b->size >= a->size, "%s shrank: %zu bytes in ABI %s, %zu now", a->name, a->size, abi, b->size);
            break;
        case ABI_FIXED_STRUCT:
            CHECK(b->size == a->size, "%s (used in arrays) changed size: %zu in ABI %s, %zu now", a->name, a->size, abi,
                  b->size);
            break;
        case ABI_MEMBER:
            CHECK(b->offset == a->offset && b->size == a->size,
                  "%s moved or changed size: offset %zu size %zu in ABI %s, offset %zu size %zu now", a->name,
                  a->offset, a->size, abi, b->offset, b->size);
            break;
        case ABI_CONSTANT:
            CHECK(b->value == a->value, "%s changed value: %lld in ABI %s, %lld now", a->name, a->value, abi, b->value);
            break;
        }
    }
    printf("layout: %zu structs, members and constants of ABI %s unchanged\n", n10, abi);
}

static void test_layout(void)
{
    size_t n10, ncur;
    const abi_entry *v10 = abi_layout_10(&n10), *cur = abi_layout_cur(&ncur);
    compare_layout("1.0", v10, n10, cur, ncur);
}

static void test_layout_11(void)
{
    size_t n11, ncur;
    const abi_entry *v11 = abi_layout_11(&n11), *cur = abi_layout_cur11(&ncur);
    compare_layout("1.1", v11, n11, cur, ncur);
}

static const char *plugin_path;

static sy_env *env_with(const char *extra)
{
    char ini[4096];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = @default\nplugins = %s\nlog_level = error\n%s",
             plugin_path, extra);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    CHECK(!st, "environment: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return env;
}

static void make_input(cts_node *n, const char *domain, const char *op, int64_t opset, const float *x, size_t count)
{
    memset(n, 0, sizeof *n);
    n->op = op;
    n->domain = domain;
    n->opset = opset;
    n->n_inputs = 1;
    n->n_outputs = 1;
    n->in[0].dtype = SY_DT_FLOAT32;
    n->in[0].rank = 1;
    n->in[0].dims[0] = (int64_t)count;
    n->in[0].data = (void *)x;
    n->in[0].nbytes = count * sizeof(float);
}

/* run n once; out receives `count` floats; returns the placement's provider */
static bool run_once(sy_session *s, const cts_node *n, float *out, size_t count)
{
    const sy_tensor *y = NULL;
    sy_status *st = cts_feed(s, n);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, &y);
    CHECK(!st, "run: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (!y || y->nbytes != count * sizeof(float))
        return false;
    memcpy(out, y->data, y->nbytes);
    return true;
}

static const char *placed_on(const sy_session *s, sy_node_placement *out)
{
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && !strcmp(p.name, "node")) {
            *out = p;
            return p.provider;
        }
    }
    return NULL;
}

static void test_plugin(void)
{
    sy_env *env = env_with("providers = abi10_npu, cpu_ref\n");
    if (!env)
        return;
    /* loaded, as an ABI 1.0 plugin, with everything it registered */
    bool found = false;
    for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
        sy_plugin_info pi = {.struct_size = sizeof pi};
        if (!sy_env_plugin_info(env, i, &pi) || !pi.name || strcmp(pi.name, "abi10"))
            continue;
        found = true;
        CHECK(pi.loaded, "abi10 refused: %s", pi.refusal ? pi.refusal : "?");
        CHECK(pi.abi_major == 1 && pi.abi_minor == 0, "abi10 reports ABI %u.%u", pi.abi_major, pi.abi_minor);
        CHECK(pi.n_schemas == 2 && pi.n_kernels == 3 && pi.n_providers == 1 && pi.n_extensions == 1,
              "abi10 registered %u schemas, %u kernels, %u providers, %u extensions", pi.n_schemas, pi.n_kernels,
              pi.n_providers, pi.n_extensions);
    }
    CHECK(found, "abi10 not listed");
    CHECK(sy_env_has_op(env, "com.switchyard.abi10", "Twice", 1), "schema Twice not registered");

    /* extension table */
    typedef struct {
        uint32_t struct_size;
        int (*answer)(void);
    } abi10_ext;
    const abi10_ext *ext = sy_get_extension(env, "abi10_ext", 1);
    CHECK(ext && ext->struct_size == sizeof *ext && ext->answer() == 42, "extension abi10_ext v1");

    const float x[4] = {-1.5f, 0.0f, 2.0f, 3.25f};
    float y[4];
    cts_node n;
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_node_placement pl;

    /* custom op with a 1.0 schema and a cpu_ref kernel (attribute default) */
    make_input(&n, "com.switchyard.abi10", "Twice", 13, x, 4);
    sy_status *st = cts_session(env, &n, "twice", &m, &s);
    CHECK(!st, "Twice session: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (s && run_once(s, &n, y, 4))
        for (int i = 0; i < 4; i++)
            CHECK(y[i] == 2 * x[i], "Twice y[%d] = %g", i, y[i]);
    sy_session_release(s);
    sy_model_release(m);

    /* stateful kernel: runs count up, reset clears */
    make_input(&n, "com.switchyard.abi10", "Counter", 13, x, 4);
    st = cts_session(env, &n, "counter", &m, &s);
    CHECK(!st, "Counter session: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (s) {
        run_once(s, &n, y, 4);
        run_once(s, &n, y, 4);
        CHECK(y[0] == x[0] + 2, "Counter after two runs: %g", y[0]);
        sy_session_reset(s);
        run_once(s, &n, y, 4);
        CHECK(y[0] == x[0] + 1, "Counter after reset: %g", y[0]);
    }
    sy_session_release(s);
    sy_model_release(m);

    /* provider with its own domain: Relu placed on it, copies through it */
    make_input(&n, NULL, "Relu", 13, x, 4);
    st = cts_session(env, &n, "relu", &m, &s);
    CHECK(!st, "Relu session: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (s) {
        const char *prov = placed_on(s, &pl);
        CHECK(prov && !strcmp(prov, "abi10_npu"), "Relu on %s", prov ? prov : "?");
        bool via = false;
        for (size_t i = 0; i < sy_session_copy_count(s); i++) {
            sy_copy_info ci = {.struct_size = sizeof ci};
            if (sy_session_copy_info(s, i, &ci) && ci.via && !strcmp(ci.via, "abi10_npu"))
                via = true;
        }
        CHECK(via, "no copy ran through abi10_npu's copy()");
        if (run_once(s, &n, y, 4))
            for (int i = 0; i < 4; i++)
                CHECK(y[i] == (x[i] > 0 ? x[i] : 0), "Relu y[%d] = %g", i, y[i]);
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);

    /* provider options reach create(); check_node's decline is explained */
    env = env_with("providers = abi10_npu, cpu_ref\n[provider.abi10_npu]\ndecline_relu = true\n");
    if (!env)
        return;
    st = cts_session(env, &n, "relu", &m, &s);
    CHECK(!st, "Relu session: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (s) {
        const char *prov = placed_on(s, &pl);
        CHECK(prov && !strcmp(prov, "cpu_ref"), "declined Relu on %s", prov ? prov : "?");
        CHECK(pl.reason_text && strstr(pl.reason_text, "decline_relu = true"), "reason: %s",
              pl.reason_text ? pl.reason_text : "(none)");
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

/* The ABI 1.1 plugin: loaded as 1.1; its fused partition is grouped,
 * compiled and run by the current core, with its provider's options. */
static void test_plugin_11(void)
{
    sy_env *env = env_with("providers = abi11_npu, cpu_ref\n[provider.abi11_npu]\ngain = 3\n");
    if (!env)
        return;
    bool found = false;
    for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
        sy_plugin_info pi = {.struct_size = sizeof pi};
        if (!sy_env_plugin_info(env, i, &pi) || !pi.name || strcmp(pi.name, "abi11"))
            continue;
        found = true;
        CHECK(pi.loaded, "abi11 refused: %s", pi.refusal ? pi.refusal : "?");
        CHECK(pi.abi_major == 1 && pi.abi_minor == 1, "abi11 reports ABI %u.%u", pi.abi_major, pi.abi_minor);
        CHECK(pi.n_kernels == 1 && pi.n_providers == 1 && pi.n_extensions == 1,
              "abi11 registered %u kernels, %u providers, %u extensions", pi.n_kernels, pi.n_providers,
              pi.n_extensions);
    }
    CHECK(found, "abi11 not listed");
    typedef struct {
        uint32_t struct_size;
        int (*compiled_runs)(void);
    } abi11_ext;
    const abi11_ext *ext = sy_get_extension(env, "abi11_ext", 1);
    CHECK(ext && ext->struct_size == sizeof *ext, "extension abi11_ext v1");

    const float x[4] = {-1.5f, 0.0f, 2.0f, 3.25f};
    float y[4];
    cts_node n;
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_node_placement pl;
    make_input(&n, NULL, "Relu", 13, x, 4);
    sy_status *st = cts_session(env, &n, "relu", &m, &s);
    CHECK(!st, "Relu session: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (s) {
        const char *prov = placed_on(s, &pl);
        CHECK(prov && !strcmp(prov, "abi11_npu"), "Relu on %s", prov ? prov : "?");
        const char *pp = NULL;
        uint32_t nn = 0;
        bool compiled = false, cached = true;
        CHECK(sy_session_partition_count(s) == 1 && sy_session_partition_info(s, 0, &pp, &nn, &compiled, &cached) &&
                  pp && !strcmp(pp, "abi11_npu") && nn == 1 && compiled && !cached,
              "expected one compiled abi11_npu partition of one node");
        int before = ext ? ext->compiled_runs() : 0;
        /* y = gain * max(x, 0) with gain 3: 0, 0, 6, 9.75 */
        if (run_once(s, &n, y, 4))
            for (int i = 0; i < 4; i++)
                CHECK(y[i] == 3.0f * (x[i] > 0 ? x[i] : 0.0f), "Relu y[%d] = %g", i, y[i]);
        CHECK(!ext || ext->compiled_runs() == before + 1, "the partition did not run compiled");
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--abi11")) {
        plugin_path = argv[2];
        test_layout_11();
        test_plugin_11();
        if (failures) {
            fprintf(stderr, "%d check(s) failed\n", failures);
            return 1;
        }
        printf("test_abi_stability: the ABI 1.1 plugin loads and runs; layout unchanged\n");
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: test_abi_stability PATH/libsy_abi10.so | --abi11 PATH/libsy_abi11.so\n");
        return 2;
    }
    plugin_path = argv[1];
    test_layout();
    test_plugin();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_abi_stability: the ABI 1.0 plugin loads and runs; layout unchanged\n");
    return 0;
}
