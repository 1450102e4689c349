/* Raising the default-domain opset of the model being quantized: to 13
 * (per-axis DequantizeLinear), and to 21 (int4 blocks, 16-bit Q/DQ),
 * converting the ops whose form changed and refusing those it cannot. */
#include "quant_internal.h"

#include <string.h>

/* attribute ints -> a new int64 initializer appended as input k */
static bool attr_to_input(wgraph *g, wnode *n, const char *attr, size_t k)
{
    const Onnx__AttributeProto *a = q_attr(n, attr);
    if (n->nin < k + 1) {
        char **in = tl_alloc(&g->pl, (k + 1) * sizeof *in);
        if (!in)
            return false;
        for (size_t i = 0; i < k + 1; i++)
            in[i] = i < n->nin ? n->in[i] : tl_strdup(&g->pl, "");
        n->in = in;
        n->nin = k + 1;
    }
    if (!a)
        return true;
    int64_t d = (int64_t)a->n_ints;
    char *name = q_uniq(g, n->name, attr);
    Onnx__TensorProto *t = tl_tensor(&g->pl, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &d, 1, a->ints, a->n_ints * 8);
    q_add_init(g, t);
    n->in[k] = name;
    return t != NULL;
}

/* Dropout's float `ratio` attribute (before opset 12) -> a float scalar
 * initializer as input 1 (absent: the default 0.5 holds at 13 as well) */
static bool ratio_to_input(wgraph *g, wnode *n)
{
    const Onnx__AttributeProto *a = q_attr(n, "ratio");
    if (!a)
        return true;
    if (n->nin < 2) {
        char **in = tl_alloc(&g->pl, 2 * sizeof *in);
        if (!in)
            return false;
        in[0] = n->nin ? n->in[0] : tl_strdup(&g->pl, "");
        n->in = in;
        n->nin = 2;
    }
    float r = a->f;
    char *name = q_uniq(g, n->name, "ratio");
    Onnx__TensorProto *t = tl_tensor(&g->pl, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0, &r, sizeof r);
    q_add_init(g, t);
    n->in[1] = name;
    return t != NULL;
}

static void drop_attr(wgraph *g, wnode *n, const char *name)
{
    Onnx__AttributeProto *keep[64];
    size_t k = 0;
    for (size_t i = 0; i < n->nattr && k < 64; i++)
        if (strcmp(n->attrs[i]->name, name))
            keep[k++] = n->attrs[i];
    q_node_set_attrs(g, n, keep, k);
}

/* an explicit `axis` attribute where the node had none */
static bool set_axis(wgraph *g, wnode *n, int64_t axis)
{
    Onnx__AttributeProto *all[65];
    size_t k = 0;
    for (size_t i = 0; i < n->nattr && k < 64; i++)
        all[k++] = n->attrs[i];
    all[k] = tl_attr_int(&g->pl, "axis", axis);
    if (!all[k])
        return false;
    q_node_set_attrs(g, n, all, k + 1);
    return true;
}

/* Softmax / LogSoftmax / Hardmax before 13 flatten the input to 2-D at
 * `axis`; from 13 they work along `axis` alone. The two agree when `axis`
 * is the last dim or every dim after it is 1 (squeezenet's [1, 1000, 1, 1]
 * at axis 1), so the node keeps its axis; out: the node's output, NULL when
 * unknown. */
static bool same_at_13(const vinfo *out, int64_t axis)
{
    if (axis == -1)
        return true;
    if (!out || out->rank <= 0 || axis < 0 || axis >= out->rank)
        return false;
    for (int32_t d = (int32_t)axis + 1; d < out->rank; d++)
        if (out->dims[d] != 1)
            return false;
    return true;
}

/* Raise the default-domain opset to 13: convert the ops whose form changed. */
int q_upgrade_opset(wgraph *g, const vinfo *const *outs, char *err, size_t elen)
{
    if (g->opset >= 13)
        return 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        wnode *n = &g->nodes[i];
        if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
            continue;
        const char *op = n->op;
        if (!strcmp(op, "Slice") && g->opset < 10) {
            if (!attr_to_input(g, n, "starts", 1) || !attr_to_input(g, n, "ends", 2) || !attr_to_input(g, n, "axes", 3))
                return -1;
            drop_attr(g, n, "starts");
            drop_attr(g, n, "ends");
            drop_attr(g, n, "axes");
        } else if (!strcmp(op, "Dropout") && g->opset < 12) {
            /* inference either way; before 7 `is_test`, before 6 `consumed_inputs` */
            if (!ratio_to_input(g, n))
                return -1;
            drop_attr(g, n, "ratio");
            drop_attr(g, n, "is_test");
            drop_attr(g, n, "consumed_inputs");
        } else if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
            if (!attr_to_input(g, n, "axes", 1))
                return -1;
            drop_attr(g, n, "axes");
        } else if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax") || !strcmp(op, "Hardmax")) {
            int64_t axis = q_attr_i(n, "axis", 1);
            if (!same_at_13(outs ? outs[i] : NULL, axis)) {
                q_seterr(err, elen, "node '%s' (%s, axis %lld): cannot raise the opset to 13 unless the axis is the last "
                         "or every dim after it is 1", n->name, op, (long long)axis);
                return 1;
            }
            if (!q_attr(n, "axis") && !set_axis(g, n, axis)) /* the default moved from 1 to -1 */
                return -1;
        } else if ((!strcmp(op, "Clip") || !strcmp(op, "Pad")) && g->opset < 11) {
            q_seterr(err, elen, "node '%s' (%s): raising opset %lld to 13 is not supported for this op", n->name, op,
                     (long long)g->opset);
            return 1;
        } else if (!strcmp(op, "Upsample") || !strcmp(op, "Split") || !strncmp(op, "Reduce", 6) ||
                   !strcmp(op, "Resize") || !strcmp(op, "TopK") || !strcmp(op, "Scatter")) {
            q_seterr(err, elen, "node '%s' (%s): raising opset %lld to 13 is not supported for this op", n->name, op,
                     (long long)g->opset);
            return 1;
        }
    }
    g->opset = 13;
    return g->pl.oom ? -1 : 0;
}

/* DequantizeLinear with block_size (and int4), and int16 Q/DQ, are opset 21
 * with IR 10. From 13, the ops whose inputs or meaning changed before 21 are
 * refused. */
int q_raise_opset_21(wgraph *g, char *err, size_t elen)
{
    if (g->opset >= 21)
        return 0;
    static const char *const changed[] = {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL1",
                                          "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
                                          "GroupNormalization", "DFT", NULL};
    for (size_t i = 0; i < g->n_nodes; i++) {
        const wnode *n = &g->nodes[i];
        if (!n->dead && (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) && q_op_in(n->op, changed)) {
            q_seterr(err, elen, "node '%s' (%s): 4-bit blocks and 16-bit activations need opset 21, and raising opset %lld to 21 is not "
                   "supported for this op", n->name, n->op, (long long)g->opset);
            return 1;
        }
    }
    g->opset = 21;
    return 0;
}
