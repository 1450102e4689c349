/* QAS-INT8 checkpoints (sy_qas_session_save / _load, sy_train.h): the
 * trained state of every layer as an ONNX file of initializers, like the
 * FP32 trainer's checkpoint.onnx, so any ONNX tool opens it. For the Gemm
 * named G:
 *   G.w           int8  [o, k]  the weight codes
 *   G.w_master    float [o, k]  the float master copy the updates go to
 *   G.w_momentum  float [o, k]  (not with biases only: no weight update)
 *   G.b           int32 [o]     bias codes, G.b_master, G.b_momentum (a biased layer)
 * and "step", int64, the number of steps taken. Both copies of a weight
 * are kept: the codes are the master re-quantized, but with the scales of
 * the model, and keeping them makes a restore exact without re-deriving
 * anything. Loading checks every tensor's type and shape against the
 * session and takes nothing unless all of them fit. */
#include "tl_files.h"
#include "train_qas_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ck_tensor {
    char name[512];
    int onnx_type;
    int64_t dims[2];
    size_t rank, bytes;
    void *data; /* the session's buffer */
} ck_tensor;

/* the tensors of s's checkpoint, in a fixed order; returns their count */
static size_t ck_list(const sy_qas_session *s, ck_tensor *t, size_t cap)
{
    size_t n = 0;
#define CK_ADD(suffix, type, esize, r, d0, d1, ptr)                                                                \
    do {                                                                                                           \
        if (n < cap) {                                                                                             \
            ck_tensor *c = &t[n];                                                                                  \
            snprintf(c->name, sizeof c->name, "%s.%s", L->gemm->name, suffix);                                     \
            c->onnx_type = ONNX__TENSOR_PROTO__DATA_TYPE__##type;                                                  \
            c->rank = (r);                                                                                         \
            c->dims[0] = (d0);                                                                                     \
            c->dims[1] = (d1);                                                                                     \
            c->bytes = (size_t)(d0) * (size_t)((r) == 2 ? (d1) : 1) * (esize);                                     \
            c->data = (ptr);                                                                                       \
        }                                                                                                          \
        n++;                                                                                                       \
    } while (0)
    for (size_t i = 0; i < s->n; i++) {
        const qas_layer *L = &s->L[i];
        const int64_t o = L->p.o, k = L->p.k;
        CK_ADD("w", INT8, 1, 2, o, k, L->w);
        CK_ADD("w_master", FLOAT, 4, 2, o, k, L->wm);
        if (!s->biases_only)
            CK_ADD("w_momentum", FLOAT, 4, 2, o, k, L->wv);
        if (L->b) {
            CK_ADD("b", INT32, 4, 1, o, 0, L->b);
            CK_ADD("b_master", FLOAT, 4, 1, o, 0, L->bm);
            CK_ADD("b_momentum", FLOAT, 4, 1, o, 0, L->bv);
        }
    }
#undef CK_ADD
    return n;
}

#define CK_MAX (MAX_LAYERS * 6)

sy_status *sy_qas_session_save(sy_qas_session *s, const char *path)
{
    if (!s || !path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_qas_session_save: session and path are required");
    ck_tensor t[CK_MAX];
    size_t n = ck_list(s, t, CK_MAX);
    tl_pool pl = {0};
    tr_graph g = {.pl = &pl};
    sy_status *st = NULL;
    for (size_t i = 0; i < n && !st; i++)
        if (!tr_add_init(&g, tl_tensor(&pl, t[i].name, t[i].onnx_type, t[i].dims, t[i].rank, t[i].data, t[i].bytes)))
            st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    int64_t step = s->steps;
    if (!st && !tr_add_init(&g, tl_tensor(&pl, TR_STEP, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, NULL, 0, &step, 8)))
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    if (!st) {
        size_t len;
        uint8_t *buf = tr_pack(&g, NULL, 13, &len);
        st = buf ? tl_write_atomic(path, buf, len, NULL, 0)
                 : sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        free(buf);
    }
    tl_pool_free(&pl);
    return st;
}

static const Onnx__TensorProto *find_init(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && !strcmp(g->initializer[i]->name, name))
            return g->initializer[i];
    return NULL;
}

sy_status *sy_qas_session_load(sy_qas_session *s, const char *path)
{
    if (!s || !path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_qas_session_load: session and path are required");
    ck_tensor t[CK_MAX];
    size_t n = ck_list(s, t, CK_MAX);
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(path, &data, &size);
    if (st)
        return st;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    free(data);
    if (!m || !m->graph) {
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s is not a QAS checkpoint (an ONNX file of initializers)",
                                path);
    }
    const Onnx__GraphProto *g = m->graph;
    const Onnx__TensorProto *found[CK_MAX];
    for (size_t i = 0; i < n && !st; i++) {
        const Onnx__TensorProto *p = found[i] = find_init(g, t[i].name);
        bool dims_ok = p && p->n_dims == t[i].rank;
        for (size_t d = 0; dims_ok && d < t[i].rank; d++)
            dims_ok = p->dims[d] == t[i].dims[d];
        if (!p)
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: no tensor '%s': a checkpoint of another model or of "
                                                        "another --trainable choice", path, t[i].name);
        else if (p->data_type != t[i].onnx_type || !dims_ok || !p->has_raw_data || p->raw_data.len != t[i].bytes)
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor '%s' is not the session's (ONNX type %d, %zu "
                                                        "bytes of raw data expected): a checkpoint of another model",
                                  path, t[i].name, t[i].onnx_type, t[i].bytes);
    }
    const Onnx__TensorProto *sp = find_init(g, TR_STEP);
    int64_t step = -1;
    if (!st && sp && sp->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 && sp->has_raw_data &&
        sp->raw_data.len == 8)
        memcpy(&step, sp->raw_data.data, 8);
    if (!st && step < 0)
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: the checkpoint has no int64 'step' of 0 or more", path);
    if (!st && g->n_initializer != n + 1)
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: %zu tensors, this session's checkpoint has %zu: a checkpoint "
                                                    "of another model or of another --trainable choice",
                              path, g->n_initializer, n + 1);
    if (!st) { /* every tensor fits: take them all */
        for (size_t i = 0; i < n; i++)
            memcpy(t[i].data, found[i]->raw_data.data, t[i].bytes);
        s->steps = step;
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}
