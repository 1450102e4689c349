/* The accuracy debugger's reports: terminal table, CSV, SVG chart. */
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void fmt_num(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3g", v);
}

static void shape_text(const cmp_value *v, char *buf, size_t len)
{
    cli_format_dims(v->rank, v->dims, buf, len);
}

static void fused_text(const cmp_value *v, char *buf, size_t len)
{
    if (v->partition >= 0)
        snprintf(buf, len, "p%d/%u", v->partition, v->partition_nodes);
    else
        snprintf(buf, len, "-");
}

void cmp_print_first(FILE *f, const cmp_result *r)
{
    if (r->first < 0) {
        fprintf(f, "first node past tolerance: none (%zu values compared)\n", r->matched);
        return;
    }
    const cmp_row *w = &r->rows[r->first];
    fprintf(f, "first node past tolerance: #%ld %s (%s) on %s vs %s: value '%s' ", r->first + 1, w->a->node, w->a->op,
            w->a->provider, w->b->provider, w->a->name);
    if (w->shape_mismatch) {
        char sa[96], sb[96];
        shape_text(w->a, sa, sizeof sa);
        shape_text(w->b, sb, sizeof sb);
        fprintf(f, "has shape %s, the reference %s\n", sa, sb);
        return;
    }
    fprintf(f, "%s %.3g > %.3g (tolerance '%s')", !strcmp(w->tol_key, "lsb") || !strcmp(w->tol_key, "integer")
                                                       ? "max code difference"
                                                       : "relative error",
            w->measure, w->tol, w->tol_key);
    if (w->a->partition >= 0)
        fprintf(f, "; reported at the output of fused partition %d (%u nodes): the error arose in one of them",
                w->a->partition, w->a->partition_nodes);
    fprintf(f, "\n");
}

void cmp_print_table(FILE *f, const cmp_result *r, bool all_rows)
{
    fprintf(f, "%4s  %-28s %-18s %-28s %-8s %-18s %-12s %-12s %-6s %9s %9s %9s %8s %7s  %s\n", "#", "node", "op",
            "value", "dtype", "shape", "A", "B", "fused", "max_abs", "rel_err", "cosine", "codes!=", "max_lsb",
            "verdict");
    for (size_t i = 0; i < r->n; i++) {
        const cmp_row *w = &r->rows[i];
        if (!all_rows && !(w->past || (long)i == r->first))
            continue;
        char sh[64], fu[24], ma[24] = "-", re[24] = "-", co[24] = "-", cd[24] = "-", ml[24] = "-";
        shape_text(w->a, sh, sizeof sh);
        fused_text(w->a, fu, sizeof fu);
        const char *verdict = "unmatched";
        if (w->b) {
            fmt_num(ma, sizeof ma, w->max_abs);
            fmt_num(re, sizeof re, w->rel);
            if (!isnan(w->cosine))
                snprintf(co, sizeof co, "%.6f", w->cosine);
            if (w->int_codes)
                snprintf(cd, sizeof cd, "%lld", (long long)w->codes_differ);
            if (w->max_lsb >= 0)
                snprintf(ml, sizeof ml, "%.3g", w->max_lsb);
            verdict = w->shape_mismatch ? "SHAPE" : w->past ? ((long)i == r->first ? "PAST <- first" : "PAST") : "ok";
        }
        fprintf(f, "%4zu  %-28.28s %-18.18s %-28.28s %-8.8s %-18.18s %-12.12s %-12.12s %-6s %9s %9s %9s %8s %7s  %s\n",
                i + 1, w->a->node, w->a->op, w->a->name, sy_dtype_name(w->a->dtype), sh, w->a->provider,
                w->b ? w->b->provider : "-", fu, ma, re, co, cd, ml, verdict);
    }
}

/* CSV field: quoted when it holds a comma, quote or newline */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* write through a temporary file and a rename, so nothing is half-written */
static sy_status *open_tmp(const char *path, char *tmp, size_t len, FILE **f)
{
    snprintf(tmp, len, "%s.tmp", path);
    *f = fopen(tmp, "w");
    if (!*f)
        return sy_status_create(SY_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
    return NULL;
}

static sy_status *close_tmp(FILE *f, const char *tmp, const char *path)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        remove(tmp);
        return sy_status_create(SY_ERR_IO, "%s: write failed", tmp);
    }
    if (rename(tmp, path) != 0) {
        sy_status *st = sy_status_create(SY_ERR_IO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
        remove(tmp);
        return st;
    }
    return NULL;
}

