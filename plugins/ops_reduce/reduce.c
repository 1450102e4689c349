/*
 * ops_reduce: reductions and scans of the default ONNX domain, cpu_ref
 * kernels for float and integer dtypes.
 *
 * ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2
 * ReduceLogSum ReduceLogSumExp ReduceSumSquare (axes attribute before
 * opset 13 (Sum) / 18 (others), axes input and noop_with_empty_axes after),
 * ArgMax ArgMin (select_last_index), CumSum CumProd, TopK.
 * Floats accumulate in double, integers in int64. fp32 and int8 (codes as
 * integers) run on the portable kernel riscv_mcu and its packages run
 * (plugin_sdk/kernels/tflk_reduce.c); the other dtypes on the loops here.
 */
#include "switchyard/sy_sdk.h"
#include "tflk.h"

#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQ };

static const struct {
    const char *name;
    int kind;
    int32_t input_since; /* opset where axes became an input */
} rops[] = {
    {"ReduceSum", R_SUM, 13},         {"ReduceMean", R_MEAN, 18},     {"ReduceMax", R_MAX, 18},
    {"ReduceMin", R_MIN, 18},         {"ReduceProd", R_PROD, 18},     {"ReduceL1", R_L1, 18},
    {"ReduceL2", R_L2, 18},           {"ReduceLogSum", R_LOGSUM, 18}, {"ReduceLogSumExp", R_LOGSUMEXP, 18},
    {"ReduceSumSquare", R_SUMSQ, 18},
};

static int find_rop(const char *op)
{
    for (size_t i = 0; i < sizeof rops / sizeof rops[0]; i++)
        if (!strcmp(rops[i].name, op))
            return (int)i;
    return -1;
}

typedef struct red_state {
    int kind;
    bool keepdims, noop_empty;
    bool axes_from_attr;
    int64_t naxes; /* -1: none given */
    int64_t axes[SY_MAX_RANK];
} red_state;

static sy_status *read_red(const sy_node *n, red_state *s)
{
    int i = find_rop(H->node_op(n));
    if (i < 0)
        return ERR(SY_ERR_INTERNAL, "unknown reduction %s", H->node_op(n));
    s->kind = rops[i].kind;
    s->keepdims = sy_attr_int_or(H, n, "keepdims", 1) != 0;
    s->noop_empty = sy_attr_int_or(H, n, "noop_with_empty_axes", 0) != 0;
    s->axes_from_attr = H->node_opset(n) < rops[i].input_since;
    s->naxes = -1;
    if (s->axes_from_attr) {
        s->naxes = sy_attr_ints_copy(H, n, "axes", s->axes, SY_MAX_RANK + 1);
        if (s->naxes > SY_MAX_RANK)
            return ERR(SY_ERR_SHAPE, "too many axes (%lld)", (long long)s->naxes);
    }
    return NULL;
}

/* mask of reduced dims; *noop when the input passes through unchanged */
static sy_status *red_mask(const red_state *s, const sy_tensor *x, const sy_tensor *axes_t, uint32_t *mask, bool *noop)
{
    int64_t axes[SY_MAX_RANK], n = s->naxes;
    if (!s->axes_from_attr) {
        n = -1;
        if (axes_t) {
            if (!axes_t->data)
                return ERR(SY_ERR_DYNAMIC_SHAPE, "axes are not known before the run");
            n = sy_tensor_read_ints(axes_t, axes, SY_MAX_RANK);
            if (n < 0 || n > SY_MAX_RANK)
                return ERR(SY_ERR_SHAPE, "axes must be a 1-D int64 tensor of at most %d values", SY_MAX_RANK);
        }
    } else if (n > 0) {
        memcpy(axes, s->axes, sizeof(int64_t) * (size_t)n);
    }
    *mask = 0;
    *noop = false;
    if (n <= 0) {
        if (s->noop_empty && !s->axes_from_attr) {
            *noop = true;
            return NULL;
        }
        *mask = x->rank >= 32 ? ~0u : ((1u << x->rank) - 1u);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t a;
        SY_TRY(sy_norm_axis(H, axes[i], x->rank, false, "axes value", &a));
        *mask |= 1u << a;
    }
    return NULL;
}

