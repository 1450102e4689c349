/*
 * Fuzz target: the tokenizer of a real bundle (SY_FUZZ_LLM_BUNDLE): the
 * input is a text and an id list (int32 little-endian), separated by
 * "\n@@\n". The text is encoded with and without BOS (and decoded back);
 * the ids are decoded, any value in them, into a small and a large buffer.
 */
#include "fuzz_llm.h"


static sy_llm_runner *runner;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!runner) {
        fuzz_llm_setup();
        uint8_t *p = NULL;
        size_t n = 0;
        char path[512];
        const char *src = getenv("SY_FUZZ_LLM_BUNDLE");
        snprintf(path, sizeof path, "%s/bundle.ini", src);
        if (!fuzz_read(path, &p, &n) || !fuzz_write(fuzz_bundle, "bundle.ini", p, n))
            exit(2);
        free(p);
        snprintf(path, sizeof path, "%s/tokenizer.bin", src);
        if (!fuzz_read(path, &p, &n) || !fuzz_write(fuzz_bundle, "tokenizer.bin", p, n))
            exit(2);
        free(p);
        sy_status *st = fuzz_llm->runner_create(fuzz_env(), fuzz_bundle, "threads=1", &runner);
        if (st) {
            fprintf(stderr, "fuzz_llm_text: %s\n", sy_status_get_message(st));
            exit(2);
        }
    }
    const uint8_t *part[2];
    size_t len[2];
    size_t k = fuzz_split(data, size, part, len, 2);
    char *text = malloc(len[0] + 1);
    int32_t *ids = malloc((len[0] + 8) * sizeof *ids);
    if (text && ids) {
        memcpy(text, part[0], len[0]);
        text[len[0]] = '\0';
        char back[512];
        for (int bos = 0; bos < 2; bos++) {
            size_t n = 0, tl = 0;
            sy_status *st = fuzz_llm->encode(runner, text, bos, ids, len[0] + 8, &n);
            if (!st)
                fuzz_ignore(fuzz_llm->decode(runner, ids, n, back, sizeof back, &tl));
            sy_status_free(st);
            fuzz_ignore(fuzz_llm->encode(runner, text, bos, ids, 2, &n)); /* too small a buffer */
        }
    }
    if (k > 1) {
        size_t n = len[1] / 4;
        int32_t *v = malloc((n ? n : 1) * sizeof *v);
        if (v) {
            memcpy(v, part[1], n * 4);
            char small[8], big[4096];
            size_t tl = 0;
            fuzz_ignore(fuzz_llm->decode(runner, v, n, small, sizeof small, &tl));
            fuzz_ignore(fuzz_llm->decode(runner, v, n, big, sizeof big, &tl));
            free(v);
        }
    }
    free(text);
    free(ids);
    return 0;
}
