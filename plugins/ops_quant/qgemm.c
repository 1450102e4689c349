/*
 * ops_quant: integer convolution and matrix multiplication.
 *
 *   QLinearConv (10), ConvInteger (10)              ONNX
 *   QLinearMatMul (10, 21), MatMulInteger (10)      ONNX
 *   QConv, QMatMul (switchyard.quant 1)             what the QDQ pass folds
 *                                                   DQ -> Conv/Gemm/MatMul [-> Relu/Clip] -> Q into
 *
 * 8-bit activations with 8-bit (or 4-bit) weights take the fast path: codes
 * minus zero points as int16 (|v| <= 255), packed once per run, then the
 * SDK's integer GEMM sy_qgemm_s16 (dot products of K-contiguous rows, which
 * compilers turn into widening multiply-adds) over im2row tiles of ~64 KiB;
 * depthwise convolutions (one input channel per group) run as a direct loop
 * of sy_qgemm_mac_row taps instead. Accumulators are int32 modulo 2^32, so
 * results are bit-identical to the plain loop whatever the order. Other codes
 * (16-bit activations) keep the plain int32 loop (gemm_i32).
 *
 * Then either the raw int32 accumulator (*Integer) or requantization per
 * output channel (Conv) or column (MatMul) through sy_rq_apply_n (ONNX float
 * form or gemmlowp fixed-point form; folded Relu/Clip become the clamp).
 * Bias: int32 (scale s_x * s_w) or float, quantized here with that scale.
 * tests/quant/test_qgemm_fast.c checks the fast path against plain loops.
 */
#include "quant_internal.h"

/* ======================================================================== */
/* shared small helpers                                                     */
/* ======================================================================== */

void q_store_codes(void *y, sy_dtype dt, size_t off, const int32_t *v, size_t n) { sy_q_store_n(y, dt, off, v, n); }

void q_load_centered(const void *x, sy_dtype dt, size_t off, size_t n, int32_t zp, int32_t *out)
{
    switch (dt) {
    case SY_DT_INT8:
        for (size_t i = 0; i < n; i++)
            out[i] = (int32_t)((const int8_t *)x)[off + i] - zp;
        break;
    case SY_DT_UINT8:
        for (size_t i = 0; i < n; i++)
            out[i] = (int32_t)((const uint8_t *)x)[off + i] - zp;
        break;
    case SY_DT_INT16:
        for (size_t i = 0; i < n; i++)
            out[i] = (int32_t)((const int16_t *)x)[off + i] - zp;
        break;
    case SY_DT_UINT16:
        for (size_t i = 0; i < n; i++)
            out[i] = (int32_t)((const uint16_t *)x)[off + i] - zp;
        break;
    default:
        for (size_t i = 0; i < n; i++)
            out[i] = (int32_t)((uint32_t)sy_q_load(x, dt, off + i) - (uint32_t)zp);
        break;
    }
}

/* ======================================================================== */
/* window geometry                                                          */
/* ======================================================================== */

sy_status *q_win_compute(const sy_node *n, const sy_tensor *x, const int64_t *kernel, int32_t nk, q_win *g)
{
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > 2)
        return QERR(SY_ERR_UNSUPPORTED, "input '%s' has rank %d; the integer kernels take 1 or 2 spatial dims",
                    x->name ? x->name : "?", (int)x->rank);
    if (nk != nsp)
        return QERR(SY_ERR_SHAPE, "kernel has %d spatial dims but the input has %d", (int)nk, (int)nsp);
    int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0};
    int64_t c = sy_attr_ints_copy(H, n, "strides", st, 2);
    if (c >= 0 && c != nsp)
        return QERR(SY_ERR_SHAPE, "strides has %lld values, %d expected", (long long)c, (int)nsp);
    c = sy_attr_ints_copy(H, n, "dilations", dl, 2);
    if (c >= 0 && c != nsp)
        return QERR(SY_ERR_SHAPE, "dilations has %lld values, %d expected", (long long)c, (int)nsp);
    c = sy_attr_ints_copy(H, n, "pads", pd, 4);
    if (c >= 0 && c != 2 * nsp)
        return QERR(SY_ERR_SHAPE, "pads has %lld values, %d expected", (long long)c, 2 * (int)nsp);
    bool ceil_mode = sy_attr_int_or(H, n, "ceil_mode", 0) != 0;
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    int mode = !strcmp(ap, "NOTSET") ? 0 : !strcmp(ap, "VALID") ? 1 : !strcmp(ap, "SAME_UPPER") ? 2
                                                                      : !strcmp(ap, "SAME_LOWER") ? 3 : -1;
    if (mode < 0)
        return QERR(SY_ERR_INVALID_ARGUMENT, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID; got \"%s\"",
                    ap);
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    int32_t off = 2 - nsp;
    for (int32_t j = 0; j < 2; j++) {
        g->in[j] = g->out[j] = g->k[j] = g->s[j] = g->d[j] = 1;
    }
    for (int32_t i = 0; i < nsp; i++) {
        int32_t j = off + i;
        g->in[j] = x->dims[2 + i];
        g->k[j] = kernel[i];
        g->s[j] = st[i];
        g->d[j] = dl[i];
        if (g->k[j] < 1 || g->s[j] < 1 || g->d[j] < 1)
            return QERR(SY_ERR_INVALID_ARGUMENT, "kernel, strides and dilations must be >= 1 (spatial axis %d)",
                        (int)i);
        int64_t ek = (g->k[j] - 1) * g->d[j] + 1;
        if (mode == 0 || mode == 1) {
            g->pb[j] = mode == 0 ? pd[i] : 0;
            g->pe[j] = mode == 0 ? pd[nsp + i] : 0;
            if (g->pb[j] < 0 || g->pe[j] < 0)
                return QERR(SY_ERR_INVALID_ARGUMENT, "pads must be >= 0");
            int64_t span = g->in[j] + g->pb[j] + g->pe[j] - ek;
            if (span < 0)
                return QERR(SY_ERR_SHAPE, "the kernel (effective %lld) is larger than the padded input (%lld)",
                            (long long)ek, (long long)(g->in[j] + g->pb[j] + g->pe[j]));
            if (ceil_mode) {
                g->out[j] = (span + g->s[j] - 1) / g->s[j] + 1;
                if ((g->out[j] - 1) * g->s[j] >= g->in[j] + g->pb[j])
                    g->out[j]--;
            } else {
                g->out[j] = span / g->s[j] + 1;
            }
        } else {
            g->out[j] = (g->in[j] + g->s[j] - 1) / g->s[j];
            int64_t total = (g->out[j] - 1) * g->s[j] + ek - g->in[j];
            if (total < 0)
                total = 0;
            g->pb[j] = mode == 2 ? total / 2 : total - total / 2;
            g->pe[j] = total - g->pb[j];
        }
    }
    return NULL;
}

