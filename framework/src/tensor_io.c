/*
 * Tensor files: ONNX TensorProto (.pb) and NumPy (.npy), read by content and
 * written by extension. A read tensor is one allocation (struct, name, data
 * at a 64-byte boundary) so sy_tensor_free is a single free.
 */
#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "status.h"
#include "util.h"
#include "switchyard/switchyard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define DATA_ALIGN 64

SY_EXPORT void sy_tensor_free(sy_tensor *t) { sy_aligned_free(t); }

/* ---- string tensors ------------------------------------------------------- */

sy_status *sy_strings_check(const sy_tensor *t, const char *where)
{
    const sy_string *r = t->data;
    size_t n = t->nbytes / sizeof(sy_string);
    for (size_t i = 0; i < n; i++)
        if (r[i].size && !r[i].data)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: string %zu has %llu bytes but no data pointer", where, i,
                            (unsigned long long)r[i].size);
        else if (r[i].size > (uint64_t)SIZE_MAX / 2)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: string %zu claims %llu bytes", where, i,
                            (unsigned long long)r[i].size);
    return NULL;
}

SY_EXPORT sy_status *sy_tensor_create_strings(int32_t rank, const int64_t *dims, const char *const *strings,
                                              const size_t *lengths, sy_tensor **out)
{
    if (!out || (rank > 0 && !dims) || rank < 0 || rank > SY_MAX_RANK)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: out is required and rank must be 0..%d "
                        "with dims", SY_MAX_RANK);
    *out = NULL;
    int64_t numel = 1;
    for (int32_t i = 0; i < rank; i++)
        if (dims[i] < 0 || __builtin_mul_overflow(numel, dims[i], &numel))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: dimension %d is %lld", (int)i,
                            (long long)dims[i]);
    if (numel && !strings)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: %lld strings needed, strings is NULL",
                        (long long)numel);
    size_t recs, text = 0, total;
    if (!sy_mul_overflow_size((size_t)numel, sizeof(sy_string), &recs))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: too many strings");
    for (int64_t i = 0; i < numel; i++) {
        if (!strings[i] && (!lengths || lengths[i]))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: string %lld is NULL", (long long)i);
        size_t len = lengths ? lengths[i] : strlen(strings[i]);
        if (__builtin_add_overflow(text, len, &text))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: the strings' total size overflows");
    }
    size_t off = (sizeof(sy_tensor) + DATA_ALIGN - 1) & ~(size_t)(DATA_ALIGN - 1);
    if (__builtin_add_overflow(off, recs, &total) || __builtin_add_overflow(total, text, &total))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_create_strings: the tensor's size overflows");
    sy_tensor *t = sy_aligned_alloc(total, DATA_ALIGN);
    if (!t)
        return sy_error_oom();
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->dtype = SY_DT_STRING;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    t->data = (char *)t + off;
    t->nbytes = recs;
    sy_string *r = t->data;
    char *p = (char *)t->data + recs;
    for (int64_t i = 0; i < numel; i++) {
        size_t len = lengths ? lengths[i] : strlen(strings[i]);
        if (len)
            memcpy(p, strings[i], len);
        r[i].data = p;
        r[i].size = len;
        p += len;
    }
    *out = t;
    return NULL;
}

SY_EXPORT const char *sy_tensor_string(const sy_tensor *t, int64_t index, size_t *length)
{
    if (length)
        *length = 0;
    if (!t || t->dtype != SY_DT_STRING || !t->data || index < 0 ||
        (uint64_t)index >= t->nbytes / sizeof(sy_string))
        return NULL;
    const sy_string *r = (const sy_string *)t->data + index;
    if (length)
        *length = (size_t)r->size;
    return r->size ? r->data : "";
}

/* ---- .npy ------------------------------------------------------------------ */

static const struct {
    char kind;
    int size;
    sy_dtype dt;
} npy_types[] = {
    {'f', 4, SY_DT_FLOAT32}, {'f', 2, SY_DT_FLOAT16}, {'f', 8, SY_DT_FLOAT64}, {'i', 1, SY_DT_INT8},
    {'u', 1, SY_DT_UINT8},   {'i', 2, SY_DT_INT16},   {'u', 2, SY_DT_UINT16},  {'i', 4, SY_DT_INT32},
    {'u', 4, SY_DT_UINT32},  {'i', 8, SY_DT_INT64},   {'u', 8, SY_DT_UINT64},  {'b', 1, SY_DT_BOOL},
};

