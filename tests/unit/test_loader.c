/*
 * Loader behaviour through the public API: directory scanning (only
 * libsy_*.so, in name order), relative paths, duplicates, enabled = false,
 * [plugin.X] path, missing directories and files, and the embedded default
 * that finds the in-tree plugins next to libswitchyard.
 *
 *   test_loader <dir of the ABI test plugins>
 */
#include "switchyard/switchyard.h"
#include "sy_test.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *plugin_dir;
static char tmp_root[64];

static bool copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    bool ok = in && out;
    char buf[65536];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out)
        ok = fclose(out) == 0 && ok;
    return ok;
}

static bool copy_plugin(const char *file, const char *dst_dir, const char *dst_name)
{
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/%s", plugin_dir, file);
    snprintf(dst, sizeof dst, "%s/%s", dst_dir, dst_name ? dst_name : file);
    return copy_file(src, dst);
}

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static sy_env *make_env(const char *ini, const char *base)
{
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, base, &env);
    CHECK(st == NULL, "env: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return env;
}

static bool info_at(const sy_env *env, size_t i, sy_plugin_info *pi)
{
    memset(pi, 0, sizeof *pi);
    pi->struct_size = sizeof *pi;
    return sy_env_plugin_info(env, i, pi);
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void test_scan_dir(void)
{
    char dir[128];
    snprintf(dir, sizeof dir, "%s/scan", tmp_root);
    REQUIRE(mkdir(dir, 0755) == 0, "mkdir %s", dir);
    /* two plugins (created in reverse name order), and files that are not plugins */
    REQUIRE(copy_plugin("libsy_abi_pinned.so", dir, NULL), "copy");
    REQUIRE(copy_plugin("libsy_abi_good.so", dir, NULL), "copy");
    REQUIRE(copy_plugin("libsy_abi_good.so", dir, "libother.so"), "copy");
    REQUIRE(copy_plugin("libsy_abi_good.so", dir, "libsy_abi_good.so.bak"), "copy");
    char notes[256];
    snprintf(notes, sizeof notes, "%s/README.txt", dir);
    REQUIRE(write_text(notes, "not a plugin\n"), "write");

    /* relative to base_dir */
    sy_env *env = make_env("[switchyard]\nplugin_dirs = scan\n", tmp_root);
    if (!env)
        return;
    CHECK(sy_env_plugin_count(env) == 2, "only libsy_*.so files are plugins: %zu listed", sy_env_plugin_count(env));
    sy_plugin_info a, b;
    if (sy_env_plugin_count(env) == 2 && info_at(env, 0, &a) && info_at(env, 1, &b)) {
        CHECK(!strcmp(base_name(a.path), "libsy_abi_good.so") && !strcmp(base_name(b.path), "libsy_abi_pinned.so"),
              "loaded in file-name order: %s, %s", a.path, b.path);
        CHECK(a.loaded && b.loaded, "both load");
        CHECK_STR_HAS(a.path, dir);
    }
    sy_env_release(env);

    /* the same file found in a directory and listed explicitly is loaded once */
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\nplugins = %s/libsy_abi_good.so\n", dir, dir);
    env = make_env(ini, NULL);
    if (env) {
        CHECK(sy_env_plugin_count(env) == 2, "no duplicate entry, %zu listed", sy_env_plugin_count(env));
        sy_env_release(env);
    }
}

static void test_duplicate_name(void)
{
    /* the same plugin (same descriptor name) from two different files */
    char dir[128];
    snprintf(dir, sizeof dir, "%s/dup", tmp_root);
    REQUIRE(mkdir(dir, 0755) == 0, "mkdir");
    REQUIRE(copy_plugin("libsy_abi_good.so", dir, NULL), "copy");
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = libsy_abi_good.so %s/libsy_abi_good.so\n", dir);
    sy_env *env = make_env(ini, plugin_dir);
    if (!env)
        return;
    sy_plugin_info a, b;
    CHECK(sy_env_plugin_count(env) == 2, "both files listed");
    if (info_at(env, 0, &a) && info_at(env, 1, &b)) {
        CHECK(a.loaded, "the first loads");
        CHECK(!b.loaded, "the second is refused");
        CHECK_STR_HAS(b.refusal, "already loaded");
        CHECK_STR_HAS(b.refusal, a.path); /* names where the first came from */
    }
    CHECK(sy_env_provider_count(env) == 1, "its provider registered once");
    sy_env_release(env);
}

static void test_enabled_false(void)
{
    unsetenv("SY_ABI_PINNED_LOADED");
    sy_env *env = make_env("[switchyard]\nplugins = libsy_abi_pinned.so libsy_abi_good.so\n"
                           "[plugin.abi_pinned]\nenabled = false\n",
                           plugin_dir);
    if (!env)
        return;
    sy_plugin_info a, b;
    if (info_at(env, 0, &a) && info_at(env, 1, &b)) {
        CHECK(!a.loaded, "disabled plugin not loaded");
        CHECK_STR_HAS(a.refusal, "disabled");
        CHECK_STR_HAS(a.refusal, "[plugin.abi_pinned]");
        CHECK(b.loaded, "the other still loads");
    }
    CHECK(getenv("SY_ABI_PINNED_LOADED") == NULL, "a disabled plugin is never dlopen'ed");
    sy_env_release(env);
}

static void test_section_path(void)
{
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\n[plugin.abi_good]\npath = %s/libsy_abi_good.so\ngreeting = hi\n",
             plugin_dir);
    sy_env *env = make_env(ini, NULL);
    if (env) {
        sy_plugin_info a;
        CHECK(sy_env_plugin_count(env) == 1 && info_at(env, 0, &a) && a.loaded,
              "[plugin.X] path loads a file that is in no directory");
        sy_env_release(env);
    }
    /* relative path resolves against base_dir */
    env = make_env("[plugin.abi_good]\npath = libsy_abi_good.so\n", plugin_dir);
    if (env) {
        sy_plugin_info a;
        CHECK(sy_env_plugin_count(env) == 1 && info_at(env, 0, &a) && a.loaded, "relative path = resolves");
        sy_env_release(env);
    }
    env = make_env("[plugin.abi_good]\npath = no_such_dir/libsy_abi_good.so\n", plugin_dir);
    if (env) {
        sy_plugin_info a;
        CHECK(sy_env_plugin_count(env) == 1 && info_at(env, 0, &a) && !a.loaded, "missing path = refused");
        CHECK(a.refusal && (strstr(a.refusal, "No such file") || strstr(a.refusal, "not found")),
              "reason says the file is missing: %s", a.refusal ? a.refusal : "(null)");
        CHECK_STR_HAS(a.path, "no_such_dir/libsy_abi_good.so");
        sy_env_release(env);
    }
}

