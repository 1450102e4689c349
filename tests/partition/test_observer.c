/*
 * The run observer (sy_session_set_observer) and per-node placement
 * overrides (sy_session_options.placements).
 *
 *  - cpu_ref alone: every node that runs is reported once per run, in
 *    execution order, with its index, provider and the values the formula
 *    written out here gives; a folded node is not reported.
 *  - test_npu with `fuse = compile`: the values inside the fused partition
 *    are not reported, its outputs are, marked with the partition.
 *  - a thread pool reports the same set of outputs.
 *  - removing the observer stops the calls.
 *  - an override moves a node to cpu_ref (explain says "policy"), and bad
 *    overrides are refused naming the node or provider.
 *  - a session in dynamic mode (a shape from an input's values) reports too.
 */
#include "pt_common.h"

#include <stdint.h>

#define N 16
static const int64_t DIMS[2] = {2, 8};

typedef struct seen {
    int calls;
    char node[16][32], value[16][32], provider[16][32];
    uint32_t index[16];
    int32_t partition[16];
    uint32_t partition_nodes[16];
    float first[16]; /* element 3 of each value */
} seen;

static void observe(void *user, const sy_node_output *o)
{
    seen *sn = user;
    if (sn->calls < 16 && o->struct_size >= sizeof *o && o->tensor->dtype == SY_DT_FLOAT32) {
        int c = sn->calls;
        snprintf(sn->node[c], sizeof sn->node[c], "%s", o->node_name);
        snprintf(sn->value[c], sizeof sn->value[c], "%s", o->tensor->name);
        snprintf(sn->provider[c], sizeof sn->provider[c], "%s", o->provider);
        sn->index[c] = o->node;
        sn->partition[c] = o->partition;
        sn->partition_nodes[c] = o->partition_nodes;
        sn->first[c] = ((const float *)o->tensor->data)[3];
    }
    sn->calls++;
}

/* chain: a = x + y; b = a * a; c = Relu(b); d = -c; outputs d, b; plus a
 * node on constants only (k = Neg(2), folded) feeding e = d - k */
