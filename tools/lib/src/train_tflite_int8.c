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
 * group C; MAX_POOL_2D and AVERAGE_POOL_2D between them too); an int8 ADD,
 * SUB or MUL (numpy broadcasting, or an int8 constant operand; fused NONE,
 * RELU, RELU6 or RELU_N1_TO_1), PAD / PADV2 (constant paddings), MEAN
 * (constant axes) or CONCATENATION reads each input through its own
 * DequantizeLinear and writes the output's QuantizeLinear, and so do
 * SQUEEZE, TRANSPOSE and STRIDED_SLICE (codes of one quantization; the
 * shape logic is the float translation's, train_tflite_writer.c); MAXIMUM
 * and MINIMUM (one quantization) are Max / Min of the codes; an int8 SOFTMAX
 * (scale 1/256, zero point -128) is Softmax on the dequantized logits and a
 * QuantizeLinear.
 * Anything else is refused naming the operator or tensor and why. The
 * reading of the file and the writing of the ONNX model are the float
 * translation's too (train_tflite_writer.c). The subgraph translated is
 * chosen as the float translation chooses (tr_tflite_pick_subgraph): 0
 * unless a signature name or an index is given. */
#include "train_tflite.h"
#include "train_tflite_writer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the tensors ---------------------------------------------------------------- */

/* The quantization of tensor i: its scales and zero points read and checked
 * (every scale finite and positive, as many zero points as scales, the zero
 * points in the type's range, a per-channel dimension inside the shape). */
static sy_status *read_quant(tfw *c, uint32_t i, fb_table t)
{
    tfw_tensor *ti = &c->t[i];
    fb_table q = fb_subtable(&c->r, t, TENSOR_QUANT, "tensor quantization");
    fb_vec sc = fb_vector(&c->r, q, Q_SCALE, 4, "quantization scale");
    fb_vec zv = fb_vector(&c->r, q, Q_ZERO_POINT, 8, "quantization zero_point");
    int32_t qd = fb_i32(&c->r, q, Q_DIMENSION, 0, "quantized_dimension");
    TFW_CHECK_FB(c);
    ti->nq = sc.len;
    ti->qdim = qd;
    if (!sc.len)
        return NULL;
    float *s = tl_alloc(&c->m->pl, sc.len * sizeof *s);
    int64_t *z = tl_alloc(&c->m->pl, sc.len * sizeof *z);
    if (!s || !z)
        return tfw_oom(c);
    if (zv.len != sc.len)
        return tfw_bad_tensor(c, i, "%u scales but %u zero points (one zero point a scale)", sc.len, zv.len);
    for (uint32_t k = 0; k < sc.len; k++) {
        s[k] = fb_vec_f32(&c->r, sc, k);
        z[k] = fb_vec_i64(&c->r, zv, k);
        TFW_CHECK_FB(c);
        if (!isfinite(s[k]) || !(s[k] > 0))
            return tfw_bad_tensor(c, i, "scale %u is %g: a scale must be finite and positive", k, (double)s[k]);
    }
    ti->scale = s;
    ti->zp = z;
    if (sc.len > 1 && (qd < 0 || qd >= ti->rank || ti->dims[qd] != (int64_t)sc.len))
        return tfw_bad_tensor(c, i, "%u scales with quantized_dimension %d of a tensor of rank %d: per-channel scales "
                              "need one scale per index of that dimension", sc.len, qd, ti->rank);
    int64_t lo = ti->type == TT_INT8 ? -128 : 0, hi = ti->type == TT_INT8 ? 127 : 0;
    for (uint32_t k = 0; k < sc.len; k++)
        if (ti->type == TT_INT8 || ti->type == TT_INT32)
            if (z[k] < lo || z[k] > hi)
                return tfw_bad_tensor(c, i, "zero point %lld (index %u) is out of range for %s (%s)", (long long)z[k],
                                      k, tfw_type_name(ti->type),
                                      ti->type == TT_INT8 ? "-128 to 127" : "an int32 bias has 0");
    return NULL;
}

/* tensor i (read by tfw_translate): its quantization, and a type the int8 translation takes */
static sy_status *int8_tensor(tfw *c, uint32_t i, fb_table t)
{
    sy_status *st = read_quant(c, i, t);
    if (st)
        return st;
    const tfw_tensor *ti = &c->t[i];
    if (ti->type == TT_UINT8)
        return tfw_bad_tensor(c, i, "uint8 (asymmetric uint8 quantization) is not translated: QAS-INT8 takes int8 "
                              "models (convert with int8 inference input/output types)");
    if (ti->type == TT_INT16)
        return tfw_bad_tensor(c, i, "int16 (16x8 quantization) is not translated: QAS-INT8 takes int8 activations");
    if (ti->type == TT_INT8 && !ti->nq)
        return tfw_bad_tensor(c, i, "int8 without quantization parameters (no scale): the codes have no meaning");
    if (ti->type == TT_INT8 && !ti->data && ti->nq != 1)
        return tfw_bad_tensor(c, i, "an int8 activation with %u scales: activations are quantized per tensor", ti->nq);
    if (ti->type == TT_FLOAT32 && ti->nq)
        return tfw_bad_tensor(c, i, "float32 with quantization parameters is not translated");
    if (!ti->data && (ti->type == TT_INT32 || ti->type == TT_INT64))
        return tfw_bad_tensor(c, i, "a runtime %s tensor (no constant buffer) is not translated: shapes, paddings "
                              "and axes are translated as constants", tfw_type_name(ti->type));
    if (ti->type != TT_FLOAT32 && ti->type != TT_INT8 && !(ti->data && (ti->type == TT_INT32 || ti->type == TT_INT64)))
        return tfw_bad_tensor(c, i, "%s is not translated (float32 and int8 tensors, int32 constants)",
                              tfw_type_name(ti->type));
    return NULL;
}

static sy_status *int8_tensors(tfw *c)
{
    for (uint32_t i = 0; i < c->nt; i++)
        if (c->t[i].type == TT_INT8)
            return NULL;
    return sy_status_create(SY_ERR_UNSUPPORTED, "%s: a float TFLite model (no int8 tensor): QAS-INT8 trains "
                            "int8 codes and needs an int8 (fully quantized) TFLite model; a float model trains "
                            "with --mode fp32", c->where);
}

/* ---- initializers and nodes ------------------------------------------------ */

/* the scale and zero point initializers of a per-tensor int8 activation */
static sy_status *act_qparams(tfw *c, int32_t ti)
{
    tfw_tensor *t = &c->t[ti];
    if (t->qs)
        return NULL;
    const char *s = tfw_fresh(c, t->vname, "scale"), *z = tfw_fresh(c, t->vname, "zero_point");
    if (!s || !z)
        return tfw_oom(c);
    float sv = t->scale[0];
    int8_t zv = (int8_t)t->zp[0];
    sy_status *st = tfw_add_init(c, s, SY_DT_FLOAT32, 0, NULL, &sv, 4);
    if (!st)
        st = tfw_add_init(c, z, SY_DT_INT8, 0, NULL, &zv, 1);
    t->qs = s, t->qz = z;
    return st;
}

/* The float value an operator reads for an activation: a float tensor's own
 * value, an int8 tensor's DequantizeLinear (one a tensor). */
static sy_status *check_in(tfw *c, int32_t ti, bool want_int8)
{
    if (!tfw_tensor_ok(c, ti))
        return tfw_refuse(c, "input tensor %d is out of range (the subgraph has %u tensors)", ti, c->nt);
    tfw_tensor *t = &c->t[ti];
    if (t->data)
        return tfw_refuse(c, "input tensor #%d '%s' is a constant where an activation is read", ti, t->vname);
    if (!t->available)
        return tfw_refuse(c, "input tensor #%d '%s' is not a graph input or an earlier operator's output", ti,
                          t->vname);
    if (want_int8 && t->type != TT_INT8)
        return tfw_refuse(c, "input tensor #%d '%s' is %s: the operator is translated with int8 activations", ti,
                          t->vname, tfw_type_name(t->type));
    return NULL;
}

static sy_status *read_act(tfw *c, int32_t ti, bool want_int8, const char **name)
{
    sy_status *st = check_in(c, ti, want_int8);
    if (st)
        return st;
    tfw_tensor *t = &c->t[ti];
    if (t->type == TT_FLOAT32) {
        *name = t->vname;
        return NULL;
    }
    if (!t->dq) {
        if ((st = act_qparams(c, ti)))
            return st;
        const char *d = tfw_fresh(c, t->vname, "dq");
        if (!d)
            return tfw_oom(c);
        if ((st = tfw_node(c, "DequantizeLinear", (const char *[]){t->vname, t->qs, t->qz}, 3, d, NULL, 0)))
            return st;
        t->dq = d;
    }
    *name = t->dq;
    return NULL;
}

/* the output tensor checked: int8, per tensor (read_tensors), the shape given */
static sy_status *check_out(tfw *c, int32_t out, const int64_t *dims, int32_t rank)
{
    const tfw_tensor *t = &c->t[out];
    if (t->type != TT_INT8)
        return tfw_refuse(c, "output tensor #%d '%s' is %s: the operator is translated with int8 outputs", out,
                          t->vname, tfw_type_name(t->type));
    return tfw_check_shape(c, out, dims, rank);
}

/* out's codes: QuantizeLinear of the float value `f` with out's scale and zero point */
static sy_status *quantize_to(tfw *c, int32_t out, const char *f)
{
    sy_status *st = act_qparams(c, out);
    if (st)
        return st;
    const tfw_tensor *t = &c->t[out];
    return tfw_node(c, "QuantizeLinear", (const char *[]){f, t->qs, t->qz}, 3, t->vname, NULL, 0);
}

/* The DequantizeLinear of constant ti (an int8 weight or an int32 bias made
 * an initializer): its nq scales (a vector along axis 0 when per channel)
 * and zero points 0 of `zt`; *dq its value. */
static sy_status *const_dq(tfw *c, int32_t ti, sy_dtype zt, const char **dq)
{
    const tfw_tensor *t = &c->t[ti];
    const char *s = tfw_fresh(c, t->vname, "scale"), *z = tfw_fresh(c, t->vname, "zero_point"),
               *d = tfw_fresh(c, t->vname, "dq");
    if (!s || !z || !d)
        return tfw_oom(c);
    const size_t zsize = zt == SY_DT_INT32 ? 4 : 1;
    void *zeros = calloc(t->nq, zsize);
    if (!zeros)
        return tfw_oom(c);
    const int64_t n = t->nq;
    sy_status *st = tfw_add_init(c, s, SY_DT_FLOAT32, t->nq > 1, &n, t->scale, 4 * (size_t)t->nq);
    if (!st)
        st = tfw_add_init(c, z, zt, t->nq > 1, &n, zeros, zsize * t->nq);
    free(zeros);
    sy_model_attr ax = tfw_int_attr("axis", 0);
    if (!st)
        st = tfw_node(c, "DequantizeLinear", (const char *[]){t->vname, s, z}, 3, d, &ax, t->nq > 1);
    *dq = d;
    return st;
}

/* A constant int8 weight (FULLY_CONNECTED [O, K] as it is; CONV_2D's OHWI
 * filter as OIHW; DEPTHWISE_CONV_2D's [1, H, W, C·m] as [C·m, 1, H, W])
 * read through DequantizeLinear: symmetric, per tensor or per output
 * channel (quantized_dimension 0; 3 for a depthwise filter). *dq its
 * dequantized value. */
static sy_status *weight(tfw *c, int32_t wi, int layout, const char **dq)
{
    if (!tfw_tensor_ok(c, wi))
        return tfw_refuse(c, "the weights are tensor %d, out of range", wi);
    tfw_tensor *w = &c->t[wi];
    if (!w->data)
        return tfw_refuse(c, "the weights (tensor #%d '%s') are not a constant", wi, w->vname);
    if (w->type != TT_INT8)
        return tfw_refuse(c, "the weights (tensor #%d '%s') are %s: int8 weights are translated", wi, w->vname,
                          tfw_type_name(w->type));
    if (w->init)
        return tfw_refuse(c, "the weights (tensor #%d '%s') are read by two operators", wi, w->vname);
    const int32_t odim = layout == TR_TFL_1HWC ? 3 : 0;
    const int64_t O = w->dims[odim];
    if (w->nq != 1 && !(w->qdim == odim && w->nq == (uint32_t)O))
        return tfw_refuse(c,
                          "the weights (tensor #%d '%s') have %u scales along dimension %d: per-tensor or per-output-"
                          "channel (quantized_dimension %d) weights are translated",
                          wi, w->vname, w->nq, w->qdim, odim);
    for (uint32_t k = 0; k < w->nq; k++)
        if (w->zp[k] != 0)
            return tfw_refuse(c,
                              "the weights (tensor #%d '%s') are asymmetric (zero point %lld of channel %u): QAS takes "
                              "symmetric int8 weights, W = s_W·W̄",
                              wi, w->vname, (long long)w->zp[k], k);
    sy_status *st = NULL;
    if (layout == TR_TFL_AS_IS) {
        st = tfw_add_init(c, w->vname, SY_DT_INT8, w->rank, w->dims, w->data, w->nbytes);
    } else { /* [O,H,W,I] as [O,I,H,W]; [1,H,W,C] as [C,1,H,W] */
        int8_t *dst = malloc(w->nbytes ? w->nbytes : 1);
        if (!dst)
            return tfw_oom(c);
        tfw_relayout(layout, w->dims, 1, true, w->data, dst);
        const int64_t *d = w->dims;
        const int64_t oihw[4] = {d[0], d[3], d[1], d[2]}, c1hw[4] = {d[3], 1, d[1], d[2]};
        st = tfw_add_init(c, w->vname, SY_DT_INT8, 4, layout == TR_TFL_OHWI ? oihw : c1hw, dst, w->nbytes);
        free(dst);
    }
    if (st)
        return st;
    w->init = true;
    if ((st = tfw_add_param(c, wi, layout, TT_INT8)))
        return st;
    return const_dq(c, wi, SY_DT_INT8, dq);
}

/* The int32 bias of O values through DequantizeLinear: its scales s_x·s_W
 * (per channel as the weights'), zero point 0. */
static sy_status *bias(tfw *c, int32_t bi, int32_t xi, int32_t wi, int64_t O, const char **dq)
{
    if (!tfw_tensor_ok(c, bi))
        return tfw_refuse(c, "the bias is tensor %d, out of range", bi);
    tfw_tensor *b = &c->t[bi];
    const tfw_tensor *x = &c->t[xi], *w = &c->t[wi];
    if (!b->data || b->type != TT_INT32 || b->rank != 1 || b->dims[0] != O)
        return tfw_refuse(c, "the bias (tensor #%d '%s') is not a constant int32 vector of %lld values", bi, b->vname,
                          (long long)O);
    if (b->init)
        return tfw_refuse(c, "the bias (tensor #%d '%s') is read by two operators", bi, b->vname);
    if (!b->nq)
        return tfw_refuse(c, "the bias (tensor #%d '%s') has no quantization parameters (its scale is s_x·s_W)", bi,
                          b->vname);
    if (b->nq != w->nq)
        return tfw_refuse(c, "the bias (tensor #%d '%s') has %u scales, the weights %u", bi, b->vname, b->nq, w->nq);
    for (uint32_t k = 0; k < b->nq; k++) {
        double want = (double)x->scale[0] * (double)w->scale[k];
        if (fabs((double)b->scale[k] - want) > 1e-6 * want)
            return tfw_refuse(c, "the bias (tensor #%d '%s') scale %u is %g, not s_x·s_W = %g", bi, b->vname, k,
                              (double)b->scale[k], want);
    }
    sy_status *st = tfw_add_init(c, b->vname, SY_DT_INT32, 1, b->dims, b->data, b->nbytes);
    if (st)
        return st;
    b->init = true;
    if ((st = tfw_add_param(c, bi, TR_TFL_AS_IS, TT_INT32)))
        return st;
    return const_dq(c, bi, SY_DT_INT32, dq);
}

/* ---- operators ---------------------------------------------------------------- */

/* the fused activation: NONE, RELU (a Relu on the dequantized output
 * before its QuantizeLinear), RELU6 or RELU_N1_TO_1 (a Clip to [0, 6] or
 * [-1, 1] there: TFLite's clamp of the codes to those of the bounds,
 * [quantize(lo), quantize(hi)] within [-128, 127], which the QDQ pass folds
 * into the requantization as it folds the Relu) */
static sy_status *fused(tfw *c, int act, const char *pre, int32_t out)
{
    if (act == ACT_NONE)
        return quantize_to(c, out, pre);
    const bool clip = act == ACT_RELU6 || act == ACT_RELU_N1_TO_1;
    const char *y = c->t[out].vname,
               *r = tfw_fresh(c, y, act == ACT_RELU6 ? "relu6" : act == ACT_RELU_N1_TO_1 ? "relu_n1_to_1" : "relu"),
               *lo = NULL, *hi = NULL;
    if (!r)
        return tfw_oom(c);
    sy_status *st = NULL;
    if (clip) {
        const float l = act == ACT_RELU6 ? 0.0f : -1.0f, h = act == ACT_RELU6 ? 6.0f : 1.0f;
        if ((st = tfw_const_f32(c, y, "min", l, &lo)) || (st = tfw_const_f32(c, y, "max", h, &hi)) ||
            (st = tfw_node(c, "Clip", (const char *[]){pre, lo, hi}, 3, r, NULL, 0)))
            return st;
    } else if ((st = tfw_node(c, "Relu", &pre, 1, r, NULL, 0))) {
        return st;
    }
    return quantize_to(c, out, r);
}

static sy_status *check_act(tfw *c, int act)
{
    if (act == ACT_NONE || act == ACT_RELU)
        return NULL;
    const char *n = tfl_act_name(act);
    return tfw_refuse(c, "the fused activation %s is not translated for QAS-INT8 (NONE and RELU are)",
                      n ? n : "(invalid)");
}

static sy_status *t_fc(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    if (io->nin < 2)
        return tfw_refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1];
    int act = tfw_opt_int(c, p, "fused_activation_function");
    int wformat = tfw_opt_int(c, p, "weights_format");
    TFW_CHECK_FB(c);
    if (wformat != 0)
        return tfw_refuse(c, "weights_format %d (only DEFAULT is translated)", wformat);
    sy_status *st = check_act(c, act);
    if (st)
        return st;
    const char *xd = NULL, *wd = NULL, *bd = NULL;
    if ((st = read_act(c, xi, true, &xd)))
        return st;
    if (!tfw_tensor_ok(c, wi) || c->t[wi].rank != 2)
        return tfw_refuse(c, "the weights are not a matrix [O, K]");
    const tfw_tensor *x = &c->t[xi], *w = &c->t[wi];
    const int64_t O = w->dims[0], K = w->dims[1];
    if (x->rank != 2 || x->dims[1] != K)
        return tfw_refuse(c, "input '%s' is not [N, %lld] (an int8 FULLY_CONNECTED is translated for a rank-2 input; "
                          "a RESHAPE before it gives one)", x->vname, (long long)K);
    if ((st = check_out(c, io->out, (const int64_t[]){x->dims[0], O}, 2)))
        return st;
    if ((st = weight(c, wi, TR_TFL_AS_IS, &wd)))
        return st;
    if (io->nin > 2 && (st = bias(c, io->in[2], xi, wi, O, &bd)))
        return st;
    const char *pre = tfw_fresh(c, c->t[io->out].vname, "f");
    if (!pre)
        return tfw_oom(c);
    sy_model_attr ga = tfw_int_attr("transB", 1);
    if ((st = tfw_node(c, "Gemm", (const char *[]){xd, wd, bd}, bd ? 3 : 2, pre, &ga, 1)))
        return st;
    return fused(c, act, pre, io->out);
}

