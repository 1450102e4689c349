/*
 * Shared helpers of the partition tests: check macros, environments made
 * from INI text that load the build tree's plugins plus test_npu, and
 * sessions on models packed in memory by pt_onnx.h.
 *
 * PT_PLUGIN_DIR (the core's plugins) and PT_TEST_PLUGIN_DIR (test_npu) are
 * compile definitions set by tests/partition/CMakeLists.txt.
 */
#ifndef PT_COMMON_H
#define PT_COMMON_H

#include "pt_onnx.h"
#include "switchyard/switchyard.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pt_failures, pt_checks;

#define PT_CHECK(cond, ...)                                                                                        \
    do {                                                                                                           \
        pt_checks++;                                                                                               \
        if (!(cond)) {                                                                                             \
            pt_failures++;                                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                        \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
        }                                                                                                          \
    } while (0)

#define PT_REQUIRE(cond, ...)                                                                                      \
    do {                                                                                                           \
        int pt_before_ = pt_failures;                                                                              \
        PT_CHECK(cond, __VA_ARGS__);                                                                               \
        if (pt_failures != pt_before_)                                                                             \
            goto done;                                                                                             \
    } while (0)

#define PT_HAS(s, sub)                                                                                             \
    do {                                                                                                           \
        const char *pt_s_ = (s);                                                                                   \
        const char *pt_sub_ = (sub);                                                                               \
        PT_CHECK(pt_s_ && strstr(pt_s_, pt_sub_), "expected \"%s\" in \"%s\"", pt_sub_, pt_s_ ? pt_s_ : "(null)"); \
    } while (0)

#define PT_RUN(fn)                                                                                                 \
    do {                                                                                                           \
        int pt_b_ = pt_failures;                                                                                   \
        fn();                                                                                                      \
        printf("%s %s\n", pt_failures == pt_b_ ? "ok  " : "FAIL", #fn);                                            \
        fflush(stdout);                                                                                            \
    } while (0)

static inline int pt_result(void)
{
    printf("%d checks, %d failed\n", pt_checks, pt_failures);
    return pt_failures ? 1 : 0;
}

/* Message of a status (then freed); "" for success. Copied into a static buffer. */
static inline const char *pt_msg(sy_status *st)
{
    static char buf[8192];
    buf[0] = '\0';
    if (st) {
        snprintf(buf, sizeof buf, "%s", sy_status_get_message(st));
        sy_status_free(st);
    }
    return buf;
}

/* An env from INI text. It loads exactly the plugins the partition tests
 * need (cpu_ref, ops_math, ops_tensor, ops_activation when built, test_npu),
 * not whole directories, so an unrelated plugin cannot change placement;
 * one `plugins =` line each (they append), as inih limits a line's length.
 * `fmt` is the rest of the [switchyard] section plus any other sections. */
static inline sy_env *pt_env(const char *fmt, ...)
{
    static const char *const core[] = {"cpu_ref", "ops_math", "ops_tensor", "ops_activation"};
    char extra[2048], ini[6144], plugins[3072] = "", path[1024];
    size_t len = 0;
    for (size_t i = 0; i < sizeof core / sizeof core[0]; i++) {
        snprintf(path, sizeof path, "%s/libsy_%s.so", PT_PLUGIN_DIR, core[i]);
        if (i < 3 || access(path, R_OK) == 0)
            len += (size_t)snprintf(plugins + len, sizeof plugins - len, "plugins = %s\n", path);
    }
    snprintf(plugins + len, sizeof plugins - len, "plugins = %s/libsy_test_npu.so\n", PT_TEST_PLUGIN_DIR);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(extra, sizeof extra, fmt, ap);
    va_end(ap);
    snprintf(ini, sizeof ini, "[switchyard]\n%s%s\n", plugins, extra);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "FAIL: sy_env_create_from_string:\n%s\n---\n%s\n", ini, pt_msg(st));
        pt_failures++;
        return NULL;
    }
    return env;
}

/* `st` must be a refusal with `code` whose message holds every needle (then
 * it is freed): a refusal that names nothing, or the wrong thing, fails. */
#define PT_EXPECT_REFUSED(st, code, ...)                                                                           \
    do {                                                                                                           \
        sy_status *st_ = (st);                                                                                     \
        PT_CHECK(st_ && sy_status_get_code(st_) == (code), "expected %s, got %s: %s", sy_status_code_name(code),   \
                 st_ ? sy_status_code_name(sy_status_get_code(st_)) : "success",                                   \
                 st_ ? sy_status_get_message(st_) : "");                                                           \
        const char *needles_[] = {__VA_ARGS__, NULL};                                                              \
        for (int k_ = 0; st_ && needles_[k_]; k_++)                                                                \
            PT_HAS(sy_status_get_message(st_), needles_[k_]);                                                      \
        sy_status_free(st_);                                                                                       \
    } while (0)

/* An env that loads every plugin of `dir` (the whole build, as a user's
 * default configuration does), plus `extra` INI text after [switchyard]. */
static inline sy_env *pt_env_dir(const char *dir, const char *extra)
{
    char ini[2048];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n%s", dir, extra ? extra : "");
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    PT_CHECK(st == NULL, "env: %s", st ? sy_status_get_message(st) : "");
    sy_status_free(st);
    return env;
}

/* Load `m` packed, named `name`; the status, for tests that expect refusals. */
static inline sy_status *pt_load_status(sy_env *env, const pt_model *m, const char *name, sy_model **out)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    pt_model_pack(m, &buf, &len);
    sy_status *st = sy_model_load_buffer(env, buf, len, name, NULL, out);
    free(buf);
    return st;
}

static inline sy_model *pt_load(sy_env *env, const pt_model *m)
{
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    sy_model *model = NULL;
    sy_status *st = sy_model_load_buffer(env, buf, len, m->graph.name, NULL, &model);
    free(buf);
    if (st) {
        fprintf(stderr, "FAIL: sy_model_load_buffer(%s): %s\n", m->graph.name, pt_msg(st));
        pt_failures++;
        return NULL;
    }
    return model;
}

/* a host tensor of dtype dt over data, dims[rank], nbytes from the dims */
static inline sy_tensor pt_tensor(sy_dtype dt, void *data, int32_t rank, const int64_t *dims)
{
    sy_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.dtype = dt;
    t.rank = rank;
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        t.dims[i] = dims[i];
        n *= (size_t)dims[i];
    }
    t.data = data;
    t.nbytes = n * sy_dtype_size(dt);
    return t;
}

static inline sy_tensor pt_tensor_f32(float *data, int32_t rank, const int64_t *dims)
{
    return pt_tensor(SY_DT_FLOAT32, data, rank, dims);
}

#endif
