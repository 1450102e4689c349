/*
 * switchyard cts: the plugin conformance kit (internal header of the CLI).
 *
 *   cts_model/   single-node ONNX models in memory (the tools library's
 *                model writer) and their sessions: a library target
 *   cts_cases.c  the op table, case generators and the comparison rules
 *   cts_abi.c    ABI behaviour checks (options, statuses, releases)
 *   cmd_cts.c    the command: loading, probing, running, reporting
 */
#ifndef SY_CLI_CTS_H
#define SY_CLI_CTS_H

#include <switchyard/switchyard.h>

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cts_model.h" /* the single-node models (cts_model/, also linked by tests/abi_stability) */

/* ---- cases ------------------------------------------------------------------- */
typedef enum cts_kind {
    CTS_UNARY,   /* elementwise, one input */
    CTS_BINARY,  /* elementwise with numpy broadcasting */
    CTS_COMPARE, /* like binary, bool output */
    CTS_LOGIC,   /* bool x bool -> bool */
    CTS_MATMUL,
    CTS_GEMM,
    CTS_SOFTMAX
} cts_kind;

/* Tolerance class of an op (see docs/plugin-guide.md, "Conformance kit"). */
typedef enum cts_tol { CTS_TOL_EXACT_ELEM, CTS_TOL_TRANSCENDENTAL, CTS_TOL_ACCUM } cts_tol;

typedef struct cts_op {
    const char *op;
    cts_kind kind;
    uint64_t dtypes; /* candidates, SY_DT_BIT */
    cts_tol tol;
    uint32_t flags;
} cts_op;

enum {
    CTS_OP_NONZERO_DIVISOR = 1u << 0, /* integer second input must not be 0 (Div, Mod) */
    CTS_OP_SMALL_INT_EXP = 1u << 1    /* integer exponent kept small and >= 0 (Pow) */
};

extern const cts_op cts_ops[];
extern const size_t cts_n_ops;

typedef struct cts_case {
    char name[96]; /* "same_shape[2,3,4]" */
    cts_node node;
    double accum_scale; /* ACCUM: K * max|A| * max|B| (0 otherwise) */
} cts_case;

/* All cases of (op, dtype); *n set. The cases own their input data. */
cts_case *cts_make_cases(const cts_op *op, sy_dtype dt, int64_t opset, size_t *n);
/* A small ordinary case for probing whether a provider takes (op, dtype). */
bool cts_make_probe(const cts_op *op, sy_dtype dt, int64_t opset, cts_case *out);
void cts_free_cases(cts_case *c, size_t n);
void cts_free_node(cts_node *n);

/* Compare got against ref; false with a message on mismatch. */
bool cts_compare(const cts_op *op, const cts_case *c, const sy_tensor *got, const sy_tensor *ref, char *msg,
                 size_t msg_len);

/* Tolerances (relative, absolute) of a dtype and class, as documented. */
void cts_tolerance(sy_dtype dt, cts_tol tol, double *rtol, double *atol);
/* The precision a provider stores float32 tensors in (--precision); FLOAT32
 * when it computes in float32 itself. */
extern sy_dtype cts_storage_precision;
/* True when a float32 input holds a finite value the storage precision
 * cannot represent (such a case checks the precision, not the kernel). */
bool cts_outside_storage(const cts_node *n);

/* ---- the run ----------------------------------------------------------------- */
typedef struct cts_ctx {
    const char *plugin_path; /* absolute */
    const char *plugin_name; /* as the plugin declares it */
    const char *provider;
    const char *config_text; /* the user's --config text, or NULL */
    const char *config_dir;
    bool provider_is_fallback;
    regex_t filter, exclude;
    bool has_filter, has_exclude;
    int verbose;
    int64_t opset;
    int passed, failed, skipped;
    /* claimed (op index, dtype) pairs, from probing */
    struct cts_claim {
        size_t op;
        sy_dtype dt;
    } *claims;
    size_t n_claims;
} cts_ctx;

/* The INI text of an environment: the user's config (if any), the default
 * plugins, the plugin under test, `providers` and `strict`, plus `extra`. */
char *cts_ini(const cts_ctx *cx, const char *providers, bool strict, const char *extra);
sy_status *cts_env(const cts_ctx *cx, const char *providers, bool strict, const char *extra, sy_env **out);

/* Result lines; `name` is matched against --filter by the caller. */
bool cts_selected(const cts_ctx *cx, const char *name);
/* cts --model FILE: the whole model on the provider against cpu_ref, node by
 * node (cts_model.c); a failure names the first diverging node. */
void cts_run_model(cts_ctx *cx, sy_env *penv, sy_env *renv, const char *path);
void cts_pass(cts_ctx *cx, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cts_fail(cts_ctx *cx, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cts_skip(cts_ctx *cx, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ABI behaviour checks. */
void cts_abi_descriptor(cts_ctx *cx, const sy_plugin_info *pi, uint16_t host_major, uint16_t host_minor);
void cts_abi_checks(cts_ctx *cx, sy_env *penv, sy_env *renv, int cycles);

#endif
