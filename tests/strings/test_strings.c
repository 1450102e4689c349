/*
 * String tensors (SY_DT_STRING), checked against hand-worked values:
 *
 *   api          sy_tensor_create_strings / sy_tensor_string, embedded NULs,
 *                a .pb written and read back (string_data), .npy refused
 *   model        string initializer + input -> StringConcat -> Equal and
 *                StringSplit, run twice (copied, then borrowed input): the
 *                second run's strings replace the first's
 *   folded       a StringConcat of two initializers folded at creation: its
 *                output outlives every run
 *   movement     Reshape / Gather / Where / Concat move string records
 *   normalizer   StringNormalizer: stopwords without case, UPPER/LOWER of
 *                non-ASCII letters, everything removed -> [""], Turkish refused
 *   split        Python str.split on Unicode whitespace, maxsplit
 *   label_enc    LabelEncoder float -> string (NaN key, repeated key, default)
 *                and string -> int64 (default -1)
 *   cast         Cast string -> float32 and float32 / int64 -> string (NumPy's
 *                str of the value), a non-number refused
 *   regex        RegexFullMatch: full match only; RE2-only syntax; a
 *                catastrophic pattern stops at the match limit with an error
 *   hostile      .pb with a string count that does not match its dims (2^40
 *                declared: no allocation), raw_data on a string, external
 *                string data; records claiming 2^63 bytes or with NULL data;
 *                strings past max_tensor_bytes; invalid UTF-8 where characters
 *                are read
 */
#include "pt_common.h"

#include <math.h>
#include <stdint.h>

#define PT_STR ONNX__TENSOR_PROTO__DATA_TYPE__STRING
#define PT_BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

static sy_env *env_all(const char *extra)
{
    char ini[2048];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n%s", PT_PLUGIN_DIR, extra ? extra : "");
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    PT_CHECK(st == NULL, "env: %s", pt_msg(st));
    return env;
}

/* a STRING initializer in string_data */
static Onnx__TensorProto *init_strings(pt_model *m, const char *name, int32_t rank, const int64_t *dims,
                                       const char *const *s, size_t n)
{
    Onnx__TensorProto *t = pt_alloc(m, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = pt_strdup(m, name);
    t->n_dims = (size_t)rank;
    t->dims = pt_alloc(m, (size_t)rank * sizeof *t->dims);
    if (rank)
        memcpy(t->dims, dims, (size_t)rank * sizeof *t->dims);
    t->has_data_type = 1;
    t->data_type = PT_STR;
    t->n_string_data = n;
    t->string_data = pt_alloc(m, n * sizeof *t->string_data);
    for (size_t i = 0; i < n; i++) {
        t->string_data[i].len = strlen(s[i]);
        t->string_data[i].data = (uint8_t *)pt_strdup(m, s[i]);
    }
    m->graph.initializer = (Onnx__TensorProto **)pt_push(m, (void **)m->graph.initializer, m->graph.n_initializer);
    m->graph.initializer[m->graph.n_initializer++] = t;
    return t;
}

static void attr_strings(pt_model *m, const char *name, size_t n, const char *const *v)
{
    Onnx__NodeProto *node = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    a->n_strings = n;
    a->strings = pt_alloc(m, n * sizeof *a->strings);
    for (size_t i = 0; i < n; i++) {
        a->strings[i].len = strlen(v[i]);
        a->strings[i].data = (uint8_t *)pt_strdup(m, v[i]);
    }
    node->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)node->attribute, node->n_attribute);
    node->attribute[node->n_attribute++] = a;
}

/* output `name` holds exactly these strings */
static void expect_strings(const sy_tensor *t, size_t n, const char *const *want, const char *what)
{
    PT_CHECK(t && t->dtype == SY_DT_STRING, "%s: a string tensor", what);
    if (!t || t->dtype != SY_DT_STRING)
        return;
    PT_CHECK(t->nbytes == n * sizeof(sy_string), "%s: %zu bytes of records, want %zu", what, t->nbytes,
             n * sizeof(sy_string));
    for (size_t i = 0; i < n && i < t->nbytes / sizeof(sy_string); i++) {
        size_t len;
        const char *s = sy_tensor_string(t, (int64_t)i, &len);
        PT_CHECK(s && len == strlen(want[i]) && !memcmp(s, want[i], len), "%s[%zu] = \"%.*s\", want \"%s\"", what, i,
                 (int)len, s ? s : "", want[i]);
    }
}

static sy_status *session_of(sy_env *env, pt_model *m, sy_model **mo, sy_session **s)
{
    uint8_t *buf;
    size_t len;
    *mo = NULL;
    *s = NULL;
    pt_model_pack(m, &buf, &len);
    sy_status *st = sy_model_load_buffer(env, buf, len, m->graph.name, NULL, mo);
    free(buf);
    if (!st)
        st = sy_session_create(env, *mo, NULL, s);
    return st;
}

static sy_status *run_with(sy_session *s, const sy_tensor *x, sy_input_mode mode)
{
    sy_status *st = sy_session_set_input_by_index(s, 0, x, mode);
    return st ? st : sy_session_run(s);
}

