/*
 * The optimizers of ONNX's ai.onnx.preview.training domain (opset 1):
 * Adagrad, Momentum (standard and Nesterov) and Adam, cpu_ref kernels.
 *
 * Each node updates n tensors at once. Its inputs are the learning rate R
 * (a float scalar), the update count T (an int64 scalar), then n groups of
 * tensors side by side (X_1..X_n, G_1..G_n, then each state tensor group);
 * its outputs are the new X's followed by the new state groups, in the same
 * order. The formulas are the ONNX operator documents', written per element
 * with float arithmetic in the order the documents give (a double rounding
 * order would differ from ONNX Runtime's and the node tests' references in
 * the last bit).
 */
#include "train.h"

#include "trk.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

typedef enum optim_kind { OPT_ADAGRAD, OPT_MOMENTUM, OPT_ADAM } optim_kind;

/* Tensor groups after R and T: X and G, then the state groups. */
static uint32_t groups_of(optim_kind k) { return k == OPT_ADAGRAD ? 3 : k == OPT_MOMENTUM ? 3 : 4; }

static optim_kind kind_of(const char *op)
{
    return !strcmp(op, "Adagrad") ? OPT_ADAGRAD : !strcmp(op, "Momentum") ? OPT_MOMENTUM : OPT_ADAM;
}

typedef struct optim_state {
    optim_kind kind;
    uint32_t n;           /* tensors updated by the node */
    float decay, epsilon; /* Adagrad: decay_factor; Adagrad/Adam: epsilon */
    float norm, norm_post;
    float alpha, beta; /* Momentum, Adam */
    bool nesterov;
} optim_state;

static sy_status *scalar_input(sy_node *n, uint32_t i, const char *what, sy_dtype want)
{
    const sy_tensor *t;
    SY_TRY(sy_need_input(H, n, i, &t));
    if (t->dtype != want)
        return ERR(SY_ERR_TYPE, "%s (input %u) must be %s, got %s", what, i, sy_dt_name(want), sy_dt_name(t->dtype));
    if (sy_tensor_numel(t) != 1)
        return ERR(SY_ERR_SHAPE, "%s (input %u) must hold one value, got %lld", what, i,
                   (long long)sy_tensor_numel(t));
    return NULL;
}

static sy_status *infer_optim(sy_node *n)
{
    const char *op = H->node_op(n);
    uint32_t groups = groups_of(kind_of(op));
    uint32_t nin = H->node_num_inputs(n);
    if (nin < 2 + groups || (nin - 2) % groups)
        return ERR(SY_ERR_INVALID_ARGUMENT,
                   "%s takes R, T and %u groups of equally many tensors (X..., G..., state...); got %u inputs", op,
                   groups, nin);
    uint32_t cnt = (nin - 2) / groups;
    if (H->node_num_outputs(n) != (groups - 1) * cnt)
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s updating %u tensors has %u outputs (X_new..., state...); got %u", op,
                   cnt, (groups - 1) * cnt, H->node_num_outputs(n));
    SY_TRY(scalar_input(n, 0, "learning rate R", SY_DT_FLOAT32));
    SY_TRY(scalar_input(n, 1, "update count T", SY_DT_INT64));
    for (uint32_t i = 0; i < cnt; i++) {
        const sy_tensor *x;
        SY_TRY(sy_need_input(H, n, 2 + i, &x));
        if (x->dtype != SY_DT_FLOAT32)
            return ERR(SY_ERR_TYPE, "%s: X_%u is %s; only float32 tensors are optimized", op, i + 1,
                       sy_dt_name(x->dtype));
        for (uint32_t g = 1; g < groups; g++) {
            const sy_tensor *t;
            SY_TRY(sy_need_input(H, n, 2 + g * cnt + i, &t));
            if (t->dtype != x->dtype || !sy_shape_equal(t->rank, t->dims, x->rank, x->dims))
                return ERR(SY_ERR_SHAPE, "%s: input %u must have X_%u's type and shape", op, 2 + g * cnt + i, i + 1);
        }
        for (uint32_t g = 0; g + 1 < groups; g++)
            SY_TRY(H->node_set_output(n, g * cnt + i, x->dtype, x->rank, x->dims));
    }
    return NULL;
}

static sy_status *required_float(sy_node *n, const char *name, float *v)
{
    if (!sy_attr_has(H, n, name, SY_ATTR_FLOAT))
        return ERR(SY_ERR_INVALID_ARGUMENT, "%s needs the attribute %s", H->node_op(n), name);
    *v = sy_attr_float_or(H, n, name, 0.0f);
    return NULL;
}

