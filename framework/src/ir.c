#include "ir.h"
#include "onnx_import.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The name index of a graph: open addressing over value indices, keyed by
 * the values' own names (linear probing, at most half full). Four bytes a
 * slot, where a hash entry of its own per value cost 72 bytes and a heap
 * block (docs/fuzzing.md, the 10^6-node chain). Values are never removed or
 * renamed while the graph lives, so no tombstones. */
typedef struct ir_name_table {
    uint32_t mask;   /* slots - 1; slots is a power of two */
    uint32_t count;
    int32_t slot[]; /* value index, -1 for an empty slot */
} ir_name_table;

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static ir_name_table *name_table_new(uint32_t slots)
{
    ir_name_table *t = malloc(sizeof *t + (size_t)slots * sizeof t->slot[0]);
    if (!t)
        return NULL;
    t->mask = slots - 1;
    t->count = 0;
    memset(t->slot, 0xff, (size_t)slots * sizeof t->slot[0]); /* -1 */
    return t;
}

/* the slot of `name`, or the empty slot where it would go */
static uint32_t name_table_probe(const ir_name_table *t, const ir_value *values, const char *name)
{
    uint32_t i = name_hash(name) & t->mask;
    while (t->slot[i] >= 0 && strcmp(values[t->slot[i]].name, name) != 0)
        i = (i + 1) & t->mask;
    return i;
}

/* Room for one more name: double when the table would pass half full. */
static bool name_table_reserve(ir_graph *g)
{
    ir_name_table *t = g->name_index;
    uint32_t slots = t ? t->mask + 1 : 0;
    if (t && (uint64_t)(t->count + 1) * 2 <= slots)
        return true;
    uint64_t ns = slots ? (uint64_t)slots * 2 : 64;
    if (ns > ((uint64_t)1 << 31)) /* value indices are int32: never reached below INT32_MAX / 2 names */
        return false;
    ir_name_table *nt = name_table_new((uint32_t)ns);
    if (!nt)
        return false;
    for (uint32_t i = 0; t && i < slots; i++)
        if (t->slot[i] >= 0)
            nt->slot[name_table_probe(nt, g->values, g->values[t->slot[i]].name)] = t->slot[i];
    nt->count = t ? t->count : 0;
    free(t);
    g->name_index = nt;
    return true;
}

/* ---- the graph's pool -------------------------------------------------------
 * Node names, op and domain names, node index arrays and value names are
 * small and live as long as the graph: a heap block each cost the
 * allocator's header and rounding, five to seven a node (docs/fuzzing.md).
 * They are carved from a few chunks instead, freed with the graph; op and
 * domain names, a handful per model, are stored once (interned). A pointer
 * outside the pool (a pass that replaced a field with a malloc'd one, a
 * block too large for it) is still freed on its own: ir_graph_free_ptr. */
#define IR_POOL_CHUNK_MIN ((size_t)4096)
#define IR_POOL_CHUNK_MAX ((size_t)1 << 24) /* chunks double up to this: few to search in ir_pool_owns */
#define IR_POOL_ALIGN 8
#define IR_POOL_BIG ((size_t)1024) /* larger blocks are malloc'd: a rare long name or list */

typedef struct ir_pool_chunk {
    struct ir_pool_chunk *next;
    size_t size; /* bytes, this header included */
    size_t used;
} ir_pool_chunk;

typedef struct ir_pool {
    ir_pool_chunk *head; /* the chunk being filled, then older ones */
    size_t next_size;
    char **interned;     /* open addressing, at most half full; NULL = empty slot */
    uint32_t intern_mask, intern_count;
} ir_pool;

static bool ir_pool_owns(const ir_pool *pl, const void *p)
{
    for (const ir_pool_chunk *k = pl ? pl->head : NULL; k; k = k->next)
        if ((const char *)p >= (const char *)k && (const char *)p < (const char *)k + k->size)
            return true;
    return false;
}

void *ir_graph_alloc(ir_graph *g, size_t size)
{
    if (!g->pool && !(g->pool = calloc(1, sizeof(ir_pool))))
        return NULL;
    ir_pool *pl = g->pool;
    size_t hdr = (sizeof(ir_pool_chunk) + IR_POOL_ALIGN - 1) & ~(size_t)(IR_POOL_ALIGN - 1);
    if (size > IR_POOL_BIG)
        return malloc(size); /* its own block, freed by ir_graph_free_ptr like any other */
    size = size ? (size + IR_POOL_ALIGN - 1) & ~(size_t)(IR_POOL_ALIGN - 1) : IR_POOL_ALIGN;
    ir_pool_chunk *k = pl->head;
    if (!k || k->size - k->used < size) {
        size_t cs = pl->next_size ? pl->next_size : IR_POOL_CHUNK_MIN;
        while (cs - hdr < size)
            cs *= 2;
        if (!(k = malloc(cs)))
            return NULL;
        k->next = pl->head;
        k->size = cs;
        k->used = hdr;
        pl->head = k;
        pl->next_size = cs < IR_POOL_CHUNK_MAX ? cs * 2 : cs;
    }
    void *p = (char *)k + k->used;
    k->used += size;
    return p;
}

