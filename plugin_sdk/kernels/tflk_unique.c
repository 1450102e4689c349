/*
 * tflk_unique: TFLite UNIQUE and ONNX Unique, shared by cpu_ref
 * (plugins/tflite_math, plugins/ops_tensor) and riscv_mcu (ops-mcu.md
 * Table A #86, Table B #109).
 *
 * Items are single elements (TFLite, ONNX without axis: the input
 * flattened) or slices along an axis: item i covers, for each outer o,
 * `inner` elements at (o * n_items + i) * inner. Items compare by value,
 * element by element in that order (lexicographic, outer-major as ONNX's
 * reference): -0 equals 0, NaNs equal each other and sort above every
 * number. A stable merge sort of the item ids groups equal items with the
 * first occurrence leading each group; `sorted` keeps the groups ascending,
 * otherwise they are renumbered in first-occurrence order (TFLite's order,
 * ONNX sorted = 0).
 *
 * The output length u (1..n_items; 0 for an empty input) depends on the
 * data: Y gets u items ([outer, u, inner], written from its start),
 * indices and counts u entries, inverse_indices n_items. A caller that
 * plans Y statically gives it the capacity of n_items items (the upper
 * bound) and reads u, the logical length, from the return value.
 */
#include "tflk.h"

#include <string.h>

int32_t tflk_elem_size(int32_t dt)
{
    switch (dt) {
    case TFLK_S8:
    case TFLK_U8:
    case TFLK_BOOL: return 1;
    case TFLK_S16:
    case TFLK_U16:
    case TFLK_F16:
    case TFLK_BF16: return 2;
    case TFLK_F32:
    case TFLK_S32:
    case TFLK_U32: return 4;
    case TFLK_S64:
    case TFLK_U64:
    case TFLK_F64: return 8;
    default: return 0;
    }
}

static float half_to_float(uint16_t h)
{
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31u, m = h & 1023u, bits;
    if (e == 0 && m == 0)
        bits = s;
    else if (e == 0) { /* subnormal: normalize */
        int32_t k = -1;
        do {
            k++;
            m <<= 1;
        } while (!(m & 1024u));
        bits = s | ((uint32_t)(127 - 15 - k) << 23) | ((m & 1023u) << 13);
    } else if (e == 31)
        bits = s | 0x7f800000u | (m << 13);
    else
        bits = s | ((e + 127u - 15u) << 23) | (m << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static int32_t is_float(int32_t dt) { return dt == TFLK_F32 || dt == TFLK_F64 || dt == TFLK_F16 || dt == TFLK_BF16; }

static double ld_f(int32_t dt, const void *x, size_t i)
{
    switch (dt) {
    case TFLK_F32: return ((const float *)x)[i];
    case TFLK_F64: return ((const double *)x)[i];
    case TFLK_F16: return half_to_float(((const uint16_t *)x)[i]);
    default: { /* TFLK_BF16: the high half of a float */
        uint32_t b = (uint32_t)((const uint16_t *)x)[i] << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    }
}

/* -1, 0, 1; unsigned 64-bit as itself, the other integers sign-extended */
static int32_t cmp_elem(int32_t dt, const void *x, size_t i, size_t j)
{
    if (is_float(dt)) {
        double a = ld_f(dt, x, i), b = ld_f(dt, x, j);
        int32_t na = a != a, nb = b != b;
        if (na || nb)
            return na && nb ? 0 : (na ? 1 : -1);
        return a < b ? -1 : a > b;
    }
    switch (dt) {
    case TFLK_U64: {
        uint64_t a = ((const uint64_t *)x)[i], b = ((const uint64_t *)x)[j];
        return a < b ? -1 : a > b;
    }
    default: {
        int64_t a, b;
        switch (dt) {
        case TFLK_S8: a = ((const int8_t *)x)[i], b = ((const int8_t *)x)[j]; break;
        case TFLK_U8:
        case TFLK_BOOL: a = ((const uint8_t *)x)[i], b = ((const uint8_t *)x)[j]; break;
        case TFLK_S16: a = ((const int16_t *)x)[i], b = ((const int16_t *)x)[j]; break;
        case TFLK_U16: a = ((const uint16_t *)x)[i], b = ((const uint16_t *)x)[j]; break;
        case TFLK_S32: a = ((const int32_t *)x)[i], b = ((const int32_t *)x)[j]; break;
        case TFLK_U32: a = ((const uint32_t *)x)[i], b = ((const uint32_t *)x)[j]; break;
        default: a = ((const int64_t *)x)[i], b = ((const int64_t *)x)[j]; break;
        }
        return a < b ? -1 : a > b;
    }
    }
}

static int32_t cmp_item(const tflk_unique *p, const void *x, int32_t a, int32_t b)
{
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t e = 0; e < p->inner; e++) {
            size_t base = (size_t)o * (size_t)p->n_items;
            int32_t c = cmp_elem(p->dt, x, (base + (size_t)a) * (size_t)p->inner + (size_t)e,
                                 (base + (size_t)b) * (size_t)p->inner + (size_t)e);
            if (c)
                return c;
        }
    return 0;
}

/* stable bottom-up merge sort of ids (no recursion: an MCU stack is small) */
static void sort_items(const tflk_unique *p, const void *x, int32_t *a, int32_t *tmp, int32_t n)
{
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp_item(p, x, a[j], a[i]) < 0 ? a[j++] : a[i++];
            while (i < mid)
                tmp[k++] = a[i++];
            while (j < hi)
                tmp[k++] = a[j++];
        }
        memcpy(a, tmp, sizeof(int32_t) * (size_t)n);
        if (w > n / 2) /* merged; and w * 2 must not overflow (callers keep n below 2^30) */
            break;
    }
}

