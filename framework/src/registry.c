/*
 * The one registry. Registrations made during a plugin's init are staged and
 * committed only when init succeeds, so a plugin that fails leaves nothing
 * behind. Lookups use uthash tables keyed by "domain|op".
 */
#include "env.h"
#include "status.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Minimum struct sizes accepted: the sizes of ABI 1.0 on LP64. These are
 * frozen numbers: when a struct grows (append-only) they stay, so a plugin
 * built against 1.0 still loads; a smaller size is a broken plugin. */
#define SY_V1_0_SCHEMA_SIZE ((size_t)96)
#define SY_V1_0_KERNEL_SIZE ((size_t)96)
#define SY_V1_0_PROVIDER_SIZE ((size_t)88)
#define SY_V1_0_SCHEME_SIZE ((size_t)80)
#define SY_V1_0_DOMAIN_SIZE ((size_t)40)
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(sy_op_schema) >= SY_V1_0_SCHEMA_SIZE, "sy_op_schema shrank: ABI break");
_Static_assert(sizeof(sy_kernel_def) >= SY_V1_0_KERNEL_SIZE, "sy_kernel_def shrank: ABI break");
_Static_assert(sizeof(sy_provider_def) >= SY_V1_0_PROVIDER_SIZE, "sy_provider_def shrank: ABI break");
_Static_assert(sizeof(sy_quant_scheme_def) >= SY_V1_0_SCHEME_SIZE, "sy_quant_scheme_def shrank: ABI break");
_Static_assert(sizeof(sy_memory_domain_def) >= SY_V1_0_DOMAIN_SIZE, "sy_memory_domain_def shrank: ABI break");
#endif

typedef struct pending {
    sy_schema_rec **schemas;
    uint32_t n_schemas;
    sy_kernel_rec **kernels;
    uint32_t n_kernels;
    sy_provider_rec **providers;
    uint32_t n_providers;
    sy_scheme_rec **schemes;
    uint32_t n_schemes;
    sy_extension_rec **exts;
    uint32_t n_exts;
} pending;

struct sy_plugin {
    sy_env *env;
    sy_loaded_plugin *lp;
    pending pend;
    bool active;
};

/* Registration happens under the env-creation lock, one plugin at a time. */
static struct sy_plugin current;

void sy_hostapi_set_log_env(sy_env *env);

sy_plugin *sy_registry_begin(sy_env *env, sy_loaded_plugin *lp)
{
    memset(&current, 0, sizeof current);
    current.env = env;
    current.lp = lp;
    current.active = true;
    sy_hostapi_set_log_env(env);
    return &current;
}

const char *sy_domain_canonical(const char *domain)
{
    if (!domain || !strcmp(domain, "ai.onnx"))
        return "";
    return domain;
}

static char *op_key(const char *domain, const char *op)
{
    return sy_asprintf("%s|%s", sy_domain_canonical(domain), op);
}

#define PUSH(arr, n, item)                                                                                         \
    do {                                                                                                           \
        void *grown_ = realloc((arr), ((n) + 1) * sizeof *(arr));                                                  \
        if (!grown_)                                                                                               \
            return sy_error_oom();                                                                                 \
        (arr) = grown_;                                                                                            \
        (arr)[(n)++] = (item);                                                                                     \
    } while (0)

static sy_status *check_active(sy_plugin *p, const char *what)
{
    if (!p || p != &current || !p->active)
        return sy_error(SY_ERR_PLUGIN, "register_%s called outside the plugin's init", what);
    return NULL;
}

