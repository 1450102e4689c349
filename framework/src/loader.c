/*
 * Plugin loader: finds plugin files, checks sha256 pins before any code of
 * theirs runs, dlopens with RTLD_NOW|RTLD_LOCAL, negotiates the ABI version,
 * checks options, and calls init with staged registration. A refused plugin
 * is recorded with its reason; the others still load.
 */
#include "env.h"
#include "plugin_file.h"
#include "status.h"
#include "util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

sy_plugin *sy_registry_begin(sy_env *env, sy_loaded_plugin *lp);

/* keys of [plugin.NAME] that the core consumes itself */
static const char *const core_plugin_keys[] = {"sha256", "path", "enabled", NULL};

char *sy_default_plugin_dir(void)
{
    Dl_info info;
    if (!dladdr((void *)&sy_default_plugin_dir, &info) || !info.dli_fname)
        return NULL;
    char *dir = sy_dirname(info.dli_fname);
    if (!dir)
        return NULL;
    char *res = sy_asprintf("%s/%s", dir, SY_PLUGIN_SUBDIR);
    free(dir);
    return res;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "libsy_NAME.so" -> "NAME"; other names -> the file name without extension */
static char *plugin_name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!strncmp(base, "libsy_", 6))
        base += 6;
    else if (!strncmp(base, "lib", 3))
        base += 3;
    const char *dot = strchr(base, '.');
    return sy_strndup(base, dot ? (size_t)(dot - base) : strlen(base));
}

