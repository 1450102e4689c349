/*
 * The accuracy debugger's engine (switchyard compare; cts --model; the
 * emulator report): capture every node output of a run through the public
 * observer (sy_session_set_observer), match two captures value by value, and
 * measure the error of each. Uses only the public API.
 */
#ifndef SY_CLI_COMPARE_H
#define SY_CLI_COMPARE_H

#include "cli.h"

#include <stdbool.h>
#include <stdint.h>

/* One node output as captured. */
typedef struct cmp_value {
    char *name, *node, *op, *provider;
    uint32_t node_index;
    int32_t partition;          /* -1, or the fused partition it is an output of */
    uint32_t partition_nodes;
    sy_dtype dtype;
    int32_t rank;
    int64_t dims[SY_MAX_RANK];
    int64_t n;                  /* elements; -1: a dtype without one value per element */
    float *real;                /* the values as reals; dequantized when quantized */
    int64_t *codes;             /* integer dtypes: the stored integers, else NULL */
    bool quantized;             /* integer storage with scale / zero point */
    int32_t q_axis;             /* quantized: -1 per tensor, else the channel axis */
    uint32_t q_count;
    float *q_scales;            /* quantized: q_count scales (one LSB each) */
    float dq_scale;             /* a DequantizeLinear's float output: the
                                 * per-tensor scale it applied (its LSB), else 0 */
} cmp_value;

typedef struct cmp_capture {
    cmp_value *v;
    size_t n, cap;
    bool oom;
    /* per node of the session (sy_session_node_placement order): its name
     * and fused partition (-1 none), for --bisect of a fused value */
    char **node_names;
    int32_t *node_partition;
    size_t n_nodes;
} cmp_capture;

/* One side of a comparison: a model and its deployment. */
typedef struct cmp_side {
    const char *model;                 /* path */
    const char *config;                /* INI path; NULL: ini_text */
    const char *ini_text;              /* INI text when config is NULL; NULL: embedded default */
    const sy_placement_override *pins; /* placement overrides (bisect) */
    uint32_t n_pins;
    const char *requant;               /* sy_session_options.requant */
} cmp_side;

/* Run the side once with the inputs and capture every node output. */
sy_status *cmp_capture_run(const cmp_side *side, const cli_inputs *in, cmp_capture *out);
/* Same with an env the caller made (cts): MODEL on it with the inputs,
 * requant form and placement overrides given. */
sy_status *cmp_capture_env(sy_env *env, const char *model, const char *requant, const sy_placement_override *pins,
                           uint32_t n_pins, const cli_inputs *in, cmp_capture *out);
/* Run a session whose inputs are set and capture every node output. */
sy_status *cmp_capture_session(sy_session *s, cmp_capture *out);
void cmp_capture_free(cmp_capture *c);

/* Tolerances, by what is compared (see docs/accuracy-debugging.md). */
typedef struct cmp_tol {
    double f32;      /* float32/float64 vs float: relative L2 error */
    double f16;      /* either side float16 */
    double bf16;     /* either side bfloat16 */
    double quant;    /* a dequantized value vs a float one (--against-model) */
    double lsb;      /* quantized codes vs quantized codes: max code difference */
    double integer;  /* plain integers (indices, shapes, bools): max difference */
} cmp_tol;
void cmp_tol_default(cmp_tol *t);
/* "KEY=VALUE" with KEY float32|float16|bfloat16|quantized|lsb|integer;
 * false for anything else. */
bool cmp_tol_parse(cmp_tol *t, const char *text);

typedef struct cmp_row {
    const cmp_value *a, *b;   /* b NULL: no value of that name on side B */
    bool shape_mismatch;
    double max_abs;           /* max |a - b| over elements */
    double rel;               /* ||a - b||_2 / ||b||_2 (max_abs when ||b|| is 0) */
    double cosine;            /* a.b / (|a| |b|); 1 when both are zero */
    bool int_codes;           /* both sides integer: codes compared */
    int64_t codes_differ;     /* elements whose codes differ (int_codes) */
    double max_lsb;           /* int_codes: max code difference; a quantized vs
                               * float: max |a - b| in LSBs of the quantized side;
                               * -1: not applicable */
    double measure;           /* the figure judged against the tolerance */
    double tol;
    const char *tol_key;      /* which tolerance applied */
    bool past;                /* measure > tol (or shape differs, or NaN) */
} cmp_row;

typedef struct cmp_result {
    cmp_row *rows;            /* in A's execution order */
    size_t n;
    long first;               /* row of the first value past tolerance, -1 none */
    size_t matched, unmatched_a, unmatched_b, past;
} cmp_result;

/* Match A's values to B's by name; with `qdq_names`, also a name the
 * quantizer derived from a float value (t__qN, t__fN, t__dqN) to that float
 * value, and every row not compared code by code is judged with the
 * "quantized" tolerance. Rows for every value of A, in A's order. */
sy_status *cmp_compare(const cmp_capture *a, const cmp_capture *b, const cmp_tol *tol, bool qdq_names,
                       cmp_result *out);
void cmp_result_free(cmp_result *r);
/* The row of value `name` in r, or -1. */
long cmp_find_row(const cmp_result *r, const char *name);

/* The short form for other reports (explain --accuracy): MODEL on `config`
 * against cpu_ref alone, deterministic inputs, default tolerances; prints
 * the totals and the first node past tolerance (cmd_compare.c). */
sy_status *cmp_accuracy_summary(FILE *f, const char *model, const char *config, const char *requant);
void cmp_print_totals(FILE *f, const cmp_result *r);

/* Reports (compare_report.c). */
void cmp_print_table(FILE *f, const cmp_result *r, bool all_rows);
sy_status *cmp_write_csv(const char *path, const cmp_result *r);
sy_status *cmp_write_svg(const char *path, const cmp_result *r, const char *title);
/* One line naming the first diverging node (or saying there is none). */
void cmp_print_first(FILE *f, const cmp_result *r);

#endif
