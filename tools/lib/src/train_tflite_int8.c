/* An int8 (fully quantized) TFLite model as an ONNX QDQ model for QAS-INT8
 * training (train_tflite.h; docs/training.md, "TFLite models as QAS-INT8
 * input").
 *
 * The ONNX written is the QDQ form `switchyard quantize` writes and
 * find_layers (train_qas.c) takes: every int8 activation tensor is int8
 * codes made by a QuantizeLinear of its scale and zero point and read
 * through a DequantizeLinear; a FULLY_CONNECTED's int8 weight [O, K] and
 * int32 bias are initializers read through DequantizeLinear into
 * Gemm(transB = 1); a fused RELU is a Relu before the output's
 * QuantizeLinear (TFLite's clamp to [z_y, 127] is QAS's max(ȳ, z_y)); a
 * CONV_2D's OHWI filter is an OIHW initializer between the NHWC
 * Transposes (DEPTHWISE_CONV_2D's [1, H, W, C·m] a [C·m, 1, H, W] one of
 * group C; MAX_POOL_2D and AVERAGE_POOL_2D between them too); an int8 ADD
 * or CONCATENATION reads each input through its own DequantizeLinear and
 * writes the output's QuantizeLinear; an int8 SOFTMAX (scale 1/256, zero point -128) is Softmax
 * on the dequantized logits and a QuantizeLinear. Anything else is refused
 * naming the operator or tensor and why. The subgraph translated is chosen
 * as the float translation chooses (tr_tflite_pick_subgraph): 0 unless a
 * signature name or an index is given. */
#include "train_tflite.h"
#include "tflite_fb.h"
#include "tflite_ops.h"
#include "tl_files.h"

#include <switchyard/sy_tools.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* schema.fbs field ids */
enum { MODEL_VERSION = 0, MODEL_OPCODES = 1, MODEL_SUBGRAPHS = 2, MODEL_BUFFERS = 4 };
enum { OPC_DEPRECATED_CODE = 0, OPC_BUILTIN_CODE = 3 };
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3 };
enum { TENSOR_SHAPE = 0, TENSOR_TYPE = 1, TENSOR_BUFFER = 2, TENSOR_NAME = 3, TENSOR_QUANT = 4, TENSOR_SPARSITY = 6 };
enum { Q_SCALE = 2, Q_ZERO_POINT = 3, Q_DIMENSION = 6 };
enum { OP_OPCODE_INDEX = 0, OP_INPUTS = 1, OP_OUTPUTS = 2, OP_OPTIONS_TYPE = 3, OP_OPTIONS = 4 };
enum { BUF_DATA = 0, BUF_OFFSET = 1, BUF_SIZE = 2 };
/* TensorType */
enum { TT_FLOAT32 = 0, TT_INT32 = 2, TT_UINT8 = 3, TT_INT64 = 4, TT_INT16 = 7, TT_INT8 = 9 };
/* BuiltinOperator codes translated here */
enum {
    OP_ADD = 0,
    OP_AVERAGE_POOL_2D = 1,
    OP_CONCATENATION = 2,
    OP_CONV_2D = 3,
    OP_DEPTHWISE_CONV_2D = 4,
    OP_DEQUANTIZE = 6,
    OP_FULLY_CONNECTED = 9,
    OP_MAX_POOL_2D = 17,
    OP_RESHAPE = 22,
    OP_SOFTMAX = 25,
    OP_QUANTIZE = 114
};
enum { ACT_NONE = 0, ACT_RELU = 1 };

#define MAX_RANK 8

typedef struct qt {
    char *vname;          /* the ONNX value name */
    int8_t type;          /* TensorType */
    int32_t rank;
    int64_t dims[MAX_RANK];
    uint32_t buffer;
    const uint8_t *data;  /* constant bytes (NULL: a runtime tensor) */
    size_t nbytes;
    uint64_t offset;
    uint32_t nq;          /* scales (0: not quantized) */
    const float *scale;   /* nq, in the pool */
    const int64_t *zp;    /* nq */
    int32_t qdim;         /* quantized_dimension */
    bool available;
    const char *dq;       /* the DequantizeLinear of an int8 activation, once made */
    const char *qs, *qz;  /* its scale and zero point initializers, once made */
    bool init;            /* a constant made an initializer */
} qt;

typedef struct qx {
    fb_reader r;
    const char *where;
    tr_tfl_model *m;
    sy_model_writer *w;
    qt *t;
    uint32_t nt;
    fb_vec buffers;
    int32_t *codes;
    uint32_t n_codes;
    char **names;
    size_t n_names, cap_names;
    size_t cap_params;
    uint32_t oi;
    const char *opname;
    unsigned seq;
} qx;

static sy_status *oom(void) { return sy_status_create(SY_ERR_OUT_OF_MEMORY, "int8 TFLite translation: out of memory"); }

static sy_status *corrupt(qx *c)
{
    return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", c->where, c->r.err);
}

#define CHECK_FB(c)                                                                                                \
    do {                                                                                                           \
        if (fb_failed(&(c)->r))                                                                                    \
            return corrupt(c);                                                                                     \
    } while (0)

