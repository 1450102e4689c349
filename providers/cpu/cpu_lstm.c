/*
 * LSTM on the cpu provider (ONNX LSTM 7 and 14; forward, reverse,
 * bidirectional) in fp32, for the common form: default activations
 * (Sigmoid, Tanh, Tanh), no peepholes, input_forget = 0, layout 0, every
 * sequence the full length. Anything else is declined and runs on cpu_ref.
 *
 * The work per direction:
 *   - the input projection of every time step at once: one XNNPACK
 *     fully-connected operator, X [seq * batch, input] times W^T, with the
 *     two biases (Wb + Rb, summed once at prepare) as its bias;
 *   - per step, the recurrent projection H_{t-1} R^T: a second XNNPACK
 *     fully-connected operator (weights packed once at prepare);
 *   - the gates: i, o, f = sigmoid, c~ = tanh over the whole row at once
 *     (cpu_vmath.c), then C_t = f C_{t-1} + i c~, H_t = o tanh(C_t).
 * Only a large input projection goes to the pool; the per-step work stays
 * on the caller (a region per step would cost more than it saves). Sums are formed once per output, so threads do not change bits.
 */
#include "cpu.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_HAVE_X86 1
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

typedef struct lstm_dir {
    xnn_operator_t in_op;  /* X W^T + (Wb + Rb) over every step */
    xnn_operator_t rec_op; /* H R^T, one step (when rtp is NULL) */
    float *rtp;            /* R in 8-column panels [4H / 8][H][8], for rec_matvec_avx2 */
} lstm_dir;

typedef struct lstm_state {
    int64_t seq, batch, input, hidden;
    int ndir;
    bool reverse; /* one direction, reverse */
    float clip;   /* <= 0: none */
    lstm_dir dir[2];
    pthreadpool_t pool;
    cpu_isa isa;
} lstm_state;

static bool is_default_activations(const sy_node *n, int ndir)
{
    const char *const *names;
    size_t cnt;
    if (!H->attr_strings(n, "activations", &names, &cnt))
        return true;
    if (cnt != (size_t)(3 * ndir))
        return false;
    static const char *const want[3] = {"Sigmoid", "Tanh", "Tanh"};
    for (size_t i = 0; i < cnt; i++)
        if (strcmp(names[i], want[i % 3]))
            return false;
    return true;
}

static int direction_count(const sy_node *n, bool *reverse)
{
    char d[24];
    sy_attr_string_or(H, n, "direction", "forward", d, sizeof d);
    *reverse = !strcmp(d, "reverse");
    if (!strcmp(d, "bidirectional"))
        return 2;
    return !strcmp(d, "forward") || *reverse ? 1 : 0;
}

static bool lstm_accepts(const sy_node *n, char *why, size_t len)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1), *r = H->node_input(n, 2);
    const sy_tensor *b = ni > 3 ? H->node_input(n, 3) : NULL;
    bool reverse;
    int ndir = direction_count(n, &reverse);
    if (!x || !w || !r || x->rank != 3 || w->rank != 3 || r->rank != 3)
        return cpu_decline(why, len, "X, W, R must be 3-D");
    if (x->dtype != SY_DT_FLOAT32 || w->dtype != SY_DT_FLOAT32 || r->dtype != SY_DT_FLOAT32 ||
        (b && b->dtype != SY_DT_FLOAT32))
        return cpu_decline(why, len, "only float32");
    if (!w->data || !r->data || (b && !b->data))
        return cpu_decline(why, len, "W, R and B must be constants");
    if (ni > 4 && H->node_input(n, 4))
        return cpu_decline(why, len, "sequence_lens is not supported (every sequence must be full length)");
    if (ni > 7 && H->node_input(n, 7))
        return cpu_decline(why, len, "peepholes (P) are not supported");
    if (ndir == 0)
        return cpu_decline(why, len, "direction must be forward, reverse or bidirectional");
    if (!is_default_activations(n, ndir))
        return cpu_decline(why, len, "only the default activations (Sigmoid, Tanh, Tanh)");
    if (sy_attr_int_or(H, n, "input_forget", 0) != 0)
        return cpu_decline(why, len, "input_forget = 1 is not supported");
    if (sy_attr_int_or(H, n, "layout", 0) != 0)
        return cpu_decline(why, len, "layout = 1 is not supported");
    return true;
}

