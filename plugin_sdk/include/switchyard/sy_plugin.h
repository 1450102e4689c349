/*
 * Switchyard plugin ABI, version 1 (minor 4).
 *
 * A plugin is a shared library that exports exactly one symbol,
 * `sy_plugin_query` (see SY_PLUGIN_DEFINE below). The host calls it with its
 * own ABI version; the plugin returns a descriptor. The host accepts the
 * plugin when the majors are equal and the host's minor is >= the plugin's
 * minor (the plugin may use everything up to the minor it was built with).
 *
 * Rules that keep this ABI stable (see docs/plugin-guide.md):
 *  - every struct crossing the boundary starts with `uint32_t struct_size`;
 *    the reader never looks past the size the writer declared;
 *  - structs and function tables only grow at the end; nothing is reordered;
 *  - the plugin never calls a core symbol: everything it needs is in the
 *    sy_host_api table it receives in init;
 *  - errors are sy_status handles (NULL = success) made with host->status_new.
 *
 * Lifetimes: schemas, kernels, providers, schemes and extension tables that a
 * plugin registers must stay valid until its fini is called; the host unloads
 * a library only when nothing it made is still alive.
 *
 * Environments (ABI 1.2): every environment loads its plugins on its own and
 * calls init once per environment, with that environment's options. What a
 * plugin derives from its options belongs to that environment, not to the
 * process: init hands it to the host with host->plugin_set_state, and every
 * callback that runs on behalf of the environment reaches it (see
 * plugin_set_state). A process-wide global is right only for what is the
 * same in every environment (the host table, constant tables).
 */
#ifndef SWITCHYARD_SY_PLUGIN_H
#define SWITCHYARD_SY_PLUGIN_H

#include "sy_types.h"
#include "sy_app_api.h"
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_ABI_MAJOR 1
#define SY_ABI_MINOR 7

/* ---- opaque handles owned by the host ---------------------------------- */
typedef struct sy_plugin sy_plugin;   /* the library being initialised */
typedef struct sy_node sy_node;       /* a graph node, during infer/check/prepare */
typedef struct sy_options sy_options; /* validated key/value pairs of one INI section */
typedef struct sy_run_ctx sy_run_ctx; /* the current run (profiling, thread index) */
typedef struct sy_subgraph sy_subgraph; /* a graph attribute of a node, as the core runs it (ABI 1.4) */

/* ---- plugin kinds (bit flags; a library may be several) ----------------- */
enum {
    SY_PLUGIN_KIND_OPS = 1u << 0,
    SY_PLUGIN_KIND_PROVIDER = 1u << 1,
    SY_PLUGIN_KIND_QUANT = 1u << 2,
    SY_PLUGIN_KIND_EXTENSION = 1u << 3
};

/* ---- attributes --------------------------------------------------------- */
typedef enum sy_attr_type {
    SY_ATTR_UNDEFINED = 0,
    SY_ATTR_FLOAT = 1,
    SY_ATTR_INT = 2,
    SY_ATTR_STRING = 3,
    SY_ATTR_TENSOR = 4,
    SY_ATTR_GRAPH = 5,
    SY_ATTR_FLOATS = 6,
    SY_ATTR_INTS = 7,
    SY_ATTR_STRINGS = 8
} sy_attr_type; /* numbering = ONNX AttributeProto.AttributeType */

typedef struct sy_attr_def {
    const char *name;
    sy_attr_type type;
    bool required;
} sy_attr_def;

/* In-place declaration: output `output` may reuse (or must alias) input `input`. */
typedef struct sy_inplace_pair {
    int32_t input;
    int32_t output;
    bool must_alias; /* true: the output IS the input buffer (views like Reshape) */
} sy_inplace_pair;

