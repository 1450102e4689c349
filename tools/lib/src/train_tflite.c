/* A float TFLite model as an ONNX forward model for training, and the
 * trained tensors written back into the .tflite (train_tflite.h;
 * docs/training.md, "TFLite models").
 *
 * The file is read with the core's bounds-checked FlatBuffer reader
 * (framework/tflite/tflite_fb.c, linked into this library with hidden
 * symbols) and the core's table of builtin operators and their options
 * (tflite_ops.c). The ONNX model is written with sy_model_writer at opset
 * 13. One subgraph (0 unless the caller names another by signature or
 * index) is translated operator by operator; each translation
 * checks the TFLite output tensor's shape against the shape the ONNX
 * operators compute from the static input shapes, so a form this file
 * does not understand is refused instead of translated wrongly. */
#include "train_tflite.h"
#include "tflite_fb.h"
#include "tflite_ops.h"
#include "tl_files.h"

#include <switchyard/sy_tools.h>
#include <switchyard/sy_sdk.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* schema.fbs field ids (as framework/src/tflite_import.c reads them) */
enum { MODEL_VERSION = 0, MODEL_OPCODES = 1, MODEL_SUBGRAPHS = 2, MODEL_BUFFERS = 4, MODEL_SIGNATURE_DEFS = 7 };
enum { SIG_KEY = 2, SIG_SUBGRAPH_INDEX = 4 };
enum { OPC_DEPRECATED_CODE = 0, OPC_VERSION = 2, OPC_BUILTIN_CODE = 3 };
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3 };
enum { TENSOR_SHAPE = 0, TENSOR_TYPE = 1, TENSOR_BUFFER = 2, TENSOR_NAME = 3, TENSOR_QUANT = 4, TENSOR_SPARSITY = 6 };
enum { Q_SCALE = 2 };
enum { OP_OPCODE_INDEX = 0, OP_INPUTS = 1, OP_OUTPUTS = 2, OP_OPTIONS_TYPE = 3, OP_OPTIONS = 4 };
enum { BUF_DATA = 0, BUF_OFFSET = 1, BUF_SIZE = 2 };
/* TensorType */
enum { TT_FLOAT32 = 0, TT_INT32 = 2, TT_INT64 = 4 };
/* BuiltinOperator codes translated here */
enum {
    OP_ADD = 0,
    OP_AVERAGE_POOL_2D = 1,
    OP_CONCATENATION = 2,
    OP_CONV_2D = 3,
    OP_DEPTHWISE_CONV_2D = 4,
    OP_FULLY_CONNECTED = 9,
    OP_LOGISTIC = 14,
    OP_MAX_POOL_2D = 17,
    OP_MUL = 18,
    OP_RELU = 19,
    OP_RELU_N1_TO_1 = 20,
    OP_RELU6 = 21,
    OP_RESHAPE = 22,
    OP_SOFTMAX = 25,
    OP_TANH = 28,
    OP_PAD = 34,
    OP_TRANSPOSE = 39,
    OP_MEAN = 40,
    OP_SUB = 41,
    OP_DIV = 42,
    OP_SQUEEZE = 43,
    OP_STRIDED_SLICE = 45,
    OP_SLICE = 65,
    OP_SUM = 74,
    OP_ABS = 101,
    OP_BATCH_MATMUL = 126
};
/* ActivationFunctionType */
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };

#define MAX_RANK 8

typedef struct tinfo {
    char *vname;          /* the ONNX value name (unique) */
    int8_t type;          /* TensorType */
    bool quantized;       /* quantization scales present */
    int32_t rank;
    int64_t dims[MAX_RANK];
    uint32_t buffer;
    const uint8_t *data;  /* constant bytes in the file (NULL: a runtime tensor) */
    size_t nbytes;
    uint64_t offset;
    bool available;       /* a graph input, a constant or an earlier operator's output */
    int layout;           /* the initializer made of it: -1 none yet */
} tinfo;

typedef struct tx {
    fb_reader r;
    const char *where;
    uint32_t sg;          /* the subgraph translated */
    tr_tfl_model *m;
    sy_model_writer *w;
    tinfo *t;
    uint32_t nt;
    fb_vec buffers;
    int32_t *codes;       /* opcode index -> builtin code */
    uint32_t n_codes;
    char **names;         /* every value name in use (tensors and fresh ones) */
    size_t n_names, cap_names;
    size_t cap_params;
    /* the operator being translated, for messages */
    uint32_t oi;
    const char *opname;
    unsigned seq;         /* node names */
    sy_status *st;        /* a writer failure */
} tx;

static sy_status *corrupt(tx *c)
{
    return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", c->where, c->r.err);
}

#define CHECK_FB(c)                                                                                                \
    do {                                                                                                           \
        if (fb_failed(&(c)->r))                                                                                    \
            return corrupt(c);                                                                                     \
    } while (0)

static sy_status *oom(void) { return sy_status_create(SY_ERR_OUT_OF_MEMORY, "TFLite translation: out of memory"); }

/* A refusal of the operator being translated. */
static sy_status *refuse(tx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static sy_status *refuse(tx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return sy_status_create(SY_ERR_UNSUPPORTED, "%s: operator #%u (%s): %s", c->where, c->oi, c->opname, buf);
}

bool tr_tflite_is_tflite(const uint8_t *data, size_t size) { return size >= 8 && !memcmp(data + 4, "TFL3", 4); }

/* ---- names ------------------------------------------------------------------ */

static bool name_used(const tx *c, const char *s)
{
    for (size_t i = 0; i < c->n_names; i++)
        if (!strcmp(c->names[i], s))
            return true;
    return false;
}

static char *claim(tx *c, char *s)
{
    if (!s)
        return NULL;
    if (c->n_names == c->cap_names) {
        size_t nc = c->cap_names ? c->cap_names * 2 : 64;
        char **g = tl_alloc(&c->m->pl, nc * sizeof *g);
        if (!g)
            return NULL;
        if (c->n_names)
            memcpy(g, c->names, c->n_names * sizeof *g);
        c->names = g;
        c->cap_names = nc;
    }
    c->names[c->n_names++] = s;
    return s;
}

/* a value name nobody uses: base__tag, base__tag2, ... */
static const char *fresh(tx *c, const char *base, const char *tag)
{
    for (int k = 1; k < 1000000; k++) {
        char *s = k == 1 ? tl_printf(&c->m->pl, "%s__%s", base, tag) : tl_printf(&c->m->pl, "%s__%s%d", base, tag, k);
        if (!s)
            return NULL;
        if (!name_used(c, s))
            return claim(c, s);
    }
    return NULL;
}

/* ---- reading the model -------------------------------------------------------- */

static sy_status *buffer_bytes(tx *c, uint32_t bi, uint32_t ti, const uint8_t **data, size_t *len, uint64_t *at)
{
    *data = NULL;
    *len = 0;
    *at = 0;
    if (bi >= c->buffers.len)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u refers to buffer %u, but the model has %u buffers",
                                c->where, ti, bi, c->buffers.len);
    fb_table b = fb_vec_table(&c->r, c->buffers, bi, "buffer");
    fb_vec d = fb_vector(&c->r, b, BUF_DATA, 1, "buffer data");
    uint64_t off = fb_u64(&c->r, b, BUF_OFFSET, 0, "buffer offset");
    uint64_t size = fb_u64(&c->r, b, BUF_SIZE, 0, "buffer size");
    CHECK_FB(c);
    if (off > 1) { /* data after the FlatBuffer (models over 2 GB) */
        if (off > c->r.n || size > c->r.n - off)
            return sy_status_create(SY_ERR_INVALID_MODEL,
                                    "%s: corrupt TFLite file: buffer %u (tensor #%u) at offset %llu size %llu runs past "
                                    "the end of the file (%zu bytes)",
                                    c->where, bi, ti, (unsigned long long)off, (unsigned long long)size, c->r.n);
        *data = c->r.p + off;
        *len = (size_t)size;
        *at = off;
        return NULL;
    }
    if (d.pos && d.len) {
        *data = fb_vec_bytes(&c->r, d);
        *len = d.len;
        *at = d.pos;
    }
    return NULL;
}

static const char *type_name(int t)
{
    const char *n = tfl_ttype_name(t);
    return n ? n : "an unknown TensorType";
}

