/*
 * Switchyard plugin SDK helper library (sy_sdk).
 *
 * A static, position-independent library linked into every plugin. It never
 * calls a core symbol: everything that needs the host (status creation,
 * attributes, node introspection) takes the `const sy_host_api *` the plugin
 * received in init. Contents:
 *
 *   - dtypes: element sizes, names, classes; fp16/bf16 <-> fp32 conversion;
 *     element load/store in a wide type; bulk conversion between dtypes
 *   - shapes: element counts, strides, formatting for messages
 *   - numpy broadcasting: shape rule (and an infer helper), and a broadcast
 *     iterator that drives an inner loop for N-ary elementwise kernels
 *   - axis normalisation with range checks that produce clear messages
 *   - attribute helpers with defaults
 *   - infer helpers ("output like input", broadcast)
 *   - reading small integer tensors (shape/axes/pads inputs)
 *   - a blocked fp32 GEMM shared by Conv/Gemm/MatMul/recurrent kernels
 *   - an fp32 "scope": runs an fp32 kernel on fp16/bf16/fp64 tensors through
 *     scratch shadows
 *   - table-driven registration helpers and schema/kernel initialiser macros
 *
 * All names start with sy_ (functions) or SY_ (macros) and have hidden
 * visibility, so each plugin carries its own private copy.
 */
#ifndef SWITCHYARD_SY_SDK_H
#define SWITCHYARD_SY_SDK_H

#include "sy_plugin.h"
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================== */
/* status                                                                   */
/* ======================================================================== */

/* Return the status of `expr` from the enclosing function when it fails. */
#define SY_TRY(expr)                                                                                               \
    do {                                                                                                           \
        sy_status *sy_try_st_ = (expr);                                                                            \
        if (sy_try_st_)                                                                                            \
            return sy_try_st_;                                                                                     \
    } while (0)

/* ======================================================================== */
/* dtypes                                                                   */
/* ======================================================================== */

size_t sy_dt_size(sy_dtype dt);      /* bytes per element; 0 for packed/string/unknown */
const char *sy_dt_name(sy_dtype dt); /* "float32", "int64", ... ("?" when unknown) */
bool sy_dt_is_float(sy_dtype dt);    /* f16, bf16, f32, f64 */
bool sy_dt_is_int(sy_dtype dt);      /* signed or unsigned integer (not bool) */
bool sy_dt_is_signed(sy_dtype dt);   /* signed integer or float */
bool sy_dt_is_numeric(sy_dtype dt);  /* float, int or bool with a byte size */

static inline float sy_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while ((man & 0x400u) == 0);
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* fp32 -> fp16, round to nearest even; overflow to inf; NaN stays NaN. */
static inline uint16_t sy_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0u));
    if (absx >= 0x477ff000u) /* >= 65520: rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (absx < 0x33000000u) /* < 2^-25: rounds to zero */
            return (uint16_t)sign;
        uint32_t e = absx >> 23;
        uint32_t m = (absx & 0x7fffffu) | 0x800000u;
        /* value = m * 2^(e-150); in half subnormal units (2^-24): m * 2^(e-126) */
        uint32_t shift = 126u - e;
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = absx + 0xfffu + ((absx >> 13) & 1u); /* round to nearest even at bit 13 */
    return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

static inline float sy_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t sy_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* Element i of `data` (dtype dt) as double / int64; store likewise.
 * Store from double converts like a C cast for ints (truncation), with NaN
 * and out-of-range values saturated instead of undefined behaviour. */
double sy_load_f64(const void *data, sy_dtype dt, size_t i);
int64_t sy_load_i64(const void *data, sy_dtype dt, size_t i);
void sy_store_f64(void *data, sy_dtype dt, size_t i, double v);
void sy_store_i64(void *data, sy_dtype dt, size_t i, int64_t v);

/* Convert n elements between any two numeric dtypes (ONNX Cast rules:
 * float->int truncates toward zero, ->bool is `!= 0`). Same dtype = copy.
 * Returns false when a dtype is not supported (string, packed). */
bool sy_convert(const void *src, sy_dtype src_dt, void *dst, sy_dtype dst_dt, size_t n);

/* Bulk fp16/bf16 <-> fp32. */
void sy_f16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void sy_f32_to_f16_n(const float *src, uint16_t *dst, size_t n);
void sy_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n);
void sy_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n);

/* X-macros over the C-typed dtypes: X(SY_DT_..., ctype, suffix). */
#define SY_FOREACH_FLOAT_NATIVE(X) X(SY_DT_FLOAT32, float, f32) X(SY_DT_FLOAT64, double, f64)
#define SY_FOREACH_SINT(X)                                                                                         \
    X(SY_DT_INT8, int8_t, i8) X(SY_DT_INT16, int16_t, i16) X(SY_DT_INT32, int32_t, i32) X(SY_DT_INT64, int64_t, i64)
#define SY_FOREACH_UINT(X)                                                                                         \
    X(SY_DT_UINT8, uint8_t, u8)                                                                                    \
    X(SY_DT_UINT16, uint16_t, u16) X(SY_DT_UINT32, uint32_t, u32) X(SY_DT_UINT64, uint64_t, u64)
#define SY_FOREACH_INT(X) SY_FOREACH_SINT(X) SY_FOREACH_UINT(X)

#define SY_DT_MASK_NUMERIC (SY_DT_MASK_FLOATS | SY_DT_MASK_INTS)
#define SY_DT_MASK_SIGNED                                                                                          \
    (SY_DT_MASK_FLOATS | SY_DT_BIT(SY_DT_INT8) | SY_DT_BIT(SY_DT_INT16) | SY_DT_BIT(SY_DT_INT32) |                 \
     SY_DT_BIT(SY_DT_INT64))
/* every fixed-size type (everything except string and packed sub-byte) */
#define SY_DT_MASK_PLAIN (SY_DT_MASK_NUMERIC | SY_DT_BIT(SY_DT_BOOL))
/* what kernels that only move whole elements (Reshape, Transpose, Gather,
 * Concat, ...) take: the plain types and string records, whose bytes a copy
 * shares (sy_string) */
