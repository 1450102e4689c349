/* What the float and the int8 TFLite translations share
 * (train_tflite_writer.h): reading the subgraph's tensors and operators,
 * the refusals, and writing the ONNX model's names, nodes and constants.
 * The file is read with the core's bounds-checked FlatBuffer reader
 * (framework/tflite/tflite_fb.c), the ONNX model written with
 * sy_model_writer at opset 13. */
#include "train_tflite_writer.h"
#include "tl_files.h"

#include <switchyard/sy_sdk.h>
#include <switchyard/sy_tools.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- refusals ------------------------------------------------------------------ */

sy_status *tfw_oom(const tfw *c)
{
    return sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", c->what);
}

sy_status *tfw_corrupt(const tfw *c)
{
    return sy_status_create(SY_ERR_INVALID_MODEL, "%s: corrupt TFLite file: %s", c->where, c->r.err);
}

/* the caller's words after what they are about: "operator #I (NAME)" or "tensor #I 'NAME'" */
typedef struct why {
    char s[600];
} why;

static why vwhy(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
static why vwhy(const char *fmt, va_list ap)
{
    why w;
    vsnprintf(w.s, sizeof w.s, fmt, ap);
    return w;
}

sy_status *tfw_refuse(const tfw *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    why w = vwhy(fmt, ap);
    va_end(ap);
    return sy_status_create(SY_ERR_UNSUPPORTED, "%s: operator #%u (%s): %s", c->where, c->oi, c->opname, w.s);
}

sy_status *tfw_bad_tensor(const tfw *c, uint32_t i, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    why w = vwhy(fmt, ap);
    va_end(ap);
    return sy_status_create(SY_ERR_UNSUPPORTED, "%s: tensor #%u '%s': %s", c->where, i, c->t[i].vname, w.s);
}

const char *tfw_type_name(int type)
{
    const char *n = tfl_ttype_name(type);
    return n ? n : "an unknown TensorType";
}

/* ---- names, nodes, constants ------------------------------------------------------ */

bool tfw_name_used(const tfw *c, const char *s)
{
    for (size_t i = 0; i < c->n_names; i++)
        if (!strcmp(c->names[i], s))
            return true;
    return false;
}

char *tfw_claim(tfw *c, char *s)
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

const char *tfw_fresh(tfw *c, const char *base, const char *tag)
{
    for (int k = 1; k < 1000000; k++) {
        char *s = k == 1 ? tl_printf(&c->m->pl, "%s__%s", base, tag) : tl_printf(&c->m->pl, "%s__%s%d", base, tag, k);
        if (!s)
            return NULL;
        if (!tfw_name_used(c, s))
            return tfw_claim(c, s);
    }
    return NULL;
}

sy_status *tfw_node(tfw *c, const char *op, const char *const *in, size_t nin, const char *out,
                    const sy_model_attr *attrs, size_t nattr)
{
    char name[160];
    snprintf(name, sizeof name, "%s_%u_%s%u", c->opname, c->oi, op, c->seq++);
    return sy_model_writer_add_node(c->w, NULL, op, name, in, nin, &out, 1, attrs, nattr);
}

sy_model_attr tfw_int_attr(const char *name, int64_t v)
{
    return (sy_model_attr){.name = name, .type = SY_MODEL_ATTR_INT, .i = v};
}

sy_model_attr tfw_ints_attr(const char *name, const int64_t *v, size_t n)
{
    return (sy_model_attr){.name = name, .type = SY_MODEL_ATTR_INTS, .ints = v, .n = n};
}

sy_status *tfw_add_init(tfw *c, const char *name, sy_dtype dt, int32_t rank, const int64_t *dims, const void *data,
                        size_t nbytes)
{
    sy_tensor v = {.struct_size = sizeof v, .dtype = dt, .rank = rank, .data = (void *)data, .nbytes = nbytes};
    for (int32_t d = 0; d < rank; d++)
        v.dims[d] = dims[d];
    return sy_model_writer_add_initializer(c->w, name, &v);
}

sy_status *tfw_const_i64(tfw *c, const char *base, const char *tag, const int64_t *v, size_t n, bool scalar,
                         const char **name)
{
    const char *nm = tfw_fresh(c, base, tag);
    if (!nm)
        return tfw_oom(c);
    const int64_t len = (int64_t)n;
    *name = nm;
    return tfw_add_init(c, nm, SY_DT_INT64, scalar ? 0 : 1, &len, v, n * 8);
}

sy_status *tfw_const_f32(tfw *c, const char *base, const char *tag, float v, const char **name)
{
    const char *nm = tfw_fresh(c, base, tag);
    if (!nm)
        return tfw_oom(c);
    *name = nm;
    return tfw_add_init(c, nm, SY_DT_FLOAT32, 0, NULL, &v, 4);
}

sy_status *tfw_add_param(tfw *c, int32_t ti, int layout, int type)
{
    const tfw_tensor *t = &c->t[ti];
    if (c->m->n_params == c->cap_params) {
        size_t nc = c->cap_params ? c->cap_params * 2 : 16;
        tr_tfl_param *g = tl_alloc(&c->m->pl, nc * sizeof *g);
        if (!g)
            return tfw_oom(c);
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
    p->type = type;
    p->rank = t->rank;
    memcpy(p->dims, t->dims, sizeof p->dims);
    /* a buffer another constant reads too cannot take trained values alone */
    for (uint32_t k = 0; k < c->nt; k++)
        p->shared |= (int32_t)k != ti && c->t[k].buffer == t->buffer && c->t[k].data;
    return NULL;
}

void tfw_relayout(int layout, const int64_t *dims, size_t es, bool to_onnx, const void *src, void *dst)
{
    const uint8_t *s = src;
    uint8_t *d = dst;
    if (layout == TR_TFL_OHWI) { /* TFLite [O,H,W,I], ONNX [O,I,H,W] */
        int64_t O = dims[0], H = dims[1], W = dims[2], I = dims[3];
        for (int64_t o = 0; o < O; o++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t x = 0; x < W; x++)
                    for (int64_t i = 0; i < I; i++) {
                        size_t t = (size_t)(((o * H + h) * W + x) * I + i), n = (size_t)(((o * I + i) * H + h) * W + x);
                        memcpy(d + es * (to_onnx ? n : t), s + es * (to_onnx ? t : n), es);
                    }
    } else if (layout == TR_TFL_1HWC) { /* TFLite [1,H,W,C], ONNX [C,1,H,W] */
        int64_t H = dims[1], W = dims[2], C = dims[3];
        for (int64_t h = 0; h < H; h++)
            for (int64_t x = 0; x < W; x++)
                for (int64_t k = 0; k < C; k++) {
                    size_t t = (size_t)((h * W + x) * C + k), n = (size_t)((k * H + h) * W + x);
                    memcpy(d + es * (to_onnx ? n : t), s + es * (to_onnx ? t : n), es);
                }
    }
}

/* ---- tensors ------------------------------------------------------------------------ */

int64_t tfw_numel(const tfw_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

const char *tfw_shape_str(char *buf, size_t len, const int64_t *d, int32_t r)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int32_t i = 0; i < r && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)d[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
    return buf;
}

sy_status *tfw_check_shape(const tfw *c, int32_t out, const int64_t *dims, int32_t rank)
{
    const tfw_tensor *t = &c->t[out];
    bool same = t->rank == rank;
    for (int32_t d = 0; same && d < rank; d++)
        same = t->dims[d] == dims[d];
    if (same)
        return NULL;
    char a[128], b[128];
    return tfw_refuse(c, "output tensor #%d '%s' has the shape %s, the translation computes %s", out, t->vname,
                      tfw_shape_str(a, sizeof a, t->dims, t->rank), tfw_shape_str(b, sizeof b, dims, rank));
}

sy_status *tfw_axis(const tfw *c, int64_t a, int32_t rank, int64_t *out)
{
    if (a < -rank || a >= rank)
        return tfw_refuse(c, "axis %lld is out of range for rank %d", (long long)a, rank);
    *out = a < 0 ? a + rank : a;
    return NULL;
}

sy_status *tfw_reduce_axes(const tfw *c, const tfw_tensor *x, const int64_t *v, size_t n, bool keep, int64_t *axes,
                           size_t *na, int64_t *od, int32_t *r)
{
    bool red[TFW_MAX_RANK] = {false};
    for (size_t i = 0; i < n; i++) {
        int64_t a = 0;
        sy_status *st = tfw_axis(c, v[i], x->rank, &a);
        if (st)
            return st;
        red[a] = true;
    }
    *na = 0;
    *r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (red[d])
            axes[(*na)++] = d;
        if (!red[d] || keep)
            od[(*r)++] = red[d] ? 1 : x->dims[d];
    }
    return NULL;
}

sy_status *tfw_const_ints(const tfw *c, int32_t ti, int64_t *out, size_t cap, size_t *n, const char *what)
{
    if (!tfw_tensor_ok(c, ti))
        return tfw_refuse(c, "%s tensor %d is out of range", what, ti);
    const tfw_tensor *t = &c->t[ti];
    if (!t->data || (t->type != TT_INT32 && t->type != TT_INT64))
        return tfw_refuse(c, "the %s (tensor #%d '%s') is not an int32 constant", what, ti, t->vname);
    size_t es = t->type == TT_INT32 ? 4 : 8, cnt = t->nbytes / es;
    if (cnt > cap)
        return tfw_refuse(c, "the %s (tensor #%d '%s') has %zu values", what, ti, t->vname, cnt);
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

/* ---- operators ---------------------------------------------------------------------- */

const tfl_field *tfw_field(const tfw_opts *p, const char *name)
{
    for (uint32_t k = 0; p->d && k < p->d->n_fields; k++)
        if (!strcmp(p->d->fields[k].name, name))
            return &p->d->fields[k];
    return NULL;
}

int32_t tfw_opt_int(tfw *c, const tfw_opts *p, const char *name)
{
    const tfl_field *f = tfw_field(p, name);
    if (!f)
        return 0;
    switch ((tfl_field_kind)f->kind) {
    case TFL_F_BOOL: return fb_u8(&c->r, p->o, f->id, (uint8_t)f->def, f->name) != 0;
    case TFL_F_I32: return fb_i32(&c->r, p->o, f->id, (int32_t)f->def, f->name);
    default: return fb_i8(&c->r, p->o, f->id, (int8_t)f->def, f->name);
    }
}

float tfw_opt_f32(tfw *c, const tfw_opts *p, const char *name)
{
    const tfl_field *f = tfw_field(p, name);
    return f ? fb_f32(&c->r, p->o, f->id, (float)f->def, f->name) : 0.0f;
}

sy_status *tfw_op_code(tfw *c, fb_table op, int32_t *code)
{
    uint32_t opc = fb_u32(&c->r, op, OP_OPCODE_INDEX, 0, "opcode_index");
    TFW_CHECK_FB(c);
    if (opc >= c->n_codes)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: operator #%u uses opcode_index %u, but the model has %u "
                                "operator codes", c->where, c->oi, opc, c->n_codes);
    *code = c->codes[opc];
    const char *nm = tfl_op_name(*code);
    c->opname = nm && *nm ? nm : "an unknown builtin code";
    return NULL;
}

sy_status *tfw_op_options(tfw *c, fb_table op, int32_t code, tfw_opts *p)
{
    uint8_t otype = fb_u8(&c->r, op, OP_OPTIONS_TYPE, 0, "builtin_options_type");
    TFW_CHECK_FB(c);
    *p = (tfw_opts){.d = tfl_op_desc_of(code)};
    if (!otype)
        return NULL;
    if (!p->d || otype != p->d->options_type)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: operator #%u (%s) carries builtin options of type %u",
                                c->where, c->oi, c->opname, otype);
    p->o = fb_subtable(&c->r, op, OP_OPTIONS, "builtin_options");
    TFW_CHECK_FB(c);
    return NULL;
}

