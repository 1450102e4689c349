/*
 * switchyard compare: the accuracy debugger. Runs a model on two
 * deployments (or a quantized model against its float original), matches
 * every node output by name and reports the error per node, the first node
 * past tolerance, and with --bisect whether that node itself is wrong.
 */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* side B when --against is not given: the CPU reference alone */
static const char reference_ini[] = "[switchyard]\n"
                                    "plugin_dirs = @default\n"
                                    "providers = cpu_ref\n"
                                    "strict = false\n";

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard compare MODEL [--config A.ini] [--against B.ini] [--against-model FLOAT.onnx]\n"
            "                         [--input-dir DIR | --inputs DIR | --input NAME=FILE ...]\n"
            "                         [--tol KEY=VALUE ...] [--bisect] [--csv FILE] [--svg FILE]\n"
            "                         [--brief] [--requant onnx|gemmlowp]\n\n"
            "Runs MODEL on deployment A (--config) and on deployment B (--against; default:\n"
            "cpu_ref alone), sees every node's outputs through the run observer, matches them\n"
            "by value name and prints per node: the provider on each side, max abs error,\n"
            "relative error ||a-b||/||b||, cosine similarity, and for integer outputs the\n"
            "number of differing codes and the largest code difference (LSB); then the first\n"
            "node past tolerance and totals. Values inside a fused partition are seen at the\n"
            "partition's outputs (column 'fused': pINDEX/NODES).\n\n"
            "  --config A.ini        deployment A (default: the embedded configuration)\n"
            "  --against B.ini       deployment B (default: providers = cpu_ref)\n"
            "  --against-model F     side B runs the float model F instead: MODEL is its quantized\n"
            "                        (QDQ) version; dequantized values are matched to the float\n"
            "                        ones (names t__qN / t__fN / t__dqN stand for t)\n"
            "  --input-dir DIR       inputs DIR/input_N.pb or .npy (also --inputs DIR)\n"
            "  --input NAME=FILE     one input (repeatable); others get a deterministic pattern\n"
            "  --tol KEY=VALUE       override a tolerance (repeatable): float32, float16, bfloat16\n"
            "                        (relative error), quantized (relative error of a dequantized\n"
            "                        value vs float), lsb (quantized codes), integer (plain integers)\n"
            "  --bisect              move the first diverging node to B's provider for it, rerun A,\n"
            "                        and say whether the error disappears (the node is wrong) or\n"
            "                        stays (it comes from its inputs)\n"
            "  --csv FILE            every row as CSV\n"
            "  --svg FILE            a chart: error per node in execution order, provider as colour,\n"
            "                        tolerance as a dashed line\n"
            "  --brief               print only rows past tolerance\n"
            "  --requant FORM        requantization form for both sides (docs/quantization.md)\n\n"
            "Exit status: 0 every value within tolerance, 3 some value past it, 1 error, 2 usage.\n"
            "See docs/accuracy-debugging.md.\n");
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

typedef struct args {
    const char *model, *config, *against, *against_model, *csv, *svg, *requant;
    cli_inputs in;
    cmp_tol tol;
    bool bisect, brief;
} args;

static void tol_line(const cmp_tol *t)
{
    printf("tolerances: float32 %.3g, float16 %.3g, bfloat16 %.3g (relative error); quantized %.3g (relative "
           "error vs float); lsb %.3g, integer %.3g (max code difference)\n",
           t->f32, t->f16, t->bf16, t->quant, t->lsb, t->integer);
}

static void print_totals(const cmp_result *r)
{
    double worst = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].b && !r->rows[i].shape_mismatch && r->rows[i].rel > worst)
            worst = r->rows[i].rel;
    printf("totals: %zu node outputs on A, %zu matched, %zu past tolerance, %zu without a value on B, %zu of B's "
           "not seen on A; worst relative error %.3g\n",
           r->n, r->matched, r->past, r->unmatched_a, r->unmatched_b, worst);
}

/* --bisect: pin the first diverging node to B's provider for it and rerun,
 * following the first divergence while pinning exposes earlier values (a
 * fused partition split open). Returns 0, or 1 after an error. */
