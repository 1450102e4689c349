/* switchyard cts --model: a whole model on the provider against cpu_ref,
 * node by node with the accuracy debugger's engine (compare.h); a failing
 * model names its first diverging node and whether moving that node to
 * cpu_ref removes the error. */
#include "compare.h"
#include "cts.h"

#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void cts_run_model(cts_ctx *cx, sy_env *penv, sy_env *renv, const char *path)
{
    char name[256];
    snprintf(name, sizeof name, "model.%s", base_name(path));
    if (!cts_selected(cx, name))
        return;
    cmp_tol tol;
    cmp_tol_default(&tol);
    /* a provider that stores float32 as fp16/bf16 is judged with their tolerance */
    if (cts_storage_precision == SY_DT_FLOAT16)
        tol.f32 = tol.f16;
    else if (cts_storage_precision == SY_DT_BFLOAT16)
        tol.f32 = tol.bf16;
    cli_inputs in = {.quiet = 1};
    cmp_capture ref = {0}, got = {0}, moved = {0};
    cmp_result r = {0}, r2 = {0};
    sy_status *st = cmp_capture_env(renv, path, NULL, NULL, 0, &in, &ref);
    if (st) {
        cts_skip(cx, name, "the reference (cpu_ref) cannot run it: %s", sy_status_get_message(st));
        goto done;
    }
    if ((st = cmp_capture_env(penv, path, NULL, NULL, 0, &in, &got))) {
        cts_fail(cx, name, "fails with %s, where cpu_ref runs it: %s: %s", cx->provider,
                 sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
        goto done;
    }
    if ((st = cmp_compare(&got, &ref, &tol, false, &r)))
        goto done;
    size_t on_provider = 0;
    for (size_t i = 0; i < got.n; i++)
        on_provider += !strcmp(got.v[i].provider, cx->provider);
    if (r.first < 0) {
        cts_pass(cx, name, "%zu node outputs within tolerance, %zu of them from %s", r.matched, on_provider,
                 cx->provider);
        goto done;
    }
    const cmp_row *w = &r.rows[r.first];
    char verdict[256] = "";
    if (strcmp(w->a->provider, w->b->provider)) {
        sy_placement_override pin = {w->a->node, w->b->provider};
        if (!(st = cmp_capture_env(penv, path, NULL, &pin, 1, &in, &moved)) &&
            !(st = cmp_compare(&moved, &ref, &tol, false, &r2))) {
            long k = cmp_find_row(&r2, w->a->name);
            bool gone = k >= 0 && r2.rows[k].b && !r2.rows[k].past;
            snprintf(verdict, sizeof verdict, "; with it on %s the error %s", w->b->provider,
                     gone ? "disappears: the node is wrong" : "stays: it comes from its inputs");
        }
        sy_status_free(st);
        st = NULL;
    }
    cts_fail(cx, name, "first diverging node: %s (%s) on %s, value '%s': %s %.3g > %.3g%s%s", w->a->node, w->a->op,
             w->a->provider, w->a->name, w->tol_key, w->measure, w->tol,
             w->a->partition >= 0 ? " (output of a fused partition)" : "", verdict);
done:
    if (st) {
        cts_fail(cx, name, "%s", sy_status_get_message(st));
        sy_status_free(st);
    }
    cmp_result_free(&r);
    cmp_result_free(&r2);
    cmp_capture_free(&ref);
    cmp_capture_free(&got);
    cmp_capture_free(&moved);
}
