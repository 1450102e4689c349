/*
 * Operators that scatter values back into an image:
 *
 *   Col2Im (18): input [N, C * prod(block_shape), L] -> [N, C, image_shape...];
 *       column l holds the block at position l (row-major over the block
 *       grid of the padded image: (image + pads - dilation (block - 1) - 1)
 *       / stride + 1 per axis), overlapping values add up; the output
 *       shape needs the values of image_shape and block_shape (a graph
 *       input makes the node run dynamically).
 *   MaxUnpool (9, 11, 22): zeros of the unpooled shape ((in - 1) stride +
 *       kernel - pads) with Y.flat[I[i]] = X[i] (I are MaxPool's indices
 *       into that flattened tensor); a larger output_shape input holds the
 *       block at its origin, as the ONNX reference does.
 */
#include "vision.h"

#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#define MAXR (SY_MAX_RANK - 2)

typedef struct c2i_geom {
    int32_t r;
    int64_t img[MAXR], blk[MAXR], dil[MAXR], str[MAXR], pad[2 * MAXR], cnt[MAXR];
    int64_t C, L, bprod;
} c2i_geom;

static sy_status *c2i_geom_of(const sy_node *n, c2i_geom *g)
{
    const sy_tensor *x, *is, *bs;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &is));
    SY_TRY(sy_need_input(H, n, 2, &bs));
    if (x->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "input must be float32, got %s", sy_dt_name(x->dtype));
    if (x->rank != 3)
        return ERR(SY_ERR_SHAPE, "input must be [N, C * prod(block_shape), L], got rank %d", x->rank);
    if (is->dtype != SY_DT_INT64 || bs->dtype != SY_DT_INT64 || is->rank != 1 || bs->rank != 1 ||
        is->dims[0] != bs->dims[0] || is->dims[0] < 1 || is->dims[0] > MAXR)
        return ERR(SY_ERR_SHAPE, "image_shape and block_shape must be int64 vectors of one length (1 to %d)", MAXR);
    if (!is->data || !bs->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the output shape needs the values of image_shape and block_shape");
    g->r = (int32_t)is->dims[0];
    for (int32_t d = 0; d < g->r; d++) {
        g->img[d] = ((const int64_t *)is->data)[d];
        g->blk[d] = ((const int64_t *)bs->data)[d];
        g->dil[d] = g->str[d] = 1;
        g->pad[d] = g->pad[d + g->r] = 0;
    }
    int64_t v[2 * MAXR];
    int64_t k;
    if ((k = sy_attr_ints_copy(H, n, "dilations", v, MAXR)) >= 0) {
        if (k != g->r)
            return ERR(SY_ERR_INVALID_MODEL, "dilations has %lld values, expected %d", (long long)k, (int)g->r);
        memcpy(g->dil, v, (size_t)k * sizeof *v);
    }
    if ((k = sy_attr_ints_copy(H, n, "strides", v, MAXR)) >= 0) {
        if (k != g->r)
            return ERR(SY_ERR_INVALID_MODEL, "strides has %lld values, expected %d", (long long)k, (int)g->r);
        memcpy(g->str, v, (size_t)k * sizeof *v);
    }
    if ((k = sy_attr_ints_copy(H, n, "pads", v, 2 * MAXR)) >= 0) {
        if (k != 2 * g->r)
            return ERR(SY_ERR_INVALID_MODEL, "pads has %lld values, expected %d", (long long)k, (int)(2 * g->r));
        memcpy(g->pad, v, (size_t)k * sizeof *v);
    }
    g->bprod = 1;
    int64_t L = 1;
    for (int32_t d = 0; d < g->r; d++) {
        if (g->img[d] <= 0 || g->blk[d] <= 0 || g->dil[d] <= 0 || g->str[d] <= 0 || g->pad[d] < 0 ||
            g->pad[d + g->r] < 0)
            return ERR(SY_ERR_INVALID_MODEL, "axis %d: image, block, dilation and stride must be positive, pads >= 0",
                       (int)d);
        int64_t span = g->img[d] + g->pad[d] + g->pad[d + g->r] - g->dil[d] * (g->blk[d] - 1) - 1;
        if (span < 0)
            return ERR(SY_ERR_SHAPE, "axis %d: the block (%lld, dilation %lld) is larger than the padded image %lld",
                       (int)d, (long long)g->blk[d], (long long)g->dil[d],
                       (long long)(g->img[d] + g->pad[d] + g->pad[d + g->r]));
        g->cnt[d] = span / g->str[d] + 1;
        L *= g->cnt[d];
        g->bprod *= g->blk[d];
    }
    if (x->dims[1] % g->bprod || x->dims[2] != L)
        return ERR(SY_ERR_SHAPE, "input [%lld, %lld, %lld] must be [N, C * %lld, %lld]", (long long)x->dims[0],
                   (long long)x->dims[1], (long long)x->dims[2], (long long)g->bprod, (long long)L);
    g->C = x->dims[1] / g->bprod;
    g->L = L;
    return NULL;
}

