/* switchyard compile: finalize a model's fused partitions and write them as
 * a compile cache (sy_session_save_compiled), for run/bench --compiled. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard compile MODEL [--config INI] -o FILE\n\n"
               "Creates a session of MODEL (placement, fusion, the providers' compile) and\n"
               "writes its compiled partitions to FILE with each provider's compatibility\n"
               "string (provider, version, SoC, options). `switchyard run|bench MODEL\n"
               "--compiled FILE` loads them instead of compiling; a cache of another model,\n"
               "provider configuration or a corrupt file is refused.\n\n"
               "  --config INI   configuration (default: the embedded one, see docs/config.md)\n"
               "  -o FILE        the cache to write\n");
}

int cmd_compile(int argc, char **argv)
{
    const char *config = NULL, *path = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--config") && has_val) {
            config = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has_val) {
            out = argv[++i];
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            return cli_usage_error("compile", "unexpected argument '%s'", a);
        }
    }
    if (!path)
        return cli_usage_error("compile", "a MODEL path is required");
    if (!out)
        return cli_usage_error("compile", "-o FILE is required");
    int rc = 1;
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = cli_env(config, &env);
    if (st) {
        rc = cli_fail(st, config ? config : "default configuration");
        goto done;
    }
    if ((st = sy_model_load(env, path, &m))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    sy_session_options so = {.struct_size = sizeof so, .strict = -1};
    if ((st = sy_session_create(env, m, &so, &s))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    size_t n_compiled = 0, n_parts = 0;
    const char *prov = NULL;
    uint32_t n_nodes = 0;
    bool compiled = false, from_cache = false;
    for (size_t i = 0; sy_session_partition_info(s, i, &prov, &n_nodes, &compiled, &from_cache); i++) {
        printf("partition %zu: provider %s, %u nodes, %s\n", i, prov, n_nodes, compiled ? "compiled" : "not compiled");
        n_parts++;
        n_compiled += compiled;
    }
    if ((st = sy_session_save_compiled(s, out))) {
        rc = cli_fail(st, out);
        goto done;
    }
    printf("wrote %s: %zu compiled of %zu partitions\n", out, n_compiled, n_parts);
    rc = 0;
done:
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
    return rc;
}
