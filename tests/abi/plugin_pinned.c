/* A valid plugin that the test pins by sha256. Its constructor marks the
 * environment, so the test can tell whether any of its code ran: with a
 * wrong pin none may run (the pin is checked before dlopen). */
#include "switchyard/sy_plugin.h"

#include <stdlib.h>

__attribute__((constructor)) static void mark_loaded(void) { setenv("SY_ABI_PINNED_LOADED", "1", 1); }

static sy_status *init(const sy_host_api *h, sy_plugin *p, const sy_options *o)
{
    (void)h, (void)p, (void)o;
    return NULL;
}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "abi_pinned",
    .version = "0.0.1",
    .init = init,
};

SY_PLUGIN_DEFINE(desc)