#define SY_DT_MASK_MOVABLE (SY_DT_MASK_PLAIN | SY_DT_BIT(SY_DT_STRING))
#define SY_DT_MASK_F32_F16 (SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16))

/* ======================================================================== */
/* shapes                                                                   */
/* ======================================================================== */

int64_t sy_numel(int32_t rank, const int64_t *dims);
/* the same as the public API's sy_tensor_numel; a file that includes both
 * headers gets whichever came first (they agree) */
#if !defined(SWITCHYARD_H)
#define SY_SDK_TENSOR_NUMEL 1
static inline int64_t sy_tensor_numel(const sy_tensor *t) { return sy_numel(t->rank, t->dims); }
#endif
/* In run, for an output planned at a bound (host->node_bound_output, ABI
 * 1.6): its length along `axis` is n this run (n <= dims[axis]); dims and
 * nbytes shrink in proportion, the layout is the run's (written from the
 * start) */
static inline void sy_bound_set_len(sy_tensor *t, int32_t axis, int64_t n)
{
    if (t->dims[axis] > 0)
        t->nbytes = t->nbytes / (size_t)t->dims[axis] * (size_t)n;
    t->dims[axis] = n;
}
/* row-major element strides */
void sy_strides(int32_t rank, const int64_t *dims, int64_t *strides);
bool sy_shape_equal(int32_t ra, const int64_t *a, int32_t rb, const int64_t *b);
/* "[1, 3, 224, 224]" into buf; returns buf */
const char *sy_shape_str(int32_t rank, const int64_t *dims, char *buf, size_t len);
/* product of dims[from, to) */
int64_t sy_dims_prod(const int64_t *dims, int32_t from, int32_t to);

/* Normalise `axis` against `rank` (negative: axis + rank). Accepted range:
 * [-rank, rank - 1], or [-rank, rank] when `inclusive_end` (Flatten's
 * axis). On violation returns SY_ERR_SHAPE
 * "<what> = 5 is out of range [-4, 3] for rank 4". */
sy_status *sy_norm_axis(const sy_host_api *host, int64_t axis, int32_t rank, bool inclusive_end, const char *what,
                        int32_t *out);

/* ======================================================================== */
/* attributes (defaults when absent)                                        */
/* ======================================================================== */

int64_t sy_attr_int_or(const sy_host_api *host, const sy_node *n, const char *name, int64_t def);
float sy_attr_float_or(const sy_host_api *host, const sy_node *n, const char *name, float def);
/* Copies the string (NUL-terminated, truncated to len-1) or `def`. Returns buf. */
const char *sy_attr_string_or(const sy_host_api *host, const sy_node *n, const char *name, const char *def,
                              char *buf, size_t len);
/* true when the string attribute equals `value` (absent: compare `def`) */
bool sy_attr_string_is(const sy_host_api *host, const sy_node *n, const char *name, const char *def,
                       const char *value);
/* Copies up to `max` ints; returns the count present (-1 when absent). A
 * count larger than `max` means truncation: callers check. */
int64_t sy_attr_ints_copy(const sy_host_api *host, const sy_node *n, const char *name, int64_t *out, size_t max);
int64_t sy_attr_floats_copy(const sy_host_api *host, const sy_node *n, const char *name, float *out, size_t max);
bool sy_attr_has(const sy_host_api *host, const sy_node *n, const char *name, sy_attr_type type);

/* ======================================================================== */
/* reading small integer tensors (shape, axes, pads, repeats, ...)          */
/* ======================================================================== */

/* Reads a 0-D/1-D int32/int64 tensor with data into out (up to max values).
 * Returns the element count, or -1 (no data / wrong dtype / rank > 1). */
int64_t sy_tensor_read_ints(const sy_tensor *t, int64_t *out, size_t max);
/* Scalar (any element count >= 1: element 0) as double; false when no data. */
bool sy_tensor_scalar_f64(const sy_tensor *t, double *out);

/* ======================================================================== */
/* infer helpers                                                            */
/* ======================================================================== */

/* input `i` must be present; returns it or a SY_ERR_INVALID_ARGUMENT status */
sy_status *sy_need_input(const sy_host_api *host, const sy_node *n, uint32_t i, const sy_tensor **out);
/* output `o` gets dtype and shape of input `i` (dtype overridden unless UNDEFINED) */
sy_status *sy_infer_like_input(const sy_host_api *host, sy_node *n, uint32_t i, uint32_t o, sy_dtype dt);
/* output 0 = input 0 for every output of an elementwise unary op */
sy_status *sy_infer_unary(const sy_host_api *host, sy_node *n);
/* All present inputs must share one dtype (first `n_typed` inputs; -1: all). */
sy_status *sy_check_same_dtype(const sy_host_api *host, const sy_node *n, int32_t n_typed);
/* Multidirectional (numpy) broadcast of the shapes of inputs [first, first+count). */
sy_status *sy_broadcast_shapes(const sy_host_api *host, uint32_t count, const sy_tensor *const *ts, int32_t *rank,
                               int64_t *dims);
/* Output 0 = broadcast of all present inputs; dtype = `dt` or input 0's when
 * SY_DT_UNDEFINED. Checks dtype agreement of inputs [0, n_same) (-1 = all). */
sy_status *sy_infer_broadcast(const sy_host_api *host, sy_node *n, sy_dtype dt, int32_t n_same);

/* Legacy (opset < 7) broadcast: B's dims placed at `axis` of A (axis < 0:
 * suffix alignment) and padded with 1s to A's rank into out_dims. */
sy_status *sy_legacy_broadcast_dims(const sy_host_api *host, const sy_tensor *a, const sy_tensor *b, int64_t axis,
                                    int64_t *out_dims);

/* ======================================================================== */
/* broadcast iterator                                                       */
/* ======================================================================== */

#define SY_BCAST_MAX_IN 4

