/* qti_aisw QStatefulGRU / QStatefulLSTM: checks, kernel parameters and
 * the stateful runs (see qsrnn.h; the integer designs are
 * plugin_sdk/kernels/qk_gru.c and qk_lstm.c). */
#include "qsrnn.h"

#include "qk_gru.h"
#include "qk_lstm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define OP "QStatefulGRU"

enum { G_X = 0, G_W = 3, G_R = 6, G_YS = 9, G_B = 11, G_LENS = 12, G_H0 = 13, G_RESET = 16, G_NIN = 17 };

void qgru_set_host(const sy_host_api *host) { H = host; }

typedef struct qgru_state {
    qk_gru k;
    void *buf;            /* zero points, biases, requantizers, tables */
    int32_t *h;           /* carried state [ndir, batch, hidden], codes of Y */
    bool have_state;
    bool has_h0;
    int32_t h0_zp;
    qk_rq h0_to_y;        /* initial_h codes -> Y's codes */
    sy_dtype ydt;
    int64_t dims_y[4], dims_yh[3];
} qgru_state;

static const sy_tensor *nin(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}
static const char *tname(const sy_tensor *t, const char *def) { return t && t->name && t->name[0] ? t->name : def; }
static bool code_type(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8; }
static int32_t qkdt(sy_dtype dt) { return dt == SY_DT_UINT8 ? QK_U8 : QK_S8; }

/* What QStatefulGRU and QStatefulLSTM check alike: the direction, X / W / R
 * (int8 or uint8 codes, 3-D, W [ndir, gates * hidden, input], R [ndir,
 * gates * hidden, hidden]), the kernel's size range, B (float32 [ndir,
 * 2 * gates * hidden]), sequence_lens, initial_h, reset and y_zero_point. */
typedef struct rnn_dims {
    int32_t ndir, seq, batch, input, hidden, xdt, wdt, rdt;
    bool reverse;
    sy_dtype ydt;
} rnn_dims;

/* qk_gru and qk_lstm name these sizes alike: one assignment for both kernel structs */
#define RNN_SET_DIMS(k, g)                                                                                        \
    do {                                                                                                          \
        (k)->ndir = (g).ndir;                                                                                     \
        (k)->reverse = (g).reverse;                                                                               \
        (k)->seq = (g).seq;                                                                                       \
        (k)->batch = (g).batch;                                                                                   \
        (k)->input = (g).input;                                                                                   \
        (k)->hidden = (g).hidden;                                                                                 \
        (k)->xdt = (g).xdt;                                                                                       \
        (k)->wdt = (g).wdt;                                                                                       \
        (k)->rdt = (g).rdt;                                                                                       \
    } while (0)

