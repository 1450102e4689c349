/*
 * QMaxPool (switchyard.quant: DequantizeLinear -> MaxPool -> QuantizeLinear
 * folded) on 8-bit NCHW codes with constant per-tensor parameters: the
 * bytes of cpu_ref's shared kernel (qk_maxpool_run), faster.
 *
 * The maximum of the dequantized values is the dequantized maximum code
 * (the scale is positive), so the window's largest code is found first and
 * mapped once: kept when x and y share scale, zero point and type, else
 * through a 256-entry table filled at prepare by the SDK's requantizer over
 * every code (sy_rq_apply_n of code - x_zp with s_x / s_y, the node's form:
 * what qk_maxpool_run computes per window). Windows are taken apart: for
 * each output row, the elementwise maximum of its kernel rows (contiguous,
 * which the compiler vectorizes), then the horizontal windows over that
 * one row. Cells outside the input are skipped, as in the shared kernel; a
 * window with none inside gives y_zp. cpu_ref's shared kernel loads each
 * code through a type switch per tap (squeezenet1.0's three int8 MaxPools
 * were half of its int8 step).
 */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#define H cpu_host

typedef struct qpool_state {
    cpu_pool_geom g;
    bool x_s8;        /* int8 codes (else uint8) */
    bool same;        /* y has x's parameters and type: the code itself */
    bool vbmi;        /* cpu_map_bytes's 64-byte path */
    uint8_t empty;    /* the byte of y_zp (a window with no cell inside) */
    int64_t in_lo, in_hi; /* the output columns whose taps all lie inside the row */
    uint8_t map[256]; /* x code byte -> y code byte when !same */
} qpool_state;

static bool qpool_check(const sy_node *n, char *why, size_t len)
{
    if (H->node_num_inputs(n) < 4)
        return cpu_decline(why, len, "x, x_scale, x_zp, y_scale, y_zp expected (cpu_ref reports it)");
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    if (!x || !y || !cpu_is_q8(x->dtype) || !cpu_is_q8(y->dtype))
        return cpu_decline(why, len, "8-bit codes in and out only");
    if (sy_attr_int_or(H, n, "global", 0) != 0)
        return cpu_decline(why, len, "the global form is cpu_ref's");
    sy_rq_mode mode;
    if (!cpu_q_rq_mode(n, &mode))
        return cpu_decline(why, len, "an unknown requant attribute (cpu_ref reports it)");
    float s;
    int32_t z;
    const sy_tensor *xz = H->node_input(n, 2), *yz = H->node_num_inputs(n) > 4 ? H->node_input(n, 4) : NULL;
    if (!cpu_q_scale_scalar(H->node_input(n, 1), &s) || !cpu_q_scale_scalar(H->node_input(n, 3), &s) ||
        (xz && !cpu_q_zp_scalar(xz, x->dtype, &z)) || (yz && !cpu_q_zp_scalar(yz, y->dtype, &z)))
        return cpu_decline(why, len, "scales and zero points must be constant scalars");
    /* the float MaxPool's attribute rules: rank 4, NOTSET/VALID padding */
    return cpu_maxpool_accepts(n, why, len);
}

static bool qpool_accepts(const sy_node *n, char *why, size_t len) { return qpool_check(n, why, len); }

