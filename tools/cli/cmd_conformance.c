/*
 * switchyard conformance: run ONNX backend test folders and compare outputs.
 *
 * Layouts found below each DIR (walked recursively, sorted by path):
 *   - a folder holding model.onnx and test_data_set_N/ with input_K.pb and
 *     output_K.pb (onnx-node, simple, pytorch-converted, pytorch-operator);
 *   - a file NAME.onnx next to NAME_output_0.pb ("light" whole networks). The
 *     input is not stored: as upstream's generate_dummy_data(random=False),
 *     each graph input gets arange(n).reshape(shape) / n (unknown dims = 1).
 *
 * Comparison (the upstream rule of onnx/backend/test/runner,
 * assert_similar_outputs): output count, and each output's dtype and shape
 * exactly; floating types (float32/64, float16, bfloat16) element-wise
 * |got - expected| <= atol + rtol * |expected| with rtol = 1e-3 and
 * atol = 1e-7, NaN equals NaN, +-inf must match exactly; integer and bool
 * types exactly (upstream runs assert_allclose on them too, which is looser
 * for large values; exact is the stricter, intended rule); any other element
 * type (int4/uint4 and the float8/float4/2-bit types) byte-exact on the
 * packed data.
 *
 * Per-op / per-test tolerance exceptions:
 *
 *   | test / op        | rtol  | atol | why                                   |
 *   |------------------|-------|------|---------------------------------------|
 *   | (any op)         | 1e-3  | 1e-7 | upstream default; no op has its own   |
 *   | light_<name>     | from data.json | upstream stores the tolerance of each |
 *   |                  |       |      | light model in real/test_<name>/      |
 *   |                  |       |      | data.json (densenet121: rtol 2e-3)    |
 *
 * No per-op exception exists: tolerances are never widened to make a test
 * pass.
 *
 * Random draws (rule R): a Bernoulli test (the graph has Bernoulli, or is
 * its function body RandomUniformLike -> Greater -> Cast) cannot match values
 * numpy's generator drew, so its output 0 is judged by the distribution
 * instead: dtype and shape exactly; every element 0 or 1, 0 where the
 * probability (input 0) is 0 and 1 where it is 1; and the number of ones
 * within 6 standard deviations of the sum of the probabilities (sigma^2 =
 * sum p (1 - p); a chance of about 2e-9 to fail a correct generator).
 * Seed determinism and the moments over many draws are checked by
 * tests/random (CTest random.ops). The other outputs, if any, compare by
 * value.
 *
 * Classification, in this order (the first that applies wins):
 *   1. the model does not import (sy_model_load_flags with
 *      SY_LOAD_SKIP_OP_CHECK fails): a skip by rules D/S below, else FAIL;
 *   2. (sequence and optional graph values are read as SequenceProto /
 *      OptionalProto files, by the kind the model declares, and compared
 *      item by item)
 *   3. an op has no plugin (what sy_model_load refuses with
 *      SY_ERR_NOT_IMPLEMENTED; listed by sy_model_unsupported_ops): SKIP "op
 *      not registered";
 *   4. session create, reading a .pb, set_input, run: a status that rule S,
 *      D or O matches is a skip, anything else is a FAIL;
 *   5. output comparison: FAIL on the first difference, else PASS.
 * Rules on a status (code, message):
 *   S  code UNSUPPORTED and the message mentions "sequence" or "optional"
 *      (the session refusing sequence/optional graph values, or a .pb that
 *      is a SequenceProto/OptionalProto)              -> "sequence/optional types"
 *   D  code UNSUPPORTED or NOT_IMPLEMENTED and the message names an element
 *      type: the whole word (any case) "dtype", "data_type", FLOAT8E4M3FN,
 *      FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, FLOAT4E2M1,
 *      INT4, UINT4, INT2, UINT2, COMPLEX64 or COMPLEX128; the phrases "data
 *      type", "element type" or "string tensor"; STRING in capitals; or "? (N)",
 *      the core's stand-in for a type it has no name for (a graph input of an
 *      unsupported dtype, a string .pb, a Cast to or from int4, no kernel for
 *      the dtype);
 *      or code INVALID_MODEL with "unknown data_type"/"unknown element type"
 *      (an element type this build does not know)       -> "dtype not supported"
 *   O  code NOT_IMPLEMENTED and the message says "no loaded plugin defines"
 *      or "kernel for <op> at opset" (a schema without a kernel at that
 *      opset)                                            -> "op not registered"
 *
 * Exit status: 2 on a usage error (unknown option, bad --filter regex); 1
 * when a DIR does not exist or a file cannot be read/written, or the
 * configuration does not load; with --expected, 1 iff a listed test failed,
 * was skipped or was not found (tests excluded by --filter are ignored);
 * without --expected, 1 iff any test failed; else 0.
 */
#include "cli.h"

#include <switchyard/sy_tools.h> /* sy_compare_tensors */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CONF_RTOL 1e-3
#define CONF_ATOL 1e-7
#define CONF_MAX_DEPTH 32

enum { ST_NOTRUN = 0, ST_PASS, ST_FAIL, ST_SKIP };
enum { SK_OP = 0, SK_SEQ, SK_DTYPE, SK__COUNT };
static const char *const skip_cause_name[SK__COUNT] = {"op not registered", "sequence/optional types",
                                                       "dtype not supported"};

/* ---- small growable helpers --------------------------------------------- */

typedef struct strvec {
    char **v;
    size_t n, cap;
} strvec;

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) {
        fprintf(stderr, "switchyard conformance: out of memory\n");
        exit(1);
    }
    return d;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "switchyard conformance: out of memory\n");
        exit(1);
    }
    return q;
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return xstrdup("?");
    char *s = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static void strvec_push(strvec *sv, char *s)
{
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 16;
        sv->v = xrealloc(sv->v, sv->cap * sizeof *sv->v);
    }
    sv->v[sv->n++] = s;
}

static void strvec_free(strvec *sv)
{
    for (size_t i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    memset(sv, 0, sizeof *sv);
}

static bool strvec_has(const strvec *sv, const char *s)
{
    for (size_t i = 0; i < sv->n; i++)
        if (!strcmp(sv->v[i], s))
            return true;
    return false;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Read a text file of names: one per line; '#' starts a comment; blank lines
 * are ignored; the first whitespace-separated token is kept, and with
 * `second` the second one too (NULL when absent). */
static int read_name_list(const char *path, strvec *first, strvec *second, const char *what)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "switchyard conformance: %s %s: cannot open: %s\n", what, path, strerror(errno));
        return -1;
    }
    char line[1024];
    unsigned lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL;
        char *a = strtok_r(line, " \t\r\n", &save);
        if (!a)
            continue;
        char *b = strtok_r(NULL, " \t\r\n", &save);
        char *c = strtok_r(NULL, " \t\r\n", &save);
        if (c || (b && !second)) {
            fprintf(stderr, "switchyard conformance: %s %s:%u: expected %s per line, got more\n", what, path, lineno,
                    second ? "one or two names" : "one name");
            fclose(f);
            return -1;
        }
        strvec_push(first, xstrdup(a));
        if (second)
            strvec_push(second, b ? xstrdup(b) : NULL);
    }
    bool err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "switchyard conformance: %s %s: read error\n", what, path);
        return -1;
    }
    return 0;
}

/* ---- MANIFEST.tsv (onnx-node) ------------------------------------------- */

typedef struct manifest_row {
    char *test;
    char *ops;     /* column 4: top-level op types, comma-separated */
    bool seq_opt;  /* an input or output is `sequence` or `optional` */
    char *io;      /* "inputs: ...; outputs: ..." when seq_opt */
} manifest_row;

typedef struct manifest {
    char *dir;
    manifest_row *rows;
    size_t n;
} manifest;