char *ir_graph_strdup(ir_graph *g, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ir_graph_alloc(g, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

char *ir_graph_intern(ir_graph *g, const char *s)
{
    if (!g->pool && !(g->pool = calloc(1, sizeof(ir_pool))))
        return NULL;
    ir_pool *pl = g->pool;
    uint32_t have = pl->interned ? pl->intern_mask + 1 : 0;
    if ((uint64_t)(pl->intern_count + 1) * 2 > have) {
        uint32_t slots = have ? have * 2 : 16;
        if (have >= (1u << 30))
            return NULL;
        char **nt = calloc(slots, sizeof *nt);
        if (!nt)
            return NULL;
        for (uint32_t i = 0; pl->interned && i <= pl->intern_mask; i++) {
            if (!pl->interned[i])
                continue;
            uint32_t j = name_hash(pl->interned[i]) & (slots - 1);
            while (nt[j])
                j = (j + 1) & (slots - 1);
            nt[j] = pl->interned[i];
        }
        free(pl->interned);
        pl->interned = nt;
        pl->intern_mask = slots - 1;
    }
    uint32_t j = name_hash(s) & pl->intern_mask;
    while (pl->interned[j] && strcmp(pl->interned[j], s) != 0)
        j = (j + 1) & pl->intern_mask;
    if (!pl->interned[j]) {
        char *p = ir_graph_strdup(g, s);
        if (!p)
            return NULL;
        pl->interned[j] = p;
        pl->intern_count++;
    }
    return pl->interned[j];
}

void ir_graph_free_ptr(ir_graph *g, void *p)
{
    if (p && !ir_pool_owns(g->pool, p))
        free(p);
}

static void ir_pool_free(ir_pool *pl)
{
    if (!pl)
        return;
    for (uint32_t i = 0; pl->interned && i <= pl->intern_mask; i++)
        if (pl->interned[i] && !ir_pool_owns(pl, pl->interned[i]))
            free(pl->interned[i]);
    while (pl->head) {
        ir_pool_chunk *k = pl->head;
        pl->head = k->next;
        free(k);
    }
    free(pl->interned);
    free(pl);
}

void ir_graph_init(ir_graph *g, const char *name)
{
    memset(g, 0, sizeof *g);
    g->name = sy_strdup(name ? name : "");
}

static void ir_value_free_fields(ir_graph *g, ir_value *v)
{
    ir_graph_free_ptr(g, v->name);
    ir_graph_free_ptr(g, v->dims);
    for (int i = 0; v->dim_params && i < SY_MAX_RANK; i++)
        free(v->dim_params[i]);
    free(v->dim_params);
    if (v->quant) {
        free((void *)v->quant->scales);
        free((void *)v->quant->zero_points);
        free(v->quant);
    }
    if (v->flags & IR_VALUE_OWNS_DATA)
        sy_aligned_free((void *)v->data);
}

void ir_attr_free(ir_attr *a)
{
    if (!a)
        return;
    free(a->name);
    free(a->s);
    free(a->ints);
    free(a->floats);
    if (a->strings) {
        for (size_t i = 0; i < a->count; i++)
            free(a->strings[i]);
        free(a->strings);
    }
    sy_tensor_free(a->t);
    if (a->g) {
        ir_graph_free(a->g);
        free(a->g);
    }
    memset(a, 0, sizeof *a);
}

void ir_node_clear(ir_graph *g, ir_node *n)
{
    ir_graph_free_ptr(g, n->name);
    ir_graph_free_ptr(g, n->op);
    ir_graph_free_ptr(g, n->domain);
    ir_graph_free_ptr(g, n->inputs);
    ir_graph_free_ptr(g, n->outputs);
    for (uint32_t i = 0; i < n->n_attrs; i++)
        ir_attr_free(&n->attrs[i]);
    free(n->attrs);
    memset(n, 0, sizeof *n);
}

void ir_graph_free(ir_graph *g)
{
    if (!g)
        return;
    free(g->name_index);
    for (uint32_t i = 0; i < g->n_values; i++)
        ir_value_free_fields(g, &g->values[i]);
    free(g->values);
    for (uint32_t i = 0; i < g->n_nodes; i++)
        ir_node_clear(g, &g->nodes[i]);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free(g->name);
    ir_pool_free(g->pool);
    memset(g, 0, sizeof *g);
}

bool ir_value_set_dim_param(ir_value *v, int d, char *name)
{
    if (!name || d < 0 || d >= SY_MAX_RANK || (!v->dim_params && !(v->dim_params = calloc(SY_MAX_RANK, sizeof(char *))))) {
        free(name);
        return false;
    }
    free(v->dim_params[d]);
    v->dim_params[d] = name;
    return true;
}

const char *ir_value_dim_param(const ir_value *v, int d)
{
    return v->dim_params && d >= 0 && d < SY_MAX_RANK ? v->dim_params[d] : NULL;
}

int32_t ir_graph_find_value(const ir_graph *g, const char *name)
{
    if (!g || !name)
        return -1;
    const ir_name_table *t = g->name_index;
    return t ? t->slot[name_table_probe(t, g->values, name)] : -1;
}

/* Grow an array of `elem` bytes to hold at least `need` elements; doubling keeps
 * appends amortised O(1). Indices are int32, so counts stay below INT32_MAX. */
static bool ir_grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    if (need > (uint32_t)INT32_MAX)
        return false;
    uint64_t nc = *cap ? (uint64_t)*cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    if (nc > (uint64_t)INT32_MAX)
        nc = (uint64_t)INT32_MAX;
    size_t bytes;
    if (!sy_mul_overflow_size((size_t)nc, elem, &bytes))
        return false;
    void *p = realloc(*arr, bytes);
    if (!p)
        return false;
    *arr = p;
    *cap = (uint32_t)nc;
    return true;
}

bool ir_graph_reserve(ir_graph *g, uint64_t n_values, uint64_t n_nodes)
{
    if (n_values > (uint64_t)INT32_MAX || n_nodes > (uint64_t)INT32_MAX)
        return true; /* more than indices can address: appends refuse it as before */
    size_t bytes;
    if (n_values > g->cap_values) {
        if (!sy_mul_overflow_size((size_t)n_values, sizeof *g->values, &bytes))
            return false;
        void *p = realloc(g->values, bytes);
        if (!p)
            return false;
        g->values = p;
        g->cap_values = (uint32_t)n_values;
    }
    if (n_nodes > g->cap_nodes) {
        if (!sy_mul_overflow_size((size_t)n_nodes, sizeof *g->nodes, &bytes))
            return false;
        void *p = realloc(g->nodes, bytes);
        if (!p)
            return false;
        g->nodes = p;
        g->cap_nodes = (uint32_t)n_nodes;
    }
    return true;
}

bool ir_value_set_rank(ir_graph *g, ir_value *v, int32_t rank)
{
    if (rank > v->rank && rank > 0) {
        /* a rank only grows past its block when a declaration is replaced,
         * which is rare: the old block stays in the pool */
        int64_t *d = ir_graph_alloc(g, (size_t)rank * sizeof *d);
        if (!d)
            return false;
        ir_graph_free_ptr(g, v->dims);
        v->dims = d;
    }
    v->rank = rank;
    for (int32_t i = 0; i < rank; i++)
        v->dims[i] = -1;
    return true;
}

int32_t ir_graph_intern_value(ir_graph *g, const char *name)
{
    if (!name)
        return -1;
    int32_t idx = ir_graph_find_value(g, name);
    if (idx >= 0)
        return idx;
    if (!ir_grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values) || !name_table_reserve(g))
        return -1;
    char *copy = ir_graph_strdup(g, name);
    if (!copy)
        return -1;
    ir_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = copy;
    v->rank = -1;
    v->producer = -1;
    ir_name_table *t = g->name_index;
    t->slot[name_table_probe(t, g->values, copy)] = (int32_t)g->n_values;
    t->count++;
    return (int32_t)g->n_values++;
}

