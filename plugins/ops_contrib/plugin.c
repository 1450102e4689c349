/*
 * ops_contrib: ONNX Runtime's com.microsoft contrib operators (what its
 * exporters and transformer optimizer write), cpu_ref kernels. The
 * operators live in norm.c, gelu.c, attention.c and qlinear.c; this file
 * registers their tables.
 */
#include "contrib.h"

const sy_host_api *contrib_host; /* process-wide: the same host table in every environment */

static sy_status *contrib_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    contrib_host = host;
    const contrib_tables *all[] = {&contrib_norm_tables, &contrib_gelu_tables, &contrib_attention_tables,
                                   &contrib_qlinear_tables};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        SY_TRY(sy_register_tables(host, p, all[i]->schemas, all[i]->n_schemas, all[i]->kernels, all[i]->n_kernels));
    return NULL;
}

static void contrib_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_contrib",
    .version = "0.1.0",
    .description = "ONNX Runtime contrib operators (domain com.microsoft): Attention, Embed/Skip LayerNorm, "
                   "Gelu forms, QLinear*; cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = contrib_init,
    .fini = contrib_fini,
};

SY_PLUGIN_DEFINE(desc)
