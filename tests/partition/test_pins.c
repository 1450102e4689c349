/*
 * Pinned offsets (host->node_pin_output): test_npu's `pin_mul` pins every Mul
 * output at a byte offset of npu_sram. The planner must honour the pin (the
 * arena grows to hold it, results stay right), refuse a pin that breaks the
 * domain's alignment, and refuse two pins on the same bytes while both
 * buffers are live.
 *
 * "pins" model: x, y [2, 8]
 *   m1 = Mul(x, y); m2 = Mul(x, x); z = Add(m1, m2)   all on test_npu
 */
#include "pt_common.h"

#include <stdint.h>

#define N 16
static const int64_t DIMS[2] = {2, 8};

static pt_model *pins_model(void)
{
    pt_model *m = pt_model_new("pins");
    pt_input(m, "x", PT_F32, 2, DIMS);
    pt_input(m, "y", PT_F32, 2, DIMS);
    pt_node(m, "Mul", "m1", (const char *[]){"x", "y", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Mul", "m2", (const char *[]){"x", "x", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Add", "add", (const char *[]){"a", "b", NULL}, (const char *[]){"z", NULL});
    pt_output(m, "z", PT_F32, 2, DIMS);
    return m;
}

static sy_status *create(const char *extra, pt_model *pm, sy_env **env, sy_model **model, sy_session **s)
{
    *env = pt_env("providers = test_npu, cpu_ref\n[provider.test_npu]\n%s", extra);
    *model = *env ? pt_load(*env, pm) : NULL;
    if (!*model)
        return sy_status_create(SY_ERR_INTERNAL, "setup failed");
    return sy_session_create(*env, *model, NULL, s);
}

static size_t npu_arena(const sy_session *s)
{
    for (size_t d = 0; d < sy_session_memory_domain_count(s); d++) {
        sy_memory_report r = {.struct_size = sizeof r};
        if (sy_session_memory_report(s, d, &r) && !strcmp(r.domain, "npu_sram"))
            return r.arena_bytes;
    }
    return 0;
}

static void test_pin_honoured(void)
{
    pt_model *pm = pins_model();
    sy_env *env = NULL, *env0 = NULL;
    sy_model *model = NULL, *model0 = NULL;
    sy_session *s = NULL, *s0 = NULL;
    /* a model with one Mul, pinned far out in npu_sram */
    pt_model *one = pt_model_new("pin_one");
    pt_input(one, "x", PT_F32, 2, DIMS);
    pt_node(one, "Mul", "m", (const char *[]){"x", "x", NULL}, (const char *[]){"a", NULL});
    pt_node(one, "Add", "add", (const char *[]){"a", "x", NULL}, (const char *[]){"z", NULL});
    pt_output(one, "z", PT_F32, 2, DIMS);
    const char *e = pt_msg(create("pin_mul = 65536\n", one, &env, &model, &s));
    PT_REQUIRE(!e[0], "pinned session: %s", e);
    e = pt_msg(create("ops = Add,Mul\n", one, &env0, &model0, &s0));
    PT_REQUIRE(!e[0], "unpinned session: %s", e);
    PT_CHECK(npu_arena(s) >= 65536 + N * sizeof(float), "arena %zu holds the pinned buffer at 65536", npu_arena(s));
    PT_CHECK(npu_arena(s0) < 65536, "without the pin the arena is small (%zu)", npu_arena(s0));
    float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i * 0.5f - 3.0f;
    sy_tensor tx = pt_tensor_f32(x, 2, DIMS);
    const sy_tensor *z = NULL;
    PT_REQUIRE(!pt_msg(sy_session_set_input(s, "x", &tx, SY_INPUT_COPY))[0] && !pt_msg(sy_session_run(s))[0] &&
                   !pt_msg(sy_session_get_output(s, 0, &z))[0],
               "run");
    for (int i = 0; i < N; i++)
        PT_CHECK(((const float *)z->data)[i] == x[i] * x[i] + x[i], "z[%d]", i);
done:
    sy_session_release(s);
    sy_session_release(s0);
    sy_model_release(model);
    sy_model_release(model0);
    sy_env_release(env);
    sy_env_release(env0);
    pt_model_free(one);
    pt_model_free(pm);
}

static void test_pin_refused(void)
{
    pt_model *pm = pins_model();
    sy_env *env = NULL;
    sy_model *model = NULL;
    sy_session *s = NULL;
    /* npu_sram is 128-aligned */
    sy_status *st = create("pin_mul = 100\n", pm, &env, &model, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_ARGUMENT, "misaligned pin refused, got %s",
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    PT_HAS(pt_msg(st), "not a multiple of its alignment 128");
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    s = NULL, model = NULL, env = NULL;
    /* m1 and m2 pinned to the same bytes while both live (until add) */
    st = create("pin_mul = 4096\n", pm, &env, &model, &s);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_ARGUMENT, "overlapping pins refused, got %s",
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    const char *msg = pt_msg(st);
    PT_HAS(msg, "pinned to overlapping bytes");
    PT_HAS(msg, "'a'");
    PT_HAS(msg, "'b'");
    PT_CHECK(s == NULL, "no session");
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(pm);
}

int main(void)
{
    PT_RUN(test_pin_honoured);
    PT_RUN(test_pin_refused);
    return pt_result();
}
