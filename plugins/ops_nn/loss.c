/*
 * ops_nn / loss.c: NegativeLogLikelihoodLoss (12, 13, 22) and
 * SoftmaxCrossEntropyLoss (12, 13), fp32 kernels run through the sy_sdk fp32
 * scope for fp16/bf16/fp64.
 *
 * Both gather -input[n, t, d...] for target t = target[n, d...] from an
 * input of shape (N, C, d1..dk), weight it by weight[t] (1 without
 * weights), drop targets equal to ignore_index (loss 0, weight 0), and
 * reduce: none (shape of target), sum, or mean = sum(loss) / sum(weights).
 * SoftmaxCrossEntropyLoss first takes log(softmax(scores)) along C, and can
 * return it as its second output.
 */
#include "nn_internal.h"

#include <math.h>
#include <stdlib.h>

enum { LR_NONE, LR_SUM, LR_MEAN };

typedef struct loss_state {
    int red;
    bool has_ignore;
    int64_t ignore;
    bool softmax;
} loss_state;

static sy_status *loss_reduction(const sy_node *n, int *red)
{
    char b[16];
    sy_attr_string_or(H, n, "reduction", "mean", b, sizeof b);
    if (!strcmp(b, "none"))
        *red = LR_NONE;
    else if (!strcmp(b, "sum"))
        *red = LR_SUM;
    else if (!strcmp(b, "mean"))
        *red = LR_MEAN;
    else
        return ERR(SY_ERR_INVALID_ARGUMENT, "reduction must be none, sum or mean; got \"%s\"", b);
    return NULL;
}

static sy_status *infer_loss(sy_node *n)
{
    const sy_tensor *x, *t;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &t));
    if (!sy_dt_is_float(x->dtype))
        return ERR(SY_ERR_TYPE, "input must be a float tensor, got %s", sy_dt_name(x->dtype));
    if (t->dtype != SY_DT_INT64 && t->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "target must be int32 or int64, got %s", sy_dt_name(t->dtype));
    if (x->rank < 2)
        return ERR(SY_ERR_SHAPE, "input must have shape (N, C, d1, ..., dk), got rank %d", (int)x->rank);
    bool shape_ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int32_t d = 1; shape_ok && d < t->rank; d++)
        shape_ok = t->dims[d] == x->dims[d + 1];
    if (!shape_ok) {
        char a[96], b[96];
        return ERR(SY_ERR_SHAPE, "target %s must have the input's shape %s without C (dim 1)",
                   sy_shape_str(t->rank, t->dims, a, sizeof a), sy_shape_str(x->rank, x->dims, b, sizeof b));
    }
    const sy_tensor *w = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (w && (w->rank != 1 || w->dims[0] != x->dims[1]))
        return ERR(SY_ERR_SHAPE, "weight must be 1-D of C = %lld values", (long long)x->dims[1]);
    if (w && w->dtype != x->dtype)
        return ERR(SY_ERR_TYPE, "weight (%s) must have the input's dtype (%s)", sy_dt_name(w->dtype),
                   sy_dt_name(x->dtype));
    int red;
    SY_TRY(loss_reduction(n, &red));
    if (red == LR_NONE)
        SY_TRY(H->node_set_output(n, 0, x->dtype, t->rank, t->dims));
    else
        SY_TRY(H->node_set_output(n, 0, x->dtype, 0, NULL));
    if (H->node_num_outputs(n) > 1)
        SY_TRY(H->node_set_output(n, 1, x->dtype, x->rank, x->dims));
    return NULL;
}

static sy_status *prepare_loss(sy_node *n, void **state)
{
    loss_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = loss_reduction(n, &s->red);
    if (st) {
        free(s);
        return st;
    }
    s->has_ignore = H->attr_int(n, "ignore_index", &s->ignore);
    s->softmax = !strcmp(H->node_op(n), "SoftmaxCrossEntropyLoss");
    const sy_tensor *x = H->node_input(n, 0);
    size_t extra = s->softmax ? (size_t)sy_tensor_numel(x) * sizeof(float) : 0;
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n) + extra + 64);
    *state = s;
    return NULL;
}

