/*
 * A complete Switchyard plugin: one op, com.example::Scale (y = factor * x,
 * float32), with its schema, a cpu_ref kernel and one INI option.
 * Documented in docs/plugin-abi.md. Build it as a shared library named
 * libsy_example_scale.so, e.g.
 *
 *   cc -std=c11 -shared -fPIC -fvisibility=hidden -Iplugin_sdk/include/switchyard \
 *      docs/examples/plugin_example.c -o libsy_example_scale.so
 *
 * and load it with an INI:  [switchyard] plugin_dirs = @default
 *                           plugins = libsy_example_scale.so
 *                           [plugin.example_scale] factor = 3
 */
#include "sy_plugin.h"

#include <stdlib.h>

static const sy_host_api *host; /* the table the host injected in init */
static float factor = 2.0f;     /* from [plugin.example_scale] factor = ... */

/* shape inference: one float32 input, output like it */
static sy_status *scale_infer(sy_node *n)
{
    const sy_tensor *x = host->node_input(n, 0);
    if (x->dtype != SY_DT_FLOAT32)
        return host->status_new(SY_ERR_TYPE, "Scale: input is %d, only float32 is supported", (int)x->dtype);
    return host->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

/* y may be written over x when x is not used later (the core decides) */
static const sy_inplace_pair scale_inplace[] = {{.input = 0, .output = 0, .must_alias = false}};

static const sy_op_schema scale_schema = {
    .struct_size = sizeof(sy_op_schema),
    .domain = "com.example",
    .name = "Scale",
    .since_version = 1,
    .min_inputs = 1, .max_inputs = 1,
    .min_outputs = 1, .max_outputs = 1,
    .attrs = NULL, .n_attrs = 0,
    .infer = scale_infer,
    .inplace = scale_inplace, .n_inplace = 1,
    .flags = 0,
    .doc = "y = factor * x (factor from the plugin's INI section)",
};

/* run: no allocation, no lookups; in and out may be the same buffer */
static sy_status *scale_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    const float *src = x->data;
    float *dst = y->data;
    for (size_t i = 0; i < y->nbytes / sizeof(float); i++)
        dst[i] = factor * src[i];
    return NULL;
}

static const sy_kernel_def scale_kernel = {
    .struct_size = sizeof(sy_kernel_def),
    .domain = "com.example",
    .op = "Scale",
    .since_version = 1,
    .until_version = 0,
    .provider = "cpu_ref",
    .type_mask = SY_DT_BIT(SY_DT_FLOAT32),
    .type_input = 0,
    .run = scale_run, /* no prepare/release: no per-node state */
};

static sy_status *example_init(const sy_host_api *h, sy_plugin *p, const sy_options *opts)
{
    host = h;
    const char *f = h->option_get(opts, "factor"); /* NULL when absent */
    if (f) {
        char *end;
        factor = strtof(f, &end);
        if (end == f || *end)
            return h->status_new(SY_ERR_INVALID_CONFIG, "[plugin.example_scale] factor = '%s' is not a number", f);
    }
    sy_status *st = h->register_schema(p, &scale_schema);
    if (!st)
        st = h->register_kernel(p, &scale_kernel);
    return st; /* on failure nothing registered is kept */
}

static void example_fini(void) {}

static const char *const example_keys[] = {"factor", NULL};

static const sy_plugin_desc example_desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "example_scale",
    .version = "1.0.0",
    .description = "example: com.example::Scale on cpu_ref",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = example_keys,
    .init = example_init,
    .fini = example_fini,
};

SY_PLUGIN_DEFINE(example_desc)
