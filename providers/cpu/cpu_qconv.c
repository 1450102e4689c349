/*
 * Quantized convolution on the cpu provider: QConv (what the QDQ pass folds
 * DequantizeLinear -> Conv [-> Relu/Clip] -> QuantizeLinear into) and ONNX
 * QLinearConv, run by XNNPACK's NHWC integer convolutions:
 *   int8 x, int8 weights, one scale, zero point 0     qs8
 *   int8 x, int8 weights, a scale per output channel  qc8
 *   uint8 x, uint8 weights, one scale                 qu8
 * with the ONNX requantization form only (float multiplier s_x * s_w / s_y,
 * round half to even; the gemmlowp form stays cpu_ref's). XNNPACK rounds
 * acc * multiplier in single precision, as ONNX Runtime does; cpu_ref's form
 * takes the product in double, so the two can differ by one code where the
 * product lies within float rounding of a half (docs/cpu.md).
 */
#include "cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

enum { Q_S8, Q_C8, Q_U8 };

typedef struct qconv_state {
    cpu_conv_geom g;
    int kind;
    xnn_operator_t op; /* XNNPACK's, or NULL when own.w or own.w8 is set (the provider's kernel) */
    cpu_q8conv own;
    pthreadpool_t pool;
    cpu_isa isa;
} qconv_state;

static bool scale_at(const sy_tensor *t, size_t i, float *v)
{
    if (!t || !t->data || t->dtype != SY_DT_FLOAT32 || i >= cpu_numel(t))
        return false;
    *v = ((const float *)t->data)[i];
    return isfinite(*v) && *v > 0.0f;
}

static bool zp_at(const sy_tensor *t, sy_dtype dt, size_t i, int32_t *v)
{
    *v = 0;
    if (!t)
        return true;
    if (!t->data || t->dtype != dt || i >= cpu_numel(t))
        return false;
    *v = dt == SY_DT_INT8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
    return true;
}

/* the XNNPACK kind of a node, or -1 with the reason */
static int qconv_kind(const sy_node *n, char *why, size_t len)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *x = H->node_input(n, 0), *w = ni > 3 ? H->node_input(n, 3) : NULL;
    const sy_tensor *xs = ni > 1 ? H->node_input(n, 1) : NULL, *ws = ni > 4 ? H->node_input(n, 4) : NULL;
    const sy_tensor *ys = ni > 6 ? H->node_input(n, 6) : NULL, *b = ni > 8 ? H->node_input(n, 8) : NULL;
    const char *rq = NULL;
    size_t rl = 0;
    if (H->attr_string(n, "requant", &rq, &rl) && !(rl == 4 && !memcmp(rq, "onnx", 4)))
        return cpu_decline(why, len, "only the onnx requantization form (gemmlowp, single_rounding: cpu_ref)"), -1;
    if (!x || !w || (x->rank != 3 && x->rank != 4) || w->rank != x->rank)
        return cpu_decline(why, len, "only 1-D and 2-D convolutions"), -1;
    if (!w->data || (b && (!b->data || (b->dtype != SY_DT_INT32 && b->dtype != SY_DT_FLOAT32))))
        return cpu_decline(why, len, "weights and an int32 or float32 bias must be constants"), -1;
    if (b && cpu_numel(b) != 1 && cpu_numel(b) != (size_t)w->dims[0])
        return cpu_decline(why, len, "the bias must have one value per output channel"), -1;
    float sx, sy, sw;
    if (!scale_at(xs, 0, &sx) || cpu_numel(xs) != 1 || !scale_at(ys, 0, &sy) || cpu_numel(ys) != 1)
        return cpu_decline(why, len, "x and y scales must be constant positive float32 scalars"), -1;
    size_t m = (size_t)w->dims[0], nws = ws ? cpu_numel(ws) : 0;
    if (nws != 1 && nws != m)
        return cpu_decline(why, len, "the weight scale must be one value or one per output channel"), -1;
    int kind;
    if (x->dtype == SY_DT_INT8 && w->dtype == SY_DT_INT8)
        kind = nws == 1 ? Q_S8 : Q_C8;
    else if (x->dtype == SY_DT_UINT8 && w->dtype == SY_DT_UINT8 && nws == 1)
        kind = Q_U8;
    else
        return cpu_decline(why, len, "int8 x with int8 weights, or uint8 with per-tensor uint8 weights"), -1;
    sy_dtype ydt = ni > 7 && H->node_input(n, 7) ? H->node_input(n, 7)->dtype : x->dtype;
    int32_t z;
    if (ydt != x->dtype || !zp_at(ni > 2 ? H->node_input(n, 2) : NULL, x->dtype, 0, &z) ||
        !zp_at(ni > 7 ? H->node_input(n, 7) : NULL, x->dtype, 0, &z))
        return cpu_decline(why, len, "zero points must be constants of x's type and y of x's type"), -1;
    const sy_tensor *wz = ni > 5 ? H->node_input(n, 5) : NULL;
    for (size_t i = 0; wz && i < cpu_numel(wz); i++)
        if (!zp_at(wz, w->dtype, i, &z) || (kind != Q_U8 && z != 0))
            return cpu_decline(why, len, "int8 weights must be symmetric (zero point 0)"), -1;
    if (wz && cpu_numel(wz) != 1 && kind == Q_U8)
        return cpu_decline(why, len, "uint8 weights take one zero point"), -1;
    for (size_t i = 0; i < nws; i++) {
        /* XNNPACK's range for the requantization multiplier */
        float r;
        if (!scale_at(ws, i, &sw) || !((r = sx * sw / sy) >= 0x1p-32f && r < 256.0f))
            return cpu_decline(why, len, "s_x * s_w / s_y must lie in [2^-32, 256)"), -1;
    }
    return kind;
}

