/* The seed's QAS-INT8 training rows as rules (seed 001 §4, the "QAS INT8"
 * rows of its training table: 17 entries, 7 TFLite and 10 ONNX, six rows;
 * ../shared/spec/ops-mcu.md §4.1 is the translation). A QAS model is a QDQ
 * ONNX model (what `switchyard quantize` writes): an "INT8 tensor with
 * quantization parameters" is a value read through a DequantizeLinear of
 * int8 codes or written through a QuantizeLinear with an int8 zero point.
 * The quantizer writes a Gemm or Conv followed by its Relu and one
 * QuantizeLinear (the Relu fused into the output range at load); the rows
 * see that as the layer with an int8 output of the Relu's quantization and
 * a Relu on int8 codes of that same quantization — the arithmetic is the
 * same bit for bit (clamping at the zero point commutes with the rounding),
 * so the layer has no fused activation and the Relu has INT8 input and
 * output with quantization parameters. */
#include "train_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* seed 001 §4.1, the QAS INT8 rows (translated) */
#define QROW_CONV                                                                                                      \
    "QAS INT8 Conv2D/Conv: INT8 input, weight and output; INT32 bias; rank 4; group 1; 3x3 convolution only; no "     \
    "fused activation or fused ReLU; weights in OHWI format; per-tensor or per-output-channel weight quantization"
#define QROW_MAXPOOL                                                                                                   \
    "QAS INT8 MaxPool2D/MaxPool: MaxPool only; input and output are INT8 NHWC 4D tensors and must carry "            \
    "quantization parameters"
#define QROW_FC                                                                                                        \
    "QAS INT8 FullyConnected/Gemm/Matmul: INT8 input, weight and output; rank 2; A not transposed, B transposed; "   \
    "no fused activation; optional INT32 bias; weights per-tensor or per-output-channel"
#define QROW_RELU "QAS INT8 Relu: activation backward exists only for ReLU; input and output INT8 with quant params"
#define QROW_RESHAPE                                                                                                   \
    "QAS INT8 Reshape/Squeeze/Unsqueeze/Flatten: input and output element counts equal; input and output INT8 or "   \
    "INT32"
#define QROW_TRANSPOSE                                                                                                 \
    "QAS INT8 Transpose: perm must be a valid int32 constant full permutation; input and output INT8 or INT32; "     \
    "element count and rank unchanged"
#define QROW_NOT                                                                                                       \
    "QAS INT8 is explicitly not supported for Mul, Add, Sub, Concatenation/Concat, Mirror_Pad, Abs, "                \
    "StridedSlice/Slice, Div, Pad (ONNX), ReduceSum and ReduceMean"
#define QROW_OPS "Conv, MaxPool, Gemm/MatMul, Relu, Reshape/Squeeze/Unsqueeze/Flatten, Transpose"

static const Onnx__NodeProto *producer_of(const Onnx__GraphProto *g, const char *v)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!strcmp(g->node[i]->output[k], v))
                return g->node[i];
    return NULL;
}

/* the only consumer of v, NULL when none or several */
static const Onnx__NodeProto *sole_consumer(const Onnx__GraphProto *g, const char *v)
{
    const Onnx__NodeProto *c = NULL;
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_input; k++)
            if (!strcmp(g->node[i]->input[k], v)) {
                if (c && c != g->node[i])
                    return NULL;
                c = g->node[i];
            }
    return c;
}

const Onnx__TensorProto *tr_qas_init(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; name && *name && i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    return NULL;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t dflt)
{
    const Onnx__AttributeProto *a = attr(n, name);
    return a ? a->i : dflt;
}

/* The data type of the codes an input of n is dequantized from (its
 * producer a DequantizeLinear): ONNX TensorProto type, 0 when the input is
 * not read through a DequantizeLinear. */
static int dq_code_type(const Onnx__GraphProto *g, const Onnx__NodeProto *n, size_t slot, const Onnx__NodeProto **dq)
{
    *dq = NULL;
    if (slot >= n->n_input || !*n->input[slot])
        return 0;
    const Onnx__NodeProto *p = producer_of(g, n->input[slot]);
    if (!p || strcmp(p->op_type, "DequantizeLinear") || p->n_input < 2)
        return 0;
    *dq = p;
    const Onnx__TensorProto *c = tr_qas_init(g, p->input[0]);
    if (c)
        return c->data_type;
    /* activation codes: the zero point's type (int8 when absent is not ONNX's default: uint8) */
    const Onnx__TensorProto *zp = p->n_input > 2 ? tr_qas_init(g, p->input[2]) : NULL;
    return zp ? zp->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
}

/* An int8 TFLite CONV_2D translates as Transpose(0,3,1,2) -> Conv ->
 * Transpose(0,2,3,1) on dequantized values: the layout Transposes are the
 * row's NHWC activations and OHWI weights (stored OIHW), and commute with
 * the per-tensor (de)quantization and the Relu, so the Conv is read through
 * them. t is such a Transpose with permutation p. */
