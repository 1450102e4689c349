/* A float TFLite model as an ONNX forward model for training, and the
 * trained tensors written back into the .tflite (train_tflite.h;
 * docs/training.md, "TFLite models").
 *
 * The file is read, and the ONNX model written, by what this translation
 * shares with the int8 one (train_tflite_writer.c: the core's
 * bounds-checked FlatBuffer reader, sy_model_writer at opset 13); this file
 * says how each float operator is translated. One subgraph (0 unless the
 * caller names another by signature or index) is translated operator by
 * operator; each translation
 * checks the TFLite output tensor's shape against the shape the ONNX
 * operators compute from the static input shapes, so a form this file
 * does not understand is refused instead of translated wrongly. */
#include "train_tflite.h"
#include "train_tflite_writer.h"

#include <switchyard/sy_tools.h>
#include <switchyard/sy_sdk.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool tr_tflite_is_tflite(const uint8_t *data, size_t size) { return size >= 8 && !memcmp(data + 4, "TFL3", 4); }

/* ---- the tensors ------------------------------------------------------------------ */

/* quantized or not float: refused as a whole, naming the first tensor */
static sy_status *float_tensors(tfw *c)
{
    for (uint32_t i = 0; i < c->nt; i++) {
        const tfw_tensor *ti = &c->t[i];
        if (ti->nq || (ti->type != TT_FLOAT32 && !(ti->data && (ti->type == TT_INT32 || ti->type == TT_INT64))))
            return sy_status_create(SY_ERR_UNSUPPORTED,
                                    "%s: tensor #%u '%s' is %s%s: only float TFLite models are translated for training "
                                    "(float32 tensors; int32 constants as shapes and axes)",
                                    c->where, i, ti->vname, ti->nq ? "quantized " : "", tfw_type_name(ti->type));
    }
    return NULL;
}

/* ---- values and constants -------------------------------------------------------- */

/* A float32 initializer of a constant tensor in `layout` (once). */
static sy_status *make_init(tfw *c, int32_t ti, int layout)
{
    tfw_tensor *t = &c->t[ti];
    if (t->layout == layout)
        return NULL;
    if (t->layout >= 0)
        return tfw_refuse(c, "constant tensor #%d '%s' is read in two layouts (a filter and a plain operand)", ti,
                          t->vname);
    if (t->type != TT_FLOAT32)
        return tfw_refuse(c, "constant tensor #%d '%s' is %s where a float32 operand is read", ti, t->vname,
                          tfw_type_name(t->type));
    int64_t n = tfw_numel(t), dims[TFW_MAX_RANK];
    int32_t rank = t->rank;
    memcpy(dims, t->dims, sizeof dims);
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return tfw_oom(c);
    if (layout == TR_TFL_AS_IS) {
        memcpy(v, t->data, (size_t)n * 4);
    } else { /* [O,H,W,I] as [O,I,H,W]; [1,H,W,C] as [C,1,H,W] */
        tfw_relayout(layout, t->dims, 4, true, t->data, v);
        const int64_t *d = t->dims;
        const int64_t oihw[4] = {d[0], d[3], d[1], d[2]}, c1hw[4] = {d[3], 1, d[1], d[2]};
        memcpy(dims, layout == TR_TFL_OHWI ? oihw : c1hw, sizeof oihw);
        rank = 4;
    }
    sy_status *st = tfw_add_init(c, t->vname, SY_DT_FLOAT32, rank, dims, v, (size_t)n * 4);
    free(v);
    if (st)
        return st;
    t->layout = layout;
    return tfw_add_param(c, ti, layout, TT_FLOAT32);
}

/* The ONNX value a float operand reads: the tensor's value or initializer. */
static sy_status *operand(tfw *c, int32_t ti, const char **name)
{
    if (!tfw_tensor_ok(c, ti))
        return tfw_refuse(c, "input tensor %d is out of range (the subgraph has %u tensors)", ti, c->nt);
    tfw_tensor *t = &c->t[ti];
    if (!t->available)
        return tfw_refuse(c, "input tensor #%d '%s' is not a graph input, a constant or an earlier operator's output",
                          ti, t->vname);
    if (t->data) {
        sy_status *st = make_init(c, ti, TR_TFL_AS_IS);
        if (st)
            return st;
    } else if (t->type != TT_FLOAT32) {
        return tfw_refuse(c, "input tensor #%d '%s' is %s", ti, t->vname, tfw_type_name(t->type));
    }
    *name = t->vname;
    return NULL;
}