static sy_status *t_conv(tfw *c, const tfw_opio *io, const tfw_opts *p, bool depthwise)
{
    if (io->nin < 2)
        return tfw_refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1];
    const tfw_tensor *x = &c->t[xi], *w = &c->t[wi];
    int act = tfw_opt_int(c, p, "fused_activation_function");
    TFW_CHECK_FB(c);
    const char *xd = NULL, *wd = NULL, *bd = "";
    sy_status *st = check_act(c, act);
    if (!st)
        st = read_act(c, xi, true, &xd);
    if (st)
        return st;
    if (c->t[wi].rank != 4)
        return tfw_refuse(c, "the filter is not a rank-4 [O, H, W, I] tensor");
    if (x->rank != 4)
        return tfw_refuse(c, "input '%s' has rank %d (4 is translated)", x->vname, x->rank);
    const int64_t N = x->dims[0], C = x->dims[3], O = w->dims[depthwise ? 3 : 0];
    if (depthwise && (w->dims[0] != 1 || C < 1 || O % C))
        return tfw_refuse(c, "filter '%s' [%lld,%lld,%lld,%lld] for %lld input channels", w->vname,
                          (long long)w->dims[0], (long long)w->dims[1], (long long)w->dims[2], (long long)O,
                          (long long)C);
    if (!depthwise && w->dims[3] != C)
        return tfw_refuse(c, "filter '%s' reads %lld channels of an input of %lld (grouped int8 convolutions are not "
                          "translated)", w->vname, (long long)w->dims[3], (long long)C);
    tfw_window win;
    if ((st = tfw_window_of(c, p, false, x->dims[1], x->dims[2], w->dims[1], w->dims[2], 64, &win)) ||
        (st = check_out(c, io->out, (const int64_t[]){N, win.oh, win.ow, O}, 4)) ||
        (st = weight(c, wi, depthwise ? TR_TFL_1HWC : TR_TFL_OHWI, &wd)))
        return st;
    if (io->nin > 2 && (st = bias(c, io->in[2], xi, wi, O, &bd)))
        return st;
    const char *out = c->t[io->out].vname, *xt = tfw_fresh(c, out, "in_nchw"), *yt = tfw_fresh(c, out, "nchw"),
               *pre = tfw_fresh(c, out, "f");
    if (!xt || !yt || !pre)
        return tfw_oom(c);
    if ((st = tfw_nchw_node(c, "Conv", xd, (const char *[]){wd, bd}, io->nin > 2 ? 2 : 1, xt, yt, pre, &win,
                            depthwise ? C : 1)))
        return st;
    return fused(c, win.act, pre, io->out);
}

