/*
 * The run path. A static session runs its compiled step list: precomputed
 * kernel pointers, states and io blocks whose tensors already point into the
 * arena — no allocation, lookup or string work. A session whose shapes depend
 * on runtime values runs node by node (infer, place, prepare, run).
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const sy_kernel_rec *sy_find_kernel(const sy_env *env, const sy_node *node, const char *provider, char *why,
                                    size_t why_len);
sy_status *sy_place_node(struct sy_session *s, sy_node_rt *nr);
sy_status *sy_session_infer_node(struct sy_session *s, sy_node_rt *nr);

sy_status *sy_copy_step_run(void *state, const sy_kernel_io *io);

/* copies of a level run in the time slot before its nodes */
static int32_t step_time(const struct sy_session *s, const sy_step *st)
{
    return 2 * s->node_time[st->node] + (st->is_copy ? 0 : 1);
}

sy_status *sy_compile_steps(struct sy_session *s)
{
    free(s->steps);
    s->steps = calloc(s->n_nodes + s->n_copies + 1, sizeof *s->steps);
    if (!s->steps)
        return sy_error_oom();
    s->n_steps = 0;
    for (uint32_t k = 0; k < s->n_nodes; k++) {
        uint32_t i = s->order ? s->order[k] : k;
        sy_node_rt *nr = &s->nodes[i];
        if (nr->folded)
            continue;
        const sy_part_rt *part = nr->part >= 0 && s->parts[nr->part].compiled ? &s->parts[nr->part] : NULL;
        if (part && part->nodes[0] != i)
            continue; /* the partition's step was emitted at its first member */
        /* boundary copies first consumed here (or anywhere in the
         * partition) run just before */
        for (uint32_t c = 0; c < s->n_copies; c++) {
            sy_copy_rt *cp = &s->copies[c];
            bool mine = cp->consumer == i;
            for (uint32_t m = 0; part && m < part->n_nodes; m++)
                mine |= cp->consumer == part->nodes[m];
            if (!mine)
                continue;
            cp->io_in[0] = &s->values[cp->src].t;
            cp->io_out[0] = &cp->val.t;
            cp->io = (sy_kernel_io){sizeof cp->io, 1, 1, cp->io_in, cp->io_out, NULL, 0, &s->rc};
            s->steps[s->n_steps++] = (sy_step){sy_copy_step_run, cp, i, true, false};
        }
        if (part) {
            s->steps[s->n_steps++] =
                (sy_step){part->provider->def.run_compiled, part->compiled, i, false, true};
            continue;
        }
        s->steps[s->n_steps++] = (sy_step){nr->kernel->def.run, nr->state, i, false, false};
    }
    if (!s->pool)
        return NULL;
    /* group steps by dependency level (stable, so the order stays topological) */
    for (uint32_t a = 1; a < s->n_steps; a++) {
        sy_step key = s->steps[a];
        uint32_t b = a;
        while (b > 0 && step_time(s, &s->steps[b - 1]) > step_time(s, &key)) {
            s->steps[b] = s->steps[b - 1];
            b--;
        }
        s->steps[b] = key;
    }
    free(s->level_start);
    s->level_start = calloc(2 * s->n_times + 2, sizeof *s->level_start);
    if (!s->level_start)
        return sy_error_oom();
    s->n_levels = 0;
    for (uint32_t i = 0; i < s->n_steps; i++)
        if (i == 0 || step_time(s, &s->steps[i]) != step_time(s, &s->steps[i - 1]))
            s->level_start[s->n_levels++] = i;
    s->level_start[s->n_levels] = s->n_steps;
    return NULL;
}

void sy_profile_node(struct sy_session *s, uint32_t node, uint64_t t0, uint64_t t1, int tid);
sy_status *sy_pool_run_level(struct sy_pool *p, struct sy_session *s, uint32_t begin, uint32_t end, uint32_t *failed);

static sy_status *node_failed(struct sy_session *s, uint32_t node, sy_status *st)
{
    const sy_node_rt *nr = &s->nodes[node];
    return sy_error_wrap(st, "%s: node '%s' (%s) on %s", s->model->ir->path, nr->view.ir->name, nr->view.ir->op,
                         nr->provider ? nr->provider->def.name : "?");
}

static sy_status *run_pooled(struct sy_session *s)
{
    for (uint32_t l = 0; l < s->n_levels; l++) {
        uint32_t failed = 0;
        sy_status *st = sy_pool_run_level(s->pool, s, s->level_start[l], s->level_start[l + 1], &failed);
        if (st)
            return node_failed(s, s->steps[failed].node, st);
        if (s->observer)
            for (uint32_t i = s->level_start[l]; i < s->level_start[l + 1]; i++)
                sy_observe_step(s, &s->steps[i]);
    }
    return NULL;
}

static sy_status *run_static(struct sy_session *s)
{
    if (s->pool)
        return run_pooled(s);
    const sy_step *steps = s->steps;
    uint32_t n = s->n_steps;
    if (!s->profiling && !s->observer) {
        sy_kernel_io io;
        for (uint32_t i = 0; i < n; i++) {
            sy_status *st = steps[i].run(steps[i].state, sy_step_io(s, &steps[i], &io));
            if (st)
                return node_failed(s, steps[i].node, st);
        }
        return NULL;
    }
    /* profiled and/or observed */
    sy_kernel_io io;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t t0 = s->profiling ? sy_now_ns() : 0;
        sy_status *st = steps[i].run(steps[i].state, sy_step_io(s, &steps[i], &io));
        if (s->profiling)
            sy_profile_node(s, steps[i].node, t0, sy_now_ns(), 0);
        if (st)
            return node_failed(s, steps[i].node, st);
        if (s->observer)
            sy_observe_step(s, &steps[i]);
    }
    return NULL;
}

