/* Feeding samples to the training runtimes (sy_train_session, sy_qas_session).
 *
 * A data set's sample and a model's input may name the same bytes with
 * different axes of size 1: an IDX image is [1, H, W] (one channel first,
 * the ONNX convention), a TFLite model takes [N, H, W, 1] (NHWC), and a
 * folder's .npy may be [H, W]. Inserting or removing axes of size 1 never
 * moves an element in row-major order, so such a sample is fed in the
 * model's shape as it is. Every other difference still reaches the session's
 * own check, which names the input and the dimension. */
#include "train_internal.h"

#include <string.h>

/* dims without their 1s into out; returns the count */
static int32_t squeeze(const int64_t *dims, int32_t rank, int64_t *out)
{
    int32_t n = 0;
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] != 1)
            out[n++] = dims[d];
    return n;
}

/* true with *view the model's shape over t's data when the two shapes differ
 * only by axes of size 1; the model's first axis, when symbolic (the batch),
 * takes t's first */
static bool relabel(const sy_model *m, size_t i, const sy_tensor *t, sy_tensor *view)
{
    sy_value_info info = {.struct_size = sizeof info};
    if (!sy_model_input_info(m, i, &info) || info.rank < 1 || info.rank > SY_MAX_RANK || t->rank < 1 ||
        t->rank > SY_MAX_RANK)
        return false;
    int64_t want[SY_MAX_RANK];
    for (int32_t d = 0; d < info.rank; d++) {
        want[d] = info.dims[d] < 0 && d == 0 ? t->dims[0] : info.dims[d];
        if (want[d] < 0)
            return false; /* another symbolic axis: the shape is not the model's to give */
    }
    if (info.rank == t->rank && !memcmp(want, t->dims, (size_t)t->rank * sizeof *want))
        return false; /* already the model's */
    int64_t a[SY_MAX_RANK], b[SY_MAX_RANK];
    int32_t na = squeeze(want, info.rank, a), nb = squeeze(t->dims, t->rank, b);
    if (na != nb || memcmp(a, b, (size_t)na * sizeof *a))
        return false;
    *view = *t;
    view->rank = info.rank;
    memcpy(view->dims, want, (size_t)info.rank * sizeof *want);
    return true;
}

sy_status *tr_feed_input(sy_session *ss, const sy_model *m, size_t i, const sy_tensor *t)
{
    sy_tensor view;
    if (t && m && relabel(m, i, t, &view))
        t = &view;
    return sy_session_set_input_by_index(ss, i, t, SY_INPUT_BORROW);
}
