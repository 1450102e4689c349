/*
 * tflite_tensor: TFLite data-movement, shape and (de)quantization operators
 * (domain "tflite"), cpu_ref kernels. Data movement works on any fixed-size
 * dtype (fp32, int8, int32, bool, ...) by element size; quantized tensors
 * keep their parameters (TFLite requires equal input/output parameters for
 * these ops, except CONCATENATION, which requantizes inputs whose parameters
 * differ from the output's, and QUANTIZE).
 *
 *   views:   RESHAPE SQUEEZE EXPAND_DIMS
 *   quant:   QUANTIZE (fp32->int8/uint8/int16, int8->int8 requantize)
 *            DEQUANTIZE (int8/uint8/int16/fp16 -> fp32, per-tensor or per-axis)
 *            CAST
 *   layout:  CONCATENATION PACK UNPACK SPLIT SPLIT_V TRANSPOSE TILE
 *            PAD PADV2 MIRROR_PAD SLICE STRIDED_SLICE REVERSE_V2
 *            REVERSE_SEQUENCE DEPTH_TO_SPACE SPACE_TO_DEPTH
 *   index:   GATHER GATHER_ND SCATTER_ND ONE_HOT
 *   shape:   SHAPE FILL
 *   resize:  RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR (fp32, int8; int8 bilinear
 *            as TFLite's ResizeBilinearInteger, 10-bit fixed point)
 */
#include "tfl_common.h"
#include "tfl_slice.h"
#include "tflk.h"

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)
#define OOM() H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory")

static size_t esz(const sy_tensor *t) { return sy_dt_size(t->dtype); }

static sy_status *const_ints(const sy_node *n, uint32_t i, const char *what, int64_t *out, size_t max, int64_t *count)
{
    return tfl_const_ints(H, n, i, what, out, max, count);
}

static sy_status *norm_axis(int64_t axis, int32_t rank, bool inclusive, const char *what, int32_t *out)
{
    return sy_norm_axis(H, axis, rank, inclusive, what, out);
}

/* ======================================================================== */
/* views: RESHAPE SQUEEZE EXPAND_DIMS                                        */
/* ======================================================================== */

static sy_status *infer_reshape(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t shape[SY_MAX_RANK], cnt = -1;
    const sy_tensor *st = H->node_num_inputs(n) > 1 ? H->node_input(n, 1) : NULL;
    if (st && st->data) {
        if (st->rank > 1)
            return ERR(SY_ERR_SHAPE, "shape input must be 1-D");
        SY_TRY(const_ints(n, 1, "shape", shape, SY_MAX_RANK, &cnt));
    } else if (st && !st->data && sy_attr_has(H, n, "new_shape", SY_ATTR_INTS) == false) {
        return ERR(SY_ERR_DYNAMIC_SHAPE, "shape input is not known before running");
    } else {
        cnt = sy_attr_ints_copy(H, n, "new_shape", shape, SY_MAX_RANK);
        if (cnt < 0)
            return ERR(SY_ERR_INVALID_ARGUMENT, "RESHAPE needs a shape input or the new_shape option");
        if (cnt > SY_MAX_RANK)
            return ERR(SY_ERR_SHAPE, "new_shape has rank %lld; at most %d", (long long)cnt, SY_MAX_RANK);
    }
    int64_t numel = sy_tensor_numel(x), known = 1;
    int32_t neg = -1;
    for (int64_t i = 0; i < cnt; i++) {
        if (shape[i] == -1) {
            if (neg >= 0)
                return ERR(SY_ERR_SHAPE, "shape has more than one -1");
            neg = (int32_t)i;
        } else if (shape[i] < 0) {
            return ERR(SY_ERR_SHAPE, "shape[%lld] = %lld is negative", (long long)i, (long long)shape[i]);
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            return ERR(SY_ERR_SHAPE, "shape's element count overflows int64 at shape[%lld] = %lld", (long long)i,
                       (long long)shape[i]);
        }
    }
    if (neg >= 0) {
        if (known == 0 || numel % known)
            return ERR(SY_ERR_SHAPE, "cannot infer -1: %lld elements into blocks of %lld", (long long)numel,
                       (long long)known);
        shape[neg] = numel / known;
        known = numel;
    }
    if (known != numel)
        return ERR(SY_ERR_SHAPE, "reshape of %lld elements into a shape of %lld elements", (long long)numel,
                   (long long)known);
    return H->node_set_output(n, 0, x->dtype, (int32_t)cnt, shape);
}

static sy_status *infer_squeeze(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t axes[SY_MAX_RANK];
    int64_t na = sy_attr_ints_copy(H, n, "squeeze_dims", axes, SY_MAX_RANK);
    bool drop[SY_MAX_RANK] = {false};
    if (na <= 0) {
        for (int32_t d = 0; d < x->rank; d++)
            drop[d] = x->dims[d] == 1;
    } else {
        if (na > SY_MAX_RANK)
            return ERR(SY_ERR_SHAPE, "too many squeeze_dims");
        for (int64_t i = 0; i < na; i++) {
            int32_t a;
            SY_TRY(norm_axis(axes[i], x->rank, false, "squeeze_dims", &a));
            if (x->dims[a] != 1)
                return ERR(SY_ERR_SHAPE, "squeeze_dims %lld has size %lld, not 1", (long long)axes[i],
                           (long long)x->dims[a]);
            drop[a] = true;
        }
    }
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (!drop[d])
            dims[r++] = x->dims[d];
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *infer_expand_dims(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t ax, cnt;
    SY_TRY(const_ints(n, 1, "axis", &ax, 1, &cnt));
    if (cnt != 1)
        return ERR(SY_ERR_SHAPE, "axis must hold one value");
    if (x->rank + 1 > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "output rank would exceed %d", SY_MAX_RANK);
    int32_t a;
    SY_TRY(norm_axis(ax, x->rank + 1, false, "axis", &a));
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0, s = 0; d < x->rank + 1; d++)
        dims[d] = d == a ? 1 : x->dims[s++];
    return H->node_set_output(n, 0, x->dtype, x->rank + 1, dims);
}

/* ======================================================================== */
/* QUANTIZE / DEQUANTIZE / CAST                                              */
/* ======================================================================== */

typedef struct q_state {
    int mode; /* 0 float->q, 1 q->q requantize */
    float scale;
    int32_t zp, lo, hi, in_zp, mult, shift;
} q_state;

static sy_status *infer_quantize(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    const sy_tensor *y = H->node_output(n, 0);
    /* the output dtype is the one the model declares */
    sy_dtype dt = y && y->dtype != SY_DT_UNDEFINED ? y->dtype : SY_DT_INT8;
    if (dt != SY_DT_INT8 && dt != SY_DT_UINT8 && dt != SY_DT_INT16)
        return ERR(SY_ERR_TYPE, "QUANTIZE output must be int8, uint8 or int16, got %s", sy_dt_name(dt));
    return sy_infer_like_input(H, n, 0, 0, dt);
}

static sy_status *prepare_quantize_impl(sy_node *n, void **state)
{
    q_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    if (!tfl_qparams(y, &s->scale, &s->zp))
        return ERR(SY_ERR_INVALID_ARGUMENT, "QUANTIZE output '%s' needs per-tensor quantization parameters",
                   y->name ? y->name : "");
    sy_q_dtype_range(y->dtype, &s->lo, &s->hi);
    if (x->dtype == SY_DT_FLOAT32) {
        s->mode = 0;
    } else if (x->dtype == SY_DT_INT8 || x->dtype == SY_DT_UINT8 || x->dtype == SY_DT_INT16) {
        float is;
        if (!tfl_qparams(x, &is, &s->in_zp))
            return ERR(SY_ERR_INVALID_ARGUMENT, "QUANTIZE (requantize) input needs quantization parameters");
        s->mode = 1;
        sy_q_quantize_multiplier((double)is / (double)s->scale, &s->mult, &s->shift);
    } else {
        return ERR(SY_ERR_TYPE, "QUANTIZE input must be float32 or a quantized integer, got %s", sy_dt_name(x->dtype));
    }
    return NULL;
}