void q_win_out_dims(const q_win *g, const sy_tensor *x, int64_t c, int64_t *dims)
{
    dims[0] = x->dims[0];
    dims[1] = c;
    for (int32_t i = 0; i < g->nsp; i++)
        dims[2 + i] = g->out[2 - g->nsp + i];
}

/* ======================================================================== */
/* int32 GEMM: acc[m][t] (+)= sum_k a[m][k] * b[k][t]  (wrapping)          */
/* ======================================================================== */

static void gemm_i32(int64_t M, int64_t T, int64_t K, const int32_t *a, int64_t lda, const int32_t *b, int64_t ldb,
                     uint32_t *acc, int64_t ldc)
{
    for (int64_t m = 0; m < M; m++) {
        uint32_t *c = acc + m * ldc;
        const int32_t *ar = a + m * lda;
        for (int64_t k = 0; k < K; k++) {
            int32_t av = ar[k];
            if (!av)
                continue;
            const int32_t *br = b + k * ldb;
            for (int64_t t = 0; t < T; t++)
                c[t] += (uint32_t)(av * br[t]);
        }
    }
}

/* per output channel: requantizers and int32 bias */
typedef struct chan_params {
    sy_requant *rq;
    int32_t *bias;
} chan_params;

/* Bias (int32 codes with scale s_x * s_w[c], or float) as int32 per channel. */
static sy_status *bias_to_i32(const sy_tensor *b, int64_t nch, float sx, const sy_tensor *ws, int32_t *out)
{
    for (int64_t c = 0; c < nch; c++)
        out[c] = 0;
    if (!b)
        return NULL;
    int64_t nb = q_numel(b);
    if (nb != nch && nb != 1)
        return QERR(SY_ERR_SHAPE, "bias '%s' has %lld elements, %lld expected", b->name ? b->name : "?",
                    (long long)nb, (long long)nch);
    for (int64_t c = 0; c < nch; c++) {
        size_t bi = nb == 1 ? 0 : (size_t)c;
        if (b->dtype == SY_DT_INT32) {
            out[c] = ((const int32_t *)b->data)[bi];
        } else if (q_is_scale_dtype(b->dtype)) {
            float sw = q_scale_at(ws, q_numel(ws) == 1 ? 0 : (size_t)c);
            double v = sy_rq_round_even((double)q_scale_at(b, bi) / ((double)sx * (double)sw));
            out[c] = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
        } else {
            return QERR(SY_ERR_TYPE, "bias '%s' has dtype %s; int32 or float is required", b->name ? b->name : "?",
                        sy_dt_name(b->dtype));
        }
    }
    return NULL;
}

/* ======================================================================== */
/* convolution                                                              */
/* ======================================================================== */

enum { KIND_QLINEAR = 0, KIND_INTEGER = 1 };

typedef struct conv_state {
    int kind;
    q_win g;
    int64_t N, C, OC, group, Cg, OCg, K, P, tile;
    sy_rq_mode mode;
    float act_min, act_max;
    bool pointwise; /* 1x1, stride 1, no padding: the input is the column matrix */
    /* fast path (8-bit activations, 8/4-bit weights): int16 operands of sy_qgemm_s16 */
    int64_t Kp, ftile; /* K padded; output pixels per im2row tile */
} conv_state;

/* inputs of each kind: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias */
typedef struct conv_io {
    const sy_tensor *x, *xs, *xz, *w, *ws, *wz, *ys, *yz, *b;
} conv_io;

static void conv_bind(int kind, const sy_tensor *const *in, uint32_t n_in, conv_io *c)
{
#define IN_(i) ((i) < n_in ? in[i] : NULL)
    memset(c, 0, sizeof *c);
    if (kind == KIND_INTEGER) {
        c->x = IN_(0);
        c->w = IN_(1);
        c->xz = IN_(2);
        c->wz = IN_(3);
    } else {
        c->x = IN_(0);
        c->xs = IN_(1);
        c->xz = IN_(2);
        c->w = IN_(3);
        c->ws = IN_(4);
        c->wz = IN_(5);
        c->ys = IN_(6);
        c->yz = IN_(7);
        c->b = IN_(8);
    }
#undef IN_
}

static void node_inputs(const sy_node *n, const sy_tensor **arr, uint32_t *cnt)
{
    uint32_t k = H->node_num_inputs(n);
    if (k > 9)
        k = 9;
    for (uint32_t i = 0; i < k; i++)
        arr[i] = H->node_input(n, i);
    *cnt = k;
}

static int conv_kind(const sy_node *n) { return !strcmp(H->node_op(n), "ConvInteger") ? KIND_INTEGER : KIND_QLINEAR; }

static sy_status *conv_geometry(const sy_node *n, const conv_io *c, conv_state *st)
{
    const sy_tensor *x = c->x, *w = c->w;
    if (!x || !w)
        return QERR(SY_ERR_INVALID_ARGUMENT, "X and W are required");
    if (x->rank < 3 || w->rank != x->rank)
        return QERR(SY_ERR_SHAPE, "X must have rank 3 or 4 and W the same rank (X rank %d, W rank %d)",
                    (int)x->rank, (int)w->rank);
    int64_t group = sy_attr_int_or(H, n, "group", 1);
    if (group < 1 || x->dims[1] % group || w->dims[0] % group || w->dims[1] * group != x->dims[1])
        return QERR(SY_ERR_SHAPE,
                    "group = %lld does not fit input channels %lld, W [%lld, %lld, ...] (W dim 1 * group must equal "
                    "the input channels)",
                    (long long)group, (long long)x->dims[1], (long long)w->dims[0], (long long)w->dims[1]);
    int64_t ks[2];
    int32_t nk = w->rank - 2;
    int64_t ka[2];
    int64_t nka = sy_attr_ints_copy(H, n, "kernel_shape", ka, 2);
    for (int32_t i = 0; i < nk && i < 2; i++) {
        ks[i] = w->dims[2 + i];
        if (nka >= 0 && i < nka && ka[i] != ks[i])
            return QERR(SY_ERR_SHAPE, "kernel_shape[%d] = %lld but W has %lld", (int)i, (long long)ka[i],
                        (long long)ks[i]);
    }
    SY_TRY(q_win_compute(n, x, ks, nk, &st->g));
    st->N = x->dims[0];
    st->C = x->dims[1];
    st->OC = w->dims[0];
    st->group = group;
    st->Cg = st->C / group;
    st->OCg = st->OC / group;
    st->K = st->Cg * st->g.k[0] * st->g.k[1];
    st->P = st->g.out[0] * st->g.out[1];
    st->tile = st->P < 256 ? st->P : 256;
    st->pointwise = st->g.k[0] == 1 && st->g.k[1] == 1 && st->g.s[0] == 1 && st->g.s[1] == 1 && st->g.pb[0] == 0 &&
                    st->g.pb[1] == 0 && st->g.pe[0] == 0 && st->g.pe[1] == 0;
    return NULL;
}

