/*
 * ONNX importer. protobuf-c does the decoding (onnx.pb-c.c generated from
 * framework/proto/onnx.proto); this file turns the decoded ModelProto into the
 * IR and checks everything a later stage would otherwise trip over: sizes
 * from the file are untrusted, so every product and sum is overflow-checked.
 */
#include "onnx_import.h"
#include "onnx.pb-c.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ONNX raw_data is little-endian and is borrowed as is: big-endian hosts need a byte-swapping path"
#endif

#define S(x) ((x) ? (x) : "")
/* deeper If/Loop nesting than this is not a real model; the limit keeps our
 * own recursion bounded */
#define SY_ONNX_MAX_DEPTH 64
/* raw_data/external bytes are used in place only when at least this aligned
 * (malloc'd protobuf-c buffers are); otherwise they are copied */
#define SY_BORROW_ALIGN 16
#define SY_DATA_ALIGN 64

/* ---- element types ------------------------------------------------------- */

enum { F_NONE, F_FLOAT, F_INT32, F_INT64, F_DOUBLE, F_UINT64, F_STRING };

static const struct {
    const char *name;
    uint8_t bits;  /* bits per element; 0: no fixed size (STRING) */
    uint8_t field; /* which typed field holds it when raw_data is not used */
} onnx_types[] = {
    [1] = {"FLOAT", 32, F_FLOAT},         [2] = {"UINT8", 8, F_INT32},          [3] = {"INT8", 8, F_INT32},
    [4] = {"UINT16", 16, F_INT32},        [5] = {"INT16", 16, F_INT32},         [6] = {"INT32", 32, F_INT32},
    [7] = {"INT64", 64, F_INT64},         [8] = {"STRING", 0, F_STRING},        [9] = {"BOOL", 8, F_INT32},
    [10] = {"FLOAT16", 16, F_INT32},      [11] = {"DOUBLE", 64, F_DOUBLE},      [12] = {"UINT32", 32, F_UINT64},
    [13] = {"UINT64", 64, F_UINT64},      [14] = {"COMPLEX64", 64, F_FLOAT},    [15] = {"COMPLEX128", 128, F_DOUBLE},
    [16] = {"BFLOAT16", 16, F_INT32},     [17] = {"FLOAT8E4M3FN", 8, F_INT32},  [18] = {"FLOAT8E4M3FNUZ", 8, F_INT32},
    [19] = {"FLOAT8E5M2", 8, F_INT32},    [20] = {"FLOAT8E5M2FNUZ", 8, F_INT32}, [21] = {"UINT4", 4, F_INT32},
    [22] = {"INT4", 4, F_INT32},          [23] = {"FLOAT4E2M1", 4, F_INT32},    [24] = {"FLOAT8E8M0", 8, F_INT32},
    [25] = {"UINT2", 2, F_INT32},         [26] = {"INT2", 2, F_INT32},
};
#define N_ONNX_TYPES ((int32_t)(sizeof onnx_types / sizeof onnx_types[0]))

static bool onnx_dtype_known(int32_t dt) { return dt > 0 && dt < N_ONNX_TYPES && onnx_types[dt].name; }

const char *sy_onnx_dtype_name(int32_t dt) { return onnx_dtype_known(dt) ? onnx_types[dt].name : "?"; }

bool sy_onnx_dtype_bytes(int32_t dt, int64_t numel, size_t *out)
{
    /* a string tensor's data is its array of sy_string records */
    if (dt == SY_DT_STRING)
        return numel >= 0 && sy_mul_overflow_size((size_t)numel, sizeof(sy_string), out);
    if (!onnx_dtype_known(dt) || numel < 0 || onnx_types[dt].bits == 0)
        return false;
    unsigned bits = onnx_types[dt].bits;
    if (bits < 8) {
        unsigned per_byte = 8 / bits;
        uint64_t n = (uint64_t)numel / per_byte + ((uint64_t)numel % per_byte != 0);
        if (n > SIZE_MAX)
            return false;
        *out = (size_t)n;
        return true;
    }
    return sy_mul_overflow_size((size_t)numel, bits / 8, out);
}

/* ---- the decoded message's allocator ------------------------------------- */

/* protobuf-c allocates every message, string and array of the tree as a heap
 * block of its own: about 6 a node, each with the allocator's header and
 * rounding, which doubled the tree's footprint while the IR is built beside
 * it (docs/fuzzing.md, the 10^6-node chain). Small blocks are carved instead
 * from a few large chunks that are unmapped as a whole once the IR is built;
 * large ones (an initializer's raw_data, the node array, protobuf-c's
 * scratch) stay malloc'd, so an initializer can take its block out of the
 * tree (tp_decode) and protobuf-c's frees of its scratch give memory back. */
#define PB_SMALL_MAX 512          /* blocks up to this many bytes go to a chunk */
#define PB_CHUNK_MIN ((size_t)1 << 20)
#define PB_CHUNK_MAX ((size_t)1 << 26) /* chunks double up to this, so there are few to search */
#define PB_ALIGN 8                /* protobuf-c's structs hold pointers and 64-bit scalars at most */

typedef struct pb_chunk {
    struct pb_chunk *next;
    size_t size; /* bytes mapped, this header included */
    size_t used;
} pb_chunk;

typedef struct pb_arena {
    pb_chunk *head; /* the chunk being filled, then older ones */
    size_t next_size;
} pb_arena;

static bool pb_arena_owns(const pb_arena *a, const void *p)
{
    for (const pb_chunk *k = a->head; k; k = k->next)
        if ((const char *)p >= (const char *)k && (const char *)p < (const char *)k + k->size)
            return true;
    return false;
}

