/*
 * Shared code of the Qualcomm emulator providers (htp, lpai, aic): a static
 * library linked into each provider plugin (each gets its own copy).
 *
 *  - emulated kernels for the ONNX ops the emulators accept, computed in
 *    fp32 (fp32 accumulation) on values stored as binary16 when the
 *    provider's precision is fp16: weights are rounded once in prepare,
 *    every output is rounded once (round to nearest even), and activations
 *    entering the provider's domain are rounded by its copy();
 *  - per-op work figures (MACs, bytes moved) for the cost models;
 *  - kernels read their provider's options through host->node_provider_state;
 *  - fused partitions compiled into programs, and their compile-cache blobs;
 *  - profiling events in modelled cycles ("emulated" category).
 *
 * Storage note: the core sizes tensors by their graph dtype, so an fp16
 * tensor of the emulated device is held in an fp32 container whose values
 * are exactly binary16 values. Numerics are those of fp16 storage; byte
 * figures of the emulators' own memory checks use 2 bytes per element.
 */
#ifndef SY_EMU_H
#define SY_EMU_H

#include <switchyard/ext/sy_emu_report.h>
#include "switchyard/sy_sdk.h"

#include <pthread.h>
#include <stdio.h>

typedef struct emu_work {
    double macs;      /* multiply-accumulates */
    double bytes_in;  /* bytes read (activations + weights), device element size */
    double bytes_out; /* bytes written */
    bool matrix;      /* conv / matmul class (HMX / tensor unit) */
    int qbits;        /* integer node: activation bits (8 or 16); 0: float */
} emu_work;

/* What a provider plugin gives the shared kernels. */
typedef struct emu_target {
    const char *provider;   /* "htp" */
    const sy_host_api *H;
    /* precision of the provider state (true: fp16 storage) */
    bool (*fp16)(void *pstate);
    /* element size of float tensors on the device */
    /* cycles of one node from its work; writes the unit ("HMX", "HVX") */
    int64_t (*cycles)(void *pstate, const sy_node *n, const emu_work *w, const char **unit);
    double (*clock_hz)(void *pstate);
    /* optional: rewrite a packed constant input of a node in place (AIC:
     * MXFP6 MatMul weights); called after rounding */
    void (*pack_hook)(void *pstate, const sy_node *n, uint32_t input, float *w, const sy_tensor *t);
} emu_target;

extern const emu_target *emu_T;

/* The init every emulator plugin does: binds `tmpl` to the host in `rt` (the
 * shared kernels reach the provider through emu_T), registers the float and
 * the integer kernels (the latter's Quantize/DequantizeLinear decline naming
 * `qio_rule`), the report extension `qnn_emu.<provider>` version 1, and the
 * provider. */
sy_status *emu_plugin_init(const sy_host_api *host, sy_plugin *p, emu_target *rt, const emu_target *tmpl,
                           const char *qio_rule, const void *report_ext, const sy_provider_def *provider);

/* ---- fused partitions and the compile cache (sy_provider_def, ABI 1.1) ---- */
/* Runs of nodes with emulated kernels at consecutive topological positions
 * (convex), two nodes or more. */
sy_status *emu_group(const sy_node *const *nodes, uint32_t n, uint32_t *group_of);
/* Finalize a partition: per member packed fp16 weights, attributes and the
 * cost record (cycles, unit, verdict-derived latency), wired to the
 * partition's inputs/outputs and program-owned temporaries. */
sy_status *emu_compile(void *pstate, const sy_partition *p, void **compiled);
sy_status *emu_run_compiled(void *compiled, const sy_kernel_io *io);
void emu_release_compiled(void *compiled);
/* Versioned blob of a compiled partition, and back (checked against the nodes). */
sy_status *emu_serialize(void *compiled, void **bytes, size_t *size);
sy_status *emu_deserialize(void *pstate, const sy_partition *p, const void *bytes, size_t size, void **compiled);

/* ---- numerics ------------------------------------------------------------ */
void emu_round_n(float *p, int64_t n);
/* true when n floats are all binary16 values */
bool emu_is_f16_n(const float *p, int64_t n);

/* ---- work of a node (for capability checks and cost) --------------------- */
/* Fills w for the ops the emulators know; elsize: device bytes per element. */
void emu_node_work(const sy_node *n, size_t elsize, emu_work *w);

/* ---- kernels -------------------------------------------------------------- */
/* Kernel defs for `provider` covering the ops below (float32 graphs); the
 * provider registers them with sy_register_tables. */
