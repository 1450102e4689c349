/*
 * lpai: an EMULATOR of the Qualcomm Low Power AI eNPU (QNN LPAI backend),
 * faithful to spec/targets.md §3.6 and §5.2. No eNPU is involved.
 *
 * LPAI has no float types: a prepared graph holds u8 / s8 / u16
 * activations only, so every float node is declined (rule LPAI-DTYPE) and
 * falls back; the float models of the shared folder therefore run wholly
 * on cpu_ref under conf/lpai.ini, and the explain output says why.
 *
 * [provider.lpai] keys (docs/emulators.md):
 *   hw_version           v4 (default: prepare only) | v5 | v6
 *   simulate             true|false (default false): execute v4 graphs here
 *   scratch_mem_type     ddr | llc | tcm (default tcm)
 *   persistent_mem_type  ddr | llc | tcm (default ddr)
 *   mem_alignment        bytes, power of two 16..4096 (default 256)
 *   fps                  real-time contract, 1..1000 (default 1)
 *   ftrt_ratio           1..100 (default 10)
 *   client_type          real_time (default) | non_real_time
 *   macs_per_cycle       eNPU throughput knob (default 256, UNVERIFIED)
 *   clock_mhz            eNPU clock knob (default 500, UNVERIFIED)
 */
#include "emu.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

static const sy_host_api *H_; /* process-wide: the same host table in every environment */

static const char *const mem_types[] = {"ddr", "llc", "tcm"};
/* access cost per byte in cycles by memory type (TCM < LLC < DDR; POLICY knobs) */
static const double mem_cpb[] = {0.25, 0.0625, 0.015625};

/* the 46 ops of LpaiOpDefSupplement (SDK 2.25) in ONNX names where they map */
static const char *const lpai_ops[] = {
    "ArgMax", "ArgMin", "BatchNormalization", "Concat", "Conv", "Cast", "Add", "Div", "Exp", "Log", "Max", "Min",
    "Mul", "Sqrt", "Sub", "Gemm", "Gather", "Gelu", "GRU", "HardSwish", "LogSoftmax", "LSTM", "MatMul", "Pad",
    "AveragePool", "MaxPool", "PRelu", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceSum", "Relu", "Clip",
    "Reshape", "Resize", "Sigmoid", "Softmax", "Slice", "Tanh", "Transpose", "ConvTranspose", "Flatten", "Squeeze",
    "Unsqueeze", "GlobalAveragePool",
    /* v5+ (later QAIRT releases; POLICY version gate) */
    "Buffer", "StatefulGRU", "StatefulLSTM", NULL};

typedef struct lpai_state {
    int hw; /* 4, 5, 6 */
    bool simulate, real_time;
    int scratch_type, persistent_type;
    uint64_t alignment;
    double fps, ftrt, macs_pc, clock_hz;
    char compat[256];
    emu_board board; /* this provider's sessions' records, for the report */
    struct lpai_env *env;  /* the plugin state of its environment */
} lpai_state;

/* The latest created state, for the report extension (emu_live) */
static emu_live live = EMU_LIVE_INIT;

static const sy_memory_domain_def lpai_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "lpai_scratch",
    .alignment = 256,
    .capacity = 0,
    .host_visible = true,
};

static bool lpai_fp16(void *ps)
{
    (void)ps;
    return false;
}
static double lpai_clock(void *ps) { return ((lpai_state *)ps)->clock_hz; }

static int64_t lpai_cycles(void *ps, const sy_node *n, const emu_work *w, const char **unit)
{
    (void)n;
    lpai_state *s = ps;
    *unit = "eNPU";
    double compute = w->macs / s->macs_pc;
    double mem = (w->bytes_in + w->bytes_out) * mem_cpb[s->scratch_type];
    return (int64_t)ceil(compute + mem);
}

static const emu_target target = {"lpai", NULL, lpai_fp16, lpai_cycles, lpai_clock, NULL};
static emu_target target_rt;

static const char *const option_keys[] = {"hw_version", "simulate", "scratch_mem_type", "persistent_mem_type",
                                          "mem_alignment", "fps", "ftrt_ratio", "client_type", "macs_per_cycle",
                                          "clock_mhz", NULL};
