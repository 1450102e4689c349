/*
 * aic: an EMULATOR of Qualcomm Cloud AI 100 (QAIRT AIC backend), faithful to
 * spec/targets.md §3.7 and §5.3. No accelerator card is involved.
 *
 * [provider.aic] keys (docs/emulators.md):
 *   sku               standard (default) | pro | ultra
 *   num_cores         AI cores per instance, 1..16 (default 14)
 *   instances         1..16 (default 1); instances * num_cores <= 16 per SoC
 *   convert_to_fp16   true (default): weights/activations cast to fp16,
 *                     constants clipped to +-65504 | false: fp32
 *   mxfp6_matmul      true|false (default false): MatMul constant weights in
 *                     OCP MXFP6 (32-element blocks, E8M0 scale)
 *   mxfp6_format      e2m3 (default) | e3m2   (UNVERIFIED for AI 100: a knob)
 *   clock_ghz         tensor clock, 0.1..3 (default 1.5, DERIVED estimate)
 *   mos               0..3 on-chip memory reduction effort (default 0)
 *   multicast_weights true|false (default false)
 */
#include "emu_provider.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

static const sy_host_api *H_; /* process-wide: the same host table in every environment */

static const struct sku {
    const char *name;
    int socs;
    double ddr_gbs;
    uint64_t sram_mb;
} skus[] = {{"standard", 1, 137, 126}, {"pro", 1, 137, 144}, {"ultra", 4, 548, 576}};

#define AIC_VTCM_PER_CORE (8ull << 20)
#define AIC_L2_PER_CORE (1ull << 20)
#define AIC_F16_MACS 4096.0 /* tensor unit MAC/clk per core (fp16) */
#define AIC_I8_MACS 8192.0  /* tensor unit MAC/clk per core (int8) */
#define AIC_VEC_MACS 256.0  /* vector unit fp16 MAC/clk per core */
#define AIC_VEC_I8_MACS 512.0 /* vector unit 8-bit integer MAC/clk per core */

typedef struct aic_state {
    emu_pstate base; /* compat, board, env (first: the shared callbacks' view) */
    const struct sku *sku;
    int cores, instances, mos;
    bool fp16, mxfp6, e2m3, multicast;
    double clock_hz;
    uint64_t weight_bytes;
} aic_state;

static sy_memory_domain_def aic_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "aic_ddr",
    .alignment = 256,
    .capacity = 0,
    .host_visible = true,
};

static bool aic_fp16(void *ps) { return ((aic_state *)ps)->fp16; }
static double aic_clock(void *ps) { return ((aic_state *)ps)->clock_hz; }

/* on-chip working set of a node: activations in + out + weights, device bytes */
static uint64_t aic_ws(const aic_state *s, const sy_node *n, const emu_work *w)
{
    (void)n;
    (void)s;
    return (uint64_t)(w->bytes_in + w->bytes_out);
}

static const char *aic_verdict(const aic_state *s, uint64_t ws)
{
    uint64_t vtcm = (uint64_t)s->cores * AIC_VTCM_PER_CORE;
    return ws <= vtcm ? "fits-vtcm" : ws <= vtcm + (uint64_t)s->cores * AIC_L2_PER_CORE ? "fits-l2" : "ddr-stream";
}

static int64_t aic_cycles(void *ps, const sy_node *n, const emu_work *w, const char **unit)
{
    aic_state *s = ps;
    bool i8 = w->qbits == 8;
    double rate = w->matrix ? (i8 ? AIC_I8_MACS : AIC_F16_MACS) : (i8 ? AIC_VEC_I8_MACS : AIC_VEC_MACS);
    *unit = w->matrix ? "TENSOR" : "VECTOR";
    double compute = w->macs / (rate * s->cores);
    double ddr_bpc = s->sku->ddr_gbs * 1e9 / s->instances / s->clock_hz;
    double bytes = w->bytes_in + w->bytes_out;
    const char *v = aic_verdict(s, aic_ws(s, n, w));
    /* roofline per instance; on-chip tensors move at VTCM speed (not modelled) */
    double mem = !strcmp(v, "ddr-stream") ? bytes / ddr_bpc : 0.0;
    return (int64_t)ceil(fmax(compute, mem));
}

