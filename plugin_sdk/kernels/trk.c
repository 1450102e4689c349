/* The float32 training kernels (trk.h): backward steps and optimizer
 * updates shared by the host trainer and the FP32 training packages. */
#include "trk.h"

#include "tflk.h"

#include <string.h>

void trk_relu_grad(int64_t n, const float *dy, const float *x, float *dx)
{
    for (int64_t i = 0; i < n; i++)
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

void trk_abs_grad(int64_t n, const float *dy, const float *x, float *dx)
{
    for (int64_t i = 0; i < n; i++)
        dx[i] = x[i] > 0.0f ? dy[i] : x[i] < 0.0f ? -dy[i] : 0.0f;
}

void trk_relu(int64_t n, const float *x, float *y)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void trk_concat_self_grad(int64_t n, const float *dy, float *dx)
{
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] + dy[n + i];
}

void trk_dw_conv_in_place(int32_t c, int32_t h, int32_t w, int32_t kh, int32_t kw, int32_t pt, int32_t pl,
                          const float *wt, float *xy, float *line)
{
    const int64_t plane = (int64_t)h * w;
    for (int32_t ch = 0; ch < c; ch++) {
        float *p = xy + ch * plane;
        const float *k = wt + (int64_t)ch * kh * kw;
        for (int32_t oy = 0; oy < h; oy++) {
            /* row oy's input is overwritten below; rows oy + 1 .. oy + pt still read it */
            memcpy(line + (int64_t)(oy % (pt + 1)) * w, p + (int64_t)oy * w, (size_t)w * sizeof *p);
            for (int32_t ox = 0; ox < w; ox++) {
                float acc = 0.0f;
                for (int32_t ky = 0; ky < kh; ky++) {
                    const int32_t iy = oy - pt + ky;
                    if (iy < 0 || iy >= h)
                        continue;
                    const float *row = iy <= oy ? line + (int64_t)(iy % (pt + 1)) * w : p + (int64_t)iy * w;
                    for (int32_t kx = 0; kx < kw; kx++) {
                        const int32_t ix = ox - pl + kx;
                        if (ix < 0 || ix >= w)
                            continue;
                        acc += row[ix] * k[ky * kw + kx];
                    }
                }
                p[(int64_t)oy * w + ox] = acc;
            }
        }
    }
}

/* the rows of channel ch's input trk_dw_conv_s_in_place copies before output
 * row oy is placed: while *saved (the next row not yet considered) starts
 * below the place's end; rows below need (no later output row reads them)
 * are passed over. Each row kept is copied into the ring (ring NULL: only
 * counted); returns the most rows live in the ring at once in the call.
 * Shared by the kernel and the ring's size, so the two cannot disagree. */
static int32_t dw_saves(int64_t ch, int32_t ih, int32_t iw, int32_t sh, int32_t pt, int32_t oh, int32_t ow, int32_t oy,
                        int32_t *saved, float *ring, int32_t nring, const float *in)
{
    const int64_t end = ch * oh * ow + (int64_t)(oy + 1) * ow, in0 = ch * ih * iw;
    const int32_t need = (oy + 1) * sh - pt; /* the first row a later output row reads */
    int32_t most = 0;
    for (; *saved < ih && oy + 1 < oh && in0 + (int64_t)*saved * iw < end; ++*saved) {
        if (*saved < need)
            continue;
        if (ring)
            memcpy(ring + (int64_t)(*saved % nring) * iw, in + (int64_t)*saved * iw, (size_t)iw * sizeof *ring);
        most = *saved - (need > 0 ? need : 0) + 1 > most ? *saved - (need > 0 ? need : 0) + 1 : most;
    }
    return most;
}

int32_t trk_dw_conv_ring_rows(int32_t c, int32_t ih, int32_t iw, int32_t sh, int32_t pt, int32_t oh, int32_t ow)
{
    int32_t most = 0;
    for (int32_t ch = 0; ch < c; ch++) {
        int32_t saved = 0;
        for (int32_t oy = 0; oy < oh; oy++) {
            int32_t m = dw_saves(ch, ih, iw, sh, pt, oh, ow, oy, &saved, NULL, 1, NULL);
            most = m > most ? m : most;
        }
    }
    return most;
}

