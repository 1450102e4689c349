/*
 * ABI tests through the public API: deliberately broken plugins are refused
 * with the file and the reason, the good one still loads; sha256 pins;
 * provider options; registration outside init; refcounted unload.
 *
 *   test_abi <dir of the test plugins>
 */
#include "abi_test_ext.h"
#include "onnx.pb-c.h"
#include "switchyard/switchyard.h"
#include "sy_test.h"
#include "sy_test_onnx.h"

#include <fcntl.h>
#include <sha2.h>
#include <unistd.h>

static const char *plugin_dir;

/* ---- helpers ------------------------------------------------------------ */

/* Run sy_env_create_from_string with stderr captured (the loader logs each
 * refusal there, with the plugin's path). */
static sy_status *create_env_capture(const char *ini, sy_env **env, char **log)
{
    char path[] = "/tmp/sy_test_abi_log_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        *log = strdup("");
        return sy_env_create_from_string(ini, plugin_dir, env);
    }
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    sy_status *st = sy_env_create_from_string(ini, plugin_dir, env);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t len = lseek(fd, 0, SEEK_END);
    char *buf = calloc(1, (size_t)len + 1);
    if (buf && len > 0 && pread(fd, buf, (size_t)len, 0) != len)
        buf[0] = '\0';
    close(fd);
    unlink(path);
    *log = buf ? buf : strdup("");
    fputs(*log, stderr); /* keep it visible in the test's output */
    return st;
}

static bool find_plugin(const sy_env *env, const char *file, sy_plugin_info *out)
{
    for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
        sy_plugin_info pi = {.struct_size = sizeof pi};
        if (!sy_env_plugin_info(env, i, &pi))
            continue;
        const char *base = strrchr(pi.path, '/');
        if (!strcmp(base ? base + 1 : pi.path, file)) {
            *out = pi;
            return true;
        }
    }
    return false;
}

/* `file` was refused: its reason has both substrings, and the log names its path next to the reason. */
static void expect_refused(const sy_env *env, const char *log, const char *file, const char *why1, const char *why2)
{
    sy_plugin_info pi = {.struct_size = sizeof pi};
    bool found = find_plugin(env, file, &pi);
    CHECK(found, "%s is listed by sy_env_plugin_info", file);
    if (!found)
        return;
    CHECK(!pi.loaded, "%s must be refused", file);
    CHECK(pi.refusal != NULL, "%s has a refusal reason", file);
    CHECK_STR_HAS(pi.path, plugin_dir);
    CHECK_STR_HAS(pi.refusal, why1);
    if (why2)
        CHECK_STR_HAS(pi.refusal, why2);
    /* the message printed for the user names the file and the reason on one line */
    bool line_ok = false;
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char *l = strndup(line, n);
        if (l && strstr(l, pi.path) && strstr(l, why1))
            line_ok = true;
        free(l);
        line = end ? end + 1 : NULL;
    }
    CHECK(line_ok, "no log line names both '%s' and '%s'", pi.path, why1);
}

static const abi_test_ext *get_ext(const sy_env *env)
{
    const abi_test_ext *ext = sy_get_extension(env, ABI_TEST_EXT_NAME, ABI_TEST_EXT_VERSION);
    return ext && ext->struct_size >= sizeof *ext ? ext : NULL;
}

