/*
 * ops_string: string operators of the default ONNX domain, cpu_ref kernels,
 * on SY_DT_STRING tensors (sy_string records; docs/architecture.md, "String
 * tensors").
 *
 *   StringConcat (20)     Z = X + Y elementwise, numpy broadcasting
 *   StringSplit (20)      Python's str.split: on `delimiter` (consecutive
 *                         delimiters give empty strings), or, when it is
 *                         absent or empty, on runs of whitespace (Unicode
 *                         White_Space as Python's str.isspace, leading and
 *                         trailing ignored); at most `maxsplit` splits from
 *                         the left. Y = X.shape + [most substrings of any
 *                         element], padded with empty strings; Z (int64) =
 *                         each element's count. Y's width depends on the
 *                         values, so infer needs them (dynamic otherwise).
 *   StringNormalizer (10) normalizer.c
 *   RegexFullMatch (20)   regex.c (PCRE2)
 *
 * Output text is copied into the run's string heap (host->run_alloc), never
 * left pointing into an input: a borrowed input may go away before the
 * outputs are read.
 */
#include "string_internal.h"

#include <stdlib.h>

const sy_host_api *sy_string_host;
#define H sy_string_host
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

sy_status *str_need_input(sy_node *n, uint32_t i, const char *what, const sy_tensor **out)
{
    SY_TRY(sy_need_input(H, n, i, out));
    if ((*out)->dtype != SY_DT_STRING)
        return ERR(SY_ERR_TYPE, "%s must be a string tensor, got %s", what, sy_dt_name((*out)->dtype));
    return NULL;
}

sy_status *str_check_utf8(const sy_tensor *t, int64_t i, const char *what)
{
    const sy_string *s = &str_data(t)[i];
    size_t ok = sy_utf8_valid_prefix(s->data, (size_t)s->size);
    if (ok != s->size)
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s: element %lld is not valid UTF-8 (byte %zu of %llu, 0x%02x)", what,
                   (long long)i, ok, (unsigned long long)s->size, (unsigned)(unsigned char)s->data[ok]);
    return NULL;
}

/* ======================================================================== */
/* StringConcat                                                             */
/* ======================================================================== */

static sy_status *infer_concat(sy_node *n)
{
    const sy_tensor *x, *y;
    SY_TRY(str_need_input(n, 0, "X", &x));
    SY_TRY(str_need_input(n, 1, "Y", &y));
    return sy_infer_broadcast(H, n, SY_DT_STRING, -1);
}

/* pass 1: each output's size (its data is set in pass 2) */
static void concat_len(const void *c, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    (void)c;
    const sy_string *a = in[0], *b = in[1];
    sy_string *o = out;
    for (int64_t i = 0; i < n; i++)
        o[i].size = a[st[0] ? i : 0].size + b[st[1] ? i : 0].size;
}

/* pass 2: the text, laid out in output order from *cursor */
static void concat_text(const void *c, const void *const *in, const int64_t *st, void *out, int64_t n)
{
    char **cursor = (char **)(uintptr_t)c;
    const sy_string *a = in[0], *b = in[1];
    sy_string *o = out;
    for (int64_t i = 0; i < n; i++) {
        const sy_string *x = &a[st[0] ? i : 0], *y = &b[st[1] ? i : 0];
        char *p = *cursor;
        if (x->size)
            memcpy(p, x->data, (size_t)x->size);
        if (y->size)
            memcpy(p + x->size, y->data, (size_t)y->size);
        o[i].data = p;
        *cursor = p + x->size + y->size;
    }
}

static sy_status *run_concat(void *state, const sy_kernel_io *io)
{
    (void)state;
    sy_tensor *z = io->outputs[0];
    int64_t n = sy_tensor_numel(z);
    SY_TRY(sy_bcast_apply(H, 2, io->inputs, z, concat_len, NULL));
    size_t total = 0;
    sy_string *o = z->data;
    for (int64_t i = 0; i < n; i++)
        if (__builtin_add_overflow(total, (size_t)o[i].size, &total))
            return ERR(SY_ERR_RUNTIME, "the concatenated strings' total size overflows");
    char *text;
    SY_TRY(sy_str_alloc(H, io, total, &text));
    char *cursor = text;
    return sy_bcast_apply(H, 2, io->inputs, z, concat_text, &cursor);
}

