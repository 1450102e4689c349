/* sy_train_build: a forward ONNX model, a loss and a trainable set become
 * the training artifacts (sy_train.h):
 *
 *   1. the trainable tensors are chosen among the float initializers that
 *      are weight or bias operands (Conv W/B, Gemm B/C, MatMul operands,
 *      constant operands of Add/Sub/Mul);
 *   2. the forward nodes the loss needs are copied, the trainable tensors
 *      becoming graph inputs, the data inputs getting a symbolic batch;
 *   3. the loss node and its gradient seed are appended, then the backward
 *      pass in reverse node order (train_autodiff.c), only through values
 *      that lead to a trainable tensor;
 *   4. training.onnx outputs the loss, one gradient per trainable tensor
 *      (grad.NAME) and what the loss read (logits or prediction); eval.onnx the loss and the model output;
 *      optimizer.onnx holds one Adam or Momentum node over all of them;
 *      checkpoint.onnx the initial tensors, zero optimizer state and step 0;
 *      forward.onnx the model as given (the export starts from it).
 * A TFLite model is first translated into an ONNX forward model
 * (train_tflite.c), which forward.onnx then holds; source.tflite keeps the
 * original for the .tflite export.
 * Every file goes through a temporary file and a rename. */
#include "train_internal.h"
#include "train_tflite.h"
#include "tl_files.h"

#include <switchyard/sy_train.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FLOAT_T ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define INT64_T ONNX__TENSOR_PROTO__DATA_TYPE__INT64

typedef struct build {
    tl_pool pl;
    const sy_train_build_options *o;
    Onnx__ModelProto *model;
    const Onnx__GraphProto *fg;
    int64_t opset;
    /* the trainable initializers, in the order they are first read */
    const Onnx__TensorProto **train;
    size_t n_train;
    const char *output;  /* the model output the loss reads */
    const char *logits;  /* what the loss takes (the input of a final Softmax for cross-entropy) */
    bool *keep;          /* forward nodes the loss needs */
    tr_rules *rules;     /* the target's training table; NULL the host */
    char err[640];
} build;

static sy_status *fail(build *b, sy_status_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static sy_status *fail(build *b, sy_status_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->err, sizeof b->err, fmt, ap);
    va_end(ap);
    return sy_status_create(code, "sy_train_build: %s", b->err);
}

static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (!strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    return NULL;
}

static bool is_trained(const build *b, const char *name)
{
    for (size_t i = 0; i < b->n_train; i++)
        if (!strcmp(b->train[i]->name, name))
            return true;
    return false;
}

static long producer(const Onnx__GraphProto *g, const char *v)
{
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!strcmp(g->node[i]->output[k], v))
                return (long)i;
    return -1;
}

/* The operand slots that hold weights (w) and biases of an operator. */
static bool weight_slot(const char *op, size_t slot, bool *bias)
{
    *bias = false;
    if (!strcmp(op, "Conv") || !strcmp(op, "Gemm")) {
        *bias = slot == 2;
        return slot == 1 || slot == 2;
    }
    if (!strcmp(op, "MatMul"))
        return slot <= 1;
    if (!strcmp(op, "Add") || !strcmp(op, "Sub")) {
        *bias = true;
        return slot <= 1;
    }
    return !strcmp(op, "Mul") && slot <= 1;
}

/* A value that a weight slot reads directly or through view operators
 * (mnist-8 reshapes its MatMul weight before use); *bias as weight_slot's. */
static bool reaches_weight_slot(const Onnx__GraphProto *g, const char *v, bool *bias, int depth)
{
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        for (size_t k = 0; k < n->n_input; k++) {
            if (strcmp(n->input[k], v))
                continue;
            if (weight_slot(n->op_type, k, bias))
                return true;
            bool view = !strcmp(n->op_type, "Reshape") || !strcmp(n->op_type, "Transpose") ||
                        !strcmp(n->op_type, "Identity") || !strcmp(n->op_type, "Flatten") ||
                        !strcmp(n->op_type, "Squeeze") || !strcmp(n->op_type, "Unsqueeze");
            if (view && k == 0 && depth < 4 && n->n_output && reaches_weight_slot(g, n->output[0], bias, depth + 1))
                return true;
        }
    }
    return false;
}

