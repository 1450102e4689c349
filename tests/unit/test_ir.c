/* Unit tests of the core IR helpers (framework/src/ir.h). */
#include "ir.h"
#include "util.h"
#include "sy_test.h"

#include <stdint.h>

static void test_intern_and_find(void)
{
    ir_graph g;
    ir_graph_init(&g, "main");
    REQUIRE(g.name && !strcmp(g.name, "main"), "graph name kept");
    CHECK(ir_graph_find_value(&g, "x") == -1, "empty graph has no 'x'");
    CHECK(ir_graph_find_value(&g, NULL) == -1, "NULL name is absent");
    CHECK(ir_graph_intern_value(&g, NULL) == -1, "NULL name cannot be interned");

    int32_t x = ir_graph_intern_value(&g, "x");
    int32_t y = ir_graph_intern_value(&g, "y");
    CHECK(x == 0 && y == 1, "indices in insertion order, got %d %d", x, y);
    CHECK(ir_graph_intern_value(&g, "x") == x, "interning twice returns the same index");
    CHECK(g.n_values == 2, "no duplicate value, n_values %u", g.n_values);
    CHECK(ir_graph_find_value(&g, "y") == y, "find 'y'");
    CHECK(ir_graph_find_value(&g, "z") == -1, "'z' absent");

    const ir_value *v = &g.values[x];
    CHECK(!strcmp(v->name, "x"), "name copied");
    CHECK(v->rank == -1, "new value has unknown rank, got %d", v->rank);
    CHECK(v->producer == -1, "new value has no producer, got %d", v->producer);
    CHECK(v->dtype == SY_DT_UNDEFINED, "new value dtype undefined");
    CHECK(v->flags == 0 && v->data == NULL && v->quant == NULL, "new value has no flags, data or quant");
    CHECK(v->dims == NULL, "a value of unknown rank has no dims");
    for (int d = 0; d < SY_MAX_RANK; d++)
        CHECK(ir_value_dim_param(v, d) == NULL, "dim %d has no symbolic name", d);
    /* a rank gives as many dims, each unknown; a larger rank later, more */
    ir_value *vw = &g.values[x];
    CHECK(ir_value_set_rank(&g, vw, 2) && vw->rank == 2 && vw->dims[0] == -1 && vw->dims[1] == -1, "rank 2: two unknown dims");
    vw->dims[0] = 7;
    CHECK(ir_value_set_rank(&g, vw, 1) && vw->rank == 1 && vw->dims[0] == -1, "rank 1 again: its dim unknown again");
    CHECK(ir_value_set_rank(&g, vw, SY_MAX_RANK) && vw->rank == SY_MAX_RANK && vw->dims[SY_MAX_RANK - 1] == -1,
          "rank %d: every dim unknown", SY_MAX_RANK);
    CHECK(ir_value_set_rank(&g, vw, -1) && vw->rank == -1, "rank unknown again");

    /* the stored name is a copy: changing the caller's buffer changes nothing */
    char buf[8] = "tmp";
    int32_t t = ir_graph_intern_value(&g, buf);
    buf[0] = 'X';
    CHECK(ir_graph_find_value(&g, "tmp") == t, "name was copied on intern");
    CHECK(ir_graph_find_value(&g, "Xmp") == -1, "no alias to the caller's buffer");
    ir_graph_free(&g);
    CHECK(g.n_values == 0 && g.values == NULL && g.name == NULL, "free clears the graph");
}

static void test_dim_params(void)
{
    /* symbolic dim names live in an array made for the values that have one */
    ir_graph g;
    ir_graph_init(&g, "main");
    int32_t a = ir_graph_intern_value(&g, "a"), b = ir_graph_intern_value(&g, "b");
    ir_value *va = &g.values[a];
    CHECK(va->dim_params == NULL, "no array before a symbolic dim");
    CHECK(ir_value_set_dim_param(va, 0, sy_strdup("batch")), "set dim 0");
    CHECK(ir_value_set_dim_param(va, 2, sy_strdup("seq")), "set dim 2");
    CHECK(ir_value_set_dim_param(va, 0, sy_strdup("N")), "set dim 0 again (the old name is freed)");
    CHECK(!ir_value_set_dim_param(va, SY_MAX_RANK, sy_strdup("x")), "dim past SY_MAX_RANK refused");
    CHECK(!ir_value_set_dim_param(va, 1, NULL), "a NULL name (out of memory) refused");
    const char *d0 = ir_value_dim_param(va, 0), *d2 = ir_value_dim_param(va, 2);
    CHECK(d0 && !strcmp(d0, "N"), "dim 0 is N, got %s", d0 ? d0 : "NULL");
    CHECK(d2 && !strcmp(d2, "seq"), "dim 2 is seq, got %s", d2 ? d2 : "NULL");
    CHECK(ir_value_dim_param(va, 1) == NULL && ir_value_dim_param(va, -1) == NULL, "dims 1 and -1 have none");
    CHECK(g.values[b].dim_params == NULL && ir_value_dim_param(&g.values[b], 0) == NULL, "b has none");
    ir_graph_free(&g); /* ASan: the names and the array freed once */
}

