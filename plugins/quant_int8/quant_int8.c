/*
 * quant_int8: 8-bit quantization schemes and the int8 / uint8 recipes of
 * `switchyard quantize`.
 *
 *   int8_asym             int8 activations, asymmetric, per tensor
 *   int8_sym              int8 weights, symmetric ([-127, 127]), per tensor
 *   int8_sym_perchannel   int8 weights, symmetric, per output channel (bias int32 = s_x * s_w[c])
 *   uint8_asym            uint8, asymmetric, per tensor (activations and weights)
 *   uint8_asym_perchannel uint8 weights, asymmetric, per output channel
 *
 * Recipes: "int8" (int8_asym activations, int8_sym[_perchannel] weights),
 * "uint8" (uint8_asym everywhere). Options [plugin.quant_int8]:
 * method = minmax | percentile, percentile = 99.99 (the observers of the
 * schemes when a host drives them through the ABI).
 */
#include "scheme_common.h"

QS_OBSERVER(i8a, SY_DT_INT8, false)
QS_OBSERVER(i8s, SY_DT_INT8, true)
QS_OBSERVER(u8a, SY_DT_UINT8, false)

static const sy_quant_scheme_def schemes[] = {
    QS_SCHEME(i8a, "int8_asym", "int8 activations, asymmetric, per tensor", SY_DT_INT8, false, false),
    QS_SCHEME(i8s, "int8_sym", "int8 weights, symmetric [-127, 127], per tensor", SY_DT_INT8, true, false),
    QS_SCHEME(i8s, "int8_sym_perchannel", "int8 weights, symmetric, per output channel; int32 bias", SY_DT_INT8, true,
              true),
    QS_SCHEME(u8a, "uint8_asym", "uint8, asymmetric, per tensor", SY_DT_UINT8, false, false),
    QS_SCHEME(u8a, "uint8_asym_perchannel", "uint8 weights, asymmetric, per output channel", SY_DT_UINT8, false,
              true),
};

static const sy_quant_recipe recipes[] = {
    {sizeof(sy_quant_recipe), "int8", "int8 asymmetric activations, int8 symmetric weights (per channel with --per-channel), int32 bias",
     &schemes[0], &schemes[1], &schemes[2], 0, false, qs_observer_new, qs_params_free},
    {sizeof(sy_quant_recipe), "uint8", "uint8 asymmetric activations and weights, int32 bias", &schemes[3],
     &schemes[3], &schemes[4], 0, false, qs_observer_new, qs_params_free},
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
    .name = "quant_int8",
    .version = "0.1.0",
    .description = "quantization schemes int8_asym, int8_sym(_perchannel), uint8_asym(_perchannel); recipes int8, uint8",
    .kinds = SY_PLUGIN_KIND_QUANT | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = keys,
    .init = init,
    .fini = fini,
};

SY_PLUGIN_DEFINE(desc)
