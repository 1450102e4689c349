/* qk_concat_run (plugin_sdk/kernels/qk.c: QConcat on 8-bit codes, run by
 * ops_quant and riscv_mcu) against codes worked out by hand here.
 *
 * Output: scale 0.5, zero point 1, int8. Inputs, concatenated on axis 1 of
 * [2, n]: a [2, 3] scale 0.5 zp 3 (multiplier 0.5 / 0.5 = 1), b [2, 4]
 * scale 0.25 zp -2 (multiplier 0.5), c [2, 2] scale 0.5 zp 1 (the output's
 * encoding: copied). y = sat(rne((q - zx) * m) + 1) in the ONNX form
 * (QuantizeLinear's round half to even); in the gemmlowp form the product
 * is TFLite's MultiplyByQuantizedMultiplier, which rounds b's halves up
 * (SaturatingRoundingDoublingHighMul: (x * 2^30 + 2^30) >> 31 for x >= 0,
 * truncated toward zero after adding 1 - 2^30 below 0: 0.5 -> 1, -0.5 -> 0).
 *
 *   a (ONNX and gemmlowp): q - 3 + 1 = q - 2, saturated
 *     row 0: -128 -> -130 -> -128;  0 -> -2;  5 -> 3
 *     row 1:  127 -> 125;  -126 -> -128;  3 -> 1
 *   b: (q + 2) * 0.5, rounded, + 1
 *     row 0: -1 -> 0.5 -> 0 (rne) / 1 (half up) -> 1 / 2;  0 -> 1 -> 2;
 *            1 -> 1.5 -> 2 -> 3;  2 -> 2 -> 3
 *     row 1: 127 -> 64.5 -> 64 / 65 -> 65 / 66;  -128 -> -63 -> -62;
 *            -3 -> -0.5 -> 0 (both) -> 1;  5 -> 3.5 -> 4 -> 5
 *   c: copied: row 0 -7, 100; row 1 127, -128
 *
 * The multipliers in the fixed-point form (TFLite's QuantizeMultiplier):
 * 1.0 = 0.5 * 2^1 -> (2^30, shift 1); 0.5 = 0.5 * 2^0 -> (2^30, shift 0). */
#include "qk.h"

#include <stdio.h>
#include <string.h>

static int fails;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static const int8_t A[6] = {-128, 0, 5, 127, -126, 3};
static const int8_t B[8] = {-1, 0, 1, 2, 127, -128, -3, 5};
static const int8_t C[4] = {-7, 100, 127, -128};
static const int8_t Y_ONNX[18] = {-128, -2, 3, 1, 2, 3, 3, -7, 100, 125, -128, 1, 65, -62, 1, 5, 127, -128};
static const int8_t Y_GEMM[18] = {-128, -2, 3, 2, 2, 3, 3, -7, 100, 125, -128, 1, 66, -62, 1, 5, 127, -128};

static void dump(const char *what, const int8_t *y, int n)
{
    printf("  %s:", what);
    for (int i = 0; i < n; i++)
        printf(" %d", y[i]);
    printf("\n");
}

static void run_case(int32_t mode, const int8_t *want, const char *name)
{
    const int32_t inner[3] = {3, 4, 2}, zx[3] = {3, -2, 1}, copy[3] = {0, 0, 1};
    const qk_rq rq[3] = {{mode, 1.0, 1 << 30, 1, 1, -128, 127},
                         {mode, 0.5, 1 << 30, 0, 1, -128, 127},
                         {mode, 1.0, 1 << 30, 1, 1, -128, 127}};
    const void *x[3] = {A, B, C};
    int8_t y[18];
    memset(y, 0x55, sizeof y);
    qk_concat p = {3, 2, 9, QK_S8, QK_S8, inner, zx, copy, rq};
    qk_concat_run(&p, x, y);
    CHECK(!memcmp(y, want, sizeof y), "%s: one call differs from the hand-worked codes", name);
    if (memcmp(y, want, sizeof y)) {
        dump("got ", y, 18);
        dump("want", want, 18);
    }
    /* a run of inputs written at its offset along the axis (ops_quant's
     * batches): a and b, then c from code 7 of each row */
    memset(y, 0x55, sizeof y);
    qk_concat p1 = {2, 2, 9, QK_S8, QK_S8, inner, zx, copy, rq};
    qk_concat p2 = {1, 2, 9, QK_S8, QK_S8, inner + 2, zx + 2, copy + 2, rq + 2};
    qk_concat_run(&p1, x, y);
    qk_concat_run(&p2, x + 2, y + 7);
    CHECK(!memcmp(y, want, sizeof y), "%s: two runs at their offsets differ from the hand-worked codes", name);
}

/* uint8 codes: x scale 0.5 zp 130, output scale 0.25 zp 128 (multiplier 2):
 * y = sat(2 (q - 130) + 128): 0 -> -132 -> 0; 130 -> 128; 131 -> 130;
 * 193 -> 254; 194 -> 256 -> 255 */
static void run_u8(void)
{
    static const uint8_t X[5] = {0, 130, 131, 193, 194}, WANT[5] = {0, 128, 130, 254, 255};
    const int32_t inner[1] = {5}, zx[1] = {130}, copy[1] = {0};
    const qk_rq rq[1] = {{QK_RQ_ONNX, 2.0, 1 << 30, 2, 128, 0, 255}};
    const void *x[1] = {X};
    uint8_t y[5];
    qk_concat p = {1, 1, 5, QK_U8, QK_U8, inner, zx, copy, rq};
    qk_concat_run(&p, x, y);
    CHECK(!memcmp(y, WANT, sizeof y), "uint8: %u %u %u %u %u", y[0], y[1], y[2], y[3], y[4]);
}

int main(void)
{
    run_case(QK_RQ_ONNX, Y_ONNX, "onnx");
    run_case(QK_RQ_GEMMLOWP, Y_GEMM, "gemmlowp");
    run_u8();
    if (fails) {
        printf("%d check(s) failed\n", fails);
        return 1;
    }
    printf("ok   qk_concat_run: int8 ONNX and gemmlowp forms, copies, offsets, uint8 saturation\n");
    return 0;
}