/* ---- op schema ---------------------------------------------------------- */
enum {
    /* the kernel reads only the shapes of its inputs, never their data
     * (Shape, Size): the core folds it whenever the shapes are known */
    SY_SCHEMA_READS_SHAPES_ONLY = 1u << 0,
    /* the output shape depends on input values (NonZero, Unique, ...) */
    SY_SCHEMA_DATA_DEPENDENT_SHAPE = 1u << 1,
    /* keeps state across runs (stateful ops); never folded or deduplicated */
    SY_SCHEMA_STATEFUL = 1u << 2,
    /* any output may be omitted (named ""), also one of the first
     * min_outputs: the kernel writes only the outputs present (its
     * io->outputs[i] is NULL otherwise). Gradient nodes, whose dX nobody may
     * need, set it. Without it the first min_outputs outputs are required
     * (ONNX's rule: optional outputs follow the required ones). Either way
     * a node must keep at least one output. ABI 1.2; older hosts ignore it
     * and refuse an omitted required output. */
    SY_SCHEMA_OPTIONAL_OUTPUTS = 1u << 3
};

typedef struct sy_op_schema {
    uint32_t struct_size;
    const char *domain;  /* "" or "ai.onnx" for the default domain */
    const char *name;
    int32_t since_version; /* valid from this opset until the next registered version */
    int32_t min_inputs, max_inputs;   /* max -1: variadic */
    int32_t min_outputs, max_outputs;
    const sy_attr_def *attrs; /* known attributes; others are refused */
    uint32_t n_attrs;
    /* Set every output's dtype and shape from the inputs (host->node_input)
     * and attributes. Input dims are always concrete (>= 0): a session plans
     * for the input shapes it has (symbolic dims start at 1) and plans again
     * when set_input brings new shapes. Input data is non-NULL when the value is known at plan
     * time (initializer or folded). Return SY_ERR_DYNAMIC_SHAPE when the
     * output shape needs values that are not known yet. Constraint
     * violations return SY_ERR_SHAPE/SY_ERR_TYPE/SY_ERR_INVALID_ARGUMENT
     * naming the rule. */
    sy_status *(*infer)(sy_node *node);
    const sy_inplace_pair *inplace;
    uint32_t n_inplace;
    uint32_t flags; /* SY_SCHEMA_* */
    const char *doc; /* one line */
} sy_op_schema;

/* ---- kernels ------------------------------------------------------------ */
typedef struct sy_kernel_io {
    uint32_t struct_size;
    uint32_t n_inputs, n_outputs;
    const sy_tensor *const *inputs; /* an entry is NULL for an omitted optional input */
    sy_tensor *const *outputs;     /* an entry is NULL for an omitted optional output */
    void *scratch; /* host->node_set_scratch bytes, planned by the core */
    size_t scratch_bytes;
    sy_run_ctx *run;
} sy_kernel_io;

enum {
    SY_KERNEL_STATEFUL = 1u << 0 /* state persists across runs; reset() clears it */
};

typedef struct sy_kernel_def {
    uint32_t struct_size;
    const char *domain;
    const char *op;
    int32_t since_version; /* first opset this kernel implements */
    int32_t until_version; /* last opset (inclusive); 0 = open-ended */
    const char *provider;  /* provider this kernel runs on, e.g. "cpu_ref" */
    uint64_t type_mask;    /* dtypes accepted for input `type_input` (SY_DT_BIT) */
    int32_t type_input;    /* which input's dtype selects the kernel; -1: output 0 */
    uint32_t flags;        /* SY_KERNEL_* */
    /* Optional finer check (attributes, other inputs). Return false and
     * write a reason into `why` (may be NULL) to decline. */
    bool (*accepts)(const sy_node *node, char *why, size_t why_len);
    /* Per session and node: read attributes, validate, precompute, ask for
     * scratch (host->node_set_scratch). No string work is allowed in run.
     * Shapes seen here are final for every run until the next prepare: a
     * new input shape re-plans (and prepares again); in dynamic mode (a
     * shape depends on values) prepare runs before each run of the node. */
    sy_status *(*prepare)(sy_node *node, void **state);
    sy_status *(*run)(void *state, const sy_kernel_io *io);
    void (*release)(void *state);
    /* Stateful kernels: clear what persists across runs. */
    void (*reset)(void *state);
} sy_kernel_def;

/* ---- providers ---------------------------------------------------------- */

typedef struct sy_claim {
    uint32_t struct_size;
    bool take;
    sy_reason reason;
    char text[192]; /* human-readable reason naming the violated rule; when taking, an optional note of how */
} sy_claim;