static void test_pool(void)
{
    /* node strings and index arrays come from the graph's pool; op and domain
     * names once per distinct text; a field a pass replaced with a malloc'd
     * block is still freed (ASan/LeakSanitizer check both) */
    ir_graph g;
    ir_graph_init(&g, "main");
    char *relu = ir_graph_intern(&g, "Relu"), *relu2 = ir_graph_intern(&g, "Relu"), *add = ir_graph_intern(&g, "Add");
    REQUIRE(relu && relu2 && add, "interned");
    CHECK(relu == relu2, "the same text is stored once");
    CHECK(add != relu && !strcmp(add, "Add") && !strcmp(relu, "Relu"), "distinct texts kept apart");
    /* more distinct names than the first table holds: every one still found once */
    char name[32], *first[100];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "op%d", i);
        first[i] = ir_graph_intern(&g, name);
        REQUIRE(first[i] && !strcmp(first[i], name), "op%d interned", i);
    }
    int same = 0;
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "op%d", i);
        same += ir_graph_intern(&g, name) == first[i];
    }
    CHECK(same == 100, "all 100 found again after the table grew, %d were", same);
    /* small and large blocks: both usable, both freed with the graph */
    char *big_name = malloc(5000);
    REQUIRE(big_name, "malloc");
    memset(big_name, 'n', 4999);
    big_name[4999] = '\0';
    ir_node *big = ir_graph_add_node(&g);
    REQUIRE(big, "node");
    big->name = ir_graph_strdup(&g, big_name); /* its own block: freed as the node's field */
    CHECK(big->name && strlen(big->name) == 4999 && big->name[4998] == 'n', "a 5000-byte name copied");
    free(big_name);
    ir_node *n = ir_graph_add_node(&g);
    REQUIRE(n, "node");
    n->op = relu;
    n->domain = ir_graph_intern(&g, "");
    n->name = ir_graph_strdup(&g, "r0");
    n->inputs = ir_graph_alloc(&g, 3 * sizeof *n->inputs);
    REQUIRE(n->domain && n->name && n->inputs, "pool blocks");
    n->n_inputs = 3;
    for (int i = 0; i < 3; i++)
        n->inputs[i] = i;
    CHECK(((uintptr_t)n->inputs % 8) == 0, "pool blocks are 8-byte aligned");
    n->outputs = malloc(sizeof *n->outputs); /* as pass_qdq replaces a field */
    REQUIRE(n->outputs, "malloc");
    n->outputs[0] = 3;
    n->n_outputs = 1;
    ir_graph_free_ptr(&g, n->inputs); /* a pool block: a no-op */
    CHECK(n->inputs[2] == 2, "a pool block outlives ir_graph_free_ptr");
    ir_graph_free(&g); /* ASan: the malloc'd outputs and the large string freed once, the pool as a whole */
}

static void test_growth(void)
{
    /* far past the initial capacity: every value stays findable at its index */
    ir_graph g;
    ir_graph_init(&g, NULL);
    CHECK(g.name && g.name[0] == '\0', "NULL graph name becomes \"\"");
    char name[32];
    enum { N = 5000 };
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "v%d", i);
        int32_t idx = ir_graph_intern_value(&g, name);
        if (idx != i) {
            CHECK(idx == i, "value %d got index %d", i, idx);
            break;
        }
    }
    CHECK(g.n_values == N && g.cap_values >= N, "n_values %u cap %u", g.n_values, g.cap_values);
    int misses = 0;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "v%d", i);
        misses += ir_graph_find_value(&g, name) != i;
        misses += strcmp(g.values[i].name, name) != 0;
    }
    CHECK(misses == 0, "%d lookups wrong after growth", misses);

    for (int i = 0; i < 100; i++) {
        ir_node *n = ir_graph_add_node(&g);
        if (!n) {
            CHECK(n != NULL, "add_node %d failed", i);
            break;
        }
        CHECK(n->name == NULL && n->op == NULL && n->n_inputs == 0 && n->n_attrs == 0, "node %d zeroed", i);
        n->op = strdup("Relu");
        n->name = strdup("r");
    }
    CHECK(g.n_nodes == 100, "100 nodes, got %u", g.n_nodes);
    CHECK(!strcmp(g.nodes[99].op, "Relu"), "node data kept across growth");
    ir_graph_free(&g);
}

