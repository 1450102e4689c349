/* A minimal out-of-tree plugin: one schema, with the SDK's helpers linked in. */
#include <switchyard/sy_plugin.h>

static const sy_host_api *host;

static sy_status *infer(sy_node *n)
{
    const sy_tensor *x = host->node_input(n, 0);
    return host->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static const sy_op_schema schema = {
    .struct_size = sizeof(sy_op_schema),
    .domain = "com.example",
    .name = "Hello",
    .since_version = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .infer = infer,
};

static sy_status *init(const sy_host_api *h, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    host = h;
    return h->register_schema(p, &schema);
}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "oot_hello",
    .version = "0.0.1",
    .description = "out-of-tree test plugin",
    .kinds = SY_PLUGIN_KIND_OPS,
    .init = init,
};

SY_PLUGIN_DEFINE(desc)
