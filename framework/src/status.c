#include "status.h"
#include "switchyard/switchyard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sy_status {
    sy_status_code code;
    bool is_static;
    char *message;
};

static struct sy_status oom_status = {SY_ERR_OUT_OF_MEMORY, true, (char *)"out of memory"};

sy_status *sy_error_oom(void) { return &oom_status; }

sy_status *sy_verror(sy_status_code code, const char *fmt, va_list ap)
{
    sy_status *st = malloc(sizeof *st);
    if (!st)
        return &oom_status;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    st->message = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!st->message) {
        free(st);
        return &oom_status;
    }
    vsnprintf(st->message, (size_t)n + 1, fmt, ap);
    st->code = code == SY_OK ? SY_ERR_INTERNAL : code;
    st->is_static = false;
    return st;
}

sy_status *sy_error(sy_status_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_status *st = sy_verror(code, fmt, ap);
    va_end(ap);
    return st;
}

sy_status *sy_error_wrap(sy_status *st, const char *fmt, ...)
{
    if (!st || st->is_static)
        return st;
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t len = strlen(prefix) + 2 + strlen(st->message) + 1;
    char *m = malloc(len);
    if (!m)
        return st; /* keep the original message rather than lose it */
    snprintf(m, len, "%s: %s", prefix, st->message);
    free(st->message);
    st->message = m;
    return st;
}

sy_status_code sy_status_code_of(const sy_status *st) { return st ? st->code : SY_OK; }
const char *sy_status_msg(const sy_status *st) { return st ? st->message : "ok"; }

SY_EXPORT sy_status_code sy_status_get_code(const sy_status *st) { return sy_status_code_of(st); }
SY_EXPORT const char *sy_status_get_message(const sy_status *st) { return sy_status_msg(st); }
SY_EXPORT sy_status *sy_status_create(sy_status_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_status *st = sy_verror(code, fmt, ap);
    va_end(ap);
    return st;
}

SY_EXPORT void sy_status_free(sy_status *st)
{
    if (!st || st->is_static)
        return;
    free(st->message);
    free(st);
}

SY_EXPORT const char *sy_status_code_name(sy_status_code code)
{
    static const char *const names[SY_ERR__COUNT] = {
        [SY_OK] = "OK",
        [SY_ERR_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
        [SY_ERR_NOT_FOUND] = "NOT_FOUND",
        [SY_ERR_NOT_IMPLEMENTED] = "NOT_IMPLEMENTED",
        [SY_ERR_OUT_OF_MEMORY] = "OUT_OF_MEMORY",
        [SY_ERR_IO] = "IO",
        [SY_ERR_INVALID_MODEL] = "INVALID_MODEL",
        [SY_ERR_INVALID_CONFIG] = "INVALID_CONFIG",
        [SY_ERR_PLUGIN] = "PLUGIN",
        [SY_ERR_ABI_MISMATCH] = "ABI_MISMATCH",
        [SY_ERR_SHAPE] = "SHAPE",
        [SY_ERR_TYPE] = "TYPE",
        [SY_ERR_UNSUPPORTED] = "UNSUPPORTED",
        [SY_ERR_RUNTIME] = "RUNTIME",
        [SY_ERR_INTERNAL] = "INTERNAL",
        [SY_ERR_CONTEXT_EXHAUSTED] = "CONTEXT_EXHAUSTED",
        [SY_ERR_DYNAMIC_SHAPE] = "DYNAMIC_SHAPE",
        [SY_ERR_PIN_MISMATCH] = "PIN_MISMATCH",
        [SY_ERR_BUDGET] = "BUDGET",
    };
    if ((unsigned)code >= SY_ERR__COUNT || !names[code])
        return "UNKNOWN";
    return names[code];
}
