/*
 * What the fuzz targets share: one environment per process (the build
 * tree's plugins, with resource limits low enough that a hostile size is
 * refused rather than allocated), inputs handed over as files without
 * touching the disk (memfd: a regular file, so the loader's checks apply),
 * and a deterministic input pattern for sessions.
 *
 * FUZZ_PLUGIN_DIR and FUZZ_SOURCE_DIR are compile definitions.
 */
#ifndef SY_FUZZ_COMMON_H
#define SY_FUZZ_COMMON_H

#include "switchyard/switchyard.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The limits every target runs under: a hostile declared size must be
 * refused by the limit check, never attempted (libFuzzer's rss limit would
 * call that a finding). */
#define FUZZ_LIMITS "max_tensor_bytes = 64M\nmax_arena_bytes = 256M\nmax_nodes = 100000\nmax_file_bytes = 64M\n"

static inline void fuzz_quiet(void *user, sy_log_level level, const char *origin, const char *msg)
{
    (void)user, (void)level, (void)origin, (void)msg;
}

static inline sy_env *fuzz_env_from(const char *ini)
{
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "fuzz: cannot create the environment: %s\n", sy_status_get_message(st));
        abort();
    }
    sy_env_set_logger(env, fuzz_quiet, NULL);
    return env;
}

/* the default environment: every plugin of the build, cpu_ref last */
static inline sy_env *fuzz_env(void)
{
    static sy_env *env;
    if (!env)
        env = fuzz_env_from("[switchyard]\nplugin_dirs = " FUZZ_PLUGIN_DIR "\nlog_level = error\n" FUZZ_LIMITS);
    return env;
}

/* libFuzzer keeps pointers to the coverage counters of every instrumented
 * library; a plugin unloaded when an environment is released would leave
 * them dangling. A target that creates and releases environments pins the
 * build's plugins first (RTLD_NODELETE: the loader's dlclose then keeps
 * them mapped, as one long-lived host would). */
static inline void fuzz_pin_plugins(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    DIR *d = opendir(FUZZ_PLUGIN_DIR);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (strncmp(e->d_name, "libsy_", 6) || l < 4 || strcmp(e->d_name + l - 3, ".so"))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", FUZZ_PLUGIN_DIR, e->d_name);
        (void)dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    }
    if (d)
        closedir(d);
}

/* A memfd holding the bytes; *path names it ("/proc/self/fd/N"). -1 on error. */
static inline int fuzz_memfile(const uint8_t *data, size_t size, char path[64])
{
    int fd = memfd_create("sy_fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

static inline void fuzz_ignore(sy_status *st) { sy_status_free(st); }

/* Feed every input a deterministic pattern (at most `cap` bytes each, else
 * the input is skipped: the run then fails with "not set", which is fine),
 * run, read every output. */
/* Sessions whose plan needs more activation memory than this are created
 * (loaders, inference, placement and the planner have seen the model) but
 * not run: the run's work grows with the activations, and a mutated input
 * shape (a keyword-spotting model's 49 x 10 spectrogram declared 561 x 246,
 * a 4.4 MB arena) makes legitimate convolutions take longer on cpu_ref
 * under ASan than the 20-second timeout that is there to catch hangs. The
 * seed corpora plan at most 55 KB. */
#define FUZZ_RUN_ARENA_CAP ((size_t)1 << 20)

static inline bool fuzz_plan_small(const sy_session *s)
{
    size_t total = 0;
    for (size_t d = 0; d < sy_session_memory_domain_count(s); d++) {
        sy_memory_report r = {.struct_size = sizeof r};
        if (sy_session_memory_report(s, d, &r))
            total += r.arena_bytes;
    }
    return total <= FUZZ_RUN_ARENA_CAP;
}

static inline void fuzz_run_session(sy_session *s, const sy_model *m, size_t cap)
{
    if (!fuzz_plan_small(s))
        return;
    size_t n = sy_model_input_count(m);
    for (size_t i = 0; i < n; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        if (!sy_model_input_info(m, i, &vi))
            continue;
        sy_tensor t = {.struct_size = sizeof t, .dtype = vi.dtype, .rank = vi.rank};
        int64_t numel = 1;
        bool ok = vi.rank >= 0 && vi.rank <= SY_MAX_RANK;
        for (int32_t d = 0; ok && d < vi.rank; d++) {
            t.dims[d] = vi.dims[d] >= 0 ? vi.dims[d] : 1;
            ok = t.dims[d] <= (int64_t)cap && !__builtin_mul_overflow(numel, t.dims[d], &numel);
        }
        size_t es = sy_dtype_size(vi.dtype);
        if (!ok || !es || numel < 0 || (uint64_t)numel > cap / es)
            continue;
        t.nbytes = (size_t)numel * es;
        t.data = calloc(1, t.nbytes ? t.nbytes : 1);
        if (!t.data)
            continue;
        for (size_t b = 0; b < t.nbytes; b++)
            ((uint8_t *)t.data)[b] = (uint8_t)(b * 7 % 5); /* small values of any dtype */
        fuzz_ignore(sy_session_set_input_by_index(s, i, &t, SY_INPUT_COPY));
        free(t.data);
    }
    fuzz_ignore(sy_session_run(s));
    {
        size_t no = sy_session_output_count(s);
        for (size_t o = 0; o < no; o++) {
            const sy_tensor *y = NULL;
            fuzz_ignore(sy_session_get_output(s, o, &y));
        }
    }
}

#endif
