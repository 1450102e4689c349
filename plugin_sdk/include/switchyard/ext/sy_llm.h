/*
 * The LLM runtime extension, version 1.
 *
 * The LLM runtime is a plugin (plugins/llm) that registers this function
 * table with host->register_extension(p, "llm", 1, &table). A host fetches
 * it with
 *
 *     const sy_llm_api *llm = sy_get_extension(env, SY_LLM_EXTENSION_NAME, SY_LLM_EXTENSION_VERSION);
 *
 * and checks llm->struct_size before using an entry appended after v1.0.
 * The runner drives sessions through the host's application API, like any
 * application: it works on whatever providers the INI selects.
 *
 * Rules (ABI v1): the table and every struct start with struct_size and only
 * grow at the end. Errors are sy_status handles (NULL = success) that name
 * the bundle file or graph at fault; free them with sy_status_free.
 *
 * A bundle is a directory (see docs/llm.md): graphs named
 * `[prompt_|token_]arA_clC_i_of_N.onnx` sharing one external-data weight
 * file, `bundle.ini`, and the tokenizer. AR, CL and shard sets come from the
 * graph names only.
 */
#ifndef SWITCHYARD_SY_LLM_H
#define SWITCHYARD_SY_LLM_H

#include "../sy_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SY_LLM_EXTENSION_NAME "llm"
#define SY_LLM_EXTENSION_VERSION 1u

struct sy_env;
typedef struct sy_llm_runner sy_llm_runner;

/* Why generation stopped. Values are fixed; new ones are appended. */
typedef enum sy_llm_stop_reason {
    SY_LLM_STOP_NONE = 0,
    SY_LLM_STOP_EOS = 1,     /* the model produced an end token (counted in the ids) */
    SY_LLM_STOP_LENGTH = 2,  /* max_tokens reached */
    SY_LLM_STOP_USER = 3,    /* the stream callback returned false */
    SY_LLM_STOP_STRING = 4,  /* a stop string appeared (it is not part of the text) */
    SY_LLM_STOP_CONTEXT = 5  /* the KV cache is full (largest CL); the output so far is kept */
} sy_llm_stop_reason;

/* Stream callback: `piece` holds only complete UTF-8 sequences (a token that
 * ends inside a multi-byte character is held back until it completes), it is
 * not NUL-terminated. `token` is the id that completed the piece. Return
 * false to stop (SY_LLM_STOP_USER). */
typedef bool (*sy_llm_stream_fn)(void *user, const char *piece, size_t len, int32_t token);

/* Generation parameters. Zero-initialise and set struct_size; then
 * sy_llm_params defaults: greedy, no limit but the context. */
typedef struct sy_llm_params {
    uint32_t struct_size;
    int32_t max_tokens;          /* <= 0: until EOS or the context is full */
    float temperature;           /* <= 0: greedy (argmax fast path) */
    int32_t top_k;               /* <= 0: off */
    float top_p;                 /* <= 0 or >= 1: off */
    float min_p;                 /* <= 0: off */
    float repetition_penalty;    /* <= 0 or 1: off (llama.cpp rule: divide positive logits, multiply negative) */
    int32_t penalty_last_n;      /* window of the penalty; 0: 64 */
    uint64_t seed;               /* RNG seed, used when the sampler state is (re)created */
    const char *const *stop;     /* stop strings (may be NULL) */
    uint32_t n_stop;
    sy_llm_stream_fn stream;     /* may be NULL */
    void *user;
} sy_llm_params;

/* What a generate call produced. The arrays belong to the runner and stay
 * valid until its next call. */
typedef struct sy_llm_result {
    uint32_t struct_size;
    sy_llm_stop_reason stop;
    const int32_t *ids; /* generated ids (including an EOS id that stopped it) */
    size_t n_ids;
    const char *text;   /* decoded text, NUL-terminated (without a stop string) */
    size_t text_len;
    size_t n_prompt;    /* prompt tokens evaluated by this call */
} sy_llm_result;

