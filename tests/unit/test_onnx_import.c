/*
 * ONNX importer and tensor-file tests.
 *
 *   test_onnx_import <shared-dir> [all]
 *
 * Imports the real models under <shared>/models/onnx and a sample of the ONNX
 * node tests (every one with "all"), reads their .pb tensors, and checks that
 * corrupt or hostile inputs are refused with a status naming what and where.
 * Exit 77 (skip) when the shared folder is absent. Needs the generated
 * onnx.pb-c.h and the core's internal headers on the include path.
 */
#include "ir.h"
#include "onnx_import.h"
#include "onnx.pb-c.h"
#include "status.h"
#include "switchyard/switchyard.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            failures++;                                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fputc('\n', stderr);                                                                                   \
        }                                                                                                          \
    } while (0)

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        abort(); /* test harness only */
    va_end(ap);
    return s;
}

static bool is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted subdirectory names of dir. */
static size_t list_dir(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    size_t n = 0, cap = 0;
    char **v = NULL;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                v = realloc(v, cap * sizeof *v);
            }
            v[n++] = strdup(e->d_name);
        }
        closedir(d);
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- reason tally -------------------------------------------------------------- */

typedef struct tally {
    char *reason[64];
    int count[64];
    char *example[64];
    int n;
} tally;

static void tally_add(tally *t, const char *reason, const char *example)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->reason[i], reason) == 0) {
            t->count[i]++;
            return;
        }
    if (t->n < 64) {
        t->reason[t->n] = strdup(reason);
        t->example[t->n] = strdup(example);
        t->count[t->n++] = 1;
    }
}

static void tally_print(tally *t, const char *title)
{
    for (int i = 0; i < t->n; i++) {
        printf("  %s: %4d x %s\n      e.g. %s\n", title, t->count[i], t->reason[i], t->example[i]);
        free(t->reason[i]);
        free(t->example[i]);
    }
    t->n = 0;
}

/* The stable part of a message, for grouping: the code and the words after the last quote. */
static void reason_of(sy_status *st, char *buf, size_t cap)
{
    const char *m = sy_status_get_message(st);
    const char *tail = strrchr(m, '\'');
    if (strstr(m, "holds an ONNX"))
        tail = strstr(m, "holds an ONNX") - 1;
    tail = tail ? tail + 1 : m;
    if (*tail == ')' || *tail == ':')
        tail++;
    snprintf(buf, cap, "%s:%s", sy_status_code_name(sy_status_get_code(st)), tail);
    for (char *p = buf; *p; p++)
        if (*p >= '0' && *p <= '9')
            *p = '#';
}

/* ---- corpus runs ------------------------------------------------------------------ */

static void check_model_sane(const ir_model *m, const char *path)
{
    const ir_graph *g = &m->graph;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        CHECK(n->name && n->op && n->domain, "%s: node %u lacks name/op/domain", path, i);
        for (uint32_t k = 0; k < n->n_inputs; k++) {
            int32_t v = n->inputs[k];
            CHECK(v < (int32_t)g->n_values, "%s: node %u input out of range", path, i);
            if (v >= 0 && g->values[v].producer >= 0)
                CHECK(g->values[v].producer < (int32_t)i, "%s: node %u '%s' is not in topological order", path, i, n->name);
        }
        for (uint32_t k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0)
                CHECK(g->values[n->outputs[k]].producer == (int32_t)i, "%s: producer of node %u output wrong", path, i);
    }
    for (uint32_t i = 0; i < g->n_values; i++) {
        const ir_value *v = &g->values[i];
        CHECK(ir_graph_find_value(g, v->name) == (int32_t)i, "%s: name index broken for '%s'", path, v->name);
        if (v->flags & IR_VALUE_INITIALIZER)
            CHECK(v->nbytes == ir_value_nbytes(v) || v->dtype >= 17, "%s: initializer '%s' has %zu bytes, expected %zu", path,
                  v->name, v->nbytes, ir_value_nbytes(v));
    }
}

/* Returns true when it imported. */
static bool import_one(const char *path, tally *fails)
{
    ir_model *m = NULL;
    sy_status *st = sy_onnx_import_file(path, &m);
    if (st) {
        char r[256];
        reason_of(st, r, sizeof r);
        tally_add(fails, r, sy_status_get_message(st));
        CHECK(strstr(sy_status_get_message(st), path) != NULL, "error does not name the file: %s", sy_status_get_message(st));
        CHECK(sy_status_get_code(st) != SY_ERR_INTERNAL, "internal error on %s", path);
        sy_status_free(st);
        return false;
    }
    check_model_sane(m, path);
    ir_model_free(m);
    return true;
}

