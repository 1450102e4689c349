/* The quantizer's pieces (sy_quantize in quantize.c drives them):
 *   quant_graph.c        the working graph: nodes and initializers of the
 *                        decoded model, queries, packing it back
 *   quant_opset.c        raising the default-domain opset (13, 21)
 *   quant_fold.c         Conv + BatchNormalization / Add folded into W, B
 *   quant_calib.c        calibration samples and what they taught about
 *                        each value (observers, constants)
 *   quant_qdq.c          the QDQ rewrite (Q/DQ pairs, weights, biases)
 *   quant_weight_only.c  fp16 storage and int4 blocks
 *   quant_external.c     external data read into the tensors
 *   quant_widen.c        a float16 model widened to its float32 form
 * Internal: the functions return 0, -1 (out of memory) or 1 (refused, the
 * message in err), as the rewrite needs no more. */
#ifndef SY_QUANT_INTERNAL_H
#define SY_QUANT_INTERNAL_H

#include "onnx.pb-c.h"
#include "tl_onnx.h"
#include "tl_pool.h"

#include <switchyard/switchyard.h>
/* after switchyard.h: the recipe types a quant_* plugin publishes, and the
 * public sy_tensor_numel rather than the SDK's inline one */
#include <switchyard/sy_sdk.h>
#include <switchyard/ext/sy_qdq_patterns.h>

#include <stdbool.h>
#include <stdint.h>

void q_seterr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- the working graph (quant_graph.c) ------------------------------------ */
typedef struct wnode {
    char *name, *op, *domain;
    char **in, **out;
    size_t nin, nout;
    Onnx__AttributeProto **attrs;
    size_t nattr;
    bool dead;
} wnode;

typedef struct wgraph {
    tl_pool pl;
    Onnx__ModelProto *model; /* the unpacked input (borrowed from) */
    wnode *nodes;
    size_t n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    size_t n_inits, cap_inits;
    int64_t opset;
    int name_seq;
} wgraph;

/* op is one of the NULL-terminated list */
bool q_op_in(const char *op, const char *const *list);
/* the ONNX TensorProto data type of a sy_dtype (the numbering is ONNX's) */
static inline int q_onnx_dtype(sy_dtype dt) { return (int)dt; }

bool q_load_graph(wgraph *g);
wnode *q_add_node(wgraph *g, const char *op, const char *name, size_t nin, size_t nout);
void q_add_init(wgraph *g, Onnx__TensorProto *t);
Onnx__TensorProto *q_find_init(const wgraph *g, const char *name);
void q_replace_init(wgraph *g, Onnx__TensorProto *old, Onnx__TensorProto *nw);
const Onnx__AttributeProto *q_attr(const wnode *n, const char *name);
int64_t q_attr_i(const wnode *n, const char *name, int64_t def);
float q_attr_f(const wnode *n, const char *name, float def);
void q_node_set_attrs(wgraph *g, wnode *n, Onnx__AttributeProto **a, size_t k);
/* producer node index of a value, -1 none */
long q_producer_of(const wgraph *g, const char *v);
/* readers of v (live nodes); *last: the last reader's index */
size_t q_count_uses(const wgraph *g, const char *v, long *last);
bool q_is_graph_output(const wgraph *g, const char *v);
int64_t q_numel(const Onnx__TensorProto *t);
/* float32 contents of an initializer (a pool copy), NULL if not float32 */
float *q_floats(wgraph *g, const Onnx__TensorProto *t);
/* float32 contents of the initializer `name`, NULL if none */
float *q_const_floats(wgraph *g, const char *name, int64_t *numel);
/* "base__suffixN", unique in the graph */
char *q_uniq(wgraph *g, const char *base, const char *suffix);
/* Every tensor of the model (initializers, attributes, subgraphs) that keeps
 * its bytes in an external file gets them inline (quant_external.c): dir is
 * the model's folder (NULL: given as bytes), model_bytes the size of its
 * protobuf. 0, -1 (out of memory), 1 (refused, err). */