sy_status *cmp_write_csv(const char *path, const cmp_result *r)
{
    char tmp[4096];
    FILE *f;
    sy_status *st = open_tmp(path, tmp, sizeof tmp, &f);
    if (st)
        return st;
    fprintf(f, "index,node,op,value,dtype,shape,provider_a,provider_b,partition,partition_nodes,max_abs,rel_err,"
               "cosine,codes_differ,max_lsb,tolerance_key,tolerance,verdict\n");
    for (size_t i = 0; i < r->n; i++) {
        const cmp_row *w = &r->rows[i];
        char sh[160] = "";
        size_t len = 0; /* 1x3x224x224: no commas inside a field */
        for (int32_t d = 0; d < w->a->rank && len < sizeof sh; d++)
            len += (size_t)snprintf(sh + len, sizeof sh - len, "%s%lld", d ? "x" : "", (long long)w->a->dims[d]);
        fprintf(f, "%zu,", i + 1);
        csv_field(f, w->a->node);
        fputc(',', f);
        csv_field(f, w->a->op);
        fputc(',', f);
        csv_field(f, w->a->name);
        fprintf(f, ",%s,", sy_dtype_name(w->a->dtype));
        csv_field(f, sh);
        fputc(',', f);
        csv_field(f, w->a->provider);
        fputc(',', f);
        csv_field(f, w->b ? w->b->provider : "");
        fprintf(f, ",%d,%u,", w->a->partition, w->a->partition_nodes);
        if (!w->b) {
            fprintf(f, ",,,,,,,unmatched\n");
            continue;
        }
        if (w->shape_mismatch) {
            fprintf(f, ",,,,,shape,,shape\n");
            continue;
        }
        fprintf(f, "%.9g,%.9g,%.9g,", w->max_abs, w->rel, w->cosine);
        if (w->int_codes)
            fprintf(f, "%lld", (long long)w->codes_differ);
        fputc(',', f);
        if (w->max_lsb >= 0)
            fprintf(f, "%.6g", w->max_lsb);
        fprintf(f, ",%s,%.9g,%s\n", w->tol_key, w->tol, (long)i == r->first ? "first" : w->past ? "past" : "ok");
    }
    return close_tmp(f, tmp, path);
}

/* ---- SVG: the judged error per value in execution order, log scale ---- */

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* a colour per provider, stable by order of first appearance */
static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

static int provider_slot(const char **names, int *n, const char *p)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(names[i], p))
            return i;
    if (*n < (int)(sizeof palette / sizeof *palette))
        names[(*n)++] = p;
    return *n - 1;
}