static void read_pbs(const char *dir, int *ok, int *bad, tally *fails)
{
    char **files;
    size_t n = list_dir(dir, &files);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(files[i]);
        if (len < 3 || strcmp(files[i] + len - 3, ".pb") != 0)
            continue;
        char *p = xasprintf("%s/%s", dir, files[i]);
        sy_tensor *t = NULL;
        sy_status *st = sy_tensor_read_file(p, &t);
        if (st) {
            char r[256];
            reason_of(st, r, sizeof r);
            tally_add(fails, r, sy_status_get_message(st));
            CHECK(strstr(sy_status_get_message(st), p) != NULL, "tensor error does not name the file: %s", sy_status_get_message(st));
            sy_status_free(st);
            (*bad)++;
        } else {
            CHECK(t->rank >= 0 && t->rank <= SY_MAX_RANK && t->name && t->data, "%s: bad tensor", p);
            CHECK(((uintptr_t)t->data % 64) == 0, "%s: data not 64-byte aligned", p);
            sy_tensor_free(t);
            (*ok)++;
        }
        free(p);
    }
    free_list(files, n);
}

/* onnx-backend-other: every .onnx and .pb file, wherever it is */
static tally walk_fails, walk_pbfails;
static int walk_ok, walk_bad, walk_pb_ok, walk_pb_bad;

static int walk_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    size_t len = strlen(path);
    if (flag != FTW_F)
        return 0;
    if (len > 5 && strcmp(path + len - 5, ".onnx") == 0) {
        import_one(path, &walk_fails) ? walk_ok++ : walk_bad++;
    } else if (len > 3 && strcmp(path + len - 3, ".pb") == 0) {
        sy_tensor *t = NULL;
        sy_status *st = sy_tensor_read_file(path, &t);
        if (st) {
            char r[256];
            reason_of(st, r, sizeof r);
            tally_add(&walk_pbfails, r, sy_status_get_message(st));
            sy_status_free(st);
            walk_pb_bad++;
        } else {
            sy_tensor_free(t);
            walk_pb_ok++;
        }
    }
    return 0;
}

static void run_corpus(const char *shared, bool all)
{
    tally fails = {0}, pbfails = {0};
    int ok = 0, bad = 0, pb_ok = 0, pb_bad = 0;

    /* real models: every one must import */
    char *mdir = xasprintf("%s/models/onnx", shared);
    char **ms;
    size_t nm = list_dir(mdir, &ms);
    for (size_t i = 0; i < nm; i++) {
        char *p = xasprintf("%s/%s/model.onnx", mdir, ms[i]);
        if (is_file(p)) {
            bool r = import_one(p, &fails);
            CHECK(r, "real model %s does not import", p);
            r ? ok++ : bad++;
            char **sets;
            char *d = xasprintf("%s/%s", mdir, ms[i]);
            size_t ns = list_dir(d, &sets);
            for (size_t k = 0; k < ns; k++)
                if (strncmp(sets[k], "test_data_set_", 14) == 0) {
                    char *sd = xasprintf("%s/%s", d, sets[k]);
                    read_pbs(sd, &pb_ok, &pb_bad, &pbfails);
                    free(sd);
                }
            free_list(sets, ns);
            free(d);
        } else {
            /* one level deeper (quant_ops_onnx2c/<test>/model.onnx) */
            char *d = xasprintf("%s/%s", mdir, ms[i]);
            char **sub;
            size_t ns = list_dir(d, &sub);
            for (size_t k = 0; k < ns; k++) {
                char *q = xasprintf("%s/%s/model.onnx", d, sub[k]);
                if (is_file(q)) {
                    bool r = import_one(q, &fails);
                    CHECK(r, "real model %s does not import", q);
                    r ? ok++ : bad++;
                }
                free(q);
            }
            free_list(sub, ns);
            free(d);
        }
        free(p);
    }
    free_list(ms, nm);
    free(mdir);
    printf("real models: %d imported, %d failed\n", ok, bad);
    tally_print(&fails, "model failure");

    /* node tests: all must decode without crashing; failures are tallied by reason */
    ok = bad = 0;
    char *ndir = xasprintf("%s/testdata/onnx-node", shared);
    char **ts;
    size_t nt = list_dir(ndir, &ts);
    int tried = 0;
    for (size_t i = 0; i < nt; i++) {
        if (!all && i % 5 != 0)
            continue;
        char *p = xasprintf("%s/%s/model.onnx", ndir, ts[i]);
        if (is_file(p)) {
            tried++;
            import_one(p, &fails) ? ok++ : bad++;
            char *sd = xasprintf("%s/%s/test_data_set_0", ndir, ts[i]);
            read_pbs(sd, &pb_ok, &pb_bad, &pbfails);
            free(sd);
        }
        free(p);
    }
    free_list(ts, nt);
    {
        /* sequence-typed inputs are imported with their kind (the runtime feeds them as sequences) */
        char *p = xasprintf("%s/test_identity_sequence/model.onnx", ndir);
        ir_model *m = NULL;
        sy_status *st = is_file(p) ? sy_onnx_import_file(p, &m) : NULL;
        CHECK(!st, "%s: %s", p, sy_status_get_message(st));
        if (m) {
            CHECK(m->graph.n_inputs == 1 && m->graph.values[m->graph.inputs[0]].kind == IR_KIND_SEQUENCE, "sequence input not marked");
            ir_model_free(m);
        }
        sy_status_free(st);
        free(p);
    }
    free(ndir);
    printf("onnx-node models (%s): %d tried, %d imported, %d refused\n", all ? "all" : "every 5th", tried, ok, bad);
    tally_print(&fails, "node-test refusal");
    printf("tensor files: %d read, %d refused\n", pb_ok, pb_bad);
    tally_print(&pbfails, "tensor refusal");
    char *odir = xasprintf("%s/testdata/onnx-backend-other", shared);
    nftw(odir, walk_cb, 16, FTW_PHYS);
    free(odir);
    printf("onnx-backend-other: %d models imported, %d refused; %d tensor files read, %d refused\n", walk_ok, walk_bad,
           walk_pb_ok, walk_pb_bad);
    tally_print(&walk_fails, "backend-other refusal");
    tally_print(&walk_pbfails, "backend-other tensor refusal");
    CHECK(tried == 0 || ok * 10 >= tried * 9, "fewer than 90%% of node tests import (%d of %d)", ok, tried);
}

