/*
 * A plugin compiled against the frozen ABI 1.1 headers (abi-1.1/, copies of
 * plugin_sdk/include at ABI 1.1, never edited) and nothing else. It uses
 * what 1.1 added, so that the current core has to honour the 1.1 layout:
 *
 *   provider abi11_npu: option gain (float, default 1); check_node takes
 *            Relu; group() puts every node in one partition, compile() and
 *            run_compiled() run it (y = gain * max(x, 0)), release_compiled
 *   kernel   Relu on abi11_npu: prepare reads the provider state with
 *            node_provider_state, reports memory (node_report_memory) and
 *            checks node_position
 *   extension "abi11_ext" v1: { struct_size, compiled_runs() }
 */
#include "switchyard/sy_plugin.h"

#include <stdlib.h>
#include <string.h>

/* process-wide: the host table, and a counter of this test plugin */
static const sy_host_api *H;
static int compiled_runs;

typedef struct npu {
    float gain;
} npu;

static sy_status *npu_create(const sy_options *opts, void **state)
{
    npu *s = H->alloc(sizeof *s, 16);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "abi11: out of memory");
    const char *g = opts ? H->option_get(opts, "gain") : NULL;
    s->gain = g ? strtof(g, NULL) : 1.0f;
    *state = s;
    return NULL;
}

static void npu_destroy(void *state) { H->free(state); }

static void npu_check_node(void *state, const sy_node *n, sy_claim *claim)
{
    (void)state;
    claim->take = !strcmp(H->node_op(n), "Relu");
    if (!claim->take) {
        claim->reason = SY_REASON_OP_UNSUPPORTED;
        strcpy(claim->text, "abi11_npu runs Relu only");
    }
}

static sy_status *npu_group(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    (void)state;
    (void)nodes;
    for (uint32_t i = 0; i < n; i++)
        group_of[i] = 1;
    return NULL;
}

static sy_status *npu_compile(void *state, const sy_partition *p, void **compiled)
{
    if (p->struct_size < sizeof *p || p->n_nodes != 1 || p->n_inputs != 1 || p->n_outputs != 1)
        return H->status_new(SY_ERR_UNSUPPORTED, "abi11: one Relu per partition");
    *compiled = state; /* the gain is all it needs */
    return NULL;
}

static sy_status *npu_run_compiled(void *compiled, const sy_kernel_io *io)
{
    const npu *s = compiled;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    for (size_t i = 0; i < io->outputs[0]->nbytes / sizeof(float); i++)
        y[i] = s->gain * (x[i] > 0 ? x[i] : 0.0f);
    compiled_runs++;
    return NULL;
}

static void npu_release_compiled(void *compiled) { (void)compiled; }

static const char *const npu_keys[] = {"gain", NULL};

static const sy_provider_def provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "abi11_npu",
    .description = "provider of the ABI 1.1 stability plugin",
    .option_keys = npu_keys,
    .create = npu_create,
    .destroy = npu_destroy,
    .check_node = npu_check_node,
    .group = npu_group,
    .compile = npu_compile,
    .run_compiled = npu_run_compiled,
    .release_compiled = npu_release_compiled,
};

static sy_status *relu_prepare(sy_node *n, void **state)
{
    npu *s = H->node_provider_state(n);
    if (!s)
        return H->status_new(SY_ERR_INTERNAL, "abi11: no provider state in prepare");
    if (H->node_position(n) != 0)
        return H->status_new(SY_ERR_INTERNAL, "abi11: Relu at position %u, expected 0", H->node_position(n));
    H->node_report_memory(n, SY_MEM_PERSISTENT, 64);
    *state = s;
    return NULL;
}

static sy_status *relu_run(void *state, const sy_kernel_io *io)
{
    return npu_run_compiled(state, io); /* the same math when not compiled */
}

static const sy_kernel_def relu_kernel = {
    .struct_size = sizeof(sy_kernel_def), .domain = "", .op = "Relu", .since_version = 1,
    .provider = "abi11_npu", .type_mask = SY_DT_BIT(SY_DT_FLOAT32), .type_input = 0,
    .prepare = relu_prepare, .run = relu_run};

typedef struct abi11_ext {
    uint32_t struct_size;
    int (*compiled_runs)(void);
} abi11_ext;

static int get_compiled_runs(void) { return compiled_runs; }
static const abi11_ext ext = {sizeof ext, get_compiled_runs};

static sy_status *init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    if (host->struct_size < offsetof(sy_host_api, node_pin_output) + sizeof host->node_pin_output)
        return host->status_new(SY_ERR_ABI_MISMATCH, "abi11: the host table has no ABI 1.1 members");
    H = host;
    sy_status *st = host->register_provider(p, &provider);
    if (!st)
        st = host->register_kernel(p, &relu_kernel);
    if (!st)
        st = host->register_extension(p, "abi11_ext", 1, &ext);
    return st;
}

static void fini(void) {}

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "abi11",
    .version = "1.1.0",
    .description = "ABI 1.1 stability plugin (built against the frozen 1.1 headers)",
    .kinds = SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_EXTENSION,
    .init = init,
    .fini = fini,
};

SY_PLUGIN_DEFINE(desc)
