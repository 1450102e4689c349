/*
 * Subgraph attributes of plugin ops (ABI 1.4: host->node_subgraph,
 * host->subgraph_run and host->attr_graph). A kernel whose node has a graph attribute (the
 * modifier graphs of FlexAttention) gets, at prepare, a handle to it; the
 * handle runs the graph as a subgraph session (session.c), the same
 * machinery as the bodies of If/Loop/Scan: planned at its first run, again
 * only when the shapes bound to it change, its arena reused by every run.
 *
 * The handle belongs to the node (sy_node_rt.sgs, freed with the session),
 * not to the kernel's state: prepare runs again on every re-plan, and before
 * every run in the node-by-node mode, and must not make (and plan) a new
 * session each time.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sy_subgraph {
    struct sy_session *sub; /* the node's subs[k] */
    const ir_node *node;
    const char *attr;       /* the attribute's name (the IR's string) */
    uint32_t n_in, n_out;
    sy_dtype *in_dt, *out_dt; /* what the kernel said it binds and reads */
    sy_value_rt *bound;     /* n_in values the inputs are bound through */
};

void sy_subgraphs_free(sy_node_rt *nr)
{
    if (!nr->sgs)
        return;
    for (uint32_t k = 0; k < nr->n_subs; k++) {
        sy_subgraph *g = nr->sgs[k];
        if (!g)
            continue;
        free(g->in_dt);
        free(g->out_dt);
        free(g->bound);
        free(g);
    }
    free(nr->sgs);
    nr->sgs = NULL;
}

/* "node 'NAME' (OP): graph attribute 'ATTR'", the start of every message */
static const char *where(const ir_node *n, const char *attr, char *buf, size_t len)
{
    snprintf(buf, len, "node '%s' (%s): graph attribute '%s'", n->name, n->op, attr);
    return buf;
}

static const char *attr_type_name(sy_attr_type t)
{
    static const char *const names[] = {"undefined", "a float", "an int", "a string", "a tensor",
                                        "a graph",   "floats",  "ints",   "strings"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "of an unknown type";
}

static const char *dt_name(sy_dtype dt) { return dt == SY_DT_UNDEFINED ? "undeclared" : sy_dtype_name(dt); }

/* The sig's dtypes against the graph's declarations (a value the graph
 * leaves undeclared is checked at run). */
static sy_status *check_decls(const ir_node *n, const char *attr, const ir_graph *g, const sy_subgraph_sig *sig)
{
    char w[320];
    for (int io = 0; io < 2; io++) {
        uint32_t cnt = io ? sig->n_outputs : sig->n_inputs;
        const sy_dtype *want = io ? sig->output_dtypes : sig->input_dtypes;
        const int32_t *vals = io ? g->outputs : g->inputs;
        for (uint32_t i = 0; want && i < cnt; i++) {
            const ir_value *v = &g->values[vals[i]];
            if (want[i] != SY_DT_UNDEFINED && v->dtype != SY_DT_UNDEFINED && v->dtype != want[i])
                return sy_error(SY_ERR_TYPE, "%s: %s %u '%s' is declared %s; %s %s it as %s",
                                where(n, attr, w, sizeof w), io ? "output" : "input", i, v->name, dt_name(v->dtype),
                                n->op, io ? "reads" : "binds", sy_dtype_name(want[i]));
        }
    }
    return NULL;
}

static sy_status *copy_dtypes(const sy_dtype *src, uint32_t n, sy_dtype **dst)
{
    free(*dst);
    *dst = calloc(n ? n : 1, sizeof **dst); /* calloc: SY_DT_UNDEFINED (0) is "any" */
    if (!*dst)
        return sy_error_oom();
    if (src && n)
        memcpy(*dst, src, n * sizeof *src);
    return NULL;
}

sy_status *sy_host_node_subgraph(sy_node *view, const char *attr, const sy_subgraph_sig *sig, sy_subgraph **out);
sy_status *sy_host_node_subgraph(sy_node *view, const char *attr, const sy_subgraph_sig *sig, sy_subgraph **out)
{
    char w[320];
    if (out)
        *out = NULL;
    if (!view || !attr || !sig || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "node_subgraph: node, attribute name, sig and out are required");
    const ir_node *n = view->ir;
    struct sy_session *s = view->s;
    sy_node_rt *nr = &s->nodes[view->index];
    if (sig->struct_size < offsetof(sy_subgraph_sig, output_dtypes) + sizeof(void *))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: the sig's struct_size %u is too small",
                        where(n, attr, w, sizeof w), sig->struct_size);
    /* the attribute, and its place among the node's graph attributes */
    uint32_t k = 0;
    const ir_attr *at = NULL;
    for (uint32_t a = 0; a < n->n_attrs && !at; a++) {
        bool graph = n->attrs[a].type == SY_ATTR_GRAPH && n->attrs[a].g;
        if (!strcmp(n->attrs[a].name, attr)) {
            if (!graph)
                return sy_error(SY_ERR_TYPE, "%s is %s, not a graph", where(n, attr, w, sizeof w),
                                attr_type_name(n->attrs[a].type));
            at = &n->attrs[a];
        } else if (graph) {
            k++;
        }
    }
    if (!at && (sig->flags & SY_SUBGRAPH_OPTIONAL))
        return NULL;
    if (!at)
        return sy_error(SY_ERR_INVALID_MODEL, "%s is absent", where(n, attr, w, sizeof w));
    if (nr->builtin || !nr->sgs || k >= nr->n_subs)
        return sy_error(SY_ERR_INTERNAL, "%s: the node has no subgraph slot %u", where(n, attr, w, sizeof w), k);
    const ir_graph *g = at->g;
    if (g->n_inputs != sig->n_inputs || g->n_outputs != sig->n_outputs)
        return sy_error(SY_ERR_INVALID_MODEL, "%s ('%s') has %u input%s and %u output%s; %s takes %u and %u",
                        where(n, attr, w, sizeof w), g->name ? g->name : "", g->n_inputs, g->n_inputs == 1 ? "" : "s",
                        g->n_outputs, g->n_outputs == 1 ? "" : "s", n->op, sig->n_inputs, sig->n_outputs);
    SY_TRY(check_decls(n, attr, g, sig));
    if (!nr->subs[k]) {
        sy_status *st = sy_session_create_sub(s, g, &nr->subs[k]);
        if (st)
            return sy_error_wrap(st, "%s", where(n, attr, w, sizeof w));
    }
    sy_subgraph *h = nr->sgs[k];
    if (!h) {
        if (!(h = calloc(1, sizeof *h)))
            return sy_error_oom();
        h->sub = nr->subs[k];
        h->node = n;
        h->attr = at->name;
        h->n_in = g->n_inputs;
        h->n_out = g->n_outputs;
        if (!(h->bound = calloc(h->n_in ? h->n_in : 1, sizeof *h->bound))) {
            free(h);
            return sy_error_oom();
        }
        nr->sgs[k] = h;
    }
    /* a new prepare may bind other dtypes (a re-plan for other inputs) */
    SY_TRY(copy_dtypes(sig->input_dtypes, h->n_in, &h->in_dt));
    SY_TRY(copy_dtypes(sig->output_dtypes, h->n_out, &h->out_dt));
    *out = h;
    return NULL;
}

