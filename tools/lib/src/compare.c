/* sy_compare_tensors: an output against its reference (sy_tools.h). */
#include <switchyard/sy_tools.h>
/* after switchyard.h: the fp16 / bf16 conversions */
#include <switchyard/sy_sdk.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_float_type(sy_dtype dt)
{
    return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT64 || dt == SY_DT_FLOAT16 || dt == SY_DT_BFLOAT16;
}

static bool is_plain_int_type(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_INT8: case SY_DT_UINT8: case SY_DT_INT16: case SY_DT_UINT16: case SY_DT_INT32:
    case SY_DT_UINT32: case SY_DT_INT64: case SY_DT_UINT64: case SY_DT_BOOL:
        return true;
    default:
        return false;
    }
}

static double float_at(const sy_tensor *t, int64_t i)
{
    const char *d = t->data;
    switch (t->dtype) {
    case SY_DT_FLOAT32: { float f; memcpy(&f, d + 4 * i, 4); return f; }
    case SY_DT_FLOAT64: { double f; memcpy(&f, d + 8 * i, 8); return f; }
    case SY_DT_FLOAT16: { uint16_t h; memcpy(&h, d + 2 * i, 2); return sy_f16_to_f32(h); }
    case SY_DT_BFLOAT16: { uint16_t h; memcpy(&h, d + 2 * i, 2); return sy_bf16_to_f32(h); }
    default: return NAN;
    }
}

/* Integer elements as (signed or unsigned) 64-bit, exactly. */
static void int_at(const sy_tensor *t, int64_t i, int64_t *sv, uint64_t *uv, bool *is_unsigned)
{
    const char *d = t->data;
    *is_unsigned = false;
    *sv = 0;
    *uv = 0;
    switch (t->dtype) {
    case SY_DT_INT8: { int8_t v; memcpy(&v, d + i, 1); *sv = v; break; }
    case SY_DT_UINT8: case SY_DT_BOOL: { uint8_t v; memcpy(&v, d + i, 1); *sv = v; break; }
    case SY_DT_INT16: { int16_t v; memcpy(&v, d + 2 * i, 2); *sv = v; break; }
    case SY_DT_UINT16: { uint16_t v; memcpy(&v, d + 2 * i, 2); *sv = v; break; }
    case SY_DT_INT32: { int32_t v; memcpy(&v, d + 4 * i, 4); *sv = v; break; }
    case SY_DT_UINT32: { uint32_t v; memcpy(&v, d + 4 * i, 4); *sv = v; break; }
    case SY_DT_INT64: { int64_t v; memcpy(&v, d + 8 * i, 8); *sv = v; break; }
    case SY_DT_UINT64: { uint64_t v; memcpy(&v, d + 8 * i, 8); *uv = v; *is_unsigned = true; break; }
    default: break;
    }
}

static void format_dims(int32_t rank, const int64_t *dims, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int32_t d = 0; d < rank && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
}

static void format_index(const sy_tensor *t, int64_t flat, char *buf, size_t len)
{
    int64_t idx[SY_MAX_RANK] = {0};
    int32_t rank = t->rank > SY_MAX_RANK ? SY_MAX_RANK : t->rank;
    for (int32_t d = rank - 1; d >= 0; d--) {
        int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;
        idx[d] = flat % dim;
        flat /= dim;
    }
    format_dims(rank, idx, buf, len);
}

/* Bits per element of a dtype for the bit-exact comparison (0: unknown). */
static unsigned dtype_bits(sy_dtype dt)
{
    size_t s = sy_dtype_size(dt);
    if (s)
        return (unsigned)(8 * s);
    switch ((int)dt) {
    case 21: case 22: case 23: return 4;                    /* UINT4, INT4, FLOAT4E2M1 */
    case 25: case 26: return 2;                             /* UINT2, INT2 */
    case 17: case 18: case 19: case 20: case 24: return 8; /* the float8 family */
    default: return 0;
    }
}

static const char *dtype_label(sy_dtype dt, char *buf, size_t len)
{
    const char *n = sy_dtype_name(dt);
    if (n && *n && strcmp(n, "?"))
        return n;
    snprintf(buf, len, "dtype#%d", (int)dt);
    return buf;
}