/* ---- the operators ------------------------------------------------------------ */

/* out = act(pre): Relu or Clip, or nothing (then pre is out). */
static sy_status *activation(tfw *c, int act, const char *pre, const char *out)
{
    if (act == ACT_RELU)
        return tfw_node(c, "Relu", &pre, 1, out, NULL, 0);
    float lo = act == ACT_RELU6 ? 0.0f : -1.0f, hi = act == ACT_RELU6 ? 6.0f : 1.0f;
    const char *mn = NULL, *mx = NULL;
    sy_status *st = tfw_const_f32(c, out, "min", lo, &mn);
    if (!st)
        st = tfw_const_f32(c, out, "max", hi, &mx);
    if (st)
        return st;
    return tfw_node(c, "Clip", (const char *[]){pre, mn, mx}, 3, out, NULL, 0);
}

/* where the main node writes: the output, or a fresh value the activation reads */
static sy_status *act_target(tfw *c, int act, const char *out, const char **pre)
{
    if (act == ACT_NONE) {
        *pre = out;
        return NULL;
    }
    if (act != ACT_RELU && act != ACT_RELU6 && act != ACT_RELU_N1_TO_1) {
        const char *n = tfl_act_name(act);
        return tfw_refuse(c, "the fused activation %s is not translated (NONE, RELU, RELU6 and RELU_N1_TO_1 are)",
                          n ? n : "(invalid)");
    }
    *pre = tfw_fresh(c, out, "preact");
    return *pre ? NULL : tfw_oom(c);
}

/* a CONV_2D's or FULLY_CONNECTED's bias: a vector of the O output channels */
static sy_status *bias_operand(tfw *c, int32_t bi, int64_t O, const char **name)
{
    if (!tfw_tensor_ok(c, bi) || c->t[bi].rank != 1 || c->t[bi].dims[0] != O)
        return tfw_refuse(c, "the bias is not a vector of %lld values", (long long)O);
    return operand(c, bi, name);
}

static sy_status *t_conv(tfw *c, const tfw_opio *io, const tfw_opts *p, bool depthwise)
{
    if (io->nin < 2)
        return tfw_refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1], bi = io->nin > 2 ? io->in[2] : -1;
    if (!tfw_tensor_ok(c, wi) || !c->t[wi].data)
        return tfw_refuse(c, "the filter is not a constant tensor");
    const tfw_tensor *x = &c->t[xi], *w = &c->t[wi];
    if (x->rank != 4 || w->rank != 4)
        return tfw_refuse(c, "input '%s' rank %d and filter '%s' rank %d (4 and 4 are translated)", x->vname, x->rank,
                          w->vname, w->rank);
    int64_t N = x->dims[0], H = x->dims[1], W = x->dims[2], C = x->dims[3];
    int64_t O = w->dims[depthwise ? 3 : 0], KH = w->dims[1], KW = w->dims[2];
    if (depthwise) {
        if (w->dims[0] != 1 || C < 1 || O % C)
            return tfw_refuse(c, "filter '%s' [%lld,%lld,%lld,%lld] for %lld input channels", w->vname,
                              (long long)w->dims[0], (long long)KH, (long long)KW, (long long)O, (long long)C);
    } else if (w->dims[3] < 1 || C < w->dims[3] || C % w->dims[3] || O % (C / w->dims[3])) {
        /* grouped: the filter reads C / groups channels, each group of
         * output channels one slice of the input's (ONNX Conv's group) */
        return tfw_refuse(c,
                          "filter '%s' has %lld input channels and %lld output channels for an input of %lld channels "
                          "(a grouped convolution needs the filter's input channels to divide the input's, and the "
                          "groups to divide the output channels)",
                          w->vname, (long long)w->dims[3], (long long)O, (long long)C);
    }
    const int64_t group = depthwise ? C : C / w->dims[3];
    tfw_window win;
    sy_status *st = tfw_window_of(c, p, false, H, W, KH, KW, 0, &win);
    if (!st)
        st = tfw_check_shape(c, io->out, (const int64_t[]){N, win.oh, win.ow, O}, 4);
    if (!st)
        st = make_init(c, wi, depthwise ? TR_TFL_1HWC : TR_TFL_OHWI);
    const char *xn = NULL, *bn = "";
    if (!st)
        st = operand(c, xi, &xn);
    if (!st && bi >= 0)
        st = bias_operand(c, bi, O, &bn);
    if (st)
        return st;
    const char *out = c->t[io->out].vname, *xt = tfw_fresh(c, xn, "nchw"), *yt = tfw_fresh(c, out, "nchw"), *pre;
    if (!xt || !yt)
        return tfw_oom(c);
    if ((st = act_target(c, win.act, out, &pre)) ||
        (st = tfw_nchw_node(c, "Conv", xn, (const char *[]){w->vname, bn}, bi >= 0 ? 2 : 1, xt, yt, pre, &win,
                            group)))
        return st;
    return win.act == ACT_NONE ? NULL : activation(c, win.act, pre, out);
}

