/*
 * ops_math / einsum.c: Einsum (12) for every numeric dtype, on the shared
 * kernel plugin_sdk/kernels/tflk_einsum.c (the one riscv_mcu and its
 * packages run, ops-mcu.md Table B #60): tflk_einsum_plan parses the
 * equation against the shapes (letters, "..." broadcast as numpy does,
 * diagonals, sums, implicit mode), tflk_einsum_run is the loop. Floats
 * accumulate in double, integers in 64 bits (wrapping); float16/bfloat16
 * run through the fp32 scope.
 */
#include "math_internal.h"
#include "tflk.h"

#include <stdlib.h>

static const sy_host_api *H; /* process-wide: the same host table in every environment */

#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

/* the kernel's element code of dt (after the fp32 scope); 0: none */
static int32_t code_of(sy_dtype dt)
{
    switch (dt) {
    case SY_DT_FLOAT32:
    case SY_DT_FLOAT16:
    case SY_DT_BFLOAT16: return TFLK_F32;
    case SY_DT_FLOAT64: return TFLK_F64;
    case SY_DT_INT8: return TFLK_S8;
    case SY_DT_UINT8: return TFLK_U8;
    case SY_DT_INT16: return TFLK_S16;
    case SY_DT_UINT16: return TFLK_U16;
    case SY_DT_INT32: return TFLK_S32;
    case SY_DT_UINT32: return TFLK_U32;
    case SY_DT_INT64: return TFLK_S64;
    case SY_DT_UINT64: return TFLK_U64;
    default: return 0;
    }
}

/* the plan of node n with inputs ins */
static sy_status *ein_build(const sy_node *n, const sy_tensor *const *ins, uint32_t n_in, tflk_einsum *p)
{
    const char *eq;
    size_t eqlen;
    if (!H->attr_string(n, "equation", &eq, &eqlen))
        return ERR(SY_ERR_INVALID_ARGUMENT, "attribute 'equation' is required");
    if (n_in < 1 || n_in > TFLK_EIN_IN)
        return ERR(SY_ERR_UNSUPPORTED, "Einsum takes 1 to %d inputs, got %u", TFLK_EIN_IN, n_in);
    int32_t rank[TFLK_EIN_IN];
    const int64_t *dims[TFLK_EIN_IN];
    for (uint32_t k = 0; k < n_in; k++) {
        rank[k] = ins[k]->rank;
        dims[k] = ins[k]->dims;
    }
    char msg[160];
    switch (tflk_einsum_plan(p, eq, (int32_t)n_in, rank, dims, msg, (int32_t)sizeof msg)) {
    case 0: return NULL;
    case TFLK_EIN_EINVAL: return ERR(SY_ERR_INVALID_ARGUMENT, "Einsum '%s': %s", eq, msg);
    case TFLK_EIN_ESHAPE: return ERR(SY_ERR_SHAPE, "Einsum '%s': %s", eq, msg);
    default: return ERR(SY_ERR_UNSUPPORTED, "Einsum '%s': %s", eq, msg);
    }
}

static sy_status *infer_einsum(sy_node *n)
{
    uint32_t ni = H->node_num_inputs(n);
    if (ni < 1)
        return ERR(SY_ERR_INVALID_ARGUMENT, "Einsum needs at least one input");
    if (ni > TFLK_EIN_IN)
        return ERR(SY_ERR_UNSUPPORTED, "Einsum with more than %d inputs is not supported", TFLK_EIN_IN);
    const sy_tensor *ins[TFLK_EIN_IN];
    for (uint32_t i = 0; i < ni; i++)
        SY_TRY(sy_need_input(H, n, i, &ins[i]));
    SY_TRY(sy_check_same_dtype(H, n, -1));
    tflk_einsum p;
    SY_TRY(ein_build(n, ins, ni, &p));
    int64_t dims[SY_MAX_RANK];
    for (int32_t i = 0; i < p.n_out; i++)
        dims[i] = p.out_dims[i];
    return H->node_set_output(n, 0, ins[0]->dtype, p.n_out, dims);
}

typedef struct ein_state {
    tflk_einsum plan;
    int32_t code;
} ein_state;

static sy_status *prepare_einsum(sy_node *n, void **state)
{
    uint32_t ni = H->node_num_inputs(n);
    const sy_tensor *ins[TFLK_EIN_IN];
    for (uint32_t i = 0; i < ni && i < TFLK_EIN_IN; i++)
        ins[i] = H->node_input(n, i);
    int32_t code = ni ? code_of(ins[0]->dtype) : 0;
    if (!code)
        return ERR(SY_ERR_UNSUPPORTED, "Einsum of %s is not supported", ni ? sy_dt_name(ins[0]->dtype) : "nothing");
    ein_state *s = malloc(sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = ein_build(n, ins, ni, &s->plan);
    if (st) {
        free(s);
        return st;
    }
    s->code = code;
    if (ins[0]->dtype == SY_DT_FLOAT16 || ins[0]->dtype == SY_DT_BFLOAT16)
        H->node_set_scratch(n, sy_f32_scope_bytes(H, n));
    *state = s;
    return NULL;
}

static sy_status *einsum_scoped(void *state, const sy_kernel_io *io)
{
    const ein_state *s = state;
    const void *in[TFLK_EIN_IN];
    for (uint32_t k = 0; k < io->n_inputs && k < TFLK_EIN_IN; k++)
        in[k] = io->inputs[k]->data;
    tflk_einsum_run(&s->plan, s->code, in, io->outputs[0]->data);
    return NULL;
}

static sy_status *run_einsum(void *state, const sy_kernel_io *io)
{
    sy_dtype dt = io->inputs[0]->dtype; /* float16 / bfloat16 as fp32 shadows; float64 in double as it is */
    if (dt == SY_DT_FLOAT16 || dt == SY_DT_BFLOAT16)
        return sy_run_as_f32(H, state, io, einsum_scoped);
    return einsum_scoped(state, io);
}

static const sy_attr_def a_einsum[] = {{"equation", SY_ATTR_STRING, true}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("Einsum", 12, 1, -1, 1, 1, SY_ATTRS(a_einsum), infer_einsum, SY_NO_INPLACE, 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("Einsum", 1, 0, SY_DT_MASK_NUMERIC, 0, prepare_einsum, run_einsum, sy_release_free),
};

sy_status *math_einsum_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