static bool layout_transpose(const Onnx__NodeProto *t, const int64_t p[4])
{
    if (!t || strcmp(t->op_type, "Transpose") || t->n_input != 1 || t->n_output != 1)
        return false;
    const Onnx__AttributeProto *a = attr(t, "perm");
    return a && a->n_ints == 4 && !memcmp(a->ints, p, 4 * sizeof *p);
}

static const int64_t PERM_NCHW[4] = {0, 3, 1, 2}, PERM_NHWC[4] = {0, 2, 3, 1};

/* The QuantizeLinear that writes n's output (directly, or after the Relu
 * the quantizer placed between): its zero point's type, 0 when none. */
static int q_code_type(const Onnx__GraphProto *g, const Onnx__NodeProto *n, bool through_relu)
{
    if (!n->n_output)
        return 0;
    const Onnx__NodeProto *c = sole_consumer(g, n->output[0]);
    const bool conv = !strcmp(n->op_type, "Conv");
    if (c && through_relu && conv && layout_transpose(c, PERM_NHWC))
        c = sole_consumer(g, c->output[0]);
    if (c && through_relu && !strcmp(c->op_type, "Relu") && c->n_output)
        c = sole_consumer(g, c->output[0]);
    if (c && through_relu && conv && layout_transpose(c, PERM_NHWC))
        c = sole_consumer(g, c->output[0]);
    if (!c || strcmp(c->op_type, "QuantizeLinear"))
        return 0;
    const Onnx__TensorProto *zp = c->n_input > 2 ? tr_qas_init(g, c->input[2]) : NULL;
    return zp ? zp->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
}

static int decline(char *err, size_t len, const Onnx__NodeProto *n, const char *row, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int decline(char *err, size_t len, const Onnx__NodeProto *n, const char *row, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, len, "node '%s' (%s): not trainable in QAS-INT8 on ws63: %s; seed 001 §4: \"%s\"",
             n->name && *n->name ? n->name : "(unnamed)", n->op_type, what, row);
    return 1;
}

#define I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32

/* per-tensor (a scalar scale) or per-output-channel (one scale per output
 * channel along axis 0) */
static bool per_tensor_or_channel(const Onnx__GraphProto *g, const Onnx__NodeProto *dq, int64_t out_ch)
{
    const Onnx__TensorProto *s = tr_qas_init(g, dq->input[1]);
    if (!s)
        return false;
    int64_t n = 1;
    for (size_t i = 0; i < s->n_dims; i++)
        n *= s->dims[i];
    if (n == 1 && s->n_dims <= 1)
        return true;
    return s->n_dims == 1 && n == out_ch && attr_i(dq, "axis", 1) == 0;
}

static int check_weighted(const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *row, bool conv,
                          char *err, size_t len)
{
    const Onnx__NodeProto *dx, *dw, *db;
    const Onnx__NodeProto *t = conv && n->n_input ? producer_of(g, n->input[0]) : NULL;
    if (dq_code_type(g, layout_transpose(t, PERM_NCHW) ? t : n, 0, &dx) != I8)
        return decline(err, len, n, row, "its input is not an INT8 tensor with quantization parameters");
    /* a MatMul's B transposed: Transpose(perm 1,0) of the [O, K] weight's DequantizeLinear */
    const Onnx__NodeProto *bt = !conv && !strcmp(n->op_type, "MatMul") && n->n_input > 1
                                    ? producer_of(g, n->input[1]) : NULL;
    const Onnx__AttributeProto *bp = bt && !strcmp(bt->op_type, "Transpose") && bt->n_input == 1 ? attr(bt, "perm")
                                                                                                 : NULL;
    if (!(bp && bp->n_ints == 2 && bp->ints[0] == 1 && bp->ints[1] == 0))
        bt = NULL;
    int wt = bt ? dq_code_type(g, bt, 0, &dw) : dq_code_type(g, n, 1, &dw);
    const Onnx__TensorProto *w = dw ? tr_qas_init(g, dw->input[0]) : NULL;
    if (wt != I8 || !w)
        return decline(err, len, n, row, "its weight is not a constant INT8 tensor read through a DequantizeLinear");
    if (q_code_type(g, n, true) != I8)
        return decline(err, len, n, row, "its output is not an INT8 tensor with quantization parameters");
    if (n->n_input > 2 && *n->input[2] && dq_code_type(g, n, 2, &db) != I32)
        return decline(err, len, n, row, "its bias is not an INT32 tensor");
    if (conv) {
        if (w->n_dims != 4)
            return decline(err, len, n, row, "its weight has rank %zu", w->n_dims);
        if (attr_i(n, "group", 1) != 1)
            return decline(err, len, n, row, "group = %lld", (long long)attr_i(n, "group", 1));
        if (w->dims[2] != 3 || w->dims[3] != 3)
            return decline(err, len, n, row, "a %lldx%lld kernel", (long long)w->dims[2], (long long)w->dims[3]);
    } else {
        if (w->n_dims != 2)
            return decline(err, len, n, row, "its weight has rank %zu", w->n_dims);
        if (!strcmp(n->op_type, "MatMul")) {
            if (!bt)
                return decline(err, len, n, row, "B is not transposed (MatMul's B is [K, N], not a Transpose(perm "
                               "1,0) of an [N, K] weight)");
        } else if (attr_i(n, "transA", 0))
            return decline(err, len, n, row, "A is transposed");
        else if (!attr_i(n, "transB", 0))
            return decline(err, len, n, row, "B is not transposed");
    }
    if (!per_tensor_or_channel(g, dw, w->dims[0]))
        return decline(err, len, n, row, "its weight scale is neither per-tensor nor per-output-channel");
    return 0;
}