static sy_status *rnn_shapes(const sy_node *n, const char *op, int64_t gates, rnn_dims *g)
{
    char dir[24];
    sy_attr_string_or(H, n, "direction", "forward", dir, sizeof dir);
    g->ndir = !strcmp(dir, "bidirectional") ? 2 : 1;
    g->reverse = !strcmp(dir, "reverse");
    if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s: direction must be forward, reverse or bidirectional; got \"%s\"", op,
                   dir);
    const sy_tensor *x = nin(n, G_X), *w = nin(n, G_W), *r = nin(n, G_R), *yz = nin(n, G_YS + 1), *b = nin(n, G_B),
                    *sl = nin(n, G_LENS), *h0 = nin(n, G_H0), *rs = nin(n, G_RESET);
    const sy_tensor *codes[4] = {x, w, r, h0};
    for (int i = 0; i < 4; i++)
        if (codes[i] && !code_type(codes[i]->dtype))
            return ERR(SY_ERR_TYPE, "%s: '%s' is %s; int8 or uint8 codes are required", op, tname(codes[i], "?"),
                       sy_dt_name(codes[i]->dtype));
    if (x->rank != 3 || w->rank != 3 || r->rank != 3)
        return ERR(SY_ERR_SHAPE, "%s: X, W and R must be 3-D (got ranks %d, %d, %d)", op, (int)x->rank, (int)w->rank,
                   (int)r->rank);
    int64_t hid = r->dims[2], hs = sy_attr_int_or(H, n, "hidden_size", hid);
    if (hs != hid || hid < 1)
        return ERR(SY_ERR_SHAPE, "%s: R '%s' has hidden size %lld but hidden_size = %lld", op, tname(r, "R"),
                   (long long)hid, (long long)hs);
    if (w->dims[0] != g->ndir || w->dims[1] != gates * hid || w->dims[2] != x->dims[2])
        return ERR(SY_ERR_SHAPE, "%s: W '%s' must be [%d, %lld, %lld]", op, tname(w, "W"), (int)g->ndir,
                   (long long)(gates * hid), (long long)x->dims[2]);
    if (r->dims[0] != g->ndir || r->dims[1] != gates * hid)
        return ERR(SY_ERR_SHAPE, "%s: R '%s' must be [%d, %lld, %lld]", op, tname(r, "R"), (int)g->ndir,
                   (long long)(gates * hid), (long long)hid);
    int64_t seq = x->dims[0], batch = x->dims[1];
    if (seq < 0 || batch < 0 || seq > INT32_MAX || batch > INT32_MAX || hid > 65535 || x->dims[2] > 65535)
        return ERR(SY_ERR_UNSUPPORTED, "%s: sizes out of the integer kernel's range (X [%lld, %lld, %lld], hidden %lld)",
                   op, (long long)seq, (long long)batch, (long long)x->dims[2], (long long)hid);
    if (b && (b->dtype != SY_DT_FLOAT32 || b->rank != 2 || b->dims[0] != g->ndir || b->dims[1] != 2 * gates * hid))
        return ERR(SY_ERR_SHAPE, "%s: B '%s' must be float32 [%d, %lld]", op, tname(b, "B"), (int)g->ndir,
                   (long long)(2 * gates * hid));
    if (sl && (sl->rank != 1 || sl->dims[0] != batch || (sl->dtype != SY_DT_INT32 && sl->dtype != SY_DT_INT64)))
        return ERR(SY_ERR_SHAPE, "%s: sequence_lens '%s' must be int32 [%lld]", op, tname(sl, "sequence_lens"),
                   (long long)batch);
    if (h0 && (h0->rank != 3 || h0->dims[0] != g->ndir || h0->dims[1] != batch || h0->dims[2] != hid))
        return ERR(SY_ERR_SHAPE, "%s: initial_h '%s' must be [%d, %lld, %lld]", op, tname(h0, "initial_h"),
                   (int)g->ndir, (long long)batch, (long long)hid);
    if (rs && (rs->dtype != SY_DT_BOOL || sy_tensor_numel(rs) != 1))
        return ERR(SY_ERR_TYPE, "%s: reset '%s' must be a bool scalar", op, tname(rs, "reset"));
    if (yz && !code_type(yz->dtype))
        return ERR(SY_ERR_TYPE, "%s: y_zero_point '%s' is %s; int8 or uint8 is required", op, tname(yz, "?"),
                   sy_dt_name(yz->dtype));
    g->seq = (int32_t)seq;
    g->batch = (int32_t)batch;
    g->input = (int32_t)x->dims[2];
    g->hidden = (int32_t)hid;
    g->xdt = qkdt(x->dtype);
    g->wdt = qkdt(w->dtype);
    g->rdt = qkdt(r->dtype);
    g->ydt = yz ? yz->dtype : SY_DT_UINT8; /* QuantizeLinear's default */
    return NULL;
}

/* the attributes both build alike: clip (> 0 when given; -1 when absent)
 * and requant, the requantization form (onnx when absent) */
static sy_status *rnn_attrs(const sy_node *n, const char *op, float *clip, sy_rq_mode *mode)
{
    *clip = -1.0f;
    if (H->attr_float(n, "clip", clip) && !(*clip > 0.0f))
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s: clip must be > 0, got %g", op, (double)*clip);
    *mode = SY_RQ_ONNX;
    const char *rqs = NULL;
    size_t rql = 0;
    if (H->attr_string(n, "requant", &rqs, &rql)) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.*s", (int)(rql < 31 ? rql : 31), rqs);
        if (!sy_rq_mode_parse(buf, mode))
            return ERR(SY_ERR_INVALID_ARGUMENT, "%s: requant = \"%s\": expected \"onnx\", \"gemmlowp\" or "
                                                "\"single_rounding\"", op, buf);
    }
    return NULL;
}

/* sequence_lens at run time into lens[batch], each within [0, seq] */
static sy_status *rnn_lens(const char *op, const sy_tensor *sl, int32_t batch, int32_t seq, int32_t *lens)
{
    for (int32_t b = 0; b < batch; b++) {
        int64_t v = sl->dtype == SY_DT_INT64 ? ((const int64_t *)sl->data)[b] : ((const int32_t *)sl->data)[b];
        if (v < 0 || v > seq)
            return ERR(SY_ERR_INVALID_ARGUMENT, "%s: sequence_lens '%s'[%d] = %lld is outside [0, %d]", op,
                       tname(sl, "sequence_lens"), (int)b, (long long)v, (int)seq);
        lens[b] = (int32_t)v;
    }
    return NULL;
}

