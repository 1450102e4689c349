/* Shared implementation of the quant_* scheme plugins (see scheme_common.h). */
#include "scheme_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

const sy_host_api *QH; /* process-wide: the same host table in every environment */

/* the scheme an observer belongs to travels with it */
struct sy_observer {
    sy_calib *calib;
    sy_dtype storage;
    bool symmetric;
};

static size_t chan_of(const sy_quant_params *qp, size_t i, int64_t channel_stride)
{
    if (qp->count <= 1)
        return 0;
    size_t cs = channel_stride > 0 ? (size_t)channel_stride : 1;
    return (i / cs) % qp->count;
}

sy_status *qs_quantize(const float *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, void *dst)
{
    int32_t lo, hi;
    if (!qp || !qp->scales || !sy_q_storage_range(qp->storage, &lo, &hi))
        return QH->status_new(SY_ERR_INVALID_ARGUMENT, "quantize: parameters with an integer storage type required");
    SY_TRY(sy_qp_check(QH, "quantize", qp, -1));
    if (qp->storage == SY_DT_INT4 || qp->storage == SY_DT_UINT4)
        memset(dst, 0, sy_q_storage_bytes(qp->storage, n));
    for (size_t i = 0; i < n; i++) {
        size_t c = chan_of(qp, i, channel_stride);
        int32_t zp = qp->zero_points ? qp->zero_points[c] : 0;
        sy_q_store(dst, qp->storage, i, sy_rq_quantize(src[i], qp->scales[c], zp, lo, hi));
    }
    return NULL;
}

sy_status *qs_dequantize(const void *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, float *dst)
{
    if (!qp || !qp->scales)
        return QH->status_new(SY_ERR_INVALID_ARGUMENT, "dequantize: parameters required");
    for (size_t i = 0; i < n; i++) {
        size_t c = chan_of(qp, i, channel_stride);
        int32_t zp = qp->zero_points ? qp->zero_points[c] : 0;
        dst[i] = sy_rq_dequantize(sy_q_load(src, qp->storage, i), qp->scales[c], zp);
    }
    return NULL;
}

sy_status *qs_fp16_quantize(const float *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, void *dst)
{
    (void)qp;
    (void)channel_stride;
    sy_f32_to_f16_n(src, dst, n);
    return NULL;
}

sy_status *qs_fp16_dequantize(const void *src, size_t n, const sy_quant_params *qp, int64_t channel_stride,
                              float *dst)
{
    (void)qp;
    (void)channel_stride;
    sy_f16_to_f32_n(src, dst, n);
    return NULL;
}

static sy_status *obs_make(sy_dtype storage, bool symmetric, sy_calib_method m, double pct, sy_observer **out)
{
    sy_observer *o = calloc(1, sizeof *o);
    if (o)
        o->calib = sy_calib_new(m, pct);
    if (!o || !o->calib) {
        free(o);
        return QH->status_new(SY_ERR_OUT_OF_MEMORY, "observer: out of memory");
    }
    o->storage = storage;
    o->symmetric = symmetric;
    *out = o;
    return NULL;
}

sy_status *qs_observer_new(const sy_quant_scheme_def *s, sy_calib_method method, double percentile, sy_observer **out)
{
    return obs_make(s->storage, s->symmetric, method, percentile, out);
}

sy_status *qs_observer_create_for(const sy_options *opts, sy_dtype storage, bool symmetric, sy_observer **obs)
{
    const char *m = opts ? QH->option_get(opts, "method") : NULL;
    const char *p = opts ? QH->option_get(opts, "percentile") : NULL;
    sy_calib_method method = SY_CALIB_MINMAX;
    if (m && !strcmp(m, "percentile"))
        method = SY_CALIB_PERCENTILE;
    else if (m && strcmp(m, "minmax"))
        return QH->status_new(SY_ERR_INVALID_CONFIG, "method = %s: expected minmax or percentile", m);
    double pct = p ? atof(p) : 99.99;
    return obs_make(storage, symmetric, method, pct, obs);
}

sy_status *qs_observer_update(sy_observer *obs, const sy_tensor *t)
{
    if (!obs || !t)
        return QH->status_new(SY_ERR_INVALID_ARGUMENT, "observer_update: observer and tensor required");
    if (t->dtype != SY_DT_FLOAT32)
        return QH->status_new(SY_ERR_TYPE, "observer: tensor '%s' is %s; float32 is observed",
                              t->name ? t->name : "?", sy_dt_name(t->dtype));
    if (t->data)
        sy_calib_update(obs->calib, t->data, (size_t)sy_tensor_numel(t));
    return NULL;
}

sy_status *qs_observer_finalize(sy_observer *obs, sy_quant_params *out)
{
    float mn, mx, scale;
    int32_t zp;
    sy_calib_range(obs->calib, &mn, &mx);
    if (obs->storage == SY_DT_FLOAT16) {
        scale = 1.0f;
        zp = 0;
    } else {
        sy_q_choose_params(mn, mx, obs->storage, obs->symmetric, &scale, &zp);
    }
    float *s = QH->alloc(sizeof(float), 16);
    int32_t *z = QH->alloc(sizeof(int32_t), 16);
    if (!s || !z) {
        QH->free(s);
        QH->free(z);
        return QH->status_new(SY_ERR_OUT_OF_MEMORY, "observer: out of memory");
    }
    *s = scale;
    *z = zp;
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->axis = -1;
    out->count = 1;
    out->scales = s;
    out->zero_points = z;
    out->storage = obs->storage;
    return NULL;
}

void qs_observer_release(sy_observer *obs)
{
    if (!obs)
        return;
    sy_calib_free(obs->calib);
    free(obs);
}

void qs_params_free(sy_quant_params *qp)
{
    if (!qp)
        return;
    QH->free((void *)qp->scales);
    QH->free((void *)qp->zero_points);
    qp->scales = NULL;
    qp->zero_points = NULL;
}

sy_status *qs_register(const sy_host_api *host, sy_plugin *p, const sy_quant_scheme_def *schemes, uint32_t n_schemes,
                       const sy_quant_recipe *recipes, uint32_t n_recipes)
{
    QH = host;
    for (uint32_t i = 0; i < n_schemes; i++)
        SY_TRY(host->register_quant_scheme(p, &schemes[i]));
    for (uint32_t i = 0; i < n_recipes; i++) {
        char name[96];
        snprintf(name, sizeof name, "quant_recipe.%s", recipes[i].name);
        SY_TRY(host->register_extension(p, name, SY_QUANT_RECIPE_VERSION, &recipes[i]));
    }
    return NULL;
}
