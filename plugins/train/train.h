/*
 * The training plugin's shared declarations: the host table and the
 * registration tables of its files (optim.c: the ONNX optimizers).
 */
#ifndef SY_TRAIN_H
#define SY_TRAIN_H

#include "switchyard/sy_sdk.h"

/* ONNX's training domain (optimizers, Gradient) */
#define SY_TRAIN_ONNX_DOMAIN "ai.onnx.preview.training"

/* The host API table. Process-wide: every environment's host table is the
 * same one, and the plugin keeps no option of an environment in it. */
extern const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

extern const sy_op_schema sy_train_optim_schemas[];
extern const uint32_t sy_train_optim_n_schemas;
extern const sy_kernel_def sy_train_optim_kernels[];
extern const uint32_t sy_train_optim_n_kernels;

#endif