static sy_status *infer_col2im(sy_node *n)
{
    c2i_geom g;
    SY_TRY(c2i_geom_of(n, &g));
    int64_t d[SY_MAX_RANK] = {H->node_input(n, 0)->dims[0], g.C};
    for (int32_t i = 0; i < g.r; i++)
        d[2 + i] = g.img[i];
    return H->node_set_output(n, 0, SY_DT_FLOAT32, g.r + 2, d);
}

static sy_status *prepare_col2im(sy_node *n, void **state)
{
    c2i_geom *g = calloc(1, sizeof *g);
    if (!g)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = c2i_geom_of(n, g);
    if (st) {
        free(g);
        return st;
    }
    *state = g;
    return NULL;
}

static sy_status *run_col2im(void *state, const sy_kernel_io *io)
{
    const c2i_geom *g = state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    const float *xd = x->data;
    int64_t N = x->dims[0], isz = 1;
    for (int32_t d = 0; d < g->r; d++)
        isz *= g->img[d];
    memset(y, 0, (size_t)(N * g->C * isz) * sizeof(float));
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < g->C; c++) {
            float *img = y + (n * g->C + c) * isz;
            int64_t kidx[MAXR] = {0};
            for (int64_t k = 0; k < g->bprod; k++) {
                const float *row = xd + ((n * g->C + c) * g->bprod + k) * g->L;
                int64_t bidx[MAXR] = {0};
                for (int64_t l = 0; l < g->L; l++) {
                    int64_t off = 0;
                    bool in = true;
                    for (int32_t d = 0; d < g->r && in; d++) {
                        int64_t p = bidx[d] * g->str[d] - g->pad[d] + kidx[d] * g->dil[d];
                        in = p >= 0 && p < g->img[d];
                        off = off * g->img[d] + p;
                    }
                    if (in)
                        img[off] += row[l];
                    sy_index_next(g->r, g->cnt, bidx);
                }
                sy_index_next(g->r, g->blk, kidx);
            }
        }
    return NULL;
}

/* ======================================================================== */
/* MaxUnpool                                                                */
/* ======================================================================== */

/* the output shape the pooling geometry gives: (in - 1) stride + kernel - pads */
static sy_status *unpool_inferred(const sy_node *n, const sy_tensor *x, int64_t *d)
{
    int32_t r = x->rank - 2;
    int64_t k[MAXR], s[MAXR], p[2 * MAXR];
    if (r < 1 || r > MAXR)
        return ERR(SY_ERR_SHAPE, "X must be [N, C, spatial...], got rank %d", x->rank);
    if (sy_attr_ints_copy(H, n, "kernel_shape", k, MAXR) != r)
        return ERR(SY_ERR_INVALID_MODEL, "kernel_shape must have %d values", (int)r);
    int64_t ns = sy_attr_ints_copy(H, n, "strides", s, MAXR), np = sy_attr_ints_copy(H, n, "pads", p, 2 * MAXR);
    if ((ns >= 0 && ns != r) || (np >= 0 && np != 2 * r))
        return ERR(SY_ERR_INVALID_MODEL, "strides must have %d values and pads %d", (int)r, (int)(2 * r));
    d[0] = x->dims[0];
    d[1] = x->dims[1];
    for (int32_t i = 0; i < r; i++) {
        int64_t st = ns >= 0 ? s[i] : 1, pb = np >= 0 ? p[i] : 0, pe = np >= 0 ? p[i + r] : 0;
        d[2 + i] = (x->dims[2 + i] - 1) * st + k[i] - pb - pe;
        if (d[2 + i] <= 0)
            return ERR(SY_ERR_SHAPE, "spatial axis %d of the output would be %lld", (int)i, (long long)d[2 + i]);
    }
    return NULL;
}

