/* A loaded model: the IR plus the env it was validated against. */
#ifndef SY_MODEL_H
#define SY_MODEL_H

#include "env.h"
#include "ir.h"

struct sy_model {
    sy_env *env;
    ir_model *ir;
};

/* Check every node names an op some loaded plugin defines at the model's
 * opset; the error lists each unknown op with its domain and opset. */
sy_status *sy_model_check_ops(const sy_env *env, const ir_model *m);

#endif