static sy_status *read_tensors(tx *c, fb_table sg)
{
    fb_vec tv = fb_vector(&c->r, sg, SG_TENSORS, 4, "subgraph tensors");
    CHECK_FB(c);
    if (tv.len > (1u << 24))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: subgraph %u has %u tensors", c->where, c->sg, tv.len);
    c->nt = tv.len;
    c->t = tl_alloc(&c->m->pl, (tv.len ? tv.len : 1) * sizeof *c->t);
    if (!c->t)
        return oom();
    for (uint32_t i = 0; i < tv.len; i++) {
        tinfo *ti = &c->t[i];
        fb_table t = fb_vec_table(&c->r, tv, i, "tensor");
        const char *nm = fb_string(&c->r, t, TENSOR_NAME, NULL, "tensor name");
        fb_vec shape = fb_vector(&c->r, t, TENSOR_SHAPE, 4, "tensor shape");
        ti->type = fb_i8(&c->r, t, TENSOR_TYPE, 0, "tensor type");
        ti->buffer = fb_u32(&c->r, t, TENSOR_BUFFER, 0, "tensor buffer");
        fb_table q = fb_subtable(&c->r, t, TENSOR_QUANT, "tensor quantization");
        fb_vec sc = fb_vector(&c->r, q, Q_SCALE, 4, "quantization scale");
        bool sparse = fb_has(&c->r, t, TENSOR_SPARSITY);
        CHECK_FB(c);
        ti->quantized = sc.len > 0;
        ti->layout = -1;
        /* the names of the core's importer: "#<index>" after a repeated name */
        char *vn = !nm || !*nm ? tl_printf(&c->m->pl, "tensor_%u", i)
                   : name_used(c, nm) ? tl_printf(&c->m->pl, "%s#%u", nm, i)
                                      : tl_strdup(&c->m->pl, nm);
        if (!vn)
            return oom();
        if (name_used(c, vn))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u: name '%s' is used twice", c->where, i, vn);
        if (!(ti->vname = claim(c, vn)))
            return oom();
        if (sparse)
            return sy_status_create(SY_ERR_UNSUPPORTED, "%s: tensor #%u '%s' is sparse, which is not translated",
                                    c->where, i, vn);
        if (shape.len > MAX_RANK)
            return sy_status_create(SY_ERR_UNSUPPORTED, "%s: tensor #%u '%s' has rank %u (at most %d is translated)",
                                    c->where, i, vn, shape.len, MAX_RANK);
        ti->rank = (int32_t)shape.len;
        for (uint32_t d = 0; d < shape.len; d++) {
            int32_t x = fb_vec_i32(&c->r, shape, d);
            if (x < 0)
                return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u '%s' has dimension %u = %d", c->where,
                                        i, vn, d, x);
            ti->dims[d] = x;
        }
        /* numel_of multiplies the dimensions wherever a shape is needed:
         * a product past int64 is refused here, once for every tensor */
        int64_t count = 1;
        for (int32_t d = 0; d < ti->rank; d++)
            if (__builtin_mul_overflow(count, ti->dims[d], &count))
                return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u '%s' declares more than 2^63 elements",
                                        c->where, i, vn);
        CHECK_FB(c);
        sy_status *st = buffer_bytes(c, ti->buffer, i, &ti->data, &ti->nbytes, &ti->offset);
        if (st)
            return st;
        ti->available = ti->data != NULL;
        if (ti->data) {
            int64_t numel = 1;
            for (int32_t d = 0; d < ti->rank; d++)
                numel *= ti->dims[d];
            size_t es = ti->type == TT_FLOAT32 || ti->type == TT_INT32 ? 4 : ti->type == TT_INT64 ? 8 : 1;
            if ((uint64_t)numel * es != ti->nbytes)
                return sy_status_create(SY_ERR_INVALID_MODEL, "%s: constant tensor #%u '%s' (%s, %lld elements) has a "
                                        "buffer of %zu bytes", c->where, i, vn, type_name(ti->type), (long long)numel,
                                        ti->nbytes);
        }
    }
    /* quantized or not float: refused as a whole, naming the first tensor */
    for (uint32_t i = 0; i < tv.len; i++) {
        const tinfo *ti = &c->t[i];
        if (ti->quantized || (ti->type != TT_FLOAT32 && !(ti->data && (ti->type == TT_INT32 || ti->type == TT_INT64))))
            return sy_status_create(SY_ERR_UNSUPPORTED,
                                    "%s: tensor #%u '%s' is %s%s: only float TFLite models are translated for training "
                                    "(float32 tensors; int32 constants as shapes and axes)",
                                    c->where, i, ti->vname, ti->quantized ? "quantized " : "", type_name(ti->type));
    }
    return NULL;
}

/* ---- values and constants -------------------------------------------------------- */

static int64_t numel_of(const tinfo *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

static bool tensor_ok(const tx *c, int32_t ti) { return ti >= 0 && (uint32_t)ti < c->nt; }

/* A float32 initializer of a constant tensor in `layout` (once). */
static sy_status *make_init(tx *c, int32_t ti, int layout)
{
    tinfo *t = &c->t[ti];
    if (t->layout == layout)
        return NULL;
    if (t->layout >= 0)
        return refuse(c, "constant tensor #%d '%s' is read in two layouts (a filter and a plain operand)", ti,
                      t->vname);
    if (t->type != TT_FLOAT32)
        return refuse(c, "constant tensor #%d '%s' is %s where a float32 operand is read", ti, t->vname,
                      type_name(t->type));
    int64_t n = numel_of(t);
    float *src = malloc((size_t)(n ? n : 1) * sizeof *src), *dst = malloc((size_t)(n ? n : 1) * sizeof *dst);
    if (!src || !dst) {
        free(src);
        free(dst);
        return oom();
    }
    memcpy(src, t->data, (size_t)n * 4);
    sy_tensor v = {.struct_size = sizeof v, .dtype = SY_DT_FLOAT32, .rank = t->rank, .data = dst,
                   .nbytes = (size_t)n * 4};
    if (layout == TR_TFL_OHWI) { /* [O,H,W,I] -> [O,I,H,W] */
        int64_t O = t->dims[0], H = t->dims[1], W = t->dims[2], I = t->dims[3];
        for (int64_t o = 0; o < O; o++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    for (int64_t i = 0; i < I; i++)
                        dst[((o * I + i) * H + h) * W + w] = src[((o * H + h) * W + w) * I + i];
        int64_t d[4] = {O, I, H, W};
        memcpy(v.dims, d, sizeof d);
    } else if (layout == TR_TFL_1HWC) { /* [1,H,W,C] -> [C,1,H,W] */
        int64_t H = t->dims[1], W = t->dims[2], C = t->dims[3];
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t k = 0; k < C; k++)
                    dst[(k * H + h) * W + w] = src[(h * W + w) * C + k];
        int64_t d[4] = {C, 1, H, W};
        memcpy(v.dims, d, sizeof d);
    } else {
        memcpy(dst, src, (size_t)n * 4);
        for (int32_t d = 0; d < t->rank; d++)
            v.dims[d] = t->dims[d];
    }
    sy_status *st = sy_model_writer_add_initializer(c->w, t->vname, &v);
    free(src);
    free(dst);
    if (st)
        return st;
    t->layout = layout;
    if (c->m->n_params == c->cap_params) {
        size_t nc = c->cap_params ? c->cap_params * 2 : 16;
        tr_tfl_param *g = tl_alloc(&c->m->pl, nc * sizeof *g);
        if (!g)
            return oom();
        if (c->m->n_params)
            memcpy(g, c->m->params, c->m->n_params * sizeof *g);
        c->m->params = g;
        c->cap_params = nc;
    }
    tr_tfl_param *p = &c->m->params[c->m->n_params++];
    p->name = t->vname;
    p->tensor = ti;
    p->buffer = t->buffer;
    p->offset = t->offset;
    p->nbytes = t->nbytes;
    p->layout = layout;
    p->type = TT_FLOAT32;
    p->rank = t->rank;
    memcpy(p->dims, t->dims, sizeof p->dims);
    for (uint32_t k = 0; k < c->nt; k++)
        p->shared |= (int32_t)k != ti && c->t[k].buffer == t->buffer && c->t[k].data;
    return NULL;
}

/* The ONNX value a float operand reads: the tensor's value or initializer. */
static sy_status *operand(tx *c, int32_t ti, const char **name)
{
    if (!tensor_ok(c, ti))
        return refuse(c, "input tensor %d is out of range (the subgraph has %u tensors)", ti, c->nt);
    tinfo *t = &c->t[ti];
    if (!t->available)
        return refuse(c, "input tensor #%d '%s' is not a graph input, a constant or an earlier operator's output", ti,
                      t->vname);
    if (t->data) {
        sy_status *st = make_init(c, ti, TR_TFL_AS_IS);
        if (st)
            return st;
    } else if (t->type != TT_FLOAT32) {
        return refuse(c, "input tensor #%d '%s' is %s", ti, t->vname, type_name(t->type));
    }
    *name = t->vname;
    return NULL;
}

/* The values of an int32 (or int64) constant; *n its element count. */
static sy_status *const_ints(tx *c, int32_t ti, int64_t *out, size_t cap, size_t *n, const char *what)
{
    if (!tensor_ok(c, ti))
        return refuse(c, "%s tensor %d is out of range", what, ti);
    const tinfo *t = &c->t[ti];
    if (!t->data || (t->type != TT_INT32 && t->type != TT_INT64))
        return refuse(c, "the %s (tensor #%d '%s') is not an int32 constant", what, ti, t->vname);
    size_t es = t->type == TT_INT32 ? 4 : 8, cnt = t->nbytes / es;
    if (cnt > cap)
        return refuse(c, "the %s (tensor #%d '%s') has %zu values", what, ti, t->vname, cnt);
    for (size_t i = 0; i < cnt; i++) {
        if (es == 4) {
            int32_t v;
            memcpy(&v, t->data + 4 * i, 4);
            out[i] = v;
        } else {
            memcpy(&out[i], t->data + 8 * i, 8);
        }
    }
    *n = cnt;
    return NULL;
}

/* A fresh int64 (or float) initializer. */
static sy_status *const_i64(tx *c, const char *base, const char *tag, const int64_t *v, size_t n, bool scalar,
                            const char **name)
{
    const char *nm = fresh(c, base, tag);
    if (!nm)
        return oom();
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_INT64, .rank = scalar ? 0 : 1, .dims = {(int64_t)n},
                   .data = (void *)v, .nbytes = n * 8};
    *name = nm;
    return sy_model_writer_add_initializer(c->w, nm, &t);
}

static sy_status *const_f32(tx *c, const char *base, const char *tag, float v, const char **name)
{
    const char *nm = fresh(c, base, tag);
    if (!nm)
        return oom();
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = 0, .data = &v, .nbytes = 4};
    *name = nm;
    return sy_model_writer_add_initializer(c->w, nm, &t);
}

static sy_status *node(tx *c, const char *op, const char *const *in, size_t nin, const char *out,
                       const sy_model_attr *attrs, size_t nattr)
{
    char name[160];
    snprintf(name, sizeof name, "%s_%u_%s%u", c->opname, c->oi, op, c->seq++);
    return sy_model_writer_add_node(c->w, NULL, op, name, in, nin, &out, 1, attrs, nattr);
}

