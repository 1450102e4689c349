/*
 * The emulators' integer path on the shared models super_resolution-10 and
 * ultraface_rfb_320, quantized at test time by `switchyard quantize`
 * (int8 for htp and lpai, uint8 for aic: the schemes of tools/bench/
 * emu_report.sh), calibrated on the input the test runs.
 *
 * Two checks per emulator and model:
 *  1. against cpu_ref running the same quantized model with the same
 *     requantization form. The emulators' MAC nodes requantize in the
 *     spec's fixed-point form, which is cpu_ref's `gemmlowp` form
 *     (sy_rq_apply), so the cpu_ref run uses `[provider.cpu_ref] requant =
 *     gemmlowp`. super_resolution-10 has no element-wise integer node: the
 *     integer arithmetic is identical and the output must be bit-exact.
 *     ultraface_rfb_320 has QAdd nodes, which the emulators compute in fp32
 *     (the spec's "eltwise in fp32, requant on output") while cpu_ref's
 *     gemmlowp QAdd adds in integers: no single cpu_ref form reproduces both,
 *     so only the scores output, whose path has no QAdd, is compared byte
 *     for byte -- and on lpai only: htp and aic run the float Softmax of the
 *     head in fp16, a different arithmetic.
 *  2. against cpu_ref fp32 on the float model: the relative error
 *     ||q - f|| / ||f|| over all outputs must not exceed the one the
 *     quantize tool itself reports for that model. The tool evaluates with
 *     the configuration it is given; it is given the same cpu_ref gemmlowp
 *     deployment, so its figure is the quantization error of the integer
 *     arithmetic the emulators implement (the default `onnx` form rounds
 *     differently and reports a slightly smaller error on
 *     super_resolution-10: 0.10356 vs 0.10376).
 *
 * cpu_ref on these models is slow in Debug / ASan builds: each model is
 * quantized once per scheme and its float reference run once; ultraface
 * runs on lpai and aic (one int8, one uint8 model) only.
 */
#include "emu_test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs(text, f);
    return fclose(f) == 0;
}

static const char *ref_ini_g(void)
{
    static char ini[1024];
    snprintf(ini, sizeof ini,
             "[switchyard]\nplugin_dirs = %s\nproviders = cpu_ref\nstrict = false\n[provider.cpu_ref]\nrequant = gemmlowp\n",
             EMU_PLUGIN_DIR);
    return ini;
}

static const char *emu_ini(const char *target)
{
    static char ini[1024];
    const char *opts = !strcmp(target, "htp")    ? "[provider.htp]\nsoc_model = SM8650\nvtcm_mb = 8\n"
                       : !strcmp(target, "lpai") ? "[provider.lpai]\nhw_version = v6\nscratch_mem_type = tcm\n"
                                                 : "[provider.aic]\nsku = standard\nnum_cores = 14\n";
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\nproviders = %s, cpu_ref\nstrict = false\n%s", EMU_PLUGIN_DIR,
             target, opts);
    return ini;
}

/* Quantize `model` (input dir `in`) with `scheme`; the relative error the
 * tool reports goes to *rel. */
static bool quantize(const char *model, const char *in, const char *scheme, char *out, size_t len, double *rel)
{
    char ini[512], log[512], cmd[4096];
    snprintf(ini, sizeof ini, "%s/refg.ini", tmpdir);
    snprintf(out, len, "%s/%s-%s.onnx", tmpdir, model, scheme);
    snprintf(log, sizeof log, "%s/%s-%s.txt", tmpdir, model, scheme);
    if (!write_text(ini, ref_ini_g())) {
        PT_CHECK(false, "cannot write %s", ini);
        return false;
    }
    snprintf(cmd, sizeof cmd, "'%s' quantize '%s/models/onnx/%s/model.onnx' --calib '%s' --scheme %s --config '%s' -o '%s' > '%s' 2>/dev/null",
             EMU_CLI, EMU_SHARED_DIR, model, in, scheme, ini, out, log);
    int rc = system(cmd);
    PT_CHECK(rc == 0, "quantize %s --scheme %s failed (%d)", model, scheme, rc);
    if (rc)
        return false;
    FILE *f = fopen(log, "r");
    char line[512];
    bool got = false;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, " relative error %lf", rel) == 1)
            got = true;
    if (f)
        fclose(f);
    PT_CHECK(got, "quantize %s: no 'relative error' line in %s", model, log);
    return got;
}

