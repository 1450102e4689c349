/*
 * A test plugin for the subgraph host API (ABI 1.4, host->node_subgraph and
 * subgraph_run), driven by test_subgraph_api.c. One op, test.subgraph
 * RunGraph(X) -> Y: at prepare it asks for the graph attribute named by its
 * `ask` attribute with the signature its other attributes give (n_in
 * inputs, n_out outputs, input 0 bound as in_dtype, output 0 read as
 * out_dtype, `optional` for SY_SUBGRAPH_OPTIONAL); at run it binds X to the
 * graph's input 0 and copies the graph's output 0 into Y (Y = X when the
 * optional graph is absent).
 */
#include "switchyard/sy_sdk.h"

#include <stdlib.h>
#include <string.h>

static const sy_host_api *H;

typedef struct rg_state {
    sy_subgraph *g;
    uint32_t n_in;
} rg_state;

static sy_status *infer_rg(sy_node *n)
{
    const sy_tensor *x;
    SY_TRY(sy_need_input(H, n, 0, &x));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static sy_status *prepare_rg(sy_node *n, void **state)
{
    const char *ask = NULL;
    size_t len = 0;
    if (!H->attr_string(n, "ask", &ask, &len))
        return H->status_new(SY_ERR_INVALID_MODEL, "RunGraph needs 'ask'");
    if (!sy_host_has_subgraphs(H))
        return H->status_new(SY_ERR_UNSUPPORTED, "the host has no subgraph API");
    rg_state *s = calloc(1, sizeof *s);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_dtype in_dt[4] = {(sy_dtype)sy_attr_int_or(H, n, "in_dtype", 0)};
    sy_dtype out_dt[4] = {(sy_dtype)sy_attr_int_or(H, n, "out_dtype", 0)};
    int64_t n_in = sy_attr_int_or(H, n, "n_in", 1), n_out = sy_attr_int_or(H, n, "n_out", 1);
    if (n_in < 1 || n_in > 4 || n_out < 1 || n_out > 4) {
        free(s);
        return H->status_new(SY_ERR_INVALID_MODEL, "n_in and n_out are 1 to 4");
    }
    sy_subgraph_sig sig = {sizeof sig, (uint32_t)n_in, (uint32_t)n_out,
                           sy_attr_int_or(H, n, "optional", 0) ? SY_SUBGRAPH_OPTIONAL : 0u, in_dt, out_dt};
    sy_status *st = H->node_subgraph(n, ask, &sig, &s->g);
    if (st) {
        free(s);
        return st;
    }
    s->n_in = (uint32_t)n_in;
    *state = s;
    return NULL;
}

static sy_status *run_rg(void *state, const sy_kernel_io *io)
{
    const rg_state *s = state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    if (!s->g) {
        memcpy(y->data, x->data, x->nbytes);
        return NULL;
    }
    const sy_tensor *in[4] = {x, x, x, x}, *out = NULL;
    SY_TRY(H->subgraph_run(s->g, in, s->n_in, &out, 1));
    if (out->nbytes != y->nbytes)
        return H->status_new(SY_ERR_SHAPE, "the graph's output has %zu bytes; Y has %zu", out->nbytes, y->nbytes);
    memcpy(y->data, out->data, y->nbytes);
    return NULL;
}

static const sy_attr_def a_rg[] = {
    {"body", SY_ATTR_GRAPH, false},    {"ask", SY_ATTR_STRING, true},     {"n_in", SY_ATTR_INT, false},
    {"n_out", SY_ATTR_INT, false},     {"in_dtype", SY_ATTR_INT, false}, {"out_dtype", SY_ATTR_INT, false},
    {"optional", SY_ATTR_INT, false},
};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), "test.subgraph", "RunGraph", 1, 1, 1, 1, 1, SY_ATTRS(a_rg), infer_rg, SY_NO_INPLACE, 0,
     "runs its graph attribute on X (subgraph host API test)"},
};

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), "test.subgraph", "RunGraph", 1, 0, "cpu_ref", SY_DT_MASK_NUMERIC, 0, 0, NULL, prepare_rg,
     run_rg, sy_release_free, NULL},
};

static sy_status *rg_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    return sy_register_tables(host, p, schemas, SY_COUNT_OF(schemas), kernels, SY_COUNT_OF(kernels));
}

static void rg_fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "test_subgraph",
    .version = "0.1.0",
    .description = "test op RunGraph: runs a graph attribute through host->node_subgraph / subgraph_run",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = NULL,
    .init = rg_init,
    .fini = rg_fini,
};

SY_PLUGIN_DEFINE(desc)
