/*
 * Fused chains: the cpu provider's graph optimizations, as the provider's
 * group and compile hooks (ABI 1.1 fused partitions, so `switchyard explain`
 * lists them as partitions of cpu).
 *
 * A chain is a path of nodes the provider took where each member reads the
 * previous member's output as its input 0 and only constants otherwise:
 * a Conv, then any of BatchNormalization (folded into the Conv's weights and
 * bias: [provider.cpu] fuse_bn), Relu/Clip (the Conv's output clamp:
 * fuse_activation) and further Convs and MaxPools (nhwc_chains). Such a path is convex,
 * so the core accepts it as one partition. Compiled, it runs in NHWC fp32
 * between two buffers it owns: the input is moved to NHWC once at the start
 * and every tensor the graph reads outside the chain is moved back to NCHW
 * (rounded to fp16 for fp16 storage) right after the step that makes it.
 * A BatchNormalization or activation whose input is also read outside the
 * chain cannot be folded away; it runs as a step of its own in NHWC.
 */
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

enum { STEP_CONV, STEP_CLAMP, STEP_AFFINE, STEP_POOL };

typedef struct chain_step {
    int kind;
    xnn_operator_t op;           /* STEP_CONV, STEP_POOL */
    float lo, hi;                /* STEP_CLAMP */
    float *a, *b;                /* STEP_AFFINE: per channel */
    int64_t c, pixels;           /* output channels, N * H * W */
    float *out;                  /* the buffer the step leaves its result in */
    int32_t ext;                 /* index into the partition outputs, -1: none */
    pthreadpool_t pool;          /* the provider's pool, or NULL for small steps */
} chain_step;

typedef struct chain {
    pthreadpool_t pool;
    cpu_isa isa;
    bool f16;
    int32_t in_index;
    int64_t n, c, hw;     /* the chain's input */
    float *buf[2];
    chain_step *steps;
    uint32_t n_steps;
} chain;

static bool same_tensor(const sy_tensor *a, const sy_tensor *b)
{
    return a && b && (a == b || (a->name && b->name && !strcmp(a->name, b->name)));
}

static bool is_op(const sy_node *n, const char *op)
{
    const char *d = H->node_domain(n);
    return (!d[0] || !strcmp(d, "ai.onnx")) && !strcmp(H->node_op(n), op);
}

/* ---- group ------------------------------------------------------------------ */

static bool conv_member(const sy_node *n)
{
    const sy_tensor *x = H->node_input(n, 0);
    return is_op(n, "Conv") && x && x->rank == 4 && cpu_conv_accepts(n, NULL, 0);
}

/* may `n` follow `tail` (a Conv when after_conv) in a chain? */
static bool can_follow(const cpu_provider *p, const sy_node *n, bool after_conv)
{
    float lo, hi;
    if (is_op(n, "Relu") || is_op(n, "Clip"))
        return cpu_activation_bounds(n, &lo, &hi) && (p->fuse_activation || p->nhwc_chains);
    if (is_op(n, "BatchNormalization")) {
        const sy_tensor *x = H->node_input(n, 0);
        if (!p->fuse_bn || !after_conv || H->node_num_outputs(n) != 1 || !x)
            return false;
        for (uint32_t i = 1; i < 5; i++) {
            const sy_tensor *t = H->node_input(n, i);
            if (!t || !t->data)
                return false;
        }
        return true;
    }
    if (is_op(n, "MaxPool")) {
        int64_t k[2] = {1, 1}; /* XNNPACK has no 1x1 pooling */
        return p->nhwc_chains && cpu_maxpool_accepts(n, NULL, 0) &&
               sy_attr_ints_copy(H, n, "kernel_shape", k, 3) == 2 && k[0] * k[1] > 1;
    }
    return p->nhwc_chains && conv_member(n);
}