/* ---- hand-built models --------------------------------------------------------------- */

static char *tmpdir;

static Onnx__ModelProto *mk_model(int64_t ir, int64_t opset)
{
    Onnx__ModelProto *m = malloc(sizeof *m);
    onnx__model_proto__init(m);
    m->has_ir_version = true;
    m->ir_version = ir;
    m->n_opset_import = 1;
    m->opset_import = malloc(sizeof *m->opset_import);
    m->opset_import[0] = malloc(sizeof **m->opset_import);
    onnx__operator_set_id_proto__init(m->opset_import[0]);
    m->opset_import[0]->domain = strdup("");
    m->opset_import[0]->has_version = true;
    m->opset_import[0]->version = opset;
    m->graph = malloc(sizeof *m->graph);
    onnx__graph_proto__init(m->graph);
    m->graph->name = strdup("g");
    return m;
}

#define APPEND(arr, n, item)                                                                                       \
    do {                                                                                                           \
        (arr) = realloc((arr), ((n) + 1) * sizeof *(arr));                                                         \
        (arr)[(n)++] = (item);                                                                                     \
    } while (0)

static void split_names(const char *csv, char ***arr, size_t *n)
{
    if (!csv)
        return;
    char *dup = strdup(csv), *save = NULL;
    /* "," separated; an empty string stays as an omitted optional input */
    for (char *p = dup;; p = NULL) {
        char *tok = strtok_r(p, ",", &save);
        if (!tok)
            break;
        APPEND(*arr, *n, strdup(strcmp(tok, "_") == 0 ? "" : tok));
    }
    free(dup);
}

static Onnx__NodeProto *add_node(Onnx__GraphProto *g, const char *op, const char *ins, const char *outs, const char *name)
{
    Onnx__NodeProto *n = malloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = strdup(op);
    if (name)
        n->name = strdup(name);
    split_names(ins, &n->input, &n->n_input);
    split_names(outs, &n->output, &n->n_output);
    APPEND(g->node, g->n_node, n);
    return n;
}

