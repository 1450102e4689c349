/*
 * Unit test of the my_npu plugin, through the public API of an installed
 * Switchyard, the way a host application uses it:
 *
 *   test_my_npu PATH/libsy_my_npu.so
 *
 *  - Add (broadcast) -> Relu -> MatMul all run on my_npu under strict mode,
 *    with the expected numbers;
 *  - a 3-D MatMul is declined by the kernel's accepts() and falls back to
 *    cpu_ref, with my_npu's reason in the placement;
 *  - max_elements declines with reason code SY_REASON_MEMORY's text;
 *  - an unknown key, and a bad value, in [provider.my_npu] fail the
 *    environment with SY_ERR_INVALID_CONFIG naming the key/value.
 */
#include <switchyard/switchyard.h>

#include "onnx_writer.h"

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

static const char *plugin_path;

static sy_env *env_with(const char *extra, sy_status **st_out)
{
    char ini[4096];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugin_dirs = @default\nplugins = %s\nlog_level = error\n%s", plugin_path, extra);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st_out)
        *st_out = st;
    else if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        sy_status_free(st);
    }
    return env;
}

/* x[2,3] + b[3] -> Relu -> MatMul with w[3,2] -> y[2,2]; x, b graph inputs */
static sy_model *chain_model(sy_env *env, int32_t x_rank)
{
    ow_model m;
    ow_init(&m, 13);
    int64_t xd[3] = {1, 2, 3};
    ow_input(&m, "x", x_rank, x_rank == 2 ? xd + 1 : xd);
    ow_input(&m, "b", 1, (int64_t[]){3});
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    ow_weight(&m, "w", 2, (int64_t[]){3, 2}, w);
    ow_node(&m, "Add", "add", 2, (const char *[]){"x", "b"}, "s");
    ow_node(&m, "Relu", "relu", 1, (const char *[]){"s"}, "r");
    ow_node(&m, "MatMul", "mm", 2, (const char *[]){"r", "w"}, "y");
    ow_output(&m, "y");
    uint8_t *bytes = NULL;
    size_t len = 0;
    sy_model *model = NULL;
    if (ow_finish(&m, &bytes, &len) == 0) {
        sy_status *st = sy_model_load_buffer(env, bytes, len, "chain", NULL, &model);
        if (st) {
            fprintf(stderr, "model: %s\n", sy_status_get_message(st));
            sy_status_free(st);
        }
    }
    free(bytes);
    ow_free(&m);
    return model;
}

static const char *provider_of(const sy_session *s, const char *node, sy_node_placement *out)
{
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && !strcmp(p.name, node)) {
            if (out)
                *out = p;
            return p.provider;
        }
    }
    return NULL;
}