/* shapes, element types and attributes (infer and prepare) */
static sy_status *shapes(const sy_node *n, qgru_state *s)
{
    qk_gru *k = &s->k;
    k->lbr = sy_attr_int_or(H, n, "linear_before_reset", 0) != 0;
    if (!nin(n, G_X) || !nin(n, G_W) || !nin(n, G_R) || !nin(n, G_YS))
        return ERR(SY_ERR_INVALID_ARGUMENT, OP ": X, W, R and y_scale are required");
    rnn_dims g;
    SY_TRY(rnn_shapes(n, OP, 3, &g));
    RNN_SET_DIMS(k, g);
    s->ydt = g.ydt;
    k->ydt = qkdt(s->ydt);
    int64_t dy[4] = {g.seq, g.ndir, g.batch, g.hidden}, dyh[3] = {g.ndir, g.batch, g.hidden};
    memcpy(s->dims_y, dy, sizeof dy);
    memcpy(s->dims_yh, dyh, sizeof dyh);
    return NULL;
}

sy_status *qgru_infer(sy_node *n)
{
    qgru_state s;
    memset(&s, 0, sizeof s);
    SY_TRY(shapes(n, &s));
    uint32_t no = H->node_num_outputs(n);
    if (no > 0)
        SY_TRY(H->node_set_output(n, 0, s.ydt, 4, s.dims_y));
    if (no > 1)
        SY_TRY(H->node_set_output(n, 1, s.ydt, 3, s.dims_yh));
    return NULL;
}

/* (scale, zero point) of tensor `xn` (codes of type qdt): constants,
 * float32, 1 or axis_len entries, scales positive and finite, zero points
 * of the codes' type and inside its range */
static sy_status *check_pair(const char *xn, const sy_tensor *sc, const sy_tensor *z, sy_dtype qdt, int64_t axis_len)
{
    if (!sc)
        return ERR(SY_ERR_INVALID_MODEL, OP ": tensor '%s': the scale is missing", xn);
    const char *sn = tname(sc, "?");
    if (sc->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, OP ": tensor '%s': scale '%s' has dtype %s; float32 is required", xn, sn,
                   sy_dt_name(sc->dtype));
    int64_t ns = sy_tensor_numel(sc);
    if (ns != 1 && (axis_len <= 0 || ns != axis_len))
        return ERR(SY_ERR_SHAPE, OP ": tensor '%s': scale '%s' has %lld elements; 1%s expected", xn, sn, (long long)ns,
                   axis_len > 0 ? " or one per gate row" : "");
    if (!sc->data || (z && !z->data))
        return ERR(SY_ERR_UNSUPPORTED, OP ": tensor '%s': the quantization parameters must be constants", xn);
    for (int64_t i = 0; i < ns; i++) {
        float v = ((const float *)sc->data)[i];
        if (!(v > 0.0f) || !isfinite(v))
            return ERR(SY_ERR_INVALID_MODEL, OP ": tensor '%s': scale '%s'[%lld] = %g; a scale must be positive and finite",
                       xn, sn, (long long)i, (double)v);
    }
    if (z) {
        if (sy_tensor_numel(z) != ns || z->dtype != qdt)
            return ERR(SY_ERR_TYPE, OP ": tensor '%s': zero point '%s' must be %s with %lld elements (is %s, %lld)", xn,
                       tname(z, "?"), sy_dt_name(qdt), (long long)ns, sy_dt_name(z->dtype),
                       (long long)sy_tensor_numel(z));
        int32_t lo, hi;
        sy_q_storage_range(qdt, &lo, &hi);
        for (int64_t i = 0; i < ns; i++) {
            int32_t v = sy_q_load(z->data, z->dtype, (size_t)i);
            if (v < lo || v > hi)
                return ERR(SY_ERR_INVALID_MODEL, OP ": tensor '%s': zero point '%s'[%lld] = %d is outside [%d, %d]", xn,
                           tname(z, "?"), (long long)i, v, lo, hi);
        }
    }
    return NULL;
}

static float fat(const sy_tensor *sc, int64_t i) { return ((const float *)sc->data)[sy_tensor_numel(sc) > 1 ? i : 0]; }
static int32_t zat(const sy_tensor *z, int64_t i)
{
    return z ? sy_q_load(z->data, z->dtype, (size_t)(sy_tensor_numel(z) > 1 ? i : 0)) : 0;
}

static void rq_make(qk_rq *q, sy_rq_mode mode, double real_mult, int32_t zp, int32_t lo, int32_t hi)
{
    sy_requant r;
    sy_rq_init(&r, mode, real_mult, zp, lo, hi);
    q->mode = (int32_t)mode; /* QK_RQ_* are the sy_rq_mode values */
    q->real_mult = r.real_mult;
    q->mult = r.mult;
    q->shift = r.shift;
    q->zp = r.zp;
    q->lo = r.lo;
    q->hi = r.hi;
}

static int32_t sat_i32(double v, double lim) { return v > lim ? (int32_t)lim : (v < -lim ? (int32_t)-lim : (int32_t)v); }

/* the pre-activation ranges [-A, A) of qk_rnn: beyond them sigmoid and tanh
 * are flat to far below an output step */
#define A_SIGMOID 16.0
#define A_TANH 8.0

