/*
 * Property test of the memory planner and the scheduler: many random DAGs
 * of elementwise ops (Add, Mul, Sub, Neg, Abs, Relu, Identity, Reshape) with
 * random sizes, fan-outs, in-place chains (unary ops on a value's last use),
 * views (Reshape/Identity alias their input) and outputs taken from the
 * middle of the graph. Each graph is written as ONNX with pt_onnx.h, loaded
 * with sy_model_load_buffer, run with several distinct input patterns, and
 * every output is compared with an evaluation of the same DAG by plain C
 * loops in this file. A planner that let a live tensor be overwritten (two
 * overlapping buffers, an in-place update of a value still read later, an
 * alias of a graph output) corrupts some result, and the comparison fails.
 *
 * Every graph also runs with threads = 1 and threads = 3 (INI threads key
 * overridden by sy_session_options.threads): the outputs must be
 * bit-identical (multi-thread determinism).
 *
 * Usage: test_planner_property [GRAPHS [SEED]]  (default 300 graphs, seed 1)
 */
#include "pt_common.h"

#include <math.h>
#include <stdint.h>

#define MAX_NODES 64
#define MAX_VALUES (MAX_NODES + 8)
#define MAX_IN 3

enum { OP_ADD, OP_MUL, OP_SUB, OP_NEG, OP_ABS, OP_RELU, OP_IDENTITY, OP_RESHAPE, OP__COUNT };
static const char *const op_names[OP__COUNT] = {"Add", "Mul", "Sub", "Neg", "Abs", "Relu", "Identity", "Reshape"};

/* operands: value index >= 0, or a constant */
enum { C_FULL = -1, C_ROW = -2, C_FLAT = -3 };

typedef struct rnode {
    int op;
    int a, b; /* b only for binary ops */
    int out;  /* value index */
} rnode;

typedef struct rgraph {
    int64_t rows, cols, n; /* kind 0: [rows, cols]; kind 1: [n] */
    int n_inputs, n_nodes, n_values;
    int kind[MAX_VALUES];
    bool is_output[MAX_VALUES];
    int consumers[MAX_VALUES];
    rnode nodes[MAX_NODES];
    float *cfull, *crow, *cflat; /* constants */
} rgraph;

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)((rng_state >> 11) % n);
}

static bool is_binary(int op) { return op == OP_ADD || op == OP_MUL || op == OP_SUB; }

static float pattern(uint32_t seed, int64_t i)
{
    /* quarter steps in [-2, 2): exact in float, varied per seed */
    uint32_t h = (uint32_t)i * 2654435761u ^ seed * 40503u;
    h ^= h >> 15;
    return (float)((int)(h % 16u) - 8) * 0.25f;
}

static int pick_value(const rgraph *g, int kind, int last)
{
    /* a chain: the latest value, else any earlier one of the kind */
    if (last >= 0 && g->kind[last] == kind && rnd(2))
        return last;
    int cand[MAX_VALUES], n = 0;
    for (int v = 0; v < g->n_values; v++)
        if (g->kind[v] == kind)
            cand[n++] = v;
    return n ? cand[rnd((uint32_t)n)] : -100;
}

