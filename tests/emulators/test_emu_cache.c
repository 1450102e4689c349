/*
 * Compile cache of the htp and aic emulators (ABI 1.1 group / compile /
 * serialize / deserialize): mnist-8 through conf/<target>.ini compiles into
 * fused partitions; a session loading the saved cache reports its partitions
 * from_cache and gives the same output bits; a tampered file is refused and
 * never run; a cache written under other provider options (htp soc_model,
 * aic mxfp6_matmul) is refused naming both compatibility strings.
 */
#include "emu_test.h"

#include <sys/stat.h>
#include <unistd.h>

static char *conf_text(const char *target, const char *from, const char *to)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ini", EMU_CONF_DIR, target);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *out = malloc(n + 2048);
    if (!out)
        return NULL;
    /* load the build tree's plugins instead of @default; `from` -> `to` */
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (!strncmp(buf + i, "@default", 8)) {
            o += (size_t)sprintf(out + o, "%s", EMU_PLUGIN_DIR);
            i += 8;
        } else if (from && !strncmp(buf + i, from, strlen(from))) {
            o += (size_t)sprintf(out + o, "%s", to);
            i += strlen(from);
        } else {
            out[o++] = buf[i++];
        }
    }
    out[o] = '\0';
    return out;
}

typedef struct sess {
    sy_env *env;
    sy_model *m;
    sy_session *s;
} sess;

static sy_status *open_sess(const char *ini, const char *cache, sess *x)
{
    memset(x, 0, sizeof *x);
    char path[1024];
    snprintf(path, sizeof path, "%s/models/onnx/mnist-8/model.onnx", EMU_SHARED_DIR);
    sy_status *st = sy_env_create_from_string(ini, NULL, &x->env);
    if (!st)
        st = sy_model_load(x->env, path, &x->m);
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1, .compiled_cache = cache};
    if (!st)
        st = sy_session_create(x->env, x->m, &o, &x->s);
    return st;
}

static void close_sess(sess *x)
{
    sy_session_release(x->s);
    sy_model_release(x->m);
    sy_env_release(x->env);
}

static bool run_out(sess *x, float *y, size_t n)
{
    float in[28 * 28];
    for (int i = 0; i < 28 * 28; i++)
        in[i] = (float)((i * 7919) % 256) / 255.0f;
    int64_t dims[4] = {1, 1, 28, 28};
    sy_tensor t = emu_tensor(SY_DT_FLOAT32, in, 4, dims);
    const sy_tensor *out = NULL;
    if (!emu_ok(sy_session_set_input_by_index(x->s, 0, &t, SY_INPUT_COPY), "input") ||
        !emu_ok(sy_session_run(x->s), "run") || !emu_ok(sy_session_get_output(x->s, 0, &out), "output"))
        return false;
    PT_CHECK(out->nbytes == n * sizeof(float), "output bytes %zu", out->nbytes);
    memcpy(y, out->data, n * sizeof(float));
    return true;
}

static void cache_case(const char *target, const char *from, const char *to, const char *compat_a, const char *compat_b)
{
    char path[] = "/tmp/sy_emu_cache.XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    char *ini = conf_text(target, NULL, NULL), *other = conf_text(target, from, to);
    sess a = {0}, b = {0}, c = {0};
    float ya[10], yb[10];
    PT_REQUIRE(fd >= 0 && ini && other, "setup");
    PT_REQUIRE(emu_ok(open_sess(ini, NULL, &a), "session"), "session");
    size_t n_compiled = 0, members = 0;
    const char *prov = NULL;
    uint32_t nn = 0;
    bool compiled = false, cached = false;
    for (size_t i = 0; sy_session_partition_info(a.s, i, &prov, &nn, &compiled, &cached); i++) {
        PT_CHECK(!strcmp(prov, target) && compiled && !cached, "%s partition %zu: %s compiled=%d cached=%d", target, i,
                 prov, compiled, cached);
        n_compiled += compiled;
        members += nn;
    }
    printf("%s: %zu compiled partitions, %zu nodes\n", target, n_compiled, members);
    PT_CHECK(n_compiled >= 1 && members >= 2, "%s compiles mnist-8", target);
    PT_REQUIRE(run_out(&a, ya, 10), "run");
    PT_REQUIRE(emu_ok(sy_session_save_compiled(a.s, path), "save"), "save");

    /* round trip */
    PT_REQUIRE(emu_ok(open_sess(ini, path, &b), "session from cache"), "session from cache");
    size_t n_cached = 0;
    for (size_t i = 0; sy_session_partition_info(b.s, i, &prov, &nn, &compiled, &cached); i++)
        n_cached += compiled && cached;
    PT_CHECK(n_cached == n_compiled, "%s: %zu of %zu partitions from the cache", target, n_cached, n_compiled);
    PT_REQUIRE(run_out(&b, yb, 10), "cached run");
    PT_CHECK(!memcmp(ya, yb, sizeof ya), "%s: cached run == compiled run", target);

    /* other options: refused naming both compatibility strings */
    sy_status *st = open_sess(other, path, &c);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_ABI_MISMATCH, "%s: other options refused, got %s", target,
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    const char *msg = pt_msg(st);
    PT_HAS(msg, compat_a);
    PT_HAS(msg, compat_b);
    PT_CHECK(c.s == NULL, "no session from an incompatible cache");
    close_sess(&c);

    /* a flipped byte: refused, never run */
    FILE *f = fopen(path, "r+b");
    PT_REQUIRE(f, "reopen");
    fseek(f, -9, SEEK_END);
    int byte = fgetc(f);
    fseek(f, -9, SEEK_END);
    fputc(byte ^ 0x5a, f);
    fclose(f);
    st = open_sess(ini, path, &c);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_MODEL, "%s: tampered cache refused, got %s", target,
             st ? sy_status_code_name(sy_status_get_code(st)) : "success");
    PT_HAS(pt_msg(st), "checksum");
    PT_CHECK(c.s == NULL, "no session from a tampered cache");
done:
    close_sess(&a);
    close_sess(&b);
    close_sess(&c);
    free(ini);
    free(other);
    unlink(path);
}

static void test_htp(void) { cache_case("htp", "SM8650", "SM8550", "soc=SM8650", "soc=SM8550"); }
static void test_aic(void)
{
    cache_case("aic", "mxfp6_matmul = false", "mxfp6_matmul = true", "mxfp6=0", "mxfp6=1");
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
    return pt_result();
}
