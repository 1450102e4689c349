/*
 * sy_env: configuration + plugins + providers. The embedded default config
 * loads every plugin found next to libswitchyard, so a host (and the CLI)
 * works with no INI at all.
 */
#include "env.h"
#include "builtin.h"
#include "status.h"
#include "util.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char embedded_default_ini[] = "[switchyard]\n"
                                           "plugin_dirs = @default\n"
                                           "threads = 1\n"
                                           "strict = false\n"
                                           "log_level = warn\n";

/* Plugin init and registration are serialised process-wide. */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

static void default_logger(void *user, sy_log_level level, const char *origin, const char *message)
{
    (void)user;
    static const char *const names[] = {"error", "warning", "info", "debug", "trace"};
    fprintf(stderr, "switchyard: %s: %s: %s\n", names[level <= SY_LOG_TRACE ? level : SY_LOG_TRACE], origin,
            message);
}

void sy_env_log(const sy_env *env, sy_log_level level, const char *origin, const char *fmt, ...)
{
    if (env && level > env->cfg.log_level)
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (env && env->log_fn)
        env->log_fn(env->log_user, level, origin, msg);
    else
        default_logger(NULL, level, origin, msg);
}

/* Instantiate providers (options checked by key) and fix the priority order:
 * the INI's `providers` list, else registration order with fallback
 * providers (cpu_ref) last. */
static sy_status *setup_providers(sy_env *env)
{
    const sy_config *cfg = &env->cfg;
    for (uint32_t i = 0; i < cfg->n_sections; i++) {
        const char *sec = cfg->sections[i].section;
        if (!strncmp(sec, "provider.", 9) && !sy_env_find_provider(env, sec + 9))
            return sy_error(SY_ERR_INVALID_CONFIG, "%s: [%s] names a provider that no loaded plugin registers",
                            cfg->origin, sec);
    }
    env->priority = calloc(env->n_providers ? env->n_providers : 1, sizeof *env->priority);
    if (!env->priority)
        return sy_error_oom();
    if (cfg->n_providers) {
        for (uint32_t i = 0; i < cfg->n_providers; i++) {
            sy_provider_rec *r = sy_env_find_provider(env, cfg->providers[i]);
            if (!r) {
                char known[512] = "";
                size_t len = 0;
                for (uint32_t k = 0; k < env->n_providers; k++)
                    sy_buf_appendf(known, sizeof known, &len, "%s%s", k ? ", " : "", env->providers[k]->def.name);
                return sy_error(SY_ERR_INVALID_CONFIG,
                                "%s: providers = ... names '%s', which no loaded plugin registers (loaded: %s)",
                                cfg->origin, cfg->providers[i], known[0] ? known : "none");
            }
            for (uint32_t k = 0; k < env->n_priority; k++)
                if (env->priority[k] == r)
                    return sy_error(SY_ERR_INVALID_CONFIG, "%s: provider '%s' listed twice in providers", cfg->origin,
                                    cfg->providers[i]);
            env->priority[env->n_priority++] = r;
        }
    } else {
        /* no list: every provider, fallback (cpu_ref) last — except emulators,
         * which take nodes only where a deployment names them */
        for (int pass = 0; pass < 2; pass++)
            for (uint32_t i = 0; i < env->n_providers; i++) {
                sy_provider_rec *r = env->providers[i];
                bool fb = (r->def.flags & SY_PROVIDER_FALLBACK) != 0;
                if ((r->def.flags & SY_PROVIDER_EMULATOR) && !fb)
                    continue;
                if ((pass == 0) != fb)
                    env->priority[env->n_priority++] = r;
            }
    }
    /* every registered provider is created (a fallback outside the priority
     * list may still take unclaimed nodes); the priority list says who asks first */
    for (uint32_t i = 0; i < env->n_providers; i++) {
        sy_provider_rec *r = env->providers[i];
        const sy_options *opts = sy_config_section(cfg, "provider", r->def.name);
        /* requant is the host's key in every provider section (requant_form.c) */
        static const char *const host_keys[] = {"requant", NULL};
        SY_TRY(sy_options_check(opts, r->def.option_keys, host_keys, cfg->origin));
        const char *rq = opts ? sy_options_get(opts, "requant") : NULL;
        if (rq && strcmp(rq, "onnx") && strcmp(rq, "gemmlowp") && strcmp(rq, "single_rounding"))
            return sy_error(SY_ERR_INVALID_CONFIG,
                            "%s: [provider.%s] requant = %s: expected onnx, gemmlowp or single_rounding",
                            cfg->origin, r->def.name, rq);
        if (r->def.create_env || r->def.create) {
            /* ABI 1.2: create_env also gets the plugin's state in this env */
            sy_status *st = r->def.create_env ? r->def.create_env(r->owner->state, opts, &r->state)
                                              : r->def.create(opts, &r->state);
            if (st)
                return sy_error_wrap(st, "provider '%s' (plugin %s): create failed", r->def.name, r->owner->path);
        }
        /* a provider may size its domain from its options (e.g. vtcm_mb):
         * take the definition again after create */
        if (r->def.domain && r->def.domain->struct_size >= sizeof r->domain && r->def.domain->name)
            memcpy(&r->domain, r->def.domain, sizeof r->domain);
        r->created = true;
        r->domain_id = i;
        r->index = i;
        if (!env->fallback && (r->def.flags & SY_PROVIDER_FALLBACK))
            env->fallback = r;
    }
    return NULL;
}

