/*
 * ops_recurrent: LSTM, GRU and RNN of the default ONNX domain (forward,
 * reverse, bidirectional; sequence_lens; initial states; LSTM peepholes
 * and input_forget; GRU linear_before_reset; clip; custom activations;
 * layout 0/1), cpu_ref kernels in fp32 (f16/bf16/f64 through the fp32
 * scope). Input projections for the whole sequence are one GEMM per
 * direction; each step adds H_{t-1} * R^T with another. RNN in layout 0
 * is plugin_sdk/kernels/tflk_rnn.c, the kernel riscv_mcu and its packages
 * run (ops-mcu.md Table B #114), so the two agree bit for bit.
 */
#include "switchyard/sy_sdk.h"
#include "tflk.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

enum { RK_RNN, RK_GRU, RK_LSTM };
/* activations and the cell math: plugin_sdk sdk_rnn.c (shared with qti_aisw) */
enum { AF_SIGMOID = SY_RNN_ACT_SIGMOID, AF_TANH = SY_RNN_ACT_TANH, AF_RELU = SY_RNN_ACT_RELU,
       AF_AFFINE = SY_RNN_ACT_AFFINE, AF_LEAKY = SY_RNN_ACT_LEAKY_RELU, AF_THRRELU = SY_RNN_ACT_THRESHOLDED_RELU,
       AF_SCALEDTANH = SY_RNN_ACT_SCALED_TANH, AF_HARDSIG = SY_RNN_ACT_HARD_SIGMOID, AF_ELU = SY_RNN_ACT_ELU,
       AF_SOFTSIGN = SY_RNN_ACT_SOFTSIGN, AF_SOFTPLUS = SY_RNN_ACT_SOFTPLUS };

typedef sy_rnn_act act;

#define MAX_ACT 6

typedef struct rnn_state {
    int kind;
    int ngates; /* 1, 3, 4 */
    int64_t hidden;
    int ndir;
    bool reverse; /* single direction, reverse */
    bool layout1;
    bool input_forget, lbr;
    float clip; /* <= 0: none */
    act acts[MAX_ACT];
    int acts_per_dir;
} rnn_state;

/* the activation names: tflk_rnn_act_of, whose kinds are sy_rnn_act_kind's */
_Static_assert((int)TFLK_RA_SIGMOID == (int)SY_RNN_ACT_SIGMOID && (int)TFLK_RA_TANH == (int)SY_RNN_ACT_TANH &&
                   (int)TFLK_RA_LEAKY == (int)SY_RNN_ACT_LEAKY_RELU &&
                   (int)TFLK_RA_SOFTPLUS == (int)SY_RNN_ACT_SOFTPLUS,
               "tflk_rnn's activation kinds follow sy_rnn_act_kind");

static sy_status *read_state(const sy_node *n, rnn_state *s)
{
    const char *op = H->node_op(n);
    memset(s, 0, sizeof *s);
    s->kind = !strcmp(op, "LSTM") ? RK_LSTM : !strcmp(op, "GRU") ? RK_GRU : RK_RNN;
    s->ngates = s->kind == RK_LSTM ? 4 : s->kind == RK_GRU ? 3 : 1;
    char dir[24];
    sy_attr_string_or(H, n, "direction", "forward", dir, sizeof dir);
    if (!strcmp(dir, "forward"))
        s->ndir = 1;
    else if (!strcmp(dir, "reverse")) {
        s->ndir = 1;
        s->reverse = true;
    } else if (!strcmp(dir, "bidirectional"))
        s->ndir = 2;
    else
        return ERR(SY_ERR_INVALID_ARGUMENT, "direction must be forward, reverse or bidirectional; got \"%s\"", dir);
    s->hidden = sy_attr_int_or(H, n, "hidden_size", -1);
    s->layout1 = sy_attr_int_or(H, n, "layout", 0) != 0;
    s->input_forget = sy_attr_int_or(H, n, "input_forget", 0) != 0;
    s->lbr = sy_attr_int_or(H, n, "linear_before_reset", 0) != 0;
    float clip;
    s->clip = H->attr_float(n, "clip", &clip) ? clip : -1.0f;
    if (H->attr_float(n, "clip", &clip) && clip <= 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "clip must be > 0, got %g", (double)clip);
    s->acts_per_dir = s->kind == RK_LSTM ? 3 : s->kind == RK_GRU ? 2 : 1;
    static const int defaults[3][3] = {{AF_TANH, 0, 0}, {AF_SIGMOID, AF_TANH, 0}, {AF_SIGMOID, AF_TANH, AF_TANH}};
    int need = s->acts_per_dir * s->ndir;
    const char *const *names = NULL;
    size_t cnt = 0;
    float alphas[MAX_ACT], betas[MAX_ACT];
    int64_t na = sy_attr_floats_copy(H, n, "activation_alpha", alphas, MAX_ACT);
    int64_t nb = sy_attr_floats_copy(H, n, "activation_beta", betas, MAX_ACT);
    int ia = 0, ib = 0;
    if (H->attr_strings(n, "activations", &names, &cnt)) {
        if ((int)cnt != need)
            return ERR(SY_ERR_INVALID_ARGUMENT, "activations must list %d functions (%d per direction), got %zu", need,
                       s->acts_per_dir, cnt);
        for (int i = 0; i < need; i++) {
            int32_t params;
            int32_t found = tflk_rnn_act_of(names[i], &params, &s->acts[i].alpha, &s->acts[i].beta);
            if (found < 0)
                return ERR(SY_ERR_UNSUPPORTED, "activation function \"%s\" is not supported", names[i]);
            s->acts[i].kind = found;
            if (params >= 1 && ia < na)
                s->acts[i].alpha = alphas[ia++];
            if (params >= 2 && ib < nb)
                s->acts[i].beta = betas[ib++];
        }
    } else {
        for (int i = 0; i < need; i++)
            s->acts[i].kind = defaults[s->kind][i % s->acts_per_dir];
    }
    return NULL;
}