static void *pb_alloc(void *data, size_t size)
{
    pb_arena *a = data;
    if (size > PB_SMALL_MAX)
        return malloc(size);
    /* never 0 bytes: a block must lie inside its chunk for pb_arena_owns */
    size = size ? (size + PB_ALIGN - 1) & ~(size_t)(PB_ALIGN - 1) : PB_ALIGN;
    pb_chunk *k = a->head;
    if (!k || k->size - k->used < size) {
        size_t cs = a->next_size ? a->next_size : PB_CHUNK_MIN;
        void *m = mmap(NULL, cs, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        k = m;
        k->next = a->head;
        k->size = cs;
        k->used = (sizeof *k + PB_ALIGN - 1) & ~(size_t)(PB_ALIGN - 1);
        a->head = k;
        a->next_size = cs < PB_CHUNK_MAX ? cs * 2 : cs;
    }
    void *p = (char *)k + k->used;
    k->used += size;
    return p;
}

/* a block in a chunk goes with its chunk (pb_arena_release) */
static void pb_free(void *data, void *p)
{
    if (p && !pb_arena_owns(data, p))
        free(p);
}

static void pb_arena_release(pb_arena *a)
{
    while (a->head) {
        pb_chunk *k = a->head;
        a->head = k->next;
        munmap(k, k->size);
    }
    a->next_size = 0;
}

/* Keep the newest chunk (the largest) for the next message, drop the rest:
 * the arena of one node at a time (wire_split) reuses its memory. */
static void pb_arena_reset(pb_arena *a)
{
    pb_chunk *keep = a->head;
    if (!keep)
        return;
    a->head = keep->next;
    pb_arena_release(a);
    keep->next = NULL;
    keep->used = (sizeof *keep + PB_ALIGN - 1) & ~(size_t)(PB_ALIGN - 1);
    a->head = keep;
    a->next_size = keep->size < PB_CHUNK_MAX ? keep->size * 2 : keep->size;
}

/* ---- the main graph's nodes and initializers, one at a time ------------- */

/* Unpacking the whole ModelProto holds every node's decoded message while the
 * IR is built from them: ~180 bytes a node beside the IR's own, the peak of a
 * huge graph's load (docs/fuzzing.md, the 10^6-node chain). Instead the
 * wire is walked first: the main graph's node (GraphProto field 1) and
 * initializer (field 5) fields are only located, the rest of the model is
 * copied into a small buffer that protobuf-c unpacks, and the importer
 * unpacks each node and initializer on its own when it needs it, freeing it
 * before the next. Protobuf's rules are kept: the occurrences of the
 * ModelProto's graph field merge (their contents concatenate), repeated
 * fields append in file order. Anything the walk does not expect (a group,
 * a field of the wrong wire type, a truncated length) leaves the model to
 * the plain unpack of the whole file, which then accepts or refuses it. */
typedef struct pb_span {
    const uint8_t *p;
    size_t n;
} pb_span;

typedef struct wire_split {
    uint8_t *stripped; /* the ModelProto without the main graph's nodes and initializers */
    size_t stripped_len;
    const uint8_t *data; /* the whole ModelProto (the caller's buffer), where they are */
    size_t size;
    size_t n_nodes, n_inits;
} wire_split;

typedef struct wire_field {
    uint32_t num;
    unsigned wt;
    const uint8_t *start, *payload, *end; /* the whole field; a length-delimited payload */
} wire_field;

static bool wire_varint(const uint8_t **p, const uint8_t *end, int max_bytes, uint64_t *v)
{
    uint64_t r = 0;
    for (int i = 0; i < max_bytes && *p < end; i++) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}

/* The next field of [*p, end): 1, 0 at the end, -1 when it is not one the
 * walk takes (then the plain unpack decides). Tags and lengths are at most 5
 * bytes, as protobuf-c reads them. */
static int wire_next(const uint8_t **p, const uint8_t *end, wire_field *f)
{
    if (*p >= end)
        return 0;
    f->start = *p;
    uint64_t key, v;
    if (!wire_varint(p, end, 5, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
        return -1;
    f->num = (uint32_t)(key >> 3);
    f->wt = (unsigned)(key & 7);
    f->payload = NULL;
    switch (f->wt) {
    case 0:
        if (!wire_varint(p, end, 10, &v))
            return -1;
        break;
    case 1:
    case 5: {
        size_t n = f->wt == 1 ? 8 : 4;
        if ((size_t)(end - *p) < n)
            return -1;
        *p += n;
        break;
    }
    case 2:
        if (!wire_varint(p, end, 5, &v) || v > (uint64_t)(end - *p))
            return -1;
        f->payload = *p;
        *p += v;
        break;
    default:
        return -1; /* groups (3, 4) and the undefined 6, 7 */
    }
    f->end = *p;
    return 1;
}

static void wire_split_free(wire_split *w)
{
    free(w->stripped);
    memset(w, 0, sizeof *w);
}

/* The fields numbered `num` of the graph fields of a ModelProto, one after
 * the other in file order: a walk of what wire_split_model already checked
 * (nothing is kept per node: an array of their places would cost 16 bytes
 * a node). */
typedef struct wire_cursor {
    const uint8_t *p, *end; /* in the ModelProto */
    const uint8_t *q, *qend; /* in the graph field being read (q == qend: none) */
    uint32_t num;
    size_t next; /* index of the field the next call gives */
} wire_cursor;

static void cursor_start(wire_cursor *k, const wire_split *w, uint32_t num)
{
    *k = (wire_cursor){.p = w->data, .end = w->data + w->size, .num = num};
}

static bool cursor_next(wire_cursor *k, pb_span *out)
{
    enum { MODEL_GRAPH = 7 };
    wire_field f;
    for (;;) {
        while (k->q < k->qend)
            if (wire_next(&k->q, k->qend, &f) <= 0)
                k->q = k->qend;
            else if (f.num == k->num) {
                *out = (pb_span){f.payload, (size_t)(f.end - f.payload)};
                k->next++;
                return true;
            }
        /* the next graph field of the model */
        for (;;) {
            if (wire_next(&k->p, k->end, &f) <= 0)
                return false;
            if (f.num == MODEL_GRAPH)
                break;
        }
        k->q = f.payload;
        k->qend = f.end;
    }
}

/* field i (counted from 0) of what k walks; sequential calls cost one step */
static bool cursor_at(wire_cursor *k, const wire_split *w, size_t i, pb_span *out)
{
    if (i < k->next || !k->p) {
        uint32_t num = k->num;
        cursor_start(k, w, num);
    }
    pb_span s = {0};
    while (k->next <= i)
        if (!cursor_next(k, &s))
            return false;
    *out = s;
    return true;
}

static size_t varint_put(uint8_t *o, uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        o[n++] = b | (v ? 0x80 : 0);
    } while (v);
    return n;
}

/* 1: split (w filled), 0: not split (unpack the whole model), -1: out of memory */
static int wire_split_model(const uint8_t *data, size_t size, wire_split *w)
{
    enum { MODEL_GRAPH = 7, GRAPH_NODE = 1, GRAPH_INITIALIZER = 5 };
    memset(w, 0, sizeof *w);
    const uint8_t *end = data + size, *p = data;
    size_t kept_model = 0, kept_graph = 0;
    bool has_graph = false;
    wire_field f;
    int r;
    /* locate, and size what is kept */
    while ((r = wire_next(&p, end, &f)) > 0) {
        if (f.num != MODEL_GRAPH) {
            kept_model += (size_t)(f.end - f.start);
            continue;
        }
        if (f.wt != 2)
            goto plain;
        has_graph = true;
        const uint8_t *q = f.payload, *qe = f.end;
        wire_field g;
        while ((r = wire_next(&q, qe, &g)) > 0) {
            size_t *count = g.num == GRAPH_NODE ? &w->n_nodes : g.num == GRAPH_INITIALIZER ? &w->n_inits : NULL;
            if (!count) {
                kept_graph += (size_t)(g.end - g.start);
                continue;
            }
            if (g.wt != 2)
                goto plain;
            ++*count;
        }
        if (r < 0)
            goto plain;
    }
    if (r < 0 || !has_graph || (!w->n_nodes && !w->n_inits))
        goto plain;
    w->data = data;
    w->size = size;
    /* the kept fields in file order, then one graph field with the kept
     * contents of every graph field (which is what their merge is) */
    w->stripped = malloc(kept_model + 1 + 10 + kept_graph);
    if (!w->stripped) {
        wire_split_free(w);
        return -1;
    }
    uint8_t *o = w->stripped;
    for (p = data; wire_next(&p, end, &f) > 0;)
        if (f.num != MODEL_GRAPH) {
            memcpy(o, f.start, (size_t)(f.end - f.start));
            o += f.end - f.start;
        }
    *o++ = MODEL_GRAPH << 3 | 2;
    o += varint_put(o, kept_graph);
    for (p = data; wire_next(&p, end, &f) > 0;) {
        if (f.num != MODEL_GRAPH)
            continue;
        const uint8_t *q = f.payload;
        wire_field g;
        while (wire_next(&q, f.end, &g) > 0)
            if (g.num != GRAPH_NODE && g.num != GRAPH_INITIALIZER) {
                memcpy(o, g.start, (size_t)(g.end - g.start));
                o += g.end - g.start;
            }
    }
    w->stripped_len = (size_t)(o - w->stripped);
    return 1;
plain:
    wire_split_free(w);
    return 0;
}

/* How many fields numbered num a message's bytes hold (0 when they do not
 * walk: the count only sizes an array). */
static size_t wire_count(const pb_span *s, uint32_t num)
{
    const uint8_t *p = s->p, *end = s->p + s->n;
    wire_field f;
    size_t n = 0;
    int r;
    while ((r = wire_next(&p, end, &f)) > 0)
        n += f.num == num;
    return r < 0 ? 0 : n;
}

/* ---- helpers --------------------------------------------------------------- */

typedef struct import_ctx {
    ir_model *m;
    const char *where;   /* file path or buffer name, first in every message */
    const char *base_dir;
    char **map_paths;    /* real path of each external-data mapping in m->mappings */
    /* the last external location resolved and its mapping: a model's
     * initializers mostly name one file, and two realpath() calls per
     * tensor were most of a large model's load syscalls */
    const char *last_base;
    char *last_loc;
    uint32_t last_map;
    const pb_arena *arena; /* where the decoded message's small blocks are */
    int depth;
    /* the main graph's nodes and initializers when they stay on the wire
     * (wire_split; NULL: they are in the decoded GraphProto), and the one
     * decoded at a time, with the arena its small blocks come from */
    const wire_split *wire;
    wire_cursor node_cur, init_cur;
    pb_arena one_arena;
    ProtobufCAllocator one_pa;
    Onnx__NodeProto *one_node;
    Onnx__TensorProto *one_init;
} import_ctx;

typedef struct tp_data {
    int32_t dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    int64_t numel;
    const void *data;
    size_t nbytes;
    void *owned; /* aligned allocation owning data, or NULL when borrowed */
} tp_data;

static sy_status *oom(void) { return sy_error_oom(); }

static void dims_str(const int64_t *dims, int32_t rank, char *buf, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (int32_t i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)dims[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* Strict unsigned decimal: external_data offsets must not be "12abc" or "-1". */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool is_aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

/* Reject names that could leave the model's directory before touching the
 * file system; realpath() afterwards also catches symlinks pointing out. */
static sy_status *check_location(const char *loc)
{
    if (!loc || !*loc)
        return sy_error(SY_ERR_INVALID_MODEL, "external_data has no 'location'");
    if (loc[0] == '/')
        return sy_error(SY_ERR_INVALID_MODEL, "external data location '%s' is an absolute path (must be relative to the model's directory)", loc);
    for (const char *p = loc; *p;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return sy_error(SY_ERR_INVALID_MODEL, "external data location '%s' escapes the model's directory ('..')", loc);
        p += len;
        while (*p == '/')
            p++;
    }
    return NULL;
}

static void remember_location(import_ctx *c, const char *base_dir, const char *loc, uint32_t map)
{
    free(c->last_loc);
    c->last_loc = sy_strdup(loc); /* NULL (out of memory): only the memo is lost */
    c->last_base = base_dir;
    c->last_map = map;
}

/* Map (or find already mapped) an external data file. With a ctx the mapping
 * lives as long as the model; without one it is returned to the caller. */
static sy_status *map_external(import_ctx *c, const char *base_dir, const char *loc, const uint8_t **addr,
                               size_t *size, bool *caller_unmaps)
{
    SY_TRY(check_location(loc));
    if (!base_dir)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "external data '%s' needs a base directory, and none was given", loc);
    if (c && c->last_loc && c->last_base == base_dir && strcmp(c->last_loc, loc) == 0) {
        *addr = c->m->mappings[c->last_map].addr;
        *size = c->m->mappings[c->last_map].size;
        *caller_unmaps = false;
        return NULL;
    }
    char *full = sy_path_join(base_dir, loc);
    if (!full)
        return oom();
    char real_base[PATH_MAX], real[PATH_MAX];
    if (!realpath(base_dir, real_base)) {
        sy_status *st = sy_error(SY_ERR_IO, "model directory '%s': %s", base_dir, strerror(errno));
        free(full);
        return st;
    }
    if (!realpath(full, real)) {
        sy_status *st = sy_error(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "external data file '%s': %s", full,
                                 strerror(errno));
        free(full);
        return st;
    }
    size_t bl = strlen(real_base);
    bool inside = strcmp(real_base, "/") == 0 || (strncmp(real, real_base, bl) == 0 && real[bl] == '/');
    if (!inside) {
        sy_status *st = sy_error(SY_ERR_INVALID_MODEL, "external data file '%s' resolves to '%s', outside the model's directory '%s'",
                                 full, real, real_base);
        free(full);
        return st;
    }
    if (c) {
        for (uint32_t i = 0; i < c->m->n_mappings; i++) {
            if (c->map_paths[i] && strcmp(c->map_paths[i], real) == 0) {
                *addr = c->m->mappings[i].addr;
                *size = c->m->mappings[i].size;
                *caller_unmaps = false;
                free(full);
                remember_location(c, base_dir, loc, i);
                return NULL;
            }
        }
    }
    struct stat sb;
    int fd = sy_open_regular(real, &sb);
    if (fd < 0) {
        sy_status *st = fd == -2 ? sy_error(SY_ERR_IO, "external data file '%s': not a regular file (%s)", full,
                                            sy_file_kind(sb.st_mode))
                                 : sy_error(SY_ERR_IO, "external data file '%s': %s", full, strerror(errno));
        free(full);
        return st;
    }
    free(full);
    size_t fsize = (size_t)sb.st_size;
    void *p = NULL;
    if (fsize > 0) {
        p = mmap(NULL, fsize, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            sy_status *st = sy_error(SY_ERR_IO, "external data file '%s': mmap: %s", real, strerror(errno));
            close(fd);
            return st;
        }
    }
    close(fd);
    *addr = p;
    *size = fsize;
    *caller_unmaps = true;
    if (c && p) {
        uint32_t n = c->m->n_mappings;
        ir_mapping *nm = realloc(c->m->mappings, (n + 1) * sizeof *nm);
        if (nm)
            c->m->mappings = nm;
        char **np = nm ? realloc(c->map_paths, (n + 1) * sizeof *np) : NULL;
        if (np)
            c->map_paths = np;
        char *rp = np ? sy_strdup(real) : NULL;
        if (!rp) {
            munmap(p, fsize);
            return oom();
        }
        nm[n] = (ir_mapping){.addr = p, .size = fsize, .is_mmap = true};
        np[n] = rp;
        c->m->n_mappings = n + 1;
        *caller_unmaps = false;
        remember_location(c, base_dir, loc, n);
    }
    return NULL;
}

static sy_status *copy_owned(tp_data *d, const void *src, size_t n)
{
    d->owned = sy_aligned_alloc(n, SY_DATA_ALIGN);
    if (!d->owned)
        return oom();
    if (n)
        memcpy(d->owned, src, n);
    d->data = d->owned;
    d->nbytes = n;
    return NULL;
}

static sy_status *tp_external(import_ctx *c, const Onnx__TensorProto *tp, const char *base_dir, tp_data *d)
{
    const char *loc = NULL;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *k = S(tp->external_data[i]->key), *v = S(tp->external_data[i]->value);
        if (strcmp(k, "location") == 0)
            loc = v;
        else if (strcmp(k, "offset") == 0 && !parse_u64(v, &offset))
            return sy_error(SY_ERR_INVALID_MODEL, "external data offset '%s' is not a non-negative integer", v);
        else if (strcmp(k, "length") == 0) {
            if (!parse_u64(v, &length))
                return sy_error(SY_ERR_INVALID_MODEL, "external data length '%s' is not a non-negative integer", v);
            has_length = true;
        }
    }
    if (has_length && length != d->nbytes)
        return sy_error(SY_ERR_INVALID_MODEL, "external data length %llu does not match the %zu bytes its dims and type need",
                        (unsigned long long)length, d->nbytes);
    const uint8_t *base;
    size_t fsize;
    bool caller_unmaps;
    SY_TRY(map_external(c, base_dir, loc, &base, &fsize, &caller_unmaps));
    sy_status *st = NULL;
    if (offset > fsize || d->nbytes > fsize - offset) {
        st = sy_error(SY_ERR_INVALID_MODEL, "external data '%s': offset %llu + length %zu is outside the file (%zu bytes)", loc,
                      (unsigned long long)offset, d->nbytes, fsize);
    } else if (d->nbytes == 0) {
        st = copy_owned(d, NULL, 0);
    } else if (!caller_unmaps && is_aligned(base + offset, SY_BORROW_ALIGN)) {
        d->data = base + offset;
    } else {
        st = copy_owned(d, base + offset, d->nbytes);
    }
    if (caller_unmaps && base)
        munmap((void *)base, fsize);
    return st;
}

static const char *field_name(int f)
{
    switch (f) {
    case F_FLOAT: return "float_data";
    case F_INT32: return "int32_data";
    case F_INT64: return "int64_data";
    case F_DOUBLE: return "double_data";
    case F_UINT64: return "uint64_data";
    default: return "string_data";
    }
}

static size_t field_count(const Onnx__TensorProto *tp, int f)
{
    switch (f) {
    case F_FLOAT: return tp->n_float_data;
    case F_INT32: return tp->n_int32_data;
    case F_INT64: return tp->n_int64_data;
    case F_DOUBLE: return tp->n_double_data;
    case F_UINT64: return tp->n_uint64_data;
    default: return tp->n_string_data;
    }
}

/* Typed fields -> dense little-endian bytes, following ONNX's storage rules. */
static sy_status *tp_typed(const Onnx__TensorProto *tp, tp_data *d)
{
    int f = onnx_types[d->dtype].field;
    unsigned bits = onnx_types[d->dtype].bits;
    size_t have = field_count(tp, f);
    /* element count the field must hold: complex uses two, packed types one per byte */
    size_t want = bits < 8 ? d->nbytes : (size_t)d->numel;
    if (d->dtype == 14 || d->dtype == 15)
        want *= 2;
    if (have != want) {
        if (have == 0 && want > 0) {
            for (int g = F_FLOAT; g <= F_UINT64; g++)
                if (g != f && field_count(tp, g) > 0)
                    return sy_error(SY_ERR_INVALID_MODEL, "holds %s data in %s, but ONNX stores that type in %s",
                                    sy_onnx_dtype_name(d->dtype), field_name(g), field_name(f));
            return sy_error(SY_ERR_INVALID_MODEL, "has no data (no raw_data, %s or external data) for %lld elements",
                            field_name(f), (long long)d->numel);
        }
        return sy_error(SY_ERR_INVALID_MODEL, "%s has %zu entries, but its dims and type %s need %zu", field_name(f), have,
                        sy_onnx_dtype_name(d->dtype), want);
    }
    d->owned = sy_aligned_alloc(d->nbytes, SY_DATA_ALIGN);
    if (!d->owned)
        return oom();
    d->data = d->owned;
    uint8_t *o = d->owned;
    switch (f) {
    case F_FLOAT:
        if (want)
            memcpy(o, tp->float_data, d->nbytes);
        break;
    case F_DOUBLE:
        if (want)
            memcpy(o, tp->double_data, d->nbytes);
        break;
    case F_INT64:
        if (want)
            memcpy(o, tp->int64_data, d->nbytes);
        break;
    case F_UINT64:
        if (bits == 64) {
            if (want)
                memcpy(o, tp->uint64_data, d->nbytes);
        } else {
            for (size_t i = 0; i < want; i++) {
                uint32_t v = (uint32_t)tp->uint64_data[i];
                memcpy(o + 4 * i, &v, 4);
            }
        }
        break;
    case F_INT32:
        if (bits == 32) {
            if (want)
                memcpy(o, tp->int32_data, d->nbytes);
        } else if (bits == 16) {
            for (size_t i = 0; i < want; i++) {
                uint16_t v = (uint16_t)(uint32_t)tp->int32_data[i];
                memcpy(o + 2 * i, &v, 2);
            }
        } else if (d->dtype == SY_DT_BOOL) {
            for (size_t i = 0; i < want; i++)
                o[i] = tp->int32_data[i] != 0;
        } else {
            /* 8-bit types, and the packed 4/2-bit types whose int32_data holds one packed byte each */
            for (size_t i = 0; i < want; i++)
                o[i] = (uint8_t)(uint32_t)tp->int32_data[i];
        }
        break;
    default:
        break;
    }
    return NULL;
}

/* A STRING tensor: ONNX keeps it only in string_data (one bytes entry per
 * element), never in raw_data or external data. One owned allocation holds
 * the records and, after them, the bytes they point to, so the tensor does
 * not depend on the decoded message (which import_bytes frees). */
static sy_status *tp_strings(const Onnx__TensorProto *tp, tp_data *d)
{
    if (tp->has_data_location && tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT)
        return sy_error(SY_ERR_INVALID_MODEL, "is a STRING tensor with external data; ONNX keeps strings in string_data");
    if (tp->has_raw_data && tp->raw_data.len > 0)
        return sy_error(SY_ERR_INVALID_MODEL, "is a STRING tensor with %zu bytes of raw_data; ONNX keeps strings in "
                        "string_data", tp->raw_data.len);
    if (tp->n_string_data != (size_t)d->numel)
        return sy_error(SY_ERR_INVALID_MODEL, "string_data has %zu entries, but its dims need %lld strings",
                        tp->n_string_data, (long long)d->numel);
    size_t total = d->nbytes;
    for (size_t i = 0; i < tp->n_string_data; i++)
        if (__builtin_add_overflow(total, tp->string_data[i].len, &total))
            return sy_error(SY_ERR_INVALID_MODEL, "string_data is too large");
    d->owned = sy_aligned_alloc(total ? total : 1, SY_DATA_ALIGN);
    if (!d->owned)
        return oom();
    sy_string *r = d->owned;
    char *text = (char *)d->owned + d->nbytes;
    for (size_t i = 0; i < tp->n_string_data; i++) {
        size_t len = tp->string_data[i].len;
        r[i].data = len ? text : "";
        r[i].size = len;
        if (len)
            memcpy(text, tp->string_data[i].data, len);
        text += len;
    }
    d->data = d->owned;
    return NULL;
}

/* Decode a TensorProto's type, shape and bytes. Errors carry no prefix: the
 * caller names the tensor and where it is. */
static sy_status *tp_decode(import_ctx *c, const Onnx__TensorProto *tp, const char *base_dir, tp_data *d)
{
    memset(d, 0, sizeof *d);
    if (!tp->has_data_type || tp->data_type == 0)
        return sy_error(SY_ERR_INVALID_MODEL, "has no data_type");
    d->dtype = tp->data_type;
    if (!onnx_dtype_known(d->dtype))
        return sy_error(SY_ERR_INVALID_MODEL, "has unknown data_type %d", (int)tp->data_type);
    if (tp->segment)
        return sy_error(SY_ERR_UNSUPPORTED, "is a segment of a larger tensor (TensorProto.segment); segmented tensors are not supported");
    if (tp->n_dims > SY_MAX_RANK)
        return sy_error(SY_ERR_UNSUPPORTED, "has rank %zu; at most %d is supported", tp->n_dims, SY_MAX_RANK);
    d->rank = (int32_t)tp->n_dims;
    d->numel = 1;
    for (int32_t i = 0; i < d->rank; i++) {
        d->dims[i] = tp->dims[i];
        if (d->dims[i] < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "has negative dimension %lld at axis %d", (long long)d->dims[i], (int)i);
        if (__builtin_mul_overflow(d->numel, d->dims[i], &d->numel))
            return sy_error(SY_ERR_INVALID_MODEL, "has dims whose element count overflows");
    }
    if (!sy_onnx_dtype_bytes(d->dtype, d->numel, &d->nbytes))
        return sy_error(SY_ERR_INVALID_MODEL, "has dims whose byte size overflows");

    if (d->dtype == SY_DT_STRING)
        return tp_strings(tp, d);
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return tp_external(c, tp, base_dir, d);
    if (tp->has_data_location && tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT)
        return sy_error(SY_ERR_INVALID_MODEL, "has unknown data_location %d", (int)tp->data_location);
    if (tp->has_raw_data && (tp->raw_data.len > 0 || field_count(tp, onnx_types[d->dtype].field) == 0)) {
        if (tp->raw_data.len != d->nbytes) {
            char ds[160];
            dims_str(d->dims, d->rank, ds, sizeof ds);
            return sy_error(SY_ERR_INVALID_MODEL, "raw_data has %zu bytes, but dims %s of %s need %zu", tp->raw_data.len, ds,
                            sy_onnx_dtype_name(d->dtype), d->nbytes);
        }
        if (d->nbytes == 0)
            return copy_owned(d, NULL, 0);
        /* protobuf-c copies a bytes field into a block of its own, malloc'd
         * unless small (pb_alloc). During an import (a ctx) the tree is the
         * importer's own and is freed before the model is returned, so the
         * block is taken out of the message instead of copied: the value owns
         * it (sy_aligned_free is free()) and the tree no longer frees it. */
        if (c && is_aligned(tp->raw_data.data, SY_BORROW_ALIGN) && !pb_arena_owns(c->arena, tp->raw_data.data) &&
            !pb_arena_owns(&c->one_arena, tp->raw_data.data)) {
            Onnx__TensorProto *own = (Onnx__TensorProto *)tp; /* not const: import_bytes unpacked it */
            d->owned = own->raw_data.data;
            d->data = d->owned;
            own->raw_data.data = NULL;
            own->raw_data.len = 0;
            own->has_raw_data = false;
            return NULL;
        }
        return copy_owned(d, tp->raw_data.data, d->nbytes);
    }
    return tp_typed(tp, d);
}

/* One allocation: struct, then name, then the data at a 64-byte boundary
 * (for a string tensor, the records and then the bytes they point to). */
static sy_status *tensor_build(const tp_data *d, const char *name, sy_tensor **out)
{
    size_t name_len = strlen(name) + 1;
    size_t off = sizeof(sy_tensor) + name_len, total, text = 0;
    off = (off + SY_DATA_ALIGN - 1) & ~(size_t)(SY_DATA_ALIGN - 1);
    const sy_string *strs = d->dtype == SY_DT_STRING ? d->data : NULL;
    for (int64_t i = 0; strs && i < d->numel; i++)
        if (__builtin_add_overflow(text, (size_t)strs[i].size, &text))
            return sy_error(SY_ERR_INVALID_MODEL, "tensor is too large");
    if (__builtin_add_overflow(off, d->nbytes, &total) || __builtin_add_overflow(total, text, &total))
        return sy_error(SY_ERR_INVALID_MODEL, "tensor is too large");
    sy_tensor *t = sy_aligned_alloc(total, SY_DATA_ALIGN);
    if (!t)
        return oom();
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->dtype = (sy_dtype)d->dtype;
    t->rank = d->rank;
    for (int32_t i = 0; i < d->rank; i++)
        t->dims[i] = d->dims[i];
    char *nm = (char *)(t + 1);
    memcpy(nm, name, name_len);
    t->name = nm;
    t->data = (char *)t + off;
    t->nbytes = d->nbytes;
    if (d->nbytes)
        memcpy(t->data, d->data, d->nbytes);
    if (strs) {
        sy_string *r = t->data;
        char *p = (char *)t->data + d->nbytes;
        for (int64_t i = 0; i < d->numel; i++) {
            if (strs[i].size)
                memcpy(p, strs[i].data, strs[i].size);
            r[i].data = p;
            p += strs[i].size;
        }
    }
    *out = t;
    return NULL;
}

sy_status *sy_onnx_tensor_from_proto(const Onnx__TensorProto *tp, const char *base_dir, sy_tensor **out)
{
    if (!tp || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_onnx_tensor_from_proto: NULL argument");
    tp_data d;
    sy_status *st = tp_decode(NULL, tp, base_dir, &d);
    if (!st)
        st = tensor_build(&d, S(tp->name), out);
    sy_aligned_free(d.owned);
    if (st)
        return sy_error_wrap(st, "tensor '%s'", S(tp->name));
    return NULL;
}

/* ---- graphs -------------------------------------------------------------- */

typedef struct scope {
    ir_graph *g;
    struct scope *parent;
} scope;

static bool value_defined(const ir_value *v)
{
    return (v->flags & (IR_VALUE_GRAPH_INPUT | IR_VALUE_INITIALIZER | IR_VALUE_OUTER_SCOPE)) || v->producer >= 0;
}

/* Index of `name` in s->g; a name defined only in an enclosing graph is added
 * to every graph between as an OUTER_SCOPE value, so each subgraph lists all
 * it captures. -1: not defined anywhere; -2: out of memory. */
static int32_t scope_resolve(scope *s, const char *name)
{
    int32_t idx = ir_graph_find_value(s->g, name);
    if (idx >= 0 && value_defined(&s->g->values[idx]))
        return idx;
    if (!s->parent)
        return -1;
    int32_t p = scope_resolve(s->parent, name);
    if (p < 0)
        return p;
    idx = ir_graph_intern_value(s->g, name);
    if (idx < 0)
        return -2;
    const ir_value *pv = &s->parent->g->values[p];
    ir_value *v = &s->g->values[idx];
    v->flags |= IR_VALUE_OUTER_SCOPE;
    v->dtype = pv->dtype;
    if (!ir_value_set_rank(s->g, v, pv->rank))
        return -2;
    if (pv->rank > 0)
        memcpy(v->dims, pv->dims, (size_t)pv->rank * sizeof *v->dims);
    return idx;
}

/* Apply a ValueInfo's type to a value. Initializers keep the shape their data
 * defines. */
static sy_status *apply_type(const Onnx__TypeProto *tp, ir_graph *g, ir_value *v)
{
    if (!tp)
        return NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        break;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
        /* sequence(tensor) is a value kind of the runtime; a sequence of
         * maps or of sequences is recorded so it is refused by name */
        const Onnx__TypeProto *et = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
        v->kind = !et || et->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? IR_KIND_SEQUENCE : IR_KIND_OTHER;
        v->elem_kind = IR_KIND_TENSOR;
        if (et && et->tensor_type && et->tensor_type->has_elem_type && onnx_dtype_known(et->tensor_type->elem_type) &&
            v->dtype == SY_DT_UNDEFINED)
            v->dtype = (sy_dtype)et->tensor_type->elem_type; /* the items' dtype */
        return NULL;
    }
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
        const Onnx__TypeProto *et = tp->optional_type ? tp->optional_type->elem_type : NULL;
        v->kind = IR_KIND_OPTIONAL;
        v->elem_kind = IR_KIND_OTHER;
        if (!et || et->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
            v->elem_kind = IR_KIND_TENSOR;
            if (et && et->tensor_type && et->tensor_type->has_elem_type && onnx_dtype_known(et->tensor_type->elem_type) &&
                v->dtype == SY_DT_UNDEFINED)
                v->dtype = (sy_dtype)et->tensor_type->elem_type;
        } else if (et->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) {
            const Onnx__TypeProto *st = et->sequence_type ? et->sequence_type->elem_type : NULL;
            if (!st || st->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
                v->elem_kind = IR_KIND_SEQUENCE;
        }
        if (v->elem_kind == IR_KIND_OTHER)
            v->kind = IR_KIND_OTHER;
        return NULL;
    }
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        /* recorded so the runtime can refuse it with the value's name */
        v->kind = IR_KIND_OTHER;
        return NULL;
    default:
        return NULL;
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (!tt)
        return NULL;
    if (tt->has_elem_type && tt->elem_type != 0) {
        if (!onnx_dtype_known(tt->elem_type))
            return sy_error(SY_ERR_INVALID_MODEL, "value '%s' has unknown element type %d", v->name, (int)tt->elem_type);
        if (v->dtype == SY_DT_UNDEFINED)
            v->dtype = (sy_dtype)tt->elem_type;
        else if ((int32_t)v->dtype != tt->elem_type)
            return sy_error(SY_ERR_TYPE, "value '%s' is declared %s but is %s", v->name, sy_onnx_dtype_name(tt->elem_type),
                            sy_onnx_dtype_name((int32_t)v->dtype));
    }
    if (!tt->shape)
        return NULL;
    const Onnx__TensorShapeProto *sh = tt->shape;
    if (sh->n_dim > SY_MAX_RANK)
        return sy_error(SY_ERR_UNSUPPORTED, "value '%s' has rank %zu; at most %d is supported", v->name, sh->n_dim, SY_MAX_RANK);
    for (size_t i = 0; i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = sh->dim[i];
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "value '%s' has negative dimension %lld at axis %zu", v->name,
                            (long long)dm->dim_value, i);
    }
    if (v->flags & IR_VALUE_INITIALIZER)
        return NULL;
    if (v->rank >= 0 && v->rank != (int32_t)sh->n_dim)
        return NULL; /* first declaration wins; shape inference reconciles later */
    if (!ir_value_set_rank(g, v, (int32_t)sh->n_dim))
        return oom();
    for (size_t i = 0; i < sh->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = sh->dim[i];
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            v->dims[i] = dm->dim_value;
        } else {
            v->dims[i] = -1;
            if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param &&
                *dm->dim_param && !ir_value_dim_param(v, (int)i)) {
                if (!ir_value_set_dim_param(v, (int)i, sy_strdup(dm->dim_param)))
                    return oom();
            }
        }
    }
    return NULL;
}