/* input k of n is a weight: a weight slot, or the data input of a view
 * operator whose result reaches one */
static bool slot_of(const Onnx__GraphProto *g, const Onnx__NodeProto *n, size_t k, bool *bias)
{
    if (weight_slot(n->op_type, k, bias))
        return true;
    bool view = !strcmp(n->op_type, "Reshape") || !strcmp(n->op_type, "Transpose") || !strcmp(n->op_type, "Identity");
    return view && k == 0 && n->n_output && reaches_weight_slot(g, n->output[0], bias, 0);
}

static sy_status *choose_trainable(build *b)
{
    const Onnx__GraphProto *g = b->fg;
    size_t layers = 0, first_layer = 0;
    /* count layers (nodes with a weight initializer) to find where the last K start */
    for (size_t i = 0; i < g->n_node; i++) {
        bool bias, any = false;
        for (size_t k = 0; k < g->node[i]->n_input; k++) {
            const Onnx__TensorProto *t = find_init(g, g->node[i]->input[k]);
            any |= t && t->data_type == FLOAT_T && slot_of(g, g->node[i], k, &bias);
        }
        layers += any;
    }
    if (b->o->trainable == SY_TRAIN_LAST_K) {
        if (b->o->last_k < 1)
            return fail(b, SY_ERR_INVALID_ARGUMENT, "last_k must be >= 1, got %d", b->o->last_k);
        first_layer = layers > (size_t)b->o->last_k ? layers - (size_t)b->o->last_k : 0;
    }
    b->train = tl_alloc(&b->pl, (g->n_initializer ? g->n_initializer : 1) * sizeof *b->train);
    if (!b->train)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory");
    size_t layer = 0;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        bool any = false;
        for (size_t k = 0; k < n->n_input; k++) {
            bool bias;
            const Onnx__TensorProto *t = find_init(g, n->input[k]);
            if (!t || t->data_type != FLOAT_T || !slot_of(g, n, k, &bias))
                continue;
            any = true;
            bool want = b->o->trainable == SY_TRAIN_ALL || (b->o->trainable == SY_TRAIN_LAST_K && layer >= first_layer) ||
                        (b->o->trainable == SY_TRAIN_BIASES && bias);
            if (want && !is_trained(b, t->name)) {
                if (t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
                    return fail(b, SY_ERR_UNSUPPORTED, "trainable tensor '%s' is stored as external data", t->name);
                b->train[b->n_train++] = t;
            }
        }
        layer += any;
    }
    if (!b->n_train)
        return fail(b, SY_ERR_INVALID_ARGUMENT, "no trainable tensor: the model has no float weight or bias %s",
                    b->o->trainable == SY_TRAIN_BIASES ? "operand of Conv/Gemm/Add/Sub (biases only)" : "initializer");
    return NULL;
}

/* Marks the forward nodes the loss needs (backward reachability from logits). */
static bool mark_needed(build *b)
{
    const Onnx__GraphProto *g = b->fg;
    b->keep = tl_alloc(&b->pl, (g->n_node ? g->n_node : 1) * sizeof *b->keep);
    if (!b->keep)
        return false;
    long p = producer(g, b->logits);
    if (p >= 0)
        b->keep[p] = true;
    for (long i = (long)g->n_node - 1; i >= 0; i--) {
        if (!b->keep[i])
            continue;
        for (size_t k = 0; k < g->node[i]->n_input; k++) {
            long q = g->node[i]->input[k][0] ? producer(g, g->node[i]->input[k]) : -1;
            if (q >= 0)
                b->keep[q] = true;
        }
    }
    return true;
}

static const Onnx__ValueInfoProto *graph_output_info(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_output; i++)
        if (!strcmp(g->output[i]->name, name))
            return g->output[i];
    return NULL;
}