static void say(sy_compare_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(sy_compare_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
    r->equal = 0;
}

static void compare(const sy_tensor *got, const sy_tensor *exp, double rtol, double atol, unsigned bits,
                    sy_compare_result *r)
{
    int64_t n = r->n_elements;
    char at[200], lb[32];
    if (is_float_type(exp->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            double a = float_at(got, i), b = float_at(exp, i);
            bool ok;
            if (isnan(a) || isnan(b)) {
                ok = isnan(a) && isnan(b);
            } else if (isinf(a) || isinf(b)) {
                ok = a == b;
            } else {
                double err = fabs(a - b);
                if (err > r->max_abs_error)
                    r->max_abs_error = err;
                ok = err <= atol + rtol * fabs(b);
            }
            if (!ok && r->n_mismatched++ == 0)
                r->first_mismatch = i;
        }
        if (!r->n_mismatched)
            return;
        format_index(exp, r->first_mismatch, at, sizeof at);
        say(r, "value mismatch at index %s: got %.9g expected %.9g (%lld of %lld elements differ, max abs err %.3g, "
               "rtol %g atol %g)", at, float_at(got, r->first_mismatch), float_at(exp, r->first_mismatch),
            (long long)r->n_mismatched, (long long)n, r->max_abs_error, rtol, atol);
        return;
    }
    if (exp->dtype == SY_DT_STRING) {
        /* strings compare byte for byte (ONNX's rule: no normalisation) */
        const sy_string *ga = got->data, *ea = exp->data;
        for (int64_t i = 0; i < n; i++)
            if ((ga[i].size != ea[i].size || (ea[i].size && memcmp(ga[i].data, ea[i].data, (size_t)ea[i].size))) &&
                r->n_mismatched++ == 0)
                r->first_mismatch = i;
        if (!r->n_mismatched)
            return;
        format_index(exp, r->first_mismatch, at, sizeof at);
        const sy_string *g = &ga[r->first_mismatch], *e = &ea[r->first_mismatch];
        int gl = g->size > 80 ? 80 : (int)g->size, el = e->size > 80 ? 80 : (int)e->size;
        say(r, "value mismatch at index %s: got \"%.*s\"%s (%llu bytes) expected \"%.*s\"%s (%llu bytes) (%lld of %lld "
               "strings differ; strings compare exactly)", at, gl, g->size ? g->data : "", g->size > 80 ? "..." : "",
            (unsigned long long)g->size, el, e->size ? e->data : "", e->size > 80 ? "..." : "",
            (unsigned long long)e->size, (long long)r->n_mismatched, (long long)n);
        return;
    }
    if (is_plain_int_type(exp->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            int64_t sa, sb;
            uint64_t ua, ub;
            bool uns;
            int_at(got, i, &sa, &ua, &uns);
            int_at(exp, i, &sb, &ub, &uns);
            if ((uns ? ua != ub : sa != sb) && r->n_mismatched++ == 0)
                r->first_mismatch = i;
        }
        if (!r->n_mismatched)
            return;
        format_index(exp, r->first_mismatch, at, sizeof at);
        int64_t sa, sb;
        uint64_t ua, ub;
        bool uns;
        int_at(got, r->first_mismatch, &sa, &ua, &uns);
        int_at(exp, r->first_mismatch, &sb, &ub, &uns);
        if (uns)
            say(r, "value mismatch at index %s: got %llu expected %llu (%lld of %lld elements differ; integers "
                   "compare exactly)", at, (unsigned long long)ua, (unsigned long long)ub,
                (long long)r->n_mismatched, (long long)n);
        else
            say(r, "value mismatch at index %s: got %lld expected %lld (%lld of %lld elements differ; %s compares "
                   "exactly)", at, (long long)sa, (long long)sb, (long long)r->n_mismatched, (long long)n,
                dtype_label(exp->dtype, lb, sizeof lb));
        return;
    }
    /* packed and float8 types: element by element on the bits */
    const uint8_t *ga = got->data, *ea = exp->data;
    for (int64_t i = 0; i < n; i++) {
        uint64_t bit = (uint64_t)i * bits;
        unsigned mask = bits >= 8 ? 0xffu : (1u << bits) - 1u;
        bool differ = bits >= 8 ? memcmp(ga + bit / 8, ea + bit / 8, bits / 8) != 0
                                : ((ga[bit / 8] >> (bit % 8)) & mask) != ((ea[bit / 8] >> (bit % 8)) & mask);
        if (differ && r->n_mismatched++ == 0)
            r->first_mismatch = i;
    }
    if (!r->n_mismatched)
        return;
    format_index(exp, r->first_mismatch, at, sizeof at);
    say(r, "%s bits differ at index %s (%lld of %lld elements; compared bit-exact)",
        dtype_label(exp->dtype, lb, sizeof lb), at, (long long)r->n_mismatched, (long long)n);
}

SY_EXPORT sy_status *sy_compare_tensors(const sy_tensor *got, const sy_tensor *want, double rtol, double atol,
                                        sy_compare_result *result)
{
    if (!got || !want || !result || result->struct_size < sizeof *result)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_compare_tensors: got, want and a result of "
                                "struct_size >= %zu are required", sizeof *result);
    if (!(rtol >= 0) || !(atol >= 0))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_compare_tensors: rtol %g and atol %g must be >= 0", rtol,
                                atol);
    size_t keep = result->struct_size;
    memset(result, 0, sizeof *result);
    result->struct_size = keep;
    result->equal = 1;
    result->first_mismatch = -1;
    char gd[200], ed[200], l1[32], l2[32];
    format_dims(got->rank, got->dims, gd, sizeof gd);
    format_dims(want->rank, want->dims, ed, sizeof ed);
    if (got->dtype != want->dtype) {
        say(result, "dtype %s, expected %s", dtype_label(got->dtype, l1, sizeof l1),
            dtype_label(want->dtype, l2, sizeof l2));
        return NULL;
    }
    bool same_shape = got->rank == want->rank;
    for (int32_t d = 0; same_shape && d < got->rank; d++)
        same_shape = got->dims[d] == want->dims[d];
    if (!same_shape) {
        say(result, "shape %s, expected %s", gd, ed);
        return NULL;
    }
    int64_t n = sy_tensor_numel(want);
    result->n_elements = n > 0 ? n : 0;
    if (n <= 0)
        return NULL;
    unsigned bits = dtype_bits(want->dtype);
    if (!bits)
        return sy_status_create(SY_ERR_UNSUPPORTED, "cannot compare elements of dtype %s",
                                dtype_label(want->dtype, l1, sizeof l1));
    size_t need = (size_t)(((uint64_t)n * bits + 7) / 8);
    if (!got->data || got->nbytes < need)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "%s %s: %zu data bytes, %zu needed",
                                dtype_label(got->dtype, l1, sizeof l1), gd, got->data ? got->nbytes : 0, need);
    if (!want->data || want->nbytes < need)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "the reference holds %zu data bytes, %zu needed",
                                want->data ? want->nbytes : 0, need);
    compare(got, want, rtol, atol, bits, result);
    return NULL;
}
