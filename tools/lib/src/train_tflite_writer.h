/* The part the two TFLite translations share (train_tflite_writer.c): the
 * float one (train_tflite.c, an ONNX forward model for training) and the
 * int8 one (train_tflite_int8.c, an ONNX QDQ model for QAS-INT8) read one
 * subgraph of a .tflite file and write an ONNX model of it the same way, and
 * differ only in how each operator is translated. What they share sits here:
 * the translation's state (tfw: the FlatBuffer, the model being written, the
 * value names in use, the operator being translated, for messages), the
 * tensors as read from the file, the refusals' wording, fresh value names,
 * nodes, constants and attributes, the operators' inputs and options, the
 * walk over the subgraph (tfw_translate, calling back for each tensor and
 * operator) and the write-back of trained tensors into the file
 * (tfw_export). Internal to tools/lib; not part of any public header. */
#ifndef SY_TRAIN_TFLITE_WRITER_H
#define SY_TRAIN_TFLITE_WRITER_H

#include "tflite_fb.h"
#include "tflite_ops.h"
#include "train_tflite.h"

#include <switchyard/sy_sdk.h>
#include <switchyard/sy_tools.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* schema.fbs field ids (as framework/src/tflite_import.c reads them) */
enum { MODEL_VERSION = 0, MODEL_OPCODES = 1, MODEL_SUBGRAPHS = 2, MODEL_BUFFERS = 4, MODEL_SIGNATURE_DEFS = 7 };
enum { SIG_KEY = 2, SIG_SUBGRAPH_INDEX = 4 };
enum { OPC_DEPRECATED_CODE = 0, OPC_VERSION = 2, OPC_BUILTIN_CODE = 3 };
enum { SG_TENSORS = 0, SG_INPUTS = 1, SG_OUTPUTS = 2, SG_OPERATORS = 3 };
enum { TENSOR_SHAPE = 0, TENSOR_TYPE = 1, TENSOR_BUFFER = 2, TENSOR_NAME = 3, TENSOR_QUANT = 4, TENSOR_SPARSITY = 6 };
enum { Q_SCALE = 2, Q_ZERO_POINT = 3, Q_DIMENSION = 6 };
enum { OP_OPCODE_INDEX = 0, OP_INPUTS = 1, OP_OUTPUTS = 2, OP_OPTIONS_TYPE = 3, OP_OPTIONS = 4 };
enum { BUF_DATA = 0, BUF_OFFSET = 1, BUF_SIZE = 2 };
/* TensorType */
enum { TT_FLOAT32 = 0, TT_INT32 = 2, TT_UINT8 = 3, TT_INT64 = 4, TT_INT16 = 7, TT_INT8 = 9 };
/* BuiltinOperator codes one of the translations translates */
enum {
    OP_ADD = 0,
    OP_AVERAGE_POOL_2D = 1,
    OP_CONCATENATION = 2,
    OP_CONV_2D = 3,
    OP_DEPTHWISE_CONV_2D = 4,
    OP_DEQUANTIZE = 6,
    OP_FULLY_CONNECTED = 9,
    OP_LOGISTIC = 14,
    OP_MAX_POOL_2D = 17,
    OP_MUL = 18,
    OP_RELU = 19,
    OP_RELU_N1_TO_1 = 20,
    OP_RELU6 = 21,
    OP_RESHAPE = 22,
    OP_SOFTMAX = 25,
    OP_TANH = 28,
    OP_PAD = 34,
    OP_TRANSPOSE = 39,
    OP_MEAN = 40,
    OP_SUB = 41,
    OP_DIV = 42,
    OP_SQUEEZE = 43,
    OP_STRIDED_SLICE = 45,
    OP_MAXIMUM = 55,
    OP_MINIMUM = 57,
    OP_PADV2 = 60,
    OP_SLICE = 65,
    OP_SUM = 74,
    OP_ABS = 101,
    OP_QUANTIZE = 114,
    OP_BATCH_MATMUL = 126
};
/* ActivationFunctionType */
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };

