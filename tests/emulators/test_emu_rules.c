/*
 * Capability rejections: for each documented rule of the htp / lpai / aic
 * emulators, a node that violates it is declined with a reason naming the
 * rule (what `switchyard explain` prints) and runs on cpu_ref; option
 * errors name the key; memory verdicts and budgets; MXFP6 weights.
 */
#include "emu_test.h"

typedef struct placed {
    char provider[32];
    char text[1024];
} placed;

/* one-node model: op on input x (dims), output y (ydims); attrs by callback */
typedef void (*attr_fn)(pt_model *m);

static bool place_one(const char *ini, const char *op, const char *domain, int elem, int32_t rank, const int64_t *dims,
                      int32_t yrank, const int64_t *ydims, attr_fn attrs, placed *out)
{
    memset(out, 0, sizeof *out);
    sy_env *env = emu_env(EMU_ALL, "%s", ini);
    if (!env)
        return false;
    pt_model *m = pt_model_new("rule");
    if (domain)
        emu_opset(m, domain, 1);
    pt_input(m, "x", elem, rank, dims);
    pt_node(m, op, "n0", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
    if (domain)
        emu_domain(m, domain);
    if (attrs)
        attrs(m);
    pt_output(m, "y", elem, yrank, ydims);
    sy_model *model = pt_load(env, m);
    pt_model_free(m);
    sy_session *s = emu_session(env, model, false);
    bool ok = s != NULL;
    sy_node_placement p;
    if (s && *emu_provider_of(s, "n0", &p)) {
        snprintf(out->provider, sizeof out->provider, "%s", p.provider);
        snprintf(out->text, sizeof out->text, "%s", p.reason_text ? p.reason_text : "");
    }
    sy_session_release(s);
    sy_model_release(model);
    sy_env_release(env);
    return ok;
}

#define EXPECT_DECLINED(pl, rule)                                                                                  \
    do {                                                                                                           \
        PT_CHECK(!strcmp((pl).provider, "cpu_ref"), "%s: expected fallback to cpu_ref, got '%s'", rule,            \
                 (pl).provider);                                                                                   \
        PT_HAS((pl).text, rule);                                                                                   \
    } while (0)

static void a_buffer_blocking(pt_model *m)
{
    emu_attr_i(m, "buffer_size", 3);
    emu_attr_i(m, "buffer_dim", 0);
    emu_attr_i(m, "mode", 0);
}
static void a_buffer_right(pt_model *m)
{
    a_buffer_blocking(m);
    emu_last(m)->attribute[2]->i = 2;
}
static void a_softmax_axis0(pt_model *m) { emu_attr_i(m, "axis", 0); }
static void a_pool_ceil(pt_model *m)
{
    emu_attr_ints(m, "kernel_shape", 2, (int64_t[]){2, 2});
    emu_attr_ints(m, "strides", 2, (int64_t[]){2, 2});
    emu_attr_i(m, "ceil_mode", 1);
}

#define HTP "providers = htp, cpu_ref\n"

static void test_htp_rules(void)
{
    placed p;
    /* HTP-BUFFER-MODE: only NON_BLOCKING modes */
    if (place_one(HTP, "Buffer", "qti_aisw", PT_F32, 2, (int64_t[]){1, 2}, 2, (int64_t[]){3, 2}, a_buffer_blocking, &p))
        EXPECT_DECLINED(p, "HTP-BUFFER-MODE");
    if (place_one(HTP, "Buffer", "qti_aisw", PT_F32, 2, (int64_t[]){1, 2}, 2, (int64_t[]){3, 2}, a_buffer_right, &p))
        PT_CHECK(!strcmp(p.provider, "htp"), "NON_BLOCKING_RIGHT Buffer must run on htp, got %s", p.provider);
    /* MaskedSoftmax is not an HTP op (seed: CPU, AIC) -> no htp kernel */
    /* HTP-SOFTMAX: axis must be N-1 */
    if (place_one(HTP, "Softmax", NULL, PT_F32, 2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3}, a_softmax_axis0, &p))
        EXPECT_DECLINED(p, "HTP-SOFTMAX: axis must be N-1");
    /* HTP-SOFTMAX: rank <= 5 */
    if (place_one(HTP, "Softmax", NULL, PT_F32, 6, (int64_t[]){1, 1, 1, 1, 2, 3}, 6, (int64_t[]){1, 1, 1, 1, 2, 3}, NULL,
                  &p))
        EXPECT_DECLINED(p, "HTP-SOFTMAX: rank must be <= 5");
    /* HTP-ELTWISE: rank 1..5 */
    if (place_one(HTP, "Relu", NULL, PT_F32, 6, (int64_t[]){1, 1, 1, 1, 2, 3}, 6, (int64_t[]){1, 1, 1, 1, 2, 3}, NULL,
                  &p))
        EXPECT_DECLINED(p, "HTP-ELTWISE");
    /* HTP-POOL: ceil_mode */
    if (place_one(HTP, "MaxPool", NULL, PT_F32, 4, (int64_t[]){1, 1, 5, 5}, 4, (int64_t[]){1, 1, 3, 3}, a_pool_ceil, &p))
        EXPECT_DECLINED(p, "HTP-POOL");
    /* HTP-DTYPE: float64 */
    if (place_one(HTP, "Relu", NULL, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3},
                  NULL, &p))
        PT_CHECK(!strcmp(p.provider, "cpu_ref"), "float64 Relu must fall back, got %s", p.provider);
    /* HTP-VTCM: unary W*256*2*2 with W = 4096 is 4 MB: with vtcm_mb = 1 a spill,
     * declined under strict_vtcm; W = 768 (786432 B) is fits-slow */
    if (place_one(HTP "[provider.htp]\nvtcm_mb = 1\nstrict_vtcm = true\n", "Relu", NULL, PT_F32, 4,
                  (int64_t[]){1, 1, 1, 4096}, 4, (int64_t[]){1, 1, 1, 4096}, NULL, &p))
        EXPECT_DECLINED(p, "HTP-VTCM: working set 4194304 B");
    if (place_one(HTP "[provider.htp]\nvtcm_mb = 1\n", "Relu", NULL, PT_F32, 4, (int64_t[]){1, 1, 1, 4096}, 4,
                  (int64_t[]){1, 1, 1, 4096}, NULL, &p))
        PT_CHECK(!strcmp(p.provider, "htp"), "without strict_vtcm a spilling op runs (modelled paging), got %s",
                 p.provider);
    /* verdicts through the report extension */
    {
        sy_env *env = emu_env(EMU_ALL, HTP "[provider.htp]\nvtcm_mb = 1\n");
        pt_model *m = pt_model_new("vtcm");
        pt_input(m, "x", PT_F32, 4, (int64_t[]){1, 1, 1, 768});
        pt_input(m, "z", PT_F32, 4, (int64_t[]){1, 1, 1, 64});
        pt_node(m, "Relu", "slow", (const char *[]){"x", NULL}, (const char *[]){"y", NULL});
        pt_node(m, "Relu", "small", (const char *[]){"z", NULL}, (const char *[]){"w", NULL});
        pt_output(m, "y", PT_F32, 4, (int64_t[]){1, 1, 1, 768});
        pt_output(m, "w", PT_F32, 4, (int64_t[]){1, 1, 1, 64});
        sy_model *model = env ? pt_load(env, m) : NULL;
        pt_model_free(m);
        sy_session *s = emu_session(env, model, false);
        typedef struct {
            uint32_t struct_size;
            size_t (*report)(char *, size_t);
            const char *(*compat)(void);
        } rep;
        const rep *r = env ? sy_get_extension(env, "qnn_emu.htp", 1) : NULL;
        PT_CHECK(r != NULL, "qnn_emu.htp extension missing");
        if (r && s) {
            char buf[4096];
            r->report(buf, sizeof buf);
            PT_HAS(buf, "fits-slow");
            PT_HAS(buf, "soc=SM8650 arch=V75 vtcm_mb=1");
            const char *slow = strstr(buf, "slow "), *small = strstr(buf, "small ");
            PT_CHECK(slow && strstr(slow, "786432 B fits-slow"), "slow node verdict: %s", buf);
            PT_CHECK(small && strstr(small, "65536 B fits "), "small node verdict: %s", buf);
        }
        sy_session_release(s);
        sy_model_release(model);
        sy_env_release(env);
    }
}

