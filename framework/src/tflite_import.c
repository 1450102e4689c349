/*
 * TFLite importer: a .tflite FlatBuffer (schema "TFL3") -> ir_model.
 *
 * The file is mapped, never copied: constant tensors point into the mapping
 * (kept in ir_model->mappings), except the rare buffer whose address is not
 * aligned for its element type, which is copied once. Every offset, vtable,
 * vector and string is checked by the reader in tflite_fb.c; a corrupt file
 * is an SY_ERR_INVALID_MODEL status naming the file and what is wrong.
 *
 * Mapping to the IR:
 *   - subgraph 0 is the graph (further subgraphs are only reachable through
 *     control-flow operators, which no plugin defines, so they are refused
 *     by the op check with their names);
 *   - tensors become values named by the tensor name (made unique with
 *     "#<index>" when TFLite repeats a name), dtype and NHWC shape as stored,
 *     shape_signature -1 dims symbolic, per-tensor / per-axis quantization
 *     in ir_value.quant;
 *   - operators become nodes of domain "tflite" named after the builtin
 *     ("CONV_2D"), opset = the operator code's version, opcode =
 *     max(builtin_code, deprecated_builtin_code), builtin options decoded
 *     into attributes with the schema's field names (enums as strings);
 *   - variable tensors (recurrent state) become constants holding the value
 *     0 (zero point for quantized tensors), as TFLite Micro resets them;
 *   - an operator's `intermediates` (LSTM gate statistics) become the
 *     attributes intermediate_scales / intermediate_zero_points.
 * Custom operators are refused at load with their custom_code.
 */
#include "tflite_import.h"
#include "tflite_fb.h"
#include "tflite_ops.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* schema.fbs field ids */
enum { MODEL_VERSION = 0, MODEL_OPCODES = 1, MODEL_SUBGRAPHS = 2, MODEL_DESCRIPTION = 3, MODEL_BUFFERS = 4 };
enum { OPC_DEPRECATED_CODE = 0, OPC_CUSTOM_CODE = 1, OPC_VERSION = 2, OPC_BUILTIN_CODE = 3 };
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3, SG_NAME = 4 };
enum {
    TENSOR_SHAPE = 0,
    TENSOR_TYPE = 1,
    TENSOR_BUFFER = 2,
    TENSOR_NAME = 3,
    TENSOR_QUANT = 4,
    TENSOR_IS_VARIABLE = 5,
    TENSOR_SPARSITY = 6,
    TENSOR_SHAPE_SIGNATURE = 7
};
enum { Q_SCALE = 2, Q_ZERO_POINT = 3, Q_DETAILS_TYPE = 4, Q_QUANTIZED_DIMENSION = 6 };
enum {
    OP_OPCODE_INDEX = 0,
    OP_INPUTS = 1,
    OP_OUTPUTS = 2,
    OP_OPTIONS_TYPE = 3,
    OP_OPTIONS = 4,
    OP_INTERMEDIATES = 8
};
enum { BUF_DATA = 0, BUF_OFFSET = 1, BUF_SIZE = 2 };

#define TFL_SCHEMA_VERSION 3u

typedef struct opcode_info {
    int32_t code;
    int32_t version;
    const char *custom; /* custom_code, for messages */
} opcode_info;

typedef struct tctx {
    uint64_t max_tensor_bytes; /* the largest variable tensor allocated at load */
    fb_reader r;
    const char *where;
    ir_model *m;
    ir_graph *g;
    fb_vec buffers;
    fb_vec tensors;
    int32_t *tval;     /* tensor index -> value index (-1: not created) */
    opcode_info *opcodes;
    uint32_t n_opcodes;
} tctx;

