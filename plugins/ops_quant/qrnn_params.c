/* QRNN: checks and kernel parameters (see qrnn_params.h). */
#include "qrnn_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERR(h, code, ...) (h)->status_new((code), __VA_ARGS__)

static const sy_tensor *nin(const sy_host_api *h, const sy_node *n, uint32_t i)
{
    return i < h->node_num_inputs(n) ? h->node_input(n, i) : NULL;
}
static const char *tname(const sy_tensor *t, const char *def) { return t && t->name && t->name[0] ? t->name : def; }
static bool code_type(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8; }
static int32_t qkdt(sy_dtype dt) { return dt == SY_DT_UINT8 ? QK_U8 : QK_S8; }

enum { ACT_TANH, ACT_SIGMOID, ACT_RELU };

/* direction count, reverse flag, activations and clip from the attributes */
static sy_status *read_attrs(const sy_host_api *h, const sy_node *n, int32_t *ndir, int32_t *rev, int *acts,
                             float *clip)
{
    char dir[24];
    sy_attr_string_or(h, n, "direction", "forward", dir, sizeof dir);
    *rev = 0;
    if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) {
        *ndir = 1;
        *rev = dir[0] == 'r';
    } else if (!strcmp(dir, "bidirectional")) {
        *ndir = 2;
    } else {
        return PERR(h, SY_ERR_INVALID_ARGUMENT, "QRNN: direction must be forward, reverse or bidirectional; got \"%s\"",
                    dir);
    }
    if (sy_attr_int_or(h, n, "layout", 0) != 0)
        return PERR(h, SY_ERR_UNSUPPORTED, "QRNN: only layout = 0 (time-major) is supported");
    *clip = -1.0f;
    float c;
    if (h->attr_float(n, "clip", &c)) {
        if (!(c > 0.0f))
            return PERR(h, SY_ERR_INVALID_ARGUMENT, "QRNN: clip must be > 0, got %g", (double)c);
        *clip = c;
    }
    const char *const *names = NULL;
    size_t cnt = 0;
    acts[0] = acts[1] = ACT_TANH;
    if (h->attr_strings(n, "activations", &names, &cnt)) {
        if ((int32_t)cnt != *ndir)
            return PERR(h, SY_ERR_INVALID_ARGUMENT, "QRNN: activations must list %d function(s), one per direction; got %zu",
                        (int)*ndir, cnt);
        for (size_t i = 0; i < cnt; i++) {
            if (!strcmp(names[i], "Tanh"))
                acts[i] = ACT_TANH;
            else if (!strcmp(names[i], "Sigmoid"))
                acts[i] = ACT_SIGMOID;
            else if (!strcmp(names[i], "Relu"))
                acts[i] = ACT_RELU;
            else
                return PERR(h, SY_ERR_UNSUPPORTED,
                            "QRNN: activation \"%s\" has no integer form here (Tanh, Sigmoid and Relu do)", names[i]);
        }
    }
    return NULL;
}

