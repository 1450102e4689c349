/* QAS-INT8 fine-tuning of the last fully connected layers of a QDQ model
 * (sy_qas_session_*, sy_train.h; Lin et al. 2022's Quantization-Aware
 * Scaling, the arithmetic in plugin_sdk/kernels/qas.c).
 *
 * The model is cut where the trained layers begin: the front (everything
 * up to the int8 codes the first trained layer reads) becomes a model of
 * its own, run by an ordinary session (its QDQ folded into the integer
 * kernels, so the frozen part runs as it does at inference); the trained
 * layers — a chain of Gemm, MatMul (of a transposed B) or Conv [→ Relu] →
 * QuantizeLinear ending the model, with a Flatten/Reshape before a Gemm and
 * an int8 MaxPool after a Conv looked through (an int8 TFLite MAX_POOL_2D's
 * too, between its layout Transposes: pooled on the NCHW buffer) — run in
 * the qas kernels,
 * which keep their int8 codes, int32 biases, float master copies and
 * momentum. */
#include "tl_files.h"
#include "train_qas_internal.h"
#include "train_tflite.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEED_WS63_ONLY "当前端侧训练仅在ws63支持"

/* a node's name for messages (ONNX names are optional) */
static const char *node_name(const Onnx__NodeProto *n)
{
    return n->name && *n->name ? n->name : "(unnamed)";
}

static sy_status *err(sy_status_code c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static sy_status *err(sy_status_code c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sy_status_create(c, "sy_qas: %s", msg);
}

static const Onnx__NodeProto *producer(const Onnx__GraphProto *g, const char *v)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!strcmp(g->node[i]->output[k], v))
                return g->node[i];
    return NULL;
}

static size_t consumers(const Onnx__GraphProto *g, const char *v)
{
    size_t c = 0;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            c += !strcmp(g->node[i]->input[k], v);
    for (size_t i = 0; i < g->n_output; i++)
        c += !strcmp(g->output[i]->name, v);
    return c;
}

static int64_t numel(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        n *= t->dims[i];
    return n;
}

/* element i of a constant as a double (raw data or the typed fields) */
static bool elem(const Onnx__TensorProto *t, int64_t i, double *v)
{
    if (!t || i >= numel(t))
        return false;
    size_t es = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8    ? 1
                : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4
                : t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT ? 4
                                                                      : 0;
    if (!es)
        return false;
    if (t->raw_data.len == (size_t)numel(t) * es) {
        const uint8_t *p = t->raw_data.data + (size_t)i * es;
        if (es == 1) {
            *v = (int8_t)p[0];
        } else if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32) {
            int32_t x;
            memcpy(&x, p, 4);
            *v = x;
        } else {
            float x;
            memcpy(&x, p, 4);
            *v = x;
        }
        return true;
    }
    if (t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->n_float_data == (size_t)numel(t)) {
        *v = t->float_data[i];
        return true;
    }
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT && t->n_int32_data == (size_t)numel(t)) {
        *v = t->int32_data[i];
        return true;
    }
    return false;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

/* the DequantizeLinear producing input `slot` of n, NULL when none */
static const Onnx__NodeProto *dq_of(const Onnx__GraphProto *g, const Onnx__NodeProto *n, size_t slot)
{
    if (slot >= n->n_input || !*n->input[slot])
        return NULL;
    const Onnx__NodeProto *p = producer(g, n->input[slot]);
    return p && !strcmp(p->op_type, "DequantizeLinear") && p->n_input >= 2 ? p : NULL;
}

/* a Transpose of rank 4 with the permutation p (an int8 TFLite model's
 * layout Transposes: (0,3,1,2) NHWC -> NCHW before a Conv, (0,2,3,1) after) */
static bool is_layout(const Onnx__NodeProto *t, const int64_t p[4])
{
    if (!t || strcmp(t->op_type, "Transpose") || t->n_input != 1 || t->n_output != 1)
        return false;
    const Onnx__AttributeProto *a = attr(t, "perm");
    return a && a->n_ints == 4 && !memcmp(a->ints, p, 4 * sizeof *p);
}

static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

/* scale and zero point of a per-tensor (de)quantization node */
static bool qparams(const Onnx__GraphProto *g, const Onnx__NodeProto *q, float *scale, int32_t *zp)
{
    const Onnx__TensorProto *s = tr_qas_init(g, q->input[1]);
    const Onnx__TensorProto *z = q->n_input > 2 ? tr_qas_init(g, q->input[2]) : NULL;
    double sv, zv = 0;
    if (!s || numel(s) != 1 || !elem(s, 0, &sv) || !(sv > 0))
        return false;
    if (!z || z->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8 || numel(z) != 1 || !elem(z, 0, &zv))
        return false; /* int8 codes only (ONNX's default zero point is uint8) */
    *scale = (float)sv;
    *zp = (int32_t)zv;
    return true;
}

/* a Conv's attributes within the kernels' reach: group 1, dilation 1,
 * explicit pads (its 3x3 is the ws63 row's to check) */
static sy_status *read_conv_attrs(const Onnx__NodeProto *cv, qas_layer *L)
{
    const char *nm = node_name(cv);
    const Onnx__AttributeProto *a;
    if ((a = attr(cv, "group")) && a->i != 1)
        return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): group %lld: the QAS kernels take group 1", nm,
                   (long long)a->i);
    if ((a = attr(cv, "auto_pad")) && a->s.len && !(a->s.len == 6 && !memcmp(a->s.data, "NOTSET", 6)))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): auto_pad: the QAS kernels take explicit pads", nm);
    if ((a = attr(cv, "dilations")))
        for (size_t i = 0; i < a->n_ints; i++)
            if (a->ints[i] != 1)
                return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): dilation %lld: the QAS kernels take 1", nm,
                           (long long)a->ints[i]);
    int64_t st[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
    if ((a = attr(cv, "strides")) && a->n_ints == 2)
        st[0] = a->ints[0], st[1] = a->ints[1];
    if ((a = attr(cv, "pads")) && a->n_ints == 4)
        for (int i = 0; i < 4; i++)
            pd[i] = a->ints[i];
    for (int i = 0; i < 4; i++)
        if (pd[i] < 0 || pd[i] > 64 || (i < 2 && (st[i] < 1 || st[i] > 64)))
            return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): strides or pads out of range", nm);
    L->pc.sh = (int32_t)st[0], L->pc.sw = (int32_t)st[1];
    L->pc.pt = (int32_t)pd[0], L->pc.pl = (int32_t)pd[1];
    for (int i = 0; i < 4; i++)
        L->pads[i] = (int32_t)pd[i];
    return NULL;
}

