/* init registers a schema and then fails: the plugin is refused with the
 * status' code and message, and nothing it registered is kept. */
#include "switchyard/sy_plugin.h"

static sy_status *infer(sy_node *n)
{
    (void)n;
    return NULL;
}

static const sy_op_schema schema = {
    .struct_size = sizeof(sy_op_schema),
    .domain = "test.switchyard",
    .name = "InitFailOp",
    .since_version = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .infer = infer,
};

static sy_status *init(const sy_host_api *h, sy_plugin *p, const sy_options *o)
{
    (void)o;
    sy_status *st = h->register_schema(p, &schema);
    if (st)
        return st;
    return h->status_new(SY_ERR_UNSUPPORTED, "abi_init_fail: the test device is not present");
}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "abi_init_fail",
    .version = "0.0.1",
    .kinds = SY_PLUGIN_KIND_OPS,
    .init = init,
};

SY_PLUGIN_DEFINE(desc)
