/*
 * The riscv_mcu plugin's extension table "riscv_mcu.codegen" (version 1,
 * grown append-only), fetched with sy_get_extension by `switchyard codegen`.
 *
 * The MCU cannot dlopen, so the plugin validates and plans on the host,
 * runs its kernels there, and writes a standalone C99 package: while a
 * capture runs its session, every riscv_mcu kernel of that session records
 * its parameters and the buffers it touched (weights in host memory,
 * activations at their planned offsets in the mcu_sram arena);
 * capture_emit() turns that record into the package.
 *
 * The capture belongs to one session (docs/mcu.md, "Where the capture
 * lives"): runs of other sessions, in this environment or another one,
 * never enter it, and captures of different sessions share nothing, so two
 * threads may generate code at once, each with its own capture and
 * session. One capture and its session are used by one thread at a time,
 * like any session.
 *
 *   const sy_mcu_codegen_ext *x = sy_get_extension(env, SY_MCU_EXT_NAME, SY_MCU_EXT_VERSION);
 *   if (!x || !sy_mcu_ext_has_capture(x)) ... too old
 *   x->session_create(x, env, model, &opts, &session, &cap);  // instead of sy_session_create
 *   sy_session_set_input(session, ...);
 *   x->capture_run(cap);                                       // one run, recorded
 *   sy_session_get_output(session, ...);
 *   x->capture_emit(cap, &req, summary, sizeof summary);
 *   x->capture_release(cap);
 *   sy_session_release(session);
 */
#ifndef SWITCHYARD_EXT_SY_MCU_CODEGEN_H
#define SWITCHYARD_EXT_SY_MCU_CODEGEN_H

#include "../sy_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sy_env;
struct sy_model;
struct sy_session;
struct sy_session_options;

#define SY_MCU_EXT_NAME "riscv_mcu.codegen"
#define SY_MCU_EXT_VERSION 1

typedef struct sy_mcu_codegen_request {
    uint32_t struct_size;
    const char *dir;        /* output folder, created if absent */
    const char *model_name; /* for comments and the README */
    /* the planned arena of the "mcu_sram" domain (sy_session_memory_report) */
    size_t workspace_bytes;
    /* graph inputs and outputs of the host run, in model order: their
     * names locate them in the workspace; input data becomes the test
     * input of main.c, output data expected_output.txt */
    uint32_t n_inputs, n_outputs;
    const sy_tensor *const *inputs;
    const sy_tensor *const *outputs;
    /* appended: the prefix of the package's public names (PREFIX_model.h,
     * PREFIX_model_create, PREFIX_MODEL_WORKSPACE_BYTES ...), so several
     * packages link into one image; NULL or a shorter struct: "sy" */
    const char *prefix;
} sy_mcu_codegen_request;

/* A training package (`switchyard codegen --train`): QAS-INT8 steps of a
 * chain of fully connected layers (plugin_sdk/kernels/qas.c), batch 1, over
 * samples that are the int8 codes the frozen front of the model gives the
 * first trained layer. The layers' state starts as given; *_final is the
 * host's state after the same steps, for expected_output.txt. */
typedef struct sy_mcu_train_layer {
    int32_t k, o;
    float x_scale, y_scale;
    int32_t x_zp, y_zp;
    int32_t relu;             /* a ReLU on the output codes (zero point y_zp) */
    const float *w_scale;     /* [o] */
    const int8_t *w;          /* [o, k] codes */
    const int32_t *bias;      /* [o] codes, NULL: none */
    const int8_t *w_final;
    const int32_t *bias_final;
    const float *w_master_final, *b_master_final;
} sy_mcu_train_layer;

/* A trained layer's convolution (seed 001 §4's QAS-INT8 Conv row: 3x3,
 * group 1, dilation 1), per sample, NCHW: W [o, c, kh, kw] is the layer's
 * [o, k] codes (k = c·kh·kw), the input [c, h, w] (the samples' bytes when
 * it is the first layer, else the previous Conv's output), the output
 * [o, oh, ow]; conv 0: a fully connected layer (the rest unread). */
typedef struct sy_mcu_train_conv {
    int32_t conv;
    int32_t c, h, w, oh, ow, kh, kw, sh, sw, pt, pl;
} sy_mcu_train_conv;

/* a MaxPool's window, strides, leading pads and output size (its input is
 * the Conv's output, its channels the Conv's) */
typedef struct sy_mcu_train_pool {
    int32_t pool;
    int32_t kh, kw, sh, sw, pt, pl, oh, ow;
} sy_mcu_train_pool;

