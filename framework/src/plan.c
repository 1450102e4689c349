/*
 * Memory planner. Lifetimes come from the execution order; buffers are
 * placed greedily by size (largest first) at the lowest offset that does not
 * overlap any already-placed buffer of the same memory domain whose lifetime
 * intersects. One arena per domain. In-place and aliasing happen only where
 * the schema declared it, the input's last use is this node, and the input is
 * neither a graph input/output nor a constant. The planner is judged by
 * arena bytes / lower bound (the largest sum of bytes live at any time).
 *
 * Time: a node at position t (its step index, or its dependency level when a
 * thread pool runs a level's nodes concurrently) runs at time 2t+1; the
 * boundary copies it needs run at time 2t, before it.
 */
#include "plan.h"
#include "session.h"
#include "status.h"
#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf {
    size_t size;
    int32_t first, last; /* time range, inclusive */
    size_t offset;
    uint32_t domain;
    int32_t value;       /* value index, -1 for scratch, -2 for a copy */
    int32_t index;       /* node index (scratch) or copy index */
    int64_t pin;         /* offset a kernel pinned it at, -1 none */
} buf;

static size_t align_up(size_t x, size_t a) { return (x + a - 1) & ~(a - 1); }

static int cmp_buf(const void *a, const void *b)
{
    const buf *x = a, *y = b;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    if ((x->pin >= 0) != (y->pin >= 0)) /* pinned buffers are placed first */
        return x->pin >= 0 ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
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

/* The offset a kernel pinned value v at (node_pin_output), -1 none. */
static int64_t pinned_offset(const struct sy_session *s, int32_t v)
{
    int32_t p = s->values[v].producer;
    if (p < 0 || !s->nodes[p].view.pins)
        return -1;
    const ir_node *n = s->nodes[p].view.ir;
    for (uint32_t o = 0; o < n->n_outputs; o++)
        if (n->outputs[o] == v)
            return s->nodes[p].view.pins[o];
    return -1;
}

/* Lowest offset for `b` not overlapping placed buffers live at the same
 * time; `placed` is sorted by offset. */
static void place_first_fit(buf *b, buf **placed, uint32_t n_placed, size_t align)
{
    size_t offset = 0;
    for (uint32_t i = 0; i < n_placed; i++) {
        const buf *p = placed[i];
        if (p->last < b->first || p->first > b->last || p->size == 0)
            continue;
        if (offset + b->size <= p->offset)
            break; /* the gap before p fits */
        size_t end = align_up(p->offset + p->size, align);
        if (end > offset)
            offset = end;
    }
    b->offset = offset;
}

/* Node positions in execution order: step index, or dependency level with a
 * thread pool. The members of a compiled partition run as one step and
 * share one position. Folded nodes have none. */
static int32_t *node_positions(struct sy_session *s, int32_t *n_pos)
{
    int32_t *pos = malloc((s->n_nodes ? s->n_nodes : 1) * sizeof *pos);
    if (!pos)
        return NULL;
    for (uint32_t i = 0; i < s->n_nodes; i++)
        pos[i] = -1;
    bool by_level = s->threads > 1;
    int32_t n = 0;
    for (uint32_t k = 0; k < s->n_nodes; k++) {
        uint32_t i = s->order ? s->order[k] : k;
        if (s->nodes[i].folded)
            continue;
        const sy_part_rt *part =
            s->nodes[i].part >= 0 && s->parts[s->nodes[i].part].compiled ? &s->parts[s->nodes[i].part] : NULL;
        if (part && part->nodes[0] != i) {
            pos[i] = pos[part->nodes[0]]; /* members follow their first, contiguously */
            continue;
        }
        if (!by_level) {
            pos[i] = n++;
            continue;
        }
        int32_t level = 0;
        uint32_t n_members = part ? part->n_nodes : 1;
        for (uint32_t m = 0; m < n_members; m++) {
            const ir_node *nd = s->nodes[part ? part->nodes[m] : i].view.ir;
            for (uint32_t q = 0; q < nd->n_inputs; q++) {
                int32_t v = nd->inputs[q];
                int32_t p = v >= 0 ? s->values[v].producer : -1;
                if (p >= 0 && pos[p] >= 0 && pos[p] + 1 > level)
                    level = pos[p] + 1;
            }
        }
        pos[i] = level;
        if (level + 1 > n)
            n = level + 1;
    }
    *n_pos = n;
    return pos;
}

sy_status *sy_plan_memory(struct sy_session *s)
{
    const ir_graph *g = s->g;
    int32_t n_pos = 0;
    int32_t *pos = node_positions(s, &n_pos);
    uint32_t *consumers = calloc(s->n_values ? s->n_values : 1, sizeof *consumers);
    if (!pos || !consumers) {
        free(pos);
        free(consumers);
        return sy_error_oom();
    }
    free(s->node_time);
    s->node_time = pos;
    s->n_times = (uint32_t)n_pos;
    bool by_level = s->threads > 1;
    const int32_t end_time = 2 * n_pos + 1;
#define T(node) (2 * pos[node] + 1)

    /* raw lifetimes from the IR's edges */
    for (uint32_t v = 0; v < s->n_values; v++) {
        sy_value_rt *vr = &s->values[v];
        vr->alias_of = -1;
        vr->first_use = vr->last_use = -1;
        if (needs_buffer(s, (int32_t)v))
            vr->first_use = vr->last_use = T(vr->producer);
    }
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        if (pos[i] < 0)
            continue;
        const ir_node *n = s->nodes[i].view.ir;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            if (v < 0)
                continue;
            consumers[v]++;
            if (s->values[v].last_use >= 0 && s->values[v].last_use < T(i))
                s->values[v].last_use = T(i);
        }
    }
    for (uint32_t o = 0; o < g->n_outputs; o++)
        if (s->values[g->outputs[o]].first_use >= 0)
            s->values[g->outputs[o]].last_use = end_time;
    /* copies: live from just before their first consumer to their last */
    for (uint32_t c = 0; c < s->n_copies; c++) {
        sy_copy_rt *cp = &s->copies[c];
        cp->val.first_use = T(cp->consumer) - 1;
        cp->val.last_use = T(cp->consumer);
        for (uint32_t i = 0; i < s->n_nodes; i++)
            if (pos[i] >= 0)
                for (uint32_t k = 0; k < s->nodes[i].view.n_in; k++)
                    if (s->nodes[i].view.in[k] == &cp->val.t && T(i) > cp->val.last_use)
                        cp->val.last_use = T(i);
    }

    /* declared in-place / aliasing, decided in execution order */
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        if (pos[i] < 0)
            continue;
        const sy_node_rt *nr = &s->nodes[i];
        const sy_op_schema *sc = &nr->view.schema->def;
        const ir_node *n = nr->view.ir;
        /* a compiled partition runs its own way: no aliasing inside it */
        if (nr->part >= 0 && s->parts[nr->part].compiled)
            continue;
        for (uint32_t p = 0; p < sc->n_inplace; p++) {
            const sy_inplace_pair *ip = &sc->inplace[p];
            if ((uint32_t)ip->input >= n->n_inputs || (uint32_t)ip->output >= n->n_outputs)
                continue;
            int32_t vin = n->inputs[ip->input], vout = n->outputs[ip->output];
            if (vin < 0 || vout < 0 || !needs_buffer(s, vin) || !needs_buffer(s, vout) || pinned_offset(s, vout) >= 0)
                continue;
            /* the node must read the value itself, not a copy of it */
            if (nr->view.in[ip->input] != &s->values[vin].t)
                continue;
            int32_t root = root_of(s, vin);
            sy_value_rt *r = &s->values[root], *out = &s->values[vout];
            if (r->is_output || r->last_use != T(i) || out->alias_of >= 0 || r->domain != out->domain)
                continue;
            if (out->t.nbytes != s->values[vin].t.nbytes)
                continue;
            /* concurrent nodes of one level could read the buffer while this
             * one overwrites it: alias only a value this node alone reads */
            if (by_level && consumers[vin] != 1)
                continue;
            out->alias_of = root;
            if (out->last_use > r->last_use)
                r->last_use = out->last_use; /* end_time when the output is a graph output */
        }
    }

    /* buffers: one per root value, per copy, and per node's scratch,
     * counted first (a block for every value and node was 48 bytes each
     * reserved where an in-place chain needs one) */
    uint32_t cap = s->n_copies + 1, n_bufs = 0;
    for (uint32_t v = 0; v < s->n_values; v++)
        cap += s->values[v].first_use >= 0 && s->values[v].alias_of < 0;
    for (uint32_t i = 0; i < s->n_nodes; i++)
        cap += pos[i] >= 0 && s->nodes[i].view.scratch;
    buf *bufs = calloc(cap, sizeof *bufs);
    buf **placed = calloc(cap, sizeof *placed);
    if (!bufs || !placed) {
        free(bufs);
        free(placed);
        free(consumers);
        return sy_error_oom();
    }
    for (uint32_t d = 0; d < s->n_domains; d++) {
        sy_domain_rt *dr = &s->domains[d];
        dr->arena_bytes = dr->lower_bound = dr->naive_bytes = dr->activations = dr->scratch = dr->copies = 0;
    }
    for (uint32_t v = 0; v < s->n_values; v++) {
        sy_value_rt *vr = &s->values[v];
        if (vr->first_use < 0)
            continue;
        /* the naive plan gives every value its own buffer, aliases included */
        s->domains[vr->domain].naive_bytes += align_up(vr->t.nbytes, s->domains[vr->domain].alignment);
        if (vr->alias_of >= 0)
            continue;
        bufs[n_bufs++] = (buf){vr->t.nbytes, vr->first_use, vr->last_use, 0, vr->domain, (int32_t)v, -1,
                               pinned_offset(s, (int32_t)v)};
        s->domains[vr->domain].activations += vr->t.nbytes;
    }
    for (uint32_t c = 0; c < s->n_copies; c++) {
        sy_value_rt *vr = &s->copies[c].val;
        bufs[n_bufs++] = (buf){vr->t.nbytes, vr->first_use, vr->last_use, 0, vr->domain, -2, (int32_t)c, -1};
        s->domains[vr->domain].copies += vr->t.nbytes;
        s->domains[vr->domain].naive_bytes += align_up(vr->t.nbytes, s->domains[vr->domain].alignment);
    }
    for (uint32_t i = 0; i < s->n_nodes; i++)
        if (pos[i] >= 0 && s->nodes[i].view.scratch) {
            uint32_t d = s->nodes[i].provider ? 0 : 0;
            for (uint32_t k = 0; k < s->n_domains; k++)
                if (s->nodes[i].provider && !strcmp(s->domains[k].name, s->nodes[i].provider->domain.name))
                    d = k;
            bufs[n_bufs++] = (buf){s->nodes[i].view.scratch, T(i), T(i), 0, d, -1, (int32_t)i, -1};
            s->domains[d].scratch += s->nodes[i].view.scratch;
            s->domains[d].naive_bytes += align_up(s->nodes[i].view.scratch, s->domains[d].alignment);
        }
    qsort(bufs, n_bufs, sizeof *bufs, cmp_buf);

    sy_status *st = NULL;
    uint32_t b0 = 0;
    uint64_t total_arena = 0;
    for (uint32_t d = 0; d < s->n_domains && !st; d++) {
        sy_domain_rt *dr = &s->domains[d];
        uint32_t b1 = b0;
        while (b1 < n_bufs && bufs[b1].domain == d)
            b1++;
        size_t arena = 0;
        uint32_t n_placed = 0;
        for (uint32_t b = b0; b < b1 && !st; b++) {
            if (bufs[b].pin >= 0) {
                /* honour the pin; refuse a misaligned one or one that
                 * overlaps another pinned buffer live at the same time */
                bufs[b].offset = (size_t)bufs[b].pin;
                if (bufs[b].offset % dr->alignment) {
                    st = sy_error(SY_ERR_INVALID_ARGUMENT,
                                  "value '%s' is pinned at offset %zu of domain '%s', which is not a multiple of its "
                                  "alignment %u",
                                  s->values[bufs[b].value].t.name, bufs[b].offset, dr->name, dr->alignment);
                    break;
                }
                for (uint32_t q = 0; q < n_placed; q++) {
                    const buf *p = placed[q];
                    bool time = !(p->last < bufs[b].first || p->first > bufs[b].last);
                    bool space = p->offset < bufs[b].offset + bufs[b].size && bufs[b].offset < p->offset + p->size;
                    if (time && space && p->size && bufs[b].size) {
                        st = sy_error(SY_ERR_INVALID_ARGUMENT,
                                      "values '%s' and '%s' are pinned to overlapping bytes of domain '%s' while both "
                                      "are live",
                                      s->values[p->value].t.name, s->values[bufs[b].value].t.name, dr->name);
                        break;
                    }
                }
                if (st)
                    break;
            } else {
                place_first_fit(&bufs[b], placed, n_placed, dr->alignment);
            }
            uint32_t at = n_placed;
            while (at > 0 && placed[at - 1]->offset > bufs[b].offset) {
                placed[at] = placed[at - 1];
                at--;
            }
            placed[at] = &bufs[b];
            n_placed++;
            size_t end = align_up(bufs[b].offset + bufs[b].size, dr->alignment);
            if (end > arena)
                arena = end;
        }
        if (st)
            break;
        size_t lower = 0;
        for (int32_t t = 0; t <= end_time; t++) {
            size_t live = 0;
            for (uint32_t b = b0; b < b1; b++)
                if (bufs[b].first <= t && bufs[b].last >= t)
                    live += bufs[b].size;
            if (live > lower)
                lower = live;
        }
        dr->arena_bytes = arena;
        dr->lower_bound = lower;
        total_arena += arena;
        if (total_arena > s->max_arena_bytes) {
            char a[64], b[64];
            st = sy_error(SY_ERR_BUDGET, "the memory plan needs %s (domain '%s' and those before it), over the "
                          "session's max_arena_bytes = %s",
                          sy_size_str(total_arena, a, sizeof a), dr->name, sy_size_str(s->max_arena_bytes, b, sizeof b));
            break;
        }
        if (dr->capacity && arena > dr->capacity) {
            st = sy_error(SY_ERR_BUDGET, "memory domain '%s': the plan needs %zu bytes, the domain holds %llu",
                          dr->name, arena, (unsigned long long)dr->capacity);
            break;
        }
        sy_aligned_free(dr->arena);
        dr->arena = sy_aligned_alloc(arena ? arena : dr->alignment, dr->alignment);
        if (!dr->arena) {
            st = sy_error(SY_ERR_OUT_OF_MEMORY, "cannot allocate the %zu-byte arena of domain '%s'", arena, dr->name);
            break;
        }
        for (uint32_t b = b0; b < b1; b++) {
            char *at = (char *)dr->arena + bufs[b].offset;
            if (bufs[b].value >= 0) {
                sy_value_rt *vr = &s->values[bufs[b].value];
                vr->t.data = at;
                vr->t.domain = d;
            } else if (bufs[b].value == -2) {
                sy_value_rt *vr = &s->copies[bufs[b].index].val;
                vr->t.data = at;
                vr->t.domain = d;
            } else {
                s->nodes[bufs[b].index].scratch_ptr = at;
            }
        }
        b0 = b1;
    }
    free(bufs);
    free(placed);
    free(consumers);
    if (st)
        return st;
    for (uint32_t v = 0; v < s->n_values; v++)
        if (s->values[v].alias_of >= 0) {
            sy_value_rt *vr = &s->values[v];
            vr->t.data = s->values[root_of(s, (int32_t)v)].t.data;
            vr->t.domain = s->values[root_of(s, (int32_t)v)].t.domain;
        }
    s->arena_bytes = s->arena_lower_bound = s->naive_bytes = 0;
    for (uint32_t d = 0; d < s->n_domains; d++) {
        s->arena_bytes += s->domains[d].arena_bytes;
        s->arena_lower_bound += s->domains[d].lower_bound;
        s->naive_bytes += s->domains[d].naive_bytes;
    }
