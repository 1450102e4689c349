/*
 * Session internals: the per-session view of values and nodes, placement,
 * the memory plan and the compiled execution plan.
 */
#ifndef SY_SESSION_H
#define SY_SESSION_H

#include "strheap.h"
#include "env.h"
#include "ir.h"
#include "model.h"
#include "builtin.h"

/* A sequence value: tensors, each with its own data (one aligned
 * allocation per item, owned by the sequence). */
typedef struct sy_seq {
    sy_tensor *items;
    uint32_t n, cap;
} sy_seq;

/* The runtime kinds of a value (sy_value_rt.kind). A tensor is the usual
 * case; an optional with an element is the element's kind; NONE is an empty
 * optional. */
enum { SY_RT_TENSOR = 0, SY_RT_SEQUENCE = 1, SY_RT_NONE = 2 };

/* One value (tensor edge) as the session sees it. A session has one per
 * value of its graph, so the record is kept small (docs/fuzzing.md, "Load
 * cost of a huge graph"): the kernels' sy_tensor, then the planner's and
 * the kinds' fields without holes. */
typedef struct sy_value_rt {
    sy_tensor t;          /* dtype/shape/data as kernels see it */
    void *owned;          /* data owned by the session (folded constants, copied inputs) */
    size_t owned_cap;
    sy_seq *seq;          /* SY_RT_SEQUENCE: the items */
    int32_t producer;     /* node index, -1 otherwise */
    int32_t first_use, last_use; /* step indices for the planner (-1 none) */
    int32_t alias_of;     /* value whose buffer this one shares (must-alias), -1 none */
    uint32_t domain;      /* memory domain id */
    bool shape_known;     /* set by inference */
    bool is_const;        /* data known at plan time (initializer or folded) */
    bool is_input;        /* graph input */
    bool is_output;       /* graph output */
    bool has_data;        /* graph input: set_input was called */
    /* value kind (values.c): sequences and empty optionals are values of
     * their own, never tensors in disguise; only the core's built-in ops
     * (builtin.c) read or make them */
    uint8_t kind;         /* SY_RT_* */
    bool seq_borrowed;    /* seq belongs to another value (a subgraph's bound input) */
} sy_value_rt;

/* A memory domain of the session: one arena each. Domain 0 is host RAM. */
typedef struct sy_domain_rt {
    const char *name;
    uint32_t alignment;
    uint64_t capacity;     /* 0 = unlimited */
    void *arena;
    size_t arena_bytes, lower_bound, naive_bytes;
    size_t activations, scratch, copies;
} sy_domain_rt;

/* An explicit boundary copy of one value into one destination domain
 * (one per (tensor, destination)); it runs just before its first consumer. */
typedef struct sy_copy_rt {
    int32_t src;             /* value index */
    uint32_t consumer;       /* first consuming node */
    uint32_t dst_domain;
    sy_value_rt val;         /* the copy, in the destination domain */
    struct sy_provider_rec *via; /* provider whose copy() is used; NULL: host bounce */
    struct sy_session *s;
    const sy_tensor *io_in[1];
    sy_tensor *io_out[1];
    sy_kernel_io io;
} sy_copy_rt;

/* The handle plugins see during infer/check/prepare (one per node: no
 * holes, nothing the node does not need). */
struct sy_node {
    struct sy_session *s;
    const ir_node *ir;
    uint32_t index;
    uint32_t n_in, n_out;
    bool inferring;  /* node_set_output allowed */
    const sy_schema_rec *schema;
    /* in and out are the node's slices of the session's one pointer block
     * (bind_nodes), and what its kernel's io reads too */
    sy_tensor **in;  /* NULL entries for omitted inputs */
    sy_tensor **out; /* NULL entries for omitted outputs (kernels still get a scratch tensor) */
    size_t scratch;
    size_t persistent; /* reported by the kernel: state kept across runs */
    size_t packed;     /* reported by the kernel: repacked weights */
    int64_t *pins;     /* per output: pinned arena offset, -1 none (NULL: no pins) */
    /* the plugin whose callback (infer, accepts, check_node, prepare) runs
     * on this node now: host->node_plugin_state answers with its state */
    const sy_loaded_plugin *caller;
    /* requantization form (requant_form.c): the provider whose check_node
     * runs now (placement), and the form last given to a kernel with who
     * chose it (NULL: the node never asked; the source text is the
     * session's, interned: a few distinct ones per session) */
    const struct sy_provider_rec *asking;
    const char *rq_form;
    const char *rq_source;
};

