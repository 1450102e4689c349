/*
 * ops_string: what the files of the family share.
 */
#ifndef OPS_STRING_INTERNAL_H
#define OPS_STRING_INTERNAL_H

#include "switchyard/sy_sdk.h"

/* the host table, set by string_init before any callback runs */
extern const sy_host_api *sy_string_host;

/* the strings of tensor t */
static inline const sy_string *str_data(const sy_tensor *t) { return (const sy_string *)t->data; }

/* X (input `i`) must be a string tensor: SY_ERR_TYPE naming `what` otherwise */
sy_status *str_need_input(sy_node *n, uint32_t i, const char *what, const sy_tensor **out);
/* element `i` of t is valid UTF-8, else SY_ERR_INVALID_ARGUMENT naming the
 * element and the byte offset (operators that read characters call it) */
sy_status *str_check_utf8(const sy_tensor *t, int64_t i, const char *what);

sy_status *string_normalizer_register(const sy_host_api *host, sy_plugin *p);
/* the environment is done with the family: the last one frees the locale */
void string_normalizer_release(void);
sy_status *string_regex_register(const sy_host_api *host, sy_plugin *p);

#endif