#undef T
    return NULL;
}

/* Orders the lifetime events of sy_plan_blocks' lower bound: by time, a
 * block's end (last + 1) before another's start at the same time. */
typedef struct plan_event {
    int64_t t;
    int64_t delta; /* +size at first, -size at last + 1 */
} plan_event;

static int cmp_event(const void *a, const void *b)
{
    const plan_event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta);
}

sy_status *sy_plan_blocks(sy_plan_block *blocks, uint32_t n, uint64_t align, uint64_t *arena_bytes,
                          uint64_t *lower_bound)
{
    if (align == 0 || (align & (align - 1)) || align > (UINT64_C(1) << 30))
        return sy_error(SY_ERR_INVALID_ARGUMENT, "plan_blocks: alignment %llu is not a power of two up to 2^30",
                        (unsigned long long)align);
    if (n && !blocks)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "plan_blocks: %u blocks and no array", n);
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sy_plan_block *b = &blocks[i];
        if (b->first > b->last || b->first < INT32_MIN || b->last >= INT32_MAX)
            return sy_error(SY_ERR_INVALID_ARGUMENT,
                            "plan_blocks: block %u lives from %lld to %lld (first <= last, both within int32)", i,
                            (long long)b->first, (long long)b->last);
        /* every block aligned up stays below 2^62: offsets and sums cannot wrap */
        if (b->size > (UINT64_C(1) << 62) || (total += b->size + align) > (UINT64_C(1) << 62) ||
            b->size > SIZE_MAX / 2)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "plan_blocks: the sizes of blocks 0..%u pass 2^62 bytes", i);
    }
    buf *bufs = calloc(n ? n : 1, sizeof *bufs);
    buf **placed = calloc(n ? n : 1, sizeof *placed);
    plan_event *ev = calloc(n ? 2 * (size_t)n : 1, sizeof *ev);
    if (!bufs || !placed || !ev) {
        free(bufs);
        free(placed);
        free(ev);
        return sy_error_oom();
    }
    for (uint32_t i = 0; i < n; i++) {
        bufs[i] = (buf){(size_t)blocks[i].size, (int32_t)blocks[i].first, (int32_t)blocks[i].last, 0, 0, (int32_t)i,
                        (int32_t)i, -1};
        ev[2 * i] = (plan_event){blocks[i].first, (int64_t)blocks[i].size};
        ev[2 * i + 1] = (plan_event){blocks[i].last + 1, -(int64_t)blocks[i].size};
    }
    qsort(bufs, n, sizeof *bufs, cmp_buf);
    uint64_t arena = 0;
    for (uint32_t b = 0; b < n; b++) {
        place_first_fit(&bufs[b], placed, b, (size_t)align);
        uint32_t at = b;
        while (at > 0 && placed[at - 1]->offset > bufs[b].offset) {
            placed[at] = placed[at - 1];
            at--;
        }
        placed[at] = &bufs[b];
        uint64_t end = align_up(bufs[b].offset + bufs[b].size, (size_t)align);
        if (end > arena)
            arena = end;
        blocks[bufs[b].index].offset = bufs[b].offset;
    }
    qsort(ev, 2 * (size_t)n, sizeof *ev, cmp_event);
    int64_t live = 0, lower = 0;
    for (size_t e = 0; e < 2 * (size_t)n; e++)
        if ((live += ev[e].delta) > lower)
            lower = live;
    free(bufs);
    free(placed);
    free(ev);
    if (arena_bytes)
        *arena_bytes = arena;
    if (lower_bound)
        *lower_bound = (uint64_t)lower;
    return NULL;
}
