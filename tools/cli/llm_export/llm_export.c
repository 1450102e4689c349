/*
 * switchyard llm-export: writes an LLM bundle from a llama2.c checkpoint.
 *
 * Every graph is built as protobuf-c messages (framework/proto/onnx.proto)
 * with standard ONNX ops at opset 17 (Gather, MatMul, Mul, Add, Sub, Div,
 * Sqrt, Reciprocal, Neg, Exp, Reshape, Transpose, Split, Concat, Softmax,
 * Cast), plus, by default (--attention fused), one CausalAttention node per
 * layer in the "switchyard.llm" domain (plugins/ops_llm), which replaces the
 * Concat/MatMul/Div/Add/Softmax/MatMul chain with the same arithmetic over
 * the unmasked KV columns only. The arithmetic follows the llama2.c forward pass operation by
 * operation (RMSNorm as sum of squares / dim + eps, 1/sqrt, x*s*w; SiLU as
 * x * 1/(1+exp(-x)); interleaved RoPE; scores / sqrt(head_dim)), so the
 * logits match a plain C loop closely.
 *
 * The I/O contract (spec/llm.md section 1.1):
 *   input_ids int32 [1,AR] (shard 1) or hidden_states_{i-1} [1,AR,dim]
 *   position_ids_cos / position_ids_sin [1,1,AR,head_dim/2]
 *   attention_mask [1,1,AR,CL] additive float
 *   past_key_L_in [H_kv,1,hd,CL-AR] (keys transposed), past_value_L_in [H_kv,1,CL-AR,hd]
 *   -> hidden_states_i [1,AR,dim] or logits [1,AR,vocab],
 *      past_key_L_out [H_kv,1,hd,AR], past_value_L_out [H_kv,1,AR,hd]
 * Weights: once, in weights.bin, referenced by every graph as external data.
 */
#include "llm_export.h"
#include "onnx.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OPSET 17
#define IR_VERSION 8
#define WEIGHTS_FILE "weights.bin"
#define TOKENIZER_FILE "tokenizer.bin"
#define LLM_DOMAIN "switchyard.llm" /* plugins/ops_llm */

/* ---- allocation: one list, freed at the end ------------------------------ */
typedef struct pool {
    void **p;
    size_t n, cap;
    bool oom;
} pool;

static void *palloc(pool *pl, size_t size)
{
    if (pl->oom)
        return NULL;
    if (pl->n == pl->cap) {
        size_t cap = pl->cap ? pl->cap * 2 : 1024;
        void **grown = realloc(pl->p, cap * sizeof *grown);
        if (!grown) {
            pl->oom = true;
            return NULL;
        }
        pl->p = grown;
        pl->cap = cap;
    }
    void *p = calloc(1, size ? size : 1);
    if (!p) {
        pl->oom = true;
        return NULL;
    }
    pl->p[pl->n++] = p;
    return p;
}

static void pool_free(pool *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    free(pl->p);
    memset(pl, 0, sizeof *pl);
}

static char *pstrdup(pool *pl, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = palloc(pl, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static char *pprintf(pool *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *pprintf(pool *pl, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return pstrdup(pl, buf);
}

/* ---- errors --------------------------------------------------------------- */
typedef struct ectx {
    char *buf;
    size_t len;
    bool failed;
} ectx;

static int fail(ectx *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ectx *e, const char *fmt, ...)
{
    if (!e->failed && e->buf && e->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->buf, e->len, fmt, ap);
        va_end(ap);
    }
    e->failed = true;
    return -1;
}

/* ---- files ---------------------------------------------------------------- */
static int read_file(ectx *e, const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(e, "%s: cannot open: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return fail(e, "%s: cannot seek: %s", path, strerror(errno));
    }
    long sz = ftell(f);
    if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return fail(e, "%s: cannot size: %s", path, strerror(errno));
    }
    uint8_t *buf = malloc((size_t)sz + 1);
    if (!buf) {
        fclose(f);
        return fail(e, "%s: out of memory (%ld bytes)", path, sz);
    }
    if (sz && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        free(buf);
        fclose(f);
        return fail(e, "%s: short read", path);
    }
    fclose(f);
    *data = buf;
    *size = (size_t)sz;
    return 0;
}

/* PATH.tmp then rename: no half-written file under the final name. */
static int write_file(ectx *e, const char *path, const void *a, size_t alen, const void *b, size_t blen)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return fail(e, "%s: path too long", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return fail(e, "%s: cannot write: %s", tmp, strerror(errno));
    bool ok = (!alen || fwrite(a, 1, alen, f) == alen) && (!blen || fwrite(b, 1, blen, f) == blen);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        return fail(e, "%s: cannot write: %s", path, strerror(err));
    }
    return 0;
}

static int mkdirs(ectx *e, const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf)
        return fail(e, "%s: path too long", path);
    strcpy(buf, path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (buf[0] && mkdir(buf, 0777) != 0 && errno != EEXIST)
                return fail(e, "%s: cannot create directory: %s", buf, strerror(errno));
            *p = saved;
            if (!saved)
                break;
        }
    }
    return 0;
}

static int32_t rd_i32(const uint8_t *p) { return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24); }