static sy_status *import_graph(import_ctx *c, const Onnx__GraphProto *gp, ir_graph *g, scope *parent,
                               const char *gwhere);

/* IR version 1 files have no AttributeProto.type: infer it from the field set. */
static int32_t attr_infer_type(const Onnx__AttributeProto *ap)
{
    if (ap->has_f) return SY_ATTR_FLOAT;
    if (ap->has_i) return SY_ATTR_INT;
    if (ap->has_s) return SY_ATTR_STRING;
    if (ap->t) return SY_ATTR_TENSOR;
    if (ap->g) return SY_ATTR_GRAPH;
    if (ap->n_floats) return SY_ATTR_FLOATS;
    if (ap->n_ints) return SY_ATTR_INTS;
    if (ap->n_strings) return SY_ATTR_STRINGS;
    return SY_ATTR_UNDEFINED;
}

static sy_status *import_attr(import_ctx *c, const Onnx__AttributeProto *ap, ir_attr *a, scope *sc,
                              const char *gwhere, const ir_node *n)
{
    a->name = sy_strdup(S(ap->name));
    if (!a->name)
        return oom();
    if (!*a->name)
        return sy_error(SY_ERR_INVALID_MODEL, "an attribute has no name");
    if (ap->ref_attr_name && *ap->ref_attr_name)
        return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' refers to function attribute '%s', which is only valid inside a FunctionProto",
                        a->name, ap->ref_attr_name);
    int32_t type = ap->has_type && ap->type != 0 ? (int32_t)ap->type : attr_infer_type(ap);
    a->type = (sy_attr_type)type;
    size_t bytes;
    switch (type) {
    case SY_ATTR_FLOAT:
        a->f = ap->f;
        break;
    case SY_ATTR_INT:
        a->i = ap->i;
        break;
    case SY_ATTR_STRING:
        a->s = sy_strndup(ap->s.data ? (const char *)ap->s.data : "", ap->s.len);
        if (!a->s)
            return oom();
        a->s_len = ap->s.len;
        break;
    case SY_ATTR_TENSOR: {
        if (!ap->t)
            return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' is of type TENSOR but holds no tensor", a->name);
        tp_data d;
        sy_status *st = tp_decode(c, ap->t, c->base_dir, &d);
        if (!st)
            st = tensor_build(&d, S(ap->t->name), &a->t);
        sy_aligned_free(d.owned);
        if (st)
            return sy_error_wrap(st, "attribute '%s' tensor", a->name);
        break;
    }
    case SY_ATTR_GRAPH: {
        if (!ap->g)
            return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' is of type GRAPH but holds no graph", a->name);
        a->g = calloc(1, sizeof *a->g);
        char *w = sy_asprintf("%s: node '%s' attribute '%s' graph '%s'", gwhere, n->name, a->name, S(ap->g->name));
        if (!a->g || !w) {
            free(w);
            return oom();
        }
        sy_status *st = import_graph(c, ap->g, a->g, sc, w);
        free(w);
        /* import_graph's errors already say where they are */
        return st;
    }
    case SY_ATTR_FLOATS:
        a->count = ap->n_floats;
        if (a->count) {
            if (!sy_mul_overflow_size(a->count, sizeof(float), &bytes) || !(a->floats = malloc(bytes)))
                return oom();
            memcpy(a->floats, ap->floats, bytes);
        }
        break;
    case SY_ATTR_INTS:
        a->count = ap->n_ints;
        if (a->count) {
            if (!sy_mul_overflow_size(a->count, sizeof(int64_t), &bytes) || !(a->ints = malloc(bytes)))
                return oom();
            memcpy(a->ints, ap->ints, bytes);
        }
        break;
    case SY_ATTR_STRINGS:
        if (ap->n_strings) {
            a->strings = calloc(ap->n_strings, sizeof *a->strings);
            if (!a->strings)
                return oom();
            a->count = ap->n_strings;
            for (size_t i = 0; i < ap->n_strings; i++) {
                const ProtobufCBinaryData *b = &ap->strings[i];
                a->strings[i] = sy_strndup(b->data ? (const char *)b->data : "", b->len);
                if (!a->strings[i])
                    return oom();
            }
        }
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSORS:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTOS:
        /* valid ONNX with no ir_attr payload: kept with its ONNX type number so
         * a schema check can refuse it by name */
        break;
    case SY_ATTR_UNDEFINED:
        return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' has no type and no value", a->name);
    default:
        return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' has unknown type %d", a->name, (int)type);
    }
    return NULL;
}