size_t tflk_unique_scratch_bytes(const tflk_unique *p) { return 6u * sizeof(int32_t) * (size_t)p->n_items; }

static void st_idx(void *v, int32_t idx64, int32_t i, int32_t val)
{
    if (idx64)
        ((int64_t *)v)[i] = val;
    else
        ((int32_t *)v)[i] = val;
}

int32_t tflk_unique_run(const tflk_unique *p, const void *x, void *y, void *indices, void *inverse, void *counts,
                        void *scratch)
{
    const int32_t n = p->n_items;
    int32_t *order = scratch, *tmp = order + n, *first = tmp + n, *cnt = first + n, *inv = cnt + n, *c2 = inv + n;
    for (int32_t i = 0; i < n; i++)
        order[i] = i;
    sort_items(p, x, order, tmp, n);
    int32_t u = 0;
    for (int32_t i = 0; i < n; i++) { /* groups of equal items; the first member is the smallest id */
        if (i == 0 || cmp_item(p, x, order[i - 1], order[i]) != 0) {
            first[u] = order[i];
            cnt[u] = 0;
            u++;
        }
        inv[order[i]] = u - 1;
        cnt[u - 1]++;
    }
    if (!p->sorted) { /* renumber the groups by first occurrence: rank in `order`, the new first/count in tmp/c2 */
        int32_t r = 0;
        for (int32_t g = 0; g < u; g++)
            order[g] = -1;
        for (int32_t i = 0; i < n; i++) {
            int32_t g = inv[i];
            if (order[g] < 0) {
                order[g] = r;
                tmp[r] = i;
                c2[r] = cnt[g];
                r++;
            }
            inv[i] = order[g];
        }
        first = tmp;
        cnt = c2;
    }
    if (y) {
        const size_t es = (size_t)tflk_elem_size(p->dt), blk = (size_t)p->inner * es;
        for (int32_t o = 0; o < p->outer; o++)
            for (int32_t g = 0; g < u; g++)
                memcpy((char *)y + ((size_t)o * (size_t)u + (size_t)g) * blk,
                       (const char *)x + ((size_t)o * (size_t)n + (size_t)first[g]) * blk, blk);
    }
    for (int32_t g = 0; g < u; g++) {
        if (indices)
            st_idx(indices, p->idx64, g, first[g]);
        if (counts)
            st_idx(counts, p->idx64, g, cnt[g]);
    }
    for (int32_t i = 0; inverse && i < n; i++)
        st_idx(inverse, p->idx64, i, inv[i]);
    return u;
}