/* What both builds check alike, in this order: the (scale, zero point)
 * pairs of X, W and R (rows: per gate row) and of Y (y: output 0, else 1,
 * of codes ydt). */
static sy_status *check_xwry(const sy_tensor *const *in, const sy_tensor *y, sy_dtype ydt, int64_t rows)
{
    const sy_tensor *x = in[G_X], *w = in[G_W], *r = in[G_R];
    SY_TRY(check_pair(tname(x, "X"), in[1], in[2], x->dtype, 0));
    SY_TRY(check_pair(tname(w, "W"), in[4], in[5], w->dtype, rows));
    SY_TRY(check_pair(tname(r, "R"), in[7], in[8], r->dtype, rows));
    return check_pair(tname(y, "Y"), in[9], in[10], ydt, 0);
}

/* the zero points of W and R, one per entry of their zero-point tensors */
static void load_zps(const sy_tensor *const *in, int32_t *wz, int64_t nwz, int32_t *rz, int64_t nrz)
{
    for (int64_t i = 0; i < nwz; i++)
        wz[i] = zat(in[5], i);
    for (int64_t i = 0; i < nrz; i++)
        rz[i] = zat(in[8], i);
}

/* clip in the sigmoid and tanh pre-activation units; 0 (no effect) when
 * absent or beyond the tables */
static void clip_units(float clip, double sp_s, double sp_t, int32_t *clip_s, int32_t *clip_t)
{
    const double lim = (double)(1 << 24);
    double cs = clip > 0.0f ? sy_rq_round_even((double)clip / sp_s) : 0.0,
           ct = clip > 0.0f ? sy_rq_round_even((double)clip / sp_t) : 0.0;
    *clip_s = cs > lim ? 0 : (int32_t)cs;
    *clip_t = ct > lim ? 0 : (int32_t)ct;
}

/* table entry i of the sigmoid (Q15 gate * 256) and of tanh in the codes of
 * an output of scale s (f / s * 256, within 2^23) */
static int32_t lut_sigmoid(int32_t i, double sp_s)
{
    double p = (double)(i * 256 - 32768);
    return (int32_t)sy_rq_round_even(1.0 / (1.0 + exp(-p * sp_s)) * 8388608.0);
}

static int32_t lut_tanh(int32_t i, double sp_t, double s)
{
    double p = (double)(i * 256 - 32768);
    return sat_i32(sy_rq_round_even(tanh(p * sp_t) / s * 256.0), 8388608.0);
}

/* The start of both runs: sequence_lens into *lens (after the kernel's
 * scratch of scratch_ints int32s; NULL when absent) and whether the carried
 * state starts again (reset given and true, or no state yet). */
static sy_status *run_start(const char *op, const sy_kernel_io *io, int32_t batch, int32_t seq, size_t scratch_ints,
                            bool have_state, int32_t **lens, bool *restart)
{
    const sy_tensor *sl = io->n_inputs > G_LENS ? io->inputs[G_LENS] : NULL,
                    *rs = io->n_inputs > G_RESET ? io->inputs[G_RESET] : NULL;
    *lens = NULL;
    if (sl) {
        *lens = (int32_t *)io->scratch + scratch_ints;
        SY_TRY(rnn_lens(op, sl, batch, seq, *lens));
    }
    bool reset = rs && rs->data && *(const uint8_t *)rs->data;
    *restart = reset || !have_state;
    return NULL;
}

/* element i of a carried state at a (re)start: the initial state's code
 * requantized by to_state (when given), else the code of 0 */
static int32_t start_code(const sy_tensor *t0, bool has_t0, const qk_rq *to_state, int32_t t0_zp, size_t i,
                          int32_t zero_code)
{
    return t0 && has_t0 ? qk_rq_apply(to_state, (int64_t)sy_q_load(t0->data, t0->dtype, i) - t0_zp) : zero_code;
}

