/*
 * sy_ss_resolve (the SDK's STRIDED_SLICE rules, shared by the TFLite
 * families, riscv_mcu and the training translator) on cases worked out by
 * hand from TF's documented rules (tf.strided_slice: an ellipsis stands for
 * the axes the other entries leave, a new axis consumes none, trailing axes
 * are taken whole, begin/end clamp to the axis, a shrink takes one element),
 * TFLite's offset option (ends counted from their begins), and its
 * refusals, among them an output past SY_MAX_RANK axes that once
 * wrote past the plan's arrays.
 */
#include "switchyard/sy_sdk.h"
#include "sy_test.h"

static sy_status_code run(int32_t rank, const int64_t *dims, sy_ss_spec s, sy_ss_plan *p, char *why)
{
    return sy_ss_resolve(rank, dims, &s, p, why, 160);
}

static void expect_plan(const char *what, const sy_ss_plan *p, int32_t rank, const int64_t *start, const int64_t *step,
                        const int64_t *len, int32_t out_rank, const int64_t *out, uint32_t new_axes, uint32_t shrunk)
{
    CHECK(p->rank == rank, "%s: rank %d", what, p->rank);
    for (int32_t d = 0; d < rank; d++) {
        CHECK(p->start[d] == start[d] && p->step[d] == step[d] && p->len[d] == len[d],
              "%s: axis %d: start %lld step %lld len %lld, want %lld %lld %lld", what, d, (long long)p->start[d],
              (long long)p->step[d], (long long)p->len[d], (long long)start[d], (long long)step[d], (long long)len[d]);
        CHECK(p->shrunk[d] == (bool)(shrunk >> d & 1), "%s: axis %d shrunk %d", what, d, p->shrunk[d]);
    }
    CHECK(p->out_rank == out_rank, "%s: out rank %d, want %d", what, p->out_rank, out_rank);
    for (int32_t j = 0; j < out_rank && j < p->out_rank; j++) {
        CHECK(p->out_dims[j] == out[j], "%s: out dim %d is %lld, want %lld", what, j, (long long)p->out_dims[j],
              (long long)out[j]);
        CHECK(p->new_axis[j] == (bool)(new_axes >> j & 1), "%s: out axis %d new %d", what, j, p->new_axis[j]);
    }
}

