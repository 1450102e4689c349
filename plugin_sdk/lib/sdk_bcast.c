/* sy_sdk: numpy broadcast iterator for N-ary elementwise kernels. */
#include "switchyard/sy_sdk.h"

bool sy_bcast_plan_shapes(sy_bcast *b, int32_t n_in, const int32_t *ranks, const int64_t (*dims)[SY_MAX_RANK],
                          const size_t *esizes, int32_t out_rank, const int64_t *out_dims, size_t out_esize)
{
    if (n_in < 1 || n_in > SY_BCAST_MAX_IN || out_rank < 0 || out_rank > SY_MAX_RANK)
        return false;
    int64_t st[SY_BCAST_MAX_IN][SY_MAX_RANK];
    for (int32_t k = 0; k < n_in; k++) {
        if (ranks[k] > out_rank || ranks[k] < 0)
            return false;
        int32_t off = out_rank - ranks[k];
        int64_t s = 1;
        for (int32_t d = out_rank - 1; d >= 0; d--) {
            if (d < off) {
                st[k][d] = 0;
                continue;
            }
            int64_t id = dims[k][d - off];
            if (id == out_dims[d])
                st[k][d] = id == 1 ? 0 : s;
            else if (id == 1)
                st[k][d] = 0;
            else
                return false;
            s *= id;
        }
        b->esize[k] = esizes[k];
    }
    b->n_in = n_in;
    b->out_esize = out_esize;
    b->total = sy_numel(out_rank, out_dims);
    /* drop size-1 dims, then merge neighbours that are contiguous for all */
    int32_t r = 0;
    for (int32_t d = 0; d < out_rank; d++) {
        if (out_dims[d] == 1)
            continue;
        bool merge = r > 0;
        for (int32_t k = 0; k < n_in && merge; k++)
            if (b->strides[k][r - 1] != st[k][d] * out_dims[d])
                merge = false;
        if (merge) {
            b->dims[r - 1] *= out_dims[d];
            for (int32_t k = 0; k < n_in; k++)
                b->strides[k][r - 1] = st[k][d];
        } else {
            b->dims[r] = out_dims[d];
            for (int32_t k = 0; k < n_in; k++)
                b->strides[k][r] = st[k][d];
            r++;
        }
    }
    b->rank = r;
    return true;
}

bool sy_bcast_plan(sy_bcast *b, int32_t n_in, const sy_tensor *const *ins, const sy_tensor *out)
{
    int32_t ranks[SY_BCAST_MAX_IN];
    int64_t dims[SY_BCAST_MAX_IN][SY_MAX_RANK];
    size_t es[SY_BCAST_MAX_IN];
    if (n_in < 1 || n_in > SY_BCAST_MAX_IN)
        return false;
    for (int32_t k = 0; k < n_in; k++) {
        if (!ins[k])
            return false;
        ranks[k] = ins[k]->rank;
        memcpy(dims[k], ins[k]->dims, sizeof(int64_t) * (size_t)ins[k]->rank);
        es[k] = sy_dt_size(ins[k]->dtype);
    }
    return sy_bcast_plan_shapes(b, n_in, ranks, (const int64_t(*)[SY_MAX_RANK])dims, es, out->rank, out->dims,
                                sy_dt_size(out->dtype));
}

void sy_bcast_exec(const sy_bcast *b, const void *const *in_data, void *out_data, sy_bcast_fn fn, const void *ctx)
{
    if (b->total <= 0)
        return;
    int32_t n = b->n_in;
    const void *ptr[SY_BCAST_MAX_IN];
    int64_t inner_st[SY_BCAST_MAX_IN];
    if (b->rank == 0) {
        for (int32_t k = 0; k < n; k++) {
            ptr[k] = in_data[k];
            inner_st[k] = 0;
        }
        fn(ctx, ptr, inner_st, out_data, 1);
        return;
    }
    int32_t r = b->rank;
    int64_t inner = b->dims[r - 1];
    for (int32_t k = 0; k < n; k++)
        inner_st[k] = b->strides[k][r - 1];
    int64_t idx[SY_MAX_RANK] = {0};
    int64_t off[SY_BCAST_MAX_IN] = {0};
    char *o = out_data;
    int64_t outer = b->total / inner;
    for (int64_t it = 0; it < outer; it++) {
        for (int32_t k = 0; k < n; k++)
            ptr[k] = (const char *)in_data[k] + off[k] * (int64_t)b->esize[k];
        fn(ctx, ptr, inner_st, o, inner);
        o += inner * (int64_t)b->out_esize;
        /* advance the outer multi-index and the per-input offsets */
        for (int32_t d = r - 2; d >= 0; d--) {
            if (++idx[d] < b->dims[d]) {
                for (int32_t k = 0; k < n; k++)
                    off[k] += b->strides[k][d];
                break;
            }
            for (int32_t k = 0; k < n; k++)
                off[k] -= b->strides[k][d] * (b->dims[d] - 1);
            idx[d] = 0;
        }
    }
}

sy_status *sy_bcast_apply(const sy_host_api *host, int32_t n_in, const sy_tensor *const *ins, sy_tensor *out,
                          sy_bcast_fn fn, const void *ctx)
{
    sy_bcast b;
    if (!sy_bcast_plan(&b, n_in, ins, out))
        return host->status_new(SY_ERR_SHAPE, "inputs do not broadcast to the output shape (numpy rule)");
    const void *data[SY_BCAST_MAX_IN];
    for (int32_t k = 0; k < n_in; k++)
        data[k] = ins[k]->data;
    sy_bcast_exec(&b, data, out->data, fn, ctx);
    return NULL;
}