/* Dynamic mode: everything per node, with the actual values in hand. */
static sy_status *run_dynamic(struct sy_session *s)
{
    char label[256];
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        if (nr->folded)
            continue;
        const ir_node *n = nr->view.ir;
        snprintf(label, sizeof label, "%s: node '%s' (%s)", s->model->ir->path, n->name, n->op);
        /* the core's own ops, and Identity of a sequence or optional; any
         * other op is a plugin's, and plugins take tensors only */
        bool kinds = false;
        for (uint32_t k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0 && s->values[n->inputs[k]].kind != SY_RT_TENSOR) {
                kinds = true;
                if (!nr->builtin && strcmp(n->op, "Identity"))
                    return sy_error(SY_ERR_TYPE, "%s: input %u '%s' is a %s; %s takes tensors", label, k,
                                    s->g->values[n->inputs[k]].name, sy_value_kind_name(&s->values[n->inputs[k]]),
                                    n->op);
            }
        if (nr->builtin || kinds) {
            uint64_t t0 = s->profiling ? sy_now_ns() : 0;
            sy_status *st = sy_builtin_run(s, nr);
            if (s->profiling)
                sy_profile_node(s, i, t0, sy_now_ns(), 0);
            if (st)
                return sy_error_wrap(st, "%s", label);
            if (s->observer)
                sy_observe_node(s, i);
            continue;
        }
        sy_status *st = sy_session_infer_node(s, nr);
        if (st)
            return sy_error_wrap(st, "%s", label);
        for (uint32_t k = 0; k < n->n_outputs; k++) {
            if (n->outputs[k] < 0)
                continue;
            sy_value_rt *v = &s->values[n->outputs[k]];
            if (!v->owned || v->owned_cap < v->t.nbytes) {
                sy_aligned_free(v->owned);
                v->owned = sy_aligned_alloc(v->t.nbytes ? v->t.nbytes : 1, 64);
                v->owned_cap = v->owned ? v->t.nbytes : 0;
                if (!v->owned)
                    return sy_error_oom();
            }
            v->t.data = v->owned;
        }
        if (nr->prepared && nr->kernel->def.release)
            nr->kernel->def.release(nr->state);
        nr->prepared = false;
        nr->state = NULL;
        free(nr->reason_text);
        nr->reason_text = NULL;
        nr->provider = NULL;
        SY_TRY(sy_place_node(s, nr));
        nr->view.scratch = 0;
        sy_node_calling(&nr->view, nr->kernel->owner);
        if (nr->kernel->def.prepare) {
            st = nr->kernel->def.prepare(&nr->view, &nr->state);
            if (st)
                return sy_error_wrap(st, "%s: prepare", label);
        }
        nr->prepared = true;
        /* the kernel reads the node's own pointers (view.in, view.out) */
        sy_kernel_io io = {sizeof io, n->n_inputs, n->n_outputs, (const sy_tensor *const *)nr->view.in,
                           nr->view.out, NULL, 0, &s->rc};
        void *scratch = NULL;
        if (nr->view.scratch) {
            scratch = sy_aligned_alloc(nr->view.scratch, 64);
            if (!scratch)
                return sy_error_oom();
            io.scratch = scratch;
            io.scratch_bytes = nr->view.scratch;
        }
        uint64_t t0 = s->profiling ? sy_now_ns() : 0;
        st = nr->kernel->def.run(nr->state, &io);
        if (s->profiling)
            sy_profile_node(s, i, t0, sy_now_ns(), 0);
        sy_aligned_free(scratch);
        if (st)
            return sy_error_wrap(st, "%s on %s", label, nr->provider->def.name);
        if (s->observer)
            sy_observe_node(s, i);
    }
    return NULL;
}

/* Bounded outputs (ABI 1.6): each run starts from the planned bound ... */
static void bounds_reset(struct sy_session *s)
{
    for (uint32_t k = 0; k < s->n_bounds; k++) {
        sy_tensor *t = &s->values[s->bounds[k].value].t;
        t->rank = s->bounds[k].rank;
        memcpy(t->dims, s->bounds[k].dims, sizeof t->dims);
        t->nbytes = s->bounds[k].nbytes;
    }
}

/* ... and its kernel must have left dims within it and nbytes that match */
static sy_status *bounds_check(struct sy_session *s)
{
    for (uint32_t k = 0; k < s->n_bounds; k++) {
        const sy_bound *b = &s->bounds[k];
        const sy_value_rt *v = &s->values[b->value];
        const sy_tensor *t = &v->t;
        const char *who = v->producer >= 0 ? s->nodes[v->producer].view.ir->name : "?";
        bool ok = t->rank == b->rank;
        int64_t numel = 1;
        for (int32_t d = 0; ok && d < t->rank; d++) {
            ok = t->dims[d] >= 0 && t->dims[d] <= b->dims[d];
            numel *= ok ? t->dims[d] : 1; /* at most the bound's count: no overflow */
        }
        size_t bytes = 0;
        if (!ok || !sy_dtype_bytes(t->dtype, numel, &bytes) || bytes != t->nbytes)
            return sy_error(SY_ERR_INTERNAL, "%s: node '%s' left its bounded output '%s' with a shape or byte "
                            "count outside the bound it was planned at (%zu bytes)", s->model->ir->path, who,
                            s->g->values[b->value].name, b->nbytes);
    }
    return NULL;
}

sy_status *sy_session_execute(struct sy_session *s)
{
    sy_strheap_reset(&s->str_run); /* the previous run's output strings end here */
    if (s->dynamic)
        return run_dynamic(s);
    bounds_reset(s);
    SY_TRY(run_static(s));
    return bounds_check(s);
}
