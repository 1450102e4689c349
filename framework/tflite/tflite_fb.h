/*
 * A small bounds-checked FlatBuffers reader for the TFLite importer.
 *
 * Every read goes through a reader that knows the buffer's size: table
 * offsets, vtables, field positions, vector lengths and strings are checked
 * against it before anything is dereferenced. The first failure is recorded
 * in the reader (`err`, with the byte offset where it happened) and every
 * later read returns the default, so callers check `fb_failed` at sensible
 * points instead of after every access. Nothing here allocates.
 */
#ifndef SY_TFLITE_FB_H
#define SY_TFLITE_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct fb_reader {
    const uint8_t *p;
    size_t n;
    char err[200]; /* first error, "" while none */
} fb_reader;

/* A table: position of its start and of its vtable, sizes checked. */
typedef struct fb_table {
    uint32_t pos;    /* 0 = absent */
    uint32_t vt;     /* vtable position */
    uint16_t vt_len; /* vtable bytes */
    uint16_t len;    /* table inline bytes */
} fb_table;

/* A vector: position of element 0 and the element count. */
typedef struct fb_vec {
    uint32_t pos; /* 0 = absent */
    uint32_t len;
} fb_vec;

void fb_init(fb_reader *r, const void *data, size_t size);
static inline bool fb_failed(const fb_reader *r) { return r->err[0] != '\0'; }
/* Record an error (the first one wins). */
void fb_fail(fb_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The root table (uoffset at byte 0). */
fb_table fb_root(fb_reader *r);
static inline bool fb_present(fb_table t) { return t.pos != 0; }

/* Scalars: the default when the field is absent; a field that does not
 * fit inside its table is an error. `what` names the field in messages. */
uint8_t fb_u8(fb_reader *r, fb_table t, unsigned id, uint8_t def, const char *what);
int8_t fb_i8(fb_reader *r, fb_table t, unsigned id, int8_t def, const char *what);
int32_t fb_i32(fb_reader *r, fb_table t, unsigned id, int32_t def, const char *what);
uint32_t fb_u32(fb_reader *r, fb_table t, unsigned id, uint32_t def, const char *what);
uint64_t fb_u64(fb_reader *r, fb_table t, unsigned id, uint64_t def, const char *what);
float fb_f32(fb_reader *r, fb_table t, unsigned id, float def, const char *what);
bool fb_has(fb_reader *r, fb_table t, unsigned id);

/* Offset fields: a sub-table, a vector of `elem` byte elements, a string
 * (pointer to NUL-terminated bytes inside the buffer, NULL when absent). */
fb_table fb_subtable(fb_reader *r, fb_table t, unsigned id, const char *what);
fb_vec fb_vector(fb_reader *r, fb_table t, unsigned id, size_t elem, const char *what);
const char *fb_string(fb_reader *r, fb_table t, unsigned id, uint32_t *len, const char *what);

/* Vector elements (index < v.len is the caller's job; checked again here). */
fb_table fb_vec_table(fb_reader *r, fb_vec v, uint32_t i, const char *what);
int32_t fb_vec_i32(fb_reader *r, fb_vec v, uint32_t i);
int64_t fb_vec_i64(fb_reader *r, fb_vec v, uint32_t i);
float fb_vec_f32(fb_reader *r, fb_vec v, uint32_t i);
uint8_t fb_vec_u8(fb_reader *r, fb_vec v, uint32_t i);
static inline const uint8_t *fb_vec_bytes(const fb_reader *r, fb_vec v) { return r->p + v.pos; }

#endif
