/*
 * The TFLite operators of ops-mcu.md Table A (90 rows), one small model per
 * case, built in memory by tfl_writer.c, loaded through the public API and
 * run on cpu_ref alone (strict, so no other provider takes a node).
 *
 * Expected values never come from the code under test: small vectors are
 * worked by hand (the comments show the arithmetic), larger ones (conv,
 * pooling, resize, softmax, ...) come from plain references written here in
 * double precision from TFLite's published semantics, and int8 results from
 * TFLite's reference integer arithmetic (QuantizeMultiplier, the
 * double-rounding SaturatingRoundingDoublingHighMul + RoundingDivideByPOT
 * that CMSIS-NN's arm_nn_requantize also uses), written out below.
 *
 * Cases of the ops the riscv_mcu provider has kernels for (conv, depthwise,
 * FC, transposed conv, batched matmul, 3-D conv, pools, softmax, the
 * reshapes, the reductions, ...) run again on a strict riscv_mcu session
 * (target ws63), the host run of the code the MCU packages carry, against
 * the same expected values; the ones the seed's rules decline (an int8 depth
 * multiplier 2 over several channels, ...) run with rules = tflm.
 *
 * The conversion-time rejections the seed lists are checked against the
 * riscv_mcu provider (strict, target ws63): session creation must fail
 * naming the operator and the Table A rule. Run-time failures the seed
 * lists (GatherNd / ScatterND out-of-range indices) must fail the run with
 * a message naming the operator.
 *
 * Needs no shared data: it never skips. Prints
 *   tflite ops: 90 operators, N cases, N passed
 * and every Table A row without a case is a failure.
 */
#include "switchyard/switchyard.h"
#include "sy_test.h"
#include "tfl_writer.h"

#include <math.h>
#include <stdint.h>

/* BuiltinOperator codes (schema.fbs) */
enum {
    OP_ADD = 0, OP_AVERAGE_POOL_2D = 1, OP_CONCATENATION = 2, OP_CONV_2D = 3, OP_DEPTHWISE_CONV_2D = 4,
    OP_DEPTH_TO_SPACE = 5, OP_DEQUANTIZE = 6, OP_FLOOR = 8, OP_FULLY_CONNECTED = 9, OP_L2_NORMALIZATION = 11,
    OP_LOGISTIC = 14, OP_MAX_POOL_2D = 17, OP_MUL = 18, OP_RELU = 19, OP_RELU6 = 21, OP_RESHAPE = 22,
    OP_RESIZE_BILINEAR = 23, OP_SOFTMAX = 25, OP_SPACE_TO_DEPTH = 26, OP_TANH = 28, OP_PAD = 34, OP_GATHER = 36,
    OP_TRANSPOSE = 39, OP_MEAN = 40, OP_SUB = 41, OP_DIV = 42, OP_SQUEEZE = 43, OP_STRIDED_SLICE = 45, OP_EXP = 47,
    OP_TOPK_V2 = 48, OP_SPLIT = 49, OP_LOG_SOFTMAX = 50, OP_CAST = 53, OP_PRELU = 54, OP_MAXIMUM = 55,
    OP_ARG_MAX = 56, OP_MINIMUM = 57, OP_LESS = 58, OP_NEG = 59, OP_PADV2 = 60, OP_GREATER = 61,
    OP_GREATER_EQUAL = 62, OP_LESS_EQUAL = 63, OP_SELECT = 64, OP_SLICE = 65, OP_SIN = 66, OP_TRANSPOSE_CONV = 67,
    OP_TILE = 69, OP_EXPAND_DIMS = 70, OP_EQUAL = 71, OP_NOT_EQUAL = 72, OP_LOG = 73, OP_SUM = 74, OP_SQRT = 75,
    OP_RSQRT = 76, OP_SHAPE = 77, OP_POW = 78, OP_ARG_MIN = 79, OP_REDUCE_PROD = 81, OP_REDUCE_MAX = 82,
    OP_PACK = 83, OP_LOGICAL_OR = 84, OP_ONE_HOT = 85, OP_LOGICAL_AND = 86, OP_LOGICAL_NOT = 87, OP_UNPACK = 88,
    OP_REDUCE_MIN = 89, OP_SQUARE = 92, OP_FILL = 94, OP_RESIZE_NEAREST_NEIGHBOR = 97, OP_LEAKY_RELU = 98,
    OP_MIRROR_PAD = 100, OP_ABS = 101, OP_SPLIT_V = 102, OP_UNIQUE = 103, OP_CEIL = 104, OP_REVERSE_V2 = 105,
    OP_GATHER_ND = 107, OP_COS = 108, OP_ELU = 111, OP_REVERSE_SEQUENCE = 112, OP_QUANTIZE = 114, OP_ROUND = 116,
    OP_HARD_SWISH = 117, OP_SCATTER_ND = 122, OP_SELECT_V2 = 123, OP_BATCH_MATMUL = 126, OP_CUMSUM = 128,
    OP_CONV_3D = 132, OP_GELU = 150,
    OP_SQUARED_DIFFERENCE = 99 /* not a Table A row: TFLite's int8 kernel checked too */
};

/* Table A rows -> builtin code (ops-mcu.md §2, document order) */
static const struct {
    int row;
    const char *name;
    int code;
} table_a[] = {
    {1, "Conv2D", OP_CONV_2D}, {2, "Conv3D", OP_CONV_3D}, {3, "MaxPool2D", OP_MAX_POOL_2D},
    {4, "FullyConnected", OP_FULLY_CONNECTED}, {5, "BatchMatmul", OP_BATCH_MATMUL}, {6, "Softmax", OP_SOFTMAX},
    {7, "Relu", OP_RELU}, {8, "Tanh", OP_TANH}, {9, "Logistic", OP_LOGISTIC}, {10, "Reshape", OP_RESHAPE},
    {11, "Mul", OP_MUL}, {12, "Add", OP_ADD}, {13, "Sub", OP_SUB}, {14, "Gather", OP_GATHER},
    {15, "Split", OP_SPLIT}, {16, "SplitV", OP_SPLIT_V}, {17, "Concatenation", OP_CONCATENATION},
    {18, "AveragePool2D", OP_AVERAGE_POOL_2D}, {19, "Tile", OP_TILE}, {20, "Pad", OP_PAD}, {21, "PadV2", OP_PADV2},
    {22, "Mirror_Pad", OP_MIRROR_PAD}, {23, "Resize_Bilinear", OP_RESIZE_BILINEAR},
    {24, "Resize_Nearest_Neighbor", OP_RESIZE_NEAREST_NEIGHBOR}, {25, "Squeeze", OP_SQUEEZE},
    {26, "ExpandDims", OP_EXPAND_DIMS}, {27, "Abs", OP_ABS}, {28, "Ceil", OP_CEIL}, {29, "Cos", OP_COS},
    {30, "Exp", OP_EXP}, {31, "Floor", OP_FLOOR}, {32, "Log", OP_LOG}, {33, "Round", OP_ROUND},
    {34, "Rsqrt", OP_RSQRT}, {35, "Sin", OP_SIN}, {36, "Sqrt", OP_SQRT}, {37, "Square", OP_SQUARE},
    {38, "L2Normalization", OP_L2_NORMALIZATION}, {39, "Slice", OP_SLICE}, {40, "StridedSlice", OP_STRIDED_SLICE},
    {41, "DepthwiseConv2D", OP_DEPTHWISE_CONV_2D}, {42, "Transpose", OP_TRANSPOSE}, {43, "ArgMax", OP_ARG_MAX},
    {44, "ArgMin", OP_ARG_MIN}, {45, "Div", OP_DIV}, {46, "ReduceMax", OP_REDUCE_MAX},
    {47, "ReduceMin", OP_REDUCE_MIN}, {48, "Sum", OP_SUM}, {49, "Mean", OP_MEAN}, {50, "Cast", OP_CAST},
    {51, "Quantize", OP_QUANTIZE}, {52, "Dequantize", OP_DEQUANTIZE}, {53, "PRelu", OP_PRELU},
    {54, "CumSum", OP_CUMSUM}, {55, "ReverseSequence", OP_REVERSE_SEQUENCE}, {56, "Relu6", OP_RELU6},
    {57, "LeakyRelu", OP_LEAKY_RELU}, {58, "HardSwish", OP_HARD_SWISH}, {59, "LogicalAnd", OP_LOGICAL_AND},
    {60, "Equal", OP_EQUAL}, {61, "GreaterEqual", OP_GREATER_EQUAL}, {62, "Greater", OP_GREATER},
    {63, "LessEqual", OP_LESS_EQUAL}, {64, "Less", OP_LESS}, {65, "NotEqual", OP_NOT_EQUAL},
    {66, "LogicalNot", OP_LOGICAL_NOT}, {67, "LogicalOr", OP_LOGICAL_OR}, {68, "Elu", OP_ELU},
    {69, "DepthToSpace", OP_DEPTH_TO_SPACE}, {70, "SpaceToDepth", OP_SPACE_TO_DEPTH}, {71, "Fill", OP_FILL},
    {72, "Shape", OP_SHAPE}, {73, "Neg", OP_NEG}, {74, "Pow", OP_POW}, {75, "TopK", OP_TOPK_V2},
    {76, "Gelu", OP_GELU}, {77, "Pack", OP_PACK}, {78, "Unpack", OP_UNPACK}, {79, "Select", OP_SELECT},
    {80, "SelectV2", OP_SELECT_V2}, {81, "ReverseV2", OP_REVERSE_V2}, {82, "Maximum", OP_MAXIMUM},
    {83, "Minimum", OP_MINIMUM}, {84, "ReduceProd", OP_REDUCE_PROD}, {85, "OneHot", OP_ONE_HOT},
    {86, "Unique", OP_UNIQUE}, {87, "GatherNd", OP_GATHER_ND}, {88, "ScatterND", OP_SCATTER_ND},
    {89, "LogSoftmax", OP_LOG_SOFTMAX}, {90, "TransposeConv", OP_TRANSPOSE_CONV},
};
#define N_TABLE_A ((int)(sizeof table_a / sizeof table_a[0]))

/* BuiltinOptions union types (schema.fbs) */
enum {
    BO_CONV2D = 1, BO_DWCONV = 2, BO_POOL2D = 5, BO_FC = 8, BO_SOFTMAX = 9, BO_CONCAT = 10, BO_ADD = 11,
    BO_L2NORM = 12, BO_RESIZE_BILINEAR = 15, BO_RESHAPE = 17, BO_SPACE_TO_DEPTH = 19, BO_MUL = 21, BO_GATHER = 23,
    BO_REDUCER = 27, BO_SUB = 28, BO_DIV = 29, BO_SQUEEZE = 30, BO_STRIDED_SLICE = 32, BO_SPLIT = 35,
    BO_CAST = 37, BO_ARGMAX = 40, BO_TCONV = 49, BO_SHAPE = 55, BO_ARGMIN = 57, BO_PACK = 59, BO_ONE_HOT = 61,
    BO_UNPACK = 64, BO_RESIZE_NN = 74, BO_LEAKY = 75, BO_MIRROR = 77, BO_SPLITV = 79, BO_UNIQUE = 80,
    BO_DEPTH_TO_SPACE = 94, BO_REVSEQ = 87, BO_BMM = 101, BO_CUMSUM = 102, BO_CONV3D = 106, BO_GELU = 116
};
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU6 = 3 };
enum { PAD_SAME = 0, PAD_VALID = 1 };
enum { F32 = TFLW_FLOAT32, I32 = TFLW_INT32, U8 = TFLW_UINT8, I64 = TFLW_INT64, BOOL = TFLW_BOOL, I8 = TFLW_INT8 };

