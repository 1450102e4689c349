/*
 * riscv_mcu: the HiSpark RISC-V MCU targets (ws63, Hi3066-class) as a
 * provider, MindSpore Lite Micro style: the MCU cannot dlopen, so this
 * plugin validates and plans on the host, runs the same portable kernels
 * there for checking (plugin_sdk/kernels), and `switchyard
 * codegen` writes a standalone C99 package for the chip from a recorded run
 * (switchyard/ext/sy_mcu_codegen.h, mcu_emit.c).
 *
 * [provider.riscv_mcu]
 *   target       = ws63 | hi3066   required: without it the provider takes
 *                                  no node (it never changes a default run)
 *   sram_budget  = BYTES (K/KB, M/MB suffixes)  capacity of the "mcu_sram"
 *                  domain, the single static workspace the core plans;
 *                  default ws63 50% of 606 KB (the radio stacks and LiteOS
 *                  share it), hi3066 48 KB of 64 KB (stack, .data, .bss)
 *   flash_budget = BYTES           weights (const arrays) must fit; default
 *                                  the chip's flash (4 MB, 512 KB)
 *   stack_bytes  = BYTES           the stack a codegen package reserves
 *                  (its linker script's __stack_size; the test main paints
 *                  it and prints what sy_model_run used); default 2 KB,
 *                  at least 512, a multiple of 16; sram_budget + stack_bytes
 *                  must fit the chip's SRAM
 *   rules        = seed | tflm     seed (default): ops-mcu.md Table A and
 *                  its conversion-time rejections as the seed states them
 *                  (a fused RELU6 as the row + #56 Relu6, mcu_rules.c);
 *                  tflm: also what TFLite Micro's reference kernels accept
 *                  beyond them (int8 depth multiplier > 1 over several
 *                  channels, UNIDIRECTIONAL_SEQUENCE_LSTM), which the shared
 *                  TFLite Micro models use
 *
 * fp32 and int8 only (no fp16). Kernels: CONV_2D, DEPTHWISE_CONV_2D,
 * FULLY_CONNECTED, TRANSPOSE_CONV, BATCH_MATMUL, AVERAGE_POOL_2D,
 * MAX_POOL_2D, SOFTMAX (fp32, int8), CONV_3D (fp32, int8; mcu_nn.c with ONNX
 * ConvTranspose, 5-D Conv, batched MatMul, Gemm transA, and ONNX LSTM and
 * GRU and RNN in fp32: mcu_lstm.c, mcu_gru.c, mcu_rnn.c),
 * UNIDIRECTIONAL_SEQUENCE_LSTM (fp32; int8: TFLite Micro's integer LSTM), RESHAPE,
 * SQUEEZE, EXPAND_DIMS, ADD, SUB, MUL (fp32, int8, broadcasting), TRANSPOSE; int8 RELU, RELU6, TANH, LOGISTIC, LEAKY_RELU,
 * HARD_SWISH, ELU, GELU, NEG, ABS, CEIL, COS, EXP, FLOOR, LOG, ROUND, SIN,
 * SQUARE as a 256-entry table of output codes built like cpu_ref's
 * (tfl_unary8.h: TFLite's integer kernels and LUTPopulate tables); the
 * data-movement, index, comparison, fp32 one-input and (de)quantization ops
 * of mcu_ops.c (with PRELU, POW, int8 DIV, int8 SQRT/RSQRT tables that
 * refuse negative inputs, LOG_SOFTMAX); the reductions, ARG_MAX/MIN, CUMSUM,
 * TOPK_V2, L2_NORMALIZATION and their ONNX rows (mcu_reduce.c, tflk_reduce.c);
 * the shape, normalization and resize rows of mcu_shape.c (TFLite and ONNX),
 * with ONNX Einsum and UNIQUE / ONNX Unique (a data-dependent output length:
 * packaged at its bound when no node reads the outputs, ABI 1.6);
 * the ONNX path (mcu_quant.c, plugin_sdk/kernels): switchyard.quant QConv,
 * QMaxPool, QAveragePool, QMatMul, QAdd, QSub, QMul, QUnary (a table),
 * QSoftmax, QRNN (int8, NCHW) and ONNX QuantizeLinear, DequantizeLinear,
 * Reshape, QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger; the fp32
 * ONNX rows of mcu_onnx.c.
 */
#include "mcu.h"
#include "mcu_train.h"

#include <switchyard/sy_app_types.h> /* sy_session_options: the extension creates the captured session */

#include <ctype.h>
#include <pthread.h>
#include <stddef.h>
#include <strings.h>

const sy_host_api *mcu_H; /* process-wide: the same host table in every environment */
#define H mcu_H

static const mcu_chip chips[] = {
    {"ws63", "rv32imfc", 240, 606u * 1024u, 4u * 1024u * 1024u, 303u * 1024u},
    {"hi3066", "rv32imfc", 0, 64u * 1024u, 512u * 1024u, 48u * 1024u},
};

static const sy_memory_domain_def mcu_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "mcu_sram",
    .alignment = 16,
    .capacity = 0,
    .host_visible = true,
};

/* ---- options -------------------------------------------------------------- */

static bool parse_bytes(const char *v, uint64_t *out)
{
    char *end = NULL;
    if (!v || !isdigit((unsigned char)*v))
        return false;
    unsigned long long n = strtoull(v, &end, 10);
    while (*end == ' ')
        end++;
    uint64_t mul = 1;
    if (!strcasecmp(end, "k") || !strcasecmp(end, "kb") || !strcasecmp(end, "kib"))
        mul = 1024;
    else if (!strcasecmp(end, "m") || !strcasecmp(end, "mb") || !strcasecmp(end, "mib"))
        mul = 1024 * 1024;
    else if (*end)
        return false;
    if (n > UINT64_MAX / mul)
        return false;
    *out = n * mul;
    return true;
}