static void test_htp_options(void)
{
    sy_env *env = NULL;
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nvtcm_mb = 16\n")), "exceeds the 8 MB of VTCM of SM8650");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nsoc_model = SA8797\nvtcm_mb = 12\n")), "");
    sy_env_release(env);
    env = NULL;
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nsoc_model = QCM6490\nvtcm_mb = 4\n")),
           "exceeds the 2 MB of VTCM of QCM6490");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nprecision = FLOAT32\n")), "not supported by QNN HTP");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nsoc_model = SM9999\n")), "unknown SoC");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nperf_profile = turbo\n")), "perf_profile = 'turbo'");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, HTP "[provider.htp]\nvtcm = 4\n")), "vtcm");
    PT_CHECK(env == NULL, "a refused configuration must not give an env");
    /* the provider says it is an emulator */
    env = emu_env(EMU_ALL, HTP);
    bool found = false;
    for (size_t i = 0; env && i < sy_env_provider_count(env); i++)
        if (!strcmp(sy_env_provider_name(env, i), "htp")) {
            found = true;
            PT_CHECK(sy_env_provider_is_emulator(env, i), "htp must carry SY_PROVIDER_EMULATOR");
            PT_HAS(sy_env_provider_description(env, i), "EMULATOR");
        }
    PT_CHECK(found, "htp provider not registered");
    sy_env_release(env);
}

