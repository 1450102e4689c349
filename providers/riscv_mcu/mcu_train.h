/* The training packages' file writing, shared by the QAS-INT8 package
 * (mcu_train.c) and the FP32 one (mcu_train_f32.c). */
#ifndef MCU_TRAIN_H
#define MCU_TRAIN_H

#include "mcu.h"

#include <stdio.h>

/* a file being written: the packages' own (mcu.h) */
typedef mcu_out tout;
#define mcu_tr_P mcu_P
/* DIR/rel opened for writing, closed (a failed write is an error) */
sy_status *mcu_tr_topen(const char *dir, const char *rel, tout *o);
sy_status *mcu_tr_tclose(const char *dir, const char *rel, tout *o);
sy_status *mcu_tr_mkdirs(const char *dir);
/* an embedded kernel source copied to DIR/kernels/name */
sy_status *mcu_tr_copy_source(const char *dir, const char *name);
/* a float written as its exact bits, sy_f32(0x........u) */
void mcu_tr_pf(tout *o, float v);
/* 32-bit FNV-1a */
uint32_t mcu_tr_fnv(const void *p, size_t n);
/* The core's planner (sy_host_api.plan_blocks, ABI 1.7) on a package's
 * workspace: both packages place their transient buffers with the rule of a
 * session's arena rather than one of their own, so a host without it is
 * refused, `what` (the command) beginning the message that names the ABI. */
sy_status *mcu_tr_plan_blocks(const char *what, sy_plan_block *blocks, uint32_t n, uint64_t align,
                              uint64_t *arena_bytes, uint64_t *lower_bound);
/* `summary` gets this; NULL: within the budget; hi3066 refused (seed 001 §4) */
sy_status *mcu_tr_check_chip(const mcu_cfg *cfg, uint64_t want_budget, const mcu_chip **chip, uint64_t *budget);

/* DIR/CMakeLists.txt (sy_train_main from src/main.c, src/train.c,
 * src/samples.c and kernel_c; then extra's lines, NULL: none) and
 * DIR/toolchain-riscv32.cmake, whose RAM is the budget */
sy_status *mcu_tr_build_files(const char *dir, const mcu_chip *chip, uint64_t budget, const char *model_name,
                              const char *kernel_c);
sy_status *mcu_tr_build_files_ex(const char *dir, const mcu_chip *chip, uint64_t budget, const char *model_name,
                                 const char *kernel_c, const char *extra);

sy_status *mcu_emit_train_f32(const mcu_cfg *cfg, const sy_mcu_train_f32_request *req, char *summary, size_t len);

#endif
