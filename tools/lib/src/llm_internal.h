/* The LLM exporter's pieces (sy_llm_export in llm_export.c drives them):
 *   llm_checkpoint.c  the llama2.c checkpoint and tokenizer read and
 *                     checked; the weights laid out once in weights.bin
 *   llm_graph.c       one ONNX graph per (AR, CL, shard)
 * Internal: the functions return 0, or -1 with the status in the ectx. */
#ifndef SY_LLM_INTERNAL_H
#define SY_LLM_INTERNAL_H

#include "onnx.pb-c.h"
#include "tl_pool.h"

#include <switchyard/switchyard.h>

#include <stdbool.h>
#include <stdint.h>

#define LLM_WEIGHTS_FILE "weights.bin"
#define LLM_TOKENIZER_FILE "tokenizer.bin"

/* the first failure of a call */
typedef struct ectx {
    sy_status *st;
    bool failed;
} ectx;

int llm_fail(ectx *e, sy_status_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* keeps st (when not NULL) as the failure; 0 when st is NULL, else -1 */
int llm_take(ectx *e, sy_status *st);

/* llama2.c checkpoint header (7 little-endian int32). */
typedef struct llm_ckpt_header {
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
} llm_ckpt_header;

typedef struct ckpt {
    llm_ckpt_header h;
    bool shared_cls;
    const uint8_t *base; /* f32 arrays after the header */
    size_t off_tok, off_rms_att, off_wq, off_wk, off_wv, off_wo, off_rms_ffn, off_w1, off_w2, off_w3, off_rms_final,
        off_cls; /* in floats from base */
} ckpt;

int llm_parse_ckpt(ectx *e, const char *path, const uint8_t *d, size_t size, ckpt *c);
float llm_ck(const ckpt *c, size_t idx);
/* tok512-style tokenizer: int32 max_token_length, then vocab x (f32 score, int32 len, bytes) */
int llm_check_tokenizer(ectx *e, const char *path, const uint8_t *d, size_t size, int32_t vocab);

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

const wtensor *llm_wfind(const wfile *w, const char *name);
/* every weight, transposed where a MatMul wants it */
int llm_build_weights(ectx *e, tl_pool *pl, const ckpt *c, wfile *w);
int llm_write_weights(ectx *e, const char *dir, const wfile *w);

/* ---- graphs ----------------------------------------------------------------- */
typedef struct llm_graph_spec {
    int ar, cl;         /* tokens per run, context length */
    int shard, n_shards;
    int l0, l1;         /* layers [l0, l1) */
    bool fused;         /* attention as one switchyard.llm CausalAttention node */
} llm_graph_spec;

/* writes DIR/NAME.onnx; path, node count and bytes of what was written */
int llm_write_graph(ectx *e, tl_pool *pl, const char *dir, const wfile *w, const ckpt *c, const llm_graph_spec *s,
                    char *path, size_t path_len, size_t *n_nodes, size_t *bytes);

#endif
