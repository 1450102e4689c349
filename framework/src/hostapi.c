/*
 * The host API table injected into every plugin. Plugins reach the core only
 * through these functions (no core symbol is ever linked by a plugin).
 */
#include "env.h"
#include "plan.h"
#include "session.h"
#include "status.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sy_status *h_status_new(sy_status_code code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sy_status *st = sy_verror(code, fmt, ap);
    va_end(ap);
    return st;
}

static sy_status_code h_status_code(const sy_status *st) { return sy_status_code_of(st); }
static const char *h_status_message(const sy_status *st) { return sy_status_msg(st); }

/* Plugins log before any env is known to them; route to the env doing the
 * current registration, or to the env of the session whose session_begin
 * runs on this thread, or else to stderr through the default sink. */
static sy_env *log_env;

static void h_log(sy_log_level level, const char *plugin, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const struct sy_session *beginning = sy_provider_session_beginning();
    sy_env *env = beginning ? beginning->env : log_env;
    if (env)
        sy_env_log(env, level, plugin ? plugin : "plugin", "%s", msg);
    else if (level <= SY_LOG_WARN)
        fprintf(stderr, "switchyard: %s: %s\n", plugin ? plugin : "plugin", msg);
}

static void *h_alloc(size_t size, size_t alignment) { return sy_aligned_alloc(size, alignment ? alignment : 16); }
static void h_free(void *p) { sy_aligned_free(p); }

/* registration entry points live in registry.c */
sy_status *sy_reg_schema(sy_plugin *p, const sy_op_schema *schema);
sy_status *sy_reg_kernel(sy_plugin *p, const sy_kernel_def *kernel);
sy_status *sy_reg_provider(sy_plugin *p, const sy_provider_def *provider);
sy_status *sy_reg_scheme(sy_plugin *p, const sy_quant_scheme_def *scheme);
sy_status *sy_reg_extension(sy_plugin *p, const char *name, uint32_t version, const void *table);
sy_status *sy_reg_state(sy_plugin *p, void *state, void (*release)(void *state));

static const char *h_option_get(const sy_options *opts, const char *key) { return sy_options_get(opts, key); }

/* ---- node introspection ---- */
static const char *h_node_name(const sy_node *n) { return n->ir->name; }
static const char *h_node_op(const sy_node *n) { return n->ir->op; }
static const char *h_node_domain(const sy_node *n) { return n->ir->domain; }
static int32_t h_node_opset(const sy_node *n) { return n->ir->opset; }
static uint32_t h_node_num_inputs(const sy_node *n) { return n->n_in; }
static uint32_t h_node_num_outputs(const sy_node *n) { return n->n_out; }

static const sy_tensor *h_node_input(const sy_node *n, uint32_t i) { return i < n->n_in ? n->in[i] : NULL; }
static const sy_tensor *h_node_output(const sy_node *n, uint32_t i) { return i < n->n_out ? n->out[i] : NULL; }

static sy_status *h_node_set_output(sy_node *n, uint32_t i, sy_dtype dt, int32_t rank, const int64_t *dims)
{
    if (!n->inferring)
        return sy_error(SY_ERR_INTERNAL, "node_set_output called outside shape inference");
    if (i >= n->n_out)
        return sy_error(SY_ERR_INTERNAL, "node_set_output: output %u out of range (node has %u)", i, n->n_out);
    if (rank < 0 || rank > SY_MAX_RANK)
        return sy_error(SY_ERR_UNSUPPORTED, "output %u: rank %d exceeds the supported maximum %d", i, rank,
                        SY_MAX_RANK);
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] < 0)
            return sy_error(SY_ERR_SHAPE, "output %u: dimension %d is negative (%lld)", i, d, (long long)dims[d]);
    if (!n->out[i])
        return NULL; /* omitted optional output: nothing to record */
    sy_tensor *t = n->out[i];
    t->dtype = dt;
    t->rank = rank;
    for (int32_t d = 0; d < rank; d++)
        t->dims[d] = dims[d];
    int64_t numel = 1;
    for (int32_t d = 0; d < rank; d++)
        if (__builtin_mul_overflow(numel, dims[d], &numel))
            return sy_error(SY_ERR_SHAPE, "output %u: element count overflows", i);
    size_t bytes = 0;
    if (!sy_dtype_bytes(dt, numel, &bytes))
        return sy_error(SY_ERR_TYPE, "output %u: dtype %s has no fixed element size", i, sy_dtype_name(dt));
    t->nbytes = bytes;
    return NULL;
}

