/*
 * A small FlatBuffers writer for one-subgraph .tflite models, used by the
 * operator tests to build models in memory. It knows only the parts of
 * TFLite's schema.fbs (file identifier "TFL3", schema version 3) that a
 * single-operator model needs: operator codes, tensors with shapes, types,
 * constant buffers and per-tensor / per-axis quantization, operators with
 * builtin options, subgraph inputs and outputs.
 *
 * The buffer is laid out front to back: a table is written before the
 * vectors, strings and sub-tables it refers to, and its offset fields are
 * patched once the child's position is known (FlatBuffers offsets point
 * forward, so every child must come after its parent).
 */
#ifndef SY_TFL_WRITER_H
#define SY_TFL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TensorType values of schema.fbs */
enum { TFLW_FLOAT32 = 0, TFLW_INT32 = 2, TFLW_UINT8 = 3, TFLW_INT64 = 4, TFLW_BOOL = 6, TFLW_INT16 = 7, TFLW_INT8 = 9 };

/* kinds of builtin-option fields */
enum { TFLW_OPT_U8, TFLW_OPT_I32, TFLW_OPT_F32, TFLW_OPT_I32VEC };

typedef struct tflw_opt {
    uint8_t id;   /* field id in the options table */
    uint8_t kind; /* TFLW_OPT_* (bools and enums are U8) */
    int32_t i;
    float f;
    const int32_t *vec;
    uint32_t n_vec;
} tflw_opt;

typedef struct tflw_tensor {
    const char *name;
    int type; /* TensorType */
    int rank;
    int32_t dims[8];
    const void *data; /* constant contents (NULL: a runtime tensor) */
    size_t nbytes;
    int n_quant; /* 0: not quantized; 1: per tensor; >1: per axis */
    const float *scales;
    const int64_t *zero_points;
    int quant_dim;
    bool is_variable;
} tflw_tensor;

typedef struct tflw_op {
    int32_t code;    /* BuiltinOperator */
    int32_t version; /* 0 means 1 */
    const int32_t *inputs; /* tensor indices, -1 = omitted */
    int n_inputs;
    const int32_t *outputs;
    int n_outputs;
    uint8_t options_type; /* BuiltinOptions union type, 0 = none */
    const tflw_opt *opts;
    int n_opts;
} tflw_op;

typedef struct tflw_model {
    const tflw_tensor *tensors;
    int n_tensors;
    const tflw_op *ops;
    int n_ops;
    const int32_t *inputs;
    int n_inputs;
    const int32_t *outputs;
    int n_outputs;
    uint32_t version; /* 0 means 3 */
} tflw_model;

/* Serializes `m`; returns a malloc'ed buffer (free it) and its size in
 * *size, or NULL when out of memory. */
uint8_t *tflw_build(const tflw_model *m, size_t *size);

#endif