static void test_hand_worked(void)
{
    sy_ss_plan p;
    char why[160] = "";
    /* x[..., 1:5:2] of [2, 3, 4, 5]: the ellipsis is axes 0-2 */
    {
        static const int64_t dims[] = {2, 3, 4, 5}, b[] = {0, 1}, e[] = {0, 5}, s[] = {1, 2};
        sy_status_code c = run(4, dims, (sy_ss_spec){.n = 2, .begin = b, .end = e, .strides = s, .ellipsis_mask = 1},
                               &p, why);
        CHECK(c == SY_OK, "x[..., 1:5:2]: %s", why);
        expect_plan("x[..., 1:5:2]", &p, 4, (int64_t[]){0, 0, 0, 1}, (int64_t[]){1, 1, 1, 2}, (int64_t[]){2, 3, 4, 2},
                    4, (int64_t[]){2, 3, 4, 2}, 0, 0);
    }
    /* x[1, 2:4, None, ..., :-3:-1, :] of [9, 8, 7, 6, 5, 4]: four entries
     * take axes, so the ellipsis is axes 2-3; :-3:-1 on 5 runs 4, 3 */
    {
        static const int64_t dims[] = {9, 8, 7, 6, 5, 4};
        static const int64_t b[] = {1, 2, 0, 0, 0, 0}, e[] = {2, 4, 0, 0, -3, 0}, s[] = {1, 1, 1, 1, -1, 1};
        sy_ss_spec sp = {.n = 6, .begin = b, .end = e, .strides = s, .begin_mask = 1 << 4 | 1 << 5,
                         .end_mask = 1 << 5, .ellipsis_mask = 1 << 3, .new_axis_mask = 1 << 2,
                         .shrink_axis_mask = 1 << 0};
        sy_status_code c = run(6, dims, sp, &p, why);
        CHECK(c == SY_OK, "the TF example: %s", why);
        expect_plan("x[1, 2:4, None, ..., :-3:-1, :]", &p, 6, (int64_t[]){1, 2, 0, 0, 4, 0},
                    (int64_t[]){1, 1, 1, 1, -1, 1}, (int64_t[]){1, 2, 7, 6, 2, 4}, 6, (int64_t[]){2, 1, 7, 6, 2, 4},
                    1u << 1, 1u << 0);
    }
    /* x[1:3] of [4, 5]: the trailing axis whole; x[-100:100] clamps */
    {
        static const int64_t dims[] = {4, 5}, b[] = {1}, e[] = {3}, s[] = {1};
        CHECK(run(2, dims, (sy_ss_spec){.n = 1, .begin = b, .end = e, .strides = s}, &p, why) == SY_OK, "%s", why);
        expect_plan("x[1:3]", &p, 2, (int64_t[]){1, 0}, (int64_t[]){1, 1}, (int64_t[]){2, 5}, 2, (int64_t[]){2, 5}, 0,
                    0);
        static const int64_t b2[] = {-100, 100}, e2[] = {100, -100}, s2[] = {1, -1};
        CHECK(run(2, dims, (sy_ss_spec){.n = 2, .begin = b2, .end = e2, .strides = s2}, &p, why) == SY_OK, "%s", why);
        expect_plan("x[-100:100, 100:-100:-1]", &p, 2, (int64_t[]){0, 4}, (int64_t[]){1, -1}, (int64_t[]){4, 5}, 2,
                    (int64_t[]){4, 5}, 0, 0);
    }
    /* x[None, ...] of [3]: a new axis first; an empty range has length 0 */
    {
        static const int64_t dims[] = {3}, b[] = {0, 0}, e[] = {0, 0}, s[] = {1, 1};
        CHECK(run(1, dims, (sy_ss_spec){.n = 2, .begin = b, .end = e, .strides = s, .new_axis_mask = 1,
                                        .ellipsis_mask = 2}, &p, why) == SY_OK, "%s", why);
        expect_plan("x[None, ...]", &p, 1, (int64_t[]){0}, (int64_t[]){1}, (int64_t[]){3}, 2, (int64_t[]){1, 3}, 1, 0);
        static const int64_t b2[] = {2}, e2[] = {1}, s2[] = {1};
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b2, .end = e2, .strides = s2}, &p, why) == SY_OK, "%s", why);
        expect_plan("x[2:1]", &p, 1, (int64_t[]){2}, (int64_t[]){1}, (int64_t[]){0}, 1, (int64_t[]){0}, 0, 0);
    }
    /* x[1::INT64_MAX] and x[3::INT64_MIN] of [5]: one element each, the
     * count taken without overflow */
    {
        static const int64_t dims[] = {5}, b[] = {1}, b2[] = {3}, e[] = {0}, s[] = {INT64_MAX}, s2[] = {INT64_MIN};
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b, .end = e, .strides = s, .end_mask = 1}, &p, why) == SY_OK,
              "%s", why);
        expect_plan("x[1::INT64_MAX]", &p, 1, (int64_t[]){1}, (int64_t[]){INT64_MAX}, (int64_t[]){1}, 1,
                    (int64_t[]){1}, 0, 0);
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b2, .end = e, .strides = s2, .end_mask = 1}, &p, why) ==
                  SY_OK, "%s", why);
        expect_plan("x[3::INT64_MIN]", &p, 1, (int64_t[]){3}, (int64_t[]){INT64_MIN}, (int64_t[]){1}, 1,
                    (int64_t[]){1}, 0, 0);
    }
}

/* TFLite's offset = true: each end counts from its begin as resolved
 * (StridedSliceEndForAxis: end += start, then the end's own negative wrap,
 * clamp and end_mask) */