typedef struct sy_memory_domain_def {
    uint32_t struct_size;
    const char *name;    /* "host", "vtcm", "sram", ... */
    uint32_t alignment;  /* bytes, power of two */
    uint64_t capacity;   /* bytes; 0 = unlimited */
    bool host_visible;   /* the CPU can read/write it directly */
} sy_memory_domain_def;

enum {
    SY_PROVIDER_EMULATOR = 1u << 0, /* emulates hardware that is not present */
    SY_PROVIDER_FALLBACK = 1u << 1  /* may take any node it has a kernel for (cpu_ref) */
};

/* A fused partition as its provider sees it (ABI 1.1). Inputs are the
 * tensors its nodes read from outside it (weights included), outputs those
 * read outside it or graph outputs; io of run_compiled follows this order. */
typedef struct sy_partition {
    uint32_t struct_size;
    const sy_node *const *nodes; /* execution order */
    uint32_t n_nodes;
    const sy_tensor *const *inputs;
    uint32_t n_inputs;
    const sy_tensor *const *outputs;
    uint32_t n_outputs;
} sy_partition;

typedef struct sy_provider_def {
    uint32_t struct_size;
    const char *name;
    const char *description;
    uint32_t flags; /* SY_PROVIDER_* */
    /* the memory the provider's tensors live in; read again after create(),
     * so a provider may size it from its options */
    const sy_memory_domain_def *domain;
    const char *const *option_keys; /* accepted keys of [provider.NAME]; NULL-terminated */
    sy_status *(*create)(const sy_options *opts, void **state);
    void (*destroy)(void *state);
    /* Optional: decide per node. NULL = take every node that has a kernel
     * registered for this provider. */
    void (*check_node)(void *state, const sy_node *node, sy_claim *claim);
    /* Optional pairwise copies between this provider's domain and another.
     * Without them the core bounces through host memory (and counts it). */
    bool (*can_copy)(void *state, const char *src_domain, const char *dst_domain);
    sy_status *(*copy)(void *state, const sy_tensor *src, sy_tensor *dst);

    /* ---- ABI 1.1: fused partitions and the compile cache (all optional) ---- */
    /* Group the nodes this provider took (in execution order) into fused
     * partitions: write a group id per node, 0 = not fused, equal non-zero
     * ids = one partition. The core refuses a group that is not convex
     * (a path leaving it and coming back) and names the nodes. */
    sy_status *(*group)(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of);
    /* Finalize one partition into an object run in place of its nodes'
     * kernels. Without compile, groups only count as partitions. */
    sy_status *(*compile)(void *state, const sy_partition *p, void **compiled);
    sy_status *(*run_compiled)(void *compiled, const sy_kernel_io *io);
    void (*release_compiled)(void *compiled);
    /* Compile cache: bytes of a compiled partition (allocated with
     * host->alloc, freed by the caller) and back. `compat` identifies what
     * the bytes need: provider, its version, SoC, options. */
    sy_status *(*serialize)(void *compiled, void **bytes, size_t *size);
    sy_status *(*deserialize)(void *state, const sy_partition *p, const void *bytes, size_t size,
                              void **compiled);
    const char *(*compat)(void *state);

    /* ---- ABI 1.2: per-environment plugin state ---- */
    /* Used instead of create when set: the same, and also given the state
     * the registering plugin set with host->plugin_set_state in this
     * environment's init (NULL when it set none). Every other provider
     * callback receives what this returns in *state. */
    sy_status *(*create_env)(void *plugin_state, const sy_options *opts, void **state);
    /* Optional, per session: called when a session is created (before its
     * placement) and when it is released (after its kernels and compiled
     * partitions). What session_begin makes belongs to that session alone
     * (records of its placement, sums over it) and is reached in check_node
     * and prepare with host->node_provider_session. Sessions of one
     * environment may be created and run from several threads at once, and
     * share `state`: what a provider changes during placement belongs here,
     * not in `state`. */
    sy_status *(*session_begin)(void *state, void **session_state);
    void (*session_end)(void *state, void *session_state);
} sy_provider_def;