static sy_status *refuse(qx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static sy_status *refuse(qx *c, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return sy_status_create(SY_ERR_UNSUPPORTED, "%s: operator #%u (%s): %s", c->where, c->oi, c->opname, buf);
}

static sy_status *bad_tensor(qx *c, uint32_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static sy_status *bad_tensor(qx *c, uint32_t i, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return sy_status_create(SY_ERR_UNSUPPORTED, "%s: tensor #%u '%s': %s", c->where, i, c->t[i].vname, buf);
}

static const char *type_name(int t)
{
    const char *n = tfl_ttype_name(t);
    return n ? n : "an unknown TensorType";
}

/* ---- names ---------------------------------------------------------------- */

static bool name_used(const qx *c, const char *s)
{
    for (size_t i = 0; i < c->n_names; i++)
        if (!strcmp(c->names[i], s))
            return true;
    return false;
}

static char *claim(qx *c, char *s)
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

static const char *fresh(qx *c, const char *base, const char *tag)
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

/* ---- reading ---------------------------------------------------------------- */

static sy_status *buffer_bytes(qx *c, uint32_t bi, uint32_t ti, qt *t)
{
    if (bi >= c->buffers.len)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u refers to buffer %u, but the model has %u buffers",
                                c->where, ti, bi, c->buffers.len);
    fb_table b = fb_vec_table(&c->r, c->buffers, bi, "buffer");
    fb_vec d = fb_vector(&c->r, b, BUF_DATA, 1, "buffer data");
    uint64_t off = fb_u64(&c->r, b, BUF_OFFSET, 0, "buffer offset");
    uint64_t size = fb_u64(&c->r, b, BUF_SIZE, 0, "buffer size");
    CHECK_FB(c);
    if (off > 1) {
        if (off > c->r.n || size > c->r.n - off)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: buffer %u (tensor #%u) at offset "
                                    "%llu size %llu runs past the end of the file (%zu bytes)", c->where, bi, ti,
                                    (unsigned long long)off, (unsigned long long)size, c->r.n);
        t->data = c->r.p + off;
        t->nbytes = (size_t)size;
        t->offset = off;
    } else if (d.pos && d.len) {
        t->data = fb_vec_bytes(&c->r, d);
        t->nbytes = d.len;
        t->offset = d.pos;
    }
    return NULL;
}

static size_t elem_size(int type)
{
    return type == TT_FLOAT32 || type == TT_INT32 ? 4 : type == TT_INT64 ? 8 : type == TT_INT16 ? 2 : 1;
}

/* The quantization of tensor i: its scales and zero points read and checked
 * (every scale finite and positive, as many zero points as scales, the zero
 * points in the type's range, a per-channel dimension inside the shape). */
static sy_status *read_quant(qx *c, uint32_t i, fb_table t)
{
    qt *ti = &c->t[i];
    fb_table q = fb_subtable(&c->r, t, TENSOR_QUANT, "tensor quantization");
    fb_vec sc = fb_vector(&c->r, q, Q_SCALE, 4, "quantization scale");
    fb_vec zv = fb_vector(&c->r, q, Q_ZERO_POINT, 8, "quantization zero_point");
    int32_t qd = fb_i32(&c->r, q, Q_DIMENSION, 0, "quantized_dimension");
    CHECK_FB(c);
    ti->nq = sc.len;
    ti->qdim = qd;
    if (!sc.len)
        return NULL;
    float *s = tl_alloc(&c->m->pl, sc.len * sizeof *s);
    int64_t *z = tl_alloc(&c->m->pl, sc.len * sizeof *z);
    if (!s || !z)
        return oom();
    if (zv.len != sc.len)
        return bad_tensor(c, i, "%u scales but %u zero points (one zero point a scale)", sc.len, zv.len);
    for (uint32_t k = 0; k < sc.len; k++) {
        s[k] = fb_vec_f32(&c->r, sc, k);
        z[k] = fb_vec_i64(&c->r, zv, k);
        CHECK_FB(c);
        if (!isfinite(s[k]) || !(s[k] > 0))
            return bad_tensor(c, i, "scale %u is %g: a scale must be finite and positive", k, (double)s[k]);
    }
    ti->scale = s;
    ti->zp = z;
    if (sc.len > 1 && (qd < 0 || qd >= ti->rank || ti->dims[qd] != (int64_t)sc.len))
        return bad_tensor(c, i, "%u scales with quantized_dimension %d of a tensor of rank %d: per-channel scales "
                          "need one scale per index of that dimension", sc.len, qd, ti->rank);
    int64_t lo = ti->type == TT_INT8 ? -128 : 0, hi = ti->type == TT_INT8 ? 127 : 0;
    for (uint32_t k = 0; k < sc.len; k++)
        if (ti->type == TT_INT8 || ti->type == TT_INT32)
            if (z[k] < lo || z[k] > hi)
                return bad_tensor(c, i, "zero point %lld (index %u) is out of range for %s (%s)", (long long)z[k], k,
                                  type_name(ti->type), ti->type == TT_INT8 ? "-128 to 127" : "an int32 bias has 0");
    return NULL;
}

static sy_status *read_tensors(qx *c, fb_table sg)
{
    fb_vec tv = fb_vector(&c->r, sg, SG_TENSORS, 4, "subgraph tensors");
    CHECK_FB(c);
    if (tv.len > (1u << 24))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: subgraph %u has %u tensors", c->where, c->m->subgraph,
                                tv.len);
    c->nt = tv.len;
    c->t = tl_alloc(&c->m->pl, (tv.len ? tv.len : 1) * sizeof *c->t);
    if (!c->t)
        return oom();
    memset(c->t, 0, (tv.len ? tv.len : 1) * sizeof *c->t);
    bool any_int8 = false;
    for (uint32_t i = 0; i < tv.len; i++) {
        qt *ti = &c->t[i];
        fb_table t = fb_vec_table(&c->r, tv, i, "tensor");
        const char *nm = fb_string(&c->r, t, TENSOR_NAME, NULL, "tensor name");
        fb_vec shape = fb_vector(&c->r, t, TENSOR_SHAPE, 4, "tensor shape");
        ti->type = fb_i8(&c->r, t, TENSOR_TYPE, 0, "tensor type");
        ti->buffer = fb_u32(&c->r, t, TENSOR_BUFFER, 0, "tensor buffer");
        bool sparse = fb_has(&c->r, t, TENSOR_SPARSITY);
        CHECK_FB(c);
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
            return bad_tensor(c, i, "a sparse tensor is not translated");
        if (shape.len > MAX_RANK)
            return bad_tensor(c, i, "rank %u (at most %d is translated)", shape.len, MAX_RANK);
        ti->rank = (int32_t)shape.len;
        int64_t count = 1;
        for (uint32_t d = 0; d < shape.len; d++) {
            int32_t x = fb_vec_i32(&c->r, shape, d);
            CHECK_FB(c);
            if (x < 0)
                return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u '%s' has dimension %u = %d", c->where,
                                        i, vn, d, x);
            ti->dims[d] = x;
            if (__builtin_mul_overflow(count, (int64_t)x, &count))
                return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u '%s' declares more than 2^63 elements",
                                        c->where, i, vn);
        }
        sy_status *st = buffer_bytes(c, ti->buffer, i, ti);
        if (!st)
            st = read_quant(c, i, t);
        if (st)
            return st;
        if (ti->data && (uint64_t)count * elem_size(ti->type) != ti->nbytes)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: constant tensor #%u '%s' (%s, %lld elements) has a "
                                    "buffer of %zu bytes", c->where, i, vn, type_name(ti->type), (long long)count,
                                    ti->nbytes);
        ti->available = ti->data != NULL;
        if (ti->type == TT_UINT8)
            return bad_tensor(c, i, "uint8 (asymmetric uint8 quantization) is not translated: QAS-INT8 takes int8 "
                              "models (convert with int8 inference input/output types)");
        if (ti->type == TT_INT16)
            return bad_tensor(c, i, "int16 (16x8 quantization) is not translated: QAS-INT8 takes int8 activations");
        if (ti->type == TT_INT8 && !ti->nq)
            return bad_tensor(c, i, "int8 without quantization parameters (no scale): the codes have no meaning");
        if (ti->type == TT_INT8 && !ti->data && ti->nq != 1)
            return bad_tensor(c, i, "an int8 activation with %u scales: activations are quantized per tensor", ti->nq);
        if (ti->type == TT_FLOAT32 && ti->nq)
            return bad_tensor(c, i, "float32 with quantization parameters is not translated");
        if (ti->type != TT_FLOAT32 && ti->type != TT_INT8 && !(ti->data && (ti->type == TT_INT32 ||
                                                                            ti->type == TT_INT64)))
            return bad_tensor(c, i, "%s is not translated (float32 and int8 tensors, int32 constants)",
                              type_name(ti->type));
        any_int8 |= ti->type == TT_INT8;
    }
    if (!any_int8)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: a float TFLite model (no int8 tensor): QAS-INT8 trains "
                                "int8 codes and needs an int8 (fully quantized) TFLite model; a float model trains "
                                "with --mode fp32", c->where);
    return NULL;
}

