/*
 * llm_ref: a plain C forward pass of a llama2.c checkpoint, the loop users
 * compare an LLM runtime against (tools/bench/llm.sh, llm_ref_main.c), and
 * the independent reference of tests/llm (the sy_llm_ref library target).
 *
 * Transformer per token: RMSNorm -> Q,K,V -> interleaved RoPE -> causal GQA
 * attention over the cache -> Wo -> residual; RMSNorm -> SwiGLU FFN ->
 * residual; final RMSNorm -> classifier. Plain loops, nothing shared with
 * Switchyard. Build without FMA contraction (-ffp-contract=off) for the bits
 * of llama2.c -O2.
 */
#ifndef SY_LLM_REF_H
#define SY_LLM_REF_H

#include <stddef.h>

typedef struct ref_model {
    int dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len, hd, kv_dim;
    float *data; /* the whole file as floats after the header */
    const float *tok, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final, *cls;
    float *x, *xb, *xb2, *hb, *hb2, *q, *att, *logits, *kc, *vc;
} ref_model;

/* 0, or -1 with a message in err */
int ref_load(const char *path, ref_model *m, char *err, size_t errlen);
void ref_free(ref_model *m);
/* the logits after `token` at position `pos` (the cache holds 0..pos-1) */
float *ref_forward(ref_model *m, int token, int pos);
int ref_argmax(const float *x, int n);

#endif
