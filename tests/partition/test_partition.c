/*
 * Partitioning through the ABI with the test_npu provider (tests/partition/
 * test_npu): priority order, fallback, strict-mode failure, boundary copies
 * (pairwise and host bounce), results equal to an all-cpu_ref run, and the
 * npu_sram domain's capacity.
 *
 * The model ("part"): x, y [2, 8] float
 *   add0: a = Add(x, y)     test_npu (in its subset)
 *   sub0: b = Sub(a, x)     not in the subset: cpu_ref
 *   mul0: c = Mul(b, b)     test_npu; reads b twice
 *   add1: d = Add(b, c)     test_npu; reads b again: still ONE copy of b
 *   neg0: e = Neg(d)        cpu_ref
 *   outputs: e, c
 */
#include "pt_common.h"

#include <stdint.h>

#define N 16
static const int64_t DIMS[2] = {2, 8};

static pt_model *part_model(void)
{
    pt_model *m = pt_model_new("part");
    pt_input(m, "x", PT_F32, 2, DIMS);
    pt_input(m, "y", PT_F32, 2, DIMS);
    pt_node(m, "Add", "add0", (const char *[]){"x", "y", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Sub", "sub0", (const char *[]){"a", "x", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Mul", "mul0", (const char *[]){"b", "b", NULL}, (const char *[]){"c", NULL});
    pt_node(m, "Add", "add1", (const char *[]){"b", "c", NULL}, (const char *[]){"d", NULL});
    pt_node(m, "Neg", "neg0", (const char *[]){"d", NULL}, (const char *[]){"e", NULL});
    pt_output(m, "e", PT_F32, 2, DIMS);
    pt_output(m, "c", PT_F32, 2, DIMS);
    return m;
}

static void inputs(float *x, float *y, int seed)
{
    for (int i = 0; i < N; i++) {
        x[i] = (float)((i * 7 + seed) % 11) - 5.0f + 0.25f * (float)i;
        y[i] = 0.5f * (float)i - 2.0f - (float)seed;
    }
}

/* plain C evaluation of the model */
static void reference(const float *x, const float *y, float *e, float *c)
{
    for (int i = 0; i < N; i++) {
        float a = x[i] + y[i];
        float b = a - x[i];
        c[i] = b * b;
        float d = b + c[i];
        e[i] = -d;
    }
}

typedef struct run_result {
    sy_session *s;
    float e[N], c[N];
    bool ok;
} run_result;

/* create a session of `model` and run it once with seed's inputs */
static sy_status *run_once(sy_env *env, sy_model *model, const sy_session_options *opts, int seed, run_result *r)
{
    memset(r, 0, sizeof *r);
    sy_status *st = sy_session_create(env, model, opts, &r->s);
    if (st)
        return st;
    float x[N], y[N];
    inputs(x, y, seed);
    sy_tensor tx = pt_tensor_f32(x, 2, DIMS), ty = pt_tensor_f32(y, 2, DIMS);
    if ((st = sy_session_set_input(r->s, "x", &tx, SY_INPUT_COPY)) ||
        (st = sy_session_set_input(r->s, "y", &ty, SY_INPUT_COPY)) || (st = sy_session_run(r->s)))
        return st;
    const sy_tensor *te, *tc;
    if ((st = sy_session_get_output_by_name(r->s, "e", &te)) || (st = sy_session_get_output_by_name(r->s, "c", &tc)))
        return st;
    if (te->nbytes != sizeof r->e || tc->nbytes != sizeof r->c)
        return sy_status_create(SY_ERR_INTERNAL, "output sizes %zu, %zu", te->nbytes, tc->nbytes);
    memcpy(r->e, te->data, sizeof r->e);
    memcpy(r->c, tc->data, sizeof r->c);
    r->ok = true;
    return NULL;
}

static bool placement(const sy_session *s, const char *name, sy_node_placement *out)
{
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        out->struct_size = sizeof *out;
        if (sy_session_node_placement(s, i, out) && out->name && !strcmp(out->name, name))
            return true;
    }
    memset(out, 0, sizeof *out);
    return false;
}

static const char *provider_of(const sy_session *s, const char *node)
{
    sy_node_placement p;
    return placement(s, node, &p) && p.provider ? p.provider : "(none)";
}