static void gen_graph(rgraph *g, bool have_relu)
{
    static const int64_t rows[] = {1, 2, 3, 5, 8, 32};
    static const int64_t cols[] = {1, 4, 7, 16, 33, 64, 128};
    memset(g, 0, sizeof *g);
    g->rows = rows[rnd(6)];
    g->cols = cols[rnd(7)];
    g->n = g->rows * g->cols;
    g->n_inputs = 1 + (int)rnd(MAX_IN);
    g->n_values = g->n_inputs; /* kind 0 */
    int target = 1 + (int)rnd(rnd(4) ? 24 : MAX_NODES);
    int last = g->n_inputs - 1;
    while (g->n_nodes < target) {
        int op = (int)rnd(OP__COUNT);
        if (op == OP_RELU && !have_relu)
            op = OP_NEG;
        /* operand a: kind of the latest value half of the time */
        int kind = rnd(2) ? g->kind[last] : (int)rnd(2);
        int a = pick_value(g, kind, last);
        if (a == -100) {
            kind = 0;
            a = pick_value(g, 0, last);
        }
        rnode *nd = &g->nodes[g->n_nodes++];
        nd->op = op;
        nd->a = a;
        nd->b = 0;
        if (is_binary(op)) {
            uint32_t r = rnd(6);
            if (r < 3)
                nd->b = pick_value(g, kind, -1);
            else if (r == 3)
                nd->b = a; /* the same tensor twice */
            else
                nd->b = kind == 0 ? (r == 4 ? C_FULL : C_ROW) : C_FLAT;
            if (rnd(2)) { /* constants and values on either side */
                int t = nd->a;
                nd->a = nd->b;
                nd->b = t;
            }
            if (nd->a < 0 && nd->b < 0)
                nd->a = a;
        }
        int out = g->n_values++;
        g->kind[out] = op == OP_RESHAPE ? 1 - kind : kind;
        nd->out = out;
        last = out;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].a >= 0)
            g->consumers[g->nodes[i].a]++;
        if (is_binary(g->nodes[i].op) && g->nodes[i].b >= 0)
            g->consumers[g->nodes[i].b]++;
    }
    for (int v = g->n_inputs; v < g->n_values; v++)
        g->is_output[v] = g->consumers[v] == 0 || rnd(5) == 0;
    g->cfull = malloc((size_t)g->n * sizeof(float));
    g->crow = malloc((size_t)g->cols * sizeof(float));
    g->cflat = malloc((size_t)g->n * sizeof(float));
    for (int64_t i = 0; i < g->n; i++) {
        g->cfull[i] = pattern(1001, i);
        g->cflat[i] = pattern(1002, i);
    }
    for (int64_t i = 0; i < g->cols; i++)
        g->crow[i] = pattern(1003, i);
}

static void free_graph(rgraph *g)
{
    free(g->cfull);
    free(g->crow);
    free(g->cflat);
}

static void vname(char *buf, size_t len, int v)
{
    if (v == C_FULL)
        snprintf(buf, len, "c_full");
    else if (v == C_ROW)
        snprintf(buf, len, "c_row");
    else if (v == C_FLAT)
        snprintf(buf, len, "c_flat");
    else
        snprintf(buf, len, "v%d", v);
}

static pt_model *to_onnx(const rgraph *g)
{
    pt_model *m = pt_model_new("random_dag");
    int64_t d0[2] = {g->rows, g->cols}, d1[1] = {g->n}, drow[2] = {1, g->cols};
    char a[32], b[32], o[32], name[32];
    for (int i = 0; i < g->n_inputs; i++) {
        vname(a, sizeof a, i);
        pt_input(m, a, PT_F32, 2, d0);
    }
    pt_init_f32(m, "c_full", 2, d0, g->cfull);
    pt_init_f32(m, "c_row", 2, drow, g->crow);
    pt_init_f32(m, "c_flat", 1, d1, g->cflat);
    pt_init_i64(m, "shape0", 1, (int64_t[]){2}, d0);
    pt_init_i64(m, "shape1", 1, (int64_t[]){1}, d1);
    for (int i = 0; i < g->n_nodes; i++) {
        const rnode *nd = &g->nodes[i];
        vname(a, sizeof a, nd->a);
        vname(b, sizeof b, nd->b);
        vname(o, sizeof o, nd->out);
        snprintf(name, sizeof name, "n%d_%s", i, op_names[nd->op]);
        if (is_binary(nd->op))
            pt_node(m, op_names[nd->op], name, (const char *[]){a, b, NULL}, (const char *[]){o, NULL});
        else if (nd->op == OP_RESHAPE)
            pt_node(m, "Reshape", name, (const char *[]){a, g->kind[nd->out] ? "shape1" : "shape0", NULL},
                    (const char *[]){o, NULL});
        else
            pt_node(m, op_names[nd->op], name, (const char *[]){a, NULL}, (const char *[]){o, NULL});
    }
    for (int v = g->n_inputs; v < g->n_values; v++)
        if (g->is_output[v]) {
            vname(o, sizeof o, v);
            if (g->kind[v])
                pt_output(m, o, PT_F32, 1, d1);
            else
                pt_output(m, o, PT_F32, 2, d0);
        }
    return m;
}

