/* A descriptor whose struct_size is smaller than ABI 1.0's: the host must
 * not read past it. */
#include "switchyard/sy_plugin.h"

static const sy_plugin_desc desc = {
    .struct_size = 8,
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
};

SY_PLUGIN_DEFINE(desc)
