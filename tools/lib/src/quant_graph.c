/* The working graph of the quantizer: the decoded model's nodes and
 * initializers in a pool, the queries the rewrites ask, and the graph packed
 * back into a model. */
#include "quant_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void q_seterr(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

bool q_op_in(const char *op, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(op, *list))
            return true;
    return false;
}

static bool grow(wgraph *g, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *n = tl_alloc(&g->pl, nc * elem);
    if (!n)
        return false;
    if (*arr)
        memcpy(n, *arr, *cap * elem);
    *arr = n;
    *cap = nc;
    return true;
}

wnode *q_add_node(wgraph *g, const char *op, const char *name, size_t nin, size_t nout)
{
    if (!grow(g, (void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return NULL;
    wnode *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = tl_strdup(&g->pl, op);
    n->domain = tl_strdup(&g->pl, "");
    n->name = tl_strdup(&g->pl, name);
    n->nin = nin;
    n->nout = nout;
    n->in = tl_alloc(&g->pl, (nin ? nin : 1) * sizeof(char *));
    n->out = tl_alloc(&g->pl, (nout ? nout : 1) * sizeof(char *));
    return n;
}

void q_add_init(wgraph *g, Onnx__TensorProto *t)
{
    if (t && grow(g, (void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits))
        g->inits[g->n_inits++] = t;
}

Onnx__TensorProto *q_find_init(const wgraph *g, const char *name)
{
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] && !strcmp(g->inits[i]->name, name))
            return g->inits[i];
    return NULL;
}

const Onnx__AttributeProto *q_attr(const wnode *n, const char *name)
{
    for (size_t i = 0; i < n->nattr; i++)
        if (!strcmp(n->attrs[i]->name, name))
            return n->attrs[i];
    return NULL;
}
int64_t q_attr_i(const wnode *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = q_attr(n, name);
    return a && a->has_i ? a->i : def;
}
float q_attr_f(const wnode *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = q_attr(n, name);
    return a && a->has_f ? a->f : def;
}

void q_node_set_attrs(wgraph *g, wnode *n, Onnx__AttributeProto **a, size_t k)
{
    n->attrs = tl_alloc(&g->pl, (k ? k : 1) * sizeof *a);
    if (n->attrs && k)
        memcpy(n->attrs, a, k * sizeof *a);
    n->nattr = n->attrs ? k : 0;
}

/* producer node index of a value, -1 none */
long q_producer_of(const wgraph *g, const char *v)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (size_t k = 0; k < g->nodes[i].nout; k++)
                if (g->nodes[i].out[k] && !strcmp(g->nodes[i].out[k], v))
                    return (long)i;
    return -1;
}
size_t q_count_uses(const wgraph *g, const char *v, long *last)
{
    size_t c = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (size_t k = 0; k < g->nodes[i].nin; k++)
                if (g->nodes[i].in[k] && !strcmp(g->nodes[i].in[k], v)) {
                    c++;
                    if (last)
                        *last = (long)i;
                }
    return c;
}
bool q_is_graph_output(const wgraph *g, const char *v)
{
    const Onnx__GraphProto *gp = g->model->graph;
    for (size_t i = 0; i < gp->n_output; i++)
        if (!strcmp(gp->output[i]->name, v))
            return true;
    return false;
}

/* ---- tensor data ---------------------------------------------------------- */

int64_t q_numel(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        n *= t->dims[i];
    return n;
}

/* float32 contents of an initializer (a pool copy), NULL if not float32 */
float *q_floats(wgraph *g, const Onnx__TensorProto *t)
{
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return NULL;
    int64_t n = q_numel(t);
    float *v = tl_alloc(&g->pl, (size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    if (t->has_raw_data && t->raw_data.len == (size_t)n * 4)
        memcpy(v, t->raw_data.data, (size_t)n * 4);
    else if (t->n_float_data == (size_t)n)
        memcpy(v, t->float_data, (size_t)n * 4);
    else
        return NULL;
    return v;
}

char *q_uniq(wgraph *g, const char *base, const char *suffix)
{
    return tl_printf(&g->pl, "%s__%s%d", base, suffix, g->name_seq++);
}

/* ======================================================================== */
/* load, opset upgrade, pre-quantization folds                              */
/* ======================================================================== */

bool q_load_graph(wgraph *g)
{
    Onnx__GraphProto *gp = g->model->graph;
    for (size_t i = 0; i < gp->n_initializer; i++)
        q_add_init(g, gp->initializer[i]);
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        wnode *n = q_add_node(g, np->op_type, np->name && *np->name ? np->name : "", np->n_input, np->n_output);
        if (!n)
            return false;
        n->domain = tl_strdup(&g->pl, np->domain ? np->domain : "");
        if (!n->name[0])
            n->name = tl_printf(&g->pl, "%s_%zu", np->op_type, i);
        for (size_t k = 0; k < np->n_input; k++)
            n->in[k] = tl_strdup(&g->pl, np->input[k]);
        for (size_t k = 0; k < np->n_output; k++)
            n->out[k] = tl_strdup(&g->pl, np->output[k]);
        q_node_set_attrs(g, n, np->attribute, np->n_attribute);
    }
    g->opset = 1;
    for (size_t i = 0; i < g->model->n_opset_import; i++) {
        const char *d = g->model->opset_import[i]->domain;
        if (!d || !*d || !strcmp(d, "ai.onnx"))
            g->opset = g->model->opset_import[i]->version;
    }
    return !g->pl.oom;
}

float *q_const_floats(wgraph *g, const char *name, int64_t *numel)
{
    Onnx__TensorProto *t = q_find_init(g, name);
    if (!t)
        return NULL;
    *numel = q_numel(t);
    return q_floats(g, t);
}

void q_replace_init(wgraph *g, Onnx__TensorProto *old, Onnx__TensorProto *nw)
{
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] == old)
            g->inits[i] = nw;
}

