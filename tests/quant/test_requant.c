/*
 * Bit-exact requantization vectors, computed by hand, for both forms of
 * sy_sdk's requantizer (sdk_requant.c) and the ONNX quantize rounding:
 *
 *   ONNX form      q = sat(round_half_even(acc * m) + zp)
 *   gemmlowp form  q = sat(RoundingDivideByPOT(SRDHM(acc, M), -shift) + zp),
 *                  M = 2^30 and shift = -1 for m = 0.25: half away from zero
 *
 * Ties: acc * 0.25 = 2.5 -> 2 (even) vs 3 (away); -2.5 -> -2 vs -3;
 * 1.5 -> 2 in both; 0.5 -> 0 vs 1. Saturation at the int8/uint8 bounds,
 * including after adding the zero point, and folded-ReLU clamps. The
 * gemmlowp form rounds twice (high multiply, then shift), as TFLite's
 * reference and CMSIS-NN's default arm_nn_requantize do: 2.25 -> 3.
 *
 *   single form    q = sat(((acc * M + 2^(t-1)) >> t) + zp), t = 31 - shift
 *                  (TFLITE_SINGLE_ROUNDING): one rounding, half up, so
 *                  2.5 -> 3, -2.5 -> -2, -1.5 -> -1, 2.25 -> 2.
 */
#include "switchyard/sy_sdk.h"

#include <stdio.h>
#include <string.h>

static int failures;

