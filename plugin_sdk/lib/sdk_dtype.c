/* sy_sdk: dtype sizes, names, element load/store and bulk conversion. */
#include "switchyard/sy_sdk.h"
#include "switchyard/sy_dtype_table.h"

#include <math.h>

/* the core's sy_dtype_size / sy_dtype_name read the same table */
size_t sy_dt_size(sy_dtype dt) { return sy_dtype_table_size(dt); }

const char *sy_dt_name(sy_dtype dt) { return sy_dtype_table_name(dt); }

bool sy_dt_is_float(sy_dtype dt)
{
    return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT16 || dt == SY_DT_FLOAT64 || dt == SY_DT_BFLOAT16;
}

bool sy_dt_is_int(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_INT8: case SY_DT_UINT8: case SY_DT_INT16: case SY_DT_UINT16:
    case SY_DT_INT32: case SY_DT_UINT32: case SY_DT_INT64: case SY_DT_UINT64:
        return true;
    default:
        return false;
    }
}

bool sy_dt_is_signed(sy_dtype dt)
{
    return sy_dt_is_float(dt) || dt == SY_DT_INT8 || dt == SY_DT_INT16 || dt == SY_DT_INT32 || dt == SY_DT_INT64;
}

bool sy_dt_is_numeric(sy_dtype dt) { return sy_dt_is_float(dt) || sy_dt_is_int(dt) || dt == SY_DT_BOOL; }

