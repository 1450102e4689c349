/*
 * TfIdfVectorizer (9, default domain) on int32 / int64 token ids with
 * pool_int64s, or on string tokens with pool_strings (compared byte for
 * byte; a pool string ends at its first NUL, as the attribute carries it).
 *
 * The pool holds n-grams of each length (ngram_counts[k]: where the
 * (k + 1)-grams start); the j-th n-gram of the pool counts into output
 * column ngram_indexes[j]. For every skip distance d = 1 .. max_skip_count + 1
 * and start position, the n-grams x[s], x[s + d], ... of lengths
 * min_gram_length .. max_gram_length found in the pool are counted
 * (unigrams once, not once per d). TF gives the counts, IDF the weight (1)
 * of each column that occurred, TFIDF count * weight. Output [C_out] for a
 * 1-D input, [B, C_out] for [B, C].
 */
#include "ml_internal.h"

#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

enum { TF, IDF, TFIDF };

typedef struct tfidf {
    int mode;
    int64_t min_n, max_n, max_skip, out_size;
    const int64_t *pool, *counts, *indexes;
    const char *const *spool; /* pool_strings (pool is NULL then) */
    size_t *spool_len;
    size_t n_pool, n_counts, n_indexes;
    const float *weights;
    size_t n_weights;
} tfidf;

static sy_status *tfidf_of(const sy_node *n, tfidf *t)
{
    memset(t, 0, sizeof *t);
    char mode[8];
    sy_attr_string_or(H, n, "mode", "", mode, sizeof mode);
    t->mode = !strcmp(mode, "TF") ? TF : !strcmp(mode, "IDF") ? IDF : !strcmp(mode, "TFIDF") ? TFIDF : -1;
    if (t->mode < 0)
        return ERR(SY_ERR_INVALID_MODEL, "mode must be \"TF\", \"IDF\" or \"TFIDF\", got \"%s\"", mode);
    t->min_n = sy_attr_int_or(H, n, "min_gram_length", 0);
    t->max_n = sy_attr_int_or(H, n, "max_gram_length", 0);
    t->max_skip = sy_attr_int_or(H, n, "max_skip_count", 0);
    if (t->min_n < 1 || t->max_n < t->min_n || t->max_skip < 0 || t->max_n > 64 || t->max_skip > 4096)
        return ERR(SY_ERR_INVALID_MODEL,
                   "need 1 <= min_gram_length (%lld) <= max_gram_length (%lld) <= 64 and 0 <= max_skip_count (%lld) "
                   "<= 4096", (long long)t->min_n, (long long)t->max_n, (long long)t->max_skip);
    const char *const *strs;
    size_t ns = 0, ni = 0;
    const int64_t *ints = NULL;
    bool has_s = H->attr_strings(n, "pool_strings", &strs, &ns), has_i = H->attr_ints(n, "pool_int64s", &ints, &ni);
    if (has_s == has_i)
        return ERR(SY_ERR_INVALID_MODEL, "exactly one of pool_int64s and pool_strings is required, %s",
                   has_s ? "both are given" : "neither is given");
    if (has_s) {
        t->spool = strs;
        t->n_pool = ns;
    } else {
        t->pool = ints;
        t->n_pool = ni;
    }
    if (!H->attr_ints(n, "ngram_counts", &t->counts, &t->n_counts) ||
        !H->attr_ints(n, "ngram_indexes", &t->indexes, &t->n_indexes))
        return ERR(SY_ERR_INVALID_MODEL, "ngram_counts and ngram_indexes are required");
    /* the pool splits into whole n-grams: n_grams(k) * (k + 1) values per length */
    size_t total = 0;
    for (size_t k = 0; k < t->n_counts; k++) {
        int64_t start = t->counts[k], end = k + 1 < t->n_counts ? t->counts[k + 1] : (int64_t)t->n_pool;
        if (start < 0 || end < start || end > (int64_t)t->n_pool || (end - start) % (int64_t)(k + 1))
            return ERR(SY_ERR_INVALID_MODEL, "ngram_counts[%zu] = %lld does not split pool_int64s (%zu values) into "
                       "%zu-grams", k, (long long)start, t->n_pool, k + 1);
        total += (size_t)(end - start) / (k + 1);
    }
    if (t->n_indexes != total)
        return ERR(SY_ERR_INVALID_MODEL, "ngram_indexes has %zu values, the pool %zu n-grams", t->n_indexes, total);
    t->out_size = 0;
    for (size_t j = 0; j < t->n_indexes; j++) {
        if (t->indexes[j] < 0 || t->indexes[j] > (1 << 24))
            return ERR(SY_ERR_INVALID_MODEL, "ngram_indexes[%zu] = %lld is outside [0, 2^24]", j, (long long)t->indexes[j]);
        t->out_size = t->indexes[j] + 1 > t->out_size ? t->indexes[j] + 1 : t->out_size;
    }
    if (!H->attr_floats(n, "weights", &t->weights, &t->n_weights))
        t->n_weights = 0;
    if (t->n_weights && (int64_t)t->n_weights < t->out_size)
        return ERR(SY_ERR_INVALID_MODEL, "weights has %zu values, the output %lld columns", t->n_weights,
                   (long long)t->out_size);
    return NULL;
}

