/* External data of the model being quantized, read into the tensors
 * themselves. The quantizer writes its output wherever it is told, so a
 * reference relative to the input's folder would not resolve next to the
 * output, and external float weights are not weights the rewrite can see;
 * with the bytes inline the weights are quantized and the written model is
 * self-contained. The reading follows the importer's rules (a relative
 * location without "..", inside the model's folder after symbolic links, a
 * regular file opened without blocking, offset and length inside the file,
 * the length its dims and type need), and the whole model must stay under
 * protobuf's 2 GiB message limit, which is why ONNX has external data. */
#include "quant_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* protobuf's limit on one message: a model above it cannot be written */
#define Q_PROTOBUF_LIMIT ((uint64_t)INT32_MAX)

typedef struct xctx {
    const char *dir;       /* the model's folder, NULL: none known */
    const char *given;     /* the folder asked for, when it did not resolve */
    char real_dir[PATH_MAX];
    uint64_t budget;       /* bytes still allowed in the model */
    size_t n_inlined;
    char *err;
    size_t err_len;
} xctx;

/* bits per element of an ONNX TensorProto data type; 0: unknown or string */
static unsigned dtype_bits(int dt)
{
    switch (dt) {
    case 2: case 3: case 9: case 17: case 18: case 19: case 20: return 8; /* uint8 int8 bool float8 */
    case 4: case 5: case 10: case 16: return 16;                         /* uint16 int16 float16 bfloat16 */
    case 1: case 6: case 12: return 32;                                  /* float int32 uint32 */
    case 7: case 11: case 13: case 14: return 64;                        /* int64 double uint64 complex64 */
    case 15: return 128;                                                 /* complex128 */
    case 21: case 22: case 23: return 4;                                 /* uint4 int4 float4e2m1 */
    default: return 0;
    }
}

static bool parse_u64(const char *s, uint64_t *v)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end = NULL;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

/* relative, no ".." component */
static bool location_ok(xctx *x, const char *what, const char *loc)
{
    if (!loc || !*loc) {
        q_seterr(x->err, x->err_len, "%s: external_data has no 'location'", what);
        return false;
    }
    if (loc[0] == '/') {
        q_seterr(x->err, x->err_len, "%s: external data location '%s' is an absolute path (it must be relative to "
                 "the model's folder)", what, loc);
        return false;
    }
    for (const char *p = loc; *p;) {
        size_t len = strcspn(p, "/");
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            q_seterr(x->err, x->err_len, "%s: external data location '%s' leaves the model's folder ('..')", what, loc);
            return false;
        }
        p += len;
        p += strspn(p, "/");
    }
    return true;
}

/* Read [offset, offset + len) of dir/loc into a malloc'd block. 0, -1 (out
 * of memory), 1 (refused, err). */
static int read_span(xctx *x, const char *what, const char *loc, uint64_t offset, size_t len, uint8_t **out)
{
    char full[PATH_MAX], real[PATH_MAX];
    int n = snprintf(full, sizeof full, "%s/%s", x->dir, loc);
    if (n < 0 || (size_t)n >= sizeof full) {
        q_seterr(x->err, x->err_len, "%s: external data path '%s/%s' is too long", what, x->dir, loc);
        return 1;
    }
    if (!realpath(full, real)) {
        q_seterr(x->err, x->err_len, "%s: external data file '%s': %s", what, full, strerror(errno));
        return 1;
    }
    size_t bl = strlen(x->real_dir);
    if (strcmp(x->real_dir, "/") && (strncmp(real, x->real_dir, bl) || real[bl] != '/')) {
        q_seterr(x->err, x->err_len, "%s: external data file '%s' resolves to '%s', outside the model's folder '%s'",
                 what, full, real, x->real_dir);
        return 1;
    }
    /* O_NONBLOCK: a FIFO planted under the name must not hang the open */
    int fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        q_seterr(x->err, x->err_len, "%s: external data file '%s': %s", what, full, strerror(errno));
        return 1;
    }
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        q_seterr(x->err, x->err_len, "%s: external data file '%s' is not a regular file", what, full);
        close(fd);
        return 1;
    }
    uint64_t fsize = (uint64_t)sb.st_size;
    if (offset > fsize || len > fsize - offset) {
        q_seterr(x->err, x->err_len, "%s: external data '%s': offset %llu + length %zu is outside the file (%llu "
                 "bytes)", what, loc, (unsigned long long)offset, len, (unsigned long long)fsize);
        close(fd);
        return 1;
    }
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        close(fd);
        return -1;
    }
    for (size_t done = 0; done < len;) {
        ssize_t r = pread(fd, buf + done, len - done, (off_t)(offset + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            q_seterr(x->err, x->err_len, "%s: external data file '%s': read failed at byte %llu: %s", what, full,
                     (unsigned long long)(offset + done), r ? strerror(errno) : "unexpected end of file");
            free(buf);
            close(fd);
            return 1;
        }
        done += (size_t)r;
    }
    close(fd);
    *out = buf;
    return 0;
}

