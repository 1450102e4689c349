/*
 * switchyard quantize MODEL --calib DIR [--scheme NAME] [--per-channel]
 *                     [--method minmax|percentile] [--percentile P] -o OUT.onnx
 *
 * Post-training static quantization of a float ONNX model into a QDQ model
 * (QuantizeLinear/DequantizeLinear around every quantizable op) that any
 * ONNX runtime loads, and that Switchyard's QDQ pass folds into integer
 * kernels.
 *
 *   1. the model is read with protobuf-c; Conv + BatchNormalization and
 *      Conv + Add(constant per-channel) are folded into the Conv's weights
 *      and bias; the opset is raised to 13 (per-axis DequantizeLinear),
 *      converting Slice (< 10), Squeeze/Unsqueeze/Softmax (< 13);
 *   2. calibration: every intermediate value becomes a graph output of a
 *      copy of the model, which runs over the calibration inputs; the
 *      scheme's observer (through its recipe extension, see sy_sdk.h)
 *      sees every float value; constants computed by nodes are captured;
 *   3. weights are quantized by the weight scheme (per output channel with
 *      --per-channel), biases to int32 with scale s_x * s_w, constant
 *      operands of Add/Sub/Mul/Concat like activations; activations get a
 *      QuantizeLinear -> DequantizeLinear pair; pass-through ops (Reshape,
 *      Transpose, MaxPool, ...) share their input's parameters; a Relu/Clip
 *      right after Conv/Gemm/MatMul/Add gets no pair in between (it folds);
 *   4. the model is written through a temporary file and a rename;
 *   5. the written model runs over the calibration set and is compared with
 *      fp32: max abs error, relative error, argmax agreement.
 */
#include "cli.h"
#include "onnx.pb-c.h"
/* sy_sdk.h for the recipe types (sy_quant_recipe, sy_calib_method) */
#include <switchyard/sy_fixedpoint.h>
#include <switchyard/sy_sdk.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void seterr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* ======================================================================== */
/* a pool for everything the rewritten model owns                          */
/* ======================================================================== */

typedef struct pblock {
    struct pblock *next;
    max_align_t align_[1];
} pblock;

typedef struct qpool {
    pblock *head;
    bool oom;
} qpool;

static void *pz(qpool *p, size_t n)
{
    pblock *b = calloc(1, sizeof(pblock) + (n ? n : 1));
    if (!b) {
        p->oom = true;
        return NULL;
    }
    b->next = p->head;
    p->head = b;
    return b->align_;
}
static char *pstr(qpool *p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = pz(p, n);
    if (d)
        memcpy(d, s, n);
    return d;
}
static char *pfmt(qpool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *pfmt(qpool *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return pstr(p, buf);
}
static void pool_free(qpool *p)
{
    while (p->head) {
        pblock *n = p->head->next;
        free(p->head);
        p->head = n;
    }
}

/* ======================================================================== */
/* working graph                                                            */
/* ======================================================================== */

typedef struct wnode {
    char *name, *op, *domain;
    char **in, **out;
    size_t nin, nout;
    Onnx__AttributeProto **attrs;
    size_t nattr;
    bool dead;
} wnode;

typedef struct wgraph {
    qpool pl;
    Onnx__ModelProto *model; /* the unpacked input (borrowed from) */
    wnode *nodes;
    size_t n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits, cap_inits;
    int64_t opset;
    int name_seq;
} wgraph;

static bool grow(wgraph *g, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *n = pz(&g->pl, nc * elem);
    if (!n)
        return false;
    if (*arr)
        memcpy(n, *arr, *cap * elem);
    *arr = n;
    *cap = nc;
    return true;
}

static wnode *add_node(wgraph *g, const char *op, const char *name, size_t nin, size_t nout)
{
    if (!grow(g, (void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return NULL;
    wnode *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = pstr(&g->pl, op);
    n->domain = pstr(&g->pl, "");
    n->name = pstr(&g->pl, name);
    n->nin = nin;
    n->nout = nout;
    n->in = pz(&g->pl, (nin ? nin : 1) * sizeof(char *));
    n->out = pz(&g->pl, (nout ? nout : 1) * sizeof(char *));
    return n;
}

static void add_init(wgraph *g, Onnx__TensorProto *t)
{
    if (t && grow(g, (void **)&g->inits, &g->cap_inits, g->n_inits + 1, sizeof *g->inits))
        g->inits[g->n_inits++] = t;
}

static Onnx__TensorProto *find_init(const wgraph *g, const char *name)
{
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] && !strcmp(g->inits[i]->name, name))
            return g->inits[i];
    return NULL;
}

static const Onnx__AttributeProto *wattr(const wnode *n, const char *name)
{
    for (size_t i = 0; i < n->nattr; i++)
        if (!strcmp(n->attrs[i]->name, name))
            return n->attrs[i];
    return NULL;
}
static int64_t wattr_i(const wnode *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = wattr(n, name);
    return a && a->has_i ? a->i : def;
}
static float wattr_f(const wnode *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = wattr(n, name);
    return a && a->has_f ? a->f : def;
}

static Onnx__AttributeProto *mk_attr_i(wgraph *g, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = pz(&g->pl, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = pstr(&g->pl, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    return a;
}

static void node_set_attrs(wgraph *g, wnode *n, Onnx__AttributeProto **a, size_t k)
{
    n->attrs = pz(&g->pl, (k ? k : 1) * sizeof *a);
    if (n->attrs && k)
        memcpy(n->attrs, a, k * sizeof *a);
    n->nattr = n->attrs ? k : 0;
}

/* producer node index of a value, -1 none */
static long producer_of(const wgraph *g, const char *v)
{
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (size_t k = 0; k < g->nodes[i].nout; k++)
                if (g->nodes[i].out[k] && !strcmp(g->nodes[i].out[k], v))
                    return (long)i;
    return -1;
}
static size_t count_uses(const wgraph *g, const char *v, long *last)
{
    size_t c = 0;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead)
            for (size_t k = 0; k < g->nodes[i].nin; k++)
                if (g->nodes[i].in[k] && !strcmp(g->nodes[i].in[k], v)) {
                    c++;
                    if (last)
                        *last = (long)i;
                }
    return c;
}
static bool is_graph_output(const wgraph *g, const char *v)
{
    const Onnx__GraphProto *gp = g->model->graph;
    for (size_t i = 0; i < gp->n_output; i++)
        if (!strcmp(gp->output[i]->name, v))
            return true;
    return false;
}

/* ---- tensor data ---------------------------------------------------------- */

static int64_t tp_numel(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t i = 0; i < t->n_dims; i++)
        n *= t->dims[i];
    return n;
}

/* float32 contents of an initializer (a pool copy), NULL if not float32 */
static float *tp_floats(wgraph *g, const Onnx__TensorProto *t)
{
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
        return NULL;
    int64_t n = tp_numel(t);
    float *v = pz(&g->pl, (size_t)(n ? n : 1) * sizeof *v);
    if (!v)
        return NULL;
    if (t->has_raw_data && t->raw_data.len == (size_t)n * 4)
        memcpy(v, t->raw_data.data, (size_t)n * 4);
    else if (t->n_float_data == (size_t)n)
        memcpy(v, t->float_data, (size_t)n * 4);
    else
        return NULL;
    return v;
}

static Onnx__TensorProto *mk_tensor(wgraph *g, const char *name, int dt, const int64_t *dims, size_t nd,
                                    const void *data, size_t bytes)
{
    Onnx__TensorProto *t = pz(&g->pl, sizeof *t);
    if (!t)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = pstr(&g->pl, name);
    t->n_dims = nd;
    t->dims = pz(&g->pl, (nd ? nd : 1) * sizeof *t->dims);
    if (t->dims && nd)
        memcpy(t->dims, dims, nd * sizeof *dims);
    t->has_data_type = 1;
    t->data_type = dt;
    t->has_raw_data = 1;
    t->raw_data.len = bytes;
    t->raw_data.data = pz(&g->pl, bytes ? bytes : 1);
    if (t->raw_data.data && bytes)
        memcpy(t->raw_data.data, data, bytes);
    return t;
}

static char *uniq(wgraph *g, const char *base, const char *suffix)
{
    return pfmt(&g->pl, "%s__%s%d", base, suffix, g->name_seq++);
}

/* ======================================================================== */
/* load, opset upgrade, pre-quantization folds                              */
/* ======================================================================== */

static bool load_graph(wgraph *g)
{
    Onnx__GraphProto *gp = g->model->graph;
    for (size_t i = 0; i < gp->n_initializer; i++)
        add_init(g, gp->initializer[i]);
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        wnode *n = add_node(g, np->op_type, np->name && *np->name ? np->name : "", np->n_input, np->n_output);
        if (!n)
            return false;
        n->domain = pstr(&g->pl, np->domain ? np->domain : "");
        if (!n->name[0])
            n->name = pfmt(&g->pl, "%s_%zu", np->op_type, i);
        for (size_t k = 0; k < np->n_input; k++)
            n->in[k] = pstr(&g->pl, np->input[k]);
        for (size_t k = 0; k < np->n_output; k++)
            n->out[k] = pstr(&g->pl, np->output[k]);
        node_set_attrs(g, n, np->attribute, np->n_attribute);
    }
    g->opset = 1;
    for (size_t i = 0; i < g->model->n_opset_import; i++) {
        const char *d = g->model->opset_import[i]->domain;
        if (!d || !*d || !strcmp(d, "ai.onnx"))
            g->opset = g->model->opset_import[i]->version;
    }
    return !g->pl.oom;
}

/* attribute ints -> a new int64 initializer appended as input k */
static bool attr_to_input(wgraph *g, wnode *n, const char *attr, size_t k)
{
    const Onnx__AttributeProto *a = wattr(n, attr);
    if (n->nin < k + 1) {
        char **in = pz(&g->pl, (k + 1) * sizeof *in);
        if (!in)
            return false;
        for (size_t i = 0; i < k + 1; i++)
            in[i] = i < n->nin ? n->in[i] : pstr(&g->pl, "");
        n->in = in;
        n->nin = k + 1;
    }
    if (!a)
        return true;
    int64_t d = (int64_t)a->n_ints;
    char *name = uniq(g, n->name, attr);
    Onnx__TensorProto *t = mk_tensor(g, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &d, 1, a->ints, a->n_ints * 8);
    add_init(g, t);
    n->in[k] = name;
    return t != NULL;
}

static void drop_attr(wgraph *g, wnode *n, const char *name)
{
    Onnx__AttributeProto *keep[64];
    size_t k = 0;
    for (size_t i = 0; i < n->nattr && k < 64; i++)
        if (strcmp(n->attrs[i]->name, name))
            keep[k++] = n->attrs[i];
    node_set_attrs(g, n, keep, k);
}

/* Raise the default-domain opset to 13: convert the ops whose form changed. */
static int upgrade_opset(wgraph *g, const int32_t *ranks, char *err, size_t elen)
{
    if (g->opset >= 13)
        return 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        wnode *n = &g->nodes[i];
        if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
            continue;
        const char *op = n->op;
        if (!strcmp(op, "Slice") && g->opset < 10) {
            if (!attr_to_input(g, n, "starts", 1) || !attr_to_input(g, n, "ends", 2) || !attr_to_input(g, n, "axes", 3))
                return -1;
            drop_attr(g, n, "starts");
            drop_attr(g, n, "ends");
            drop_attr(g, n, "axes");
        } else if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
            if (!attr_to_input(g, n, "axes", 1))
                return -1;
            drop_attr(g, n, "axes");
        } else if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax") || !strcmp(op, "Hardmax")) {
            int64_t axis = wattr_i(n, "axis", 1);
            int32_t r = ranks ? ranks[i] : -1;
            if (!(axis == -1 || (r > 0 && axis == r - 1))) {
                seterr(err, elen, "node '%s' (%s, axis %lld): cannot raise the opset to 13 unless the axis is the last",
                         n->name, op, (long long)axis);
                return 1;
            }
        } else if ((!strcmp(op, "Clip") || !strcmp(op, "Pad")) && g->opset < 11) {
            seterr(err, elen, "node '%s' (%s): raising opset %lld to 13 is not supported for this op", n->name, op,
                     (long long)g->opset);
            return 1;
        } else if (!strcmp(op, "Upsample") || !strcmp(op, "Split") || !strncmp(op, "Reduce", 6) ||
                   !strcmp(op, "Resize") || !strcmp(op, "TopK") || !strcmp(op, "Scatter")) {
            seterr(err, elen, "node '%s' (%s): raising opset %lld to 13 is not supported for this op", n->name, op,
                     (long long)g->opset);
            return 1;
        }
    }
    g->opset = 13;
    return g->pl.oom ? -1 : 0;
}