static sy_status *mcu_create(const sy_options *opts, void **state)
{
    mcu_cfg *c = calloc(1, sizeof *c);
    if (!c)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "riscv_mcu: out of memory");
    const char *v = opts ? H->option_get(opts, "target") : NULL;
    sy_status *st = NULL;
    if (v) {
        for (size_t i = 0; i < SY_COUNT_OF(chips); i++)
            if (!strcmp(v, chips[i].name))
                c->chip = &chips[i];
        if (!c->chip)
            st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.riscv_mcu] target = '%s': expected ws63 or hi3066", v);
    }
    if (c->chip) {
        c->sram_budget = c->chip->default_sram_budget;
        c->flash_budget = c->chip->flash;
    }
    if (!st && opts && (v = H->option_get(opts, "sram_budget"))) {
        if (!parse_bytes(v, &c->sram_budget) || !c->sram_budget)
            st = H->status_new(SY_ERR_INVALID_CONFIG,
                               "[provider.riscv_mcu] sram_budget = '%s': expected a positive byte count (K/M suffix allowed)", v);
        else if (c->chip && c->sram_budget > c->chip->sram)
            st = H->status_new(SY_ERR_INVALID_CONFIG,
                               "[provider.riscv_mcu] sram_budget = %llu bytes exceeds %s's SRAM of %llu bytes",
                               (unsigned long long)c->sram_budget, c->chip->name, (unsigned long long)c->chip->sram);
    }
    if (!st && opts && (v = H->option_get(opts, "flash_budget"))) {
        if (!parse_bytes(v, &c->flash_budget) || !c->flash_budget)
            st = H->status_new(SY_ERR_INVALID_CONFIG,
                               "[provider.riscv_mcu] flash_budget = '%s': expected a positive byte count (K/M suffix allowed)", v);
        else if (c->chip && c->flash_budget > c->chip->flash)
            st = H->status_new(SY_ERR_INVALID_CONFIG,
                               "[provider.riscv_mcu] flash_budget = %llu bytes exceeds %s's flash of %llu bytes",
                               (unsigned long long)c->flash_budget, c->chip->name, (unsigned long long)c->chip->flash);
    }
    c->stack_bytes = MCU_DEFAULT_STACK;
    if (!st && opts && (v = H->option_get(opts, "stack_bytes"))) {
        if (!parse_bytes(v, &c->stack_bytes) || c->stack_bytes < 512 || c->stack_bytes % 16)
            st = H->status_new(SY_ERR_INVALID_CONFIG,
                               "[provider.riscv_mcu] stack_bytes = '%s': expected a byte count of at least 512, a "
                               "multiple of 16 (the RISC-V stack alignment)", v);
    }
    if (!st && c->chip && c->sram_budget + c->stack_bytes > c->chip->sram)
        st = H->status_new(SY_ERR_INVALID_CONFIG,
                           "[provider.riscv_mcu] sram_budget %llu + stack_bytes %llu exceed %s's SRAM of %llu bytes",
                           (unsigned long long)c->sram_budget, (unsigned long long)c->stack_bytes, c->chip->name,
                           (unsigned long long)c->chip->sram);
    if (!st && opts && (v = H->option_get(opts, "rules"))) {
        if (!strcmp(v, "seed"))
            c->rules = MCU_RULES_SEED;
        else if (!strcmp(v, "tflm"))
            c->rules = MCU_RULES_TFLM;
        else
            st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.riscv_mcu] rules = '%s': expected seed or tflm", v);
    }
    if (!st && !c->chip && opts &&
        (H->option_get(opts, "sram_budget") || H->option_get(opts, "flash_budget") || H->option_get(opts, "rules") ||
         H->option_get(opts, "stack_bytes")))
        st = H->status_new(SY_ERR_INVALID_CONFIG, "[provider.riscv_mcu]: budgets and rules need target = ws63 or hi3066");
    if (st) {
        free(c);
        return st;
    }
    *state = c;
    return NULL;
}

/* The plugin's state in one environment (ABI 1.2): its provider definition
 * and memory domain, whose capacity is that environment's SRAM budget (the
 * core reads the domain again after create), and its codegen extension
 * table, whose address is how an extension call finds this environment
 * (sy_mcu_codegen.h: `self`). */
typedef struct mcu_env {
    sy_provider_def def;
    sy_memory_domain_def domain;
    sy_mcu_codegen_ext ext;
    mcu_cfg *cfg; /* the provider's state here; NULL before create_env and after destroy */
} mcu_env;

static sy_status *mcu_create_env(void *plugin_state, const sy_options *opts, void **state)
{
    SY_TRY(mcu_create(opts, state));
    mcu_cfg *c = *state;
    mcu_env *e = plugin_state;
    e->domain.capacity = c->chip ? c->sram_budget : 0;
    c->env = e;
    e->cfg = c;
    return NULL;
}

static void mcu_destroy(void *state)
{
    mcu_cfg *c = state;
    if (c && c->env)
        c->env->cfg = NULL;
    free(c);
}

/* A capture being made by the extension's session_create on this thread,
 * for the session_begin that the core calls inside sy_session_create on
 * the same thread (provider_session.c: before placement). Per thread, so
 * a session created at the same time on another thread, in this
 * environment or another, never takes it. A pthread key rather than
 * _Thread_local: this module is dlclosed with its last environment, and
 * the ELF TLS block of an unloaded module leaves a stale entry that
 * LeakSanitizer's thread scan faults on at exit (sdk.template under ASan).
 * The key is made once per load of the module and deleted when it unloads. */
static pthread_key_t pending_key;
static pthread_once_t pending_once = PTHREAD_ONCE_INIT;
static bool pending_key_ok;

static void pending_key_make(void) { pending_key_ok = pthread_key_create(&pending_key, NULL) == 0; }

__attribute__((destructor)) static void pending_key_drop(void)
{
    if (pending_key_ok)
        pthread_key_delete(pending_key);
}

static mcu_capture *pending_get(void)
{
    pthread_once(&pending_once, pending_key_make);
    return pending_key_ok ? pthread_getspecific(pending_key) : NULL;
}

static bool pending_set(mcu_capture *cap)
{
    pthread_once(&pending_once, pending_key_make);
    return pending_key_ok && pthread_setspecific(pending_key, cap) == 0;
}

static sy_status *mcu_session_begin(void *state, void **session_state)
{
    const mcu_cfg *c = state;
    mcu_sess *ss = calloc(1, sizeof *ss);
    if (!ss)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "riscv_mcu: out of memory");
    ss->cfg = c;
    mcu_capture *cap = pending_get();
    /* only the session of the environment the capture was asked for */
    if (cap && !cap->sess && cap->env && cap->env == c->env) {
        ss->cap = cap;
        cap->sess = ss;
        pending_set(NULL);
    }
    *session_state = ss;
    return NULL;
}

static void mcu_session_end(void *state, void *session_state)
{
    (void)state;
    mcu_sess *ss = session_state;
    if (!ss)
        return;
    if (ss->cap)
        ss->cap->sess = NULL; /* the capture outlives its session: capture_emit refuses then */
    free(ss);
}

static void mcu_check(void *state, const sy_node *node, sy_claim *claim)
{
    mcu_check_node(state, node, claim);
}

