/*
 * Outputs planned at a bound (ABI 1.6, host->node_bound_output): a Unique
 * whose outputs no node reads is planned statically, its Y, indices and
 * counts at the bound (one per input item), and each run reports its own
 * count; the bound comes back before the next run, so a run with more
 * unique values than the last one still fits. A Unique whose Y another node
 * reads keeps the node-by-node mode (the data is in hand when Neg's shape
 * is inferred). The expected values are worked out by hand from ONNX's
 * definition of Unique (sorted = 1: ascending; indices: first occurrence;
 * inverse_indices: per item, the position of its value in Y; counts).
 *
 * "unique":     x [8] -> Unique -> y, indices, inverse_indices, counts (all graph outputs)
 * "unique_neg": x [8] -> Unique -> y -> Neg -> z; indices a graph output
 * "unique_rows": x [4, 2] -> Unique(axis = 0) -> y, indices, inverse_indices, counts
 */
#include "pt_common.h"

#include <stdint.h>

static const int64_t D8[1] = {8};

/* a graph output without a declared shape (Unique's length is the run's) */
static void output_any(pt_model *m, const char *name, int elem)
{
    pt_output(m, name, elem, 0, NULL);
    m->graph.output[m->graph.n_output - 1]->type->tensor_type->shape = NULL;
}

static pt_model *unique_model(const char *name, bool neg, bool rows)
{
    pt_model *m = pt_model_new(name);
    if (rows)
        pt_input(m, "x", PT_F32, 2, (const int64_t[]){4, 2});
    else
        pt_input(m, "x", PT_F32, 1, D8);
    if (neg) {
        pt_node(m, "Unique", "uq", (const char *[]){"x", NULL}, (const char *[]){"y", "indices", NULL});
        pt_node(m, "Neg", "neg", (const char *[]){"y", NULL}, (const char *[]){"z", NULL});
        output_any(m, "z", PT_F32);
        output_any(m, "indices", PT_I64);
        return m;
    }
    pt_node(m, "Unique", "uq", (const char *[]){"x", NULL},
            (const char *[]){"y", "indices", "inverse_indices", "counts", NULL});
    if (rows)
        pt_attr_int(m, "axis", 0);
    output_any(m, "y", PT_F32);
    output_any(m, "indices", PT_I64);
    output_any(m, "inverse_indices", PT_I64);
    output_any(m, "counts", PT_I64);
    return m;
}

static size_t host_arena(const sy_session *s)
{
    sy_memory_report r = {.struct_size = sizeof r};
    return sy_session_memory_report(s, 0, &r) ? r.arena_bytes : 0;
}

static void expect_f32(sy_session *s, size_t o, int32_t rank, const int64_t *dims, const float *want)
{
    const sy_tensor *t = NULL;
    sy_status *st = sy_session_get_output(s, o, &t);
    PT_CHECK(!st && t, "output %zu: %s", o, pt_msg(st));
    if (!t)
        return;
    int64_t n = 1;
    PT_CHECK(t->rank == rank, "output %zu: rank %d, want %d", o, t->rank, rank);
    for (int32_t d = 0; d < rank && d < t->rank; d++) {
        PT_CHECK(t->dims[d] == dims[d], "output %zu dim %d: %lld, want %lld", o, d, (long long)t->dims[d],
                 (long long)dims[d]);
        n *= dims[d];
    }
    PT_CHECK(t->nbytes == (size_t)n * 4, "output %zu: %zu bytes, want %lld", o, t->nbytes, (long long)n * 4);
    for (int64_t i = 0; i < n && t->nbytes == (size_t)n * 4; i++)
        PT_CHECK(((const float *)t->data)[i] == want[i], "output %zu [%lld]: %g, want %g", o, (long long)i,
                 (double)((const float *)t->data)[i], (double)want[i]);
}

static void expect_i64(sy_session *s, size_t o, int64_t n, const int64_t *want)
{
    const sy_tensor *t = NULL;
    sy_status *st = sy_session_get_output(s, o, &t);
    PT_CHECK(!st && t, "output %zu: %s", o, pt_msg(st));
    if (!t)
        return;
    PT_CHECK(t->rank == 1 && t->dims[0] == n, "output %zu: rank %d dim %lld, want [%lld]", o, t->rank,
             (long long)t->dims[0], (long long)n);
    PT_CHECK(t->nbytes == (size_t)n * 8, "output %zu: %zu bytes, want %lld", o, t->nbytes, (long long)n * 8);
    for (int64_t i = 0; i < n && t->nbytes == (size_t)n * 8; i++)
        PT_CHECK(((const int64_t *)t->data)[i] == want[i], "output %zu [%lld]: %lld, want %lld", o, (long long)i,
                 (long long)((const int64_t *)t->data)[i], (long long)want[i]);
}

/* env, model and session of pm on the partition tests' plugins; false (and a failure counted) if any fails */
static bool open_session(pt_model *pm, sy_env **env, sy_model **model, sy_session **s)
{
    *env = pt_env("%s", "");
    *model = *env ? pt_load(*env, pm) : NULL;
    *s = NULL;
    if (!*model)
        return false;
    sy_status *st = sy_session_create(*env, *model, NULL, s);
    PT_CHECK(!st, "session: %s", pt_msg(st));
    return *s != NULL;
}

