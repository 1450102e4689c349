/*
 * Fused partitions (ABI 1.1). After placement each provider with a group()
 * hook may fuse the nodes it took; the core checks every group is convex
 * (no path leaves the group and comes back, else the group could not run as
 * one step), works out its external inputs and outputs, lets the provider
 * compile it, and fixes an execution order in which the members of each
 * compiled partition are contiguous.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static void part_free(sy_part_rt *p)
{
    if (p->compiled && p->provider->def.release_compiled)
        p->provider->def.release_compiled(p->compiled);
    free(p->nodes);
    free(p->views);
    free(p->inputs);
    free(p->outputs);
    memset(p, 0, sizeof *p);
}

void sy_partitions_free(struct sy_session *s)
{
    for (uint32_t i = 0; i < s->n_parts; i++)
        part_free(&s->parts[i]);
    free(s->parts);
    s->parts = NULL;
    s->n_parts = 0;
    free(s->order);
    s->order = NULL;
    for (uint32_t i = 0; i < s->n_nodes; i++)
        s->nodes[i].part = -1;
}

/* Nodes that consume a value (node indices, in index order). */
static bool node_reads(const sy_node_rt *nr, int32_t v)
{
    for (uint32_t k = 0; k < nr->view.ir->n_inputs; k++)
        if (nr->view.ir->inputs[k] == v)
            return true;
    return false;
}

/* A group is convex when no node outside it is both reachable from the
 * group and able to reach it. One forward and one backward sweep over the
 * topological order. */
static sy_status *check_convex(struct sy_session *s, uint32_t part)
{
    uint32_t n = s->n_nodes;
    uint8_t *down = calloc(n ? n : 1, 1), *up = calloc(n ? n : 1, 1);
    if (!down || !up) {
        free(down);
        free(up);
        return sy_error_oom();
    }
    for (uint32_t i = 0; i < n; i++) {
        const ir_node *nd = s->nodes[i].view.ir;
        for (uint32_t k = 0; k < nd->n_inputs && !down[i]; k++) {
            int32_t v = nd->inputs[k];
            int32_t p = v >= 0 ? s->values[v].producer : -1;
            if (p >= 0 && (down[p] || s->nodes[p].part == (int32_t)part))
                down[i] = 1;
        }
    }
    for (uint32_t i = n; i-- > 0;) {
        const ir_node *nd = s->nodes[i].view.ir;
        for (uint32_t o = 0; o < nd->n_outputs && !up[i]; o++) {
            int32_t v = nd->outputs[o];
            if (v < 0)
                continue;
            for (uint32_t j = i + 1; j < n && !up[i]; j++)
                if ((up[j] || s->nodes[j].part == (int32_t)part) && node_reads(&s->nodes[j], v))
                    up[i] = 1;
        }
    }
    sy_status *st = NULL;
    for (uint32_t i = 0; i < n && !st; i++)
        if (s->nodes[i].part != (int32_t)part && down[i] && up[i]) {
            const sy_part_rt *p = &s->parts[part];
            st = sy_error(SY_ERR_PLUGIN,
                          "provider '%s': fused group %u (first node '%s') is not convex: node '%s' (%s) outside it "
                          "both depends on the group and feeds it",
                          p->provider->def.name, p->group_id, s->nodes[p->nodes[0]].view.ir->name,
                          s->nodes[i].view.ir->name, s->nodes[i].view.ir->op);
        }
    free(down);
    free(up);
    return st;
}

static bool tensor_listed(const sy_tensor *const *list, uint32_t n, const sy_tensor *t)
{
    for (uint32_t i = 0; i < n; i++)
        if (list[i] == t)
            return true;
    return false;
}