#define CFG_ERR(...) H_->status_new(SY_ERR_INVALID_CONFIG, __VA_ARGS__)

static int mem_type(const char *v)
{
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(v, mem_types[i]))
            return i;
    return -1;
}

static sy_status *lpai_create(const sy_options *o, void **state)
{
    lpai_state *s = calloc(1, sizeof *s);
    if (!s)
        return H_->status_new(SY_ERR_OUT_OF_MEMORY, "lpai: out of memory");
    s->hw = 4;
    s->real_time = true;
    s->scratch_type = 2;
    s->persistent_type = 0;
    s->alignment = 256;
    s->fps = 1;
    s->ftrt = 10;
    s->macs_pc = 256;
    s->clock_hz = 500e6;
    const char *v;
    uint64_t u;
    double f;
    sy_status *st = NULL;
    if (o && (v = H_->option_get(o, "hw_version"))) {
        if (!strcasecmp(v, "v4"))
            s->hw = 4;
        else if (!strcasecmp(v, "v5"))
            s->hw = 5;
        else if (!strcasecmp(v, "v6"))
            s->hw = 6;
        else
            st = CFG_ERR("[provider.lpai] hw_version = '%s': expected v4, v5 or v6", v);
    }
    if (!st && o && (v = H_->option_get(o, "simulate")) && !emu_parse_bool(v, &s->simulate))
        st = CFG_ERR("[provider.lpai] simulate = '%s': expected true or false", v);
    if (!st && o && (v = H_->option_get(o, "scratch_mem_type")) && (s->scratch_type = mem_type(v)) < 0)
        st = CFG_ERR("[provider.lpai] scratch_mem_type = '%s': expected ddr, llc or tcm", v);
    if (!st && o && (v = H_->option_get(o, "persistent_mem_type")) && (s->persistent_type = mem_type(v)) < 0)
        st = CFG_ERR("[provider.lpai] persistent_mem_type = '%s': expected ddr, llc or tcm", v);
    if (!st && o && (v = H_->option_get(o, "mem_alignment"))) {
        if (!emu_parse_u64(v, 16, 4096, &u) || (u & (u - 1)))
            st = CFG_ERR("[provider.lpai] mem_alignment = '%s': expected a power of two from 16 to 4096", v);
        s->alignment = u;
    }
    if (!st && o && (v = H_->option_get(o, "fps"))) {
        if (!emu_parse_f64(v, 1, 1000, &f))
            st = CFG_ERR("[provider.lpai] fps = '%s': expected 1 to 1000", v);
        s->fps = f;
    }
    if (!st && o && (v = H_->option_get(o, "ftrt_ratio"))) {
        if (!emu_parse_f64(v, 1, 100, &f))
            st = CFG_ERR("[provider.lpai] ftrt_ratio = '%s': expected 1 to 100", v);
        s->ftrt = f;
    }
    if (!st && o && (v = H_->option_get(o, "client_type"))) {
        if (!strcasecmp(v, "real_time"))
            s->real_time = true;
        else if (!strcasecmp(v, "non_real_time"))
            s->real_time = false;
        else
            st = CFG_ERR("[provider.lpai] client_type = '%s': expected real_time or non_real_time", v);
    }
    if (!st && o && (v = H_->option_get(o, "macs_per_cycle"))) {
        if (!emu_parse_f64(v, 1, 65536, &f))
            st = CFG_ERR("[provider.lpai] macs_per_cycle = '%s': expected 1 to 65536", v);
        s->macs_pc = f;
    }
    if (!st && o && (v = H_->option_get(o, "clock_mhz"))) {
        if (!emu_parse_f64(v, 1, 5000, &f))
            st = CFG_ERR("[provider.lpai] clock_mhz = '%s': expected 1 to 5000", v);
        s->clock_hz = f * 1e6;
    }
    if (st) {
        free(s);
        return st;
    }
    snprintf(s->compat, sizeof s->compat, "lpai-emulator/0.1.0 enpu=v%d simulate=%d scratch=%s persistent=%s align=%llu",
             s->hw, s->simulate, mem_types[s->scratch_type], mem_types[s->persistent_type],
             (unsigned long long)s->alignment);
    emu_board_init(&s->board);
    emu_live_set(&live, s);
    *state = s;
    return NULL;
}

