/*
 * train: on-device training operators. Today the optimizers of ONNX's
 * ai.onnx.preview.training domain (Adagrad, Momentum, Adam) on cpu_ref;
 * docs/training.md says what the plugin covers and what is planned.
 */
#include "train.h"

const sy_host_api *H;

static sy_status *train_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, sy_train_optim_schemas, sy_train_optim_n_schemas, sy_train_optim_kernels,
                              sy_train_optim_n_kernels);
}

static void train_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "train",
    .version = "0.1.0",
    .description = "training operators: ONNX ai.onnx.preview.training optimizers (Adagrad, Momentum, Adam), cpu_ref",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = train_init,
    .fini = train_fini,
};

SY_PLUGIN_DEFINE(desc)