uint32_t emu_kernels(const char *provider, sy_kernel_def *out, uint32_t max);
/* The op list those kernels cover, NULL-terminated. */
extern const char *const emu_ops[];

/* OCP MX v1.0 FP6 quantize-dequantize of B [K, N] (row-major) in blocks of
 * 32 along K with a shared E8M0 scale; e2m3: E2M3 elements, else E3M2. */
void emu_mxfp6_kn(float *b, int64_t K, int64_t N, bool e2m3);
/* count of constants clipped to the fp16 range so far, over the process (a
 * report figure; updated atomically: sessions prepare concurrently) */
extern uint64_t emu_clipped;

/* ---- integer kernels (emu_q.c): the switchyard.quant nodes ---------------- */
/* Ops of the switchyard.quant domain the emulators compute in integers, and
 * the ONNX views they also take on integer tensors, NULL-terminated. */
extern const char *const emu_qops[];
/* Kernel defs for `provider`: the integer ops above plus QuantizeLinear /
 * DequantizeLinear, whose kernel declines (the float boundary is the host's:
 * a QNN client hands the graph quantized tensors) naming rule `qio_rule`. */
uint32_t emu_qkernels(const char *provider, const char *qio_rule, sy_kernel_def *out, uint32_t max);

/* What a provider's capability check needs to know of a quantized node. */
typedef struct emu_qinfo {
    bool quant;          /* a switchyard.quant node */
    sy_dtype act, out;   /* activation input 0 / output 0 */
    sy_dtype wt;         /* weights (QConv / QMatMul), else SY_DT_UNDEFINED */
    bool w_per_axis;     /* more than one weight scale */
    bool w_symmetric;    /* every weight zero point is 0 */
    bool params_static;  /* scales, zero points, weights and bias are constants */
    int qbits;           /* activation bits */
} emu_qinfo;
/* Whether this plugin registered an emulated kernel that n's op and dtype
 * select (the float ops, the integer ops and views; qti_aisw block ops are
 * the qti_aisw plugin's, counted as present: the seed lists them per
 * backend). The core also asks check_node about nodes without a kernel (to
 * show a rule it violates), so a check takes a node only when this holds. */
bool emu_has_kernel(const sy_node *n);
/* QuantizeLinear / DequantizeLinear: their kernel declines naming the rule */
bool emu_is_qio(const sy_node *n);
/* Describes n; false (qi->quant false) when it is not a switchyard.quant node. */
bool emu_qdescribe(const sy_node *n, emu_qinfo *qi);
/* QAdd, QSub, QMul: two activation operands (input 0 and input 3) */
bool emu_qbinary(const char *op);
/* The ONNX op whose rules apply to a quantized op ("QConv" -> "Conv"); op itself otherwise. */
const char *emu_qbase_op(const char *op);

/* Window geometry of Conv / pools (NCHW, 2 spatial dims). */
typedef struct emu_win {
    int64_t pads[4], strides[2], dil[2], kshape[2], group;
} emu_win;
enum { EMU_Q_CONV = 1, EMU_Q_MATMUL = 2, EMU_Q_ADD = 3, EMU_Q_MAXPOOL = 4, EMU_Q_CONCAT = 5 };
typedef struct emu_qk emu_qk;
/* Finalize an integer node: centered weights, int32 bias, requantizers; the
 * scratch it needs per run. g: the window (QConv, QMaxPool). */
sy_status *emu_qk_build(const sy_node *n, int kind, const emu_win *g, emu_qk **out, size_t *scratch);
sy_status *emu_qk_run(const emu_qk *q, const sy_kernel_io *io);
void emu_qk_free(emu_qk *q);
/* Serialized form (writes when out != NULL; returns the size). A cache is
 * never read back into a kernel: the emulator derives the kernel again and
 * compares the bytes (emu_deserialize). */
size_t emu_qk_blob(const emu_qk *q, uint8_t *out);

/* ---- copies --------------------------------------------------------------- */
/* Copy src to dst; when `to_f16` round float32 elements to binary16. */
sy_status *emu_copy(const sy_tensor *src, sy_tensor *dst, bool to_f16);