static sy_status *run_quantize(void *state, const sy_kernel_io *io)
{
    const q_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    int64_t n = sy_tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int32_t v;
        if (s->mode == 0) {
            v = sy_q_quantize_f32(((const float *)x->data)[i], s->scale, s->zp, s->lo, s->hi);
        } else {
            int32_t q = (int32_t)sy_load_i64(x->data, x->dtype, (size_t)i) - s->in_zp;
            v = tfl_clampi(sy_q_mul_by_qm(q, s->mult, s->shift) + s->zp, s->lo, s->hi);
        }
        sy_store_i64(y->data, y->dtype, (size_t)i, v);
    }
    return NULL;
}

static sy_status *infer_dequantize(sy_node *n)
{
    return sy_infer_like_input(H, n, 0, 0, SY_DT_FLOAT32);
}

static sy_status *run_dequantize(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    float *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(x);
    if (x->dtype == SY_DT_FLOAT16) {
        sy_f16_to_f32_n(x->data, y, (size_t)n);
        return NULL;
    }
    const sy_quant_params *q = x->quant;
    if (!q || !q->scales || !q->count)
        return ERR(SY_ERR_INVALID_ARGUMENT, "DEQUANTIZE input '%s' has no quantization parameters",
                   x->name ? x->name : "");
    int64_t inner = 1, ch = 1;
    if (q->count > 1) {
        if (q->axis < 0 || q->axis >= x->rank || x->dims[q->axis] != (int64_t)q->count)
            return ERR(SY_ERR_SHAPE, "per-axis parameters do not match the input shape");
        inner = sy_dims_prod(x->dims, q->axis + 1, x->rank);
        ch = q->count;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t c = ch > 1 ? (i / inner) % ch : 0;
        int32_t zp = q->zero_points ? q->zero_points[c] : 0;
        y[i] = q->scales[c] * (float)((int32_t)sy_load_i64(x->data, x->dtype, (size_t)i) - zp);
    }
    return NULL;
}

static sy_dtype ttype_dtype(const char *s)
{
    static const struct {
        const char *n;
        sy_dtype d;
    } m[] = {{"FLOAT32", SY_DT_FLOAT32}, {"FLOAT16", SY_DT_FLOAT16}, {"INT32", SY_DT_INT32}, {"UINT8", SY_DT_UINT8},
             {"INT64", SY_DT_INT64},     {"BOOL", SY_DT_BOOL},       {"INT16", SY_DT_INT16}, {"INT8", SY_DT_INT8},
             {"FLOAT64", SY_DT_FLOAT64}, {"UINT64", SY_DT_UINT64},   {"UINT32", SY_DT_UINT32}, {"UINT16", SY_DT_UINT16}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(m[i].n, s))
            return m[i].d;
    return SY_DT_UNDEFINED;
}

static sy_status *infer_cast(sy_node *n)
{
    const sy_tensor *y = H->node_output(n, 0);
    char buf[16];
    sy_dtype dt = SY_DT_UNDEFINED;
    if (sy_attr_has(H, n, "out_data_type", SY_ATTR_STRING)) {
        sy_attr_string_or(H, n, "out_data_type", "FLOAT32", buf, sizeof buf);
        dt = ttype_dtype(buf);
    }
    /* converters often leave CastOptions empty: the declared output type decides */
    if (y && y->dtype != SY_DT_UNDEFINED && (dt == SY_DT_UNDEFINED || dt == SY_DT_FLOAT32))
        dt = y->dtype;
    if (dt == SY_DT_UNDEFINED)
        return ERR(SY_ERR_TYPE, "CAST output type is unknown");
    return sy_infer_like_input(H, n, 0, 0, dt);
}

static sy_status *run_cast(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (!sy_convert(x->data, x->dtype, y->data, y->dtype, (size_t)sy_tensor_numel(x)))
        return ERR(SY_ERR_TYPE, "CAST from %s to %s is not supported", sy_dt_name(x->dtype), sy_dt_name(y->dtype));
    return NULL;
}

/* ======================================================================== */
/* CONCATENATION / PACK / UNPACK / SPLIT / SPLIT_V                           */
/* ======================================================================== */

static sy_status *infer_concat(sy_node *n)
{
    const sy_tensor *x0;
    SY_TRY(sy_need_input(H, n, 0, &x0));
    int32_t axis;
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "axis", 0), x0->rank, false, "axis", &axis));
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x0->dims, sizeof dims);
    for (uint32_t i = 1; i < H->node_num_inputs(n); i++) {
        const sy_tensor *t;
        SY_TRY(sy_need_input(H, n, i, &t));
        if (t->rank != x0->rank || t->dtype != x0->dtype)
            return ERR(SY_ERR_SHAPE, "input %u has rank %d and dtype %s; input 0 has rank %d and %s", i, t->rank,
                       sy_dt_name(t->dtype), x0->rank, sy_dt_name(x0->dtype));
        for (int32_t d = 0; d < t->rank; d++)
            if (d != axis && t->dims[d] != x0->dims[d])
                return ERR(SY_ERR_SHAPE, "input %u differs from input 0 in dimension %d (%lld vs %lld)", i, d,
                           (long long)t->dims[d], (long long)x0->dims[d]);
        dims[axis] += t->dims[axis];
    }
    return H->node_set_output(n, 0, x0->dtype, x0->rank, dims);
}

typedef struct cat_state {
    int32_t axis;
    tfl_act act;
    bool requant;
} cat_state;

static sy_status *prepare_concat_impl(sy_node *n, void **state)
{
    cat_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x0 = H->node_input(n, 0), *y = H->node_output(n, 0);
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "axis", 0), x0->rank, false, "axis", &s->axis));
    char act[32];
    sy_attr_string_or(H, n, "fused_activation_function", "NONE", act, sizeof act);
    if (!tfl_act_from_name(act, &s->act))
        return ERR(SY_ERR_INVALID_ARGUMENT, "unknown fused_activation_function '%s'", act);
    if (y->dtype == SY_DT_INT8) {
        float ys, xs;
        int32_t yz, xz;
        if (!tfl_qparams(y, &ys, &yz))
            return ERR(SY_ERR_INVALID_ARGUMENT, "int8 CONCATENATION output needs quantization parameters");
        for (uint32_t i = 0; i < H->node_num_inputs(n); i++) {
            const sy_tensor *t = H->node_input(n, i);
            if (!tfl_qparams(t, &xs, &xz))
                return ERR(SY_ERR_INVALID_ARGUMENT, "int8 CONCATENATION input %u needs quantization parameters", i);
            if (xs != ys || xz != yz)
                s->requant = true;
        }
    } else if (y->dtype != SY_DT_FLOAT32 && s->act.kind == 0 && (s->act.lo != -INFINITY || s->act.hi != INFINITY)) {
        return ERR(SY_ERR_UNSUPPORTED, "fused activation on %s CONCATENATION", sy_dt_name(y->dtype));
    }
    return NULL;
}

static sy_status *run_concat(void *state, const sy_kernel_io *io)
{
    const cat_state *s = state;
    sy_tensor *y = io->outputs[0];
    size_t es = esz(y);
    int64_t outer = sy_dims_prod(y->dims, 0, s->axis), inner = sy_dims_prod(y->dims, s->axis + 1, y->rank);
    int64_t y_row = y->dims[s->axis] * inner, off = 0;
    float ys = 0;
    int32_t yz = 0;
    if (s->requant)
        tfl_qparams(y, &ys, &yz);
    for (uint32_t i = 0; i < io->n_inputs; i++) {
        const sy_tensor *x = io->inputs[i];
        int64_t x_row = x->dims[s->axis] * inner;
        float xs = 0;
        int32_t xz = 0;
        bool rq = s->requant && tfl_qparams(x, &xs, &xz) && (xs != ys || xz != yz);
        for (int64_t o = 0; o < outer; o++) {
            char *dst = (char *)y->data + (size_t)(o * y_row + off) * es;
            const char *src = (const char *)x->data + (size_t)(o * x_row) * es;
            if (!rq) {
                memcpy(dst, src, (size_t)x_row * es);
            } else {
                float scale = xs / ys, bias = -(float)xz * scale;
                for (int64_t k = 0; k < x_row; k++) {
                    float v = roundf((float)((const int8_t *)src)[k] * scale + bias) + (float)yz;
                    ((int8_t *)dst)[k] = (int8_t)(v < -128.0f ? -128 : (v > 127.0f ? 127 : (int32_t)v));
                }
            }
        }
        off += x_row;
    }
    if (y->dtype == SY_DT_FLOAT32 && !(s->act.kind == 0 && s->act.lo == -INFINITY && s->act.hi == INFINITY)) {
        float *yd = y->data;
        for (int64_t i = 0, n = sy_tensor_numel(y); i < n; i++)
            yd[i] = tfl_act_apply(&s->act, yd[i]);
    }
    return NULL;
}

