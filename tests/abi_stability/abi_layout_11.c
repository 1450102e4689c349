/* The ABI layout as the frozen ABI 1.1 headers (abi-1.1/) define it: the 1.0
 * list and what 1.1 added. */
#include "switchyard/sy_plugin.h"

#include "abi_layout.h"

#define S(t) {ABI_STRUCT, #t, 0, sizeof(t), 0},
#define FIXED(t) {ABI_FIXED_STRUCT, #t, 0, sizeof(t), 0},
#define M(t, m) {ABI_MEMBER, #t "." #m, offsetof(t, m), sizeof(((t *)0)->m), 0},
#define C(c) {ABI_CONSTANT, #c, 0, 0, (long long)(c)},

static const abi_entry entries[] = {
#include "abi_fields.inc"
#include "abi_fields_11.inc"
};

const abi_entry *abi_layout_11(size_t *n)
{
    *n = sizeof entries / sizeof entries[0];
    return entries;
}
