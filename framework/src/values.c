/*
 * Value kinds of the runtime: tensors, sequences of tensors and the empty
 * optional. A sequence owns a copy of each item, so a value can outlive
 * the arena its items were computed in (a Loop body's plan is reused by
 * the next iteration).
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

const char *sy_value_kind_name(const sy_value_rt *v)
{
    switch (v->kind) {
    case SY_RT_SEQUENCE:
        return "sequence";
    case SY_RT_NONE:
        return "empty optional";
    default:
        return "tensor";
    }
}

sy_status *sy_tensor_dup(const sy_tensor *t, sy_tensor *out)
{
    *out = *t;
    out->name = NULL;
    out->quant = NULL;
    out->data = sy_aligned_alloc(t->nbytes ? t->nbytes : 1, 64);
    if (!out->data)
        return sy_error_oom();
    if (t->nbytes)
        memcpy(out->data, t->data, t->nbytes);
    return NULL;
}

void sy_seq_free(sy_seq *q)
{
    if (!q)
        return;
    for (uint32_t i = 0; i < q->n; i++)
        sy_aligned_free(q->items[i].data);
    free(q->items);
    free(q);
}

sy_status *sy_seq_push(const struct sy_session *s, sy_seq *q, const sy_tensor *t, uint32_t at)
{
    if (at > q->n)
        return sy_error(SY_ERR_INTERNAL, "sequence position %u past its end %u", at, q->n);
    if (s)
        SY_TRY(sy_session_check_tensor(s, t, "sequence item"));
    /* each item is bounded by max_tensor_bytes; the count bounds the rest */
    if (q->n >= (1u << 24))
        return sy_error(SY_ERR_BUDGET, "a sequence would hold more than %u items", 1u << 24);
    if (q->n == q->cap) {
        uint32_t nc = q->cap ? q->cap * 2 : 4;
        sy_tensor *grown = realloc(q->items, (size_t)nc * sizeof *grown);
        if (!grown)
            return sy_error_oom();
        q->items = grown;
        q->cap = nc;
    }
    sy_tensor copy;
    SY_TRY(sy_tensor_dup(t, &copy));
    memmove(&q->items[at + 1], &q->items[at], (size_t)(q->n - at) * sizeof *q->items);
    q->items[at] = copy;
    q->n++;
    return NULL;
}

void sy_value_clear_seq(sy_value_rt *v)
{
    if (v->seq && !v->seq_borrowed)
        sy_seq_free(v->seq);
    v->seq = NULL;
    v->seq_borrowed = false;
    v->kind = SY_RT_TENSOR;
}

sy_status *sy_value_ensure_owned(sy_value_rt *v, size_t bytes)
{
    if (v->owned && v->owned_cap >= bytes) {
        v->t.data = v->owned;
        return NULL;
    }
    sy_aligned_free(v->owned);
    v->owned = sy_aligned_alloc(bytes ? bytes : 1, 64);
    v->owned_cap = v->owned ? bytes : 0;
    v->t.data = v->owned;
    return v->owned ? NULL : sy_error_oom();
}

sy_status *sy_value_assign(const struct sy_session *s, sy_value_rt *dst, const sy_value_rt *src)
{
    if (dst == src)
        return NULL;
    if (src->kind == SY_RT_SEQUENCE) {
        sy_seq *q = calloc(1, sizeof *q);
        if (!q)
            return sy_error_oom();
        for (uint32_t i = 0; src->seq && i < src->seq->n; i++) {
            sy_status *st = sy_seq_push(s, q, &src->seq->items[i], q->n);
            if (st) {
                sy_seq_free(q);
                return st;
            }
        }
        sy_value_clear_seq(dst);
        dst->kind = SY_RT_SEQUENCE;
        dst->seq = q;
        dst->t.dtype = src->t.dtype; /* the items' dtype, as declared */
        dst->t.rank = 0;
        dst->t.nbytes = 0;
        dst->t.data = NULL;
        dst->shape_known = true;
        return NULL;
    }
    sy_value_clear_seq(dst);
    dst->kind = src->kind;
    dst->t.dtype = src->t.dtype;
    dst->t.rank = src->t.rank;
    memcpy(dst->t.dims, src->t.dims, sizeof dst->t.dims);
    dst->t.nbytes = src->kind == SY_RT_NONE ? 0 : src->t.nbytes;
    if (s) {
        sy_tensor probe = dst->t;
        probe.name = dst->t.name;
        SY_TRY(sy_session_check_tensor(s, &probe, "output"));
    }
    SY_TRY(sy_value_ensure_owned(dst, dst->t.nbytes));
    if (dst->t.nbytes)
        memcpy(dst->t.data, src->t.data, dst->t.nbytes);
    if (src->kind == SY_RT_NONE)
        dst->t.data = NULL;
    dst->shape_known = true;
    return NULL;
}