static sy_status *infer_reduce(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    red_state s;
    SY_TRY(read_red(n, &s));
    const sy_tensor *at = H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL;
    uint32_t mask;
    bool noop;
    SY_TRY(red_mask(&s, x, at, &mask, &noop));
    if (noop)
        return sy_infer_unary(H, n);
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (!(mask & (1u << d)))
            dims[r++] = x->dims[d];
        else if (s.keepdims)
            dims[r++] = 1;
    }
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *prepare_reduce(sy_node *n, void **state)
{
    red_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_red(n, s);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

/* split dims into kept / reduced with their input strides */
typedef struct split {
    int32_t nk, nr;
    int64_t kd[SY_MAX_RANK], ks[SY_MAX_RANK], rd[SY_MAX_RANK], rs[SY_MAX_RANK];
    int64_t nred;
} split;

static void make_split(const sy_tensor *x, uint32_t mask, split *sp)
{
    int64_t xs[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, xs);
    sp->nk = sp->nr = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (mask & (1u << d)) {
            sp->rd[sp->nr] = x->dims[d];
            sp->rs[sp->nr++] = xs[d];
        } else {
            sp->kd[sp->nk] = x->dims[d];
            sp->ks[sp->nk++] = xs[d];
        }
    }
    sp->nred = sy_numel(sp->nr, sp->rd);
}

static sy_status *run_reduce(void *state, const sy_kernel_io *io)
{
    const red_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    uint32_t mask;
    bool noop;
    SY_TRY(red_mask(s, x, io->n_inputs > 1 ? io->inputs[1] : NULL, &mask, &noop));
    if (noop) {
        if (y->data != x->data)
            memcpy(y->data, x->data, x->nbytes);
        return NULL;
    }
    if ((x->dtype == SY_DT_FLOAT32 || x->dtype == SY_DT_INT8) && y->dtype == x->dtype &&
        !(x->dtype == SY_DT_INT8 && (s->kind == R_LOGSUM || s->kind == R_LOGSUMEXP))) {
        static const int32_t kinds[] = {TFLK_R_SUM, TFLK_R_MEAN, TFLK_R_MAX,    TFLK_R_MIN,       TFLK_R_PROD,
                                        TFLK_R_L1,  TFLK_R_L2,   TFLK_R_LOGSUM, TFLK_R_LOGSUMEXP, TFLK_R_SUMSQ};
        tflk_reduce k;
        memset(&k, 0, sizeof k);
        k.kind = kinds[s->kind];
        k.mode = x->dtype == SY_DT_INT8 ? TFLK_RQ_RAW8 : TFLK_RQ_F32;
        k.onnx = 1;
        if (x->rank <= 32 && !tflk_reduce_plan(&k, x->rank, x->dims, mask)) {
            tflk_reduce_run(&k, x->data, y->data);
            return NULL;
        }
    }
    split sp;
    make_split(x, mask, &sp);
    bool is_int = !sy_dt_is_float(x->dtype);
    bool int_path = is_int && (s->kind == R_SUM || s->kind == R_PROD || s->kind == R_MAX || s->kind == R_MIN ||
                               s->kind == R_L1 || s->kind == R_SUMSQ);
    int64_t kidx[SY_MAX_RANK] = {0};
    int64_t nout = sy_numel(sp.nk, sp.kd);
    for (int64_t o = 0; o < nout; o++) {
        int64_t base = 0;
        for (int32_t d = 0; d < sp.nk; d++)
            base += kidx[d] * sp.ks[d];
        int64_t ridx[SY_MAX_RANK] = {0};
        if (int_path) {
            int64_t acc = s->kind == R_PROD ? 1 : s->kind == R_MAX ? INT64_MIN : s->kind == R_MIN ? INT64_MAX : 0;
            if (s->kind == R_MAX && x->dtype == SY_DT_UINT64)
                acc = 0;
            for (int64_t i = 0; i < sp.nred; i++) {
                int64_t off = base;
                for (int32_t d = 0; d < sp.nr; d++)
                    off += ridx[d] * sp.rs[d];
                int64_t v = sy_load_i64(x->data, x->dtype, (size_t)off);
                switch (s->kind) {
                case R_SUM: acc = (int64_t)((uint64_t)acc + (uint64_t)v); break;
                case R_PROD: acc = (int64_t)((uint64_t)acc * (uint64_t)v); break;
                case R_MAX: acc = v > acc ? v : acc; break;
                case R_MIN: acc = v < acc ? v : acc; break;
                case R_L1: acc += v < 0 ? -v : v; break;
                default: acc = (int64_t)((uint64_t)acc + (uint64_t)v * (uint64_t)v); break;
                }
                sy_index_next(sp.nr, sp.rd, ridx);
            }
            sy_store_i64(y->data, y->dtype, (size_t)o, acc);
        } else {
            double acc = s->kind == R_PROD ? 1.0 : s->kind == R_MAX ? -INFINITY : s->kind == R_MIN ? INFINITY : 0.0;
            double mx = -INFINITY;
            if (s->kind == R_LOGSUMEXP) { /* max first for stability */
                int64_t r2[SY_MAX_RANK] = {0};
                for (int64_t i = 0; i < sp.nred; i++) {
                    int64_t off = base;
                    for (int32_t d = 0; d < sp.nr; d++)
                        off += r2[d] * sp.rs[d];
                    double v = sy_load_f64(x->data, x->dtype, (size_t)off);
                    mx = v > mx ? v : mx;
                    sy_index_next(sp.nr, sp.rd, r2);
                }
                if (!isfinite(mx))
                    mx = 0;
            }
            for (int64_t i = 0; i < sp.nred; i++) {
                int64_t off = base;
                for (int32_t d = 0; d < sp.nr; d++)
                    off += ridx[d] * sp.rs[d];
                double v = sy_load_f64(x->data, x->dtype, (size_t)off);
                switch (s->kind) {
                case R_SUM: case R_MEAN: case R_LOGSUM: acc += v; break;
                case R_PROD: acc *= v; break;
                case R_MAX: acc = (v > acc || v != v) ? v : acc; break;
                case R_MIN: acc = (v < acc || v != v) ? v : acc; break;
                case R_L1: acc += fabs(v); break;
                case R_L2: case R_SUMSQ: acc += v * v; break;
                default: acc += exp(v - mx); break;
                }
                sy_index_next(sp.nr, sp.rd, ridx);
            }
            switch (s->kind) {
            case R_MEAN: acc = sp.nred ? acc / (double)sp.nred : NAN; break;
            case R_L2: acc = sqrt(acc); break;
            case R_LOGSUM: acc = log(acc); break;
            case R_LOGSUMEXP: acc = log(acc) + mx; break;
            default: break;
            }
            sy_store_f64(y->data, y->dtype, (size_t)o, acc);
        }
        sy_index_next(sp.nk, sp.kd, kidx);
    }
    return NULL;
}

