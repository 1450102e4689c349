/*
 * The environment: configuration, loaded plugins and the one registry of
 * everything they registered (schemas, kernels, providers, quantization
 * schemes, extensions).
 */
#ifndef SY_ENV_H
#define SY_ENV_H

#include "switchyard/sy_plugin.h"
#include "switchyard/switchyard.h"
#include <uthash.h>

/* ---- options: one INI section as key/value pairs ---- */
typedef struct sy_option_kv {
    char *key;
    char *value;
} sy_option_kv;

struct sy_options {
    char *section; /* e.g. "plugin.ops_nn" */
    sy_option_kv *kv;
    uint32_t n, cap;
};

/* ---- resource limits: what a model or session may declare before anything
 * is allocated for it ([switchyard] keys, sy_session_options overrides) ---- */
typedef struct sy_limits {
    uint64_t max_tensor_bytes; /* one tensor: graph input, inferred output, TFLite state */
    uint64_t max_arena_bytes;  /* a session's planned arenas together */
    uint64_t max_file_bytes;   /* a model, external data, tensor or cache file read at load */
    uint64_t max_nodes;        /* nodes of a model's graphs */
    uint64_t max_loop_iterations; /* iterations of one run of a Loop node */
} sy_limits;
#define SY_DEFAULT_MAX_TENSOR_BYTES (UINT64_C(512) << 20)
#define SY_DEFAULT_MAX_ARENA_BYTES (UINT64_C(4) << 30)
#define SY_DEFAULT_MAX_FILE_BYTES (UINT64_C(4) << 30)
#define SY_DEFAULT_MAX_NODES UINT64_C(2000000)
#define SY_DEFAULT_MAX_LOOP_ITERATIONS UINT64_C(100000000)
/* "12345", "64K", "512M", "4G" (binary multiples); false when not a size */
bool sy_parse_size(const char *v, uint64_t *out);
/* "1.5 GiB (1610612736 bytes)" for a message */
const char *sy_size_str(uint64_t bytes, char *buf, size_t len);

/* ---- configuration (config.c) ---- */
typedef struct sy_config {
    char *origin;            /* INI path or "<embedded default>" / "<string>" */
    char *base_dir;          /* relative paths resolve here */
    char **plugin_dirs;      /* search directories ("@default" = next to the library) */
    uint32_t n_plugin_dirs;
    char **plugin_files;     /* explicit plugin files */
    uint32_t n_plugin_files;
    char **providers;        /* priority order; empty = every registered provider */
    uint32_t n_providers;
    int threads;
    bool strict;
    sy_log_level log_level;
    sy_limits limits;
    char **cache_pins;       /* compiled_cache_sha256: a cache must have one of these */
    uint32_t n_cache_pins;
    sy_options *sections;    /* [plugin.X] and [provider.X] sections */
    uint32_t n_sections, cap_sections;
} sy_config;

sy_status *sy_config_parse_file(const char *path, sy_config *cfg);
sy_status *sy_config_parse_string(const char *text, const char *origin, const char *base_dir, sy_config *cfg);
void sy_config_free(sy_config *cfg);
sy_options *sy_config_section(const sy_config *cfg, const char *kind, const char *name);
/* Check every key of `opts` is in `allowed` (NULL-terminated); `skip` keys are
 * consumed by the core itself (e.g. sha256, path). */
sy_status *sy_options_check(const sy_options *opts, const char *const *allowed, const char *const *skip,
                            const char *origin);
const char *sy_options_get(const sy_options *opts, const char *key);
/* true/false, yes/no, on/off, 1/0 (case-insensitive); false when not a boolean */
bool sy_parse_bool(const char *v, bool *out);

/* ---- registry records ---- */
typedef struct sy_loaded_plugin sy_loaded_plugin;

typedef struct sy_schema_rec {
    sy_op_schema def;            /* copied up to the plugin's struct_size */
    sy_loaded_plugin *owner;
} sy_schema_rec;

typedef struct sy_kernel_rec {
    sy_kernel_def def;
    sy_loaded_plugin *owner;
} sy_kernel_rec;

/* all versions of one (domain, op), schemas sorted by since_version */
typedef struct sy_op_entry {
    char *key; /* "domain|op" */
    sy_schema_rec **schemas;
    uint32_t n_schemas;
    sy_kernel_rec **kernels;
    uint32_t n_kernels;
    UT_hash_handle hh;
} sy_op_entry;

