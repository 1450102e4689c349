/*
 * Layer normalisations ONNX Runtime fuses transformer blocks into:
 *
 *   com.microsoft EmbedLayerNormalization   word + position (+ segment)
 *       embedding lookup, then LayerNorm; outputs the normalised embedding,
 *       the mask index (count of 1s per batch row of `mask`, 0 without one)
 *       and optionally the sum before normalising
 *   com.microsoft SkipLayerNormalization    LayerNorm(input + skip + bias)
 *   com.microsoft SkipSimplifiedLayerNormalization   RMS form of the same
 *   SimplifiedLayerNormalization (default domain, ORT's contrib schema)
 *       x / sqrt(mean(x^2) + epsilon) * scale over the axes from `axis`
 *
 * The statistics are those of ONNX Runtime's CPU kernels: mean and mean of
 * squares in double for Skip/Simplified; EmbedLayerNormalization's two-pass
 * float arithmetic for the embedding sum.
 */
#include "contrib.h"

#include <math.h>
#include <stdlib.h>

sy_status *contrib_need_f32(const sy_node *n, uint32_t i, const char *what, int32_t min_rank, int32_t max_rank,
                            const sy_tensor **out)
{
    const sy_tensor *t = i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
    if (!t)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input %u (%s) is required", i, what);
    if (t->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "%s must be float32, got %s", what, sy_dt_name(t->dtype));
    if (t->rank < min_rank || t->rank > max_rank)
        return ERR(SY_ERR_SHAPE, "%s must have rank %d..%d, got %d", what, min_rank, max_rank, t->rank);
    *out = t;
    return NULL;
}