/* ---- initializers and nodes ------------------------------------------------ */

static bool tensor_ok(const qx *c, int32_t ti) { return ti >= 0 && (uint32_t)ti < c->nt; }

static int64_t numel_of(const qt *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

static sy_status *add_init(qx *c, const char *name, sy_dtype dt, int32_t rank, const int64_t *dims, const void *data,
                           size_t nbytes)
{
    sy_tensor v = {.struct_size = sizeof v, .dtype = dt, .rank = rank, .data = (void *)data, .nbytes = nbytes};
    for (int32_t d = 0; d < rank; d++)
        v.dims[d] = dims[d];
    return sy_model_writer_add_initializer(c->w, name, &v);
}

static sy_status *node(qx *c, const char *op, const char *const *in, size_t nin, const char *out,
                       const sy_model_attr *attrs, size_t nattr)
{
    char name[160];
    snprintf(name, sizeof name, "%s_%u_%s%u", c->opname, c->oi, op, c->seq++);
    return sy_model_writer_add_node(c->w, NULL, op, name, in, nin, &out, 1, attrs, nattr);
}

static sy_model_attr int_attr(const char *name, int64_t v)
{
    return (sy_model_attr){.name = name, .type = SY_MODEL_ATTR_INT, .i = v};
}
static sy_model_attr ints_attr(const char *name, const int64_t *v, size_t n)
{
    return (sy_model_attr){.name = name, .type = SY_MODEL_ATTR_INTS, .ints = v, .n = n};
}

/* the scale and zero point initializers of a per-tensor int8 activation */
static sy_status *act_qparams(qx *c, int32_t ti)
{
    qt *t = &c->t[ti];
    if (t->qs)
        return NULL;
    const char *s = fresh(c, t->vname, "scale"), *z = fresh(c, t->vname, "zero_point");
    if (!s || !z)
        return oom();
    float sv = t->scale[0];
    int8_t zv = (int8_t)t->zp[0];
    sy_status *st = add_init(c, s, SY_DT_FLOAT32, 0, NULL, &sv, 4);
    if (!st)
        st = add_init(c, z, SY_DT_INT8, 0, NULL, &zv, 1);
    t->qs = s, t->qz = z;
    return st;
}

/* The float value an operator reads for an activation: a float tensor's own
 * value, an int8 tensor's DequantizeLinear (one a tensor). */
static sy_status *check_in(qx *c, int32_t ti, bool want_int8)
{
    if (!tensor_ok(c, ti))
        return refuse(c, "input tensor %d is out of range (the subgraph has %u tensors)", ti, c->nt);
    qt *t = &c->t[ti];
    if (t->data)
        return refuse(c, "input tensor #%d '%s' is a constant where an activation is read", ti, t->vname);
    if (!t->available)
        return refuse(c, "input tensor #%d '%s' is not a graph input or an earlier operator's output", ti, t->vname);
    if (want_int8 && t->type != TT_INT8)
        return refuse(c, "input tensor #%d '%s' is %s: the operator is translated with int8 activations", ti,
                      t->vname, type_name(t->type));
    return NULL;
}

static sy_status *read_act(qx *c, int32_t ti, bool want_int8, const char **name)
{
    sy_status *st = check_in(c, ti, want_int8);
    if (st)
        return st;
    qt *t = &c->t[ti];
    if (t->type == TT_FLOAT32) {
        *name = t->vname;
        return NULL;
    }
    if (!t->dq) {
        if ((st = act_qparams(c, ti)))
            return st;
        const char *d = fresh(c, t->vname, "dq");
        if (!d)
            return oom();
        if ((st = node(c, "DequantizeLinear", (const char *[]){t->vname, t->qs, t->qz}, 3, d, NULL, 0)))
            return st;
        t->dq = d;
    }
    *name = t->dq;
    return NULL;
}

/* the output tensor checked: int8, per tensor (read_tensors), the shape given */
static sy_status *check_out(qx *c, int32_t out, const int64_t *dims, int32_t rank)
{
    const qt *t = &c->t[out];
    if (t->type != TT_INT8)
        return refuse(c, "output tensor #%d '%s' is %s: the operator is translated with int8 outputs", out, t->vname,
                      type_name(t->type));
    bool same = t->rank == rank;
    for (int32_t d = 0; same && d < rank; d++)
        same = t->dims[d] == dims[d];
    return same ? NULL : refuse(c, "output tensor #%d '%s' does not have the shape the operator computes", out,
                                t->vname);
}

/* out's codes: QuantizeLinear of the float value `f` with out's scale and zero point */
static sy_status *quantize_to(qx *c, int32_t out, const char *f)
{
    sy_status *st = act_qparams(c, out);
    if (st)
        return st;
    const qt *t = &c->t[out];
    return node(c, "QuantizeLinear", (const char *[]){f, t->qs, t->qz}, 3, t->vname, NULL, 0);
}

static sy_status *add_param(qx *c, int32_t ti, int layout)
{
    const qt *t = &c->t[ti];
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
    memset(p, 0, sizeof *p);
    p->name = t->vname;
    p->tensor = ti;
    p->buffer = t->buffer;
    p->offset = t->offset;
    p->nbytes = t->nbytes;
    p->layout = layout;
    p->type = t->type;
    p->rank = t->rank;
    memcpy(p->dims, t->dims, sizeof p->dims);
    for (uint32_t k = 0; k < c->nt; k++)
        p->shared |= (int32_t)k != ti && c->t[k].buffer == t->buffer && c->t[k].data;
    return NULL;
}

/* A constant int8 weight (FULLY_CONNECTED [O, K] as it is; CONV_2D's OHWI
 * filter as OIHW; DEPTHWISE_CONV_2D's [1, H, W, C·m] as [C·m, 1, H, W])
 * read through DequantizeLinear: symmetric, per tensor or per output
 * channel (quantized_dimension 0; 3 for a depthwise filter). *dq its
 * dequantized value. */
static sy_status *weight(qx *c, int32_t wi, int layout, const char **dq)
{
    if (!tensor_ok(c, wi))
        return refuse(c, "the weights are tensor %d, out of range", wi);
    qt *w = &c->t[wi];
    if (!w->data)
        return refuse(c, "the weights (tensor #%d '%s') are not a constant", wi, w->vname);
    if (w->type != TT_INT8)
        return refuse(c, "the weights (tensor #%d '%s') are %s: int8 weights are translated", wi, w->vname,
                      type_name(w->type));
    if (w->init)
        return refuse(c, "the weights (tensor #%d '%s') are read by two operators", wi, w->vname);
    const int32_t odim = layout == TR_TFL_1HWC ? 3 : 0;
    const int64_t O = w->dims[odim];
    if (w->nq != 1 && !(w->qdim == odim && w->nq == (uint32_t)O))
        return refuse(c, "the weights (tensor #%d '%s') have %u scales along dimension %d: per-tensor or per-output-"
                      "channel (quantized_dimension %d) weights are translated", wi, w->vname, w->nq, w->qdim, odim);
    for (uint32_t k = 0; k < w->nq; k++)
        if (w->zp[k] != 0)
            return refuse(c, "the weights (tensor #%d '%s') are asymmetric (zero point %lld of channel %u): QAS takes "
                          "symmetric int8 weights, W = s_W·W̄", wi, w->vname, (long long)w->zp[k], k);
    sy_status *st = NULL;
    int64_t d4[4];
    if (layout == TR_TFL_1HWC) { /* [1,H,W,C] -> [C,1,H,W] */
        int64_t H = w->dims[1], W = w->dims[2];
        int8_t *dst = malloc(w->nbytes ? w->nbytes : 1);
        if (!dst)
            return oom();
        for (int64_t h = 0; h < H; h++)
            for (int64_t x = 0; x < W; x++)
                for (int64_t k = 0; k < O; k++)
                    dst[(k * H + h) * W + x] = (int8_t)w->data[(h * W + x) * O + k];
        d4[0] = O, d4[1] = 1, d4[2] = H, d4[3] = W;
        st = add_init(c, w->vname, SY_DT_INT8, 4, d4, dst, w->nbytes);
        free(dst);
    } else if (layout == TR_TFL_OHWI) { /* [O,H,W,I] -> [O,I,H,W] */
        int64_t H = w->dims[1], W = w->dims[2], I = w->dims[3];
        int8_t *dst = malloc(w->nbytes ? w->nbytes : 1);
        if (!dst)
            return oom();
        for (int64_t o = 0; o < O; o++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t x = 0; x < W; x++)
                    for (int64_t i = 0; i < I; i++)
                        dst[((o * I + i) * H + h) * W + x] = (int8_t)w->data[((o * H + h) * W + x) * I + i];
        d4[0] = O, d4[1] = I, d4[2] = H, d4[3] = W;
        st = add_init(c, w->vname, SY_DT_INT8, 4, d4, dst, w->nbytes);
        free(dst);
    } else {
        st = add_init(c, w->vname, SY_DT_INT8, w->rank, w->dims, w->data, w->nbytes);
    }
    if (st)
        return st;
    w->init = true;
    if ((st = add_param(c, wi, layout)))
        return st;
    const char *s = fresh(c, w->vname, "scale"), *z = fresh(c, w->vname, "zero_point"), *d = fresh(c, w->vname, "dq");
    if (!s || !z || !d)
        return oom();
    int8_t *zeros = calloc(w->nq, 1);
    if (!zeros)
        return oom();
    const int64_t n = w->nq;
    st = add_init(c, s, SY_DT_FLOAT32, w->nq > 1, &n, w->scale, 4 * (size_t)w->nq);
    if (!st)
        st = add_init(c, z, SY_DT_INT8, w->nq > 1, &n, zeros, w->nq);
    free(zeros);
    sy_model_attr ax = int_attr("axis", 0);
    if (!st)
        st = node(c, "DequantizeLinear", (const char *[]){w->vname, s, z}, 3, d, &ax, w->nq > 1);
    *dq = d;
    return st;
}

/* The int32 bias of O values through DequantizeLinear: its scales s_x·s_W
 * (per channel as the weights'), zero point 0. */
static sy_status *bias(qx *c, int32_t bi, int32_t xi, int32_t wi, int64_t O, const char **dq)
{
    if (!tensor_ok(c, bi))
        return refuse(c, "the bias is tensor %d, out of range", bi);
    qt *b = &c->t[bi];
    const qt *x = &c->t[xi], *w = &c->t[wi];
    if (!b->data || b->type != TT_INT32 || b->rank != 1 || b->dims[0] != O)
        return refuse(c, "the bias (tensor #%d '%s') is not a constant int32 vector of %lld values", bi, b->vname,
                      (long long)O);
    if (b->init)
        return refuse(c, "the bias (tensor #%d '%s') is read by two operators", bi, b->vname);
    if (!b->nq)
        return refuse(c, "the bias (tensor #%d '%s') has no quantization parameters (its scale is s_x·s_W)", bi,
                      b->vname);
    if (b->nq != w->nq)
        return refuse(c, "the bias (tensor #%d '%s') has %u scales, the weights %u", bi, b->vname, b->nq, w->nq);
    for (uint32_t k = 0; k < b->nq; k++) {
        double want = (double)x->scale[0] * (double)w->scale[k];
        if (fabs((double)b->scale[k] - want) > 1e-6 * want)
            return refuse(c, "the bias (tensor #%d '%s') scale %u is %g, not s_x·s_W = %g", bi, b->vname, k,
                          (double)b->scale[k], want);
    }
    sy_status *st = add_init(c, b->vname, SY_DT_INT32, 1, b->dims, b->data, b->nbytes);
    if (st)
        return st;
    b->init = true;
    if ((st = add_param(c, bi, TR_TFL_AS_IS)))
        return st;
    const char *s = fresh(c, b->vname, "scale"), *z = fresh(c, b->vname, "zero_point"), *d = fresh(c, b->vname, "dq");
    if (!s || !z || !d)
        return oom();
    int32_t *zeros = calloc(b->nq, 4);
    if (!zeros)
        return oom();
    const int64_t n = b->nq;
    st = add_init(c, s, SY_DT_FLOAT32, b->nq > 1, &n, b->scale, 4 * (size_t)b->nq);
    if (!st)
        st = add_init(c, z, SY_DT_INT32, b->nq > 1, &n, zeros, 4 * (size_t)b->nq);
    free(zeros);
    sy_model_attr ax = int_attr("axis", 0);
    if (!st)
        st = node(c, "DequantizeLinear", (const char *[]){b->vname, s, z}, 3, d, &ax, b->nq > 1);
    *dq = d;
    return st;
}

/* ---- operators ---------------------------------------------------------------- */

typedef struct opts {
    fb_table o;
    const tfl_op_desc *d;
} opts;

static int32_t opt_int(qx *c, const opts *p, const char *name)
{
    for (uint32_t k = 0; p->d && k < p->d->n_fields; k++) {
        const tfl_field *f = &p->d->fields[k];
        if (strcmp(f->name, name))
            continue;
        switch ((tfl_field_kind)f->kind) {
        case TFL_F_BOOL: return fb_u8(&c->r, p->o, f->id, (uint8_t)f->def, f->name) != 0;
        case TFL_F_I32: return fb_i32(&c->r, p->o, f->id, (int32_t)f->def, f->name);
        default: return fb_i8(&c->r, p->o, f->id, (int8_t)f->def, f->name);
        }
    }
    return 0;
}

static float opt_f32(qx *c, const opts *p, const char *name)
{
    for (uint32_t k = 0; p->d && k < p->d->n_fields; k++)
        if (!strcmp(p->d->fields[k].name, name))
            return fb_f32(&c->r, p->o, p->d->fields[k].id, (float)p->d->fields[k].def, name);
    return 0.0f;
}

enum { MAX_OP_INPUTS = 16 };

typedef struct opio {
    int32_t in[MAX_OP_INPUTS];
    uint32_t nin;
    int32_t out;
} opio;

/* the fused activation: NONE, or RELU (a Relu on the dequantized output
 * before its QuantizeLinear) */
static sy_status *fused(qx *c, int act, const char *pre, int32_t out)
{
    if (act == ACT_NONE)
        return quantize_to(c, out, pre);
    const char *r = fresh(c, c->t[out].vname, "relu");
    if (!r)
        return oom();
    sy_status *st = node(c, "Relu", &pre, 1, r, NULL, 0);
    return st ? st : quantize_to(c, out, r);
}

static sy_status *check_act(qx *c, int act)
{
    if (act == ACT_NONE || act == ACT_RELU)
        return NULL;
    const char *n = tfl_act_name(act);
    return refuse(c, "the fused activation %s is not translated for QAS-INT8 (NONE and RELU are)", n ? n : "(invalid)");
}

static sy_status *t_fc(qx *c, const opio *io, const opts *p)
{
    if (io->nin < 2)
        return refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1];
    int act = opt_int(c, p, "fused_activation_function");
    int wformat = opt_int(c, p, "weights_format");
    CHECK_FB(c);
    if (wformat != 0)
        return refuse(c, "weights_format %d (only DEFAULT is translated)", wformat);
    sy_status *st = check_act(c, act);
    if (st)
        return st;
    const char *xd = NULL, *wd = NULL, *bd = NULL;
    if ((st = read_act(c, xi, true, &xd)))
        return st;
    if (!tensor_ok(c, wi) || c->t[wi].rank != 2)
        return refuse(c, "the weights are not a matrix [O, K]");
    const qt *x = &c->t[xi], *w = &c->t[wi];
    const int64_t O = w->dims[0], K = w->dims[1];
    if (x->rank != 2 || x->dims[1] != K)
        return refuse(c, "input '%s' is not [N, %lld] (an int8 FULLY_CONNECTED is translated for a rank-2 input; "
                      "a RESHAPE before it gives one)", x->vname, (long long)K);
    if ((st = check_out(c, io->out, (const int64_t[]){x->dims[0], O}, 2)))
        return st;
    if ((st = weight(c, wi, TR_TFL_AS_IS, &wd)))
        return st;
    if (io->nin > 2 && (st = bias(c, io->in[2], xi, wi, O, &bd)))
        return st;
    const char *pre = fresh(c, c->t[io->out].vname, "f");
    if (!pre)
        return oom();
    sy_model_attr ga = int_attr("transB", 1);
    if ((st = node(c, "Gemm", (const char *[]){xd, wd, bd}, bd ? 3 : 2, pre, &ga, 1)))
        return st;
    return fused(c, act, pre, io->out);
}

