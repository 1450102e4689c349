/* Declares one option key ("known"); the test's INI gives it "bogus" too.
 * The host must refuse it by the key's name, before init runs. */
#include "switchyard/sy_plugin.h"

#include <stdlib.h>

static sy_status *init(const sy_host_api *h, sy_plugin *p, const sy_options *o)
{
    (void)h, (void)p, (void)o;
    setenv("SY_ABI_UNKNOWN_KEY_INIT", "1", 1);
    return NULL;
}

static const char *const keys[] = {"known", NULL};

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "abi_unknown_key",
    .version = "0.0.1",
    .option_keys = keys,
    .init = init,
};

SY_PLUGIN_DEFINE(desc)