static void h_node_set_scratch(sy_node *n, size_t bytes) { n->scratch = bytes; }

static uint32_t h_node_position(const sy_node *n) { return n->index; }

static sy_status *h_node_pin_output(sy_node *n, uint32_t output, uint64_t offset)
{
    if (output >= n->n_out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "node_pin_output: output %u out of range (node has %u)", output,
                        n->n_out);
    if (offset > (uint64_t)INT64_MAX)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "node_pin_output: offset %llu too large",
                        (unsigned long long)offset);
    if (!n->pins) {
        n->pins = malloc(n->n_out * sizeof *n->pins);
        if (!n->pins)
            return sy_error_oom();
        for (uint32_t i = 0; i < n->n_out; i++)
            n->pins[i] = -1;
    }
    n->pins[output] = (int64_t)offset;
    return NULL;
}

static void *h_node_provider_state(const sy_node *n)
{
    const sy_node_rt *nr = &n->s->nodes[n->index];
    return nr->provider ? nr->provider->state : NULL;
}

static void *h_node_plugin_state(const sy_node *n) { return n->caller ? n->caller->state : NULL; }

static void *h_node_provider_session(const sy_node *n)
{
    if (!n->s)
        return NULL;
    const sy_provider_rec *pr = n->asking;
    if (!pr && n->index < n->s->n_nodes && &n->s->nodes[n->index].view == n)
        pr = n->s->nodes[n->index].provider;
    return sy_provider_session_of(n->s, pr);
}

/* ABI 1.5: the threads of the session being begun on this thread */
static uint32_t h_session_threads(void)
{
    const struct sy_session *s = sy_provider_session_beginning();
    return s ? (uint32_t)(s->threads > 0 ? s->threads : 1) : 0;
}

/* ABI 1.6: the dims infer just set for output i are an upper bound; the
 * kernel's run sets the run's dims. Only where nobody but the application
 * reads the value (no node of the graph consumes it) of a session planned
 * statically: elsewhere the answer is SY_ERR_DYNAMIC_SHAPE, which infer
 * returns, and the session runs node by node with the data in hand. */
static sy_status *h_node_bound_output(sy_node *n, uint32_t i)
{
    if (!n->inferring)
        return sy_error(SY_ERR_INTERNAL, "node_bound_output called outside shape inference");
    if (i >= n->n_out)
        return sy_error(SY_ERR_INTERNAL, "node_bound_output: output %u out of range (node has %u)", i, n->n_out);
    if (!n->out[i])
        return NULL; /* omitted: nothing to bound */
    struct sy_session *s = n->s;
    int32_t v = n->ir->outputs[i];
    if (!s || v < 0 || s->dynamic || s->parent)
        return sy_error(SY_ERR_DYNAMIC_SHAPE, "output %u: the length is known at run time only (a node-by-node "
                        "session)", i);
    const ir_graph *g = s->g;
    for (uint32_t k = 0; k < g->n_nodes; k++)
        for (uint32_t j = 0; j < g->nodes[k].n_inputs; j++)
            if (g->nodes[k].inputs[j] == v)
                return sy_error(SY_ERR_DYNAMIC_SHAPE, "output %u '%s' is read by node '%s': only a value no node "
                                "reads is planned at its bound", i, g->values[v].name, g->nodes[k].name);
    sy_bound *b = NULL;
    for (uint32_t k = 0; k < s->n_bounds; k++)
        if (s->bounds[k].value == (uint32_t)v)
            b = &s->bounds[k];
    if (!b) {
        if (s->n_bounds == s->cap_bounds) {
            uint32_t cap = s->cap_bounds ? 2 * s->cap_bounds : 4;
            sy_bound *nb = realloc(s->bounds, cap * sizeof *nb);
            if (!nb)
                return sy_error_oom();
            s->bounds = nb;
            s->cap_bounds = cap;
        }
        b = &s->bounds[s->n_bounds++];
    }
    const sy_tensor *t = n->out[i];
    b->value = (uint32_t)v;
    b->rank = t->rank;
    memcpy(b->dims, t->dims, sizeof b->dims);
    b->nbytes = t->nbytes;
    return NULL;
}

