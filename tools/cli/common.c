#include "cli.h"

#include <switchyard/sy_sdk.h> /* fp16 / bf16 conversions (after switchyard.h) */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_fail(sy_status *st, const char *context)
{
    fprintf(stderr, "switchyard: %s%s%s: %s\n", context ? context : "", context ? ": " : "",
            sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
    sy_status_free(st);
    return 1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "switchyard %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'switchyard %s --help')\n", cmd);
    va_end(ap);
    return 2;
}

sy_status *cli_env(const char *config, sy_env **out) { return sy_env_create(config, out); }

const char *cli_requant_arg(const char *cmd, const char *v)
{
    if (!strcmp(v, "onnx") || !strcmp(v, "gemmlowp") || !strcmp(v, "single_rounding"))
        return v;
    cli_usage_error(cmd, "--requant expects onnx, gemmlowp or single_rounding, got '%s'", v);
    return NULL;
}

long cli_parse_long(const char *s, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || !*s || v < min || v > max)
        return -1;
    return v;
}

void cli_format_dims(const int32_t rank, const int64_t *dims, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "[");
    for (int32_t d = 0; d < rank && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? "," : "", (long long)dims[d]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
}

static double elem_as_double(const sy_tensor *t, int64_t i)
{
    const void *d = t->data;
    switch (t->dtype) {
    case SY_DT_FLOAT32: return ((const float *)d)[i];
    case SY_DT_FLOAT64: return ((const double *)d)[i];
    case SY_DT_FLOAT16: return sy_f16_to_f32(((const uint16_t *)d)[i]);
    case SY_DT_BFLOAT16: return sy_bf16_to_f32(((const uint16_t *)d)[i]);
    case SY_DT_INT8: return ((const int8_t *)d)[i];
    case SY_DT_UINT8: case SY_DT_BOOL: return ((const uint8_t *)d)[i];
    case SY_DT_INT16: return ((const int16_t *)d)[i];
    case SY_DT_UINT16: return ((const uint16_t *)d)[i];
    case SY_DT_INT32: return ((const int32_t *)d)[i];
    case SY_DT_UINT32: return ((const uint32_t *)d)[i];
    case SY_DT_INT64: return (double)((const int64_t *)d)[i];
    case SY_DT_UINT64: return (double)((const uint64_t *)d)[i];
    default: return NAN;
    }
}

void cli_print_tensor_summary(FILE *f, const char *label, const sy_tensor *t)
{
    char dims[160];
    cli_format_dims(t->rank, t->dims, dims, sizeof dims);
    int64_t n = sy_tensor_numel(t);
    fprintf(f, "%s '%s' %s %s", label, t->name ? t->name : "?", sy_dtype_name(t->dtype), dims);
    if (n == 0 || !t->data || sy_dtype_size(t->dtype) == 0) {
        fprintf(f, " (%lld elements)\n", (long long)n);
        return;
    }
    if (t->dtype == SY_DT_STRING) {
        /* the first strings, quoted, cut at 40 bytes */
        fprintf(f, ":");
        for (int64_t i = 0; i < n && i < 6; i++) {
            size_t len;
            const char *str = sy_tensor_string(t, i, &len);
            fprintf(f, " \"%.*s\"%s", (int)(len > 40 ? 40 : len), str ? str : "", len > 40 ? "..." : "");
        }
        fprintf(f, "%s\n", n > 6 ? " ..." : "");
        return;
    }
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = elem_as_double(t, i);
        if (v < mn)
            mn = v;
        if (v > mx)
            mx = v;
        sum += v;
    }
    fprintf(f, ": min %.6g max %.6g mean %.6g\n", mn, mx, sum / (double)n);
    /* a vector (one dim > 1): top-5 */
    int big = 0;
    for (int32_t d = 0; d < t->rank; d++)
        big += t->dims[d] > 1;
    if (big == 1 && n > 1) {
        int64_t top[5];
        int k = n < 5 ? (int)n : 5;
        for (int j = 0; j < k; j++) {
            int64_t best = -1;
            for (int64_t i = 0; i < n; i++) {
                bool used = false;
                for (int u = 0; u < j; u++)
                    used |= top[u] == i;
                if (!used && (best < 0 || elem_as_double(t, i) > elem_as_double(t, best)))
                    best = i;
            }
            top[j] = best;
        }
        fprintf(f, "  top-%d:", k);
        for (int j = 0; j < k; j++)
            fprintf(f, " [%lld] %.6g", (long long)top[j], elem_as_double(t, top[j]));
        fprintf(f, "\n");
    } else {
        fprintf(f, "  first:");
        for (int64_t i = 0; i < n && i < 6; i++)
            fprintf(f, " %.6g", elem_as_double(t, i));
        fprintf(f, "%s\n", n > 6 ? " ..." : "");
    }
}

static uint16_t float_to_half(float f)
{
    /* only used for the deterministic pattern in [-1, 1] */
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000;
    int e = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (e <= 0)
        return (uint16_t)sign;
    return (uint16_t)(sign | (uint32_t)(e << 10) | (m >> 13));
}

