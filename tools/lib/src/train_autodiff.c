/* The backward rules of the training builder: for a forward node whose
 * outputs' gradients are known, the nodes that compute the gradients of its
 * inputs that need one (reverse-mode, one rule per operator). Gradients of a
 * value read by several nodes are added with Sum.
 *
 * Shapes are not known here (the artifacts keep a symbolic batch), so a
 * rule that must undo broadcasting or restore a shape takes it from a Shape
 * node of the forward value; the train plugin's ReduceToShape sums over the
 * broadcast dimensions. Every rule uses operators that exist since opset 7,
 * so the forward graph keeps its own opset. */
#include "train_internal.h"

#include <stdio.h>
#include <string.h>

long tr_value_index(const tr_autodiff *ad, const char *name)
{
    if (!name || !*name)
        return -1;
    for (size_t i = 0; i < ad->n_values; i++)
        if (!strcmp(ad->names[i], name))
            return (long)i;
    return -1;
}

static bool needs(const tr_autodiff *ad, const Onnx__NodeProto *n, size_t i)
{
    if (i >= n->n_input)
        return false;
    long v = tr_value_index(ad, n->input[i]);
    return v >= 0 && ad->needs[v];
}

/* one node of the backward pass; its single output is a fresh value */
static const char *emit1(tr_autodiff *ad, const char *op, const char *domain, const char *const *in, size_t nin,
                         const char *tag)
{
    char *out = tr_uniq(ad->g, in[0], tag);
    if (!out)
        return NULL;
    const char *outs[1] = {out};
    if (!tr_add_node(ad->g, op, domain, in, nin, outs, 1))
        return NULL;
    ad->backward_nodes++;
    return out;
}

static const char *shape_of(tr_autodiff *ad, const char *v)
{
    return emit1(ad, "Shape", "", (const char *[]){v}, 1, "shape");
}

/* sum `g` over the dims broadcasting stretched from operand `x` */
static const char *unbroadcast(tr_autodiff *ad, const char *g, const char *x)
{
    const char *s = shape_of(ad, x);
    return s ? emit1(ad, "ReduceToShape", TR_DOMAIN, (const char *[]){g, s}, 2, "rts") : NULL;
}

static const char *transpose2d(tr_autodiff *ad, const char *v)
{
    const char *out = emit1(ad, "Transpose", "", (const char *[]){v}, 1, "T");
    /* an explicit [1, 0]: a rank other than 2 is refused when planned, not
     * silently reversed */
    return out && tr_node_attr(ad->g, &ad->g->nodes[ad->g->n_nodes - 1],
                               tl_attr_ints(ad->g->pl, "perm", (const int64_t[]){1, 0}, 2))
               ? out
               : NULL;
}

static const char *scaled(tr_autodiff *ad, const char *v, float k)
{
    if (k == 1.0f)
        return v;
    char *c = tr_uniq(ad->g, v, "k");
    if (!c || !tr_add_init(ad->g, tl_tensor(ad->g->pl, c, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0, &k, 4)))
        return NULL;
    return emit1(ad, "Mul", "", (const char *[]){v, c}, 2, "scaled");
}

/* adds gradient g to value v's */
static int accumulate(tr_autodiff *ad, const char *v, const char *g)
{
    if (!g)
        return -1;
    long i = tr_value_index(ad, v);
    if (i < 0)
        return 0;
    if (!ad->grad[i]) {
        ad->grad[i] = (char *)g;
        return 0;
    }
    const char *sum = emit1(ad, "Sum", "", (const char *[]){ad->grad[i], g}, 2, "acc");
    if (!sum)
        return -1;
    ad->grad[i] = (char *)sum;
    return 0;
}

static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!strcmp(n->attribute[i]->name, name))
            return n->attribute[i];
    return NULL;
}
static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = attr(n, name);
    return a && a->has_i ? a->i : def;
}
static float attr_f(const Onnx__NodeProto *n, const char *name, float def)
{
    const Onnx__AttributeProto *a = attr(n, name);
    return a && a->has_f ? a->f : def;
}

