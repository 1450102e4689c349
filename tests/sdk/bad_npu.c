/*
 * bad_npu: a provider with deliberate bugs, for tests/sdk: the conformance
 * kit must find them. Add ignores broadcasting of its second input (it
 * subtracts instead when the second input is broadcast), Relu is leaky.
 */
#include "switchyard/sy_sdk.h"

#include <stdlib.h>

static const sy_host_api *H;

static sy_status *bad_create(const sy_options *opts, void **state)
{
    (void)opts;
    *state = NULL;
    return NULL;
}

static void bad_destroy(void *state) { (void)state; }

static const char *const keys[] = {"level", NULL};

static const sy_provider_def bad_provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "bad_npu",
    .description = "test provider with deliberate bugs (tests/sdk)",
    .option_keys = keys,
    .create = bad_create,
    .destroy = bad_destroy,
};

SY_BINARY_FN(add_f32, float, float, float, SY_LD_ID, SY_LD_ID, x + y)
SY_BINARY_FN(sub_f32, float, float, float, SY_LD_ID, SY_LD_ID, x - y)

static sy_status *run_add(void *state, const sy_kernel_io *io)
{
    (void)state;
    bool bcast = sy_tensor_numel(io->inputs[1]) < sy_tensor_numel(io->outputs[0]);
    return sy_bcast_apply(H, 2, io->inputs, io->outputs[0], bcast ? sub_f32 : add_f32, NULL);
}

static sy_status *run_relu(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    for (int64_t i = 0; i < sy_tensor_numel(io->outputs[0]); i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
    return NULL;
}

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), "", "Add", 7, 0, "bad_npu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL, sy_prepare_nothing,
     run_add, NULL, NULL},
    {sizeof(sy_kernel_def), "", "Relu", 6, 0, "bad_npu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, NULL, sy_prepare_nothing,
     run_relu, NULL, NULL},
};

static sy_status *bad_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    SY_TRY(sy_register_tables(host, p, NULL, 0, kernels, SY_COUNT_OF(kernels)));
    return host->register_provider(p, &bad_provider);
}

static const sy_plugin_desc bad_desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "bad_npu",
    .version = "0.1.0",
    .description = "provider with deliberate bugs for the conformance kit's own test",
    .kinds = SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_OPS,
    .init = bad_init,
};

SY_PLUGIN_DEFINE(bad_desc)
