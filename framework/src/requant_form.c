/*
 * The requantization form of a node in a session: "onnx" (float multiplier,
 * round half to even) or "gemmlowp" (int32 multiplier + shift, round half
 * away from zero). Integer kernels ask for it through the node's `requant`
 * attribute; when the model itself does not carry one, the host answers with
 * the first of
 *
 *   sy_session_options.requant  >  [provider.P] requant  >
 *   the environment's default a plugin publishes  >  "onnx"
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
#include <string.h>

const char *sy_requant_name(const char *text)
{
    if (text && !strcmp(text, "onnx"))
        return "onnx";
    if (text && !strcmp(text, "gemmlowp"))
        return "gemmlowp";
    return NULL;
}

static void record(struct sy_node *n, const char *form, const char *source)
{
    n->rq_form = form;
    snprintf(n->rq_source, sizeof n->rq_source, "%s", source);
}

const char *sy_requant_resolve(struct sy_node *n)
{
    const struct sy_session *s = n->s;
    if (s->requant) {
        record(n, s->requant, "session");
        return s->requant;
    }
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
        record(n, v, src);
        return v;
    }
    const sy_extension_rec *e = sy_env_find_extension(s->env, SY_EXT_REQUANT_DEFAULT, SY_EXT_REQUANT_DEFAULT_VERSION);
    const sy_requant_default *d = e ? e->table : NULL;
    v = d && d->struct_size >= sizeof *d ? sy_requant_name(d->form) : NULL;
    if (v) {
        char src[64];
        snprintf(src, sizeof src, "[plugin.%s]", e->owner->name);
        record(n, v, src);
        return v;
    }
    record(n, "onnx", "default");
    return "onnx";
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
