/*
 * switchyard cts: ABI behaviour checks (abi.*). Each one goes through the
 * public API only, the way a host application meets the plugin:
 *
 *   abi.descriptor            loaded; name; MAJOR.MINOR.PATCH version; ABI major = host's, minor <= host's
 *   abi.provider              the provider is registered and describes itself
 *   abi.option_provider_key   an unknown key in [provider.NAME] fails the environment, naming the key
 *   abi.option_plugin_key     an unknown key in [plugin.NAME] refuses the plugin, naming the key
 *   abi.status_bad_shapes     a node with incompatible inputs fails session creation with a status and message
 *   abi.status_strict         strict placement of an op the provider does not claim: NOT_IMPLEMENTED naming it
 *   abi.status_wrong_input    an input of the wrong dtype is refused with a status; the session still runs
 *   abi.rerun_identical       three runs of one session give bit-identical outputs
 *   abi.profiling             a profiled run records events, one of them for the node
 *   abi.env_overlap           another environment loading the plugin comes and goes (its init and fini
 *                             run) while the first one is in use: the first must still work
 *   abi.session_cycles        sessions created, run and released repeatedly on one environment
 *   abi.env_cycles            environments (loading the plugin) created, used and released repeatedly;
 *                             under ASan (as CI runs the kit) LeakSanitizer fails the run on any leak
 */
#include "cts.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define CTS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTS_ASAN 1
#endif
#endif
#ifndef CTS_ASAN
#define CTS_ASAN 0
#endif

#define UNKNOWN_KEY "cts_no_such_key"

static bool semver(const char *v)
{
    if (!v)
        return false;
    for (int part = 0; part < 3; part++) {
        if (*v < '0' || *v > '9')
            return false;
        while (*v >= '0' && *v <= '9')
            v++;
        if (part < 2 && *v++ != '.')
            return false;
    }
    return *v == '\0' || *v == '-' || *v == '+';
}

void cts_abi_descriptor(cts_ctx *cx, const sy_plugin_info *pi, uint16_t host_major, uint16_t host_minor)
{
    const char *n = "abi.descriptor";
    if (!cts_selected(cx, n))
        return;
    if (!pi->name || !pi->name[0])
        cts_fail(cx, n, "the plugin has no name");
    else if (!semver(pi->version))
        cts_fail(cx, n, "version '%s' is not MAJOR.MINOR.PATCH", pi->version ? pi->version : "(null)");
    else if (pi->abi_major != host_major || pi->abi_minor > host_minor)
        cts_fail(cx, n, "built for ABI %u.%u, host is %u.%u", pi->abi_major, pi->abi_minor, host_major, host_minor);
    else
        cts_pass(cx, n, "%s %s, ABI %u.%u (host %u.%u)", pi->name, pi->version, pi->abi_major, pi->abi_minor,
                 host_major, host_minor);
}

static void check_provider(cts_ctx *cx, sy_env *penv)
{
    const char *n = "abi.provider";
    if (!cts_selected(cx, n))
        return;
    for (size_t i = 0; i < sy_env_provider_count(penv); i++) {
        if (strcmp(sy_env_provider_name(penv, i), cx->provider))
            continue;
        const char *d = sy_env_provider_description(penv, i);
        if (!d || !d[0])
            cts_fail(cx, n, "provider %s has no description", cx->provider);
        else
            cts_pass(cx, n, "%s: %s%s", cx->provider, d, sy_env_provider_is_emulator(penv, i) ? " (emulator)" : "");
        return;
    }
    cts_fail(cx, n, "no provider named %s is registered", cx->provider);
}

static void check_option_provider_key(cts_ctx *cx)
{
    const char *n = "abi.option_provider_key";
    if (!cts_selected(cx, n))
        return;
    char extra[256];
    snprintf(extra, sizeof extra, "[provider.%s]\n%s = 1\n", cx->provider, UNKNOWN_KEY);
    sy_env *env = NULL;
    sy_status *st = cts_env(cx, NULL, false, extra, &env);
    if (!st) {
        cts_fail(cx, n, "[provider.%s] %s = 1 was accepted", cx->provider, UNKNOWN_KEY);
        sy_env_release(env);
        return;
    }
    const char *msg = sy_status_get_message(st);
    if (sy_status_get_code(st) != SY_ERR_INVALID_CONFIG || !msg || !strstr(msg, UNKNOWN_KEY))
        cts_fail(cx, n, "refused with %s: '%s' (expected INVALID_CONFIG naming '%s')",
                 sy_status_code_name(sy_status_get_code(st)), msg ? msg : "", UNKNOWN_KEY);
    else
        cts_pass(cx, n, "%s", msg);
    sy_status_free(st);
}

