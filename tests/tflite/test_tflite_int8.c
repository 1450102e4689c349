/*
 * The int8 integer kernels of plugin_sdk/kernels (tflk_fixed.c,
 * tflk_lstm8.c) against values computed by hand from the reference
 * semantics (TFLite Micro's reference_integer_ops and lstm_eval):
 *
 *  - LOGISTIC int8 (output 1/256, zero point -128) and TANH int8 (output
 *    1/128, zero point 0): expected = round(f(x_real) / out_scale) + zp with
 *    f the exact function, at inputs whose ideal value is at least 0.1 of an
 *    output step from a rounding tie (the fixed point is accurate to ~1e-9);
 *    zero, the saturation radius, both ends of int8;
 *  - the int16 LUT sigmoid/tanh of the LSTM gates: traced by hand through
 *    TFLite's table (sigmoid(i/24) in 0.16) and its interpolation;
 *  - DIV int8: quotients far from ties, negative operands and divisors,
 *    zero points, saturation;
 *  - MEAN/SUM int8 from the sum: the truncated integer mean for equal
 *    quantization, the float rescale rounded half away from zero otherwise
 *    (ties), saturation, SUM's int8 wrap;
 *  - ADD/SUB int8 rounded once under the single-rounding form (the ratios
 *    in the XNNPACK path's range): multipliers and shift derived by hand
 *    from power-of-two scales, ties rounded half up;
 *  - one LSTM cell with zero weights: the gates are sigmoid(0) = 0.5 and
 *    tanh(0) = 0, so cell = c0 / 2 per step and the hidden state is
 *    tanh(cell) / 2, both traced by hand through the int16 table.
 *
 * The parameter builders (tfl_params.h) are checked against hand-derived
 * multipliers, shifts and radii.
 */
#include "tfl_params.h"
#include "sy_test.h"

static void test_logistic_s8(void)
{
    tflk_act8 p;
    tfl_act8_params(1.0f / 16.0f, 0, &p);
    /* 2^-4 * 2^27 = 2^23 = 0.5 * 2^24: Q0.31 mantissa 2^30, left shift 24;
     * radius floor(15 * 2^27 / 2^24) = 120 */
    CHECK(p.mult == 1 << 30 && p.shift == 24 && p.radius == 120, "mult %d shift %d radius %d", p.mult, p.shift,
          p.radius);
    /* x/16 -> sigmoid * 256: 0 -> 128; 16 -> 187.15; -16 -> 68.85; 40 -> 236.58; -40 -> 19.42;
     * 3 -> 139.96; -3 -> 116.04; 100 -> 255.51 (256, clamped); -100 -> 0.49; 119 -> 255.85;
     * 120 and 127 saturate to 127, -120 and -128 to -128 */
    static const int8_t x[] = {0, 16, -16, 40, -40, 3, -3, 100, -100, 119, 120, 127, -120, -128};
    static const int8_t want[] = {0, 59, -59, 109, -109, 12, -12, 127, -128, 127, 127, 127, -128, -128};
    int8_t y[sizeof x];
    tflk_logistic_s8(&p, x, y, (int32_t)sizeof x);
    for (size_t i = 0; i < sizeof x; i++)
        CHECK(y[i] == want[i], "logistic(%d/16): got %d, expected %d", x[i], y[i], want[i]);
}

static void test_tanh_s8(void)
{
    tflk_act8 p;
    tfl_act8_params(1.0f / 32.0f, 10, &p);
    /* 2^-5 * 2^27 = 0.5 * 2^23; radius 15 * 2^27 / 2^23 = 240 */
    CHECK(p.mult == 1 << 30 && p.shift == 23 && p.radius == 240, "mult %d shift %d radius %d", p.mult, p.shift,
          p.radius);
    /* (x - 10)/32 -> tanh * 128: 10 -> 0; 42 -> 97.48; -22 -> -97.48; 74 -> 123.40;
     * -54 -> -123.40; 11 -> 4.00 (3.9987); 9 -> -4.00; 127 -> 127.83 (128, clamped);
     * -128 -> -127.95 */
    static const int8_t x[] = {10, 42, -22, 74, -54, 11, 9, 127, -128};
    static const int8_t want[] = {0, 97, -97, 123, -123, 4, -4, 127, -128};
    int8_t y[sizeof x];
    tflk_tanh_s8(&p, x, y, (int32_t)sizeof x);
    for (size_t i = 0; i < sizeof x; i++)
        CHECK(y[i] == want[i], "tanh((%d - 10)/32): got %d, expected %d", x[i], y[i], want[i]);
}

