/* The options both modes of `switchyard codegen --train` take (codegen_train_args.h). */
#include "codegen_train_args.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

int cg_train_float(const char *opt, const char *v, float *out)
{
    char *end;
    float f = strtof(v, &end);
    if (end == v || *end || !(f >= 0) || (!strcmp(opt, "--momentum") && !(f < 1)))
        return -cli_usage_error("codegen", "%s: expected a number >= 0 (momentum below 1), got '%s'", opt, v);
    *out = f;
    return 0;
}

int cg_train_arg(int argc, char **argv, int *i, cg_train_args *a)
{
    const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(o, "--train"))
        return 1;
    if (o[0] != '-') {
        if (a->model)
            return -cli_usage_error("codegen", "one model only ('%s' and '%s')", a->model, o);
        a->model = o;
        return 1;
    }
    static const char *const with_value[] = {"--mode", "--target", "-o", "--output", "--data", "--trainable",
                                             "--sram-budget", "--steps", "--lr", "--momentum"};
    size_t k = 0, n = sizeof with_value / sizeof with_value[0];
    while (k < n && strcmp(o, with_value[k]))
        k++;
    if (k == n)
        return 0; /* the mode's, or unknown */
    if (!v)
        return -cli_usage_error("codegen", "%s needs a value", o);
    ++*i;
    if (!strcmp(o, "--mode"))
        return 1; /* how the command was chosen */
    if (!strcmp(o, "--target"))
        a->target = v;
    else if (!strcmp(o, "-o") || !strcmp(o, "--output"))
        a->dir = v;
    else if (!strcmp(o, "--data"))
        a->data = v;
    else if (!strcmp(o, "--trainable"))
        a->trainable = v;
    else if (!strcmp(o, "--sram-budget"))
        a->sram = v;
    else if (!strcmp(o, "--steps")) {
        if ((a->steps = cli_parse_long(v, 1, 100000)) < 0)
            return -cli_usage_error("codegen", "--steps: expected an integer from 1 to 100000, got '%s'", v);
    } else
        return cg_train_float(o, v, !strcmp(o, "--lr") ? &a->lr : &a->momentum) ? -2 : 1;
    return 1;
}

int cg_train_finish(cg_train_args *a)
{
    if (!a->model || !a->dir || !a->data || !a->target)
        return -cli_usage_error("codegen", "--train needs MODEL, --target, --data DIR and -o DIR");
    a->sram_budget = 0;
    if (!a->sram)
        return 0;
    char *end;
    unsigned long long b = strtoull(a->sram, &end, 10);
    unsigned long long mul = !strcmp(end, "K") || !strcmp(end, "KB")   ? 1024ull
                             : !strcmp(end, "M") || !strcmp(end, "MB") ? 1048576ull
                             : !*end && end != a->sram                 ? 1ull
                                                                       : 0ull;
    if (!mul || !b || a->sram[0] == '-' || b > (1ull << 40) / mul)
        return -cli_usage_error("codegen", "--sram-budget: expected a positive byte count (K/M suffix), got '%s'",
                                a->sram);
    a->sram_budget = b * mul;
    return 0;
}