static Onnx__ValueInfoProto *mk_vi(const char *name, int32_t et, int rank, const int64_t *dims)
{
    Onnx__ValueInfoProto *v = malloc(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = strdup(name);
    v->type = malloc(sizeof *v->type);
    onnx__type_proto__init(v->type);
    v->type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    v->type->tensor_type = malloc(sizeof *v->type->tensor_type);
    onnx__type_proto__tensor__init(v->type->tensor_type);
    v->type->tensor_type->has_elem_type = true;
    v->type->tensor_type->elem_type = et;
    if (rank >= 0) {
        Onnx__TensorShapeProto *sh = malloc(sizeof *sh);
        onnx__tensor_shape_proto__init(sh);
        for (int i = 0; i < rank; i++) {
            Onnx__TensorShapeProto__Dimension *d = malloc(sizeof *d);
            onnx__tensor_shape_proto__dimension__init(d);
            if (dims[i] == -1) {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                d->dim_param = strdup("N");
            } else {
                d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                d->dim_value = dims[i];
            }
            APPEND(sh->dim, sh->n_dim, d);
        }
        v->type->tensor_type->shape = sh;
    }
    return v;
}

static void add_input(Onnx__GraphProto *g, const char *name, int rank, const int64_t *dims)
{
    Onnx__ValueInfoProto *v = mk_vi(name, 1, rank, dims);
    APPEND(g->input, g->n_input, v);
}

static void add_output(Onnx__GraphProto *g, const char *name)
{
    Onnx__ValueInfoProto *v = mk_vi(name, 1, -1, NULL);
    APPEND(g->output, g->n_output, v);
}

static Onnx__TensorProto *add_init(Onnx__GraphProto *g, const char *name, int rank, const int64_t *dims, size_t nfloats)
{
    Onnx__TensorProto *t = malloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = strdup(name);
    t->has_data_type = true;
    t->data_type = 1;
    t->n_dims = (size_t)rank;
    t->dims = malloc((rank ? rank : 1) * sizeof *t->dims);
    memcpy(t->dims, dims, rank * sizeof *t->dims);
    t->has_raw_data = true;
    t->raw_data.len = nfloats * 4;
    t->raw_data.data = malloc(nfloats * 4 + 1);
    for (size_t i = 0; i < nfloats; i++) {
        float f = (float)i;
        memcpy(t->raw_data.data + 4 * i, &f, 4);
    }
    APPEND(g->initializer, g->n_initializer, t);
    return t;
}

static void set_external(Onnx__TensorProto *t, const char *loc, const char *offset)
{
    free(t->raw_data.data);
    t->raw_data.data = NULL;
    t->raw_data.len = 0;
    t->has_raw_data = false;
    t->has_data_location = true;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    const char *keys[2] = {"location", "offset"}, *vals[2] = {loc, offset};
    for (int i = 0; i < 2; i++) {
        if (!vals[i])
            continue;
        Onnx__StringStringEntryProto *e = malloc(sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = strdup(keys[i]);
        e->value = strdup(vals[i]);
        APPEND(t->external_data, t->n_external_data, e);
    }
}

static char *write_model(Onnx__ModelProto *m, const char *file)
{
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(len + 1);
    onnx__model_proto__pack(m, buf);
    char *p = xasprintf("%s/%s", tmpdir, file);
    FILE *f = fopen(p, "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    free(buf);
    onnx__model_proto__free_unpacked(m, NULL);
    return p;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (n)
        fwrite(data, 1, n, f);
    fclose(f);
}

/* Import `m` from a file; expect failure with `code` and `needle` in the message
 * (code SY_OK: expect success). The model is returned on success when `keep`. */
static ir_model *expect(Onnx__ModelProto *m, const char *label, sy_status_code code, const char *needle, bool keep)
{
    char *file = xasprintf("%s.onnx", label);
    char *p = write_model(m, file);
    ir_model *out = NULL;
    sy_status *st = sy_onnx_import_file(p, &out);
    if (code == SY_OK) {
        CHECK(!st, "%s: expected success, got %s", label, st ? sy_status_get_message(st) : "");
    } else {
        CHECK(st && sy_status_get_code(st) == code, "%s: expected %s, got %s: %s", label, sy_status_code_name(code),
              st ? sy_status_code_name(sy_status_get_code(st)) : "success", st ? sy_status_get_message(st) : "");
        if (st) {
            CHECK(strstr(sy_status_get_message(st), needle) != NULL, "%s: message lacks '%s': %s", label, needle,
                  sy_status_get_message(st));
            CHECK(strstr(sy_status_get_message(st), p) != NULL, "%s: message lacks the path: %s", label, sy_status_get_message(st));
            printf("  refused as expected (%s): %s\n", label, sy_status_get_message(st));
        }
    }
    sy_status_free(st);
    free(file);
    free(p);
    if (out && !keep) {
        ir_model_free(out);
        out = NULL;
    }
    return out;
}

/* The main graph's nodes and initializers are decoded one at a time from the
 * wire (onnx_import.c, wire_split_model). Protobuf merges the occurrences of
 * the ModelProto's graph field (7): a second graph field appended to a
 * packed model adds its node and initializer after the first's, and the
 * import must see them so, in file order. A node that does not decode is
 * refused naming it. */
static void test_split_graph_fields(void)
{
    const int64_t d23[2] = {2, 3};
    Onnx__ModelProto *m = mk_model(8, 13);
    add_input(m->graph, "x", 2, d23);
    add_init(m->graph, "w", 2, d23, 6);
    add_node(m->graph, "Add", "x,w", "t", "first");
    add_output(m->graph, "y");
    Onnx__GraphProto g2;
    onnx__graph_proto__init(&g2);
    add_node(&g2, "Relu", "t", "y", "second");
    add_init(&g2, "unused", 2, d23, 6);
    size_t l1 = onnx__model_proto__get_packed_size(m), l2 = onnx__graph_proto__get_packed_size(&g2);
    uint8_t *buf = malloc(l1 + 16 + l2);
    onnx__model_proto__pack(m, buf);
    size_t n = l1;
    buf[n++] = 7 << 3 | 2; /* ModelProto.graph, length-delimited */
    for (size_t v = l2; ; v >>= 7) {
        buf[n++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
        if (!(v >> 7))
            break;
    }
    onnx__graph_proto__pack(&g2, buf + n);
    n += l2;
    onnx__model_proto__free_unpacked(m, NULL);
    for (size_t i = 0; i < g2.n_node; i++)
        onnx__node_proto__free_unpacked(g2.node[i], NULL);
    free(g2.node);
    for (size_t i = 0; i < g2.n_initializer; i++)
        onnx__tensor_proto__free_unpacked(g2.initializer[i], NULL);
    free(g2.initializer);

    ir_model *im = NULL;
    sy_status *st = sy_onnx_import_buffer(buf, n, "two_graph_fields", NULL, &im);
    CHECK(!st, "two graph fields: %s", st ? sy_status_get_message(st) : "");
    if (im) {
        const ir_graph *g = &im->graph;
        CHECK(g->n_nodes == 2 && !strcmp(g->nodes[0].name, "first") && !strcmp(g->nodes[1].name, "second"),
              "two graph fields: %u nodes, first '%s'", g->n_nodes, g->n_nodes ? g->nodes[0].name : "-");
        int32_t w = ir_graph_find_value(g, "w"), u = ir_graph_find_value(g, "unused");
        CHECK(w >= 0 && u >= 0 && g->values[u].nbytes == 24 && ((const float *)g->values[u].data)[5] == 5.0f &&
                  g->values[w].rank == 2 && g->values[w].dims[1] == 3,
              "two graph fields: the second field's initializer is missing or wrong");
        ir_model_free(im);
    }
    sy_status_free(st);

    /* a third graph field whose node is not a NodeProto (wire type 7) */
    static const uint8_t bad[] = {7 << 3 | 2, 3, 1 << 3 | 2, 1, 0x0f};
    memcpy(buf + n, bad, sizeof bad);
    im = NULL;
    st = sy_onnx_import_buffer(buf, n + sizeof bad, "bad_node", NULL, &im);
    CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL &&
              strstr(sy_status_get_message(st), "bad_node: not a valid ONNX ModelProto (truncated or corrupt): the graph's node #2 does not decode"),
          "bad node: %s", st ? sy_status_get_message(st) : "accepted");
    if (st)
        printf("  refused as expected (bad_node): %s\n", sy_status_get_message(st));
    sy_status_free(st);
    ir_model_free(im);
    free(buf);
}

static void test_built_models(void)
{
    const int64_t d23[2] = {2, 3}, dN3[2] = {-1, 3};

    /* a valid graph written out of order: imported and reordered */
    Onnx__ModelProto *m = mk_model(8, 13);
    add_input(m->graph, "x", 2, dN3);
    add_init(m->graph, "w", 2, d23, 6);
    add_node(m->graph, "Relu", "t", "y", NULL);
    add_node(m->graph, "Add", "x,w", "t", "add");
    add_output(m->graph, "y");
    ir_model *im = expect(m, "unsorted", SY_OK, NULL, true);
    if (im) {
        const ir_graph *g = &im->graph;
        CHECK(g->n_nodes == 2 && strcmp(g->nodes[0].op, "Add") == 0 && strcmp(g->nodes[1].name, "Relu_0") == 0,
              "unsorted: not reordered (first op %s)", g->n_nodes ? g->nodes[0].op : "-");
        CHECK(g->n_inputs == 1 && g->n_outputs == 1, "unsorted: io counts %u %u", g->n_inputs, g->n_outputs);
        int32_t x = ir_graph_find_value(g, "x"), w = ir_graph_find_value(g, "w");
        CHECK(x >= 0 && g->values[x].rank == 2 && g->values[x].dims[0] == -1 && g->values[x].dim_params[0] &&
                  strcmp(g->values[x].dim_params[0], "N") == 0,
              "unsorted: symbolic dim lost");
        CHECK(w >= 0 && g->values[w].nbytes == 24 && ((const float *)g->values[w].data)[5] == 5.0f, "unsorted: weight data wrong");
        CHECK(g->nodes[0].opset == 13, "unsorted: opset %d", g->nodes[0].opset);
        ir_model_free(im);
    }

    /* IR 3: initializer also listed as input is not a graph input */
    m = mk_model(3, 6);
    add_input(m->graph, "x", 2, d23);
    add_input(m->graph, "w", 2, d23);
    add_init(m->graph, "w", 2, d23, 6);
    add_node(m->graph, "Add", "x,w", "y", NULL);
    add_output(m->graph, "y");
    im = expect(m, "ir3", SY_OK, NULL, true);
    if (im) {
        CHECK(im->graph.n_inputs == 1, "ir3: initializer counted as input (%u inputs)", im->graph.n_inputs);
        ir_model_free(im);
    }

    /* x [2, 3] -> nodes -> out, each graph refused as invalid */
    static const struct {
        const char *label;
        struct {
            const char *op, *ins, *outs, *name;
        } nodes[2];
        const char *out, *needle;
    } bad_graphs[] = {
        {"dangling", {{"Add", "x,nowhere", "y", "adder"}}, "y", "'nowhere' is never produced"},
        {"twice", {{"Relu", "x", "y", "a"}, {"Relu", "x", "y", "b"}}, "y", "produced twice"},
        {"cycle", {{"Add", "x,b", "a", "n1"}, {"Relu", "a", "b", "n2"}}, "b", "cycle"},
    };
    for (size_t i = 0; i < sizeof bad_graphs / sizeof bad_graphs[0]; i++) {
        m = mk_model(8, 13);
        add_input(m->graph, "x", 2, d23);
        for (int k = 0; k < 2 && bad_graphs[i].nodes[k].op; k++)
            add_node(m->graph, bad_graphs[i].nodes[k].op, bad_graphs[i].nodes[k].ins, bad_graphs[i].nodes[k].outs,
                     bad_graphs[i].nodes[k].name);
        add_output(m->graph, bad_graphs[i].out);
        expect(m, bad_graphs[i].label, SY_ERR_INVALID_MODEL, bad_graphs[i].needle, false);
    }

    const int64_t neg[2] = {2, -5};
    m = mk_model(8, 13);
    add_input(m->graph, "x", 2, neg);
    add_node(m->graph, "Relu", "x", "y", NULL);
    add_output(m->graph, "y");
    expect(m, "negdim", SY_ERR_INVALID_MODEL, "value 'x' has negative dimension", false);

    const int64_t r9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    m = mk_model(8, 13);
    add_input(m->graph, "big", 9, r9);
    add_node(m->graph, "Relu", "big", "y", NULL);
    add_output(m->graph, "y");
    expect(m, "rank9", SY_ERR_UNSUPPORTED, "value 'big' has rank 9", false);

    m = mk_model(8, 13);
    add_input(m->graph, "x", 2, d23);
    add_init(m->graph, "w", 2, d23, 5);
    add_node(m->graph, "Add", "x,w", "y", NULL);
    add_output(m->graph, "y");
    expect(m, "short_init", SY_ERR_INVALID_MODEL, "initializer 'w': raw_data has 20 bytes, but dims [2, 3] of FLOAT need 24", false);

    m = mk_model(8, 13);
    add_input(m->graph, "x", 2, d23);
    add_init(m->graph, "w", 2, d23, 6)->data_type = 99;
    add_node(m->graph, "Add", "x,w", "y", NULL);
    add_output(m->graph, "y");
    expect(m, "bad_dtype", SY_ERR_INVALID_MODEL, "unknown data_type 99", false);

    m = mk_model(8, 13);
    add_input(m->graph, "x", 2, d23);
    add_node(m->graph, "Foo", "x", "y", "custom")->domain = strdup("com.example");
    add_output(m->graph, "y");
    expect(m, "no_opset", SY_ERR_INVALID_MODEL, "domain 'com.example'", false);

    m = mk_model(99, 13);
    expect(m, "ir99", SY_ERR_UNSUPPORTED, "IR version 99", false);

    m = mk_model(8, 13);
    onnx__graph_proto__free_unpacked(m->graph, NULL);
    m->graph = NULL;
    expect(m, "nograph", SY_ERR_INVALID_MODEL, "no graph", false);

    m = mk_model(8, 13);
    add_output(m->graph, "ghost");
    expect(m, "ghost_output", SY_ERR_INVALID_MODEL, "'ghost' is never produced", false);

    /* external data: valid, escaping, absolute, out of range, via symlink */
    float ext[6] = {1, 2, 3, 4, 5, 6};
    char *bin = xasprintf("%s/w.bin", tmpdir);
    write_bytes(bin, ext, sizeof ext);
    const int64_t d2[1] = {2};
    struct {
        const char *label, *loc, *offset;
        sy_status_code code;
        const char *needle;
    } cases[] = {
        {"ext_ok", "w.bin", "16", SY_OK, NULL},
        {"ext_dotdot", "../w.bin", NULL, SY_ERR_INVALID_MODEL, "escapes the model's directory"},
        {"ext_dotdot2", "sub/../../etc/passwd", NULL, SY_ERR_INVALID_MODEL, "escapes the model's directory"},
        {"ext_abs", "/etc/passwd", NULL, SY_ERR_INVALID_MODEL, "absolute path"},
        {"ext_range", "w.bin", "20", SY_ERR_INVALID_MODEL, "outside the file"},
        {"ext_badoff", "w.bin", "-4", SY_ERR_INVALID_MODEL, "not a non-negative integer"},
        {"ext_missing", "nope.bin", NULL, SY_ERR_NOT_FOUND, "nope.bin"},
        {"ext_symlink", "link.bin", NULL, SY_ERR_INVALID_MODEL, "outside the model's directory"},
        /* opened without O_NONBLOCK this waited for a writer forever */
        {"ext_fifo", "fifo.bin", NULL, SY_ERR_IO, "not a regular file (a FIFO)"},
    };
    char *fifo = xasprintf("%s/fifo.bin", tmpdir);
    if (mkfifo(fifo, 0600) != 0)
        perror("mkfifo");
    alarm(60); /* a hang fails here */
    char *link = xasprintf("%s/link.bin", tmpdir);
    if (symlink("/etc/hostname", link) != 0)
        perror("symlink");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m = mk_model(8, 13);
        add_input(m->graph, "x", 1, d2);
        set_external(add_init(m->graph, "w", 1, d2, 2), cases[i].loc, cases[i].offset);
        add_node(m->graph, "Add", "x,w", "y", NULL);
        add_output(m->graph, "y");
        im = expect(m, cases[i].label, cases[i].code, cases[i].needle, true);
        if (im) {
            int32_t w = ir_graph_find_value(&im->graph, "w");
            CHECK(w >= 0 && im->graph.values[w].nbytes == 8 && ((const float *)im->graph.values[w].data)[1] == 6.0f,
                  "ext_ok: wrong external data");
            ir_model_free(im);
        }
    }
    alarm(0);
    unlink(fifo);
    free(fifo);
    unlink(link);
    free(link);
    free(bin);

    /* If with a then-branch that reads an outer value produced after the If in the file */
    m = mk_model(8, 13);
    add_input(m->graph, "c", 0, NULL);
    add_input(m->graph, "x", 2, d23);
    Onnx__NodeProto *ifn = add_node(m->graph, "If", "c", "y", "if");
    add_node(m->graph, "Relu", "x", "r", "relu");
    add_output(m->graph, "y");
    Onnx__GraphProto *br[2];
    for (int b = 0; b < 2; b++) {
        br[b] = malloc(sizeof *br[b]);
        onnx__graph_proto__init(br[b]);
        br[b]->name = strdup(b ? "else" : "then");
        add_node(br[b], "Identity", "r", b ? "eo" : "to", NULL);
        add_output(br[b], b ? "eo" : "to");
        Onnx__AttributeProto *a = malloc(sizeof *a);
        onnx__attribute_proto__init(a);
        a->name = strdup(b ? "else_branch" : "then_branch");
        a->has_type = true;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
        a->g = br[b];
        APPEND(ifn->attribute, ifn->n_attribute, a);
    }
    im = expect(m, "if_outer", SY_OK, NULL, true);
    if (im) {
        const ir_graph *g = &im->graph;
        CHECK(g->n_nodes == 2 && strcmp(g->nodes[0].op, "Relu") == 0, "if_outer: capture did not order Relu before If");
        const ir_attr *a = g->n_nodes == 2 ? ir_node_attr(&g->nodes[1], "then_branch") : NULL;
        CHECK(a && a->g, "if_outer: no then_branch graph");
        if (a && a->g) {
            int32_t r = ir_graph_find_value(a->g, "r");
            CHECK(r >= 0 && (a->g->values[r].flags & IR_VALUE_OUTER_SCOPE), "if_outer: 'r' not marked outer-scope");
        }
        ir_model_free(im);
    }
}

static void test_corrupt(const char *shared)
{
    char *p = xasprintf("%s/empty.onnx", tmpdir);
    write_bytes(p, "", 0);
    ir_model *m = NULL;
    sy_status *st = sy_onnx_import_file(p, &m);
    CHECK(st && strstr(sy_status_get_message(st), "empty file"), "empty: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    free(p);

    uint8_t rnd[4096];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof rnd; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        rnd[i] = (uint8_t)s;
    }
    p = xasprintf("%s/random.onnx", tmpdir);
    write_bytes(p, rnd, sizeof rnd);
    st = sy_onnx_import_file(p, &m);
    CHECK(st != NULL, "random bytes accepted as a model");
    if (st)
        printf("  refused as expected (random): %s\n", sy_status_get_message(st));
    sy_status_free(st);
    free(p);

    st = sy_onnx_import_file("/nonexistent/model.onnx", &m);
    CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_FOUND, "missing file not NOT_FOUND");
    sy_status_free(st);

    /* truncations and byte flips of a real model: never a crash; half a model must fail */
    char *src = xasprintf("%s/models/onnx/mnist-8/model.onnx", shared);
    FILE *f = fopen(src, "rb");
    if (!f) {
        printf("  (no mnist-8, truncation tests skipped)\n");
        free(src);
        return;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    fclose(f);
    int refused = 0, accepted = 0;
    for (long cut = 1; cut < n; cut += n / 97 + 1) {
        st = sy_onnx_import_buffer(buf, (size_t)cut, "trunc", NULL, &m);
        if (st) {
            refused++;
            CHECK(strstr(sy_status_get_message(st), "trunc") != NULL, "truncation error lacks name");
        } else {
            accepted++;
            ir_model_free(m);
        }
        if (cut == 1 + (n / 97 + 1) * 48 && st)
            printf("  refused as expected (truncated): %s\n", sy_status_get_message(st));
        sy_status_free(st);
    }
    st = sy_onnx_import_buffer(buf, (size_t)n / 2, "half.onnx", NULL, &m);
    CHECK(st != NULL, "half of mnist-8 accepted");
    if (st)
        printf("  refused as expected (half file): %s\n", sy_status_get_message(st));
    sy_status_free(st);
    int flips_ok = 0;
    for (int k = 0; k < 300; k++) {
        uint8_t *mut = malloc((size_t)n);
        memcpy(mut, buf, (size_t)n);
        for (int j = 0; j < 4; j++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            mut[s % (uint64_t)n] ^= (uint8_t)(1u << (s >> 60 & 7));
        }
        st = sy_onnx_import_buffer(mut, (size_t)n, "mutant", NULL, &m);
        if (!st) {
            flips_ok++;
            ir_model_free(m);
        }
        sy_status_free(st);
        free(mut);
    }
    printf("corruption: %d truncations refused, %d accepted (cut at a field boundary); %d of 300 bit-flipped copies still import\n",
           refused, accepted, flips_ok);
    free(buf);
    free(src);
}

static void test_tensor_files(void)
{
    float vals[6] = {1.5f, -2, 3, 4, 5, 6};
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {2, 3},
                   .data = vals, .nbytes = sizeof vals, .name = "my_tensor"};
    const char *exts[2] = {"npy", "pb"};
    for (int e = 0; e < 2; e++) {
        char *p = xasprintf("%s/t.%s", tmpdir, exts[e]);
        sy_status *st = sy_tensor_write_file(p, &t);
        CHECK(!st, "write %s: %s", p, sy_status_get_message(st));
        sy_status_free(st);
        sy_tensor *r = NULL;
        st = sy_tensor_read_file(p, &r);
        CHECK(!st, "read %s: %s", p, sy_status_get_message(st));
        if (r) {
            CHECK(r->dtype == SY_DT_FLOAT32 && r->rank == 2 && r->dims[0] == 2 && r->dims[1] == 3 && r->nbytes == 24 &&
                      memcmp(r->data, vals, 24) == 0,
                  "%s: round trip differs", p);
            CHECK(e == 0 || strcmp(r->name, "my_tensor") == 0, "%s: name lost", p);
            sy_tensor_free(r);
        }
        sy_status_free(st);
        free(p);
    }
    /* scalar .npy, fortran order, truncated .npy, bad size on write */
    sy_tensor sc = {.struct_size = sizeof sc, .dtype = SY_DT_INT64, .rank = 0, .data = &(int64_t){7}, .nbytes = 8};
    char *p = xasprintf("%s/s.npy", tmpdir);
    sy_status *st = sy_tensor_write_file(p, &sc);
    CHECK(!st, "scalar npy write");
    sy_status_free(st);
    sy_tensor *r = NULL;
    st = sy_tensor_read_file(p, &r);
    CHECK(!st && r->rank == 0 && *(int64_t *)r->data == 7, "scalar npy read");
    sy_status_free(st);
    sy_tensor_free(r);
    free(p);

    const char hdr[] = "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }";
    uint8_t fb[128] = "\x93NUMPY\x01\x00";
    size_t hl = sizeof hdr - 1;
    fb[8] = (uint8_t)hl;
    memcpy(fb + 10, hdr, hl);
    p = xasprintf("%s/fortran.npy", tmpdir);
    write_bytes(p, fb, 10 + hl);
    st = sy_tensor_read_file(p, &r);
    CHECK(st && strstr(sy_status_get_message(st), "Fortran"), "fortran order not refused");
    if (st)
        printf("  refused as expected (fortran): %s\n", sy_status_get_message(st));
    sy_status_free(st);
    free(p);

    p = xasprintf("%s/t.npy", tmpdir);
    truncate(p, 100);
    st = sy_tensor_read_file(p, &r);
    CHECK(st && strstr(sy_status_get_message(st), "truncated"), "truncated npy not refused");
    if (st)
        printf("  refused as expected (truncated npy): %s\n", sy_status_get_message(st));
    sy_status_free(st);
    free(p);

    p = xasprintf("%s/bad.pb", tmpdir);
    t.nbytes = 20;
    st = sy_tensor_write_file(p, &t);
    CHECK(st && access(p, F_OK) != 0, "inconsistent tensor written");
    sy_status_free(st);
    free(p);
}

int main(int argc, char **argv)
{
    struct stat sb;
    if (argc < 2 || stat(argv[1], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        printf("SKIP: shared folder '%s' not found (usage: test_onnx_import <shared-dir> [all])\n", argc > 1 ? argv[1] : "");
        return 77;
    }
    char tmpl[] = "/tmp/sy_onnx_test.XXXXXX";
    tmpdir = mkdtemp(tmpl);
    if (!tmpdir) {
        perror("mkdtemp");
        return 1;
    }
    test_built_models();
    test_split_graph_fields();
    test_corrupt(argv[1]);
    test_tensor_files();
    run_corpus(argv[1], argc > 2 && strcmp(argv[2], "all") == 0);
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    free(cmd);
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
