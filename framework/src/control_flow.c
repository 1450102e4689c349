/*
 * If, Loop and Scan. Each body is a session of its own (a subgraph session,
 * session.c): planned once at its first run and again only when the shapes
 * bound to it change, so its arena is reused by every iteration. Values
 * carried from one iteration to the next are copied out of the body's arena
 * (the next iteration overwrites it) into two buffers used in turn; scan
 * outputs are written into the node's outputs as they come.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* bytes of one element; 0 for dtypes a slice cannot be cut from */
static size_t elem_bytes(const sy_tensor *t) { return sy_dtype_elem_size(t->dtype); }

static sy_status *body_output(struct sy_session *b, uint32_t k, const sy_value_rt **out)
{
    if (k >= b->g->n_outputs)
        return sy_error(SY_ERR_INVALID_MODEL, "the body has %u outputs; output %u is needed", b->g->n_outputs, k);
    *out = &b->values[b->g->outputs[k]];
    return NULL;
}

/* ---- If ------------------------------------------------------------------ */
sy_status *sy_cf_if(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    const sy_value_rt *c = sy_bi_in(s, nr, 0);
    if (!c)
        return sy_error(SY_ERR_INVALID_MODEL, "If needs its condition input");
    bool cond;
    SY_TRY(sy_bi_scalar_bool(c, "the condition", &cond));
    struct sy_session *b;
    SY_TRY(sy_bi_sub(s, nr, cond ? "then_branch" : "else_branch", &b));
    if (b->g->n_inputs)
        return sy_error(SY_ERR_INVALID_MODEL, "If's %s takes %u inputs; a branch takes none",
                        cond ? "then_branch" : "else_branch", b->g->n_inputs);
    if (b->g->n_outputs != n->n_outputs)
        return sy_error(SY_ERR_INVALID_MODEL, "If has %u outputs, its %s %u", n->n_outputs,
                        cond ? "then_branch" : "else_branch", b->g->n_outputs);
    SY_TRY(sy_session_run_sub(b));
    for (uint32_t o = 0; o < n->n_outputs; o++) {
        sy_value_rt *y = sy_bi_out(s, nr, o);
        if (y)
            SY_TRY(sy_value_assign(s, y, &b->values[b->g->outputs[o]]));
    }
    return NULL;
}

/* ---- scan outputs: one slice per iteration, stacked along an axis -------- */
typedef struct stack {
    sy_value_rt *out;      /* the node's output (NULL: omitted, slices dropped) */
    sy_dtype dtype;
    int32_t rank;          /* of one slice */
    int64_t dims[SY_MAX_RANK];
    int64_t axis;          /* where the iteration axis goes in the output */
    bool reverse;
    int64_t count;         /* slices stored (Loop: grows; Scan: fixed length) */
    int64_t cap;           /* slices the buffer holds */
    size_t slice_bytes;
    bool started;
} stack;

