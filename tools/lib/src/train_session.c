/* The training runtime (sy_train_session_*): three sessions over the
 * artifacts of sy_train_build and the trainable tensors and optimizer state
 * it owns.
 *
 * A step runs training.onnx on the batch with the tensors borrowed (loss and
 * gradients out), then optimizer.onnx on tensors, gradients and state
 * (borrowed, the gradients straight from the training session's outputs),
 * and copies the updated tensors and state back. The optimizers' T is the
 * 1-based number of the update (Adam's bias correction starts at T = 1). */
#include "train_internal.h"
#include "train_tflite.h"
#include "tl_files.h"

#include <switchyard/sy_train.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct tr_tensor {
    char *name;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    float *data;
    size_t nbytes;
} tr_tensor;

struct sy_train_session {
    sy_env *env;
    char *dir;
    sy_model *mt, *me, *mo;
    sy_session *st, *se, *so;
    size_t n_data;       /* data inputs before the labels */
    size_t n_param, n_groups; /* trainable tensors; state groups per tensor (1 Momentum, 2 Adam) */
    tr_tensor *param;    /* [n_param] */
    tr_tensor *state;    /* [n_groups * n_param] */
    int64_t steps;
};

static void tensors_free(tr_tensor *t, size_t n)
{
    for (size_t i = 0; t && i < n; i++) {
        free(t[i].name);
        free(t[i].data);
    }
    free(t);
}

SY_EXPORT void sy_train_session_release(sy_train_session *s)
{
    if (!s)
        return;
    sy_session_release(s->st);
    sy_session_release(s->se);
    sy_session_release(s->so);
    sy_model_release(s->mt);
    sy_model_release(s->me);
    sy_model_release(s->mo);
    tensors_free(s->param, s->n_param);
    tensors_free(s->state, s->n_groups * s->n_param);
    free(s->dir);
    free(s);
}

static sy_status *load_in(sy_train_session *s, const char *file, sy_model **m, sy_session **ss)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", s->dir, file) >= sizeof path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "training artifacts: path too long");
    sy_status *st = sy_model_load(s->env, path, m);
    if (!st)
        st = sy_session_create(s->env, *m, NULL, ss);
    return st ? tl_status_prefix(st, "training artifacts %s", path) : NULL;
}

static sy_tensor view(const tr_tensor *t)
{
    sy_tensor v = {.struct_size = sizeof v, .dtype = SY_DT_FLOAT32, .rank = t->rank, .data = t->data,
                   .nbytes = t->nbytes};
    memcpy(v.dims, t->dims, sizeof v.dims);
    return v;
}

/* the float initializer `name` of a checkpoint into t (shape checked when t
 * already has one) */
static sy_status *take_tensor(const Onnx__GraphProto *g, const char *path, const char *name, tr_tensor *t, bool check)
{
    const Onnx__TensorProto *src = NULL;
    for (size_t i = 0; i < g->n_initializer && !src; i++)
        if (!strcmp(g->initializer[i]->name, name))
            src = g->initializer[i];
    if (!src)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: the checkpoint has no tensor '%s' (a checkpoint of another "
                                                      "model?)", path, name);
    if (src->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || src->n_dims > SY_MAX_RANK)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor '%s' is not a float32 tensor of rank <= %d", path,
                                name, SY_MAX_RANK);
    int64_t numel = 1;
    for (size_t d = 0; d < src->n_dims; d++) {
        if (src->dims[d] < 0 || src->dims[d] > ((int64_t)1 << 31))
            return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor '%s' has a bad dimension", path, name);
        numel *= src->dims[d];
    }
    if (check && (t->rank != (int32_t)src->n_dims || memcmp(t->dims, src->dims, src->n_dims * sizeof *src->dims)))
        return sy_status_create(SY_ERR_SHAPE, "%s: tensor '%s' has another shape than the model's (a checkpoint of "
                                              "another model?)", path, name);
    size_t bytes = (size_t)numel * 4;
    const void *from = src->has_raw_data ? (const void *)src->raw_data.data : (const void *)src->float_data;
    size_t have = src->has_raw_data ? src->raw_data.len : src->n_float_data * 4;
    if (have != bytes)
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s: tensor '%s' holds %zu bytes, its shape needs %zu", path,
                                name, have, bytes);
    if (!check) {
        t->rank = (int32_t)src->n_dims;
        memcpy(t->dims, src->dims, src->n_dims * sizeof *src->dims);
        t->nbytes = bytes;
        t->data = malloc(bytes ? bytes : 1);
        t->name = strdup(name);
        if (!t->data || !t->name)
            return sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    memcpy(t->data, from, bytes);
    return NULL;
}

