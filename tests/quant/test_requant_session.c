/*
 * The requantization form chosen per session and per provider, and recorded
 * per node (data/requant_ties.onnx, written by gen_requant_model.py).
 *
 * The model folds into one QMatMul with multiplier 0.25 and output zero
 * point 100, applied to x itself (identity weights). Expected codes, by hand
 * (the rules of test_requant.c):
 *
 *   x            2    -2    6    -6   10   -10   9     127    -128
 *   x * 0.25     0.5  -0.5  1.5  -1.5 2.5  -2.5  2.25  31.75  -32
 *   onnx         0    0     2    -2   2    -2    2     32     -32    (half to even)
 *   gemmlowp     1    -1    2    -2   3    -3    3     32     -32    (half away; 2.25
 *                                                                  rounds twice)
 *   + 100, saturated to int8: 132 -> 127 in both forms.
 */
#include <switchyard/switchyard.h>

#include <stdio.h>
#include <string.h>

#define N 9
static const int8_t X[N] = {2, -2, 6, -6, 10, -10, 9, 127, -128};
static const int8_t Y_ONNX[N] = {100, 100, 102, 98, 102, 98, 102, 127, 68};
static const int8_t Y_GEMMLOWP[N] = {101, 99, 102, 98, 103, 97, 103, 127, 68};

static int failures;

