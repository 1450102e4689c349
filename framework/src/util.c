#include "util.h"
#include "switchyard/sy_dtype_table.h"
#include "switchyard/switchyard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

char *sy_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

char *sy_strndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *sy_asprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void sy_buf_appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (!size || *len >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    *len = n < 0 || (size_t)n >= size - *len ? size : *len + (size_t)n;
}

void *sy_aligned_alloc(size_t size, size_t alignment)
{
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0)
        return NULL;
    return p;
}

void sy_aligned_free(void *p) { free(p); }

bool sy_mul_overflow_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* sy_dtype_table.h: the table the SDK's sy_dt_size reads too */
size_t sy_dtype_elem_size(sy_dtype dt) { return sy_dtype_table_size(dt); }

bool sy_dtype_valid(int32_t dt)
{
    return dt == SY_DT_INT4 || dt == SY_DT_UINT4 || dt == SY_DT_FLOAT4E2M1 || dt == SY_DT_INT2 || dt == SY_DT_UINT2 ||
           (dt > 0 && sy_dtype_elem_size((sy_dtype)dt) > 0);
}

bool sy_dtype_bytes(sy_dtype dt, int64_t numel, size_t *out)
{
    if (numel < 0)
        return false;
    if (dt == SY_DT_INT4 || dt == SY_DT_UINT4 || dt == SY_DT_FLOAT4E2M1) {
        *out = ((size_t)numel + 1) / 2;
        return true;
    }
    if (dt == SY_DT_INT2 || dt == SY_DT_UINT2) {
        *out = ((size_t)numel + 3) / 4;
        return true;
    }
    size_t es = sy_dtype_elem_size(dt);
    if (!es)
        return false;
    return sy_mul_overflow_size((size_t)numel, es, out);
}

char *sy_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sy_strdup(".");
    if (slash == path)
        return sy_strdup("/");
    return sy_strndup(path, (size_t)(slash - path));
}

char *sy_path_join(const char *dir, const char *name)
{
    if (!dir || !*dir || name[0] == '/')
        return sy_strdup(name);
    return sy_asprintf("%s/%s", dir, name);
}

uint64_t sy_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

SY_EXPORT const char *sy_dtype_name(sy_dtype dt) { return sy_dtype_table_name(dt); }

SY_EXPORT size_t sy_dtype_size(sy_dtype dt) { return sy_dtype_elem_size(dt); }
SY_EXPORT const char *sy_version(void) { return SY_VERSION_STRING; }

SY_EXPORT int64_t sy_tensor_numel(const sy_tensor *t)
{
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++)
        n *= t->dims[i];
    return n;
}

int sy_open_regular(const char *path, struct stat *sb)
{
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb->st_mode)) {
        close(fd);
        return -2;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

const char *sy_file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}
