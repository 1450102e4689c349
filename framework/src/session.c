/*
 * Session creation: bind values, infer shapes through the op schemas, fold
 * constants, place nodes on providers, prepare kernels, plan memory, compile
 * the step list. Everything that can fail on model input fails here, at
 * creation, with the node name and the rule — never at run time.
 */
#include "plan.h"
#include "session.h"
#include "status.h"
#include "util.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* plan.c / exec.c / placement.c */
sy_status *sy_place_all(struct sy_session *s);
const sy_kernel_rec *sy_find_kernel(const sy_env *env, const sy_node *node, const char *provider, char *why,
                                    size_t why_len);
sy_status *sy_compile_steps(struct sy_session *s);
sy_status *sy_profile_init(struct sy_session *s);
void sy_profile_free(struct sy_session *s);
sy_status *sy_pool_create(int threads, struct sy_pool **out);
sy_status *sy_domains_init(struct sy_session *s);
sy_status *sy_insert_copies(struct sy_session *s);
sy_status *sy_partitions_build(struct sy_session *s);
sy_status *sy_partitions_compile(struct sy_session *s);
void sy_partitions_free(struct sy_session *s);
void sy_pool_destroy(struct sy_pool *pool);

static const char *node_label(const ir_node *n, char *buf, size_t len)
{
    snprintf(buf, len, "node '%s' (%s%s%s, opset %d)", n->name, n->domain[0] ? n->domain : "", n->domain[0] ? "::" : "",
             n->op, n->opset);
    return buf;
}

/* ---- attribute validation against the schema ---- */
static sy_status *check_attrs(const ir_node *n, const sy_op_schema *sc)
{
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        const ir_attr *at = &n->attrs[a];
        const sy_attr_def *def = NULL;
        for (uint32_t k = 0; k < sc->n_attrs; k++)
            if (!strcmp(sc->attrs[k].name, at->name))
                def = &sc->attrs[k];
        if (!def)
            return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' is not defined for %s at opset %d", at->name,
                            n->op, n->opset);
        if (def->type != SY_ATTR_UNDEFINED && def->type != at->type)
            return sy_error(SY_ERR_INVALID_MODEL, "attribute '%s' has type %d, %s expects type %d", at->name,
                            at->type, n->op, def->type);
    }
    for (uint32_t k = 0; k < sc->n_attrs; k++)
        if (sc->attrs[k].required && !ir_node_attr(n, sc->attrs[k].name))
            return sy_error(SY_ERR_INVALID_MODEL, "required attribute '%s' is missing", sc->attrs[k].name);
    return NULL;
}

static sy_status *check_arity(const ir_node *n, const sy_op_schema *sc)
{
    /* trailing omitted inputs do not count */
    uint32_t n_in = n->n_inputs;
    while (n_in > 0 && n->inputs[n_in - 1] < 0)
        n_in--;
    if ((int32_t)n_in < sc->min_inputs || (sc->max_inputs >= 0 && (int32_t)n_in > sc->max_inputs))
        return sy_error(SY_ERR_INVALID_MODEL, "has %u inputs; %s at opset %d takes %d to %d", n_in, n->op, n->opset,
                        sc->min_inputs, sc->max_inputs);
    if ((int32_t)n->n_outputs < sc->min_outputs || (sc->max_outputs >= 0 && (int32_t)n->n_outputs > sc->max_outputs))
        return sy_error(SY_ERR_INVALID_MODEL, "has %u outputs; %s at opset %d produces %d to %d", n->n_outputs, n->op,
                        n->opset, sc->min_outputs, sc->max_outputs);
    /* an output named "" is omitted. The first min_outputs are required
     * (kernels write them without checking) unless the schema says any
     * output may be omitted (SY_SCHEMA_OPTIONAL_OUTPUTS: a gradient node
     * omits the dX nobody needs); a node with every output omitted computes
     * nothing anyone can read and is refused either way. */
    bool any = false;
    for (uint32_t o = 0; o < n->n_outputs; o++)
        any |= n->outputs[o] >= 0;
    if (!(sc->flags & SY_SCHEMA_OPTIONAL_OUTPUTS))
        for (int32_t o = 0; o < sc->min_outputs && o < (int32_t)n->n_outputs; o++)
            if (n->outputs[o] < 0)
                return sy_error(SY_ERR_INVALID_MODEL,
                                "output %d is omitted (named \"\"); %s at opset %d requires its first %d", o, n->op,
                                n->opset, sc->min_outputs);
    if (!any && sc->min_outputs > 0)
        return sy_error(SY_ERR_INVALID_MODEL, "every output is omitted (named \"\"); %s at opset %d computes nothing",
                        n->op, n->opset);
    return NULL;
}