static void fail(const char *what, sy_status *st)
{
    fprintf(stderr, "FAIL %s%s%s\n", what, st ? ": " : "", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    failures++;
}

/* One session with the requant option `rq` (NULL: none); checks the output
 * bytes and the form recorded on the QMatMul node with its source. */
static void check(sy_env *env, const char *model_path, const char *rq, const int8_t *want, const char *want_form,
                  const char *want_source, const char *what)
{
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = sy_model_load(env, model_path, &m);
    sy_session_options o = {.struct_size = sizeof o, .strict = -1, .requant = rq};
    if (!st)
        st = sy_session_create(env, m, &o, &s);
    sy_tensor x = {.struct_size = sizeof x, .dtype = SY_DT_INT8, .rank = 2, .dims = {1, N}, .data = (void *)X,
                   .nbytes = N};
    if (!st)
        st = sy_session_set_input_by_index(s, 0, &x, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    const sy_tensor *y = NULL;
    if (!st)
        st = sy_session_get_output(s, 0, &y);
    if (st) {
        fail(what, st);
    } else if (y->dtype != SY_DT_INT8 || y->nbytes != N || memcmp(y->data, want, N)) {
        const int8_t *v = y->data;
        fprintf(stderr, "FAIL %s: got", what);
        for (int i = 0; i < N && y->nbytes >= N; i++)
            fprintf(stderr, " %d", v[i]);
        fprintf(stderr, ", expected");
        for (int i = 0; i < N; i++)
            fprintf(stderr, " %d", want[i]);
        fprintf(stderr, "\n");
        failures++;
    } else {
        /* the form is recorded on the one integer node of the plan */
        int seen = 0;
        for (size_t i = 0; i < sy_session_node_count(s); i++) {
            sy_node_placement p = {.struct_size = sizeof p};
            const char *src = NULL, *form = sy_session_node_requant(s, i, &src);
            if (!sy_session_node_placement(s, i, &p) || strcmp(p.op, "QMatMul"))
                continue;
            seen++;
            if (!form || strcmp(form, want_form) || !src || strcmp(src, want_source)) {
                fprintf(stderr, "FAIL %s: node %s records requant=%s (%s), expected %s (%s)\n", what, p.name,
                        form ? form : "(none)", src ? src : "-", want_form, want_source);
                failures++;
            }
        }
        if (seen != 1) {
            fprintf(stderr, "FAIL %s: %d QMatMul nodes in the plan, expected 1 (the QDQ chain was not folded)\n",
                    what, seen);
            failures++;
        } else {
            printf("ok %s\n", what);
        }
    }
    sy_session_release(s);
    sy_model_release(m);
}

static sy_env *env_from(const char *ini)
{
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fail(ini, st);
        return NULL;
    }
    return env;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_requant_session DATA_DIR\n");
        return 2;
    }
    char ties[1024], attr[1024];
    snprintf(ties, sizeof ties, "%s/requant_ties.onnx", argv[1]);
    snprintf(attr, sizeof attr, "%s/requant_ties_attr.onnx", argv[1]);

    /* the default configuration: one model, two sessions, two forms */
    sy_env *env = env_from("[switchyard]\nplugin_dirs = @default\n");
    if (env) {
        check(env, ties, NULL, Y_ONNX, "onnx", "default", "default form (onnx)");
        check(env, ties, "gemmlowp", Y_GEMMLOWP, "gemmlowp", "session", "session requant=gemmlowp");
        check(env, ties, "onnx", Y_ONNX, "onnx", "session", "session requant=onnx");
        /* a tool's attribute in the model is an explicit choice: it wins */
        check(env, attr, "onnx", Y_GEMMLOWP, "gemmlowp", "model", "model attribute over the session");
        /* a bad session value is refused, naming it */
        sy_model *m = NULL;
        sy_session *s = NULL;
        sy_session_options o = {.struct_size = sizeof o, .strict = -1, .requant = "banker"};
        sy_status *st = sy_model_load(env, ties, &m);
        if (!st)
            st = sy_session_create(env, m, &o, &s);
        if (!st || !strstr(sy_status_get_message(st), "requant = \"banker\"")) {
            fail("session requant=banker is refused with the value named", st);
            sy_session_release(s);
        } else {
            printf("ok bad session value: %s\n", sy_status_get_message(st));
            sy_status_free(st);
        }
        sy_model_release(m);
        sy_env_release(env);
    }

    /* the provider's key (of the provider the node runs on: cpu_ref alone
     * here, the cpu provider would take this QMatMul); the session still
     * overrides it */
    env = env_from("[switchyard]\nplugin_dirs = @default\nproviders = cpu_ref\n[provider.cpu_ref]\nrequant = gemmlowp\n");
    if (env) {
        check(env, ties, NULL, Y_GEMMLOWP, "gemmlowp", "[provider.cpu_ref]", "[provider.cpu_ref] requant=gemmlowp");
        check(env, ties, "onnx", Y_ONNX, "onnx", "session", "session over the provider");
        sy_env_release(env);
    }
    /* the deployment default of the plugin, below the provider */
    env = env_from("[switchyard]\nplugin_dirs = @default\n[plugin.ops_quant]\nrequant = gemmlowp\n");
    if (env) {
        check(env, ties, NULL, Y_GEMMLOWP, "gemmlowp", "[plugin.ops_quant]", "[plugin.ops_quant] requant=gemmlowp");
        sy_env_release(env);
    }
    env = env_from("[switchyard]\nplugin_dirs = @default\nproviders = cpu_ref\n[plugin.ops_quant]\nrequant = gemmlowp\n"
                   "[provider.cpu_ref]\nrequant = onnx\n");
    if (env) {
        check(env, ties, NULL, Y_ONNX, "onnx", "[provider.cpu_ref]", "provider over [plugin.ops_quant]");
        sy_env_release(env);
    }
    /* a bad provider value is refused when the env is created */
    sy_env *bad = NULL;
    sy_status *st =
        sy_env_create_from_string("[switchyard]\nplugin_dirs = @default\n[provider.cpu_ref]\nrequant = half\n", NULL, &bad);
    if (!st || !strstr(sy_status_get_message(st), "[provider.cpu_ref] requant = half: expected onnx, gemmlowp or single_rounding")) {
        fail("[provider.cpu_ref] requant = half is refused", st);
        sy_env_release(bad);
    } else {
        printf("ok bad provider value: %s\n", sy_status_get_message(st));
        sy_status_free(st);
    }
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("requant per session and provider: all passed\n");
    return 0;
}