static int refuse(tr_autodiff *ad, const Onnx__NodeProto *n, const char *why)
{
    snprintf(ad->err, sizeof ad->err, "node '%s' (%s): %s", n->name && *n->name ? n->name : "(unnamed)", n->op_type,
             why);
    return 1;
}

/* A node of the train domain with the forward node's attributes. */
static tr_node *grad_node(tr_autodiff *ad, const Onnx__NodeProto *n, const char *op, const char *const *in, size_t nin,
                          const char *const *out, size_t nout)
{
    tr_node *g = tr_add_node(ad->g, op, TR_DOMAIN, in, nin, out, nout);
    if (!g)
        return NULL;
    ad->backward_nodes++;
    for (size_t i = 0; i < n->n_attribute; i++)
        if (!tr_node_copy_attr(ad->g, g, n->attribute[i]))
            return NULL;
    return g;
}

static int conv_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    bool nx = needs(ad, n, 0), nw = needs(ad, n, 1), nb = needs(ad, n, 2);
    char *dx = nx ? tr_uniq(ad->g, n->input[0], "d") : NULL, *dw = nw ? tr_uniq(ad->g, n->input[1], "d") : NULL;
    char *db = nb ? tr_uniq(ad->g, n->input[2], "d") : NULL;
    const char *outs[3] = {dx ? dx : "", dw ? dw : "", db ? db : ""};
    size_t nout = nb ? 3 : 2;
    if (!grad_node(ad, n, "ConvGrad", (const char *[]){gy, n->input[0], n->input[1]}, 3, outs, nout))
        return -1;
    if ((nx && accumulate(ad, n->input[0], dx)) || (nw && accumulate(ad, n->input[1], dw)) ||
        (nb && accumulate(ad, n->input[2], db)))
        return -1;
    return 0;
}

static int gemm_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    const float alpha = attr_f(n, "alpha", 1.0f), beta = attr_f(n, "beta", 1.0f);
    const bool ta = attr_i(n, "transA", 0) != 0, tb = attr_i(n, "transB", 0) != 0;
    if (ad->opset < 7 && n->n_input > 2)
        return refuse(ad, n, "Gemm before opset 7 (legacy broadcast of C) has no backward rule");
    const char *a = n->input[0], *b = n->input[1];
    /* Y = alpha A' B' + beta C with A' = transA ? A^T : A, B' likewise:
     *   dA' = alpha dY B'^T, dB' = alpha A'^T dY; a transposed operand's
     *   gradient is the transpose of its primed one. */
    if (needs(ad, n, 0)) {
        const char *bt = tb ? b : transpose2d(ad, b);
        const char *ga = NULL;
        if (!ta && bt) /* dA = dY . B'^T */
            ga = emit1(ad, "MatMul", "", (const char *[]){gy, bt}, 2, "dA");
        else if (bt) { /* dA = (dY . B'^T)^T = B' . dY^T */
            const char *bp = tb ? transpose2d(ad, b) : b, *gyt = transpose2d(ad, gy);
            ga = bp && gyt ? emit1(ad, "MatMul", "", (const char *[]){bp, gyt}, 2, "dA") : NULL;
        }
        if (accumulate(ad, a, ga ? scaled(ad, ga, alpha) : NULL))
            return -1;
    }
    if (needs(ad, n, 1)) {
        const char *gb = NULL;
        if (!tb) { /* dB = A'^T . dY */
            const char *apt = ta ? a : transpose2d(ad, a);
            gb = apt ? emit1(ad, "MatMul", "", (const char *[]){apt, gy}, 2, "dB") : NULL;
        } else { /* dB = (A'^T . dY)^T = dY^T . A' */
            const char *gyt = transpose2d(ad, gy), *ap = ta ? transpose2d(ad, a) : a;
            gb = gyt && ap ? emit1(ad, "MatMul", "", (const char *[]){gyt, ap}, 2, "dB") : NULL;
        }
        if (accumulate(ad, b, gb ? scaled(ad, gb, alpha) : NULL))
            return -1;
    }
    if (needs(ad, n, 2)) {
        const char *gc = unbroadcast(ad, gy, n->input[2]);
        if (accumulate(ad, n->input[2], gc ? scaled(ad, gc, beta) : NULL))
            return -1;
    }
    return 0;
}

