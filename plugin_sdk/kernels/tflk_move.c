/*
 * tflk_move: the data-movement kernels beyond a strided view
 * (tflk_strided.c serves TRANSPOSE, SLICE, STRIDED_SLICE, SPLIT, UNPACK,
 * REVERSE_V2, TILE, DEPTH_TO_SPACE and SPACE_TO_DEPTH): padding, concatenation
 * with TFLite's int8 requantization, and the index-driven GATHER, GATHER_ND
 * and SCATTER_ND, which report an out-of-range index instead of reading or
 * writing outside a buffer.
 */
#include "tflk.h"

#include <string.h>

void tflk_pad_run(const tflk_pad *p, const void *x, void *y)
{
    const unsigned char *xb = x;
    unsigned char *yb = y;
    int32_t idx[TFLK_BIN_RANK] = {0}, st[TFLK_BIN_RANK], n = 1, es = p->esize;
    for (int32_t d = p->rank - 1, s = 1; d >= 0; d--) {
        st[d] = s;
        s *= p->idims[d];
    }
    for (int32_t d = 0; d < p->rank; d++)
        n *= p->odims[d];
    for (int32_t i = 0; i < n; i++) {
        int32_t off = 0, inside = 1;
        for (int32_t d = 0; d < p->rank; d++) {
            int32_t c = idx[d] - p->before[d], dim = p->idims[d];
            if (c < 0 || c >= dim) {
                if (p->mode == 0) {
                    inside = 0;
                    break;
                }
                if (p->mode == 3)
                    c = c < 0 ? 0 : dim - 1;
                else if (c < 0)
                    c = p->mode == 1 ? -c : -c - 1;
                else
                    c = p->mode == 1 ? 2 * dim - 2 - c : 2 * dim - 1 - c;
            }
            off += c * st[d];
        }
        memcpy(yb + (size_t)i * (size_t)es, inside ? xb + (size_t)off * (size_t)es : p->fill, (size_t)es);
        for (int32_t d = p->rank - 1; d >= 0; d--) {
            if (++idx[d] < p->odims[d])
                break;
            idx[d] = 0;
        }
    }
}

void tflk_concat_run(const tflk_concat *p, const void *const *x, void *y)
{
    int32_t row = 0, es = p->esize;
    for (int32_t i = 0; i < p->n; i++)
        row += p->rows[i];
    unsigned char *yb = y;
    for (int32_t o = 0; o < p->outer; o++) {
        int32_t at = 0;
        for (int32_t i = 0; i < p->n; i++) {
            const unsigned char *src = (const unsigned char *)x[i] + (size_t)o * (size_t)p->rows[i] * (size_t)es;
            unsigned char *dst = yb + ((size_t)o * (size_t)row + (size_t)at) * (size_t)es;
            if (p->scale && p->scale[i] != 0.0f) {
                /* TFLite's int8 concatenation of another scale: in float */
                for (int32_t k = 0; k < p->rows[i]; k++) {
                    float v = tflk_roundf((float)((const int8_t *)src)[k] * p->scale[i] + p->bias[i]) + (float)p->out_zp;
                    ((int8_t *)dst)[k] = (int8_t)(v < -128.0f ? -128 : (v > 127.0f ? 127 : (int32_t)v));
                }
            } else {
                memcpy(dst, src, (size_t)p->rows[i] * (size_t)es);
            }
            at += p->rows[i];
        }
    }
    if (p->is_f32 && !(p->act.kind == 0 && p->act.lo == -p->act.hi && p->act.hi > 3.0e38f)) {
        float *yf = y;
        for (int32_t i = 0, n = p->outer * row; i < n; i++)
            yf[i] = tflk_act_apply(&p->act, yf[i]);
    }
}

static int64_t index_at(const void *idx, int32_t idx64, int32_t i)
{
    if (idx64) {
        int64_t v;
        memcpy(&v, (const unsigned char *)idx + (size_t)i * 8u, 8);
        return v;
    }
    return ((const int32_t *)idx)[i];
}

int32_t tflk_gather_run(const tflk_gather *p, const void *x, const void *idx, void *y, int64_t *bad)
{
    size_t row = (size_t)p->inner * (size_t)p->esize;
    for (int32_t k = 0; k < p->n_idx; k++) {
        int64_t v = index_at(idx, p->idx64, k);
        if (p->wrap && v < 0 && v >= -(int64_t)p->dim)
            v += p->dim;
        if (v < 0 || v >= p->dim) {
            if (bad)
                *bad = v;
            return 1;
        }
    }
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t k = 0; k < p->n_idx; k++) {
            int64_t v = index_at(idx, p->idx64, k);
            if (v < 0)
                v += p->dim;
            memcpy((unsigned char *)y + ((size_t)o * (size_t)p->n_idx + (size_t)k) * row,
                   (const unsigned char *)x + ((size_t)o * (size_t)p->dim + (size_t)v) * row, row);
        }
    return 0;
}

