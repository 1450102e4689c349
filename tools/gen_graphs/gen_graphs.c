/*
 * sy_gen_graphs: writes Switchyard's sample ONNX models and their reference
 * tensors, byte for byte the same on every run and every machine.
 *
 *   tiny_cnn.onnx           image[1,1,8,8] -> Conv -> Relu -> MaxPool -> Reshape -> Gemm -> Softmax -> probs[1,10]
 *   mlp.onnx                x[1,16] -> MatMul -> Add -> Relu -> MatMul -> Add -> y[1,10]
 *   elementwise_chain.onnx  x[1,64] -> (Add, Mul, Relu) repeated, N nodes in all -> y[1,64]
 *
 * Each model NAME also gets NAME/test_data_set_0/input_0.npy and output_0.npy:
 * a fixed input pattern and the output computed here by plain loops that
 * share nothing with Switchyard's kernels.
 *
 * The models are built as protobuf-c messages (code generated from
 * framework/proto/onnx.proto) and serialised with onnx__model_proto__pack.
 * Weights come from a 32-bit LCG; tensor bytes are written little-endian
 * explicitly; the reference uses no libm function whose last bit could vary
 * between C libraries (exp is computed here). graphs/CMakeLists.txt runs this
 * program in a test and compares its output with the committed files.
 */
#include "onnx.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IR_VERSION 8
#define OPSET 13
#define DEFAULT_CHAIN 32
#define PRODUCER "switchyard tools/gen_graphs"
#define PRODUCER_VERSION "1"

/* ---- allocation: everything lives until the program has written its files */
static void **g_allocs;
static size_t g_n_allocs, g_cap_allocs;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("sy_gen_graphs: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xalloc(size_t size)
{
    void *p = calloc(1, size ? size : 1);
    if (!p)
        die("out of memory");
    if (g_n_allocs == g_cap_allocs) {
        size_t cap = g_cap_allocs ? g_cap_allocs * 2 : 256;
        void **grown = realloc(g_allocs, cap * sizeof *grown);
        if (!grown)
            die("out of memory");
        g_allocs = grown;
        g_cap_allocs = cap;
    }
    g_allocs[g_n_allocs++] = p;
    return p;
}

static void free_all(void)
{
    for (size_t i = 0; i < g_n_allocs; i++)
        free(g_allocs[i]);
    free(g_allocs);
    g_allocs = NULL;
    g_n_allocs = g_cap_allocs = 0;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xalloc(n);
    memcpy(d, s, n);
    return d;
}

static char *xprintf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return xstrdup(buf);
}

/* ---- deterministic numbers --------------------------------------------- */
typedef struct lcg {
    uint32_t state;
} lcg;

/* Uniform in [lo, hi): the top 24 bits of a Numerical Recipes LCG step. The
 * arithmetic is exact in double and rounded once to float. */
static float lcg_uniform(lcg *g, double lo, double hi)
{
    g->state = g->state * 1664525u + 1013904223u;
    double u = (double)(g->state >> 8) / 16777216.0;
    return (float)(lo + (hi - lo) * u);
}

static void lcg_fill(lcg *g, float *dst, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = lcg_uniform(g, lo, hi);
}

/* exp by range reduction and a Taylor series: the same bits everywhere */
static double det_exp(double x)
{
    const double ln2 = 0.69314718055994530942;
    double k = floor(x / ln2 + 0.5);
    double r = x - k * ln2;
    double term = 1.0, sum = 1.0;
    for (int i = 1; i < 30; i++) {
        term = term * r / i;
        sum = sum + term;
    }
    return ldexp(sum, (int)k);
}

/* ---- ONNX message builders ---------------------------------------------- */
static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int64_t *copy_dims(const int64_t *dims, size_t n)
{
    int64_t *d = xalloc(n * sizeof *d);
    memcpy(d, dims, n * sizeof *d);
    return d;
}

static size_t numel(const int64_t *dims, size_t n)
{
    size_t c = 1;
    for (size_t i = 0; i < n; i++)
        c *= (size_t)dims[i];
    return c;
}

