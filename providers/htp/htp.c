/*
 * htp: an EMULATOR of the Qualcomm Hexagon Tensor Processor (QNN HTP
 * backend), faithful to spec/targets.md §3.4 and §5.1. No Hexagon hardware
 * is involved: kernels run on the host CPU with HTP's numerics, constraints,
 * VTCM budget and a cost model.
 *
 * [provider.htp] keys (docs/emulators.md):
 *   soc_model     SM8350 SM8450 SM8475 SM8550 SM8650 (default) SM8750 SM8850
 *                 QCM6490 SA8295 SA8540 SA8255 QCS9100 SSG2115P SSG2125P
 *                 SXR1230P SXR2230P SXR2330P SM8845 SAR2230P SW6100 SA8797
 *   vtcm_mb       VTCM the graph may use, MB (default 4; 0 = the SoC's max;
 *                 more than the SoC has is an error)
 *   precision     FLOAT16 (default: fp32 graphs run in fp16, outputs cast
 *                 back) | FLOAT32 (refused: "not supported by QNN HTP")
 *   perf_profile  burst ... extreme_power_saver (default high_performance)
 *   hvx_threads   1..8 (default 4)
 *   dlbc          true|false (default false): input bandwidth compression
 *   strict_vtcm   true|false (default false): an op whose working set
 *                 exceeds VTCM is declined instead of modelled as spilling
 *   fold_relu_off true|false (default false)
 *   optimization  1..3 (the "O" graph option, default 2)
 */
#include "emu_provider.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

static const sy_host_api *H_; /* process-wide: the same host table in every environment */

/* §3.4 VTCM per SoC (MB) and Hexagon arch. */
static const struct soc {
    const char *name;
    int arch; /* 68, 69, 73, 75, 79, 81 */
    int vtcm_mb;
} socs[] = {
    {"SM8350", 68, 4},   {"SA8295", 68, 8},   {"SA8540", 68, 8},   {"QCM6490", 68, 2},   {"SM8450", 69, 8},
    {"SM8475", 69, 8},   {"SXR2230P", 69, 8}, {"SM8550", 73, 8},   {"SA8255", 73, 8},    {"QCS9100", 73, 8},
    {"SSG2115P", 73, 2}, {"SSG2125P", 73, 2}, {"SXR1230P", 73, 2}, {"SM8650", 75, 8},    {"SM8750", 79, 8},
    {"SXR2330P", 79, 8}, {"SM8850", 81, 8},   {"SM8845", 81, 8},   {"SAR2230P", 81, 4},  {"SW6100", 81, 4},
    {"SA8797", 81, 16},
};

/* perf_profile -> relative clock (POLICY, UNVERIFIED knobs) and the fixed
 * per-inference overhead (sleepLatency, §3.4) in microseconds. */
static const struct perf {
    const char *name;
    double clock_scale;
    double overhead_us;
} perfs[] = {
    {"burst", 1.00, 40},          {"sustained_high_performance", 0.95, 100}, {"high_performance", 0.90, 100},
    {"balanced", 0.70, 1000},     {"low_balanced", 0.60, 1000},              {"high_power_saver", 0.50, 1000},
    {"power_saver", 0.40, 1000},  {"low_power_saver", 0.30, 1000},           {"extreme_power_saver", 0.20, 1000},
};

/* Cost knobs (POLICY; Qualcomm publishes no per-op throughput): HMX fp16
 * MACs per cycle, HVX fp16 lanes per thread per cycle, DDR bytes per cycle,
 * nominal clock at burst. */
#define HTP_HMX_F16_MACS 1024.0
#define HTP_HMX_I8_MACS 2048.0 /* int8 x int8: twice the fp16 rate (as AIC's 8192 vs 4096) */
#define HTP_HVX_LANES 64.0     /* 16-bit lanes of a 1024-bit HVX vector */
#define HTP_HVX_LANES_I8 128.0 /* 8-bit lanes of the same vector */
#define HTP_DDR_BPC 32.0
#define HTP_CLOCK_HZ 1.4e9
#define HTP_SLOW_PENALTY 1.5 /* "fits-slow": working set between TCM/2 and TCM */
#define HTP_DLBC_RATIO 1.3   /* input bandwidth saving with DLBC */

typedef struct htp_state {
    emu_pstate base; /* compat, board, env (first: the shared callbacks' view) */
    const struct soc *soc;
    const struct perf *perf;
    uint64_t vtcm_bytes;
    int vtcm_mb;
    int hvx_threads, opt;
    bool dlbc, strict_vtcm, fold_relu_off;
} htp_state;