static const char *const provider_keys[] = {"target", "sram_budget", "flash_budget", "stack_bytes", "rules", NULL};

static const sy_provider_def mcu_provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "riscv_mcu",
    .description = "HiSpark RISC-V MCU (ws63, hi3066): host check of the portable TFLite kernels, one static "
                   "workspace in mcu_sram, C99 packages via switchyard codegen",
    .flags = SY_PROVIDER_EMULATOR,
    .domain = &mcu_domain,
    .option_keys = provider_keys,
    .create = mcu_create,
    .destroy = mcu_destroy,
    .check_node = mcu_check,
    .session_begin = mcu_session_begin,
    .session_end = mcu_session_end,
};

/* ---- kernels ---------------------------------------------------------------- */

static void node_release(void *p)
{
    mcu_node *k = p;
    if (!k)
        return;
    tfl_params_free(&k->o);
    if (k->kind == MK_QRNN)
        qrnn_params_free(&k->u.qrnn);
    free(k->q_rq);
    free(k->q_bias);
    free(k->q_zp);
    free(k->own);
    free(k);
}

static sy_status *prepare_impl(sy_node *n, void **state)
{
    mcu_node *k = calloc(1, sizeof *k);
    if (!k)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    *state = k;
    k->sess = H->node_provider_session(n);
    const char *op = H->node_op(n);
    snprintf(k->name, sizeof k->name, "%s", H->node_name(n) ? H->node_name(n) : "");
    snprintf(k->op, sizeof k->op, "%s", op);
    bool i8 = H->node_num_inputs(n) && H->node_input(n, 0) && H->node_input(n, 0)->dtype == SY_DT_INT8;
    for (uint32_t i = 0; i < H->node_num_inputs(n) && i < 32; i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (t && t->data)
            k->const_mask |= 1u << i;
    }
    if (mcu_quant_domain(n)) {
        SY_TRY(mcu_quant_prepare(n, k));
    } else if (mcu_reduce_has(n)) {
        SY_TRY(mcu_reduce_prepare(n, k)); /* reductions and axis ops of Tables A and B */
    } else if (mcu_nn_has(n)) {
        SY_TRY(mcu_nn_prepare(n, k)); /* transposed conv, batched matmul, 3-D conv (mcu_nn.c) */
    } else if (mcu_shape_has(n)) {
        SY_TRY(mcu_shape_prepare(n, k)); /* shape, normalization, resize (mcu_shape.c) */
    } else if (mcu_onnx_has(n)) {
        SY_TRY(mcu_onnx_prepare(n, k)); /* ONNX Table B ops on the shared kernels */
    } else if (!strcmp(op, "CONV_2D") || !strcmp(op, "DEPTHWISE_CONV_2D")) {
        k->kind = i8 ? MK_CONV_S8 : MK_CONV_F32;
        SY_TRY(tfl_build_conv(H, n, &k->u.conv, &k->o));
        k->n_mult = k->u.conv.per_channel ? k->u.conv.oc : 1;
    } else if (!strcmp(op, "FULLY_CONNECTED")) {
        k->kind = i8 ? MK_FC_S8 : MK_FC_F32;
        SY_TRY(tfl_build_fc(H, n, &k->u.fc, &k->o));
        k->n_mult = k->u.fc.per_channel ? k->u.fc.units : 1;
    } else if (!strcmp(op, "AVERAGE_POOL_2D") || !strcmp(op, "MAX_POOL_2D")) {
        k->kind = i8 ? MK_POOL_S8 : MK_POOL_F32;
        SY_TRY(tfl_build_pool(H, n, &k->u.pool));
    } else if (!strcmp(op, "SOFTMAX")) {
        k->kind = i8 ? MK_SOFTMAX_S8 : MK_SOFTMAX_F32;
        SY_TRY(tfl_build_softmax(H, n, &k->u.sm));
        if (i8 && !k->u.sm.fixed)
            H->node_set_scratch(n, (size_t)(k->u.sm.depth ? k->u.sm.depth : 1) * sizeof(float));
    } else if (!strcmp(op, "LOG_SOFTMAX")) {
        const sy_tensor *x = H->node_input(n, 0);
        if (i8) { /* TFLite's integer kernel: output 16/256, zero point 127 (mcu_rules.c checks) */
            k->kind = MK_LOGSM_S8;
            float xs;
            int32_t xz;
            if (!tfl_qparams(x, &xs, &xz))
                return H->status_new(SY_ERR_INVALID_ARGUMENT, "int8 LOG_SOFTMAX needs per-tensor quantization");
            SY_TRY(tfl_build_logsm8(H, xs, &k->u.lsm.p));
            k->u.lsm.depth = (int32_t)(x->rank ? x->dims[x->rank - 1] : 1);
            k->u.lsm.rows = k->u.lsm.depth ? (int32_t)(sy_tensor_numel(x) / k->u.lsm.depth) : 0;
        } else { /* the float rows of cpu_ref's tflite_nn (tflk_log_softmax_f32) */
            k->kind = MK_SOFTMAX_F32;
            SY_TRY(tfl_build_softmax(H, n, &k->u.sm));
            k->u.sm.beta = 1.0f;
            k->sm_log = 1;
        }
    } else if (!strcmp(op, "UNIDIRECTIONAL_SEQUENCE_LSTM") && i8) {
        k->kind = MK_LSTM8; /* TFLite Micro's integer LSTM */
        SY_TRY(tfl_build_lstm8(H, n, &k->u.lstm8));
        H->node_set_scratch(n, tflk_lstm8_scratch_bytes(&k->u.lstm8));
    } else if (!strcmp(op, "UNIDIRECTIONAL_SEQUENCE_LSTM")) {
        k->kind = MK_LSTM;
        SY_TRY(tfl_build_lstm(H, n, &k->u.lstm));
        H->node_set_scratch(n, tflk_lstm_scratch_floats(&k->u.lstm) * sizeof(float));
    } else if (!strcmp(op, "ADD") || !strcmp(op, "SUB") || !strcmp(op, "MUL")) {
        k->kind = i8 ? MK_BIN_S8 : MK_BIN_F32;
        SY_TRY(tfl_build_binary(H, n, &k->u.bin));
    } else if (!strcmp(op, "TRANSPOSE")) {
        k->kind = MK_TRANSPOSE;
        SY_TRY(tfl_build_transpose(H, n, &k->u.tr));
    } else if (i8 && tfl_unary_kind(op) >= 0) {
        /* the same table cpu_ref's tflite_math builds (tfl_unary8.h) */
        k->kind = MK_LUT_S8;
        tfl_un u = {.kind = tfl_unary_kind(op),
                    .alpha = sy_attr_float_or(H, n, "alpha", 0.0f),
                    .approx = sy_attr_int_or(H, n, "approximate", 0) != 0};
        SY_TRY(tfl_build_unary8(H, n, &u, &k->u.lut)); /* SQRT, RSQRT: min_valid refuses negative inputs */
        if (sy_tensor_numel(H->node_input(n, 0)) > INT32_MAX)
            return H->status_new(SY_ERR_UNSUPPORTED, "%s: more than 2^31 - 1 elements", op);
    } else if (mcu_ops_has(op, H->node_input(n, 0)->dtype)) {
        SY_TRY(mcu_ops_prepare(n, k)); /* data movement, fp32 one-input ops, comparisons (mcu_ops.c) */
    } else {
        k->kind = MK_COPY; /* RESHAPE SQUEEZE EXPAND_DIMS: a view */
    }
    return NULL;
}