/* dims: seq, batch, input from X and layout */
static sy_status *check_shapes(const sy_node *n, rnn_state *s, int64_t *seq, int64_t *batch)
{
    const sy_tensor *x, *w, *r;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &w));
    SY_TRY(sy_need_input(H, n, 2, &r));
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return ERR(SY_ERR_SHAPE, "X, W and R must be 3-D (got ranks %d, %d, %d)", (int)x->rank, (int)w->rank,
                   (int)r->rank);
    if (x->dtype != w->dtype || x->dtype != r->dtype)
        return ERR(SY_ERR_TYPE, "X, W and R must share one element type");
    int64_t hs = r->dims[2];
    if (s->hidden < 0)
        s->hidden = hs;
    if (hs != s->hidden)
        return ERR(SY_ERR_SHAPE, "R's last dim (%lld) must equal hidden_size (%lld)", (long long)hs,
                   (long long)s->hidden);
    int64_t gh = s->ngates * s->hidden;
    *seq = s->layout1 ? x->dims[1] : x->dims[0];
    *batch = s->layout1 ? x->dims[0] : x->dims[1];
    if (w->dims[0] != s->ndir || w->dims[1] != gh || w->dims[2] != x->dims[2])
        return ERR(SY_ERR_SHAPE, "W must be [%d, %lld, %lld]", s->ndir, (long long)gh, (long long)x->dims[2]);
    if (r->dims[0] != s->ndir || r->dims[1] != gh)
        return ERR(SY_ERR_SHAPE, "R must be [%d, %lld, %lld]", s->ndir, (long long)gh, (long long)s->hidden);
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *b = ni > 3 ? H->node_input(n, 3) : NULL;
    if (b && (b->rank != 2 || b->dims[0] != s->ndir || b->dims[1] != 2 * gh))
        return ERR(SY_ERR_SHAPE, "B must be [%d, %lld]", s->ndir, (long long)(2 * gh));
    const sy_tensor *sl = ni > 4 ? H->node_input(n, 4) : NULL;
    if (sl && (sl->rank != 1 || sl->dims[0] != *batch || (sl->dtype != SY_DT_INT32 && sl->dtype != SY_DT_INT64)))
        return ERR(SY_ERR_SHAPE, "sequence_lens must be int32 [%lld]", (long long)*batch);
    for (uint32_t i = 5; i < ni && i < 7; i++) {
        const sy_tensor *h0 = H->node_input(n, i);
        if (!h0)
            continue;
        int64_t e0 = s->layout1 ? *batch : s->ndir, e1 = s->layout1 ? s->ndir : *batch;
        if (h0->rank != 3 || h0->dims[0] != e0 || h0->dims[1] != e1 || h0->dims[2] != s->hidden)
            return ERR(SY_ERR_SHAPE, "initial state (input %u) must be [%lld, %lld, %lld]", i, (long long)e0,
                       (long long)e1, (long long)s->hidden);
    }
    const sy_tensor *p = ni > 7 ? H->node_input(n, 7) : NULL;
    if (p && (p->rank != 2 || p->dims[0] != s->ndir || p->dims[1] != 3 * s->hidden))
        return ERR(SY_ERR_SHAPE, "P must be [%d, %lld]", s->ndir, (long long)(3 * s->hidden));
    return NULL;
}