static sy_env *env_ref; /* cpu_ref only, strict */
static sy_env *env_mcu; /* riscv_mcu only, strict, ws63 */
static sy_env *env_mcu_tflm; /* the same with rules = tflm */
static int n_cases, n_passed;
static bool covered[N_TABLE_A][2]; /* [row][0 = fp32 / other, 1 = int8] */

/* The case-building helpers are called from hundreds of places; inlining
 * them all makes clang with the sanitizers take minutes on this file. */
#define CASE_API __attribute__((noinline))

/* ---- the case being built -------------------------------------------------- */

#define MAX_T 12
typedef struct ctensor {
    tflw_tensor t;
    float qs[8];
    int64_t qz[8];
    bool is_output;
    const void *expect; /* outputs */
} ctensor;

static struct {
    const char *name;
    int code;
    ctensor t[MAX_T];
    int n_t;
    int32_t op_in[MAX_T], op_out[MAX_T];
    int n_in, n_out;
    tflw_opt opts[12];
    int n_opts;
    uint8_t options_type;
    double tol;     /* float outputs: |got - want| <= tol * max(1, |want|) */
    int int_tol;    /* integer outputs */
    const char *reject_load; /* a session on env_mcu must fail with this text */
    const char *reject_run;  /* the run on cpu_ref must fail with this text */
    const char *reject_ref;  /* load / session on cpu_ref must fail with this text */
} C;

static size_t dt_size(int type)
{
    switch (type) {
    case F32: case I32: return 4;
    case I64: return 8;
    case TFLW_INT16: return 2;
    default: return 1;
    }
}

static CASE_API void begin(const char *name, int code)
{
    memset(&C, 0, sizeof C);
    C.name = name;
    C.code = code;
    C.tol = 1e-5;
}

/* shape text "1x3x3x2"; "" is a scalar */
static CASE_API int add_tensor(int type, const char *shape, const void *data, bool is_const)
{
    ctensor *ct = &C.t[C.n_t];
    memset(ct, 0, sizeof *ct);
    ct->t.type = type;
    ct->t.name = NULL;
    int64_t numel = 1;
    for (const char *p = shape; *p;) {
        char *end;
        long d = strtol(p, &end, 10);
        ct->t.dims[ct->t.rank++] = (int32_t)d;
        numel *= d;
        p = *end ? end + 1 : end;
    }
    ct->t.nbytes = (size_t)numel * dt_size(type);
    ct->t.data = is_const ? data : NULL;
    ct->expect = data;
    return C.n_t++;
}

/* a runtime input (fed `data`) */
static CASE_API int in(int type, const char *shape, const void *data)
{
    int i = add_tensor(type, shape, data, false);
    C.op_in[C.n_in++] = i;
    return i;
}
/* a constant input */
static CASE_API int cin(int type, const char *shape, const void *data)
{
    int i = add_tensor(type, shape, data, true);
    C.op_in[C.n_in++] = i;
    return i;
}
static CASE_API void no_in(void) { C.op_in[C.n_in++] = -1; }
/* an output and its expected contents */
static CASE_API int out(int type, const char *shape, const void *expect)
{
    int i = add_tensor(type, shape, expect, false);
    C.t[i].is_output = true;
    C.op_out[C.n_out++] = i;
    return i;
}
static CASE_API void q(int i, float scale, int zp)
{
    C.t[i].qs[0] = scale;
    C.t[i].qz[0] = zp;
    C.t[i].t.n_quant = 1;
}
static CASE_API void qc(int i, int n, const float *scales, int dim)
{
    for (int k = 0; k < n; k++) {
        C.t[i].qs[k] = scales[k];
        C.t[i].qz[k] = 0;
    }
    C.t[i].t.n_quant = n;
    C.t[i].t.quant_dim = dim;
}
static CASE_API void opts(uint8_t type) { C.options_type = type; }
static CASE_API void o_u8(uint8_t id, int v) { C.opts[C.n_opts++] = (tflw_opt){.id = id, .kind = TFLW_OPT_U8, .i = v}; }
static CASE_API void o_i32(uint8_t id, int v) { C.opts[C.n_opts++] = (tflw_opt){.id = id, .kind = TFLW_OPT_I32, .i = v}; }
static CASE_API void o_f32(uint8_t id, float v) { C.opts[C.n_opts++] = (tflw_opt){.id = id, .kind = TFLW_OPT_F32, .f = v}; }
static CASE_API void o_vec(uint8_t id, const int32_t *v, int n)
{
    C.opts[C.n_opts++] = (tflw_opt){.id = id, .kind = TFLW_OPT_I32VEC, .vec = v, .n_vec = (uint32_t)n};
}

static const char *dt_text(int type)
{
    switch (type) {
    case F32: return "f32";
    case I8: return "i8";
    case I32: return "i32";
    case I64: return "i64";
    case BOOL: return "bool";
    case U8: return "u8";
    default: return "?";
    }
}

static sy_dtype sy_dt(int type)
{
    switch (type) {
    case F32: return SY_DT_FLOAT32;
    case I8: return SY_DT_INT8;
    case I32: return SY_DT_INT32;
    case I64: return SY_DT_INT64;
    case BOOL: return SY_DT_BOOL;
    case U8: return SY_DT_UINT8;
    case TFLW_INT16: return SY_DT_INT16;
    default: return SY_DT_UNDEFINED;
    }
}

static uint8_t *build(size_t *size)
{
    tflw_tensor ts[MAX_T];
    int32_t gin[MAX_T], gout[MAX_T];
    int n_gin = 0;
    for (int i = 0; i < C.n_t; i++) {
        ts[i] = C.t[i].t;
        ts[i].scales = C.t[i].qs;
        ts[i].zero_points = C.t[i].qz;
        char *nm = malloc(16);
        snprintf(nm, 16, "t%d", i);
        ts[i].name = nm;
        if (!C.t[i].is_output && !C.t[i].t.data)
            gin[n_gin++] = i;
    }
    for (int i = 0; i < C.n_out; i++)
        gout[i] = C.op_out[i];
    tflw_op op = {.code = C.code, .inputs = C.op_in, .n_inputs = C.n_in, .outputs = C.op_out,
                  .n_outputs = C.n_out, .options_type = C.options_type, .opts = C.opts, .n_opts = C.n_opts};
    tflw_model m = {.tensors = ts, .n_tensors = C.n_t, .ops = &op, .n_ops = 1, .inputs = gin, .n_inputs = n_gin,
                    .outputs = gout, .n_outputs = C.n_out};
    uint8_t *b = tflw_build(&m, size);
    for (int i = 0; i < C.n_t; i++)
        free((void *)ts[i].name);
    return b;
}

static bool compare(int k, const sy_tensor *got)
{
    const ctensor *ct = &C.t[C.op_out[k]];
    if (!got) {
        CHECK(got != NULL, "%s: output %d missing", C.name, k);
        return false;
    }
    bool good = true;
    if (got->dtype != sy_dt(ct->t.type) || got->rank != ct->t.rank) {
        CHECK(false, "%s: output %d is %s rank %d, want %s rank %d", C.name, k, sy_dtype_name(got->dtype),
              (int)got->rank, dt_text(ct->t.type), ct->t.rank);
        return false;
    }
    for (int d = 0; d < ct->t.rank; d++)
        if (got->dims[d] != ct->t.dims[d]) {
            CHECK(false, "%s: output %d dim %d is %lld, want %d", C.name, k, d, (long long)got->dims[d],
                  (int)ct->t.dims[d]);
            return false;
        }
    size_t n = ct->t.nbytes / dt_size(ct->t.type);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g, w;
        switch (ct->t.type) {
        case F32: g = ((const float *)got->data)[i]; w = ((const float *)ct->expect)[i]; break;
        case I8: g = ((const int8_t *)got->data)[i]; w = ((const int8_t *)ct->expect)[i]; break;
        case U8: g = ((const uint8_t *)got->data)[i]; w = ((const uint8_t *)ct->expect)[i]; break;
        case BOOL: g = ((const uint8_t *)got->data)[i] != 0; w = ((const uint8_t *)ct->expect)[i] != 0; break;
        case I32: g = ((const int32_t *)got->data)[i]; w = ((const int32_t *)ct->expect)[i]; break;
        case I64: g = (double)((const int64_t *)got->data)[i]; w = (double)((const int64_t *)ct->expect)[i]; break;
        default: g = 0; w = 1;
        }
        bool okv;
        if (ct->t.type == F32)
            okv = (isnan(w) && isnan(g)) || fabs(g - w) <= C.tol * fmax(1.0, fabs(w));
        else
            okv = fabs(g - w) <= C.int_tol;
        if (!okv) {
            if (bad++ < 4)
                CHECK(false, "%s: output %d [%zu] = %.7g, want %.7g", C.name, k, i, g, w);
            good = false;
        }
    }
    if (bad > 4)
        CHECK(false, "%s: output %d: %d elements differ", C.name, k, bad);
    if (good)
        sy_test_checks_++;
    return good;
}

static void mark_covered(bool int8)
{
    for (int r = 0; r < N_TABLE_A; r++)
        if (table_a[r].code == C.code)
            covered[r][int8] = true;
}

static bool msg_has(sy_status *st, const char *what, const char *want)
{
    const char *msg = st ? sy_status_get_message(st) : NULL;
    if (msg && getenv("SY_TEST_VERBOSE"))
        printf("     refused: %s\n", msg);
    bool good = msg && strstr(msg, want) && strstr(msg, what);
    CHECK(good, "%s: expected a refusal naming '%s' and '%s', got %s", C.name, what, want,
          msg ? msg : "(no error)");
    return good;
}