static sy_status *infer_pack(sy_node *n)
{
    const sy_tensor *x0;
    SY_TRY(sy_need_input(H, n, 0, &x0));
    uint32_t cnt = H->node_num_inputs(n);
    int64_t vc = sy_attr_int_or(H, n, "values_count", cnt);
    if (vc != (int64_t)cnt)
        return ERR(SY_ERR_INVALID_ARGUMENT, "values_count %lld differs from the %u inputs", (long long)vc, cnt);
    if (x0->rank + 1 > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "output rank would exceed %d", SY_MAX_RANK);
    int32_t axis;
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "axis", 0), x0->rank + 1, false, "axis", &axis));
    for (uint32_t i = 1; i < cnt; i++) {
        const sy_tensor *t;
        SY_TRY(sy_need_input(H, n, i, &t));
        if (!sy_shape_equal(t->rank, t->dims, x0->rank, x0->dims) || t->dtype != x0->dtype)
            return ERR(SY_ERR_SHAPE, "PACK input %u differs in shape or dtype from input 0", i);
    }
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0, s = 0; d <= x0->rank; d++)
        dims[d] = d == axis ? (int64_t)cnt : x0->dims[s++];
    return H->node_set_output(n, 0, x0->dtype, x0->rank + 1, dims);
}

typedef struct pack_state {
    int32_t axis;
} pack_state;

/* the axis comes from the attribute: it cannot be recovered from the
 * shapes, which match several axes when dims equal the input count */
static sy_status *prepare_pack_impl(sy_node *n, void **state)
{
    pack_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x0 = H->node_input(n, 0);
    return norm_axis(sy_attr_int_or(H, n, "axis", 0), x0->rank + 1, false, "axis", &s->axis);
}

static sy_status *run_pack(void *state, const sy_kernel_io *io)
{
    sy_tensor *y = io->outputs[0];
    const sy_tensor *x0 = io->inputs[0];
    int32_t axis = ((const pack_state *)state)->axis;
    size_t es = esz(y);
    int64_t outer = sy_dims_prod(x0->dims, 0, axis), inner = sy_dims_prod(x0->dims, axis, x0->rank);
    for (uint32_t i = 0; i < io->n_inputs; i++)
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)y->data + (size_t)((o * io->n_inputs + i) * inner) * es,
                   (const char *)io->inputs[i]->data + (size_t)(o * inner) * es, (size_t)inner * es);
    return NULL;
}

typedef struct split_state {
    int32_t axis;
} split_state;

static sy_status *infer_unpack(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t axis;
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    int64_t num = sy_attr_int_or(H, n, "num", x->dims[axis]);
    if (num != x->dims[axis] || (int64_t)H->node_num_outputs(n) != num)
        return ERR(SY_ERR_SHAPE, "UNPACK num %lld must equal shape[axis] = %lld and the output count %u",
                   (long long)num, (long long)x->dims[axis], H->node_num_outputs(n));
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0, s = 0; d < x->rank; d++)
        if (d != axis)
            dims[s++] = x->dims[d];
    for (uint32_t o = 0; o < H->node_num_outputs(n); o++)
        SY_TRY(H->node_set_output(n, o, x->dtype, x->rank - 1, dims));
    return NULL;
}

/* generic split of input `xi` along `axis` into the outputs' sizes */
static void split_run(const sy_tensor *x, int32_t axis, const sy_kernel_io *io)
{
    size_t es = esz(x);
    int64_t outer = sy_dims_prod(x->dims, 0, axis), inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    int64_t x_row = x->dims[axis] * inner, off = 0;
    for (uint32_t o = 0; o < io->n_outputs; o++) {
        sy_tensor *y = io->outputs[o];
        if (!y)
            continue;
        int64_t len = (y->rank == x->rank ? y->dims[axis] : 1) * inner;
        for (int64_t r = 0; r < outer; r++)
            memcpy((char *)y->data + (size_t)(r * len) * es, (const char *)x->data + (size_t)(r * x_row + off) * es,
                   (size_t)len * es);
        off += len;
    }
}

static sy_status *prepare_unpack_impl(sy_node *n, void **state)
{
    split_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x = H->node_input(n, 0);
    return norm_axis(sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &s->axis);
}

static sy_status *run_unpack(void *state, const sy_kernel_io *io)
{
    split_run(io->inputs[0], ((const split_state *)state)->axis, io);
    return NULL;
}

static sy_status *infer_split(sy_node *n)
{
    bool v = !strcmp(H->node_op(n), "SPLIT_V");
    /* SPLIT: (axis, value); SPLIT_V: (value, size_splits, axis) */
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, v ? 0 : 1, &x));
    int64_t ax, cnt;
    SY_TRY(const_ints(n, v ? 2 : 0, "axis", &ax, 1, &cnt));
    if (cnt != 1)
        return ERR(SY_ERR_SHAPE, "axis must be a scalar");
    int32_t axis;
    SY_TRY(norm_axis(ax, x->rank, false, "axis", &axis));
    uint32_t no = H->node_num_outputs(n);
    int64_t sizes[256];
    if (no > 256)
        return ERR(SY_ERR_UNSUPPORTED, "more than 256 outputs");
    if (!v) {
        int64_t ns = sy_attr_int_or(H, n, "num_splits", no);
        if (ns != (int64_t)no || ns <= 0 || x->dims[axis] % ns)
            return ERR(SY_ERR_SHAPE, "num_splits %lld must equal the %u outputs and divide dimension %d (%lld)",
                       (long long)ns, no, axis, (long long)x->dims[axis]);
        for (uint32_t i = 0; i < no; i++)
            sizes[i] = x->dims[axis] / ns;
    } else {
        int64_t c2;
        SY_TRY(const_ints(n, 1, "size_splits", sizes, 256, &c2));
        if (c2 != (int64_t)no)
            return ERR(SY_ERR_SHAPE, "size_splits has %lld values for %u outputs", (long long)c2, no);
        int64_t sum = 0, neg = -1;
        for (uint32_t i = 0; i < no; i++) {
            if (sizes[i] == -1 && neg < 0)
                neg = i;
            else if (sizes[i] < 0)
                return ERR(SY_ERR_SHAPE, "size_splits[%u] = %lld", i, (long long)sizes[i]);
            else
                sum += sizes[i];
        }
        if (neg >= 0)
            sizes[neg] = x->dims[axis] - sum, sum = x->dims[axis];
        if (sum != x->dims[axis] || (neg >= 0 && sizes[neg] < 0))
            return ERR(SY_ERR_SHAPE, "size_splits sum to %lld; the axis has %lld", (long long)sum,
                       (long long)x->dims[axis]);
    }
    int64_t dims[SY_MAX_RANK];
    memcpy(dims, x->dims, sizeof dims);
    for (uint32_t i = 0; i < no; i++) {
        dims[axis] = sizes[i];
        SY_TRY(H->node_set_output(n, i, x->dtype, x->rank, dims));
    }
    return NULL;
}

static sy_status *run_split(void *state, const sy_kernel_io *io)
{
    (void)state;
    bool v = io->n_inputs == 3;
    const sy_tensor *x = io->inputs[v ? 0 : 1], *at = io->inputs[v ? 2 : 0];
    int64_t ax = sy_load_i64(at->data, at->dtype, 0);
    int32_t axis = (int32_t)(ax < 0 ? ax + x->rank : ax);
    split_run(x, axis, io);
    return NULL;
}

/* ======================================================================== */
/* TRANSPOSE / TILE / REVERSE_V2 / SLICE / STRIDED_SLICE                     */
/* ======================================================================== */

