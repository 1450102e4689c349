/*
 * Switchyard — types shared by the host API and the plugin ABI.
 *
 * This header is part of ABI v1. Enum values are fixed forever: new values
 * are only appended. The element type numbers are those of ONNX
 * TensorProto.DataType so that importers and tools never need a table.
 */
#ifndef SWITCHYARD_SY_TYPES_H
#define SWITCHYARD_SY_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SY_EXPORT __attribute__((visibility("default")))
#define SY_PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#define SY_EXPORT
#define SY_PRINTF(fmt_idx, arg_idx)
#endif

/* Element types (numbering = ONNX TensorProto.DataType). */
typedef enum sy_dtype {
    SY_DT_UNDEFINED = 0,
    SY_DT_FLOAT32 = 1,
    SY_DT_UINT8 = 2,
    SY_DT_INT8 = 3,
    SY_DT_UINT16 = 4,
    SY_DT_INT16 = 5,
    SY_DT_INT32 = 6,
    SY_DT_INT64 = 7,
    SY_DT_STRING = 8,
    SY_DT_BOOL = 9,
    SY_DT_FLOAT16 = 10,
    SY_DT_FLOAT64 = 11,
    SY_DT_UINT32 = 12,
    SY_DT_UINT64 = 13,
    SY_DT_BFLOAT16 = 16,
    SY_DT_FLOAT8E4M3FN = 17,   /* one byte each */
    SY_DT_FLOAT8E4M3FNUZ = 18,
    SY_DT_FLOAT8E5M2 = 19,
    SY_DT_FLOAT8E5M2FNUZ = 20,
    SY_DT_UINT4 = 21,          /* packed two per byte, low nibble first */
    SY_DT_INT4 = 22,
    SY_DT_FLOAT4E2M1 = 23,     /* packed two per byte, low nibble first */
    SY_DT_FLOAT8E8M0 = 24,     /* one byte each */
    SY_DT_UINT2 = 25,          /* packed four per byte, lowest bits first */
    SY_DT_INT2 = 26,
    SY_DT__COUNT = 32
} sy_dtype;

/* Bit for a dtype in a dtype mask (kernels declare accepted types this way). */
#define SY_DT_BIT(dt) (UINT64_C(1) << (unsigned)(dt))
#define SY_DT_MASK_FLOATS (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16) | SY_DT_BIT(SY_DT_FLOAT64) | SY_DT_BIT(SY_DT_BFLOAT16))
#define SY_DT_MASK_INTS                                                                                            \
    (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_UINT16) |            \
     SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_UINT32) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_UINT64))
#define SY_DT_MASK_ALL (~UINT64_C(0))

/* Status codes. One enum for the whole system; a status handle carries one
 * code plus a message. Values are fixed; new codes are appended. */
typedef enum sy_status_code {
    SY_OK = 0,
    SY_ERR_INVALID_ARGUMENT = 1, /* caller passed something wrong */
    SY_ERR_NOT_FOUND = 2,        /* file, name, tensor, extension absent */
    SY_ERR_NOT_IMPLEMENTED = 3,  /* op/dtype/feature nobody provides */
    SY_ERR_OUT_OF_MEMORY = 4,
    SY_ERR_IO = 5,               /* read/write/mmap failed */
    SY_ERR_INVALID_MODEL = 6,    /* corrupt or inconsistent model file */
    SY_ERR_INVALID_CONFIG = 7,   /* INI error: syntax, unknown key, bad value */
    SY_ERR_PLUGIN = 8,           /* plugin could not be loaded or failed init */
    SY_ERR_ABI_MISMATCH = 9,     /* plugin built for an incompatible ABI */
    SY_ERR_SHAPE = 10,           /* shape/rank/broadcast rule violated */
    SY_ERR_TYPE = 11,            /* dtype rule violated */
    SY_ERR_UNSUPPORTED = 12,     /* valid request this build/provider refuses */
    SY_ERR_RUNTIME = 13,         /* failure while running a kernel */
    SY_ERR_INTERNAL = 14,        /* a bug in Switchyard */
    SY_ERR_CONTEXT_EXHAUSTED = 15, /* LLM: no room left in the KV cache */
    SY_ERR_DYNAMIC_SHAPE = 16,   /* shape inference needs input values not yet known */
    SY_ERR_PIN_MISMATCH = 17,    /* sha256 pin of a plugin file does not match */
    SY_ERR_BUDGET = 18,          /* a memory budget (arena, VTCM, SRAM) is exceeded */
    SY_ERR__COUNT
} sy_status_code;