TFL_PREPARE_GUARDED(mcu_prepare, prepare_impl, node_release)

static void record(mcu_capture *c, const mcu_node *k, const sy_kernel_io *io)
{
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 64;
        mcu_rec *g = realloc(c->recs, cap * sizeof *g);
        if (!g) {
            c->overflow = true;
            return;
        }
        c->recs = g;
        c->cap = cap;
    }
    mcu_rec *r = &c->recs[c->n++];
    memset(r, 0, sizeof *r);
    r->k = k;
    r->n_in = io->n_inputs < MCU_MAX_IO ? io->n_inputs : MCU_MAX_IO;
    r->n_out = io->n_outputs < MCU_MAX_IO ? io->n_outputs : MCU_MAX_IO;
    for (uint32_t i = 0; i < r->n_in; i++) {
        const sy_tensor *t = io->inputs[i];
        if (t)
            r->in[i] = (mcu_buf){t->data, t->nbytes, t->dtype, (k->const_mask >> i) & 1u, t->name, t->quant};
    }
    for (uint32_t i = 0; i < r->n_out; i++) {
        const sy_tensor *t = io->outputs[i];
        if (t)
            r->out[i] = (mcu_buf){t->data, t->nbytes, t->dtype, false, t->name, t->quant};
    }
    r->scratch = io->scratch;
    r->scratch_bytes = io->scratch_bytes;
}

static sy_status *mcu_run(void *state, const sy_kernel_io *io)
{
    const mcu_node *k = state;
    const sy_tensor *x = io->n_inputs ? io->inputs[0] : NULL; /* Constant has no input */
    const sy_tensor *w = io->n_inputs > 1 ? io->inputs[1] : NULL;
    const sy_tensor *b = io->n_inputs > 2 ? io->inputs[2] : NULL;
    sy_tensor *y = io->outputs[0];
    const void *bd = b ? b->data : NULL;
    /* the session's own capture: one thread runs a captured session */
    if (k->sess && k->sess->cap && k->sess->cap->on)
        record(k->sess->cap, k, io);
    if (mcu_is_reduce_kind(k->kind))
        return mcu_reduce_run(k, io);
    if (k->kind >= MK_QCONV) {
        return mcu_quant_run(k, io);
    }
    if (k->kind >= MK_RESIZE)
        return mcu_shape_run(k, io);
    if (k->kind >= MK_VIEW)
        return mcu_ops_run(k, io);
    if (k->kind >= MK_TCONV_S8 && k->kind <= MK_RNN_ONNX)
        return mcu_nn_run(k, io);
    switch (k->kind) {
    case MK_CONV_S8: tflk_conv_s8(&k->u.conv, x->data, w->data, bd, y->data); break;
    case MK_CONV_F32:
    case MK_POOL_F32: {
        /* ONNX (mcu_onnx.c): prepared weights, NCHW through the scratch */
        const float *wd = k->wt ? k->wt : w ? w->data : NULL, *bf = k->wt ? k->bt : bd;
        const float *xin = x->data;
        float *yout = y->data;
        if (k->nchw) {
            float *s = io->scratch;
            tflk_strided_copy(&k->pre, x->data, s);
            xin = s;
            yout = s + k->pre_floats;
        }
        if (k->kind == MK_CONV_F32)
            tflk_conv_f32(&k->u.conv, xin, wd, bf, yout);
        else
            tflk_pool_f32(&k->u.pool, xin, yout);
        if (k->nchw)
            tflk_strided_copy(&k->post, yout, y->data);
        break;
    }
    case MK_FC_S8: tflk_fc_s8(&k->u.fc, x->data, w->data, bd, y->data); break;
    case MK_FC_F32: tflk_fc_f32(&k->u.fc, x->data, k->wt ? k->wt : w->data, k->wt ? k->bt : bd, y->data); break;
    case MK_POOL_S8: tflk_pool_s8(&k->u.pool, x->data, y->data); break;
    case MK_SOFTMAX_S8: tflk_softmax_s8(&k->u.sm, x->data, y->data, io->scratch); break;
    case MK_LOGSM_S8: tflk_log_softmax_s8(&k->u.lsm.p, x->data, y->data, k->u.lsm.rows, k->u.lsm.depth); break;
    case MK_SOFTMAX_F32:
        if (k->sm_log && k->sm_acc64)
            tflk_log_softmax_f32_acc64(&k->u.sm, x->data, y->data);
        else if (k->sm_log)
            tflk_log_softmax_f32(&k->u.sm, x->data, y->data);
        else if (k->sm_acc64)
            tflk_softmax_f32_acc64(&k->u.sm, x->data, y->data);
        else
            tflk_softmax_f32(&k->u.sm, x->data, y->data);
        break;
    case MK_LSTM: tflk_lstm_run(&k->u.lstm, x->data, y->data, io->scratch); break;
    case MK_LSTM8: tflk_lstm8_run(&k->u.lstm8, x->data, y->data, io->scratch); break;
    case MK_BIN_S8: tflk_binary_s8(&k->u.bin, x->data, w->data, y->data); break;
    case MK_BIN_F32: tflk_binary_f32(&k->u.bin, x->data, w->data, y->data); break;
    case MK_TRANSPOSE: tflk_strided_copy(&k->u.tr, x->data, y->data); break;
    case MK_LUT_S8: {
        int32_t bad = 0;
        if (k->u.lut.min_valid <= -128)
            tflk_lut_s8(k->u.lut.lut, x->data, y->data, (int32_t)sy_tensor_numel(x));
        else if (tflk_lut_s8_min(k->u.lut.lut, k->u.lut.min_valid, x->data, y->data, (int32_t)sy_tensor_numel(x), &bad))
            return H->status_new(SY_ERR_RUNTIME, "int8 %s '%s': element %d is %d, below the input zero point %d (a "
                                 "negative real value), which TFLite's kernel refuses (the package's sy_model_run "
                                 "returns -1)", k->op, k->name, (int)bad, ((const int8_t *)x->data)[bad],
                                 (int)k->u.lut.min_valid);
        break;
    }
    case MK_COPY:
    default: tflk_copy(y->data, x->data, y->nbytes < x->nbytes ? y->nbytes : x->nbytes); break;
    }
    return NULL;
}