/* MatMul constant weights -> MXFP6 when enabled, then fp16 for the MAC */
static void aic_pack_hook(void *ps, const sy_node *n, uint32_t input, float *w, const sy_tensor *t)
{
    aic_state *s = ps;
    if (!s->mxfp6 || input != 1 || strcmp(H_->node_op(n), "MatMul") || t->rank != 2)
        return;
    emu_mxfp6_kn(w, t->dims[0], t->dims[1], s->e2m3);
    if (s->fp16)
        emu_round_n(w, sy_tensor_numel(t));
}

static const emu_target target = {"aic", NULL, aic_fp16, aic_cycles, aic_clock, aic_pack_hook};
static emu_target target_rt;

static const char *const option_keys[] = {"sku", "num_cores", "instances", "convert_to_fp16", "mxfp6_matmul",
                                          "mxfp6_format", "clock_ghz", "mos", "multicast_weights", NULL};
#define CFG_ERR(...) H_->status_new(SY_ERR_INVALID_CONFIG, __VA_ARGS__)

static sy_status *aic_create(const sy_options *o, void **state)
{
    aic_state *s = calloc(1, sizeof *s);
    if (!s)
        return H_->status_new(SY_ERR_OUT_OF_MEMORY, "aic: out of memory");
    s->sku = &skus[0];
    s->cores = 14;
    s->instances = 1;
    s->fp16 = true;
    s->e2m3 = true;
    s->clock_hz = 1.5e9;
    const char *v;
    uint64_t u;
    double f;
    sy_status *st = NULL;
    if (o && (v = H_->option_get(o, "sku"))) {
        s->sku = NULL;
        for (size_t i = 0; i < 3; i++)
            if (!strcasecmp(skus[i].name, v))
                s->sku = &skus[i];
        if (!s->sku)
            st = CFG_ERR("[provider.aic] sku = '%s': expected standard, pro or ultra", v);
    }
    if (!st && o && (v = H_->option_get(o, "num_cores"))) {
        if (!emu_parse_u64(v, 1, 16, &u))
            st = CFG_ERR("[provider.aic] num_cores = '%s': expected 1 to 16 (AI cores per SoC)", v);
        s->cores = (int)u;
    }
    if (!st && o && (v = H_->option_get(o, "instances"))) {
        if (!emu_parse_u64(v, 1, 16, &u))
            st = CFG_ERR("[provider.aic] instances = '%s': expected 1 to 16", v);
        s->instances = (int)u;
    }
    if (!st && s->instances * s->cores > 16 * s->sku->socs)
        st = CFG_ERR("[provider.aic] instances (%d) x num_cores (%d) exceeds the %d AI cores of the %s SKU",
                     s->instances, s->cores, 16 * s->sku->socs, s->sku->name);
    if (!st && o && (v = H_->option_get(o, "mos"))) {
        if (!emu_parse_u64(v, 0, 3, &u))
            st = CFG_ERR("[provider.aic] mos = '%s': expected 0 to 3", v);
        s->mos = (int)u;
    }
    if (!st && o && (v = H_->option_get(o, "clock_ghz"))) {
        if (!emu_parse_f64(v, 0.1, 3.0, &f))
            st = CFG_ERR("[provider.aic] clock_ghz = '%s': expected 0.1 to 3", v);
        s->clock_hz = f * 1e9;
    }
    if (!st && o && (v = H_->option_get(o, "mxfp6_format"))) {
        if (!strcasecmp(v, "e2m3"))
            s->e2m3 = true;
        else if (!strcasecmp(v, "e3m2"))
            s->e2m3 = false;
        else
            st = CFG_ERR("[provider.aic] mxfp6_format = '%s': expected e2m3 or e3m2", v);
    }
    static const char *const bools[] = {"convert_to_fp16", "mxfp6_matmul", "multicast_weights"};
    bool *const dst[] = {&s->fp16, &s->mxfp6, &s->multicast};
    if (!st)
        st = emu_option_bools(o, "aic", bools, dst, 3);
    if (st) {
        free(s);
        return st;
    }
    snprintf(s->base.compat, sizeof s->base.compat,
             "aic-emulator/0.1.0 hw=2.0 sku=%s cores=%d instances=%d fp16=%d mxfp6=%d%s mos=%d clock=%.2fGHz",
             s->sku->name, s->cores, s->instances, s->fp16, s->mxfp6, s->mxfp6 ? (s->e2m3 ? "/e2m3" : "/e3m2") : "",
             s->mos, s->clock_hz / 1e9);
    H_->log(SY_LOG_INFO, "aic", "EMULATOR of Cloud AI 100: %s", s->base.compat);
    emu_pstate_ready(&s->base);
    *state = s;
    return NULL;
}