static const sy_tensor *opt_in(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

/* a vector of exactly `len` float32 values */
static sy_status *need_vec(const sy_node *n, uint32_t i, const char *what, int64_t len, bool required)
{
    const sy_tensor *t = opt_in(n, i);
    if (!t)
        return required ? ERR(SY_ERR_INVALID_ARGUMENT, "input %u (%s) is required", i, what) : NULL;
    if (t->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "%s must be float32, got %s", what, sy_dt_name(t->dtype));
    if (t->rank != 1 || t->dims[0] != len)
        return ERR(SY_ERR_SHAPE, "%s must be a vector of the hidden size %lld, got rank %d with %lld values", what,
                   (long long)len, t->rank, (long long)sy_tensor_numel(t));
    return NULL;
}

/* ======================================================================== */
/* EmbedLayerNormalization                                                  */
/* ======================================================================== */

enum { EL_IDS, EL_SEG_IDS, EL_WORD, EL_POS, EL_SEG, EL_GAMMA, EL_BETA, EL_MASK, EL_POS_IDS };

/* an int32 [B, S] id tensor (position_ids may also be [1, S]) */
static sy_status *need_ids(const sy_node *n, uint32_t i, const char *what, const sy_tensor *ids, bool batch1_ok)
{
    const sy_tensor *t = opt_in(n, i);
    if (!t)
        return NULL;
    if (t->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "%s must be int32, got %s", what, sy_dt_name(t->dtype));
    if (t->rank != 2 || t->dims[1] != ids->dims[1] || (t->dims[0] != ids->dims[0] && !(batch1_ok && t->dims[0] == 1)))
        return ERR(SY_ERR_SHAPE, "%s must have input_ids' shape [%lld, %lld]%s", what, (long long)ids->dims[0],
                   (long long)ids->dims[1], batch1_ok ? " or [1, sequence]" : "");
    return NULL;
}

static sy_status *infer_embed_ln(sy_node *n)
{
    const sy_tensor *ids = opt_in(n, EL_IDS), *word, *pos;
    if (!ids || ids->dtype != SY_DT_INT32 || ids->rank != 2)
        return ERR(SY_ERR_SHAPE, "input_ids must be an int32 [batch, sequence] tensor");
    SY_TRY(contrib_need_f32(n, EL_WORD, "word_embedding", 2, 2, &word));
    SY_TRY(contrib_need_f32(n, EL_POS, "position_embedding", 2, 2, &pos));
    int64_t hid = word->dims[1];
    if (pos->dims[1] != hid)
        return ERR(SY_ERR_SHAPE, "position_embedding has hidden size %lld, word_embedding %lld",
                   (long long)pos->dims[1], (long long)hid);
    const sy_tensor *seg = opt_in(n, EL_SEG);
    if (seg) {
        if (seg->dtype != SY_DT_FLOAT32 || seg->rank != 2 || seg->dims[1] != hid)
            return ERR(SY_ERR_SHAPE, "segment_embedding must be float32 [segments, %lld]", (long long)hid);
        if (!opt_in(n, EL_SEG_IDS))
            return ERR(SY_ERR_INVALID_ARGUMENT, "segment_embedding is given without segment_ids");
    } else if (opt_in(n, EL_SEG_IDS)) {
        return ERR(SY_ERR_INVALID_ARGUMENT, "segment_ids is given without segment_embedding");
    }
    SY_TRY(need_ids(n, EL_SEG_IDS, "segment_ids", ids, false));
    SY_TRY(need_ids(n, EL_MASK, "mask", ids, false));
    SY_TRY(need_ids(n, EL_POS_IDS, "position_ids", ids, true));
    if (!opt_in(n, EL_POS_IDS) && ids->dims[1] > pos->dims[0])
        return ERR(SY_ERR_SHAPE, "sequence length %lld exceeds the %lld rows of position_embedding",
                   (long long)ids->dims[1], (long long)pos->dims[0]);
    SY_TRY(need_vec(n, EL_GAMMA, "gamma", hid, true));
    SY_TRY(need_vec(n, EL_BETA, "beta", hid, false));
    int64_t dims[3] = {ids->dims[0], ids->dims[1], hid};
    SY_TRY(H->node_set_output(n, 0, SY_DT_FLOAT32, 3, dims));
    if (H->node_num_outputs(n) > 1)
        SY_TRY(H->node_set_output(n, 1, SY_DT_INT32, 1, dims));
    if (H->node_num_outputs(n) > 2)
        SY_TRY(H->node_set_output(n, 2, SY_DT_FLOAT32, 3, dims));
    return NULL;
}

typedef struct embed_state {
    float eps;
} embed_state;

static sy_status *prepare_embed_ln(sy_node *n, void **state)
{
    embed_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->eps = sy_attr_float_or(H, n, "epsilon", 1e-12f);
    *state = s;
    return NULL;
}

static const sy_tensor *io_in(const sy_kernel_io *io, uint32_t i) { return i < io->n_inputs ? io->inputs[i] : NULL; }
static sy_tensor *io_out(const sy_kernel_io *io, uint32_t i) { return i < io->n_outputs ? io->outputs[i] : NULL; }

static sy_status *run_embed_ln(void *state, const sy_kernel_io *io)
{
    const embed_state *st = state;
    const sy_tensor *ids = io->inputs[EL_IDS], *word = io->inputs[EL_WORD], *pos = io->inputs[EL_POS];
    const sy_tensor *seg_ids = io_in(io, EL_SEG_IDS), *seg = io_in(io, EL_SEG), *beta = io_in(io, EL_BETA);
    const sy_tensor *mask = io_in(io, EL_MASK), *pos_ids = io_in(io, EL_POS_IDS);
    sy_tensor *mask_index = io_out(io, 1), *sum_out = io_out(io, 2);
    int64_t B = ids->dims[0], S = ids->dims[1], hid = word->dims[1];
    const int32_t *id = ids->data;
    const float *gamma = io->inputs[EL_GAMMA]->data, *bt = beta ? beta->data : NULL;
    float *out = io->outputs[0]->data;
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < S; s++) {
            int64_t row = b * S + s;
            int64_t w = id[row];
            int64_t p = pos_ids ? ((const int32_t *)pos_ids->data)[(pos_ids->dims[0] == 1 ? 0 : b) * S + s] : s;
            int64_t g = seg_ids ? ((const int32_t *)seg_ids->data)[row] : 0;
            if (w < 0 || w >= word->dims[0])
                return ERR(SY_ERR_RUNTIME, "input_ids[%lld, %lld] = %lld is outside the %lld rows of word_embedding",
                           (long long)b, (long long)s, (long long)w, (long long)word->dims[0]);
            if (p < 0 || p >= pos->dims[0])
                return ERR(SY_ERR_RUNTIME, "position %lld at [%lld, %lld] is outside the %lld rows of position_embedding",
                           (long long)p, (long long)b, (long long)s, (long long)pos->dims[0]);
            if (seg && (g < 0 || g >= seg->dims[0]))
                return ERR(SY_ERR_RUNTIME, "segment_ids[%lld, %lld] = %lld is outside the %lld rows of segment_embedding",
                           (long long)b, (long long)s, (long long)g, (long long)seg->dims[0]);
            const float *we = (const float *)word->data + w * hid, *pe = (const float *)pos->data + p * hid;
            const float *se = seg ? (const float *)seg->data + g * hid : NULL;
            float *y = out + row * hid, sum = 0;
            for (int64_t h = 0; h < hid; h++) {
                float v = we[h] + pe[h];
                if (se)
                    v += se[h];
                y[h] = v;
                sum += v;
            }
            if (sum_out)
                memcpy((float *)sum_out->data + row * hid, y, (size_t)hid * sizeof(float));
            float mean = sum / (float)hid, sq = 0;
            for (int64_t h = 0; h < hid; h++) {
                y[h] -= mean;
                sq += y[h] * y[h];
            }
            float e = sqrtf(sq / (float)hid + st->eps);
            for (int64_t h = 0; h < hid; h++)
                y[h] = y[h] / e * gamma[h] + (bt ? bt[h] : 0.0f);
        }
    if (mask_index) {
        int32_t *mi = mask_index->data;
        for (int64_t b = 0; b < B; b++) {
            int32_t c = 0;
            for (int64_t s = 0; mask && s < S; s++)
                c += ((const int32_t *)mask->data)[b * S + s] == 1;
            mi[b] = c;
        }
    }
    return NULL;
}

