/* Small helpers used across the core. */
#ifndef SY_UTIL_H
#define SY_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "switchyard/sy_types.h"
#include <sys/stat.h>

char *sy_strdup(const char *s);                 /* NULL-safe; NULL on OOM */
char *sy_strndup(const char *s, size_t n);
char *sy_asprintf(const char *fmt, ...) SY_PRINTF(1, 2);
/* Append to buf[size] at *len (a list in a message): writes what fits, and
 * once the buffer is full *len stays at size, so later calls write nothing
 * (snprintf's return, added as it is, would step past the buffer). */
void sy_buf_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...) SY_PRINTF(4, 5);
void *sy_aligned_alloc(size_t size, size_t alignment); /* size 0 -> valid pointer */
void sy_aligned_free(void *p);
/* Checked multiply for sizes: false on overflow. */
bool sy_mul_overflow_size(size_t a, size_t b, size_t *out);
/* Element size of a dtype in bytes (0 for packed 4-bit, string, unknown). */
size_t sy_dtype_elem_size(sy_dtype dt);
bool sy_dtype_valid(int32_t dt);
/* Bytes for numel elements of dt (handles 4-bit packing); false on overflow. */
bool sy_dtype_bytes(sy_dtype dt, int64_t numel, size_t *out);
/* Directory part of a path (owned string); "." when none. */
char *sy_dirname(const char *path);
/* Join dir and name unless name is absolute. */
char *sy_path_join(const char *dir, const char *name);
uint64_t sy_now_ns(void);
/* Open a file the loader reads (model, external data, plugin, cache) so that
 * nothing blocks: O_NONBLOCK while opening (a FIFO would wait for a writer),
 * then fstat. Returns the fd of a regular file (blocking mode restored), -1
 * with errno when it cannot be opened, -2 when it is not a regular file
 * (sb->st_mode says what it is: sy_file_kind). */
int sy_open_regular(const char *path, struct stat *sb);
/* "a FIFO", "a directory", ... for a message */
const char *sy_file_kind(mode_t mode);

/* tensor_io.c: every record of string tensor `t` has data for its size and
 * a size no allocation could hold is refused; `where` names it. */
sy_status *sy_strings_check(const sy_tensor *t, const char *where);

#endif