/* data inputs (not initializers), labels, then the trainable tensors */
static bool add_inputs(build *b, tr_graph *g)
{
    const Onnx__GraphProto *f = b->fg;
    for (size_t i = 0; i < f->n_input; i++)
        if (!find_init(f, f->input[i]->name)) {
            const Onnx__ValueInfoProto *vi = f->input[i];
            int elem = vi->type && vi->type->tensor_type ? vi->type->tensor_type->elem_type : FLOAT_T;
            if (!tr_add_input(g, tr_with_batch(g->pl, vi, vi->name, elem)))
                return false;
        }
    Onnx__ValueInfoProto *lab;
    if (b->o->loss == SY_TRAIN_LOSS_CROSS_ENTROPY) {
        lab = tr_with_batch(g->pl, NULL, TR_LABELS, INT64_T);
    } else {
        lab = tr_with_batch(g->pl, graph_output_info(f, b->output), TR_LABELS, FLOAT_T);
    }
    if (!tr_add_input(g, lab))
        return false;
    for (size_t i = 0; i < b->n_train; i++) {
        const Onnx__TensorProto *t = b->train[i];
        if (!tr_add_input(g, tl_value_info(g->pl, t->name, FLOAT_T, t->dims, t->n_dims)))
            return false;
    }
    return true;
}

/* the kept forward nodes and the initializers that stay constant */
static bool add_forward(build *b, tr_graph *g, size_t *count)
{
    const Onnx__GraphProto *f = b->fg;
    for (size_t i = 0; i < f->n_initializer; i++)
        if (!is_trained(b, f->initializer[i]->name) && !tr_add_init(g, f->initializer[i]))
            return false;
    for (size_t i = 0; i < f->n_node; i++) {
        if (!b->keep[i])
            continue;
        const Onnx__NodeProto *n = f->node[i];
        tr_node *c = tr_add_node(g, n->op_type, n->domain, (const char *const *)n->input, n->n_input,
                                 (const char *const *)n->output, n->n_output);
        if (!c)
            return false;
        if (n->name && *n->name)
            c->name = tl_strdup(g->pl, n->name);
        for (size_t k = 0; k < n->n_attribute; k++)
            if (!tr_node_copy_attr(g, c, n->attribute[k]))
                return false;
        (*count)++;
    }
    return true;
}

static bool add_loss(build *b, tr_graph *g)
{
    const char *op = b->o->loss == SY_TRAIN_LOSS_CROSS_ENTROPY ? "SoftmaxCrossEntropy" : "MeanSquaredError";
    return tr_add_node(g, op, TR_DOMAIN, (const char *[]){b->logits, TR_LABELS}, 2, (const char *[]){TR_LOSS}, 1) &&
           tr_add_output(g, tl_value_info(g->pl, TR_LOSS, FLOAT_T, NULL, 0));
}

static sy_status *write_file(const char *dir, const char *file, const uint8_t *buf, size_t len)
{
    char path[4096];
    if (!buf)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory packing %s", file);
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, file) >= sizeof path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: output folder path too long");
    return tl_write_atomic(path, buf, len, NULL, 0);
}

