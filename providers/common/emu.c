/* Shared emulator code: node map, numerics, work figures, kernels (emu.h). */
#include "emu.h"
#include "tflk.h" /* the one float softmax body (sy_kernels) */

#include <math.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <strings.h>

const emu_target *emu_T;

sy_status *emu_plugin_init(const sy_host_api *host, sy_plugin *p, emu_target *rt, const emu_target *tmpl,
                           const char *qio_rule, const void *report_ext, const sy_provider_def *provider)
{
    /* The target and the kernel table are the same in every environment
     * (process-wide): filled by the first init only, so that a later
     * environment's init never writes what a running session reads. Inits
     * run one at a time (the host's registration lock). */
    static bool bound;
    static sy_kernel_def ks[48];
    static uint32_t nk;
    if (!bound) {
        *rt = *tmpl;
        rt->H = host;
        emu_T = rt;
        /* every op is registered, so that check_node sees each node and
         * declines the ones the target refuses naming the rule, not "no kernel" */
        nk = emu_kernels(tmpl->provider, ks, 48);
        nk += emu_qkernels(tmpl->provider, qio_rule, ks + nk, 48 - nk);
        bound = true;
    }
    SY_TRY(sy_register_tables(host, p, NULL, 0, ks, nk));
    char ext[64];
    snprintf(ext, sizeof ext, SY_EMU_REPORT_PREFIX "%s", tmpl->provider);
    SY_TRY(host->register_extension(p, ext, SY_EMU_REPORT_VERSION, report_ext));
    return host->register_provider(p, provider);
}
#define H (emu_T->H)
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

/* ======================================================================== */
/* numerics, options, claims                                                */
/* ======================================================================== */
void emu_round_n(float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = sy_f16_round(p[i]);
}

bool emu_is_f16_n(const float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        float r = sy_f16_round(p[i]);
        if (memcmp(&r, &p[i], sizeof r) && !(isnan(r) && isnan(p[i])))
            return false;
    }
    return true;
}

bool emu_parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on"))
        *out = true;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off"))
        *out = false;
    else
        return false;
    return true;
}

bool emu_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    if (!*v || *v == '-')
        return false;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

bool emu_parse_f64(const char *v, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !(x >= lo && x <= hi))
        return false;
    *out = x;
    return true;
}

void emu_decline(sy_claim *c, sy_reason r, const char *fmt, ...)
{
    c->take = false;
    c->reason = r;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

sy_status *emu_copy(const sy_tensor *src, sy_tensor *dst, bool to_f16)
{
    if (src->nbytes != dst->nbytes)
        return ERR(SY_ERR_INTERNAL, "%s copy: %zu bytes into %zu", emu_T->provider, src->nbytes, dst->nbytes);
    if (!src->nbytes)
        return NULL;
    if (to_f16 && src->dtype == SY_DT_FLOAT32) {
        const float *s = src->data;
        float *d = dst->data;
        int64_t n = (int64_t)(src->nbytes / sizeof(float));
        for (int64_t i = 0; i < n; i++)
            d[i] = sy_f16_round(s[i]);
    } else if (dst->data != src->data) {
        memcpy(dst->data, src->data, src->nbytes);
    }
    return NULL;
}

uint64_t emu_clipped;

/* FP6 value grid: E2M3 (bias 1): max 7.5, emax 2; E3M2 (bias 3): max 28, emax 4 */
static float fp6_round(float v, bool e2m3)
{
    int mbits = e2m3 ? 3 : 2, bias = e2m3 ? 1 : 3;
    float maxv = e2m3 ? 7.5f : 28.0f;
    float a = fabsf(v);
    if (a >= maxv)
        return v < 0 ? -maxv : maxv; /* saturate */
    int e;
    frexpf(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    int ex = e - 1;
    if (ex < 1 - bias)
        ex = 1 - bias; /* subnormals share the minimum exponent */
    float q = ldexpf(1.0f, ex - mbits);
    float r = nearbyintf(a / q) * q; /* round to nearest even */
    if (r > maxv)
        r = maxv;
    return v < 0 ? -r : r;
}

void emu_mxfp6_kn(float *b, int64_t K, int64_t N, bool e2m3)
{
    int emax = e2m3 ? 2 : 4;
    for (int64_t n = 0; n < N; n++)
        for (int64_t k0 = 0; k0 < K; k0 += 32) {
            int64_t k1 = k0 + 32 < K ? k0 + 32 : K;
            float amax = 0;
            for (int64_t k = k0; k < k1; k++)
                amax = fmaxf(amax, fabsf(b[k * N + n]));
            if (amax == 0)
                continue;
            int e;
            frexpf(amax, &e);
            int sexp = (e - 1) - emax; /* shared scale 2^(floor(log2 amax) - emax), E8M0 */
            if (sexp < -127)
                sexp = -127;
            for (int64_t k = k0; k < k1; k++)
                b[k * N + n] = ldexpf(fp6_round(ldexpf(b[k * N + n], -sexp), e2m3), sexp);
        }
}

/* ======================================================================== */
/* work figures                                                             */
/* ======================================================================== */
/* integer storage of activations / weights (the encodings' float scales are
 * not data the kernel streams) */
static bool int_data(sy_dtype dt)
{
    return dt == SY_DT_INT8 || dt == SY_DT_UINT8 || dt == SY_DT_INT16 || dt == SY_DT_UINT16;
}

void emu_node_work(const sy_node *n, size_t elsize, emu_work *w)
{
    memset(w, 0, sizeof *w);
    emu_qinfo qi;
    bool quant = emu_qdescribe(n, &qi);
    const char *op = emu_qbase_op(H->node_op(n));
    uint32_t ni = H->node_num_inputs(n), no = H->node_num_outputs(n);
    for (uint32_t i = 0; i < ni; i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (t && !quant && sy_dt_is_float(t->dtype))
            w->bytes_in += (double)sy_tensor_numel(t) * (double)elsize;
        else if (t && int_data(t->dtype)) /* 1 byte/element for 8-bit, 2 for 16-bit */
            w->bytes_in += (double)sy_tensor_numel(t) * (double)sy_dt_size(t->dtype);
    }
    double out = 0;
    for (uint32_t o = 0; o < no; o++) {
        const sy_tensor *t = H->node_output(n, o);
        if (t) {
            out += (double)sy_tensor_numel(t);
            w->bytes_out += (double)sy_tensor_numel(t) * (double)(int_data(t->dtype) ? sy_dt_size(t->dtype) : elsize);
        }
    }
    if (quant)
        w->qbits = qi.qbits;
    else if (ni && H->node_input(n, 0) && int_data(H->node_input(n, 0)->dtype)) /* data moves of codes */
        w->qbits = (int)sy_dt_size(H->node_input(n, 0)->dtype) * 8;
    const sy_tensor *x = H->node_input(n, 0), *wt = ni > 1 ? H->node_input(n, quant && ni > 3 ? 3 : 1) : NULL;
    if (quant && !strcmp(op, "MatMul") && wt && wt->rank == 2) {
        w->macs = out * (double)x->dims[x->rank - 1];
        w->matrix = true;
    } else if (!strcmp(op, "Conv") && wt && wt->rank >= 3) {
        w->macs = out * (double)sy_dims_prod(wt->dims, 1, wt->rank);
        w->matrix = true;
    } else if ((!strcmp(op, "MatMul") || !strcmp(op, "Gemm")) && x && x->rank >= 1) {
        int64_t k = x->dims[x->rank - 1];
        if (!strcmp(op, "Gemm") && sy_attr_int_or(H, n, "transA", 0))
            k = x->dims[0];
        w->macs = out * (double)k;
        w->matrix = true;
    } else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
        int64_t ks[4];
        int64_t nk = sy_attr_ints_copy(H, n, "kernel_shape", ks, 4);
        double win = 1;
        for (int64_t i = 0; i < nk && i < 4; i++)
            win *= (double)ks[i];
        w->macs = out * win;
    } else if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") ||
               !strcmp(op, "Unsqueeze")) {
        w->macs = 0; /* views: no data movement on the device */
        w->bytes_in = w->bytes_out = 0;
    } else if (x) {
        w->macs = fmax(out, (double)sy_tensor_numel(x));
    }
}