static sy_status *conv_check_params(const conv_io *c, int kind, const char *yname, int64_t OC)
{
    if (kind == KIND_INTEGER) {
        if (c->xz && q_numel(c->xz) != 1)
            return QERR(SY_ERR_SHAPE, "x_zero_point '%s' must be a scalar", c->xz->name ? c->xz->name : "?");
        if (c->wz && q_numel(c->wz) != 1 && q_numel(c->wz) != OC)
            return QERR(SY_ERR_SHAPE, "w_zero_point '%s' has %lld elements; 1 or %lld (per output channel) expected",
                        c->wz->name ? c->wz->name : "?", (long long)q_numel(c->wz), (long long)OC);
        return NULL;
    }
    if (!c->xs || !c->ws || !c->ys)
        return QERR(SY_ERR_INVALID_ARGUMENT, "x_scale, w_scale and y_scale are required");
    SY_TRY(q_check_pair(c->x, c->xs, c->xz, c->x->dtype, -1));
    SY_TRY(q_check_pair(c->w, c->ws, c->wz, c->w->dtype, OC));
    sy_tensor yt;
    memset(&yt, 0, sizeof yt);
    yt.name = yname;
    sy_dtype ydt = c->yz ? c->yz->dtype : SY_DT_UINT8;
    SY_TRY(q_check_pair(&yt, c->ys, c->yz, ydt, -1));
    if (c->b && c->b->dtype != SY_DT_INT32 && !q_is_scale_dtype(c->b->dtype))
        return QERR(SY_ERR_TYPE, "bias '%s' has dtype %s; int32 or float is required",
                    c->b->name ? c->b->name : "?", sy_dt_name(c->b->dtype));
    return NULL;
}

static sy_status *infer_conv(sy_node *n)
{
    const sy_tensor *in[9];
    uint32_t cnt;
    node_inputs(n, in, &cnt);
    conv_io c;
    int kind = conv_kind(n);
    conv_bind(kind, in, cnt, &c);
    conv_state st;
    memset(&st, 0, sizeof st);
    SY_TRY(conv_geometry(n, &c, &st));
    if (c.w->dtype == SY_DT_INT16 || c.w->dtype == SY_DT_UINT16 || c.w->dtype == SY_DT_INT32)
        return QERR(SY_ERR_TYPE, "weights '%s' are %s; 8-bit or 4-bit weights are required",
                    c.w->name ? c.w->name : "?", sy_dt_name(c.w->dtype));
    int64_t dims[4];
    q_win_out_dims(&st.g, c.x, st.OC, dims);
    sy_dtype ydt = kind == KIND_INTEGER ? SY_DT_INT32 : (c.yz ? c.yz->dtype : SY_DT_UINT8);
    SY_TRY(H->node_set_output(n, 0, ydt, c.x->rank, dims));
    const sy_tensor *y = H->node_output(n, 0);
    return conv_check_params(&c, kind, y && y->name ? y->name : "y", st.OC);
}

static sy_status *prepare_conv(sy_node *n, void **state)
{
    const sy_tensor *in[9];
    uint32_t cnt;
    node_inputs(n, in, &cnt);
    conv_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    st->kind = conv_kind(n);
    conv_io c;
    conv_bind(st->kind, in, cnt, &c);
    sy_status *err = conv_geometry(n, &c, st);
    if (!err)
        err = q_node_rq_mode(n, &st->mode);
    if (err) {
        free(st);
        return err;
    }
    st->act_min = sy_attr_float_or(H, n, "act_min", -INFINITY);
    st->act_max = sy_attr_float_or(H, n, "act_max", INFINITY);
    /* generic scratch: input codes (C*H*W), column tile (K*tile), accumulators
     * (OCg*tile), weights (OC*K), per-channel requantizers and bias */
    size_t chw = (size_t)(st->C * st->g.in[0] * st->g.in[1]);
    size_t bytes = (chw + (size_t)(st->K * st->tile) + (size_t)(st->OCg * st->tile) + (size_t)(st->OC * st->K) +
                    (size_t)st->OC + (size_t)st->tile) *
                       sizeof(int32_t) +
                   (size_t)st->OC * sizeof(sy_requant) + 64;
    /* fast scratch: im2row tiles of ~64 KiB (a multiple of 4 pixels, the GEMM's
     * column tile); a depthwise conv takes a whole output plane at once */
    st->Kp = sy_qgemm_kpad(st->K);
    int64_t ft = 32768 / st->Kp;
    ft = ft < 16 ? 16 : (ft > 1024 ? 1024 : ft / 4 * 4);
    st->ftile = st->Cg == 1 || st->P < ft ? st->P : ft;
    /* + one group's input pixel-major (channels contiguous, padded to 8
     * for a pointwise conv, whose GEMM reads it in place) */
    size_t nhwc = st->Cg == 1 ? 0 : (size_t)(st->g.in[0] * st->g.in[1] * (st->Cg + SY_QGEMM_KALIGN));
    size_t fast = (size_t)st->OC * sizeof(sy_requant) +
                  (size_t)(st->OC + st->ftile + st->OCg * st->ftile) * sizeof(int32_t) +
                  (chw + nhwc + (size_t)(st->OC * st->Kp) + (st->Cg == 1 ? 0 : (size_t)(st->ftile * st->Kp))) *
                      sizeof(int16_t) +
                  64;
    if (fast > bytes)
        bytes = fast;
    H->node_set_scratch(n, bytes);
    *state = st;
    return NULL;
}

