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
            "                         [--brief] [--requant onnx|gemmlowp|single_rounding]\n\n"
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

void cmp_print_totals(FILE *f, const cmp_result *r)
{
    double worst = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->rows[i].b && !r->rows[i].shape_mismatch && r->rows[i].rel > worst)
            worst = r->rows[i].rel;
    fprintf(f, "totals: %zu node outputs on A, %zu matched, %zu past tolerance, %zu without a value on B, %zu of B's "
               "not seen on A; worst relative error %.3g\n",
            r->n, r->matched, r->past, r->unmatched_a, r->unmatched_b, worst);
}

sy_status *cmp_accuracy_summary(FILE *f, const char *model, const char *config, const char *requant)
{
    cmp_side sa = {.model = model, .config = config, .requant = requant};
    cmp_side sb = {.model = model, .ini_text = reference_ini, .requant = requant};
    cli_inputs in = {.quiet = 1};
    cmp_tol tol;
    cmp_tol_default(&tol);
    cmp_capture ca = {0}, cb = {0};
    cmp_result r = {0};
    sy_status *st = cmp_capture_run(&sb, &in, &cb);
    if (!st)
        st = cmp_capture_run(&sa, &in, &ca);
    if (!st)
        st = cmp_compare(&ca, &cb, &tol, false, &r);
    if (!st) {
        cmp_print_totals(f, &r);
        cmp_print_first(f, &r);
    }
    cmp_result_free(&r);
    cmp_capture_free(&ca);
    cmp_capture_free(&cb);
    return st;
}

/* ---- --bisect ------------------------------------------------------------ */

enum { MAX_PINS = 16, MAX_MEMBERS = 256 };

/* the pinned nodes, owning their strings */
typedef struct pinset {
    sy_placement_override p[MAX_PINS + MAX_MEMBERS];
    char *owned[2 * (MAX_PINS + MAX_MEMBERS)];
    uint32_t n, n_owned;
} pinset;

static bool pin_add(pinset *ps, const char *node, const char *provider)
{
    if (ps->n == MAX_PINS + MAX_MEMBERS)
        return false;
    char *a = strdup(node), *b = strdup(provider);
    if (!a || !b) {
        free(a);
        free(b);
        return false;
    }
    ps->owned[ps->n_owned++] = a;
    ps->owned[ps->n_owned++] = b;
    ps->p[ps->n++] = (sy_placement_override){a, b};
    return true;
}

static void pin_free(pinset *ps)
{
    for (uint32_t i = 0; i < ps->n_owned; i++)
        free(ps->owned[i]);
    ps->n = ps->n_owned = 0;
}

/* A run of side A with `pins`, compared with B: *out and *cap for the caller to free. */
static sy_status *probe(const args *a, const cmp_side *sa, const cmp_capture *cb, const sy_placement_override *pins,
                        uint32_t n_pins, cmp_capture *cap, cmp_result *out)
{
    cmp_side pinned = *sa;
    pinned.pins = pins;
    pinned.n_pins = n_pins;
    memset(cap, 0, sizeof *cap);
    memset(out, 0, sizeof *out);
    sy_status *st = cmp_capture_run(&pinned, &a->in, cap);
    if (!st)
        st = cmp_compare(cap, cb, &a->tol, a->against_model != NULL, out);
    return st;
}

/* Is `value` within tolerance in r? */
static bool value_ok(const cmp_result *r, const char *value, double *measure)
{
    long k = cmp_find_row(r, value);
    *measure = k >= 0 && r->rows[k].b ? r->rows[k].measure : NAN;
    return k >= 0 && r->rows[k].b && !r->rows[k].past;
}

/* The value is an output of a fused partition: its error arose in one of
 * the members. Move them all to `to`; if that removes the error, move each
 * alone to find the one that is wrong. */