typedef struct run {
    sy_env *env;
    sy_model *m;
    sy_session *s;
} run;

static bool run_model(const char *ini, const char *path, const sy_tensor *in, run *r)
{
    memset(r, 0, sizeof *r);
    if (!emu_ok(sy_env_create_from_string(ini, NULL, &r->env), "env") || !emu_ok(sy_model_load(r->env, path, &r->m), path))
        return false;
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1};
    return emu_ok(sy_session_create(r->env, r->m, &o, &r->s), "session") &&
           emu_ok(sy_session_set_input_by_index(r->s, 0, in, SY_INPUT_COPY), "input") && emu_ok(sy_session_run(r->s), "run");
}

static void run_free(run *r)
{
    sy_session_release(r->s);
    sy_model_release(r->m);
    sy_env_release(r->env);
}

static const float *output(const run *r, size_t k, int64_t *n)
{
    const sy_tensor *t = NULL;
    if (!r->s || k >= sy_session_output_count(r->s) || !emu_ok(sy_session_get_output(r->s, k, &t), "output") ||
        t->dtype != SY_DT_FLOAT32)
        return NULL;
    *n = sy_tensor_numel(t);
    return t->data;
}

static size_t taken_by(const sy_session *s, const char *provider)
{
    size_t k = 0;
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && p.provider && !strcmp(p.provider, provider))
            k++;
    }
    return k;
}

/* One emulator on one quantized model. `exact_outputs`: how many leading
 * outputs must equal cpu_ref gemmlowp's bytes. */
static void check(const char *target, const char *model, const char *qpath, double tool_rel, const run *f32,
                  const sy_tensor *in, size_t exact_outputs)
{
    run g = {0}, e = {0};
    if (!run_model(ref_ini_g(), qpath, in, &g) || !run_model(emu_ini(target), qpath, in, &e))
        goto done;
    size_t taken = taken_by(e.s, target);
    PT_CHECK(taken > 0, "%s %s: no node on the emulator", target, model);
    double num = 0, den = 0;
    for (size_t k = 0; k < sy_session_output_count(f32->s); k++) {
        int64_t nf = 0, ng = 0, ne = 0;
        const float *yf = output(f32, k, &nf), *yg = output(&g, k, &ng), *ye = output(&e, k, &ne);
        bool ok = yf && yg && ye && nf == ng && nf == ne;
        PT_CHECK(ok, "%s %s output %zu missing or sized differently", target, model, k);
        if (!ok)
            goto done;
        int64_t diff = 0;
        for (int64_t i = 0; i < nf; i++) {
            diff += memcmp(&yg[i], &ye[i], sizeof(float)) != 0;
            double d = (double)ye[i] - yf[i];
            num += d * d;
            den += (double)yf[i] * yf[i];
        }
        if (k < exact_outputs)
            PT_CHECK(diff == 0, "%s %s output %zu: %lld of %lld values differ from cpu_ref gemmlowp", target, model, k,
                     (long long)diff, (long long)nf);
        printf("%s %s output %zu: %lld/%lld values differ from cpu_ref gemmlowp%s\n", target, model, k, (long long)diff,
               (long long)nf, k < exact_outputs ? " (bit-exact required)" : "");
    }
    double rel = den > 0 ? sqrt(num / den) : 0;
    printf("%s %s: %zu/%zu nodes on %s, relative error vs fp32 %.6g, the quantize tool's %.6g\n", target, model, taken,
           sy_session_node_count(e.s), target, rel, tool_rel);
    /* the tool prints 6 significant digits: compare at that precision */
    PT_CHECK(rel <= tool_rel * (1 + 5e-6), "%s %s: relative error %.6g > the tool's %.6g", target, model, rel, tool_rel);
done:
    run_free(&g);
    run_free(&e);
}