static void lstm_release(void *state)
{
    lstm_state *s = state;
    if (!s)
        return;
    for (int d = 0; d < 2; d++) {
        if (s->dir[d].in_op)
            xnn_delete_operator(s->dir[d].in_op);
        if (s->dir[d].rec_op)
            xnn_delete_operator(s->dir[d].rec_op);
        free(s->dir[d].rtp);
    }
    free(s);
}

/* scratch floats: the projections of every step, the recurrent row, H and C */
static size_t scratch_floats(const lstm_state *s)
{
    size_t gh = (size_t)(4 * s->hidden), b = (size_t)s->batch;
    return (size_t)s->seq * b * gh + b * gh + 2 * b * (size_t)s->hidden + 16;
}

/* the recurrent projection on rec_matvec_avx2: AVX2 with FMA, 4H a multiple of 8 */
static bool rec_own(const lstm_state *s)
{
#ifdef CPU_HAVE_X86
    return s->isa >= CPU_ISA_AVX2 && (4 * s->hidden) % 8 == 0 && __builtin_cpu_supports("fma");
#else
    (void)s;
    return false;
#endif
}

static sy_status *lstm_prepare(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 1), *r = H->node_input(n, 2);
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *b = ni > 3 ? H->node_input(n, 3) : NULL;
    const cpu_provider *prov = H->node_provider_state(n);
    if (!lstm_accepts(n, NULL, 0))
        return ERR(SY_ERR_UNSUPPORTED, "cpu LSTM: node '%s' is not of the supported form", H->node_name(n));
    lstm_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->ndir = direction_count(n, &s->reverse);
    s->seq = x->dims[0];
    s->batch = x->dims[1];
    s->input = x->dims[2];
    s->hidden = sy_attr_int_or(H, n, "hidden_size", r->dims[2]);
    s->clip = sy_attr_float_or(H, n, "clip", 0.0f);
    s->isa = prov ? (cpu_isa)prov->isa : CPU_ISA_PORTABLE;
    int64_t hd = s->hidden, gh = 4 * hd;
    if (hd < 1 || w->dims[0] != s->ndir || w->dims[1] != gh || w->dims[2] != s->input || r->dims[0] != s->ndir ||
        r->dims[1] != gh || r->dims[2] != hd || (b && (b->rank != 2 || b->dims[0] != s->ndir || b->dims[1] != 2 * gh))) {
        int nd = s->ndir;
        long long in = (long long)s->input;
        lstm_release(s);
        return ERR(SY_ERR_SHAPE,
                   "LSTM '%s': W must be [%d, %lld, %lld], R [%d, %lld, %lld] and B [%d, %lld] (hidden_size %lld)",
                   H->node_name(n), nd, (long long)gh, in, nd, (long long)gh, (long long)hd, nd, (long long)(2 * gh),
                   (long long)hd);
    }
    /* The projection is the whole node's only parallel work and short (a
     * 64-step, 4 x 128-wide projection is about a million multiply-adds, some
     * 30 us); a worker preempted while it holds one tile stalls the node for
     * a scheduler slice on a busy host (bidi_lstm_nnsplit at 2 threads: 3.8 ms
     * against 1.1 ms at 1). Only projections 16 times the usual minimum go to
     * the pool. */
    s->pool = cpu_pool_for(cpu_node_pool(n),
                           (double)(s->seq * s->batch) * (double)(gh * s->input) / 16.0);
    float *bias = malloc((size_t)gh * sizeof(float));
    if (!bias) {
        lstm_release(s);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    sy_status *st = NULL;
    for (int d = 0; d < s->ndir && !st; d++) {
        const float *W = (const float *)w->data + (size_t)(d * gh * s->input);
        const float *R = (const float *)r->data + (size_t)(d * gh * hd);
        for (int64_t j = 0; j < gh; j++) /* Wb + Rb: summed once here */
            bias[j] = b ? ((const float *)b->data)[d * 2 * gh + j] + ((const float *)b->data)[d * 2 * gh + gh + j]
                        : 0.0f;
        enum xnn_status xs = xnn_create_fully_connected_nc_f32((size_t)s->input, (size_t)gh, (size_t)s->input,
                                                               (size_t)gh, W, bias, -INFINITY, INFINITY, 0,
                                                               &s->dir[d].in_op);
        if (xs == xnn_status_success && rec_own(s)) {
            float *rtp = malloc((size_t)(gh * hd) * sizeof(float));
            if (!rtp) {
                st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
                break;
            }
            for (int64_t j = 0; j < gh; j++) /* panel j / 8, row k, lane j % 8 */
                for (int64_t k = 0; k < hd; k++)
                    rtp[((j / 8) * hd + k) * 8 + j % 8] = R[j * hd + k];
            s->dir[d].rtp = rtp;
        } else if (xs == xnn_status_success) {
            xs = xnn_create_fully_connected_nc_f32((size_t)hd, (size_t)gh, (size_t)hd, (size_t)gh, R, NULL,
                                                   -INFINITY, INFINITY, 0, &s->dir[d].rec_op);
        }
        if (xs != xnn_status_success)
            st = ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the LSTM projections (status %d)", (int)xs);
    }
    free(bias);
    if (st) {
        lstm_release(s);
        return st;
    }
    H->node_set_scratch(n, scratch_floats(s) * sizeof(float) + 64);
    *state = s;
    return NULL;
}

