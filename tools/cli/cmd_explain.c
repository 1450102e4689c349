/* switchyard explain: where each node runs, and why. */
#include "cli.h"
#include "compare.h"

#include <switchyard/ext/sy_emu_report.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f, "usage: switchyard explain MODEL [--config INI] [--dot FILE] [--requant onnx|gemmlowp|single_rounding]\n"
               "                         [--emulator-report] [--accuracy]\n\n"
               "Creates a session (placement, constant folding, memory plan) without\n"
               "running it, then prints one line per provider (nodes, partitions, copies,\n"
               "top declined ops with reasons) and one line per node: its provider and\n"
               "the reason code (taken, fallback, folded) with the declines of the\n"
               "providers asked before.\n\n"
               "  --dot FILE   also write a Graphviz graph coloured by provider\n"
               "  --requant F  requantization form of the session (onnx, gemmlowp, single_rounding); each\n"
               "               integer node shows the form it got and who chose it\n"
               "  --emulator-report  also print each emulated provider's report (htp, lpai,\n"
               "               aic): per node the memory verdict (VTCM / on-chip / scratch),\n"
               "               unit, modelled cycles, and the modelled latency\n"
               "  --accuracy   also run the model here and on cpu_ref alone (deterministic\n"
               "               inputs) and print the accuracy debugger's totals and first\n"
               "               node past tolerance (the full table: switchyard compare)\n");
}

/* Shared with `bench --emulator-report` (cli.h). */
void cli_print_emulator_reports(sy_env *env)
{
    for (size_t p = 0; p < sy_env_provider_count(env); p++) {
        if (!sy_env_provider_is_emulator(env, p))
            continue;
        char ext[96];
        snprintf(ext, sizeof ext, SY_EMU_REPORT_PREFIX "%s", sy_env_provider_name(env, p));
        /* report_env answers for this environment's provider; v1's report()
         * for whichever environment created one last (another environment
         * of this process, e.g. compare's, would show up there) */
        const sy_emu_report_ext *r = sy_get_extension(env, ext, SY_EMU_REPORT_VERSION);
        if (!r || r->struct_size < sizeof *r || !r->report_env)
            continue;
        size_t len = r->report_env(r, NULL, 0) + 1;
        char *buf = malloc(len);
        if (!buf)
            continue;
        r->report_env(r, buf, len);
        printf("\nemulator report (%s):\n%s", ext, buf);
        free(buf);
    }
}

typedef struct decline {
    const char *provider;
    char op[64];
    char why[192];
    int count;
} decline;

static const char *const palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                      "#fdb462", "#b3de69", "#fccde5", "#d9d9d9"};

static int provider_index(sy_env *env, const char *name)
{
    for (size_t i = 0; name && i < sy_env_provider_count(env); i++)
        if (!strcmp(sy_env_provider_name(env, i), name))
            return (int)i;
    return -1;
}

static void write_dot(FILE *f, sy_env *env, sy_session *s)
{
    fprintf(f, "digraph switchyard {\n  rankdir=TB;\n  node [shape=box, style=filled, fontname=\"sans\"];\n");
    size_t n = sy_session_node_count(s);
    for (size_t i = 0; i < n; i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        sy_session_node_placement(s, i, &p);
        int pi = provider_index(env, p.provider);
        const char *color = p.folded ? "#ffffff" : palette[pi < 0 ? 8 : pi % 8];
        fprintf(f, "  n%zu [label=\"%s\\n%s\\n%s\", fillcolor=\"%s\"];\n", i, p.op, p.name,
                p.folded ? "folded" : p.provider, color);
    }
    fprintf(f, "}\n");
}

/* One line per node; a control-flow node's subgraphs follow it, indented
 * (their nodes are placed when the node first runs: before that, "at run") */
static void print_nodes(sy_session *s, int depth)
{
    int ind = 2 * depth;
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement pl = {.struct_size = sizeof pl};
        sy_session_node_placement(s, i, &pl);
        /* the requantization form of an integer node and who chose it */
        const char *rq_src = NULL, *rq_form = sy_session_node_requant(s, i, &rq_src);
        char rq[96] = "";
        if (rq_form)
            snprintf(rq, sizeof rq, " requant=%s (%s)", rq_form, rq_src);
        size_t n_sub = sy_session_node_subgraph_count(s, i);
        /* the core's own ops say so in their reason; other nodes without a
         * provider are placed at run time (a dynamic session, a body) */
        bool core = !pl.provider && pl.reason_text &&
                    (!strncmp(pl.reason_text, "control flow", 12) || !strncmp(pl.reason_text, "sequence/optional", 17));
        const char *where = pl.provider ? pl.provider : core ? "core" : "at run";
        if (pl.folded)
            printf("%*s%-32s %-20s folded\n", ind, "", pl.name, pl.op);
        else if (pl.reason_text)
            printf("%*s%-32s %-20s %-10s %s%s  (%s)\n", ind, "", pl.name, pl.op, where, sy_reason_name(pl.reason), rq,
                   pl.reason_text);
        else
            printf("%*s%-32s %-20s %-10s %s%s\n", ind, "", pl.name, pl.op, where, sy_reason_name(pl.reason), rq);
        for (size_t k = 0; k < n_sub; k++) {
            const char *attr = "?";
            sy_session *sub = sy_session_node_subgraph(s, i, k, &attr);
            if (!sub)
                continue;
            printf("%*s%s: %zu nodes\n", ind + 4, "", attr, sy_session_node_count(sub));
            print_nodes(sub, depth + 3);
        }
    }
}