static bool column_has_seq_opt(const char *col)
{
    /* items joined by " | "; an item is DTYPE[dims], `sequence` or `optional` */
    const char *p = col;
    while (*p) {
        while (*p == ' ' || *p == '|')
            p++;
        const char *e = strchr(p, '|');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && p[len - 1] == ' ')
            len--;
        if ((len == 8 && !strncmp(p, "sequence", 8)) || (len == 8 && !strncmp(p, "optional", 8)))
            return true;
        p += e ? (size_t)(e - p) : strlen(p);
    }
    return false;
}

static int cmp_row(const void *a, const void *b)
{
    return strcmp(((const manifest_row *)a)->test, ((const manifest_row *)b)->test);
}

/* Load DIR/MANIFEST.tsv when there is one; a missing file is not an error. */
static void manifest_load(const char *dir, manifest *m)
{
    memset(m, 0, sizeof *m);
    m->dir = xstrdup(dir);
    char *path = xasprintf("%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        free(path);
        return;
    }
    size_t cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    bool header = true;
    unsigned lineno = 0;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (header) {
            header = false;
            continue;
        }
        char *cols[9] = {0};
        int nc = 0;
        char *p = line;
        while (nc < 9) {
            cols[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab)
                break;
            *tab = '\0';
            p = tab + 1;
        }
        if (nc < 8) {
            fprintf(stderr, "switchyard conformance: %s:%u: expected 9 tab-separated columns, got %d; row ignored\n",
                    path, lineno, nc);
            continue;
        }
        if (m->n == cap) {
            cap = cap ? cap * 2 : 256;
            m->rows = xrealloc(m->rows, cap * sizeof *m->rows);
        }
        manifest_row *r = &m->rows[m->n++];
        r->test = xstrdup(cols[0]);
        r->ops = xstrdup(cols[3]);
        r->seq_opt = column_has_seq_opt(cols[6]) || column_has_seq_opt(cols[7]);
        r->io = r->seq_opt ? xasprintf("inputs '%s', outputs '%s'", cols[6], cols[7]) : NULL;
    }
    free(line);
    fclose(f);
    free(path);
    if (m->n)
        qsort(m->rows, m->n, sizeof *m->rows, cmp_row);
}

static const manifest_row *manifest_find(const manifest *m, const char *test)
{
    if (!m->n)
        return NULL;
    manifest_row key = {.test = (char *)test};
    return bsearch(&key, m->rows, m->n, sizeof *m->rows, cmp_row);
}

static void manifest_free(manifest *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->rows[i].test);
        free(m->rows[i].ops);
        free(m->rows[i].io);
    }
    free(m->rows);
    free(m->dir);
}

/* ---- tests ---------------------------------------------------------------- */

typedef struct ctest {
    char *name;   /* folder name, or the model file's stem for the light layout */
    char *group;  /* the folder that holds it (JUnit classname) */
    char *path;   /* test folder, or the .onnx file for the light layout */
    char *model;  /* model file */
    char *light_expected; /* light layout: NAME_output_0.pb */
    size_t manifest_idx;  /* index into the manifest table + 1; 0 for none */
    /* results */
    int status;
    int skip_cause;
    char *reason;
    double secs;
    strvec ops;      /* distinct op types of the top-level graph ("domain:Op" off the default domain) */
    bool ops_known;
    double rtol, atol; /* the tolerance used */
    strvec missing_ops; /* op types no plugin defines (for the skip summary) */
} ctest;

typedef struct run_ctx {
    ctest *tests;
    size_t n_tests, cap_tests;
    manifest *manifests;
    size_t n_manifests;
    sy_env *env;
    int verbose;
    bool progress;
    size_t done;
    size_t n_selected;
    const char *current; /* test being run, for log messages */
    struct { dev_t dev; ino_t ino; } *seen; /* folders already walked (symlink loops) */
    size_t n_seen;
    unsigned n_log_warnings;
} run_ctx;

static int cmp_test(const void *a, const void *b)
{
    return strcmp(((const ctest *)a)->path, ((const ctest *)b)->path);
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static char *parent_name(const char *path)
{
    /* the last component of the directory part */
    char *copy = xstrdup(path);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    char *slash = strrchr(copy, '/');
    if (!slash) {
        free(copy);
        return xstrdup(".");
    }
    *slash = '\0';
    char *res = xstrdup(base_name(copy[0] ? copy : "/"));
    free(copy);
    return res;
}

static void add_test(run_ctx *c, char *name, char *path, char *model, char *light_expected, size_t manifest_idx)
{
    if (c->n_tests == c->cap_tests) {
        c->cap_tests = c->cap_tests ? c->cap_tests * 2 : 256;
        c->tests = xrealloc(c->tests, c->cap_tests * sizeof *c->tests);
    }
    ctest *t = &c->tests[c->n_tests++];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->path = path;
    t->model = model;
    t->light_expected = light_expected;
    t->manifest_idx = manifest_idx;
    t->group = parent_name(path);
}

static bool has_data_set(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        if (!strncmp(e->d_name, "test_data_set_", 14)) {
            char *p = xasprintf("%s/%s", dir, e->d_name);
            found = is_dir(p);
            free(p);
        }
    }
    closedir(d);
    return found;
}

static int scan_dir(run_ctx *c, const char *dir, int depth)
{
    if (depth > CONF_MAX_DEPTH) {
        fprintf(stderr, "switchyard conformance: %s: folders nest deeper than %d levels; not descending\n", dir,
                CONF_MAX_DEPTH);
        return 0;
    }
    char *model = xasprintf("%s/model.onnx", dir);
    if (is_file(model) && has_data_set(dir)) {
        /* a test folder: find a MANIFEST.tsv in the folder above */
        char *copy = xstrdup(dir);
        char *slash = strrchr(copy, '/');
        const char *parent = ".";
        if (slash) {
            *slash = '\0';
            parent = copy[0] ? copy : "/";
        }
        size_t midx = 0;
        for (size_t i = 0; i < c->n_manifests && !midx; i++)
            if (!strcmp(c->manifests[i].dir, parent))
                midx = i + 1;
        if (!midx) {
            c->manifests = xrealloc(c->manifests, (c->n_manifests + 1) * sizeof *c->manifests);
            manifest_load(parent, &c->manifests[c->n_manifests]);
            midx = ++c->n_manifests;
        }
        free(copy);
        add_test(c, xstrdup(base_name(dir)), xstrdup(dir), model, NULL, midx);
        return 0;
    }
    free(model);
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        for (size_t i = 0; i < c->n_seen; i++)
            if (c->seen[i].dev == sb.st_dev && c->seen[i].ino == sb.st_ino)
                return 0; /* reached again through a symbolic link */
        c->seen = xrealloc(c->seen, (c->n_seen + 1) * sizeof *c->seen);
        c->seen[c->n_seen].dev = sb.st_dev;
        c->seen[c->n_seen].ino = sb.st_ino;
        c->n_seen++;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "switchyard conformance: %s: cannot open folder: %s\n", dir, strerror(errno));
        return -1;
    }
    strvec names = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            strvec_push(&names, xstrdup(e->d_name));
    closedir(d);
    if (names.n)
        qsort(names.v, names.n, sizeof *names.v, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < names.n; i++) {
        char *p = xasprintf("%s/%s", dir, names.v[i]);
        size_t len = strlen(names.v[i]);
        if (is_dir(p)) {
            if (scan_dir(c, p, depth + 1))
                rc = -1;
        } else if (len > 5 && !strcmp(names.v[i] + len - 5, ".onnx")) {
            char *stem = xasprintf("%.*s", (int)(len - 5), names.v[i]);
            char *exp = xasprintf("%s/%s_output_0.pb", dir, stem);
            if (is_file(exp)) {
                add_test(c, stem, xstrdup(p), xstrdup(p), exp, 0);
            } else {
                free(stem);
                free(exp);
            }
        }
        free(p);
    }
    strvec_free(&names);
    return rc;
}