void trk_dw_conv_s_in_place(int32_t c, int32_t ih, int32_t iw, int32_t kh, int32_t kw, int32_t sh, int32_t sw,
                            int32_t pt, int32_t pl, int32_t oh, int32_t ow, const float *wt, float *xy, float *ring,
                            int32_t nring)
{
    float *line = ring + (int64_t)nring * iw;
    for (int32_t ch = 0; ch < c; ch++) {
        const float *in = xy + (int64_t)ch * ih * iw, *k = wt + (int64_t)ch * kh * kw;
        float *out = xy + (int64_t)ch * oh * ow;
        int32_t saved = 0; /* rows below it are read from the ring (or no longer read) */
        for (int32_t oy = 0; oy < oh; oy++) {
            for (int32_t ox = 0; ox < ow; ox++) {
                float acc = 0.0f;
                for (int32_t ky = 0; ky < kh; ky++) {
                    const int32_t iy = oy * sh - pt + ky;
                    if (iy < 0 || iy >= ih)
                        continue;
                    const float *row = iy < saved ? ring + (int64_t)(iy % nring) * iw : in + (int64_t)iy * iw;
                    for (int32_t kx = 0; kx < kw; kx++) {
                        const int32_t ix = ox * sw - pl + kx;
                        if (ix < 0 || ix >= iw)
                            continue;
                        acc += row[ix] * k[ky * kw + kx];
                    }
                }
                line[ox] = acc;
            }
            (void)dw_saves(ch, ih, iw, sh, pt, oh, ow, oy, &saved, ring, nring, in);
            memcpy(out + (int64_t)oy * ow, line, (size_t)ow * sizeof *line);
        }
    }
}

/* row-major element strides of dims */
static void strides_of(int32_t rank, const int32_t *dims, int32_t *st)
{
    for (int32_t d = rank - 1, s = 1; d >= 0; d--) {
        st[d] = s;
        s *= dims[d];
    }
}

void trk_pad_grad(int32_t rank, const int32_t *xdims, const int32_t *ydims, const int32_t *before, const float *dy,
                  float *dx)
{
    /* x's shape read from dy at its strides, starting at the window's corner */
    tflk_strided c = {.rank = rank, .esize = 4};
    int32_t ys[TFLK_BIN_RANK], off = 0;
    strides_of(rank, ydims, ys);
    for (int32_t d = 0; d < rank; d++) {
        c.dims[d] = xdims[d];
        c.st[d] = ys[d];
        off += before[d] * ys[d];
    }
    tflk_strided_copy(&c, dy + off, dx);
}

void trk_slice_grad(int32_t rank, const int32_t *xdims, const int32_t *ydims, const int32_t *start, const float *dy,
                    float *dx)
{
    /* a constant pad of 0.0f (all bytes zero) back to x's shape */
    tflk_pad p = {.rank = rank, .esize = 4, .mode = 0};
    for (int32_t d = 0; d < rank; d++) {
        p.odims[d] = xdims[d];
        p.idims[d] = ydims[d];
        p.before[d] = start[d];
    }
    tflk_pad_run(&p, dy, dx);
}

void trk_slice_step_grad(int32_t rank, const int32_t *xdims, const int32_t *ydims, const int32_t *start,
                         const int32_t *step, const float *dy, float *dx)
{
    int32_t xs[TFLK_BIN_RANK], idx[TFLK_BIN_RANK] = {0};
    int64_t nx = 1, ny = 1, off = 0;
    strides_of(rank, xdims, xs);
    for (int32_t d = 0; d < rank; d++) {
        nx *= xdims[d];
        ny *= ydims[d];
        off += (int64_t)start[d] * xs[d];
    }
    memset(dx, 0, (size_t)nx * sizeof *dx);
    /* walk dy in order; off is x's offset of dy's index idx */
    for (int64_t i = 0; i < ny; i++) {
        dx[off] = dy[i];
        for (int32_t d = rank - 1; d >= 0; d--) {
            off += (int64_t)step[d] * xs[d];
            if (++idx[d] < ydims[d])
                break;
            off -= (int64_t)step[d] * xs[d] * ydims[d];
            idx[d] = 0;
        }
    }
}