static const char *op_names_for_test(int code)
{
    switch (code) {
#define N(x)                                                                                                       \
    case OP_##x: return #x;
        N(ADD) N(AVERAGE_POOL_2D) N(CONCATENATION) N(CONV_2D) N(DEPTHWISE_CONV_2D) N(DEPTH_TO_SPACE) N(DEQUANTIZE)
        N(FLOOR) N(FULLY_CONNECTED) N(L2_NORMALIZATION) N(LOGISTIC) N(MAX_POOL_2D) N(MUL) N(RELU) N(RELU6)
        N(RESHAPE) N(RESIZE_BILINEAR) N(SOFTMAX) N(SPACE_TO_DEPTH) N(TANH) N(PAD) N(GATHER) N(TRANSPOSE) N(MEAN)
        N(SUB) N(DIV) N(SQUEEZE) N(STRIDED_SLICE) N(EXP) N(TOPK_V2) N(SPLIT) N(LOG_SOFTMAX) N(CAST) N(PRELU)
        N(MAXIMUM) N(ARG_MAX) N(MINIMUM) N(LESS) N(NEG) N(PADV2) N(GREATER) N(GREATER_EQUAL) N(LESS_EQUAL)
        N(SELECT) N(SLICE) N(SIN) N(TRANSPOSE_CONV) N(TILE) N(EXPAND_DIMS) N(EQUAL) N(NOT_EQUAL) N(LOG) N(SUM)
        N(SQRT) N(RSQRT) N(SHAPE) N(POW) N(ARG_MIN) N(REDUCE_PROD) N(REDUCE_MAX) N(PACK) N(LOGICAL_OR) N(ONE_HOT)
        N(LOGICAL_AND) N(LOGICAL_NOT) N(UNPACK) N(REDUCE_MIN) N(SQUARE) N(FILL) N(RESIZE_NEAREST_NEIGHBOR)
        N(LEAKY_RELU) N(MIRROR_PAD) N(ABS) N(SPLIT_V) N(UNIQUE) N(CEIL) N(REVERSE_V2) N(GATHER_ND) N(COS) N(ELU)
        N(REVERSE_SEQUENCE) N(QUANTIZE) N(ROUND) N(HARD_SWISH) N(SCATTER_ND) N(SELECT_V2) N(BATCH_MATMUL)
        N(CUMSUM) N(CONV_3D) N(GELU) N(SQUARED_DIFFERENCE)
#undef N
    default: return "?";
    }
}

static const char *op_text(void) { return op_names_for_test(C.code); }

/* build, load, run and compare the case */
/* The ops the riscv_mcu provider has kernels for: their cases also run on
 * a strict riscv_mcu session (the host run of the generated MCU code) and
 * must give the same expected values. */
static bool mcu_has_kernel(int code, bool int8)
{
    /* int8 only: the one-input ops riscv_mcu runs through a table */
    static const int lut_ops[] = {OP_RELU,  OP_TANH,  OP_LOGISTIC, OP_RELU6, OP_LEAKY_RELU, OP_HARD_SWISH,
                                  OP_ELU,   OP_NEG,   OP_GELU,     OP_ABS,   OP_CEIL,       OP_COS,
                                  OP_EXP,   OP_FLOOR, OP_LOG,      OP_ROUND, OP_SIN,        OP_SQUARE,
                                  OP_SQRT,  OP_RSQRT};
    if (int8 && (code == OP_DIV || code == OP_PRELU || code == OP_POW)) /* tflk_div_s8_run, tflk_prelu_s8, tflk_binary_s8f */
        return true;
    for (size_t i = 0; int8 && i < sizeof lut_ops / sizeof lut_ops[0]; i++)
        if (code == lut_ops[i])
            return true;
    /* fp32 only: tflk_unary.c (the int8 forms are tables); DIV (int8 DIV stays on cpu_ref), PRELU, POW */
    static const int f32_ops[] = {OP_RELU,  OP_TANH, OP_LOGISTIC, OP_RELU6, OP_LEAKY_RELU, OP_HARD_SWISH, OP_ELU,
                                  OP_NEG,   OP_GELU, OP_ABS,      OP_CEIL,  OP_COS,        OP_EXP,        OP_FLOOR,
                                  OP_LOG,   OP_ROUND, OP_SIN,     OP_SQUARE, OP_SQRT,      OP_RSQRT,      OP_DIV,
                                  OP_PRELU, OP_POW};
    for (size_t i = 0; !int8 && i < sizeof f32_ops / sizeof f32_ops[0]; i++)
        if (code == f32_ops[i])
            return true;
    /* data movement, comparisons, logical ops, MAXIMUM/MINIMUM, (de)quantization (mcu_ops.c), and mcu_shape.c's */
    static const int any_ops[] = {OP_SLICE, OP_STRIDED_SLICE, OP_SPLIT, OP_SPLIT_V, OP_UNPACK, OP_REVERSE_V2,
                                  OP_TILE, OP_DEPTH_TO_SPACE, OP_SPACE_TO_DEPTH, OP_PAD, OP_PADV2, OP_MIRROR_PAD,
                                  OP_CONCATENATION, OP_PACK, OP_GATHER, OP_GATHER_ND, OP_SCATTER_ND, OP_LOGICAL_NOT,
                                  OP_LOGICAL_AND, OP_LOGICAL_OR, OP_EQUAL, OP_NOT_EQUAL, OP_LESS, OP_LESS_EQUAL,
                                  OP_GREATER, OP_GREATER_EQUAL, OP_MAXIMUM, OP_MINIMUM, OP_QUANTIZE, OP_DEQUANTIZE,
                                  /* resize, casts, fills, selection (mcu_shape.c) */
                                  OP_RESIZE_BILINEAR, OP_RESIZE_NEAREST_NEIGHBOR, OP_CAST, OP_REVERSE_SEQUENCE, OP_FILL,
                                  OP_SHAPE, OP_SELECT, OP_SELECT_V2, OP_ONE_HOT,
                                  /* a data-dependent length: the values planned at their bound (tflk_unique.c) */
                                  OP_UNIQUE};
    for (size_t i = 0; i < sizeof any_ops / sizeof any_ops[0]; i++)
        if (code == any_ops[i])
            return true;
    /* the reductions and axis ops (mcu_reduce.c, tflk_reduce.c); ARG_MAX/ARG_MIN fp32 only */
    static const int red_ops[] = {OP_MEAN,   OP_SUM,     OP_REDUCE_MAX, OP_REDUCE_MIN,
                                  OP_REDUCE_PROD, OP_CUMSUM, OP_TOPK_V2, OP_L2_NORMALIZATION};
    for (size_t i = 0; i < sizeof red_ops / sizeof red_ops[0]; i++)
        if (code == red_ops[i])
            return true;
    if (!int8 && (code == OP_ARG_MAX || code == OP_ARG_MIN))
        return true;
    return code == OP_CONV_2D || code == OP_DEPTHWISE_CONV_2D || code == OP_FULLY_CONNECTED ||
           code == OP_MAX_POOL_2D || code == OP_AVERAGE_POOL_2D || code == OP_SOFTMAX || code == OP_RESHAPE ||
           code == OP_SQUEEZE || code == OP_EXPAND_DIMS || code == OP_ADD || code == OP_SUB || code == OP_MUL ||
           code == OP_TRANSPOSE || code == OP_LOG_SOFTMAX || code == OP_TRANSPOSE_CONV || code == OP_BATCH_MATMUL ||
           code == OP_CONV_3D;
}
static int n_mcu_run, n_mcu_declined, n_mcu_tflm;

/* Loads the model on `env`, feeds the runtime inputs, runs and compares
 * every output (`where` names the provider in messages). A refused load or
 * session is returned (the caller decides); run errors are failures unless
 * the case expects one. */
static sy_status *run_on(sy_env *env, const uint8_t *buf, size_t size, const char *where)
{
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = sy_model_load_buffer(env, buf, size, "model.tflite", NULL, &m);
    if (!st)
        st = sy_session_create(env, m, NULL, &s);
    if (st) {
        sy_model_release(m);
        return st;
    }
    int gi = 0;
    for (int i = 0; i < C.n_t && !st; i++) {
        ctensor *ct = &C.t[i];
        if (ct->is_output || ct->t.data)
            continue;
        sy_tensor t = {0};
        t.struct_size = sizeof t;
        t.dtype = sy_dt(ct->t.type);
        t.rank = ct->t.rank;
        for (int d = 0; d < t.rank; d++)
            t.dims[d] = ct->t.dims[d];
        t.data = (void *)ct->expect;
        t.nbytes = ct->t.nbytes;
        st = sy_session_set_input_by_index(s, (size_t)gi++, &t, SY_INPUT_COPY);
    }
    if (st) {
        CHECK(false, "%s on %s: set input %d: %s", C.name, where, gi - 1, sy_status_get_message(st));
        sy_status_free(st);
        goto done;
    }
    st = sy_session_run(s);
    if (C.reject_run) {
        msg_has(st, op_text(), C.reject_run);
        sy_status_free(st);
        goto done;
    }
    if (st) {
        CHECK(false, "%s on %s: run: %s", C.name, where, sy_status_get_message(st));
        sy_status_free(st);
        goto done;
    }
    for (int k = 0; k < C.n_out; k++) {
        const sy_tensor *o = NULL;
        st = sy_session_get_output(s, (size_t)k, &o);
        if (st) {
            CHECK(false, "%s on %s: output %d: %s", C.name, where, k, sy_status_get_message(st));
            sy_status_free(st);
            continue;
        }
        compare(k, o);
    }
done:
    sy_session_release(s);
    sy_model_release(m);
    return NULL;
}

/* build, load, run and compare the case */
static CASE_API void finish(void)
{
    n_cases++;
    int before = sy_test_failures_;
    bool int8 = false, uint8 = false;
    for (int i = 0; i < C.n_t; i++) {
        if (C.t[i].t.type == I8)
            int8 = true;
        if (C.t[i].t.type == TFLW_UINT8)
            uint8 = true; /* the MCU runs fp32 and int8 only (targets.md §5.4) */
    }
    size_t size = 0;
    uint8_t *buf = build(&size);
    REQUIRE(buf != NULL, "%s: build", C.name);
    sy_status *st;
    if (C.reject_load) {
        st = run_on(env_mcu, buf, size, "riscv_mcu");
        msg_has(st, op_text(), C.reject_load);
        sy_status_free(st);
    } else {
        st = run_on(env_ref, buf, size, "cpu_ref");
        if (C.reject_ref)
            msg_has(st, op_text(), C.reject_ref);
        else if (st)
            CHECK(false, "%s: load/session: %s", C.name, sy_status_get_message(st));
        sy_status_free(st);
        if (!C.reject_ref && !uint8 && mcu_has_kernel(C.code, int8)) {
            /* a node the seed's rules decline (int8 depth
             * multiplier > 1, ...) is counted, not run */
            st = run_on(env_mcu, buf, size, "riscv_mcu");
            if (st) {
                n_mcu_declined++;
                if (getenv("SY_TEST_VERBOSE"))
                    printf("     riscv_mcu declined: %s\n", sy_status_get_message(st));
                sy_status_free(st);
                /* rules = tflm accepts what TFLite Micro's kernels do */
                st = run_on(env_mcu_tflm, buf, size, "riscv_mcu (rules = tflm)");
                if (st)
                    CHECK(false, "%s: riscv_mcu with rules = tflm refused it: %s", C.name, sy_status_get_message(st));
                else
                    n_mcu_tflm++;
                sy_status_free(st);
            } else {
                n_mcu_run++;
            }
        }
    }
    free(buf);
    mark_covered(int8);
    bool pass = sy_test_failures_ == before;
    n_passed += pass;
    printf("%s %s\n", pass ? "ok  " : "FAIL", C.name);
}

/* ---- TFLite reference integer arithmetic (published formulas) ---------------- */