static void note_registered(sy_loaded_plugin *lp, const char *kind, const char *name)
{
    /* one entry per name: several versions of one op's schema show once */
    if (lp->registered) {
        char probe[256];
        snprintf(probe, sizeof probe, "%s:%s", kind, name ? name : "?");
        size_t pl = strlen(probe);
        for (const char *at = strstr(lp->registered, probe); at; at = strstr(at + 1, probe))
            if ((at == lp->registered || at[-1] == ' ') && (at[pl] == ',' || at[pl] == '\0'))
                return;
    }
    char *item = sy_asprintf("%s%s:%s", lp->registered_len ? ", " : "", kind, name ? name : "?");
    if (!item)
        return;
    size_t len = strlen(item);
    if (lp->registered_len + len + 1 > lp->registered_cap) {
        size_t cap = (lp->registered_cap + len + 1) * 2;
        char *grown = realloc(lp->registered, cap);
        if (!grown) {
            free(item);
            return;
        }
        lp->registered = grown;
        lp->registered_cap = cap;
    }
    memcpy(lp->registered + lp->registered_len, item, len + 1);
    lp->registered_len += len;
    free(item);
}

sy_status *sy_reg_state(sy_plugin *p, void *state, void (*release)(void *state))
{
    if (!p || p != &current || !p->active)
        return sy_error(SY_ERR_PLUGIN, "plugin_set_state called outside the plugin's init");
    p->lp->state = state;
    p->lp->state_release = release;
    return NULL;
}

sy_status *sy_reg_schema(sy_plugin *p, const sy_op_schema *schema)
{
    SY_TRY(check_active(p, "schema"));
    if (!schema || schema->struct_size < SY_V1_0_SCHEMA_SIZE)
        return sy_error(SY_ERR_PLUGIN, "register_schema: struct_size %u is smaller than ABI 1.0's %zu",
                        schema ? schema->struct_size : 0, SY_V1_0_SCHEMA_SIZE);
    if (!schema->name || !schema->name[0] || !schema->infer || schema->since_version < 1)
        return sy_error(SY_ERR_PLUGIN, "register_schema '%s': name, infer and since_version >= 1 are required",
                        schema->name ? schema->name : "(null)");
    sy_schema_rec *r = calloc(1, sizeof *r);
    if (!r)
        return sy_error_oom();
    memcpy(&r->def, schema, schema->struct_size < sizeof r->def ? schema->struct_size : sizeof r->def);
    r->def.struct_size = sizeof r->def;
    r->owner = p->lp;
    PUSH(p->pend.schemas, p->pend.n_schemas, r);
    return NULL;
}

sy_status *sy_reg_kernel(sy_plugin *p, const sy_kernel_def *k)
{
    SY_TRY(check_active(p, "kernel"));
    if (!k || k->struct_size < SY_V1_0_KERNEL_SIZE)
        return sy_error(SY_ERR_PLUGIN, "register_kernel: struct_size %u is smaller than ABI 1.0's %zu",
                        k ? k->struct_size : 0, SY_V1_0_KERNEL_SIZE);
    if (!k->op || !k->provider || !k->run)
        return sy_error(SY_ERR_PLUGIN, "register_kernel '%s': op, provider and run are required",
                        k->op ? k->op : "(null)");
    sy_kernel_rec *r = calloc(1, sizeof *r);
    if (!r)
        return sy_error_oom();
    memcpy(&r->def, k, k->struct_size < sizeof r->def ? k->struct_size : sizeof r->def);
    r->def.struct_size = sizeof r->def;
    r->owner = p->lp;
    PUSH(p->pend.kernels, p->pend.n_kernels, r);
    return NULL;
}