static sy_status *read_layer(const Onnx__GraphProto *g, const Onnx__NodeProto *gemm, const Onnx__NodeProto *q,
                             bool relu, bool biases_only, qas_layer *L)
{
    const char *nm = node_name(gemm);
    const Onnx__AttributeProto *a;
    const bool conv = !strcmp(gemm->op_type, "Conv"), mm = !strcmp(gemm->op_type, "MatMul");
    const char *op = conv ? "Conv" : mm ? "MatMul" : "Gemm";
    sy_status *cst = conv ? read_conv_attrs(gemm, L) : NULL;
    if (cst)
        return cst;
    if (!conv && !mm && (((a = attr(gemm, "alpha")) && a->f != 1.0f) || ((a = attr(gemm, "beta")) && a->f != 1.0f)))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (Gemm): alpha and beta other than 1 are not in the int8 "
                                       "arithmetic of the QAS kernels", nm);
    if (!conv && !mm && (((a = attr(gemm, "transA")) && a->i) || !(a = attr(gemm, "transB")) || a->i != 1))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (Gemm): the QAS kernels take A not transposed and B transposed "
                                       "(seed 001 §4's QAS INT8 FullyConnected row)", nm);
    const Onnx__NodeProto *dx = dq_of(g, gemm, 0), *dw = dq_of(g, gemm, 1), *db = dq_of(g, gemm, 2);
    if (mm) { /* B transposed: MatMul(A, Transpose(perm 1,0) of the [O, K] weight's DequantizeLinear), no bias */
        const Onnx__NodeProto *t = gemm->n_input == 2 ? producer(g, gemm->input[1]) : NULL;
        const Onnx__AttributeProto *pa = t && !strcmp(t->op_type, "Transpose") && t->n_input == 1
                                             ? attr(t, "perm") : NULL;
        if (!pa || pa->n_ints != 2 || pa->ints[0] != 1 || pa->ints[1] != 0 || consumers(g, t->output[0]) != 1)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (MatMul): B is not transposed: the QAS kernels take MatMul(A, "
                       "Transpose(perm 1,0) of a constant int8 [O, K] weight) (seed 001 §4, QAS INT8 "
                       "FullyConnected/Gemm/Matmul: \"A not transposed, B transposed\")", nm);
        dw = dq_of(g, t, 0);
        db = NULL;
    }
    if (L->nhwc) { /* the Conv reads its NHWC input codes through Transpose(0,3,1,2) */
        const Onnx__NodeProto *t = gemm->n_input ? producer(g, gemm->input[0]) : NULL;
        if (!is_layout(t, TO_NCHW) || consumers(g, t->output[0]) != 1)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): its output is transposed NCHW -> NHWC, but its input "
                       "is not read through a Transpose(perm 0,3,1,2) of its own (an int8 TFLite CONV_2D's layout)",
                       nm);
        dx = dq_of(g, t, 0);
    }
    L->dxn = dx;
    if (!dx || !dw || (gemm->n_input > 2 && *gemm->input[2] && !db))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its inputs are not all read through DequantizeLinear "
                                       "(not a QDQ int8 layer)", nm, op);
    if (!qparams(g, dx, &L->p.x_scale, &L->p.x_zp) || !qparams(g, q, &L->p.y_scale, &L->p.y_zp))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its input or output is not int8 with one scale and "
                                       "zero point", nm, op);
    Onnx__TensorProto *w = (Onnx__TensorProto *)tr_qas_init(g, dw->input[0]);
    const Onnx__TensorProto *wsc = tr_qas_init(g, dw->input[1]);
    const Onnx__TensorProto *wzp = dw->n_input > 2 ? tr_qas_init(g, dw->input[2]) : NULL;
    if (!w || w->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8 || w->n_dims != (conv ? 4u : 2u) || !wsc)
        return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its weight is not a constant int8 %s", nm, op,
                   conv ? "[O, C, kh, kw] tensor" : "matrix");
    const int64_t O = w->dims[0], K = conv ? w->dims[1] * w->dims[2] * w->dims[3] : w->dims[1], ns = numel(wsc);
    if (conv) {
        if (w->dims[1] < 1 || w->dims[2] < 1 || w->dims[3] < 1 || w->dims[2] > 64 || w->dims[3] > 64)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): weight dimensions out of range", nm);
        L->pc.c = (int32_t)w->dims[1], L->pc.o = (int32_t)O;
        L->pc.kh = (int32_t)w->dims[2], L->pc.kw = (int32_t)w->dims[3];
    }
    if (O < 1 || K < 1 || O > (1 << 20) || K > (1 << 24) || O * K > (1 << 26))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): weight [%lld, %lld] out of range", nm, op, (long long)O,
                   (long long)K);
    if (ns != 1 && !(ns == O && wsc->n_dims == 1 && (a = attr(dw, "axis")) && a->i == 0))
        return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its weight scale is neither per-tensor nor "
                                       "per-output-channel", nm, op);
    L->p.k = (int32_t)K;
    L->p.o = (int32_t)O;
    L->conv = conv;
    L->in_n = conv ? 0 : (int32_t)K;
    L->out_n = conv ? 0 : (int32_t)O;
    L->p.act_min = -128;
    L->p.act_max = 127;
    L->relu = relu;
    L->gemm = gemm;
    L->w_init = w;
    size_t o = (size_t)O, ok = (size_t)(O * K);
    L->ws = malloc(o * sizeof *L->ws);
    L->w = malloc(ok);
    L->wm = malloc(ok * sizeof *L->wm);
    L->gb = malloc(o * sizeof *L->gb);
    if (!L->ws || !L->w || !L->wm || !L->gb)
        return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t c = 0; c < O; c++) {
        double sv;
        if (!elem(wsc, ns == 1 ? 0 : c, &sv) || !(sv > 0))
            return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): weight scale %lld is not positive", nm, op, (long long)c);
        L->ws[c] = (float)sv;
        double zv = 0;
        if (wzp && !elem(wzp, numel(wzp) == 1 ? 0 : c, &zv))
            return err(SY_ERR_INVALID_MODEL, "node '%s' (%s): weight zero point unreadable", nm, op);
        if (zv != 0)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): asymmetric weights (zero point %g): QAS takes "
                                           "symmetric int8 weights, W = s_W·W̄", nm, op, zv);
    }
    for (int64_t i = 0; i < O * K; i++) {
        double v;
        if (!elem(w, i, &v))
            return err(SY_ERR_INVALID_MODEL, "node '%s' (%s): weight codes unreadable", nm, op);
        L->w[i] = (int8_t)v;
        L->wm[i] = (float)v;
    }
    L->p.w_scale = L->ws;
    if (!biases_only) { /* the sparse update keeps no weight gradient row or momentum */
        L->wv = calloc(ok, sizeof *L->wv);
        /* one output channel's gradient row; a Conv's whole gradient (its update is not fused) */
        L->gw = malloc((size_t)(conv ? O * K : K) * sizeof *L->gw);
        if (!L->wv || !L->gw)
            return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (db) {
        Onnx__TensorProto *b = (Onnx__TensorProto *)tr_qas_init(g, db->input[0]);
        const Onnx__TensorProto *bsc = tr_qas_init(g, db->input[1]);
        if (!b || b->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32 || numel(b) != O || !bsc)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its bias is not %lld constant int32 codes", nm, op,
                       (long long)O);
        L->b_init = b;
        L->b = malloc(o * sizeof *L->b);
        L->bm = malloc(o * sizeof *L->bm);
        L->bv = calloc(o, sizeof *L->bv);
        if (!L->b || !L->bm || !L->bv)
            return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
        for (int64_t c = 0; c < O; c++) {
            double v, sv;
            if (!elem(b, c, &v) || !elem(bsc, numel(bsc) == 1 ? 0 : c, &sv))
                return err(SY_ERR_INVALID_MODEL, "node '%s' (%s): bias unreadable", nm, op);
            /* the bias codes must be in the accumulator's scale s_x·s_W */
            double want = (double)L->p.x_scale * (double)L->ws[c];
            if (fabs(sv - want) > 1e-6 * want)
                return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): bias scale %g of channel %lld is not s_x·s_W = %g",
                           nm, op, sv, (long long)c, want);
            L->b[c] = (int32_t)v;
            L->bm[c] = (float)v;
        }
    }
    return NULL;
}

/* an int8 MaxPool between trained layers: DequantizeLinear -> MaxPool ->
 * QuantizeLinear of one quantization on both sides (what the quantizer
 * writes), its output read by the QuantizeLinear alone; 2-D windows in the
 * kernel's reach (dilation 1, floor mode, explicit pads, no Indices).
 * Returns the DequantizeLinear (its input the codes the pool reads) or NULL
 * when `codes` is not such a pool's output; *bad set when it is a MaxPool
 * the kernel does not take. */
