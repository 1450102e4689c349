/*
 * TFLite importer: a .tflite FlatBuffer -> ir_model (NHWC layouts, TFLite
 * ops in the "tflite" domain), with a bounds-checked reader.
 */
#ifndef SY_TFLITE_IMPORT_H
#define SY_TFLITE_IMPORT_H

#include "ir.h"
#include "status.h"

/* True when the buffer carries the TFLite FlatBuffer identifier "TFL3". */
bool sy_tflite_is_tflite(const void *data, size_t size);
/* max_tensor_bytes: the largest variable tensor (zero state allocated at
 * load) the model may declare; a larger one is refused before allocating. */
sy_status *sy_tflite_import_file(const char *path, uint64_t max_tensor_bytes, ir_model **out);
sy_status *sy_tflite_import_buffer(const void *data, size_t size, const char *name, uint64_t max_tensor_bytes,
                                   ir_model **out);

#endif