static bool same_q(const tfw_tensor *a, const tfw_tensor *b)
{
    return a->scale[0] == b->scale[0] && a->zp[0] == b->zp[0];
}

/* MAX_POOL_2D and AVERAGE_POOL_2D on int8 (its input's scale and zero point,
 * as TFLite's int8 kernels require: they work on the codes alone):
 * DequantizeLinear → Transpose → MaxPool | AveragePool → Transpose [→ Relu]
 * → QuantizeLinear. An AveragePool's SAME padding divides by the taps inside
 * the input (count_include_pad 0), as TFLite's does. */
static sy_status *t_pool(tfw *c, const tfw_opio *io, const tfw_opts *p, bool average)
{
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->out];
    int act = tfw_opt_int(c, p, "fused_activation_function");
    TFW_CHECK_FB(c);
    const char *xd = NULL;
    sy_status *st = check_act(c, act);
    if (!st)
        st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    if (x->rank != 4)
        return tfw_refuse(c, "input '%s' has rank %d (4 is translated)", x->vname, x->rank);
    tfw_window win;
    if ((st = tfw_window_of(c, p, true, x->dims[1], x->dims[2], 0, 0, 64, &win)) ||
        (st = check_out(c, io->out, (const int64_t[]){x->dims[0], win.oh, win.ow, x->dims[3]}, 4)))
        return st;
    if (!same_q(x, y))
        return tfw_refuse(c, "output '%s' is quantized with another scale or zero point than input '%s' (an int8 "
                          "%s keeps the codes' quantization)", y->vname, x->vname, c->opname);
    const char *out = y->vname, *xt = tfw_fresh(c, out, "in_nchw"), *yt = tfw_fresh(c, out, "nchw"),
               *pre = tfw_fresh(c, out, "f");
    if (!xt || !yt || !pre)
        return tfw_oom(c);
    if ((st = tfw_nchw_node(c, average ? "AveragePool" : "MaxPool", xd, NULL, 0, xt, yt, pre, &win, 0)))
        return st;
    return fused(c, win.act, pre, io->out);
}

