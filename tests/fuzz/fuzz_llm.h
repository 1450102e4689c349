/*
 * The LLM fuzz targets' bundle: SY_FUZZ_LLM_BUNDLE names a bundle exported
 * by `switchyard llm-export` (tools/fuzz/run.sh and the CTest replay make one
 * from ../shared/models/llm at run time). The targets work on a private copy
 * of it in /dev/shm, so bundle.ini, the tokenizer and the state can be
 * replaced per input.
 */
#ifndef SY_FUZZ_LLM_H
#define SY_FUZZ_LLM_H

#include "fuzz_common.h"
#include "switchyard/ext/sy_llm.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static char fuzz_bundle[256];
static const sy_llm_api *fuzz_llm;

static inline bool fuzz_write(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(p, 1, n, f) == n;
    return (fclose(f) == 0) && ok;
}

static inline bool fuzz_read(const char *path, uint8_t **p, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    *p = malloc((size_t)sz + 1);
    bool ok = *p && fread(*p, 1, (size_t)sz, f) == (size_t)sz;
    fclose(f);
    *n = (size_t)sz;
    return ok;
}

static void fuzz_llm_cleanup(void)
{
    DIR *d = opendir(fuzz_bundle);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", fuzz_bundle, e->d_name);
        if (e->d_name[0] != '.')
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(fuzz_bundle);
}

/* the private bundle folder (created once, removed at exit) */
static inline void fuzz_llm_setup(void)
{
    if (fuzz_llm)
        return;
    const char *src = getenv("SY_FUZZ_LLM_BUNDLE");
    if (!src) {
        fprintf(stderr, "fuzz: set SY_FUZZ_LLM_BUNDLE to a bundle made by 'switchyard llm-export'\n");
        exit(2);
    }
    char ini[512];
    snprintf(ini, sizeof ini, "%s/bundle.ini", src);
    if (access(ini, R_OK) != 0) { /* fuzz.llm_bundle_export skipped: no ../shared checkpoint to export */
        printf("SKIP: no bundle at %s (the export needs ../shared/models/llm)\n", src);
        exit(77);
    }
    snprintf(fuzz_bundle, sizeof fuzz_bundle, "/dev/shm/sy_fuzz_llm_%d", (int)getpid());
    mkdir(fuzz_bundle, 0700);
    atexit(fuzz_llm_cleanup);
    DIR *d = opendir(src);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "bundle.ini") || strstr(e->d_name, "tokenizer"))
            continue;
        /* copies, not symlinks: external data must resolve inside the model's folder */
        char a[512], b[512];
        snprintf(a, sizeof a, "%s/%s", src, e->d_name);
        snprintf(b, sizeof b, "%s/%s", fuzz_bundle, e->d_name);
        uint8_t *p = NULL;
        size_t n = 0;
        if (!fuzz_read(a, &p, &n) || !fuzz_write(fuzz_bundle, e->d_name, p, n)) {
            fprintf(stderr, "fuzz: cannot copy %s to %s\n", a, b);
            exit(2);
        }
        free(p);
    }
    if (d)
        closedir(d);
    fuzz_llm = sy_get_extension(fuzz_env(), SY_LLM_EXTENSION_NAME, SY_LLM_EXTENSION_VERSION);
    if (!fuzz_llm) {
        fprintf(stderr, "fuzz: the llm plugin is not loaded\n");
        exit(2);
    }
}

/* split `data` at "\n@@\n" separators into up to n parts */
static inline size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **part, size_t *len, size_t n)
{
    static const char sep[] = "\n@@\n";
    size_t k = 0, start = 0;
    for (size_t i = 0; i + 4 <= size && k + 1 < n; i++)
        if (!memcmp(data + i, sep, 4)) {
            part[k] = data + start;
            len[k++] = i - start;
            start = i + 4;
            i += 3;
        }
    part[k] = data + start;
    len[k++] = size - start;
    return k;
}

#endif
