/*
 * The plain driver of a fuzz target (any compiler, no libFuzzer): runs
 * LLVMFuzzerTestOneInput once on every file named, and on every file of
 * every folder named (sorted by name, not recursive). This is how CTest
 * replays tests/fuzz/regressions/ and how a crash found by a campaign is
 * reproduced under GCC. Exit 0 when every input returned (a finding aborts).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc(sz > 0 ? (size_t)sz : 1);
    if (!p || (sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz)) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        free(p);
        return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(p, (size_t)sz);
    free(p);
    return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    size_t runs = 0;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(sb.st_mode)) {
            bad |= run_file(argv[i]);
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        char **names = NULL;
        size_t n = 0;
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char **g = realloc(names, (n + 1) * sizeof *g);
            if (!g)
                return 1;
            names = g;
            size_t l = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[n] = malloc(l);
            snprintf(names[n++], l, "%s/%s", argv[i], e->d_name);
        }
        if (d)
            closedir(d);
        if (n)
            qsort(names, n, sizeof *names, cmp);
        for (size_t k = 0; k < n; k++) {
            fprintf(stderr, "replay %s\n", names[k]);
            bad |= run_file(names[k]);
            runs++;
            free(names[k]);
        }
        free(names);
    }
    printf("%zu inputs replayed\n", runs);
    return bad;
}