static void test_offset(void)
{
    sy_ss_plan p;
    char why[160] = "";
    /* [4, 5], begin [1, -4], end [2, 3]: axis 0 runs 1 to 1 + 2 = 3 (1, 2);
     * axis 1's -4 is 1, its end 1 + 3 = 4 (1, 2, 3) */
    {
        static const int64_t dims[] = {4, 5}, b[] = {1, -4}, e[] = {2, 3}, s[] = {1, 1};
        CHECK(run(2, dims, (sy_ss_spec){.n = 2, .begin = b, .end = e, .strides = s, .offset = true}, &p, why) == SY_OK,
              "%s", why);
        expect_plan("offset [1:+2, -4:+3]", &p, 2, (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){2, 3}, 2,
                    (int64_t[]){2, 3}, 0, 0);
    }
    /* [6], stride -1: begin 4, end -3 ends at 4 - 3 = 1 (4, 3, 2); begin 1,
     * end -3 sums to -2, which wraps as an end does to 4: nothing from 1
     * down to 4 */
    {
        static const int64_t dims[] = {6}, b[] = {4}, e[] = {-3}, s[] = {-1}, b2[] = {1};
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b, .end = e, .strides = s, .offset = true}, &p, why) == SY_OK,
              "%s", why);
        expect_plan("offset [4:-3:-1]", &p, 1, (int64_t[]){4}, (int64_t[]){-1}, (int64_t[]){3}, 1, (int64_t[]){3}, 0,
                    0);
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b2, .end = e, .strides = s, .offset = true}, &p, why) ==
                  SY_OK, "%s", why);
        expect_plan("offset [1:-3:-1]", &p, 1, (int64_t[]){1}, (int64_t[]){-1}, (int64_t[]){0}, 1, (int64_t[]){0}, 0,
                    0);
    }
    /* [5]: end_mask wins over the offset (2 to the end: 2, 3, 4); an end of
     * INT64_MAX from begin 3 saturates instead of overflowing and clamps to
     * 5 (3, 4); a begin_mask'd begin is 0 for the offset (0 + 2: 0, 1) */
    {
        static const int64_t dims[] = {5}, b[] = {2}, e[] = {1}, s[] = {1}, b2[] = {3}, e2[] = {INT64_MAX};
        static const int64_t b3[] = {4}, e3[] = {2};
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b, .end = e, .strides = s, .end_mask = 1, .offset = true}, &p,
                  why) == SY_OK, "%s", why);
        expect_plan("offset [2:] (end_mask)", &p, 1, (int64_t[]){2}, (int64_t[]){1}, (int64_t[]){3}, 1,
                    (int64_t[]){3}, 0, 0);
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b2, .end = e2, .strides = s, .offset = true}, &p, why) ==
                  SY_OK, "%s", why);
        expect_plan("offset [3:+INT64_MAX]", &p, 1, (int64_t[]){3}, (int64_t[]){1}, (int64_t[]){2}, 1,
                    (int64_t[]){2}, 0, 0);
        CHECK(run(1, dims, (sy_ss_spec){.n = 1, .begin = b3, .end = e3, .strides = s, .begin_mask = 1, .offset = true},
                  &p, why) == SY_OK, "%s", why);
        expect_plan("offset [:+2] (begin_mask)", &p, 1, (int64_t[]){0}, (int64_t[]){1}, (int64_t[]){2}, 1,
                    (int64_t[]){2}, 0, 0);
    }
}

static void expect_refusal(const char *what, int32_t rank, const int64_t *dims, sy_ss_spec s, sy_status_code code,
                           const char *msg)
{
    sy_ss_plan p;
    char why[160] = "";
    sy_status_code c = run(rank, dims, s, &p, why);
    CHECK(c == code, "%s: code %d, want %d (%s)", what, (int)c, (int)code, why);
    CHECK(strstr(why, msg), "%s: '%s' does not say '%s'", what, why, msg);
}

static void test_refusals(void)
{
    static const int64_t d2[] = {4, 5}, z[8] = {0}, one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    static const int64_t zero_step[] = {1, 0}, far[] = {4, 0}, d8[] = {2, 2, 2, 2, 2, 2, 2, 2};
    expect_refusal("two ellipses", 2, d2, (sy_ss_spec){.n = 2, .begin = z, .end = z, .strides = one,
                                                       .ellipsis_mask = 3},
                   SY_ERR_INVALID_ARGUMENT, "ellipsis_mask 3 has more than one bit set");
    expect_refusal("a zero stride", 2, d2, (sy_ss_spec){.n = 2, .begin = z, .end = z, .strides = zero_step},
                   SY_ERR_INVALID_ARGUMENT, "strides[1] is 0");
    expect_refusal("three entries for two axes", 2, d2, (sy_ss_spec){.n = 3, .begin = z, .end = z, .strides = one},
                   SY_ERR_SHAPE, "3 slice entries take an input axis each, the input has 2");
    expect_refusal("a shrink past the axis", 2, d2, (sy_ss_spec){.n = 2, .begin = far, .end = z, .strides = one,
                                                                 .shrink_axis_mask = 1},
                   SY_ERR_SHAPE, "shrink index 4 is out of range for axis 0 of 4");
    /* rank 8 and a new axis: nine output axes (the trailing axes taken
     * whole after the new one) */
    expect_refusal("a ninth output axis", 8, d8, (sy_ss_spec){.n = 1, .begin = z, .end = z, .strides = one,
                                                              .new_axis_mask = 1},
                   SY_ERR_SHAPE, "more than 8 axes");
    expect_refusal("nine entries", 2, d2, (sy_ss_spec){.n = 9, .begin = z, .end = z, .strides = one}, SY_ERR_SHAPE,
                   "9 slice entries (at most 8)");
}

int main(void)
{
    test_hand_worked();
    test_offset();
    test_refusals();
    return SY_TEST_MAIN_RESULT();
}
