/* sy_train_chain_read: the artifacts of sy_train_build as the chain of
 * layers an FP32 training package runs (switchyard codegen --train --mode
 * fp32): forward.onnx's nodes, one after another, and the optimizer node's
 * attributes. The package's kernels (plugin_sdk/kernels/trk.c, tflk) take
 * these forms only; any other node is refused naming it. */
#include "train_internal.h"
#include "tl_files.h"

#include <switchyard/sy_train.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SY_TRY(e)                                                                                                  \
    do {                                                                                                           \
        sy_status *st_ = (e);                                                                                      \
        if (st_)                                                                                                   \
            return st_;                                                                                            \
    } while (0)

typedef struct chain_priv {
    sy_train_chain pub; /* first: the pointer handed out */
    Onnx__ModelProto *fwd, *opt;
    float **owned;
    size_t n_owned;
} chain_priv;

static sy_status *load(const char *dir, const char *file, Onnx__ModelProto **m)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "training artifacts: path too long");
    uint8_t *data = NULL;
    size_t size = 0;
    SY_TRY(tl_read_file(path, &data, &size));
    *m = onnx__model_proto__unpack(NULL, size, data);
    free(data);
    if (!*m || !(*m)->graph)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s is not an ONNX model", path);
    return NULL;
}

static const Onnx__TensorProto *init_of(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    return NULL;
}

static const Onnx__AttributeProto *attr_of(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}

static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = attr_of(n, name);
    return a && a->has_i ? a->i : def;
}

static float attr_f(const Onnx__NodeProto *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = attr_of(n, name);
    return a && a->has_f ? a->f : def;
}

/* every entry of an ints attribute equals v (absent: the default v) */
static bool ints_all(const Onnx__NodeProto *n, const char *name, int64_t v)
{
    const Onnx__AttributeProto *a = attr_of(n, name);
    for (size_t i = 0; a && i < a->n_ints; i++)
        if (a->ints[i] != v)
            return false;
    return true;
}

/* a float initializer's values, copied (aligned) */
static sy_status *floats(chain_priv *c, const Onnx__TensorProto *t, const float **out, int64_t *numel)
{
    int64_t n = 1;
    for (size_t d = 0; d < t->n_dims; d++)
        n *= t->dims[d];
    size_t have = t->has_raw_data ? t->raw_data.len : t->n_float_data * 4;
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || n < 1 || have != (size_t)n * 4)
        return sy_status_create(SY_ERR_INVALID_MODEL, "initializer '%s' is not float32 data of its shape", t->name);
    float *v = malloc(have);
    float **o = realloc(c->owned, (c->n_owned + 1) * sizeof *o);
    if (!v || !o) {
        free(v);
        if (o)
            c->owned = o;
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    c->owned = o;
    c->owned[c->n_owned++] = v;
    memcpy(v, t->has_raw_data ? (const void *)t->raw_data.data : (const void *)t->float_data, have);
    *out = v;
    *numel = n;
    return NULL;
}

#define REFUSE(...) sy_status_create(SY_ERR_UNSUPPORTED, __VA_ARGS__)

