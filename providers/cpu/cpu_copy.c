/*
 * Pure data movement on the cpu provider, in the graph's own layout: Concat
 * (any axis, any element type) and Dropout at inference (the identity; a
 * mask output keeps every element).
 * They exist so that the provider takes these nodes: inside an NHWC region
 * (cpu_chain.c) a Concat along the channels costs nothing and a Dropout is
 * an alias; these kernels run them where they stand alone.
 */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

#define H cpu_host
#define ERR(code, ...) H->status_new((code), __VA_ARGS__)

typedef struct concat_state {
    int64_t outer; /* product of the dims before the axis */
    size_t elem;   /* bytes per element */
    int64_t inner; /* product of the dims after the axis, times elem */
} concat_state;

static bool concat_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *y = H->node_output(n, 0);
    if (!y || !sy_dt_size(y->dtype))
        return cpu_decline(why, len, "elements must have a byte size");
    return true;
}

static sy_status *concat_prepare(sy_node *n, void **state)
{
    const sy_tensor *y = H->node_output(n, 0);
    int64_t axis = sy_attr_int_or(H, n, "axis", 0);
    if (axis < 0)
        axis += y->rank;
    if (axis < 0 || axis >= y->rank)
        return ERR(SY_ERR_INVALID_ARGUMENT, "Concat '%s': axis %lld is outside rank %d", H->node_name(n),
                   (long long)sy_attr_int_or(H, n, "axis", 0), (int)y->rank);
    concat_state *s = calloc(1, sizeof *s);
    if (!s)
        return ERR(SY_ERR_OUT_OF_MEMORY, "out of memory");
    s->elem = sy_dt_size(y->dtype);
    s->outer = 1;
    s->inner = (int64_t)s->elem;
    for (int32_t d = 0; d < axis; d++)
        s->outer *= y->dims[d];
    for (int32_t d = axis + 1; d < y->rank; d++)
        s->inner *= y->dims[d];
    *state = s;
    return NULL;
}

static sy_status *concat_run(void *state, const sy_kernel_io *io)
{
    const concat_state *s = state;
    sy_tensor *y = io->outputs[0];
    size_t row = 0; /* bytes of one outer slice of the output */
    for (uint32_t i = 0; i < io->n_inputs; i++)
        row += io->inputs[i]->nbytes / (size_t)(s->outer ? s->outer : 1);
    if (row * (size_t)s->outer != y->nbytes)
        return ERR(SY_ERR_SHAPE, "Concat: the inputs hold %zu bytes per slice, the output %zu",
                   row, y->nbytes / (size_t)(s->outer ? s->outer : 1));
    size_t at = 0;
    for (uint32_t i = 0; i < io->n_inputs; i++) {
        size_t part = io->inputs[i]->nbytes / (size_t)(s->outer ? s->outer : 1);
        const uint8_t *src = io->inputs[i]->data;
        uint8_t *dst = (uint8_t *)y->data + at;
        for (int64_t o = 0; o < s->outer && part; o++)
            memcpy(dst + (size_t)o * row, src + (size_t)o * part, part);
        at += part;
    }
    return NULL;
}

bool cpu_mask_dtype_ok(sy_dtype dt)
{
    return dt == SY_DT_BOOL || dt == SY_DT_FLOAT32 || dt == SY_DT_FLOAT16;
}

void cpu_fill_mask(sy_tensor *mask)
{
    if (mask->dtype == SY_DT_BOOL) {
        memset(mask->data, 1, mask->nbytes);
    } else if (mask->dtype == SY_DT_FLOAT16) {
        for (size_t i = 0; i < mask->nbytes / 2; i++)
            ((uint16_t *)mask->data)[i] = 0x3c00u; /* 1.0 */
    } else {
        for (size_t i = 0; i < mask->nbytes / 4; i++)
            ((float *)mask->data)[i] = 1.0f;
    }
}

static bool dropout_accepts(const sy_node *n, char *why, size_t len)
{
    const sy_tensor *mask = H->node_num_outputs(n) > 1 ? H->node_output(n, 1) : NULL;
    if (mask && !cpu_mask_dtype_ok(mask->dtype))
        return cpu_decline(why, len, "the mask must be bool, float or float16");
    const sy_tensor *tm = H->node_num_inputs(n) > 2 ? H->node_input(n, 2) : NULL;
    if (tm && !(tm->data && tm->dtype == SY_DT_BOOL && !*(const uint8_t *)tm->data))
        return cpu_decline(why, len, "training_mode must be a constant false");
    if (sy_attr_int_or(H, n, "is_test", 1) == 0 && H->node_opset(n) < 7)
        return cpu_decline(why, len, "is_test = 0 (training) is cpu_ref's");
    return true;
}

static sy_status *dropout_prepare(sy_node *n, void **state)
{
    (void)n;
    *state = NULL;
    return NULL;
}

static sy_status *dropout_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    if (io->outputs[0]->nbytes != io->inputs[0]->nbytes)
        return ERR(SY_ERR_SHAPE, "Dropout: output size differs from the input's");
    if (io->outputs[0]->data != io->inputs[0]->data)
        memcpy(io->outputs[0]->data, io->inputs[0]->data, io->inputs[0]->nbytes);
    if (io->n_outputs > 1 && io->outputs[1]) /* inference: every element kept */
        cpu_fill_mask(io->outputs[1]);
    return NULL;
}

static void release_free(void *state) { free(state); }

#define ANY_TYPE (~(uint64_t)0)
static const sy_kernel_def copy_kernels[] = {
    {sizeof(sy_kernel_def), "", "Concat", 4, 0, "cpu", ANY_TYPE, -1, 0u, concat_accepts, concat_prepare, concat_run,
     release_free, NULL},
    {sizeof(sy_kernel_def), "", "Dropout", 1, 0, "cpu", SY_DT_BIT(SY_DT_FLOAT32) | SY_DT_BIT(SY_DT_FLOAT16), 0, 0u,
     dropout_accepts, dropout_prepare, dropout_run, NULL, NULL},
};

sy_status *cpu_copy_register(const sy_host_api *host, sy_plugin *p)
{
    for (uint32_t i = 0; i < SY_COUNT_OF(copy_kernels); i++)
        SY_TRY(host->register_kernel(p, &copy_kernels[i]));
    return NULL;
}