static sy_status *qpool_prepare(sy_node *n, void **state)
{
    char why[160] = "";
    if (!qpool_check(n, why, sizeof why))
        return H->status_new(SY_ERR_UNSUPPORTED, "%s", why);
    qpool_state *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = cpu_maxpool_geometry(n, &s->g);
    if (st) {
        free(s);
        return st;
    }
    H->node_set_scratch(n, (size_t)s->g.iw); /* one row of the kernel rows' maximum */
    const cpu_pool_geom *g = &s->g;
    s->in_lo = g->pl ? (g->pl + g->sw - 1) / g->sw : 0; /* first ox with ox * sw - pl >= 0 */
    int64_t reach = (g->kw - 1) * g->dw;                /* last tap iw = ox * sw - pl + reach < iw */
    s->in_hi = g->iw - 1 - reach + g->pl >= 0 ? (g->iw - 1 - reach + g->pl) / g->sw + 1 : 0;
    if (s->in_hi > g->ow)
        s->in_hi = g->ow;
    if (s->in_hi < s->in_lo)
        s->in_hi = s->in_lo;
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    const sy_tensor *xz = H->node_input(n, 2), *yz = H->node_num_inputs(n) > 4 ? H->node_input(n, 4) : NULL;
    sy_rq_mode mode;
    (void)cpu_q_rq_mode(n, &mode);
    float sx, sy;
    int32_t zx = 0, zy = 0, lo, hi;
    (void)cpu_q_scale_scalar(H->node_input(n, 1), &sx);
    (void)cpu_q_scale_scalar(H->node_input(n, 3), &sy);
    if (xz)
        (void)cpu_q_zp_scalar(xz, x->dtype, &zx);
    if (yz)
        (void)cpu_q_zp_scalar(yz, y->dtype, &zy);
    sy_q_storage_range(y->dtype, &lo, &hi);
    s->x_s8 = x->dtype == SY_DT_INT8;
    /* cpu_ref's test (run_pool): equal scales and zero points; its
     * qk_maxpool_run then stores the code as it is */
    s->same = sx == sy && zx == zy && x->dtype == y->dtype;
    s->empty = (uint8_t)zy;
    sy_requant rq;
    sy_rq_init(&rq, mode, (double)sx / sy, zy, lo, hi);
    int32_t cen[256], codes[256];
    for (int32_t b = 0; b < 256; b++) /* byte b as x's code, minus its zero point */
        cen[b] = (s->x_s8 ? (int32_t)(int8_t)b : b) - zx;
    sy_rq_apply_n(&rq, 0, cen, codes, 256);
    for (int32_t b = 0; b < 256; b++)
        s->map[b] = (uint8_t)codes[b];
    const cpu_provider *prov = H->node_provider_state(n);
    s->vbmi = prov && prov->vbmi;
    *state = s;
    return NULL;
}

/* One plane, codes of type T (int8_t or uint8_t: the order of the maximum).
 * The geometry is read into locals first: y is bytes, which may alias
 * anything, so reading it through s after every store kept the loops
 * scalar (a reload of g->iw per element of the kernel rows' maximum). */
