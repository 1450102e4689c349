/*
 * ONNX importer: ModelProto file/buffer -> ir_model, and TensorProto -> sy_tensor.
 *
 * The main graph's nodes and initializers are decoded one at a time from
 * the wire, the rest of the ModelProto at once; every decoded message is
 * freed before the model is returned: an initializer's raw_data block
 * (protobuf-c's own malloc'd copy) is taken out of the message when suitably
 * aligned (no copy, IR_VALUE_OWNS_DATA); initializers stored in typed fields
 * (float_data, int32_data, ...), unaligned ones and string tensors are
 * converted into an owned 64-byte aligned copy (IR_VALUE_OWNS_DATA too).
 * External data is mmapped read-only and borrowed (not owned); its mappings
 * are in ir_model->mappings.
 */
#ifndef SY_ONNX_IMPORT_H
#define SY_ONNX_IMPORT_H

#include "ir.h"
#include "status.h"

#include <stddef.h>

struct Onnx__TensorProto;

/* Highest ModelProto.ir_version this importer understands. */
#define SY_ONNX_MAX_IR_VERSION 13

sy_status *sy_onnx_import_file(const char *path, ir_model **out);
/* `name` is used in messages; external data resolves against `base_dir`
 * (NULL: external data is refused). `data` need not outlive the call. */
sy_status *sy_onnx_import_buffer(const void *data, size_t size, const char *name, const char *base_dir,
                                 ir_model **out);

/* An owned copy of a TensorProto as one allocation (struct, name, data 64-byte
 * aligned), freed with sy_tensor_free. External data resolves against
 * `base_dir` (NULL: refused). Strings and sparse data are refused. */
sy_status *sy_onnx_tensor_from_proto(const struct Onnx__TensorProto *tp, const char *base_dir, sy_tensor **out);

/* Bytes for numel elements of any ONNX element type except STRING (complex,
 * float8, and 4/2-bit packed types included); false for unknown types or overflow. */
bool sy_onnx_dtype_bytes(int32_t onnx_dtype, int64_t numel, size_t *out);
/* ONNX's name for an element type ("FLOAT8E4M3FN"), "?" when unknown. */
const char *sy_onnx_dtype_name(int32_t onnx_dtype);

#endif
