/*
 * Switchyard training (libswitchyard_tools): on-device training in the shape
 * of ONNX Runtime's: an offline step turns a forward ONNX model into
 * artifacts — ONNX files any tool can open — and a small runtime API runs
 * training steps on them through the ordinary host API (docs/training.md).
 *
 *   sy_train_build          forward model + loss + trainable set ->
 *                           training.onnx (loss and gradients), eval.onnx
 *                           (loss and outputs), optimizer.onnx (one
 *                           ai.onnx.preview.training Adam or Momentum node
 *                           over every trainable tensor) and
 *                           checkpoint.onnx (the trainable tensors and the
 *                           optimizer state as initializers)
 *   sy_train_session_*      load the artifacts, step on a batch (returns the
 *                           loss), evaluate, save/load a checkpoint, export
 *                           the trained inference model
 *
 * The training graph's backward operators are the switchyard.train domain
 * of the `train` plugin (and forward operators); the optimizers are ONNX's.
 * Conventions are those of sy_tools.h (status returns, struct_size, files
 * written through a temporary file and a rename).
 */
#ifndef SWITCHYARD_SY_TRAIN_H
#define SWITCHYARD_SY_TRAIN_H

#include "switchyard.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sy_train_loss {
    SY_TRAIN_LOSS_CROSS_ENTROPY = 0, /* softmax cross-entropy of the logits against int64 class labels */
    SY_TRAIN_LOSS_MSE = 1            /* mean squared error against a float target of the output's shape */
} sy_train_loss;

typedef enum sy_train_trainable {
    SY_TRAIN_ALL = 0,      /* every float initializer that is a weight or bias operand */
    SY_TRAIN_LAST_K = 1,   /* those of the last `last_k` layers (nodes with weights) */
    SY_TRAIN_BIASES = 2    /* biases only (the sparse update of Lin et al. 2022) */
} sy_train_trainable;

typedef enum sy_train_optimizer {
    SY_TRAIN_SGD = 0,      /* Momentum node, standard mode; momentum 0 gives plain SGD */
    SY_TRAIN_ADAM = 1
} sy_train_optimizer;

typedef struct sy_train_build_options {
    size_t struct_size;  /* sizeof(sy_train_build_options) */
    int loss;            /* sy_train_loss */
    /* the model output the loss reads; NULL: output 0. For cross-entropy a
     * final Softmax is looked through: its input is the logits */
    const char *output;
    int trainable;       /* sy_train_trainable */
    int last_k;          /* SY_TRAIN_LAST_K: layers counted from the output */
    int optimizer;       /* sy_train_optimizer */
    float momentum;      /* SGD: 0 .. < 1 */
    float beta1, beta2, epsilon; /* Adam: 0 means 0.9, 0.999, 1e-8 */
    float weight_decay;  /* L2 coefficient (the optimizers' norm_coefficient) */
    /* The chip the training graph is for: NULL the host (no constraint);
     * "ws63": every node on the gradient path must match a row of seed 001
     * §4's training table (FP32 for a float model), else the build declines
     * quoting the row; "hi3066" is refused (the seed trains on ws63 only). */
    const char *target;
    /* The env that runs the forward model once, batch 1, to learn the value
     * shapes the target's rules check; NULL: the embedded default env. */
    sy_env *env;
    /* A TFLite model's subgraph to train: NULL or "" subgraph 0; else the
     * signature_key of one of its SignatureDefs, else a decimal index. An
     * unknown name or an index out of range is SY_ERR_NOT_FOUND (naming the
     * file, the subgraph and the model's signatures); given with an ONNX
     * model it is SY_ERR_INVALID_ARGUMENT. */
    const char *subgraph;
} sy_train_build_options;

typedef struct sy_train_build_report {
    size_t struct_size;     /* sizeof(sy_train_build_report) */
    size_t n_trainable;     /* tensors trained */
    int64_t trainable_elements;
    size_t forward_nodes, backward_nodes;
} sy_train_build_report;

/* Build the training artifacts of a float ONNX model into out_dir (created
 * if needed): training.onnx, eval.onnx, optimizer.onnx, checkpoint.onnx.
 * A float TFLite model (the "TFL3" identifier at byte 4, whatever the
 * file's name) is translated to an ONNX forward model first (NHWC kept,
 * the layout-sensitive operators wrapped in Transposes; docs/training.md
 * lists what is translated and what is refused, naming the operator or
 * tensor): forward.onnx then holds the translation and source.tflite the
 * original, which a .tflite export rewrites.
 * The data inputs keep their names with a symbolic batch dimension; the
 * labels (or target) input is "labels". A node on the gradient path that has
 * no backward rule is refused naming it. */