/* The float value an elementwise operator reads for operand ti: an int8
 * activation's DequantizeLinear (read_act), or an int8 constant's, quantized
 * per tensor (TFLite's int8 ADD, SUB and MUL read one scale an operand),
 * made an initializer named after the tensor once; the constants are frozen
 * (no trained parameter). */
static sy_status *elem_operand(tfw *c, int32_t ti, const char **name)
{
    tfw_tensor *t = &c->t[ti];
    if (!t->data)
        return read_act(c, ti, true, name);
    if (t->type != TT_INT8)
        return tfw_refuse(c, "constant input tensor #%d '%s' is %s: int8 constants are translated", ti, t->vname,
                          tfw_type_name(t->type));
    if (t->nq != 1)
        return tfw_refuse(c, "constant input tensor #%d '%s' has %u scales: an int8 %s reads its operands quantized "
                          "per tensor", ti, t->vname, t->nq, c->opname);
    if (!t->dq) {
        if (t->init && !t->codes)
            return tfw_refuse(c, "constant input tensor #%d '%s' is read as weights too", ti, t->vname);
        sy_status *st = t->init ? NULL : tfw_add_init(c, t->vname, SY_DT_INT8, t->rank, t->dims, t->data, t->nbytes);
        t->init = t->codes = true;
        if (!st)
            st = act_qparams(c, ti);
        const char *d = st ? NULL : tfw_fresh(c, t->vname, "dq");
        if (!st && !d)
            st = tfw_oom(c);
        if (!st)
            st = tfw_node(c, "DequantizeLinear", (const char *[]){t->vname, t->qs, t->qz}, 3, d, NULL, 0);
        if (st)
            return st;
        t->dq = d;
    }
    *name = t->dq;
    return NULL;
}

/* the output of a and b broadcast as numpy's (aligned on the right, an axis
 * of 1 stretched), checked against io's output tensor */
static sy_status *broadcast_out(tfw *c, const tfw_opio *io, const tfw_tensor *a, const tfw_tensor *b)
{
    const int32_t r = a->rank > b->rank ? a->rank : b->rank;
    int64_t dims[TFW_MAX_RANK];
    for (int32_t d = 0; d < r; d++) { /* axis d of the output, aligned on the right */
        int32_t da = d - (r - a->rank), db = d - (r - b->rank);
        int64_t x = da >= 0 ? a->dims[da] : 1, y = db >= 0 ? b->dims[db] : 1;
        if (x != y && x != 1 && y != 1) {
            char sa[128], sb[128];
            return tfw_refuse(c, "inputs '%s' %s and '%s' %s do not broadcast (axis %d: %lld and %lld)", a->vname,
                              tfw_shape_str(sa, sizeof sa, a->dims, a->rank), b->vname,
                              tfw_shape_str(sb, sizeof sb, b->dims, b->rank), d, (long long)x, (long long)y);
        }
        dims[d] = x == 1 ? y : x;
    }
    return check_out(c, io->out, dims, r);
}