static sy_loaded_plugin *record_new(sy_env *env, const char *path)
{
    sy_loaded_plugin **grown = realloc(env->plugins, (env->n_plugins + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    env->plugins = grown;
    sy_loaded_plugin *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->path = sy_strdup(path);
    p->name = plugin_name_from_path(path);
    if (!p->path || !p->name) {
        free(p->path);
        free(p->name);
        free(p);
        return NULL;
    }
    env->plugins[env->n_plugins++] = p;
    return p;
}

static void refuse(sy_env *env, sy_loaded_plugin *p, const char *fmt, ...) SY_PRINTF(3, 4);
static void refuse(sy_env *env, sy_loaded_plugin *p, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    free(p->refusal);
    p->refusal = sy_strdup(msg);
    p->desc = NULL; /* it lives in the library about to be closed */
    if (p->handle) {
        dlclose(p->handle);
        p->handle = NULL;
    }
    sy_env_log(env, SY_LOG_WARN, "loader", "plugin '%s' refused: %s", p->path, msg);
}

static bool already_listed(const sy_env *env, const char *path)
{
    for (uint32_t i = 0; i < env->n_plugins; i++)
        if (!strcmp(env->plugins[i]->path, path))
            return true;
    return false;
}

static bool is_hex_sha256(const char *s)
{
    if (strlen(s) != 64)
        return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') || (*c >= 'A' && *c <= 'F')))
            return false;
    return true;
}

static void load_one(sy_env *env, const char *path)
{
    if (already_listed(env, path))
        return;
    sy_loaded_plugin *p = record_new(env, path);
    if (!p)
        return;
    const sy_options *opts = sy_config_section(&env->cfg, "plugin", p->name);
    const char *enabled = sy_options_get(opts, "enabled");
    bool on = true;
    if (enabled && !sy_parse_bool(enabled, &on)) {
        refuse(env, p, "[plugin.%s] enabled = '%s': expected true or false", p->name, enabled);
        return;
    }
    if (!on) {
        refuse(env, p, "disabled by [plugin.%s] enabled = %s", p->name, enabled);
        return;
    }

    /* The pin, the file type and the query symbol are checked on the file's
     * bytes before dlopen runs any of its code (constructors included). */
    const char *pin = sy_options_get(opts, "sha256");
    if (pin && !is_hex_sha256(pin)) {
        refuse(env, p, "[plugin.%s] sha256 = '%s' is not 64 hexadecimal digits", p->name, pin);
        return;
    }
    char why[256];
    switch (sy_plugin_file_check(path, pin, SY_PLUGIN_QUERY_SYMBOL, why, sizeof why)) {
    case SY_PLUGIN_FILE_OK: break;
    case SY_PLUGIN_FILE_BAD: refuse(env, p, "%s", why); return;
    case SY_PLUGIN_FILE_PIN_MISMATCH:
        refuse(env, p, "sha256 pin mismatch: [plugin.%s] expects %s, the file is %s", p->name, pin, why);
        return;
    case SY_PLUGIN_FILE_NO_SYMBOL:
        refuse(env, p,
               "no symbol '%s': not a Switchyard plugin (a plugin defines it with SY_PLUGIN_DEFINE); not opened, so "
               "none of its code ran",
               SY_PLUGIN_QUERY_SYMBOL);
        return;
    }

    dlerror();
    p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->handle) {
        const char *e = dlerror();
        refuse(env, p, "dlopen failed: %s", e ? e : "unknown error");
        return;
    }
    sy_plugin_query_fn query = (sy_plugin_query_fn)dlsym(p->handle, SY_PLUGIN_QUERY_SYMBOL);
    if (!query) {
        refuse(env, p, "no symbol '%s': not a Switchyard plugin (a plugin defines it with SY_PLUGIN_DEFINE)",
               SY_PLUGIN_QUERY_SYMBOL);
        return;
    }
    const sy_plugin_desc *d = query(SY_ABI_MAJOR, SY_ABI_MINOR);
    if (!d) {
        refuse(env, p, "%s returned no descriptor for host ABI %d.%d", SY_PLUGIN_QUERY_SYMBOL, SY_ABI_MAJOR,
               SY_ABI_MINOR);
        return;
    }
    /* read only the header fields before trusting the size */
    if (d->struct_size < offsetof(sy_plugin_desc, fini) + sizeof d->fini) {
        refuse(env, p, "descriptor struct_size %u is smaller than ABI 1.0's %zu", d->struct_size,
               offsetof(sy_plugin_desc, fini) + sizeof d->fini);
        return;
    }
    p->abi_major = d->abi_major;
    p->abi_minor = d->abi_minor;
    p->desc_name = sy_strdup(d->name);
    p->desc_version = sy_strdup(d->version);
    p->desc_description = sy_strdup(d->description);
    if (d->abi_major != SY_ABI_MAJOR) {
        refuse(env, p, "ABI mismatch: plugin built for ABI %u.%u, host is ABI %d.%d (the major must be equal)",
               d->abi_major, d->abi_minor, SY_ABI_MAJOR, SY_ABI_MINOR);
        return;
    }
    if (d->abi_minor > SY_ABI_MINOR) {
        refuse(env, p, "ABI mismatch: plugin needs ABI %u.%u, host is ABI %d.%d (host minor must be >= plugin minor)",
               d->abi_major, d->abi_minor, SY_ABI_MAJOR, SY_ABI_MINOR);
        return;
    }
    if (!d->name || !d->name[0] || !d->init) {
        refuse(env, p, "descriptor has no name or no init function");
        return;
    }
    p->desc = d;
    for (uint32_t i = 0; i + 1 < env->n_plugins; i++) {
        const sy_loaded_plugin *o = env->plugins[i];
        if (o->desc && !o->refusal && !strcmp(o->desc->name, d->name)) {
            refuse(env, p, "a plugin named '%s' is already loaded from '%s'", d->name, o->path);
            return;
        }
    }
    if (strcmp(p->name, d->name)) {
        /* sections are keyed by the descriptor's name from here on */
        free(p->name);
        p->name = sy_strdup(d->name);
        opts = sy_config_section(&env->cfg, "plugin", p->name);
    }
    sy_status *st = sy_options_check(opts, d->option_keys, core_plugin_keys, env->cfg.origin);
    if (st) {
        refuse(env, p, "%s", sy_status_msg(st));
        sy_status_free(st);
        return;
    }
    sy_plugin *reg = sy_registry_begin(env, p);
    st = d->init(&sy_host_api_table, reg, opts);
    if (st) {
        sy_registry_commit(env, p, false);
        sy_plugin_release_state(p); /* before the library is closed */
        refuse(env, p, "init failed: %s: %s", sy_status_code_name(sy_status_code_of(st)), sy_status_msg(st));
        sy_status_free(st);
        return;
    }
    p->initialised = true;
    st = sy_registry_commit(env, p, true);
    if (st) {
        /* partially committed registrations stay owned by the registry; the
         * library stays mapped so their pointers remain valid */
        free(p->refusal);
        p->refusal = sy_asprintf("registration failed: %s", sy_status_msg(st));
        sy_env_log(env, SY_LOG_WARN, "loader", "plugin '%s': %s", p->path, p->refusal);
        sy_status_free(st);
    }
    p->refcount = 1;
}

static void load_dir(sy_env *env, const char *dir, bool required)
{
    DIR *dh = opendir(dir);
    if (!dh) {
        if (required)
            sy_env_log(env, SY_LOG_WARN, "loader", "plugin directory '%s' cannot be read: %s", dir,
                       strerror(errno));
        return;
    }
    char **names = NULL;
    uint32_t n = 0;
    struct dirent *de;
    while ((de = readdir(dh))) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".so") || strncmp(de->d_name, "libsy_", 6))
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *grown);
        if (!grown)
            break;
        names = grown;
        if (!(names[n] = sy_path_join(dir, de->d_name)))
            break;
        n++;
    }
    closedir(dh);
    /* deterministic load order: by file name (qsort wants a non-NULL array) */
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (uint32_t i = 0; i < n; i++) {
        load_one(env, names[i]);
        free(names[i]);
    }
    free(names);
}

