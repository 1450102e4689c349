/* Status handles: creation with a formatted message, and context prefixes
 * added as an error travels up (file, plugin, node, phase). */
#ifndef SY_STATUS_INTERNAL_H
#define SY_STATUS_INTERNAL_H

#include "switchyard/sy_types.h"
#include <stdarg.h>

sy_status *sy_error(sy_status_code code, const char *fmt, ...) SY_PRINTF(2, 3);
sy_status *sy_verror(sy_status_code code, const char *fmt, va_list ap);
/* Prepend "<context>: " to the message of `st` (returns st; NULL stays NULL). */
sy_status *sy_error_wrap(sy_status *st, const char *fmt, ...) SY_PRINTF(2, 3);
sy_status_code sy_status_code_of(const sy_status *st);
const char *sy_status_msg(const sy_status *st);
/* The shared out-of-memory status (never freed, safe when malloc fails). */
sy_status *sy_error_oom(void);

#define SY_TRY(expr)                                                                                               \
    do {                                                                                                           \
        sy_status *sy_try_st_ = (expr);                                                                            \
        if (sy_try_st_)                                                                                            \
            return sy_try_st_;                                                                                     \
    } while (0)

#endif
