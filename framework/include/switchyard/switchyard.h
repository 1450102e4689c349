/*
 * Switchyard public host API.
 *
 * A host application links libswitchyard and includes only this header.
 *
 *   sy_env      the loaded configuration: plugins, providers, options.
 *   sy_model    a parsed, validated model (ONNX today; TFLite later).
 *   sy_session  a model placed on providers, memory planned, ready to run.
 *
 * Errors: every call that can fail returns a sy_status*; NULL is success.
 * A non-NULL status has a code (sy_status_code) and a message that says
 * what failed and where (file, plugin, node, tensor). The caller frees it
 * with sy_status_free. Output parameters are left untouched on failure.
 *
 * Thread safety:
 *   - sy_env_*: creation and release are not concurrent with other use of
 *     the same env; all const queries on an env are thread-safe.
 *   - sy_model: immutable after load; may be shared by many sessions and
 *     threads at once. Release it after every session made from it.
 *   - sy_session: one thread at a time (set_input/run/get_output are not
 *     reentrant). Different sessions may run concurrently on any threads.
 *   - sy_status_*: a status is owned by one thread.
 */
#ifndef SWITCHYARD_H
#define SWITCHYARD_H

#include "sy_types.h"
#include "sy_app_types.h" /* sy_value_info, sy_session_options, sy_input_mode */

