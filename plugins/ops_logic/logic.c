/*
 * ops_logic: comparison and boolean ops of the default ONNX domain, cpu_ref
 * kernels. Equal Less LessOrEqual Greater GreaterOrEqual (every numeric
 * dtype and bool; Equal also string, byte for byte) -> bool; And Or Xor Not on bool. Numpy broadcasting, and
 * the legacy axis broadcast of opset 1.
 */
#include "switchyard/sy_sdk.h"

#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

#define CMP_INT(DT, T, UT, S, SFX)                                                                                 \
    SY_BINARY_FN(eq_##SFX, T, uint8_t, T, SY_LD_ID, SY_LD_ID, (uint8_t)(x == y))                                   \
    SY_BINARY_FN(lt_##SFX, T, uint8_t, T, SY_LD_ID, SY_LD_ID, (uint8_t)(x < y))                                    \
    SY_BINARY_FN(le_##SFX, T, uint8_t, T, SY_LD_ID, SY_LD_ID, (uint8_t)(x <= y))                                   \
    SY_BINARY_FN(gt_##SFX, T, uint8_t, T, SY_LD_ID, SY_LD_ID, (uint8_t)(x > y))                                    \
    SY_BINARY_FN(ge_##SFX, T, uint8_t, T, SY_LD_ID, SY_LD_ID, (uint8_t)(x >= y))
SY_FOREACH_INT_U(CMP_INT)
#define CMP_FLT(DT, TS, CT, LD, ST, SFX)                                                                           \
    SY_BINARY_FN(eq_##SFX, TS, uint8_t, CT, LD, SY_LD_ID, (uint8_t)(x == y))                                       \
    SY_BINARY_FN(lt_##SFX, TS, uint8_t, CT, LD, SY_LD_ID, (uint8_t)(x < y))                                        \
    SY_BINARY_FN(le_##SFX, TS, uint8_t, CT, LD, SY_LD_ID, (uint8_t)(x <= y))                                       \
    SY_BINARY_FN(gt_##SFX, TS, uint8_t, CT, LD, SY_LD_ID, (uint8_t)(x > y))                                        \
    SY_BINARY_FN(ge_##SFX, TS, uint8_t, CT, LD, SY_LD_ID, (uint8_t)(x >= y))
SY_FOREACH_FLOAT_LS(CMP_FLT)

#define BOOLV(v) ((v) != 0)
SY_BINARY_FN(and_b, uint8_t, uint8_t, uint8_t, BOOLV, SY_LD_ID, (uint8_t)(x && y))
SY_BINARY_FN(or_b, uint8_t, uint8_t, uint8_t, BOOLV, SY_LD_ID, (uint8_t)(x || y))
SY_BINARY_FN(xor_b, uint8_t, uint8_t, uint8_t, BOOLV, SY_LD_ID, (uint8_t)(x != y))
SY_BINARY_FN(eq_b, uint8_t, uint8_t, uint8_t, BOOLV, SY_LD_ID, (uint8_t)(x == y))
/* bool operands ordered false < true: ops-mcu.md Table B #66-#69 give A and B
 * as "float32 or bool" (riscv_mcu's tflk_compare_b takes them too) */
SY_BINARY_FN(lt_b, uint8_t, uint8_t, uint8_t, BOOLV, BOOLV, (uint8_t)(x < y))
SY_BINARY_FN(le_b, uint8_t, uint8_t, uint8_t, BOOLV, BOOLV, (uint8_t)(x <= y))
SY_BINARY_FN(gt_b, uint8_t, uint8_t, uint8_t, BOOLV, BOOLV, (uint8_t)(x > y))
SY_BINARY_FN(ge_b, uint8_t, uint8_t, uint8_t, BOOLV, BOOLV, (uint8_t)(x >= y))
/* strings: byte for byte (Equal 19 added string) */
SY_BINARY_FN(eq_s, sy_string, uint8_t, sy_string, SY_LD_ID, SY_LD_ID, (uint8_t)sy_str_equal(&x, &y))

static const struct {
    const char *name;
    sy_bcast_fn tab[SY_DT__COUNT];
} ops[] = {
    {"Equal", {SY_FLOAT_TABLE_ENTRIES(eq), SY_INT_TABLE_ENTRIES(eq), [SY_DT_BOOL] = eq_b, [SY_DT_STRING] = eq_s}},
    {"Less", {SY_FLOAT_TABLE_ENTRIES(lt), SY_INT_TABLE_ENTRIES(lt), [SY_DT_BOOL] = lt_b}},
    {"LessOrEqual", {SY_FLOAT_TABLE_ENTRIES(le), SY_INT_TABLE_ENTRIES(le), [SY_DT_BOOL] = le_b}},
    {"Greater", {SY_FLOAT_TABLE_ENTRIES(gt), SY_INT_TABLE_ENTRIES(gt), [SY_DT_BOOL] = gt_b}},
    {"GreaterOrEqual", {SY_FLOAT_TABLE_ENTRIES(ge), SY_INT_TABLE_ENTRIES(ge), [SY_DT_BOOL] = ge_b}},
    {"And", {[SY_DT_BOOL] = and_b}},
    {"Or", {[SY_DT_BOOL] = or_b}},
    {"Xor", {[SY_DT_BOOL] = xor_b}},
};

typedef struct logic_state {
    sy_bcast_fn fn;
    bool legacy;
    int64_t axis;
} logic_state;

static bool legacy(const sy_node *n) { return H->node_opset(n) < 7 && sy_attr_int_or(H, n, "broadcast", 0) != 0; }

static sy_status *infer_logic(sy_node *n)
{
    const sy_tensor *a, *b;
    SY_TRY(sy_need_input(H, n, 0, &a));
    SY_TRY(sy_need_input(H, n, 1, &b));
    if (a->dtype != b->dtype)
        return ERR(SY_ERR_TYPE, "A is %s but B is %s", sy_dt_name(a->dtype), sy_dt_name(b->dtype));
    if (a->dtype == SY_DT_STRING && (strcmp(H->node_op(n), "Equal") || H->node_opset(n) < 19))
        return ERR(SY_ERR_TYPE, "%s-%d does not take string tensors (Equal takes them from opset 19)", H->node_op(n),
                   (int)H->node_opset(n));
    if (H->node_opset(n) < 7) {
        if (legacy(n)) {
            int64_t d[SY_MAX_RANK];
            SY_TRY(sy_legacy_broadcast_dims(H, a, b, sy_attr_int_or(H, n, "axis", -1), d));
        } else if (!sy_shape_equal(a->rank, a->dims, b->rank, b->dims)) {
            return ERR(SY_ERR_SHAPE, "without broadcast=1 (opset < 7), A and B must have equal shapes");
        }
        return H->node_set_output(n, 0, SY_DT_BOOL, a->rank, a->dims);
    }
    return sy_infer_broadcast(H, n, SY_DT_BOOL, -1);
}

static sy_status *prepare_logic(sy_node *n, void **state)
{
    const char *op = H->node_op(n);
    const sy_tensor *a = H->node_input(n, 0);
    sy_bcast_fn fn = NULL;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, op))
            fn = ops[i].tab[a->dtype];
    if (!fn)
        return ERR(SY_ERR_TYPE, "%s has no cpu_ref kernel for %s", op, sy_dt_name(a->dtype));
    logic_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->fn = fn;
    s->legacy = legacy(n);
    s->axis = sy_attr_int_or(H, n, "axis", -1);
    *state = s;
    return NULL;
}

static sy_status *run_logic(void *state, const sy_kernel_io *io)
{
    const logic_state *s = state;
    sy_tensor *o = io->outputs[0];
    if (s->legacy) {
        const sy_tensor *a = io->inputs[0], *b = io->inputs[1];
        sy_tensor bv = *b;
        SY_TRY(sy_legacy_broadcast_dims(H, a, b, s->axis, bv.dims));
        bv.rank = a->rank;
        const sy_tensor *ins[2] = {a, &bv};
        return sy_bcast_apply(H, 2, ins, o, s->fn, NULL);
    }
    return sy_bcast_apply(H, 2, io->inputs, o, s->fn, NULL);
}

static sy_status *infer_not(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    if (x->dtype != SY_DT_BOOL)
        return ERR(SY_ERR_TYPE, "Not takes bool, got %s", sy_dt_name(x->dtype));
    return sy_infer_unary(H, n);
}

static sy_status *run_not(void *state, const sy_kernel_io *io)
{
    (void)state;
    const uint8_t *x = io->inputs[0]->data;
    uint8_t *y = io->outputs[0]->data;
    int64_t n = sy_tensor_numel(io->inputs[0]);
    for (int64_t i = 0; i < n; i++)
        y[i] = !x[i];
    return NULL;
}

static const sy_attr_def a_legacy[] = {{"axis", SY_ATTR_INT, false}, {"broadcast", SY_ATTR_INT, false}};
static const sy_inplace_pair ip00[] = {{0, 0, false}};

#define B(op, since, attrs) SY_SCHEMA(op, since, 2, 2, 1, 1, attrs, infer_logic, SY_NO_INPLACE, 0)
#define B2(op) B(op, 1, SY_ATTRS(a_legacy)), B(op, 7, SY_NO_ATTRS)
static const sy_op_schema schemas[] = {
    B2("Equal"), B("Equal", 11, SY_NO_ATTRS), B("Equal", 19, SY_NO_ATTRS), B2("Less"), B2("Greater"), B2("And"), B2("Or"), B2("Xor"),
    B("LessOrEqual", 12, SY_NO_ATTRS), B("GreaterOrEqual", 12, SY_NO_ATTRS),
    SY_SCHEMA("Not", 1, 1, 1, 1, 1, SY_NO_ATTRS, infer_not, SY_INPLACE(ip00), 0),
};

#define CMPMASK (SY_DT_MASK_NUMERIC | SY_DT_BIT(SY_DT_BOOL))
#define K(op, mask) SY_CPU_KERNEL(op, 1, 0, mask, 0, prepare_logic, run_logic, sy_release_free)
static const sy_kernel_def kernels[] = {
    K("Equal", CMPMASK | SY_DT_BIT(SY_DT_STRING)), K("Less", CMPMASK), K("LessOrEqual", CMPMASK),
    K("Greater", CMPMASK), K("GreaterOrEqual", CMPMASK),
    K("And", SY_DT_BIT(SY_DT_BOOL)), K("Or", SY_DT_BIT(SY_DT_BOOL)), K("Xor", SY_DT_BIT(SY_DT_BOOL)),
    SY_CPU_KERNEL("Not", 1, 0, SY_DT_BIT(SY_DT_BOOL), 0, sy_prepare_nothing, run_not, NULL),
};

static sy_status *logic_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void logic_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_logic",
    .version = "0.1.0",
    .description = "comparison and boolean ops (ONNX default domain), cpu_ref kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = logic_init,
    .fini = logic_fini,
};

SY_PLUGIN_DEFINE(desc)
