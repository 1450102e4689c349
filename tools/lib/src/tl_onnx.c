#include "tl_onnx.h"

#include <stdlib.h>
#include <string.h>

Onnx__TensorProto *tl_tensor_header(tl_pool *p, const char *name, int dt, const int64_t *dims, size_t nd)
{
    Onnx__TensorProto *t = tl_alloc(p, sizeof *t);
    if (!t)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = tl_strdup(p, name);
    t->n_dims = nd;
    t->dims = tl_alloc(p, (nd ? nd : 1) * sizeof *t->dims);
    if (t->dims && nd)
        memcpy(t->dims, dims, nd * sizeof *dims);
    t->has_data_type = 1;
    t->data_type = dt;
    return t;
}

Onnx__TensorProto *tl_tensor(tl_pool *p, const char *name, int dt, const int64_t *dims, size_t nd, const void *data,
                             size_t bytes)
{
    Onnx__TensorProto *t = tl_tensor_header(p, name, dt, dims, nd);
    if (!t)
        return NULL;
    t->has_raw_data = 1;
    t->raw_data.len = bytes;
    t->raw_data.data = tl_alloc(p, bytes ? bytes : 1);
    if (t->raw_data.data && bytes)
        memcpy(t->raw_data.data, data, bytes);
    return t;
}

Onnx__AttributeProto *tl_attr_int(tl_pool *p, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = tl_alloc(p, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = tl_strdup(p, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    return a;
}

Onnx__AttributeProto *tl_attr_ints(tl_pool *p, const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = tl_alloc(p, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = tl_strdup(p, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = n;
    a->ints = tl_alloc(p, (n ? n : 1) * sizeof *a->ints);
    if (a->ints && n)
        memcpy(a->ints, v, n * sizeof *v);
    return a;
}

static Onnx__TensorShapeProto *shape_of(tl_pool *p, const int64_t *dims, size_t nd)
{
    Onnx__TensorShapeProto *s = tl_alloc(p, sizeof *s);
    if (!s)
        return NULL;
    onnx__tensor_shape_proto__init(s);
    s->n_dim = nd;
    s->dim = tl_alloc(p, (nd ? nd : 1) * sizeof *s->dim);
    if (!s->dim)
        return NULL;
    for (size_t i = 0; i < nd; i++) {
        Onnx__TensorShapeProto__Dimension *d = tl_alloc(p, sizeof *d);
        if (!d)
            return NULL;
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        s->dim[i] = d;
    }
    return s;
}

Onnx__ValueInfoProto *tl_value_info(tl_pool *p, const char *name, int elem, const int64_t *dims, size_t nd)
{
    Onnx__TypeProto__Tensor *tt = tl_alloc(p, sizeof *tt);
    Onnx__TypeProto *tp = tl_alloc(p, sizeof *tp);
    Onnx__ValueInfoProto *vi = tl_alloc(p, sizeof *vi);
    if (!tt || !tp || !vi)
        return NULL;
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tt->shape = shape_of(p, dims, nd);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    onnx__value_info_proto__init(vi);
    vi->name = tl_strdup(p, name);
    vi->type = tp;
    return vi;
}

uint8_t *tl_pack_model(const Onnx__ModelProto *m, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        onnx__model_proto__pack(m, buf);
    return buf;
}