sy_status *tfw_op_io(tfw *c, fb_table op, uint32_t max_in, bool bias_ok, tfw_opio *io)
{
    fb_vec ins = fb_vector(&c->r, op, OP_INPUTS, 4, "operator inputs");
    fb_vec outs = fb_vector(&c->r, op, OP_OUTPUTS, 4, "operator outputs");
    TFW_CHECK_FB(c);
    if (outs.len != 1)
        return tfw_refuse(c, "%u outputs (one is translated)", outs.len);
    if (max_in > TFW_MAX_INPUTS)
        max_in = TFW_MAX_INPUTS;
    if (ins.len < 1 || ins.len > max_in)
        return tfw_refuse(c, "%u inputs (at most %u are translated)", ins.len, max_in);
    *io = (tfw_opio){.nin = ins.len};
    for (uint32_t k = 0; k < ins.len; k++) {
        io->in[k] = fb_vec_i32(&c->r, ins, k);
        TFW_CHECK_FB(c);
        if (io->in[k] == -1 && !(k == 2 && bias_ok)) /* only a bias may be omitted */
            return tfw_refuse(c, "input %u is omitted", k);
        if (io->in[k] != -1 && !tfw_tensor_ok(c, io->in[k]))
            return tfw_refuse(c, "input %u is tensor %d, out of range", k, io->in[k]);
    }
    if (io->nin == 3 && io->in[2] == -1)
        io->nin = 2; /* no bias */
    io->out = fb_vec_i32(&c->r, outs, 0);
    TFW_CHECK_FB(c);
    if (!tfw_tensor_ok(c, io->out))
        return tfw_refuse(c, "output tensor %d is out of range", io->out);
    const tfw_tensor *y = &c->t[io->out];
    if (y->available)
        return tfw_refuse(c, "output tensor #%d '%s' is a graph input, a constant or written twice", io->out,
                          y->vname);
    return NULL;
}