static void check_option_plugin_key(cts_ctx *cx)
{
    const char *n = "abi.option_plugin_key";
    if (!cts_selected(cx, n))
        return;
    /* without the user's config: its [provider.*] sections would name a
     * provider that is gone once the plugin is refused */
    char ini[4096 + 256];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = @default\nplugins = %s\nlog_level = error\n[plugin.%s]\n%s = 1\n",
             cx->plugin_path, cx->plugin_name, UNKNOWN_KEY);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        /* a whole-environment refusal is fine too if it names the key */
        const char *msg = sy_status_get_message(st);
        if (msg && strstr(msg, UNKNOWN_KEY))
            cts_pass(cx, n, "%s", msg);
        else
            cts_fail(cx, n, "environment failed without naming '%s': %s", UNKNOWN_KEY, msg ? msg : "");
        sy_status_free(st);
        return;
    }
    bool seen = false;
    for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
        sy_plugin_info pi = {.struct_size = sizeof pi};
        if (!sy_env_plugin_info(env, i, &pi) || !pi.name || strcmp(pi.name, cx->plugin_name))
            continue;
        seen = true;
        if (pi.loaded)
            cts_fail(cx, n, "[plugin.%s] %s = 1 was accepted", cx->plugin_name, UNKNOWN_KEY);
        else if (!pi.refusal || !strstr(pi.refusal, UNKNOWN_KEY))
            cts_fail(cx, n, "refused without naming '%s': %s", UNKNOWN_KEY, pi.refusal ? pi.refusal : "");
        else
            cts_pass(cx, n, "refused: %s", pi.refusal);
        break;
    }
    if (!seen) {
        /* refused before the descriptor was read: look by path */
        for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
            sy_plugin_info pi = {.struct_size = sizeof pi};
            if (sy_env_plugin_info(env, i, &pi) && !pi.loaded && pi.refusal && strstr(pi.refusal, UNKNOWN_KEY)) {
                cts_pass(cx, n, "refused: %s", pi.refusal);
                seen = true;
                break;
            }
        }
        if (!seen)
            cts_fail(cx, n, "the plugin is not listed after [plugin.%s] %s = 1", cx->plugin_name, UNKNOWN_KEY);
    }
    sy_env_release(env);
}

/* a claimed op whose inputs can be made incompatible */
static const struct cts_claim *claim_of_kind(const cts_ctx *cx, bool (*want)(cts_kind))
{
    for (size_t i = 0; i < cx->n_claims; i++)
        if (want(cts_ops[cx->claims[i].op].kind))
            return &cx->claims[i];
    return NULL;
}

static bool shaped_kind(cts_kind k)
{
    return k == CTS_BINARY || k == CTS_COMPARE || k == CTS_LOGIC || k == CTS_MATMUL || k == CTS_GEMM;
}

