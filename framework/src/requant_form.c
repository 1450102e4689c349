/*
 * The requantization form of a node in a session: "onnx" (float multiplier,
 * round half to even), "gemmlowp" (int32 multiplier + shift, two roundings
 * half away from zero: TFLite Micro) or "single_rounding" (the same
 * multiplier + shift, one rounding half up: TFLite built with
 * TFLITE_SINGLE_ROUNDING, which the TFLite interpreter's int8 kernels
 * match). Integer kernels ask for it through the node's `requant`
 * attribute; when the model itself does not carry one, the host answers with
 * the first of
 *
 *   sy_session_options.requant  >  [provider.P] requant  >
 *   the environment's default a plugin publishes  >  "onnx"
 *
 * except that a TFLite builtin (domain "tflite") has no float form: where
 * the answer would be "onnx" it gets "gemmlowp" (TFLite Micro's arithmetic),
 * and the record says why.
 *
 * where P is the provider the node runs on (the one being asked during
 * placement; the fallback provider while constants are folded). The default
 * is the extension SY_EXT_REQUANT_DEFAULT of the plugin that owns the option
 * (ops_quant publishes its [plugin.ops_quant] requant); the core names no
 * plugin and reads no plugin's section. An attribute written into
 * the model by a tool is an explicit per-node decision and wins over all of
 * them. The model is shared by sessions, so the answer lives on the
 * session's node and not in the IR; the last answer is recorded there for
 * explain and the compile cache.
 */
#include "session.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sy_requant_name(const char *text)
{
    if (text && !strcmp(text, "onnx"))
        return "onnx";
    if (text && !strcmp(text, "gemmlowp"))
        return "gemmlowp";
    if (text && !strcmp(text, "single_rounding"))
        return "single_rounding";
    return NULL;
}

/* A node's source text, stored once per session: the distinct texts are a
 * few (session, default, model, a provider's or plugin's section), while a
 * copy in each node cost 64 bytes a node. */
const char *sy_requant_source_intern(struct sy_session *s, const char *source)
{
    for (uint32_t k = 0; k < s->n_rq_sources; k++)
        if (!strcmp(s->rq_sources[k], source))
            return s->rq_sources[k];
    char **grown = realloc(s->rq_sources, (s->n_rq_sources + 1) * sizeof *grown);
    if (!grown)
        return "(out of memory)";
    s->rq_sources = grown;
    char *copy = malloc(strlen(source) + 1);
    if (!copy)
        return "(out of memory)";
    strcpy(copy, source);
    s->rq_sources[s->n_rq_sources++] = copy;
    return copy;
}

static void record(struct sy_node *n, const char *form, const char *source)
{
    n->rq_form = form;
    n->rq_source = sy_requant_source_intern(n->s, source);
}

/* A TFLite builtin has no float form: it runs TFLite Micro's arithmetic
 * (gemmlowp) unless single_rounding is asked for, and the record says so. */
static bool tflite_node(const struct sy_node *n) { return n->ir && n->ir->domain && !strcmp(n->ir->domain, "tflite"); }

static const char *answer(struct sy_node *n, const char *form, const char *source)
{
    if (tflite_node(n) && !strcmp(form, "onnx")) {
        char src[64];
        snprintf(src, sizeof src, "%s (TFLite has no onnx form)", source);
        record(n, "gemmlowp", src);
        return "gemmlowp";
    }
    record(n, form, source);
    return form;
}

const char *sy_requant_resolve(struct sy_node *n)
{
    const struct sy_session *s = n->s;
    if (s->requant)
        return answer(n, s->requant, "session");
    const sy_provider_rec *pr = n->asking;
    if (!pr && n->index < s->n_nodes && &s->nodes[n->index].view == n)
        pr = s->nodes[n->index].provider;
    if (!pr)
        pr = s->env->fallback; /* constant folding runs the fallback's kernels */
    const sy_options *po = pr ? sy_config_section(&s->env->cfg, "provider", pr->def.name) : NULL;
    /* values were checked when the env was created; an unknown one is not reached */
    const char *v = sy_requant_name(po ? sy_options_get(po, "requant") : NULL);
    if (v) {
        char src[64];
        snprintf(src, sizeof src, "[provider.%s]", pr->def.name);
        return answer(n, v, src);
    }
    const sy_extension_rec *e = sy_env_find_extension(s->env, SY_EXT_REQUANT_DEFAULT, SY_EXT_REQUANT_DEFAULT_VERSION);
    const sy_requant_default *d = e ? e->table : NULL;
    v = d && d->struct_size >= sizeof *d ? sy_requant_name(d->form) : NULL;
    if (v) {
        char src[64];
        snprintf(src, sizeof src, "[plugin.%s]", e->owner->name);
        return answer(n, v, src);
    }
    return answer(n, tflite_node(n) ? "gemmlowp" : "onnx", "default");
}

SY_EXPORT const char *sy_session_node_requant(const sy_session *s, size_t index, const char **source)
{
    if (!s || index >= s->n_nodes)
        return NULL;
    const struct sy_node *n = &s->nodes[index].view;
    if (source)
        *source = n->rq_form ? n->rq_source : NULL;
    return n->rq_form;
}