/* plain C evaluation: vals[v] gets n floats for every value */
static void evaluate(const rgraph *g, float **vals)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const rnode *nd = &g->nodes[i];
        float *out = vals[nd->out];
        for (int64_t k = 0; k < g->n; k++) {
            float x, y = 0.0f;
#define OPERAND(v) ((v) >= 0 ? vals[v][k] : (v) == C_FULL ? g->cfull[k] : (v) == C_ROW ? g->crow[k % g->cols] : g->cflat[k])
            x = OPERAND(nd->a);
            if (is_binary(nd->op))
                y = OPERAND(nd->b);
#undef OPERAND
            switch (nd->op) {
            case OP_ADD: out[k] = x + y; break;
            case OP_MUL: out[k] = x * y; break;
            case OP_SUB: out[k] = x - y; break;
            case OP_NEG: out[k] = -x; break;
            case OP_ABS: out[k] = fabsf(x); break;
            case OP_RELU: out[k] = x > 0.0f ? x : 0.0f; break;
            default: out[k] = x; break; /* Identity, Reshape */
            }
        }
    }
}

static bool same_bits(float a, float b) { return !memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b)); }

/* run one session with input seed `seed`; compare with the reference; copy
 * the outputs (in graph output order) into `got` */
static bool run_and_check(const rgraph *g, sy_session *s, uint32_t seed, float **vals, float *got, int gi,
                          int threads)
{
    for (int i = 0; i < g->n_inputs; i++)
        for (int64_t k = 0; k < g->n; k++)
            vals[i][k] = pattern(seed * 7u + (uint32_t)i, k);
    for (int i = 0; i < g->n_inputs; i++) {
        sy_tensor t = pt_tensor_f32(vals[i], 2, (int64_t[]){g->rows, g->cols});
        sy_status *st = sy_session_set_input_by_index(s, (size_t)i, &t, SY_INPUT_COPY);
        if (st) {
            PT_CHECK(0, "graph %d: set_input: %s", gi, pt_msg(st));
            return false;
        }
    }
    sy_status *st = sy_session_run(s);
    if (st) {
        PT_CHECK(0, "graph %d threads %d: run: %s", gi, threads, pt_msg(st));
        return false;
    }
    evaluate(g, vals);
    size_t o = 0;
    bool ok = true;
    for (int v = g->n_inputs; v < g->n_values; v++) {
        if (!g->is_output[v])
            continue;
        const sy_tensor *t = NULL;
        st = sy_session_get_output(s, o, &t);
        if (st || !t || t->nbytes != (size_t)g->n * sizeof(float)) {
            PT_CHECK(0, "graph %d: output %zu: %s", gi, o, st ? pt_msg(st) : "wrong size");
            return false;
        }
        const float *d = t->data;
        for (int64_t k = 0; k < g->n; k++)
            if (!same_bits(d[k], vals[v][k])) {
                PT_CHECK(0, "graph %d (threads %d, input seed %u): output v%d[%lld] = %g, expected %g", gi, threads,
                         seed, v, (long long)k, (double)d[k], (double)vals[v][k]);
                ok = false;
                break;
            }
        memcpy(got + o * (size_t)g->n, d, (size_t)g->n * sizeof(float));
        o++;
    }
    return ok;
}

static void dump_graph(const rgraph *g, int gi)
{
    fprintf(stderr, "graph %d: [%lld, %lld], %d inputs\n", gi, (long long)g->rows, (long long)g->cols, g->n_inputs);
    for (int i = 0; i < g->n_nodes; i++) {
        char a[32], b[32];
        vname(a, sizeof a, g->nodes[i].a);
        vname(b, sizeof b, g->nodes[i].b);
        fprintf(stderr, "  v%d = %s(%s%s%s)%s\n", g->nodes[i].out, op_names[g->nodes[i].op], a,
                is_binary(g->nodes[i].op) ? ", " : "", is_binary(g->nodes[i].op) ? b : "",
                g->is_output[g->nodes[i].out] ? "  [output]" : "");
    }
}