static sy_memory_domain_def htp_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "htp_ddr",
    .alignment = 256,
    .capacity = 0,
    .host_visible = true,
};

static bool htp_fp16(void *ps)
{
    (void)ps;
    return true; /* precision FLOAT16 is the only float mode HTP has */
}

/* ---- VTCM working set of a node (§3.4 TCM-fit equations) ----------------- */
static int64_t up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/* W, H, D of a tensor in HTP's NHWC view: NCHW rank 4 -> W = dims[3],
 * H = dims[2], D = dims[1]; otherwise W = dims[rank-2], D = dims[rank-1]. */
static void whd(const sy_tensor *t, int64_t *w, int64_t *h, int64_t *d)
{
    *w = *h = *d = 1;
    if (!t)
        return;
    if (t->rank == 4) {
        *w = t->dims[3], *h = t->dims[2], *d = t->dims[1];
    } else if (t->rank >= 2) {
        *w = t->dims[t->rank - 2], *d = t->dims[t->rank - 1];
    } else if (t->rank == 1) {
        *d = t->dims[0];
    }
}

static uint64_t working_set(const sy_node *n, const char **rule)
{
    emu_qinfo qi;
    bool quant = emu_qdescribe(n, &qi);
    const char *op = emu_qbase_op(H_->node_op(n));
    /* QConcat's data inputs start at 2 (after y_scale, y_zp) */
    const sy_tensor *x = H_->node_input(n, quant && !strcmp(op, "Concat") ? 2 : 0), *y = H_->node_output(n, 0);
    /* fp16 and 16-bit codes: 2 bytes, width padded to 4; 8-bit codes (also
     * moved by Transpose / Slice / views): 1 byte, width to 8 */
    bool codes8 = x->dtype == SY_DT_INT8 || x->dtype == SY_DT_UINT8;
    const int64_t el = (quant && qi.qbits == 8) || (!quant && codes8) ? 1 : 2;
    int64_t w, h, d;
    whd(x, &w, &h, &d);
    int64_t wp = up(w, el == 1 ? 8 : 4);
    if (!strcmp(op, "Conv")) {
        const sy_tensor *f = H_->node_input(n, quant ? 3 : 1);
        int64_t wo, ho, dout;
        whd(y, &wo, &ho, &dout);
        int64_t fh = f->dims[2], fw = f->dims[3], fd = up(f->dims[1], 32);
        *rule = "conv: Win*Din*FH*8 + FW*FH*FD*32 + Wout*8";
        return (uint64_t)((wp * up(d, 32) * fh * 8 + fw * fh * fd * 32 + up(wo, el == 1 ? 8 : 4) * 8) * el);
    }
    if (!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) {
        int64_t k = x->dims[x->rank - 1], nn = y->dims[y->rank - 1];
        *rule = "matmul as 1x1 conv: K*8 + K*32 + N*8 (POLICY)";
        return (uint64_t)((up(k, 32) * 8 + up(k, 32) * 32 + up(nn, el == 1 ? 8 : 4) * 8) * el);
    }
    if (!strcmp(op, "GlobalAveragePool")) {
        *rule = "GlobalAvgPool: W*256*elsize";
        return (uint64_t)(wp * 256 * el);
    }
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div")) {
        *rule = "binary eltwise: W*256*elsize*3";
        return (uint64_t)(wp * 256 * el * 3);
    }
    *rule = "unary eltwise: W*256*elsize*2";
    return (uint64_t)(wp * 256 * el * 2);
}

static const char *verdict_of(const htp_state *s, uint64_t ws)
{
    return ws <= s->vtcm_bytes / 2 ? "fits" : ws <= s->vtcm_bytes ? "fits-slow" : "spill";
}

