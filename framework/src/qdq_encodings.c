/*
 * Encodings of QDQ models' integer values. A QuantizeLinear with a constant
 * per-tensor scale (and zero point) says how its output codes map to reals;
 * this records that on the output value (ir_value.quant, as the TFLite
 * importer does for its tensors), before the QDQ pass folds the chain into a
 * switchyard.quant node whose output is that same value; a graph input of
 * codes read only by DequantizeLinear nodes that agree gets theirs. After
 * the pass, the pass-through ops it retyped to run on codes (Reshape,
 * Transpose, Pad, ...) pass the encoding of their input on. Hosts see it in sy_tensor.quant — the run
 * observer and `switchyard compare --against-model` dequantize with it.
 */
#include "qdq_encodings.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static bool scalar_init(const ir_graph *g, int32_t v, sy_dtype want_float, const void **data, sy_dtype *dt)
{
    if (v < 0 || (uint32_t)v >= g->n_values)
        return false;
    const ir_value *iv = &g->values[v];
    if (!(iv->flags & IR_VALUE_INITIALIZER) || !iv->data)
        return false;
    for (int32_t d = 0; d < iv->rank; d++)
        if (iv->dims[d] != 1)
            return false;
    if (want_float != SY_DT_UNDEFINED && iv->dtype != want_float)
        return false;
    *data = iv->data;
    *dt = iv->dtype;
    return true;
}

static bool zero_point(const void *p, sy_dtype dt, int32_t *out)
{
    switch (dt) {
    case SY_DT_INT8: *out = *(const int8_t *)p; return true;
    case SY_DT_UINT8: *out = *(const uint8_t *)p; return true;
    case SY_DT_INT16: { int16_t x; memcpy(&x, p, 2); *out = x; return true; }
    case SY_DT_UINT16: { uint16_t x; memcpy(&x, p, 2); *out = x; return true; }
    default: return false;
    }
}

static sy_quant_params *per_tensor(float scale, int32_t zp, sy_dtype storage)
{
    sy_quant_params *q = calloc(1, sizeof *q);
    float *s = malloc(sizeof *s);
    int32_t *z = malloc(sizeof *z);
    if (!q || !s || !z) {
        free(q);
        free(s);
        free(z);
        return NULL;
    }
    *s = scale;
    *z = zp;
    *q = (sy_quant_params){sizeof *q, -1, 0, 1, s, z, storage};
    return q;
}

/* The encoding of a graph input of codes, from the DequantizeLinear nodes
 * that read it: a model cut after its input QuantizeLinear (a QAS session's
 * frozen front, fed codes) starts with integer inputs whose meaning only
 * their DequantizeLinear readers state. Recorded only when every reader is
 * such a node with a constant per-tensor scale and zero point, all equal,
 * so a pass-through op on the codes (a Pad, a Reshape) sees its input's
 * quantization as the input's own, never one of two readings. */
static void record_input_encodings(ir_graph *g)
{
    for (uint32_t k = 0; k < g->n_inputs; k++) {
        int32_t v = g->inputs[k];
        if (v < 0 || (uint32_t)v >= g->n_values)
            continue;
        ir_value *x = &g->values[v];
        if (x->quant || !(x->dtype == SY_DT_INT8 || x->dtype == SY_DT_UINT8 || x->dtype == SY_DT_INT16 ||
                          x->dtype == SY_DT_UINT16))
            continue;
        bool any = false, ok = true;
        float scale = 0.0f;
        int32_t z = 0;
        for (uint32_t i = 0; i < g->n_nodes && ok; i++) {
            const ir_node *n = &g->nodes[i];
            bool reads = false;
            for (uint32_t j = 0; j < n->n_inputs; j++)
                reads |= n->inputs[j] == v;
            if (!reads)
                continue;
            const void *sp, *zp;
            sy_dtype sdt, zdt;
            float s1;
            int32_t z1 = 0;
            ok = !n->domain[0] && !strcmp(n->op, "DequantizeLinear") && n->n_inputs >= 2 && n->inputs[0] == v &&
                 scalar_init(g, n->inputs[1], SY_DT_FLOAT32, &sp, &sdt);
            if (!ok)
                break;
            memcpy(&s1, sp, sizeof s1);
            if (n->n_inputs > 2 && n->inputs[2] >= 0)
                ok = scalar_init(g, n->inputs[2], SY_DT_UNDEFINED, &zp, &zdt) && zdt == x->dtype &&
                     zero_point(zp, zdt, &z1);
            ok = ok && s1 > 0 && (!any || (s1 == scale && z1 == z));
            scale = s1, z = z1, any = true;
        }
        if (any && ok)
            x->quant = per_tensor(scale, z, x->dtype); /* NULL on OOM: stays without one */
    }
}

void sy_qdq_record_encodings(ir_model *m)
{
    ir_graph *g = &m->graph;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->domain[0] || strcmp(n->op, "QuantizeLinear") || n->n_outputs < 1 || n->outputs[0] < 0 ||
            n->n_inputs < 2)
            continue;
        ir_value *y = &g->values[n->outputs[0]];
        const void *sp, *zp = NULL;
        sy_dtype sdt, zdt = SY_DT_UINT8; /* no zero point: uint8, zero */
        int32_t z = 0;
        float scale;
        if (y->quant || !scalar_init(g, n->inputs[1], SY_DT_FLOAT32, &sp, &sdt))
            continue;
        memcpy(&scale, sp, sizeof scale);
        if (n->n_inputs > 2 && n->inputs[2] >= 0) {
            if (!scalar_init(g, n->inputs[2], SY_DT_UNDEFINED, &zp, &zdt) || !zero_point(zp, zdt, &z))
                continue;
        }
        if (!(scale > 0))
            continue;
        y->quant = per_tensor(scale, z, zdt); /* NULL on OOM: the value just stays without one */
    }
    record_input_encodings(g);
}

static bool passes_codes(const ir_node *n)
{
    static const char *const ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose",
                                      "Slice",   "Identity", "Pad"};
    if (n->domain[0])
        return false;
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (!strcmp(n->op, ops[k]))
            return true;
    return false;
}

static bool is_code_type(sy_dtype dt)
{
    return dt == SY_DT_INT8 || dt == SY_DT_UINT8 || dt == SY_DT_INT16 || dt == SY_DT_UINT16;
}

void sy_qdq_pass_encodings(ir_model *m)
{
    ir_graph *g = &m->graph;
    /* a few sweeps: a chain of pass-through ops need not be in index order */
    for (int sweep = 0; sweep < 4; sweep++) {
        bool changed = false;
        for (uint32_t i = 0; i < g->n_nodes; i++) {
            const ir_node *n = &g->nodes[i];
            if (!passes_codes(n) || n->n_inputs < 1 || n->inputs[0] < 0 || n->n_outputs < 1 || n->outputs[0] < 0)
                continue;
            const ir_value *x = &g->values[n->inputs[0]];
            ir_value *y = &g->values[n->outputs[0]];
            if (!x->quant || x->quant->count != 1 || y->quant || !is_code_type(x->dtype))
                continue;
            if (y->dtype != SY_DT_UNDEFINED && y->dtype != x->dtype)
                continue;
            y->quant = per_tensor(x->quant->scales[0], x->quant->zero_points ? x->quant->zero_points[0] : 0,
                                  x->quant->storage);
            changed |= y->quant != NULL;
        }
        if (!changed)
            break;
    }
}