#ifdef __cplusplus
extern "C" {
#endif

#define SY_VERSION_MAJOR 0
#define SY_VERSION_MINOR 1
#define SY_VERSION_PATCH 0
#define SY_VERSION_STRING "0.1.0"

typedef struct sy_env sy_env;
typedef struct sy_model sy_model;
typedef struct sy_session sy_session;

/* ---- status ------------------------------------------------------------ */
SY_EXPORT sy_status_code sy_status_get_code(const sy_status *st);
SY_EXPORT const char *sy_status_get_message(const sy_status *st);
SY_EXPORT void sy_status_free(sy_status *st);
/* Make a status (for host code that reports through the same channel). */
SY_EXPORT sy_status *sy_status_create(sy_status_code code, const char *fmt, ...) SY_PRINTF(2, 3);
SY_EXPORT const char *sy_status_code_name(sy_status_code code);
SY_EXPORT const char *sy_dtype_name(sy_dtype dt);
SY_EXPORT size_t sy_dtype_size(sy_dtype dt); /* bytes per element; 0 for packed/unknown */
SY_EXPORT const char *sy_version(void);

/* ---- environment ------------------------------------------------------- */
/* Load an INI file. `ini_path` NULL: the embedded default configuration,
 * which finds the plugins next to the library (build tree or install). */
SY_EXPORT sy_status *sy_env_create(const char *ini_path, sy_env **out);
/* Same from text; relative paths in it resolve against `base_dir` (NULL: cwd). */
SY_EXPORT sy_status *sy_env_create_from_string(const char *ini_text, const char *base_dir, sy_env **out);
SY_EXPORT void sy_env_release(sy_env *env);

/* Log sink; default writes WARN and worse to stderr (INI: log_level). */
typedef void (*sy_log_fn)(void *user, sy_log_level level, const char *origin, const char *message);
SY_EXPORT void sy_env_set_logger(sy_env *env, sy_log_fn fn, void *user);

/* What was loaded, for `switchyard plugins`. */
typedef struct sy_plugin_info {
    uint32_t struct_size;
    const char *path;
    const char *name;        /* NULL when refused before the descriptor was read */
    const char *version;
    const char *description;
    uint16_t abi_major, abi_minor;
    bool loaded;
    const char *refusal;     /* why it was refused (NULL when loaded) */
    uint32_t n_schemas, n_kernels, n_providers, n_schemes, n_extensions;
    const char *registered;  /* names of what it registered, comma-separated */
} sy_plugin_info;
SY_EXPORT size_t sy_env_plugin_count(const sy_env *env);
SY_EXPORT bool sy_env_plugin_info(const sy_env *env, size_t index, sy_plugin_info *out);

/* Providers in priority order, with their description and flags. */
SY_EXPORT size_t sy_env_provider_count(const sy_env *env);
SY_EXPORT const char *sy_env_provider_name(const sy_env *env, size_t index);
SY_EXPORT const char *sy_env_provider_description(const sy_env *env, size_t index);
SY_EXPORT bool sy_env_provider_is_emulator(const sy_env *env, size_t index);

/* Every kernel the loaded plugins registered (the conformance kit lists a
 * provider's claims with it). Strings stay valid while the env lives. */
typedef struct sy_kernel_info {
    uint32_t struct_size;
    const char *domain;        /* "" for the default ONNX domain */
    const char *op;
    int32_t since_version, until_version; /* until 0: open-ended */
    const char *provider;
    uint64_t type_mask;        /* SY_DT_BIT of accepted dtypes; 0: any */
    int32_t type_input;        /* input whose dtype selects the kernel; -1: output 0 */
    const char *plugin;        /* name of the plugin that registered it */
} sy_kernel_info;
SY_EXPORT size_t sy_env_kernel_count(const sy_env *env);
SY_EXPORT bool sy_env_kernel_info(const sy_env *env, size_t index, sy_kernel_info *out);

/* Does any loaded plugin define (domain, op) at this opset? */
SY_EXPORT bool sy_env_has_op(const sy_env *env, const char *domain, const char *op, int32_t opset);

/* A named extension table registered by a plugin (e.g. "llm"); NULL if none
 * with a major version equal to `version` is loaded. */
SY_EXPORT const void *sy_get_extension(const sy_env *env, const char *name, uint32_t version);

/* ---- model --------------------------------------------------------------- */
SY_EXPORT sy_status *sy_model_load(sy_env *env, const char *path, sy_model **out);
/* `name` is used in messages; external data paths resolve against `base_dir`. */
SY_EXPORT sy_status *sy_model_load_buffer(sy_env *env, const void *data, size_t size, const char *name,
                                          const char *base_dir, sy_model **out);
/* Like sy_model_load, with SY_LOAD_* flags. */
enum {
    /* load even when some ops have no plugin (for inspection); a session
     * created from such a model fails naming each missing op */
    SY_LOAD_SKIP_OP_CHECK = 1u << 0
};
SY_EXPORT sy_status *sy_model_load_flags(sy_env *env, const char *path, uint32_t flags, sy_model **out);
/* Ops of the model that no loaded plugin defines, as one line of text
 * ("Op (domain 'd', opset N), ..."); NULL when there are none. Free with free(). */
SY_EXPORT char *sy_model_unsupported_ops(const sy_model *model);
SY_EXPORT void sy_model_release(sy_model *model);


SY_EXPORT size_t sy_model_input_count(const sy_model *m);
SY_EXPORT size_t sy_model_output_count(const sy_model *m);
SY_EXPORT bool sy_model_input_info(const sy_model *m, size_t i, sy_value_info *out);
SY_EXPORT bool sy_model_output_info(const sy_model *m, size_t i, sy_value_info *out);
SY_EXPORT int64_t sy_model_ir_version(const sy_model *m);
SY_EXPORT const char *sy_model_format(const sy_model *m); /* "onnx" */
SY_EXPORT size_t sy_model_opset_count(const sy_model *m);
SY_EXPORT bool sy_model_opset(const sy_model *m, size_t i, const char **domain, int64_t *version);
SY_EXPORT size_t sy_model_node_count(const sy_model *m);
SY_EXPORT bool sy_model_node(const sy_model *m, size_t i, const char **name, const char **domain, const char **op);
SY_EXPORT size_t sy_model_initializer_bytes(const sy_model *m);

/* ---- session ------------------------------------------------------------- */

/* Place, plan and prepare. `opts` may be NULL. Input dims that are symbolic
 * in the model are taken as 1 until sy_session_set_input gives real shapes
 * (a new shape re-plans before the next run). */
SY_EXPORT sy_status *sy_session_create(sy_env *env, const sy_model *model, const sy_session_options *opts,
                                       sy_session **out);
SY_EXPORT void sy_session_release(sy_session *s);


/* `t` needs dtype, rank, dims, data, nbytes; name is ignored. */
SY_EXPORT sy_status *sy_session_set_input(sy_session *s, const char *name, const sy_tensor *t, sy_input_mode mode);
SY_EXPORT sy_status *sy_session_set_input_by_index(sy_session *s, size_t index, const sy_tensor *t,
                                                   sy_input_mode mode);
SY_EXPORT sy_status *sy_session_run(sy_session *s);
/* Valid until the next run or release of the session. */
SY_EXPORT sy_status *sy_session_get_output(sy_session *s, size_t index, const sy_tensor **out);
SY_EXPORT sy_status *sy_session_get_output_by_name(sy_session *s, const char *name, const sy_tensor **out);
SY_EXPORT size_t sy_session_output_count(const sy_session *s);
/* Clear the state of stateful kernels. */
SY_EXPORT void sy_session_reset(sy_session *s);

/* ---- explain: where each node runs and why ------------------------------ */
typedef struct sy_node_placement {
    uint32_t struct_size;
    const char *name;
    const char *op;
    const char *domain;
    const char *provider;    /* NULL when folded into a constant at creation */
    sy_reason reason;        /* SY_REASON_TAKEN, SY_REASON_FALLBACK, ... */
    const char *reason_text; /* the declines of higher-priority providers; may be NULL */
    bool folded;
} sy_node_placement;
SY_EXPORT size_t sy_session_node_count(const sy_session *s);
SY_EXPORT bool sy_session_node_placement(const sy_session *s, size_t index, sy_node_placement *out);
SY_EXPORT const char *sy_reason_name(sy_reason r);
/* The requantization form ("onnx", "gemmlowp" or "single_rounding") the kernel of node `index`
 * was given, and who chose it in *source ("model", "session",
 * "[provider.NAME]", "[plugin.ops_quant]" or "default"); NULL when the
 * node's kernel does not requantize. */
SY_EXPORT const char *sy_session_node_requant(const sy_session *s, size_t index, const char **source);

/* ---- observer: every node's outputs during a run (accuracy debugging) --- */
/* What the observer is shown for one output of one node, right after the
 * node (or its fused partition) ran and before anything later overwrites the
 * buffer. Everything it points to is valid only during the callback: copy
 * what you keep.
 *
 * Fused partitions: a provider that compiled several nodes into one
 * partition computes the values inside it where the host cannot see them,
 * so only the partition's outputs (the values read outside it, or graph
 * outputs) are reported, once each, after the partition ran, attributed to
 * the member node that produces them, with `partition` >= 0 saying so.
 * Nodes folded into constants at creation do not run and are not reported. */
typedef struct sy_node_output {
    uint32_t struct_size;
    uint32_t node;           /* node index, as in sy_session_node_placement */
    const char *node_name;
    const char *op;
    const char *provider;    /* the provider that ran it */
    uint32_t output;         /* which output of the node */
    const sy_tensor *tensor; /* name, dtype, rank, dims, host-readable data,
                              * quant (NULL when not quantized) */
    int32_t partition;       /* -1: the node ran on its own; else the fused
                              * partition (sy_session_partition_info index)
                              * whose output this is */
    uint32_t partition_nodes; /* nodes fused in that partition (0 when -1) */
    /* the node's inputs as it read them (NULL entries for omitted ones);
     * none (NULL, 0) for a fused partition's output */
    const sy_tensor *const *inputs;
    uint32_t n_inputs;
} sy_node_output;
typedef void (*sy_observer_fn)(void *user, const sy_node_output *out);
/* Install (fn non-NULL) or remove (fn NULL) the observer of a session. Off
 * by default; when off the run loop does not look at it (no cost, no
 * allocation). With a thread pool the outputs of one dependency level are
 * reported after the level, in step order, on the thread calling
 * sy_session_run. Calls happen in execution order. */
SY_EXPORT void sy_session_set_observer(sy_session *s, sy_observer_fn fn, void *user);

/* Boundary copies between memory domains (one per tensor and destination). */
typedef struct sy_copy_info {
    uint32_t struct_size;
    const char *value;        /* the tensor copied */
    const char *src_domain;
    const char *dst_domain;
    const char *consumer;     /* first node reading the copy */
    const char *consumer_provider;
    const char *via;          /* provider whose copy() runs it; NULL: host bounce */
    size_t bytes;
} sy_copy_info;
SY_EXPORT size_t sy_session_copy_count(const sy_session *s);
SY_EXPORT bool sy_session_copy_info(const sy_session *s, size_t index, sy_copy_info *out);
/* Copies that bounced through host memory so far, and their bytes. */
SY_EXPORT void sy_session_bounce_stats(const sy_session *s, uint64_t *copies, uint64_t *bytes);

/* Write the compiled partitions of a session (each with its provider's
 * compatibility string) to `path`, atomically. SY_ERR_NOT_FOUND when no
 * provider compiled a partition. */
SY_EXPORT sy_status *sy_session_save_compiled(const sy_session *s, const char *path);
/* Partitions of the session and whether each was loaded from a cache. */
SY_EXPORT size_t sy_session_partition_count(const sy_session *s);
SY_EXPORT bool sy_session_partition_info(const sy_session *s, size_t index, const char **provider,
                                         uint32_t *n_nodes, bool *compiled, bool *from_cache);
/* The fused partition node `index` belongs to (an index for
 * sy_session_partition_info), or -1 when it runs on its own. */
SY_EXPORT int32_t sy_session_node_partition(const sy_session *s, size_t index);

/* ---- memory report ------------------------------------------------------ */
typedef struct sy_memory_report {
    uint32_t struct_size;
    const char *domain;     /* "host", "vtcm", ... */
    size_t arena_bytes;     /* what the plan allocates */
    size_t lower_bound;     /* the largest sum of bytes live at any step */
    size_t naive_bytes;     /* a plan without reuse */
    size_t activations;     /* breakdown of the naive figure */
    size_t scratch;
    size_t persistent;      /* state of stateful kernels */
    size_t copies;          /* boundary copies between domains */
    size_t packed_weights;  /* weights a provider repacked (model weights stay mapped) */
    size_t weights;         /* model weights, mapped, not counted in the arena */
} sy_memory_report;
SY_EXPORT size_t sy_session_memory_domain_count(const sy_session *s);
SY_EXPORT bool sy_session_memory_report(const sy_session *s, size_t domain, sy_memory_report *out);

/* ---- profiling (sy_session_options.profiling) ---------------------------- */
SY_EXPORT size_t sy_session_profile_event_count(const sy_session *s);
/* Event names stay valid until the session is released or profiling cleared. */
SY_EXPORT bool sy_session_profile_event(const sy_session *s, size_t index, sy_profile_event *out);
SY_EXPORT void sy_session_profile_clear(sy_session *s);
/* Chrome trace JSON (opens in Perfetto or chrome://tracing), written atomically. */
SY_EXPORT sy_status *sy_session_write_trace(const sy_session *s, const char *path);

/* ---- tensor files (ONNX TensorProto .pb and NumPy .npy) ----------------- */
/* Read a tensor file; the result and its data are one allocation freed
 * with sy_tensor_free. The format is chosen by content, not extension. */
SY_EXPORT sy_status *sy_tensor_read_file(const char *path, sy_tensor **out);
/* Write `t` as a TensorProto .pb (with `t->name`) or .npy by extension;
 * written to a temporary file and renamed, so nothing is half-written. */
SY_EXPORT sy_status *sy_tensor_write_file(const char *path, const sy_tensor *t);
/* ---- string tensors (SY_DT_STRING) --------------------------------------- */
/* A string tensor's data is an array of sy_string records (sy_types.h), one
 * per element, nbytes = count * sizeof(sy_string); a host may fill one itself
 * and pass it to sy_session_set_input (SY_INPUT_COPY copies the bytes too;
 * SY_INPUT_BORROW borrows records and bytes until the run). These two helpers
 * do it for it. Strings are UTF-8 by ONNX's rule; operators that read
 * characters refuse invalid UTF-8, the others treat strings as bytes. */
/* A string tensor owning copies of `strings` (count = product of dims;
 * lengths NULL: each is NUL-terminated, else lengths[i] bytes, NULs allowed),
 * one allocation freed with sy_tensor_free. */
SY_EXPORT sy_status *sy_tensor_create_strings(int32_t rank, const int64_t *dims, const char *const *strings,
                                              const size_t *lengths, sy_tensor **out);
/* Element `index` (row-major) of a string tensor and its byte length; not
 * NUL-terminated. NULL when t is not a string tensor or index is outside it.
 * A session's output strings stay valid until its next run or release. */
SY_EXPORT const char *sy_tensor_string(const sy_tensor *t, int64_t index, size_t *length);
SY_EXPORT void sy_tensor_free(sy_tensor *t);
/* Number of elements of a tensor (product of dims). */
#if !defined(SY_SDK_TENSOR_NUMEL) /* sy_sdk.h defines the same inline */
SY_EXPORT int64_t sy_tensor_numel(const sy_tensor *t);
#endif

/* ---- sequence and optional values (appended in 0.x: value kinds) -------- */
/* ONNX values that are not tensors: a sequence of tensors, and an optional
 * (a tensor or sequence, or nothing). What a graph input or output is
 * declared to be, and what a value is at run time. */
typedef enum sy_value_kind {
    SY_VALUE_TENSOR = 0,
    SY_VALUE_SEQUENCE = 1,          /* a sequence of tensors (one dtype) */
    SY_VALUE_OPTIONAL = 2,          /* declared optional(tensor) */
    SY_VALUE_OPTIONAL_SEQUENCE = 3, /* declared optional(sequence(tensor)) */
    SY_VALUE_NONE = 4               /* at run time: an empty optional */
} sy_value_kind;

/* The declared kind of graph input / output `index` (SY_VALUE_TENSOR when
 * out of range or not declared otherwise). */
SY_EXPORT sy_value_kind sy_model_input_kind(const sy_model *m, size_t index);
SY_EXPORT sy_value_kind sy_model_output_kind(const sy_model *m, size_t index);

/* Feed a sequence input (or an optional-of-sequence one): `count` tensors,
 * copied, all of `dtype` (the dtype also types an empty sequence). */
SY_EXPORT sy_status *sy_session_set_input_sequence(sy_session *s, size_t index, sy_dtype dtype,
                                                   const sy_tensor *const *items, size_t count);
/* Feed an optional input with nothing (an optional input with an element is
 * fed with sy_session_set_input or _set_input_sequence). */
SY_EXPORT sy_status *sy_session_set_input_none(sy_session *s, size_t index);
/* What output `index` is after the last run: SY_VALUE_TENSOR (read it with
 * sy_session_get_output), SY_VALUE_SEQUENCE or SY_VALUE_NONE. */
SY_EXPORT sy_value_kind sy_session_output_kind(const sy_session *s, size_t index);
/* A sequence output: `*items` points at `*count` tensors, valid until the
 * next run or release; `*dtype` is the items' dtype. */
SY_EXPORT sy_status *sy_session_get_output_sequence(sy_session *s, size_t index, sy_dtype *dtype,
                                                    const sy_tensor **items, size_t *count);

/* A value file as the ONNX test data stores it: a TensorProto, SequenceProto
 * or OptionalProto .pb, which one said by `declared` (the files do not tell
 * them apart). The result is freed with sy_value_free. */
typedef struct sy_value {
    uint32_t struct_size;
    sy_value_kind kind;  /* SY_VALUE_TENSOR, SY_VALUE_SEQUENCE or SY_VALUE_NONE */
    sy_dtype dtype;      /* the tensor's or the items' dtype */
    size_t count;        /* tensors in items (1 for a tensor, 0 for none) */
    sy_tensor **items;
} sy_value;
/* The subgraphs of node `index` (If: then_branch, else_branch; Loop, Scan,
 * SequenceMap: body), each a session of its own under `s` (made on first
 * ask; planned and placed when the node first runs, so its nodes show no
 * provider before). Valid until `s` is released; never released alone.
 * `*attr` names the graph attribute. */
SY_EXPORT size_t sy_session_node_subgraph_count(const sy_session *s, size_t index);
SY_EXPORT sy_session *sy_session_node_subgraph(sy_session *s, size_t index, size_t k, const char **attr);

SY_EXPORT sy_status *sy_value_read_file(const char *path, sy_value_kind declared, sy_value **out);
SY_EXPORT void sy_value_free(sy_value *v);

#ifdef __cplusplus
}
#endif
#endif
