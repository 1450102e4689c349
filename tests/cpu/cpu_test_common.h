/*
 * What the cpu provider's tests share: the env of cpu_ref, some operator
 * families and cpu; their random data; the convolution they write out in
 * double; float initializers stored as fp32 or fp16; and one run of a packed
 * model that reads the outputs back as floats and counts what the cpu
 * provider compiled.
 */
#ifndef CPU_TEST_COMMON_H
#define CPU_TEST_COMMON_H

#include "pt_common.h"
#include "switchyard/sy_sdk.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* An env of cpu_ref, the operator families `families` (space-separated
 * plugin names without lib/.so, e.g. "ops_nn ops_activation"), and cpu, with
 * `providers =` set to `providers` and the INI text `extra` after it. NULL
 * (and a failed check) when the env is refused. */
static inline sy_env *cpu_env(const char *families, const char *providers, const char *extra)
{
    char ini[4096], fam[1024] = "";
    size_t used = 0;
    for (const char *f = families; *f;) {
        size_t len = strcspn(f, " ");
        if (len) {
            int w = snprintf(fam + used, sizeof fam - used, "plugins = %s/libsy_%.*s.so\n", PT_PLUGIN_DIR, (int)len, f);
            if (w < 0 || (size_t)w >= sizeof fam - used)
                abort();
            used += (size_t)w;
        }
        f += len;
        f += *f == ' ';
    }
    int w = snprintf(ini, sizeof ini, "[switchyard]\nplugins = %s/libsy_cpu_ref.so\n%splugins = %s/libsy_cpu.so\nproviders = %s\n%s",
                     PT_PLUGIN_DIR, fam, PT_PLUGIN_DIR, providers, extra);
    if (w < 0 || (size_t)w >= sizeof ini)
        abort();
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    PT_CHECK(!st, "env: %s", pt_msg(st));
    return env;
}