/* Requantizers and int32 bias per output channel (QLinear kinds). */
static sy_status *conv_requant(const conv_state *st, const conv_io *c, sy_dtype ydt, sy_requant *rq, int32_t *bias)
{
    if (st->kind != KIND_QLINEAR) {
        for (int64_t oc = 0; oc < st->OC; oc++)
            bias[oc] = 0;
        return NULL;
    }
    float sx = q_scale_at(c->xs, 0), sy = q_scale_at(c->ys, 0);
    int32_t yzp = q_zp_at(c->yz, 0), lo, hi;
    q_act_clamp(st->act_min, st->act_max, sy, yzp, ydt, &lo, &hi);
    int64_t nws = q_numel(c->ws);
    for (int64_t oc = 0; oc < st->OC; oc++) {
        float sw = q_scale_at(c->ws, nws > 1 ? (size_t)oc : 0);
        sy_rq_init(&rq[oc], st->mode, q_mult3(sx, sw, sy, c->xs->dtype), yzp, lo, hi);
    }
    return bias_to_i32(c->b, st->OC, sx, c->ws, bias);
}

/* Output channel oc, pixels [p0, p0 + n) of batch b from int32 accumulators. */
static void conv_emit(const conv_state *st, sy_tensor *y, const sy_requant *rq, int64_t b, int64_t oc, int64_t p0,
                      int64_t n, const int32_t *acc, int32_t *codes)
{
    size_t off = (size_t)((b * st->OC + oc) * st->P + p0);
    if (st->kind == KIND_INTEGER) {
        q_store_codes(y->data, y->dtype, off, acc, (size_t)n);
        return;
    }
    sy_rq_apply_n(&rq[oc], 0, acc, codes, (size_t)n);
    q_store_codes(y->data, y->dtype, off, codes, (size_t)n);
}

/* The int16 operands of sy_qgemm_s16 hold x - zx and w - zw (|v| <= 255)
 * when both are 8-bit (or 4-bit weights) with zero points in their range. */
static bool conv_fast_ok(const conv_io *c, int64_t OC)
{
    sy_dtype xd = c->x->dtype, wd = c->w->dtype;
    if ((xd != SY_DT_INT8 && xd != SY_DT_UINT8) ||
        (wd != SY_DT_INT8 && wd != SY_DT_UINT8 && wd != SY_DT_INT4 && wd != SY_DT_UINT4))
        return false;
    int32_t lo, hi, z = q_zp_at(c->xz, 0);
    sy_q_storage_range(xd, &lo, &hi);
    if (z < lo || z > hi)
        return false;
    sy_q_storage_range(wd, &lo, &hi);
    int64_t nwz = q_numel(c->wz);
    for (int64_t oc = 0; oc < (nwz > 1 ? OC : 1); oc++) {
        z = q_zp_at(c->wz, (size_t)oc);
        if (z < lo || z > hi)
            return false;
    }
    return true;
}

/* Depthwise (one input channel per group): a direct convolution of plane xc
 * with the KH x KW taps w, one output row segment per tap. */
static void conv_dw_plane(const conv_state *st, const int16_t *xc, const int16_t *w, int32_t bias, int32_t *acc)
{
    const q_win *g = &st->g;
    int64_t IH = g->in[0], IW = g->in[1], OH = g->out[0], OW = g->out[1], s0 = g->s[0], s1 = g->s[1];
    int64_t p = 0;
    for (; p + 8 <= st->P; p += 8) /* fixed-width blocks: vectorized at -O2 */
        for (int j = 0; j < 8; j++)
            acc[p + j] = bias;
    for (; p < st->P; p++)
        acc[p] = bias;
    for (int64_t kh = 0; kh < g->k[0]; kh++)
        for (int64_t kw = 0; kw < g->k[1]; kw++) {
            int32_t wv = w[kh * g->k[1] + kw];
            if (!wv)
                continue;
            /* output columns whose input column ow * s1 + off lies inside [0, IW) */
            int64_t off = kw * g->d[1] - g->pb[1];
            int64_t lo = off >= 0 ? 0 : (-off + s1 - 1) / s1;
            int64_t hi = IW - 1 - off < 0 ? 0 : (IW - 1 - off) / s1 + 1;
            if (hi > OW)
                hi = OW;
            if (lo >= hi)
                continue;
            for (int64_t oh = 0; oh < OH; oh++) {
                int64_t ih = oh * s0 - g->pb[0] + kh * g->d[0];
                if (ih < 0 || ih >= IH)
                    continue;
                sy_qgemm_mac_row(hi - lo, wv, xc + ih * IW + lo * s1 + off, s1, acc + oh * OW + lo);
            }
        }
}

/* One group's input [Cg][plane] to pixel-major xh[plane][cs] (channel
 * stride cs >= Cg, channels Cg..cs zero), 8 channels at a time so that each
 * pixel's channels are written 16 bytes at once. */
static void conv_to_nhwc(const int16_t *xg, int64_t Cg, int64_t plane, int64_t cs, int16_t *xh)
{
    int64_t ci = 0;
    for (; ci + 8 <= Cg; ci += 8)
        for (int64_t p = 0; p < plane; p++)
            for (int j = 0; j < 8; j++)
                xh[p * cs + ci + j] = xg[(ci + j) * plane + p];
    for (; ci < Cg; ci++)
        for (int64_t p = 0; p < plane; p++)
            xh[p * cs + ci] = xg[ci * plane + p];
    for (int64_t p = 0; p < plane && cs > Cg; p++)
        for (int64_t k = Cg; k < cs; k++)
            xh[p * cs + k] = 0;
}

/* Rows [t][Kp] of the receptive fields of output pixels p0 .. p0 + T - 1
 * (im2row), K in (kh, kw, ci) order so that each tap is one run of Cg
 * contiguous channels of the pixel-major input xh; padding cells are 0
 * (= zx - zx). */
static void conv_im2row(const conv_state *st, const int16_t *xh, int64_t p0, int64_t T, int16_t *rows)
{
    const q_win *g = &st->g;
    int64_t IH = g->in[0], IW = g->in[1], OW = g->out[1], KH = g->k[0], KW = g->k[1], Kp = st->Kp, Cg = st->Cg;
    size_t run = (size_t)Cg * sizeof(int16_t);
    for (int64_t t = 0; t < T; t++) {
        int64_t p = p0 + t, ih0 = (p / OW) * g->s[0] - g->pb[0], iw0 = (p % OW) * g->s[1] - g->pb[1];
        int16_t *r = rows + t * Kp;
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t ih = ih0 + kh * g->d[0];
            for (int64_t kw = 0; kw < KW; kw++) {
                int64_t iw = iw0 + kw * g->d[1];
                int16_t *dst = r + (kh * KW + kw) * Cg;
                if (ih >= 0 && ih < IH && iw >= 0 && iw < IW)
                    memcpy(dst, xh + (ih * IW + iw) * Cg, run);
                else
                    memset(dst, 0, run);
            }
        }
        for (int64_t k = st->K; k < Kp; k++)
            r[k] = 0;
    }
}