SY_EXPORT sy_status *sy_train_build(const char *model_path, const sy_train_build_options *opts, const char *out_dir,
                                    sy_train_build_report *report);

/* ---- the training runtime ---------------------------------------------- */

typedef struct sy_train_session sy_train_session;

/* Load the artifacts of sy_train_build from dir in env (its plugins must
 * include `train` and the forward families). */
SY_EXPORT sy_status *sy_train_session_create(sy_env *env, const char *dir, sy_train_session **out);
SY_EXPORT void sy_train_session_release(sy_train_session *s);

/* One optimizer step on a batch: `inputs` are the data inputs in the
 * training model's order followed by the labels (batch size from the first
 * dimension); writes the batch's mean loss. `lr` is this step's rate. */
SY_EXPORT sy_status *sy_train_session_step(sy_train_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                           float lr, float *loss);

/* The eval model on a batch (no update): the loss and output 0 (the
 * logits or prediction, borrowed until the next call). */
SY_EXPORT sy_status *sy_train_session_eval(sy_train_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                           float *loss, const sy_tensor **output);

/* What the loss read in the last step (logits or prediction, before the
 * update): borrowed until the next step. */
SY_EXPORT sy_status *sy_train_session_step_output(sy_train_session *s, const sy_tensor **output);

/* Steps taken (the optimizers' T). */
SY_EXPORT int64_t sy_train_session_steps(const sy_train_session *s);

/* Checkpoint: the trainable tensors, the optimizer state and the step
 * count, as an ONNX file of initializers. Loading refuses a checkpoint whose
 * tensors are not this model's (names, dtypes, shapes). */
SY_EXPORT sy_status *sy_train_session_save(sy_train_session *s, const char *path);
SY_EXPORT sy_status *sy_train_session_load(sy_train_session *s, const char *path);

/* The forward model with the trained tensors, as ONNX (the model the
 * artifacts were built from, its initializers replaced); a path ending in
 * ".tflite": the TFLite model the artifacts were built from, each trained
 * tensor's buffer overwritten in place in the TFLite layout (refused for
 * artifacts built from an ONNX model). Written through a temporary file
 * and a rename. */
SY_EXPORT sy_status *sy_train_session_export(sy_train_session *s, const char *path);

/* A trainable tensor's present values (borrowed until the next step, load
 * or release) and element count; NULL when `name` is not trained. */
SY_EXPORT const float *sy_train_session_tensor(const sy_train_session *s, const char *name, int64_t *numel);

/* ---- FP32 training packages (switchyard codegen --train --mode fp32) ---- */
/* The artifacts of sy_train_build read as the chain of layers an FP32
 * training package runs at batch 1: the forward model's nodes in order, each
 * reading the previous one's output — a depthwise Conv (group = C_in =
 * C_out, W [C, 1, kh, kw], stride 1, dilation 1, explicit pads, no bias),
 * Relu, Abs, Flatten (axis 1), Reshape, Squeeze or Unsqueeze keeping the
 * batch axis first, a Concat of the previous output and an earlier one or
 * the sample (or itself) on a non-batch axis,
 * a constant-mode Pad, a Slice (constant full-rank starts and ends,
 * positive steps), a Transpose, an Add, Sub or Mul with a constant c of the
 * input's shape, a Div x / c or c / x with a constant c broadcast with the
 * input, an Add, Sub, Mul or Div of the previous output and an
 * earlier one, the sample or itself of its shape (a residual), a ReduceSum or ReduceMean over constant axes (the batch
 * axis first and whole in all of them; rank <= SY_TRAIN_MAX_RANK), a Gemm
 * (alpha = beta = 1, A [1, K] not transposed, constant B [O, K] transposed
 * or [K, O] not, optional C [O]) or a MatMul of A [1, K] and a constant B
 * [K, O] — ending in the logits (a final Softmax looked through), and the
 * optimizer node's attributes. Another node is refused naming it. */