/* ---- value binding ---- */
static sy_status *bind_values(struct sy_session *s)
{
    const ir_graph *g = s->g;
    s->n_values = g->n_values;
    s->values = calloc(g->n_values ? g->n_values : 1, sizeof *s->values);
    if (!s->values)
        return sy_error_oom();
    for (uint32_t i = 0; i < g->n_values; i++) {
        const ir_value *v = &g->values[i];
        sy_value_rt *vr = &s->values[i];
        vr->t.struct_size = sizeof vr->t;
        vr->t.name = v->name;
        vr->t.dtype = v->dtype;
        vr->t.quant = v->quant;
        vr->producer = v->producer;
        vr->first_use = vr->last_use = -1;
        vr->alias_of = -1;
        if (v->flags & IR_VALUE_INITIALIZER) {
            vr->t.rank = v->rank;
            if (v->rank > 0)
                memcpy(vr->t.dims, v->dims, (size_t)v->rank * sizeof *v->dims);
            vr->t.data = (void *)v->data;
            vr->t.nbytes = v->nbytes;
            vr->is_const = vr->shape_known = true;
        }
        if (v->flags & IR_VALUE_GRAPH_OUTPUT)
            vr->is_output = true;
    }
    if (s->parent) {
        /* a subgraph's inputs and captured outer-scope values are bound at
         * each run to what the parent has (sy_session_bind): their types
         * come from there, not from the body's declarations */
        for (uint32_t i = 0; i < g->n_inputs; i++)
            s->values[g->inputs[i]].is_input = true;
        for (uint32_t i = 0; i < g->n_values; i++)
            if (g->values[i].flags & IR_VALUE_OUTER_SCOPE)
                s->values[i].is_input = true;
        for (uint32_t i = 0; i < g->n_values; i++)
            if (g->values[i].kind == IR_KIND_OTHER)
                return sy_error(SY_ERR_UNSUPPORTED, "value '%s' is a map or a sequence of non-tensors; only tensors, "
                                "sequences of tensors and optionals are supported", g->values[i].name);
        return NULL;
    }
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        const ir_value *v = &g->values[g->inputs[i]];
        sy_value_rt *vr = &s->values[g->inputs[i]];
        vr->is_input = true;
        if (v->kind == IR_KIND_OTHER)
            return sy_error(SY_ERR_UNSUPPORTED, "graph input '%s' is a map or a sequence of non-tensors; only "
                            "tensors, sequences of tensors and optionals are supported", v->name);
        if (v->kind != IR_KIND_TENSOR) {
            /* a sequence or optional: set by sy_session_set_input_sequence /
             * _none / _set_input; until then an empty sequence or none */
            vr->kind = v->kind == IR_KIND_SEQUENCE || v->elem_kind == IR_KIND_SEQUENCE ? SY_RT_SEQUENCE : SY_RT_NONE;
            if (vr->kind == SY_RT_SEQUENCE && !(vr->seq = calloc(1, sizeof *vr->seq)))
                return sy_error_oom();
            vr->t.rank = 0;
            vr->shape_known = true;
            s->has_kinds = true;
            continue;
        }
        if (v->dtype == SY_DT_UNDEFINED || v->rank < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "graph input '%s' has no tensor type or rank in the model", v->name);
        if (!sy_dtype_valid(v->dtype))
            return sy_error(SY_ERR_UNSUPPORTED, "graph input '%s' has dtype %s, which is not supported", v->name,
                            sy_dtype_name(v->dtype));
        vr->t.rank = v->rank;
        int64_t numel = 1;
        bool overflow = false;
        for (int32_t d = 0; d < v->rank; d++) {
            /* symbolic or unknown dims start at 1 until set_input gives the real size */
            vr->t.dims[d] = v->dims[d] >= 0 ? v->dims[d] : 1;
            overflow |= __builtin_mul_overflow(numel, vr->t.dims[d], &numel);
        }
        if (overflow || !sy_dtype_bytes(v->dtype, numel, &vr->t.nbytes))
            return sy_error(SY_ERR_INVALID_MODEL, "graph input '%s': size overflows", v->name);
        SY_TRY(sy_session_check_tensor(s, &vr->t, "graph input"));
        vr->shape_known = true;
    }
    for (uint32_t i = 0; i < g->n_values; i++) {
        if (g->values[i].kind == IR_KIND_OTHER)
            return sy_error(SY_ERR_UNSUPPORTED,
                            "value '%s' is a map or a sequence of non-tensors; only tensors, sequences of tensors "
                            "and optionals are supported",
                            g->values[i].name);
        if (g->values[i].kind != IR_KIND_TENSOR)
            s->has_kinds = true;
    }
    return NULL;
}

/* Does subgraph g read a value of an enclosing graph? (The import lists
 * what a body captures as its IR_VALUE_OUTER_SCOPE values.) */
static bool graph_captures(const ir_graph *g)
{
    for (uint32_t i = 0; i < g->n_values; i++)
        if (g->values[i].flags & IR_VALUE_OUTER_SCOPE)
            return true;
    return false;
}

static sy_status *bind_nodes(struct sy_session *s)
{
    const ir_graph *g = s->g;
    s->n_nodes = g->n_nodes;
    s->nodes = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *s->nodes);
    if (!s->nodes)
        return sy_error_oom();
    /* every node's input and output pointers in one block (a block per
     * node cost a heap chunk each: 64 B a node for a 1-in 1-out op), each
     * list followed by a NULL as before: a kernel that reads the entry
     * after its last input or output finds NULL, not its neighbour's */
    size_t n_ptrs = 1;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        n_ptrs += (size_t)g->nodes[i].n_inputs + g->nodes[i].n_outputs + 2;
    s->node_ptrs = calloc(n_ptrs, sizeof *s->node_ptrs);
    if (!s->node_ptrs)
        return sy_error_oom();
    sy_tensor **next = s->node_ptrs;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        sy_node_rt *nr = &s->nodes[i];
        nr->view.s = s;
        nr->view.ir = n;
        nr->view.index = i;
        nr->view.n_in = n->n_inputs;
        nr->view.n_out = n->n_outputs;
        nr->part = -1;
        nr->builtin = sy_builtin_of(n);
        /* the core's control flow and, since ABI 1.4, a plugin op with a
         * graph attribute (host->node_subgraph) run their subgraphs as
         * sessions of their own, made at first use */
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].type == SY_ATTR_GRAPH && n->attrs[a].g) {
                nr->n_subs++;
                nr->captures |= !nr->builtin && graph_captures(n->attrs[a].g);
            }
        if (nr->n_subs && !(nr->subs = calloc(nr->n_subs, sizeof *nr->subs)))
            return sy_error_oom();
        if (nr->n_subs && !nr->builtin && !(nr->sgs = calloc(nr->n_subs, sizeof *nr->sgs)))
            return sy_error_oom();
        nr->view.in = next;
        next += n->n_inputs + 1;
        nr->view.out = next;
        next += n->n_outputs + 1;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            nr->view.in[k] = n->inputs[k] >= 0 ? &s->values[n->inputs[k]].t : NULL;
        for (uint32_t k = 0; k < n->n_outputs; k++)
            nr->view.out[k] = n->outputs[k] >= 0 ? &s->values[n->outputs[k]].t : NULL;
    }
    return NULL;
}