#define MCU_F32_I8 (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_INT8))
#define I8_ONLY SY_DT_BIT(SY_DT_INT8)
#define F32_ONLY SY_DT_BIT(SY_DT_FLOAT32)
#define BOOL_ONLY SY_DT_BIT(SY_DT_BOOL)
#define I32_ONLY SY_DT_BIT(SY_DT_INT32)
#define F32_BOOL (F32_ONLY | BOOL_ONLY)
#define MCU_ANY (MCU_F32_I8 | SY_DT_BIT(SY_DT_INT32) | BOOL_ONLY)
#define MCU_KERNEL(op, mask)                                                                                       \
    {                                                                                                              \
        sizeof(sy_kernel_def), TFL_DOMAIN, (op), 1, 0, "riscv_mcu", (mask), 0, 0u, NULL, mcu_prepare, mcu_run,     \
            node_release, NULL                                                                                     \
    }
/* TRANSPOSE_CONV: the dtype is the input's, input 2 */
#define MCU_KERNEL_T(op, mask, ti)                                                                                 \
    {                                                                                                              \
        sizeof(sy_kernel_def), TFL_DOMAIN, (op), 1, 0, "riscv_mcu", (mask), (ti), 0u, NULL, mcu_prepare, mcu_run,  \
            node_release, NULL                                                                                     \
    }
/* kernels chosen by the dtype of output 0 (type_input -1) */
#define MCU_KERNEL_OUT(op, mask)                                                                                   \
    {                                                                                                              \
        sizeof(sy_kernel_def), TFL_DOMAIN, (op), 1, 0, "riscv_mcu", (mask), -1, 0u, NULL, mcu_prepare, mcu_run,    \
            node_release, NULL                                                                                     \
    }
#define MCU_QKERNEL_OUT(dom, op, v, mask)                                                                          \
    {                                                                                                              \
        sizeof(sy_kernel_def), (dom), (op), (v), 0, "riscv_mcu", (mask), -1, 0u, NULL, mcu_prepare, mcu_run,       \
            node_release, NULL                                                                                     \
    }
#define MCU_QKERNEL(dom, op, v, mask)                                                                              \
    {                                                                                                              \
        sizeof(sy_kernel_def), (dom), (op), (v), 0, "riscv_mcu", (mask), 0, 0u, NULL, mcu_prepare, mcu_run,        \
            node_release, NULL                                                                                     \
    }