/* Inner loop of an elementwise kernel: n output elements; in[k] advances by
 * stride[k] elements per output element (0 = broadcast, 1 = contiguous). */
typedef void (*sy_bcast_fn)(const void *ctx, const void *const *in, const int64_t *stride, void *out, int64_t n);

typedef struct sy_bcast {
    int32_t n_in;
    int32_t rank;                               /* after collapsing */
    int64_t dims[SY_MAX_RANK];                  /* collapsed output dims */
    int64_t strides[SY_BCAST_MAX_IN][SY_MAX_RANK]; /* element strides per input (0: broadcast) */
    size_t esize[SY_BCAST_MAX_IN];
    size_t out_esize;
    int64_t total;
} sy_bcast;

/* Plan broadcasting of `n_in` tensors onto out's shape (unidirectional:
 * each input must broadcast to out). `shapes` may override an input's
 * shape (e.g. legacy axis broadcast); pass NULL to use ins[k]'s. Returns
 * false when an input does not broadcast to out. */
bool sy_bcast_plan(sy_bcast *b, int32_t n_in, const sy_tensor *const *ins, const sy_tensor *out);
bool sy_bcast_plan_shapes(sy_bcast *b, int32_t n_in, const int32_t *ranks, const int64_t (*dims)[SY_MAX_RANK],
                          const size_t *esizes, int32_t out_rank, const int64_t *out_dims, size_t out_esize);
/* Run the plan: calls fn on each innermost run. */
void sy_bcast_exec(const sy_bcast *b, const void *const *in_data, void *out_data, sy_bcast_fn fn, const void *ctx);
/* Convenience: plan + exec on kernel tensors; SY_ERR_SHAPE if not broadcastable. */
sy_status *sy_bcast_apply(const sy_host_api *host, int32_t n_in, const sy_tensor *const *ins, sy_tensor *out,
                          sy_bcast_fn fn, const void *ctx);


/* ======================================================================== */
/* elementwise loop generators (used by ops_math, ops_activation, ...)      */
/* ======================================================================== */

/* Integer types with their unsigned twin and signedness:
 * X(SY_DT_..., ctype, unsigned ctype, is_signed, suffix) */
#define SY_FOREACH_INT_U(X)                                                                                        \
    X(SY_DT_INT8, int8_t, uint8_t, 1, i8)                                                                          \
    X(SY_DT_INT16, int16_t, uint16_t, 1, i16)                                                                      \
    X(SY_DT_INT32, int32_t, uint32_t, 1, i32)                                                                      \
    X(SY_DT_INT64, int64_t, uint64_t, 1, i64)                                                                      \
    X(SY_DT_UINT8, uint8_t, uint8_t, 0, u8)                                                                        \
    X(SY_DT_UINT16, uint16_t, uint16_t, 0, u16)                                                                    \
    X(SY_DT_UINT32, uint32_t, uint32_t, 0, u32) X(SY_DT_UINT64, uint64_t, uint64_t, 0, u64)

/* Float types: X(SY_DT_..., storage ctype, compute ctype, load, store, suffix) */
#define SY_LD_ID(v) (v)
#define SY_FOREACH_FLOAT_LS(X)                                                                                     \
    X(SY_DT_FLOAT32, float, float, SY_LD_ID, SY_LD_ID, f32)                                                        \
    X(SY_DT_FLOAT64, double, double, SY_LD_ID, SY_LD_ID, f64)                                                      \
    X(SY_DT_FLOAT16, uint16_t, float, sy_f16_to_f32, sy_f32_to_f16, f16)                                           \
    X(SY_DT_BFLOAT16, uint16_t, float, sy_bf16_to_f32, sy_f32_to_bf16, bf16)

/* Defines `static void NAME(ctx, in, stride, out, n)` (a sy_bcast_fn) for a
 * binary op: inputs of storage type TI loaded with LD into compute type CT
 * as x and y; EXPR (of x, y and ctx `c`) is stored with ST into TO. The
 * four stride patterns get their own loops so compilers vectorise them. */
#define SY_BINARY_FN(NAME, TI, TO, CT, LD, ST, EXPR)                                                               \
    static void NAME(const void *c, const void *const *in, const int64_t *st, void *out_, int64_t n)               \
    {                                                                                                              \
        (void)c;                                                                                                   \
        const TI *a_ = (const TI *)in[0];                                                                          \
        const TI *b_ = (const TI *)in[1];                                                                          \
        TO *o_ = (TO *)out_;                                                                                       \
        if (st[0] && st[1]) {                                                                                      \
            for (int64_t i = 0; i < n; i++) {                                                                      \
                CT x = LD(a_[i]), y = LD(b_[i]);                                                                   \
                o_[i] = ST(EXPR);                                                                                  \
            }                                                                                                      \
        } else if (st[0]) {                                                                                        \
            CT y = LD(b_[0]);                                                                                      \
            for (int64_t i = 0; i < n; i++) {                                                                      \
                CT x = LD(a_[i]);                                                                                  \
                o_[i] = ST(EXPR);                                                                                  \
            }                                                                                                      \
        } else if (st[1]) {                                                                                        \
            CT x = LD(a_[0]);                                                                                      \
            for (int64_t i = 0; i < n; i++) {                                                                      \
                CT y = LD(b_[i]);                                                                                  \
                o_[i] = ST(EXPR);                                                                                  \
            }                                                                                                      \
        } else {                                                                                                   \
            CT x = LD(a_[0]), y = LD(b_[0]);                                                                       \
            TO v_ = ST(EXPR);                                                                                      \
            for (int64_t i = 0; i < n; i++)                                                                        \
                o_[i] = v_;                                                                                        \
        }                                                                                                          \
    }

/* Unary elementwise loop: `static void NAME(const void *in, void *out,
 * int64_t n, const void *ctx)`; EXPR of x (compute type CT) and ctx `c`
 * (typically `const float *` parameters). Safe in place. */