static sy_status *corrupt(tctx *c)
{
    return sy_error(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", c->where, c->r.err);
}

#define CHECK_FB(c)                                                                                                \
    do {                                                                                                           \
        if (fb_failed(&(c)->r))                                                                                    \
            return corrupt(c);                                                                                     \
    } while (0)

bool sy_tflite_is_tflite(const void *data, size_t size)
{
    return size >= 8 && !memcmp((const char *)data + 4, "TFL3", 4);
}

/* TensorType -> sy_dtype; SY_DT_UNDEFINED when not representable. */
static sy_dtype map_dtype(int t)
{
    switch (t) {
    case 0: return SY_DT_FLOAT32;
    case 1: return SY_DT_FLOAT16;
    case 2: return SY_DT_INT32;
    case 3: return SY_DT_UINT8;
    case 4: return SY_DT_INT64;
    case 6: return SY_DT_BOOL;
    case 7: return SY_DT_INT16;
    case 9: return SY_DT_INT8;
    case 10: return SY_DT_FLOAT64;
    case 12: return SY_DT_UINT64;
    case 15: return SY_DT_UINT32;
    case 16: return SY_DT_UINT16;
    case 17: return SY_DT_INT4;
    default: return SY_DT_UNDEFINED;
    }
}

/* ---- quantization ---------------------------------------------------------- */

static sy_status *read_quant(tctx *c, fb_table t, const char *tname, ir_value *v)
{
    fb_table q = fb_subtable(&c->r, t, TENSOR_QUANT, "tensor quantization");
    CHECK_FB(c);
    if (!fb_present(q))
        return NULL;
    fb_vec sc = fb_vector(&c->r, q, Q_SCALE, 4, "quantization scale");
    fb_vec zp = fb_vector(&c->r, q, Q_ZERO_POINT, 8, "quantization zero_point");
    uint8_t details = fb_u8(&c->r, q, Q_DETAILS_TYPE, 0, "quantization details type");
    int32_t qdim = fb_i32(&c->r, q, Q_QUANTIZED_DIMENSION, 0, "quantized_dimension");
    CHECK_FB(c);
    if (details)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: tensor '%s' uses custom quantization (details type %u), which is not supported",
                        c->where, tname, details);
    if (sc.len == 0) {
        if (zp.len)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s' has %u zero points but no scales", c->where, tname,
                            zp.len);
        return NULL; /* min/max only, or empty: not quantized */
    }
    if (zp.len && zp.len != sc.len)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s' has %u scales but %u zero points", c->where, tname,
                        sc.len, zp.len);
    int32_t axis = -1;
    if (sc.len > 1) {
        /* converters copy the weights' quantized_dimension (3 for depthwise
         * filters) onto 1-D biases; for rank 1 the only axis is meant */
        if (v->rank == 1 && (qdim < 0 || qdim >= v->rank))
            qdim = 0;
        if (qdim < 0 || qdim >= v->rank)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s': quantized_dimension %d is out of range for rank %d",
                            c->where, tname, qdim, v->rank);
        if (v->dims[qdim] != (int64_t)sc.len)
            return sy_error(SY_ERR_INVALID_MODEL,
                            "%s: tensor '%s' has %u per-channel scales but dimension %d has size %lld", c->where,
                            tname, sc.len, qdim, (long long)v->dims[qdim]);
        axis = qdim;
    }
    sy_quant_params *qp = calloc(1, sizeof *qp);
    float *scales = malloc(sc.len * sizeof *scales);
    int32_t *zps = malloc(sc.len * sizeof *zps);
    if (!qp || !scales || !zps) {
        free(qp);
        free(scales);
        free(zps);
        return sy_error_oom();
    }
    for (uint32_t i = 0; i < sc.len; i++) {
        scales[i] = fb_vec_f32(&c->r, sc, i);
        int64_t z = zp.len ? fb_vec_i64(&c->r, zp, i) : 0;
        if (z < INT32_MIN || z > INT32_MAX) {
            free(qp);
            free(scales);
            free(zps);
            return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s': zero point %lld does not fit in int32", c->where,
                            tname, (long long)z);
        }
        zps[i] = (int32_t)z;
        int64_t lo = v->dtype == SY_DT_INT8 ? -128 : v->dtype == SY_DT_UINT8 ? 0 : v->dtype == SY_DT_INT16 ? -32768 : INT32_MIN;
        int64_t hi = v->dtype == SY_DT_INT8 ? 127 : v->dtype == SY_DT_UINT8 ? 255 : v->dtype == SY_DT_INT16 ? 32767 : INT32_MAX;
        if (z < lo || z > hi || !isfinite(scales[i]) || scales[i] < 0.0f) {
            free(qp);
            free(scales);
            free(zps);
            return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s' (%s): scale %g / zero point %lld is out of range",
                            c->where, tname, sy_dtype_name(v->dtype), (double)fb_vec_f32(&c->r, sc, i), (long long)z);
        }
    }
    qp->struct_size = sizeof *qp;
    qp->axis = axis;
    qp->block_size = 0;
    qp->count = sc.len;
    qp->scales = scales;
    qp->zero_points = zps;
    qp->storage = v->dtype;
    v->quant = qp;
    return NULL;
}

/* ---- tensors ----------------------------------------------------------------- */