static void expect(const char *what, long long got, long long want)
{
    if (got != want) {
        fprintf(stderr, "FAIL %s: got %lld, expected %lld\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    sy_requant on, gl, sr;
    /* m = 0.25, zp 0, int8 */
    sy_rq_init(&on, SY_RQ_ONNX, 0.25, 0, -128, 127);
    sy_rq_init(&gl, SY_RQ_GEMMLOWP, 0.25, 0, -128, 127);
    sy_rq_init(&sr, SY_RQ_SINGLE, 0.25, 0, -128, 127);
    expect("multiplier of 0.25", gl.mult, 1073741824);
    expect("single: the same multiplier", sr.mult, 1073741824);
    expect("shift of 0.25", gl.shift, -1);
    static const struct {
        int32_t acc;
        int32_t onnx, gemmlowp, single;
    } v[] = {
        {2, 0, 1, 1},           /* 0.5: even -> 0, away -> 1, up -> 1 */
        {-2, 0, -1, 0},         /* -0.5: up -> 0 */
        {6, 2, 2, 2},           /* 1.5: all 2 */
        {-6, -2, -2, -1},       /* -1.5: up -> -1 */
        {10, 2, 3, 3},          /* 2.5 */
        {-10, -2, -3, -2},      /* -2.5 */
        {7, 2, 2, 2},           /* 1.75 */
        {9, 2, 3, 2},           /* 2.25: gemmlowp rounds twice (SRDHM 4.5 -> 5, then 5 / 2 = 2.5 -> 3), single once */
        {1000, 127, 127, 127},  /* 250: saturates */
        {-1000, -128, -128, -128},
        {508, 127, 127, 127},   /* 127 exactly */
        {510, 127, 127, 127},   /* 127.5 -> 128 -> 127 */
        {-514, -128, -128, -128},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        char w[64];
        snprintf(w, sizeof w, "onnx acc=%d", v[i].acc);
        expect(w, sy_rq_apply(&on, v[i].acc), v[i].onnx);
        snprintf(w, sizeof w, "gemmlowp acc=%d", v[i].acc);
        expect(w, sy_rq_apply(&gl, v[i].acc), v[i].gemmlowp);
        snprintf(w, sizeof w, "single acc=%d", v[i].acc);
        expect(w, sy_rq_apply(&sr, v[i].acc), v[i].single);
        int32_t a = v[i].acc, q = 0;
        sy_rq_apply_n(&sr, 0, &a, &q, 1);
        snprintf(w, sizeof w, "single (apply_n) acc=%d", v[i].acc);
        expect(w, q, v[i].single);
        if (v[i].acc > -508 && v[i].acc < 508) { /* the unsaturated product */
            snprintf(w, sizeof w, "sy_q_mul_by_qm_single acc=%d", v[i].acc);
            expect(w, sy_q_mul_by_qm_single(v[i].acc, sr.mult, sr.shift), v[i].single);
        }
    }
    /* zero point 10 is added after rounding (ONNX spec text, ORT): 2.5 -> 2 + 10 */
    sy_rq_init(&on, SY_RQ_ONNX, 0.25, 10, -128, 127);
    sy_rq_init(&gl, SY_RQ_GEMMLOWP, 0.25, 10, -128, 127);
    expect("onnx zp=10 acc=10", sy_rq_apply(&on, 10), 12);
    expect("gemmlowp zp=10 acc=10", sy_rq_apply(&gl, 10), 13);
    expect("onnx zp=10 saturate", sy_rq_apply(&on, 480), 127); /* 120 + 10 */
    expect("gemmlowp zp=10 saturate", sy_rq_apply(&gl, 480), 127);
    /* uint8, zp 128, folded ReLU: clamp [128, 255] */
    sy_rq_init(&on, SY_RQ_ONNX, 0.25, 128, 128, 255);
    sy_rq_init(&gl, SY_RQ_GEMMLOWP, 0.25, 128, 128, 255);
    expect("onnx relu clamp", sy_rq_apply(&on, -40), 128);
    expect("gemmlowp relu clamp", sy_rq_apply(&gl, -40), 128);
    expect("onnx u8 acc=-10", sy_rq_apply(&on, 10), 130);
    expect("gemmlowp u8 acc=10", sy_rq_apply(&gl, 10), 131);
    /* int16 output (the 16x8 scheme), m = 0.25: a tie with zp -5 (32.5 -> 32 | 33, then -5),
     * saturation at both ends: -32768.5 -> -32768 (even) | -32769 -> -32768 */
    sy_rq_init(&on, SY_RQ_ONNX, 0.25, -5, -32768, 32767);
    sy_rq_init(&gl, SY_RQ_GEMMLOWP, 0.25, -5, -32768, 32767);
    expect("onnx i16 tie", sy_rq_apply(&on, 130), 27);
    expect("gemmlowp i16 tie", sy_rq_apply(&gl, 130), 28);
    expect("onnx i16 high", sy_rq_apply(&on, 140000), 32767); /* 35000 - 5 */
    expect("gemmlowp i16 high", sy_rq_apply(&gl, 140000), 32767);
    sy_rq_init(&on, SY_RQ_ONNX, 0.25, 0, -32768, 32767);
    sy_rq_init(&gl, SY_RQ_GEMMLOWP, 0.25, 0, -32768, 32767);
    expect("onnx i16 low tie", sy_rq_apply(&on, -131074), -32768);
    expect("gemmlowp i16 low tie", sy_rq_apply(&gl, -131074), -32768);
    expect("onnx i16 -32767.5", sy_rq_apply(&on, -131070), -32768); /* -32767.5: even is -32768 */
    expect("gemmlowp i16 -32767.5", sy_rq_apply(&gl, -131070), -32768); /* away from zero */
    /* a multiplier > 1 (shift > 0): m = 3.0 -> M = 0.75 * 2^31, shift 2 */
    sy_rq_init(&gl, SY_RQ_GEMMLOWP, 3.0, 0, -128, 127);
    expect("multiplier of 3", gl.mult, 1610612736);
    expect("shift of 3", gl.shift, 2);
    expect("gemmlowp m=3 acc=7", sy_rq_apply(&gl, 7), 21);
    expect("gemmlowp m=3 acc=50", sy_rq_apply(&gl, 50), 127);
    sy_rq_init(&sr, SY_RQ_SINGLE, 3.0, 0, -128, 127);
    expect("single m=3 acc=7", sy_rq_apply(&sr, 7), 21);
    expect("single m=3 acc=-7", sy_rq_apply(&sr, -7), -21);
    /* a shift above 30 saturates to 30 with the multiplier INT32_MAX, as
     * TFLite's QuantizeMultiplier in that build: 1 * (2^31 - 1) / 2 -> 2^30 */
    expect("single shift 31", sy_q_mul_by_qm_single(1, 1073741824, 31), 1073741824);
    /* the form names */
    sy_rq_mode md = SY_RQ_ONNX;
    expect("parse single_rounding", sy_rq_mode_parse("single_rounding", &md) && md == SY_RQ_SINGLE, 1);
    expect("name of single", !strcmp(sy_rq_mode_name(SY_RQ_SINGLE), "single_rounding"), 1);
    /* QuantizeLinear rounding: x / scale half to even, then + zp, saturate */
    expect("quantize 2.5", sy_rq_quantize(2.5f, 1.0f, 0, -128, 127), 2);
    expect("quantize 3.5", sy_rq_quantize(3.5f, 1.0f, 0, -128, 127), 4);
    expect("quantize -2.5", sy_rq_quantize(-2.5f, 1.0f, 0, -128, 127), -2);
    expect("quantize 0.5 zp 1", sy_rq_quantize(0.5f, 1.0f, 1, 0, 255), 1);
    expect("quantize 300", sy_rq_quantize(300.0f, 1.0f, 0, -128, 127), 127);
    expect("quantize -1 to uint8", sy_rq_quantize(-1.0f, 1.0f, 0, 0, 255), 0);
    expect("quantize NaN", sy_rq_quantize(0.0f / 0.0f, 1.0f, 0, -128, 127), -128);
    /* 4-bit packing: low nibble first */
    uint8_t packed[2] = {0, 0};
    sy_q_store(packed, SY_DT_INT4, 0, -3);
    sy_q_store(packed, SY_DT_INT4, 1, 7);
    sy_q_store(packed, SY_DT_INT4, 2, -8);
    expect("int4 byte 0", packed[0], 0x7d);
    expect("int4 load 2", sy_q_load(packed, SY_DT_INT4, 2), -8);
    /* parameter choice: [-1, 3] to uint8 asymmetric: scale 4/255, zp 64 */
    float sc;
    int32_t zp;
    sy_q_choose_params(-1.0f, 3.0f, SY_DT_UINT8, false, &sc, &zp);
    expect("asym zp", zp, 64);
    sy_q_choose_params(-1.0f, 3.0f, SY_DT_INT8, true, &sc, &zp);
    expect("sym zp", zp, 0);
    expect("sym scale * 127 == 3", (long long)(sc * 127.0f + 0.5f), 3);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("requantization vectors: all passed\n");
    return 0;
}
