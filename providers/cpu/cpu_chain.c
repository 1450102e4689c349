/*
 * Fused NHWC regions: the cpu provider's graph optimizations, as the
 * provider's group and compile hooks (ABI 1.1 fused partitions, so
 * `switchyard explain` lists them as partitions of cpu).
 *
 * A region is a run of nodes the provider took that are consecutive in the
 * graph's topological order (so it is convex) and whose non-constant inputs
 * are either the region's one input (input 0 of its first node, a Conv) or
 * outputs of earlier members: Convs, MaxPools, Concats along
 * the channels, BatchNormalizations, Relu/Clip, Dropouts (inference: the
 * identity) and GlobalAveragePools. With nhwc_chains off a region is only a Conv and the
 * BatchNormalization/activations that follow it in a path.
 *
 * Compiled, every tensor of the region lives in NHWC fp32 in buffers the
 * region owns: the input is moved to NHWC once at the start, and every
 * tensor the graph reads outside is moved back to NCHW (rounded to fp16 for
 * fp16 storage) right after the step that completes it. Within:
 *   - a BatchNormalization whose input is a Conv output read by nothing
 *     else is folded into that Conv's weights and bias ([provider.cpu]
 *     fuse_bn), a Relu/Clip into its output clamp (fuse_activation);
 *   - a Concat costs nothing when its inputs are Conv or MaxPool outputs
 *     that only it reads: those write straight into their channel range of
 *     the Concat's buffer (XNNPACK's output pixel stride); other inputs are
 *     copied in;
 *   - a BN or activation that cannot be folded runs as a step of its own,
 *     a Dropout is an alias of its input (its mask, if read, keeps all),
 *     a GlobalAveragePool is XNNPACK's (the region's last step in practice).
 */
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

enum { STEP_CONV, STEP_POOL, STEP_GAP, STEP_CLAMP, STEP_AFFINE, STEP_COPY, STEP_OUT, STEP_MASK };

typedef struct chain_step {
    int kind;
    xnn_operator_t op;           /* STEP_CONV, STEP_POOL, STEP_GAP */
    float lo, hi;                /* STEP_CLAMP */
    float *a, *b;                /* STEP_AFFINE: per channel */
    const float *src;            /* CLAMP, AFFINE, COPY, OUT */
    float *dst;                  /* CLAMP, AFFINE, COPY */
    int64_t c, pixels;           /* channels, N * H * W */
    int64_t src_ld, dst_ld;      /* pixel strides (floats) */
    int32_t ext;                 /* STEP_OUT, STEP_MASK: index into the partition outputs */
    pthreadpool_t pool;          /* the provider's pool, or NULL for small steps */
} chain_step;

