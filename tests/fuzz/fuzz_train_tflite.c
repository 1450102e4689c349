/*
 * Fuzz target: a .tflite file as training input -> sy_qas_session_create's
 * int8 path (train_tflite_int8.c, QAS-INT8) and sy_train_build's TFLite
 * path (tools/lib/src/train_build.c: the translator train_tflite.c turns
 * a subgraph into an ONNX forward model, then the backward rules, the loss
 * and the optimizer graphs are built). The subgraph is chosen as the
 * caller's --subgraph would: an odd last byte asks for "1" (an index, or a
 * signature of that name), an even one for the default, subgraph 0. The bytes are handed over as a memfd
 * (the build reads its model by path); the artifacts go to one folder in
 * /dev/shm per process, emptied before every input.
 *
 * A model the build accepts must have left a forward.onnx the core loads
 * (the translation writes ONNX itself, so a malformed one is a finding),
 * and creating a training session of its artifacts must not fail with an
 * internal error (a refusal for sizes past the fuzz limits is fine).
 */
#include "fuzz_common.h"
#include "switchyard/sy_train.h"

#include <sys/stat.h>

static char dir_name[64];

/* the build writes only plain files into its folder */
static void clear(void)
{
    DIR *d = opendir(dir_name);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir_name, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
}

static void remove_folder(void)
{
    clear();
    rmdir(dir_name);
}

static const char *folder(void)
{
    if (!dir_name[0]) {
        snprintf(dir_name, sizeof dir_name, "/dev/shm/sy_fuzz_train_tflite_%d", (int)getpid());
        mkdir(dir_name, 0700);
        atexit(remove_folder);
    }
    return dir_name;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sy_env *env = fuzz_env();
    const char *dir = folder();
    clear();
    char path[64];
    int fd = fuzz_memfile(data, size, path);
    if (fd < 0)
        return 0;
    sy_train_build_options o = {.struct_size = sizeof o, .loss = SY_TRAIN_LOSS_MSE, .optimizer = SY_TRAIN_SGD,
                                .env = env, .subgraph = size && (data[size - 1] & 1) ? "1" : NULL};
    /* the int8 path first: QAS-INT8 of the same file (train_tflite_int8.c
     * translates it; an accepted model's front must build, so an accepted
     * session is one whose translation the core loaded) */
    sy_qas_options qo = {.struct_size = sizeof qo, .last_k = 1 + (size ? data[0] % 2 : 0)};
    sy_qas_session *qs = NULL;
    sy_status *st = sy_qas_session_create(env, path, &qo, &qs, NULL);
    if (st && sy_status_get_code(st) == SY_ERR_INTERNAL) {
        fprintf(stderr, "fuzz_train_tflite: QAS-INT8: %s\n", sy_status_get_message(st));
        abort();
    }
    sy_status_free(st);
    sy_qas_session_release(qs);
    st = sy_train_build(path, &o, dir, NULL);
    close(fd);
    if (st) {
        sy_status_free(st);
        return 0;
    }
    char fwd[128];
    snprintf(fwd, sizeof fwd, "%s/forward.onnx", dir);
    sy_model *m = NULL;
    st = sy_model_load(env, fwd, &m);
    if (st) {
        fprintf(stderr, "fuzz_train_tflite: an accepted model's forward.onnx does not load: %s\n",
                sy_status_get_message(st));
        abort();
    }
    sy_model_release(m);
    sy_train_session *s = NULL;
    st = sy_train_session_create(env, dir, &s);
    sy_train_session_release(s);
    /* a session may be refused for sizes past the fuzz limits (a declared
     * shape of millions of values), never for a bug */
    if (st && sy_status_get_code(st) == SY_ERR_INTERNAL) {
        fprintf(stderr, "fuzz_train_tflite: accepted artifacts do not load: %s\n", sy_status_get_message(st));
        abort();
    }
    sy_status_free(st);
    return 0;
}