/* Bytes of buffer `bi` (NULL/0 when empty). */
static sy_status *buffer_bytes(tctx *c, uint32_t bi, const char *tname, const uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (bi >= c->buffers.len)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s' refers to buffer %u, but the model has %u buffers",
                        c->where, tname, bi, c->buffers.len);
    fb_table b = fb_vec_table(&c->r, c->buffers, bi, "buffer");
    fb_vec d = fb_vector(&c->r, b, BUF_DATA, 1, "buffer data");
    uint64_t off = fb_u64(&c->r, b, BUF_OFFSET, 0, "buffer offset");
    uint64_t size = fb_u64(&c->r, b, BUF_SIZE, 0, "buffer size");
    CHECK_FB(c);
    if (off > 1) { /* data outside the FlatBuffer (models over 2 GB) */
        if (off > c->r.n || size > c->r.n - off)
            return sy_error(SY_ERR_INVALID_MODEL,
                            "%s: corrupt TFLite file: buffer %u (tensor '%s') at offset %llu size %llu runs past the end of the file (%zu bytes)",
                            c->where, bi, tname, (unsigned long long)off, (unsigned long long)size, c->r.n);
        *data = c->r.p + off;
        *len = (size_t)size;
        return NULL;
    }
    if (d.pos && d.len) {
        *data = fb_vec_bytes(&c->r, d);
        *len = d.len;
    }
    return NULL;
}

static sy_status *fill_zero_state(ir_value *v, const char *where, uint64_t max_bytes)
{
    int64_t numel = 1;
    for (int32_t d = 0; d < v->rank; d++) {
        if (v->dims[d] < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: variable tensor '%s' has an unknown dimension", where, v->name);
        if (__builtin_mul_overflow(numel, v->dims[d], &numel))
            return sy_error(SY_ERR_INVALID_MODEL, "%s: variable tensor '%s': its element count overflows", where,
                            v->name);
    }
    size_t nbytes;
    if (!sy_dtype_bytes(v->dtype, numel, &nbytes) || sy_dtype_elem_size(v->dtype) == 0)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: variable tensor '%s' has dtype %s, which is not supported", where,
                        v->name, sy_dtype_name(v->dtype));
    if (nbytes > max_bytes) /* its zero state would be allocated now, whatever the file's size */
        return sy_error(SY_ERR_BUDGET,
                        "%s: variable tensor '%s' declares %lld elements of %s = %zu bytes, over max_tensor_bytes = "
                        "%llu",
                        where, v->name, (long long)numel, sy_dtype_name(v->dtype), nbytes,
                        (unsigned long long)max_bytes);
    void *p = sy_aligned_alloc(nbytes, 64);
    if (!p)
        return sy_error_oom();
    memset(p, 0, nbytes);
    /* quantized state starts at real 0: the zero point (as TFLite Micro does) */
    if (v->quant && v->quant->count == 1 && v->quant->zero_points && v->quant->zero_points[0]) {
        int32_t z = v->quant->zero_points[0];
        for (int64_t i = 0; i < numel; i++) {
            if (v->dtype == SY_DT_INT8)
                ((int8_t *)p)[i] = (int8_t)z;
            else if (v->dtype == SY_DT_UINT8)
                ((uint8_t *)p)[i] = (uint8_t)z;
            else if (v->dtype == SY_DT_INT16)
                ((int16_t *)p)[i] = (int16_t)z;
        }
    }
    v->flags |= IR_VALUE_OWNS_DATA;
    v->data = p;
    v->nbytes = nbytes;
    v->flags |= IR_VALUE_INITIALIZER;
    return NULL;
}

