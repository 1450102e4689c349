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
    return true;
}

SY_EXPORT size_t sy_session_memory_domain_count(const sy_session *s) { return s ? 1 : 0; }

SY_EXPORT bool sy_session_memory_report(const sy_session *s, size_t domain, sy_memory_report *out)
{
    if (!s || domain != 0 || !out || out->struct_size < sizeof *out)
        return false;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->domain = "host";
    out->arena_bytes = s->arena_bytes;
    out->lower_bound = s->arena_lower_bound;
    out->naive_bytes = s->naive_bytes;
    for (uint32_t v = 0; v < s->n_values; v++) {
        const sy_value_rt *vr = &s->values[v];
        if (vr->first_use >= 0 && vr->alias_of < 0)
            out->activations += vr->t.nbytes;
        if (s->g->values[v].flags & IR_VALUE_INITIALIZER)
            out->weights += s->g->values[v].nbytes;
    }
    for (uint32_t i = 0; i < s->n_nodes; i++)
        if (!s->nodes[i].folded)
            out->scratch += s->nodes[i].view.scratch;
    return true;
}
