/*
 * The options `switchyard codegen --train` takes in both modes (qas-int8:
 * cmd_codegen_train.c, fp32: cmd_codegen_train_f32.c), parsed once so both
 * spell, check and refuse them alike.
 */
#ifndef SY_CLI_CODEGEN_TRAIN_ARGS_H
#define SY_CLI_CODEGEN_TRAIN_ARGS_H

#include <stdbool.h>

typedef struct cg_train_args {
    const char *model, *target, *dir, *data, *trainable, *sram;
    long steps;
    float lr, momentum;
    unsigned long long sram_budget; /* bytes; 0: the chip's */
} cg_train_args;

/* argv[*i] if it is a common option (--train, --mode V, --target, -o/--output,
 * --data, --trainable, --sram-budget, --steps, --lr, --momentum) or the
 * model: stored and *i moved past its value. Returns 1 when taken, 0 when
 * the mode must look at it, or a usage error's exit code (2) as -2. */
int cg_train_arg(int argc, char **argv, int *i, cg_train_args *a);

/* a number >= 0 (below 1 for momentum) for option `opt`: 0, or -2 after the usage error */
int cg_train_float(const char *opt, const char *v, float *out);

/* MODEL, --target, --data and -o given; --sram-budget parsed. 0 or -2. */
int cg_train_finish(cg_train_args *a);

#endif