static int inline_tensor(xctx *x, Onnx__TensorProto *t, const char *where)
{
    if (!t || !t->has_data_location || t->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return 0;
    char what[512];
    snprintf(what, sizeof what, "%s '%s'", where, t->name ? t->name : "");
    if (!x->dir) {
        if (x->given)
            q_seterr(x->err, x->err_len, "%s keeps its data in an external file, and the model's folder '%s' "
                     "cannot be resolved", what, x->given);
        else
            q_seterr(x->err, x->err_len, "%s keeps its data in an external file, and the model was given as bytes "
                     "without a path to find it: quantize the model by its path", what);
        return 1;
    }
    unsigned bits = dtype_bits(t->data_type);
    if (!bits) {
        q_seterr(x->err, x->err_len, "%s: external data of ONNX data type %d is not read by the quantizer", what,
                 (int)t->data_type);
        return 1;
    }
    uint64_t numel = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(numel, (uint64_t)t->dims[i], &numel)) {
            q_seterr(x->err, x->err_len, "%s: dims negative or overflowing", what);
            return 1;
        }
    uint64_t nbits, need;
    if (__builtin_mul_overflow(numel, (uint64_t)bits, &nbits) || (need = (nbits + 7) / 8) > x->budget) {
        q_seterr(x->err, x->err_len, "%s: the model with its external data inline would exceed protobuf's 2 GiB "
                 "limit on one model; nothing was written", what);
        return 1;
    }
    const char *loc = NULL;
    uint64_t offset = 0, length = need;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const char *k = t->external_data[i]->key ? t->external_data[i]->key : "";
        const char *v = t->external_data[i]->value ? t->external_data[i]->value : "";
        if (!strcmp(k, "location"))
            loc = v;
        else if ((!strcmp(k, "offset") && !parse_u64(v, &offset)) || (!strcmp(k, "length") && !parse_u64(v, &length))) {
            q_seterr(x->err, x->err_len, "%s: external data %s '%s' is not a non-negative integer", what, k, v);
            return 1;
        }
    }
    if (length != need) {
        q_seterr(x->err, x->err_len, "%s: external data length %llu, but its dims and type need %llu bytes", what,
                 (unsigned long long)length, (unsigned long long)need);
        return 1;
    }
    if (!location_ok(x, what, loc))
        return 1;
    uint8_t *data = NULL;
    int rc = read_span(x, what, loc, offset, (size_t)need, &data);
    if (rc)
        return rc;
    /* the tensor now holds its bytes: the tree's own allocator (malloc) frees them */
    for (size_t i = 0; i < t->n_external_data; i++)
        onnx__string_string_entry_proto__free_unpacked(t->external_data[i], NULL);
    free(t->external_data);
    t->external_data = NULL;
    t->n_external_data = 0;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
    t->has_data_location = 0;
    if (t->has_raw_data)
        free(t->raw_data.data);
    t->raw_data.data = data;
    t->raw_data.len = (size_t)need;
    t->has_raw_data = 1;
    x->budget -= need;
    x->n_inlined++;
    return 0;
}

static int inline_graph(xctx *x, Onnx__GraphProto *g, int depth);

static int inline_attrs(xctx *x, Onnx__NodeProto *n, int depth)
{
    char where[512];
    snprintf(where, sizeof where, "node '%s' (%s): tensor attribute", n->name ? n->name : "",
             n->op_type ? n->op_type : "");
    for (size_t i = 0; i < n->n_attribute; i++) {
        Onnx__AttributeProto *a = n->attribute[i];
        int rc = inline_tensor(x, a->t, where);
        for (size_t k = 0; !rc && k < a->n_tensors; k++)
            rc = inline_tensor(x, a->tensors[k], where);
        if (!rc && a->sparse_tensor)
            rc = inline_tensor(x, a->sparse_tensor->values, where);
        if (!rc && a->sparse_tensor)
            rc = inline_tensor(x, a->sparse_tensor->indices, where);
        if (!rc && a->g)
            rc = inline_graph(x, a->g, depth + 1);
        for (size_t k = 0; !rc && k < a->n_graphs; k++)
            rc = inline_graph(x, a->graphs[k], depth + 1);
        if (rc)
            return rc;
    }
    return 0;
}

static int inline_graph(xctx *x, Onnx__GraphProto *g, int depth)
{
    if (depth > 64) {
        q_seterr(x->err, x->err_len, "subgraphs nested more than 64 deep");
        return 1;
    }
    for (size_t i = 0; i < g->n_initializer; i++) {
        int rc = inline_tensor(x, g->initializer[i], "initializer");
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < g->n_sparse_initializer; i++) {
        Onnx__SparseTensorProto *s = g->sparse_initializer[i];
        int rc = inline_tensor(x, s->values, "sparse initializer");
        if (!rc)
            rc = inline_tensor(x, s->indices, "sparse initializer");
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < g->n_node; i++) {
        int rc = inline_attrs(x, g->node[i], depth);
        if (rc)
            return rc;
    }
    return 0;
}

int q_inline_external(Onnx__ModelProto *m, const char *dir, size_t model_bytes, size_t *n_inlined, char *err,
                      size_t err_len)
{
    xctx x = {.dir = dir, .err = err, .err_len = err_len};
    x.budget = model_bytes < Q_PROTOBUF_LIMIT ? Q_PROTOBUF_LIMIT - model_bytes : 0;
    if (dir && !realpath(dir, x.real_dir)) {
        x.dir = NULL; /* a refusal only if a tensor needs the folder */
        x.given = dir;
    }
    int rc = m->graph ? inline_graph(&x, m->graph, 0) : 0;
    *n_inlined = x.n_inlined;
    return rc;
}
