/*
 * sy_test_ok(st, what): st, a Switchyard status, must be NULL (success);
 * otherwise one CHECK failure naming what, the code and the message. The
 * status is freed. Returns whether it was NULL.
 */
#ifndef SY_TEST_STATUS_H
#define SY_TEST_STATUS_H

#include "switchyard/switchyard.h"
#include "sy_test.h"

#include <stdbool.h>

static inline bool sy_test_ok(sy_status *st, const char *what)
{
    if (!st)
        return true;
    CHECK(st == NULL, "%s: %s: %s", what, sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
    sy_status_free(st);
    return false;
}

#endif