static const Onnx__NodeProto *maxpool_of(const Onnx__GraphProto *g, const char *codes, qas_layer *L,
                                         const Onnx__NodeProto **mp_out, sy_status **bad)
{
    const Onnx__NodeProto *q = producer(g, codes), *mp = NULL, *d = NULL, *tin = NULL, *tout = NULL;
    if (!q || strcmp(q->op_type, "QuantizeLinear") || !(mp = producer(g, q->input[0])))
        return NULL;
    /* an int8 TFLite MAX_POOL_2D: Transpose(0,3,1,2) -> MaxPool -> Transpose(0,2,3,1) between its
     * DequantizeLinear and QuantizeLinear; a max per channel picks the same codes in either layout,
     * so the kernel pools the session's NCHW buffer of the Conv before it */
    if (is_layout(mp, TO_NHWC))
        tout = mp, mp = producer(g, mp->input[0]);
    if (!mp || strcmp(mp->op_type, "MaxPool") || mp->n_input < 1 || !(d = producer(g, mp->input[0])))
        return NULL;
    if (tout) {
        if (!is_layout(d, TO_NCHW))
            return NULL;
        tin = d, d = producer(g, d->input[0]);
    }
    if (!d || strcmp(d->op_type, "DequantizeLinear"))
        return NULL;
    *mp_out = mp;
    const char *nm = node_name(mp);
    float s1, s2;
    int32_t z1, z2;
    if (!qparams(g, q, &s1, &z1) || !qparams(g, d, &s2, &z2) || s1 != s2 || z1 != z2) {
        *bad = err(SY_ERR_UNSUPPORTED, "node '%s' (MaxPool): its input and output are not int8 codes of one "
                   "scale and zero point (the QAS MaxPool pools codes)", nm);
        return NULL;
    }
    if (mp->n_output != 1 || consumers(g, codes) != 1 || consumers(g, mp->output[0]) != 1 ||
        consumers(g, mp->input[0]) != 1 || consumers(g, d->input[0]) != 1 ||
        (tout && (consumers(g, tout->output[0]) != 1 || consumers(g, tin->input[0]) != 1))) {
        *bad = err(SY_ERR_UNSUPPORTED, "node '%s' (MaxPool): its input or output is read elsewhere too, or it has "
                   "an Indices output (the trained layers must be a chain)", nm);
        return NULL;
    }
    const Onnx__AttributeProto *a = attr(mp, "kernel_shape");
    int64_t k[2], st[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
    if (!a || a->n_ints != 2) {
        *bad = err(SY_ERR_UNSUPPORTED, "node '%s' (MaxPool): not a 2-D pooling", nm);
        return NULL;
    }
    k[0] = a->ints[0], k[1] = a->ints[1];
    if ((a = attr(mp, "strides")) && a->n_ints == 2)
        st[0] = a->ints[0], st[1] = a->ints[1];
    if ((a = attr(mp, "pads")) && a->n_ints == 4)
        for (int i = 0; i < 4; i++)
            pd[i] = a->ints[i];
    bool ok = !((a = attr(mp, "ceil_mode")) && a->i) &&
              !((a = attr(mp, "auto_pad")) && a->s.len && !(a->s.len == 6 && !memcmp(a->s.data, "NOTSET", 6)));
    if ((a = attr(mp, "dilations")))
        for (size_t i = 0; i < a->n_ints; i++)
            ok &= a->ints[i] == 1;
    for (int i = 0; i < 2; i++)
        ok &= k[i] >= 1 && k[i] <= 64 && st[i] >= 1 && st[i] <= 64;
    for (int i = 0; i < 4; i++)
        ok &= pd[i] >= 0 && pd[i] < k[i % 2];
    if (!ok) {
        *bad = err(SY_ERR_UNSUPPORTED, "node '%s' (MaxPool): the QAS MaxPool takes 2-D windows of at most 64, "
                   "dilation 1, floor mode (ceil_mode 0), explicit pads smaller than the window", nm);
        return NULL;
    }
    L->pool = true;
    L->nhwc = tout != NULL;
    L->pp = (qas_pool){.kh = (int32_t)k[0], .kw = (int32_t)k[1], .sh = (int32_t)st[0], .sw = (int32_t)st[1],
                       .pt = (int32_t)pd[0], .pl = (int32_t)pd[1]};
    for (int i = 0; i < 4; i++)
        L->pool_pads[i] = (int32_t)pd[i];
    return d;
}

/* The chain of trained layers, from the output backwards. */
static sy_status *find_layers(sy_qas_session *s, const sy_qas_options *o, const char **front_out)
{
    const Onnx__GraphProto *g = s->model->graph;
    if (!g || g->n_output < 1)
        return err(SY_ERR_INVALID_MODEL, "the model has no graph output");
    const char *v = g->output[0]->name;
    const Onnx__NodeProto *p = producer(g, v);
    /* an int8 Softmax's own QuantizeLinear (and DequantizeLinear), as an
     * int8 TFLite model's SOFTMAX translates, is looked through too */
    if (p && !strcmp(p->op_type, "DequantizeLinear") && p->n_input >= 1) {
        const Onnx__NodeProto *q = producer(g, p->input[0]);
        const Onnx__NodeProto *sm = q && !strcmp(q->op_type, "QuantizeLinear") ? producer(g, q->input[0]) : NULL;
        if (sm && !strcmp(sm->op_type, "Softmax"))
            p = sm;
    } else if (p && !strcmp(p->op_type, "QuantizeLinear")) {
        const Onnx__NodeProto *sm = producer(g, p->input[0]);
        if (sm && !strcmp(sm->op_type, "Softmax"))
            p = sm;
    }
    if (p && !strcmp(p->op_type, "Softmax"))
        p = producer(g, p->input[0]); /* the loss reads the logits */
    if (!p || strcmp(p->op_type, "DequantizeLinear") || !qparams(g, p, &s->out_scale, &s->out_zp))
        return err(SY_ERR_UNSUPPORTED, "output '%s' is not the dequantization of int8 logits (a QDQ model's last "
                                       "QuantizeLinear/DequantizeLinear pair, optionally then Softmax)", v);
    const char *codes = p->input[0];
    const int k = o->last_k > 0 ? o->last_k : 1;
    if (k > MAX_LAYERS)
        return err(SY_ERR_INVALID_ARGUMENT, "last_k %d: at most %d layers", k, MAX_LAYERS);
    const bool ws63 = o->target != NULL;
    char why[1024];
    qas_layer *tmp = s->L; /* filled from the output backwards, reversed at the end; s->n counts them for release */
    int n = 0;
    qas_layer pending = {0}; /* a MaxPool found before the layer read next (on its output) */
    const Onnx__NodeProto *pending_mp = NULL;
    while (n < k) {
        const Onnx__NodeProto *q = producer(g, codes);
        const Onnx__NodeProto *f = q && !strcmp(q->op_type, "QuantizeLinear") ? producer(g, q->input[0]) : NULL;
        const Onnx__NodeProto *relu = NULL, *tout = NULL;
        if (f && !strcmp(f->op_type, "Relu")) {
            relu = f;
            f = producer(g, f->input[0]);
        }
        /* a Conv's NCHW -> NHWC layout Transpose (before or after its Relu:
         * a permutation commutes with the elementwise Relu and the per-tensor
         * QuantizeLinear), as an int8 TFLite CONV_2D translates */
        if (is_layout(f, TO_NHWC)) {
            const Onnx__NodeProto *c = producer(g, f->input[0]), *r = NULL;
            if (!relu && c && !strcmp(c->op_type, "Relu"))
                r = c, c = producer(g, c->input[0]);
            if (c && !strcmp(c->op_type, "Conv"))
                tout = f, relu = r ? r : relu, f = c;
        }
        if (!f || (strcmp(f->op_type, "Gemm") && strcmp(f->op_type, "Conv") && strcmp(f->op_type, "MatMul"))) {
            const Onnx__NodeProto *stop = f ? f : q;
            if (stop && ws63 && tr_qas_rules_check(g, stop, why, sizeof why))
                return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: %s", why);
            return err(SY_ERR_UNSUPPORTED, "last %d layers: only %d fully connected or convolution layers (Gemm "
                       "or Conv [→ Relu] → QuantizeLinear) end the model; before them node '%s' (%s)%s", k, n,
                       stop ? stop->name : codes, stop ? stop->op_type : "a graph input",
                       ws63 && stop ? " matches its QAS-INT8 row of seed 001 §4, but the QAS trainer trains "
                                      "chains of fully connected and convolution layers only"
                                    : " is not one");
        }
        if (ws63 && (tr_qas_rules_check(g, f, why, sizeof why) || (relu && tr_qas_rules_check(g, relu, why,
                                                                                               sizeof why))))
            return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: %s", why);
        if (consumers(g, f->output[0]) != 1 || (relu && consumers(g, relu->output[0]) != 1) ||
            (tout && consumers(g, tout->output[0]) != 1) || consumers(g, codes) != 1)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its output is read elsewhere too (the trained layers "
                                           "must be a chain ending the model)", node_name(f), f->op_type);
        if (n && tmp[n - 1].tp && (strcmp(f->op_type, "Conv") || tout))
            return err(SY_ERR_UNSUPPORTED, "node '%s' (Gemm): it reads a Transpose of node '%s' (%s); the QAS "
                       "trainer permutes the NCHW codes of a trained Conv only", node_name(tmp[n - 1].gemm),
                       node_name(f), f->op_type);
        if (pending_mp && (strcmp(f->op_type, "Conv") || (tout != NULL) != pending.nhwc))
            return err(SY_ERR_UNSUPPORTED, "node '%s' (MaxPool): it pools the output of node '%s' (%s%s); the QAS "
                       "MaxPool takes the codes of a trained Conv in its layout (NCHW, or NHWC between the layout "
                       "Transposes of an int8 TFLite CONV_2D and MAX_POOL_2D)", node_name(pending_mp), node_name(f),
                       f->op_type, !strcmp(f->op_type, "Conv") ? tout ? ", NHWC" : ", NCHW" : "");
        memset(&tmp[n], 0, sizeof tmp[n]);
        tmp[n].nhwc = tout != NULL;
        if (pending_mp) {
            tmp[n].pool = true;
            tmp[n].pp = pending.pp;
            memcpy(tmp[n].pool_pads, pending.pool_pads, sizeof pending.pool_pads);
            pending_mp = NULL;
        }
        sy_status *st = read_layer(g, f, q, relu != NULL, o->biases_only != 0, &tmp[n]);
        s->n = (size_t)++n;
        if (st)
            return st;
        codes = tmp[n - 1].dxn->input[0];
        /* before a Gemm, a chain of Flatten (axis 1), Reshape, Squeeze and
         * Unsqueeze of the codes, each with its QuantizeLinear of the same
         * scale and zero point as its input's DequantizeLinear (the same
         * codes, reshaped: the identity on the buffer and on its gradient),
         * is looked through when more layers train */
        for (;;) {
            const Onnx__NodeProto *fq = producer(g, codes), *fl = NULL, *fd = NULL;
            if (!(n < k && !tmp[n - 1].conv && fq && !strcmp(fq->op_type, "QuantizeLinear") &&
                  (fl = producer(g, fq->input[0])) &&
                  (!strcmp(fl->op_type, "Flatten") || !strcmp(fl->op_type, "Reshape") ||
                   !strcmp(fl->op_type, "Squeeze") || !strcmp(fl->op_type, "Unsqueeze")) &&
                  fl->n_input >= 1 && (fd = producer(g, fl->input[0])) && !strcmp(fd->op_type, "DequantizeLinear") &&
                  consumers(g, codes) == 1 && consumers(g, fl->output[0]) == 1 && consumers(g, fl->input[0]) == 1))
                break;
            float s1, s2;
            int32_t z1, z2;
            const Onnx__AttributeProto *ax = attr(fl, "axis");
            if (!(qparams(g, fq, &s1, &z1) && qparams(g, fd, &s2, &z2) && s1 == s2 && z1 == z2 &&
                  (strcmp(fl->op_type, "Flatten") || !ax || ax->i == 1)))
                break;
            if (ws63 && tr_qas_rules_check(g, fl, why, sizeof why))
                return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: %s", why);
            codes = fd->input[0];
        }
        /* then a Transpose of the previous layer's (a Conv's) 4-D codes, a constant full permutation that keeps
         * the batch first, in its QDQ pair of one quantization: the Gemm reads them permuted */
        {
            const Onnx__NodeProto *tq = producer(g, codes), *tt = NULL, *td = NULL;
            const Onnx__AttributeProto *pa = NULL;
            float s1, s2;
            int32_t z1, z2;
            if (n < k && !tmp[n - 1].conv && tq && !strcmp(tq->op_type, "QuantizeLinear") &&
                (tt = producer(g, tq->input[0])) && !strcmp(tt->op_type, "Transpose") && tt->n_input == 1 &&
                (td = producer(g, tt->input[0])) && !strcmp(td->op_type, "DequantizeLinear") &&
                consumers(g, codes) == 1 && consumers(g, tt->output[0]) == 1 && consumers(g, tt->input[0]) == 1 &&
                qparams(g, tq, &s1, &z1) && qparams(g, td, &s2, &z2) && s1 == s2 && z1 == z2) {
                if (ws63 && tr_qas_rules_check(g, tt, why, sizeof why))
                    return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: %s", why);
                pa = attr(tt, "perm");
                bool ok = pa && pa->n_ints == 4 && pa->ints[0] == 0;
                for (int i = 1; ok && i < 4; i++) {
                    bool seen = false;
                    for (int j = 1; j < 4; j++)
                        seen |= pa->ints[j] == i;
                    ok = seen;
                }
                if (!ok)
                    return err(SY_ERR_UNSUPPORTED, "node '%s' (Transpose): the QAS trainer takes a constant full "
                               "permutation of a Conv's 4-D codes that keeps the batch first", node_name(tt));
                tmp[n - 1].tp = true;
                for (int i = 0; i < 4; i++)
                    tmp[n - 1].tperm[i] = (int32_t)pa->ints[i];
                codes = td->input[0];
            }
        }
        /* a MaxPool of the codes (the same quantization on both sides) before this layer, on the
         * output of the one read next, when more layers train */
        if (n < k) {
            sy_status *bad = NULL;
            const Onnx__NodeProto *md = maxpool_of(g, codes, &pending, &pending_mp, &bad);
            if (bad && ws63 && pending_mp && tr_qas_rules_check(g, pending_mp, why, sizeof why)) {
                sy_status_free(bad); /* for ws63 the seed's row decides, and is quoted */
                return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: %s", why);
            }
            if (bad)
                return bad;
            if (md) {
                if (ws63 && tr_qas_rules_check(g, pending_mp, why, sizeof why))
                    return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: %s", why);
                codes = md->input[0];
            } else {
                pending_mp = NULL;
            }
        }
    }
    if (s->L[0].conv)
        return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): the logits come from a Gemm (the last trained layer)",
                   s->L[0].gemm->name);
    /* L[0] is the first layer */
    for (int i = 0; i < n / 2; i++) {
        qas_layer t = s->L[i];
        s->L[i] = s->L[n - 1 - i];
        s->L[n - 1 - i] = t;
    }
    /* (a Conv's sizes are checked at the first forward, when its input's are known) */
    for (size_t i = 1; i < s->n; i++)
        if ((!s->L[i].conv && !s->L[i - 1].conv && s->L[i].p.k != s->L[i - 1].p.o) ||
            (s->L[i].conv && (!s->L[i - 1].conv || s->L[i].nhwc != s->L[i - 1].nhwc)) || s->L[i].p.x_scale != s->L[i - 1].p.y_scale ||
            s->L[i].p.x_zp != s->L[i - 1].p.y_zp)
            return err(SY_ERR_UNSUPPORTED, "node '%s' (%s): its input is not the previous layer's output",
                       node_name(s->L[i].gemm), s->L[i].gemm->op_type);
    if (s->L[s->n - 1].p.y_scale != s->out_scale || s->L[s->n - 1].p.y_zp != s->out_zp)
        return err(SY_ERR_UNSUPPORTED, "the logits are dequantized with another scale than the last layer's");
    *front_out = codes;
    return NULL;
}

