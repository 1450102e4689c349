/* Built against a newer minor than the host has: it may use table entries
 * the host lacks, so the host must refuse it before init. */
#include "switchyard/sy_plugin.h"

#include <stdlib.h>

static sy_status *init(const sy_host_api *h, sy_plugin *p, const sy_options *o)
{
    (void)h, (void)p, (void)o;
    setenv("SY_ABI_NEWER_MINOR_INIT", "1", 1);
    return NULL;
}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR + 1,
    .name = "abi_newer_minor",
    .version = "0.0.1",
    .init = init,
};

SY_PLUGIN_DEFINE(desc)