int q_inline_external(Onnx__ModelProto *m, const char *dir, size_t model_bytes, size_t *n_inlined, char *err,
                      size_t err_len);
/* A float16 model as its float32 form (quant_widen.c): float16
 * initializers and Constants widened, Casts to float16 made Casts to
 * float32, float16 graph inputs and outputs kept behind Casts. *n_widened:
 * the initializers widened. 0 (also for a model without float16), -1 out
 * of memory, 1 refused (err names the node). */
int q_widen_f16(wgraph *g, size_t *n_widened, char *err, size_t elen);
/* drop nodes nothing reads, then initializers nothing reads */
void q_drop_unused(wgraph *g);
/* The working graph as a model; extra: names made graph outputs (the
 * calibration copy). A malloc'd buffer, NULL when out of memory. */
uint8_t *q_pack_model(wgraph *g, char **extra, size_t n_extra, size_t *len);

/* ---- opset and folds (quant_opset.c, quant_fold.c) ------------------------ */
/* to 13; ranks[i]: rank of node i's output 0 (-1 unknown) */

/* to 21 (int4 blocks, 16-bit Q/DQ) */
int q_raise_opset_21(wgraph *g, char *err, size_t elen);
/* Conv -> BatchNormalization / Add(per-channel constant); the count, -1 out of memory */
int q_fold_conv_affine(wgraph *g);

/* ---- calibration (quant_calib.c) ------------------------------------------ */
typedef struct q_samples {
    size_t n;
    char ***files;                   /* [sample][input] from a folder, or NULL */
    const sy_tensor *const *tensors; /* [sample * n_inputs] from the caller, or NULL */
    size_t n_inputs;
} q_samples;

/* Sample folders (input_N.pb / input_N.npy), or .npy files for a one-input model. */
int q_find_samples(tl_pool *pl, const char *dir, size_t n_inputs, q_samples *out, char *err, size_t elen);
sy_status *q_feed(sy_session *s, const q_samples *sm, size_t i);
/* a name for sample i in messages */
const char *q_sample_name(const q_samples *sm, size_t i, char *buf, size_t len);

/* per value of the graph: what calibration learnt */
typedef struct vinfo {
    char *name;
    sy_dtype dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    float *data;      /* first sample's values (constants) */
    size_t numel;
    sy_observer *obs; /* activation observer */
    bool varies;      /* differs between samples: not a constant */
    bool seen;
} vinfo;

/* Raise the default-domain opset to 13 (quant_opset.c); outs: each node's
 * first output (node order of the working graph), NULL entries unknown */
int q_upgrade_opset(wgraph *g, const vinfo *const *outs, char *err, size_t elen);

typedef struct qrun {
    wgraph *g;
    const sy_quant_recipe *rc;
    const sy_qdq_patterns *pt; /* what folds into which kernel (the QDQ rewrite) */
    bool per_channel;
    sy_calib_method method;
    double pct;
    vinfo *vals;
    size_t n_vals;
    char err[512];
} qrun;

vinfo *q_vfind(vinfo *v, size_t n, const char *name);
/* an initializer, or computed by nodes from constants only (same in every sample) */
bool q_is_const_value(qrun *q, const char *name);
const float *q_const_data(qrun *q, const char *name, int32_t *rank, int64_t *dims);
/* a float activation with an observer, not a constant */
bool q_is_float_act(qrun *q, const char *name);

/* ---- rewrites (quant_qdq.c, quant_weight_only.c) --------------------------- */
/* Q/DQ pairs, quantized weights and biases; 0, -1 out of memory (q->err
 * empty) or a refusal in q->err */
int q_rewrite_qdq(qrun *q);
/* weights only: fp16 (block 0) or int4 blocks of `block`; *n_done rewritten */
int q_rewrite_weights(qrun *q, int32_t block, size_t *n_done);

#endif