static sy_status *t_pool(tfw *c, const tfw_opio *io, const tfw_opts *p, bool max)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    if (x->rank != 4)
        return tfw_refuse(c, "input '%s' has rank %d (4 is translated)", x->vname, x->rank);
    tfw_window win;
    sy_status *st = tfw_window_of(c, p, true, x->dims[1], x->dims[2], 0, 0, 0, &win);
    if (!st)
        st = tfw_check_shape(c, io->out, (const int64_t[]){x->dims[0], win.oh, win.ow, x->dims[3]}, 4);
    const char *xn = NULL;
    if (!st)
        st = operand(c, io->in[0], &xn);
    if (st)
        return st;
    const char *out = c->t[io->out].vname, *xt = tfw_fresh(c, xn, "nchw"), *yt = tfw_fresh(c, out, "nchw"), *pre;
    if (!xt || !yt)
        return tfw_oom(c);
    /* AveragePool's count_include_pad 0 (the default): TFLite divides by the
     * taps inside the input */
    if ((st = act_target(c, win.act, out, &pre)) ||
        (st = tfw_nchw_node(c, max ? "MaxPool" : "AveragePool", xn, NULL, 0, xt, yt, pre, &win, 0)))
        return st;
    return win.act == ACT_NONE ? NULL : activation(c, win.act, pre, out);
}

static sy_status *t_fc(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    if (io->nin < 2)
        return tfw_refuse(c, "%u inputs", io->nin);
    int32_t xi = io->in[0], wi = io->in[1], bi = io->nin > 2 ? io->in[2] : -1;
    if (!tfw_tensor_ok(c, wi))
        return tfw_refuse(c, "weights tensor %d is out of range", wi);
    const tfw_tensor *x = &c->t[xi], *w = &c->t[wi];
    if (w->rank != 2)
        return tfw_refuse(c, "weights '%s' have rank %d (2 is translated)", w->vname, w->rank);
    int64_t O = w->dims[0], K = w->dims[1];
    int act = tfw_opt_int(c, p, "fused_activation_function");
    int wformat = tfw_opt_int(c, p, "weights_format"), keep = tfw_opt_int(c, p, "keep_num_dims");
    TFW_CHECK_FB(c);
    if (wformat != 0)
        return tfw_refuse(c, "weights_format %d (only DEFAULT is translated)", wformat);
    int64_t n = tfw_numel(x);
    if (K < 1 || x->rank < 1 || n % K)
        return tfw_refuse(c, "input '%s' has %lld values, not a multiple of the weights' %lld columns", x->vname,
                          (long long)n, (long long)K);
    bool flat = x->rank == 2 && x->dims[1] == K;
    if (keep && !flat)
        return tfw_refuse(c, "keep_num_dims with an input of rank %d", x->rank);
    sy_status *st = tfw_check_shape(c, io->out, (const int64_t[]){n / K, O}, 2);
    const char *xn = NULL, *wn = NULL, *bn = NULL;
    if (!st)
        st = operand(c, xi, &xn);
    if (!st)
        st = operand(c, wi, &wn);
    if (!st && bi >= 0)
        st = bias_operand(c, bi, O, &bn);
    if (st)
        return st;
    const char *out = c->t[io->out].vname, *pre;
    if ((st = act_target(c, act, out, &pre)))
        return st;
    if (!flat) { /* TFLite reads the input as [n / K, K] */
        const char *shp = NULL, *x2 = tfw_fresh(c, xn, "flat");
        const int64_t s2[2] = {-1, K};
        if (!x2)
            return tfw_oom(c);
        if ((st = tfw_const_i64(c, xn, "flat_shape", s2, 2, false, &shp)) ||
            (st = tfw_node(c, "Reshape", (const char *[]){xn, shp}, 2, x2, NULL, 0)))
            return st;
        xn = x2;
    }
    sy_model_attr ga = tfw_int_attr("transB", 1);
    if ((st = tfw_node(c, "Gemm", (const char *[]){xn, wn, bn}, bn ? 3 : 2, pre, &ga, 1)))
        return st;
    return act == ACT_NONE ? NULL : activation(c, act, pre, out);
}