/* ---- inference and folding ---- */
sy_status *sy_session_check_tensor(const struct sy_session *s, const sy_tensor *t, const char *what)
{
    if (t->nbytes <= s->max_tensor_bytes)
        return NULL;
    char shape[160] = "", a[64], b[64];
    size_t len = 0;
    for (int32_t d = 0; d < t->rank && len < sizeof shape; d++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", d ? "," : "", (long long)t->dims[d]);
    return sy_error(SY_ERR_BUDGET, "%s '%s' is %s [%s] = %s, over the session's max_tensor_bytes = %s", what,
                    t->name ? t->name : "", sy_dtype_name(t->dtype), shape, sy_size_str(t->nbytes, a, sizeof a),
                    sy_size_str(s->max_tensor_bytes, b, sizeof b));
}

sy_status *sy_session_infer_node(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    const sy_schema_rec *sc = sy_env_find_schema(s->env, n->domain, n->op, n->opset);
    if (!sc)
        return sy_error(SY_ERR_NOT_IMPLEMENTED, "no loaded plugin defines %s (domain '%s', opset %d)", n->op,
                        n->domain[0] ? n->domain : "ai.onnx", n->opset);
    nr->view.schema = sc;
    nr->view.inferring = true;
    sy_node_calling(&nr->view, sc->owner);
    sy_status *st = sc->def.infer(&nr->view);
    nr->view.inferring = false;
    if (st)
        return st;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k] >= 0) {
            sy_value_rt *v = &s->values[n->outputs[k]];
            if (v->t.dtype == SY_DT_UNDEFINED)
                return sy_error(SY_ERR_INTERNAL, "shape inference of %s did not set output %u", n->op, k);
            SY_TRY(sy_session_check_tensor(s, &v->t, "output"));
            v->shape_known = true;
        }
    return NULL;
}

static bool foldable(const struct sy_session *s, const sy_node_rt *nr)
{
    const sy_op_schema *sc = &nr->view.schema->def;
    if (sc->flags & SY_SCHEMA_STATEFUL)
        return false;
    const ir_node *n = nr->view.ir;
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        if (n->inputs[k] < 0)
            continue;
        const sy_value_rt *v = &s->values[n->inputs[k]];
        if (v->is_const)
            continue;
        /* Shape/Size read dims only; the plan is specialised to the current
         * input shapes (a new shape re-plans), so known dims are constants */
        if ((sc->flags & SY_SCHEMA_READS_SHAPES_ONLY) && v->shape_known)
            continue;
        return false;
    }
    return true;
}

/* Run a node now on the fallback provider and keep its outputs as constants. */
static sy_status *fold_node(struct sy_session *s, sy_node_rt *nr, bool *folded)
{
    *folded = false;
    char why[192];
    const sy_provider_rec *fb = s->env->fallback;
    const sy_kernel_rec *k = fb ? sy_find_kernel(s->env, &nr->view, fb->def.name, why, sizeof why) : NULL;
    if (!k)
        return NULL; /* not foldable here; it will be placed and run normally */
    const ir_node *n = nr->view.ir;
    for (uint32_t o = 0; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) {
            sy_value_rt *v = &s->values[n->outputs[o]];
            SY_TRY(sy_value_ensure_owned(v, v->t.nbytes));
        }
    /* READS_SHAPES_ONLY inputs may have no data: kernels of such ops only read dims */
    void *state = NULL;
    nr->view.scratch = 0;
    sy_node_calling(&nr->view, k->owner);
    if (k->def.prepare)
        SY_TRY(k->def.prepare(&nr->view, &state));
    void *scratch = nr->view.scratch ? sy_aligned_alloc(nr->view.scratch, 64) : NULL;
    sy_tensor *outs[64];
    const sy_tensor *ins[64];
    if (n->n_inputs > 64 || n->n_outputs > 64) {
        if (k->def.release)
            k->def.release(state);
        sy_aligned_free(scratch);
        return NULL;
    }
    for (uint32_t i = 0; i < n->n_inputs; i++)
        ins[i] = nr->view.in[i];
    for (uint32_t i = 0; i < n->n_outputs; i++)
        outs[i] = nr->view.out[i];
    /* folded strings must outlive every run: they come from the constant heap */
    sy_kernel_io io = {sizeof io, n->n_inputs, n->n_outputs, ins, outs, scratch, nr->view.scratch, &s->rc_const};
    sy_status *st = k->def.run(state, &io);
    if (k->def.release)
        k->def.release(state);
    sy_aligned_free(scratch);
    nr->view.scratch = 0;
    if (st)
        return st;
    for (uint32_t o = 0; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0)
            s->values[n->outputs[o]].is_const = true;
    nr->folded = true;
    *folded = true;
    return NULL;
}