static sy_status *get_perm(const sy_node *n, const sy_tensor *x, int32_t *perm)
{
    int64_t p[SY_MAX_RANK], cnt;
    SY_TRY(const_ints(n, 1, "perm", p, SY_MAX_RANK, &cnt));
    if (cnt != x->rank)
        return ERR(SY_ERR_SHAPE, "perm has %lld values for rank %d", (long long)cnt, x->rank);
    bool seen[SY_MAX_RANK] = {false};
    for (int32_t i = 0; i < x->rank; i++) {
        int32_t a;
        SY_TRY(norm_axis(p[i], x->rank, false, "perm", &a));
        if (seen[a])
            return ERR(SY_ERR_SHAPE, "perm repeats axis %d", a);
        seen[a] = true;
        perm[i] = a;
    }
    return NULL;
}

static sy_status *infer_transpose(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int32_t perm[SY_MAX_RANK];
    SY_TRY(get_perm(n, x, perm));
    int64_t dims[SY_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++)
        dims[i] = x->dims[perm[i]];
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *run_transpose(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0], *pt = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    int64_t st[SY_MAX_RANK], ps[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, st);
    for (int32_t i = 0; i < x->rank; i++) {
        int64_t a = sy_load_i64(pt->data, pt->dtype, (size_t)i);
        ps[i] = st[a < 0 ? a + x->rank : a];
    }
    sy_copy_strided(y->data, x->data, y->rank, y->dims, ps, esz(x));
    return NULL;
}

static sy_status *infer_tile(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t m[SY_MAX_RANK], cnt;
    SY_TRY(const_ints(n, 1, "multiples", m, SY_MAX_RANK, &cnt));
    if (cnt != x->rank)
        return ERR(SY_ERR_SHAPE, "multiples has %lld values for rank %d", (long long)cnt, x->rank);
    int64_t dims[SY_MAX_RANK];
    for (int32_t i = 0; i < x->rank; i++) {
        if (m[i] < 0)
            return ERR(SY_ERR_SHAPE, "multiples[%d] = %lld is negative", i, (long long)m[i]);
        dims[i] = x->dims[i] * m[i];
    }
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

static sy_status *run_tile(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(x);
    int64_t total = sy_tensor_numel(y), xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, xs);
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int32_t d = 0; d < y->rank; d++)
            off += (idx[d] % x->dims[d]) * xs[d];
        memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)off * es, es);
        sy_index_next(y->rank, y->dims, idx);
    }
    return NULL;
}

static sy_status *run_reverse(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0], *at = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    int64_t st[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, st);
    int64_t start = 0;
    for (int64_t i = 0, n = sy_tensor_numel(at); i < n; i++) {
        int64_t a = sy_load_i64(at->data, at->dtype, (size_t)i);
        if (a < 0)
            a += x->rank;
        if (a < 0 || a >= x->rank)
            return ERR(SY_ERR_SHAPE, "REVERSE_V2 axis out of range");
        if (st[a] > 0) {
            start += (x->dims[a] - 1) * st[a];
            st[a] = -st[a];
        }
    }
    if (sy_tensor_numel(x) == 0)
        return NULL;
    sy_copy_strided(y->data, (const char *)x->data + (size_t)start * esz(x), x->rank, x->dims, st, esz(x));
    return NULL;
}

static sy_status *infer_reverse(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t a[SY_MAX_RANK], cnt;
    SY_TRY(const_ints(n, 1, "axis", a, SY_MAX_RANK, &cnt));
    for (int64_t i = 0; i < cnt; i++) {
        int32_t ax;
        SY_TRY(norm_axis(a[i], x->rank, false, "axis", &ax));
    }
    return sy_infer_like_input(H, n, 0, 0, SY_DT_UNDEFINED);
}

static sy_status *infer_slice(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t b[SY_MAX_RANK], s[SY_MAX_RANK];
    SY_TRY(tfl_slice_params(H, n, x, b, s));
    return H->node_set_output(n, 0, x->dtype, x->rank, s);
}

static sy_status *infer_strided_slice(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    tfl_ss_plan p;
    SY_TRY(tfl_ss_make(H, n, x, &p));
    return H->node_set_output(n, 0, x->dtype, p.out_rank, p.out_dims);
}

typedef struct slice_state {
    int64_t start[SY_MAX_RANK], step[SY_MAX_RANK], len[SY_MAX_RANK];
    int32_t rank;
} slice_state;

static sy_status *prepare_slice_impl(sy_node *n, void **state)
{
    slice_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x = H->node_input(n, 0);
    s->rank = x->rank;
    if (!strcmp(H->node_op(n), "SLICE")) {
        SY_TRY(tfl_slice_params(H, n, x, s->start, s->len));
        for (int32_t d = 0; d < x->rank; d++)
            s->step[d] = 1;
        return NULL;
    }
    tfl_ss_plan p;
    SY_TRY(tfl_ss_make(H, n, x, &p));
    memcpy(s->start, p.start, sizeof s->start);
    memcpy(s->step, p.step, sizeof s->step);
    memcpy(s->len, p.len, sizeof s->len);
    return NULL;
}

static sy_status *run_slice(void *state, const sy_kernel_io *io)
{
    const slice_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (sy_numel(s->rank, s->len) == 0)
        return NULL;
    int64_t st[SY_MAX_RANK], ps[SY_MAX_RANK], off = 0;
    sy_strides(x->rank, x->dims, st);
    for (int32_t d = 0; d < s->rank; d++) {
        off += s->start[d] * st[d];
        ps[d] = s->step[d] * st[d];
    }
    sy_copy_strided(y->data, (const char *)x->data + (size_t)off * esz(x), s->rank, s->len, ps, esz(x));
    return NULL;
}

/* ======================================================================== */
/* PAD / PADV2 / MIRROR_PAD                                                  */
/* ======================================================================== */

static sy_status *get_pads(const sy_node *n, const sy_tensor *x, int64_t *pads)
{
    int64_t cnt;
    SY_TRY(const_ints(n, 1, "paddings", pads, 2 * SY_MAX_RANK, &cnt));
    if (cnt != 2 * x->rank)
        return ERR(SY_ERR_SHAPE, "paddings must be [%d, 2], got %lld values", x->rank, (long long)cnt);
    for (int64_t i = 0; i < cnt; i++)
        if (pads[i] < 0)
            return ERR(SY_ERR_SHAPE, "paddings[%lld] = %lld is negative", (long long)i, (long long)pads[i]);
    return NULL;
}

static sy_status *infer_pad(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t pads[2 * SY_MAX_RANK], dims[SY_MAX_RANK];
    SY_TRY(get_pads(n, x, pads));
    bool mirror = !strcmp(H->node_op(n), "MIRROR_PAD");
    bool sym = mirror && sy_attr_string_is(H, n, "mode", "REFLECT", "SYMMETRIC");
    for (int32_t d = 0; d < x->rank; d++) {
        if (mirror) {
            int64_t lim = sym ? x->dims[d] : x->dims[d] - 1;
            if (pads[2 * d] > lim || pads[2 * d + 1] > lim)
                return ERR(SY_ERR_SHAPE, "MIRROR_PAD %s padding of dimension %d is larger than %lld",
                           sym ? "SYMMETRIC" : "REFLECT", d, (long long)lim);
        }
        dims[d] = x->dims[d] + pads[2 * d] + pads[2 * d + 1];
    }
    return H->node_set_output(n, 0, x->dtype, x->rank, dims);
}

typedef struct pad_state {
    int64_t pads[2 * SY_MAX_RANK];
    int mode; /* 0 constant, 1 reflect, 2 symmetric */
    unsigned char fill[16];
} pad_state;

static sy_status *prepare_pad_impl(sy_node *n, void **state)
{
    pad_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    SY_TRY(get_pads(n, x, s->pads));
    const char *op = H->node_op(n);
    if (!strcmp(op, "MIRROR_PAD")) {
        s->mode = sy_attr_string_is(H, n, "mode", "REFLECT", "SYMMETRIC") ? 2 : 1;
        return NULL;
    }
    if (!strcmp(op, "PADV2") && H->node_num_inputs(n) > 2 && H->node_input(n, 2)) {
        const sy_tensor *cv = H->node_input(n, 2);
        if (!cv->data || cv->dtype != x->dtype || sy_tensor_numel(cv) != 1)
            return ERR(SY_ERR_INVALID_ARGUMENT, "constant_values must be a constant scalar of the input's dtype %s",
                       sy_dt_name(x->dtype));
        memcpy(s->fill, cv->data, esz(x));
        return NULL;
    }
    /* PAD fills with real 0: the output zero point when quantized */
    float sc;
    int32_t zp;
    if (tfl_qparams(y, &sc, &zp) && zp && sy_dt_is_int(y->dtype))
        sy_store_i64(s->fill, y->dtype, 0, zp);
    return NULL;
}

