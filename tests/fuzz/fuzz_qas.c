/*
 * Fuzz target: a QAS-INT8 training checkpoint (an ONNX file of
 * initializers, tools/lib/src/train_qas_checkpoint.c) -> sy_qas_session_load
 * on one session of a small QDQ model built here (two trained Gemm layers
 * with biases and momentum, so every tensor kind of a checkpoint is asked
 * for). A checkpoint that loads must leave a session that evaluates, and
 * saving it again must give a checkpoint that loads.
 *
 * The seed is the session's own checkpoint: with SY_FUZZ_WRITE_SEED=DIR the
 * first input writes it to DIR/checkpoint (tools/fuzz/run.sh does this).
 */
#include "fuzz_common.h"
#include "pt_onnx.h"
#include "switchyard/sy_train.h"

enum { IN = 8, HID = 6, CLS = 3 };

static void scalar_q(pt_model *m, const char *base, float scale, int8_t zp)
{
    char s[64], z[64];
    snprintf(s, sizeof s, "%s_s", base);
    snprintf(z, sizeof z, "%s_z", base);
    pt_init_f32(m, s, 0, NULL, &scale);
    pt_init_raw(m, z, PT_I8, 0, NULL, &zp, 1);
}

/* QuantizeLinear then DequantizeLinear with base's parameters */
static void qdq(pt_model *m, const char *in, const char *base, const char *out)
{
    char s[64], z[64], q[64];
    snprintf(s, sizeof s, "%s_s", base);
    snprintf(z, sizeof z, "%s_z", base);
    snprintf(q, sizeof q, "%s_q", base);
    pt_node(m, "QuantizeLinear", q, (const char *[]){in, s, z, NULL}, (const char *[]){q, NULL});
    pt_node(m, "DequantizeLinear", out, (const char *[]){q, s, z, NULL}, (const char *[]){out, NULL});
}

/* a QDQ Gemm: int8 W [o, k] (transB = 1, per-tensor scale), int32 bias of scale xs * ws */
static void gemm(pt_model *m, const char *name, const char *in, float xs, int64_t k, int64_t o, const char *out)
{
    char w[64], ws[64], wz[64], wd[64], b[64], bs[64], bd[64];
    snprintf(w, sizeof w, "%s.W", name);
    snprintf(ws, sizeof ws, "%s.Ws", name);
    snprintf(wz, sizeof wz, "%s.Wz", name);
    snprintf(wd, sizeof wd, "%s.Wdq", name);
    snprintf(b, sizeof b, "%s.B", name);
    snprintf(bs, sizeof bs, "%s.Bs", name);
    snprintf(bd, sizeof bd, "%s.Bdq", name);
    int8_t wc[IN * IN], zero = 0;
    int32_t bc[IN];
    float s = 0.01f, bsc[IN];
    for (int64_t i = 0; i < o * k; i++)
        wc[i] = (int8_t)((i * 37) % 101 - 50);
    for (int64_t c = 0; c < o; c++) {
        bc[c] = (int32_t)(c * 13 % 40) - 20;
        bsc[c] = xs * s;
    }
    int64_t wdims[2] = {o, k};
    pt_init_raw(m, w, PT_I8, 2, wdims, wc, (size_t)(o * k));
    pt_init_f32(m, ws, 0, NULL, &s);
    pt_init_raw(m, wz, PT_I8, 0, NULL, &zero, 1);
    pt_init_raw(m, b, ONNX__TENSOR_PROTO__DATA_TYPE__INT32, 1, &o, bc, (size_t)o * 4);
    pt_init_f32(m, bs, 1, &o, bsc);
    pt_node(m, "DequantizeLinear", wd, (const char *[]){w, ws, wz, NULL}, (const char *[]){wd, NULL});
    pt_node(m, "DequantizeLinear", bd, (const char *[]){b, bs, NULL}, (const char *[]){bd, NULL});
    pt_attr_int(m, "axis", 0);
    pt_node(m, "Gemm", name, (const char *[]){in, wd, bd, NULL}, (const char *[]){out, NULL});
    pt_attr_int(m, "transB", 1);
}

