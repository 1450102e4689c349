/* Small ONNX model builders the C tests share: see sy_test_onnx.h. */
#include "sy_test_onnx.h"

#include <stdlib.h>

void sy_test_float_type_init(sy_test_float_type *t, size_t rank, const int64_t *dims)
{
    if (rank > SY_TEST_MAX_RANK)
        rank = SY_TEST_MAX_RANK;
    for (size_t i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
        d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d.dim_value = dims[i];
        t->dim[i] = d;
        t->dims[i] = &t->dim[i];
    }
    Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = rank;
    shape.dim = t->dims;
    t->shape = shape;
    Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
    tt.has_elem_type = 1;
    tt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt.shape = &t->shape;
    t->tensor = tt;
    Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
    type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type.tensor_type = &t->tensor;
    t->type = type;
}

uint8_t *sy_test_pack_model(Onnx__GraphProto *graph, const char *producer, const char *domain, size_t *len)
{
    Onnx__OperatorSetIdProto ops_def = ONNX__OPERATOR_SET_ID_PROTO__INIT, ops_dom = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    ops_def.domain = "";
    ops_def.has_version = 1;
    ops_def.version = 13;
    ops_dom.domain = (char *)domain;
    ops_dom.has_version = 1;
    ops_dom.version = 1;
    Onnx__OperatorSetIdProto *opsets[] = {&ops_def, &ops_dom};
    Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
    model.has_ir_version = 1;
    model.ir_version = 8;
    model.n_opset_import = domain ? 2 : 1;
    model.opset_import = opsets;
    model.producer_name = (char *)producer;
    model.graph = graph;
    *len = onnx__model_proto__get_packed_size(&model);
    uint8_t *buf = malloc(*len);
    if (buf)
        onnx__model_proto__pack(&model, buf);
    return buf;
}

uint8_t *sy_test_one_node_model(const char *graph_name, const char *node_name, const char *op, const char *domain,
                                int64_t n, const char *producer, size_t *len)
{
    sy_test_float_type t;
    sy_test_float_type_init(&t, 1, &n);
    Onnx__ValueInfoProto in = ONNX__VALUE_INFO_PROTO__INIT, out = ONNX__VALUE_INFO_PROTO__INIT;
    in.name = "x";
    in.type = &t.type;
    out.name = "y";
    out.type = &t.type;
    Onnx__ValueInfoProto *ins[] = {&in}, *outs[] = {&out};
    char *node_in[] = {"x"}, *node_out[] = {"y"};
    Onnx__NodeProto node = ONNX__NODE_PROTO__INIT;
    node.n_input = 1;
    node.input = node_in;
    node.n_output = 1;
    node.output = node_out;
    node.name = (char *)node_name;
    node.op_type = (char *)op;
    node.domain = (char *)domain;
    Onnx__NodeProto *nodes[] = {&node};
    Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
    graph.name = (char *)graph_name;
    graph.n_node = 1;
    graph.node = nodes;
    graph.n_input = 1;
    graph.input = ins;
    graph.n_output = 1;
    graph.output = outs;
    return sy_test_pack_model(&graph, producer, domain, len);
}