static char *state_name(const char *param, size_t k)
{
    size_t n = strlen(param) + 3;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s.%s", param, k == 0 ? "m" : "v");
    return s;
}

/* Read a checkpoint into the session's tensors; `fresh`: allocate them. */
static sy_status *read_checkpoint(sy_train_session *s, const char *path, bool fresh)
{
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
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s is not a checkpoint (an ONNX file of initializers)", path);
    }
    for (size_t i = 0; i < s->n_param && !st; i++) {
        if (fresh) {
            sy_value_info vi = {.struct_size = sizeof vi};
            sy_model_input_info(s->mo, 2 + i, &vi);
            st = take_tensor(m->graph, path, vi.name, &s->param[i], false);
        } else {
            st = take_tensor(m->graph, path, s->param[i].name, &s->param[i], true);
        }
        for (size_t k = 0; k < s->n_groups && !st; k++) {
            char *nm = state_name(s->param[i].name, k);
            st = nm ? take_tensor(m->graph, path, nm, &s->state[k * s->n_param + i], !fresh)
                    : sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
            free(nm);
        }
    }
    int64_t step = -1;
    for (size_t i = 0; !st && i < m->graph->n_initializer; i++) {
        const Onnx__TensorProto *t = m->graph->initializer[i];
        if (!strcmp(t->name, TR_STEP) && t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
            if (t->has_raw_data && t->raw_data.len == 8)
                memcpy(&step, t->raw_data.data, 8);
            else if (t->n_int64_data == 1)
                step = t->int64_data[0];
        }
    }
    if (!st && step < 0)
        st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: the checkpoint has no int64 'step' of 0 or more", path);
    if (!st)
        s->steps = step;
    onnx__model_proto__free_unpacked(m, NULL);
    return st;
}

SY_EXPORT sy_status *sy_train_session_create(sy_env *env, const char *dir, sy_train_session **out)
{
    if (!env || !dir || !out)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_create: env, dir and out are required");
    *out = NULL;
    sy_train_session *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s->env = env;
    sy_status *st = load_in(s, TR_TRAINING_FILE, &s->mt, &s->st);
    if (!st)
        st = load_in(s, TR_EVAL_FILE, &s->me, &s->se);
    if (!st)
        st = load_in(s, TR_OPTIMIZER_FILE, &s->mo, &s->so);
    if (!st) {
        /* training inputs: data..., labels, tensors...; optimizer: lr, step, X, G, state groups */
        size_t nt = sy_model_input_count(s->mt);
        for (size_t i = 0; i < nt; i++) {
            sy_value_info vi = {.struct_size = sizeof vi};
            if (sy_model_input_info(s->mt, i, &vi) && !strcmp(vi.name, TR_LABELS))
                s->n_data = i;
        }
        s->n_param = nt - s->n_data - 1;
        size_t no = sy_model_input_count(s->mo);
        if (!s->n_param || no < 2 + 3 * s->n_param || (no - 2) % s->n_param ||
            sy_session_output_count(s->st) != 2 + s->n_param) {
            st = sy_status_create(SY_ERR_INVALID_MODEL, "%s: the training and optimizer models do not match (%zu "
                                                        "tensors, %zu optimizer inputs)", dir, s->n_param, no);
        } else {
            s->n_groups = (no - 2) / s->n_param - 2;
            s->param = calloc(s->n_param, sizeof *s->param);
            s->state = calloc(s->n_groups * s->n_param, sizeof *s->state);
            if (!s->param || !s->state)
                st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    if (!st) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, TR_CHECKPOINT_FILE);
        st = read_checkpoint(s, path, true);
    }
    if (st) {
        sy_train_session_release(s);
        return st;
    }
    *out = s;
    return NULL;
}

