/*
 * A tiny ONNX model writer for the partition and planner tests, on the
 * protobuf-c code generated from framework/proto/onnx.proto. Header-only;
 * everything a model allocates is freed by pt_model_free.
 *
 *   pt_model *m = pt_model_new("name");
 *   pt_input(m, "x", PT_F32, 2, (int64_t[]){2, 8});
 *   pt_init_f32(m, "w", 2, dims, data);        initializer
 *   pt_node(m, "Add", "add0", (const char *[]){"x", "w", NULL}, (const char *[]){"a", NULL});
 *   pt_output(m, "a", PT_F32, 2, dims);
 *   pt_model_pack(m, &buf, &len);              malloc'ed bytes
 */
#ifndef PT_ONNX_H
#define PT_ONNX_H

#include "onnx.pb-c.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define PT_I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define PT_I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define PT_F16 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16

#define PT_MAX_OPSETS 4

typedef struct pt_model {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto extra_opsets[PT_MAX_OPSETS - 1];
    Onnx__OperatorSetIdProto *opset_list[PT_MAX_OPSETS];
    void **allocs;
    size_t n_allocs, cap_allocs;
} pt_model;

static inline void *pt_alloc(pt_model *m, size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "pt_onnx: out of memory\n");
        abort();
    }
    if (m->n_allocs == m->cap_allocs) {
        size_t cap = m->cap_allocs ? 2 * m->cap_allocs : 64;
        void **g = realloc(m->allocs, cap * sizeof *g);
        if (!g)
            abort();
        m->allocs = g;
        m->cap_allocs = cap;
    }
    m->allocs[m->n_allocs++] = p;
    return p;
}

/* grow an array of pointers by one slot (kept in the alloc list) */
static inline void **pt_push(pt_model *m, void **arr, size_t n)
{
    void **grown = pt_alloc(m, (n + 1) * sizeof *grown);
    if (n)
        memcpy(grown, arr, n * sizeof *grown);
    return grown;
}

static inline char *pt_strdup(pt_model *m, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = pt_alloc(m, n);
    memcpy(d, s, n);
    return d;
}

static inline pt_model *pt_model_new(const char *name)
{
    pt_model *m = calloc(1, sizeof *m);
    if (!m)
        abort();
    onnx__model_proto__init(&m->model);
    onnx__graph_proto__init(&m->graph);
    onnx__operator_set_id_proto__init(&m->opset);
    m->model.has_ir_version = 1;
    m->model.ir_version = 8;
    m->model.producer_name = "switchyard tests/partition";
    m->opset.domain = "";
    m->opset.has_version = 1;
    m->opset.version = 13;
    m->opset_list[0] = &m->opset;
    m->model.n_opset_import = 1;
    m->model.opset_import = m->opset_list;
    m->graph.name = pt_strdup(m, name);
    m->model.graph = &m->graph;
    return m;
}

static inline void pt_model_free(pt_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_allocs; i++)
        free(m->allocs[i]);
    free(m->allocs);
    free(m);
}

