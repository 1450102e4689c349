/*
 * The losses of training graphs and their backward operators
 * (switchyard.train domain, float32, cpu_ref). The forward losses compute
 * what ONNX's SoftmaxCrossEntropyLoss (reduction "mean") and
 * ReduceMean((P - T)^2) compute, as one node each at any opset:
 *
 *   SoftmaxCrossEntropy(scores [N, C], labels [N] int64) -> loss (scalar)
 *       mean over n of log(sum_c exp(s[n,c])) - s[n, labels[n]]
 *   MeanSquaredError(P, T) -> loss (scalar)
 *       mean of (P - T)^2 over every element
 *
 *   SoftmaxCrossEntropyGrad(dL, scores [N, C], labels [N] int64) -> dScores
 *       dScores[n,c] = dL * (softmax(scores[n])[c] - (c == labels[n])) / D
 *       with D = N for reduction "mean" (the default), 1 for "sum".
 *   MSEGrad(dL, P, T) -> dP
 *       dP = dL * 2 (P - T) / numel(P)  (the mean over every element).
 *
 * dL is the scalar gradient of the loss (1 when the loss is the objective).
 * Labels outside [0, C) are refused at run time with the offending index.
 */
#include "train.h"

#include "trk.h"

#include <math.h>
#include <string.h>

static sy_status *infer_sce_grad(sy_node *n)
{
    const sy_tensor *dl, *s, *lab;
    SY_TRY(sy_need_input(H, n, 0, &dl));
    SY_TRY(sy_need_input(H, n, 1, &s));
    SY_TRY(sy_need_input(H, n, 2, &lab));
    if (dl->dtype != SY_DT_FLOAT32 || sy_tensor_numel(dl) != 1)
        return ERR(SY_ERR_SHAPE, "SoftmaxCrossEntropyGrad: dL must be one float32 value");
    if (s->dtype != SY_DT_FLOAT32 || s->rank != 2)
        return ERR(SY_ERR_SHAPE, "SoftmaxCrossEntropyGrad: scores must be float32 [N, C], got rank %d", s->rank);
    if (lab->dtype != SY_DT_INT64 || lab->rank != 1 || lab->dims[0] != s->dims[0])
        return ERR(SY_ERR_SHAPE, "SoftmaxCrossEntropyGrad: labels must be int64 [N] with N = %lld",
                   (long long)s->dims[0]);
    if (!sy_attr_string_is(H, n, "reduction", "mean", "mean") && !sy_attr_string_is(H, n, "reduction", "mean", "sum"))
        return ERR(SY_ERR_INVALID_ARGUMENT, "SoftmaxCrossEntropyGrad: reduction must be \"mean\" or \"sum\"");
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 2, s->dims);
}

static sy_status *prepare_sce_grad(sy_node *n, void **state)
{
    /* the state is the divisor's choice: non-NULL = "sum" */
    *state = sy_attr_string_is(H, n, "reduction", "mean", "sum") ? (void *)1 : NULL;
    return NULL;
}

static sy_status *run_sce_grad(void *state, const sy_kernel_io *io)
{
    const float dl = *(const float *)io->inputs[0]->data;
    const sy_tensor *ts = io->inputs[1];
    const float *s = ts->data;
    const int64_t *lab = io->inputs[2]->data;
    float *ds = io->outputs[0]->data;
    const int64_t nb = ts->dims[0], nc = ts->dims[1];
    const float scale = dl / (state ? 1.0f : (float)nb);
    /* libm's exp in double, as the forward loss; the packages' trk_softmax_xent_grad (no libm: tflk_expf_d)
     * agrees within float rounding */
    for (int64_t n = 0; n < nb; n++) {
        if (lab[n] < 0 || lab[n] >= nc)
            return ERR(SY_ERR_INVALID_ARGUMENT, "SoftmaxCrossEntropyGrad: label %lld of sample %lld is outside [0, %lld)",
                       (long long)lab[n], (long long)n, (long long)nc);
        const float *row = s + n * nc;
        float mx = row[0];
        for (int64_t c = 1; c < nc; c++)
            mx = row[c] > mx ? row[c] : mx;
        double sum = 0.0; /* the softmax denominator, as the forward loss sums it */
        for (int64_t c = 0; c < nc; c++)
            sum += exp((double)row[c] - mx);
        for (int64_t c = 0; c < nc; c++) {
            float p = (float)(exp((double)row[c] - mx) / sum);
            ds[n * nc + c] = scale * (p - (c == lab[n] ? 1.0f : 0.0f));
        }
    }
    return NULL;
}

static sy_status *infer_mse_grad(sy_node *n)
{
    const sy_tensor *dl, *p, *t;
    SY_TRY(sy_need_input(H, n, 0, &dl));
    SY_TRY(sy_need_input(H, n, 1, &p));
    SY_TRY(sy_need_input(H, n, 2, &t));
    if (dl->dtype != SY_DT_FLOAT32 || sy_tensor_numel(dl) != 1)
        return ERR(SY_ERR_SHAPE, "MSEGrad: dL must be one float32 value");
    if (p->dtype != SY_DT_FLOAT32 || t->dtype != SY_DT_FLOAT32 ||
        !sy_shape_equal(p->rank, p->dims, t->rank, t->dims))
        return ERR(SY_ERR_SHAPE, "MSEGrad: prediction and target must be float32 tensors of one shape");
    return H->node_set_output(n, 0, SY_DT_FLOAT32, p->rank, p->dims);
}