/* ======================================================================== */
/* StringSplit                                                              */
/* ======================================================================== */

typedef struct split_cfg {
    const char *delim; /* NULL: split on whitespace */
    size_t delim_len;
    int64_t maxsplit;  /* < 0: no limit */
} split_cfg;

/* Bytes of the whitespace character at s[i] (Python's str.isspace), 0 if none. */
static size_t space_at(const char *s, size_t n, size_t i)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80)
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) ? 1 : 0;
    size_t j = i;
    if (sy_utf8_valid_prefix(s + i, n - i) == 0)
        return 0; /* the caller validated the string: cannot happen */
    uint32_t cp = sy_utf8_next(s, &j);
    bool sp = cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 ||
              cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
    return sp ? j - i : 0;
}

/* Advance past one character (whitespace mode works on characters). */
static size_t char_len(const char *s, size_t i)
{
    size_t j = i;
    (void)sy_utf8_next(s, &j);
    return j - i;
}

/* The substrings of s as (start, end) pairs into out (NULL: count only);
 * returns their number. The same walk as CPython's split. */
static int64_t split_one(const split_cfg *c, const char *s, size_t n, size_t (*out)[2])
{
    int64_t cnt = 0, left = c->maxsplit < 0 ? INT64_MAX : c->maxsplit;
    size_t i = 0;
    if (c->delim) {
        while (left-- > 0) {
            const char *hit = c->delim_len <= n - i ? memmem(s + i, n - i, c->delim, c->delim_len) : NULL;
            if (!hit)
                break;
            size_t j = (size_t)(hit - s);
            if (out)
                out[cnt][0] = i, out[cnt][1] = j;
            cnt++;
            i = j + c->delim_len;
        }
        if (out)
            out[cnt][0] = i, out[cnt][1] = n;
        return cnt + 1;
    }
    size_t w;
    while (left-- > 0) {
        while (i < n && (w = space_at(s, n, i)))
            i += w;
        if (i == n)
            break;
        size_t j = i;
        i += char_len(s, i);
        while (i < n && !space_at(s, n, i))
            i += char_len(s, i);
        if (out)
            out[cnt][0] = j, out[cnt][1] = i;
        cnt++;
    }
    if (i < n) { /* maxsplit reached: the rest, without its leading whitespace */
        while (i < n && (w = space_at(s, n, i)))
            i += w;
        if (i != n) {
            if (out)
                out[cnt][0] = i, out[cnt][1] = n;
            cnt++;
        }
    }
    return cnt;
}

static sy_status *split_cfg_of(const sy_node *n, split_cfg *c)
{
    const char *d = NULL;
    size_t dl = 0;
    c->delim = H->attr_string(n, "delimiter", &d, &dl) && dl ? d : NULL;
    c->delim_len = c->delim ? dl : 0;
    c->maxsplit = sy_attr_int_or(H, n, "maxsplit", -1);
    return NULL;
}

/* The widest split of X (which has data); whitespace mode reads characters. */
static sy_status *split_width(const split_cfg *c, const sy_tensor *x, int64_t *width)
{
    int64_t n = sy_tensor_numel(x), w = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!c->delim)
            SY_TRY(str_check_utf8(x, i, "StringSplit X"));
        const sy_string *s = &str_data(x)[i];
        int64_t k = split_one(c, s->data, (size_t)s->size, NULL);
        if (k > w)
            w = k;
    }
    *width = w;
    return NULL;
}

static sy_status *infer_split(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(str_need_input(n, 0, "X", &x));
    if (x->rank + 1 > SY_MAX_RANK)
        return ERR(SY_ERR_UNSUPPORTED, "X has rank %d; Y adds an axis and at most %d are supported", (int)x->rank,
                   SY_MAX_RANK);
    if (!x->data && sy_tensor_numel(x) > 0)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the number of substrings is not known before the run");
    split_cfg c;
    SY_TRY(split_cfg_of(n, &c));
    int64_t w = 0, dims[SY_MAX_RANK];
    if (sy_tensor_numel(x) > 0)
        SY_TRY(split_width(&c, x, &w));
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[x->rank] = w;
    SY_TRY(H->node_set_output(n, 0, SY_DT_STRING, x->rank + 1, dims));
    if (H->node_num_outputs(n) > 1)
        SY_TRY(H->node_set_output(n, 1, SY_DT_INT64, x->rank, x->dims));
    return NULL;
}