/* an empty model of the default domain at opset `opset` */
static pt_model *model_v(const char *name, int64_t opset)
{
    pt_model *m = pt_model_new(name);
    m->model.opset_import[0]->version = opset;
    return m;
}

static void release_all(sy_session *s, sy_model *mo, pt_model *m)
{
    sy_session_release(s);
    sy_model_release(mo);
    pt_model_free(m);
}

/* the end of a test: each handle NULL or its own */
static void teardown(sy_env *env, pt_model *m, sy_model *mo, sy_session *s, sy_tensor *x)
{
    sy_tensor_free(x);
    release_all(s, mo, m);
    sy_env_release(env);
}

/* ---- api ------------------------------------------------------------------ */

static void test_api(void)
{
    const char *s[3] = {"héllo", "a\0b", ""};
    size_t lens[3] = {6, 3, 0};
    int64_t d[2] = {1, 3};
    sy_tensor *t = NULL, *back = NULL;
    sy_status *st = sy_tensor_create_strings(2, d, s, lens, &t);
    PT_REQUIRE(!st, "create: %s", pt_msg(st));
    PT_CHECK(t->dtype == SY_DT_STRING && t->rank == 2 && t->dims[1] == 3 && t->nbytes == 3 * sizeof(sy_string),
             "dtype, shape and record bytes");
    size_t len = 9;
    const char *e = sy_tensor_string(t, 1, &len);
    PT_CHECK(e && len == 3 && e[0] == 'a' && e[1] == '\0' && e[2] == 'b', "a NUL inside a string is kept");
    PT_CHECK(sy_tensor_string(t, 3, &len) == NULL && len == 0, "index past the end: NULL");
    PT_CHECK(sy_tensor_string(t, -1, NULL) == NULL, "negative index: NULL");
    PT_CHECK(sy_dtype_size(SY_DT_STRING) == sizeof(sy_string), "a string element is one record");
    char path[512];
    snprintf(path, sizeof path, "%s/strings.pb", STR_TMP_DIR);
    st = sy_tensor_write_file(path, t);
    PT_REQUIRE(!st, "write .pb: %s", pt_msg(st));
    st = sy_tensor_read_file(path, &back);
    PT_REQUIRE(!st, "read .pb: %s", pt_msg(st));
    PT_CHECK(back->dtype == SY_DT_STRING && back->rank == 2 && back->dims[0] == 1 && back->dims[1] == 3, "shape back");
    for (int i = 0; i < 3; i++) {
        e = sy_tensor_string(back, i, &len);
        PT_CHECK(e && len == lens[i] && !memcmp(e, s[i], len), "string %d reads back", i);
    }
    snprintf(path, sizeof path, "%s/strings.npy", STR_TMP_DIR);
    PT_EXPECT_REFUSED(sy_tensor_write_file(path, t), SY_ERR_UNSUPPORTED, "no .npy equivalent");
    sy_tensor_free(back); /* the refused call below sets it to NULL */
    back = NULL;
    PT_EXPECT_REFUSED(sy_tensor_create_strings(1, (int64_t[]){2}, NULL, NULL, &back), SY_ERR_INVALID_ARGUMENT,
                   "strings is NULL");
done:
    sy_tensor_free(t);
    sy_tensor_free(back);
}

/* ---- model ---------------------------------------------------------------- */