/* ---- logging ---------------------------------------------------------------- */

static void log_sink(void *user, sy_log_level level, const char *origin, const char *message)
{
    run_ctx *c = user;
    if (level > SY_LOG_WARN)
        return;
    if (level == SY_LOG_WARN && !c->verbose) {
        c->n_log_warnings++;
        return;
    }
    if (c->progress)
        fprintf(stderr, "\r\033[K");
    fprintf(stderr, "  [%s] %s: %s: %s\n", c->current ? c->current : "-", level == SY_LOG_ERROR ? "error" : "warning",
            origin ? origin : "switchyard", message ? message : "");
}

/* ---- status classification ---------------------------------------------- */

static bool contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

static bool contains_ci(const char *hay, const char *needle)
{
    if (!hay)
        return false;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, n))
            return true;
    return false;
}

/* Does msg name an element type? A whole-word, case-insensitive match of
 * "dtype"/"data_type" or an ONNX type name the core has no kernels for, the
 * phrases "data type"/"element type"/"string tensor", the word STRING in
 * capitals, or the marker "? (N)" that stands for a type without a name. */
static bool mentions_dtype(const char *msg)
{
    static const char *const words[] = {"dtype", "data_type", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
                                        "float8e5m2fnuz", "float8e8m0", "float4e2m1", "int4", "uint4", "int2",
                                        "uint2", "complex64", "complex128"};
    if (!msg)
        return false;
    if (contains_ci(msg, "data type") || contains_ci(msg, "element type") || contains_ci(msg, "string tensor") ||
        contains(msg, "STRING"))
        return true;
    for (const char *p = msg; *p;) {
        while (*p && !(isalnum((unsigned char)*p) || *p == '_'))
            p++;
        const char *w = p;
        while (*p && (isalnum((unsigned char)*p) || *p == '_'))
            p++;
        size_t len = (size_t)(p - w);
        for (size_t i = 0; len && i < sizeof words / sizeof *words; i++)
            if (strlen(words[i]) == len && !strncasecmp(w, words[i], len))
                return true;
    }
    for (const char *q = strstr(msg, "? ("); q; q = strstr(q + 1, "? (")) {
        const char *d = q + 3;
        while (*d >= '0' && *d <= '9')
            d++;
        if (d > q + 3 && *d == ')')
            return true;
    }
    return false;
}

/* -1: not a skip (a failure); else the skip cause (rules S, D, O of the header). */
static int classify_status(sy_status_code code, const char *msg)
{
    if (code == SY_ERR_UNSUPPORTED && (contains_ci(msg, "sequence") || contains_ci(msg, "optional")))
        return SK_SEQ;
    if ((code == SY_ERR_UNSUPPORTED || code == SY_ERR_NOT_IMPLEMENTED) && mentions_dtype(msg))
        return SK_DTYPE;
    if (code == SY_ERR_INVALID_MODEL && (contains(msg, "unknown data_type") || contains(msg, "unknown element type")))
        return SK_DTYPE;
    if (code == SY_ERR_NOT_IMPLEMENTED && (contains(msg, "no loaded plugin defines") || contains(msg, " at opset ")))
        return SK_OP;
    return -1;
}

static void set_result(ctest *t, int status, int cause, char *reason)
{
    t->status = status;
    t->skip_cause = cause;
    free(t->reason);
    t->reason = reason;
}

/* Record a failed call: a skip by the rules, or a failure. Frees st. */
static void status_result(ctest *t, sy_status *st, const char *what)
{
    sy_status_code code = sy_status_get_code(st);
    const char *msg = sy_status_get_message(st);
    int cause = classify_status(code, msg);
    char *reason = xasprintf("%s: %s: %s", what, sy_status_code_name(code), msg ? msg : "");
    /* keep reasons on one line */
    for (char *p = reason; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    set_result(t, cause < 0 ? ST_FAIL : ST_SKIP, cause < 0 ? 0 : cause, reason);
    sy_status_free(st);
}

static const char *dtype_label(sy_dtype dt)
{
    const char *n = sy_dtype_name(dt);
    static char buf[32];
    if (n && *n && strcmp(n, "?"))
        return n;
    snprintf(buf, sizeof buf, "dtype#%d", (int)dt);
    return buf;
}

/* Compare one output with the tools library's rule (sy_compare_tensors);
 * NULL when equal, else a reason (malloc'd). */
static char *compare_tensor(size_t index, const char *oname, const sy_tensor *got, const sy_tensor *exp, double rtol,
                            double atol)
{
    sy_compare_result r = {.struct_size = sizeof r};
    sy_status *st = sy_compare_tensors(got, exp, rtol, atol, &r);
    char *why = NULL;
    if (st)
        why = xasprintf("output %zu '%s': %s", index, oname, sy_status_get_message(st));
    else if (!r.equal)
        why = xasprintf("output %zu '%s' %s", index, oname, r.message);
    sy_status_free(st);
    return why;
}

static const char *kind_word(sy_value_kind k)
{
    return k == SY_VALUE_SEQUENCE ? "a sequence" : k == SY_VALUE_NONE ? "an empty optional" : "a tensor";
}

/* Compare a sequence or optional output with its SequenceProto/OptionalProto
 * file: the same kind, the same count, each item by compare_tensor. */
static char *compare_value(const sy_model *m, sy_session *s, const char *ds, size_t k, double rtol, double atol)
{
    sy_value_info vi = {.struct_size = sizeof vi};
    const char *oname = sy_model_output_info(m, k, &vi) && vi.name ? vi.name : "?";
    char *path = xasprintf("%s/output_%zu.pb", ds, k);
    sy_value *exp = NULL;
    sy_status *st = sy_value_read_file(path, sy_model_output_kind(m, k), &exp);
    free(path);
    if (st) {
        char *why = xasprintf("reading output_%zu.pb: %s", k, sy_status_get_message(st));
        sy_status_free(st);
        return why;
    }
    char *why = NULL;
    sy_value_kind got = sy_session_output_kind(s, k);
    if (got != exp->kind) {
        why = xasprintf("output %zu '%s' is %s, expected %s", k, oname, kind_word(got), kind_word(exp->kind));
    } else if (got == SY_VALUE_TENSOR) {
        const sy_tensor *y = NULL;
        st = sy_session_get_output(s, k, &y);
        why = st ? xasprintf("output %zu '%s': %s", k, oname, sy_status_get_message(st))
                 : compare_tensor(k, oname, y, exp->items[0], rtol, atol);
    } else if (got == SY_VALUE_SEQUENCE) {
        const sy_tensor *items = NULL;
        size_t n = 0;
        st = sy_session_get_output_sequence(s, k, NULL, &items, &n);
        if (st)
            why = xasprintf("output %zu '%s': %s", k, oname, sy_status_get_message(st));
        else if (n != exp->count)
            why = xasprintf("output %zu '%s' has %zu items, expected %zu", k, oname, n, exp->count);
        for (size_t i = 0; !why && i < n; i++) {
            char *item = compare_tensor(k, oname, &items[i], exp->items[i], rtol, atol);
            if (item) {
                why = xasprintf("item %zu: %s", i, item);
                free(item);
            }
        }
    }
    sy_status_free(st);
    sy_value_free(exp);
    return why;
}

/* ---- running one test ------------------------------------------------------ */

/* Count files PREFIX<digits>.pb in dir; -1 if the folder cannot be read. */
static long count_pb(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t pl = strlen(prefix);
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, pl))
            continue;
        const char *p = e->d_name + pl;
        const char *q = p;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > p && !strcmp(q, ".pb"))
            n++;
    }
    closedir(d);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Tolerance of a light model from ../real/test_<name>/data.json, if any. */