/* Tanh and Sigmoid from their output y (the forward value the backward
 * graph keeps anyway): dX = dY (1 - y^2) and dX = dY y (1 - y), in default-
 * domain operators so every provider that runs the forward runs these. */
static const char *squash_grad(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    const char *y = n->output[0];
    char *one = tr_uniq(ad->g, y, "one");
    const float k = 1.0f;
    if (!one || !tr_add_init(ad->g, tl_tensor(ad->g->pl, one, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, NULL, 0, &k, 4)))
        return NULL;
    const char *d = NULL;
    if (!strcmp(n->op_type, "Tanh")) {
        const char *y2 = emit1(ad, "Mul", "", (const char *[]){y, y}, 2, "sq");
        d = y2 ? emit1(ad, "Sub", "", (const char *[]){one, y2}, 2, "dtanh") : NULL;
    } else {
        const char *om = emit1(ad, "Sub", "", (const char *[]){one, y}, 2, "omy");
        d = om ? emit1(ad, "Mul", "", (const char *[]){y, om}, 2, "dsigmoid") : NULL;
    }
    return d ? emit1(ad, "Mul", "", (const char *[]){gy, d}, 2, "d") : NULL;
}

static int binary_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    const char *op = n->op_type, *a = n->input[0], *b = n->input[1];
    if (ad->opset < 7)
        return refuse(ad, n, "element-wise ops before opset 7 (legacy broadcast) have no backward rule");
    if (needs(ad, n, 0)) {
        const char *g = gy;
        if (!strcmp(op, "Mul"))
            g = emit1(ad, "Mul", "", (const char *[]){gy, b}, 2, "dA");
        else if (!strcmp(op, "Div"))
            g = emit1(ad, "Div", "", (const char *[]){gy, b}, 2, "dA");
        if (accumulate(ad, a, g ? unbroadcast(ad, g, a) : NULL))
            return -1;
    }
    if (needs(ad, n, 1)) {
        const char *g = NULL;
        if (!strcmp(op, "Add"))
            g = unbroadcast(ad, gy, b);
        else if (!strcmp(op, "Sub")) {
            const char *r = unbroadcast(ad, gy, b);
            g = r ? emit1(ad, "Neg", "", (const char *[]){r}, 1, "neg") : NULL;
        } else if (!strcmp(op, "Mul")) {
            const char *m = emit1(ad, "Mul", "", (const char *[]){gy, a}, 2, "dB");
            g = m ? unbroadcast(ad, m, b) : NULL;
        } else { /* Div: dB = -dY * Y / B */
            const char *m = emit1(ad, "Mul", "", (const char *[]){gy, n->output[0]}, 2, "dY_Y");
            const char *d = m ? emit1(ad, "Div", "", (const char *[]){m, b}, 2, "dB") : NULL;
            const char *ng = d ? emit1(ad, "Neg", "", (const char *[]){d}, 1, "neg") : NULL;
            g = ng ? unbroadcast(ad, ng, b) : NULL;
        }
        if (accumulate(ad, b, g))
            return -1;
    }
    return 0;
}

/* the int64 values of forward initializer `name` (int64 or int32), at most cap; -1 not a constant */
static long const_ints(const tr_autodiff *ad, const char *name, int64_t *out, size_t cap)
{
    for (size_t k = 0; name && *name && k < ad->fwd->n_initializer; k++) {
        const Onnx__TensorProto *t = ad->fwd->initializer[k];
        if (strcmp(t->name, name))
            continue;
        const bool i64 = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        if (!i64 && t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT32)
            return -1;
        size_t n = i64 ? (t->n_int64_data ? t->n_int64_data : t->raw_data.len / 8)
                       : (t->n_int32_data ? t->n_int32_data : t->raw_data.len / 4);
        if (n > cap)
            return -1;
        for (size_t i = 0; i < n; i++) {
            if (i64)
                out[i] = t->n_int64_data ? t->int64_data[i] : 0;
            else
                out[i] = t->n_int32_data ? t->int32_data[i] : 0;
            if (i64 && !t->n_int64_data)
                memcpy(&out[i], t->raw_data.data + 8 * i, 8);
            else if (!i64 && !t->n_int32_data) {
                int32_t v;
                memcpy(&v, t->raw_data.data + 4 * i, 4);
                out[i] = v;
            }
        }
        return (long)n;
    }
    return -1;
}