static sy_status *infer_tfidf(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_INT32 && x->dtype != SY_DT_INT64 && x->dtype != SY_DT_STRING)
        return ERR(SY_ERR_TYPE, "X must be int32 or int64 token ids or strings, got %s", sy_dt_name(x->dtype));
    if (x->rank > 2)
        return ERR(SY_ERR_SHAPE, "X must be [C] or [B, C], got rank %d", x->rank);
    tfidf t;
    SY_TRY(tfidf_of(n, &t));
    if ((x->dtype == SY_DT_STRING) != (t.spool != NULL))
        return ERR(SY_ERR_TYPE, "X is %s but the pool is %s: string tokens need pool_strings, token ids pool_int64s",
                   sy_dt_name(x->dtype), t.spool ? "pool_strings" : "pool_int64s");
    int64_t d[2] = {x->rank == 2 ? x->dims[0] : t.out_size, t.out_size};
    return H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank == 2 ? 2 : 1, d);
}

static sy_status *prepare_tfidf(sy_node *n, void **state)
{
    tfidf *t = malloc(sizeof *t);
    if (!t)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = tfidf_of(n, t);
    if (!st && t->spool) { /* the lengths once, not per comparison */
        t->spool_len = malloc((t->n_pool ? t->n_pool : 1) * sizeof *t->spool_len);
        if (!t->spool_len)
            st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
        for (size_t i = 0; !st && i < t->n_pool; i++)
            t->spool_len[i] = strlen(t->spool[i]);
    }
    if (st) {
        free(t);
        return st;
    }
    *state = t;
    return NULL;
}

static void release_tfidf(void *state)
{
    tfidf *t = state;
    if (t)
        free(t->spool_len);
    free(t);
}

/* does token i of x equal pool entry g */
static bool tok_is(const tfidf *t, const sy_tensor *x, int64_t i, int64_t g)
{
    if (t->spool) {
        const sy_string *v = &((const sy_string *)x->data)[i];
        return v->size == t->spool_len[g] && (!v->size || !memcmp(v->data, t->spool[g], t->spool_len[g]));
    }
    int64_t v = x->dtype == SY_DT_INT32 ? ((const int32_t *)x->data)[i] : ((const int64_t *)x->data)[i];
    return v == t->pool[g];
}

/* the pool position (n-gram number) of the len-gram x[s], x[s+d], ...; the
 * last one when the pool repeats it (as the reference's map keeps it); -1 */
static int64_t find_gram(const tfidf *t, const sy_tensor *x, int64_t base, int64_t s, int64_t d, int64_t len)
{
    if ((size_t)len > t->n_counts)
        return -1;
    int64_t start = t->counts[len - 1], end = (size_t)len < t->n_counts ? t->counts[len] : (int64_t)t->n_pool;
    int64_t first = 0;
    for (int64_t k = 0; k < len - 1; k++) {
        int64_t a = t->counts[k], b = (size_t)(k + 1) < t->n_counts ? t->counts[k + 1] : (int64_t)t->n_pool;
        first += (b - a) / (k + 1);
    }
    int64_t found = -1;
    for (int64_t g = start, j = first; g + len <= end; g += len, j++) {
        bool eq = true;
        for (int64_t k = 0; k < len && eq; k++)
            eq = tok_is(t, x, base + s + k * d, g + k);
        if (eq)
            found = j;
    }
    return found;
}

static sy_status *run_tfidf(void *state, const sy_kernel_io *io)
{
    const tfidf *t = state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    int64_t rows = x->rank == 2 ? x->dims[0] : 1, C = x->rank == 0 ? 1 : x->dims[x->rank - 1];
    for (int64_t i = 0; i < rows * t->out_size; i++)
        y[i] = 0.0f;
    for (int64_t r = 0; r < rows; r++) {
        float *yr = y + r * t->out_size;
        int64_t base = r * C, first_n = t->min_n;
        for (int64_t d = 1; d <= t->max_skip + 1; d++) {
            for (int64_t s = 0; s < C; s++) {
                if (s + d * (first_n - 1) >= C)
                    break;
                for (int64_t len = first_n; len <= t->max_n && s + d * (len - 1) < C; len++) {
                    int64_t j = find_gram(t, x, base, s, d, len);
                    if (j >= 0)
                        yr[t->indexes[j]] += 1.0f;
                }
            }
            if (first_n == 1) { /* unigrams do not depend on the skip distance */
                first_n = 2;
                if (first_n > t->max_n)
                    break;
            }
        }
        for (int64_t c = 0; c < t->out_size; c++) {
            float w = t->n_weights ? t->weights[c] : 1.0f;
            if (t->mode == IDF)
                yr[c] = yr[c] > 0 ? w : 0.0f;
            else if (t->mode == TFIDF)
                yr[c] *= w;
        }
    }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_tfidf[] = {
    {"max_gram_length", SY_ATTR_INT, true}, {"max_skip_count", SY_ATTR_INT, true},
    {"min_gram_length", SY_ATTR_INT, true}, {"mode", SY_ATTR_STRING, true},
    {"ngram_counts", SY_ATTR_INTS, true},   {"ngram_indexes", SY_ATTR_INTS, true},
    ATTR("pool_int64s", INTS),              ATTR("pool_strings", STRINGS),
    ATTR("weights", FLOATS),
};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("TfIdfVectorizer", 9, 1, 1, 1, 1, SY_ATTRS(a_tfidf), infer_tfidf, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("TfIdfVectorizer", 1, 0, SY_DT_BIT(SY_DT_INT32) | SY_DT_BIT(SY_DT_INT64) | SY_DT_BIT(SY_DT_STRING),
                  0, prepare_tfidf, run_tfidf, release_tfidf),
};

sy_status *ml_tfidf_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
