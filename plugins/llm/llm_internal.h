/* The LLM runtime plugin: shared internals (tokenizer, sampler, detokenizer). */
#ifndef SY_LLM_INTERNAL_H
#define SY_LLM_INTERNAL_H

#include <switchyard/ext/sy_llm.h>
#include <switchyard/sy_plugin.h>

#include <stddef.h>
#include <stdint.h>

extern const sy_host_api *llm_host;

#define LLM_ERR(code, ...) llm_host->status_new((code), __VA_ARGS__)

/* the largest repetition-penalty window (ids kept per sampler) */
#define LLM_MAX_PENALTY_WINDOW 65536

/* fopen for reading a bundle file without blocking on a FIFO: NULL with
 * errno EFTYPE_LLM when the path is not a regular file (llm_file.c) */
#define EFTYPE_LLM EINVAL
#include <stdio.h>
FILE *llm_fopen_regular(const char *path, const char *mode);

/* ---- tokenizer (llama2.c format) ---------------------------------------- */
typedef struct llm_tok_entry {
    const char *str;
    int32_t id;
} llm_tok_entry;

typedef struct llm_tokenizer {
    int32_t vocab;
    int32_t max_len;
    char **pieces;   /* NUL-terminated */
    uint32_t *lens;
    float *scores;
    llm_tok_entry *sorted; /* by string, for lookups */
    int32_t bos, eos0;
    char *scratch;   /* merge candidate buffer */
} llm_tokenizer;

sy_status *llm_tok_load(const char *path, int32_t expect_vocab, llm_tokenizer *t);
void llm_tok_free(llm_tokenizer *t);
/* ids must hold strlen(text) + 3 entries */
sy_status *llm_tok_encode(llm_tokenizer *t, const char *text, bool bos, int32_t *ids, size_t *n);
/* The bytes of `tok` after `prev` (BOS-leading-space rule, <0xXX> bytes);
 * special tokens (<unk>, BOS, EOS) give no bytes. */
void llm_tok_piece(const llm_tokenizer *t, int32_t prev, int32_t tok, const char **p, size_t *len, char byte_buf[2]);

/* ---- UTF-8-safe stream detokenizer ---------------------------------------- */
typedef struct llm_detok {
    char hold[8];   /* an incomplete UTF-8 sequence */
    size_t n_hold;
} llm_detok;
/* Append the complete UTF-8 part of hold+bytes to out (invalid bytes become
 * U+FFFD); keep an incomplete tail. out needs len + 8 + 3*len bytes at most. */
size_t llm_detok_push(llm_detok *d, const char *bytes, size_t len, char *out);
/* Flush: an incomplete tail becomes U+FFFD. */
size_t llm_detok_flush(llm_detok *d, char *out);

/* ---- sampler --------------------------------------------------------------- */
typedef struct llm_sampler_cfg {
    float temperature;
    int32_t top_k;
    float top_p, min_p;
    float rep_penalty;
    int32_t last_n;
    uint64_t seed;
} llm_sampler_cfg;

typedef struct llm_prob {
    float p;
    int32_t id;
} llm_prob;

typedef struct llm_sampler {
    llm_sampler_cfg cfg;
    bool configured;
    uint64_t rng;
    int32_t vocab;
    int32_t *hist; /* ring of the last cfg.last_n accepted ids (oldest first when linearised) */
    size_t n_hist, cap_hist;
    float *work;
    llm_prob *cand;
} llm_sampler;

sy_status *llm_sampler_init(llm_sampler *s, int32_t vocab);
void llm_sampler_free(llm_sampler *s);
/* Apply a configuration: a different one re-seeds and clears the history. */
void llm_sampler_configure(llm_sampler *s, const llm_sampler_cfg *cfg);
void llm_sampler_clear(llm_sampler *s);
int32_t llm_sampler_sample(llm_sampler *s, const float *logits);
void llm_sampler_accept(llm_sampler *s, int32_t id);
uint32_t llm_rng_u32(uint64_t *state);

#endif
