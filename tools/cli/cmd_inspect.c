/* switchyard inspect: what a model is, before running it. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard inspect MODEL [--config INI]\n\n"
               "Prints the model's format, IR version and opset imports, its inputs and\n"
               "outputs with shapes (symbolic dims by name), the initializer bytes, a\n"
               "histogram of its operators, and the operators that no loaded plugin\n"
               "provides.\n");
}

typedef struct op_count {
    const char *domain, *op;
    int count;
} op_count;

static int cmp_count(const void *a, const void *b)
{
    const op_count *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(x->op, y->op);
}

static void print_value(const char *kind, size_t i, const sy_value_info *vi)
{
    printf("  %s %zu '%s' %s [", kind, i, vi->name, sy_dtype_name(vi->dtype));
    for (int32_t d = 0; d < vi->rank; d++) {
        if (vi->dims[d] >= 0)
            printf("%s%lld", d ? "," : "", (long long)vi->dims[d]);
        else
            printf("%s%s", d ? "," : "", vi->dim_names[d] ? vi->dim_names[d] : "?");
    }
    printf("]%s\n", vi->rank < 0 ? " (rank unknown)" : "");
}

int cmd_inspect(int argc, char **argv)
{
    const char *config = NULL, *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            return cli_usage_error("inspect", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path)
        return cli_usage_error("inspect", "a MODEL path is required");
    sy_env *env = NULL;
    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, config ? config : "default configuration");
    sy_model *m = NULL;
    st = sy_model_load_flags(env, path, SY_LOAD_SKIP_OP_CHECK, &m);
    if (st) {
        sy_env_release(env);
        return cli_fail(st, NULL);
    }
    printf("model: %s\n  format %s, IR version %lld\n  opsets:", path, sy_model_format(m),
           (long long)sy_model_ir_version(m));
    for (size_t i = 0; i < sy_model_opset_count(m); i++) {
        const char *dom;
        int64_t ver;
        sy_model_opset(m, i, &dom, &ver);
        printf("%s %s %lld", i ? "," : "", dom[0] ? dom : "ai.onnx", (long long)ver);
    }
    printf("\n");
    for (size_t i = 0; i < sy_model_input_count(m); i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_input_info(m, i, &vi);
        print_value("input", i, &vi);
    }
    for (size_t i = 0; i < sy_model_output_count(m); i++) {
        sy_value_info vi = {.struct_size = sizeof vi};
        sy_model_output_info(m, i, &vi);
        print_value("output", i, &vi);
    }
    size_t nn = sy_model_node_count(m);
    printf("  initializers: %zu bytes\n  nodes: %zu\n", sy_model_initializer_bytes(m), nn);
    /* one entry per distinct op, grown as they appear (not one per node:
     * a 10^6-node chain of one op needs one) */
    op_count *counts = NULL;
    size_t nc = 0, cap = 0;
    for (size_t i = 0; i < nn; i++) {
        const char *dom, *op;
        sy_model_node(m, i, NULL, &dom, &op);
        size_t k = 0;
        while (k < nc && (strcmp(counts[k].op, op) || strcmp(counts[k].domain, dom)))
            k++;
        if (k == nc) {
            if (nc == cap) {
                op_count *g = realloc(counts, (cap = cap ? 2 * cap : 16) * sizeof *counts);
                if (!g) {
                    free(counts);
                    sy_model_release(m);
                    sy_env_release(env);
                    fprintf(stderr, "switchyard: inspect: out of memory for the op histogram\n");
                    return 1;
                }
                counts = g;
            }
            counts[nc++] = (op_count){dom, op, 0};
        }
        counts[k].count++;
    }
    if (counts)
        qsort(counts, nc, sizeof *counts, cmp_count);
    printf("  op histogram:\n");
    for (size_t k = 0; k < nc; k++)
        printf("    %5d  %s%s%s\n", counts[k].count, counts[k].domain, counts[k].domain[0] ? "::" : "", counts[k].op);
    free(counts);
    char *missing = sy_model_unsupported_ops(m);
    if (missing)
        printf("  ops no loaded plugin supports: %s\n", missing);
    else
        printf("  every op is provided by a loaded plugin\n");
    free(missing);
    sy_model_release(m);
    sy_env_release(env);
    return 0;
}
