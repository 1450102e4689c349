/*
 * The core's model IR: one graph of nodes and values, importer-neutral.
 * Importers (ONNX, later TFLite) fill it; passes, the partitioner, the planner
 * and the scheduler read it. Everything here is internal to libswitchyard.
 */
#ifndef SY_IR_H
#define SY_IR_H

#include "switchyard/sy_plugin.h"
#include "switchyard/switchyard.h"

typedef struct ir_graph ir_graph;

typedef struct ir_attr {
    char *name;
    sy_attr_type type;
    int64_t i;
    float f;
    char *s;          /* STRING: bytes (NUL-terminated copy), length in s_len */
    size_t s_len;
    int64_t *ints;    /* INTS */
    float *floats;    /* FLOATS */
    char **strings;   /* STRINGS */
    size_t count;     /* element count of INTS/FLOATS/STRINGS */
    sy_tensor *t;     /* TENSOR: owns its data (one allocation with the struct) */
    ir_graph *g;      /* GRAPH: subgraph (If/Loop/Scan) */
} ir_attr;

enum {
    IR_VALUE_GRAPH_INPUT = 1u << 0,
    IR_VALUE_GRAPH_OUTPUT = 1u << 1,
    IR_VALUE_INITIALIZER = 1u << 2, /* constant weight: data is set */
    IR_VALUE_OUTER_SCOPE = 1u << 3, /* subgraph value captured from the parent */
    IR_VALUE_OWNS_DATA = 1u << 4    /* data is an sy_aligned_alloc block of the value's own */
};

/* What a value's declared ONNX type is. A value with no declared type (an
 * intermediate without value_info) reads as TENSOR; the session learns its
 * real kind when its producer runs (session.h, sy_value_rt.kind). */
typedef enum ir_kind {
    IR_KIND_TENSOR = 0,
    IR_KIND_SEQUENCE = 1, /* sequence(tensor) */
    IR_KIND_OPTIONAL = 2, /* optional(tensor) or optional(sequence(tensor)): elem_kind says */
    IR_KIND_OTHER = 3     /* map, sparse tensor, sequence of non-tensors: refused by the runtime */
} ir_kind;

/* Fields are ordered so that none needs padding: a graph holds one per value
 * (10^6 in docs/fuzzing.md's chain), and holes cost 8 bytes each. The dims
 * are a block of the graph's pool with one entry per axis (most values of a
 * large graph have no declared shape: 8 bytes each, not SY_MAX_RANK * 8). */
typedef struct ir_value {
    char *name;
    uint16_t flags;            /* IR_VALUE_* */
    uint8_t kind;              /* ir_kind: declared kind (IR_KIND_TENSOR when undeclared) */
    uint8_t elem_kind;         /* ir_kind: OPTIONAL: TENSOR or SEQUENCE inside; SEQUENCE: TENSOR */
    sy_dtype dtype;            /* SY_DT_UNDEFINED when unknown */
    int32_t rank;              /* -1 when unknown */
    int32_t producer;          /* node index, -1 for inputs/initializers */
    int64_t *dims;             /* rank entries, -1 for unknown/symbolic; NULL when rank <= 0.
                                * Set the rank with ir_value_set_rank, which sizes it */
    char **dim_params;         /* NULL, or SY_MAX_RANK symbolic dim names (owned, each may be NULL):
                                * allocated for the few values that have one (ir_value_set_dim_param) */
    sy_quant_params *quant;    /* owned, or NULL */
    /* initializer data: either borrowed from the model's mappings (the
     * TFLite file, ONNX external data) or owned (IR_VALUE_OWNS_DATA: an
     * ONNX raw_data block taken out of the decoded message, or a copy). */
    const void *data;
    size_t nbytes;
} ir_value;

/* pointers first, then the 32-bit fields: no padding (64 bytes, was 80) */
typedef struct ir_node {
    char *name;      /* never NULL: importers synthesise "<op>_<index>" when unnamed */
    char *op;
    char *domain;    /* "" for the default ONNX domain */
    int32_t *inputs; /* value indices; -1 = omitted optional input */
    int32_t *outputs; /* value indices; -1 = omitted optional output */
    ir_attr *attrs;
    int32_t opset;   /* the model's opset import for this domain */
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t n_attrs;
} ir_node;

