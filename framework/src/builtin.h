/*
 * The core's own operators: control flow (If, Loop, Scan) and the operators
 * of sequence and optional values. They run in the core, not in a plugin,
 * because they drive subgraph sessions or read value kinds no kernel sees
 * (docs/architecture.md, "Control flow and value kinds").
 */
#ifndef SY_BUILTIN_H
#define SY_BUILTIN_H

#include "ir.h"

enum {
    SY_BI_NONE = 0,
    SY_BI_IF,
    SY_BI_LOOP,
    SY_BI_SCAN,
    SY_BI_SEQUENCE_EMPTY,
    SY_BI_SEQUENCE_CONSTRUCT,
    SY_BI_SEQUENCE_AT,
    SY_BI_SEQUENCE_INSERT,
    SY_BI_SEQUENCE_ERASE,
    SY_BI_SEQUENCE_LENGTH,
    SY_BI_SPLIT_TO_SEQUENCE,
    SY_BI_CONCAT_FROM_SEQUENCE,
    SY_BI_SEQUENCE_MAP,
    SY_BI_OPTIONAL,
    SY_BI_OPTIONAL_HAS_ELEMENT,
    SY_BI_OPTIONAL_GET_ELEMENT
};

/* SY_BI_* for (domain, op) at `opset`, SY_BI_NONE when the core has no such op */
int sy_builtin_lookup(const char *domain, const char *op, int32_t opset);
int sy_builtin_of(const ir_node *n);

#endif
