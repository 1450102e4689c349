/* One entry per struct, member and constant of abi_fields.inc. */
#ifndef ABI_LAYOUT_H
#define ABI_LAYOUT_H
#include <stddef.h>
#include <stdint.h>

typedef enum abi_entry_kind { ABI_STRUCT, ABI_FIXED_STRUCT, ABI_MEMBER, ABI_CONSTANT } abi_entry_kind;

typedef struct abi_entry {
    abi_entry_kind kind;
    const char *name;   /* "sy_tensor", "sy_tensor.dims", "SY_DT_FLOAT32" */
    size_t offset;      /* members */
    size_t size;        /* structs and members */
    long long value;    /* constants */
} abi_entry;

const abi_entry *abi_layout_10(size_t *n);
const abi_entry *abi_layout_cur(size_t *n);
/* ABI 1.1: the 1.0 list followed by the 1.1 additions */
const abi_entry *abi_layout_11(size_t *n);
const abi_entry *abi_layout_cur11(size_t *n);
#endif