static sy_model_attr ints_attr(const char *name, const int64_t *v, size_t n)
{
    return (sy_model_attr){.name = name, .type = SY_MODEL_ATTR_INTS, .ints = v, .n = n};
}
static sy_model_attr int_attr(const char *name, int64_t v)
{
    return (sy_model_attr){.name = name, .type = SY_MODEL_ATTR_INT, .i = v};
}

/* ---- options ------------------------------------------------------------------ */

typedef struct opts {
    fb_table o;
    const tfl_op_desc *d;
} opts;

static const tfl_field *field_of(const opts *p, const char *name)
{
    for (uint32_t k = 0; p->d && k < p->d->n_fields; k++)
        if (!strcmp(p->d->fields[k].name, name))
            return &p->d->fields[k];
    return NULL;
}

static int32_t opt_int(tx *c, const opts *p, const char *name)
{
    const tfl_field *f = field_of(p, name);
    if (!f)
        return 0;
    switch ((tfl_field_kind)f->kind) {
    case TFL_F_BOOL: return fb_u8(&c->r, p->o, f->id, (uint8_t)f->def, f->name) != 0;
    case TFL_F_I32: return fb_i32(&c->r, p->o, f->id, (int32_t)f->def, f->name);
    default: return fb_i8(&c->r, p->o, f->id, (int8_t)f->def, f->name);
    }
}

static float opt_f32(tx *c, const opts *p, const char *name)
{
    const tfl_field *f = field_of(p, name);
    return f ? fb_f32(&c->r, p->o, f->id, (float)f->def, f->name) : 0.0f;
}

/* ---- the operators ------------------------------------------------------------ */

typedef struct opio {
    int32_t in[8];
    uint32_t nin;
    int32_t out;
} opio;

static const char *shape_str(char *buf, size_t len, const int64_t *d, int32_t r)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int32_t i = 0; i < r && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)d[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
    return buf;
}

/* the output tensor has the shape the translation computes */
static sy_status *check_out(tx *c, int32_t out, const int64_t *dims, int32_t rank)
{
    const tinfo *t = &c->t[out];
    bool same = t->rank == rank;
    for (int32_t d = 0; same && d < rank; d++)
        same = t->dims[d] == dims[d];
    if (same)
        return NULL;
    char a[128], b[128];
    return refuse(c, "output tensor #%d '%s' has the shape %s, the translation computes %s", out, t->vname,
                  shape_str(a, sizeof a, t->dims, t->rank), shape_str(b, sizeof b, dims, rank));
}

/* out = act(pre): Relu or Clip, or nothing (then pre is out). */
static sy_status *activation(tx *c, int act, const char *pre, const char *out)
{
    if (act == ACT_RELU)
        return node(c, "Relu", &pre, 1, out, NULL, 0);
    float lo = act == ACT_RELU6 ? 0.0f : -1.0f, hi = act == ACT_RELU6 ? 6.0f : 1.0f;
    const char *mn = NULL, *mx = NULL;
    sy_status *st = const_f32(c, out, "min", lo, &mn);
    if (!st)
        st = const_f32(c, out, "max", hi, &mx);
    if (st)
        return st;
    return node(c, "Clip", (const char *[]){pre, mn, mx}, 3, out, NULL, 0);
}

/* where the main node writes: the output, or a fresh value the activation reads */
static sy_status *act_target(tx *c, int act, const char *out, const char **pre)
{
    if (act == ACT_NONE) {
        *pre = out;
        return NULL;
    }
    if (act != ACT_RELU && act != ACT_RELU6 && act != ACT_RELU_N1_TO_1) {
        const char *n = tfl_act_name(act);
        return refuse(c, "the fused activation %s is not translated (NONE, RELU, RELU6 and RELU_N1_TO_1 are)",
                      n ? n : "(invalid)");
    }
    *pre = fresh(c, out, "preact");
    return *pre ? NULL : oom();
}

static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

/* SAME / VALID padding of one spatial axis: output size and leading/trailing pads */
static sy_status *pad_axis(tx *c, int padding, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *out,
                           int64_t *before, int64_t *after)
{
    if (stride < 1 || dil < 1 || k < 1)
        return refuse(c, "stride %lld, dilation %lld, kernel %lld", (long long)stride, (long long)dil, (long long)k);
    int64_t eff = (k - 1) * dil + 1;
    if (padding == 0) { /* SAME */
        *out = (in + stride - 1) / stride;
        int64_t total = (*out - 1) * stride + eff - in;
        if (total < 0)
            total = 0;
        *before = total / 2;
        *after = total - *before;
    } else if (padding == 1) { /* VALID */
        if (in < eff)
            return refuse(c, "the kernel (%lld with dilation) is larger than the input (%lld)", (long long)eff,
                          (long long)in);
        *out = (in - eff) / stride + 1;
        *before = *after = 0;
    } else {
        return refuse(c, "padding %d is neither SAME nor VALID", padding);
    }
    return NULL;
}

static sy_status *t_conv(tx *c, const opio *io, const opts *p, bool depthwise)
{
    if (io->nin < 2)
        return refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1], bi = io->nin > 2 ? io->in[2] : -1;
    if (!tensor_ok(c, wi) || !c->t[wi].data)
        return refuse(c, "the filter is not a constant tensor");
    const tinfo *x = &c->t[xi], *w = &c->t[wi];
    if (x->rank != 4 || w->rank != 4)
        return refuse(c, "input '%s' rank %d and filter '%s' rank %d (4 and 4 are translated)", x->vname, x->rank,
                      w->vname, w->rank);
    int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
    int64_t O = w->dims[depthwise ? 3 : 0], KH = w->dims[1], KW = w->dims[2];
    if (depthwise) {
        if (w->dims[0] != 1 || C < 1 || O % C)
            return refuse(c, "filter '%s' [%lld,%lld,%lld,%lld] for %lld input channels", w->vname,
                          (long long)w->dims[0], (long long)KH, (long long)KW, (long long)O, (long long)C);
    } else if (w->dims[3] < 1 || C < w->dims[3] || C % w->dims[3] || O % (C / w->dims[3])) {
        /* grouped: the filter reads C / groups channels, each group of
         * output channels one slice of the input's (ONNX Conv's group) */
        return refuse(c, "filter '%s' has %lld input channels and %lld output channels for an input of %lld channels "
                      "(a grouped convolution needs the filter's input channels to divide the input's, and the groups "
                      "to divide the output channels)", w->vname, (long long)w->dims[3], (long long)O, (long long)C);
    }
    const int64_t group = depthwise ? C : C / w->dims[3];
    int padding = opt_int(c, p, "padding");
    int64_t sh = opt_int(c, p, "stride_h"), sw = opt_int(c, p, "stride_w");
    int64_t dh = opt_int(c, p, "dilation_h_factor"), dw = opt_int(c, p, "dilation_w_factor");
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    int64_t OH, OW, pt, pb, pl, pr;
    sy_status *st = pad_axis(c, padding, H, KH, sh, dh, &OH, &pt, &pb);
    if (!st)
        st = pad_axis(c, padding, W, KW, sw, dw, &OW, &pl, &pr);
    if (!st)
        st = check_out(c, io->out, (const int64_t[]){N, OH, OW, O}, 4);
    if (!st)
        st = make_init(c, wi, depthwise ? TR_TFL_1HWC : TR_TFL_OHWI);
    const char *xn = NULL, *bn = "";
    if (!st)
        st = operand(c, xi, &xn);
    if (!st && bi >= 0) {
        if (!tensor_ok(c, bi) || c->t[bi].rank != 1 || c->t[bi].dims[0] != O)
            return refuse(c, "the bias is not a vector of %lld values", (long long)O);
        st = operand(c, bi, &bn);
    }
    if (st)
        return st;
    const char *out = c->t[io->out].vname, *xt = fresh(c, xn, "nchw"), *yt = fresh(c, out, "nchw"), *pre;
    if (!xt || !yt)
        return oom();
    if ((st = act_target(c, act, out, &pre)))
        return st;
    const int64_t k[2] = {KH, KW}, s[2] = {sh, sw}, d[2] = {dh, dw}, pads[4] = {pt, pl, pb, pr};
    sy_model_attr ca[5] = {ints_attr("kernel_shape", k, 2), ints_attr("strides", s, 2), ints_attr("dilations", d, 2),
                           ints_attr("pads", pads, 4), int_attr("group", group)};
    sy_model_attr tin = ints_attr("perm", TO_NCHW, 4), tout = ints_attr("perm", TO_NHWC, 4);
    if ((st = node(c, "Transpose", &xn, 1, xt, &tin, 1)) ||
        (st = node(c, "Conv", (const char *[]){xt, w->vname, bn}, bi >= 0 ? 3 : 2, yt, ca, 5)) ||
        (st = node(c, "Transpose", &yt, 1, pre, &tout, 1)))
        return st;
    return act == ACT_NONE ? NULL : activation(c, act, pre, out);
}