typedef struct npy_parser {
    const char *p, *end;
} npy_parser;

static void npy_ws(npy_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool npy_eat(npy_parser *ps, char ch)
{
    npy_ws(ps);
    if (ps->p < ps->end && *ps->p == ch) {
        ps->p++;
        return true;
    }
    return false;
}

/* A Python string literal without escapes (all numpy writes); copied into buf. */
static bool npy_str(npy_parser *ps, char *buf, size_t cap)
{
    npy_ws(ps);
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
        return false;
    char q = *ps->p++;
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != q) {
        if (*ps->p == '\\' || n + 1 >= cap)
            return false;
        buf[n++] = *ps->p++;
    }
    if (ps->p >= ps->end)
        return false;
    ps->p++;
    buf[n] = '\0';
    return true;
}

static bool npy_word(npy_parser *ps, const char *w)
{
    npy_ws(ps);
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, w, n) == 0) {
        ps->p += n;
        return true;
    }
    return false;
}

static sy_status *npy_parse_header(const char *path, const char *h, size_t len, sy_dtype *dt, int32_t *rank,
                                   int64_t *dims)
{
    npy_parser ps = {h, h + len};
    bool have_descr = false, have_order = false, have_shape = false;
#define BAD(...) sy_error(SY_ERR_INVALID_ARGUMENT, "%s: bad .npy header: " __VA_ARGS__)
    if (!npy_eat(&ps, '{'))
        return BAD("expected '{'", path);
    for (;;) {
        if (npy_eat(&ps, '}'))
            break;
        char key[32], val[32];
        if (!npy_str(&ps, key, sizeof key) || !npy_eat(&ps, ':'))
            return BAD("expected a quoted key and ':'", path);
        if (strcmp(key, "descr") == 0) {
            if (!npy_str(&ps, val, sizeof val))
                return BAD("'descr' is not a simple type string (structured dtypes are not supported)", path);
            if (strlen(val) < 3) /* order, kind and a size: "<f4" */
                return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is not supported", path, val);
            char order = val[0], kind = val[1];
            char *e;
            long size = strtol(val + 2, &e, 10);
            if (!kind || *e || (order != '<' && order != '|' && order != '=' && order != '>'))
                return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is not supported", path, val);
            if (order == '>' && size != 1)
                return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is big-endian; only little-endian is supported", path, val);
            bool found = false;
            for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++)
                if (npy_types[i].kind == kind && npy_types[i].size == size) {
                    *dt = npy_types[i].dt;
                    found = true;
                }
            if (!found)
                return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy dtype '%s' is not supported (f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8 b1 are)", path, val);
            have_descr = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (npy_word(&ps, "True"))
                return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy array is in Fortran (column-major) order; save it C-contiguous (np.ascontiguousarray)", path);
            if (!npy_word(&ps, "False"))
                return BAD("'fortran_order' is neither True nor False", path);
            have_order = true;
        } else if (strcmp(key, "shape") == 0) {
            if (!npy_eat(&ps, '('))
                return BAD("'shape' is not a tuple", path);
            int32_t r = 0;
            for (;;) {
                if (npy_eat(&ps, ')'))
                    break;
                npy_ws(&ps);
                int64_t v = 0;
                const char *start = ps.p;
                while (ps.p < ps.end && *ps.p >= '0' && *ps.p <= '9') {
                    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *ps.p - '0', &v))
                        return BAD("dimension too large", path);
                    ps.p++;
                }
                if (ps.p == start)
                    return BAD("'shape' holds something other than non-negative integers", path);
                if (ps.p < ps.end && *ps.p == 'L')
                    ps.p++; /* Python 2 long suffix */
                if (r >= SY_MAX_RANK)
                    return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy array has rank above %d", path, SY_MAX_RANK);
                dims[r++] = v;
                if (!npy_eat(&ps, ',')) {
                    if (!npy_eat(&ps, ')'))
                        return BAD("unterminated 'shape' tuple", path);
                    break;
                }
            }
            *rank = r;
            have_shape = true;
        } else {
            return BAD("unknown key '%s'", path, key);
        }
        if (!npy_eat(&ps, ',')) {
            if (!npy_eat(&ps, '}'))
                return BAD("expected ',' or '}'", path);
            break;
        }
    }
    if (!have_descr || !have_order || !have_shape)
        return BAD("missing 'descr', 'fortran_order' or 'shape'", path);