/* QuantizeMultiplier: m = q * 2^shift, q in [2^30, 2^31) */
static void quant_mult(double m, int32_t *qm, int *shift)
{
    if (m == 0) {
        *qm = 0;
        *shift = 0;
        return;
    }
    double f = frexp(m, shift);
    int64_t qf = (int64_t)llround(f * 2147483648.0);
    if (qf == 2147483648LL) {
        qf /= 2;
        ++*shift;
    }
    *qm = (int32_t)qf;
}
static int32_t srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN)
        return INT32_MAX;
    int64_t ab = (int64_t)a * b;
    int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / (1LL << 31));
}
static int32_t rdbpot(int32_t x, int e)
{
    int32_t mask = (int32_t)((1LL << e) - 1), rem = x & mask, thr = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (rem > thr ? 1 : 0);
}
static int32_t mbqm(int32_t x, double real_mult)
{
    int32_t qm;
    int shift;
    quant_mult(real_mult, &qm, &shift);
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return rdbpot(srdhm((int32_t)((int64_t)x * (1LL << left)), qm), right);
}
static int8_t sat8(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }
static int8_t quant8(double x, double s, int zp) { return sat8((int32_t)lround(x / s) + zp); }

/* ---- plain float / int8 references ------------------------------------------- */

static int64_t out_size(int same, int64_t in, int64_t k, int64_t s, int64_t d)
{
    int64_t eff = (k - 1) * d + 1;
    return same ? (in + s - 1) / s : (in - eff + s) / s;
}
static int64_t pad_before(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d)
{
    int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
    return total > 0 ? total / 2 : 0;
}

typedef struct convp {
    int n, h, w, c;     /* input NHWC */
    int kh, kw, oc;     /* filter: conv OHWI [oc,kh,kw,c]; depthwise [1,kh,kw,oc] */
    int sh, sw, dh, dw; /* strides, dilations */
    int same, act, depthwise;
} convp;

/* float conv / depthwise conv, output [n,oh,ow,oc] */
static void ref_conv_f(const convp *p, const float *x, const float *w, const float *b, float *y, int *oh_, int *ow_)
{
    int oh = (int)out_size(p->same, p->h, p->kh, p->sh, p->dh), ow = (int)out_size(p->same, p->w, p->kw, p->sw, p->dw);
    int pt = (int)pad_before(p->h, oh, p->kh, p->sh, p->dh), pl = (int)pad_before(p->w, ow, p->kw, p->sw, p->dw);
    int mult = p->depthwise ? p->oc / p->c : 1;
    for (int n = 0; n < p->n; n++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int o = 0; o < p->oc; o++) {
                    double acc = b ? b[o] : 0;
                    for (int ky = 0; ky < p->kh; ky++)
                        for (int kx = 0; kx < p->kw; kx++) {
                            int iy = oy * p->sh - pt + ky * p->dh, ix = ox * p->sw - pl + kx * p->dw;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                                continue;
                            const float *xp = x + (((size_t)n * p->h + iy) * p->w + ix) * p->c;
                            if (p->depthwise)
                                acc += (double)xp[o / mult] * w[((size_t)ky * p->kw + kx) * p->oc + o];
                            else
                                for (int c = 0; c < p->c; c++)
                                    acc += (double)xp[c] * w[(((size_t)o * p->kh + ky) * p->kw + kx) * p->c + c];
                        }
                    if (p->act == ACT_RELU && acc < 0)
                        acc = 0;
                    if (p->act == ACT_RELU6)
                        acc = acc < 0 ? 0 : acc > 6 ? 6 : acc;
                    y[(((size_t)n * oh + oy) * ow + ox) * p->oc + o] = (float)acc;
                }
    *oh_ = oh;
    *ow_ = ow;
}

/* int8 conv / depthwise: per-channel weight scales ws[oc] (zp 0), int32 bias */
static void ref_conv_q(const convp *p, const int8_t *x, float xs, int xz, const int8_t *w, const float *ws,
                       const int32_t *b, float ys, int yz, int8_t *y)
{
    int oh = (int)out_size(p->same, p->h, p->kh, p->sh, p->dh), ow = (int)out_size(p->same, p->w, p->kw, p->sw, p->dw);
    int pt = (int)pad_before(p->h, oh, p->kh, p->sh, p->dh), pl = (int)pad_before(p->w, ow, p->kw, p->sw, p->dw);
    int mult = p->depthwise ? p->oc / p->c : 1;
    int lo = -128, hi = 127;
    /* CalculateActivationRangeQuantized: [zp + round(0/s), zp + round(6/s)] */
    if (p->act == ACT_RELU || p->act == ACT_RELU6)
        lo = yz > lo ? yz : lo;
    if (p->act == ACT_RELU6 && yz + (int)lroundf(6.0f / ys) < hi)
        hi = yz + (int)lroundf(6.0f / ys);
    for (int n = 0; n < p->n; n++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++)
                for (int o = 0; o < p->oc; o++) {
                    int32_t acc = 0;
                    for (int ky = 0; ky < p->kh; ky++)
                        for (int kx = 0; kx < p->kw; kx++) {
                            int iy = oy * p->sh - pt + ky * p->dh, ix = ox * p->sw - pl + kx * p->dw;
                            if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                                continue;
                            const int8_t *xp = x + (((size_t)n * p->h + iy) * p->w + ix) * p->c;
                            if (p->depthwise)
                                acc += (xp[o / mult] - xz) * w[((size_t)ky * p->kw + kx) * p->oc + o];
                            else
                                for (int c = 0; c < p->c; c++)
                                    acc += (xp[c] - xz) * w[(((size_t)o * p->kh + ky) * p->kw + kx) * p->c + c];
                        }
                    if (b)
                        acc += b[o];
                    int32_t v = mbqm(acc, (double)xs * (double)ws[o] / (double)ys) + yz;
                    v = v < lo ? lo : v > hi ? hi : v;
                    y[(((size_t)n * oh + oy) * ow + ox) * p->oc + o] = (int8_t)v;
                }
}

static uint32_t rng_state = 12345;
static double rnd(void) /* uniform in [-1, 1) */
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}
static CASE_API void fill_f(float *p, int n, double scale)
{
    for (int i = 0; i < n; i++)
        p[i] = (float)(rnd() * scale);
}
static CASE_API void fill_i8(int8_t *p, int n, int lo, int hi)
{
    for (int i = 0; i < n; i++)
        p[i] = (int8_t)(lo + (int)((rnd() + 1) / 2 * (hi - lo + 1)) % (hi - lo + 1));
}

/* shapes as text */
static CASE_API const char *shp(char *buf, int a, int b, int c, int d)
{
    if (d > 0)
        snprintf(buf, 32, "%dx%dx%dx%d", a, b, c, d);
    else if (c > 0)
        snprintf(buf, 32, "%dx%dx%d", a, b, c);
    else
        snprintf(buf, 32, "%dx%d", a, b);
    return buf;
}

#include "test_tflite_ops_cases.inc"


/* .npy v1.0: magic, header length, the dict padded to 64 bytes */
static bool write_npy(const char *path, const char *descr, const char *shape, const void *data, size_t nbytes)
{
    char hdr[160];
    snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    size_t len = strlen(hdr), pad = (64 - (10 + len + 1) % 64) % 64;
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    uint16_t hl = (uint16_t)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f);
    fputc(hl >> 8, f);
    fwrite(hdr, 1, len, f);
    for (size_t i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    bool ok = fwrite(data, 1, nbytes, f) == nbytes;
    return fclose(f) == 0 && ok;
}

static bool write_file(const char *path, const uint8_t *b, size_t size)
{
    FILE *f = fopen(path, "wb");
    bool ok = b && f && fwrite(b, 1, size, f) == size;
    if (f)
        ok = fclose(f) == 0 && ok;
    return ok;
}

static const char *i8_sfx(bool i8) { return i8 ? "_i8" : "_f32"; }

/* serialize m into DIR/STEM SFX.tflite */
static bool write_tflite(const tflw_model *m, const char *dir, const char *stem, const char *sfx)
{
    size_t size = 0;
    uint8_t *b = tflw_build(m, &size);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s.tflite", dir, stem, sfx);
    bool ok = b && write_file(path, b, size);
    free(b);
    return ok;
}

/* DIR/STEM SFX.tflite: tensors ts, ops, one graph input gin and one output gout */
static bool write_chain(const char *dir, const char *stem, const char *sfx, const tflw_tensor *ts, int n_tensors,
                        const tflw_op *ops, int n_ops, int32_t gin, int32_t gout)
{
    tflw_model m = {.tensors = ts, .n_tensors = n_tensors, .ops = ops, .n_ops = n_ops, .inputs = &gin, .n_inputs = 1,
                    .outputs = &gout, .n_outputs = 1};
    return write_tflite(&m, dir, stem, sfx);
}

/* DIR/STEM SFX.npy: the int8 codes x8 (|i1) when i8, else the fp32 values xf (<f4) */
static bool write_input(const char *dir, const char *stem, const char *sfx, bool i8, const char *shape,
                        const int8_t *x8, size_t n8, const float *xf, size_t nf)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s.npy", dir, stem, sfx);
    return i8 ? write_npy(path, "|i1", shape, x8, n8) : write_npy(path, "<f4", shape, xf, nf);
}

/* --write-model DIR also writes bin_chain_i8.tflite and bin_chain_f32.tflite
 * (tests/mcu/test_mcu_lut.sh): x [1, 4, 4, 8] -> t1 = ADD(x, c) (a
 * broadcast constant [1, 8]) -> t2 = MUL(t1, x) (two activations) -> t3 = SUB(t2,
 * d [1, 4, 1, 1]) -> y = TRANSPOSE(t3, [0, 2, 1, 3]), with inputs x_i8.npy /
 * x_f32.npy */
static bool write_binary_model(const char *dir, bool i8)
{
    static float sc[6] = {0.05f, 0.02f, 0.07f, 0.1f, 0.03f, 0.12f};
    static const int32_t perm[4] = {0, 2, 1, 3};
    static int64_t zp[6] = {3, -7, 10, -20, 0, 5};
    static int8_t c8[8], d8[4], x8[128];
    static float cf[8], df[4], xf[128];
    for (int i = 0; i < 8; i++) {
        c8[i] = (int8_t)(i * 31 - 110);
        cf[i] = (float)(i - 4) * 0.25f;
    }
    for (int i = 0; i < 4; i++) {
        d8[i] = (int8_t)(i * 50 - 90);
        df[i] = (float)i * 0.5f - 0.75f;
    }
    for (int i = 0; i < 128; i++) {
        x8[i] = (int8_t)(i * 2 - 128);
        xf[i] = (float)(i % 17) * 0.125f - 1.0f;
    }
    /* tensors: 0 x, 1 c, 2 t1, 3 t2, 4 d, 5 y */
    tflw_tensor ts[8] = {
        {.name = "x", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "c", .rank = 2, .dims = {1, 8}, .data = i8 ? (const void *)c8 : (const void *)cf, .nbytes = i8 ? 8 : 32},
        {.name = "t1", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "t2", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "d", .rank = 4, .dims = {1, 4, 1, 1}, .data = i8 ? (const void *)d8 : (const void *)df,
         .nbytes = i8 ? 4 : 16},
        {.name = "t3", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "perm", .rank = 1, .dims = {4}, .data = perm, .nbytes = sizeof perm},
        {.name = "y", .rank = 4, .dims = {1, 4, 4, 8}},
    };
    for (int i = 0; i < 6; i++) {
        ts[i].type = i8 ? TFLW_INT8 : TFLW_FLOAT32;
        if (i8) {
            ts[i].n_quant = 1;
            ts[i].scales = &sc[i];
            ts[i].zero_points = &zp[i];
        }
    }
    ts[6].type = TFLW_INT32;
    ts[6].n_quant = 0;
    ts[7] = ts[5]; /* y: t3's type and quantization, transposed dims */
    ts[7].name = "y";
    ts[7].dims[1] = ts[5].dims[2], ts[7].dims[2] = ts[5].dims[1];
    static const int32_t i_add[2] = {0, 1}, o_add = 2, i_mul[2] = {2, 0}, o_mul = 3, i_sub[2] = {3, 4}, o_sub = 5,
                         i_tr[2] = {5, 6}, o_tr = 7;
    tflw_op ops[4] = {{.code = OP_ADD, .inputs = i_add, .n_inputs = 2, .outputs = &o_add, .n_outputs = 1},
                      {.code = OP_MUL, .inputs = i_mul, .n_inputs = 2, .outputs = &o_mul, .n_outputs = 1},
                      {.code = OP_SUB, .inputs = i_sub, .n_inputs = 2, .outputs = &o_sub, .n_outputs = 1},
                      {.code = OP_TRANSPOSE, .inputs = i_tr, .n_inputs = 2, .outputs = &o_tr, .n_outputs = 1}};
    bool ok = write_chain(dir, "bin_chain", i8_sfx(i8), ts, 8, ops, 4, 0, 7);
    return write_input(dir, "x", i8_sfx(i8), i8, "(1, 4, 4, 8)", x8, sizeof x8, xf, sizeof xf) && ok;
}

