/*
 * Fuzz target: a compile cache -> session of graphs/tiny_cnn.onnx on the
 * htp emulator (sy_session_options.compiled_cache) -> run. A cache that is
 * accepted must be the program htp derives itself, so the run must give the
 * bits of a session compiled from scratch.
 */
#include "fuzz_common.h"

static sy_env *env;
static sy_model *model;
static float want[10];

static bool run10(sy_session *s, float *y)
{
    float in[64];
    for (int i = 0; i < 64; i++)
        in[i] = (float)(i % 9) / 8.0f - 0.5f;
    sy_tensor t = {.struct_size = sizeof t, .dtype = SY_DT_FLOAT32, .rank = 4, .dims = {1, 1, 8, 8}, .data = in,
                   .nbytes = sizeof in};
    const sy_tensor *out = NULL;
    sy_status *st = sy_session_set_input_by_index(s, 0, &t, SY_INPUT_COPY);
    if (!st)
        st = sy_session_run(s);
    if (!st)
        st = sy_session_get_output(s, 0, &out);
    bool ok = !st && out->nbytes == 10 * sizeof(float);
    if (ok)
        memcpy(y, out->data, 10 * sizeof(float));
    sy_status_free(st);
    return ok;
}

static void setup(void)
{
    env = fuzz_env_from("[switchyard]\nplugin_dirs = " FUZZ_PLUGIN_DIR "\nproviders = htp, cpu_ref\n" FUZZ_LIMITS);
    sy_status *st = sy_model_load(env, FUZZ_SOURCE_DIR "/graphs/tiny_cnn.onnx", &model);
    sy_session *s = NULL;
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1};
    if (!st)
        st = sy_session_create(env, model, &o, &s);
    if (st || !run10(s, want)) {
        fprintf(stderr, "fuzz_cache: setup failed: %s\n", st ? sy_status_get_message(st) : "run");
        abort();
    }
    sy_session_release(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!env)
        setup();
    char path[64];
    int fd = fuzz_memfile(data, size, path);
    if (fd < 0)
        return 0;
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1, .compiled_cache = path};
    sy_session *s = NULL;
    sy_status *st = sy_session_create(env, model, &o, &s);
    close(fd);
    if (!st) {
        float got[10];
        if (run10(s, got) && memcmp(got, want, sizeof got)) {
            fprintf(stderr, "fuzz_cache: an accepted cache ran to another answer\n");
            abort();
        }
    }
    sy_status_free(st);
    sy_session_release(s);
    return 0;
}