/* ======================================================================== */
/* kernels                                                                  */
/* ======================================================================== */
enum { K_CONV, K_MATMUL, K_GEMM, K_ADD, K_SUB, K_MUL, K_DIV, K_RELU, K_SIGMOID, K_TANH, K_EXP, K_MAXPOOL, K_AVGPOOL,
       K_GAP, K_BN, K_VIEW, K_TRANSPOSE, K_CONCAT, K_SOFTMAX, K_SLICE, /* K_SLICE: integer codes only */
       K_QCONV, K_QMATMUL, K_QADD, K_QMAXPOOL, K_QCONCAT, K_QSUB, K_QMUL, /* integer kernels (emu_q.c) */
       K__N };
#define K_IS_Q(k) ((k) >= K_QCONV && (k) <= K_QMUL)

static const char *const op_names[K__N] = {
    [K_CONV] = "Conv",         [K_MATMUL] = "MatMul",   [K_GEMM] = "Gemm",         [K_ADD] = "Add",
    [K_SUB] = "Sub",           [K_MUL] = "Mul",         [K_DIV] = "Div",           [K_RELU] = "Relu",
    [K_SIGMOID] = "Sigmoid",   [K_TANH] = "Tanh",       [K_EXP] = "Exp",           [K_MAXPOOL] = "MaxPool",
    [K_AVGPOOL] = "AveragePool", [K_GAP] = "GlobalAveragePool", [K_BN] = "BatchNormalization",
    [K_VIEW] = "Reshape",      [K_TRANSPOSE] = "Transpose", [K_CONCAT] = "Concat", [K_SOFTMAX] = "Softmax",
    [K_SLICE] = "Slice",
    [K_QCONV] = "QConv",       [K_QMATMUL] = "QMatMul", [K_QADD] = "QAdd",         [K_QMAXPOOL] = "QMaxPool",
    [K_QCONCAT] = "QConcat",   [K_QSUB] = "QSub",       [K_QMUL] = "QMul",
};

const char *const emu_ops[] = {"Conv", "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh",
                               "Exp", "MaxPool", "AveragePool", "GlobalAveragePool", "BatchNormalization",
                               "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Softmax", NULL};

typedef struct kstate {
    int kind;
    bool f16;
    /* event */
    char name[96];
    int64_t cycles;
    uint64_t dur_ns;
    /* conv / pool */
    int64_t pads[4], strides[2], dil[2], kshape[2], group;
    bool count_pad;
    /* gemm */
    bool ta, tb;
    float alpha, beta;
    int64_t axis;
    int64_t perm[SY_MAX_RANK];
    int64_t start[SY_MAX_RANK], step[SY_MAX_RANK]; /* Slice: first index and step per axis */
    emu_qk *q; /* integer kernel (K_Q*), or NULL */
    float *w;  /* packed (fp16-rounded) weights, or NULL */
    float *b;  /* packed bias / BN shift */
    float *a;  /* BN scale */
    int64_t nw, nb, na; /* element counts of w, b, a */
    size_t scratch;
} kstate;

static void kfree(void *p)
{
    kstate *s = p;
    if (!s)
        return;
    free(s->w);
    free(s->b);
    free(s->a);
    emu_qk_free(s->q);
    free(s);
}

static int kind_of(const char *op)
{
    if (!strcmp(op, "Flatten") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
        return K_VIEW;
    for (int k = 0; k < K__N; k++)
        if (op_names[k] && !strcmp(op_names[k], op))
            return k;
    return -1;
}

/* fp16-rounded (or plain) copy of a constant input; NULL when absent */
static sy_status *pack(const sy_node *n, void *ps, bool host, uint32_t i, bool f16, float **out, int64_t *count)
{
    *out = NULL;
    *count = 0;
    const sy_tensor *t = H->node_num_inputs(n) > i ? H->node_input(n, i) : NULL;
    if (!t)
        return NULL;
    if (!t->data || t->dtype != SY_DT_FLOAT32)
        return NULL; /* dynamic: used as it arrives */
    int64_t cnt = sy_tensor_numel(t);
    float *p = malloc((size_t)(cnt ? cnt : 1) * sizeof(float));
    if (!p)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory packing weights", emu_T->provider);
    memcpy(p, t->data, (size_t)cnt * sizeof(float));
    if (f16) {
        for (int64_t k = 0; k < cnt; k++) /* constants are clipped to the fp16 range, then rounded */
            if (fabsf(p[k]) > 65504.0f) {
                p[k] = p[k] > 0 ? 65504.0f : -65504.0f;
                /* counted once: in prepare, not again in compile; sessions prepare concurrently */
                __atomic_fetch_add(&emu_clipped, host, __ATOMIC_RELAXED);
            }
        emu_round_n(p, cnt);
    }
    if (emu_T->pack_hook && ps)
        emu_T->pack_hook(ps, n, i, p, t);
    if (host && H->struct_size > offsetof(sy_host_api, node_report_memory) && H->node_report_memory)
        H->node_report_memory((sy_node *)n, SY_MEM_PACKED_WEIGHTS, (size_t)cnt * sizeof(float));
    *out = p;
    *count = cnt;
    return NULL;
}

static void pads_for(const sy_node *n, const sy_tensor *x, const sy_tensor *y, kstate *s)
{
    char ap[16];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    int64_t p[4] = {0, 0, 0, 0};
    sy_attr_ints_copy(H, n, "pads", p, 4);
    for (int d = 0; d < 2; d++) {
        if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
            int64_t in = x->dims[2 + d], out = y->dims[2 + d];
            int64_t total = (out - 1) * s->strides[d] + (s->kshape[d] - 1) * s->dil[d] + 1 - in;
            if (total < 0)
                total = 0;
            s->pads[d] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
            s->pads[d + 2] = total - s->pads[d];
        } else if (!strcmp(ap, "VALID")) {
            s->pads[d] = s->pads[d + 2] = 0;
        } else {
            s->pads[d] = p[d];
            s->pads[d + 2] = p[d + 2];
        }
    }
}

/* The provider state a node was placed on (ABI 1.1 host API). */
static void *placed_state(const sy_node *n)
{
    if (H->struct_size > offsetof(sy_host_api, node_provider_state) && H->node_provider_state)
        return H->node_provider_state(n);
    return NULL;
}

/* Finalize one node: packed weights, attributes, cost record. `host`: a
 * kernel's prepare (reports packed memory and scratch to the core); else a
 * compiled partition, which owns its scratch. */
/* element i of a constant int64 / int32 tensor */
static int64_t int_at(const sy_tensor *t, int64_t i)
{
    return t->dtype == SY_DT_INT64 ? ((const int64_t *)t->data)[i] : ((const int32_t *)t->data)[i];
}

/* ONNX Slice (opset 10+): the first index and the step of every axis from
 * the constant starts / ends / axes / steps, clamped as the operator
 * defines (the output shape is the core's); false when one is not constant */
static bool slice_params(const sy_node *n, int64_t *start, int64_t *step)
{
    const sy_tensor *x = H->node_input(n, 0);
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *ts = ni > 1 ? H->node_input(n, 1) : NULL, *ta = ni > 3 ? H->node_input(n, 3) : NULL,
                    *tp = ni > 4 ? H->node_input(n, 4) : NULL;
    for (int32_t a = 0; a < x->rank; a++)
        start[a] = 0, step[a] = 1;
    const sy_tensor *opt[2] = {ta, tp};
    if (!ts || !ts->data || (ts->dtype != SY_DT_INT64 && ts->dtype != SY_DT_INT32))
        return false;
    for (int k = 0; k < 2; k++)
        if (opt[k] && (!opt[k]->data || (opt[k]->dtype != SY_DT_INT64 && opt[k]->dtype != SY_DT_INT32)))
            return false;
    for (int64_t i = 0; i < sy_tensor_numel(ts); i++) {
        int64_t a = ta ? int_at(ta, i) : i;
        if (a < 0)
            a += x->rank;
        if (a < 0 || a >= x->rank)
            return false;
        int64_t d = x->dims[a], s = int_at(ts, i), p = tp ? int_at(tp, i) : 1;
        if (s < 0)
            s += d;
        if (p > 0)
            s = s < 0 ? 0 : (s > d ? d : s);
        else
            s = s < 0 ? 0 : (s > d - 1 ? d - 1 : s);
        start[a] = s;
        step[a] = p;
    }
    return true;
}

