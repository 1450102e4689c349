/* The memory planner: a session's arenas (sy_plan_memory) and, for a
 * provider's own arena, blocks with lifetimes (sy_plan_blocks, the host
 * API's plan_blocks). One placement rule serves both. */
#ifndef SY_PLAN_H
#define SY_PLAN_H

#include <switchyard/sy_plugin.h>

struct sy_session;

sy_status *sy_plan_memory(struct sy_session *s);
sy_status *sy_plan_blocks(sy_plan_block *blocks, uint32_t n, uint64_t align, uint64_t *arena_bytes,
                          uint64_t *lower_bound);

#endif