static sy_status *pad_axis(qx *c, int padding, int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t *out,
                           int64_t *before, int64_t *after)
{
    if (stride < 1 || dil < 1 || k < 1 || stride > 64 || dil > 64)
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

static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

static sy_status *t_conv(qx *c, const opio *io, const opts *p, bool depthwise)
{
    if (io->nin < 2)
        return refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1];
    int padding = opt_int(c, p, "padding");
    int64_t sh = opt_int(c, p, "stride_h"), sw = opt_int(c, p, "stride_w");
    int64_t dh = opt_int(c, p, "dilation_h_factor"), dw = opt_int(c, p, "dilation_w_factor");
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    sy_status *st = check_act(c, act);
    const char *xd = NULL, *wd = NULL, *bd = "";
    if (!st)
        st = read_act(c, xi, true, &xd);
    if (st)
        return st;
    if (!tensor_ok(c, wi) || c->t[wi].rank != 4)
        return refuse(c, "the filter is not a rank-4 [O, H, W, I] tensor");
    const qt *x = &c->t[xi], *w = &c->t[wi];
    if (x->rank != 4)
        return refuse(c, "input '%s' has rank %d (4 is translated)", x->vname, x->rank);
    const int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
    const int64_t O = w->dims[depthwise ? 3 : 0], KH = w->dims[1], KW = w->dims[2];
    if (depthwise && (w->dims[0] != 1 || C < 1 || O % C))
        return refuse(c, "filter '%s' [%lld,%lld,%lld,%lld] for %lld input channels", w->vname, (long long)w->dims[0],
                      (long long)KH, (long long)KW, (long long)O, (long long)C);
    if (!depthwise && w->dims[3] != C)
        return refuse(c, "filter '%s' reads %lld channels of an input of %lld (grouped int8 convolutions are not "
                      "translated)", w->vname, (long long)w->dims[3], (long long)C);
    int64_t OH, OW, pt, pb, pl, pr;
    if ((st = pad_axis(c, padding, H, KH, sh, dh, &OH, &pt, &pb)) ||
        (st = pad_axis(c, padding, W, KW, sw, dw, &OW, &pl, &pr)) ||
        (st = check_out(c, io->out, (const int64_t[]){N, OH, OW, O}, 4)) ||
        (st = weight(c, wi, depthwise ? TR_TFL_1HWC : TR_TFL_OHWI, &wd)))
        return st;
    if (io->nin > 2 && (st = bias(c, io->in[2], xi, wi, O, &bd)))
        return st;
    const char *out = c->t[io->out].vname, *xt = fresh(c, out, "in_nchw"), *yt = fresh(c, out, "nchw"),
               *pre = fresh(c, out, "f");
    if (!xt || !yt || !pre)
        return oom();
    const int64_t k[2] = {KH, KW}, s[2] = {sh, sw}, d[2] = {dh, dw}, pads[4] = {pt, pl, pb, pr};
    sy_model_attr ca[5] = {ints_attr("kernel_shape", k, 2), ints_attr("strides", s, 2), ints_attr("dilations", d, 2),
                           ints_attr("pads", pads, 4), int_attr("group", depthwise ? C : 1)};
    sy_model_attr tin = ints_attr("perm", TO_NCHW, 4), tout = ints_attr("perm", TO_NHWC, 4);
    if ((st = node(c, "Transpose", &xd, 1, xt, &tin, 1)) ||
        (st = node(c, "Conv", (const char *[]){xt, wd, bd}, io->nin > 2 ? 3 : 2, yt, ca, 5)) ||
        (st = node(c, "Transpose", &yt, 1, pre, &tout, 1)))
        return st;
    return fused(c, act, pre, io->out);
}

