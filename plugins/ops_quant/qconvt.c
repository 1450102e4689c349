/*
 * ops_quant: QConvTranspose (switchyard.quant 1), what the QDQ pass folds
 * DQ(x), DQ(W)[, DQ(b)] -> ConvTranspose [-> Relu/Clip] -> Q into (ops-mcu.md
 * Table B #113 int8). Inputs as QConv's: x, x_scale, x_zp, W, W_scale, W_zp,
 * y_scale, y_zp[, bias]; W is ConvTranspose's [C_in, C_out / group, k...],
 * so its per-channel parameters run along axis 1 (C_out / group of them,
 * shared by the groups). 8-bit codes, 1 or 2 spatial dims.
 *
 * The integer kernel is the portable qk_conv_transpose_run (plugin_sdk/
 * kernels/qk.c) riscv_mcu and codegen packages run too; the requantizers,
 * bias and clamp are built here as QConv builds them (sy_rq_init, q_mult3,
 * the folded activation), so the three agree bit for bit.
 */
#include "quant_internal.h"
#include "qk.h"

#include <string.h>

typedef struct convt_geom {
    int32_t nsp;
    int64_t in[2], out[2], k[2], s[2], d[2], pb[2];
} convt_geom;

typedef struct convt_state {
    convt_geom g;
    int64_t N, C, OC, group, OCg;
    sy_rq_mode mode;
    float act_min, act_max;
} convt_state;

/* inputs: x, x_scale, x_zp, W, W_scale, W_zp, y_scale, y_zp, bias */
enum { I_X, I_XS, I_XZ, I_W, I_WS, I_WZ, I_YS, I_YZ, I_B };

static bool is8(sy_dtype dt) { return dt == SY_DT_INT8 || dt == SY_DT_UINT8; }

/* ONNX ConvTranspose's output size and begin pads per spatial axis: out =
 * s (in - 1) + output_padding + (k - 1) d + 1 - pads; with output_shape or
 * SAME_*, total pads = that size minus the wanted one, SAME_UPPER (and
 * output_shape without pads) putting the odd cell at the end. Index 0 is
 * height (1 for a 1-D input), 1 width. */