static char *status_take(sy_status *st)
{
    char *m = strdup(st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return m;
}

/* ---- refusals ------------------------------------------------------------ */

static void test_broken_plugins_refused(void)
{
    unsetenv("SY_ABI_WRONG_MAJOR_INIT");
    unsetenv("SY_ABI_NEWER_MINOR_INIT");
    unsetenv("SY_ABI_UNKNOWN_KEY_INIT");
    unsetenv("SY_ABI_PINNED_LOADED");
    unsetenv("SY_ABI_NO_QUERY_LOADED");
    unsetenv("SY_ABI_GOOD_FINI");
    const char *ini = "[switchyard]\n"
                      "plugins = libsy_abi_wrong_major.so, libsy_abi_newer_minor.so, libsy_abi_no_query.so\n"
                      "plugins = libsy_abi_small_desc.so libsy_abi_init_fail.so libsy_abi_unknown_key.so\n"
                      "plugins = libsy_abi_pinned.so libsy_abi_absent.so libsy_abi_good.so\n"
                      "[plugin.abi_unknown_key]\n"
                      "known = 1\n"
                      "bogus = 2\n"
                      "[plugin.abi_pinned]\n"
                      "sha256 = 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
                      "[plugin.abi_good]\n"
                      "greeting = hello\n";
    sy_env *env = NULL;
    char *log = NULL;
    sy_status *st = create_env_capture(ini, &env, &log);
    char *msg = st ? status_take(st) : NULL;
    CHECK(env != NULL, "the environment is created although some plugins are refused: %s", msg ? msg : "");
    free(msg);
    if (!env) {
        free(log);
        return;
    }
    CHECK(sy_env_plugin_count(env) == 9, "9 plugin files listed, got %zu", sy_env_plugin_count(env));

    char host_abi[32], newer_abi[32];
    snprintf(host_abi, sizeof host_abi, "host is ABI %d.%d", SY_ABI_MAJOR, SY_ABI_MINOR);
    snprintf(newer_abi, sizeof newer_abi, "ABI %d.%d", SY_ABI_MAJOR, SY_ABI_MINOR + 1);
    expect_refused(env, log, "libsy_abi_wrong_major.so", "ABI", "2.0");
    sy_plugin_info pi = {.struct_size = sizeof pi};
    if (find_plugin(env, "libsy_abi_wrong_major.so", &pi))
        CHECK_STR_HAS(pi.refusal, host_abi); /* both versions named */
    expect_refused(env, log, "libsy_abi_newer_minor.so", "ABI", newer_abi);
    expect_refused(env, log, "libsy_abi_no_query.so", "sy_plugin_query", NULL);
    expect_refused(env, log, "libsy_abi_small_desc.so", "struct_size", NULL);
    expect_refused(env, log, "libsy_abi_init_fail.so", "init failed", "the test device is not present");
    expect_refused(env, log, "libsy_abi_unknown_key.so", "unknown key 'bogus'", "[plugin.abi_unknown_key]");
    expect_refused(env, log, "libsy_abi_pinned.so", "sha256", "0123456789abcdef");
    expect_refused(env, log, "libsy_abi_absent.so", "not found", NULL);

    /* refused plugins ran no code past what the check needed */
    CHECK(getenv("SY_ABI_WRONG_MAJOR_INIT") == NULL, "init of a wrong-major plugin must not run");
    CHECK(getenv("SY_ABI_NEWER_MINOR_INIT") == NULL, "init of a newer-minor plugin must not run");
    CHECK(getenv("SY_ABI_UNKNOWN_KEY_INIT") == NULL, "init must not run when the INI has an unknown key");
    CHECK(getenv("SY_ABI_PINNED_LOADED") == NULL, "a plugin with a wrong pin must not be dlopen'ed");
    CHECK(getenv("SY_ABI_NO_QUERY_LOADED") == NULL,
          "a library without sy_plugin_query must be refused before dlopen runs its constructors");
    /* what a failed init registered is not kept */
    CHECK(!sy_env_has_op(env, ABI_TEST_DOMAIN, "InitFailOp", 1), "InitFailOp of the failed init is dropped");

    /* the good one loaded, with everything it registered */
    bool found = find_plugin(env, "libsy_abi_good.so", &pi);
    CHECK(found, "libsy_abi_good.so listed");
    if (found) {
        CHECK(pi.loaded && pi.refusal == NULL, "abi_good loaded (refusal: %s)", pi.refusal ? pi.refusal : "");
        CHECK(pi.name && !strcmp(pi.name, "abi_good"), "name from the descriptor");
        CHECK(pi.version && !strcmp(pi.version, "1.2.3"), "version from the descriptor");
        CHECK(pi.abi_major == SY_ABI_MAJOR && pi.abi_minor == SY_ABI_MINOR, "ABI %u.%u", pi.abi_major,
              pi.abi_minor);
        CHECK(pi.n_schemas == 1 && pi.n_kernels == 1 && pi.n_providers == 1 && pi.n_extensions == 1,
              "counts %u schemas %u kernels %u providers %u extensions", pi.n_schemas, pi.n_kernels,
              pi.n_providers, pi.n_extensions);
        CHECK_STR_HAS(pi.registered, "AbiScaleOp");
        CHECK_STR_HAS(pi.registered, "abi_prov");
    }
    CHECK(sy_env_has_op(env, ABI_TEST_DOMAIN, "AbiScaleOp", 1), "AbiScaleOp registered");
    CHECK(sy_env_has_op(env, "test.switchyard", "AbiScaleOp", 7), "a schema stays valid for later opsets");
    CHECK(sy_env_provider_count(env) == 1, "one provider, got %zu", sy_env_provider_count(env));
    if (sy_env_provider_count(env) == 1)
        CHECK(!strcmp(sy_env_provider_name(env, 0), "abi_prov"), "provider abi_prov");

    const abi_test_ext *ext = get_ext(env);
    CHECK(ext != NULL, "extension abi_test v1 available");
    CHECK(sy_get_extension(env, ABI_TEST_EXT_NAME, 2) == NULL, "no extension of another major version");
    CHECK(sy_get_extension(env, "nope", 1) == NULL, "no unknown extension");
    if (ext) {
        CHECK(ext->greeting() && !strcmp(ext->greeting(), "hello"), "[plugin.abi_good] greeting reached init");
        CHECK(ext->provider_level() == -1, "no [provider.abi_prov] section: no level");
        /* registration outside init is refused */
        sy_status *late = ext->late_register();
        CHECK(late != NULL, "register_schema after init must fail");
        if (late) {
            CHECK(sy_status_get_code(late) == SY_ERR_PLUGIN, "code SY_ERR_PLUGIN, got %s",
                  sy_status_code_name(sy_status_get_code(late)));
            CHECK_STR_HAS(sy_status_get_message(late), "outside");
        }
        sy_status_free(late);
        CHECK(!sy_env_has_op(env, ABI_TEST_DOMAIN, "AbiLateOp", 1), "the late schema is not registered");
    }
    sy_env_release(env);
    CHECK(getenv("SY_ABI_GOOD_FINI") != NULL, "fini ran when the environment was released");
    free(log);
}

/* ---- sha256 pins ----------------------------------------------------------- */

static void test_pins(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libsy_abi_pinned.so", plugin_dir);
    char digest[SHA256_DIGEST_STRING_LENGTH];
    REQUIRE(SHA256File(path, digest) != NULL, "sha256 of %s", path);
    /* upper case: the pin is compared case-insensitively */
    for (char *c = digest; *c; c++)
        if (*c >= 'a' && *c <= 'f')
            *c = (char)(*c - 'a' + 'A');
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = libsy_abi_pinned.so\n[plugin.abi_pinned]\nsha256 = %s\n",
             digest);
    unsetenv("SY_ABI_PINNED_LOADED");
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, plugin_dir, &env);
    char *msg = st ? status_take(st) : NULL;
    CHECK(env != NULL, "env with a correct pin: %s", msg ? msg : "");
    free(msg);
    if (env) {
        sy_plugin_info pi = {.struct_size = sizeof pi};
        CHECK(find_plugin(env, "libsy_abi_pinned.so", &pi) && pi.loaded, "the correctly pinned plugin loads: %s",
              pi.refusal ? pi.refusal : "");
        CHECK(getenv("SY_ABI_PINNED_LOADED") != NULL, "and its code ran");
        sy_env_release(env);
    }

    /* a pin that is not a sha256 at all */
    env = NULL;
    char *log = NULL;
    st = create_env_capture("[switchyard]\nplugins = libsy_abi_pinned.so\n[plugin.abi_pinned]\nsha256 = xyz\n", &env,
                            &log);
    msg = st ? status_take(st) : NULL;
    CHECK(env != NULL, "env created: %s", msg ? msg : "");
    free(msg);
    if (env) {
        expect_refused(env, log, "libsy_abi_pinned.so", "sha256", "64 hexadecimal");
        sy_env_release(env);
    }
    free(log);
}

