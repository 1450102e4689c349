/*
 * StringNormalizer (10): drop the `stopwords` (compared exactly, or, with
 * is_case_sensitive = 0, after lower-casing both sides), then lower- or
 * upper-case what is left (case_change_action LOWER / UPPER / NONE). X is
 * [C] or [1, C]; Y is [C'] or [1, C'], and [1] or [1, 1] holding "" when
 * nothing is left (ONNX's rule). C' depends on the values when there are
 * stopwords, so infer then needs them (dynamic otherwise).
 *
 * Case mapping is Unicode's simple one-to-one mapping (towlower/towupper of
 * the C.UTF-8 locale, the mapping ONNX Runtime's std::ctype<wchar_t> uses),
 * whatever `locale` names, except the locales whose case rules differ
 * (Turkish, Azeri: dotted/dotless i; Lithuanian), which are refused rather
 * than answered wrongly. Reading characters needs valid UTF-8: an element
 * that is not is refused, naming it.
 */
#include "string_internal.h"

#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <wctype.h>

#define H sy_string_host
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

/* C.UTF-8, created when the first environment registers the family and freed
 * when the last one finishes (a locale left at dlclose is a leak); (locale_t)0
 * when the system has no C.UTF-8. Kernels run only between the two. */
static locale_t utf8_locale;
static unsigned locale_users;
static pthread_mutex_t locale_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct norm_cfg {
    int action;
    bool sensitive;
    const sy_string *stops; /* copies (prepare) or the attribute's (infer) */
    size_t n_stops;
    char *stop_text; /* prepare: owns the copies */
} norm_cfg;

static uint32_t map_case(uint32_t c, int action)
{
    if (c < 0x80)
        return action == CASE_LOWER && c >= 'A' && c <= 'Z' ? c + 32 : action == CASE_UPPER && c >= 'a' && c <= 'z' ? c - 32 : c;
    if (!utf8_locale)
        return c;
    wint_t w = action == CASE_LOWER ? towlower_l((wint_t)c, utf8_locale) : towupper_l((wint_t)c, utf8_locale);
    /* a mapping outside Unicode or into a surrogate would not encode: keep c */
    return w > 0x10ffff || (w >= 0xd800 && w <= 0xdfff) ? c : (uint32_t)w;
}

/* a == b after lower-casing both (both valid UTF-8) */
static bool equal_nocase(const sy_string *a, const sy_string *b)
{
    size_t i = 0, j = 0;
    while (i < a->size && j < b->size)
        if (map_case(sy_utf8_next(a->data, &i), CASE_LOWER) != map_case(sy_utf8_next(b->data, &j), CASE_LOWER))
            return false;
    return i == a->size && j == b->size;
}

static bool is_stop(const norm_cfg *c, const sy_string *s)
{
    for (size_t k = 0; k < c->n_stops; k++)
        if (c->sensitive ? sy_str_equal(s, &c->stops[k]) : equal_nocase(s, &c->stops[k]))
            return true;
    return false;
}

/* Attributes; stopwords point into the attribute (`stops` is an array the caller frees). */
static sy_status *cfg_of(const sy_node *n, norm_cfg *c, sy_string **stops)
{
    memset(c, 0, sizeof *c);
    *stops = NULL;
    char act[16], loc[32];
    sy_attr_string_or(H, n, "case_change_action", "NONE", act, sizeof act);
    c->action = !strcmp(act, "NONE") ? CASE_NONE : !strcmp(act, "LOWER") ? CASE_LOWER : !strcmp(act, "UPPER") ? CASE_UPPER : -1;
    if (c->action < 0)
        return ERR(SY_ERR_INVALID_MODEL, "case_change_action must be NONE, LOWER or UPPER, got \"%s\"", act);
    c->sensitive = sy_attr_int_or(H, n, "is_case_sensitive", 0) != 0;
    sy_attr_string_or(H, n, "locale", "en_US", loc, sizeof loc);
    if ((c->action != CASE_NONE || !c->sensitive) &&
        (!strncmp(loc, "tr", 2) || !strncmp(loc, "az", 2) || !strncmp(loc, "lt", 2)))
        return ERR(SY_ERR_UNSUPPORTED, "locale \"%s\" has its own case rules, which are not implemented (only "
                   "Unicode's default case mapping is)", loc);
    const char *const *sw;
    size_t ns = 0;
    if (H->attr_strings(n, "stopwords", &sw, &ns) && ns) {
        *stops = calloc(ns, sizeof **stops);
        if (!*stops)
            return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t k = 0; k < ns; k++) {
            size_t len = strlen(sw[k]);
            if (sy_utf8_valid_prefix(sw[k], len) != len)
                return ERR(SY_ERR_INVALID_MODEL, "stopwords[%zu] is not valid UTF-8", k);
            (*stops)[k].data = sw[k];
            (*stops)[k].size = len;
        }
    }
    c->stops = *stops;
    c->n_stops = ns;
    return NULL;
}

static bool reads_chars(const norm_cfg *c) { return c->action != CASE_NONE || (!c->sensitive && c->n_stops); }

