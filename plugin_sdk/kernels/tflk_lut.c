/*
 * int8 one-input ops through a 256-entry table of output codes, built on
 * the host (tfl_unary8.h) from TFLite's integer kernel or float table for
 * the node's quantization; on the MCU the table is a const array.
 */
#include "tflk.h"

void tflk_lut_s8(const int8_t *lut, const int8_t *x, int8_t *y, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        y[i] = lut[x[i] + 128];
}

int32_t tflk_lut_s8_min(const int8_t *lut, int32_t min_valid, const int8_t *x, int8_t *y, int32_t n, int32_t *bad)
{
    for (int32_t i = 0; i < n; i++)
        if (x[i] < min_valid) {
            if (bad)
                *bad = i;
            return -1;
        }
    tflk_lut_s8(lut, x, y, n);
    return 0;
}