static sy_status *convt_geometry(const sy_node *n, const sy_tensor *x, const sy_tensor *w, convt_geom *g)
{
    const char *xn = x->name ? x->name : "?", *wn = w->name ? w->name : "?";
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > 2)
        return QERR(SY_ERR_UNSUPPORTED, "QConvTranspose: input '%s' has rank %d; 1 or 2 spatial dims are supported", xn,
                    (int)x->rank);
    if (w->rank != x->rank)
        return QERR(SY_ERR_SHAPE, "QConvTranspose: W '%s' has rank %d, the input '%s' rank %d", wn, (int)w->rank, xn,
                    (int)x->rank);
    int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0}, op[2] = {0, 0}, os[2] = {0, 0}, ks[2] = {0, 0};
    struct {
        const char *name;
        int64_t *v;
        int64_t want;
    } lists[] = {{"strides", st, nsp},          {"dilations", dl, nsp},       {"pads", pd, 2 * nsp},
                 {"output_padding", op, nsp}, {"output_shape", os, nsp}, {"kernel_shape", ks, nsp}};
    int64_t got[6];
    for (int i = 0; i < 6; i++) {
        got[i] = sy_attr_ints_copy(H, n, lists[i].name, lists[i].v, (size_t)lists[i].want);
        if (got[i] >= 0 && got[i] != lists[i].want)
            return QERR(SY_ERR_SHAPE, "QConvTranspose: %s has %lld values, %lld expected (the spatial dims of '%s')",
                        lists[i].name, (long long)got[i], (long long)lists[i].want, xn);
    }
    char ap[24];
    sy_attr_string_or(H, n, "auto_pad", "NOTSET", ap, sizeof ap);
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"), upper = strcmp(ap, "SAME_LOWER") != 0;
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return QERR(SY_ERR_INVALID_ARGUMENT, "QConvTranspose: auto_pad \"%s\"; NOTSET, VALID, SAME_UPPER or SAME_LOWER "
                    "expected", ap);
    g->nsp = nsp;
    for (int32_t j = 0; j < 2; j++) {
        g->in[j] = g->out[j] = g->k[j] = g->s[j] = g->d[j] = 1;
        g->pb[j] = 0;
    }
    for (int32_t i = 0; i < nsp; i++) {
        int32_t j = 2 - nsp + i;
        g->in[j] = x->dims[2 + i];
        g->k[j] = w->dims[2 + i];
        g->s[j] = st[i];
        g->d[j] = dl[i];
        if (got[5] >= 0 && ks[i] != g->k[j])
            return QERR(SY_ERR_SHAPE, "QConvTranspose: kernel_shape[%d] = %lld but W '%s' has %lld", (int)i,
                        (long long)ks[i], wn, (long long)g->k[j]);
        if (st[i] < 1 || dl[i] < 1 || op[i] < 0 || pd[i] < 0 || pd[nsp + i] < 0)
            return QERR(SY_ERR_INVALID_ARGUMENT, "QConvTranspose: axis %d: strides and dilations must be >= 1, "
                        "output_padding and pads >= 0", (int)i);
        int64_t full = st[i] * (g->in[j] - 1) + op[i] + (g->k[j] - 1) * dl[i] + 1;
        if (got[4] >= 0 || same) {
            g->out[j] = got[4] >= 0 ? os[i] : g->in[j] * st[i];
            int64_t total = full - g->out[j];
            total = total < 0 ? 0 : total;
            g->pb[j] = upper ? total / 2 : total - total / 2;
            if (got[4] >= 0 && !same && got[2] >= 0)
                g->pb[j] = pd[i];
        } else {
            bool explicit_pads = got[2] >= 0 && !strcmp(ap, "NOTSET");
            g->pb[j] = explicit_pads ? pd[i] : 0;
            g->out[j] = full - (explicit_pads ? pd[i] + pd[nsp + i] : 0);
        }
        if (g->out[j] < 1)
            return QERR(SY_ERR_SHAPE, "QConvTranspose: output size %lld on spatial axis %d of '%s'",
                        (long long)g->out[j], (int)i, xn);
    }
    return NULL;
}

static sy_status *convt_read(const sy_node *n, convt_state *s)
{
    const sy_tensor *x = q_nin(n, I_X), *w = q_nin(n, I_W);
    if (!x || !w)
        return QERR(SY_ERR_INVALID_ARGUMENT, "QConvTranspose: x and W are required");
    SY_TRY(convt_geometry(n, x, w, &s->g));
    s->N = x->dims[0];
    s->C = x->dims[1];
    s->group = sy_attr_int_or(H, n, "group", 1);
    if (s->group < 1 || s->C % s->group || w->dims[0] != s->C)
        return QERR(SY_ERR_SHAPE, "QConvTranspose: W '%s' [%lld, %lld, ...] for %lld input channels in group %lld "
                    "(W dim 0 must equal the input channels, a multiple of group)",
                    w->name ? w->name : "?", (long long)w->dims[0], (long long)w->dims[1], (long long)s->C,
                    (long long)s->group);
    s->OCg = w->dims[1];
    s->OC = s->OCg * s->group;
    if (!is8(x->dtype) || !is8(w->dtype))
        return QERR(SY_ERR_TYPE, "QConvTranspose: x '%s' is %s, W '%s' %s; 8-bit codes are required",
                    x->name ? x->name : "?", sy_dt_name(x->dtype), w->name ? w->name : "?", sy_dt_name(w->dtype));
    if (s->N * s->C * s->g.in[0] * s->g.in[1] > INT32_MAX || s->N * s->OC * s->g.out[0] * s->g.out[1] > INT32_MAX)
        return QERR(SY_ERR_UNSUPPORTED, "QConvTranspose: more than 2^31 - 1 elements in '%s' or its output",
                    x->name ? x->name : "?");
    return NULL;
}