void trk_transpose_grad(int32_t rank, const int32_t *xdims, const int32_t *perm, const float *dy, float *dx)
{
    /* x's axis perm[d] is y's axis d: walking x, that axis steps y's stride d */
    int32_t ydims[TFLK_BIN_RANK], ys[TFLK_BIN_RANK];
    for (int32_t d = 0; d < rank; d++)
        ydims[d] = xdims[perm[d]];
    strides_of(rank, ydims, ys);
    tflk_strided c = {.rank = rank, .esize = 4};
    for (int32_t d = 0; d < rank; d++) {
        c.dims[perm[d]] = xdims[perm[d]];
        c.st[perm[d]] = ys[d];
    }
    tflk_strided_copy(&c, dy, dx);
}

void trk_reduce_grad(int32_t rank, const int32_t *xdims, uint32_t axes, float k, const float *dy, float *dx)
{
    /* dy at keepdims' shape (reduced axes of size 1): a reduced axis steps nothing */
    int32_t ydims[TFLK_BIN_RANK], ys[TFLK_BIN_RANK], n = 1;
    for (int32_t d = 0; d < rank; d++) {
        ydims[d] = (axes >> d) & 1u ? 1 : xdims[d];
        n *= xdims[d];
    }
    strides_of(rank, ydims, ys);
    tflk_strided c = {.rank = rank, .esize = 4};
    for (int32_t d = 0; d < rank; d++) {
        c.dims[d] = xdims[d];
        c.st[d] = (axes >> d) & 1u ? 0 : ys[d];
    }
    tflk_strided_copy(&c, dy, dx);
    for (int32_t i = 0; i < n; i++)
        dx[i] = dx[i] * k;
}

void trk_eltwise_grad(int32_t op, int32_t c_first, int64_t n, const float *dy, const float *x, const float *c,
                      float *dx, float *dc)
{
    for (int64_t i = 0; i < n; i++) {
        const float g = dy[i];
        switch (op) {
        case TFLK_ADD:
            if (dc)
                dc[i] = g;
            if (dx)
                dx[i] = g;
            break;
        case TFLK_SUB: /* the subtrahend's gradient is negated */
            if (dc)
                dc[i] = c_first ? g : -g;
            if (dx)
                dx[i] = c_first ? -g : g;
            break;
        case TFLK_MUL:
            if (dc)
                dc[i] = g * x[i];
            if (dx)
                dx[i] = g * c[i];
            break;
        default: /* TFLK_DIV, x / c */
            if (dx)
                dx[i] = g / c[i];
            break;
        }
    }
}

void trk_concat_grad(int64_t outer, int64_t ra, int64_t rb, const float *dy, float *da, float *db)
{
    for (int64_t o = 0; o < outer; o++) {
        const float *row = dy + o * (ra + rb);
        if (da)
            memcpy(da + o * ra, row, (size_t)ra * sizeof *da);
        if (db)
            memcpy(db + o * rb, row + ra, (size_t)rb * sizeof *db);
    }
}

void trk_concat_in_place(int64_t outer, int64_t ra, int64_t rb, int32_t b_first, const float *b, float *buf)
{
    /* row o's input part moves from o·ra to o·(ra + rb) (+ rb when b leads): never backwards, so from the
     * last row to the first, each row's own floats from its end, every float still unread is below where
     * it is written; then b's row goes into the floats the move left, all of them read by then */
    for (int64_t o = outer - 1; o >= 0; o--) {
        float *row = buf + o * (ra + rb);
        const float *src = buf + o * ra;
        float *dst = row + (b_first ? rb : 0);
        if (dst != src)
            for (int64_t e = ra - 1; e >= 0; e--)
                dst[e] = src[e];
        memcpy(row + (b_first ? 0 : ra), b + o * rb, (size_t)rb * sizeof *b);
    }
}