static sy_status *t_pool(tx *c, const opio *io, const opts *p, bool max)
{
    const tinfo *x = &c->t[io->in[0]];
    if (x->rank != 4)
        return refuse(c, "input '%s' has rank %d (4 is translated)", x->vname, x->rank);
    int padding = opt_int(c, p, "padding");
    int64_t sh = opt_int(c, p, "stride_h"), sw = opt_int(c, p, "stride_w");
    int64_t fh = opt_int(c, p, "filter_height"), fw = opt_int(c, p, "filter_width");
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    int64_t OH, OW, pt, pb, pl, pr;
    sy_status *st = pad_axis(c, padding, x->dims[1], fh, sh, 1, &OH, &pt, &pb);
    if (!st)
        st = pad_axis(c, padding, x->dims[2], fw, sw, 1, &OW, &pl, &pr);
    if (!st)
        st = check_out(c, io->out, (const int64_t[]){x->dims[0], OH, OW, x->dims[3]}, 4);
    const char *xn = NULL;
    if (!st)
        st = operand(c, io->in[0], &xn);
    if (st)
        return st;
    const char *out = c->t[io->out].vname, *xt = fresh(c, xn, "nchw"), *yt = fresh(c, out, "nchw"), *pre;
    if (!xt || !yt)
        return oom();
    if ((st = act_target(c, act, out, &pre)))
        return st;
    /* AveragePool's count_include_pad 0 (the default): TFLite divides by the
     * taps inside the input */
    const int64_t k[2] = {fh, fw}, s[2] = {sh, sw}, pads[4] = {pt, pl, pb, pr};
    sy_model_attr pa[3] = {ints_attr("kernel_shape", k, 2), ints_attr("strides", s, 2), ints_attr("pads", pads, 4)};
    sy_model_attr tin = ints_attr("perm", TO_NCHW, 4), tout = ints_attr("perm", TO_NHWC, 4);
    if ((st = node(c, "Transpose", &xn, 1, xt, &tin, 1)) ||
        (st = node(c, max ? "MaxPool" : "AveragePool", &xt, 1, yt, pa, 3)) ||
        (st = node(c, "Transpose", &yt, 1, pre, &tout, 1)))
        return st;
    return act == ACT_NONE ? NULL : activation(c, act, pre, out);
}

static sy_status *t_fc(tx *c, const opio *io, const opts *p)
{
    if (io->nin < 2)
        return refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1], bi = io->nin > 2 ? io->in[2] : -1;
    if (!tensor_ok(c, wi))
        return refuse(c, "weights tensor %d is out of range", wi);
    const tinfo *x = &c->t[xi], *w = &c->t[wi];
    if (w->rank != 2)
        return refuse(c, "weights '%s' have rank %d (2 is translated)", w->vname, w->rank);
    int64_t O = w->dims[0], K = w->dims[1];
    int act = opt_int(c, p, "fused_activation_function");
    int wformat = opt_int(c, p, "weights_format"), keep = opt_int(c, p, "keep_num_dims");
    CHECK_FB(c);
    if (wformat != 0)
        return refuse(c, "weights_format %d (only DEFAULT is translated)", wformat);
    int64_t n = numel_of(x);
    if (K < 1 || x->rank < 1 || n % K)
        return refuse(c, "input '%s' has %lld values, not a multiple of the weights' %lld columns", x->vname,
                      (long long)n, (long long)K);
    bool flat = x->rank == 2 && x->dims[1] == K;
    if (keep && !flat)
        return refuse(c, "keep_num_dims with an input of rank %d", x->rank);
    sy_status *st = check_out(c, io->out, (const int64_t[]){n / K, O}, 2);
    const char *xn = NULL, *wn = NULL, *bn = NULL;
    if (!st)
        st = operand(c, xi, &xn);
    if (!st)
        st = operand(c, wi, &wn);
    if (!st && bi >= 0) {
        if (!tensor_ok(c, bi) || c->t[bi].rank != 1 || c->t[bi].dims[0] != O)
            return refuse(c, "the bias is not a vector of %lld values", (long long)O);
        st = operand(c, bi, &bn);
    }
    if (st)
        return st;
    const char *out = c->t[io->out].vname, *pre;
    if ((st = act_target(c, act, out, &pre)))
        return st;
    if (!flat) { /* TFLite reads the input as [n / K, K] */
        const char *shp = NULL, *x2 = fresh(c, xn, "flat");
        const int64_t s2[2] = {-1, K};
        if (!x2)
            return oom();
        if ((st = const_i64(c, xn, "flat_shape", s2, 2, false, &shp)) ||
            (st = node(c, "Reshape", (const char *[]){xn, shp}, 2, x2, NULL, 0)))
            return st;
        xn = x2;
    }
    sy_model_attr ga = int_attr("transB", 1);
    if ((st = node(c, "Gemm", (const char *[]){xn, wn, bn}, bn ? 3 : 2, pre, &ga, 1)))
        return st;
    return act == ACT_NONE ? NULL : activation(c, act, pre, out);
}

static sy_status *t_binary(tx *c, const opio *io, const opts *p, const char *op)
{
    if (io->nin != 2)
        return refuse(c, "%u inputs", io->nin);
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    const char *a = NULL, *b = NULL, *pre = NULL, *out = c->t[io->out].vname;
    sy_status *st = operand(c, io->in[0], &a);
    if (!st)
        st = operand(c, io->in[1], &b);
    if (!st)
        st = act_target(c, act, out, &pre);
    if (!st)
        st = node(c, op, (const char *[]){a, b}, 2, pre, NULL, 0);
    return st || act == ACT_NONE ? st : activation(c, act, pre, out);
}

static sy_status *t_unary(tx *c, const opio *io, int code)
{
    const char *a = NULL, *out = c->t[io->out].vname;
    sy_status *st = operand(c, io->in[0], &a);
    if (st)
        return st;
    if (code == OP_ABS || code == OP_TANH || code == OP_LOGISTIC)
        return node(c, code == OP_ABS ? "Abs" : code == OP_TANH ? "Tanh" : "Sigmoid", &a, 1, out, NULL, 0);
    return activation(c, code == OP_RELU ? ACT_RELU : code == OP_RELU6 ? ACT_RELU6 : ACT_RELU_N1_TO_1, a, out);
}

static sy_status *t_reshape(tx *c, const opio *io)
{
    const tinfo *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if (numel_of(x) != numel_of(y))
        return refuse(c, "input '%s' has %lld values, output '%s' %lld", x->vname, (long long)numel_of(x), y->vname,
                      (long long)numel_of(y));
    /* the output's static shape; a leading dimension kept from the input is
     * copied (0), so a batch of samples reshapes as one does */
    int64_t s[MAX_RANK];
    for (int32_t d = 0; d < y->rank; d++)
        s[d] = y->dims[d];
    if (y->rank > 0 && x->rank > 0 && y->dims[0] == x->dims[0])
        s[0] = 0;
    const char *a = NULL, *shp = NULL;
    sy_status *st = operand(c, io->in[0], &a);
    if (!st)
        st = const_i64(c, y->vname, "shape", s, (size_t)y->rank, false, &shp);
    if (!st)
        st = node(c, "Reshape", (const char *[]){a, shp}, 2, y->vname, NULL, 0);
    return st;
}

static sy_status *axis_of(tx *c, int64_t a, int32_t rank, int64_t *out)
{
    if (a < -rank || a >= rank)
        return refuse(c, "axis %lld is out of range for rank %d", (long long)a, rank);
    *out = a < 0 ? a + rank : a;
    return NULL;
}

static sy_status *t_squeeze(tx *c, const opio *io, const opts *p)
{
    const tinfo *x = &c->t[io->in[0]];
    const tfl_field *f = field_of(p, "squeeze_dims");
    fb_vec v = f ? fb_vector(&c->r, p->o, f->id, 4, f->name) : (fb_vec){0, 0};
    CHECK_FB(c);
    int64_t axes[MAX_RANK], out[MAX_RANK];
    size_t na = 0;
    bool sq[MAX_RANK] = {false};
    if (v.len > (uint32_t)x->rank)
        return refuse(c, "%u squeeze_dims for rank %d", v.len, x->rank);
    for (uint32_t i = 0; i < v.len; i++) {
        int64_t a = 0;
        sy_status *st = axis_of(c, fb_vec_i32(&c->r, v, i), x->rank, &a);
        if (st)
            return st;
        if (x->dims[a] != 1)
            return refuse(c, "squeezes axis %lld of size %lld", (long long)a, (long long)x->dims[a]);
        sq[a] = true;
    }
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (!v.len && x->dims[d] == 1)
            sq[d] = true;
        if (sq[d])
            axes[na++] = d;
        else
            out[r++] = x->dims[d];
    }
    const char *a = NULL, *an = NULL;
    sy_status *st = check_out(c, io->out, out, r);
    if (!st)
        st = operand(c, io->in[0], &a);
    if (!st)
        st = const_i64(c, c->t[io->out].vname, "axes", axes, na, false, &an);
    if (!st)
        st = node(c, "Squeeze", (const char *[]){a, an}, 2, c->t[io->out].vname, NULL, 0);
    return st;
}

static sy_status *t_concat(tx *c, const opio *io, const opts *p)
{
    const tinfo *y = &c->t[io->out];
    int64_t axis = 0;
    int act = opt_int(c, p, "fused_activation_function");
    sy_status *st = axis_of(c, opt_int(c, p, "axis"), y->rank, &axis);
    CHECK_FB(c);
    if (st)
        return st;
    const char *in[8] = {NULL}, *pre = NULL;
    int64_t sum = 0;
    for (uint32_t i = 0; i < io->nin; i++) {
        if ((st = operand(c, io->in[i], &in[i])))
            return st;
        const tinfo *x = &c->t[io->in[i]];
        if (x->rank != y->rank)
            return refuse(c, "input #%u has rank %d, the output %d", i, x->rank, y->rank);
        sum += x->dims[axis];
    }
    int64_t od[MAX_RANK];
    memcpy(od, y->dims, sizeof od);
    od[axis] = sum;
    if ((st = check_out(c, io->out, od, y->rank)) || (st = act_target(c, act, y->vname, &pre)))
        return st;
    sy_model_attr aa = int_attr("axis", axis);
    if ((st = node(c, "Concat", in, io->nin, pre, &aa, 1)))
        return st;
    return act == ACT_NONE ? NULL : activation(c, act, pre, y->vname);
}