#undef BAD
    return NULL;
}

static sy_status *tensor_alloc(sy_dtype dt, int32_t rank, const int64_t *dims, size_t nbytes, const char *name,
                               sy_tensor **out)
{
    size_t name_len = strlen(name) + 1;
    size_t off = (sizeof(sy_tensor) + name_len + DATA_ALIGN - 1) & ~(size_t)(DATA_ALIGN - 1), total;
    if (__builtin_add_overflow(off, nbytes, &total))
        return sy_error_oom();
    sy_tensor *t = sy_aligned_alloc(total, DATA_ALIGN);
    if (!t)
        return sy_error_oom();
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->dtype = dt;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        t->dims[i] = dims[i];
    char *nm = (char *)(t + 1);
    memcpy(nm, name, name_len);
    t->name = nm;
    t->data = (char *)t + off;
    t->nbytes = nbytes;
    *out = t;
    return NULL;
}

static sy_status *npy_read(const char *path, const uint8_t *p, size_t size, sy_tensor **out)
{
    if (size < NPY_MAGIC_LEN + 4)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: truncated .npy file", path);
    unsigned major = p[6];
    size_t hlen, hoff;
    if (major == 1) {
        hlen = (size_t)p[8] | (size_t)p[9] << 8;
        hoff = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: truncated .npy file", path);
        hlen = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
        hoff = 12;
    } else {
        return sy_error(SY_ERR_UNSUPPORTED, "%s: .npy format version %u.%u is not supported (1.0, 2.0, 3.0 are)", path, major, p[7]);
    }
    if (hlen > size - hoff)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: truncated .npy header (%zu bytes announced, %zu present)", path, hlen,
                        size - hoff);
    sy_dtype dt = SY_DT_UNDEFINED;
    int32_t rank = 0;
    int64_t dims[SY_MAX_RANK] = {0};
    SY_TRY(npy_parse_header(path, (const char *)p + hoff, hlen, &dt, &rank, dims));
    int64_t numel = 1;
    for (int32_t i = 0; i < rank; i++)
        if (__builtin_mul_overflow(numel, dims[i], &numel))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: .npy shape overflows", path);
    size_t nbytes;
    if (!sy_dtype_bytes(dt, numel, &nbytes))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: .npy shape overflows", path);
    size_t doff = hoff + hlen;
    if (size - doff != nbytes)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: .npy data has %zu bytes, but shape and dtype need %zu (%s)", path,
                        size - doff, nbytes, size - doff < nbytes ? "truncated" : "trailing bytes");
    sy_tensor *t = NULL;
    SY_TRY(tensor_alloc(dt, rank, dims, nbytes, "", &t));
    if (nbytes)
        memcpy(t->data, p + doff, nbytes);
    *out = t;
    return NULL;
}

/* The wire format does not say which message a file holds, and the ONNX test
 * data mixes SequenceProto/OptionalProto files with TensorProto ones. When the
 * bytes make no sense as a tensor, say so if they do make sense as one of those. */
static sy_status *non_tensor_kind(const char *path, const uint8_t *p, size_t size)
{
    Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, size, p);
    if (sp) {
        bool plausible = sp->has_elem_type && sp->elem_type >= 1 && sp->elem_type <= 5 &&
                         !(sp->n_tensor_values && sp->elem_type != 1);
        size_t n = sp->n_tensor_values + sp->n_sparse_tensor_values + sp->n_sequence_values + sp->n_map_values +
                   sp->n_optional_values;
        onnx__sequence_proto__free_unpacked(sp, NULL);
        /* one tensor in a SequenceProto and a tensor in an OptionalProto are the same bytes */
        if (plausible && n <= 1)
            return sy_error(SY_ERR_UNSUPPORTED,
                            "%s: holds an ONNX SequenceProto or OptionalProto with one tensor (the bytes are the same), not a plain tensor; sequences and optionals are not supported",
                            path);
        if (plausible)
            return sy_error(SY_ERR_UNSUPPORTED, "%s: holds an ONNX SequenceProto (%zu elements), not a tensor; sequences are not supported",
                            path, n);
    }
    Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, size, p);
    if (op) {
        bool plausible = op->has_elem_type && op->elem_type >= 0 && op->elem_type <= 5;
        bool empty = !op->tensor_value && !op->sparse_tensor_value && !op->sequence_value && !op->map_value && !op->optional_value;
        onnx__optional_proto__free_unpacked(op, NULL);
        if (plausible)
            return sy_error(SY_ERR_UNSUPPORTED, "%s: holds an ONNX OptionalProto (%s), not a tensor; optionals are not supported", path,
                            empty ? "empty" : "with a value");
    }
    return NULL;
}