sy_status *qrnn_shapes(const sy_host_api *h, const sy_node *n, qrnn_params *p)
{
    memset(p, 0, sizeof *p);
    qk_rnn *k = &p->k;
    int acts[2];
    float clip;
    SY_TRY(read_attrs(h, n, &k->ndir, &k->reverse, acts, &clip));
    const sy_tensor *x = nin(h, n, QRNN_X), *w = nin(h, n, QRNN_W), *r = nin(h, n, QRNN_R);
    const sy_tensor *yz = nin(h, n, QRNN_YS + 1), *b = nin(h, n, QRNN_B), *sl = nin(h, n, QRNN_LENS),
                    *h0 = nin(h, n, QRNN_H0);
    if (!x || !w || !r || !nin(h, n, QRNN_YS))
        return PERR(h, SY_ERR_INVALID_ARGUMENT, "QRNN: X, W, R and y_scale are required");
    const sy_tensor *codes[4] = {x, w, r, h0};
    for (int i = 0; i < 4; i++)
        if (codes[i] && !code_type(codes[i]->dtype))
            return PERR(h, SY_ERR_TYPE, "QRNN: '%s' is %s; int8 or uint8 codes are required", tname(codes[i], "?"),
                        sy_dt_name(codes[i]->dtype));
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return PERR(h, SY_ERR_SHAPE, "QRNN: X, W and R must be 3-D (got ranks %d, %d, %d)", (int)x->rank,
                    (int)w->rank, (int)r->rank);
    int64_t hid = r->dims[2], hs = sy_attr_int_or(h, n, "hidden_size", hid);
    if (hs != hid)
        return PERR(h, SY_ERR_SHAPE, "QRNN: R '%s' has hidden size %lld but hidden_size = %lld", tname(r, "R"),
                    (long long)hid, (long long)hs);
    if (w->dims[0] != k->ndir || w->dims[1] != hid || w->dims[2] != x->dims[2])
        return PERR(h, SY_ERR_SHAPE, "QRNN: W '%s' must be [%d, %lld, %lld]", tname(w, "W"), (int)k->ndir,
                    (long long)hid, (long long)x->dims[2]);
    if (r->dims[0] != k->ndir || r->dims[1] != hid)
        return PERR(h, SY_ERR_SHAPE, "QRNN: R '%s' must be [%d, %lld, %lld]", tname(r, "R"), (int)k->ndir,
                    (long long)hid, (long long)hid);
    int64_t seq = x->dims[0], batch = x->dims[1];
    if (seq > INT32_MAX || batch > INT32_MAX || hid > 65535 || x->dims[2] > 65535)
        return PERR(h, SY_ERR_UNSUPPORTED, "QRNN: sizes too large for the integer kernel");
    if (b && (b->dtype != SY_DT_FLOAT32 || b->rank != 2 || b->dims[0] != k->ndir || b->dims[1] != 2 * hid))
        return PERR(h, SY_ERR_SHAPE, "QRNN: B '%s' must be float32 [%d, %lld]", tname(b, "B"), (int)k->ndir,
                    (long long)(2 * hid));
    if (sl && (sl->rank != 1 || sl->dims[0] != batch || (sl->dtype != SY_DT_INT32 && sl->dtype != SY_DT_INT64)))
        return PERR(h, SY_ERR_SHAPE, "QRNN: sequence_lens '%s' must be int32 [%lld]", tname(sl, "sequence_lens"),
                    (long long)batch);
    if (h0 && (h0->rank != 3 || h0->dims[0] != k->ndir || h0->dims[1] != batch || h0->dims[2] != hid))
        return PERR(h, SY_ERR_SHAPE, "QRNN: initial_h '%s' must be [%d, %lld, %lld]", tname(h0, "initial_h"),
                    (int)k->ndir, (long long)batch, (long long)hid);
    if (yz && !code_type(yz->dtype))
        return PERR(h, SY_ERR_TYPE, "QRNN: y_zero_point '%s' is %s; int8 or uint8 is required", tname(yz, "?"),
                    sy_dt_name(yz->dtype));
    k->seq = (int32_t)seq;
    k->batch = (int32_t)batch;
    k->input = (int32_t)x->dims[2];
    k->hidden = (int32_t)hid;
    k->xdt = qkdt(x->dtype);
    k->wdt = qkdt(w->dtype);
    k->rdt = qkdt(r->dtype);
    k->h0dt = h0 ? qkdt(h0->dtype) : QK_S8;
    p->ydt = yz ? yz->dtype : SY_DT_UINT8; /* QuantizeLinear's default */
    k->ydt = qkdt(p->ydt);
    int64_t dy[4] = {seq, k->ndir, batch, hid}, dyh[3] = {k->ndir, batch, hid};
    memcpy(p->dims_y, dy, sizeof dy);
    memcpy(p->dims_yh, dyh, sizeof dyh);
    return NULL;
}

/* A (scale, zero point) pair of tensor `x` (codes of type qdt): constants,
 * float32, count 1 or axis_len (0: per tensor only), scales > 0 and
 * finite, zero points of x's type and inside its range. */