static bool qconv_accepts(const sy_node *n, char *why, size_t len) { return qconv_kind(n, why, len) >= 0; }

static void qconv_release(void *state)
{
    qconv_state *s = state;
    if (!s)
        return;
    if (s->op)
        xnn_delete_operator(s->op);
    cpu_q8conv_free(&s->own);
    free(s);
}

static size_t align64(size_t v) { return (v + 63u) & ~(size_t)63u; }

static sy_status *qconv_prepare(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0), *w = H->node_input(n, 3);
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *b = ni > 8 ? H->node_input(n, 8) : NULL;
    const cpu_provider *prov = H->node_provider_state(n);
    char why[160] = "";
    int kind = qconv_kind(n, why, sizeof why);
    if (kind < 0)
        return ERR(SY_ERR_UNSUPPORTED, "%s", why);
    qconv_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = cpu_conv_geometry(n, x, w, &s->g);
    if (st) {
        free(s);
        return st;
    }
    const cpu_conv_geom *g = &s->g;
    s->kind = kind;
    s->pool = cpu_pool_for(cpu_node_pool(n),
                           (double)(g->n * g->m * g->oh * g->ow) * (double)(g->c / g->group * g->kh * g->kw));
    s->isa = prov ? (cpu_isa)prov->isa : CPU_ISA_PORTABLE;
    int64_t gic = g->c / g->group, goc = g->m / g->group, ksz = g->kh * g->kw;
    size_t wn = (size_t)(g->m * gic * ksz);
    uint8_t *wx = malloc(wn + 1);
    int32_t *bx = calloc((size_t)g->m + 1, sizeof(int32_t));
    float *wsc = malloc((size_t)g->m * sizeof(float) + 1);
    if (!wx || !bx || !wsc) {
        free(wx);
        free(bx);
        free(wsc);
        free(s);
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for %zu weights", wn);
    }
    /* ONNX W[m][i][k] -> XNNPACK [m][k][i], bytes */
    for (int64_t m = 0; m < g->m; m++)
        for (int64_t i = 0; i < gic; i++)
            for (int64_t k = 0; k < ksz; k++)
                wx[(m * ksz + k) * gic + i] = ((const uint8_t *)w->data)[(m * gic + i) * ksz + k];
    float sx = *(const float *)H->node_input(n, 1)->data, sy = *(const float *)H->node_input(n, 6)->data;
    const sy_tensor *ws = H->node_input(n, 4);
    for (int64_t m = 0; m < g->m; m++)
        wsc[m] = ((const float *)ws->data)[cpu_numel(ws) == 1 ? 0 : (size_t)m];
    for (int64_t m = 0; b && m < g->m; m++) {
        size_t bi = cpu_numel(b) == 1 ? 0 : (size_t)m;
        if (b->dtype == SY_DT_INT32) {
            bx[m] = ((const int32_t *)b->data)[bi];
        } else { /* a float bias in codes of scale s_x * s_w, as the reference quantizes it */
            double v = sy_rq_round_even((double)((const float *)b->data)[bi] / ((double)sx * (double)wsc[m]));
            bx[m] = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
        }
    }
    int32_t xz = 0, yz = 0, wz = 0;
    zp_at(H->node_input(n, 2), x->dtype, 0, &xz);
    zp_at(ni > 7 ? H->node_input(n, 7) : NULL, x->dtype, 0, &yz);
    zp_at(ni > 5 ? H->node_input(n, 5) : NULL, w->dtype, 0, &wz);
    /* the fused activation as a code range, as the reference does it */
    int32_t lo, hi;
    cpu_q_act_range(n, x->dtype, sy, yz, &lo, &hi);
    if (prov && prov->own_q8conv && cpu_q8conv_fits(g)) {
        float *mult = wsc; /* s_x * s_w / s_y in single precision, XNNPACK's expression */
        for (int64_t m = 0; m < g->m; m++)
            mult[m] = sx * wsc[m] / sy;
        st = cpu_q8conv_init(&s->own, g, (const uint8_t *)w->data, kind == Q_U8, wz, bx, mult, xz, yz, lo, hi,
                             s->isa);
        free(wx);
        free(bx);
        free(wsc);
        if (st) {
            free(s);
            return st;
        }
        H->node_set_scratch(n, cpu_q8conv_scratch(&s->own));
        *state = s;
        return NULL;
    }
    enum xnn_status xs;
    uint32_t pt = (uint32_t)g->pt, pr = (uint32_t)g->pr, pb = (uint32_t)g->pb, pl = (uint32_t)g->pl;
    if (kind == Q_U8)
        xs = xnn_create_convolution2d_nhwc_qu8(pt, pr, pb, pl, (uint32_t)g->kh, (uint32_t)g->kw, (uint32_t)g->sh,
                                               (uint32_t)g->sw, (uint32_t)g->dh, (uint32_t)g->dw, (uint32_t)g->group,
                                               (size_t)gic, (size_t)goc, (size_t)g->c, (size_t)g->m, (uint8_t)xz, sx,
                                               (uint8_t)wz, wsc[0], wx, bx, (uint8_t)yz, sy, (uint8_t)lo, (uint8_t)hi,
                                               0, &s->op);
    else if (kind == Q_S8)
        xs = xnn_create_convolution2d_nhwc_qs8(pt, pr, pb, pl, (uint32_t)g->kh, (uint32_t)g->kw, (uint32_t)g->sh,
                                               (uint32_t)g->sw, (uint32_t)g->dh, (uint32_t)g->dw, (uint32_t)g->group,
                                               (size_t)gic, (size_t)goc, (size_t)g->c, (size_t)g->m, (int8_t)xz, sx,
                                               wsc[0], (const int8_t *)wx, bx, (int8_t)yz, sy, (int8_t)lo, (int8_t)hi,
                                               0, &s->op);
    else
        xs = xnn_create_convolution2d_nhwc_qc8(pt, pr, pb, pl, (uint32_t)g->kh, (uint32_t)g->kw, (uint32_t)g->sh,
                                               (uint32_t)g->sw, (uint32_t)g->dh, (uint32_t)g->dw, (uint32_t)g->group,
                                               (size_t)gic, (size_t)goc, (size_t)g->c, (size_t)g->m, (int8_t)xz, sx,
                                               wsc, (const int8_t *)wx, bx, (int8_t)yz, sy, (int8_t)lo, (int8_t)hi, 0,
                                               &s->op);
    free(wx);
    free(bx);
    free(wsc);
    if (xs != xnn_status_success) {
        free(s);
        return ERR(SY_ERR_UNSUPPORTED, "XNNPACK refused the integer convolution (status %d)", (int)xs);
    }
    size_t in_bytes = (size_t)(g->n * g->c * g->ih * g->iw), out_bytes = (size_t)(g->n * g->m * g->oh * g->ow);
    H->node_set_scratch(n, align64(in_bytes) + align64(out_bytes) + 64);
    *state = s;
    return NULL;
}