/* The plugin's state in one environment (ABI 1.2): its provider definition
 * and memory domain, whose alignment is that environment's mem_alignment
 * (the core reads the domain again after create). */
/* ---- extension "qnn_emu.lpai" v1: report and client memory ---------------- */
typedef struct lpai_ext {
    uint32_t struct_size;
    size_t (*report)(char *buf, size_t len);
    const char *(*compat)(void);
    /* persistent_mem_size of the latest finalize (scratch_mem_size is the
     * lpai_scratch arena of the session's memory report) */
    uint64_t (*persistent_size)(void);
    /* Client-supplied buffers (QnnLpaiGraph_Mem_t): NULL when both fit the
     * sizes and the alignment; else a message naming what is wrong, written
     * into why. */
    bool (*check_client_mem)(uint64_t scratch_need, uint64_t scratch_size, uint64_t scratch_addr,
                             uint64_t persistent_size, uint64_t persistent_addr, char *why, size_t why_len);
    /* Appended (struct_size tells): the same four for the environment the
     * table was fetched from; `self` is that table (each environment
     * registers its own, kept in the plugin's state). */
    size_t (*report_env)(const struct lpai_ext *self, char *buf, size_t len);
    const char *(*compat_env)(const struct lpai_ext *self);
    uint64_t (*persistent_size_env)(const struct lpai_ext *self);
    bool (*check_client_mem_env)(const struct lpai_ext *self, uint64_t scratch_need, uint64_t scratch_size,
                                 uint64_t scratch_addr, uint64_t persistent_size, uint64_t persistent_addr, char *why,
                                 size_t why_len);
} lpai_ext;

typedef struct lpai_env {
    lpai_ext ext; /* first: `self` of the table is the state */
    sy_provider_def def;
    sy_memory_domain_def domain;
    lpai_state *s; /* this environment's provider (create_env) */
} lpai_env;

static sy_status *lpai_create_env(void *plugin_state, const sy_options *o, void **state)
{
    SY_TRY(lpai_create(o, state));
    lpai_env *e = plugin_state;
    e->s = *state;
    e->s->env = e;
    e->domain.alignment = (uint32_t)e->s->alignment;
    return NULL;
}

static void lpai_destroy(void *state)
{
    lpai_state *s = state;
    if (s->env)
        s->env->s = NULL;
    emu_live_drop(&live, s);
    emu_board_free(&s->board);
    free(s);
}

static bool lpai_act(sy_dtype dt) { return dt == SY_DT_UINT8 || dt == SY_DT_INT8 || dt == SY_DT_UINT16; }

/* §5.2 dtypes of a switchyard.quant node: activations u8/s8/u16, weights
 * s8/u8, per-tensor encodings (the 2.25 supplement lists no axis encodings) */
