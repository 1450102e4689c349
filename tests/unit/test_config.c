/* Unit tests of INI parsing (framework/src/config.c): values, lists,
 * sections, and every error with a message that says what and where. */
#include "env.h"
#include "status.h"
#include "sy_test.h"

#include <unistd.h>

/* Parse `text`; on error return the message (owned copy) and the code. */
static char *parse_err(const char *text, sy_status_code *code)
{
    sy_config cfg;
    sy_status *st = sy_config_parse_string(text, "test.ini", "/base", &cfg);
    char *msg = NULL;
    *code = SY_OK;
    if (st) {
        *code = sy_status_code_of(st);
        msg = strdup(sy_status_msg(st));
        sy_status_free(st);
    }
    sy_config_free(&cfg);
    return msg;
}

/* The text must be refused as INVALID_CONFIG with every `want` substring in the message. */
static void expect_error(const char *text, const char *want1, const char *want2)
{
    sy_status_code code;
    char *msg = parse_err(text, &code);
    CHECK(msg != NULL, "config accepted, expected an error containing \"%s\":\n%s", want1, text);
    if (msg) {
        CHECK(code == SY_ERR_INVALID_CONFIG, "code %d, expected SY_ERR_INVALID_CONFIG for:\n%s", (int)code, text);
        CHECK_STR_HAS(msg, "test.ini"); /* where: the origin */
        CHECK_STR_HAS(msg, want1);
        if (want2)
            CHECK_STR_HAS(msg, want2);
    }
    free(msg);
}

static void test_defaults(void)
{
    sy_config cfg;
    sy_status *st = sy_config_parse_string("", "empty", NULL, &cfg);
    CHECK(st == NULL, "empty text is a valid config");
    sy_status_free(st);
    CHECK(cfg.threads == 1, "default threads 1, got %d", cfg.threads);
    CHECK(cfg.strict == false, "default strict false");
    CHECK(cfg.log_level == SY_LOG_WARN, "default log_level warn");
    CHECK(cfg.n_plugin_dirs == 0 && cfg.n_plugin_files == 0 && cfg.n_providers == 0, "no lists");
    CHECK(cfg.base_dir && !strcmp(cfg.base_dir, "."), "NULL base_dir -> '.', got %s", cfg.base_dir);
    CHECK(cfg.origin && !strcmp(cfg.origin, "empty"), "origin kept");
    sy_config_free(&cfg);
}