typedef struct chain {
    pthreadpool_t pool;
    cpu_isa isa;
    bool f16;
    int32_t in_index;
    int64_t n, c, hw; /* the region's input */
    float *in_buf;
    float **bufs;
    uint32_t n_bufs;
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

static bool is_const(const sy_tensor *t) { return !t || t->data != NULL; }

/* ---- group ------------------------------------------------------------------ */

static bool conv_member(const sy_node *n)
{
    const sy_tensor *x = H->node_input(n, 0);
    return is_op(n, "Conv") && x && x->rank == 4 && cpu_conv_accepts(n, NULL, 0);
}

static bool pool_member(const sy_node *n)
{
    int64_t k[2] = {1, 1}; /* XNNPACK has no 1x1 pooling */
    return is_op(n, "MaxPool") && cpu_maxpool_accepts(n, NULL, 0) &&
           sy_attr_ints_copy(H, n, "kernel_shape", k, 3) == 2 && k[0] * k[1] > 1;
}

static bool bn_member(const sy_node *n)
{
    if (!is_op(n, "BatchNormalization") || H->node_num_outputs(n) != 1 || !H->node_input(n, 0))
        return false;
    for (uint32_t i = 1; i < 5; i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (!t || !t->data)
            return false;
    }
    return true;
}

/* Concat of 4-D tensors along the channels */
static bool concat_member(const sy_node *n)
{
    const sy_tensor *y = H->node_output(n, 0);
    if (!is_op(n, "Concat") || !y || y->rank != 4)
        return false;
    int64_t axis = sy_attr_int_or(H, n, "axis", 0);
    return axis == 1 || axis == -3;
}

/* Dropout at inference: the identity, not in training mode (a mask read
 * read outside keeps every element) */
static bool dropout_member(const sy_node *n)
{
    const sy_tensor *mask = H->node_num_outputs(n) > 1 ? H->node_output(n, 1) : NULL;
    if (!is_op(n, "Dropout") || (mask && !cpu_mask_dtype_ok(mask->dtype)))
        return false;
    const sy_tensor *tm = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    return !tm || (tm->data && tm->dtype == SY_DT_BOOL && !*(const uint8_t *)tm->data);
}

static bool region_op(const cpu_provider *p, const sy_node *n)
{
    float lo, hi;
    if (is_op(n, "Relu") || is_op(n, "Clip"))
        return cpu_activation_bounds(n, &lo, &hi) && (p->fuse_activation || p->nhwc_chains);
    if (is_op(n, "BatchNormalization"))
        return p->fuse_bn && bn_member(n);
    if (!p->nhwc_chains)
        return false;
    return conv_member(n) || pool_member(n) || concat_member(n) || dropout_member(n) || is_op(n, "GlobalAveragePool");
}

typedef struct grow {
    const sy_node *const *nodes;
    uint32_t members[1024], len;
    const sy_tensor *input;
} grow;

static bool is_member_output(const grow *g, const sy_tensor *t)
{
    if (same_tensor(t, g->input))
        return true;
    for (uint32_t k = 0; k < g->len; k++)
        if (same_tensor(H->node_output(g->nodes[g->members[k]], 0), t))
            return true;
    return false;
}

/* every non-constant input of n comes from the region; without nhwc_chains
 * n must also read the last member's output (a path) */
static bool fits(const cpu_provider *p, const grow *g, const sy_node *n)
{
    uint32_t ni = is_op(n, "Concat") ? H->node_num_inputs(n) : 1;
    for (uint32_t i = 0; i < ni; i++)
        if (!is_member_output(g, H->node_input(n, i)))
            return false;
    for (uint32_t i = ni; i < H->node_num_inputs(n); i++)
        if (!is_const(H->node_input(n, i)))
            return false;
    const sy_tensor *x = H->node_input(n, 0);
    if (!x || x->rank != 4 || x->dtype != g->input->dtype)
        return false;
    return p->nhwc_chains || same_tensor(x, H->node_output(g->nodes[g->members[g->len - 1]], 0));
}

sy_status *cpu_chain_group(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    const cpu_provider *p = state;
    uint32_t gid = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* a region starts at a Conv: one that would start at a MaxPool (mnist-8's
         * Pooling66 -> Convolution110) saves one small layout change but hides the
         * Conv's own profiling event inside the partition's */
        if (group_of[i] || !conv_member(nodes[i]))
            continue;
        grow g = {.nodes = nodes, .len = 1, .input = H->node_input(nodes[i], 0)};
        g.members[0] = i;
        if (g.input->dtype != SY_DT_FLOAT32 && g.input->dtype != SY_DT_FLOAT16)
            continue;
        /* consecutive in the topological order: nothing outside lies between */
        for (uint32_t j = i + 1; j < n && g.len < 1024; j++) {
            if (group_of[j] || H->node_position(nodes[j]) != H->node_position(nodes[j - 1]) + 1 ||
                !region_op(p, nodes[j]) || !fits(p, &g, nodes[j]))
                break;
            g.members[g.len++] = j;
        }
        if (g.len < 2)
            continue;
        gid++;
        for (uint32_t k = 0; k < g.len; k++)
            group_of[g.members[k]] = gid;
        i = g.members[g.len - 1];
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
    for (uint32_t i = 0; c->bufs && i < c->n_bufs; i++)
        H->free(c->bufs[i]);
    free(c->bufs);
    free(c->steps);
    free(c);
}

/* One tensor of the region: index 0 is the region's input, k + 1 the output
 * of member k. */
typedef struct rtensor {
    const sy_tensor *t;
    int32_t root;      /* the tensor whose buffer holds this one (itself unless folded/aliased) */
    int32_t readers;   /* steps reading it (after folding) */
    int32_t ext;       /* partition output index, -1: none */
    int32_t into;      /* the Concat member whose buffer it is written into, -1: own buffer */
    int64_t c, pixels;
    float *base;       /* first channel of the first pixel */
    int64_t ld;        /* pixel stride in floats */
} rtensor;

/* per member: what it becomes */
enum { M_STEP, M_FOLDED, M_ALIAS };
typedef struct rmember {
    int role;
    int32_t conv;     /* M_FOLDED: the Conv member it folded into */
    /* Conv members: geometry, weights and clamp collected before the operator is made */
    cpu_conv_geom g;
    float *w, *b, lo, hi;
} rmember;

typedef struct rctx {
    const cpu_provider *prov;
    const sy_partition *p;
    chain *c;
    rtensor *t;
    rmember *m;
    uint32_t n; /* members */
} rctx;

static int32_t tensor_index(const rctx *r, const sy_tensor *t)
{
    for (uint32_t i = 0; i <= r->n; i++)
        if (same_tensor(r->t[i].t, t))
            return (int32_t)i;
    return -1;
}

static sy_status *new_buffer(chain *c, size_t floats, float **out)
{
    float **grown = realloc(c->bufs, (c->n_bufs + 1) * sizeof *grown);
    if (!grown)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    c->bufs = grown;
    float *b = H->alloc(floats * sizeof(float) + 64, 64);
    if (!b)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for a %zu-float region buffer", floats);
    c->bufs[c->n_bufs++] = b;
    *out = b;
    return NULL;
}

static chain_step *add_step(chain *c, int kind)
{
    chain_step *s = &c->steps[c->n_steps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->ext = -1;
    return s;
}

/* pass 1: what folds into which Conv, which tensors alias others */
static sy_status *plan_folds(rctx *r)
{
    for (uint32_t k = 0; k < r->n; k++) {
        const sy_node *nd = r->p->nodes[k];
        rmember *m = &r->m[k];
        rtensor *out = &r->t[k + 1];
        int32_t in = tensor_index(r, H->node_input(nd, 0));
        if (in < 0)
            return ERR(SY_ERR_INTERNAL, "cpu region: node '%s' reads a tensor from outside", H->node_name(nd));
        out->root = k + 1;
        m->role = M_STEP;
        if (is_op(nd, "Conv")) {
            sy_status *st = cpu_conv_geometry(nd, H->node_input(nd, 0), H->node_input(nd, 1), &m->g);
            if (!st)
                st = cpu_conv_weights(nd, &m->g, &m->w, &m->b);
            if (st)
                return st;
            m->lo = -INFINITY;
            m->hi = INFINITY;
            continue;
        }
        if (is_op(nd, "Dropout")) {
            m->role = M_ALIAS;
            out->root = r->t[in].root;
            continue;
        }
        /* a BN or activation reading a Conv's result that nothing else reads */
        int32_t src = r->t[in].root;
        if (src < 1 || src != in)
            continue;
        int32_t conv = src - 1; /* the Conv that makes src: src's member, or the Conv it folded into */
        if (r->m[conv].role == M_FOLDED)
            conv = r->m[conv].conv;
        if (r->m[conv].role != M_STEP || !is_op(r->p->nodes[conv], "Conv"))
            continue;
        /* nothing else may see the value before this member: no other reader
         * (folded members read inside their Conv) and no graph output */
        bool foldable = true;
        for (uint32_t i = 0; i <= r->n && foldable; i++)
            foldable = r->t[i].root != src || r->t[i].ext < 0;
        for (uint32_t q = 0; q < r->n && foldable; q++) {
            const sy_node *o = r->p->nodes[q];
            uint32_t ni = is_op(o, "Concat") ? H->node_num_inputs(o) : 1;
            for (uint32_t i = 0; i < ni && q != k && r->m[q].role != M_FOLDED; i++) {
                int32_t ti = tensor_index(r, H->node_input(o, i));
                if (ti >= 0 && r->t[ti].root == src)
                    foldable = false;
            }
        }
        rmember *cm = &r->m[conv];
        float lo, hi;
        if (foldable && is_op(nd, "BatchNormalization") && r->prov->fuse_bn && isinf(cm->lo) && isinf(cm->hi)) {
            float *a = malloc(2 * (size_t)cm->g.m * sizeof(float) + 1);
            if (!a)
                return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
            sy_status *st = cpu_bn_coefficients(nd, cm->g.m, a, a + cm->g.m);
            size_t per = (size_t)((cm->g.c / cm->g.group) * cm->g.kh * cm->g.kw);
            for (int64_t q = 0; !st && q < cm->g.m; q++) { /* a * (W x + b) + b' */
                for (size_t i = 0; i < per; i++)
                    cm->w[(size_t)q * per + i] *= a[q];
                cm->b[q] = a[q] * cm->b[q] + a[cm->g.m + q];
            }
            free(a);
            if (st)
                return st;
        } else if (foldable && cpu_activation_bounds(nd, &lo, &hi) && r->prov->fuse_activation) {
            float nlo = lo > cm->lo ? lo : cm->lo, nhi = hi < cm->hi ? hi : cm->hi;
            if (nlo > nhi)
                continue;
            cm->lo = nlo;
            cm->hi = nhi;
        } else {
            continue;
        }
        /* the Conv now makes this member's output; the tensors before it are not kept */
        m->role = M_FOLDED;
        m->conv = conv;
        for (uint32_t q = 0; q <= r->n; q++)
            if (r->t[q].root == src)
                r->t[q].root = k + 1;
        out->root = k + 1;
    }
    return NULL;
}

/* Where a member's result is: for a folded Conv, the last member folded
 * into it holds the result tensor. */
static int32_t result_of(const rctx *r, uint32_t k) { return r->t[k + 1].root; }

/* the member whose step writes root tensor i (a folded Conv's step is the Conv's) */
static int32_t writer_of(const rctx *r, int32_t i)
{
    if (i == 0)
        return -1; /* the region's input, moved in before the first step */
    int32_t k = i - 1;
    return r->m[k].role == M_FOLDED ? r->m[k].conv : k;
}

/* Buffers for the root tensors that are not views into a Concat's buffer,
 * reused once their last reader has run (member order is run order): the
 * working set stays small enough for the caches. A tensor written at step
 * k never shares with one still read at k. */
static sy_status *assign_storage(rctx *r)
{
    uint32_t n = r->n + 1;
    int32_t *first = malloc(n * sizeof *first), *last = malloc(n * sizeof *last);
    int32_t *free_after = malloc(n * sizeof *free_after);
    size_t *cap = malloc(n * sizeof *cap);
    float **base = malloc(n * sizeof *base);
    sy_status *st = NULL;
    if (!first || !last || !free_after || !cap || !base)
        st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; !st && i < n; i++) {
        first[i] = writer_of(r, (int32_t)i);
        last[i] = first[i];
    }
    /* a view into a Concat buffer is written by its own producer: the Concat's storage starts there */
    for (uint32_t i = 1; !st && i < n; i++)
        if (r->t[i].root == (int32_t)i && r->t[i].into >= 0) {
            int32_t cs = r->t[r->t[i].into + 1].root;
            if (first[i] < first[cs])
                first[cs] = first[i];
        }
    for (uint32_t k = 0; !st && k < r->n; k++) {
        if (r->m[k].role != M_STEP)
            continue;
        const sy_node *nd = r->p->nodes[k];
        uint32_t ni = is_op(nd, "Concat") ? H->node_num_inputs(nd) : 1;
        for (uint32_t q = 0; q < ni; q++) {
            int32_t root = r->t[tensor_index(r, H->node_input(nd, q))].root;
            if (r->t[root].into >= 0)
                root = r->t[r->t[root].into + 1].root;
            if ((int32_t)k > last[root])
                last[root] = (int32_t)k;
        }
    }
    uint32_t nb = 0;
    for (int32_t step = -1; !st && step < (int32_t)r->n; step++)
        for (uint32_t i = 0; !st && i < n; i++) {
            rtensor *t = &r->t[i];
            if (t->root != (int32_t)i || t->into >= 0 || first[i] != step)
                continue;
            size_t need = (size_t)(t->c * t->pixels);
            int32_t pick = -1;
            for (uint32_t b = 0; b < nb; b++) /* the smallest free buffer that fits */
                if (free_after[b] < step && cap[b] >= need && (pick < 0 || cap[b] < cap[pick]))
                    pick = (int32_t)b;
            if (pick < 0) {
                pick = (int32_t)nb++;
                cap[pick] = need;
                if (i == 0)
                    base[pick] = r->c->in_buf;
                else
                    st = new_buffer(r->c, need, &base[pick]);
            }
            t->base = base[pick];
            t->ld = t->c;
            free_after[pick] = last[i];
        }
    free(first);
    free(last);
    free(free_after);
    free(cap);
    free(base);
    return st;
}

/* pass 2: buffers. Conv/MaxPool results read only by one Concat go into
 * that Concat's buffer; every other root tensor gets its own. */
static sy_status *plan_buffers(rctx *r)
{
    for (uint32_t i = 0; i <= r->n; i++) {
        r->t[i].readers = 0;
        r->t[i].into = -1;
    }
    for (uint32_t k = 0; k < r->n; k++) {
        if (r->m[k].role != M_STEP)
            continue;
        const sy_node *nd = r->p->nodes[k];
        uint32_t ni = is_op(nd, "Concat") ? H->node_num_inputs(nd) : 1;
        for (uint32_t i = 0; i < ni; i++)
            r->t[r->t[tensor_index(r, H->node_input(nd, i))].root].readers++;
    }
    for (uint32_t k = 0; k < r->n; k++) {
        const sy_node *nd = r->p->nodes[k];
        if (r->m[k].role != M_STEP || !is_op(nd, "Concat"))
            continue;
        for (uint32_t i = 0; i < H->node_num_inputs(nd); i++) {
            int32_t src = r->t[tensor_index(r, H->node_input(nd, i))].root;
            if (src < 1 || r->t[src].readers != 1 || r->t[src].into >= 0)
                continue;
            /* the member that writes src: a Conv (possibly with folds) or a MaxPool */
            int32_t w = src - 1;
            if (r->m[w].role == M_FOLDED)
                w = r->m[w].conv;
            const sy_node *wn = r->p->nodes[w];
            if (r->m[w].role == M_STEP && (is_op(wn, "Conv") || is_op(wn, "MaxPool")))
                r->t[src].into = (int32_t)k;
        }
    }
    SY_TRY(assign_storage(r));
    for (uint32_t i = 0; i <= r->n; i++) {
        rtensor *t = &r->t[i];
        if (t->root != (int32_t)i || t->into < 0)
            continue;
        const sy_node *cn = r->p->nodes[t->into];
        const rtensor *ct = &r->t[r->t[t->into + 1].root];
        int64_t off = 0;
        for (uint32_t q = 0; q < H->node_num_inputs(cn); q++) {
            const sy_tensor *in = H->node_input(cn, q);
            if (r->t[tensor_index(r, in)].root == (int32_t)i)
                break;
            off += in->dims[1];
        }
        t->base = ct->base + off;
        t->ld = ct->ld;
    }
    for (uint32_t i = 0; i <= r->n; i++) { /* aliases and folded members share the root's place */
        rtensor *t = &r->t[i];
        t->base = r->t[t->root].base;
        t->ld = r->t[t->root].ld;
    }
    return NULL;
}

/* after the step that completes tensor root, move every tensor it holds
 * that the graph reads outside */
static void add_outputs(rctx *r, int32_t root)
{
    for (uint32_t i = 1; i <= r->n; i++) {
        rtensor *t = &r->t[i];
        if (t->root != root || t->ext < 0)
            continue;
        chain_step *s = add_step(r->c, STEP_OUT);
        s->src = t->base;
        s->src_ld = t->ld;
        s->c = t->c;
        s->pixels = t->pixels;
        s->ext = t->ext;
        s->pool = cpu_pool_for(r->c->pool, (double)t->c * (double)t->pixels);
    }
}

/* Output channels per XNNPACK operator for a Conv. XNNPACK's GEMM walks all
 * output channels for each block of a few pixels, so weights larger than
 * the core's L2 are streamed from memory once per block (squeezenet's
 * 512 -> 1000 1x1 layer ran at a quarter of the rate of the others). Split
 * into operators of at most CONV_CHUNK_BYTES of weights each (a multiple of
 * 16 channels, XNNPACK's widest tile), every output channel is computed
 * exactly as before, so the split changes no bits. */
#define CONV_CHUNK_BYTES (256u << 10)
static int64_t conv_chunk(const cpu_conv_geom *g)
{
    double bytes = (double)g->m * (double)(g->c / g->group * g->kh * g->kw) * sizeof(float);
    if (g->group != 1 || bytes <= CONV_CHUNK_BYTES)
        return g->m;
    int64_t parts = (int64_t)ceil(bytes / CONV_CHUNK_BYTES);
    int64_t per = (g->m + parts - 1) / parts;
    per = (per + 15) / 16 * 16;
    return per < g->m ? per : g->m;
}

static sy_status *make_conv(rctx *r, uint32_t k)
{
    rmember *m = &r->m[k];
    const rtensor *in = &r->t[tensor_index(r, H->node_input(r->p->nodes[k], 0))];
    const rtensor *out = &r->t[result_of(r, k)];
    const cpu_conv_geom *g = &m->g;
    int64_t gic = g->c / g->group, goc = g->m / g->group, chunk = conv_chunk(g);
    size_t per = (size_t)(gic * g->kh * g->kw);
    sy_status *st = NULL;
    for (int64_t m0 = 0; m0 < g->m && !st; m0 += chunk) {
        int64_t mc = g->m - m0 < chunk ? g->m - m0 : chunk;
        bool whole = mc == g->m;
        chain_step *s = add_step(r->c, STEP_CONV);
        enum xnn_status xs = xnn_create_convolution2d_nhwc_f32(
            (uint32_t)g->pt, (uint32_t)g->pr, (uint32_t)g->pb, (uint32_t)g->pl, (uint32_t)g->kh, (uint32_t)g->kw,
            (uint32_t)g->sh, (uint32_t)g->sw, (uint32_t)g->dh, (uint32_t)g->dw, (uint32_t)g->group, (size_t)gic,
            (size_t)(whole ? goc : mc), (size_t)in->ld, (size_t)out->ld, m->w + (size_t)m0 * per, m->b + m0, m->lo,
            m->hi, 0, &s->op);
        if (xs != xnn_status_success) {
            st = ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the convolution (status %d)", (int)xs);
            break;
        }
        s->pool =
            cpu_pool_for(r->c->pool, (double)(g->n * g->oh * g->ow) * (double)(mc / g->group * gic * g->kh * g->kw));
        xs = xnn_setup_convolution2d_nhwc_f32(s->op, (size_t)g->n, (size_t)g->ih, (size_t)g->iw, in->base,
                                              out->base + m0, s->pool);
        if (xs != xnn_status_success)
            st = ERR(SY_ERR_RUNTIME, "XNNPACK could not set up the convolution (status %d)", (int)xs);
    }
    free(m->w);
    free(m->b);
    m->w = m->b = NULL;
    return st;
}

static sy_status *make_pool(rctx *r, uint32_t k)
{
    const sy_node *nd = r->p->nodes[k];
    const rtensor *in = &r->t[tensor_index(r, H->node_input(nd, 0))];
    const rtensor *out = &r->t[result_of(r, k)];
    cpu_pool_geom pg;
    SY_TRY(cpu_maxpool_geometry(nd, &pg));
    chain_step *s = add_step(r->c, STEP_POOL);
    s->pool = cpu_pool_for(r->c->pool, (double)(pg.c * out->pixels) * (double)(pg.kh * pg.kw));
    enum xnn_status xs = xnn_create_max_pooling2d_nhwc_f32(
        (uint32_t)pg.pt, (uint32_t)pg.pr, (uint32_t)pg.pb, (uint32_t)pg.pl, (uint32_t)pg.kh, (uint32_t)pg.kw,
        (uint32_t)pg.sh, (uint32_t)pg.sw, (uint32_t)pg.dh, (uint32_t)pg.dw, (size_t)pg.c, (size_t)in->ld,
        (size_t)out->ld, -INFINITY, INFINITY, 0, &s->op);
    if (xs == xnn_status_success)
        xs = xnn_setup_max_pooling2d_nhwc_f32(s->op, (size_t)pg.n, (size_t)pg.ih, (size_t)pg.iw, in->base, out->base,
                                              s->pool);
    if (xs != xnn_status_success)
        return ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the max pooling (status %d)", (int)xs);
    return NULL;
}

static sy_status *make_gap(rctx *r, uint32_t k)
{
    const sy_tensor *x = H->node_input(r->p->nodes[k], 0);
    const rtensor *in = &r->t[tensor_index(r, x)];
    const rtensor *out = &r->t[result_of(r, k)];
    chain_step *s = add_step(r->c, STEP_GAP);
    s->pool = cpu_pool_for(r->c->pool, (double)in->c * (double)in->pixels);
    enum xnn_status xs = xnn_create_global_average_pooling_nwc_f32((size_t)in->c, (size_t)in->ld, (size_t)out->ld,
                                                                   -INFINITY, INFINITY, 0, &s->op);
    if (xs == xnn_status_success)
        xs = xnn_setup_global_average_pooling_nwc_f32(s->op, (size_t)x->dims[0], (size_t)(x->dims[2] * x->dims[3]),
                                                      in->base, out->base, s->pool);
    if (xs != xnn_status_success)
        return ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the global average pooling (status %d)", (int)xs);
    return NULL;
}

/* a per-pixel step (clamp, affine, copy) from one view to another */
static chain_step *pixel_step(rctx *r, int kind, const rtensor *in, const rtensor *out, int64_t c)
{
    chain_step *s = add_step(r->c, kind);
    s->src = in->base;
    s->src_ld = in->ld;
    s->dst = out->base;
    s->dst_ld = out->ld;
    s->c = c;
    s->pixels = out->pixels;
    s->pool = cpu_pool_for(r->c->pool, (double)c * (double)out->pixels);
    return s;
}

static sy_status *make_steps(rctx *r)
{
    for (uint32_t k = 0; k < r->n; k++) {
        const sy_node *nd = r->p->nodes[k];
        const rmember *m = &r->m[k];
        if (m->role == M_ALIAS && H->node_num_outputs(nd) > 1) { /* a Dropout's mask read outside */
            int32_t e = find_output(r->p, H->node_output(nd, 1));
            if (e >= 0)
                add_step(r->c, STEP_MASK)->ext = e;
        }
        if (m->role == M_FOLDED || m->role == M_ALIAS)
            continue;
        const rtensor *in = &r->t[tensor_index(r, H->node_input(nd, 0))];
        const rtensor *out = &r->t[k + 1];
        float lo, hi;
        if (is_op(nd, "Conv")) {
            SY_TRY(make_conv(r, k));
        } else if (is_op(nd, "MaxPool")) {
            SY_TRY(make_pool(r, k));
        } else if (is_op(nd, "GlobalAveragePool")) {
            SY_TRY(make_gap(r, k));
        } else if (is_op(nd, "Concat")) {
            int64_t off = 0;
            for (uint32_t i = 0; i < H->node_num_inputs(nd); i++) {
                const rtensor *src = &r->t[r->t[tensor_index(r, H->node_input(nd, i))].root];
                int64_t ch = H->node_input(nd, i)->dims[1];
                if (src->into != (int32_t)k) {
                    rtensor view = *out;
                    view.base = out->base + off;
                    pixel_step(r, STEP_COPY, src, &view, ch);
                }
                off += ch;
            }
        } else if (cpu_activation_bounds(nd, &lo, &hi)) {
            chain_step *s = pixel_step(r, STEP_CLAMP, in, out, out->c);
            s->lo = lo;
            s->hi = hi;
        } else if (is_op(nd, "BatchNormalization")) {
            chain_step *s = pixel_step(r, STEP_AFFINE, in, out, out->c);
            s->a = malloc(2 * (size_t)s->c * sizeof(float) + 1);
            if (!s->a)
                return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
            s->b = s->a + s->c;
            SY_TRY(cpu_bn_coefficients(nd, s->c, s->a, s->b));
        } else {
            return ERR(SY_ERR_INTERNAL, "cpu region: node '%s' (%s) cannot be a member", H->node_name(nd),
                       H->node_op(nd));
        }
        add_outputs(r, result_of(r, k));
    }
    return NULL;
}

sy_status *cpu_chain_compile(void *state, const sy_partition *p, void **compiled)
{
    const cpu_provider *prov = state;
    const sy_tensor *x = H->node_input(p->nodes[0], 0);
    chain *c = calloc(1, sizeof *c);
    if (!c || !x || x->rank != 4)
        return free(c), ERR(c ? SY_ERR_INTERNAL : SY_ERR_OUT_OF_MEMORY, "cpu region: no 4-D input");
    c->pool = cpu_node_pool(p->nodes[0]);
    c->isa = (cpu_isa)prov->isa;
    c->f16 = x->dtype == SY_DT_FLOAT16;
    c->n = x->dims[0];
    c->c = x->dims[1];
    c->hw = x->dims[2] * x->dims[3];
    c->in_index = -1;
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (same_tensor(p->inputs[i], x))
            c->in_index = (int32_t)i;
    rctx r = {prov, p, c, calloc(p->n_nodes + 1, sizeof(rtensor)), calloc(p->n_nodes, sizeof(rmember)), p->n_nodes};
    /* a step per member, a copy per Concat input and an output move per tensor at most */
    size_t max_steps = 3 * (size_t)p->n_nodes + 1;
    for (uint32_t k = 0; k < p->n_nodes; k++) {
        cpu_conv_geom g;
        if (is_op(p->nodes[k], "Concat")) {
            max_steps += H->node_num_inputs(p->nodes[k]);
        } else if (is_op(p->nodes[k], "Conv")) {
            sy_status *gs = cpu_conv_geometry(p->nodes[k], H->node_input(p->nodes[k], 0),
                                              H->node_input(p->nodes[k], 1), &g);
            if (gs)
                H->status_free(gs); /* reported again when the member is planned */
            else
                max_steps += (size_t)((g.m + conv_chunk(&g) - 1) / conv_chunk(&g));
        }
    }
    c->steps = calloc(max_steps, sizeof *c->steps);
    sy_status *st = NULL;
    if (c->in_index < 0)
        st = ERR(SY_ERR_INTERNAL, "cpu region: its input is not a partition input");
    else if (!r.t || !r.m || !c->steps || new_buffer(c, (size_t)(c->n * c->c * c->hw), &c->in_buf))
        st = ERR(SY_ERR_OUT_OF_MEMORY, "cpu region: out of memory");
    for (uint32_t i = 0; !st && i <= p->n_nodes; i++) {
        rtensor *t = &r.t[i];
        t->t = i ? H->node_output(p->nodes[i - 1], 0) : x;
        if (!t->t || t->t->rank != 4) {
            st = ERR(SY_ERR_INTERNAL, "cpu region: a member's output is not 4-D");
            break;
        }
        t->root = (int32_t)i;
        t->c = t->t->dims[1];
        t->pixels = t->t->dims[0] * t->t->dims[2] * t->t->dims[3];
        t->ext = i ? find_output(p, t->t) : -1;
    }
    if (!st)
        st = plan_folds(&r);
    if (!st)
        st = plan_buffers(&r);
    if (!st) {
        add_outputs(&r, 0); /* a graph output that is the region's input under another name */
        st = make_steps(&r);
    }
    for (uint32_t k = 0; r.m && k < p->n_nodes; k++) {
        free(r.m[k].w);
        free(r.m[k].b);
    }
    free(r.t);
    free(r.m);
    if (st) {
        cpu_chain_release(c);
        return st;
    }
    *compiled = c;
    return NULL;
}

/* ---- run -------------------------------------------------------------------- */

static void rows_task(void *ctx, size_t start, size_t count)
{
    const chain_step *s = ctx;
    for (size_t px = start; px < start + count; px++) {
        const float *in = s->src + px * (size_t)s->src_ld;
        float *out = s->dst + px * (size_t)s->dst_ld;
        if (s->kind == STEP_CLAMP) {
            for (int64_t ch = 0; ch < s->c; ch++) { /* Relu keeps NaN: x < lo is false for it */
                float v = in[ch] < s->lo ? s->lo : in[ch];
                out[ch] = v > s->hi ? s->hi : v;
            }
        } else if (s->kind == STEP_AFFINE) {
            for (int64_t ch = 0; ch < s->c; ch++)
                out[ch] = s->a[ch] * in[ch] + s->b[ch];
        } else {
            memcpy(out, in, (size_t)s->c * sizeof(float));
        }
    }
}

sy_status *cpu_chain_run(void *compiled, const sy_kernel_io *io)
{
    const chain *c = compiled;
    const sy_tensor *x = io->inputs[c->in_index];
    cpu_layout_move(c->pool, c->isa, c->f16 ? CPU_F16_TO_NHWC_F32 : CPU_TO_NHWC_F32, x->data, c->in_buf, c->n, c->c,
                    c->hw, c->c);
    for (uint32_t i = 0; i < c->n_steps; i++) {
        const chain_step *s = &c->steps[i];
        if (s->kind == STEP_CONV || s->kind == STEP_POOL || s->kind == STEP_GAP) {
            enum xnn_status xs = xnn_run_operator(s->op, s->pool);
            if (xs != xnn_status_success)
                return H->status_new(SY_ERR_RUNTIME, "XNNPACK %s failed (status %d)",
                                     s->kind == STEP_CONV   ? "convolution"
                                     : s->kind == STEP_POOL ? "max pooling"
                                                            : "global average pooling",
                                     (int)xs);
        } else if (s->kind == STEP_MASK) {
            cpu_fill_mask(io->outputs[s->ext]);
        } else if (s->kind == STEP_OUT) {
            int64_t hw = s->pixels / c->n;
            cpu_layout_move(c->pool, c->isa, c->f16 ? CPU_F32_TO_NCHW_F16 : CPU_TO_NCHW_F32, s->src,
                            io->outputs[s->ext]->data, c->n, s->c, hw, s->src_ld);
        } else {
            pthreadpool_parallelize_1d_tile_1d(s->pool, rows_task, (void *)(uintptr_t)s, (size_t)s->pixels, 256, 0);
        }
    }
    return NULL;
}
