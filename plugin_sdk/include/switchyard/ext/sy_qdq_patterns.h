/*
 * Extension "qdq_patterns" (version SY_QDQ_PATTERNS_VERSION): which float
 * op folds into which quantized kernel. The plugin that owns the integer
 * kernels (ops_quant, domain "switchyard.quant") publishes one table; the
 * core's QDQ pass (DequantizeLinear -> op -> QuantizeLinear into one
 * integer node) and the quantizer of the tools library (where to put
 * QuantizeLinear/DequantizeLinear pairs) both read it, so neither spells the
 * op lists itself.
 *
 * A host reads it with sy_get_extension(env, SY_QDQ_PATTERNS_EXTENSION,
 * SY_QDQ_PATTERNS_VERSION); a plugin registers it with register_extension.
 * The table and everything it points to live as long as the plugin.
 */
#ifndef SWITCHYARD_EXT_SY_QDQ_PATTERNS_H
#define SWITCHYARD_EXT_SY_QDQ_PATTERNS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_QDQ_PATTERNS_EXTENSION "qdq_patterns"
#define SY_QDQ_PATTERNS_VERSION 1u

/* How the QDQ pass rewrites a node (each a rewrite the core implements). */
typedef enum sy_qdq_fold {
    SY_QDQ_FOLD_NONE = 0,        /* the pass leaves it (the quantizer may still place pairs) */
    SY_QDQ_FOLD_CONV = 1,        /* DQ(x), DQ(w)[, DQ(b)] -> Conv -> Q: integer Conv */
    SY_QDQ_FOLD_MATMUL = 2,      /* DQ(a), DQ(b) -> MatMul -> Q */
    SY_QDQ_FOLD_GEMM = 3,        /* DQ(a), DQ(b)[, C] -> Gemm -> Q */
    SY_QDQ_FOLD_BINARY = 4,      /* DQ(a), DQ(b) -> Add/Sub/Mul -> Q */
    SY_QDQ_FOLD_CONCAT = 5,      /* DQ(x_i) ... -> Concat -> Q */
    SY_QDQ_FOLD_RNN = 6,         /* the integer RNN (one int8 hidden state) */
    SY_QDQ_FOLD_POOL = 7,        /* DQ(x) -> pool -> Q; attributes of the pool kept */
    SY_QDQ_FOLD_LUT = 8,         /* DQ(x) -> elementwise f -> Q: a table of 2^bits codes; attr "fn" = the op */
    SY_QDQ_FOLD_SOFTMAX = 9,     /* DQ(x) -> Softmax -> Q */
    SY_QDQ_FOLD_PASSTHROUGH = 10, /* moves codes only: the op runs on them when Q keeps DQ's parameters */
    SY_QDQ_FOLD_STATEFUL_GRU = 11, /* DQ(X, W, R[, initial_h]) -> qti_aisw StatefulGRU -> Q(Y[, Y_h]):
                                      the integer GRU with QRNN's inputs plus reset */
    SY_QDQ_FOLD_STATEFUL_LSTM = 12, /* DQ(X, W, R[, initial_h[, initial_c]]) -> qti_aisw StatefulLSTM ->
                                      Q(Y[, Y_h], Y_c): the same plus C's encoding, initial_c and P */
    SY_QDQ_FOLD_FLOAT = 13, /* DQ(x), constant fp32 inputs -> op -> Q: inputs x, x_scale, x_zp, y_scale,
                              y_zp, then the op's inputs 1.. as they are; attr "fn" = the op, the
                              pattern's attributes kept (the op computed in float between the two) */
    SY_QDQ_FOLD_CONV_TRANSPOSE = 14 /* DQ(x), DQ(w)[, DQ(b)] -> ConvTranspose -> Q: QConv's inputs, 8-bit
                                       x / w / y, 1-2 spatial dims, w per tensor or per channel on
                                       axis 1 (W is [C_in, C_out / group, k...]) */
} sy_qdq_fold;

