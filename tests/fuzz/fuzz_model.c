/*
 * Fuzz target: a model from memory (ONNX or TFLite, decided by content like
 * sy_model_load) -> session on the default providers -> run with a pattern
 * input -> outputs. Built twice, as fuzz_onnx and fuzz_tflite: the code is
 * the same, the corpora and dictionaries differ.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sy_env *env = fuzz_env();
    sy_model *m = NULL;
    sy_status *st = sy_model_load_buffer(env, data, size, "fuzz-model", "/nonexistent-fuzz-dir", &m);
    if (st) {
        sy_status_free(st);
        return 0;
    }
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1};
    sy_session *s = NULL;
    st = sy_session_create(env, m, &o, &s);
    if (!st) {
        fuzz_run_session(s, m, 1 << 20);
        fuzz_run_session(s, m, 1 << 20); /* a second run reuses the plan */
    }
    sy_status_free(st);
    sy_session_release(s);
    sy_model_release(m);
    return 0;
}