static sy_status *qconv_run(void *state, const sy_kernel_io *io)
{
    qconv_state *s = state;
    const cpu_conv_geom *g = &s->g;
    if (s->own.w || s->own.w8) {
        cpu_q8conv_run(&s->own, s->pool, io->inputs[0]->data, io->outputs[0]->data, io->scratch);
        return NULL;
    }
    size_t in_bytes = (size_t)(g->n * g->c * g->ih * g->iw);
    uint8_t *xin = (uint8_t *)(((uintptr_t)io->scratch + 63u) & ~(uintptr_t)63u);
    uint8_t *yout = xin + align64(in_bytes);
    cpu_layout_move(s->pool, s->isa, CPU_TO_NHWC_8, io->inputs[0]->data, xin, g->n, g->c, g->ih * g->iw, g->c);
    enum xnn_status xs;
    size_t n = (size_t)g->n, h = (size_t)g->ih, w = (size_t)g->iw;
    if (s->kind == Q_U8)
        xs = xnn_setup_convolution2d_nhwc_qu8(s->op, n, h, w, xin, yout, s->pool);
    else if (s->kind == Q_S8)
        xs = xnn_setup_convolution2d_nhwc_qs8(s->op, n, h, w, (const int8_t *)xin, (int8_t *)yout, s->pool);
    else
        xs = xnn_setup_convolution2d_nhwc_qc8(s->op, n, h, w, (const int8_t *)xin, (int8_t *)yout, s->pool);
    if (xs == xnn_status_success)
        xs = xnn_run_operator(s->op, s->pool);
    if (xs != xnn_status_success)
        return ERR(SY_ERR_RUNTIME, "XNNPACK integer convolution failed (status %d)", (int)xs);
    cpu_layout_move(s->pool, s->isa, CPU_TO_NCHW_8, yout, io->outputs[0]->data, g->n, g->m, g->oh * g->ow, g->m);
    return NULL;
}

#define Q8 (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8))
static const sy_kernel_def qconv_kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.quant", "QConv", 1, 0, "cpu", Q8, 0, 0u, qconv_accepts, qconv_prepare,
     qconv_run, qconv_release, NULL},
    {sizeof(sy_kernel_def), "", "QLinearConv", 10, 0, "cpu", Q8, 0, 0u, qconv_accepts, qconv_prepare, qconv_run,
     qconv_release, NULL},
};

sy_status *cpu_qconv_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qconv_kernels); i++)
        SY_TRY(host->register_kernel(p, &qconv_kernels[i]));
    return NULL;
}