/* Create the value of tensor `ti` (once); returns its index in *out. */
static sy_status *tensor_value(tctx *c, int32_t ti, int32_t *out)
{
    if (ti < 0 || (uint32_t)ti >= c->tensors.len)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor index %d is out of range (the subgraph has %u tensors)",
                        c->where, ti, c->tensors.len);
    if (c->tval[ti] >= 0) {
        *out = c->tval[ti];
        return NULL;
    }
    fb_table t = fb_vec_table(&c->r, c->tensors, (uint32_t)ti, "tensor");
    uint32_t name_len = 0;
    const char *tname = fb_string(&c->r, t, TENSOR_NAME, &name_len, "tensor name");
    fb_vec shape = fb_vector(&c->r, t, TENSOR_SHAPE, 4, "tensor shape");
    fb_vec sig = fb_vector(&c->r, t, TENSOR_SHAPE_SIGNATURE, 4, "tensor shape_signature");
    int8_t ttype = fb_i8(&c->r, t, TENSOR_TYPE, 0, "tensor type");
    uint32_t bi = fb_u32(&c->r, t, TENSOR_BUFFER, 0, "tensor buffer");
    bool is_var = fb_u8(&c->r, t, TENSOR_IS_VARIABLE, 0, "tensor is_variable") != 0;
    bool sparse = fb_has(&c->r, t, TENSOR_SPARSITY);
    CHECK_FB(c);

    char *vname = NULL;
    if (!tname || !*tname)
        vname = sy_asprintf("tensor_%d", ti);
    else if (ir_graph_find_value(c->g, tname) >= 0)
        vname = sy_asprintf("%s#%d", tname, ti);
    else
        vname = sy_strdup(tname);
    if (!vname)
        return sy_error_oom();
    if (ir_graph_find_value(c->g, vname) >= 0) {
        sy_status *st = sy_error(SY_ERR_INVALID_MODEL, "%s: tensor %d: name '%s' is used twice", c->where, ti, vname);
        free(vname);
        return st;
    }
    int32_t idx = ir_graph_intern_value(c->g, vname);
    free(vname);
    if (idx < 0)
        return sy_error_oom();
    c->tval[ti] = idx;
    *out = idx;
    ir_value *v = &c->g->values[idx];
    const char *nm = v->name;

    if (sparse)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: tensor '%s' is sparse (SparsityParameters), which is not supported",
                        c->where, nm);
    v->dtype = map_dtype(ttype);
    if (v->dtype == SY_DT_UNDEFINED) {
        const char *tn = tfl_ttype_name(ttype);
        return sy_error(SY_ERR_UNSUPPORTED, "%s: tensor '%s' has type %s, which is not supported", c->where, nm,
                        tn ? tn : "(unknown TensorType)");
    }
    if (shape.len > SY_MAX_RANK)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: tensor '%s' has rank %u; at most %d is supported", c->where, nm,
                        shape.len, SY_MAX_RANK);
    if (!ir_value_set_rank(c->g, v, (int32_t)shape.len))
        return sy_error_oom();
    for (uint32_t d = 0; d < shape.len; d++) {
        int32_t x = fb_vec_i32(&c->r, shape, d);
        if (x < -1)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s' has dimension %u = %d", c->where, nm, d, x);
        v->dims[d] = x;
    }
    if (sig.len == shape.len) {
        for (uint32_t d = 0; d < sig.len; d++) {
            int32_t x = fb_vec_i32(&c->r, sig, d);
            if (x == -1)
                v->dims[d] = -1;
        }
    }
    for (int32_t d = 0; d < v->rank; d++)
        if (v->dims[d] < 0) {
            if (!ir_value_set_dim_param(v, (int)d, d == 0 ? sy_strdup("batch") : sy_asprintf("%s_d%d", nm, (int)d)))
                return sy_error_oom();
        }
    CHECK_FB(c);
    SY_TRY(read_quant(c, t, nm, v));

    const uint8_t *data;
    size_t len;
    SY_TRY(buffer_bytes(c, bi, nm, &data, &len));
    if (data && len) {
        if (v->dtype == SY_DT_INT4 || sy_dtype_elem_size(v->dtype) == 0)
            return sy_error(SY_ERR_UNSUPPORTED, "%s: constant tensor '%s' has dtype %s, which is not supported",
                            c->where, nm, sy_dtype_name(v->dtype));
        int64_t numel = 1;
        for (int32_t d = 0; d < v->rank; d++) {
            if (v->dims[d] < 0)
                return sy_error(SY_ERR_INVALID_MODEL, "%s: constant tensor '%s' has an unknown dimension", c->where, nm);
            if (v->dims[d] && numel > INT64_MAX / v->dims[d])
                return sy_error(SY_ERR_INVALID_MODEL, "%s: constant tensor '%s': size overflows", c->where, nm);
            numel *= v->dims[d];
        }
        size_t want;
        if (!sy_dtype_bytes(v->dtype, numel, &want) || want != len)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: constant tensor '%s' (%s, %lld elements) has a buffer of %zu bytes",
                            c->where, nm, sy_dtype_name(v->dtype), (long long)numel, len);
        size_t es = sy_dtype_elem_size(v->dtype);
        if (((uintptr_t)data % es) != 0) {
            /* not aligned for its element type: one copy keeps kernels portable */
            void *p = sy_aligned_alloc(len, 64);
            if (!p)
                return sy_error_oom();
            memcpy(p, data, len);
            v->flags |= IR_VALUE_OWNS_DATA;
            data = p;
        }
        v->data = data;
        v->nbytes = len;
        v->flags |= IR_VALUE_INITIALIZER;
    } else if (is_var) {
        SY_TRY(fill_zero_state(v, c->where, c->max_tensor_bytes));
    }
    return NULL;
}

/* ---- attributes -------------------------------------------------------------- */

static sy_status *set_string_attr(ir_attr *a, const char *s)
{
    a->type = SY_ATTR_STRING;
    a->s = sy_strdup(s);
    a->s_len = strlen(s);
    return a->s ? NULL : sy_error_oom();
}

