/* The training builder's pieces (sy_train_build in train_build.c drives
 * them):
 *   train_graph.c     a graph being written: nodes, initializers, inputs and
 *                     outputs in a pool, packed into an ONNX model
 *   train_autodiff.c  the backward rules, one per forward operator
 *   train_session.c   the runtime over the artifacts (sy_train_session_*)
 * Names of the artifacts' values are fixed here, so the builder and the
 * runtime agree on them. */
#ifndef SY_TRAIN_INTERNAL_H
#define SY_TRAIN_INTERNAL_H

#include "onnx.pb-c.h"
#include "tl_onnx.h"
#include "tl_pool.h"

#include <switchyard/switchyard.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TR_DOMAIN "switchyard.train"
#define TR_ONNX_DOMAIN "ai.onnx.preview.training"
#define TR_LABELS "labels"
#define TR_LOSS "loss"
#define TR_LR "lr"
#define TR_STEP "step"
#define TR_BATCH "batch"

/* the artifacts' files */
#define TR_TRAINING_FILE "training.onnx"
#define TR_EVAL_FILE "eval.onnx"
#define TR_OPTIMIZER_FILE "optimizer.onnx"
#define TR_CHECKPOINT_FILE "checkpoint.onnx"
#define TR_FORWARD_FILE "forward.onnx"

/* ---- a graph being written (train_graph.c) ---------------------------------- */
typedef struct tr_node {
    char *op, *domain, *name;
    char **in, **out;
    size_t nin, nout;
    Onnx__AttributeProto **attrs;
    size_t nattr, cap_attr;
} tr_node;

typedef struct tr_graph {
    tl_pool *pl;
    tr_node *nodes;
    size_t n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits, cap_inits;
    Onnx__ValueInfoProto **inputs, **outputs;
    size_t n_inputs, cap_inputs, n_outputs, cap_outputs;
    int seq;
} tr_graph;

/* A node; inputs and outputs are copied (NULL entries and "" are omitted
 * optional values). NULL when out of memory. */
tr_node *tr_add_node(tr_graph *g, const char *op, const char *domain, const char *const *in, size_t nin,
                     const char *const *out, size_t nout);
bool tr_node_attr(tr_graph *g, tr_node *n, Onnx__AttributeProto *a);
/* a copy of attribute a into n */
bool tr_node_copy_attr(tr_graph *g, tr_node *n, const Onnx__AttributeProto *a);
bool tr_add_init(tr_graph *g, Onnx__TensorProto *t);
bool tr_add_input(tr_graph *g, Onnx__ValueInfoProto *vi);
bool tr_add_output(tr_graph *g, Onnx__ValueInfoProto *vi);
/* a fresh value name "base__tag<N>" */
char *tr_uniq(tr_graph *g, const char *base, const char *tag);
/* A tensor value info copied from vi (elem type `elem`, named `name`) with
 * dim 0 made the symbolic batch TR_BATCH. NULL when out of memory. */
Onnx__ValueInfoProto *tr_with_batch(tl_pool *p, const Onnx__ValueInfoProto *vi, const char *name, int elem);
/* A name-only value info (outputs whose type the runtime infers). */
Onnx__ValueInfoProto *tr_value_name(tl_pool *p, const char *name);
/* The model: `like` gives IR version and producer; opsets: the default
 * domain at `opset` plus switchyard.train 1 and ai.onnx.preview.training 1.
 * malloc'd bytes, NULL when out of memory. */
uint8_t *tr_pack(tr_graph *g, const Onnx__ModelProto *like, int64_t opset, size_t *len);

/* ---- backward rules (train_autodiff.c) --------------------------------------- */

/* What the rules see of the forward graph. */
typedef struct tr_autodiff {
    tr_graph *g;                  /* the training graph being written */
    const Onnx__GraphProto *fwd;  /* the forward graph */
    int64_t opset;
    bool *needs;                  /* per forward value (index in names): gradient wanted */
    char **names;                 /* every forward value name */
    char **grad;                  /* its gradient value in g, NULL none yet */
    size_t n_values;
    char err[512];
    size_t backward_nodes;
    /* a target's rules (train_rules.c): NULL the host */
    const struct tr_rules *rules;
} tr_autodiff;

/* index of a forward value, -1 unknown */
long tr_value_index(const tr_autodiff *ad, const char *name);
/* Emit the backward of forward node `n` (its outputs' gradients are known).
 * 0 done, -1 out of memory, 1 refused (ad->err says which node and why). */
int tr_backward_node(tr_autodiff *ad, const Onnx__NodeProto *n);

/* ---- feeding samples (train_feed.c) ------------------------------------------ */

/* sy_session_set_input_by_index (borrowed) of data input i of model m, with a
 * sample whose shape differs from the input's only by axes of size 1 (an IDX
 * image [1, H, W] for an NHWC [N, H, W, 1] input) fed in the input's shape. */
sy_status *tr_feed_input(sy_session *ss, const sy_model *m, size_t i, const sy_tensor *t);

/* ---- the seed's training constraints (train_rules.c) ------------------------ */

/* The value shapes of the forward model (one run at batch 1) and the target
 * whose table the gradient path must match. */
typedef struct tr_rules tr_rules;

/* NULL target: *out = NULL, nothing to check. "ws63": the shapes are probed
 * in env (NULL: the default env). Anything else is refused. */
sy_status *tr_rules_create(const char *target, sy_env *env, const char *model_path, const Onnx__GraphProto *fwd,
                           tr_rules **out);
void tr_rules_release(tr_rules *r);
/* 0 when forward node n (on the gradient path) matches its row; 1 with
 * ad->err quoting the row when it does not. */
int tr_rules_check(tr_autodiff *ad, const Onnx__NodeProto *n);

/* ---- the seed's QAS-INT8 rows (train_qas_rules.c) --------------------------- */

/* The initializer called name in g, NULL when none. */
const Onnx__TensorProto *tr_qas_init(const Onnx__GraphProto *g, const char *name);
/* 0 when node n of the QDQ graph g matches its QAS-INT8 row of seed 001 §4;
 * 1 with err saying what broke the row and quoting it. */
int tr_qas_rules_check(const Onnx__GraphProto *g, const Onnx__NodeProto *n, char *err, size_t len);

#endif