sy_status *sy_reg_provider(sy_plugin *p, const sy_provider_def *d)
{
    SY_TRY(check_active(p, "provider"));
    if (!d || d->struct_size < SY_V1_0_PROVIDER_SIZE)
        return sy_error(SY_ERR_PLUGIN, "register_provider: struct_size %u is smaller than ABI 1.0's %zu",
                        d ? d->struct_size : 0, SY_V1_0_PROVIDER_SIZE);
    if (!d->name || !d->name[0])
        return sy_error(SY_ERR_PLUGIN, "register_provider: a name is required");
    if (sy_env_find_provider(p->env, d->name))
        return sy_error(SY_ERR_PLUGIN, "provider '%s' is already registered by another plugin", d->name);
    for (uint32_t i = 0; i < p->pend.n_providers; i++)
        if (!strcmp(p->pend.providers[i]->def.name, d->name))
            return sy_error(SY_ERR_PLUGIN, "provider '%s' registered twice", d->name);
    sy_provider_rec *r = calloc(1, sizeof *r);
    if (!r)
        return sy_error_oom();
    memcpy(&r->def, d, d->struct_size < sizeof r->def ? d->struct_size : sizeof r->def);
    r->def.struct_size = sizeof r->def;
    r->owner = p->lp;
    /* default domain: host RAM */
    r->domain = (sy_memory_domain_def){sizeof(sy_memory_domain_def), "host", 64, 0, true};
    if (d->domain) {
        if (d->domain->struct_size < SY_V1_0_DOMAIN_SIZE || !d->domain->name) {
            free(r);
            return sy_error(SY_ERR_PLUGIN, "provider '%s': memory domain needs struct_size and a name", d->name);
        }
        memcpy(&r->domain, d->domain, sizeof r->domain);
        if (!r->domain.alignment || (r->domain.alignment & (r->domain.alignment - 1))) {
            free(r);
            return sy_error(SY_ERR_PLUGIN, "provider '%s': domain alignment %u is not a power of two", d->name,
                            d->domain->alignment);
        }
    }
    PUSH(p->pend.providers, p->pend.n_providers, r);
    return NULL;
}

sy_status *sy_reg_scheme(sy_plugin *p, const sy_quant_scheme_def *d)
{
    SY_TRY(check_active(p, "quant_scheme"));
    if (!d || d->struct_size < SY_V1_0_SCHEME_SIZE || !d->name)
        return sy_error(SY_ERR_PLUGIN, "register_quant_scheme: struct_size or name missing");
    if (sy_env_find_scheme(p->env, d->name))
        return sy_error(SY_ERR_PLUGIN, "quantization scheme '%s' is already registered", d->name);
    sy_scheme_rec *r = calloc(1, sizeof *r);
    if (!r)
        return sy_error_oom();
    memcpy(&r->def, d, d->struct_size < sizeof r->def ? d->struct_size : sizeof r->def);
    r->def.struct_size = sizeof r->def;
    r->owner = p->lp;
    PUSH(p->pend.schemes, p->pend.n_schemes, r);
    return NULL;
}

sy_status *sy_reg_extension(sy_plugin *p, const char *name, uint32_t version, const void *table)
{
    SY_TRY(check_active(p, "extension"));
    if (!name || !table || *(const uint32_t *)table < sizeof(uint32_t))
        return sy_error(SY_ERR_PLUGIN, "register_extension: name and a table starting with struct_size are required");
    for (uint32_t i = 0; i < p->env->n_extensions; i++)
        if (!strcmp(p->env->extensions[i]->name, name) && p->env->extensions[i]->version == version)
            return sy_error(SY_ERR_PLUGIN, "extension '%s' v%u is already registered", name, version);
    sy_extension_rec *r = calloc(1, sizeof *r);
    if (!r || !(r->name = sy_strdup(name))) {
        free(r);
        return sy_error_oom();
    }
    r->version = version;
    r->table = table;
    r->owner = p->lp;
    PUSH(p->pend.exts, p->pend.n_exts, r);
    return NULL;
}

static sy_op_entry *op_entry_get(sy_env *env, const char *domain, const char *op, bool create)
{
    char *key = op_key(domain, op);
    if (!key)
        return NULL;
    sy_op_entry *e = NULL;
    HASH_FIND_STR(env->ops, key, e);
    if (!e && create) {
        e = calloc(1, sizeof *e);
        if (!e) {
            free(key);
            return NULL;
        }
        e->key = key;
        HASH_ADD_KEYPTR(hh, env->ops, e->key, strlen(e->key), e);
        return e;
    }
    free(key);
    return e;
}