/* Outer-scope values captured by a node's subgraphs are inputs of the node
 * for ordering: the value must be computed before the If/Loop/Scan runs. */
static void node_captures(const ir_graph *g, const ir_node *n, int32_t *preds, uint32_t *np, bool count_only)
{
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const ir_graph *sg = n->attrs[a].g;
        if (!sg)
            continue;
        for (uint32_t v = 0; v < sg->n_values; v++) {
            if (!(sg->values[v].flags & IR_VALUE_OUTER_SCOPE))
                continue;
            int32_t idx = ir_graph_find_value(g, sg->values[v].name);
            if (idx < 0 || g->values[idx].producer < 0)
                continue;
            if (!count_only)
                preds[*np] = g->values[idx].producer;
            (*np)++;
        }
    }
}

/* Min-heap of node indices: Kahn's algorithm then emits the lowest file index
 * first, so an out-of-order file changes as little as possible. */
static void heap_push(int32_t *h, uint32_t *n, int32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2] > v) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

static int32_t heap_pop(int32_t *h, uint32_t *n)
{
    int32_t top = h[0], last = h[--(*n)];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, s = i;
        int32_t sv = last;
        if (l < *n && h[l] < sv) {
            s = l;
            sv = h[l];
        }
        if (l + 1 < *n && h[l + 1] < sv)
            s = l + 1;
        if (s == i)
            break;
        h[i] = h[s];
        i = s;
    }
    if (*n)
        h[i] = last;
    return top;
}