static sy_status *t_binary(tfw *c, const tfw_opio *io, const tfw_opts *p, const char *op)
{
    if (io->nin != 2)
        return tfw_refuse(c, "%u inputs", io->nin);
    int act = tfw_opt_int(c, p, "fused_activation_function");
    TFW_CHECK_FB(c);
    const char *a = NULL, *b = NULL, *pre = NULL, *out = c->t[io->out].vname;
    sy_status *st = operand(c, io->in[0], &a);
    if (!st)
        st = operand(c, io->in[1], &b);
    if (!st)
        st = act_target(c, act, out, &pre);
    if (!st)
        st = tfw_node(c, op, (const char *[]){a, b}, 2, pre, NULL, 0);
    return st || act == ACT_NONE ? st : activation(c, act, pre, out);
}

static sy_status *t_unary(tfw *c, const tfw_opio *io, int code)
{
    const char *a = NULL, *out = c->t[io->out].vname;
    sy_status *st = operand(c, io->in[0], &a);
    if (st)
        return st;
    if (code == OP_ABS || code == OP_TANH || code == OP_LOGISTIC)
        return tfw_node(c, code == OP_ABS ? "Abs" : code == OP_TANH ? "Tanh" : "Sigmoid", &a, 1, out, NULL, 0);
    return activation(c, code == OP_RELU ? ACT_RELU : code == OP_RELU6 ? ACT_RELU6 : ACT_RELU_N1_TO_1, a, out);
}

static sy_status *t_reshape(tfw *c, const tfw_opio *io)
{
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->out];
    if (tfw_numel(x) != tfw_numel(y))
        return tfw_refuse(c, "input '%s' has %lld values, output '%s' %lld", x->vname, (long long)tfw_numel(x),
                          y->vname, (long long)tfw_numel(y));
    /* the output's static shape; a leading dimension kept from the input is
     * copied (0), so a batch of samples reshapes as one does */
    int64_t s[TFW_MAX_RANK];
    for (int32_t d = 0; d < y->rank; d++)
        s[d] = y->dims[d];
    if (y->rank > 0 && x->rank > 0 && y->dims[0] == x->dims[0])
        s[0] = 0;
    const char *a = NULL, *shp = NULL;
    sy_status *st = operand(c, io->in[0], &a);
    if (!st)
        st = tfw_const_i64(c, y->vname, "shape", s, (size_t)y->rank, false, &shp);
    if (!st)
        st = tfw_node(c, "Reshape", (const char *[]){a, shp}, 2, y->vname, NULL, 0);
    return st;
}

static sy_status *t_squeeze(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    int64_t axes[TFW_MAX_RANK];
    size_t na = 0;
    const char *a = NULL, *an = NULL;
    sy_status *st = tfw_squeeze_axes(c, io, p, axes, &na);
    if (!st)
        st = operand(c, io->in[0], &a);
    if (!st)
        st = tfw_const_i64(c, c->t[io->out].vname, "axes", axes, na, false, &an);
    if (!st)
        st = tfw_node(c, "Squeeze", (const char *[]){a, an}, 2, c->t[io->out].vname, NULL, 0);
    return st;
}

static sy_status *t_concat(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    const tfw_tensor *y = &c->t[io->out];
    int64_t axis = 0;
    int act = tfw_opt_int(c, p, "fused_activation_function");
    sy_status *st = tfw_axis(c, tfw_opt_int(c, p, "axis"), y->rank, &axis);
    TFW_CHECK_FB(c);
    if (st)
        return st;
    const char *in[8] = {NULL}, *pre = NULL;
    int64_t sum = 0;
    for (uint32_t i = 0; i < io->nin; i++) {
        if ((st = operand(c, io->in[i], &in[i])))
            return st;
        const tfw_tensor *x = &c->t[io->in[i]];
        if (x->rank != y->rank)
            return tfw_refuse(c, "input #%u has rank %d, the output %d", i, x->rank, y->rank);
        sum += x->dims[axis];
    }
    int64_t od[TFW_MAX_RANK];
    memcpy(od, y->dims, sizeof od);
    od[axis] = sum;
    if ((st = tfw_check_shape(c, io->out, od, y->rank)) || (st = act_target(c, act, y->vname, &pre)))
        return st;
    sy_model_attr aa = tfw_int_attr("axis", axis);
    if ((st = tfw_node(c, "Concat", in, io->nin, pre, &aa, 1)))
        return st;
    return act == ACT_NONE ? NULL : activation(c, act, pre, y->vname);
}