static sy_status *t_softmax(tx *c, const opio *io, const opts *p)
{
    float beta = opt_f32(c, p, "beta");
    CHECK_FB(c);
    const char *a = NULL, *out = c->t[io->out].vname;
    sy_status *st = operand(c, io->in[0], &a);
    if (st)
        return st;
    if (beta != 1.0f) { /* softmax(beta x) */
        const char *bn = NULL, *ax = fresh(c, a, "beta");
        if (!ax)
            return oom();
        if ((st = const_f32(c, a, "beta_value", beta, &bn)) ||
            (st = node(c, "Mul", (const char *[]){a, bn}, 2, ax, NULL, 0)))
            return st;
        a = ax;
    }
    sy_model_attr aa = int_attr("axis", -1);
    return node(c, "Softmax", &a, 1, out, &aa, 1);
}

static sy_status *t_pad(tx *c, const opio *io)
{
    if (io->nin != 2)
        return refuse(c, "%u inputs (PAD has 2)", io->nin);
    const tinfo *x = &c->t[io->in[0]];
    int64_t v[2 * MAX_RANK], pads[2 * MAX_RANK], od[MAX_RANK];
    size_t n;
    sy_status *st = const_ints(c, io->in[1], v, 2 * MAX_RANK, &n, "paddings");
    if (st)
        return st;
    if (n != 2 * (size_t)x->rank)
        return refuse(c, "%zu paddings for rank %d", n, x->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        if (v[2 * d] < 0 || v[2 * d + 1] < 0)
            return refuse(c, "a negative padding");
        pads[d] = v[2 * d];
        pads[x->rank + d] = v[2 * d + 1];
        od[d] = x->dims[d] + v[2 * d] + v[2 * d + 1];
    }
    const char *a = NULL, *pn = NULL;
    if ((st = check_out(c, io->out, od, x->rank)) || (st = operand(c, io->in[0], &a)) ||
        (st = const_i64(c, c->t[io->out].vname, "pads", pads, 2 * (size_t)x->rank, false, &pn)))
        return st;
    return node(c, "Pad", (const char *[]){a, pn}, 2, c->t[io->out].vname, NULL, 0);
}

static sy_status *t_transpose(tx *c, const opio *io)
{
    const tinfo *x = &c->t[io->in[0]];
    int64_t perm[MAX_RANK], od[MAX_RANK];
    size_t n;
    sy_status *st = io->nin == 2 ? const_ints(c, io->in[1], perm, MAX_RANK, &n, "permutation")
                                 : refuse(c, "%u inputs (TRANSPOSE has 2)", io->nin);
    if (st)
        return st;
    if (n != (size_t)x->rank)
        return refuse(c, "a permutation of %zu axes for rank %d", n, x->rank);
    bool seen[MAX_RANK] = {false};
    for (size_t d = 0; d < n; d++) {
        if (perm[d] < 0 || perm[d] >= x->rank || seen[perm[d]])
            return refuse(c, "the permutation is not one of the %d axes", x->rank);
        seen[perm[d]] = true;
        od[d] = x->dims[perm[d]];
    }
    const char *a = NULL;
    if ((st = check_out(c, io->out, od, x->rank)) || (st = operand(c, io->in[0], &a)))
        return st;
    sy_model_attr pa = ints_attr("perm", perm, n);
    return node(c, "Transpose", &a, 1, c->t[io->out].vname, &pa, 1);
}

static sy_status *t_reduce(tx *c, const opio *io, const opts *p, bool mean)
{
    const tinfo *x = &c->t[io->in[0]];
    int64_t v[MAX_RANK], axes[MAX_RANK], od[MAX_RANK];
    size_t n, na = 0;
    sy_status *st = io->nin == 2 ? const_ints(c, io->in[1], v, MAX_RANK, &n, "axes")
                                 : refuse(c, "%u inputs (2 expected)", io->nin);
    if (st)
        return st;
    int keep = opt_int(c, p, "keep_dims");
    CHECK_FB(c);
    bool red[MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int64_t a = 0;
        if ((st = axis_of(c, v[i], x->rank, &a)))
            return st;
        red[a] = true;
    }
    if (!n)
        return refuse(c, "no axes (a reduction over nothing)");
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (red[d])
            axes[na++] = d;
        if (!red[d] || keep)
            od[r++] = red[d] ? 1 : x->dims[d];
    }
    const char *a = NULL, *out = c->t[io->out].vname;
    if ((st = check_out(c, io->out, od, r)) || (st = operand(c, io->in[0], &a)))
        return st;
    sy_model_attr ka = int_attr("keepdims", keep), aa = ints_attr("axes", axes, na);
    if (mean) /* opset 13: the axes an attribute */
        return node(c, "ReduceMean", &a, 1, out, (sy_model_attr[]){aa, ka}, 2);
    const char *an = NULL;
    if ((st = const_i64(c, out, "axes", axes, na, false, &an)))
        return st;
    return node(c, "ReduceSum", (const char *[]){a, an}, 2, out, &ka, 1);
}

/* Slice of [starts, ends) with non-zero steps over every axis (a negative
 * step runs down from starts to above ends), then Squeeze of the `shrink`
 * axes (bits over input axes), then Unsqueeze of the new axes (`new_axes`:
 * bits over output axes). An axis taken whole ends at INT64_MAX (ONNX clamps
 * it to the axis), so the model's batch of 1 does not cut a training batch
 * of more samples; a negative step's end below 0 (down to element 0) is
 * written INT64_MIN, as ONNX would read -1 as the last element. */
static sy_status *emit_slice(tx *c, const opio *io, const int64_t *starts, const int64_t *ends, const int64_t *steps,
                             uint32_t shrink, uint32_t new_axes)
{
    const tinfo *x = &c->t[io->in[0]];
    int64_t od[MAX_RANK], axes[MAX_RANK], en[MAX_RANK], sq[MAX_RANK], na[MAX_RANK];
    int32_t r = 0;
    size_t nsq = 0, nna = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t len = steps[d] > 0 ? (ends[d] > starts[d] ? (ends[d] - starts[d] + steps[d] - 1) / steps[d] : 0)
                                   : (starts[d] > ends[d] ? (starts[d] - ends[d] - steps[d] - 1) / -steps[d] : 0);
        axes[d] = d;
        en[d] = starts[d] == 0 && steps[d] == 1 && len == x->dims[d] ? INT64_MAX
                : steps[d] < 0 && ends[d] < 0                           ? INT64_MIN
                                                                        : ends[d];
        if (shrink >> d & 1) {
            if (len != 1)
                return refuse(c, "shrinks axis %d of %lld values", d, (long long)len);
            sq[nsq++] = d;
        } else {
            while (r < MAX_RANK && new_axes >> r & 1)
                na[nna++] = r, od[r++] = 1;
            if (r == MAX_RANK)
                return refuse(c, "an output past rank %d", MAX_RANK);
            od[r++] = len;
        }
    }
    while (r < MAX_RANK && new_axes >> r & 1) /* new axes after the last input axis kept */
        na[nna++] = r, od[r++] = 1;
    const char *a = NULL, *sn = NULL, *enn = NULL, *an = NULL, *pn = NULL, *out = c->t[io->out].vname;
    sy_status *st;
    if ((st = check_out(c, io->out, od, r)) || (st = operand(c, io->in[0], &a)) ||
        (st = const_i64(c, out, "starts", starts, (size_t)x->rank, false, &sn)) ||
        (st = const_i64(c, out, "ends", en, (size_t)x->rank, false, &enn)) ||
        (st = const_i64(c, out, "axes", axes, (size_t)x->rank, false, &an)) ||
        (st = const_i64(c, out, "steps", steps, (size_t)x->rank, false, &pn)))
        return st;
    const char *v = out;
    if ((nsq || nna) && !(v = fresh(c, out, "sliced")))
        return oom();
    if ((st = node(c, "Slice", (const char *[]){a, sn, enn, an, pn}, 5, v, NULL, 0)))
        return st;
    if (nsq) {
        const char *qn = NULL, *sqd = out;
        if (nna && !(sqd = fresh(c, out, "squeezed")))
            return oom();
        if ((st = const_i64(c, out, "shrink_axes", sq, nsq, false, &qn)) ||
            (st = node(c, "Squeeze", (const char *[]){v, qn}, 2, sqd, NULL, 0)))
            return st;
        v = sqd;
    }
    if (!nna)
        return NULL;
    const char *un = NULL;
    if ((st = const_i64(c, out, "new_axes", na, nna, false, &un)))
        return st;
    return node(c, "Unsqueeze", (const char *[]){v, un}, 2, out, NULL, 0);
}

static sy_status *t_slice(tx *c, const opio *io)
{
    const tinfo *x = &c->t[io->in[0]];
    int64_t b[MAX_RANK], s[MAX_RANK], e[MAX_RANK], one[MAX_RANK];
    size_t nb, ns;
    sy_status *st = io->nin == 3 ? const_ints(c, io->in[1], b, MAX_RANK, &nb, "begin")
                                 : refuse(c, "%u inputs (SLICE has 3)", io->nin);
    if (!st)
        st = const_ints(c, io->in[2], s, MAX_RANK, &ns, "size");
    if (st)
        return st;
    if (nb != (size_t)x->rank || ns != nb)
        return refuse(c, "begin and size of %zu and %zu values for rank %d", nb, ns, x->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        e[d] = s[d] == -1 ? x->dims[d] : b[d] + s[d];
        one[d] = 1;
        if (b[d] < 0 || s[d] < -1 || e[d] > x->dims[d] || e[d] < b[d])
            return refuse(c, "begin %lld size %lld on axis %d of %lld values", (long long)b[d], (long long)s[d], d,
                          (long long)x->dims[d]);
    }
    return emit_slice(c, io, b, e, one, 0, 0);
}