static sy_status *pb_read(const char *path, const uint8_t *p, size_t size, sy_tensor **out)
{
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, p);
    if (!tp) {
        sy_status *other = non_tensor_kind(path, p, size);
        return other ? other
                     : sy_error(SY_ERR_INVALID_ARGUMENT, "%s: neither a .npy file nor a valid ONNX TensorProto (truncated or corrupt)", path);
    }
    char *dir = sy_dirname(path);
    sy_status *st = dir ? sy_onnx_tensor_from_proto(tp, dir, out) : sy_error_oom();
    free(dir);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    if (st && sy_status_code_of(st) != SY_ERR_OUT_OF_MEMORY) {
        sy_status *other = non_tensor_kind(path, p, size);
        if (other) {
            sy_status_free(st);
            return other;
        }
    }
    return sy_error_wrap(st, "%s", path);
}

SY_EXPORT sy_status *sy_tensor_read_file(const char *path, sy_tensor **out)
{
    if (!path || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_read_file: NULL argument");
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2)
        return sy_error(SY_ERR_IO, "%s: not a regular file (%s)", path, sy_file_kind(sb.st_mode));
    if (fd < 0)
        return sy_error(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t size = (size_t)sb.st_size;
    if (size == 0) {
        close(fd);
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: empty file (not a tensor)", path);
    }
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return sy_error(SY_ERR_IO, "%s: mmap: %s", path, strerror(errno));
    sy_status *st;
    if (size >= NPY_MAGIC_LEN && memcmp(p, NPY_MAGIC, NPY_MAGIC_LEN) == 0)
        st = npy_read(path, p, size, out);
    else
        st = pb_read(path, p, size, out);
    munmap(p, size);
    return st;
}

/* ---- writing ----------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static sy_status *write_atomic(const char *path, const void *a, size_t na, const void *b, size_t nb)
{
    char *tmp = sy_asprintf("%s.tmp.XXXXXX", path);
    if (!tmp)
        return sy_error_oom();
    int fd = mkstemp(tmp);
    if (fd < 0) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: cannot create temporary file: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    /* mkstemp makes 0600; a tensor file is ordinary data */
    (void)fchmod(fd, 0644);
    const void *parts[2] = {a, b};
    size_t lens[2] = {na, nb};
    for (int i = 0; i < 2; i++) {
        const uint8_t *q = parts[i];
        size_t left = lens[i];
        while (left) {
            ssize_t w = write(fd, q, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                sy_status *st = sy_error(SY_ERR_IO, "%s: write failed: %s", path, w < 0 ? strerror(errno) : "no progress");
                close(fd);
                unlink(tmp);
                free(tmp);
                return st;
            }
            q += w;
            left -= (size_t)w;
        }
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: write failed: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    if (rename(tmp, path) != 0) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: cannot rename the temporary file into place: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return NULL;
}

static const char *npy_descr(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT32: return "<f4";
    case SY_DT_FLOAT16: return "<f2";
    case SY_DT_FLOAT64: return "<f8";
    case SY_DT_INT8: return "|i1";
    case SY_DT_UINT8: return "|u1";
    case SY_DT_INT16: return "<i2";
    case SY_DT_UINT16: return "<u2";
    case SY_DT_INT32: return "<i4";
    case SY_DT_UINT32: return "<u4";
    case SY_DT_INT64: return "<i8";
    case SY_DT_UINT64: return "<u8";
    case SY_DT_BOOL: return "|b1";
    default: return NULL;
    }
}

