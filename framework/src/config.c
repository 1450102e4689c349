/*
 * INI configuration (parsed by inih). Documented key by key in docs/config.md.
 *
 *   [switchyard]        plugin_dirs, plugins, providers, threads, strict, log_level,
 *                       max_tensor_bytes, max_arena_bytes, max_file_bytes, max_nodes,
 *                       max_loop_iterations,
 *                       compiled_cache_sha256
 *   [plugin.NAME]       sha256, path, enabled + the plugin's own keys
 *   [provider.NAME]     the provider's own keys
 *
 * Keys of [switchyard] are checked here; plugin and provider keys are checked
 * against what each plugin declares when it is loaded.
 */
#include "env.h"
#include "status.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* an INI is a page of text; anything much larger is not one */
#define SY_MAX_INI_BYTES (1 << 20)

typedef struct parse_ctx {
    sy_config *cfg;
    sy_status *err;
    int err_line;     /* line of the handler's error */
    /* the text and the reader's position: inih reads line by line through
     * read_line, which is how the handler knows its line */
    const char *next;
    int line;
} parse_ctx;

static sy_status *check_section_name(const char *section);

/* A section header's name is checked on its own line, here, because inih
 * calls the handler only for keys: a bad section with no keys would pass,
 * and one with keys would be reported at its first key's line. */
static bool header_ok(parse_ctx *c, const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    const char *close = *line == '[' ? strchr(line, ']') : NULL;
    if (!close)
        return true; /* not a header, or a malformed one inih reports */
    const char *a = line + 1, *b = close;
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(b - a), a);
    c->err = check_section_name(name);
    c->err_line = c->line;
    return c->err == NULL;
}

static char *read_line(char *str, int num, void *stream)
{
    parse_ctx *c = stream;
    if (c->err || !c->next || !*c->next || num < 2)
        return NULL;
    const char *nl = strchr(c->next, '\n');
    size_t len = nl ? (size_t)(nl - c->next) + 1 : strlen(c->next);
    if (len > (size_t)num - 1)
        len = (size_t)num - 1; /* lines are checked against the limit before parsing */
    memcpy(str, c->next, len);
    str[len] = '\0';
    c->next += len;
    c->line++;
    if (!header_ok(c, str))
        return NULL;
    return str;
}

static sy_status *split_list(const char *value, char ***out, uint32_t *n)
{
    /* comma- or whitespace-separated list; appends to *out */
    const char *p = value;
    while (*p) {
        while (*p && (*p == ',' || isspace((unsigned char)*p)))
            p++;
        const char *start = p;
        while (*p && *p != ',' && !isspace((unsigned char)*p))
            p++;
        if (p == start)
            break;
        char **grown = realloc(*out, (*n + 1) * sizeof **out);
        if (!grown)
            return sy_error_oom();
        *out = grown;
        if (!((*out)[*n] = sy_strndup(start, (size_t)(p - start))))
            return sy_error_oom();
        (*n)++;
    }
    return NULL;
}

static void free_list(char **list, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

bool sy_parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcmp(v, "1")) {
        *out = true;
        return true;
    }
    if (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcmp(v, "0")) {
        *out = false;
        return true;
    }
    return false;
}

static bool parse_log_level(const char *v, sy_log_level *out)
{
    static const char *const names[] = {"error", "warn", "info", "debug", "trace"};
    for (int i = 0; i < 5; i++)
        if (!strcasecmp(v, names[i])) {
            *out = (sy_log_level)i;
            return true;
        }
    return false;
}

static sy_options *section_get_or_add(sy_config *cfg, const char *section)
{
    for (uint32_t i = 0; i < cfg->n_sections; i++)
        if (!strcmp(cfg->sections[i].section, section))
            return &cfg->sections[i];
    if (cfg->n_sections == cfg->cap_sections) {
        uint32_t cap = cfg->cap_sections ? cfg->cap_sections * 2 : 8;
        sy_options *grown = realloc(cfg->sections, cap * sizeof *grown);
        if (!grown)
            return NULL;
        cfg->sections = grown;
        cfg->cap_sections = cap;
    }
    sy_options *o = &cfg->sections[cfg->n_sections];
    memset(o, 0, sizeof *o);
    if (!(o->section = sy_strdup(section)))
        return NULL;
    cfg->n_sections++;
    return o;
}