static sy_status *infer_rnn(sy_node *n)
{
    rnn_state s;
    SY_TRY(read_state(n, &s));
    int64_t seq, batch;
    SY_TRY(check_shapes(n, &s, &seq, &batch));
    const sy_tensor *x = H->node_input(n, 0);
    uint32_t no = H->node_num_outputs(n);
    int64_t y[4], yh[3];
    if (s.layout1) {
        int64_t a[4] = {batch, seq, s.ndir, s.hidden}, b[3] = {batch, s.ndir, s.hidden};
        memcpy(y, a, sizeof a);
        memcpy(yh, b, sizeof b);
    } else {
        int64_t a[4] = {seq, s.ndir, batch, s.hidden}, b[3] = {s.ndir, batch, s.hidden};
        memcpy(y, a, sizeof a);
        memcpy(yh, b, sizeof b);
    }
    if (no > 0)
        SY_TRY(H->node_set_output(n, 0, x->dtype, 4, y));
    for (uint32_t o = 1; o < no; o++)
        SY_TRY(H->node_set_output(n, o, x->dtype, 3, yh));
    return NULL;
}

static size_t scratch_floats(const rnn_state *s, int64_t seq, int64_t batch)
{
    int64_t gh = s->ngates * s->hidden;
    return (size_t)(seq * batch * gh + 2 * batch * gh + 4 * batch * s->hidden + 64);
}

static sy_status *prepare_rnn(sy_node *n, void **state)
{
    rnn_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t seq, batch;
    sy_status *st = read_state(n, s);
    if (!st)
        st = check_shapes(n, s, &seq, &batch);
    if (st) {
        free(s);
        return st;
    }
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + scratch_floats(s, seq, batch) * sizeof(float));
    *state = s;
    return NULL;
}

/* RNN, layout 0: the shared kernel, sequence_lens as int32 in the scratch */
static sy_status *rnn_shared(const rnn_state *s, const sy_kernel_io *io, int64_t seq, int64_t batch)
{
    const sy_tensor *tb = io->n_inputs > 3 ? io->inputs[3] : NULL;
    const sy_tensor *tsl = io->n_inputs > 4 ? io->inputs[4] : NULL;
    const sy_tensor *th0 = io->n_inputs > 5 ? io->inputs[5] : NULL;
    sy_tensor *ty = io->n_outputs > 0 ? io->outputs[0] : NULL, *tyh = io->n_outputs > 1 ? io->outputs[1] : NULL;
    if (seq > INT32_MAX || batch > INT32_MAX || io->inputs[0]->dims[2] > INT32_MAX || s->hidden > INT32_MAX)
        return ERR(SY_ERR_UNSUPPORTED, "RNN: dimensions beyond int32");
    tflk_rnn p = {.steps = (int32_t)seq, .batch = (int32_t)batch, .n_in = (int32_t)io->inputs[0]->dims[2],
                  .hidden = (int32_t)s->hidden, .dirs = s->ndir, .reverse = s->reverse, .clip = s->clip};
    for (int d = 0; d < s->ndir; d++) {
        p.act[d] = s->acts[d].kind;
        p.alpha[d] = s->acts[d].alpha;
        p.beta[d] = s->acts[d].beta;
    }
    float *scratch = io->scratch;
    int32_t *lens = NULL;
    if (tsl) { /* after the kernel's 2H floats; scratch_floats leaves room for both */
        lens = (int32_t *)(scratch + tflk_rnn_scratch_floats(&p));
        for (int64_t b = 0; b < batch; b++) {
            int64_t v = sy_load_i64(tsl->data, tsl->dtype, (size_t)b);
            if (v < 0 || v > seq)
                return ERR(SY_ERR_INVALID_ARGUMENT, "RNN: sequence_lens '%s'[%lld] = %lld is outside [0, %lld]",
                           tsl->name ? tsl->name : "?", (long long)b, (long long)v, (long long)seq);
            lens[b] = (int32_t)v;
        }
    }
    tflk_rnn_f32(&p, io->inputs[0]->data, io->inputs[1]->data, io->inputs[2]->data, tb ? tb->data : NULL, lens,
                 th0 ? th0->data : NULL, ty ? ty->data : NULL, tyh ? tyh->data : NULL, scratch);
    return NULL;
}

