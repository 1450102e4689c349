/*
 * Optional operators (15, 18) on what the IR has today: a tensor, or an
 * omitted input (the empty optional). The optional and sequence value
 * kinds themselves are not IR values yet, so a graph input or output of
 * optional type is still refused at load.
 *
 *   OptionalHasElement   true for a tensor, false for an omitted input
 *   OptionalGetElement   the tensor itself (an omitted input is an error)
 */
#include "tensor_internal.h"

static const sy_host_api *H; /* process-wide: the same host table in every environment */
#define ERR(code, ...) H->status_new(code, __VA_ARGS__)

static const sy_tensor *in0(const sy_node *n) { return H->node_num_inputs(n) ? H->node_input(n, 0) : NULL; }

static sy_status *infer_has(sy_node *n)
{
    return H->node_set_output(n, 0, SY_DT_BOOL, 0, NULL);
}

static sy_status *run_has(void *state, const sy_kernel_io *io)
{
    (void)state;
    *(uint8_t *)io->outputs[0]->data = io->n_inputs > 0 && io->inputs[0] != NULL;
    return NULL;
}

static sy_status *infer_get(sy_node *n)
{
    const sy_tensor *x = in0(n);
    if (!x)
        return ERR(SY_ERR_INVALID_MODEL, "OptionalGetElement of an empty optional (the input is omitted)");
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static const sy_inplace_pair view00[] = {{0, 0, true}};

static const sy_op_schema schemas[] = {
    SY_SCHEMA("OptionalHasElement", 15, 0, 1, 1, 1, SY_NO_ATTRS, infer_has, SY_NO_INPLACE, 0),
    SY_SCHEMA("OptionalHasElement", 18, 0, 1, 1, 1, SY_NO_ATTRS, infer_has, SY_NO_INPLACE, 0),
    SY_SCHEMA("OptionalGetElement", 15, 1, 1, 1, 1, SY_NO_ATTRS, infer_get, SY_INPLACE(view00), 0),
    SY_SCHEMA("OptionalGetElement", 18, 1, 1, 1, 1, SY_NO_ATTRS, infer_get, SY_INPLACE(view00), 0),
};

static const sy_kernel_def kernels[] = {
    SY_CPU_KERNEL("OptionalHasElement", 1, 0, 0, -1, sy_prepare_nothing, run_has, NULL),
    SY_CPU_KERNEL("OptionalGetElement", 1, 0, 0, 0, sy_prepare_nothing, sy_run_copy_input0, NULL),
};

sy_status *tensor_optional_register(const sy_host_api *host, sy_plugin *p)
{
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}