/* The front cut after the QuantizeLinear of its one data input, when that
 * node alone reads it and its zero point is an int8/uint8 initializer: the
 * part after it reads the image's codes (a training package's samples, one
 * byte a value instead of a float's four) and the node alone makes them on
 * the host. Neither is written otherwise (the whole front serves); a front
 * that is that QuantizeLinear alone has the second only. */
static sy_status *split_input_q(sy_qas_session *s, const Onnx__ModelProto *fm, Onnx__NodeProto **nodes, size_t nn,
                                Onnx__TensorProto **inits, size_t ni, const Onnx__ValueInfoProto *in, tl_pool *pl)
{
    const Onnx__GraphProto *g = fm->graph;
    size_t qi = nn, readers = 0;
    for (size_t i = 0; i < nn; i++)
        for (size_t k = 0; k < nodes[i]->n_input; k++)
            if (!strcmp(nodes[i]->input[k], in->name)) {
                readers++;
                if (k == 0 && !strcmp(nodes[i]->op_type, "QuantizeLinear"))
                    qi = i;
            }
    if (qi == nn || readers != 1)
        return NULL;
    Onnx__NodeProto *q = nodes[qi];
    const Onnx__TensorProto *zp = q->n_input >= 3 ? tr_qas_init(s->model->graph, q->input[2]) : NULL;
    if (!zp || (zp->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT8 &&
                zp->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8) || q->n_output != 1)
        return NULL;
    Onnx__ValueInfoProto *codes_in = tr_with_batch(pl, in, q->output[0], zp->data_type);
    Onnx__NodeProto **rest = tl_alloc(pl, nn * sizeof *rest);
    Onnx__TensorProto **qinit = tl_alloc(pl, 2 * sizeof *qinit);
    if (!codes_in || !rest || !qinit)
        return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    size_t nr = 0, nq = 0;
    for (size_t i = 0; i < nn; i++)
        if (i != qi)
            rest[nr++] = nodes[i];
    for (size_t i = 0; i < ni && nq < 2; i++)
        if (!strcmp(inits[i]->name, q->input[1]) || !strcmp(inits[i]->name, q->input[2]))
            qinit[nq++] = inits[i];
    Onnx__ValueInfoProto qout;
    onnx__value_info_proto__init(&qout);
    qout.name = q->output[0];
    Onnx__ValueInfoProto *qouts[1] = {&qout};
    Onnx__ValueInfoProto *rins[1] = {codes_in};
    Onnx__ValueInfoProto *qins[1] = {(Onnx__ValueInfoProto *)in};
    Onnx__GraphProto rg = *g, qg = *g;
    rg.node = rest, rg.n_node = nr, rg.input = rins, rg.n_input = 1;
    qg.node = &nodes[qi], qg.n_node = 1, qg.input = qins, qg.n_input = 1;
    qg.initializer = qinit, qg.n_initializer = nq, qg.output = qouts, qg.n_output = 1;
    Onnx__ModelProto rm = *fm, qm = *fm;
    rm.graph = &rg;
    qm.graph = &qg;
    /* a front that is the QuantizeLinear alone has no part after it */
    if (nr)
        s->front_onnx[SY_QAS_FRONT_AFTER_INPUT_Q] = tl_pack_model(&rm, &s->front_len[SY_QAS_FRONT_AFTER_INPUT_Q]);
    s->front_onnx[SY_QAS_FRONT_INPUT_Q] = tl_pack_model(&qm, &s->front_len[SY_QAS_FRONT_INPUT_Q]);
    if ((nr && !s->front_onnx[SY_QAS_FRONT_AFTER_INPUT_Q]) || !s->front_onnx[SY_QAS_FRONT_INPUT_Q])
        return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    return NULL;
}

