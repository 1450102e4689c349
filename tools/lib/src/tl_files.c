#include "tl_files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sy_status *tl_read_file(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return sy_status_create(errno == ENOENT ? SY_ERR_NOT_FOUND : SY_ERR_IO, "%s: cannot open: %s", path,
                                strerror(errno));
    long sz = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
        int err = errno;
        fclose(f);
        return sy_status_create(SY_ERR_IO, "%s: cannot size the file: %s", path, strerror(err));
    }
    uint8_t *buf = malloc((size_t)sz + 1);
    if (!buf) {
        fclose(f);
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory (%ld bytes)", path, sz);
    }
    if (sz && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        free(buf);
        fclose(f);
        return sy_status_create(SY_ERR_IO, "%s: short read", path);
    }
    fclose(f);
    *data = buf;
    *size = (size_t)sz;
    return NULL;
}

static bool write_all(int fd, const void *p, size_t len)
{
    const uint8_t *b = p;
    while (len) {
        ssize_t w = write(fd, b, len);
        if (w <= 0)
            return false;
        b += w;
        len -= (size_t)w;
    }
    return true;
}

sy_status *tl_write_temp(const char *path, const void *a, size_t alen, const void *b, size_t blen, char *tmp,
                         size_t tmp_len)
{
    int r = snprintf(tmp, tmp_len, "%s.tmp.XXXXXX", path);
    if (r < 0 || (size_t)r >= tmp_len)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "%s: path too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return sy_status_create(SY_ERR_IO, "%s: cannot create a temporary file: %s", path, strerror(errno));
    if (!write_all(fd, a, alen) || !write_all(fd, b, blen)) {
        int err = errno;
        close(fd);
        unlink(tmp);
        return sy_status_create(SY_ERR_IO, "%s: write failed: %s", tmp, strerror(err));
    }
    if (fsync(fd) || close(fd) || chmod(tmp, 0644)) {
        int err = errno;
        unlink(tmp);
        return sy_status_create(SY_ERR_IO, "%s: could not finish writing: %s", path, strerror(err));
    }
    return NULL;
}

sy_status *tl_commit_temp(const char *tmp, const char *path)
{
    if (rename(tmp, path)) {
        int err = errno;
        unlink(tmp);
        return sy_status_create(SY_ERR_IO, "%s: could not finish writing: %s", path, strerror(err));
    }
    return NULL;
}

sy_status *tl_write_atomic(const char *path, const void *a, size_t alen, const void *b, size_t blen)
{
    char tmp[4096];
    sy_status *st = tl_write_temp(path, a, alen, b, blen, tmp, sizeof tmp);
    return st ? st : tl_commit_temp(tmp, path);
}

sy_status *tl_mkdirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "%s: path too long", path);
    strcpy(buf, path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (buf[0] && mkdir(buf, 0777) != 0 && errno != EEXIST)
                return sy_status_create(SY_ERR_IO, "%s: cannot create directory: %s", buf, strerror(errno));
            *p = saved;
            if (!saved)
                break;
        }
    }
    return NULL;
}

sy_status *tl_status_prefix(sy_status *st, const char *fmt, ...)
{
    if (!st)
        return NULL;
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sy_status *out = sy_status_create(sy_status_get_code(st), "%s: %s", what, sy_status_get_message(st));
    sy_status_free(st);
    return out;
}