/* ---- provider options ----------------------------------------------------- */

static void test_provider_options(void)
{
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string("[switchyard]\nplugins = libsy_abi_good.so\n"
                                              "[provider.abi_prov]\nlevel = 3\n",
                                              plugin_dir, &env);
    char *msg = st ? status_take(st) : NULL;
    CHECK(env != NULL, "declared provider option accepted: %s", msg ? msg : "");
    free(msg);
    if (env) {
        const abi_test_ext *ext = get_ext(env);
        CHECK(ext && ext->provider_level() == 3, "provider create() saw level = 3");
        sy_env_release(env);
    }

    env = NULL;
    st = sy_env_create_from_string("[switchyard]\nplugins = libsy_abi_good.so\n"
                                   "[provider.abi_prov]\nlevel = 3\nbogus_opt = 1\n",
                                   plugin_dir, &env);
    CHECK(st != NULL && env == NULL, "unknown provider option refused");
    if (st) {
        CHECK(sy_status_get_code(st) == SY_ERR_INVALID_CONFIG, "INVALID_CONFIG, got %s",
              sy_status_code_name(sy_status_get_code(st)));
        CHECK_STR_HAS(sy_status_get_message(st), "unknown key 'bogus_opt'");
        CHECK_STR_HAS(sy_status_get_message(st), "[provider.abi_prov]");
        CHECK_STR_HAS(sy_status_get_message(st), "level"); /* the known keys */
    }
    sy_status_free(st);
    sy_env_release(env);

    env = NULL;
    st = sy_env_create_from_string("[switchyard]\nplugins = libsy_abi_good.so\n[provider.npu9]\nx = 1\n",
                                   plugin_dir, &env);
    CHECK(st != NULL && env == NULL, "a section for a provider nobody registers is refused");
    if (st)
        CHECK_STR_HAS(sy_status_get_message(st), "provider.npu9");
    sy_status_free(st);
    sy_env_release(env);

    env = NULL;
    st = sy_env_create_from_string("[switchyard]\nplugins = libsy_abi_good.so\nproviders = abi_prov, npu9\n",
                                   plugin_dir, &env);
    CHECK(st != NULL && env == NULL, "an unknown provider in the priority list is refused");
    if (st) {
        CHECK_STR_HAS(sy_status_get_message(st), "'npu9'");
        CHECK_STR_HAS(sy_status_get_message(st), "abi_prov"); /* what is loaded */
    }
    sy_status_free(st);
    sy_env_release(env);
}