/* ======================================================================== */
/* ArgMax / ArgMin                                                          */
/* ======================================================================== */

typedef struct arg_state {
    bool max, keepdims, last;
    int32_t axis;
} arg_state;

static sy_status *infer_arg(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    bool keep = sy_attr_int_or(H, n, "keepdims", 1) != 0;
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++) {
        if (d != axis)
            dims[r++] = x->dims[d];
        else if (keep)
            dims[r++] = 1;
    }
    return H->node_set_output(n, 0, SY_DT_INT64, r, dims);
}

static sy_status *prepare_arg(sy_node *n, void **state)
{
    arg_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->max = !strcmp(H->node_op(n), "ArgMax");
    s->keepdims = sy_attr_int_or(H, n, "keepdims", 1) != 0;
    s->last = sy_attr_int_or(H, n, "select_last_index", 0) != 0;
    sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", 0), H->node_input(n, 0)->rank, false, "axis", &s->axis);
    if (st) {
        free(s);
        return st;
    }
    *state = s;
    return NULL;
}

static sy_status *run_arg(void *state, const sy_kernel_io *io)
{
    const arg_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t *y = io->outputs[0]->data;
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), len = x->dims[s->axis];
    int64_t inner = sy_dims_prod(x->dims, s->axis + 1, x->rank);
    if (x->dtype == SY_DT_FLOAT32 && sy_tensor_numel(x) <= INT32_MAX) {
        tflk_axisop k = {.op = s->max ? TFLK_A_ARGMAX : TFLK_A_ARGMIN, .outer = (int32_t)outer, .len = (int32_t)len,
                         .inner = (int32_t)inner, .flags = s->last, .idx64 = 1};
        tflk_axis_run(&k, x->data, y, NULL);
        return NULL;
    }
    bool is_int = sy_dt_is_int(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t best = 0;
            double bv = 0;
            int64_t bi = 0;
            for (int64_t k = 0; k < len; k++) {
                size_t off = (size_t)((o * len + k) * inner + i);
                bool better;
                if (is_int) {
                    int64_t v = sy_load_i64(x->data, x->dtype, off);
                    better = k == 0 || (s->max ? (v > bi || (s->last && v == bi)) : (v < bi || (s->last && v == bi)));
                    if (better)
                        bi = v;
                } else {
                    double v = sy_load_f64(x->data, x->dtype, off);
                    better = k == 0 || (s->max ? (v > bv || (s->last && v == bv)) : (v < bv || (s->last && v == bv)));
                    if (better)
                        bv = v;
                }
                if (better)
                    best = k;
            }
            y[o * inner + i] = best;
        }
    return NULL;
}