static void test_model(void)
{
    sy_env *env = env_all(NULL);
    pt_model *m = model_v("strings", 20);
    int64_t d3[1] = {3}, d1[1] = {1}, d32[2] = {3, 3};
    pt_input(m, "x", PT_STR, 1, d3);
    init_strings(m, "suffix", 1, d1, (const char *[]){"-b-c"}, 1);
    init_strings(m, "want", 1, d3, (const char *[]){"a-b-c", "xyz-b-c", "-b-c"}, 3);
    pt_node(m, "StringConcat", "cat", (const char *[]){"x", "suffix", NULL}, (const char *[]){"z", NULL});
    pt_node(m, "Equal", "eq", (const char *[]){"z", "want", NULL}, (const char *[]){"same", NULL});
    pt_node(m, "StringSplit", "split", (const char *[]){"z", NULL}, (const char *[]){"parts", "counts", NULL});
    pt_attr_string(m, "delimiter", "-");
    pt_attr_int(m, "maxsplit", 2);
    pt_output(m, "z", PT_STR, 1, d3);
    pt_output(m, "same", PT_BOOL, 1, d3);
    pt_output(m, "parts", PT_STR, 2, d32);
    pt_output(m, "counts", PT_I64, 1, d3);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_tensor *x = NULL, *x2 = NULL;
    sy_status *st = session_of(env, m, &mo, &s);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    st = sy_tensor_create_strings(1, d3, (const char *[]){"a", "xyz", ""}, NULL, &x);
    PT_REQUIRE(!st, "x: %s", pt_msg(st));
    st = run_with(s, x, SY_INPUT_COPY);
    sy_tensor_free(x); /* copied: the session no longer needs it */
    x = NULL;
    PT_REQUIRE(!st, "run: %s", pt_msg(st));
    const sy_tensor *z = NULL, *same = NULL, *parts = NULL, *counts = NULL;
    PT_REQUIRE(!sy_session_get_output(s, 0, &z) && !sy_session_get_output(s, 1, &same) &&
                 !sy_session_get_output(s, 2, &parts) && !sy_session_get_output(s, 3, &counts), "outputs");
    expect_strings(z, 3, (const char *[]){"a-b-c", "xyz-b-c", "-b-c"}, "z");
    const uint8_t *b = same->data;
    PT_CHECK(b[0] == 1 && b[1] == 1 && b[2] == 1, "Equal: all true, got %d %d %d", b[0], b[1], b[2]);
    /* "a-b-c".split("-", 2) = [a, b, c]; "-b-c".split("-", 2) = ["", b, c] */
    expect_strings(parts, 9, (const char *[]){"a", "b", "c", "xyz", "b", "c", "", "b", "c"}, "parts");
    const int64_t *c = counts->data;
    PT_CHECK(c[0] == 3 && c[1] == 3 && c[2] == 3, "counts 3 3 3");

    /* borrowed, longer strings: the width of parts is planned again, and the
     * previous run's strings are replaced */
    st = sy_tensor_create_strings(1, d3, (const char *[]){"p-q-r-s", "a", ""}, NULL, &x2);
    PT_REQUIRE(!st, "x2: %s", pt_msg(st));
    st = run_with(s, x2, SY_INPUT_BORROW);
    PT_REQUIRE(!st, "run 2: %s", pt_msg(st));
    PT_REQUIRE(!sy_session_get_output(s, 0, &z) && !sy_session_get_output(s, 1, &same) &&
                   !sy_session_get_output(s, 2, &parts) && !sy_session_get_output(s, 3, &counts), "outputs");
    expect_strings(z, 3, (const char *[]){"p-q-r-s-b-c", "a-b-c", "-b-c"}, "z (2)");
    b = same->data;
    PT_CHECK(b[0] == 0 && b[1] == 0 && b[2] == 1, "Equal (2): 0 0 1, got %d %d %d", b[0], b[1], b[2]);
    expect_strings(parts, 9, (const char *[]){"p", "q", "r-s-b-c", "a", "b", "c", "", "b", "c"}, "parts (2)");
    c = counts->data;
    PT_CHECK(c[0] == 3 && c[1] == 3 && c[2] == 3, "counts (2) 3 3 3");
done:
    sy_tensor_free(x2);
    teardown(env, m, mo, s, x);
}

/* ---- folded constants ------------------------------------------------------ */