static const sy_kernel_def kernels[] = {
    MCU_KERNEL("CONV_2D", MCU_F32_I8),
    MCU_KERNEL("DEPTHWISE_CONV_2D", MCU_F32_I8),
    MCU_KERNEL("FULLY_CONNECTED", MCU_F32_I8),
    MCU_KERNEL("AVERAGE_POOL_2D", MCU_F32_I8),
    MCU_KERNEL("MAX_POOL_2D", MCU_F32_I8),
    MCU_KERNEL("SOFTMAX", MCU_F32_I8),
    MCU_KERNEL("UNIDIRECTIONAL_SEQUENCE_LSTM", MCU_F32_I8),
    MCU_KERNEL("RESHAPE", MCU_F32_I8 | SY_DT_BIT(SY_DT_INT32)),
    MCU_KERNEL("SQUEEZE", MCU_F32_I8 | SY_DT_BIT(SY_DT_INT32)),
    MCU_KERNEL("EXPAND_DIMS", MCU_F32_I8 | SY_DT_BIT(SY_DT_INT32)),
    MCU_KERNEL("ADD", MCU_F32_I8), MCU_KERNEL("SUB", MCU_F32_I8), MCU_KERNEL("MUL", MCU_F32_I8),
    MCU_KERNEL("TRANSPOSE", MCU_F32_I8 | SY_DT_BIT(SY_DT_INT32)),
    /* mcu_nn.c */
    MCU_KERNEL_T("TRANSPOSE_CONV", MCU_F32_I8, 2), MCU_KERNEL("BATCH_MATMUL", MCU_F32_I8),
    MCU_KERNEL("CONV_3D", MCU_F32_I8),
    /* one-input ops of Table A: int8 a table of output codes (MK_LUT_S8), fp32 tflk_unary.c */
    MCU_KERNEL("RELU", MCU_F32_I8), MCU_KERNEL("TANH", MCU_F32_I8), MCU_KERNEL("LOGISTIC", MCU_F32_I8),
    MCU_KERNEL("RELU6", MCU_F32_I8), MCU_KERNEL("LEAKY_RELU", MCU_F32_I8), MCU_KERNEL("HARD_SWISH", MCU_F32_I8),
    MCU_KERNEL("ELU", MCU_F32_I8), MCU_KERNEL("NEG", MCU_F32_I8), MCU_KERNEL("GELU", MCU_F32_I8),
    MCU_KERNEL("ABS", MCU_F32_I8), MCU_KERNEL("CEIL", MCU_F32_I8), MCU_KERNEL("COS", MCU_F32_I8),
    MCU_KERNEL("EXP", MCU_F32_I8), MCU_KERNEL("FLOOR", MCU_F32_I8), MCU_KERNEL("LOG", MCU_F32_I8),
    MCU_KERNEL("ROUND", MCU_F32_I8), MCU_KERNEL("SIN", MCU_F32_I8), MCU_KERNEL("SQUARE", MCU_F32_I8),
    /* mcu_ops.c: data movement (any element type), fp32 one-input ops,
     * comparisons and logical ops, (de)quantization */
    MCU_KERNEL("SLICE", MCU_ANY), MCU_KERNEL("STRIDED_SLICE", MCU_ANY), MCU_KERNEL("SPLIT", MCU_ANY),
    MCU_KERNEL("SPLIT_V", MCU_ANY), MCU_KERNEL("UNPACK", MCU_ANY), MCU_KERNEL("REVERSE_V2", MCU_ANY),
    MCU_KERNEL("TILE", MCU_ANY), MCU_KERNEL("DEPTH_TO_SPACE", MCU_ANY), MCU_KERNEL("SPACE_TO_DEPTH", MCU_ANY),
    MCU_KERNEL("PAD", MCU_ANY), MCU_KERNEL("PADV2", MCU_ANY), MCU_KERNEL("MIRROR_PAD", MCU_ANY),
    MCU_KERNEL("CONCATENATION", MCU_ANY), MCU_KERNEL("PACK", MCU_ANY), MCU_KERNEL("GATHER", MCU_ANY),
    MCU_KERNEL("GATHER_ND", MCU_ANY), MCU_KERNEL("SCATTER_ND", MCU_ANY),
    MCU_KERNEL("SQRT", MCU_F32_I8), MCU_KERNEL("RSQRT", MCU_F32_I8),
    MCU_KERNEL("LOGICAL_NOT", BOOL_ONLY), MCU_KERNEL("LOGICAL_AND", BOOL_ONLY), MCU_KERNEL("LOGICAL_OR", BOOL_ONLY),
    MCU_KERNEL("EQUAL", F32_BOOL), MCU_KERNEL("NOT_EQUAL", F32_BOOL), MCU_KERNEL("LESS", F32_BOOL),
    MCU_KERNEL("LESS_EQUAL", F32_BOOL), MCU_KERNEL("GREATER", F32_BOOL), MCU_KERNEL("GREATER_EQUAL", F32_BOOL),
    MCU_KERNEL("MAXIMUM", MCU_F32_I8), MCU_KERNEL("MINIMUM", MCU_F32_I8), MCU_KERNEL("DIV", MCU_F32_I8),
    MCU_KERNEL("PRELU", MCU_F32_I8), MCU_KERNEL("POW", MCU_F32_I8), MCU_KERNEL("LOG_SOFTMAX", MCU_F32_I8),
    MCU_KERNEL("QUANTIZE", MCU_F32_I8), MCU_KERNEL("DEQUANTIZE", I8_ONLY),
    /* mcu_reduce.c (tflk_reduce.c) */
    MCU_KERNEL("REDUCE_MAX", MCU_F32_I8), MCU_KERNEL("REDUCE_MIN", MCU_F32_I8), MCU_KERNEL("SUM", MCU_F32_I8),
    MCU_KERNEL("MEAN", MCU_F32_I8), MCU_KERNEL("REDUCE_PROD", MCU_F32_I8), MCU_KERNEL("ARG_MAX", F32_ONLY),
    MCU_KERNEL("ARG_MIN", F32_ONLY), MCU_KERNEL("CUMSUM", MCU_F32_I8), MCU_KERNEL("TOPK_V2", MCU_F32_I8),
    MCU_KERNEL("L2_NORMALIZATION", MCU_F32_I8),
    /* mcu_shape.c: resize, casts, fills, selection (keyed on the output's dtype: Select's first input is the bool
     * condition, FILL's the dims) */
    MCU_KERNEL("RESIZE_BILINEAR", MCU_F32_I8), MCU_KERNEL("RESIZE_NEAREST_NEIGHBOR", MCU_F32_I8),
    MCU_KERNEL("CAST", MCU_F32_I8 | I32_ONLY), MCU_KERNEL("REVERSE_SEQUENCE", MCU_F32_I8 | I32_ONLY),
    MCU_KERNEL("SHAPE", MCU_ANY), MCU_KERNEL_OUT("FILL", MCU_F32_I8 | I32_ONLY | BOOL_ONLY),
    MCU_KERNEL_OUT("SELECT", MCU_ANY), MCU_KERNEL_OUT("SELECT_V2", MCU_ANY), MCU_KERNEL_OUT("ONE_HOT", MCU_F32_I8),
    MCU_KERNEL("UNIQUE", MCU_F32_I8 | I32_ONLY | SY_DT_BIT(SY_DT_UINT8)),
    /* the ONNX path: what the QDQ pass folds a `switchyard quantize` model into */
    MCU_QKERNEL("switchyard.quant", "QConv", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QConvTranspose", 1, SY_DT_BIT(SY_DT_INT8)), /* Table B #113 int8 */
    MCU_QKERNEL("switchyard.quant", "QMaxPool", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QMatMul", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QAdd", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QUnary", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QSub", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QMul", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QPRelu", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QPow", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QAveragePool", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QSoftmax", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QLogSoftmax", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QNorm", 1, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("switchyard.quant", "QRNN", 1, SY_DT_BIT(SY_DT_INT8)),
    /* QConcat: input 0 is y_scale, the first data input (2) gives the type */
    {sizeof(sy_kernel_def), "switchyard.quant", "QConcat", 1, 0, "riscv_mcu", SY_DT_BIT(SY_DT_INT8), 2, 0u, NULL,
     mcu_prepare, mcu_run, node_release, NULL},
    MCU_QKERNEL("", "QuantizeLinear", 10, SY_DT_BIT(SY_DT_FLOAT32)),
    MCU_QKERNEL("", "DequantizeLinear", 10, SY_DT_BIT(SY_DT_INT8)),
    MCU_QKERNEL("", "Reshape", 5, MCU_F32_I8),
    /* ONNX's integer forms on the same kernels (mcu_quant.c, qk.c) */
    MCU_QKERNEL("", "QLinearConv", 10, I8_ONLY),
    MCU_QKERNEL("", "QLinearMatMul", 10, I8_ONLY),
    MCU_QKERNEL("", "MatMulInteger", 10, I8_ONLY | SY_DT_BIT(SY_DT_UINT8)),
    MCU_QKERNEL("", "ConvInteger", 10, SY_DT_BIT(SY_DT_UINT8)),
    /* ONNX Table B (mcu_onnx.c) */
#define OK1(op, mask) MCU_QKERNEL("", op, 1, mask)
#define OKO(op, mask) MCU_QKERNEL_OUT("", op, 1, mask)
    OK1("Relu", F32_ONLY), OK1("Tanh", F32_ONLY), OK1("Sigmoid", F32_ONLY), OK1("Abs", F32_ONLY),
    OK1("Ceil", F32_ONLY), OK1("Exp", F32_ONLY), OK1("Floor", F32_ONLY), OK1("Log", F32_ONLY),
    OK1("Round", F32_ONLY), OK1("Sqrt", F32_ONLY), OK1("Clip", F32_ONLY),
    OK1("LeakyRelu", F32_ONLY), OK1("HardSwish", F32_ONLY), OK1("Elu", F32_ONLY), OK1("Gelu", F32_ONLY),
    OK1("Erf", F32_ONLY), OK1("HardSigmoid", F32_ONLY), OK1("Celu", F32_ONLY), OK1("Selu", F32_ONLY),
    OK1("ThresholdedRelu", F32_ONLY), OK1("Softsign", F32_ONLY), OK1("Softplus", F32_ONLY), OK1("Neg", F32_ONLY),
    OK1("Mul", F32_ONLY), OK1("Add", F32_ONLY), OK1("Sub", F32_ONLY), OK1("Div", MCU_F32_I8), OK1("Max", MCU_F32_I8),
    OK1("Min", MCU_F32_I8), OK1("Sum", F32_ONLY), OK1("And", BOOL_ONLY), OK1("Equal", F32_BOOL),
    OK1("GreaterOrEqual", F32_BOOL), OK1("Greater", F32_BOOL), OK1("LessOrEqual", F32_BOOL), OK1("Less", F32_BOOL),
    OK1("Tan", F32_ONLY), OK1("Cos", F32_ONLY), OK1("Sin", F32_ONLY), OK1("Swish", F32_ONLY), OK1("PRelu", F32_ONLY),
    OK1("Pow", F32_ONLY), OK1("Mod", F32_ONLY), OK1("BitShift", SY_DT_BIT(SY_DT_UINT8)),
    OK1("LogSoftmax", F32_ONLY),
    OK1("Not", BOOL_ONLY), OK1("Or", BOOL_ONLY), OK1("Xor", BOOL_ONLY),
    OK1("Squeeze", MCU_ANY), OK1("Unsqueeze", MCU_ANY), OK1("Flatten", MCU_ANY), OK1("Dropout", MCU_ANY),
    OK1("Identity", MCU_ANY), OK1("Transpose", MCU_ANY), OK1("Concat", MCU_ANY), OK1("Gather", MCU_ANY),
    OK1("GatherND", MCU_ANY), OK1("ScatterND", MCU_ANY), OK1("Scatter", MCU_ANY), OK1("ScatterElements", MCU_ANY),
    OK1("Tile", MCU_ANY), OK1("Expand", MCU_ANY), OK1("DepthToSpace", MCU_ANY), OK1("SpaceToDepth", MCU_ANY),
    OK1("Gemm", F32_ONLY), OK1("MatMul", F32_ONLY), OK1("Softmax", F32_ONLY), OK1("Conv", F32_ONLY),
    OK1("MaxPool", F32_ONLY), OK1("AveragePool", F32_ONLY), OK1("GlobalMaxPool", F32_ONLY),
    OK1("GlobalAveragePool", F32_ONLY), OK1("ConvTranspose", F32_ONLY), OK1("LSTM", F32_ONLY), OK1("GRU", F32_ONLY), /* mcu_nn.c */
    OK1("RNN", F32_ONLY), /* mcu_rnn.c through mcu_nn.c; int8 is QRNN */
    /* mcu_shape.c: data movement on any element type, fp32 normalizations */
    OK1("Split", MCU_ANY), OK1("Slice", MCU_ANY), OK1("Pad", MCU_ANY), OK1("Resize", MCU_F32_I8),
    OK1("BatchNormalization", F32_ONLY), OK1("LayerNormalization", F32_ONLY), OK1("InstanceNormalization", F32_ONLY),
    OK1("Shape", MCU_ANY), OK1("Cast", MCU_F32_I8 | I32_ONLY), OK1("ReverseSequence", MCU_F32_I8 | I32_ONLY),
    OK1("Trilu", MCU_ANY | SY_DT_BIT(SY_DT_INT64)), OK1("GatherElements", F32_ONLY),
    OK1("Einsum", MCU_F32_I8 | I32_ONLY | SY_DT_BIT(SY_DT_UINT8)),
    OK1("Unique", MCU_F32_I8 | I32_ONLY | SY_DT_BIT(SY_DT_UINT8)),
    OKO("Constant", MCU_ANY), OKO("ConstantOfShape", MCU_F32_I8 | I32_ONLY | BOOL_ONLY), OKO("Where", MCU_ANY),
    OKO("OneHot", MCU_F32_I8),
#undef OKO
    /* mcu_reduce.c: int8 ONNX tensors as integer codes (no scale) */
    OK1("ReduceMax", MCU_F32_I8), OK1("ReduceMin", MCU_F32_I8), OK1("ReduceSum", MCU_F32_I8),
    OK1("ReduceSumSquare", MCU_F32_I8), OK1("ReduceMean", MCU_F32_I8), OK1("ReduceL1", MCU_F32_I8),
    OK1("ReduceL2", MCU_F32_I8), OK1("ReduceProd", MCU_F32_I8), OK1("ReduceLogSum", F32_ONLY),
    OK1("ReduceLogSumExp", F32_ONLY), OK1("ArgMax", F32_ONLY), OK1("ArgMin", F32_ONLY), OK1("CumSum", MCU_F32_I8),
    OK1("TopK", MCU_F32_I8), OK1("Hardmax", F32_ONLY), OK1("LpNormalization", F32_ONLY),
#undef OK1
};

/* ---- the codegen extension ---------------------------------------------------- */

/* The first layout's entry points kept one capture for the whole process;
 * their slots stay (append-only), doing nothing or refusing. */
static void retired_capture_begin(void) {}
static void retired_capture_end(void) {}

static sy_status *retired_emit(const sy_mcu_codegen_request *req, char *summary, size_t len)
{
    (void)req;
    (void)summary;
    (void)len;
    return H->status_new(SY_ERR_UNSUPPORTED,
                         "riscv_mcu.codegen: emit() of the process-wide capture is retired (it recorded the runs of "
                         "every environment and session): create the session with session_create, run it with "
                         "capture_run and write the package with capture_emit");
}

static sy_status *retired_emit_train(const sy_mcu_train_request *req, char *summary, size_t len)
{
    (void)req;
    (void)summary;
    (void)len;
    return H->status_new(SY_ERR_UNSUPPORTED,
                         "riscv_mcu.codegen: emit_train() is retired (it used the chip of the environment created "
                         "last in the process): use emit_train_env with the environment's table");
}

static sy_status *ext_session_create(const sy_mcu_codegen_ext *self, struct sy_env *env,
                                     const struct sy_model *model, const sy_session_options *opts,
                                     struct sy_session **session, sy_mcu_capture **capture);

/* The environment a table of this plugin belongs to; NULL when `self` is not one. */
static mcu_env *env_of(const sy_mcu_codegen_ext *self)
{
    if (!self || self->struct_size != sizeof *self || self->session_create != ext_session_create)
        return NULL;
    return (mcu_env *)(void *)((char *)(uintptr_t)self - offsetof(mcu_env, ext));
}

static sy_status *ext_session_create(const sy_mcu_codegen_ext *self, struct sy_env *env,
                                     const struct sy_model *model, const sy_session_options *opts,
                                     struct sy_session **session, sy_mcu_capture **capture)
{
    if (session)
        *session = NULL;
    if (capture)
        *capture = NULL;
    mcu_env *e = env_of(self);
    if (!e)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen session_create: `self` is not a table sy_get_extension returned");
    if (!env || !model || !session || !capture)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen session_create: env, model, session and capture are required");
    if (!e->cfg || !e->cfg->chip)
        return H->status_new(SY_ERR_INVALID_CONFIG, "riscv_mcu.codegen session_create: the environment has no "
                                                    "riscv_mcu provider with a target ([provider.riscv_mcu] target = "
                                                    "ws63 or hi3066)");
    if (opts && opts->struct_size < offsetof(sy_session_options, strict))
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen session_create: session options of %u bytes have no `threads`",
                             opts->struct_size);
    /* the caller's options, whatever their size, with threads = 1: a
     * captured session runs its kernels in step order on one thread, the
     * order the package calls them in and the one thread record() expects */
    size_t n = opts && opts->struct_size > sizeof(sy_session_options) ? opts->struct_size : sizeof(sy_session_options);
    sy_session_options *so = calloc(1, n);
    mcu_capture *cap = calloc(1, sizeof *cap);
    if (!so || !cap) {
        free(so);
        free(cap);
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "riscv_mcu.codegen session_create: out of memory");
    }
    if (opts) {
        memcpy(so, opts, opts->struct_size);
    } else {
        so->struct_size = sizeof *so;
        so->strict = -1;
    }
    so->threads = 1;
    cap->env = e;
    if (!pending_set(cap)) {
        free(so);
        free(cap);
        return H->status_new(SY_ERR_RUNTIME, "riscv_mcu.codegen session_create: no thread-specific slot for the "
                                             "capture (pthread_key_create failed)");
    }
    struct sy_session *s = NULL;
    sy_status *st = H->app->session_create(env, model, so, &s);
    pending_set(NULL);
    free(so);
    if (!st && !cap->sess) {
        H->app->session_release(s);
        s = NULL;
        st = H->status_new(SY_ERR_INVALID_ARGUMENT,
                           "riscv_mcu.codegen session_create: `env` is not the environment this extension table "
                           "came from (its riscv_mcu provider did not begin the session)");
    }
    if (st) {
        if (cap->sess) /* a failed creation released its provider sessions already; never leave a link */
            cap->sess->cap = NULL;
        free(cap);
        return st;
    }
    cap->session = s;
    *session = s;
    *capture = cap;
    return NULL;
}