static void test_values(void)
{
    const char *ini = "; a comment\n"
                      "[switchyard]\n"
                      "plugin_dirs = @default, plugins/extra\n"
                      "plugins = a.so b.so,c.so\n"
                      "providers = htp, cpu_ref\n"
                      "threads = 8\n"
                      "strict = yes\n"
                      "log_level = DEBUG\n"
                      "\n"
                      "[plugin.ops_nn]\n"
                      "sha256 = 00\n"
                      "fast_conv = true\n"
                      "[provider.htp]\n"
                      "soc = sm8650\n"
                      "vtcm_mb = 8\n";
    sy_config cfg;
    sy_status *st = sy_config_parse_string(ini, "values.ini", "/etc/sy", &cfg);
    CHECK(st == NULL, "valid config refused: %s", st ? sy_status_msg(st) : "");
    sy_status_free(st);
    CHECK(cfg.n_plugin_dirs == 2, "2 plugin dirs, got %u", cfg.n_plugin_dirs);
    if (cfg.n_plugin_dirs == 2)
        CHECK(!strcmp(cfg.plugin_dirs[0], "@default") && !strcmp(cfg.plugin_dirs[1], "plugins/extra"),
              "plugin dirs %s %s", cfg.plugin_dirs[0], cfg.plugin_dirs[1]);
    CHECK(cfg.n_plugin_files == 3, "comma and space separate list items, got %u items", cfg.n_plugin_files);
    if (cfg.n_plugin_files == 3)
        CHECK(!strcmp(cfg.plugin_files[0], "a.so") && !strcmp(cfg.plugin_files[1], "b.so") &&
                  !strcmp(cfg.plugin_files[2], "c.so"),
              "plugin files in order");
    CHECK(cfg.n_providers == 2 && !strcmp(cfg.providers[0], "htp") && !strcmp(cfg.providers[1], "cpu_ref"),
          "provider priority order");
    CHECK(cfg.threads == 8, "threads 8, got %d", cfg.threads);
    CHECK(cfg.strict == true, "strict = yes");
    CHECK(cfg.log_level == SY_LOG_DEBUG, "log_level is case-insensitive");
    CHECK(!strcmp(cfg.base_dir, "/etc/sy"), "base_dir kept");

    const sy_options *nn = sy_config_section(&cfg, "plugin", "ops_nn");
    const sy_options *htp = sy_config_section(&cfg, "provider", "htp");
    CHECK(nn && nn->n == 2, "[plugin.ops_nn] has 2 keys");
    CHECK(htp && htp->n == 2, "[provider.htp] has 2 keys");
    CHECK(sy_config_section(&cfg, "plugin", "htp") == NULL, "kind is part of the section key");
    CHECK(sy_config_section(&cfg, "provider", "ht") == NULL, "no prefix match");
    CHECK(sy_config_section(&cfg, "plugin", "ops_nn_x") == NULL, "no longer-name match");
    CHECK(!strcmp(sy_options_get(htp, "soc"), "sm8650"), "option value");
    CHECK(sy_options_get(htp, "missing") == NULL, "absent option");
    CHECK(sy_options_get(NULL, "soc") == NULL, "NULL options");

    /* key checking: the plugin's declared keys, plus keys the core consumes */
    static const char *const nn_keys[] = {"fast_conv", NULL};
    static const char *const core_keys[] = {"sha256", "path", "enabled", NULL};
    st = sy_options_check(nn, nn_keys, core_keys, "values.ini");
    CHECK(st == NULL, "declared + core keys accepted");
    sy_status_free(st);
    st = sy_options_check(nn, nn_keys, NULL, "values.ini");
    CHECK(st != NULL, "sha256 refused when not declared");
    if (st) {
        CHECK(sy_status_code_of(st) == SY_ERR_INVALID_CONFIG, "INVALID_CONFIG");
        CHECK_STR_HAS(sy_status_msg(st), "unknown key 'sha256'");
        CHECK_STR_HAS(sy_status_msg(st), "[plugin.ops_nn]");
        CHECK_STR_HAS(sy_status_msg(st), "values.ini");
        CHECK_STR_HAS(sy_status_msg(st), "fast_conv"); /* lists what is known */
    }
    sy_status_free(st);
    static const char *const htp_keys[] = {"soc", NULL};
    st = sy_options_check(htp, htp_keys, NULL, "values.ini");
    CHECK(st != NULL, "vtcm_mb not declared -> refused");
    if (st)
        CHECK_STR_HAS(sy_status_msg(st), "unknown key 'vtcm_mb' in [provider.htp]");
    sy_status_free(st);
    st = sy_options_check(htp, NULL, NULL, "values.ini");
    CHECK(st != NULL, "a provider that declares no keys refuses every key");
    if (st)
        CHECK_STR_HAS(sy_status_msg(st), "none");
    sy_status_free(st);
    CHECK(sy_options_check(NULL, NULL, NULL, "x") == NULL, "no section -> nothing to check");
    sy_config_free(&cfg);
}

static void test_providers_replaced(void)
{
    /* a later `providers` replaces the list rather than appending to it */
    sy_config cfg;
    sy_status *st = sy_config_parse_string("[switchyard]\nproviders = a, b\n[switchyard]\nproviders = c\n", "p",
                                           NULL, &cfg);
    CHECK(st == NULL, "parses");
    sy_status_free(st);
    CHECK(cfg.n_providers == 1 && !strcmp(cfg.providers[0], "c"), "providers replaced, got %u", cfg.n_providers);
    sy_config_free(&cfg);
}

static void test_switchyard_repeats(void)
{
    /* docs/config.md: in [switchyard], plugin_dirs and plugins given twice
     * append; any other key given twice keeps the last value */
    sy_config cfg;
    sy_status *st = sy_config_parse_string("[switchyard]\nplugins = a.so\nplugins = b.so c.so\nplugin_dirs = d1\n"
                                           "plugin_dirs = d2\nthreads = 2\nthreads = 4\nlog_level = error\n"
                                           "log_level = info\n",
                                           "r", NULL, &cfg);
    CHECK(st == NULL, "parses: %s", st ? sy_status_msg(st) : "");
    sy_status_free(st);
    CHECK(cfg.n_plugin_files == 3 && !strcmp(cfg.plugin_files[2], "c.so"), "plugins append, got %u",
          cfg.n_plugin_files);
    CHECK(cfg.n_plugin_dirs == 2 && !strcmp(cfg.plugin_dirs[1], "d2"), "plugin_dirs append, got %u",
          cfg.n_plugin_dirs);
    CHECK(cfg.threads == 4, "the last threads wins, got %d", cfg.threads);
    CHECK(cfg.log_level == SY_LOG_INFO, "the last log_level wins");
    sy_config_free(&cfg);
}

