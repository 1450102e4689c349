/* ops_ml internals shared between its source files. */
#ifndef SY_OPS_ML_INTERNAL_H
#define SY_OPS_ML_INTERNAL_H

#include "switchyard/sy_sdk.h"

/* tfidf.c: TfIdfVectorizer (default domain) on token ids */
sy_status *ml_tfidf_register(const sy_host_api *host, sy_plugin *p);
/* label_encoder.c: LabelEncoder (ai.onnx.ml 2, 4) on strings and numbers */
sy_status *ml_label_encoder_register(const sy_host_api *host, sy_plugin *p);

/* ml_feat.c: ArrayFeatureExtractor, Scaler, Normalizer, Imputer, OneHotEncoder, LinearRegressor */
sy_status *ml_feat_register(const sy_host_api *host, sy_plugin *p);
/* ml.c: post_transform (0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT) on n scores in place */
void ml_post_transform(int post, double *v, int64_t n);
/* the post_transform string attribute of the ml-1/3 operators (absent: NONE) */
sy_status *ml_post_transform_attr(const sy_host_api *host, const sy_node *n, int *out);

#endif