static float rd_f32(const uint8_t *p)
{
    uint32_t u = (uint32_t)rd_i32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- checkpoint ------------------------------------------------------------ */
typedef struct ckpt {
    llm_ckpt_header h;
    bool shared_cls;
    const uint8_t *base; /* f32 arrays after the header */
    size_t off_tok, off_rms_att, off_wq, off_wk, off_wv, off_wo, off_rms_ffn, off_w1, off_w2, off_w3, off_rms_final,
        off_cls; /* in floats from base */
} ckpt;

static int parse_ckpt(ectx *e, const char *path, const uint8_t *d, size_t size, ckpt *c)
{
    if (size < 28)
        return fail(e, "%s: %zu bytes is too short for a llama2.c checkpoint header (28 bytes)", path, size);
    llm_ckpt_header *h = &c->h;
    h->dim = rd_i32(d);
    h->hidden_dim = rd_i32(d + 4);
    h->n_layers = rd_i32(d + 8);
    h->n_heads = rd_i32(d + 12);
    h->n_kv_heads = rd_i32(d + 16);
    h->vocab_size = rd_i32(d + 20);
    h->seq_len = rd_i32(d + 24);
    c->shared_cls = h->vocab_size > 0;
    int32_t vocab = h->vocab_size > 0 ? h->vocab_size : -h->vocab_size;
    if (h->dim <= 0 || h->dim > 65536 || h->hidden_dim <= 0 || h->hidden_dim > 1 << 20 || h->n_layers <= 0 ||
        h->n_layers > 1024 || h->n_heads <= 0 || h->n_kv_heads <= 0 || h->n_kv_heads > h->n_heads ||
        h->n_heads % h->n_kv_heads || h->dim % h->n_heads || vocab <= 0 || vocab > 1 << 22 || h->seq_len <= 0 ||
        h->seq_len > 1 << 20)
        return fail(e,
                    "%s: header is not a llama2.c checkpoint (dim %d, hidden_dim %d, n_layers %d, n_heads %d, "
                    "n_kv_heads %d, vocab_size %d, seq_len %d)",
                    path, h->dim, h->hidden_dim, h->n_layers, h->n_heads, h->n_kv_heads, h->vocab_size, h->seq_len);
    int64_t head = h->dim / h->n_heads;
    if (head % 2)
        return fail(e, "%s: head_dim %lld is odd; RoPE needs pairs", path, (long long)head);
    int64_t dim = h->dim, hid = h->hidden_dim, L = h->n_layers, kvd = head * h->n_kv_heads;
    size_t o = 0;
    c->off_tok = o;
    o += (size_t)(vocab * dim);
    c->off_rms_att = o;
    o += (size_t)(L * dim);
    c->off_wq = o;
    o += (size_t)(L * dim * dim);
    c->off_wk = o;
    o += (size_t)(L * kvd * dim);
    c->off_wv = o;
    o += (size_t)(L * kvd * dim);
    c->off_wo = o;
    o += (size_t)(L * dim * dim);
    c->off_rms_ffn = o;
    o += (size_t)(L * dim);
    c->off_w1 = o;
    o += (size_t)(L * hid * dim);
    c->off_w2 = o;
    o += (size_t)(L * dim * hid);
    c->off_w3 = o;
    o += (size_t)(L * hid * dim);
    c->off_rms_final = o;
    o += (size_t)dim;
    o += (size_t)(2 * h->seq_len * head / 2); /* legacy freq_cis_real/imag */
    c->off_cls = c->shared_cls ? c->off_tok : o;
    if (!c->shared_cls)
        o += (size_t)(vocab * dim);
    size_t want = 28 + o * 4;
    if (size != want)
        return fail(e, "%s: size is %zu bytes, the header (dim %d, hidden %d, %d layers, vocab %d) needs %zu", path,
                    size, h->dim, h->hidden_dim, h->n_layers, h->vocab_size, want);
    c->base = d + 28;
    return 0;
}

static float ck(const ckpt *c, size_t idx) { return rd_f32(c->base + 4 * idx); }

/* tok512-style tokenizer: int32 max_token_length, then vocab x (f32 score, int32 len, bytes) */
static int check_tokenizer(ectx *e, const char *path, const uint8_t *d, size_t size, int32_t vocab)
{
    if (size < 4)
        return fail(e, "%s: too short for a llama2.c tokenizer", path);
    int32_t maxlen = rd_i32(d);
    if (maxlen <= 0 || maxlen > 1 << 16)
        return fail(e, "%s: max_token_length %d is not plausible", path, maxlen);
    size_t o = 4;
    for (int32_t i = 0; i < vocab; i++) {
        if (o + 8 > size)
            return fail(e, "%s: ends in entry %d of %d (the model's vocab_size)", path, i, vocab);
        int32_t len = rd_i32(d + o + 4);
        if (len < 0 || len > maxlen || o + 8 + (size_t)len > size)
            return fail(e, "%s: entry %d has length %d (max_token_length %d, file %zu bytes)", path, i, len, maxlen,
                        size);
        o += 8 + (size_t)len;
    }
    if (o != size)
        return fail(e, "%s: %zu bytes follow the %d entries the model's vocab_size asks for", path, size - o, vocab);
    return 0;
}

/* ---- the weight file ------------------------------------------------------- */
typedef struct wtensor {
    const char *name;
    int64_t dims[2];
    int nd;
    size_t numel;
    size_t offset; /* bytes in weights.bin */
    float *data;
} wtensor;

typedef struct wfile {
    wtensor *t;
    size_t n, cap;
    size_t bytes;
    bool fp16;
} wfile;

static wtensor *wadd(pool *pl, wfile *w, const char *name, int64_t d0, int64_t d1)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        wtensor *g = palloc(pl, cap * sizeof *g);
        if (!g)
            return NULL;
        if (w->n)
            memcpy(g, w->t, w->n * sizeof *g);
        w->t = g;
        w->cap = cap;
    }
    wtensor *t = &w->t[w->n++];
    t->name = pstrdup(pl, name);
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->nd = d1 > 0 ? 2 : 1;
    t->numel = (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
    t->data = palloc(pl, t->numel * sizeof(float));
    size_t es = w->fp16 ? 2 : 4;
    w->bytes = (w->bytes + 63) & ~(size_t)63; /* 64-byte aligned: used in place by the importer */
    t->offset = w->bytes;
    w->bytes += t->numel * es;
    return t->data && t->name ? t : NULL;
}

