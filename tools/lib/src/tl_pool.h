/* A pool for everything a transformation allocates: zeroed blocks, freed
 * at once when the call ends (a model rewrite owns thousands of small
 * strings and protobuf-c messages that share one lifetime). */
#ifndef SY_TL_POOL_H
#define SY_TL_POOL_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tl_block tl_block;

typedef struct tl_pool {
    tl_block *head;
    bool oom; /* an allocation failed: the caller reports out of memory */
} tl_pool;

/* n zeroed bytes (at least 1), max_align_t aligned; NULL (and oom) on failure. */
void *tl_alloc(tl_pool *p, size_t n);
char *tl_strdup(tl_pool *p, const char *s);
/* A formatted string (truncated at 1023 characters). */
char *tl_printf(tl_pool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tl_pool_free(tl_pool *p);

#endif
