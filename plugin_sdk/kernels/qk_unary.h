/* qk_unary: the functions of switchyard.quant QUnary (qk_unary.c). An
 * 8-bit QUnary is a 256-entry table of output codes, entry q =
 * QuantizeLinear(f(DequantizeLinear(q))) (sy_rq_quantize's round half to
 * even of x / scale in float, plus the zero point, saturated), with f the
 * fp32 function of tflk_unary.c: ops_quant builds it per run, riscv_mcu
 * once at prepare (MK_LUT_S8), so the math of f is written once. */
#ifndef QK_UNARY_H
#define QK_UNARY_H
#include "tflk.h"

/* fn (an ONNX op name, as the QDQ pass writes it) as a tflk_unary with that
 * op's attribute defaults in alpha/beta: 0, or -1 for an unknown name.
 * Clip's bounds are alpha (min) and beta (max). `*which` tells the caller
 * which attributes the fn reads: bit 0 alpha, 1 beta, 2 gamma (as beta:
 * Selu), 3 min/max (Clip), 4 approximate (Gelu). */
int qk_unary_fn(const char *fn, tflk_unary *u, int32_t *which);
/* the list of fn names, NULL-terminated (error messages, docs) */
extern const char *const qk_unary_fn_names[];
/* the table for codes xlo..xhi (at most 256): table[q - xlo] */
void qk_unary_table(const tflk_unary *u, float sx, int32_t zx, int32_t xlo, int32_t xhi, float sy, int32_t zy,
                    int32_t lo, int32_t hi, int32_t *table);
#endif
