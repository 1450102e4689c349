/*
 * The cpu provider's worker pool (cpu_pool.c): a region never waits for a
 * worker that was not scheduled, and XNNPACK's pthreadpool calls run on it.
 */
#ifndef SY_CPU_POOL_H
#define SY_CPU_POOL_H

#include <pthreadpool.h>
#include <stdbool.h>
#include <stdint.h>
#include <xnnpack.h>

typedef struct cpu_pool cpu_pool;

/* `threads` workers counting the caller (threads - 1 are started); NULL
 * when threads < 2 or the threads could not be started */
cpu_pool *cpu_pool_create(uint32_t threads);
void cpu_pool_destroy(cpu_pool *p);
/* true when XNNPACK's pthreadpool calls reach this pool (after xnn_initialize) */
bool cpu_pool_probe(void);

#endif