/* ---- quantization schemes ----------------------------------------------- */
typedef struct sy_observer sy_observer; /* plugin-owned calibration state */

typedef struct sy_quant_scheme_def {
    uint32_t struct_size;
    const char *name;        /* e.g. "int8_asym" */
    const char *description;
    sy_dtype storage;        /* quantized element type */
    bool symmetric;
    bool per_channel;
    /* float -> quantized, quantized -> float with the given parameters */
    sy_status *(*quantize)(const float *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, void *dst);
    sy_status *(*dequantize)(const void *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, float *dst);
    /* calibration */
    sy_status *(*observer_create)(const sy_options *opts, sy_observer **obs);
    sy_status *(*observer_update)(sy_observer *obs, const sy_tensor *t);
    /* Write parameters (arrays allocated with host->alloc, owned by caller). */
    sy_status *(*observer_finalize)(sy_observer *obs, sy_quant_params *out);
    void (*observer_release)(sy_observer *obs);
} sy_quant_scheme_def;


/* ---- subgraph signatures (ABI 1.4) --------------------------------------- */
/* What a kernel binds to a graph attribute and reads from it
 * (host->node_subgraph). */
enum {
    /* an absent attribute is not an error: node_subgraph succeeds with
     * *out = NULL (a modifier graph the node may or may not have) */
    SY_SUBGRAPH_OPTIONAL = 1u << 0
};

typedef struct sy_subgraph_sig {
    uint32_t struct_size;
    uint32_t n_inputs, n_outputs;
    uint32_t flags;                /* SY_SUBGRAPH_* */
    const sy_dtype *input_dtypes;  /* n_inputs entries; SY_DT_UNDEFINED: any; NULL: all any */
    const sy_dtype *output_dtypes; /* n_outputs entries; SY_DT_UNDEFINED: any; NULL: all any */
} sy_subgraph_sig;

/* A block of a provider's own arena for the core's planner (ABI 1.7,
 * sy_host_api.plan_blocks): `size` bytes live from time `first` to time
 * `last`, both inclusive, in the provider's own time units (a step index,
 * say). The planner writes `offset`. */
typedef struct sy_plan_block {
    uint64_t size;
    int64_t first, last;
    uint64_t offset; /* out */
} sy_plan_block;

