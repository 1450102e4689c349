/* The llama2.c checkpoint and tokenizer, read and checked, and the weights
 * laid out once in weights.bin (float32 or float16, 64-byte aligned, the
 * matrices transposed for MatMul(x, W^T)). */
#include "llm_internal.h"
#include "tl_files.h"

/* after switchyard.h: the SDK's fp16 conversion */
#include <switchyard/sy_sdk.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int llm_fail(ectx *e, sy_status_code code, const char *fmt, ...)
{
    if (!e->failed) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        e->st = sy_status_create(code, "%s", buf);
    }
    e->failed = true;
    return -1;
}

int llm_take(ectx *e, sy_status *st)
{
    if (!st)
        return 0;
    if (e->failed)
        sy_status_free(st);
    else
        e->st = st;
    e->failed = true;
    return -1;
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
int llm_parse_ckpt(ectx *e, const char *path, const uint8_t *d, size_t size, ckpt *c)
{
    if (size < 28)
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: %zu bytes is too short for a llama2.c checkpoint header (28 bytes)", path, size);
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
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: header is not a llama2.c checkpoint (dim %d, hidden_dim %d, n_layers %d, n_heads %d, "
                    "n_kv_heads %d, vocab_size %d, seq_len %d)",
                    path, h->dim, h->hidden_dim, h->n_layers, h->n_heads, h->n_kv_heads, h->vocab_size, h->seq_len);
    int64_t head = h->dim / h->n_heads;
    if (head % 2)
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: head_dim %lld is odd; RoPE needs pairs", path, (long long)head);
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
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: size is %zu bytes, the header (dim %d, hidden %d, %d layers, vocab %d) needs %zu", path,
                    size, h->dim, h->hidden_dim, h->n_layers, h->vocab_size, want);
    c->base = d + 28;
    return 0;
}

float llm_ck(const ckpt *c, size_t idx) { return rd_f32(c->base + 4 * idx); }

/* tok512-style tokenizer: int32 max_token_length, then vocab x (f32 score, int32 len, bytes) */
int llm_check_tokenizer(ectx *e, const char *path, const uint8_t *d, size_t size, int32_t vocab)
{
    if (size < 4)
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: too short for a llama2.c tokenizer", path);
    int32_t maxlen = rd_i32(d);
    if (maxlen <= 0 || maxlen > 1 << 16)
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: max_token_length %d is not plausible", path, maxlen);
    size_t o = 4;
    for (int32_t i = 0; i < vocab; i++) {
        if (o + 8 > size)
            return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: ends in entry %d of %d (the model's vocab_size)", path, i, vocab);
        int32_t len = rd_i32(d + o + 4);
        if (len < 0 || len > maxlen || o + 8 + (size_t)len > size)
            return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: entry %d has length %d (max_token_length %d, file %zu bytes)", path, i, len, maxlen,
                        size);
        o += 8 + (size_t)len;
    }
    if (o != size)
        return llm_fail(e, SY_ERR_INVALID_MODEL, "%s: %zu bytes follow the %d entries the model's vocab_size asks for", path, size - o, vocab);
    return 0;
}

/* ---- the weight file ------------------------------------------------------- */
static wtensor *wadd(tl_pool *pl, wfile *w, const char *name, int64_t d0, int64_t d1)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        wtensor *g = tl_alloc(pl, cap * sizeof *g);
        if (!g)
            return NULL;
        if (w->n)
            memcpy(g, w->t, w->n * sizeof *g);
        w->t = g;
        w->cap = cap;
    }
    wtensor *t = &w->t[w->n++];
    t->name = tl_strdup(pl, name);
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->nd = d1 > 0 ? 2 : 1;
    t->numel = (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
    t->data = tl_alloc(pl, t->numel * sizeof(float));
    size_t es = w->fp16 ? 2 : 4;
    w->bytes = (w->bytes + 63) & ~(size_t)63; /* 64-byte aligned: used in place by the importer */
    t->offset = w->bytes;
    w->bytes += t->numel * es;
    return t->data && t->name ? t : NULL;
}