static sy_status *run_pad(void *state, const sy_kernel_io *io)
{
    const pad_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(x);
    int64_t total = sy_tensor_numel(y), xs[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, xs);
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        bool inside = true;
        for (int32_t d = 0; d < y->rank && inside; d++) {
            int64_t c = idx[d] - s->pads[2 * d], dim = x->dims[d];
            if (c < 0 || c >= dim) {
                if (s->mode == 0) {
                    inside = false;
                    break;
                }
                if (c < 0)
                    c = s->mode == 1 ? -c : -c - 1;
                else
                    c = s->mode == 1 ? 2 * dim - 2 - c : 2 * dim - 1 - c;
            }
            off += c * xs[d];
        }
        char *dst = (char *)y->data + (size_t)i * es;
        if (inside)
            memcpy(dst, (const char *)x->data + (size_t)off * es, es);
        else
            memcpy(dst, s->fill, es);
        sy_index_next(y->rank, y->dims, idx);
    }
    return NULL;
}

/* ======================================================================== */
/* REVERSE_SEQUENCE / DEPTH_TO_SPACE / SPACE_TO_DEPTH                        */
/* ======================================================================== */

static sy_status *infer_revseq(sy_node *n)
{
    const sy_tensor *x, *sl;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sl));
    int32_t sa, ba;
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "seq_dim", 0), x->rank, false, "seq_dim", &sa));
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "batch_dim", 0), x->rank, false, "batch_dim", &ba));
    if (sa == ba)
        return ERR(SY_ERR_INVALID_ARGUMENT, "seq_dim and batch_dim must differ (both %d)", sa);
    if (sl->rank != 1 || sl->dims[0] != x->dims[ba])
        return ERR(SY_ERR_SHAPE, "seq_lengths must be 1-D of the batch size %lld", (long long)x->dims[ba]);
    return sy_infer_like_input(H, n, 0, 0, SY_DT_UNDEFINED);
}

typedef struct rs_state {
    int32_t sa, ba;
} rs_state;

static sy_status *prepare_revseq_impl(sy_node *n, void **state)
{
    rs_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    const sy_tensor *x = H->node_input(n, 0);
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "seq_dim", 0), x->rank, false, "seq_dim", &s->sa));
    return norm_axis(sy_attr_int_or(H, n, "batch_dim", 0), x->rank, false, "batch_dim", &s->ba);
}

static sy_status *run_revseq_real(void *state, const sy_kernel_io *io)
{
    const rs_state *s = state;
    const sy_tensor *x = io->inputs[0], *sl = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(x);
    int64_t total = sy_tensor_numel(x), st[SY_MAX_RANK], idx[SY_MAX_RANK] = {0};
    sy_strides(x->rank, x->dims, st);
    for (int64_t i = 0; i < total; i++) {
        int64_t len = sy_load_i64(sl->data, sl->dtype, (size_t)idx[s->ba]);
        if (len < 0 || len > x->dims[s->sa])
            return ERR(SY_ERR_RUNTIME, "seq_lengths[%lld] = %lld is outside [0, %lld]", (long long)idx[s->ba],
                       (long long)len, (long long)x->dims[s->sa]);
        int64_t src = i;
        if (idx[s->sa] < len)
            src = i + (len - 1 - 2 * idx[s->sa]) * st[s->sa];
        memcpy((char *)y->data + (size_t)i * es, (const char *)x->data + (size_t)src * es, es);
        sy_index_next(x->rank, x->dims, idx);
    }
    return NULL;
}

static sy_status *infer_d2s(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "input must be 4-D NHWC");
    int64_t b = sy_attr_int_or(H, n, "block_size", 0);
    if (b < 2)
        return ERR(SY_ERR_INVALID_ARGUMENT, "block_size must be >= 2, got %lld", (long long)b);
    int64_t dims[4];
    if (!strcmp(H->node_op(n), "DEPTH_TO_SPACE")) {
        if (x->dims[3] % (b * b))
            return ERR(SY_ERR_SHAPE, "channels %lld are not a multiple of block_size^2 = %lld", (long long)x->dims[3],
                       (long long)(b * b));
        int64_t d[4] = {x->dims[0], x->dims[1] * b, x->dims[2] * b, x->dims[3] / (b * b)};
        memcpy(dims, d, sizeof d);
    } else {
        if (x->dims[1] % b || x->dims[2] % b)
            return ERR(SY_ERR_SHAPE, "height %lld and width %lld must be multiples of block_size %lld",
                       (long long)x->dims[1], (long long)x->dims[2], (long long)b);
        int64_t d[4] = {x->dims[0], x->dims[1] / b, x->dims[2] / b, x->dims[3] * b * b};
        memcpy(dims, d, sizeof d);
    }
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

static sy_status *run_d2s(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(x);
    bool d2s = y->dims[1] > x->dims[1];
    /* DEPTH_TO_SPACE: y[n, h*b+i, w*b+j, c] = x[n, h, w, (i*b+j)*C + c] (TF DCR order) */
    const sy_tensor *big = d2s ? y : x, *small = d2s ? x : y;
    int64_t b = big->dims[1] / small->dims[1];
    int64_t N = small->dims[0], SH = small->dims[1], SW = small->dims[2], C = big->dims[3];
    for (int64_t bn = 0; bn < N; bn++)
        for (int64_t h = 0; h < SH; h++)
            for (int64_t w = 0; w < SW; w++)
                for (int64_t i = 0; i < b; i++)
                    for (int64_t j = 0; j < b; j++) {
                        int64_t so = ((bn * SH + h) * SW + w) * small->dims[3] + (i * b + j) * C;
                        int64_t bo = ((bn * big->dims[1] + h * b + i) * big->dims[2] + w * b + j) * C;
                        const char *src = (const char *)x->data + (size_t)(d2s ? so : bo) * es;
                        char *dst = (char *)y->data + (size_t)(d2s ? bo : so) * es;
                        memcpy(dst, src, (size_t)C * es);
                    }
    return NULL;
}

/* ======================================================================== */
/* GATHER / GATHER_ND / SCATTER_ND / ONE_HOT                                  */
/* ======================================================================== */

static sy_status *infer_gather(sy_node *n)
{
    const sy_tensor *x, *ix;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &ix));
    if (sy_attr_int_or(H, n, "batch_dims", 0) != 0)
        return ERR(SY_ERR_UNSUPPORTED, "GATHER batch_dims must be 0");
    if (ix->dtype != SY_DT_INT32 && ix->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "indices must be int32 or int64");
    int32_t axis;
    SY_TRY(norm_axis(sy_attr_int_or(H, n, "axis", 0), x->rank, false, "axis", &axis));
    if (x->rank - 1 + ix->rank > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "output rank exceeds %d", SY_MAX_RANK);
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < axis; d++)
        dims[r++] = x->dims[d];
    for (int32_t d = 0; d < ix->rank; d++)
        dims[r++] = ix->dims[d];
    for (int32_t d = axis + 1; d < x->rank; d++)
        dims[r++] = x->dims[d];
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *prepare_gather_impl(sy_node *n, void **state)
{
    split_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    return norm_axis(sy_attr_int_or(H, n, "axis", 0), H->node_input(n, 0)->rank, false, "axis", &s->axis);
}

static sy_status *run_gather(void *state, const sy_kernel_io *io)
{
    int32_t axis = ((const split_state *)state)->axis;
    const sy_tensor *x = io->inputs[0], *ix = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(x);
    int64_t outer = sy_dims_prod(x->dims, 0, axis), inner = sy_dims_prod(x->dims, axis + 1, x->rank);
    int64_t ni = sy_tensor_numel(ix), dim = x->dims[axis];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < ni; k++) {
            int64_t v = sy_load_i64(ix->data, ix->dtype, (size_t)k);
            if (v < 0 || v >= dim)
                return ERR(SY_ERR_RUNTIME, "GATHER index %lld is out of range [0, %lld)", (long long)v, (long long)dim);
            memcpy((char *)y->data + (size_t)((o * ni + k) * inner) * es,
                   (const char *)x->data + (size_t)((o * dim + v) * inner) * es, (size_t)inner * es);
        }
    return NULL;
}