static float *const_floats(wgraph *g, const char *name, int64_t *numel)
{
    Onnx__TensorProto *t = find_init(g, name);
    if (!t)
        return NULL;
    *numel = tp_numel(t);
    return tp_floats(g, t);
}

static void replace_init(wgraph *g, Onnx__TensorProto *old, Onnx__TensorProto *nw)
{
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] == old)
            g->inits[i] = nw;
}

/* Conv -> BatchNormalization and Conv -> Add(per-channel constant): into W and B. */
static int fold_conv_affine(wgraph *g)
{
    int folded = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        wnode *c = &g->nodes[i];
        if (c->dead || strcmp(c->op, "Conv") || c->nout != 1 || is_graph_output(g, c->out[0]))
            continue;
        long user = -1;
        if (count_uses(g, c->out[0], &user) != 1)
            continue;
        wnode *u = &g->nodes[user];
        Onnx__TensorProto *wt = find_init(g, c->in[1]);
        if (!wt || wt->n_dims < 3)
            continue;
        int64_t oc = wt->dims[0], nw, per = tp_numel(wt) / oc;
        float *w = tp_floats(g, wt);
        if (!w)
            continue;
        nw = tp_numel(wt);
        float *b = pz(&g->pl, (size_t)oc * sizeof *b);
        if (!b)
            return -1;
        if (c->nin > 2 && c->in[2][0]) {
            int64_t nb;
            float *ob = const_floats(g, c->in[2], &nb);
            if (!ob || nb != oc)
                continue;
            memcpy(b, ob, (size_t)oc * sizeof *b);
        }
        bool ok = false;
        if (!strcmp(u->op, "BatchNormalization") && u->nin >= 5 && u->nout >= 1 && !strcmp(u->in[0], c->out[0]) &&
            (u->nout == 1 || !u->out[1][0])) {
            int64_t n1, n2, n3, n4;
            float *sc = const_floats(g, u->in[1], &n1), *bb = const_floats(g, u->in[2], &n2),
                  *mean = const_floats(g, u->in[3], &n3), *var = const_floats(g, u->in[4], &n4);
            float eps = wattr_f(u, "epsilon", 1e-5f);
            if (sc && bb && mean && var && n1 == oc && n2 == oc && n3 == oc && n4 == oc) {
                for (int64_t o = 0; o < oc; o++) {
                    float k = sc[o] / sqrtf(var[o] + eps);
                    for (int64_t j = 0; j < per; j++)
                        w[o * per + j] *= k;
                    b[o] = (b[o] - mean[o]) * k + bb[o];
                }
                ok = true;
            }
        } else if (!strcmp(u->op, "Add") && u->nin == 2 && u->nout == 1) {
            const char *other = !strcmp(u->in[0], c->out[0]) ? u->in[1] : u->in[0];
            Onnx__TensorProto *at = find_init(g, other);
            int64_t na;
            float *av = at ? tp_floats(g, at) : NULL;
            na = at ? tp_numel(at) : 0;
            /* [C,1,1] or [1,C,1,1]: exactly oc values along the channel axis */
            bool chan = at && na == oc && at->n_dims >= 1 &&
                        ((at->n_dims == 3 && at->dims[0] == oc) || (at->n_dims == 4 && at->dims[1] == oc && at->dims[0] == 1));
            if (av && chan) {
                for (int64_t o = 0; o < oc; o++)
                    b[o] += av[o];
                ok = true;
            }
        }
        if (!ok)
            continue;
        Onnx__TensorProto *nwt = mk_tensor(g, wt->name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, wt->dims, wt->n_dims, w,
                                           (size_t)nw * 4);
        char *bname = uniq(g, c->name, "bias");
        Onnx__TensorProto *nbt = mk_tensor(g, bname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &oc, 1, b, (size_t)oc * 4);
        if (!nwt || !nbt)
            return -1;
        /* the weight initializer may be shared: give the folded one its own name */
        if (count_uses(g, c->in[1], NULL) > 1) {
            nwt->name = uniq(g, c->name, "w");
            add_init(g, nwt);
            c->in[1] = nwt->name;
        } else {
            replace_init(g, wt, nwt);
        }
        add_init(g, nbt);
        if (c->nin < 3) {
            char **in = pz(&g->pl, 3 * sizeof *in);
            if (!in)
                return -1;
            in[0] = c->in[0];
            in[1] = c->in[1];
            c->in = in;
            c->nin = 3;
        }
        c->in[2] = bname;
        c->out[0] = u->out[0];
        u->dead = true;
        folded++;
    }
    return folded;
}

/* ======================================================================== */
/* calibration                                                              */
/* ======================================================================== */

typedef struct sample {
    char **files; /* per graph input */
} sample;

static bool has_file(const char *dir, const char *name, char *out, size_t len)
{
    int r = snprintf(out, len, "%s/%s", dir, name);
    if (r < 0 || (size_t)r >= len)
        return false;
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sample folders (input_N.pb / input_N.npy), or .npy files for a one-input model. */
static int find_samples(qpool *pl, const char *dir, size_t n_inputs, sample **out, size_t *n_out, char *err, size_t elen)
{
    char path[4096];
    char *dirs[4096];
    size_t nd = 0;
    char *npys[4096];
    size_t nn = 0;
    if (has_file(dir, "input_0.pb", path, sizeof path) || has_file(dir, "input_0.npy", path, sizeof path)) {
        dirs[nd++] = pstr(pl, dir);
    } else {
        DIR *d = opendir(dir);
        if (!d) {
            seterr(err, elen, "--calib %s: %s", dir, strerror(errno));
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(d)) && nd < 4096 && nn < 4096) {
            if (e->d_name[0] == '.')
                continue;
            char sub[4096];
            int r = snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
            if (r < 0 || (size_t)r >= sizeof sub)
                continue;
            struct stat st;
            if (stat(sub, &st))
                continue;
            if (S_ISDIR(st.st_mode) &&
                (has_file(sub, "input_0.pb", path, sizeof path) || has_file(sub, "input_0.npy", path, sizeof path)))
                dirs[nd++] = pstr(pl, sub);
            else if (S_ISREG(st.st_mode) && strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".npy"))
                npys[nn++] = pstr(pl, sub);
        }
        closedir(d);
    }
    qsort(dirs, nd, sizeof *dirs, cmp_str);
    qsort(npys, nn, sizeof *npys, cmp_str);
    size_t total = nd + (n_inputs == 1 ? nn : 0);
    if (!total) {
        seterr(err, elen, "--calib %s: no calibration inputs (folders with input_0.pb or input_0.npy, or .npy files%s)",
                 dir, n_inputs == 1 ? "" : " for a one-input model");
        return -1;
    }
    sample *s = pz(pl, total * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < total; i++) {
        s[i].files = pz(pl, (n_inputs ? n_inputs : 1) * sizeof(char *));
        if (!s[i].files)
            return -1;
        if (i < nd) {
            for (size_t k = 0; k < n_inputs; k++) {
                char name[64];
                snprintf(name, sizeof name, "input_%zu.pb", k);
                if (!has_file(dirs[i], name, path, sizeof path)) {
                    snprintf(name, sizeof name, "input_%zu.npy", k);
                    if (!has_file(dirs[i], name, path, sizeof path)) {
                        seterr(err, elen, "%s: input_%zu.pb (or .npy) is missing; the model has %zu inputs", dirs[i],
                                 k, n_inputs);
                        return -1;
                    }
                }
                s[i].files[k] = pstr(pl, path);
            }
        } else {
            s[i].files[0] = npys[i - nd];
        }
    }
    *out = s;
    *n_out = total;
    return 0;
}