/* scales and zero points where known; the bias's length and type */
static sy_status *convt_check_params(const sy_node *n, const convt_state *s, const sy_tensor *y)
{
    const sy_tensor *x = q_nin(n, I_X), *w = q_nin(n, I_W), *b = q_nin(n, I_B);
    const sy_tensor *xs = q_nin(n, I_XS), *ws = q_nin(n, I_WS), *ys = q_nin(n, I_YS);
    if (!xs || !ws || !ys)
        return QERR(SY_ERR_INVALID_ARGUMENT, "QConvTranspose: x_scale, w_scale and y_scale are required");
    SY_TRY(q_check_pair(x, xs, q_nin(n, I_XZ), x->dtype, -1));
    SY_TRY(q_check_pair(w, ws, q_nin(n, I_WZ), w->dtype, s->OCg));
    SY_TRY(q_check_pair(y, ys, q_nin(n, I_YZ), y->dtype, -1));
    if (b && (q_numel(b) != s->OC && q_numel(b) != 1))
        return QERR(SY_ERR_SHAPE, "QConvTranspose: bias '%s' has %lld elements, %lld (output channels) expected",
                    b->name ? b->name : "?", (long long)q_numel(b), (long long)s->OC);
    if (b && b->dtype != SY_DT_INT32 && !q_is_scale_dtype(b->dtype))
        return QERR(SY_ERR_TYPE, "QConvTranspose: bias '%s' has dtype %s; int32 or float is required",
                    b->name ? b->name : "?", sy_dt_name(b->dtype));
    return NULL;
}

static sy_status *infer_convt(sy_node *n)
{
    convt_state s;
    memset(&s, 0, sizeof s);
    SY_TRY(convt_read(n, &s));
    const sy_tensor *x = q_nin(n, I_X), *yz = q_nin(n, I_YZ);
    sy_dtype ydt = yz ? yz->dtype : SY_DT_UINT8;
    if (!is8(ydt))
        return QERR(SY_ERR_TYPE, "QConvTranspose: y_zero_point '%s' is %s; the output must be 8-bit",
                    yz && yz->name ? yz->name : "?", sy_dt_name(ydt));
    int64_t dims[4] = {s.N, s.OC, s.g.out[0], s.g.out[1]};
    if (s.g.nsp == 1)
        dims[2] = s.g.out[1];
    SY_TRY(H->node_set_output(n, 0, ydt, x->rank, dims));
    return convt_check_params(n, &s, H->node_output(n, 0));
}

/* per output channel: the requantizer, the int32 bias and W's zero point */
typedef struct convt_chan {
    qk_rq rq;
    int32_t bias, wzp;
} convt_chan;

static sy_status *prepare_convt(sy_node *n, void **state)
{
    convt_state *s = calloc(1, sizeof *s);
    if (!s)
        return QERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *err = convt_read(n, s);
    if (!err)
        err = q_node_rq_mode(n, &s->mode);
    if (err) {
        free(s);
        return err;
    }
    s->act_min = sy_attr_float_or(H, n, "act_min", -INFINITY);
    s->act_max = sy_attr_float_or(H, n, "act_max", INFINITY);
    H->node_set_scratch(n, (size_t)s->OC * (sizeof(convt_chan) + 2 * sizeof(int32_t)) + 64);
    *state = s;
    return NULL;
}