/* copies of `value` into `dst_domain` */
static int copies_of(const sy_session *s, const char *value, const char *dst_domain, sy_copy_info *last)
{
    int n = 0;
    for (size_t i = 0; i < sy_session_copy_count(s); i++) {
        sy_copy_info ci = {.struct_size = sizeof ci};
        if (sy_session_copy_info(s, i, &ci) && !strcmp(ci.value, value) && !strcmp(ci.dst_domain, dst_domain)) {
            n++;
            if (last)
                *last = ci;
        }
    }
    return n;
}

static void expect_reference(const run_result *r, int seed, const char *what)
{
    float x[N], y[N], e[N], c[N];
    inputs(x, y, seed);
    reference(x, y, e, c);
    PT_CHECK(!memcmp(r->e, e, sizeof e), "%s: output e differs from the plain C evaluation", what);
    PT_CHECK(!memcmp(r->c, c, sizeof c), "%s: output c differs from the plain C evaluation", what);
}

/* ---- priority order --------------------------------------------------------- */
static void test_priority_order(void)
{
    pt_model *m = part_model();
    run_result r1 = {0}, r2 = {0};
    sy_env *e1 = pt_env("providers = test_npu, cpu_ref\n");
    sy_env *e2 = pt_env("providers = cpu_ref, test_npu\n");
    sy_model *m1 = e1 ? pt_load(e1, m) : NULL, *m2 = e2 ? pt_load(e2, m) : NULL;
    PT_REQUIRE(m1 && m2, "setup");
    PT_REQUIRE(!pt_msg(run_once(e1, m1, NULL, 1, &r1))[0], "npu-first session");
    PT_CHECK(!strcmp(provider_of(r1.s, "add0"), "test_npu"), "add0 on %s", provider_of(r1.s, "add0"));
    PT_CHECK(!strcmp(provider_of(r1.s, "mul0"), "test_npu"), "mul0 on %s", provider_of(r1.s, "mul0"));
    PT_CHECK(!strcmp(provider_of(r1.s, "add1"), "test_npu"), "add1 on %s", provider_of(r1.s, "add1"));
    PT_CHECK(!strcmp(provider_of(r1.s, "sub0"), "cpu_ref"), "sub0 on %s", provider_of(r1.s, "sub0"));
    PT_CHECK(!strcmp(provider_of(r1.s, "neg0"), "cpu_ref"), "neg0 on %s", provider_of(r1.s, "neg0"));
    sy_node_placement p;
    PT_CHECK(placement(r1.s, "add0", &p) && p.reason == SY_REASON_TAKEN, "add0 reason %d", p.reason);
    /* cpu_ref is in the list: it takes sub0 by priority, not as a fallback,
     * and the text says why test_npu declined */
    PT_CHECK(placement(r1.s, "sub0", &p) && p.reason == SY_REASON_TAKEN, "sub0 reason %s", sy_reason_name(p.reason));
    PT_HAS(p.reason_text, "test_npu: [no-kernel] no test_npu kernel for Sub");
    expect_reference(&r1, 1, "npu first");

    /* swapped: cpu_ref asks first and has kernels for everything */
    PT_REQUIRE(!pt_msg(run_once(e2, m2, NULL, 1, &r2))[0], "cpu-first session");
    static const char *const names[] = {"add0", "sub0", "mul0", "add1", "neg0"};
    for (int i = 0; i < 5; i++)
        PT_CHECK(!strcmp(provider_of(r2.s, names[i]), "cpu_ref"), "%s on %s with cpu_ref first", names[i],
                 provider_of(r2.s, names[i]));
    PT_CHECK(sy_session_copy_count(r2.s) == 0, "%zu copies with everything on cpu_ref", sy_session_copy_count(r2.s));
    expect_reference(&r2, 1, "cpu first");
    /* placement is deterministic: a second session places the same way */
    run_result r3 = {0};
    PT_REQUIRE(!pt_msg(run_once(e1, m1, NULL, 2, &r3))[0], "second npu-first session");
    for (int i = 0; i < 5; i++)
        PT_CHECK(!strcmp(provider_of(r3.s, names[i]), provider_of(r1.s, names[i])), "%s moved", names[i]);
    PT_CHECK(sy_session_copy_count(r3.s) == sy_session_copy_count(r1.s), "copy count changed");
    expect_reference(&r3, 2, "npu first, seed 2");
    sy_session_release(r3.s);
done:
    sy_session_release(r1.s);
    sy_session_release(r2.s);
    sy_model_release(m1);
    sy_model_release(m2);
    sy_env_release(e1);
    sy_env_release(e2);
    pt_model_free(m);
}

