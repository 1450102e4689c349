/*
 * tflk_shape: casts, fills, selection and the index-driven movement of the
 * shape family (CAST, FILL, SELECT/SELECT_V2, REVERSE_SEQUENCE, ONE_HOT and
 * the ONNX Cast, ConstantOfShape, Where, ReverseSequence, Trilu, OneHot,
 * GatherElements). Indices are checked before anything is written, so a bad
 * one is reported instead of reading outside a buffer.
 */
#include "tflk.h"

#include <string.h>

static int64_t idx_at(const void *idx, int32_t idx64, int32_t i)
{
    if (idx64) {
        int64_t v;
        memcpy(&v, (const unsigned char *)idx + (size_t)i * 8u, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, (const unsigned char *)idx + (size_t)i * 4u, 4);
    return v;
}

/* ---- CAST ---------------------------------------------------------------- */

static int32_t esize_of(int32_t code)
{
    return code == TFLK_F32 || code == TFLK_S32 ? 4 : code == TFLK_S64 ? 8 : code == TFLK_S16 ? 2 : 1;
}

void tflk_cast(int32_t from, int32_t to, const void *x, void *y, int32_t n)
{
    const unsigned char *xb = x;
    unsigned char *yb = y;
    int32_t ei = esize_of(from), eo = esize_of(to);
    for (int32_t i = 0; i < n; i++) {
        const unsigned char *s = xb + (size_t)i * (size_t)ei;
        unsigned char *d = yb + (size_t)i * (size_t)eo;
        float f = 0.0f;
        int64_t v = 0;
        int32_t is_f = from == TFLK_F32;
        switch (from) {
        case TFLK_F32: memcpy(&f, s, 4); break;
        case TFLK_S8: v = *(const int8_t *)(const void *)s; break;
        case TFLK_S16: {
            int16_t t;
            memcpy(&t, s, 2);
            v = t;
            break;
        }
        case TFLK_S32: {
            int32_t t;
            memcpy(&t, s, 4);
            v = t;
            break;
        }
        case TFLK_S64: memcpy(&v, s, 8); break;
        default: v = *s; break; /* uint8, bool */
        }
        if (to == TFLK_F32) {
            float o = is_f ? f : (float)v;
            memcpy(d, &o, 4);
            continue;
        }
        if (to == TFLK_BOOL) {
            *d = (uint8_t)(is_f ? f != 0.0f : v != 0);
            continue;
        }
        if (is_f) { /* truncate toward zero, saturating to int64 first */
            if (!(f == f))
                v = 0;
            else if (f >= 9.2233720e18f)
                v = INT64_MAX;
            else if (f <= -9.2233720e18f)
                v = INT64_MIN;
            else
                v = (int64_t)f;
            int64_t lo = to == TFLK_S8 ? -128 : to == TFLK_U8 ? 0 : to == TFLK_S16 ? -32768 : to == TFLK_S32 ? INT32_MIN : INT64_MIN;
            int64_t hi = to == TFLK_S8 ? 127 : to == TFLK_U8 ? 255 : to == TFLK_S16 ? 32767 : to == TFLK_S32 ? INT32_MAX : INT64_MAX;
            v = v < lo ? lo : v > hi ? hi : v;
        }
        /* the low bytes of the two's complement value: a wrap, little-endian */
        uint64_t u = (uint64_t)v;
        for (int32_t b = 0; b < eo; b++)
            d[b] = (unsigned char)(u >> (8 * b));
    }
}

void tflk_fill(void *y, const void *value, int32_t esize, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        memcpy((unsigned char *)y + (size_t)i * (size_t)esize, value, (size_t)esize);
}

void tflk_select_run(const tflk_select *p, const uint8_t *cond, const void *a, const void *b, void *y)
{
    int32_t idx[TFLK_BIN_RANK] = {0}, n = 1, oc = 0, oa = 0, ob = 0, es = p->esize;
    for (int32_t d = 0; d < p->rank; d++)
        n *= p->dims[d];
    for (int32_t i = 0; i < n; i++) {
        const unsigned char *src = cond[oc] ? (const unsigned char *)a + (size_t)oa * (size_t)es
                                            : (const unsigned char *)b + (size_t)ob * (size_t)es;
        memcpy((unsigned char *)y + (size_t)i * (size_t)es, src, (size_t)es);
        for (int32_t d = p->rank - 1; d >= 0; d--) {
            oc += p->sc[d];
            oa += p->sa[d];
            ob += p->sb[d];
            if (++idx[d] < p->dims[d])
                break;
            oc -= p->sc[d] * p->dims[d];
            oa -= p->sa[d] * p->dims[d];
            ob -= p->sb[d] * p->dims[d];
            idx[d] = 0;
        }
    }
}

int32_t tflk_revseq_run(const tflk_revseq *p, const void *x, const void *len, void *y, int64_t *bad)
{
    int32_t nb = p->seq_axis ? p->d0 : p->d1, T = p->seq_axis ? p->d1 : p->d0;
    for (int32_t b = 0; b < nb; b++) {
        int64_t l = idx_at(len, p->len64, b);
        if (l < 0 || l > T) {
            if (bad)
                *bad = l;
            return 1;
        }
    }
    size_t row = (size_t)p->inner * (size_t)p->esize;
    for (int32_t i0 = 0; i0 < p->d0; i0++)
        for (int32_t i1 = 0; i1 < p->d1; i1++) {
            int32_t b = p->seq_axis ? i0 : i1, t = p->seq_axis ? i1 : i0;
            int32_t l = (int32_t)idx_at(len, p->len64, b), s = t < l ? l - 1 - t : t;
            int32_t j0 = p->seq_axis ? i0 : s, j1 = p->seq_axis ? s : i1;
            memcpy((unsigned char *)y + ((size_t)i0 * (size_t)p->d1 + (size_t)i1) * row,
                   (const unsigned char *)x + ((size_t)j0 * (size_t)p->d1 + (size_t)j1) * row, row);
        }
    return 0;
}

void tflk_trilu_run(const tflk_trilu *p, const void *x, void *y)
{
    size_t es = (size_t)p->esize;
    for (int32_t bt = 0; bt < p->batches; bt++)
        for (int32_t i = 0; i < p->rows; i++)
            for (int32_t j = 0; j < p->cols; j++) {
                size_t at = (((size_t)bt * (size_t)p->rows + (size_t)i) * (size_t)p->cols + (size_t)j) * es;
                int32_t keep = p->upper ? j - i >= p->k : j - i <= p->k;
                if (keep)
                    memcpy((unsigned char *)y + at, (const unsigned char *)x + at, es);
                else
                    memset((unsigned char *)y + at, 0, es);
            }
}

void tflk_onehot_run(const tflk_onehot *p, const void *idx, const void *on, const void *off, void *y)
{
    size_t es = (size_t)p->esize;
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t d = 0; d < p->depth; d++)
            for (int32_t i = 0; i < p->inner; i++) {
                int64_t v = idx_at(idx, p->idx64, o * p->inner + i);
                if (p->onnx && v < 0 && v >= -(int64_t)p->depth)
                    v += p->depth;
                size_t at = (((size_t)o * (size_t)p->depth + (size_t)d) * (size_t)p->inner + (size_t)i) * es;
                memcpy((unsigned char *)y + at, v == d ? on : off, es);
            }
}