static sy_status *feed_batch(sy_train_session *s, const sy_model *m, sy_session *ss, const sy_tensor *const *inputs,
                             size_t n)
{
    if (n != s->n_data + 1)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "training step: %zu inputs given, the model takes %zu data "
                                                         "inputs and the labels", n, s->n_data);
    for (size_t i = 0; i <= s->n_data; i++) {
        sy_status *st = i < s->n_data ? tr_feed_input(ss, m, i, inputs[i])
                                      : sy_session_set_input_by_index(ss, i, inputs[i], SY_INPUT_BORROW);
        if (st)
            return tl_status_prefix(st, "training input %zu", i);
    }
    for (size_t i = 0; i < s->n_param; i++) {
        sy_tensor v = view(&s->param[i]);
        sy_status *st = sy_session_set_input_by_index(ss, s->n_data + 1 + i, &v, SY_INPUT_BORROW);
        if (st)
            return st;
    }
    return sy_session_run(ss);
}

SY_EXPORT sy_status *sy_train_session_step(sy_train_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                           float lr, float *loss)
{
    if (!s || !inputs)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_step: session and inputs are required");
    sy_status *st = feed_batch(s, s->mt, s->st, inputs, n_inputs);
    const sy_tensor *l = NULL;
    if (!st)
        st = sy_session_get_output(s->st, 0, &l);
    if (st)
        return st;
    if (loss)
        *loss = *(const float *)l->data;
    int64_t t = s->steps + 1;
    sy_tensor tlr = {.struct_size = sizeof tlr, .dtype = SY_DT_FLOAT32, .rank = 0, .data = &lr, .nbytes = 4};
    sy_tensor tt = {.struct_size = sizeof tt, .dtype = SY_DT_INT64, .rank = 0, .data = &t, .nbytes = 8};
    if ((st = sy_session_set_input_by_index(s->so, 0, &tlr, SY_INPUT_BORROW)) ||
        (st = sy_session_set_input_by_index(s->so, 1, &tt, SY_INPUT_BORROW)))
        return st;
    const size_t n = s->n_param;
    for (size_t i = 0; i < n; i++) {
        sy_tensor x = view(&s->param[i]);
        const sy_tensor *g = NULL;
        if ((st = sy_session_set_input_by_index(s->so, 2 + i, &x, SY_INPUT_BORROW)) ||
            (st = sy_session_get_output(s->st, 1 + i, &g)) ||
            (st = sy_session_set_input_by_index(s->so, 2 + n + i, g, SY_INPUT_BORROW)))
            return st;
        for (size_t k = 0; k < s->n_groups; k++) {
            sy_tensor v = view(&s->state[k * n + i]);
            if ((st = sy_session_set_input_by_index(s->so, 2 + (2 + k) * n + i, &v, SY_INPUT_BORROW)))
                return st;
        }
    }
    if ((st = sy_session_run(s->so)))
        return st;
    for (size_t grp = 0; grp <= s->n_groups; grp++)
        for (size_t i = 0; i < n; i++) {
            const sy_tensor *o = NULL;
            if ((st = sy_session_get_output(s->so, grp * n + i, &o)))
                return st;
            tr_tensor *dst = grp == 0 ? &s->param[i] : &s->state[(grp - 1) * n + i];
            memcpy(dst->data, o->data, dst->nbytes);
        }
    s->steps++;
    return NULL;
}

SY_EXPORT sy_status *sy_train_session_eval(sy_train_session *s, const sy_tensor *const *inputs, size_t n_inputs,
                                           float *loss, const sy_tensor **output)
{
    if (!s || !inputs)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_eval: session and inputs are required");
    sy_status *st = feed_batch(s, s->me, s->se, inputs, n_inputs);
    const sy_tensor *l = NULL;
    if (!st)
        st = sy_session_get_output(s->se, 0, &l);
    if (!st && output)
        st = sy_session_get_output(s->se, 1, output);
    if (!st && loss)
        *loss = *(const float *)l->data;
    return st;
}

SY_EXPORT int64_t sy_train_session_steps(const sy_train_session *s) { return s ? s->steps : 0; }

SY_EXPORT sy_status *sy_train_session_step_output(sy_train_session *s, const sy_tensor **output)
{
    if (!s || !output)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_step_output: session and output are "
                                                         "required");
    if (!s->steps)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_step_output: no step has run yet");
    return sy_session_get_output(s->st, 1 + s->n_param, output);
}

/* an ONNX file of initializers: `t` as they are (names replaced where
 * rename[i] is set), plus the int64 step when with_step */