/* ======================================================================== */
/* SkipLayerNormalization, SkipSimplifiedLayerNormalization                 */
/* ======================================================================== */

static bool is_simplified(const sy_node *n) { return strstr(H->node_op(n), "Simplified") != NULL; }

/* skip: input's shape, or its trailing dims (broadcast over the leading ones) */
static bool skip_fits(const sy_tensor *x, const sy_tensor *sk)
{
    int32_t r = sk->rank;
    while (r > 0 && sk->dims[sk->rank - r] == 1 && r > 2)
        r--;
    if (r > x->rank)
        return false;
    for (int32_t d = 1; d <= r; d++)
        if (sk->dims[sk->rank - d] != x->dims[x->rank - d])
            return false;
    return true;
}

static sy_status *infer_skip_ln(sy_node *n)
{
    bool simp = is_simplified(n);
    const sy_tensor *x, *sk;
    SY_TRY(contrib_need_f32(n, 0, "input", 2, 3, &x));
    SY_TRY(contrib_need_f32(n, 1, "skip", 2, 3, &sk));
    if (!skip_fits(x, sk)) {
        char a[96], b[96];
        return ERR(SY_ERR_SHAPE, "skip %s must have input's shape %s or [1, sequence, hidden] / [sequence, hidden]",
                   sy_shape_str(sk->rank, sk->dims, a, sizeof a), sy_shape_str(x->rank, x->dims, b, sizeof b));
    }
    int64_t hid = x->dims[x->rank - 1];
    SY_TRY(need_vec(n, 2, "gamma", hid, true));
    if (!simp)
        SY_TRY(need_vec(n, 3, "beta", hid, false));
    SY_TRY(need_vec(n, simp ? 3 : 4, "bias", hid, false));
    SY_TRY(H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank, x->dims));
    int64_t sd[SY_MAX_RANK];
    memcpy(sd, x->dims, sizeof sd);
    sd[x->rank - 1] = 1;
    for (uint32_t o = 1; o < H->node_num_outputs(n); o++)
        SY_TRY(H->node_set_output(n, o, SY_DT_FLOAT32, x->rank, o == 3 ? x->dims : sd));
    return NULL;
}

