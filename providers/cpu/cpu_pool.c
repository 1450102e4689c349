/*
 * The cpu provider's intra-op worker pool, and the pthreadpool entry points
 * XNNPACK calls, so XNNPACK's operators run on this pool too.
 *
 * Why not Debian's pthreadpool: after handing out a parallel region its
 * caller waits until every worker has woken up and checked in, even a worker
 * that finds no work left. On a shared machine a worker the scheduler has
 * not run yet costs a whole time slice per region (ultraface_rfb_320 took
 * 276 ms at two threads against 10.6 ms at one). Here a region's work items
 * are claimed from one counter by whoever comes first, the caller included;
 * a worker that wakes late joins only while the region is still open, and
 * the caller closes it once every item is claimed, then waits only for the
 * workers that did join (they are running items). A region therefore never
 * waits for a thread that was not scheduled.
 *
 * Results do not depend on who runs an item or on the thread count: every
 * item writes its own outputs with the same code, and the items (the tiles
 * XNNPACK asks for) are the same whoever claims them.
 *
 * The entry points: libsy_cpu.so defines (and exports) the pthreadpool
 * functions XNNPACK imports. The plugin is dlopen'ed RTLD_LOCAL, and in that
 * lookup scope it comes before its dependencies, so libXNNPACK's calls bind
 * here. cpu_pool_probe() checks at init that they did; when they did not
 * (XNNPACK loaded earlier by someone else), the provider makes real
 * pthreadpools instead and these functions forward every pool that is not
 * one of ours to libpthreadpool.
 *
 * Workers are started when the provider is created; a region starts no
 * thread and allocates nothing. A pool busy with another session's region
 * runs the new region on its caller (serially) rather than waiting.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cpu_pool.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define POOL_X86 1
#endif

#define POOL_MAGIC 0x5359435055504f4fULL /* "SYCPUPOO": never a count of threads */
#define OPEN_BIT (1ull << 31)
#define ACTIVE_MASK (OPEN_BIT - 1)
#define SPINS 4000 /* polls before sleeping: a few microseconds */

#define EXPORT __attribute__((visibility("default")))

enum job_kind { J1, J1T1, J2, J2T1, J2T2, J3, J3T2, J4, J4T2, J5, J5T2, J6T2 };

typedef struct job {
    int kind, nd;           /* nd: number of dimensions */
    void *fn, *ctx;
    size_t range[6], tile[6], tiles[6];
    size_t count, chunk;    /* items (tiles) and how many one claim takes */
    uint32_t flags;
} job;

struct cpu_pool {
    uint64_t magic; /* first, where a pthreadpool keeps a small count */
    uint32_t threads; /* the caller included */
    pthread_t *workers;
    uint32_t started;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    _Atomic uint32_t wake_gen; /* bumped per region: workers wake on a change */
    _Atomic uint64_t state;    /* region generation << 32 | OPEN_BIT | joined workers */
    _Atomic size_t next;       /* the next unclaimed item */
    _Atomic bool busy;         /* a region is running */
    _Atomic bool stop;
    uint32_t gen;
    job j;
};

/* ---- items ---------------------------------------------------------------- */