/* ADD, SUB and MUL of two int8 operands, each of its own scale and zero
 * point: two activations whose shapes broadcast as numpy's do (aligned on
 * the right, an axis of 1 stretched: TFLite's int8 kernels broadcast so),
 * or an activation and an int8 constant (elem_operand). DequantizeLinear of
 * each → Add | Sub | Mul [→ Relu | Clip(0, 6) | Clip(-1, 1)] → QuantizeLinear of the
 * output's, which the QDQ pass folds into the QAdd / QSub / QMul kernels. */
static sy_status *t_binary(tfw *c, const tfw_opio *io, const tfw_opts *p, const char *op)
{
    if (io->nin != 2)
        return tfw_refuse(c, "%u inputs (two are translated)", io->nin);
    int act = tfw_opt_int(c, p, "fused_activation_function");
    TFW_CHECK_FB(c);
    if (act != ACT_NONE && act != ACT_RELU && act != ACT_RELU6 && act != ACT_RELU_N1_TO_1) {
        const char *n = tfl_act_name(act);
        return tfw_refuse(c, "the fused activation %s is not translated for QAS-INT8 (NONE, RELU, RELU6 and "
                          "RELU_N1_TO_1 are)", n ? n : "(invalid)");
    }
    const tfw_tensor *a = &c->t[io->in[0]], *b = &c->t[io->in[1]];
    if (a->data && b->data)
        return tfw_refuse(c, "both inputs ('%s' and '%s') are constants (a converter folds such an operator)",
                          a->vname, b->vname);
    const char *ad = NULL, *bd = NULL;
    sy_status *st = elem_operand(c, io->in[0], &ad);
    if (!st)
        st = elem_operand(c, io->in[1], &bd);
    if (st)
        return st;
    if ((st = broadcast_out(c, io, a, b)))
        return st;
    const char *pre = tfw_fresh(c, c->t[io->out].vname, "f");
    if (!pre)
        return tfw_oom(c);
    if ((st = tfw_node(c, op, (const char *[]){ad, bd}, 2, pre, NULL, 0)))
        return st;
    return fused(c, act, pre, io->out);
}

/* PAD and PADV2 of an int8 activation with constant paddings [rank, 2]
 * (non-negative), the output quantized as the input (TFLite's int8 kernel
 * copies the codes): DequantizeLinear → Pad (constant mode) →
 * QuantizeLinear, which the QDQ pass runs on the codes. PAD pads with the
 * output's zero point (the real value 0, ONNX Pad's default constant);
 * PADV2 with its constant_values, one int8 code of the output's
 * quantization, as its real value s·(c − z). */
static sy_status *t_pad(tfw *c, const tfw_opio *io, bool v2)
{
    if (io->nin != 2 && !(v2 && io->nin == 3))
        return tfw_refuse(c, "%u inputs (%s)", io->nin, v2 ? "PADV2 has 2 or 3" : "PAD has 2");
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->out];
    int64_t v[2 * TFW_MAX_RANK], pads[2 * TFW_MAX_RANK], od[TFW_MAX_RANK];
    size_t n = 0;
    if ((st = tfw_const_ints(c, io->in[1], v, 2 * TFW_MAX_RANK, &n, "paddings")))
        return st;
    if (n != 2 * (size_t)x->rank)
        return tfw_refuse(c, "%zu paddings (tensor #%d '%s') for input '%s' of rank %d (two an axis)", n, io->in[1],
                          c->t[io->in[1]].vname, x->vname, x->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        if (v[2 * d] < 0 || v[2 * d + 1] < 0)
            return tfw_refuse(c, "the paddings (tensor #%d '%s') of axis %d are %lld and %lld: negative paddings are "
                              "not translated", io->in[1], c->t[io->in[1]].vname, d, (long long)v[2 * d],
                              (long long)v[2 * d + 1]);
        pads[d] = v[2 * d]; /* ONNX's pads: every axis's leading one, then the trailing ones */
        pads[x->rank + d] = v[2 * d + 1];
        od[d] = x->dims[d] + v[2 * d] + v[2 * d + 1];
    }
    if ((st = check_out(c, io->out, od, x->rank)))
        return st;
    if (!same_q(x, y))
        return tfw_refuse(c, "output '%s' is quantized with another scale or zero point than input '%s' (an int8 %s "
                          "copies the codes)", y->vname, x->vname, c->opname);
    const char *in[3] = {xd, NULL, NULL};
    if ((st = tfw_const_i64(c, y->vname, "pads", pads, 2 * (size_t)x->rank, false, &in[1])))
        return st;
    if (io->nin == 3) {
        const int32_t vi = io->in[2];
        const tfw_tensor *cv = &c->t[vi];
        if (!cv->data || cv->type != TT_INT8 || tfw_numel(cv) != 1)
            return tfw_refuse(c, "constant_values (tensor #%d '%s') is not one int8 constant", vi, cv->vname);
        if (cv->nq != 1 || !same_q(cv, y))
            return tfw_refuse(c, "constant_values (tensor #%d '%s') is not quantized as the output '%s' (TFLite "
                              "pads with its code)", vi, cv->vname, y->vname);
        const float real = (float)((int32_t)(int8_t)cv->data[0] - (int32_t)y->zp[0]) * y->scale[0];
        if ((st = tfw_const_f32(c, y->vname, "pad_value", real, &in[2])))
            return st;
    }
    const char *f = tfw_fresh(c, y->vname, "f");
    if (!f)
        return tfw_oom(c);
    if ((st = tfw_node(c, "Pad", in, io->nin == 3 ? 3 : 2, f, NULL, 0)))
        return st;
    return quantize_to(c, io->out, f);
}

/* MEAN of an int8 activation over constant axes, keep_dims either way, the
 * output of its own scale and zero point (TFLite's int8 kernel
 * requantizes): DequantizeLinear → ReduceMean (opset 13: the axes an
 * attribute) → QuantizeLinear. */
static sy_status *t_mean(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    if (io->nin != 2)
        return tfw_refuse(c, "%u inputs (MEAN has 2)", io->nin);
    int keep = tfw_opt_int(c, p, "keep_dims");
    TFW_CHECK_FB(c);
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const tfw_tensor *x = &c->t[io->in[0]];
    int64_t v[TFW_MAX_RANK], axes[TFW_MAX_RANK], od[TFW_MAX_RANK];
    size_t n = 0, na = 0;
    if ((st = tfw_const_ints(c, io->in[1], v, TFW_MAX_RANK, &n, "axes")))
        return st;
    if (!n)
        return tfw_refuse(c, "no axes (tensor #%d '%s' is empty: a mean over nothing)", io->in[1],
                          c->t[io->in[1]].vname);
    int32_t r = 0;
    if ((st = tfw_reduce_axes(c, x, v, n, keep != 0, axes, &na, od, &r)) || (st = check_out(c, io->out, od, r)))
        return st;
    const char *f = tfw_fresh(c, c->t[io->out].vname, "f");
    if (!f)
        return tfw_oom(c);
    sy_model_attr ra[2] = {tfw_ints_attr("axes", axes, na), tfw_int_attr("keepdims", keep != 0)};
    if ((st = tfw_node(c, "ReduceMean", &xd, 1, f, ra, 2)))
        return st;
    return quantize_to(c, io->out, f);
}