static sy_status *infer_gather_nd(sy_node *n)
{
    const sy_tensor *x, *ix;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &ix));
    if (ix->dtype != SY_DT_INT32 && ix->dtype != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "indices must be int32 or int64");
    if (ix->rank < 1)
        return ERR(SY_ERR_SHAPE, "indices must have rank >= 1");
    int64_t D = ix->dims[ix->rank - 1];
    if (D < 1 || D > x->rank)
        return ERR(SY_ERR_SHAPE, "indices' last dimension %lld must be in [1, %d]", (long long)D, x->rank);
    int64_t dims[SY_MAX_RANK];
    int32_t r = 0;
    if (ix->rank - 1 + x->rank - D > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "output rank exceeds %d", SY_MAX_RANK);
    for (int32_t d = 0; d < ix->rank - 1; d++)
        dims[r++] = ix->dims[d];
    for (int32_t d = (int32_t)D; d < x->rank; d++)
        dims[r++] = x->dims[d];
    return H->node_set_output(n, 0, x->dtype, r, dims);
}

static sy_status *run_gather_nd(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0], *ix = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(x);
    int64_t D = ix->dims[ix->rank - 1], nt = D ? sy_tensor_numel(ix) / D : 0;
    int64_t inner = sy_dims_prod(x->dims, (int32_t)D, x->rank), st[SY_MAX_RANK];
    sy_strides(x->rank, x->dims, st);
    for (int64_t t = 0; t < nt; t++) {
        int64_t off = 0;
        for (int64_t d = 0; d < D; d++) {
            int64_t v = sy_load_i64(ix->data, ix->dtype, (size_t)(t * D + d));
            if (v < 0 || v >= x->dims[d])
                return ERR(SY_ERR_RUNTIME, "GATHER_ND index %lld is out of range for dimension %lld of size %lld",
                           (long long)v, (long long)d, (long long)x->dims[d]);
            off += v * st[d];
        }
        memcpy((char *)y->data + (size_t)(t * inner) * es, (const char *)x->data + (size_t)off * es,
               (size_t)inner * es);
    }
    return NULL;
}

static sy_status *infer_scatter_nd(sy_node *n)
{
    const sy_tensor *ix, *up;
    SY_TRY(sy_need_input(H, n, 0, &ix));
    SY_TRY(sy_need_input(H, n, 1, &up));
    int64_t shape[SY_MAX_RANK], cnt;
    SY_TRY(const_ints(n, 2, "shape", shape, SY_MAX_RANK, &cnt));
    if (ix->dtype != SY_DT_INT32)
        return ERR(SY_ERR_TYPE, "SCATTER_ND indices must be int32");
    if (ix->rank < 1)
        return ERR(SY_ERR_SHAPE, "indices must have rank >= 1");
    int64_t K = ix->dims[ix->rank - 1];
    if (K < 1 || K > cnt)
        return ERR(SY_ERR_SHAPE, "indices' last dimension %lld must be in [1, %lld]", (long long)K, (long long)cnt);
    /* updates = indices.shape[:-1] + shape[K:] */
    int32_t ur = (int32_t)(ix->rank - 1 + cnt - K);
    bool ok = up->rank == ur;
    for (int32_t d = 0; ok && d < ix->rank - 1; d++)
        ok = up->dims[d] == ix->dims[d];
    for (int64_t d = K; ok && d < cnt; d++)
        ok = up->dims[ix->rank - 1 + d - K] == shape[d];
    if (!ok)
        return ERR(SY_ERR_SHAPE, "updates shape must be indices.shape[:-1] + shape[%lld:]", (long long)K);
    return H->node_set_output(n, 0, up->dtype, (int32_t)cnt, shape);
}

static sy_status *run_scatter_nd(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *ix = io->inputs[0], *up = io->inputs[1];
    sy_tensor *y = io->outputs[0];
    int64_t K = ix->dims[ix->rank - 1], nt = K ? sy_tensor_numel(ix) / K : 0;
    int64_t inner = sy_dims_prod(y->dims, (int32_t)K, y->rank), st[SY_MAX_RANK], total = sy_tensor_numel(y);
    sy_strides(y->rank, y->dims, st);
    memset(y->data, 0, y->nbytes);
    for (int64_t t = 0; t < nt; t++) {
        int64_t off = 0;
        for (int64_t d = 0; d < K; d++) {
            int64_t v = sy_load_i64(ix->data, ix->dtype, (size_t)(t * K + d));
            if (v < 0 || v >= y->dims[d])
                return ERR(SY_ERR_RUNTIME, "SCATTER_ND index %lld is out of range for dimension %lld of size %lld",
                           (long long)v, (long long)d, (long long)y->dims[d]);
            off += v * st[d];
        }
        for (int64_t k = 0; k < inner && off + k < total; k++) {
            size_t o = (size_t)(off + k), u = (size_t)(t * inner + k);
            if (y->dtype == SY_DT_FLOAT32)
                ((float *)y->data)[o] += ((const float *)up->data)[u];
            else
                sy_store_i64(y->data, y->dtype, o,
                             sy_load_i64(y->data, y->dtype, o) + sy_load_i64(up->data, up->dtype, u));
        }
    }
    return NULL;
}

static sy_status *infer_one_hot(sy_node *n)
{
    const sy_tensor *ix, *on;
    SY_TRY(sy_need_input(H, n, 0, &ix));
    SY_TRY(sy_need_input(H, n, 2, &on));
    int64_t depth, cnt;
    SY_TRY(const_ints(n, 1, "depth", &depth, 1, &cnt));
    if (depth < 0)
        return ERR(SY_ERR_SHAPE, "depth %lld is negative", (long long)depth);
    if (ix->rank + 1 > SY_MAX_RANK)
        return ERR(SY_ERR_SHAPE, "output rank exceeds %d", SY_MAX_RANK);
    int64_t ax = sy_attr_int_or(H, n, "axis", -1);
    int32_t axis = ax == -1 ? ix->rank : (int32_t)ax;
    if (axis < 0 || axis > ix->rank)
        return ERR(SY_ERR_SHAPE, "axis %lld must be -1 or in [0, %d]", (long long)ax, ix->rank);
    int64_t dims[SY_MAX_RANK];
    for (int32_t d = 0, s = 0; d <= ix->rank; d++)
        dims[d] = d == axis ? depth : ix->dims[s++];
    return H->node_set_output(n, 0, on->dtype, ix->rank + 1, dims);
}

static sy_status *run_one_hot(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *ix = io->inputs[0], *on = io->inputs[2], *off = io->inputs[3];
    sy_tensor *y = io->outputs[0];
    size_t es = esz(y);
    int64_t depth = sy_load_i64(io->inputs[1]->data, io->inputs[1]->dtype, 0);
    /* axis: the output dim equal to depth that is not an index dim */
    int32_t axis = ix->rank;
    for (int32_t a = 0; a <= ix->rank; a++) {
        bool ok = y->dims[a] == depth;
        for (int32_t d = 0, s = 0; ok && d <= ix->rank; d++)
            if (d != a && y->dims[d] != ix->dims[s++])
                ok = false;
        if (ok) {
            axis = a;
            break;
        }
    }
    int64_t outer = sy_dims_prod(ix->dims, 0, axis), inner = sy_dims_prod(ix->dims, axis, ix->rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t dd = 0; dd < depth; dd++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t v = sy_load_i64(ix->data, ix->dtype, (size_t)(o * inner + i));
                memcpy((char *)y->data + (size_t)((o * depth + dd) * inner + i) * es,
                       v == dd ? on->data : off->data, es);
            }
    return NULL;
}

/* ======================================================================== */
/* SHAPE / FILL                                                              */
/* ======================================================================== */

static sy_status *infer_shape(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    char buf[16];
    sy_attr_string_or(H, n, "out_type", "INT32", buf, sizeof buf);
    sy_dtype dt = ttype_dtype(buf);
    if (dt != SY_DT_INT32 && dt != SY_DT_INT64)
        return ERR(SY_ERR_TYPE, "SHAPE out_type must be INT32 or INT64, got %s", buf);
    int64_t d = x->rank;
    return H->node_set_output(n, 0, dt, 1, &d);
}