typedef void (*sy_unary_fn)(const void *in, void *out, int64_t n, const void *ctx);
#define SY_UNARY_FN(NAME, TI, TO, CT, LD, ST, EXPR)                                                                \
    static void NAME(const void *in_, void *out_, int64_t n, const void *ctx_)                                     \
    {                                                                                                              \
        const float *c = (const float *)ctx_;                                                                      \
        (void)c;                                                                                                   \
        const TI *a_ = (const TI *)in_;                                                                            \
        TO *o_ = (TO *)out_;                                                                                       \
        for (int64_t i = 0; i < n; i++) {                                                                          \
            CT x = LD(a_[i]);                                                                                      \
            o_[i] = ST(EXPR);                                                                                      \
        }                                                                                                          \
    }

/* Unary float op over the four float types: defines NAME_f32/_f64/_f16/_bf16.
 * FEXPR computes in float, DEXPR in double. */
#define SY_UNARY_FLOAT_FNS(NAME, FEXPR, DEXPR)                                                                     \
    SY_UNARY_FN(NAME##_f32, float, float, float, SY_LD_ID, SY_LD_ID, FEXPR)                                        \
    SY_UNARY_FN(NAME##_f64, double, double, double, SY_LD_ID, SY_LD_ID, DEXPR)                                     \
    SY_UNARY_FN(NAME##_f16, uint16_t, uint16_t, float, sy_f16_to_f32, sy_f32_to_f16, FEXPR)                        \
    SY_UNARY_FN(NAME##_bf16, uint16_t, uint16_t, float, sy_bf16_to_f32, sy_f32_to_bf16, FEXPR)
#define SY_FLOAT_TABLE_ENTRIES(NAME)                                                                               \
    [SY_DT_FLOAT32] = NAME##_f32, [SY_DT_FLOAT64] = NAME##_f64, [SY_DT_FLOAT16] = NAME##_f16,                      \
    [SY_DT_BFLOAT16] = NAME##_bf16

/* Binary float op over the four float types (same in/out type). */
#define SY_BINARY_FLOAT_FNS(NAME, FEXPR, DEXPR)                                                                    \
    SY_BINARY_FN(NAME##_f32, float, float, float, SY_LD_ID, SY_LD_ID, FEXPR)                                       \
    SY_BINARY_FN(NAME##_f64, double, double, double, SY_LD_ID, SY_LD_ID, DEXPR)                                    \
    SY_BINARY_FN(NAME##_f16, uint16_t, uint16_t, float, sy_f16_to_f32, sy_f32_to_f16, FEXPR)                       \
    SY_BINARY_FN(NAME##_bf16, uint16_t, uint16_t, float, sy_bf16_to_f32, sy_f32_to_bf16, FEXPR)

/* Integer table entries for functions named NAME_i8 ... NAME_u64. */
#define SY_INT_TABLE_ENTRIES(NAME)                                                                                 \
    [SY_DT_INT8] = NAME##_i8, [SY_DT_INT16] = NAME##_i16, [SY_DT_INT32] = NAME##_i32, [SY_DT_INT64] = NAME##_i64,  \
    [SY_DT_UINT8] = NAME##_u8, [SY_DT_UINT16] = NAME##_u16, [SY_DT_UINT32] = NAME##_u32,                           \
    [SY_DT_UINT64] = NAME##_u64
#define SY_SINT_TABLE_ENTRIES(NAME)                                                                                \
    [SY_DT_INT8] = NAME##_i8, [SY_DT_INT16] = NAME##_i16, [SY_DT_INT32] = NAME##_i32, [SY_DT_INT64] = NAME##_i64

/* ======================================================================== */
/* index helpers                                                            */
/* ======================================================================== */

/* Advance a multi-index over dims (row-major); false after the last one. */
static inline bool sy_index_next(int32_t rank, const int64_t *dims, int64_t *idx)
{
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++idx[d] < dims[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/* Generic strided copy of an n-d block: dst contiguous over dims, src with
 * the given element strides (bytes per element esize). */
void sy_copy_strided(void *dst, const void *src, int32_t rank, const int64_t *dims, const int64_t *src_strides,
                     size_t esize);

/* STRIDED_SLICE's specification (TFLite / TF): n sparse entries of begin,
 * end and strides with five bit masks, bit i for entry i. */
typedef struct sy_ss_spec {
    int32_t n;
    const int64_t *begin, *end, *strides;
    int64_t begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask;
    bool offset; /* TFLite's offset option: each end counted from its resolved begin */
} sy_ss_spec;

/* ...resolved against an input shape: per input axis d the elements
 * start[d] + k * step[d], k < len[d] (shrunk[d]: one element, the axis
 * dropped); the output shape, with new_axis[j] set where axis j of the
 * output is a new axis of 1. */
typedef struct sy_ss_plan {
    int32_t rank;
    int64_t start[SY_MAX_RANK], step[SY_MAX_RANK], len[SY_MAX_RANK];
    bool shrunk[SY_MAX_RANK];
    int32_t out_rank;
    int64_t out_dims[SY_MAX_RANK];
    bool new_axis[SY_MAX_RANK];
} sy_ss_plan;

/* TF's rules (sdk_strided_slice.c). SY_OK, or an error code with `why`
 * saying what is wrong (a zero stride, two ellipses, more entries than
 * axes, an out-of-range shrink index, an output past SY_MAX_RANK axes). */
sy_status_code sy_ss_resolve(int32_t rank, const int64_t *dims, const sy_ss_spec *spec, sy_ss_plan *plan, char *why,
                             size_t why_len);

/* ======================================================================== */
/* fp32 GEMM: C = alpha * op(A) * op(B) + beta * C                          */
/* ======================================================================== */

/* Row-major. op(A) is MxK, op(B) is KxN. lda/ldb/ldc are row strides of
 * the stored matrices. beta == 0 ignores C's previous contents (NaN safe). */
void sy_gemm_f32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                 int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/* ======================================================================== */
/* fp32 convolution, NCHW (sdk_conv.c)                                      */
/* ======================================================================== */

/* The one fp32 NCHW convolution of the host (cpu_ref's Conv and the
 * emulators'): 1 to 3 spatial dims (unused ones of size 1), OI..-ordered
 * weights, groups; im2col in column chunks bounded by the scratch, each
 * chunk one sy_gemm_f32, the bias added after the products. A 1x1 kernel
 * with unit strides and no padding runs as one GEMM on the input. */
typedef struct sy_conv_geom {
    int64_t n, c, m, group;          /* batch, input channels, output channels, groups */
    int64_t in[3], out[3], k[3];     /* spatial sizes (d, h, w) */
    int64_t s[3], d[3], pb[3], pe[3]; /* strides, dilations, begin and end pads */
} sy_conv_geom;

/* bytes of im2col columns sy_conv_f32 wants (about 4 MiB at most, one
 * column at least); 0 for the pointwise case, which needs none */
size_t sy_conv_f32_scratch(const sy_conv_geom *g);

/* y = conv(x, w) + b (b may be NULL). `scratch` is aligned up to 64 bytes
 * inside, so pass sy_conv_f32_scratch() + 64 bytes; false when it holds
 * less than one column (nothing written) */
bool sy_conv_f32(const sy_conv_geom *g, const float *x, const float *w, const float *b, float *y, void *scratch,
                 size_t scratch_bytes);

/* fp16 storage rounding: the nearest fp16 value of v, as a float */
static inline float sy_f16_round(float v) { return sy_f16_to_f32(sy_f32_to_f16(v)); }

/* ======================================================================== */
/* integer GEMM of the quantized kernels (sdk_qgemm.c)                      */
/* ======================================================================== */

/* Operands are codes minus zero points as int16, |v| <= 255 (8-bit or 4-bit
 * codes), in rows contiguous along K and zero-padded to sy_qgemm_kpad(K). */
#define SY_QGEMM_KALIGN 8
int64_t sy_qgemm_kpad(int64_t k);
/* dst[0..k) = element off+i of src (any quantized storage type) - zp;
 * dst[k..kp) = 0 */
void sy_qgemm_pack(const void *src, sy_dtype dt, size_t off, int64_t k, int64_t kp, int32_t zp, int16_t *dst);
/* c[i*ldc + j] = bias_row[i] + bias_col[j] + sum_{k<kp} a[i*lda + k] * b[j*ldb + k]
 * for i < m, j < n, modulo 2^32 (a wrapping int32 accumulator: bit-identical
 * to a plain loop). Either bias may be NULL. */
void sy_qgemm_s16(int64_t m, int64_t n, int64_t kp, const int16_t *a, int64_t lda, const int16_t *b, int64_t ldb,
                  const int32_t *bias_row, const int32_t *bias_col, int32_t *c, int64_t ldc);
/* acc[i] += w * x[i * xstride] for i < n, modulo 2^32 (|w|, |x| <= 255): one
 * tap of a depthwise convolution over an output row. */
void sy_qgemm_mac_row(int64_t n, int32_t w, const int16_t *x, int64_t xstride, int32_t *acc);
/* sy_q_store of v[0..n) at elements off.. of y (codes already in range). */
void sy_q_store_n(void *y, sy_dtype dt, size_t off, const int32_t *v, size_t n);

/* ======================================================================== */
/* fp32 scope: run an fp32 kernel on f16/bf16/f64 tensors                    */
/* ======================================================================== */

#define SY_SCOPE_MAX_IO 16

/* Scratch bytes needed to shadow every f16/bf16/f64 input and output of the
 * node in fp32 (call in prepare and add your own scratch). */
size_t sy_f32_scope_bytes(const sy_host_api *host, const sy_node *n);

typedef sy_status *(*sy_run_fn)(void *state, const sy_kernel_io *io);

/* Runs `fn` with an io whose f16/bf16/f64 tensors are fp32 shadows placed
 * at the start of the scratch (the rest of the scratch follows); converts
 * outputs back. Tensors already fp32 or non-float pass through. */
sy_status *sy_run_as_f32(const sy_host_api *host, void *state, const sy_kernel_io *io, sy_run_fn fn);

/* ======================================================================== */
/* registration                                                             */
/* ======================================================================== */

#define SY_COUNT_OF(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define SY_ATTRS(arr) (arr), SY_COUNT_OF(arr)
#define SY_NO_ATTRS NULL, 0u
#define SY_INPLACE(arr) (arr), SY_COUNT_OF(arr)
#define SY_NO_INPLACE NULL, 0u

/* sy_op_schema initialiser for the default domain:
 * SY_SCHEMA(op, since, min_in, max_in, min_out, max_out, SY_ATTRS(arr) | SY_NO_ATTRS, infer,
 *           SY_INPLACE(arr) | SY_NO_INPLACE, flags) */
#define SY_SCHEMA(...) SY_SCHEMA_(__VA_ARGS__)
#define SY_SCHEMA_(op, since, min_in, max_in, min_out, max_out, attrs, n_attrs, infer_fn, inplace, n_inplace, flags_) \
    {                                                                                                              \
        sizeof(sy_op_schema), "", (op), (since), (min_in), (max_in), (min_out), (max_out), (attrs), (n_attrs),     \
            (infer_fn), (inplace), (n_inplace), (flags_), NULL                                                     \
    }

/* sy_kernel_def initialiser for cpu_ref (type_input 0 unless given). */
#define SY_CPU_KERNEL(op, since, until, mask, type_input, prepare_fn, run_fn, release_fn)                         \
    {                                                                                                              \
        sizeof(sy_kernel_def), "", (op), (since), (until), "cpu_ref", (mask), (type_input), 0u, NULL, (prepare_fn), \
            (run_fn), (release_fn), NULL                                                                           \
    }

/* Registers arrays of schemas and kernels; stops at the first failure. */
sy_status *sy_register_tables(const sy_host_api *host, sy_plugin *p, const sy_op_schema *schemas, uint32_t n_schemas,
                              const sy_kernel_def *kernels, uint32_t n_kernels);

/* run() of a view op (Reshape, Identity, Dropout, ...): output 0 gets input
 * 0's bytes; a no-op when the core aliased them (must_alias). */
sy_status *sy_run_copy_input0(void *state, const sy_kernel_io *io);
/* Broadcast copy of `in` onto out's shape (Expand); false if it does not broadcast. */
bool sy_broadcast_copy(const sy_tensor *in, sy_tensor *out);

/* A prepare() for kernels that need no state: stores NULL. */
sy_status *sy_prepare_nothing(sy_node *n, void **state);
/* release() that frees with free() (states allocated with malloc/calloc). */
void sy_release_free(void *state);

/* ======================================================================== */
/* quantized arithmetic (sdk_quant.c): TFLite reference / CMSIS-NN rounding */
/* ======================================================================== */

/* Real multiplier m > 0 -> Q0.31 `mult` and power-of-two `shift` with
 * m ~= mult * 2^(shift - 31) (TFLite QuantizeMultiplier; 0 for m <= 0). */
void sy_q_quantize_multiplier(double m, int32_t *mult, int32_t *shift);
/* gemmlowp SaturatingRoundingDoublingHighMul and RoundingDivideByPOT. */
int32_t sy_q_srdhm(int32_t a, int32_t b);
int32_t sy_q_rdivpot(int32_t x, int32_t exponent);
/* TFLite MultiplyByQuantizedMultiplier (= CMSIS-NN arm_nn_requantize):
 * round(x * mult * 2^(shift - 31)) with the reference's double rounding. */
int32_t sy_q_mul_by_qm(int32_t x, int32_t mult, int32_t shift);
/* the same with TFLITE_SINGLE_ROUNDING's one rounding (sy_fx_mul_by_qm_single) */
int32_t sy_q_mul_by_qm_single(int32_t x, int32_t mult, int32_t shift);
/* MultiplyByQuantizedMultiplierGreaterThanOne (left_shift >= 0). */
int32_t sy_q_mul_by_qm_gt1(int32_t x, int32_t mult, int32_t left_shift);
/* [lo, hi] of an integer storage type (int8, uint8, int16; else int32). */
void sy_q_dtype_range(sy_dtype dt, int32_t *lo, int32_t *hi);
/* Clamp range of a TFLite fused activation ("NONE", "RELU", "RELU6",
 * "RELU_N1_TO_1", "RELU_0_TO_1") for a quantized output, as TFLite's
 * CalculateActivationRangeQuantized. False for activations that are not
 * clamps (TANH, SIGN_BIT); lo/hi are then the dtype's range. */
bool sy_q_act_range(sy_dtype dt, const char *act, float scale, int32_t zp, int32_t *lo, int32_t *hi);
/* The same for float outputs (-inf/inf when unbounded). */
bool sy_act_range_f32(const char *act, float *lo, float *hi);
/* round(x / scale) + zp (half away from zero), clamped to [lo, hi]. */
int32_t sy_q_quantize_f32(float x, float scale, int32_t zp, int32_t lo, int32_t hi);
/* gemmlowp fixed point: exp of a Q5.26 value <= 0 as Q0.31; 1/(1+x) for a
 * Q0.31 x in [0,1); reciprocal of a Q(integer_digits) sum (TFLite
 * GetReciprocal). */
int32_t sy_q_exp_on_negative_values(int32_t a);
int32_t sy_q_one_over_one_plus_x(int32_t a);
int32_t sy_q_get_reciprocal(int32_t x, int32_t integer_digits, int32_t *num_bits_over_unit);
/* The parameters of the int8 Softmax of the TFLite Micro reference (and
 * CMSIS-NN arm_softmax_s8) from beta and the input scale; the kernel is the
 * portable tflk_softmax_s8 (plugin_sdk/kernels), output scale 1/256, zero
 * point -128. */
void sy_q_softmax_params(double beta, double input_scale, int32_t *mult, int32_t *left_shift, int32_t *diff_min);

/* ======================================================================== */
/* requantization, quantization parameters and calibration (sdk_requant.c)  */
/* (ONNX quantized ops and the quant_* scheme plugins; the fixed-point      */
/*  arithmetic itself is the sdk_quant.c section above)                     */
/* ======================================================================== */

/* Round half to even, independent of the FPU rounding mode. */
double sy_rq_round_even(double v);
/* [lo, hi] of a quantized storage type (int8/uint8/int16/uint16/int32/int4/
 * uint4); false for other types. */
bool sy_q_storage_range(sy_dtype dt, int32_t *lo, int32_t *hi);
/* Element i of a quantized tensor (4-bit: packed, low nibble first). */
int32_t sy_q_load(const void *data, sy_dtype dt, size_t i);
void sy_q_store(void *data, sy_dtype dt, size_t i, int32_t v);
/* bytes of n elements (4-bit types: rounded up) */
size_t sy_q_storage_bytes(sy_dtype dt, size_t n);
/* ONNX QuantizeLinear: sat(round_half_even(x / scale) + zp) (division in float). */
int32_t sy_rq_quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi);
/* ONNX DequantizeLinear: (q - zp) * scale in float. */
float sy_rq_dequantize(int32_t q, float scale, int32_t zp);

/* Requantization form: explicit, chosen per node / session / provider. */
typedef enum sy_rq_mode {
    SY_RQ_ONNX = 0,    /* float multiplier, round half to even (ONNX QLinear*) */
    SY_RQ_GEMMLOWP = 1, /* int32 multiplier + shift, two roundings half away from zero (gemmlowp, TFLite Micro, CMSIS-NN) */
    SY_RQ_SINGLE = 2    /* the same multiplier + shift, one rounding half up: (acc*m + 2^(t-1)) >> t, t = 31 - shift
                         * (TFLite built with TFLITE_SINGLE_ROUNDING, ruy) */
} sy_rq_mode;
/* "onnx" | "gemmlowp" | "single_rounding" (aliases "float"; "cmsis", "fixed";
 * "single"); false otherwise */
bool sy_rq_mode_parse(const char *s, sy_rq_mode *out);
const char *sy_rq_mode_name(sy_rq_mode m);

/* acc (int32 accumulator of (x - zx)(w - zw) [+ bias]) -> output code. */
typedef struct sy_requant {
    sy_rq_mode mode;
    double real_mult; /* s_x * s_w / s_y */
    int32_t mult, shift; /* sy_q_quantize_multiplier(real_mult) */
    int32_t zp, lo, hi;  /* output zero point and clamp (dtype range and fused activation) */
} sy_requant;
void sy_rq_init(sy_requant *r, sy_rq_mode mode, double real_mult, int32_t zp, int32_t lo, int32_t hi);
int32_t sy_rq_apply(const sy_requant *r, int64_t acc);
/* out[i] = sy_rq_apply(&r[i * r_stride], acc[i]) for i < n (r_stride 0: one
 * requantizer for all), without a libm call per element (sdk_qgemm.c). */
void sy_rq_apply_n(const sy_requant *r, size_t r_stride, const int32_t *acc, int32_t *out, size_t n);

/* Checks scales (> 0, finite), zero points (inside the storage range) and,
 * for per-axis parameters, count == axis_len (pass -1 to skip). Messages
 * name `tensor`. */
sy_status *sy_qp_check(const sy_host_api *host, const char *tensor, const sy_quant_params *qp, int32_t axis_len);
/* Scale and zero point for values in [min, max] (widened to include 0). */
void sy_q_choose_params(float min, float max, sy_dtype dt, bool symmetric, float *scale, int32_t *zp);

/* Calibration observers: running min/max, or a histogram whose tails beyond
 * `percentile` (e.g. 99.99) are clipped. */
typedef enum sy_calib_method { SY_CALIB_MINMAX = 0, SY_CALIB_PERCENTILE = 1 } sy_calib_method;
typedef struct sy_calib sy_calib;
sy_calib *sy_calib_new(sy_calib_method method, double percentile); /* NULL on out-of-memory */
void sy_calib_update(sy_calib *c, const float *x, size_t n);
void sy_calib_range(const sy_calib *c, float *min, float *max);
void sy_calib_free(sy_calib *c);

/* What `switchyard quantize --scheme NAME` applies, published by a quant_*
 * scheme plugin as the extension "quant_recipe.NAME" (version
 * SY_QUANT_RECIPE_VERSION) next to the schemes it registers. Types only:
 * host tools read it with sy_get_extension. */
#define SY_QUANT_RECIPE_VERSION 1
typedef struct sy_quant_recipe {
    uint32_t struct_size;
    const char *name;
    const char *description;
    const sy_quant_scheme_def *activations;         /* NULL: activations stay float */
    const sy_quant_scheme_def *weights;             /* per-tensor weights; NULL: weights stay float */
    const sy_quant_scheme_def *weights_per_channel; /* per output channel (--per-channel); may be NULL */
    int32_t block_size;                             /* > 0: weights quantized in blocks of this many */
    bool fp16_storage;                              /* float weights stored as float16 */
    /* an observer of scheme `s` with an explicit method (the scheme's own
     * observer_create reads the method from INI options instead) */
    sy_status *(*observer_new)(const sy_quant_scheme_def *s, sy_calib_method method, double percentile,
                               sy_observer **out);
    /* frees the arrays observer_finalize allocated */
    void (*params_free)(sy_quant_params *qp);
} sy_quant_recipe;

/* ======================================================================== */
/* low-bit element types (sdk_lowbit.c)                                     */
/* float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz/e8m0 (one byte each), float4e2m1,    */
/* int4/uint4 (two per byte, low nibble first), int2/uint2 (four per byte,  */
/* lowest bits first). Conversions follow ONNX Cast: round to nearest even; */
/* `saturate` maps +-inf and out-of-range values to +-max (else inf for     */
/* e5m2, NaN for the others); float4e2m1 always clamps; int4/int2 wrap like */
/* a C cast (floats truncate toward zero first).                            */
/* ======================================================================== */

typedef enum sy_round_mode { SY_ROUND_UP = 0, SY_ROUND_DOWN = 1, SY_ROUND_NEAREST = 2 } sy_round_mode;

#define SY_DT_MASK_FLOAT8                                                                                          \
    (SY_DT_BIT(SY_DT_FLOAT8E4M3FN) | SY_DT_BIT(SY_DT_FLOAT8E4M3FNUZ) | SY_DT_BIT(SY_DT_FLOAT8E5M2) |               \
     SY_DT_BIT(SY_DT_FLOAT8E5M2FNUZ) | SY_DT_BIT(SY_DT_FLOAT8E8M0))
#define SY_DT_MASK_LOWBIT                                                                                          \
    (SY_DT_MASK_FLOAT8 | SY_DT_BIT(SY_DT_FLOAT4E2M1) | SY_DT_BIT(SY_DT_INT4) | SY_DT_BIT(SY_DT_UINT4) |            \
     SY_DT_BIT(SY_DT_INT2) | SY_DT_BIT(SY_DT_UINT2))

unsigned sy_dt_bits(sy_dtype dt);            /* bits per element, packed types too; 0 string/unknown */
bool sy_dt_is_lowbit(sy_dtype dt);           /* one of the types above */
bool sy_dt_is_float8(sy_dtype dt);           /* the five one-byte float8 kinds */
size_t sy_dt_nbytes(sy_dtype dt, int64_t n); /* bytes of n elements (packed: rounded up) */
const char *sy_dt_name_full(sy_dtype dt);    /* sy_dt_name that also names the float8/2-bit types */

/* One float8 element (dt = one of the float8 kinds) <-> fp32. */
float sy_f8_to_f32(uint8_t v, sy_dtype dt);
uint8_t sy_f32_to_f8(float x, sy_dtype dt, bool saturate);
/* float4e2m1 nibble <-> fp32 (NaN encodes as -0, +-inf clamp to +-6). */
float sy_f4e2m1_to_f32(uint8_t nibble);
uint8_t sy_f32_to_f4e2m1(float x);
/* float8e8m0 (2^(v-127), 0xff NaN) from a magnitude, with Cast's round_mode. */
uint8_t sy_f64_to_e8m0(double x, bool saturate, sy_round_mode mode);
/* Element i of a packed int4/uint4/int2/uint2 tensor, sign-extended. */
int64_t sy_lowbit_load_i64(const void *data, sy_dtype dt, size_t i);
/* sy_load_f64/sy_store_f64 for every type, low-bit ones included. */
double sy_load_any_f64(const void *data, sy_dtype dt, size_t i);
void sy_store_any_f64(void *data, sy_dtype dt, size_t i, double v, bool saturate, sy_round_mode mode);
/* sy_convert for every numeric type, low-bit ones included (ints travel
 * exactly through int64; floats round once from double). */
bool sy_convert_ex(const void *src, sy_dtype src_dt, void *dst, sy_dtype dst_dt, size_t n, bool saturate,
                   sy_round_mode mode);

/* ======================================================================== */
/* recurrent cells (sdk_rnn.c): the ONNX RNN / GRU / LSTM cell math shared   */
/* by ops_recurrent (ONNX RNN/GRU/LSTM) and qti_aisw (StatefulGRU/LSTM)      */
/* ======================================================================== */
typedef enum { SY_RNN_SIMPLE = 1, SY_RNN_GRU = 3, SY_RNN_LSTM = 4 } sy_rnn_kind; /* = gate count */
typedef enum {
    SY_RNN_ACT_SIGMOID, SY_RNN_ACT_TANH, SY_RNN_ACT_RELU, SY_RNN_ACT_AFFINE, SY_RNN_ACT_LEAKY_RELU,
    SY_RNN_ACT_THRESHOLDED_RELU, SY_RNN_ACT_SCALED_TANH, SY_RNN_ACT_HARD_SIGMOID, SY_RNN_ACT_ELU,
    SY_RNN_ACT_SOFTSIGN, SY_RNN_ACT_SOFTPLUS
} sy_rnn_act_kind;
/* An ONNX recurrent activation with its alpha / beta. */
typedef struct sy_rnn_act {
    int kind; /* sy_rnn_act_kind */
    float alpha, beta;
} sy_rnn_act;
float sy_rnn_act_apply(const sy_rnn_act *f, float x);

typedef struct sy_rnn_cell {
    sy_rnn_kind kind;
    int64_t hidden, input;
    bool linear_before_reset; /* GRU */
    bool input_forget;        /* LSTM: f = 1 - i */
    float clip;               /* <= 0: none */
    /* ONNX order: f (gates), g (candidate), h (LSTM output); all zero =
     * the ONNX defaults Sigmoid, Tanh, Tanh (see sy_rnn_cell_defaults) */
    sy_rnn_act act[3];
} sy_rnn_cell;
/* kind, hidden, input, default activations, no clip */
void sy_rnn_cell_defaults(sy_rnn_cell *c, sy_rnn_kind kind, int64_t hidden, int64_t input);

/*
 * One step of one batch row. g: [G*hidden] input projection x W^T plus the
 * W bias (overwritten); hr: [G*hidden] h_prev R^T; R: the direction's full
 * R [G*hidden, hidden] (GRU without linear_before_reset); Rb: [G*hidden] R
 * bias or NULL; P: [3*hidden] LSTM peepholes (i, o, f) or NULL. h (and c
 * for LSTM): [hidden] state in and out. tmp: 2*hidden floats. Gate order is
 * ONNX's: LSTM i o f c, GRU z r h.
 */
void sy_rnn_cell_step(const sy_rnn_cell *c, float *g, const float *hr, const float *R, const float *Rb,
                      const float *P, float *h, float *cst, float *tmp);

/* Floats of scratch sy_rnn_dir needs. */
size_t sy_rnn_dir_scratch_floats(const sy_rnn_cell *c, int64_t seq, int64_t batch);
/*
 * One direction over a sequence, ONNX layout 0, state passed in and out.
 * x: [seq, batch, input]; W: [G*hidden, input]; R: [G*hidden, hidden];
 * B: [2*G*hidden] or NULL; P: [3*hidden] or NULL; lens: per-batch valid
 * lengths or NULL (= seq). h, c: [batch, hidden] in and out (c unused but
 * for LSTM). y: NULL or where step t of batch b goes, at
 * y + (t * y_step + b) * hidden (y already offset to the direction).
 * reverse: from each sequence's own last valid step down to 0.
 */
void sy_rnn_dir(const sy_rnn_cell *c, bool reverse, const float *x, int64_t seq, int64_t batch, const float *W,
                const float *R, const float *B, const float *P, const int64_t *lens, float *h, float *cst, float *y,
                int64_t y_step, float *scratch);

/* ======================================================================== */
/* string tensors (sdk_string.c): SY_DT_STRING data is an array of         */
/* sy_string records (sy_types.h); text a kernel makes comes from           */
/* host->run_alloc                                                          */
/* ======================================================================== */
/* Byte-wise equality (ONNX compares strings without normalisation). */
bool sy_str_equal(const sy_string *a, const sy_string *b);
/* `size` bytes of string text for this run (host->run_alloc), or an error
 * naming the node's output when the host has none (ABI < 1.3) or refuses. */
sy_status *sy_str_alloc(const sy_host_api *host, const sy_kernel_io *io, size_t size, char **out);
/* Length of the longest valid UTF-8 prefix of s[0..n): n when all of it is
 * valid (overlong forms, surrogates and code points past U+10FFFF are not). */
size_t sy_utf8_valid_prefix(const char *s, size_t n);
/* Decode one code point at s[*i] (already validated) and advance *i. */
uint32_t sy_utf8_next(const char *s, size_t *i);
/* Encode code point c (<= U+10FFFF, not a surrogate) into out[0..4); bytes written. */
size_t sy_utf8_put(uint32_t c, char *out);

#ifdef __cplusplus
}
#endif
#endif