static pt_model *chain_model(void)
{
    pt_model *m = pt_model_new("chain");
    pt_input(m, "x", PT_F32, 2, DIMS);
    pt_input(m, "y", PT_F32, 2, DIMS);
    static const float two = 2.0f;
    static const int64_t one[1] = {1};
    pt_init_f32(m, "two", 1, one, &two);
    pt_node(m, "Add", "add0", (const char *[]){"x", "y", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Mul", "mul0", (const char *[]){"a", "a", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Relu", "relu0", (const char *[]){"b", NULL}, (const char *[]){"c", NULL});
    pt_node(m, "Neg", "neg0", (const char *[]){"c", NULL}, (const char *[]){"d", NULL});
    pt_node(m, "Neg", "negk", (const char *[]){"two", NULL}, (const char *[]){"k", NULL});
    pt_node(m, "Sub", "sub1", (const char *[]){"d", "k", NULL}, (const char *[]){"e", NULL});
    pt_output(m, "e", PT_F32, 2, DIMS);
    pt_output(m, "b", PT_F32, 2, DIMS);
    return m;
}

static float X[N], Y[N];

static sy_status *feed_and_run(sy_session *s)
{
    for (int i = 0; i < N; i++) {
        X[i] = 0.5f * (float)i - 3.0f;
        Y[i] = (float)((i * 5) % 7) - 2.5f;
    }
    sy_tensor tx = pt_tensor_f32(X, 2, DIMS), ty = pt_tensor_f32(Y, 2, DIMS);
    sy_status *st = sy_session_set_input(s, "x", &tx, SY_INPUT_COPY);
    if (!st)
        st = sy_session_set_input(s, "y", &ty, SY_INPUT_COPY);
    return st ? st : sy_session_run(s);
}

/* the values at element 3, by value name */
static float want(const char *value)
{
    float a = X[3] + Y[3], b = a * a, c = b > 0 ? b : 0, d = -c;
    switch (value[0]) {
    case 'a': return a;
    case 'b': return b;
    case 'c': return c;
    case 'd': return d;
    default: return d + 2.0f; /* e = d - (-2) */
    }
}

static int find(const seen *sn, const char *value)
{
    for (int c = 0; c < sn->calls && c < 16; c++)
        if (!strcmp(sn->value[c], value))
            return c;
    return -1;
}

static void check_unfused(const char *ini, int threads)
{
    pt_model *m = chain_model();
    sy_env *env = pt_env("%s", ini);
    sy_model *mod = env ? pt_load(env, m) : NULL;
    sy_session *s = NULL;
    PT_REQUIRE(mod, "setup");
    sy_session_options o = {.struct_size = sizeof o, .threads = threads, .strict = -1};
    PT_REQUIRE(!pt_msg(sy_session_create(env, mod, &o, &s))[0], "session");
    seen sn = {0};
    PT_REQUIRE(!pt_msg(feed_and_run(s))[0], "run without observer");
    sy_session_set_observer(s, observe, &sn);
    PT_REQUIRE(!pt_msg(feed_and_run(s))[0], "observed run");
    /* add0 mul0 relu0 neg0 sub1 run; negk was folded at creation */
    PT_CHECK(sn.calls == 5, "%s threads %d: 5 outputs reported, got %d", ini, threads, sn.calls);
    static const char *const order[] = {"a", "b", "c", "d", "e"};
    static const char *const nodes[] = {"add0", "mul0", "relu0", "neg0", "sub1"};
    for (int v = 0; v < 5; v++) {
        int c = find(&sn, order[v]);
        PT_CHECK(c >= 0, "value %s reported", order[v]);
        if (c < 0)
            continue;
        if (threads == 1)
            PT_CHECK(c == v, "value %s reported at call %d, expected %d (execution order)", order[v], c, v);
        PT_CHECK(!strcmp(sn.node[c], nodes[v]), "value %s from node %s, expected %s", order[v], sn.node[c], nodes[v]);
        PT_CHECK(sn.first[c] == want(order[v]), "value %s[3] = %g, expected %g", order[v], (double)sn.first[c],
                 (double)want(order[v]));
        PT_CHECK(sn.partition[c] == -1 && sn.partition_nodes[c] == 0, "value %s: not fused", order[v]);
        const char *name = NULL, *dom = NULL, *op = NULL;
        PT_CHECK(sy_model_node(mod, sn.index[c], &name, &dom, &op) && !strcmp(name, nodes[v]),
                 "node index %u of %s is the model's node %s", sn.index[c], order[v], name ? name : "?");
        sy_node_placement pl = {.struct_size = sizeof pl};
        PT_CHECK(sy_session_node_placement(s, sn.index[c], &pl) && pl.provider && !strcmp(pl.provider, sn.provider[c]),
                 "value %s: provider %s matches explain's %s", order[v], sn.provider[c], pl.provider ? pl.provider : "?");
    }
    if (strstr(ini, "test_npu")) {
        int c = find(&sn, "a");
        PT_CHECK(c >= 0 && !strcmp(sn.provider[c], "test_npu"), "add0 ran on test_npu");
        c = find(&sn, "d");
        PT_CHECK(c >= 0 && !strcmp(sn.provider[c], "cpu_ref"), "neg0 ran on cpu_ref");
    }
    /* removed: no more calls */
    sy_session_set_observer(s, NULL, &sn);
    int before = sn.calls;
    PT_REQUIRE(!pt_msg(feed_and_run(s))[0], "run after removing the observer");
    PT_CHECK(sn.calls == before, "no call after removing the observer (%d -> %d)", before, sn.calls);
done:
    sy_session_release(s);
    sy_model_release(mod);
    sy_env_release(env);
    pt_model_free(m);
}

static void test_cpu_ref(void) { check_unfused("providers = cpu_ref\n", 1); }
static void test_cpu_ref_pool(void) { check_unfused("providers = cpu_ref\n", 3); }
static void test_npu_unfused(void) { check_unfused("providers = test_npu, cpu_ref\n", 1); }

/* add0, mul0, relu0 fused on test_npu: a is internal, b (graph output) and c
 * (read by neg0 on cpu_ref) are the partition's outputs */
static void test_npu_fused(void)
{
    pt_model *m = chain_model();
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\nfuse = compile\n");
    sy_model *mod = env ? pt_load(env, m) : NULL;
    sy_session *s = NULL;
    PT_REQUIRE(mod, "setup");
    PT_REQUIRE(!pt_msg(sy_session_create(env, mod, NULL, &s))[0], "session");
    PT_REQUIRE(sy_session_partition_count(s) == 1, "one partition, got %zu", sy_session_partition_count(s));
    uint32_t members = 0;
    const char *prov = NULL;
    bool compiled = false, cached = false;
    sy_session_partition_info(s, 0, &prov, &members, &compiled, &cached);
    PT_REQUIRE(compiled, "the partition compiled");
    seen sn = {0};
    sy_session_set_observer(s, observe, &sn);
    PT_REQUIRE(!pt_msg(feed_and_run(s))[0], "run");
    PT_CHECK(find(&sn, "a") < 0, "a value inside the fused partition is not reported");
    PT_CHECK(sn.calls == 4, "b, c (partition outputs), d, e reported: got %d calls", sn.calls);
    int cb = find(&sn, "b"), cc = find(&sn, "c"), cd = find(&sn, "d");
    PT_REQUIRE(cb >= 0 && cc >= 0 && cd >= 0, "b, c, d reported");
    PT_CHECK(!strcmp(sn.node[cb], "mul0") && !strcmp(sn.node[cc], "relu0"), "attributed to their producers: %s %s",
             sn.node[cb], sn.node[cc]);
    PT_CHECK(sn.partition[cb] == 0 && sn.partition[cc] == 0, "b and c marked as outputs of partition 0");
    PT_CHECK(sn.partition_nodes[cb] == members && members == 3, "partition of %u nodes (reported %u)", members,
             sn.partition_nodes[cb]);
    PT_CHECK(!strcmp(sn.provider[cb], "test_npu"), "b from test_npu, got %s", sn.provider[cb]);
    PT_CHECK(sn.partition[cd] == -1 && !strcmp(sn.provider[cd], "cpu_ref"), "d on cpu_ref, not fused");
    PT_CHECK(cb < cd && cc < cd, "the partition's outputs come before neg0's");
    PT_CHECK(sn.first[cb] == want("b") && sn.first[cc] == want("c") && sn.first[cd] == want("d"),
             "values b %g c %g d %g, expected %g %g %g", (double)sn.first[cb], (double)sn.first[cc],
             (double)sn.first[cd], (double)want("b"), (double)want("c"), (double)want("d"));
done:
    sy_session_release(s);
    sy_model_release(mod);
    sy_env_release(env);
    pt_model_free(m);
}

static void test_placement_override(void)
{
    pt_model *m = chain_model();
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n");
    sy_model *mod = env ? pt_load(env, m) : NULL;
    sy_session *s = NULL;
    PT_REQUIRE(mod, "setup");
    sy_placement_override ov[] = {{"mul0", "cpu_ref"}};
    sy_session_options o = {.struct_size = sizeof o, .strict = -1, .placements = ov, .n_placements = 1};
    PT_REQUIRE(!pt_msg(sy_session_create(env, mod, &o, &s))[0], "session with an override");
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement pl = {.struct_size = sizeof pl};
        PT_REQUIRE(sy_session_node_placement(s, i, &pl), "placement %zu", i);
        if (!strcmp(pl.name, "mul0"))
            PT_CHECK(pl.provider && !strcmp(pl.provider, "cpu_ref") && pl.reason == SY_REASON_POLICY,
                     "mul0 forced to cpu_ref (policy): %s %s", pl.provider ? pl.provider : "?", sy_reason_name(pl.reason));
        if (!strcmp(pl.name, "add0") || !strcmp(pl.name, "relu0"))
            PT_CHECK(pl.provider && !strcmp(pl.provider, "test_npu"), "%s stays on test_npu", pl.name);
    }
    seen sn = {0};
    sy_session_set_observer(s, observe, &sn);
    PT_REQUIRE(!pt_msg(feed_and_run(s))[0], "run");
    int cb = find(&sn, "b");
    PT_CHECK(cb >= 0 && !strcmp(sn.provider[cb], "cpu_ref") && sn.first[cb] == want("b"), "b computed on cpu_ref");
    sy_session_release(s);
    s = NULL;

    /* refusals name what is wrong */
    sy_placement_override bad_node[] = {{"nope0", "cpu_ref"}};
    o.placements = bad_node;
    sy_status *st = sy_session_create(env, mod, &o, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_FOUND, "unknown node refused");
    PT_HAS(pt_msg(st), "no node named 'nope0'");
    sy_placement_override bad_prov[] = {{"add0", "warp_drive"}};
    o.placements = bad_prov;
    st = sy_session_create(env, mod, &o, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_FOUND, "unknown provider refused");
    PT_HAS(pt_msg(st), "'warp_drive'");
    /* test_npu has no Neg kernel */
    sy_placement_override no_kernel[] = {{"neg0", "test_npu"}};
    o.placements = no_kernel;
    st = sy_session_create(env, mod, &o, &s);
    PT_CHECK(st != NULL, "an override to a provider without a kernel is refused");
    PT_HAS(pt_msg(st), "neg0");
    o.placements = NULL;
    st = sy_session_create(env, mod, &o, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_ARGUMENT, "n_placements without placements refused");
    pt_msg(st);
    PT_CHECK(s == NULL, "no session on failure");
done:
    sy_session_release(s);
    sy_model_release(mod);
    sy_env_release(env);
    pt_model_free(m);
}