/* Check slice t against the first one, and make room for `want` slices. */
static sy_status *stack_take(struct sy_session *s, stack *st, const sy_value_rt *v, int64_t want, uint32_t k)
{
    if (v->kind != SY_RT_TENSOR)
        return sy_error(SY_ERR_TYPE, "scan output %u is a %s; scan outputs must be tensors", k,
                        sy_value_kind_name(v));
    const sy_tensor *t = &v->t;
    if (!st->started) {
        st->dtype = t->dtype;
        st->rank = t->rank;
        memcpy(st->dims, t->dims, sizeof st->dims);
        if (t->rank + 1 > SY_MAX_RANK)
            return sy_error(SY_ERR_UNSUPPORTED, "scan output %u would have rank %d; at most %d is supported", k,
                            t->rank + 1, SY_MAX_RANK);
        if (st->axis < -(int64_t)(t->rank + 1) || st->axis > t->rank)
            return sy_error(SY_ERR_INVALID_MODEL, "scan output %u: axis %lld is out of range for rank %d", k,
                            (long long)st->axis, t->rank + 1);
        if (st->axis < 0)
            st->axis += t->rank + 1;
        if (!elem_bytes(t))
            return sy_error(SY_ERR_UNSUPPORTED, "scan output %u has dtype %s, which cannot be stacked", k,
                            sy_dtype_name(t->dtype));
        st->slice_bytes = t->nbytes;
        st->started = true;
    } else if (t->dtype != st->dtype || t->rank != st->rank ||
               memcmp(t->dims, st->dims, (size_t)t->rank * sizeof *t->dims)) {
        return sy_error(SY_ERR_SHAPE, "scan output %u changes its shape or dtype between iterations", k);
    }
    if (!st->out || want <= st->cap)
        return NULL;
    sy_value_rt *y = st->out;
    sy_value_clear_seq(y);
    y->t.dtype = st->dtype;
    y->t.rank = st->rank + 1;
    for (int32_t d = 0, e = 0; d < y->t.rank; d++)
        y->t.dims[d] = d == st->axis ? want : st->dims[e++];
    size_t bytes;
    if (!sy_mul_overflow_size(st->slice_bytes, (size_t)want, &bytes))
        return sy_error(SY_ERR_BUDGET, "scan output %u: the size overflows", k);
    y->t.nbytes = bytes;
    SY_TRY(sy_session_check_tensor(s, &y->t, "scan output"));
    if (y->owned_cap < bytes) {
        /* grow by doubling (Loop does not know its trip count ahead) */
        size_t cap = y->owned_cap ? y->owned_cap : st->slice_bytes;
        while (cap < bytes)
            cap = cap > SIZE_MAX / 2 ? bytes : cap * 2;
        if (cap > s->max_tensor_bytes && bytes <= s->max_tensor_bytes)
            cap = bytes;
        void *p = sy_aligned_alloc(cap ? cap : 1, 64);
        if (!p)
            return sy_error_oom();
        if (st->count && y->owned)
            memcpy(p, y->owned, st->slice_bytes * (size_t)st->count);
        sy_aligned_free(y->owned);
        y->owned = p;
        y->owned_cap = cap;
    }
    y->t.data = y->owned;
    st->cap = want;
    return NULL;
}

/* Write a slice at position pos of `len` along the stacking axis. The
 * buffer is laid out for `len` (Scan) or, for Loop (axis 0), contiguously. */
static void stack_put(stack *st, const sy_tensor *t, int64_t pos, int64_t len)
{
    if (!st->out || !st->slice_bytes)
        return;
    uint8_t *dst = st->out->t.data;
    size_t inner = st->slice_bytes;
    int64_t outer = 1;
    for (int64_t d = 0; d < st->axis; d++)
        outer *= st->dims[d];
    inner = outer ? st->slice_bytes / (size_t)outer : 0;
    for (int64_t o = 0; o < outer; o++)
        memcpy(dst + ((size_t)o * (size_t)len + (size_t)pos) * inner, (const uint8_t *)t->data + (size_t)o * inner,
               inner);
}

/* An output of no slices: its slice shape is the body's declaration when it
 * has one (else a single 0 dimension). */
static sy_status *stack_empty(struct sy_session *s, stack *st, const ir_value *decl)
{
    (void)s;
    sy_value_rt *y = st->out;
    if (!y)
        return NULL;
    sy_value_clear_seq(y);
    y->t.dtype = decl->dtype != SY_DT_UNDEFINED ? decl->dtype : SY_DT_FLOAT32;
    bool known = decl->rank >= 0 && decl->rank < SY_MAX_RANK;
    for (int32_t d = 0; known && d < decl->rank; d++)
        known = decl->dims[d] >= 0;
    if (!known) {
        y->t.rank = 1;
        y->t.dims[0] = 0;
    } else {
        int64_t axis = st->axis < 0 ? st->axis + decl->rank + 1 : st->axis;
        if (axis < 0 || axis > decl->rank)
            axis = 0;
        y->t.rank = decl->rank + 1;
        for (int32_t d = 0, e = 0; d < y->t.rank; d++)
            y->t.dims[d] = d == axis ? 0 : decl->dims[e++];
    }
    y->t.nbytes = 0;
    SY_TRY(sy_value_ensure_owned(y, 0));
    y->shape_known = true;
    return NULL;
}

/* ---- loop-carried values ------------------------------------------------- */
typedef struct carry {
    uint32_t n;
    sy_value_rt *buf[2]; /* n each, used in turn */
    const sy_value_rt **cur;
    int which;
} carry;

static sy_status *carry_init(carry *c, uint32_t n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->buf[0] = calloc(n ? n : 1, sizeof(sy_value_rt));
    c->buf[1] = calloc(n ? n : 1, sizeof(sy_value_rt));
    c->cur = calloc(n ? n : 1, sizeof *c->cur);
    return c->buf[0] && c->buf[1] && c->cur ? NULL : sy_error_oom();
}