static sy_status *env_finish(sy_env *env)
{
    pthread_mutex_lock(&env_lock);
    sy_status *st = sy_loader_load_all(env);
    if (!st)
        st = setup_providers(env);
    pthread_mutex_unlock(&env_lock);
    return st;
}

static sy_env *env_new(void)
{
    sy_env *env = calloc(1, sizeof *env);
    if (env)
        env->refcount = 1;
    return env;
}

static void env_destroy(sy_env *env)
{
    pthread_mutex_lock(&env_lock);
    sy_loader_unload_all(env);
    pthread_mutex_unlock(&env_lock);
    sy_config_free(&env->cfg);
    free(env);
}

void sy_env_ref(sy_env *env) { __atomic_add_fetch(&env->refcount, 1, __ATOMIC_ACQ_REL); }

void sy_env_unref(sy_env *env)
{
    if (env && __atomic_sub_fetch(&env->refcount, 1, __ATOMIC_ACQ_REL) == 0)
        env_destroy(env);
}

SY_EXPORT sy_status *sy_env_create(const char *ini_path, sy_env **out)
{
    if (!out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_env_create: out is NULL");
    sy_env *env = env_new();
    if (!env)
        return sy_error_oom();
    sy_status *st = ini_path ? sy_config_parse_file(ini_path, &env->cfg)
                             : sy_config_parse_string(embedded_default_ini, "<embedded default config>", ".", &env->cfg);
    if (!st)
        st = env_finish(env);
    if (st) {
        env_destroy(env);
        return st;
    }
    *out = env;
    return NULL;
}

SY_EXPORT sy_status *sy_env_create_from_string(const char *ini_text, const char *base_dir, sy_env **out)
{
    if (!out || !ini_text)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_env_create_from_string: ini_text and out are required");
    sy_env *env = env_new();
    if (!env)
        return sy_error_oom();
    sy_status *st = sy_config_parse_string(ini_text, "<config string>", base_dir, &env->cfg);
    if (!st)
        st = env_finish(env);
    if (st) {
        env_destroy(env);
        return st;
    }
    *out = env;
    return NULL;
}

SY_EXPORT void sy_env_release(sy_env *env)
{
    if (!env || env->released)
        return;
    env->released = true;
    sy_env_unref(env);
}

SY_EXPORT void sy_env_set_logger(sy_env *env, sy_log_fn fn, void *user)
{
    if (!env)
        return;
    env->log_fn = fn;
    env->log_user = user;
}

SY_EXPORT size_t sy_env_plugin_count(const sy_env *env) { return env ? env->n_plugins : 0; }

SY_EXPORT bool sy_env_plugin_info(const sy_env *env, size_t index, sy_plugin_info *out)
{
    if (!env || !out || index >= env->n_plugins || out->struct_size < sizeof *out)
        return false;
    const sy_loaded_plugin *p = env->plugins[index];
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->path = p->path;
    out->name = p->desc_name;
    out->version = p->desc_version;
    out->description = p->desc_description;
    out->abi_major = p->abi_major;
    out->abi_minor = p->abi_minor;
    out->loaded = p->refusal == NULL;
    out->refusal = p->refusal;
    out->n_schemas = p->n_schemas;
    out->n_kernels = p->n_kernels;
    out->n_providers = p->n_providers;
    out->n_schemes = p->n_schemes;
    out->n_extensions = p->n_extensions;
    out->registered = p->registered ? p->registered : "";
    return true;
}

SY_EXPORT size_t sy_env_provider_count(const sy_env *env) { return env ? env->n_priority : 0; }

SY_EXPORT const char *sy_env_provider_name(const sy_env *env, size_t index)
{
    return env && index < env->n_priority ? env->priority[index]->def.name : NULL;
}

SY_EXPORT const char *sy_env_provider_description(const sy_env *env, size_t index)
{
    return env && index < env->n_priority ? env->priority[index]->def.description : NULL;
}

SY_EXPORT bool sy_env_provider_is_emulator(const sy_env *env, size_t index)
{
    return env && index < env->n_priority && (env->priority[index]->def.flags & SY_PROVIDER_EMULATOR);
}

SY_EXPORT bool sy_env_has_op(const sy_env *env, const char *domain, const char *op, int32_t opset)
{
    return env && op && (sy_env_find_schema(env, domain, op, opset) != NULL || sy_builtin_lookup(domain, op, opset));
}

const sy_extension_rec *sy_env_find_extension(const sy_env *env, const char *name, uint32_t version)
{
    for (uint32_t i = 0; i < env->n_extensions; i++)
        if (!strcmp(env->extensions[i]->name, name) && env->extensions[i]->version == version)
            return env->extensions[i];
    return NULL;
}

SY_EXPORT const void *sy_get_extension(const sy_env *env, const char *name, uint32_t version)
{
    if (!env || !name)
        return NULL;
    const sy_extension_rec *e = sy_env_find_extension(env, name, version);
    return e ? e->table : NULL;
}

/* Kernels in a stable order: op entries by key, kernels in registration order. */
static int cmp_entry(const void *a, const void *b)
{
    return strcmp((*(const sy_op_entry *const *)a)->key, (*(const sy_op_entry *const *)b)->key);
}

static const sy_kernel_rec *kernel_at(const sy_env *env, size_t index)
{
    size_t n_entries = HASH_COUNT(env->ops);
    const sy_op_entry **entries = malloc((n_entries ? n_entries : 1) * sizeof *entries);
    if (!entries)
        return NULL;
    size_t i = 0;
    for (const sy_op_entry *e = env->ops; e; e = e->hh.next)
        entries[i++] = e;
    qsort(entries, n_entries, sizeof *entries, cmp_entry);
    const sy_kernel_rec *found = NULL;
    for (i = 0; i < n_entries && !found; i++) {
        if (index < entries[i]->n_kernels)
            found = entries[i]->kernels[index];
        else
            index -= entries[i]->n_kernels;
    }
    free(entries);
    return found;
}

SY_EXPORT size_t sy_env_kernel_count(const sy_env *env)
{
    size_t n = 0;
    for (const sy_op_entry *e = env ? env->ops : NULL; e; e = e->hh.next)
        n += e->n_kernels;
    return n;
}

SY_EXPORT bool sy_env_kernel_info(const sy_env *env, size_t index, sy_kernel_info *out)
{
    if (!env || !out || out->struct_size < sizeof *out)
        return false;
    const sy_kernel_rec *k = kernel_at(env, index);
    if (!k)
        return false;
    *out = (sy_kernel_info){
        .struct_size = sizeof *out,
        .domain = sy_domain_canonical(k->def.domain),
        .op = k->def.op,
        .since_version = k->def.since_version,
        .until_version = k->def.until_version,
        .provider = k->def.provider,
        .type_mask = k->def.type_mask,
        .type_input = k->def.type_input,
        .plugin = k->owner->desc_name ? k->owner->desc_name : k->owner->name,
    };
    return true;
}