static sy_status *topo_sort(ir_graph *g, const char *gwhere)
{
    uint32_t n = g->n_nodes;
    if (n == 0)
        return NULL;
    /* predecessors in CSR form */
    uint32_t *start = calloc((size_t)n + 1, sizeof *start);
    if (!start)
        return oom();
    uint64_t total = 0;
    bool sorted = true;
    for (uint32_t j = 0; j < n; j++) {
        const ir_node *nd = &g->nodes[j];
        uint32_t cnt = 0;
        for (uint32_t k = 0; k < nd->n_inputs; k++) {
            int32_t v = nd->inputs[k];
            if (v >= 0 && g->values[v].producer >= 0) {
                cnt++;
                if ((uint32_t)g->values[v].producer >= j)
                    sorted = false;
            }
        }
        uint32_t cap = 0;
        node_captures(g, nd, NULL, &cap, true);
        if (cap) {
            int32_t *tmp = malloc(cap * sizeof *tmp);
            if (!tmp) {
                free(start);
                return oom();
            }
            uint32_t k = 0;
            node_captures(g, nd, tmp, &k, false);
            for (uint32_t q = 0; q < k; q++)
                if ((uint32_t)tmp[q] >= j)
                    sorted = false;
            free(tmp);
        }
        total += cnt + cap;
        start[j + 1] = (uint32_t)total;
        if (total > UINT32_MAX / 2) {
            free(start);
            return sy_error(SY_ERR_UNSUPPORTED, "%s: too many edges", gwhere);
        }
    }
    if (sorted) {
        free(start);
        return NULL;
    }
    int32_t *pred = malloc((total ? total : 1) * sizeof *pred);
    uint32_t *indeg = calloc(n, sizeof *indeg);
    uint32_t *succ_start = calloc((size_t)n + 1, sizeof *succ_start);
    int32_t *succ = malloc((total ? total : 1) * sizeof *succ);
    int32_t *heap = malloc((size_t)n * sizeof *heap);
    int32_t *order = malloc((size_t)n * sizeof *order);
    sy_status *st = NULL;
    if (!pred || !indeg || !succ_start || !succ || !heap || !order) {
        st = oom();
        goto out;
    }
    for (uint32_t j = 0; j < n; j++) {
        const ir_node *nd = &g->nodes[j];
        uint32_t k = start[j];
        for (uint32_t q = 0; q < nd->n_inputs; q++) {
            int32_t v = nd->inputs[q];
            if (v >= 0 && g->values[v].producer >= 0)
                pred[k++] = g->values[v].producer;
        }
        node_captures(g, nd, pred, &k, false);
        indeg[j] = k - start[j];
        for (uint32_t q = start[j]; q < k; q++)
            succ_start[pred[q] + 1]++;
    }
    for (uint32_t j = 0; j < n; j++)
        succ_start[j + 1] += succ_start[j];
    {
        uint32_t *fill = calloc(n, sizeof *fill);
        if (!fill) {
            st = oom();
            goto out;
        }
        for (uint32_t j = 0; j < n; j++)
            for (uint32_t q = start[j]; q < start[j + 1]; q++) {
                uint32_t p = (uint32_t)pred[q];
                succ[succ_start[p] + fill[p]++] = (int32_t)j;
            }
        free(fill);
    }
    uint32_t hn = 0, done = 0;
    for (uint32_t j = 0; j < n; j++)
        if (indeg[j] == 0)
            heap_push(heap, &hn, (int32_t)j);
    while (hn) {
        int32_t j = heap_pop(heap, &hn);
        order[done++] = j;
        for (uint32_t q = succ_start[j]; q < succ_start[j + 1]; q++)
            if (--indeg[succ[q]] == 0)
                heap_push(heap, &hn, succ[q]);
    }
    if (done < n) {
        char list[512];
        size_t len = 0;
        unsigned shown = 0;
        list[0] = '\0';
        for (uint32_t j = 0; j < n && shown < 6; j++) {
            if (indeg[j] == 0)
                continue;
            sy_buf_appendf(list, sizeof list, &len, "%s'%s' (#%u)", shown ? ", " : "", g->nodes[j].name, j);
            if (len >= sizeof list)
                break;
            shown++;
        }
        st = sy_error(SY_ERR_INVALID_MODEL, "%s: the graph has a cycle: %u nodes can never run, e.g. %s", gwhere, n - done, list);
        goto out;
    }
    {
        ir_node *nodes = malloc((size_t)n * sizeof *nodes);
        if (!nodes) {
            st = oom();
            goto out;
        }
        for (uint32_t k = 0; k < n; k++)
            nodes[k] = g->nodes[order[k]];
        memcpy(g->nodes, nodes, (size_t)n * sizeof *nodes);
        free(nodes);
        for (uint32_t k = 0; k < n; k++)
            for (uint32_t q = 0; q < g->nodes[k].n_outputs; q++)
                if (g->nodes[k].outputs[q] >= 0)
                    g->values[g->nodes[k].outputs[q]].producer = (int32_t)k;
    }
out:
    free(start);
    free(pred);
    free(indeg);
    free(succ_start);
    free(succ);
    free(heap);
    free(order);
    return st;
}

