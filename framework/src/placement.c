/*
 * Placement: providers are asked in priority order; the first that has a
 * kernel for the node and (when it has check_node) takes it, gets it. Every
 * decline is kept with its reason so `explain` and strict-mode errors can say
 * why. Unclaimed nodes fall back to a fallback provider (cpu_ref) unless the
 * session is strict.
 */
#include "session.h"
#include "status.h"
#include "util.h"
#include "switchyard/switchyard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sy_dtype kernel_key_dtype(const sy_node *node, int32_t type_input)
{
    if (type_input < 0)
        return node->n_out && node->out[0] ? node->out[0]->dtype : SY_DT_UNDEFINED;
    if ((uint32_t)type_input < node->n_in && node->in[type_input])
        return node->in[type_input]->dtype;
    return SY_DT_UNDEFINED;
}

const sy_kernel_rec *sy_find_kernel(const sy_env *env, const sy_node *node, const char *provider, char *why,
                                    size_t why_len)
{
    const ir_node *n = node->ir;
    const sy_op_entry *e = sy_env_find_op(env, n->domain, n->op);
    bool any_version = false, any_type = false;
    char declined[192] = "";
    for (uint32_t i = 0; e && i < e->n_kernels; i++) {
        const sy_kernel_def *k = &e->kernels[i]->def;
        if (strcmp(k->provider, provider))
            continue;
        if (n->opset < k->since_version || (k->until_version > 0 && n->opset > k->until_version))
            continue;
        any_version = true;
        sy_dtype dt = kernel_key_dtype(node, k->type_input);
        if (k->type_mask && !(dt < 64 && (k->type_mask & SY_DT_BIT(dt))))
            continue;
        any_type = true;
        sy_node_calling(node, e->kernels[i]->owner);
        if (k->accepts && !k->accepts(node, declined, sizeof declined))
            continue;
        return e->kernels[i];
    }
    if (why) {
        if (!any_version)
            snprintf(why, why_len, "no %s kernel for %s at opset %d", provider, n->op, n->opset);
        else if (!any_type)
            snprintf(why, why_len, "no %s kernel for %s with dtype %s", provider, n->op,
                     sy_dtype_name(kernel_key_dtype(node, 0)));
        else
            snprintf(why, why_len, "%s kernel declined: %s", provider, declined[0] ? declined : "unsupported case");
    }
    return NULL;
}

static void append_reason(char **acc, const char *provider, sy_reason code, const char *text)
{
    char *next = sy_asprintf("%s%s%s: [%s] %s", *acc ? *acc : "", *acc ? "; " : "", provider, sy_reason_name(code),
                             text);
    if (next) {
        free(*acc);
        *acc = next;
    }
}

/* Try every provider of the priority list; on failure *declines holds why. */
static bool try_providers(struct sy_session *s, sy_node_rt *nr, char **declines)
{
    sy_env *env = s->env;
    for (uint32_t p = 0; p < env->n_priority; p++) {
        sy_provider_rec *pr = env->priority[p];
        char why[192];
        const sy_kernel_rec *k = sy_find_kernel(env, &nr->view, pr->def.name, why, sizeof why);
        if (!k) {
            /* a provider may refuse a node by a rule of its target even where
             * it has no kernel (riscv_mcu: the seed's conversion-time
             * rejections); that rule is the more useful reason, so it comes
             * before the missing kernel */
            if (pr->def.check_node) {
                sy_claim rule = {sizeof rule, false, SY_REASON_NONE, ""};
                nr->view.asking = pr;
                sy_node_calling(&nr->view, pr->owner);
                pr->def.check_node(pr->state, &nr->view, &rule);
                nr->view.asking = NULL;
                rule.text[sizeof rule.text - 1] = '\0';
                if (!rule.take && rule.text[0] && rule.reason != SY_REASON_NO_KERNEL &&
                    rule.reason != SY_REASON_OP_UNSUPPORTED && rule.reason != SY_REASON_POLICY)
                    append_reason(declines, pr->def.name, rule.reason, rule.text);
            }
            append_reason(declines, pr->def.name, SY_REASON_NO_KERNEL, why);
            continue;
        }
        if (pr->def.check_node) {
            sy_claim claim = {sizeof claim, false, SY_REASON_NONE, ""};
            nr->view.asking = pr; /* a requant query in check_node is answered for this provider */
            sy_node_calling(&nr->view, pr->owner);
            pr->def.check_node(pr->state, &nr->view, &claim);
            nr->view.asking = NULL;
            if (!claim.take) {
                claim.text[sizeof claim.text - 1] = '\0';
                append_reason(declines, pr->def.name, claim.reason, claim.text[0] ? claim.text : "declined");
                continue;
            }
            /* a provider taking a node may say how (riscv_mcu: a fused
             * activation run as two rows of its target's contract) */
            claim.text[sizeof claim.text - 1] = '\0';
            if (claim.text[0])
                append_reason(declines, pr->def.name, SY_REASON_TAKEN, claim.text);
        }
        nr->provider = pr;
        nr->kernel = k;
        nr->reason = SY_REASON_TAKEN;
        return true;
    }
    return false;
}

