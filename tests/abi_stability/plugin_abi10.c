/*
 * A plugin compiled against the frozen ABI 1.0 headers (abi-1.0/, copies of
 * the first release) and nothing else: no sy_sdk, whose headers follow
 * today's ABI. It uses every kind of registration object and most of the
 * host API, so that the current core has to honour the 1.0 layout of each:
 *
 *   schema   com.switchyard.abi10::Twice (y = k * x, attribute k default 2)
 *            and ::Counter (stateful: y = x + runs since reset)
 *   kernels  Twice and Counter on cpu_ref; Relu on abi10_npu
 *   provider abi10_npu: its own memory domain, pairwise copies, check_node,
 *            option decline_relu
 *   extension "abi10_ext" v1: { struct_size, answer() }
 *   host API status_new, log, alloc/free, node_*, attr_int, node_set_output,
 *            profiling_enabled/profile_event/now_ns
 */
#include "switchyard/sy_plugin.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const sy_host_api *H;

/* ---- schemas -------------------------------------------------------------------- */
static sy_status *infer_like_input(sy_node *n)
{
    const sy_tensor *x = H->node_input(n, 0);
    if (!x || x->dtype != SY_DT_FLOAT32)
        return H->status_new(SY_ERR_TYPE, "abi10: input 0 of %s must be float32", H->node_op(n));
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static const sy_attr_def twice_attrs[] = {{"k", SY_ATTR_INT, false}};

static const sy_op_schema schemas[] = {
    {sizeof(sy_op_schema), "com.switchyard.abi10", "Twice", 1, 1, 1, 1, 1, twice_attrs, 1, infer_like_input, NULL, 0,
     0, "y = k * x"},
    {sizeof(sy_op_schema), "com.switchyard.abi10", "Counter", 1, 1, 1, 1, 1, NULL, 0, infer_like_input, NULL, 0,
     SY_SCHEMA_STATEFUL, "y = x + number of runs since reset"},
};

/* ---- kernels -------------------------------------------------------------------- */
typedef struct twice_state {
    float k;
} twice_state;

static sy_status *twice_prepare(sy_node *n, void **state)
{
    int64_t k = 2;
    H->attr_int(n, "k", &k);
    twice_state *s = H->alloc(sizeof *s, 16);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "abi10: out of memory");
    s->k = (float)k;
    *state = s;
    return NULL;
}

static sy_status *twice_run(void *state, const sy_kernel_io *io)
{
    const twice_state *s = state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    size_t n = io->outputs[0]->nbytes / sizeof(float);
    uint64_t t0 = H->now_ns();
    for (size_t i = 0; i < n; i++)
        y[i] = s->k * x[i];
    if (H->profiling_enabled(io->run)) {
        sy_profile_event ev = {sizeof ev, "abi10.twice", "abi10", t0, H->now_ns() - t0, (int64_t)n};
        H->profile_event(io->run, &ev);
    }
    return NULL;
}

static void free_state(void *state) { H->free(state); }

typedef struct counter_state {
    float runs;
} counter_state;

static sy_status *counter_prepare(sy_node *n, void **state)
{
    (void)n;
    counter_state *s = H->alloc(sizeof *s, 16);
    if (!s)
        return H->status_new(SY_ERR_OUT_OF_MEMORY, "abi10: out of memory");
    s->runs = 0;
    *state = s;
    return NULL;
}

static sy_status *counter_run(void *state, const sy_kernel_io *io)
{
    counter_state *s = state;
    s->runs += 1.0f;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    for (size_t i = 0; i < io->outputs[0]->nbytes / sizeof(float); i++)
        y[i] = x[i] + s->runs;
    return NULL;
}

static void counter_reset(void *state) { ((counter_state *)state)->runs = 0; }

static sy_status *relu_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    for (size_t i = 0; i < io->outputs[0]->nbytes / sizeof(float); i++)
        y[i] = x[i] > 0 ? x[i] : 0;
    return NULL;
}