/* A fused partition: nodes one provider grouped (ABI 1.1). When compiled,
 * it runs as one step in place of its nodes' kernels. */
typedef struct sy_part_rt {
    struct sy_provider_rec *provider;
    uint32_t group_id;
    uint32_t *nodes;           /* node indices, execution order */
    const sy_node **views;
    uint32_t n_nodes;
    const sy_tensor **inputs;
    uint32_t n_inputs;
    sy_tensor **outputs;
    uint32_t n_outputs;
    void *compiled;            /* NULL: nodes run their own kernels */
    bool from_cache;
    sy_kernel_io io;
} sy_part_rt;

typedef enum sy_placement_reason {
    SY_PLACE_TAKEN = SY_REASON_TAKEN,
    SY_PLACE_FALLBACK = SY_REASON_FALLBACK
} sy_placement_reason;

/* One node as placed and prepared (one per node: kept without holes). */
typedef struct sy_node_rt {
    struct sy_node view;
    sy_provider_rec *provider;
    const sy_kernel_rec *kernel;
    char *reason_text;            /* why it landed there (declines of the others) */
    void *state;                  /* kernel state from prepare */
    void *scratch_ptr;            /* planned scratch (view.scratch bytes), or NULL */
    /* its subgraphs' sessions (n_subs of them), made at the first run and
     * kept (their plans survive across runs) */
    struct sy_session **subs;
    /* a plugin op's graph attributes (ABI 1.4, subgraph.c): the handles its
     * kernel got from host->node_subgraph, one per entry of subs (NULL until
     * asked); they run subs[k] and live as long as the node */
    struct sy_subgraph **sgs;
    sy_reason reason;
    int32_t part;                 /* fused partition index, -1 none */
    /* a built-in op of the core (builtin.c: control flow, sequences,
     * optionals), 0 for ops of plugins */
    int builtin;
    uint32_t n_subs;              /* graph attributes: entries of subs (and sgs) */
    bool folded;                  /* evaluated at plan time; not run */
    bool prepared;
    /* one of the node's graph attributes reads an outer-scope value: the
     * session runs node by node, so that value is alive when the node runs */
    bool captures;
} sy_node_rt;

/* A compiled step: everything the run loop needs, nothing else (24 bytes:
 * one a node). Its io is found by sy_step_io: a copy's and a compiled
 * partition's are theirs; a node's is filled from the node when it runs (a
 * stored io was 56 bytes a node, all of it copies of the node's fields). */
typedef struct sy_step {
    sy_status *(*run)(void *state, const sy_kernel_io *io);
    void *state;    /* a copy's step: its sy_copy_rt */
    uint32_t node;  /* the node (for a copy: its first consumer; for a partition: its first member) */
    bool is_copy;
    bool is_part;   /* a compiled partition: s->parts[s->nodes[node].part] */
} sy_step;

struct sy_run_ctx {
    struct sy_session *s;
    bool profiling;
    int tid; /* worker index for traces */
    sy_strheap *heap; /* where host->run_alloc takes string bytes from */
};

/* One recorded profiling event (names copied: plugin strings may be transient). */
typedef struct sy_prof_rec {
    char name[64];
    char category[24];
    uint64_t start_ns, duration_ns;
    int64_t cycles;
    int32_t tid;
    int32_t node; /* -1 for plugin events */
} sy_prof_rec;