static sy_status *build(const sy_node *n, qgru_state *s)
{
    SY_TRY(shapes(n, s));
    qk_gru *k = &s->k;
    const sy_tensor *in[G_NIN];
    for (uint32_t i = 0; i < G_NIN; i++)
        in[i] = nin(n, i);
    const sy_tensor *w = in[G_W], *r = in[G_R], *h0 = in[G_H0], *b = in[G_B];
    const int64_t Hd = k->hidden, D = k->ndir, G3 = 3 * Hd;
    const sy_tensor *y = H->node_num_outputs(n) ? H->node_output(n, 0) : NULL;
    if (!y && H->node_num_outputs(n) > 1)
        y = H->node_output(n, 1);
    SY_TRY(check_xwry(in, y, s->ydt, G3));
    if (h0)
        SY_TRY(check_pair(tname(h0, "initial_h"), in[14], in[15], h0->dtype, 0));
    if (b && !b->data)
        return ERR(SY_ERR_UNSUPPORTED, OP ": B '%s' must be a constant (it is folded as int32)", tname(b, "B"));
    if (!w->data || !r->data)
        return ERR(SY_ERR_UNSUPPORTED, OP ": W '%s' and R '%s' must be constants", tname(w, "W"), tname(r, "R"));
    float clip;
    sy_rq_mode mode;
    SY_TRY(rnn_attrs(n, OP, &clip, &mode));
    const float sx = fat(in[1], 0), sy = fat(in[9], 0);
    /* the tanh table holds f / s_y * 256 in int32 with 2^23 of range */
    if (sy < 1.0f / 32768.0f)
        return ERR(SY_ERR_UNSUPPORTED, OP ": y_scale '%s' = %g is below 2^-15, the smallest the integer cell takes",
                   tname(in[9], "y_scale"), (double)sy);
    int64_t nwz = in[5] ? sy_tensor_numel(in[5]) : 0, nrz = in[8] ? sy_tensor_numel(in[8]) : 0;
    size_t nst = (size_t)(D * k->batch * Hd);
    size_t bytes = (size_t)(2 * D * G3) * sizeof(qk_rq) +
                   (size_t)(nwz + nrz + D * G3 + D * Hd + 2 * QK_RNN_LUT + 4) * sizeof(int32_t);
    s->buf = calloc(1, bytes);
    s->h = calloc(nst ? nst : 1, sizeof(int32_t));
    if (!s->buf || !s->h)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    qk_rq *rqx = s->buf, *rqh = rqx + D * G3;
    int32_t *wz = (int32_t *)(rqh + D * G3), *rz = wz + nwz, *bx = rz + nrz, *bh = bx + D * G3, *lut_s = bh + D * Hd,
            *lut_t = lut_s + QK_RNN_LUT;
    load_zps(in, wz, nwz, rz, nrz);
    int32_t ylo, yhi;
    sy_q_storage_range(s->ydt, &ylo, &yhi);
    k->x_zp = zat(in[2], 0);
    k->y_zp = zat(in[10], 0);
    k->y_lo = ylo;
    k->y_hi = yhi;
    const double sp_s = A_SIGMOID / 32768.0, sp_t = A_TANH / 32768.0;
    for (int64_t d = 0; d < D; d++)
        for (int64_t row = 0; row < G3; row++) {
            const double sp = row < 2 * Hd ? sp_s : sp_t, sw = fat(in[4], row), sr = fat(in[7], row);
            const size_t dr = (size_t)(d * G3 + row);
            /* the pre-activation keeps 2^24 units of headroom either side */
            rq_make(&rqx[dr], mode, (double)sx * sw / sp, 0, -(1 << 24), 1 << 24);
            rq_make(&rqh[dr], mode, (double)sy * sr / sp, 0, -(1 << 24), 1 << 24);
            if (b) {
                const float *bd = (const float *)b->data + d * 6 * Hd; /* Wb[z r h], Rb[z r h] */
                bool r_inside = k->lbr && row >= 2 * Hd; /* Rbh sits inside r (.) (...) */
                double v = (double)bd[row] + (r_inside ? 0.0 : (double)bd[G3 + row]);
                bx[dr] = sat_i32(sy_rq_round_even(v / ((double)sx * sw)), 2147483647.0);
                if (r_inside)
                    bh[d * Hd + row - 2 * Hd] = sat_i32(sy_rq_round_even((double)bd[G3 + row] / ((double)sy * sr)),
                                                        2147483647.0);
            }
        }
    clip_units(clip, sp_s, sp_t, &k->clip_s, &k->clip_t);
    for (int32_t i = 0; i < QK_RNN_LUT; i++) {
        lut_s[i] = lut_sigmoid(i, sp_s);
        lut_t[i] = lut_tanh(i, sp_t, sy);
    }
    k->n_wzp = (int32_t)nwz;
    k->n_rzp = (int32_t)nrz;
    k->w_zp = nwz ? wz : NULL;
    k->r_zp = nrz ? rz : NULL;
    k->bias_x = b ? bx : NULL;
    k->bias_h = b && k->lbr ? bh : NULL;
    k->rq_x = rqx;
    k->rq_h = rqh;
    k->lut_s = lut_s;
    k->lut_t = lut_t;
    s->has_h0 = h0 != NULL;
    if (h0) { /* the carried state is Y's codes: initial_h is requantized into them once per (re)start */
        s->h0_zp = zat(in[15], 0);
        rq_make(&s->h0_to_y, mode, (double)fat(in[14], 0) / (double)sy, k->y_zp, ylo, yhi);
    }
    return NULL;
}

void qgru_release(void *state)
{
    qgru_state *s = state;
    if (!s)
        return;
    free(s->buf);
    free(s->h);
    free(s);
}

void qgru_reset(void *state) { ((qgru_state *)state)->have_state = false; }

