/* The provider plumbing of the htp and aic emulators (emu_provider.h). */
#include "emu_provider.h"

#include <stdlib.h>

#define H (emu_T->H)

/* The latest created state, for version 1 of the report table (emu_live) */
static emu_live live = EMU_LIVE_INIT;

static size_t report_state(void *state, char *buf, size_t len)
{
    emu_pstate *s = state;
    if (!s) {
        size_t k = 0;
        emu_out(buf, len, &k, "%s: no provider state\n", emu_T->provider);
        return k;
    }
    return s->env->ops->report_of(s, buf, len);
}

static const char *compat_of(void *state) { return ((emu_pstate *)state)->compat; }

static size_t report_live(char *buf, size_t len) { return emu_live_report(&live, report_state, buf, len); }
static const char *compat_live(void) { return emu_live_compat(&live, compat_of); }
static size_t report_env(const emu_report_ext *self, char *buf, size_t len)
{
    return report_state(((const emu_env *)self)->s, buf, len);
}

static const char *compat_env(const emu_report_ext *self)
{
    const emu_pstate *s = ((const emu_env *)self)->s;
    return s ? s->compat : "";
}

static const emu_report_ext report_ext = {sizeof(emu_report_ext), report_live, compat_live, report_env, compat_env};

void emu_pstate_ready(emu_pstate *s)
{
    emu_board_init(&s->board);
    emu_live_set(&live, s);
}

static sy_status *create_env(void *plugin_state, const sy_options *o, void **state)
{
    emu_env *e = plugin_state;
    SY_TRY(e->ops->create(o, state));
    e->s = *state;
    e->s->env = e;
    return NULL;
}

static void destroy_state(void *state)
{
    emu_pstate *s = state;
    if (s->env)
        s->env->s = NULL;
    emu_live_drop(&live, s);
    emu_board_free(&s->board);
    free(s);
}

static sy_status *session_begin(void *state, void **session_state)
{
    return emu_board_begin(&((emu_pstate *)state)->board, session_state);
}

static void session_end(void *state, void *session_state) { emu_board_end(&((emu_pstate *)state)->board, session_state); }

static sy_status *group_nodes(void *state, const sy_node *const *nodes, uint32_t n, uint32_t *group_of)
{
    (void)state;
    return emu_group(nodes, n, group_of);
}

/* the entries of sy_provider_def every such provider has alike */
static const sy_provider_def shared_def = {
    .struct_size = sizeof(sy_provider_def),
    .flags = SY_PROVIDER_EMULATOR,
    .create_env = create_env,
    .destroy = destroy_state,
    .compat = compat_of,
    .group = group_nodes,
    .compile = emu_compile,
    .run_compiled = emu_run_compiled,
    .release_compiled = emu_release_compiled,
    .serialize = emu_serialize,
    .deserialize = emu_deserialize,
    .session_begin = session_begin,
    .session_end = session_end,
};

sy_status *emu_provider_init(const sy_host_api *host, sy_plugin *p, emu_target *rt, const emu_target *tmpl,
                             const char *qio_rule, const sy_provider_def *provider, const emu_provider_ops *ops)
{
    emu_env *e = calloc(1, sizeof *e);
    if (!e)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "%s: out of memory", tmpl->provider);
    e->ext = report_ext;
    e->def = shared_def;
    e->def.name = provider->name;
    e->def.description = provider->description;
    e->def.domain = provider->domain;
    e->def.option_keys = provider->option_keys;
    e->def.check_node = provider->check_node;
    e->def.can_copy = provider->can_copy;
    e->def.copy = provider->copy;
    e->ops = ops;
    sy_status *st = host->plugin_set_state(p, e, free);
    if (st) {
        free(e);
        return st;
    }
    return emu_plugin_init(host, p, rt, tmpl, qio_rule, &e->ext, &e->def);
}

sy_status *emu_option_bools(const sy_options *o, const char *provider, const char *const *keys, bool *const *dst,
                            int n)
{
    const char *v;
    for (int i = 0; i < n; i++)
        if (o && (v = H->option_get(o, keys[i])) && !emu_parse_bool(v, dst[i]))
            return H->status_new(SY_ERR_INVALID_CONFIG, "[provider.%s] %s = '%s': expected true or false", provider,
                                 keys[i], v);
    return NULL;
}

bool emu_is_int_view(const sy_node *n, const char *op)
{
    /* data moves of integer codes: views and Transpose keep the encoding */
    bool view = !strcmp(op, "Reshape") || !strcmp(op, "Flatten") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze") ||
                !strcmp(op, "Transpose") || !strcmp(op, "Slice");
    sy_dtype dt = H->node_num_inputs(n) ? H->node_input(n, 0)->dtype : SY_DT_UNDEFINED;
    return view && (dt == SY_DT_UINT8 || dt == SY_DT_INT8 || dt == SY_DT_UINT16 || dt == SY_DT_INT16);
}