/* the SDK convolution's geometry of a 2-D NCHW Conv (depth of size 1) */
static void conv_geom_of(const kstate *s, const sy_tensor *x, const sy_tensor *w, const sy_tensor *y, sy_conv_geom *g)
{
    memset(g, 0, sizeof *g);
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->m = w->dims[0];
    g->group = s->group;
    g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
    for (int i = 0; i < 2; i++) {
        g->in[1 + i] = x->dims[2 + i];
        g->out[1 + i] = y->dims[2 + i];
        g->k[1 + i] = s->kshape[i];
        g->s[1 + i] = s->strides[i];
        g->d[1 + i] = s->dil[i];
        g->pb[1 + i] = s->pads[i];
        g->pe[1 + i] = s->pads[2 + i];
    }
}

/* Window attributes the kernels index with (int64 products of them): kept
 * far from overflow, whatever a model (or a hostile one) declares. */
static sy_status *window_ok(const sy_node *n, const kstate *s)
{
    for (int i = 0; i < 2; i++)
        if (s->strides[i] < 1 || s->strides[i] > 65536 || s->dil[i] < 1 || s->dil[i] > 65536 || s->kshape[i] < 1 ||
            s->kshape[i] > 65536)
            return ERR(SY_ERR_UNSUPPORTED,
                       "%s: '%s': strides %lld,%lld / dilations %lld,%lld / kernel %lldx%lld outside 1..65536",
                       emu_T->provider, H->node_name(n), (long long)s->strides[0], (long long)s->strides[1],
                       (long long)s->dil[0], (long long)s->dil[1], (long long)s->kshape[0], (long long)s->kshape[1]);
    for (int i = 0; i < 4; i++)
        if (s->pads[i] < 0 || s->pads[i] > 65536)
            return ERR(SY_ERR_UNSUPPORTED, "%s: '%s': pad %lld outside 0..65536", emu_T->provider, H->node_name(n),
                       (long long)s->pads[i]);
    return NULL;
}

static sy_status *kbuild(sy_node *n, void *ps, bool host, kstate **state)
{
    kstate *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    const char *op = H->node_op(n);
    s->kind = kind_of(op);
    /* integer codes (quantized kernels, views and Transpose of codes) are
     * never rounded to fp16 */
    const sy_tensor *x0 = H->node_input(n, 0);
    s->f16 = ps && emu_T->fp16(ps) && !K_IS_Q(s->kind) && !(x0 && int_data(x0->dtype));
    snprintf(s->name, sizeof s->name, "%s [%s]", H->node_name(n), emu_T->provider);
    emu_work w;
    emu_node_work(n, s->f16 ? 2 : 4, &w);
    const char *unit = "";
    s->cycles = ps ? emu_T->cycles(ps, n, &w, &unit) : 0;
    double hz = ps ? emu_T->clock_hz(ps) : 1e9;
    s->dur_ns = (uint64_t)((double)s->cycles / hz * 1e9);
    snprintf(s->name, sizeof s->name, "%s [%s %s]", H->node_name(n), emu_T->provider, unit);
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    sy_status *st = NULL;
    switch (s->kind) {
    case K_QCONV:
    case K_QMAXPOOL: {
        s->strides[0] = s->strides[1] = s->dil[0] = s->dil[1] = 1;
        sy_attr_ints_copy(H, n, "strides", s->strides, 2);
        sy_attr_ints_copy(H, n, "dilations", s->dil, 2);
        if (s->kind == K_QCONV) {
            const sy_tensor *wt = H->node_input(n, 3);
            s->kshape[0] = wt->dims[2];
            s->kshape[1] = wt->dims[3];
            s->group = sy_attr_int_or(H, n, "group", 1);
        } else {
            sy_attr_ints_copy(H, n, "kernel_shape", s->kshape, 2);
        }
        pads_for(n, x, y, s);
        if ((st = window_ok(n, s)))
            break;
        emu_win g;
        memcpy(g.pads, s->pads, sizeof g.pads);
        memcpy(g.strides, s->strides, sizeof g.strides);
        memcpy(g.dil, s->dil, sizeof g.dil);
        memcpy(g.kshape, s->kshape, sizeof g.kshape);
        g.group = s->group;
        st = emu_qk_build(n, s->kind == K_QCONV ? EMU_Q_CONV : EMU_Q_MAXPOOL, &g, &s->q, &s->scratch);
        break;
    }
    case K_QMATMUL: st = emu_qk_build(n, EMU_Q_MATMUL, NULL, &s->q, &s->scratch); break;
    case K_QADD:
    case K_QSUB:
    case K_QMUL: st = emu_qk_build(n, EMU_Q_ADD, NULL, &s->q, &s->scratch); break; /* the element-wise family */
    case K_QCONCAT: st = emu_qk_build(n, EMU_Q_CONCAT, NULL, &s->q, &s->scratch); break;
    case K_CONV:
    case K_MAXPOOL:
    case K_AVGPOOL: {
        s->strides[0] = s->strides[1] = s->dil[0] = s->dil[1] = 1;
        sy_attr_ints_copy(H, n, "strides", s->strides, 2);
        sy_attr_ints_copy(H, n, "dilations", s->dil, 2);
        if (s->kind == K_CONV) {
            const sy_tensor *wt = H->node_input(n, 1);
            s->kshape[0] = wt->dims[2];
            s->kshape[1] = wt->dims[3];
            s->group = sy_attr_int_or(H, n, "group", 1);
            if (!(st = pack(n, ps, host, 1, s->f16, &s->w, &s->nw)))
                st = pack(n, ps, host, 2, s->f16, &s->b, &s->nb);
            pads_for(n, x, y, s);
            st = st ? st : window_ok(n, s); /* before the scratch is sized from them */
            if (!st) {
                sy_conv_geom g;
                conv_geom_of(s, x, wt, y, &g);
                s->scratch = sy_conv_f32_scratch(&g) + 64;
            }
        } else {
            sy_attr_ints_copy(H, n, "kernel_shape", s->kshape, 2);
            s->count_pad = sy_attr_int_or(H, n, "count_include_pad", 0) != 0;
        }
        pads_for(n, x, y, s);
        st = st ? st : window_ok(n, s);
        break;
    }
    case K_MATMUL:
        st = pack(n, ps, host, 1, s->f16, &s->w, &s->nw);
        break;
    case K_ADD:
    case K_SUB:
    case K_MUL:
    case K_DIV:
        /* a constant operand is stored on the device like a weight: in fp16,
         * clipped to +-65504 and rounded (an activation is rounded by copy()) */
        if (s->f16 && !(st = pack(n, ps, host, 0, true, &s->a, &s->na)))
            st = pack(n, ps, host, 1, true, &s->w, &s->nw);
        break;
    case K_GEMM:
        s->ta = sy_attr_int_or(H, n, "transA", 0) != 0;
        s->tb = sy_attr_int_or(H, n, "transB", 0) != 0;
        s->alpha = sy_attr_float_or(H, n, "alpha", 1.0f);
        s->beta = sy_attr_float_or(H, n, "beta", 1.0f);
        if (!(st = pack(n, ps, host, 1, s->f16, &s->w, &s->nw)))
            st = pack(n, ps, host, 2, s->f16, &s->b, &s->nb);
        break;
    case K_BN: {
        const sy_tensor *sc = H->node_input(n, 1), *bb = H->node_input(n, 2), *mu = H->node_input(n, 3),
                        *var = H->node_input(n, 4);
        if (!sc->data || !bb->data || !mu->data || !var->data) {
            st = ERR(SY_ERR_UNSUPPORTED, "%s: BatchNormalization needs constant scale, bias, mean, var",
                     emu_T->provider);
            break;
        }
        float eps = sy_attr_float_or(H, n, "epsilon", 1e-5f);
        int64_t C = sy_tensor_numel(sc);
        s->a = malloc((size_t)(C ? C : 1) * sizeof(float));
        s->b = malloc((size_t)(C ? C : 1) * sizeof(float));
        s->na = s->nb = C;
        if (!s->a || !s->b) {
            st = ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
            break;
        }
        for (int64_t c = 0; c < C; c++) { /* folded to y = a x + b, constants stored on the device */
            float a = ((const float *)sc->data)[c] / sqrtf(((const float *)var->data)[c] + eps);
            float b = ((const float *)bb->data)[c] - a * ((const float *)mu->data)[c];
            s->a[c] = s->f16 ? sy_f16_round(a) : a;
            s->b[c] = s->f16 ? sy_f16_round(b) : b;
        }
        break;
    }
    case K_TRANSPOSE: {
        int64_t np = sy_attr_ints_copy(H, n, "perm", s->perm, SY_MAX_RANK);
        if (np < 0)
            for (int32_t i = 0; i < x->rank; i++)
                s->perm[i] = x->rank - 1 - i;
        break;
    }
    case K_SLICE:
        if (!slice_params(n, s->start, s->step))
            st = ERR(SY_ERR_UNSUPPORTED, "%s: '%s': Slice needs constant starts / ends / axes / steps", emu_T->provider,
                     H->node_name(n));
        break;
    case K_CONCAT:
        s->axis = sy_attr_int_or(H, n, "axis", 0);
        if (s->axis < 0)
            s->axis += y->rank;
        break;
    case K_SOFTMAX:
        s->axis = x->rank - 1; /* the providers accept the last axis only */
        break;
    default:
        break;
    }
    if (st) {
        kfree(s);
        return st;
    }
    if (host && s->scratch)
        H->node_set_scratch(n, s->scratch);
    *state = s;
    return NULL;
}