/* ABI 1.6: did node_bound_output accept output i (for prepare and run)? */
static bool h_node_output_bounded(const sy_node *n, uint32_t i)
{
    if (!n->s || i >= n->n_out || n->ir->outputs[i] < 0)
        return false;
    for (uint32_t k = 0; k < n->s->n_bounds; k++)
        if (n->s->bounds[k].value == (uint32_t)n->ir->outputs[i])
            return true;
    return false;
}

static void h_node_report_memory(sy_node *n, int kind, size_t bytes)
{
    if (kind == SY_MEM_PERSISTENT)
        n->persistent += bytes;
    else if (kind == SY_MEM_PACKED_WEIGHTS)
        n->packed += bytes;
}

/* ---- attributes ---- */
static const ir_attr *attr_of(const sy_node *n, const char *name, sy_attr_type type)
{
    const ir_attr *a = ir_node_attr(n->ir, name);
    return a && a->type == type ? a : NULL;
}

static bool h_attr_int(const sy_node *n, const char *name, int64_t *out)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_INT);
    if (a)
        *out = a->i;
    return a != NULL;
}

static bool h_attr_float(const sy_node *n, const char *name, float *out)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_FLOAT);
    if (a)
        *out = a->f;
    return a != NULL;
}

static bool h_attr_string(const sy_node *n, const char *name, const char **out, size_t *len)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_STRING);
    if (!strcmp(name, "requant") && n->s) {
        /* the session decides the form of nodes the model leaves open and
         * records every answer (requant_form.c); the handle is the
         * session's own, so writing the record through it is sound */
        struct sy_node *w = (struct sy_node *)n;
        if (!a) {
            const char *form = sy_requant_resolve(w);
            *out = form;
            if (len)
                *len = strlen(form);
            return true;
        }
        w->rq_form = sy_requant_name(a->s);
        w->rq_source = sy_requant_source_intern(w->s, "model");
    }
    if (a) {
        *out = a->s;
        if (len)
            *len = a->s_len;
    }
    return a != NULL;
}

static bool h_attr_ints(const sy_node *n, const char *name, const int64_t **out, size_t *count)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_INTS);
    if (a) {
        *out = a->ints;
        *count = a->count;
    }
    return a != NULL;
}

static bool h_attr_floats(const sy_node *n, const char *name, const float **out, size_t *count)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_FLOATS);
    if (a) {
        *out = a->floats;
        *count = a->count;
    }
    return a != NULL;
}

static bool h_attr_tensor(const sy_node *n, const char *name, const sy_tensor **out)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_TENSOR);
    if (a)
        *out = a->t;
    return a != NULL;
}

static bool h_attr_strings(const sy_node *n, const char *name, const char *const **out, size_t *count)
{
    const ir_attr *a = attr_of(n, name, SY_ATTR_STRINGS);
    if (a) {
        *out = (const char *const *)a->strings;
        *count = a->count;
    }
    return a != NULL;
}

/* ---- profiling (implemented in profile.c) ---- */
bool sy_profiling_enabled(const sy_run_ctx *rc);
void sy_profile_record(sy_run_ctx *rc, const sy_profile_event *ev);

static uint64_t h_now_ns(void) { return sy_now_ns(); }

/* set_input's mode is an int in the table so the plugin header needs no
 * enum from switchyard.h */
static sy_status *app_set_input(sy_session *s, const char *name, const sy_tensor *t, int mode)
{
    return sy_session_set_input(s, name, t, (sy_input_mode)mode);
}

static sy_status *app_set_input_by_index(sy_session *s, size_t index, const sy_tensor *t, int mode)
{
    return sy_session_set_input_by_index(s, index, t, (sy_input_mode)mode);
}

