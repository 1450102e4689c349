/*
 * cpu_ref: the CPU reference provider. It is the fallback: it takes every
 * node that has a kernel registered for "cpu_ref" (check_node NULL). It
 * registers no kernels itself; the op-family plugins (ops_*) do, naming
 * "cpu_ref" as their provider. Its memory is plain host RAM.
 */
#include "switchyard/sy_sdk.h"

static const sy_memory_domain_def host_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "host",
    .alignment = 64,
    .capacity = 0,
    .host_visible = true,
};

static const char *const no_keys[] = {NULL};

static sy_status *cpu_create(const sy_options *opts, void **state)
{
    (void)opts;
    *state = NULL;
    return NULL;
}

static void cpu_destroy(void *state) { (void)state; }

static const sy_provider_def cpu_ref_provider = {
    .struct_size = sizeof(sy_provider_def),
    .name = "cpu_ref",
    .description = "portable C reference kernels on host memory (fallback provider)",
    .flags = SY_PROVIDER_FALLBACK,
    .domain = &host_domain,
    .option_keys = no_keys,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .check_node = NULL,
    .can_copy = NULL,
    .copy = NULL,
};

static sy_status *cpu_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    return host->register_provider(p, &cpu_ref_provider);
}

static void cpu_fini(void) {}

static const sy_plugin_desc cpu_ref_desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "cpu_ref",
    .version = "0.1.0",
    .description = "CPU reference provider (host memory, fallback)",
    .kinds = SY_PLUGIN_KIND_PROVIDER,
    .option_keys = NULL,
    .init = cpu_init,
    .fini = cpu_fini,
};

SY_PLUGIN_DEFINE(cpu_ref_desc)