/* STRIDED_SLICE: its spec resolved by the SDK's sy_ss_resolve (TF's rules:
 * ellipsis, new axes, trailing axes taken whole, shrink; TFLite's offset,
 * ends counted from their begins), written as Slice with the plan's steps
 * (negative ones too; a negative step taking at most one element is
 * written 1, the same element, so a batch axis of 1 stays whole), Squeeze of
 * the shrunk axes and Unsqueeze of the new ones. */
static sy_status *t_strided_slice(tx *c, const opio *io, const opts *p)
{
    const tinfo *x = &c->t[io->in[0]];
    int64_t b[MAX_RANK], e[MAX_RANK], s[MAX_RANK];
    size_t nb, ne, ns;
    sy_status *st = io->nin == 4 ? const_ints(c, io->in[1], b, MAX_RANK, &nb, "begin")
                                 : refuse(c, "%u inputs (STRIDED_SLICE has 4)", io->nin);
    if (!st)
        st = const_ints(c, io->in[2], e, MAX_RANK, &ne, "end");
    if (!st)
        st = const_ints(c, io->in[3], s, MAX_RANK, &ns, "strides");
    if (st)
        return st;
    sy_ss_spec spec = {.n = (int32_t)nb, .begin = b, .end = e, .strides = s,
                       .begin_mask = opt_int(c, p, "begin_mask"), .end_mask = opt_int(c, p, "end_mask"),
                       .ellipsis_mask = opt_int(c, p, "ellipsis_mask"), .new_axis_mask = opt_int(c, p, "new_axis_mask"),
                       .shrink_axis_mask = opt_int(c, p, "shrink_axis_mask"), .offset = opt_int(c, p, "offset") != 0};
    CHECK_FB(c);
    if (ne != nb || ns != nb)
        return refuse(c, "begin, end and strides of %zu, %zu and %zu values", nb, ne, ns);
    sy_ss_plan plan;
    char why[160];
    if (sy_ss_resolve(x->rank, x->dims, &spec, &plan, why, sizeof why))
        return refuse(c, "%s", why);
    uint32_t shrink = 0, new_axes = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        s[d] = plan.step[d] < 0 && plan.len[d] < 2 ? 1 : plan.step[d];
        b[d] = plan.len[d] || plan.start[d] > 0 ? plan.start[d] : 0; /* an empty run down from -1: 0 to 0 */
        e[d] = plan.len[d] ? plan.start[d] + (plan.len[d] - 1) * s[d] + (s[d] > 0 ? 1 : -1) : b[d];
        shrink |= (uint32_t)plan.shrunk[d] << d;
    }
    for (int32_t j = 0; j < plan.out_rank; j++)
        new_axes |= (uint32_t)plan.new_axis[j] << j;
    return emit_slice(c, io, b, e, s, shrink, new_axes);
}

/* BATCH_MATMUL with a batched right operand: out[.., m, n] = sum_k X'[.., m,
 * k] Y'[.., k, n], the batch axes broadcast as numpy does (aligned on the
 * right, an axis of 1 stretched), which is how TFLite's BATCH_MATMUL
 * broadcasts. The training IR's MatMul backward rule takes 2-D products
 * only (its transposes need a known rank, and the artifacts do not know
 * ranks), so the product is written as the sum it is: X' unsqueezed to
 * [.., M, K, 1], Y' to [.., 1, K, N], multiplied (broadcasting) and summed
 * over K. Mul's backward rule gives both operands their gradients and sums
 * each over the axes broadcasting stretched, so a constant Y (a trainable
 * weight) gets its gradient summed over the broadcast batch, and an
 * activation Y gets one too. The [.., M, K, N] product is K times the
 * output, acceptable for the small models trained on the host. */
static sy_status *t_bmm_broadcast(tx *c, const opio *io, int ax, int ay)
{
    const tinfo *x = &c->t[io->in[0]], *y = &c->t[io->in[1]];
    int32_t r = x->rank > y->rank ? x->rank : y->rank;
    if (r + 1 > MAX_RANK)
        return refuse(c, "operands of rank %d and %d: the product is written at rank %d, past %d", x->rank, y->rank,
                      r + 1, MAX_RANK);
    int64_t M = x->dims[x->rank - (ax ? 1 : 2)], K = x->dims[x->rank - (ax ? 2 : 1)];
    int64_t K2 = y->dims[y->rank - (ay ? 1 : 2)], N = y->dims[y->rank - (ay ? 2 : 1)];
    if (K != K2)
        return refuse(c, "'%s' gives %lld columns and '%s' %lld rows", x->vname, (long long)K, y->vname, (long long)K2);
    int64_t od[MAX_RANK];
    for (int32_t d = 0; d < r - 2; d++) { /* axis d of the output, aligned on the right */
        int32_t dx = d - (r - x->rank), dy = d - (r - y->rank);
        int64_t a = dx >= 0 ? x->dims[dx] : 1, b = dy >= 0 ? y->dims[dy] : 1;
        if (a != b && a != 1 && b != 1)
            return refuse(c, "batch axis %d: '%s' has %lld and '%s' %lld, which do not broadcast", d, x->vname,
                          (long long)a, y->vname, (long long)b);
        od[d] = a > b ? a : b;
    }
    od[r - 2] = M;
    od[r - 1] = N;
    sy_status *st = check_out(c, io->out, od, r);
    if (st)
        return st;
    /* every tensor's element count fits int64 (read_tensors), but the
     * [.., M, K, N] intermediate is K times the output's */
    int64_t terms = K;
    for (int32_t d = 0; d < r; d++)
        if (__builtin_mul_overflow(terms, od[d], &terms))
            return refuse(c, "the product's [.., M, K, N] intermediate would have more than 2^63 elements");
    const char *xn = NULL, *yn = NULL;
    if ((st = operand(c, io->in[0], &xn)) || (st = operand(c, io->in[1], &yn)))
        return st;
    const char *names[2] = {xn, yn};
    const int adj[2] = {ax, ay};
    const int32_t ranks[2] = {x->rank, y->rank};
    /* X' [.., M, K, 1] and Y' [.., 1, K, N]: the unsqueezed axis is the one
     * of the other operand's N or M */
    const int64_t unsq[2] = {-1, -3};
    for (int k = 0; k < 2; k++) {
        int32_t rk = ranks[k];
        if (adj[k]) { /* the last two axes swapped */
            int64_t perm[MAX_RANK];
            for (int32_t d = 0; d < rk; d++)
                perm[d] = d;
            perm[rk - 2] = rk - 1;
            perm[rk - 1] = rk - 2;
            const char *t = fresh(c, names[k], "adj");
            sy_model_attr pa = ints_attr("perm", perm, (size_t)rk);
            if (!t)
                return oom();
            if ((st = node(c, "Transpose", &names[k], 1, t, &pa, 1)))
                return st;
            names[k] = t;
        }
        const char *an = NULL, *u = fresh(c, names[k], "unsq");
        if (!u)
            return oom();
        if ((st = const_i64(c, names[k], "unsq_axes", &unsq[k], 1, false, &an)) ||
            (st = node(c, "Unsqueeze", (const char *[]){names[k], an}, 2, u, NULL, 0)))
            return st;
        names[k] = u;
    }
    const char *out = c->t[io->out].vname, *prod = fresh(c, out, "terms"), *kn = NULL;
    if (!prod)
        return oom();
    /* K sits at axis r - 1 of the rank r + 1 product; a positive axis, as
     * ReduceSum's backward rule with keepdims = 0 needs */
    const int64_t kaxis = r - 1;
    sy_model_attr ka = int_attr("keepdims", 0);
    if ((st = node(c, "Mul", names, 2, prod, NULL, 0)) || (st = const_i64(c, out, "k_axis", &kaxis, 1, false, &kn)))
        return st;
    return node(c, "ReduceSum", (const char *[]){prod, kn}, 2, out, &ka, 1);
}

/* BATCH_MATMUL: out = X' . Y' with X' = adj_x ? X^T : X (the last two
 * axes), Y' likewise, batch axes broadcast. A right operand with no batch
 * (rank 2, or every batch axis 1) is a 2-D product underneath: the left
 * operand's batch rows are folded by a Reshape into the rows of one 2-D
 * MatMul (whose backward rule takes 2-D products) and unfolded after. A
 * batched right operand is t_bmm_broadcast's. */