static sy_status *ext_capture_run(sy_mcu_capture *cap)
{
    if (!cap)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "riscv_mcu.codegen capture_run: no capture");
    if (!cap->sess)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen capture_run: the captured session was released");
    cap->n = 0;
    cap->overflow = false;
    cap->ran = false;
    cap->on = true;
    sy_status *st = H->app->session_run(cap->session);
    cap->on = false;
    cap->ran = !st;
    return st;
}

static sy_status *ext_capture_emit(sy_mcu_capture *cap, const sy_mcu_codegen_request *req, char *summary,
                                   size_t len)
{
    if (!cap)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "riscv_mcu.codegen capture_emit: no capture");
    if (!cap->sess)
        return H->status_new(SY_ERR_INVALID_ARGUMENT, "riscv_mcu.codegen capture_emit: the captured session was "
                                                      "released (its buffers are what the package is made from)");
    if (!cap->ran)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen capture_emit: no capture_run of the session has succeeded");
    return mcu_emit(cap->sess->cfg, cap, req, summary, len);
}

static void ext_capture_release(sy_mcu_capture *cap)
{
    if (!cap)
        return;
    if (cap->sess)
        cap->sess->cap = NULL;
    free(cap->recs);
    free(cap);
}

static sy_status *ext_emit_train_env(const sy_mcu_codegen_ext *self, const sy_mcu_train_request *req, char *summary,
                                     size_t len)
{
    mcu_env *e = env_of(self);
    if (!e)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen emit_train_env: `self` is not a table sy_get_extension returned");
    return mcu_emit_train(e->cfg, req, summary, len);
}