/* the model as a file in /dev/shm (a QAS session reads its model by path) */
static void write_model(const char *path)
{
    const float xs = 1.0f / 127.0f, hs = 0.03f;
    pt_model *m = pt_model_new("fuzz_qas");
    int64_t xd[2] = {1, IN}, od[2] = {1, CLS};
    pt_input(m, "x", PT_F32, 2, xd);
    scalar_q(m, "xq", xs, 0);
    scalar_q(m, "h", hs, -128);
    scalar_q(m, "lg", 0.05f, 3);
    qdq(m, "x", "xq", "xd");
    gemm(m, "fc0", "xd", xs, IN, HID, "a");
    pt_node(m, "Relu", "relu0", (const char *[]){"a", NULL}, (const char *[]){"ar", NULL});
    qdq(m, "ar", "h", "hd");
    gemm(m, "fc1", "hd", hs, HID, CLS, "c");
    qdq(m, "c", "lg", "logits");
    pt_output(m, "logits", PT_F32, 2, od);
    uint8_t *buf;
    size_t len;
    pt_model_pack(m, &buf, &len);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len) {
        fprintf(stderr, "fuzz_qas: cannot write %s\n", path);
        abort();
    }
    fclose(f);
    free(buf);
    pt_model_free(m);
}

static sy_qas_session *session(void)
{
    static sy_qas_session *s;
    if (s)
        return s;
    char model[80];
    snprintf(model, sizeof model, "/dev/shm/sy_fuzz_qas_%d.onnx", (int)getpid());
    write_model(model);
    sy_qas_options o = {.struct_size = sizeof o, .last_k = 2, .momentum = 0.9f};
    sy_status *st = sy_qas_session_create(fuzz_env(), model, &o, &s, NULL);
    unlink(model);
    if (st) {
        fprintf(stderr, "fuzz_qas: cannot create the session: %s\n", sy_status_get_message(st));
        abort();
    }
    const char *seed = getenv("SY_FUZZ_WRITE_SEED");
    if (seed) {
        char path[4096];
        snprintf(path, sizeof path, "%s/checkpoint", seed);
        if ((st = sy_qas_session_save(s, path))) {
            fprintf(stderr, "fuzz_qas: cannot write the seed: %s\n", sy_status_get_message(st));
            abort();
        }
    }
    return s;
}

static void eval(sy_qas_session *s)
{
    float x[IN];
    for (int i = 0; i < IN; i++)
        x[i] = (float)(i % 5) * 0.2f - 0.4f;
    int64_t y = 1;
    sy_tensor tx = {.struct_size = sizeof tx, .dtype = SY_DT_FLOAT32, .rank = 2, .dims = {1, IN}, .data = x,
                    .nbytes = sizeof x};
    sy_tensor ty = {.struct_size = sizeof ty, .dtype = SY_DT_INT64, .rank = 1, .dims = {1}, .data = &y,
                    .nbytes = sizeof y};
    float loss = 0;
    sy_status *st = sy_qas_session_eval(s, (const sy_tensor *[]){&tx, &ty}, 2, &loss, NULL);
    if (st) {
        fprintf(stderr, "fuzz_qas: a loaded checkpoint does not evaluate: %s\n", sy_status_get_message(st));
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sy_qas_session *s = session();
    char path[64];
    int fd = fuzz_memfile(data, size, path);
    if (fd < 0)
        return 0;
    sy_status *st = sy_qas_session_load(s, path);
    close(fd);
    if (st) {
        sy_status_free(st);
        return 0;
    }
    eval(s);
    /* what loaded saves to a checkpoint that loads */
    char again[80];
    snprintf(again, sizeof again, "/dev/shm/sy_fuzz_qas_%d.ckpt", (int)getpid());
    st = sy_qas_session_save(s, again);
    if (!st)
        st = sy_qas_session_load(s, again);
    unlink(again);
    if (st) {
        fprintf(stderr, "fuzz_qas: a loaded checkpoint does not save and load again: %s\n", sy_status_get_message(st));
        abort();
    }
    return 0;
}