static sy_status *run_shape(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    for (int32_t d = 0; d < x->rank; d++)
        sy_store_i64(y->data, y->dtype, (size_t)d, x->dims[d]);
    return NULL;
}

static sy_status *infer_fill(sy_node *n)
{
    const sy_tensor *v;
    SY_TRY(sy_need_input(H, n, 1, &v));
    int64_t dims[SY_MAX_RANK], cnt;
    SY_TRY(const_ints(n, 0, "dims", dims, SY_MAX_RANK, &cnt));
    if (sy_tensor_numel(v) != 1)
        return ERR(SY_ERR_SHAPE, "value must be a scalar");
    for (int64_t i = 0; i < cnt; i++)
        if (dims[i] < 0)
            return ERR(SY_ERR_SHAPE, "dims[%lld] = %lld is negative", (long long)i, (long long)dims[i]);
    return H->node_set_output(n, 0, v->dtype, (int32_t)cnt, dims);
}

static sy_status *run_fill(void *state, const sy_kernel_io *io)
{
    (void)state;
    sy_tensor *y = io->outputs[0];
    size_t es = esz(y);
    for (int64_t i = 0, n = sy_tensor_numel(y); i < n; i++)
        memcpy((char *)y->data + (size_t)i * es, io->inputs[1]->data, es);
    return NULL;
}

/* ======================================================================== */
/* RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR                                  */
/* ======================================================================== */

static sy_status *infer_resize(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->rank != 4)
        return ERR(SY_ERR_SHAPE, "input must be 4-D NHWC");
    int64_t sz[2], cnt;
    SY_TRY(const_ints(n, 1, "size", sz, 2, &cnt));
    if (cnt != 2 || sz[0] <= 0 || sz[1] <= 0)
        return ERR(SY_ERR_SHAPE, "size must hold 2 positive values");
    bool ac = sy_attr_int_or(H, n, "align_corners", 0) != 0, hp = sy_attr_int_or(H, n, "half_pixel_centers", 0) != 0;
    if (ac && hp)
        return ERR(SY_ERR_INVALID_ARGUMENT, "align_corners and half_pixel_centers cannot both be true");
    int64_t dims[4] = {x->dims[0], sz[0], sz[1], x->dims[3]};
    return H->node_set_output(n, 0, x->dtype, 4, dims);
}

typedef struct rz_state {
    bool bilinear, ac, hp;
} rz_state;

static sy_status *prepare_resize_impl(sy_node *n, void **state)
{
    rz_state *s = calloc(1, sizeof *s);
    if (!s)
        return OOM();
    *state = s;
    s->bilinear = !strcmp(H->node_op(n), "RESIZE_BILINEAR");
    s->ac = sy_attr_int_or(H, n, "align_corners", 0) != 0;
    s->hp = sy_attr_int_or(H, n, "half_pixel_centers", 0) != 0;
    const sy_tensor *x = H->node_input(n, 0), *y = H->node_output(n, 0);
    if (x->dtype == SY_DT_INT8) {
        float xs, ys;
        int32_t xz, yz;
        if (tfl_qparams(x, &xs, &xz) && tfl_qparams(y, &ys, &yz) && (xs != ys || xz != yz))
            return ERR(SY_ERR_UNSUPPORTED, "int8 resize needs equal input and output quantization");
    }
    return NULL;
}

/* the math is plugin_sdk/kernels/tflk_resize.c, which riscv_mcu and its
 * packages run too: fp32 in float positions, int8 bilinear as TFLite's
 * ResizeBilinearInteger, nearest a copy of elements */
static sy_status *run_resize(void *state, const sy_kernel_io *io)
{
    const rz_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (x->dims[0] > INT32_MAX || x->dims[1] > INT32_MAX || x->dims[2] > INT32_MAX || x->dims[3] > INT32_MAX ||
        y->dims[1] > INT32_MAX || y->dims[2] > INT32_MAX)
        return ERR(SY_ERR_UNSUPPORTED, "resize: dims above 2^31 - 1");
    tflk_resize p = {.n = (int32_t)x->dims[0], .ih = (int32_t)x->dims[1], .iw = (int32_t)x->dims[2],
                     .c = (int32_t)x->dims[3], .oh = (int32_t)y->dims[1], .ow = (int32_t)y->dims[2],
                     .esize = (int32_t)esz(x), .linear = s->bilinear, .ac = s->ac, .hp = s->hp};
    tflk_resize_run(&p, x->data, y->data);
    return NULL;
}

/* a failed prepare releases what it allocated: the core keeps no state then */
TFL_PREPARE_GUARDED(prepare_quantize, prepare_quantize_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_concat, prepare_concat_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_pack, prepare_pack_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_unpack, prepare_unpack_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_slice, prepare_slice_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_pad, prepare_pad_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_revseq, prepare_revseq_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_gather, prepare_gather_impl, sy_release_free)
TFL_PREPARE_GUARDED(prepare_resize, prepare_resize_impl, sy_release_free)

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

#define ALL SY_DT_MASK_PLAIN
static const sy_inplace_pair alias00[] = {{0, 0, true}};
static const sy_attr_def reshape_attrs[] = {{"new_shape", SY_ATTR_INTS, false}};
static const sy_attr_def squeeze_attrs[] = {{"squeeze_dims", SY_ATTR_INTS, false}};
static const sy_attr_def cast_attrs[] = {{"in_data_type", SY_ATTR_STRING, false}, {"out_data_type", SY_ATTR_STRING, false}};
static const sy_attr_def concat_attrs[] = {{"axis", SY_ATTR_INT, false}, TFL_ATTR_ACT};
static const sy_attr_def pack_attrs[] = {{"values_count", SY_ATTR_INT, false}, {"axis", SY_ATTR_INT, false}};
static const sy_attr_def unpack_attrs[] = {{"num", SY_ATTR_INT, false}, {"axis", SY_ATTR_INT, false}};
static const sy_attr_def split_attrs[] = {{"num_splits", SY_ATTR_INT, false}};
static const sy_attr_def ss_attrs[] = {
    {"begin_mask", SY_ATTR_INT, false},    {"end_mask", SY_ATTR_INT, false},         {"ellipsis_mask", SY_ATTR_INT, false},
    {"new_axis_mask", SY_ATTR_INT, false}, {"shrink_axis_mask", SY_ATTR_INT, false}, {"offset", SY_ATTR_INT, false},
};
static const sy_attr_def mirror_attrs[] = {{"mode", SY_ATTR_STRING, false}};
static const sy_attr_def revseq_attrs[] = {{"seq_dim", SY_ATTR_INT, false}, {"batch_dim", SY_ATTR_INT, false}};
static const sy_attr_def block_attrs[] = {{"block_size", SY_ATTR_INT, true}};
static const sy_attr_def gather_attrs[] = {{"axis", SY_ATTR_INT, false}, {"batch_dims", SY_ATTR_INT, false}};
static const sy_attr_def axis_attrs[] = {{"axis", SY_ATTR_INT, false}};
static const sy_attr_def shape_attrs[] = {{"out_type", SY_ATTR_STRING, false}};
static const sy_attr_def resize_attrs[] = {{"align_corners", SY_ATTR_INT, false},
                                           {"half_pixel_centers", SY_ATTR_INT, false}};