sy_status *cmp_write_svg(const char *path, const cmp_result *r, const char *title)
{
    char tmp[4096];
    FILE *f;
    sy_status *st = open_tmp(path, tmp, sizeof tmp, &f);
    if (st)
        return st;
    /* the plotted figure: measure / tolerance would hide the scale, so the
     * measure itself, with each row's tolerance drawn as a step line */
    double lo = 1e-8, hi = 1.0;
    for (size_t i = 0; i < r->n; i++) {
        const cmp_row *w = &r->rows[i];
        if (!w->b || w->shape_mismatch)
            continue;
        double m = w->measure, t = w->tol;
        if (m > hi && isfinite(m))
            hi = m;
        if (t > hi)
            hi = t;
        if (t > 0 && t < lo)
            lo = t;
    }
    double lg_lo = floor(log10(lo)), lg_hi = ceil(log10(hi));
    if (lg_hi <= lg_lo)
        lg_hi = lg_lo + 1;
    /* node names under the bars while they fit */
    bool labels = r->n <= 60;
    const int left = 70, right = 200, top = 64, bottom = labels ? 130 : 60, plot_h = 320;
    double step = r->n ? 640.0 / (double)r->n : 36;
    step = step < 4 ? 4 : step > 36 ? 36 : step;
    int plot_w = (int)(step * (double)(r->n ? r->n : 1)) + 10;
    if (plot_w < 420)
        plot_w = 420;
    int width = left + plot_w + right, height = top + plot_h + bottom;
#define Y(v) (top + plot_h - (int)((log10((v) > 0 ? (v) : pow(10, lg_lo)) - lg_lo) / (lg_hi - lg_lo) * plot_h))
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" y=\"20\" font-size=\"14\" "
               "font-weight=\"bold\">",
            left);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"36\" fill=\"#555\">error of each node output, in execution order: "
               "relative L2 error (code difference for integer outputs),</text>\n<text x=\"%d\" y=\"50\" "
               "fill=\"#555\">log scale; bar colour: provider on side A; dashed red: tolerance</text>\n",
            left, left);
    /* axes and decades */
    for (double d = lg_lo; d <= lg_hi + 1e-9; d += 1) {
        int y = Y(pow(10, d));
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#e5e5e5\"/>\n", left, y, left + plot_w, y);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">1e%d</text>\n", left - 6, y + 4, (int)d);
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, top, left, top + plot_h);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", left, top + plot_h, left + plot_w,
            top + plot_h);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">node outputs in execution order (%zu)</text>\n",
            left + plot_w / 2, top + plot_h + bottom - 12, r->n);
    const char *names[sizeof palette / sizeof *palette];
    int n_names = 0;
    /* tolerance as a step line */
    fprintf(f, "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\" points=\"");
    for (size_t i = 0; i < r->n; i++) {
        const cmp_row *w = &r->rows[i];
        if (!w->b || w->shape_mismatch)
            continue;
        double x0 = left + 5 + step * (double)i, x1 = x0 + step;
        int y = Y(w->tol);
        fprintf(f, "%.1f,%d %.1f,%d ", x0, y, x1, y);
    }
    fprintf(f, "\"/>\n");
    for (size_t i = 0; i < r->n; i++) {
        const cmp_row *w = &r->rows[i];
        double x = left + 5 + step * (double)i;
        int slot = provider_slot(names, &n_names, w->a->provider);
        const char *col = palette[slot < 0 ? 0 : slot];
        fprintf(f, "<g><title>");
        char tip[1024];
        snprintf(tip, sizeof tip, "#%zu %s (%s) on %s: %s", i + 1, w->a->node, w->a->op, w->a->provider, w->a->name);
        xml_text(f, tip);
        if (w->b && !w->shape_mismatch)
            fprintf(f, ": %.3g (tolerance %.3g, %s)%s", w->measure, w->tol, w->tol_key,
                    w->a->partition >= 0 ? ", output of a fused partition" : "");
        else
            fprintf(f, w->b ? ": shape differs" : ": no reference value");
        fprintf(f, "</title>");
        if (!w->b) {
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#999\" font-size=\"9\">?</text></g>\n", x, top + plot_h - 4);
            continue;
        }
        double m = w->shape_mismatch || !isfinite(w->measure) ? pow(10, lg_hi) : w->measure;
        int y = Y(m), y0 = top + plot_h;
        double bw = step > 3 ? step - 1 : step;
        if (m == 0) /* exact: a short stub, so the node is still seen */
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"4\" fill=\"%s\" fill-opacity=\"0.35\"/></g>\n",
                    x, y0 - 4, bw, col);
        else
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"%s/></g>\n", x, y, bw,
                    y0 - y > 1 ? y0 - y : 1, col, w->a->partition >= 0 ? " fill-opacity=\"0.55\"" : "");
    }
    if (labels)
        for (size_t i = 0; i < r->n; i++) {
            double x = left + 5 + step * (double)i + step / 2 + 3;
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"end\" transform=\"rotate(-60 %.1f %d)\">",
                    x, top + plot_h + 10, x, top + plot_h + 10);
            xml_text(f, r->rows[i].a->node);
            fprintf(f, "</text>\n");
        }
    if (r->first >= 0) {
        const cmp_row *w = &r->rows[r->first];
        double x = left + 5 + step * (double)r->first + step / 2;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-dasharray=\"2,2\"/>\n", x,
                top, x, top + plot_h);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-weight=\"bold\">first past tolerance: ", x + 3, top + 12);
        xml_text(f, w->a->node);
        fprintf(f, "</text>\n");
    }
    /* legend */
    int lx = left + plot_w + 20, ly = top + 10;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">provider (side A)</text>\n", lx, ly);
    for (int i = 0; i < n_names; i++) {
        ly += 18;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", lx, ly - 10, palette[i]);
        fprintf(f, "<text x=\"%d\" y=\"%d\">", lx + 18, ly);
        xml_text(f, names[i]);
        fprintf(f, "</text>\n");
    }
    ly += 24;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d62728\" stroke-width=\"1.5\" "
               "stroke-dasharray=\"5,3\"/><text x=\"%d\" y=\"%d\">tolerance</text>\n",
            lx, ly - 4, lx + 12, ly - 4, lx + 18, ly);
    ly += 18;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"#777\" fill-opacity=\"0.55\"/><text x=\"%d\" "
               "y=\"%d\">fused partition output</text>\n",
            lx, ly - 10, lx + 18, ly);
    ly += 18;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"4\" fill=\"#777\" fill-opacity=\"0.35\"/><text x=\"%d\" "
               "y=\"%d\">no difference</text>\n",
            lx, ly - 4, lx + 18, ly);
    ly += 18;
    fprintf(f, "<text x=\"%d\" y=\"%d\">%zu compared, %zu past</text>\n", lx, ly, r->matched, r->past);
#undef Y
    fprintf(f, "</svg>\n");
    return close_tmp(f, tmp, path);
}