static void run_item(const job *j, size_t item)
{
    size_t c[6], s[6], t[6];
    for (int d = j->nd - 1; d >= 0; d--) {
        c[d] = item % j->tiles[d];
        item /= j->tiles[d];
        s[d] = c[d] * j->tile[d];
        size_t left = j->range[d] - s[d];
        t[d] = left < j->tile[d] ? left : j->tile[d];
    }
    void *x = j->ctx;
    switch (j->kind) {
    case J1: ((pthreadpool_task_1d_t)j->fn)(x, s[0]); break;
    case J1T1: ((pthreadpool_task_1d_tile_1d_t)j->fn)(x, s[0], t[0]); break;
    case J2: ((pthreadpool_task_2d_t)j->fn)(x, s[0], s[1]); break;
    case J2T1: ((pthreadpool_task_2d_tile_1d_t)j->fn)(x, s[0], s[1], t[1]); break;
    case J2T2: ((pthreadpool_task_2d_tile_2d_t)j->fn)(x, s[0], s[1], t[0], t[1]); break;
    case J3: ((pthreadpool_task_3d_t)j->fn)(x, s[0], s[1], s[2]); break;
    case J3T2: ((pthreadpool_task_3d_tile_2d_t)j->fn)(x, s[0], s[1], s[2], t[1], t[2]); break;
    case J4: ((pthreadpool_task_4d_t)j->fn)(x, s[0], s[1], s[2], s[3]); break;
    case J4T2: ((pthreadpool_task_4d_tile_2d_t)j->fn)(x, s[0], s[1], s[2], s[3], t[2], t[3]); break;
    case J5: ((pthreadpool_task_5d_t)j->fn)(x, s[0], s[1], s[2], s[3], s[4]); break;
    case J5T2: ((pthreadpool_task_5d_tile_2d_t)j->fn)(x, s[0], s[1], s[2], s[3], s[4], t[3], t[4]); break;
    case J6T2:
        ((pthreadpool_task_6d_tile_2d_t)j->fn)(x, s[0], s[1], s[2], s[3], s[4], s[5], t[4], t[5]);
        break;
    default: break;
    }
}

/* flush-to-zero and denormals-are-zero for a region that asks for them, on
 * every thread that runs its items (the same arithmetic wherever an item runs) */
static unsigned denormals_off(uint32_t flags)
{
#ifdef POOL_X86
    if (flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) {
        unsigned saved = _mm_getcsr();
        _mm_setcsr(saved | 0x8040u);
        return saved;
    }
#endif
    (void)flags;
    return 0;
}

static void denormals_restore(uint32_t flags, unsigned saved)
{
#ifdef POOL_X86
    if (flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS)
        _mm_setcsr(saved);
#endif
    (void)flags;
    (void)saved;
}

static void run_serial(const job *j)
{
    unsigned saved = denormals_off(j->flags);
    for (size_t i = 0; i < j->count; i++)
        run_item(j, i);
    denormals_restore(j->flags, saved);
}

static void claim_items(cpu_pool *p)
{
    const job *j = &p->j;
    unsigned saved = denormals_off(j->flags);
    for (;;) {
        size_t i = atomic_fetch_add_explicit(&p->next, j->chunk, memory_order_relaxed);
        if (i >= j->count)
            break;
        size_t end = i + j->chunk < j->count ? i + j->chunk : j->count;
        for (; i < end; i++)
            run_item(j, i);
    }
    denormals_restore(j->flags, saved);
}

static inline void cpu_relax(void)
{
#ifdef POOL_X86
    _mm_pause();
#endif
}

/* ---- workers ------------------------------------------------------------------ */

/* join the region of generation `gen` if it is still open */
static bool join(cpu_pool *p, uint32_t gen)
{
    uint64_t s = atomic_load_explicit(&p->state, memory_order_acquire);
    for (;;) {
        if ((uint32_t)(s >> 32) != gen || !(s & OPEN_BIT))
            return false;
        if (atomic_compare_exchange_weak_explicit(&p->state, &s, s + 1, memory_order_acq_rel, memory_order_acquire))
            return true;
    }
}

