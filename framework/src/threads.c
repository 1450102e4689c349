/*
 * Thread pool for independent nodes. Steps are grouped by dependency level;
 * the nodes of one level are independent (the planner gave each a buffer
 * live for the whole level), so workers take them in any order and the
 * results are bit-identical to one thread. Levels are separated by a
 * barrier. The pool is created with the session; running allocates nothing.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <pthread.h>
#include <stdlib.h>

struct sy_pool {
    pthread_t *threads;
    int n_workers;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    uint64_t generation;
    int busy;     /* workers still in the current level */
    bool quit;
    /* the current level */
    struct sy_session *s;
    uint32_t begin, end;
    uint32_t next; /* atomic */
    sy_status *err;
    uint32_t err_step; /* lowest failing step, so the reported error is deterministic */
};

void sy_profile_node(struct sy_session *s, uint32_t node, uint64_t t0, uint64_t t1, int tid);

static void work(struct sy_pool *p, int tid)
{
    struct sy_session *s = p->s;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->end)
            return;
        const sy_step *st = &s->steps[i];
        sy_kernel_io io;
        uint64_t t0 = s->profiling ? sy_now_ns() : 0;
        sy_status *e = st->run(st->state, sy_step_io(s, st, &io));
        if (s->profiling)
            sy_profile_node(s, st->node, t0, sy_now_ns(), tid);
        if (e) {
            pthread_mutex_lock(&p->mu);
            if (!p->err || i < p->err_step) {
                sy_status_free(p->err);
                p->err = e;
                p->err_step = i;
            } else {
                sy_status_free(e);
            }
            pthread_mutex_unlock(&p->mu);
        }
    }
}

typedef struct worker_arg {
    struct sy_pool *p;
    int tid;
} worker_arg;

static void *worker_main(void *arg)
{
    struct sy_pool *p = ((worker_arg *)arg)->p;
    int tid = ((worker_arg *)arg)->tid;
    free(arg);
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->generation == seen)
            pthread_cond_wait(&p->start, &p->mu);
        if (p->quit)
            break;
        seen = p->generation;
        pthread_mutex_unlock(&p->mu);
        work(p, tid);
        pthread_mutex_lock(&p->mu);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void sy_pool_destroy(struct sy_pool *p);

sy_status *sy_pool_create(int threads, struct sy_pool **out)
{
    struct sy_pool *p = calloc(1, sizeof *p);
    if (!p)
        return sy_error_oom();
    p->n_workers = threads - 1; /* the calling thread works too */
    p->threads = calloc((size_t)p->n_workers, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return sy_error_oom();
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < p->n_workers; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (a)
            *a = (worker_arg){p, i + 1};
        if (!a || pthread_create(&p->threads[i], NULL, worker_main, a) != 0) {
            free(a);
            p->n_workers = i;
            sy_pool_destroy(p);
            return sy_error(SY_ERR_RUNTIME, "cannot start worker thread %d of %d", i + 1, threads);
        }
    }
    *out = p;
    return NULL;
}

void sy_pool_destroy(struct sy_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_workers; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}

/* Run steps [begin, end) concurrently; returns the error of the lowest
 * failing step (with its index in *failed). */
sy_status *sy_pool_run_level(struct sy_pool *p, struct sy_session *s, uint32_t begin, uint32_t end, uint32_t *failed)
{
    if (end - begin == 1 || p->n_workers == 0) {
        /* nothing to share: run inline without waking anyone */
        for (uint32_t i = begin; i < end; i++) {
            const sy_step *st = &s->steps[i];
            sy_kernel_io io;
            uint64_t t0 = s->profiling ? sy_now_ns() : 0;
            sy_status *e = st->run(st->state, sy_step_io(s, st, &io));
            if (s->profiling)
                sy_profile_node(s, st->node, t0, sy_now_ns(), 0);
            if (e) {
                *failed = i;
                return e;
            }
        }
        return NULL;
    }
    pthread_mutex_lock(&p->mu);
    p->s = s;
    p->begin = begin;
    p->end = end;
    p->next = begin;
    p->err = NULL;
    p->busy = p->n_workers;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    work(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->mu);
    sy_status *err = p->err;
    *failed = p->err_step;
    p->err = NULL;
    pthread_mutex_unlock(&p->mu);
    return err;
}
