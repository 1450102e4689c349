/* The QAS-INT8 session's state (train_qas.c runs it, train_qas_checkpoint.c
 * saves and restores it). */
#ifndef SY_TRAIN_QAS_INTERNAL_H
#define SY_TRAIN_QAS_INTERNAL_H

#include "train_internal.h"

#include "qas.h"

#include <switchyard/sy_train.h>

#define MAX_LAYERS 16

typedef struct qas_layer {
    const Onnx__NodeProto *gemm; /* the layer's node: a Gemm, or a Conv when conv */
    /* the weight matrix [o, k] and the quantization (a Conv's: o output
     * channels, k = c·kh·kw) */
    qas_fc p;
    bool conv;
    qas_conv pc;               /* a Conv's geometry; h, w (and oh, ow) set at the first forward */
    int32_t pads[4];           /* a Conv's pads: top, left, bottom, right */
    int32_t in_n, out_n;       /* values per sample in and out (a Conv's: 0 until the first forward) */
    float *ws;                 /* [o] weight scales (a per-tensor scale repeated) */
    int8_t *w;                 /* [o, k] codes */
    int32_t *b;                /* [o] codes, NULL: no bias */
    float *wm, *bm, *wv, *bv;  /* master copies and momentum */
    float *gw, *gb;            /* a gradient row [k] (the update is in place; a Conv's whole [o, k]), bias gradients */
    bool relu;
    /* a Conv between layout Transposes (an int8 TFLite CONV_2D's
     * translation: Transpose(0,3,1,2) -> Conv -> Transpose(0,2,3,1)): its
     * input and output codes are NHWC, permuted around the NCHW kernels */
    bool nhwc;
    /* a MaxPool on the output codes r (a Conv's; the same quantization on
     * both sides): the next layer reads pl; dpl is the gradient of pl */
    bool pool;
    qas_pool pp;               /* c, h, w (its input: the Conv's output) and oh, ow set at the first forward */
    int32_t pool_pads[4];      /* top, left, bottom, right */
    int32_t pool_n;            /* pooled values per sample (0 until the first forward) */
    int8_t *pl;                /* [batch, pool_n] */
    float *dpl;                /* [batch, pool_n] */
    /* a Gemm that reads a Transpose (a constant full permutation keeping
     * the batch first) of the Conv before it, [c, h, w] -> tdims: its
     * input codes are the Conv's permuted, its input gradient permuted back */
    bool tp;
    int32_t tperm[4];          /* the perm (tperm[0] = 0) */
    int32_t tsrc[4];           /* the Conv's output dims [1, c, h, w] (set at the first forward) */
    const Onnx__NodeProto *dxn; /* the DequantizeLinear of the layer's input codes */
    Onnx__TensorProto *w_init, *b_init; /* where export writes the codes */
    int8_t *x, *y, *r;         /* [batch, k] input, [batch, o] FC output and ReLU output codes */
    float *dy, *dx;            /* [batch, o], [batch, k] */
} qas_layer;

struct sy_qas_session {
    Onnx__ModelProto *model;
    sy_model *pm;
    sy_session *ps;
    /* the front as ONNX bytes (codegen --train): [SY_QAS_FRONT_ALL] pm,
     * [SY_QAS_FRONT_AFTER_INPUT_Q] pm without its input's QuantizeLinear,
     * [SY_QAS_FRONT_INPUT_Q] that QuantizeLinear alone (NULL: no such split) */
    uint8_t *front_onnx[3];
    size_t front_len[3];
    size_t n_data;             /* inputs of the model (the labels follow) */
    qas_layer L[MAX_LAYERS];   /* L[0] reads the front's output */
    size_t n;
    bool biases_only;
    char *tflite_src;          /* the int8 .tflite the model was translated from (NULL: an ONNX model) */
    uint32_t tflite_subgraph;  /* the index of its subgraph translated */
    float momentum;
    float out_scale;           /* the logits' dequantization */
    int32_t out_zp;
    int64_t steps, cap;        /* batch capacity of the buffers */
    int32_t *labels;
    float *logits, *dlogits;
    sy_tensor out;
};

#endif