static void light_tolerance(const ctest *t, double *rtol, double *atol)
{
    const char *stem = t->name;
    if (strncmp(stem, "light_", 6))
        return;
    char *dir = xstrdup(t->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    char *json = xasprintf("%s/../real/test_%s/data.json", dir, stem + 6);
    free(dir);
    FILE *f = fopen(json, "r");
    free(json);
    if (!f)
        return;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *keys[2] = {"\"rtol\"", "\"atol\""};
    double *dst[2] = {rtol, atol};
    for (int k = 0; k < 2; k++) {
        const char *p = strstr(buf, keys[k]);
        if (!p)
            continue;
        p += strlen(keys[k]);
        while (*p == ' ' || *p == ':')
            p++;
        char *end;
        double v = strtod(p, &end);
        if (end != p && isfinite(v) && v >= 0)
            *dst[k] = v;
    }
}

/* The dummy input of upstream's generate_dummy_data(random=False). */
static sy_tensor *light_input(const sy_value_info *vi, char **why)
{
    int64_t n = 1;
    sy_tensor *t = NULL;
    if (vi->rank < 0 || vi->rank > SY_MAX_RANK) {
        *why = xasprintf("input '%s' has unknown rank", vi->name);
        return NULL;
    }
    int64_t dims[SY_MAX_RANK] = {0};
    for (int32_t d = 0; d < vi->rank; d++) {
        dims[d] = vi->dims[d] >= 0 ? vi->dims[d] : 1;
        if (dims[d] > 0 && n > INT64_MAX / 8 / dims[d]) {
            *why = xasprintf("input '%s' is too large", vi->name);
            return NULL;
        }
        n *= dims[d];
    }
    size_t es = vi->dtype == SY_DT_FLOAT32 ? 4 : vi->dtype == SY_DT_FLOAT64 ? 8 : 0;
    if (!es) {
        *why = xasprintf("input '%s' has dtype %s; dummy inputs are built for float32/float64 only", vi->name,
                         dtype_label(vi->dtype));
        return NULL;
    }
    t = calloc(1, sizeof *t + (size_t)n * es + 64);
    if (!t) {
        *why = xasprintf("input '%s': out of memory", vi->name);
        return NULL;
    }
    t->struct_size = sizeof *t;
    t->dtype = vi->dtype;
    t->rank = vi->rank;
    memcpy(t->dims, dims, sizeof dims);
    t->data = (void *)(((uintptr_t)(t + 1) + 63) & ~(uintptr_t)63);
    t->nbytes = (size_t)n * es;
    for (int64_t i = 0; i < n; i++) {
        double v = (double)i / (double)n;
        if (es == 4)
            ((float *)t->data)[i] = (float)v;
        else
            ((double *)t->data)[i] = v;
    }
    return t;
}

static void collect_ops(ctest *t, const sy_model *m)
{
    size_t nn = sy_model_node_count(m);
    for (size_t i = 0; i < nn; i++) {
        const char *name = NULL, *domain = NULL, *op = NULL;
        if (!sy_model_node(m, i, &name, &domain, &op) || !op)
            continue;
        char *key = (!domain || !*domain || !strcmp(domain, "ai.onnx")) ? xstrdup(op) : xasprintf("%s:%s", domain, op);
        if (strvec_has(&t->ops, key))
            free(key);
        else
            strvec_push(&t->ops, key);
    }
    t->ops_known = true;
}

/* "Op (domain 'd', opset N), Op2 (...)" -> op names ("domain:Op" off the default domain). */
static void parse_missing(ctest *t, const char *text)
{
    const char *p = text;
    while (p && *p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *sp = strchr(p, ' ');
        if (!sp)
            break;
        char *op = xasprintf("%.*s", (int)(sp - p), p);
        const char *dq = strstr(sp, "domain '");
        char *key = op;
        if (dq) {
            dq += 8;
            const char *de = strchr(dq, '\'');
            if (de && (de - dq) && strncmp(dq, "ai.onnx'", 8)) {
                key = xasprintf("%.*s:%s", (int)(de - dq), dq, op);
                free(op);
            }
        }
        if (strvec_has(&t->missing_ops, key))
            free(key);
        else
            strvec_push(&t->missing_ops, key);
        const char *close = strchr(sp, ')');
        p = close ? close + 1 : NULL;
    }
}

/* Rule R: a Bernoulli draw (the op, or its function body) */
static bool is_bernoulli_test(const ctest *t)
{
    if (strvec_has(&t->ops, "Bernoulli"))
        return true;
    return t->ops.n == 3 && strvec_has(&t->ops, "RandomUniformLike") && strvec_has(&t->ops, "Cast") &&
           (strvec_has(&t->ops, "Greater") || strvec_has(&t->ops, "Less"));
}

/* element i as double (the float, integer and bool types Bernoulli draws into) */
static bool elem_f64(const sy_tensor *t, int64_t i, double *v)
{
    const void *d = t->data;
    switch (t->dtype) {
    case SY_DT_FLOAT32: *v = ((const float *)d)[i]; return true;
    case SY_DT_FLOAT64: *v = ((const double *)d)[i]; return true;
    case SY_DT_INT8: *v = ((const int8_t *)d)[i]; return true;
    case SY_DT_UINT8: case SY_DT_BOOL: *v = ((const uint8_t *)d)[i]; return true;
    case SY_DT_INT16: *v = ((const int16_t *)d)[i]; return true;
    case SY_DT_UINT16: *v = ((const uint16_t *)d)[i]; return true;
    case SY_DT_INT32: *v = ((const int32_t *)d)[i]; return true;
    case SY_DT_UINT32: *v = ((const uint32_t *)d)[i]; return true;
    case SY_DT_INT64: *v = (double)((const int64_t *)d)[i]; return true;
    case SY_DT_UINT64: *v = (double)((const uint64_t *)d)[i]; return true;
    default: return false;
    }
}

/* Rule R on output 0 of a Bernoulli test; NULL when it passes. */
static char *judge_bernoulli(const char *oname, const sy_tensor *got, const sy_tensor *exp, const sy_tensor *p)
{
    if (got->dtype != exp->dtype)
        return xasprintf("output 0 '%s': dtype %s, expected %s", oname, dtype_label(got->dtype),
                         dtype_label(exp->dtype));
    bool same = got->rank == exp->rank && p && p->rank == got->rank;
    for (int32_t d = 0; same && d < got->rank; d++)
        same = got->dims[d] == exp->dims[d] && p->dims[d] == got->dims[d];
    if (!same)
        return xasprintf("output 0 '%s': shape differs from the expected output's or the probabilities'", oname);
    int64_t n = sy_tensor_numel(got);
    double ones = 0, mu = 0, var = 0;
    for (int64_t i = 0; i < n; i++) {
        double y, q;
        if (!elem_f64(got, i, &y) || !elem_f64(p, i, &q))
            return xasprintf("output 0 '%s': dtype %s or probabilities %s cannot be read", oname,
                             dtype_label(got->dtype), dtype_label(p->dtype));
        if (y != 0 && y != 1)
            return xasprintf("output 0 '%s': element %lld is %g, a Bernoulli draw is 0 or 1", oname, (long long)i, y);
        if ((q <= 0 && y != 0) || (q >= 1 && y != 1))
            return xasprintf("output 0 '%s': element %lld is %g with probability %g", oname, (long long)i, y, q);
        ones += y;
        mu += q;
        var += q * (1 - q);
    }
    if (fabs(ones - mu) > 6 * sqrt(var) + 1e-9)
        return xasprintf("output 0 '%s': %g ones in %lld draws, expected %g +- 6 x %g (rule R)", oname, ones,
                         (long long)n, mu, sqrt(var));
    return NULL;
}

/* *probs: rule R's probabilities (input 0 of a Bernoulli test), kept for the comparison */
static void run_data_set_(run_ctx *c, ctest *t, const sy_model *m, sy_session *s, const char *ds, double rtol,
                          double atol, sy_tensor **probs)
{
    (void)c;
    size_t n_in = sy_model_input_count(m);
    size_t n_out = sy_session_output_count(s);
    const char *dsname = t->light_expected ? "dummy input" : base_name(ds);
    if (!t->light_expected) {
        long ni = count_pb(ds, "input_");
        if (ni < 0) {
            set_result(t, ST_FAIL, 0, xasprintf("%s: cannot read folder: %s", ds, strerror(errno)));
            return;
        }
        if ((size_t)ni != n_in) {
            set_result(t, ST_FAIL, 0,
                       xasprintf("%s: %ld input_K.pb files, but the model has %zu graph inputs", dsname, ni, n_in));
            return;
        }
        long no = count_pb(ds, "output_");
        if (no < 0 || (size_t)no != n_out) {
            set_result(t, ST_FAIL, 0,
                       xasprintf("%s: %ld output_K.pb files, but the session has %zu outputs", dsname, no, n_out));
            return;
        }
    } else if (n_out < 1) {
        set_result(t, ST_FAIL, 0, xasprintf("the session has no outputs, but %s exists", t->light_expected));
        return;
    }
    for (size_t k = 0; k < n_in; k++) {
        sy_tensor *in = NULL;
        sy_status *st;
        if (t->light_expected) {
            sy_value_info vi = {.struct_size = sizeof vi};
            char *why = NULL;
            if (!sy_model_input_info(m, k, &vi)) {
                set_result(t, ST_FAIL, 0, xasprintf("cannot query graph input %zu", k));
                return;
            }
            in = light_input(&vi, &why);
            if (!in) {
                set_result(t, ST_FAIL, 0, why);
                return;
            }
        } else if (sy_model_input_kind(m, k) != SY_VALUE_TENSOR) {
            char *path = xasprintf("%s/input_%zu.pb", ds, k);
            sy_value *val = NULL;
            st = sy_value_read_file(path, sy_model_input_kind(m, k), &val);
            free(path);
            if (!st)
                st = val->kind == SY_VALUE_NONE       ? sy_session_set_input_none(s, k)
                     : val->kind == SY_VALUE_SEQUENCE ? sy_session_set_input_sequence(
                                                            s, k, val->dtype, (const sy_tensor *const *)val->items,
                                                            val->count)
                                                      : sy_session_set_input_by_index(s, k, val->items[0], SY_INPUT_COPY);
            sy_value_free(val);
            if (st) {
                char *what = xasprintf("%s: input_%zu.pb", dsname, k);
                status_result(t, st, what);
                free(what);
                return;
            }
            continue;
        } else {
            char *path = xasprintf("%s/input_%zu.pb", ds, k);
            st = sy_tensor_read_file(path, &in);
            if (st) {
                char *what = xasprintf("%s: reading input_%zu.pb", dsname, k);
                status_result(t, st, what);
                free(what);
                free(path);
                return;
            }
            free(path);
        }
        st = sy_session_set_input_by_index(s, k, in, SY_INPUT_COPY);
        if (t->light_expected)
            free(in);
        else if (k == 0 && is_bernoulli_test(t))
            *probs = in;
        else
            sy_tensor_free(in);
        if (st) {
            char *what = xasprintf("%s: set_input %zu", dsname, k);
            status_result(t, st, what);
            free(what);
            return;
        }
    }
    sy_status *st = sy_session_run(s);
    if (st) {
        char *what = xasprintf("%s: run", dsname);
        status_result(t, st, what);
        free(what);
        return;
    }
    size_t n_cmp = t->light_expected ? 1 : n_out;
    for (size_t k = 0; k < n_cmp; k++) {
        if (!t->light_expected && sy_model_output_kind(m, k) != SY_VALUE_TENSOR) {
            char *why = compare_value(m, s, ds, k, rtol, atol);
            if (why) {
                set_result(t, ST_FAIL, 0, xasprintf("%s: %s", dsname, why));
                free(why);
                return;
            }
            continue;
        }
        char *path = t->light_expected ? xstrdup(t->light_expected) : xasprintf("%s/output_%zu.pb", ds, k);
        sy_tensor *exp = NULL;
        st = sy_tensor_read_file(path, &exp);
        free(path);
        if (st) {
            char *what = xasprintf("%s: reading output_%zu.pb", dsname, k);
            status_result(t, st, what);
            free(what);
            return;
        }
        const sy_tensor *got = NULL;
        st = sy_session_get_output(s, k, &got);
        if (st || !got) {
            char *what = xasprintf("%s: get_output %zu", dsname, k);
            if (st)
                status_result(t, st, what);
            else
                set_result(t, ST_FAIL, 0, xasprintf("%s: returned no tensor", what));
            free(what);
            sy_tensor_free(exp);
            return;
        }
        sy_value_info vi = {.struct_size = sizeof vi};
        const char *oname = sy_model_output_info(m, k, &vi) && vi.name ? vi.name : "?";
        char *why = k == 0 && *probs ? judge_bernoulli(oname, got, exp, *probs)
                                     : compare_tensor(k, oname, got, exp, rtol, atol);
        sy_tensor_free(exp);
        if (why) {
            if (t->light_expected)
                set_result(t, ST_FAIL, 0, why);
            else {
                set_result(t, ST_FAIL, 0, xasprintf("%s: %s", dsname, why));
                free(why);
            }
            return;
        }
    }
    t->status = ST_PASS;
}

static void run_data_set(run_ctx *c, ctest *t, const sy_model *m, sy_session *s, const char *ds, double rtol,
                         double atol)
{
    sy_tensor *probs = NULL;
    run_data_set_(c, t, m, s, ds, rtol, atol, &probs);
    sy_tensor_free(probs);
}

static void run_test(run_ctx *c, ctest *t)
{
    double t0 = now_s();
    c->current = t->name;
    sy_model *m = NULL;
    sy_session *s = NULL;
    const manifest_row *row = t->manifest_idx ? manifest_find(&c->manifests[t->manifest_idx - 1], t->name) : NULL;
    sy_status *st = sy_model_load_flags(c->env, t->model, SY_LOAD_SKIP_OP_CHECK, &m);
    if (st) {
        status_result(t, st, "model load");
        goto done;
    }
    collect_ops(t, m);
    char *missing = sy_model_unsupported_ops(m);
    if (missing) {
        parse_missing(t, missing);
        set_result(t, ST_SKIP, SK_OP, xasprintf("no plugin provides: %s", missing));
        free(missing);
        goto done;
    }
    sy_session_options so = {.struct_size = sizeof so, .threads = 0, .strict = -1};
    if ((st = sy_session_create(c->env, m, &so, &s))) {
        status_result(t, st, "session create");
        goto done;
    }
    double rtol = CONF_RTOL, atol = CONF_ATOL;
    if (t->light_expected) {
        light_tolerance(t, &rtol, &atol);
        t->rtol = rtol;
        t->atol = atol;
        run_data_set(c, t, m, s, NULL, rtol, atol);
        goto done;
    }
    /* data sets, sorted */
    DIR *d = opendir(t->path);
    if (!d) {
        set_result(t, ST_FAIL, 0, xasprintf("%s: cannot open folder: %s", t->path, strerror(errno)));
        goto done;
    }
    strvec sets = {0};
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "test_data_set_", 14))
            strvec_push(&sets, xstrdup(e->d_name));
    closedir(d);
    if (sets.n)
        qsort(sets.v, sets.n, sizeof *sets.v, cmp_str);
    t->status = ST_NOTRUN;
    for (size_t i = 0; i < sets.n; i++) {
        char *ds = xasprintf("%s/%s", t->path, sets.v[i]);
        if (is_dir(ds))
            run_data_set(c, t, m, s, ds, rtol, atol);
        free(ds);
        if (t->status != ST_PASS)
            break;
    }
    if (t->status == ST_NOTRUN)
        set_result(t, ST_FAIL, 0, xasprintf("%s: no test_data_set_N folder could be read", t->path));
    strvec_free(&sets);
