/* Reading inputs and writing outputs of the tools: whole files in memory,
 * outputs through a temporary file and a rename (never half-written). */
#ifndef SY_TL_FILES_H
#define SY_TL_FILES_H

#include <switchyard/switchyard.h>

#include <stdint.h>

/* The whole file, malloc'd (one spare byte); the caller frees *data. */
sy_status *tl_read_file(const char *path, uint8_t **data, size_t *size);
/* a then b into PATH.tmp.XXXXXX, fsync, mode 0644, rename to path. */
sy_status *tl_write_atomic(const char *path, const void *a, size_t alen, const void *b, size_t blen);
/* a then b into PATH.tmp.XXXXXX (its name in tmp), fsync, mode 0644; the
 * caller renames it (tl_commit_temp) or unlinks it. */
sy_status *tl_write_temp(const char *path, const void *a, size_t alen, const void *b, size_t blen, char *tmp,
                         size_t tmp_len);
/* rename tmp to path; tmp is removed when that fails */
sy_status *tl_commit_temp(const char *tmp, const char *path);
/* mkdir -p */
sy_status *tl_mkdirs(const char *path);
/* st with "what: " in front of its message (st itself is freed); NULL stays NULL. */
sy_status *tl_status_prefix(sy_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