/* Free the node or initializer decoded on its own (one_get), if any. */
static void one_done(import_ctx *c)
{
    if (c->one_node)
        onnx__node_proto__free_unpacked(c->one_node, &c->one_pa);
    if (c->one_init)
        onnx__tensor_proto__free_unpacked(c->one_init, &c->one_pa);
    if (c->one_node || c->one_init)
        pb_arena_reset(&c->one_arena);
    c->one_node = NULL;
    c->one_init = NULL;
}

/* Node i of gp (wire: of the main graph, on the wire; the previous one is
 * freed). NULL: not a valid NodeProto, or out of memory. */
static const Onnx__NodeProto *node_get(import_ctx *c, const Onnx__GraphProto *gp, const wire_split *wire, size_t i)
{
    if (!wire)
        return gp->node[i];
    one_done(c);
    pb_span s;
    if (!cursor_at(&c->node_cur, wire, i, &s))
        return NULL;
    c->one_node = onnx__node_proto__unpack(&c->one_pa, s.n, s.p);
    return c->one_node;
}

static const Onnx__TensorProto *init_get(import_ctx *c, const Onnx__GraphProto *gp, const wire_split *wire, size_t i)
{
    if (!wire)
        return gp->initializer[i];
    one_done(c);
    pb_span s;
    if (!cursor_at(&c->init_cur, wire, i, &s))
        return NULL;
    c->one_init = onnx__tensor_proto__unpack(&c->one_pa, s.n, s.p);
    return c->one_init;
}

static sy_status *bad_part(const import_ctx *c, const char *what, size_t i)
{
    return sy_error(SY_ERR_INVALID_MODEL, "%s: not a valid ONNX ModelProto (truncated or corrupt): the graph's %s #%zu does not decode",
                    c->where, what, i);
}

static const char *norm_domain(const char *d)
{
    d = S(d);
    return strcmp(d, "ai.onnx") == 0 ? "" : d;
}

