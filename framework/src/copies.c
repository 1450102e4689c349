/*
 * Memory domains and boundary copies. After placement, every activation
 * that crosses from one memory domain into another gets one explicit copy
 * per (tensor, destination domain). The copy uses a provider's pairwise
 * copy() when the destination or source provider says can_copy, else it
 * bounces through host memory and is counted. Weights are never copied:
 * providers read them where the model maps them.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Domain index of a name, adding it; domain 0 is always "host". */
static uint32_t domain_index(struct sy_session *s, const sy_memory_domain_def *d)
{
    for (uint32_t i = 0; i < s->n_domains; i++)
        if (!strcmp(s->domains[i].name, d->name)) {
            if (d->alignment > s->domains[i].alignment)
                s->domains[i].alignment = d->alignment;
            return i;
        }
    sy_domain_rt *dr = &s->domains[s->n_domains];
    memset(dr, 0, sizeof *dr);
    dr->name = d->name;
    dr->alignment = d->alignment < 64 ? 64 : d->alignment;
    dr->capacity = d->capacity;
    return s->n_domains++;
}

sy_status *sy_domains_init(struct sy_session *s)
{
    free(s->domains);
    s->domains = calloc(s->env->n_providers + 1, sizeof *s->domains);
    if (!s->domains)
        return sy_error_oom();
    s->n_domains = 1;
    s->domains[0] = (sy_domain_rt){.name = "host", .alignment = 64};
    return NULL;
}

static uint32_t provider_domain(struct sy_session *s, const sy_provider_rec *p)
{
    return p ? domain_index(s, &p->domain) : 0;
}

static uint32_t value_domain(struct sy_session *s, int32_t v)
{
    const sy_value_rt *vr = &s->values[v];
    if (vr->is_const || vr->is_input || vr->producer < 0)
        return 0;
    return provider_domain(s, s->nodes[vr->producer].provider);
}

sy_status *sy_insert_copies(struct sy_session *s)
{
    s->n_copies = 0;
    for (uint32_t v = 0; v < s->n_values; v++)
        s->values[v].domain = value_domain(s, (int32_t)v);
    /* the table holds at most one copy per node input that crosses domains:
     * counted first and allocated once per plan (nodes point into it, so it
     * never moves while the plan stands); a table for every node input was
     * 312 bytes a node input reserved for a graph that needs none */
    uint32_t cap = 0;
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        const sy_node_rt *nr = &s->nodes[i];
        if (nr->folded)
            continue;
        uint32_t dst = provider_domain(s, nr->provider);
        for (uint32_t k = 0; k < nr->view.ir->n_inputs; k++) {
            int32_t v = nr->view.ir->inputs[k];
            cap += v >= 0 && !s->values[v].is_const && s->values[v].domain != dst;
        }
    }
    free(s->copies);
    s->copies = NULL;
    s->cap_copies = 0;
    if (cap) {
        if (!(s->copies = calloc(cap, sizeof *s->copies)))
            return sy_error_oom();
        s->cap_copies = cap;
    }
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        if (nr->folded)
            continue;
        uint32_t dst = provider_domain(s, nr->provider);
        const ir_node *n = nr->view.ir;
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            if (v < 0 || s->values[v].is_const || s->values[v].domain == dst)
                continue;
            sy_copy_rt *c = NULL;
            for (uint32_t j = 0; j < s->n_copies; j++)
                if (s->copies[j].src == v && s->copies[j].dst_domain == dst)
                    c = &s->copies[j];
            if (!c) {
                if (s->n_copies == s->cap_copies)
                    return sy_error(SY_ERR_INTERNAL, "copy table full");
                c = &s->copies[s->n_copies++];
                memset(c, 0, sizeof *c);
                c->s = s;
                c->src = v;
                c->consumer = i;
                c->dst_domain = dst;
                c->val = s->values[v];
                c->val.domain = dst;
                c->val.owned = NULL;
                c->val.owned_cap = 0;
                c->val.is_input = c->val.is_output = false;
                c->val.producer = -1;
                c->val.alias_of = -1;
                /* who copies: the destination's provider, else the source's */
                sy_provider_rec *src_p = s->values[v].producer >= 0 ? s->nodes[s->values[v].producer].provider : NULL;
                const char *src_name = s->domains[s->values[v].domain].name, *dst_name = s->domains[dst].name;
                if (nr->provider->def.can_copy && nr->provider->def.copy &&
                    nr->provider->def.can_copy(nr->provider->state, src_name, dst_name))
                    c->via = nr->provider;
                else if (src_p && src_p->def.can_copy && src_p->def.copy &&
                         src_p->def.can_copy(src_p->state, src_name, dst_name))
                    c->via = src_p;
            }
            nr->view.in[k] = &c->val.t;
        }
    }
    return NULL;
}

/* The run function of a copy step. */
sy_status *sy_copy_step_run(void *state, const sy_kernel_io *io)
{
    sy_copy_rt *c = state;
    const sy_tensor *src = io->inputs[0];
    sy_tensor *dst = io->outputs[0];
    if (c->via)
        return c->via->def.copy(c->via->state, src, dst);
    /* host bounce: every domain is host-visible in this build, so the bounce
     * is one memcpy; it is counted so explain/bench show the fallback */
    if (src->nbytes)
        memcpy(dst->data, src->data, src->nbytes);
    __atomic_add_fetch(&c->s->bounce_copies, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->s->bounce_bytes, src->nbytes, __ATOMIC_RELAXED);
    return NULL;
}