static sy_status *kprepare(sy_node *n, void **state)
{
    kstate *s = NULL;
    sy_status *st = kbuild(n, placed_state(n), true, &s);
    *state = s;
    return st;
}

SY_BINARY_FN(b_add, float, float, float, SY_LD_ID, SY_LD_ID, x + y)
SY_BINARY_FN(b_sub, float, float, float, SY_LD_ID, SY_LD_ID, x - y)
SY_BINARY_FN(b_mul, float, float, float, SY_LD_ID, SY_LD_ID, x *y)
SY_BINARY_FN(b_div, float, float, float, SY_LD_ID, SY_LD_ID, x / y)

/* Conv is the host's NCHW convolution of the SDK (sy_conv_f32, cpu_ref's
 * too), on the fp16-rounded weights when the target stores fp16; the output
 * is rounded once afterwards like every float kernel's */
static void run_conv(const kstate *s, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0], *wt = io->inputs[1];
    const sy_tensor *bt = io->n_inputs > 2 ? io->inputs[2] : NULL;
    const float *W = s->w ? s->w : wt->data, *B = s->b ? s->b : (bt ? bt->data : NULL);
    sy_conv_geom g;
    conv_geom_of(s, x, wt, io->outputs[0], &g);
    (void)sy_conv_f32(&g, x->data, W, B, io->outputs[0]->data, io->scratch, io->scratch_bytes); /* scratch sized at prepare */
}

static void run_pool(const kstate *s, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t NC = x->dims[0] * x->dims[1], IH = x->dims[2], IW = x->dims[3], OH = y->dims[2], OW = y->dims[3];
    bool mx = s->kind == K_MAXPOOL;
    for (int64_t p = 0; p < NC; p++) {
        const float *xi = (const float *)x->data + p * IH * IW;
        float *yo = (float *)y->data + p * OH * OW;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float acc = mx ? -INFINITY : 0.0f;
                int64_t cnt = 0;
                for (int64_t kh = 0; kh < s->kshape[0]; kh++)
                    for (int64_t kw = 0; kw < s->kshape[1]; kw++) {
                        int64_t ih = oh * s->strides[0] - s->pads[0] + kh * s->dil[0];
                        int64_t iw = ow * s->strides[1] - s->pads[1] + kw * s->dil[1];
                        if (ih < 0 || ih >= IH || iw < 0 || iw >= IW) {
                            /* padding counts for the average only up to the padded extent */
                            if (!mx && s->count_pad && ih < IH + s->pads[2] && iw < IW + s->pads[3])
                                cnt++;
                            continue;
                        }
                        float v = xi[ih * IW + iw];
                        if (mx)
                            acc = v > acc ? v : acc;
                        else
                            acc += v;
                        cnt++;
                    }
                yo[oh * OW + ow] = mx ? acc : (cnt ? acc / (float)cnt : 0.0f);
            }
    }
}

static void run_matmul(const kstate *s, const sy_kernel_io *io)
{
    const sy_tensor *a = io->inputs[0], *b = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    const float *A = a->data, *B = s->w ? s->w : b->data;
    int64_t K = a->dims[a->rank - 1];
    int64_t M = a->rank >= 2 ? a->dims[a->rank - 2] : 1;
    int64_t N = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
    int32_t br = y->rank - (a->rank >= 2 ? 2 : 1) - (b->rank >= 2 ? 0 : -1);
    if (K == 0 || sy_tensor_numel(y) == 0) { /* an empty sum is 0 */
        if (y->nbytes)
            memset(y->data, 0, y->nbytes);
        return;
    }
    if (b->rank <= 2) { /* all batches of A share B: one GEMM */
        int64_t rows = sy_tensor_numel(a) / K;
        sy_gemm_f32(false, false, rows, N, K, 1.0f, A, K, B, N, 0.0f, y->data, N);
        return;
    }
    /* batched with numpy broadcasting over the leading dims of the output */
    int32_t yb = y->rank - 2;
    (void)br;
    int64_t idx[SY_MAX_RANK] = {0}, nbatch = sy_dims_prod(y->dims, 0, yb);
    for (int64_t i = 0; i < nbatch; i++) {
        int64_t oa = 0, ob = 0, sa = 1, sb = 1;
        for (int32_t d = yb - 1; d >= 0; d--) {
            int32_t da = d - (yb - (a->rank - 2)), db = d - (yb - (b->rank - 2));
            if (da >= 0) {
                oa += (a->dims[da] == 1 ? 0 : idx[d]) * sa;
                sa *= a->dims[da];
            }
            if (db >= 0) {
                ob += (b->dims[db] == 1 ? 0 : idx[d]) * sb;
                sb *= b->dims[db];
            }
        }
        sy_gemm_f32(false, false, M, N, K, 1.0f, A + oa * M * K, K, B + ob * K * N, N, 0.0f,
                    (float *)y->data + i * M * N, N);
        sy_index_next(yb, y->dims, idx);
    }
}

static void run_gemm(const kstate *s, const sy_kernel_io *io)
{
    const sy_tensor *a = io->inputs[0], *b = io->inputs[1], *c = io->n_inputs > 2 ? io->inputs[2] : NULL;
    sy_tensor *y = io->outputs[0];
    int64_t M = y->dims[0], N = y->dims[1], K = s->ta ? a->dims[0] : a->dims[1];
    const float *B = s->w ? s->w : b->data, *C = s->b ? s->b : (c ? c->data : NULL);
    float *Y = y->data;
    float beta = 0.0f;
    if (C && s->beta != 0.0f) {
        int64_t cr = c->rank >= 2 ? c->dims[0] : 1, cc = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++)
                Y[i * N + j] = C[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
        beta = s->beta;
    }
    sy_gemm_f32(s->ta, s->tb, M, N, K, s->alpha, a->data, a->dims[1], B, b->dims[1], beta, Y, N);
}