int tr_qas_rules_check(const Onnx__GraphProto *g, const Onnx__NodeProto *n, char *err, size_t len)
{
    const char *op = n->op_type;
    const Onnx__NodeProto *d;
    if (!strcmp(op, "Conv"))
        return check_weighted(g, n, QROW_CONV, true, err, len);
    if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul"))
        return check_weighted(g, n, QROW_FC, false, err, len);
    if (!strcmp(op, "Relu")) {
        /* after a Gemm/Conv the Relu reads that layer's int8 output (see the top) */
        const Onnx__NodeProto *p = producer_of(g, n->input[0]);
        if (layout_transpose(p, PERM_NHWC)) {
            const Onnx__NodeProto *c = producer_of(g, p->input[0]);
            p = c && !strcmp(c->op_type, "Conv") ? c : p;
        }
        bool fused = p && (!strcmp(p->op_type, "Gemm") || !strcmp(p->op_type, "Conv") || !strcmp(p->op_type, "MatMul")) &&
                     q_code_type(g, p, true) == I8;
        if (!fused && dq_code_type(g, n, 0, &d) != I8)
            return decline(err, len, n, QROW_RELU, "its input is not INT8 with quantization parameters");
        /* a Conv's Relu before its NCHW -> NHWC layout Transpose: the Transpose's QuantizeLinear */
        const Onnx__NodeProto *t = fused && !strcmp(p->op_type, "Conv") && n->n_output
                                       ? sole_consumer(g, n->output[0]) : NULL;
        if (q_code_type(g, layout_transpose(t, PERM_NHWC) ? t : n, false) != I8)
            return decline(err, len, n, QROW_RELU, "its output is not INT8 with quantization parameters");
        return 0;
    }
    if (!strcmp(op, "MaxPool")) {
        /* an int8 TFLite MAX_POOL_2D between its NHWC layout Transposes: the row's NHWC tensors */
        const Onnx__NodeProto *ti = n->n_input ? producer_of(g, n->input[0]) : NULL;
        const Onnx__NodeProto *to = n->n_output ? sole_consumer(g, n->output[0]) : NULL;
        const bool lay = layout_transpose(ti, PERM_NCHW) && layout_transpose(to, PERM_NHWC);
        if (dq_code_type(g, lay ? ti : n, 0, &d) != I8 || q_code_type(g, lay ? to : n, false) != I8)
            return decline(err, len, n, QROW_MAXPOOL, "its input or output carries no INT8 quantization");
        const Onnx__AttributeProto *k = attr(n, "kernel_shape");
        if (!k || k->n_ints != 2)
            return decline(err, len, n, QROW_MAXPOOL, "not a 2-D pooling");
        return 0;
    }
    if (!strcmp(op, "Reshape") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") || !strcmp(op, "Flatten") ||
        !strcmp(op, "Transpose")) {
        const char *row = !strcmp(op, "Transpose") ? QROW_TRANSPOSE : QROW_RESHAPE;
        int t = dq_code_type(g, n, 0, &d);
        int q = q_code_type(g, n, false);
        if ((t != I8 && t != I32) || (q != I8 && q != I32))
            return decline(err, len, n, row, "its input or output is not INT8 or INT32");
        if (!strcmp(op, "Transpose")) {
            const Onnx__AttributeProto *p = attr(n, "perm");
            if (!p)
                return decline(err, len, n, row, "no constant perm");
            for (size_t i = 0; i < p->n_ints; i++) {
                bool seen = false;
                for (size_t j = 0; j < p->n_ints; j++)
                    seen |= p->ints[j] == (int64_t)i;
                if (!seen)
                    return decline(err, len, n, row, "perm is not a full permutation");
            }
        }
        /* the element count is kept by these operators' definitions */
        return 0;
    }
    static const char *const never[] = {"Mul",    "Add", "Sub", "Concat",    "Abs",        "Slice",
                                        "Div",    "Pad", "ReduceSum", "ReduceMean", "StridedSlice"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if (!strcmp(op, never[i]))
            return decline(err, len, n, QROW_NOT, "QAS-INT8 has no row for %s", op);
    return decline(err, len, n, "QAS-INT8 trains " QROW_OPS, "the seed's table has no QAS-INT8 row for %s", op);
}