static const sy_kernel_def kernels[] = {
    {sizeof(sy_kernel_def), "com.switchyard.abi10", "Twice", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0, 0, NULL,
     twice_prepare, twice_run, free_state, NULL},
    {sizeof(sy_kernel_def), "com.switchyard.abi10", "Counter", 1, 0, "cpu_ref", SY_DT_BIT(SY_DT_FLOAT32), 0,
     SY_KERNEL_STATEFUL, NULL, counter_prepare, counter_run, free_state, counter_reset},
    {sizeof(sy_kernel_def), "", "Relu", 6, 0, "abi10_npu", SY_DT_BIT(SY_DT_FLOAT32), 0, 0, NULL, NULL, relu_run,
     NULL, NULL},
};

/* ---- provider ------------------------------------------------------------------- */
static const sy_memory_domain_def abi10_mem = {sizeof(sy_memory_domain_def), "abi10_mem", 64, 0, true};

typedef struct npu_state {
    bool decline_relu;
} npu_state;

static npu_state the_state; /* one environment at a time in this test */

static sy_status *npu_create(const sy_options *opts, void **state)
{
    const char *v = H->option_get(opts, "decline_relu");
    the_state.decline_relu = v && (!strcasecmp(v, "true") || !strcmp(v, "1"));
    if (v && !the_state.decline_relu && strcasecmp(v, "false") && strcmp(v, "0"))
        return H->status_new(SY_ERR_INVALID_CONFIG, "[provider.abi10_npu] decline_relu = '%s': expected true or false",
                             v);
    *state = &the_state;
    return NULL;
}

static void npu_destroy(void *state) { (void)state; }

static void npu_check_node(void *state, const sy_node *node, sy_claim *claim)
{
    const npu_state *s = state;
    if (s->decline_relu && !strcmp(H->node_op(node), "Relu")) {
        claim->take = false;
        claim->reason = SY_REASON_POLICY;
        snprintf(claim->text, sizeof claim->text, "Relu declined by decline_relu = true");
        return;
    }
    claim->take = true;
    claim->reason = SY_REASON_TAKEN;
}

static bool npu_can_copy(void *state, const char *src, const char *dst)
{
    (void)state;
    return (!strcmp(src, "host") && !strcmp(dst, "abi10_mem")) || (!strcmp(src, "abi10_mem") && !strcmp(dst, "host"));
}

static sy_status *npu_copy(void *state, const sy_tensor *src, sy_tensor *dst)
{
    (void)state;
    if (src->nbytes != dst->nbytes)
        return H->status_new(SY_ERR_INTERNAL, "abi10 copy: %zu bytes into %zu", src->nbytes, dst->nbytes);
    if (src->nbytes)
        memcpy(dst->data, src->data, src->nbytes);
    return NULL;
}

static const char *const npu_keys[] = {"decline_relu", NULL};

static const sy_provider_def provider = {
    sizeof(sy_provider_def), "abi10_npu", "provider of the ABI 1.0 stability plugin", 0, &abi10_mem, npu_keys,
    npu_create, npu_destroy, npu_check_node, npu_can_copy, npu_copy};

/* ---- extension ------------------------------------------------------------------ */
typedef struct abi10_ext {
    uint32_t struct_size;
    int (*answer)(void);
} abi10_ext;

static int answer(void) { return 42; }
static const abi10_ext ext = {sizeof ext, answer};

/* ---- the plugin ----------------------------------------------------------------- */
static sy_status *init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    H = host;
    if (host->abi_major != 1)
        return host->status_new(SY_ERR_ABI_MISMATCH, "abi10: host ABI %u", host->abi_major);
    host->log(SY_LOG_DEBUG, "abi10", "init on host ABI %u.%u", host->abi_major, host->abi_minor);
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
        sy_status *st = host->register_schema(p, &schemas[i]);
        if (st)
            return st;
    }
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        sy_status *st = host->register_kernel(p, &kernels[i]);
        if (st)
            return st;
    }
    sy_status *st = host->register_provider(p, &provider);
    if (st)
        return st;
    return host->register_extension(p, "abi10_ext", 1, &ext);
}

static const sy_plugin_desc desc = {
    sizeof(sy_plugin_desc), SY_ABI_MAJOR, SY_ABI_MINOR, "abi10", "1.0.0", "plugin built against the ABI 1.0 headers",
    SY_PLUGIN_KIND_OPS | SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_EXTENSION, NULL, init, NULL};

SY_PLUGIN_DEFINE(desc)