static void progress(const char *what, size_t done, size_t total)
{
    if (total < 2)
        return;
    int width = 30, fill = (int)(width * done / total);
    fprintf(stderr, "\r%s [", what);
    for (int i = 0; i < width; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %zu/%zu", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* per value of the graph: what calibration learnt */
typedef struct vinfo {
    char *name;
    sy_dtype dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    float *data;          /* first sample's values (constants) */
    size_t numel;
    sy_observer *obs;     /* activation observer */
    bool varies;          /* differs between samples: not a constant */
    bool seen;
} vinfo;

static vinfo *vfind(vinfo *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

/* ======================================================================== */
/* emit                                                                     */
/* ======================================================================== */

static Onnx__NodeProto *emit_node(wgraph *g, const wnode *n)
{
    Onnx__NodeProto *np = pz(&g->pl, sizeof *np);
    if (!np)
        return NULL;
    onnx__node_proto__init(np);
    np->name = n->name;
    np->op_type = n->op;
    np->domain = n->domain;
    np->n_input = n->nin;
    np->input = n->in;
    np->n_output = n->nout;
    np->output = n->out;
    np->n_attribute = n->nattr;
    np->attribute = n->attrs;
    return np;
}

/* Pack the working graph into a model. extra_outputs: names added as graph
 * outputs (calibration). Returns a malloc'd buffer. */
static uint8_t *pack_model(wgraph *g, char **extra, size_t n_extra, size_t *len)
{
    Onnx__ModelProto m = *g->model;
    Onnx__GraphProto gp = *g->model->graph;
    m.graph = &gp;
    size_t nn = 0;
    Onnx__NodeProto **nodes = pz(&g->pl, (g->n_nodes ? g->n_nodes : 1) * sizeof *nodes);
    if (!nodes)
        return NULL;
    for (size_t i = 0; i < g->n_nodes; i++)
        if (!g->nodes[i].dead && !(nodes[nn] = emit_node(g, &g->nodes[i])))
            return NULL;
        else if (!g->nodes[i].dead)
            nn++;
    gp.node = nodes;
    gp.n_node = nn;
    size_t ni = 0;
    Onnx__TensorProto **inits = pz(&g->pl, (g->n_inits ? g->n_inits : 1) * sizeof *inits);
    if (!inits)
        return NULL;
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i])
            inits[ni++] = g->inits[i];
    gp.initializer = inits;
    gp.n_initializer = ni;
    gp.n_value_info = 0;
    gp.value_info = NULL;
    /* graph inputs: drop initializers that are gone (IR < 4 lists them as inputs) */
    Onnx__ValueInfoProto **ins = pz(&g->pl, (gp.n_input ? gp.n_input : 1) * sizeof *ins);
    if (!ins)
        return NULL;
    size_t nin = 0;
    for (size_t i = 0; i < gp.n_input; i++) {
        bool was_init = false;
        for (size_t k = 0; k < g->model->graph->n_initializer && !was_init; k++)
            was_init = !strcmp(g->model->graph->initializer[k]->name, gp.input[i]->name);
        if (!was_init || find_init(g, gp.input[i]->name))
            ins[nin++] = gp.input[i];
    }
    gp.input = ins;
    gp.n_input = nin;
    if (n_extra) {
        Onnx__ValueInfoProto **outs = pz(&g->pl, (gp.n_output + n_extra) * sizeof *outs);
        if (!outs)
            return NULL;
        memcpy(outs, gp.output, gp.n_output * sizeof *outs);
        for (size_t i = 0; i < n_extra; i++) {
            Onnx__ValueInfoProto *vi = pz(&g->pl, sizeof *vi);
            if (!vi)
                return NULL;
            onnx__value_info_proto__init(vi);
            vi->name = extra[i];
            outs[gp.n_output + i] = vi;
        }
        gp.output = outs;
        gp.n_output += n_extra;
    }
    /* opset imports: the default domain at g->opset */
    Onnx__OperatorSetIdProto **ops = pz(&g->pl, (m.n_opset_import + 1) * sizeof *ops);
    if (!ops)
        return NULL;
    size_t no = 0;
    bool have = false;
    for (size_t i = 0; i < m.n_opset_import; i++) {
        Onnx__OperatorSetIdProto *o = pz(&g->pl, sizeof *o);
        if (!o)
            return NULL;
        *o = *m.opset_import[i];
        if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) {
            o->version = g->opset;
            o->has_version = 1;
            have = true;
        }
        ops[no++] = o;
    }
    if (!have) {
        Onnx__OperatorSetIdProto *o = pz(&g->pl, sizeof *o);
        if (!o)
            return NULL;
        onnx__operator_set_id_proto__init(o);
        o->domain = pstr(&g->pl, "");
        o->has_version = 1;
        o->version = g->opset;
        ops[no++] = o;
    }
    m.opset_import = ops;
    m.n_opset_import = no;
    if (m.ir_version < 7) {
        m.ir_version = 7; /* opset 13 needs IR 7 */
        m.has_ir_version = 1;
    }
    if (g->opset >= 21 && m.ir_version < 10) {
        m.ir_version = 10; /* int4 initializers and opset 21 need IR 10 */
        m.has_ir_version = 1;
    }
    *len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        onnx__model_proto__pack(&m, buf);
    return buf;
}