sy_tensor *cli_make_pattern_input(const sy_value_info *vi)
{
    int64_t dims[SY_MAX_RANK];
    int64_t n = 1;
    for (int32_t d = 0; d < vi->rank; d++) {
        dims[d] = vi->dims[d] >= 0 ? vi->dims[d] : 1;
        n *= dims[d];
    }
    size_t es = sy_dtype_size(vi->dtype);
    if (!es || vi->dtype == SY_DT_STRING) /* no pattern of text */
        return NULL;
    sy_tensor *t = calloc(1, sizeof *t + (size_t)n * es + 64);
    if (!t)
        return NULL;
    t->struct_size = sizeof *t;
    t->dtype = vi->dtype;
    t->rank = vi->rank;
    memcpy(t->dims, dims, sizeof dims);
    t->data = (void *)(((uintptr_t)(t + 1) + 63) & ~(uintptr_t)63);
    t->nbytes = (size_t)n * es;
    t->name = vi->name;
    for (int64_t i = 0; i < n; i++) {
        /* a smooth deterministic pattern in [-1, 1] */
        float v = (float)sin((double)i * 0.1);
        switch (vi->dtype) {
        case SY_DT_FLOAT32: ((float *)t->data)[i] = v; break;
        case SY_DT_FLOAT64: ((double *)t->data)[i] = v; break;
        case SY_DT_FLOAT16: ((uint16_t *)t->data)[i] = float_to_half(v); break;
        case SY_DT_BFLOAT16: {
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            ((uint16_t *)t->data)[i] = (uint16_t)(u >> 16);
            break;
        }
        case SY_DT_INT8: ((int8_t *)t->data)[i] = (int8_t)(v * 100); break;
        case SY_DT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)(128 + v * 100); break;
        case SY_DT_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(i & 1); break;
        case SY_DT_INT16: ((int16_t *)t->data)[i] = (int16_t)(v * 1000); break;
        case SY_DT_UINT16: ((uint16_t *)t->data)[i] = (uint16_t)(i % 1000); break;
        case SY_DT_INT32: ((int32_t *)t->data)[i] = (int32_t)(i % 7); break;
        case SY_DT_UINT32: ((uint32_t *)t->data)[i] = (uint32_t)(i % 7); break;
        case SY_DT_INT64: ((int64_t *)t->data)[i] = i % 7; break;
        case SY_DT_UINT64: ((uint64_t *)t->data)[i] = (uint64_t)(i % 7); break;
        default: break;
        }
    }
    return t;
}

static sy_status *feed_file(sy_session *s, size_t index, const char *name, const char *path, FILE *log, int quiet)
{
    sy_tensor *t = NULL;
    sy_status *st = sy_tensor_read_file(path, &t);
    if (st)
        return st;
    st = name ? sy_session_set_input(s, name, t, SY_INPUT_COPY) : sy_session_set_input_by_index(s, index, t, SY_INPUT_COPY);
    if (!st && !quiet) {
        char dims[160];
        cli_format_dims(t->rank, t->dims, dims, sizeof dims);
        fprintf(log, "input %zu '%s' %s %s from %s\n", index, name ? name : "", sy_dtype_name(t->dtype), dims, path);
    }
    sy_tensor_free(t);
    return st;
}

sy_status *cli_feed_inputs(sy_session *s, const sy_model *m, const cli_inputs *in, FILE *log)
{
    size_t n = sy_model_input_count(m);
    for (size_t i = 0; i < n; i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_input_info(m, i, &vi);
        const char *file = NULL;
        char path[4096];
        for (int p = 0; p < in->n_pairs; p++) {
            const char *eq = strchr(in->pairs[p], '=');
            if (eq && (size_t)(eq - in->pairs[p]) == strlen(vi.name) && !strncmp(in->pairs[p], vi.name, strlen(vi.name)))
                file = eq + 1;
        }
        if (!file && in->dir) {
            snprintf(path, sizeof path, "%s/input_%zu.pb", in->dir, i);
            FILE *probe = fopen(path, "rb");
            if (!probe) {
                snprintf(path, sizeof path, "%s/input_%zu.npy", in->dir, i);
                probe = fopen(path, "rb");
            }
            if (!probe)
                return sy_status_create(SY_ERR_NOT_FOUND, "%s/input_%zu.pb (or .npy) not found for input %zu '%s'",
                                        in->dir, i, i, vi.name);
            fclose(probe);
            file = path;
        }
        if (file) {
            sy_status *st = feed_file(s, i, vi.name, file, log, in->quiet);
            if (st)
                return st;
            continue;
        }
        sy_tensor *t = cli_make_pattern_input(&vi);
        if (!t)
            return sy_status_create(SY_ERR_UNSUPPORTED, "cannot make a deterministic input for '%s' of dtype %s",
                                    vi.name, sy_dtype_name(vi.dtype));
        if (!in->quiet) {
            char dims[160];
            cli_format_dims(t->rank, t->dims, dims, sizeof dims);
            fprintf(log, "input %zu '%s' %s %s: no input given, using a deterministic pattern (sin(0.1*i))\n", i,
                    vi.name, sy_dtype_name(t->dtype), dims);
        }
        sy_status *st = sy_session_set_input_by_index(s, i, t, SY_INPUT_COPY);
        free(t);
        if (st)
            return st;
    }
    for (int p = 0; p < in->n_pairs; p++) {
        const char *eq = strchr(in->pairs[p], '=');
        if (!eq)
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "--input '%s': expected NAME=FILE", in->pairs[p]);
        bool found = false;
        for (size_t i = 0; i < n; i++) {
            sy_value_info vi = {.struct_size = sizeof vi};
            sy_model_input_info(m, i, &vi);
            if ((size_t)(eq - in->pairs[p]) == strlen(vi.name) && !strncmp(in->pairs[p], vi.name, strlen(vi.name)))
                found = true;
        }
        if (!found)
            return sy_status_create(SY_ERR_NOT_FOUND, "--input %s: the model has no input named '%.*s'",
                                    in->pairs[p], (int)(eq - in->pairs[p]), in->pairs[p]);
    }
    return NULL;
}

double cli_tensor_elem(const sy_tensor *t, int64_t i) { return elem_as_double(t, i); }