typedef struct ir_opset {
    char *domain;
    int64_t version;
} ir_opset;

struct ir_graph {
    char *name;
    ir_value *values;
    uint32_t n_values, cap_values;
    ir_node *nodes;
    uint32_t n_nodes, cap_nodes;
    int32_t *inputs;   /* graph inputs (non-initializer), in order */
    uint32_t n_inputs;
    int32_t *outputs;  /* graph outputs, in order */
    uint32_t n_outputs;
    void *name_index;  /* name -> value index, open addressing (ir.c) */
    void *pool;        /* small blocks that live as long as the graph (ir.c, ir_graph_alloc) */
};

typedef struct ir_mapping {
    void *addr;
    size_t size;
    bool is_mmap;
} ir_mapping;

typedef struct ir_model {
    char *path;        /* file it came from (or the buffer's name) */
    char *base_dir;    /* for external data */
    const char *format;
    int64_t ir_version;
    char *producer;
    ir_opset *opsets;
    uint32_t n_opsets;
    ir_graph graph;
    /* backing storage kept alive for borrowed initializer data */
    ir_mapping *mappings;     /* mmapped files (model, external data) */
    uint32_t n_mappings;
} ir_model;

/* ---- construction helpers (ir.c) ---- */
void ir_graph_init(ir_graph *g, const char *name);
void ir_graph_free(ir_graph *g);
/* Find a value by name; -1 when absent. */
int32_t ir_graph_find_value(const ir_graph *g, const char *name);
/* Find or add a value by name; returns its index, -1 on out-of-memory. */
/* Symbolic dim d of v: set takes ownership of `name` (freed on failure,
 * false then: out of memory); get answers NULL when there is none. */
bool ir_value_set_dim_param(ir_value *v, int d, char *name);
const char *ir_value_dim_param(const ir_value *v, int d);
int32_t ir_graph_intern_value(ir_graph *g, const char *name);
/* Give v (a value of g) the rank, every dim -1 (unknown): its dims block comes
 * from g's pool (rank > SY_MAX_RANK is the caller's to refuse). false: out
 * of memory. */
bool ir_value_set_rank(ir_graph *g, ir_value *v, int32_t rank);
/* Blocks freed with the graph, not on their own: strings and index arrays of
 * its nodes and values (ir_value.name always is one); NULL: out of memory.
 * A large block (over 1 KB) is malloc'd on its own: it is freed with the
 * graph as a node's or value's field (or by ir_graph_free_ptr), so every
 * block must become one. ir_graph_intern answers one
 * shared copy per distinct string (op and domain names); never write to it. */
void *ir_graph_alloc(ir_graph *g, size_t size);
char *ir_graph_strdup(ir_graph *g, const char *s);
char *ir_graph_intern(ir_graph *g, const char *s);
/* Free a field of g's node or value: a no-op for a block of g's pool. */
void ir_graph_free_ptr(ir_graph *g, void *p);
/* Free a node's fields (pool blocks excepted) and zero it. */
void ir_node_clear(ir_graph *g, ir_node *n);
/* Room for this many values and nodes in all, allocated at once where the
 * importer knows the counts: appends double the arrays, which costs up to
 * twice the memory at the end (and a copy of each when realloc moves them).
 * A count indices cannot address reserves nothing. false: out of memory. */
bool ir_graph_reserve(ir_graph *g, uint64_t n_values, uint64_t n_nodes);
/* Append a node (zeroed) and return its pointer, NULL on out-of-memory. */
ir_node *ir_graph_add_node(ir_graph *g);
void ir_attr_free(ir_attr *a);
const ir_attr *ir_node_attr(const ir_node *n, const char *name);
int64_t ir_model_opset(const ir_model *m, const char *domain); /* -1 when not imported */
void ir_model_free(ir_model *m);
size_t ir_value_nbytes(const ir_value *v); /* from dtype and dims; 0 when unknown */

#endif