sy_status *tfw_pad_axis(const tfw *c, int padding, int64_t in, int64_t k, int64_t stride, int64_t dil,
                        int64_t max_step, int64_t *out, int64_t *before, int64_t *after)
{
    if (stride < 1 || dil < 1 || k < 1 || (max_step && (stride > max_step || dil > max_step)))
        return tfw_refuse(c, "stride %lld, dilation %lld, kernel %lld", (long long)stride, (long long)dil,
                          (long long)k);
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
            return tfw_refuse(c, "the kernel (%lld with dilation) is larger than the input (%lld)", (long long)eff,
                              (long long)in);
        *out = (in - eff) / stride + 1;
        *before = *after = 0;
    } else {
        return tfw_refuse(c, "padding %d is neither SAME nor VALID", padding);
    }
    return NULL;
}

sy_status *tfw_window_of(tfw *c, const tfw_opts *p, bool pool, int64_t h, int64_t w, int64_t kh, int64_t kw,
                         int64_t max_step, tfw_window *win)
{
    int padding = tfw_opt_int(c, p, "padding");
    *win = (tfw_window){.s = {tfw_opt_int(c, p, "stride_h"), tfw_opt_int(c, p, "stride_w")}, .d = {1, 1},
                        .act = tfw_opt_int(c, p, "fused_activation_function")};
    if (pool) {
        kh = tfw_opt_int(c, p, "filter_height");
        kw = tfw_opt_int(c, p, "filter_width");
    } else {
        win->d[0] = tfw_opt_int(c, p, "dilation_h_factor");
        win->d[1] = tfw_opt_int(c, p, "dilation_w_factor");
    }
    TFW_CHECK_FB(c);
    win->k[0] = kh, win->k[1] = kw;
    /* ONNX's pads: the leading ones of both axes, then the trailing ones */
    sy_status *st = tfw_pad_axis(c, padding, h, kh, win->s[0], win->d[0], max_step, &win->oh, &win->pads[0],
                                 &win->pads[2]);
    return st ? st : tfw_pad_axis(c, padding, w, kw, win->s[1], win->d[1], max_step, &win->ow, &win->pads[1],
                                  &win->pads[3]);
}