/* External inputs (incl. weights) and outputs of a partition. */
static sy_status *part_io(struct sy_session *s, sy_part_rt *p, uint32_t index)
{
    uint32_t cap_in = 0, cap_out = 0;
    for (uint32_t m = 0; m < p->n_nodes; m++) {
        cap_in += s->nodes[p->nodes[m]].view.n_in;
        cap_out += s->nodes[p->nodes[m]].view.n_out;
    }
    p->inputs = calloc(cap_in + 1, sizeof *p->inputs);
    p->outputs = calloc(cap_out + 1, sizeof *p->outputs);
    if (!p->inputs || !p->outputs)
        return sy_error_oom();
    for (uint32_t m = 0; m < p->n_nodes; m++) {
        const sy_node_rt *nr = &s->nodes[p->nodes[m]];
        for (uint32_t k = 0; k < nr->view.n_in; k++) {
            int32_t v = nr->view.ir->inputs[k];
            if (v < 0)
                continue;
            int32_t prod = s->values[v].producer;
            if (prod >= 0 && s->nodes[prod].part == (int32_t)index)
                continue;
            if (!tensor_listed(p->inputs, p->n_inputs, nr->view.in[k]))
                p->inputs[p->n_inputs++] = nr->view.in[k];
        }
        for (uint32_t o = 0; o < nr->view.n_out; o++) {
            int32_t v = nr->view.ir->outputs[o];
            if (v < 0)
                continue;
            bool external = s->values[v].is_output;
            for (uint32_t j = 0; j < s->n_nodes && !external; j++)
                if (s->nodes[j].part != (int32_t)index && !s->nodes[j].folded && node_reads(&s->nodes[j], v))
                    external = true;
            if (external)
                p->outputs[p->n_outputs++] = &s->values[v].t;
        }
    }
    return NULL;
}

/* Kahn's algorithm over nodes, with each compiled partition as one unit;
 * ties go to the lowest node index so the order stays close to the file's. */
static sy_status *make_order(struct sy_session *s)
{
    uint32_t n = s->n_nodes;
    s->order = malloc((n ? n : 1) * sizeof *s->order);
    uint32_t *indeg = calloc(n ? n : 1, sizeof *indeg);
    uint8_t *done = calloc(n ? n : 1, 1);
    if (!s->order || !indeg || !done) {
        free(indeg);
        free(done);
        return sy_error_oom();
    }
    bool any = false;
    for (uint32_t i = 0; i < s->n_parts; i++)
        any |= s->parts[i].compiled != NULL;
    if (!any) {
        for (uint32_t i = 0; i < n; i++)
            s->order[i] = i;
        free(indeg);
        free(done);
        return NULL;
    }
    /* unit of a node: its compiled partition's first member, else itself */
#define UNIT(i) (s->nodes[i].part >= 0 && s->parts[s->nodes[i].part].compiled ? s->parts[s->nodes[i].part].nodes[0] : (i))
    for (uint32_t i = 0; i < n; i++) {
        const ir_node *nd = s->nodes[i].view.ir;
        for (uint32_t k = 0; k < nd->n_inputs; k++) {
            int32_t v = nd->inputs[k];
            int32_t p = v >= 0 ? s->values[v].producer : -1;
            if (p >= 0 && UNIT((uint32_t)p) != UNIT(i))
                indeg[UNIT(i)]++;
        }
    }
    uint32_t emitted = 0;
    while (emitted < n) {
        uint32_t pick = n;
        for (uint32_t i = 0; i < n && pick == n; i++)
            if (!done[i] && UNIT(i) == i && indeg[i] == 0)
                pick = i;
        if (pick == n) {
            free(indeg);
            free(done);
            return sy_error(SY_ERR_INTERNAL, "no execution order exists for the fused partitions");
        }
        /* the unit's members in index order */
        for (uint32_t i = 0; i < n; i++) {
            if (done[i] || UNIT(i) != pick)
                continue;
            done[i] = 1;
            s->order[emitted++] = i;
            const ir_node *nd = s->nodes[i].view.ir;
            for (uint32_t o = 0; o < nd->n_outputs; o++) {
                int32_t v = nd->outputs[o];
                if (v < 0)
                    continue;
                for (uint32_t j = 0; j < n; j++)
                    if (UNIT(j) != pick) {
                        const ir_node *c = s->nodes[j].view.ir;
                        for (uint32_t k = 0; k < c->n_inputs; k++)
                            if (c->inputs[k] == v)
                                indeg[UNIT(j)]--;
                    }
            }
        }
    }
#undef UNIT
    free(indeg);
    free(done);
    return NULL;
}