/* 8-bit path: int16 centred operands, sy_qgemm_s16 over im2row tiles, or the
 * direct depthwise loop. Scratch after rq and bias: codes, acc, x, one group's
 * x pixel-major, w, rows. */
static void conv_run_fast(const conv_state *st, const conv_io *c, sy_tensor *y, const sy_requant *rq,
                          const int32_t *bias, int32_t *codes)
{
    const q_win *g = &st->g;
    int64_t T = st->ftile, Kp = st->Kp, K = st->K, chw = st->C * g->in[0] * g->in[1];
    int64_t plane = g->in[0] * g->in[1];
    int32_t *acc = codes + T;
    int16_t *xs = (int16_t *)(acc + st->OCg * T);
    int16_t *xh = xs + chw;
    int16_t *wp = xh + (st->Cg == 1 ? 0 : plane * (st->Cg + SY_QGEMM_KALIGN));
    int16_t *rows = wp + st->OC * Kp;
    int64_t nwz = q_numel(c->wz), taps = g->k[0] * g->k[1];
    for (int64_t oc = 0; oc < st->OC; oc++) {
        int16_t *w = wp + oc * Kp;
        sy_qgemm_pack(c->w->data, c->w->dtype, (size_t)(oc * K), K, Kp, q_zp_at(c->wz, nwz > 1 ? (size_t)oc : 0), w);
        if (st->Cg > 1 && taps > 1) { /* (ci, kh, kw) -> (kh, kw, ci), the order of conv_im2row */
            for (int64_t k = 0; k < K; k++)
                rows[k] = w[k];
            for (int64_t ci = 0; ci < st->Cg; ci++)
                for (int64_t tp = 0; tp < taps; tp++)
                    w[tp * st->Cg + ci] = rows[ci * taps + tp];
        }
    }
    int32_t xzp = q_zp_at(c->xz, 0);
    for (int64_t b = 0; b < st->N; b++) {
        sy_qgemm_pack(c->x->data, c->x->dtype, (size_t)(b * chw), chw, chw, xzp, xs);
        for (int64_t gr = 0; gr < st->group; gr++) {
            const int16_t *xg = xs + gr * st->Cg * plane;
            int64_t oc0 = gr * st->OCg;
            if (st->Cg == 1) {
                for (int64_t m = 0; m < st->OCg; m++) {
                    conv_dw_plane(st, xg, wp + (oc0 + m) * Kp, bias[oc0 + m], acc);
                    conv_emit(st, y, rq, b, oc0 + m, 0, st->P, acc, codes);
                }
                continue;
            }
            /* pointwise: the pixel-major input (channels padded to Kp) is
             * the GEMM's B as it stands */
            conv_to_nhwc(xg, st->Cg, plane, st->pointwise ? Kp : st->Cg, xh);
            for (int64_t p0 = 0; p0 < st->P; p0 += T) {
                int64_t n = st->P - p0 < T ? st->P - p0 : T;
                const int16_t *bm = xh + p0 * Kp;
                if (!st->pointwise) {
                    conv_im2row(st, xh, p0, n, rows);
                    bm = rows;
                }
                sy_qgemm_s16(st->OCg, n, Kp, wp + oc0 * Kp, Kp, bm, Kp, bias + oc0, NULL, acc, n);
                for (int64_t m = 0; m < st->OCg; m++)
                    conv_emit(st, y, rq, b, oc0 + m, p0, n, acc + m * n, codes);
            }
        }
    }
}

/* Any other codes (16-bit activations): int32 operands, the plain tiled
 * im2col loop. Scratch after rq and bias: x, col, acc, w, codes. */
static void conv_run_generic(const conv_state *st, const conv_io *c, sy_tensor *y, const sy_requant *rq,
                             const int32_t *bias, int32_t *xs)
{
    const q_win *g = &st->g;
    int64_t IH = g->in[0], IW = g->in[1], OW = g->out[1];
    size_t chw = (size_t)(st->C * IH * IW);
    int32_t *col = xs + chw;
    uint32_t *acc = (uint32_t *)(col + st->K * st->tile);
    int32_t *wq = (int32_t *)(acc + st->OCg * st->tile);
    int32_t *codes = wq + st->OC * st->K;
    /* weights minus zero points (per output channel) */
    int64_t nwz = q_numel(c->wz);
    for (int64_t oc = 0; oc < st->OC; oc++)
        q_load_centered(c->w->data, c->w->dtype, (size_t)(oc * st->K), (size_t)st->K,
                        q_zp_at(c->wz, nwz > 1 ? (size_t)oc : 0), wq + oc * st->K);
    int32_t xzp = q_zp_at(c->xz, 0);
    int64_t KH = g->k[0], KW = g->k[1];
    for (int64_t b = 0; b < st->N; b++) {
        q_load_centered(c->x->data, c->x->dtype, (size_t)b * chw, chw, xzp, xs);
        for (int64_t gr = 0; gr < st->group; gr++) {
            const int32_t *xg = xs + gr * st->Cg * IH * IW;
            for (int64_t p0 = 0; p0 < st->P; p0 += st->tile) {
                int64_t T = st->P - p0 < st->tile ? st->P - p0 : st->tile;
                const int32_t *colp;
                int64_t ldb;
                if (st->pointwise) {
                    colp = xg + p0;
                    ldb = IH * IW;
                } else {
                    for (int64_t ci = 0; ci < st->Cg; ci++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++) {
                                int32_t *row = col + ((ci * KH + kh) * KW + kw) * T;
                                const int32_t *xc = xg + ci * IH * IW;
                                for (int64_t t = 0; t < T; t++) {
                                    int64_t p = p0 + t, oh = p / OW, ow = p % OW;
                                    int64_t ih = oh * g->s[0] - g->pb[0] + kh * g->d[0];
                                    int64_t iw = ow * g->s[1] - g->pb[1] + kw * g->d[1];
                                    row[t] = (ih >= 0 && ih < IH && iw >= 0 && iw < IW) ? xc[ih * IW + iw] : 0;
                                }
                            }
                    colp = col;
                    ldb = T;
                }
                int64_t oc0 = gr * st->OCg;
                for (int64_t m = 0; m < st->OCg; m++)
                    for (int64_t t = 0; t < T; t++)
                        acc[m * T + t] = (uint32_t)bias[oc0 + m];
                gemm_i32(st->OCg, T, st->K, wq + oc0 * st->K, st->K, colp, ldb, acc, T);
                for (int64_t m = 0; m < st->OCg; m++)
                    conv_emit(st, y, rq, b, oc0 + m, p0, T, (const int32_t *)(acc + m * T), codes);
            }
        }
    }
}

