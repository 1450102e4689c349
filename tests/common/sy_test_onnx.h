/*
 * Small ONNX model builders the C tests share (protobuf-c, no files).
 *
 *   sy_test_float_type_init(t, rank, dims)   a float tensor type of a fixed shape
 *   sy_test_pack_model(graph, producer, domain, &len)
 *                                            pack graph into a ModelProto (IR 8,
 *                                            opset 13, plus domain version 1 when
 *                                            domain is non-NULL); malloc'd bytes
 *   sy_test_one_node_model(...)              x float[n] -> op -> y, packed
 *
 * Link the sy_test_onnx static library (tests/CMakeLists.txt).
 */
#ifndef SY_TEST_ONNX_H
#define SY_TEST_ONNX_H

#include "onnx.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#define SY_TEST_MAX_RANK 8

/* A float tensor type; every pointer points into the struct itself, so it must
 * not be copied after sy_test_float_type_init. */
typedef struct sy_test_float_type {
    Onnx__TensorShapeProto__Dimension dim[SY_TEST_MAX_RANK];
    Onnx__TensorShapeProto__Dimension *dims[SY_TEST_MAX_RANK];
    Onnx__TensorShapeProto shape;
    Onnx__TypeProto__Tensor tensor;
    Onnx__TypeProto type;
} sy_test_float_type;

void sy_test_float_type_init(sy_test_float_type *t, size_t rank, const int64_t *dims);

uint8_t *sy_test_pack_model(Onnx__GraphProto *graph, const char *producer, const char *domain, size_t *len);

/* graph graph_name: x float[n] -> node node_name (domain:op) -> y float[n] */
uint8_t *sy_test_one_node_model(const char *graph_name, const char *node_name, const char *op, const char *domain,
                                int64_t n, const char *producer, size_t *len);

#endif