static int write_atomic(const char *path, const uint8_t *buf, size_t len, char *err, size_t elen)
{
    char tmp[4096];
    int r = snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    if (r < 0 || (size_t)r >= sizeof tmp) {
        seterr(err, elen, "%s: path too long", path);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        seterr(err, elen, "%s: cannot create a temporary file: %s", path, strerror(errno));
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w <= 0) {
            seterr(err, elen, "%s: write failed: %s", tmp, strerror(errno));
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (fsync(fd) || close(fd) || chmod(tmp, 0644) || rename(tmp, path)) {
        seterr(err, elen, "%s: could not finish writing: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* ======================================================================== */
/* the quantization rewrite                                                 */
/* ======================================================================== */

typedef struct qparam {
    float scale;
    int32_t zp;
    bool set;
} qparam;

static bool op_in(const char *op, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(op, *list))
            return true;
    return false;
}

static const char *const QOPS[] = {"Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", "Concat", "MaxPool", "AveragePool",
                                   "GlobalAveragePool", "GlobalMaxPool", "Relu", "Clip", "Sigmoid", "Tanh",
                                   "LeakyRelu", "HardSigmoid", "HardSwish", "Reshape", "Flatten", "Squeeze",
                                   "Unsqueeze", "Transpose", "Slice", "Identity", "Pad", NULL};
/* ops whose output keeps the input's parameters */
static const char *const SHARE[] = {"MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                                    "Transpose", "Slice", "Identity", "Pad", NULL};
/* ops after which a Relu/Clip folds into the requantization */
static const char *const FUSE_ACT[] = {"Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", NULL};

/* data inputs (float) of a quantizable op: bit k set = input k is quantized */
static unsigned qinputs(const wnode *n)
{
    if (op_in(n->op, (const char *const[]){"Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", NULL}))
        return 3u;
    if (!strcmp(n->op, "Concat"))
        return n->nin >= 32 ? 0xffffffffu : (1u << n->nin) - 1u;
    return 1u;
}

typedef struct qrun {
    wgraph *g;
    const sy_quant_recipe *rc;
    bool per_channel;
    sy_calib_method method;
    double pct;
    vinfo *vals;
    size_t n_vals;
    char err[512];
} qrun;

static int storage_onnx(sy_dtype dt) { return (int)dt; } /* sy_dtype numbering = ONNX's */

static char *scalar_init(qrun *q, const char *base, const char *tag, int dt, const void *v, size_t es)
{
    char *name = uniq(q->g, base, tag);
    Onnx__TensorProto *t = mk_tensor(q->g, name, dt, NULL, 0, v, es);
    add_init(q->g, t);
    return name;
}

static size_t st_bytes(sy_dtype dt) { return dt == SY_DT_INT16 || dt == SY_DT_UINT16 ? 2 : 1; }

static void zp_bytes(sy_dtype dt, int32_t zp, uint8_t *out)
{
    if (st_bytes(dt) == 2) {
        uint16_t z = (uint16_t)zp;
        memcpy(out, &z, 2);
    } else {
        out[0] = (uint8_t)zp;
    }
}

/* params of an activation from its observer */
static int act_param(qrun *q, vinfo *v, qparam *p)
{
    sy_quant_params qp;
    sy_status *st = q->rc->activations->observer_finalize(v->obs, &qp);
    if (st) {
        seterr(q->err, sizeof q->err, "%s: %s", v->name, sy_status_get_message(st));
        sy_status_free(st);
        return -1;
    }
    p->scale = qp.scales[0];
    p->zp = qp.zero_points ? qp.zero_points[0] : 0;
    p->set = true;
    q->rc->params_free(&qp);
    return 0;
}

/* Quantize a float constant (weights / constant operands) with `scheme`
 * into a new initializer + DequantizeLinear; per channel along `axis` when
 * axis >= 0. Returns the DQ output name, NULL on failure. Writes the scales
 * into sc (when not NULL, nch entries). */
static char *quant_const(qrun *q, const char *name, const float *x, const int32_t rank, const int64_t *dims,
                         const sy_quant_scheme_def *sch, int axis, float *sc, wnode **dq_out)
{
    wgraph *g = q->g;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    int64_t nch = axis >= 0 ? dims[axis] : 1;
    int64_t inner = 1;
    for (int32_t i = axis + 1; axis >= 0 && i < rank; i++)
        inner *= dims[i];
    size_t es = st_bytes(sch->storage);
    uint8_t *qv = pz(&g->pl, (size_t)n * es + 1);
    float *scales = pz(&g->pl, (size_t)nch * sizeof *scales);
    uint8_t *zps = pz(&g->pl, (size_t)nch * es + 1);
    float *tmp = pz(&g->pl, (size_t)(n ? n : 1) * sizeof *tmp);
    uint8_t *tq = pz(&g->pl, (size_t)(n ? n : 1) * es);
    if (!qv || !scales || !zps || !tmp || !tq)
        return NULL;
    for (int64_t c = 0; c < nch; c++) {
        /* gather channel c */
        int64_t cnt = 0;
        for (int64_t i = 0; i < n; i++)
            if (axis < 0 || (i / inner) % nch == c)
                tmp[cnt++] = x[i];
        sy_observer *obs = NULL;
        sy_status *st = q->rc->observer_new(sch, SY_CALIB_MINMAX, 100.0, &obs);
        sy_tensor t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        t.dtype = SY_DT_FLOAT32;
        t.rank = 1;
        t.dims[0] = cnt;
        t.data = tmp;
        t.nbytes = (size_t)cnt * 4;
        t.name = name;
        sy_quant_params qp;
        memset(&qp, 0, sizeof qp);
        if (!st)
            st = sch->observer_update(obs, &t);
        if (!st)
            st = sch->observer_finalize(obs, &qp);
        if (!st)
            st = sch->quantize(tmp, (size_t)cnt, &qp, 0, tq);
        sch->observer_release(obs);
        if (st) {
            seterr(q->err, sizeof q->err, "weight '%s': %s", name, sy_status_get_message(st));
            sy_status_free(st);
            q->rc->params_free(&qp);
            return NULL;
        }
        scales[c] = qp.scales[0];
        zp_bytes(sch->storage, qp.zero_points ? qp.zero_points[0] : 0, zps + c * (int64_t)es);
        q->rc->params_free(&qp);
        cnt = 0;
        for (int64_t i = 0; i < n; i++)
            if (axis < 0 || (i / inner) % nch == c) {
                memcpy(qv + i * (int64_t)es, tq + cnt * (int64_t)es, es);
                cnt++;
            }
    }
    if (sc)
        memcpy(sc, scales, (size_t)nch * sizeof *sc);
    char *qn = uniq(g, name, "q"), *sn = uniq(g, name, "scale"), *zn = uniq(g, name, "zp"),
         *dn = uniq(g, name, "dq");
    int dt = storage_onnx(sch->storage);
    add_init(g, mk_tensor(g, qn, dt, dims, (size_t)rank, qv, (size_t)n * es));
    add_init(g, mk_tensor(g, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &nch, axis >= 0 ? 1 : 0, scales,
                          (size_t)nch * 4));
    add_init(g, mk_tensor(g, zn, dt, &nch, axis >= 0 ? 1 : 0, zps, (size_t)nch * es));
    wnode *dq = add_node(g, "DequantizeLinear", uniq(g, name, "DQ"), 3, 1);
    if (!dq)
        return NULL;
    dq->in[0] = qn;
    dq->in[1] = sn;
    dq->in[2] = zn;
    dq->out[0] = dn;
    if (axis >= 0) {
        Onnx__AttributeProto *a = mk_attr_i(g, "axis", axis);
        node_set_attrs(g, dq, &a, 1);
    }
    *dq_out = dq;
    return g->pl.oom ? NULL : dn;
}

/* int32 bias with scale s_x * s_w[c] */
static char *quant_bias(qrun *q, const char *name, const float *b, int64_t n, float sx, const float *sw, int64_t nsw,
                        wnode **dq_out)
{
    wgraph *g = q->g;
    int32_t *qb = pz(&g->pl, (size_t)n * 4 + 4);
    float *sc = pz(&g->pl, (size_t)n * 4 + 4);
    if (!qb || !sc)
        return NULL;
    for (int64_t c = 0; c < n; c++) {
        sc[c] = sx * sw[nsw > 1 ? c : 0];
        double v = sy_fx_round_even((double)b[c] / (double)sc[c]);
        /* saturate; a NaN bias (nothing to round) is stored as 0 rather than
         * cast, which C leaves undefined */
        qb[c] = v != v ? 0 : v > 2147483647.0 ? INT32_MAX : (v < -2147483648.0 ? INT32_MIN : (int32_t)v);
    }
    char *qn = uniq(g, name, "q"), *sn = uniq(g, name, "scale"), *dn = uniq(g, name, "dq");
    add_init(g, mk_tensor(g, qn, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, &n, 1, qb, (size_t)n * 4));
    add_init(g, mk_tensor(g, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &n, 1, sc, (size_t)n * 4));
    wnode *dq = add_node(g, "DequantizeLinear", uniq(g, name, "DQ"), 2, 1);
    if (!dq)
        return NULL;
    dq->in[0] = qn;
    dq->in[1] = sn;
    dq->out[0] = dn;
    Onnx__AttributeProto *a = mk_attr_i(g, "axis", 0);
    node_set_attrs(g, dq, &a, 1);
    *dq_out = dq;
    return g->pl.oom ? NULL : dn;
}

static bool is_const_value(qrun *q, const char *name)
{
    if (find_init(q->g, name))
        return true;
    vinfo *v = vfind(q->vals, q->n_vals, name);
    if (!v || v->varies)
        return false;
    /* produced by a node whose inputs are all constant */
    long p = producer_of(q->g, name);
    if (p < 0)
        return false;
    const wnode *n = &q->g->nodes[p];
    for (size_t k = 0; k < n->nin; k++)
        if (n->in[k][0] && !is_const_value(q, n->in[k]))
            return false;
    return true;
}

static const float *const_data(qrun *q, const char *name, int32_t *rank, int64_t *dims)
{
    Onnx__TensorProto *t = find_init(q->g, name);
    if (t) {
        *rank = (int32_t)t->n_dims;
        for (size_t i = 0; i < t->n_dims && i < SY_MAX_RANK; i++)
            dims[i] = t->dims[i];
        return tp_floats(q->g, t);
    }
    vinfo *v = vfind(q->vals, q->n_vals, name);
    if (!v || v->dtype != SY_DT_FLOAT32 || !v->data)
        return NULL;
    *rank = v->rank;
    memcpy(dims, v->dims, sizeof v->dims);
    return v->data;
}

static bool is_float_act(qrun *q, const char *name)
{
    vinfo *v = vfind(q->vals, q->n_vals, name);
    return v && v->dtype == SY_DT_FLOAT32 && v->obs && !is_const_value(q, name);
}

static void drop_unused(wgraph *g);

/* ---- RNN: the integer QRNN of the QDQ pass (plugins/ops_quant/qrnn_params.h):
 * X, initial_h, Y and Y_h get pairs (Y_h with Y's parameters: the state is
 * one int8 H_t), W and R are weights (per hidden unit, axis 1, with
 * --per-channel), B stays float (folded as int32 by the kernel). RNNs the
 * kernel does not take (layout 1, other activations) stay float. */
static bool rnn_quantizable(qrun *q, const wnode *n)
{
    if (n->dead || n->domain[0] || strcmp(n->op, "RNN") || n->nin < 3 || n->nout < 1 || wattr_i(n, "layout", 0))
        return false;
    const Onnx__AttributeProto *a = wattr(n, "activations");
    for (size_t i = 0; a && i < a->n_strings; i++)
        if (a->strings[i].len < 4 || (strncmp((const char *)a->strings[i].data, "Tanh", a->strings[i].len) &&
                                      strncmp((const char *)a->strings[i].data, "Sigmoid", a->strings[i].len) &&
                                      strncmp((const char *)a->strings[i].data, "Relu", a->strings[i].len)))
            return false;
    return is_float_act(q, n->in[0]) && is_const_value(q, n->in[1]) && is_const_value(q, n->in[2]);
}

static void rnn_mark(qrun *q, bool *qset)
{
    for (size_t i = 0; i < q->g->n_nodes; i++) {
        const wnode *n = &q->g->nodes[i];
        if (!rnn_quantizable(q, n))
            continue;
        const char *vals[4] = {n->in[0], n->nin > 5 ? n->in[5] : "", n->out[0], n->nout > 1 ? n->out[1] : ""};
        for (int k = 0; k < 4; k++) {
            vinfo *v = vals[k][0] && is_float_act(q, vals[k]) ? vfind(q->vals, q->n_vals, vals[k]) : NULL;
            if (v)
                qset[v - q->vals] = true;
        }
    }
}

/* Y_h takes Y's parameters (after the observers gave theirs) */
static void rnn_share(qrun *q, const bool *qset, qparam *par)
{
    for (size_t i = 0; i < q->g->n_nodes; i++) {
        const wnode *n = &q->g->nodes[i];
        if (!rnn_quantizable(q, n) || n->nout < 2 || !n->out[0][0] || !n->out[1][0])
            continue;
        vinfo *y = vfind(q->vals, q->n_vals, n->out[0]), *yh = vfind(q->vals, q->n_vals, n->out[1]);
        if (y && yh && qset[y - q->vals] && qset[yh - q->vals])
            par[yh - q->vals] = par[y - q->vals];
    }
}

/* W and R through the weight scheme; their DequantizeLinear nodes go to pre */
static int rnn_weights(qrun *q, const bool *qset, wnode **pre, size_t *npre)
{
    for (size_t i = 0; i < q->g->n_nodes; i++) {
        wnode *n = &q->g->nodes[i];
        vinfo *x = rnn_quantizable(q, n) ? vfind(q->vals, q->n_vals, n->in[0]) : NULL;
        if (!x || !qset[x - q->vals])
            continue;
        for (size_t k = 1; k <= 2; k++) {
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *w = const_data(q, n->in[k], &rank, dims);
            if (!w || rank != 3)
                continue;
            bool pc = q->per_channel && q->rc->weights_per_channel;
            const sy_quant_scheme_def *ws = pc ? q->rc->weights_per_channel : q->rc->weights;
            wnode *dq = NULL;
            char *dn = quant_const(q, n->in[k], w, rank, dims, ws, pc ? 1 : -1, NULL, &dq);
            if (!dn)
                return -1;
            pre[(*npre)++] = dq;
            n->in[k] = dn;
        }
    }
    return 0;
}

static int rewrite(qrun *q)
{
    wgraph *g = q->g;
    size_t n0 = g->n_nodes;
    bool *fused = NULL;
    qparam *par = calloc(q->n_vals + 1, sizeof *par);
    bool *qset = calloc(q->n_vals + 1, sizeof *qset);
    wnode **pre = calloc(n0 * 8 + 16, sizeof *pre); /* DQ nodes for constants, emitted first */
    size_t npre = 0;
    int rc = -1;
    if (!par || !qset || !pre)
        goto out;
    /* outputs of Conv/Gemm/MatMul/Add/Sub/Mul whose only reader is a Relu or
     * Clip: no pair in between, the activation folds into the requantization */
    fused = calloc(q->n_vals + 1, sizeof *fused);
    if (!fused)
        goto out;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        long user = -1;
        if (n->dead || n->domain[0] || !op_in(n->op, FUSE_ACT) || n->nout < 1 || is_graph_output(g, n->out[0]) ||
            count_uses(g, n->out[0], &user) != 1)
            continue;
        const wnode *u = &g->nodes[user];
        bool act = !strcmp(u->op, "Relu") || (!strcmp(u->op, "Clip") && (u->nin < 2 || is_const_value(q, u->in[1])) &&
                                               (u->nin < 3 || !u->in[2][0] || is_const_value(q, u->in[2])));
        vinfo *vo = vfind(q->vals, q->n_vals, n->out[0]);
        if (act && vo)
            fused[vo - q->vals] = true;
    }
    /* which activations get a Q/DQ pair */
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        if (n->dead || n->domain[0] || !op_in(n->op, QOPS) || n->nout < 1)
            continue;
        if (!is_float_act(q, n->out[0]))
            continue;
        unsigned mask = qinputs(n);
        bool ok = true;
        for (size_t k = 0; k < n->nin && k < 32; k++)
            if ((mask >> k) & 1u) {
                if (!n->in[k][0])
                    continue;
                vinfo *v = vfind(q->vals, q->n_vals, n->in[k]);
                bool c = is_const_value(q, n->in[k]);
                if (!(c || is_float_act(q, n->in[k])) || (v && v->dtype != SY_DT_FLOAT32 && !c))
                    ok = false;
            }
        if (!ok)
            continue;
        for (size_t k = 0; k < n->nin && k < 32; k++)
            if (((mask >> k) & 1u) && n->in[k][0] && !is_const_value(q, n->in[k])) {
                vinfo *vk = vfind(q->vals, q->n_vals, n->in[k]);
                if (vk && !fused[vk - q->vals])
                    qset[vk - q->vals] = true;
            }
        vinfo *vo = vfind(q->vals, q->n_vals, n->out[0]);
        if (vo && !fused[vo - q->vals])
            qset[vo - q->vals] = true;
    }
    rnn_mark(q, qset);
    /* parameters: observers, then shared ones in graph order */
    for (size_t v = 0; v < q->n_vals; v++)
        if (qset[v] && act_param(q, &q->vals[v], &par[v]))
            goto out;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        if (n->dead || !op_in(n->op, SHARE) || n->nout < 1)
            continue;
        vinfo *vi = vfind(q->vals, q->n_vals, n->in[0]), *vo = vfind(q->vals, q->n_vals, n->out[0]);
        if (vi && vo && qset[vi - q->vals] && qset[vo - q->vals])
            par[vo - q->vals] = par[vi - q->vals];
    }
    rnn_share(q, qset, par);
    if (rnn_weights(q, qset, pre, &npre))
        goto out;
    /* weights, biases and constant operands */
    sy_dtype adt = q->rc->activations->storage;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        if (n->dead || n->domain[0] || !op_in(n->op, QOPS) || n->nout < 1)
            continue;
        vinfo *vo = vfind(q->vals, q->n_vals, n->out[0]);
        vinfo *v0 = n->nin ? vfind(q->vals, q->n_vals, n->in[0]) : NULL;
        bool out_q = vo && (qset[vo - q->vals] || is_float_act(q, n->out[0]));
        if (!out_q || !v0)
            continue;
        bool conv = !strcmp(n->op, "Conv"), mm = !strcmp(n->op, "MatMul"), gemm = !strcmp(n->op, "Gemm");
        if ((conv || mm || gemm) && n->nin >= 2 && is_const_value(q, n->in[1]) && qset[v0 - q->vals]) {
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *w = const_data(q, n->in[1], &rank, dims);
            if (!w)
                continue;
            bool tb = gemm && wattr_i(n, "transB", 0);
            int axis = -1;
            const sy_quant_scheme_def *ws = q->rc->weights;
            if (q->per_channel && q->rc->weights_per_channel && (conv || rank == 2)) {
                ws = q->rc->weights_per_channel;
                axis = conv ? 0 : (tb ? 0 : 1);
            }
            int64_t nch = axis >= 0 ? dims[axis] : 1;
            float *sw = pz(&g->pl, (size_t)nch * sizeof *sw);
            wnode *dq = NULL;
            char *dn = sw ? quant_const(q, n->in[1], w, rank, dims, ws, axis, sw, &dq) : NULL;
            if (!dn)
                goto out;
            pre[npre++] = dq;
            n->in[1] = dn;
            /* bias */
            if ((conv || gemm) && n->nin >= 3 && n->in[2][0] && is_const_value(q, n->in[2])) {
                int32_t br;
                int64_t bd[SY_MAX_RANK];
                const float *b = const_data(q, n->in[2], &br, bd);
                int64_t nb = 1;
                for (int32_t k = 0; k < br; k++)
                    nb *= bd[k];
                int64_t oc = conv ? dims[0] : (tb ? dims[0] : dims[1]);
                if (b && nb == oc) {
                    wnode *bdq = NULL;
                    char *bn = quant_bias(q, n->in[2], b, nb, par[v0 - q->vals].scale, sw, nch, &bdq);
                    if (!bn)
                        goto out;
                    pre[npre++] = bdq;
                    n->in[2] = bn;
                }
            }
            continue;
        }
        /* constant operands of elementwise ops / concat: like activations */
        unsigned mask = qinputs(n);
        for (size_t k = 0; k < n->nin && k < 32; k++) {
            if (!((mask >> k) & 1u) || !n->in[k][0] || !is_const_value(q, n->in[k]))
                continue;
            if (!op_in(n->op, (const char *const[]){"Add", "Sub", "Mul", "Concat", "MatMul", NULL}))
                continue;
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *c = const_data(q, n->in[k], &rank, dims);
            if (!c)
                continue;
            wnode *dq = NULL;
            char *dn = quant_const(q, n->in[k], c, rank, dims, q->rc->activations, -1, NULL, &dq);
            if (!dn)
                goto out;
            pre[npre++] = dq;
            n->in[k] = dn;
        }
    }
    /* Q/DQ pairs, in graph order (graph inputs first) */
    size_t nq_cap = q->n_vals * 2 + 2;
    wnode **qd = calloc(nq_cap, sizeof *qd);
    long *after = calloc(nq_cap, sizeof *after);
    size_t nqd = 0;
    if (!qd || !after) {
        free(qd);
        free(after);
        goto out;
    }
    for (size_t v = 0; v < q->n_vals; v++) {
        if (!qset[v])
            continue;
        vinfo *vi = &q->vals[v];
        const char *t = vi->name;
        long p = producer_of(g, t);
        char *sn = scalar_init(q, t, "s", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &par[v].scale, 4);
        uint8_t zb[2];
        zp_bytes(adt, par[v].zp, zb);
        char *zn = scalar_init(q, t, "z", storage_onnx(adt), zb, st_bytes(adt));
        char *qn = uniq(g, t, "q");
        wnode *qn_ = add_node(g, "QuantizeLinear", uniq(g, t, "Q"), 3, 1);
        wnode *dq = add_node(g, "DequantizeLinear", uniq(g, t, "DQ"), 3, 1);
        if (!qn_ || !dq) {
            free(qd);
            free(after);
            goto out;
        }
        if (p >= 0) {
            /* producer writes t__f; Q(t__f) -> DQ -> t, so consumers and outputs keep t */
            char *fname = uniq(g, t, "f");
            for (size_t k = 0; k < g->nodes[p].nout; k++)
                if (!strcmp(g->nodes[p].out[k], t))
                    g->nodes[p].out[k] = fname;
            qn_->in[0] = fname;
            dq->out[0] = (char *)t;
        } else {
            char *dname = uniq(g, t, "dq");
            for (size_t i = 0; i < n0; i++)
                for (size_t k = 0; k < g->nodes[i].nin; k++)
                    if (!strcmp(g->nodes[i].in[k], t))
                        g->nodes[i].in[k] = dname;
            qn_->in[0] = (char *)t;
            dq->out[0] = dname;
        }
        qn_->in[1] = sn;
        qn_->in[2] = zn;
        qn_->out[0] = qn;
        dq->in[0] = qn;
        dq->in[1] = sn;
        dq->in[2] = zn;
        qd[nqd] = qn_;
        after[nqd++] = p;
        qd[nqd] = dq;
        after[nqd++] = p;
    }
    /* order: constant DQs, graph-input pairs, then each node followed by its pairs */
    size_t total = g->n_nodes;
    wnode *ordered = pz(&g->pl, (total ? total : 1) * sizeof *ordered);
    if (!ordered) {
        free(qd);
        free(after);
        goto out;
    }
    size_t w = 0;
    for (size_t i = 0; i < npre; i++)
        ordered[w++] = *pre[i];
    for (size_t j = 0; j < nqd; j++)
        if (after[j] < 0)
            ordered[w++] = *qd[j];
    for (size_t i = 0; i < n0; i++) {
        if (g->nodes[i].dead)
            continue;
        ordered[w++] = g->nodes[i];
        for (size_t j = 0; j < nqd; j++)
            if (after[j] == (long)i)
                ordered[w++] = *qd[j];
    }
    free(qd);
    free(after);
    g->nodes = ordered;
    g->n_nodes = w;
    g->cap_nodes = total;
    drop_unused(g);
    rc = g->pl.oom ? -1 : 0;
out:
    free(fused);
    free(par);
    free(qset);
    free(pre);
    return rc;
}