/* Softmax over the last axis: the portable kernel with libm's expf (the
 * output is rounded to fp16 afterwards like every float kernel's) */
static void run_softmax(const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    int64_t C = x->dims[x->rank - 1], R = sy_tensor_numel(x) / (C ? C : 1);
    tflk_softmax k = {.rows = (int32_t)R, .depth = (int32_t)C, .beta = 1.0f, .exp_fn = expf};
    tflk_softmax_f32(&k, x->data, io->outputs[0]->data);
}

static void run_transpose(const kstate *s, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t xs[SY_MAX_RANK], ss[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    for (int32_t i = 0; i < x->rank; i++)
        ss[i] = xs[s->perm[i]];
    sy_copy_strided(y->data, x->data, y->rank, y->dims, ss, sy_dt_size(x->dtype)); /* float or integer codes */
}

/* a strided copy of codes from the first selected element */
static void run_slice(const kstate *s, const sy_kernel_io *io)
{
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t xs[SY_MAX_RANK], ss[SY_MAX_RANK], off = 0;
    sy_strides(x->rank, x->dims, xs);
    for (int32_t i = 0; i < x->rank; i++) {
        off += s->start[i] * xs[i];
        ss[i] = xs[i] * s->step[i];
    }
    size_t es = sy_dt_size(x->dtype);
    if (sy_tensor_numel(y) > 0)
        sy_copy_strided(y->data, (const char *)x->data + (size_t)off * es, y->rank, y->dims, ss, es);
}

static void run_concat(const kstate *s, const sy_kernel_io *io)
{
    sy_tensor *y = io->outputs[0];
    int64_t outer = sy_dims_prod(y->dims, 0, (int32_t)s->axis), inner = sy_dims_prod(y->dims, (int32_t)s->axis + 1, y->rank);
    int64_t yrow = y->dims[s->axis] * inner, off = 0;
    for (uint32_t k = 0; k < io->n_inputs; k++) {
        const sy_tensor *t = io->inputs[k];
        if (!t)
            continue;
        int64_t trow = t->dims[s->axis] * inner;
        for (int64_t o = 0; o < outer; o++)
            memcpy((float *)y->data + o * yrow + off, (const float *)t->data + o * trow, (size_t)trow * sizeof(float));
        off += trow;
    }
}

static sy_status *krun(void *state, const sy_kernel_io *io)
{
    const kstate *s = state;
    uint64_t t0 = H->now_ns();
    sy_tensor *y = io->outputs[0];
    const sy_tensor *x = io->inputs[0];
    int64_t ny = sy_tensor_numel(y);
    float *yd = y->data;
    const float *xd = x->data;
    sy_status *st = NULL;
    switch (s->kind) {
    case K_CONV: run_conv(s, io); break;
    case K_MAXPOOL:
    case K_AVGPOOL: run_pool(s, io); break;
    case K_MATMUL: run_matmul(s, io); break;
    case K_GEMM: run_gemm(s, io); break;
    case K_ADD:
    case K_SUB:
    case K_MUL:
    case K_DIV: {
        /* constant operands from their fp16 device copies (kbuild) */
        sy_tensor c0, c1;
        const sy_tensor *in2[2] = {io->inputs[0], io->inputs[1]};
        if (s->a) {
            c0 = *in2[0];
            c0.data = s->a;
            in2[0] = &c0;
        }
        if (s->w) {
            c1 = *in2[1];
            c1.data = s->w;
            in2[1] = &c1;
        }
        st = sy_bcast_apply(H, 2, in2, y,
                            s->kind == K_ADD   ? b_add
                            : s->kind == K_SUB ? b_sub
                            : s->kind == K_MUL ? b_mul
                                               : b_div,
                            NULL);
        break;
    }
    case K_RELU:
        for (int64_t i = 0; i < ny; i++)
            yd[i] = xd[i] > 0 ? xd[i] : 0.0f;
        break;
    case K_SIGMOID:
        for (int64_t i = 0; i < ny; i++)
            yd[i] = xd[i] >= 0 ? 1.0f / (1.0f + expf(-xd[i])) : expf(xd[i]) / (1.0f + expf(xd[i]));
        break;
    case K_TANH:
        for (int64_t i = 0; i < ny; i++)
            yd[i] = tanhf(xd[i]);
        break;
    case K_EXP:
        for (int64_t i = 0; i < ny; i++)
            yd[i] = expf(xd[i]);
        break;
    case K_GAP: {
        int64_t NC = x->dims[0] * x->dims[1], HW = sy_tensor_numel(x) / (NC ? NC : 1);
        for (int64_t p = 0; p < NC; p++) {
            float acc = 0;
            for (int64_t i = 0; i < HW; i++)
                acc += xd[p * HW + i];
            yd[p] = acc / (float)HW;
        }
        break;
    }
    case K_BN: {
        int64_t N = x->dims[0], C = x->dims[1], HW = N * C > 0 ? sy_tensor_numel(x) / (N * C) : 0;
        for (int64_t nb = 0; nb < N; nb++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t i = 0; i < HW; i++) {
                    int64_t o = (nb * C + c) * HW + i;
                    yd[o] = s->a[c] * xd[o] + s->b[c];
                }
        break;
    }
    case K_VIEW: st = sy_run_copy_input0(NULL, io); break;
    case K_TRANSPOSE: run_transpose(s, io); break;
    case K_SLICE: run_slice(s, io); break;
    case K_CONCAT: run_concat(s, io); break;
    case K_SOFTMAX: run_softmax(io); break;
    case K_QCONV:
    case K_QMATMUL:
    case K_QADD:
    case K_QMAXPOOL:
    case K_QCONCAT:
    case K_QSUB:
    case K_QMUL: st = emu_qk_run(s->q, io); break;
    default: st = ERR(SY_ERR_INTERNAL, "%s: unknown kernel kind %d", emu_T->provider, s->kind);
    }
    if (st)
        return st;
    if (s->f16 && s->kind != K_VIEW && !K_IS_Q(s->kind))
        emu_round_n(yd, ny); /* fp16 storage: one rounding of the fp32 result */
    if (H->profiling_enabled(io->run)) {
        sy_profile_event ev = {sizeof ev, s->name, "emulated", t0, s->dur_ns, s->cycles};
        H->profile_event(io->run, &ev);
    }
    return NULL;
}

uint32_t emu_kernels(const char *provider, sy_kernel_def *out, uint32_t max)
{
    uint32_t n = 0;
    for (const char *const *op = emu_ops; *op && n < max; op++) {
        sy_kernel_def k = {sizeof(sy_kernel_def), "", *op, 1, 0, provider, SY_DT_BIT(SY_DT_FLOAT32), 0, 0u,
                           NULL, kprepare, krun, kfree, NULL};
        out[n++] = k;
    }
    return n;
}

const char *const emu_qops[] = {"QConv", "QMatMul", "QAdd", "QMaxPool", "QConcat", "QSub", "QMul", NULL};

bool emu_is_qio(const sy_node *n)
{
    const char *dom = H->node_domain ? H->node_domain(n) : "", *op = H->node_op(n);
    return (!dom || !dom[0]) && (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear"));
}

bool emu_has_kernel(const sy_node *n)
{
    const char *dom = H->node_domain ? H->node_domain(n) : "";
    const sy_tensor *x = H->node_num_inputs(n) ? H->node_input(n, 0) : NULL;
    int k = kind_of(H->node_op(n));
    if (dom && !strcmp(dom, "qti_aisw"))
        return true;
    if (dom && !strcmp(dom, "switchyard.quant")) {
        if (k == K_QCONCAT) /* y_scale, y_zp, then (x, scale, zero point) triples */
            x = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
        return K_IS_Q(k) && x && int_data(x->dtype);
    }
    if (dom && dom[0] && strcmp(dom, "ai.onnx"))
        return false;
    if ((k == K_VIEW || k == K_TRANSPOSE) && x && int_data(x->dtype))
        return true;
    if (k == K_SLICE) { /* of codes, with constant parameters */
        int64_t st[SY_MAX_RANK], sp[SY_MAX_RANK];
        return x && int_data(x->dtype) && slice_params(n, st, sp);
    }
    return k >= 0 && !K_IS_Q(k) && x && x->dtype == SY_DT_FLOAT32;
}

/* the rule id the Quantize/DequantizeLinear kernels decline with, per plugin */
static const char *qio_rule_;

static bool qio_accepts(const sy_node *n, char *why, size_t len)
{
    if (why)
        snprintf(why, len, "%s: %s is the float boundary of the quantized graph; it runs on the host CPU (a QNN client "
                 "hands the graph quantized tensors)", qio_rule_ ? qio_rule_ : "QIO", H->node_op(n));
    return false;
}

static sy_status *qio_prepare(sy_node *n, void **state)
{
    *state = NULL;
    return ERR(SY_ERR_INTERNAL, "%s: %s is never placed here", emu_T->provider, H->node_op(n));
}
static sy_status *qio_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    (void)io;
    return ERR(SY_ERR_INTERNAL, "%s: Quantize/DequantizeLinear are never placed here", emu_T->provider);
}

uint32_t emu_qkernels(const char *provider, const char *qio_rule, sy_kernel_def *out, uint32_t max)
{
    const uint64_t ints = SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_UINT16);
    /* views, Transpose and Slice move integer codes unchanged: no requantization */
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", NULL};
    static const char *const qio[] = {"QuantizeLinear", "DequantizeLinear", NULL};
    qio_rule_ = qio_rule;
    uint32_t n = 0;
    for (const char *const *op = emu_qops; *op && n < max; op++) {
        /* QConcat's input 0 is y_scale: its first data input (2) selects the kernel */
        int32_t ti = !strcmp(*op, "QConcat") ? 2 : 0;
        sy_kernel_def k = {sizeof(sy_kernel_def), "switchyard.quant", *op, 1, 0, provider, ints, ti, 0u,
                           NULL, kprepare, krun, kfree, NULL};
        out[n++] = k;
    }
    for (const char *const *op = views; *op && n < max; op++) { /* views of integer tensors */
        sy_kernel_def k = {sizeof(sy_kernel_def), "", *op, 1, 0, provider, ints, 0, 0u, NULL, kprepare, krun, kfree, NULL};
        out[n++] = k;
    }
    for (const char *const *op = qio; *op && n < max; op++) {
        sy_kernel_def k = {sizeof(sy_kernel_def), "", *op, 1, 0, provider, 0, 0, 0u, qio_accepts, qio_prepare, qio_run,
                           NULL, NULL};
        out[n++] = k;
    }
    return n;
}

