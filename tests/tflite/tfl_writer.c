/* FlatBuffers writer for test .tflite models (see tfl_writer.h). Field ids
 * are those of TFLite's public schema.fbs. */
#include "tfl_writer.h"

#include <stdlib.h>
#include <string.h>

typedef struct wbuf {
    uint8_t *b;
    size_t n, cap;
    bool oom;
} wbuf;

static size_t put(wbuf *w, const void *p, size_t len)
{
    if (w->oom)
        return w->n;
    if (w->n + len > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->n + len)
            cap *= 2;
        uint8_t *nb = realloc(w->b, cap);
        if (!nb) {
            w->oom = true;
            return w->n;
        }
        w->b = nb;
        w->cap = cap;
    }
    size_t at = w->n;
    if (p)
        memcpy(w->b + at, p, len);
    else
        memset(w->b + at, 0, len);
    w->n += len;
    return at;
}

static void align(wbuf *w, size_t a)
{
    while (!w->oom && w->n % a)
        put(w, NULL, 1);
}

/* uoffset at `slot` pointing at `target` (target > slot) */
static void patch(wbuf *w, size_t slot, size_t target)
{
    if (w->oom)
        return;
    uint32_t off = (uint32_t)(target - slot);
    memcpy(w->b + slot, &off, 4);
}

/* A vector: u32 count then the elements, elements aligned to 8 so that
 * 8-byte elements are naturally aligned. Returns the count's position. */
static size_t vec(wbuf *w, const void *data, uint32_t count, size_t elem)
{
    while (!w->oom && (w->n + 4) % 8)
        put(w, NULL, 1);
    size_t at = put(w, &count, 4);
    put(w, data, (size_t)count * elem);
    return at;
}

static size_t str(wbuf *w, const char *s)
{
    uint32_t len = (uint32_t)strlen(s);
    align(w, 4);
    size_t at = put(w, &len, 4);
    put(w, s, len + 1);
    return at;
}

/* ---- tables ---------------------------------------------------------------- */

typedef struct field {
    uint8_t id;
    uint8_t size; /* 1, 4 or 8 bytes; offsets are 4 */
    bool is_offset;
    uint64_t bits;
    size_t pos; /* absolute position, set by table_end */
} field;

typedef struct table {
    field f[16];
    int n;
} table;

static field *add(table *t, uint8_t id, uint8_t size, uint64_t bits, bool is_offset)
{
    field *f = &t->f[t->n++];
    f->id = id;
    f->size = size;
    f->bits = bits;
    f->is_offset = is_offset;
    f->pos = 0;
    return f;
}
static void t_u8(table *t, uint8_t id, uint8_t v) { add(t, id, 1, v, false); }
static void t_i32(table *t, uint8_t id, int32_t v) { add(t, id, 4, (uint32_t)v, false); }
static void t_f32(table *t, uint8_t id, float v)
{
    uint32_t b;
    memcpy(&b, &v, 4);
    add(t, id, 4, b, false);
}
static field *t_off(table *t, uint8_t id) { return add(t, id, 4, 0, true); }

/* vtable, then the table: soffset, then fields by decreasing size (each
 * naturally aligned). Returns the table's position. */
static size_t table_end(wbuf *w, table *t)
{
    int max_id = -1;
    for (int i = 0; i < t->n; i++)
        if (t->f[i].id > max_id)
            max_id = t->f[i].id;
    uint16_t n_slots = (uint16_t)(max_id + 1);
    uint16_t vt[2 + 32] = {0};
    vt[0] = (uint16_t)(4 + 2 * n_slots);
    /* inline layout, relative to the table start (the table starts 8-aligned) */
    uint16_t rel[16];
    uint16_t off = 4;
    for (uint8_t size = 8; size >= 1; size /= 2)
        for (int i = 0; i < t->n; i++)
            if (t->f[i].size == size) {
                while (off % size)
                    off++;
                rel[i] = off;
                off += size;
            }
    vt[1] = off;
    for (int i = 0; i < t->n; i++)
        vt[2 + t->f[i].id] = rel[i];
    align(w, 2);
    size_t vt_pos = put(w, vt, (size_t)vt[0]);
    align(w, 8);
    size_t tpos = w->n;
    int32_t soff = (int32_t)(tpos - vt_pos);
    put(w, NULL, off);
    if (w->oom)
        return tpos;
    memcpy(w->b + tpos, &soff, 4);
    for (int i = 0; i < t->n; i++) {
        t->f[i].pos = tpos + rel[i];
        memcpy(w->b + t->f[i].pos, &t->f[i].bits, t->f[i].size); /* little-endian host */
    }
    return tpos;
}