typedef struct sy_mcu_train_request {
    uint32_t struct_size;
    const char *dir, *model_name;
    uint32_t n_layers;
    const sy_mcu_train_layer *layers; /* layers[0] reads the samples */
    int32_t biases_only;              /* the sparse update: weights frozen (in flash) */
    float lr, momentum;               /* SGD, constant rate */
    uint32_t n_samples;               /* one step each */
    const int8_t *samples;            /* [n_samples, the first layer's input size] */
    const int32_t *labels;            /* [n_samples] */
    uint64_t sram_budget;             /* 0: the chip's SRAM */
    /* ---- appended (check struct_size): the layers that are Convs */
    const struct sy_mcu_train_conv *convs; /* [n_layers], NULL: all fully connected */
    /* ---- appended (check struct_size): the frozen front on the device.
     * front_prefix NULL: the samples are the front's output codes (computed
     * on the host). Else DIR/front is an inference package of the front
     * (capture_emit with that prefix: PREFIX_model_predict, its own
     * workspace of front_workspace_bytes, its weights const in flash), the
     * samples are the front's inputs, front_input_bytes each, and the
     * package runs the front on each before its training step; `samples`
     * is then unread. The caller writes DIR/front after this succeeds, so
     * that a refused plan writes nothing. */
    const char *front_prefix;
    uint64_t front_workspace_bytes, front_input_bytes;
    const void *front_inputs; /* [n_samples, front_input_bytes] */
    /* ---- appended (check struct_size): the Convs are NHWC layers (an int8
     * TFLite CONV_2D between the translation's layout Transposes; a chain's
     * Convs are all NHWC or all NCHW). Their geometry and filters stay NCHW
     * as above; what differs is at the chain's two ends: a first-layer
     * Conv's samples (or the front's output) are [h, w, c] codes, and the
     * fully connected layer after the last Conv reads its output flattened
     * in NHWC order, so that layer's w, w_final and w_master_final columns
     * are in (h, w, c) order, as the host session holds them. The package
     * permutes the samples and those columns once when it is written and
     * prints them back in the host's order. */
    int32_t nhwc;
    /* ---- appended (check struct_size): a MaxPool on a Conv layer's output
     * codes (after its ReLU; one quantization on both sides, qas_pool): the
     * next layer reads the pooled codes [o, oh, ow]. [n_layers], NULL or
     * pool 0: none. */
    const struct sy_mcu_train_pool *pools;
    /* ---- appended (check struct_size): a fully connected layer reading a
     * Transpose of the previous (NCHW) Conv layer's codes, pooled or not
     * ([1, o, h, w], a constant permutation keeping the batch first, one
     * quantization on both sides): perms[4 i .. 4 i + 3] is layer i's
     * permutation (perms[4 i] = 0), all zero: none. [4 n_layers], NULL:
     * none. The package permutes the codes into the layer's input and its
     * input gradient back each step, as the host session does (qas_perm_s8,
     * qas_unperm_f32). */
    const int32_t *perms;
} sy_mcu_train_request;

/* An FP32 training package (`switchyard codegen --train --mode fp32`): the
 * chain of layers of a float model (sy_train_chain_read), batch 1, all of
 * it on the device: the forward in tflk's float kernels, the backward and
 * the optimizer in plugin_sdk/kernels/trk.c (the host trainer's code), the
 * trained tensors and the optimizer state in RAM, frozen ones const in
 * flash. *_final is the host's state after the same steps, for
 * expected_output.txt. */
typedef enum sy_mcu_f32_kind {
    SY_MCU_F32_CONV_DW = 1, /* depthwise, stride 1, no bias: W [C, 1, kh, kw] */
    SY_MCU_F32_RELU = 2,
    SY_MCU_F32_FLATTEN = 3,
    SY_MCU_F32_CONCAT_SELF = 4, /* the input twice on the channel axis */
    SY_MCU_F32_GEMM = 5,        /* y = x·Wᵀ + b, W [oc, ic] (request.w_kn: [ic, oc], y = x·W + b) */
    /* appended: these read their shapes from the request's geom */
    SY_MCU_F32_ABS = 6,
    SY_MCU_F32_PAD = 7,         /* constant: start = the leading pads, value */
    SY_MCU_F32_SLICE = 8,       /* start = the starts, step the steps */
    SY_MCU_F32_TRANSPOSE = 9,   /* odims[d] = idims[perm[d]] */
    SY_MCU_F32_REDUCE_SUM = 10, /* over the axes of the mask */
    SY_MCU_F32_REDUCE_MEAN = 11,
    /* with a constant w of the input's shape (trained or frozen; Div's never trained, and broadcast) */
    SY_MCU_F32_ADD = 12,        /* or, geom.residual, of two activations (all four; Div either order) */
    SY_MCU_F32_SUB = 13,        /* const_first: y = w − x */
    SY_MCU_F32_MUL = 14,
    SY_MCU_F32_DIV = 15,        /* y = x / w (const_first: w / x), w broadcast: geom.start its dims */
    /* of two values, geom.residual: the input and geom.other's output (const_first: the other first) on
     * the axis of geom.axes' one bit (not the batch axis); odims the output's, the other's the same but
     * odims[axis] − idims[axis] there */
    SY_MCU_F32_CONCAT = 16
} sy_mcu_f32_kind;