static const char *int64_const(tr_autodiff *ad, const char *base, const int64_t *v, size_t n)
{
    char *c = tr_uniq(ad->g, base, "c");
    return c && tr_add_init(ad->g, tl_tensor(ad->g->pl, c, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, (const int64_t[]){(int64_t)n},
                                             1, v, n * 8))
               ? c
               : NULL;
}

/* ReduceSum/ReduceMean: dX = Expand(dY with the reduced axes restored, Shape(X)), times Size(Y)/Size(X) for the mean */
static int reduce_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    const bool mean = !strcmp(n->op_type, "ReduceMean");
    if (attr_i(n, "noop_with_empty_axes", 0))
        return refuse(ad, n, "noop_with_empty_axes = 1 has no backward rule");
    int64_t axes[16];
    long na = 0;
    const Onnx__AttributeProto *a = attr(n, "axes");
    if (a) {
        if (a->n_ints > 16)
            return refuse(ad, n, "more than 16 axes");
        na = (long)a->n_ints;
        memcpy(axes, a->ints, a->n_ints * sizeof *axes);
    } else if (n->n_input > 1 && n->input[1][0] && (na = const_ints(ad, n->input[1], axes, 16)) < 0)
        return refuse(ad, n, "the axes are not a constant (the backward must know them)");
    const char *g = gy;
    if (!attr_i(n, "keepdims", 1) && na > 0) {
        for (long i = 0; i < na; i++)
            if (axes[i] < 0)
                return refuse(ad, n, "negative axes with keepdims = 0 have no backward rule");
        if (ad->opset >= 13) {
            const char *ax = int64_const(ad, n->input[0], axes, (size_t)na);
            g = ax ? emit1(ad, "Unsqueeze", "", (const char *[]){gy, ax}, 2, "unsq") : NULL;
        } else {
            g = emit1(ad, "Unsqueeze", "", (const char *[]){gy}, 1, "unsq");
            if (g && !tr_node_attr(ad->g, &ad->g->nodes[ad->g->n_nodes - 1], tl_attr_ints(ad->g->pl, "axes", axes, (size_t)na)))
                return -1;
        }
    }
    if (ad->opset < 8)
        return refuse(ad, n, "Expand needs opset 8");
    const char *s = g ? shape_of(ad, n->input[0]) : NULL;
    const char *gx = s ? emit1(ad, "Expand", "", (const char *[]){g, s}, 2, "d") : NULL;
    if (gx && mean) {
        const char *sx = emit1(ad, "Size", "", (const char *[]){n->input[0]}, 1, "size");
        const char *sy = emit1(ad, "Size", "", (const char *[]){n->output[0]}, 1, "size");
        const char *fx = sx ? emit1(ad, "Cast", "", (const char *[]){sx}, 1, "f") : NULL;
        if (fx && !tr_node_attr(ad->g, &ad->g->nodes[ad->g->n_nodes - 1], tl_attr_int(ad->g->pl, "to", 1)))
            return -1;
        const char *fy = sy ? emit1(ad, "Cast", "", (const char *[]){sy}, 1, "f") : NULL;
        if (fy && !tr_node_attr(ad->g, &ad->g->nodes[ad->g->n_nodes - 1], tl_attr_int(ad->g->pl, "to", 1)))
            return -1;
        const char *k = fx && fy ? emit1(ad, "Div", "", (const char *[]){fy, fx}, 2, "invN") : NULL;
        gx = k ? emit1(ad, "Mul", "", (const char *[]){gx, k}, 2, "mean") : NULL;
    }
    return accumulate(ad, n->input[0], gx);
}