/* ---- op subset option and dtype decline ------------------------------------ */
static void test_options_change_placement(void)
{
    pt_model *m = part_model();
    run_result r1 = {0}, r2 = {0};
    sy_env *e1 = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\nops = Mul\n");
    sy_env *e2 = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\ndecline_dtype = float32\n");
    sy_model *m1 = e1 ? pt_load(e1, m) : NULL, *m2 = e2 ? pt_load(e2, m) : NULL;
    PT_REQUIRE(m1 && m2, "setup");
    PT_REQUIRE(!pt_msg(run_once(e1, m1, NULL, 3, &r1))[0], "ops = Mul session");
    PT_CHECK(!strcmp(provider_of(r1.s, "mul0"), "test_npu"), "mul0 on %s", provider_of(r1.s, "mul0"));
    PT_CHECK(!strcmp(provider_of(r1.s, "add0"), "cpu_ref"), "add0 on %s", provider_of(r1.s, "add0"));
    sy_node_placement p;
    PT_CHECK(placement(r1.s, "add1", &p) && !strcmp(p.provider, "cpu_ref"), "add1 on %s", p.provider);
    PT_HAS(p.reason_text, "op Add is outside the configured subset (ops = Mul)");
    expect_reference(&r1, 3, "ops = Mul");

    PT_REQUIRE(!pt_msg(run_once(e2, m2, NULL, 3, &r2))[0], "decline_dtype session");
    PT_CHECK(placement(r2.s, "add0", &p) && !strcmp(p.provider, "cpu_ref"), "add0 on %s", p.provider);
    PT_HAS(p.reason_text, "decline_dtype = float32");
    PT_CHECK(sy_session_copy_count(r2.s) == 0, "%zu copies", sy_session_copy_count(r2.s));
done:
    sy_session_release(r1.s);
    sy_session_release(r2.s);
    sy_model_release(m1);
    sy_model_release(m2);
    sy_env_release(e1);
    sy_env_release(e2);
    pt_model_free(m);
}