#ifdef CPU_HAVE_X86
/* y[j] = sum_k h[k] R[j][k] for j < n (n a multiple of 8), k ascending with
 * one fused multiply-add per term, from R in 8-column panels (rtp). Eight
 * panels at a time keep eight independent accumulators in registers:
 * XNNPACK's one-row f32 kernel keeps one per 16 columns and waits on the FMA
 * latency at every k, which made the recurrent projection most of
 * bidi_lstm_nnsplit's time. */
__attribute__((target("avx2,fma"))) static void rec_matvec_avx2(const float *rtp, const float *h, int64_t kdim,
                                                                int64_t n, float *y)
{
    int64_t panels = n / 8, p = 0;
    for (; p + 8 <= panels; p += 8) {
        __m256 a[8];
        for (int i = 0; i < 8; i++)
            a[i] = _mm256_setzero_ps();
        const float *base = rtp + p * kdim * 8;
        for (int64_t k = 0; k < kdim; k++) {
            __m256 hk = _mm256_broadcast_ss(h + k);
            for (int i = 0; i < 8; i++)
                a[i] = _mm256_fmadd_ps(hk, _mm256_loadu_ps(base + ((int64_t)i * kdim + k) * 8), a[i]);
        }
        for (int i = 0; i < 8; i++)
            _mm256_storeu_ps(y + (p + i) * 8, a[i]);
    }
    for (; p < panels; p++) {
        __m256 a = _mm256_setzero_ps();
        const float *base = rtp + p * kdim * 8;
        for (int64_t k = 0; k < kdim; k++)
            a = _mm256_fmadd_ps(_mm256_broadcast_ss(h + k), _mm256_loadu_ps(base + k * 8), a);
        _mm256_storeu_ps(y + p * 8, a);
    }
}
#endif

static sy_status *xnn_fail(enum xnn_status xs)
{
    return ERR(SY_ERR_RUNTIME, "XNNPACK fully-connected operator failed in LSTM (status %d)", (int)xs);
}