const wtensor *llm_wfind(const wfile *w, const char *name)
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
            dst[k * rows + r] = llm_ck(c, off + (size_t)(r * cols + k));
}

static void copy_from(const ckpt *c, size_t off, size_t n, float *dst)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = llm_ck(c, off + i);
}

int llm_build_weights(ectx *e, tl_pool *pl, const ckpt *c, wfile *w)
{
    const llm_ckpt_header *h = &c->h;
    int64_t dim = h->dim, hid = h->hidden_dim, hd = dim / h->n_heads, kvd = hd * h->n_kv_heads;
    int32_t vocab = h->vocab_size > 0 ? h->vocab_size : -h->vocab_size;
    wtensor *t;
#define NEED(x)                                                                                                    \
    do {                                                                                                           \
        if (!(t = (x)))                                                                                            \
            return llm_fail(e, SY_ERR_OUT_OF_MEMORY, "out of memory building the weights");                                                 \
    } while (0)
    NEED(wadd(pl, w, "tok_embeddings", vocab, dim));
    copy_from(c, c->off_tok, (size_t)(vocab * dim), t->data);
    /* one layer's tensors in file order: a norm vector (cols 0), copied, or
     * a [rows, cols] matrix, stored transposed; each kind's layers lie one
     * after another from its offset */
    const struct {
        const char *name;
        size_t off;
        int64_t rows, cols;
    } layer[] = {
        {"attention_norm", c->off_rms_att, dim, 0}, {"wq_t", c->off_wq, dim, dim}, {"wk_t", c->off_wk, kvd, dim},
        {"wv_t", c->off_wv, kvd, dim},              {"wo_t", c->off_wo, dim, dim}, {"ffn_norm", c->off_rms_ffn, dim, 0},
        {"w1_t", c->off_w1, hid, dim},              {"w3_t", c->off_w3, hid, dim}, {"w2_t", c->off_w2, dim, hid},
    };
    for (int32_t l = 0; l < h->n_layers; l++)
        for (size_t k = 0; k < sizeof layer / sizeof layer[0]; k++) {
            char nm[64];
            int64_t rows = layer[k].rows, cols = layer[k].cols;
            snprintf(nm, sizeof nm, "layers.%d.%s", l, layer[k].name);
            if (!cols) {
                NEED(wadd(pl, w, nm, rows, 0));
                copy_from(c, layer[k].off + (size_t)(l * rows), (size_t)rows, t->data);
            } else {
                NEED(wadd(pl, w, nm, cols, rows));
                transpose_from(c, layer[k].off + (size_t)(l * rows * cols), rows, cols, t->data);
            }
        }
    NEED(wadd(pl, w, "norm", dim, 0));
    copy_from(c, c->off_rms_final, (size_t)dim, t->data);
    NEED(wadd(pl, w, "output_t", dim, vocab));
    transpose_from(c, c->off_cls, vocab, dim, t->data);
#undef NEED
    return 0;
}

int llm_write_weights(ectx *e, const char *dir, const wfile *w)
{
    uint8_t *buf = calloc(1, w->bytes ? w->bytes : 1);
    if (!buf)
        return llm_fail(e, SY_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes of weights)", w->bytes);
    for (size_t i = 0; i < w->n; i++) {
        const wtensor *t = &w->t[i];
        uint8_t *p = buf + t->offset;
        for (size_t k = 0; k < t->numel; k++) {
            if (w->fp16) {
                uint16_t hv = sy_f32_to_f16(t->data[k]);
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
    snprintf(path, sizeof path, "%s/%s", dir, LLM_WEIGHTS_FILE);
    int rc = llm_take(e, tl_write_atomic(path, buf, w->bytes, NULL, 0));
    free(buf);
    return rc;
}