static sy_status *import_graph(import_ctx *c, const Onnx__GraphProto *gp, ir_graph *g, scope *parent,
                               const char *gwhere)
{
    ir_graph_init(g, S(gp->name));
    if (!g->name)
        return oom();
    if (++c->depth > SY_ONNX_MAX_DEPTH)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: subgraphs nest deeper than %d levels", gwhere, SY_ONNX_MAX_DEPTH);
    scope sc = {g, parent};
    sy_status *st = NULL;
    /* the main graph's nodes and initializers may be on the wire (wire_split) */
    const wire_split *wire = parent ? NULL : c->wire;
    const size_t n_node = wire ? wire->n_nodes : gp->n_node;
    const size_t n_init = wire ? wire->n_inits : gp->n_initializer;

    if (n_node > (size_t)INT32_MAX / 2)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: too many nodes (%zu)", gwhere, n_node);
    if (gp->n_sparse_initializer)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: sparse initializer '%s' is not supported", gwhere,
                        gp->sparse_initializer[0]->values ? S(gp->sparse_initializer[0]->values->name) : "");

    /* every value the graph itself names (outer-scope captures come on
     * top, by appends): an initializer, an input or a node output each */
    {
        uint64_t nv = (uint64_t)n_init + gp->n_input;
        wire_cursor k;
        pb_span s;
        if (wire)
            cursor_start(&k, wire, 1 /* GraphProto.node */);
        for (size_t i = 0; i < n_node; i++)
            nv += !wire ? gp->node[i]->n_output : cursor_next(&k, &s) ? wire_count(&s, 2 /* NodeProto.output */) : 0;
        if (!ir_graph_reserve(g, nv, n_node))
            return oom();
    }

    /* initializers */
    for (size_t i = 0; i < n_init; i++) {
        const Onnx__TensorProto *tp = init_get(c, gp, wire, i);
        if (!tp)
            return bad_part(c, "initializer", i);
        const char *name = S(tp->name);
        if (!*name)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: initializer #%zu has no name", gwhere, i);
        if (ir_graph_find_value(g, name) >= 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: initializer '%s' appears twice", gwhere, name);
        int32_t idx = ir_graph_intern_value(g, name);
        if (idx < 0)
            return oom();
        tp_data d;
        st = tp_decode(c, tp, c->base_dir, &d);
        if (st)
            return sy_error_wrap(st, "%s: initializer '%s'", gwhere, name);
        ir_value *v = &g->values[idx];
        v->flags |= IR_VALUE_INITIALIZER;
        v->dtype = (sy_dtype)d.dtype;
        if (!ir_value_set_rank(g, v, d.rank)) {
            sy_aligned_free(d.owned);
            return oom();
        }
        if (d.rank > 0)
            memcpy(v->dims, d.dims, (size_t)d.rank * sizeof *v->dims);
        v->data = d.data;
        v->nbytes = d.nbytes;
        if (d.owned)
            v->flags |= IR_VALUE_OWNS_DATA; /* d.data is d.owned then */
    }

    /* inputs; an input that also has an initializer is a constant (IR < 4
     * lists every initializer as an input; later IRs use it for overridable
     * defaults, which this runtime treats as constants) */
    uint32_t n_in = 0;
    g->inputs = calloc(gp->n_input ? gp->n_input : 1, sizeof *g->inputs);
    if (!g->inputs)
        return oom();
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = S(vi->name);
        if (!*name)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph input #%zu has no name", gwhere, i);
        int32_t idx = ir_graph_find_value(g, name);
        if (idx >= 0 && (g->values[idx].flags & IR_VALUE_INITIALIZER)) {
            st = apply_type(vi->type, g, &g->values[idx]);
            if (st)
                return sy_error_wrap(st, "%s: graph input", gwhere);
            continue;
        }
        if (idx >= 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph input '%s' is listed twice", gwhere, name);
        idx = ir_graph_intern_value(g, name);
        if (idx < 0)
            return oom();
        g->values[idx].flags |= IR_VALUE_GRAPH_INPUT;
        st = apply_type(vi->type, g, &g->values[idx]);
        if (st)
            return sy_error_wrap(st, "%s: graph input", gwhere);
        g->inputs[n_in++] = idx;
    }
    g->n_inputs = n_in;

    /* nodes, first pass: identity and outputs, so every local name is known
     * before inputs (and subgraphs) are resolved */
    for (size_t i = 0; i < n_node; i++) {
        const Onnx__NodeProto *np = node_get(c, gp, wire, i);
        if (!np)
            return bad_part(c, "node", i);
        ir_node *n = ir_graph_add_node(g);
        if (!n)
            return oom();
        const char *op = S(np->op_type);
        /* in the graph's pool (ir_graph_alloc): op and domain once a graph */
        n->op = ir_graph_intern(g, op);
        n->domain = ir_graph_intern(g, norm_domain(np->domain));
        if (np->name && *np->name) {
            n->name = ir_graph_strdup(g, np->name);
        } else {
            char *nm = sy_asprintf("%s_%zu", *op ? op : "node", i);
            n->name = nm ? ir_graph_strdup(g, nm) : NULL;
            free(nm);
        }
        if (!n->op || !n->domain || !n->name)
            return oom();
        if (!*op)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: node '%s' (#%zu) has no op_type", gwhere, n->name, i);
        int64_t ver = ir_model_opset(c->m, n->domain);
        if (ver < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: node '%s' (#%zu, %s) uses domain '%s', which the model does not import (no opset_import entry)",
                            gwhere, n->name, i, op, *n->domain ? n->domain : "ai.onnx");
        n->opset = (int32_t)ver;
        if (np->n_output > (size_t)UINT32_MAX / 2 || np->n_input > (size_t)UINT32_MAX / 2)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: node '%s' (#%zu) has too many inputs or outputs", gwhere, n->name, i);
        n->outputs = ir_graph_alloc(g, (np->n_output ? np->n_output : 1) * sizeof *n->outputs);
        if (!n->outputs)
            return oom();
        n->n_outputs = (uint32_t)np->n_output;
        for (size_t k = 0; k < np->n_output; k++) {
            const char *vn = S(np->output[k]);
            n->outputs[k] = -1;
            if (!*vn)
                continue;
            int32_t idx = ir_graph_intern_value(g, vn);
            if (idx < 0)
                return oom();
            ir_value *v = &g->values[idx];
            if (v->producer >= 0)
                return sy_error(SY_ERR_INVALID_MODEL, "%s: value '%s' is produced twice: by node '%s' (#%d) and by node '%s' (#%zu)",
                                gwhere, vn, g->nodes[v->producer].name, (int)v->producer, n->name, i);
            if (v->flags & (IR_VALUE_GRAPH_INPUT | IR_VALUE_INITIALIZER))
                return sy_error(SY_ERR_INVALID_MODEL, "%s: node '%s' (#%zu) output '%s' is also a graph %s", gwhere, n->name, i, vn,
                                (v->flags & IR_VALUE_INITIALIZER) ? "initializer" : "input");
            v->producer = (int32_t)i;
            n->outputs[k] = idx;
        }
    }

    /* outputs */
    g->outputs = calloc(gp->n_output ? gp->n_output : 1, sizeof *g->outputs);
    if (!g->outputs)
        return oom();
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = S(gp->output[i]->name);
        if (!*name)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph output #%zu has no name", gwhere, i);
        int32_t idx = scope_resolve(&sc, name);
        if (idx == -2)
            return oom();
        if (idx < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph output '%s' is never produced (no node, input or initializer defines it)",
                            gwhere, name);
        g->values[idx].flags |= IR_VALUE_GRAPH_OUTPUT;
        st = apply_type(gp->output[i]->type, g, &g->values[idx]);
        if (st)
            return sy_error_wrap(st, "%s: graph output", gwhere);
        g->outputs[i] = idx;
        g->n_outputs = (uint32_t)i + 1;
    }

    /* value_info: shapes of intermediate values (names not in the graph are ignored) */
    for (size_t i = 0; i < gp->n_value_info; i++) {
        int32_t idx = ir_graph_find_value(g, S(gp->value_info[i]->name));
        if (idx < 0)
            continue;
        st = apply_type(gp->value_info[i]->type, g, &g->values[idx]);
        if (st)
            return sy_error_wrap(st, "%s: value_info", gwhere);
    }

    /* nodes, second pass: inputs and attributes */
    for (size_t i = 0; i < n_node; i++) {
        const Onnx__NodeProto *np = node_get(c, gp, wire, i);
        if (!np)
            return bad_part(c, "node", i);
        ir_node *n = &g->nodes[i];
        n->inputs = ir_graph_alloc(g, (np->n_input ? np->n_input : 1) * sizeof *n->inputs);
        if (!n->inputs)
            return oom();
        n->n_inputs = (uint32_t)np->n_input;
        for (size_t k = 0; k < np->n_input; k++) {
            const char *vn = S(np->input[k]);
            n->inputs[k] = -1;
            if (!*vn)
                continue; /* omitted optional input */
            int32_t idx = scope_resolve(&sc, vn);
            if (idx == -2)
                return oom();
            if (idx < 0)
                return sy_error(SY_ERR_INVALID_MODEL,
                                "%s: node '%s' (#%zu, %s) input %zu '%s' is never produced (not a graph input, initializer, node output%s)",
                                gwhere, n->name, i, n->op, k, vn, parent ? " or outer-scope value" : "");
            n->inputs[k] = idx;
        }
        if (np->n_attribute) {
            n->attrs = calloc(np->n_attribute, sizeof *n->attrs);
            if (!n->attrs)
                return oom();
        }
        for (size_t k = 0; k < np->n_attribute; k++) {
            /* count first so a failure midway still frees what was filled */
            n->n_attrs = (uint32_t)k + 1;
            st = import_attr(c, np->attribute[k], &n->attrs[k], &sc, gwhere, n);
            if (st) {
                if (n->attrs[k].g && sy_status_code_of(st) != SY_ERR_OUT_OF_MEMORY)
                    return st; /* a subgraph error names its own location */
                return sy_error_wrap(st, "%s: node '%s' (#%zu, %s)", gwhere, n->name, i, n->op);
            }
            for (uint32_t q = 0; q < k; q++)
                if (strcmp(n->attrs[q].name, n->attrs[k].name) == 0)
                    return sy_error(SY_ERR_INVALID_MODEL, "%s: node '%s' (#%zu, %s) has attribute '%s' twice", gwhere, n->name, i,
                                    n->op, n->attrs[k].name);
        }
    }

    if (wire)
        one_done(c);
    st = topo_sort(g, gwhere);
    c->depth--;
    return st;
}

/* ---- model ----------------------------------------------------------------- */

static sy_status *import_bytes(const void *data, size_t size, const char *where, const char *base_dir, ir_model **out)
{
    if (size == 0)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: empty file (not an ONNX model)", where);
    pb_arena arena = {0};
    ProtobufCAllocator pa = {.alloc = pb_alloc, .free = pb_free, .allocator_data = &arena};
    wire_split wire;
    int split = wire_split_model(data, size, &wire);
    if (split < 0)
        return oom();
    Onnx__ModelProto *mp = split ? onnx__model_proto__unpack(&pa, wire.stripped_len, wire.stripped)
                                 : onnx__model_proto__unpack(&pa, size, data);
    /* the spans point into data, not into the copy */
    free(wire.stripped);
    wire.stripped = NULL;
    if (!mp) {
        wire_split_free(&wire);
        pb_arena_release(&arena);
        return sy_error(SY_ERR_INVALID_MODEL, "%s: not a valid ONNX ModelProto (truncated or corrupt)", where);
    }
    ir_model *m = calloc(1, sizeof *m);
    if (!m) {
        onnx__model_proto__free_unpacked(mp, &pa);
        pb_arena_release(&arena);
        wire_split_free(&wire);
        return oom();
    }
    m->format = "onnx";
    import_ctx c = {.m = m, .where = where, .base_dir = base_dir, .arena = &arena, .wire = split ? &wire : NULL};
    c.one_pa = (ProtobufCAllocator){.alloc = pb_alloc, .free = pb_free, .allocator_data = &c.one_arena};
    if (split) {
        cursor_start(&c.node_cur, &wire, 1 /* GraphProto.node */);
        cursor_start(&c.init_cur, &wire, 5 /* GraphProto.initializer */);
    }
    sy_status *st = NULL;

    m->path = sy_strdup(where);
    m->base_dir = base_dir ? sy_strdup(base_dir) : NULL;
    if (!m->path || (base_dir && !m->base_dir)) {
        st = oom();
        goto fail;
    }
    if (!mp->has_ir_version || mp->ir_version <= 0) {
        st = sy_error(SY_ERR_INVALID_MODEL, "%s: ModelProto has no ir_version (not an ONNX model?)", where);
        goto fail;
    }
    if (mp->ir_version > SY_ONNX_MAX_IR_VERSION) {
        st = sy_error(SY_ERR_UNSUPPORTED, "%s: IR version %lld is newer than the newest this build reads (%d)", where,
                      (long long)mp->ir_version, SY_ONNX_MAX_IR_VERSION);
        goto fail;
    }
    m->ir_version = mp->ir_version;
    {
        const char *pn = S(mp->producer_name), *pv = S(mp->producer_version);
        m->producer = *pv ? sy_asprintf("%s %s", pn, pv) : sy_strdup(pn);
        if (!m->producer) {
            st = oom();
            goto fail;
        }
    }
    if (!mp->graph) {
        st = sy_error(SY_ERR_INVALID_MODEL, "%s: ModelProto has no graph", where);
        goto fail;
    }

    /* opset imports; IR < 3 files predate opset_import and mean opset 1 */
    {
        size_t n = mp->n_opset_import ? mp->n_opset_import : (mp->ir_version < 3 ? 1 : 0);
        m->opsets = calloc(n ? n : 1, sizeof *m->opsets);
        if (!m->opsets) {
            st = oom();
            goto fail;
        }
        if (!mp->n_opset_import && n) {
            m->opsets[0].domain = sy_strdup("");
            m->opsets[0].version = 1;
            if (!m->opsets[0].domain) {
                st = oom();
                goto fail;
            }
            m->n_opsets = 1;
        }
        for (size_t i = 0; i < mp->n_opset_import; i++) {
            const char *d = norm_domain(mp->opset_import[i]->domain);
            int64_t ver = mp->opset_import[i]->version;
            if (ver < 1 || ver > INT32_MAX) {
                st = sy_error(SY_ERR_INVALID_MODEL, "%s: opset_import of domain '%s' has invalid version %lld", where,
                              *d ? d : "ai.onnx", (long long)ver);
                goto fail;
            }
            int64_t prev = ir_model_opset(m, d);
            if (prev >= 0) {
                if (prev != ver) {
                    st = sy_error(SY_ERR_INVALID_MODEL, "%s: domain '%s' is imported twice, at opsets %lld and %lld", where,
                                  *d ? d : "ai.onnx", (long long)prev, (long long)ver);
                    goto fail;
                }
                continue;
            }
            m->opsets[m->n_opsets].domain = sy_strdup(d);
            if (!m->opsets[m->n_opsets].domain) {
                st = oom();
                goto fail;
            }
            m->opsets[m->n_opsets++].version = ver;
        }
    }

    {
        char *gw = sy_asprintf("%s: graph '%s'", where, S(mp->graph->name));
        if (!gw) {
            st = oom();
            goto fail;
        }
        st = import_graph(&c, mp->graph, &m->graph, NULL, gw);
        free(gw);
        if (st)
            goto fail;
    }
    for (uint32_t i = 0; i < m->n_mappings; i++)
        free(c.map_paths[i]);
    free(c.map_paths);
    free(c.last_loc);
    /* nothing in the IR points into the tree (initializers took their
     * raw_data out of it, everything else was copied): it is not kept, where
     * it used to cost some 170 bytes and 6 heap blocks a node */
    onnx__model_proto__free_unpacked(mp, &pa);
    pb_arena_release(&arena);
    wire_split_free(&wire);
    pb_arena_release(&c.one_arena);
    *out = m;
    return NULL;

fail:
    for (uint32_t i = 0; i < m->n_mappings; i++)
        free(c.map_paths[i]);
    free(c.map_paths);
    free(c.last_loc);
    ir_model_free(m);
    one_done(&c);
    onnx__model_proto__free_unpacked(mp, &pa);
    pb_arena_release(&arena);
    wire_split_free(&wire);
    pb_arena_release(&c.one_arena);
    return st;
}

sy_status *sy_onnx_import_buffer(const void *data, size_t size, const char *name, const char *base_dir, ir_model **out)
{
    if ((!data && size) || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_onnx_import_buffer: NULL argument");
    return import_bytes(data, size, name ? name : "<buffer>", base_dir, out);
}

sy_status *sy_onnx_import_file(const char *path, ir_model **out)
{
    if (!path || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_onnx_import_file: NULL argument");
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2)
        return sy_error(SY_ERR_IO, "%s: not a regular file (%s)", path, sy_file_kind(sb.st_mode));
    if (fd < 0)
        return sy_error(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (sb.st_size == 0) {
        close(fd);
        return sy_error(SY_ERR_INVALID_MODEL, "%s: empty file (not an ONNX model)", path);
    }
    size_t size = (size_t)sb.st_size;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return sy_error(SY_ERR_IO, "%s: mmap: %s", path, strerror(errno));
    char *dir = sy_dirname(path);
    if (!dir) {
        munmap(p, size);
        return oom();
    }
    /* protobuf-c copies everything it decodes, so the file mapping is not
     * needed once unpacking is done */
    sy_status *st = import_bytes(p, size, path, dir, out);
    munmap(p, size);
    free(dir);
    return st;
}
