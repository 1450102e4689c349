/*
 * Memory planner. Lifetimes come from the execution order; buffers are
 * placed greedily by size (largest first) at the lowest offset that does not
 * overlap any already-placed buffer whose lifetime intersects. In-place and
 * aliasing happen only where the schema declared it, the input's last use is
 * this node, and the input is neither a graph input/output nor a constant.
 * The planner is judged by arena bytes / lower bound (largest sum of bytes
 * live at any step).
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SY_ARENA_ALIGN 64

typedef struct buf {
    size_t size;
    int32_t first, last; /* step range, inclusive */
    size_t offset;
    int32_t value;       /* value index, or -1 for scratch */
    int32_t node;        /* node index for scratch */
} buf;

static size_t align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

static int cmp_buf_size_desc(const void *a, const void *b)
{
    const buf *x = a, *y = b;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->value < y->value ? -1 : (x->value > y->value);
}

static int32_t root_of(const struct sy_session *s, int32_t v)
{
    while (s->values[v].alias_of >= 0)
        v = s->values[v].alias_of;
    return v;
}

static bool needs_buffer(const struct sy_session *s, int32_t v)
{
    const sy_value_rt *vr = &s->values[v];
    return !vr->is_const && !vr->is_input && vr->producer >= 0 && !s->nodes[vr->producer].folded;
}

/* Place `b` at the lowest offset not overlapping placed buffers that are
 * live at the same time. `placed` is kept sorted by offset. */
static void place_first_fit(buf *b, buf **placed, uint32_t n_placed)
{
    size_t offset = 0;
    for (uint32_t i = 0; i < n_placed; i++) {
        const buf *p = placed[i];
        if (p->last < b->first || p->first > b->last || p->size == 0)
            continue;
        if (offset + b->size <= p->offset)
            break; /* the gap before p fits */
        size_t end = align_up(p->offset + p->size, SY_ARENA_ALIGN);
        if (end > offset)
            offset = end;
    }
    b->offset = offset;
}