/* ---- the host API table, injected into init ------------------------------ */
typedef struct sy_host_api {
    uint32_t struct_size;
    uint16_t abi_major, abi_minor;

    /* status */
    sy_status *(*status_new)(sy_status_code code, const char *fmt, ...) SY_PRINTF(2, 3);
    void (*status_free)(sy_status *st);
    sy_status_code (*status_code)(const sy_status *st);
    const char *(*status_message)(const sy_status *st);

    /* logging (goes to the environment's log sink) */
    void (*log)(sy_log_level level, const char *plugin, const char *fmt, ...) SY_PRINTF(3, 4);

    /* memory (aligned; free accepts NULL) */
    void *(*alloc)(size_t size, size_t alignment);
    void (*free)(void *ptr);

    /* registration (only inside init) */
    sy_status *(*register_schema)(sy_plugin *p, const sy_op_schema *schema);
    sy_status *(*register_kernel)(sy_plugin *p, const sy_kernel_def *kernel);
    sy_status *(*register_provider)(sy_plugin *p, const sy_provider_def *provider);
    sy_status *(*register_quant_scheme)(sy_plugin *p, const sy_quant_scheme_def *scheme);
    /* `table` starts with uint32_t struct_size; fetched with sy_get_extension */
    sy_status *(*register_extension)(sy_plugin *p, const char *name, uint32_t version, const void *table);

    /* options of an INI section (already checked against the declared keys) */
    const char *(*option_get)(const sy_options *opts, const char *key);

    /* node introspection (infer / check_node / prepare) */
    const char *(*node_name)(const sy_node *n);
    const char *(*node_op)(const sy_node *n);
    const char *(*node_domain)(const sy_node *n);
    int32_t (*node_opset)(const sy_node *n); /* opset of the node's domain */
    uint32_t (*node_num_inputs)(const sy_node *n);
    uint32_t (*node_num_outputs)(const sy_node *n);
    const sy_tensor *(*node_input)(const sy_node *n, uint32_t i);  /* NULL if omitted */
    const sy_tensor *(*node_output)(const sy_node *n, uint32_t i); /* after infer */
    sy_status *(*node_set_output)(sy_node *n, uint32_t i, sy_dtype dt, int32_t rank, const int64_t *dims);
    void (*node_set_scratch)(sy_node *n, size_t bytes);

    /* attributes: return false when absent */
    bool (*attr_int)(const sy_node *n, const char *name, int64_t *out);
    bool (*attr_float)(const sy_node *n, const char *name, float *out);
    /* strings are NUL-terminated; *len excludes the terminator (a string may hold NULs) */
    bool (*attr_string)(const sy_node *n, const char *name, const char **out, size_t *len);
    bool (*attr_ints)(const sy_node *n, const char *name, const int64_t **out, size_t *count);
    bool (*attr_floats)(const sy_node *n, const char *name, const float **out, size_t *count);
    bool (*attr_tensor)(const sy_node *n, const char *name, const sy_tensor **out);
    bool (*attr_strings)(const sy_node *n, const char *name, const char *const **out, size_t *count);

    /* profiling (cheap; a no-op when profiling is off) */
    bool (*profiling_enabled)(const sy_run_ctx *rc);
    void (*profile_event)(sy_run_ctx *rc, const sy_profile_event *ev);
    uint64_t (*now_ns)(void);

    /* the application API (models, sessions, tensor files) for extension
     * plugins that drive sessions the way a host application does */
    const sy_app_api *app;

    /* ---- ABI 1.1 ---- */
    /* In prepare: memory a kernel keeps outside the arena, for the memory
     * report (SY_MEM_PERSISTENT: state across runs; SY_MEM_PACKED_WEIGHTS:
     * a repacked copy of weights). */
    void (*node_report_memory)(sy_node *n, int kind, size_t bytes);
    /* Position of the node in the graph's topological order: nodes whose
     * positions are consecutive form a convex group (for group()). */
    uint32_t (*node_position)(const sy_node *n);
    /* In check_node-after-placement hooks and prepare: the state of the
     * provider the node is placed on (what its create() returned), NULL
     * before placement. Lets a provider's kernels read its options. */
    void *(*node_provider_state)(const sy_node *n);
    /* In prepare: place output `output` at this byte offset of its memory
     * domain's arena (I/O buffers at fixed addresses, client-supplied
     * buffers). The planner honours it and refuses pins that overlap live
     * buffers or break the domain's alignment. */
    sy_status *(*node_pin_output)(sy_node *n, uint32_t output, uint64_t offset);

    /* ---- ABI 1.2: per-environment plugin state ---- */
    /* Only inside init: the state of this plugin in the environment being
     * initialised (init runs once per environment). The host calls
     * release(state) exactly once when that environment unloads the plugin
     * (after its providers are destroyed, before fini), or right after init
     * when init fails; release may be NULL. A second call replaces the
     * state without releasing the first. Tables the plugin allocates in the
     * state and registers (schemes, recipe and extension tables, provider
     * definitions and their memory domains) are held by pointer until then. */
    sy_status *(*plugin_set_state)(sy_plugin *p, void *state, void (*release)(void *state));
    /* In infer, accepts, check_node and prepare: the state set by the plugin
     * whose callback is running on this node (infer: the schema's plugin;
     * accepts and prepare: the kernel's; check_node: the provider's), in the
     * node's environment. NULL when that plugin set none. A kernel keeps
     * what run needs in its prepare state. Provider callbacks get the state
     * through create_env; extension functions that need it take a handle
     * to a table the plugin allocated in the state. */
    void *(*node_plugin_state)(const sy_node *n);
    /* In check_node and prepare (and compile, on the partition's nodes):
     * what session_begin of the provider asking (check_node) or the node is
     * placed on (prepare, compile) made for the node's session; NULL when
     * that provider has no session_begin. */
    void *(*node_provider_session)(const sy_node *n);

    /* ---- ABI 1.3: string tensors ---- */
    /* In run: `size` bytes (16-byte aligned) for the text of the string
     * tensors this kernel writes (an output's sy_string records point into
     * them). They stay valid until the session's next run starts, or, for a
     * node folded into a constant at creation, until the session re-plans;
     * never freed by the kernel. NULL when out of memory or over the
     * session's max_arena_bytes; `rc` is io->run. Check
     * host->struct_size (sy_host_has_run_alloc) before calling: a 1.2 host
     * has no such field. */
    void *(*run_alloc)(sy_run_ctx *rc, size_t size);

    /* ---- ABI 1.4: subgraph attributes ---- */
    /* In prepare: a handle to the graph attribute `attr` of node n (an op
     * whose schema declares a SY_ATTR_GRAPH attribute, like FlexAttention's
     * score_mod). The core makes the subgraph a session of its own, as it
     * does for If/Loop bodies: planned at its first run and again only when
     * the shapes bound to it change, so one arena serves every run. `sig`
     * says what the kernel will bind and read: the graph must have exactly
     * sig->n_inputs inputs and sig->n_outputs outputs, and a declared input
     * or output dtype must equal the one the kernel names (SY_DT_UNDEFINED:
     * any). Refused with SY_ERR_INVALID_MODEL (attribute absent, unless
     * sig->flags has SY_SUBGRAPH_OPTIONAL: then *out = NULL; or counts),
     * SY_ERR_TYPE (not a graph, or a dtype), each naming the node and the
     * attribute. The handle belongs to the node: the same one is returned by
     * every prepare of the node (each with the new sig), it stays valid
     * until the node's session is released, and the kernel never frees it.
     * Check sy_host_has_subgraphs first: a 1.3 host has no such fields. */
    sy_status *(*node_subgraph)(sy_node *n, const char *attr, const sy_subgraph_sig *sig, sy_subgraph **out);
    /* In run: bind inputs[i] to the subgraph's i-th input (by pointer, not
     * copied; the subgraph never writes them), run it, and point outputs[k]
     * at its k-th output. The outputs stay valid until the next
     * subgraph_run on this handle or the node's release; read or copy them
     * before. The counts must be those of the sig, and input and output
     * dtypes are checked against it (SY_ERR_TYPE naming the node, the
     * attribute and the value). A node runs its handle from one thread at a
     * time; each node has its own. */
    sy_status *(*subgraph_run)(sy_subgraph *g, const sy_tensor *const *inputs, uint32_t n_inputs,
                               const sy_tensor **outputs, uint32_t n_outputs);
    /* In infer, accepts, check_node and prepare: the input and output counts
     * of graph attribute `name` (either pointer may be NULL); false when the
     * node has no such attribute or it is not a graph. Lets a kernel pick
     * among the signatures an op allows before it asks node_subgraph. */
    bool (*attr_graph)(const sy_node *n, const char *name, uint32_t *n_inputs, uint32_t *n_outputs);

    /* ---- ABI 1.5: the session's thread count ---- */
    /* In session_begin, on the thread the core calls it from: the worker
     * threads the session being created asked for (sy_session_options.threads,
     * else [switchyard] threads; 1 for the session of a subgraph body), at
     * least 1. 0 anywhere else. A provider with its own pool sizes it from
     * this when its own options do not, and keeps what it made in the
     * session state (check_node and prepare reach it with
     * node_provider_session). Check sy_host_has_session_threads first: a 1.4
     * host has no such field. */
    uint32_t (*session_threads)(void);

    /* ---- ABI 1.6: outputs planned at a bound ---- */
    /* In infer, after node_set_output(n, i, ...): the dims just set are an
     * upper bound of output i, not its shape (Unique: as many values as
     * the input has items). NULL when the core plans the output at that
     * bound: run then writes the output from its start and sets its
     * outputs[i]->dims (the same rank, each dim at most the bound's) and
     * nbytes to the run's; the core puts the bound back before the next
     * run and refuses a run that left dims above it or nbytes that do not
     * match them. The core accepts it only for a value no node reads (the
     * application alone sees the run's dims) in a session it plans
     * statically; otherwise it returns SY_ERR_DYNAMIC_SHAPE, and infer
     * returns that status, as it would without this function: the session
     * then runs node by node and infers with the data in hand. Check
     * sy_host_has_bounded_outputs first: a 1.5 host has no such fields. */
    sy_status *(*node_bound_output)(sy_node *n, uint32_t i);
    /* In prepare (and later): did the core accept node_bound_output for
     * output i of n in this plan? */
    bool (*node_output_bounded)(const sy_node *n, uint32_t i);

    /* ---- ABI 1.7: the core's memory planner for a provider's own arena ---- */
    /* Places n blocks in one arena the way the core plans a session's:
     * largest first (equal sizes: the earlier `first`, then the lower
     * index), each at the lowest offset, a multiple of `align`, whose bytes
     * no block placed before it and live at an overlapping time holds. A
     * code generator plans a device's workspace with it (a training
     * package's activations kept for the backward) instead of a planner of
     * its own. Writes every block's offset, the arena's size (*arena_bytes,
     * a multiple of align) and the largest sum of sizes live at one time
     * (*lower_bound, no plan does better); either pointer may be NULL.
     * Refuses, writing nothing, an align that is not a power of two up to
     * 2^30, a block whose last is before its first or whose times leave
     * int32, and sizes summing past 2^62. Any thread. Check
     * sy_host_has_plan_blocks first: a 1.6 host has no such field. */
    sy_status *(*plan_blocks)(sy_plan_block *blocks, uint32_t n, uint64_t align, uint64_t *arena_bytes,
                              uint64_t *lower_bound);
} sy_host_api;