static int64_t htp_cycles(void *ps, const sy_node *n, const emu_work *w, const char **unit)
{
    htp_state *s = ps;
    double compute;
    bool i8 = w->qbits == 8; /* 16x8 runs at the 16-bit rates */
    if (w->matrix) {
        compute = w->macs / (i8 ? HTP_HMX_I8_MACS : HTP_HMX_F16_MACS);
        *unit = "HMX";
    } else {
        compute = w->macs / ((i8 ? HTP_HVX_LANES_I8 : HTP_HVX_LANES) * s->hvx_threads);
        *unit = "HVX";
    }
    double bytes = (s->dlbc ? w->bytes_in / HTP_DLBC_RATIO : w->bytes_in) + w->bytes_out;
    double cyc = fmax(compute, bytes / HTP_DDR_BPC);
    const char *rule;
    uint64_t ws = working_set(n, &rule);
    const char *v = verdict_of(s, ws);
    if (!strcmp(v, "fits-slow"))
        cyc *= HTP_SLOW_PENALTY;
    else if (!strcmp(v, "spill")) /* DDR paging: the working set goes out and back per tile pass */
        cyc += 2.0 * (double)ws / HTP_DDR_BPC;
    return (int64_t)ceil(cyc);
}

static double htp_clock(void *ps) { return HTP_CLOCK_HZ * ((htp_state *)ps)->perf->clock_scale; }

static const emu_target target = {"htp", NULL, htp_fp16, htp_cycles, htp_clock, NULL};
static emu_target target_rt;

/* ---- options --------------------------------------------------------------- */
static const char *const option_keys[] = {"soc_model", "vtcm_mb", "precision", "perf_profile", "hvx_threads",
                                          "dlbc", "strict_vtcm", "fold_relu_off", "optimization", NULL};

#define CFG_ERR(...) H_->status_new(SY_ERR_INVALID_CONFIG, __VA_ARGS__)

static sy_status *htp_create(const sy_options *o, void **state)
{
    htp_state *s = calloc(1, sizeof *s);
    if (!s)
        return H_->status_new(SY_ERR_OUT_OF_MEMORY, "htp: out of memory");
    s->soc = &socs[13]; /* SM8650 */
    s->perf = &perfs[2];
    s->hvx_threads = 4;
    s->opt = 2;
    uint64_t vtcm = 4, u;
    const char *v;
    sy_status *st = NULL;
    if (o && (v = H_->option_get(o, "soc_model"))) {
        s->soc = NULL;
        for (size_t i = 0; i < sizeof socs / sizeof socs[0]; i++)
            if (!strcasecmp(socs[i].name, v))
                s->soc = &socs[i];
        if (!s->soc)
            st = CFG_ERR("[provider.htp] soc_model = '%s': unknown SoC (known: SM8350, SM8450, SM8475, SM8550, "
                         "SM8650, SM8750, SM8850, QCM6490, SA8295, ... see docs/emulators.md)",
                         v);
    }
    if (!st && o && (v = H_->option_get(o, "vtcm_mb")) && !emu_parse_u64(v, 0, 1024, &vtcm))
        st = CFG_ERR("[provider.htp] vtcm_mb = '%s': expected an integer (MB; 0 = the SoC's maximum)", v);
    if (!st && vtcm > (uint64_t)s->soc->vtcm_mb)
        st = CFG_ERR("[provider.htp] vtcm_mb = %llu exceeds the %d MB of VTCM of %s", (unsigned long long)vtcm,
                     s->soc->vtcm_mb, s->soc->name);
    if (!st && o && (v = H_->option_get(o, "precision")) && strcasecmp(v, "FLOAT16")) {
        if (!strcasecmp(v, "FLOAT32"))
            st = CFG_ERR("[provider.htp] precision = FLOAT32: QNN_PRECISION_FLOAT32 is not supported by QNN HTP "
                         "(use FLOAT16: fp32 graphs run in fp16, outputs are returned in fp32)");
        else
            st = CFG_ERR("[provider.htp] precision = '%s': expected FLOAT16", v);
    }
    if (!st && o && (v = H_->option_get(o, "perf_profile"))) {
        s->perf = NULL;
        for (size_t i = 0; i < sizeof perfs / sizeof perfs[0]; i++)
            if (!strcasecmp(perfs[i].name, v))
                s->perf = &perfs[i];
        if (!s->perf)
            st = CFG_ERR("[provider.htp] perf_profile = '%s': expected burst, sustained_high_performance, "
                         "high_performance, balanced, low_balanced, high_power_saver, power_saver, "
                         "low_power_saver or extreme_power_saver",
                         v);
    }
    if (!st && o && (v = H_->option_get(o, "hvx_threads"))) {
        if (!emu_parse_u64(v, 1, 8, &u))
            st = CFG_ERR("[provider.htp] hvx_threads = '%s': expected 1 to 8", v);
        s->hvx_threads = (int)u;
    }
    if (!st && o && (v = H_->option_get(o, "optimization"))) {
        if (!emu_parse_u64(v, 1, 3, &u))
            st = CFG_ERR("[provider.htp] optimization = '%s': expected 1, 2 or 3", v);
        s->opt = (int)u;
    }
    static const char *const bools[] = {"dlbc", "strict_vtcm", "fold_relu_off"};
    bool *const dst[] = {&s->dlbc, &s->strict_vtcm, &s->fold_relu_off};
    if (!st)
        st = emu_option_bools(o, "htp", bools, dst, 3);
    if (st) {
        free(s);
        return st;
    }
    s->vtcm_mb = vtcm ? (int)vtcm : s->soc->vtcm_mb;
    s->vtcm_bytes = (uint64_t)s->vtcm_mb << 20;
    snprintf(s->base.compat, sizeof s->base.compat,
             "htp-emulator/0.1.0 soc=%s arch=V%d vtcm_mb=%d precision=FLOAT16 hvx_threads=%d dlbc=%d O=%d",
             s->soc->name, s->soc->arch, s->vtcm_mb, s->hvx_threads, s->dlbc, s->opt);
    H_->log(SY_LOG_INFO, "htp", "EMULATOR of QNN HTP: %s (V%d), VTCM %d MB, %s", s->soc->name, s->soc->arch,
            s->vtcm_mb, s->perf->name);
    emu_pstate_ready(&s->base);
    *state = s;
    return NULL;
}