done:
    sy_session_release(s);
    sy_model_release(m);
    /* ops from the manifest when the model did not import */
    if (!t->ops_known && row && row->ops[0]) {
        char *ops = xstrdup(row->ops);
        char *save = NULL;
        for (char *op = strtok_r(ops, ",", &save); op; op = strtok_r(NULL, ",", &save))
            if (!strvec_has(&t->ops, op))
                strvec_push(&t->ops, xstrdup(op));
        free(ops);
        t->ops_known = true;
    }
    c->current = NULL;
    t->secs = now_s() - t0;
}

/* ---- JUnit ------------------------------------------------------------------- */

static void xml_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n')
                fputc('?', f);
            else
                fputc(*p, f);
        }
    }
}

/* mkstemp makes 0600 files; give the result the mode a plain fopen would. */
static void make_public_mode(int fd)
{
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
}

static int write_junit(const run_ctx *c, const char *path, size_t np, size_t nf, size_t ns, double total)
{
    char *tmp = xasprintf("%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "switchyard conformance: --junit %s: cannot create %s: %s\n", path, tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    make_public_mode(fd);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        fprintf(stderr, "switchyard conformance: --junit %s: %s\n", path, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
            np + nf + ns, nf, ns, total);
    fprintf(f, "  <testsuite name=\"switchyard.conformance\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" "
               "errors=\"0\" time=\"%.3f\">\n",
            np + nf + ns, nf, ns, total);
    for (size_t i = 0; i < c->n_tests; i++) {
        const ctest *t = &c->tests[i];
        if (t->status == ST_NOTRUN)
            continue;
        fprintf(f, "    <testcase classname=\"");
        xml_escape(f, t->group);
        fprintf(f, "\" name=\"");
        xml_escape(f, t->name);
        fprintf(f, "\" time=\"%.3f\"", t->secs);
        if (t->status == ST_PASS) {
            fprintf(f, "/>\n");
            continue;
        }
        fprintf(f, ">\n      <%s message=\"", t->status == ST_FAIL ? "failure" : "skipped");
        if (t->status == ST_SKIP) {
            xml_escape(f, skip_cause_name[t->skip_cause]);
            fprintf(f, ": ");
        }
        xml_escape(f, t->reason);
        fprintf(f, "\"/>\n    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    bool bad = fflush(f) != 0 || ferror(f);
    bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "switchyard conformance: --junit %s: cannot write: %s\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

static int write_list(const run_ctx *c, const char *path, const char *const *argv_dirs, int n_dirs)
{
    char *tmp = xasprintf("%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd >= 0)
        make_public_mode(fd);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "switchyard conformance: --write-passing %s: cannot create %s: %s\n", path, tmp,
                strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return -1;
    }
    fprintf(f, "# Tests that passed in 'switchyard conformance' (generated by --write-passing) over:\n");
    for (int i = 0; i < n_dirs; i++)
        fprintf(f, "#   %s\n", argv_dirs[i]);
    fprintf(f, "# Only tests that really pass are listed; regenerate, never edit tolerances.\n");
    for (size_t i = 0; i < c->n_tests; i++)
        if (c->tests[i].status == ST_PASS)
            fprintf(f, "%s\n", c->tests[i].name);
    bool bad = fflush(f) != 0 || ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "switchyard conformance: --write-passing %s: cannot write: %s\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

/* ---- ops report ----------------------------------------------------------------- */

static const char *status_word(const ctest *t)
{
    return t->status == ST_PASS ? "PASS" : t->status == ST_FAIL ? "FAIL" : t->status == ST_SKIP ? "SKIP" : "NOT RUN";
}

/* Does test t count as a non-passing test of op? */
static bool counts_against(const ctest *t, const char *op)
{
    if (t->status == ST_PASS || t->status == ST_NOTRUN)
        return false;
    if (t->status == ST_SKIP && t->skip_cause == SK_OP && t->missing_ops.n)
        return strvec_has(&t->missing_ops, op);
    return true;
}

static void ops_report(const run_ctx *c, const strvec *entries, const strvec *onnx_ops)
{
    /* the ONNX op type of each entry */
    size_t ne = entries->n;
    const char **op_of = calloc(ne ? ne : 1, sizeof *op_of);
    if (!op_of)
        return;
    for (size_t i = 0; i < ne; i++)
        op_of[i] = onnx_ops->v[i] ? onnx_ops->v[i] : entries->v[i];
    size_t denom = 0, denom_pass = 0, total = 0, total_pass = 0, unknown = 0;
    bool *in_b = calloc(c->n_tests ? c->n_tests : 1, sizeof *in_b);
    if (!in_b) {
        free(op_of);
        return;
    }
    for (size_t i = 0; i < c->n_tests; i++) {
        const ctest *t = &c->tests[i];
        if (t->status == ST_NOTRUN)
            continue;
        total++;
        total_pass += t->status == ST_PASS;
        if (!t->ops_known || !t->ops.n) {
            unknown += !t->ops_known;
            continue;
        }
        bool all = true;
        for (size_t k = 0; k < t->ops.n && all; k++) {
            bool found = false;
            for (size_t e = 0; e < ne && !found; e++)
                found = !strcmp(t->ops.v[k], op_of[e]);
            all = found;
        }
        if (all) {
            in_b[i] = true;
            denom++;
            denom_pass += t->status == ST_PASS;
        }
    }
    printf("\nops report (Table B: %zu entries):\n", ne);
    printf("  (a) tests whose top-level ops are all in Table B: %zu; passed %zu (%.1f%%)\n", denom, denom_pass,
           denom ? 100.0 * (double)denom_pass / (double)denom : 0.0);
    printf("  (b) all tests: %zu; passed %zu (%.1f%%)\n", total, total_pass,
           total ? 100.0 * (double)total_pass / (double)total : 0.0);
    if (unknown)
        printf("      (%zu tests whose ops are unknown because the model did not import are outside (a))\n", unknown);
    size_t exotic = 0;
    for (size_t i = 0; i < c->n_tests; i++)
        exotic += in_b[i] && c->tests[i].status == ST_SKIP && c->tests[i].skip_cause != SK_OP;
    printf("  (a') of (a), leaving out the %zu skipped for dtype or sequence/optional types: %zu; passed %zu (%.1f%%)\n",
           exotic, denom - exotic, denom_pass,
           denom > exotic ? 100.0 * (double)denom_pass / (double)(denom - exotic) : 0.0);
    printf("  Table B operators with a test in (a) that does not pass (a test skipped for a\n"
           "  missing op counts against that op only; other failures and skips against\n"
           "  every op of the test):\n");
    size_t n_listed = 0;
    for (size_t e = 0; e < ne; e++) {
        /* an entry mapped to an op already listed (Conv3D -> Conv) is reported once */
        bool dup = false;
        for (size_t p = 0; p < e && !dup; p++)
            dup = !strcmp(op_of[p], op_of[e]);
        if (dup)
            continue;
        size_t n_tests = 0, n_bad = 0;
        for (size_t i = 0; i < c->n_tests; i++) {
            if (!in_b[i] || !strvec_has(&c->tests[i].ops, op_of[e]))
                continue;
            n_tests++;
            n_bad += counts_against(&c->tests[i], op_of[e]);
        }
        if (!n_bad)
            continue;
        n_listed++;
        size_t n_fail = 0, n_skip[SK__COUNT] = {0};
        for (size_t i = 0; i < c->n_tests; i++) {
            const ctest *t = &c->tests[i];
            if (!in_b[i] || !strvec_has(&t->ops, op_of[e]) || !counts_against(t, op_of[e]))
                continue;
            if (t->status == ST_FAIL)
                n_fail++;
            else
                n_skip[t->skip_cause]++;
        }
        printf("    %s: %zu of %zu tests do not pass (", op_of[e], n_bad, n_tests);
        const char *sep = "";
        if (n_fail) {
            printf("%zu failed", n_fail);
            sep = ", ";
        }
        for (int k = 0; k < SK__COUNT; k++)
            if (n_skip[k]) {
                printf("%s%zu skipped: %s", sep, n_skip[k], skip_cause_name[k]);
                sep = ", ";
            }
        printf(")\n");
        size_t shown = 0;
        for (size_t i = 0; i < c->n_tests; i++) {
            const ctest *t = &c->tests[i];
            if (!in_b[i] || !strvec_has(&t->ops, op_of[e]) || !counts_against(t, op_of[e]))
                continue;
            if (!c->verbose && shown == 8) {
                printf("      ... and %zu more (--verbose lists all)\n", n_bad - shown);
                break;
            }
            shown++;
            if (t->status == ST_SKIP)
                printf("      SKIP %s [%s]: %s\n", t->name, skip_cause_name[t->skip_cause], t->reason ? t->reason : "");
            else
                printf("      %s %s: %s\n", status_word(t), t->name, t->reason ? t->reason : "");
        }
    }
    if (!n_listed)
        printf("    (none)\n");
    /* Table B ops that no selected test exercises within (a) */
    bool first = true;
    for (size_t e = 0; e < ne; e++) {
        bool dup = false;
        for (size_t p = 0; p < e && !dup; p++)
            dup = !strcmp(op_of[p], op_of[e]);
        if (dup)
            continue;
        bool any = false;
        for (size_t i = 0; i < c->n_tests && !any; i++)
            any = in_b[i] && strvec_has(&c->tests[i].ops, op_of[e]);
        if (!any) {
            printf("%s%s", first ? "  Table B operators no test in (a) uses: " : ", ", op_of[e]);
            first = false;
        }
    }
    if (!first)
        printf("\n");
    free(in_b);
    free(op_of);
}

/* ---- command ------------------------------------------------------------------ */

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard conformance DIR... [--config INI] [--filter REGEX] [--junit FILE]\n"
            "                              [--expected FILE] [--ops-report FILE] [--write-passing FILE]\n"
            "                              [--verbose]\n\n"
            "Runs every ONNX backend test below the DIRs, sorted by path:\n"
            "  - a folder with model.onnx and test_data_set_N/{input_K.pb,output_K.pb};\n"
            "  - a file NAME.onnx next to NAME_output_0.pb (the 'light' models; the input\n"
            "    is built as upstream does: arange(n).reshape(shape)/n, unknown dims = 1).\n"
            "Outputs must match in count, dtype and shape exactly; floats within\n"
            "|got-expected| <= 1e-7 + 1e-3*|expected| (NaN equals NaN, inf exactly);\n"
            "integers and bool exactly; strings byte for byte. A Bernoulli test's draws\n"
            "are judged by their distribution (0 or 1, the count of ones within 6 sigma\n"
            "of the sum of the probabilities). Prints 'FAIL test: reason' for each failure, a\n"
            "summary of the skips by cause (op not registered, sequence/optional types,\n"
            "dtype not supported), and last the line 'N passed, M failed, K skipped'.\n\n"
            "  --config INI          configuration (default: the embedded one)\n"
            "  --filter REGEX        run only tests whose folder name matches this POSIX\n"
            "                        extended regular expression\n"
            "  --junit FILE          write JUnit XML (replaced atomically)\n"
            "  --expected FILE       names of tests expected to pass, one per line, '#'\n"
            "                        comments; the exit status then depends on them only\n"
            "  --ops-report FILE     a list of ONNX operators (one per line: NAME [ONNX_OP]);\n"
            "                        report how many tests use only those ops and pass,\n"
            "                        and which of those ops have tests that do not pass\n"
            "  --write-passing FILE  write the names of the passing tests (to make an\n"
            "                        --expected list)\n"
            "  --verbose             print PASS/SKIP lines and runtime warnings too\n\n"
            "Exit status: 2 on a usage error; 1 when a DIR or a file cannot be read or\n"
            "written or the configuration does not load; with --expected, 1 iff a listed\n"
            "test failed, was skipped or was not found (tests excluded by --filter are\n"
            "ignored); without --expected, 1 iff any test failed; otherwise 0.\n");
}

int cmd_conformance(int argc, char **argv)
{
    const char *config = NULL, *filter = NULL, *junit = NULL, *expected = NULL, *ops_file = NULL, *write_pass = NULL;
    int verbose = 0;
    const char **dirs = calloc((size_t)argc + 1, sizeof *dirs);
    int n_dirs = 0;
    if (!dirs)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            free(dirs);
            return 0;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            verbose = 1;
        } else if (!strcmp(a, "--config") || !strcmp(a, "--filter") || !strcmp(a, "--junit") ||
                   !strcmp(a, "--expected") || !strcmp(a, "--ops-report") || !strcmp(a, "--write-passing")) {
            if (!has_val) {
                free(dirs);
                return cli_usage_error("conformance", "%s needs a value", a);
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--config"))
                config = v;
            else if (!strcmp(a, "--filter"))
                filter = v;
            else if (!strcmp(a, "--junit"))
                junit = v;
            else if (!strcmp(a, "--expected"))
                expected = v;
            else if (!strcmp(a, "--ops-report"))
                ops_file = v;
            else
                write_pass = v;
        } else if (a[0] == '-' && a[1]) {
            free(dirs);
            return cli_usage_error("conformance", "unknown option '%s'", a);
        } else {
            dirs[n_dirs++] = a;
        }
    }
    if (!n_dirs) {
        free(dirs);
        return cli_usage_error("conformance", "at least one DIR is required");
    }
    regex_t re;
    bool have_re = false;
    if (filter) {
        int rc = regcomp(&re, filter, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[256];
            regerror(rc, &re, msg, sizeof msg);
            free(dirs);
            return cli_usage_error("conformance", "--filter '%s': %s", filter, msg);
        }
        have_re = true;
    }

    int exit_rc = 1;
    run_ctx c = {0};
    c.verbose = verbose;
    c.progress = isatty(STDERR_FILENO);
    strvec exp_names = {0}, ops_entries = {0}, ops_onnx = {0};
    if (expected && read_name_list(expected, &exp_names, NULL, "--expected"))
        goto out;
    if (ops_file && read_name_list(ops_file, &ops_entries, &ops_onnx, "--ops-report"))
        goto out;
    for (int i = 0; i < n_dirs; i++) {
        if (!is_dir(dirs[i])) {
            fprintf(stderr, "switchyard conformance: %s: %s\n", dirs[i],
                    access(dirs[i], F_OK) ? "no such folder" : "not a folder");
            goto out;
        }
        /* strip trailing slashes so test paths and names are clean */
        char *d = xstrdup(dirs[i]);
        size_t n = strlen(d);
        while (n > 1 && d[n - 1] == '/')
            d[--n] = '\0';
        int rc = scan_dir(&c, d, 0);
        free(d);
        if (rc)
            goto out;
    }
    if (c.n_tests)
        qsort(c.tests, c.n_tests, sizeof *c.tests, cmp_test);
    /* the same test reached through overlapping DIRs runs once */
    size_t w = 0;
    for (size_t i = 0; i < c.n_tests; i++) {
        if (w && !strcmp(c.tests[w - 1].path, c.tests[i].path)) {
            free(c.tests[i].name);
            free(c.tests[i].group);
            free(c.tests[i].path);
            free(c.tests[i].model);
            free(c.tests[i].light_expected);
            continue;
        }
        c.tests[w++] = c.tests[i];
    }
    c.n_tests = w;

    sy_status *st = cli_env(config, &c.env);
    if (st) {
        cli_fail(st, config ? config : "default configuration");
        goto out;
    }
    sy_env_set_logger(c.env, log_sink, &c);

    bool *selected = calloc(c.n_tests ? c.n_tests : 1, sizeof *selected);
    if (!selected)
        goto out;
    for (size_t i = 0; i < c.n_tests; i++) {
        selected[i] = !have_re || regexec(&re, c.tests[i].name, 0, NULL, 0) == 0;
        c.n_selected += selected[i];
    }
    if (!c.n_selected)
        fprintf(stderr, "switchyard conformance: no test folder found below %s%s%s%s\n", dirs[0],
                n_dirs > 1 ? " (and the other folders)" : "", filter ? " matching --filter " : "",
                filter ? filter : "");

    double t0 = now_s();
    size_t np = 0, nf = 0, ns = 0;
    for (size_t i = 0; i < c.n_tests; i++) {
        if (!selected[i])
            continue;
        ctest *t = &c.tests[i];
        if (c.progress) {
            fprintf(stderr, "\r\033[K[%zu/%zu] %s", c.done + 1, c.n_selected, t->name);
            fflush(stderr);
        }
        run_test(&c, t);
        c.done++;
        if (c.progress && (t->status == ST_FAIL || verbose))
            fprintf(stderr, "\r\033[K");
        if (t->status == ST_PASS) {
            np++;
            if (verbose && t->light_expected && (t->rtol != CONF_RTOL || t->atol != CONF_ATOL))
                printf("PASS %s (%.3f s; rtol %g atol %g from real/test_*/data.json)\n", t->name, t->secs, t->rtol,
                       t->atol);
            else if (verbose)
                printf("PASS %s (%.3f s)\n", t->name, t->secs);
        } else if (t->status == ST_FAIL) {
            nf++;
            printf("FAIL %s: %s\n", t->name, t->reason ? t->reason : "?");
        } else {
            ns++;
            if (verbose)
                printf("SKIP %s [%s]: %s\n", t->name, skip_cause_name[t->skip_cause], t->reason ? t->reason : "");
        }
        fflush(stdout);
    }
    double total = now_s() - t0;
    if (c.progress)
        fprintf(stderr, "\r\033[K");

    /* skip summary */
    if (ns) {
        printf("\nskipped %zu tests:\n", ns);
        for (int cause = 0; cause < SK__COUNT; cause++) {
            size_t cnt = 0;
            for (size_t i = 0; i < c.n_tests; i++)
                cnt += c.tests[i].status == ST_SKIP && c.tests[i].skip_cause == cause;
            if (!cnt)
                continue;
            printf("  %s: %zu (e.g.", skip_cause_name[cause], cnt);
            size_t shown = 0;
            for (size_t i = 0; i < c.n_tests && shown < 4; i++)
                if (c.tests[i].status == ST_SKIP && c.tests[i].skip_cause == cause)
                    printf("%s %s", shown++ ? "," : "", c.tests[i].name);
            printf("%s)\n", cnt > shown ? ", ..." : "");
            if (cause == SK_OP) {
                /* which ops, by number of tests */
                strvec ops = {0};
                for (size_t i = 0; i < c.n_tests; i++)
                    if (c.tests[i].status == ST_SKIP && c.tests[i].skip_cause == SK_OP)
                        for (size_t k = 0; k < c.tests[i].missing_ops.n; k++)
                            if (!strvec_has(&ops, c.tests[i].missing_ops.v[k]))
                                strvec_push(&ops, xstrdup(c.tests[i].missing_ops.v[k]));
                if (ops.n) {
                    qsort(ops.v, ops.n, sizeof *ops.v, cmp_str);
                    printf("    missing ops (%zu):", ops.n);
                    for (size_t k = 0; k < ops.n; k++) {
                        size_t uses = 0;
                        for (size_t i = 0; i < c.n_tests; i++)
                            uses += c.tests[i].status == ST_SKIP && c.tests[i].skip_cause == SK_OP &&
                                    strvec_has(&c.tests[i].missing_ops, ops.v[k]);
                        printf("%s %s (%zu)", k ? "," : "", ops.v[k], uses);
                    }
                    printf("\n");
                }
                strvec_free(&ops);
            }
        }
        if (!verbose)
            printf("  (--verbose prints each skipped test with its reason)\n");
    }
    if (c.n_log_warnings)
        printf("(%u runtime warnings were logged; --verbose prints them)\n", c.n_log_warnings);

    if (ops_file)
        ops_report(&c, &ops_entries, &ops_onnx);

    /* expected-to-pass list */
    bool expected_bad = false;
    if (expected) {
        size_t n_bad = 0, n_new = 0;
        for (size_t k = 0; k < exp_names.n; k++) {
            const ctest *found = NULL;
            bool excluded = false;
            for (size_t i = 0; i < c.n_tests && !found; i++)
                if (!strcmp(c.tests[i].name, exp_names.v[k])) {
                    if (selected[i])
                        found = &c.tests[i];
                    else
                        excluded = true;
                }
            if (excluded && !found)
                continue;
            if (have_re && !found && regexec(&re, exp_names.v[k], 0, NULL, 0) != 0)
                continue; /* filtered out anyway */
            if (!found) {
                if (!n_bad++)
                    printf("\nexpected to pass (%s) but did not:\n", expected);
                printf("  %s: NOT FOUND below the given folders\n", exp_names.v[k]);
            } else if (found->status != ST_PASS) {
                if (!n_bad++)
                    printf("\nexpected to pass (%s) but did not:\n", expected);
                if (found->status == ST_SKIP)
                    printf("  %s: SKIP [%s]: %s\n", found->name, skip_cause_name[found->skip_cause],
                           found->reason ? found->reason : "");
                else
                    printf("  %s: %s: %s\n", found->name, status_word(found), found->reason ? found->reason : "");
            }
        }
        for (size_t i = 0; i < c.n_tests; i++)
            n_new += selected[i] && c.tests[i].status == ST_PASS && !strvec_has(&exp_names, c.tests[i].name);
        if (n_new)
            printf("\n%zu passing tests are not in %s (--write-passing regenerates the list)\n", n_new, expected);
        if (n_bad)
            printf("%zu of the tests expected to pass did not\n", n_bad);
        expected_bad = n_bad > 0;
    }

    int io_bad = 0;
    if (junit && write_junit(&c, junit, np, nf, ns, total))
        io_bad = 1;
    if (write_pass && write_list(&c, write_pass, dirs, n_dirs))
        io_bad = 1;
    if (verbose)
        printf("(%.1f s)\n", total);
    printf("%zu passed, %zu failed, %zu skipped\n", np, nf, ns);
    fflush(stdout);
    free(selected);
    if (io_bad)
        exit_rc = 1;
    else if (expected)
        exit_rc = expected_bad ? 1 : 0;
    else
        exit_rc = nf ? 1 : 0;

out:
    for (size_t i = 0; i < c.n_tests; i++) {
        ctest *t = &c.tests[i];
        free(t->name);
        free(t->group);
        free(t->path);
        free(t->model);
        free(t->light_expected);
        free(t->reason);
        strvec_free(&t->ops);
        strvec_free(&t->missing_ops);
    }
    free(c.tests);
    for (size_t i = 0; i < c.n_manifests; i++)
        manifest_free(&c.manifests[i]);
    free(c.manifests);
    free(c.seen);
    sy_env_release(c.env);
    strvec_free(&exp_names);
    strvec_free(&ops_entries);
    /* ops_onnx holds NULLs for lines without a second name */
    for (size_t i = 0; i < ops_onnx.n; i++)
        free(ops_onnx.v[i]);
    free(ops_onnx.v);
    if (have_re)
        regfree(&re);
    free(dirs);
    return exit_rc;
}
