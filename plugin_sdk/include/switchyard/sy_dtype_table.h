/*
 * sy_dtype_table.h: the one table of element types, their names and storage
 * widths. The core (sy_dtype_name, sy_dtype_size) and the SDK (sy_dt_name,
 * sy_dt_size) both read it, so they cannot disagree. Header-only because the
 * core never links the SDK library and plugins never link the core.
 */
#ifndef SY_DTYPE_TABLE_H
#define SY_DTYPE_TABLE_H

#include <stddef.h>

#include "sy_types.h"

typedef struct sy_dtype_row {
    const char *name; /* ONNX-style lower-case name; NULL: no such type */
    unsigned bits;    /* storage bits of one element (string: one sy_string record) */
} sy_dtype_row;

static const sy_dtype_row sy_dtype_rows[SY_DT__COUNT] = {
    [SY_DT_FLOAT32] = {"float32", 32},
    [SY_DT_UINT8] = {"uint8", 8},
    [SY_DT_INT8] = {"int8", 8},
    [SY_DT_UINT16] = {"uint16", 16},
    [SY_DT_INT16] = {"int16", 16},
    [SY_DT_INT32] = {"int32", 32},
    [SY_DT_INT64] = {"int64", 64},
    [SY_DT_STRING] = {"string", 8 * sizeof(sy_string)},
    [SY_DT_BOOL] = {"bool", 8},
    [SY_DT_FLOAT16] = {"float16", 16},
    [SY_DT_FLOAT64] = {"float64", 64},
    [SY_DT_UINT32] = {"uint32", 32},
    [SY_DT_UINT64] = {"uint64", 64},
    [SY_DT_BFLOAT16] = {"bfloat16", 16},
    [SY_DT_FLOAT8E4M3FN] = {"float8e4m3fn", 8},
    [SY_DT_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
    [SY_DT_FLOAT8E5M2] = {"float8e5m2", 8},
    [SY_DT_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
    [SY_DT_UINT4] = {"uint4", 4},
    [SY_DT_INT4] = {"int4", 4},
    [SY_DT_FLOAT4E2M1] = {"float4e2m1", 4},
    [SY_DT_FLOAT8E8M0] = {"float8e8m0", 8},
    [SY_DT_UINT2] = {"uint2", 2},
    [SY_DT_INT2] = {"int2", 2},
};

/* "undefined" for a value outside the table */
static inline const char *sy_dtype_table_name(sy_dtype dt)
{
    unsigned i = (unsigned)dt;
    return i < SY_DT__COUNT && sy_dtype_rows[i].name ? sy_dtype_rows[i].name : "undefined";
}

/* bytes of one element (string: sizeof(sy_string)); 0 for packed sub-byte types and unknown values */
static inline size_t sy_dtype_table_size(sy_dtype dt)
{
    unsigned i = (unsigned)dt;
    return i < SY_DT__COUNT && sy_dtype_rows[i].bits % 8 == 0 ? sy_dtype_rows[i].bits / 8 : 0;
}

#endif