int32_t tflk_gather_el_run(const tflk_scatter_el *p, const void *data, const void *idx, void *y, int64_t *bad)
{
    int32_t n = 1, st[TFLK_BIN_RANK], es = p->esize;
    for (int32_t d = p->rank - 1, s = 1; d >= 0; d--) {
        st[d] = s;
        s *= p->ydims[d];
    }
    for (int32_t d = 0; d < p->rank; d++)
        n *= p->idims[d];
    int64_t dim = p->ydims[p->axis];
    for (int32_t i = 0; i < n; i++) {
        int64_t v = idx_at(idx, p->idx64, i);
        if (v < -dim || v >= dim) {
            if (bad)
                *bad = v;
            return 1;
        }
    }
    int32_t at[TFLK_BIN_RANK] = {0};
    for (int32_t i = 0; i < n; i++) {
        int64_t v = idx_at(idx, p->idx64, i);
        if (v < 0)
            v += dim;
        int32_t off = 0;
        for (int32_t d = 0; d < p->rank; d++)
            off += (d == p->axis ? (int32_t)v : at[d]) * st[d];
        memcpy((unsigned char *)y + (size_t)i * (size_t)es, (const unsigned char *)data + (size_t)off * (size_t)es,
               (size_t)es);
        for (int32_t d = p->rank - 1; d >= 0; d--) {
            if (++at[d] < p->idims[d])
                break;
            at[d] = 0;
        }
    }
    return 0;
}