sy_status *qgru_prepare(sy_node *n, void **state)
{
    qgru_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *err = build(n, s);
    if (err) {
        qgru_release(s);
        return err;
    }
    /* scratch: the gates z, r, r (.) H and the next state (4 * hidden), valid lengths (batch) */
    H->node_set_scratch(n, (QK_GRU_SCRATCH(s->k.hidden) + (size_t)s->k.batch + 4) * sizeof(int32_t));
    *state = s;
    return NULL;
}

sy_status *qgru_run(void *state, const sy_kernel_io *io)
{
    qgru_state *s = state;
    const qk_gru *k = &s->k;
    const sy_tensor *h0 = io->n_inputs > G_H0 ? io->inputs[G_H0] : NULL;
    int32_t *scratch = io->scratch, *lens;
    size_t nst = (size_t)k->ndir * (size_t)k->batch * (size_t)k->hidden;
    bool restart;
    SY_TRY(run_start(OP, io, k->batch, k->seq, QK_GRU_SCRATCH(k->hidden), s->have_state, &lens, &restart));
    if (restart) { /* initial_h (in Y's codes) or zeros: the code of 0 */
        for (size_t i = 0; i < nst; i++)
            s->h[i] = start_code(h0, s->has_h0, &s->h0_to_y, s->h0_zp, i, k->y_zp);
    }
    sy_tensor *y = io->n_outputs > 0 ? io->outputs[0] : NULL, *yh = io->n_outputs > 1 ? io->outputs[1] : NULL;
    qk_gru_run(k, io->inputs[G_X]->data, io->inputs[G_W]->data, io->inputs[G_R]->data, lens, s->h,
               y ? y->data : NULL, yh ? yh->data : NULL, scratch);
    s->have_state = true;
    return NULL;
}

/* ======================================================================== */
/* QStatefulLSTM                                                            */
/* ======================================================================== */
#undef OP
#define OP "QStatefulLSTM"
enum { L_CS = 17, L_C0 = 19, L_P = 22, L_NIN = 23 };

typedef struct qlstm_state {
    qk_lstm k;
    void *buf;
    int32_t *h, *c; /* carried states [ndir, batch, hidden]: codes of Y_h, Y_c */
    bool have_state, has_h0, has_c0;
    int32_t h0_zp, c0_zp;
    qk_rq h0_to_y, c0_to_c;
    sy_dtype ydt, cdt;
    int64_t dims_y[4], dims_yh[3];
} qlstm_state;

static sy_status *lshapes(const sy_node *n, qlstm_state *s)
{
    qk_lstm *k = &s->k;
    k->input_forget = sy_attr_int_or(H, n, "input_forget", 0) != 0;
    if (!nin(n, G_X) || !nin(n, G_W) || !nin(n, G_R) || !nin(n, G_YS) || !nin(n, L_CS))
        return ERR(SY_ERR_INVALID_ARGUMENT, OP ": X, W, R, y_scale and c_scale are required");
    rnn_dims g;
    SY_TRY(rnn_shapes(n, OP, 4, &g));
    const sy_tensor *cz = nin(n, L_CS + 1), *c0 = nin(n, L_C0), *pp = nin(n, L_P);
    if (c0 && !code_type(c0->dtype))
        return ERR(SY_ERR_TYPE, OP ": '%s' is %s; int8 or uint8 codes are required", tname(c0, "?"),
                   sy_dt_name(c0->dtype));
    const int64_t hid = g.hidden;
    if (pp && (pp->dtype != SY_DT_FLOAT32 || pp->rank != 2 || pp->dims[0] != g.ndir || pp->dims[1] != 3 * hid))
        return ERR(SY_ERR_SHAPE, OP ": P '%s' must be float32 [%d, %lld]", tname(pp, "P"), (int)g.ndir,
                   (long long)(3 * hid));
    if (c0 && (c0->rank != 3 || c0->dims[0] != g.ndir || c0->dims[1] != g.batch || c0->dims[2] != hid))
        return ERR(SY_ERR_SHAPE, OP ": initial_c '%s' must be [%d, %lld, %lld]", tname(c0, "?"), (int)g.ndir,
                   (long long)g.batch, (long long)hid);
    if (cz && !code_type(cz->dtype))
        return ERR(SY_ERR_TYPE, OP ": c_zero_point '%s' is %s; int8 or uint8 is required", tname(cz, "?"),
                   sy_dt_name(cz->dtype));
    RNN_SET_DIMS(k, g);
    s->ydt = g.ydt;
    s->cdt = cz ? cz->dtype : SY_DT_UINT8; /* QuantizeLinear's default */
    k->ydt = qkdt(s->ydt);
    k->cdt = qkdt(s->cdt);
    int64_t dy[4] = {g.seq, g.ndir, g.batch, hid}, dyh[3] = {g.ndir, g.batch, hid};
    memcpy(s->dims_y, dy, sizeof dy);
    memcpy(s->dims_yh, dyh, sizeof dyh);
    return NULL;
}

