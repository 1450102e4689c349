/*
 * Profiling: events for nodes (timed by the core) and for plugins (e.g.
 * modelled cycles of an emulator) go to a per-session buffer preallocated at
 * creation, so recording never allocates on the run path; when it is full
 * the oldest events are overwritten (a ring). Written out as a Chrome trace.
 */
#include "session.h"
#include "status.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SY_PROFILE_CAPACITY 65536

sy_status *sy_profile_init(struct sy_session *s)
{
    if (!s->profiling)
        return NULL;
    s->prof = calloc(SY_PROFILE_CAPACITY, sizeof *s->prof);
    if (!s->prof)
        return sy_error(SY_ERR_OUT_OF_MEMORY, "cannot allocate the profiling buffer");
    s->prof_cap = SY_PROFILE_CAPACITY;
    return NULL;
}

void sy_profile_free(struct sy_session *s)
{
    free(s->prof);
    s->prof = NULL;
}

bool sy_profiling_enabled(const sy_run_ctx *rc) { return rc && rc->profiling; }

static sy_prof_rec *next_slot(struct sy_session *s)
{
    uint64_t i = __atomic_fetch_add(&s->prof_count, 1, __ATOMIC_RELAXED);
    return &s->prof[i % s->prof_cap];
}

void sy_profile_record(sy_run_ctx *rc, const sy_profile_event *ev)
{
    if (!rc || !rc->profiling || !ev || ev->struct_size < sizeof(uint32_t) * 2)
        return;
    struct sy_session *s = rc->s;
    sy_prof_rec *r = next_slot(s);
    snprintf(r->name, sizeof r->name, "%s", ev->name ? ev->name : "?");
    snprintf(r->category, sizeof r->category, "%s", ev->category ? ev->category : "plugin");
    r->start_ns = ev->start_ns;
    r->duration_ns = ev->duration_ns;
    r->cycles = ev->cycles;
    r->tid = rc->tid;
    r->node = -1;
}

void sy_profile_node(struct sy_session *s, uint32_t node, uint64_t t0, uint64_t t1, int tid)
{
    sy_prof_rec *r = next_slot(s);
    const sy_node_rt *nr = &s->nodes[node];
    snprintf(r->name, sizeof r->name, "%s", nr->view.ir->name);
    snprintf(r->category, sizeof r->category, "%s", nr->view.ir->op);
    r->start_ns = t0;
    r->duration_ns = t1 - t0;
    r->cycles = -1;
    r->tid = tid;
    r->node = (int32_t)node;
}

SY_EXPORT size_t sy_session_profile_event_count(const sy_session *s)
{
    if (!s || !s->prof)
        return 0;
    return s->prof_count < s->prof_cap ? (size_t)s->prof_count : s->prof_cap;
}

static const sy_prof_rec *event_at(const sy_session *s, size_t index)
{
    size_t n = sy_session_profile_event_count(s);
    if (index >= n)
        return NULL;
    uint64_t first = s->prof_count > s->prof_cap ? s->prof_count - s->prof_cap : 0;
    return &s->prof[(first + index) % s->prof_cap];
}

SY_EXPORT bool sy_session_profile_event(const sy_session *s, size_t index, sy_profile_event *out)
{
    const sy_prof_rec *r = event_at(s, index);
    if (!r || !out || out->struct_size < sizeof *out)
        return false;
    *out = (sy_profile_event){sizeof *out, r->name, r->category, r->start_ns, r->duration_ns, r->cycles};
    return true;
}

SY_EXPORT void sy_session_profile_clear(sy_session *s)
{
    if (s)
        s->prof_count = 0;
}

static void json_string(FILE *f, const char *str)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

SY_EXPORT sy_status *sy_session_write_trace(const sy_session *s, const char *path)
{
    if (!s || !path)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_write_trace: session and path are required");
    if (!s->prof)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "%s: profiling was not enabled for this session", path);
    char *tmp = sy_asprintf("%s.tmp.XXXXXX", path);
    if (!tmp)
        return sy_error_oom();
    int fd = mkstemp(tmp);
    if (fd < 0) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: cannot create a temporary file: %s", path, strerror(errno));
        free(tmp);
        return st;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return sy_error(SY_ERR_IO, "%s: %s", path, strerror(errno));
    }
    size_t n = sy_session_profile_event_count(s);
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (event_at(s, i)->start_ns < t0)
            t0 = event_at(s, i)->start_ns;
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":");
    json_string(f, s->model->ir->path);
    fprintf(f, "}}");
    for (size_t i = 0; i < n; i++) {
        const sy_prof_rec *r = event_at(s, i);
        const char *provider = r->node >= 0 && s->nodes[r->node].provider ? s->nodes[r->node].provider->def.name : "";
        fprintf(f, ",\n{\"name\":");
        json_string(f, r->name);
        fprintf(f, ",\"cat\":");
        json_string(f, r->category);
        fprintf(f, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{", r->tid,
                (double)(r->start_ns - t0) / 1000.0, (double)r->duration_ns / 1000.0);
        fprintf(f, "\"provider\":");
        json_string(f, provider);
        if (r->cycles >= 0)
            fprintf(f, ",\"cycles\":%lld", (long long)r->cycles);
        fprintf(f, "}}");
    }
    fprintf(f, "\n]}\n");
    bool ok = !ferror(f);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        sy_status *st = sy_error(SY_ERR_IO, "%s: cannot write the trace: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return st;
    }
    free(tmp);
    return NULL;
}
