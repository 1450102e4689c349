/*
 * A plugin that checks the ABI 1.2 per-environment state (never installed):
 * its state is reachable from every callback run on behalf of its
 * environment, and released exactly once per environment.
 *
 *   schema   test.switchyard.state::AddK (y = x + k, float32); infer checks
 *            it sees this environment's state
 *   kernel   AddK on state_npu; accepts and prepare check the state too;
 *            run reads k from the prepare state (the plugin state itself)
 *   provider state_npu: create_env receives the plugin state; check_node
 *            takes a node only when node_plugin_state is that same state
 *   options  [plugin.state_count] k = <float> (default 1), fail = true makes
 *            init fail after the state was set (the host releases it then)
 *   ext      "state_count.stats" v1: how many states were made, released,
 *            released twice or with a wrong state, and a callback that saw
 *            a state not its own (test_plugin_state.c reads them)
 */
#include "switchyard/sy_plugin.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* process-wide: the host table, and the counters of this test plugin (they
 * count over every environment on purpose) */
static const sy_host_api *H;
static atomic_int n_made, n_released, n_bad_release, n_bad_callback;

#define MAGIC 0x5354415445u /* "STATE" */

typedef struct count_env {
    uint64_t magic;
    float k;
} count_env;

static bool good(const count_env *e) { return e && e->magic == MAGIC; }
static void saw(const void *state)
{
    if (!good(state))
        atomic_fetch_add(&n_bad_callback, 1);
}

static void release(void *state)
{
    count_env *e = state;
    if (!good(e)) {
        atomic_fetch_add(&n_bad_release, 1);
        return;
    }
    e->magic = 0; /* a second release of the same state is caught here (and by ASan) */
    atomic_fetch_add(&n_released, 1);
    free(e);
}

static sy_status *infer(sy_node *n)
{
    saw(H->node_plugin_state(n));
    const sy_tensor *x = H->node_input(n, 0);
    if (!x || x->dtype != SY_DT_FLOAT32)
        return H->status_new(SY_ERR_TYPE, "AddK: input 0 must be float32");
    return H->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static bool accepts(const sy_node *n, char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    saw(H->node_plugin_state(n));
    return true;
}

static sy_status *prepare(sy_node *n, void **state)
{
    const count_env *e = H->node_plugin_state(n);
    saw(e);
    if (!good(e))
        return H->status_new(SY_ERR_INTERNAL, "AddK: no plugin state in prepare");
    *state = (void *)e;
    return NULL;
}

static sy_status *run(void *state, const sy_kernel_io *io)
{
    const count_env *e = state;
    const float *x = io->inputs[0]->data;
    float *y = io->outputs[0]->data;
    for (size_t i = 0; i < io->outputs[0]->nbytes / sizeof(float); i++)
        y[i] = x[i] + e->k;
    return NULL;
}

#define DOMAIN "test.switchyard.state"

static const sy_op_schema schema = {sizeof(sy_op_schema), DOMAIN, "AddK", 1, 1, 1, 1, 1, NULL, 0, infer, NULL, 0, 0,
                                    "y = x + k ([plugin.state_count] k)"};
static const sy_kernel_def kernel = {
    .struct_size = sizeof(sy_kernel_def), .domain = DOMAIN, .op = "AddK", .since_version = 1,
    .provider = "state_npu", .type_mask = SY_DT_BIT(SY_DT_FLOAT32), .type_input = 0,
    .accepts = accepts, .prepare = prepare, .run = run};

/* the provider's state is the plugin state it was created with */
static sy_status *create_env(void *plugin_state, const sy_options *opts, void **state)
{
    (void)opts;
    saw(plugin_state);
    *state = plugin_state;
    return NULL;
}

static void destroy(void *state) { saw(state); }

static void check_node(void *state, const sy_node *n, sy_claim *claim)
{
    saw(state);
    claim->take = state == H->node_plugin_state(n);
    if (!claim->take) {
        claim->reason = SY_REASON_POLICY;
        strcpy(claim->text, "check_node saw another environment's state");
    }
}

static const sy_provider_def provider = {
    .struct_size = sizeof(sy_provider_def), .name = "state_npu",
    .description = "test provider of the per-environment plugin state",
    .create_env = create_env, .destroy = destroy, .check_node = check_node};

typedef struct state_count_stats {
    uint32_t struct_size;
    int (*made)(void);
    int (*released)(void);
    int (*bad_release)(void);
    int (*bad_callback)(void);
} state_count_stats;

static int made(void) { return atomic_load(&n_made); }
static int released(void) { return atomic_load(&n_released); }
static int bad_release(void) { return atomic_load(&n_bad_release); }
static int bad_callback(void) { return atomic_load(&n_bad_callback); }
static const state_count_stats stats = {sizeof stats, made, released, bad_release, bad_callback};

static sy_status *init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    H = host;
    count_env *e = malloc(sizeof *e);
    if (!e)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "state_count: out of memory");
    e->magic = MAGIC;
    e->k = 1.0f;
    const char *k = opts ? host->option_get(opts, "k") : NULL;
    if (k)
        e->k = strtof(k, NULL);
    sy_status *st = host->plugin_set_state(p, e, release);
    if (st) {
        free(e);
        return st;
    }
    atomic_fetch_add(&n_made, 1);
    const char *fail = opts ? host->option_get(opts, "fail") : NULL;
    if (fail && !strcmp(fail, "true"))
        return host->status_new(SY_ERR_INVALID_CONFIG, "state_count: fail = true");
    if (!st)
        st = host->register_schema(p, &schema);
    if (!st)
        st = host->register_kernel(p, &kernel);
    if (!st)
        st = host->register_provider(p, &provider);
    if (!st)
        st = host->register_extension(p, "state_count.stats", 1, &stats);
    return st;
}

static void fini(void) {}

static const char *const keys[] = {"k", "fail", NULL};

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "state_count",
    .version = "1.0.0",
    .description = "test: the per-environment plugin state (ABI 1.2)",
    .kinds = SY_PLUGIN_KIND_OPS | SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = keys,
    .init = init,
    .fini = fini,
};

SY_PLUGIN_DEFINE(desc)