static sy_status *run_conv(void *state, const sy_kernel_io *io)
{
    const conv_state *st = state;
    conv_io c;
    conv_bind(st->kind, io->inputs, io->n_inputs, &c);
    sy_tensor *y = io->outputs[0];
    SY_TRY(conv_check_params(&c, st->kind, y->name, st->OC));
    sy_requant *rq = io->scratch;
    int32_t *bias = (int32_t *)(rq + st->OC);
    SY_TRY(conv_requant(st, &c, y->dtype, rq, bias));
    if (conv_fast_ok(&c, st->OC))
        conv_run_fast(st, &c, y, rq, bias, bias + st->OC);
    else
        conv_run_generic(st, &c, y, rq, bias, bias + st->OC);
    return NULL;
}

/* ======================================================================== */
/* matrix multiplication (numpy batch broadcasting)                         */
/* ======================================================================== */

typedef struct mm_state {
    int kind;
    bool trans_b;
    sy_rq_mode mode;
    float act_min, act_max;
} mm_state;

typedef struct mm_io {
    const sy_tensor *a, *as, *az, *b, *bs, *bz, *ys, *yz, *bias;
} mm_io;

static void mm_bind(int kind, const sy_tensor *const *in, uint32_t n_in, mm_io *c)
{
#define IN_(i) ((i) < n_in ? in[i] : NULL)
    memset(c, 0, sizeof *c);
    if (kind == KIND_INTEGER) {
        c->a = IN_(0);
        c->b = IN_(1);
        c->az = IN_(2);
        c->bz = IN_(3);
    } else {
        c->a = IN_(0);
        c->as = IN_(1);
        c->az = IN_(2);
        c->b = IN_(3);
        c->bs = IN_(4);
        c->bz = IN_(5);
        c->ys = IN_(6);
        c->yz = IN_(7);
        c->bias = IN_(8);
    }
#undef IN_
}

static int mm_kind(const sy_node *n) { return !strcmp(H->node_op(n), "MatMulInteger") ? KIND_INTEGER : KIND_QLINEAR; }

/* Output shape of a (broadcast) matmul; M, K, N of the last two dims. */
static sy_status *mm_shape(const sy_tensor *a, const sy_tensor *b, bool trans_b, int32_t *rank, int64_t *dims,
                           int64_t *M, int64_t *K, int64_t *N)
{
    if (a->rank < 1 || b->rank < 1)
        return QERR(SY_ERR_SHAPE, "matmul inputs must have rank >= 1");
    if (a->rank == 1 || b->rank == 1)
        return QERR(SY_ERR_UNSUPPORTED, "1-D matmul operands are not supported by the integer kernel");
    *M = a->dims[a->rank - 2];
    *K = a->dims[a->rank - 1];
    int64_t kb = trans_b ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    *N = trans_b ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    if (kb != *K)
        return QERR(SY_ERR_SHAPE, "matmul inner dimensions differ: A '%s' has K = %lld, B '%s' has %lld",
                    a->name ? a->name : "?", (long long)*K, b->name ? b->name : "?", (long long)kb);
    int32_t r = a->rank > b->rank ? a->rank : b->rank;
    for (int32_t i = 0; i < r - 2; i++) {
        int32_t ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return QERR(SY_ERR_SHAPE, "matmul batch dims %lld and %lld do not broadcast", (long long)da,
                        (long long)db);
        dims[i] = da == 1 ? db : da;
    }
    dims[r - 2] = *M;
    dims[r - 1] = *N;
    *rank = r;
    return NULL;
}

static sy_status *mm_check_params(const mm_io *c, int kind, const char *yname, int64_t M, int64_t N)
{
    if (kind == KIND_INTEGER) {
        if (c->az && q_numel(c->az) != 1 && q_numel(c->az) != M)
            return QERR(SY_ERR_SHAPE, "a_zero_point '%s' must have 1 or M = %lld elements",
                        c->az->name ? c->az->name : "?", (long long)M);
        if (c->bz && q_numel(c->bz) != 1 && q_numel(c->bz) != N)
            return QERR(SY_ERR_SHAPE, "b_zero_point '%s' must have 1 or N = %lld elements",
                        c->bz->name ? c->bz->name : "?", (long long)N);
        return NULL;
    }
    if (!c->as || !c->bs || !c->ys)
        return QERR(SY_ERR_INVALID_ARGUMENT, "a_scale, b_scale and y_scale are required");
    SY_TRY(q_check_pair(c->a, c->as, c->az, c->a->dtype, -1));
    SY_TRY(q_check_pair(c->b, c->bs, c->bz, c->b->dtype, N));
    sy_tensor yt;
    memset(&yt, 0, sizeof yt);
    yt.name = yname;
    SY_TRY(q_check_pair(&yt, c->ys, c->yz, c->yz ? c->yz->dtype : SY_DT_UINT8, -1));
    return NULL;
}

static sy_status *infer_mm(sy_node *n)
{
    const sy_tensor *in[9];
    uint32_t cnt;
    node_inputs(n, in, &cnt);
    mm_io c;
    int kind = mm_kind(n);
    mm_bind(kind, in, cnt, &c);
    if (!c.a || !c.b)
        return QERR(SY_ERR_INVALID_ARGUMENT, "A and B are required");
    bool tb = sy_attr_int_or(H, n, "transB", 0) != 0;
    int32_t rank;
    int64_t dims[SY_MAX_RANK], M, K, N;
    SY_TRY(mm_shape(c.a, c.b, tb, &rank, dims, &M, &K, &N));
    if (c.b->dtype == SY_DT_INT32 || c.b->dtype == SY_DT_UINT16 || (c.a->dtype == SY_DT_INT16 && c.b->dtype == SY_DT_INT16))
        return QERR(SY_ERR_TYPE, "B '%s' is %s; 8-bit or 4-bit weights are required", c.b->name ? c.b->name : "?",
                    sy_dt_name(c.b->dtype));
    sy_dtype ydt = kind == KIND_INTEGER ? SY_DT_INT32 : (c.yz ? c.yz->dtype : SY_DT_UINT8);
    SY_TRY(H->node_set_output(n, 0, ydt, rank, dims));
    const sy_tensor *y = H->node_output(n, 0);
    return mm_check_params(&c, kind, y && y->name ? y->name : "y", M, N);
}

