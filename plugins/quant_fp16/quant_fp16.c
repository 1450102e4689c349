/*
 * quant_fp16: float16 storage of float tensors (weights), no integer math:
 * quantize = fp32 -> fp16 (round to nearest even), dequantize = fp16 -> fp32.
 * Recipe "fp16": weights stored as float16, activations stay float32.
 */
#include "scheme_common.h"

QS_OBSERVER(f16, SY_DT_FLOAT16, false)

static const sy_quant_scheme_def schemes[] = {
    {sizeof(sy_quant_scheme_def), "fp16", "float16 storage (round to nearest even), no scale", SY_DT_FLOAT16, true,
     false, qs_fp16_quantize, qs_fp16_dequantize, obs_f16, qs_observer_update, qs_observer_finalize,
     qs_observer_release},
};

static const sy_quant_recipe recipes[] = {
    {sizeof(sy_quant_recipe), "fp16", "weights stored as float16, activations float32", NULL, &schemes[0], NULL, 0,
     true, qs_observer_new, qs_params_free},
};

static sy_status *init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    return qs_register(host, p, schemes, SY_COUNT_OF(schemes), recipes, SY_COUNT_OF(recipes));
}

static void fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "quant_fp16",
    .version = "0.1.0",
    .description = "float16 storage scheme; recipe fp16",
    .kinds = SY_PLUGIN_KIND_QUANT | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = NULL,
    .init = init,
    .fini = fini,
};

SY_PLUGIN_DEFINE(desc)