static sy_status *run_with(sy_session *s, float *x, int32_t rank, const int64_t *dims)
{
    sy_tensor t = pt_tensor_f32(x, rank, dims);
    sy_status *st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
    return st ? st : sy_session_run(s);
}

/* three runs: 3 values, then 8 (more than the last run: the bound is back), then 1 */
static void test_terminal_outputs_static(void)
{
    pt_model *pm = unique_model("unique", false, false);
    sy_env *env;
    sy_model *model;
    sy_session *s;
    sy_status *st;
    PT_REQUIRE(open_session(pm, &env, &model, &s), "setup");
    /* planned at creation: Y (8 floats), indices, inverse, counts (8 int64 each) live in the arena */
    PT_CHECK(host_arena(s) >= 32 + 3 * 64, "a static plan holds the outputs at their bound: arena %zu bytes",
             host_arena(s));

    float x1[8] = {3, 1, 3, 3, 1, 2, 2, 3};
    st = run_with(s, x1, 1, D8);
    PT_REQUIRE(!st, "run 1: %s", pt_msg(st));
    expect_f32(s, 0, 1, (const int64_t[]){3}, (const float[]){1, 2, 3});
    expect_i64(s, 1, 3, (const int64_t[]){1, 5, 0});
    expect_i64(s, 2, 8, (const int64_t[]){2, 0, 2, 2, 0, 1, 1, 2});
    expect_i64(s, 3, 3, (const int64_t[]){2, 2, 4});

    float x2[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    st = run_with(s, x2, 1, D8);
    PT_REQUIRE(!st, "run 2: %s", pt_msg(st));
    expect_f32(s, 0, 1, (const int64_t[]){8}, (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
    expect_i64(s, 1, 8, (const int64_t[]){7, 6, 5, 4, 3, 2, 1, 0});
    expect_i64(s, 2, 8, (const int64_t[]){7, 6, 5, 4, 3, 2, 1, 0});
    expect_i64(s, 3, 8, (const int64_t[]){1, 1, 1, 1, 1, 1, 1, 1});

    float x3[8] = {5, 5, 5, 5, 5, 5, 5, 5};
    st = run_with(s, x3, 1, D8);
    PT_REQUIRE(!st, "run 3: %s", pt_msg(st));
    expect_f32(s, 0, 1, (const int64_t[]){1}, (const float[]){5});
    expect_i64(s, 1, 1, (const int64_t[]){0});
    expect_i64(s, 3, 1, (const int64_t[]){8});
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(pm);
}

/* Y read by Neg: node by node (no arena), the same values */
static void test_read_output_dynamic(void)
{
    pt_model *pm = unique_model("unique_neg", true, false);
    sy_env *env;
    sy_model *model;
    sy_session *s;
    sy_status *st;
    PT_REQUIRE(open_session(pm, &env, &model, &s), "setup");
    PT_CHECK(host_arena(s) == 0, "a Unique read by another node keeps the node-by-node mode: arena %zu bytes",
             host_arena(s));
    float x1[8] = {3, 1, 3, 3, 1, 2, 2, 3};
    st = run_with(s, x1, 1, D8);
    PT_REQUIRE(!st, "run: %s", pt_msg(st));
    expect_f32(s, 0, 1, (const int64_t[]){3}, (const float[]){-1, -2, -3});
    expect_i64(s, 1, 3, (const int64_t[]){1, 5, 0});
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(pm);
}

/* axis 0: Y's rows shrink along the axis, the row length stays */
static void test_axis_rows(void)
{
    pt_model *pm = unique_model("unique_rows", false, true);
    sy_env *env;
    sy_model *model;
    sy_session *s;
    sy_status *st;
    PT_REQUIRE(open_session(pm, &env, &model, &s), "setup");
    PT_CHECK(host_arena(s) > 0, "static plan: arena %zu bytes", host_arena(s));
    const int64_t d42[2] = {4, 2};
    float x[8] = {1, 2, 3, 4, 1, 2, 0, 0};
    st = run_with(s, x, 2, d42);
    PT_REQUIRE(!st, "run: %s", pt_msg(st));
    expect_f32(s, 0, 2, (const int64_t[]){3, 2}, (const float[]){0, 0, 1, 2, 3, 4});
    expect_i64(s, 1, 3, (const int64_t[]){3, 0, 1});
    expect_i64(s, 2, 4, (const int64_t[]){1, 2, 1, 0});
    expect_i64(s, 3, 3, (const int64_t[]){1, 2, 1});
    float same[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    st = run_with(s, same, 2, d42);
    PT_REQUIRE(!st, "run 2: %s", pt_msg(st));
    expect_f32(s, 0, 2, (const int64_t[]){1, 2}, (const float[]){7, 7});
    expect_i64(s, 3, 1, (const int64_t[]){4});
done:
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    pt_model_free(pm);
}

int main(void)
{
    PT_RUN(test_terminal_outputs_static);
    PT_RUN(test_read_output_dynamic);
    PT_RUN(test_axis_rows);
    return pt_result();
}
