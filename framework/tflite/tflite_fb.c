/* Bounds-checked FlatBuffers reads (see tflite_fb.h). All reads use memcpy,
 * so unaligned data is read safely; positions are computed in 64 bits so
 * that no offset arithmetic can wrap. */
#include "tflite_fb.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void fb_init(fb_reader *r, const void *data, size_t size)
{
    r->p = data;
    r->n = size;
    r->err[0] = '\0';
}

void fb_fail(fb_reader *r, const char *fmt, ...)
{
    if (r->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    if (!r->err[0])
        snprintf(r->err, sizeof r->err, "corrupt FlatBuffer");
}

static bool in_bounds(const fb_reader *r, uint64_t pos, uint64_t len) { return pos <= r->n && len <= r->n - pos; }

static uint16_t rd16(const fb_reader *r, uint64_t pos)
{
    uint16_t v;
    memcpy(&v, r->p + pos, sizeof v);
    return v;
}

static uint32_t rd32(const fb_reader *r, uint64_t pos)
{
    uint32_t v;
    memcpy(&v, r->p + pos, sizeof v);
    return v;
}

/* Validate a table at `pos` and its vtable. */
static fb_table table_at(fb_reader *r, uint64_t pos, const char *what)
{
    fb_table t = {0, 0, 0, 0};
    if (fb_failed(r))
        return t;
    if (pos == 0 || !in_bounds(r, pos, 4) || pos > UINT32_MAX) {
        fb_fail(r, "%s: table offset %llu is outside the file (%zu bytes)", what, (unsigned long long)pos, r->n);
        return t;
    }
    int32_t soff;
    uint32_t raw = rd32(r, pos);
    memcpy(&soff, &raw, sizeof soff);
    int64_t vt = (int64_t)pos - (int64_t)soff;
    if (vt < 0 || !in_bounds(r, (uint64_t)vt, 4)) {
        fb_fail(r, "%s: vtable of the table at offset %llu points outside the file", what, (unsigned long long)pos);
        return t;
    }
    uint16_t vt_len = rd16(r, (uint64_t)vt), len = rd16(r, (uint64_t)vt + 2);
    if (vt_len < 4 || (vt_len & 1u) || !in_bounds(r, (uint64_t)vt, vt_len)) {
        fb_fail(r, "%s: vtable at offset %lld has an invalid size %u", what, (long long)vt, vt_len);
        return t;
    }
    if (len < 4 || !in_bounds(r, pos, len)) {
        fb_fail(r, "%s: table at offset %llu has size %u, which runs past the end of the file", what,
                (unsigned long long)pos, len);
        return t;
    }
    t.pos = (uint32_t)pos;
    t.vt = (uint32_t)vt;
    t.vt_len = vt_len;
    t.len = len;
    return t;
}

fb_table fb_root(fb_reader *r)
{
    if (r->n < 8) {
        fb_fail(r, "file is %zu bytes, too short for a FlatBuffer", r->n);
        return (fb_table){0, 0, 0, 0};
    }
    return table_at(r, rd32(r, 0), "root table");
}

/* Position of field `id` inside table t (0 when absent); checks `size`. */
static uint32_t field_pos(fb_reader *r, fb_table t, unsigned id, size_t size, const char *what)
{
    if (fb_failed(r) || !t.pos)
        return 0;
    uint32_t slot = 4u + 2u * id;
    if (slot + 2u > t.vt_len)
        return 0;
    uint16_t off = rd16(r, (uint64_t)t.vt + slot);
    if (!off)
        return 0;
    if ((uint64_t)off + size > t.len) {
        fb_fail(r, "%s: field at table offset %u runs past the table (%u bytes) at file offset %u", what, off,
                t.len, t.pos);
        return 0;
    }
    return t.pos + off;
}

bool fb_has(fb_reader *r, fb_table t, unsigned id) { return field_pos(r, t, id, 1, "field") != 0; }

#define SCALAR_GETTER(NAME, T)                                                                                     \
    T NAME(fb_reader *r, fb_table t, unsigned id, T def, const char *what)                                         \
    {                                                                                                              \
        uint32_t fp = field_pos(r, t, id, sizeof(T), what);                                                        \
        if (!fp)                                                                                                   \
            return def;                                                                                            \
        T v;                                                                                                       \
        memcpy(&v, r->p + fp, sizeof v);                                                                           \
        return v;                                                                                                  \
    }
SCALAR_GETTER(fb_u8, uint8_t)
SCALAR_GETTER(fb_i8, int8_t)
SCALAR_GETTER(fb_i32, int32_t)
SCALAR_GETTER(fb_u32, uint32_t)
SCALAR_GETTER(fb_u64, uint64_t)
SCALAR_GETTER(fb_f32, float)

/* Follow the uoffset stored in field `id`; 0 when absent. */
static uint64_t deref(fb_reader *r, fb_table t, unsigned id, const char *what)
{
    uint32_t fp = field_pos(r, t, id, 4, what);
    if (!fp)
        return 0;
    uint32_t u = rd32(r, fp);
    uint64_t target = (uint64_t)fp + u;
    if (u == 0 || target >= r->n) {
        fb_fail(r, "%s: offset %u at file offset %u points outside the file (%zu bytes)", what, u, fp, r->n);
        return 0;
    }
    return target;
}

fb_table fb_subtable(fb_reader *r, fb_table t, unsigned id, const char *what)
{
    uint64_t target = deref(r, t, id, what);
    if (!target)
        return (fb_table){0, 0, 0, 0};
    return table_at(r, target, what);
}

static fb_vec vector_at(fb_reader *r, uint64_t target, size_t elem, const char *what)
{
    fb_vec v = {0, 0};
    if (!in_bounds(r, target, 4)) {
        fb_fail(r, "%s: vector length at file offset %llu is outside the file", what, (unsigned long long)target);
        return v;
    }
    uint32_t len = rd32(r, target);
    if (target + 4 > UINT32_MAX) {
        fb_fail(r, "%s: vector at file offset %llu is beyond the 4 GiB FlatBuffer limit", what, (unsigned long long)target);
        return v;
    }
    if (!in_bounds(r, target + 4, (uint64_t)len * elem)) {
        fb_fail(r, "%s: vector of %u elements at file offset %llu runs past the end of the file (%zu bytes)", what,
                len, (unsigned long long)target, r->n);
        return v;
    }
    v.pos = (uint32_t)(target + 4);
    v.len = len;
    return v;
}

fb_vec fb_vector(fb_reader *r, fb_table t, unsigned id, size_t elem, const char *what)
{
    uint64_t target = deref(r, t, id, what);
    if (!target)
        return (fb_vec){0, 0};
    return vector_at(r, target, elem, what);
}

const char *fb_string(fb_reader *r, fb_table t, unsigned id, uint32_t *len, const char *what)
{
    if (len)
        *len = 0;
    uint64_t target = deref(r, t, id, what);
    if (!target)
        return NULL;
    fb_vec v = vector_at(r, target, 1, what);
    if (!v.pos)
        return NULL;
    /* FlatBuffers strings carry a terminating NUL after the bytes */
    if (!in_bounds(r, (uint64_t)v.pos + v.len, 1) || r->p[v.pos + v.len] != 0) {
        fb_fail(r, "%s: string at file offset %llu is not NUL-terminated", what, (unsigned long long)target);
        return NULL;
    }
    if (memchr(r->p + v.pos, 0, v.len)) {
        fb_fail(r, "%s: string at file offset %llu contains a NUL byte", what, (unsigned long long)target);
        return NULL;
    }
    if (len)
        *len = v.len;
    return (const char *)r->p + v.pos;
}

fb_table fb_vec_table(fb_reader *r, fb_vec v, uint32_t i, const char *what)
{
    if (fb_failed(r) || !v.pos || i >= v.len) {
        if (!fb_failed(r))
            fb_fail(r, "%s: element %u of a vector of %u", what, i, v.len);
        return (fb_table){0, 0, 0, 0};
    }
    uint64_t at = (uint64_t)v.pos + 4ull * i;
    uint32_t u = rd32(r, at);
    uint64_t target = at + u;
    if (u == 0 || target >= r->n) {
        fb_fail(r, "%s: element %u offset %u points outside the file", what, i, u);
        return (fb_table){0, 0, 0, 0};
    }
    return table_at(r, target, what);
}

#define VEC_GETTER(NAME, T)                                                                                        \
    T NAME(fb_reader *r, fb_vec v, uint32_t i)                                                                     \
    {                                                                                                              \
        if (fb_failed(r) || !v.pos || i >= v.len) {                                                                \
            fb_fail(r, "vector element %u read past its length %u", i, v.len);                                    \
            return 0;                                                                                              \
        }                                                                                                          \
        T x;                                                                                                       \
        memcpy(&x, r->p + v.pos + (uint64_t)i * sizeof(T), sizeof x);                                              \
        return x;                                                                                                  \
    }
VEC_GETTER(fb_vec_i32, int32_t)
VEC_GETTER(fb_vec_i64, int64_t)
VEC_GETTER(fb_vec_f32, float)
VEC_GETTER(fb_vec_u8, uint8_t)