static sy_status *t_batch_matmul(tx *c, const opio *io, const opts *p)
{
    if (io->nin != 2)
        return refuse(c, "%u inputs (BATCH_MATMUL has 2)", io->nin);
    int ax = opt_int(c, p, "adj_x"), ay = opt_int(c, p, "adj_y");
    CHECK_FB(c);
    const tinfo *x = &c->t[io->in[0]], *y = &c->t[io->in[1]];
    if (x->rank < 2 || y->rank < 2)
        return refuse(c, "operands '%s' of rank %d and '%s' of rank %d (both need rank 2 or more)", x->vname, x->rank,
                      y->vname, y->rank);
    int64_t ybatch = 1;
    for (int32_t d = 0; d < y->rank - 2; d++)
        ybatch *= y->dims[d];
    if (ybatch != 1 || y->rank > x->rank)
        return t_bmm_broadcast(c, io, ax, ay);
    int32_t r = x->rank;
    int64_t M = x->dims[r - (ax ? 1 : 2)], K = x->dims[r - (ax ? 2 : 1)];
    int64_t K2 = y->dims[y->rank - (ay ? 1 : 2)], N = y->dims[y->rank - (ay ? 2 : 1)];
    if (K != K2)
        return refuse(c, "'%s' gives %lld columns and '%s' %lld rows", x->vname, (long long)K, y->vname, (long long)K2);
    int64_t od[MAX_RANK];
    for (int32_t d = 0; d < r - 2; d++)
        od[d] = x->dims[d];
    od[r - 2] = M;
    od[r - 1] = N;
    sy_status *st = check_out(c, io->out, od, r);
    const char *xn = NULL, *yn = NULL;
    if (!st)
        st = operand(c, io->in[0], &xn);
    if (!st)
        st = operand(c, io->in[1], &yn);
    if (st)
        return st;
    const char *out = c->t[io->out].vname;
    int64_t perm[MAX_RANK];
    for (int32_t d = 0; d < r; d++)
        perm[d] = d;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    if (ax) { /* X^T over the last two axes */
        const char *xt = fresh(c, xn, "adj");
        sy_model_attr pa = ints_attr("perm", perm, (size_t)r);
        if (!xt)
            return oom();
        if ((st = node(c, "Transpose", &xn, 1, xt, &pa, 1)))
            return st;
        xn = xt;
    }
    if (y->rank > 2) { /* the batch axes of 1 dropped */
        const char *shp = NULL, *y2 = fresh(c, yn, "2d");
        const int64_t s2[2] = {y->dims[y->rank - 2], y->dims[y->rank - 1]};
        if (!y2)
            return oom();
        if ((st = const_i64(c, yn, "shape", s2, 2, false, &shp)) ||
            (st = node(c, "Reshape", (const char *[]){yn, shp}, 2, y2, NULL, 0)))
            return st;
        yn = y2;
    }
    if (ay) { /* Y^T */
        const char *yt = fresh(c, yn, "adj");
        sy_model_attr pa = ints_attr("perm", (const int64_t[]){1, 0}, 2);
        if (!yt)
            return oom();
        if ((st = node(c, "Transpose", &yn, 1, yt, &pa, 1)))
            return st;
        yn = yt;
    }
    if (r == 2)
        return node(c, "MatMul", (const char *[]){xn, yn}, 2, out, NULL, 0);
    /* [.., M, K] -> [rows, K] . [K, N] -> [.., M, N]; the leading axis is
     * -1 so a batch of another size folds the same way */
    const char *s1 = NULL, *s2 = NULL, *x2 = fresh(c, xn, "rows"), *p2 = fresh(c, out, "rows");
    if (!x2 || !p2)
        return oom();
    const int64_t rows[2] = {-1, K};
    od[0] = -1;
    if ((st = const_i64(c, xn, "rows_shape", rows, 2, false, &s1)) ||
        (st = const_i64(c, out, "shape", od, (size_t)r, false, &s2)) ||
        (st = node(c, "Reshape", (const char *[]){xn, s1}, 2, x2, NULL, 0)) ||
        (st = node(c, "MatMul", (const char *[]){x2, yn}, 2, p2, NULL, 0)))
        return st;
    return node(c, "Reshape", (const char *[]){p2, s2}, 2, out, NULL, 0);
}

static sy_status *translate_op(tx *c, fb_table op)
{
    uint32_t opc = fb_u32(&c->r, op, OP_OPCODE_INDEX, 0, "opcode_index");
    fb_vec ins = fb_vector(&c->r, op, OP_INPUTS, 4, "operator inputs");
    fb_vec outs = fb_vector(&c->r, op, OP_OUTPUTS, 4, "operator outputs");
    uint8_t otype = fb_u8(&c->r, op, OP_OPTIONS_TYPE, 0, "builtin_options_type");
    CHECK_FB(c);
    if (opc >= c->n_codes)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: operator #%u uses opcode_index %u, but the model has %u "
                                "operator codes", c->where, c->oi, opc, c->n_codes);
    int32_t code = c->codes[opc];
    const char *nm = tfl_op_name(code);
    c->opname = *nm ? nm : "an unknown builtin code";
    bool known = code == OP_ADD || code == OP_AVERAGE_POOL_2D || code == OP_CONCATENATION || code == OP_CONV_2D ||
                 code == OP_DEPTHWISE_CONV_2D || code == OP_FULLY_CONNECTED || code == OP_MAX_POOL_2D ||
                 code == OP_MUL || code == OP_RELU || code == OP_RELU_N1_TO_1 || code == OP_RELU6 ||
                 code == OP_RESHAPE || code == OP_SOFTMAX || code == OP_PAD || code == OP_TRANSPOSE ||
                 code == OP_MEAN || code == OP_SUB || code == OP_DIV || code == OP_SQUEEZE ||
                 code == OP_STRIDED_SLICE || code == OP_SLICE || code == OP_SUM || code == OP_ABS ||
                 code == OP_TANH || code == OP_LOGISTIC || code == OP_BATCH_MATMUL;
    if (!known)
        return sy_status_create(SY_ERR_UNSUPPORTED,
                                "%s: operator #%u (%s, builtin code %d) has no ONNX translation for training (the "
                                "translated operators are listed in docs/training.md)",
                                c->where, c->oi, c->opname, (int)code);
    opts p = {.d = tfl_op_desc_of(code)};
    if (otype) {
        if (!p.d || otype != p.d->options_type)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s) carries builtin options of type %u",
                                    c->where, c->oi, c->opname, otype);
        p.o = fb_subtable(&c->r, op, OP_OPTIONS, "builtin_options");
        CHECK_FB(c);
    }
    opio io = {.nin = ins.len};
    if (outs.len != 1)
        return refuse(c, "%u outputs (one is translated)", outs.len);
    if (ins.len < 1 || ins.len > 8)
        return refuse(c, "%u inputs", ins.len);
    for (uint32_t k = 0; k < ins.len; k++) {
        io.in[k] = fb_vec_i32(&c->r, ins, k);
        CHECK_FB(c);
        if (io.in[k] != -1 && !tensor_ok(c, io.in[k]))
            return refuse(c, "input %u is tensor %d, out of range", k, io.in[k]);
        bool biased = code == OP_FULLY_CONNECTED || code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D;
        if (io.in[k] == -1 && !(k == 2 && biased)) /* only a bias may be omitted */
            return refuse(c, "input %u is omitted", k);
    }
    if (io.nin == 3 && io.in[2] == -1)
        io.nin = 2; /* no bias */
    io.out = fb_vec_i32(&c->r, outs, 0);
    CHECK_FB(c);
    if (!tensor_ok(c, io.out))
        return refuse(c, "output tensor %d is out of range", io.out);
    tinfo *y = &c->t[io.out];
    if (y->available)
        return refuse(c, "output tensor #%d '%s' is a graph input, a constant or written twice", io.out, y->vname);
    if (y->type != TT_FLOAT32)
        return refuse(c, "output tensor #%d '%s' is %s", io.out, y->vname, type_name(y->type));
    sy_status *st;
    switch (code) {
    case OP_CONV_2D: st = t_conv(c, &io, &p, false); break;
    case OP_DEPTHWISE_CONV_2D: st = t_conv(c, &io, &p, true); break;
    case OP_MAX_POOL_2D: st = t_pool(c, &io, &p, true); break;
    case OP_AVERAGE_POOL_2D: st = t_pool(c, &io, &p, false); break;
    case OP_FULLY_CONNECTED: st = t_fc(c, &io, &p); break;
    case OP_ADD: st = t_binary(c, &io, &p, "Add"); break;
    case OP_SUB: st = t_binary(c, &io, &p, "Sub"); break;
    case OP_MUL: st = t_binary(c, &io, &p, "Mul"); break;
    case OP_DIV: st = t_binary(c, &io, &p, "Div"); break;
    case OP_RELU:
    case OP_RELU6:
    case OP_RELU_N1_TO_1:
    case OP_ABS:
    case OP_TANH:
    case OP_LOGISTIC: st = t_unary(c, &io, code); break;
    case OP_BATCH_MATMUL: st = t_batch_matmul(c, &io, &p); break;
    case OP_RESHAPE: st = t_reshape(c, &io); break;
    case OP_SQUEEZE: st = t_squeeze(c, &io, &p); break;
    case OP_CONCATENATION: st = t_concat(c, &io, &p); break;
    case OP_SOFTMAX: st = t_softmax(c, &io, &p); break;
    case OP_PAD: st = t_pad(c, &io); break;
    case OP_TRANSPOSE: st = t_transpose(c, &io); break;
    case OP_MEAN: st = t_reduce(c, &io, &p, true); break;
    case OP_SUM: st = t_reduce(c, &io, &p, false); break;
    case OP_SLICE: st = t_slice(c, &io); break;
    default: st = t_strided_slice(c, &io, &p); break;
    }
    if (!st && fb_failed(&c->r))
        st = corrupt(c);
    if (!st)
        y->available = true;
    return st;
}

/* The subgraph `want` names (train_tflite.h; the float and the int8
 * translations both choose with it): a signature key first, so a signature
 * called "1" is found by its name, then an index. `index` >= 0 (the
 * export's, from the artifacts) is taken as it is. */