static sy_status *infer_all(struct sy_session *s)
{
    char label[320];
    /* sequences and optionals are values the plugins never see: a session
     * that has one runs node by node, its built-in ops in the core */
    if (s->has_kinds)
        s->dynamic = true;
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        const ir_node *n = nr->view.ir;
        if (nr->builtin) {
            s->dynamic = true; /* control flow and sequence ops run at run time, in the core */
            continue;
        }
        /* a plugin op whose subgraph reads a value of this graph: the
         * static plan would not keep that value alive up to the node (the
         * planner sees only its inputs), the node-by-node mode does */
        if (nr->captures)
            s->dynamic = true;
        const sy_schema_rec *sc = sy_env_find_schema(s->env, n->domain, n->op, n->opset);
        if (!sc)
            return sy_error(SY_ERR_NOT_IMPLEMENTED, "%s: no loaded plugin defines %s (domain '%s', opset %d)",
                            node_label(n, label, sizeof label), n->op, n->domain[0] ? n->domain : "ai.onnx", n->opset);
        nr->view.schema = sc;
        sy_status *st = check_arity(n, &sc->def);
        if (!st)
            st = check_attrs(n, &sc->def);
        if (st)
            return sy_error_wrap(st, "%s", node_label(n, label, sizeof label));
        if (s->dynamic)
            continue; /* shapes downstream of a dynamic one are inferred at run time */
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && !s->values[n->inputs[k]].shape_known) {
                const ir_value *iv = &s->g->values[n->inputs[k]];
                if (iv->producer < 0 && !(iv->flags & (IR_VALUE_INITIALIZER | IR_VALUE_GRAPH_INPUT)))
                    return sy_error(SY_ERR_INVALID_MODEL, "%s: input '%s' is never produced",
                                    node_label(n, label, sizeof label), iv->name);
                s->dynamic = true;
            }
        if (s->dynamic)
            continue;
        st = sy_session_infer_node(s, nr);
        if (st && sy_status_code_of(st) == SY_ERR_DYNAMIC_SHAPE) {
            sy_status_free(st);
            s->dynamic = true;
            continue;
        }
        if (st)
            return sy_error_wrap(st, "%s", node_label(n, label, sizeof label));
        if (foldable(s, nr)) {
            bool folded;
            st = fold_node(s, nr, &folded);
            if (st)
                return sy_error_wrap(st, "%s: while folding constants", node_label(n, label, sizeof label));
        }
    }
    return NULL;
}

/* ---- preparation ---- */
static sy_status *prepare_all(struct sy_session *s)
{
    char label[320];
    if (s->dynamic)
        return NULL; /* placed and prepared node by node at run time */
    SY_TRY(sy_place_all(s));
    SY_TRY(sy_partitions_build(s));
    SY_TRY(sy_insert_copies(s));
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        if (nr->folded)
            continue;
        nr->view.scratch = 0;
        nr->view.persistent = nr->view.packed = 0;
        free(nr->view.pins);
        nr->view.pins = NULL;
        sy_node_calling(&nr->view, nr->kernel->owner);
        if (nr->kernel->def.prepare) {
            sy_status *st = nr->kernel->def.prepare(&nr->view, &nr->state);
            if (st)
                return sy_error_wrap(st, "%s on %s: prepare", node_label(nr->view.ir, label, sizeof label),
                                     nr->provider->def.name);
        }
        nr->prepared = true;
    }
    return sy_partitions_compile(s);
}

static sy_status *plan_steps(struct sy_session *s)
{
    s->dynamic = false;
    s->n_bounds = 0;
    SY_TRY(infer_all(s));
    if (s->dynamic)
        s->n_bounds = 0; /* a node-by-node session infers with the data: nothing stays at a bound */
    SY_TRY(prepare_all(s));
    if (!s->dynamic) {
        SY_TRY(sy_plan_memory(s));
        SY_TRY(sy_compile_steps(s));
    }
    return NULL;
}

sy_status *sy_session_plan(struct sy_session *s)
{
    /* Graph inputs are not constants. The plugin contract (sy_plugin.h,
     * schema infer) gives input data at plan time only for values known
     * then (initializers, folded nodes), and providers rely on it: a kernel
     * may pack what it read at prepare (the cpu provider's weights). A
     * re-plan runs after set_input, when the inputs' data is there: hide it
     * while planning, so an input that feeds a weight operand is treated as
     * the variable it is (a training step's weights, say), and a shape read
     * from an input makes the plan dynamic instead of fixing it. */
    /* (a subgraph's outer-scope values are inputs too, unless the parent
     * has them as constants) */
    /* (only the inputs' pointers are kept aside, not one per value) */
    uint32_t n_hidden = 0;
    for (uint32_t i = 0; i < s->n_values; i++)
        n_hidden += s->values[i].is_input && !s->values[i].is_const;
    struct hidden_input {
        uint32_t value;
        void *data;
    } *hidden = calloc(n_hidden ? n_hidden : 1, sizeof *hidden);
    if (!hidden)
        return sy_error_oom();
    for (uint32_t i = 0, h = 0; i < s->n_values; i++) {
        sy_value_rt *v = &s->values[i];
        if (v->is_input && !v->is_const) {
            hidden[h++] = (struct hidden_input){i, v->t.data};
            v->t.data = NULL;
        }
    }
    sy_strheap_reset(&s->str_const); /* the constants are folded again */
    sy_status *st = plan_steps(s);
    for (uint32_t h = 0; h < n_hidden; h++) {
        sy_value_rt *v = &s->values[hidden[h].value];
        if (v->is_input && !v->is_const)
            v->t.data = hidden[h].data;
    }
    free(hidden);
    if (st)
        return st;
    s->planned = true;
    s->needs_replan = false;
    return NULL;
}

void sy_session_unplan(struct sy_session *s)
{
    sy_partitions_free(s);
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        if (nr->prepared && nr->kernel->def.release)
            nr->kernel->def.release(nr->state);
        nr->state = NULL;
        nr->prepared = false;
        nr->folded = false;
        nr->provider = NULL;
        nr->kernel = NULL;
        free(nr->reason_text);
        nr->reason_text = NULL;
        nr->scratch_ptr = NULL;
        /* undo the redirection of inputs to boundary copies */
        for (uint32_t k = 0; k < nr->view.ir->n_inputs; k++)
            nr->view.in[k] = nr->view.ir->inputs[k] >= 0 ? &s->values[nr->view.ir->inputs[k]].t : NULL;
    }
    s->n_copies = 0;
    for (uint32_t d = 0; s->domains && d < s->n_domains; d++) {
        sy_aligned_free(s->domains[d].arena);
        s->domains[d].arena = NULL;
    }
    for (uint32_t i = 0; i < s->n_values; i++) {
        sy_value_rt *v = &s->values[i];
        const ir_value *iv = &s->g->values[i];
        if (!(iv->flags & IR_VALUE_INITIALIZER) && !v->is_input) {
            sy_value_clear_seq(v);
            v->is_const = false;
            v->shape_known = false;
            v->t.dtype = iv->dtype;
            v->t.data = NULL;
        }
        v->alias_of = -1;
        v->first_use = v->last_use = -1;
    }
    s->arena_bytes = 0;
    free(s->steps);
    s->steps = NULL;
    s->n_steps = 0;
    free(s->node_time);
    s->node_time = NULL;
    free(s->level_start);
    s->level_start = NULL;
    s->n_levels = 0;
    s->planned = false;
}