static void test_lut_s16(void)
{
    /* Q3.12 in, Q0.15 out; x * 3 indexes the table in 1/24 steps (>> 9 for
     * the sigmoid, >> 8 for tanh = 2 sigmoid(2x) - 1):
     *   sigmoid(1.0): v = 12288, index 24 (47911), no fraction:
     *     (47911 << 9) + 512 >> 10 = 23956           (32768 sigmoid(1) = 23955.4)
     *   sigmoid(-1.0): (1 << 25) - (47911 << 9) + 511 >> 10 = 8812
     *   sigmoid(0): (32768 << 9) + 512 >> 10 = 16384
     *   sigmoid(0.5) = v 6144: index 12 (40794), fraction 0:
     *     (40794 << 9) + 512 >> 10 = 20397            (32768 sigmoid(0.5) = 20396.9)
     *   tanh(1.0): index 48 (57724): (57724 << 8) - 2^23 + 128 >> 8 = 24956
     *   tanh(-1.0): -(57724 << 8) + 2^23 + 127 = -6388609, >> 8 (floor) = -24956
     *   tanh(0): 0 */
    const int16_t x[] = {4096, -4096, 0, 2048};
    int16_t y[4];
    tflk_sigmoid_s16(0, 0, x, y, 4);
    CHECK(y[0] == 23956 && y[1] == 8812 && y[2] == 16384 && y[3] == 20397, "sigmoid: %d %d %d %d", y[0], y[1], y[2],
          y[3]);
    tflk_tanh_s16(0, 0, x, y, 3);
    CHECK(y[0] == 24956 && y[1] == -24956 && y[2] == 0, "tanh: %d %d %d", y[0], y[1], y[2]);
    /* interpolation: cell 500 at scale 2^-11 (shift 15 - 11 - 3 = 1: x * 6): v = 3000,
     * index 11 (40149), next 40794, fraction 184:
     *   (40149 << 8) + 184 * 645 = 10396824; - 2^23 + 128 = 2008344; >> 8 = 7845 */
    const int16_t c = 500;
    tflk_tanh_s16(0, 1, &c, y, 1);
    CHECK(y[0] == 7845, "tanh(500 * 2^-11): %d", y[0]);
    /* tanh saturation: |v| >> 8 >= 255 gives 0xffff << 8: (0xffff << 8) - 2^23 + 128 >> 8 = 32767;
     * negative: -(0xffff << 8) + 2^23 + 127 = -8388225, >> 8 (floor) = -32767 */
    const int16_t big[] = {32767, -32768};
    tflk_tanh_s16(0, 0, big, y, 2);
    CHECK(y[0] == 32767 && y[1] == -32767, "tanh saturation: %d %d", y[0], y[1]);
}

static void test_div_s8(void)
{
    tflk_div8 p;
    /* 0.5 / (0.25 * 0.125) = 16 = 0.5 * 2^5 */
    tfl_div8_params(0.5f, 0, 0.25f, 0, 0.125f, 0, -128, 127, &p);
    CHECK(p.mult == 1 << 30 && p.shift == 5, "mult %d shift %d", p.mult, p.shift);
    /* 1.5 / 0.5 = 3 -> 24; signs; 0.5 / 0.75 = 0.667 -> 5.33 -> 5; 63.5 / 0.25 = 254 -> 2032 -> 127 */
    CHECK(tflk_div_s8(&p, 3, 2) == 24, "3/2: %d", tflk_div_s8(&p, 3, 2));
    CHECK(tflk_div_s8(&p, -3, 2) == -24, "-3/2: %d", tflk_div_s8(&p, -3, 2));
    CHECK(tflk_div_s8(&p, 3, -2) == -24, "3/-2: %d", tflk_div_s8(&p, 3, -2));
    CHECK(tflk_div_s8(&p, -3, -2) == 24, "-3/-2: %d", tflk_div_s8(&p, -3, -2));
    CHECK(tflk_div_s8(&p, 1, 3) == 5, "1/3: %d", tflk_div_s8(&p, 1, 3));
    CHECK(tflk_div_s8(&p, -1, 3) == -5, "-1/3: %d", tflk_div_s8(&p, -1, 3));
    CHECK(tflk_div_s8(&p, 127, 1) == 127, "127/1: %d", tflk_div_s8(&p, 127, 1));
    CHECK(tflk_div_s8(&p, -128, 1) == -128, "-128/1: %d", tflk_div_s8(&p, -128, 1));
    CHECK(tflk_div_s8(&p, 0, 7) == 0, "0/7: %d", tflk_div_s8(&p, 0, 7));
    /* zero points 5, -3, 2: (8 - 5) / (-1 + 3) is 1.5 / 0.5 again -> 24 + 2 */
    tfl_div8_params(0.5f, 5, 0.25f, -3, 0.125f, 2, -128, 127, &p);
    CHECK(tflk_div_s8(&p, 8, -1) == 26, "zp: %d", tflk_div_s8(&p, 8, -1));
    /* a fused RELU clamp [zp, 127] */
    tfl_div8_params(0.5f, 0, 0.25f, 0, 0.125f, 2, 2, 127, &p);
    CHECK(tflk_div_s8(&p, -3, 2) == 2, "relu: %d", tflk_div_s8(&p, -3, 2));
}

