/* Encodings (scale, zero point) of a QDQ model's integer values (see the .c). */
#ifndef SY_QDQ_ENCODINGS_H
#define SY_QDQ_ENCODINGS_H

#include "ir.h"

/* Before the QDQ pass: each QuantizeLinear output gets its constant
 * per-tensor scale and zero point as ir_value.quant. */
void sy_qdq_record_encodings(ir_model *m);
/* After it: the pass-through ops retyped to codes pass their input's on. */
void sy_qdq_pass_encodings(ir_model *m);

#endif