/* Drop nodes nothing reads (constant subgraphs replaced by initializers),
 * then initializers nothing reads (pack_model drops them from the graph
 * inputs too, where IR < 4 models list them). */
static void drop_unused(wgraph *g)
{
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < g->n_nodes; i++) {
            wnode *n = &g->nodes[i];
            if (n->dead)
                continue;
            bool used = false;
            for (size_t k = 0; k < n->nout && !used; k++)
                used = n->out[k][0] && (is_graph_output(g, n->out[k]) || count_uses(g, n->out[k], NULL) > 0);
            if (!used) {
                n->dead = true;
                changed = true;
            }
        }
    }
    /* drop initializers nothing reads (pack_model drops them from the
     * graph inputs too, where IR < 4 models list them) */
    for (size_t i = 0; i < g->n_inits; i++)
        if (g->inits[i] && !count_uses(g, g->inits[i]->name, NULL) && !is_graph_output(g, g->inits[i]->name))
            g->inits[i] = NULL;
}

/* ======================================================================== */
/* weight-only recipes: fp16 storage, 4-bit blocks (activations stay float) */
/* ======================================================================== */

/* The weight as a float16 initializer (the scheme's conversion, round to
 * nearest even) and a Cast back to float: what every runtime loads, and the
 * Cast of a constant is folded at session creation here. */