static void carry_free(carry *c)
{
    for (int b = 0; b < 2; b++) {
        for (uint32_t i = 0; c->buf[b] && i < c->n; i++)
            sy_value_release(&c->buf[b][i]);
        free(c->buf[b]);
    }
    free(c->cur);
}

/* the body's state outputs [first, first + n) become the current values */
static sy_status *carry_step(struct sy_session *s, carry *c, struct sy_session *b, uint32_t first)
{
    int next = c->which ^ 1;
    for (uint32_t j = 0; j < c->n; j++) {
        const sy_value_rt *v = NULL;
        SY_TRY(body_output(b, first + j, &v));
        SY_TRY(sy_value_assign(s, &c->buf[next][j], v));
        c->cur[j] = &c->buf[next][j];
    }
    c->which = next;
    return NULL;
}

/* ---- Loop ------------------------------------------------------------------ */
sy_status *sy_cf_loop(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    if (n->n_inputs < 2)
        return sy_error(SY_ERR_INVALID_MODEL, "Loop takes M and cond (each may be \"\") before its loop-carried "
                        "values; it has %u inputs", n->n_inputs);
    uint32_t N = n->n_inputs - 2;
    struct sy_session *b;
    SY_TRY(sy_bi_sub(s, nr, "body", &b));
    const ir_graph *g = b->g;
    if (g->n_inputs != 2 + N)
        return sy_error(SY_ERR_INVALID_MODEL, "Loop has %u loop-carried values, so its body takes %u inputs "
                        "(iteration, condition, values); it takes %u", N, 2 + N, g->n_inputs);
    if (g->n_outputs < 1 + N)
        return sy_error(SY_ERR_INVALID_MODEL, "Loop's body has %u outputs; it needs the condition and %u values",
                        g->n_outputs, N);
    uint32_t K = g->n_outputs - 1 - N;
    if (n->n_outputs != N + K)
        return sy_error(SY_ERR_INVALID_MODEL, "Loop has %u outputs; its body gives %u values and %u scan outputs",
                        n->n_outputs, N, K);
    int64_t trip = -1;
    bool cond = true;
    const sy_value_rt *mv = sy_bi_in(s, nr, 0), *cv = sy_bi_in(s, nr, 1);
    if (mv)
        SY_TRY(sy_bi_scalar_i64(mv, "the trip count M", &trip));
    if (mv && trip < 0)
        trip = 0;
    if (cv)
        SY_TRY(sy_bi_scalar_bool(cv, "the condition", &cond));
    for (uint32_t j = 0; j < N; j++)
        if (n->inputs[2 + j] < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "Loop's loop-carried input %u is omitted", j);

    carry c;
    stack *st = calloc(K ? K : 1, sizeof *st);
    sy_status *err = carry_init(&c, N);
    if (!err && !st)
        err = sy_error_oom();
    for (uint32_t j = 0; !err && j < N; j++)
        c.cur[j] = sy_bi_in(s, nr, 2 + j);
    for (uint32_t k = 0; !err && k < K; k++) {
        st[k].out = sy_bi_out(s, nr, N + k);
        if (st[k].out)
            st[k].out->t.nbytes = 0;
    }
    int64_t iter = 0;
    uint8_t cond_in = 1;
    sy_value_rt itv = {0}, cdv = {0};
    itv.t = (sy_tensor){.struct_size = sizeof(sy_tensor), .dtype = SY_DT_INT64, .rank = 0, .data = &iter,
                        .nbytes = sizeof iter};
    cdv.t = (sy_tensor){.struct_size = sizeof(sy_tensor), .dtype = SY_DT_BOOL, .rank = 0, .data = &cond_in,
                        .nbytes = 1};
    for (; !err && cond && (trip < 0 || iter < trip); iter++) {
        if ((uint64_t)iter >= s->max_loop_iterations) {
            err = sy_error(SY_ERR_BUDGET, "Loop ran %lld iterations without ending, the limit max_loop_iterations",
                           (long long)iter);
            break;
        }
        cond_in = 1;
        sy_session_bind(b, g->inputs[0], &itv);
        sy_session_bind(b, g->inputs[1], &cdv);
        for (uint32_t j = 0; j < N; j++)
            sy_session_bind(b, g->inputs[2 + j], c.cur[j]);
        err = sy_session_run_sub(b);
        if (err)
            break;
        const sy_value_rt *co = NULL;
        err = body_output(b, 0, &co);
        if (!err)
            err = sy_bi_scalar_bool(co, "the body's condition output", &cond);
        if (!err)
            err = carry_step(s, &c, b, 1);
        for (uint32_t k = 0; !err && k < K; k++) {
            const sy_value_rt *v = &b->values[g->outputs[1 + N + k]];
            if (!(err = stack_take(s, &st[k], v, iter + 1, k)) && st[k].out) {
                /* Loop stacks along axis 0: the slices are contiguous */
                memcpy((uint8_t *)st[k].out->t.data + (size_t)iter * st[k].slice_bytes, v->t.data, st[k].slice_bytes);
                st[k].count = iter + 1;
            }
        }
    }
    if (err)
        err = sy_error_wrap(err, "Loop iteration %lld", (long long)iter);
    for (uint32_t j = 0; !err && j < N; j++) {
        sy_value_rt *y = sy_bi_out(s, nr, j);
        if (y)
            err = sy_value_assign(s, y, c.cur[j]);
    }
    for (uint32_t k = 0; !err && k < K; k++)
        if (!st[k].started)
            err = stack_empty(s, &st[k], &g->values[g->outputs[1 + N + k]]);
    carry_free(&c);
    free(st);
    return err;
}