/* A shape that depends on an input's values: the session runs node by node
 * (dynamic mode), and the observer sees each node there too. */
static void test_dynamic(void)
{
    pt_model *m = pt_model_new("dyn");
    static const int64_t dx[1] = {16}, ds[1] = {2};
    pt_input(m, "x", PT_F32, 1, dx);
    pt_input(m, "shape", PT_I64, 1, ds);
    pt_node(m, "Reshape", "reshape0", (const char *[]){"x", "shape", NULL}, (const char *[]){"r", NULL});
    pt_node(m, "Relu", "relu0", (const char *[]){"r", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_F32, 2, (const int64_t[]){4, 4});
    sy_env *env = pt_env("providers = cpu_ref\n");
    sy_model *mod = env ? pt_load(env, m) : NULL;
    sy_session *s = NULL;
    PT_REQUIRE(mod, "setup");
    PT_REQUIRE(!pt_msg(sy_session_create(env, mod, NULL, &s))[0], "session");
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i - 7.5f;
    int64_t shape[2] = {4, 4};
    sy_tensor tx = pt_tensor_f32(x, 1, dx);
    sy_tensor ts = {.struct_size = sizeof ts, .dtype = SY_DT_INT64, .rank = 1, .dims = {2}, .data = shape,
                    .nbytes = sizeof shape};
    PT_REQUIRE(!pt_msg(sy_session_set_input(s, "x", &tx, SY_INPUT_COPY))[0], "x");
    PT_REQUIRE(!pt_msg(sy_session_set_input(s, "shape", &ts, SY_INPUT_COPY))[0], "shape");
    seen sn = {0};
    sy_session_set_observer(s, observe, &sn);
    PT_REQUIRE(!pt_msg(sy_session_run(s))[0], "run");
    PT_CHECK(sn.calls == 2, "reshape0 and relu0 reported in dynamic mode, got %d calls", sn.calls);
    int cr = find(&sn, "r"), cy = find(&sn, "y");
    PT_CHECK(cr == 0 && cy == 1, "in execution order: r at %d, y at %d", cr, cy);
    /* element 3: x[3] = -4.5; Relu gives 0 */
    PT_CHECK(cr >= 0 && sn.first[cr] == -4.5f, "r[3] = %g, expected -4.5", cr >= 0 ? (double)sn.first[cr] : 0.0);
    PT_CHECK(cy >= 0 && sn.first[cy] == 0.0f, "y[3] = %g, expected 0", cy >= 0 ? (double)sn.first[cy] : 0.0);
done:
    sy_session_release(s);
    sy_model_release(mod);
    sy_env_release(env);
    pt_model_free(m);
}

int main(void)
{
    PT_RUN(test_cpu_ref);
    PT_RUN(test_cpu_ref_pool);
    PT_RUN(test_npu_unfused);
    PT_RUN(test_npu_fused);
    PT_RUN(test_placement_override);
    PT_RUN(test_dynamic);
    return pt_result();
}