int main(int argc, char **argv)
{
    int n_graphs = argc > 1 ? atoi(argv[1]) : 300;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (!rng_state)
        rng_state = 1;
    sy_env *env = pt_env("providers = cpu_ref\n");
    if (!env)
        return 1;
    bool have_relu = sy_env_has_op(env, "", "Relu", 13);
    if (!have_relu)
        printf("note: no plugin defines Relu; Neg stands in for it\n");
    int graphs_ok = 0, in_place_graphs = 0;
    size_t total_nodes = 0;
    for (int gi = 0; gi < n_graphs; gi++) {
        rgraph g;
        gen_graph(&g, have_relu);
        total_nodes += (size_t)g.n_nodes;
        pt_model *m = to_onnx(&g);
        sy_model *model = pt_load(env, m);
        float *vals[MAX_VALUES];
        for (int v = 0; v < g.n_values; v++)
            vals[v] = calloc((size_t)g.n, sizeof(float));
        size_t n_out = 0;
        for (int v = 0; v < g.n_values; v++)
            n_out += g.is_output[v];
        float *got1 = calloc(n_out * (size_t)g.n + 1, sizeof(float));
        float *got3 = calloc(n_out * (size_t)g.n + 1, sizeof(float));
        bool ok = model != NULL;
        sy_session *s1 = NULL, *s3 = NULL;
        if (ok) {
            sy_session_options o1 = {.struct_size = sizeof o1, .threads = 1, .strict = -1};
            sy_session_options o3 = {.struct_size = sizeof o3, .threads = 3, .strict = -1};
            sy_status *st = sy_session_create(env, model, &o1, &s1);
            PT_CHECK(!st, "graph %d: session (threads 1): %s", gi, pt_msg(st));
            st = sy_session_create(env, model, &o3, &s3);
            PT_CHECK(!st, "graph %d: session (threads 3): %s", gi, pt_msg(st));
            ok = s1 && s3;
        }
        /* a memory plan that reuses nothing would make this test vacuous */
        if (ok) {
            sy_memory_report mr = {.struct_size = sizeof mr};
            if (sy_session_memory_report(s1, 0, &mr) && mr.arena_bytes < mr.naive_bytes)
                in_place_graphs++;
        }
        for (uint32_t run = 0; ok && run < 3; run++) {
            uint32_t seed = (uint32_t)gi * 3u + run + 1u;
            ok = run_and_check(&g, s1, seed, vals, got1, gi, 1) && ok;
            ok = run_and_check(&g, s3, seed, vals, got3, gi, 3) && ok;
            if (ok && memcmp(got1, got3, n_out * (size_t)g.n * sizeof(float))) {
                PT_CHECK(0, "graph %d: threads=1 and threads=3 outputs differ", gi);
                ok = false;
            }
        }
        if (ok)
            graphs_ok++;
        else
            dump_graph(&g, gi);
        sy_session_release(s1);
        sy_session_release(s3);
        sy_model_release(model);
        pt_model_free(m);
        for (int v = 0; v < g.n_values; v++)
            free(vals[v]);
        free(got1);
        free(got3);
        free_graph(&g);
        if (pt_failures > 20)
            break;
    }
    PT_CHECK(graphs_ok == n_graphs, "%d of %d graphs correct", graphs_ok, n_graphs);
    /* the sample must exercise reuse, or passing proves nothing */
    PT_CHECK(in_place_graphs > n_graphs / 4, "only %d of %d graphs had an arena smaller than the naive plan",
             in_place_graphs, n_graphs);
    printf("%d random graphs (%zu nodes), %d with buffer reuse, each run 3 times with threads 1 and 3\n", n_graphs,
           total_nodes, in_place_graphs);
    sy_env_release(env);
    return pt_result();
}