static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

sy_status *tfw_nchw_node(tfw *c, const char *op, const char *x, const char *const *more, size_t nmore,
                         const char *xt, const char *yt, const char *out, const tfw_window *win, int64_t conv_group)
{
    const char *in[4] = {xt};
    for (size_t k = 0; k < nmore && k < 3; k++)
        in[1 + k] = more[k];
    sy_model_attr a[5] = {tfw_ints_attr("kernel_shape", win->k, 2), tfw_ints_attr("strides", win->s, 2),
                          tfw_ints_attr("pads", win->pads, 4), tfw_ints_attr("dilations", win->d, 2),
                          tfw_int_attr("group", conv_group)};
    sy_model_attr tin = tfw_ints_attr("perm", TO_NCHW, 4), tout = tfw_ints_attr("perm", TO_NHWC, 4);
    sy_status *st;
    if ((st = tfw_node(c, "Transpose", &x, 1, xt, &tin, 1)) ||
        (st = tfw_node(c, op, in, 1 + (nmore < 3 ? nmore : 3), yt, a, conv_group > 0 ? 5 : 3)))
        return st;
    return tfw_node(c, "Transpose", &yt, 1, out, &tout, 1);
}

/* ---- the subgraph --------------------------------------------------------------------- */

static sy_status *buffer_bytes(tfw *c, uint32_t bi, uint32_t ti, tfw_tensor *t)
{
    if (bi >= c->buffers.len)
        return sy_status_create(SY_ERR_INVALID_MODEL,
                                "%s: tensor #%u refers to buffer %u, but the model has %u buffers", c->where, ti, bi,
                                c->buffers.len);
    fb_table b = fb_vec_table(&c->r, c->buffers, bi, "buffer");
    fb_vec d = fb_vector(&c->r, b, BUF_DATA, 1, "buffer data");
    uint64_t off = fb_u64(&c->r, b, BUF_OFFSET, 0, "buffer offset");
    uint64_t size = fb_u64(&c->r, b, BUF_SIZE, 0, "buffer size");
    TFW_CHECK_FB(c);
    if (off > 1) { /* data after the FlatBuffer (models over 2 GB) */
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

/* Tensor i: its name (the core importer's: "tensor_<i>" when it has none,
 * "#<i>" after a repeated one), shape, type and constant bytes. */
static sy_status *read_tensor(tfw *c, fb_vec tv, uint32_t i, const tfw_hooks *h)
{
    tfw_tensor *ti = &c->t[i];
    ti->layout = -1;
    fb_table t = fb_vec_table(&c->r, tv, i, "tensor");
    const char *nm = fb_string(&c->r, t, TENSOR_NAME, NULL, "tensor name");
    fb_vec shape = fb_vector(&c->r, t, TENSOR_SHAPE, 4, "tensor shape");
    ti->type = fb_i8(&c->r, t, TENSOR_TYPE, 0, "tensor type");
    ti->buffer = fb_u32(&c->r, t, TENSOR_BUFFER, 0, "tensor buffer");
    fb_table q = fb_subtable(&c->r, t, TENSOR_QUANT, "tensor quantization");
    fb_vec sc = fb_vector(&c->r, q, Q_SCALE, 4, "quantization scale");
    bool sparse = fb_has(&c->r, t, TENSOR_SPARSITY);
    TFW_CHECK_FB(c);
    ti->nq = sc.len;
    char *vn = !nm || !*nm ? tl_printf(&c->m->pl, "tensor_%u", i)
               : tfw_name_used(c, nm) ? tl_printf(&c->m->pl, "%s#%u", nm, i)
                                      : tl_strdup(&c->m->pl, nm);
    if (!vn)
        return tfw_oom(c);
    if (tfw_name_used(c, vn))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u: name '%s' is used twice", c->where, i, vn);
    if (!(ti->vname = tfw_claim(c, vn)))
        return tfw_oom(c);
    if (sparse)
        return tfw_bad_tensor(c, i, "a sparse tensor is not translated");
    if (shape.len > TFW_MAX_RANK)
        return tfw_bad_tensor(c, i, "rank %u (at most %d is translated)", shape.len, TFW_MAX_RANK);
    ti->rank = (int32_t)shape.len;
    /* tfw_numel multiplies the dimensions wherever a shape is needed: a
     * product past int64 is refused here, once for every tensor */
    int64_t count = 1;
    for (uint32_t d = 0; d < shape.len; d++) {
        int32_t x = fb_vec_i32(&c->r, shape, d);
        TFW_CHECK_FB(c);
        if (x < 0)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u '%s' has dimension %u = %d", c->where, i,
                                    vn, d, x);
        ti->dims[d] = x;
        if (__builtin_mul_overflow(count, (int64_t)x, &count))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor #%u '%s' declares more than 2^63 elements",
                                    c->where, i, vn);
    }
    sy_status *st = buffer_bytes(c, ti->buffer, i, ti);
    if (!st && h->tensor)
        st = h->tensor(c, i, t);
    if (st)
        return st;
    if (ti->data && (uint64_t)count * elem_size(ti->type) != ti->nbytes)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: constant tensor #%u '%s' (%s, %lld elements) has a "
                                "buffer of %zu bytes", c->where, i, vn, tfw_type_name(ti->type), (long long)count,
                                ti->nbytes);
    ti->available = ti->data != NULL;
    return NULL;
}