/* ---- options -------------------------------------------------------------- */
bool emu_parse_bool(const char *v, bool *out);
bool emu_parse_u64(const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
bool emu_parse_f64(const char *v, double lo, double hi, double *out);

/* ---- claims ---------------------------------------------------------------- */
void emu_decline(sy_claim *c, sy_reason r, const char *fmt, ...) SY_PRINTF(3, 4);

/* ---- per-node verdicts and the text report --------------------------------- */
/* What a provider's check decided for a node: memory verdict, working set,
 * modelled cycles, the unit that runs it. One record per node name. */
typedef struct emu_rec {
    char node[64];
    char op[32];
    const char *verdict;
    uint64_t ws;
    int64_t cycles;
    const char *unit;
} emu_rec;

typedef struct emu_recs {
    emu_rec *v;
    size_t n, cap;
    int64_t last_pos; /* topological position of the node checked last (-1: none) */
    uint64_t sum;     /* a provider's running sum over the pass (lpai: persistent bytes) */
} emu_recs;

/* The records of one placement live in that session's provider state (ABI
 * 1.2 session_begin / session_end), so concurrent sessions of one env never
 * write the same records. The provider's board says which records the report
 * shows (the session placed last, or what it left when it was released) and
 * serialises a placement's writes with the report's reads. */
typedef struct emu_board {
    pthread_mutex_t lock;
    emu_recs *latest; /* a live session's records, NULL once it is released */
    emu_recs kept;    /* the records of the latest session, after its release */
} emu_board;
void emu_board_init(emu_board *b);
void emu_board_free(emu_board *b);
/* session_begin / session_end of a provider with a board */
sy_status *emu_board_begin(emu_board *b, void **session_state);
void emu_board_end(emu_board *b, void *session_state);
/* In check_node: the records of the node's session (NULL: a host without
 * per-session provider states; nothing is recorded then). */
emu_recs *emu_session_recs(const sy_node *n);
/* emu_recs_new_pass, emu_record and rs->sum += bytes, under the board's lock */
bool emu_board_new_pass(emu_board *b, emu_recs *rs, const sy_node *n);
void emu_board_record(emu_board *b, emu_recs *rs, const sy_node *n, const char *verdict, uint64_t ws, int64_t cycles,
                      const char *unit);
void emu_board_add(emu_board *b, emu_recs *rs, uint64_t bytes);
/* The records the report shows: lock, read, unlock. */
const emu_recs *emu_board_lock(emu_board *b);
void emu_board_unlock(emu_board *b);

/* Call at the start of every check_node: a node at or before the position
 * checked last means the core is placing the graph again (a re-plan), so
 * the records of the earlier placement are dropped; returns true then (the
 * provider resets its own sums too). */
bool emu_recs_new_pass(emu_recs *rs, const sy_node *n);

/* Record (or update) node n's verdict; silently drops it when out of memory
 * (the report is informative, the placement does not depend on it). */
void emu_record(emu_recs *rs, const sy_node *n, const char *verdict, uint64_t ws, int64_t cycles, const char *unit);
void emu_recs_free(emu_recs *rs);

/* snprintf that appends at *k and keeps counting past len (so the caller
 * learns the length needed); buf may be NULL. */
void emu_out(char *buf, size_t len, size_t *k, const char *fmt, ...) SY_PRINTF(4, 5);
/* One line per record ("<mem_label> <ws> B"); returns the summed cycles. */
double emu_out_recs(char *buf, size_t len, size_t *k, const emu_recs *rs, const char *mem_label);

/* The provider state version 1 of the report extension reads: the latest
 * one created and not yet destroyed, process-wide (the extension has no
 * handle), under its own lock: several environments may be created, placed
 * and released concurrently. */
typedef struct emu_live {
    pthread_mutex_t lock;
    void *state;
} emu_live;
#define EMU_LIVE_INIT {PTHREAD_MUTEX_INITIALIZER, NULL}
void emu_live_set(emu_live *l, void *state);
/* forgets state if it is the live one (a provider's destroy) */
void emu_live_drop(emu_live *l, void *state);
/* the live state (NULL: none), held until emu_live_unlock */
void *emu_live_lock(emu_live *l);
void emu_live_unlock(emu_live *l);
/* report_of(the live state or NULL, buf, len) under the lock */
size_t emu_live_report(emu_live *l, size_t (*report_of)(void *state, char *buf, size_t len), char *buf, size_t len);
/* compat_of(the live state), "" when none */
const char *emu_live_compat(emu_live *l, const char *(*compat_of)(void *state));

/* can_copy of an emulator's memory domain: to and from "host" only */
bool emu_can_copy_host(const char *domain, const char *src, const char *dst);

/* The "qnn_emu.<provider>" extension table: a text report of the latest
 * env's provider (compatibility string, a line per node its latest session
 * checked); the installed switchyard/ext/sy_emu_report.h. Version 1 has no
 * handle, so "the latest env" is process-wide by its contract (each provider
 * keeps that one pointer under a lock). */
typedef sy_emu_report_ext emu_report_ext;

#endif
