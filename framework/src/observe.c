/*
 * The run observer (sy_session_set_observer): after each step the outputs
 * it produced are shown to the host's callback. The run loops call in here
 * only when an observer is set, so a session without one pays nothing.
 */
#include "session.h"
#include "switchyard/switchyard.h"

static void report(struct sy_session *s, uint32_t node, uint32_t output, const sy_tensor *t, int32_t part)
{
    const sy_node_rt *nr = &s->nodes[node];
    sy_node_output o = {
        .struct_size = sizeof o,
        .node = node,
        .node_name = nr->view.ir->name,
        .op = nr->view.ir->op,
        .provider = nr->provider ? nr->provider->def.name : "?",
        .output = output,
        .tensor = t,
        .partition = part,
        .partition_nodes = part >= 0 ? s->parts[part].n_nodes : 0,
        .inputs = part >= 0 ? NULL : (const sy_tensor *const *)nr->view.in,
        .n_inputs = part >= 0 ? 0 : nr->view.n_in,
    };
    s->observer(s->observer_user, &o);
}

void sy_observe_node(struct sy_session *s, uint32_t node)
{
    const sy_node_rt *nr = &s->nodes[node];
    for (uint32_t k = 0; k < nr->view.ir->n_outputs; k++)
        if (nr->view.ir->outputs[k] >= 0)
            report(s, node, k, &s->values[nr->view.ir->outputs[k]].t, -1);
}

void sy_observe_step(struct sy_session *s, const sy_step *st)
{
    if (st->is_copy)
        return;
    const sy_node_rt *nr = &s->nodes[st->node];
    int32_t part = nr->part;
    if (part < 0 || !s->parts[part].compiled) {
        sy_observe_node(s, st->node);
        return;
    }
    /* a compiled partition: its outputs are values of the session (the
     * sy_tensor is the first member of sy_value_rt), each with its producer */
    const sy_part_rt *p = &s->parts[part];
    for (uint32_t o = 0; o < p->n_outputs; o++) {
        const sy_value_rt *v = (const sy_value_rt *)(const void *)p->outputs[o];
        if (v < s->values || v >= s->values + s->n_values || v->producer < 0)
            continue;
        const ir_node *prod = s->nodes[v->producer].view.ir;
        uint32_t k = 0;
        while (k < prod->n_outputs && prod->outputs[k] != (int32_t)(v - s->values))
            k++;
        report(s, (uint32_t)v->producer, k, p->outputs[o], part);
    }
}

SY_EXPORT void sy_session_set_observer(sy_session *s, sy_observer_fn fn, void *user)
{
    if (!s)
        return;
    s->observer = fn;
    s->observer_user = fn ? user : NULL;
}
