/*
 * switchyard cts: the conformance kit for plugins.
 *
 *   switchyard cts --plugin FILE [--provider NAME] [--filter REGEX] [--config INI]
 *                  [--opset N] [--cycles N] [-v]
 *
 * Loads the default plugins plus FILE, finds the ops the provider claims by
 * probing (single-node models of every op the kit knows, for every candidate
 * dtype, placed with `providers = NAME, cpu_ref`), runs generated cases on the
 * provider and on cpu_ref alone and compares the outputs, then checks the ABI
 * behaviour (options, statuses, releases). Ends with
 * "N passed, M failed, K skipped"; exit status 1 when anything failed.
 */
#include "cli.h"
#include "cts.h"

#include <switchyard/sy_plugin.h> /* SY_ABI_MAJOR/MINOR: the ABI this host speaks */

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard cts --plugin FILE [--provider NAME] [--filter REGEX] [--exclude REGEX]\n"
            "                      [--config INI] [--opset N] [--cycles N] [--precision fp16|bf16]\n"
            "                      [--model FILE ...] [-v]\n\n"
            "The conformance kit: checks a plugin against the CPU reference and the ABI rules.\n\n"
            "  --plugin FILE    the plugin library under test; loaded with the default plugins\n"
            "  --provider NAME  the provider whose kernels are checked (default: the one provider\n"
            "                   the plugin registers; cpu_ref for a plugin that registers none)\n"
            "  --filter REGEX   run only checks whose name matches (POSIX extended regex), e.g.\n"
            "                   '^Add\\.' or 'float32.*zero' or '^abi\\.'\n"
            "  --exclude REGEX  skip checks whose name matches (applied after --filter)\n"
            "  --config INI     an INI to start from (provider options, plugin options); the kit\n"
            "                   adds the default plugin folder, FILE, and its own `providers`\n"
            "  --opset N        opset of the generated models (default 17)\n"
            "  --cycles N       env/session create-release cycles of the release check (default 8)\n"
            "  --precision P    the provider stores float32 tensors as P (fp16 or bf16, e.g. the\n"
            "                   htp/aic emulators): float32 results are judged with P's tolerances,\n"
            "                   and where the reference leaves P's range an inf/NaN result is correct\n"
            "  --model FILE     also run FILE on the provider and on cpu_ref and compare every node's\n"
            "                   outputs (check model.FILE); a failure names the first diverging node and\n"
            "                   whether moving it to cpu_ref removes the error (repeatable)\n"
            "  -v               print every passing check too\n\n"
            "Check names: OP.DTYPE.CASE (compared with cpu_ref), model.FILE (--model), abi.* (behaviour).\n"
            "Ends with 'N passed, M failed, K skipped'; exit status 1 when a check failed.\n"
            "Tolerances and the list of checks: docs/plugin-guide.md, section 'Conformance kit'.\n");
}

/* ---- results ------------------------------------------------------------------ */

bool cts_selected(const cts_ctx *cx, const char *name)
{
    if (cx->has_exclude && regexec(&cx->exclude, name, 0, NULL, 0) == 0)
        return false;
    return !cx->has_filter || regexec(&cx->filter, name, 0, NULL, 0) == 0;
}

static void result(const char *tag, const char *name, const char *fmt, va_list ap)
{
    printf("%s %s", tag, name);
    if (fmt && *fmt) {
        printf(": ");
        vprintf(fmt, ap);
    }
    printf("\n");
    fflush(stdout);
}

void cts_pass(cts_ctx *cx, const char *name, const char *fmt, ...)
{
    cx->passed++;
    if (!cx->verbose && strncmp(name, "abi.", 4))
        return;
    va_list ap;
    va_start(ap, fmt);
    result("PASS", name, fmt, ap);
    va_end(ap);
}

void cts_fail(cts_ctx *cx, const char *name, const char *fmt, ...)
{
    cx->failed++;
    va_list ap;
    va_start(ap, fmt);
    result("FAIL", name, fmt, ap);
    va_end(ap);
}

