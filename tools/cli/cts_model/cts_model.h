/*
 * The conformance kit's single-node models: a node (op, opset, inputs with
 * data, attributes) written as an ONNX model with the tools library's model
 * writer, its session, its inputs fed. A static library (sy_cts_model) of
 * the CLI's `cts`, also linked by tests/abi_stability.
 */
#ifndef SY_CTS_MODEL_H
#define SY_CTS_MODEL_H

#include <switchyard/switchyard.h>

#include <stdbool.h>
#include <stdint.h>

#define CTS_MAX_IO 4
#define CTS_MAX_ATTRS 4

/* ---- models ---------------------------------------------------------------- */
typedef enum cts_attr_kind { CTS_ATTR_INT = 1, CTS_ATTR_FLOAT = 2 } cts_attr_kind;

typedef struct cts_attr {
    const char *name;
    cts_attr_kind kind;
    int64_t i;
    float f;
} cts_attr;

/* One input: dtype, shape and (for running) its data. */
typedef struct cts_value {
    sy_dtype dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    void *data; /* malloc'ed; NULL only for a zero-size tensor */
    size_t nbytes;
} cts_value;

typedef struct cts_node {
    const char *op;
    int64_t opset;
    const char *domain; /* NULL or "": the default domain (opset above); else at version 1 */
    uint32_t n_inputs, n_outputs;
    cts_value in[CTS_MAX_IO];
    uint32_t n_attrs;
    cts_attr attrs[CTS_MAX_ATTRS];
} cts_node;

/* Serialised ONNX model with one node whose inputs are graph inputs in0..,
 * outputs graph outputs out0..; freed with sy_tools_free. False (after a
 * message on stderr) when the node cannot be written. */
bool cts_onnx_single_node(const cts_node *n, uint8_t **buf, size_t *len);

/* Load a case's model into env and create a session (NULL opts). */
sy_status *cts_session(sy_env *env, const cts_node *n, const char *name, sy_model **m, sy_session **s);
/* Set every input of the case. */
sy_status *cts_feed(sy_session *s, const cts_node *n);

#endif