/* Ask each provider to group its nodes, check the groups, compile them. */
sy_status *sy_partitions_build(struct sy_session *s)
{
    sy_partitions_free(s);
    for (uint32_t pi = 0; pi < s->env->n_providers; pi++) {
        sy_provider_rec *pr = s->env->providers[pi];
        if (!pr->def.group)
            continue;
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->n_nodes; i++)
            n += !s->nodes[i].folded && s->nodes[i].provider == pr;
        if (!n)
            continue;
        const sy_node **views = malloc(n * sizeof *views);
        uint32_t *idx = malloc(n * sizeof *idx), *group_of = calloc(n, sizeof *group_of);
        if (!views || !idx || !group_of) {
            free(views);
            free(idx);
            free(group_of);
            return sy_error_oom();
        }
        n = 0;
        for (uint32_t i = 0; i < s->n_nodes; i++)
            if (!s->nodes[i].folded && s->nodes[i].provider == pr) {
                views[n] = &s->nodes[i].view;
                idx[n++] = i;
            }
        sy_status *st = pr->def.group(pr->state, views, n, group_of);
        for (uint32_t a = 0; !st && a < n; a++) {
            if (!group_of[a])
                continue;
            int32_t part = -1;
            for (uint32_t q = 0; q < s->n_parts; q++)
                if (s->parts[q].provider == pr && s->parts[q].group_id == group_of[a])
                    part = (int32_t)q;
            if (part < 0) {
                sy_part_rt *grown = realloc(s->parts, (s->n_parts + 1) * sizeof *grown);
                if (!grown) {
                    st = sy_error_oom();
                    break;
                }
                s->parts = grown;
                part = (int32_t)s->n_parts++;
                memset(&s->parts[part], 0, sizeof s->parts[part]);
                s->parts[part].provider = pr;
                s->parts[part].group_id = group_of[a];
                s->parts[part].nodes = malloc(n * sizeof(uint32_t));
                s->parts[part].views = malloc(n * sizeof(sy_node *));
                if (!s->parts[part].nodes || !s->parts[part].views) {
                    st = sy_error_oom();
                    break;
                }
            }
            sy_part_rt *p = &s->parts[part];
            p->views[p->n_nodes] = views[a];
            p->nodes[p->n_nodes++] = idx[a];
            s->nodes[idx[a]].part = part;
        }
        free(views);
        free(idx);
        free(group_of);
        if (st)
            return sy_error_wrap(st, "provider '%s': grouping nodes into partitions", pr->def.name);
    }
    for (uint32_t q = 0; q < s->n_parts; q++)
        SY_TRY(check_convex(s, q));
    return NULL;
}

/* Compile the partitions whose provider can (after kernels are prepared,
 * so a provider may also fall back to them). */
sy_status *sy_compile_cache_load(struct sy_session *s);

sy_status *sy_partitions_compile(struct sy_session *s)
{
    /* inputs as the members read them: after boundary copies were inserted */
    for (uint32_t q = 0; q < s->n_parts; q++)
        SY_TRY(part_io(s, &s->parts[q], q));
    if (s->cache_path)
        SY_TRY(sy_compile_cache_load(s));
    for (uint32_t q = 0; q < s->n_parts; q++) {
        sy_part_rt *p = &s->parts[q];
        if (p->compiled) { /* loaded from the cache */
            p->io = (sy_kernel_io){sizeof p->io, p->n_inputs, p->n_outputs, p->inputs, p->outputs, NULL, 0, &s->rc};
            continue;
        }
        if (!p->provider->def.compile || !p->provider->def.run_compiled)
            continue;
        sy_partition desc = {sizeof desc,         p->views,   p->n_nodes, p->inputs, p->n_inputs,
                             (const sy_tensor *const *)p->outputs, p->n_outputs};
        sy_status *st = p->provider->def.compile(p->provider->state, &desc, &p->compiled);
        if (st)
            return sy_error_wrap(st, "provider '%s': compiling partition %u (first node '%s')",
                                 p->provider->def.name, p->group_id, s->nodes[p->nodes[0]].view.ir->name);
        p->io = (sy_kernel_io){sizeof p->io, p->n_inputs, p->n_outputs, p->inputs, p->outputs, NULL, 0, &s->rc};
    }
    return make_order(s);
}