/* A [plugin.NAME] section must be about a plugin file that was found (named
 * by its file or by its descriptor), loaded or refused: a typo in NAME would
 * otherwise drop a pin or an option without a word. */
static sy_status *check_plugin_sections(const sy_env *env)
{
    const sy_config *cfg = &env->cfg;
    for (uint32_t i = 0; i < cfg->n_sections; i++) {
        const sy_options *o = &cfg->sections[i];
        if (strncmp(o->section, "plugin.", 7) || sy_options_get(o, "path"))
            continue;
        const char *name = o->section + 7;
        bool found = false;
        for (uint32_t k = 0; k < env->n_plugins && !found; k++) {
            char *file_name = plugin_name_from_path(env->plugins[k]->path);
            found = !strcmp(env->plugins[k]->name, name) || (file_name && !strcmp(file_name, name));
            free(file_name);
        }
        if (!found) {
            char known[512] = "";
            size_t len = 0;
            for (uint32_t k = 0; k < env->n_plugins; k++)
                sy_buf_appendf(known, sizeof known, &len, "%s%s", len ? ", " : "", env->plugins[k]->name);
            return sy_error(SY_ERR_INVALID_CONFIG, "%s: [%s] names no plugin that was found (found: %s)",
                            cfg->origin, o->section, known[0] ? known : "none");
        }
    }
    return NULL;
}

sy_status *sy_loader_load_all(sy_env *env)
{
    const sy_config *cfg = &env->cfg;
    for (uint32_t i = 0; i < cfg->n_plugin_dirs; i++) {
        if (!strcmp(cfg->plugin_dirs[i], "@default")) {
            char *dir = sy_default_plugin_dir();
            if (!dir)
                return sy_error(SY_ERR_PLUGIN, "cannot locate libswitchyard to find the default plugin directory");
            load_dir(env, dir, true);
            free(dir);
        } else {
            char *dir = sy_path_join(cfg->base_dir, cfg->plugin_dirs[i]);
            if (!dir)
                return sy_error_oom();
            load_dir(env, dir, true);
            free(dir);
        }
    }
    for (uint32_t i = 0; i < cfg->n_plugin_files; i++) {
        char *path = sy_path_join(cfg->base_dir, cfg->plugin_files[i]);
        if (!path)
            return sy_error_oom();
        struct stat sb;
        if (stat(path, &sb) != 0) {
            sy_loaded_plugin *p = already_listed(env, path) ? NULL : record_new(env, path);
            if (p)
                refuse(env, p, "file not found (listed in 'plugins' of %s)", cfg->origin);
        } else {
            load_one(env, path);
        }
        free(path);
    }
    /* [plugin.X] path = ... loads a file that is in no search directory */
    for (uint32_t i = 0; i < cfg->n_sections; i++) {
        const sy_options *o = &cfg->sections[i];
        if (strncmp(o->section, "plugin.", 7))
            continue;
        const char *path = sy_options_get(o, "path");
        if (!path)
            continue;
        char *full = sy_path_join(cfg->base_dir, path);
        if (!full)
            return sy_error_oom();
        load_one(env, full);
        free(full);
    }
    return check_plugin_sections(env);
}

void sy_plugin_ref(sy_loaded_plugin *p)
{
    if (p)
        p->refcount++;
}

void sy_plugin_release_state(sy_loaded_plugin *p)
{
    void (*release)(void *) = p->state_release;
    void *state = p->state;
    p->state = NULL;
    p->state_release = NULL;
    if (release)
        release(state);
}

static void plugin_close(sy_loaded_plugin *p)
{
    if (p->handle) {
        /* this env's state first: fini is the library's, release the env's */
        sy_plugin_release_state(p);
        if (p->initialised && p->desc && p->desc->fini)
            p->desc->fini();
        dlclose(p->handle);
        p->handle = NULL;
    }
}

void sy_plugin_unref(sy_loaded_plugin *p)
{
    if (p && --p->refcount == 0)
        plugin_close(p);
}

void sy_registry_free(sy_env *env);

void sy_loader_unload_all(sy_env *env)
{
    /* Providers first (their destroy lives in the plugin), then the registry
     * records, then the libraries in reverse load order. */
    for (uint32_t i = 0; i < env->n_providers; i++) {
        sy_provider_rec *r = env->providers[i];
        if (r->created && r->def.destroy)
            r->def.destroy(r->state);
        r->created = false;
    }
    sy_registry_free(env);
    for (uint32_t i = env->n_plugins; i-- > 0;) {
        sy_loaded_plugin *p = env->plugins[i];
        if (p->refcount > 0)
            sy_plugin_unref(p);
        else
            plugin_close(p);
        free(p->path);
        free(p->name);
        free(p->desc_name);
        free(p->desc_version);
        free(p->desc_description);
        free(p->refusal);
        free(p->registered);
        free(p);
    }
    free(env->plugins);
    env->plugins = NULL;
    env->n_plugins = 0;
}