void trk_div_grad(int64_t n, const float *dy, const float *y, const float *b, float *da, float *db)
{
    for (int64_t i = 0; i < n; i++) {
        const float g = dy[i], d = b[i];
        /* the host's Mul(dY, Y), Div(·, B), Neg: three roundings in this order, not dy·a/b² */
        const float gb = -((g * y[i]) / d);
        if (da)
            da[i] = g / d;
        if (db)
            db[i] = gb;
    }
}

/* the row-major strides of dims, 0 on the axes where dims is 1 and ydims is not (broadcast) */
static void bcast_strides(int32_t rank, const int32_t *dims, const int32_t *ydims, int64_t *st)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        st[d] = dims[d] == 1 && ydims[d] != 1 ? 0 : s;
        s *= dims[d];
    }
}

void trk_div_bcast_grad(int32_t rank, const int32_t *ydims, const int32_t *adims, const int32_t *bdims,
                        const float *dy, const float *y, const float *b, float *da, float *db)
{
    int64_t as[TFLK_BIN_RANK], bs[TFLK_BIN_RANK], na = 1, nb = 1, ny = 1;
    int32_t idx[TFLK_BIN_RANK] = {0};
    bcast_strides(rank, adims, ydims, as);
    bcast_strides(rank, bdims, ydims, bs);
    for (int32_t d = 0; d < rank; d++) {
        na *= adims[d];
        nb *= bdims[d];
        ny *= ydims[d];
    }
    if (da)
        for (int64_t i = 0; i < na; i++)
            da[i] = 0.0f;
    if (db)
        for (int64_t i = 0; i < nb; i++)
            db[i] = 0.0f;
    int64_t ao = 0, bo = 0;
    for (int64_t i = 0; i < ny; i++) {
        const float g = dy[i], d = b[bo];
        /* the host's Div(dY, B), and Mul(dY, Y), Div(·, B), Neg: each rounded in this order */
        if (da)
            da[ao] += g / d;
        if (db)
            db[bo] += -((g * y[i]) / d);
        for (int32_t k = rank - 1; k >= 0; k--) { /* the next element of dy, odometer style */
            ao += as[k];
            bo += bs[k];
            if (++idx[k] < ydims[k])
                break;
            ao -= as[k] * ydims[k];
            bo -= bs[k] * ydims[k];
            idx[k] = 0;
        }
    }
}

void trk_grad_add(int64_t n, const float *a, float *acc)
{
    for (int64_t i = 0; i < n; i++)
        acc[i] = acc[i] + a[i];
}

int64_t trk_softmax_xent_grad(int64_t batch, int64_t classes, const float *scores, const int64_t *labels, float scale,
                              float *ds)
{
    for (int64_t n = 0; n < batch; n++) {
        if (labels[n] < 0 || labels[n] >= classes)
            return n;
        const float *row = scores + n * classes;
        float mx = row[0];
        for (int64_t c = 1; c < classes; c++)
            mx = row[c] > mx ? row[c] : mx;
        double sum = 0.0; /* the softmax denominator in double, as the forward loss sums it */
        for (int64_t c = 0; c < classes; c++)
            sum += (double)tflk_expf_d(row[c] - mx);
        for (int64_t c = 0; c < classes; c++) {
            float p = (float)((double)tflk_expf_d(row[c] - mx) / sum);
            ds[n * classes + c] = scale * (p - (c == labels[n] ? 1.0f : 0.0f));
        }
    }
    return -1;
}

void trk_conv_grad(const trk_conv *g, const float *dy, const float *x, const float *w, float *dx, float *dw,
                   float *db)
{
    const int64_t mg = g->m / g->group;
    if (dx)
        memset(dx, 0, (size_t)(g->n * g->c_in * g->ih * g->iw) * sizeof *dx);
    if (dw)
        memset(dw, 0, (size_t)(g->m * g->cg * g->kh * g->kw) * sizeof *dw);
    if (db)
        memset(db, 0, (size_t)g->m * sizeof *db);
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t m = 0; m < g->m; m++) {
            const int64_t c0 = (m / mg) * g->cg;
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    const float gy = dy[((n * g->m + m) * g->oh + oy) * g->ow + ox];
                    if (db)
                        db[m] += gy;
                    for (int64_t cl = 0; cl < g->cg; cl++)
                        for (int64_t ky = 0; ky < g->kh; ky++) {
                            const int64_t iy = oy * g->s[0] - g->p[0] + ky * g->d[0];
                            if (iy < 0 || iy >= g->ih)
                                continue;
                            for (int64_t kx = 0; kx < g->kw; kx++) {
                                const int64_t ix = ox * g->s[1] - g->p[1] + kx * g->d[1];
                                if (ix < 0 || ix >= g->iw)
                                    continue;
                                const int64_t xi = ((n * g->c_in + c0 + cl) * g->ih + iy) * g->iw + ix;
                                const int64_t wi = ((m * g->cg + cl) * g->kh + ky) * g->kw + kx;
                                if (dx)
                                    dx[xi] += gy * w[wi];
                                if (dw)
                                    dw[wi] += gy * x[xi];
                            }
                        }
                }
        }
}