static bool same_q(const qt *a, const qt *b) { return a->scale[0] == b->scale[0] && a->zp[0] == b->zp[0]; }

/* MAX_POOL_2D and AVERAGE_POOL_2D on int8 (its input's scale and zero point,
 * as TFLite's int8 kernels require: they work on the codes alone):
 * DequantizeLinear → Transpose → MaxPool | AveragePool → Transpose [→ Relu]
 * → QuantizeLinear. An AveragePool's SAME padding divides by the taps inside
 * the input (count_include_pad 0), as TFLite's does. */
static sy_status *t_pool(qx *c, const opio *io, const opts *p, bool average)
{
    int padding = opt_int(c, p, "padding");
    int64_t sh = opt_int(c, p, "stride_h"), sw = opt_int(c, p, "stride_w");
    int64_t fh = opt_int(c, p, "filter_height"), fw = opt_int(c, p, "filter_width");
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    const char *xd = NULL;
    sy_status *st = check_act(c, act);
    if (!st)
        st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const qt *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if (x->rank != 4)
        return refuse(c, "input '%s' has rank %d (4 is translated)", x->vname, x->rank);
    int64_t OH, OW, pt, pb, pl, pr;
    if ((st = pad_axis(c, padding, x->dims[1], fh, sh, 1, &OH, &pt, &pb)) ||
        (st = pad_axis(c, padding, x->dims[2], fw, sw, 1, &OW, &pl, &pr)) ||
        (st = check_out(c, io->out, (const int64_t[]){x->dims[0], OH, OW, x->dims[3]}, 4)))
        return st;
    if (!same_q(x, y))
        return refuse(c, "output '%s' is quantized with another scale or zero point than input '%s' (an int8 "
                      "%s keeps the codes' quantization)", y->vname, x->vname, c->opname);
    const char *out = y->vname, *xt = fresh(c, out, "in_nchw"), *yt = fresh(c, out, "nchw"), *pre = fresh(c, out, "f");
    if (!xt || !yt || !pre)
        return oom();
    const int64_t k[2] = {fh, fw}, s[2] = {sh, sw}, pads[4] = {pt, pl, pb, pr};
    sy_model_attr pa[3] = {ints_attr("kernel_shape", k, 2), ints_attr("strides", s, 2), ints_attr("pads", pads, 4)};
    sy_model_attr tin = ints_attr("perm", TO_NCHW, 4), tout = ints_attr("perm", TO_NHWC, 4);
    if ((st = node(c, "Transpose", &xd, 1, xt, &tin, 1)) ||
        (st = node(c, average ? "AveragePool" : "MaxPool", &xt, 1, yt, pa, 3)) ||
        (st = node(c, "Transpose", &yt, 1, pre, &tout, 1)))
        return st;
    return fused(c, act, pre, io->out);
}