/* training.onnx: forward, loss, backward, gradients out */
static sy_status *build_training(build *b, const char *dir, sy_train_build_report *rep)
{
    tl_pool pl = {0};
    tr_graph g = {.pl = &pl};
    tr_autodiff ad = {.g = &g, .fwd = b->fg, .opset = b->opset, .rules = b->rules};
    sy_status *st = NULL;
    size_t fwd_nodes = 0;
    const Onnx__GraphProto *f = b->fg;
    /* every forward value: graph inputs, initializers, node outputs */
    size_t cap = f->n_input + f->n_initializer + 1;
    for (size_t i = 0; i < f->n_node; i++)
        cap += f->node[i]->n_output;
    ad.names = tl_alloc(&pl, cap * sizeof *ad.names);
    ad.needs = tl_alloc(&pl, cap * sizeof *ad.needs);
    ad.grad = tl_alloc(&pl, cap * sizeof *ad.grad);
    if (!ad.names || !ad.needs || !ad.grad)
        goto oom;
    /* (IR < 4 models list their initializers among the graph inputs too) */
    for (size_t i = 0; i < f->n_input; i++) {
        ad.needs[ad.n_values] = is_trained(b, f->input[i]->name);
        ad.names[ad.n_values++] = f->input[i]->name;
    }
    for (size_t i = 0; i < f->n_initializer; i++)
        if (tr_value_index(&ad, f->initializer[i]->name) < 0) {
            ad.needs[ad.n_values] = is_trained(b, f->initializer[i]->name);
            ad.names[ad.n_values++] = f->initializer[i]->name;
        }
    for (size_t i = 0; i < f->n_node; i++)
        for (size_t k = 0; k < f->node[i]->n_output; k++)
            if (f->node[i]->output[k][0])
                ad.names[ad.n_values++] = f->node[i]->output[k];
    /* a value needs a gradient when it depends on a trainable tensor */
    for (size_t i = 0; i < f->n_node; i++) {
        const Onnx__NodeProto *n = f->node[i];
        bool dep = false;
        for (size_t k = 0; k < n->n_input; k++) {
            long v = tr_value_index(&ad, n->input[k]);
            dep |= v >= 0 && ad.needs[v];
        }
        for (size_t k = 0; dep && k < n->n_output; k++) {
            long v = tr_value_index(&ad, n->output[k]);
            if (v >= 0)
                ad.needs[v] = true;
        }
    }
    if (!add_inputs(b, &g) || !add_forward(b, &g, &fwd_nodes) || !add_loss(b, &g))
        goto oom;
    /* the gradient seed: d loss / d logits for dL = 1 */
    static const float one = 1.0f;
    if (!tr_add_init(&g, tl_tensor(&pl, "train.one", FLOAT_T, (const int64_t[]){1}, 1, &one, 4)))
        goto oom;
    const char *seed_op = b->o->loss == SY_TRAIN_LOSS_CROSS_ENTROPY ? "SoftmaxCrossEntropyGrad" : "MSEGrad";
    char *dl = tr_uniq(&g, b->logits, "d");
    if (!dl || !tr_add_node(&g, seed_op, TR_DOMAIN, (const char *[]){"train.one", b->logits, TR_LABELS}, 3,
                            (const char *[]){dl}, 1))
        goto oom;
    long li = tr_value_index(&ad, b->logits);
    if (li < 0) {
        st = fail(b, SY_ERR_INVALID_MODEL, "the loss input '%s' is not a value of the model", b->logits);
        goto done;
    }
    ad.grad[li] = dl;
    for (long i = (long)f->n_node - 1; i >= 0; i--) {
        if (!b->keep[i])
            continue;
        int rc = tr_backward_node(&ad, f->node[i]);
        if (rc < 0)
            goto oom;
        if (rc > 0) {
            st = fail(b, SY_ERR_UNSUPPORTED, "%s", ad.err);
            goto done;
        }
    }
    for (size_t i = 0; i < b->n_train; i++) {
        long v = tr_value_index(&ad, b->train[i]->name);
        if (v < 0 || !ad.grad[v]) {
            st = fail(b, SY_ERR_INVALID_ARGUMENT, "trainable tensor '%s' does not reach the loss", b->train[i]->name);
            goto done;
        }
        char *gname = tl_printf(&pl, "grad.%s", b->train[i]->name);
        if (!gname || !tr_add_node(&g, "Identity", "", (const char *[]){ad.grad[v]}, 1, (const char *[]){gname}, 1) ||
            !tr_add_output(&g, tl_value_info(&pl, gname, FLOAT_T, b->train[i]->dims, b->train[i]->n_dims)))
            goto oom;
    }
    /* last: what the loss read, so a step also reports the batch's predictions */
    if (!tr_add_output(&g, tr_value_name(&pl, b->logits)))
        goto oom;
    size_t len;
    uint8_t *buf = tr_pack(&g, b->model, b->opset, &len);
    st = write_file(dir, TR_TRAINING_FILE, buf, len);
    free(buf);
    if (rep) {
        rep->forward_nodes = fwd_nodes;
        rep->backward_nodes = ad.backward_nodes;
    }
    goto done;
oom:
    st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory building the training graph");
done:
    tl_pool_free(&pl);
    return st;
}

/* eval.onnx: forward and loss; outputs the loss and the model output */
static sy_status *build_eval(build *b, const char *dir)
{
    tl_pool pl = {0};
    tr_graph g = {.pl = &pl};
    size_t count = 0;
    sy_status *st = NULL;
    long p = producer(b->fg, b->output);
    if (p >= 0)
        b->keep[p] = true; /* the final Softmax when the loss looked through it */
    if (!add_inputs(b, &g) || !add_forward(b, &g, &count) || !add_loss(b, &g) ||
        !tr_add_output(&g, tr_value_name(&pl, b->output)))
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory building the eval graph");
    if (!st) {
        size_t len;
        uint8_t *buf = tr_pack(&g, b->model, b->opset, &len);
        st = write_file(dir, TR_EVAL_FILE, buf, len);
        free(buf);
    }
    tl_pool_free(&pl);
    return st;
}