/* Opaque status handle. NULL means success. Created by the host (the core
 * or a plugin through the host API); freed with sy_status_free / host->status_free. */
typedef struct sy_status sy_status;

typedef enum sy_log_level {
    SY_LOG_ERROR = 0,
    SY_LOG_WARN = 1,
    SY_LOG_INFO = 2,
    SY_LOG_DEBUG = 3,
    SY_LOG_TRACE = 4
} sy_log_level;

#define SY_MAX_RANK 8

/* Quantization parameters of a tensor: per tensor (axis < 0, count 1) or
 * per axis (count = dims[axis]). Scales are float, zero points int32. */
typedef struct sy_quant_params {
    uint32_t struct_size;
    int32_t axis;          /* -1: per tensor */
    int32_t block_size;    /* 0: not block-wise; else elements per block along axis */
    uint32_t count;        /* number of scale/zero-point pairs */
    const float *scales;
    const int32_t *zero_points; /* may be NULL: all zero */
    sy_dtype storage;      /* the quantized element type */
} sy_quant_params;

/* One element of a SY_DT_STRING tensor: `size` bytes of UTF-8 at `data`
 * (not NUL-terminated; may hold NULs). A string tensor's data is an array of
 * these records, planned and copied like any 16-byte element; the bytes they
 * point to are immutable and owned elsewhere: by the model (initializers), by
 * the caller (borrowed inputs), by the session (copied inputs, folded
 * constants), or by the session's run heap (host->run_alloc, kernel outputs,
 * valid until the next run starts). Copying a record never copies its bytes. */
typedef struct sy_string {
    const char *data;
    uint64_t size;
} sy_string;

/* A tensor as kernels see it: dense, row-major, already placed. */
typedef struct sy_tensor {
    uint32_t struct_size;
    sy_dtype dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    void *data;                   /* NULL while only the shape is known */
    size_t nbytes;                /* bytes of data (0 for an empty tensor) */
    const sy_quant_params *quant; /* NULL when not quantized */
    uint32_t domain;              /* the session's memory domain index of the data (0 = host RAM) */
    const char *name;             /* value name in the graph, for messages */
} sy_tensor;

/* Why a node was (not) placed on a provider (explain, strict-mode errors). */
typedef enum sy_reason {
    SY_REASON_NONE = 0,
    SY_REASON_TAKEN = 1,
    SY_REASON_OP_UNSUPPORTED = 2,  /* provider does not know the op */
    SY_REASON_DTYPE = 3,           /* dtype configuration not accepted */
    SY_REASON_RANK = 4,            /* rank out of range */
    SY_REASON_ATTRIBUTE = 5,       /* attribute/parameter rule violated */
    SY_REASON_MEMORY = 6,          /* does not fit the provider's memory */
    SY_REASON_NO_KERNEL = 7,       /* no kernel registered for this provider */
    SY_REASON_POLICY = 8,          /* excluded by configuration */
    SY_REASON_SHAPE = 9,           /* shape rule violated */
    SY_REASON_FALLBACK = 10,       /* placed on cpu_ref because others declined */
    SY_REASON__COUNT
} sy_reason;

/* ---- profiling ---------------------------------------------------------- */
typedef struct sy_profile_event {
    uint32_t struct_size;
    const char *name;     /* e.g. node name */
    const char *category; /* "node", "copy", "partition", "emulated" */
    uint64_t start_ns;    /* host monotonic clock, or modelled time */
    uint64_t duration_ns;
    int64_t cycles;       /* modelled cycles, -1 when not applicable */
} sy_profile_event;

#ifdef __cplusplus
}
#endif
#endif