struct sy_session {
    sy_env *env;
    const sy_model *model;
    const ir_graph *g;
    sy_value_rt *values;
    uint32_t n_values;
    sy_node_rt *nodes;
    uint32_t n_nodes;
    sy_tensor **node_ptrs;    /* every node's view.in and view.out, one block */
    /* the requantization sources nodes recorded (requant_form.c), each once */
    char **rq_sources;
    uint32_t n_rq_sources;
    bool strict;
    int threads;
    const char *requant;      /* sy_session_options.requant: "onnx", "gemmlowp" or NULL */
    bool profiling;
    bool dynamic;             /* a shape depends on runtime values: run node by node */
    bool has_kinds;           /* a value is a sequence or optional: run node by node */
    bool planned;
    bool needs_replan;        /* an input shape changed */
    /* memory domains and boundary copies */
    sy_domain_rt *domains;
    uint32_t n_domains;
    sy_copy_rt *copies;     /* capacity fixed at creation: pointers stay valid */
    uint32_t n_copies, cap_copies;
    uint64_t bounce_copies, bounce_bytes; /* counted at run time */
    /* memory (sums over domains) */
    size_t arena_bytes;
    size_t arena_lower_bound;
    size_t naive_bytes;
    /* plan */
    sy_step *steps;
    uint32_t n_steps;
    struct sy_run_ctx rc;
    /* string bytes kernels make (strheap.h): those of a run, emptied when
     * the next run starts, and those of constants folded at creation
     * (rc_const is the run context folding passes), emptied on re-plan */
    sy_strheap str_run, str_const;
    struct sy_run_ctx rc_const;
    /* profiling ring (profile.c) */
    sy_prof_rec *prof;
    size_t prof_cap;
    uint64_t prof_count;
    /* thread pool (threads.c); NULL when threads == 1 */
    struct sy_pool *pool;
    int32_t *node_time;    /* plan.c: step index or dependency level per node */
    uint32_t n_times;
    uint32_t *level_start; /* steps [level_start[l], level_start[l+1]) form level l */
    uint32_t n_levels;
    /* fused partitions and the execution order (members of a compiled
     * partition are contiguous) */
    sy_part_rt *parts;
    uint32_t n_parts;
    uint32_t *order;
    uint64_t max_tensor_bytes, max_arena_bytes; /* resource limits (options, else the INI) */
    char *cache_path;       /* compile cache to load partitions from, or NULL */
    /* observer (observe.c); NULL: off, and the run loops never look further */
    sy_observer_fn observer;
    void *observer_user;
    /* placement overrides (sy_session_options.placements), copied: node
     * index and provider name per entry */
    uint32_t *place_node;
    char **place_provider;
    uint32_t n_place;
    /* plugins this session holds a reference on */
    sy_loaded_plugin **held;
    uint32_t n_held;
    /* per provider (env->providers order): what its session_begin made */
    struct sy_provider_session *prov;
    /* a subgraph's session (If/Loop/Scan/SequenceMap body): its parent, and
     * per value the parent's value an outer-scope name is bound to (-1) */
    struct sy_session *parent;
    int32_t *outer_src;
    uint32_t depth;
    uint64_t max_loop_iterations;
    /* bounded outputs (ABI 1.6, hostapi.c): values planned at an upper
     * bound whose kernel sets the run's dims (Unique); reset to the bound
     * before each run and checked after it (exec.c) */
    struct sy_bound *bounds;
    uint32_t n_bounds, cap_bounds;
};

/* One bounded output: the value and the shape it was planned at. */
typedef struct sy_bound {
    uint32_t value;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    size_t nbytes;
} sy_bound;

/* The io a step's kernel runs with: a copy's or partition's own, or for a
 * node's step one filled into *tmp from the node (its tensor pointers, its
 * planned scratch). */
static inline const sy_kernel_io *sy_step_io(struct sy_session *s, const sy_step *st, sy_kernel_io *tmp)
{
    if (st->is_copy)
        return &((const sy_copy_rt *)st->state)->io;
    const sy_node_rt *nr = &s->nodes[st->node];
    if (st->is_part)
        return &s->parts[nr->part].io;
    *tmp = (sy_kernel_io){sizeof *tmp,
                          nr->view.n_in,
                          nr->view.n_out,
                          (const sy_tensor *const *)nr->view.in,
                          nr->view.out,
                          nr->view.scratch ? nr->scratch_ptr : NULL,
                          nr->view.scratch ? nr->view.scratch : 0,
                          &s->rc};
    return tmp;
}

/* Record whose callback is about to run on n (the handle plugins get may be
 * const; the record is the host's own). */
static inline void sy_node_calling(const struct sy_node *n, const sy_loaded_plugin *owner)
{
    ((struct sy_node *)n)->caller = owner;
}

/* provider_session.c: the providers' per-session states (ABI 1.2) */
typedef struct sy_provider_session {
    void *state;
    bool begun;
} sy_provider_session;
sy_status *sy_provider_sessions_begin(struct sy_session *s);
/* the session whose providers' session_begin runs on this thread, else NULL */
const struct sy_session *sy_provider_session_beginning(void);
void sy_provider_sessions_end(struct sy_session *s);
void *sy_provider_session_of(const struct sy_session *s, const sy_provider_rec *pr);

/* infer.c / placement / plan / exec helpers */
sy_status *sy_session_plan(struct sy_session *s);
void sy_session_unplan(struct sy_session *s);
sy_status *sy_session_execute(struct sy_session *s);
/* observe.c: report the outputs of step i (or of node i in dynamic mode)
 * to the observer; call only when s->observer is set */
