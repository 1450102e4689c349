/*
 * The riscv_mcu plugin's extension table "riscv_mcu.codegen" (version 1),
 * fetched with sy_get_extension by `switchyard codegen`.
 *
 * The MCU cannot dlopen, so the plugin validates and plans on the host,
 * runs its kernels there, and writes a standalone C99 package: while a
 * capture is open, every riscv_mcu kernel that runs records its parameters
 * and the buffers it touched (weights in host memory, activations at their
 * planned offsets in the mcu_sram arena); emit() turns that record into the
 * package. One capture at a time per process (the CLI's use).
 */
#ifndef SWITCHYARD_EXT_SY_MCU_CODEGEN_H
#define SWITCHYARD_EXT_SY_MCU_CODEGEN_H

#include "../sy_types.h"

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

typedef struct sy_mcu_train_request {
    uint32_t struct_size;
    const char *dir, *model_name;
    uint32_t n_layers;
    const sy_mcu_train_layer *layers; /* layers[0] reads the samples */
    int32_t biases_only;              /* the sparse update: weights frozen (in flash) */
    float lr, momentum;               /* SGD, constant rate */
    uint32_t n_samples;               /* one step each */
    const int8_t *samples;            /* [n_samples, layers[0].k] */
    const int32_t *labels;            /* [n_samples] */
    uint64_t sram_budget;             /* 0: the chip's SRAM */
} sy_mcu_train_request;

typedef struct sy_mcu_codegen_ext {
    uint32_t struct_size;
    /* start recording the kernels that run (clears an earlier record) */
    void (*capture_begin)(void);
    /* stop recording and free the record */
    void (*capture_end)(void);
    /* write the package from the record of the last run; `summary` gets a
     * few lines (target, budgets, workspace, flash) for the caller to print */
    sy_status *(*emit)(const sy_mcu_codegen_request *req, char *summary, size_t summary_len);
    /* write a training package (no capture needed); `summary` gets the
     * memory plan against the chip. Present when struct_size covers it. */
    sy_status *(*emit_train)(const sy_mcu_train_request *req, char *summary, size_t summary_len);
} sy_mcu_codegen_ext;

#endif
