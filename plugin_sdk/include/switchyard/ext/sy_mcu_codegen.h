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

typedef struct sy_mcu_codegen_ext {
    uint32_t struct_size;
    /* start recording the kernels that run (clears an earlier record) */
    void (*capture_begin)(void);
    /* stop recording and free the record */
    void (*capture_end)(void);
    /* write the package from the record of the last run; `summary` gets a
     * few lines (target, budgets, workspace, flash) for the caller to print */
    sy_status *(*emit)(const sy_mcu_codegen_request *req, char *summary, size_t summary_len);
} sy_mcu_codegen_ext;

#endif