#define TFW_MAX_RANK 8
#define TFW_MAX_INPUTS 16

/* A tensor of the subgraph translated: what the file says of it, and what
 * the translation has written of it so far. */
typedef struct tfw_tensor {
    char *vname;          /* the ONNX value name (unique) */
    int8_t type;          /* TensorType */
    int32_t rank;
    int64_t dims[TFW_MAX_RANK];
    uint32_t buffer;
    const uint8_t *data;  /* constant bytes in the file (NULL: a runtime tensor) */
    size_t nbytes;
    uint64_t offset;      /* where data is in the file */
    bool available;       /* a graph input, a constant or an earlier operator's output */
    uint32_t nq;          /* quantization scales (0: not quantized) */
    /* the int8 translation's (read_quant): nq scales and zero points, the per-channel dimension */
    const float *scale;
    const int64_t *zp;
    int32_t qdim;
    /* the float translation's: the layout of the initializer made of a constant, -1 none yet */
    int layout;
    /* the int8 translation's: an activation's DequantizeLinear and its scale and
     * zero point initializers, once made; a constant made an initializer */
    const char *dq, *qs, *qz;
    bool init;
    /* the int8 translation's: init is a constant's codes (read as they are, or through dq), not weights */
    bool codes;
} tfw_tensor;

typedef struct tfw {
    fb_reader r;
    const char *where;    /* the file, for messages */
    const char *what;     /* "TFLite translation", "int8 TFLite translation": an out-of-memory refusal's */
    tr_tfl_model *m;      /* what is written (its pool holds every name) */
    sy_model_writer *w;
    tfw_tensor *t;
    uint32_t nt;
    fb_vec buffers;
    int32_t *codes;       /* opcode index -> builtin code */
    uint32_t n_codes;
    char **names;         /* every value name in use (tensors and fresh ones) */
    size_t n_names, cap_names;
    size_t cap_params;
    /* the operator being translated, for messages and node names */
    uint32_t oi;
    const char *opname;
    unsigned seq;
} tfw;

/* ---- refusals ---- */
sy_status *tfw_oom(const tfw *c);
/* the reader's first error as a corrupt file */
sy_status *tfw_corrupt(const tfw *c);
#define TFW_CHECK_FB(c)                                                                                            \
    do {                                                                                                           \
        if (fb_failed(&(c)->r))                                                                                    \
            return tfw_corrupt(c);                                                                                 \
    } while (0)