static sy_status *options_add(sy_options *o, const char *key, const char *value)
{
    for (uint32_t i = 0; i < o->n; i++)
        if (!strcmp(o->kv[i].key, key))
            return sy_error(SY_ERR_INVALID_CONFIG, "[%s] key '%s' given twice", o->section, key);
    if (o->n == o->cap) {
        uint32_t cap = o->cap ? o->cap * 2 : 8;
        sy_option_kv *grown = realloc(o->kv, cap * sizeof *grown);
        if (!grown)
            return sy_error_oom();
        o->kv = grown;
        o->cap = cap;
    }
    sy_option_kv *kv = &o->kv[o->n];
    kv->key = sy_strdup(key);
    kv->value = sy_strdup(value);
    if (!kv->key || !kv->value) {
        free(kv->key);
        free(kv->value);
        return sy_error_oom();
    }
    o->n++;
    return NULL;
}

static sy_status *handle_core_key(sy_config *cfg, const char *key, const char *value)
{
    if (!strcmp(key, "plugin_dirs"))
        return split_list(value, &cfg->plugin_dirs, &cfg->n_plugin_dirs);
    if (!strcmp(key, "plugins"))
        return split_list(value, &cfg->plugin_files, &cfg->n_plugin_files);
    if (!strcmp(key, "providers")) {
        free_list(cfg->providers, cfg->n_providers);
        cfg->providers = NULL;
        cfg->n_providers = 0;
        return split_list(value, &cfg->providers, &cfg->n_providers);
    }
    if (!strcmp(key, "threads")) {
        char *end;
        errno = 0;
        long t = strtol(value, &end, 10);
        if (errno || *end || t < 1 || t > 256)
            return sy_error(SY_ERR_INVALID_CONFIG,
                            "[switchyard] threads = '%s': expected an integer from 1 to 256", value);
        cfg->threads = (int)t;
        return NULL;
    }
    if (!strcmp(key, "strict")) {
        if (!sy_parse_bool(value, &cfg->strict))
            return sy_error(SY_ERR_INVALID_CONFIG, "[switchyard] strict = '%s': expected true or false", value);
        return NULL;
    }
    if (!strcmp(key, "log_level")) {
        if (!parse_log_level(value, &cfg->log_level))
            return sy_error(SY_ERR_INVALID_CONFIG,
                            "[switchyard] log_level = '%s': expected error, warn, info, debug or trace", value);
        return NULL;
    }
    uint64_t *limit = !strcmp(key, "max_tensor_bytes") ? &cfg->limits.max_tensor_bytes
                      : !strcmp(key, "max_arena_bytes")  ? &cfg->limits.max_arena_bytes
                      : !strcmp(key, "max_file_bytes")   ? &cfg->limits.max_file_bytes
                      : !strcmp(key, "max_nodes")        ? &cfg->limits.max_nodes
                      : !strcmp(key, "max_loop_iterations") ? &cfg->limits.max_loop_iterations
                                                         : NULL;
    if (limit) {
        if (!sy_parse_size(value, limit) || *limit == 0)
            return sy_error(SY_ERR_INVALID_CONFIG,
                            "[switchyard] %s = '%s': expected a positive count, optionally with K, M or G", key, value);
        return NULL;
    }
    if (!strcmp(key, "compiled_cache_sha256")) {
        uint32_t before = cfg->n_cache_pins;
        SY_TRY(split_list(value, &cfg->cache_pins, &cfg->n_cache_pins));
        for (uint32_t i = before; i < cfg->n_cache_pins; i++) {
            const char *h = cfg->cache_pins[i];
            bool hex = strlen(h) == 64;
            for (const char *c = h; hex && *c; c++)
                hex = isxdigit((unsigned char)*c);
            if (!hex)
                return sy_error(SY_ERR_INVALID_CONFIG,
                                "[switchyard] compiled_cache_sha256 = '%s' is not 64 hexadecimal digits", h);
        }
        return NULL;
    }
    return sy_error(SY_ERR_INVALID_CONFIG,
                    "unknown key '%s' in [switchyard] (known: plugin_dirs, plugins, providers, threads, "
                    "strict, log_level, max_tensor_bytes, max_arena_bytes, max_file_bytes, max_nodes, "
                    "max_loop_iterations, compiled_cache_sha256)",
                    key);
}

/* The sections that exist: [switchyard], [plugin.NAME], [provider.NAME],
 * [llm] (reserved for the LLM runtime). NULL when `section` is one of them. */
static sy_status *check_section_name(const char *section)
{
    if (!strcmp(section, "switchyard") || !strcmp(section, "llm"))
        return NULL;
    if (!strncmp(section, "plugin.", 7) || !strncmp(section, "provider.", 9)) {
        const char *dot = strchr(section, '.');
        if (!dot[1])
            return sy_error(SY_ERR_INVALID_CONFIG, "section [%s]: missing a name after the dot", section);
        return NULL;
    }
    return sy_error(SY_ERR_INVALID_CONFIG,
                    "unknown section [%s] (known: [switchyard], [plugin.NAME], [provider.NAME], [llm])", section);
}