/* ---- public API ---- */
SY_EXPORT sy_status *sy_session_create(sy_env *env, const sy_model *model, const sy_session_options *opts,
                                       sy_session **out)
{
    if (!env || !model || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_create: env, model and out are required");
    /* read only the fields the caller's struct has (older callers are smaller) */
    sy_session_options o = {sizeof o, 0, -1, false, NULL, NULL, NULL, 0, 0, 0};
    if (opts) {
        if (opts->struct_size < offsetof(sy_session_options, compiled_cache))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_create: opts->struct_size %u is too small",
                            opts->struct_size);
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
        o.struct_size = sizeof o;
    }
    opts = &o;
    const char *requant = sy_requant_name(opts->requant);
    if (opts->requant && !requant)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_options.requant = \"%s\": expected \"onnx\", \"gemmlowp\" or "
                        "\"single_rounding\"",
                        opts->requant);
    struct sy_session *s = calloc(1, sizeof *s);
    if (!s)
        return sy_error_oom();
    s->env = env;
    sy_env_ref(env);
    s->model = model;
    s->g = &model->ir->graph;
    s->strict = opts->strict >= 0 ? opts->strict != 0 : env->cfg.strict;
    s->threads = opts->threads > 0 ? opts->threads : env->cfg.threads;
    s->profiling = opts->profiling;
    s->requant = requant;
    s->max_tensor_bytes = opts->max_tensor_bytes ? opts->max_tensor_bytes : env->cfg.limits.max_tensor_bytes;
    s->max_arena_bytes = opts->max_arena_bytes ? opts->max_arena_bytes : env->cfg.limits.max_arena_bytes;
    s->max_loop_iterations = env->cfg.limits.max_loop_iterations;
    if (opts->compiled_cache && !(s->cache_path = sy_strdup(opts->compiled_cache))) {
        sy_session_release(s);
        return sy_error_oom();
    }
    s->rc.s = s;
    s->rc.profiling = s->profiling;
    /* the strings of a run or of the constants count against the same bound
     * as an arena (a heap released before this point is all zeros: empty) */
    sy_strheap_init(&s->str_run, (size_t)s->max_arena_bytes);
    sy_strheap_init(&s->str_const, (size_t)s->max_arena_bytes);
    s->rc.heap = &s->str_run;
    s->rc_const = s->rc;
    s->rc_const.heap = &s->str_const;
    sy_status *st = sy_profile_init(s);
    if (!st)
        st = bind_values(s);
    if (!st)
        st = bind_nodes(s);
    if (!st)
        st = sy_placements_init(s, opts->placements, opts->n_placements);
    if (!st)
        st = sy_domains_init(s);
    if (!st && s->threads > 1)
        st = sy_pool_create(s->threads, &s->pool);
    if (!st)
        st = sy_provider_sessions_begin(s);
    if (!st)
        st = sy_session_plan(s);
    if (st) {
        sy_session_release(s);
        return sy_error_wrap(st, "%s", model->ir->path);
    }
    *out = s;
    return NULL;
}

/* A subgraph's session: the parent's environment, model and options, its
 * own values, nodes, plan and arenas. It is planned at its first run, when
 * its inputs are bound, and again only when a bound shape changes. */
sy_status *sy_session_create_sub(struct sy_session *parent, const ir_graph *g, struct sy_session **out)
{
    *out = NULL;
    struct sy_session *s = calloc(1, sizeof *s);
    if (!s)
        return sy_error_oom();
    s->env = parent->env;
    sy_env_ref(s->env);
    s->model = parent->model;
    s->g = g;
    s->parent = parent;
    s->depth = parent->depth + 1;
    s->strict = parent->strict;
    s->threads = 1; /* a body is small and runs many times: no pool of its own */
    s->profiling = parent->profiling;
    s->requant = parent->requant;
    s->max_tensor_bytes = parent->max_tensor_bytes;
    s->max_arena_bytes = parent->max_arena_bytes;
    s->max_loop_iterations = parent->max_loop_iterations;
    s->observer = NULL;
    s->rc.s = s;
    s->rc.profiling = s->profiling;
    s->needs_replan = true;
    sy_status *st = NULL;
    /* the import nests subgraphs at most 64 deep; this bounds recursion
     * through the sessions of bodies that the import did not see nest
     * (a body that reaches its own node cannot be written in ONNX) */
    if (s->depth > 64)
        st = sy_error(SY_ERR_UNSUPPORTED, "subgraph sessions nest deeper than 64 levels");
    if (!st)
        st = sy_profile_init(s);
    if (!st)
        st = bind_values(s);
    if (!st)
        st = bind_nodes(s);
    if (!st)
        st = sy_domains_init(s);
    if (!st)
        st = sy_provider_sessions_begin(s);
    if (!st && !(s->outer_src = malloc((g->n_values ? g->n_values : 1) * sizeof *s->outer_src)))
        st = sy_error_oom();
    for (uint32_t i = 0; !st && i < g->n_values; i++) {
        s->outer_src[i] = -1;
        if (!(g->values[i].flags & IR_VALUE_OUTER_SCOPE))
            continue;
        s->outer_src[i] = ir_graph_find_value(parent->g, g->values[i].name);
        if (s->outer_src[i] < 0)
            st = sy_error(SY_ERR_INVALID_MODEL, "subgraph '%s' uses '%s', which the enclosing graph does not define",
                          g->name ? g->name : "", g->values[i].name);
    }
    if (st) {
        sy_session_release(s);
        return st;
    }
    *out = s;
    return NULL;
}

