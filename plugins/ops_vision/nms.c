/*
 * NonMaxSuppression (10, 11): per batch and class, boxes whose score is
 * above score_threshold (when given) in descending score order (ties: the
 * lower box index first); a box is kept unless its IoU with a box already
 * kept for the class exceeds iou_threshold; at most
 * max_output_boxes_per_class per class (0 or absent: none). Output
 * [selected, 3] int64 (batch, class, box). Boxes are [y1, x1, y2, x2] with
 * the corners in either order (center_point_box 0) or [x, y, w, h] (1).
 * The output size depends on the values: infer computes it when they are
 * known and asks for a dynamic run otherwise.
 */
#include "vision.h"

#include <stdlib.h>

static const sy_host_api *H;
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

typedef struct nms_args {
    const float *boxes, *scores;
    int64_t B, C, nb, max_out;
    float iou, score_thr;
    bool has_score_thr, center;
} nms_args;

static const sy_tensor *in_opt(const sy_node *n, uint32_t i)
{
    return i < H->node_num_inputs(n) ? H->node_input(n, i) : NULL;
}

static sy_status *nms_check(const sy_node *n, bool need_data, nms_args *a)
{
    const sy_tensor *bx, *sc;
    SY_TRY(sy_need_input(H, n, 0, &bx));
    SY_TRY(sy_need_input(H, n, 1, &sc));
    if (bx->dtype != SY_DT_FLOAT32 || sc->dtype != SY_DT_FLOAT32)
        return ERR(SY_ERR_TYPE, "boxes and scores must be float32");
    if (bx->rank != 3 || bx->dims[2] != 4)
        return ERR(SY_ERR_SHAPE, "boxes must be [batches, boxes, 4], got rank %d", bx->rank);
    if (sc->rank != 3 || sc->dims[0] != bx->dims[0] || sc->dims[2] != bx->dims[1])
        return ERR(SY_ERR_SHAPE, "scores must be [%lld, classes, %lld]", (long long)bx->dims[0], (long long)bx->dims[1]);
    int64_t center = sy_attr_int_or(H, n, "center_point_box", 0);
    if (center != 0 && center != 1)
        return ERR(SY_ERR_INVALID_MODEL, "center_point_box must be 0 or 1, got %lld", (long long)center);
    a->B = bx->dims[0];
    a->nb = bx->dims[1];
    a->C = sc->dims[1];
    a->center = center == 1;
    a->boxes = bx->data;
    a->scores = sc->data;
    const sy_tensor *mo = in_opt(n, 2), *io = in_opt(n, 3), *st = in_opt(n, 4);
    if (mo && (mo->dtype != SY_DT_INT64 || sy_tensor_numel(mo) > 1))
        return ERR(SY_ERR_TYPE, "max_output_boxes_per_class must be an int64 scalar");
    if ((io && (io->dtype != SY_DT_FLOAT32 || sy_tensor_numel(io) > 1)) ||
        (st && (st->dtype != SY_DT_FLOAT32 || sy_tensor_numel(st) > 1)))
        return ERR(SY_ERR_TYPE, "iou_threshold and score_threshold must be float32 scalars");
    if (!need_data)
        return NULL;
    if (!bx->data || !sc->data || (mo && !mo->data) || (io && !io->data) || (st && !st->data))
        return ERR(SY_ERR_DYNAMIC_SHAPE, "the number of selected boxes is not known before the run");
    a->max_out = mo && sy_tensor_numel(mo) ? *(const int64_t *)mo->data : 0;
    if (a->max_out < 0)
        a->max_out = 0;
    a->iou = io && sy_tensor_numel(io) ? *(const float *)io->data : 0.0f;
    a->has_score_thr = st && sy_tensor_numel(st);
    a->score_thr = a->has_score_thr ? *(const float *)st->data : 0.0f;
    if (!(a->iou >= 0.0f && a->iou <= 1.0f))
        return ERR(SY_ERR_INVALID_ARGUMENT, "iou_threshold must be in [0, 1], got %g", (double)a->iou);
    return NULL;
}

static void box_extent(const float *b, bool center, float *x0, float *x1, float *y0, float *y1)
{
    if (center) {
        *x0 = b[0] - b[2] / 2;
        *x1 = b[0] + b[2] / 2;
        *y0 = b[1] - b[3] / 2;
        *y1 = b[1] + b[3] / 2;
    } else {
        *y0 = b[0] < b[2] ? b[0] : b[2];
        *y1 = b[0] < b[2] ? b[2] : b[0];
        *x0 = b[1] < b[3] ? b[1] : b[3];
        *x1 = b[1] < b[3] ? b[3] : b[1];
    }
}