static void check_bad_shapes(cts_ctx *cx, sy_env *penv)
{
    const char *n = "abi.status_bad_shapes";
    if (!cts_selected(cx, n))
        return;
    const struct cts_claim *c = claim_of_kind(cx, shaped_kind);
    if (!c) {
        cts_skip(cx, n, "no claimed op with two shaped inputs");
        return;
    }
    const cts_op *op = &cts_ops[c->op];
    cts_case pc;
    if (!cts_make_probe(op, c->dt, cx->opset, &pc)) {
        cts_skip(cx, n, "out of memory");
        return;
    }
    /* make the inner/broadcast dimension disagree: [.., 3] against [.., 4] */
    cts_value *b = &pc.node.in[1];
    if (op->kind == CTS_MATMUL || op->kind == CTS_GEMM)
        b->dims[0] += 2; /* K of B no longer matches A */
    else
        b->dims[b->rank - 1] += 2;
    size_t nb = 1;
    for (int32_t d = 0; d < b->rank; d++)
        nb *= (size_t)b->dims[d];
    free(b->data);
    b->nbytes = nb * sy_dtype_size(b->dtype);
    b->data = calloc(nb ? nb : 1, sy_dtype_size(b->dtype));
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = cts_session(penv, &pc.node, "cts_bad_shapes", &m, &s);
    if (!st) {
        /* refused at run time at the latest */
        st = cts_feed(s, &pc.node);
        if (!st)
            st = sy_session_run(s);
    }
    if (!st)
        cts_fail(cx, n, "%s with incompatible input shapes was accepted and ran", op->op);
    else if (!sy_status_get_message(st) || !sy_status_get_message(st)[0])
        cts_fail(cx, n, "%s: status %s without a message", op->op, sy_status_code_name(sy_status_get_code(st)));
    else
        cts_pass(cx, n, "%s: %s: %s", op->op, sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
    sy_status_free(st);
    sy_session_release(s);
    sy_model_release(m);
    cts_free_node(&pc.node);
}

static void check_strict(cts_ctx *cx, sy_env *renv)
{
    const char *n = "abi.status_strict";
    if (!cts_selected(cx, n))
        return;
    if (cx->provider_is_fallback) {
        cts_skip(cx, n, "%s is the fallback provider", cx->provider);
        return;
    }
    /* an (op, dtype) cpu_ref runs and the provider does not claim */
    for (size_t o = 0; o < cts_n_ops; o++) {
        for (int dt = 1; dt < SY_DT__COUNT; dt++) {
            if (!(cts_ops[o].dtypes & SY_DT_BIT(dt)))
                continue;
            bool claimed = false;
            for (size_t i = 0; i < cx->n_claims; i++)
                claimed |= cx->claims[i].op == o && (int)cx->claims[i].dt == dt;
            if (claimed)
                continue;
            cts_case pc;
            if (!cts_make_probe(&cts_ops[o], (sy_dtype)dt, cx->opset, &pc))
                continue;
            sy_model *m = NULL;
            sy_session *s = NULL;
            sy_status *st = cts_session(renv, &pc.node, "cts_strict", &m, &s);
            sy_session_release(s);
            sy_model_release(m);
            if (st) {
                sy_status_free(st);
                cts_free_node(&pc.node);
                continue;
            }
            sy_env *env = NULL;
            st = cts_env(cx, cx->provider, true, NULL, &env);
            if (!st) {
                st = cts_session(env, &pc.node, "cts_strict", &m, &s);
                sy_session_release(s);
                sy_model_release(m);
            }
            cts_free_node(&pc.node);
            char what[64];
            snprintf(what, sizeof what, "%s[%s]", cts_ops[o].op, sy_dtype_name((sy_dtype)dt));
            const char *msg = st ? sy_status_get_message(st) : NULL;
            if (!st)
                cts_fail(cx, n, "%s was placed under strict = true with providers = %s, which does not claim it",
                         what, cx->provider);
            else if (sy_status_get_code(st) != SY_ERR_NOT_IMPLEMENTED || !msg || !strstr(msg, cx->provider))
                cts_fail(cx, n, "%s: %s: '%s' (expected NOT_IMPLEMENTED naming %s)", what,
                         sy_status_code_name(sy_status_get_code(st)), msg ? msg : "", cx->provider);
            else
                cts_pass(cx, n, "%s refused: %.160s", what, msg);
            sy_status_free(st);
            sy_env_release(env);
            return;
        }
    }
    cts_skip(cx, n, "the provider claims every (op, dtype) cpu_ref runs");
}

static bool any_kind(cts_kind k)
{
    (void)k;
    return true;
}

static bool outputs_equal(sy_session *a, const uint8_t *ref, size_t ref_len)
{
    const sy_tensor *t = NULL;
    sy_status *st = sy_session_get_output(a, 0, &t);
    if (st) {
        sy_status_free(st);
        return false;
    }
    return t->nbytes == ref_len && (!ref_len || !memcmp(t->data, ref, ref_len));
}

static void check_session_behaviour(cts_ctx *cx, sy_env *penv)
{
    const char *n_wrong = "abi.status_wrong_input", *n_rerun = "abi.rerun_identical", *n_prof = "abi.profiling";
    const struct cts_claim *c = claim_of_kind(cx, any_kind);
    if (!c) {
        cts_skip(cx, n_wrong, "the provider claims no op the kit knows");
        cts_skip(cx, n_rerun, "the provider claims no op the kit knows");
        cts_skip(cx, n_prof, "the provider claims no op the kit knows");
        return;
    }
    const cts_op *op = &cts_ops[c->op];
    cts_case pc;
    if (!cts_make_probe(op, c->dt, cx->opset, &pc))
        return;
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = cts_session(penv, &pc.node, "cts_session", &m, &s);
    if (st) {
        cts_fail(cx, n_wrong, "%s: session creation failed: %s", op->op, sy_status_get_message(st));
        sy_status_free(st);
        cts_free_node(&pc.node);
        return;
    }
    /* a wrong dtype for input 0 */
    if (cts_selected(cx, n_wrong)) {
        cts_value *v = &pc.node.in[0];
        sy_dtype wrong = v->dtype == SY_DT_FLOAT32 ? SY_DT_INT32 : SY_DT_FLOAT32;
        size_t nel = v->nbytes / sy_dtype_size(v->dtype);
        void *buf = calloc(nel ? nel : 1, 4);
        sy_tensor t = {.struct_size = sizeof t, .dtype = wrong, .rank = v->rank, .data = buf, .nbytes = nel * 4};
        memcpy(t.dims, v->dims, sizeof t.dims);
        st = sy_session_set_input_by_index(s, 0, &t, SY_INPUT_COPY);
        free(buf);
        if (!st) {
            cts_fail(cx, n_wrong, "%s: input 0 of dtype %s accepted where %s is declared", op->op,
                     sy_dtype_name(wrong), sy_dtype_name(v->dtype));
        } else {
            char msg[256];
            snprintf(msg, sizeof msg, "%s: %s", sy_status_code_name(sy_status_get_code(st)),
                     sy_status_get_message(st) ? sy_status_get_message(st) : "");
            sy_status_free(st);
            st = cts_feed(s, &pc.node);
            if (!st)
                st = sy_session_run(s);
            if (st)
                cts_fail(cx, n_wrong, "after the refusal the session no longer runs: %s", sy_status_get_message(st));
            else
                cts_pass(cx, n_wrong, "%s: %.160s", op->op, msg);
            sy_status_free(st);
            st = NULL;
        }
        sy_status_free(st);
    }
    /* three runs, identical bits */
    if (cts_selected(cx, n_rerun)) {
        uint8_t *first = NULL;
        size_t first_len = 0;
        bool ok = true;
        char why[256] = "";
        for (int r = 0; r < 3 && ok; r++) {
            const sy_tensor *t = NULL;
            if ((st = cts_feed(s, &pc.node)) || (st = sy_session_run(s)) || (st = sy_session_get_output(s, 0, &t))) {
                snprintf(why, sizeof why, "run %d: %s", r + 1, sy_status_get_message(st));
                sy_status_free(st);
                ok = false;
            } else if (r == 0) {
                first_len = t->nbytes;
                first = malloc(first_len ? first_len : 1);
                if (first && first_len)
                    memcpy(first, t->data, first_len);
            } else if (!first || !outputs_equal(s, first, first_len)) {
                snprintf(why, sizeof why, "run %d differs from run 1", r + 1);
                ok = false;
            }
        }
        free(first);
        if (ok)
            cts_pass(cx, n_rerun, "%s[%s]", op->op, sy_dtype_name(c->dt));
        else
            cts_fail(cx, n_rerun, "%s[%s]: %s", op->op, sy_dtype_name(c->dt), why);
    }
    sy_session_release(s);
    s = NULL;
    /* profiling */
    if (cts_selected(cx, n_prof)) {
        sy_session_options so = {.struct_size = sizeof so, .threads = 0, .strict = -1, .profiling = true};
        if ((st = sy_session_create(penv, m, &so, &s)) || (st = cts_feed(s, &pc.node)) || (st = sy_session_run(s))) {
            cts_fail(cx, n_prof, "profiled run failed: %s", sy_status_get_message(st));
            sy_status_free(st);
        } else {
            size_t ne = sy_session_profile_event_count(s);
            bool node_seen = false;
            for (size_t i = 0; i < ne; i++) {
                sy_profile_event ev = {.struct_size = sizeof ev};
                if (sy_session_profile_event(s, i, &ev) && ev.name && strstr(ev.name, "node"))
                    node_seen = true;
            }
            if (!ne || !node_seen)
                cts_fail(cx, n_prof, "%zu events, %s for the node", ne, node_seen ? "one" : "none");
            else
                cts_pass(cx, n_prof, "%zu events", ne);
        }
        sy_session_release(s);
    }
    sy_model_release(m);
    cts_free_node(&pc.node);
}

/* one env/model/session/run/release cycle; false with a message */
static bool cycle(cts_ctx *cx, sy_env *env_or_null, const cts_node *node, char *why, size_t len)
{
    sy_env *env = env_or_null;
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = NULL;
    if (!env)
        st = cts_env(cx, NULL, false, NULL, &env);
    if (!st && node) {
        st = cts_session(env, node, "cts_cycle", &m, &s);
        if (!st)
            st = cts_feed(s, node);
        if (!st)
            st = sy_session_run(s);
    }
    if (st)
        snprintf(why, len, "%s", sy_status_get_message(st));
    sy_status_free(st);
    sy_session_release(s);
    sy_model_release(m);
    if (!env_or_null)
        sy_env_release(env);
    return st == NULL;
}

static void check_cycles(cts_ctx *cx, sy_env *penv, int cycles)
{
    const char *n_sess = "abi.session_cycles", *n_env = "abi.env_cycles";
    const struct cts_claim *c = claim_of_kind(cx, any_kind);
    cts_case pc;
    bool have = c && cts_make_probe(&cts_ops[c->op], c->dt, cx->opset, &pc);
    const cts_node *node = have ? &pc.node : NULL;
    char why[512] = "";
    if (cts_selected(cx, n_sess)) {
        if (!node) {
            cts_skip(cx, n_sess, "the provider claims no op the kit knows");
        } else {
            bool ok = true;
            for (int i = 0; i < cycles && ok; i++)
                ok = cycle(cx, penv, node, why, sizeof why);
            if (ok)
                cts_pass(cx, n_sess, "%d sessions created, run and released", cycles);
            else
                cts_fail(cx, n_sess, "%s", why);
        }
    }
    const char *n_overlap = "abi.env_overlap";
    if (cts_selected(cx, n_overlap)) {
        sy_env *other = NULL;
        sy_status *st = cts_env(cx, NULL, false, NULL, &other);
        if (st) {
            cts_fail(cx, n_overlap, "second environment: %s", sy_status_get_message(st));
            sy_status_free(st);
        } else {
            sy_env_release(other); /* the plugin's fini runs for this one */
            if (!node)
                cts_skip(cx, n_overlap, "the provider claims no op the kit knows");
            else if (!cycle(cx, penv, node, why, sizeof why))
                cts_fail(cx, n_overlap, "after another environment was released: %s", why);
            else
                cts_pass(cx, n_overlap, "a second environment came and went; the first still runs");
        }
    }
    if (cts_selected(cx, n_env)) {
        bool ok = true;
        for (int i = 0; i < cycles && ok; i++)
            ok = cycle(cx, NULL, node, why, sizeof why);
        if (!ok)
            cts_fail(cx, n_env, "%s", why);
        else
            cts_pass(cx, n_env, "%d environments loading the plugin created, used and released%s", cycles,
                     CTS_ASAN ? "; LeakSanitizer reports any leak at exit"
                              : " (leaks are detected when the kit runs under ASan or valgrind)");
    }
    if (have)
        cts_free_node(&pc.node);
}

void cts_abi_checks(cts_ctx *cx, sy_env *penv, sy_env *renv, int cycles)
{
    check_provider(cx, penv);
    check_option_provider_key(cx);
    check_option_plugin_key(cx);
    check_bad_shapes(cx, penv);
    check_strict(cx, renv);
    check_session_behaviour(cx, penv);
    check_cycles(cx, penv, cycles);
}