static void test_lpai_rules(void)
{
    placed p;
    /* LPAI-V4: default hw_version v4 is prepare-only */
    if (place_one("providers = lpai, cpu_ref\n", "Relu", NULL, PT_F32, 2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3}, NULL,
                  &p))
        EXPECT_DECLINED(p, "LPAI-V4");
    /* LPAI-DTYPE: no float tensors */
    if (place_one("providers = lpai, cpu_ref\n[provider.lpai]\nhw_version = v6\n", "Relu", NULL, PT_F32, 2,
                  (int64_t[]){2, 3}, 2, (int64_t[]){2, 3}, NULL, &p))
        EXPECT_DECLINED(p, "LPAI-DTYPE");
    /* LPAI-VERSION: Buffer needs v5+ */
    if (place_one("providers = lpai, cpu_ref\n[provider.lpai]\nsimulate = true\n", "Buffer", "qti_aisw",
                  ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2, (int64_t[]){1, 2}, 2, (int64_t[]){3, 2}, a_buffer_blocking,
                  &p))
        EXPECT_DECLINED(p, "LPAI-VERSION");
    /* LPAI-RANK */
    if (place_one("providers = lpai, cpu_ref\n[provider.lpai]\nhw_version = v6\n", "Buffer", "qti_aisw",
                  ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 5, (int64_t[]){1, 1, 1, 1, 2}, 5, (int64_t[]){3, 1, 1, 1, 2},
                  a_buffer_blocking, &p))
        EXPECT_DECLINED(p, "LPAI-RANK");
    /* a u8 Buffer (all modes on LPAI) runs on the eNPU emulator */
    if (place_one("providers = lpai, cpu_ref\n[provider.lpai]\nhw_version = v6\n", "Buffer", "qti_aisw",
                  ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 2, (int64_t[]){1, 2}, 2, (int64_t[]){3, 2}, a_buffer_blocking,
                  &p))
        PT_CHECK(!strcmp(p.provider, "lpai"), "u8 Buffer on lpai v6, got %s", p.provider);
    /* client-supplied memory: sizes and alignment */
    sy_env *env = emu_env(EMU_ALL, "providers = lpai, cpu_ref\n[provider.lpai]\nhw_version = v6\nmem_alignment = 128\n");
    typedef struct {
        uint32_t struct_size;
        size_t (*report)(char *, size_t);
        const char *(*compat)(void);
        uint64_t (*persistent_size)(void);
        bool (*check)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, char *, size_t);
    } lx;
    const lx *x = env ? sy_get_extension(env, "qnn_emu.lpai", 1) : NULL;
    PT_CHECK(x != NULL, "qnn_emu.lpai extension missing");
    if (x) {
        char why[256];
        PT_CHECK(x->check(1000, 1024, 0x1000, 0, 0x2000, why, sizeof why), "good buffers refused: %s", why);
        PT_CHECK(!x->check(1000, 512, 0x1000, 0, 0x2000, why, sizeof why), "small scratch accepted");
        PT_HAS(why, "smaller than scratch_mem_size 1000 B");
        PT_CHECK(!x->check(1000, 1024, 0x1040, 0, 0x2000, why, sizeof why), "misaligned scratch accepted");
        PT_HAS(why, "not 128-byte aligned");
    }
    sy_env_release(env);
    env = NULL;
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, "providers = lpai, cpu_ref\n[provider.lpai]\nhw_version = v3\n")),
           "hw_version = 'v3'");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, "providers = lpai, cpu_ref\n[provider.lpai]\nmem_alignment = 100\n")),
           "power of two");
}