/* ======================================================================== */
/* CumSum / CumProd                                                         */
/* ======================================================================== */

typedef struct cum_state {
    bool prod, exclusive, reverse;
} cum_state;

static sy_status *cum_axis(const sy_tensor *x, const sy_tensor *at, int32_t *axis)
{
    int64_t a;
    if (!at)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input 'axis' is required");
    if (!at->data)
        return NULL; /* checked at run */
    if (sy_tensor_read_ints(at, &a, 1) != 1)
        return ERR(SY_ERR_SHAPE, "axis must be a scalar int32/int64");
    return sy_norm_axis(H, a, x->rank, false, "axis", axis);
}

static sy_status *infer_cum(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(cum_axis(x, H->node_input(n, 1), &axis));
    return sy_infer_unary(H, n);
}

static sy_status *prepare_cum(sy_node *n, void **state)
{
    cum_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->prod = !strcmp(H->node_op(n), "CumProd");
    s->exclusive = sy_attr_int_or(H, n, "exclusive", 0) != 0;
    s->reverse = sy_attr_int_or(H, n, "reverse", 0) != 0;
    *state = s;
    return NULL;
}

static sy_status *run_cum(void *state, const sy_kernel_io *io)
{
    const cum_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int32_t axis = -1;
    SY_TRY(cum_axis(x, io->inputs[1], &axis));
    if (axis < 0)
        return ERR(SY_ERR_INVALID_ARGUMENT, "axis has no data");
    int64_t outer = sy_dims_prod(x->dims, 0, axis), len = x->dims[axis];
    int64_t inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    if (!s->prod && (x->dtype == SY_DT_FLOAT32 || x->dtype == SY_DT_INT8) && sy_tensor_numel(x) <= INT32_MAX) {
        tflk_axisop k = {.op = TFLK_A_CUMSUM, .mode = x->dtype == SY_DT_INT8 ? TFLK_RQ_RAW8 : TFLK_RQ_F32,
                         .outer = (int32_t)outer, .len = (int32_t)len, .inner = (int32_t)inner,
                         .flags = (int32_t)s->exclusive | (int32_t)s->reverse << 1};
        tflk_axis_run(&k, x->data, y->data, NULL);
        return NULL;
    }
    bool fl = sy_dt_is_float(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double af = s->prod ? 1.0 : 0.0;
            int64_t ai = s->prod ? 1 : 0;
            for (int64_t k0 = 0; k0 < len; k0++) {
                int64_t k = s->reverse ? len - 1 - k0 : k0;
                size_t off = (size_t)((o * len + k) * inner + i);
                if (fl) {
                    double v = sy_load_f64(x->data, x->dtype, off);
                    if (!s->exclusive)
                        af = s->prod ? af * v : af + v;
                    sy_store_f64(y->data, y->dtype, off, af);
                    if (s->exclusive)
                        af = s->prod ? af * v : af + v;
                } else {
                    int64_t v = sy_load_i64(x->data, x->dtype, off);
                    if (!s->exclusive)
                        ai = s->prod ? (int64_t)((uint64_t)ai * (uint64_t)v) : (int64_t)((uint64_t)ai + (uint64_t)v);
                    sy_store_i64(y->data, y->dtype, off, ai);
                    if (s->exclusive)
                        ai = s->prod ? (int64_t)((uint64_t)ai * (uint64_t)v) : (int64_t)((uint64_t)ai + (uint64_t)v);
                }
            }
        }
    return NULL;
}

/* ======================================================================== */
/* TopK                                                                     */
/* ======================================================================== */

typedef struct kv {
    double v;
    int64_t i;
} kv;