/* sy_qdq_pattern.flags */
#define SY_QDQ_QUANTIZE (1u << 0)        /* the quantizer puts Q/DQ pairs on its data inputs and output */
#define SY_QDQ_SHARES_PARAMS (1u << 1)   /* the output keeps the input's scale and zero point */
#define SY_QDQ_FUSES_ACTIVATION (1u << 2) /* a following SY_QDQ_ACTIVATION op folds into its requantization */
#define SY_QDQ_ACTIVATION (1u << 3)      /* a clamp, [0, inf) (Relu) or [min, max] with SY_QDQ_CLIP_RANGE:
                                            may fold into the producer's requantization */
#define SY_QDQ_CONST_OPERANDS (1u << 4)  /* constant data inputs are quantized like activations */
#define SY_QDQ_WEIGHTS (1u << 5)         /* input 1 is a weight (weight scheme, per channel), input 2 a bias */
#define SY_QDQ_GLOBAL (1u << 6)          /* a global pool: attr "global" = 1 on the quantized node */
#define SY_QDQ_CLIP_RANGE (1u << 7)      /* min/max from inputs 1, 2 (opset >= 11) or attributes */
#define SY_QDQ_PAD_VALUE (1u << 8)       /* Pad: the constant pad value requantized to a code */

typedef struct sy_qdq_pattern {
    const char *op;             /* float op (of op_domain) */
    uint32_t fold;              /* sy_qdq_fold */
    const char *qop;            /* the quantized op in the table's domain; NULL for NONE / PASSTHROUGH */
    uint32_t flags;             /* SY_QDQ_* */
    uint32_t quantized_inputs;  /* data inputs the quantizer quantizes: bit k = input k (~0u: all) */
    const char *const *attrs;   /* attributes copied to the quantized node (NULL-terminated), or NULL */
    /* Appended fields: a table built before them has a pattern_size that
     * ends at `attrs`, and its rows are of the default domain. */
    const char *op_domain;      /* domain of `op`; NULL or "": the default ONNX domain */
    const char *qop_domain;     /* domain of `qop`; NULL or "": the table's domain */
} sy_qdq_pattern;

/* the end of the rows' fields a table of pattern_size bytes has */
#define SY_QDQ_PATTERN_V1_SIZE (offsetof(sy_qdq_pattern, attrs) + sizeof(const char *const *))

typedef struct sy_qdq_patterns {
    uint32_t struct_size;   /* sizeof(sy_qdq_patterns) */
    uint32_t pattern_size;  /* sizeof(sy_qdq_pattern) as the plugin was built: step by it */
    const char *domain;     /* of the quantized ops ("switchyard.quant") */
    uint32_t n_patterns;
    const sy_qdq_pattern *patterns;
} sy_qdq_patterns;

/* The domain of row p's float op ("" for the default domain). */
static inline const char *sy_qdq_op_domain(const sy_qdq_patterns *t, const sy_qdq_pattern *p)
{
    return t->pattern_size >= offsetof(sy_qdq_pattern, op_domain) + sizeof(const char *) && p->op_domain
               ? p->op_domain
               : "";
}
/* The domain of row p's quantized op (the table's domain unless the row names one). */
static inline const char *sy_qdq_qop_domain(const sy_qdq_patterns *t, const sy_qdq_pattern *p)
{
    return t->pattern_size >= offsetof(sy_qdq_pattern, qop_domain) + sizeof(const char *) && p->qop_domain &&
                   p->qop_domain[0]
               ? p->qop_domain
               : t->domain;
}

/* The pattern of `op` of `domain` (NULL, "" or "ai.onnx": the default domain), or NULL. */
static inline const sy_qdq_pattern *sy_qdq_find_in(const sy_qdq_patterns *t, const char *domain, const char *op)
{
    if (!t || !op)
        return 0;
    if (!domain || !strcmp(domain, "ai.onnx"))
        domain = "";
    for (uint32_t i = 0; i < t->n_patterns; i++) {
        const sy_qdq_pattern *p = (const sy_qdq_pattern *)((const char *)t->patterns + (uint64_t)i * t->pattern_size);
        if (p->op && !strcmp(p->op, op) && !strcmp(sy_qdq_op_domain(t, p), domain))
            return p;
    }
    return 0;
}

/* The pattern of `op` of the default domain, or NULL. */
static inline const sy_qdq_pattern *sy_qdq_find(const sy_qdq_patterns *t, const char *op)
{
    return sy_qdq_find_in(t, "", op);
}

#ifdef __cplusplus
}
#endif

#endif