static void test_long_line(void)
{
    /* a line longer than inih's line buffer must not be silently split into
     * two lines: either the whole list is read, or the error names line 2 */
    char ini[2048] = "[switchyard]\nplugins =";
    for (int i = 0; i < 40; i++)
        snprintf(ini + strlen(ini), sizeof ini - strlen(ini), " lib%03d.so", i);
    strcat(ini, "\nthreads = 2\n");
    sy_config cfg;
    sy_status *st = sy_config_parse_string(ini, "long.ini", NULL, &cfg);
    if (st) {
        CHECK_STR_HAS(sy_status_msg(st), "line 2");
        CHECK(sy_status_code_of(st) == SY_ERR_INVALID_CONFIG, "INVALID_CONFIG");
    } else {
        CHECK(cfg.n_plugin_files == 40, "all 40 plugin files read, got %u", cfg.n_plugin_files);
        if (cfg.n_plugin_files == 40)
            CHECK(!strcmp(cfg.plugin_files[39], "lib039.so"), "last item intact: %s", cfg.plugin_files[39]);
        CHECK(cfg.threads == 2, "the next line still parsed");
    }
    sy_status_free(st);
    sy_config_free(&cfg);
}

static void test_bool_and_levels(void)
{
    static const char *const truthy[] = {"true", "TRUE", "yes", "on", "1"};
    static const char *const falsy[] = {"false", "No", "off", "0"};
    char ini[128];
    for (size_t i = 0; i < sizeof truthy / sizeof *truthy; i++) {
        snprintf(ini, sizeof ini, "[switchyard]\nstrict = %s\n", truthy[i]);
        sy_config cfg;
        sy_status *st = sy_config_parse_string(ini, "b", NULL, &cfg);
        CHECK(!st && cfg.strict, "strict = %s is true", truthy[i]);
        sy_status_free(st);
        sy_config_free(&cfg);
    }
    for (size_t i = 0; i < sizeof falsy / sizeof *falsy; i++) {
        snprintf(ini, sizeof ini, "[switchyard]\nstrict = %s\n", falsy[i]);
        sy_config cfg;
        sy_status *st = sy_config_parse_string(ini, "b", NULL, &cfg);
        CHECK(!st && !cfg.strict, "strict = %s is false", falsy[i]);
        sy_status_free(st);
        sy_config_free(&cfg);
    }
    static const char *const levels[] = {"error", "warn", "info", "debug", "trace"};
    for (int i = 0; i < 5; i++) {
        snprintf(ini, sizeof ini, "[switchyard]\nlog_level = %s\n", levels[i]);
        sy_config cfg;
        sy_status *st = sy_config_parse_string(ini, "l", NULL, &cfg);
        CHECK(!st && cfg.log_level == (sy_log_level)i, "log_level = %s", levels[i]);
        sy_status_free(st);
        sy_config_free(&cfg);
    }
    sy_config cfg;
    sy_status *st = sy_config_parse_string("[switchyard]\nthreads = 256\n", "t", NULL, &cfg);
    CHECK(!st && cfg.threads == 256, "threads = 256 is the maximum accepted");
    sy_status_free(st);
    sy_config_free(&cfg);
}