static sy_status *read_tensors(tfw *c, fb_table sg, const tfw_hooks *h)
{
    fb_vec tv = fb_vector(&c->r, sg, SG_TENSORS, 4, "subgraph tensors");
    TFW_CHECK_FB(c);
    if (tv.len > (1u << 24))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: subgraph %u has %u tensors", c->where, c->m->subgraph,
                                tv.len);
    c->nt = tv.len;
    c->t = tl_alloc(&c->m->pl, (tv.len ? tv.len : 1) * sizeof *c->t);
    if (!c->t)
        return tfw_oom(c);
    memset(c->t, 0, (tv.len ? tv.len : 1) * sizeof *c->t);
    for (uint32_t i = 0; i < tv.len; i++) {
        sy_status *st = read_tensor(c, tv, i, h);
        if (st)
            return st;
    }
    return h->tensors_done ? h->tensors_done(c) : NULL;
}

static sy_status *translate(tfw *c, const char *subgraph, int64_t index, const tfw_hooks *h)
{
    fb_table root = fb_root(&c->r);
    TFW_CHECK_FB(c);
    uint32_t version = fb_u32(&c->r, root, MODEL_VERSION, 0, "model version");
    fb_vec sgs = fb_vector(&c->r, root, MODEL_SUBGRAPHS, 4, "subgraphs");
    fb_vec codes = fb_vector(&c->r, root, MODEL_OPCODES, 4, "operator_codes");
    c->buffers = fb_vector(&c->r, root, MODEL_BUFFERS, 4, "buffers");
    TFW_CHECK_FB(c);
    if (version != 3)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: TFLite schema version %u (version 3 is translated)", c->where,
                                version);
    if (!sgs.len)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: the model has no subgraph", c->where);
    c->n_codes = codes.len;
    c->codes = tl_alloc(&c->m->pl, (codes.len ? codes.len : 1) * sizeof *c->codes);
    if (!c->codes)
        return tfw_oom(c);
    for (uint32_t i = 0; i < codes.len; i++) {
        fb_table t = fb_vec_table(&c->r, codes, i, "operator code");
        int8_t dep = fb_i8(&c->r, t, OPC_DEPRECATED_CODE, 0, "deprecated_builtin_code");
        int32_t code = fb_i32(&c->r, t, OPC_BUILTIN_CODE, 0, "builtin_code");
        TFW_CHECK_FB(c);
        c->codes[i] = dep > code ? dep : code; /* the larger: files from before builtin_code set only the old one */
    }
    sy_status *st = tr_tflite_pick_subgraph(c->r.p, c->r.n, c->where, subgraph, index, &c->m->subgraph);
    if (st)
        return st;
    fb_table sg = fb_vec_table(&c->r, sgs, c->m->subgraph, "subgraph");
    fb_vec vin = fb_vector(&c->r, sg, SG_INPUTS, 4, "subgraph inputs");
    fb_vec vout = fb_vector(&c->r, sg, SG_OUTPUTS, 4, "subgraph outputs");
    fb_vec vops = fb_vector(&c->r, sg, SG_OPERATORS, 4, "subgraph operators");
    TFW_CHECK_FB(c);
    if ((st = read_tensors(c, sg, h)))
        return st;
    for (uint32_t i = 0; i < vin.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vin, i);
        TFW_CHECK_FB(c);
        if (!tfw_tensor_ok(c, ti))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph input %u is tensor %d, out of range", c->where, i,
                                    ti);
        tfw_tensor *t = &c->t[ti];
        if (t->data)
            continue; /* a constant listed as an input stays a constant */
        if (t->available)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph input '%s' is listed twice", c->where, t->vname);
        sy_dtype dt = SY_DT_FLOAT32;
        if ((st = h->input(c, ti, &dt)))
            return st;
        t->available = true;
        if ((st = sy_model_writer_add_input(c->w, t->vname, dt, t->rank, t->dims)))
            return st;
    }
    for (uint32_t i = 0; i < vops.len; i++) {
        c->oi = i;
        fb_table op = fb_vec_table(&c->r, vops, i, "operator");
        TFW_CHECK_FB(c);
        if ((st = h->op(c, op)))
            return st;
        if (fb_failed(&c->r))
            return tfw_corrupt(c);
    }
    if (!vout.len)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: the model has no output", c->where);
    for (uint32_t i = 0; i < vout.len; i++) {
        int32_t ti = fb_vec_i32(&c->r, vout, i);
        TFW_CHECK_FB(c);
        if (!tfw_tensor_ok(c, ti) || !c->t[ti].available || c->t[ti].data)
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: graph output %u (tensor %d) is not an operator's "
                                    "output", c->where, i, ti);
        const tfw_tensor *t = &c->t[ti];
        if ((st = sy_model_writer_add_output(c->w, t->vname, h->output(t), t->rank, t->dims)))
            return st;
    }
    return NULL;
}