static const sy_app_api app_api_table = {
    .struct_size = sizeof(sy_app_api),
    .model_load = sy_model_load,
    .model_load_buffer = sy_model_load_buffer,
    .model_release = sy_model_release,
    .model_input_count = sy_model_input_count,
    .model_output_count = sy_model_output_count,
    .model_input_info = sy_model_input_info,
    .model_output_info = sy_model_output_info,
    .session_create = sy_session_create,
    .session_release = sy_session_release,
    .session_set_input = app_set_input,
    .session_set_input_by_index = app_set_input_by_index,
    .session_run = sy_session_run,
    .session_get_output = sy_session_get_output,
    .session_get_output_by_name = sy_session_get_output_by_name,
    .session_reset = sy_session_reset,
    .tensor_read_file = sy_tensor_read_file,
    .tensor_write_file = sy_tensor_write_file,
    .tensor_free = sy_tensor_free,
};

/* ABI 1.3: string bytes for a kernel's output (strheap.h); the run context
 * says which heap (the run's, or the folded constants'). */
static void *h_run_alloc(sy_run_ctx *rc, size_t size)
{
    return rc && rc->heap ? sy_strheap_alloc(rc->heap, size ? size : 1) : NULL;
}

/* ABI 1.4: subgraph attributes of plugin ops (subgraph.c) */
sy_status *sy_host_node_subgraph(sy_node *n, const char *attr, const sy_subgraph_sig *sig, sy_subgraph **out);
sy_status *sy_host_subgraph_run(sy_subgraph *g, const sy_tensor *const *inputs, uint32_t n_inputs,
                                const sy_tensor **outputs, uint32_t n_outputs);
bool sy_host_attr_graph(const sy_node *n, const char *name, uint32_t *n_inputs, uint32_t *n_outputs);

const sy_host_api sy_host_api_table = {
    .struct_size = sizeof(sy_host_api),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .status_new = h_status_new,
    .status_free = sy_status_free,
    .status_code = h_status_code,
    .status_message = h_status_message,
    .log = h_log,
    .alloc = h_alloc,
    .free = h_free,
    .register_schema = sy_reg_schema,
    .register_kernel = sy_reg_kernel,
    .register_provider = sy_reg_provider,
    .register_quant_scheme = sy_reg_scheme,
    .register_extension = sy_reg_extension,
    .option_get = h_option_get,
    .node_name = h_node_name,
    .node_op = h_node_op,
    .node_domain = h_node_domain,
    .node_opset = h_node_opset,
    .node_num_inputs = h_node_num_inputs,
    .node_num_outputs = h_node_num_outputs,
    .node_input = h_node_input,
    .node_output = h_node_output,
    .node_set_output = h_node_set_output,
    .node_set_scratch = h_node_set_scratch,
    .attr_int = h_attr_int,
    .attr_float = h_attr_float,
    .attr_string = h_attr_string,
    .attr_ints = h_attr_ints,
    .attr_floats = h_attr_floats,
    .attr_tensor = h_attr_tensor,
    .attr_strings = h_attr_strings,
    .profiling_enabled = sy_profiling_enabled,
    .profile_event = sy_profile_record,
    .now_ns = h_now_ns,
    .app = &app_api_table,
    .node_report_memory = h_node_report_memory,
    .node_position = h_node_position,
    .node_provider_state = h_node_provider_state,
    .node_pin_output = h_node_pin_output,
    .plugin_set_state = sy_reg_state,
    .node_plugin_state = h_node_plugin_state,
    .node_provider_session = h_node_provider_session,
    .run_alloc = h_run_alloc,
    .node_subgraph = sy_host_node_subgraph,
    .subgraph_run = sy_host_subgraph_run,
    .attr_graph = sy_host_attr_graph,
    .session_threads = h_session_threads,
    .node_bound_output = h_node_bound_output,
    .node_output_bounded = h_node_output_bounded,
    .plan_blocks = sy_plan_blocks,
};

void sy_hostapi_set_log_env(sy_env *env) { log_env = env; }