static int store_fp16(qrun *q, const char *name, const float *w, int32_t rank, const int64_t *dims, char **out)
{
    wgraph *g = q->g;
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= dims[i];
    uint16_t *h = pz(&g->pl, (size_t)n * 2 + 2);
    if (!h)
        return -1;
    sy_quant_params qp;
    memset(&qp, 0, sizeof qp);
    qp.struct_size = sizeof qp;
    qp.axis = -1;
    qp.storage = SY_DT_FLOAT16;
    sy_status *st = q->rc->weights->quantize(w, (size_t)n, &qp, 0, h);
    if (st) {
        seterr(q->err, sizeof q->err, "weight '%s': %s", name, sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    char *hn = uniq(g, name, "f16"), *cn = uniq(g, name, "f32");
    add_init(g, mk_tensor(g, hn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16, dims, (size_t)rank, h, (size_t)n * 2));
    wnode *c = add_node(g, "Cast", uniq(g, name, "Cast"), 1, 1);
    if (!c)
        return -1;
    c->in[0] = hn;
    c->out[0] = cn;
    Onnx__AttributeProto *a = mk_attr_i(g, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    node_set_attrs(g, c, &a, 1);
    *out = cn;
    return g->pl.oom ? -1 : 0;
}

/* The weight in blocks of `bs` along `axis` (the reduction axis of the op):
 * one observer and one scale per block, symmetric int4 packed two per byte
 * (low nibble first, ONNX's order), and a DequantizeLinear-21 with axis and
 * block_size; scales have the weight's shape with ceil(D / bs) on `axis`. */
static int store_blocked(qrun *q, const char *name, const float *w, int32_t rank, const int64_t *dims, int axis,
                         int32_t bs, char **out)
{
    wgraph *g = q->g;
    const sy_quant_scheme_def *sch = q->rc->weights;
    int64_t n = 1, inner = 1, outer = 1, D = dims[axis], nb = (dims[axis] + bs - 1) / bs;
    for (int32_t i = 0; i < rank; i++) {
        n *= dims[i];
        if (i < axis)
            outer *= dims[i];
        if (i > axis)
            inner *= dims[i];
    }
    int64_t nsc = outer * nb * inner;
    uint8_t *packed = pz(&g->pl, (size_t)(n + 1) / 2 + 1);
    float *scales = pz(&g->pl, (size_t)nsc * sizeof *scales), *tmp = pz(&g->pl, (size_t)bs * sizeof *tmp);
    uint8_t *tq = pz(&g->pl, (size_t)bs * 2 + 2);
    if (!packed || !scales || !tmp || !tq)
        return -1;
    for (int64_t s = 0; s < nsc; s++) {
        int64_t o = s / (nb * inner), b = (s / inner) % nb, j = s % inner;
        int64_t a0 = b * bs, a1 = a0 + bs < D ? a0 + bs : D, cnt = 0;
        for (int64_t a = a0; a < a1; a++)
            tmp[cnt++] = w[(o * D + a) * inner + j];
        sy_observer *obs = NULL;
        sy_quant_params qp;
        memset(&qp, 0, sizeof qp);
        sy_tensor t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        t.dtype = SY_DT_FLOAT32;
        t.rank = 1;
        t.dims[0] = cnt;
        t.data = tmp;
        t.nbytes = (size_t)cnt * 4;
        t.name = name;
        sy_status *st = q->rc->observer_new(sch, SY_CALIB_MINMAX, 100.0, &obs);
        if (!st)
            st = sch->observer_update(obs, &t);
        if (!st)
            st = sch->observer_finalize(obs, &qp);
        if (!st && qp.zero_points && qp.zero_points[0] != 0)
            st = sy_status_create(SY_ERR_UNSUPPORTED, "block zero point %d; the int4 writer stores symmetric blocks",
                                  qp.zero_points[0]);
        if (!st)
            st = sch->quantize(tmp, (size_t)cnt, &qp, 0, tq);
        if (obs)
            sch->observer_release(obs);
        if (st) {
            seterr(q->err, sizeof q->err, "weight '%s': %s", name, sy_status_get_message(st));
            sy_status_free(st);
            q->rc->params_free(&qp);
            return 1;
        }
        scales[s] = qp.scales[0];
        q->rc->params_free(&qp);
        for (int64_t a = a0, k = 0; a < a1; a++, k++) {
            int64_t i = (o * D + a) * inner + j;
            uint8_t nib = (uint8_t)((tq[k / 2] >> (4 * (k & 1))) & 15);
            packed[i / 2] |= (uint8_t)(nib << (4 * (i & 1)));
        }
    }
    int64_t sdims[SY_MAX_RANK];
    memcpy(sdims, dims, (size_t)rank * sizeof *sdims);
    sdims[axis] = nb;
    char *qn = uniq(g, name, "q"), *sn = uniq(g, name, "scale"), *dn = uniq(g, name, "dq");
    add_init(g, mk_tensor(g, qn, storage_onnx(sch->storage), dims, (size_t)rank, packed, (size_t)(n + 1) / 2));
    add_init(g, mk_tensor(g, sn, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, sdims, (size_t)rank, scales,
                          (size_t)nsc * sizeof *scales));
    wnode *dq = add_node(g, "DequantizeLinear", uniq(g, name, "DQ"), 2, 1);
    if (!dq)
        return -1;
    dq->in[0] = qn;
    dq->in[1] = sn;
    dq->out[0] = dn;
    Onnx__AttributeProto *at[2] = {mk_attr_i(g, "axis", axis), mk_attr_i(g, "block_size", bs)};
    node_set_attrs(g, dq, at, 2);
    *out = dn;
    return g->pl.oom ? -1 : 0;
}

/* DequantizeLinear with block_size (and int4), and int16 Q/DQ, are opset 21
 * with IR 10. From 13, the ops whose inputs or meaning changed before 21 are
 * refused. */
static int raise_opset_21(wgraph *g, char *err, size_t elen)
{
    if (g->opset >= 21)
        return 0;
    static const char *const changed[] = {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL1",
                                          "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
                                          "GroupNormalization", "DFT", NULL};
    for (size_t i = 0; i < g->n_nodes; i++) {
        const wnode *n = &g->nodes[i];
        if (!n->dead && (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) && op_in(n->op, changed)) {
            seterr(err, elen, "node '%s' (%s): 4-bit blocks and 16-bit activations need opset 21, and raising opset %lld to 21 is not "
                   "supported for this op", n->name, n->op, (long long)g->opset);
            return 1;
        }
    }
    g->opset = 21;
    return 0;
}

/* Weights (input 1) of Conv, MatMul and Gemm, and the biases of Conv and
 * Gemm for fp16: stored by the weight-only recipe, activations untouched.
 * Blocks run along the reduction axis: MatMul axis rank-2, Gemm 0 (1 with
 * transB), Conv 1 (input channels; a Conv with one input channel per group
 * keeps float weights: a block of one costs a scale per weight). */
static int rewrite_weights(qrun *q, int32_t block, size_t *n_done)
{
    wgraph *g = q->g;
    size_t n0 = g->n_nodes, first_new = g->n_nodes;
    *n_done = 0;
    for (size_t i = 0; i < n0; i++) {
        wnode *n = &g->nodes[i];
        bool conv = !strcmp(n->op, "Conv"), mm = !strcmp(n->op, "MatMul"), gemm = !strcmp(n->op, "Gemm");
        if (n->dead || n->domain[0] || !(conv || mm || gemm))
            continue;
        for (size_t k = 1; k < n->nin && k < 3; k++) {
            if (!n->in[k][0] || !is_const_value(q, n->in[k]) || (k == 2 && (block > 0 || mm)))
                continue;
            int32_t rank;
            int64_t dims[SY_MAX_RANK];
            const float *w = const_data(q, n->in[k], &rank, dims);
            if (!w)
                continue;
            char *nn = NULL;
            int r;
            if (block > 0) {
                int axis = conv ? 1 : mm ? rank - 2 : (wattr_i(n, "transB", 0) ? 1 : 0);
                if (rank < 2 || dims[axis] < 2)
                    continue;
                r = store_blocked(q, n->in[k], w, rank, dims, axis, block, &nn);
            } else {
                r = store_fp16(q, n->in[k], w, rank, dims, &nn);
            }
            if (r)
                return r;
            g->nodes[i].in[k] = nn; /* add_node may have moved the array */
            n = &g->nodes[i];
            (*n_done)++;
        }
    }
    /* the new Cast / DequantizeLinear nodes read initializers only: first */
    size_t total = g->n_nodes, w = 0;
    wnode *ordered = pz(&g->pl, (total ? total : 1) * sizeof *ordered);
    if (!ordered)
        return -1;
    for (size_t i = first_new; i < total; i++)
        ordered[w++] = g->nodes[i];
    for (size_t i = 0; i < first_new; i++)
        ordered[w++] = g->nodes[i];
    g->nodes = ordered;
    g->cap_nodes = total;
    drop_unused(g);
    return g->pl.oom ? -1 : 0;
}

/* ======================================================================== */
/* running a model over the samples                                         */
/* ======================================================================== */

static sy_status *feed(sy_session *s, const sample *sm, size_t n_inputs)
{
    for (size_t k = 0; k < n_inputs; k++) {
        sy_tensor *t = NULL;
        SY_TRY(sy_tensor_read_file(sm->files[k], &t));
        sy_status *st = sy_session_set_input_by_index(s, k, t, SY_INPUT_COPY);
        sy_tensor_free(t);
        SY_TRY(st);
    }
    return NULL;
}

static size_t argmax(const float *v, size_t n)
{
    size_t b = 0;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[b])
            b = i;
    return b;
}

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard quantize MODEL --calib DIR [--scheme NAME] [--per-channel]\n"
            "                           [--method minmax|percentile] [--percentile P]\n"
            "                           [--config INI] -o OUT.onnx\n\n"
            "Post-training static quantization: runs the float MODEL over the calibration\n"
            "inputs, chooses scales and zero points with the scheme's observer, and writes\n"
            "a QDQ ONNX model (QuantizeLinear/DequantizeLinear pairs, quantized weights,\n"
            "int32 biases) that other ONNX runtimes load. Switchyard folds it into integer\n"
            "kernels at load. Ends with an accuracy report against fp32 on the calibration\n"
            "set: max abs error, relative error (||q - f|| / ||f||) and argmax agreement.\n\n"
            "  --calib DIR      folders with input_0.pb ... (or input_N.npy), e.g. the\n"
            "                   test_data_set_* of an ONNX model; DIR itself may be one;\n"
            "                   or .npy files, one sample each, for a one-input model\n"
            "  --scheme NAME    a recipe a quant_* plugin publishes: int8 (default), uint8,\n"
            "                   int16x8 ('switchyard plugins' lists quant_recipe.NAME)\n"
            "  --per-channel    weights per output channel (symmetric), bias per channel\n"
            "  --method M       activation observer: minmax (default) or percentile\n"
            "  --percentile P   percentile of the percentile method (default 99.99)\n"
            "  -o OUT.onnx      written through a temporary file and a rename\n");
}