/* The shapes of an FP32 layer, batch (1) first, rank <= 8 (tflk's, the Slice and Reduce rows' 1-8): the
 * input's and the output's at the same rank (a Reduce's reduced axes of
 * size 1, whatever its keepdims: the values are the same) */
#define SY_MCU_F32_MAX_RANK 8
typedef struct sy_mcu_f32_geom {
    int32_t rank;
    int32_t idims[SY_MCU_F32_MAX_RANK], odims[SY_MCU_F32_MAX_RANK];
    int32_t perm[SY_MCU_F32_MAX_RANK];  /* Transpose: output axis d is input axis perm[d] */
    /* Slice: the starts; Pad: the leading pads; Div by or of a constant: the constant's dims at the
     * input's rank, 1 where broadcast (all 0: the input's); Div of two activations: the other
     * operand's dims (all 0: the input's) */
    int32_t start[SY_MCU_F32_MAX_RANK];
    uint32_t axes;                      /* Reduce: bit d, axis d reduced; Concat: its axis's bit */
    float value;                        /* Pad: the constant */
    int32_t const_first;                /* Add/Sub/Mul: w (or the other activation) is the first operand */
    /* Add/Sub/Mul/Div of two activations (w NULL): the layer whose output is the
     * other operand (< this one; -1 the sample) */
    int32_t residual, other;
    /* Slice: the steps (0 taken as 1); depthwise Conv: step[2], step[3] its strides (H, W; 0 taken as
     * 1), other than 1 only where its backward does not run */
    int32_t step[SY_MCU_F32_MAX_RANK];
} sy_mcu_f32_geom;

typedef struct sy_mcu_f32_layer {
    int32_t kind;             /* sy_mcu_f32_kind */
    int32_t ic, ih, iw, oc, oh, ow; /* per sample, NCHW (Gemm: ic = K) */
    int32_t kh, kw, pt, pl;   /* Conv */
    const float *w, *b;       /* the starting values; b NULL: none */
    int32_t w_numel, b_numel;
    int32_t train_w, train_b; /* trained (in RAM) or frozen (in flash) */
    const float *w_final, *b_final; /* the host's values after the steps (trained ones) */
} sy_mcu_f32_layer;

typedef struct sy_mcu_train_f32_request {
    uint32_t struct_size;
    const char *dir, *model_name;
    uint32_t n_layers;
    const sy_mcu_f32_layer *layers; /* layers[0] reads the samples, the last gives the logits */
    int32_t optimizer;        /* 0 ONNX Momentum, 1 ONNX Adam */
    float lr;                 /* constant */
    float alpha, beta, epsilon, norm; /* the optimizer node's attributes */
    int32_t nesterov;
    uint32_t n_samples;       /* one step each */
    int32_t sample_numel;     /* layers[0]'s input per sample */
    const float *samples;     /* [n_samples, sample_numel] */
    const int32_t *labels;    /* [n_samples] */
    uint64_t sram_budget;     /* 0: the chip's SRAM */
    /* Adam: each step's bias-corrected rate as the host trainer computed it
     * (libm's powf there; stored in flash, one per step); NULL: the package
     * computes it (trk_adam_rate) */
    const float *rates;
    /* ---- appended (check struct_size): [n_layers], each layer's shapes;
     * NULL: the chain has none of the kinds from SY_MCU_F32_ABS on */
    const sy_mcu_f32_geom *geom;
    /* ---- appended: [n_layers], 1 where a Gemm's w (and w_final) is in the
     * model's [ic, oc] layout (a MatMul, a Gemm with transB = 0): the package
     * holds it transposed, [oc, ic], for tflk_fc_f32 and trk.c, and prints it
     * back in [ic, oc]; NULL: every Gemm's w is [oc, ic] */
    const int32_t *w_kn;
    /* ---- appended: sizeof(sy_mcu_f32_geom) as the caller built geom (its
     * dims grew from 6 axes to 8): the plugin refuses geoms of another size
     * rather than read them at its own stride */
    uint32_t geom_size;
} sy_mcu_train_f32_request;