/* number of optimizer state tensors per trainable tensor */
static int state_groups(const build *b) { return b->o->optimizer == SY_TRAIN_ADAM ? 2 : 1; }

static const char *state_name(tl_pool *p, const char *param, int k)
{
    return tl_printf(p, "%s.%s", param, k == 0 ? "m" : "v");
}

/* optimizer.onnx: lr, step, X..., G..., state... -> new X..., new state... */
static sy_status *build_optimizer(build *b, const char *dir)
{
    tl_pool pl = {0};
    tr_graph g = {.pl = &pl};
    const size_t n = b->n_train;
    const int sg = state_groups(b);
    size_t nin = 2 + n * (size_t)(2 + sg), nout = n * (size_t)(1 + sg);
    const char **in = tl_alloc(&pl, nin * sizeof *in), **out = tl_alloc(&pl, nout * sizeof *out);
    sy_status *st = NULL;
    if (!in || !out)
        goto oom;
    in[0] = TR_LR;
    in[1] = TR_STEP;
    if (!tr_add_input(&g, tl_value_info(&pl, TR_LR, FLOAT_T, NULL, 0)) ||
        !tr_add_input(&g, tl_value_info(&pl, TR_STEP, INT64_T, NULL, 0)))
        goto oom;
    for (int grp = 0; grp < 2 + sg; grp++)
        for (size_t i = 0; i < n; i++) {
            const Onnx__TensorProto *t = b->train[i];
            const char *nm = grp == 0 ? t->name : grp == 1 ? tl_printf(&pl, "grad.%s", t->name) : state_name(&pl, t->name, grp - 2);
            in[2 + (size_t)grp * n + i] = nm;
            if (!nm || !tr_add_input(&g, tl_value_info(&pl, nm, FLOAT_T, t->dims, t->n_dims)))
                goto oom;
        }
    for (int grp = 0; grp < 1 + sg; grp++)
        for (size_t i = 0; i < n; i++) {
            const Onnx__TensorProto *t = b->train[i];
            const char *nm = tl_printf(&pl, "new.%s", grp == 0 ? t->name : state_name(&pl, t->name, grp - 1));
            out[(size_t)grp * n + i] = nm;
            if (!nm || !tr_add_output(&g, tl_value_info(&pl, nm, FLOAT_T, t->dims, t->n_dims)))
                goto oom;
        }
    const sy_train_build_options *o = b->o;
    tr_node *node = tr_add_node(&g, o->optimizer == SY_TRAIN_ADAM ? "Adam" : "Momentum", TR_ONNX_DOMAIN, in, nin,
                                out, nout);
    if (!node)
        goto oom;
#define FATTR(aname, v)                                                                                            \
    do {                                                                                                           \
        Onnx__AttributeProto *a = tl_alloc(&pl, sizeof *a);                                                        \
        if (!a)                                                                                                    \
            goto oom;                                                                                              \
        onnx__attribute_proto__init(a);                                                                            \
        a->name = aname;                                                                                            \
        a->has_type = 1;                                                                                           \
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;                                                    \
        a->has_f = 1;                                                                                              \
        a->f = (v);                                                                                                \
        if (!tr_node_attr(&g, node, a))                                                                            \
            goto oom;                                                                                              \
    } while (0)
    if (o->optimizer == SY_TRAIN_ADAM) {
        FATTR("alpha", o->beta1 > 0 ? o->beta1 : 0.9f);
        FATTR("beta", o->beta2 > 0 ? o->beta2 : 0.999f);
        FATTR("epsilon", o->epsilon > 0 ? o->epsilon : 1e-8f);
        FATTR("norm_coefficient", o->weight_decay);
    } else {
        /* V' = momentum V + G; X' = X - lr V' (plain SGD at momentum 0) */
        FATTR("alpha", o->momentum);
        FATTR("beta", 1.0f);
        FATTR("norm_coefficient", o->weight_decay);
        Onnx__AttributeProto *a = tl_alloc(&pl, sizeof *a);
        if (!a)
            goto oom;
        onnx__attribute_proto__init(a);
        a->name = "mode";
        a->has_type = 1;
        a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        a->has_s = 1;
        a->s.data = (uint8_t *)"standard";
        a->s.len = 8;
        if (!tr_node_attr(&g, node, a))
            goto oom;
    }
#undef FATTR
    size_t len;
    uint8_t *buf = tr_pack(&g, b->model, b->opset, &len);
    st = write_file(dir, TR_OPTIMIZER_FILE, buf, len);
    free(buf);
    goto done;
oom:
    st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory building the optimizer graph");
done:
    tl_pool_free(&pl);
    return st;
}

