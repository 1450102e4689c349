/*
 * GridSample (16: 4-D, modes bilinear/nearest/bicubic; 20, 22: N-D, modes
 * linear/nearest/cubic) and AffineGrid (20), fp32.
 *
 * GridSample: Y[n, c, o...] samples X[n, c] at the normalised point
 * grid[n, o..., :] (last axis in reverse dim order: x = W, y = H, z = D).
 * A normalised v maps to (v + 1)(d - 1)/2 with align_corners, else
 * ((v + 1) d - 1)/2. A point outside [0, d - 1] (align_corners) or
 * [-0.5, d - 0.5] is clamped (padding border) or reflected into it
 * (reflection) first; samples outside the image then read 0 (zeros), the
 * clamped index (border) or the reflected index (reflection). nearest
 * rounds half to even;
 * linear and cubic (Keys, a = -0.75) interpolate separably over 2 and 4
 * samples per axis.
 *
 * AffineGrid: grid[n, d, h, w] = theta[n] (x_w, y_h, z_d, 1) with the base
 * coordinates -1 + 2i/(L - 1) (align_corners) or -1 + (2i + 1)/L.
 */
#include "vision.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#define GS_MAX_R 3 /* spatial dims handled */

typedef enum { GS_NEAREST, GS_LINEAR, GS_CUBIC } gs_mode;
typedef enum { GS_ZEROS, GS_BORDER, GS_REFLECTION } gs_pad;

typedef struct gs_state {
    gs_mode mode;
    gs_pad pad;
    bool align;
} gs_state;

static sy_status *gs_attrs(const sy_node *n, int32_t r, gs_state *s)
{
    char m[16], p[16];
    sy_attr_string_or(H, n, "mode", H->node_opset(n) < 20 ? "bilinear" : "linear", m, sizeof m);
    sy_attr_string_or(H, n, "padding_mode", "zeros", p, sizeof p);
    bool old = H->node_opset(n) < 20;
    if (!strcmp(m, "nearest"))
        s->mode = GS_NEAREST;
    else if (!strcmp(m, old ? "bilinear" : "linear"))
        s->mode = GS_LINEAR;
    else if (!strcmp(m, old ? "bicubic" : "cubic"))
        s->mode = GS_CUBIC;
    else
        return ERR(SY_ERR_INVALID_MODEL, "mode must be \"%s\", \"nearest\" or \"%s\" at opset %d, got \"%s\"",
                   old ? "bilinear" : "linear", old ? "bicubic" : "cubic", (int)H->node_opset(n), m);
    if (!strcmp(p, "zeros"))
        s->pad = GS_ZEROS;
    else if (!strcmp(p, "border"))
        s->pad = GS_BORDER;
    else if (!strcmp(p, "reflection"))
        s->pad = GS_REFLECTION;
    else
        return ERR(SY_ERR_INVALID_MODEL, "padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"%s\"", p);
    if (s->mode == GS_CUBIC && r != 2)
        return ERR(SY_ERR_UNSUPPORTED, "cubic mode is defined for 4-D inputs only, got %d spatial dims", (int)r);
    s->align = sy_attr_int_or(H, n, "align_corners", 0) != 0;
    return NULL;
}

static sy_status *infer_grid_sample(sy_node *n)
{
    const sy_tensor *x, *g;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &g));
    if (x->dtype != SY_DT_FLOAT32 || g->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "X and grid must be float32");
    int32_t r = x->rank - 2;
    if (r < 1 || r > GS_MAX_R || (H->node_opset(n) < 20 && r != 2))
        return ERR(SY_ERR_SHAPE, "X must be [N, C, spatial...] with %s spatial dims, got rank %d",
                   H->node_opset(n) < 20 ? "2" : "1 to 3", x->rank);
    if (g->rank != x->rank || g->dims[0] != x->dims[0] || g->dims[g->rank - 1] != r)
        return ERR(SY_ERR_SHAPE, "grid must be [%lld, out spatial..., %d] (rank %d)", (long long)x->dims[0], (int)r,
                   x->rank);
    gs_state s;
    SY_TRY(gs_attrs(n, r, &s));
    int64_t d[SY_MAX_RANK];
    d[0] = x->dims[0];
    d[1] = x->dims[1];
    for (int32_t i = 0; i < r; i++)
        d[2 + i] = g->dims[1 + i];
    return H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank, d);
}