void trk_opt_step(const trk_opt *o, int64_t n, const float *x, const float *g, const float *s1, const float *s2,
                  float *xo, float *s1o, float *s2o)
{
    switch (o->kind) {
    case TRK_MOMENTUM:
        for (int64_t i = 0; i < n; i++) {
            float gr = o->norm * x[i] + g[i];
            float vn = o->alpha * s1[i] + o->beta * gr;
            float xn = o->nesterov ? x[i] - o->r * (gr + o->alpha * vn) : x[i] - o->r * vn;
            s1o[i] = vn;
            xo[i] = xn;
        }
        break;
    case TRK_ADAM:
        for (int64_t i = 0; i < n; i++) {
            float gr = o->norm * x[i] + g[i];
            float vn = o->alpha * s1[i] + (1.0f - o->alpha) * gr;
            float hn = o->beta * s2[i] + (1.0f - o->beta) * gr * gr;
            float xn = (1.0f - o->norm_post) * (x[i] - o->r * vn / (tflk_sqrtf(hn) + o->epsilon));
            s1o[i] = vn;
            s2o[i] = hn;
            xo[i] = xn;
        }
        break;
    default: /* TRK_ADAGRAD */
        for (int64_t i = 0; i < n; i++) {
            float gr = o->norm * x[i] + g[i];
            float hn = s1[i] + gr * gr;
            float xn = x[i] - o->r * gr / (tflk_sqrtf(hn) + o->epsilon);
            s1o[i] = hn;
            xo[i] = xn;
        }
        break;
    }
}

static double pow_int(double b, int64_t t)
{
    double r = 1.0;
    for (; t > 0; t >>= 1, b *= b)
        if (t & 1)
            r *= b;
    return r;
}

float trk_adam_rate(float r, float alpha, float beta, int64_t t)
{
    if (t <= 0)
        return r;
    float cb = (float)(1.0 - pow_int(beta, t)), ca = (float)(1.0 - pow_int(alpha, t));
    return r * tflk_sqrtf(cb) / ca;
}

void trk_fc_backward_update(const trk_opt *o, int32_t k, int32_t n_out, const float *x, float *w, float *b,
                            const float *dy, float *dx, int32_t train_w, float *w_s1, float *w_s2, float *b_s1,
                            float *b_s2, float *row)
{
    if (dx)
        for (int32_t i = 0; i < k; i++) {
            float acc = 0.0f;
            for (int32_t c = 0; c < n_out; c++)
                acc += dy[c] * w[(int64_t)c * k + i];
            dx[i] = acc;
        }
    for (int32_t c = 0; c < n_out; c++) {
        if (train_w) {
            float *wr = w + (int64_t)c * k;
            for (int32_t i = 0; i < k; i++)
                row[i] = dy[c] * x[i];
            trk_opt_step(o, k, wr, row, w_s1 + (int64_t)c * k, w_s2 ? w_s2 + (int64_t)c * k : NULL, wr,
                         w_s1 + (int64_t)c * k, w_s2 ? w_s2 + (int64_t)c * k : NULL);
        }
        if (b_s1)
            trk_opt_step(o, 1, b + c, dy + c, b_s1 + c, b_s2 ? b_s2 + c : NULL, b + c, b_s1 + c,
                         b_s2 ? b_s2 + c : NULL);
    }
}
