/*
 * Bump allocation of string bytes for a session (strheap.h).
 */
#include "strheap.h"

#include <stdlib.h>

struct sy_strheap_chunk {
    sy_strheap_chunk *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
};

#define MIN_CHUNK ((size_t)4096)

void sy_strheap_init(sy_strheap *h, size_t limit)
{
    h->head = NULL;
    h->total = 0;
    h->limit = limit;
    pthread_mutex_init(&h->mu, NULL);
}

static sy_strheap_chunk *chunk_new(size_t cap)
{
    if (cap > SIZE_MAX - sizeof(sy_strheap_chunk))
        return NULL;
    sy_strheap_chunk *c = malloc(sizeof *c + cap);
    if (c) {
        c->next = NULL;
        c->cap = cap;
        c->used = 0;
    }
    return c;
}

void *sy_strheap_alloc(sy_strheap *h, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n)
        return NULL;
    pthread_mutex_lock(&h->mu);
    void *p = NULL;
    if (h->limit && (need > h->limit || h->total > h->limit - need))
        goto out;
    sy_strheap_chunk *c = h->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = c && c->cap <= SIZE_MAX / 2 ? 2 * c->cap : MIN_CHUNK;
        if (cap < need)
            cap = need;
        sy_strheap_chunk *nc = chunk_new(cap);
        if (!nc)
            goto out;
        nc->next = c;
        h->head = c = nc;
    }
    p = c->data + c->used;
    c->used += need;
    h->total += need;
out:
    pthread_mutex_unlock(&h->mu);
    return p;
}

void sy_strheap_reset(sy_strheap *h)
{
    pthread_mutex_lock(&h->mu);
    sy_strheap_chunk *c = h->head;
    if (c && c->next) {
        size_t cap = 0;
        for (sy_strheap_chunk *k = c; k; k = k->next)
            cap = cap + k->cap < cap ? SIZE_MAX : cap + k->cap;
        while (c) {
            sy_strheap_chunk *next = c->next;
            free(c);
            c = next;
        }
        h->head = chunk_new(cap); /* NULL is fine: the next alloc retries */
    } else if (c) {
        c->used = 0;
    }
    h->total = 0;
    pthread_mutex_unlock(&h->mu);
}

void sy_strheap_free(sy_strheap *h)
{
    sy_strheap_chunk *c = h->head;
    while (c) {
        sy_strheap_chunk *next = c->next;
        free(c);
        c = next;
    }
    h->head = NULL;
    pthread_mutex_destroy(&h->mu);
}