static bool suppresses(const float *a, const float *b, bool center, float thr)
{
    float ax0, ax1, ay0, ay1, bx0, bx1, by0, by1;
    box_extent(a, center, &ax0, &ax1, &ay0, &ay1);
    box_extent(b, center, &bx0, &bx1, &by0, &by1);
    float ix0 = ax0 > bx0 ? ax0 : bx0, ix1 = ax1 < bx1 ? ax1 : bx1;
    float iy0 = ay0 > by0 ? ay0 : by0, iy1 = ay1 < by1 ? ay1 : by1;
    if (ix1 <= ix0 || iy1 <= iy0)
        return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    float area_a = (ax1 - ax0) * (ay1 - ay0), area_b = (bx1 - bx0) * (by1 - by0);
    float uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0)
        return false;
    return inter / uni > thr;
}

typedef struct cand {
    float score;
    int64_t idx;
} cand;

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return a->idx < b->idx ? -1 : (a->idx > b->idx);
}

/* bytes of the candidate and kept lists for nb boxes */
static size_t nms_work_bytes(int64_t nb) { return (size_t)(nb ? nb : 1) * (sizeof(cand) + sizeof(int64_t)); }

/* Runs the selection with `work` (nms_work_bytes); writes triples to out
 * (when not NULL, at most cap) and returns their count. */
static int64_t nms_select(const nms_args *a, void *work, int64_t *out, int64_t cap)
{
    cand *cs = work;
    int64_t *kept = (int64_t *)(cs + (a->nb ? a->nb : 1));
    int64_t total = 0;
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t c = 0; c < a->C; c++) {
            const float *sc = a->scores + (b * a->C + c) * a->nb, *bx = a->boxes + b * a->nb * 4;
            int64_t m = 0, nk = 0;
            for (int64_t i = 0; i < a->nb; i++)
                if (!a->has_score_thr || sc[i] > a->score_thr)
                    cs[m++] = (cand){sc[i], i};
            qsort(cs, (size_t)m, sizeof *cs, cand_cmp);
            for (int64_t i = 0; i < m && nk < a->max_out; i++) {
                bool keep = true;
                for (int64_t k = 0; k < nk && keep; k++)
                    keep = !suppresses(bx + cs[i].idx * 4, bx + kept[k] * 4, a->center, a->iou);
                if (!keep)
                    continue;
                kept[nk++] = cs[i].idx;
                if (out && total < cap) {
                    out[total * 3] = b;
                    out[total * 3 + 1] = c;
                    out[total * 3 + 2] = cs[i].idx;
                }
                total++;
            }
        }
    return total;
}

static sy_status *infer_nms(sy_node *n)
{
    nms_args a;
    SY_TRY(nms_check(n, true, &a));
    void *work = malloc(nms_work_bytes(a.nb));
    if (!work)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory for %lld candidate boxes", (long long)a.nb);
    int64_t count = nms_select(&a, work, NULL, 0);
    free(work);
    int64_t dims[2] = {count, 3};
    return H->node_set_output(n, 0, SY_DT_INT64, 2, dims);
}

static sy_status *prepare_nms(sy_node *n, void **state)
{
    nms_args *a = calloc(1, sizeof *a);
    if (!a)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = nms_check(n, false, a);
    if (st) {
        free(a);
        return st;
    }
    H->node_set_scratch(n, nms_work_bytes(a->nb));
    *state = a;
    return NULL;
}

static sy_status *run_nms(void *state, const sy_kernel_io *io)
{
    nms_args a = *(const nms_args *)state;
    a.boxes = io->inputs[0]->data;
    a.scores = io->inputs[1]->data;
    const sy_tensor *mo = io->n_inputs > 2 ? io->inputs[2] : NULL, *it = io->n_inputs > 3 ? io->inputs[3] : NULL;
    const sy_tensor *st = io->n_inputs > 4 ? io->inputs[4] : NULL;
    a.max_out = mo && sy_tensor_numel(mo) ? *(const int64_t *)mo->data : 0;
    a.max_out = a.max_out < 0 ? 0 : a.max_out;
    a.iou = it && sy_tensor_numel(it) ? *(const float *)it->data : 0.0f;
    a.has_score_thr = st && sy_tensor_numel(st);
    a.score_thr = a.has_score_thr ? *(const float *)st->data : 0.0f;
    sy_tensor *y = io->outputs[0];
    int64_t cap = y->dims[0];
    int64_t count = nms_select(&a, io->scratch, y->data, cap);
    if (count != cap)
        return ERR(SY_ERR_RUNTIME, "selected %lld boxes, %lld were planned", (long long)count, (long long)cap);
    return NULL;
}

static const sy_attr_def a_nms[] = {{"center_point_box", SY_ATTR_INT, false}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("NonMaxSuppression", 10, 2, 5, 1, 1, SY_ATTRS(a_nms), infer_nms, SY_NO_INPLACE,
              SY_SCHEMA_DATA_DEPENDENT_SHAPE),
    SY_SCHEMA("NonMaxSuppression", 11, 2, 5, 1, 1, SY_ATTRS(a_nms), infer_nms, SY_NO_INPLACE,
              SY_SCHEMA_DATA_DEPENDENT_SHAPE),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("NonMaxSuppression", 1, 0, SY_DT_BIT(SY_DT_FLOAT32), 0, prepare_nms, run_nms, sy_release_free),
};

sy_status *vision_nms_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