#define SY_TRAIN_MAX_RANK 8
typedef enum sy_train_layer_kind {
    SY_TRAIN_LAYER_CONV_DW = 1,
    SY_TRAIN_LAYER_RELU = 2,
    SY_TRAIN_LAYER_FLATTEN = 3, /* any reshape: no arithmetic, the same values */
    SY_TRAIN_LAYER_CONCAT_SELF = 4,
    SY_TRAIN_LAYER_GEMM = 5,
    SY_TRAIN_LAYER_ABS = 6,
    SY_TRAIN_LAYER_PAD = 7,       /* constant mode: start = the leading pads, value */
    SY_TRAIN_LAYER_SLICE = 8,     /* start = the starts, step the steps */
    SY_TRAIN_LAYER_TRANSPOSE = 9, /* perm */
    SY_TRAIN_LAYER_REDUCE_SUM = 10, /* axes */
    SY_TRAIN_LAYER_REDUCE_MEAN = 11,
    /* with a constant of the input's shape (w, w_name): no broadcasting */
    SY_TRAIN_LAYER_ADD = 12,
    SY_TRAIN_LAYER_SUB = 13, /* const_first: y = c − x */
    SY_TRAIN_LAYER_MUL = 14,
    SY_TRAIN_LAYER_DIV = 15, /* y = x / c (const_first: c / x); c broadcast, its dims w_dims */
    /* Concat of the input and another value (residual, other; const_first: the other first) on the axis
     * whose bit is set in axes */
    SY_TRAIN_LAYER_CONCAT = 16
} sy_train_layer_kind;
typedef struct sy_train_layer {
    int kind;               /* sy_train_layer_kind */
    const char *name;       /* the node */
    int64_t ic, ih, iw;     /* the input per sample (Gemm: ic = K, ih = iw = 1) */
    int64_t oc, oh, ow;     /* the output per sample */
    int64_t kh, kw, pt, pl; /* Conv: kernel, leading pads */
    const char *w_name, *b_name; /* initializers (NULL: none) */
    const float *w, *b;     /* their values in the forward model */
    int64_t w_numel, b_numel;
    /* the shapes, batch (1) first: ic·ih·iw and oc·oh·ow are their element counts */
    int32_t in_rank, out_rank;
    int64_t in_dims[SY_TRAIN_MAX_RANK], out_dims[SY_TRAIN_MAX_RANK];
    int64_t perm[SY_TRAIN_MAX_RANK];  /* Transpose: output axis d is input axis perm[d] */
    int64_t start[SY_TRAIN_MAX_RANK]; /* Slice: the starts; Pad: the leading pads (in_rank entries) */
    uint32_t axes;                    /* ReduceSum/ReduceMean: bit d, input axis d reduced; Concat: its axis */
    float value;                      /* Pad: the constant */
    int32_t const_first;              /* Add/Sub/Mul: the constant (or the other activation) is the first operand */
    /* Add/Sub/Mul/Div of two activations (a residual, w NULL; x ∘ x: the previous layer): the layer whose
     * output is the other operand, -1 the sample */
    int32_t residual, other;
    const char *output;               /* the value the layer writes */
    int64_t step[SY_TRAIN_MAX_RANK];  /* Slice: the steps (positive; 1 on the batch axis); Conv: step[2], step[3]
                                       * its strides (H, W) */
    /* Gemm: 1 when w (and the trained tensor of w_name) is B [K, O] in the model's layout (a MatMul, a
     * Gemm with transB = 0), 0 for B [O, K] (transB = 1) */
    int32_t w_kn;
    /* Div by a constant or of one (const_first, c / x): the constant's dims at the input's rank, 1
     * where it is broadcast; a Div of two activations: the other operand's dims (seed 001's Div row
     * allows broadcasting; the output has the larger of each pair), at the output's rank: of two
     * ranks, the lower-ranked operand's dims (w_dims, or in_dims and in_rank) follow leading 1s,
     * numpy's alignment from the last axis */
    int64_t w_dims[SY_TRAIN_MAX_RANK];
} sy_train_layer;
typedef struct sy_train_chain {
    size_t n_layers;
    sy_train_layer *layers;
    int optimizer;          /* sy_train_optimizer */
    float alpha, beta, epsilon, norm; /* the optimizer node's (Momentum: alpha, beta = 1 − dampening) */
    int nesterov;
} sy_train_chain;
SY_EXPORT sy_status *sy_train_chain_read(const char *dir, sy_train_chain **out);
SY_EXPORT void sy_train_chain_free(sy_train_chain *c);

/* ---- QAS-INT8 fine-tuning (Lin et al. 2022) ---------------------------- */

