/*
 * Types of the application API shared by switchyard.h (host applications)
 * and sy_app_api.h (extension plugins that drive sessions like a host).
 * Part of ABI v1: structs grow only at the end.
 */
#ifndef SWITCHYARD_SY_APP_TYPES_H
#define SWITCHYARD_SY_APP_TYPES_H

#include "sy_types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sy_value_info {
    uint32_t struct_size;
    const char *name;
    sy_dtype dtype;
    int32_t rank;                   /* -1 unknown */
    int64_t dims[SY_MAX_RANK];      /* -1 for a symbolic or unknown dim */
    const char *dim_names[SY_MAX_RANK]; /* symbolic names, or NULL */
} sy_value_info;

/* Force one node onto one provider (sy_session_options.placements). */
typedef struct sy_placement_override {
    const char *node;     /* node name as in the model (sy_model_node) */
    const char *provider; /* a provider of the env, configured or fallback */
} sy_placement_override;

typedef struct sy_session_options {
    uint32_t struct_size;
    int32_t threads;       /* 0: from the INI (default 1) */
    int32_t strict;        /* -1: from the INI; 0/1 override */
    bool profiling;        /* collect profiling events */
    /* a compile cache written by sy_session_save_compiled (switchyard
     * compile): partitions found in it skip their provider's compile; a
     * cache made for other providers, versions or options is refused */
    const char *compiled_cache;
    /* requantization form of the integer kernels, "onnx", "gemmlowp" or "single_rounding";
     * NULL: from [provider.P] requant, then [plugin.ops_quant] requant,
     * then "onnx". A `requant` attribute in the model wins over it. */
    const char *requant;
    /* per-node placement overrides (the accuracy debugger moves one node to
     * the reference provider with them): the node runs on that provider or
     * session creation fails saying why (unknown node or provider, no kernel
     * there, or the provider's rules decline it). Copied at creation. */
    const sy_placement_override *placements;
    uint32_t n_placements;
    /* resource limits of this session, 0: the INI's [switchyard]
     * max_tensor_bytes / max_arena_bytes (defaults 512 MiB / 4 GiB): a
     * tensor or plan over them is refused before it is allocated */
    uint64_t max_tensor_bytes;
    uint64_t max_arena_bytes;
} sy_session_options;

typedef enum sy_input_mode {
    SY_INPUT_COPY = 0,   /* data is copied into the session now */
    SY_INPUT_BORROW = 1  /* data is read in place during run; keep it alive and unchanged until then */
} sy_input_mode;

#ifdef __cplusplus
}
#endif
#endif