static sy_status *rnn_f32(void *state, const sy_kernel_io *io)
{
    const rnn_state *s = state;
    const sy_tensor *x = io->inputs[0], *w = io->inputs[1], *r = io->inputs[2];
    const sy_tensor *tb = io->n_inputs > 3 ? io->inputs[3] : NULL;
    const sy_tensor *tsl = io->n_inputs > 4 ? io->inputs[4] : NULL;
    const sy_tensor *th0 = io->n_inputs > 5 ? io->inputs[5] : NULL;
    const sy_tensor *tc0 = s->kind == RK_LSTM && io->n_inputs > 6 ? io->inputs[6] : NULL;
    const sy_tensor *tp = s->kind == RK_LSTM && io->n_inputs > 7 ? io->inputs[7] : NULL;
    sy_tensor *ty = io->n_outputs > 0 ? io->outputs[0] : NULL;
    sy_tensor *tyh = io->n_outputs > 1 ? io->outputs[1] : NULL;
    sy_tensor *tyc = s->kind == RK_LSTM && io->n_outputs > 2 ? io->outputs[2] : NULL;
    int64_t seq = s->layout1 ? x->dims[1] : x->dims[0], batch = s->layout1 ? x->dims[0] : x->dims[1];
    int64_t in = x->dims[2], hd = s->hidden, G = s->ngates, gh = G * hd;
    if (scratch_floats(s, seq, batch) * sizeof(float) > io->scratch_bytes)
        return ERR(SY_ERR_INTERNAL, "recurrent scratch too small");
    float *xw = io->scratch;
    float *gates = xw + seq * batch * gh, *hr = gates + batch * gh;
    float *hcur = hr + batch * gh, *ccur = hcur + batch * hd, *tmp = ccur + batch * hd;
    if (s->kind == RK_RNN && !s->layout1)
        return rnn_shared(s, io, seq, batch);
    float *ydat = ty ? ty->data : NULL;
    if (ydat)
        memset(ydat, 0, ty->nbytes);
    for (int d = 0; d < s->ndir; d++) {
        bool rev = s->reverse || d == 1;
        const float *W = (const float *)w->data + d * gh * in, *R = (const float *)r->data + d * gh * hd;
        const float *Wb = tb ? (const float *)tb->data + d * 2 * gh : NULL, *Rb = Wb ? Wb + gh : NULL;
        const float *P = tp ? (const float *)tp->data + d * 3 * hd : NULL;
        const act *f = &s->acts[d * s->acts_per_dir];
        sy_rnn_cell cell = {.kind = s->kind == RK_LSTM ? SY_RNN_LSTM : s->kind == RK_GRU ? SY_RNN_GRU : SY_RNN_SIMPLE,
                            .hidden = hd, .input = in, .linear_before_reset = s->lbr,
                            .input_forget = s->input_forget, .clip = s->clip};
        for (int a = 0; a < s->acts_per_dir && a < 3; a++)
            cell.act[a] = f[a];
        /* input projection of every step: rows in X's own order */
        sy_gemm_f32(false, true, seq * batch, gh, in, 1.0f, x->data, in, W, in, 0.0f, xw, gh);
        for (int64_t b = 0; b < batch; b++) {
            for (int64_t k = 0; k < hd; k++) {
                int64_t hi = s->layout1 ? (b * s->ndir + d) * hd + k : (d * batch + b) * hd + k;
                hcur[b * hd + k] = th0 ? ((const float *)th0->data)[hi] : 0.0f;
                ccur[b * hd + k] = tc0 ? ((const float *)tc0->data)[hi] : 0.0f;
            }
        }
        for (int64_t step = 0; step < seq; step++) {
            int64_t t = rev ? seq - 1 - step : step;
            /* hr = H_{t-1} R^T */
            sy_gemm_f32(false, true, batch, gh, hd, 1.0f, hcur, hd, R, hd, 0.0f, hr, gh);
            for (int64_t b = 0; b < batch; b++) {
                int64_t len = seq;
                if (tsl)
                    len = tsl->dtype == SY_DT_INT64 ? ((const int64_t *)tsl->data)[b] : ((const int32_t *)tsl->data)[b];
                int64_t tt = rev ? len - 1 - step : t; /* reverse runs over each sequence's own length */
                if (step >= len || tt < 0)
                    continue;
                const float *xr = xw + (s->layout1 ? b * seq + tt : tt * batch + b) * gh;
                float *g = gates + b * gh, *h = hcur + b * hd, *c = ccur + b * hd, *hrb = hr + b * gh;
                for (int64_t j = 0; j < gh; j++)
                    g[j] = xr[j] + (Wb ? Wb[j] : 0.0f);
                sy_rnn_cell_step(&cell, g, hrb, R, Rb, P, h, c, tmp);
                if (ydat) {
                    int64_t yo = s->layout1 ? ((b * seq + tt) * s->ndir + d) * hd : ((tt * s->ndir + d) * batch + b) * hd;
                    memcpy(ydat + yo, h, (size_t)hd * sizeof(float));
                }
            }
        }
        for (int64_t b = 0; b < batch; b++) {
            int64_t o = s->layout1 ? (b * s->ndir + d) * hd : (d * batch + b) * hd;
            if (tyh)
                memcpy((float *)tyh->data + o, hcur + b * hd, (size_t)hd * sizeof(float));
            if (tyc)
                memcpy((float *)tyc->data + o, ccur + b * hd, (size_t)hd * sizeof(float));
        }
    }
    return NULL;
}

