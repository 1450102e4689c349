/*
 * Issue 4, points 4 and 5, through the public API:
 *  - bidi_lstm_nnsplit matches the reference in its io.npz (a ZIP of .npy
 *    files, deflated: read with zlib);
 *  - models with operators no plugin provides fail at load, naming each op
 *    with its domain and opset;
 *  - a model whose attributes or shapes violate an op's rules is refused at
 *    session creation with the node's name and the rule, never at run time.
 *
 * usage: test_model_checks SHARED_DIR   (exit 77 when SHARED_DIR is absent)
 */
#include "../partition/pt_common.h"

#include <math.h>
#include <stdint.h>
#include <sys/stat.h>
#include <zlib.h>

static const char *shared;

/* ---- io.npz: ZIP local file headers, stored or deflated entries ---------- */
static uint32_t rd32(const uint8_t *p) { return p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Extract `name` from the ZIP `zip` into a temporary .npy file and read it. */
static sy_tensor *npz_member(const uint8_t *zip, size_t len, const char *name)
{
    size_t at = 0;
    while (at + 30 <= len && rd32(zip + at) == 0x04034b50) {
        uint16_t method = rd16(zip + at + 8), nlen = rd16(zip + at + 26), xlen = rd16(zip + at + 28);
        uint32_t csize = rd32(zip + at + 18), usize = rd32(zip + at + 22);
        const uint8_t *fname = zip + at + 30, *data = fname + nlen + xlen;
        if ((size_t)(data - zip) + csize > len)
            return NULL;
        if (nlen == strlen(name) && !memcmp(fname, name, nlen)) {
            uint8_t *out = malloc(usize ? usize : 1);
            if (!out)
                return NULL;
            if (method == 0) {
                memcpy(out, data, usize);
            } else if (method == 8) {
                z_stream zs;
                memset(&zs, 0, sizeof zs);
                if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
                    free(out);
                    return NULL;
                }
                zs.next_in = (Bytef *)data;
                zs.avail_in = csize;
                zs.next_out = out;
                zs.avail_out = usize;
                int rc = inflate(&zs, Z_FINISH);
                inflateEnd(&zs);
                if (rc != Z_STREAM_END) {
                    free(out);
                    return NULL;
                }
            } else {
                free(out);
                return NULL;
            }
            char path[] = "/tmp/sy_npz_XXXXXX";
            int fd = mkstemp(path);
            sy_tensor *t = NULL;
            if (fd >= 0 && write(fd, out, usize) == (ssize_t)usize) {
                sy_status *st = sy_tensor_read_file(path, &t);
                if (st)
                    fprintf(stderr, "%s in io.npz: %s\n", name, pt_msg(st));
            }
            if (fd >= 0) {
                close(fd);
                unlink(path);
            }
            free(out);
            return t;
        }
        at = (size_t)(data - zip) + csize;
    }
    return NULL;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = buf ? (size_t)n : 0;
    return buf;
}

static void test_bidi_lstm_reference(void)
{
    char model_path[1024], npz_path[1024];
    snprintf(model_path, sizeof model_path, "%s/models/onnx/bidi_lstm_nnsplit/model.onnx", shared);
    snprintf(npz_path, sizeof npz_path, "%s/models/onnx/bidi_lstm_nnsplit/io.npz", shared);
    size_t zlen = 0;
    uint8_t *zip = read_all(npz_path, &zlen);
    sy_tensor *in = zip ? npz_member(zip, zlen, "input.npy") : NULL;
    sy_tensor *want = zip ? npz_member(zip, zlen, "Add_26.npy") : NULL;
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    const sy_tensor *got = NULL;
    PT_REQUIRE(zip && in && want, "io.npz holds input.npy and Add_26.npy");
    PT_REQUIRE(!pt_msg(sy_env_create(NULL, &env))[0], "env");
    PT_REQUIRE(!pt_msg(sy_model_load(env, model_path, &m))[0], "load");
    PT_REQUIRE(!pt_msg(sy_session_create(env, m, NULL, &s))[0], "session");
    {
        const char *e = pt_msg(sy_session_set_input_by_index(s, 0, in, SY_INPUT_BORROW));
        PT_REQUIRE(!e[0], "set input: %s", e);
    }
    PT_REQUIRE(!pt_msg(sy_session_run(s))[0], "run");
    PT_REQUIRE(!pt_msg(sy_session_get_output(s, 0, &got))[0], "output");
    PT_REQUIRE(got->dtype == SY_DT_FLOAT32 && want->dtype == SY_DT_FLOAT32 && got->rank == want->rank, "dtype/rank");
    for (int32_t d = 0; d < got->rank; d++)
        PT_CHECK(got->dims[d] == want->dims[d], "dim %d: %lld vs %lld", d, (long long)got->dims[d],
                 (long long)want->dims[d]);
    int64_t n = sy_tensor_numel(want), bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < n && i < sy_tensor_numel(got); i++) {
        double g = ((const float *)got->data)[i], w = ((const float *)want->data)[i];
        double err = fabs(g - w);
        if (err > 1e-5 + 1e-3 * fabs(w))
            bad++;
        if (err > worst)
            worst = err;
    }
    PT_CHECK(bad == 0, "%lld of %lld elements outside rtol 1e-3/atol 1e-5 (max abs err %g)", (long long)bad,
             (long long)n, worst);
    printf("     bidi_lstm_nnsplit: %lld outputs, max abs error %.3g\n", (long long)n, worst);