ir_node *ir_graph_add_node(ir_graph *g)
{
    if (!ir_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return NULL;
    ir_node *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    return n;
}

const ir_attr *ir_node_attr(const ir_node *n, const char *name)
{
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t ir_model_opset(const ir_model *m, const char *domain)
{
    if (!domain || strcmp(domain, "ai.onnx") == 0)
        domain = "";
    for (uint32_t i = 0; i < m->n_opsets; i++)
        if (strcmp(m->opsets[i].domain, domain) == 0)
            return m->opsets[i].version;
    return -1;
}

void ir_model_free(ir_model *m)
{
    if (!m)
        return;
    /* the graph may borrow from the mappings: free it first */
    ir_graph_free(&m->graph);
    for (uint32_t i = 0; i < m->n_mappings; i++) {
        if (m->mappings[i].is_mmap)
            munmap(m->mappings[i].addr, m->mappings[i].size);
        else
            free(m->mappings[i].addr);
    }
    free(m->mappings);
    for (uint32_t i = 0; i < m->n_opsets; i++)
        free(m->opsets[i].domain);
    free(m->opsets);
    free(m->path);
    free(m->base_dir);
    free(m->producer);
    free(m);
}

size_t ir_value_nbytes(const ir_value *v)
{
    if (v->rank < 0 || v->dtype == SY_DT_UNDEFINED)
        return 0;
    int64_t numel = 1;
    for (int32_t i = 0; i < v->rank; i++) {
        if (v->dims[i] < 0 || __builtin_mul_overflow(numel, v->dims[i], &numel))
            return 0;
    }
    size_t n;
    return sy_onnx_dtype_bytes((int32_t)v->dtype, numel, &n) ? n : 0;
}
