/*
 * The QDQ pass: folds DequantizeLinear -> op [-> Relu/Clip] -> QuantizeLinear
 * chains of an ONNX QDQ model into integer kernels, and retypes pass-through
 * ops to run on the quantized codes directly. Run at model load, before the
 * op check. Which op folds into which kernel, how, and which ops only move
 * codes is the "qdq_patterns" table (switchyard/ext/sy_qdq_patterns.h) of
 * the plugin that owns the kernels (ops_quant: Conv -> switchyard.quant
 * QConv, Relu -> QUnary, Reshape -> pass-through, ...); the core names none.
 *
 * It applies only when a loaded plugin publishes that table; it
 * leaves the model untouched otherwise, for graphs with subgraphs, and for
 * every chain whose parameters are not known constants. Each fold is
 * prepared completely before anything is changed, so an out-of-memory
 * failure leaves a valid (partially folded) model. The folded nodes carry
 * no `requant` attribute: the model is shared by sessions, and each session
 * chooses the requantization form (session option, provider, deployment;
 * see requant_form.c) and records it per node.
 */
#ifndef SY_PASS_QDQ_H
#define SY_PASS_QDQ_H

#include "env.h"
#include "ir.h"

/* Returns the number of nodes folded or retyped. */
uint32_t sy_pass_qdq(const sy_env *env, ir_model *m);

#endif
