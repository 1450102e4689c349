/* switchyard cts: single-node ONNX models, built in memory with protobuf-c. */
#include "cts.h"

#include "onnx.pb-c.h"

#include <stdlib.h>
#include <string.h>

#define CTS_NAME_LEN 8

typedef struct vi_buf {
    Onnx__ValueInfoProto vi;
    Onnx__TypeProto type;
    Onnx__TypeProto__Tensor tensor;
    Onnx__TensorShapeProto shape;
    Onnx__TensorShapeProto__Dimension dim[SY_MAX_RANK];
    Onnx__TensorShapeProto__Dimension *dim_ptr[SY_MAX_RANK];
    char name[CTS_NAME_LEN];
} vi_buf;

static void value_info(vi_buf *b, const char *name, const cts_value *v)
{
    onnx__value_info_proto__init(&b->vi);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->vi.name = b->name;
    if (!v)
        return; /* graph outputs: type left to shape inference */
    onnx__type_proto__init(&b->type);
    onnx__type_proto__tensor__init(&b->tensor);
    onnx__tensor_shape_proto__init(&b->shape);
    for (int32_t d = 0; d < v->rank; d++) {
        onnx__tensor_shape_proto__dimension__init(&b->dim[d]);
        b->dim[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        b->dim[d].dim_value = v->dims[d];
        b->dim_ptr[d] = &b->dim[d];
    }
    b->shape.n_dim = (size_t)v->rank;
    b->shape.dim = b->dim_ptr;
    b->tensor.has_elem_type = 1;
    b->tensor.elem_type = (int32_t)v->dtype;
    b->tensor.shape = &b->shape;
    b->type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    b->type.tensor_type = &b->tensor;
    b->vi.type = &b->type;
}

bool cts_onnx_single_node(const cts_node *n, uint8_t **buf, size_t *len)
{
    vi_buf ins[CTS_MAX_IO], outs[CTS_MAX_IO];
    Onnx__ValueInfoProto *in_ptr[CTS_MAX_IO], *out_ptr[CTS_MAX_IO];
    char *node_in[CTS_MAX_IO], *node_out[CTS_MAX_IO];
    Onnx__AttributeProto attrs[CTS_MAX_ATTRS], *attr_ptr[CTS_MAX_ATTRS];
    char op[64], node_name[16] = "node";

    for (uint32_t i = 0; i < n->n_inputs; i++) {
        char name[CTS_NAME_LEN];
        snprintf(name, sizeof name, "in%u", i);
        value_info(&ins[i], name, &n->in[i]);
        in_ptr[i] = &ins[i].vi;
        node_in[i] = ins[i].name;
    }
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        char name[CTS_NAME_LEN];
        snprintf(name, sizeof name, "out%u", i);
        value_info(&outs[i], name, NULL);
        out_ptr[i] = &outs[i].vi;
        node_out[i] = outs[i].name;
    }
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        onnx__attribute_proto__init(&attrs[a]);
        attrs[a].name = (char *)n->attrs[a].name;
        if (n->attrs[a].kind == CTS_ATTR_INT) {
            attrs[a].has_type = 1;
            attrs[a].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
            attrs[a].has_i = 1;
            attrs[a].i = n->attrs[a].i;
        } else {
            attrs[a].has_type = 1;
            attrs[a].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
            attrs[a].has_f = 1;
            attrs[a].f = n->attrs[a].f;
        }
        attr_ptr[a] = &attrs[a];
    }
    snprintf(op, sizeof op, "%s", n->op);

    Onnx__NodeProto node;
    onnx__node_proto__init(&node);
    node.op_type = op;
    node.name = node_name;
    node.n_input = n->n_inputs;
    node.input = node_in;
    node.n_output = n->n_outputs;
    node.output = node_out;
    node.n_attribute = n->n_attrs;
    node.attribute = attr_ptr;
    char node_domain[64];
    snprintf(node_domain, sizeof node_domain, "%s", n->domain ? n->domain : "");
    if (node_domain[0])
        node.domain = node_domain;
    Onnx__NodeProto *node_ptr = &node;

    Onnx__GraphProto graph;
    onnx__graph_proto__init(&graph);
    char graph_name[] = "cts";
    graph.name = graph_name;
    graph.n_node = 1;
    graph.node = &node_ptr;
    graph.n_input = n->n_inputs;
    graph.input = in_ptr;
    graph.n_output = n->n_outputs;
    graph.output = out_ptr;

    Onnx__OperatorSetIdProto opset;
    onnx__operator_set_id_proto__init(&opset);
    char domain[] = "";
    opset.domain = domain;
    opset.has_version = 1;
    opset.version = n->opset;
    Onnx__OperatorSetIdProto custom;
    onnx__operator_set_id_proto__init(&custom);
    custom.domain = node_domain;
    custom.has_version = 1;
    custom.version = 1;
    Onnx__OperatorSetIdProto *opset_ptr[2] = {&opset, &custom};

    Onnx__ModelProto model;
    onnx__model_proto__init(&model);
    char producer[] = "switchyard cts";
    model.has_ir_version = 1;
    model.ir_version = 8;
    model.producer_name = producer;
    model.n_opset_import = node_domain[0] ? 2 : 1;
    model.opset_import = opset_ptr;
    model.graph = &graph;

    size_t size = onnx__model_proto__get_packed_size(&model);
    *buf = malloc(size ? size : 1);
    if (!*buf)
        return false;
    *len = onnx__model_proto__pack(&model, *buf);
    return true;
}
