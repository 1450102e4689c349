/*
 * Shared by the quant_* scheme plugins (compiled into each; plugins never
 * share code at run time): observers on sy_sdk's sy_calib, ONNX-rounding
 * quantize/dequantize, and the registration of schemes plus their
 * "quant_recipe.NAME" extension tables.
 */
#ifndef SY_QUANT_SCHEME_COMMON_H
#define SY_QUANT_SCHEME_COMMON_H

#include "switchyard/sy_sdk.h"

extern const sy_host_api *QH;

sy_status *qs_quantize(const float *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, void *dst);
sy_status *qs_dequantize(const void *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, float *dst);
sy_status *qs_fp16_quantize(const float *src, size_t n, const sy_quant_params *qp, int64_t channel_stride, void *dst);
sy_status *qs_fp16_dequantize(const void *src, size_t n, const sy_quant_params *qp, int64_t channel_stride,
                              float *dst);
/* observer_create of a scheme: [plugin.X] method = minmax | percentile,
 * percentile = 99.99 (the ABI's observer_create has no scheme argument, so
 * each scheme gets a wrapper from QS_DEFINE) */
sy_status *qs_observer_create_for(const sy_options *opts, sy_dtype storage, bool symmetric, sy_observer **obs);
sy_status *qs_observer_update(sy_observer *obs, const sy_tensor *t);
sy_status *qs_observer_finalize(sy_observer *obs, sy_quant_params *out);
void qs_observer_release(sy_observer *obs);
sy_status *qs_observer_new(const sy_quant_scheme_def *s, sy_calib_method method, double percentile, sy_observer **out);
void qs_params_free(sy_quant_params *qp);

/* Defines `static sy_status *obs_ID(opts, obs)` for a scheme. */
#define QS_OBSERVER(id, storage_, sym_)                                                                            \
    static sy_status *obs_##id(const sy_options *opts, sy_observer **obs)                                          \
    {                                                                                                              \
        return qs_observer_create_for(opts, storage_, sym_, obs);                                                  \
    }
/* A scheme definition with the shared functions (QS_OBSERVER(id, ...) first). */
#define QS_SCHEME(id, nm, desc_, storage_, sym_, pc_)                                                              \
    {sizeof(sy_quant_scheme_def), nm, desc_, storage_, sym_, pc_, qs_quantize, qs_dequantize, obs_##id,           \
     qs_observer_update, qs_observer_finalize, qs_observer_release}

/* Registers the schemes and one recipe extension per recipe. */
sy_status *qs_register(const sy_host_api *host, sy_plugin *p, const sy_quant_scheme_def *schemes, uint32_t n_schemes,
                       const sy_quant_recipe *recipes, uint32_t n_recipes);

#endif