void sy_observe_step(struct sy_session *s, const sy_step *st);
void sy_observe_node(struct sy_session *s, uint32_t node);
/* placement.c: copy and check sy_session_options.placements */
sy_status *sy_placements_init(struct sy_session *s, const sy_placement_override *p, uint32_t n);
void sy_placements_free(struct sy_session *s);
/* the provider node i is forced onto, or NULL */
const char *sy_placement_forced(const struct sy_session *s, uint32_t node);
/* requant_form.c: the requantization form of node n (see the file). */
const char *sy_requant_resolve(struct sy_node *n);
/* the session's one copy of a requantization source text (never NULL) */
const char *sy_requant_source_intern(struct sy_session *s, const char *source);
/* "onnx"/"gemmlowp"/"single_rounding" as a static string; NULL for anything else */
const char *sy_requant_name(const char *text);

/* builtin.c: run the core's op of node nr now (dynamic mode: a session
 * with a built-in op or a sequence/optional value runs node by node); the
 * node's outputs are set. Also Identity of a sequence or optional. */
sy_status *sy_builtin_run(struct sy_session *s, sy_node_rt *nr);
/* control_flow.c / seq_ops.c, called by sy_builtin_run */
sy_status *sy_cf_if(struct sy_session *s, sy_node_rt *nr);
sy_status *sy_cf_loop(struct sy_session *s, sy_node_rt *nr);
sy_status *sy_cf_scan(struct sy_session *s, sy_node_rt *nr);
sy_status *sy_seq_op(struct sy_session *s, sy_node_rt *nr);
/* builtin.c helpers: node nr's k-th input/output value (NULL when omitted
 * or absent), its subgraph session for attribute `attr` (made at first use) */
sy_value_rt *sy_bi_in(struct sy_session *s, const sy_node_rt *nr, uint32_t k);
sy_value_rt *sy_bi_out(struct sy_session *s, const sy_node_rt *nr, uint32_t k);
sy_status *sy_bi_sub(struct sy_session *s, sy_node_rt *nr, const char *attr, struct sy_session **out);
/* a one-element tensor read as int64 (int32/int64) or bool */
sy_status *sy_bi_scalar_i64(const sy_value_rt *v, const char *what, int64_t *out);
sy_status *sy_bi_scalar_bool(const sy_value_rt *v, const char *what, bool *out);
/* free a value's owned buffers (a temporary of a built-in op) */
void sy_value_release(sy_value_rt *v);

/* session.c: a subgraph's session under `parent` (planned at its first run) */
sy_status *sy_session_create_sub(struct sy_session *parent, const ir_graph *g, struct sy_session **out);
/* bind value vi of a subgraph session to `src` (borrowed until the next bind) */
void sy_session_bind(struct sy_session *s, int32_t vi, const sy_value_rt *src);
/* plan if needed, then run a subgraph session */
sy_status *sy_session_run_sub(struct sy_session *s);

/* subgraph.c: free the subgraph handles of a node (host->node_subgraph) */
void sy_subgraphs_free(sy_node_rt *nr);

/* values.c: value kinds */
void sy_value_clear_seq(sy_value_rt *v);       /* free an owned sequence; kind back to tensor */
/* dst becomes a deep copy of src (tensor, sequence or none), in dst's own
 * buffers; s checks max_tensor_bytes */
sy_status *sy_value_assign(const struct sy_session *s, sy_value_rt *dst, const sy_value_rt *src);
/* append a copy of t to the sequence */
sy_status *sy_seq_push(const struct sy_session *s, sy_seq *q, const sy_tensor *t, uint32_t at);
void sy_seq_free(sy_seq *q);
/* a copy of t with its own data (one allocation), or NULL */
sy_status *sy_tensor_dup(const sy_tensor *t, sy_tensor *out);
/* the value's kind name, for messages */
const char *sy_value_kind_name(const sy_value_rt *v);
/* ensure dst's owned buffer holds `bytes`, t.data pointing at it */
sy_status *sy_value_ensure_owned(sy_value_rt *v, size_t bytes);

/* A tensor over the session's max_tensor_bytes is refused (what: "input",
 * "output", ...), naming its shape and both sizes. */
sy_status *sy_session_check_tensor(const struct sy_session *s, const sy_tensor *t, const char *what);

#endif