double sy_load_f64(const void *data, sy_dtype dt, size_t i)
{
    switch (dt) {
    case SY_DT_FLOAT32: return ((const float *)data)[i];
    case SY_DT_FLOAT64: return ((const double *)data)[i];
    case SY_DT_FLOAT16: return sy_f16_to_f32(((const uint16_t *)data)[i]);
    case SY_DT_BFLOAT16: return sy_bf16_to_f32(((const uint16_t *)data)[i]);
    case SY_DT_INT8: return ((const int8_t *)data)[i];
    case SY_DT_UINT8: return ((const uint8_t *)data)[i];
    case SY_DT_INT16: return ((const int16_t *)data)[i];
    case SY_DT_UINT16: return ((const uint16_t *)data)[i];
    case SY_DT_INT32: return ((const int32_t *)data)[i];
    case SY_DT_UINT32: return ((const uint32_t *)data)[i];
    case SY_DT_INT64: return (double)((const int64_t *)data)[i];
    case SY_DT_UINT64: return (double)((const uint64_t *)data)[i];
    case SY_DT_BOOL: return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

static int64_t f64_to_i64_sat(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

int64_t sy_load_i64(const void *data, sy_dtype dt, size_t i)
{
    switch (dt) {
    case SY_DT_INT8: return ((const int8_t *)data)[i];
    case SY_DT_UINT8: return ((const uint8_t *)data)[i];
    case SY_DT_INT16: return ((const int16_t *)data)[i];
    case SY_DT_UINT16: return ((const uint16_t *)data)[i];
    case SY_DT_INT32: return ((const int32_t *)data)[i];
    case SY_DT_UINT32: return ((const uint32_t *)data)[i];
    case SY_DT_INT64: return ((const int64_t *)data)[i];
    case SY_DT_UINT64: return (int64_t)((const uint64_t *)data)[i];
    case SY_DT_BOOL: return ((const uint8_t *)data)[i] ? 1 : 0;
    default: return f64_to_i64_sat(sy_load_f64(data, dt, i));
    }
}

void sy_store_i64(void *data, sy_dtype dt, size_t i, int64_t v)
{
    switch (dt) {
    case SY_DT_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
    case SY_DT_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
    case SY_DT_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
    case SY_DT_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
    case SY_DT_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
    case SY_DT_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
    case SY_DT_INT64: ((int64_t *)data)[i] = v; break;
    case SY_DT_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
    case SY_DT_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    case SY_DT_FLOAT32: ((float *)data)[i] = (float)v; break;
    case SY_DT_FLOAT64: ((double *)data)[i] = (double)v; break;
    case SY_DT_FLOAT16: ((uint16_t *)data)[i] = sy_f32_to_f16((float)v); break;
    case SY_DT_BFLOAT16: ((uint16_t *)data)[i] = sy_f32_to_bf16((float)v); break;
    default: break;
    }
}

void sy_store_f64(void *data, sy_dtype dt, size_t i, double v)
{
    switch (dt) {
    case SY_DT_FLOAT32: ((float *)data)[i] = (float)v; break;
    case SY_DT_FLOAT64: ((double *)data)[i] = v; break;
    case SY_DT_FLOAT16: ((uint16_t *)data)[i] = sy_f32_to_f16((float)v); break;
    case SY_DT_BFLOAT16: ((uint16_t *)data)[i] = sy_f32_to_bf16((float)v); break;
    case SY_DT_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
    case SY_DT_UINT64:
        if (v != v || v <= 0.0)
            ((uint64_t *)data)[i] = 0;
        else if (v >= 18446744073709551615.0)
            ((uint64_t *)data)[i] = UINT64_MAX;
        else
            ((uint64_t *)data)[i] = (uint64_t)v;
        break;
    default: sy_store_i64(data, dt, i, f64_to_i64_sat(v)); break;
    }
}

void sy_f16_to_f32_n(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = sy_f16_to_f32(src[i]);
}
void sy_f32_to_f16_n(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = sy_f32_to_f16(src[i]);
}
void sy_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = sy_bf16_to_f32(src[i]);
}
void sy_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = sy_f32_to_bf16(src[i]);
}

bool sy_convert(const void *src, sy_dtype sdt, void *dst, sy_dtype ddt, size_t n)
{
    size_t ss = sy_dt_size(sdt), ds = sy_dt_size(ddt);
    if (!ss || !ds)
        return false;
    /* string records only copy; converting to or from text is Cast's job */
    if ((sdt == SY_DT_STRING || ddt == SY_DT_STRING) && sdt != ddt)
        return false;
    if (sdt == ddt) {
        if (dst != src)
            memmove(dst, src, n * ss);
        return true;
    }
    /* fast paths used by the fp32 scope */
    if (sdt == SY_DT_FLOAT16 && ddt == SY_DT_FLOAT32) { sy_f16_to_f32_n(src, dst, n); return true; }
    if (sdt == SY_DT_FLOAT32 && ddt == SY_DT_FLOAT16) { sy_f32_to_f16_n(src, dst, n); return true; }
    if (sdt == SY_DT_BFLOAT16 && ddt == SY_DT_FLOAT32) { sy_bf16_to_f32_n(src, dst, n); return true; }
    if (sdt == SY_DT_FLOAT32 && ddt == SY_DT_BFLOAT16) { sy_f32_to_bf16_n(src, dst, n); return true; }
    if (sdt == SY_DT_FLOAT64 && ddt == SY_DT_FLOAT32) {
        for (size_t i = 0; i < n; i++)
            ((float *)dst)[i] = (float)((const double *)src)[i];
        return true;
    }
    if (sdt == SY_DT_FLOAT32 && ddt == SY_DT_FLOAT64) {
        for (size_t i = 0; i < n; i++)
            ((double *)dst)[i] = ((const float *)src)[i];
        return true;
    }
    if (sdt == SY_DT_FLOAT16 && ddt == SY_DT_BFLOAT16) {
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = sy_f32_to_bf16(sy_f16_to_f32(((const uint16_t *)src)[i]));
        return true;
    }
    if (sdt == SY_DT_BFLOAT16 && ddt == SY_DT_FLOAT16) {
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = sy_f32_to_f16(sy_bf16_to_f32(((const uint16_t *)src)[i]));
        return true;
    }
    /* a float64 -> float16 conversion must round once: go through double
     * only when the source is float; ints travel through int64 */
    bool src_float = sy_dt_is_float(sdt);
    if (src_float) {
        for (size_t i = 0; i < n; i++)
            sy_store_f64(dst, ddt, i, sy_load_f64(src, sdt, i));
    } else if (sdt == SY_DT_UINT64 && sy_dt_is_float(ddt)) {
        for (size_t i = 0; i < n; i++)
            sy_store_f64(dst, ddt, i, (double)((const uint64_t *)src)[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            sy_store_i64(dst, ddt, i, sy_load_i64(src, sdt, i));
    }
    return true;
}