static const wtensor *wfind(const wfile *w, const char *name)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->t[i].name, name))
            return &w->t[i];
    return NULL;
}

/* [rows, cols] row-major source -> [cols, rows] (so MatMul(x, W^T) = x W^T) */
static void transpose_from(const ckpt *c, size_t off, int64_t rows, int64_t cols, float *dst)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++)
            dst[k * rows + r] = ck(c, off + (size_t)(r * cols + k));
}

static void copy_from(const ckpt *c, size_t off, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = ck(c, off + i);
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)(sign | h);
}

static int build_weights(ectx *e, pool *pl, const ckpt *c, wfile *w)
{
    const llm_ckpt_header *h = &c->h;
    int64_t dim = h->dim, hid = h->hidden_dim, hd = dim / h->n_heads, kvd = hd * h->n_kv_heads;
    int32_t vocab = h->vocab_size > 0 ? h->vocab_size : -h->vocab_size;
    wtensor *t;
#define NEED(x)                                                                                                    \
    do {                                                                                                           \
        if (!(t = (x)))                                                                                            \
            return fail(e, "out of memory building the weights");                                                 \
    } while (0)
    NEED(wadd(pl, w, "tok_embeddings", vocab, dim));
    copy_from(c, c->off_tok, (size_t)(vocab * dim), t->data);
    for (int32_t l = 0; l < h->n_layers; l++) {
        char nm[64];
        snprintf(nm, sizeof nm, "layers.%d.attention_norm", l);
        NEED(wadd(pl, w, nm, dim, 0));
        copy_from(c, c->off_rms_att + (size_t)(l * dim), (size_t)dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.wq_t", l);
        NEED(wadd(pl, w, nm, dim, dim));
        transpose_from(c, c->off_wq + (size_t)(l * dim * dim), dim, dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.wk_t", l);
        NEED(wadd(pl, w, nm, dim, kvd));
        transpose_from(c, c->off_wk + (size_t)(l * kvd * dim), kvd, dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.wv_t", l);
        NEED(wadd(pl, w, nm, dim, kvd));
        transpose_from(c, c->off_wv + (size_t)(l * kvd * dim), kvd, dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.wo_t", l);
        NEED(wadd(pl, w, nm, dim, dim));
        transpose_from(c, c->off_wo + (size_t)(l * dim * dim), dim, dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.ffn_norm", l);
        NEED(wadd(pl, w, nm, dim, 0));
        copy_from(c, c->off_rms_ffn + (size_t)(l * dim), (size_t)dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.w1_t", l);
        NEED(wadd(pl, w, nm, dim, hid));
        transpose_from(c, c->off_w1 + (size_t)(l * hid * dim), hid, dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.w3_t", l);
        NEED(wadd(pl, w, nm, dim, hid));
        transpose_from(c, c->off_w3 + (size_t)(l * hid * dim), hid, dim, t->data);
        snprintf(nm, sizeof nm, "layers.%d.w2_t", l);
        NEED(wadd(pl, w, nm, hid, dim));
        transpose_from(c, c->off_w2 + (size_t)(l * dim * hid), dim, hid, t->data);
    }
    NEED(wadd(pl, w, "norm", dim, 0));
    copy_from(c, c->off_rms_final, (size_t)dim, t->data);
    NEED(wadd(pl, w, "output_t", dim, vocab));
    transpose_from(c, c->off_cls, vocab, dim, t->data);
#undef NEED
    return 0;
}

static int write_weights(ectx *e, const char *dir, const wfile *w)
{
    uint8_t *buf = calloc(1, w->bytes ? w->bytes : 1);
    if (!buf)
        return fail(e, "out of memory (%zu bytes of weights)", w->bytes);
    for (size_t i = 0; i < w->n; i++) {
        const wtensor *t = &w->t[i];
        uint8_t *p = buf + t->offset;
        for (size_t k = 0; k < t->numel; k++) {
            if (w->fp16) {
                uint16_t hv = f32_to_f16(t->data[k]);
                p[2 * k] = (uint8_t)hv;
                p[2 * k + 1] = (uint8_t)(hv >> 8);
            } else {
                uint32_t u;
                memcpy(&u, &t->data[k], 4);
                for (int b = 0; b < 4; b++)
                    p[4 * k + (size_t)b] = (uint8_t)(u >> (8 * b));
            }
        }
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, WEIGHTS_FILE);
    int rc = write_file(e, path, buf, w->bytes, NULL, 0);
    free(buf);
    return rc;
}

/* ---- graph builder ---------------------------------------------------------- */
typedef struct gb {
    pool *pl;
    Onnx__GraphProto *g;
    size_t cap_node, cap_init, cap_in, cap_out;
    int tmp;
    const wfile *w;
    const char *ones; /* name of the [dim,1] ones constant, once per graph */
    bool fused;       /* attention as one switchyard.llm CausalAttention node */
} gb;

static void *grow(pool *pl, void *arr, size_t n, size_t *cap, size_t es)
{
    if (n < *cap)
        return arr;
    size_t nc = *cap ? *cap * 2 : 16;
    void *g = palloc(pl, nc * es);
    if (!g)
        return NULL;
    if (n)
        memcpy(g, arr, n * es);
    *cap = nc;
    return g;
}

static const char *tmpname(gb *b, const char *hint) { return pprintf(b->pl, "%s_%d", hint, b->tmp++); }

static Onnx__TensorShapeProto *shape_of(pool *pl, const int64_t *dims, size_t nd)
{
    Onnx__TensorShapeProto *s = palloc(pl, sizeof *s);
    if (!s)
        return NULL;
    onnx__tensor_shape_proto__init(s);
    s->n_dim = nd;
    s->dim = palloc(pl, (nd ? nd : 1) * sizeof *s->dim);
    if (!s->dim)
        return NULL;
    for (size_t i = 0; i < nd; i++) {
        Onnx__TensorShapeProto__Dimension *d = palloc(pl, sizeof *d);
        if (!d)
            return NULL;
        onnx__tensor_shape_proto__dimension__init(d);
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
        s->dim[i] = d;
    }
    return s;
}

static Onnx__ValueInfoProto *vinfo(pool *pl, const char *name, int elem, const int64_t *dims, size_t nd)
{
    Onnx__TypeProto__Tensor *tt = palloc(pl, sizeof *tt);
    Onnx__TypeProto *tp = palloc(pl, sizeof *tp);
    Onnx__ValueInfoProto *vi = palloc(pl, sizeof *vi);
    if (!tt || !tp || !vi)
        return NULL;
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    tt->shape = shape_of(pl, dims, nd);
    onnx__type_proto__init(tp);
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    onnx__value_info_proto__init(vi);
    vi->name = pstrdup(pl, name);
    vi->type = tp;
    return vi;
}

static void g_input(gb *b, const char *name, int elem, const int64_t *dims, size_t nd)
{
    b->g->input = grow(b->pl, b->g->input, b->g->n_input, &b->cap_in, sizeof *b->g->input);
    if (b->g->input)
        b->g->input[b->g->n_input++] = vinfo(b->pl, name, elem, dims, nd);
}

static void g_output(gb *b, const char *name, int elem, const int64_t *dims, size_t nd)
{
    b->g->output = grow(b->pl, b->g->output, b->g->n_output, &b->cap_out, sizeof *b->g->output);
    if (b->g->output)
        b->g->output[b->g->n_output++] = vinfo(b->pl, name, elem, dims, nd);
}

static void g_init(gb *b, Onnx__TensorProto *t)
{
    b->g->initializer = grow(b->pl, b->g->initializer, b->g->n_initializer, &b->cap_init, sizeof *b->g->initializer);
    if (b->g->initializer && t)
        b->g->initializer[b->g->n_initializer++] = t;
}

static Onnx__TensorProto *tensor_new(pool *pl, const char *name, int elem, const int64_t *dims, size_t nd)
{
    Onnx__TensorProto *t = palloc(pl, sizeof *t);
    if (!t)
        return NULL;
    onnx__tensor_proto__init(t);
    t->name = pstrdup(pl, name);
    t->n_dims = nd;
    t->dims = palloc(pl, (nd ? nd : 1) * sizeof *t->dims);
    if (t->dims && nd)
        memcpy(t->dims, dims, nd * sizeof *dims);
    t->has_data_type = 1;
    t->data_type = elem;
    return t;
}

static const char *const_i64(gb *b, const int64_t *v, size_t n)
{
    const char *name = tmpname(b, "c_i64");
    int64_t d = (int64_t)n;
    Onnx__TensorProto *t = tensor_new(b->pl, name, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, &d, 1);
    if (!t)
        return name;
    uint8_t *raw = palloc(b->pl, n * 8);
    if (raw)
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 8; k++)
                raw[8 * i + (size_t)k] = (uint8_t)((uint64_t)v[i] >> (8 * k));
    t->has_raw_data = 1;
    t->raw_data.len = n * 8;
    t->raw_data.data = raw;
    g_init(b, t);
    return name;
}

static const char *const_f32(gb *b, const char *hint, const float *v, const int64_t *dims, size_t nd)
{
    const char *name = tmpname(b, hint);
    Onnx__TensorProto *t = tensor_new(b->pl, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, dims, nd);
    if (!t)
        return name;
    size_t n = 1;
    for (size_t i = 0; i < nd; i++)
        n *= (size_t)dims[i];
    uint8_t *raw = palloc(b->pl, n * 4);
    if (raw)
        for (size_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &v[i], 4);
            for (int k = 0; k < 4; k++)
                raw[4 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
        }
    t->has_raw_data = 1;
    t->raw_data.len = n * 4;
    t->raw_data.data = raw;
    g_init(b, t);
    return name;
}

static const char *scalar(gb *b, float v)
{
    int64_t one = 1;
    return const_f32(b, "c_f32", &v, &one, 1);
}

static Onnx__AttributeProto *attr_int(pool *pl, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = palloc(pl, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = pstrdup(pl, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1;
    a->i = v;
    return a;
}

static Onnx__AttributeProto *attr_ints(pool *pl, const char *name, const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a = palloc(pl, sizeof *a);
    if (!a)
        return NULL;
    onnx__attribute_proto__init(a);
    a->name = pstrdup(pl, name);
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = n;
    a->ints = palloc(pl, (n ? n : 1) * sizeof *a->ints);
    if (a->ints && n)
        memcpy(a->ints, v, n * sizeof *v);
    return a;
}

/* One node; `outs` names (NULL entries get fresh names). Returns output 0. */
static const char *node(gb *b, const char *op, const char *const *ins, size_t n_in, const char **outs, size_t n_out,
                        Onnx__AttributeProto *a0, Onnx__AttributeProto *a1)
{
    b->g->node = grow(b->pl, b->g->node, b->g->n_node, &b->cap_node, sizeof *b->g->node);
    Onnx__NodeProto *n = palloc(b->pl, sizeof *n);
    if (!b->g->node || !n)
        return "";
    onnx__node_proto__init(n);
    n->op_type = pstrdup(b->pl, op);
    n->name = pprintf(b->pl, "%s_%zu", op, b->g->n_node);
    n->n_input = n_in;
    n->input = palloc(b->pl, (n_in ? n_in : 1) * sizeof *n->input);
    n->n_output = n_out;
    n->output = palloc(b->pl, n_out * sizeof *n->output);
    if (!n->input || !n->output)
        return "";
    for (size_t i = 0; i < n_in; i++)
        n->input[i] = pstrdup(b->pl, ins[i]);
    for (size_t i = 0; i < n_out; i++) {
        if (!outs[i])
            outs[i] = tmpname(b, op);
        n->output[i] = pstrdup(b->pl, outs[i]);
    }
    Onnx__AttributeProto *as[2] = {a0, a1};
    size_t na = (a0 ? 1 : 0) + (a1 ? 1 : 0);
    n->attribute = palloc(b->pl, (na ? na : 1) * sizeof *n->attribute);
    if (n->attribute)
        for (size_t i = 0; i < 2; i++)
            if (as[i])
                n->attribute[n->n_attribute++] = as[i];
    b->g->node[b->g->n_node++] = n;
    return outs[0];
}

static const char *op1(gb *b, const char *op, const char *x)
{
    const char *o[1] = {NULL};
    return node(b, op, &x, 1, o, 1, NULL, NULL);
}

static const char *op2(gb *b, const char *op, const char *x, const char *y)
{
    const char *in[2] = {x, y}, *o[1] = {NULL};
    return node(b, op, in, 2, o, 1, NULL, NULL);
}

static const char *op2_named(gb *b, const char *op, const char *x, const char *y, const char *out)
{
    const char *in[2] = {x, y}, *o[1] = {out};
    return node(b, op, in, 2, o, 1, NULL, NULL);
}

static const char *reshape(gb *b, const char *x, const int64_t *dims, size_t nd, const char *out)
{
    const char *shape = const_i64(b, dims, nd);
    return op2_named(b, "Reshape", x, shape, out);
}

static const char *transpose(gb *b, const char *x, const int64_t *perm, size_t n)
{
    const char *o[1] = {NULL};
    return node(b, "Transpose", &x, 1, o, 1, attr_ints(b->pl, "perm", perm, n), NULL);
}

static const char *concat2(gb *b, const char *x, const char *y, int64_t axis)
{
    const char *in[2] = {x, y}, *o[1] = {NULL};
    return node(b, "Concat", in, 2, o, 1, attr_int(b->pl, "axis", axis), NULL);
}

/* a weight: an external-data initializer in weights.bin (+ Cast when fp16) */
static const char *weight(gb *b, ectx *e, const char *name)
{
    const wtensor *w = wfind(b->w, name);
    if (!w) {
        fail(e, "internal error: weight '%s' missing", name);
        return "";
    }
    bool f16 = b->w->fp16;
    Onnx__TensorProto *t = tensor_new(b->pl, name,
                                      f16 ? ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
                                      w->dims, (size_t)w->nd);
    if (!t)
        return "";
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    t->n_external_data = 3;
    t->external_data = palloc(b->pl, 3 * sizeof *t->external_data);
    if (!t->external_data)
        return "";
    const char *keys[3] = {"location", "offset", "length"};
    const char *vals[3] = {WEIGHTS_FILE, pprintf(b->pl, "%zu", w->offset),
                           pprintf(b->pl, "%zu", w->numel * (f16 ? 2u : 4u))};
    for (int i = 0; i < 3; i++) {
        Onnx__StringStringEntryProto *kv = palloc(b->pl, sizeof *kv);
        if (!kv)
            return "";
        onnx__string_string_entry_proto__init(kv);
        kv->key = pstrdup(b->pl, keys[i]);
        kv->value = pstrdup(b->pl, vals[i]);
        t->external_data[i] = kv;
    }
    g_init(b, t);
    if (!f16)
        return name;
    const char *o[1] = {NULL};
    return node(b, "Cast", &name, 1, o, 1, attr_int(b->pl, "to", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT), NULL);
}

typedef struct dims_t {
    int64_t dim, hid, H, Hkv, hd, G, vocab;
    int64_t AR, CL, KV;
} dims_t;

/* llama2.c rmsnorm: ss = sum(x^2) / dim + eps; y = w * (x * (1/sqrt(ss))) */
static const char *rmsnorm(gb *b, ectx *e, const dims_t *d, const char *x, const char *wname)
{
    if (!b->ones) {
        float *ones = palloc(b->pl, (size_t)d->dim * sizeof(float));
        if (!ones)
            return "";
        for (int64_t i = 0; i < d->dim; i++)
            ones[i] = 1.0f;
        int64_t od[2] = {d->dim, 1};
        b->ones = const_f32(b, "ones", ones, od, 2);
    }
    const char *sq = op2(b, "Mul", x, x);
    const char *ss = op2(b, "MatMul", sq, b->ones); /* [1,AR,1]: the sum in index order */
    ss = op2(b, "Div", ss, scalar(b, (float)d->dim));
    ss = op2(b, "Add", ss, scalar(b, 1e-5f));
    ss = op1(b, "Reciprocal", op1(b, "Sqrt", ss));
    const char *y = op2(b, "Mul", x, ss);
    return op2(b, "Mul", y, weight(b, e, wname));
}

/* interleaved RoPE on t [AR, heads, hd/2, 2] with cos/sin [AR,1,hd/2,1] */
static const char *rope(gb *b, const char *t, const char *cs, const char *sn)
{
    const char *two = const_i64(b, (const int64_t[]){1, 1}, 2);
    const char *in[2] = {t, two}, *o[2] = {NULL, NULL};
    node(b, "Split", in, 2, o, 2, attr_int(b->pl, "axis", 3), NULL);
    const char *r0 = op2(b, "Sub", op2(b, "Mul", o[0], cs), op2(b, "Mul", o[1], sn));
    const char *r1 = op2(b, "Add", op2(b, "Mul", o[0], sn), op2(b, "Mul", o[1], cs));
    return concat2(b, r0, r1, 3);
}

static const char *layer(gb *b, ectx *e, const dims_t *d, int l, const char *x, const char *cs, const char *sn,
                         const char *mask)
{
    char nm[96];
    snprintf(nm, sizeof nm, "layers.%d.attention_norm", l);
    const char *xn = rmsnorm(b, e, d, x, nm);
    snprintf(nm, sizeof nm, "layers.%d.wq_t", l);
    const char *q = op2(b, "MatMul", xn, weight(b, e, nm));
    snprintf(nm, sizeof nm, "layers.%d.wk_t", l);
    const char *k = op2(b, "MatMul", xn, weight(b, e, nm));
    snprintf(nm, sizeof nm, "layers.%d.wv_t", l);
    const char *v = op2(b, "MatMul", xn, weight(b, e, nm));

    q = rope(b, reshape(b, q, (const int64_t[]){d->AR, d->H, d->hd / 2, 2}, 4, NULL), cs, sn);
    q = reshape(b, q, (const int64_t[]){d->AR, d->Hkv, d->G, d->hd}, 4, NULL);
    q = transpose(b, q, (const int64_t[]){1, 2, 0, 3}, 4); /* [Hkv,G,AR,hd] */

    k = rope(b, reshape(b, k, (const int64_t[]){d->AR, d->Hkv, d->hd / 2, 2}, 4, NULL), cs, sn);
    k = reshape(b, k, (const int64_t[]){d->AR, d->Hkv, d->hd}, 3, NULL);
    k = transpose(b, k, (const int64_t[]){1, 2, 0}, 3); /* [Hkv,hd,AR] */
    char kout[64], vout[64], kin[64], vin[64];
    snprintf(kout, sizeof kout, "past_key_%d_out", l);
    snprintf(vout, sizeof vout, "past_value_%d_out", l);
    snprintf(kin, sizeof kin, "past_key_%d_in", l);
    snprintf(vin, sizeof vin, "past_value_%d_in", l);
    k = reshape(b, k, (const int64_t[]){d->Hkv, 1, d->hd, d->AR}, 4, kout);
    v = reshape(b, v, (const int64_t[]){d->AR, d->Hkv, d->hd}, 3, NULL);
    v = transpose(b, v, (const int64_t[]){1, 0, 2}, 3); /* [Hkv,AR,hd] */
    v = reshape(b, v, (const int64_t[]){d->Hkv, 1, d->AR, d->hd}, 4, vout);
    g_input(b, kin, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->hd, d->KV}, 4);
    g_input(b, vin, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->KV, d->hd}, 4);
    g_output(b, kout, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->hd, d->AR}, 4);
    g_output(b, vout, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, (const int64_t[]){d->Hkv, 1, d->AR, d->hd}, 4);

    const char *att;
    if (b->fused) {
        /* switchyard.llm CausalAttention (plugins/ops_llm): the same math over
         * the unmasked columns only, reading past and new entries in place */
        const char *in[6] = {q, kout, vout, kin, vin, mask}, *o[1] = {NULL};
        att = node(b, "CausalAttention", in, 6, o, 1, NULL, NULL); /* [Hkv,G,AR,hd] */
        b->g->node[b->g->n_node - 1]->domain = pstrdup(b->pl, LLM_DOMAIN);
    } else {
        const char *kf = concat2(b, kin, k, 3); /* [Hkv,1,hd,CL] */
        const char *vf = concat2(b, vin, v, 2); /* [Hkv,1,CL,hd] */
        const char *s = op2(b, "MatMul", q, kf); /* [Hkv,G,AR,CL] */
        s = op2(b, "Div", s, scalar(b, sqrtf((float)d->hd)));
        s = op2(b, "Add", s, mask);
        const char *o[1] = {NULL};
        s = node(b, "Softmax", &s, 1, o, 1, attr_int(b->pl, "axis", -1), NULL);
        att = op2(b, "MatMul", s, vf); /* [Hkv,G,AR,hd] */
    }
    att = transpose(b, att, (const int64_t[]){2, 0, 1, 3}, 4); /* [AR,Hkv,G,hd] */
    att = reshape(b, att, (const int64_t[]){1, d->AR, d->dim}, 3, NULL);
    snprintf(nm, sizeof nm, "layers.%d.wo_t", l);
    x = op2(b, "Add", x, op2(b, "MatMul", att, weight(b, e, nm)));

    snprintf(nm, sizeof nm, "layers.%d.ffn_norm", l);
    xn = rmsnorm(b, e, d, x, nm);
    snprintf(nm, sizeof nm, "layers.%d.w1_t", l);
    const char *h1 = op2(b, "MatMul", xn, weight(b, e, nm));
    snprintf(nm, sizeof nm, "layers.%d.w3_t", l);
    const char *h3 = op2(b, "MatMul", xn, weight(b, e, nm));
    /* silu(h1) = h1 * (1 / (1 + exp(-h1))) */
    const char *sg = op1(b, "Reciprocal", op2(b, "Add", op1(b, "Exp", op1(b, "Neg", h1)), scalar(b, 1.0f)));
    const char *hh = op2(b, "Mul", op2(b, "Mul", h1, sg), h3);
    snprintf(nm, sizeof nm, "layers.%d.w2_t", l);
    return op2(b, "Add", x, op2(b, "MatMul", hh, weight(b, e, nm)));
}

static int write_graph(ectx *e, pool *pl, const char *dir, const wfile *w, const ckpt *c, int ar, int cl, int shard,
                       int n_shards, int l0, int l1, bool fused, bool quiet)
{
    const llm_ckpt_header *h = &c->h;
    dims_t d = {.dim = h->dim, .hid = h->hidden_dim, .H = h->n_heads, .Hkv = h->n_kv_heads};
    d.hd = d.dim / d.H;
    d.G = d.H / d.Hkv;
    d.vocab = h->vocab_size > 0 ? h->vocab_size : -h->vocab_size;
    d.AR = ar;
    d.CL = cl;
    d.KV = cl - ar;
    char *name = pprintf(pl, "%s_ar%d_cl%d_%d_of_%d", ar == 1 ? "token" : "prompt", ar, cl, shard, n_shards);
    gb b = {.pl = pl, .w = w, .fused = fused};
    b.g = palloc(pl, sizeof *b.g);
    if (!b.g || !name)
        return fail(e, "out of memory");
    onnx__graph_proto__init(b.g);
    b.g->name = name;
    const int F = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    const char *x;
    bool has_layers = l1 > l0;
    if (shard == 1) {
        g_input(&b, "input_ids", ONNX__TENSOR_PROTO__DATA_TYPE__INT32, (const int64_t[]){1, d.AR}, 2);
    } else {
        char *in = pprintf(pl, "hidden_states_%d", shard - 1);
        g_input(&b, in, F, (const int64_t[]){1, d.AR, d.dim}, 3);
    }
    const char *cs = NULL, *sn = NULL, *mask = NULL;
    if (has_layers) {
        g_input(&b, "position_ids_cos", F, (const int64_t[]){1, 1, d.AR, d.hd / 2}, 4);
        g_input(&b, "position_ids_sin", F, (const int64_t[]){1, 1, d.AR, d.hd / 2}, 4);
        g_input(&b, "attention_mask", F, (const int64_t[]){1, 1, d.AR, d.CL}, 4);
        cs = reshape(&b, "position_ids_cos", (const int64_t[]){d.AR, 1, d.hd / 2, 1}, 4, NULL);
        sn = reshape(&b, "position_ids_sin", (const int64_t[]){d.AR, 1, d.hd / 2, 1}, 4, NULL);
        mask = "attention_mask";
    }
    const char *out_name = shard == n_shards ? "logits" : pprintf(pl, "hidden_states_%d", shard);
    g_output(&b, out_name, F, shard == n_shards ? (const int64_t[]){1, d.AR, d.vocab} : (const int64_t[]){1, d.AR, d.dim},
             3);
    if (shard == 1)
        x = op2(&b, "Gather", weight(&b, e, "tok_embeddings"), "input_ids"); /* [1,AR,dim] */
    else
        x = b.g->input[0]->name;
    for (int l = l0; l < l1; l++)
        x = layer(&b, e, &d, l, x, cs, sn, mask);
    if (shard == n_shards) {
        x = rmsnorm(&b, e, &d, x, "norm");
        op2_named(&b, "MatMul", x, weight(&b, e, "output_t"), "logits");
    } else {
        const char *in[1] = {x}, *o[1] = {out_name};
        node(&b, "Identity", in, 1, o, 1, NULL, NULL);
    }
    if (pl->oom)
        return fail(e, "out of memory building graph %s", name);
    if (e->failed)
        return -1;

    bool llm_ops = fused && has_layers;
    Onnx__OperatorSetIdProto *opset = palloc(pl, 2 * sizeof *opset);
    Onnx__OperatorSetIdProto **opsets = palloc(pl, 2 * sizeof *opsets);
    if (!opset || !opsets)
        return fail(e, "out of memory");
    onnx__operator_set_id_proto__init(&opset[0]);
    opset[0].domain = pstrdup(pl, "");
    opset[0].has_version = 1;
    opset[0].version = OPSET;
    opsets[0] = &opset[0];
    onnx__operator_set_id_proto__init(&opset[1]);
    opset[1].domain = pstrdup(pl, LLM_DOMAIN);
    opset[1].has_version = 1;
    opset[1].version = 1;
    opsets[1] = &opset[1];
    Onnx__ModelProto m;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1;
    m.ir_version = IR_VERSION;
    m.n_opset_import = llm_ops ? 2 : 1;
    m.opset_import = opsets;
    m.producer_name = pstrdup(pl, "switchyard llm-export");
    m.producer_version = pstrdup(pl, "1");
    m.graph = b.g;
    size_t len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return fail(e, "out of memory packing %s", name);
    onnx__model_proto__pack(&m, buf);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    int rc = write_file(e, path, buf, len, NULL, 0);
    free(buf);
    if (!rc && !quiet)
        printf("wrote %s (%zu nodes, %zu bytes)\n", path, b.g->n_node, len);
    return rc;
}

int llm_export(const llm_export_opts *o, char *err, size_t err_len)
{
    ectx e = {.buf = err, .len = err_len};
    pool pl = {0};
    uint8_t *cdata = NULL, *tdata = NULL;
    size_t csize = 0, tsize = 0;
    int rc = -1;
    if (read_file(&e, o->checkpoint, &cdata, &csize) || read_file(&e, o->tokenizer, &tdata, &tsize))
        goto out;
    ckpt c;
    if (parse_ckpt(&e, o->checkpoint, cdata, csize, &c))
        goto out;
    int32_t vocab = c.h.vocab_size > 0 ? c.h.vocab_size : -c.h.vocab_size;
    if (check_tokenizer(&e, o->tokenizer, tdata, tsize, vocab))
        goto out;
    if (o->shards < 1 || o->shards > c.h.n_layers + 1) {
        fail(&e, "--shards %d: the model has %d layers (1 .. %d shards, the last may hold only the LM head)",
             o->shards, c.h.n_layers, c.h.n_layers + 1);
        goto out;
    }
    bool has_ar1 = false;
    for (int i = 0; i < o->n_ar; i++)
        has_ar1 |= o->ar[i] == 1;
    if (!has_ar1 || !o->n_cl) {
        fail(&e, "--ar must include 1 (the decode graphs) and --cl must name at least one context length");
        goto out;
    }
    for (int i = 0; i < o->n_cl; i++)
        if (o->cl[i] > c.h.seq_len) {
            fail(&e, "--cl %d exceeds the checkpoint's seq_len %d", o->cl[i], c.h.seq_len);
            goto out;
        }
    if (mkdirs(&e, o->out_dir))
        goto out;
    wfile w = {.fp16 = o->fp16};
    if (build_weights(&e, &pl, &c, &w) || write_weights(&e, o->out_dir, &w))
        goto out;
    /* layers per shard: the first min(shards, n_layers) shards share the layers */
    int n_layer_shards = o->shards > c.h.n_layers ? c.h.n_layers : o->shards;
    int n_graphs = 0;
    for (int a = 0; a < o->n_ar; a++)
        for (int ci = 0; ci < o->n_cl; ci++) {
            if (o->ar[a] >= o->cl[ci])
                continue; /* kv_len = CL - AR must be positive */
            for (int s = 1; s <= o->shards; s++) {
                int l0 = (s - 1) < n_layer_shards ? (int)((int64_t)c.h.n_layers * (s - 1) / n_layer_shards) : c.h.n_layers;
                int l1 = (s - 1) < n_layer_shards ? (int)((int64_t)c.h.n_layers * s / n_layer_shards) : c.h.n_layers;
                if (write_graph(&e, &pl, o->out_dir, &w, &c, o->ar[a], o->cl[ci], s, o->shards, l0, l1,
                                !o->onnx_attention, o->quiet))
                    goto out;
                n_graphs++;
            }
        }
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", o->out_dir, TOKENIZER_FILE);
    if (write_file(&e, path, tdata, tsize, NULL, 0))
        goto out;
    char ini[2048];
    int maxcl = 0;
    for (int i = 0; i < o->n_cl; i++)
        maxcl = o->cl[i] > maxcl ? o->cl[i] : maxcl;
    int n = snprintf(ini, sizeof ini,
                     "# Switchyard LLM bundle (docs/llm.md). AR, CL and shards come from the graph names.\n"
                     "[llm]\n"
                     "format = switchyard-llm-bundle\n"
                     "version = 1\n"
                     "architecture = llama\n"
                     "weights = %s\n"
                     "weights_dtype = %s\n"
                     "tokenizer = %s\n"
                     "tokenizer_type = llama2c\n"
                     "n_vocab = %d\n"
                     "context_size = %d\n"
                     "bos_token = 1\n"
                     "eos_token = 1\n"
                     "pad_token = 1\n"
                     "rope_theta = 10000\n"
                     "rope_pairing = interleaved\n"
                     "mask_value = -1e9\n",
                     WEIGHTS_FILE, o->fp16 ? "float16" : "float32", TOKENIZER_FILE, vocab, maxcl);
    snprintf(path, sizeof path, "%s/bundle.ini", o->out_dir);
    if (write_file(&e, path, ini, (size_t)n, NULL, 0))
        goto out;
    if (!o->quiet)
        printf("bundle %s: %d graphs, weights %zu bytes (%s), tokenizer %zu bytes\n", o->out_dir, n_graphs, w.bytes,
               o->fp16 ? "float16" : "float32", tsize);
    rc = 0;
out:
    free(cdata);
    free(tdata);
    pool_free(&pl);
    return rc;
}