/* Fine-tuning the last fully connected layers (and 3x3 Conv layers before
 * them) of an int8 QDQ model (what `switchyard quantize` writes) with
 * Quantization-Aware Scaling: the
 * forward pass is int8 (the frozen front runs in the ordinary session, its
 * QDQ folded into integer kernels; the trained layers in the qas kernels of
 * plugin_sdk/kernels), the gradients are float, the gradient of each
 * quantized weight is divided by s_W² and of each bias by (s_W·s_x)² per
 * output channel, SGD with momentum updates a float copy of the codes and
 * the int8 weights and int32 biases are re-quantized from it after every
 * step (docs/training.md, "QAS-INT8"). The loss is the softmax
 * cross-entropy of the dequantized logits (a final Softmax is looked
 * through). */
typedef struct sy_qas_options {
    size_t struct_size; /* sizeof(sy_qas_options) */
    int last_k;         /* fully connected layers trained, counted from the output; 0 means 1 */
    int biases_only;    /* nonzero: only their biases (the sparse update) */
    float momentum;     /* SGD momentum, 0 .. < 1 */
    /* NULL the host; "ws63": every trained node must match its QAS-INT8
     * row of seed 001 §4 (declines quote the row); "hi3066" is refused */
    const char *target;
    /* an int8 .tflite model's subgraph to train: NULL or "" subgraph 0, else
     * a signature name, else a decimal index (as sy_train_build_options'
     * subgraph chooses); set for an ONNX model: refused. Read when
     * struct_size covers it. */
    const char *subgraph;
} sy_qas_options;

typedef struct sy_qas_report {
    size_t struct_size;  /* sizeof(sy_qas_report) */
    size_t layers;       /* layers trained */
    int64_t weights, biases; /* values trained */
    /* the trained layers' memory: int8 weight and int32 bias codes; float
     * state (master copies, momentum, gradients, scales) */
    size_t int8_bytes, float_bytes;
} sy_qas_report;

typedef struct sy_qas_session sy_qas_session;

SY_EXPORT sy_status *sy_qas_session_create(sy_env *env, const char *qdq_model, const sy_qas_options *opts,
                                           sy_qas_session **out, sy_qas_report *report);
SY_EXPORT void sy_qas_session_release(sy_qas_session *s);
/* One step: `inputs` are the model's inputs followed by int64 labels [N];
 * writes the batch's mean loss and, when logits is not NULL, the
 * dequantized logits before the update (borrowed until the next call). */
SY_EXPORT sy_status *sy_qas_session_step(sy_qas_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                         float lr, float *loss, const sy_tensor **logits);
/* The int8 forward only (no update): loss and dequantized logits. */
SY_EXPORT sy_status *sy_qas_session_eval(sy_qas_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                         float *loss, const sy_tensor **logits);
SY_EXPORT int64_t sy_qas_session_steps(const sy_qas_session *s);
/* A checkpoint of the trained state (int8 codes, int32 biases, float
 * master copies, momentum, the step count) as an ONNX file of initializers,
 * written through a temporary file and a rename; load refuses a checkpoint
 * whose tensors are not this session's (another model, another trainable
 * choice) and then leaves the session as it was. */
SY_EXPORT sy_status *sy_qas_session_save(sy_qas_session *s, const char *path);
SY_EXPORT sy_status *sy_qas_session_load(sy_qas_session *s, const char *path);
/* The QDQ model with the trained int8 weights and int32 biases; a path
 * ending in ".tflite" (a session built from an int8 TFLite model only): the
 * source .tflite with the trained int8 codes and int32 biases written into
 * their buffers in place, the scales unchanged. */
SY_EXPORT sy_status *sy_qas_session_export(sy_qas_session *s, const char *path);
/* The session was built from an int8 TFLite model (its ONNX QDQ translation). */
SY_EXPORT bool sy_qas_session_from_tflite(const sy_qas_session *s);

/* A trained layer's state, borrowed from the session (valid until its next
 * step or release): what `switchyard codegen --train` writes into a
 * training package. The master copies are NULL where not trained. */