static sy_status *run_mse_grad(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float dl = *(const float *)io->inputs[0]->data;
    const float *p = io->inputs[1]->data, *t = io->inputs[2]->data;
    float *dp = io->outputs[0]->data;
    const int64_t len = sy_tensor_numel(io->inputs[1]);
    const float scale = len ? 2.0f * dl / (float)len : 0.0f;
    for (int64_t i = 0; i < len; i++)
        dp[i] = scale * (p[i] - t[i]);
    return NULL;
}

static sy_status *check_scores(sy_node *n, const sy_tensor *s, const sy_tensor *lab)
{
    if (s->dtype != SY_DT_FLOAT32 || s->rank != 2)
        return ERR(SY_ERR_SHAPE, "%s: scores must be float32 [N, C], got rank %d %s", H->node_op(n), s->rank,
                   sy_dt_name(s->dtype));
    if (lab->dtype != SY_DT_INT64 || lab->rank != 1 || lab->dims[0] != s->dims[0])
        return ERR(SY_ERR_SHAPE, "%s: labels must be int64 [N] with N = %lld", H->node_op(n), (long long)s->dims[0]);
    return NULL;
}

static sy_status *infer_sce(sy_node *n)
{
    const sy_tensor *s, *lab;
    SY_TRY(sy_need_input(H, n, 0, &s));
    SY_TRY(sy_need_input(H, n, 1, &lab));
    SY_TRY(check_scores(n, s, lab));
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 0, NULL);
}

static sy_status *run_sce(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *ts = io->inputs[0];
    const float *s = ts->data;
    const int64_t *lab = io->inputs[1]->data;
    const int64_t nb = ts->dims[0], nc = ts->dims[1];
    double total = 0.0;
    for (int64_t n = 0; n < nb; n++) {
        if (lab[n] < 0 || lab[n] >= nc)
            return ERR(SY_ERR_INVALID_ARGUMENT, "SoftmaxCrossEntropy: label %lld of sample %lld is outside [0, %lld)",
                       (long long)lab[n], (long long)n, (long long)nc);
        const float *row = s + n * nc;
        float mx = row[0];
        for (int64_t c = 1; c < nc; c++)
            mx = row[c] > mx ? row[c] : mx;
        double sum = 0.0;
        for (int64_t c = 0; c < nc; c++)
            sum += exp((double)row[c] - mx);
        total += log(sum) + mx - row[lab[n]];
    }
    *(float *)io->outputs[0]->data = nb ? (float)(total / (double)nb) : 0.0f;
    return NULL;
}

static sy_status *infer_mse(sy_node *n)
{
    const sy_tensor *p, *t;
    SY_TRY(sy_need_input(H, n, 0, &p));
    SY_TRY(sy_need_input(H, n, 1, &t));
    if (p->dtype != SY_DT_FLOAT32 || t->dtype != SY_DT_FLOAT32 ||
        !sy_shape_equal(p->rank, p->dims, t->rank, t->dims))
        return ERR(SY_ERR_SHAPE, "MeanSquaredError: prediction and target must be float32 tensors of one shape");
    return H->node_set_output(n, 0, SY_DT_FLOAT32, 0, NULL);
}

static sy_status *run_mse(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *p = io->inputs[0]->data, *t = io->inputs[1]->data;
    const int64_t len = sy_tensor_numel(io->inputs[0]);
    double total = 0.0;
    for (int64_t i = 0; i < len; i++)
        total += ((double)p[i] - t[i]) * ((double)p[i] - t[i]);
    *(float *)io->outputs[0]->data = len ? (float)(total / (double)len) : 0.0f;
    return NULL;
}

static const sy_attr_def a_sce[] = {{"reduction", SY_ATTR_STRING, false}};

const sy_op_schema sy_train_loss_schemas[] = {
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "SoftmaxCrossEntropy", 1, 2, 2, 1, 1, SY_NO_ATTRS, infer_sce,
     SY_NO_INPLACE, 0, "mean softmax cross-entropy of scores [N, C] against labels [N]"},
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "MeanSquaredError", 1, 2, 2, 1, 1, SY_NO_ATTRS, infer_mse,
     SY_NO_INPLACE, 0, "mean of (P - T)^2"},
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "SoftmaxCrossEntropyGrad", 1, 3, 3, 1, 1, SY_ATTRS(a_sce),
     infer_sce_grad, SY_NO_INPLACE, 0, "gradient of SoftmaxCrossEntropyLoss w.r.t. the scores"},
    {sizeof(sy_op_schema), SY_TRAIN_DOMAIN, "MSEGrad", 1, 3, 3, 1, 1, SY_NO_ATTRS, infer_mse_grad, SY_NO_INPLACE, 0,
     "gradient of the mean squared error w.r.t. the prediction"},
};
const uint32_t sy_train_loss_n_schemas = SY_COUNT_OF(sy_train_loss_schemas);

const sy_kernel_def sy_train_loss_kernels[] = {
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "SoftmaxCrossEntropy", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0,
     0u, NULL, sy_prepare_nothing, run_sce, NULL, NULL},
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "MeanSquaredError", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, 0u,
     NULL, sy_prepare_nothing, run_mse, NULL, NULL},
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "SoftmaxCrossEntropyGrad", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 1,
     0u, NULL, prepare_sce_grad, run_sce_grad, NULL, NULL},
    {sizeof(sy_kernel_def), SY_TRAIN_DOMAIN, "MSEGrad", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 1, 0u, NULL,
     sy_prepare_nothing, run_mse_grad, NULL, NULL},
};
const uint32_t sy_train_loss_n_kernels = SY_COUNT_OF(sy_train_loss_kernels);
