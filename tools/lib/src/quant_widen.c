/*
 * A model that computes in float16 is quantized as its float32 equivalent:
 * QuantizeLinear takes float32 at opset 13, and the integer kernels the QDQ
 * pass folds into read float32 scales. Its interface stays float16 — each
 * float16 graph input is read through a Cast to float32 and each float16
 * graph output written through a Cast back — so a caller feeds the
 * quantized model what it fed the original. Inside, every float16
 * initializer and Constant becomes float32 (exact: float16 values are
 * float32 values) and a Cast to float16 becomes a Cast to float32 (the
 * float16 rounding it did is not kept: the float32 model is the reference
 * the quantization is measured against).
 *
 * What cannot be widened this way is refused naming the node: a node whose
 * attributes make float16 values other than Cast, Constant and
 * ConstantOfShape (RandomNormal's dtype, an EyeLike's...), and subgraphs
 * (If, Loop, Scan bodies are not rewritten).
 */
#include "quant_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F16 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16
#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT

/* The float32 copy of a float16 tensor (raw_data or int32_data, the two
 * places ONNX keeps float16 values), NULL when out of memory; *bad when its
 * data is external or not of its shape's size. */
static Onnx__TensorProto *widen_tensor(wgraph *g, const Onnx__TensorProto *t, bool *bad)
{
    *bad = false;
    int64_t n = q_numel(t);
    if (n < 0 || t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        *bad = true;
        return NULL;
    }
    float *v = tl_alloc(&g->pl, (size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    if (t->has_raw_data && t->raw_data.len == (size_t)n * 2) {
        for (int64_t i = 0; i < n; i++) {
            const uint8_t *b = t->raw_data.data + 2 * i; /* little-endian, as ONNX stores raw data */
            v[i] = sy_f16_to_f32((uint16_t)(b[0] | b[1] << 8));
        }
    } else if (!t->has_raw_data && t->n_int32_data == (size_t)n) {
        for (int64_t i = 0; i < n; i++)
            v[i] = sy_f16_to_f32((uint16_t)t->int32_data[i]);
    } else {
        *bad = true;
        return NULL;
    }
    Onnx__TensorProto *w = tl_tensor(&g->pl, t->name ? t->name : "", F32, t->dims, t->n_dims, v, (size_t)n * 4);
    return w;
}

static bool is_f16_value(const Onnx__ValueInfoProto *vi)
{
    return vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type &&
           vi->type->tensor_type->elem_type == F16;
}

static void set_f32(Onnx__ValueInfoProto *vi) { vi->type->tensor_type->elem_type = F32; }

/* every live node input reading `from` reads `to` */
static void rename_reads(wgraph *g, const char *from, char *to)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (size_t k = 0; k < g->nodes[i].nin; k++)
                if (g->nodes[i].in[k] && !strcmp(g->nodes[i].in[k], from))
                    g->nodes[i].in[k] = to;
}

/* a Cast node from -> to appended (at_front: moved before every node) */
static bool add_cast(wgraph *g, char *from, char *to, int64_t dtype, bool at_front)
{
    wnode *n = q_add_node(g, "Cast", q_uniq(g, to, "cast"), 1, 1);
    Onnx__AttributeProto *a = n ? tl_attr_int(&g->pl, "to", dtype) : NULL;
    if (!n || !n->in || !n->out || !a)
        return false;
    n->in[0] = from;
    n->out[0] = to;
    q_node_set_attrs(g, n, &a, 1);
    if (!n->attrs)
        return false;
    if (at_front) {
        wnode c = *n;
        memmove(g->nodes + 1, g->nodes, (g->n_nodes - 1) * sizeof *g->nodes);
        g->nodes[0] = c;
    }
    return true;
}

/* A node's float16 attributes made float32: 0, -1 out of memory, 1 refused. */
static int widen_node(wgraph *g, wnode *n, char *err, size_t elen)
{
    for (size_t k = 0; k < n->nattr; k++) {
        Onnx__AttributeProto *a = n->attrs[k];
        if (a->g || a->n_graphs) {
            q_seterr(err, elen, "node '%s' (%s): a float16 model with subgraphs is not widened to float32 for "
                     "quantization (its body is not rewritten); convert the model to float32 first", n->name, n->op);
            return 1;
        }
        bool makes_f16 = (a->t && a->t->data_type == F16) || (a->has_i && a->i == F16 &&
                         (!strcmp(a->name, "to") || !strcmp(a->name, "dtype")));
        for (size_t j = 0; j < a->n_tensors; j++)
            makes_f16 |= a->tensors[j]->data_type == F16;
        if (!makes_f16)
            continue;
        bool cast = !strcmp(n->op, "Cast") && !strcmp(a->name, "to");
        bool constant = (!strcmp(n->op, "Constant") || !strcmp(n->op, "ConstantOfShape")) && !strcmp(a->name, "value") &&
                        a->t;
        if (!n->domain[0] && cast) {
            Onnx__AttributeProto *w = tl_attr_int(&g->pl, "to", F32);
            if (!w)
                return -1;
            n->attrs[k] = w;
        } else if (!n->domain[0] && constant) {
            bool bad = false;
            Onnx__TensorProto *t = widen_tensor(g, a->t, &bad);
            if (bad) {
                q_seterr(err, elen, "node '%s' (%s): its float16 value has external or malformed data", n->name,
                         n->op);
                return 1;
            }
            Onnx__AttributeProto *w = tl_alloc(&g->pl, sizeof *w);
            if (!t || !w)
                return -1;
            *w = *a;
            w->t = t;
            n->attrs[k] = w;
        } else {
            q_seterr(err, elen, "node '%s' (%s): its attribute '%s' makes float16 values, which the float32 form "
                     "of the model for quantization cannot keep; convert the model to float32 first", n->name, n->op,
                     a->name);
            return 1;
        }
    }
    return 0;
}

int q_widen_f16(wgraph *g, size_t *n_widened, char *err, size_t elen)
{
    Onnx__GraphProto *gp = g->model->graph;
    size_t widened = 0;
    *n_widened = 0;
    bool any = false;
    for (size_t i = 0; i < g->n_inits && !any; i++)
        any = g->inits[i] && g->inits[i]->data_type == F16;
    for (size_t i = 0; i < gp->n_input && !any; i++)
        any = is_f16_value(gp->input[i]);
    for (size_t i = 0; i < gp->n_output && !any; i++)
        any = is_f16_value(gp->output[i]);
    if (!any)
        return 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead)
            continue;
        int rc = widen_node(g, &g->nodes[i], err, elen);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < g->n_inits; i++) {
        Onnx__TensorProto *t = g->inits[i];
        if (!t || t->data_type != F16)
            continue;
        bool bad = false;
        Onnx__TensorProto *w = widen_tensor(g, t, &bad);
        if (bad) {
            q_seterr(err, elen, "initializer '%s': float16 data that is external or not of its shape's size",
                     t->name ? t->name : "");
            return 1;
        }
        if (!w)
            return -1;
        g->inits[i] = w;
        widened++;
    }
    /* graph inputs: an initializer listed as an input (IR < 4) is float32
     * now; a real input stays float16 and is read through a Cast */
    for (size_t i = 0; i < gp->n_input; i++) {
        Onnx__ValueInfoProto *vi = gp->input[i];
        if (!is_f16_value(vi))
            continue;
        if (q_find_init(g, vi->name)) {
            set_f32(vi);
            continue;
        }
        if (q_is_graph_output(g, vi->name)) {
            q_seterr(err, elen, "input '%s' is also a graph output: not widened", vi->name);
            return 1;
        }
        char *wide = q_uniq(g, vi->name, "f32_");
        if (!wide)
            return -1;
        rename_reads(g, vi->name, wide);
        if (!add_cast(g, vi->name, wide, F32, true))
            return -1;
    }
    /* graph outputs: the producer writes a float32 value, a Cast makes the
     * float16 output of the original */
    for (size_t i = 0; i < gp->n_output; i++) {
        Onnx__ValueInfoProto *vi = gp->output[i];
        if (!is_f16_value(vi))
            continue;
        long p = q_producer_of(g, vi->name);
        if (p < 0) {
            q_seterr(err, elen, "output '%s' is not computed by a node: not widened", vi->name);
            return 1;
        }
        char *wide = q_uniq(g, vi->name, "f32_");
        if (!wide)
            return -1;
        rename_reads(g, vi->name, wide);
        wnode *pn = &g->nodes[p];
        for (size_t k = 0; k < pn->nout; k++)
            if (!strcmp(pn->out[k], vi->name))
                pn->out[k] = wide;
        if (!add_cast(g, wide, vi->name, F16, false))
            return -1;
    }
    *n_widened = widened;
    return 0;
}
