/*
 * The training plugin's shared declarations: the host table and the
 * registration tables of its files (optim.c: the ONNX optimizers;
 * grad_elem.c, grad_conv.c, grad_loss.c: backward operators).
 */
#ifndef SY_TRAIN_H
#define SY_TRAIN_H

#include "switchyard/sy_sdk.h"

/* ONNX's training domain (optimizers, Gradient) */
#define SY_TRAIN_ONNX_DOMAIN "ai.onnx.preview.training"
/* Switchyard's backward operators (grad_*.c) */
#define SY_TRAIN_DOMAIN "switchyard.train"

/* The host API table. Process-wide: every environment's host table is the
 * same one, and the plugin keeps no option of an environment in it. */
extern const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

/* one registration table pair per file */
#define SY_TRAIN_TABLES(part)                                                                                      \
    extern const sy_op_schema sy_train_##part##_schemas[];                                                         \
    extern const uint32_t sy_train_##part##_n_schemas;                                                             \
    extern const sy_kernel_def sy_train_##part##_kernels[];                                                        \
    extern const uint32_t sy_train_##part##_n_kernels;
SY_TRAIN_TABLES(optim)
SY_TRAIN_TABLES(elem)
SY_TRAIN_TABLES(conv)
SY_TRAIN_TABLES(loss)

#endif