/* ---- refcounted unload ------------------------------------------------------ */

/* x float[4] -> test.switchyard:AbiScaleOp -> y, packed with protobuf-c. */
static uint8_t *make_scale_model(size_t *len)
{
    return sy_test_one_node_model("abi_scale", "scale", "AbiScaleOp", ABI_TEST_DOMAIN, 4, "test_abi", len);
}

static void test_refcounted_unload(void)
{
    unsetenv("SY_ABI_GOOD_FINI");
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string("[switchyard]\nplugins = libsy_abi_good.so\n", plugin_dir, &env);
    char *msg = st ? status_take(st) : NULL;
    REQUIRE(env != NULL, "env: %s", msg ? msg : "");
    free(msg);
    const abi_test_ext *ext = get_ext(env);
    size_t len = 0;
    uint8_t *buf = make_scale_model(&len);
    sy_model *m = NULL;
    st = sy_model_load_buffer(env, buf, len, "abi_scale.onnx", NULL, &m);
    free(buf);
    msg = st ? status_take(st) : NULL;
    CHECK(m != NULL, "model with the plugin's op loads: %s", msg ? msg : "");
    free(msg);
    sy_session *s = NULL;
    if (m) {
        st = sy_session_create(env, m, NULL, &s);
        msg = st ? status_take(st) : NULL;
        CHECK(s != NULL, "session: %s", msg ? msg : "");
        free(msg);
    }
    /* the host releases the env first: models and sessions keep the plugin alive */
    sy_env_release(env);
    CHECK(getenv("SY_ABI_GOOD_FINI") == NULL, "plugin finalised while a model from it is alive");
    if (s) {
        float xs[4] = {0.0f, 1.0f, -2.5f, 10.0f};
        sy_tensor x = {.struct_size = sizeof x, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {4}, .data = xs,
                       .nbytes = sizeof xs};
        st = sy_session_set_input(s, "x", &x, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        msg = st ? status_take(st) : NULL;
        CHECK(msg == NULL, "run after env release: %s", msg ? msg : "");
        free(msg);
        const sy_tensor *y = NULL;
        if (!msg) {
            st = sy_session_get_output(s, 0, &y);
            sy_status_free(st);
        }
        CHECK(y && y->dtype == SY_DT_FLOAT32 && y->rank == 1 && y->dims[0] == 4, "output float32[4]");
        if (y && y->data && y->nbytes == sizeof xs) {
            const float *ys = y->data;
            for (int i = 0; i < 4; i++)
                CHECK(ys[i] == 2.0f * xs[i] + 1.0f, "y[%d] = %g, expected %g", i, ys[i], 2.0f * xs[i] + 1.0f);
        }
        CHECK(ext && ext->kernel_runs() >= 1, "the plugin's kernel ran");
        sy_session_release(s);
        CHECK(getenv("SY_ABI_GOOD_FINI") == NULL, "plugin finalised while the model is alive");
    }
    sy_model_release(m);
    CHECK(getenv("SY_ABI_GOOD_FINI") != NULL, "plugin finalised once the last object is released");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_abi PLUGIN_DIR\n");
        return 2;
    }
    plugin_dir = argv[1];
    RUN_TEST(test_broken_plugins_refused);
    RUN_TEST(test_pins);
    RUN_TEST(test_provider_options);
    RUN_TEST(test_refcounted_unload);
    return SY_TEST_MAIN_RESULT();
}
