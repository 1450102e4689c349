/* The model writer's pieces: protobuf-c ONNX messages made in a pool
 * (tensors, attributes, value infos) and a model packed into bytes. The
 * quantizer and the LLM exporter build their models with these. */
#ifndef SY_TL_ONNX_H
#define SY_TL_ONNX_H

#include "onnx.pb-c.h"
#include "tl_pool.h"

#include <stdint.h>

/* A tensor with `bytes` of raw data copied in (dt: ONNX TensorProto data type). */
Onnx__TensorProto *tl_tensor(tl_pool *p, const char *name, int dt, const int64_t *dims, size_t nd, const void *data,
                             size_t bytes);
/* A tensor with name, type and shape only (the caller sets its data). */
Onnx__TensorProto *tl_tensor_header(tl_pool *p, const char *name, int dt, const int64_t *dims, size_t nd);
Onnx__AttributeProto *tl_attr_int(tl_pool *p, const char *name, int64_t v);
Onnx__AttributeProto *tl_attr_ints(tl_pool *p, const char *name, const int64_t *v, size_t n);
/* A tensor-typed value info with a static shape. */
Onnx__ValueInfoProto *tl_value_info(tl_pool *p, const char *name, int elem, const int64_t *dims, size_t nd);
/* The packed model, malloc'd; NULL when out of memory. */
uint8_t *tl_pack_model(const Onnx__ModelProto *m, size_t *len);

#endif