static void test_aic_rules(void)
{
    placed p;
    /* Buffer is not an AIC op (seed: CPU, LPAI, HTP) */
    if (place_one("providers = aic, cpu_ref\n", "Buffer", "qti_aisw", PT_F32, 2, (int64_t[]){1, 2}, 2,
                  (int64_t[]){3, 2}, a_buffer_right, &p))
        EXPECT_DECLINED(p, "no aic kernel for Buffer");
    if (place_one("providers = aic, cpu_ref\n", "Softmax", NULL, PT_F32, 2, (int64_t[]){2, 3}, 2, (int64_t[]){2, 3},
                  a_softmax_axis0, &p))
        EXPECT_DECLINED(p, "AIC-SOFTMAX");
    if (place_one("providers = aic, cpu_ref\n", "MaxPool", NULL, PT_F32, 4, (int64_t[]){1, 1, 5, 5}, 4,
                  (int64_t[]){1, 1, 3, 3}, a_pool_ceil, &p))
        EXPECT_DECLINED(p, "AIC-POOL");
    sy_env *env = NULL;
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, "providers = aic, cpu_ref\n[provider.aic]\nnum_cores = 14\ninstances = 2\n")),
           "exceeds the 16 AI cores");
    PT_HAS(pt_msg(emu_env_st(&env, EMU_ALL, "providers = aic, cpu_ref\n[provider.aic]\nmxfp6_format = e4m3\n")),
           "mxfp6_format");
}

/* MatMul x[1,64] * W[64,8] (constant): MXFP6 weights differ from fp32 by at
 * most half a step of the block's top binade, amax/16 per weight (E2M3:
 * 3 mantissa bits, top binade [4, 7.5] in units of the shared scale), so
 * |dy_j| <= sum_k |x_k| * amax_j/16, plus fp16 rounding of x and y. */
static void test_aic_mxfp6(void)
{
    float w[64 * 8], x[64];
    for (int i = 0; i < 64 * 8; i++)
        w[i] = sinf((float)i * 0.37f) * (1.0f + (float)(i % 5));
    for (int i = 0; i < 64; i++)
        x[i] = cosf((float)i * 0.21f);
    const sy_tensor *y[2] = {NULL, NULL};
    float out[2][8];
    for (int mx = 0; mx < 2; mx++) {
        sy_env *env = emu_env(EMU_ALL, "providers = aic, cpu_ref\n[provider.aic]\nmxfp6_matmul = %s\n",
                              mx ? "true" : "false");
        pt_model *m = pt_model_new("mm");
        pt_input(m, "x", PT_F32, 2, (int64_t[]){1, 64});
        pt_init_f32(m, "w", 2, (int64_t[]){64, 8}, w);
        pt_node(m, "MatMul", "mm", (const char *[]){"x", "w", NULL}, (const char *[]){"y", NULL});
        pt_output(m, "y", PT_F32, 2, (int64_t[]){1, 8});
        sy_model *model = env ? pt_load(env, m) : NULL;
        pt_model_free(m);
        sy_session *s = emu_session(env, model, false);
        sy_tensor tx = emu_tensor(SY_DT_FLOAT32, x, 2, (int64_t[]){1, 64});
        if (s && emu_ok(sy_session_set_input(s, "x", &tx, SY_INPUT_COPY), "x") && emu_ok(sy_session_run(s), "run") &&
            emu_ok(sy_session_get_output(s, 0, &y[mx]), "y"))
            memcpy(out[mx], y[mx]->data, sizeof out[mx]);
        PT_CHECK(!strcmp(emu_provider_of(s, "mm", NULL), "aic"), "MatMul on aic");
        sy_session_release(s);
        sy_model_release(model);
        sy_env_release(env);
    }
    double diff_any = 0;
    for (int j = 0; j < 8; j++) {
        double ref = 0, sx = 0, amax0 = 0, amax1 = 0;
        for (int k = 0; k < 64; k++) {
            ref += (double)x[k] * w[k * 8 + j];
            sx += fabs(x[k]);
            if (k < 32)
                amax0 = fmax(amax0, fabs(w[k * 8 + j]));
            else
                amax1 = fmax(amax1, fabs(w[k * 8 + j]));
        }
        double bound = sx * fmax(amax0, amax1) / 16.0 + 4.0 * fabs(ref) / 2048.0 + sx * 8.0 / 2048.0;
        PT_CHECK(fabs(out[1][j] - ref) <= bound, "MXFP6 y[%d] = %g, fp32 %g, bound %g", j, (double)out[1][j], ref,
                 bound);
        diff_any = fmax(diff_any, fabs(out[1][j] - out[0][j]));
    }
    PT_CHECK(diff_any > 0, "mxfp6_matmul = true did not change the weights");
}

int main(void)
{
    PT_RUN(test_htp_rules);
    PT_RUN(test_htp_options);
    PT_RUN(test_lpai_rules);
    PT_RUN(test_aic_rules);
    PT_RUN(test_aic_mxfp6);
    return pt_result();
}