/* ADD of two int8 activations of the same shape, each with its own scale and
 * zero point: DequantizeLinear of each → Add [→ Relu] → QuantizeLinear of the
 * output's. */
static sy_status *t_add(qx *c, const opio *io, const opts *p)
{
    if (io->nin != 2)
        return refuse(c, "%u inputs (two are translated)", io->nin);
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    const char *ad = NULL, *bd = NULL;
    sy_status *st = check_act(c, act);
    if (!st)
        st = read_act(c, io->in[0], true, &ad);
    if (!st)
        st = read_act(c, io->in[1], true, &bd);
    if (st)
        return st;
    const qt *a = &c->t[io->in[0]], *b = &c->t[io->in[1]];
    bool same = a->rank == b->rank;
    for (int32_t d = 0; same && d < a->rank; d++)
        same = a->dims[d] == b->dims[d];
    if (!same)
        return refuse(c, "inputs '%s' and '%s' have different shapes (an int8 ADD of two activations of one shape is "
                      "translated, not a broadcast)", a->vname, b->vname);
    if ((st = check_out(c, io->out, a->dims, a->rank)))
        return st;
    const char *pre = fresh(c, c->t[io->out].vname, "f");
    if (!pre)
        return oom();
    if ((st = node(c, "Add", (const char *[]){ad, bd}, 2, pre, NULL, 0)))
        return st;
    return fused(c, act, pre, io->out);
}

/* CONCATENATION of int8 activations along an axis, every input quantized as
 * the output (TFLite's int8 kernel copies the codes and refuses other
 * inputs at Prepare, so no requantization is translated; no fused
 * activation, as there): DequantizeLinear of each input → Concat →
 * QuantizeLinear. */