static int bisect_partition(const args *a, const cmp_side *sa, const cmp_capture *cb, const cmp_capture *ca,
                            pinset *ps, const char *value, int32_t part, const char *from, const char *to)
{
    uint32_t base = ps->n;
    size_t n_members = 0;
    for (size_t i = 0; i < ca->n_nodes; i++)
        if (ca->node_partition[i] == part && ca->node_names[i] && n_members < MAX_MEMBERS) {
            if (!pin_add(ps, ca->node_names[i], to))
                return 1;
            n_members++;
        }
    printf("bisect: '%s' is an output of fused partition %d (%zu nodes on %s): moving all of them to %s\n", value,
           part, n_members, from, to);
    cmp_capture c;
    cmp_result r;
    double m;
    sy_status *st = probe(a, sa, cb, ps->p, ps->n, &c, &r);
    if (st)
        return cli_fail(st, "bisect");
    bool gone = value_ok(&r, value, &m);
    cmp_result_free(&r);
    cmp_capture_free(&c);
    if (!gone) {
        printf("bisect: the error stays at '%s' (%.3g) with the whole partition on %s\n", value, m, to);
        printf("bisect verdict: partition %d computes like the reference; the error comes from its inputs\n", part);
        return 0;
    }
    printf("bisect: the error disappears at '%s' (%.3g); now each of the %zu nodes alone\n", value, m, n_members);
    for (size_t k = 0; k < n_members; k++) {
        sy_placement_override one[MAX_PINS + 1];
        memcpy(one, ps->p, base * sizeof *one);
        one[base] = ps->p[base + k];
        if ((st = probe(a, sa, cb, one, base + 1, &c, &r)))
            return cli_fail(st, "bisect");
        gone = value_ok(&r, value, &m);
        cmp_result_free(&r);
        cmp_capture_free(&c);
        if (gone) {
            printf("bisect: with only %s on %s the error disappears at '%s' (%.3g)\n", one[base].node, to, value, m);
            printf("bisect verdict: node '%s' is wrong on %s\n", one[base].node, from);
            return 0;
        }
    }
    printf("bisect: no single node of the partition removes it\n");
    printf("bisect verdict: the error is spread over partition %d (%zu nodes on %s; e.g. reduced precision "
           "throughout), no single node is wrong\n",
           part, n_members, from);
    return 0;
}

/* --bisect: move the first diverging node to B's provider for it and rerun,
 * following the first divergence while moving exposes earlier values.
 * Returns 0, or 1 after an error. */
static int bisect(const args *a, const cmp_side *sa, const cmp_capture *cb, const cmp_capture *ca0,
                  const cmp_result *r0)
{
    pinset ps = {.n = 0};
    cmp_capture ca = {0};
    cmp_result r = {0};
    const cmp_capture *cur_cap = ca0;
    const cmp_row *w = &r0->rows[r0->first];
    char value[512], node[512], from[128], to[128];
    int rc = 1;
    snprintf(value, sizeof value, "%s", w->a->name);
    snprintf(node, sizeof node, "%s", w->a->node);
    snprintf(from, sizeof from, "%s", w->a->provider);
    snprintf(to, sizeof to, "%s", w->b->provider);
    int32_t part = w->a->partition;
    double before = w->measure;
    for (int step = 0;; step++) {
        if (!strcmp(from, to)) {
            printf("bisect: %s already runs on %s, B's provider for it: the difference is not the provider's; it "
                   "comes from the model (e.g. quantization) or from its inputs\n",
                   node, to);
            printf("bisect verdict: not a provider defect at '%s'\n", node);
            rc = 0;
            break;
        }
        if (part >= 0) {
            rc = bisect_partition(a, sa, cb, cur_cap, &ps, value, part, from, to);
            break;
        }
        if (step == MAX_PINS || !pin_add(&ps, node, to)) {
            printf("bisect: stopped after %u moved nodes\n", ps.n);
            rc = 0;
            break;
        }
        printf("bisect: moving %s from %s to %s and running A again\n", node, from, to);
        cmp_result_free(&r);
        cmp_capture_free(&ca);
        sy_status *st = probe(a, sa, cb, ps.p, ps.n, &ca, &r);
        if (st) {
            cli_fail(st, "bisect");
            break;
        }
        cur_cap = &ca;
        double now;
        long row = cmp_find_row(&r, value);
        if (value_ok(&r, value, &now)) {
            printf("bisect: the error disappears at '%s' (%.3g -> %.3g, tolerance %.3g)\n", value, before, now,
                   r.rows[row].tol);
            printf("bisect verdict: node '%s' is wrong on %s\n", node, from);
            if (r.first >= 0) {
                printf("bisect: with it moved, ");
                cmp_print_first(stdout, &r);
            } else {
                printf("bisect: with it moved, every value is within tolerance\n");
            }
            rc = 0;
            break;
        }
        if (r.first >= 0 && (row < 0 || r.first < row) && strcmp(r.rows[r.first].a->node, node)) {
            /* moving it exposed an earlier divergence: follow it */
            const cmp_row *e = &r.rows[r.first];
            printf("bisect: the error stays at '%s'; an earlier value now diverges: '%s' of %s on %s\n", value,
                   e->a->name, e->a->node, e->a->provider);
            snprintf(value, sizeof value, "%s", e->a->name);
            snprintf(node, sizeof node, "%s", e->a->node);
            snprintf(from, sizeof from, "%s", e->a->provider);
            snprintf(to, sizeof to, "%s", e->b->provider);
            part = e->a->partition;
            before = e->measure;
            continue;
        }
        printf("bisect: the error stays at '%s' (%.3g -> %.3g) with %s on %s\n", value, before, now, node, to);
        printf("bisect verdict: node '%s' computes like the reference; the error comes from its inputs "
               "(differences below tolerance, amplified)\n",
               node);
        rc = 0;
        break;
    }
    cmp_result_free(&r);
    cmp_capture_free(&ca);
    pin_free(&ps);
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
    cmp_print_totals(stdout, &r);
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
        if (bisect(&a, &sa, &cb, &ca, &r))
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
