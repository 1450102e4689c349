/* Training data sets (sy_dataset_*, sy_train.h): one split of labelled
 * samples held in memory, read from one of the two layouts the trainers
 * accept:
 *   - IDX files, the MNIST / Fashion-MNIST naming: SPLIT-images-idx3-ubyte
 *     and SPLIT-labels-idx1-ubyte (".gz" or not), where SPLIT is "train" for
 *     the training split and "t10k" for the test split; uint8 images
 *     [N, H, W] become float samples [1, H, W] scaled by 1/255 (the
 *     convention of the Fashion-MNIST baselines);
 *   - a folder DIR/SPLIT ("train" or "test") of pairs input_K / label_K,
 *     K = 0, 1, 2 ... without a gap, each a NumPy .npy or ONNX TensorProto
 *     .pb (ONNX's test_data_set naming): a float32 input is one sample or a
 *     batch [n, ...] of them, its label an integer scalar or [n] (uint8,
 *     int8, int16, int32 or int64); every sample of the split has one shape.
 * Samples are kept as uint8 codes (IDX) or float32 values, labels as int64;
 * a batch is gathered by index into the caller's buffers. */
#include <switchyard/sy_train.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sy_dataset {
    int64_t n;                     /* samples */
    int32_t rank;                  /* of one sample */
    int64_t dims[SY_MAX_RANK];     /* of one sample */
    int64_t numel;                 /* elements of one sample */
    uint8_t *codes;                /* IDX: n * numel uint8, scaled by 1/255 when read */
    float *values;                 /* folders: n * numel float32 */
    int64_t *labels;               /* n */
};

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

static const char *dims_str(int32_t rank, const int64_t *dims, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "[");
    for (int32_t d = 0; d < rank && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, d ? ",%lld" : "%lld", (long long)dims[d]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

/* ---- IDX ------------------------------------------------------------------ */

static sy_status *open_idx(const char *dir, const char *prefix, sy_dataset *d)
{
    char path[4096];
    const char *kinds[2] = {"images-idx3-ubyte", "labels-idx1-ubyte"};
    sy_tensor *t[2] = {NULL, NULL};
    sy_status *st = NULL;
    for (int k = 0; k < 2 && !st; k++) {
        snprintf(path, sizeof path, "%s/%s-%s.gz", dir, prefix, kinds[k]);
        if (!exists(path))
            snprintf(path, sizeof path, "%s/%s-%s", dir, prefix, kinds[k]);
        st = sy_idx_read(path, &t[k]);
    }
    if (!st && (t[0]->dtype != SY_DT_UINT8 || t[0]->rank != 3 || t[1]->dtype != SY_DT_UINT8 || t[1]->rank != 1))
        st = sy_status_create(SY_ERR_SHAPE, "%s/%s: expected uint8 images [N, H, W] and uint8 labels [N], the files "
                              "hold %s of rank %d and %s of rank %d", dir, prefix, sy_dtype_name(t[0]->dtype),
                              (int)t[0]->rank, sy_dtype_name(t[1]->dtype), (int)t[1]->rank);
    if (!st && t[1]->dims[0] != t[0]->dims[0])
        st = sy_status_create(SY_ERR_SHAPE, "%s/%s: %lld images but %lld labels", dir, prefix,
                              (long long)t[0]->dims[0], (long long)t[1]->dims[0]);
    /* 0 images of H x W hold no bytes, so the file does not bound H * W */
    if (!st && __builtin_mul_overflow(t[0]->dims[1], t[0]->dims[2], &d->numel))
        st = sy_status_create(SY_ERR_SHAPE, "%s/%s: images of %lld x %lld pixels have more than an int64 counts", dir,
                              prefix, (long long)t[0]->dims[1], (long long)t[0]->dims[2]);
    if (!st) {
        d->n = t[0]->dims[0];
        d->rank = 3;
        d->dims[0] = 1;
        d->dims[1] = t[0]->dims[1];
        d->dims[2] = t[0]->dims[2];
        d->codes = malloc(d->n * d->numel > 0 ? (size_t)(d->n * d->numel) : 1);
        d->labels = malloc(d->n ? (size_t)d->n * sizeof *d->labels : 1);
        if (!d->codes || !d->labels)
            st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s/%s: out of memory for %lld samples", dir, prefix,
                                  (long long)d->n);
    }
    if (!st) {
        memcpy(d->codes, t[0]->data, (size_t)(d->n * d->numel));
        const uint8_t *lb = t[1]->data;
        for (int64_t i = 0; i < d->n; i++)
            d->labels[i] = lb[i];
    }
    sy_idx_free(t[0]);
    sy_idx_free(t[1]);
    return st;
}

/* ---- folders of input_K / label_K pairs ---------------------------------- */