/* ---- Scan (opset 9 and later) ---------------------------------------------- */
static bool attr_ints(const ir_node *n, const char *name, const int64_t **v, size_t *count)
{
    const ir_attr *a = ir_node_attr(n, name);
    if (!a || a->type != SY_ATTR_INTS)
        return false;
    *v = a->ints;
    *count = a->count;
    return true;
}

sy_status *sy_cf_scan(struct sy_session *s, sy_node_rt *nr)
{
    const ir_node *n = nr->view.ir;
    if (n->opset < 9)
        return sy_error(SY_ERR_UNSUPPORTED, "Scan opset 8 (batched, with sequence_lens) is not supported; "
                        "opset 9 and later are");
    const ir_attr *na = ir_node_attr(n, "num_scan_inputs");
    if (!na || na->type != SY_ATTR_INT || na->i < 1 || na->i > (int64_t)n->n_inputs)
        return sy_error(SY_ERR_INVALID_MODEL, "Scan needs num_scan_inputs from 1 to its %u inputs", n->n_inputs);
    uint32_t M = (uint32_t)na->i, N = n->n_inputs - M;
    struct sy_session *b;
    SY_TRY(sy_bi_sub(s, nr, "body", &b));
    const ir_graph *g = b->g;
    if (g->n_inputs != N + M)
        return sy_error(SY_ERR_INVALID_MODEL, "Scan has %u state and %u scan inputs; its body takes %u", N, M,
                        g->n_inputs);
    if (g->n_outputs < N || n->n_outputs != g->n_outputs)
        return sy_error(SY_ERR_INVALID_MODEL, "Scan has %u outputs, its body %u (with %u states)", n->n_outputs,
                        g->n_outputs, N);
    uint32_t K = g->n_outputs - N;
    const int64_t *in_dirs = NULL, *in_axes = NULL, *out_dirs = NULL, *out_axes = NULL;
    size_t n_in_dirs = 0, n_in_axes = 0, n_out_dirs = 0, n_out_axes = 0;
    attr_ints(n, "scan_input_directions", &in_dirs, &n_in_dirs);
    attr_ints(n, "scan_input_axes", &in_axes, &n_in_axes);
    attr_ints(n, "scan_output_directions", &out_dirs, &n_out_dirs);
    attr_ints(n, "scan_output_axes", &out_axes, &n_out_axes);
    if ((in_dirs && n_in_dirs != M) || (in_axes && n_in_axes != M) || (out_dirs && n_out_dirs != K) ||
        (out_axes && n_out_axes != K))
        return sy_error(SY_ERR_INVALID_MODEL, "Scan: scan_input_* attributes need %u entries, scan_output_* %u", M,
                        K);
    /* the scan inputs: every one is cut along its axis into L slices */
    int64_t L = -1;
    int64_t axis[SY_MAX_RANK * 8];
    if (M > sizeof axis / sizeof axis[0])
        return sy_error(SY_ERR_UNSUPPORTED, "Scan has %u scan inputs; at most %zu are supported", M,
                        sizeof axis / sizeof axis[0]);
    for (uint32_t m = 0; m < M; m++) {
        const sy_value_rt *x = sy_bi_in(s, nr, N + m);
        if (!x || x->kind != SY_RT_TENSOR)
            return sy_error(SY_ERR_INVALID_MODEL, "Scan's scan input %u is %s", m, x ? sy_value_kind_name(x) : "omitted");
        int64_t a = in_axes ? in_axes[m] : 0;
        if (a < -(int64_t)x->t.rank || a >= x->t.rank)
            return sy_error(SY_ERR_INVALID_MODEL, "Scan's scan input %u: axis %lld is out of range for rank %d", m,
                            (long long)a, x->t.rank);
        axis[m] = a < 0 ? a + x->t.rank : a;
        if (!elem_bytes(&x->t))
            return sy_error(SY_ERR_UNSUPPORTED, "Scan's scan input %u has dtype %s, which cannot be sliced", m,
                            sy_dtype_name(x->t.dtype));
        int64_t len = x->t.dims[axis[m]];
        if (L >= 0 && len != L)
            return sy_error(SY_ERR_SHAPE, "Scan's scan inputs differ in length: %lld and %lld", (long long)L,
                            (long long)len);
        L = len;
    }
    for (uint32_t j = 0; j < N; j++)
        if (n->inputs[j] < 0)
            return sy_error(SY_ERR_INVALID_MODEL, "Scan's state input %u is omitted", j);
    carry c;
    stack *st = calloc(K ? K : 1, sizeof *st);
    sy_value_rt *sl = calloc(M, sizeof *sl);
    sy_status *err = carry_init(&c, N);
    if (!err && (!st || !sl))
        err = sy_error_oom();
    for (uint32_t j = 0; !err && j < N; j++)
        c.cur[j] = sy_bi_in(s, nr, j);
    for (uint32_t k = 0; !err && k < K; k++) {
        st[k].out = sy_bi_out(s, nr, N + k);
        st[k].axis = out_axes ? out_axes[k] : 0;
        st[k].reverse = out_dirs && out_dirs[k] != 0;
    }
    /* slice buffers, sized once */
    for (uint32_t m = 0; !err && m < M; m++) {
        const sy_tensor *x = &sy_bi_in(s, nr, N + m)->t;
        sy_value_rt *v = &sl[m];
        v->t.struct_size = sizeof v->t;
        v->t.dtype = x->dtype;
        v->t.rank = x->rank - 1;
        for (int32_t d = 0, e = 0; d < x->rank; d++)
            if (d != axis[m])
                v->t.dims[e++] = x->dims[d];
        v->t.nbytes = L ? x->nbytes / (size_t)L : 0;
        err = sy_value_ensure_owned(v, v->t.nbytes);
    }
    for (int64_t t = 0; !err && t < L; t++) {
        for (uint32_t m = 0; m < M; m++) {
            const sy_tensor *x = &sy_bi_in(s, nr, N + m)->t;
            int64_t idx = in_dirs && in_dirs[m] ? L - 1 - t : t;
            int64_t outer = 1;
            for (int64_t d = 0; d < axis[m]; d++)
                outer *= x->dims[d];
            size_t inner = outer ? sl[m].t.nbytes / (size_t)outer : 0;
            for (int64_t o = 0; o < outer; o++)
                memcpy((uint8_t *)sl[m].t.data + (size_t)o * inner,
                       (const uint8_t *)x->data + ((size_t)o * (size_t)L + (size_t)idx) * inner, inner);
            sy_session_bind(b, g->inputs[N + m], &sl[m]);
        }
        for (uint32_t j = 0; j < N; j++)
            sy_session_bind(b, g->inputs[j], c.cur[j]);
        err = sy_session_run_sub(b);
        if (!err)
            err = carry_step(s, &c, b, 0);
        for (uint32_t k = 0; !err && k < K; k++) {
            const sy_value_rt *v = &b->values[g->outputs[N + k]];
            if (!(err = stack_take(s, &st[k], v, L, k)))
                stack_put(&st[k], &v->t, st[k].reverse ? L - 1 - t : t, L);
        }
        if (err)
            err = sy_error_wrap(err, "Scan iteration %lld", (long long)t);
    }
    for (uint32_t j = 0; !err && j < N; j++) {
        sy_value_rt *y = sy_bi_out(s, nr, j);
        if (y)
            err = sy_value_assign(s, y, c.cur[j]);
    }
    for (uint32_t k = 0; !err && k < K; k++)
        if (!st[k].started)
            err = stack_empty(s, &st[k], &g->values[g->outputs[N + k]]);
    for (uint32_t m = 0; sl && m < M; m++)
        sy_value_release(&sl[m]);
    free(sl);
    carry_free(&c);
    free(st);
    return err;
}
