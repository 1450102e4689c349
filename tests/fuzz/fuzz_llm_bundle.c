/*
 * Fuzz target: an LLM bundle's text and data files. The input is
 * bundle.ini, the tokenizer and a saved state, separated by "\n@@\n"; the
 * graphs are the real bundle's (SY_FUZZ_LLM_BUNDLE). The runner is created,
 * the state loaded, a short prompt encoded, two tokens generated.
 */
#include "fuzz_llm.h"


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_llm_setup();
    const uint8_t *part[3];
    size_t len[3];
    size_t n = fuzz_split(data, size, part, len, 3);
    if (!fuzz_write(fuzz_bundle, "bundle.ini", part[0], len[0]) ||
        !fuzz_write(fuzz_bundle, "tokenizer.bin", n > 1 ? part[1] : (const uint8_t *)"", n > 1 ? len[1] : 0))
        return 0;
    sy_llm_runner *r = NULL;
    sy_status *st = fuzz_llm->runner_create(fuzz_env(), fuzz_bundle, "threads=1", &r);
    if (!st) {
        if (n > 2)
            fuzz_ignore(fuzz_llm->load_state_buffer(r, part[2], len[2]));
        int32_t ids[64];
        size_t k = 0;
        fuzz_ignore(fuzz_llm->encode(r, "Once upon a time", true, ids, 64, &k));
        char text[256];
        size_t tl = 0;
        fuzz_ignore(fuzz_llm->decode(r, ids, k, text, sizeof text, &tl));
        sy_llm_params p = {.struct_size = sizeof p, .max_tokens = 2};
        sy_llm_result res = {.struct_size = sizeof res};
        fuzz_ignore(fuzz_llm->generate(r, "Once", &p, &res));
        fuzz_llm->runner_release(r);
    }
    sy_status_free(st);
    return 0;
}
