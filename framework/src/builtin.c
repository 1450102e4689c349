/*
 * The table of the core's own operators and their dispatch, with the small
 * helpers control_flow.c and seq_ops.c share. These ops run in the core:
 * If/Loop/Scan/SequenceMap drive subgraph sessions, and the sequence and
 * optional ops read value kinds that no plugin kernel is ever given.
 */
#include "builtin.h"
#include "env.h"
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

typedef struct bi_def {
    const char *op;
    int32_t since; /* first opset of the default domain the core implements */
    int id;
} bi_def;

static const bi_def defs[] = {
    {"If", 1, SY_BI_IF},
    {"Loop", 1, SY_BI_LOOP},
    {"Scan", 8, SY_BI_SCAN},
    {"SequenceEmpty", 11, SY_BI_SEQUENCE_EMPTY},
    {"SequenceConstruct", 11, SY_BI_SEQUENCE_CONSTRUCT},
    {"SequenceAt", 11, SY_BI_SEQUENCE_AT},
    {"SequenceInsert", 11, SY_BI_SEQUENCE_INSERT},
    {"SequenceErase", 11, SY_BI_SEQUENCE_ERASE},
    {"SequenceLength", 11, SY_BI_SEQUENCE_LENGTH},
    {"SplitToSequence", 11, SY_BI_SPLIT_TO_SEQUENCE},
    {"ConcatFromSequence", 11, SY_BI_CONCAT_FROM_SEQUENCE},
    {"SequenceMap", 17, SY_BI_SEQUENCE_MAP},
    {"Optional", 15, SY_BI_OPTIONAL},
    {"OptionalHasElement", 15, SY_BI_OPTIONAL_HAS_ELEMENT},
    {"OptionalGetElement", 15, SY_BI_OPTIONAL_GET_ELEMENT},
};

int sy_builtin_lookup(const char *domain, const char *op, int32_t opset)
{
    if (!op || *sy_domain_canonical(domain ? domain : ""))
        return SY_BI_NONE;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (!strcmp(defs[i].op, op) && opset >= defs[i].since)
            return defs[i].id;
    return SY_BI_NONE;
}

int sy_builtin_of(const ir_node *n) { return sy_builtin_lookup(n->domain, n->op, n->opset); }

sy_value_rt *sy_bi_in(struct sy_session *s, const sy_node_rt *nr, uint32_t k)
{
    const ir_node *n = nr->view.ir;
    return k < n->n_inputs && n->inputs[k] >= 0 ? &s->values[n->inputs[k]] : NULL;
}

sy_value_rt *sy_bi_out(struct sy_session *s, const sy_node_rt *nr, uint32_t k)
{
    const ir_node *n = nr->view.ir;
    return k < n->n_outputs && n->outputs[k] >= 0 ? &s->values[n->outputs[k]] : NULL;
}

sy_status *sy_bi_sub(struct sy_session *s, sy_node_rt *nr, const char *attr, struct sy_session **out)
{
    const ir_node *n = nr->view.ir;
    uint32_t k = 0;
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        if (n->attrs[a].type != SY_ATTR_GRAPH || !n->attrs[a].g)
            continue;
        if (!strcmp(n->attrs[a].name, attr)) {
            if (k >= nr->n_subs)
                return sy_error(SY_ERR_INTERNAL, "subgraph count of node '%s' changed", n->name);
            if (!nr->subs[k])
                SY_TRY(sy_session_create_sub(s, n->attrs[a].g, &nr->subs[k]));
            *out = nr->subs[k];
            return NULL;
        }
        k++;
    }
    return sy_error(SY_ERR_INVALID_MODEL, "%s needs the graph attribute '%s'", n->op, attr);
}

static int64_t numel_of(const sy_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        n *= t->dims[d];
    return n;
}

sy_status *sy_bi_scalar_i64(const sy_value_rt *v, const char *what, int64_t *out)
{
    if (v->kind != SY_RT_TENSOR)
        return sy_error(SY_ERR_TYPE, "%s is a %s; it must be a tensor", what, sy_value_kind_name(v));
    if (numel_of(&v->t) != 1)
        return sy_error(SY_ERR_SHAPE, "%s must hold one element; it has %lld", what, (long long)numel_of(&v->t));
    if (v->t.dtype == SY_DT_INT64)
        memcpy(out, v->t.data, sizeof *out);
    else if (v->t.dtype == SY_DT_INT32) {
        int32_t x;
        memcpy(&x, v->t.data, sizeof x);
        *out = x;
    } else
        return sy_error(SY_ERR_TYPE, "%s is %s; it must be int32 or int64", what, sy_dtype_name(v->t.dtype));
    return NULL;
}

sy_status *sy_bi_scalar_bool(const sy_value_rt *v, const char *what, bool *out)
{
    if (v->kind != SY_RT_TENSOR)
        return sy_error(SY_ERR_TYPE, "%s is a %s; it must be a tensor", what, sy_value_kind_name(v));
    if (v->t.dtype != SY_DT_BOOL)
        return sy_error(SY_ERR_TYPE, "%s is %s; it must be bool", what, sy_dtype_name(v->t.dtype));
    if (numel_of(&v->t) != 1)
        return sy_error(SY_ERR_SHAPE, "%s must hold one element; it has %lld", what, (long long)numel_of(&v->t));
    *out = *(const uint8_t *)v->t.data != 0;
    return NULL;
}

void sy_value_release(sy_value_rt *v)
{
    sy_aligned_free(v->owned);
    v->owned = NULL;
    v->owned_cap = 0;
    sy_value_clear_seq(v);
}

/* Identity of a sequence or an optional: the value, copied */
static sy_status *identity(struct sy_session *s, sy_node_rt *nr)
{
    sy_value_rt *x = sy_bi_in(s, nr, 0), *y = sy_bi_out(s, nr, 0);
    if (!x || !y)
        return sy_error(SY_ERR_INVALID_MODEL, "Identity needs an input and an output");
    return sy_value_assign(s, y, x);
}

sy_status *sy_builtin_run(struct sy_session *s, sy_node_rt *nr)
{
    switch (nr->builtin) {
    case SY_BI_IF:
        return sy_cf_if(s, nr);
    case SY_BI_LOOP:
        return sy_cf_loop(s, nr);
    case SY_BI_SCAN:
        return sy_cf_scan(s, nr);
    case SY_BI_NONE:
        return identity(s, nr); /* the only plugin op routed here (exec.c) */
    default:
        return sy_seq_op(s, nr);
    }
}