sy_status *cpu_chain_group(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    const cpu_provider *p = state;
    uint32_t gid = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (group_of[i] || !conv_member(nodes[i]))
            continue;
        uint32_t members[1024], len = 1;
        members[0] = i;
        bool after_conv = true;
        for (uint32_t tail = i; len < 1024;) {
            const sy_tensor *out = H->node_output(nodes[tail], 0);
            uint32_t next = n;
            for (uint32_t j = tail + 1; j < n && next == n; j++)
                if (!group_of[j] && same_tensor(H->node_input(nodes[j], 0), out) &&
                    can_follow(p, nodes[j], after_conv))
                    next = j;
            if (next == n)
                break;
            after_conv = is_op(nodes[next], "Conv") || (after_conv && is_op(nodes[next], "BatchNormalization"));
            members[len++] = next;
            tail = next;
        }
        if (len < 2)
            continue;
        gid++;
        for (uint32_t k = 0; k < len; k++)
            group_of[members[k]] = gid;
    }
    return NULL;
}

/* ---- compile ---------------------------------------------------------------- */

static int32_t find_output(const sy_partition *p, const sy_tensor *t)
{
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (same_tensor(p->outputs[i], t))
            return (int32_t)i;
    return -1;
}

void cpu_chain_release(void *compiled)
{
    chain *c = compiled;
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n_steps; i++) {
        if (c->steps[i].op)
            xnn_delete_operator(c->steps[i].op);
        free(c->steps[i].a);
    }
    free(c->steps);
    H->free(c->buf[0]);
    H->free(c->buf[1]);
    free(c);
}

/* a Conv waiting for what may still fold into it */
typedef struct pending {
    bool active;
    cpu_conv_geom g;
    float *w, *b, lo, hi;
    const sy_tensor *out;
} pending;

static sy_status *flush(chain *c, pending *pd, const sy_partition *p, int *cur)
{
    if (!pd->active)
        return NULL;
    chain_step *st = &c->steps[c->n_steps];
    memset(st, 0, sizeof *st);
    st->kind = STEP_CONV;
    st->c = pd->g.m;
    st->pixels = pd->g.n * pd->g.oh * pd->g.ow;
    sy_status *s = cpu_conv_create(&pd->g, pd->w, pd->b, pd->lo, pd->hi, &st->op);
    free(pd->w);
    free(pd->b);
    pd->active = false;
    if (s)
        return s;
    c->n_steps++;
    st->out = c->buf[!*cur];
    st->pool = cpu_pool_for(c->pool, (double)st->pixels * (double)(pd->g.m * (pd->g.c / pd->g.group) * pd->g.kh *
                                                                    pd->g.kw));
    enum xnn_status xs = xnn_setup_convolution2d_nhwc_f32(st->op, (size_t)pd->g.n, (size_t)pd->g.ih,
                                                          (size_t)pd->g.iw, c->buf[*cur], st->out, st->pool);
    if (xs != xnn_status_success)
        return ERR(SY_ERR_RUNTIME, "XNNPACK could not set up the convolution (status %d)", (int)xs);
    *cur = !*cur;
    st->ext = find_output(p, pd->out);
    return NULL;
}