static void leave(cpu_pool *p)
{
    uint64_t s = atomic_fetch_sub_explicit(&p->state, 1, memory_order_acq_rel) - 1;
    if (!(s & OPEN_BIT) && !(s & ACTIVE_MASK)) { /* the caller may be waiting for us */
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->done_cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static void *worker_main(void *arg)
{
    cpu_pool *p = arg;
    uint32_t seen = atomic_load_explicit(&p->wake_gen, memory_order_acquire);
    for (;;) {
        uint32_t g = atomic_load_explicit(&p->wake_gen, memory_order_acquire);
        for (int i = 0; i < SPINS && g == seen && !atomic_load_explicit(&p->stop, memory_order_relaxed); i++) {
            cpu_relax();
            g = atomic_load_explicit(&p->wake_gen, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load_explicit(&p->wake_gen, memory_order_acquire)) == seen &&
                   !atomic_load_explicit(&p->stop, memory_order_relaxed))
                pthread_cond_wait(&p->work_cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load_explicit(&p->stop, memory_order_relaxed))
            return NULL;
        seen = g;
        if (join(p, g)) {
            claim_items(p);
            leave(p);
        }
    }
}

cpu_pool *cpu_pool_create(uint32_t threads)
{
    if (threads < 2)
        return NULL;
    cpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->magic = POOL_MAGIC;
    p->threads = threads;
    p->workers = calloc(threads - 1, sizeof *p->workers);
    if (!p->workers || pthread_mutex_init(&p->mu, NULL)) {
        free(p->workers);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    for (uint32_t i = 0; i + 1 < threads; i++) {
        if (pthread_create(&p->workers[i], NULL, worker_main, p))
            break;
        p->started++;
    }
    if (p->started + 1 != threads) {
        cpu_pool_destroy(p);
        return NULL;
    }
    return p;
}

void cpu_pool_destroy(cpu_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, true);
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 0; i < p->started; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p);
}

static cpu_pool *ours(pthreadpool_t pool)
{
    cpu_pool *p = (cpu_pool *)(void *)pool;
    return p && p->magic == POOL_MAGIC ? p : NULL;
}

/* one region on pool p (NULL: on the caller) */
static void region(cpu_pool *p, job *j)
{
    j->count = 1;
    for (int d = 0; d < j->nd; d++) {
        if (!j->range[d])
            return;
        if (!j->tile[d])
            j->tile[d] = 1;
        j->tiles[d] = (j->range[d] + j->tile[d] - 1) / j->tile[d];
        j->count *= j->tiles[d];
    }
    bool expected = false;
    if (!p || j->count < 2 ||
        !atomic_compare_exchange_strong_explicit(&p->busy, &expected, true, memory_order_acquire,
                                                 memory_order_relaxed)) {
        run_serial(j);
        return;
    }
    /* a claim takes about 1/8 of one thread's share: few atomics, balance kept */
    size_t chunk = j->count / ((size_t)p->threads * 8u);
    j->chunk = chunk ? chunk : 1;
    p->j = *j;
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    uint32_t gen = ++p->gen;
    atomic_store_explicit(&p->state, (uint64_t)gen << 32 | OPEN_BIT, memory_order_release);
    atomic_store_explicit(&p->wake_gen, gen, memory_order_release);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    claim_items(p);
    /* every item is claimed: close the region to late joiners, wait for the joined */
    uint64_t s = atomic_fetch_and_explicit(&p->state, ~OPEN_BIT, memory_order_acq_rel) & ~OPEN_BIT;
    for (int i = 0; i < SPINS && (s & ACTIVE_MASK); i++) {
        cpu_relax();
        s = atomic_load_explicit(&p->state, memory_order_acquire);
    }
    if (s & ACTIVE_MASK) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load_explicit(&p->state, memory_order_acquire) & ACTIVE_MASK)
            pthread_cond_wait(&p->done_cv, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    atomic_store_explicit(&p->busy, false, memory_order_release);
}

/* ---- the pthreadpool entry points ------------------------------------------ */

static _Atomic bool probe_seen;
static void *real_lib;

static void *real_fn(const char *name)
{
    if (!real_lib)
        real_lib = dlopen("libpthreadpool.so.0", RTLD_NOW | RTLD_NOLOAD);
    return real_lib ? dlsym(real_lib, name) : NULL;
}

/* a pool that is not ours goes to libpthreadpool (resolved once per entry) */
#define FORWARD(name, type, ...)                                                                                      \
    do {                                                                                                              \
        atomic_store_explicit(&probe_seen, true, memory_order_relaxed);                                               \
        if (pool && !ours(pool)) {                                                                                    \
            static _Atomic(type) real;                                                                                \
            type f = atomic_load(&real);                                                                              \
            if (!f) {                                                                                                 \
                f = (type)(uintptr_t)real_fn(name);                                                                         \
                atomic_store(&real, f);                                                                               \
            }                                                                                                         \
            if (f) {                                                                                                  \
                f(__VA_ARGS__);                                                                                       \
                return;                                                                                               \
            }                                                                                                         \
        }                                                                                                             \
    } while (0)

typedef void (*fw1_t)(pthreadpool_t, pthreadpool_task_1d_t, void *, size_t, uint32_t);
typedef void (*fw1t1_t)(pthreadpool_t, pthreadpool_task_1d_tile_1d_t, void *, size_t, size_t, uint32_t);
typedef void (*fw2_t)(pthreadpool_t, pthreadpool_task_2d_t, void *, size_t, size_t, uint32_t);
typedef void (*fw2t1_t)(pthreadpool_t, pthreadpool_task_2d_tile_1d_t, void *, size_t, size_t, size_t, uint32_t);
typedef void (*fw2t2_t)(pthreadpool_t, pthreadpool_task_2d_tile_2d_t, void *, size_t, size_t, size_t, size_t,
                        uint32_t);
typedef void (*fw3_t)(pthreadpool_t, pthreadpool_task_3d_t, void *, size_t, size_t, size_t, uint32_t);
typedef void (*fw3t2_t)(pthreadpool_t, pthreadpool_task_3d_tile_2d_t, void *, size_t, size_t, size_t, size_t,
                        size_t, uint32_t);
typedef void (*fw4_t)(pthreadpool_t, pthreadpool_task_4d_t, void *, size_t, size_t, size_t, size_t, uint32_t);
typedef void (*fw4t2_t)(pthreadpool_t, pthreadpool_task_4d_tile_2d_t, void *, size_t, size_t, size_t, size_t,
                        size_t, size_t, uint32_t);
typedef void (*fw5_t)(pthreadpool_t, pthreadpool_task_5d_t, void *, size_t, size_t, size_t, size_t, size_t,
                      uint32_t);
typedef void (*fw5t2_t)(pthreadpool_t, pthreadpool_task_5d_tile_2d_t, void *, size_t, size_t, size_t, size_t,
                        size_t, size_t, size_t, uint32_t);
typedef void (*fw6t2_t)(pthreadpool_t, pthreadpool_task_6d_tile_2d_t, void *, size_t, size_t, size_t, size_t,
                        size_t, size_t, size_t, size_t, uint32_t);
typedef size_t (*fwcount_t)(pthreadpool_t);

EXPORT size_t pthreadpool_get_threads_count(pthreadpool_t pool)
{
    cpu_pool *p = ours(pool);
    if (p || !pool)
        return p ? p->threads : 1;
    static _Atomic(fwcount_t) real;
    fwcount_t f = atomic_load(&real);
    if (!f) {
        f = (fwcount_t)(uintptr_t)real_fn("pthreadpool_get_threads_count");
        atomic_store(&real, f);
    }
    return f ? f(pool) : 1;
}

#define JOB(k, n, ...) job j = {.kind = (k), .nd = (n), .fn = (void *)(uintptr_t)fn, .ctx = arg, .flags = flags, __VA_ARGS__}

EXPORT void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t fn, void *arg, size_t r0,
                                       uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_1d", fw1_t, pool, fn, arg, r0, flags);
    JOB(J1, 1, .range = {r0});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t fn, void *arg,
                                               size_t r0, size_t t0, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_1d_tile_1d", fw1t1_t, pool, fn, arg, r0, t0, flags);
    JOB(J1T1, 1, .range = {r0}, .tile = {t0});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_2d(pthreadpool_t pool, pthreadpool_task_2d_t fn, void *arg, size_t r0, size_t r1,
                                       uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_2d", fw2_t, pool, fn, arg, r0, r1, flags);
    JOB(J2, 2, .range = {r0, r1});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t pool, pthreadpool_task_2d_tile_1d_t fn, void *arg,
                                               size_t r0, size_t r1, size_t t1, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_2d_tile_1d", fw2t1_t, pool, fn, arg, r0, r1, t1, flags);
    JOB(J2T1, 2, .range = {r0, r1}, .tile = {1, t1});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t pool, pthreadpool_task_2d_tile_2d_t fn, void *arg,
                                               size_t r0, size_t r1, size_t t0, size_t t1, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_2d_tile_2d", fw2t2_t, pool, fn, arg, r0, r1, t0, t1, flags);
    JOB(J2T2, 2, .range = {r0, r1}, .tile = {t0, t1});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_3d(pthreadpool_t pool, pthreadpool_task_3d_t fn, void *arg, size_t r0, size_t r1,
                                       size_t r2, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_3d", fw3_t, pool, fn, arg, r0, r1, r2, flags);
    JOB(J3, 3, .range = {r0, r1, r2});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t pool, pthreadpool_task_3d_tile_2d_t fn, void *arg,
                                               size_t r0, size_t r1, size_t r2, size_t t1, size_t t2, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_3d_tile_2d", fw3t2_t, pool, fn, arg, r0, r1, r2, t1, t2, flags);
    JOB(J3T2, 3, .range = {r0, r1, r2}, .tile = {1, t1, t2});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_4d(pthreadpool_t pool, pthreadpool_task_4d_t fn, void *arg, size_t r0, size_t r1,
                                       size_t r2, size_t r3, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_4d", fw4_t, pool, fn, arg, r0, r1, r2, r3, flags);
    JOB(J4, 4, .range = {r0, r1, r2, r3});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t pool, pthreadpool_task_4d_tile_2d_t fn, void *arg,
                                               size_t r0, size_t r1, size_t r2, size_t r3, size_t t2, size_t t3,
                                               uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_4d_tile_2d", fw4t2_t, pool, fn, arg, r0, r1, r2, r3, t2, t3, flags);
    JOB(J4T2, 4, .range = {r0, r1, r2, r3}, .tile = {1, 1, t2, t3});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_5d(pthreadpool_t pool, pthreadpool_task_5d_t fn, void *arg, size_t r0, size_t r1,
                                       size_t r2, size_t r3, size_t r4, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_5d", fw5_t, pool, fn, arg, r0, r1, r2, r3, r4, flags);
    JOB(J5, 5, .range = {r0, r1, r2, r3, r4});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t pool, pthreadpool_task_5d_tile_2d_t fn, void *arg,
                                               size_t r0, size_t r1, size_t r2, size_t r3, size_t r4, size_t t3,
                                               size_t t4, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_5d_tile_2d", fw5t2_t, pool, fn, arg, r0, r1, r2, r3, r4, t3, t4, flags);
    JOB(J5T2, 5, .range = {r0, r1, r2, r3, r4}, .tile = {1, 1, 1, t3, t4});
    region(ours(pool), &j);
}

EXPORT void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t pool, pthreadpool_task_6d_tile_2d_t fn, void *arg,
                                               size_t r0, size_t r1, size_t r2, size_t r3, size_t r4, size_t r5,
                                               size_t t4, size_t t5, uint32_t flags)
{
    FORWARD("pthreadpool_parallelize_6d_tile_2d", fw6t2_t, pool, fn, arg, r0, r1, r2, r3, r4, r5, t4, t5, flags);
    JOB(J6T2, 6, .range = {r0, r1, r2, r3, r4, r5}, .tile = {1, 1, 1, 1, t4, t5});
    region(ours(pool), &j);
}

/* Did XNNPACK's calls bind to the entry points above? Run a tiny XNNPACK
 * operator without a pool and see whether one of them was called. */
bool cpu_pool_probe(void)
{
    static _Atomic int result; /* 0 unknown, 1 bound here, 2 not */
    int r = atomic_load(&result);
    if (r)
        return r == 1;
    atomic_store(&probe_seen, false);
    xnn_operator_t op = NULL;
    float x[4] = {1, 2, 3, 4}, y[4];
    bool seen = false;
    if (xnn_create_clamp_nc_f32(1, 1, 1, 0.0f, 1.0f, 0, &op) == xnn_status_success &&
        xnn_setup_clamp_nc_f32(op, 4, x, y, NULL) == xnn_status_success &&
        xnn_run_operator(op, NULL) == xnn_status_success)
        seen = atomic_load(&probe_seen);
    if (op)
        xnn_delete_operator(op);
    atomic_store(&result, seen ? 1 : 2);
    return seen;
}
