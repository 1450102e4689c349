/* The core's planner for a provider's own arena (sy_host_api.plan_blocks,
 * ABI 1.7), called through the host table a plugin gets: placements worked
 * by hand, refusals that write nothing, and random sets checked against the
 * planner's promises (no two blocks live at one time share a byte, offsets
 * aligned, the lower bound the largest sum live at one time, counted here by
 * brute force over every time). */
#include "env.h"
#include "sy_test.h"

#include <stdint.h>

static const sy_host_api *H = &sy_host_api_table;

static void test_table(void)
{
    CHECK(H->abi_minor >= 7, "the host table is ABI 1.%u", (unsigned)H->abi_minor);
    CHECK(sy_host_has_plan_blocks(H), "the host table has plan_blocks");
}

static void test_hand_worked(void)
{
    /* A 100 B [0, 2]; B 60 B [1, 3]; C 60 B [3, 4]; D 40 B [4, 5]. Largest
     * first, B before C (the earlier first): A at 0; B lives with A: 100; C
     * lives with B only (A is dead at 3): the gap below B, 0; D lives with C
     * (B is dead at 4): 60. Arena 160; live sums 100, 160, 160, 120, 100,
     * 40: the lower bound 160, and this plan meets it. */
    sy_plan_block b[4] = {{100, 0, 2, 7}, {60, 1, 3, 7}, {60, 3, 4, 7}, {40, 4, 5, 7}};
    uint64_t arena = 1, lower = 1;
    sy_status *st = H->plan_blocks(b, 4, 1, &arena, &lower);
    REQUIRE(!st, "planned: %s", st ? H->status_message(st) : "");
    CHECK(b[0].offset == 0 && b[1].offset == 100 && b[2].offset == 0 && b[3].offset == 60,
          "offsets 0 100 0 60, got %llu %llu %llu %llu", (unsigned long long)b[0].offset,
          (unsigned long long)b[1].offset, (unsigned long long)b[2].offset, (unsigned long long)b[3].offset);
    CHECK(arena == 160 && lower == 160, "arena 160, lower bound 160; got %llu, %llu", (unsigned long long)arena,
          (unsigned long long)lower);

    /* alignment 16: two 10-byte blocks at [0, 0] and a 5-byte one at [0, 1]:
     * 0, 16 (10 aligned up), 32; the arena 37 aligned up, 48; the lower
     * bound counts bytes, not aligned ones: 25 */
    sy_plan_block a[3] = {{10, 0, 0, 0}, {10, 0, 0, 0}, {5, 0, 1, 0}};
    st = H->plan_blocks(a, 3, 16, &arena, &lower);
    REQUIRE(!st, "planned: %s", st ? H->status_message(st) : "");
    CHECK(a[0].offset == 0 && a[1].offset == 16 && a[2].offset == 32, "offsets 0 16 32, got %llu %llu %llu",
          (unsigned long long)a[0].offset, (unsigned long long)a[1].offset, (unsigned long long)a[2].offset);
    CHECK(arena == 48 && lower == 25, "arena 48, lower bound 25; got %llu, %llu", (unsigned long long)arena,
          (unsigned long long)lower);

    /* equal sizes go by first, then by index: block 1 (first 0) is placed
     * before block 0 (first 1) and takes offset 0; block 2 ties block 1's
     * first and comes after it */
    sy_plan_block e[3] = {{8, 1, 2, 0}, {8, 0, 2, 0}, {8, 0, 2, 0}};
    st = H->plan_blocks(e, 3, 1, &arena, NULL);
    REQUIRE(!st, "planned: %s", st ? H->status_message(st) : "");
    CHECK(e[1].offset == 0 && e[2].offset == 8 && e[0].offset == 16 && arena == 24,
          "offsets 16 0 8, arena 24; got %llu %llu %llu, %llu", (unsigned long long)e[0].offset,
          (unsigned long long)e[1].offset, (unsigned long long)e[2].offset, (unsigned long long)arena);

    /* disjoint lifetimes share bytes; zero blocks give an empty arena */
    sy_plan_block d[2] = {{32, 0, 0, 9}, {32, 1, 1, 9}};
    st = H->plan_blocks(d, 2, 4, &arena, &lower);
    CHECK(!st && d[0].offset == 0 && d[1].offset == 0 && arena == 32 && lower == 32, "reuse after death");
    H->status_free(st);
    st = H->plan_blocks(NULL, 0, 8, &arena, &lower);
    CHECK(!st && arena == 0 && lower == 0, "no blocks: an empty arena");
    H->status_free(st);
}