static sy_status *write_npy(const char *path, const sy_tensor *t)
{
    const char *descr = npy_descr(t->dtype);
    if (!descr)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: dtype %s has no .npy equivalent; write a .pb instead", path,
                        sy_onnx_dtype_name((int32_t)t->dtype));
    char shape[SY_MAX_RANK * 24 + 8];
    size_t n = 0;
    n += (size_t)snprintf(shape + n, sizeof shape - n, "(");
    for (int32_t i = 0; i < t->rank; i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%lld%s", (long long)t->dims[i],
                              t->rank == 1 ? "," : (i + 1 < t->rank ? ", " : ""));
    snprintf(shape + n, sizeof shape - n, ")");
    char hdr[512];
    int hl = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    /* pad with spaces so the data starts at a 64-byte boundary, newline last (the format's rule) */
    size_t total = 10 + (size_t)hl + 1;
    size_t padded = (total + 63) & ~(size_t)63;
    memset(hdr + 10 + hl, ' ', padded - total);
    hdr[padded - 1] = '\n';
    size_t hlen = padded - 10;
    memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
    hdr[6] = 1;
    hdr[7] = 0;
    hdr[8] = (char)(hlen & 0xff);
    hdr[9] = (char)(hlen >> 8);
    return write_atomic(path, hdr, padded, t->data, t->nbytes);
}

static sy_status *write_pb(const char *path, const sy_tensor *t)
{
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    int64_t dims[SY_MAX_RANK];
    for (int32_t i = 0; i < t->rank; i++)
        dims[i] = t->dims[i];
    tp.n_dims = (size_t)t->rank;
    tp.dims = dims;
    tp.has_data_type = true;
    tp.data_type = (int32_t)t->dtype;
    tp.name = (char *)(t->name ? t->name : "");
    ProtobufCBinaryData *strs = NULL;
    if (t->dtype == SY_DT_STRING) {
        /* ONNX keeps strings in string_data, one entry per element */
        size_t n = t->nbytes / sizeof(sy_string);
        const sy_string *r = t->data;
        strs = calloc(n ? n : 1, sizeof *strs);
        if (!strs)
            return sy_error_oom();
        for (size_t i = 0; i < n; i++) {
            strs[i].data = (uint8_t *)(uintptr_t)r[i].data;
            strs[i].len = (size_t)r[i].size;
        }
        tp.n_string_data = n;
        tp.string_data = strs;
    } else {
        tp.has_raw_data = true;
        tp.raw_data.data = t->data;
        tp.raw_data.len = t->nbytes;
    }
    size_t len = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        free(strs);
        return sy_error_oom();
    }
    size_t got = onnx__tensor_proto__pack(&tp, buf);
    sy_status *st = got == len ? write_atomic(path, buf, len, NULL, 0)
                               : sy_error(SY_ERR_INTERNAL, "%s: TensorProto encoding size mismatch", path);
    free(buf);
    free(strs);
    return st;
}

SY_EXPORT sy_status *sy_tensor_write_file(const char *path, const sy_tensor *t)
{
    if (!path || !t)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tensor_write_file: NULL argument");
    if (t->rank < 0 || t->rank > SY_MAX_RANK)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: tensor rank %d is outside 0..%d", path, (int)t->rank, SY_MAX_RANK);
    int64_t numel = 1;
    for (int32_t i = 0; i < t->rank; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(numel, t->dims[i], &numel))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: tensor dimension %d is %lld", path, (int)i, (long long)t->dims[i]);
    size_t want;
    if (!sy_onnx_dtype_bytes((int32_t)t->dtype, numel, &want))
        return sy_error(SY_ERR_UNSUPPORTED, "%s: cannot write a tensor of dtype %d", path, (int)t->dtype);
    if (t->nbytes != want)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: tensor has %zu bytes, but its dims and dtype %s need %zu", path, t->nbytes,
                        sy_onnx_dtype_name((int32_t)t->dtype), want);
    if (want && !t->data)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: tensor has no data", path);
    if (t->dtype == SY_DT_STRING)
        SY_TRY(sy_strings_check(t, path));
    if (ends_with(path, ".npy"))
        return write_npy(path, t);
    return write_pb(path, t);
}