typedef struct sy_qas_layer_info {
    size_t struct_size; /* sizeof(sy_qas_layer_info) */
    const char *name;   /* the Gemm node */
    int32_t k, o;       /* W is [o, k] */
    float x_scale, y_scale;
    int32_t x_zp, y_zp;
    int relu;           /* a ReLU on the output codes */
    const float *w_scale;           /* [o] */
    const int8_t *w;                /* [o, k] */
    const int32_t *bias;            /* [o], NULL: none */
    const float *w_master, *b_master;
    int conv;           /* a 3x3 Conv (W [o, c, kh, kw] as [o, k]) */
    /* a Conv's geometry per sample (NCHW; 0 until the first front, step or
     * eval has set it from the front's output), its strides and leading pads */
    int32_t ic, ih, iw, oh, ow, kh, kw, sh, sw, pt, pl;
    /* a Conv between NHWC layout Transposes (an int8 TFLite CONV_2D): the
     * codes it reads (as the first layer) and writes are NHWC, permuted
     * around the NCHW kernels */
    int nhwc;
    /* a MaxPool on the Conv's (ReLU's) output codes, of the same
     * quantization (DequantizeLinear -> MaxPool -> QuantizeLinear): the next
     * layer reads the pooled codes [o, pool_oh, pool_ow] (0 until the first
     * front, step or eval); its window, strides and leading pads */
    int pool;
    int32_t pool_kh, pool_kw, pool_sh, pool_sw, pool_pt, pool_pl, pool_oh, pool_ow;
    /* a Gemm reading a Transpose of the Conv before it (its codes permuted) */
    int transpose;
    /* that Transpose's permutation of the Conv's (pooled) [1, o, h, w]
     * codes (tperm[0] = 0; qas_perm_s8) */
    int32_t tperm[4];
} sy_qas_layer_info;
SY_EXPORT size_t sy_qas_session_layer_count(const sy_qas_session *s);
SY_EXPORT bool sy_qas_session_layer(const sy_qas_session *s, size_t index, sy_qas_layer_info *out);
/* The frozen front on the model's inputs: the int8 codes [N, k] the first
 * trained layer reads (borrowed until the next call). */
SY_EXPORT sy_status *sy_qas_session_front(sy_qas_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                          const sy_tensor **codes);
/* The frozen front as ONNX bytes, owned by the session: what a training
 * package runs on the device (switchyard codegen --train). ALL: the model
 * the session runs (the model's inputs to the first trained layer's int8
 * codes); when the front's one input is read by a QuantizeLinear alone (an
 * int8 or uint8 zero point), AFTER_INPUT_Q: the front from that node's
 * codes on (NULL when the front is that node alone), and INPUT_Q: that
 * node alone (the image to its codes); NULL (*len 0) when there is no such
 * part. */
enum { SY_QAS_FRONT_ALL = 0, SY_QAS_FRONT_AFTER_INPUT_Q = 1, SY_QAS_FRONT_INPUT_Q = 2 };
SY_EXPORT const uint8_t *sy_qas_session_front_onnx(const sy_qas_session *s, int part, size_t *len);

/* ---- data ---------------------------------------------------------------- */

/* An IDX file (the MNIST / Fashion-MNIST format), gzip-compressed or not:
 * a tensor of the stored element type (uint8, int8, int16, int32, float32,
 * float64) and shape, in host byte order. Free it with sy_idx_free. */
SY_EXPORT sy_status *sy_idx_read(const char *path, sy_tensor **out);
SY_EXPORT void sy_idx_free(sy_tensor *t);

/* One split of a labelled data set, in memory (the trainers' --data):
 *   - IDX files with the MNIST / Fashion-MNIST names in `dir`:
 *     train-images-idx3-ubyte and train-labels-idx1-ubyte (split "train"),
 *     t10k-... (split "test"), ".gz" or not; uint8 images [N, H, W] are
 *     samples [1, H, W] scaled by 1/255;
 *   - or, when the folder dir/SPLIT exists ("train" or "test"), its pairs
 *     input_K / label_K (K = 0, 1, ... without a gap; .npy or .pb each): a
 *     float32 input is one sample, or a batch [n, ...] when its label is a
 *     vector [n]; labels are integer class indices (uint8 to int64).
 * Every sample of a split has one shape. */
typedef struct sy_dataset sy_dataset;
SY_EXPORT sy_status *sy_dataset_open(const char *dir, const char *split, sy_dataset **out);
SY_EXPORT void sy_dataset_release(sy_dataset *d);
SY_EXPORT int64_t sy_dataset_size(const sy_dataset *d);
/* the shape of one sample (no batch dimension) into dims; returns its rank */
SY_EXPORT int32_t sy_dataset_sample_shape(const sy_dataset *d, int64_t dims[SY_MAX_RANK]);
SY_EXPORT int64_t sy_dataset_sample_numel(const sy_dataset *d);
/* Samples index[0..count) as float32 into x (count * sample_numel values)
 * and their labels into labels; with classes > 0 a label >= classes is
 * refused naming the sample. */
SY_EXPORT sy_status *sy_dataset_batch(const sy_dataset *d, const int64_t *index, int64_t count, int64_t classes,
                                      float *x, int64_t *labels);

#ifdef __cplusplus
}
#endif

#endif
