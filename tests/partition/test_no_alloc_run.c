/*
 * sy_session_run allocates nothing after the first run: this executable
 * defines malloc, calloc, realloc, free, posix_memalign, aligned_alloc and
 * memalign (exported, so libswitchyard and the dlopen'ed plugins bind to
 * them), forwards them to glibc's __libc_* entry points, and counts calls
 * while a flag is set around sy_session_run. Checked with one thread and
 * with a thread pool, on cpu_ref alone and with test_npu (boundary copies,
 * pairwise and host bounce), with new input data between runs, with and
 * without a run observer (sy_session_set_observer).
 *
 * Under AddressSanitizer the allocator belongs to the sanitizer: skipped.
 */
#if defined(__SANITIZE_ADDRESS__)
#define PT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PT_ASAN 1
#endif
#endif

#include "pt_common.h"

#include <errno.h>
#include <stdint.h>

#ifndef PT_ASAN
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static int counting;        /* atomic */
static unsigned long counted; /* atomic */

static inline void note(void)
{
    if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
        __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
}

#define PT_API __attribute__((visibility("default")))
PT_API void *malloc(size_t n)
{
    note();
    return __libc_malloc(n);
}
PT_API void *calloc(size_t a, size_t b)
{
    note();
    return __libc_calloc(a, b);
}
PT_API void *realloc(void *p, size_t n)
{
    note();
    return __libc_realloc(p, n);
}
PT_API void free(void *p)
{
    if (p)
        note();
    __libc_free(p);
}
PT_API int posix_memalign(void **out, size_t align, size_t n)
{
    note();
    if (!align || (align & (align - 1)) || align % sizeof(void *))
        return EINVAL;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
PT_API void *aligned_alloc(size_t align, size_t n)
{
    note();
    return __libc_memalign(align, n);
}
PT_API void *memalign(size_t align, size_t n)
{
    note();
    return __libc_memalign(align, n);
}

/* an observer that only counts (and allocates nothing itself) */
static void count_outputs(void *user, const sy_node_output *o)
{
    (void)o;
    ++*(int *)user;
}

/* the part model of test_partition: Add/Mul on test_npu, Sub/Neg on cpu_ref */
static pt_model *model(void)
{
    static const int64_t d[2] = {4, 32};
    pt_model *m = pt_model_new("no_alloc");
    pt_input(m, "x", PT_F32, 2, d);
    pt_input(m, "y", PT_F32, 2, d);
    pt_node(m, "Add", "add0", (const char *[]){"x", "y", NULL}, (const char *[]){"a", NULL});
    pt_node(m, "Sub", "sub0", (const char *[]){"a", "x", NULL}, (const char *[]){"b", NULL});
    pt_node(m, "Mul", "mul0", (const char *[]){"b", "b", NULL}, (const char *[]){"c", NULL});
    pt_node(m, "Add", "add1", (const char *[]){"b", "c", NULL}, (const char *[]){"d", NULL});
    pt_node(m, "Neg", "neg0", (const char *[]){"d", NULL}, (const char *[]){"e", NULL});
    pt_node(m, "Mul", "mul1", (const char *[]){"x", "y", NULL}, (const char *[]){"f", NULL});
    pt_node(m, "Add", "add2", (const char *[]){"e", "f", NULL}, (const char *[]){"g", NULL});
    pt_output(m, "g", PT_F32, 2, d);
    pt_output(m, "c", PT_F32, 2, d);
    return m;
}

static void check_config(const char *ini, int threads, size_t min_copies)
{
    static const int64_t d[2] = {4, 32};
    pt_model *m = model();
    sy_env *env = pt_env("%s", ini);
    sy_model *mod = env ? pt_load(env, m) : NULL;
    sy_session *s = NULL;
    PT_REQUIRE(mod, "setup");
    sy_session_options o = {.struct_size = sizeof o, .threads = threads, .strict = -1};
    /* the library's allocations go through this file's malloc: creating a
     * session allocates, and is seen */
    __atomic_store_n(&counted, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
    sy_status *st = sy_session_create(env, mod, &o, &s);
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    PT_CHECK(__atomic_load_n(&counted, __ATOMIC_RELAXED) > 0, "sy_session_create made no counted allocation");
    PT_CHECK(sy_session_copy_count(s) >= min_copies, "%zu copies", sy_session_copy_count(s));
    float x[128], y[128];
    int observed = 0;
    for (int run = 0; run < 6; run++) {
        /* runs 3 and 4 observed: the observer path allocates nothing either;
         * run 5 with it removed again */
        sy_session_set_observer(s, run == 3 || run == 4 ? count_outputs : NULL, &observed);
        for (int i = 0; i < 128; i++) {
            x[i] = (float)((i + run) % 9) - 4.0f;
            y[i] = (float)(i % 5) * 0.5f - (float)run;
        }
        sy_tensor tx = pt_tensor_f32(x, 2, d), ty = pt_tensor_f32(y, 2, d);
        PT_REQUIRE(!sy_session_set_input(s, "x", &tx, SY_INPUT_COPY) && !sy_session_set_input(s, "y", &ty, SY_INPUT_COPY),
                   "set_input");
        if (run > 0) {
            __atomic_store_n(&counted, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
        }
        st = sy_session_run(s);
        __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
        unsigned long n = __atomic_load_n(&counted, __ATOMIC_RELAXED);
        PT_REQUIRE(!st, "run %d: %s", run, pt_msg(st));
        if (run > 0)
            PT_CHECK(n == 0, "run %d (threads %d, %s): %lu allocator calls inside sy_session_run", run, threads, ini, n);
        /* the run did compute: g = -(b + b*b) + x*y with b = (x + y) - x */
        const sy_tensor *tg = NULL;
        PT_REQUIRE(!sy_session_get_output(s, 0, &tg) && tg, "output");
        for (int i = 0; i < 128; i++) {
            float b = (x[i] + y[i]) - x[i];
            float want = -(b + b * b) + x[i] * y[i];
            if (((const float *)tg->data)[i] != want) {
                PT_CHECK(0, "run %d: g[%d] = %g, expected %g", run, i, (double)((const float *)tg->data)[i],
                         (double)want);
                break;
            }
        }
    }
    PT_CHECK(observed == 14, "the observer saw the 7 node outputs of each of two runs, got %d calls", observed);
    /* the counter works: an allocation while counting is seen */
    __atomic_store_n(&counted, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
    void *volatile p = malloc(16);
    free(p);
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
    PT_CHECK(__atomic_load_n(&counted, __ATOMIC_RELAXED) == 2, "the interposed allocator did not count");
done:
    sy_session_release(s);
    sy_model_release(mod);
    sy_env_release(env);
    pt_model_free(m);
}

static void test_cpu_ref_one_thread(void) { check_config("providers = cpu_ref\n", 1, 0); }
static void test_cpu_ref_three_threads(void) { check_config("providers = cpu_ref\n", 3, 0); }
static void test_npu_pairwise_copies(void) { check_config("providers = test_npu, cpu_ref\n", 1, 5); }
static void test_npu_host_bounce(void)
{
    check_config("providers = test_npu, cpu_ref\n[provider.test_npu]\ncan_copy = false\n", 1, 5);
}
static void test_npu_three_threads(void) { check_config("providers = test_npu, cpu_ref\n", 3, 5); }
#endif

int main(void)
{
#ifdef PT_ASAN
    printf("SKIP: test_no_alloc_run interposes malloc, which AddressSanitizer owns (SY_SANITIZE=ON)\n");
    return 77;
#else
    PT_RUN(test_cpu_ref_one_thread);
    PT_RUN(test_cpu_ref_three_threads);
    PT_RUN(test_npu_pairwise_copies);
    PT_RUN(test_npu_host_bounce);
    PT_RUN(test_npu_three_threads);
    return pt_result();
#endif
}