void sy_session_bind(struct sy_session *s, int32_t vi, const sy_value_rt *src)
{
    sy_value_rt *v = &s->values[vi];
    bool same = v->has_data && v->kind == src->kind && v->t.dtype == src->t.dtype && v->t.rank == src->t.rank &&
                !memcmp(v->t.dims, src->t.dims, (size_t)(src->t.rank > 0 ? src->t.rank : 0) * sizeof *v->t.dims) &&
                v->is_const == src->is_const && (!src->is_const || v->t.data == src->t.data);
    if (!same)
        s->needs_replan = true;
    if (v->seq && !v->seq_borrowed)
        sy_seq_free(v->seq);
    v->kind = src->kind;
    v->seq = src->seq;
    v->seq_borrowed = src->seq != NULL;
    v->t.dtype = src->t.dtype;
    v->t.rank = src->t.rank;
    memcpy(v->t.dims, src->t.dims, sizeof v->t.dims);
    v->t.nbytes = src->t.nbytes;
    v->t.data = src->t.data;
    v->t.quant = src->t.quant;
    v->is_const = src->is_const;
    v->shape_known = true;
    v->has_data = true;
}

sy_status *sy_session_run_sub(struct sy_session *s)
{
    /* the outer-scope values, from the parent as it is now */
    for (uint32_t i = 0; i < s->n_values; i++)
        if (s->outer_src[i] >= 0)
            sy_session_bind(s, (int32_t)i, &s->parent->values[s->outer_src[i]]);
    if (s->needs_replan || !s->planned) {
        if (s->planned)
            sy_session_unplan(s);
        SY_TRY(sy_session_plan(s));
    }
    return sy_session_execute(s);
}

SY_EXPORT void sy_session_release(sy_session *s)
{
    if (!s)
        return;
    if (s->nodes)
        sy_session_unplan(s);
    sy_provider_sessions_end(s); /* after the kernels and partitions it placed */
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        free(s->nodes[i].view.pins);
        sy_subgraphs_free(&s->nodes[i]);
        for (uint32_t k = 0; k < s->nodes[i].n_subs; k++)
            sy_session_release(s->nodes[i].subs[k]);
        free(s->nodes[i].subs);
    }
    free(s->nodes);
    free(s->node_ptrs);
    for (uint32_t k = 0; k < s->n_rq_sources; k++)
        free(s->rq_sources[k]);
    free(s->rq_sources);
    for (uint32_t i = 0; i < s->n_values; i++) {
        sy_aligned_free(s->values[i].owned);
        sy_value_clear_seq(&s->values[i]);
    }
    free(s->values);
    free(s->outer_src);
    free(s->bounds);
    sy_pool_destroy(s->pool);
    sy_profile_free(s);
    free(s->domains);
    free(s->copies);
    free(s->cache_path);
    sy_placements_free(s);
    sy_strheap_free(&s->str_run);
    sy_strheap_free(&s->str_const);
    sy_env *env = s->env;
    free(s);
    sy_env_unref(env);
}

/* A copied string input owns its records and its bytes, in one buffer
 * (records first); the bytes count against max_tensor_bytes too. */
static sy_status *copy_strings(const sy_session *s, sy_value_rt *v, const sy_tensor *t, size_t bytes)
{
    const sy_string *src = t->data;
    size_t n = bytes / sizeof(sy_string), total = bytes;
    for (size_t i = 0; i < n; i++)
        if (__builtin_add_overflow(total, (size_t)src[i].size, &total))
            return sy_error(SY_ERR_INVALID_ARGUMENT, "input '%s': the strings' total size overflows", v->t.name);
    if (total > s->max_tensor_bytes)
        return sy_error(SY_ERR_BUDGET, "input '%s': %zu strings of %zu bytes in all, over the session's "
                        "max_tensor_bytes = %llu", v->t.name, n, total - bytes, (unsigned long long)s->max_tensor_bytes);
    if (!v->owned || v->owned_cap < total) {
        sy_aligned_free(v->owned);
        v->owned = sy_aligned_alloc(total ? total : 1, 64);
        v->owned_cap = v->owned ? total : 0;
        if (!v->owned)
            return sy_error_oom();
    }
    v->t.data = v->owned;
    sy_string *dst = v->owned;
    char *p = (char *)v->owned + bytes;
    for (size_t i = 0; i < n; i++) {
        if (src[i].size)
            memcpy(p, src[i].data, (size_t)src[i].size);
        dst[i].data = p;
        dst[i].size = src[i].size;
        p += src[i].size;
    }
    return NULL;
}

static sy_status *find_input(const sy_session *s, const char *name, size_t *index)
{
    for (uint32_t i = 0; i < s->g->n_inputs; i++)
        if (!strcmp(s->g->values[s->g->inputs[i]].name, name)) {
            *index = i;
            return NULL;
        }
    return sy_error(SY_ERR_NOT_FOUND, "the model has no input named '%s'", name);
}

