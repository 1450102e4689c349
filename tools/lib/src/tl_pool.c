#include "tl_pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tl_block {
    tl_block *next;
    max_align_t align_[1];
};

void *tl_alloc(tl_pool *p, size_t n)
{
    tl_block *b = calloc(1, sizeof(tl_block) + (n ? n : 1));
    if (!b) {
        p->oom = true;
        return NULL;
    }
    b->next = p->head;
    p->head = b;
    return b->align_;
}

char *tl_strdup(tl_pool *p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tl_alloc(p, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *tl_printf(tl_pool *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return tl_strdup(p, buf);
}

void tl_pool_free(tl_pool *p)
{
    while (p->head) {
        tl_block *n = p->head->next;
        free(p->head);
        p->head = n;
    }
    p->oom = false;
}