static void test_folded(void)
{
    sy_env *env = env_all(NULL);
    pt_model *m = model_v("folded", 20);
    int64_t d2[1] = {2};
    pt_input(m, "x", PT_STR, 1, d2);
    init_strings(m, "a", 1, d2, (const char *[]){"fold", "ed"}, 2);
    init_strings(m, "b", 1, d2, (const char *[]){"!", "?"}, 2);
    pt_node(m, "StringConcat", "const_cat", (const char *[]){"a", "b", NULL}, (const char *[]){"k", NULL});
    pt_node(m, "StringConcat", "cat", (const char *[]){"x", "k", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "k", PT_STR, 1, d2);
    pt_output(m, "y", PT_STR, 1, d2);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_tensor *x = NULL;
    sy_status *st = session_of(env, m, &mo, &s);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    sy_node_placement np = {.struct_size = sizeof np};
    PT_CHECK(sy_session_node_placement(s, 0, &np) && np.folded, "the constant concat is folded");
    st = sy_tensor_create_strings(1, d2, (const char *[]){"x", "y"}, NULL, &x);
    PT_REQUIRE(!st, "x: %s", pt_msg(st));
    for (int r = 0; r < 3; r++) {
        st = run_with(s, x, SY_INPUT_COPY);
        PT_REQUIRE(!st, "run %d: %s", r, pt_msg(st));
        const sy_tensor *k = NULL, *y = NULL;
        PT_REQUIRE(!sy_session_get_output(s, 0, &k) && !sy_session_get_output(s, 1, &y), "outputs");
        expect_strings(k, 2, (const char *[]){"fold!", "ed?"}, "folded k");
        expect_strings(y, 2, (const char *[]){"xfold!", "yed?"}, "y");
    }
done:
    teardown(env, m, mo, s, x);
}

/* ---- element movement ------------------------------------------------------ */

static void test_movement(void)
{
    sy_env *env = env_all(NULL);
    pt_model *m = model_v("movement", 20);
    int64_t d4[1] = {4}, d22[2] = {2, 2}, d2[1] = {2}, d8[1] = {8};
    pt_input(m, "x", PT_STR, 1, d4);
    pt_init_i64(m, "shape", 1, d2, (const int64_t[]){2, 2});
    pt_init_i64(m, "idx", 1, d2, (const int64_t[]){1, 0});
    init_strings(m, "other", 2, d22, (const char *[]){"o0", "o1", "o2", "o3"}, 4);
    uint8_t cond[4] = {1, 0, 0, 1};
    pt_init_raw(m, "cond", PT_BOOL, 2, d22, cond, 4);
    pt_node(m, "Reshape", "reshape", (const char *[]){"x", "shape", NULL}, (const char *[]){"r", NULL});
    pt_node(m, "Gather", "gather", (const char *[]){"r", "idx", NULL}, (const char *[]){"g", NULL});
    pt_node(m, "Where", "where", (const char *[]){"cond", "g", "other", NULL}, (const char *[]){"w", NULL});
    pt_node(m, "Flatten", "flat", (const char *[]){"w", NULL}, (const char *[]){"f", NULL});
    pt_attr_int(m, "axis", 0);
    pt_node(m, "Reshape", "flat1", (const char *[]){"f", "len", NULL}, (const char *[]){"f1", NULL});
    pt_init_i64(m, "len", 1, (const int64_t[]){1}, (const int64_t[]){4});
    pt_node(m, "Concat", "concat", (const char *[]){"f1", "x", NULL}, (const char *[]){"c", NULL});
    pt_attr_int(m, "axis", 0);
    pt_output(m, "c", PT_STR, 1, d8);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_tensor *x = NULL;
    sy_status *st = session_of(env, m, &mo, &s);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    st = sy_tensor_create_strings(1, d4, (const char *[]){"a", "b", "c", "d"}, NULL, &x);
    PT_REQUIRE(!st, "x: %s", pt_msg(st));
    st = run_with(s, x, SY_INPUT_COPY);
    PT_REQUIRE(!st, "run: %s", pt_msg(st));
    const sy_tensor *c = NULL;
    PT_REQUIRE(!sy_session_get_output(s, 0, &c), "output");
    /* r = [[a,b],[c,d]], g = [[c,d],[a,b]], w = [[c,o1],[o2,b]] */
    expect_strings(c, 8, (const char *[]){"c", "o1", "o2", "b", "a", "b", "c", "d"}, "c");
done:
    teardown(env, m, mo, s, x);
}

/* ---- one-node sessions ----------------------------------------------------- */

typedef void (*node_attrs)(pt_model *m);

/* a one-node model: string X [n] -> op -> Y (dtype ydt, rank 1 or 2, unknown dims) */
static sy_status *one_node(sy_env *env, const char *op, node_attrs attrs, int ydt, int32_t xrank, const int64_t *xd,
                           const char *const *xs, sy_model **mo, sy_session **s, pt_model **pm)
{
    pt_model *m = *pm = model_v(op, 20);
    pt_input(m, "x", PT_STR, xrank, xd);
    bool split = !strcmp(op, "StringSplit"); /* its second output, the counts, is required */
    pt_node(m, op, "n", (const char *[]){"x", NULL}, (const char *[]){"y", split ? "counts" : NULL, NULL});
    if (attrs)
        attrs(m);
    pt_output(m, "y", ydt, 0, NULL);
    m->graph.output[m->graph.n_output - 1]->type->tensor_type->shape = NULL; /* shape left to inference */
    if (split)
        pt_output(m, "counts", PT_I64, xrank, xd);
    sy_status *st = session_of(env, m, mo, s);
    if (st)
        return st;
    sy_tensor *x = NULL;
    st = sy_tensor_create_strings(xrank, xd, xs, NULL, &x);
    if (!st)
        st = run_with(*s, x, SY_INPUT_COPY);
    sy_tensor_free(x);
    return st;
}

/* a one-node model over the strings xs [n] (rank 1) that one_node refuses
 * with `code`, each of needles in the message */
typedef struct refused_case {
    const char *op;
    node_attrs attrs;
    int ydt;
    const char *pattern; /* regex_pattern, RegexFullMatch only */
    int64_t n;
    const char *xs[2];
    sy_status_code code;
    const char *needles[3]; /* NULL-terminated */
} refused_case;

static const char *regex_pattern;

static void expect_refused(sy_env *env, const refused_case *cases, size_t n_cases)
{
    for (size_t i = 0; i < n_cases; i++) {
        const refused_case *c = &cases[i];
        sy_model *mo;
        sy_session *s;
        pt_model *m;
        if (c->pattern)
            regex_pattern = c->pattern;
        sy_status *st = one_node(env, c->op, c->attrs, c->ydt, 1, &c->n, c->xs, &mo, &s, &m);
        PT_CHECK(st && sy_status_get_code(st) == c->code, "%s case %zu: expected %s, got %s: %s", c->op, i,
                 sy_status_code_name(c->code), st ? sy_status_code_name(sy_status_get_code(st)) : "success",
                 st ? sy_status_get_message(st) : "");
        for (int k = 0; st && c->needles[k]; k++)
            PT_HAS(sy_status_get_message(st), c->needles[k]);
        sy_status_free(st);
        release_all(s, mo, m);
    }
}

static void norm_upper_insensitive(pt_model *m)
{
    pt_attr_string(m, "case_change_action", "UPPER");
    attr_strings(m, "stopwords", 1, (const char *[]){"monday"});
}
static void norm_lower(pt_model *m) { pt_attr_string(m, "case_change_action", "LOWER"); }
static void norm_all_gone(pt_model *m)
{
    pt_attr_int(m, "is_case_sensitive", 1);
    attr_strings(m, "stopwords", 2, (const char *[]){"a", "b"});
}
static void norm_turkish(pt_model *m)
{
    pt_attr_string(m, "case_change_action", "UPPER");
    pt_attr_string(m, "locale", "tr_TR");
}

static void test_normalizer(void)
{
    sy_env *env = env_all(NULL);
    sy_model *mo;
    sy_session *s;
    pt_model *m;
    const sy_tensor *y;
    /* ONNX's own example: [1, 6] -> [1, 4], "Monday" matches "monday" without case */
    sy_status *st = one_node(env, "StringNormalizer", norm_upper_insensitive, PT_STR, 2, (const int64_t[]){1, 6},
                             (const char *[]){"Monday", "tuesday", "wednesday", "Monday", "tuesday", "wednesday"}, &mo,
                             &s, &m);
    PT_CHECK(!st, "upper: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y)) {
        PT_CHECK(y->rank == 2 && y->dims[0] == 1 && y->dims[1] == 4, "[1, 4]");
        expect_strings(y, 4, (const char *[]){"TUESDAY", "WEDNESDAY", "TUESDAY", "WEDNESDAY"}, "upper");
    }
    release_all(s, mo, m);
    /* É (C3 89) -> é (C3 A9), Σ (CE A3) -> σ (CF 83), İ (C4 B0) -> i̇? no: simple mapping gives i (U+0069) */
    st = one_node(env, "StringNormalizer", norm_lower, PT_STR, 1, (const int64_t[]){3},
                  (const char *[]){"\xc3\x89" "COLE", "\xce\xa3" "OFIA", "ABC"}, &mo, &s, &m);
    PT_CHECK(!st, "lower: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y))
        expect_strings(y, 3, (const char *[]){"\xc3\xa9" "cole", "\xcf\x83" "ofia", "abc"}, "lower");
    release_all(s, mo, m);
    st = one_node(env, "StringNormalizer", norm_all_gone, PT_STR, 1, (const int64_t[]){3},
                  (const char *[]){"a", "b", "a"}, &mo, &s, &m);
    PT_CHECK(!st, "all gone: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y)) {
        PT_CHECK(y->rank == 1 && y->dims[0] == 1, "[1]");
        expect_strings(y, 1, (const char *[]){""}, "all gone");
    }
    release_all(s, mo, m);
    const refused_case refused[] = {
        {"StringNormalizer", norm_turkish, PT_STR, NULL, 1, {"i"}, SY_ERR_UNSUPPORTED, {"tr_TR", "own case rules"}},
        /* invalid UTF-8 (a lone continuation byte) where characters are read */
        {"StringNormalizer", norm_lower, PT_STR, NULL, 2, {"ok", "b\x80z"}, SY_ERR_INVALID_ARGUMENT,
         {"element 1 is not valid UTF-8", "byte 1 of 3"}},
    };
    expect_refused(env, refused, sizeof refused / sizeof refused[0]);
    sy_env_release(env);
}

static void split_ws_max1(pt_model *m) { pt_attr_int(m, "maxsplit", 1); }

static void test_split(void)
{
    sy_env *env = env_all(NULL);
    sy_model *mo;
    sy_session *s;
    pt_model *m;
    const sy_tensor *y;
    /* no delimiter: runs of whitespace, U+3000 (E3 80 80) and U+00A0 (C2 A0)
     * included, as Python's "...".split() */
    sy_status *st = one_node(env, "StringSplit", NULL, PT_STR, 1, (const int64_t[]){3},
                             (const char *[]){" a\xe3\x80\x80" "b\t\nc ", "", "\xc2\xa0 d"}, &mo, &s, &m);
    PT_CHECK(!st, "split: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y)) {
        PT_CHECK(y->rank == 2 && y->dims[1] == 3, "width 3");
        expect_strings(y, 9, (const char *[]){"a", "b", "c", "", "", "", "d", "", ""}, "whitespace split");
        const sy_tensor *z;
        PT_CHECK(!sy_session_get_output(s, 1, &z) && ((const int64_t *)z->data)[0] == 3 &&
                     ((const int64_t *)z->data)[1] == 0 && ((const int64_t *)z->data)[2] == 1, "counts 3 0 1");
    }
    release_all(s, mo, m);
    /* maxsplit 1: the rest keeps its inner and trailing whitespace, not its leading */
    st = one_node(env, "StringSplit", split_ws_max1, PT_STR, 1, (const int64_t[]){1},
                  (const char *[]){"  x   y z  "}, &mo, &s, &m);
    PT_CHECK(!st, "maxsplit: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y))
        expect_strings(y, 2, (const char *[]){"x", "y z  "}, "maxsplit 1");
    release_all(s, mo, m);
    sy_env_release(env);
}

static void regex_attrs(pt_model *m) { pt_attr_string(m, "pattern", regex_pattern); }

static void test_regex(void)
{
    sy_env *env = env_all(NULL);
    if (!sy_env_has_op(env, "", "RegexFullMatch", 20)) {
        printf("SKIPPED regex: ops_string was built without PCRE2 (Debian libpcre2-dev)\n");
        sy_env_release(env);
        return;
    }
    sy_model *mo;
    sy_session *s;
    pt_model *m;
    const sy_tensor *y;
    regex_pattern = "a[0-9]+";
    sy_status *st = one_node(env, "RegexFullMatch", regex_attrs, PT_BOOL, 1, (const int64_t[]){4},
                             (const char *[]){"a123", "a12b", "xa1", "a"}, &mo, &s, &m);
    PT_CHECK(!st, "regex: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y)) {
        const uint8_t *b = y->data;
        PT_CHECK(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 0, "full match only: %d %d %d %d", b[0], b[1], b[2],
                 b[3]);
    }
    release_all(s, mo, m);
    /* exponential backtracking: stops at the match limit with an error */
    static char subject[64];
    memset(subject, 'a', 40);
    subject[40] = '!';
    subject[41] = '\0';
    const refused_case refused[] = {
        {"RegexFullMatch", regex_attrs, PT_BOOL, "a(?=b)b", 1, {"ab"}, SY_ERR_INVALID_MODEL, {"lookaround", "RE2"}},
        {"RegexFullMatch", regex_attrs, PT_BOOL, "(a)\\1", 1, {"aa"}, SY_ERR_INVALID_MODEL, {"backreference"}},
        {"RegexFullMatch", regex_attrs, PT_BOOL, "a[", 1, {"a"}, SY_ERR_INVALID_MODEL, {"does not compile"}},
        {"RegexFullMatch", regex_attrs, PT_BOOL, "(a|a)*(a|a)*(a|a)*[a-z]", 1, {subject}, SY_ERR_RUNTIME,
         {"element 0", "backtracks past"}},
    };
    expect_refused(env, refused, sizeof refused / sizeof refused[0]);
    sy_env_release(env);
}

/* ---- LabelEncoder ------------------------------------------------------------- */

static void attr_floats(pt_model *m, const char *name, size_t n, const float *v)
{
    Onnx__NodeProto *node = m->graph.node[m->graph.n_node - 1];
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    a->n_floats = n;
    a->floats = pt_alloc(m, n * sizeof *a->floats);
    memcpy(a->floats, v, n * sizeof *a->floats);
    node->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)node->attribute, node->n_attribute);
    node->attribute[node->n_attribute++] = a;
}

/* float keys (a NaN among them) -> strings, with a default; then the strings back to int64 */
static void test_label_encoder(void)
{
    sy_env *env = env_all(NULL);
    pt_model *m = pt_model_new("label_encoder");
    pt_opset(m, "ai.onnx.ml", 4);
    int64_t d5[1] = {5};
    pt_input(m, "x", PT_F32, 1, d5);
    pt_node(m, "LabelEncoder", "to_str", (const char *[]){"x", NULL}, (const char *[]){"s", NULL});
    pt_domain(m, "ai.onnx.ml");
    attr_floats(m, "keys_floats", 4, (const float[]){2.5f, NAN, -1.0f, 2.5f});
    attr_strings(m, "values_strings", 4, (const char *[]){"two", "nan", "minus", "again"});
    pt_attr_string(m, "default_string", "none");
    pt_node(m, "LabelEncoder", "to_int", (const char *[]){"s", NULL}, (const char *[]){"i", NULL});
    pt_domain(m, "ai.onnx.ml");
    attr_strings(m, "keys_strings", 3, (const char *[]){"minus", "two", "nan"});
    pt_attr_ints(m, "values_int64s", 3, (const int64_t[]){-1, 2, 99});
    pt_output(m, "s", PT_STR, 1, d5);
    pt_output(m, "i", PT_I64, 1, d5);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = session_of(env, m, &mo, &s);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    float x[5] = {2.5f, -1.0f, NAN, 7.0f, -0.0f};
    sy_tensor in = {.struct_size = sizeof in, .dtype = SY_DT_FLOAT32, .rank = 1, .dims = {5}, .data = x,
                    .nbytes = sizeof x};
    st = run_with(s, &in, SY_INPUT_COPY);
    PT_REQUIRE(!st, "run: %s", pt_msg(st));
    const sy_tensor *so = NULL, *io = NULL;
    PT_REQUIRE(!sy_session_get_output(s, 0, &so) && !sy_session_get_output(s, 1, &io), "outputs");
    /* 2.5 maps to its first value; NaN to the NaN key; 7 and -0 to the default */
    expect_strings(so, 5, (const char *[]){"two", "minus", "nan", "none", "none"}, "to_str");
    const int64_t *iv = io->data;
    PT_CHECK(iv[0] == 2 && iv[1] == -1 && iv[2] == 99 && iv[3] == -1 && iv[4] == -1,
             "to_int: 2 -1 99 -1 -1, got %lld %lld %lld %lld %lld", (long long)iv[0], (long long)iv[1],
             (long long)iv[2], (long long)iv[3], (long long)iv[4]);
done:
    teardown(env, m, mo, s, NULL);
}

/* ---- Cast ------------------------------------------------------------------ */

/* strings -> float32 (whitespace, exponent, inf), float32 -> strings in NumPy's
 * str form, int64 -> strings; "abc" refused */
/* ---- TfIdfVectorizer on strings ----------------------------------------------- */

/* ONNX's node test tfidfvectorizer_tf_batch_uniandbigrams_skip5 with each
 * token id t written as the string "w<t>": pool 2 3 5 4 | 5 6, 7 8, 6 7
 * (unigrams then bigrams), skips up to 5; the expected counts are that
 * test's output_0.pb. */
static void tfidf_attrs(pt_model *m)
{
    pt_attr_int(m, "max_gram_length", 2);
    pt_attr_int(m, "max_skip_count", 5);
    pt_attr_int(m, "min_gram_length", 1);
    pt_attr_string(m, "mode", "TF");
    pt_attr_ints(m, "ngram_counts", 2, (const int64_t[]){0, 4});
    pt_attr_ints(m, "ngram_indexes", 7, (const int64_t[]){0, 1, 2, 3, 4, 5, 6});
    attr_strings(m, "pool_strings", 10, (const char *[]){"w2", "w3", "w5", "w4", "w5", "w6", "w7", "w8", "w6", "w7"});
}

static void tfidf_both_pools(pt_model *m)
{
    tfidf_attrs(m);
    pt_attr_ints(m, "pool_int64s", 1, (const int64_t[]){2});
}

static void test_tfidf(void)
{
    sy_env *env = env_all(NULL);
    sy_model *mo;
    sy_session *s;
    pt_model *m;
    const sy_tensor *y;
    sy_status *st = one_node(env, "TfIdfVectorizer", tfidf_attrs, PT_F32, 2, (const int64_t[]){2, 6},
                             (const char *[]){"w1", "w1", "w3", "w3", "w3", "w7", "w8", "w6", "w7", "w5", "w6", "w8"},
                             &mo, &s, &m);
    PT_CHECK(!st, "tfidf: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y)) {
        static const float want[14] = {0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1};
        PT_CHECK(y->dtype == SY_DT_FLOAT32 && y->rank == 2 && y->dims[0] == 2 && y->dims[1] == 7, "[2, 7] float");
        for (int i = 0; i < 14 && y->rank == 2 && y->dims[1] == 7; i++)
            PT_CHECK(((const float *)y->data)[i] == want[i], "count %d: %g, expected %g", i,
                     (double)((const float *)y->data)[i], (double)want[i]);
    }
    release_all(s, mo, m);
    /* a string differing only in length from a pool entry is no match ("w7" vs "w77", "w") */
    st = one_node(env, "TfIdfVectorizer", tfidf_attrs, PT_F32, 1, (const int64_t[]){4},
                  (const char *[]){"w77", "w", "w3", ""}, &mo, &s, &m);
    PT_CHECK(!st, "tfidf lengths: %s", pt_msg(st));
    if (s && !sy_session_get_output(s, 0, &y)) {
        static const float want[7] = {0, 1, 0, 0, 0, 0, 0};
        for (int i = 0; i < 7 && y->rank == 1 && y->dims[0] == 7; i++)
            PT_CHECK(((const float *)y->data)[i] == want[i], "lengths: count %d: %g", i,
                     (double)((const float *)y->data)[i]);
    }
    release_all(s, mo, m);
    const refused_case refused[] = {{"TfIdfVectorizer", tfidf_both_pools, PT_F32, NULL, 1, {"w2"},
                                     SY_ERR_INVALID_MODEL,
                                     {"exactly one of pool_int64s and pool_strings", "both are given"}}};
    expect_refused(env, refused, sizeof refused / sizeof refused[0]);
    sy_env_release(env);
}

static void test_cast(void)
{
    sy_env *env = env_all(NULL);
    pt_model *m = model_v("cast", 19);
    int64_t d4[1] = {4}, d6[1] = {6}, d2[1] = {2};
    pt_input(m, "x", PT_STR, 1, d4);
    float f[6] = {0.25f, 1e-5f, 0.9767611f, 100.0f, -0.0f, 1.5e16f};
    pt_init_f32(m, "f", 1, d6, f);
    pt_init_i64(m, "i", 1, d2, (const int64_t[]){-42, INT64_MAX});
    pt_node(m, "Cast", "to_float", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_attr_int(m, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    pt_node(m, "Cast", "f_to_str", (const char *[]){"f", NULL}, (const char *[]){"fs", NULL});
    pt_attr_int(m, "to", PT_STR);
    pt_node(m, "Cast", "i_to_str", (const char *[]){"i", NULL}, (const char *[]){"is", NULL});
    pt_attr_int(m, "to", PT_STR);
    pt_output(m, "y", PT_F32, 1, d4);
    pt_output(m, "fs", PT_STR, 1, d6);
    pt_output(m, "is", PT_STR, 1, d2);
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_tensor *x = NULL;
    sy_status *st = session_of(env, m, &mo, &s);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    st = sy_tensor_create_strings(1, d4, (const char *[]){" 0.5", "-1e3 ", "inf", "0.9767611"}, NULL, &x);
    PT_REQUIRE(!st, "x: %s", pt_msg(st));
    st = run_with(s, x, SY_INPUT_COPY);
    PT_REQUIRE(!st, "run: %s", pt_msg(st));
    const sy_tensor *y = NULL, *fs = NULL, *is = NULL;
    PT_REQUIRE(!sy_session_get_output(s, 0, &y) && !sy_session_get_output(s, 1, &fs) &&
                   !sy_session_get_output(s, 2, &is), "outputs");
    const float *yv = y->data;
    PT_CHECK(yv[0] == 0.5f && yv[1] == -1000.0f && isinf(yv[2]) && yv[2] > 0 && yv[3] == 0.9767611f,
             "parsed: %g %g %g %.9g", yv[0], yv[1], yv[2], yv[3]);
    /* NumPy: str(np.float32(v)) */
    expect_strings(fs, 6, (const char *[]){"0.25", "1e-05", "0.9767611", "100.0", "-0.0", "1.5e+16"}, "float32 text");
    expect_strings(is, 2, (const char *[]){"-42", "9223372036854775807"}, "int64 text");
    sy_tensor_free(x);
    x = NULL;
    st = sy_tensor_create_strings(1, d4, (const char *[]){"1", "2", "abc", "0x10"}, NULL, &x);
    PT_REQUIRE(!st, "x: %s", pt_msg(st));
    PT_EXPECT_REFUSED(run_with(s, x, SY_INPUT_COPY), SY_ERR_INVALID_ARGUMENT, "string 2 (\"abc\") is not a float32 number");
done:
    teardown(env, m, mo, s, x);
}

/* ---- hostile ----------------------------------------------------------------- */

/* a TensorProto file from the message */
static sy_status *read_pb(Onnx__TensorProto *tp, const char *name, sy_tensor **out)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.pb", STR_TMP_DIR, name);
    size_t n = onnx__tensor_proto__get_packed_size(tp);
    uint8_t *buf = malloc(n ? n : 1);
    onnx__tensor_proto__pack(tp, buf);
    FILE *f = fopen(path, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
    free(buf);
    *out = NULL;
    return sy_tensor_read_file(path, out);
}

static void test_hostile(void)
{
    pt_model *m = pt_model_new("hostile");
    sy_tensor *t = NULL;
    /* 2^40 strings declared, 2 present: refused before any allocation of 16 TiB */
    Onnx__TensorProto *tp = init_strings(m, "big", 2, (const int64_t[]){1 << 20, 1 << 20}, (const char *[]){"a", "b"}, 2);
    PT_EXPECT_REFUSED(read_pb(tp, "big", &t), SY_ERR_INVALID_MODEL, "string_data has 2 entries",
                   "1099511627776 strings");
    sy_tensor_free(t);
    /* strings in raw_data */
    tp = init_strings(m, "raw", 1, (const int64_t[]){1}, (const char *[]){"x"}, 1);
    tp->has_raw_data = 1;
    tp->raw_data.len = 16;
    tp->raw_data.data = pt_alloc(m, 16);
    PT_EXPECT_REFUSED(read_pb(tp, "raw", &t), SY_ERR_INVALID_MODEL, "STRING tensor with 16 bytes of raw_data");
    sy_tensor_free(t);
    tp->has_raw_data = 0;
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    PT_EXPECT_REFUSED(read_pb(tp, "external", &t), SY_ERR_INVALID_MODEL, "external data");
    sy_tensor_free(t);
    pt_model_free(m);

    /* records a host fills itself */
    char ini_extra[128];
    snprintf(ini_extra, sizeof ini_extra, "max_tensor_bytes = 4096\n");
    sy_env *env = env_all(ini_extra);
    m = model_v("cat", 20);
    pt_input(m, "x", PT_STR, 1, (const int64_t[]){2});
    pt_node(m, "StringConcat", "cat", (const char *[]){"x", "x", NULL}, (const char *[]){"y", NULL});
    pt_output(m, "y", PT_STR, 1, (const int64_t[]){2});
    sy_model *mo = NULL;
    sy_session *s = NULL;
    sy_status *st = session_of(env, m, &mo, &s);
    PT_REQUIRE(!st, "session: %s", pt_msg(st));
    sy_string recs[2] = {{"ok", 2}, {"x", UINT64_C(1) << 63}};
    sy_tensor in = {.struct_size = sizeof in, .dtype = SY_DT_STRING, .rank = 1, .dims = {2}, .data = recs,
                    .nbytes = sizeof recs};
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &in, SY_INPUT_COPY), SY_ERR_INVALID_ARGUMENT,
                   "string 1 claims 9223372036854775808 bytes");
    recs[1].data = NULL;
    recs[1].size = 3;
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &in, SY_INPUT_BORROW), SY_ERR_INVALID_ARGUMENT,
                   "string 1 has 3 bytes but no data pointer");
    /* 5000 bytes of text against max_tensor_bytes = 4096 */
    static char text[5000];
    memset(text, 'q', sizeof text);
    recs[1].data = text;
    recs[1].size = sizeof text;
    PT_EXPECT_REFUSED(sy_session_set_input_by_index(s, 0, &in, SY_INPUT_COPY), SY_ERR_BUDGET, "input 'x'",
                   "5002 bytes", "max_tensor_bytes");
done:
    teardown(env, m, mo, s, NULL);
}

int main(void)
{
    PT_RUN(test_api);
    PT_RUN(test_model);
    PT_RUN(test_folded);
    PT_RUN(test_movement);
    PT_RUN(test_normalizer);
    PT_RUN(test_split);
    PT_RUN(test_regex);
    PT_RUN(test_label_encoder);
    PT_RUN(test_tfidf);
    PT_RUN(test_cast);
    PT_RUN(test_hostile);
    return pt_result();
}