sy_status *tr_tflite_pick_subgraph(const uint8_t *data, size_t size, const char *where, const char *want,
                                   int64_t index, uint32_t *out)
{
    *out = 0;
    struct {
        fb_reader r;
        const char *where;
    } cc = {.where = where}, *c = &cc;
    fb_init(&c->r, data, size);
    fb_table root = fb_root(&c->r);
    fb_vec sgs = fb_vector(&c->r, root, MODEL_SUBGRAPHS, 4, "subgraphs");
    if (fb_failed(&c->r))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", where, c->r.err);
    const uint32_t n_sgs = sgs.len;
    if (!n_sgs)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: the model has no subgraph", where);
    if (index >= 0) {
        if (index >= n_sgs)
            return sy_status_create(SY_ERR_NOT_FOUND, "%s: subgraph %lld is out of range: the model has %u "
                                    "subgraph%s (0 to %u)", c->where, (long long)index, n_sgs, n_sgs == 1 ? "" : "s",
                                    n_sgs - 1);
        *out = (uint32_t)index;
        return NULL;
    }
    if (!want || !*want)
        return NULL;
    fb_vec sigs = fb_vector(&c->r, root, MODEL_SIGNATURE_DEFS, 4, "signature_defs");
    if (fb_failed(&c->r))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", where, c->r.err);
    char known[400];
    size_t kl = 0;
    known[0] = 0;
    for (uint32_t i = 0; i < sigs.len; i++) {
        fb_table sd = fb_vec_table(&c->r, sigs, i, "signature_def");
        const char *key = fb_string(&c->r, sd, SIG_KEY, NULL, "signature_key");
        uint32_t idx = fb_u32(&c->r, sd, SIG_SUBGRAPH_INDEX, 0, "signature subgraph_index");
        if (fb_failed(&c->r))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", where, c->r.err);
        if (!key)
            continue;
        if (!strcmp(key, want)) {
            if (idx >= n_sgs)
                return sy_status_create(SY_ERR_INVALID_MODEL, "%s: signature '%s' names subgraph %u, but the model "
                                        "has %u subgraph%s", c->where, key, idx, n_sgs, n_sgs == 1 ? "" : "s");
            *out = idx;
            return NULL;
        }
        if (kl < sizeof known - 1) { /* the names listed in a refusal, cut short past the buffer */
            int k = snprintf(known + kl, sizeof known - kl, "%s'%s' (subgraph %u)", kl ? ", " : "", key, idx);
            if (k > 0)
                kl = kl + (size_t)k < sizeof known ? kl + (size_t)k : sizeof known - 1;
        }
    }
    bool digits = strlen(want) <= 9;
    for (const char *q = want; digits && *q; q++)
        digits = *q >= '0' && *q <= '9';
    if (digits) {
        unsigned long idx = strtoul(want, NULL, 10);
        if (idx >= n_sgs)
            return sy_status_create(SY_ERR_NOT_FOUND, "%s: subgraph %lu is out of range: the model has %u "
                                    "subgraph%s (0 to %u)", c->where, idx, n_sgs, n_sgs == 1 ? "" : "s", n_sgs - 1);
        *out = (uint32_t)idx;
        return NULL;
    }
    return sy_status_create(SY_ERR_NOT_FOUND, "%s: no subgraph '%s': %s%s; give a signature name or an index from 0 "
                            "to %u", c->where, want, kl ? "the model's signatures are " : "the model has no signatures",
                            known, n_sgs - 1);
}

static sy_status *translate(tx *c, const char *subgraph, int64_t index)
{
    fb_table root = fb_root(&c->r);
    CHECK_FB(c);
    uint32_t version = fb_u32(&c->r, root, MODEL_VERSION, 0, "model version");
    fb_vec sgs = fb_vector(&c->r, root, MODEL_SUBGRAPHS, 4, "subgraphs");
    fb_vec codes = fb_vector(&c->r, root, MODEL_OPCODES, 4, "operator_codes");
    c->buffers = fb_vector(&c->r, root, MODEL_BUFFERS, 4, "buffers");
    CHECK_FB(c);
    if (version != 3)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: TFLite schema version %u (version 3 is translated)", c->where,
                                version);
    if (!sgs.len)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: the model has no subgraph", c->where);
    c->n_codes = codes.len;
    c->codes = tl_alloc(&c->m->pl, (codes.len ? codes.len : 1) * sizeof *c->codes);
    if (!c->codes)
        return oom();
    for (uint32_t i = 0; i < codes.len; i++) {
        fb_table t = fb_vec_table(&c->r, codes, i, "operator code");
        int8_t dep = fb_i8(&c->r, t, OPC_DEPRECATED_CODE, 0, "deprecated_builtin_code");
        int32_t code = fb_i32(&c->r, t, OPC_BUILTIN_CODE, 0, "builtin_code");
        CHECK_FB(c);
        c->codes[i] = dep > code ? dep : code;
    }
    sy_status *st = tr_tflite_pick_subgraph(c->r.p, c->r.n, c->where, subgraph, index, &c->sg);
    if (st)
        return st;
    c->m->subgraph = c->sg;
    fb_table sg = fb_vec_table(&c->r, sgs, c->sg, "subgraph");
    fb_vec vin = fb_vector(&c->r, sg, SG_INPUTS, 4, "subgraph inputs");
    fb_vec vout = fb_vector(&c->r, sg, SG_OUTPUTS, 4, "subgraph outputs");
    fb_vec vops = fb_vector(&c->r, sg, SG_OPERATORS, 4, "subgraph operators");
    CHECK_FB(c);
    st = read_tensors(c, sg);
    if (st)
        return st;
    for (uint32_t i = 0; i < vin.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vin, i);
        CHECK_FB(c);
        if (!tensor_ok(c, ti))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph input %u is tensor %d, out of range", c->where, i,
                                    ti);
        tinfo *t = &c->t[ti];
        if (t->data)
            continue; /* a constant listed as an input stays a constant */
        if (t->available)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph input '%s' is listed twice", c->where, t->vname);
        t->available = true;
        if ((st = sy_model_writer_add_input(c->w, t->vname, SY_DT_FLOAT32, t->rank, t->dims)))
            return st;
    }
    for (uint32_t i = 0; i < vops.len; i++) {
        c->oi = i;
        fb_table op = fb_vec_table(&c->r, vops, i, "operator");
        CHECK_FB(c);
        if ((st = translate_op(c, op)))
            return st;
    }
    if (!vout.len)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: the model has no output", c->where);
    for (uint32_t i = 0; i < vout.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vout, i);
        CHECK_FB(c);
        if (!tensor_ok(c, ti) || !c->t[ti].available || c->t[ti].data)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph output %u (tensor %d) is not an operator's "
                                    "output", c->where, i, ti);
        if ((st = sy_model_writer_add_output(c->w, c->t[ti].vname, SY_DT_FLOAT32, c->t[ti].rank, c->t[ti].dims)))
            return st;
    }
    return NULL;
}

/* the subgraph by name (index < 0) or by index */
static sy_status *translate_model(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                                  int64_t index, tr_tfl_model *out)
{
    memset(out, 0, sizeof *out);
    if (!tr_tflite_is_tflite(data, size))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: not a TFLite model (no \"TFL3\" identifier at byte 4)",
                                where);
    tx c = {.where = where, .m = out};
    fb_init(&c.r, data, size);
    sy_status *st = sy_model_writer_create(13, &c.w);
    if (!st)
        st = sy_model_writer_set_producer(c.w, "switchyard train (from TFLite)");
    if (!st)
        st = translate(&c, subgraph, index);
    if (!st && out->pl.oom)
        st = oom();
    void *buf = NULL;
    if (!st)
        st = sy_model_writer_pack(c.w, &buf, &out->onnx_len);
    out->onnx = buf;
    sy_model_writer_release(c.w);
    return st;
}

sy_status *tr_tflite_translate(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                               tr_tfl_model *out)
{
    return translate_model(data, size, where, subgraph, -1, out);
}

void tr_tflite_model_free(tr_tfl_model *m)
{
    if (!m)
        return;
    sy_tools_free(m->onnx);
    tl_pool_free(&m->pl);
    memset(m, 0, sizeof *m);
}

/* ---- export ----------------------------------------------------------------------- */

sy_status *tr_tflite_export(const char *src, uint32_t subgraph, const char *path, size_t n,
                            const char *const *names, const float *const *values, const size_t *nbytes)
{
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(src, &data, &size);
    if (st)
        return st;
    tr_tfl_model m;
    st = translate_model(data, size, src, NULL, subgraph, &m);
    float *tmp = NULL;
    for (size_t k = 0; !st && k < n; k++) {
        const tr_tfl_param *p = NULL;
        for (size_t i = 0; i < m.n_params && !p; i++)
            if (!strcmp(m.params[i].name, names[k]))
                p = &m.params[i];
        if (!p) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: trained tensor '%s' is not a constant of the TFLite model",
                                  src, names[k]);
            break;
        }
        if (p->nbytes != nbytes[k] || p->offset + p->nbytes > size) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: trained tensor '%s' has %zu bytes, its buffer %llu", src,
                                  names[k], nbytes[k], (unsigned long long)p->nbytes);
            break;
        }
        if (p->shared) {
            st = sy_status_create(SY_ERR_UNSUPPORTED, "%s: trained tensor '%s' shares buffer %u with another tensor, "
                                  "so its trained values cannot be written back alone", src, names[k], p->buffer);
            break;
        }
        free(tmp);
        if (!(tmp = malloc(nbytes[k] ? nbytes[k] : 1))) {
            st = oom();
            break;
        }
        const float *v = values[k];
        if (p->layout == TR_TFL_OHWI) { /* [O,I,H,W] -> [O,H,W,I] */
            int64_t O = p->dims[0], H = p->dims[1], W = p->dims[2], I = p->dims[3];
            for (int64_t o = 0; o < O; o++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t w = 0; w < W; w++)
                        for (int64_t i = 0; i < I; i++)
                            tmp[((o * H + h) * W + w) * I + i] = v[((o * I + i) * H + h) * W + w];
        } else if (p->layout == TR_TFL_1HWC) { /* [C,1,H,W] -> [1,H,W,C] */
            int64_t H = p->dims[1], W = p->dims[2], C = p->dims[3];
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    for (int64_t ch = 0; ch < C; ch++)
                        tmp[(h * W + w) * C + ch] = v[(ch * H + h) * W + w];
        } else {
            memcpy(tmp, v, nbytes[k]);
        }
        /* FlatBuffers store little-endian floats, as the host does */
        memcpy(data + p->offset, tmp, nbytes[k]);
    }
    free(tmp);
    tr_tflite_model_free(&m);
    if (!st)
        st = tl_write_atomic(path, data, size, NULL, 0);
    free(data);
    return st;
}
