/*
 * quant_int4: 4-bit block-wise weights (activations stay float): each block
 * of `block_size` consecutive weights along the input-channel axis gets its
 * own symmetric scale (ONNX DequantizeLinear-21 block_size). Packed two per
 * byte, low nibble first.
 *
 *   int4_block   int4 weights, symmetric [-7, 7] per block
 *
 * Options [plugin.quant_int4]: block_size = 32 (>= 2), method, percentile.
 * Recipe "int4_block", also published as "int4" (switchyard quantize
 * --scheme int4 [--block-size N]). The recipes carry the environment's
 * block size, so each environment registers its own copy, kept in the
 * plugin's state of that environment (ABI 1.2); the constant template
 * below is shared.
 */
#include "scheme_common.h"

#include <stdlib.h>

QS_OBSERVER(i4, SY_DT_INT4, true)

static const sy_quant_scheme_def schemes[] = {
    QS_SCHEME(i4, "int4_block", "int4 weights, symmetric, one scale per block", SY_DT_INT4, true, true),
};

#define INT4_RECIPE(name)                                                                                          \
    {sizeof(sy_quant_recipe), name, "int4 block-wise symmetric weights (block_size option, default 32), float activations", \
     NULL, &schemes[0], NULL, 32, false, qs_observer_new, qs_params_free}
static const sy_quant_recipe recipe_template[] = {INT4_RECIPE("int4_block"), INT4_RECIPE("int4")};

/* the plugin's state in one environment: its recipes (held by the registry) */
typedef struct i4_env {
    sy_quant_recipe recipes[SY_COUNT_OF(recipe_template)];
} i4_env;

static void release(void *state) { free(state); }

static sy_status *init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    const char *bs = opts ? host->option_get(opts, "block_size") : NULL;
    int32_t block = 32;
    if (bs) {
        char *end = NULL;
        long v = strtol(bs, &end, 10);
        if (!end || *end || v < 2 || v > 65536)
            return host->status_new(SY_ERR_INVALID_CONFIG, "[plugin.quant_int4] block_size = %s: an integer in [2, 65536] is required", bs);
        block = (int32_t)v;
    }
    i4_env *e = malloc(sizeof *e);
    if (!e)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "quant_int4: out of memory");
    for (size_t i = 0; i < SY_COUNT_OF(e->recipes); i++) {
        e->recipes[i] = recipe_template[i];
        e->recipes[i].block_size = block;
    }
    sy_status *st = host->plugin_set_state(p, e, release);
    if (st) {
        free(e);
        return st;
    }
    return qs_register(host, p, schemes, SY_COUNT_OF(schemes), e->recipes, SY_COUNT_OF(e->recipes));
}

static void fini(void) {}

static const char *const keys[] = {"block_size", "method", "percentile", NULL};

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "quant_int4",
    .version = "0.1.0",
    .description = "4-bit block-wise weight scheme int4_block; recipe int4_block",
    .kinds = SY_PLUGIN_KIND_QUANT | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = keys,
    .init = init,
    .fini = fini,
};

SY_PLUGIN_DEFINE(desc)