static void test_chain_on_my_npu(void)
{
    sy_env *env = env_with("providers = my_npu\nstrict = true\n", NULL);
    CHECK(env, "environment with providers = my_npu");
    if (!env)
        return;
    sy_model *m = chain_model(env, 2);
    sy_session *s = NULL;
    sy_status *st = m ? sy_session_create(env, m, NULL, &s) : NULL;
    CHECK(m && !st, "session: %s", st ? sy_status_get_message(st) : "no model");
    sy_status_free(st);
    if (s) {
        CHECK(!strcmp(provider_of(s, "add", NULL), "my_npu"), "add on my_npu");
        CHECK(!strcmp(provider_of(s, "relu", NULL), "my_npu"), "relu on my_npu");
        CHECK(!strcmp(provider_of(s, "mm", NULL), "my_npu"), "mm on my_npu");
        float x[6] = {1, -2, 3, -4, 5, -6}, b[3] = {0.5f, 1, -1};
        sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {2, 3}, .data = x,
                        .nbytes = sizeof x};
        sy_tensor tb = {.struct_size = sizeof tb, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {3}, .data = b,
                        .nbytes = sizeof b};
        const sy_tensor *y = NULL;
        st = sy_session_set_input(s, "x", &tx, SY_INPUT_COPY);
        if (!st)
            st = sy_session_set_input(s, "b", &tb, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        if (!st)
            st = sy_session_get_output(s, 0, &y);
        CHECK(!st, "run: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        if (y) {
            /* r = relu(x + b) = [[1.5, 0, 2], [0, 6, 0]]; y = r @ w */
            const float want[4] = {1.5f * 1 + 2 * 5, 1.5f * 2 + 2 * 6, 6 * 3, 6 * 4};
            CHECK(y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 2, "y is [2,2]");
            for (int i = 0; i < 4 && y->rank == 2; i++)
                CHECK(fabsf(((const float *)y->data)[i] - want[i]) < 1e-5f, "y[%d] = %g, expected %g", i,
                      ((const float *)y->data)[i], want[i]);
        }
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

static void test_declines(void)
{
    /* 3-D MatMul: the kernel's accepts() declines, cpu_ref takes it */
    sy_env *env = env_with("providers = my_npu, cpu_ref\n", NULL);
    CHECK(env, "environment with providers = my_npu, cpu_ref");
    if (!env)
        return;
    sy_model *m = chain_model(env, 3);
    sy_session *s = NULL;
    sy_status *st = m ? sy_session_create(env, m, NULL, &s) : NULL;
    CHECK(m && !st, "session: %s", st ? sy_status_get_message(st) : "no model");
    sy_status_free(st);
    sy_node_placement p;
    if (s && provider_of(s, "mm", &p)) {
        CHECK(!strcmp(p.provider, "cpu_ref"), "3-D MatMul on %s, expected cpu_ref", p.provider);
        CHECK(p.reason_text && strstr(p.reason_text, "2-D inputs only"), "reason: %s",
              p.reason_text ? p.reason_text : "(none)");
        CHECK(!strcmp(provider_of(s, "add", NULL), "my_npu"), "add still on my_npu");
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);

    /* max_elements = 4: the [2,3] Add and Relu outputs are too big */
    env = env_with("providers = my_npu, cpu_ref\n[provider.my_npu]\nmax_elements = 4\n", NULL);
    CHECK(env, "environment with max_elements");
    if (!env)
        return;
    m = chain_model(env, 2);
    s = NULL;
    st = m ? sy_session_create(env, m, NULL, &s) : NULL;
    CHECK(m && !st, "session: %s", st ? sy_status_get_message(st) : "no model");
    sy_status_free(st);
    if (s && provider_of(s, "add", &p)) {
        CHECK(!strcmp(p.provider, "cpu_ref"), "Add with 6 elements on %s, expected cpu_ref", p.provider);
        CHECK(p.reason_text && strstr(p.reason_text, "over max_elements = 4"), "reason: %s",
              p.reason_text ? p.reason_text : "(none)");
        CHECK(!strcmp(provider_of(s, "mm", NULL), "my_npu"), "mm ([2,2] = 4 elements) on my_npu");
    }
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

static void test_options(void)
{
    sy_status *st = NULL;
    sy_env *env = env_with("[provider.my_npu]\nmax_elems = 4\n", &st);
    CHECK(!env && st && sy_status_get_code(st) == SY_ERR_INVALID_CONFIG &&
              strstr(sy_status_get_message(st), "max_elems"),
          "unknown key refused by name: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    sy_env_release(env);

    st = NULL;
    env = env_with("[provider.my_npu]\nmax_elements = many\n", &st);
    CHECK(!env && st && sy_status_get_code(st) == SY_ERR_INVALID_CONFIG && strstr(sy_status_get_message(st), "many"),
          "bad value refused: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    sy_env_release(env);

    st = NULL;
    env = env_with("[provider.my_npu]\nops = Add, Conv\n", &st);
    CHECK(!env && st && strstr(sy_status_get_message(st), "Conv"), "unknown op refused: %s",
          st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    sy_env_release(env);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_my_npu PATH/libsy_my_npu.so\n");
        return 2;
    }
    plugin_path = argv[1];
    test_chain_on_my_npu();
    test_declines();
    test_options();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("test_my_npu: all checks passed\n");
    return 0;
}