static sy_status *write_initializers(const char *path, tr_tensor *const *t, size_t n, int64_t step, bool with_step)
{
    tl_pool pl = {0};
    tr_graph g = {.pl = &pl};
    sy_status *st = NULL;
    for (size_t i = 0; i < n; i++)
        if (!tr_add_init(&g, tl_tensor(&pl, t[i]->name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, t[i]->dims,
                                       (size_t)t[i]->rank, t[i]->data, t[i]->nbytes)))
            st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    if (!st && with_step &&
        !tr_add_init(&g, tl_tensor(&pl, TR_STEP, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, NULL, 0, &step, 8)))
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

SY_EXPORT sy_status *sy_train_session_save(sy_train_session *s, const char *path)
{
    if (!s || !path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_save: session and path are required");
    size_t n = s->n_param * (1 + s->n_groups);
    tr_tensor **all = malloc((n ? n : 1) * sizeof *all);
    if (!all)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < s->n_param; i++)
        all[i] = &s->param[i];
    for (size_t i = 0; i < s->n_groups * s->n_param; i++)
        all[s->n_param + i] = &s->state[i];
    sy_status *st = write_initializers(path, all, n, s->steps, true);
    free(all);
    return st;
}

SY_EXPORT sy_status *sy_train_session_load(sy_train_session *s, const char *path)
{
    if (!s || !path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_load: session and path are required");
    /* read into copies first: a refused checkpoint leaves the session as it was */
    size_t n = s->n_param, ns = s->n_groups * n;
    tr_tensor *keep_p = s->param, *keep_s = s->state;
    int64_t keep_steps = s->steps;
    tr_tensor *cp = calloc(n, sizeof *cp), *cs = calloc(ns ? ns : 1, sizeof *cs);
    sy_status *st = NULL;
    if (!cp || !cs)
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        cp[i] = keep_p[i];
        cp[i].data = malloc(keep_p[i].nbytes ? keep_p[i].nbytes : 1);
        cp[i].name = NULL;
        if (!cp[i].data)
            st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; !st && i < ns; i++) {
        cs[i] = keep_s[i];
        cs[i].data = malloc(keep_s[i].nbytes ? keep_s[i].nbytes : 1);
        cs[i].name = NULL;
        if (!cs[i].data)
            st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (!st) {
        for (size_t i = 0; i < n; i++)
            cp[i].name = keep_p[i].name; /* borrowed for the read */
        s->param = cp;
        s->state = cs;
        st = read_checkpoint(s, path, false);
        s->param = keep_p;
        s->state = keep_s;
        for (size_t i = 0; i < n; i++)
            cp[i].name = NULL;
    }
    if (!st) { /* take the new values */
        for (size_t i = 0; i < n; i++)
            memcpy(keep_p[i].data, cp[i].data, keep_p[i].nbytes);
        for (size_t i = 0; i < ns; i++)
            memcpy(keep_s[i].data, cs[i].data, keep_s[i].nbytes);
        keep_steps = s->steps;
    }
    s->steps = keep_steps;
    tensors_free(cp, cp ? n : 0);
    tensors_free(cs, cs ? ns : 0);
    return st;
}

/* The subgraph the artifacts were built from (TR_SOURCE_SUBGRAPH_FILE; a
 * folder built before the file existed has subgraph 0). */
static sy_status *built_subgraph(const sy_train_session *s, uint32_t *sg)
{
    char p[4096];
    *sg = 0;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", s->dir, TR_SOURCE_SUBGRAPH_FILE) >= sizeof p)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_export: path too long");
    if (access(p, F_OK) != 0)
        return NULL;
    uint8_t *d = NULL;
    size_t n = 0;
    sy_status *st = tl_read_file(p, &d, &n);
    if (st)
        return st;
    size_t k = 0;
    while (k < n && k < 10 && d[k] >= '0' && d[k] <= '9')
        k++;
    bool ok = k > 0 && k < 10 && (k == n || (k + 1 == n && d[k] == '\n'));
    for (size_t i = 0; ok && i < k; i++) /* at most 9 digits: no overflow */
        *sg = *sg * 10 + (uint32_t)(d[i] - '0');
    free(d);
    return ok ? NULL
              : sy_status_create(SY_ERR_INVALID_MODEL, "sy_train_session_export: %s is not a subgraph index (one "
                                 "decimal number)", p);
}

/* The source .tflite with the trained tensors written into their buffers
 * (artifacts built from a TFLite model only). */
static sy_status *export_tflite(sy_train_session *s, const char *path)
{
    char src[4096];
    if ((size_t)snprintf(src, sizeof src, "%s/%s", s->dir, TR_SOURCE_TFLITE_FILE) >= sizeof src)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_export: path too long");
    if (access(src, F_OK) != 0)
        return sy_status_create(SY_ERR_UNSUPPORTED,
                                "sy_train_session_export: %s: a .tflite export needs artifacts built from a TFLite "
                                "model, and %s has no %s (built from an ONNX model: export .onnx)",
                                path, s->dir, TR_SOURCE_TFLITE_FILE);
    const char **names = calloc(s->n_param ? s->n_param : 1, sizeof *names);
    const float **vals = calloc(s->n_param ? s->n_param : 1, sizeof *vals);
    size_t *nb = calloc(s->n_param ? s->n_param : 1, sizeof *nb);
    sy_status *st = NULL;
    if (!names || !vals || !nb) {
        st = sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    } else {
        for (size_t k = 0; k < s->n_param; k++) {
            names[k] = s->param[k].name;
            vals[k] = s->param[k].data;
            nb[k] = s->param[k].nbytes;
        }
        uint32_t sg = 0;
        if (!(st = built_subgraph(s, &sg))) {
            st = tr_tflite_export(src, sg, path, s->n_param, names, vals, nb);
            st = tl_status_prefix(st, "sy_train_session_export");
        }
    }
    free(names);
    free(vals);
    free(nb);
    return st;
}

SY_EXPORT sy_status *sy_train_session_export(sy_train_session *s, const char *path)
{
    if (!s || !path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_train_session_export: session and path are required");
    size_t plen = strlen(path);
    if (plen >= 7 && !strcmp(path + plen - 7, ".tflite"))
        return export_tflite(s, path);
    char fpath[4096];
    snprintf(fpath, sizeof fpath, "%s/%s", s->dir, TR_FORWARD_FILE);
    uint8_t *data = NULL;
    size_t size = 0;
    sy_status *st = tl_read_file(fpath, &data, &size);
    if (st)
        return st;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    free(data);
    if (!m || !m->graph) {
        if (m)
            onnx__model_proto__free_unpacked(m, NULL);
        return sy_status_create(SY_ERR_INVALID_MODEL, "%s is not an ONNX model", fpath);
    }
    /* point each trained initializer at the session's values for packing,
     * then put back what the unpacked message owns */
    size_t ni = m->graph->n_initializer, replaced = 0;
    typedef struct saved {
        int has_raw;
        ProtobufCBinaryData raw;
        size_t n_float;
    } saved;
    saved *keep = calloc(ni ? ni : 1, sizeof *keep);
    if (!keep) {
        onnx__model_proto__free_unpacked(m, NULL);
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    for (size_t i = 0; i < ni; i++) {
        Onnx__TensorProto *t = m->graph->initializer[i];
        keep[i] = (saved){t->has_raw_data, t->raw_data, t->n_float_data};
        for (size_t k = 0; k < s->n_param; k++)
            if (!strcmp(t->name, s->param[k].name)) {
                t->n_float_data = 0;
                t->has_raw_data = 1;
                t->raw_data.len = s->param[k].nbytes;
                t->raw_data.data = (uint8_t *)s->param[k].data;
                replaced++;
            }
    }
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = malloc(len ? len : 1);
    if (buf)
        onnx__model_proto__pack(m, buf);
    for (size_t i = 0; i < ni; i++) {
        Onnx__TensorProto *t = m->graph->initializer[i];
        t->has_raw_data = keep[i].has_raw;
        t->raw_data = keep[i].raw;
        t->n_float_data = keep[i].n_float;
    }
    free(keep);
    onnx__model_proto__free_unpacked(m, NULL);
    if (!buf)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    st = replaced == s->n_param ? tl_write_atomic(path, buf, len, NULL, 0)
                                : sy_status_create(SY_ERR_INVALID_MODEL, "%s: %zu of %zu trained tensors found in the "
                                                                         "model", fpath, replaced, s->n_param);
    free(buf);
    return st;
}

SY_EXPORT const float *sy_train_session_tensor(const sy_train_session *s, const char *name, int64_t *numel)
{
    for (size_t i = 0; s && name && i < s->n_param; i++)
        if (!strcmp(s->param[i].name, name)) {
            if (numel)
                *numel = (int64_t)(s->param[i].nbytes / 4);
            return s->param[i].data;
        }
    return NULL;
}