SY_EXPORT sy_status *sy_session_set_input_by_index(sy_session *s, size_t index, const sy_tensor *t,
                                                   sy_input_mode mode)
{
    if (!s || !t)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_set_input: session and tensor are required");
    if (index >= s->g->n_inputs)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "input index %zu out of range (the model has %u inputs)", index,
                        s->g->n_inputs);
    int32_t vi = s->g->inputs[index];
    const ir_value *iv = &s->g->values[vi];
    sy_value_rt *v = &s->values[vi];
    if (iv->kind == IR_KIND_SEQUENCE || (iv->kind == IR_KIND_OPTIONAL && iv->elem_kind == IR_KIND_SEQUENCE))
        return sy_error(SY_ERR_TYPE, "input '%s' is a sequence: feed it with sy_session_set_input_sequence",
                        iv->name);
    /* an optional(tensor) input may leave its element's type undeclared */
    bool opt = iv->kind == IR_KIND_OPTIONAL;
    if (t->dtype != iv->dtype && !(opt && iv->dtype == SY_DT_UNDEFINED))
        return sy_error(SY_ERR_TYPE, "input '%s': dtype %s given, the model expects %s", iv->name,
                        sy_dtype_name(t->dtype), sy_dtype_name(iv->dtype));
    if (t->rank != iv->rank && !(opt && iv->rank < 0))
        return sy_error(SY_ERR_SHAPE, "input '%s': rank %d given, the model expects rank %d", iv->name, t->rank,
                        iv->rank);
    if (t->rank < 0 || t->rank > SY_MAX_RANK)
        return sy_error(SY_ERR_SHAPE, "input '%s': rank %d is out of range", iv->name, t->rank);
    bool changed = false, overflow = false;
    int64_t numel = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0)
            return sy_error(SY_ERR_SHAPE, "input '%s': dimension %d is negative", iv->name, d);
        if (iv->rank == t->rank && iv->dims[d] >= 0 && t->dims[d] != iv->dims[d])
            return sy_error(SY_ERR_SHAPE, "input '%s': dimension %d is %lld, the model fixes it to %lld", iv->name, d,
                            (long long)t->dims[d], (long long)iv->dims[d]);
        if (t->dims[d] != v->t.dims[d])
            changed = true;
        overflow |= __builtin_mul_overflow(numel, t->dims[d], &numel);
    }
    size_t bytes;
    if (overflow || !sy_dtype_bytes(t->dtype, numel, &bytes))
        return sy_error(SY_ERR_SHAPE, "input '%s': the shape's size overflows", iv->name);
    if (bytes && !t->data)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "input '%s': data is NULL, the shape needs %zu bytes", iv->name,
                        bytes);
    sy_tensor want = *t;
    want.name = iv->name;
    want.nbytes = bytes;
    SY_TRY(sy_session_check_tensor(s, &want, "input"));
    if (t->nbytes < bytes) /* nbytes is what the caller's buffer holds: never read past it */
        return sy_error(SY_ERR_INVALID_ARGUMENT, "input '%s': %zu bytes of data given, the shape needs %zu",
                        iv->name, t->nbytes, bytes);
    if (v->kind != SY_RT_TENSOR || v->t.dtype != t->dtype || v->t.rank != t->rank) {
        sy_value_clear_seq(v); /* an optional input that held none */
        v->t.dtype = t->dtype;
        v->t.rank = t->rank;
        changed = true;
    }
    if (changed) {
        memcpy(v->t.dims, t->dims, sizeof t->dims);
        v->t.nbytes = bytes;
        s->needs_replan = true;
    }
    if (t->dtype == SY_DT_STRING)
        SY_TRY(sy_strings_check(t, iv->name));
    if (mode == SY_INPUT_BORROW) {
        v->t.data = t->data;
    } else if (t->dtype == SY_DT_STRING) {
        SY_TRY(copy_strings(s, v, t, bytes));
    } else {
        SY_TRY(sy_value_ensure_owned(v, bytes));
        if (bytes)
            memcpy(v->owned, t->data, bytes);
    }
    v->t.nbytes = bytes;
    v->has_data = true;
    return NULL;
}

SY_EXPORT sy_status *sy_session_set_input(sy_session *s, const char *name, const sy_tensor *t, sy_input_mode mode)
{
    if (!s || !name)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_set_input: session and name are required");
    size_t idx = 0;
    SY_TRY(find_input(s, name, &idx));
    return sy_session_set_input_by_index(s, idx, t, mode);
}

SY_EXPORT sy_status *sy_session_run(sy_session *s)
{
    if (!s)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_run: session is NULL");
    for (uint32_t i = 0; i < s->g->n_inputs; i++)
        if (!s->values[s->g->inputs[i]].has_data)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "input '%s' has not been set",
                            s->g->values[s->g->inputs[i]].name);
    if (s->needs_replan) {
        sy_session_unplan(s);
        sy_status *st = sy_session_plan(s);
        if (st)
            return sy_error_wrap(st, "%s: re-planning for new input shapes", s->model->ir->path);
    }
    return sy_session_execute(s);
}

SY_EXPORT size_t sy_session_output_count(const sy_session *s) { return s ? s->g->n_outputs : 0; }

