/*
 * gen_act_model OUT FORM: writes OUT, a TFLite model of one int8 CONV_2D
 * (input [1, 9, 9, 3], filter [8, 3, 3, 3] per-channel, stride 1, SAME) on
 * fixed pseudo-random weights, whose output scale is small enough that the
 * RELU6 clamp q(6) = zp + round(6 / s) falls inside the int8 codes (so a
 * clamp at 6 is exercised, not only the one at 0). FORM:
 *   fused      the CONV_2D carries fused RELU6
 *   split      CONV_2D (NONE) + a RELU6 node on the conv's output
 *              quantization (what a converter honouring the seed writes)
 *   tanh       the CONV_2D carries fused TANH (no seed row composes)
 *   n1to1      the CONV_2D carries fused RELU_N1_TO_1 (no seed row)
 * tests/mcu/test_mcu_fused_act.sh runs the pair through riscv_mcu and real
 * TFLite.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfl_writer.h"

/* BuiltinOperator, BuiltinOptions and ActivationFunctionType codes of schema.fbs */
enum { OP_CONV_2D = 3, OP_RELU6 = 21, BO_CONV2D = 1 };
enum { ACT_NONE = 0, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3, ACT_TANH = 4 };
enum { CI = 3, CO = 8, HW = 9, K = 3 };

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_act_model OUT fused|split|tanh|n1to1\n");
        return 2;
    }
    const char *form = argv[2];
    int act, split = !strcmp(form, "split");
    if (!strcmp(form, "fused"))
        act = ACT_RELU6;
    else if (split)
        act = ACT_NONE;
    else if (!strcmp(form, "tanh"))
        act = ACT_TANH;
    else if (!strcmp(form, "n1to1"))
        act = ACT_RELU_N1_TO_1;
    else {
        fprintf(stderr, "gen_act_model: form '%s': expected fused, split, tanh or n1to1\n", form);
        return 2;
    }
    static int8_t w[CO * K * K * CI];
    static int32_t bias[CO];
    uint32_t st = 12345u;
    for (size_t i = 0; i < sizeof w; i++) {
        st = st * 1664525u + 1013904223u;
        w[i] = (int8_t)((int)(st >> 24) - 128);
    }
    for (int i = 0; i < CO; i++) {
        st = st * 1664525u + 1013904223u;
        bias[i] = (int32_t)(st >> 20) - 2048;
    }
    static float wsc[CO];
    static int64_t wzp[CO];
    for (int i = 0; i < CO; i++)
        wsc[i] = 0.004f + 0.001f * (float)i;
    float xs = 0.05f, ys = 0.06f; /* q(6) = zp + 100 */
    int64_t xz = 3, yz = -20;
    tflw_tensor ts[5] = {
        {.name = "x", .type = TFLW_INT8, .rank = 4, .dims = {1, HW, HW, CI}, .n_quant = 1, .scales = &xs,
         .zero_points = &xz},
        {.name = "w", .type = TFLW_INT8, .rank = 4, .dims = {CO, K, K, CI}, .data = w, .nbytes = sizeof w,
         .n_quant = CO, .scales = wsc, .zero_points = wzp, .quant_dim = 0},
        {.name = "b", .type = TFLW_INT32, .rank = 1, .dims = {CO}, .data = bias, .nbytes = sizeof bias},
        {.name = "conv", .type = TFLW_INT8, .rank = 4, .dims = {1, HW, HW, CO}, .n_quant = 1, .scales = &ys,
         .zero_points = &yz},
        {.name = "y", .type = TFLW_INT8, .rank = 4, .dims = {1, HW, HW, CO}, .n_quant = 1, .scales = &ys,
         .zero_points = &yz},
    };
    static float bsc[CO];
    static int64_t bzp[CO];
    for (int i = 0; i < CO; i++)
        bsc[i] = xs * wsc[i];
    ts[2].n_quant = CO, ts[2].scales = bsc, ts[2].zero_points = bzp;
    const int32_t cin[3] = {0, 1, 2}, cout = 3, rin = 3, rout = 4, in0 = 0;
    const tflw_opt copts[6] = {
        {.id = 0, .kind = TFLW_OPT_U8, .i = 0}, /* padding SAME */
        {.id = 1, .kind = TFLW_OPT_I32, .i = 1},
        {.id = 2, .kind = TFLW_OPT_I32, .i = 1},
        {.id = 3, .kind = TFLW_OPT_U8, .i = act},
        {.id = 4, .kind = TFLW_OPT_I32, .i = 1},
        {.id = 5, .kind = TFLW_OPT_I32, .i = 1},
    };
    const tflw_op ops[2] = {
        {.code = OP_CONV_2D, .version = 3, .inputs = cin, .n_inputs = 3, .outputs = &cout, .n_outputs = 1,
         .options_type = BO_CONV2D, .opts = copts, .n_opts = 6},
        {.code = OP_RELU6, .version = 2, .inputs = &rin, .n_inputs = 1, .outputs = &rout, .n_outputs = 1},
    };
    const int32_t mout = split ? rout : cout;
    const tflw_model m = {.tensors = ts, .n_tensors = split ? 5 : 4, .ops = ops, .n_ops = split ? 2 : 1,
                          .inputs = &in0, .n_inputs = 1, .outputs = &mout, .n_outputs = 1};
    size_t size = 0;
    uint8_t *buf = tflw_build(&m, &size);
    FILE *f = buf ? fopen(argv[1], "wb") : NULL;
    int ok = f && fwrite(buf, 1, size, f) == size;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(buf);
    if (!ok) {
        fprintf(stderr, "gen_act_model: cannot write %s\n", argv[1]);
        remove(argv[1]);
        return 1;
    }
    return 0;
}