sy_status *sy_plan_memory(struct sy_session *s)
{
    const ir_graph *g = s->g;
    /* Time of each node: its step index, or with a thread pool its
     * dependency level (nodes of one level run concurrently, so buffers are
     * live for whole levels). Folded nodes have none. */
    int32_t *step_of = malloc((s->n_nodes ? s->n_nodes : 1) * sizeof *step_of);
    uint32_t *consumers = calloc(s->n_values ? s->n_values : 1, sizeof *consumers);
    if (!step_of || !consumers) {
        free(step_of);
        free(consumers);
        return sy_error_oom();
    }
    bool by_level = s->threads > 1;
    int32_t n_steps = 0;
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        const ir_node *n = s->nodes[i].view.ir;
        if (s->nodes[i].folded) {
            step_of[i] = -1;
            continue;
        }
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0)
                consumers[n->inputs[k]]++;
        if (!by_level) {
            step_of[i] = n_steps++;
            continue;
        }
        int32_t level = 0;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            int32_t p = v >= 0 ? s->values[v].producer : -1;
            if (p >= 0 && step_of[p] >= 0 && step_of[p] + 1 > level)
                level = step_of[p] + 1;
        }
        step_of[i] = level;
        if (level + 1 > n_steps)
            n_steps = level + 1;
    }
    free(s->node_time);
    s->node_time = step_of;
    s->n_times = (uint32_t)n_steps;

    /* raw lifetimes */
    for (uint32_t v = 0; v < s->n_values; v++) {
        sy_value_rt *vr = &s->values[v];
        vr->alias_of = -1;
        vr->first_use = vr->last_use = -1;
        if (needs_buffer(s, (int32_t)v))
            vr->first_use = vr->last_use = step_of[vr->producer];
    }
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        if (step_of[i] < 0)
            continue;
        const ir_node *n = s->nodes[i].view.ir;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            if (v >= 0 && s->values[v].last_use >= 0 && s->values[v].last_use < step_of[i])
                s->values[v].last_use = step_of[i];
        }
    }
    for (uint32_t o = 0; o < g->n_outputs; o++)
        if (s->values[g->outputs[o]].first_use >= 0)
            s->values[g->outputs[o]].last_use = INT32_MAX;

    /* declared in-place / aliasing, decided in execution order */
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        if (step_of[i] < 0)
            continue;
        const sy_node_rt *nr = &s->nodes[i];
        const sy_op_schema *sc = &nr->view.schema->def;
        const ir_node *n = nr->view.ir;
        for (uint32_t p = 0; p < sc->n_inplace; p++) {
            const sy_inplace_pair *ip = &sc->inplace[p];
            if ((uint32_t)ip->input >= n->n_inputs || (uint32_t)ip->output >= n->n_outputs)
                continue;
            int32_t vin = n->inputs[ip->input], vout = n->outputs[ip->output];
            if (vin < 0 || vout < 0 || !needs_buffer(s, vin) || !needs_buffer(s, vout))
                continue;
            int32_t root = root_of(s, vin);
            sy_value_rt *r = &s->values[root], *out = &s->values[vout];
            if (r->is_output || r->last_use != step_of[i] || out->alias_of >= 0)
                continue;
            /* concurrent nodes of one level could read the buffer while this
             * one overwrites it: alias only a value this node alone reads */
            if (by_level && consumers[vin] != 1)
                continue;
            if (out->t.nbytes != s->values[vin].t.nbytes)
                continue;
            out->alias_of = root;
            if (out->last_use > r->last_use)
                r->last_use = out->last_use; /* INT32_MAX when the output is a graph output */
        }
    }

    /* buffers: one per root value, plus scratch per node */
    uint32_t cap = s->n_values + s->n_nodes + 1, n_bufs = 0;
    buf *bufs = calloc(cap, sizeof *bufs);
    buf **placed = calloc(cap, sizeof *placed);
    if (!bufs || !placed) {
        free(bufs);
        free(placed);
        free(consumers);
        return sy_error_oom();
    }
    size_t naive = 0;
    for (uint32_t v = 0; v < s->n_values; v++) {
        sy_value_rt *vr = &s->values[v];
        if (vr->first_use < 0 || vr->alias_of >= 0)
            continue;
        bufs[n_bufs++] = (buf){vr->t.nbytes, vr->first_use, vr->last_use == INT32_MAX ? n_steps : vr->last_use, 0,
                               (int32_t)v, -1};
        naive += align_up(vr->t.nbytes, SY_ARENA_ALIGN);
    }
    for (uint32_t i = 0; i < s->n_nodes; i++)
        if (step_of[i] >= 0 && s->nodes[i].view.scratch) {
            bufs[n_bufs++] = (buf){s->nodes[i].view.scratch, step_of[i], step_of[i], 0, -1, (int32_t)i};
            naive += align_up(s->nodes[i].view.scratch, SY_ARENA_ALIGN);
        }
    qsort(bufs, n_bufs, sizeof *bufs, cmp_buf_size_desc);

    size_t arena = 0;
    uint32_t n_placed = 0;
    for (uint32_t b = 0; b < n_bufs; b++) {
        place_first_fit(&bufs[b], placed, n_placed);
        /* insert sorted by offset */
        uint32_t pos = n_placed;
        while (pos > 0 && placed[pos - 1]->offset > bufs[b].offset) {
            placed[pos] = placed[pos - 1];
            pos--;
        }
        placed[pos] = &bufs[b];
        n_placed++;
        size_t end = align_up(bufs[b].offset + bufs[b].size, SY_ARENA_ALIGN);
        if (end > arena)
            arena = end;
    }

    /* lower bound: the largest sum of live bytes at any step */
    size_t lower = 0;
    for (int32_t t = 0; t <= n_steps; t++) {
        size_t live = 0;
        for (uint32_t b = 0; b < n_bufs; b++)
            if (bufs[b].first <= t && bufs[b].last >= t)
                live += bufs[b].size;
        if (live > lower)
            lower = live;
    }

    sy_aligned_free(s->arena);
    s->arena = sy_aligned_alloc(arena ? arena : SY_ARENA_ALIGN, SY_ARENA_ALIGN);
    if (!s->arena) {
        free(bufs);
        free(placed);
        free(consumers);
        return sy_error(SY_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte activation arena", arena);
    }
    s->arena_bytes = arena;
    s->arena_lower_bound = lower;
    s->naive_bytes = naive;
    for (uint32_t b = 0; b < n_bufs; b++) {
        if (bufs[b].value >= 0) {
            sy_value_rt *vr = &s->values[bufs[b].value];
            vr->offset = bufs[b].offset;
            vr->bytes = bufs[b].size;
            vr->t.data = (char *)s->arena + bufs[b].offset;
            vr->planned = true;
        } else {
            s->nodes[bufs[b].node].scratch_offset = bufs[b].offset;
        }
    }
    for (uint32_t v = 0; v < s->n_values; v++)
        if (s->values[v].alias_of >= 0) {
            sy_value_rt *vr = &s->values[v];
            vr->t.data = s->values[root_of(s, (int32_t)v)].t.data;
            vr->planned = true;
        }
    free(bufs);
    free(placed);
    free(consumers);
    return NULL;
}