sy_status *qlstm_infer(sy_node *n)
{
    qlstm_state s;
    memset(&s, 0, sizeof s);
    SY_TRY(lshapes(n, &s));
    uint32_t no = H->node_num_outputs(n);
    if (no > 0)
        SY_TRY(H->node_set_output(n, 0, s.ydt, 4, s.dims_y));
    if (no > 1)
        SY_TRY(H->node_set_output(n, 1, s.ydt, 3, s.dims_yh));
    if (no > 2)
        SY_TRY(H->node_set_output(n, 2, s.cdt, 3, s.dims_yh));
    return NULL;
}

static sy_status *lbuild(const sy_node *n, qlstm_state *s)
{
    SY_TRY(lshapes(n, s));
    qk_lstm *k = &s->k;
    const sy_tensor *in[L_NIN];
    for (uint32_t i = 0; i < L_NIN; i++)
        in[i] = nin(n, i);
    const sy_tensor *w = in[G_W], *r = in[G_R], *h0 = in[G_H0], *c0 = in[L_C0], *b = in[G_B],
                    *pp = in[L_P];
    const int64_t Hd = k->hidden, D = k->ndir, G4 = 4 * Hd;
    uint32_t no = H->node_num_outputs(n);
    const sy_tensor *y = no ? H->node_output(n, 0) : NULL, *yc = no > 2 ? H->node_output(n, 2) : NULL;
    if (!y && no > 1)
        y = H->node_output(n, 1);
    SY_TRY(check_xwry(in, y, s->ydt, G4));
    SY_TRY(check_pair(tname(yc, "Y_c"), in[L_CS], in[L_CS + 1], s->cdt, 0));
    if (h0)
        SY_TRY(check_pair(tname(h0, "initial_h"), in[14], in[15], h0->dtype, 0));
    if (c0)
        SY_TRY(check_pair(tname(c0, "initial_c"), in[L_C0 + 1], in[L_C0 + 2], c0->dtype, 0));
    if ((b && !b->data) || (pp && !pp->data))
        return ERR(SY_ERR_UNSUPPORTED, OP ": B and P must be constants (they are folded as integers)");
    if (!w->data || !r->data)
        return ERR(SY_ERR_UNSUPPORTED, OP ": W '%s' and R '%s' must be constants", tname(w, "W"), tname(r, "R"));
    float clip;
    sy_rq_mode mode;
    SY_TRY(rnn_attrs(n, OP, &clip, &mode));
    const float sx = fat(in[1], 0), sy = fat(in[9], 0), sc = fat(in[L_CS], 0);
    if (sy < 1.0f / 32768.0f || sc < 1.0f / 32768.0f) /* the tanh tables hold f / s * 256 with 2^23 of range */
        return ERR(SY_ERR_UNSUPPORTED, OP ": y_scale %g / c_scale %g below 2^-15, the smallest the integer cell takes",
                   (double)sy, (double)sc);
    int64_t nwz = in[5] ? sy_tensor_numel(in[5]) : 0, nrz = in[8] ? sy_tensor_numel(in[8]) : 0;
    size_t nst = (size_t)(D * k->batch * Hd);
    size_t bytes = (size_t)(2 * D * G4) * sizeof(qk_rq) +
                   (size_t)(nwz + nrz + D * G4 + 3 * D * Hd + 3 * QK_RNN_LUT + 4) * sizeof(int32_t);
    s->buf = calloc(1, bytes);
    s->h = calloc(nst ? nst : 1, sizeof(int32_t));
    s->c = calloc(nst ? nst : 1, sizeof(int32_t));
    if (!s->buf || !s->h || !s->c)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    qk_rq *rqx = s->buf, *rqh = rqx + D * G4;
    int32_t *wz = (int32_t *)(rqh + D * G4), *rz = wz + nwz, *bx = rz + nrz, *pk = bx + D * G4, *lut_s = pk + 3 * D * Hd,
            *lut_tc = lut_s + QK_RNN_LUT, *lut_th = lut_tc + QK_RNN_LUT;
    load_zps(in, wz, nwz, rz, nrz);
    sy_q_storage_range(s->ydt, &k->y_lo, &k->y_hi);
    sy_q_storage_range(s->cdt, &k->c_lo, &k->c_hi);
    k->x_zp = zat(in[2], 0);
    k->y_zp = zat(in[10], 0);
    k->c_zp = zat(in[L_CS + 1], 0);
    const double sp_s = A_SIGMOID / 32768.0, sp_t = A_TANH / 32768.0;
    for (int64_t d = 0; d < D; d++) {
        for (int64_t row = 0; row < G4; row++) {
            const double sp = row < 3 * Hd ? sp_s : sp_t, sw = fat(in[4], row), sr = fat(in[7], row); /* i o f: sigmoid */
            const size_t dr = (size_t)(d * G4 + row);
            rq_make(&rqx[dr], mode, (double)sx * sw / sp, 0, -(1 << 24), 1 << 24);
            rq_make(&rqh[dr], mode, (double)sy * sr / sp, 0, -(1 << 24), 1 << 24);
            if (b) {
                const float *bd = (const float *)b->data + d * 8 * Hd; /* Wb[i o f c], Rb[i o f c] */
                bx[dr] = sat_i32(sy_rq_round_even(((double)bd[row] + (double)bd[G4 + row]) / ((double)sx * sw)),
                                 2147483647.0);
            }
        }
        for (int64_t i = 0; pp && i < 3 * Hd; i++) /* P (.) C in sigmoid units, 16 fraction bits */
            pk[d * 3 * Hd + i] = sat_i32(sy_rq_round_even((double)((const float *)pp->data)[d * 3 * Hd + i] * sc / sp_s * 65536.0),
                                         1073741824.0);
    }
    clip_units(clip, sp_s, sp_t, &k->clip_s, &k->clip_t);
    rq_make(&k->rq_c, mode, (double)sc / sp_t, 0, -(1 << 24), 1 << 24);
    for (int32_t i = 0; i < QK_RNN_LUT; i++) {
        lut_s[i] = lut_sigmoid(i, sp_s);
        lut_tc[i] = lut_tanh(i, sp_t, sc);
        lut_th[i] = lut_tanh(i, sp_t, sy);
    }
    k->n_wzp = (int32_t)nwz;
    k->n_rzp = (int32_t)nrz;
    k->w_zp = nwz ? wz : NULL;
    k->r_zp = nrz ? rz : NULL;
    k->bias_x = b ? bx : NULL;
    k->peep = pp ? pk : NULL;
    k->rq_x = rqx;
    k->rq_h = rqh;
    k->lut_s = lut_s;
    k->lut_tc = lut_tc;
    k->lut_th = lut_th;
    s->has_h0 = h0 != NULL;
    s->has_c0 = c0 != NULL;
    if (h0) {
        s->h0_zp = zat(in[15], 0);
        rq_make(&s->h0_to_y, mode, (double)fat(in[14], 0) / (double)sy, k->y_zp, k->y_lo, k->y_hi);
    }
    if (c0) {
        s->c0_zp = zat(in[L_C0 + 2], 0);
        rq_make(&s->c0_to_c, mode, (double)fat(in[L_C0 + 1], 0) / (double)sc, k->c_zp, k->c_lo, k->c_hi);
    }
    return NULL;
}