/* Does this host table have run_alloc (ABI >= 1.3)? */
#define sy_host_has_run_alloc(h)                                                                                  \
    ((h)->struct_size >= offsetof(sy_host_api, run_alloc) + sizeof(void *) && (h)->run_alloc != NULL)

/* Does this host table have node_subgraph, subgraph_run and attr_graph (ABI >= 1.4)? */
#define sy_host_has_subgraphs(h)                                                                                  \
    ((h)->struct_size >= offsetof(sy_host_api, attr_graph) + sizeof(void *) && (h)->node_subgraph != NULL &&     \
     (h)->subgraph_run != NULL && (h)->attr_graph != NULL)

/* Does this host table have session_threads (ABI >= 1.5)? */
#define sy_host_has_session_threads(h)                                                                            \
    ((h)->struct_size >= offsetof(sy_host_api, session_threads) + sizeof(void *) && (h)->session_threads != NULL)

/* Does this host table have node_bound_output and node_output_bounded (ABI >= 1.6)? */
#define sy_host_has_bounded_outputs(h)                                                                            \
    ((h)->struct_size >= offsetof(sy_host_api, node_output_bounded) + sizeof(void *) &&                          \
     (h)->node_bound_output != NULL && (h)->node_output_bounded != NULL)

/* Does this host table have plan_blocks (ABI >= 1.7)? */
#define sy_host_has_plan_blocks(h)                                                                                \
    ((h)->struct_size >= offsetof(sy_host_api, plan_blocks) + sizeof(void *) && (h)->plan_blocks != NULL)