/* --write-model DIR also writes elem8_chain.tflite (tests/mcu/test_mcu_lut.sh,
 * input x_i8.npy [1, 4, 4, 8], real values >= 0): the int8 forms of POW and
 * PRELU (ops-mcu.md Table A #74, #53) that have no TFLite integer kernel or
 * one: t1 = POW(x, e) (a constant int8 exponent [8], one at 0.5, one below
 * 0: x = 0 gives inf, saturated) -> t2 = SUB(t1, 5.0) -> t3 = PRELU(t2, fp32
 * alpha [8]) -> y = PRELU(t3, int8 alpha [8]) (TFLite's integer PRELU, rules = tflm) */
static bool write_elem8_model(const char *dir)
{
    static float sc[8] = {0.05f, 0.01f, 0.1f, 0.05f, 0.1f, 0.08f, 0.01f, 0.06f};
    static int64_t zp[8] = {-128, 0, -128, 0, 0, 10, -5, -3};
    static const int8_t e8[8] = {50, 100, 127, -50, 30, 75, 0, 110}, c8[1] = {100};
    static const int8_t a8[8] = {30, -40, 100, -128, 5, 60, 127, -90};
    static const float af[8] = {0.25f, -0.5f, 0.1f, 1.5f, 0.0f, 0.75f, -1.0f, 0.3f};
    /* tensors: 0 x, 1 e, 2 t1, 3 c, 4 t2, 5 t3, 6 alpha8, 7 y, 8 alpha (fp32) */
    tflw_tensor ts[9] = {
        {.name = "x", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "e", .rank = 1, .dims = {8}, .data = e8, .nbytes = 8},
        {.name = "t1", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "c", .rank = 1, .dims = {1}, .data = c8, .nbytes = 1},
        {.name = "t2", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "t3", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "alpha8", .rank = 1, .dims = {8}, .data = a8, .nbytes = 8},
        {.name = "y", .rank = 4, .dims = {1, 4, 4, 8}},
        {.name = "alpha", .rank = 1, .dims = {8}, .data = af, .nbytes = sizeof af, .type = TFLW_FLOAT32},
    };
    for (int i = 0; i < 8; i++) {
        ts[i].type = TFLW_INT8;
        ts[i].n_quant = 1;
        ts[i].scales = &sc[i];
        ts[i].zero_points = &zp[i];
    }
    static const int32_t i_pow[2] = {0, 1}, o_pow = 2, i_sub[2] = {2, 3}, o_sub = 4, i_p1[2] = {4, 8}, o_p1 = 5,
                         i_p2[2] = {5, 6}, o_p2 = 7;
    tflw_op ops[4] = {{.code = OP_POW, .inputs = i_pow, .n_inputs = 2, .outputs = &o_pow, .n_outputs = 1},
                      {.code = OP_SUB, .inputs = i_sub, .n_inputs = 2, .outputs = &o_sub, .n_outputs = 1},
                      {.code = OP_PRELU, .inputs = i_p1, .n_inputs = 2, .outputs = &o_p1, .n_outputs = 1},
                      {.code = OP_PRELU, .inputs = i_p2, .n_inputs = 2, .outputs = &o_p2, .n_outputs = 1}};
    bool ok = write_chain(dir, "elem8_chain", "", ts, 9, ops, 4, 0, 7);
    return ok;
}

/* --write-model DIR also writes move_chain_i8.tflite / move_chain_f32.tflite
 * (tests/mcu/test_mcu_lut.sh, input x_i8.npy / x_f32.npy [1, 4, 4, 8]): the
 * data-movement kernels riscv_mcu runs (mcu_ops.c) in a chain whose every
 * output the next op reads:
 *   PAD [[0,0],[1,0],[0,1],[0,0]] -> [1,5,5,8]; STRIDED_SLICE step 2 on dim 1
 *   -> [1,3,5,8]; SPLIT dim 3 in 2 -> a, b [1,3,5,4]; CONCATENATION(b, a) dim 2
 *   -> [1,3,10,4]; DEPTH_TO_SPACE 2 -> [1,6,20,1]; REVERSE_V2 dim 1; RESHAPE
 *   [6,20]; GATHER [[3,0,5]] dim 0 -> [1,3,20] (the seed's 2-4D indices);
 *   MAXIMUM(., c [1,1,20]); TILE [1,1,2] -> [1,3,40]; then int8: DEQUANTIZE
 *   -> fp32 y; fp32: ABS, SQRT -> y
 * and idx_chain.tflite (input xi.npy, fp32 [4, 3]): GATHER_ND [[2],[0]] ->
 * [2,3]; SCATTER_ND([[1],[3]], ., [4,3]) -> [4,3]; GREATER(., x) -> bool;
 * LOGICAL_NOT -> bool y. All exact operations: cpu_ref's bytes. */
static bool write_move_model(const char *dir, bool i8)
{
    static const int32_t pads[8] = {0, 0, 1, 0, 0, 1, 0, 0}, ss_b[4] = {0, 0, 0, 0}, ss_e[4] = {1, 5, 5, 8},
                         ss_s[4] = {1, 2, 1, 1}, axis3 = 3, rev1 = 1, gidx[3] = {3, 0, 5}, mult[3] = {1, 1, 2}, rshape[2] = {6, 20};
    static float sc = 0.05f, cf[20];
    static int64_t zp = 3;
    static int8_t c8[20], x8[128];
    static float xf[128];
    for (int i = 0; i < 20; i++) {
        c8[i] = (int8_t)(i * 9 - 90);
        cf[i] = (float)(i - 10) * 0.1875f;
    }
    for (int i = 0; i < 128; i++) {
        x8[i] = (int8_t)(i * 2 - 128);
        xf[i] = (float)(i % 23) * 0.25f - 2.5f;
    }
    enum { X, PADS, T1, SSB, SSE, SSS, T2, AX, TA, TB, T3, T4, REV, T5, RS, T5B, GI, T6, C, T7, MULT, T8, T9, Y, NT };
    tflw_tensor ts[NT];
    memset(ts, 0, sizeof ts);
#define TT(i, nm, r, ...) ts[i] = (tflw_tensor){.name = nm, .rank = r, .dims = {__VA_ARGS__}}
    TT(X, "x", 4, 1, 4, 4, 8);
    TT(T1, "t1", 4, 1, 5, 5, 8);
    TT(T2, "t2", 4, 1, 3, 5, 8);
    TT(TA, "ta", 4, 1, 3, 5, 4);
    TT(TB, "tb", 4, 1, 3, 5, 4);
    TT(T3, "t3", 4, 1, 3, 10, 4);
    TT(T4, "t4", 4, 1, 6, 20, 1);
    TT(T5, "t5", 4, 1, 6, 20, 1);
    TT(T5B, "t5b", 2, 6, 20);
    TT(T6, "t6", 3, 1, 3, 20);
    TT(C, "c", 3, 1, 1, 20);
    TT(T7, "t7", 3, 1, 3, 20);
    TT(T8, "t8", 3, 1, 3, 40);
    TT(T9, "t9", 3, 1, 3, 40);
    TT(Y, "y", 3, 1, 3, 40);
#undef TT
    for (int i = 0; i < NT; i++) {
        ts[i].type = i8 ? TFLW_INT8 : TFLW_FLOAT32;
        if (i8) {
            ts[i].n_quant = 1;
            ts[i].scales = &sc;
            ts[i].zero_points = &zp;
        }
    }
    const struct {
        int i;
        const char *nm;
        int rank;
        int32_t d0, d1;
        const void *data;
        size_t nbytes;
    } consts[] = {{PADS, "pads", 2, 4, 2, pads, sizeof pads}, {SSB, "ss_b", 1, 4, 0, ss_b, sizeof ss_b},
                  {SSE, "ss_e", 1, 4, 0, ss_e, sizeof ss_e},  {SSS, "ss_s", 1, 4, 0, ss_s, sizeof ss_s},
                  {AX, "axis", 0, 0, 0, &axis3, 4},         {REV, "rev", 1, 1, 0, &rev1, 4},
                  {GI, "gidx", 2, 1, 3, gidx, sizeof gidx}, {MULT, "mult", 1, 3, 0, mult, sizeof mult},
                  {RS, "rshape", 1, 2, 0, rshape, sizeof rshape}};
    for (size_t k = 0; k < sizeof consts / sizeof consts[0]; k++)
        ts[consts[k].i] = (tflw_tensor){.name = consts[k].nm, .type = TFLW_INT32, .rank = consts[k].rank,
                                        .dims = {consts[k].d0, consts[k].d1}, .data = consts[k].data,
                                        .nbytes = consts[k].nbytes};
    ts[C].data = i8 ? (const void *)c8 : (const void *)cf;
    ts[C].nbytes = i8 ? sizeof c8 : sizeof cf;
    if (i8) { /* DEQUANTIZE: y is fp32 and t9 unused */
        ts[Y].type = TFLW_FLOAT32;
        ts[Y].n_quant = 0;
    }
    static const int32_t i_pad[2] = {X, PADS}, o_pad = T1, i_ss[4] = {T1, SSB, SSE, SSS}, o_ss = T2,
                         i_sp[2] = {AX, T2}, o_sp[2] = {TA, TB}, i_cat[2] = {TB, TA}, o_cat = T3, i_d2s = T3,
                         o_d2s = T4, i_rev[2] = {T4, REV}, o_rev = T5, i_rs[2] = {T5, RS}, o_rs = T5B, i_g[2] = {T5B, GI}, o_g = T6, i_mx[2] = {T6, C},
                         o_mx = T7, i_tile[2] = {T7, MULT}, o_tile = T8, i_dq = T8, o_y = Y, i_abs = T8, o_abs = T9,
                         i_sqrt = T9;
    static const tflw_opt o_split[] = {{0, TFLW_OPT_I32, 2, 0, NULL, 0}}, o_cat2[] = {{0, TFLW_OPT_I32, 2, 0, NULL, 0}},
                          o_bs[] = {{0, TFLW_OPT_I32, 2, 0, NULL, 0}}, o_gax[] = {{0, TFLW_OPT_I32, 0, 0, NULL, 0}};
    tflw_op ops[14];
    int nops = 0;
    ops[nops++] = (tflw_op){.code = OP_PAD, .inputs = i_pad, .n_inputs = 2, .outputs = &o_pad, .n_outputs = 1};
    ops[nops++] = (tflw_op){.code = OP_STRIDED_SLICE, .inputs = i_ss, .n_inputs = 4, .outputs = &o_ss, .n_outputs = 1};
    ops[nops++] = (tflw_op){.code = OP_SPLIT, .inputs = i_sp, .n_inputs = 2, .outputs = o_sp, .n_outputs = 2,
                            .options_type = BO_SPLIT, .opts = o_split, .n_opts = 1};
    ops[nops++] = (tflw_op){.code = OP_CONCATENATION, .inputs = i_cat, .n_inputs = 2, .outputs = &o_cat,
                            .n_outputs = 1, .options_type = BO_CONCAT, .opts = o_cat2, .n_opts = 1};
    ops[nops++] = (tflw_op){.code = OP_DEPTH_TO_SPACE, .inputs = &i_d2s, .n_inputs = 1, .outputs = &o_d2s,
                            .n_outputs = 1, .options_type = BO_DEPTH_TO_SPACE, .opts = o_bs, .n_opts = 1};
    ops[nops++] = (tflw_op){.code = OP_REVERSE_V2, .inputs = i_rev, .n_inputs = 2, .outputs = &o_rev, .n_outputs = 1};
    ops[nops++] = (tflw_op){.code = OP_RESHAPE, .inputs = i_rs, .n_inputs = 2, .outputs = &o_rs, .n_outputs = 1};
    ops[nops++] = (tflw_op){.code = OP_GATHER, .inputs = i_g, .n_inputs = 2, .outputs = &o_g, .n_outputs = 1,
                            .options_type = BO_GATHER, .opts = o_gax, .n_opts = 1};
    ops[nops++] = (tflw_op){.code = OP_MAXIMUM, .inputs = i_mx, .n_inputs = 2, .outputs = &o_mx, .n_outputs = 1};
    ops[nops++] = (tflw_op){.code = OP_TILE, .inputs = i_tile, .n_inputs = 2, .outputs = &o_tile, .n_outputs = 1};
    if (i8) {
        ops[nops++] = (tflw_op){.code = OP_DEQUANTIZE, .inputs = &i_dq, .n_inputs = 1, .outputs = &o_y, .n_outputs = 1};
    } else {
        ops[nops++] = (tflw_op){.code = OP_ABS, .inputs = &i_abs, .n_inputs = 1, .outputs = &o_abs, .n_outputs = 1};
        ops[nops++] = (tflw_op){.code = OP_SQRT, .inputs = &i_sqrt, .n_inputs = 1, .outputs = &o_y, .n_outputs = 1};
    }
    bool ok = write_chain(dir, "move_chain", i8_sfx(i8), ts, NT, ops, nops, X, Y);
    (void)x8;
    (void)xf;
    return ok;
}