/* CONCATENATION of int8 activations along an axis, every input quantized as
 * the output (TFLite's int8 kernel copies the codes and refuses other
 * inputs at Prepare, so no requantization is translated; no fused
 * activation, as there): DequantizeLinear of each input → Concat →
 * QuantizeLinear. */
static sy_status *t_concat(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    int32_t axis = tfw_opt_int(c, p, "axis");
    int act = tfw_opt_int(c, p, "fused_activation_function");
    TFW_CHECK_FB(c);
    if (act != ACT_NONE) {
        const char *n = tfl_act_name(act);
        return tfw_refuse(c, "the fused activation %s: TFLite's CONCATENATION takes none (its kernel refuses one)",
                          n ? n : "(invalid)");
    }
    sy_status *st = NULL;
    const char *in[TFW_MAX_INPUTS];
    for (uint32_t k = 0; k < io->nin; k++)
        if ((st = read_act(c, io->in[k], true, &in[k])))
            return st;
    const tfw_tensor *x0 = &c->t[io->in[0]];
    const int32_t r = x0->rank;
    if (axis < -r || axis >= r || r == 0)
        return tfw_refuse(c, "axis %d of inputs of rank %d", axis, r);
    if (axis < 0)
        axis += r;
    int64_t dims[TFW_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    for (uint32_t k = 1; k < io->nin; k++) {
        const tfw_tensor *x = &c->t[io->in[k]];
        bool fits = x->rank == r;
        for (int32_t d = 0; fits && d < r; d++)
            fits = d == axis || x->dims[d] == x0->dims[d];
        if (!fits)
            return tfw_refuse(c, "input %u '%s' does not match input 0 '%s' outside axis %d", k, x->vname, x0->vname,
                              axis);
        dims[axis] += x->dims[axis];
    }
    if ((st = check_out(c, io->out, dims, r)))
        return st;
    const tfw_tensor *y = &c->t[io->out];
    for (uint32_t k = 0; k < io->nin; k++) {
        const tfw_tensor *x = &c->t[io->in[k]];
        if (!same_q(x, y))
            return tfw_refuse(c,
                              "input %u '%s' is quantized with scale %g and zero point %lld, the output '%s' with %g "
                              "and %lld: TFLite's int8 CONCATENATION keeps the codes (real TFLite refuses inputs "
                              "quantized otherwise than the output), so a requantizing one is not translated",
                              k, x->vname, (double)x->scale[0], (long long)x->zp[0], y->vname, (double)y->scale[0],
                              (long long)y->zp[0]);
    }
    const char *pre = tfw_fresh(c, y->vname, "f");
    if (!pre)
        return tfw_oom(c);
    sy_model_attr aa = tfw_int_attr("axis", axis);
    if ((st = tfw_node(c, "Concat", in, io->nin, pre, &aa, 1)))
        return st;
    return quantize_to(c, io->out, pre);
}

static sy_status *t_reshape(tfw *c, const tfw_opio *io)
{
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if (y->type != TT_INT8)
        return tfw_refuse(c, "output tensor #%d '%s' is %s (int8 is translated)", io->out, y->vname,
                          tfw_type_name(y->type));
    if (tfw_numel(x) != tfw_numel(y))
        return tfw_refuse(c, "input '%s' has %lld values, output '%s' %lld", x->vname, (long long)tfw_numel(x),
                          y->vname, (long long)tfw_numel(y));
    if (!same_q(x, y))
        return tfw_refuse(c,
                          "output '%s' is quantized with another scale or zero point than input '%s' (an int8 RESHAPE "
                          "keeps the codes)",
                          y->vname, x->vname);
    /* the output's static shape, a leading dimension kept from the input copied (0) */
    int64_t s[TFW_MAX_RANK];
    for (int32_t d = 0; d < y->rank; d++)
        s[d] = y->dims[d];
    if (y->rank > 0 && x->rank > 0 && y->dims[0] == x->dims[0])
        s[0] = 0;
    const char *shp = tfw_fresh(c, y->vname, "shape"), *f = tfw_fresh(c, y->vname, "f");
    if (!shp || !f)
        return tfw_oom(c);
    const int64_t r = y->rank;
    if ((st = tfw_add_init(c, shp, SY_DT_INT64, 1, &r, s, 8 * (size_t)y->rank)) ||
        (st = tfw_node(c, "Reshape", (const char *[]){xd, shp}, 2, f, NULL, 0)))
        return st;
    return quantize_to(c, io->out, f);
}

/* ---- int8 data movement and MAXIMUM / MINIMUM: codes of one quantization ------------- */

/* An int8 SQUEEZE, TRANSPOSE or STRIDED_SLICE moves its input's codes into
 * its output: both int8, of one scale and zero point (otherwise refused,
 * naming the two tensors: TFLite's kernels copy codes, so another output
 * quantization would not be a requantization there). */
static sy_status *same_codes(tfw *c, const tfw_opio *io)
{
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if (y->type != TT_INT8)
        return tfw_refuse(c, "output tensor #%d '%s' is %s: the operator is translated with int8 outputs", io->out,
                          y->vname, tfw_type_name(y->type));
    if (!same_q(x, y))
        return tfw_refuse(c,
                          "input tensor #%d '%s' is quantized with scale %g and zero point %lld, output tensor #%d "
                          "'%s' with %g and %lld: an int8 %s moves the codes, so both must have one quantization",
                          io->in[0], x->vname, (double)x->scale[0], (long long)x->zp[0], io->out, y->vname,
                          (double)y->scale[0], (long long)y->zp[0], c->opname);
    return NULL;
}

/* tfw_emit_slice's stage: v quantized with out's parameters and read back
 * (QuantizeLinear → DequantizeLinear), so that each node of the chain is a
 * DQ → op → Q the QDQ pass runs on the codes */
static sy_status *requant_stage(tfw *c, int32_t out, const char *v, const char **next)
{
    sy_status *st = act_qparams(c, out);
    if (st)
        return st;
    const tfw_tensor *t = &c->t[out];
    const char *q = tfw_fresh(c, t->vname, "stage_q"), *d = tfw_fresh(c, t->vname, "stage_dq");
    if (!q || !d)
        return tfw_oom(c);
    if ((st = tfw_node(c, "QuantizeLinear", (const char *[]){v, t->qs, t->qz}, 3, q, NULL, 0)) ||
        (st = tfw_node(c, "DequantizeLinear", (const char *[]){q, t->qs, t->qz}, 3, d, NULL, 0)))
        return st;
    *next = d;
    return NULL;
}

/* SQUEEZE (squeeze_dims, or every axis of 1): DequantizeLinear → Squeeze → QuantizeLinear */
static sy_status *t_squeeze(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    const char *xd = NULL, *an = NULL, *f = NULL;
    int64_t axes[TFW_MAX_RANK];
    size_t na = 0;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st || (st = same_codes(c, io)) || (st = tfw_squeeze_axes(c, io, p, axes, &na)))
        return st;
    const char *y = c->t[io->out].vname;
    if (!(f = tfw_fresh(c, y, "f")))
        return tfw_oom(c);
    if ((st = tfw_const_i64(c, y, "axes", axes, na, false, &an)) ||
        (st = tfw_node(c, "Squeeze", (const char *[]){xd, an}, 2, f, NULL, 0)))
        return st;
    return quantize_to(c, io->out, f);
}

