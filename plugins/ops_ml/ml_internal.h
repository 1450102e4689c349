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

/* ml_tree.c: TreeEnsembleRegressor 1/3 */
sy_status *ml_tree_register(const sy_host_api *host, sy_plugin *p);

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

/* ml.c: a tree ensemble as TreeEnsemble (5) states it; TreeEnsembleRegressor
 * 1/3 (ml_tree.c) builds the same model and runs ml_te_run */
typedef struct te_model {
    int64_t n_nodes, n_leaves, n_trees, n_targets, n_features;
    int32_t agg, post;
    const int64_t *feat, *tnode, *fnode, *tleaf, *fleaf, *roots, *ltarget, *missing;
    uint8_t *mode;  /* [n_nodes] */
    double *split;  /* [n_nodes] */
    double *weight; /* [n_leaves], or [leaf_off[n_leaves]] */
    int64_t *set_off, *set_len; /* per node: its MEMBER values in `sets` */
    double *sets;
    int64_t *leaf_off;       /* NULL (one weight per leaf) or [n_leaves + 1]: leaf l's pairs */
    double *base;            /* NULL or [n_targets]: added after aggregation */
    int64_t n_base;          /* base's count (classifiers may have fewer than the classes) */
    bool single_probit_only; /* one target: post_transform only if PROBIT (ORT's regressor 1/3) */
    void *owned;             /* one block behind the const arrays, when they are not attributes */
} te_model;
void ml_te_free(void *p);
sy_status *ml_te_run(void *state, const sy_kernel_io *io);
/* row r of X through every tree: acc[t] aggregated (AVERAGE not yet divided), seen[t] some leaf reached t */
sy_status *ml_te_row(const te_model *m, const sy_tensor *x, int64_t r, double *acc, uint8_t *seen);

enum { ML_PT_NONE, ML_PT_SOFTMAX, ML_PT_LOGISTIC, ML_PT_SOFTMAX_ZERO, ML_PT_PROBIT };
/* ml.c: post_transform (0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT) on n scores in place */
void ml_post_transform(int post, double *v, int64_t n);
/* the post_transform string attribute of the ml-1/3 operators (absent: NONE) */
sy_status *ml_post_transform_attr(const sy_host_api *host, const sy_node *n, int *out);

#endif