/* ---- fallback: cpu_ref loaded but not in `providers` -------------------------- */
static void test_fallback(void)
{
    pt_model *m = part_model();
    run_result r = {0};
    sy_env *env = pt_env("providers = test_npu\n");
    sy_model *model = env ? pt_load(env, m) : NULL;
    PT_REQUIRE(model, "setup");
    PT_REQUIRE(sy_env_provider_count(env) == 1, "%zu providers in the priority list", sy_env_provider_count(env));
    PT_REQUIRE(!pt_msg(run_once(env, model, NULL, 4, &r))[0], "session");
    sy_node_placement p;
    static const char *const fb[] = {"sub0", "neg0"};
    for (int i = 0; i < 2; i++) {
        PT_CHECK(placement(r.s, fb[i], &p), "%s not found", fb[i]);
        PT_CHECK(p.provider && !strcmp(p.provider, "cpu_ref"), "%s on %s", fb[i], p.provider);
        PT_CHECK(p.reason == SY_REASON_FALLBACK, "%s reason %s", fb[i], sy_reason_name(p.reason));
        PT_HAS(p.reason_text, i ? "test_npu: [no-kernel] no test_npu kernel for Neg" : "test_npu: [no-kernel] no test_npu kernel for Sub");
    }
    PT_CHECK(placement(r.s, "mul0", &p) && p.reason == SY_REASON_TAKEN && !strcmp(p.provider, "test_npu"),
             "mul0 %s/%s", p.provider, sy_reason_name(p.reason));
    expect_reference(&r, 4, "fallback");
done:
    sy_session_release(r.s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(m);
}

/* ---- strict mode --------------------------------------------------------------- */
static void test_strict(void)
{
    pt_model *m = part_model();
    sy_session *s = NULL;
    sy_env *env = pt_env("providers = test_npu\nstrict = true\n[provider.test_npu]\nops = Add\n");
    sy_env *env2 = pt_env("providers = test_npu\n");
    sy_model *model = env ? pt_load(env, m) : NULL, *model2 = env2 ? pt_load(env2, m) : NULL;
    PT_REQUIRE(model && model2, "setup");
    sy_status *st = sy_session_create(env, model, NULL, &s);
    PT_REQUIRE(st != NULL, "strict session with unplaceable nodes was created");
    PT_CHECK(sy_status_get_code(st) == SY_ERR_NOT_IMPLEMENTED, "code %s", sy_status_code_name(sy_status_get_code(st)));
    const char *msg = pt_msg(st);
    /* every unplaced node, each with test_npu's reason; the placed ones not */
    PT_HAS(msg, "'sub0'");
    PT_HAS(msg, "'mul0'");
    PT_HAS(msg, "'neg0'");
    /* no kernel (the core's check) and outside the subset (check_node's) */
    PT_HAS(msg, "test_npu: [no-kernel] no test_npu kernel for Sub");
    PT_HAS(msg, "test_npu: [op-unsupported] op Mul is outside the configured subset (ops = Add)");
    PT_HAS(msg, "test_npu: [no-kernel] no test_npu kernel for Neg");
    PT_CHECK(!strstr(msg, "'add0'") && !strstr(msg, "'add1'"), "placed nodes named: %s", msg);
    PT_CHECK(s == NULL, "output set on failure");

    /* the session option overrides the INI both ways */
    sy_session_options o = {.struct_size = sizeof o, .threads = 0, .strict = 0, .profiling = false};
    st = sy_session_create(env, model, &o, &s);
    PT_CHECK(st == NULL, "strict = 0 override failed: %s", pt_msg(st));
    sy_session_release(s);
    s = NULL;
    o.strict = 1;
    st = sy_session_create(env2, model2, &o, &s);
    PT_CHECK(st != NULL, "strict = 1 override still fell back");
    msg = pt_msg(st);
    PT_HAS(msg, "'sub0'");
    PT_HAS(msg, "'neg0'");
    PT_CHECK(!strstr(msg, "'mul0'"), "mul0 is in the default subset: %s", msg);
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_model_release(model2);
    sy_env_release(env);
    sy_env_release(env2);
    pt_model_free(m);
}

/* ---- copies ---------------------------------------------------------------------- */
static void check_copies(bool can_copy)
{
    pt_model *m = part_model();
    run_result r = {0};
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\ncan_copy = %s\n",
                         can_copy ? "true" : "false");
    sy_model *model = env ? pt_load(env, m) : NULL;
    PT_REQUIRE(model, "setup");
    PT_REQUIRE(!pt_msg(run_once(env, model, NULL, 5, &r))[0], "session");
    /* expected: x, y -> npu (add0); a -> host (sub0); b -> npu ONCE (mul0 reads
     * it twice, add1 again); d -> host (neg0). c stays on the npu (output). */
    size_t nc = sy_session_copy_count(r.s);
    PT_CHECK(nc == 5, "%zu copies, expected 5", nc);
    sy_copy_info ci;
    PT_CHECK(copies_of(r.s, "x", "npu_sram", NULL) == 1, "x copies %d", copies_of(r.s, "x", "npu_sram", NULL));
    PT_CHECK(copies_of(r.s, "y", "npu_sram", NULL) == 1, "y copies");
    PT_CHECK(copies_of(r.s, "a", "host", NULL) == 1, "a copies");
    PT_CHECK(copies_of(r.s, "b", "npu_sram", &ci) == 1, "b copied %d times to npu_sram",
             copies_of(r.s, "b", "npu_sram", NULL));
    PT_CHECK(!strcmp(ci.consumer, "mul0") && !strcmp(ci.src_domain, "host") && ci.bytes == N * sizeof(float),
             "b copy: consumer %s, src %s, %zu bytes", ci.consumer, ci.src_domain, ci.bytes);
    PT_CHECK(copies_of(r.s, "d", "host", NULL) == 1, "d copies");
    PT_CHECK(copies_of(r.s, "c", "host", NULL) == 0, "c is only read on the npu");
    size_t copy_bytes = 0;
    for (size_t i = 0; i < nc; i++) {
        ci = (sy_copy_info){.struct_size = sizeof ci};
        PT_CHECK(sy_session_copy_info(r.s, i, &ci), "copy_info %zu", i);
        copy_bytes += ci.bytes;
        if (can_copy)
            PT_CHECK(ci.via && !strcmp(ci.via, "test_npu"), "copy of %s via %s", ci.value, ci.via ? ci.via : "bounce");
        else
            PT_CHECK(ci.via == NULL, "copy of %s via %s with can_copy = false", ci.value, ci.via);
    }
    uint64_t bc = 99, bb = 99;
    sy_session_bounce_stats(r.s, &bc, &bb);
    if (can_copy) {
        PT_CHECK(bc == 0 && bb == 0, "%llu bounces (%llu bytes) with can_copy", (unsigned long long)bc,
                 (unsigned long long)bb);
    } else {
        PT_CHECK(bc == nc && bb == copy_bytes, "after one run: %llu bounces, %llu bytes; expected %zu, %zu",
                 (unsigned long long)bc, (unsigned long long)bb, nc, copy_bytes);
        PT_CHECK(sy_session_run(r.s) == NULL, "second run");
        sy_session_bounce_stats(r.s, &bc, &bb);
        PT_CHECK(bc == 2 * nc && bb == 2 * copy_bytes, "after two runs: %llu bounces", (unsigned long long)bc);
    }
    expect_reference(&r, 5, can_copy ? "pairwise copies" : "host bounce");
    /* the npu domain has its own arena, aligned to 128 */
    bool found = false;
    for (size_t d = 0; d < sy_session_memory_domain_count(r.s); d++) {
        sy_memory_report mr = {.struct_size = sizeof mr};
        if (!sy_session_memory_report(r.s, d, &mr) || strcmp(mr.domain, "npu_sram"))
            continue;
        found = true;
        PT_CHECK(mr.arena_bytes > 0 && mr.arena_bytes % 128 == 0, "npu_sram arena %zu", mr.arena_bytes);
        PT_CHECK(mr.copies == 3 * N * sizeof(float), "npu_sram copies %zu bytes (x, y, b)", mr.copies);
        PT_CHECK(mr.lower_bound <= mr.arena_bytes && mr.arena_bytes <= mr.naive_bytes, "lb %zu arena %zu naive %zu",
                 mr.lower_bound, mr.arena_bytes, mr.naive_bytes);
    }
    PT_CHECK(found, "no npu_sram memory report");
    const sy_tensor *tc = NULL;
    PT_CHECK(sy_session_get_output_by_name(r.s, "c", &tc) == NULL && tc && ((uintptr_t)tc->data % 128) == 0,
             "output c (on npu_sram) at %p is not 128-aligned", tc ? tc->data : NULL);
done:
    sy_session_release(r.s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(m);
}

static void test_copies_pairwise(void) { check_copies(true); }
static void test_copies_host_bounce(void) { check_copies(false); }

/* ---- same results as an all-cpu_ref run, over several inputs ------------------- */
static void test_results_match_cpu_ref(void)
{
    pt_model *m = part_model();
    sy_env *e1 = pt_env("providers = test_npu, cpu_ref\n");
    sy_env *e2 = pt_env("providers = cpu_ref\n");
    sy_model *m1 = e1 ? pt_load(e1, m) : NULL, *m2 = e2 ? pt_load(e2, m) : NULL;
    PT_REQUIRE(m1 && m2, "setup");
    for (int seed = 10; seed < 14; seed++) {
        run_result a, b;
        sy_status *st = run_once(e1, m1, NULL, seed, &a);
        PT_CHECK(!st, "npu run: %s", pt_msg(st));
        st = run_once(e2, m2, NULL, seed, &b);
        PT_CHECK(!st, "cpu run: %s", pt_msg(st));
        PT_CHECK(a.ok && b.ok && !memcmp(a.e, b.e, sizeof a.e) && !memcmp(a.c, b.c, sizeof a.c),
                 "seed %d: npu placement differs from all-cpu_ref", seed);
        PT_CHECK(sy_session_copy_count(a.s) == 5 && sy_session_copy_count(b.s) == 0, "copies %zu / %zu",
                 sy_session_copy_count(a.s), sy_session_copy_count(b.s));
        sy_session_release(a.s);
        sy_session_release(b.s);
    }
done:
    sy_model_release(m1);
    sy_model_release(m2);
    sy_env_release(e1);
    sy_env_release(e2);
    pt_model_free(m);
}

/* ---- Relu runs on the npu when some plugin defines its schema ------------------- */
static void test_relu_on_npu(void)
{
    sy_env *env = pt_env("providers = test_npu, cpu_ref\n");
    if (!env)
        return;
    if (!sy_env_has_op(env, "", "Relu", 13)) {
        printf("     (no plugin defines Relu yet: Relu case not run)\n");
        sy_env_release(env);
        return;
    }
    pt_model *m = pt_model_new("relu");
    pt_input(m, "x", PT_F32, 2, DIMS);
    pt_node(m, "Relu", "relu0", (const char *[]){"x", NULL}, (const char *[]){"r", NULL});
    pt_output(m, "r", PT_F32, 2, DIMS);
    sy_model *model = pt_load(env, m);
    sy_session *s = NULL;
    PT_REQUIRE(model, "load");
    PT_REQUIRE(!pt_msg(sy_session_create(env, model, NULL, &s))[0], "session");
    PT_CHECK(!strcmp(provider_of(s, "relu0"), "test_npu"), "relu0 on %s", provider_of(s, "relu0"));
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i - 7.5f;
    sy_tensor tx = pt_tensor_f32(x, 2, DIMS);
    const sy_tensor *tr = NULL;
    PT_REQUIRE(!sy_session_set_input(s, "x", &tx, SY_INPUT_COPY) && !sy_session_run(s) &&
                   !sy_session_get_output(s, 0, &tr),
               "run");
    for (int i = 0; i < N; i++)
        PT_CHECK(((const float *)tr->data)[i] == (x[i] > 0 ? x[i] : 0.0f), "relu[%d]", i);
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(m);
}

/* ---- capacity of npu_sram ------------------------------------------------------- */
static void test_capacity(void)
{
    pt_model *m = part_model();
    sy_session *s = NULL;
    /* each [2, 8] float tensor takes 64 bytes, 128 with the domain's alignment;
     * add0 alone needs its two input copies and its output live at once */
    sy_env *small = pt_env("providers = test_npu, cpu_ref\n[plugin.test_npu]\ncapacity = 256\n");
    sy_env *big = pt_env("providers = test_npu, cpu_ref\n[plugin.test_npu]\ncapacity = 65536\n");
    sy_model *ms = small ? pt_load(small, m) : NULL, *mb = big ? pt_load(big, m) : NULL;
    PT_REQUIRE(ms && mb, "setup");
    sy_status *st = sy_session_create(small, ms, NULL, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_BUDGET, "expected SY_ERR_BUDGET, got %s",
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    PT_HAS(pt_msg(st), "npu_sram");
    PT_CHECK(s == NULL, "session set on failure");
    sy_session_release(s);
    s = NULL;
    st = sy_session_create(big, mb, NULL, &s);
    PT_CHECK(st == NULL, "64 KiB is enough: %s", pt_msg(st));
    for (size_t d = 0; s && d < sy_session_memory_domain_count(s); d++) {
        sy_memory_report mr = {.struct_size = sizeof mr};
        if (sy_session_memory_report(s, d, &mr) && !strcmp(mr.domain, "npu_sram"))
            PT_CHECK(mr.arena_bytes > 256 && mr.arena_bytes <= 65536, "npu_sram arena %zu", mr.arena_bytes);
    }
done:
    sy_session_release(s);
    sy_model_release(ms);
    sy_model_release(mb);
    sy_env_release(small);
    sy_env_release(big);
    pt_model_free(m);
}

int main(void)
{
    PT_RUN(test_priority_order);
    PT_RUN(test_options_change_placement);
    PT_RUN(test_fallback);
    PT_RUN(test_strict);
    PT_RUN(test_copies_pairwise);
    PT_RUN(test_copies_host_bounce);
    PT_RUN(test_results_match_cpu_ref);
    PT_RUN(test_relu_on_npu);
    PT_RUN(test_capacity);
    return pt_result();
}
