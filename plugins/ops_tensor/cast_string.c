/*
 * Cast (and CastLike) between string tensors and numbers, as the ONNX
 * reference (NumPy) does it:
 *   number -> string  integers in decimal; float and double as NumPy's str
 *                     of the value: the shortest digits that read back to
 *                     the same value, positional for 1e-4 <= |x| < 1e16
 *                     ("0.25", "100.0", "-0.0"), else scientific ("1e-05",
 *                     "1.5e+16"); "nan", "inf", "-inf";
 *   string -> number  the whole string (surrounding whitespace allowed) in
 *                     decimal: floats as Python's float() then rounded to
 *                     float32 once more (NumPy's astype of a str), "inf",
 *                     "nan" and exponents included, hexadecimal refused;
 *                     integers must fit the type.
 * bool, float16, bfloat16 and the low-bit types are refused either way (not
 * implemented). An element that is not a number is refused, naming it.
 */
#include "tensor_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static bool is_text_float(sy_dtype dt) { return dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT64; }
static bool is_text_int(sy_dtype dt)
{
    return dt == SY_DT_INT8 || dt == SY_DT_INT16 || dt == SY_DT_INT32 || dt == SY_DT_INT64 || dt == SY_DT_UINT8 ||
           dt == SY_DT_UINT16 || dt == SY_DT_UINT32 || dt == SY_DT_UINT64;
}

bool cast_string_supported(sy_dtype from, sy_dtype to)
{
    if (from == SY_DT_STRING && to == SY_DT_STRING)
        return true;
    sy_dtype other = from == SY_DT_STRING ? to : to == SY_DT_STRING ? from : SY_DT_UNDEFINED;
    return is_text_float(other) || is_text_int(other);
}

/* NumPy's str of a float32 (single) or double; returns the length (< 40). */
static int format_float(double v, bool single, char *out)
{
    if (isnan(v))
        return sprintf(out, "nan");
    if (isinf(v))
        return sprintf(out, v < 0 ? "-inf" : "inf");
    int p = 1;
    char buf[48];
    for (; p < (single ? 9 : 17); p++) { /* the shortest digits that read back */
        snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        if (single ? (float)strtod(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            break;
    }
    snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    int e = atoi(strchr(buf, 'e') + 1);
    double a = fabs(v);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        int dec = p - 1 - e > 0 ? p - 1 - e : 0;
        int n = sprintf(out, "%.*f", dec, v);
        if (!strchr(out, '.'))
            n += sprintf(out + n, ".0");
        return n;
    }
    return sprintf(out, "%s", buf); /* "1e-05", "1.5e+16": NumPy writes the same */
}

static sy_status *to_text(const sy_host_api *H, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t n = (size_t)sy_tensor_numel(x);
    char *p;
    SY_TRY(sy_str_alloc(H, io, n * 40, &p)); /* every form above fits 40 bytes */
    sy_string *o = y->data;
    for (size_t i = 0; i < n; i++) {
        int len;
        if (x->dtype == SY_DT_FLOAT32)
            len = format_float(((const float *)x->data)[i], true, p);
        else if (x->dtype == SY_DT_FLOAT64)
            len = format_float(((const double *)x->data)[i], false, p);
        else if (x->dtype == SY_DT_UINT64)
            len = sprintf(p, "%llu", (unsigned long long)((const uint64_t *)x->data)[i]);
        else
            len = sprintf(p, "%lld", (long long)sy_load_i64(x->data, x->dtype, i));
        o[i].data = p;
        o[i].size = (uint64_t)len;
        p += len;
    }
    return NULL;
}

/* the element as a NUL-terminated copy without surrounding whitespace */
static bool element_text(const sy_string *s, char *buf, size_t cap)
{
    size_t b = 0, e = (size_t)s->size;
    while (b < e && (s->data[b] == ' ' || (s->data[b] >= '\t' && s->data[b] <= '\r')))
        b++;
    while (e > b && (s->data[e - 1] == ' ' || (s->data[e - 1] >= '\t' && s->data[e - 1] <= '\r')))
        e--;
    if (e - b + 1 > cap || memchr(s->data + b, '\0', e - b))
        return false;
    memcpy(buf, s->data + b, e - b);
    buf[e - b] = '\0';
    return e > b;
}

static sy_status *from_text(const sy_host_api *H, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t n = (size_t)sy_tensor_numel(x);
    const sy_string *s = x->data;
    char buf[128];
    for (size_t i = 0; i < n; i++) {
        char *end = NULL;
        bool ok = element_text(&s[i], buf, sizeof buf) && !strpbrk(buf, "xX");
        errno = 0;
        if (ok && is_text_float(y->dtype)) {
            double v = strtod(buf, &end);
            ok = *end == '\0';
            if (ok && y->dtype == SY_DT_FLOAT32)
                ((float *)y->data)[i] = (float)v;
            else if (ok)
                ((double *)y->data)[i] = v;
        } else if (ok && y->dtype == SY_DT_UINT64) {
            ok = buf[0] != '-';
            unsigned long long v = ok ? strtoull(buf, &end, 10) : 0;
            ok = ok && *end == '\0' && errno == 0;
            if (ok)
                ((uint64_t *)y->data)[i] = v;
        } else if (ok) {
            long long v = strtoll(buf, &end, 10);
            ok = *end == '\0' && errno == 0;
            int64_t lo = y->dtype == SY_DT_INT8 ? INT8_MIN : y->dtype == SY_DT_INT16 ? INT16_MIN
                       : y->dtype == SY_DT_INT32 ? INT32_MIN : y->dtype == SY_DT_INT64 ? INT64_MIN : 0;
            int64_t hi = y->dtype == SY_DT_INT8 ? INT8_MAX : y->dtype == SY_DT_INT16 ? INT16_MAX
                       : y->dtype == SY_DT_INT32 ? INT32_MAX : y->dtype == SY_DT_UINT8 ? UINT8_MAX
                       : y->dtype == SY_DT_UINT16 ? UINT16_MAX : y->dtype == SY_DT_UINT32 ? (int64_t)UINT32_MAX
                       : INT64_MAX;
            ok = ok && v >= lo && v <= hi;
            if (ok)
                sy_store_i64(y->data, y->dtype, i, v);
        }
        if (!ok)
            return H->status_new(SY_ERR_INVALID_ARGUMENT, "Cast: string %zu (\"%.*s\") is not a %s number", i,
                                 (int)(s[i].size > 40 ? 40 : s[i].size), s[i].size ? s[i].data : "",
                                 sy_dt_name(y->dtype));
    }
    return NULL;
}

sy_status *cast_string_run(const sy_host_api *H, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (x->dtype == SY_DT_STRING && y->dtype == SY_DT_STRING) {
        memcpy(y->data, x->data, x->nbytes); /* records only: the text is shared */
        return NULL;
    }
    return x->dtype == SY_DT_STRING ? from_text(H, io) : to_text(H, io);
}