static sy_status *loss_f32(void *state, const sy_kernel_io *io)
{
    const loss_state *s = state;
    const sy_tensor *x = io->inputs[0], *t = io->inputs[1];
    const sy_tensor *w = io->n_inputs > 2 ? io->inputs[2] : NULL;
    int64_t N = x->dims[0], C = x->dims[1], D = sy_dims_prod(x->dims, 2, x->rank);
    const float *in = x->data;
    if (s->softmax) { /* log_softmax along C into the second output or scratch */
        float *lp = io->n_outputs > 1 && io->outputs[1] ? io->outputs[1]->data : NULL;
        if (!lp) {
            size_t need = (size_t)sy_tensor_numel(x) * sizeof(float);
            if (io->scratch_bytes < need)
                return ERR(SY_ERR_INTERNAL, "SoftmaxCrossEntropyLoss scratch too small");
            lp = io->scratch;
        }
        for (int64_t nn = 0; nn < N; nn++)
            for (int64_t d = 0; d < D; d++) {
                const float *xp = in + nn * C * D + d;
                float *op = lp + nn * C * D + d;
                float m = -INFINITY;
                for (int64_t c = 0; c < C; c++)
                    m = xp[c * D] > m ? xp[c * D] : m;
                double sum = 0;
                for (int64_t c = 0; c < C; c++)
                    sum += exp((double)xp[c * D] - m);
                double ls = log(sum);
                for (int64_t c = 0; c < C; c++)
                    op[c * D] = (float)((double)xp[c * D] - m - ls);
            }
        in = lp;
    }
    const float *wd = w ? w->data : NULL;
    float *y = io->outputs[0]->data;
    double total = 0, wsum = 0;
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t d = 0; d < D; d++) {
            int64_t j = nn * D + d;
            int64_t tc = t->dtype == SY_DT_INT64 ? ((const int64_t *)t->data)[j] : ((const int32_t *)t->data)[j];
            double l = 0, wt = 0;
            if (!(s->has_ignore && tc == s->ignore)) {
                if (tc < 0 || tc >= C)
                    return ERR(SY_ERR_RUNTIME, "target %lld at position %lld is outside [0, C = %lld)", (long long)tc,
                               (long long)j, (long long)C);
                wt = wd ? wd[tc] : 1.0;
                l = -(double)in[(nn * C + tc) * D + d] * wt;
            }
            if (s->red == LR_NONE)
                y[j] = (float)l;
            total += l;
            wsum += wt;
        }
    if (s->red == LR_SUM)
        y[0] = (float)total;
    else if (s->red == LR_MEAN)
        y[0] = (float)(total / wsum);
    return NULL;
}

static sy_status *run_loss(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, loss_f32); }

static const sy_attr_def a_loss[] = {{"ignore_index", SY_ATTR_INT, false}, {"reduction", SY_ATTR_STRING, false}};

#define S(op, since, mi, ma, mo, mao) SY_SCHEMA(op, since, mi, ma, mo, mao, SY_ATTRS(a_loss), infer_loss, SY_NO_INPLACE, 0)

static const sy_op_schema schemas[] = {
    S("NegativeLogLikelihoodLoss", 12, 2, 3, 1, 1),
    S("NegativeLogLikelihoodLoss", 13, 2, 3, 1, 1),
    S("NegativeLogLikelihoodLoss", 22, 2, 3, 1, 1),
    S("SoftmaxCrossEntropyLoss", 12, 2, 3, 1, 2),
    S("SoftmaxCrossEntropyLoss", 13, 2, 3, 1, 2),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("NegativeLogLikelihoodLoss", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_loss, run_loss, sy_release_free),
    SY_CPU_KERNEL("SoftmaxCrossEntropyLoss", 1, 0, SY_DT_MASK_FLOATS, 0, prepare_loss, run_loss, sy_release_free),
};

sy_status *nn_loss_register(const sy_host_api *host, sy_plugin *p)
{
    (void)host;
    return sy_register_tables(H, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