void cts_skip(cts_ctx *cx, const char *name, const char *fmt, ...)
{
    cx->skipped++;
    if (!cx->verbose && strncmp(name, "abi.", 4))
        return;
    va_list ap;
    va_start(ap, fmt);
    result("SKIP", name, fmt, ap);
    va_end(ap);
}

/* ---- environments ----------------------------------------------------------------- */

char *cts_ini(const cts_ctx *cx, const char *providers, bool strict, const char *extra)
{
    const char *user = cx->config_text ? cx->config_text : "";
    size_t len = strlen(user) + strlen(cx->plugin_path) + (providers ? strlen(providers) : 0) +
                 (extra ? strlen(extra) : 0) + 256;
    char *t = malloc(len);
    if (!t)
        return NULL;
    /* a second [switchyard] section: plugin_dirs/plugins append to the
     * user's, providers/strict/log_level replace theirs */
    snprintf(t, len,
             "%s\n[switchyard]\nplugin_dirs = @default\nplugins = %s\n%s%s%sstrict = %s\nlog_level = error\n%s\n",
             user, cx->plugin_path, providers ? "providers = " : "", providers ? providers : "", providers ? "\n" : "",
             strict ? "true" : "false", extra ? extra : "");
    return t;
}

sy_status *cts_env(const cts_ctx *cx, const char *providers, bool strict, const char *extra, sy_env **out)
{
    char *ini = cts_ini(cx, providers, strict, extra);
    if (!ini)
        return sy_status_create(SY_ERR_OUT_OF_MEMORY, "cts: out of memory");
    sy_status *st = sy_env_create_from_string(ini, cx->config_dir, out);
    free(ini);
    return st;
}

/* placement of the node named "node" */
static bool node_placement(const sy_session *s, sy_node_placement *out)
{
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && p.name && !strcmp(p.name, "node")) {
            *out = p;
            return true;
        }
    }
    return false;
}

/* ---- probing ------------------------------------------------------------------------ */

static bool probe(cts_ctx *cx, sy_env *env, const cts_op *op, sy_dtype dt)
{
    cts_case c;
    if (!cts_make_probe(op, dt, cx->opset, &c))
        return false;
    sy_model *m = NULL;
    sy_session *s = NULL;
    bool claimed = false;
    sy_status *st = cts_session(env, &c.node, "cts_probe", &m, &s);
    if (!st) {
        sy_node_placement p;
        claimed = node_placement(s, &p) && !p.folded && p.provider && !strcmp(p.provider, cx->provider);
    }
    sy_status_free(st);
    sy_session_release(s);
    sy_model_release(m);
    cts_free_node(&c.node);
    return claimed;
}

static sy_status *find_claims(cts_ctx *cx, sy_env *env)
{
    for (size_t o = 0; o < cts_n_ops; o++) {
        if (!sy_env_has_op(env, "", cts_ops[o].op, (int32_t)cx->opset))
            continue;
        for (int dt = 1; dt < SY_DT__COUNT; dt++) {
            if (!(cts_ops[o].dtypes & SY_DT_BIT(dt)) || !probe(cx, env, &cts_ops[o], (sy_dtype)dt))
                continue;
            struct cts_claim *g = realloc(cx->claims, (cx->n_claims + 1) * sizeof *g);
            if (!g)
                return sy_status_create(SY_ERR_OUT_OF_MEMORY, "cts: out of memory");
            cx->claims = g;
            cx->claims[cx->n_claims++] = (struct cts_claim){o, (sy_dtype)dt};
        }
    }
    return NULL;
}

/* ---- running cases -------------------------------------------------------------------- */