typedef struct sy_llm_stats {
    uint32_t struct_size;
    uint64_t ttft_ns;          /* last generate: start to first sampled token */
    uint64_t prefill_ns;       /* last generate: prompt evaluation */
    uint64_t decode_ns;        /* last generate: decode steps */
    uint64_t prefill_tokens, decode_tokens;
    double prefill_tok_s, decode_tok_s;
    uint64_t kernel_ns;        /* time inside session runs (last generate) */
    uint64_t outside_ns;       /* the rest of the step: KV copies, mask, RoPE, sampling */
    size_t kv_bytes_in_use;    /* valid KV rows of every layer (n_past) */
    size_t kv_bytes_reserved;  /* the shared KV buffers (largest variant) */
    int32_t n_past;
    int32_t active_cl;         /* CL of the variant in use */
    uint64_t restrides;        /* in-place KV restrides so far */
} sy_llm_stats;

/* What the bundle contains (derived from graph names and tensor shapes). */
typedef struct sy_llm_info {
    uint32_t struct_size;
    int32_t n_layers, n_heads, n_kv_heads, head_dim, hidden, vocab;
    int32_t n_shards;
    int32_t n_ar, n_cl;
    int32_t ar[8];              /* ascending */
    int32_t cl[8];              /* ascending */
    int32_t bos, eos[4], n_eos;
    int32_t n_graphs;
} sy_llm_info;

typedef struct sy_llm_api {
    uint32_t struct_size;
    /* Load a bundle directory. `options`: "key=value" lines (or ';'
     * separated), may be NULL. Keys: threads, profiling, kv_zero_check.
     * An unknown key is an error naming it. */
    sy_status *(*runner_create)(struct sy_env *env, const char *bundle_dir, const char *options, sy_llm_runner **out);
    void (*runner_release)(sy_llm_runner *r);
    /* Generate from text. BOS is prepended only when the cache is empty. An
     * empty prompt continues from the current state (from BOS when empty). */
    sy_status *(*generate)(sy_llm_runner *r, const char *prompt, const sy_llm_params *params, sy_llm_result *out);
    /* Same from token ids (no BOS is added). */
    sy_status *(*generate_ids)(sy_llm_runner *r, const int32_t *ids, size_t n, const sy_llm_params *params,
                               sy_llm_result *out);
    /* Evaluate ids without sampling; the logits of the last one are then
     * available through `logits`. */
    sy_status *(*prefill)(sy_llm_runner *r, const int32_t *ids, size_t n);
    /* Logits of the last evaluated position (vocab floats), or an error when
     * none are current. */
    sy_status *(*logits)(sy_llm_runner *r, const float **out, size_t *n);
    /* Text -> ids (llama2.c BPE: dummy-prefix space, merges by score).
     * `*n` receives the count even when it exceeds `cap` (then an error). */
    sy_status *(*encode)(sy_llm_runner *r, const char *text, bool add_bos, int32_t *ids, size_t cap, size_t *n);
    /* Ids -> text, NUL-terminated; `*len` gets the length needed. */
    sy_status *(*decode)(sy_llm_runner *r, const int32_t *ids, size_t n, char *buf, size_t cap, size_t *len);
    /* Forget the conversation: n_past = 0, KV zeroed, sampler history cleared. */
    void (*reset)(sy_llm_runner *r);
    sy_status *(*save_state)(sy_llm_runner *r, const char *path);
    sy_status *(*load_state)(sy_llm_runner *r, const char *path);
    /* State in memory; free the buffer with free_buffer. */
    sy_status *(*save_state_buffer)(sy_llm_runner *r, void **buf, size_t *size);
    sy_status *(*load_state_buffer)(sy_llm_runner *r, const void *buf, size_t size);
    void (*free_buffer)(void *buf);
    bool (*stats)(const sy_llm_runner *r, sy_llm_stats *out);
    bool (*info)(const sy_llm_runner *r, sy_llm_info *out);
} sy_llm_api;

/* Defaults for params (greedy, unlimited). */
static inline sy_llm_params sy_llm_params_default(void)
{
    sy_llm_params p = {0};
    p.struct_size = sizeof p;
    p.top_p = 1.0f;
    p.repetition_penalty = 1.0f;
    p.penalty_last_n = 64;
    p.seed = 42;
    return p;
}

#ifdef __cplusplus
}
#endif
#endif