/* --write-model DIR also writes shape_chain_f32.tflite / shape_chain_i8.tflite
 * (tests/mcu/test_mcu_lut.sh, input x_f32.npy / x_i8.npy [1, 4, 4, 8]): the
 * resize, cast and selection kernels riscv_mcu runs (mcu_shape.c):
 *   RESIZE_BILINEAR half_pixel_centers to [1,6,5,8]; RESIZE_NEAREST_NEIGHBOR
 *   align_corners to [1,3,3,8]; REVERSE_SEQUENCE lengths [2] (seq_dim 1,
 *   batch_dim 0); then fp32: GREATER(., 0) -> bool; SELECT_V2(bool, ., -1.5);
 *   CAST to int32; ONE_HOT depth 3 (-1 and 3 give all-off rows) -> y
 *   [1,3,3,8,3]; int8: CAST to fp32 (the codes' values) -> y.
 * cpu_ref runs the same resize file (tflk_resize.c); the rest are exact. */
static bool write_shape_model(const char *dir, bool i8)
{
    static const int32_t sz1[2] = {6, 5}, sz2[2] = {3, 3}, lens[1] = {2}, depth = 3;
    static const float zero = 0.0f, neg = -1.5f, on = 1.0f, off = 0.0f;
    static float sc = 0.05f;
    static int64_t zp = 3;
    enum { X, SZ1, T1, SZ2, T2, LEN, T3, ZERO, C, NEG, T4, T5, DEPTH, ON, OFF, Y, NT };
    tflw_tensor ts[NT];
    memset(ts, 0, sizeof ts);
    int dt = i8 ? TFLW_INT8 : TFLW_FLOAT32;
#define TT(i, nm, ty, r, ...) ts[i] = (tflw_tensor){.name = nm, .type = ty, .rank = r, .dims = {__VA_ARGS__}}
    TT(X, "x", dt, 4, 1, 4, 4, 8);
    TT(T1, "t1", dt, 4, 1, 6, 5, 8);
    TT(T2, "t2", dt, 4, 1, 3, 3, 8);
    TT(T3, "t3", dt, 4, 1, 3, 3, 8);
    TT(C, "c", TFLW_BOOL, 4, 1, 3, 3, 8);
    TT(T4, "t4", TFLW_FLOAT32, 4, 1, 3, 3, 8);
    TT(T5, "t5", TFLW_INT32, 4, 1, 3, 3, 8);
    if (i8)
        TT(Y, "y", TFLW_FLOAT32, 4, 1, 3, 3, 8);
    else
        TT(Y, "y", TFLW_FLOAT32, 5, 1, 3, 3, 8, 3);
#undef TT
    for (int i = X; i <= T3 && i8; i++)
        if (ts[i].name) {
            ts[i].n_quant = 1;
            ts[i].scales = &sc;
            ts[i].zero_points = &zp;
        }
    ts[SZ1] = (tflw_tensor){.name = "sz1", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = sz1, .nbytes = 8};
    ts[SZ2] = (tflw_tensor){.name = "sz2", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = sz2, .nbytes = 8};
    ts[LEN] = (tflw_tensor){.name = "len", .type = TFLW_INT32, .rank = 1, .dims = {1}, .data = lens, .nbytes = 4};
    ts[ZERO] = (tflw_tensor){.name = "zero", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 1, 1, 1}, .data = &zero, .nbytes = 4};
    ts[NEG] = (tflw_tensor){.name = "neg", .type = TFLW_FLOAT32, .rank = 4, .dims = {1, 1, 1, 1}, .data = &neg, .nbytes = 4};
    ts[DEPTH] = (tflw_tensor){.name = "depth", .type = TFLW_INT32, .rank = 0, .data = &depth, .nbytes = 4};
    ts[ON] = (tflw_tensor){.name = "on", .type = TFLW_FLOAT32, .rank = 0, .data = &on, .nbytes = 4};
    ts[OFF] = (tflw_tensor){.name = "off", .type = TFLW_FLOAT32, .rank = 0, .data = &off, .nbytes = 4};
    static const int32_t i_rb[2] = {X, SZ1}, o_rb = T1, i_rn[2] = {T1, SZ2}, o_rn = T2, i_rs[2] = {T2, LEN}, o_rs = T3,
                         i_gt[2] = {T3, ZERO}, o_gt = C, i_sel[3] = {C, T3, NEG}, o_sel = T4, i_c1 = T4, o_c1 = T5,
                         i_oh[4] = {T5, DEPTH, ON, OFF}, o_y = Y, i_c8 = T3;
    static const tflw_opt o_rbl[] = {{3, TFLW_OPT_U8, 1, 0, NULL, 0}}, o_rnn[] = {{0, TFLW_OPT_U8, 1, 0, NULL, 0}},
                          o_rsq[] = {{0, TFLW_OPT_I32, 1, 0, NULL, 0}, {1, TFLW_OPT_I32, 0, 0, NULL, 0}},
                          o_ohx[] = {{0, TFLW_OPT_I32, -1, 0, NULL, 0}};
    tflw_op ops[8];
    int nops = 0;
    ops[nops++] = (tflw_op){.code = OP_RESIZE_BILINEAR, .inputs = i_rb, .n_inputs = 2, .outputs = &o_rb, .n_outputs = 1,
                            .options_type = BO_RESIZE_BILINEAR, .opts = o_rbl, .n_opts = 1};
    ops[nops++] = (tflw_op){.code = OP_RESIZE_NEAREST_NEIGHBOR, .inputs = i_rn, .n_inputs = 2, .outputs = &o_rn,
                            .n_outputs = 1, .options_type = BO_RESIZE_NN, .opts = o_rnn, .n_opts = 1};
    ops[nops++] = (tflw_op){.code = OP_REVERSE_SEQUENCE, .inputs = i_rs, .n_inputs = 2, .outputs = &o_rs,
                            .n_outputs = 1, .options_type = BO_REVSEQ, .opts = o_rsq, .n_opts = 2};
    if (i8) {
        ops[nops++] = (tflw_op){.code = OP_CAST, .inputs = &i_c8, .n_inputs = 1, .outputs = &o_y, .n_outputs = 1};
    } else {
        ops[nops++] = (tflw_op){.code = OP_GREATER, .inputs = i_gt, .n_inputs = 2, .outputs = &o_gt, .n_outputs = 1};
        ops[nops++] = (tflw_op){.code = OP_SELECT_V2, .inputs = i_sel, .n_inputs = 3, .outputs = &o_sel, .n_outputs = 1};
        ops[nops++] = (tflw_op){.code = OP_CAST, .inputs = &i_c1, .n_inputs = 1, .outputs = &o_c1, .n_outputs = 1};
        ops[nops++] = (tflw_op){.code = OP_ONE_HOT, .inputs = i_oh, .n_inputs = 4, .outputs = &o_y, .n_outputs = 1,
                                .options_type = BO_ONE_HOT, .opts = o_ohx, .n_opts = 1};
    }
    bool ok = write_chain(dir, "shape_chain", i8_sfx(i8), ts, NT, ops, nops, X, Y);
    return ok;
}