/* ======================================================================== */
/* fused partitions and the compile cache (ABI 1.1)                         */
/* ======================================================================== */
/* A compiled partition: per member its finalized kernel state (packed fp16
 * weights, attributes, the verdict's cycle record) and where its operands
 * live: a partition input, a partition output, or a temporary the program
 * owns. The serialized form (EMU_BLOB_VERSION) carries the kernel states;
 * loading derives the program again and accepts the cache only when it holds
 * exactly that program (emu_deserialize). */
#define EMU_BLOB_MAGIC "SYEMUPRG"
#define EMU_BLOB_VERSION 3u /* 2: integer kernels (emu_qk blobs); 3: QConcat, QSub, QMul (emu_qk grew) */

enum { R_NONE = 0, R_IN = 1, R_OUT = 2, R_TMP = 3 };
typedef struct eref {
    uint8_t kind;
    uint32_t index;
} eref;
typedef struct emember {
    kstate *k;
    uint32_t n_in, n_out;
    eref *in, *out;
    const sy_tensor **iv; /* per run: resolved operands */
    sy_tensor **ov;
} emember;
typedef struct eprog {
    emember *m;
    uint32_t n;
    sy_tensor *tmp;
    uint32_t n_tmp;
    void *scratch;
    size_t scratch_bytes;
} eprog;

static bool groupable(const sy_node *n)
{
    const char *dom = H->node_domain ? H->node_domain(n) : "";
    int k = kind_of(H->node_op(n));
    if (dom && !strcmp(dom, "switchyard.quant"))
        return K_IS_Q(k);
    return (!dom || !dom[0] || !strcmp(dom, "ai.onnx")) && k >= 0 && !K_IS_Q(k);
}

sy_status *emu_group(const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    bool have_pos = H->struct_size > offsetof(sy_host_api, node_position) && H->node_position;
    uint32_t g = 0;
    for (uint32_t i = 0; i < n; i++) {
        group_of[i] = 0;
        if (!have_pos || !groupable(nodes[i]))
            continue;
        /* consecutive topological positions form a convex run */
        bool cont = i > 0 && group_of[i - 1] && H->node_position(nodes[i]) == H->node_position(nodes[i - 1]) + 1;
        group_of[i] = cont ? g : ++g;
    }
    /* single nodes stay plain kernels */
    for (uint32_t i = 0; i < n; i++) {
        if (!group_of[i])
            continue;
        bool prev = i > 0 && group_of[i - 1] == group_of[i], next = i + 1 < n && group_of[i + 1] == group_of[i];
        if (!prev && !next)
            group_of[i] = 0;
    }
    return NULL;
}

static void prog_free(eprog *pg)
{
    if (!pg)
        return;
    for (uint32_t i = 0; i < pg->n; i++) {
        kfree(pg->m[i].k);
        free(pg->m[i].in);
        free(pg->m[i].out);
        free(pg->m[i].iv);
        free(pg->m[i].ov);
    }
    for (uint32_t t = 0; t < pg->n_tmp; t++)
        free(pg->tmp[t].data);
    free(pg->tmp);
    free(pg->m);
    free(pg->scratch);
    free(pg);
}

void emu_release_compiled(void *compiled) { prog_free(compiled); }

static bool ref_of(const sy_partition *p, const eprog *pg, const sy_tensor *const *tmp_src, const sy_tensor *t, eref *r)
{
    if (!t)
        return *r = (eref){R_NONE, 0}, true;
    for (uint32_t i = 0; i < p->n_inputs; i++)
        if (p->inputs[i] == t)
            return *r = (eref){R_IN, i}, true;
    for (uint32_t i = 0; i < p->n_outputs; i++)
        if (p->outputs[i] == t)
            return *r = (eref){R_OUT, i}, true;
    for (uint32_t i = 0; i < pg->n_tmp; i++)
        if (tmp_src[i] == t)
            return *r = (eref){R_TMP, i}, true;
    return false;
}

/* Operand wiring of the members; kernel states already set (pg->m[k].k). */
static sy_status *wire(const sy_partition *p, eprog *pg)
{
    uint32_t max_out = 0;
    for (uint32_t k = 0; k < p->n_nodes; k++)
        max_out += H->node_num_outputs(p->nodes[k]);
    const sy_tensor **tmp_src = calloc(max_out + 1, sizeof *tmp_src);
    pg->tmp = calloc(max_out + 1, sizeof *pg->tmp);
    if (!tmp_src || !pg->tmp) {
        free(tmp_src);
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    }
    sy_status *st = NULL;
    for (uint32_t k = 0; k < p->n_nodes && !st; k++) {
        const sy_node *nd = p->nodes[k];
        emember *m = &pg->m[k];
        m->n_in = H->node_num_inputs(nd);
        m->n_out = H->node_num_outputs(nd);
        m->in = calloc(m->n_in + 1, sizeof *m->in);
        m->out = calloc(m->n_out + 1, sizeof *m->out);
        m->iv = calloc(m->n_in + 1, sizeof *m->iv);
        m->ov = calloc(m->n_out + 1, sizeof *m->ov);
        if (!m->in || !m->out || !m->iv || !m->ov) {
            st = ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
            break;
        }
        for (uint32_t i = 0; i < m->n_in && !st; i++)
            if (!ref_of(p, pg, tmp_src, H->node_input(nd, i), &m->in[i]))
                st = ERR(SY_ERR_INTERNAL, "%s: input %u of '%s' is neither a partition input nor produced in it",
                         emu_T->provider, i, H->node_name(nd));
        for (uint32_t o = 0; o < m->n_out && !st; o++) {
            const sy_tensor *t = H->node_output(nd, o);
            if (ref_of(p, pg, tmp_src, t, &m->out[o]))
                continue;
            sy_tensor *tt = &pg->tmp[pg->n_tmp];
            *tt = *t;
            tt->data = malloc(t->nbytes ? t->nbytes : 1);
            if (!tt->data) {
                st = ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
                break;
            }
            tmp_src[pg->n_tmp] = t;
            m->out[o] = (eref){R_TMP, pg->n_tmp++};
        }
        if (m->k->scratch > pg->scratch_bytes)
            pg->scratch_bytes = m->k->scratch;
    }
    free(tmp_src);
    if (!st && pg->scratch_bytes && !(pg->scratch = malloc(pg->scratch_bytes)))
        st = ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    return st;
}