static int sy_ini_handler(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *ctx = user;
    if (ctx->err)
        return 0;
    if (!name) { /* a section header (INI_CALL_HANDLER_ON_NEW_SECTION): its name is checked on its own line */
        ctx->err = check_section_name(section);
        ctx->err_line = ctx->line;
        return ctx->err == NULL;
    }
    if (!section[0]) {
        ctx->err = sy_error(SY_ERR_INVALID_CONFIG,
                            "unknown section [] for key '%s': it comes before any section header (keys belong under "
                            "[switchyard], [plugin.NAME] or [provider.NAME])",
                            name);
        ctx->err_line = ctx->line;
        return 0;
    }
    ctx->err_line = ctx->line;
    if ((ctx->err = check_section_name(section)))
        return 0;
    if (!strcmp(section, "switchyard")) {
        ctx->err = handle_core_key(ctx->cfg, name, value);
        return ctx->err == NULL;
    }
    sy_options *o = section_get_or_add(ctx->cfg, section);
    if (!o) {
        ctx->err = sy_error_oom();
        return 0;
    }
    ctx->err = options_add(o, name, value);
    return ctx->err == NULL;
}

static void config_defaults(sy_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = 1;
    cfg->strict = false;
    cfg->log_level = SY_LOG_WARN;
    cfg->limits = (sy_limits){SY_DEFAULT_MAX_TENSOR_BYTES, SY_DEFAULT_MAX_ARENA_BYTES, SY_DEFAULT_MAX_FILE_BYTES,
                              SY_DEFAULT_MAX_NODES, SY_DEFAULT_MAX_LOOP_ITERATIONS};
}

bool sy_parse_size(const char *v, uint64_t *out)
{
    if (!isdigit((unsigned char)*v))
        return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (errno || *end || (shift && n > (UINT64_MAX >> shift)))
        return false;
    *out = (uint64_t)n << shift;
    return true;
}

const char *sy_size_str(uint64_t bytes, char *buf, size_t len)
{
    if (bytes >= (UINT64_C(1) << 30))
        snprintf(buf, len, "%.1f GiB (%llu bytes)", (double)bytes / (double)(UINT64_C(1) << 30),
                 (unsigned long long)bytes);
    else if (bytes >= (UINT64_C(1) << 20))
        snprintf(buf, len, "%.1f MiB (%llu bytes)", (double)bytes / (double)(UINT64_C(1) << 20),
                 (unsigned long long)bytes);
    else
        snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
    return buf;
}

static sy_status *finish_parse(sy_config *cfg, parse_ctx *ctx, int rc, const char *origin)
{
    /* inih returns the line of the first error; when that is not where the
     * handler failed, a syntax error came first and is the one to report */
    if (ctx->err && rc > 0 && rc < ctx->err_line) {
        sy_status_free(ctx->err);
        ctx->err = NULL;
    } else if (ctx->err) {
        return sy_error_wrap(ctx->err, "%s: line %d", origin, ctx->err_line);
    }
    if (rc > 0)
        return sy_error(SY_ERR_INVALID_CONFIG, "%s: line %d: syntax error (expected '[section]' or 'key = value')",
                        origin, rc);
    if (rc < 0)
        return sy_error(rc == -1 ? SY_ERR_IO : SY_ERR_OUT_OF_MEMORY, "%s: cannot read the configuration file",
                        origin);
    (void)cfg;
    return NULL;
}

/* inih reads lines of at most INI_MAX_LINE - 1 characters and would split a
 * longer one silently into a second, malformed line: say so instead. */
static sy_status *check_line_lengths(const char *text, const char *origin)
{
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len >= INI_MAX_LINE - 1)
            return sy_error(SY_ERR_INVALID_CONFIG,
                            "%s: line %d is %zu characters long; the INI reader takes at most %d per line (split a "
                            "list over several 'plugins =' or 'plugin_dirs =' lines: they add up)",
                            origin, line, len, INI_MAX_LINE - 2);
        if (!nl)
            break;
        p = nl + 1;
    }
    return NULL;
}

