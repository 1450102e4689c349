/*
 * switchyard llm-export: a llama2.c checkpoint + tokenizer -> an LLM bundle
 * (docs/llm.md): ONNX graphs `prompt_arA_clC_i_of_N.onnx` /
 * `token_ar1_clC_i_of_N.onnx` whose weights live once in `weights.bin`
 * (ONNX external data), `bundle.ini`, and `tokenizer.bin`.
 */
#ifndef SY_LLM_EXPORT_H
#define SY_LLM_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LLM_EXPORT_MAX_VARIANTS 8

typedef struct llm_export_opts {
    const char *checkpoint; /* llama2.c .bin */
    const char *tokenizer;  /* llama2.c tokenizer .bin */
    const char *out_dir;
    int shards;             /* 1 .. n_layers + 1 (the last may be LM-head only) */
    int n_ar, n_cl;
    int ar[LLM_EXPORT_MAX_VARIANTS];
    int cl[LLM_EXPORT_MAX_VARIANTS];
    bool fp16;              /* weights stored as float16, cast to float in the graph */
    bool onnx_attention;    /* plain ONNX attention (Concat + MatMul + Softmax over CL) instead of
                               the fused switchyard.llm CausalAttention (plugins/ops_llm) */
    bool quiet;
} llm_export_opts;

/* llama2.c checkpoint header (7 little-endian int32). */
typedef struct llm_ckpt_header {
    int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
} llm_ckpt_header;

/* 0 on success; otherwise -1 and a message naming the file in err. */
int llm_export(const llm_export_opts *o, char *err, size_t err_len);

#endif
