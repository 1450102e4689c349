/* Built for a future ABI major: the host must refuse it before init. */
#include "switchyard/sy_plugin.h"

#include <stdlib.h>

static sy_status *init(const sy_host_api *h, sy_plugin *p, const sy_options *o)
{
    (void)h, (void)p, (void)o;
    setenv("SY_ABI_WRONG_MAJOR_INIT", "1", 1);
    return NULL;
}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR + 1,
    .abi_minor = 0,
    .name = "abi_wrong_major",
    .version = "0.0.1",
    .init = init,
};

SY_PLUGIN_DEFINE(desc)