#define S TFL_SCHEMA
static const sy_op_schema schemas[] = {
    S("RESHAPE", 1, 2, 1, 1, SY_ATTRS(reshape_attrs), infer_reshape, SY_INPLACE(alias00), 0, "reshape (a view)"),
    S("SQUEEZE", 1, 1, 1, 1, SY_ATTRS(squeeze_attrs), infer_squeeze, SY_INPLACE(alias00), 0, "drop size-1 dims"),
    S("EXPAND_DIMS", 2, 2, 1, 1, SY_NO_ATTRS, infer_expand_dims, SY_INPLACE(alias00), 0, "insert a size-1 dim"),
    S("QUANTIZE", 1, 1, 1, 1, SY_NO_ATTRS, infer_quantize, SY_NO_INPLACE, 0, "fp32 -> int8 / requantize"),
    S("DEQUANTIZE", 1, 1, 1, 1, SY_NO_ATTRS, infer_dequantize, SY_NO_INPLACE, 0, "quantized -> fp32"),
    S("CAST", 1, 1, 1, 1, SY_ATTRS(cast_attrs), infer_cast, SY_NO_INPLACE, 0, "dtype conversion"),
    S("CONCATENATION", 1, -1, 1, 1, SY_ATTRS(concat_attrs), infer_concat, SY_NO_INPLACE, 0, "concatenate along axis"),
    S("PACK", 1, -1, 1, 1, SY_ATTRS(pack_attrs), infer_pack, SY_NO_INPLACE, 0, "stack along a new axis"),
    S("UNPACK", 1, 1, 1, -1, SY_ATTRS(unpack_attrs), infer_unpack, SY_NO_INPLACE, 0, "unstack along an axis"),
    S("SPLIT", 2, 2, 1, -1, SY_ATTRS(split_attrs), infer_split, SY_NO_INPLACE, 0, "even split (axis, value)"),
    S("SPLIT_V", 3, 3, 1, -1, SY_ATTRS(split_attrs), infer_split, SY_NO_INPLACE, 0, "split by sizes"),
    S("TRANSPOSE", 2, 2, 1, 1, SY_NO_ATTRS, infer_transpose, SY_NO_INPLACE, 0, "permute dims"),
    S("TILE", 2, 2, 1, 1, SY_NO_ATTRS, infer_tile, SY_NO_INPLACE, 0, "repeat by multiples"),
    S("REVERSE_V2", 2, 2, 1, 1, SY_NO_ATTRS, infer_reverse, SY_NO_INPLACE, 0, "reverse along axes"),
    S("SLICE", 3, 3, 1, 1, SY_NO_ATTRS, infer_slice, SY_NO_INPLACE, 0, "contiguous slice (begin, size)"),
    S("STRIDED_SLICE", 4, 4, 1, 1, SY_ATTRS(ss_attrs), infer_strided_slice, SY_NO_INPLACE, 0, "strided slice with masks"),
    S("PAD", 2, 2, 1, 1, SY_NO_ATTRS, infer_pad, SY_NO_INPLACE, 0, "pad with (quantized) zeros"),
    S("PADV2", 2, 3, 1, 1, SY_NO_ATTRS, infer_pad, SY_NO_INPLACE, 0, "pad with a constant"),
    S("MIRROR_PAD", 2, 2, 1, 1, SY_ATTRS(mirror_attrs), infer_pad, SY_NO_INPLACE, 0, "REFLECT / SYMMETRIC padding"),
    S("REVERSE_SEQUENCE", 2, 2, 1, 1, SY_ATTRS(revseq_attrs), infer_revseq, SY_NO_INPLACE, 0, "reverse prefixes"),
    S("DEPTH_TO_SPACE", 1, 1, 1, 1, SY_ATTRS(block_attrs), infer_d2s, SY_NO_INPLACE, 0, "NHWC depth to space"),
    S("SPACE_TO_DEPTH", 1, 1, 1, 1, SY_ATTRS(block_attrs), infer_d2s, SY_NO_INPLACE, 0, "NHWC space to depth"),
    S("GATHER", 2, 2, 1, 1, SY_ATTRS(gather_attrs), infer_gather, SY_NO_INPLACE, 0, "gather along axis"),
    S("GATHER_ND", 2, 2, 1, 1, SY_NO_ATTRS, infer_gather_nd, SY_NO_INPLACE, 0, "gather index tuples"),
    S("SCATTER_ND", 3, 3, 1, 1, SY_NO_ATTRS, infer_scatter_nd, SY_NO_INPLACE, 0, "scatter-add into zeros"),
    S("ONE_HOT", 4, 4, 1, 1, SY_ATTRS(axis_attrs), infer_one_hot, SY_NO_INPLACE, 0, "one-hot encoding"),
    S("SHAPE", 1, 1, 1, 1, SY_ATTRS(shape_attrs), infer_shape, SY_NO_INPLACE, SY_SCHEMA_READS_SHAPES_ONLY, "shape"),
    S("FILL", 2, 2, 1, 1, SY_NO_ATTRS, infer_fill, SY_NO_INPLACE, 0, "fill dims with a value"),
    S("RESIZE_BILINEAR", 2, 2, 1, 1, SY_ATTRS(resize_attrs), infer_resize, SY_NO_INPLACE, 0, "bilinear resize"),
    S("RESIZE_NEAREST_NEIGHBOR", 2, 2, 1, 1, SY_ATTRS(resize_attrs), infer_resize, SY_NO_INPLACE, 0, "nearest resize"),
};
#undef S

#define K TFL_KERNEL
static const sy_kernel_def kernels[] = {
    K("RESHAPE", ALL, 0, sy_prepare_nothing, sy_run_copy_input0, NULL),
    K("SQUEEZE", ALL, 0, sy_prepare_nothing, sy_run_copy_input0, NULL),
    K("EXPAND_DIMS", ALL, 0, sy_prepare_nothing, sy_run_copy_input0, NULL),
    K("QUANTIZE", TFL_F32 | TFL_I8 | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16), 0, prepare_quantize,
      run_quantize, sy_release_free),
    K("DEQUANTIZE", TFL_I8 | SY_DT_BIT(SY_DT_UINT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_FLOAT16), 0,
      sy_prepare_nothing, run_dequantize, NULL),
    K("CAST", ALL, 0, sy_prepare_nothing, run_cast, NULL),
    K("CONCATENATION", ALL, 0, prepare_concat, run_concat, sy_release_free),
    K("PACK", ALL, 0, prepare_pack, run_pack, sy_release_free),
    K("UNPACK", ALL, 0, prepare_unpack, run_unpack, sy_release_free),
    K("SPLIT", ALL, 1, sy_prepare_nothing, run_split, NULL),
    K("SPLIT_V", ALL, 0, sy_prepare_nothing, run_split, NULL),
    K("TRANSPOSE", ALL, 0, sy_prepare_nothing, run_transpose, NULL),
    K("TILE", ALL, 0, sy_prepare_nothing, run_tile, NULL),
    K("REVERSE_V2", ALL, 0, sy_prepare_nothing, run_reverse, NULL),
    K("SLICE", ALL, 0, prepare_slice, run_slice, sy_release_free),
    K("STRIDED_SLICE", ALL, 0, prepare_slice, run_slice, sy_release_free),
    K("PAD", ALL, 0, prepare_pad, run_pad, sy_release_free),
    K("PADV2", ALL, 0, prepare_pad, run_pad, sy_release_free),
    K("MIRROR_PAD", ALL, 0, prepare_pad, run_pad, sy_release_free),
    K("REVERSE_SEQUENCE", ALL, 0, prepare_revseq, run_revseq_real, sy_release_free),
    K("DEPTH_TO_SPACE", ALL, 0, sy_prepare_nothing, run_d2s, NULL),
    K("SPACE_TO_DEPTH", ALL, 0, sy_prepare_nothing, run_d2s, NULL),
    K("GATHER", ALL, 0, prepare_gather, run_gather, sy_release_free),
    K("GATHER_ND", ALL, 0, sy_prepare_nothing, run_gather_nd, NULL),
    K("SCATTER_ND", TFL_F32_I8 | SY_DT_BIT(SY_DT_INT32), 1, sy_prepare_nothing, run_scatter_nd, NULL),
    K("ONE_HOT", ALL, 2, sy_prepare_nothing, run_one_hot, NULL),
    K("SHAPE", SY_DT_MASK_ALL, 0, sy_prepare_nothing, run_shape, NULL),
    K("FILL", ALL, 1, sy_prepare_nothing, run_fill, NULL),
    K("RESIZE_BILINEAR", TFL_F32_I8, 0, prepare_resize, run_resize, sy_release_free),
    K("RESIZE_NEAREST_NEIGHBOR", ALL, 0, prepare_resize, run_resize, sy_release_free),
};
#undef K

static sy_status *tensor_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void tensor_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "tflite_tensor",
    .version = "0.1.0",
    .description = "TFLite data movement, shape and (de)quantization operators, cpu_ref",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = tensor_init,
    .fini = tensor_fini,
};

SY_PLUGIN_DEFINE(desc)
