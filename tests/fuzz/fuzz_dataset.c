/*
 * Fuzz target: a training data set (sy_dataset_open, tools/lib/src/
 * train_data.c and idx.c) in either of its layouts, written into a fresh
 * folder per input. The input is files separated by "\n@@\n":
 *   - when the first starts like an IDX file (two zero bytes) or a gzip
 *     stream, it is train-images-idx3-ubyte and the second
 *     train-labels-idx1-ubyte (".gz" when gzip);
 *   - otherwise they are the pairs input_0, label_0, input_1, ... of the
 *     folder train/ (".npy" when the file starts with NumPy's magic, ".pb"
 *     otherwise); an odd count leaves the last input without its label.
 * An opened data set must hand out every sample (sy_dataset_batch, 10
 * classes: a label past them is a refusal, not a finding).
 */
#include "fuzz_common.h"
#include "switchyard/sy_train.h"

#include <sys/stat.h>

#define SEP "\n@@\n"
#define MAX_FILES 16

static char dir_name[64];
static void clear(const char *dir);

/* at exit: the folder goes with the process */
static void remove_folder(void)
{
    clear(dir_name);
    rmdir(dir_name);
}

static const char *folder(void)
{
    if (!dir_name[0]) {
        snprintf(dir_name, sizeof dir_name, "/dev/shm/sy_fuzz_dataset_%d", (int)getpid());
        mkdir(dir_name, 0700);
        atexit(remove_folder);
    }
    return dir_name;
}

static void put(const char *path, const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    if (n)
        (void)fwrite(p, 1, n, f);
    fclose(f);
}

/* remove what the previous input wrote (the names are this file's own) */
static void clear(const char *dir)
{
    char p[256];
    static const char *const idx[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/%s", dir, idx[k]);
        unlink(p);
        snprintf(p, sizeof p, "%s/%s.gz", dir, idx[k]);
        unlink(p);
    }
    for (int k = 0; k < MAX_FILES; k++)
        for (int e = 0; e < 2; e++) {
            snprintf(p, sizeof p, "%s/train/%s_%d.%s", dir, k % 2 ? "label" : "input", k / 2, e ? "pb" : "npy");
            unlink(p);
        }
    snprintf(p, sizeof p, "%s/train", dir);
    rmdir(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = folder();
    clear(dir);
    const uint8_t *part[MAX_FILES];
    size_t len[MAX_FILES], n = 0;
    const uint8_t *p = data, *end = data + size;
    while (n < MAX_FILES) {
        const uint8_t *q = size ? memmem(p, (size_t)(end - p), SEP, 4) : NULL;
        part[n] = p;
        len[n] = (size_t)((q ? q : end) - p);
        n++;
        if (!q)
            break;
        p = q + 4;
    }
    char path[256];
    bool gz = len[0] >= 2 && part[0][0] == 0x1f && part[0][1] == 0x8b;
    if (gz || (len[0] >= 2 && !part[0][0] && !part[0][1])) {
        static const char *const names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"};
        for (size_t k = 0; k < n && k < 2; k++) {
            bool z = len[k] >= 2 && part[k][0] == 0x1f && part[k][1] == 0x8b;
            snprintf(path, sizeof path, "%s/%s%s", dir, names[k], z ? ".gz" : "");
            put(path, part[k], len[k]);
        }
    } else {
        snprintf(path, sizeof path, "%s/train", dir);
        mkdir(path, 0700);
        for (size_t k = 0; k < n; k++) {
            bool npy = len[k] >= 6 && !memcmp(part[k], "\x93NUMPY", 6);
            snprintf(path, sizeof path, "%s/train/%s_%zu.%s", dir, k % 2 ? "label" : "input", k / 2, npy ? "npy" : "pb");
            put(path, part[k], len[k]);
        }
    }
    sy_dataset *d = NULL;
    sy_status *st = sy_dataset_open(dir, "train", &d);
    if (st) {
        sy_status_free(st);
        return 0;
    }
    int64_t dims[SY_MAX_RANK];
    int32_t rank = sy_dataset_sample_shape(d, dims);
    int64_t numel = sy_dataset_sample_numel(d), count = sy_dataset_size(d);
    int64_t check = 1;
    bool overflow = false;
    for (int32_t k = 0; k >= 0 && k < rank && k < SY_MAX_RANK; k++)
        overflow |= dims[k] < 0 || __builtin_mul_overflow(check, dims[k], &check);
    if (rank < 0 || rank > SY_MAX_RANK || overflow || check != numel || count < 0) {
        fprintf(stderr, "fuzz_dataset: a data set of rank %d, %lld values a sample, %lld samples\n", (int)rank,
                (long long)numel, (long long)count);
        abort();
    }
    /* every sample, a few at a time */
    enum { BATCH = 8 };
    /* numel values of each of count samples are in memory: the product fits */
    float *x = count ? malloc((size_t)(numel ? numel : 1) * BATCH * sizeof *x) : NULL;
    int64_t labels[BATCH], index[BATCH];
    for (int64_t i = 0; x && i < count; i += BATCH) {
        int64_t c = count - i < BATCH ? count - i : BATCH;
        for (int64_t k = 0; k < c; k++)
            index[k] = i + k;
        fuzz_ignore(sy_dataset_batch(d, index, c, 10, x, labels));
    }
    free(x);
    sy_dataset_release(d);
    return 0;
}