SY_EXPORT sy_status *sy_session_set_input_sequence(sy_session *s, size_t index, sy_dtype dtype,
                                                   const sy_tensor *const *items, size_t count)
{
    if (!s || (count && !items))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_set_input_sequence: session and items are required");
    if (index >= s->g->n_inputs)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "input index %zu out of range (the model has %u inputs)", index,
                        s->g->n_inputs);
    int32_t vi = s->g->inputs[index];
    const ir_value *iv = &s->g->values[vi];
    if (iv->kind != IR_KIND_SEQUENCE && !(iv->kind == IR_KIND_OPTIONAL && iv->elem_kind == IR_KIND_SEQUENCE))
        return sy_error(SY_ERR_TYPE, "input '%s' is not a sequence", iv->name);
    if (!sy_dtype_valid((int32_t)dtype))
        return sy_error(SY_ERR_TYPE, "input '%s': dtype %d is not a tensor element type", iv->name, (int)dtype);
    if (iv->dtype != SY_DT_UNDEFINED && dtype != iv->dtype)
        return sy_error(SY_ERR_TYPE, "input '%s': a sequence of %s given, the model expects %s", iv->name,
                        sy_dtype_name(dtype), sy_dtype_name(iv->dtype));
    sy_seq *q = calloc(1, sizeof *q);
    if (!q)
        return sy_error_oom();
    for (size_t i = 0; i < count; i++) {
        const sy_tensor *t = items[i];
        sy_status *st = NULL;
        int64_t numel = 1;
        bool overflow = false;
        size_t bytes = 0;
        if (!t || t->dtype != dtype || t->rank < 0 || t->rank > SY_MAX_RANK)
            st = sy_error(SY_ERR_TYPE, "input '%s': item %zu is missing, not %s, or of a bad rank", iv->name, i,
                          sy_dtype_name(dtype));
        for (int32_t d = 0; !st && d < t->rank; d++) {
            if (t->dims[d] < 0)
                st = sy_error(SY_ERR_SHAPE, "input '%s': item %zu: dimension %d is negative", iv->name, i, d);
            overflow |= __builtin_mul_overflow(numel, t->dims[d], &numel);
        }
        if (!st && (overflow || !sy_dtype_bytes(dtype, numel, &bytes)))
            st = sy_error(SY_ERR_SHAPE, "input '%s': item %zu: the shape's size overflows", iv->name, i);
        if (!st && (t->nbytes < bytes || (bytes && !t->data)))
            st = sy_error(SY_ERR_INVALID_ARGUMENT, "input '%s': item %zu: %zu bytes of data given, the shape needs %zu",
                          iv->name, i, t->nbytes, bytes);
        if (!st) {
            sy_tensor want = *t;
            want.nbytes = bytes;
            want.name = iv->name;
            st = sy_seq_push(s, q, &want, q->n);
        }
        if (st) {
            sy_seq_free(q);
            return st;
        }
    }
    sy_value_rt *v = &s->values[vi];
    sy_value_clear_seq(v);
    v->kind = SY_RT_SEQUENCE;
    v->seq = q;
    v->t.dtype = dtype;
    v->t.rank = 0;
    v->t.nbytes = 0;
    v->t.data = NULL;
    v->has_data = true;
    return NULL;
}

SY_EXPORT sy_status *sy_session_set_input_none(sy_session *s, size_t index)
{
    if (!s)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_set_input_none: session is NULL");
    if (index >= s->g->n_inputs)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "input index %zu out of range (the model has %u inputs)", index,
                        s->g->n_inputs);
    int32_t vi = s->g->inputs[index];
    const ir_value *iv = &s->g->values[vi];
    if (iv->kind != IR_KIND_OPTIONAL)
        return sy_error(SY_ERR_TYPE, "input '%s' is not an optional: it cannot be empty", iv->name);
    sy_value_rt *v = &s->values[vi];
    sy_value_clear_seq(v);
    v->kind = SY_RT_NONE;
    v->t.rank = 0;
    v->t.nbytes = 0;
    v->t.data = NULL;
    v->has_data = true;
    return NULL;
}

SY_EXPORT sy_value_kind sy_session_output_kind(const sy_session *s, size_t index)
{
    if (!s || index >= s->g->n_outputs)
        return SY_VALUE_TENSOR;
    switch (s->values[s->g->outputs[index]].kind) {
    case SY_RT_SEQUENCE:
        return SY_VALUE_SEQUENCE;
    case SY_RT_NONE:
        return SY_VALUE_NONE;
    default:
        return SY_VALUE_TENSOR;
    }
}

SY_EXPORT sy_status *sy_session_get_output_sequence(sy_session *s, size_t index, sy_dtype *dtype,
                                                    const sy_tensor **items, size_t *count)
{
    if (!s || !items || !count)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_get_output_sequence: session, items and count are "
                        "required");
    if (index >= s->g->n_outputs)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "output index %zu out of range (the model has %u outputs)", index,
                        s->g->n_outputs);
    const sy_value_rt *v = &s->values[s->g->outputs[index]];
    if (v->kind != SY_RT_SEQUENCE || !v->seq)
        return sy_error(SY_ERR_TYPE, "output '%s' is a %s, not a sequence", s->g->values[s->g->outputs[index]].name,
                        sy_value_kind_name(v));
    *items = v->seq->items;
    *count = v->seq->n;
    if (dtype)
        *dtype = v->t.dtype;
    return NULL;
}

SY_EXPORT sy_status *sy_session_get_output(sy_session *s, size_t index, const sy_tensor **out)
{
    if (!s || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_get_output: session and out are required");
    if (index >= s->g->n_outputs)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "output index %zu out of range (the model has %u outputs)", index,
                        s->g->n_outputs);
    const sy_value_rt *v = &s->values[s->g->outputs[index]];
    if (v->kind != SY_RT_TENSOR)
        return sy_error(SY_ERR_TYPE, "output '%s' is a %s: read it with sy_session_output_kind and "
                        "sy_session_get_output_sequence", s->g->values[s->g->outputs[index]].name,
                        sy_value_kind_name(v));
    *out = &v->t;
    return NULL;
}

SY_EXPORT sy_status *sy_session_get_output_by_name(sy_session *s, const char *name, const sy_tensor **out)
{
    if (!s || !name || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_get_output_by_name: arguments are required");
    for (uint32_t i = 0; i < s->g->n_outputs; i++)
        if (!strcmp(s->g->values[s->g->outputs[i]].name, name))
            return sy_session_get_output(s, i, out);
    return sy_error(SY_ERR_NOT_FOUND, "the model has no output named '%s'", name);
}

SY_EXPORT void sy_session_reset(sy_session *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        if (nr->prepared && nr->kernel->def.reset)
            nr->kernel->def.reset(nr->state);
        for (uint32_t k = 0; k < nr->n_subs; k++)
            sy_session_reset(nr->subs[k]); /* the stateful kernels of bodies too */
    }
}