static void test_mean_sum_s8(void)
{
    /* equal quantization: sum / count truncated toward zero */
    tflk_reduce8 same = {1, 3, 3, 1.0f};
    CHECK(tflk_mean_s8(&same, 7, 2) == 3, "7/2: %d", tflk_mean_s8(&same, 7, 2));
    CHECK(tflk_mean_s8(&same, -7, 2) == -3, "-7/2: %d", tflk_mean_s8(&same, -7, 2));
    CHECK(tflk_mean_s8(&same, 381, 3) == 127, "381/3: %d", tflk_mean_s8(&same, 381, 3));
    /* input 0.5 zp 1, output 0.25 zp -2: {3, 6} are 1.0 and 2.5, mean 1.75 = 7 steps, -2 -> 5 */
    tflk_reduce8 r = {0, 1, -2, 0.5f / 0.25f};
    CHECK(tflk_mean_s8(&r, 9, 2) == 5, "mean {3,6}: %d", tflk_mean_s8(&r, 9, 2));
    /* SUM {3, 6}: 3.5 = 14 steps, -2 -> 12 */
    CHECK(tflk_sum_s8(&r, 9, 2) == 12, "sum {3,6}: %d", tflk_sum_s8(&r, 9, 2));
    /* input 0.25, output 0.5: x / 2, ties away from zero: 5 -> 2.5 -> 3, -5 -> -3, 3 -> 2, 1 -> 1 (0.5) */
    tflk_reduce8 h = {0, 0, 0, 0.25f / 0.5f};
    CHECK(tflk_mean_s8(&h, 5, 1) == 3 && tflk_mean_s8(&h, -5, 1) == -3, "ties: %d %d", tflk_mean_s8(&h, 5, 1),
          tflk_mean_s8(&h, -5, 1));
    CHECK(tflk_mean_s8(&h, 3, 1) == 2 && tflk_mean_s8(&h, 1, 1) == 1, "ties: %d %d", tflk_mean_s8(&h, 3, 1),
          tflk_mean_s8(&h, 1, 1));
    /* input 0.5, output 0.25: x * 2 saturates */
    tflk_reduce8 d = {0, 0, 0, 2.0f};
    CHECK(tflk_mean_s8(&d, 100, 1) == 127 && tflk_mean_s8(&d, -100, 1) == -128, "saturation: %d %d",
          tflk_mean_s8(&d, 100, 1), tflk_mean_s8(&d, -100, 1));
    /* SUM has no clamp: 100 + 100 at scale 1 is 200, which the int8 cast wraps to -56 */
    tflk_reduce8 u = {0, 0, 0, 1.0f};
    CHECK(tflk_sum_s8(&u, 200, 2) == -56, "sum wrap: %d", tflk_sum_s8(&u, 200, 2));
}