sy_status *tfw_translate(const uint8_t *data, size_t size, const char *where, const char *subgraph, int64_t index,
                         const tfw_hooks *h, const char *what, tr_tfl_model *out)
{
    memset(out, 0, sizeof *out);
    if (!tr_tflite_is_tflite(data, size))
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: not a TFLite model (no \"TFL3\" identifier at byte 4)",
                                where);
    tfw c = {.where = where, .what = what, .m = out, .opname = "none"};
    fb_init(&c.r, data, size);
    sy_status *st = sy_model_writer_create(13, &c.w);
    if (!st)
        st = sy_model_writer_set_producer(c.w, h->producer);
    if (!st)
        st = translate(&c, subgraph, index, h);
    if (!st && out->pl.oom)
        st = tfw_oom(&c);
    void *buf = NULL;
    if (!st)
        st = sy_model_writer_pack(c.w, &buf, &out->onnx_len);
    out->onnx = buf;
    sy_model_writer_release(c.w);
    return st;
}

/* ---- export ------------------------------------------------------------------------------ */

sy_status *tfw_export(const char *src, uint32_t subgraph, const char *path, size_t n, const char *const *names,
                      const void *const *values, const size_t *nbytes, tfw_translate_fn translate_fn,
                      const char *noun, const char *values_are)
{
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(src, &data, &size);
    if (st)
        return st;
    tr_tfl_model m;
    st = translate_fn(data, size, src, NULL, subgraph, &m);
    for (size_t k = 0; !st && k < n; k++) {
        const tr_tfl_param *p = NULL;
        for (size_t i = 0; i < m.n_params && !p; i++)
            if (!strcmp(m.params[i].name, names[k]))
                p = &m.params[i];
        if (!p) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: trained tensor '%s' is not %s of the TFLite model", src,
                                  names[k], noun);
            break;
        }
        if (p->nbytes != nbytes[k] || p->offset > size || p->nbytes > size - p->offset) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: trained tensor '%s' has %zu bytes, its buffer %llu", src,
                                  names[k], nbytes[k], (unsigned long long)p->nbytes);
            break;
        }
        if (p->shared) {
            st = sy_status_create(SY_ERR_UNSUPPORTED, "%s: trained tensor '%s' shares buffer %u with another tensor, "
                                  "so its trained %s cannot be written back alone", src, names[k], p->buffer,
                                  values_are);
            break;
        }
        /* little-endian floats, int32s and int8 codes, as the host stores them,
         * moved element by element back to TFLite's layout */
        if (p->layout == TR_TFL_AS_IS)
            memcpy(data + p->offset, values[k], nbytes[k]);
        else
            tfw_relayout(p->layout, p->dims, p->type == TT_INT8 ? 1 : 4, false, values[k], data + p->offset);
    }
    tr_tflite_model_free(&m);
    if (!st)
        st = tl_write_atomic(path, data, size, NULL, 0);
    free(data);
    return st;
}

