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
sy_status *sy_tflite_import_file(const char *path, ir_model **out);
sy_status *sy_tflite_import_buffer(const void *data, size_t size, const char *name, ir_model **out);

#endif
