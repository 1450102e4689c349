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
/* ml_linear.c: LinearClassifier, CategoryMapper, FeatureVectorizer */
sy_status *ml_linear_register(const sy_host_api *host, sy_plugin *p);

/* ml_svm.c: SVMRegressor, SVMClassifier */
sy_status *ml_svm_register(const sy_host_api *host, sy_plugin *p);

/* classlabels_ints / classlabels_strings of the classifiers (borrowed from
 * the attributes, which live as long as the session) */
typedef struct ml_labels {
    bool strings;
    int64_t n;
    const int64_t *ints;
    const char *const *strs;
} ml_labels;
/* exactly one of the two, non-empty */
sy_status *ml_labels_read(const sy_host_api *host, const sy_node *n, ml_labels *l);
/* y[i] = label k */
void ml_label_store(const ml_labels *l, sy_tensor *y, int64_t i, int64_t k);
/* after the stores: string labels get their own text in the run's heap */
sy_status *ml_labels_own(const sy_host_api *host, const sy_kernel_io *io, const ml_labels *l, sy_tensor *y, int64_t n);

enum { ML_PT_NONE, ML_PT_SOFTMAX, ML_PT_LOGISTIC, ML_PT_SOFTMAX_ZERO, ML_PT_PROBIT };
/* ml.c: post_transform (0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT) on n scores in place */
void ml_post_transform(int post, double *v, int64_t n);
/* the post_transform string attribute of the ml-1/3 operators (absent: NONE) */
sy_status *ml_post_transform_attr(const sy_host_api *host, const sy_node *n, int *out);

#endif