static Onnx__TensorProto *tensor_f32(const char *name, const int64_t *dims, size_t ndims, const float *data)
{
    Onnx__TensorProto *t = xalloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = xstrdup(name);
    t->n_dims = ndims;
    t->dims = copy_dims(dims, ndims);
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    size_t n = numel(dims, ndims);
    uint8_t *raw = xalloc(n * 4);
    for (size_t i = 0; i < n; i++)
        put_le32(raw + 4 * i, float_bits(data[i]));
    t->has_raw_data = 1;
    t->raw_data.len = n * 4;
    t->raw_data.data = raw;
    return t;
}

static Onnx__TensorProto *tensor_i64(const char *name, const int64_t *dims, size_t ndims, const int64_t *data)
{
    Onnx__TensorProto *t = xalloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = xstrdup(name);
    t->n_dims = ndims;
    t->dims = copy_dims(dims, ndims);
    t->has_data_type = 1;
    t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    size_t n = numel(dims, ndims);
    uint8_t *raw = xalloc(n * 8);
    for (size_t i = 0; i < n; i++)
        put_le64(raw + 8 * i, (uint64_t)data[i]);
    t->has_raw_data = 1;
    t->raw_data.len = n * 8;
    t->raw_data.data = raw;
    return t;
}

static Onnx__ValueInfoProto *value_info_f32(const char *name, const int64_t *dims, size_t ndims)
{
    Onnx__TensorShapeProto *shape = xalloc(sizeof *shape);
    onnx__tensor_shape_proto__init(shape);
    shape->n_dim = ndims;
    shape->dim = xalloc(ndims * sizeof *shape->dim);
    for (size_t i = 0; i < ndims; i++) {
        Onnx__TensorShapeProto__Dimension *d = xalloc(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        shape->dim[i] = d;
    }
    Onnx__TypeProto__Tensor *tt = xalloc(sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt->shape = shape;
    Onnx__TypeProto *tp = xalloc(sizeof *tp);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    Onnx__ValueInfoProto *vi = xalloc(sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = xstrdup(name);
    vi->type = tp;
    return vi;
}

static Onnx__AttributeProto *attr_new(const char *name, Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = xalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = xstrdup(name);
    a->has_type = 1;
    a->type = type;
    return a;
}

static Onnx__AttributeProto *attr_int(const char *name, int64_t v)
{
    Onnx__AttributeProto *a = attr_new(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
    return a;
}

static Onnx__AttributeProto *attr_ints(const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = attr_new(name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n;
    a->ints = copy_dims(v, n);
    return a;
}

/* a graph under construction: fixed-capacity arrays sized by the caller */
typedef struct graph {
    Onnx__GraphProto *proto;
    size_t cap_nodes;
} graph;

static graph graph_new(const char *name, size_t max_nodes, size_t max_inits)
{
    graph g;
    g.proto = xalloc(sizeof *g.proto);
    onnx__graph_proto__init(g.proto);
    g.proto->name = xstrdup(name);
    g.proto->node = xalloc(max_nodes * sizeof *g.proto->node);
    g.proto->initializer = xalloc(max_inits * sizeof *g.proto->initializer);
    g.proto->input = xalloc(4 * sizeof *g.proto->input);
    g.proto->output = xalloc(4 * sizeof *g.proto->output);
    g.cap_nodes = max_nodes;
    return g;
}

static void graph_input(graph *g, const char *name, const int64_t *dims, size_t ndims)
{
    g->proto->input[g->proto->n_input++] = value_info_f32(name, dims, ndims);
}

static void graph_output(graph *g, const char *name, const int64_t *dims, size_t ndims)
{
    g->proto->output[g->proto->n_output++] = value_info_f32(name, dims, ndims);
}

static void graph_init(graph *g, Onnx__TensorProto *t)
{
    g->proto->initializer[g->proto->n_initializer++] = t;
}

/* inputs and outputs are NULL-terminated lists of names; attrs NULL-terminated */
static void graph_node(graph *g, const char *op, const char *name, const char *const *inputs,
                       const char *const *outputs, Onnx__AttributeProto *const *attrs)
{
    if (g->proto->n_node == g->cap_nodes)
        die("internal error: graph '%s' has more nodes than planned", g->proto->name);
    Onnx__NodeProto *n = xalloc(sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = xstrdup(op);
    n->name = xstrdup(name);
    while (inputs[n->n_input])
        n->n_input++;
    n->input = xalloc(n->n_input * sizeof *n->input);
    for (size_t i = 0; i < n->n_input; i++)
        n->input[i] = xstrdup(inputs[i]);
    while (outputs[n->n_output])
        n->n_output++;
    n->output = xalloc(n->n_output * sizeof *n->output);
    for (size_t i = 0; i < n->n_output; i++)
        n->output[i] = xstrdup(outputs[i]);
    while (attrs && attrs[n->n_attribute])
        n->n_attribute++;
    n->attribute = xalloc(n->n_attribute * sizeof *n->attribute);
    for (size_t i = 0; i < n->n_attribute; i++)
        n->attribute[i] = attrs[i];
    g->proto->node[g->proto->n_node++] = n;
}

/* ---- files ---------------------------------------------------------------- */
static void mkdirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf)
        die("path too long: %s", path);
    strcpy(buf, path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                die("cannot create directory '%s': %s", buf, strerror(errno));
            *p = saved;
            if (!saved)
                break;
        }
    }
}

/* Written to PATH.tmp and renamed: a reader never sees half a file. */
static void write_file(const char *path, const void *data, size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        die("cannot write '%s': %s", tmp, strerror(errno));
    if ((len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) {
        int e = errno;
        unlink(tmp);
        die("cannot write '%s': %s", tmp, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        die("cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
    }
    printf("wrote %s (%zu bytes)\n", path, len);
}

static void write_model(const char *dir, const char *name, graph *g, const char *doc)
{
    Onnx__OperatorSetIdProto *opset = xalloc(sizeof *opset);
    onnx__operator_set_id_proto__init(opset);
    opset->domain = xstrdup("");
    opset->has_version = 1;
    opset->version = OPSET;
    Onnx__OperatorSetIdProto **opsets = xalloc(sizeof *opsets);
    opsets[0] = opset;

    Onnx__ModelProto m;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1;
    m.ir_version = IR_VERSION;
    m.n_opset_import = 1;
    m.opset_import = opsets;
    m.producer_name = xstrdup(PRODUCER);
    m.producer_version = xstrdup(PRODUCER_VERSION);
    m.has_model_version = 1;
    m.model_version = 1;
    m.doc_string = xstrdup(doc);
    m.graph = g->proto;

    size_t len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = xalloc(len);
    if (onnx__model_proto__pack(&m, buf) != len)
        die("internal error: packed size of %s changed while packing", name);
    char *path = xprintf("%s/%s.onnx", dir, name);
    write_file(path, buf, len);
}

/* NumPy .npy version 1.0: magic, little-endian u16 header length, a Python
 * dict literal padded with spaces to a multiple of 64 bytes and ending in a
 * newline, then the data, little-endian float32. */
static void write_npy_f32(const char *path, const float *data, const int64_t *dims, size_t ndims)
{
    char shape[128] = "";
    size_t sl = 0;
    for (size_t i = 0; i < ndims; i++)
        sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (ndims == 1)
        snprintf(shape + sl, sizeof shape - sl, ",");
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
    size_t header = (size_t)dl + 1; /* + '\n' */
    size_t total = 10 + header;
    size_t pad = (64 - total % 64) % 64;
    header += pad;
    size_t n = numel(dims, ndims);
    size_t len = 10 + header + 4 * n;
    uint8_t *buf = xalloc(len);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (uint8_t)(header & 0xff);
    buf[9] = (uint8_t)(header >> 8);
    memcpy(buf + 10, dict, (size_t)dl);
    memset(buf + 10 + dl, ' ', pad);
    buf[10 + header - 1] = '\n';
    for (size_t i = 0; i < n; i++)
        put_le32(buf + 10 + header + 4 * i, float_bits(data[i]));
    write_file(path, buf, len);
}

static void write_test_data(const char *dir, const char *name, const float *in, const int64_t *in_dims,
                            size_t in_nd, const float *out, const int64_t *out_dims, size_t out_nd)
{
    char *tdir = xprintf("%s/%s/test_data_set_0", dir, name);
    mkdirs(tdir);
    write_npy_f32(xprintf("%s/input_0.npy", tdir), in, in_dims, in_nd);
    write_npy_f32(xprintf("%s/output_0.npy", tdir), out, out_dims, out_nd);
}

/* ---- reference computations: plain loops, double accumulation, each layer's
 * output rounded to float as a float32 runtime stores it ------------------- */
static void ref_conv2d(const float *x, int c_in, int h, int w, const float *wt, const float *b, int c_out, int k,
                       int pad, float *y)
{
    for (int co = 0; co < c_out; co++)
        for (int oy = 0; oy < h; oy++)
            for (int ox = 0; ox < w; ox++) {
                double acc = b[co];
                for (int ci = 0; ci < c_in; ci++)
                    for (int ky = 0; ky < k; ky++)
                        for (int kx = 0; kx < k; kx++) {
                            int iy = oy + ky - pad, ix = ox + kx - pad;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                continue;
                            double prod = (double)x[(ci * h + iy) * w + ix] * wt[((co * c_in + ci) * k + ky) * k + kx];
                            acc = acc + prod;
                        }
                y[(co * h + oy) * w + ox] = (float)acc;
            }
}

static void ref_relu(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] < 0.0f)
            x[i] = 0.0f;
}

static void ref_maxpool2x2(const float *x, int c, int h, int w, float *y)
{
    for (int ch = 0; ch < c; ch++)
        for (int oy = 0; oy < h / 2; oy++)
            for (int ox = 0; ox < w / 2; ox++) {
                float m = x[(ch * h + 2 * oy) * w + 2 * ox];
                for (int dy = 0; dy < 2; dy++)
                    for (int dx = 0; dx < 2; dx++) {
                        float v = x[(ch * h + 2 * oy + dy) * w + 2 * ox + dx];
                        if (v > m)
                            m = v;
                    }
                y[(ch * (h / 2) + oy) * (w / 2) + ox] = m;
            }
}

/* y[n] = sum_k x[k] * W[k][n] + b[n]; W row-major [k_dim][n_dim], or [n_dim][k_dim] when transposed */
static void ref_dense(const float *x, int k_dim, const float *wt, bool wt_transposed, const float *b, int n_dim,
                      float *y)
{
    for (int n = 0; n < n_dim; n++) {
        double acc = 0.0;
        for (int k = 0; k < k_dim; k++) {
            double prod = (double)x[k] * (wt_transposed ? wt[n * k_dim + k] : wt[k * n_dim + n]);
            acc = acc + prod;
        }
        y[n] = (float)(acc + b[n]);
    }
}

static void ref_softmax(const float *x, int n, float *y)
{
    double m = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > m)
            m = x[i];
    double e[64], sum = 0.0;
    for (int i = 0; i < n; i++) {
        e[i] = det_exp((double)x[i] - m);
        sum = sum + e[i];
    }
    for (int i = 0; i < n; i++)
        y[i] = (float)(e[i] / sum);
}

/* ---- the models ------------------------------------------------------------ */
static void gen_tiny_cnn(const char *dir)
{
    enum { C_OUT = 4, H = 8, W = 8, K = 3, CLASSES = 10, FLAT = C_OUT * (H / 2) * (W / 2) };
    lcg g = {0x5317c0deu};
    float conv_w[C_OUT * K * K], conv_b[C_OUT], fc_w[CLASSES * FLAT], fc_b[CLASSES];
    lcg_fill(&g, conv_w, C_OUT * K * K, -0.5, 0.5);
    lcg_fill(&g, conv_b, C_OUT, -0.1, 0.1);
    lcg_fill(&g, fc_w, CLASSES * FLAT, -0.25, 0.25);
    lcg_fill(&g, fc_b, CLASSES, -0.1, 0.1);

    graph gr = graph_new("tiny_cnn", 6, 5);
    const int64_t in_dims[] = {1, 1, H, W}, out_dims[] = {1, CLASSES};
    const int64_t conv_w_dims[] = {C_OUT, 1, K, K}, conv_b_dims[] = {C_OUT};
    const int64_t fc_w_dims[] = {CLASSES, FLAT}, fc_b_dims[] = {CLASSES};
    const int64_t shape_dims[] = {2}, shape_val[] = {1, FLAT};
    graph_input(&gr, "image", in_dims, 4);
    graph_output(&gr, "probs", out_dims, 2);
    graph_init(&gr, tensor_f32("conv.W", conv_w_dims, 4, conv_w));
    graph_init(&gr, tensor_f32("conv.B", conv_b_dims, 1, conv_b));
    graph_init(&gr, tensor_i64("flatten.shape", shape_dims, 1, shape_val));
    graph_init(&gr, tensor_f32("fc.W", fc_w_dims, 2, fc_w));
    graph_init(&gr, tensor_f32("fc.B", fc_b_dims, 1, fc_b));

    const int64_t k33[] = {K, K}, pads1[] = {1, 1, 1, 1}, ones[] = {1, 1}, k22[] = {2, 2};
    graph_node(&gr, "Conv", "conv", (const char *[]){"image", "conv.W", "conv.B", NULL},
               (const char *[]){"conv_out", NULL},
               (Onnx__AttributeProto *[]){attr_ints("kernel_shape", k33, 2), attr_ints("pads", pads1, 4),
                                          attr_ints("strides", ones, 2), attr_ints("dilations", ones, 2),
                                          attr_int("group", 1), NULL});
    graph_node(&gr, "Relu", "relu", (const char *[]){"conv_out", NULL}, (const char *[]){"relu_out", NULL}, NULL);
    graph_node(&gr, "MaxPool", "pool", (const char *[]){"relu_out", NULL}, (const char *[]){"pool_out", NULL},
               (Onnx__AttributeProto *[]){attr_ints("kernel_shape", k22, 2), attr_ints("strides", k22, 2), NULL});
    graph_node(&gr, "Reshape", "flatten", (const char *[]){"pool_out", "flatten.shape", NULL},
               (const char *[]){"flat", NULL}, NULL);
    graph_node(&gr, "Gemm", "fc", (const char *[]){"flat", "fc.W", "fc.B", NULL}, (const char *[]){"logits", NULL},
               (Onnx__AttributeProto *[]){attr_int("transB", 1), NULL});
    graph_node(&gr, "Softmax", "softmax", (const char *[]){"logits", NULL}, (const char *[]){"probs", NULL},
               (Onnx__AttributeProto *[]){attr_int("axis", 1), NULL});
    write_model(dir, "tiny_cnn", &gr,
                "Switchyard sample: 8x8 one-channel image -> 10 class probabilities. Fixed pseudo-random "
                "weights (LCG); not trained.");

    /* input: a ring on a faint diagonal ramp */
    float image[H * W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int dy = 2 * y - 7, dx = 2 * x - 7; /* twice the distance from the centre (3.5, 3.5) */
            int r2 = dx * dx + dy * dy;
            image[y * W + x] = (r2 >= 16 && r2 <= 40) ? 1.0f : (float)((x + 2 * y) % 5) * 0.125f;
        }
    float conv[C_OUT * H * W], pool[FLAT], logits[CLASSES], probs[CLASSES];
    ref_conv2d(image, 1, H, W, conv_w, conv_b, C_OUT, K, 1, conv);
    ref_relu(conv, C_OUT * H * W);
    ref_maxpool2x2(conv, C_OUT, H, W, pool);
    ref_dense(pool, FLAT, fc_w, true, fc_b, CLASSES, logits); /* Reshape is a no-op on the data */
    ref_softmax(logits, CLASSES, probs);
    write_test_data(dir, "tiny_cnn", image, in_dims, 4, probs, out_dims, 2);
}

static void gen_mlp(const char *dir)
{
    enum { IN = 16, HID = 32, OUT = 10 };
    lcg g = {0x00c0ffeeu};
    float w1[IN * HID], b1[HID], w2[HID * OUT], b2[OUT];
    lcg_fill(&g, w1, IN * HID, -0.5, 0.5);
    lcg_fill(&g, b1, HID, -0.1, 0.1);
    lcg_fill(&g, w2, HID * OUT, -0.35, 0.35);
    lcg_fill(&g, b2, OUT, -0.1, 0.1);

    graph gr = graph_new("mlp", 5, 4);
    const int64_t in_dims[] = {1, IN}, out_dims[] = {1, OUT};
    const int64_t w1_dims[] = {IN, HID}, b1_dims[] = {HID}, w2_dims[] = {HID, OUT}, b2_dims[] = {OUT};
    graph_input(&gr, "x", in_dims, 2);
    graph_output(&gr, "y", out_dims, 2);
    graph_init(&gr, tensor_f32("fc1.W", w1_dims, 2, w1));
    graph_init(&gr, tensor_f32("fc1.B", b1_dims, 1, b1));
    graph_init(&gr, tensor_f32("fc2.W", w2_dims, 2, w2));
    graph_init(&gr, tensor_f32("fc2.B", b2_dims, 1, b2));
    graph_node(&gr, "MatMul", "fc1.matmul", (const char *[]){"x", "fc1.W", NULL}, (const char *[]){"h1", NULL},
               NULL);
    graph_node(&gr, "Add", "fc1.add", (const char *[]){"h1", "fc1.B", NULL}, (const char *[]){"h1b", NULL}, NULL);
    graph_node(&gr, "Relu", "relu", (const char *[]){"h1b", NULL}, (const char *[]){"h1r", NULL}, NULL);
    graph_node(&gr, "MatMul", "fc2.matmul", (const char *[]){"h1r", "fc2.W", NULL}, (const char *[]){"h2", NULL},
               NULL);
    graph_node(&gr, "Add", "fc2.add", (const char *[]){"h2", "fc2.B", NULL}, (const char *[]){"y", NULL}, NULL);
    write_model(dir, "mlp", &gr,
                "Switchyard sample: 16 -> 32 -> 10 perceptron (MatMul, Add, Relu). Fixed pseudo-random "
                "weights (LCG); not trained.");

    float x[IN], h[HID], y[OUT];
    for (int i = 0; i < IN; i++)
        x[i] = (float)(i % 5) * 0.25f - 0.5f;
    /* MatMul then Add are two float32 ops in the graph: round in between */
    float zero_h[HID] = {0}, zero_o[OUT] = {0};
    ref_dense(x, IN, w1, false, zero_h, HID, h);
    for (int i = 0; i < HID; i++)
        h[i] = h[i] + b1[i];
    ref_relu(h, HID);
    ref_dense(h, HID, w2, false, zero_o, OUT, y);
    for (int i = 0; i < OUT; i++)
        y[i] = y[i] + b2[i];
    write_test_data(dir, "mlp", x, in_dims, 2, y, out_dims, 2);
}

/* The training sample (docs/training.md): a small CNN of seed 001's
 * FP32-trainable operators only, untrained (He-uniform weights, zero
 * biases): Concat three times (exactly two inputs each) copies the image
 * into 8 channels, a depthwise 3x3 Conv (group = in = out channels, stride
 * 1, no bias: the seed's FP32 Conv row) filters each, Relu, Flatten, then
 * FullyConnected (Gemm, B transposed) 6272 -> 64, Relu, 64 -> 10, and a
 * Softmax for inference (the training builder reads its input as logits). */
static void gen_fashion_cnn(const char *dir)
{
    enum { C = 8, HW = 28, FLAT = C * HW * HW, HID = 64, OUT = 10 };
    lcg g = {0x0fa5410du};
    static float wc[C * 9], w1[HID * FLAT], b1[HID], w2[OUT * HID], b2[OUT];
    /* He-uniform: U(-sqrt(6 / fan_in), +sqrt(6 / fan_in)) */
    lcg_fill(&g, wc, C * 9, -0.8164965809, 0.8164965809);
    lcg_fill(&g, w1, (size_t)HID * FLAT, -0.0309279, 0.0309279);
    lcg_fill(&g, w2, (size_t)OUT * HID, -0.3061862, 0.3061862);
    memset(b1, 0, sizeof b1);
    memset(b2, 0, sizeof b2);

    graph gr = graph_new("fashion_cnn", 10, 5);
    const int64_t in_dims[] = {1, 1, HW, HW}, out_dims[] = {1, OUT};
    const int64_t wc_dims[] = {C, 1, 3, 3}, w1_dims[] = {HID, FLAT}, b1_dims[] = {HID}, w2_dims[] = {OUT, HID},
                  b2_dims[] = {OUT};
    graph_input(&gr, "image", in_dims, 4);
    graph_output(&gr, "probs", out_dims, 2);
    graph_init(&gr, tensor_f32("dwconv.W", wc_dims, 4, wc));
    graph_init(&gr, tensor_f32("fc1.W", w1_dims, 2, w1));
    graph_init(&gr, tensor_f32("fc1.B", b1_dims, 1, b1));
    graph_init(&gr, tensor_f32("fc2.W", w2_dims, 2, w2));
    graph_init(&gr, tensor_f32("fc2.B", b2_dims, 1, b2));
    const int64_t pads[] = {1, 1, 1, 1}, kernel[] = {3, 3};
    graph_node(&gr, "Concat", "copy2", (const char *[]){"image", "image", NULL}, (const char *[]){"x2", NULL},
               (Onnx__AttributeProto *[]){attr_int("axis", 1), NULL});
    graph_node(&gr, "Concat", "copy4", (const char *[]){"x2", "x2", NULL}, (const char *[]){"x4", NULL},
               (Onnx__AttributeProto *[]){attr_int("axis", 1), NULL});
    graph_node(&gr, "Concat", "copy8", (const char *[]){"x4", "x4", NULL}, (const char *[]){"x8", NULL},
               (Onnx__AttributeProto *[]){attr_int("axis", 1), NULL});
    graph_node(&gr, "Conv", "dwconv", (const char *[]){"x8", "dwconv.W", NULL}, (const char *[]){"c", NULL},
               (Onnx__AttributeProto *[]){attr_int("group", C), attr_ints("kernel_shape", kernel, 2),
                                          attr_ints("pads", pads, 4), NULL});
    graph_node(&gr, "Relu", "relu1", (const char *[]){"c", NULL}, (const char *[]){"cr", NULL}, NULL);
    graph_node(&gr, "Flatten", "flatten", (const char *[]){"cr", NULL}, (const char *[]){"f", NULL},
               (Onnx__AttributeProto *[]){attr_int("axis", 1), NULL});
    graph_node(&gr, "Gemm", "fc1", (const char *[]){"f", "fc1.W", "fc1.B", NULL}, (const char *[]){"h", NULL},
               (Onnx__AttributeProto *[]){attr_int("transB", 1), NULL});
    graph_node(&gr, "Relu", "relu2", (const char *[]){"h", NULL}, (const char *[]){"hr", NULL}, NULL);
    graph_node(&gr, "Gemm", "fc2", (const char *[]){"hr", "fc2.W", "fc2.B", NULL}, (const char *[]){"logits", NULL},
               (Onnx__AttributeProto *[]){attr_int("transB", 1), NULL});
    graph_node(&gr, "Softmax", "softmax", (const char *[]){"logits", NULL}, (const char *[]){"probs", NULL},
               (Onnx__AttributeProto *[]){attr_int("axis", 1), NULL});
    write_model(dir, "fashion_cnn", &gr,
                "Switchyard training sample: Fashion-MNIST classifier of seed 001 FP32-trainable ops (Concat, "
                "depthwise Conv, Relu, Flatten, Gemm); untrained He-uniform weights (LCG). Train it with "
                "'switchyard train' (docs/training.md).");
}

static void gen_chain(const char *dir, long n_nodes)
{
    enum { WIDTH = 64 };
    lcg g = {0x0000c4a1u};
    float bias[WIDTH], scale[WIDTH];
    lcg_fill(&g, bias, WIDTH, -0.25, 0.25);
    lcg_fill(&g, scale, WIDTH, 0.5, 1.0); /* < 1: values stay bounded over any length */

    graph gr = graph_new("elementwise_chain", (size_t)n_nodes, 2);
    const int64_t dims[] = {1, WIDTH}, c_dims[] = {WIDTH};
    graph_input(&gr, "x", dims, 2);
    graph_output(&gr, "y", dims, 2);
    graph_init(&gr, tensor_f32("bias", c_dims, 1, bias));
    graph_init(&gr, tensor_f32("scale", c_dims, 1, scale));
    static const char *const ops[] = {"Add", "Mul", "Relu"};
    char *prev = xstrdup("x");
    for (long i = 0; i < n_nodes; i++) {
        const char *op = ops[i % 3];
        char *out = i + 1 == n_nodes ? xstrdup("y") : xprintf("t%ld", i);
        char *name = xprintf("n%ld_%s", i, op);
        if (i % 3 == 2)
            graph_node(&gr, op, name, (const char *[]){prev, NULL}, (const char *[]){out, NULL}, NULL);
        else
            graph_node(&gr, op, name, (const char *[]){prev, i % 3 == 0 ? "bias" : "scale", NULL},
                       (const char *[]){out, NULL}, NULL);
        prev = out;
    }
    char *doc = xprintf("Switchyard sample: %ld elementwise nodes (Add bias, Mul scale, Relu, repeated) on a "
                        "[1,%d] tensor; measures per-node dispatch cost.",
                        n_nodes, WIDTH);
    write_model(dir, "elementwise_chain", &gr, doc);

    /* float32 elementwise ops round once each: the reference is exact */
    float x[WIDTH], y[WIDTH];
    for (int i = 0; i < WIDTH; i++)
        x[i] = y[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    for (long i = 0; i < n_nodes; i++)
        for (int k = 0; k < WIDTH; k++) {
            if (i % 3 == 0)
                y[k] = y[k] + bias[k];
            else if (i % 3 == 1)
                y[k] = y[k] * scale[k];
            else if (y[k] < 0.0f)
                y[k] = 0.0f;
        }
    write_test_data(dir, "elementwise_chain", x, dims, 2, y, dims, 2);
}

/* ---- command line ------------------------------------------------------------ */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: sy_gen_graphs --out-dir DIR [--only NAME] [--chain N]\n\n"
            "Writes Switchyard's sample ONNX models (IR %d, opset %d) with deterministic\n"
            "weights, and for each NAME a reference NAME/test_data_set_0/{input_0,output_0}.npy:\n\n"
            "  tiny_cnn           Conv, Relu, MaxPool, Reshape, Gemm, Softmax: image[1,1,8,8] -> probs[1,10]\n"
            "  mlp                MatMul, Add, Relu, MatMul, Add: x[1,16] -> y[1,10]\n"
            "  elementwise_chain  N nodes of Add/Mul/Relu on x[1,64] -> y[1,64]\n\n"
            "  --out-dir DIR  where to write (the committed copies live in graphs/)\n"
            "  --only NAME    write only this model\n"
            "  --chain N      nodes in elementwise_chain (default %d; 10000 for the dispatch benchmark)\n",
            IR_VERSION, OPSET, DEFAULT_CHAIN);
}

int main(int argc, char **argv)
{
    const char *out_dir = NULL, *only = NULL;
    long chain = DEFAULT_CHAIN;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--out-dir") && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (!strcmp(a, "--only") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(a, "--chain") && i + 1 < argc) {
            char *end;
            errno = 0;
            chain = strtol(argv[++i], &end, 10);
            if (errno || *end || chain < 1 || chain > 10000000) {
                fprintf(stderr, "sy_gen_graphs: --chain expects an integer from 1 to 10000000, got '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "sy_gen_graphs: unexpected argument '%s'\n\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!out_dir) {
        fprintf(stderr, "sy_gen_graphs: --out-dir is required\n\n");
        usage(stderr);
        return 2;
    }
    if (only && strcmp(only, "tiny_cnn") && strcmp(only, "mlp") && strcmp(only, "elementwise_chain") &&
        strcmp(only, "fashion_cnn")) {
        fprintf(stderr, "sy_gen_graphs: --only '%s': expected tiny_cnn, mlp, elementwise_chain or fashion_cnn\n",
                only);
        return 2;
    }
    mkdirs(out_dir);
    if (!only || !strcmp(only, "tiny_cnn"))
        gen_tiny_cnn(out_dir);
    if (!only || !strcmp(only, "mlp"))
        gen_mlp(out_dir);
    if (!only || !strcmp(only, "elementwise_chain"))
        gen_chain(out_dir, chain);
    if (!only || !strcmp(only, "fashion_cnn"))
        gen_fashion_cnn(out_dir);
    free_all();
    return 0;
}