static int bisect(const args *a, const cmp_side *side_a, const cmp_capture *cb, const cmp_result *r0)
{
    enum { MAX_PINS = 16 };
    sy_placement_override pins[MAX_PINS];
    char *pin_node[MAX_PINS], *pin_prov[MAX_PINS];
    uint32_t n_pins = 0;
    const cmp_row *w = &r0->rows[r0->first];
    char *value = strdup(w->a->name);
    double before = w->measure;
    int rc = 1;
    if (!value)
        return 1;
    char *cur_node = strdup(w->a->node), *cur_from = strdup(w->a->provider), *cur_to = strdup(w->b->provider);
    if (!cur_node || !cur_from || !cur_to)
        goto out;
    for (;;) {
        if (!strcmp(cur_from, cur_to)) {
            printf("bisect: %s already runs on %s, B's provider for it: the difference is not the provider's; it "
                   "comes from the model (e.g. quantization) or from its inputs\n",
                   cur_node, cur_to);
            printf("bisect verdict: not a provider defect at '%s'\n", cur_node);
            rc = 0;
            goto out;
        }
        if (n_pins == MAX_PINS) {
            printf("bisect: stopped after %d moved nodes\n", MAX_PINS);
            rc = 0;
            goto out;
        }
        pin_node[n_pins] = cur_node;
        pin_prov[n_pins] = cur_to;
        pins[n_pins] = (sy_placement_override){cur_node, cur_to};
        n_pins++;
        cur_node = cur_to = NULL;
        printf("bisect: moving %s from %s to %s and running A again\n", pin_node[n_pins - 1], cur_from,
               pin_prov[n_pins - 1]);
        cmp_side pinned = *side_a;
        pinned.pins = pins;
        pinned.n_pins = n_pins;
        cmp_capture ca = {0};
        cmp_result r = {0};
        sy_status *st = cmp_capture_run(&pinned, &a->in, &ca);
        if (!st)
            st = cmp_compare(&ca, cb, &a->tol, a->against_model != NULL, &r);
        if (st) {
            cmp_capture_free(&ca);
            cli_fail(st, "bisect");
            goto out;
        }
        long row = cmp_find_row(&r, value);
        const cmp_row *now = row >= 0 ? &r.rows[row] : NULL;
        long first_row = r.first;
        if (now && now->b && !now->past) {
            printf("bisect: the error disappears at '%s' (%.3g -> %.3g, tolerance %.3g)\n", value, before,
                   now->measure, now->tol);
            printf("bisect verdict: node '%s' is wrong on %s\n", pin_node[n_pins - 1], cur_from);
            if (first_row >= 0) {
                printf("bisect: with it moved, ");
                cmp_print_first(stdout, &r);
            } else {
                printf("bisect: with it moved, every value is within tolerance\n");
            }
            rc = 0;
        } else if (first_row >= 0 && (row < 0 || first_row < row) && strcmp(r.rows[first_row].a->node, pin_node[n_pins - 1])) {
            /* pinning exposed an earlier divergence (a fused partition split
             * open, or values now visible): follow it */
            const cmp_row *e = &r.rows[first_row];
            printf("bisect: the error stays at '%s'; an earlier value now diverges: '%s' of %s on %s\n", value,
                   e->a->name, e->a->node, e->a->provider);
            free(value);
            value = strdup(e->a->name);
            before = e->measure;
            free(cur_from);
            cur_from = strdup(e->a->provider);
            cur_node = strdup(e->a->node);
            cur_to = strdup(e->b->provider);
            cmp_result_free(&r);
            cmp_capture_free(&ca);
            if (!value || !cur_from || !cur_node || !cur_to)
                goto out;
            continue;
        } else {
            printf("bisect: the error stays at '%s' (%.3g -> %.3g, tolerance %.3g) with %s on %s\n", value, before,
                   now && now->b ? now->measure : NAN, now && now->b ? now->tol : NAN, pin_node[n_pins - 1],
                   pin_prov[n_pins - 1]);
            printf("bisect verdict: node '%s' computes like the reference; the error comes from its inputs "
                   "(differences below tolerance, amplified)\n",
                   pin_node[n_pins - 1]);
            rc = 0;
        }
        cmp_result_free(&r);
        cmp_capture_free(&ca);
        goto out;
    }
out:
    for (uint32_t i = 0; i < n_pins; i++) {
        free(pin_node[i]);
        free(pin_prov[i]);
    }
    free(cur_node);
    free(cur_from);
    free(cur_to);
    free(value);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    args a = {0};
    cmp_tol_default(&a.tol);
    const char **pairs = calloc((size_t)argc, sizeof *pairs);
    if (!pairs)
        return 1;
    a.in.pairs = pairs;
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(s, "--help") || !strcmp(s, "-h")) {
            help(stdout);
            free(pairs);
            return 0;
        } else if (!strcmp(s, "--config") && has_val) {
            a.config = argv[++i];
        } else if (!strcmp(s, "--against") && has_val) {
            a.against = argv[++i];
        } else if (!strcmp(s, "--against-model") && has_val) {
            a.against_model = argv[++i];
        } else if ((!strcmp(s, "--input-dir") || !strcmp(s, "--inputs")) && has_val) {
            a.in.dir = argv[++i];
        } else if (!strcmp(s, "--input") && has_val) {
            pairs[a.in.n_pairs++] = argv[++i];
        } else if (!strcmp(s, "--tol") && has_val) {
            if (!cmp_tol_parse(&a.tol, argv[++i])) {
                cli_usage_error("compare", "--tol expects KEY=VALUE with KEY float32, float16, bfloat16, quantized, "
                                           "lsb or integer and VALUE >= 0, got '%s'",
                                argv[i]);
                goto done;
            }
        } else if (!strcmp(s, "--csv") && has_val) {
            a.csv = argv[++i];
        } else if (!strcmp(s, "--svg") && has_val) {
            a.svg = argv[++i];
        } else if (!strcmp(s, "--requant") && has_val) {
            if (!(a.requant = cli_requant_arg("compare", argv[++i])))
                goto done;
        } else if (!strcmp(s, "--bisect")) {
            a.bisect = true;
        } else if (!strcmp(s, "--brief")) {
            a.brief = true;
        } else if (s[0] != '-' && !a.model) {
            a.model = s;
        } else {
            cli_usage_error("compare", "unexpected argument '%s'", s);
            goto done;
        }
    }
    if (!a.model) {
        cli_usage_error("compare", "a MODEL path is required");
        goto done;
    }
    if (a.in.dir && a.in.n_pairs) {
        cli_usage_error("compare", "--input-dir and --input cannot be combined");
        goto done;
    }
    cmp_side sa = {.model = a.model, .config = a.config, .requant = a.requant};
    cmp_side sb = {.model = a.against_model ? a.against_model : a.model,
                   .config = a.against,
                   .ini_text = a.against ? NULL : reference_ini,
                   .requant = a.requant};
    printf("compare %s\n  A: %s on %s\n  B: %s on %s\n", a.model, a.model, a.config ? a.config : "the embedded configuration",
           sb.model, a.against ? a.against : "cpu_ref alone");
    tol_line(&a.tol);
    cmp_capture ca = {0}, cb = {0};
    cmp_result r = {0};
    rc = 1;
    sy_status *st = cmp_capture_run(&sb, &a.in, &cb);
    if (st) {
        cli_fail(st, "side B");
        goto free_all;
    }
    if ((st = cmp_capture_run(&sa, &a.in, &ca))) {
        cli_fail(st, "side A");
        goto free_all;
    }
    if ((st = cmp_compare(&ca, &cb, &a.tol, a.against_model != NULL, &r))) {
        cli_fail(st, "compare");
        goto free_all;
    }
    cmp_print_table(stdout, &r, !a.brief);
    print_totals(&r);
    cmp_print_first(stdout, &r);
    if (a.csv) {
        if ((st = cmp_write_csv(a.csv, &r))) {
            cli_fail(st, "--csv");
            goto free_all;
        }
        printf("wrote %s\n", a.csv);
    }
    if (a.svg) {
        char title[1024];
        snprintf(title, sizeof title, "%s: %s vs %s", base_name(a.model), a.config ? base_name(a.config) : "default",
                 a.against_model ? base_name(a.against_model) : a.against ? base_name(a.against) : "cpu_ref");
        if ((st = cmp_write_svg(a.svg, &r, title))) {
            cli_fail(st, "--svg");
            goto free_all;
        }
        printf("wrote %s\n", a.svg);
    }
    if (a.bisect && r.first >= 0) {
        if (bisect(&a, &sa, &cb, &r))
            goto free_all;
    } else if (a.bisect) {
        printf("bisect: nothing to bisect, every value is within tolerance\n");
    }
    rc = r.first >= 0 ? 3 : 0;
free_all:
    cmp_result_free(&r);
    cmp_capture_free(&ca);
    cmp_capture_free(&cb);
done:
    free(pairs);
    return rc;
}