static void test_errors(void)
{
    /* syntax: names the line */
    expect_error("[switchyard]\nthreads = 1\nthis line has no equals sign\n", "line 3", "syntax");
    expect_error("[switchyard\nthreads = 1\n", "line 1", "syntax");
    /* unknown key in [switchyard], named */
    expect_error("[switchyard]\nthreds = 4\n", "unknown key 'threds'", "[switchyard]");
    /* bad values, naming key and value */
    expect_error("[switchyard]\nthreads = 0\n", "threads", "'0'");
    expect_error("[switchyard]\nthreads = 257\n", "threads", "'257'");
    expect_error("[switchyard]\nthreads = four\n", "threads", "'four'");
    expect_error("[switchyard]\nthreads = 4x\n", "threads", "'4x'");
    expect_error("[switchyard]\nthreads = -2\n", "threads", "'-2'");
    expect_error("[switchyard]\nstrict = maybe\n", "strict", "'maybe'");
    expect_error("[switchyard]\nlog_level = verbose\n", "log_level", "'verbose'");
    /* duplicate keys */
    expect_error("[plugin.ops_nn]\nfast = 1\nfast = 2\n", "'fast'", "twice");
    expect_error("[provider.htp]\nsoc = a\n[provider.htp]\nsoc = b\n", "'soc'", "twice");
    /* unknown section, and a section kind without a name */
    expect_error("[switchyrd]\nthreads = 1\n", "unknown section [switchyrd]", NULL);
    expect_error("threads = 1\n", "unknown section", NULL);
    expect_error("[plugin.]\nx = 1\n", "[plugin.]", "name");
    /* ...reported at the header's line, with keys or without */
    expect_error("[switchyard]\nthreads = 1\n\n[plugin.]\n\nx = 1\n", "line 4", "[plugin.]");
    expect_error("[switchyard]\nthreads = 1\n[provider.]\n", "line 3", "[provider.]");
    /* only [llm] itself is reserved, not every name starting with llm */
    expect_error("[switchyard]\nthreads = 1\n[llmjunk]\nx = 1\n", "line 3", "unknown section [llmjunk]");
    /* an unknown section without keys is refused too */
    expect_error("[switchyard]\nthreads = 1\n[typo]\n", "line 3", "unknown section [typo]");
    expect_error("[switchyard]\n  [ plugin. ]  ; spaced\n", "line 2", "[plugin.]");
    /* the first error wins and nothing after it is applied */
    sy_status_code code;
    char *msg = parse_err("[switchyard]\nthreads = 0\nbogus = 1\n", &code);
    CHECK(msg && strstr(msg, "threads") && !strstr(msg, "bogus"), "first error reported: %s", msg ? msg : "");
    free(msg);
}

static void test_file(void)
{
    sy_config cfg;
    sy_status *st = sy_config_parse_file("/nonexistent/dir/switchyard.ini", &cfg);
    CHECK(st != NULL, "missing file refused");
    if (st) {
        CHECK(sy_status_code_of(st) == SY_ERR_NOT_FOUND, "NOT_FOUND, got %d", (int)sy_status_code_of(st));
        CHECK_STR_HAS(sy_status_msg(st), "/nonexistent/dir/switchyard.ini");
    }
    sy_status_free(st);
    sy_config_free(&cfg);

    char path[] = "/tmp/sy_test_config_XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0, "mkstemp");
    const char *text = "[switchyard]\nplugins = rel/x.so\n\n[switchyard]\nlog_level = loud\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    st = sy_config_parse_file(path, &cfg);
    CHECK(st != NULL, "bad log_level in a file refused");
    if (st) {
        CHECK_STR_HAS(sy_status_msg(st), path); /* where: the file */
        CHECK_STR_HAS(sy_status_msg(st), "log_level");
    }
    sy_status_free(st);
    CHECK(cfg.base_dir && !strcmp(cfg.base_dir, "/tmp"), "relative paths resolve next to the file, got %s",
          cfg.base_dir ? cfg.base_dir : "(null)");
    sy_config_free(&cfg);
    unlink(path);
}

/* conf/default.ini parses and says what the embedded default says */
static const char *default_ini;

static void test_default_ini(void)
{
    REQUIRE(default_ini != NULL, "usage: test_config CONF/DEFAULT.INI");
    sy_config cfg;
    sy_status *st = sy_config_parse_file(default_ini, &cfg);
    CHECK(st == NULL, "%s: %s", default_ini, st ? sy_status_msg(st) : "");
    sy_status_free(st);
    CHECK(cfg.n_plugin_dirs == 1 && !strcmp(cfg.plugin_dirs[0], "@default"), "plugin_dirs = @default");
    CHECK(cfg.n_plugin_files == 0, "no explicit plugin files");
    CHECK(cfg.n_providers == 0, "no provider priority list");
    CHECK(cfg.threads == 1, "threads = 1");
    CHECK(cfg.strict == false, "strict = false");
    CHECK(cfg.log_level == SY_LOG_WARN, "log_level = warn");
    CHECK(cfg.n_sections == 0, "no plugin or provider sections (examples stay commented out)");
    sy_config_free(&cfg);
}

int main(int argc, char **argv)
{
    default_ini = argc > 1 ? argv[1] : NULL;
    RUN_TEST(test_defaults);
    RUN_TEST(test_values);
    RUN_TEST(test_providers_replaced);
    RUN_TEST(test_switchyard_repeats);
    RUN_TEST(test_long_line);
    RUN_TEST(test_bool_and_levels);
    RUN_TEST(test_errors);
    RUN_TEST(test_file);
    RUN_TEST(test_default_ini);
    return SY_TEST_MAIN_RESULT();
}