static void run_case(cts_ctx *cx, sy_env *penv, sy_env *renv, const cts_op *op, const cts_case *c, const char *name)
{
    sy_model *rm = NULL, *pm = NULL;
    sy_session *rs = NULL, *ps = NULL;
    sy_status *st = cts_session(renv, &c->node, name, &rm, &rs);
    if (st) {
        cts_skip(cx, name, "the reference (cpu_ref) cannot run it: %s", sy_status_get_message(st));
        goto done;
    }
    if ((st = cts_session(penv, &c->node, name, &pm, &ps))) {
        cts_fail(cx, name, "session creation failed on %s, where cpu_ref succeeds: %s: %s", cx->provider,
                 sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
        goto done;
    }
    sy_node_placement pl;
    if (!node_placement(ps, &pl)) {
        cts_fail(cx, name, "the session has no node named 'node'");
        goto done;
    }
    if (pl.folded || !pl.provider || strcmp(pl.provider, cx->provider)) {
        if (pl.folded)
            cts_skip(cx, name, "folded into a constant by the core");
        else
            cts_skip(cx, name, "not taken by %s, placed on %s; declines: %s", cx->provider,
                     pl.provider ? pl.provider : "?", pl.reason_text ? pl.reason_text : "(none given)");
        goto done;
    }
    if (cts_outside_storage(&c->node)) {
        cts_skip(cx, name, "an input is outside the range of the provider's storage precision (--precision)");
        goto done;
    }
    if ((st = cts_feed(rs, &c->node)) || (st = sy_session_run(rs))) {
        cts_skip(cx, name, "the reference (cpu_ref) fails to run it: %s", sy_status_get_message(st));
        goto done;
    }
    if ((st = cts_feed(ps, &c->node)) || (st = sy_session_run(ps))) {
        cts_fail(cx, name, "run failed on %s, where cpu_ref succeeds: %s: %s", cx->provider,
                 sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
        goto done;
    }
    size_t n_out = sy_session_output_count(rs);
    if (sy_session_output_count(ps) != n_out) {
        cts_fail(cx, name, "%zu outputs, expected %zu", sy_session_output_count(ps), n_out);
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) {
        const sy_tensor *got = NULL, *ref = NULL;
        if ((st = sy_session_get_output(rs, i, &ref)) || (st = sy_session_get_output(ps, i, &got))) {
            cts_fail(cx, name, "output %zu: %s", i, sy_status_get_message(st));
            goto done;
        }
        char msg[256];
        if (!cts_compare(op, c, got, ref, msg, sizeof msg)) {
            cts_fail(cx, name, "output %zu: %s", i, msg);
            goto done;
        }
    }
    cts_pass(cx, name, NULL);
done:
    sy_status_free(st);
    sy_session_release(ps);
    sy_model_release(pm);
    sy_session_release(rs);
    sy_model_release(rm);
}

static void run_claim(cts_ctx *cx, sy_env *penv, sy_env *renv, const cts_op *op, sy_dtype dt)
{
    size_t n = 0;
    cts_case *cases = cts_make_cases(op, dt, cx->opset, &n);
    int p0 = cx->passed, f0 = cx->failed, s0 = cx->skipped, selected = 0;
    for (size_t i = 0; i < n; i++) {
        char name[160];
        snprintf(name, sizeof name, "%s.%s.%s", op->op, sy_dtype_name(dt), cases[i].name);
        if (!cts_selected(cx, name))
            continue;
        selected++;
        run_case(cx, penv, renv, op, &cases[i], name);
    }
    cts_free_cases(cases, n);
    if (selected)
        printf("  %-16s %-9s %3d passed, %d failed, %d skipped\n", op->op, sy_dtype_name(dt), cx->passed - p0,
               cx->failed - f0, cx->skipped - s0);
}

/* ---- the command ------------------------------------------------------------------------- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    char chunk[4096];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *g = realloc(buf, cap);
            if (!g) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = g;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    else
        buf[len] = '\0';
    return buf;
}

/* the provider the plugin registers ("provider:NAME" in its registered list) */
static int registered_providers(const char *registered, char *first, size_t len)
{
    int n = 0;
    for (const char *at = registered ? strstr(registered, "provider:") : NULL; at; at = strstr(at + 1, "provider:")) {
        if (at != registered && at[-1] != ' ')
            continue;
        const char *nm = at + strlen("provider:");
        size_t l = strcspn(nm, ", ");
        if (!n)
            snprintf(first, len, "%.*s", (int)l, nm);
        n++;
    }
    return n;
}

int cmd_cts(int argc, char **argv)
{
    const char *plugin = NULL, *provider = NULL, *filter = NULL, *exclude = NULL, *config = NULL;
    const char *models[64];
    int n_models = 0;
    long opset = 17, cycles = 8;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--plugin") && has_val) {
            plugin = argv[++i];
        } else if (!strcmp(a, "--model") && has_val) {
            if (n_models == (int)(sizeof models / sizeof *models))
                return cli_usage_error("cts", "at most %zu --model files", sizeof models / sizeof *models);
            models[n_models++] = argv[++i];
        } else if (!strcmp(a, "--provider") && has_val) {
            provider = argv[++i];
        } else if (!strcmp(a, "--filter") && has_val) {
            filter = argv[++i];
        } else if (!strcmp(a, "--exclude") && has_val) {
            exclude = argv[++i];
        } else if (!strcmp(a, "--config") && has_val) {
            config = argv[++i];
        } else if (!strcmp(a, "--opset") && has_val) {
            if ((opset = cli_parse_long(argv[++i], 1, 1000)) < 0)
                return cli_usage_error("cts", "--opset expects an integer from 1 to 1000, got '%s'", argv[i]);
        } else if (!strcmp(a, "--cycles") && has_val) {
            if ((cycles = cli_parse_long(argv[++i], 3, 10000)) < 0)
                return cli_usage_error("cts", "--cycles expects an integer from 3 to 10000, got '%s'", argv[i]);
        } else if (!strcmp(a, "--precision") && has_val) {
            const char *p = argv[++i];
            if (!strcmp(p, "fp16"))
                cts_storage_precision = SY_DT_FLOAT16;
            else if (!strcmp(p, "bf16"))
                cts_storage_precision = SY_DT_BFLOAT16;
            else
                return cli_usage_error("cts", "--precision expects fp16 or bf16, got '%s'", p);
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else {
            return cli_usage_error("cts", "unexpected argument '%s'", a);
        }
    }
    if (!plugin)
        return cli_usage_error("cts", "--plugin FILE is required");

    cts_ctx cx = {0};
    cx.opset = opset;
    cx.verbose = verbose;
    char plugin_abs[PATH_MAX], config_dir[PATH_MAX];
    if (!realpath(plugin, plugin_abs)) {
        fprintf(stderr, "switchyard cts: --plugin %s: %s\n", plugin, strerror(errno));
        return 1;
    }
    cx.plugin_path = plugin_abs;
    char *config_text = NULL;
    if (config) {
        if (!(config_text = read_text(config))) {
            fprintf(stderr, "switchyard cts: --config %s: %s\n", config, strerror(errno));
            return 1;
        }
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", config);
        char *slash = strrchr(tmp, '/');
        if (slash)
            *slash = '\0';
        if (!realpath(slash ? tmp : ".", config_dir)) {
            free(config_text);
            fprintf(stderr, "switchyard cts: --config %s: %s\n", config, strerror(errno));
            return 1;
        }
        cx.config_text = config_text;
        cx.config_dir = config_dir;
    }
    if (filter) {
        int rc = regcomp(&cx.filter, filter, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[128];
            regerror(rc, &cx.filter, msg, sizeof msg);
            free(config_text);
            return cli_usage_error("cts", "--filter '%s': %s", filter, msg);
        }
        cx.has_filter = true;
    }
    if (exclude) {
        int rc = regcomp(&cx.exclude, exclude, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[128];
            regerror(rc, &cx.exclude, msg, sizeof msg);
            free(config_text);
            if (cx.has_filter)
                regfree(&cx.filter);
            return cli_usage_error("cts", "--exclude '%s': %s", exclude, msg);
        }
        cx.has_exclude = true;
    }

    int rc = 1;
    sy_env *env = NULL, *penv = NULL, *renv = NULL;
    char prov_buf[128] = "", plugin_name[128] = "", providers[300];
    /* 1. load everything and find the plugin and its provider */
    sy_status *st = cts_env(&cx, NULL, false, NULL, &env);
    if (st) {
        rc = cli_fail(st, "cts: loading the plugin with the default plugins");
        goto done;
    }
    sy_plugin_info pi = {.struct_size = sizeof pi};
    bool found = false;
    for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
        sy_plugin_info q = {.struct_size = sizeof q};
        char real[PATH_MAX];
        if (!sy_env_plugin_info(env, i, &q) || !realpath(q.path, real) || strcmp(real, plugin_abs))
            continue;
        if (!found || q.loaded)
            pi = q;
        found = true;
    }
    if (!found || !pi.loaded) {
        printf("FAIL abi.load: %s was %s: %s\n", plugin_abs, found ? "refused" : "not loaded",
               found && pi.refusal ? pi.refusal : "?");
        printf("\n0 passed, 1 failed, 0 skipped\n");
        goto done;
    }
    snprintf(plugin_name, sizeof plugin_name, "%s", pi.name);
    cx.plugin_name = plugin_name;
    int n_prov = registered_providers(pi.registered, prov_buf, sizeof prov_buf);
    if (!provider) {
        if (n_prov > 1) {
            rc = cli_usage_error("cts", "%s registers %d providers (%s): choose one with --provider", pi.name, n_prov,
                                 pi.registered);
            goto done;
        }
        provider = n_prov == 1 ? prov_buf : "cpu_ref";
    }
    cx.provider = provider;
    cx.provider_is_fallback = !strcmp(provider, "cpu_ref");
    printf("switchyard cts %s: plugin %s %s (ABI %u.%u) from %s\n", sy_version(), pi.name,
           pi.version ? pi.version : "?", pi.abi_major, pi.abi_minor, plugin_abs);
    printf("provider under test: %s; reference: cpu_ref; opset %ld\n", provider, opset);
    cts_abi_descriptor(&cx, &pi, SY_ABI_MAJOR, SY_ABI_MINOR);

    /* 2. the provider's environment and the reference's */
    bool ref_is_self = !strcmp(provider, "cpu_ref");
    if (ref_is_self)
        snprintf(providers, sizeof providers, "cpu_ref");
    else
        snprintf(providers, sizeof providers, "%s, cpu_ref", provider);
    if ((st = cts_env(&cx, providers, false, NULL, &penv))) {
        rc = cli_fail(st, "cts: environment with providers = the provider, cpu_ref");
        goto done;
    }
    if ((st = cts_env(&cx, "cpu_ref", true, NULL, &renv))) {
        rc = cli_fail(st, "cts: environment with providers = cpu_ref");
        goto done;
    }

    /* 3. what the provider claims */
    if ((st = find_claims(&cx, penv))) {
        rc = cli_fail(st, "cts: probing");
        goto done;
    }
    printf("claims (op, dtype) among the %zu ops the kit knows:", cts_n_ops);
    for (size_t i = 0; i < cx.n_claims; i++)
        printf("%s %s[%s]", i ? "," : "", cts_ops[cx.claims[i].op].op, sy_dtype_name(cx.claims[i].dt));
    printf("%s\n", cx.n_claims ? "" : " none");
    if (pi.n_kernels || pi.n_schemas)
        printf("(the plugin registered %u kernels and %u schemas; ops the kit has no generator for are not "
               "compared)\n",
               pi.n_kernels, pi.n_schemas);

    /* 4. cases */
    printf("\ncases (compared with cpu_ref):\n");
    for (size_t i = 0; i < cx.n_claims; i++)
        run_claim(&cx, penv, renv, &cts_ops[cx.claims[i].op], cx.claims[i].dt);

    /* 4b. whole models, node by node */
    if (n_models) {
        printf("\nmodels (compared node by node with cpu_ref):\n");
        for (int i = 0; i < n_models; i++)
            cts_run_model(&cx, penv, renv, models[i]);
    }

    /* 5. ABI behaviour */
    sy_env_release(env);
    env = NULL;
    printf("\nABI behaviour:\n");
    cts_abi_checks(&cx, penv, renv, (int)cycles);

    printf("\n%d passed, %d failed, %d skipped\n", cx.passed, cx.failed, cx.skipped);
    rc = cx.failed ? 1 : 0;
done:
    sy_env_release(renv);
    sy_env_release(penv);
    sy_env_release(env);
    free(cx.claims);
    free(config_text);
    if (cx.has_filter)
        regfree(&cx.filter);
    if (cx.has_exclude)
        regfree(&cx.exclude);
    return rc;
}