static sy_status *prepare_mm(sy_node *n, void **state)
{
    const sy_tensor *in[9];
    uint32_t cnt;
    node_inputs(n, in, &cnt);
    mm_state *st = calloc(1, sizeof *st);
    if (!st)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    st->kind = mm_kind(n);
    st->trans_b = sy_attr_int_or(H, n, "transB", 0) != 0;
    sy_status *err = q_node_rq_mode(n, &st->mode);
    if (err) {
        free(st);
        return err;
    }
    st->act_min = sy_attr_float_or(H, n, "act_min", -INFINITY);
    st->act_max = sy_attr_float_or(H, n, "act_max", INFINITY);
    mm_io c;
    mm_bind(st->kind, in, cnt, &c);
    int32_t rank;
    int64_t dims[SY_MAX_RANK], M, K, N;
    err = mm_shape(c.a, c.b, st->trans_b, &rank, dims, &M, &K, &N);
    if (err) {
        free(st);
        return err;
    }
    /* generic scratch: A block (M*K), B block (K*N), acc (N), codes (N), bias (N), requantizers (N);
     * fast: int16 A (M*Kp) and B transposed (N*Kp), acc (M*N) */
    size_t bytes = (size_t)(M * K + K * N + 4 * N) * sizeof(int32_t) + (size_t)N * sizeof(sy_requant) + 64;
    int64_t Kp = sy_qgemm_kpad(K);
    size_t fast = (size_t)(M * N + 3 * N) * sizeof(int32_t) + (size_t)((M + N) * Kp) * sizeof(int16_t) +
                  (size_t)N * sizeof(sy_requant) + 64;
    if (fast > bytes)
        bytes = fast;
    H->node_set_scratch(n, bytes);
    *state = st;
    return NULL;
}

/* as conv_fast_ok: 8-bit A, 8/4-bit B, zero points inside their types */
static bool mm_fast_ok(const mm_io *c, int64_t M, int64_t N)
{
    sy_dtype ad = c->a->dtype, bd = c->b->dtype;
    if ((ad != SY_DT_INT8 && ad != SY_DT_UINT8) ||
        (bd != SY_DT_INT8 && bd != SY_DT_UINT8 && bd != SY_DT_INT4 && bd != SY_DT_UINT4))
        return false;
    int32_t lo, hi;
    int64_t naz = q_numel(c->az), nbz = q_numel(c->bz);
    sy_q_storage_range(ad, &lo, &hi);
    for (int64_t m = 0; m < (naz > 1 ? M : 1); m++) {
        int32_t z = q_zp_at(c->az, (size_t)m);
        if (z < lo || z > hi)
            return false;
    }
    sy_q_storage_range(bd, &lo, &hi);
    for (int64_t j = 0; j < (nbz > 1 ? N : 1); j++) {
        int32_t z = q_zp_at(c->bz, (size_t)j);
        if (z < lo || z > hi)
            return false;
    }
    return true;
}

/* Offsets (in matrices) of A and B for batch index idx[] under broadcasting. */
static void mm_batch_offsets(const mm_io *c, int32_t rank, const int64_t *idx, int64_t *oa, int64_t *ob)
{
    int64_t sa_ = 1, sb_ = 1;
    *oa = *ob = 0;
    for (int32_t i = rank - 3; i >= 0; i--) {
        int32_t ia = i - (rank - c->a->rank), ib = i - (rank - c->b->rank);
        if (ia >= 0) {
            if (c->a->dims[ia] > 1)
                *oa += idx[i] * sa_;
            sa_ *= c->a->dims[ia];
        }
        if (ib >= 0) {
            if (c->b->dims[ib] > 1)
                *ob += idx[i] * sb_;
            sb_ *= c->b->dims[ib];
        }
    }
}

static void mm_next_index(int32_t rank, const int64_t *dims, int64_t *idx)
{
    for (int32_t i = rank - 3; i >= 0; i--) {
        if (++idx[i] < dims[i])
            break;
        idx[i] = 0;
    }
}