static sy_status *prepare_grid_sample(sy_node *n, void **state)
{
    gs_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = gs_attrs(n, H->node_input(n, 0)->rank - 2, s);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static float reflect(float x, float lo, float hi)
{
    float rng = hi - lo;
    if (x < lo) {
        float dx = lo - x;
        int64_t k = (int64_t)(dx / rng);
        float r = dx - (float)k * rng;
        return k % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        float dx = x - hi;
        int64_t k = (int64_t)(dx / rng);
        float r = dx - (float)k * rng;
        return k % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

typedef struct gs_plane {
    const float *data;
    int32_t r;
    int64_t dims[GS_MAX_R];
    float lo[GS_MAX_R], hi[GS_MAX_R];
    gs_pad pad;
} gs_plane;

/* the value at integer index idx (per dim, outermost first) with padding */
static float pixel(const gs_plane *p, const int64_t *idx)
{
    int64_t off = 0;
    for (int32_t d = 0; d < p->r; d++) {
        int64_t i = idx[d], len = p->dims[d];
        if (i < 0 || i >= len) {
            if (p->pad == GS_ZEROS)
                return 0.0f;
            if (p->pad == GS_BORDER)
                i = i < 0 ? 0 : len - 1;
            else
                i = (int64_t)reflect((float)i, p->lo[d], p->hi[d]);
            i = i < 0 ? 0 : i >= len ? len - 1 : i; /* a reflection of a far point stays inside */
        }
        off = off * len + i;
    }
    return p->data[off];
}

static void cubic_coeffs(float t, float *c)
{
    const float a = -0.75f;
    float x = fabsf(t);
    c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

/* separable interpolation over taps per dim: base index b[d] + k, weight w[d][k] */
static float interpolate(const gs_plane *p, const int64_t *b, float (*w)[4], int taps)
{
    int64_t idx[GS_MAX_R];
    int k[GS_MAX_R] = {0};
    float acc = 0.0f;
    for (;;) {
        float wt = 1.0f;
        for (int32_t d = 0; d < p->r; d++) {
            idx[d] = b[d] + k[d];
            wt *= w[d][k[d]];
        }
        acc += wt * pixel(p, idx);
        int32_t d = p->r - 1;
        while (d >= 0 && ++k[d] == taps)
            k[d--] = 0;
        if (d < 0)
            return acc;
    }
}

static sy_status *run_grid_sample(void *state, const sy_kernel_io *io)
{
    const gs_state *s = state;
    const sy_tensor *x = io->inputs[0], *g = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    int32_t r = x->rank - 2;
    int64_t N = x->dims[0], C = x->dims[1], in_sp = 1, out_sp = 1;
    gs_plane p = {.r = r, .pad = s->pad};
    for (int32_t d = 0; d < r; d++) {
        p.dims[d] = x->dims[2 + d];
        in_sp *= p.dims[d];
        out_sp *= y->dims[2 + d];
        p.lo[d] = s->align ? 0.0f : -0.5f;
        p.hi[d] = s->align ? (float)p.dims[d] - 1.0f : (float)p.dims[d] - 0.5f;
    }
    const float *gd = g->data;
    float *yd = y->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < out_sp; o++) {
            const float *gp = gd + (n * out_sp + o) * r;
            float pos[GS_MAX_R];
            for (int32_t d = 0; d < r; d++) {
                float v = gp[r - 1 - d], len = (float)p.dims[d];
                float c = s->align ? (v + 1) / 2.0f * (len - 1) : ((v + 1) * len - 1) / 2.0f;
                if (s->mode == GS_NEAREST)
                    c = nearbyintf(c);
                if (c < p.lo[d] || c > p.hi[d]) {
                    if (s->pad == GS_BORDER)
                        c = c < 0 ? 0 : c > len - 1 ? len - 1 : c;
                    else if (s->pad == GS_REFLECTION)
                        c = reflect(c, p.lo[d], p.hi[d]);
                }
                pos[d] = c;
            }
            int64_t b[GS_MAX_R];
            float w[GS_MAX_R][4];
            int taps = 1;
            for (int32_t d = 0; d < r; d++) {
                if (s->mode == GS_NEAREST) {
                    b[d] = (int64_t)pos[d];
                    w[d][0] = 1.0f;
                } else {
                    float f = floorf(pos[d]);
                    float t = pos[d] - f;
                    if (s->mode == GS_LINEAR) {
                        b[d] = (int64_t)f;
                        w[d][0] = 1.0f - t;
                        w[d][1] = t;
                        taps = 2;
                    } else {
                        b[d] = (int64_t)f - 1;
                        cubic_coeffs(t, w[d]);
                        taps = 4;
                    }
                }
            }
            for (int64_t c = 0; c < C; c++) {
                p.data = (const float *)x->data + (n * C + c) * in_sp;
                yd[(n * C + c) * out_sp + o] = interpolate(&p, b, w, taps);
            }
        }
    return NULL;
}

/* ======================================================================== */
/* AffineGrid                                                               */
/* ======================================================================== */

static sy_status *infer_affine_grid(sy_node *n)
{
    const sy_tensor *th, *sz;
    SY_TRY(sy_need_input(H, n, 0, &th));
    SY_TRY(sy_need_input(H, n, 1, &sz));
    if (th->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "theta must be float32, got %s", sy_dt_name(th->dtype));
    if (sz->dtype != SY_DT_INT64 || sz->rank != 1 || (sz->dims[0] != 4 && sz->dims[0] != 5))
        return ERR(SY_ERR_SHAPE, "size must be int64 [4] (N, C, H, W) or [5] (N, C, D, H, W)");
    if (!sz->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the output shape needs the values of size");
    const int64_t *s = sz->data;
    int32_t r = (int32_t)sz->dims[0] - 2;
    if (th->rank != 3 || th->dims[0] != s[0] || th->dims[1] != r || th->dims[2] != r + 1)
        return ERR(SY_ERR_SHAPE, "theta must be [%lld, %d, %d] for a size of %d values", (long long)s[0], (int)r,
                   (int)r + 1, (int)r + 2);
    int64_t d[SY_MAX_RANK];
    d[0] = s[0];
    for (int32_t i = 0; i < r; i++) {
        if (s[2 + i] <= 0)
            return ERR(SY_ERR_SHAPE, "size[%d] must be positive, got %lld", (int)(2 + i), (long long)s[2 + i]);
        d[1 + i] = s[2 + i];
    }
    d[1 + r] = r;
    return H->node_set_output(n, 0, SY_DT_FLOAT32, r + 2, d);
}

static sy_status *prepare_affine_grid(sy_node *n, void **state)
{
    bool *align = malloc(sizeof *align);
    if (!align)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    *align = sy_attr_int_or(H, n, "align_corners", 0) != 0;
    *state = align;
    return NULL;
}

static float base_coord(int64_t i, int64_t len, bool align)
{
    if (align)
        return len == 1 ? 0.0f : -1.0f + 2.0f * (float)i / (float)(len - 1);
    return -1.0f + (2.0f * (float)i + 1.0f) / (float)len;
}

static sy_status *run_affine_grid(void *state, const sy_kernel_io *io)
{
    bool align = *(const bool *)state;
    sy_tensor *y = io->outputs[0];
    int32_t r = y->rank - 2;
    int64_t N = y->dims[0], D = r == 3 ? y->dims[1] : 1, Hh = y->dims[r == 3 ? 2 : 1], W = y->dims[r == 3 ? 3 : 2];
    const float *th = io->inputs[0]->data;
    float *out = y->data;
    for (int64_t n = 0; n < N; n++) {
        const float *t = th + n * r * (r + 1);
        for (int64_t dz = 0; dz < D; dz++)
            for (int64_t h = 0; h < Hh; h++)
                for (int64_t w = 0; w < W; w++) {
                    float v[4] = {base_coord(w, W, align), base_coord(h, Hh, align), 0.0f, 1.0f};
                    if (r == 3)
                        v[2] = base_coord(dz, D, align);
                    else
                        v[2] = 1.0f;
                    for (int32_t k = 0; k < r; k++) {
                        float acc = 0.0f;
                        for (int32_t j = 0; j <= r; j++)
                            acc += t[k * (r + 1) + j] * v[j];
                        *out++ = acc;
                    }
                }
    }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_gs[] = {ATTR("align_corners", INT), ATTR("mode", STRING), ATTR("padding_mode", STRING)};
static const sy_attr_def a_ag[] = {ATTR("align_corners", INT)};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("GridSample", 16, 2, 2, 1, 1, SY_ATTRS(a_gs), infer_grid_sample, SY_NO_INPLACE, 0),
    SY_SCHEMA("GridSample", 20, 2, 2, 1, 1, SY_ATTRS(a_gs), infer_grid_sample, SY_NO_INPLACE, 0),
    SY_SCHEMA("GridSample", 22, 2, 2, 1, 1, SY_ATTRS(a_gs), infer_grid_sample, SY_NO_INPLACE, 0),
    SY_SCHEMA("AffineGrid", 20, 2, 2, 1, 1, SY_ATTRS(a_ag), infer_affine_grid, SY_NO_INPLACE, 0),
};

#define F32 SY_DT_BIT(SY_DT_FLOAT32)
static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("GridSample", 1, 0, F32, 0, prepare_grid_sample, run_grid_sample, sy_release_free),
    SY_CPU_KERNEL("AffineGrid", 1, 0, F32, 0, prepare_affine_grid, run_affine_grid, sy_release_free),
};

sy_status *vision_grid_sample_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