static void test_missing_dir(void)
{
    /* a missing search directory is reported and loading goes on */
    char ini[512];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s/does-not-exist\nplugins = libsy_abi_good.so\n",
             tmp_root);
    sy_env *env = make_env(ini, plugin_dir);
    if (env) {
        CHECK(sy_env_plugin_count(env) == 1, "the listed plugin still loads");
        sy_env_release(env);
    }
}

static void test_embedded_default(void)
{
    /* no INI: the plugins next to libswitchyard (build tree: lib/switchyard/plugins) */
    sy_env *env = NULL;
    sy_status *st = sy_env_create(NULL, &env);
    CHECK(st == NULL, "embedded default: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    if (!env)
        return;
    size_t n = sy_env_plugin_count(env), refused = 0, ops = 0;
    bool cpu_ref = false;
    for (size_t i = 0; i < n; i++) {
        sy_plugin_info pi;
        if (!info_at(env, i, &pi))
            continue;
        CHECK_STR_HAS(pi.path, "switchyard/plugins/libsy_");
        refused += !pi.loaded;
        if (!pi.loaded)
            fprintf(stderr, "refused: %s: %s\n", pi.path, pi.refusal);
        cpu_ref |= pi.loaded && pi.name && !strcmp(pi.name, "cpu_ref");
        ops += pi.loaded && pi.name && !strncmp(pi.name, "ops_", 4);
        CHECK(!strstr(pi.path, "abi_"), "test plugins are not in the default directory: %s", pi.path);
    }
    CHECK(cpu_ref, "cpu_ref loaded by default");
    CHECK(ops >= 2, "operator families are separate libraries: %zu ops_* loaded", ops);
    CHECK(refused == 0, "%zu default plugins refused", refused);
    bool has_cpu = false;
    for (size_t i = 0; i < sy_env_provider_count(env); i++)
        has_cpu |= !strcmp(sy_env_provider_name(env, i), "cpu_ref");
    CHECK(has_cpu, "cpu_ref is a provider");
    CHECK(sy_env_has_op(env, "", "Add", 13), "Add (ops_math) is known");
    CHECK(sy_env_has_op(env, "ai.onnx", "Add", 13), "'ai.onnx' is the default domain");
    CHECK(!sy_env_has_op(env, "", "NoSuchOp", 13), "unknown op");
    sy_env_release(env);
}

/* A FIFO named like a plugin, in a plugin folder and in `plugins =`: refused
 * as "not a regular file (a FIFO)" at once (it used to be hashed or
 * dlopen'ed, which waits for a writer forever). An empty folder loads
 * nothing (qsort of no names). */
static void test_hostile_files(void)
{
    char dir[128], fifo[256], empty[128], ini[1024];
    snprintf(dir, sizeof dir, "%s/fifo", tmp_root);
    snprintf(empty, sizeof empty, "%s/empty", tmp_root);
    snprintf(fifo, sizeof fifo, "%s/libsy_fifo.so", dir);
    REQUIRE(mkdir(dir, 0755) == 0 && mkdir(empty, 0755) == 0, "mkdir");
    REQUIRE(mkfifo(fifo, 0600) == 0, "mkfifo");
    alarm(20); /* a hang fails here, not at the CTest timeout */
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugin_dirs = %s %s\nplugins = %s\n[plugin.fifo]\nsha256 = "
             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
             dir, empty, fifo);
    sy_env *env = make_env(ini, NULL);
    alarm(0);
    if (!env)
        return;
    CHECK(sy_env_plugin_count(env) == 1, "the FIFO is listed once, %zu listed", sy_env_plugin_count(env));
    sy_plugin_info a;
    if (info_at(env, 0, &a)) {
        CHECK(!a.loaded, "a FIFO is not loaded");
        CHECK_STR_HAS(a.refusal, "not a regular file (a FIFO)");
    }
    sy_env_release(env);
    /* without a pin too (then nothing hashes it, dlopen would have opened it) */
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s\n", fifo);
    alarm(20);
    env = make_env(ini, NULL);
    alarm(0);
    if (env && info_at(env, 0, &a))
        CHECK_STR_HAS(a.refusal, "not a regular file (a FIFO)");
    sy_env_release(env);
    /* a [plugin.NAME] section about no plugin that was found is an error,
     * not a silently dropped pin */
    {
        sy_env *e2 = NULL;
        snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s/libsy_abi_good.so\n[plugin.abi_godo]\nsha256 = "
                 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", plugin_dir);
        sy_status *st = sy_env_create_from_string(ini, NULL, &e2);
        CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_CONFIG && e2 == NULL, "[plugin.typo] refused");
        CHECK(st && strstr(sy_status_get_message(st), "[plugin.abi_godo] names no plugin that was found") &&
                  strstr(sy_status_get_message(st), "abi_good"),
              "message: %s", st ? sy_status_get_message(st) : "");
        sy_status_free(st);
        sy_env_release(e2);
    }
    /* a FIFO as the model or as a tensor file: refused, not waited on */
    env = make_env("[switchyard]\n", NULL);
    if (env) {
        sy_model *m = NULL;
        sy_tensor *t = NULL;
        alarm(20);
        sy_status *st = sy_model_load(env, fifo, &m);
        sy_status *st2 = sy_tensor_read_file(fifo, &t);
        alarm(0);
        CHECK(st && strstr(sy_status_get_message(st), "not a regular file (a FIFO)"), "FIFO model: %s",
              st ? sy_status_get_message(st) : "loaded");
        CHECK(st2 && strstr(sy_status_get_message(st2), "not a regular file (a FIFO)"), "FIFO tensor: %s",
              st2 ? sy_status_get_message(st2) : "read");
        sy_status_free(st);
        sy_status_free(st2);
        sy_model_release(m);
        sy_tensor_free(t);
        sy_env_release(env);
    }
    /* a text file named like a plugin: refused without dlopen */
    char txt[256];
    snprintf(txt, sizeof txt, "%s/libsy_text.so", empty);
    REQUIRE(write_text(txt, "not an ELF file\n"), "write");
    snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s\n", txt);
    env = make_env(ini, NULL);
    if (env && info_at(env, 0, &a))
        CHECK_STR_HAS(a.refusal, "not an ELF file");
    sy_env_release(env);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_loader PLUGIN_DIR\n");
        return 2;
    }
    plugin_dir = argv[1];
    snprintf(tmp_root, sizeof tmp_root, "/tmp/sy_test_loader_XXXXXX");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    RUN_TEST(test_scan_dir);
    RUN_TEST(test_duplicate_name);
    RUN_TEST(test_enabled_false);
    RUN_TEST(test_section_path);
    RUN_TEST(test_missing_dir);
    RUN_TEST(test_embedded_default);
    RUN_TEST(test_hostile_files);
    nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return SY_TEST_MAIN_RESULT();
}