static void pending_free(pending *pd)
{
    for (uint32_t i = 0; i < pd->n_schemas; i++)
        free(pd->schemas[i]);
    for (uint32_t i = 0; i < pd->n_kernels; i++)
        free(pd->kernels[i]);
    for (uint32_t i = 0; i < pd->n_providers; i++)
        free(pd->providers[i]);
    for (uint32_t i = 0; i < pd->n_schemes; i++)
        free(pd->schemes[i]);
    for (uint32_t i = 0; i < pd->n_exts; i++)
        if (pd->exts[i]) { /* NULL once moved into the registry */
            free(pd->exts[i]->name);
            free(pd->exts[i]);
        }
    free(pd->schemas);
    free(pd->kernels);
    free(pd->providers);
    free(pd->schemes);
    free(pd->exts);
    memset(pd, 0, sizeof *pd);
}

static sy_status *commit_schema(sy_env *env, sy_schema_rec *r)
{
    sy_op_entry *e = op_entry_get(env, r->def.domain, r->def.name, true);
    if (!e)
        return sy_error_oom();
    uint32_t pos = 0;
    while (pos < e->n_schemas && e->schemas[pos]->def.since_version < r->def.since_version)
        pos++;
    if (pos < e->n_schemas && e->schemas[pos]->def.since_version == r->def.since_version)
        return sy_error(SY_ERR_PLUGIN, "schema %s%s%s version %d is already registered by plugin '%s'",
                        sy_domain_canonical(r->def.domain), *sy_domain_canonical(r->def.domain) ? "::" : "",
                        r->def.name, r->def.since_version, e->schemas[pos]->owner->name);
    sy_schema_rec **grown = realloc(e->schemas, (e->n_schemas + 1) * sizeof *grown);
    if (!grown)
        return sy_error_oom();
    e->schemas = grown;
    memmove(e->schemas + pos + 1, e->schemas + pos, (e->n_schemas - pos) * sizeof *grown);
    e->schemas[pos] = r;
    e->n_schemas++;
    return NULL;
}

static sy_status *commit_kernel(sy_env *env, sy_kernel_rec *r)
{
    sy_op_entry *e = op_entry_get(env, r->def.domain, r->def.op, true);
    if (!e)
        return sy_error_oom();
    sy_kernel_rec **grown = realloc(e->kernels, (e->n_kernels + 1) * sizeof *grown);
    if (!grown)
        return sy_error_oom();
    e->kernels = grown;
    e->kernels[e->n_kernels++] = r;
    return NULL;
}

/* Validate the staged registrations against the registry, then move them in.
 * `keep` false discards everything (init failed). */