static sy_status *node_layer(chain_priv *c, const Onnx__GraphProto *g, const Onnx__NodeProto *n, const char *cur,
                             sy_train_layer *prev, sy_train_layer *L)
{
    const char *op = n->op_type;
    const char *nm = n->name && *n->name ? n->name : "";
    if (n->n_input < 1 || strcmp(n->input[0], cur) || n->n_output < 1)
        return REFUSE("node '%s' (%s) does not read the previous layer's output: an FP32 training package runs a chain",
                      nm, op);
    memset(L, 0, sizeof *L);
    L->name = nm;
    L->ic = prev->oc, L->ih = prev->oh, L->iw = prev->ow;
    L->oc = L->ic, L->oh = L->ih, L->ow = L->iw;
    if (!strcmp(op, "Relu")) {
        L->kind = SY_TRAIN_LAYER_RELU;
        return NULL;
    }
    if (!strcmp(op, "Flatten") || !strcmp(op, "Reshape")) {
        const Onnx__TensorProto *sh = n->n_input > 1 ? init_of(g, n->input[1]) : NULL;
        if (!strcmp(op, "Flatten") ? attr_i(n, "axis", 1) != 1
                                   : !sh || sh->n_dims != 1 || sh->dims[0] != 2 || !sh->n_int64_data ||
                                         (sh->int64_data[1] != -1 && sh->int64_data[1] != L->ic * L->ih * L->iw))
            return REFUSE("node '%s' (%s): an FP32 training package flattens to [N, C*H*W] only", nm, op);
        L->kind = SY_TRAIN_LAYER_FLATTEN;
        L->oc = L->ic * L->ih * L->iw, L->oh = L->ow = 1;
        return NULL;
    }
    if (!strcmp(op, "Concat")) {
        if (n->n_input != 2 || strcmp(n->input[1], cur) || attr_i(n, "axis", 0) != 1 || L->ih * L->iw == 1)
            return REFUSE("node '%s' (Concat): an FP32 training package concatenates a value with itself on the "
                          "channel axis only", nm);
        L->kind = SY_TRAIN_LAYER_CONCAT_SELF;
        L->oc = 2 * L->ic;
        return NULL;
    }
    if (!strcmp(op, "Conv")) {
        const Onnx__TensorProto *w = n->n_input > 1 ? init_of(g, n->input[1]) : NULL;
        const Onnx__AttributeProto *ap = attr_of(n, "auto_pad");
        const Onnx__AttributeProto *pads = attr_of(n, "pads");
        if (!w || w->n_dims != 4 || w->dims[0] != L->ic || w->dims[1] != 1 || attr_i(n, "group", 1) != L->ic ||
            (n->n_input > 2 && *n->input[2]) || !ints_all(n, "strides", 1) || !ints_all(n, "dilations", 1) ||
            (ap && ap->s.len && !(ap->s.len == 6 && !memcmp(ap->s.data, "NOTSET", 6))) ||
            (pads && pads->n_ints != 4) || L->ih * L->iw == 1)
            return REFUSE("node '%s' (Conv): an FP32 training package takes the seed's FP32 Conv only: depthwise "
                          "(group = C_in = C_out, W [C, 1, kh, kw]), stride 1, dilation 1, explicit pads, no bias", nm);
        L->kind = SY_TRAIN_LAYER_CONV_DW;
        L->kh = w->dims[2], L->kw = w->dims[3];
        int64_t p[4] = {0, 0, 0, 0};
        for (size_t i = 0; pads && i < 4; i++)
            p[i] = pads->ints[i];
        if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0)
            return REFUSE("node '%s' (Conv): negative pads", nm);
        L->pt = p[0], L->pl = p[1];
        L->oh = L->ih + p[0] + p[2] - L->kh + 1, L->ow = L->iw + p[1] + p[3] - L->kw + 1;
        if (L->oh < 1 || L->ow < 1)
            return REFUSE("node '%s' (Conv): an empty output", nm);
        L->w_name = w->name;
        return floats(c, w, &L->w, &L->w_numel);
    }
    if (!strcmp(op, "Gemm")) {
        const Onnx__TensorProto *w = n->n_input > 1 ? init_of(g, n->input[1]) : NULL;
        const Onnx__TensorProto *b = n->n_input > 2 && *n->input[2] ? init_of(g, n->input[2]) : NULL;
        int64_t k = L->ic * L->ih * L->iw;
        if (!w || w->n_dims != 2 || w->dims[1] != k || attr_i(n, "transA", 0) || attr_i(n, "transB", 0) != 1 ||
            attr_f(n, "alpha", 1.0f) != 1.0f || attr_f(n, "beta", 1.0f) != 1.0f || L->ih * L->iw != 1 ||
            (n->n_input > 2 && *n->input[2] && (!b || b->n_dims != 1 || b->dims[0] != w->dims[0])))
            return REFUSE("node '%s' (Gemm): an FP32 training package takes Gemm with A [1, K] not transposed, a "
                          "constant B [O, K] transposed, an optional constant C [O], alpha = beta = 1", nm);
        L->kind = SY_TRAIN_LAYER_GEMM;
        L->ic = k, L->ih = L->iw = 1;
        L->oc = w->dims[0], L->oh = L->ow = 1;
        L->w_name = w->name;
        SY_TRY(floats(c, w, &L->w, &L->w_numel));
        if (b) {
            L->b_name = b->name;
            SY_TRY(floats(c, b, &L->b, &L->b_numel));
        }
        return NULL;
    }
    return REFUSE("node '%s' (%s): an FP32 training package runs depthwise Conv, Relu, Flatten/Reshape, Concat of a "
                  "value with itself and Gemm (B transposed) only", nm, op);
}