static eprog *prog_new(uint32_t n)
{
    eprog *pg = calloc(1, sizeof *pg);
    if (pg && !(pg->m = calloc(n + 1, sizeof *pg->m))) {
        free(pg);
        return NULL;
    }
    if (pg)
        pg->n = n;
    return pg;
}

sy_status *emu_compile(void *pstate, const sy_partition *p, void **compiled)
{
    *compiled = NULL;
    eprog *pg = prog_new(p->n_nodes);
    if (!pg)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    sy_status *st = NULL;
    for (uint32_t k = 0; k < p->n_nodes && !st; k++)
        st = kbuild((sy_node *)p->nodes[k], pstate, false, &pg->m[k].k);
    if (!st)
        st = wire(p, pg);
    if (st) {
        prog_free(pg);
        return st;
    }
    *compiled = pg;
    return NULL;
}

sy_status *emu_run_compiled(void *compiled, const sy_kernel_io *io)
{
    eprog *pg = compiled;
    for (uint32_t k = 0; k < pg->n; k++) {
        emember *m = &pg->m[k];
        for (uint32_t i = 0; i < m->n_in; i++)
            m->iv[i] = m->in[i].kind == R_IN    ? io->inputs[m->in[i].index]
                       : m->in[i].kind == R_OUT ? io->outputs[m->in[i].index]
                       : m->in[i].kind == R_TMP ? &pg->tmp[m->in[i].index]
                                                : NULL;
        for (uint32_t o = 0; o < m->n_out; o++)
            m->ov[o] = m->out[o].kind == R_OUT   ? io->outputs[m->out[o].index]
                       : m->out[o].kind == R_TMP ? &pg->tmp[m->out[o].index]
                                                 : NULL;
        sy_kernel_io sub = {sizeof sub, m->n_in, m->n_out, m->iv, m->ov, pg->scratch, pg->scratch_bytes, io->run};
        sy_status *st = krun(m->k, &sub);
        if (st)
            return st;
    }
    return NULL;
}

/* ---- blob: magic | u32 version | u32 sizeof(kstate) | u32 n |
 *      n x (str op | kstate scalars | f32[nw] w | f32[nb] b | f32[na] a) ---- */
typedef struct wbuf {
    uint8_t *p;
    size_t len;
} wbuf;
static void wput(wbuf *b, const void *d, size_t n)
{
    if (b->p)
        memcpy(b->p + b->len, d, n);
    b->len += n;
}

/* at[k]: where member k's record starts (at[n]: the end); NULL: not wanted */
static void blob_write(const eprog *pg, wbuf *b, size_t *at)
{
    uint32_t hdr[3] = {EMU_BLOB_VERSION, (uint32_t)sizeof(kstate), pg->n};
    wput(b, EMU_BLOB_MAGIC, 8);
    wput(b, hdr, sizeof hdr);
    for (uint32_t k = 0; k < pg->n; k++) {
        if (at)
            at[k] = b->len;
        kstate ks;
        memcpy(&ks, pg->m[k].k, sizeof ks); /* padding included: calloc'd, so zero */
        const char *op = op_names[ks.kind] ? op_names[ks.kind] : "";
        uint32_t len = (uint32_t)strlen(op);
        wput(b, &len, 4);
        wput(b, op, len);
        ks.w = ks.b = ks.a = NULL;
        ks.q = NULL;
        wput(b, &ks, sizeof ks);
        if (ks.nw)
            wput(b, pg->m[k].k->w, (size_t)ks.nw * sizeof(float));
        if (ks.nb)
            wput(b, pg->m[k].k->b, (size_t)ks.nb * sizeof(float));
        if (ks.na)
            wput(b, pg->m[k].k->a, (size_t)ks.na * sizeof(float));
        const emu_qk *q = pg->m[k].k->q;
        uint64_t qn = q ? emu_qk_blob(q, NULL) : 0;
        wput(b, &qn, sizeof qn);
        if (qn && b->p)
            emu_qk_blob(q, b->p + b->len);
        b->len += qn;
    }
    if (at)
        at[pg->n] = b->len;
}

sy_status *emu_serialize(void *compiled, void **bytes, size_t *size)
{
    wbuf b = {NULL, 0};
    blob_write(compiled, &b, NULL);
    b.p = H->alloc(b.len, 16);
    if (!b.p)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    *size = b.len;
    b.len = 0;
    blob_write(compiled, &b, NULL);
    *bytes = b.p;
    return NULL;
}