static sy_status *lstm_run(void *state, const sy_kernel_io *io)
{
    const lstm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const sy_tensor *th0 = io->n_inputs > 5 ? io->inputs[5] : NULL, *tc0 = io->n_inputs > 6 ? io->inputs[6] : NULL;
    sy_tensor *ty = io->n_outputs > 0 ? io->outputs[0] : NULL;
    sy_tensor *tyh = io->n_outputs > 1 ? io->outputs[1] : NULL, *tyc = io->n_outputs > 2 ? io->outputs[2] : NULL;
    int64_t seq = s->seq, batch = s->batch, hd = s->hidden, gh = 4 * hd;
    if (x->dims[0] != seq || x->dims[1] != batch || scratch_floats(s) * sizeof(float) > io->scratch_bytes)
        return ERR(SY_ERR_INTERNAL, "cpu LSTM: shapes differ from prepare");
    if ((th0 && th0->nbytes != (size_t)(s->ndir * batch * hd) * sizeof(float)) ||
        (tc0 && tc0->nbytes != (size_t)(s->ndir * batch * hd) * sizeof(float)))
        return ERR(SY_ERR_SHAPE, "LSTM: initial_h and initial_c must be [%d, %lld, %lld]", s->ndir,
                   (long long)batch, (long long)hd);
    float *xw = (float *)(((uintptr_t)io->scratch + 63u) & ~(uintptr_t)63u);
    float *hr = xw + seq * batch * gh, *hcur = hr + batch * gh, *ccur = hcur + batch * hd;
    float *ydat = ty ? ty->data : NULL;
    for (int d = 0; d < s->ndir; d++) {
        bool rev = s->reverse || d == 1;
        const lstm_dir *dir = &s->dir[d];
        enum xnn_status xs = xnn_setup_fully_connected_nc_f32(dir->in_op, (size_t)(seq * batch), x->data, xw, s->pool);
        if (xs == xnn_status_success)
            xs = xnn_run_operator(dir->in_op, s->pool);
        if (xs != xnn_status_success)
            return xnn_fail(xs);
        size_t hbytes = (size_t)(batch * hd) * sizeof(float);
        if (th0)
            memcpy(hcur, (const float *)th0->data + d * batch * hd, hbytes);
        else
            memset(hcur, 0, hbytes);
        if (tc0)
            memcpy(ccur, (const float *)tc0->data + d * batch * hd, hbytes);
        else
            memset(ccur, 0, hbytes);
        for (int64_t step = 0; step < seq; step++) {
            int64_t t = rev ? seq - 1 - step : step;
#ifdef CPU_HAVE_X86
            if (dir->rtp) {
                for (int64_t bi = 0; bi < batch; bi++)
                    rec_matvec_avx2(dir->rtp, hcur + bi * hd, hd, gh, hr + bi * gh);
            } else
#endif
            {
                xs = xnn_setup_fully_connected_nc_f32(dir->rec_op, (size_t)batch, hcur, hr, NULL);
                if (xs == xnn_status_success)
                    xs = xnn_run_operator(dir->rec_op, NULL);
                if (xs != xnn_status_success)
                    return xnn_fail(xs);
            }
            for (int64_t bi = 0; bi < batch; bi++) {
                float *g = hr + bi * gh, *h = hcur + bi * hd, *c = ccur + bi * hd;
                const float *xr = xw + (t * batch + bi) * gh;
                for (int64_t j = 0; j < gh; j++)
                    g[j] += xr[j];
                if (s->clip > 0.0f)
                    for (int64_t j = 0; j < gh; j++) /* clip before the activations; NaN passes */
                        g[j] = g[j] > s->clip ? s->clip : g[j] < -s->clip ? -s->clip : g[j];
                /* gate order i, o, f, c */
                cpu_sigmoid_f32(s->isa, g, (size_t)(3 * hd));
                cpu_tanh_f32(s->isa, g + 3 * hd, (size_t)hd);
                const float *gi = g, *go = g + hd, *gf = g + 2 * hd, *gc = g + 3 * hd;
                for (int64_t k = 0; k < hd; k++)
                    c[k] = gf[k] * c[k] + gi[k] * gc[k];
                memcpy(h, c, (size_t)hd * sizeof(float));
                cpu_tanh_f32(s->isa, h, (size_t)hd);
                for (int64_t k = 0; k < hd; k++)
                    h[k] = go[k] * h[k];
                if (ydat) /* Y [seq, ndir, batch, hidden] */
                    memcpy(ydat + ((t * s->ndir + d) * batch + bi) * hd, h, (size_t)hd * sizeof(float));
            }
        }
        if (tyh)
            memcpy((float *)tyh->data + d * batch * hd, hcur, hbytes);
        if (tyc)
            memcpy((float *)tyc->data + d * batch * hd, ccur, hbytes);
    }
    return NULL;
}

static const sy_kernel_def lstm_kernels[] = {
    {sizeof(sy_kernel_def), "", "LSTM", 7, 0, "cpu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u, lstm_accepts, lstm_prepare,
     lstm_run, lstm_release, NULL},
};

sy_status *cpu_lstm_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(lstm_kernels); i++)
        SY_TRY(host->register_kernel(p, &lstm_kernels[i]));
    return NULL;
}
