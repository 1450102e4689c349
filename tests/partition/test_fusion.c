/*
 * Fused partitions (ABI 1.1) with test_npu's `fuse` option: the core refuses
 * a non-convex group naming the node that leaves and re-enters it; a convex
 * group compiles into one step whose results equal an unfused run; the
 * compile cache round-trips and refuses a tampered file or a provider with
 * other options, naming both compatibility strings.
 *
 * "chain" model: x, y [2, 8] float
 *   add0: a = Add(x, y)   test_npu
 *   mul0: b = Mul(a, a)   test_npu (b is also a graph output)
 *   relu0: c = Relu(b)    test_npu when some plugin defines Relu
 *   neg0: d = Neg(c)      cpu_ref
 */
#include "pt_common.h"

#include <stdint.h>

#define N 16
static const int64_t DIMS[2] = {2, 8};

static pt_model *chain_model(void)
{
    pt_model *m = pt_model_new("chain");
    pt_input(m, "x", PT_F32, 2, DIMS);
    pt_input(m, "y", PT_F32, 2, DIMS);
    pt_node(m, "Add", "add0", (const char *[]){"x", "y", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Mul", "mul0", (const char *[]){"a", "a", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Relu", "relu0", (const char *[]){"b", NULL}, (const char *[]){"c", NULL});
    pt_node(m, "Neg", "neg0", (const char *[]){"c", NULL}, (const char *[]){"d", NULL});
    pt_output(m, "d", PT_F32, 2, DIMS);
    pt_output(m, "b", PT_F32, 2, DIMS);
    return m;
}

/* The "part" model of test_partition: add0 and mul0 on the npu with sub0 on
 * cpu_ref between them, so {add0, mul0, add1} is not convex. */
static pt_model *part_model(void)
{
    pt_model *m = pt_model_new("part");
    pt_input(m, "x", PT_F32, 2, DIMS);
    pt_input(m, "y", PT_F32, 2, DIMS);
    pt_node(m, "Add", "add0", (const char *[]){"x", "y", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Sub", "sub0", (const char *[]){"a", "x", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Mul", "mul0", (const char *[]){"b", "b", NULL}, (const char *[]){"c", NULL});
    pt_node(m, "Add", "add1", (const char *[]){"b", "c", NULL}, (const char *[]){"d", NULL});
    pt_output(m, "d", PT_F32, 2, DIMS);
    return m;
}

static void inputs(float *x, float *y)
{
    for (int i = 0; i < N; i++) {
        x[i] = 0.5f * (float)i - 3.0f;
        y[i] = (float)((i * 5) % 7) - 2.5f;
    }
}

/* run once; d and b into the arrays */
static sy_status *run(sy_session *s, float *d, float *b)
{
    float x[N], y[N];
    inputs(x, y);
    sy_tensor tx = pt_tensor_f32(x, 2, DIMS), ty = pt_tensor_f32(y, 2, DIMS);
    const sy_tensor *td, *tb;
    sy_status *st;
    if ((st = sy_session_set_input(s, "x", &tx, SY_INPUT_COPY)) || (st = sy_session_set_input(s, "y", &ty, SY_INPUT_COPY)) ||
        (st = sy_session_run(s)) || (st = sy_session_get_output_by_name(s, "d", &td)) ||
        (st = sy_session_get_output_by_name(s, "b", &tb)))
        return st;
    memcpy(d, td->data, sizeof(float) * N);
    memcpy(b, tb->data, sizeof(float) * N);
    return NULL;
}

static void reference(float *d, float *b)
{
    float x[N], y[N];
    inputs(x, y);
    for (int i = 0; i < N; i++) {
        float a = x[i] + y[i];
        b[i] = a * a;
        d[i] = -(b[i] > 0.0f ? b[i] : 0.0f);
    }
}

static void test_non_convex_refused(void)
{
    pt_model *m = part_model();
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\nfuse = all\n");
    sy_model *model = env ? pt_load(env, m) : NULL;
    sy_session *s = NULL;
    PT_REQUIRE(model, "setup");
    sy_status *st = sy_session_create(env, model, NULL, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_PLUGIN, "expected SY_ERR_PLUGIN, got %s",
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    const char *msg = pt_msg(st);
    PT_HAS(msg, "not convex");
    PT_HAS(msg, "sub0"); /* the node outside that both depends on the group and feeds it */
    PT_HAS(msg, "test_npu");
    PT_CHECK(s == NULL, "no session on failure");
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(m);
}

static void test_compiled_partition(void)
{
    pt_model *m = chain_model();
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\nfuse = compile\n");
    sy_env *plain = pt_env("providers = test_npu, cpu_ref\n");
    sy_model *model = env ? pt_load(env, m) : NULL, *pmodel = plain ? pt_load(plain, m) : NULL;
    sy_session *s = NULL, *ps = NULL;
    float d[N], b[N], pd[N], pb[N], rd[N], rb[N];
    PT_REQUIRE(model && pmodel, "setup");
    { const char *e = pt_msg(sy_session_create(env, model, NULL, &s)); PT_REQUIRE(!e[0], "fused session: %s", e); }
    PT_REQUIRE(!pt_msg(sy_session_create(plain, pmodel, NULL, &ps))[0], "unfused session");
    PT_CHECK(sy_session_partition_count(s) == 1, "one fused partition, got %zu", sy_session_partition_count(s));
    const char *prov = NULL;
    uint32_t nn = 0;
    bool compiled = false, cached = true;
    PT_CHECK(sy_session_partition_info(s, 0, &prov, &nn, &compiled, &cached), "partition info");
    PT_CHECK(prov && !strcmp(prov, "test_npu") && compiled && !cached, "compiled by test_npu, not from a cache");
    bool relu = sy_env_has_op(env, "", "Relu", 13);
    PT_CHECK(nn == (relu ? 3u : 2u), "partition of %u nodes", nn);
    PT_REQUIRE(!pt_msg(run(s, d, b))[0], "fused run");
    PT_REQUIRE(!pt_msg(run(ps, pd, pb))[0], "unfused run");
    reference(rd, rb);
    for (int i = 0; i < N; i++) {
        PT_CHECK(d[i] == pd[i] && b[i] == pb[i], "fused == unfused at %d", i);
        PT_CHECK(d[i] == rd[i] && b[i] == rb[i], "fused == reference at %d: %g %g vs %g %g", i, d[i], b[i], rd[i], rb[i]);
    }
    /* a second run of the same compiled step gives the same bits */
    float d2[N], b2[N];
    PT_REQUIRE(!pt_msg(run(s, d2, b2))[0], "second run");
    PT_CHECK(!memcmp(d, d2, sizeof d) && !memcmp(b, b2, sizeof b), "runs repeat");
done:
    sy_session_release(s);
    sy_session_release(ps);
    sy_model_release(model);
    sy_model_release(pmodel);
    sy_env_release(env);
    sy_env_release(plain);
    pt_model_free(m);
}

static void test_compile_cache(void)
{
    pt_model *m = chain_model();
    char path[] = "/tmp/sy_cache_test.XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\nfuse = compile\n");
    sy_env *other = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\nfuse = compile\nops = Add,Mul,Relu,Sub\n");
    sy_model *model = env ? pt_load(env, m) : NULL, *omodel = other ? pt_load(other, m) : NULL;
    sy_session *s = NULL, *c = NULL, *t = NULL;
    float d[N], b[N], cd[N], cb[N];
    PT_REQUIRE(fd >= 0 && model && omodel, "setup");
    PT_REQUIRE(!pt_msg(sy_session_create(env, model, NULL, &s))[0], "session");
    PT_REQUIRE(!pt_msg(run(s, d, b))[0], "run");
    PT_REQUIRE(!pt_msg(sy_session_save_compiled(s, path))[0], "save");

    /* round trip: the partition comes from the cache and gives the same bits */
    sy_session_options o = {.struct_size = sizeof o, .strict = -1, .compiled_cache = path};
    PT_REQUIRE(!pt_msg(sy_session_create(env, model, &o, &c))[0], "session from cache");
    bool compiled = false, cached = false;
    PT_CHECK(sy_session_partition_info(c, 0, NULL, NULL, &compiled, &cached) && compiled && cached,
             "partition loaded from the cache");
    PT_REQUIRE(!pt_msg(run(c, cd, cb))[0], "cached run");
    PT_CHECK(!memcmp(d, cd, sizeof d) && !memcmp(b, cb, sizeof b), "cached run == compiled run");

    /* other provider options: refused, naming both compatibility strings */
    sy_status *st = sy_session_create(other, omodel, &o, &t);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_ABI_MISMATCH, "other options refused, got %s",
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    const char *msg = pt_msg(st);
    PT_HAS(msg, "ops=Add,Mul,Relu fuse=2");
    PT_HAS(msg, "ops=Add,Mul,Relu,Sub fuse=2");
    sy_session_release(t);
    t = NULL;

    /* a flipped byte in the body: refused as corrupt, never run */
    FILE *f = fopen(path, "r+b");
    PT_REQUIRE(f, "reopen cache");
    fseek(f, -1, SEEK_END);
    int last = fgetc(f);
    fseek(f, -1, SEEK_END);
    fputc(last ^ 0x5a, f);
    fclose(f);
    st = sy_session_create(env, model, &o, &t);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL, "tampered cache refused, got %s",
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    PT_HAS(pt_msg(st), "checksum");
    PT_CHECK(t == NULL, "no session from a tampered cache");

    /* not a cache at all */
    f = fopen(path, "wb");
    PT_REQUIRE(f, "rewrite");
    fputs("hello", f);
    fclose(f);
    st = sy_session_create(env, model, &o, &t);
    PT_HAS(pt_msg(st), "not a Switchyard compile cache");
done:
    sy_session_release(s);
    sy_session_release(c);
    sy_session_release(t);
    sy_model_release(model);
    sy_model_release(omodel);
    sy_env_release(env);
    sy_env_release(other);
    pt_model_free(m);
    unlink(path);
}

int main(void)
{
    PT_RUN(test_non_convex_refused);
    PT_RUN(test_compiled_partition);
    PT_RUN(test_compile_cache);
    return pt_result();
}
