/* A graph being written by the training builder: nodes, initializers,
 * inputs and outputs kept in a pool, packed into an ONNX model at the end. */
#include "train_internal.h"

#include <stdlib.h>
#include <string.h>

static bool grow(tl_pool *pl, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 32;
    while (nc < need)
        nc *= 2;
    void *n = tl_alloc(pl, nc * elem);
    if (!n)
        return false;
    if (*arr)
        memcpy(n, *arr, *cap * elem);
    *arr = n;
    *cap = nc;
    return true;
}

tr_node *tr_add_node(tr_graph *g, const char *op, const char *domain, const char *const *in, size_t nin,
                     const char *const *out, size_t nout)
{
    if (!grow(g->pl, (void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return NULL;
    tr_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = tl_strdup(g->pl, op);
    n->domain = tl_strdup(g->pl, domain ? domain : "");
    n->name = tl_printf(g->pl, "%s_%zu", op, g->n_nodes);
    n->in = tl_alloc(g->pl, (nin ? nin : 1) * sizeof *n->in);
    n->out = tl_alloc(g->pl, (nout ? nout : 1) * sizeof *n->out);
    if (!n->op || !n->domain || !n->name || !n->in || !n->out)
        return NULL;
    for (size_t i = 0; i < nin; i++)
        if (!(n->in[i] = tl_strdup(g->pl, in[i] ? in[i] : "")))
            return NULL;
    for (size_t i = 0; i < nout; i++)
        if (!(n->out[i] = tl_strdup(g->pl, out[i] ? out[i] : "")))
            return NULL;
    n->nin = nin;
    n->nout = nout;
    g->n_nodes++;
    return n;
}

bool tr_node_attr(tr_graph *g, tr_node *n, Onnx__AttributeProto *a)
{
    if (!a || !grow(g->pl, (void **)&n->attrs, &n->cap_attr, n->nattr + 1, sizeof *n->attrs))
        return false;
    n->attrs[n->nattr++] = a;
    return true;
}

bool tr_node_copy_attr(tr_graph *g, tr_node *n, const Onnx__AttributeProto *a)
{
    /* the forward model outlives the graph, so the copy shares its payload */
    Onnx__AttributeProto *c = tl_alloc(g->pl, sizeof *c);
    if (!c)
        return false;
    *c = *a;
    return tr_node_attr(g, n, c);
}

bool tr_add_init(tr_graph *g, Onnx__TensorProto *t)
{
    if (!t || !grow(g->pl, (void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits))
        return false;
    g->inits[g->n_inits++] = t;
    return true;
}

bool tr_add_input(tr_graph *g, Onnx__ValueInfoProto *vi)
{
    if (!vi || !grow(g->pl, (void **)&g->inputs, &g->cap_inputs, g->n_inputs + 1, sizeof *g->inputs))
        return false;
    g->inputs[g->n_inputs++] = vi;
    return true;
}

bool tr_add_output(tr_graph *g, Onnx__ValueInfoProto *vi)
{
    if (!vi || !grow(g->pl, (void **)&g->outputs, &g->cap_outputs, g->n_outputs + 1, sizeof *g->outputs))
        return false;
    g->outputs[g->n_outputs++] = vi;
    return true;
}

char *tr_uniq(tr_graph *g, const char *base, const char *tag)
{
    return tl_printf(g->pl, "%s__%s%d", base, tag, g->seq++);
}

Onnx__ValueInfoProto *tr_value_name(tl_pool *p, const char *name)
{
    Onnx__ValueInfoProto *vi = tl_alloc(p, sizeof *vi);
    if (!vi)
        return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = tl_strdup(p, name);
    return vi->name ? vi : NULL;
}

static Onnx__OperatorSetIdProto *opset_of(tl_pool *p, const char *domain, int64_t version)
{
    Onnx__OperatorSetIdProto *o = tl_alloc(p, sizeof *o);
    if (!o)
        return NULL;
    onnx__operator_set_id_proto__init(o);
    o->domain = tl_strdup(p, domain);
    o->has_version = 1;
    o->version = version;
    return o;
}

uint8_t *tr_pack(tr_graph *g, const Onnx__ModelProto *like, int64_t opset, size_t *len)
{
    Onnx__ModelProto m;
    Onnx__GraphProto gp;
    onnx__model_proto__init(&m);
    onnx__graph_proto__init(&gp);
    m.has_ir_version = 1;
    m.ir_version = like && like->ir_version > 7 ? like->ir_version : 7;
    m.producer_name = "switchyard train";
    Onnx__OperatorSetIdProto *ops[3] = {opset_of(g->pl, "", opset), opset_of(g->pl, TR_DOMAIN, 1),
                                        opset_of(g->pl, TR_ONNX_DOMAIN, 1)};
    if (!ops[0] || !ops[1] || !ops[2])
        return NULL;
    m.opset_import = ops;
    m.n_opset_import = 3;
    gp.name = "training";
    Onnx__NodeProto **nodes = tl_alloc(g->pl, (g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
    if (!nodes)
        return NULL;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const tr_node *n = &g->nodes[i];
        Onnx__NodeProto *np = tl_alloc(g->pl, sizeof *np);
        if (!np)
            return NULL;
        onnx__node_proto__init(np);
        np->name = n->name;
        np->op_type = n->op;
        np->domain = n->domain;
        np->n_input = n->nin;
        np->input = n->in;
        np->n_output = n->nout;
        np->output = n->out;
        np->n_attribute = n->nattr;
        np->attribute = n->attrs;
        nodes[i] = np;
    }
    gp.node = nodes;
    gp.n_node = g->n_nodes;
    gp.initializer = g->inits;
    gp.n_initializer = g->n_inits;
    gp.input = g->inputs;
    gp.n_input = g->n_inputs;
    gp.output = g->outputs;
    gp.n_output = g->n_outputs;
    m.graph = &gp;
    return tl_pack_model(&m, len);
}

/* A tensor value info copied from `vi` with dim 0 made the symbolic batch. */
Onnx__ValueInfoProto *tr_with_batch(tl_pool *p, const Onnx__ValueInfoProto *vi, const char *name, int elem)
{
    Onnx__ValueInfoProto *c = tl_alloc(p, sizeof *c);
    Onnx__TypeProto *tp = tl_alloc(p, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = tl_alloc(p, sizeof *tt);
    Onnx__TensorShapeProto *sh = tl_alloc(p, sizeof *sh);
    if (!c || !tp || !tt || !sh)
        return NULL;
    onnx__value_info_proto__init(c);
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(sh);
    const Onnx__TensorShapeProto *src =
        vi && vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && vi->type->tensor_type
            ? vi->type->tensor_type->shape
            : NULL;
    size_t nd = src ? src->n_dim : 1;
    sh->n_dim = nd;
    sh->dim = tl_alloc(p, (nd ? nd : 1) * sizeof *sh->dim);
    if (!sh->dim)
        return NULL;
    for (size_t i = 0; i < nd; i++) {
        Onnx__TensorShapeProto__Dimension *d = tl_alloc(p, sizeof *d);
        if (!d)
            return NULL;
        if (i == 0 || !src) {
            onnx__tensor_shape_proto__dimension__init(d);
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = TR_BATCH;
        } else {
            *d = *src->dim[i];
        }
        sh->dim[i] = d;
    }
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tt->shape = sh;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    c->name = tl_strdup(p, name);
    c->type = tp;
    return c;
}