done:
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
    sy_tensor_free(in);
    sy_tensor_free(want);
    free(zip);
}

/* Operators no plugin provides fail at load, naming each with its domain
 * and opset. (The two shared models this used to load, fns_candy's removed
 * experimental ops and tiny_random_gpt2_ort_fused's com.microsoft ops, now
 * run: ops_legacy and ops_contrib, checked against ONNX Runtime by
 * tests/contrib/ort_contrib.sh.) */
static void test_unknown_ops_at_load(void)
{
    static const int64_t d4[1] = {4};
    pt_model *pm = pt_model_new("unknown_ops");
    pt_opset(pm, "com.microsoft", 1);
    pt_input(pm, "x", PT_F32, 1, d4);
    pt_node(pm, "NoSuchOnnxOp", "a", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_node(pm, "NoSuchContribOp", "b", (const char *[]){"y", NULL}, (const char *[]){"z", NULL});
    pt_domain(pm, "com.microsoft");
    pt_output(pm, "z", PT_F32, 1, d4);
    uint8_t *buf = NULL;
    size_t len = 0;
    pt_model_pack(pm, &buf, &len);
    sy_env *env = NULL;
    sy_model *m = NULL;
    PT_REQUIRE(!pt_msg(sy_env_create(NULL, &env))[0], "env");
    sy_status *st = sy_model_load_buffer(env, buf, len, "unknown_ops", NULL, &m);
    PT_CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_IMPLEMENTED, "expected NOT_IMPLEMENTED at load");
    const char *msg = pt_msg(st);
    PT_HAS(msg, "NoSuchOnnxOp (domain 'ai.onnx', opset 13)");
    PT_HAS(msg, "NoSuchContribOp (domain 'com.microsoft', opset 1)");
    PT_CHECK(m == NULL, "no model on failure");
done:
    sy_model_release(m);
    sy_env_release(env);
    free(buf);
    pt_model_free(pm);
}

/* ---- bad models refused at creation with node name and rule -------------- */
static void expect_refused_at_create(pt_model *pm, const char *node, const char *rule_word)
{
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    PT_REQUIRE(!pt_msg(sy_env_create(NULL, &env))[0], "env");
    m = pt_load(env, pm);
    PT_REQUIRE(m, "load %s", pm->graph.name);
    sy_status *st = sy_session_create(env, m, NULL, &s);
    sy_status_code code = sy_status_get_code(st);
    PT_CHECK(st && (code == SY_ERR_SHAPE || code == SY_ERR_INVALID_ARGUMENT || code == SY_ERR_INVALID_MODEL ||
                    code == SY_ERR_TYPE),
             "%s: refused at creation with a shape/argument code, got %s", pm->graph.name, sy_status_code_name(code));
    const char *msg = pt_msg(st);
    PT_HAS(msg, node);
    PT_HAS(msg, rule_word);
    PT_CHECK(s == NULL, "no session");
done:
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
}