/* ---- shape operators shared by the two translations ---------------------------- */

/* SQUEEZE's axes (its squeeze_dims, each of size 1; none: every axis of
 * size 1), the output's shape checked. */
sy_status *tfw_squeeze_axes(tfw *c, const tfw_opio *io, const tfw_opts *p, int64_t *axes, size_t *na_out)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    const tfl_field *f = tfw_field(p, "squeeze_dims");
    fb_vec v = f ? fb_vector(&c->r, p->o, f->id, 4, f->name) : (fb_vec){0, 0};
    TFW_CHECK_FB(c);
    int64_t out[TFW_MAX_RANK];
    size_t na = 0;
    bool sq[TFW_MAX_RANK] = {false};
    if (v.len > (uint32_t)x->rank)
        return tfw_refuse(c, "%u squeeze_dims for rank %d", v.len, x->rank);
    for (uint32_t i = 0; i < v.len; i++) {
        int64_t a = 0;
        sy_status *st = tfw_axis(c, fb_vec_i32(&c->r, v, i), x->rank, &a);
        if (st)
            return st;
        if (x->dims[a] != 1)
            return tfw_refuse(c, "squeezes axis %lld of size %lld", (long long)a, (long long)x->dims[a]);
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
    *na_out = na;
    return tfw_check_shape(c, io->out, out, r);
}

/* TRANSPOSE's constant permutation (one of the input's axes each), the
 * output's shape checked. */
sy_status *tfw_transpose_perm(tfw *c, const tfw_opio *io, int64_t *perm)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    int64_t od[TFW_MAX_RANK];
    size_t n;
    sy_status *st = io->nin == 2 ? tfw_const_ints(c, io->in[1], perm, TFW_MAX_RANK, &n, "permutation")
                                 : tfw_refuse(c, "%u inputs (TRANSPOSE has 2)", io->nin);
    if (st)
        return st;
    if (n != (size_t)x->rank)
        return tfw_refuse(c, "a permutation of %zu axes for rank %d", n, x->rank);
    bool seen[TFW_MAX_RANK] = {false};
    for (size_t d = 0; d < n; d++) {
        if (perm[d] < 0 || perm[d] >= x->rank || seen[perm[d]])
            return tfw_refuse(c, "the permutation is not one of the %d axes", x->rank);
        seen[perm[d]] = true;
        od[d] = x->dims[perm[d]];
    }
    return tfw_check_shape(c, io->out, od, x->rank);
}

/* STRIDED_SLICE: its spec resolved by the SDK's sy_ss_resolve (TF's rules:
 * ellipsis, new axes, trailing axes taken whole, shrink; TFLite's offset,
 * ends counted from their begins) into a full-rank Slice's starts b, ends e
 * and steps s (negative ones too; a negative step taking at most one
 * element is written 1, the same element, so a batch axis of 1 stays
 * whole), the shrunk axes (bits over input axes) and the new ones (bits over
 * output axes), for tfw_emit_slice. */
sy_status *tfw_strided_slice(tfw *c, const tfw_opio *io, const tfw_opts *p, int64_t *b, int64_t *e, int64_t *s,
                             uint32_t *shrink_out, uint32_t *new_out)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    size_t nb, ne, ns;
    sy_status *st = io->nin == 4 ? tfw_const_ints(c, io->in[1], b, TFW_MAX_RANK, &nb, "begin")
                                 : tfw_refuse(c, "%u inputs (STRIDED_SLICE has 4)", io->nin);
    if (!st)
        st = tfw_const_ints(c, io->in[2], e, TFW_MAX_RANK, &ne, "end");
    if (!st)
        st = tfw_const_ints(c, io->in[3], s, TFW_MAX_RANK, &ns, "strides");
    if (st)
        return st;
    sy_ss_spec spec = {.n = (int32_t)nb,
                       .begin = b,
                       .end = e,
                       .strides = s,
                       .begin_mask = tfw_opt_int(c, p, "begin_mask"),
                       .end_mask = tfw_opt_int(c, p, "end_mask"),
                       .ellipsis_mask = tfw_opt_int(c, p, "ellipsis_mask"),
                       .new_axis_mask = tfw_opt_int(c, p, "new_axis_mask"),
                       .shrink_axis_mask = tfw_opt_int(c, p, "shrink_axis_mask"),
                       .offset = tfw_opt_int(c, p, "offset") != 0};
    TFW_CHECK_FB(c);
    if (ne != nb || ns != nb)
        return tfw_refuse(c, "begin, end and strides of %zu, %zu and %zu values", nb, ne, ns);
    sy_ss_plan plan;
    char why[160];
    if (sy_ss_resolve(x->rank, x->dims, &spec, &plan, why, sizeof why))
        return tfw_refuse(c, "%s", why);
    uint32_t shrink = 0, new_axes = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        s[d] = plan.step[d] < 0 && plan.len[d] < 2 ? 1 : plan.step[d];
        b[d] = plan.len[d] || plan.start[d] > 0 ? plan.start[d] : 0; /* an empty run down from -1: 0 to 0 */
        e[d] = plan.len[d] ? plan.start[d] + (plan.len[d] - 1) * s[d] + (s[d] > 0 ? 1 : -1) : b[d];
        shrink |= (uint32_t)plan.shrunk[d] << d;
    }
    for (int32_t j = 0; j < plan.out_rank; j++)
        new_axes |= (uint32_t)plan.new_axis[j] << j;
    *shrink_out = shrink, *new_out = new_axes;
    return NULL;
}