static sy_status *t_softmax(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    float beta = tfw_opt_f32(c, p, "beta");
    TFW_CHECK_FB(c);
    const char *a = NULL, *out = c->t[io->out].vname;
    sy_status *st = operand(c, io->in[0], &a);
    if (st)
        return st;
    if (beta != 1.0f) { /* softmax(beta x) */
        const char *bn = NULL, *ax = tfw_fresh(c, a, "beta");
        if (!ax)
            return tfw_oom(c);
        if ((st = tfw_const_f32(c, a, "beta_value", beta, &bn)) ||
            (st = tfw_node(c, "Mul", (const char *[]){a, bn}, 2, ax, NULL, 0)))
            return st;
        a = ax;
    }
    sy_model_attr aa = tfw_int_attr("axis", -1);
    return tfw_node(c, "Softmax", &a, 1, out, &aa, 1);
}

static sy_status *t_pad(tfw *c, const tfw_opio *io)
{
    if (io->nin != 2)
        return tfw_refuse(c, "%u inputs (PAD has 2)", io->nin);
    const tfw_tensor *x = &c->t[io->in[0]];
    int64_t v[2 * TFW_MAX_RANK], pads[2 * TFW_MAX_RANK], od[TFW_MAX_RANK];
    size_t n;
    sy_status *st = tfw_const_ints(c, io->in[1], v, 2 * TFW_MAX_RANK, &n, "paddings");
    if (st)
        return st;
    if (n != 2 * (size_t)x->rank)
        return tfw_refuse(c, "%zu paddings for rank %d", n, x->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        if (v[2 * d] < 0 || v[2 * d + 1] < 0)
            return tfw_refuse(c, "a negative padding");
        pads[d] = v[2 * d];
        pads[x->rank + d] = v[2 * d + 1];
        od[d] = x->dims[d] + v[2 * d] + v[2 * d + 1];
    }
    const char *a = NULL, *pn = NULL;
    if ((st = tfw_check_shape(c, io->out, od, x->rank)) || (st = operand(c, io->in[0], &a)) ||
        (st = tfw_const_i64(c, c->t[io->out].vname, "pads", pads, 2 * (size_t)x->rank, false, &pn)))
        return st;
    return tfw_node(c, "Pad", (const char *[]){a, pn}, 2, c->t[io->out].vname, NULL, 0);
}

static sy_status *t_transpose(tfw *c, const tfw_opio *io)
{
    int64_t perm[TFW_MAX_RANK];
    const char *a = NULL;
    sy_status *st = tfw_transpose_perm(c, io, perm);
    if (st || (st = operand(c, io->in[0], &a)))
        return st;
    sy_model_attr pa = tfw_ints_attr("perm", perm, (size_t)c->t[io->in[0]].rank);
    return tfw_node(c, "Transpose", &a, 1, c->t[io->out].vname, &pa, 1);
}

static sy_status *t_reduce(tfw *c, const tfw_opio *io, const tfw_opts *p, bool mean)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    int64_t v[TFW_MAX_RANK], axes[TFW_MAX_RANK], od[TFW_MAX_RANK];
    size_t n, na = 0;
    sy_status *st = io->nin == 2 ? tfw_const_ints(c, io->in[1], v, TFW_MAX_RANK, &n, "axes")
                                 : tfw_refuse(c, "%u inputs (2 expected)", io->nin);
    if (st)
        return st;
    int keep = tfw_opt_int(c, p, "keep_dims");
    TFW_CHECK_FB(c);
    if (!n)
        return tfw_refuse(c, "no axes (a reduction over nothing)");
    int32_t r = 0;
    if ((st = tfw_reduce_axes(c, x, v, n, keep, axes, &na, od, &r)))
        return st;
    const char *a = NULL, *out = c->t[io->out].vname;
    if ((st = tfw_check_shape(c, io->out, od, r)) || (st = operand(c, io->in[0], &a)))
        return st;
    sy_model_attr ka = tfw_int_attr("keepdims", keep), aa = tfw_ints_attr("axes", axes, na);
    if (mean) /* opset 13: the axes an attribute */
        return tfw_node(c, "ReduceMean", &a, 1, out, (sy_model_attr[]){aa, ka}, 2);
    const char *an = NULL;
    if ((st = tfw_const_i64(c, out, "axes", axes, na, false, &an)))
        return st;
    return tfw_node(c, "ReduceSum", (const char *[]){a, an}, 2, out, &ka, 1);
}