/* checkpoint.onnx: the trainable tensors as they are, zero state, step 0 */
static sy_status *build_checkpoint(build *b, const char *dir, int64_t *elements)
{
    tl_pool pl = {0};
    tr_graph g = {.pl = &pl};
    sy_status *st = NULL;
    static const int64_t zero = 0;
    *elements = 0;
    for (size_t i = 0; i < b->n_train && !st; i++) {
        const Onnx__TensorProto *t = b->train[i];
        int64_t numel = 1;
        for (size_t d = 0; d < t->n_dims; d++)
            numel *= t->dims[d];
        *elements += numel;
        if (!tr_add_init(&g, (Onnx__TensorProto *)t))
            goto oom;
        for (int k = 0; k < state_groups(b); k++) {
            float *z = tl_alloc(&pl, (size_t)(numel ? numel : 1) * sizeof *z);
            if (!z || !tr_add_init(&g, tl_tensor(&pl, state_name(&pl, t->name, k), FLOAT_T, t->dims, t->n_dims, z,
                                                  (size_t)numel * 4)))
                goto oom;
        }
    }
    if (!tr_add_init(&g, tl_tensor(&pl, TR_STEP, INT64_T, NULL, 0, &zero, 8)))
        goto oom;
    size_t len;
    uint8_t *buf = tr_pack(&g, b->model, b->opset, &len);
    st = write_file(dir, TR_CHECKPOINT_FILE, buf, len);
    free(buf);
    goto done;
oom:
    st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory writing the checkpoint");
done:
    tl_pool_free(&pl);
    return st;
}