static void test_lstm8_zero_weights(void)
{
    static const int8_t w[1] = {0};
    static const int8_t h0[1] = {0};
    static const int16_t c0[1] = {1000};
    tflk_lstm8 p;
    memset(&p, 0, sizeof p);
    p.n_cell = 1;
    p.n_in = 1;
    p.steps = 2;
    p.batch = 1;
    for (int g = 0; g < 4; g++) {
        p.wx[g] = w;
        p.wh[g] = w;
        p.x_mult[g] = p.h_mult[g] = 1 << 30;
    }
    /* forget x cell -> cell: 2^-15 (2^30, -14); input x cell gate: the same shape;
     * tanh x output -> hidden at 2^-7: 2^-30 / 2^-7 = 2^-23 (2^30, -22) */
    p.fc_mult = p.ic_mult = p.oh_mult = 1 << 30;
    p.fc_shift = p.ic_shift = -14;
    p.oh_shift = -22;
    p.cell_tanh_shift = 1; /* cell scale 2^-11 */
    p.cell_clip = -1;
    p.h0 = h0;
    p.c0 = c0;
    const int8_t x[2] = {55, -7};
    int8_t y[2];
    _Alignas(8) unsigned char scratch[64];
    REQUIRE(tflk_lstm8_scratch_bytes(&p) <= sizeof scratch, "scratch %zu", tflk_lstm8_scratch_bytes(&p));
    tflk_lstm8_run(&p, x, y, scratch);
    /* step 1: cell 16384 * 1000 * 2^-15 = 500; tanh 7845 (test_lut_s16);
     *   hidden 7845 * 16384 * 2^-23 = 15.32 -> 15
     * step 2: cell 250; v = 1500, index 5 (36169), next 36843, fraction 220:
     *   (36169 << 8) + 220 * 674 - 2^23 + 128 = 1019064 >> 8 = 3980;
     *   hidden 3980 * 16384 * 2^-23 = 7.77 -> 8 */
    CHECK(y[0] == 15 && y[1] == 8, "lstm: %d %d", y[0], y[1]);
    /* the hidden zero point -3 is added after the requantization */
    p.h_zp = -3;
    tflk_lstm8_run(&p, x, y, scratch);
    CHECK(y[0] == 12 && y[1] == 5, "lstm zp -3: %d %d", y[0], y[1]);
    /* a cell clip of 300 quantized: step 1 cell 500 -> 300; tanh v = 1800, index 7 (37513),
     * next 38180, fraction 8: (37513 << 8) + 8 * 667 - 2^23 + 128 = 1220192 >> 8 = 4766;
     * hidden 4766 * 16384 * 2^-23 = 9.31 -> 9, then -3 */
    p.cell_clip = 300;
    tflk_lstm8_run(&p, x, y, scratch);
    CHECK(y[0] == 6, "lstm clip: %d", y[0]);
    /* no h0/c0: TFLite Micro's reset, hidden at its zero point and cell 0; with zero
     * weights the cell stays 0, tanh(0) = 0 and the output is the zero point */
    p.h0 = NULL;
    p.c0 = NULL;
    tflk_lstm8_run(&p, x, y, scratch);
    CHECK(y[0] == -3 && y[1] == -3, "lstm reset state: %d %d", y[0], y[1]);
}

/* A zero point outside the codes of its tensor's type is refused where the
 * kernels read it (fuzz_tflite, seed 11: an int8 CONV_2D input with zero
 * point 2^31 - 1 reached the MAC `x + in_off` and overflowed int32). */