static sy_status *run_mm(void *state, const sy_kernel_io *io)
{
    const mm_state *st = state;
    mm_io c;
    mm_bind(st->kind, io->inputs, io->n_inputs, &c);
    sy_tensor *y = io->outputs[0];
    int32_t rank;
    int64_t dims[SY_MAX_RANK], M, K, N;
    SY_TRY(mm_shape(c.a, c.b, st->trans_b, &rank, dims, &M, &K, &N));
    SY_TRY(mm_check_params(&c, st->kind, y->name, M, N));
    sy_requant *rq = io->scratch;
    int32_t *bias = (int32_t *)(rq + N);
    int32_t *bzv = bias + N;
    int32_t *codes = bzv + N;
    int64_t nbz = q_numel(c.bz), naz = q_numel(c.az), nbs = q_numel(c.bs);
    for (int64_t j = 0; j < N; j++)
        bzv[j] = q_zp_at(c.bz, nbz > 1 ? (size_t)j : 0);
    if (st->kind == KIND_QLINEAR) {
        float sa = q_scale_at(c.as, 0), sy = q_scale_at(c.ys, 0);
        int32_t yzp = q_zp_at(c.yz, 0), lo, hi;
        q_act_clamp(st->act_min, st->act_max, sy, yzp, y->dtype, &lo, &hi);
        for (int64_t j = 0; j < N; j++)
            sy_rq_init(&rq[j], st->mode, q_mult3(sa, q_scale_at(c.bs, nbs > 1 ? (size_t)j : 0), sy, c.as->dtype), yzp,
                       lo, hi);
        SY_TRY(bias_to_i32(c.bias, N, sa, c.bs, bias));
    } else {
        for (int64_t j = 0; j < N; j++)
            bias[j] = 0;
    }
    /* one requantizer for the row, or one per column */
    size_t rq_stride = nbs > 1 ? 1 : 0;
    int64_t batch = 1;
    for (int32_t i = 0; i < rank - 2; i++)
        batch *= dims[i];
    int64_t idx[SY_MAX_RANK] = {0};
    if (mm_fast_ok(&c, M, N)) {
        /* int16 A rows and B columns (B transposed), K padded: sy_qgemm_s16 */
        int64_t Kp = sy_qgemm_kpad(K), last_ob = -1;
        int32_t *acc = codes + N;
        int16_t *ap = (int16_t *)(acc + M * N);
        int16_t *bp = ap + M * Kp;
        for (int64_t bt = 0; bt < batch; bt++) {
            int64_t oa, ob;
            mm_batch_offsets(&c, rank, idx, &oa, &ob);
            for (int64_t m = 0; m < M; m++)
                sy_qgemm_pack(c.a->data, c.a->dtype, (size_t)((oa * M + m) * K), K, Kp,
                              q_zp_at(c.az, naz > 1 ? (size_t)m : 0), ap + m * Kp);
            if (ob != last_ob) { /* a B shared by every batch is packed once */
                for (int64_t j = 0; j < N; j++) {
                    int16_t *bj = bp + j * Kp;
                    if (st->trans_b) {
                        sy_qgemm_pack(c.b->data, c.b->dtype, (size_t)((ob * N + j) * K), K, Kp, bzv[j], bj);
                        continue;
                    }
                    for (int64_t k = 0; k < K; k++)
                        bj[k] = (int16_t)(sy_q_load(c.b->data, c.b->dtype, (size_t)((ob * K + k) * N + j)) - bzv[j]);
                    for (int64_t k = K; k < Kp; k++)
                        bj[k] = 0;
                }
                last_ob = ob;
            }
            sy_qgemm_s16(M, N, Kp, ap, Kp, bp, Kp, NULL, bias, acc, N);
            for (int64_t m = 0; m < M; m++) {
                const int32_t *am = acc + m * N;
                size_t off = (size_t)((bt * M + m) * N);
                if (st->kind == KIND_INTEGER) {
                    q_store_codes(y->data, y->dtype, off, am, (size_t)N);
                    continue;
                }
                sy_rq_apply_n(rq, rq_stride, am, codes, (size_t)N);
                q_store_codes(y->data, y->dtype, off, codes, (size_t)N);
            }
            mm_next_index(rank, dims, idx);
        }
        return NULL;
    }
    /* any other codes: int32 operands, a plain loop */
    int32_t *ab = codes + N;
    int32_t *bb = ab + M * K;
    uint32_t *acc = (uint32_t *)(bb + K * N);
    for (int64_t bt = 0; bt < batch; bt++) {
        int64_t oa, ob;
        mm_batch_offsets(&c, rank, idx, &oa, &ob);
        /* A block minus zero points (per row possible for MatMulInteger) */
        for (int64_t m = 0; m < M; m++)
            q_load_centered(c.a->data, c.a->dtype, (size_t)((oa * M + m) * K), (size_t)K,
                            q_zp_at(c.az, naz > 1 ? (size_t)m : 0), ab + m * K);
        /* B block as [K, N] minus per-column zero points */
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++) {
                size_t e = st->trans_b ? (size_t)((ob * N + j) * K + k) : (size_t)((ob * K + k) * N + j);
                bb[k * N + j] = (int32_t)((uint32_t)sy_q_load(c.b->data, c.b->dtype, e) - (uint32_t)bzv[j]);
            }
        for (int64_t m = 0; m < M; m++) {
            for (int64_t j = 0; j < N; j++)
                acc[j] = (uint32_t)bias[j];
            gemm_i32(1, N, K, ab + m * K, K, bb, N, acc, N);
            size_t off = (size_t)((bt * M + m) * N);
            if (st->kind == KIND_INTEGER) {
                q_store_codes(y->data, y->dtype, off, (const int32_t *)acc, (size_t)N);
                continue;
            }
            sy_rq_apply_n(rq, rq_stride, (const int32_t *)acc, codes, (size_t)N);
            q_store_codes(y->data, y->dtype, off, codes, (size_t)N);
        }
        mm_next_index(rank, dims, idx);
    }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define A_(name, type) {name, SY_ATTR_##type, false}
static const sy_attr_def a_conv[] = {A_("auto_pad", STRING), A_("dilations", INTS), A_("group", INT),
                                     A_("kernel_shape", INTS), A_("pads", INTS), A_("strides", INTS)};
static const sy_attr_def a_qconv[] = {A_("auto_pad", STRING), A_("dilations", INTS), A_("group", INT),
                                      A_("kernel_shape", INTS), A_("pads", INTS),      A_("strides", INTS),
                                      A_("act_min", FLOAT),     A_("act_max", FLOAT),  A_("requant", STRING)};
static const sy_attr_def a_qmm[] = {A_("transB", INT), A_("act_min", FLOAT), A_("act_max", FLOAT),
                                    A_("requant", STRING)};

#define QSCH(...) QSCH_(__VA_ARGS__)
#define QSCH_(dom, op, since, mn, mx, attrs, n_attrs, infer)                                                       \
    {sizeof(sy_op_schema), dom, op, since, mn, mx, 1, 1, attrs, n_attrs, infer, NULL, 0u, 0u, NULL}

static const sy_op_schema schemas[] = {
    QSCH("", "QLinearConv", 10, 8, 9, SY_ATTRS(a_conv), infer_conv),
    QSCH("", "ConvInteger", 10, 2, 4, SY_ATTRS(a_conv), infer_conv),
    QSCH("", "QLinearMatMul", 10, 8, 8, SY_NO_ATTRS, infer_mm),
    QSCH("", "QLinearMatMul", 21, 8, 8, SY_NO_ATTRS, infer_mm),
    QSCH("", "MatMulInteger", 10, 2, 4, SY_NO_ATTRS, infer_mm),
    QSCH(SWQ_DOMAIN, "QConv", 1, 8, 9, SY_ATTRS(a_qconv), infer_conv),
    QSCH(SWQ_DOMAIN, "QMatMul", 1, 8, 9, SY_ATTRS(a_qmm), infer_mm),
};

#define Q8MASK                                                                                                     \
    (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_UINT16))
#define QK(dom, op, since, prep, run)                                                                              \
    {sizeof(sy_kernel_def), dom, op, since, 0, "cpu_ref", Q8MASK, 0, 0u, NULL, prep, run, sy_release_free, NULL}

static const sy_kernel_def kernels[] = {
    QK("", "QLinearConv", 10, prepare_conv, run_conv),   QK("", "ConvInteger", 10, prepare_conv, run_conv),
    QK("", "QLinearMatMul", 10, prepare_mm, run_mm),     QK("", "MatMulInteger", 10, prepare_mm, run_mm),
    QK(SWQ_DOMAIN, "QConv", 1, prepare_conv, run_conv), QK(SWQ_DOMAIN, "QMatMul", 1, prepare_mm, run_mm),
};

void q_tables_gemm(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk)
{
    *s = schemas;
    *ns = SY_COUNT_OF(schemas);
    *k = kernels;
    *nk = SY_COUNT_OF(kernels);
}
