/*
 * The LLM runtime plugin: registers the "llm" extension (switchyard/ext/sy_llm.h, v1).
 * No LLM code lives in the core; the runner drives sessions through the
 * host's application API table (host->app), like any application.
 */
#include "llm_internal.h"

#include <stdlib.h>

const sy_host_api *llm_host; /* process-wide: the same host table in every environment */

sy_status *llm_runner_create(struct sy_env *env, const char *bundle_dir, const char *options, sy_llm_runner **out);
void llm_runner_release(sy_llm_runner *r);
sy_status *llm_generate(sy_llm_runner *r, const char *prompt, const sy_llm_params *p, sy_llm_result *out);
sy_status *llm_generate_ids(sy_llm_runner *r, const int32_t *ids, size_t n, const sy_llm_params *p, sy_llm_result *out);
sy_status *llm_prefill(sy_llm_runner *r, const int32_t *ids, size_t n);
sy_status *llm_logits(sy_llm_runner *r, const float **out, size_t *n);
sy_status *llm_encode(sy_llm_runner *r, const char *text, bool add_bos, int32_t *ids, size_t cap, size_t *n);
sy_status *llm_decode(sy_llm_runner *r, const int32_t *ids, size_t n, char *buf, size_t cap, size_t *len);
void llm_reset(sy_llm_runner *r);
sy_status *llm_save_state(sy_llm_runner *r, const char *path);
sy_status *llm_load_state(sy_llm_runner *r, const char *path);
sy_status *llm_save_state_buffer(sy_llm_runner *r, void **buf, size_t *size);
sy_status *llm_load_state_buffer(sy_llm_runner *r, const void *buf, size_t size);
bool llm_stats(const sy_llm_runner *r, sy_llm_stats *out);
bool llm_info(const sy_llm_runner *r, sy_llm_info *out);

static void llm_free_buffer(void *buf) { free(buf); }

static const sy_llm_api llm_api = {
    .struct_size = sizeof(sy_llm_api),
    .runner_create = llm_runner_create,
    .runner_release = llm_runner_release,
    .generate = llm_generate,
    .generate_ids = llm_generate_ids,
    .prefill = llm_prefill,
    .logits = llm_logits,
    .encode = llm_encode,
    .decode = llm_decode,
    .reset = llm_reset,
    .save_state = llm_save_state,
    .load_state = llm_load_state,
    .save_state_buffer = llm_save_state_buffer,
    .load_state_buffer = llm_load_state_buffer,
    .free_buffer = llm_free_buffer,
    .stats = llm_stats,
    .info = llm_info,
};

static sy_status *llm_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    llm_host = host;
    if (!host->app)
        return host->status_new(SY_ERR_UNSUPPORTED, "llm: the host has no application API table (host->app)");
    return host->register_extension(p, SY_LLM_EXTENSION_NAME, SY_LLM_EXTENSION_VERSION, &llm_api);
}

static void llm_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "llm",
    .version = "0.1.0",
    .description = "LLM runtime: multi-shard graph bundles, KV cache, CL promotion, sampling, llama2.c tokenizer",
    .kinds = SY_PLUGIN_KIND_EXTENSION,
    .option_keys = NULL,
    .init = llm_init,
    .fini = llm_fini,
};

SY_PLUGIN_DEFINE(desc)