static sy_status *t_slice(tfw *c, const tfw_opio *io)
{
    const tfw_tensor *x = &c->t[io->in[0]];
    int64_t b[TFW_MAX_RANK], s[TFW_MAX_RANK], e[TFW_MAX_RANK], one[TFW_MAX_RANK];
    size_t nb, ns;
    sy_status *st = io->nin == 3 ? tfw_const_ints(c, io->in[1], b, TFW_MAX_RANK, &nb, "begin")
                                 : tfw_refuse(c, "%u inputs (SLICE has 3)", io->nin);
    if (!st)
        st = tfw_const_ints(c, io->in[2], s, TFW_MAX_RANK, &ns, "size");
    if (st)
        return st;
    if (nb != (size_t)x->rank || ns != nb)
        return tfw_refuse(c, "begin and size of %zu and %zu values for rank %d", nb, ns, x->rank);
    for (int32_t d = 0; d < x->rank; d++) {
        e[d] = s[d] == -1 ? x->dims[d] : b[d] + s[d];
        one[d] = 1;
        if (b[d] < 0 || s[d] < -1 || e[d] > x->dims[d] || e[d] < b[d])
            return tfw_refuse(c, "begin %lld size %lld on axis %d of %lld values", (long long)b[d], (long long)s[d], d,
                              (long long)x->dims[d]);
    }
    const char *a = NULL;
    if ((st = operand(c, io->in[0], &a)))
        return st;
    return tfw_emit_slice(c, io, a, c->t[io->out].vname, b, e, one, 0, 0, NULL);
}

/* STRIDED_SLICE: its spec resolved as tfw_strided_slice says (the int8
 * translation's too), its Slice, Squeeze and Unsqueeze written on the float
 * operand. */
static sy_status *t_strided_slice(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    int64_t b[TFW_MAX_RANK], e[TFW_MAX_RANK], s[TFW_MAX_RANK];
    uint32_t shrink = 0, new_axes = 0;
    const char *a = NULL;
    sy_status *st = tfw_strided_slice(c, io, p, b, e, s, &shrink, &new_axes);
    if (!st)
        st = operand(c, io->in[0], &a);
    return st ? st : tfw_emit_slice(c, io, a, c->t[io->out].vname, b, e, s, shrink, new_axes, NULL);
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
static sy_status *t_bmm_broadcast(tfw *c, const tfw_opio *io, int ax, int ay)
{
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->in[1]];
    int32_t r = x->rank > y->rank ? x->rank : y->rank;
    if (r + 1 > TFW_MAX_RANK)
        return tfw_refuse(c, "operands of rank %d and %d: the product is written at rank %d, past %d", x->rank, y->rank,
                          r + 1, TFW_MAX_RANK);
    int64_t M = x->dims[x->rank - (ax ? 1 : 2)], K = x->dims[x->rank - (ax ? 2 : 1)];
    int64_t K2 = y->dims[y->rank - (ay ? 1 : 2)], N = y->dims[y->rank - (ay ? 2 : 1)];
    if (K != K2)
        return tfw_refuse(c, "'%s' gives %lld columns and '%s' %lld rows", x->vname, (long long)K, y->vname,
                          (long long)K2);
    int64_t od[TFW_MAX_RANK];
    for (int32_t d = 0; d < r - 2; d++) { /* axis d of the output, aligned on the right */
        int32_t dx = d - (r - x->rank), dy = d - (r - y->rank);
        int64_t a = dx >= 0 ? x->dims[dx] : 1, b = dy >= 0 ? y->dims[dy] : 1;
        if (a != b && a != 1 && b != 1)
            return tfw_refuse(c, "batch axis %d: '%s' has %lld and '%s' %lld, which do not broadcast", d, x->vname,
                              (long long)a, y->vname, (long long)b);
        od[d] = a > b ? a : b;
    }
    od[r - 2] = M;
    od[r - 1] = N;
    sy_status *st = tfw_check_shape(c, io->out, od, r);
    if (st)
        return st;
    /* every tensor's element count fits int64 (read_tensors), but the
     * [.., M, K, N] intermediate is K times the output's */
    int64_t terms = K;
    for (int32_t d = 0; d < r; d++)
        if (__builtin_mul_overflow(terms, od[d], &terms))
            return tfw_refuse(c, "the product's [.., M, K, N] intermediate would have more than 2^63 elements");
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
            int64_t perm[TFW_MAX_RANK];
            for (int32_t d = 0; d < rk; d++)
                perm[d] = d;
            perm[rk - 2] = rk - 1;
            perm[rk - 1] = rk - 2;
            const char *t = tfw_fresh(c, names[k], "adj");
            sy_model_attr pa = tfw_ints_attr("perm", perm, (size_t)rk);
            if (!t)
                return tfw_oom(c);
            if ((st = tfw_node(c, "Transpose", &names[k], 1, t, &pa, 1)))
                return st;
            names[k] = t;
        }
        const char *an = NULL, *u = tfw_fresh(c, names[k], "unsq");
        if (!u)
            return tfw_oom(c);
        if ((st = tfw_const_i64(c, names[k], "unsq_axes", &unsq[k], 1, false, &an)) ||
            (st = tfw_node(c, "Unsqueeze", (const char *[]){names[k], an}, 2, u, NULL, 0)))
            return st;
        names[k] = u;
    }
    const char *out = c->t[io->out].vname, *prod = tfw_fresh(c, out, "terms"), *kn = NULL;
    if (!prod)
        return tfw_oom(c);
    /* K sits at axis r - 1 of the rank r + 1 product; a positive axis, as
     * ReduceSum's backward rule with keepdims = 0 needs */
    const int64_t kaxis = r - 1;
    sy_model_attr ka = tfw_int_attr("keepdims", 0);
    if ((st = tfw_node(c, "Mul", names, 2, prod, NULL, 0)) ||
        (st = tfw_const_i64(c, out, "k_axis", &kaxis, 1, false, &kn)))
        return st;
    return tfw_node(c, "ReduceSum", (const char *[]){prod, kn}, 2, out, &ka, 1);
}

