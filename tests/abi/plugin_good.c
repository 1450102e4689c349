/* A well-formed test plugin: one op schema (test.switchyard AbiScaleOp,
 * y = 2x + 1), its kernel on its own provider "abi_prov" (one option key,
 * "level"), one plugin option key ("greeting") and an extension table. Its
 * fini sets SY_ABI_GOOD_FINI=1 in the environment so the test can see when
 * the library was finalised. */
#include "abi_test_ext.h"

#include <stdlib.h>
#include <string.h>

static const sy_host_api *host;
static sy_plugin *self;
static char greeting_buf[64];
static const char *greeting_val;
static int level_val = -1;
static int runs;

static sy_status *scale_infer(sy_node *n)
{
    const sy_tensor *x = host->node_input(n, 0);
    if (!x)
        return host->status_new(SY_ERR_INVALID_ARGUMENT, "AbiScaleOp: input 0 is required");
    if (x->dtype != SY_DT_FLOAT32)
        return host->status_new(SY_ERR_TYPE, "AbiScaleOp: input must be float32, got %d", (int)x->dtype);
    return host->node_set_output(n, 0, x->dtype, x->rank, x->dims);
}

static const sy_op_schema scale_schema = {
    .struct_size = sizeof(sy_op_schema),
    .domain = ABI_TEST_DOMAIN,
    .name = "AbiScaleOp",
    .since_version = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .infer = scale_infer,
    .doc = "y = 2x + 1 (ABI test op)",
};

static const sy_op_schema late_schema = {
    .struct_size = sizeof(sy_op_schema),
    .domain = ABI_TEST_DOMAIN,
    .name = "AbiLateOp",
    .since_version = 1,
    .min_inputs = 1,
    .max_inputs = 1,
    .min_outputs = 1,
    .max_outputs = 1,
    .infer = scale_infer,
};

static sy_status *scale_run(void *state, const sy_kernel_io *io)
{
    (void)state;
    const sy_tensor *x = io->inputs[0];
    sy_tensor *y = io->outputs[0];
    size_t n = x->nbytes / sizeof(float);
    const float *xs = x->data;
    float *ys = y->data;
    for (size_t i = 0; i < n; i++)
        ys[i] = 2.0f * xs[i] + 1.0f;
    runs++;
    return NULL;
}

static const sy_kernel_def scale_kernel = {
    .struct_size = sizeof(sy_kernel_def),
    .domain = ABI_TEST_DOMAIN,
    .op = "AbiScaleOp",
    .since_version = 1,
    .provider = "abi_prov",
    .type_mask = SY_DT_BIT(SY_DT_FLOAT32),
    .type_input = 0,
    .run = scale_run,
};

static sy_status *prov_create(const sy_options *opts, void **state)
{
    const char *level = host->option_get(opts, "level");
    level_val = level ? atoi(level) : -1;
    *state = &level_val;
    return NULL;
}

static void prov_destroy(void *state) { (void)state; }

static const char *const prov_keys[] = {"level", NULL};

static const sy_provider_def prov = {
    .struct_size = sizeof(sy_provider_def),
    .name = "abi_prov",
    .description = "ABI test provider (host memory)",
    .option_keys = prov_keys,
    .create = prov_create,
    .destroy = prov_destroy,
};

static sy_status *ext_late_register(void) { return host->register_schema(self, &late_schema); }
static const char *ext_greeting(void) { return greeting_val; }
static int ext_provider_level(void) { return level_val; }
static int ext_kernel_runs(void) { return runs; }

static const abi_test_ext ext = {
    .struct_size = sizeof(abi_test_ext),
    .late_register = ext_late_register,
    .greeting = ext_greeting,
    .provider_level = ext_provider_level,
    .kernel_runs = ext_kernel_runs,
};

static sy_status *good_init(const sy_host_api *h, sy_plugin *p, const sy_options *opts)
{
    host = h;
    self = p;
    const char *g = h->option_get(opts, "greeting");
    greeting_val = NULL;
    if (g) {
        strncpy(greeting_buf, g, sizeof greeting_buf - 1);
        greeting_val = greeting_buf;
    }
    sy_status *st = h->register_schema(p, &scale_schema);
    if (!st)
        st = h->register_kernel(p, &scale_kernel);
    if (!st)
        st = h->register_provider(p, &prov);
    if (!st)
        st = h->register_extension(p, ABI_TEST_EXT_NAME, ABI_TEST_EXT_VERSION, &ext);
    return st;
}

static void good_fini(void) { setenv("SY_ABI_GOOD_FINI", "1", 1); }

static const char *const good_keys[] = {"greeting", NULL};

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "abi_good",
    .version = "1.2.3",
    .description = "well-formed ABI test plugin",
    .kinds = SY_PLUGIN_KIND_OPS | SY_PLUGIN_KIND_PROVIDER | SY_PLUGIN_KIND_EXTENSION,
    .option_keys = good_keys,
    .init = good_init,
    .fini = good_fini,
};

SY_PLUGIN_DEFINE(desc)
