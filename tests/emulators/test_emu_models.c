/*
 * Each emulator against cpu_ref fp32 on the shared models mnist-8,
 * super_resolution-10 and ultraface_rfb_320, through conf/<target>.ini
 * (rewritten to load the build tree's plugins), plus the modelled-cycle
 * profiling events.
 *
 * Tolerances come from the precision: fp16 storage rounds each stored value
 * with relative error <= u = 2^-11; a layer stores its input, its weights
 * and its output, so a chain of L stored layers carries a relative error of
 * about 3 L u in the worst case and sqrt(3 L) u when roundings are
 * independent. We bound the error by 3 L u * max|y_ref| (worst case, no
 * fudge): L = 12 stored stages for mnist-8, 10 for super_resolution-10 and
 * 60 (the deepest path) for ultraface. Classifiers must agree on argmax.
 * LPAI takes no node of these float models (LPAI-DTYPE), so its outputs
 * equal cpu_ref's exactly.
 */
#include "emu_test.h"

#include <sys/stat.h>

static const double U16 = 1.0 / 2048.0;

static char *conf_text(const char *target)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ini", EMU_CONF_DIR, target);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* load the build tree's plugins instead of @default */
    char *out = malloc(n + 1024);
    char *p = strstr(buf, "plugin_dirs = @default");
    if (!out || !p) {
        free(out);
        return NULL;
    }
    *p = '\0';
    snprintf(out, n + 1024, "%splugin_dirs = %s%s", buf, EMU_PLUGIN_DIR, p + strlen("plugin_dirs = @default"));
    return out;
}

static sy_tensor *model_input(const char *model, const sy_value_info *vi)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/onnx/%s/test_data_set_0/input_0.pb", EMU_SHARED_DIR, model);
    sy_tensor *t = NULL;
    struct stat sb;
    if (stat(path, &sb) == 0 && !sy_tensor_read_file(path, &t))
        return t;
    /* deterministic image-like input in [0, 1] */
    int64_t n = 1;
    for (int32_t i = 0; i < vi->rank; i++)
        n *= vi->dims[i] > 0 ? vi->dims[i] : 1;
    t = calloc(1, sizeof *t + (size_t)n * sizeof(float) + 64);
    t->struct_size = sizeof *t;
    t->dtype = SY_DT_FLOAT32;
    t->rank = vi->rank;
    for (int32_t i = 0; i < vi->rank; i++)
        t->dims[i] = vi->dims[i] > 0 ? vi->dims[i] : 1;
    t->data = (uint8_t *)(t + 1);
    t->nbytes = (size_t)n * sizeof(float);
    for (int64_t i = 0; i < n; i++)
        ((float *)t->data)[i] = (float)((i * 7919) % 256) / 255.0f;
    return t;
}

typedef struct outs {
    sy_env *env;
    sy_model *m;
    sy_session *s;
} outs;

static bool run_model(const char *ini, const char *model, const sy_tensor *in, outs *o, bool profiling)
{
    memset(o, 0, sizeof *o);
    char path[1024];
    snprintf(path, sizeof path, "%s/models/onnx/%s/model.onnx", EMU_SHARED_DIR, model);
    if (!emu_ok(sy_env_create_from_string(ini, NULL, &o->env), "env") ||
        !emu_ok(sy_model_load(o->env, path, &o->m), path))
        return false;
    o->s = emu_session(o->env, o->m, profiling);
    return o->s && emu_ok(sy_session_set_input_by_index(o->s, 0, in, SY_INPUT_COPY), "input") &&
           emu_ok(sy_session_run(o->s), "run");
}

