/*
 * RegexFullMatch (20): Y[i] = whether all of X[i] matches `pattern`.
 *
 * ONNX specifies RE2 syntax; this build matches with PCRE2 (Debian
 * libpcre2-dev), whose syntax is a superset of RE2's for what RE2 accepts,
 * with the same leftmost-first semantics, ASCII \w \d \s \b (no PCRE2_UCP,
 * as RE2) and UTF-8 subjects. What PCRE2 accepts and RE2 does not
 * (lookaround, backreferences, atomic groups, possessive quantifiers,
 * recursion) is refused at load, so a pattern never means something ONNX
 * Runtime would not run. RE2 runs in linear time; PCRE2 backtracks, so a
 * match limit bounds every element, and an element that hits it is an
 * error, not an answer. Subjects must be valid UTF-8 (refused, naming the
 * element, otherwise).
 */
#include "string_internal.h"

#include <stdlib.h>

#define H sy_string_host
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#ifdef SY_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* backtracking steps one element may take (RE2 needs no such bound) */
#define MATCH_LIMIT 1000000u

/* The constructs PCRE2 has and RE2 refuses; NULL when there is none. */
static const char *not_re2(const char *p, size_t n)
{
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 < n && !in_class && p[i + 1] >= '1' && p[i + 1] <= '9')
                return "a backreference";
            if (i + 1 < n && !in_class && (p[i + 1] == 'g' || p[i + 1] == 'k'))
                return "a backreference";
            i++;
            continue;
        }
        if (in_class) {
            in_class = c != ']';
            continue;
        }
        if (c == '[') {
            in_class = true;
            if (i + 1 < n && p[i + 1] == '^')
                i++;
            if (i + 1 < n && p[i + 1] == ']')
                i++; /* a leading ] is a literal */
            continue;
        }
        if (c == '(' && i + 2 < n && p[i + 1] == '?') {
            char d = p[i + 2];
            if (d == '=' || d == '!' || (d == '<' && i + 3 < n && (p[i + 3] == '=' || p[i + 3] == '!')))
                return "a lookaround assertion";
            if (d == '>')
                return "an atomic group";
            if (d == 'R' || (d >= '0' && d <= '9') || d == '&' || d == '+' || d == '|' || d == '(' || d == '#')
                return "a construct RE2 does not have (recursion, conditional, branch reset or comment)";
        }
        if ((c == '*' || c == '+' || c == '?' || c == '}') && i + 1 < n && p[i + 1] == '+')
            return "a possessive quantifier";
    }
    return NULL;
}

typedef struct regex_state {
    pcre2_code *code;
    pcre2_match_data *md;
    pcre2_match_context *mc;
} regex_state;

static void release_regex(void *state)
{
    regex_state *r = state;
    if (!r)
        return;
    pcre2_match_data_free(r->md);
    pcre2_match_context_free(r->mc);
    pcre2_code_free(r->code);
    free(r);
}

/* Compile `pattern` (NULL out: only check it). */
static sy_status *compile(const sy_node *n, regex_state **out)
{
    const char *p = NULL;
    size_t len = 0;
    if (!H->attr_string(n, "pattern", &p, &len))
        return ERR(SY_ERR_INVALID_MODEL, "pattern is required");
    if (sy_utf8_valid_prefix(p, len) != len)
        return ERR(SY_ERR_INVALID_MODEL, "pattern is not valid UTF-8");
    const char *why = not_re2(p, len);
    if (why)
        return ERR(SY_ERR_INVALID_MODEL, "pattern \"%s\" uses %s, which RE2 syntax (ONNX's rule) does not have", p, why);
    int err;
    PCRE2_SIZE at;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)p, len, PCRE2_UTF | PCRE2_ANCHORED | PCRE2_ENDANCHORED, &err, &at, NULL);
    if (!code) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(err, msg, sizeof msg);
        return ERR(SY_ERR_INVALID_MODEL, "pattern \"%s\" does not compile at offset %zu: %s", p, (size_t)at,
                   (const char *)msg);
    }
    if (!out) {
        pcre2_code_free(code);
        return NULL;
    }
    regex_state *r = calloc(1, sizeof *r);
    if (r) {
        r->code = code;
        r->md = pcre2_match_data_create_from_pattern(code, NULL);
        r->mc = pcre2_match_context_create(NULL);
    }
    if (!r || !r->md || !r->mc) {
        if (r)
            release_regex(r);
        else
            pcre2_code_free(code);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    pcre2_set_match_limit(r->mc, MATCH_LIMIT);
    pcre2_set_depth_limit(r->mc, MATCH_LIMIT);
    *out = r;
    return NULL;
}

static sy_status *infer_regex(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(str_need_input(n, 0, "X", &x));
    SY_TRY(compile(n, NULL));
    return H->node_set_output(n, 0, SY_DT_BOOL, x->rank, x->dims);
}

static sy_status *prepare_regex(sy_node *n, void **state)
{
    regex_state *r;
    SY_TRY(compile(n, &r));
    *state = r;
    return NULL;
}

static sy_status *run_regex(void *state, const sy_kernel_io *io)
{
    const regex_state *r = state;
    const sy_tensor *x = io->inputs[0];
    uint8_t *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        SY_TRY(str_check_utf8(x, i, "RegexFullMatch X"));
        const sy_string *s = &str_data(x)[i];
        int rc = pcre2_match(r->code, (PCRE2_SPTR)(s->size ? s->data : ""), (PCRE2_SIZE)s->size, 0,
                             PCRE2_NO_UTF_CHECK, r->md, r->mc);
        if (rc == PCRE2_ERROR_NOMATCH) {
            y[i] = 0;
        } else if (rc >= 0) {
            y[i] = 1;
        } else if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT) {
            return ERR(SY_ERR_RUNTIME, "element %lld: the pattern backtracks past %u steps (RE2 would answer in linear "
                       "time; refused rather than guessed)", (long long)i, MATCH_LIMIT);
        } else {
            PCRE2_UCHAR msg[160];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return ERR(SY_ERR_RUNTIME, "element %lld: %s", (long long)i, (const char *)msg);
        }
    }
    return NULL;
}

static const sy_attr_def a_regex[] = {{"pattern", SY_ATTR_STRING, true}};
static const sy_op_schema schemas[] = {
    SY_SCHEMA("RegexFullMatch", 20, 1, 1, 1, 1, SY_ATTRS(a_regex), infer_regex, SY_NO_INPLACE, 0),
};
static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("RegexFullMatch", 20, 0, SY_DT_BIT(SY_DT_STRING), 0, prepare_regex, run_regex, release_regex),
};

sy_status *string_regex_register(const sy_host_api *host, sy_plugin *p)
{
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

#else /* built without PCRE2: RegexFullMatch is not provided (models using it are refused at load) */

sy_status *string_regex_register(const sy_host_api *host, sy_plugin *p)
{
    (void)host;
    (void)p;
    return NULL;
}

#endif
