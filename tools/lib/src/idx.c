/* IDX files, the format of MNIST and Fashion-MNIST (gzip-compressed or
 * not: zlib reads both): a big-endian magic 0x0000TTRR (TT the element type:
 * 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E
 * float64; RR the rank), RR big-endian uint32 dimensions, then the elements
 * in row-major order, big-endian. */
#include <switchyard/sy_train.h>

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* the largest file this reads: a dataset in memory, not a hostile size */
#define IDX_MAX_BYTES ((size_t)1 << 32)
#define IDX_FIRST_BLOCK ((size_t)1 << 20)

static bool read_exact(gzFile f, void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(f, p, chunk);
        if (got <= 0)
            return false;
        p += got;
        n -= (size_t)got;
    }
    return true;
}

SY_EXPORT sy_status *sy_idx_read(const char *path, sy_tensor **out)
{
    if (!path || !out)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_idx_read: path and out are required");
    *out = NULL;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return sy_status_create(SY_ERR_NOT_FOUND, "%s: cannot open", path);
    unsigned char head[4];
    sy_status *st = NULL;
    sy_tensor *t = NULL;
    if (!read_exact(f, head, 4) || head[0] || head[1]) {
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: not an IDX file (the magic starts with two zero bytes)", path);
        goto done;
    }
    static const struct {
        unsigned char code;
        sy_dtype dt;
        size_t size;
    } types[] = {{0x08, SY_DT_UINT8, 1}, {0x09, SY_DT_INT8, 1},    {0x0B, SY_DT_INT16, 2},
                 {0x0C, SY_DT_INT32, 4}, {0x0D, SY_DT_FLOAT32, 4}, {0x0E, SY_DT_FLOAT64, 8}};
    size_t ti = 0;
    while (ti < sizeof types / sizeof types[0] && types[ti].code != head[2])
        ti++;
    if (ti == sizeof types / sizeof types[0]) {
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: unknown IDX element type 0x%02x", path, head[2]);
        goto done;
    }
    int rank = head[3];
    if (rank < 1 || rank > SY_MAX_RANK) {
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: IDX rank %d (1 to %d supported)", path, rank, SY_MAX_RANK);
        goto done;
    }
    int64_t dims[SY_MAX_RANK];
    size_t numel = 1;
    for (int i = 0; i < rank; i++) {
        unsigned char d[4];
        if (!read_exact(f, d, 4)) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: truncated IDX header", path);
            goto done;
        }
        dims[i] = (int64_t)d[0] << 24 | (int64_t)d[1] << 16 | (int64_t)d[2] << 8 | d[3];
        if (dims[i] && numel > IDX_MAX_BYTES / (size_t)dims[i]) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: IDX dimensions too large", path);
            goto done;
        }
        numel *= (size_t)dims[i];
    }
    size_t es = types[ti].size, bytes = numel * es;
    if (bytes > IDX_MAX_BYTES) {
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: %zu bytes of IDX data exceed the %zu-byte limit", path, bytes,
                              IDX_MAX_BYTES);
        goto done;
    }
    /* the header's size is only a claim (a 16-byte file may declare 4 GB):
     * the block grows with the data actually read, never past twice it */
    size_t cap = bytes < IDX_FIRST_BLOCK ? bytes : IDX_FIRST_BLOCK, have = 0;
    t = calloc(1, sizeof *t + (cap ? cap : 1));
    while (t && have < bytes) {
        if (have == cap) {
            cap = bytes - cap < cap ? bytes : 2 * cap;
            sy_tensor *g = realloc(t, sizeof *t + cap);
            if (!g) {
                free(t);
                t = NULL;
                break;
            }
            t = g;
        }
        if (!read_exact(f, (unsigned char *)(t + 1) + have, cap - have)) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: the IDX data is shorter than its %zu bytes", path, bytes);
            goto done;
        }
        have = cap;
    }
    if (!t) {
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", path, bytes);
        goto done;
    }
    t->struct_size = sizeof *t;
    t->dtype = types[ti].dt;
    t->rank = rank;
    memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    t->data = t + 1;
    t->nbytes = bytes;
    /* big-endian elements to the host's order */
    unsigned char *p = t->data;
    for (size_t i = 0; es > 1 && i < numel; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            unsigned char c = p[a];
            p[a] = p[b];
            p[b] = c;
        }
done:
    gzclose(f);
    if (st) {
        free(t);
        return st;
    }
    *out = t;
    return NULL;
}

SY_EXPORT void sy_idx_free(sy_tensor *t) { free(t); }