enum { SY_MEM_PERSISTENT = 1, SY_MEM_PACKED_WEIGHTS = 2 };

/* ---- extensions the host itself reads ----------------------------------- */
/* The environment's deployment default of the requantization form, published
 * by the plugin that owns that option (ops_quant: [plugin.ops_quant]
 * requant), registered from its init only when the option is set. The host
 * answers a node's `requant` query with, in order: the session's option,
 * [provider.P] requant, this table (reported as "[plugin.<owner>]"), "onnx". */
#define SY_EXT_REQUANT_DEFAULT "switchyard.requant_default"
#define SY_EXT_REQUANT_DEFAULT_VERSION 1
typedef struct sy_requant_default {
    uint32_t struct_size;
    const char *form; /* "onnx", "gemmlowp" or "single_rounding" */
} sy_requant_default;

/* ---- the descriptor and the one exported symbol ------------------------- */
typedef struct sy_plugin_desc {
    uint32_t struct_size;
    uint16_t abi_major, abi_minor; /* the ABI the plugin was built against */
    const char *name;              /* unique, e.g. "ops_math" */
    const char *version;           /* the plugin's own semantic version */
    const char *description;
    uint32_t kinds;                /* SY_PLUGIN_KIND_* */
    const char *const *option_keys; /* accepted keys of [plugin.NAME]; NULL-terminated, may be NULL */
    /* Register everything. `opts` are the [plugin.NAME] options. Return a
     * status to refuse loading; nothing registered is kept then. */
    sy_status *(*init)(const sy_host_api *host, sy_plugin *p, const sy_options *opts);
    void (*fini)(void);
} sy_plugin_desc;