static sy_status *decode_options(tctx *c, fb_table op, uint32_t oi, int32_t code, ir_node *n)
{
    uint8_t otype = fb_u8(&c->r, op, OP_OPTIONS_TYPE, 0, "builtin_options_type");
    CHECK_FB(c);
    const tfl_op_desc *d = tfl_op_desc_of(code);
    if (!d)
        return NULL; /* an operator whose options this build does not decode (refused by the op check) */
    if (otype && otype != d->options_type)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s) carries builtin options of type %u; %s expects %s (%u)",
                        c->where, oi, n->op, otype, n->op, d->options_name, d->options_type);
    fb_table o = {0, 0, 0, 0};
    if (otype) {
        o = fb_subtable(&c->r, op, OP_OPTIONS, "builtin_options");
        CHECK_FB(c);
    }
    if (!d->n_fields)
        return NULL;
    n->attrs = calloc(d->n_fields, sizeof *n->attrs);
    if (!n->attrs)
        return sy_error_oom();
    for (uint32_t k = 0; k < d->n_fields; k++) {
        const tfl_field *f = &d->fields[k];
        ir_attr *a = &n->attrs[k];
        n->n_attrs = k + 1;
        a->name = sy_strdup(f->name);
        if (!a->name)
            return sy_error_oom();
        const char *ename = NULL;
        int ev = 0;
        switch ((tfl_field_kind)f->kind) {
        case TFL_F_BOOL:
            a->type = SY_ATTR_INT;
            a->i = fb_u8(&c->r, o, f->id, (uint8_t)f->def, f->name) != 0;
            break;
        case TFL_F_I32:
            a->type = SY_ATTR_INT;
            a->i = fb_i32(&c->r, o, f->id, (int32_t)f->def, f->name);
            break;
        case TFL_F_F32:
            a->type = SY_ATTR_FLOAT;
            a->f = fb_f32(&c->r, o, f->id, (float)f->def, f->name);
            break;
        case TFL_F_I32VEC: {
            fb_vec v = fb_vector(&c->r, o, f->id, 4, f->name);
            CHECK_FB(c);
            a->type = SY_ATTR_INTS;
            a->ints = malloc((v.len ? v.len : 1) * sizeof *a->ints);
            if (!a->ints)
                return sy_error_oom();
            a->count = v.len;
            for (uint32_t i = 0; i < v.len; i++)
                a->ints[i] = fb_vec_i32(&c->r, v, i);
            break;
        }
        case TFL_F_ACT:
        case TFL_F_PADDING:
        case TFL_F_TTYPE:
        case TFL_F_MIRROR:
        case TFL_F_WFORMAT:
        case TFL_F_LSTMKIND:
            ev = fb_i8(&c->r, o, f->id, (int8_t)f->def, f->name);
            ename = f->kind == TFL_F_ACT       ? tfl_act_name(ev)
                    : f->kind == TFL_F_PADDING ? tfl_padding_name(ev)
                    : f->kind == TFL_F_TTYPE   ? tfl_ttype_name(ev)
                    : f->kind == TFL_F_MIRROR  ? tfl_mirror_name(ev)
                    : f->kind == TFL_F_WFORMAT ? tfl_wformat_name(ev)
                                               : tfl_lstmkind_name(ev);
            CHECK_FB(c);
            if (!ename)
                return sy_error(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s): %s has the invalid value %d", c->where,
                                oi, n->op, f->name, ev);
            SY_TRY(set_string_attr(a, ename));
            break;
        }
        CHECK_FB(c);
    }
    return NULL;
}

/* intermediates: per-tensor scale and zero point of each, as attributes */
static sy_status *decode_intermediates(tctx *c, fb_table op, uint32_t oi, ir_node *n)
{
    fb_vec iv = fb_vector(&c->r, op, OP_INTERMEDIATES, 4, "operator intermediates");
    CHECK_FB(c);
    if (!iv.len)
        return NULL;
    ir_attr *grown = realloc(n->attrs, (n->n_attrs + 2) * sizeof *grown);
    if (!grown)
        return sy_error_oom();
    n->attrs = grown;
    ir_attr *as = &n->attrs[n->n_attrs], *az = &n->attrs[n->n_attrs + 1];
    memset(as, 0, 2 * sizeof *as);
    n->n_attrs += 2;
    as->name = sy_strdup("intermediate_scales");
    az->name = sy_strdup("intermediate_zero_points");
    as->type = SY_ATTR_FLOATS;
    az->type = SY_ATTR_INTS;
    as->floats = calloc(iv.len, sizeof *as->floats);
    az->ints = calloc(iv.len, sizeof *az->ints);
    if (!as->name || !az->name || !as->floats || !az->ints)
        return sy_error_oom();
    as->count = az->count = iv.len;
    for (uint32_t i = 0; i < iv.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, iv, i);
        CHECK_FB(c);
        if (ti < 0 || (uint32_t)ti >= c->tensors.len)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s): intermediate tensor %d is out of range",
                            c->where, oi, n->op, ti);
        fb_table t = fb_vec_table(&c->r, c->tensors, (uint32_t)ti, "tensor");
        fb_table q = fb_subtable(&c->r, t, TENSOR_QUANT, "tensor quantization");
        fb_vec sc = fb_vector(&c->r, q, Q_SCALE, 4, "quantization scale");
        fb_vec zp = fb_vector(&c->r, q, Q_ZERO_POINT, 8, "quantization zero_point");
        CHECK_FB(c);
        as->floats[i] = sc.len ? fb_vec_f32(&c->r, sc, 0) : 0.0f;
        az->ints[i] = zp.len ? fb_vec_i64(&c->r, zp, 0) : 0;
        CHECK_FB(c);
    }
    return NULL;
}