static void refused(sy_plan_block *b, uint32_t n, uint64_t align, const char *needle, const char *what)
{
    uint64_t arena = 12345, lower = 12345;
    for (uint32_t i = 0; b && i < n; i++)
        b[i].offset = 777;
    sy_status *st = H->plan_blocks(b, n, align, &arena, &lower);
    CHECK(st && H->status_code(st) == SY_ERR_INVALID_ARGUMENT, "%s is refused as an invalid argument", what);
    if (st)
        CHECK_STR_HAS(H->status_message(st), needle);
    H->status_free(st);
    CHECK(arena == 12345 && lower == 12345, "%s: nothing written to the sizes", what);
    for (uint32_t i = 0; b && i < n; i++)
        CHECK(b[i].offset == 777, "%s: block %u's offset untouched", what, i);
}

static void test_refusals(void)
{
    sy_plan_block ok = {16, 0, 1, 0};
    refused(&ok, 1, 0, "alignment 0", "alignment 0");
    refused(&ok, 1, 24, "alignment 24 is not a power of two", "alignment 24");
    refused(&ok, 1, UINT64_C(1) << 31, "up to 2^30", "alignment 2^31");
    refused(NULL, 3, 8, "3 blocks and no array", "a NULL array");
    sy_plan_block back[2] = {{16, 0, 1, 0}, {16, 5, 4, 0}};
    refused(back, 2, 8, "block 1 lives from 5 to 4", "last before first");
    sy_plan_block wide[1] = {{16, 0, INT64_C(1) << 40, 0}};
    refused(wide, 1, 8, "within int32", "a time past int32");
    sy_plan_block huge[2] = {{UINT64_C(1) << 61, 0, 1, 0}, {UINT64_C(1) << 61, 0, 1, 0}};
    refused(huge, 2, 8, "pass 2^62 bytes", "sizes summing past 2^62");
}

static uint64_t rnd_state = 88172645463325252u;
static uint64_t rnd(uint64_t n)
{
    rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
    return rnd_state % n;
}

static void test_random_sets(void)
{
    enum { N = 40, T = 30 };
    for (int trial = 0; trial < 300; trial++) {
        sy_plan_block b[N];
        const uint32_t n = 1 + (uint32_t)rnd(N);
        const uint64_t align = UINT64_C(1) << rnd(5);
        for (uint32_t i = 0; i < n; i++) {
            int64_t f = (int64_t)rnd(T), len = (int64_t)rnd(8);
            b[i] = (sy_plan_block){rnd(3) ? 1 + rnd(200) : 0, f, f + len, 0};
        }
        uint64_t arena = 0, lower = 0;
        sy_status *st = H->plan_blocks(b, n, align, &arena, &lower);
        REQUIRE(!st, "trial %d planned: %s", trial, st ? H->status_message(st) : "");
        uint64_t top = 0, best = 0;
        for (uint32_t i = 0; i < n; i++) {
            CHECK(b[i].offset % align == 0, "trial %d: block %u at %llu, align %llu", trial, i,
                  (unsigned long long)b[i].offset, (unsigned long long)align);
            if (b[i].offset + b[i].size > top)
                top = b[i].offset + b[i].size;
            for (uint32_t j = 0; j < i; j++) {
                const bool time = b[i].first <= b[j].last && b[j].first <= b[i].last;
                const bool space = b[i].offset < b[j].offset + b[j].size && b[j].offset < b[i].offset + b[i].size;
                CHECK(!(time && space), "trial %d: blocks %u and %u live together share bytes", trial, i, j);
            }
        }
        for (int64_t t = 0; t < T + 8; t++) {
            uint64_t live = 0;
            for (uint32_t i = 0; i < n; i++)
                live += b[i].first <= t && t <= b[i].last ? b[i].size : 0;
            best = live > best ? live : best;
        }
        CHECK(lower == best, "trial %d: lower bound %llu, brute force %llu", trial, (unsigned long long)lower,
              (unsigned long long)best);
        CHECK(arena == (top + align - 1) / align * align && arena >= lower,
              "trial %d: arena %llu, highest end %llu aligned to %llu, lower %llu", trial, (unsigned long long)arena,
              (unsigned long long)top, (unsigned long long)align, (unsigned long long)lower);
    }
}

int main(void)
{
    RUN_TEST(test_table);
    RUN_TEST(test_hand_worked);
    RUN_TEST(test_refusals);
    RUN_TEST(test_random_sets);
    return SY_TEST_MAIN_RESULT();
}