typedef struct sy_provider_rec {
    sy_provider_def def;
    sy_loaded_plugin *owner;
    void *state;      /* from def.create, NULL until instantiated */
    bool created;
    sy_memory_domain_def domain;
    uint32_t domain_id; /* index in the env's domain table */
    uint32_t index;     /* in env->providers (a session's provider states) */
} sy_provider_rec;

typedef struct sy_scheme_rec {
    sy_quant_scheme_def def;
    sy_loaded_plugin *owner;
} sy_scheme_rec;

typedef struct sy_extension_rec {
    char *name;
    uint32_t version;
    const void *table;
    sy_loaded_plugin *owner;
} sy_extension_rec;

struct sy_loaded_plugin {
    char *path;
    void *handle;               /* dlopen handle, NULL when refused */
    const sy_plugin_desc *desc; /* valid only while loaded (NULL once refused) */
    char *name;
    /* copied from the descriptor so they outlive an unmapped library */
    char *desc_name, *desc_version, *desc_description;
    uint16_t abi_major, abi_minor;
    char *refusal;              /* NULL when loaded */
    int refcount;               /* env + live sessions using it */
    uint32_t n_schemas, n_kernels, n_providers, n_schemes, n_extensions;
    char *registered;           /* comma-separated names */
    size_t registered_len, registered_cap;
    bool initialised;
    /* ABI 1.2: the plugin's state in this environment (plugin_set_state),
     * released once, when this record's library is closed */
    void *state;
    void (*state_release)(void *state);
};

/* ---- the environment ---- */
struct sy_env {
    sy_config cfg;
    sy_loaded_plugin **plugins;
    uint32_t n_plugins;
    sy_op_entry *ops;           /* uthash by key */
    sy_provider_rec **providers; /* registration order */
    uint32_t n_providers;
    sy_provider_rec **priority;  /* the INI priority order, fallback last */
    uint32_t n_priority;
    /* the first created SY_PROVIDER_FALLBACK provider (cpu_ref in-tree): it
     * folds constants; NULL when none is loaded */
    sy_provider_rec *fallback;
    sy_scheme_rec **schemes;
    uint32_t n_schemes;
    sy_extension_rec **extensions;
    uint32_t n_extensions;
    sy_log_fn log_fn;
    void *log_user;
    int refcount;               /* 1 + live models + live sessions */
    bool released;
};

/* registry lookups */
const sy_schema_rec *sy_env_find_schema(const sy_env *env, const char *domain, const char *op, int32_t opset);
const sy_op_entry *sy_env_find_op(const sy_env *env, const char *domain, const char *op);
sy_provider_rec *sy_env_find_provider(const sy_env *env, const char *name);
const sy_scheme_rec *sy_env_find_scheme(const sy_env *env, const char *name);
const sy_extension_rec *sy_env_find_extension(const sy_env *env, const char *name, uint32_t version);
/* "" and "ai.onnx" are the same domain */
const char *sy_domain_canonical(const char *domain);

/* logging through the env's sink */
void sy_env_log(const sy_env *env, sy_log_level level, const char *origin, const char *fmt, ...) SY_PRINTF(4, 5);

/* loader.c */
sy_status *sy_loader_load_all(sy_env *env);
void sy_loader_unload_all(sy_env *env);
void sy_plugin_ref(sy_loaded_plugin *p);
void sy_plugin_unref(sy_loaded_plugin *p);
/* calls the release of the state the plugin set in this env (once) */
void sy_plugin_release_state(sy_loaded_plugin *p);
/* where the embedded default looks: <dir of libswitchyard>/switchyard/plugins */
char *sy_default_plugin_dir(void);

/* hostapi.c */
extern const sy_host_api sy_host_api_table;
/* the env that registrations currently go to (set by the loader around init) */
void sy_hostapi_begin_registration(sy_env *env, sy_loaded_plugin *p);
void sy_hostapi_end_registration(void);
sy_status *sy_registry_commit(sy_env *env, sy_loaded_plugin *p, bool keep);

void sy_env_ref(sy_env *env);
void sy_env_unref(sy_env *env);

#endif
