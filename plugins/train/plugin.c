/*
 * train: on-device training operators on cpu_ref: the optimizers of ONNX's
 * ai.onnx.preview.training domain (Adagrad, Momentum, Adam) and the backward
 * operators of the switchyard.train domain; docs/training.md says what the
 * plugin covers and what is planned.
 */
#include "train.h"

const sy_host_api *H; /* process-wide: the same host table in every environment */

static sy_status *train_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
#define REG(part)                                                                                                  \
    SY_TRY(sy_register_tables(host, p, sy_train_##part##_schemas, sy_train_##part##_n_schemas,                      \
                              sy_train_##part##_kernels, sy_train_##part##_n_kernels))
    REG(optim);
    REG(elem);
    REG(conv);
    REG(loss);
#undef REG
    return NULL;
}

static void train_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "train",
    .version = "0.1.0",
    .description = "training operators: ONNX optimizers (Adagrad, Momentum, Adam) and switchyard.train backward ops, cpu_ref",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = train_init,
    .fini = train_fini,
};

SY_PLUGIN_DEFINE(desc)