/* a vector of `count` table offsets, patched later via the returned slots */
static size_t table_vec(wbuf *w, uint32_t count)
{
    return vec(w, NULL, count, 4);
}
static size_t table_vec_slot(size_t vpos, uint32_t i) { return vpos + 4 + 4 * (size_t)i; }

/* ---- model ------------------------------------------------------------------- */

static void write_options(wbuf *w, const tflw_op *op, field *fo)
{
    table t = {.n = 0};
    field *vecs[16] = {0};
    for (int i = 0; i < op->n_opts && i < 16; i++) {
        const tflw_opt *o = &op->opts[i];
        switch (o->kind) {
        case TFLW_OPT_U8: t_u8(&t, o->id, (uint8_t)o->i); break;
        case TFLW_OPT_I32: t_i32(&t, o->id, o->i); break;
        case TFLW_OPT_F32: t_f32(&t, o->id, o->f); break;
        default: vecs[i] = t_off(&t, o->id); break;
        }
    }
    size_t tp = table_end(w, &t);
    patch(w, fo->pos, tp);
    /* t_off returned pointers into t.f, whose positions table_end filled */
    for (int i = 0; i < op->n_opts && i < 16; i++)
        if (vecs[i])
            patch(w, vecs[i]->pos, vec(w, op->opts[i].vec, op->opts[i].n_vec, 4));
}

static void write_tensor(wbuf *w, const tflw_tensor *tn, uint32_t buffer, size_t slot)
{
    table t = {.n = 0};
    field *shape = t_off(&t, 0);
    t_u8(&t, 1, (uint8_t)tn->type);
    t_i32(&t, 2, (int32_t)buffer);
    field *name = t_off(&t, 3);
    field *quant = tn->n_quant ? t_off(&t, 4) : NULL;
    if (tn->is_variable)
        t_u8(&t, 5, 1);
    size_t tp = table_end(w, &t);
    patch(w, slot, tp);
    patch(w, shape->pos, vec(w, tn->dims, (uint32_t)tn->rank, 4));
    patch(w, name->pos, str(w, tn->name ? tn->name : ""));
    if (quant) {
        table q = {.n = 0};
        field *sc = t_off(&q, 2);
        field *zp = t_off(&q, 3);
        t_i32(&q, 6, tn->quant_dim);
        size_t qp = table_end(w, &q);
        patch(w, quant->pos, qp);
        patch(w, sc->pos, vec(w, tn->scales, (uint32_t)tn->n_quant, 4));
        patch(w, zp->pos, vec(w, tn->zero_points, (uint32_t)tn->n_quant, 8));
    }
}