/* ---- operators ----------------------------------------------------------------- */

static sy_status *import_operator(tctx *c, fb_table op, uint32_t oi)
{
    uint32_t opc = fb_u32(&c->r, op, OP_OPCODE_INDEX, 0, "opcode_index");
    fb_vec ins = fb_vector(&c->r, op, OP_INPUTS, 4, "operator inputs");
    fb_vec outs = fb_vector(&c->r, op, OP_OUTPUTS, 4, "operator outputs");
    CHECK_FB(c);
    if (opc >= c->n_opcodes)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: operator #%u uses opcode_index %u, but the model has %u operator codes",
                        c->where, oi, opc, c->n_opcodes);
    const opcode_info *oc = &c->opcodes[opc];
    if (oc->code == TFL_OP_CUSTOM)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: operator #%u is the custom operator '%s', which is not supported",
                        c->where, oi, oc->custom ? oc->custom : "");
    if (oc->code == TFL_OP_DELEGATE)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: operator #%u is a DELEGATE node, which only a TFLite runtime can run",
                        c->where, oi);
    const char *opname = tfl_op_name(oc->code);
    if (!*opname)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: operator #%u has builtin code %d, which this build does not know",
                        c->where, oi, (int)oc->code);
    if (ins.len > 4096 || outs.len > 4096)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s) has %u inputs and %u outputs", c->where, oi,
                        opname, ins.len, outs.len);

    ir_node *n = ir_graph_add_node(c->g);
    if (!n)
        return sy_error_oom();
    /* in the graph's pool, op and domain once a graph (ir.h, ir_graph_alloc) */
    n->op = ir_graph_intern(c->g, opname);
    n->domain = ir_graph_intern(c->g, "tflite");
    char *nm = sy_asprintf("%s_%u", opname, oi);
    n->name = nm ? ir_graph_strdup(c->g, nm) : NULL;
    free(nm);
    n->opset = oc->version;
    n->inputs = ir_graph_alloc(c->g, (ins.len ? ins.len : 1) * sizeof *n->inputs);
    n->outputs = ir_graph_alloc(c->g, (outs.len ? outs.len : 1) * sizeof *n->outputs);
    if (!n->op || !n->domain || !n->name || !n->inputs || !n->outputs)
        return sy_error_oom();

    for (uint32_t k = 0; k < ins.len; k++) {
        int32_t ti = fb_vec_i32(&c->r, ins, k);
        CHECK_FB(c);
        n->inputs[k] = -1;
        n->n_inputs = k + 1;
        if (ti == -1)
            continue; /* omitted optional input */
        int32_t vi;
        SY_TRY(tensor_value(c, ti, &vi));
        const ir_value *v = &c->g->values[vi];
        if (v->producer < 0 && !(v->flags & (IR_VALUE_INITIALIZER | IR_VALUE_GRAPH_INPUT)))
            return sy_error(SY_ERR_INVALID_MODEL,
                            "%s: operator #%u (%s) input %u '%s' is not a graph input, a constant or the output of an earlier operator",
                            c->where, oi, opname, k, v->name);
        n->inputs[k] = vi;
    }
    for (uint32_t k = 0; k < outs.len; k++) {
        int32_t ti = fb_vec_i32(&c->r, outs, k);
        CHECK_FB(c);
        n->outputs[k] = -1;
        n->n_outputs = k + 1;
        int32_t vi;
        SY_TRY(tensor_value(c, ti, &vi));
        ir_value *v = &c->g->values[vi];
        if (v->producer >= 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: tensor '%s' is produced twice: by operator #%d and by operator #%u (%s)",
                            c->where, v->name, (int)v->producer, oi, opname);
        if (v->flags & (IR_VALUE_INITIALIZER | IR_VALUE_GRAPH_INPUT))
            return sy_error(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s) output '%s' is also a graph %s", c->where, oi,
                            opname, v->name, (v->flags & IR_VALUE_INITIALIZER) ? "constant" : "input");
        v->producer = (int32_t)oi;
        n->outputs[k] = vi;
    }
    SY_TRY(decode_options(c, op, oi, oc->code, n));
    SY_TRY(decode_intermediates(c, op, oi, n));
    return NULL;
}