/* the front: the nodes the codes of the first trained layer need */
static sy_status *build_front(sy_qas_session *s, sy_env *env, const char *codes)
{
    const Onnx__GraphProto *g = s->model->graph;
    bool *keep = calloc(g->n_node ? g->n_node : 1, sizeof *keep);
    const char **want = malloc((g->n_node * 4 + 8) * sizeof *want);
    Onnx__NodeProto **nodes = malloc((g->n_node ? g->n_node : 1) * sizeof *nodes);
    Onnx__TensorProto **inits = malloc((g->n_initializer ? g->n_initializer : 1) * sizeof *inits);
    sy_status *st = NULL;
    tl_pool pl = {0};
    if (!keep || !want || !nodes || !inits) {
        st = err(SY_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    /* reverse reachability over the (topologically ordered) nodes */
    size_t nw = 0;
    want[nw++] = codes;
    for (size_t i = g->n_node; i-- > 0;) {
        const Onnx__NodeProto *nd = g->node[i];
        bool needed = false;
        for (size_t k = 0; k < nd->n_output && !needed; k++)
            for (size_t j = 0; j < nw && !needed; j++)
                needed = !strcmp(nd->output[k], want[j]);
        if (!needed)
            continue;
        keep[i] = true;
        for (size_t k = 0; k < nd->n_input; k++)
            if (*nd->input[k] && nw < g->n_node * 4 + 8)
                want[nw++] = nd->input[k];
    }
    size_t nn = 0, ni = 0;
    for (size_t i = 0; i < g->n_node; i++)
        if (keep[i])
            nodes[nn++] = g->node[i];
    if (!nn) {
        st = err(SY_ERR_UNSUPPORTED, "the trained layers read a graph input directly: nothing to run before them");
        goto done;
    }
    for (size_t i = 0; i < g->n_initializer; i++)
        for (size_t j = 0; j < nw; j++)
            if (!strcmp(g->initializer[i]->name, want[j])) {
                inits[ni++] = g->initializer[i];
                break;
            }
    Onnx__ValueInfoProto out;
    onnx__value_info_proto__init(&out);
    out.name = (char *)codes;
    Onnx__ValueInfoProto *outs[1] = {&out};
    /* the data inputs with a symbolic batch (the model's may fix it to 1) */
    Onnx__ValueInfoProto **ins = tl_alloc(&pl, (g->n_input ? g->n_input : 1) * sizeof *ins);
    size_t nin = 0;
    for (size_t i = 0; ins && i < g->n_input; i++) {
        const Onnx__ValueInfoProto *vi = g->input[i];
        if (tr_qas_init(g, vi->name))
            continue; /* an initializer listed as an input (older IR) */
        int elem = vi->type && vi->type->tensor_type ? vi->type->tensor_type->elem_type : 1;
        ins[nin++] = tr_with_batch(&pl, vi, vi->name, elem);
    }
    for (size_t i = 0; i < nin; i++)
        if (!ins[i])
            ins = NULL;
    if (!ins || pl.oom) {
        st = err(SY_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    Onnx__GraphProto fg = *g;
    fg.input = ins;
    fg.n_input = nin;
    fg.node = nodes;
    fg.n_node = nn;
    fg.initializer = inits;
    fg.n_initializer = ni;
    fg.output = outs;
    fg.n_output = 1;
    fg.n_value_info = 0;
    Onnx__ModelProto fm = *s->model;
    fm.graph = &fg;
    size_t len = 0;
    uint8_t *buf = tl_pack_model(&fm, &len);
    if (!buf) {
        st = err(SY_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    st = sy_model_load_buffer(env, buf, len, "qas front", NULL, &s->pm);
    /* kept: a training package runs this same front on the device */
    s->front_onnx[SY_QAS_FRONT_ALL] = buf;
    s->front_len[SY_QAS_FRONT_ALL] = len;
    if (!st && nin == 1)
        st = split_input_q(s, &fm, nodes, nn, inits, ni, ins[0], &pl);
    if (!st)
        st = sy_session_create(env, s->pm, NULL, &s->ps);
    if (st)
        st = tl_status_prefix(st, "sy_qas: the frozen front (up to '%s')", codes);
    else
        s->n_data = sy_model_input_count(s->pm);
done:
    tl_pool_free(&pl);
    free(keep);
    free(want);
    free(nodes);
    free(inits);
    return st;
}

static void layer_free(qas_layer *L)
{
    free(L->ws), free(L->w), free(L->b), free(L->wm), free(L->bm), free(L->wv), free(L->bv);
    free(L->gw), free(L->gb), free(L->x), free(L->y), free(L->r), free(L->dy), free(L->dx);
    free(L->pl), free(L->dpl);
}

void sy_qas_session_release(sy_qas_session *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        layer_free(&s->L[i]);
    sy_session_release(s->ps);
    sy_model_release(s->pm);
    for (int i = 0; i < 3; i++)
        free(s->front_onnx[i]);
    if (s->model)
        onnx__model_proto__free_unpacked(s->model, NULL);
    free(s->labels), free(s->logits), free(s->dlogits);
    free(s->tflite_src);
    free(s);
}

sy_status *sy_qas_session_create(sy_env *env, const char *path, const sy_qas_options *o, sy_qas_session **out,
                                 sy_qas_report *rep)
{
    *out = NULL;
    if (!env || !path || !o || o->struct_size < offsetof(sy_qas_options, subgraph))
        return err(SY_ERR_INVALID_ARGUMENT, "env, model and options (struct_size set) are required");
    const char *subgraph = o->struct_size >= offsetof(sy_qas_options, subgraph) + sizeof o->subgraph ? o->subgraph
                                                                                                     : NULL;
    if (o->target && (!strcmp(o->target, "hi3066") || !strcmp(o->target, "3066H")))
        return sy_status_create(SY_ERR_UNSUPPORTED, "sy_qas: target %s: seed 001 §4: \"" SEED_WS63_ONLY
                                                    "\" (on-device training is supported only on ws63)", o->target);
    if (o->target && strcmp(o->target, "ws63"))
        return err(SY_ERR_INVALID_ARGUMENT, "unknown target '%s' (ws63 trains; hi3066 does not)", o->target);
    if (!(o->momentum >= 0 && o->momentum < 1))
        return err(SY_ERR_INVALID_ARGUMENT, "momentum %g is not in [0, 1)", (double)o->momentum);
    sy_qas_session *s = calloc(1, sizeof *s);
    if (!s)
        return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->momentum = o->momentum;
    s->biases_only = o->biases_only != 0;
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(path, &data, &size);
    /* an int8 .tflite is translated to its ONNX QDQ form in memory (a
     * float one is refused as such by the translation) */
    if (!st && tr_tflite_is_tflite(data, size)) {
        tr_tfl_model tm;
        st = tr_tflite_translate_int8(data, size, "sy_qas: TFLite", subgraph, -1, &tm);
        s->tflite_subgraph = tm.subgraph;
        if (!st && !(s->model = onnx__model_proto__unpack(NULL, tm.onnx_len, tm.onnx)))
            st = err(SY_ERR_INVALID_MODEL, "%s: its ONNX translation does not unpack", path);
        tr_tflite_model_free(&tm);
        if (!st && !(s->tflite_src = strdup(path)))
            st = err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    } else if (!st && subgraph && *subgraph) {
        st = err(SY_ERR_INVALID_ARGUMENT, "%s: subgraph '%s' was chosen, but this is not a TFLite model (subgraphs "
                 "are chosen in TFLite models only)", path, subgraph);
    } else if (!st && !(s->model = onnx__model_proto__unpack(NULL, size, data))) {
        st = err(SY_ERR_INVALID_MODEL, "%s is not an ONNX model", path);
    }
    free(data);
    const char *front = NULL;
    if (!st)
        st = find_layers(s, o, &front);
    if (!st && s->biases_only)
        for (size_t i = 0; i < s->n && !st; i++)
            if (!s->L[i].b)
                st = err(SY_ERR_UNSUPPORTED, "node '%s' (%s) has no bias to train (biases only)",
                         node_name(s->L[i].gemm), s->L[i].gemm->op_type);
    if (!st)
        st = build_front(s, env, front);
    if (st) {
        sy_qas_session_release(s);
        return tl_status_prefix(st, "%s", path);
    }
    if (rep && rep->struct_size >= sizeof *rep) {
        rep->layers = s->n;
        rep->weights = rep->biases = 0;
        rep->int8_bytes = rep->float_bytes = 0;
        for (size_t i = 0; i < s->n; i++) {
            const qas_layer *L = &s->L[i];
            size_t ok = (size_t)L->p.o * (size_t)L->p.k, oc = (size_t)L->p.o;
            rep->weights += s->biases_only ? 0 : (int64_t)ok;
            rep->biases += L->b ? (int64_t)oc : 0;
            rep->int8_bytes += ok + (L->b ? 4 * oc : 0);
            /* scales; per trained value a master copy and momentum; one gradient row (a Conv's whole gradient) */
            rep->float_bytes += 4 * oc + 8 * ((s->biases_only ? 0 : ok) + (L->b ? oc : 0)) +
                                (s->biases_only ? 0 : 4 * (size_t)L->p.k * (L->conv ? (size_t)L->p.o : 1));
        }
    }
    *out = s;
    return NULL;
}

static sy_status *grow(sy_qas_session *s, int64_t batch)
{
    if (batch <= s->cap)
        return NULL;
    size_t b = (size_t)batch, c = (size_t)s->L[s->n - 1].p.o;
    for (size_t i = 0; i < s->n; i++) {
        qas_layer *L = &s->L[i];
        size_t k = (size_t)L->in_n, o = (size_t)L->out_n;
        free(L->x), free(L->y), free(L->r), free(L->dy), free(L->dx), free(L->pl), free(L->dpl);
        L->pl = NULL, L->dpl = NULL;
        if (L->pool) {
            L->pl = malloc(b * (size_t)L->pool_n);
            L->dpl = malloc(b * (size_t)L->pool_n * sizeof *L->dpl);
            if (!L->pl || !L->dpl)
                return err(SY_ERR_OUT_OF_MEMORY, "out of memory for a batch of %lld", (long long)batch);
        }
        L->x = malloc(b * k);
        L->y = malloc(b * o);
        L->r = malloc(b * o);
        L->dy = malloc(b * o * sizeof *L->dy);
        L->dx = malloc(b * k * sizeof *L->dx);
        if (!L->x || !L->y || !L->r || !L->dy || !L->dx)
            return err(SY_ERR_OUT_OF_MEMORY, "out of memory for a batch of %lld", (long long)batch);
    }
    free(s->labels), free(s->logits), free(s->dlogits);
    s->labels = malloc(b * sizeof *s->labels);
    s->logits = malloc(b * c * sizeof *s->logits);
    s->dlogits = malloc(b * c * sizeof *s->dlogits);
    if (!s->labels || !s->logits || !s->dlogits)
        return err(SY_ERR_OUT_OF_MEMORY, "out of memory for a batch of %lld", (long long)batch);
    s->cap = batch;
    return NULL;
}

/* The Convs' geometry from the front's output dims [N, C, H, W] (a Conv is
 * the first trained layer or follows one), set at the first forward and
 * held to after; then every layer's input is the previous one's output. */
static sy_status *geometry(sy_qas_session *s, const sy_tensor *f)
{
    qas_layer *L0 = &s->L[0];
    if (!L0->conv)
        return f->dtype == SY_DT_INT8 && f->rank == 2 && f->dims[1] == L0->p.k && f->dims[0] >= 1 &&
                       f->dims[0] <= (1 << 20)
                   ? NULL
                   : err(SY_ERR_SHAPE, "node '%s' (Gemm): its input is not int8 [N, %d] (seed 001 §4, QAS INT8 "
                         "FullyConnected: \"INT8 input, weight and output; rank 2\")", node_name(L0->gemm), L0->p.k);
    /* an NHWC Conv (between layout Transposes) reads [N, H, W, C] codes */
    const int hd = L0->nhwc ? 1 : 2, wd = hd + 1, cd = L0->nhwc ? 3 : 1;
    if (f->dtype != SY_DT_INT8 || f->rank != 4 || f->dims[cd] != L0->pc.c || f->dims[0] < 1 ||
        f->dims[0] > (1 << 20) || f->dims[hd] < 1 || f->dims[wd] < 1 || f->dims[hd] > 4096 || f->dims[wd] > 4096)
        return err(SY_ERR_SHAPE, "node '%s' (Conv): its input is not int8 %s (seed 001 §4, QAS INT8 "
                   "Conv: \"INT8 input, weight and output; ... rank 4\")", L0->gemm->name,
                   L0->nhwc ? "NHWC [N, H, W, C]" : "NCHW [N, C, H, W]");
    if (L0->in_n) {
        if (f->dims[hd] != L0->pc.h || f->dims[wd] != L0->pc.w)
            return err(SY_ERR_SHAPE, "node '%s' (Conv): input %lldx%lld, the session's is %dx%d", L0->gemm->name,
                       (long long)f->dims[hd], (long long)f->dims[wd], L0->pc.h, L0->pc.w);
        return NULL;
    }
    int32_t c = L0->pc.c, h = (int32_t)f->dims[hd], w = (int32_t)f->dims[wd];
    for (size_t i = 0; i < s->n; i++) {
        qas_layer *L = &s->L[i];
        if (!L->conv) {
            if (L->p.k != c * h * w)
                return err(SY_ERR_UNSUPPORTED, "node '%s' (Gemm): it reads %d values, the convolution before it gives "
                           "%d", L->gemm->name, L->p.k, c * h * w);
            L->tsrc[0] = 1, L->tsrc[1] = c, L->tsrc[2] = h, L->tsrc[3] = w;
            c = L->p.o, h = w = 1;
            continue;
        }
        if (L->pc.c != c || (i && h * w == 1 && !s->L[i - 1].conv))
            return err(SY_ERR_UNSUPPORTED, "node '%s' (Conv): its input is not the previous layer's output",
                       L->gemm->name);
        int32_t oh = (h + L->pads[0] + L->pads[2] - L->pc.kh) / L->pc.sh + 1;
        int32_t ow = (w + L->pads[1] + L->pads[3] - L->pc.kw) / L->pc.sw + 1;
        if (h + L->pads[0] + L->pads[2] < L->pc.kh || w + L->pads[1] + L->pads[3] < L->pc.kw)
            return err(SY_ERR_SHAPE, "node '%s' (Conv): a %dx%d input gives no output", L->gemm->name, h, w);
        L->pc.h = h, L->pc.w = w, L->pc.oh = oh, L->pc.ow = ow;
        L->pc.x_scale = L->p.x_scale, L->pc.y_scale = L->p.y_scale;
        L->pc.x_zp = L->p.x_zp, L->pc.y_zp = L->p.y_zp;
        L->pc.act_min = L->p.act_min, L->pc.act_max = L->p.act_max;
        L->pc.w_scale = L->ws;
        L->in_n = c * h * w;
        L->out_n = L->pc.o * oh * ow;
        c = L->pc.o, h = oh, w = ow;
        if (L->pool) {
            qas_pool *q = &L->pp;
            if (h + L->pool_pads[0] + L->pool_pads[2] < q->kh || w + L->pool_pads[1] + L->pool_pads[3] < q->kw)
                return err(SY_ERR_SHAPE, "the MaxPool after node '%s' (Conv): a %dx%d input gives no output",
                           L->gemm->name, h, w);
            q->c = c, q->h = h, q->w = w;
            q->oh = (h + L->pool_pads[0] + L->pool_pads[2] - q->kh) / q->sh + 1;
            q->ow = (w + L->pool_pads[1] + L->pool_pads[3] - q->kw) / q->sw + 1;
            h = q->oh, w = q->ow;
            L->pool_n = c * h * w;
        }
    }
    return NULL;
}

/* The codes of B samples [c, hw] (NCHW) as [hw, c] (NHWC), and back;
 * a gradient [hw, c] as [c, hw]: the layout Transposes around an NHWC
 * Conv, which move values and compute nothing. */
static void s8_to_nhwc(int64_t B, int32_t c, int32_t hw, const int8_t *x, int8_t *y)
{
    for (int64_t n = 0; n < B; n++, x += (int64_t)c * hw, y += (int64_t)c * hw)
        for (int32_t i = 0; i < c; i++)
            for (int32_t j = 0; j < hw; j++)
                y[(int64_t)j * c + i] = x[(int64_t)i * hw + j];
}

static void s8_to_nchw(int64_t B, int32_t c, int32_t hw, const int8_t *x, int8_t *y)
{
    for (int64_t n = 0; n < B; n++, x += (int64_t)c * hw, y += (int64_t)c * hw)
        for (int32_t i = 0; i < c; i++)
            for (int32_t j = 0; j < hw; j++)
                y[(int64_t)i * hw + j] = x[(int64_t)j * c + i];
}

static void f32_to_nchw(int64_t B, int32_t c, int32_t hw, const float *x, float *y)
{
    for (int64_t n = 0; n < B; n++, x += (int64_t)c * hw, y += (int64_t)c * hw)
        for (int32_t i = 0; i < c; i++)
            for (int32_t j = 0; j < hw; j++)
                y[(int64_t)i * hw + j] = x[(int64_t)j * c + i];
}

/* the int8 forward: the front in the session, the trained layers in the
 * kernels; the logits dequantized, the mean loss (libm, a report only) */
static sy_status *forward(sy_qas_session *s, const sy_tensor *const *in, size_t n_in, int64_t *batch, float *loss)
{
    if (n_in != s->n_data + 1)
        return err(SY_ERR_INVALID_ARGUMENT, "expected %zu inputs (the model's and the labels), got %zu", s->n_data + 1,
                   n_in);
    sy_status *st = NULL;
    for (size_t i = 0; i < s->n_data && !st; i++)
        st = tr_feed_input(s->ps, s->pm, i, in[i]);
    if (!st)
        st = sy_session_run(s->ps);
    const sy_tensor *f = NULL;
    if (!st)
        st = sy_session_get_output(s->ps, 0, &f);
    if (st)
        return st;
    qas_layer *L0 = &s->L[0];
    if ((st = geometry(s, f)))
        return st;
    const int64_t B = f->dims[0];
    const sy_tensor *lab = in[s->n_data];
    if (lab->dtype != SY_DT_INT64 || lab->rank != 1 || lab->dims[0] != B)
        return err(SY_ERR_SHAPE, "labels: expected int64 [%lld]", (long long)B);
    if ((st = grow(s, B)))
        return st;
    const int32_t C = s->L[s->n - 1].p.o;
    for (int64_t i = 0; i < B; i++) {
        int64_t v = ((const int64_t *)lab->data)[i];
        if (v < 0 || v >= C)
            return err(SY_ERR_INVALID_ARGUMENT, "label %lld of sample %lld is outside the model's %d classes",
                       (long long)v, (long long)i, C);
        s->labels[i] = (int32_t)v;
    }
    if (L0->conv && L0->nhwc)
        s8_to_nchw(B, L0->pc.c, L0->pc.h * L0->pc.w, f->data, L0->x);
    else
        memcpy(L0->x, f->data, (size_t)(B * L0->in_n));
    for (size_t i = 0; i < s->n; i++) {
        qas_layer *L = &s->L[i];
        const qas_layer *P = i ? &s->L[i - 1] : NULL;
        if (P && !L->conv && P->conv && P->nhwc) /* an NHWC Conv's codes (or their pool), flattened in NHWC order */
            s8_to_nhwc(B, P->pc.o, P->pool ? P->pp.oh * P->pp.ow : P->pc.oh * P->pc.ow, P->pool ? P->pl : P->r, L->x);
        else if (P && L->tp)
            qas_perm_s8((int32_t)B, L->tsrc, L->tperm, P->pool ? P->pl : P->r, L->x);
        else if (P)
            memcpy(L->x, P->pool ? P->pl : P->r, (size_t)B * (size_t)L->in_n);
        if (L->conv)
            qas_conv_forward(&L->pc, (int32_t)B, L->x, L->w, L->b, L->y);
        else
            qas_fc_forward(&L->p, (int32_t)B, L->x, L->w, L->b, L->y);
        if (L->relu)
            qas_relu_s8((int32_t)(B * L->out_n), L->p.y_zp, L->y, L->r);
        else
            memcpy(L->r, L->y, (size_t)(B * L->out_n));
        if (L->pool)
            qas_maxpool_forward(&L->pp, (int32_t)B, L->r, L->pl);
    }
    const int8_t *lg = s->L[s->n - 1].r;
    double total = 0;
    for (int64_t n = 0; n < B; n++) {
        double mx = -1e300, sum = 0;
        for (int32_t c = 0; c < C; c++) {
            float v = s->out_scale * (float)(lg[n * C + c] - s->out_zp);
            s->logits[n * C + c] = v;
            mx = v > mx ? v : mx;
        }
        for (int32_t c = 0; c < C; c++)
            sum += exp(s->logits[n * C + c] - mx);
        total += log(sum) - (s->logits[n * C + s->labels[n]] - mx);
    }
    *loss = (float)(total / (double)B);
    s->out = (sy_tensor){.struct_size = sizeof s->out, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {B, C},
                         .data = s->logits, .nbytes = (size_t)(B * C) * sizeof(float), .name = "logits"};
    *batch = B;
    return NULL;
}

sy_status *sy_qas_session_eval(sy_qas_session *s, const sy_tensor *const *in, size_t n_in, float *loss,
                               const sy_tensor **logits)
{
    int64_t B;
    sy_status *st = forward(s, in, n_in, &B, loss);
    if (!st && logits)
        *logits = &s->out;
    return st;
}

sy_status *sy_qas_session_step(sy_qas_session *s, const sy_tensor *const *in, size_t n_in, float lr, float *loss,
                               const sy_tensor **logits)
{
    int64_t B;
    sy_status *st = forward(s, in, n_in, &B, loss);
    if (st)
        return st;
    if (logits)
        *logits = &s->out;
    qas_layer *last = &s->L[s->n - 1];
    qas_softmax_xent_grad((int32_t)B, last->p.o, last->r, s->out_scale, s->labels, last->dy);
    for (size_t i = s->n; i-- > 0;) {
        qas_layer *L = &s->L[i];
        const int32_t no = (int32_t)B * L->out_n;
        if (L->relu) /* the ReLU on codes, then the layer: dy of the FC output */
            qas_relu_backward(no, L->p.y_zp, L->y, L->dy, L->dy);
        if (L->conv) { /* the separate passes: the gradient, QAS, SGD, the re-quantization */
            const int32_t nw = L->p.o * L->p.k;
            float *gw = s->biases_only ? NULL : L->gw, *gb = L->b ? L->gb : NULL;
            qas_layer *P = i ? &s->L[i - 1] : NULL;
            qas_conv_backward(&L->pc, (int32_t)B, L->x, L->w, L->y, L->dy, gw, gb, P ? P->pool ? P->dpl : P->dy : NULL);
            qas_scale_grads(L->p.o, L->p.k, L->ws, L->p.x_scale, gw, gb);
            if (gw) {
                qas_sgd(nw, lr, s->momentum, gw, L->wv, L->wm);
                qas_requant_w(nw, L->wm, L->w);
            }
            if (gb) {
                qas_sgd(L->p.o, lr, s->momentum, gb, L->bv, L->bm);
                qas_requant_b(L->p.o, L->bm, L->b);
            }
            if (P && P->pool) /* the pooled codes' gradient to the first maximal position of each window */
                qas_maxpool_backward(&P->pp, (int32_t)B, P->r, P->dpl, P->dy);
            continue;
        }
        /* the layer's gradient is applied as it is formed, one output channel at a time; the
         * gradient of an NHWC Conv's codes is formed in NHWC order and permuted back */
        qas_layer *P = i ? &s->L[i - 1] : NULL;
        const bool perm = P && P->conv && P->nhwc;
        qas_fc_backward_update(&L->p, (int32_t)B, L->x, L->w, L->b, L->y, L->dy,
                               perm || (P && L->tp) ? L->dx : P ? P->pool ? P->dpl : P->dy : NULL, lr, s->momentum,
                               s->biases_only ? NULL : L->wm, L->wv, L->bm, L->bv, L->gw);
        if (P && L->tp) /* the gradient of the Transpose's codes back to the Conv's layout */
            qas_unperm_f32((int32_t)B, L->tsrc, L->tperm, L->dx, P->pool ? P->dpl : P->dy);
        if (perm) /* (of the pooled codes first, when a MaxPool follows the Conv) */
            f32_to_nchw(B, P->pc.o, P->pool ? P->pp.oh * P->pp.ow : P->pc.oh * P->pc.ow, L->dx,
                        P->pool ? P->dpl : P->dy);
        if (P && P->pool)
            qas_maxpool_backward(&P->pp, (int32_t)B, P->r, P->dpl, P->dy);
    }
    s->steps++;
    return NULL;
}

int64_t sy_qas_session_steps(const sy_qas_session *s) { return s ? s->steps : 0; }

bool sy_qas_session_from_tflite(const sy_qas_session *s) { return s && s->tflite_src; }

/* the codes written over an initializer's raw data (the quantizer stores
 * its codes as raw data; anything else is refused, not converted) */
static bool set_codes(Onnx__TensorProto *t, const void *codes, size_t bytes)
{
    if (t->raw_data.len != bytes)
        return false;
    memcpy(t->raw_data.data, codes, bytes);
    return true;
}

/* the trained codes written into the source .tflite's buffers */
static sy_status *export_tflite(sy_qas_session *s, const char *path)
{
    if (!s->tflite_src)
        return err(SY_ERR_UNSUPPORTED, "%s: a .tflite export needs a session built from an int8 TFLite model (this "
                   "one is an ONNX model's: export it as .onnx)", path);
    const char *names[2 * MAX_LAYERS];
    const void *values[2 * MAX_LAYERS];
    size_t nbytes[2 * MAX_LAYERS], n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const qas_layer *L = &s->L[i];
        names[n] = L->w_init->name, values[n] = L->w, nbytes[n++] = (size_t)L->p.o * (size_t)L->p.k;
        if (L->b)
            names[n] = L->b_init->name, values[n] = L->b, nbytes[n++] = (size_t)L->p.o * sizeof *L->b;
    }
    return tr_tflite_export_int8(s->tflite_src, s->tflite_subgraph, path, n, names, values, nbytes);
}

sy_status *sy_qas_session_export(sy_qas_session *s, const char *path)
{
    size_t pl = strlen(path);
    if (pl >= 7 && !strcmp(path + pl - 7, ".tflite"))
        return export_tflite(s, path);
    for (size_t i = 0; i < s->n; i++) {
        qas_layer *L = &s->L[i];
        if (!set_codes(L->w_init, L->w, (size_t)L->p.o * (size_t)L->p.k) ||
            (L->b && !set_codes(L->b_init, L->b, (size_t)L->p.o * sizeof *L->b)))
            return err(SY_ERR_UNSUPPORTED, "node '%s' (Gemm): its weight or bias codes are not stored as raw data",
                       L->gemm->name);
    }
    size_t len = 0;
    uint8_t *buf = tl_pack_model(s->model, &len);
    if (!buf)
        return err(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = tl_write_atomic(path, buf, len, NULL, 0);
    free(buf);
    return st;
}

size_t sy_qas_session_layer_count(const sy_qas_session *s) { return s ? s->n : 0; }

bool sy_qas_session_layer(const sy_qas_session *s, size_t i, sy_qas_layer_info *out)
{
    if (!s || i >= s->n || !out || out->struct_size < sizeof *out)
        return false;
    const qas_layer *L = &s->L[i];
    *out = (sy_qas_layer_info){.struct_size = sizeof *out, .name = L->gemm->name, .k = L->p.k, .o = L->p.o,
                               .x_scale = L->p.x_scale, .y_scale = L->p.y_scale, .x_zp = L->p.x_zp,
                               .y_zp = L->p.y_zp, .relu = L->relu, .w_scale = L->ws, .w = L->w, .bias = L->b,
                               .w_master = s->biases_only ? NULL : L->wm, .b_master = L->bm, .conv = L->conv,
                               .nhwc = L->nhwc};
    if (L->conv) {
        const qas_conv *c = &L->pc;
        out->ic = c->c, out->ih = c->h, out->iw = c->w, out->oh = c->oh, out->ow = c->ow, out->kh = c->kh;
        out->kw = c->kw, out->sh = c->sh, out->sw = c->sw, out->pt = c->pt, out->pl = c->pl;
    }
    out->transpose = L->tp;
    memcpy(out->tperm, L->tperm, sizeof out->tperm);
    if (L->pool) {
        const qas_pool *q = &L->pp;
        out->pool = 1, out->pool_kh = q->kh, out->pool_kw = q->kw, out->pool_sh = q->sh, out->pool_sw = q->sw;
        out->pool_pt = q->pt, out->pool_pl = q->pl, out->pool_oh = q->oh, out->pool_ow = q->ow;
    }
    return true;
}

sy_status *sy_qas_session_front(sy_qas_session *s, const sy_tensor *const *in, size_t n_in, const sy_tensor **codes)
{
    if (n_in != s->n_data)
        return err(SY_ERR_INVALID_ARGUMENT, "expected the model's %zu inputs, got %zu", s->n_data, n_in);
    sy_status *st = NULL;
    for (size_t i = 0; i < s->n_data && !st; i++)
        st = tr_feed_input(s->ps, s->pm, i, in[i]);
    if (!st)
        st = sy_session_run(s->ps);
    if (!st)
        st = sy_session_get_output(s->ps, 0, codes);
    if (!st)
        st = geometry(s, *codes);
    return st;
}

const uint8_t *sy_qas_session_front_onnx(const sy_qas_session *s, int part, size_t *len)
{
    bool ok = s && part >= SY_QAS_FRONT_ALL && part <= SY_QAS_FRONT_INPUT_Q;
    *len = ok ? s->front_len[part] : 0;
    return ok ? s->front_onnx[part] : NULL;
}