typedef struct skip_state {
    double eps;
    bool simplified;
} skip_state;

static sy_status *prepare_skip_ln(sy_node *n, void **state)
{
    skip_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->eps = sy_attr_float_or(H, n, "epsilon", 1e-12f);
    s->simplified = is_simplified(n);
    *state = s;
    return NULL;
}

static sy_status *run_skip_ln(void *state, const sy_kernel_io *io)
{
    const skip_state *st = state;
    const sy_tensor *x = io->inputs[0], *sk = io->inputs[1];
    const sy_tensor *beta = st->simplified ? NULL : io_in(io, 3), *bias = io_in(io, st->simplified ? 3 : 4);
    int64_t hid = x->dims[x->rank - 1], rows = sy_tensor_numel(x) / hid, sk_rows = sy_tensor_numel(sk) / hid;
    const float *xd = x->data, *sd = sk->data, *g = io->inputs[2]->data;
    const float *bt = beta ? beta->data : NULL, *bs = bias ? bias->data : NULL;
    float *y = io->outputs[0]->data;
    sy_tensor *mo = io_out(io, 1), *io_ = io_out(io, 2), *so = io_out(io, 3);
    for (int64_t r = 0; r < rows; r++) {
        const float *xp = xd + r * hid, *sp = sd + (r % sk_rows) * hid;
        float *yp = y + r * hid;
        double mean = 0, msq = 0;
        for (int64_t h = 0; h < hid; h++) {
            float v = xp[h] + sp[h];
            if (bs)
                v += bs[h];
            if (so)
                ((float *)so->data)[r * hid + h] = v;
            yp[h] = v;
            mean += v;
            msq += (double)v * v;
        }
        mean /= (double)hid;
        double den = st->simplified ? sqrt(msq / (double)hid + st->eps) : sqrt(msq / (double)hid - mean * mean + st->eps);
        for (int64_t h = 0; h < hid; h++) {
            double v = st->simplified ? yp[h] / den * g[h] : (yp[h] - mean) / den * g[h];
            yp[h] = (float)(bt ? v + bt[h] : v);
        }
        if (mo)
            ((float *)mo->data)[r] = (float)mean;
        if (io_)
            ((float *)io_->data)[r] = (float)(1.0 / den);
    }
    return NULL;
}

/* ======================================================================== */
/* SimplifiedLayerNormalization (default domain)                           */
/* ======================================================================== */

static sy_status *infer_simplified_ln(sy_node *n)
{
    const sy_tensor *x = NULL, *sc = NULL; /* set by contrib_need_f32 (GCC -O3 cannot tell) */
    SY_TRY(contrib_need_f32(n, 0, "X", 1, SY_MAX_RANK, &x));
    SY_TRY(contrib_need_f32(n, 1, "scale", 1, SY_MAX_RANK, &sc));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
    int64_t inner = sy_dims_prod(x->dims, axis, x->rank);
    if (sy_tensor_numel(sc) != inner)
        return ERR(SY_ERR_SHAPE, "scale has %lld values, the normalised dims of X have %lld",
                   (long long)sy_tensor_numel(sc), (long long)inner);
    SY_TRY(H->node_set_output(n, 0, SY_DT_FLOAT32, x->rank, x->dims));
    if (H->node_num_outputs(n) > 1) {
        int64_t d[SY_MAX_RANK];
        for (int32_t i = 0; i < x->rank; i++)
            d[i] = i < axis ? x->dims[i] : 1;
        SY_TRY(H->node_set_output(n, 1, SY_DT_FLOAT32, x->rank, d));
    }
    return NULL;
}

