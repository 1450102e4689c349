/*
 * ops_activation: activation functions of the default ONNX domain, cpu_ref
 * kernels.
 *
 * Pointwise (params from attributes): Relu LeakyRelu Sigmoid HardSigmoid
 *   HardSwish Elu Selu Celu Softplus Softsign ThresholdedRelu Shrink Mish
 *   Gelu Swish
 * Clip (attribute form before opset 11, optional inputs after)
 * PRelu (slope broadcast to X)
 * Softmax LogSoftmax Hardmax (coerced-2D semantics before opset 13,
 *   single axis from 13)
 */
#include "switchyard/sy_sdk.h"
#include "tflk.h" /* the one float softmax body (sy_kernels) */

#include <float.h>
#include <math.h>
#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

/* ======================================================================== */
/* pointwise                                                                */
/* ======================================================================== */

/* c[0], c[1]: op parameters (alpha, beta / gamma / lambd, bias) */
static inline float sigmoidf(float x) { return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)); }
static inline double sigmoidd(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static inline float softplusf(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static inline double softplusd(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline float gelu_tanhf(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
static inline double gelu_tanhd(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* max(0, x) as numpy and ONNX Runtime compute it: NaN stays NaN, -0 gives +0 */
SY_UNARY_FLOAT_FNS(relu, (x > 0.0f || x != x ? x : 0.0f), (x > 0.0 || x != x ? x : 0.0))
SY_UNARY_FLOAT_FNS(leaky, (x >= 0.0f ? x : c[0] * x), (x >= 0.0 ? x : (double)c[0] * x))
SY_UNARY_FLOAT_FNS(sigmoid, sigmoidf(x), sigmoidd(x))
SY_UNARY_FLOAT_FNS(hsig, clampf(c[0] * x + c[1], 0.0f, 1.0f), clampd((double)c[0] * x + c[1], 0.0, 1.0))
SY_UNARY_FLOAT_FNS(hswish, x *clampf(x / 6.0f + 0.5f, 0.0f, 1.0f), x *clampd(x / 6.0 + 0.5, 0.0, 1.0))
SY_UNARY_FLOAT_FNS(elu, (x >= 0.0f ? x : c[0] * expm1f(x)), (x >= 0.0 ? x : (double)c[0] * expm1(x)))
SY_UNARY_FLOAT_FNS(selu, (x > 0.0f ? c[1] * x : c[1] * c[0] * expm1f(x)),
                   (x > 0.0 ? (double)c[1] * x : (double)c[1] * c[0] * expm1(x)))
SY_UNARY_FLOAT_FNS(celu, (x > 0.0f ? x : c[0] * expm1f(x / c[0])), (x > 0.0 ? x : (double)c[0] * expm1(x / c[0])))
SY_UNARY_FLOAT_FNS(softplus, softplusf(x), softplusd(x))
SY_UNARY_FLOAT_FNS(softsign, x / (1.0f + fabsf(x)), x / (1.0 + fabs(x)))
SY_UNARY_FLOAT_FNS(thrrelu, (x > c[0] ? x : 0.0f), (x > c[0] ? x : 0.0))
SY_UNARY_FLOAT_FNS(shrink, (x < -c[0] ? x + c[1] : (x > c[0] ? x - c[1] : 0.0f)),
                   (x < -c[0] ? x + c[1] : (x > c[0] ? x - c[1] : 0.0)))
SY_UNARY_FLOAT_FNS(mish, x *tanhf(softplusf(x)), x *tanh(softplusd(x)))
SY_UNARY_FLOAT_FNS(gelu, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)),
                   0.5 * x * (1.0 + erf(x * 0.70710678118654752)))
SY_UNARY_FLOAT_FNS(gelut, gelu_tanhf(x), gelu_tanhd(x))
SY_UNARY_FLOAT_FNS(swish, x *sigmoidf(c[0] * x), x *sigmoidd((double)c[0] * x))

static inline bool neg64(int64_t v) { return v < 0; }
#define INT_RELU(DT, T, UT, S, SFX) SY_UNARY_FN(relu_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (neg64((int64_t)x) ? (T)0 : x))
SY_FOREACH_INT_U(INT_RELU)

typedef struct act_op {
    const char *name;
    sy_unary_fn tab[SY_DT__COUNT];
    const char *p0, *p1; /* attribute names */
    float d0, d1;        /* defaults */
} act_op;

#define FT(name) {SY_FLOAT_TABLE_ENTRIES(name)}
static const act_op act_ops[] = {
    {"Relu", {SY_FLOAT_TABLE_ENTRIES(relu), SY_INT_TABLE_ENTRIES(relu)}, NULL, NULL, 0, 0},
    {"LeakyRelu", FT(leaky), "alpha", NULL, 0.01f, 0},
    {"Sigmoid", FT(sigmoid), NULL, NULL, 0, 0},
    {"HardSigmoid", FT(hsig), "alpha", "beta", 0.2f, 0.5f},
    {"HardSwish", FT(hswish), NULL, NULL, 0, 0},
    {"Elu", FT(elu), "alpha", NULL, 1.0f, 0},
    {"Selu", FT(selu), "alpha", "gamma", 1.67326319217681884765625f, 1.05070102214813232421875f},
    {"Celu", FT(celu), "alpha", NULL, 1.0f, 0},
    {"Softplus", FT(softplus), NULL, NULL, 0, 0},
    {"Softsign", FT(softsign), NULL, NULL, 0, 0},
    {"ThresholdedRelu", FT(thrrelu), "alpha", NULL, 1.0f, 0},
    {"Shrink", FT(shrink), "lambd", "bias", 0.5f, 0.0f},
    {"Mish", FT(mish), NULL, NULL, 0, 0},
    {"Gelu", FT(gelu), NULL, NULL, 0, 0},
    {"Swish", FT(swish), "alpha", NULL, 1.0f, 0},
};

static const act_op *find_act(const char *name)
{
    for (size_t i = 0; i < sizeof act_ops / sizeof act_ops[0]; i++)
        if (!strcmp(act_ops[i].name, name))
            return &act_ops[i];
    return NULL;
}

typedef struct act_state {
    sy_unary_fn fn;
    float c[4];
} act_state;

static sy_status *infer_act(sy_node *n)
{
    if (!strcmp(H->node_op(n), "Gelu")) {
        char ap[16];
        sy_attr_string_or(H, n, "approximate", "none", ap, sizeof ap);
        if (strcmp(ap, "none") && strcmp(ap, "tanh"))
            return ERR(SY_ERR_INVALID_ARGUMENT, "approximate must be \"none\" or \"tanh\", got \"%s\"", ap);
    }
    return sy_infer_unary(H, n);
}

static sy_status *prepare_act(sy_node *n, void **state)
{
    const act_op *a = find_act(H->node_op(n));
    const sy_tensor *x = H->node_input(n, 0);
    if (!a || !x)
        return ERR(SY_ERR_INTERNAL, "activation kernel bound to unknown op %s", H->node_op(n));
    sy_unary_fn fn = (unsigned)x->dtype < SY_DT__COUNT ? a->tab[x->dtype] : NULL;
    if (!strcmp(a->name, "Gelu") && sy_attr_string_is(H, n, "approximate", "none", "tanh")) {
        static const sy_unary_fn gt[SY_DT__COUNT] = {SY_FLOAT_TABLE_ENTRIES(gelut)};
        fn = gt[x->dtype];
    }
    if (!fn)
        return ERR(SY_ERR_TYPE, "%s has no cpu_ref kernel for %s", a->name, sy_dt_name(x->dtype));
    act_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->fn = fn;
    s->c[0] = a->p0 ? sy_attr_float_or(H, n, a->p0, a->d0) : a->d0;
    s->c[1] = a->p1 ? sy_attr_float_or(H, n, a->p1, a->d1) : a->d1;
    *state = s;
    return NULL;
}

static sy_status *run_act(void *state, const sy_kernel_io *io)
{
    const act_state *s = state;
    s->fn(io->inputs[0]->data, io->outputs[0]->data, sy_tensor_numel(io->inputs[0]), s->c);
    return NULL;
}

/* ======================================================================== */
/* Clip                                                                     */
/* ======================================================================== */

typedef struct clip_state {
    bool from_attrs;
    double lo, hi;
} clip_state;

#define CLIP_FN(DT, T, UT, S, SFX)                                                                                 \
    static void clip_##SFX(const void *in, void *out, int64_t n, double lo, double hi)                             \
    {                                                                                                              \
        const T *x = in;                                                                                           \
        T *y = out;                                                                                                \
        T tmin = S ? (T)((uint64_t)1 << (sizeof(T) * 8 - 1)) : (T)0, tmax = (T)~tmin;                               \
        /* bounds outside T (or NaN) saturate: converting them would be UB */                                     \
        T l = !(lo > (double)tmin) ? tmin : lo >= (double)tmax ? tmax : (T)lo;                                      \
        T h = !(hi < (double)tmax) ? tmax : hi <= (double)tmin ? tmin : (T)hi;                                      \
        for (int64_t i = 0; i < n; i++)                                                                            \
            { T v = x[i] < l ? l : x[i]; y[i] = v > h ? h : v; }                                                           \
    }
SY_FOREACH_INT_U(CLIP_FN)

static sy_status *infer_clip(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    for (uint32_t i = 1; i < H->node_num_inputs(n); i++) {
        const sy_tensor *t = H->node_input(n, i);
        if (t && (t->dtype != x->dtype || sy_tensor_numel(t) != 1))
            return ERR(SY_ERR_SHAPE, "%s must be a scalar of X's type %s", i == 1 ? "min" : "max",
                       sy_dt_name(x->dtype));
    }
    return sy_infer_unary(H, n);
}

static sy_status *prepare_clip(sy_node *n, void **state)
{
    clip_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    if (H->node_opset(n) < 11) {
        s->from_attrs = true;
        s->lo = sy_attr_float_or(H, n, "min", -FLT_MAX);
        s->hi = sy_attr_float_or(H, n, "max", FLT_MAX);
    }
    *state = s;
    return NULL;
}

static sy_status *run_clip(void *state, const sy_kernel_io *io)
{
    const clip_state *s = state;
    const sy_tensor *x = io->inputs[0];
    double lo = -1e308, hi = 1e308;
    if (s->from_attrs) {
        lo = s->lo;
        hi = s->hi;
    } else {
        if (io->n_inputs > 1 && io->inputs[1])
            sy_tensor_scalar_f64(io->inputs[1], &lo);
        if (io->n_inputs > 2 && io->inputs[2])
            sy_tensor_scalar_f64(io->inputs[2], &hi);
    }
    int64_t n = sy_tensor_numel(x);
    void *y = io->outputs[0]->data;
    switch (x->dtype) {
    case SY_DT_FLOAT32: {
        const float *xd = x->data;
        float *yd = y;
        float l = lo < -FLT_MAX ? -INFINITY : (float)lo, h = hi > FLT_MAX ? INFINITY : (float)hi;
        for (int64_t i = 0; i < n; i++)
            { float v = xd[i] < l ? l : xd[i]; yd[i] = v > h ? h : v; }
        return NULL;
    }
#define CLIP_CASE(DT, T, UT, S, SFX)                                                                               \
    case DT: clip_##SFX(x->data, y, n, lo, hi); return NULL;
        SY_FOREACH_INT_U(CLIP_CASE)
    default:
        for (int64_t i = 0; i < n; i++) {
            double v = sy_load_f64(x->data, x->dtype, (size_t)i);
            v = v < lo ? lo : v;
            sy_store_f64(y, x->dtype, (size_t)i, v > hi ? hi : v);
        }
        return NULL;
    }
}

/* ======================================================================== */
/* PRelu                                                                    */
/* ======================================================================== */

SY_BINARY_FLOAT_FNS(prelu, (x >= 0.0f ? x : x * y), (x >= 0.0 ? x : x * y))
#define INT_PRELU(DT, T, UT, S, SFX)                                                                               \
    SY_BINARY_FN(prelu_##SFX, T, T, T, SY_LD_ID, SY_LD_ID, (neg64((int64_t)x) ? (T)((uint64_t)x * (uint64_t)y) : x))
SY_FOREACH_INT_U(INT_PRELU)
static const sy_bcast_fn prelu_tab[SY_DT__COUNT] = {SY_FLOAT_TABLE_ENTRIES(prelu), SY_INT_TABLE_ENTRIES(prelu)};

static sy_status *infer_prelu(sy_node *n)
{
    const sy_tensor *x, *sl;
    SY_TRY(sy_need_input(H, n, 0, &x));
    SY_TRY(sy_need_input(H, n, 1, &sl));
    SY_TRY(sy_check_same_dtype(H, n, 2));
    sy_tensor slope = *sl;
    /* before opset 7 a 1-D slope of C values applies along axis 1 */
    if (H->node_opset(n) < 7 && sl->rank == 1 && x->rank >= 2 && sl->dims[0] == x->dims[1] && x->rank > 2)
        return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
    const sy_tensor *ts[2] = {x, &slope};
    int32_t r;
    int64_t dims[SY_MAX_RANK];
    SY_TRY(sy_broadcast_shapes(H, 2, ts, &r, dims));
    if (!sy_shape_equal(r, dims, x->rank, x->dims))
        return ERR(SY_ERR_SHAPE, "slope must broadcast to X (unidirectional)");
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *run_prelu(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0], *sl = io->inputs[1];
    sy_bcast_fn fn = prelu_tab[x->dtype];
    if (!fn)
        return ERR(SY_ERR_TYPE, "PRelu has no kernel for %s", sy_dt_name(x->dtype));
    sy_tensor slope = *sl;
    if (sl->rank == 1 && x->rank > 2 && sl->dims[0] == x->dims[1] && sl->dims[0] != x->dims[x->rank - 1]) {
        /* legacy per-channel slope: view as [C, 1, ...] */
        slope.rank = x->rank - 1;
        slope.dims[0] = sl->dims[0];
        for (int32_t d = 1; d < slope.rank; d++)
            slope.dims[d] = 1;
    }
    const sy_tensor *ins[2] = {x, &slope};
    return sy_bcast_apply(H, 2, ins, io->outputs[0], fn, NULL);
}

/* ======================================================================== */
/* Softmax / LogSoftmax / Hardmax                                           */
/* ======================================================================== */

enum { SM_SOFT, SM_LOG, SM_HARD };

typedef struct sm_state {
    int kind;
    int32_t axis;
    bool coerce2d; /* opset < 13 */
} sm_state;

static sy_status *infer_softmax(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    int64_t def = H->node_opset(n) < 13 ? 1 : -1;
    int32_t axis;
    if (x->rank == 0)
        return ERR(SY_ERR_SHAPE, "input must have rank >= 1");
    SY_TRY(sy_norm_axis(H, sy_attr_int_or(H, n, "axis", def), x->rank, false, "axis", &axis));
    return sy_infer_unary(H, n);
}

static sy_status *prepare_softmax(sy_node *n, void **state)
{
    sm_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *op = H->node_op(n);
    s->kind = !strcmp(op, "LogSoftmax") ? SM_LOG : !strcmp(op, "Hardmax") ? SM_HARD : SM_SOFT;
    s->coerce2d = H->node_opset(n) < 13;
    const sy_tensor *x = H->node_input(n, 0);
    sy_status *st = sy_norm_axis(H, sy_attr_int_or(H, n, "axis", s->coerce2d ? 1 : -1), x->rank, false, "axis",
                                 &s->axis);
    if (st) {
        free(s);
        return st;
    }
    H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static sy_status *softmax_f32(void *state, const sy_kernel_io *io)
{
    const sm_state *s = state;
    const sy_tensor *x = io->inputs[0];
    int64_t outer = sy_dims_prod(x->dims, 0, s->axis), len, inner;
    if (s->coerce2d) {
        len = sy_dims_prod(x->dims, s->axis, x->rank);
        inner = 1;
    } else {
        len = x->dims[s->axis];
        inner = sy_dims_prod(x->dims, s->axis + 1, x->rank);
    }
    const float *xd = x->data;
    float *yd = io->outputs[0]->data;
    if (s->kind == SM_SOFT) {
        /* the portable kernel with this family's documented arithmetic:
         * libm's expf, summed in double, multiplied by the reciprocal */
        if (outer > INT32_MAX || len > INT32_MAX || inner > INT32_MAX)
            return ERR(SY_ERR_UNSUPPORTED, "Softmax: %lld x %lld x %lld elements: the kernel counts in int32",
                       (long long)outer, (long long)len, (long long)inner);
        tflk_softmax k = {.rows = (int32_t)outer, .depth = (int32_t)len, .beta = 1.0f, .inner = (int32_t)inner,
                          .exp_fn = expf};
        tflk_softmax_f32_acc64(&k, xd, yd);
        return NULL;
    }
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            const float *xp = xd + o * len * inner + i;
            float *yp = yd + o * len * inner + i;
            float m = -INFINITY;
            int64_t arg = 0;
            for (int64_t k = 0; k < len; k++)
                if (xp[k * inner] > m || k == 0) {
                    m = xp[k * inner];
                    arg = k;
                }
            if (s->kind == SM_HARD) {
                for (int64_t k = 0; k < len; k++)
                    yp[k * inner] = k == arg ? 1.0f : 0.0f;
                continue;
            }
            double sum = 0; /* LogSoftmax */
            for (int64_t k = 0; k < len; k++)
                sum += expf(xp[k * inner] - m);
            float ls = (float)log(sum);
            for (int64_t k = 0; k < len; k++)
                yp[k * inner] = xp[k * inner] - m - ls;
        }
    return NULL;
}

static sy_status *run_softmax(void *state, const sy_kernel_io *io) { return sy_run_as_f32(H, state, io, softmax_f32); }

/* ======================================================================== */
/* tables                                                                   */
/* ======================================================================== */

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_consumed[] = {ATTR("consumed_inputs", INTS)};
static const sy_attr_def a_alpha_v1[] = {ATTR("alpha", FLOAT), ATTR("consumed_inputs", INTS)};
static const sy_attr_def a_alpha[] = {ATTR("alpha", FLOAT)};
static const sy_attr_def a_ab_v1[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT), ATTR("consumed_inputs", INTS)};
static const sy_attr_def a_ab[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT)};
static const sy_attr_def a_selu_v1[] = {ATTR("alpha", FLOAT), ATTR("consumed_inputs", INTS), ATTR("gamma", FLOAT)};
static const sy_attr_def a_selu[] = {ATTR("alpha", FLOAT), ATTR("gamma", FLOAT)};
static const sy_attr_def a_shrink[] = {ATTR("bias", FLOAT), ATTR("lambd", FLOAT)};
static const sy_attr_def a_gelu[] = {ATTR("approximate", STRING)};
static const sy_attr_def a_clip_v1[] = {ATTR("consumed_inputs", INTS), ATTR("max", FLOAT), ATTR("min", FLOAT)};
static const sy_attr_def a_clip_v6[] = {ATTR("max", FLOAT), ATTR("min", FLOAT)};
static const sy_attr_def a_axis[] = {ATTR("axis", INT)};

static const sy_inplace_pair ip00[] = {{0, 0, false}};

#define U(op, since, attrs) SY_SCHEMA(op, since, 1, 1, 1, 1, attrs, infer_act, SY_INPLACE(ip00), 0)

static const sy_op_schema schemas[] = {
    U("Relu", 1, SY_ATTRS(a_consumed)), U("Relu", 6, SY_NO_ATTRS),
    U("LeakyRelu", 1, SY_ATTRS(a_alpha_v1)), U("LeakyRelu", 6, SY_ATTRS(a_alpha)),
    U("Sigmoid", 1, SY_ATTRS(a_consumed)), U("Sigmoid", 6, SY_NO_ATTRS),
    U("HardSigmoid", 1, SY_ATTRS(a_ab_v1)), U("HardSigmoid", 6, SY_ATTRS(a_ab)),
    U("HardSwish", 14, SY_NO_ATTRS),
    U("Elu", 1, SY_ATTRS(a_alpha_v1)), U("Elu", 6, SY_ATTRS(a_alpha)),
    U("Selu", 1, SY_ATTRS(a_selu_v1)), U("Selu", 6, SY_ATTRS(a_selu)),
    U("Celu", 12, SY_ATTRS(a_alpha)),
    U("Softplus", 1, SY_NO_ATTRS), U("Softsign", 1, SY_NO_ATTRS),
    U("ThresholdedRelu", 10, SY_ATTRS(a_alpha)),
    U("Shrink", 9, SY_ATTRS(a_shrink)),
    U("Mish", 18, SY_NO_ATTRS),
    U("Gelu", 20, SY_ATTRS(a_gelu)),
    U("Swish", 24, SY_ATTRS(a_alpha)),
    SY_SCHEMA("Clip", 1, 1, 1, 1, 1, SY_ATTRS(a_clip_v1), infer_clip, SY_INPLACE(ip00), 0),
    SY_SCHEMA("Clip", 6, 1, 1, 1, 1, SY_ATTRS(a_clip_v6), infer_clip, SY_INPLACE(ip00), 0),
    SY_SCHEMA("Clip", 11, 1, 3, 1, 1, SY_NO_ATTRS, infer_clip, SY_INPLACE(ip00), 0),
    SY_SCHEMA("PRelu", 1, 2, 2, 1, 1, SY_ATTRS(a_consumed), infer_prelu, SY_NO_INPLACE, 0),
    SY_SCHEMA("PRelu", 6, 2, 2, 1, 1, SY_NO_ATTRS, infer_prelu, SY_NO_INPLACE, 0),
    SY_SCHEMA("PRelu", 7, 2, 2, 1, 1, SY_NO_ATTRS, infer_prelu, SY_NO_INPLACE, 0),
    SY_SCHEMA("Softmax", 1, 1, 1, 1, 1, SY_ATTRS(a_axis), infer_softmax, SY_NO_INPLACE, 0),
    SY_SCHEMA("Softmax", 13, 1, 1, 1, 1, SY_ATTRS(a_axis), infer_softmax, SY_NO_INPLACE, 0),
    SY_SCHEMA("LogSoftmax", 1, 1, 1, 1, 1, SY_ATTRS(a_axis), infer_softmax, SY_NO_INPLACE, 0),
    SY_SCHEMA("LogSoftmax", 13, 1, 1, 1, 1, SY_ATTRS(a_axis), infer_softmax, SY_NO_INPLACE, 0),
    SY_SCHEMA("Hardmax", 1, 1, 1, 1, 1, SY_ATTRS(a_axis), infer_softmax, SY_NO_INPLACE, 0),
    SY_SCHEMA("Hardmax", 13, 1, 1, 1, 1, SY_ATTRS(a_axis), infer_softmax, SY_NO_INPLACE, 0),
};

#define FL SY_DT_MASK_FLOATS
#define KA(op, mask) SY_CPU_KERNEL(op, 1, 0, mask, 0, prepare_act, run_act, sy_release_free)

static const sy_kernel_def kernels[] = {
    KA("Relu", SY_DT_MASK_NUMERIC), KA("LeakyRelu", FL), KA("Sigmoid", FL), KA("HardSigmoid", FL),
    KA("HardSwish", FL), KA("Elu", FL), KA("Selu", FL), KA("Celu", FL), KA("Softplus", FL), KA("Softsign", FL),
    KA("ThresholdedRelu", FL), KA("Shrink", FL), KA("Mish", FL), KA("Gelu", FL), KA("Swish", FL),
    SY_CPU_KERNEL("Clip", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_clip, run_clip, sy_release_free),
    SY_CPU_KERNEL("PRelu", 1, 0, SY_DT_MASK_NUMERIC, 0, sy_prepare_nothing, run_prelu, NULL),
    SY_CPU_KERNEL("Softmax", 1, 0, FL, 0, prepare_softmax, run_softmax, sy_release_free),
    SY_CPU_KERNEL("LogSoftmax", 1, 0, FL, 0, prepare_softmax, run_softmax, sy_release_free),
    SY_CPU_KERNEL("Hardmax", 1, 0, FL, 0, prepare_softmax, run_softmax, sy_release_free),
};

static sy_status *act_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void act_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_activation",
    .version = "0.1.0",
    .description = "activation functions (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = act_init,
    .fini = act_fini,
};

SY_PLUGIN_DEFINE(desc)