/* the element offset of tuple t, or -1 with *bad set */
static int32_t tuple_offset(const tflk_gather_nd *p, const void *idx, int32_t t, int64_t *bad)
{
    int32_t off = 0;
    for (int32_t d = 0; d < p->nd; d++) {
        int64_t v = index_at(idx, p->idx64, t * p->nd + d);
        if (p->wrap && v < 0 && v >= -(int64_t)p->dims[d])
            v += p->dims[d];
        if (v < 0 || v >= p->dims[d]) {
            if (bad)
                *bad = v;
            return -1;
        }
        off += (int32_t)v * p->st[d];
    }
    return off;
}

int32_t tflk_gather_nd_run(const tflk_gather_nd *p, const void *x, const void *idx, void *y, int64_t *bad)
{
    size_t row = (size_t)p->inner * (size_t)p->esize;
    for (int32_t t = 0; t < p->n_tuples; t++)
        if (tuple_offset(p, idx, t, bad) < 0)
            return 1;
    for (int32_t t = 0; t < p->n_tuples; t++)
        memcpy((unsigned char *)y + (size_t)t * row,
               (const unsigned char *)x + (size_t)tuple_offset(p, idx, t, NULL) * (size_t)p->esize, row);
    return 0;
}

int32_t tflk_scatter_nd_run(const tflk_gather_nd *p, const void *idx, const void *upd, void *y, int64_t *bad)
{
    for (int32_t t = 0; t < p->n_tuples; t++)
        if (tuple_offset(p, idx, t, bad) < 0)
            return 1;
    memset(y, 0, (size_t)p->total * (size_t)p->esize);
    for (int32_t t = 0; t < p->n_tuples; t++) {
        int32_t off = tuple_offset(p, idx, t, NULL);
        for (int32_t k = 0; k < p->inner && off + k < p->total; k++) {
            int32_t o = off + k, u = t * p->inner + k;
            if (p->dtype == TFLK_F32)
                ((float *)y)[o] += ((const float *)upd)[u];
            else if (p->dtype == TFLK_S8) /* the reference's int8 +=: wraps */
                ((int8_t *)y)[o] = (int8_t)(uint8_t)((uint32_t)(int32_t)((int8_t *)y)[o] +
                                                     (uint32_t)(int32_t)((const int8_t *)upd)[u]);
            else
                ((int32_t *)y)[o] = (int32_t)((uint32_t)((int32_t *)y)[o] + (uint32_t)((const int32_t *)upd)[u]);
        }
    }
    return 0;
}

int32_t tflk_scatter_nd_set(const tflk_gather_nd *p, const void *data, const void *idx, const void *upd, void *y,
                            int64_t *bad)
{
    for (int32_t t = 0; t < p->n_tuples; t++)
        if (tuple_offset(p, idx, t, bad) < 0)
            return 1;
    size_t row = (size_t)p->inner * (size_t)p->esize;
    if (y != data)
        memmove(y, data, (size_t)p->total * (size_t)p->esize);
    for (int32_t t = 0; t < p->n_tuples; t++)
        memcpy((unsigned char *)y + (size_t)tuple_offset(p, idx, t, NULL) * (size_t)p->esize,
               (const unsigned char *)upd + (size_t)t * row, row);
    return 0;
}

int32_t tflk_scatter_el_run(const tflk_scatter_el *p, const void *data, const void *idx, const void *upd, void *y,
                            int64_t *bad)
{
    int32_t n = 1, st[TFLK_BIN_RANK], es = p->esize;
    for (int32_t d = p->rank - 1, s = 1; d >= 0; d--) {
        st[d] = s;
        s *= p->ydims[d];
    }
    for (int32_t d = 0; d < p->rank; d++)
        n *= p->idims[d];
    int64_t dim = p->ydims[p->axis];
    for (int32_t i = 0; i < n; i++) { /* every index first: nothing is written when one is bad */
        int64_t v = index_at(idx, p->idx64, i);
        if (v < -dim || v >= dim) {
            if (bad)
                *bad = v;
            return 1;
        }
    }
    if (y != data)
        memmove(y, data, (size_t)p->total * (size_t)es);
    int32_t at[TFLK_BIN_RANK] = {0};
    for (int32_t i = 0; i < n; i++) {
        int64_t v = index_at(idx, p->idx64, i);
        if (v < 0)
            v += dim;
        int32_t off = 0;
        for (int32_t d = 0; d < p->rank; d++)
            off += (d == p->axis ? (int32_t)v : at[d]) * st[d];
        memcpy((unsigned char *)y + (size_t)off * (size_t)es, (const unsigned char *)upd + (size_t)i * (size_t)es,
               (size_t)es);
        for (int32_t d = p->rank - 1; d >= 0; d--) {
            if (++at[d] < p->idims[d])
                break;
            at[d] = 0;
        }
    }
    return 0;
}