/* BATCH_MATMUL: out = X' . Y' with X' = adj_x ? X^T : X (the last two
 * axes), Y' likewise, batch axes broadcast. A right operand with no batch
 * (rank 2, or every batch axis 1) is a 2-D product underneath: the left
 * operand's batch rows are folded by a Reshape into the rows of one 2-D
 * MatMul (whose backward rule takes 2-D products) and unfolded after. A
 * batched right operand is t_bmm_broadcast's. */
static sy_status *t_batch_matmul(tfw *c, const tfw_opio *io, const tfw_opts *p)
{
    if (io->nin != 2)
        return tfw_refuse(c, "%u inputs (BATCH_MATMUL has 2)", io->nin);
    int ax = tfw_opt_int(c, p, "adj_x"), ay = tfw_opt_int(c, p, "adj_y");
    TFW_CHECK_FB(c);
    const tfw_tensor *x = &c->t[io->in[0]], *y = &c->t[io->in[1]];
    if (x->rank < 2 || y->rank < 2)
        return tfw_refuse(c, "operands '%s' of rank %d and '%s' of rank %d (both need rank 2 or more)", x->vname,
                          x->rank, y->vname, y->rank);
    int64_t ybatch = 1;
    for (int32_t d = 0; d < y->rank - 2; d++)
        ybatch *= y->dims[d];
    if (ybatch != 1 || y->rank > x->rank)
        return t_bmm_broadcast(c, io, ax, ay);
    int32_t r = x->rank;
    int64_t M = x->dims[r - (ax ? 1 : 2)], K = x->dims[r - (ax ? 2 : 1)];
    int64_t K2 = y->dims[y->rank - (ay ? 1 : 2)], N = y->dims[y->rank - (ay ? 2 : 1)];
    if (K != K2)
        return tfw_refuse(c, "'%s' gives %lld columns and '%s' %lld rows", x->vname, (long long)K, y->vname,
                          (long long)K2);
    int64_t od[TFW_MAX_RANK];
    for (int32_t d = 0; d < r - 2; d++)
        od[d] = x->dims[d];
    od[r - 2] = M;
    od[r - 1] = N;
    sy_status *st = tfw_check_shape(c, io->out, od, r);
    const char *xn = NULL, *yn = NULL;
    if (!st)
        st = operand(c, io->in[0], &xn);
    if (!st)
        st = operand(c, io->in[1], &yn);
    if (st)
        return st;
    const char *out = c->t[io->out].vname;
    int64_t perm[TFW_MAX_RANK];
    for (int32_t d = 0; d < r; d++)
        perm[d] = d;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    if (ax) { /* X^T over the last two axes */
        const char *xt = tfw_fresh(c, xn, "adj");
        sy_model_attr pa = tfw_ints_attr("perm", perm, (size_t)r);
        if (!xt)
            return tfw_oom(c);
        if ((st = tfw_node(c, "Transpose", &xn, 1, xt, &pa, 1)))
            return st;
        xn = xt;
    }
    if (y->rank > 2) { /* the batch axes of 1 dropped */
        const char *shp = NULL, *y2 = tfw_fresh(c, yn, "2d");
        const int64_t s2[2] = {y->dims[y->rank - 2], y->dims[y->rank - 1]};
        if (!y2)
            return tfw_oom(c);
        if ((st = tfw_const_i64(c, yn, "shape", s2, 2, false, &shp)) ||
            (st = tfw_node(c, "Reshape", (const char *[]){yn, shp}, 2, y2, NULL, 0)))
            return st;
        yn = y2;
    }
    if (ay) { /* Y^T */
        const char *yt = tfw_fresh(c, yn, "adj");
        sy_model_attr pa = tfw_ints_attr("perm", (const int64_t[]){1, 0}, 2);
        if (!yt)
            return tfw_oom(c);
        if ((st = tfw_node(c, "Transpose", &yn, 1, yt, &pa, 1)))
            return st;
        yn = yt;
    }
    if (r == 2)
        return tfw_node(c, "MatMul", (const char *[]){xn, yn}, 2, out, NULL, 0);
    /* [.., M, K] -> [rows, K] . [K, N] -> [.., M, N]; the leading axis is
     * -1 so a batch of another size folds the same way */
    const char *s1 = NULL, *s2 = NULL, *x2 = tfw_fresh(c, xn, "rows"), *p2 = tfw_fresh(c, out, "rows");
    if (!x2 || !p2)
        return tfw_oom(c);
    const int64_t rows[2] = {-1, K};
    od[0] = -1;
    if ((st = tfw_const_i64(c, xn, "rows_shape", rows, 2, false, &s1)) ||
        (st = tfw_const_i64(c, out, "shape", od, (size_t)r, false, &s2)) ||
        (st = tfw_node(c, "Reshape", (const char *[]){xn, s1}, 2, x2, NULL, 0)) ||
        (st = tfw_node(c, "MatMul", (const char *[]){x2, yn}, 2, p2, NULL, 0)))
        return st;
    return tfw_node(c, "Reshape", (const char *[]){p2, s2}, 2, out, NULL, 0);
}

