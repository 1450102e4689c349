/*
 * The session's string heaps: where the bytes of string tensors that kernels
 * make live (host->run_alloc). A string tensor's records are ordinary planned
 * memory; the text they point to has a size known only when the kernel runs,
 * so it cannot be planned. One heap holds the strings of a run and is emptied
 * when the next run starts; another holds those of constants folded at
 * creation and is emptied when the session re-plans.
 */
#ifndef SY_STRHEAP_H
#define SY_STRHEAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sy_strheap_chunk sy_strheap_chunk;

typedef struct sy_strheap {
    sy_strheap_chunk *head; /* the chunk allocations come from; older ones follow */
    size_t total;           /* bytes handed out since the last reset */
    size_t limit;           /* refuse past this many bytes (0: none) */
    pthread_mutex_t mu;     /* kernels of one dependency level run on several threads */
} sy_strheap;

void sy_strheap_init(sy_strheap *h, size_t limit);
/* `n` bytes, 16-byte aligned; NULL when out of memory or over the limit */
void *sy_strheap_alloc(sy_strheap *h, size_t n);
/* Forget every allocation. A heap that needed several chunks keeps one as
 * large as all of them, so a steady model allocates nothing after its first run. */
void sy_strheap_reset(sy_strheap *h);
void sy_strheap_free(sy_strheap *h);

#endif
