/* Opening the bundle's files (bundle.ini, tokenizer, saved states): a FIFO
 * or device named like one must be refused, not waited on, so the file is
 * opened with O_NONBLOCK and checked with fstat before it is read. */
#include "llm_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *llm_fopen_regular(const char *path, const char *mode)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        errno = EFTYPE_LLM;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, mode);
    if (!f)
        close(fd);
    return f;
}
