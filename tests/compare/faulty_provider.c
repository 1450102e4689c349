/*
 * test_faulty: a provider with one deliberately wrong kernel, for the tests
 * of `switchyard compare`. Never installed.
 *
 *   Relu    (float32)  correct: y = max(x, 0)
 *   Reshape (float32)  WRONG: the data comes out rotated by one element
 *                      (y[i] = x[(i + 1) % n]), a layout bug of the kind a
 *                      provider with its own tiling could have
 *
 * With `providers = test_faulty, cpu_ref`, graphs/tiny_cnn.onnx runs conv,
 * pool, fc and softmax on cpu_ref, relu and flatten (the Reshape) here, so
 * the first wrong value is flatten's, after a correct node of this provider.
 */
#include "sy_plugin.h"

#include <string.h>


static sy_status *relu_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    size_t n = io->outputs[0]->nbytes / sizeof(float);
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    return NULL;
}

/* the bug: rotated by one element (in place when the core aliases y to x) */
static sy_status *reshape_run_wrong(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    size_t n = io->outputs[0]->nbytes / sizeof(float);
    if (n == 0)
        return NULL;
    float first = x[0];
    memmove(y, x + 1, (n - 1) * sizeof(float));
    y[n - 1] = first;
    return NULL;
}

static const sy_kernel_def kernels[] = {
    {.struct_size = sizeof(sy_kernel_def), .domain = "", .op = "Relu", .since_version = 6, .provider = "test_faulty",
     .type_mask = SY_DT_BIT(SY_DT_FLOAT32), .type_input = 0, .run = relu_run},
    {.struct_size = sizeof(sy_kernel_def), .domain = "", .op = "Reshape", .since_version = 5,
     .provider = "test_faulty", .type_mask = SY_DT_BIT(SY_DT_FLOAT32), .type_input = 0, .run = reshape_run_wrong},
};

static sy_status *faulty_create(const sy_options *opts, void **state)
{
    (void)opts;
    *state = NULL;
    return NULL;
}

static void faulty_destroy(void *state) { (void)state; }

static const sy_provider_def provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "test_faulty",
    .description = "test provider with a deliberately wrong Reshape kernel (switchyard compare tests)",
    .create = faulty_create,
    .destroy = faulty_destroy,
};

static sy_status *faulty_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    (void)host;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
        sy_status *st = host->register_kernel(p, &kernels[i]);
        if (st)
            return st;
    }
    return host->register_provider(p, &provider);
}

static void faulty_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "test_faulty",
    .version = "0.1.0",
    .description = "test provider with one deliberately wrong kernel",
    .kinds = SY_PLUGIN_KIND_PROVIDER,
    .init = faulty_init,
    .fini = faulty_fini,
};

SY_PLUGIN_DEFINE(desc)