#define QPOOL_PLANE(NAME, T)                                                                                           \
    static void NAME(const qpool_state *s, const T *restrict x, uint8_t *restrict y, T *restrict row)                  \
    {                                                                                                                  \
        const cpu_pool_geom *g = &s->g;                                                                                \
        const int64_t ih = g->ih, iw = g->iw, oh = g->oh, ow = g->ow, kh = g->kh, kw = g->kw;                          \
        const int64_t sh = g->sh, sw = g->sw, dh = g->dh, dw = g->dw, pt = g->pt, pl = g->pl;                          \
        const int64_t in_lo = s->in_lo, in_hi = s->in_hi;                                                              \
        const bool same = s->same;                                                                                     \
        const uint8_t empty = s->empty, *map = s->map;                                                                 \
        for (int64_t oy = 0; oy < oh; oy++) {                                                                          \
            uint8_t *restrict yr = y + oy * ow;                                                                        \
            int64_t ih0 = oy * sh - pt, k0 = 0, k1 = kh;                                                               \
            while (k0 < k1 && ih0 + k0 * dh < 0)                                                                       \
                k0++;                                                                                                  \
            while (k1 > k0 && ih0 + (k1 - 1) * dh >= ih)                                                               \
                k1--;                                                                                                  \
            if (k0 == k1) { /* no input row in the windows */                                                          \
                memset(yr, empty, (size_t)ow);                                                                         \
                continue;                                                                                              \
            }                                                                                                          \
            const T *restrict src = x + (ih0 + k0 * dh) * iw;                                                          \
            if (k1 - k0 > 1) {                                                                                         \
                memcpy(row, src, (size_t)iw * sizeof(T));                                                              \
                for (int64_t k = k0 + 1; k < k1; k++) {                                                                \
                    const T *restrict r = x + (ih0 + k * dh) * iw;                                                     \
                    for (int64_t i = 0; i < iw; i++)                                                                   \
                        row[i] = r[i] > row[i] ? r[i] : row[i];                                                        \
                }                                                                                                      \
                src = row;                                                                                             \
            }                                                                                                          \
            /* the interior, every tap inside: the 3-wide windows of SqueezeNet's and most CNNs' pools unrolled */     \
            const T *restrict w0 = src + in_lo * sw - pl;                                                              \
            if (kw == 3 && dw == 1 && sw == 2) /* stride 2 as a constant: the compiler's interleaved loads */         \
                for (int64_t i = 0; i < in_hi - in_lo; i++) {                                                          \
                    T a = w0[2 * i] > w0[2 * i + 1] ? w0[2 * i] : w0[2 * i + 1];                                       \
                    yr[in_lo + i] = (uint8_t)(a > w0[2 * i + 2] ? a : w0[2 * i + 2]);                                  \
                }                                                                                                      \
            else if (kw == 3 && dw == 1)                                                                               \
                for (int64_t ox = in_lo; ox < in_hi; ox++, w0 += sw) {                                                 \
                    T a = w0[0] > w0[1] ? w0[0] : w0[1];                                                               \
                    yr[ox] = (uint8_t)(a > w0[2] ? a : w0[2]);                                                         \
                }                                                                                                      \
            else                                                                                                       \
                for (int64_t ox = in_lo; ox < in_hi; ox++, w0 += sw) {                                                 \
                    T best = w0[0];                                                                                    \
                    for (int64_t j = 1; j < kw; j++)                                                                   \
                        best = w0[j * dw] > best ? w0[j * dw] : best;                                                  \
                    yr[ox] = (uint8_t)best;                                                                            \
                }                                                                                                      \
            if (!same && in_hi > in_lo)                                                                                \
                cpu_map_bytes(s->vbmi, map, yr + in_lo, yr + in_lo, (size_t)(in_hi - in_lo));                          \
            /* the border columns, with the checks */                                                                  \
            for (int64_t ox = 0; ox < ow; ox++) {                                                                      \
                if (ox == in_lo && in_hi > in_lo) {                                                                    \
                    ox = in_hi - 1;                                                                                    \
                    continue;                                                                                          \
                }                                                                                                      \
                int64_t iw0 = ox * sw - pl, j0 = 0, j1 = kw;                                                           \
                while (j0 < j1 && iw0 + j0 * dw < 0)                                                                   \
                    j0++;                                                                                              \
                while (j1 > j0 && iw0 + (j1 - 1) * dw >= iw)                                                           \
                    j1--;                                                                                              \
                if (j0 == j1) {                                                                                        \
                    yr[ox] = empty;                                                                                    \
                    continue;                                                                                          \
                }                                                                                                      \
                T best = src[iw0 + j0 * dw];                                                                           \
                for (int64_t j = j0 + 1; j < j1; j++) {                                                                \
                    T v = src[iw0 + j * dw];                                                                           \
                    best = v > best ? v : best;                                                                        \
                }                                                                                                      \
                yr[ox] = same ? (uint8_t)best : map[(uint8_t)best];                                                    \
            }                                                                                                          \
        }                                                                                                              \
    }
QPOOL_PLANE(qpool_plane_s8, int8_t)
QPOOL_PLANE(qpool_plane_u8, uint8_t)

static sy_status *qpool_run(void *state, const sy_kernel_io *io)
{
    const qpool_state *s = state;
    const cpu_pool_geom *g = &s->g;
    const uint8_t *x = io->inputs[0]->data;
    uint8_t *y = io->outputs[0]->data;
    size_t in_plane = (size_t)(g->ih * g->iw), out_plane = (size_t)(g->oh * g->ow);
    for (int64_t p = 0; p < g->n * g->c; p++) {
        const uint8_t *xp = x + (size_t)p * in_plane;
        uint8_t *yp = y + (size_t)p * out_plane;
        if (s->x_s8)
            qpool_plane_s8(s, (const int8_t *)xp, yp, io->scratch);
        else
            qpool_plane_u8(s, xp, yp, io->scratch);
    }
    return NULL;
}

#define Q8 (SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_UINT8))
static const sy_kernel_def qpool_kernels[] = {
    {sizeof(sy_kernel_def), "switchyard.quant", "QMaxPool", 1, 0, "cpu", Q8, 0, 0u, qpool_accepts, qpool_prepare,
     qpool_run, free, NULL},
};

sy_status *cpu_qpool_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(qpool_kernels); i++)
        SY_TRY(host->register_kernel(p, &qpool_kernels[i]));
    return NULL;
}