sy_status *sy_config_parse_file(const char *path, sy_config *cfg)
{
    config_defaults(cfg);
    cfg->origin = sy_strdup(path);
    cfg->base_dir = sy_dirname(path);
    if (!cfg->origin || !cfg->base_dir)
        return sy_error_oom();
    struct stat sb;
    int fd = sy_open_regular(path, &sb);
    if (fd == -2)
        return sy_error(SY_ERR_IO, "configuration file '%s': not a regular file (%s)", path,
                        sy_file_kind(sb.st_mode));
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        sy_status *st = sy_error(SY_ERR_NOT_FOUND, "configuration file '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return st;
    }
    /* configuration files are small: read whole, check, parse from memory */
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len > SY_MAX_INI_BYTES) {
            free(text);
            fclose(f);
            return sy_error(SY_ERR_INVALID_CONFIG, "configuration file '%s' is over %d bytes: not a configuration",
                            path, SY_MAX_INI_BYTES);
        }
        if (len + 4096 + 1 > cap) {
            cap = (cap + 4096 + 1) * 2;
            char *grown = realloc(text, cap);
            if (!grown) {
                free(text);
                fclose(f);
                return sy_error_oom();
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, 4096, f);
        len += got;
        if (got < 4096)
            break;
    }
    bool failed = ferror(f);
    fclose(f);
    text[len] = '\0';
    if (failed || memchr(text, '\0', len)) {
        free(text);
        return sy_error(failed ? SY_ERR_IO : SY_ERR_INVALID_CONFIG, "configuration file '%s': %s", path,
                        failed ? "read error" : "contains a NUL byte (not a text file)");
    }
    sy_status *st = check_line_lengths(text, path);
    if (!st) {
        parse_ctx ctx = {cfg, NULL, 0, text, 0};
        int rc = ini_parse_stream(read_line, &ctx, sy_ini_handler, &ctx);
        st = finish_parse(cfg, &ctx, rc, path);
    }
    free(text);
    return st;
}

sy_status *sy_config_parse_string(const char *text, const char *origin, const char *base_dir, sy_config *cfg)
{
    config_defaults(cfg);
    cfg->origin = sy_strdup(origin);
    cfg->base_dir = sy_strdup(base_dir ? base_dir : ".");
    if (!cfg->origin || !cfg->base_dir)
        return sy_error_oom();
    SY_TRY(check_line_lengths(text, origin));
    parse_ctx ctx = {cfg, NULL, 0, text, 0};
    int rc = ini_parse_stream(read_line, &ctx, sy_ini_handler, &ctx);
    return finish_parse(cfg, &ctx, rc, origin);
}

void sy_config_free(sy_config *cfg)
{
    free(cfg->origin);
    free(cfg->base_dir);
    free_list(cfg->plugin_dirs, cfg->n_plugin_dirs);
    free_list(cfg->plugin_files, cfg->n_plugin_files);
    free_list(cfg->providers, cfg->n_providers);
    free_list(cfg->cache_pins, cfg->n_cache_pins);
    for (uint32_t i = 0; i < cfg->n_sections; i++) {
        sy_options *o = &cfg->sections[i];
        for (uint32_t k = 0; k < o->n; k++) {
            free(o->kv[k].key);
            free(o->kv[k].value);
        }
        free(o->kv);
        free(o->section);
    }
    free(cfg->sections);
    memset(cfg, 0, sizeof *cfg);
}

sy_options *sy_config_section(const sy_config *cfg, const char *kind, const char *name)
{
    size_t kl = strlen(kind);
    for (uint32_t i = 0; i < cfg->n_sections; i++) {
        const char *s = cfg->sections[i].section;
        if (!strncmp(s, kind, kl) && s[kl] == '.' && !strcmp(s + kl + 1, name))
            return &cfg->sections[i];
    }
    return NULL;
}

static bool in_list(const char *const *list, const char *key)
{
    for (; list && *list; list++)
        if (!strcmp(*list, key))
            return true;
    return false;
}

sy_status *sy_options_check(const sy_options *opts, const char *const *allowed, const char *const *skip,
                            const char *origin)
{
    if (!opts)
        return NULL;
    for (uint32_t i = 0; i < opts->n; i++) {
        const char *key = opts->kv[i].key;
        if (in_list(skip, key) || in_list(allowed, key))
            continue;
        char known[512] = "";
        size_t len = 0;
        for (const char *const *k = allowed; k && *k; k++)
            sy_buf_appendf(known, sizeof known, &len, "%s%s", len ? ", " : "", *k);
        for (const char *const *k = skip; k && *k; k++)
            sy_buf_appendf(known, sizeof known, &len, "%s%s", len ? ", " : "", *k);
        return sy_error(SY_ERR_INVALID_CONFIG, "%s: unknown key '%s' in [%s] (known: %s)", origin, key,
                        opts->section, known[0] ? known : "none");
    }
    return NULL;
}

const char *sy_options_get(const sy_options *opts, const char *key)
{
    if (!opts)
        return NULL;
    for (uint32_t i = 0; i < opts->n; i++)
        if (!strcmp(opts->kv[i].key, key))
            return opts->kv[i].value;
    return NULL;
}