/* The number of elements kept; every element read as characters is checked. */
static sy_status *count_kept(const norm_cfg *c, const sy_tensor *x, int64_t *kept)
{
    int64_t n = sy_tensor_numel(x), k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (reads_chars(c))
            SY_TRY(str_check_utf8(x, i, "StringNormalizer X"));
        k += !is_stop(c, &str_data(x)[i]);
    }
    *kept = k;
    return NULL;
}

static sy_status *infer_norm(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(str_need_input(n, 0, "X", &x));
    if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
        return ERR(SY_ERR_SHAPE, "X must be [C] or [1, C], got rank %d%s", (int)x->rank,
                   x->rank == 2 ? " with a first dimension other than 1" : "");
    norm_cfg c;
    sy_string *stops;
    sy_status *st = cfg_of(n, &c, &stops);
    int64_t kept = x->dims[x->rank - 1];
    if (!st && c.n_stops) {
        if (!x->data && kept > 0)
            st = ERR(SY_ERR_DYNAMIC_SHAPE, "how many stopwords X holds is not known before the run");
        else if (kept > 0)
            st = count_kept(&c, x, &kept);
    }
    free(stops);
    if (st)
        return st;
    int64_t dims[2] = {1, kept ? kept : 1};
    return x->rank == 1 ? H->node_set_output(n, 0, SY_DT_STRING, 1, dims + 1)
                        : H->node_set_output(n, 0, SY_DT_STRING, 2, dims);
}

static void release_norm(void *state)
{
    norm_cfg *c = state;
    if (!c)
        return;
    free((void *)(uintptr_t)c->stops);
    free(c->stop_text);
    free(c);
}

static sy_status *prepare_norm(sy_node *n, void **state)
{
    norm_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_string *stops;
    sy_status *st = cfg_of(n, c, &stops);
    size_t text = 0;
    for (size_t k = 0; !st && k < c->n_stops; k++)
        text += (size_t)stops[k].size;
    /* run reads the stopwords: copy them out of the attribute */
    if (!st && c->n_stops && !(c->stop_text = malloc(text ? text : 1)))
        st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t k = 0, off = 0; !st && k < c->n_stops; k++) {
        memcpy(c->stop_text + off, stops[k].data, (size_t)stops[k].size);
        stops[k].data = c->stop_text + off;
        off += (size_t)stops[k].size;
    }
    if (st) {
        free(stops);
        c->stops = NULL;
        release_norm(c);
        return st;
    }
    *state = c;
    return NULL;
}

static sy_status *run_norm(void *state, const sy_kernel_io *io)
{
    const norm_cfg *c = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t n = sy_tensor_numel(x), kept, cap = sy_tensor_numel(y);
    SY_TRY(count_kept(c, x, &kept));
    if ((kept ? kept : 1) != cap)
        return ERR(SY_ERR_RUNTIME, "X keeps %lld strings, the plan has room for %lld", (long long)kept, (long long)cap);
    /* a code point's case partner takes at most 4 bytes, and at most twice
     * its own bytes (ASCII maps to ASCII) */
    size_t total = 0;
    for (int64_t i = 0; i < n; i++)
        total += 2 * (size_t)str_data(x)[i].size;
    char *p;
    SY_TRY(sy_str_alloc(H, io, total, &p));
    sy_string *o = y->data;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        const sy_string *s = &str_data(x)[i];
        if (is_stop(c, s))
            continue;
        o[k].data = p;
        if (c->action == CASE_NONE) {
            if (s->size)
                memcpy(p, s->data, (size_t)s->size);
            p += s->size;
        } else {
            size_t j = 0;
            while (j < s->size)
                p += sy_utf8_put(map_case(sy_utf8_next(s->data, &j), c->action), p);
        }
        o[k].size = (uint64_t)(p - o[k].data);
        k++;
    }
    if (!kept) {
        o[0].data = p;
        o[0].size = 0;
    }
    return NULL;
}

static const sy_attr_def a_norm[] = {{"case_change_action", SY_ATTR_STRING, false},
                                     {"is_case_sensitive", SY_ATTR_INT, false},
                                     {"locale", SY_ATTR_STRING, false},
                                     {"stopwords", SY_ATTR_STRINGS, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("StringNormalizer", 10, 1, 1, 1, 1, SY_ATTRS(a_norm), infer_norm, SY_NO_INPLACE, 0),
};
static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("StringNormalizer", 10, 0, SY_DT_BIT(SY_DT_STRING), 0, prepare_norm, run_norm, release_norm),
};

sy_status *string_normalizer_register(const sy_host_api *host, sy_plugin *p)
{
    pthread_mutex_lock(&locale_lock);
    if (locale_users++ == 0)
        utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    pthread_mutex_unlock(&locale_lock);
    sy_status *st = sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
    if (st)
        string_normalizer_release(); /* a failed init gets no fini */
    return st;
}

void string_normalizer_release(void)
{
    pthread_mutex_lock(&locale_lock);
    if (locale_users > 0 && --locale_users == 0 && utf8_locale) {
        freelocale(utf8_locale);
        utf8_locale = (locale_t)0;
    }
    pthread_mutex_unlock(&locale_lock);
}