int cmd_quantize(int argc, char **argv)
{
    const char *model_path = NULL, *calib = NULL, *scheme = "int8", *out_path = NULL, *config = NULL;
    bool per_channel = false;
    long block_size = 0; /* --block-size; 0: the recipe's */
    sy_calib_method method = SY_CALIB_MINMAX;
    double pct = 99.99;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--calib") && v) {
            calib = argv[++i];
        } else if (!strcmp(a, "--scheme") && v) {
            scheme = argv[++i];
        } else if (!strcmp(a, "--per-channel")) {
            per_channel = true;
        } else if (!strcmp(a, "--block-size") && v) {
            if ((block_size = cli_parse_long(argv[++i], 2, 65536)) < 0)
                return cli_usage_error("quantize", "--block-size expects an integer from 2 to 65536, got '%s'",
                                       argv[i]);
        } else if (!strcmp(a, "--method") && v) {
            const char *m = argv[++i];
            if (!strcmp(m, "minmax"))
                method = SY_CALIB_MINMAX;
            else if (!strcmp(m, "percentile"))
                method = SY_CALIB_PERCENTILE;
            else
                return cli_usage_error("quantize", "--method expects minmax or percentile, got '%s'", m);
        } else if (!strcmp(a, "--percentile") && v) {
            char *end;
            pct = strtod(argv[++i], &end);
            if (*end || !(pct > 50.0 && pct <= 100.0))
                return cli_usage_error("quantize", "--percentile expects a number in (50, 100], got '%s'", argv[i]);
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            out_path = argv[++i];
        } else if (!strcmp(a, "--config") && v) {
            config = argv[++i];
        } else if (a[0] != '-' && !model_path) {
            model_path = a;
        } else {
            return cli_usage_error("quantize", "unexpected argument '%s'", a);
        }
    }
    if (!model_path || !calib || !out_path)
        return cli_usage_error("quantize", "MODEL, --calib DIR and -o OUT.onnx are required");

    int rc = 1;
    sy_env *env = NULL;
    sy_model *aug = NULL, *qm = NULL;
    sy_session *s = NULL;
    uint8_t *file = NULL, *buf = NULL;
    wgraph g;
    memset(&g, 0, sizeof g);
    qrun q;
    memset(&q, 0, sizeof q);
    float **ref = NULL; /* [sample * n_out] reference outputs */
    size_t *ref_n = NULL;
    size_t n_samples = 0;
    sample *samples = NULL;
    char err[512] = "";

    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, "quantize");
    char ext[128];
    snprintf(ext, sizeof ext, "quant_recipe.%s", scheme);
    const sy_quant_recipe *rc_ = sy_get_extension(env, ext, SY_QUANT_RECIPE_VERSION);
    if (!rc_ || rc_->struct_size < sizeof *rc_) {
        fprintf(stderr, "switchyard: quantize: no loaded plugin publishes the scheme '%s' (extension %s); "
                        "'switchyard plugins' lists the quant_recipe.* extensions\n", scheme, ext);
        sy_env_release(env);
        return 1;
    }
    /* weight-only recipes: fp16 storage, or blocks of a 4-bit scheme */
    bool weight_only = !rc_->activations;
    int32_t block = rc_->block_size > 0 ? (block_size ? (int32_t)block_size : rc_->block_size) : 0;
    const char *refusal = NULL;
    if (weight_only && (!rc_->weights || (!rc_->fp16_storage && block <= 0)))
        refusal = "quantizes neither activations nor weights in a form this tool writes";
    else if (block_size && rc_->block_size <= 0)
        refusal = "is not block-wise: --block-size applies to block-wise schemes (int4)";
    else if (weight_only && per_channel)
        refusal = "quantizes weights only: --per-channel applies to the integer schemes (int8, uint8, int16x8)";
    if (refusal) {
        fprintf(stderr, "switchyard: quantize: scheme '%s' (%s) %s\n", scheme, rc_->description, refusal);
        sy_env_release(env);
        return 1;
    }
    q.rc = rc_;
    q.per_channel = per_channel;
    q.method = method;
    q.pct = pct;
    q.g = &g;

    /* read and decode */
    FILE *f = fopen(model_path, "rb");
    long flen = -1;
    if (f && !fseek(f, 0, SEEK_END))
        flen = ftell(f);
    if (!f || flen <= 0 || fseek(f, 0, SEEK_SET) || !(file = malloc((size_t)flen)) ||
        fread(file, 1, (size_t)flen, f) != (size_t)flen) {
        seterr(err, sizeof err, "%s: cannot read the model: %s", model_path, f ? "short read" : strerror(errno));
        if (f)
            fclose(f);
        goto done;
    }
    fclose(f);
    g.model = onnx__model_proto__unpack(NULL, (size_t)flen, file);
    if (!g.model || !g.model->graph) {
        seterr(err, sizeof err, "%s: not an ONNX model (protobuf decoding failed)", model_path);
        goto done;
    }
    if (!load_graph(&g))
        goto oom;
    int nf = fold_conv_affine(&g);
    if (nf < 0)
        goto oom;

    /* augmented model: every node output is a graph output */
    size_t n_extra = 0;
    size_t cap_extra = g.model->graph->n_input + 1;
    for (size_t i = 0; i < g.n_nodes; i++)
        cap_extra += g.nodes[i].nout;
    char **extra = pz(&g.pl, cap_extra * sizeof *extra);
    if (!extra)
        goto oom;
    for (size_t i = 0; i < g.model->graph->n_input; i++) {
        const char *nm = g.model->graph->input[i]->name;
        if (!find_init(&g, nm) && !is_graph_output(&g, nm))
            extra[n_extra++] = (char *)nm;
    }
    for (size_t i = 0; i < g.n_nodes; i++)
        if (!g.nodes[i].dead)
            for (size_t k = 0; k < g.nodes[i].nout; k++)
                if (g.nodes[i].out[k][0] && !is_graph_output(&g, g.nodes[i].out[k]))
                    extra[n_extra++] = g.nodes[i].out[k];
    size_t blen = 0;
    buf = pack_model(&g, extra, n_extra, &blen);
    if (!buf)
        goto oom;
    char *base = strdup(model_path);
    char *slash = base ? strrchr(base, '/') : NULL;
    if (slash)
        *slash = '\0';
    st = sy_model_load_buffer(env, buf, blen, model_path, slash ? base : ".", &aug);
    free(base);
    if (st) {
        rc = cli_fail(st, "quantize: loading the calibration copy of the model");
        goto done_silent;
    }
    size_t n_in = sy_model_input_count(aug), n_out = sy_model_output_count(aug);
    size_t n_orig_out = g.model->graph->n_output;
    if (find_samples(&g.pl, calib, n_in, &samples, &n_samples, err, sizeof err))
        goto done;
    st = sy_session_create(env, aug, NULL, &s);
    if (st) {
        rc = cli_fail(st, "quantize: calibration session");
        goto done_silent;
    }
    q.n_vals = n_out;
    q.vals = calloc(n_out + 1, sizeof *q.vals);
    ref = calloc(n_samples * n_orig_out + 1, sizeof *ref);
    ref_n = calloc(n_samples * n_orig_out + 1, sizeof *ref_n);
    if (!q.vals || !ref || !ref_n)
        goto oom;
    for (size_t o = 0; o < n_out; o++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_output_info(aug, o, &vi);
        q.vals[o].name = pstr(&g.pl, vi.name);
    }
    fprintf(stderr, "quantize: %s, scheme %s%s, %s observer, %zu calibration sample%s, %d conv fold%s\n",
            model_path, scheme, per_channel ? " (per-channel weights)" : "",
            method == SY_CALIB_PERCENTILE ? "percentile" : "minmax", n_samples, n_samples == 1 ? "" : "s", nf,
            nf == 1 ? "" : "s");
    for (size_t si = 0; si < n_samples; si++) {
        st = feed(s, &samples[si], n_in);
        if (!st)
            st = sy_session_run(s);
        if (st) {
            rc = cli_fail(st, samples[si].files[0]);
            goto done_silent;
        }
        for (size_t o = 0; o < n_out; o++) {
            const sy_tensor *t = NULL;
            if (sy_session_get_output(s, o, &t) || !t)
                continue;
            vinfo *v = &q.vals[o];
            size_t numel = (size_t)sy_tensor_numel(t);
            if (!v->seen) {
                v->seen = true;
                v->dtype = t->dtype;
                v->rank = t->rank;
                memcpy(v->dims, t->dims, sizeof v->dims);
                v->numel = numel;
                if (t->dtype == SY_DT_FLOAT32) {
                    v->data = pz(&g.pl, numel * 4 + 4);
                    if (!v->data)
                        goto oom;
                    memcpy(v->data, t->data, numel * 4);
                    /* weight-only recipes observe no activation */
                    st = weight_only ? NULL : rc_->observer_new(rc_->activations, method, pct, &v->obs);
                    if (st) {
                        rc = cli_fail(st, "quantize: observer");
                        goto done_silent;
                    }
                }
            } else if (t->dtype == SY_DT_FLOAT32 && (numel != v->numel || memcmp(v->data, t->data, numel * 4))) {
                v->varies = true;
            }
            if (v->obs) {
                st = rc_->activations->observer_update(v->obs, t);
                if (st) {
                    rc = cli_fail(st, "quantize: observer");
                    goto done_silent;
                }
            }
            if (o < n_orig_out && t->dtype == SY_DT_FLOAT32) {
                float *c = malloc(numel * 4 + 4);
                if (!c)
                    goto oom;
                memcpy(c, t->data, numel * 4);
                ref[si * n_orig_out + o] = c;
                ref_n[si * n_orig_out + o] = numel;
            }
        }
        progress("calibrating", si + 1, n_samples);
    }
    if (n_samples == 1)
        for (size_t o = 0; o < n_out; o++)
            q.vals[o].varies = true; /* one sample cannot tell constants apart: trust the graph */
    sy_session_release(s);
    s = NULL;
    sy_model_release(aug);
    aug = NULL;
    free(buf);
    buf = NULL;

    /* ranks for the opset upgrade (node order of the working graph) */
    int32_t *ranks = pz(&g.pl, (g.n_nodes + 1) * sizeof *ranks);
    if (!ranks)
        goto oom;
    for (size_t i = 0; i < g.n_nodes; i++) {
        vinfo *v = g.nodes[i].nout ? vfind(q.vals, q.n_vals, g.nodes[i].out[0]) : NULL;
        ranks[i] = v ? v->rank : -1;
    }
    int up = upgrade_opset(&g, ranks, err, sizeof err);
    /* int16/uint16 in QuantizeLinear/DequantizeLinear, like 4-bit blocks,
     * exist from opset 21 on; other runtimes refuse them at 13 */
    bool wide = rc_->activations &&
                (rc_->activations->storage == SY_DT_INT16 || rc_->activations->storage == SY_DT_UINT16);
    if (up == 0 && (block > 0 || wide))
        up = raise_opset_21(&g, err, sizeof err);
    if (up < 0)
        goto oom;
    if (up > 0)
        goto done;
    if (weight_only) {
        size_t n_w = 0;
        int r = rewrite_weights(&q, block, &n_w);
        if (r) {
            if (r > 0)
                seterr(err, sizeof err, "%s", q.err);
            else
                goto oom;
            goto done;
        }
        if (block > 0)
            printf("%zu weight tensors as int4 blocks of %d (DequantizeLinear-21, block_size %d)\n", n_w, (int)block,
                   (int)block);
        else
            printf("%zu weight tensors stored as float16 (Cast to float)\n", n_w);
    } else if (rewrite(&q)) {
        if (q.err[0])
            seterr(err, sizeof err, "%s", q.err);
        else
            goto oom;
        goto done;
    }
    buf = pack_model(&g, NULL, 0, &blen);
    if (!buf)
        goto oom;
    if (write_atomic(out_path, buf, blen, err, sizeof err))
        goto done;
    printf("wrote %s: %zu bytes (the float model: %ld bytes), opset %lld\n", out_path, blen, flen,
           (long long)g.opset);

    /* accuracy against fp32 */
    st = sy_model_load(env, out_path, &qm);
    if (!st)
        st = sy_session_create(env, qm, NULL, &s);
    if (st) {
        rc = cli_fail(st, "quantize: loading the written model");
        goto done_silent;
    }
    double max_abs = 0.0, num = 0.0, den = 0.0;
    size_t agree = 0, compared = 0;
    for (size_t si = 0; si < n_samples; si++) {
        st = feed(s, &samples[si], n_in);
        if (!st)
            st = sy_session_run(s);
        if (st) {
            rc = cli_fail(st, "quantize: running the written model");
            goto done_silent;
        }
        for (size_t o = 0; o < n_orig_out && o < sy_session_output_count(s); o++) {
            const sy_tensor *t = NULL;
            const float *r = ref[si * n_orig_out + o];
            if (sy_session_get_output(s, o, &t) || !t || !r || t->dtype != SY_DT_FLOAT32 ||
                (size_t)sy_tensor_numel(t) != ref_n[si * n_orig_out + o])
                continue;
            const float *y = t->data;
            size_t n = ref_n[si * n_orig_out + o];
            for (size_t i = 0; i < n; i++) {
                double d = fabs((double)y[i] - r[i]);
                if (d > max_abs)
                    max_abs = d;
                num += d * d;
                den += (double)r[i] * r[i];
            }
            if (o == 0) {
                compared++;
                agree += argmax(y, n) == argmax(r, n);
            }
        }
        progress("evaluating", si + 1, n_samples);
    }
    printf("accuracy against fp32 on %zu calibration sample%s:\n", n_samples, n_samples == 1 ? "" : "s");
    printf("  max abs error   %.6g\n", max_abs);
    printf("  relative error  %.6g (||q - f|| / ||f|| over all outputs)\n", den > 0 ? sqrt(num / den) : 0.0);
    printf("  argmax agrees   %zu/%zu (output 0)\n", agree, compared);
    rc = 0;
    goto done_silent;
oom:
    seterr(err, sizeof err, "out of memory");
done:
    fprintf(stderr, "switchyard: quantize: %s\n", err);
    rc = 1;
done_silent:
    sy_session_release(s);
    sy_model_release(qm);
    sy_model_release(aug);
    for (size_t v = 0; q.vals && v < q.n_vals; v++)
        if (q.vals[v].obs)
            rc_->activations->observer_release(q.vals[v].obs);
    free(q.vals);
    if (ref)
        for (size_t i = 0; i < n_samples * g.model->graph->n_output; i++)
            free(ref[i]);
    free(ref);
    free(ref_n);
    free(buf);
    if (g.model)
        onnx__model_proto__free_unpacked(g.model, NULL);
    free(file);
    pool_free(&g.pl);
    sy_env_release(env);
    return rc;
}