static sy_status *ext_emit_train_f32_env(const sy_mcu_codegen_ext *self, const sy_mcu_train_f32_request *req,
                                         char *summary, size_t len)
{
    mcu_env *e = env_of(self);
    if (!e)
        return H->status_new(SY_ERR_INVALID_ARGUMENT,
                             "riscv_mcu.codegen emit_train_f32_env: `self` is not a table sy_get_extension returned");
    return mcu_emit_train_f32(e->cfg, req, summary, len);
}

static const sy_mcu_codegen_ext codegen_ext = {
    .struct_size = sizeof(sy_mcu_codegen_ext),
    .capture_begin = retired_capture_begin,
    .capture_end = retired_capture_end,
    .emit = retired_emit,
    .emit_train = retired_emit_train,
    .session_create = ext_session_create,
    .capture_run = ext_capture_run,
    .capture_emit = ext_capture_emit,
    .capture_release = ext_capture_release,
    .emit_train_env = ext_emit_train_env,
    .emit_train_f32_env = ext_emit_train_f32_env,
};

static sy_status *mcu_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    mcu_env *e = calloc(1, sizeof *e);
    if (!e)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "riscv_mcu: out of memory");
    e->domain = mcu_domain;
    e->def = mcu_provider;
    e->def.domain = &e->domain;
    e->def.create = NULL;
    e->def.create_env = mcu_create_env;
    e->ext = codegen_ext;
    sy_status *st = host->plugin_set_state(p, e, free);
    if (st) {
        free(e);
        return st;
    }
    SY_TRY(host->register_provider(p, &e->def));
    for (uint32_t i = 0; i < SY_COUNT_OF(kernels); i++)
        SY_TRY(host->register_kernel(p, &kernels[i]));
    return host->register_extension(p, SY_MCU_EXT_NAME, SY_MCU_EXT_VERSION, &e->ext);
}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "riscv_mcu",
    .version = "0.1.0",
    .description = "RISC-V MCU provider (ws63, hi3066): Table A checks, SRAM/flash budgets, C99 codegen",
    .kinds = SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = NULL,
    .init = mcu_init,
    .fini = NULL, /* nothing process-wide to free: the captures belong to their callers */
};

SY_PLUGIN_DEFINE(desc)