/* Slice of [starts, ends) with non-zero steps over every axis (a negative
 * step runs down from starts to above ends), then Squeeze of the `shrink`
 * axes (bits over input axes), then Unsqueeze of the new axes (`new_axes`:
 * bits over output axes). An axis taken whole ends at INT64_MAX (ONNX clamps
 * it to the axis), so the model's batch of 1 does not cut a training batch
 * of more samples; a negative step's end below 0 (down to element 0) is
 * written INT64_MIN, as ONNX would read -1 as the last element. `a` is
 * the value sliced, `out` the last node's output; `stage` (or NULL) turns
 * each intermediate value into the one the next node reads (the int8
 * translation's QuantizeLinear → DequantizeLinear of the output's
 * quantization, so that each node runs on codes). */
sy_status *tfw_emit_slice(tfw *c, const tfw_opio *io, const char *a, const char *out, const int64_t *starts,
                          const int64_t *ends, const int64_t *steps, uint32_t shrink, uint32_t new_axes,
                          tfw_stage_fn stage)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    int64_t od[TFW_MAX_RANK], axes[TFW_MAX_RANK], en[TFW_MAX_RANK], sq[TFW_MAX_RANK], na[TFW_MAX_RANK];
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
                return tfw_refuse(c, "shrinks axis %d of %lld values", d, (long long)len);
            sq[nsq++] = d;
        } else {
            while (r < TFW_MAX_RANK && new_axes >> r & 1)
                na[nna++] = r, od[r++] = 1;
            if (r == TFW_MAX_RANK)
                return tfw_refuse(c, "an output past rank %d", TFW_MAX_RANK);
            od[r++] = len;
        }
    }
    while (r < TFW_MAX_RANK && new_axes >> r & 1) /* new axes after the last input axis kept */
        na[nna++] = r, od[r++] = 1;
    const char *sn = NULL, *enn = NULL, *an = NULL, *pn = NULL;
    sy_status *st;
    if ((st = tfw_check_shape(c, io->out, od, r)) ||
        (st = tfw_const_i64(c, out, "starts", starts, (size_t)x->rank, false, &sn)) ||
        (st = tfw_const_i64(c, out, "ends", en, (size_t)x->rank, false, &enn)) ||
        (st = tfw_const_i64(c, out, "axes", axes, (size_t)x->rank, false, &an)) ||
        (st = tfw_const_i64(c, out, "steps", steps, (size_t)x->rank, false, &pn)))
        return st;
    const char *v = out;
    if ((nsq || nna) && !(v = tfw_fresh(c, out, "sliced")))
        return tfw_oom(c);
    if ((st = tfw_node(c, "Slice", (const char *[]){a, sn, enn, an, pn}, 5, v, NULL, 0)))
        return st;
    if ((nsq || nna) && stage && (st = stage(c, io->out, v, &v)))
        return st;
    if (nsq) {
        const char *qn = NULL, *sqd = out;
        if (nna && !(sqd = tfw_fresh(c, out, "squeezed")))
            return tfw_oom(c);
        if ((st = tfw_const_i64(c, out, "shrink_axes", sq, nsq, false, &qn)) ||
            (st = tfw_node(c, "Squeeze", (const char *[]){v, qn}, 2, sqd, NULL, 0)))
            return st;
        v = sqd;
        if (nna && stage && (st = stage(c, io->out, v, &v)))
            return st;
    }
    if (!nna)
        return NULL;
    const char *un = NULL;
    if ((st = tfw_const_i64(c, out, "new_axes", na, nna, false, &un)))
        return st;
    return tfw_node(c, "Unsqueeze", (const char *[]){v, un}, 2, out, NULL, 0);
}