/* Pad (constant mode): dX = Slice(dY, pads_begin, pads_begin + Shape(X)) over every axis */
static int pad_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    const Onnx__AttributeProto *m = attr(n, "mode");
    if (m && m->s.len && (m->s.len != 8 || memcmp(m->s.data, "constant", 8)))
        return refuse(ad, n, "only constant-mode Pad has a backward rule");
    if (ad->opset < 10)
        return refuse(ad, n, "the backward Slice needs opset 10");
    int64_t pads[32];
    long np;
    const Onnx__AttributeProto *pa = attr(n, "pads");
    if (ad->opset < 11) {
        np = pa && pa->n_ints <= 32 ? (long)pa->n_ints : -1;
        if (np > 0)
            memcpy(pads, pa->ints, (size_t)np * sizeof *pads);
    } else
        np = n->n_input > 1 ? const_ints(ad, n->input[1], pads, 32) : -1;
    if (np <= 0 || np % 2)
        return refuse(ad, n, "the pads are not a constant list of 2 x rank values");
    if (n->n_input > 3 && n->input[3][0])
        return refuse(ad, n, "Pad over selected axes has no backward rule");
    const long r = np / 2;
    int64_t axes[16];
    for (long i = 0; i < np; i++)
        if (pads[i] < 0)
            return refuse(ad, n, "negative pads (a crop) have no backward rule");
    for (long i = 0; i < r; i++)
        axes[i] = i;
    const char *st = int64_const(ad, n->input[0], pads, (size_t)r), *ax = int64_const(ad, n->input[0], axes, (size_t)r);
    const char *s = st && ax ? shape_of(ad, n->input[0]) : NULL;
    const char *en = s ? emit1(ad, "Add", "", (const char *[]){s, st}, 2, "end") : NULL;
    const char *gx = en ? emit1(ad, "Slice", "", (const char *[]){gy, st, en, ax}, 4, "d") : NULL;
    return accumulate(ad, n->input[0], gx);
}

/* Slice steps other than 1 (negative ones too): dX = zeros of Shape(X) with
 * dY's element k on each axis at starts + k·steps, the train plugin's
 * SliceGrad (trk_slice_step_grad,
 * the FP32 packages' kernel: one strided scatter, at dY's own rank, so
 * every rank of the Slice row's 1-8 has the rule; the forward operators'
 * spread of dY took twice the rank and stopped at 4). */
static int slice_steps_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy, long r, const int64_t *st,
                            const int64_t *sp)
{
    const char *sx = shape_of(ad, n->input[0]);
    char *out = sx ? tr_uniq(ad->g, gy, "d") : NULL;
    tr_node *g = out ? tr_add_node(ad->g, "SliceGrad", TR_DOMAIN, (const char *[]){gy, sx}, 2,
                                   (const char *[]){out}, 1)
                     : NULL;
    if (!g || !tr_node_attr(ad->g, g, tl_attr_ints(ad->g->pl, "starts", st, (size_t)r)) ||
        !tr_node_attr(ad->g, g, tl_attr_ints(ad->g->pl, "steps", sp, (size_t)r)))
        return -1;
    ad->backward_nodes++;
    return accumulate(ad, n->input[0], out);
}

/* Slice with constant starts and ends over every axis in order (seed 001's
 * "full-rank normalized parameters": non-negative, axes 0..rank-1) and
 * non-zero constant steps: with steps 1, dX is dY padded with zeros back to
 * X's shape, Pad(dY, [starts, Shape(X) - Min(ends, Shape(X))]) (ends past
 * the end clamp to the dim, as the forward's do); other steps,
 * slice_steps_rule's SliceGrad, which places dY from the starts alone (a
 * negative step's end, below its start, may be INT64_MIN: down to element
 * 0). */
