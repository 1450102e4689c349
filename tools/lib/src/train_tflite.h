/* TFLite models for training (train_tflite.c): one subgraph of a float
 * TFLite model (subgraph 0, or one chosen by signature name or index)
 * translated into an ONNX forward model in memory, which
 * sy_train_build then turns into artifacts like any ONNX model; and the
 * trained tensors written back into the original .tflite file.
 *
 * The translation keeps the model's NHWC interface: the layout-sensitive
 * operators (CONV_2D, DEPTHWISE_CONV_2D, the 2-D pools) are wrapped in
 * Transposes to and from NCHW, their filters become initializers in ONNX's
 * layout. Every float constant becomes an initializer named after its
 * TFLite tensor (a repeated name made unique with "#<index>"),
 * so a trained tensor maps back to the TFLite buffer it came from. */
#ifndef SY_TRAIN_TFLITE_H
#define SY_TRAIN_TFLITE_H

#include "tl_pool.h"

#include <switchyard/switchyard.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TR_SOURCE_TFLITE_FILE "source.tflite"
/* the index of the subgraph translated, in decimal (absent: 0), so the
 * export translates the same one again */
#define TR_SOURCE_SUBGRAPH_FILE "source.subgraph"

/* How an initializer's values sit relative to its TFLite buffer. */
typedef enum tr_tfl_layout {
    TR_TFL_AS_IS = 0, /* the same order (FULLY_CONNECTED weights [O, K], biases, constants) */
    TR_TFL_OHWI = 1,  /* CONV_2D filter [O, H, W, I] as ONNX Conv's [O, I, H, W] */
    TR_TFL_1HWC = 2   /* DEPTHWISE_CONV_2D filter [1, H, W, C] as [C, 1, H, W] */
} tr_tfl_layout;

/* A float constant of the TFLite model that became an ONNX initializer. */
typedef struct tr_tfl_param {
    const char *name;   /* the initializer (and value) name */
    int32_t tensor;     /* TFLite tensor index in the subgraph translated */
    uint32_t buffer;    /* its buffer index */
    uint64_t offset;    /* where the buffer's bytes are in the file */
    uint64_t nbytes;
    int layout;         /* tr_tfl_layout */
    int type;           /* TFLite TensorType: 0 float32 (the float translation); 9 int8, 2 int32 (the int8 one) */
    int32_t rank;       /* the TFLite shape */
    int64_t dims[8];
    bool shared;        /* another tensor reads the same buffer */
} tr_tfl_param;

typedef struct tr_tfl_model {
    tl_pool pl;             /* names */
    uint8_t *onnx;          /* malloc'd ONNX bytes (opset 13) */
    size_t onnx_len;
    tr_tfl_param *params;   /* in the pool */
    size_t n_params;
    uint32_t subgraph;      /* the subgraph translated */
} tr_tfl_model;

/* The FlatBuffer file identifier "TFL3" at byte 4. */
bool tr_tflite_is_tflite(const uint8_t *data, size_t size);
/* Translate the subgraph `subgraph` names: NULL or "" subgraph 0, else a
 * SignatureDef's signature_key, else a decimal index (an unknown name or an
 * index out of range: SY_ERR_NOT_FOUND naming `where`, the subgraph and
 * what the model has). Every refusal (a quantized model, an operator or a
 * form with no translation, a corrupt file) names `where` and the operator
 * or tensor. Free *out with tr_tflite_model_free, also after a failure. */
sy_status *tr_tflite_translate(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                               tr_tfl_model *out);
void tr_tflite_model_free(tr_tfl_model *m);
/* The subgraph of the TFLite file data that `want` names, as
 * tr_tflite_translate chooses it (NULL or "": 0; a signature_key, then a
 * decimal index), or `index` itself when it is >= 0; *out its index. An
 * unknown name or an index out of range: SY_ERR_NOT_FOUND naming `where`
 * and what the model has. */
sy_status *tr_tflite_pick_subgraph(const uint8_t *data, size_t size, const char *where, const char *want,
                                   int64_t index, uint32_t *out);

/* The int8 translation (train_tflite_int8.c) of one subgraph of a fully
 * quantized TFLite model (chosen by `subgraph` or `index` as
 * tr_tflite_pick_subgraph chooses; out->subgraph its index), for QAS-INT8: the ONNX QDQ form `switchyard
 * quantize` writes (int8 activations as QuantizeLinear / DequantizeLinear
 * pairs, int8 weights and int32 biases as initializers read through
 * DequantizeLinear). params lists the int8 weights (AS_IS or OHWI) and int32
 * biases. A float model (no int8 tensor), and every quantization or operator
 * outside the translated forms (uint8, int16, asymmetric or per-channel
 * activations, asymmetric weights, missing or invalid scales and zero
 * points), is refused naming the tensor or operator. Free *out with
 * tr_tflite_model_free, also after a failure. */
sy_status *tr_tflite_translate_int8(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                                    int64_t index, tr_tfl_model *out);
/* The int8 .tflite at src with the trained int8 codes (ONNX layout: a
 * filter [O, I, H, W], written back as OHWI) and int32 biases written over
 * their buffers in place, the scales and everything else unchanged; written
 * to path through a temporary file and a rename; `subgraph` the index of
 * the subgraph the session was translated from. */
sy_status *tr_tflite_export_int8(const char *src, uint32_t subgraph, const char *path, size_t n, const char *const *names,
                                 const void *const *values, const size_t *nbytes);

/* The .tflite at src with the trained tensors' buffers overwritten in
 * place by `values` (ONNX layout, transposed back to TFLite's), written to
 * path through a temporary file and a rename; `subgraph` is the index the
 * artifacts were built from (an index, not a name: a signature may be
 * called "1"). */
sy_status *tr_tflite_export(const char *src, uint32_t subgraph, const char *path, size_t n,
                            const char *const *names, const float *const *values, const size_t *nbytes);

#endif
