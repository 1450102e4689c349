/*
 * quant_int16: 16x8 quantization (int16 activations, int8 weights), the
 * TFLite/CMSIS-NN "16x8" mode and HTP's INT16 configuration.
 *
 *   int16_sym             int16 activations, symmetric (zero point 0), per tensor
 *   int16x8_w8            int8 weights, symmetric, per tensor
 *   int16x8_w8_perchannel int8 weights, symmetric, per output channel
 *
 * Recipe "int16x8". Options as quant_int8.
 */
#include "scheme_common.h"

QS_OBSERVER(i16s, SY_DT_INT16, true)
QS_OBSERVER(i8s, SY_DT_INT8, true)

static const sy_quant_scheme_def schemes[] = {
    QS_SCHEME(i16s, "int16_sym", "int16 activations, symmetric, per tensor", SY_DT_INT16, true, false),
    QS_SCHEME(i8s, "int16x8_w8", "int8 weights of the 16x8 mode, symmetric, per tensor", SY_DT_INT8, true, false),
    QS_SCHEME(i8s, "int16x8_w8_perchannel", "int8 weights of the 16x8 mode, symmetric, per output channel",
              SY_DT_INT8, true, true),
};

static const sy_quant_recipe recipes[] = {
    {sizeof(sy_quant_recipe), "int16x8", "int16 symmetric activations, int8 symmetric weights, int32 bias",
     &schemes[0], &schemes[1], &schemes[2], 0, false, qs_observer_new, qs_params_free},
};

static sy_status *init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    return qs_register(host, p, schemes, SY_COUNT_OF(schemes), recipes, SY_COUNT_OF(recipes));
}

static void fini(void) {}

static const char *const keys[] = {"method", "percentile", NULL};

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "quant_int16",
    .version = "0.1.0",
    .description = "16x8 quantization: int16_sym activations, int8 weights; recipe int16x8",
    .kinds = SY_PLUGIN_KIND_QUANT | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = keys,
    .init = init,
    .fini = fini,
};

SY_PLUGIN_DEFINE(desc)