/* uniform in [-1, 1) from a linear congruential state */
static inline float cpu_rnd(uint32_t *lcg)
{
    *lcg = *lcg * 1664525u + 1013904223u;
    return (float)((*lcg >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* The ONNX Conv of one NCHW image with square kernel k, stride s and pad p
 * on every side, in double, optionally followed by Relu. `mag` receives the
 * sum of |terms| per output (the error bound's scale); `in_mag` is the
 * magnitude already carried by the input (NULL: |in|). */
static inline void cpu_ref_conv(const double *in, const double *in_mag, int ci, int h, int w, const float *wt,
                                const float *b, int co, int k, int s, int p, bool relu, double *out, double *mag)
{
    int oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
    for (int o = 0; o < co; o++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                double acc = b[o], a = fabs((double)b[o]);
                for (int c = 0; c < ci; c++)
                    for (int ky = 0; ky < k; ky++)
                        for (int kx = 0; kx < k; kx++) {
                            int iy = oy * s - p + ky, ix = ox * s - p + kx;
                            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                continue;
                            size_t at = (size_t)((c * h + iy) * w + ix);
                            double wv = wt[((o * ci + c) * k + ky) * k + kx];
                            acc += in[at] * wv;
                            a += (in_mag ? in_mag[at] : fabs(in[at])) * fabs(wv);
                        }
                out[(o * oh + oy) * ow + ox] = relu && acc < 0 ? 0 : acc;
                mag[(o * oh + oy) * ow + ox] = a;
            }
}

static inline void cpu_init_floats(pt_model *m, const char *name, int32_t rank, const int64_t *dims, const float *v,
                                   size_t n, bool f16)
{
    if (!f16) {
        pt_init_raw(m, name, PT_F32, rank, dims, v, n * 4);
        return;
    }
    uint16_t *h = malloc(n * 2);
    if (!h)
        abort();
    for (size_t i = 0; i < n; i++)
        h[i] = sy_f32_to_f16(v[i]);
    pt_init_raw(m, name, PT_F16, rank, dims, h, n * 2);
    free(h);
}

/* What one run gave besides its outputs. */
typedef struct cpu_run_info {
    size_t cpu_parts;    /* partitions the cpu provider compiled */
    uint32_t part_nodes; /* nodes in them */
    size_t cpu_nodes;    /* nodes placed on cpu */
} cpu_run_info;

/* Run the model `pm` once on cpu_env(families, "cpu", ...) with the
 * [provider.cpu] lines `cpu_opts`, one session thread. Input "x" (float
 * values, stored as fp16 when `f16`); outputs 0 .. n_out-1 are read back as floats into dst[o]
 * (cnt[o] elements each, refused when the size differs). The session is
 * still open when `extra` is called (may be NULL), for what a test reads of
 * it beyond the outputs. */
static inline bool cpu_run_model(const char *families, const char *cpu_opts, const pt_model *pm, const float *x,
                                 int32_t rank, const int64_t *dims, bool f16, size_t n_out, float *const *dst,
                                 const size_t *cnt, cpu_run_info *info, void (*extra)(sy_session *, void *),
                                 void *extra_arg)
{
    char opts[2048];
    snprintf(opts, sizeof opts, "[provider.cpu]\n%s", cpu_opts);
    memset(info, 0, sizeof *info);
    sy_env *env = cpu_env(families, "cpu", opts);
    if (!env)
        return false;
    sy_model *model = pt_load(env, pm);
    sy_session *s = NULL;
    sy_session_options so = {.struct_size = sizeof so, .threads = 1, .strict = -1};
    sy_status *st = model ? sy_session_create(env, model, &so, &s) : NULL;
    PT_CHECK(!st, "session: %s", pt_msg(st));
    bool ok = false;
    if (s) {
        size_t nx = 1;
        for (int32_t i = 0; i < rank; i++)
            nx *= (size_t)dims[i];
        uint16_t *xh = malloc(nx * 2);
        if (!xh)
            abort();
        for (size_t i = 0; i < nx; i++)
            xh[i] = sy_f32_to_f16(x[i]);
        sy_tensor t = pt_tensor_f32((float *)x, rank, dims);
        if (f16) {
            t.dtype = SY_DT_FLOAT16;
            t.data = xh;
            t.nbytes = nx * 2;
        }
        st = sy_session_set_input(s, "x", &t, SY_INPUT_COPY);
        if (!st)
            st = sy_session_run(s);
        free(xh);
        PT_CHECK(!st, "run: %s", pt_msg(st));
        ok = !st;
        for (size_t o = 0; ok && o < n_out; o++) {
            const sy_tensor *out = NULL;
            st = sy_session_get_output(s, o, &out);
            ok = !st && out && out->nbytes == cnt[o] * (f16 ? 2 : 4);
            PT_CHECK(ok, "output %zu: %s", o, pt_msg(st));
            for (size_t i = 0; ok && i < cnt[o]; i++)
                dst[o][i] = f16 ? sy_f16_to_f32(((const uint16_t *)out->data)[i]) : ((const float *)out->data)[i];
        }
        for (size_t i = 0; i < sy_session_partition_count(s); i++) {
            const char *prov = NULL;
            uint32_t nn = 0;
            bool compiled = false, cached = false;
            if (sy_session_partition_info(s, i, &prov, &nn, &compiled, &cached) && prov && !strcmp(prov, "cpu") &&
                compiled) {
                info->cpu_parts++;
                info->part_nodes += nn;
            }
        }
        sy_node_placement pl = {.struct_size = sizeof pl};
        for (size_t i = 0; i < sy_session_node_count(s); i++)
            if (sy_session_node_placement(s, i, &pl) && pl.provider && !strcmp(pl.provider, "cpu"))
                info->cpu_nodes++;
        if (ok && extra)
            extra(s, extra_arg);
        sy_session_release(s);
    }
    sy_model_release(model);
    sy_env_release(env);
    return ok;
}

#endif
