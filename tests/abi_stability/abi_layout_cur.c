/* The ABI layout as today's plugin_sdk headers define it. */
#include "switchyard/sy_plugin.h"

#include "abi_layout.h"

#define S(t) {ABI_STRUCT, #t, 0, sizeof(t), 0},
#define FIXED(t) {ABI_FIXED_STRUCT, #t, 0, sizeof(t), 0},
#define M(t, m) {ABI_MEMBER, #t "." #m, offsetof(t, m), sizeof(((t *)0)->m), 0},
#define C(c) {ABI_CONSTANT, #c, 0, 0, (long long)(c)},

static const abi_entry entries[] = {
#include "abi_fields.inc"
};

const abi_entry *abi_layout_cur(size_t *n)
{
    *n = sizeof entries / sizeof entries[0];
    return entries;
}

static const abi_entry entries11[] = {
#include "abi_fields.inc"
#include "abi_fields_11.inc"
};

const abi_entry *abi_layout_cur11(size_t *n)
{
    *n = sizeof entries11 / sizeof entries11[0];
    return entries11;
}
