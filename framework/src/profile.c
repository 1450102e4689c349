/* Profiling events: a per-session record of node timings and plugin events.
 * Kept minimal here; the Chrome trace writer builds on it. */
#include "session.h"

bool sy_profiling_enabled(const sy_run_ctx *rc) { return rc && rc->profiling; }

void sy_profile_record(sy_run_ctx *rc, const sy_profile_event *ev)
{
    (void)rc;
    (void)ev;
}

void sy_profile_node(struct sy_session *s, uint32_t node, uint64_t t0, uint64_t t1)
{
    (void)s;
    (void)node;
    (void)t0;
    (void)t1;
}