/* The indices address the inferred shape; an explicit output_shape (as in
 * the ONNX reference) holds that block at its origin, zeros elsewhere. */
static sy_status *infer_max_unpool(sy_node *n)
{
    const sy_tensor *x, *ix;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &ix));
    if (!sy_dt_size(x->dtype))
        return ERR(SY_ERR_TYPE, "X of %s is not supported", sy_dt_name(x->dtype));
    if (ix->dtype != SY_DT_INT64 || ix->rank != x->rank || sy_tensor_numel(ix) != sy_tensor_numel(x))
        return ERR(SY_ERR_SHAPE, "I must be int64 of X's shape");
    int64_t inf[SY_MAX_RANK], d[SY_MAX_RANK];
    SY_TRY(unpool_inferred(n, x, inf));
    const sy_tensor *os = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (!os)
        return H->node_set_output(n, 0, x->dtype, x->rank, inf);
    if (os->dtype != SY_DT_INT64 || os->rank != 1 || os->dims[0] != x->rank)
        return ERR(SY_ERR_SHAPE, "output_shape must be int64 [%d]", x->rank);
    if (!os->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the output shape needs the values of output_shape");
    memcpy(d, os->data, (size_t)x->rank * sizeof *d);
    for (int32_t i = 0; i < x->rank; i++)
        if (d[i] < inf[i])
            return ERR(SY_ERR_SHAPE, "output_shape[%d] = %lld is smaller than the unpooled size %lld", (int)i,
                       (long long)d[i], (long long)inf[i]);
    return H->node_set_output(n, 0, x->dtype, x->rank, d);
}

typedef struct unpool_state {
    int64_t inf[SY_MAX_RANK];
} unpool_state;

static sy_status *prepare_max_unpool(sy_node *n, void **state)
{
    unpool_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = unpool_inferred(n, H->node_input(n, 0), s->inf);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_max_unpool(void *state, const sy_kernel_io *io)
{
    const unpool_state *s = state;
    const sy_tensor *x = io->inputs[0];
    const int64_t *ix = io->inputs[1]->data;
    sy_tensor *y = io->outputs[0];
    size_t es = sy_dt_size(x->dtype);
    int64_t n = sy_tensor_numel(x), total = sy_dims_prod(s->inf, 0, x->rank);
    memset(y->data, 0, y->nbytes);
    for (int64_t i = 0; i < n; i++) {
        if (ix[i] < 0 || ix[i] >= total)
            return ERR(SY_ERR_RUNTIME, "I[%lld] = %lld is outside the %lld unpooled elements", (long long)i,
                       (long long)ix[i], (long long)total);
        int64_t rem = ix[i], off = 0, stride = 1;
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            off += (rem % s->inf[d]) * stride;
            rem /= s->inf[d];
            stride *= y->dims[d];
        }
        memcpy((char *)y->data + (size_t)off * es, (const char *)x->data + (size_t)i * es, es);
    }
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_c2i[] = {ATTR("dilations", INTS), ATTR("pads", INTS), ATTR("strides", INTS)};
static const sy_attr_def a_unpool[] = {{"kernel_shape", SY_ATTR_INTS, true}, ATTR("pads", INTS), ATTR("strides", INTS)};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("Col2Im", 18, 3, 3, 1, 1, SY_ATTRS(a_c2i), infer_col2im, SY_NO_INPLACE, 0),
    SY_SCHEMA("MaxUnpool", 9, 2, 3, 1, 1, SY_ATTRS(a_unpool), infer_max_unpool, SY_NO_INPLACE, 0),
    SY_SCHEMA("MaxUnpool", 11, 2, 3, 1, 1, SY_ATTRS(a_unpool), infer_max_unpool, SY_NO_INPLACE, 0),
    SY_SCHEMA("MaxUnpool", 22, 2, 3, 1, 1, SY_ATTRS(a_unpool), infer_max_unpool, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("Col2Im", 1, 0, SY_DT_BIT(SY_DT_FLOAT32), 0, prepare_col2im, run_col2im, sy_release_free),
    SY_CPU_KERNEL("MaxUnpool", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_max_unpool, run_max_unpool, sy_release_free),
};

sy_status *vision_col2im_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