uint8_t *tflw_build(const tflw_model *m, size_t *size)
{
    wbuf w = {0};
    uint32_t root = 0;
    put(&w, &root, 4);
    put(&w, "TFL3", 4);

    /* one operator code per operator (duplicates are allowed) */
    table mt = {.n = 0};
    t_i32(&mt, 0, (int32_t)(m->version ? m->version : 3));
    field *f_codes = t_off(&mt, 1);
    field *f_sgs = t_off(&mt, 2);
    field *f_desc = t_off(&mt, 3);
    field *f_bufs = t_off(&mt, 4);
    size_t mp = table_end(&w, &mt);
    patch(&w, 0, mp);

    size_t codes = table_vec(&w, (uint32_t)m->n_ops);
    patch(&w, f_codes->pos, codes);
    for (int i = 0; i < m->n_ops; i++) {
        table ct = {.n = 0};
        int32_t code = m->ops[i].code;
        t_u8(&ct, 0, (uint8_t)(code < 127 ? code : 127)); /* deprecated_builtin_code */
        t_i32(&ct, 2, m->ops[i].version ? m->ops[i].version : 1);
        t_i32(&ct, 3, code);
        patch(&w, table_vec_slot(codes, (uint32_t)i), table_end(&w, &ct));
    }

    size_t sgs = table_vec(&w, 1);
    patch(&w, f_sgs->pos, sgs);
    table sg = {.n = 0};
    field *f_tensors = t_off(&sg, 0);
    field *f_in = t_off(&sg, 1);
    field *f_out = t_off(&sg, 2);
    field *f_ops = t_off(&sg, 3);
    field *f_name = t_off(&sg, 4);
    patch(&w, table_vec_slot(sgs, 0), table_end(&w, &sg));

    /* buffer 0 is the empty buffer; constant tensor k gets its own */
    uint32_t n_bufs = 1;
    size_t tens = table_vec(&w, (uint32_t)m->n_tensors);
    patch(&w, f_tensors->pos, tens);
    for (int i = 0; i < m->n_tensors; i++) {
        const tflw_tensor *tn = &m->tensors[i];
        write_tensor(&w, tn, tn->data ? n_bufs++ : 0, table_vec_slot(tens, (uint32_t)i));
    }
    patch(&w, f_in->pos, vec(&w, m->inputs, (uint32_t)m->n_inputs, 4));
    patch(&w, f_out->pos, vec(&w, m->outputs, (uint32_t)m->n_outputs, 4));
    size_t ops = table_vec(&w, (uint32_t)m->n_ops);
    patch(&w, f_ops->pos, ops);
    for (int i = 0; i < m->n_ops; i++) {
        const tflw_op *op = &m->ops[i];
        table ot = {.n = 0};
        t_i32(&ot, 0, i);
        field *oi = t_off(&ot, 1);
        field *oo = t_off(&ot, 2);
        field *fo = NULL;
        if (op->options_type) {
            t_u8(&ot, 3, op->options_type);
            fo = t_off(&ot, 4);
        }
        patch(&w, table_vec_slot(ops, (uint32_t)i), table_end(&w, &ot));
        patch(&w, oi->pos, vec(&w, op->inputs, (uint32_t)op->n_inputs, 4));
        patch(&w, oo->pos, vec(&w, op->outputs, (uint32_t)op->n_outputs, 4));
        if (fo)
            write_options(&w, op, fo);
    }
    patch(&w, f_name->pos, str(&w, "main"));
    patch(&w, f_desc->pos, str(&w, "switchyard test_tflite_ops"));

    size_t bufs = table_vec(&w, n_bufs);
    patch(&w, f_bufs->pos, bufs);
    {
        table bt = {.n = 0};
        patch(&w, table_vec_slot(bufs, 0), table_end(&w, &bt));
    }
    uint32_t b = 1;
    for (int i = 0; i < m->n_tensors; i++) {
        const tflw_tensor *tn = &m->tensors[i];
        if (!tn->data)
            continue;
        table bt = {.n = 0};
        field *d = t_off(&bt, 0);
        patch(&w, table_vec_slot(bufs, b++), table_end(&w, &bt));
        /* data 16-aligned in the buffer, as converters align it */
        while (!w.oom && (w.n + 4) % 16)
            put(&w, NULL, 1);
        uint32_t len = (uint32_t)tn->nbytes;
        size_t at = put(&w, &len, 4);
        put(&w, tn->data, tn->nbytes);
        patch(&w, d->pos, at);
    }
    if (w.oom) {
        free(w.b);
        return NULL;
    }
    *size = w.n;
    return w.b;
}