#define SY_PLUGIN_QUERY_SYMBOL "sy_plugin_query"
typedef const sy_plugin_desc *(*sy_plugin_query_fn)(uint16_t host_abi_major, uint16_t host_abi_minor);

/* Defines the one exported symbol of a plugin library. */
#define SY_PLUGIN_DEFINE(desc_var)                                                                                 \
    SY_EXPORT const sy_plugin_desc *sy_plugin_query(uint16_t host_abi_major, uint16_t host_abi_minor);             \
    SY_EXPORT const sy_plugin_desc *sy_plugin_query(uint16_t host_abi_major, uint16_t host_abi_minor)             \
    {                                                                                                              \
        (void)host_abi_major;                                                                                      \
        (void)host_abi_minor;                                                                                      \
        return &(desc_var);                                                                                        \
    }

/* ---- layout pins of ABI 1.0 (a failing assert means an ABI break) ------- */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && (defined(__x86_64__) || defined(__aarch64__))
#define SY_ABI_PIN(type, member, off) _Static_assert(offsetof(type, member) == (off), #type "." #member " moved: ABI break")
SY_ABI_PIN(sy_tensor, dims, 16);
SY_ABI_PIN(sy_tensor, data, 80);
SY_ABI_PIN(sy_kernel_io, inputs, 16);
SY_ABI_PIN(sy_kernel_def, run, 72);
SY_ABI_PIN(sy_host_api, status_new, 8);
SY_ABI_PIN(sy_host_api, register_schema, 64);
SY_ABI_PIN(sy_plugin_desc, init, 48);
SY_ABI_PIN(sy_provider_def, copy, 80);
SY_ABI_PIN(sy_host_api, app, 272);
/* ABI 1.1 additions */
SY_ABI_PIN(sy_provider_def, group, 88);
SY_ABI_PIN(sy_host_api, node_report_memory, 280);
/* ABI 1.2 additions */
SY_ABI_PIN(sy_provider_def, create_env, 144);
SY_ABI_PIN(sy_host_api, plugin_set_state, 312);
SY_ABI_PIN(sy_provider_def, session_begin, 152);
SY_ABI_PIN(sy_host_api, node_provider_session, 328);
/* ABI 1.3 addition */
SY_ABI_PIN(sy_host_api, run_alloc, 336);
/* ABI 1.4 additions */
SY_ABI_PIN(sy_host_api, node_subgraph, 344);
SY_ABI_PIN(sy_host_api, subgraph_run, 352);
SY_ABI_PIN(sy_host_api, attr_graph, 360);
SY_ABI_PIN(sy_subgraph_sig, flags, 12);
SY_ABI_PIN(sy_subgraph_sig, input_dtypes, 16);
SY_ABI_PIN(sy_subgraph_sig, output_dtypes, 24);
/* ABI 1.5 addition */
SY_ABI_PIN(sy_host_api, session_threads, 368);
/* ABI 1.6 additions */
SY_ABI_PIN(sy_host_api, node_bound_output, 376);
SY_ABI_PIN(sy_host_api, node_output_bounded, 384);
/* ABI 1.7 additions */
SY_ABI_PIN(sy_host_api, plan_blocks, 392);
SY_ABI_PIN(sy_plan_block, offset, 24);
#undef SY_ABI_PIN
#endif

#ifdef __cplusplus
}
#endif
#endif