/* ---- model ----------------------------------------------------------------------- */

static sy_status *read_opcodes(tctx *c, fb_table root)
{
    fb_vec v = fb_vector(&c->r, root, MODEL_OPCODES, 4, "operator_codes");
    CHECK_FB(c);
    c->n_opcodes = v.len;
    c->opcodes = calloc(v.len ? v.len : 1, sizeof *c->opcodes);
    if (!c->opcodes)
        return sy_error_oom();
    for (uint32_t i = 0; i < v.len; i++) {
        fb_table t = fb_vec_table(&c->r, v, i, "operator code");
        int8_t dep = fb_i8(&c->r, t, OPC_DEPRECATED_CODE, 0, "deprecated_builtin_code");
        int32_t code = fb_i32(&c->r, t, OPC_BUILTIN_CODE, 0, "builtin_code");
        int32_t ver = fb_i32(&c->r, t, OPC_VERSION, 1, "operator version");
        const char *custom = fb_string(&c->r, t, OPC_CUSTOM_CODE, NULL, "custom_code");
        CHECK_FB(c);
        /* old files fill only the byte field; new ones write 127 there for codes above it */
        c->opcodes[i].code = dep > code ? dep : code;
        c->opcodes[i].version = ver;
        c->opcodes[i].custom = custom;
        if (c->opcodes[i].code < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: operator code %u has the negative builtin code %d", c->where, i,
                            (int)c->opcodes[i].code);
        if (ver < 1)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: operator code %u (%s) has version %d", c->where, i,
                            tfl_op_name(c->opcodes[i].code), ver);
    }
    return NULL;
}

static sy_status *import_subgraph(tctx *c, fb_table sg)
{
    ir_graph *g = c->g;
    c->tensors = fb_vector(&c->r, sg, SG_TENSORS, 4, "subgraph tensors");
    fb_vec vin = fb_vector(&c->r, sg, SG_INPUTS, 4, "subgraph inputs");
    fb_vec vout = fb_vector(&c->r, sg, SG_OUTPUTS, 4, "subgraph outputs");
    fb_vec vops = fb_vector(&c->r, sg, SG_OPERATORS, 4, "subgraph operators");
    CHECK_FB(c);
    if (c->tensors.len > (uint32_t)INT32_MAX / 2 || vops.len > (uint32_t)INT32_MAX / 2)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: subgraph has too many tensors or operators", c->where);
    c->tval = malloc((c->tensors.len ? c->tensors.len : 1) * sizeof *c->tval);
    if (!c->tval)
        return sy_error_oom();
    for (uint32_t i = 0; i < c->tensors.len; i++)
        c->tval[i] = -1;

    g->inputs = calloc(vin.len ? vin.len : 1, sizeof *g->inputs);
    g->outputs = calloc(vout.len ? vout.len : 1, sizeof *g->outputs);
    if (!g->inputs || !g->outputs)
        return sy_error_oom();
    for (uint32_t i = 0; i < vin.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vin, i), vi;
        CHECK_FB(c);
        SY_TRY(tensor_value(c, ti, &vi));
        ir_value *v = &g->values[vi];
        if (v->flags & IR_VALUE_GRAPH_INPUT)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph input '%s' is listed twice", c->where, v->name);
        if (v->flags & IR_VALUE_INITIALIZER)
            continue; /* a constant listed as an input stays a constant */
        v->flags |= IR_VALUE_GRAPH_INPUT;
        g->inputs[g->n_inputs++] = vi;
    }
    for (uint32_t i = 0; i < vops.len; i++) {
        fb_table op = fb_vec_table(&c->r, vops, i, "operator");
        CHECK_FB(c);
        sy_status *st = import_operator(c, op, i);
        if (st)
            return st;
    }
    for (uint32_t i = 0; i < vout.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vout, i), vi;
        CHECK_FB(c);
        SY_TRY(tensor_value(c, ti, &vi));
        ir_value *v = &g->values[vi];
        if (v->producer < 0 && !(v->flags & (IR_VALUE_INITIALIZER | IR_VALUE_GRAPH_INPUT)))
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph output '%s' is never produced", c->where, v->name);
        if (v->flags & IR_VALUE_GRAPH_OUTPUT)
            return sy_error(SY_ERR_INVALID_MODEL, "%s: graph output '%s' is listed twice", c->where, v->name);
        v->flags |= IR_VALUE_GRAPH_OUTPUT;
        g->outputs[g->n_outputs++] = vi;
    }
    return NULL;
}