/* ---- capability (§3.4 HtpOpDefSupplement, §5.1) --------------------------- */
static bool is_eltwise(const char *op)
{
    static const char *const e[] = {"Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Exp", NULL};
    for (int i = 0; e[i]; i++)
        if (!strcmp(op, e[i]))
            return true;
    return false;
}

/* §5.1 dtype configurations of a switchyard.quant node; false: declined */
static bool htp_qcheck(const htp_state *s, const sy_node *n, const emu_qinfo *qi, sy_claim *c)
{
    const char *op = H_->node_op(n);
    bool a8 = qi->act == SY_DT_INT8 || qi->act == SY_DT_UINT8, o8 = qi->out == SY_DT_INT8 || qi->out == SY_DT_UINT8;
    /* INT16 takes u16 activations; s16 symmetric codes are the same values in
     * the u16 encoding with offset 32768 (POLICY: taken as that re-encoding) */
    bool a16 = qi->act == SY_DT_UINT16 || qi->act == SY_DT_INT16, o16 = qi->out == SY_DT_UINT16 || qi->out == SY_DT_INT16;
    if (!((a8 && o8) || (a16 && o16)))
        return emu_decline(c, SY_REASON_DTYPE,
                           "HTP-QCONFIG: %s activations %s -> %s are neither the INT8 (u8/s8) nor the INT16 (u16) "
                           "configuration",
                           op, sy_dt_name(qi->act), sy_dt_name(qi->out)),
               false;
    if (emu_qbinary(op)) {
        const sy_tensor *b = H_->node_input(n, 3);
        if (b && b->dtype != qi->act)
            return emu_decline(c, SY_REASON_DTYPE, "HTP-QCONFIG: %s operands are %s and %s (one configuration)", op,
                               sy_dt_name(qi->act), sy_dt_name(b->dtype)),
                   false;
    }
    if (qi->wt != SY_DT_UNDEFINED) {
        if (qi->wt == SY_DT_INT16 || qi->wt == SY_DT_UINT16)
            return emu_decline(c, SY_REASON_DTYPE,
                               "HTP-QCONFIG: 16-bit weights (A16W16, >= V73, symmetric) are not emulated; 8-bit weights only"),
                   false;
        if (qi->wt != SY_DT_INT8 && qi->wt != SY_DT_UINT8)
            return emu_decline(c, SY_REASON_DTYPE, "HTP-QCONFIG: %s weights; the emulated configs take u8/s8 weights",
                               sy_dt_name(qi->wt)),
                   false;
        if (qi->w_per_axis && (qi->wt != SY_DT_INT8 || !qi->w_symmetric))
            return emu_decline(c, SY_REASON_DTYPE,
                               "HTP-QAXIS: per-axis weight encodings must be signed and symmetric (weights %s, %s)",
                               sy_dt_name(qi->wt), qi->w_symmetric ? "symmetric" : "zero points != 0"),
                   false;
    }
    if (!qi->params_static)
        return emu_decline(c, SY_REASON_DTYPE,
                           "HTP-QSTATIC: %s weights, bias and encodings must be static (constants, fp32 scales)",
                           op),
               false;
    if (!strcmp(op, "QMaxPool") && sy_attr_int_or(H_, n, "global", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "HTP-POOL: global QMaxPool is not emulated"), false;
    (void)s;
    return true;
}

static void htp_check(void *state, const sy_node *n, sy_claim *c)
{
    htp_state *s = state;
    emu_recs *rs = emu_session_recs(n); /* this session's records */
    emu_board_new_pass(&s->base.board, rs, n);
    if (emu_is_qio(n)) /* the kernel's own decline names the rule */
        return emu_decline(c, SY_REASON_NO_KERNEL, "no %s kernel", H_->node_op(n));
    emu_qinfo qi;
    bool quant = emu_qdescribe(n, &qi);
    const char *op = emu_qbase_op(H_->node_op(n)); /* QConv is checked as Conv, ... */
    uint32_t ni = H_->node_num_inputs(n);
    if (quant && !htp_qcheck(s, n, &qi, c))
        return;
    /* a view of an integer tensor keeps its producer's encoding */
    bool int_view = emu_is_int_view(n, op);
    /* HTP-DTYPE: float graphs need precision FLOAT16 (fp32 cast to fp16);
     * integer activations need encodings (the INT8/INT16 configurations) */
    for (uint32_t i = 0; i < ni && !quant && !int_view; i++) {
        const sy_tensor *t = H_->node_input(n, i);
        if (!t || t->dtype == SY_DT_FLOAT32 || t->dtype == SY_DT_BOOL || t->dtype == SY_DT_INT64 ||
            t->dtype == SY_DT_INT32)
            continue;
        if (t->dtype == SY_DT_FLOAT64 || t->dtype == SY_DT_BFLOAT16)
            return emu_decline(c, SY_REASON_DTYPE, "HTP-DTYPE: input %u is %s; HTP has FP16, INT8, INT16 configs only",
                               i, sy_dt_name(t->dtype));
        if (!t->quant)
            return emu_decline(c, SY_REASON_DTYPE,
                               "HTP-DTYPE: input %u is %s without a quantization encoding (INT8/INT16 configs need one)",
                               i, sy_dt_name(t->dtype));
        return emu_decline(c, SY_REASON_DTYPE,
                           "HTP-DTYPE: input %u is %s with an encoding on %s; the quantized configs run as "
                           "switchyard.quant nodes (QConv, QMatMul, QAdd, QMaxPool)",
                           i, sy_dt_name(t->dtype), op);
    }
    const sy_tensor *x = ni ? H_->node_input(n, 0) : NULL;
    int32_t rank = x ? x->rank : 0;
    if ((!strcmp(op, "Conv") || !strcmp(op, "MatMul") || !strcmp(op, "Gemm")) && rank > 4)
        return emu_decline(c, SY_REASON_RANK, "HTP-RANK-MAC: %s rank must be <= 4, got %d", op, (int)rank);
    if (!strcmp(op, "Conv") && rank != 4)
        return emu_decline(c, SY_REASON_RANK, "HTP-CONV2D: only 2-D convolution (rank 4 NCHW), got rank %d", (int)rank);
    if (!strcmp(op, "Gemm") && rank != 2)
        return emu_decline(c, SY_REASON_RANK, "HTP-FC: FullyConnected input must be rank 2, got %d", (int)rank);
    if (!strcmp(op, "MatMul")) {
        const sy_tensor *b = H_->node_input(n, quant ? 3 : 1);
        if (rank < 2 || (b && b->rank < 2))
            return emu_decline(c, SY_REASON_RANK, "HTP-MATMUL: operands must be rank 2 to 4");
    }
    if (!strcmp(op, "Softmax")) {
        int64_t axis = sy_attr_int_or(H_, n, "axis", H_->node_opset(n) >= 13 ? -1 : 1);
        if (axis < 0)
            axis += rank;
        if (rank > 5)
            return emu_decline(c, SY_REASON_RANK, "HTP-SOFTMAX: rank must be <= 5, got %d", (int)rank);
        if (axis != rank - 1)
            return emu_decline(c, SY_REASON_ATTRIBUTE, "HTP-SOFTMAX: axis must be N-1 = %d, got %lld", (int)rank - 1,
                               (long long)axis);
    }
    if (is_eltwise(op)) {
        const sy_tensor *y = H_->node_output(n, 0);
        if (y && (y->rank < 1 || y->rank > 5))
            return emu_decline(c, SY_REASON_RANK, "HTP-ELTWISE: rank must be 1 to 5, got %d", (int)y->rank);
    }
    if (!strcmp(op, "Buffer")) {
        int64_t mode = sy_attr_int_or(H_, n, "mode", 0);
        if (mode == 0)
            return emu_decline(c, SY_REASON_ATTRIBUTE,
                               "HTP-BUFFER-MODE: HTP supports only NON_BLOCKING modes of Buffer (1, 2), got BLOCKING (0)");
    }
    if ((!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) && sy_attr_int_or(H_, n, "ceil_mode", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "HTP-POOL: ceil_mode = 1 is not emulated");
    if (!emu_has_kernel(n)) /* asked for a rule only; nothing to take or record */
        return emu_decline(c, SY_REASON_NO_KERNEL, "no htp kernel for %s", op);
    /* HTP-VTCM: per-op working set against the graph's VTCM */
    const char *rule = "";
    uint64_t ws = working_set(n, &rule);
    const char *v = verdict_of(s, ws);
    emu_work w;
    emu_node_work(n, 2, &w);
    const char *unit = "";
    int64_t cyc = htp_cycles(s, n, &w, &unit);
    emu_board_record(&s->base.board, rs, n, v, ws, cyc, unit);
    if (!strcmp(v, "spill") && s->strict_vtcm)
        return emu_decline(c, SY_REASON_MEMORY,
                           "HTP-VTCM: working set %llu B (%s) exceeds VTCM %d MB (strict_vtcm = true)",
                           (unsigned long long)ws, rule, s->vtcm_mb);
    if (strcmp(v, "fits"))
        H_->log(SY_LOG_INFO, "htp", "node '%s' (%s): VTCM working set %llu B: %s", H_->node_name(n), op,
                (unsigned long long)ws, v);
    c->take = true;
    c->reason = SY_REASON_TAKEN;
}

static bool htp_can_copy(void *state, const char *src, const char *dst)
{
    (void)state;
    return emu_can_copy_host(htp_domain.name, src, dst);
}

/* into the device: fp32 -> fp16 storage; out of it: values are fp16 already,
 * returned as fp32 (the cast back at the partition boundary) */
static sy_status *htp_copy(void *state, const sy_tensor *src, sy_tensor *dst)
{
    (void)state;
    return emu_copy(src, dst, true);
}

/* ---- report extension ("qnn_emu.htp", v1) --------------------------------- */
/* the report of one provider state */
static size_t report_of(void *state, char *buf, size_t len)
{
    htp_state *s = state;
    size_t k = 0;
    emu_out(buf, len, &k, "htp EMULATOR %s\n", s->base.compat);
    double total = emu_out_recs(buf, len, &k, emu_board_lock(&s->base.board), "vtcm");
    emu_board_unlock(&s->base.board);
    double us = total / htp_clock(s) * 1e6;
    emu_out(buf, len, &k,
            "  modelled latency: %.0f cycles = %.1f us at %.2f GHz (%s) + %.0f us per-inference overhead = %.1f us\n",
            total, us, htp_clock(s) / 1e9, s->perf->name, s->perf->overhead_us, us + s->perf->overhead_us);
    return k;
}

/* its own entries; emu_provider_init fills in the ones every emulator shares */
static const sy_provider_def provider = {
    .name = "htp",
    .description = "EMULATOR of Qualcomm HTP (Hexagon NPU, QNN HTP backend): fp16 storage / fp32 accumulation, "
                   "HtpOpDefSupplement rules, VTCM fit, cost model; no hardware",
    .domain = &htp_domain,
    .option_keys = option_keys,
    .check_node = htp_check,
    .can_copy = htp_can_copy,
    .copy = htp_copy,
};

static const emu_provider_ops ops = {htp_create, report_of};

static sy_status *htp_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H_ = host;
    return emu_provider_init(host, p, &target_rt, &target, "HTP-QIO", &provider, &ops);
}

static void htp_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "htp",
    .version = "0.1.0",
    .description = "htp provider: an EMULATOR of the Qualcomm Hexagon Tensor Processor (no hardware)",
    .kinds = SY_PLUGIN_KIND_PROVIDER,
    .option_keys = NULL,
    .init = htp_init,
    .fini = htp_fini,
};

SY_PLUGIN_DEFINE(desc)