static inline Onnx__ValueInfoProto *pt_value_info(pt_model *m, const char *name, int elem, int32_t rank, const int64_t *dims)
{
    Onnx__TensorShapeProto *shape = pt_alloc(m, sizeof *shape);
    onnx__tensor_shape_proto__init(shape);
    shape->n_dim = (size_t)rank;
    shape->dim = pt_alloc(m, (size_t)rank * sizeof *shape->dim);
    for (int32_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = pt_alloc(m, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        shape->dim[i] = d;
    }
    Onnx__TypeProto__Tensor *tt = pt_alloc(m, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tt->shape = shape;
    Onnx__TypeProto *tp = pt_alloc(m, sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    Onnx__ValueInfoProto *vi = pt_alloc(m, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = pt_strdup(m, name);
    vi->type = tp;
    return vi;
}

static inline void pt_input(pt_model *m, const char *name, int elem, int32_t rank, const int64_t *dims)
{
    m->graph.input = (Onnx__ValueInfoProto **)pt_push(m, (void **)m->graph.input, m->graph.n_input);
    m->graph.input[m->graph.n_input++] = pt_value_info(m, name, elem, rank, dims);
}

static inline void pt_output(pt_model *m, const char *name, int elem, int32_t rank, const int64_t *dims)
{
    m->graph.output = (Onnx__ValueInfoProto **)pt_push(m, (void **)m->graph.output, m->graph.n_output);
    m->graph.output[m->graph.n_output++] = pt_value_info(m, name, elem, rank, dims);
}

/* initializer; data little-endian host order (x86_64/aarch64 tests) */
static inline void pt_init_raw(pt_model *m, const char *name, int elem, int32_t rank, const int64_t *dims, const void *data,
                        size_t nbytes)
{
    Onnx__TensorProto *t = pt_alloc(m, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = pt_strdup(m, name);
    t->n_dims = (size_t)rank;
    t->dims = pt_alloc(m, (size_t)rank * sizeof *t->dims);
    if (rank) /* a scalar passes dims NULL: memcpy's arguments must not be NULL even for 0 bytes */
        memcpy(t->dims, dims, (size_t)rank * sizeof *t->dims);
    t->has_data_type = 1;
    t->data_type = elem;
    t->has_raw_data = 1;
    t->raw_data.len = nbytes;
    t->raw_data.data = pt_alloc(m, nbytes);
    memcpy(t->raw_data.data, data, nbytes);
    m->graph.initializer =
        (Onnx__TensorProto **)pt_push(m, (void **)m->graph.initializer, m->graph.n_initializer);
    m->graph.initializer[m->graph.n_initializer++] = t;
}

static inline void pt_init_f32(pt_model *m, const char *name, int32_t rank, const int64_t *dims, const float *data)
{
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    pt_init_raw(m, name, PT_F32, rank, dims, data, n * sizeof(float));
}

static inline void pt_init_i64(pt_model *m, const char *name, int32_t rank, const int64_t *dims, const int64_t *data)
{
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= (size_t)dims[i];
    pt_init_raw(m, name, PT_I64, rank, dims, data, n * sizeof(int64_t));
}

/* inputs and outputs: NULL-terminated name lists */
static inline void pt_node(pt_model *m, const char *op, const char *name, const char *const *inputs,
                    const char *const *outputs)
{
    Onnx__NodeProto *n = pt_alloc(m, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = pt_strdup(m, op);
    n->name = pt_strdup(m, name);
    while (inputs[n->n_input])
        n->n_input++;
    n->input = pt_alloc(m, n->n_input * sizeof *n->input);
    for (size_t i = 0; i < n->n_input; i++)
        n->input[i] = pt_strdup(m, inputs[i]);
    while (outputs[n->n_output])
        n->n_output++;
    n->output = pt_alloc(m, n->n_output * sizeof *n->output);
    for (size_t i = 0; i < n->n_output; i++)
        n->output[i] = pt_strdup(m, outputs[i]);
    m->graph.node = (Onnx__NodeProto **)pt_push(m, (void **)m->graph.node, m->graph.n_node);
    m->graph.node[m->graph.n_node++] = n;
}

/* import another operator-set domain (e.g. "switchyard.quant", 1) */
static inline void pt_opset(pt_model *m, const char *domain, int64_t version)
{
    if (m->model.n_opset_import == PT_MAX_OPSETS) {
        fprintf(stderr, "pt_onnx: more than %d opset imports\n", PT_MAX_OPSETS);
        abort();
    }
    Onnx__OperatorSetIdProto *o = &m->extra_opsets[m->model.n_opset_import - 1];
    onnx__operator_set_id_proto__init(o);
    o->domain = pt_strdup(m, domain);
    o->has_version = 1;
    o->version = version;
    m->opset_list[m->model.n_opset_import++] = o;
}

/* the operator domain of the node added last */
static inline void pt_domain(pt_model *m, const char *domain)
{
    m->graph.node[m->graph.n_node - 1]->domain = pt_strdup(m, domain);
}

/* a GRAPH attribute on the node added last of m; `body`'s graph is used in
 * place (keep it alive until m is packed) */
static inline void pt_attr_graph(pt_model *m, const char *name, pt_model *body)
{
    Onnx__NodeProto *n = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    a->g = &body->graph;
    n->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)n->attribute, n->n_attribute);
    n->attribute[n->n_attribute++] = a;
}

/* an INT attribute on the node added last */
static inline void pt_attr_int(pt_model *m, const char *name, int64_t value)
{
    Onnx__NodeProto *n = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = value;
    n->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)n->attribute, n->n_attribute);
    n->attribute[n->n_attribute++] = a;
}

/* a FLOAT attribute on the node added last */
static inline void pt_attr_float(pt_model *m, const char *name, float value)
{
    Onnx__NodeProto *n = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    a->has_f = 1;
    a->f = value;
    n->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)n->attribute, n->n_attribute);
    n->attribute[n->n_attribute++] = a;
}

/* a STRING attribute on the node added last */
static inline void pt_attr_string(pt_model *m, const char *name, const char *value)
{
    Onnx__NodeProto *n = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    a->has_s = 1;
    a->s.len = strlen(value);
    a->s.data = (uint8_t *)pt_strdup(m, value);
    n->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)n->attribute, n->n_attribute);
    n->attribute[n->n_attribute++] = a;
}

/* an INTS attribute on the node added last */
static inline void pt_attr_ints(pt_model *m, const char *name, size_t n, const int64_t *values)
{
    Onnx__NodeProto *node = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = n;
    a->ints = pt_alloc(m, n * sizeof *a->ints);
    memcpy(a->ints, values, n * sizeof *a->ints);
    node->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)node->attribute, node->n_attribute);
    node->attribute[node->n_attribute++] = a;
}

/* serialised bytes, malloc'ed */
static inline void pt_model_pack(const pt_model *m, uint8_t **buf, size_t *len)
{
    size_t n = onnx__model_proto__get_packed_size(&m->model);
    *buf = malloc(n ? n : 1);
    if (!*buf)
        abort();
    *len = onnx__model_proto__pack(&m->model, *buf);
}

#endif