static void test_bad_models(void)
{
    static const int64_t d23[2] = {2, 3}, d4[1] = {4}, d1288[4] = {1, 2, 8, 8}, d28[2] = {2, 8}, w[4] = {4, 2, 3, 3};
    float wdata[72] = {0};

    /* mismatched broadcast: [2,3] + [4] */
    pt_model *a = pt_model_new("bad_broadcast");
    pt_input(a, "x", PT_F32, 2, d23);
    pt_input(a, "y", PT_F32, 1, d4);
    pt_node(a, "Add", "add_mismatch", (const char *[]){"x", "y", NULL}, (const char *[]){"z", NULL});
    pt_output(a, "z", PT_F32, 2, d23);
    expect_refused_at_create(a, "add_mismatch", "broadcast");
    pt_model_free(a);

    /* axis out of range: Concat axis 5 on rank-2 inputs */
    pt_model *c = pt_model_new("bad_axis");
    pt_input(c, "x", PT_F32, 2, d23);
    pt_input(c, "y", PT_F32, 2, d23);
    pt_node(c, "Concat", "concat_axis", (const char *[]){"x", "y", NULL}, (const char *[]){"z", NULL});
    pt_attr_int(c, "axis", 5);
    pt_output(c, "z", PT_F32, 2, d23);
    expect_refused_at_create(c, "concat_axis", "axis");
    pt_model_free(c);

    /* negative axis out of range: Softmax axis -3 on rank 2 */
    pt_model *sm = pt_model_new("bad_negative_axis");
    pt_input(sm, "x", PT_F32, 2, d28);
    pt_node(sm, "Softmax", "softmax_axis", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_attr_int(sm, "axis", -3);
    pt_output(sm, "y", PT_F32, 2, d28);
    expect_refused_at_create(sm, "softmax_axis", "axis");
    pt_model_free(sm);

    /* wrong rank: Conv on a rank-2 input with 4-D weights */
    pt_model *cv = pt_model_new("bad_rank");
    pt_input(cv, "x", PT_F32, 2, d28);
    pt_init_f32(cv, "w", 4, w, wdata);
    pt_node(cv, "Conv", "conv_rank", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    pt_output(cv, "y", PT_F32, 4, d1288);
    expect_refused_at_create(cv, "conv_rank", "rank");
    pt_model_free(cv);

    /* ops_legacy: a Crop border larger than the image */
    static const int64_t d1144[4] = {1, 1, 4, 4}, border[4] = {2, 2, 2, 2};
    pt_model *cr = pt_model_new("bad_crop");
    cr->opset.version = 7; /* Crop was removed at opset 10 */
    pt_input(cr, "x", PT_F32, 4, d1144);
    pt_node(cr, "Crop", "crop_big", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    pt_attr_ints(cr, "border", 4, border);
    pt_output(cr, "y", PT_F32, 4, d1144);
    expect_refused_at_create(cr, "crop_big", "do not fit");
    pt_model_free(cr);

    /* ops_contrib: Attention whose hidden size does not split into num_heads */
    static const int64_t d128[3] = {1, 2, 8}, w824[2] = {8, 24};
    float wq[192] = {0};
    pt_model *at = pt_model_new("bad_attention");
    pt_opset(at, "com.microsoft", 1);
    pt_input(at, "x", PT_F32, 3, d128);
    pt_init_f32(at, "w", 2, w824, wq);
    pt_node(at, "Attention", "attn_heads", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
    pt_domain(at, "com.microsoft");
    pt_attr_int(at, "num_heads", 3);
    pt_output(at, "y", PT_F32, 3, d128);
    expect_refused_at_create(at, "attn_heads", "multiples of num_heads");
    pt_model_free(at);

    /* ops_vision: GridSample with a mode of another opset */
    static const int64_t d1133[4] = {1, 1, 3, 3}, g1222[4] = {1, 2, 2, 2};
    pt_model *gs = pt_model_new("bad_grid_sample");
    gs->opset.version = 20;
    pt_input(gs, "x", PT_F32, 4, d1133);
    pt_input(gs, "g", PT_F32, 4, g1222);
    pt_node(gs, "GridSample", "gs_mode", (const char *[]){"x", "g", NULL}, (const char *[]){"y", NULL});
    pt_attr_string(gs, "mode", "bilinear");
    pt_output(gs, "y", PT_F32, 4, d1133);
    expect_refused_at_create(gs, "gs_mode", "mode must be");
    pt_model_free(gs);
}

int main(int argc, char **argv)
{
    struct stat sb;
    shared = argc > 1 ? argv[1] : "../shared";
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/models/onnx", shared);
    if (stat(probe, &sb) != 0) {
        printf("SKIP: %s not found: the shared models folder is absent\n", probe);
        return 77;
    }
    PT_RUN(test_bidi_lstm_reference);
    PT_RUN(test_unknown_ops_at_load);
    PT_RUN(test_bad_models);
    return pt_result();
}