/* §5.3 INT8: the AIC int8 path is UINT8 quantization (symmetric or
 * asymmetric) of activations; weights u8 or s8 */
static bool aic_qcheck(const sy_node *n, const emu_qinfo *qi, sy_claim *c)
{
    const char *op = H_->node_op(n);
    if (qi->act != SY_DT_UINT8 || qi->out != SY_DT_UINT8)
        return emu_decline(c, SY_REASON_DTYPE,
                           "AIC-QCONFIG: %s activations %s -> %s; the AIC INT8 path takes uint8 activations", op,
                           sy_dt_name(qi->act), sy_dt_name(qi->out)),
               false;
    if (emu_qbinary(op) && H_->node_input(n, 3)->dtype != SY_DT_UINT8)
        return emu_decline(c, SY_REASON_DTYPE, "AIC-QCONFIG: %s operand B is %s; uint8 required", op,
                           sy_dt_name(H_->node_input(n, 3)->dtype)),
               false;
    if (qi->wt != SY_DT_UNDEFINED && qi->wt != SY_DT_UINT8 && qi->wt != SY_DT_INT8)
        return emu_decline(c, SY_REASON_DTYPE, "AIC-QCONFIG: %s weights are %s; u8 or s8 required", op,
                           sy_dt_name(qi->wt)),
               false;
    if (!qi->params_static)
        return emu_decline(c, SY_REASON_DTYPE,
                           "AIC-QSTATIC: %s weights, bias and encodings must be static (fp32 scales)", op),
               false;
    if (!strcmp(op, "QMaxPool") && sy_attr_int_or(H_, n, "global", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "AIC-POOL: global QMaxPool is not emulated"), false;
    return true;
}

static void aic_check(void *state, const sy_node *n, sy_claim *c)
{
    aic_state *s = state;
    emu_recs *rs = emu_session_recs(n); /* this session's records */
    emu_board_new_pass(&s->base.board, rs, n);
    if (emu_is_qio(n)) /* the kernel's own decline names the rule */
        return emu_decline(c, SY_REASON_NO_KERNEL, "no %s kernel", H_->node_op(n));
    emu_qinfo qi;
    bool quant = emu_qdescribe(n, &qi);
    const char *op = emu_qbase_op(H_->node_op(n));
    uint32_t ni = H_->node_num_inputs(n);
    if (quant && !aic_qcheck(n, &qi, c))
        return;
    if (emu_is_int_view(n, op) && H_->node_input(n, 0)->dtype != SY_DT_UINT8)
        return emu_decline(c, SY_REASON_DTYPE, "AIC-QCONFIG: %s of %s; the AIC INT8 path takes uint8", op,
                           sy_dt_name(H_->node_input(n, 0)->dtype));
    for (uint32_t i = 0; i < ni && !quant && !emu_is_int_view(n, op); i++) {
        const sy_tensor *t = H_->node_input(n, i);
        if (!t || t->dtype == SY_DT_FLOAT32 || t->dtype == SY_DT_INT64 || t->dtype == SY_DT_INT32 ||
            t->dtype == SY_DT_BOOL)
            continue;
        if (t->dtype == SY_DT_UINT8 || t->dtype == SY_DT_INT8)
            return emu_decline(c, SY_REASON_DTYPE,
                               "AIC-DTYPE: %s on %s codes; the int8 path runs as switchyard.quant nodes (QConv, "
                               "QMatMul, QAdd, QMaxPool)",
                               op, sy_dt_name(t->dtype));
        return emu_decline(c, SY_REASON_DTYPE, "AIC-DTYPE: input %u is %s; AIC takes FP32/FP16, INT8, MXFP6 weights",
                           i, sy_dt_name(t->dtype));
    }
    if (!strcmp(op, "Softmax")) { /* the emulated kernel is last-axis only */
        const sy_tensor *x = H_->node_input(n, 0);
        int64_t axis = sy_attr_int_or(H_, n, "axis", H_->node_opset(n) >= 13 ? -1 : 1);
        if (axis < 0)
            axis += x->rank;
        if (axis != x->rank - 1)
            return emu_decline(c, SY_REASON_ATTRIBUTE, "AIC-SOFTMAX: emulated for the last axis only, got axis %lld",
                               (long long)axis);
    }
    if (!strcmp(op, "Conv") && H_->node_input(n, 0)->rank != 4)
        return emu_decline(c, SY_REASON_RANK, "AIC-CONV: the emulated Conv is 2-D (rank 4)");
    if ((!strcmp(op, "MatMul")) && (H_->node_input(n, 0)->rank < 2 || H_->node_input(n, quant ? 3 : 1)->rank < 2))
        return emu_decline(c, SY_REASON_RANK, "AIC-MATMUL: operands must be rank >= 2");
    if ((!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) && sy_attr_int_or(H_, n, "ceil_mode", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "AIC-POOL: ceil_mode = 1 is not emulated");
    if (!emu_has_kernel(n)) /* asked for a rule only; nothing to take or record */
        return emu_decline(c, SY_REASON_NO_KERNEL, "no aic kernel for %s", op);
    emu_work w;
    emu_node_work(n, s->fp16 ? 2 : 4, &w);
    uint64_t ws = aic_ws(s, n, &w);
    const char *unit = "";
    int64_t cyc = aic_cycles(s, n, &w, &unit);
    emu_board_record(&s->base.board, rs, n, aic_verdict(s, ws), ws, cyc, unit);
    c->take = true;
    c->reason = SY_REASON_TAKEN;
}

static bool aic_can_copy(void *state, const char *src, const char *dst)
{
    (void)state;
    return emu_can_copy_host(aic_domain.name, src, dst);
}

/* host <-> device: with convert_to_fp16 every float crossing is fp16 */
static sy_status *aic_copy(void *state, const sy_tensor *src, sy_tensor *dst)
{
    return emu_copy(src, dst, ((aic_state *)state)->fp16);
}

/* the report of one provider state */
static size_t report_of(void *state, char *buf, size_t len)
{
    aic_state *s = state;
    size_t k = 0;
    emu_out(buf, len, &k, "aic EMULATOR %s\n", s->base.compat);
    double total = emu_out_recs(buf, len, &k, emu_board_lock(&s->base.board), "on-chip");
    emu_board_unlock(&s->base.board);
    emu_out(buf, len, &k,
            "  budgets: %d cores x (8 MB VTCM + 1 MB L2), SoC SRAM %llu MB; constants clipped to fp16 range: %llu\n",
            s->cores, (unsigned long long)s->sku->sram_mb,
            (unsigned long long)__atomic_load_n(&emu_clipped, __ATOMIC_RELAXED));
    emu_out(buf, len, &k, "  modelled latency per instance: %.0f cycles = %.3f us at %.2f GHz (batch 1, set-size 1)\n",
            total, total / s->clock_hz * 1e6, s->clock_hz / 1e9);
    return k;
}

/* its own entries; emu_provider_init fills in the ones every emulator shares */
static const sy_provider_def provider = {
    .name = "aic",
    .description = "EMULATOR of Qualcomm Cloud AI 100 (QAIRT AIC backend): fp16 / MXFP6 MatMul weights, "
                   "on-chip budgets, roofline cost; no hardware",
    .domain = &aic_domain,
    .option_keys = option_keys,
    .check_node = aic_check,
    .can_copy = aic_can_copy,
    .copy = aic_copy,
};

static const emu_provider_ops ops = {aic_create, report_of};

static sy_status *aic_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H_ = host;
    return emu_provider_init(host, p, &target_rt, &target, "AIC-QIO", &provider, &ops);
}

static void aic_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "aic",
    .version = "0.1.0",
    .description = "aic provider: an EMULATOR of Qualcomm Cloud AI 100 (no hardware)",
    .kinds = SY_PLUGIN_KIND_PROVIDER,
    .option_keys = NULL,
    .init = aic_init,
    .fini = aic_fini,
};

SY_PLUGIN_DEFINE(desc)