int cmd_explain(int argc, char **argv)
{
    const char *config = NULL, *path = NULL, *dot = NULL, *requant = NULL;
    bool accuracy = false;
    bool emu_report = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
            config = argv[++i];
        } else if (!strcmp(argv[i], "--requant") && i + 1 < argc) {
            if (!(requant = cli_requant_arg("explain", argv[++i])))
                return 2;
        } else if (!strcmp(argv[i], "--dot") && i + 1 < argc) {
            dot = argv[++i];
        } else if (!strcmp(argv[i], "--accuracy")) {
            accuracy = true;
        } else if (!strcmp(argv[i], "--emulator-report")) {
            emu_report = true;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            return cli_usage_error("explain", "unexpected argument '%s'", argv[i]);
        }
    }
    if (!path)
        return cli_usage_error("explain", "a MODEL path is required");
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    int rc = 1;
    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, config ? config : "default configuration");
    sy_session_options so = {.struct_size = sizeof so, .strict = -1, .requant = requant};
    if ((st = sy_model_load(env, path, &m)) || (st = sy_session_create(env, m, &so, &s))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    size_t n = sy_session_node_count(s), np = sy_env_provider_count(env);
    decline *dec = calloc(n * (np + 1) + 1, sizeof *dec);
    size_t n_dec = 0, folded = 0;
    printf("model: %s (%zu nodes)\n", path, n);
    for (size_t p = 0; p < np; p++) {
        const char *name = sy_env_provider_name(env, p);
        size_t nodes = 0, partitions = 0;
        const char *prev = NULL;
        for (size_t i = 0; i < n; i++) {
            sy_node_placement pl = {.struct_size = sizeof pl};
            sy_session_node_placement(s, i, &pl);
            if (pl.folded)
                continue;
            if (pl.provider && !strcmp(pl.provider, name)) {
                nodes++;
                if (!prev || strcmp(prev, name))
                    partitions++;
            }
            prev = pl.provider;
            /* declines of this provider, from "prov: why; prov2: why" */
            size_t plen = strlen(name);
            for (const char *r = pl.reason_text; dec && r && *r;) {
                const char *end = strstr(r, "; ");
                size_t len = end ? (size_t)(end - r) : strlen(r);
                if (len > plen + 2 && !strncmp(r, name, plen) && r[plen] == ':') {
                    char why[192];
                    snprintf(why, sizeof why, "%.*s", (int)(len - plen - 2), r + plen + 2);
                    size_t k = 0;
                    while (k < n_dec && !(dec[k].provider == name && !strcmp(dec[k].op, pl.op) && !strcmp(dec[k].why, why)))
                        k++;
                    if (k == n_dec) {
                        dec[n_dec].provider = name;
                        snprintf(dec[n_dec].op, sizeof dec[n_dec].op, "%s", pl.op);
                        snprintf(dec[n_dec].why, sizeof dec[n_dec].why, "%s", why);
                        n_dec++;
                    }
                    dec[k].count++;
                }
                r = end ? end + 2 : NULL;
            }
        }
        size_t copies = 0, copied = 0, bounced = 0;
        for (size_t c = 0; c < sy_session_copy_count(s); c++) {
            sy_copy_info ci = {.struct_size = sizeof ci};
            sy_session_copy_info(s, c, &ci);
            if (ci.consumer_provider && !strcmp(ci.consumer_provider, name)) {
                copies++;
                copied += ci.bytes;
                bounced += ci.via == NULL;
            }
        }
        printf("provider %s%s: %zu nodes, %zu partitions, %zu copies in (%zu through host bounce), %zu bytes copied\n",
               name, sy_env_provider_is_emulator(env, p) ? " (emulator)" : "", nodes, partitions, copies, bounced,
               copied);
        int shown = 0;
        for (size_t k = 0; k < n_dec && shown < 5; k++)
            if (dec[k].provider == name) {
                /* a "[taken] ..." entry is the note of a node the provider took */
                bool taken = !strncmp(dec[k].why, "[taken] ", 8);
                printf("  %s %d x %s: %s\n", taken ? "took" : "declined", dec[k].count, dec[k].op,
                       taken ? dec[k].why + 8 : dec[k].why);
                shown++;
            }
    }
    for (size_t i = 0; i < n; i++) {
        sy_node_placement pl = {.struct_size = sizeof pl};
        sy_session_node_placement(s, i, &pl);
        folded += pl.folded;
    }
    printf("folded into constants at creation: %zu nodes\n\nnodes:\n", folded);
    print_nodes(s, 1);
    free(dec);
    if (emu_report)
        cli_print_emulator_reports(env);
    if (accuracy) {
        printf("\naccuracy against cpu_ref alone (switchyard compare):\n");
        if ((st = cmp_accuracy_summary(stdout, path, config, requant))) {
            rc = cli_fail(st, "--accuracy");
            goto done;
        }
    }
    if (dot) {
        FILE *f = fopen(dot, "w");
        if (!f) {
            fprintf(stderr, "switchyard: --dot %s: %s\n", dot, strerror(errno));
            goto done;
        }
        write_dot(f, env, s);
        if (fclose(f) != 0) {
            fprintf(stderr, "switchyard: --dot %s: write failed\n", dot);
            goto done;
        }
        printf("wrote %s\n", dot);
    }
    rc = 0;
done:
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
    return rc;
}