static sy_status *prepare_split(sy_node *n, void **state)
{
    split_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = split_cfg_of(n, c);
    if (st) {
        free(c);
        return st;
    }
    /* the delimiter is read in run: keep a copy, not the attribute's storage */
    if (c->delim) {
        char *d = malloc(c->delim_len);
        if (!d) {
            free(c);
            return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        }
        memcpy(d, c->delim, c->delim_len);
        c->delim = d;
    }
    *state = c;
    return NULL;
}

static void release_split(void *state)
{
    split_cfg *c = state;
    if (c)
        free((void *)(uintptr_t)c->delim);
    free(c);
}

static sy_status *run_split(void *state, const sy_kernel_io *io)
{
    const split_cfg *c = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0], *z = io->n_outputs > 1 ? io->outputs[1] : NULL;
    int64_t n = sy_tensor_numel(x), w = y->dims[y->rank - 1];
    size_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        const sy_string *s = &str_data(x)[i];
        if (!c->delim)
            SY_TRY(str_check_utf8(x, i, "StringSplit X"));
        if (split_one(c, s->data, (size_t)s->size, NULL) > w)
            return ERR(SY_ERR_RUNTIME, "X element %lld splits into more substrings than planned (%lld)", (long long)i,
                       (long long)w);
        total += (size_t)s->size; /* substrings never hold more than their string */
    }
    char *text;
    SY_TRY(sy_str_alloc(H, io, total, &text));
    size_t (*spans)[2] = w > 0 ? malloc((size_t)w * sizeof *spans) : NULL;
    if (w > 0 && !spans)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_string *o = y->data;
    int64_t *counts = z ? z->data : NULL;
    char *p = text;
    for (int64_t i = 0; i < n; i++) {
        const sy_string *s = &str_data(x)[i];
        int64_t k = split_one(c, s->data, (size_t)s->size, spans);
        for (int64_t j = 0; j < w; j++) {
            sy_string *r = &o[i * w + j];
            r->data = p;
            r->size = 0;
            if (j < k) {
                r->size = spans[j][1] - spans[j][0];
                if (r->size)
                    memcpy(p, s->data + spans[j][0], (size_t)r->size);
                p += r->size;
            }
        }
        if (counts)
            counts[i] = k;
    }
    free(spans);
    return NULL;
}

/* ======================================================================== */

static const sy_attr_def a_split[] = {{"delimiter", SY_ATTR_STRING, false}, {"maxsplit", SY_ATTR_INT, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("StringConcat", 20, 2, 2, 1, 1, SY_NO_ATTRS, infer_concat, SY_NO_INPLACE, 0),
    SY_SCHEMA("StringSplit", 20, 1, 1, 2, 2, SY_ATTRS(a_split), infer_split, SY_NO_INPLACE, 0),
};

#define STR SY_DT_BIT(SY_DT_STRING)
static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("StringConcat", 20, 0, STR, 0, sy_prepare_nothing, run_concat, NULL),
    SY_CPU_KERNEL("StringSplit", 20, 0, STR, 0, prepare_split, run_split, release_split),
};

static sy_status *string_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    if (!sy_host_has_run_alloc(host))
        return ERR(SY_ERR_ABI_MISMATCH, "ops_string needs a host of ABI 1.3 or later (run_alloc for output strings); "
                   "this host is %u.%u", host->abi_major, host->abi_minor);
    SY_TRY(sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)));
    SY_TRY(string_normalizer_register(host, p));
    sy_status *st = string_regex_register(host, p);
    if (st)
        string_normalizer_release(); /* a failed init gets no fini */
    return st;
}

static void string_fini(void) { string_normalizer_release(); }

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_string",
    .version = "0.1.0",
    .description = "string operators (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = string_init,
    .fini = string_fini,
};

SY_PLUGIN_DEFINE(desc)