static sy_status *t_concat(qx *c, const opio *io, const opts *p)
{
    int32_t axis = opt_int(c, p, "axis");
    int act = opt_int(c, p, "fused_activation_function");
    CHECK_FB(c);
    if (act != ACT_NONE) {
        const char *n = tfl_act_name(act);
        return refuse(c, "the fused activation %s: TFLite's CONCATENATION takes none (its kernel refuses one)",
                      n ? n : "(invalid)");
    }
    sy_status *st = NULL;
    const char *in[MAX_OP_INPUTS];
    for (uint32_t k = 0; k < io->nin; k++)
        if ((st = read_act(c, io->in[k], true, &in[k])))
            return st;
    const qt *x0 = &c->t[io->in[0]];
    const int32_t r = x0->rank;
    if (axis < -r || axis >= r || r == 0)
        return refuse(c, "axis %d of inputs of rank %d", axis, r);
    if (axis < 0)
        axis += r;
    int64_t dims[MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    for (uint32_t k = 1; k < io->nin; k++) {
        const qt *x = &c->t[io->in[k]];
        bool fits = x->rank == r;
        for (int32_t d = 0; fits && d < r; d++)
            fits = d == axis || x->dims[d] == x0->dims[d];
        if (!fits)
            return refuse(c, "input %u '%s' does not match input 0 '%s' outside axis %d", k, x->vname, x0->vname,
                          axis);
        dims[axis] += x->dims[axis];
    }
    if ((st = check_out(c, io->out, dims, r)))
        return st;
    const qt *y = &c->t[io->out];
    for (uint32_t k = 0; k < io->nin; k++) {
        const qt *x = &c->t[io->in[k]];
        if (!same_q(x, y))
            return refuse(c, "input %u '%s' is quantized with scale %g and zero point %lld, the output '%s' with %g "
                          "and %lld: TFLite's int8 CONCATENATION keeps the codes (real TFLite refuses inputs "
                          "quantized otherwise than the output), so a requantizing one is not translated", k,
                          x->vname, (double)x->scale[0], (long long)x->zp[0], y->vname, (double)y->scale[0],
                          (long long)y->zp[0]);
    }
    const char *pre = fresh(c, y->vname, "f");
    if (!pre)
        return oom();
    sy_model_attr aa = int_attr("axis", axis);
    if ((st = node(c, "Concat", in, io->nin, pre, &aa, 1)))
        return st;
    return quantize_to(c, io->out, pre);
}

static sy_status *t_reshape(qx *c, const opio *io)
{
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const qt *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if (y->type != TT_INT8)
        return refuse(c, "output tensor #%d '%s' is %s (int8 is translated)", io->out, y->vname, type_name(y->type));
    if (numel_of(x) != numel_of(y))
        return refuse(c, "input '%s' has %lld values, output '%s' %lld", x->vname, (long long)numel_of(x), y->vname,
                      (long long)numel_of(y));
    if (!same_q(x, y))
        return refuse(c, "output '%s' is quantized with another scale or zero point than input '%s' (an int8 RESHAPE "
                      "keeps the codes)", y->vname, x->vname);
    /* the output's static shape, a leading dimension kept from the input copied (0) */
    int64_t s[MAX_RANK];
    for (int32_t d = 0; d < y->rank; d++)
        s[d] = y->dims[d];
    if (y->rank > 0 && x->rank > 0 && y->dims[0] == x->dims[0])
        s[0] = 0;
    const char *shp = fresh(c, y->vname, "shape"), *f = fresh(c, y->vname, "f");
    if (!shp || !f)
        return oom();
    const int64_t r = y->rank;
    if ((st = add_init(c, shp, SY_DT_INT64, 1, &r, s, 8 * (size_t)y->rank)) ||
        (st = node(c, "Reshape", (const char *[]){xd, shp}, 2, f, NULL, 0)))
        return st;
    return quantize_to(c, io->out, f);
}

static sy_status *t_softmax(qx *c, const opio *io, const opts *p)
{
    float beta = opt_f32(c, p, "beta");
    CHECK_FB(c);
    if (beta != 1.0f)
        return refuse(c, "beta %g (1 is translated)", (double)beta);
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const qt *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if ((st = check_out(c, io->out, x->dims, x->rank)))
        return st;
    if (y->scale[0] != 1.0f / 256 || y->zp[0] != -128)
        return refuse(c, "output '%s' has scale %g and zero point %lld: an int8 SOFTMAX's is 1/256 and -128", y->vname,
                      (double)y->scale[0], (long long)y->zp[0]);
    const char *f = fresh(c, y->vname, "f");
    if (!f)
        return oom();
    sy_model_attr aa = int_attr("axis", -1);
    if ((st = node(c, "Softmax", &xd, 1, f, &aa, 1)))
        return st;
    return quantize_to(c, io->out, f);
}

/* QUANTIZE: a float input (or int8, requantized) to int8 codes */
static sy_status *t_quantize(qx *c, const opio *io)
{
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], false, &xd);
    if (st)
        return st;
    const qt *x = &c->t[io->in[0]];
    if (x->type != TT_FLOAT32 && x->type != TT_INT8)
        return refuse(c, "input '%s' is %s", x->vname, type_name(x->type));
    if ((st = check_out(c, io->out, x->dims, x->rank)))
        return st;
    return quantize_to(c, io->out, xd);
}

/* DEQUANTIZE: int8 codes to the float output */
static sy_status *t_dequantize(qx *c, const opio *io)
{
    sy_status *st = check_in(c, io->in[0], true);
    if (!st)
        st = act_qparams(c, io->in[0]);
    if (st)
        return st;
    const qt *y = &c->t[io->out];
    if (y->type != TT_FLOAT32)
        return refuse(c, "output tensor #%d '%s' is %s (float32 is translated)", io->out, y->vname,
                      type_name(y->type));
    const qt *x = &c->t[io->in[0]];
    bool same = x->rank == y->rank;
    for (int32_t d = 0; same && d < x->rank; d++)
        same = x->dims[d] == y->dims[d];
    if (!same)
        return refuse(c, "output '%s' does not have the shape of input '%s'", y->vname, x->vname);
    /* its own DequantizeLinear, writing the output's name */
    return node(c, "DequantizeLinear", (const char *[]){x->vname, x->qs, x->qz}, 3, y->vname, NULL, 0);
}

static sy_status *translate_op(qx *c, fb_table op)
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
    c->opname = nm && *nm ? nm : "an unknown builtin code";
    bool known = code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D || code == OP_DEQUANTIZE ||
                 code == OP_FULLY_CONNECTED || code == OP_MAX_POOL_2D || code == OP_RESHAPE || code == OP_SOFTMAX ||
                 code == OP_QUANTIZE || code == OP_AVERAGE_POOL_2D || code == OP_ADD || code == OP_CONCATENATION;
    if (!known)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: operator #%u (%s, builtin code %d) has no int8 translation for "
                                "QAS-INT8 (QUANTIZE, DEQUANTIZE, FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, "
                                "MAX_POOL_2D, AVERAGE_POOL_2D, ADD, CONCATENATION, RESHAPE and SOFTMAX are translated)", c->where, c->oi, c->opname, (int)code);
    opts p = {.d = tfl_op_desc_of(code)};
    if (otype) {
        if (!p.d || otype != p.d->options_type)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s) carries builtin options of type %u",
                                    c->where, c->oi, c->opname, otype);
        p.o = fb_subtable(&c->r, op, OP_OPTIONS, "builtin_options");
        CHECK_FB(c);
    }
    if (outs.len != 1)
        return refuse(c, "%u outputs (one is translated)", outs.len);
    uint32_t want_max = code == OP_FULLY_CONNECTED || code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D ? 3
                        : code == OP_RESHAPE || code == OP_ADD                                          ? 2
                        : code == OP_CONCATENATION                                                      ? MAX_OP_INPUTS
                                                                                                        : 1;
    if (ins.len < 1 || ins.len > want_max)
        return refuse(c, "%u inputs (at most %u are translated)", ins.len, want_max);
    opio io = {.nin = ins.len};
    for (uint32_t k = 0; k < ins.len; k++) {
        io.in[k] = fb_vec_i32(&c->r, ins, k);
        CHECK_FB(c);
        if (io.in[k] == -1 && k == 2)
            continue;
        if (!tensor_ok(c, io.in[k]))
            return refuse(c, "input %u is tensor %d, out of range", k, io.in[k]);
    }
    if (io.nin == 3 && io.in[2] == -1)
        io.nin = 2;
    io.out = fb_vec_i32(&c->r, outs, 0);
    CHECK_FB(c);
    if (!tensor_ok(c, io.out))
        return refuse(c, "output tensor %d is out of range", io.out);
    qt *y = &c->t[io.out];
    if (y->available)
        return refuse(c, "output tensor #%d '%s' is a graph input, a constant or written twice", io.out, y->vname);
    sy_status *st;
    switch (code) {
    case OP_FULLY_CONNECTED: st = t_fc(c, &io, &p); break;
    case OP_CONV_2D: st = t_conv(c, &io, &p, false); break;
    case OP_DEPTHWISE_CONV_2D: st = t_conv(c, &io, &p, true); break;
    case OP_MAX_POOL_2D: st = t_pool(c, &io, &p, false); break;
    case OP_AVERAGE_POOL_2D: st = t_pool(c, &io, &p, true); break;
    case OP_ADD: st = t_add(c, &io, &p); break;
    case OP_CONCATENATION: st = t_concat(c, &io, &p); break;
    case OP_RESHAPE: st = t_reshape(c, &io); break;
    case OP_SOFTMAX: st = t_softmax(c, &io, &p); break;
    case OP_QUANTIZE: st = t_quantize(c, &io); break;
    default: st = t_dequantize(c, &io); break;
    }
    if (!st && fb_failed(&c->r))
        st = corrupt(c);
    if (!st)
        y->available = true;
    return st;
}

