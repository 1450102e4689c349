/*
 * tflk_norm: ONNX BatchNormalization (inference), InstanceNormalization and
 * LayerNormalization in fp32. Means and variances are summed in double (two
 * passes: the variance of x - mean), so rounding does not grow with the row;
 * 1 / sqrt is tflk_sqrtf's correctly rounded root, not libm's.
 */
#include "tflk.h"

/* the mean and 1 / sqrt(var + eps) of n elements */
static void stats(const float *x, int32_t n, float eps, float *mean, float *inv)
{
    double s = 0.0, q = 0.0;
    for (int32_t i = 0; i < n; i++)
        s += (double)x[i];
    double m = n ? s / (double)n : 0.0;
    for (int32_t i = 0; i < n; i++) {
        double d = (double)x[i] - m;
        q += d * d;
    }
    *mean = (float)m;
    *inv = 1.0f / tflk_sqrtf((float)(n ? q / (double)n : 0.0) + eps);
}

void tflk_norm_run(const tflk_norm *p, const float *x, const float *scale, const float *bias, const float *mean_in,
                   const float *var_in, float *y, float *mean, float *inv)
{
    int32_t G = p->groups, S = p->inner;
    if (p->mode == TFLK_NORM_LAYER) {
        int32_t row = G * S;
        for (int32_t o = 0; o < p->outer; o++) {
            const float *xr = x + (size_t)o * (size_t)row;
            float *yr = y + (size_t)o * (size_t)row, m, r;
            stats(xr, row, p->eps, &m, &r);
            for (int32_t j = 0; j < row; j++) {
                float sc = scale[p->n_scale == 1 ? 0 : j], b = bias ? bias[p->n_bias == 1 ? 0 : j] : 0.0f;
                yr[j] = (xr[j] - m) * r * sc + b;
            }
            if (mean)
                mean[o] = m;
            if (inv)
                inv[o] = r;
        }
        return;
    }
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t g = 0; g < G; g++) {
            const float *xr = x + ((size_t)o * (size_t)G + (size_t)g) * (size_t)S;
            float *yr = y + ((size_t)o * (size_t)G + (size_t)g) * (size_t)S, m, r;
            if (p->mode == TFLK_NORM_BATCH) {
                m = mean_in[g];
                r = 1.0f / tflk_sqrtf(var_in[g] + p->eps);
            } else {
                stats(xr, S, p->eps, &m, &r);
            }
            for (int32_t j = 0; j < S; j++)
                yr[j] = (xr[j] - m) * r * scale[g] + bias[g];
        }
}

void tflk_norm_onnx(tflk_norm *p, int32_t mode, int32_t rank, const int64_t *dims, int32_t axis, int32_t n_scale,
                    int32_t n_bias, float eps)
{
    int64_t a = 1, b = 1;
    int32_t split = mode == TFLK_NORM_LAYER ? axis : 2;
    for (int32_t d = 0; d < rank; d++)
        if (d < split)
            a *= dims[d];
        else
            b *= dims[d];
    p->mode = mode;
    p->eps = eps;
    p->n_scale = n_scale;
    p->n_bias = n_bias;
    if (mode == TFLK_NORM_LAYER) {
        p->outer = (int32_t)a;
        p->groups = 1;
        p->inner = (int32_t)b;
    } else {
        p->outer = (int32_t)dims[0];
        p->groups = (int32_t)(rank > 1 ? dims[1] : 1);
        p->inner = (int32_t)b;
    }
}