static sy_status *translate_op(tfw *c, fb_table op)
{
    int32_t code = 0;
    sy_status *st = tfw_op_code(c, op, &code);
    if (st)
        return st;
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
    tfw_opts p;
    tfw_opio io;
    bool biased = code == OP_FULLY_CONNECTED || code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D;
    if ((st = tfw_op_options(c, op, code, &p)) || (st = tfw_op_io(c, op, 8, biased, &io)))
        return st;
    tfw_tensor *y = &c->t[io.out];
    if (y->type != TT_FLOAT32)
        return tfw_refuse(c, "output tensor #%d '%s' is %s", io.out, y->vname, tfw_type_name(y->type));
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

static sy_status *float_input(tfw *c, int32_t ti, sy_dtype *dt)
{
    (void)c, (void)ti;
    *dt = SY_DT_FLOAT32; /* float_tensors refused every other runtime tensor */
    return NULL;
}

static sy_dtype float_output(const tfw_tensor *t)
{
    (void)t;
    return SY_DT_FLOAT32;
}

static const tfw_hooks FLOAT_HOOKS = {.producer = "switchyard train (from TFLite)", .tensors_done = float_tensors,
                                      .input = float_input, .op = translate_op, .output = float_output};

/* the subgraph by name (index < 0) or by index */
static sy_status *translate_model(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                                  int64_t index, tr_tfl_model *out)
{
    return tfw_translate(data, size, where, subgraph, index, &FLOAT_HOOKS, "TFLite translation", out);
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
    return tfw_export(src, subgraph, path, n, names, (const void *const *)values, nbytes, translate_model,
                      "a constant", "values");
}