static sy_status *read_chain(chain_priv *c, const char *dir)
{
    SY_TRY(load(dir, TR_FORWARD_FILE, &c->fwd));
    SY_TRY(load(dir, TR_OPTIMIZER_FILE, &c->opt));
    const Onnx__GraphProto *g = c->fwd->graph;
    /* the one data input: the graph input that is no initializer */
    const Onnx__ValueInfoProto *in = NULL;
    for (size_t i = 0; i < g->n_input; i++)
        if (!init_of(g, g->input[i]->name)) {
            if (in)
                return REFUSE("an FP32 training package takes one data input ('%s' and '%s')", in->name,
                              g->input[i]->name);
            in = g->input[i];
        }
    const Onnx__TypeProto__Tensor *tt = in && in->type ? in->type->tensor_type : NULL;
    const Onnx__TensorShapeProto *sh = tt ? tt->shape : NULL;
    if (!sh || (sh->n_dim != 4 && sh->n_dim != 2) || !tt->has_elem_type ||
        tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return REFUSE("an FP32 training package takes a float32 input [N, C, H, W] or [N, K]");
    sy_train_layer src = {0};
    int64_t d[3] = {1, 1, 1};
    for (size_t i = 1; i < sh->n_dim; i++) {
        if (sh->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || sh->dim[i]->dim_value < 1)
            return REFUSE("input '%s': dimension %zu is not a fixed size", in->name, i);
        d[i - 1] = sh->dim[i]->dim_value;
    }
    src.oc = d[0], src.oh = d[1], src.ow = d[2];
    c->pub.layers = calloc(g->n_node ? g->n_node : 1, sizeof *c->pub.layers);
    if (!c->pub.layers)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    const char *cur = in->name;
    sy_train_layer *prev = &src;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        /* a final Softmax: the loss reads its input (the logits) */
        if (i + 1 == g->n_node && !strcmp(n->op_type, "Softmax") && c->pub.n_layers)
            break;
        sy_train_layer *L = &c->pub.layers[c->pub.n_layers];
        SY_TRY(node_layer(c, g, n, cur, prev, L));
        c->pub.n_layers++;
        cur = n->output[0];
        prev = L;
    }
    if (!c->pub.n_layers || prev->kind != SY_TRAIN_LAYER_GEMM)
        return REFUSE("an FP32 training package's chain ends in a Gemm (the logits)");
    const Onnx__GraphProto *og = c->opt->graph;
    if (og->n_node != 1)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s/%s: one optimizer node expected", dir, TR_OPTIMIZER_FILE);
    const Onnx__NodeProto *on = og->node[0];
    if (!strcmp(on->op_type, "Adam")) {
        c->pub.optimizer = SY_TRAIN_ADAM;
        c->pub.alpha = attr_f(on, "alpha", 0.9f);
        c->pub.beta = attr_f(on, "beta", 0.999f);
        c->pub.epsilon = attr_f(on, "epsilon", 1e-6f);
        if (attr_f(on, "norm_coefficient_post", 0.0f) != 0.0f)
            return REFUSE("Adam's norm_coefficient_post is not taken by FP32 training packages");
    } else if (!strcmp(on->op_type, "Momentum")) {
        c->pub.optimizer = SY_TRAIN_SGD;
        c->pub.alpha = attr_f(on, "alpha", 0.0f);
        c->pub.beta = attr_f(on, "beta", 1.0f);
        const Onnx__AttributeProto *m = attr_of(on, "mode");
        c->pub.nesterov = m && m->s.len == 8 && !memcmp(m->s.data, "nesterov", 8);
    } else
        return REFUSE("optimizer %s: FP32 training packages run Momentum or Adam", on->op_type);
    c->pub.norm = attr_f(on, "norm_coefficient", 0.0f);
    return NULL;
}

SY_EXPORT sy_status *sy_train_chain_read(const char *dir, sy_train_chain **out)
{
    if (!dir || !out)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_chain_read: dir and out are required");
    *out = NULL;
    chain_priv *c = calloc(1, sizeof *c);
    if (!c)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = read_chain(c, dir);
    if (st) {
        sy_train_chain_free(&c->pub);
        return st;
    }
    *out = &c->pub;
    return NULL;
}

SY_EXPORT void sy_train_chain_free(sy_train_chain *pub)
{
    chain_priv *c = (chain_priv *)pub;
    if (!c)
        return;
    for (size_t i = 0; i < c->n_owned; i++)
        free(c->owned[i]);
    free(c->owned);
    free(c->pub.layers);
    if (c->fwd)
        onnx__model_proto__free_unpacked(c->fwd, NULL);
    if (c->opt)
        onnx__model_proto__free_unpacked(c->opt, NULL);
    free(c);
}