static sy_status *check_pair(const sy_host_api *h, const char *xn, const sy_tensor *s, const sy_tensor *z, sy_dtype qdt,
                             int64_t axis_len)
{
    if (!s)
        return PERR(h, SY_ERR_INVALID_MODEL, "QRNN: tensor '%s': the scale is missing", xn);
    const char *sn = tname(s, "?");
    if (s->dtype != SY_DT_FLOAT32)
        return PERR(h, SY_ERR_TYPE, "QRNN: tensor '%s': scale '%s' has dtype %s; float32 is required", xn, sn,
                    sy_dt_name(s->dtype));
    int64_t ns = sy_tensor_numel(s);
    if (ns != 1 && (axis_len <= 0 || ns != axis_len))
        return PERR(h, SY_ERR_SHAPE,
                    "QRNN: tensor '%s': scale '%s' has %lld elements; 1%s expected (per-axis length mismatch)", xn, sn,
                    (long long)ns, axis_len > 0 ? " or one per hidden unit" : "");
    if (!s->data || (z && !z->data))
        return PERR(h, SY_ERR_UNSUPPORTED, "QRNN: tensor '%s': the quantization parameters must be constants", xn);
    for (int64_t i = 0; i < ns; i++) {
        float v = ((const float *)s->data)[i];
        if (!(v > 0.0f) || !isfinite(v))
            return PERR(h, SY_ERR_INVALID_MODEL,
                        "QRNN: tensor '%s': scale '%s'[%lld] = %g; a quantization scale must be positive and finite",
                        xn, sn, (long long)i, (double)v);
    }
    if (z) {
        if (sy_tensor_numel(z) != ns)
            return PERR(h, SY_ERR_SHAPE, "QRNN: tensor '%s': zero point '%s' has %lld elements, scale '%s' has %lld",
                        xn, tname(z, "?"), (long long)sy_tensor_numel(z), sn, (long long)ns);
        if (z->dtype != qdt)
            return PERR(h, SY_ERR_TYPE, "QRNN: tensor '%s': zero point '%s' is %s but the codes are %s", xn,
                        tname(z, "?"), sy_dt_name(z->dtype), sy_dt_name(qdt));
        int32_t lo, hi;
        sy_q_storage_range(qdt, &lo, &hi);
        for (int64_t i = 0; i < ns; i++) {
            int32_t v = sy_q_load(z->data, z->dtype, (size_t)i);
            if (v < lo || v > hi)
                return PERR(h, SY_ERR_INVALID_MODEL,
                            "QRNN: tensor '%s': zero point '%s'[%lld] = %d is out of the %s range [%d, %d]", xn,
                            tname(z, "?"), (long long)i, v, sy_dt_name(qdt), lo, hi);
        }
    }
    return NULL;
}

static float fat(const sy_tensor *s, int64_t i) { return ((const float *)s->data)[sy_tensor_numel(s) > 1 ? i : 0]; }
static int32_t zat(const sy_tensor *z, int64_t i)
{
    return z ? sy_q_load(z->data, z->dtype, (size_t)(sy_tensor_numel(z) > 1 ? i : 0)) : 0;
}

static void rq_make(qk_rq *q, sy_rq_mode mode, double real_mult)
{
    /* the pre-activation keeps 2^24 units of headroom either side, so the
     * sum of two stays far inside int32 */
    sy_requant r;
    sy_rq_init(&r, mode, real_mult, 0, -(1 << 24), 1 << 24);
    q->mode = (int32_t)mode; /* QK_RQ_* are the sy_rq_mode values */
    q->real_mult = r.real_mult;
    q->mult = r.mult;
    q->shift = r.shift;
    q->zp = 0;
    q->lo = r.lo;
    q->hi = r.hi;
}

static double act_f(int a, double v)
{
    switch (a) {
    case ACT_SIGMOID: return 1.0 / (1.0 + exp(-v));
    case ACT_RELU: return v > 0.0 ? v : 0.0;
    default: return tanh(v);
    }
}