static int slice_rule(tr_autodiff *ad, const Onnx__NodeProto *n, const char *gy)
{
    if (ad->opset < 11)
        return refuse(ad, n, "the backward Pad needs opset 11 (pads as an input)");
    int64_t st[16], en[16], ax[16], sp[16];
    long ns = n->n_input > 1 ? const_ints(ad, n->input[1], st, 16) : -1;
    long ne = n->n_input > 2 ? const_ints(ad, n->input[2], en, 16) : -1;
    if (ns <= 0 || ne != ns)
        return refuse(ad, n, "starts and ends are not constant lists of one length");
    if (n->n_input > 3 && n->input[3][0]) {
        if (const_ints(ad, n->input[3], ax, 16) != ns)
            return refuse(ad, n, "the axes are not a constant list as long as starts");
        for (long i = 0; i < ns; i++)
            if (ax[i] != i)
                return refuse(ad, n, "the axes are not 0..rank-1 in order (full-rank normalized parameters)");
    }
    bool stepped = false;
    for (long i = 0; i < ns; i++)
        sp[i] = 1;
    if (n->n_input > 4 && n->input[4][0]) {
        if (const_ints(ad, n->input[4], sp, 16) != ns)
            return refuse(ad, n, "the steps are not a constant list as long as starts");
        for (long i = 0; i < ns; i++) {
            if (sp[i] == 0)
                return refuse(ad, n, "a step of 0");
            stepped |= sp[i] != 1;
        }
    }
    for (long i = 0; i < ns; i++)
        if (st[i] < 0 || (sp[i] > 0 ? en[i] < st[i] : en[i] > st[i]))
            return refuse(ad, n, "negative starts, or an end on the wrong side of its start (normalize them)");
    if (stepped)
        return slice_steps_rule(ad, n, gy, ns, st, sp);
    const char *s = shape_of(ad, n->input[0]);
    const char *e = s ? int64_const(ad, n->input[0], en, (size_t)ns) : NULL;
    const char *me = e ? emit1(ad, "Min", "", (const char *[]){e, s}, 2, "end") : NULL;
    const char *after = me ? emit1(ad, "Sub", "", (const char *[]){s, me}, 2, "after") : NULL;
    const char *b = after ? int64_const(ad, n->input[0], st, (size_t)ns) : NULL;
    char *pads = b ? tr_uniq(ad->g, n->input[0], "pads") : NULL;
    tr_node *c = pads ? tr_add_node(ad->g, "Concat", "", (const char *[]){b, after}, 2, (const char *[]){pads}, 1)
                      : NULL;
    if (!c || !tr_node_attr(ad->g, c, tl_attr_int(ad->g->pl, "axis", 0)))
        return -1;
    ad->backward_nodes++;
    const char *gx = emit1(ad, "Pad", "", (const char *[]){gy, pads}, 2, "d");
    return accumulate(ad, n->input[0], gx);
}