static void test_qparams_zero_point_range(void)
{
    static const struct {
        sy_dtype dt;
        int32_t zp;
        bool ok;
    } cases[] = {
        {SY_DT_INT8, -128, true},      {SY_DT_INT8, 127, true},       {SY_DT_INT8, 128, false},
        {SY_DT_INT8, -129, false},     {SY_DT_INT8, INT32_MAX, false}, {SY_DT_UINT8, 0, true},
        {SY_DT_UINT8, 255, true},      {SY_DT_UINT8, -1, false},      {SY_DT_UINT8, 256, false},
        {SY_DT_INT16, 32767, true},    {SY_DT_INT16, 32768, false},   {SY_DT_UINT16, 65535, true},
        {SY_DT_UINT16, 65536, false},  {SY_DT_INT32, INT32_MAX, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        float scale = 0.5f, got_scale = 0;
        int32_t zp = cases[i].zp, got_zp = 0;
        sy_quant_params q = {.struct_size = sizeof q, .axis = -1, .count = 1, .scales = &scale, .zero_points = &zp};
        sy_tensor t = {.dtype = cases[i].dt, .quant = &q};
        bool ok = tfl_qparams(&t, &got_scale, &got_zp);
        CHECK(ok == cases[i].ok, "%s zero point %d: tfl_qparams %s", sy_dt_name(cases[i].dt), cases[i].zp,
              ok ? "accepted" : "refused");
    }
}

static void test_binary_single_s8(void)
{
    tflk_binary p;
    memset(&p, 0, sizeof p);
    /* ratios 0.5 and 0.25: the larger's exponent is -1, so the shift is
     * 20 + 1 = 21 and the multipliers 0.5 * 2^21 = 2^20 and 2^19 */
    tfl_binary8_params(TFLK_ADD, 0.5f, 0, 0.25f, 0, 1.0f, 0, -128, 127, 1, &p);
    CHECK(p.one == 1 && p.osh == 21 && p.om1 == 1 << 20 && p.om2 == 1 << 19, "one %d osh %d om1 %d om2 %d", p.one,
          p.osh, p.om1, p.om2);
    /* 1.5 + 0.25 = 1.75 -> 2; ties 0.5 -> 1 and -0.5 -> 0 (half up, where
     * TFLite Micro's double rounding gives -1); 127 * 0.5 + 127 * 0.25 = 95.25 -> 95 */
    CHECK(tflk_binary_s8_one(&p, 3, 1) == 2, "3+1: %d", tflk_binary_s8_one(&p, 3, 1));
    CHECK(tflk_binary_s8_one(&p, 1, 0) == 1, "1+0: %d", tflk_binary_s8_one(&p, 1, 0));
    CHECK(tflk_binary_s8_one(&p, -1, 0) == 0, "-1+0: %d", tflk_binary_s8_one(&p, -1, 0));
    CHECK(tflk_binary_s8_one(&p, 127, 127) == 95, "127+127: %d", tflk_binary_s8_one(&p, 127, 127));
    /* SUB negates the second multiplier: 0.5 - 0.75 = -0.25 -> 0, -1 - 0.25 -> -1 */
    tfl_binary8_params(TFLK_SUB, 0.5f, 0, 0.25f, 0, 1.0f, 0, -128, 127, 1, &p);
    CHECK(p.om2 == -(1 << 19), "SUB om2 %d", p.om2);
    CHECK(tflk_binary_s8_one(&p, 1, 3) == 0, "1-3: %d", tflk_binary_s8_one(&p, 1, 3));
    CHECK(tflk_binary_s8_one(&p, -2, 1) == -1, "-2-1: %d", tflk_binary_s8_one(&p, -2, 1));
    /* zero points and a RELU clamp at zp -128: (10 - 4) * 0.5 + (6 - -2) * 0.25 = 5 -> -123 */
    tfl_binary8_params(TFLK_ADD, 0.5f, 4, 0.25f, -2, 1.0f, -128, -128, 127, 1, &p);
    CHECK(tflk_binary_s8_one(&p, 10, 6) == -123, "zp: %d", tflk_binary_s8_one(&p, 10, 6));
    /* a ratio 0.0001 / 0.6 below 2^-10: the three rescales of the builtin
     * kernel (TFLite Micro's double rounding) */
    tfl_binary8_params(TFLK_ADD, 0.0001f, 0, 0.5f, 0, 0.6f, 0, -128, 127, 1, &p);
    CHECK(p.one == 0 && p.rq_single == 0, "out of range: one %d rq_single %d", p.one, p.rq_single);
    /* gemmlowp never rounds once; MUL's one rescale takes the form */
    tfl_binary8_params(TFLK_ADD, 0.5f, 0, 0.25f, 0, 1.0f, 0, -128, 127, 0, &p);
    CHECK(p.one == 0, "gemmlowp: one %d", p.one);
    tfl_binary8_params(TFLK_MUL, 0.5f, 0, 0.25f, 0, 1.0f, 0, -128, 127, 1, &p);
    CHECK(p.rq_single == 1, "MUL: rq_single %d", p.rq_single);
}

int main(void)
{
    RUN_TEST(test_binary_single_s8);
    RUN_TEST(test_qparams_zero_point_range);
    RUN_TEST(test_logistic_s8);
    RUN_TEST(test_tanh_s8);
    RUN_TEST(test_lut_s16);
    RUN_TEST(test_div_s8);
    RUN_TEST(test_mean_sum_s8);
    RUN_TEST(test_lstm8_zero_weights);
    return SY_TEST_MAIN_RESULT();
}
