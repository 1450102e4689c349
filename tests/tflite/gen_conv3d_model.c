/*
 * gen_conv3d_model OUT3D OUT2D SAME|VALID SD SH SW PER_CHANNEL: writes an int8
 * CONV_3D model (OUT3D: input "x" [1, 5, 6, 5, 3] scale 0.05 zp -7, filter
 * [3, 3, 2, 3, 4], int32 bias, output scale 0.11 zp 4; the FULL_QUANT form
 * of ops-mcu.md Table A #2) and the int8 CONV_2D that computes the same
 * numbers (OUT2D), for real TFLite, whose CONV_3D is float32 only
 * (conv3d.cc). The CONV_2D folds the depth taps into the channels: its
 * input is [OD, 6, 5, KD * IC], row od holding the KD input depth slices
 * od * SD - PD + kd side by side (a slice outside the input filled with the
 * input zero point, so it adds (x - zp) * w = 0, as CONV_3D's padding
 * does); its filter [OC, KH, KW, KD * IC] is w[kd, kh, kw, ic, oc] at
 * [oc, kh, kw, kd * IC + ic]. Same scales (per channel along the output
 * channels), bias, SAME/VALID padding and strides on H and W: every output
 * is the same int32 sum of the same products (int32 sums wrap, the order
 * does not matter) requantized by the same multiplier. Prints "OD PD" (the
 * caller builds the folded input from those).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfl_writer.h"

enum { OP_CONV_2D = 3, OP_CONV_3D = 132, BO_CONV2D = 1, BO_CONV3D = 106 };
enum { D = 5, HH = 6, W = 5, IC = 3, KD = 3, KH = 3, KW = 2, OC = 4 };

static int64_t out_size(int same, int64_t in, int64_t k, int64_t s)
{
    return same ? (in + s - 1) / s : (in - k + s) / s;
}

static int write_model(const char *path, const tflw_model *m)
{
    size_t size = 0;
    uint8_t *buf = tflw_build(m, &size);
    FILE *f = buf ? fopen(path, "wb") : NULL;
    int ok = f && fwrite(buf, 1, size, f) == size;
    if (f)
        ok = fclose(f) == 0 && ok;
    free(buf);
    if (!ok) {
        fprintf(stderr, "gen_conv3d_model: cannot write %s\n", path);
        remove(path);
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 8 || (strcmp(argv[3], "SAME") && strcmp(argv[3], "VALID"))) {
        fprintf(stderr, "usage: gen_conv3d_model OUT3D OUT2D SAME|VALID SD SH SW PER_CHANNEL(0|1)\n");
        return 2;
    }
    const int same = !strcmp(argv[3], "SAME");
    int st[3];
    for (int i = 0; i < 3; i++) {
        st[i] = atoi(argv[4 + i]);
        if (st[i] < 1 || st[i] > 3) {
            fprintf(stderr, "gen_conv3d_model: stride '%s': expected 1 to 3\n", argv[4 + i]);
            return 2;
        }
    }
    const int per_channel = atoi(argv[7]) != 0;
    static int8_t w3[KD * KH * KW * IC * OC], w2[KD * KH * KW * IC * OC];
    static int32_t bias[OC];
    static float ws[OC], bs[OC];
    static int64_t wz[OC], bz[OC];
    float xs = 0.05f, ys = 0.11f;
    int64_t xz = -7, yz = 4;
    for (int i = 0; i < KD * KH * KW * IC * OC; i++)
        w3[i] = (int8_t)((i * 41 + 7) % 255 - 127);
    for (int o = 0; o < OC; o++) {
        ws[o] = per_channel ? 0.003f * (float)(o + 1) + 0.0007f : 0.0041f;
        bs[o] = xs * ws[o];
        bias[o] = (o - 2) * 611 + 97;
    }
    /* [kd, kh, kw, ic, oc] -> [oc, kh, kw, kd * IC + ic] */
    for (int kd = 0; kd < KD; kd++)
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++)
                for (int c = 0; c < IC; c++)
                    for (int o = 0; o < OC; o++)
                        w2[((o * KH + kh) * KW + kw) * (KD * IC) + kd * IC + c] =
                            w3[(((kd * KH + kh) * KW + kw) * IC + c) * OC + o];
    const int od = (int)out_size(same, D, KD, st[0]), oh = (int)out_size(same, HH, KH, st[1]),
              ow = (int)out_size(same, W, KW, st[2]);
    const int tot = (od - 1) * st[0] + KD - D, pd = tot > 0 ? tot / 2 : 0;
    const int nq = per_channel ? OC : 1;
    const int32_t in[3] = {0, 1, 2}, out = 3;
    /* CONV_3D */
    tflw_tensor t3[4] = {
        {.name = "x", .type = TFLW_INT8, .rank = 5, .dims = {1, D, HH, W, IC}, .n_quant = 1, .scales = &xs,
         .zero_points = &xz},
        {.name = "filter", .type = TFLW_INT8, .rank = 5, .dims = {KD, KH, KW, IC, OC}, .data = w3, .nbytes = sizeof w3,
         .n_quant = nq, .scales = ws, .zero_points = wz, .quant_dim = 4},
        {.name = "bias", .type = TFLW_INT32, .rank = 1, .dims = {OC}, .data = bias, .nbytes = sizeof bias,
         .n_quant = nq, .scales = bs, .zero_points = bz},
        {.name = "y", .type = TFLW_INT8, .rank = 5, .dims = {1, od, oh, ow, OC}, .n_quant = 1, .scales = &ys,
         .zero_points = &yz},
    };
    /* Conv3DOptions: padding, stride_d, stride_w, stride_h, NONE, dilations 1 */
    const tflw_opt o3[8] = {{.id = 0, .kind = TFLW_OPT_U8, .i = same ? 0 : 1}, {.id = 1, .kind = TFLW_OPT_I32, .i = st[0]},
                            {.id = 2, .kind = TFLW_OPT_I32, .i = st[2]},        {.id = 3, .kind = TFLW_OPT_I32, .i = st[1]},
                            {.id = 4, .kind = TFLW_OPT_U8, .i = 0},             {.id = 5, .kind = TFLW_OPT_I32, .i = 1},
                            {.id = 6, .kind = TFLW_OPT_I32, .i = 1},            {.id = 7, .kind = TFLW_OPT_I32, .i = 1}};
    const tflw_op op3 = {.code = OP_CONV_3D, .inputs = in, .n_inputs = 3, .outputs = &out, .n_outputs = 1,
                         .options_type = BO_CONV3D, .opts = o3, .n_opts = 8};
    const tflw_model m3 = {.tensors = t3, .n_tensors = 4, .ops = &op3, .n_ops = 1, .inputs = in, .n_inputs = 1,
                           .outputs = &out, .n_outputs = 1};
    /* the CONV_2D over the folded input */
    tflw_tensor t2[4] = {
        {.name = "x", .type = TFLW_INT8, .rank = 4, .dims = {od, HH, W, KD * IC}, .n_quant = 1, .scales = &xs,
         .zero_points = &xz},
        {.name = "filter", .type = TFLW_INT8, .rank = 4, .dims = {OC, KH, KW, KD * IC}, .data = w2,
         .nbytes = sizeof w2, .n_quant = nq, .scales = ws, .zero_points = wz, .quant_dim = 0},
        t3[2],
        {.name = "y", .type = TFLW_INT8, .rank = 4, .dims = {od, oh, ow, OC}, .n_quant = 1, .scales = &ys,
         .zero_points = &yz},
    };
    /* Conv2DOptions: padding, stride_w, stride_h, NONE, dilations 1 */
    const tflw_opt o2[6] = {{.id = 0, .kind = TFLW_OPT_U8, .i = same ? 0 : 1}, {.id = 1, .kind = TFLW_OPT_I32, .i = st[2]},
                            {.id = 2, .kind = TFLW_OPT_I32, .i = st[1]},        {.id = 3, .kind = TFLW_OPT_U8, .i = 0},
                            {.id = 4, .kind = TFLW_OPT_I32, .i = 1},            {.id = 5, .kind = TFLW_OPT_I32, .i = 1}};
    const tflw_op op2 = {.code = OP_CONV_2D, .inputs = in, .n_inputs = 3, .outputs = &out, .n_outputs = 1,
                         .options_type = BO_CONV2D, .opts = o2, .n_opts = 6};
    const tflw_model m2 = {.tensors = t2, .n_tensors = 4, .ops = &op2, .n_ops = 1, .inputs = in, .n_inputs = 1,
                           .outputs = &out, .n_outputs = 1};
    if (!write_model(argv[1], &m3) || !write_model(argv[2], &m2))
        return 1;
    printf("%d %d\n", od, pd);
    return 0;
}