SY_EXPORT sy_status *sy_train_build(const char *model_path, const sy_train_build_options *opts, const char *out_dir,
                                    sy_train_build_report *report)
{
    sy_train_build_options def = {.struct_size = sizeof def};
    sy_train_build_options o = def;
    if (opts)
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
    if (!model_path || !out_dir)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: model_path and out_dir are required");
    if (o.loss != SY_TRAIN_LOSS_CROSS_ENTROPY && o.loss != SY_TRAIN_LOSS_MSE)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: unknown loss %d", o.loss);
    if (o.trainable < SY_TRAIN_ALL || o.trainable > SY_TRAIN_BIASES)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: unknown trainable set %d", o.trainable);
    if (o.optimizer != SY_TRAIN_SGD && o.optimizer != SY_TRAIN_ADAM)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: unknown optimizer %d", o.optimizer);
    if (!(o.momentum >= 0.0f && o.momentum < 1.0f) || !(o.weight_decay >= 0.0f) || !isfinite(o.weight_decay))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: momentum must be in [0, 1) and weight "
                                                         "decay >= 0");
    build b = {.o = &o};
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(model_path, &data, &size);
    if (st)
        return st;
    /* a TFLite model (the FlatBuffer identifier, whatever the extension):
     * its ONNX translation is the forward model from here on, written to
     * forward.onnx now (the target's rules probe its shapes) with the
     * original next to it as source.tflite (the .tflite export rewrites it) */
    const bool from_tflite = tr_tflite_is_tflite(data, size);
    char fwd_path[4096];
    const char *probe_path = model_path;
    if (!from_tflite && o.subgraph && *o.subgraph) {
        st = sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: %s: subgraph '%s' was chosen, but this is "
                              "not a TFLite model (subgraphs are chosen in TFLite models only)", model_path,
                              o.subgraph);
        goto done;
    }
    if (from_tflite) {
        tr_tfl_model tm;
        st = tr_tflite_translate(data, size, model_path, o.subgraph, &tm);
        if (st) {
            tr_tflite_model_free(&tm);
            st = tl_status_prefix(st, "sy_train_build");
            goto done;
        }
        if ((size_t)snprintf(fwd_path, sizeof fwd_path, "%s/%s", out_dir, TR_FORWARD_FILE) >= sizeof fwd_path) {
            tr_tflite_model_free(&tm);
            st = sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_build: output folder path too long");
            goto done;
        }
        char sgi[16];
        int sgn = snprintf(sgi, sizeof sgi, "%u\n", tm.subgraph);
        if (!(st = tl_mkdirs(out_dir)) && !(st = write_file(out_dir, TR_SOURCE_TFLITE_FILE, data, size)) &&
            !(st = write_file(out_dir, TR_SOURCE_SUBGRAPH_FILE, (const uint8_t *)sgi, (size_t)sgn)))
            st = write_file(out_dir, TR_FORWARD_FILE, tm.onnx, tm.onnx_len);
        free(data);
        data = tm.onnx; /* malloc'd by the model writer */
        size = tm.onnx_len;
        tm.onnx = NULL;
        tr_tflite_model_free(&tm);
        if (st)
            goto done;
        probe_path = fwd_path;
    } else {
        /* a folder rebuilt from an ONNX model keeps no stale TFLite source */
        char src[4096];
        if ((size_t)snprintf(src, sizeof src, "%s/%s", out_dir, TR_SOURCE_TFLITE_FILE) < sizeof src)
            (void)unlink(src);
        if ((size_t)snprintf(src, sizeof src, "%s/%s", out_dir, TR_SOURCE_SUBGRAPH_FILE) < sizeof src)
            (void)unlink(src);
    }
    b.model = onnx__model_proto__unpack(NULL, size, data);
    if (!b.model || !b.model->graph) {
        st = sy_status_create(SY_ERR_INVALID_MODEL, "sy_train_build: %s is not an ONNX model", model_path);
        goto done;
    }
    b.fg = b.model->graph;
    b.opset = 1;
    for (size_t i = 0; i < b.model->n_opset_import; i++) {
        const char *d = b.model->opset_import[i]->domain;
        if (!d || !*d || !strcmp(d, "ai.onnx"))
            b.opset = b.model->opset_import[i]->version;
    }
    if (b.opset < 7) {
        st = fail(&b, SY_ERR_UNSUPPORTED, "%s: opset %lld; training needs opset 7 or newer", model_path,
                  (long long)b.opset);
        goto done;
    }
    if (!b.fg->n_output) {
        st = fail(&b, SY_ERR_INVALID_MODEL, "%s has no output", model_path);
        goto done;
    }
    b.output = o.output ? o.output : b.fg->output[0]->name;
    if (!graph_output_info(b.fg, b.output)) {
        st = fail(&b, SY_ERR_NOT_FOUND, "%s has no output named '%s'", model_path, b.output);
        goto done;
    }
    b.logits = b.output;
    long p = producer(b.fg, b.output);
    if (o.loss == SY_TRAIN_LOSS_CROSS_ENTROPY && p >= 0 && !strcmp(b.fg->node[p]->op_type, "Softmax") &&
        b.fg->node[p]->n_input)
        b.logits = b.fg->node[p]->input[0];
    if ((st = tr_rules_create(o.target, o.env, probe_path, b.fg, &b.rules)))
        goto done;
    if ((st = choose_trainable(&b)))
        goto done;
    if (!mark_needed(&b)) {
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "sy_train_build: out of memory");
        goto done;
    }
    sy_train_build_report rep = {.struct_size = sizeof rep};
    int64_t elements = 0;
    if ((st = tl_mkdirs(out_dir)) || (st = build_training(&b, out_dir, &rep)) || (st = build_eval(&b, out_dir)) ||
        (st = build_optimizer(&b, out_dir)) || (st = build_checkpoint(&b, out_dir, &elements)) ||
        (!from_tflite && (st = write_file(out_dir, TR_FORWARD_FILE, data, size))))
        goto done;
    rep.n_trainable = b.n_train;
    rep.trainable_elements = elements;
    if (report)
        memcpy(report, &rep, report->struct_size < sizeof rep ? report->struct_size : sizeof rep);
done:
    if (b.model)
        onnx__model_proto__free_unpacked(b.model, NULL);
    free(data);
    tr_rules_release(b.rules);
    tl_pool_free(&b.pl);
    return st;
}
