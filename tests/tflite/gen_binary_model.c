/*
 * gen_binary_model OUT OP S1 Z1 S2 Z2 SO ZO ACT: writes OUT, a TFLite model
 * of one int8 ADD, SUB or MUL (OP) of two [1, 65536] inputs "a" and "b"
 * with the given scales and zero points, output scale SO and zero point ZO,
 * fused activation ACT (NONE or RELU). 65536 elements hold every pair of
 * input codes, so one inference shows a kernel's whole table
 * (tflite_binary_real.mjs runs it through real TFLite and switchyard).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfl_writer.h"

/* BuiltinOperator and BuiltinOptions codes of the TFLite schema */
enum { OP_ADD = 0, OP_MUL = 18, OP_SUB = 41, BO_ADD = 11, BO_MUL = 21, BO_SUB = 28 };

static int num(const char *s, double lo, double hi, double *v)
{
    char *end = NULL;
    *v = strtod(s, &end);
    return end != s && !*end && *v >= lo && *v <= hi;
}

int main(int argc, char **argv)
{
    if (argc != 10) {
        fprintf(stderr, "usage: gen_binary_model OUT ADD|SUB|MUL S1 Z1 S2 Z2 SO ZO NONE|RELU\n");
        return 2;
    }
    int32_t code, opts;
    if (!strcmp(argv[2], "ADD"))
        code = OP_ADD, opts = BO_ADD;
    else if (!strcmp(argv[2], "SUB"))
        code = OP_SUB, opts = BO_SUB;
    else if (!strcmp(argv[2], "MUL"))
        code = OP_MUL, opts = BO_MUL;
    else {
        fprintf(stderr, "gen_binary_model: operator '%s': expected ADD, SUB or MUL\n", argv[2]);
        return 2;
    }
    float scales[3];
    int64_t zps[3];
    for (int i = 0; i < 3; i++) {
        double s, z;
        if (!num(argv[3 + 2 * i], 1e-12, 1e12, &s) || !num(argv[4 + 2 * i], -128, 127, &z) || z != (int64_t)z) {
            fprintf(stderr, "gen_binary_model: scale '%s' / zero point '%s': expected a positive scale and an int8 zero point\n",
                    argv[3 + 2 * i], argv[4 + 2 * i]);
            return 2;
        }
        scales[i] = (float)s;
        zps[i] = (int64_t)z;
    }
    int relu = !strcmp(argv[9], "RELU");
    if (!relu && strcmp(argv[9], "NONE")) {
        fprintf(stderr, "gen_binary_model: activation '%s': expected NONE or RELU\n", argv[9]);
        return 2;
    }
    static const char *names[3] = {"a", "b", "y"};
    tflw_tensor ts[3];
    for (int i = 0; i < 3; i++)
        ts[i] = (tflw_tensor){.name = names[i], .type = TFLW_INT8, .rank = 2, .dims = {1, 65536}, .n_quant = 1,
                              .scales = &scales[i], .zero_points = &zps[i]};
    const int32_t in[2] = {0, 1}, out = 2;
    const tflw_opt act = {.id = 0, .kind = TFLW_OPT_U8, .i = relu}; /* fused_activation_function: 1 = RELU */
    const tflw_op op = {.code = code, .inputs = in, .n_inputs = 2, .outputs = &out, .n_outputs = 1,
                        .options_type = (uint8_t)opts, .opts = &act, .n_opts = 1};
    const tflw_model m = {.tensors = ts, .n_tensors = 3, .ops = &op, .n_ops = 1, .inputs = in, .n_inputs = 2,
                          .outputs = &out, .n_outputs = 1};
    size_t size = 0;
    uint8_t *buf = tflw_build(&m, &size);
    FILE *f = buf ? fopen(argv[1], "wb") : NULL;
    int ok = f && fwrite(buf, 1, size, f) == size;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(buf);
    if (!ok) {
        fprintf(stderr, "gen_binary_model: cannot write %s\n", argv[1]);
        remove(argv[1]);
        return 1;
    }
    return 0;
}