/* The kernel-state fields, to name the one a cache record gets wrong. */
static const char *kstate_field(size_t off)
{
    static const struct {
        const char *name;
        size_t at, size;
    } f[] = {
#define KF(x) {#x, offsetof(kstate, x), sizeof(((kstate *)0)->x)}
        KF(kind),   KF(f16),   KF(name),      KF(cycles), KF(dur_ns), KF(pads),  KF(strides), KF(dil),
        KF(kshape), KF(group), KF(count_pad), KF(ta),     KF(tb),     KF(alpha), KF(beta),    KF(axis),
        KF(perm),   KF(start), KF(step),      KF(q),      KF(w),      KF(b),     KF(a),       KF(nw),
        KF(nb),     KF(na),    KF(scratch),
#undef KF
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (off >= f[i].at && off < f[i].at + f[i].size)
            return f[i].name;
    return "padding";
}

/* A compiled program read from a cache is untrusted input: its checksum
 * catches accidents, not an attacker who recomputes it, and every field of a
 * kernel record (scratch size, kernel shape, strides, pads, axis, perm,
 * start/step, fp16 flag, weights, integer kernel) steers the kernels' memory
 * accesses. So none of it is used: the program is derived again from the
 * graph under this provider's rules, and the cache must hold exactly that
 * program, byte for byte, or it is refused naming the member and the field. */
sy_status *emu_deserialize(void *pstate, const sy_partition *p, const void *bytes, size_t size, void **compiled)
{
    *compiled = NULL;
    const uint8_t *file = bytes;
    uint32_t hdr[3];
    if (size < 8 + sizeof hdr || memcmp(file, EMU_BLOB_MAGIC, 8))
        return ERR(SY_ERR_INVALID_MODEL, "%s: compiled partition: not an emulator program", emu_T->provider);
    memcpy(hdr, file + 8, sizeof hdr);
    if (hdr[0] != EMU_BLOB_VERSION || hdr[1] != sizeof(kstate))
        return ERR(SY_ERR_INVALID_MODEL,
                   "%s: compiled partition: program format %u (state %u bytes), this emulator reads %u (%zu bytes)",
                   emu_T->provider, hdr[0], hdr[1], EMU_BLOB_VERSION, sizeof(kstate));
    if (hdr[2] != p->n_nodes)
        return ERR(SY_ERR_INVALID_MODEL, "%s: compiled partition has %u nodes, the partition %u", emu_T->provider,
                   hdr[2], p->n_nodes);
    void *derived = NULL;
    sy_status *st = emu_compile(pstate, p, &derived);
    if (st)
        return st;
    eprog *pg = derived;
    wbuf b = {NULL, 0};
    size_t *at = calloc((size_t)pg->n + 1, sizeof *at);
    if (at) {
        blob_write(pg, &b, at);
        b.p = malloc(b.len);
    }
    if (!at || !b.p) {
        free(at);
        prog_free(pg);
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    }
    b.len = 0;
    blob_write(pg, &b, at);
    size_t n = size < b.len ? size : b.len, d = 0;
    while (d < n && file[d] == b.p[d])
        d++;
    if (d < n || size != b.len) {
        uint32_t k = 0;
        while (k < pg->n && at[k + 1] <= d)
            k++;
        if (k == pg->n) {
            st = ERR(SY_ERR_INVALID_MODEL,
                     "%s: compiled partition: %zu bytes, the program derived from the graph %zu: refused",
                     emu_T->provider, size, b.len);
        } else {
            const char *name = op_names[pg->m[k].k->kind] ? op_names[pg->m[k].k->kind] : "";
            size_t rec = at[k] + 4 + strlen(name);
            const char *what = d < rec                    ? "op name"
                               : d < rec + sizeof(kstate) ? kstate_field(d - rec)
                                                          : "weights or integer kernel";
            st = ERR(SY_ERR_INVALID_MODEL,
                     "%s: compiled partition: member %u ('%s', %s) differs from the program this emulator derives "
                     "from the graph (field '%s', byte %zu): refused",
                     emu_T->provider, k, H->node_name(p->nodes[k]), H->node_op(p->nodes[k]), what, d);
        }
    }
    free(at);
    free(b.p);
    if (st) {
        prog_free(pg);
        return st;
    }
    *compiled = pg;
    return NULL;
}

/* ---- per-node verdicts and the text report --------------------------------- */
void emu_record(emu_recs *rs, const sy_node *n, const char *verdict, uint64_t ws, int64_t cycles, const char *unit)
{
    const char *name = H->node_name(n);
    emu_rec *r = NULL;
    for (size_t i = 0; i < rs->n; i++)
        if (!strncmp(rs->v[i].node, name, sizeof rs->v[i].node - 1))
            r = &rs->v[i];
    if (!r) {
        if (rs->n == rs->cap) {
            size_t cap = rs->cap ? 2 * rs->cap : 64;
            emu_rec *g = realloc(rs->v, cap * sizeof *g);
            if (!g)
                return;
            rs->v = g;
            rs->cap = cap;
        }
        r = &rs->v[rs->n++];
    }
    snprintf(r->node, sizeof r->node, "%s", name);
    snprintf(r->op, sizeof r->op, "%s", H->node_op(n));
    r->verdict = verdict;
    r->ws = ws;
    r->cycles = cycles;
    r->unit = unit;
}

void emu_recs_free(emu_recs *rs)
{
    free(rs->v);
    memset(rs, 0, sizeof *rs);
}

bool emu_recs_new_pass(emu_recs *rs, const sy_node *n)
{
    if (!(H->struct_size > offsetof(sy_host_api, node_position) && H->node_position))
        return false;
    int64_t pos = (int64_t)H->node_position(n);
    /* a zeroed emu_recs has last_pos 0: treat "no record yet" as before any node */
    bool again = (rs->n > 0 || rs->last_pos > 0) && pos <= rs->last_pos;
    if (again) {
        rs->n = 0;
        rs->sum = 0;
    }
    rs->last_pos = pos;
    return again;
}

void emu_live_set(emu_live *l, void *state)
{
    pthread_mutex_lock(&l->lock);
    l->state = state;
    pthread_mutex_unlock(&l->lock);
}

void emu_live_drop(emu_live *l, void *state)
{
    pthread_mutex_lock(&l->lock);
    if (l->state == state)
        l->state = NULL;
    pthread_mutex_unlock(&l->lock);
}

void *emu_live_lock(emu_live *l)
{
    pthread_mutex_lock(&l->lock);
    return l->state;
}

void emu_live_unlock(emu_live *l) { pthread_mutex_unlock(&l->lock); }

size_t emu_live_report(emu_live *l, size_t (*report_of)(void *state, char *buf, size_t len), char *buf, size_t len)
{
    size_t k = report_of(emu_live_lock(l), buf, len);
    emu_live_unlock(l);
    return k;
}

const char *emu_live_compat(emu_live *l, const char *(*compat_of)(void *state))
{
    void *s = emu_live_lock(l);
    const char *c = s ? compat_of(s) : "";
    emu_live_unlock(l);
    return c;
}

bool emu_can_copy_host(const char *domain, const char *src, const char *dst)
{
    bool sd = !strcmp(src, domain), dd = !strcmp(dst, domain);
    return (sd && !strcmp(dst, "host")) || (dd && !strcmp(src, "host"));
}

void emu_board_init(emu_board *b)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
}

void emu_board_free(emu_board *b)
{
    emu_recs_free(&b->kept);
    pthread_mutex_destroy(&b->lock);
}

sy_status *emu_board_begin(emu_board *b, void **session_state)
{
    emu_recs *rs = calloc(1, sizeof *rs);
    if (!rs)
        return ERR(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", emu_T->provider);
    pthread_mutex_lock(&b->lock);
    b->latest = rs;
    pthread_mutex_unlock(&b->lock);
    *session_state = rs;
    return NULL;
}

void emu_board_end(emu_board *b, void *session_state)
{
    emu_recs *rs = session_state;
    pthread_mutex_lock(&b->lock);
    if (b->latest == rs) { /* the report keeps showing what it placed */
        emu_recs_free(&b->kept);
        b->kept = *rs;
        b->latest = NULL;
    } else {
        emu_recs_free(rs);
    }
    pthread_mutex_unlock(&b->lock);
    free(rs);
}

emu_recs *emu_session_recs(const sy_node *n)
{
    if (!(H->struct_size > offsetof(sy_host_api, node_provider_session) && H->node_provider_session))
        return NULL;
    return H->node_provider_session(n);
}

bool emu_board_new_pass(emu_board *b, emu_recs *rs, const sy_node *n)
{
    if (!rs)
        return false;
    pthread_mutex_lock(&b->lock);
    bool again = emu_recs_new_pass(rs, n);
    pthread_mutex_unlock(&b->lock);
    return again;
}

void emu_board_record(emu_board *b, emu_recs *rs, const sy_node *n, const char *verdict, uint64_t ws, int64_t cycles,
                      const char *unit)
{
    if (!rs)
        return;
    pthread_mutex_lock(&b->lock);
    emu_record(rs, n, verdict, ws, cycles, unit);
    pthread_mutex_unlock(&b->lock);
}

void emu_board_add(emu_board *b, emu_recs *rs, uint64_t bytes)
{
    if (!rs)
        return;
    pthread_mutex_lock(&b->lock);
    rs->sum += bytes;
    pthread_mutex_unlock(&b->lock);
}

const emu_recs *emu_board_lock(emu_board *b)
{
    pthread_mutex_lock(&b->lock);
    return b->latest ? b->latest : &b->kept;
}

void emu_board_unlock(emu_board *b) { pthread_mutex_unlock(&b->lock); }

void emu_out(char *buf, size_t len, size_t *k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf ? buf + (*k < len ? *k : len) : NULL, buf && *k < len ? len - *k : 0, fmt, ap);
    va_end(ap);
    if (m > 0)
        *k += (size_t)m;
}

double emu_out_recs(char *buf, size_t len, size_t *k, const emu_recs *rs, const char *mem_label)
{
    double total = 0;
    for (size_t i = 0; i < rs->n; i++) {
        const emu_rec *r = &rs->v[i];
        emu_out(buf, len, k, "  %-40s %-18s %-6s %s %10llu B %-10s cycles %lld\n", r->node, r->op, r->unit, mem_label,
                (unsigned long long)r->ws, r->verdict, (long long)r->cycles);
        total += (double)r->cycles;
    }
    return total;
}