static sy_dtype dtype_of(const qt *t) { return t->type == TT_INT8 ? SY_DT_INT8 : SY_DT_FLOAT32; }

static sy_status *translate(qx *c, const char *subgraph, int64_t index)
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
    sy_status *st = tr_tflite_pick_subgraph(c->r.p, c->r.n, c->where, subgraph, index, &c->m->subgraph);
    if (st)
        return st;
    fb_table sg = fb_vec_table(&c->r, sgs, c->m->subgraph, "subgraph");
    fb_vec vin = fb_vector(&c->r, sg, SG_INPUTS, 4, "subgraph inputs");
    fb_vec vout = fb_vector(&c->r, sg, SG_OUTPUTS, 4, "subgraph outputs");
    fb_vec vops = fb_vector(&c->r, sg, SG_OPERATORS, 4, "subgraph operators");
    CHECK_FB(c);
    if ((st = read_tensors(c, sg)))
        return st;
    for (uint32_t i = 0; i < vin.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vin, i);
        CHECK_FB(c);
        if (!tensor_ok(c, ti))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph input %u is tensor %d, out of range", c->where, i,
                                    ti);
        qt *t = &c->t[ti];
        if (t->data)
            continue;
        if (t->available)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph input '%s' is listed twice", c->where, t->vname);
        if (t->type != TT_FLOAT32 && t->type != TT_INT8)
            return sy_status_create(SY_ERR_UNSUPPORTED, "%s: graph input '%s' is %s (float32 or int8 is translated)",
                                    c->where, t->vname, type_name(t->type));
        t->available = true;
        if ((st = sy_model_writer_add_input(c->w, t->vname, dtype_of(t), t->rank, t->dims)))
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
        const qt *t = &c->t[ti];
        if ((st = sy_model_writer_add_output(c->w, t->vname, dtype_of(t), t->rank, t->dims)))
            return st;
    }
    return NULL;
}

sy_status *tr_tflite_translate_int8(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                                    int64_t index, tr_tfl_model *out)
{
    memset(out, 0, sizeof *out);
    if (!tr_tflite_is_tflite(data, size))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: not a TFLite model (no \"TFL3\" identifier at byte 4)",
                                where);
    qx c = {.where = where, .m = out, .opname = "none"};
    fb_init(&c.r, data, size);
    sy_status *st = sy_model_writer_create(13, &c.w);
    if (!st)
        st = sy_model_writer_set_producer(c.w, "switchyard train (from int8 TFLite)");
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

/* ---- export ----------------------------------------------------------------------- */

sy_status *tr_tflite_export_int8(const char *src, uint32_t subgraph, const char *path, size_t n,
                                 const char *const *names, const void *const *values, const size_t *nbytes)
{
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(src, &data, &size);
    if (st)
        return st;
    tr_tfl_model m;
    st = tr_tflite_translate_int8(data, size, src, NULL, subgraph, &m);
    uint8_t *tmp = NULL;
    for (size_t k = 0; !st && k < n; k++) {
        const tr_tfl_param *p = NULL;
        for (size_t i = 0; i < m.n_params && !p; i++)
            if (!strcmp(m.params[i].name, names[k]))
                p = &m.params[i];
        if (!p) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: trained tensor '%s' is not an int8 weight or int32 bias "
                                  "of the TFLite model", src, names[k]);
            break;
        }
        if (p->nbytes != nbytes[k] || p->offset > size || p->nbytes > size - p->offset) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: trained tensor '%s' has %zu bytes, its buffer %llu", src,
                                  names[k], nbytes[k], (unsigned long long)p->nbytes);
            break;
        }
        if (p->shared) {
            st = sy_status_create(SY_ERR_UNSUPPORTED, "%s: trained tensor '%s' shares buffer %u with another tensor, "
                                  "so its trained codes cannot be written back alone", src, names[k], p->buffer);
            break;
        }
        const uint8_t *v = values[k];
        if (p->layout == TR_TFL_OHWI) { /* [O,I,H,W] int8 codes -> [O,H,W,I] */
            free(tmp);
            if (!(tmp = malloc(nbytes[k] ? nbytes[k] : 1))) {
                st = oom();
                break;
            }
            int64_t O = p->dims[0], H = p->dims[1], W = p->dims[2], I = p->dims[3];
            for (int64_t o = 0; o < O; o++)
                for (int64_t h = 0; h < H; h++)
                    for (int64_t x = 0; x < W; x++)
                        for (int64_t i = 0; i < I; i++)
                            tmp[((o * H + h) * W + x) * I + i] = v[((o * I + i) * H + h) * W + x];
            v = tmp;
        } else if (p->layout == TR_TFL_1HWC) { /* [C,1,H,W] int8 codes -> [1,H,W,C] */
            free(tmp);
            if (!(tmp = malloc(nbytes[k] ? nbytes[k] : 1))) {
                st = oom();
                break;
            }
            int64_t H = p->dims[1], W = p->dims[2], C = p->dims[3];
            for (int64_t h = 0; h < H; h++)
                for (int64_t x = 0; x < W; x++)
                    for (int64_t ch = 0; ch < C; ch++)
                        tmp[(h * W + x) * C + ch] = v[(ch * H + h) * W + x];
            v = tmp;
        }
        /* int8 codes as they are; int32 biases little-endian, as the host stores them */
        memcpy(data + p->offset, v, nbytes[k]);
    }
    free(tmp);
    tr_tflite_model_free(&m);
    if (!st)
        st = tl_write_atomic(path, data, size, NULL, 0);
    free(data);
    return st;
}
