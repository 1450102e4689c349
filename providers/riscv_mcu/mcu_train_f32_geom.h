/* The FP32 training package's shape layers (Abs, Pad, Slice, Transpose, the element-wise layers, Concat,
 * ReduceSum/Mean): their checks and the C the package runs for them
 * (mcu_train_f32_geom.c), for mcu_train_f32.c. */
#ifndef MCU_TRAIN_F32_GEOM_H
#define MCU_TRAIN_F32_GEOM_H

#include "mcu_train.h"

#include "tflk.h"

#include <string.h>

/* kind takes its shapes from geom */
bool mcu_f32_geom_kind(int32_t kind);
/* Add, Sub, Mul, Div with a constant w<i> of the input's shape */
bool mcu_f32_elt_kind(int32_t kind);
/* a Div by or of a constant whose input is stretched by broadcasting (its gradient is summed over the
 * stretched axes, into a buffer of its own) */
bool mcu_f32_div_stretched(const sy_mcu_f32_geom *g, int32_t kind);
/* a Div of two activations broadcast against each other (geom.start the other operand's dims): its
 * backward is trk_div_bcast_grad, the input's gradient into a buffer of its own */
bool mcu_f32_div2_bcast(const sy_mcu_f32_geom *g, int32_t kind);
/* a residual's other operand's element count: a broadcasting Div's geom.start, else the input's n_in */
int64_t mcu_f32_other_numel(const sy_mcu_f32_geom *g, int32_t kind, int64_t n_in);
/* the element count of an element-wise layer's constant w: a Div's broadcast one (geom.start its dims)
 * or the input's n_in */
int64_t mcu_f32_elt_w_numel(const sy_mcu_f32_geom *g, int32_t kind, int64_t n_in);
/* geom agrees with the kind and the layer's element counts */
bool mcu_f32_geom_ok(const sy_mcu_f32_geom *g, int32_t kind, int64_t n_in, int64_t n_out);
/* layer i's static descriptors (the backward's shapes too when it runs) */
void mcu_f32_geom_decl(tout *o, int32_t kind, const sy_mcu_f32_geom *g, uint32_t i, bool backward);
/* its forward from buffer `in` into a<i> */
void mcu_f32_geom_forward(tout *o, int32_t kind, const sy_mcu_f32_geom *g, uint32_t i, const char *in);
/* its backward: g holds dy; afterwards g holds dx (h the scratch); `in`: its input's buffer (Abs's sign) */
void mcu_f32_geom_backward(tout *o, int32_t kind, const sy_mcu_f32_geom *g, uint32_t j, const char *in);

/* a Concat of two values: its forward from `in` and the other operand's buffer `oth` into a<i> (in_place:
 * into `in`'s buffer, trk_concat_in_place); its
 * backward: g holds dy; afterwards g holds the input's gradient, the other's in gp<j> when `pending` */
void mcu_f32_concat_forward(tout *o, const sy_mcu_f32_geom *g, uint32_t i, const char *in, const char *oth,
                            bool in_place);
void mcu_f32_concat_backward(tout *o, const sy_mcu_f32_geom *g, uint32_t j, bool pending);

/* an element-wise layer's backward and, its constant trained, the constant's update (gradient in
 * gw<j>, the package's pointer into its arena); dx: the input's gradient is wanted (in place in g); a residual's (two activations, the
 * other's buffer `oth`): the other operand's gradient into gp<j> when `pending` (it is wanted) */
void mcu_f32_elt_backward(tout *o, const sy_mcu_f32_layer *L, const sy_mcu_f32_geom *g, uint32_t j, const char *in,
                          const char *oth, bool dx, bool adam, bool pending);

#endif