void qlstm_release(void *state)
{
    qlstm_state *s = state;
    if (!s)
        return;
    free(s->buf);
    free(s->h);
    free(s->c);
    free(s);
}

void qlstm_reset(void *state) { ((qlstm_state *)state)->have_state = false; }

sy_status *qlstm_prepare(sy_node *n, void **state)
{
    qlstm_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *err = lbuild(n, s);
    if (err) {
        qlstm_release(s);
        return err;
    }
    H->node_set_scratch(n, (QK_LSTM_SCRATCH(s->k.hidden) + (size_t)s->k.batch + 4) * sizeof(int32_t));
    *state = s;
    return NULL;
}

sy_status *qlstm_run(void *state, const sy_kernel_io *io)
{
    qlstm_state *s = state;
    const qk_lstm *k = &s->k;
    const sy_tensor *h0 = io->n_inputs > G_H0 ? io->inputs[G_H0] : NULL,
                    *c0 = io->n_inputs > L_C0 ? io->inputs[L_C0] : NULL;
    int32_t *scratch = io->scratch, *lens;
    size_t nst = (size_t)k->ndir * (size_t)k->batch * (size_t)k->hidden;
    bool restart;
    SY_TRY(run_start(OP, io, k->batch, k->seq, QK_LSTM_SCRATCH(k->hidden), s->have_state, &lens, &restart));
    if (restart) /* initial_h / initial_c in Y_h's / Y_c's codes, or the codes of 0 */
        for (size_t i = 0; i < nst; i++) {
            s->h[i] = start_code(h0, s->has_h0, &s->h0_to_y, s->h0_zp, i, k->y_zp);
            s->c[i] = start_code(c0, s->has_c0, &s->c0_to_c, s->c0_zp, i, k->c_zp);
        }
    sy_tensor *y = io->n_outputs > 0 ? io->outputs[0] : NULL, *yh = io->n_outputs > 1 ? io->outputs[1] : NULL,
              *yc = io->n_outputs > 2 ? io->outputs[2] : NULL;
    qk_lstm_run(k, io->inputs[G_X]->data, io->inputs[G_W]->data, io->inputs[G_R]->data, lens, s->h, s->c,
                y ? y->data : NULL, yh ? yh->data : NULL, yc ? yc->data : NULL, scratch);
    s->have_state = true;
    return NULL;
}