static sy_tensor *pattern_input(void)
{
    /* ultraface_rfb_320 has no test set: the image-like pattern of
     * test_emu_models.c, [1, 3, 240, 320] */
    int64_t n = 3 * 240 * 320;
    sy_tensor *t = calloc(1, sizeof *t + (size_t)n * sizeof(float) + 64);
    if (!t)
        return NULL;
    t->struct_size = sizeof *t;
    t->dtype = SY_DT_FLOAT32;
    t->rank = 4;
    t->dims[0] = 1, t->dims[1] = 3, t->dims[2] = 240, t->dims[3] = 320;
    t->data = (uint8_t *)(t + 1);
    t->nbytes = (size_t)n * sizeof(float);
    for (int64_t i = 0; i < n; i++)
        ((float *)t->data)[i] = (float)((i * 7919) % 256) / 255.0f;
    return t;
}

static void model_case(const char *model, bool ultraface)
{
    char in_dir[512], p[1024], q8[512], u8[512], ref_ini[512];
    sy_tensor *in = NULL;
    if (ultraface) {
        snprintf(in_dir, sizeof in_dir, "%s/%s-in", tmpdir, model);
        snprintf(p, sizeof p, "%s/input_0.pb", in_dir);
        in = pattern_input();
        bool ok = in && mkdir(in_dir, 0700) == 0;
        PT_CHECK(ok, "input dir %s", in_dir);
        if (!ok || !emu_ok(sy_tensor_write_file(p, in), p))
            goto done;
    } else {
        snprintf(in_dir, sizeof in_dir, "%s/models/onnx/%s/test_data_set_0", EMU_SHARED_DIR, model);
        snprintf(p, sizeof p, "%s/input_0.pb", in_dir);
        if (!emu_ok(sy_tensor_read_file(p, &in), p))
            goto done;
    }
    double rel8 = 0, relu8 = 0;
    if (!quantize(model, in_dir, "int8", q8, sizeof q8, &rel8) || !quantize(model, in_dir, "uint8", u8, sizeof u8, &relu8))
        goto done;
    snprintf(ref_ini, sizeof ref_ini, "[switchyard]\nplugin_dirs = %s\nproviders = cpu_ref\n", EMU_PLUGIN_DIR);
    snprintf(p, sizeof p, "%s/models/onnx/%s/model.onnx", EMU_SHARED_DIR, model);
    run f32;
    if (run_model(ref_ini, p, in, &f32)) {
        if (!ultraface) {
            check("htp", model, q8, rel8, &f32, in, 1);
            check("lpai", model, q8, rel8, &f32, in, 1);
            check("aic", model, u8, relu8, &f32, in, 1);
        } else {
            check("lpai", model, q8, rel8, &f32, in, 1); /* output 0: the scores */
            check("aic", model, u8, relu8, &f32, in, 0);
        }
    }
    run_free(&f32);
done:
    if (ultraface)
        free(in); /* pattern_input's single calloc */
    else
        sy_tensor_free(in);
}

static void test_super_resolution(void) { model_case("super_resolution-10", false); }
static void test_ultraface(void) { model_case("ultraface_rfb_320", true); }

int main(void)
{
    struct stat sb;
    char p[1024];
    snprintf(p, sizeof p, "%s/models/onnx/ultraface_rfb_320/model.onnx", EMU_SHARED_DIR);
    if (stat(p, &sb) != 0) {
        printf("SKIP: shared models absent (%s)\n", p);
        return 77;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sy_emu_qmodels_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("FAIL: mkdtemp\n");
        return 1;
    }
    PT_RUN(test_super_resolution);
    PT_RUN(test_ultraface);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", tmpdir);
    return pt_result();
}
