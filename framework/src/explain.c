/* What a session decided: placements with reasons, and the memory report. */
#include "session.h"
#include "status.h"

#include <string.h>

SY_EXPORT const char *sy_reason_name(sy_reason r)
{
    static const char *const names[SY_REASON__COUNT] = {
        [SY_REASON_NONE] = "none",
        [SY_REASON_TAKEN] = "taken",
        [SY_REASON_OP_UNSUPPORTED] = "op-unsupported",
        [SY_REASON_DTYPE] = "dtype",
        [SY_REASON_RANK] = "rank",
        [SY_REASON_ATTRIBUTE] = "attribute",
        [SY_REASON_MEMORY] = "memory",
        [SY_REASON_NO_KERNEL] = "no-kernel",
        [SY_REASON_POLICY] = "policy",
        [SY_REASON_SHAPE] = "shape",
        [SY_REASON_FALLBACK] = "fallback",
    };
    return (unsigned)r < SY_REASON__COUNT && names[r] ? names[r] : "unknown";
}

SY_EXPORT size_t sy_session_node_count(const sy_session *s) { return s ? s->n_nodes : 0; }

SY_EXPORT bool sy_session_node_placement(const sy_session *s, size_t index, sy_node_placement *out)
{
    if (!s || index >= s->n_nodes || !out || out->struct_size < sizeof *out)
        return false;
    const sy_node_rt *nr = &s->nodes[index];
    *out = (sy_node_placement){
        .struct_size = sizeof *out,
        .name = nr->view.ir->name,
        .op = nr->view.ir->op,
        .domain = nr->view.ir->domain,
        .provider = nr->provider ? nr->provider->def.name : NULL,
        .reason = nr->folded ? SY_REASON_NONE : nr->reason,
        .reason_text = nr->reason_text,
        .folded = nr->folded,
    };
    if (nr->builtin)
        out->reason_text = nr->n_subs ? "control flow: runs in the core as one unit; its subgraphs are sessions of "
                                        "their own, placed on the environment's providers when it runs"
                                      : "sequence/optional value: runs in the core";
    return true;
}

SY_EXPORT size_t sy_session_node_subgraph_count(const sy_session *s, size_t index)
{
    return s && index < s->n_nodes ? s->nodes[index].n_subs : 0;
}

SY_EXPORT sy_session *sy_session_node_subgraph(sy_session *s, size_t index, size_t k, const char **attr)
{
    if (!s || index >= s->n_nodes || k >= s->nodes[index].n_subs)
        return NULL;
    sy_node_rt *nr = &s->nodes[index];
    const ir_node *n = nr->view.ir;
    size_t j = 0;
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        if (n->attrs[a].type != SY_ATTR_GRAPH || !n->attrs[a].g)
            continue;
        if (j++ != k)
            continue;
        if (!nr->subs[k]) {
            sy_status *st = sy_session_create_sub(s, n->attrs[a].g, &nr->subs[k]);
            if (st) {
                sy_status_free(st);
                return NULL;
            }
        }
        if (attr)
            *attr = n->attrs[a].name;
        return nr->subs[k];
    }
    return NULL;
}

SY_EXPORT int32_t sy_session_node_partition(const sy_session *s, size_t index)
{
    if (!s || index >= s->n_nodes || s->nodes[index].folded)
        return -1;
    return s->nodes[index].part;
}

SY_EXPORT size_t sy_session_copy_count(const sy_session *s) { return s ? s->n_copies : 0; }

SY_EXPORT bool sy_session_copy_info(const sy_session *s, size_t index, sy_copy_info *out)
{
    if (!s || index >= s->n_copies || !out || out->struct_size < sizeof *out)
        return false;
    const sy_copy_rt *c = &s->copies[index];
    const sy_node_rt *consumer = &s->nodes[c->consumer];
    *out = (sy_copy_info){
        .struct_size = sizeof *out,
        .value = s->values[c->src].t.name,
        .src_domain = s->domains[s->values[c->src].domain].name,
        .dst_domain = s->domains[c->dst_domain].name,
        .consumer = consumer->view.ir->name,
        .consumer_provider = consumer->provider ? consumer->provider->def.name : NULL,
        .via = c->via ? c->via->def.name : NULL,
        .bytes = c->val.t.nbytes,
    };
    return true;
}

SY_EXPORT void sy_session_bounce_stats(const sy_session *s, uint64_t *copies, uint64_t *bytes)
{
    if (copies)
        *copies = s ? s->bounce_copies : 0;
    if (bytes)
        *bytes = s ? s->bounce_bytes : 0;
}

SY_EXPORT size_t sy_session_memory_domain_count(const sy_session *s) { return s ? s->n_domains : 0; }

SY_EXPORT bool sy_session_memory_report(const sy_session *s, size_t domain, sy_memory_report *out)
{
    if (!s || domain >= s->n_domains || !out || out->struct_size < sizeof *out)
        return false;
    const sy_domain_rt *d = &s->domains[domain];
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->domain = d->name;
    out->arena_bytes = d->arena_bytes;
    out->lower_bound = d->lower_bound;
    out->naive_bytes = d->naive_bytes;
    out->activations = d->activations;
    out->scratch = d->scratch;
    out->copies = d->copies;
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        const sy_node_rt *nr = &s->nodes[i];
        const char *dname = nr->provider ? nr->provider->domain.name : "host";
        if (!nr->folded && !strcmp(dname, d->name)) {
            out->persistent += nr->view.persistent;
            out->packed_weights += nr->view.packed;
        }
    }
    if (domain == 0)
        for (uint32_t v = 0; v < s->n_values; v++)
            if (s->g->values[v].flags & IR_VALUE_INITIALIZER)
                out->weights += s->g->values[v].nbytes;
    return true;
}