/* "WHERE: operator #I (NAME): ..." (SY_ERR_UNSUPPORTED) */
sy_status *tfw_refuse(const tfw *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "WHERE: tensor #I 'NAME': ..." (SY_ERR_UNSUPPORTED) */
sy_status *tfw_bad_tensor(const tfw *c, uint32_t i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *tfw_type_name(int type);

/* ---- names, nodes, constants ---- */
bool tfw_name_used(const tfw *c, const char *s);
/* s (in the pool) recorded as used; NULL when out of memory */
char *tfw_claim(tfw *c, char *s);
/* a value name nobody uses: base__tag, base__tag2, ...; NULL when out of memory */
const char *tfw_fresh(tfw *c, const char *base, const char *tag);
/* a node named after the operator being translated: OPNAME_I_OPSEQ */
sy_status *tfw_node(tfw *c, const char *op, const char *const *in, size_t nin, const char *out,
                    const sy_model_attr *attrs, size_t nattr);
sy_model_attr tfw_int_attr(const char *name, int64_t v);
sy_model_attr tfw_ints_attr(const char *name, const int64_t *v, size_t n);
sy_status *tfw_add_init(tfw *c, const char *name, sy_dtype dt, int32_t rank, const int64_t *dims, const void *data,
                        size_t nbytes);
/* a fresh int64 initializer (a vector, or a scalar of one value), *name its name */
sy_status *tfw_const_i64(tfw *c, const char *base, const char *tag, const int64_t *v, size_t n, bool scalar,
                         const char **name);
/* a fresh float32 scalar */
sy_status *tfw_const_f32(tfw *c, const char *base, const char *tag, float v, const char **name);
/* tensor ti listed in m->params as an initializer of `layout` and `type` */
sy_status *tfw_add_param(tfw *c, int32_t ti, int layout, int type);
/* constant bytes of `esize`-byte elements of an OHWI or 1HWC tensor (an
 * AS_IS one is copied as it is) rearranged from the TFLite
 * layout (dims of the TFLite tensor) into ONNX's (to_onnx) or back */
void tfw_relayout(int layout, const int64_t *dims, size_t esize, bool to_onnx, const void *src, void *dst);

/* ---- tensors ---- */
static inline bool tfw_tensor_ok(const tfw *c, int32_t ti) { return ti >= 0 && (uint32_t)ti < c->nt; }
int64_t tfw_numel(const tfw_tensor *t);
const char *tfw_shape_str(char *buf, size_t len, const int64_t *d, int32_t r);
/* the output tensor has the shape the translation computes */
sy_status *tfw_check_shape(const tfw *c, int32_t out, const int64_t *dims, int32_t rank);
/* an axis in [-rank, rank) made positive */
sy_status *tfw_axis(const tfw *c, int64_t a, int32_t rank, int64_t *out);
/* A reduction of x over the n axes v (each in [-rank, rank); one named
 * twice reduced once, as TFLite does): axes[0..*na) the reduced ones,
 * positive and in order, od[0..*r) the output's shape, with the reduced
 * axes kept as 1 (keep) or dropped. */
sy_status *tfw_reduce_axes(const tfw *c, const tfw_tensor *x, const int64_t *v, size_t n, bool keep, int64_t *axes,
                           size_t *na, int64_t *od, int32_t *r);
/* the values of an int32 (or int64) constant tensor; *n its count */
sy_status *tfw_const_ints(const tfw *c, int32_t ti, int64_t *out, size_t cap, size_t *n, const char *what);

/* ---- operators ---- */
typedef struct tfw_opts {
    fb_table o;
    const tfl_op_desc *d;
} tfw_opts;
int32_t tfw_opt_int(tfw *c, const tfw_opts *p, const char *name);
float tfw_opt_f32(tfw *c, const tfw_opts *p, const char *name);
/* an option's field (NULL: the options have none of that name) */
const tfl_field *tfw_field(const tfw_opts *p, const char *name);

typedef struct tfw_opio {
    int32_t in[TFW_MAX_INPUTS];
    uint32_t nin;
    int32_t out;
} tfw_opio;

/* ---- shape operators shared by the two translations ---- */
/* SQUEEZE's axes (squeeze_dims, or every axis of size 1), the output shape checked */
sy_status *tfw_squeeze_axes(tfw *c, const tfw_opio *io, const tfw_opts *p, int64_t *axes, size_t *na);
/* TRANSPOSE's constant permutation (input 1) checked, the output shape checked */
sy_status *tfw_transpose_perm(tfw *c, const tfw_opio *io, int64_t *perm);
/* STRIDED_SLICE's constant begin, end and strides and its masks resolved by
 * sy_ss_resolve into a full-rank Slice (starts b, ends e, steps s of the
 * input's rank), the shrunk input axes and the new output axes (bits) */
sy_status *tfw_strided_slice(tfw *c, const tfw_opio *io, const tfw_opts *p, int64_t *b, int64_t *e, int64_t *s,
                             uint32_t *shrink, uint32_t *new_axes);
/* between two nodes of one operator's chain: the value v the next node reads instead of v */
typedef sy_status *(*tfw_stage_fn)(tfw *c, int32_t out, const char *v, const char **next);
/* Slice of value a [→ Squeeze of the shrunk axes] [→ Unsqueeze of the new
 * axes] into out (the output's shape checked); stage (NULL: none) between
 * two of them */
sy_status *tfw_emit_slice(tfw *c, const tfw_opio *io, const char *a, const char *out, const int64_t *starts,
                          const int64_t *ends, const int64_t *steps, uint32_t shrink, uint32_t new_axes,
                          tfw_stage_fn stage);

/* The operator's builtin code (c->opname set from it). */
sy_status *tfw_op_code(tfw *c, fb_table op, int32_t *code);
/* Its builtin options, of the type its code's descriptor says. */
sy_status *tfw_op_options(tfw *c, fb_table op, int32_t code, tfw_opts *p);
/* Its inputs (1 to max_in, -1 only as an omitted third input where
 * bias_ok: then nin is 2) and its one output, which nothing has written. */
sy_status *tfw_op_io(tfw *c, fb_table op, uint32_t max_in, bool bias_ok, tfw_opio *io);
/* SAME (0) / VALID (1) padding of one spatial axis: the output size and the
 * leading and trailing pads; a stride or dilation past max_step (0: any) refused */
sy_status *tfw_pad_axis(const tfw *c, int padding, int64_t in, int64_t k, int64_t stride, int64_t dil,
                        int64_t max_step, int64_t *out, int64_t *before, int64_t *after);

/* The 2-D window of a CONV_2D or DEPTHWISE_CONV_2D (kernel kh x kw, the
 * filter's) or a pool (kernel from the options' filter_height and
 * filter_width, kh and kw ignored) over an NHWC input of h x w: the options'
 * padding, strides and dilations (a pool's 1), the output size, and the
 * fused activation, not checked. */
typedef struct tfw_window {
    int64_t k[2], s[2], d[2], pads[4]; /* ONNX's kernel_shape, strides, dilations, pads */
    int64_t oh, ow;
    int act;
} tfw_window;
sy_status *tfw_window_of(tfw *c, const tfw_opts *p, bool pool, int64_t h, int64_t w, int64_t kh, int64_t kw,
                         int64_t max_step, tfw_window *win);
/* An NCHW operator on the NHWC value x: x Transposed to NCHW (xt), `op`
 * reading it and `more` (weights, bias) into yt, and yt Transposed back
 * to out; attrs the window's (kernel_shape, strides, pads; dilations and
 * group when conv_group > 0). */
sy_status *tfw_nchw_node(tfw *c, const char *op, const char *x, const char *const *more, size_t nmore,
                         const char *xt, const char *yt, const char *out, const tfw_window *win, int64_t conv_group);

/* ---- the subgraph ---- */
typedef struct tfw_hooks {
    const char *producer;
    /* tensor i just read (its table t); NULL: nothing more */
    sy_status *(*tensor)(tfw *c, uint32_t i, fb_table t);
    /* every tensor read */
    sy_status *(*tensors_done)(tfw *c);
    /* graph input ti: its ONNX type, or a refusal */
    sy_status *(*input)(tfw *c, int32_t ti, sy_dtype *dt);
    /* one operator, c->oi its index */
    sy_status *(*op)(tfw *c, fb_table op);
    /* a graph output's ONNX type */
    sy_dtype (*output)(const tfw_tensor *t);
} tfw_hooks;

/* The subgraph `subgraph` names (or `index` when >= 0, as
 * tr_tflite_pick_subgraph chooses) translated into out, with h's calls. */
sy_status *tfw_translate(const uint8_t *data, size_t size, const char *where, const char *subgraph, int64_t index,
                         const tfw_hooks *h, const char *what, tr_tfl_model *out);

/* The .tflite at src translated again by `translate` (subgraph index) with
 * the trained tensors' bytes (ONNX layout) written over their buffers, to
 * path. `noun` says what a trained tensor must be ("a constant", "an int8
 * weight or int32 bias"), `values_are` what its bytes are ("values",
 * "codes"), for the refusals. */
typedef sy_status *(*tfw_translate_fn)(const uint8_t *data, size_t size, const char *where, const char *subgraph,
                                       int64_t index, tr_tfl_model *out);
sy_status *tfw_export(const char *src, uint32_t subgraph, const char *path, size_t n, const char *const *names,
                      const void *const *values, const size_t *nbytes, tfw_translate_fn translate, const char *noun,
                      const char *values_are);

#endif