static sy_status *prepare_optim(sy_node *n, void **state)
{
    optim_state s = {.kind = kind_of(H->node_op(n))};
    s.n = (H->node_num_inputs(n) - 2) / groups_of(s.kind);
    switch (s.kind) {
    case OPT_ADAGRAD:
        s.decay = sy_attr_float_or(H, n, "decay_factor", 0.0f);
        s.epsilon = sy_attr_float_or(H, n, "epsilon", 1e-6f);
        s.norm = sy_attr_float_or(H, n, "norm_coefficient", 0.0f);
        break;
    case OPT_MOMENTUM: {
        /* every attribute of Momentum is required (no defaults in the spec) */
        SY_TRY(required_float(n, "alpha", &s.alpha));
        SY_TRY(required_float(n, "beta", &s.beta));
        SY_TRY(required_float(n, "norm_coefficient", &s.norm));
        if (!sy_attr_has(H, n, "mode", SY_ATTR_STRING))
            return ERR(SY_ERR_INVALID_ARGUMENT, "Momentum needs the attribute mode (\"standard\" or \"nesterov\")");
        if (!sy_attr_string_is(H, n, "mode", "standard", "standard") &&
            !sy_attr_string_is(H, n, "mode", "standard", "nesterov")) {
            char m[32];
            sy_attr_string_or(H, n, "mode", "", m, sizeof m);
            return ERR(SY_ERR_INVALID_ARGUMENT, "Momentum mode must be \"standard\" or \"nesterov\", got \"%s\"", m);
        }
        s.nesterov = sy_attr_string_is(H, n, "mode", "standard", "nesterov");
        break;
    }
    case OPT_ADAM:
        s.alpha = sy_attr_float_or(H, n, "alpha", 0.9f);
        s.beta = sy_attr_float_or(H, n, "beta", 0.999f);
        s.epsilon = sy_attr_float_or(H, n, "epsilon", 1e-6f);
        s.norm = sy_attr_float_or(H, n, "norm_coefficient", 0.0f);
        s.norm_post = sy_attr_float_or(H, n, "norm_coefficient_post", 0.0f);
        break;
    }
    optim_state *p = malloc(sizeof *p);
    if (!p)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    *p = s;
    *state = p;
    return NULL;
}

/* The per-element formulas are trk_opt_step's (plugin_sdk/kernels/trk.c),
 * the update the FP32 training packages run on the device. */
static sy_status *run_optim(void *state, const sy_kernel_io *io)
{
    const optim_state *s = state;
    const float r = *(const float *)io->inputs[0]->data;
    const int64_t t = *(const int64_t *)io->inputs[1]->data;
    const uint32_t n = s->n;
    trk_opt o = {.epsilon = s->epsilon, .norm = s->norm, .norm_post = s->norm_post, .nesterov = s->nesterov};
    switch (s->kind) {
    case OPT_ADAGRAD:
        o.kind = TRK_ADAGRAD;
        o.r = r / (1.0f + (float)t * s->decay);
        break;
    case OPT_MOMENTUM:
        o.kind = TRK_MOMENTUM;
        o.r = r;
        o.alpha = s->alpha;
        o.beta = t > 0 ? s->beta : 1.0f;
        break;
    case OPT_ADAM:
        o.kind = TRK_ADAM;
        /* bias correction: R * sqrt(1 - beta^T) / (1 - alpha^T) once T > 0, with libm's powf and sqrtf (the
         * packages' trk_adam_rate, without libm, agrees within an ulp) */
        o.r = t > 0 ? r * sqrtf(1.0f - powf(s->beta, (float)t)) / (1.0f - powf(s->alpha, (float)t)) : r;
        o.alpha = s->alpha;
        o.beta = s->beta;
        break;
    }
#define IN(g, i) ((const float *)io->inputs[2 + (g) * n + (i)]->data)
#define OUT(g, i) ((float *)io->outputs[(g) * n + (i)]->data)
    for (uint32_t i = 0; i < n; i++) {
        int64_t len = sy_tensor_numel(io->inputs[2 + i]);
        bool adam = s->kind == OPT_ADAM;
        trk_opt_step(&o, len, IN(0, i), IN(1, i), IN(2, i), adam ? IN(3, i) : NULL, OUT(0, i), OUT(1, i),
                     adam ? OUT(2, i) : NULL);
    }
#undef IN
#undef OUT
    return NULL;
}

#define ATTR(n, t) {n, SY_ATTR_##t, false}
static const sy_attr_def a_adagrad[] = {ATTR("decay_factor", FLOAT), ATTR("epsilon", FLOAT),
                                        ATTR("norm_coefficient", FLOAT)};
static const sy_attr_def a_momentum[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT), ATTR("mode", STRING),
                                         ATTR("norm_coefficient", FLOAT)};
static const sy_attr_def a_adam[] = {ATTR("alpha", FLOAT), ATTR("beta", FLOAT), ATTR("epsilon", FLOAT),
                                     ATTR("norm_coefficient", FLOAT), ATTR("norm_coefficient_post", FLOAT)};

#define OPT_SCHEMA(op, attrs)                                                                                      \
    {sizeof(sy_op_schema), SY_TRAIN_ONNX_DOMAIN, op, 1, 2 + 3, -1, 2, -1, attrs, infer_optim, SY_NO_INPLACE, 0,     \
     "ONNX training optimizer (ai.onnx.preview.training)"}
#define OPT_KERNEL(op)                                                                                             \
    {sizeof(sy_kernel_def), SY_TRAIN_ONNX_DOMAIN, op, 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 2, 0u, NULL,       \
     prepare_optim, run_optim, sy_release_free, NULL}

const sy_op_schema sy_train_optim_schemas[] = {
    OPT_SCHEMA("Adagrad", SY_ATTRS(a_adagrad)),
    OPT_SCHEMA("Momentum", SY_ATTRS(a_momentum)),
    OPT_SCHEMA("Adam", SY_ATTRS(a_adam)),
};
const uint32_t sy_train_optim_n_schemas = SY_COUNT_OF(sy_train_optim_schemas);

const sy_kernel_def sy_train_optim_kernels[] = {OPT_KERNEL("Adagrad"), OPT_KERNEL("Momentum"), OPT_KERNEL("Adam")};
const uint32_t sy_train_optim_n_kernels = SY_COUNT_OF(sy_train_optim_kernels);
