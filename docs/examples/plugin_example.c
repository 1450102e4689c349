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
 *
 * Two environments of one process may load it with different factors: the
 * factor is per environment, in the state init hands to the host (ABI 1.2),
 * and each callback finds it there. (tests/abi/test_plugin_state.c builds
 * this file and runs two environments side by side.)
 */
#include "sy_plugin.h"

#include <stdlib.h>

/* The host table is the same for every environment of the process, so it
 * may be a global; anything that comes from an environment's options may
 * not (a second environment's init would overwrite it). */
static const sy_host_api *host;

/* the plugin's state in one environment */
typedef struct example_env {
    float factor; /* [plugin.example_scale] factor = ... (default 2) */
} example_env;

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

/* prepare: the kernel's state is this environment's plugin state (it lives
 * until the environment unloads the plugin, after every session of it) */
static sy_status *scale_prepare(sy_node *n, void **state)
{
    *state = host->node_plugin_state(n);
    return NULL;
}

/* run: no allocation, no lookups; in and out may be the same buffer */
static sy_status *scale_run(void *state, const sy_kernel_io *io)
{
    const float factor = ((const example_env *)state)->factor;
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
    .prepare = scale_prepare,
    .run = scale_run, /* no release: the state is the plugin's, not the node's */
};

static void example_release(void *state) { free(state); }

static sy_status *example_init(const sy_host_api *h, sy_plugin *p, const sy_options *opts)
{
    host = h;
    example_env *e = malloc(sizeof *e);
    if (!e)
        return h->status_new(SY_ERR_OUT_OF_MEMORY, "example_scale: out of memory");
    e->factor = 2.0f;
    const char *f = opts ? h->option_get(opts, "factor") : NULL; /* NULL when absent */
    if (f) {
        char *end;
        e->factor = strtof(f, &end);
        if (end == f || *end) {
            free(e);
            return h->status_new(SY_ERR_INVALID_CONFIG, "[plugin.example_scale] factor = '%s' is not a number", f);
        }
    }
    /* from here the host owns e: it calls example_release once, when this
     * environment unloads the plugin (or right away if init fails below) */
    sy_status *st = h->plugin_set_state(p, e, example_release);
    if (st) {
        free(e);
        return st;
    }
    st = h->register_schema(p, &scale_schema);
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
