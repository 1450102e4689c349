/* Calibration: the samples (folders of input_N.pb / .npy, .npy files, or
 * tensors from the caller), feeding them, and what they taught about each
 * value of the graph (constants, float activations). */
#include "quant_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool has_file(const char *dir, const char *name, char *out, size_t len)
{
    int r = snprintf(out, len, "%s/%s", dir, name);
    if (r < 0 || (size_t)r >= len)
        return false;
    struct stat st;
    return stat(out, &st) == 0 && S_ISREG(st.st_mode);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sample folders (input_N.pb / input_N.npy), or .npy files for a one-input model. */
int q_find_samples(tl_pool *pl, const char *dir, size_t n_inputs, q_samples *out, char *err, size_t elen)
{
    char path[4096];
    char *dirs[4096];
    size_t nd = 0;
    char *npys[4096];
    size_t nn = 0;
    if (has_file(dir, "input_0.pb", path, sizeof path) || has_file(dir, "input_0.npy", path, sizeof path)) {
        dirs[nd++] = tl_strdup(pl, dir);
    } else {
        DIR *d = opendir(dir);
        if (!d) {
            q_seterr(err, elen, "calibration folder %s: %s", dir, strerror(errno));
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(d)) && nd < 4096 && nn < 4096) {
            if (e->d_name[0] == '.')
                continue;
            char sub[4096];
            int r = snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
            if (r < 0 || (size_t)r >= sizeof sub)
                continue;
            struct stat st;
            if (stat(sub, &st))
                continue;
            if (S_ISDIR(st.st_mode) &&
                (has_file(sub, "input_0.pb", path, sizeof path) || has_file(sub, "input_0.npy", path, sizeof path)))
                dirs[nd++] = tl_strdup(pl, sub);
            else if (S_ISREG(st.st_mode) && strlen(e->d_name) > 4 && !strcmp(e->d_name + strlen(e->d_name) - 4, ".npy"))
                npys[nn++] = tl_strdup(pl, sub);
        }
        closedir(d);
    }
    if (pl->oom)
        return -1;
    qsort(dirs, nd, sizeof *dirs, cmp_str);
    qsort(npys, nn, sizeof *npys, cmp_str);
    size_t total = nd + (n_inputs == 1 ? nn : 0);
    if (!total) {
        q_seterr(err, elen, "calibration folder %s: no calibration inputs (folders with input_0.pb or input_0.npy, or .npy files%s)",
                 dir, n_inputs == 1 ? "" : " for a one-input model");
        return -1;
    }
    char ***s = tl_alloc(pl, total * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < total; i++) {
        s[i] = tl_alloc(pl, (n_inputs ? n_inputs : 1) * sizeof(char *));
        if (!s[i])
            return -1;
        if (i < nd) {
            for (size_t k = 0; k < n_inputs; k++) {
                char name[64];
                snprintf(name, sizeof name, "input_%zu.pb", k);
                if (!has_file(dirs[i], name, path, sizeof path)) {
                    snprintf(name, sizeof name, "input_%zu.npy", k);
                    if (!has_file(dirs[i], name, path, sizeof path)) {
                        q_seterr(err, elen, "%s: input_%zu.pb (or .npy) is missing; the model has %zu inputs", dirs[i],
                                 k, n_inputs);
                        return -1;
                    }
                }
                if (!(s[i][k] = tl_strdup(pl, path)))
                    return -1;
            }
        } else {
            s[i][0] = npys[i - nd];
        }
    }
    out->n = total;
    out->files = s;
    out->tensors = NULL;
    out->n_inputs = n_inputs;
    return 0;
}

vinfo *q_vfind(vinfo *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name))
            return &v[i];
    return NULL;
}

bool q_is_const_value(qrun *q, const char *name)
{
    if (q_find_init(q->g, name))
        return true;
    vinfo *v = q_vfind(q->vals, q->n_vals, name);
    if (!v || v->varies)
        return false;
    /* produced by a node whose inputs are all constant */
    long p = q_producer_of(q->g, name);
    if (p < 0)
        return false;
    const wnode *n = &q->g->nodes[p];
    for (size_t k = 0; k < n->nin; k++)
        if (n->in[k][0] && !q_is_const_value(q, n->in[k]))
            return false;
    return true;
}

const float *q_const_data(qrun *q, const char *name, int32_t *rank, int64_t *dims)
{
    Onnx__TensorProto *t = q_find_init(q->g, name);
    if (t) {
        *rank = (int32_t)t->n_dims;
        for (size_t i = 0; i < t->n_dims && i < SY_MAX_RANK; i++)
            dims[i] = t->dims[i];
        return q_floats(q->g, t);
    }
    vinfo *v = q_vfind(q->vals, q->n_vals, name);
    if (!v || v->dtype != SY_DT_FLOAT32 || !v->data)
        return NULL;
    *rank = v->rank;
    memcpy(dims, v->dims, sizeof v->dims);
    return v->data;
}

bool q_is_float_act(qrun *q, const char *name)
{
    vinfo *v = q_vfind(q->vals, q->n_vals, name);
    return v && v->dtype == SY_DT_FLOAT32 && v->obs && !q_is_const_value(q, name);
}

sy_status *q_feed(sy_session *s, const q_samples *sm, size_t i)
{
    for (size_t k = 0; k < sm->n_inputs; k++) {
        if (sm->tensors) {
            SY_TRY(sy_session_set_input_by_index(s, k, sm->tensors[i * sm->n_inputs + k], SY_INPUT_COPY));
            continue;
        }
        sy_tensor *t = NULL;
        SY_TRY(sy_tensor_read_file(sm->files[i][k], &t));
        sy_status *st = sy_session_set_input_by_index(s, k, t, SY_INPUT_COPY);
        sy_tensor_free(t);
        SY_TRY(st);
    }
    return NULL;
}

const char *q_sample_name(const q_samples *sm, size_t i, char *buf, size_t len)
{
    if (sm->files)
        return sm->files[i][0];
    snprintf(buf, len, "calibration sample %zu", i);
    return buf;
}