static sy_status *run_rnn(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, rnn_f32); }

#define ATTR(n, t) {n, SY_ATTR_##t, false}
#define COMMON ATTR("activation_alpha", FLOATS), ATTR("activation_beta", FLOATS), ATTR("activations", STRINGS), \
               ATTR("clip", FLOAT), ATTR("direction", STRING), ATTR("hidden_size", INT)
static const sy_attr_def a_rnn_v1[] = {COMMON, ATTR("output_sequence", INT)};
static const sy_attr_def a_rnn_v7[] = {COMMON};
static const sy_attr_def a_rnn_v14[] = {COMMON, ATTR("layout", INT)};
static const sy_attr_def a_gru_v1[] = {COMMON, ATTR("output_sequence", INT)};
static const sy_attr_def a_gru_v3[] = {COMMON, ATTR("linear_before_reset", INT), ATTR("output_sequence", INT)};
static const sy_attr_def a_gru_v7[] = {COMMON, ATTR("linear_before_reset", INT)};
static const sy_attr_def a_gru_v14[] = {COMMON, ATTR("layout", INT), ATTR("linear_before_reset", INT)};
static const sy_attr_def a_lstm_v1[] = {COMMON, ATTR("input_forget", INT), ATTR("output_sequence", INT)};
static const sy_attr_def a_lstm_v7[] = {COMMON, ATTR("input_forget", INT)};
static const sy_attr_def a_lstm_v14[] = {COMMON, ATTR("input_forget", INT), ATTR("layout", INT)};

#define S(op, since, maxi, maxo, attrs) SY_SCHEMA(op, since, 3, maxi, 0, maxo, attrs, infer_rnn, SY_NO_INPLACE, 0)
static const sy_op_schema schemas[] = {
    S("RNN", 1, 6, 2, SY_ATTRS(a_rnn_v1)),    S("RNN", 7, 6, 2, SY_ATTRS(a_rnn_v7)),
    S("RNN", 14, 6, 2, SY_ATTRS(a_rnn_v14)),  S("GRU", 1, 6, 2, SY_ATTRS(a_gru_v1)),
    S("GRU", 3, 6, 2, SY_ATTRS(a_gru_v3)),    S("GRU", 7, 6, 2, SY_ATTRS(a_gru_v7)),
    S("GRU", 14, 6, 2, SY_ATTRS(a_gru_v14)),  S("LSTM", 1, 8, 3, SY_ATTRS(a_lstm_v1)),
    S("LSTM", 7, 8, 3, SY_ATTRS(a_lstm_v7)),  S("LSTM", 14, 8, 3, SY_ATTRS(a_lstm_v14)),
};

#define K(op) SY_CPU_KERNEL(op, 1, 0, SY_DT_MASK_FLOATS, 0, prepare_rnn, run_rnn, sy_release_free)
static const sy_kernel_def kernels[] = {K("RNN"), K("GRU"), K("LSTM")};

static sy_status *rec_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void rec_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_recurrent",
    .version = "0.1.0",
    .description = "LSTM, GRU, RNN (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = rec_init,
    .fini = rec_fini,
};

SY_PLUGIN_DEFINE(desc)