static bool lpai_qcheck(const sy_node *n, const emu_qinfo *qi, sy_claim *c)
{
    const char *op = H_->node_op(n);
    if (!lpai_act(qi->act) || !lpai_act(qi->out))
        return emu_decline(c, SY_REASON_DTYPE, "LPAI-DTYPE: %s activations %s -> %s; LPAI takes u8, s8, u16", op,
                           sy_dt_name(qi->act), sy_dt_name(qi->out)),
               false;
    if (emu_qbinary(op) && !lpai_act(H_->node_input(n, 3)->dtype))
        return emu_decline(c, SY_REASON_DTYPE, "LPAI-DTYPE: %s operand B is %s; LPAI takes u8, s8, u16", op,
                           sy_dt_name(H_->node_input(n, 3)->dtype)),
               false;
    if (qi->wt != SY_DT_UNDEFINED && qi->wt != SY_DT_INT8 && qi->wt != SY_DT_UINT8)
        return emu_decline(c, SY_REASON_DTYPE, "LPAI-DTYPE: %s weights are %s; LPAI takes s8/u8 weights", op,
                           sy_dt_name(qi->wt)),
               false;
    if (qi->w_per_axis)
        return emu_decline(c, SY_REASON_DTYPE,
                           "LPAI-QAXIS: per-axis weight encodings are not in the LPAI op tables (per-tensor only)"),
               false;
    if (!qi->params_static)
        return emu_decline(c, SY_REASON_DTYPE,
                           "LPAI-QSTATIC: %s weights, bias and encodings must be static (fp32 scales)", op),
               false;
    if (!strcmp(op, "QMatMul") && sy_attr_int_or(H_, n, "transB", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "LPAI-MATMUL: no transpose (QMatMul transB = 1)"), false;
    if (!strcmp(op, "QMaxPool") && sy_attr_int_or(H_, n, "global", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "LPAI-POOL: global QMaxPool is not emulated"), false;
    return true;
}

/* qti_aisw QStatefulGRU / QStatefulLSTM (plugins/qti_aisw/qsrnn.h), LPAI's
 * Gru / Lstm on codes: X, W, R, initial_h, initial_c and the outputs s8/u8
 * (LPAI-RNN), per-tensor static encodings (the layout is QRNN's: scale and
 * zero point after each code tensor; the LSTM adds C's encoding, initial_c
 * and P from 17 on) */
static bool lpai_qsrnn_check(const sy_node *n, const char *op, sy_claim *c)
{
    static const uint32_t codes[] = {0, 3, 6, 13, 19};
    uint32_t ni = H_->node_num_inputs(n), no = H_->node_num_outputs(n);
    for (size_t k = 0; k < sizeof codes / sizeof *codes; k++) {
        const sy_tensor *t = codes[k] < ni ? H_->node_input(n, codes[k]) : NULL;
        if (t && t->dtype != SY_DT_INT8 && t->dtype != SY_DT_UINT8)
            return emu_decline(c, SY_REASON_DTYPE, "LPAI-RNN: Gru/Lstm take s8/u8 only (%s input %u is %s)", op,
                               codes[k], sy_dt_name(t->dtype)),
                   false;
    }
    for (uint32_t o = 0; o < no; o++) {
        const sy_tensor *y = H_->node_output(n, o);
        if (y && y->dtype != SY_DT_INT8 && y->dtype != SY_DT_UINT8)
            return emu_decline(c, SY_REASON_DTYPE, "LPAI-RNN: Gru/Lstm take s8/u8 only (%s output %u is %s)", op, o,
                               sy_dt_name(y->dtype)),
                   false;
    }
    for (uint32_t i = 1; i < ni; i++) { /* all but X, sequence_lens, initial_h/c and reset are constants */
        const sy_tensor *t = H_->node_input(n, i);
        if (t && i != 12 && i != 13 && i != 16 && i != 19 && !t->data)
            return emu_decline(c, SY_REASON_DTYPE, "LPAI-QSTATIC: %s weights, bias and encodings must be static (input %u)",
                               op, i),
                   false;
    }
    for (uint32_t i = 4; i <= 7 && i < ni; i += 3) { /* w_scale, r_scale */
        const sy_tensor *t = H_->node_input(n, i);
        if (t && sy_tensor_numel(t) > 1)
            return emu_decline(c, SY_REASON_DTYPE,
                               "LPAI-QAXIS: per-axis weight encodings are not in the LPAI op tables (per-tensor only)"),
                   false;
    }
    return true;
}

static void lpai_check(void *state, const sy_node *n, sy_claim *c)
{
    lpai_state *s = state;
    /* this session's records; their sum is its persistent memory (weights
     * and state of the nodes taken), started again by a re-plan */
    emu_recs *rs = emu_session_recs(n);
    emu_board_new_pass(&s->board, rs, n);
    if (emu_is_qio(n)) /* the kernel's own decline names the rule */
        return emu_decline(c, SY_REASON_NO_KERNEL, "no lpai kernel for %s", H_->node_op(n));
    emu_qinfo qi;
    bool quant = emu_qdescribe(n, &qi);
    const char *op = emu_qbase_op(H_->node_op(n)); /* QConv is LPAI's Conv2d, ... */
    const char *dom = H_->node_domain ? H_->node_domain(n) : "";
    const char *qop = op; /* the integer stateful RNNs are LPAI's StatefulGRU / StatefulLSTM on s8/u8 */
    const bool qsrnn = dom && !strcmp(dom, "qti_aisw") && (!strcmp(op, "QStatefulGRU") || !strcmp(op, "QStatefulLSTM"));
    if (qsrnn) {
        op = op + 1;
        quant = true;
    }
    bool known = false;
    for (int i = 0; lpai_ops[i]; i++)
        if (!strcmp(lpai_ops[i], op))
            known = true;
    if (!known)
        return emu_decline(c, SY_REASON_OP_UNSUPPORTED, "LPAI-OPS: %s is not one of the 46 LPAI ops", op);
    if (s->hw < 5 && (!strcmp(op, "Buffer") || !strcmp(op, "StatefulGRU") || !strcmp(op, "StatefulLSTM")))
        return emu_decline(c, SY_REASON_POLICY, "LPAI-VERSION: %s needs eNPU v5 or later (hw_version = v%d)", op,
                           s->hw);
    if (s->hw == 4 && !s->simulate)
        return emu_decline(c, SY_REASON_POLICY,
                           "LPAI-V4: eNPU v4 graphs are prepare-only in QNN (executed by the LPAI SDK); set "
                           "hw_version = v5/v6 or simulate = true");
    uint32_t ni = H_->node_num_inputs(n), no = H_->node_num_outputs(n);
    if (quant && !qsrnn && !lpai_qcheck(n, &qi, c))
        return;
    if (qsrnn && !lpai_qsrnn_check(n, qop, c))
        return;
    for (uint32_t i = 0; i < ni + no; i++) {
        const sy_tensor *t = i < ni ? H_->node_input(n, i) : H_->node_output(n, i - ni);
        if (!t)
            continue;
        if (sy_dt_is_float(t->dtype) && !quant) /* a quantized node's float inputs are its encodings */
            return emu_decline(c, SY_REASON_DTYPE,
                               "LPAI-DTYPE: %s %u is %s; LPAI has no float tensors (activations u8/s8/u16, weights "
                               "s8/u8; quantize the model)",
                               i < ni ? "input" : "output", i < ni ? i : i - ni, sy_dt_name(t->dtype));
        if (t->rank > 4)
            return emu_decline(c, SY_REASON_RANK, "LPAI-RANK: rank must be <= 4, got %d", (int)t->rank);
    }
    if ((!strcmp(op, "Gemm") || (quant && !strcmp(op, "MatMul"))) && H_->node_input(n, 0)->rank > 2)
        return emu_decline(c, SY_REASON_RANK, "LPAI-FC: FullyConnected rank must be <= 2");
    if (!strcmp(op, "MatMul") && (sy_attr_int_or(H_, n, "transA", 0) || sy_attr_int_or(H_, n, "transB", 0)))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "LPAI-MATMUL: no transpose");
    if ((!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) && sy_attr_int_or(H_, n, "ceil_mode", 0))
        return emu_decline(c, SY_REASON_ATTRIBUTE, "LPAI-POOL: FLOOR rounding only (ceil_mode must be 0)");
    if (!strcmp(op, "Pad")) {
        char mode[16];
        sy_attr_string_or(H_, n, "mode", "constant", mode, sizeof mode);
        if (strcmp(mode, "constant") && strcmp(mode, "edge"))
            return emu_decline(c, SY_REASON_ATTRIBUTE, "LPAI-PAD: CONSTANT or EDGE only, got %s", mode);
    }
    if ((!strcmp(op, "GRU") || !strcmp(op, "LSTM")) && H_->node_input(n, 0)->dtype == SY_DT_UINT16)
        return emu_decline(c, SY_REASON_DTYPE, "LPAI-RNN: Gru/Lstm take s8/u8 only");
    if (!emu_has_kernel(n)) /* asked for a rule only; nothing to take or record */
        return emu_decline(c, SY_REASON_NO_KERNEL, "no lpai kernel for %s", op);
    /* persistent memory: constant inputs (weights) and state of stateful ops */
    for (uint32_t i = 0; i < ni; i++) {
        const sy_tensor *t = H_->node_input(n, i);
        if (t && t->data)
            emu_board_add(&s->board, rs, t->nbytes);
    }
    if (!strcmp(op, "Buffer"))
        emu_board_add(&s->board, rs, H_->node_output(n, 0)->nbytes);
    for (uint32_t o = 1; qsrnn && o < no; o++) /* the carried states: Y_h's (and Y_c's) codes */
        if (H_->node_output(n, o))
            emu_board_add(&s->board, rs, H_->node_output(n, o)->nbytes);
    emu_work w;
    emu_node_work(n, 1, &w);
    const char *unit;
    int64_t cyc = lpai_cycles(s, n, &w, &unit);
    /* scratch traffic of the node (activations in + out) in its memory type */
    emu_board_record(&s->board, rs, n, mem_types[s->scratch_type], (uint64_t)(w.bytes_in + w.bytes_out), cyc, unit);
    c->take = true;
    c->reason = SY_REASON_TAKEN;
}

static bool lpai_can_copy(void *state, const char *src, const char *dst)
{
    (void)state;
    return emu_can_copy_host(lpai_domain.name, src, dst);
}

static sy_status *lpai_copy(void *state, const sy_tensor *src, sy_tensor *dst)
{
    (void)state;
    return emu_copy(src, dst, false);
}

/* the report of one provider state (NULL: none) */
static size_t report_of(void *state, char *buf, size_t len)
{
    lpai_state *s = state;
    size_t k = 0;
    if (!s) {
        emu_out(buf, len, &k, "lpai: no provider state\n");
        return k;
    }
    emu_out(buf, len, &k, "lpai EMULATOR %s\n", s->compat);
    const emu_recs *rs = emu_board_lock(&s->board);
    double total = emu_out_recs(buf, len, &k, rs, "scratch");
    double us = total / s->clock_hz * 1e6, budget = 1e6 / s->fps;
    emu_out(buf, len, &k,
            "  nodes taken: %zu; persistent_mem_size %llu B (%s); modelled latency: %.0f cycles = %.1f us at %.0f "
            "MHz; real-time budget 1/fps = %.0f us (ftrt %.0fx): %s\n",
            rs->n, (unsigned long long)rs->sum, mem_types[s->persistent_type], total, us,
            s->clock_hz / 1e6, budget, s->ftrt, us <= budget ? "met" : "DEADLINE MISS");
    emu_board_unlock(&s->board);
    return k;
}

static size_t lpai_report(char *buf, size_t len) { return emu_live_report(&live, report_of, buf, len); }

static const char *lpai_compat(void *state) { return ((lpai_state *)state)->compat; }
static const char *lpai_compat_ext(void) { return emu_live_compat(&live, lpai_compat); }

/* persistent_mem_size of the latest session's placement */
static uint64_t persistent_of(lpai_state *s)
{
    uint64_t v = s ? emu_board_lock(&s->board)->sum : 0;
    if (s)
        emu_board_unlock(&s->board);
    return v;
}

static uint64_t lpai_persistent(void)
{
    uint64_t v = persistent_of(emu_live_lock(&live));
    emu_live_unlock(&live);
    return v;
}

static bool check_mem_of(lpai_state *s, uint64_t scratch_need, uint64_t scratch_size, uint64_t scratch_addr,
                         uint64_t persistent_size, uint64_t persistent_addr, char *why, size_t why_len)
{
    uint64_t al = s ? s->alignment : 256, pneed = persistent_of(s);
    if (scratch_size < scratch_need)
        return snprintf(why, why_len, "LPAI-MEM: scratch buffer of %llu B is smaller than scratch_mem_size %llu B",
                        (unsigned long long)scratch_size, (unsigned long long)scratch_need),
               false;
    if (scratch_addr % al)
        return snprintf(why, why_len, "LPAI-MEM: scratch buffer address 0x%llx is not %llu-byte aligned",
                        (unsigned long long)scratch_addr, (unsigned long long)al),
               false;
    if (persistent_size < pneed)
        return snprintf(why, why_len,
                        "LPAI-MEM: persistent buffer of %llu B is smaller than persistent_mem_size %llu B",
                        (unsigned long long)persistent_size, (unsigned long long)pneed),
               false;
    if (persistent_addr % al)
        return snprintf(why, why_len, "LPAI-MEM: persistent buffer address 0x%llx is not %llu-byte aligned",
                        (unsigned long long)persistent_addr, (unsigned long long)al),
               false;
    return true;
}

static bool lpai_check_mem(uint64_t scratch_need, uint64_t scratch_size, uint64_t scratch_addr,
                           uint64_t persistent_size, uint64_t persistent_addr, char *why, size_t why_len)
{
    bool ok = check_mem_of(emu_live_lock(&live), scratch_need, scratch_size, scratch_addr, persistent_size, persistent_addr, why,
                           why_len);
    emu_live_unlock(&live);
    return ok;
}

static lpai_state *env_of(const lpai_ext *self) { return ((const lpai_env *)self)->s; }
static size_t lpai_report_env(const lpai_ext *self, char *buf, size_t len) { return report_of(env_of(self), buf, len); }
static const char *lpai_compat_env(const lpai_ext *self) { return env_of(self) ? env_of(self)->compat : ""; }
static uint64_t lpai_persistent_env(const lpai_ext *self) { return persistent_of(env_of(self)); }
static bool lpai_check_mem_env(const lpai_ext *self, uint64_t scratch_need, uint64_t scratch_size,
                               uint64_t scratch_addr, uint64_t persistent_size, uint64_t persistent_addr, char *why,
                               size_t why_len)
{
    return check_mem_of(env_of(self), scratch_need, scratch_size, scratch_addr, persistent_size, persistent_addr, why,
                        why_len);
}

static sy_status *lpai_session_begin(void *state, void **ss) { return emu_board_begin(&((lpai_state *)state)->board, ss); }
static void lpai_session_end(void *state, void *ss) { emu_board_end(&((lpai_state *)state)->board, ss); }

static sy_status *lpai_group(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    (void)state;
    return emu_group(nodes, n, group_of);
}

static const lpai_ext ext = {sizeof(lpai_ext),  lpai_report,     lpai_compat_ext,     lpai_persistent,
                             lpai_check_mem,    lpai_report_env, lpai_compat_env, lpai_persistent_env,
                             lpai_check_mem_env};

static const sy_provider_def provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "lpai",
    .description = "EMULATOR of Qualcomm LPAI (low-power eNPU, QNN LPAI backend): quantized-only, 46-op table, "
                   "scratch/persistent memory, real-time budget; no hardware",
    .flags = SY_PROVIDER_EMULATOR,
    .domain = &lpai_domain,
    .option_keys = option_keys,
    .create = lpai_create,
    .destroy = lpai_destroy,
    .check_node = lpai_check,
    .can_copy = lpai_can_copy,
    .copy = lpai_copy,
    .compat = lpai_compat,
    .group = lpai_group,
    .compile = emu_compile,
    .run_compiled = emu_run_compiled,
    .release_compiled = emu_release_compiled,
    .serialize = emu_serialize,
    .deserialize = emu_deserialize,
    .session_begin = lpai_session_begin,
    .session_end = lpai_session_end,
};

static void lpai_env_release(void *state) { free(state); }

static sy_status *lpai_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H_ = host;
    lpai_env *e = calloc(1, sizeof *e);
    if (!e)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "lpai: out of memory");
    e->ext = ext;
    e->domain = lpai_domain;
    e->def = provider;
    e->def.domain = &e->domain;
    e->def.create = NULL;
    e->def.create_env = lpai_create_env;
    sy_status *st = host->plugin_set_state(p, e, lpai_env_release);
    if (st) {
        free(e);
        return st;
    }
    return emu_plugin_init(host, p, &target_rt, &target, "LPAI-QIO", &e->ext, &e->def);
}

static void lpai_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "lpai",
    .version = "0.1.0",
    .description = "lpai provider: an EMULATOR of the Qualcomm LPAI eNPU (no hardware)",
    .kinds = SY_PLUGIN_KIND_PROVIDER,
    .option_keys = NULL,
    .init = lpai_init,
    .fini = lpai_fini,
};

SY_PLUGIN_DEFINE(desc)