static int cmp_largest(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    if (x->v != y->v)
        return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

static int cmp_smallest(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

typedef struct topk_state {
    int64_t axis_attr, k_attr;
    bool from_attr, largest;
} topk_state;

static sy_status *topk_k(const sy_node *n, const sy_tensor *kt, int64_t k_attr, bool from_attr, int64_t *k)
{
    (void)n;
    if (from_attr) {
        *k = k_attr;
        return NULL;
    }
    if (!kt)
        return ERR(SY_ERR_INVALID_ARGUMENT, "input K is required");
    if (!kt->data)
        return ERR(SY_ERR_DYNAMIC_SHAPE, "K is not known before the run");
    if (sy_tensor_numel(kt) != 1)
        return ERR(SY_ERR_SHAPE, "K must hold exactly one value");
    *k = sy_load_i64(kt->data, kt->dtype, 0);
    return NULL;
}

static sy_status *infer_topk(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", -1), x->rank, false, "axis", &axis));
    int64_t k;
    bool fa = H->node_opset(n) < 10;
    SY_TRY(topk_k(n, fa ? NULL : H->node_input(n, 1), sy_attr_int_or(H, n, "k", 0), fa, &k));
    if (k < 0 || k > x->dims[axis])
        return ERR(SY_ERR_SHAPE, "K = %lld must be in [0, %lld]", (long long)k, (long long)x->dims[axis]);
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    dims[axis] = k;
    SY_TRY(H->node_set_output(n, 0, x->dtype, x->rank, dims));
    return H->node_set_output(n, 1, SY_DT_INT64, x->rank, dims);
}

static sy_status *prepare_topk(sy_node *n, void **state)
{
    topk_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->axis_attr = sy_attr_int_or(H, n, "axis", -1);
    s->k_attr = sy_attr_int_or(H, n, "k", 0);
    s->from_attr = H->node_opset(n) < 10;
    s->largest = sy_attr_int_or(H, n, "largest", 1) != 0;
    const sy_tensor *x = H->node_input(n, 0);
    int32_t axis = 0;
    sy_status *st = sy_norm_axis(H, s->axis_attr, x->rank, false, "axis", &axis);
    if (st) {
        free(s);
        return st;
    }
    H->node_set_scratch(n, (size_t)x->dims[axis] * sizeof(kv));
    *state = s;
    return NULL;
}

static sy_status *run_topk(void *state, const sy_kernel_io *io)
{
    const topk_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *yv = io->outputs[0], *yi = io->outputs[1];
    int32_t axis;
    SY_TRY(sy_norm_axis(H, s->axis_attr, x->rank, false, "axis", &axis));
    int64_t k;
    SY_TRY(topk_k(NULL, io->n_inputs > 1 ? io->inputs[1] : NULL, s->k_attr, s->from_attr, &k));
    int64_t outer = sy_dims_prod(x->dims, 0, axis), len = x->dims[axis];
    int64_t inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    if ((x->dtype == SY_DT_FLOAT32 || x->dtype == SY_DT_INT8) && yi && sy_tensor_numel(x) <= INT32_MAX) {
        tflk_axisop ka = {.op = TFLK_A_TOPK, .mode = x->dtype == SY_DT_INT8 ? TFLK_RQ_RAW8 : TFLK_RQ_F32,
                          .outer = (int32_t)outer, .len = (int32_t)len, .inner = (int32_t)inner,
                          .flags = !s->largest, .k = (int32_t)k, .idx64 = 1, .esize = (int32_t)sy_dt_size(x->dtype)};
        tflk_axis_run(&ka, x->data, yv->data, yi->data);
        return NULL;
    }
    if ((size_t)len * sizeof(kv) > io->scratch_bytes)
        return ERR(SY_ERR_INTERNAL, "TopK scratch too small");
    kv *buf = io->scratch;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t j = 0; j < len; j++) {
                buf[j].v = sy_load_f64(x->data, x->dtype, (size_t)((o * len + j) * inner + i));
                buf[j].i = j;
            }
            qsort(buf, (size_t)len, sizeof(kv), s->largest ? cmp_largest : cmp_smallest);
            for (int64_t j = 0; j < k; j++) {
                size_t off = (size_t)((o * k + j) * inner + i);
                size_t src = (size_t)((o * len + buf[j].i) * inner + i);
                memcpy((char *)yv->data + off * sy_dt_size(x->dtype), (const char *)x->data + src * sy_dt_size(x->dtype),
                       sy_dt_size(x->dtype));
                if (yi)
                    ((int64_t *)yi->data)[off] = buf[j].i;
            }
        }
    return NULL;
}

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_red_v1[] = {ATTR("axes", INTS), ATTR("keepdims", INT)};
static const sy_attr_def a_red_v18[] = {ATTR("keepdims", INT), ATTR("noop_with_empty_axes", INT)};
static const sy_attr_def a_arg_v1[] = {ATTR("axis", INT), ATTR("keepdims", INT)};
static const sy_attr_def a_arg_v12[] = {ATTR("axis", INT), ATTR("keepdims", INT), ATTR("select_last_index", INT)};
static const sy_attr_def a_cum[] = {ATTR("exclusive", INT), ATTR("reverse", INT)};
static const sy_attr_def a_topk_v1[] = {ATTR("axis", INT), {"k", SY_ATTR_INT, true}};
static const sy_attr_def a_topk_v10[] = {ATTR("axis", INT)};
static const sy_attr_def a_topk_v11[] = {ATTR("axis", INT), ATTR("largest", INT), ATTR("sorted", INT)};