sy_status *sy_host_subgraph_run(sy_subgraph *h, const sy_tensor *const *inputs, uint32_t n_inputs,
                                const sy_tensor **outputs, uint32_t n_outputs);
sy_status *sy_host_subgraph_run(sy_subgraph *h, const sy_tensor *const *inputs, uint32_t n_inputs,
                                const sy_tensor **outputs, uint32_t n_outputs)
{
    char w[320];
    if (!h)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "subgraph_run: no subgraph handle");
    const ir_node *n = h->node;
    if (n_inputs != h->n_in || n_outputs != h->n_out || (n_inputs && !inputs) || (n_outputs && !outputs))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: run with %u inputs and %u outputs; the graph has %u and %u",
                        where(n, h->attr, w, sizeof w), n_inputs, n_outputs, h->n_in, h->n_out);
    struct sy_session *b = h->sub;
    const ir_graph *g = b->g;
    for (uint32_t i = 0; i < n_inputs; i++) {
        const sy_tensor *t = inputs[i];
        const char *name = g->values[g->inputs[i]].name;
        if (!t || (!t->data && t->nbytes))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: input %u '%s' is not given", where(n, h->attr, w, sizeof w),
                            i, name);
        if (h->in_dt[i] != SY_DT_UNDEFINED && t->dtype != h->in_dt[i])
            return sy_error(SY_ERR_TYPE, "%s: input %u '%s' is %s; the kernel said it binds %s",
                            where(n, h->attr, w, sizeof w), i, name, sy_dtype_name(t->dtype),
                            sy_dtype_name(h->in_dt[i]));
        if (t->rank < 0 || t->rank > SY_MAX_RANK)
            return sy_error(SY_ERR_SHAPE, "%s: input %u '%s' has rank %d", where(n, h->attr, w, sizeof w), i, name,
                            t->rank);
        /* bound by pointer: the body reads the kernel's buffer (a body's
         * inputs are never written in place, session.c) */
        sy_value_rt *v = &h->bound[i];
        memset(v, 0, sizeof *v);
        v->t = *t;
        v->t.struct_size = sizeof v->t;
        v->t.domain = 0;
        v->kind = SY_RT_TENSOR;
        sy_session_bind(b, g->inputs[i], v);
    }
    sy_status *st = sy_session_run_sub(b);
    if (st)
        return sy_error_wrap(st, "%s", where(n, h->attr, w, sizeof w));
    for (uint32_t k = 0; k < n_outputs; k++) {
        const sy_value_rt *v = &b->values[g->outputs[k]];
        const char *name = g->values[g->outputs[k]].name;
        if (v->kind != SY_RT_TENSOR)
            return sy_error(SY_ERR_TYPE, "%s: output %u '%s' is a %s; it must be a tensor",
                            where(n, h->attr, w, sizeof w), k, name, sy_value_kind_name(v));
        if (h->out_dt[k] != SY_DT_UNDEFINED && v->t.dtype != h->out_dt[k])
            return sy_error(SY_ERR_TYPE, "%s: output %u '%s' is %s; %s reads it as %s", where(n, h->attr, w, sizeof w),
                            k, name, sy_dtype_name(v->t.dtype), n->op, sy_dtype_name(h->out_dt[k]));
        outputs[k] = &v->t;
    }
    return NULL;
}

bool sy_host_attr_graph(const sy_node *view, const char *name, uint32_t *n_inputs, uint32_t *n_outputs);
bool sy_host_attr_graph(const sy_node *view, const char *name, uint32_t *n_inputs, uint32_t *n_outputs)
{
    const ir_attr *a = view && name ? ir_node_attr(view->ir, name) : NULL;
    if (!a || a->type != SY_ATTR_GRAPH || !a->g)
        return false;
    if (n_inputs)
        *n_inputs = a->g->n_inputs;
    if (n_outputs)
        *n_outputs = a->g->n_outputs;
    return true;
}