sy_status *sy_registry_commit(sy_env *env, sy_loaded_plugin *lp, bool keep)
{
    pending *pd = &current.pend;
    current.active = false;
    sy_hostapi_set_log_env(NULL);
    if (!keep) {
        pending_free(pd);
        return NULL;
    }
    /* refuse schema conflicts before changing anything */
    for (uint32_t i = 0; i < pd->n_schemas; i++) {
        const sy_schema_rec *r = pd->schemas[i];
        const sy_op_entry *e = sy_env_find_op(env, r->def.domain, r->def.name);
        for (uint32_t k = 0; e && k < e->n_schemas; k++)
            if (e->schemas[k]->def.since_version == r->def.since_version) {
                sy_status *st = sy_error(SY_ERR_PLUGIN,
                                         "schema '%s' version %d is already registered by plugin '%s'", r->def.name,
                                         r->def.since_version, e->schemas[k]->owner->name);
                pending_free(pd);
                return st;
            }
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(pd->schemas[k]->def.name, r->def.name) &&
                !strcmp(sy_domain_canonical(pd->schemas[k]->def.domain), sy_domain_canonical(r->def.domain)) &&
                pd->schemas[k]->def.since_version == r->def.since_version) {
                sy_status *st = sy_error(SY_ERR_PLUGIN, "schema '%s' version %d registered twice", r->def.name,
                                         r->def.since_version);
                pending_free(pd);
                return st;
            }
    }
    sy_status *st = NULL;
    for (uint32_t i = 0; i < pd->n_schemas && !st; i++) {
        st = commit_schema(env, pd->schemas[i]);
        if (!st) {
            note_registered(lp, "schema", pd->schemas[i]->def.name);
            lp->n_schemas++;
            pd->schemas[i] = NULL;
        }
    }
    for (uint32_t i = 0; i < pd->n_kernels && !st; i++) {
        st = commit_kernel(env, pd->kernels[i]);
        if (!st) {
            lp->n_kernels++;
            pd->kernels[i] = NULL;
        }
    }
    for (uint32_t i = 0; i < pd->n_providers && !st; i++) {
        sy_provider_rec **grown = realloc(env->providers, (env->n_providers + 1) * sizeof *grown);
        if (!grown) {
            st = sy_error_oom();
            break;
        }
        env->providers = grown;
        env->providers[env->n_providers++] = pd->providers[i];
        note_registered(lp, "provider", pd->providers[i]->def.name);
        lp->n_providers++;
        pd->providers[i] = NULL;
    }
    for (uint32_t i = 0; i < pd->n_schemes && !st; i++) {
        sy_scheme_rec **grown = realloc(env->schemes, (env->n_schemes + 1) * sizeof *grown);
        if (!grown) {
            st = sy_error_oom();
            break;
        }
        env->schemes = grown;
        env->schemes[env->n_schemes++] = pd->schemes[i];
        note_registered(lp, "quant", pd->schemes[i]->def.name);
        lp->n_schemes++;
        pd->schemes[i] = NULL;
    }
    for (uint32_t i = 0; i < pd->n_exts && !st; i++) {
        sy_extension_rec **grown = realloc(env->extensions, (env->n_extensions + 1) * sizeof *grown);
        if (!grown) {
            st = sy_error_oom();
            break;
        }
        env->extensions = grown;
        env->extensions[env->n_extensions++] = pd->exts[i];
        note_registered(lp, "extension", pd->exts[i]->name);
        lp->n_extensions++;
        pd->exts[i] = NULL;
    }
    if (lp->n_kernels) {
        char buf[32];
        snprintf(buf, sizeof buf, "%u", lp->n_kernels);
        note_registered(lp, "kernels", buf);
    }
    /* entries set to NULL were moved; free() of NULL is a no-op */
    pending_free(pd);
    return st;
}

const sy_op_entry *sy_env_find_op(const sy_env *env, const char *domain, const char *op)
{
    return op_entry_get((sy_env *)env, domain, op, false);
}

const sy_schema_rec *sy_env_find_schema(const sy_env *env, const char *domain, const char *op, int32_t opset)
{
    const sy_op_entry *e = sy_env_find_op(env, domain, op);
    if (!e)
        return NULL;
    const sy_schema_rec *best = NULL;
    for (uint32_t i = 0; i < e->n_schemas; i++)
        if (e->schemas[i]->def.since_version <= opset)
            best = e->schemas[i];
    return best;
}

sy_provider_rec *sy_env_find_provider(const sy_env *env, const char *name)
{
    for (uint32_t i = 0; i < env->n_providers; i++)
        if (!strcmp(env->providers[i]->def.name, name))
            return env->providers[i];
    return NULL;
}

const sy_scheme_rec *sy_env_find_scheme(const sy_env *env, const char *name)
{
    for (uint32_t i = 0; i < env->n_schemes; i++)
        if (!strcmp(env->schemes[i]->def.name, name))
            return env->schemes[i];
    return NULL;
}

void sy_registry_free(sy_env *env)
{
    sy_op_entry *e, *tmp;
    HASH_ITER(hh, env->ops, e, tmp)
    {
        HASH_DEL(env->ops, e);
        for (uint32_t i = 0; i < e->n_schemas; i++)
            free(e->schemas[i]);
        for (uint32_t i = 0; i < e->n_kernels; i++)
            free(e->kernels[i]);
        free(e->schemas);
        free(e->kernels);
        free(e->key);
        free(e);
    }
    for (uint32_t i = 0; i < env->n_providers; i++)
        free(env->providers[i]);
    free(env->providers);
    free(env->priority);
    for (uint32_t i = 0; i < env->n_schemes; i++)
        free(env->schemes[i]);
    free(env->schemes);
    for (uint32_t i = 0; i < env->n_extensions; i++) {
        free(env->extensions[i]->name);
        free(env->extensions[i]);
    }
    free(env->extensions);
}