static sy_status *run_convt(void *state, const sy_kernel_io *io)
{
    const convt_state *s = state;
    const sy_tensor *x = q_in(io, I_X), *xs = q_in(io, I_XS), *xz = q_in(io, I_XZ), *w = q_in(io, I_W),
                    *ws = q_in(io, I_WS), *wz = q_in(io, I_WZ), *ys = q_in(io, I_YS), *yz = q_in(io, I_YZ),
                    *b = q_in(io, I_B);
    sy_tensor *y = io->outputs[0];
    if (!xs || !ws || !ys)
        return QERR(SY_ERR_INVALID_ARGUMENT, "QConvTranspose: x_scale, w_scale and y_scale are required");
    SY_TRY(q_check_pair(x, xs, xz, x->dtype, -1));
    SY_TRY(q_check_pair(w, ws, wz, w->dtype, s->OCg));
    SY_TRY(q_check_pair(y, ys, yz, y->dtype, -1));
    /* scratch: OC requantizers (qk_rq holds a double, so they come first), biases, zero points */
    qk_rq *rq = io->scratch;
    int32_t *bias = (int32_t *)(rq + s->OC), *wzp = bias + s->OC;
    float sx = q_scale_at(xs, 0), sy = q_scale_at(ys, 0);
    int32_t yzp = q_zp_at(yz, 0), lo, hi;
    q_act_clamp(s->act_min, s->act_max, sy, yzp, y->dtype, &lo, &hi);
    int64_t nws = q_numel(ws), nwz = q_numel(wz), nb = q_numel(b);
    for (int64_t o = 0; o < s->OC; o++) {
        /* W's parameters of output channel o: index o % (C_out / group) on axis 1 */
        size_t wi = nws > 1 ? (size_t)(o % s->OCg) : 0;
        float sw = q_scale_at(ws, wi);
        sy_requant r;
        sy_rq_init(&r, s->mode, q_mult3(sx, sw, sy, xs->dtype), yzp, lo, hi);
        rq[o] = (qk_rq){(int32_t)r.mode, r.real_mult, r.mult, r.shift, r.zp, r.lo, r.hi};
        bias[o] = 0;
        if (b) {
            size_t bi = nb == 1 ? 0 : (size_t)o;
            if (b->dtype == SY_DT_INT32) {
                bias[o] = ((const int32_t *)b->data)[bi];
            } else if (q_is_scale_dtype(b->dtype)) {
                double v = sy_rq_round_even((double)q_scale_at(b, bi) / ((double)sx * (double)sw));
                bias[o] = v > INT32_MAX ? INT32_MAX : (v < INT32_MIN ? INT32_MIN : (int32_t)v);
            } else {
                return QERR(SY_ERR_TYPE, "QConvTranspose: bias '%s' has dtype %s; int32 or float is required",
                            b->name ? b->name : "?", sy_dt_name(b->dtype));
            }
        }
        if (o < s->OCg)
            wzp[o] = q_zp_at(wz, nwz > 1 ? (size_t)o : 0);
    }
    qk_conv p = {
        .n = (int32_t)s->N,
        .c = (int32_t)s->C,
        .ih = (int32_t)s->g.in[0],
        .iw = (int32_t)s->g.in[1],
        .oc = (int32_t)s->OC,
        .oh = (int32_t)s->g.out[0],
        .ow = (int32_t)s->g.out[1],
        .kh = (int32_t)s->g.k[0],
        .kw = (int32_t)s->g.k[1],
        .sh = (int32_t)s->g.s[0],
        .sw = (int32_t)s->g.s[1],
        .dh = (int32_t)s->g.d[0],
        .dw = (int32_t)s->g.d[1],
        .pt = (int32_t)s->g.pb[0],
        .pl = (int32_t)s->g.pb[1],
        .group = (int32_t)s->group,
        .xdt = x->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
        .wdt = w->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
        .ydt = y->dtype == SY_DT_UINT8 ? QK_U8 : QK_S8,
        .x_zp = q_zp_at(xz, 0),
        .n_wzp = nwz > 1 ? (int32_t)s->OCg : 1,
        .w_zp = wzp,
        .bias = bias,
        .rq = rq,
    };
    qk_conv_transpose_run(&p, x->data, w->data, y->data);
    return NULL;
}

#define A_(name, type) {name, SY_ATTR_##type, false}
static const sy_attr_def a_qconvt[] = {
    A_("auto_pad", STRING),      A_("dilations", INTS),    A_("group", INT),      A_("kernel_shape", INTS),
    A_("pads", INTS),            A_("strides", INTS),      A_("output_padding", INTS), A_("output_shape", INTS),
    A_("act_min", FLOAT),        A_("act_max", FLOAT),     A_("requant", STRING)};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), SWQ_DOMAIN, "QConvTranspose", 1, 8, 9, 1, 1, SY_ATTRS(a_qconvt), infer_convt, NULL, 0u,
     0u, NULL},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), SWQ_DOMAIN, "QConvTranspose", 1, 0, "cpu_ref",
     SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8), 0, 0u, NULL, prepare_convt, run_convt, sy_release_free, NULL},
};

void q_tables_convt(const sy_op_schema **s, uint32_t *ns, const sy_kernel_def **k, uint32_t *nk)
{
    *s = schemas;
    *ns = SY_COUNT_OF(schemas);
    *k = kernels;
    *nk = SY_COUNT_OF(kernels);
}
