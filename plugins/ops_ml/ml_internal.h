/* ops_ml internals shared between its source files. */
#ifndef SY_OPS_ML_INTERNAL_H
#define SY_OPS_ML_INTERNAL_H

#include "switchyard/sy_sdk.h"

/* tfidf.c: TfIdfVectorizer (default domain) on token ids */
sy_status *ml_tfidf_register(const sy_host_api *host, sy_plugin *p);
/* label_encoder.c: LabelEncoder (ai.onnx.ml 2, 4) on strings and numbers */
sy_status *ml_label_encoder_register(const sy_host_api *host, sy_plugin *p);

#endif