static sy_status *import_model(tctx *c)
{
    ir_model *m = c->m;
    fb_table root = fb_root(&c->r);
    CHECK_FB(c);
    uint32_t version = fb_u32(&c->r, root, MODEL_VERSION, 0, "model version");
    const char *desc = fb_string(&c->r, root, MODEL_DESCRIPTION, NULL, "model description");
    fb_vec sgs = fb_vector(&c->r, root, MODEL_SUBGRAPHS, 4, "subgraphs");
    c->buffers = fb_vector(&c->r, root, MODEL_BUFFERS, 4, "buffers");
    CHECK_FB(c);
    if (version != TFL_SCHEMA_VERSION)
        return sy_error(SY_ERR_UNSUPPORTED, "%s: TFLite schema version %u is not supported (this build reads version %u)",
                        c->where, version, TFL_SCHEMA_VERSION);
    if (sgs.len == 0)
        return sy_error(SY_ERR_INVALID_MODEL, "%s: the model has no subgraph", c->where);
    m->ir_version = version;
    m->producer = sy_strdup(desc ? desc : "");
    m->opsets = calloc(1, sizeof *m->opsets);
    if (!m->producer || !m->opsets)
        return sy_error_oom();
    m->opsets[0].domain = sy_strdup("tflite");
    if (!m->opsets[0].domain)
        return sy_error_oom();
    m->opsets[0].version = version;
    m->n_opsets = 1;
    SY_TRY(read_opcodes(c, root));

    fb_table sg = fb_vec_table(&c->r, sgs, 0, "subgraph");
    const char *sgname = fb_string(&c->r, sg, SG_NAME, NULL, "subgraph name");
    CHECK_FB(c);
    ir_graph_init(&m->graph, sgname && *sgname ? sgname : "main");
    if (!m->graph.name)
        return sy_error_oom();
    c->g = &m->graph;
    return import_subgraph(c, sg);
}

/* Takes ownership of the mapping (addr, size, is_mmap) whatever happens. */
static sy_status *import_mapped(void *addr, size_t size, bool is_mmap, const char *where, uint64_t max_tensor_bytes,
                                ir_model **out)
{
    ir_model *m = calloc(1, sizeof *m);
    ir_mapping *mp = calloc(1, sizeof *mp);
    if (!m || !mp) {
        free(m);
        free(mp);
        if (is_mmap)
            munmap(addr, size);
        else
            free(addr);
        return sy_error_oom();
    }
    mp->addr = addr;
    mp->size = size;
    mp->is_mmap = is_mmap;
    m->mappings = mp;
    m->n_mappings = 1;
    m->format = "tflite";
    m->path = sy_strdup(where);
    m->base_dir = sy_dirname(where);
    tctx c = {.max_tensor_bytes = max_tensor_bytes, .where = where, .m = m};
    fb_init(&c.r, addr, size);
    sy_status *st = (!m->path || !m->base_dir) ? sy_error_oom() : NULL;
    if (!st && !sy_tflite_is_tflite(addr, size))
        st = sy_error(SY_ERR_INVALID_MODEL, "%s: not a TFLite model (no \"TFL3\" identifier at byte 4)", where);
    if (!st)
        st = import_model(&c);
    free(c.tval);
    free(c.opcodes);
    if (st) {
        ir_model_free(m);
        return st;
    }
    *out = m;
    return NULL;
}

sy_status *sy_tflite_import_buffer(const void *data, size_t size, const char *name, uint64_t max_tensor_bytes,
                                   ir_model **out)
{
    if ((!data && size) || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tflite_import_buffer: NULL argument");
    if (!name)
        name = "<buffer>";
    /* constants borrow from the model's own copy, so the caller's buffer
     * may go away after the load */
    void *copy = malloc(size ? size : 1);
    if (!copy)
        return sy_error_oom();
    if (size)
        memcpy(copy, data, size);
    return import_mapped(copy, size, false, name, max_tensor_bytes, out);
}

sy_status *sy_tflite_import_file(const char *path, uint64_t max_tensor_bytes, ir_model **out)
{
    if (!path || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_tflite_import_file: NULL argument");
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2)
        return sy_error(SY_ERR_IO, "%s: not a regular file (%s)", path, sy_file_kind(sb.st_mode));
    if (fd < 0)
        return sy_error(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (sb.st_size < 8) {
        close(fd);
        return sy_error(SY_ERR_INVALID_MODEL, "%s: file is %lld bytes, too short for a TFLite model", path,
                        (long long)sb.st_size);
    }
    size_t size = (size_t)sb.st_size;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return sy_error(SY_ERR_IO, "%s: mmap: %s", path, strerror(errno));
    return import_mapped(p, size, true, path, max_tensor_bytes, out);
}