/* DIR/NAME_K.npy or .pb, whichever exists (NULL: neither) */
static const char *pair_file(const char *dir, const char *name, int64_t k, char *buf, size_t size)
{
    static const char *const ext[] = {"npy", "pb"};
    for (int e = 0; e < 2; e++) {
        int w = snprintf(buf, size, "%s/%s_%lld.%s", dir, name, (long long)k, ext[e]);
        if (w > 0 && (size_t)w < size && exists(buf))
            return buf;
    }
    return NULL;
}

static bool label_value(const sy_tensor *t, int64_t i, int64_t *out)
{
    switch (t->dtype) {
    case SY_DT_UINT8: *out = ((const uint8_t *)t->data)[i]; return true;
    case SY_DT_INT8: *out = ((const int8_t *)t->data)[i]; return true;
    case SY_DT_INT16: *out = ((const int16_t *)t->data)[i]; return true;
    case SY_DT_INT32: *out = ((const int32_t *)t->data)[i]; return true;
    case SY_DT_INT64: *out = ((const int64_t *)t->data)[i]; return true;
    default: return false;
    }
}

/* Append the pair (x, y) read from xpath / ypath to d, growing its arrays. */
static sy_status *append_pair(sy_dataset *d, int64_t *cap, const sy_tensor *x, const char *xpath, const sy_tensor *y,
                              const char *ypath)
{
    char a[160], b[160];
    if (x->dtype != SY_DT_FLOAT32)
        return sy_status_create(SY_ERR_TYPE, "%s: inputs must be float32, this one is %s", xpath,
                                sy_dtype_name(x->dtype));
    int64_t ny = sy_tensor_numel(y);
    if (y->rank > 1)
        return sy_status_create(SY_ERR_SHAPE, "%s: a label is a scalar or a vector [n] of class indices, not %s",
                                ypath, dims_str(y->rank, y->dims, a, sizeof a));
    /* a batch when the label is a vector and the input's first dim counts it;
     * otherwise (scalar label, or [1]) one sample of the input's shape */
    bool batch = y->rank == 1 && x->rank >= 1 && x->dims[0] == ny && (ny != 1 || x->rank > 1);
    if (y->rank == 1 && !batch && ny != 1)
        return sy_status_create(SY_ERR_SHAPE, "%s holds %lld labels but %s has shape %s (a batch of %lld needs [%lld, ...])",
                                ypath, (long long)ny, xpath, dims_str(x->rank, x->dims, a, sizeof a), (long long)ny,
                                (long long)ny);
    int32_t srank = batch ? x->rank - 1 : x->rank;
    const int64_t *sdims = batch ? x->dims + 1 : x->dims;
    int64_t count = batch ? ny : 1;
    if (d->n == 0 && d->rank == 0 && !d->values) {
        /* a batch of 0 samples holds no values whatever its other dims say,
         * so their product is not bounded by the file: check it */
        int64_t numel = 1;
        for (int32_t k = 0; k < srank; k++)
            if (__builtin_mul_overflow(numel, sdims[k], &numel))
                return sy_status_create(SY_ERR_SHAPE, "%s: samples of shape %s have more values than an int64 counts",
                                        xpath, dims_str(srank, sdims, a, sizeof a));
        d->rank = srank;
        memcpy(d->dims, sdims, (size_t)srank * sizeof *sdims);
        d->numel = numel;
    } else if (srank != d->rank || memcmp(sdims, d->dims, (size_t)srank * sizeof *sdims)) {
        return sy_status_create(SY_ERR_SHAPE, "%s: samples of shape %s, the first file's are %s", xpath,
                                dims_str(srank, sdims, a, sizeof a), dims_str(d->rank, d->dims, b, sizeof b));
    }
    if (d->n + count > *cap) {
        int64_t c = *cap ? *cap : 64;
        while (c < d->n + count)
            c *= 2;
        if ((uint64_t)c * (uint64_t)(d->numel ? d->numel : 1) > SIZE_MAX / sizeof(float))
            return sy_status_create(SY_ERR_BUDGET, "%s: %lld samples of %lld values do not fit in memory", xpath,
                                    (long long)c, (long long)d->numel);
        float *v = realloc(d->values, (size_t)(c * (d->numel ? d->numel : 1)) * sizeof *v);
        if (v)
            d->values = v;
        int64_t *l = v ? realloc(d->labels, (size_t)c * sizeof *l) : NULL;
        if (l)
            d->labels = l;
        if (!v || !l)
            return sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory for %lld samples", xpath, (long long)c);
        *cap = c;
    }
    if (count > 0 && d->numel > 0) /* a pair of 0 values may come before any block exists */
        memcpy(d->values + d->n * d->numel, x->data, (size_t)(count * d->numel) * sizeof(float));
    for (int64_t i = 0; i < count; i++) {
        int64_t v = 0;
        if (!label_value(y, i, &v))
            return sy_status_create(SY_ERR_TYPE, "%s: labels must be integers (uint8, int8, int16, int32 or int64), "
                                                 "these are %s", ypath, sy_dtype_name(y->dtype));
        if (v < 0)
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "%s: label %lld of sample %lld is negative", ypath,
                                    (long long)v, (long long)i);
        d->labels[d->n + i] = v;
    }
    d->n += count;
    return NULL;
}