typedef struct simp_state {
    double eps;
    int32_t axis;
} simp_state;

static sy_status *prepare_simplified_ln(sy_node *n, void **state)
{
    const sy_tensor *x = H->node_input(n, 0);
    simp_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->eps = sy_attr_float_or(H, n, "epsilon", 1e-5f);
    int64_t a = sy_attr_int_or(H, n, "axis", -1);
    s->axis = (int32_t)(a < 0 ? a + x->rank : a);
    *state = s;
    return NULL;
}

static sy_status *run_simplified_ln(void *state, const sy_kernel_io *io)
{
    const simp_state *st = state;
    const sy_tensor *x = io->inputs[0];
    int64_t inner = sy_dims_prod(x->dims, st->axis, x->rank), outer = sy_tensor_numel(x) / (inner ? inner : 1);
    const float *xd = x->data, *sc = io->inputs[1]->data;
    float *y = io->outputs[0]->data;
    sy_tensor *inv = io_out(io, 1);
    for (int64_t o = 0; o < outer; o++) {
        const float *xp = xd + o * inner;
        double msq = 0;
        for (int64_t i = 0; i < inner; i++)
            msq += (double)xp[i] * xp[i];
        double den = sqrt(msq / (double)inner + st->eps);
        for (int64_t i = 0; i < inner; i++)
            y[o * inner + i] = (float)(xp[i] / den * sc[i]);
        if (inv)
            ((float *)inv->data)[o] = (float)(1.0 / den);
    }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

static const sy_attr_def a_embed[] = {ATTR("epsilon", FLOAT), ATTR("mask_index_type", INT)};
static const sy_attr_def a_eps[] = {ATTR("epsilon", FLOAT)};
static const sy_attr_def a_simp[] = {ATTR("axis", INT), ATTR("epsilon", FLOAT), ATTR("stash_type", INT)};

static const sy_op_schema schemas[] = {
    CSCHEMA(CONTRIB_DOMAIN, "EmbedLayerNormalization", 1, 6, 9, 2, 3, SY_ATTRS(a_embed), infer_embed_ln,
            "embedding lookup (word + position + segment) then LayerNorm"),
    CSCHEMA(CONTRIB_DOMAIN, "SkipLayerNormalization", 1, 3, 5, 1, 4, SY_ATTRS(a_eps), infer_skip_ln,
            "LayerNorm(input + skip + bias) * gamma + beta"),
    CSCHEMA(CONTRIB_DOMAIN, "SkipSimplifiedLayerNormalization", 1, 3, 4, 1, 4, SY_ATTRS(a_eps), infer_skip_ln,
            "RMSNorm(input + skip + bias) * gamma"),
    CSCHEMA("", "SimplifiedLayerNormalization", 1, 2, 2, 1, 2, SY_ATTRS(a_simp), infer_simplified_ln,
            "x / sqrt(mean(x^2) + epsilon) * scale (ONNX Runtime contrib schema)"),
};

static const sy_kernel_def kernels[] = {
    CKERNEL(CONTRIB_DOMAIN, "EmbedLayerNormalization", F32, EL_WORD, prepare_embed_ln, run_embed_ln, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "SkipLayerNormalization", F32, 0, prepare_skip_ln, run_skip_ln, sy_release_free),
    CKERNEL(CONTRIB_DOMAIN, "SkipSimplifiedLayerNormalization", F32, 0, prepare_skip_ln, run_skip_ln,
            sy_release_free),
    CKERNEL("", "SimplifiedLayerNormalization", F32, 0, prepare_simplified_ln, run_simplified_ln, sy_release_free),
};

const contrib_tables contrib_norm_tables = {schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels)};
