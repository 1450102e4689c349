/* sy_sdk: shapes, strides, axis normalisation, small int tensors, copies. */
#include "switchyard/sy_sdk.h"

#include <stdio.h>

int64_t sy_numel(int32_t rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

int64_t sy_dims_prod(const int64_t *dims, int32_t from, int32_t to)
{
    int64_t n = 1;
    for (int32_t i = from; i < to; i++)
        n *= dims[i];
    return n;
}

void sy_strides(int32_t rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

bool sy_shape_equal(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b)
{
    if (ra != rb)
        return false;
    for (int32_t i = 0; i < ra; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

const char *sy_shape_str(int32_t rank, const int64_t *dims, char *buf, size_t len)
{
    size_t pos = 0;
    if (!len)
        return buf;
    buf[0] = '\0';
    int w = snprintf(buf, len, "[");
    pos = w > 0 ? (size_t)w : 0;
    for (int32_t i = 0; i < rank && pos < len; i++) {
        w = snprintf(buf + pos, len - pos, "%s%lld", i ? ", " : "", (long long)dims[i]);
        if (w < 0)
            break;
        pos += (size_t)w;
    }
    if (pos < len)
        snprintf(buf + pos, len - pos, "]");
    return buf;
}

sy_status *sy_norm_axis(const sy_host_api *host, int64_t axis, int32_t rank, bool inclusive_end, const char *what,
                        int32_t *out)
{
    int64_t hi = inclusive_end ? rank : rank - 1;
    if (axis < -(int64_t)rank || axis > hi)
        return host->status_new(SY_ERR_SHAPE, "%s = %lld is out of range [%d, %lld] for rank %d", what ? what : "axis",
                                (long long)axis, -(int)rank, (long long)hi, (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return NULL;
}

int64_t sy_tensor_read_ints(const sy_tensor *t, int64_t *out, size_t max)
{
    if (!t || !t->data || t->rank > 1)
        return -1;
    if (t->dtype != SY_DT_INT64 && t->dtype != SY_DT_INT32)
        return -1;
    int64_t n = sy_tensor_numel(t);
    for (int64_t i = 0; i < n && (size_t)i < max; i++)
        out[i] = t->dtype == SY_DT_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
    return n;
}

bool sy_tensor_scalar_f64(const sy_tensor *t, double *out)
{
    if (!t || !t->data || sy_tensor_numel(t) < 1 || !sy_dt_is_numeric(t->dtype))
        return false;
    *out = sy_load_f64(t->data, t->dtype, 0);
    return true;
}

void sy_copy_strided(void *dst, const void *src, int32_t rank, const int64_t *dims, const int64_t *src_strides,
                     size_t esize)
{
    int64_t total = sy_numel(rank, dims);
    if (total <= 0)
        return;
    if (rank == 0) {
        memcpy(dst, src, esize);
        return;
    }
    int64_t idx[SY_MAX_RANK] = {0};
    int64_t inner = dims[rank - 1];
    int64_t is = src_strides[rank - 1];
    char *d = dst;
    const char *s = src;
    for (;;) {
        int64_t off = 0;
        for (int32_t k = 0; k < rank - 1; k++)
            off += idx[k] * src_strides[k];
        const char *sp = s + off * (int64_t)esize;
        if (is == 1) {
            memcpy(d, sp, (size_t)inner * esize);
        } else if (esize == 4) {
            for (int64_t j = 0; j < inner; j++)
                memcpy(d + j * 4, sp + j * is * 4, 4);
        } else {
            for (int64_t j = 0; j < inner; j++)
                memcpy(d + j * (int64_t)esize, sp + j * is * (int64_t)esize, esize);
        }
        d += inner * (int64_t)esize;
        if (!sy_index_next(rank - 1, dims, idx))
            break;
    }
}