/* ======================================================================== */

static Onnx__NodeProto *emit_node(wgraph *g, const wnode *n)
{
    Onnx__NodeProto *np = tl_alloc(&g->pl, sizeof *np);
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
    return np;
}

/* Pack the working graph into a model. extra_outputs: names added as graph
 * outputs (calibration). Returns a malloc'd buffer. */
uint8_t *q_pack_model(wgraph *g, char **extra, size_t n_extra, size_t *len)
{
    Onnx__ModelProto m = *g->model;
    Onnx__GraphProto gp = *g->model->graph;
    m.graph = &gp;
    size_t nn = 0;
    Onnx__NodeProto **nodes = tl_alloc(&g->pl, (g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
    if (!nodes)
        return NULL;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !(nodes[nn] = emit_node(g, &g->nodes[i])))
            return NULL;
        else if (!g->nodes[i].dead)
            nn++;
    gp.node = nodes;
    gp.n_node = nn;
    size_t ni = 0;
    Onnx__TensorProto **inits = tl_alloc(&g->pl, (g->n_inits ? g->n_inits : 1) * sizeof *inits);
    if (!inits)
        return NULL;
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i])
            inits[ni++] = g->inits[i];
    gp.initializer = inits;
    gp.n_initializer = ni;
    gp.n_value_info = 0;
    gp.value_info = NULL;
    /* graph inputs: drop initializers that are gone (IR < 4 lists them as inputs) */
    Onnx__ValueInfoProto **ins = tl_alloc(&g->pl, (gp.n_input ? gp.n_input : 1) * sizeof *ins);
    if (!ins)
        return NULL;
    size_t nin = 0;
    for (size_t i = 0; i < gp.n_input; i++) {
        bool was_init = false;
        for (size_t k = 0; k < g->model->graph->n_initializer && !was_init; k++)
            was_init = !strcmp(g->model->graph->initializer[k]->name, gp.input[i]->name);
        if (!was_init || q_find_init(g, gp.input[i]->name))
            ins[nin++] = gp.input[i];
    }
    gp.input = ins;
    gp.n_input = nin;
    if (n_extra) {
        Onnx__ValueInfoProto **outs = tl_alloc(&g->pl, (gp.n_output + n_extra) * sizeof *outs);
        if (!outs)
            return NULL;
        memcpy(outs, gp.output, gp.n_output * sizeof *outs);
        for (size_t i = 0; i < n_extra; i++) {
            Onnx__ValueInfoProto *vi = tl_alloc(&g->pl, sizeof *vi);
            if (!vi)
                return NULL;
            onnx__value_info_proto__init(vi);
            vi->name = extra[i];
            outs[gp.n_output + i] = vi;
        }
        gp.output = outs;
        gp.n_output += n_extra;
    }
    /* opset imports: the default domain at g->opset */
    Onnx__OperatorSetIdProto **ops = tl_alloc(&g->pl, (m.n_opset_import + 1) * sizeof *ops);
    if (!ops)
        return NULL;
    size_t no = 0;
    bool have = false;
    for (size_t i = 0; i < m.n_opset_import; i++) {
        Onnx__OperatorSetIdProto *o = tl_alloc(&g->pl, sizeof *o);
        if (!o)
            return NULL;
        *o = *m.opset_import[i];
        if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
            o->version = g->opset;
            o->has_version = 1;
            have = true;
        }
        ops[no++] = o;
    }
    if (!have) {
        Onnx__OperatorSetIdProto *o = tl_alloc(&g->pl, sizeof *o);
        if (!o)
            return NULL;
        onnx__operator_set_id_proto__init(o);
        o->domain = tl_strdup(&g->pl, "");
        o->has_version = 1;
        o->version = g->opset;
        ops[no++] = o;
    }
    m.opset_import = ops;
    m.n_opset_import = no;
    if (m.ir_version < 7) {
        m.ir_version = 7; /* opset 13 needs IR 7 */
        m.has_ir_version = 1;
    }
    if (g->opset >= 21 && m.ir_version < 10) {
        m.ir_version = 10; /* int4 initializers and opset 21 need IR 10 */
        m.has_ir_version = 1;
    }
    *len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        onnx__model_proto__pack(&m, buf);
    return buf;
}

/* Drop nodes nothing reads (constant subgraphs replaced by initializers),
 * then initializers nothing reads (q_pack_model drops them from the graph
 * inputs too, where IR < 4 models list them). */
void q_drop_unused(wgraph *g)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < g->n_nodes; i++) {
            wnode *n = &g->nodes[i];
            if (n->dead)
                continue;
            bool used = false;
            for (size_t k = 0; k < n->nout && !used; k++)
                used = n->out[k][0] && (q_is_graph_output(g, n->out[k]) || q_count_uses(g, n->out[k], NULL) > 0);
            if (!used) {
                n->dead = true;
                changed = true;
            }
        }
    }
    /* drop initializers nothing reads (q_pack_model drops them from the
     * graph inputs too, where IR < 4 models list them) */
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] && !q_count_uses(g, g->inits[i]->name, NULL) && !q_is_graph_output(g, g->inits[i]->name))
            g->inits[i] = NULL;
}
