/* switchyard plugins: what the configuration loads, and what was refused. */
#include "cli.h"

#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard plugins [--config INI]\n\n"
               "Lists each plugin library the configuration finds: its path, ABI version,\n"
               "plugin version and what it registered (schemas, kernels, providers,\n"
               "quantization schemes, extensions); refused libraries with the reason.\n"
               "Then the providers in priority order.\n");
}

int cmd_plugins(int argc, char **argv)
{
    const char *config = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else {
            return cli_usage_error("plugins", "unexpected argument '%s'", argv[i]);
        }
    }
    sy_env *env = NULL;
    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, config ? config : "default configuration");
    size_t n = sy_env_plugin_count(env), loaded = 0;
    for (size_t i = 0; i < n; i++) {
        sy_plugin_info pi = {.struct_size = sizeof pi};
        sy_env_plugin_info(env, i, &pi);
        if (pi.loaded) {
            loaded++;
            printf("%s %s (ABI %u.%u)\n  path: %s\n", pi.name, pi.version ? pi.version : "?", pi.abi_major,
                   pi.abi_minor, pi.path);
            if (pi.description)
                printf("  about: %s\n", pi.description);
            printf("  registered: %u schemas, %u kernels, %u providers, %u quantization schemes, %u extensions\n",
                   pi.n_schemas, pi.n_kernels, pi.n_providers, pi.n_schemes, pi.n_extensions);
            if (pi.registered && pi.registered[0])
                printf("  names: %s\n", pi.registered);
        } else {
            printf("REFUSED %s\n  reason: %s\n", pi.path, pi.refusal);
        }
    }
    printf("\n%zu plugin librar%s loaded, %zu refused\n", loaded, loaded == 1 ? "y" : "ies", n - loaded);
    printf("providers in priority order:");
    for (size_t i = 0; i < sy_env_provider_count(env); i++)
        printf("%s %s%s", i ? "," : "", sy_env_provider_name(env, i),
               sy_env_provider_is_emulator(env, i) ? " (emulator)" : "");
    printf("\n");
    sy_env_release(env);
    return 0;
}