/* TRANSPOSE (a constant permutation): DequantizeLinear → Transpose → QuantizeLinear */
static sy_status *t_transpose(tfw *c, const tfw_opio *io)
{
    const char *xd = NULL, *f = NULL;
    int64_t perm[TFW_MAX_RANK];
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st || (st = same_codes(c, io)) || (st = tfw_transpose_perm(c, io, perm)))
        return st;
    if (!(f = tfw_fresh(c, c->t[io->out].vname, "f")))
        return tfw_oom(c);
    sy_model_attr pa = tfw_ints_attr("perm", perm, (size_t)c->t[io->in[0]].rank);
    if ((st = tfw_node(c, "Transpose", &xd, 1, f, &pa, 1)))
        return st;
    return quantize_to(c, io->out, f);
}

/* STRIDED_SLICE (constant begin, end and strides; the masks and offset as
 * the float translation reads them, tfw_strided_slice): DequantizeLinear →
 * Slice [→ Q → DQ → Squeeze] [→ Q → DQ → Unsqueeze] → QuantizeLinear, every
 * pair of the output's quantization */
static sy_status *t_strided_slice(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    const char *xd = NULL, *f = NULL;
    int64_t b[TFW_MAX_RANK], e[TFW_MAX_RANK], s[TFW_MAX_RANK];
    uint32_t shrink = 0, new_axes = 0;
    sy_status *st = io->nin == 4 ? read_act(c, io->in[0], true, &xd)
                                 : tfw_refuse(c, "%u inputs (STRIDED_SLICE has 4)", io->nin);
    if (st || (st = same_codes(c, io)) || (st = tfw_strided_slice(c, io, p, b, e, s, &shrink, &new_axes)))
        return st;
    if (!(f = tfw_fresh(c, c->t[io->out].vname, "f")))
        return tfw_oom(c);
    if ((st = tfw_emit_slice(c, io, xd, f, b, e, s, shrink, new_axes, requant_stage)))
        return st;
    return quantize_to(c, io->out, f);
}

/* An operand of MAXIMUM / MINIMUM as codes: an int8 activation's value, or
 * an int8 constant (one scale) made an initializer of its codes once. */
static sy_status *code_operand(tfw *c, int32_t ti, const char **name)
{
    tfw_tensor *t = &c->t[ti];
    if (!t->data) {
        sy_status *st = check_in(c, ti, true);
        if (st)
            return st;
    } else {
        if (t->type != TT_INT8 || t->nq != 1)
            return tfw_refuse(c, "constant input tensor #%d '%s' is not an int8 constant of one scale (%s, %u scales)",
                              ti, t->vname, tfw_type_name(t->type), t->nq);
        if (t->init && !t->codes)
            return tfw_refuse(c, "constant input tensor #%d '%s' is read as weights too", ti, t->vname);
        if (!t->init) {
            sy_status *st = tfw_add_init(c, t->vname, SY_DT_INT8, t->rank, t->dims, t->data, t->nbytes);
            if (st)
                return st;
            t->init = t->codes = true;
        }
    }
    *name = t->vname;
    return NULL;
}

/* MAXIMUM and MINIMUM of two int8 operands (activations, or one an int8
 * constant) of the output's scale and zero point, broadcast as ADD's: the
 * codes compared as they are (an increasing map of the real values, so the
 * larger code is the larger value), ONNX Max / Min on the int8 codes, its
 * output the output tensor's codes. Another quantization is refused (TFLite's
 * int8 kernel compares the codes without requantizing). */
static sy_status *t_minmax(tfw *c, const tfw_opio *io, const char *op)
{
    if (io->nin != 2)
        return tfw_refuse(c, "%u inputs (two are translated)", io->nin);
    const tfw_tensor *a = &c->t[io->in[0]], *b = &c->t[io->in[1]], *y = &c->t[io->out];
    if (a->data && b->data)
        return tfw_refuse(c, "both inputs ('%s' and '%s') are constants (a converter folds such an operator)",
                          a->vname, b->vname);
    const char *an = NULL, *bn = NULL;
    sy_status *st = code_operand(c, io->in[0], &an);
    if (!st)
        st = code_operand(c, io->in[1], &bn);
    if (st || (st = broadcast_out(c, io, a, b)))
        return st;
    for (int k = 0; k < 2; k++) {
        const tfw_tensor *x = k ? b : a;
        if (!same_q(x, y))
            return tfw_refuse(c,
                              "input %d (tensor #%d '%s') is quantized with scale %g and zero point %lld, the output "
                              "(tensor #%d '%s') with %g and %lld: an int8 %s compares the codes, so its inputs and "
                              "output must have one quantization",
                              k, io->in[k], x->vname, (double)x->scale[0], (long long)x->zp[0], io->out, y->vname,
                              (double)y->scale[0], (long long)y->zp[0], c->opname);
    }
    return tfw_node(c, op, (const char *[]){an, bn}, 2, y->vname, NULL, 0);
}

static sy_status *t_softmax(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    float beta = tfw_opt_f32(c, p, "beta");
    TFW_CHECK_FB(c);
    if (beta != 1.0f)
        return tfw_refuse(c, "beta %g (1 is translated)", (double)beta);
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], true, &xd);
    if (st)
        return st;
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if ((st = check_out(c, io->out, x->dims, x->rank)))
        return st;
    if (y->scale[0] != 1.0f / 256 || y->zp[0] != -128)
        return tfw_refuse(c, "output '%s' has scale %g and zero point %lld: an int8 SOFTMAX's is 1/256 and -128",
                          y->vname, (double)y->scale[0], (long long)y->zp[0]);
    const char *f = tfw_fresh(c, y->vname, "f");
    if (!f)
        return tfw_oom(c);
    sy_model_attr aa = tfw_int_attr("axis", -1);
    if ((st = tfw_node(c, "Softmax", &xd, 1, f, &aa, 1)))
        return st;
    return quantize_to(c, io->out, f);
}

/* QUANTIZE: a float input (or int8, requantized) to int8 codes */
static sy_status *t_quantize(tfw *c, const tfw_opio *io)
{
    const char *xd = NULL;
    sy_status *st = read_act(c, io->in[0], false, &xd);
    if (st)
        return st;
    const tfw_tensor *x = &c->t[io->in[0]];
    if (x->type != TT_FLOAT32 && x->type != TT_INT8)
        return tfw_refuse(c, "input '%s' is %s", x->vname, tfw_type_name(x->type));
    if ((st = check_out(c, io->out, x->dims, x->rank)))
        return st;
    return quantize_to(c, io->out, xd);
}