static void test_attrs(void)
{
    ir_node n;
    memset(&n, 0, sizeof n);
    n.n_attrs = 3;
    n.attrs = calloc(3, sizeof *n.attrs);
    REQUIRE(n.attrs, "calloc");
    n.attrs[0] = (ir_attr){.name = strdup("axis"), .type = SY_ATTR_INT, .i = -1};
    n.attrs[1] = (ir_attr){.name = strdup("alpha"), .type = SY_ATTR_FLOAT, .f = 0.5f};
    n.attrs[2] = (ir_attr){.name = strdup("pads"), .type = SY_ATTR_INTS, .count = 4};
    n.attrs[2].ints = calloc(4, sizeof(int64_t));
    const ir_attr *a = ir_node_attr(&n, "alpha");
    CHECK(a == &n.attrs[1], "finds 'alpha'");
    CHECK(a && a->type == SY_ATTR_FLOAT && a->f == 0.5f, "alpha value");
    CHECK(ir_node_attr(&n, "axis") == &n.attrs[0], "finds 'axis'");
    CHECK(ir_node_attr(&n, "pad") == NULL, "prefix of a name does not match");
    CHECK(ir_node_attr(&n, "Axis") == NULL, "names are case-sensitive");
    for (uint32_t i = 0; i < n.n_attrs; i++)
        ir_attr_free(&n.attrs[i]);
    CHECK(n.attrs[2].name == NULL && n.attrs[2].ints == NULL && n.attrs[2].count == 0, "attr_free clears");
    ir_attr_free(NULL); /* accepted */
    free(n.attrs);
}

static void test_opsets(void)
{
    ir_model *m = calloc(1, sizeof *m);
    REQUIRE(m, "calloc");
    ir_graph_init(&m->graph, "g");
    m->n_opsets = 2;
    m->opsets = calloc(2, sizeof *m->opsets);
    m->opsets[0] = (ir_opset){strdup(""), 13};
    m->opsets[1] = (ir_opset){strdup("com.microsoft"), 1};
    CHECK(ir_model_opset(m, "") == 13, "default domain");
    CHECK(ir_model_opset(m, "ai.onnx") == 13, "'ai.onnx' is the default domain");
    CHECK(ir_model_opset(m, NULL) == 13, "NULL is the default domain");
    CHECK(ir_model_opset(m, "com.microsoft") == 1, "contrib domain");
    CHECK(ir_model_opset(m, "ai.onnx.ml") == -1, "not imported -> -1");
    m->path = strdup("model.onnx");
    ir_model_free(m); /* frees everything (checked for leaks under ASan) */
    ir_model_free(NULL);
}

static void test_nbytes(void)
{
    ir_value v;
    int64_t dims[3];
    memset(&v, 0, sizeof v);
    v.dims = dims;
    v.dtype = SY_DT_FLOAT32;
    v.rank = 2;
    v.dims[0] = 2;
    v.dims[1] = 3;
    CHECK(ir_value_nbytes(&v) == 24, "float32[2,3] = 24 bytes, got %zu", ir_value_nbytes(&v));
    v.dtype = SY_DT_FLOAT16;
    CHECK(ir_value_nbytes(&v) == 12, "float16[2,3] = 12 bytes, got %zu", ir_value_nbytes(&v));
    v.dtype = SY_DT_INT64;
    CHECK(ir_value_nbytes(&v) == 48, "int64[2,3] = 48 bytes");
    v.dtype = SY_DT_BOOL;
    CHECK(ir_value_nbytes(&v) == 6, "bool[2,3] = 6 bytes");
    v.dtype = SY_DT_INT4;
    v.dims[1] = 5; /* 10 nibbles */
    CHECK(ir_value_nbytes(&v) == 5, "int4[2,5] packs into 5 bytes, got %zu", ir_value_nbytes(&v));
    v.dims[1] = 3; /* 6 nibbles = 3 bytes */
    v.dims[0] = 1; /* 3 nibbles = 2 bytes (rounded up) */
    CHECK(ir_value_nbytes(&v) == 2, "int4[1,3] rounds up to 2 bytes, got %zu", ir_value_nbytes(&v));
    v.dtype = SY_DT_FLOAT32;
    v.rank = 0;
    CHECK(ir_value_nbytes(&v) == 4, "a scalar float32 is 4 bytes");
    v.rank = 2;
    v.dims[0] = 0;
    CHECK(ir_value_nbytes(&v) == 0, "an empty tensor is 0 bytes");
    v.dims[0] = -1;
    CHECK(ir_value_nbytes(&v) == 0, "unknown dim -> 0 (unknown)");
    v.dims[0] = 2;
    v.rank = -1;
    CHECK(ir_value_nbytes(&v) == 0, "unknown rank -> 0");
    v.rank = 2;
    v.dtype = SY_DT_UNDEFINED;
    CHECK(ir_value_nbytes(&v) == 0, "undefined dtype -> 0");
    v.dtype = SY_DT_FLOAT32;
    v.rank = 3;
    v.dims[0] = INT64_MAX / 2;
    v.dims[1] = 4;
    v.dims[2] = 4;
    CHECK(ir_value_nbytes(&v) == 0, "overflowing element count -> 0, not a wrapped size");
}

int main(void)
{
    RUN_TEST(test_intern_and_find);
    RUN_TEST(test_dim_params);
    RUN_TEST(test_pool);
    RUN_TEST(test_growth);
    RUN_TEST(test_attrs);
    RUN_TEST(test_opsets);
    RUN_TEST(test_nbytes);
    return SY_TEST_MAIN_RESULT();
}