static void outs_free(outs *o)
{
    sy_session_release(o->s);
    sy_model_release(o->m);
    sy_env_release(o->env);
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

static void compare(const char *target, const char *model, int stages, bool classifier)
{
    char *ini = conf_text(target);
    char ref_ini[512];
    snprintf(ref_ini, sizeof ref_ini, "[switchyard]\nplugin_dirs = %s\nproviders = cpu_ref\n", EMU_PLUGIN_DIR);
    PT_CHECK(ini != NULL, "conf/%s.ini unreadable", target);
    outs ref = {0}, emu = {0};
    sy_tensor *in = NULL;
    if (ini && emu_ok(sy_env_create_from_string(ref_ini, NULL, &ref.env), "env")) {
        char path[1024];
        snprintf(path, sizeof path, "%s/models/onnx/%s/model.onnx", EMU_SHARED_DIR, model);
        if (emu_ok(sy_model_load(ref.env, path, &ref.m), path)) {
            sy_value_info vi = {.struct_size = sizeof vi};
            sy_model_input_info(ref.m, 0, &vi);
            in = model_input(model, &vi);
        }
    }
    outs_free(&ref);
    if (!in || !run_model(ref_ini, model, in, &ref, false) || !run_model(ini, model, in, &emu, true))
        goto done;
    size_t taken = taken_by(emu.s, target), total = sy_session_node_count(emu.s);
    for (size_t k = 0; k < sy_session_output_count(ref.s); k++) {
        const sy_tensor *a = NULL, *b = NULL;
        if (!emu_ok(sy_session_get_output(ref.s, k, &a), "ref out") || !emu_ok(sy_session_get_output(emu.s, k, &b), "out"))
            break;
        int64_t n = sy_tensor_numel(a);
        const float *x = a->data, *y = b->data;
        double scale = 0, err = 0;
        int64_t am = 0, bm = 0;
        for (int64_t i = 0; i < n; i++) {
            scale = fmax(scale, fabs(x[i]));
            err = fmax(err, fabs((double)x[i] - (double)y[i]));
            if (x[i] > x[am])
                am = i;
            if (y[i] > y[bm])
                bm = i;
        }
        double tol = !strcmp(target, "lpai") ? 0.0 : 3.0 * stages * U16 * scale;
        printf("%s %s output %zu: %zu/%zu nodes on %s, max |err| %.3g (%.3g of max|y| %.3g), tolerance %.3g%s\n",
               target, model, k, taken, total, target, err, scale > 0 ? err / scale : 0.0, scale, tol,
               classifier ? (am == bm ? ", argmax agrees" : ", ARGMAX DIFFERS") : "");
        PT_CHECK(err <= tol, "%s %s output %zu: max |err| %g > %g", target, model, k, err, tol);
        if (classifier)
            PT_CHECK(am == bm, "%s %s: argmax %lld vs cpu_ref %lld", target, model, (long long)bm, (long long)am);
    }
    if (!strcmp(target, "lpai"))
        PT_CHECK(taken == 0, "lpai took %zu float nodes", taken);
    else
        PT_CHECK(taken > 0, "%s took no node of %s", target, model);
    /* modelled cycles reach the profile as "emulated" events */
    size_t ev = 0;
    for (size_t i = 0; i < sy_session_profile_event_count(emu.s); i++) {
        sy_profile_event e = {.struct_size = sizeof e};
        if (sy_session_profile_event(emu.s, i, &e) && e.category && !strcmp(e.category, "emulated")) {
            ev++;
            PT_CHECK(e.cycles >= 0, "event %s without cycles", e.name);
        }
    }
    if (strcmp(target, "lpai"))
        PT_CHECK(ev > 0, "%s: no emulated events", target);
done:
    outs_free(&ref);
    outs_free(&emu);
    free(in);
    free(ini);
}

/* mnist-8's three reference sets: argmax equal to the reference outputs */
static void mnist_sets(const char *target)
{
    char *ini = conf_text(target);
    for (int k = 0; ini && k < 3; k++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/models/onnx/mnist-8/test_data_set_%d/input_0.pb", EMU_SHARED_DIR, k);
        sy_tensor *in = NULL, *ref = NULL;
        if (!emu_ok(sy_tensor_read_file(p, &in), p))
            break;
        snprintf(p, sizeof p, "%s/models/onnx/mnist-8/test_data_set_%d/output_0.pb", EMU_SHARED_DIR, k);
        outs o;
        if (emu_ok(sy_tensor_read_file(p, &ref), p) && run_model(ini, "mnist-8", in, &o, false)) {
            const sy_tensor *y = NULL;
            if (emu_ok(sy_session_get_output(o.s, 0, &y), "out")) {
                int64_t a = 0, b = 0;
                for (int64_t i = 1; i < 10; i++) {
                    if (((const float *)ref->data)[i] > ((const float *)ref->data)[a])
                        a = i;
                    if (((const float *)y->data)[i] > ((const float *)y->data)[b])
                        b = i;
                }
                PT_CHECK(a == b, "%s mnist-8 set %d: argmax %lld, reference %lld", target, k, (long long)b, (long long)a);
            }
        }
        outs_free(&o);
        sy_tensor_free(in);
        sy_tensor_free(ref);
    }
    free(ini);
}

static void test_htp(void)
{
    compare("htp", "mnist-8", 12, true);
    compare("htp", "super_resolution-10", 10, false);
    compare("htp", "ultraface_rfb_320", 60, false);
    mnist_sets("htp");
}

static void test_aic(void)
{
    compare("aic", "mnist-8", 12, true);
    compare("aic", "super_resolution-10", 10, false);
    compare("aic", "ultraface_rfb_320", 60, false);
    mnist_sets("aic");
}

static void test_lpai(void)
{
    compare("lpai", "mnist-8", 0, true);
    compare("lpai", "super_resolution-10", 0, false);
    compare("lpai", "ultraface_rfb_320", 0, false);
}

int main(void)
{
    struct stat sb;
    char p[1024];
    snprintf(p, sizeof p, "%s/models/onnx/mnist-8/model.onnx", EMU_SHARED_DIR);
    if (stat(p, &sb) != 0) {
        printf("SKIP: shared models absent (%s)\n", p);
        return 77;
    }
    PT_RUN(test_htp);
    PT_RUN(test_aic);
    PT_RUN(test_lpai);
    return pt_result();
}
