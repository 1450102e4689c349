/*
 * The providers' per-session states (ABI 1.2 session_begin / session_end):
 * what a provider records while it places one session's nodes lives with
 * that session, so sessions of one environment created from several
 * threads share nothing a placement writes.
 */
#include "session.h"
#include "status.h"

#include <stdlib.h>

/* The session whose session_begin callbacks run on this thread (ABI 1.5
 * host->session_threads, and host->log reaching its environment's logger).
 * Thread-local because sessions of one environment, or of several, may be
 * created from several threads at once; saved and restored around the calls
 * in case a provider's session_begin creates a session of its own. */
static _Thread_local const struct sy_session *beginning;

const struct sy_session *sy_provider_session_beginning(void) { return beginning; }

sy_status *sy_provider_sessions_begin(struct sy_session *s)
{
    sy_env *env = s->env;
    if (!env->n_providers)
        return NULL;
    s->prov = calloc(env->n_providers, sizeof *s->prov);
    if (!s->prov)
        return sy_error_oom();
    sy_status *st = NULL;
    const struct sy_session *outer = beginning;
    beginning = s;
    for (uint32_t i = 0; i < env->n_providers && !st; i++) {
        sy_provider_rec *r = env->providers[i];
        if (!r->created || !r->def.session_begin)
            continue;
        st = r->def.session_begin(r->state, &s->prov[i].state);
        if (st)
            st = sy_error_wrap(st, "provider '%s': session_begin", r->def.name);
        else
            s->prov[i].begun = true;
    }
    beginning = outer;
    return st;
}

void sy_provider_sessions_end(struct sy_session *s)
{
    if (!s->prov)
        return;
    for (uint32_t i = 0; i < s->env->n_providers; i++) {
        sy_provider_rec *r = s->env->providers[i];
        if (s->prov[i].begun && r->def.session_end)
            r->def.session_end(r->state, s->prov[i].state);
    }
    free(s->prov);
    s->prov = NULL;
}

void *sy_provider_session_of(const struct sy_session *s, const sy_provider_rec *pr)
{
    return s->prov && pr && pr->index < s->env->n_providers && s->env->providers[pr->index] == pr
               ? s->prov[pr->index].state
               : NULL;
}