static sy_status *open_folder(const char *dir, sy_dataset *d)
{
    char xp[4096], yp[4096];
    int64_t cap = 0;
    for (int64_t k = 0;; k++) {
        const char *xpath = pair_file(dir, "input", k, xp, sizeof xp);
        const char *ypath = pair_file(dir, "label", k, yp, sizeof yp);
        if (!xpath && !ypath) {
            if (k == 0)
                return sy_status_create(SY_ERR_NOT_FOUND, "%s: no input_0.npy / input_0.pb and label_0.npy / "
                                                          "label_0.pb", dir);
            /* the end, unless a later pair follows a gap */
            for (int64_t j = k + 1; j < k + 16; j++)
                if (pair_file(dir, "input", j, xp, sizeof xp) || pair_file(dir, "label", j, yp, sizeof yp))
                    return sy_status_create(SY_ERR_INVALID_ARGUMENT, "%s: pair %lld is missing but %s exists (pairs "
                                                                     "are numbered from 0 without a gap)",
                                            dir, (long long)k, xp);
            return NULL;
        }
        if (!xpath || !ypath)
            return sy_status_create(SY_ERR_NOT_FOUND, "%s: %s_%lld has no %s_%lld (.npy or .pb)", dir,
                                    xpath ? "input" : "label", (long long)k, xpath ? "label" : "input", (long long)k);
        sy_tensor *x = NULL, *y = NULL;
        sy_status *st = sy_tensor_read_file(xpath, &x);
        if (!st)
            st = sy_tensor_read_file(ypath, &y);
        if (!st)
            st = append_pair(d, &cap, x, xpath, y, ypath);
        sy_tensor_free(x);
        sy_tensor_free(y);
        if (st)
            return st;
    }
}

/* ---- the API -------------------------------------------------------------- */

SY_EXPORT sy_status *sy_dataset_open(const char *dir, const char *split, sy_dataset **out)
{
    if (!dir || !split || !out)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_dataset_open: dir, split and out are required");
    *out = NULL;
    bool train = !strcmp(split, "train");
    if (!train && strcmp(split, "test"))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_dataset_open: split '%s': expected train or test", split);
    if (!is_dir(dir))
        return sy_status_create(SY_ERR_NOT_FOUND, "%s: not a folder", dir);
    sy_dataset *d = calloc(1, sizeof *d);
    if (!d)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", dir, split);
    sy_status *st = is_dir(sub) ? open_folder(sub, d) : open_idx(dir, train ? "train" : "t10k", d);
    if (st) {
        sy_dataset_release(d);
        return st;
    }
    *out = d;
    return NULL;
}

SY_EXPORT void sy_dataset_release(sy_dataset *d)
{
    if (!d)
        return;
    free(d->codes);
    free(d->values);
    free(d->labels);
    free(d);
}

SY_EXPORT int64_t sy_dataset_size(const sy_dataset *d) { return d ? d->n : 0; }

SY_EXPORT int32_t sy_dataset_sample_shape(const sy_dataset *d, int64_t dims[SY_MAX_RANK])
{
    if (!d)
        return -1;
    if (dims)
        memcpy(dims, d->dims, (size_t)d->rank * sizeof *dims);
    return d->rank;
}

SY_EXPORT int64_t sy_dataset_sample_numel(const sy_dataset *d) { return d ? d->numel : 0; }

SY_EXPORT sy_status *sy_dataset_batch(const sy_dataset *d, const int64_t *index, int64_t count, int64_t classes,
                                      float *x, int64_t *labels)
{
    if (!d || (count && (!index || !x || !labels)) || count < 0)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_dataset_batch: the data set, index, x and labels are "
                                                         "required");
    for (int64_t i = 0; i < count; i++) {
        int64_t s = index[i];
        if (s < 0 || s >= d->n)
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_dataset_batch: sample %lld is outside the %lld of "
                                                             "the data set", (long long)s, (long long)d->n);
        float *dst = x + i * d->numel;
        if (d->codes) {
            const uint8_t *src = d->codes + s * d->numel;
            for (int64_t p = 0; p < d->numel; p++)
                dst[p] = (float)src[p] / 255.0f;
        } else {
            memcpy(dst, d->values + s * d->numel, (size_t)d->numel * sizeof *dst);
        }
        labels[i] = d->labels[s];
        if (classes > 0 && labels[i] >= classes)
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "label %lld of sample %lld is outside the model's %lld "
                                                             "classes", (long long)labels[i], (long long)s,
                                    (long long)classes);
    }
    return NULL;
}
