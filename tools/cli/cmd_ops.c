/*
 * switchyard ops: the seed's operator contract (ops-mcu.md Tables A and B)
 * against what each provider registered: per seed row, the dtypes the seed
 * lists and those each provider has a kernel for. The coverage of a
 * provider is what its kernels' dtype masks say (sy_env_kernel_info); the
 * rules a provider applies to a node (its check_node) may still decline a
 * particular case, and they quote the row when they do. docs/mcu.md's
 * coverage table is this command's --markdown output.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct seed_row {
    char table; /* 'A' TFLite, 'B' ONNX */
    int num;
    const char *name, *op, *dtypes, *qop;
} seed_row;

static const seed_row rows[] = {
#include "seed_ops.inc"
};

static const struct {
    char code;
    sy_dtype dt;
    const char *name;
} dts[] = {{'F', SY_DT_FLOAT32, "fp32"}, {'Q', SY_DT_INT8, "int8"}, {'I', SY_DT_INT32, "int32"},
           {'B', SY_DT_BOOL, "bool"},    {'U', SY_DT_UINT8, "uint8"}};

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard ops [--config INI] [--provider NAME] [--markdown] [--min-percent P]\n\n"
               "For every operator of the seed's MCU contract (ops-mcu.md Table A: TFLite,\n"
               "Table B: ONNX) prints the dtypes the seed lists and, per provider, the ones it\n"
               "has a kernel for; then each provider's coverage of (row, dtype) pairs.\n"
               "An ONNX row's int8 form counts when the provider runs the op on int8 codes or\n"
               "the switchyard.quant op the QDQ pass folds it into.\n\n"
               "  --provider NAME   only this provider (repeatable)\n"
               "  --markdown        the table as Markdown (docs/mcu.md is generated from it)\n"
               "  --min-percent P   exit 1 when a listed provider covers less than P%% of the pairs\n");
}

/* does provider `prov` have a kernel for (domain, op) taking dtype dt? */
static bool runs(const sy_env *env, const char *prov, const char *domain, const char *op, sy_dtype dt)
{
    size_t n = sy_env_kernel_count(env);
    for (size_t i = 0; i < n; i++) {
        sy_kernel_info k = {.struct_size = sizeof k};
        if (!sy_env_kernel_info(env, i, &k) || !k.provider || strcmp(k.provider, prov) || strcmp(k.op, op))
            continue;
        if (strcmp(k.domain ? k.domain : "", domain))
            continue;
        if (!k.type_mask || (k.type_mask & SY_DT_BIT(dt)))
            return true;
    }
    return false;
}

static bool row_runs(const sy_env *env, const char *prov, const seed_row *r, sy_dtype dt)
{
    if (r->table == 'A')
        return runs(env, prov, "tflite", r->op, dt);
    if (runs(env, prov, "", r->op, dt))
        return true;
    return dt == SY_DT_INT8 && r->qop[0] && runs(env, prov, "switchyard.quant", r->qop, dt);
}

/* "fp32 int8" for the codes of `have` (a subset of the row's) */
static void dt_list(const char *codes, const bool *have, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t c = 0; codes[c]; c++)
        for (size_t d = 0; d < COUNT(dts); d++)
            if (dts[d].code == codes[c] && (!have || have[c])) {
                size_t u = strlen(buf);
                snprintf(buf + u, len - u, "%s%s", u ? " " : "", dts[d].name);
            }
    if (!buf[0])
        snprintf(buf, len, "-");
}

static sy_dtype dt_of(char code)
{
    for (size_t d = 0; d < COUNT(dts); d++)
        if (dts[d].code == code)
            return dts[d].dt;
    return SY_DT_UNDEFINED;
}

int cmd_ops(int argc, char **argv)
{
    const char *config = NULL, *provs[16];
    size_t np = 0;
    bool md = false;
    double min_pct = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (!strcmp(argv[i], "--provider") && i + 1 < argc) {
            if (np == COUNT(provs))
                return cli_usage_error("ops", "at most %zu --provider", COUNT(provs));
            provs[np++] = argv[++i];
        } else if (!strcmp(argv[i], "--markdown")) {
            md = true;
        } else if (!strcmp(argv[i], "--min-percent") && i + 1 < argc) {
            char *end = NULL;
            min_pct = strtod(argv[++i], &end);
            if (!end || *end || min_pct < 0 || min_pct > 100)
                return cli_usage_error("ops", "--min-percent takes a number from 0 to 100, got '%s'", argv[i]);
        } else {
            return cli_usage_error("ops", "unexpected argument '%s'", argv[i]);
        }
    }
    sy_env *env = NULL;
    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, config ? config : "default configuration");
    if (!np) {
        for (size_t i = 0; i < sy_env_provider_count(env) && np < COUNT(provs); i++)
            provs[np++] = sy_env_provider_name(env, i);
    } else {
        for (size_t p = 0; p < np; p++) {
            bool found = false;
            for (size_t i = 0; i < sy_env_provider_count(env); i++)
                found |= !strcmp(sy_env_provider_name(env, i), provs[p]);
            if (!found) {
                fprintf(stderr, "switchyard ops: no provider '%s' in this configuration\n", provs[p]);
                sy_env_release(env);
                return 1;
            }
        }
    }
    size_t pairs = 0, covered[16] = {0}, full[16] = {0};
    if (md) {
        printf("| Table | # | Seed operator | Op type | Seed dtypes |");
        for (size_t p = 0; p < np; p++)
            printf(" %s |", provs[p]);
        printf("\n|---|---|---|---|---|");
        for (size_t p = 0; p < np; p++)
            printf("---|");
        printf("\n");
    }
    for (size_t i = 0; i < COUNT(rows); i++) {
        const seed_row *r = &rows[i];
        char seed[64], have[64];
        dt_list(r->dtypes, NULL, seed, sizeof seed);
        pairs += strlen(r->dtypes);
        if (md)
            printf("| %c | %d | %s | %s | %s |", r->table, r->num, r->name, r->op, seed);
        else
            printf("%c%-3d %-24s %-24s seed: %-16s", r->table, r->num, r->name, r->op, seed);
        for (size_t p = 0; p < np; p++) {
            bool ok[8] = {false};
            size_t nok = 0;
            for (size_t c = 0; r->dtypes[c] && c < 8; c++)
                nok += ok[c] = row_runs(env, provs[p], r, dt_of(r->dtypes[c]));
            covered[p] += nok;
            full[p] += nok == strlen(r->dtypes);
            dt_list(r->dtypes, ok, have, sizeof have);
            if (md)
                printf(" %s |", have);
            else
                printf("  %s: %s", provs[p], have);
        }
        printf("\n");
    }
    int rc = 0;
    printf("%s", md ? "\n" : "\n");
    for (size_t p = 0; p < np; p++) {
        double pct = pairs ? 100.0 * (double)covered[p] / (double)pairs : 0;
        printf("%s%s: %zu of %zu (row, dtype) pairs (%.1f%%), %zu of %zu rows in every seed dtype\n", md ? "- " : "",
               provs[p], covered[p], pairs, pct, full[p], COUNT(rows));
        if (min_pct >= 0 && pct < min_pct)
            rc = 1;
    }
    sy_env_release(env);
    return rc;
}