static bool write_idx_model(const char *dir)
{
    static const int32_t gi[2] = {2, 0}, si[2] = {1, 3}, shape[2] = {4, 3};
    static float x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)((i * 5) % 7) - 3.0f;
    enum { X, GI, T1, SI, SH, T2, T3, Y, NT };
    tflw_tensor ts[NT] = {
        {.name = "x", .type = TFLW_FLOAT32, .rank = 2, .dims = {4, 3}},
        {.name = "gi", .type = TFLW_INT32, .rank = 2, .dims = {2, 1}, .data = gi, .nbytes = sizeof gi},
        {.name = "t1", .type = TFLW_FLOAT32, .rank = 2, .dims = {2, 3}},
        {.name = "si", .type = TFLW_INT32, .rank = 2, .dims = {2, 1}, .data = si, .nbytes = sizeof si},
        {.name = "shape", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = shape, .nbytes = sizeof shape},
        {.name = "t2", .type = TFLW_FLOAT32, .rank = 2, .dims = {4, 3}},
        {.name = "t3", .type = TFLW_BOOL, .rank = 2, .dims = {4, 3}},
        {.name = "y", .type = TFLW_BOOL, .rank = 2, .dims = {4, 3}},
    };
    static const int32_t i_g[2] = {X, GI}, o_g = T1, i_s[3] = {SI, T1, SH}, o_s = T2, i_gt[2] = {T2, X}, o_gt = T3,
                         i_not = T3, o_not = Y;
    tflw_op ops[4] = {{.code = OP_GATHER_ND, .inputs = i_g, .n_inputs = 2, .outputs = &o_g, .n_outputs = 1},
                      {.code = OP_SCATTER_ND, .inputs = i_s, .n_inputs = 3, .outputs = &o_s, .n_outputs = 1},
                      {.code = OP_GREATER, .inputs = i_gt, .n_inputs = 2, .outputs = &o_gt, .n_outputs = 1},
                      {.code = OP_LOGICAL_NOT, .inputs = &i_not, .n_inputs = 1, .outputs = &o_not, .n_outputs = 1}};
    bool ok = write_chain(dir, "idx_chain", "", ts, NT, ops, 4, X, Y);
    return write_input(dir, "xi", "", false, "(4, 3)", NULL, 0, x, sizeof x) && ok;
}

/* --write-model DIR also writes red_chain_i8.tflite / red_chain_f32.tflite
 * (tests/mcu/test_mcu_lut.sh, input xr_i8.npy / xr_f32.npy [2, 4, 6]): the
 * reductions riscv_mcu runs (mcu_reduce.c, tflk_reduce.c) in a chain:
 *   t1 = CUMSUM(x, axis 2, reverse); t2 = L2_NORMALIZATION(t1);
 *   t3, t3i = TOPK_V2(t2, k 3); t4 = REDUCE_PROD(t3, axes [2], keep_dims);
 *   y0 = SUM(t4, axes [1], keep_dims) [2, 1, 1];
 *   y1 = MEAN(t2, axes [1]) [2, 6]; y2 = REDUCE_MIN(t1, axes [2]) [2, 4]
 *   (int8: another quantization, so through the real values);
 *   y3 = REDUCE_MAX(t3, axes [1, 2]) [2]; fp32 also y4 = ARG_MAX(t2, 2) [2, 4]
 *   and y5 = ARG_MIN(t1, 1) [2, 6] (int32). */
static bool write_red_model(const char *dir, bool i8)
{
    static const int32_t ax2 = 2, ax1 = 1, k3 = 3, ax12[2] = {1, 2};
    enum { X, T1, T2, T3, T3I, T4, Y0, Y1, Y2, Y3, Y4, Y5, A2, A1, K, A12, NT };
    static const struct {
        float s;
        int64_t z;
    } qp[NT] = {{0.05f, 3}, {0.25f, -5}, {1.0f / 128, 0}, {1.0f / 128, 0}, {0, 0},     {1.0f / 128, 0},
                {0.02f, 0}, {0.01f, 0},  {0.1f, 1},       {1.0f / 128, 0}, {0, 0},     {0, 0}};
    static float sc[NT];
    static int64_t zp[NT];
    tflw_tensor ts[NT];
    memset(ts, 0, sizeof ts);
#define TT(i, nm, r, ...) ts[i] = (tflw_tensor){.name = nm, .rank = r, .dims = {__VA_ARGS__}}
    TT(X, "x", 3, 2, 4, 6);
    TT(T1, "t1", 3, 2, 4, 6);
    TT(T2, "t2", 3, 2, 4, 6);
    TT(T3, "t3", 3, 2, 4, 3);
    TT(T3I, "t3i", 3, 2, 4, 3);
    TT(T4, "t4", 3, 2, 4, 1);
    TT(Y0, "y0", 3, 2, 1, 1);
    TT(Y1, "y1", 2, 2, 6);
    TT(Y2, "y2", 2, 2, 4);
    TT(Y3, "y3", 1, 2);
    TT(Y4, "y4", 2, 2, 4);
    TT(Y5, "y5", 2, 2, 6);
#undef TT
    for (int i = 0; i <= Y5; i++) {
        ts[i].type = i == T3I || i == Y4 || i == Y5 ? TFLW_INT32 : i8 ? TFLW_INT8 : TFLW_FLOAT32;
        if (i8 && ts[i].type == TFLW_INT8) {
            sc[i] = qp[i].s;
            zp[i] = qp[i].z;
            ts[i].n_quant = 1;
            ts[i].scales = &sc[i];
            ts[i].zero_points = &zp[i];
        }
    }
    ts[A2] = (tflw_tensor){.name = "a2", .type = TFLW_INT32, .rank = 0, .data = &ax2, .nbytes = 4};
    ts[A1] = (tflw_tensor){.name = "a1", .type = TFLW_INT32, .rank = 1, .dims = {1}, .data = &ax1, .nbytes = 4};
    ts[K] = (tflw_tensor){.name = "k", .type = TFLW_INT32, .rank = 0, .data = &k3, .nbytes = 4};
    ts[A12] = (tflw_tensor){.name = "a12", .type = TFLW_INT32, .rank = 1, .dims = {2}, .data = ax12, .nbytes = 8};
    static const int32_t i_cs[2] = {X, A2}, o_cs = T1, i_l2 = T1, o_l2 = T2, i_tk[2] = {T2, K}, o_tk[2] = {T3, T3I},
                         i_pr[2] = {T3, A2}, o_pr = T4, i_su[2] = {T4, A1}, o_su = Y0, i_me[2] = {T2, A1}, o_me = Y1,
                         i_mi[2] = {T1, A2}, o_mi = Y2, i_mx[2] = {T3, A12}, o_mx = Y3, i_am[2] = {T2, A2}, o_am = Y4,
                         i_an[2] = {T1, A1}, o_an = Y5;
    static const tflw_opt o_rev[] = {{0, TFLW_OPT_U8, 0, 0, NULL, 0}, {1, TFLW_OPT_U8, 1, 0, NULL, 0}},
                          o_keep[] = {{0, TFLW_OPT_U8, 1, 0, NULL, 0}}, o_drop[] = {{0, TFLW_OPT_U8, 0, 0, NULL, 0}},
                          o_i32[] = {{0, TFLW_OPT_U8, TFLW_INT32, 0, NULL, 0}};
    tflw_op ops[10];
    int nops = 0;
#define OP1(c, in, nin, out, nout, bo, o, no)                                                                      \
    ops[nops++] = (tflw_op){.code = c, .inputs = in, .n_inputs = nin, .outputs = out, .n_outputs = nout,           \
                            .options_type = bo, .opts = o, .n_opts = no}
    OP1(OP_CUMSUM, i_cs, 2, &o_cs, 1, BO_CUMSUM, o_rev, 2);
    OP1(OP_L2_NORMALIZATION, &i_l2, 1, &o_l2, 1, 0, NULL, 0);
    OP1(OP_TOPK_V2, i_tk, 2, o_tk, 2, 0, NULL, 0);
    OP1(OP_REDUCE_PROD, i_pr, 2, &o_pr, 1, BO_REDUCER, o_keep, 1);
    OP1(OP_SUM, i_su, 2, &o_su, 1, BO_REDUCER, o_keep, 1);
    OP1(OP_MEAN, i_me, 2, &o_me, 1, BO_REDUCER, o_drop, 1);
    OP1(OP_REDUCE_MIN, i_mi, 2, &o_mi, 1, BO_REDUCER, o_drop, 1);
    OP1(OP_REDUCE_MAX, i_mx, 2, &o_mx, 1, BO_REDUCER, o_drop, 1);
    if (!i8) {
        OP1(OP_ARG_MAX, i_am, 2, &o_am, 1, BO_ARGMAX, o_i32, 1);
        OP1(OP_ARG_MIN, i_an, 2, &o_an, 1, BO_ARGMIN, o_i32, 1);
    }
#undef OP1
    static const int32_t gouts[6] = {Y0, Y1, Y2, Y3, Y4, Y5};
    int32_t gin = X;
    tflw_model m = {.tensors = ts, .n_tensors = NT, .ops = ops, .n_ops = nops, .inputs = &gin, .n_inputs = 1,
                    .outputs = gouts, .n_outputs = i8 ? 4 : 6};
    bool ok = write_tflite(&m, dir, "red_chain", i8_sfx(i8));
    /* the input: int8 codes over the whole range, fp32 values with ties and signs */
    static int8_t x8[48];
    static float xf[48];
    for (int i = 0; i < 48; i++) {
        x8[i] = (int8_t)((i * 37) % 256 - 128);
        xf[i] = (float)((i * 7) % 13 - 6) * 0.375f;
    }
    return write_input(dir, "xr", i8_sfx(i8), i8, "(2, 4, 6)", x8, sizeof x8, xf, sizeof xf) && ok;
}

/* --write-model (tests/mcu/test_mcu_lut.sh): TRANSPOSE_CONV (SAME, stride
 * 2, bias; int8 with per-channel filter scales) into BATCH_MATMUL with a
 * constant of the same batch dims, the kernels of mcu_nn.c:
 * DIR/nn_chain_{i8,f32}.tflite, x [1, 3, 3, 2] in DIR/xn_{i8,f32}.npy */