#define RA(op) SY_SCHEMA(op, 1, 1, 1, 1, 1, SY_ATTRS(a_red_v1), infer_reduce, SY_NO_INPLACE, 0)
#define RI(op, since) SY_SCHEMA(op, since, 1, 2, 1, 1, SY_ATTRS(a_red_v18), infer_reduce, SY_NO_INPLACE, 0)
#define R2(op) RA(op), RI(op, 18)
static const sy_op_schema schemas[] = {
    RA("ReduceSum"), RI("ReduceSum", 13), R2("ReduceMean"), R2("ReduceMax"), R2("ReduceMin"), R2("ReduceProd"),
    R2("ReduceL1"), R2("ReduceL2"), R2("ReduceLogSum"), R2("ReduceLogSumExp"), R2("ReduceSumSquare"),
    SY_SCHEMA("ArgMax", 1, 1, 1, 1, 1, SY_ATTRS(a_arg_v1), infer_arg, SY_NO_INPLACE, 0),
    SY_SCHEMA("ArgMax", 12, 1, 1, 1, 1, SY_ATTRS(a_arg_v12), infer_arg, SY_NO_INPLACE, 0),
    SY_SCHEMA("ArgMin", 1, 1, 1, 1, 1, SY_ATTRS(a_arg_v1), infer_arg, SY_NO_INPLACE, 0),
    SY_SCHEMA("ArgMin", 12, 1, 1, 1, 1, SY_ATTRS(a_arg_v12), infer_arg, SY_NO_INPLACE, 0),
    SY_SCHEMA("CumSum", 11, 2, 2, 1, 1, SY_ATTRS(a_cum), infer_cum, SY_NO_INPLACE, 0),
    SY_SCHEMA("CumProd", 26, 2, 2, 1, 1, SY_ATTRS(a_cum), infer_cum, SY_NO_INPLACE, 0),
    SY_SCHEMA("TopK", 1, 1, 1, 2, 2, SY_ATTRS(a_topk_v1), infer_topk, SY_NO_INPLACE, 0),
    SY_SCHEMA("TopK", 10, 2, 2, 2, 2, SY_ATTRS(a_topk_v10), infer_topk, SY_NO_INPLACE, 0),
    SY_SCHEMA("TopK", 11, 2, 2, 2, 2, SY_ATTRS(a_topk_v11), infer_topk, SY_NO_INPLACE, 0),
};

#define NUM (SY_DT_MASK_NUMERIC | SY_DT_BIT(SY_DT_BOOL))
#define KR(op) SY_CPU_KERNEL(op, 1, 0, NUM, 0, prepare_reduce, run_reduce, sy_release_free)
static const sy_kernel_def kernels[] = {
    KR("ReduceSum"), KR("ReduceMean"), KR("ReduceMax"), KR("ReduceMin"), KR("ReduceProd"), KR("ReduceL1"),
    KR("ReduceL2"), KR("ReduceLogSum"), KR("ReduceLogSumExp"), KR("ReduceSumSquare"),
    SY_CPU_KERNEL("ArgMax", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_arg, run_arg, sy_release_free),
    SY_CPU_KERNEL("ArgMin", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_arg, run_arg, sy_release_free),
    SY_CPU_KERNEL("CumSum", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_cum, run_cum, sy_release_free),
    SY_CPU_KERNEL("CumProd", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_cum, run_cum, sy_release_free),
    SY_CPU_KERNEL("TopK", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_topk, run_topk, sy_release_free),
};

static sy_status *reduce_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void reduce_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_reduce",
    .version = "0.1.0",
    .description = "reductions, ArgMax/ArgMin, CumSum/CumProd, TopK (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = reduce_init,
    .fini = reduce_fini,
};

SY_PLUGIN_DEFINE(desc)
