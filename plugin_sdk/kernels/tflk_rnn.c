/*
 * tflk_rnn: ONNX RNN in fp32 (layout 0), forward, reverse or bidirectional,
 * shared by cpu_ref (plugins/ops_recurrent) and riscv_mcu (host run and
 * packages). W [dirs, H, I], R [dirs, H, H] and B [dirs, 2H] (Wb then Rb)
 * are ONNX's own arrays, so a package keeps them as the model gave them.
 * Per step, direction and batch row: h = f(clip(x W^T + h R^T + Wb + Rb)),
 * each sum over the inputs, then the hidden state, then the two biases, in
 * float (no contraction). f is one of ONNX's eleven recurrent activations,
 * from tflk_math.c (no libm, so host and MCU give the same bits).
 * sequence_lens (int32, clamped to [0, steps]; callers refuse values outside):
 * the steps past a row's length give Y = 0, a reverse direction starts at
 * the row's own last step, and a row of length 0 gives Y_h = 0 (ops-mcu.md
 * Table B #114, as qk_rnn.c).
 */
#include "tflk.h"

/* ONNX's names, the alpha/beta each consumes and their ONNX defaults */
static const struct {
    const char *name;
    int32_t params;
    float alpha, beta;
} act_names[] = {
    {"Sigmoid", 0, 0.0f, 0.0f},       {"Tanh", 0, 0.0f, 0.0f},         {"Relu", 0, 0.0f, 0.0f},
    {"Affine", 2, 1.0f, 0.0f},        {"LeakyRelu", 1, 0.01f, 0.0f},   {"ThresholdedRelu", 1, 1.0f, 0.0f},
    {"ScaledTanh", 2, 1.0f, 1.0f},    {"HardSigmoid", 2, 0.2f, 0.5f},  {"Elu", 1, 1.0f, 0.0f},
    {"Softsign", 0, 0.0f, 0.0f},      {"Softplus", 0, 0.0f, 0.0f},
};

static int same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

int32_t tflk_rnn_act_of(const char *name, int32_t *n_params, float *alpha, float *beta)
{
    for (int32_t k = 0; k < (int32_t)(sizeof act_names / sizeof act_names[0]); k++)
        if (same(name, act_names[k].name)) {
            *n_params = act_names[k].params;
            *alpha = act_names[k].alpha;
            *beta = act_names[k].beta;
            return k;
        }
    return -1;
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

float tflk_rnn_act(int32_t kind, float alpha, float beta, float x)
{
    switch (kind) {
    case TFLK_RA_SIGMOID: return tflk_sigmoidf(x);
    case TFLK_RA_TANH: return tflk_tanhf(x);
    case TFLK_RA_RELU: return x > 0.0f ? x : 0.0f;
    case TFLK_RA_AFFINE: return alpha * x + beta;
    case TFLK_RA_LEAKY: return x >= 0.0f ? x : alpha * x;
    case TFLK_RA_THRELU: return x > alpha ? x : 0.0f;
    case TFLK_RA_SCALEDTANH: return alpha * tflk_tanhf(beta * x);
    case TFLK_RA_HSIGMOID: return clampf(alpha * x + beta, 0.0f, 1.0f);
    case TFLK_RA_ELU: return x >= 0.0f ? x : alpha * tflk_expm1f(x);
    case TFLK_RA_SOFTSIGN: return x / (1.0f + (x < 0.0f ? -x : x));
    default: /* TFLK_RA_SOFTPLUS, log(1 + e^x) without overflow for large x */
        return x > 0.0f ? x + tflk_logf(1.0f + tflk_expf(-x)) : tflk_logf(1.0f + tflk_expf(x));
    }
}

size_t tflk_rnn_scratch_floats(const tflk_rnn *p) { return 2u * (size_t)p->hidden; }

void tflk_rnn_f32(const tflk_rnn *p, const float *x, const float *w, const float *r, const float *b,
                  const int32_t *lens, const float *h0, float *y, float *yh, float *scratch)
{
    const int32_t T = p->steps, B = p->batch, I = p->n_in, Hs = p->hidden, D = p->dirs;
    float *h = scratch, *hn = scratch + Hs;
    for (int32_t d = 0; d < D; d++) {
        const int32_t rev = D == 2 ? d : p->reverse;
        const float *wd = w + (size_t)d * Hs * I, *rd = r + (size_t)d * Hs * Hs;
        const float *wb = b ? b + (size_t)d * 2 * Hs : NULL, *rb = wb ? wb + Hs : NULL;
        const int32_t f = p->act[d];
        const float alpha = p->alpha[d], beta = p->beta[d];
        for (int32_t bn = 0; bn < B; bn++) {
            int32_t len = lens ? lens[bn] : T;
            len = len < 0 ? 0 : (len > T ? T : len);
            for (int32_t j = 0; j < Hs; j++)
                h[j] = h0 ? h0[((size_t)d * B + bn) * Hs + j] : 0.0f;
            for (int32_t s = 0; s < len; s++) {
                const int32_t t = rev ? len - 1 - s : s;
                const float *xt = x + ((size_t)t * B + bn) * I;
                for (int32_t j = 0; j < Hs; j++) {
                    float a = 0.0f;
                    for (int32_t k = 0; k < I; k++)
                        a += xt[k] * wd[(size_t)j * I + k];
                    for (int32_t k = 0; k < Hs; k++)
                        a += h[k] * rd[(size_t)j * Hs + k];
                    if (wb)
                        a += wb[j] + rb[j];
                    if (p->clip > 0.0f)
                        a = clampf(a, -p->clip, p->clip);
                    hn[j] = tflk_rnn_act(f, alpha, beta, a);
                }
                for (int32_t j = 0; j < Hs; j++) { /* the new h once every j has read the old */
                    h[j] = hn[j];
                    if (y)
                        y[(((size_t)t * D + d) * B + bn) * Hs + j] = hn[j];
                }
            }
            for (int32_t t = len; t < T && y; t++)
                for (int32_t j = 0; j < Hs; j++)
                    y[(((size_t)t * D + d) * B + bn) * Hs + j] = 0.0f;
            if (yh)
                for (int32_t j = 0; j < Hs; j++)
                    yh[((size_t)d * B + bn) * Hs + j] = len ? h[j] : 0.0f;
        }
    }
}