/* ---- per-node overrides (sy_session_options.placements) ---- */
sy_status *sy_placements_init(struct sy_session *s, const sy_placement_override *p, uint32_t n)
{
    if (!n)
        return NULL;
    if (!p)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_options: n_placements is %u but placements is NULL", n);
    s->place_node = calloc(n, sizeof *s->place_node);
    s->place_provider = calloc(n, sizeof *s->place_provider);
    if (!s->place_node || !s->place_provider)
        return sy_error_oom();
    for (uint32_t i = 0; i < n; i++) {
        if (!p[i].node || !p[i].provider)
            return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_session_options.placements[%u]: node and provider are required",
                            i);
        uint32_t node = s->n_nodes;
        for (uint32_t k = 0; k < s->n_nodes && node == s->n_nodes; k++)
            if (!strcmp(s->nodes[k].view.ir->name, p[i].node))
                node = k;
        if (node == s->n_nodes)
            return sy_error(SY_ERR_NOT_FOUND, "sy_session_options.placements[%u]: the model has no node named '%s'", i,
                            p[i].node);
        bool known = false;
        for (uint32_t k = 0; k < s->env->n_providers && !known; k++)
            known = s->env->providers[k]->created && !strcmp(s->env->providers[k]->def.name, p[i].provider);
        if (!known)
            return sy_error(SY_ERR_NOT_FOUND,
                            "sy_session_options.placements[%u]: node '%s': no provider '%s' is loaded and configured", i,
                            p[i].node, p[i].provider);
        s->place_node[i] = node;
        if (!(s->place_provider[i] = sy_strdup(p[i].provider)))
            return sy_error_oom();
        s->n_place = i + 1;
    }
    return NULL;
}

void sy_placements_free(struct sy_session *s)
{
    for (uint32_t i = 0; i < s->n_place; i++)
        free(s->place_provider[i]);
    free(s->place_provider);
    free(s->place_node);
    s->place_provider = NULL;
    s->place_node = NULL;
    s->n_place = 0;
}

const char *sy_placement_forced(const struct sy_session *s, uint32_t node)
{
    const char *forced = NULL;
    for (uint32_t i = 0; i < s->n_place; i++)
        if (s->place_node[i] == node)
            forced = s->place_provider[i]; /* the last entry for a node wins */
    return forced;
}

/* A forced node gets its provider or an error: never a silent other one. */
static sy_status *place_forced(struct sy_session *s, sy_node_rt *nr, const char *name)
{
    const ir_node *n = nr->view.ir;
    sy_provider_rec *pr = NULL;
    for (uint32_t k = 0; k < s->env->n_providers && !pr; k++)
        if (s->env->providers[k]->created && !strcmp(s->env->providers[k]->def.name, name))
            pr = s->env->providers[k];
    if (!pr)
        return sy_error(SY_ERR_NOT_FOUND, "node '%s' (%s): placement override names provider '%s', which is not loaded",
                        n->name, n->op, name);
    char why[192];
    const sy_kernel_rec *k = sy_find_kernel(s->env, &nr->view, pr->def.name, why, sizeof why);
    if (!k)
        return sy_error(SY_ERR_NOT_IMPLEMENTED, "node '%s' (%s): placement override to '%s' impossible: %s", n->name,
                        n->op, name, why);
    if (pr->def.check_node) {
        sy_claim claim = {sizeof claim, false, SY_REASON_NONE, ""};
        nr->view.asking = pr;
        pr->def.check_node(pr->state, &nr->view, &claim);
        nr->view.asking = NULL;
        claim.text[sizeof claim.text - 1] = '\0';
        if (!claim.take)
            return sy_error(SY_ERR_NOT_IMPLEMENTED, "node '%s' (%s): placement override to '%s' impossible: [%s] %s",
                            n->name, n->op, name, sy_reason_name(claim.reason),
                            claim.text[0] ? claim.text : "declined");
    }
    nr->provider = pr;
    nr->kernel = k;
    nr->reason = SY_REASON_POLICY;
    nr->reason_text = sy_strdup("placed by a placement override (sy_session_options.placements)");
    return NULL;
}

sy_status *sy_place_node(struct sy_session *s, sy_node_rt *nr)
{
    const char *forced = s->n_place ? sy_placement_forced(s, nr->view.index) : NULL;
    if (forced)
        return place_forced(s, nr, forced);
    char *declines = NULL;
    if (try_providers(s, nr, &declines)) {
        nr->reason_text = declines; /* the declines of higher-priority providers, if any */
        return NULL;
    }
    if (!s->strict) {
        for (uint32_t i = 0; i < s->env->n_providers; i++) {
            sy_provider_rec *pr = s->env->providers[i];
            if (!(pr->def.flags & SY_PROVIDER_FALLBACK) || !pr->created)
                continue;
            const sy_kernel_rec *k = sy_find_kernel(s->env, &nr->view, pr->def.name, NULL, 0);
            if (k) {
                nr->provider = pr;
                nr->kernel = k;
                nr->reason = SY_REASON_FALLBACK;
                nr->reason_text = declines;
                return NULL;
            }
        }
    }
    const ir_node *n = nr->view.ir;
    sy_status *st = sy_error(SY_ERR_NOT_IMPLEMENTED, "node '%s' (%s) could not be placed%s: %s", n->name, n->op,
                             s->strict ? " (strict mode: no fallback)" : "",
                             declines ? declines : "no provider is configured");
    free(declines);
    return st;
}

/* Place every node; in strict mode report all unplaced nodes at once. */
sy_status *sy_place_all(struct sy_session *s)
{
    char *all = NULL;
    uint32_t n_bad = 0;
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        sy_node_rt *nr = &s->nodes[i];
        if (nr->folded || nr->provider)
            continue;
        sy_status *st = sy_place_node(s, nr);
        if (!st)
            continue;
        if (!s->strict) {
            free(all);
            return st;
        }
        char *next = sy_asprintf("%s%s%s", all ? all : "", all ? "\n  " : "  ", sy_status_msg(st));
        sy_status_free(st);
        free(all);
        all = next;
        n_bad++;
    }
    if (!n_bad)
        return NULL;
    sy_status *st = sy_error(SY_ERR_NOT_IMPLEMENTED, "strict mode: %u node%s could not be placed:\n%s", n_bad,
                             n_bad == 1 ? "" : "s", all ? all : "");
    free(all);
    return st;
}
