/* Folds before quantization: Conv -> BatchNormalization and Conv ->
 * Add(per-channel constant) become the Conv's weights and bias, so the
 * integer Conv requantizes once. */
#include "quant_internal.h"

#include <math.h>
#include <string.h>

/* Conv -> BatchNormalization and Conv -> Add(per-channel constant): into W and B. */
int q_fold_conv_affine(wgraph *g)
{
    int folded = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        wnode *c = &g->nodes[i];
        if (c->dead || strcmp(c->op, "Conv") || c->nout != 1 || q_is_graph_output(g, c->out[0]))
            continue;
        long user = -1;
        if (q_count_uses(g, c->out[0], &user) != 1)
            continue;
        wnode *u = &g->nodes[user];
        Onnx__TensorProto *wt = q_find_init(g, c->in[1]);
        if (!wt || wt->n_dims < 3)
            continue;
        int64_t oc = wt->dims[0], nw, per = q_numel(wt) / oc;
        float *w = q_floats(g, wt);
        if (!w)
            continue;
        nw = q_numel(wt);
        float *b = tl_alloc(&g->pl, (size_t)oc * sizeof *b);
        if (!b)
            return -1;
        if (c->nin > 2 && c->in[2][0]) {
            int64_t nb;
            float *ob = q_const_floats(g, c->in[2], &nb);
            if (!ob || nb != oc)
                continue;
            memcpy(b, ob, (size_t)oc * sizeof *b);
        }
        bool ok = false;
        if (!strcmp(u->op, "BatchNormalization") && u->nin >= 5 && u->nout >= 1 && !strcmp(u->in[0], c->out[0]) &&
            (u->nout == 1 || !u->out[1][0])) {
            int64_t n1, n2, n3, n4;
            float *sc = q_const_floats(g, u->in[1], &n1), *bb = q_const_floats(g, u->in[2], &n2),
                  *mean = q_const_floats(g, u->in[3], &n3), *var = q_const_floats(g, u->in[4], &n4);
            float eps = q_attr_f(u, "epsilon", 1e-5f);
            if (sc && bb && mean && var && n1 == oc && n2 == oc && n3 == oc && n4 == oc) {
                for (int64_t o = 0; o < oc; o++) {
                    float k = sc[o] / sqrtf(var[o] + eps);
                    for (int64_t j = 0; j < per; j++)
                        w[o * per + j] *= k;
                    b[o] = (b[o] - mean[o]) * k + bb[o];
                }
                ok = true;
            }
        } else if (!strcmp(u->op, "Add") && u->nin == 2 && u->nout == 1) {
            const char *other = !strcmp(u->in[0], c->out[0]) ? u->in[1] : u->in[0];
            Onnx__TensorProto *at = q_find_init(g, other);
            int64_t na;
            float *av = at ? q_floats(g, at) : NULL;
            na = at ? q_numel(at) : 0;
            /* [C,1,1] or [1,C,1,1]: exactly oc values along the channel axis */
            bool chan = at && na == oc && at->n_dims >= 1 &&
                        ((at->n_dims == 3 && at->dims[0] == oc) || (at->n_dims == 4 && at->dims[1] == oc && at->dims[0] == 1));
            if (av && chan) {
                for (int64_t o = 0; o < oc; o++)
                    b[o] += av[o];
                ok = true;
            }
        }
        if (!ok)
            continue;
        Onnx__TensorProto *nwt = tl_tensor(&g->pl, wt->name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, wt->dims, wt->n_dims, w,
                                           (size_t)nw * 4);
        char *bname = q_uniq(g, c->name, "bias");
        Onnx__TensorProto *nbt = tl_tensor(&g->pl, bname, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, &oc, 1, b, (size_t)oc * 4);
        if (!nwt || !nbt)
            return -1;
        /* the weight initializer may be shared: give the folded one its own name */
        if (q_count_uses(g, c->in[1], NULL) > 1) {
            nwt->name = q_uniq(g, c->name, "w");
            q_add_init(g, nwt);
            c->in[1] = nwt->name;
        } else {
            q_replace_init(g, wt, nwt);
        }
        q_add_init(g, nbt);
        if (c->nin < 3) {
            char **in = tl_alloc(&g->pl, 3 * sizeof *in);
            if (!in)
                return -1;
            in[0] = c->in[0];
            in[1] = c->in[1];
            c->in = in;
            c->nin = 3;
        }
        c->in[2] = bname;
        c->out[0] = u->out[0];
        u->dead = true;
        folded++;
    }
    return folded;
}