sy_status *cpu_chain_compile(void *state, const sy_partition *p, void **compiled)
{
    const cpu_provider *prov = state;
    const sy_tensor *x = H->node_input(p->nodes[0], 0);
    chain *c = calloc(1, sizeof *c);
    if (!c || !x || x->rank != 4)
        return free(c), ERR(c ? SY_ERR_INTERNAL : SY_ERR_OUT_OF_MEMORY, "cpu chain: no 4-D input");
    c->pool = prov->pool;
    c->isa = (cpu_isa)prov->isa;
    c->f16 = x->dtype == SY_DT_FLOAT16;
    c->n = x->dims[0];
    c->c = x->dims[1];
    c->hw = x->dims[2] * x->dims[3];
    c->in_index = -1;
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (same_tensor(p->inputs[i], x))
            c->in_index = (int32_t)i;
    /* the largest tensor along the chain sizes both buffers */
    size_t most = (size_t)(c->n * c->c * c->hw);
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        const sy_tensor *o = H->node_output(p->nodes[k], 0);
        size_t e = 1;
        for (int32_t d = 0; o && d < o->rank; d++)
            e *= (size_t)o->dims[d];
        most = e > most ? e : most;
    }
    c->steps = calloc(2 * (size_t)p->n_nodes, sizeof *c->steps);
    c->buf[0] = H->alloc(most * sizeof(float), 64);
    c->buf[1] = H->alloc(most * sizeof(float), 64);
    if (c->in_index < 0 || !c->steps || !c->buf[0] || !c->buf[1]) {
        cpu_chain_release(c);
        return ERR(c->in_index < 0 ? SY_ERR_INTERNAL : SY_ERR_OUT_OF_MEMORY,
                   "cpu chain: %s", c->in_index < 0 ? "its input is not a partition input" : "out of memory");
    }
    pending pd = {0};
    int cur = 0;
    sy_status *st = NULL;
    for (uint32_t k = 0; k < p->n_nodes && !st; k++) {
        const sy_node *n = p->nodes[k];
        const sy_tensor *in = H->node_input(n, 0), *out = H->node_output(n, 0);
        bool foldable = pd.active && same_tensor(in, pd.out) && find_output(p, pd.out) < 0;
        float lo, hi;
        if (is_op(n, "Conv")) {
            st = flush(c, &pd, p, &cur);
            if (!st)
                st = cpu_conv_geometry(n, in, H->node_input(n, 1), &pd.g);
            if (!st)
                st = cpu_conv_weights(n, &pd.g, &pd.w, &pd.b);
            if (!st) {
                pd.active = true;
                pd.lo = -INFINITY;
                pd.hi = INFINITY;
                pd.out = out;
            }
            continue;
        }
        if (is_op(n, "BatchNormalization") && foldable && isinf(pd.lo) && isinf(pd.hi)) {
            float *a = malloc(2 * (size_t)pd.g.m * sizeof(float) + 1);
            if (!a) {
                st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            st = cpu_bn_coefficients(n, pd.g.m, a, a + pd.g.m);
            size_t per = (size_t)((pd.g.c / pd.g.group) * pd.g.kh * pd.g.kw);
            for (int64_t m = 0; !st && m < pd.g.m; m++) { /* a * (W x + b) + b' */
                for (size_t i = 0; i < per; i++)
                    pd.w[(size_t)m * per + i] *= a[m];
                pd.b[m] = a[m] * pd.b[m] + a[pd.g.m + m];
            }
            free(a);
            pd.out = out;
            continue;
        }
        if (cpu_activation_bounds(n, &lo, &hi) && foldable && prov->fuse_activation) {
            float nlo = lo > pd.lo ? lo : pd.lo, nhi = hi < pd.hi ? hi : pd.hi;
            if (nlo <= nhi) {
                pd.lo = nlo;
                pd.hi = nhi;
                pd.out = out;
                continue;
            }
        }
        /* a step of its own, in place on the current buffer */
        st = flush(c, &pd, p, &cur);
        if (st)
            break;
        chain_step *s = &c->steps[c->n_steps];
        memset(s, 0, sizeof *s);
        s->c = out->dims[1];
        s->pixels = out->dims[0] * out->dims[2] * out->dims[3];
        s->out = c->buf[cur];
        s->pool = cpu_pool_for(c->pool, (double)s->c * (double)s->pixels);
        if (is_op(n, "MaxPool")) {
            cpu_pool_geom pg;
            st = cpu_maxpool_geometry(n, &pg);
            if (st)
                break;
            s->kind = STEP_POOL;
            s->out = c->buf[!cur];
            s->pool = cpu_pool_for(c->pool, (double)s->c * (double)s->pixels * (double)(pg.kh * pg.kw));
            enum xnn_status xs = xnn_create_max_pooling2d_nhwc_f32(
                (uint32_t)pg.pt, (uint32_t)pg.pr, (uint32_t)pg.pb, (uint32_t)pg.pl, (uint32_t)pg.kh, (uint32_t)pg.kw,
                (uint32_t)pg.sh, (uint32_t)pg.sw, (uint32_t)pg.dh, (uint32_t)pg.dw, (size_t)pg.c, (size_t)pg.c,
                (size_t)pg.c, -INFINITY, INFINITY, 0, &s->op);
            if (xs == xnn_status_success) {
                c->n_steps++; /* released with the chain from here on */
                xs = xnn_setup_max_pooling2d_nhwc_f32(s->op, (size_t)pg.n, (size_t)pg.ih, (size_t)pg.iw, c->buf[cur],
                                                      s->out, s->pool);
                c->n_steps--;
            }
            if (xs != xnn_status_success) {
                st = ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the max pooling (status %d)", (int)xs);
                if (s->op) {
                    xnn_delete_operator(s->op);
                    s->op = NULL;
                }
                break;
            }
            cur = !cur;
        } else if (cpu_activation_bounds(n, &lo, &hi)) {
            s->kind = STEP_CLAMP;
            s->lo = lo;
            s->hi = hi;
        } else if (is_op(n, "BatchNormalization")) {
            s->kind = STEP_AFFINE;
            s->a = malloc(2 * (size_t)s->c * sizeof(float) + 1);
            if (!s->a) {
                st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            s->b = s->a + s->c;
            st = cpu_bn_coefficients(n, s->c, s->a, s->b);
            if (st) {
                free(s->a);
                s->a = NULL;
            }
        } else {
            st = ERR(SY_ERR_INTERNAL, "cpu chain: node '%s' (%s) cannot be a chain member", H->node_name(n),
                     H->node_op(n));
        }
        s->ext = find_output(p, out);
        if (!st)
            c->n_steps++;
    }
    if (!st)
        st = flush(c, &pd, p, &cur);
    if (st) {
        free(pd.w);
        free(pd.b);
        cpu_chain_release(c);
        return st;
    }
    *compiled = c;
    return NULL;
}

/* ---- run -------------------------------------------------------------------- */

typedef struct rows_job {
    float *x;
    const chain_step *s;
} rows_job;

static void rows_task(void *ctx, size_t start, size_t count)
{
    const rows_job *j = ctx;
    const chain_step *s = j->s;
    for (size_t r = start; r < start + count; r++) {
        float *row = j->x + r * (size_t)s->c;
        if (s->kind == STEP_CLAMP) {
            for (int64_t ch = 0; ch < s->c; ch++) { /* Relu keeps NaN: x < lo is false for it */
                float v = row[ch] < s->lo ? s->lo : row[ch];
                row[ch] = v > s->hi ? s->hi : v;
            }
        } else {
            for (int64_t ch = 0; ch < s->c; ch++)
                row[ch] = s->a[ch] * row[ch] + s->b[ch];
        }
    }
}

sy_status *cpu_chain_run(void *compiled, const sy_kernel_io *io)
{
    const chain *c = compiled;
    const sy_tensor *x = io->inputs[c->in_index];
    cpu_layout_move(c->pool, c->isa, c->f16 ? CPU_F16_TO_NHWC_F32 : CPU_TO_NHWC_F32, x->data, c->buf[0], c->n, c->c,
                    c->hw);
    for (uint32_t i = 0; i < c->n_steps; i++) {
        const chain_step *s = &c->steps[i];
        if (s->kind == STEP_CONV || s->kind == STEP_POOL) {
            enum xnn_status xs = xnn_run_operator(s->op, s->pool);
            if (xs != xnn_status_success)
                return H->status_new(SY_ERR_RUNTIME, "XNNPACK %s failed (status %d)",
                                     s->kind == STEP_CONV ? "convolution" : "max pooling", (int)xs);
        } else {
            rows_job j = {s->out, s};
            pthreadpool_parallelize_1d_tile_1d(s->pool, rows_task, &j, (size_t)s->pixels, 256, 0);
        }
        if (s->ext >= 0) {
            int64_t n = c->n, hw = s->pixels / c->n;
            cpu_layout_move(c->pool, c->isa, c->f16 ? CPU_F32_TO_NCHW_F16 : CPU_TO_NCHW_F32, s->out,
                            io->outputs[s->ext]->data, n, s->c, hw);
        }
    }
    return NULL;
}