int tr_backward_node(tr_autodiff *ad, const Onnx__NodeProto *n)
{
    long yo = n->n_output ? tr_value_index(ad, n->output[0]) : -1;
    const char *gy = yo >= 0 ? ad->grad[yo] : NULL;
    bool any = false;
    for (size_t i = 0; i < n->n_input; i++)
        any |= needs(ad, n, i);
    if (!gy || !any)
        return 0; /* nothing flows back through this node */
    if (ad->rules && tr_rules_check(ad, n))
        return 1; /* the target's table has no row this node matches */
    const char *op = n->op_type;
    if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
        return refuse(ad, n, "operators outside the default domain have no backward rule");
    if (!strcmp(op, "Relu") || !strcmp(op, "Abs"))
        return accumulate(ad, n->input[0],
                          emit1(ad, !strcmp(op, "Relu") ? "ReluGrad" : "AbsGrad", TR_DOMAIN,
                                (const char *[]){gy, n->input[0]}, 2, "d"));
    if (!strcmp(op, "Tanh") || !strcmp(op, "Sigmoid"))
        return accumulate(ad, n->input[0], squash_grad(ad, n, gy));
    if (!strcmp(op, "Identity") || !strcmp(op, "Dropout"))
        return accumulate(ad, n->input[0], gy);
    if (!strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
        const char *s = shape_of(ad, n->input[0]);
        return accumulate(ad, n->input[0], s ? emit1(ad, "Reshape", "", (const char *[]){gy, s}, 2, "d") : NULL);
    }
    if (!strcmp(op, "Transpose")) {
        const Onnx__AttributeProto *p = attr(n, "perm");
        const char *gx = emit1(ad, "Transpose", "", (const char *[]){gy}, 1, "d");
        if (gx && p && p->n_ints) { /* the inverse permutation; without perm the reversal is its own inverse */
            int64_t inv[16];
            if (p->n_ints > 16)
                return refuse(ad, n, "perm longer than 16");
            for (size_t i = 0; i < p->n_ints; i++) {
                if (p->ints[i] < 0 || (size_t)p->ints[i] >= p->n_ints)
                    return refuse(ad, n, "perm is not a permutation");
                inv[p->ints[i]] = (int64_t)i;
            }
            if (!tr_node_attr(ad->g, &ad->g->nodes[ad->g->n_nodes - 1],
                              tl_attr_ints(ad->g->pl, "perm", inv, p->n_ints)))
                return -1;
        }
        return accumulate(ad, n->input[0], gx);
    }
    if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div"))
        return binary_rule(ad, n, gy);
    if (!strcmp(op, "Sum")) {
        for (size_t i = 0; i < n->n_input; i++)
            if (needs(ad, n, i) && accumulate(ad, n->input[i], unbroadcast(ad, gy, n->input[i])))
                return -1;
        return 0;
    }
    if (!strcmp(op, "MatMul")) {
        /* 2-D operands (Transpose [1, 0] refuses other ranks when planned) */
        if (needs(ad, n, 0)) {
            const char *bt = transpose2d(ad, n->input[1]);
            if (accumulate(ad, n->input[0], bt ? emit1(ad, "MatMul", "", (const char *[]){gy, bt}, 2, "dA") : NULL))
                return -1;
        }
        if (needs(ad, n, 1)) {
            const char *at = transpose2d(ad, n->input[0]);
            if (accumulate(ad, n->input[1], at ? emit1(ad, "MatMul", "", (const char *[]){at, gy}, 2, "dB") : NULL))
                return -1;
        }
        return 0;
    }
    if (!strcmp(op, "Concat")) {
        /* one ConcatGrad cuts dY into every input's piece */
        const char **ins = tl_alloc(ad->g->pl, (n->n_input + 1) * sizeof *ins);
        const char **outs = tl_alloc(ad->g->pl, (n->n_input ? n->n_input : 1) * sizeof *outs);
        if (!ins || !outs)
            return -1;
        ins[0] = gy;
        for (size_t i = 0; i < n->n_input; i++) {
            ins[1 + i] = n->input[i];
            outs[i] = needs(ad, n, i) ? tr_uniq(ad->g, n->input[i], "d") : "";
        }
        tr_node *g = grad_node(ad, n, "ConcatGrad", ins, n->n_input + 1, outs, n->n_input);
        if (!g)
            return -1;
        for (size_t i = 0; i < n->n_input; i++)
            if (needs(ad, n, i) && accumulate(ad, n->input[i], g->out[i]))
                return -1;
        return 0;
    }
    if (!strcmp(op, "Gemm"))
        return gemm_rule(ad, n, gy);
    if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMean"))
        return reduce_rule(ad, n, gy);
    if (!strcmp(op, "Pad"))
        return pad_rule(ad, n, gy);
    if (!strcmp(op, "Slice"))
        return slice_rule(ad, n, gy);
    if (!strcmp(op, "Conv")) {
        if (n->n_input < 2)
            return refuse(ad, n, "Conv needs X and W");
        return conv_rule(ad, n, gy);
    }
    if (!strcmp(op, "MaxPool")) {
        if (n->n_output > 1 && n->output[1][0] && tr_value_index(ad, n->output[1]) >= 0 &&
            ad->grad[tr_value_index(ad, n->output[1])])
            return refuse(ad, n, "the Indices output carries no gradient");
        tr_node *g = grad_node(ad, n, "MaxPoolGrad", (const char *[]){gy, n->input[0]}, 2,
                               (const char *[]){tr_uniq(ad->g, n->input[0], "d")}, 1);
        return g ? accumulate(ad, n->input[0], g->out[0]) : -1;
    }
    return refuse(ad, n, "no backward rule for this operator (docs/training.md lists the operators that train)");
}