sy_status *qrnn_build(const sy_host_api *h, const sy_node *n, sy_rq_mode def_mode, qrnn_params *p)
{
    SY_TRY(qrnn_shapes(h, n, p));
    qk_rnn *k = &p->k;
    int acts[2];
    float clip;
    SY_TRY(read_attrs(h, n, &k->ndir, &k->reverse, acts, &clip));
    const sy_tensor *in[QRNN_NIN];
    for (uint32_t i = 0; i < QRNN_NIN; i++)
        in[i] = nin(h, n, i);
    const sy_tensor *x = in[0], *w = in[3], *r = in[6], *h0 = in[13], *b = in[11];
    int64_t H = k->hidden, D = k->ndir;
    const sy_tensor *y = h->node_num_outputs(n) ? h->node_output(n, 0) : NULL;
    if (!y && h->node_num_outputs(n) > 1)
        y = h->node_output(n, 1);
    SY_TRY(check_pair(h, tname(x, "X"), in[1], in[2], x->dtype, 0));
    SY_TRY(check_pair(h, tname(w, "W"), in[4], in[5], w->dtype, H));
    SY_TRY(check_pair(h, tname(r, "R"), in[7], in[8], r->dtype, H));
    SY_TRY(check_pair(h, tname(y, "Y"), in[9], in[10], p->ydt, 0));
    if (h0)
        SY_TRY(check_pair(h, tname(h0, "initial_h"), in[14], in[15], h0->dtype, 0));
    if (b && !b->data)
        return PERR(h, SY_ERR_UNSUPPORTED, "QRNN: B '%s' must be a constant (it is folded as int32)", tname(b, "B"));
    sy_rq_mode mode = def_mode;
    const char *rqs = NULL;
    size_t rql = 0;
    if (h->attr_string(n, "requant", &rqs, &rql)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)(rql < 31 ? rql : 31), rqs);
        if (!sy_rq_mode_parse(buf, &mode))
            return PERR(h, SY_ERR_INVALID_ARGUMENT, "QRNN: requant = \"%s\": expected \"onnx\", \"gemmlowp\" or \"single_rounding\"", buf);
    }
    int64_t nwz = in[5] ? sy_tensor_numel(in[5]) : 0, nrz = in[8] ? sy_tensor_numel(in[8]) : 0;
    size_t nrq = (size_t)(3 * D * H), bytes = nrq * sizeof(qk_rq) +
                                               (size_t)(nwz + nrz + D * H + D * QK_RNN_LUT + 4) * sizeof(int32_t);
    p->buf = calloc(1, bytes);
    if (!p->buf)
        return PERR(h, SY_ERR_OUT_OF_MEMORY, "out of memory");
    qk_rq *rqx = p->buf, *rqh = rqx + D * H, *rqh0 = rqh + D * H;
    int32_t *wz = (int32_t *)(rqh0 + D * H), *rz = wz + nwz, *bias = rz + nrz, *lut = bias + D * H;
    for (int64_t i = 0; i < nwz; i++)
        wz[i] = zat(in[5], i);
    for (int64_t i = 0; i < nrz; i++)
        rz[i] = zat(in[8], i);
    float sx = fat(in[1], 0), sy = fat(in[9], 0), sh0 = h0 ? fat(in[14], 0) : 0.0f;
    int32_t ylo, yhi;
    sy_q_storage_range(p->ydt, &ylo, &yhi);
    k->x_zp = zat(in[2], 0);
    k->y_zp = zat(in[10], 0);
    k->h0_zp = h0 ? zat(in[15], 0) : 0;
    k->y_lo = ylo;
    k->y_hi = yhi;
    for (int64_t d = 0; d < D; d++) {
        /* the pre-activation range [-A, A) in 65536 steps; see qk_rnn.c */
        double A = acts[d] == ACT_TANH ? 8.0 : acts[d] == ACT_SIGMOID ? 16.0 : (double)(yhi - k->y_zp + 1) * sy;
        double sp = A / 32768.0;
        for (int64_t c = 0; c < H; c++) {
            double sw = fat(in[4], c), sr = fat(in[7], c);
            rq_make(&rqx[d * H + c], mode, (double)sx * sw / sp);
            rq_make(&rqh[d * H + c], mode, (double)sy * sr / sp);
            rq_make(&rqh0[d * H + c], mode, (double)sh0 * sr / sp);
            if (b) {
                const float *bd = (const float *)b->data + d * 2 * H;
                double v = sy_rq_round_even(((double)bd[c] + (double)bd[H + c]) / ((double)sx * sw));
                bias[d * H + c] = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
            }
        }
        double cq = clip > 0.0f ? sy_rq_round_even((double)clip / sp) : 0.0;
        k->clip[d] = cq > (double)(1 << 24) ? 0 : (int32_t)cq; /* beyond the table: no effect */
        for (int32_t i = 0; i < QK_RNN_LUT; i++) {
            double v = sy_rq_round_even(act_f(acts[d], (double)(i * 256 - 32768) * sp) / sy * 256.0);
            lut[d * QK_RNN_LUT + i] = v > (double)(1 << 23) ? 1 << 23 : (v < -(double)(1 << 23) ? -(1 << 23) : (int32_t)v);
        }
    }
    k->n_wzp = (int32_t)nwz;
    k->n_rzp = (int32_t)nrz;
    k->w_zp = nwz ? wz : NULL;
    k->r_zp = nrz ? rz : NULL;
    k->bias = b ? bias : NULL;
    k->rq_x = rqx;
    k->rq_h = rqh;
    k->rq_h0 = h0 ? rqh0 : NULL;
    k->lut = lut;
    return NULL;
}

void qrnn_params_free(qrnn_params *p)
{
    if (p) {
        free(p->buf);
        p->buf = NULL;
    }
}