/* The record of one session's riscv_mcu kernels (opaque, the plugin's). */
typedef struct sy_mcu_capture sy_mcu_capture;

typedef struct sy_mcu_codegen_ext {
    uint32_t struct_size;
    /* ---- the first layout: retired ----
     * These kept one capture per process: every riscv_mcu kernel that ran,
     * in any environment or session, went into it, and two codegens at
     * once corrupted each other. capture_begin and capture_end now do
     * nothing, and emit refuses with SY_ERR_UNSUPPORTED naming the
     * entry points below. */
    void (*capture_begin)(void);
    void (*capture_end)(void);
    sy_status *(*emit)(const sy_mcu_codegen_request *req, char *summary, size_t summary_len);
    /* Refuses likewise: it read the chip of the environment created last in
     * the process. Use emit_train_env. */
    sy_status *(*emit_train)(const sy_mcu_train_request *req, char *summary, size_t summary_len);

    /* ---- appended: the capture belongs to a session (check struct_size:
     * sy_mcu_ext_has_capture) ----
     * `self` is the table sy_get_extension returned for the environment: the
     * plugin finds its state in that environment from it. */

    /* sy_session_create of `model` in `env` (the environment `self` came
     * from), plus a capture of that session in *capture. The session runs
     * on one thread whatever opts or the INI say (threads = 1): the package
     * runs its kernels in the order the record has them. Fails, creating
     * nothing, when env has no riscv_mcu provider with a target or is not
     * the environment of `self`. The caller releases both: the capture with
     * capture_release, the session with sy_session_release, in either
     * order. */
    sy_status *(*session_create)(const struct sy_mcu_codegen_ext *self, struct sy_env *env,
                                 const struct sy_model *model, const struct sy_session_options *opts,
                                 struct sy_session **session, sy_mcu_capture **capture);
    /* Run the session once (sy_session_run) with its riscv_mcu kernels
     * recording; clears the record of an earlier capture_run. Set the inputs
     * before, read the outputs after, as with sy_session_run. */
    sy_status *(*capture_run)(sy_mcu_capture *capture);
    /* Write the package from the record of the last capture_run, for the
     * target and budgets of the session's environment. `summary` gets a few
     * lines (target, budgets, workspace, flash) for the caller to print.
     * Fails when the session was released or never run by capture_run. */
    sy_status *(*capture_emit)(sy_mcu_capture *capture, const sy_mcu_codegen_request *req, char *summary,
                               size_t summary_len);
    /* Free the capture (NULL: nothing); its session stays as it is. */
    void (*capture_release)(sy_mcu_capture *capture);
    /* Write a training package (no capture needed) for the chip of the
     * environment of `self`; `summary` gets the memory plan against it. */
    sy_status *(*emit_train_env)(const struct sy_mcu_codegen_ext *self, const sy_mcu_train_request *req,
                                 char *summary, size_t summary_len);

    /* ---- appended: FP32 training packages (check sy_mcu_ext_has_train_f32) ---- */
    /* Write an FP32 training package for the chip of the environment of
     * `self` (hi3066 refused with seed 001's sentence); `summary` gets the
     * memory plan against it. */
    sy_status *(*emit_train_f32_env)(const struct sy_mcu_codegen_ext *self, const sy_mcu_train_f32_request *req,
                                     char *summary, size_t summary_len);
} sy_mcu_codegen_ext;

/* Does the table have the session-owned capture (session_create ..
 * emit_train_env)? */
#define sy_mcu_ext_has_capture(x)                                                                                 \
    ((x)->struct_size >= offsetof(sy_mcu_codegen_ext, emit_train_env) + sizeof(void *) &&                          \
     (x)->emit_train_env != NULL)

/* Does the table have emit_train_f32_env? */
#define sy_mcu_ext_has_train_f32(x)                                                                               \
    ((x)->struct_size >= offsetof(sy_mcu_codegen_ext, emit_train_f32_env) + sizeof(void *) &&                      \
     (x)->emit_train_f32_env != NULL)

#ifdef __cplusplus
}
#endif
#endif
