/*
 * String tensor helpers for kernel authors (sy_sdk.h, "string tensors").
 */
#include "switchyard/sy_sdk.h"

#include <string.h>

bool sy_str_equal(const sy_string *a, const sy_string *b)
{
    return a->size == b->size && (!a->size || memcmp(a->data, b->data, (size_t)a->size) == 0);
}

sy_status *sy_str_alloc(const sy_host_api *host, const sy_kernel_io *io, size_t size, char **out)
{
    *out = NULL;
    if (!sy_host_has_run_alloc(host))
        return host->status_new(SY_ERR_UNSUPPORTED, "string outputs need a host of ABI 1.3 or later (run_alloc); this "
                                "host is %u.%u", host->abi_major, host->abi_minor);
    *out = host->run_alloc(io->run, size);
    if (!*out)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "no room for %zu bytes of output strings (out of memory or over "
                                "the session's max_arena_bytes)", size);
    return NULL;
}

size_t sy_utf8_valid_prefix(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            len = 2, cp = c & 0x1f, min = 0x80;
        } else if ((c & 0xf0) == 0xe0) {
            len = 3, cp = c & 0x0f, min = 0x800;
        } else if ((c & 0xf8) == 0xf0) {
            len = 4, cp = c & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (n - i < len)
            return i;
        for (size_t k = 1; k < len; k++) {
            if ((u[i + k] & 0xc0) != 0x80)
                return i;
            cp = (cp << 6) | (u[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return i;
        i += len;
    }
    return n;
}

uint32_t sy_utf8_next(const char *s, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s + *i;
    if (u[0] < 0x80) {
        *i += 1;
        return u[0];
    }
    size_t len = (u[0] & 0xe0) == 0xc0 ? 2 : (u[0] & 0xf0) == 0xe0 ? 3 : 4;
    uint32_t cp = u[0] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    for (size_t k = 1; k < len; k++)
        cp = (cp << 6) | (u[k] & 0x3f);
    *i += len;
    return cp;
}

size_t sy_utf8_put(uint32_t c, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (c < 0x80) {
        o[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xc0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (c >> 18));
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (c & 0x3f));
    return 4;
}