/* DEQUANTIZE: int8 codes to the float output */
static sy_status *t_dequantize(tfw *c, const tfw_opio *io)
{
    sy_status *st = check_in(c, io->in[0], true);
    if (!st)
        st = act_qparams(c, io->in[0]);
    if (st)
        return st;
    const tfw_tensor *y = &c->t[io->out];
    if (y->type != TT_FLOAT32)
        return tfw_refuse(c, "output tensor #%d '%s' is %s (float32 is translated)", io->out, y->vname,
                          tfw_type_name(y->type));
    const tfw_tensor *x = &c->t[io->in[0]];
    bool same = x->rank == y->rank;
    for (int32_t d = 0; same && d < x->rank; d++)
        same = x->dims[d] == y->dims[d];
    if (!same)
        return tfw_refuse(c, "output '%s' does not have the shape of input '%s'", y->vname, x->vname);
    /* its own DequantizeLinear, writing the output's name */
    return tfw_node(c, "DequantizeLinear", (const char *[]){x->vname, x->qs, x->qz}, 3, y->vname, NULL, 0);
}

static sy_status *translate_op(tfw *c, fb_table op)
{
    int32_t code = 0;
    sy_status *st = tfw_op_code(c, op, &code);
    if (st)
        return st;
    bool known = code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D || code == OP_DEQUANTIZE ||
                 code == OP_FULLY_CONNECTED || code == OP_MAX_POOL_2D || code == OP_RESHAPE || code == OP_SOFTMAX ||
                 code == OP_QUANTIZE || code == OP_AVERAGE_POOL_2D || code == OP_ADD || code == OP_CONCATENATION ||
                 code == OP_SUB || code == OP_MUL || code == OP_PAD || code == OP_PADV2 || code == OP_MEAN ||
                 code == OP_SQUEEZE || code == OP_TRANSPOSE || code == OP_STRIDED_SLICE || code == OP_MAXIMUM ||
                 code == OP_MINIMUM;
    if (!known)
        return sy_status_create(SY_ERR_UNSUPPORTED,
                                "%s: operator #%u (%s, builtin code %d) has no int8 translation for "
                                "QAS-INT8 (QUANTIZE, DEQUANTIZE, FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, "
                                "MAX_POOL_2D, AVERAGE_POOL_2D, ADD, SUB, MUL, MAXIMUM, MINIMUM, PAD, PADV2, MEAN, "
                                "CONCATENATION, RESHAPE, SQUEEZE, TRANSPOSE, STRIDED_SLICE and SOFTMAX are "
                                "translated)",
                                c->where, c->oi, c->opname, (int)code);
    bool biased = code == OP_FULLY_CONNECTED || code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D;
    const bool two = code == OP_RESHAPE || code == OP_ADD || code == OP_SUB || code == OP_MUL || code == OP_PAD ||
                     code == OP_MEAN || code == OP_TRANSPOSE || code == OP_MAXIMUM || code == OP_MINIMUM;
    uint32_t want_max = biased || code == OP_PADV2 ? 3
                        : two                      ? 2
                        : code == OP_CONCATENATION ? TFW_MAX_INPUTS
                        : code == OP_STRIDED_SLICE ? 4
                                                   : 1;
    tfw_opts p;
    tfw_opio io;
    if ((st = tfw_op_options(c, op, code, &p)) || (st = tfw_op_io(c, op, want_max, biased, &io)))
        return st;
    tfw_tensor *y = &c->t[io.out];
    switch (code) {
    case OP_FULLY_CONNECTED: st = t_fc(c, &io, &p); break;
    case OP_CONV_2D: st = t_conv(c, &io, &p, false); break;
    case OP_DEPTHWISE_CONV_2D: st = t_conv(c, &io, &p, true); break;
    case OP_MAX_POOL_2D: st = t_pool(c, &io, &p, false); break;
    case OP_AVERAGE_POOL_2D: st = t_pool(c, &io, &p, true); break;
    case OP_ADD: st = t_binary(c, &io, &p, "Add"); break;
    case OP_SUB: st = t_binary(c, &io, &p, "Sub"); break;
    case OP_MUL: st = t_binary(c, &io, &p, "Mul"); break;
    case OP_PAD: st = t_pad(c, &io, false); break;
    case OP_PADV2: st = t_pad(c, &io, true); break;
    case OP_MEAN: st = t_mean(c, &io, &p); break;
    case OP_CONCATENATION: st = t_concat(c, &io, &p); break;
    case OP_RESHAPE: st = t_reshape(c, &io); break;
    case OP_SQUEEZE: st = t_squeeze(c, &io, &p); break;
    case OP_TRANSPOSE: st = t_transpose(c, &io); break;
    case OP_STRIDED_SLICE: st = t_strided_slice(c, &io, &p); break;
    case OP_MAXIMUM: st = t_minmax(c, &io, "Max"); break;
    case OP_MINIMUM: st = t_minmax(c, &io, "Min"); break;
    case OP_SOFTMAX: st = t_softmax(c, &io, &p); break;
    case OP_QUANTIZE: st = t_quantize(c, &io); break;
    default: st = t_dequantize(c, &io); break;
    }
    if (!st)
        y->available = true;
    return st;
}

static sy_dtype dtype_of(const tfw_tensor *t) { return t->type == TT_INT8 ? SY_DT_INT8 : SY_DT_FLOAT32; }

static sy_status *int8_input(tfw *c, int32_t ti, sy_dtype *dt)
{
    const tfw_tensor *t = &c->t[ti];
    if (t->type != TT_FLOAT32 && t->type != TT_INT8)
        return sy_status_create(SY_ERR_UNSUPPORTED, "%s: graph input '%s' is %s (float32 or int8 is translated)",
                                c->where, t->vname, tfw_type_name(t->type));
    *dt = dtype_of(t);
    return NULL;
}

static const tfw_hooks INT8_HOOKS = {.producer = "switchyard train (from int8 TFLite)", .tensor = int8_tensor,
                                     .tensors_done = int8_tensors, .input = int8_input, .op = translate_op,
                                     .output = dtype_of};

sy_status *tr_tflite_translate_int8(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                                    int64_t index, tr_tfl_model *out)
{
    return tfw_translate(data, size, where, subgraph, index, &INT8_HOOKS, "int8 TFLite translation", out);
}

/* ---- export ----------------------------------------------------------------------- */

sy_status *tr_tflite_export_int8(const char *src, uint32_t subgraph, const char *path, size_t n,
                                 const char *const *names, const void *const *values, const size_t *nbytes)
{
    return tfw_export(src, subgraph, path, n, names, values, nbytes, tr_tflite_translate_int8,
                      "an int8 weight or int32 bias", "codes");
}