static bool write_nn_model(const char *dir, bool i8)
{
    static const int32_t oshape[4] = {1, 6, 6, 3};
    static int8_t w8[54], c8[72], x8[18];
    static float wf[54], cf[72], xf[18], bf[3];
    static int32_t b32[3];
    static float wsc[3] = {0.011f, 0.02f, 0.016f}, bsc[3], sc_x = 0.05f, sc_t = 0.08f, sc_c = 0.03f, sc_y = 0.25f;
    static int64_t wzp[3] = {0, 0, 0}, bzp[3] = {0, 0, 0}, zp_x = 3, zp_t = -4, zp_c = 2, zp_y = 1;
    for (int i = 0; i < 54; i++) {
        w8[i] = (int8_t)((i * 37) % 255 - 127);
        wf[i] = (float)((i * 7) % 13 - 6) * 0.0625f;
    }
    for (int i = 0; i < 72; i++) {
        c8[i] = (int8_t)((i * 53) % 256 - 128);
        cf[i] = (float)((i * 5) % 11 - 5) * 0.125f;
    }
    for (int i = 0; i < 18; i++) {
        x8[i] = (int8_t)(i * 14 - 120);
        xf[i] = (float)(i % 7) * 0.25f - 0.75f;
    }
    for (int c = 0; c < 3; c++) {
        b32[c] = (c - 1) * 700;
        bf[c] = (float)(c - 1) * 0.5f;
        bsc[c] = sc_x * wsc[c];
    }
    const int ty = i8 ? TFLW_INT8 : TFLW_FLOAT32;
    tflw_tensor ts[7] = {
        {.name = "oshape", .type = TFLW_INT32, .rank = 1, .dims = {4}, .data = oshape, .nbytes = sizeof oshape},
        {.name = "filter", .type = ty, .rank = 4, .dims = {3, 3, 3, 2}, .data = i8 ? (const void *)w8 : (const void *)wf,
         .nbytes = i8 ? sizeof w8 : sizeof wf},
        {.name = "x", .type = ty, .rank = 4, .dims = {1, 3, 3, 2}},
        {.name = "bias", .type = i8 ? TFLW_INT32 : TFLW_FLOAT32, .rank = 1, .dims = {3},
         .data = i8 ? (const void *)b32 : (const void *)bf, .nbytes = i8 ? sizeof b32 : sizeof bf},
        {.name = "t1", .type = ty, .rank = 4, .dims = {1, 6, 6, 3}},
        {.name = "c", .type = ty, .rank = 4, .dims = {1, 6, 3, 4}, .data = i8 ? (const void *)c8 : (const void *)cf,
         .nbytes = i8 ? sizeof c8 : sizeof cf},
        {.name = "y", .type = ty, .rank = 4, .dims = {1, 6, 6, 4}},
    };
    if (i8) {
        ts[1].n_quant = 3, ts[1].scales = wsc, ts[1].zero_points = wzp, ts[1].quant_dim = 0;
        ts[3].n_quant = 3, ts[3].scales = bsc, ts[3].zero_points = bzp, ts[3].quant_dim = 0;
        const float *sc[4] = {&sc_x, &sc_t, &sc_c, &sc_y};
        const int64_t *zp[4] = {&zp_x, &zp_t, &zp_c, &zp_y};
        const int at[4] = {2, 4, 5, 6};
        for (int k = 0; k < 4; k++)
            ts[at[k]].n_quant = 1, ts[at[k]].scales = sc[k], ts[at[k]].zero_points = zp[k];
    }
    static const int32_t i_tc[4] = {0, 1, 2, 3}, o_tc = 4, i_bmm[2] = {4, 5}, o_bmm = 6;
    static const tflw_opt tc_opts[3] = {{0, TFLW_OPT_U8, 0 /* SAME */, 0, NULL, 0}, {1, TFLW_OPT_I32, 2, 0, NULL, 0},
                                        {2, TFLW_OPT_I32, 2, 0, NULL, 0}};
    tflw_op ops[2] = {{.code = OP_TRANSPOSE_CONV, .inputs = i_tc, .n_inputs = 4, .outputs = &o_tc, .n_outputs = 1,
                       .options_type = BO_TCONV, .opts = tc_opts, .n_opts = 3},
                      {.code = OP_BATCH_MATMUL, .inputs = i_bmm, .n_inputs = 2, .outputs = &o_bmm, .n_outputs = 1,
                       .options_type = BO_BMM}};
    bool ok = write_chain(dir, "nn_chain", i8_sfx(i8), ts, 7, ops, 2, 2, 6);
    return write_input(dir, "xn", i8_sfx(i8), i8, "(1, 3, 3, 2)", x8, sizeof x8, xf, sizeof xf) && ok;
}

/* --write-model (tests/mcu/test_mcu_lut.sh): one int8 CONV_3D (SAME, strides
 * 1/2/1, per-channel filter scales along axis 4, int32 bias: the FULL_QUANT
 * form of ops-mcu.md Table A #2) for mcu_nn.c's MK_CONV3D_S8:
 * DIR/conv3d_i8.tflite, x [1, 3, 4, 4, 2] in DIR/xc_i8.npy */
static bool write_conv3d_model(const char *dir)
{
    enum { OC = 4, NW = 2 * 3 * 3 * 2 * OC, NX = 3 * 4 * 4 * 2 };
    static int8_t w8[NW], x8[NX];
    static int32_t b32[OC];
    static float wsc[OC] = {0.004f, 0.011f, 0.007f, 0.015f}, bsc[OC], sc_x = 0.05f, sc_y = 0.12f;
    static int64_t wzp[OC], bzp[OC], zp_x = -7, zp_y = 3;
    for (int i = 0; i < NW; i++)
        w8[i] = (int8_t)((i * 41) % 255 - 127);
    for (int i = 0; i < NX; i++)
        x8[i] = (int8_t)((i * 23) % 256 - 128);
    for (int c = 0; c < OC; c++) {
        b32[c] = (c - 2) * 900 + 150;
        bsc[c] = sc_x * wsc[c];
    }
    tflw_tensor ts[4] = {
        {.name = "x", .type = TFLW_INT8, .rank = 5, .dims = {1, 3, 4, 4, 2}, .n_quant = 1, .scales = &sc_x,
         .zero_points = &zp_x},
        {.name = "filter", .type = TFLW_INT8, .rank = 5, .dims = {2, 3, 3, 2, OC}, .data = w8, .nbytes = sizeof w8,
         .n_quant = OC, .scales = wsc, .zero_points = wzp, .quant_dim = 4},
        {.name = "bias", .type = TFLW_INT32, .rank = 1, .dims = {OC}, .data = b32, .nbytes = sizeof b32,
         .n_quant = OC, .scales = bsc, .zero_points = bzp, .quant_dim = 0},
        {.name = "y", .type = TFLW_INT8, .rank = 5, .dims = {1, 3, 2, 4, OC}, .n_quant = 1, .scales = &sc_y,
         .zero_points = &zp_y},
    };
    /* Conv3DOptions: padding SAME, stride_d 1, stride_w 1, stride_h 2, NONE, dilations 1 */
    static const tflw_opt c3_opts[8] = {{0, TFLW_OPT_U8, 0, 0, NULL, 0}, {1, TFLW_OPT_I32, 1, 0, NULL, 0},
                                        {2, TFLW_OPT_I32, 1, 0, NULL, 0}, {3, TFLW_OPT_I32, 2, 0, NULL, 0},
                                        {4, TFLW_OPT_U8, 0, 0, NULL, 0}, {5, TFLW_OPT_I32, 1, 0, NULL, 0},
                                        {6, TFLW_OPT_I32, 1, 0, NULL, 0}, {7, TFLW_OPT_I32, 1, 0, NULL, 0}};
    static const int32_t i_c3[3] = {0, 1, 2}, o_c3 = 3;
    tflw_op op = {.code = OP_CONV_3D, .inputs = i_c3, .n_inputs = 3, .outputs = &o_c3, .n_outputs = 1,
                  .options_type = BO_CONV3D, .opts = c3_opts, .n_opts = 8};
    bool ok = write_chain(dir, "conv3d_i8", "", ts, 4, &op, 1, 0, 3);
    return write_input(dir, "xc_i8", "", true, "(1, 3, 4, 4, 2)", x8, sizeof x8, NULL, 0) && ok;
}

/* --write-model DIR (tests/mcu/test_mcu_lut.sh): an int8 chain of the
 * one-input ops riscv_mcu runs through tables, each op's output
 * quantization the next one's input, and an input covering all 256 codes:
 * DIR/lut_chain.tflite and DIR/x.npy ([1, 16, 16] int8, for `--input x=`) */
static int write_lut_model(const char *dir)
{
    static const struct {
        int32_t code;
        float scale;
        int64_t zp;
    } chain[] = {
        {0, 0.06f, 5},             /* x */
        {OP_TANH, 1.0f / 128, 0},  /* TFLite Micro's fixed point */
        {OP_EXP, 0.011f, -128},    /* exp([-1, 1]) in [0.37, 2.72] */
        {OP_LOG, 0.008f, 0},       /* LUTPopulate; a code of 0 maps to the lowest */
        {OP_HARD_SWISH, 0.006f, -20}, /* the 16-bit kernel */
        {OP_GELU, 0.005f, -30},
        {OP_NEG, 0.004f, 100},
        {OP_ABS, 0.004f, -128},    /* requantized |q - zp| */
        {OP_SIN, 0.004f, -128},
        {OP_RELU6, 0.0035f, -128}, /* requantized and clamped */
    };
    enum { NT = sizeof chain / sizeof chain[0] };
    static float sc[NT];
    static int64_t zp[NT];
    static int32_t io[NT];
    tflw_tensor ts[NT];
    tflw_op ops[NT - 1];
    char names[NT][8];
    for (int i = 0; i < NT; i++) {
        sc[i] = chain[i].scale;
        zp[i] = chain[i].zp;
        io[i] = i;
        snprintf(names[i], sizeof names[i], i == 0 ? "x" : i == NT - 1 ? "y" : "t%d", i);
        ts[i] = (tflw_tensor){.name = names[i], .type = TFLW_INT8, .rank = 3, .dims = {1, 16, 16}, .n_quant = 1,
                              .scales = &sc[i], .zero_points = &zp[i]};
        if (i > 0)
            ops[i - 1] = (tflw_op){.code = chain[i].code, .inputs = &io[i - 1], .n_inputs = 1, .outputs = &io[i],
                                   .n_outputs = 1};
    }
    bool ok = write_chain(dir, "lut_chain", "", ts, NT, ops, NT - 1, 0, NT - 1);
    ok = write_binary_model(dir, true) && write_binary_model(dir, false) && ok;
    ok = write_move_model(dir, true) && write_move_model(dir, false) && write_idx_model(dir) && ok;
    ok = write_red_model(dir, true) && write_red_model(dir, false) && ok;
    ok = write_elem8_model(dir) && ok;
    ok = write_nn_model(dir, true) && write_nn_model(dir, false) && ok;
    ok = write_conv3d_model(dir) && ok;
    ok = write_shape_model(dir, true) && write_shape_model(dir, false) && ok;
    int8_t x[256];
    for (int i = 0; i < 256; i++)
        x[i] = (int8_t)(i * 7 - 128); /* every code once: 7 is odd */
    ok = write_input(dir, "x", "", true, "(1, 16, 16)", x, sizeof x, NULL, 0) && ok;
    if (!ok)
        fprintf(stderr, "--write-model: cannot write the model or input in %s\n", dir);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-model"))
        return write_lut_model(argv[2]);
    sy_status *st = sy_env_create_from_string("[switchyard]\nplugin_dirs = @default\nproviders = cpu_ref\nstrict = true\n",
                                              NULL, &env_ref);
    if (!st)
        st = sy_env_create_from_string("[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu\nstrict = true\n"
                                       "[provider.riscv_mcu]\ntarget = ws63\n",
                                       NULL, &env_mcu);
    if (!st)
        st = sy_env_create_from_string("[switchyard]\nplugin_dirs = @default\nproviders = riscv_mcu\nstrict = true\n"
                                       "[provider.riscv_mcu]\ntarget = ws63\nrules = tflm\n",
                                       NULL, &env_mcu_tflm);
    if (st) {
        fprintf(stderr, "environment: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    run_all_cases();
    int rows = 0, rows_i8 = 0;
    for (int r = 0; r < N_TABLE_A; r++) {
        CHECK(covered[r][0] || covered[r][1], "Table A #%d %s has no case", table_a[r].row, table_a[r].name);
        rows += covered[r][0] || covered[r][1];
        rows_i8 += covered[r][1];
    }
    printf("tflite ops: %d operators (%d covered, %d with int8), %d cases, %d passed\n", N_TABLE_A, rows, rows_i8,
           n_cases, n_passed);
    printf("riscv_mcu: %d of the cases also run on the MCU provider's kernels; %d declined by the seed's rules ran "
           "with rules = tflm: %d\n",
           n_mcu_run, n_mcu_declined, n_mcu_tflm);
    sy_env_release(env_ref);
    sy_env_release(env_mcu);
    sy_env_release(env_mcu_tflm);
    return sy_test_result();
}
