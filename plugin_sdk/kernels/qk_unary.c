/*
 * qk_unary: QUnary's function list (see qk_unary.h). Each fn is the ONNX
 * op the QDQ pass folded, evaluated by tflk_unary_one (the fp32 kernel the
 * MCU runs for the float op), with that op's ONNX attribute defaults.
 */
#include "qk_unary.h"
#include "qk.h"

#include <string.h>

enum { A_ALPHA = 1, A_BETA = 2, A_GAMMA = 4, A_MINMAX = 8, A_APPROX = 16 };

static const struct {
    const char *fn;
    int32_t kind, which;
    float alpha, beta;
} fns[] = {
    {"Identity", -1, 0, 0.0f, 0.0f},
    {"Relu", TFLK_U_RELU, 0, 0.0f, 0.0f},
    {"Clip", TFLK_U_CLIP, A_MINMAX, 0.0f, 0.0f},
    {"Sigmoid", TFLK_U_LOGISTIC, 0, 0.0f, 0.0f},
    {"Tanh", TFLK_U_TANH, 0, 0.0f, 0.0f},
    {"LeakyRelu", TFLK_U_LEAKY, A_ALPHA, 0.01f, 0.0f},
    {"HardSigmoid", TFLK_U_HSIGMOID, A_ALPHA | A_BETA, 0.2f, 0.5f},
    {"HardSwish", TFLK_U_HSWISHX, 0, 0.0f, 0.0f},
    {"Abs", TFLK_U_ABS, 0, 0.0f, 0.0f},
    {"Ceil", TFLK_U_CEIL, 0, 0.0f, 0.0f},
    {"Floor", TFLK_U_FLOOR, 0, 0.0f, 0.0f},
    {"Round", TFLK_U_ROUND, 0, 0.0f, 0.0f},
    {"Exp", TFLK_U_EXP, 0, 0.0f, 0.0f},
    {"Log", TFLK_U_LOG, 0, 0.0f, 0.0f},
    {"Sqrt", TFLK_U_SQRT, 0, 0.0f, 0.0f},
    {"Neg", TFLK_U_NEG, 0, 0.0f, 0.0f},
    {"Sin", TFLK_U_SIN, 0, 0.0f, 0.0f},
    {"Cos", TFLK_U_COS, 0, 0.0f, 0.0f},
    {"Tan", TFLK_U_TAN, 0, 0.0f, 0.0f},
    {"Erf", TFLK_U_ERF, 0, 0.0f, 0.0f},
    {"Elu", TFLK_U_ELUA, A_ALPHA, 1.0f, 0.0f},
    {"Celu", TFLK_U_CELU, A_ALPHA, 1.0f, 0.0f},
    {"Selu", TFLK_U_SELU, A_ALPHA | A_GAMMA, 1.67326319217681884765625f, 1.05070102214813232421875f},
    {"ThresholdedRelu", TFLK_U_THRELU, A_ALPHA, 1.0f, 0.0f},
    {"Softsign", TFLK_U_SOFTSIGN, 0, 0.0f, 0.0f},
    {"Softplus", TFLK_U_SOFTPLUS, 0, 0.0f, 0.0f},
    {"Gelu", TFLK_U_GELU, A_APPROX, 0.0f, 0.0f},
    {"Swish", TFLK_U_SWISH, A_ALPHA, 1.0f, 0.0f},
};

const char *const qk_unary_fn_names[] = {
    "Identity", "Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Abs", "Ceil",
    "Floor", "Round", "Exp", "Log", "Sqrt", "Neg", "Sin", "Cos", "Tan", "Erf", "Elu", "Celu", "Selu",
    "ThresholdedRelu", "Softsign", "Softplus", "Gelu", "Swish", NULL,
};

int qk_unary_fn(const char *fn, tflk_unary *u, int32_t *which)
{
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(fn, fns[i].fn)) {
            u->kind = fns[i].kind;
            u->approx = 0;
            u->alpha = fns[i].alpha;
            u->beta = fns[i].beta;
            *which = fns[i].which;
            return 0;
        }
    return -1;
}

void qk_unary_table(const tflk_unary *u, float sx, int32_t zx, int32_t xlo, int32_t xhi, float sy, int32_t zy,
                    int32_t lo, int32_t hi, int32_t *table)
{
    for (int32_t q = xlo; q <= xhi; q++) {
        float x = (float)(q - zx) * sx; /* DequantizeLinear */
        table[q - xlo] = qk_quantize1(tflk_unary_one(u, x), sy, zy, lo, hi);
    }
}
