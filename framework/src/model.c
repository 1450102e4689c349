/* sy_model: load (importer by content), check ops against the registry, and
 * the read-only queries of the public API. */
#include "model.h"
#include "builtin.h"
#include "onnx_import.h"
#include "tflite_import.h"
#include "status.h"
#include "util.h"
#include "pass_qdq.h"
#include "qdq_encodings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static sy_status *check_graph_ops(const sy_env *env, const ir_graph *g, char **msg, size_t *len, size_t *cap,
                                  uint32_t *n_bad)
{
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (!sy_env_find_schema(env, n->domain, n->op, n->opset) && !sy_builtin_of(n)) {
            /* list each (op, domain, opset) once */
            char item[256];
            snprintf(item, sizeof item, "%s (domain '%s', opset %d)", n->op, n->domain[0] ? n->domain : "ai.onnx",
                     n->opset);
            if (!*msg || !strstr(*msg, item)) {
                size_t add = strlen(item) + 3;
                if (*len + add + 1 > *cap) {
                    size_t nc = (*cap + add + 1) * 2;
                    char *grown = realloc(*msg, nc);
                    if (!grown)
                        return sy_error_oom();
                    if (!*msg)
                        grown[0] = '\0';
                    *msg = grown;
                    *cap = nc;
                }
                *len += (size_t)snprintf(*msg + *len, *cap - *len, "%s%s", *n_bad ? ", " : "", item);
                (*n_bad)++;
            }
        }
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].type == SY_ATTR_GRAPH && n->attrs[a].g)
                SY_TRY(check_graph_ops(env, n->attrs[a].g, msg, len, cap, n_bad));
    }
    return NULL;
}

sy_status *sy_model_check_ops(const sy_env *env, const ir_model *m)
{
    char *msg = NULL;
    size_t len = 0, cap = 0;
    uint32_t n_bad = 0;
    sy_status *st = check_graph_ops(env, &m->graph, &msg, &len, &cap, &n_bad);
    if (!st && n_bad)
        st = sy_error(SY_ERR_NOT_IMPLEMENTED, "%s: %u operator%s not provided by any loaded plugin: %s", m->path,
                      n_bad, n_bad == 1 ? " is" : "s are", msg);
    free(msg);
    return st;
}

static sy_status *model_finish(sy_env *env, ir_model *ir, uint32_t flags, sy_model **out)
{
    if (ir->graph.n_nodes > env->cfg.limits.max_nodes) {
        sy_status *st = sy_error(SY_ERR_BUDGET, "%s: the graph has %u nodes, over max_nodes = %llu", ir->path,
                                 ir->graph.n_nodes, (unsigned long long)env->cfg.limits.max_nodes);
        ir_model_free(ir);
        return st;
    }
    sy_qdq_record_encodings(ir); /* QuantizeLinear outputs carry their scale / zero point */
    sy_pass_qdq(env, ir); /* DQ -> op -> Q chains to switchyard.quant integer kernels; no-op otherwise */
    sy_qdq_pass_encodings(ir);
    sy_status *st = (flags & SY_LOAD_SKIP_OP_CHECK) ? NULL : sy_model_check_ops(env, ir);
    if (st) {
        ir_model_free(ir);
        return st;
    }
    sy_model *m = calloc(1, sizeof *m);
    if (!m) {
        ir_model_free(ir);
        return sy_error_oom();
    }
    m->env = env;
    m->ir = ir;
    sy_env_ref(env);
    *out = m;
    return NULL;
}

SY_EXPORT sy_status *sy_model_load_flags(sy_env *env, const char *path, uint32_t flags, sy_model **out)
{
    if (!env || !path || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_model_load: env, path and out are required");
    /* the format is decided by content: TFLite files carry "TFL3" at byte 4 */
    unsigned char head[8] = {0};
    struct stat sb;
    int fd = sy_open_regular(path, &sb); /* a FIFO must not block the sniff; the importer says what is wrong */
    ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : 0;
    if (fd >= 0)
        close(fd);
    if (fd >= 0 && (uint64_t)sb.st_size > env->cfg.limits.max_file_bytes) {
        char a[64], b[64];
        return sy_error(SY_ERR_BUDGET, "%s: the file is %s, over max_file_bytes = %s", path,
                        sy_size_str((uint64_t)sb.st_size, a, sizeof a),
                        sy_size_str(env->cfg.limits.max_file_bytes, b, sizeof b));
    }
    if (got < 0)
        got = 0;
    ir_model *ir = NULL;
    if (sy_tflite_is_tflite(head, (size_t)got))
        SY_TRY(sy_tflite_import_file(path, env->cfg.limits.max_tensor_bytes, &ir));
    else
        SY_TRY(sy_onnx_import_file(path, &ir));
    return model_finish(env, ir, flags, out);
}

SY_EXPORT sy_status *sy_model_load(sy_env *env, const char *path, sy_model **out)
{
    return sy_model_load_flags(env, path, 0, out);
}

SY_EXPORT char *sy_model_unsupported_ops(const sy_model *model)
{
    if (!model)
        return NULL;
    char *msg = NULL;
    size_t len = 0, cap = 0;
    uint32_t n_bad = 0;
    sy_status *st = check_graph_ops(model->env, &model->ir->graph, &msg, &len, &cap, &n_bad);
    sy_status_free(st);
    if (!n_bad) {
        free(msg);
        return NULL;
    }
    return msg;
}

SY_EXPORT sy_status *sy_model_load_buffer(sy_env *env, const void *data, size_t size, const char *name,
                                          const char *base_dir, sy_model **out)
{
    if (!env || !data || !out)
        return sy_error(SY_ERR_INVALID_ARGUMENT, "sy_model_load_buffer: env, data and out are required");
    if (size > env->cfg.limits.max_file_bytes) {
        char a[64], b[64];
        return sy_error(SY_ERR_BUDGET, "%s: the model is %s, over max_file_bytes = %s", name ? name : "<buffer>",
                        sy_size_str(size, a, sizeof a), sy_size_str(env->cfg.limits.max_file_bytes, b, sizeof b));
    }
    ir_model *ir = NULL;
    if (sy_tflite_is_tflite(data, size))
        SY_TRY(sy_tflite_import_buffer(data, size, name ? name : "<buffer>", env->cfg.limits.max_tensor_bytes, &ir));
    else
        SY_TRY(sy_onnx_import_buffer(data, size, name ? name : "<buffer>", base_dir, &ir));
    return model_finish(env, ir, 0, out);
}

SY_EXPORT void sy_model_release(sy_model *m)
{
    if (!m)
        return;
    sy_env *env = m->env;
    ir_model_free(m->ir);
    free(m);
    sy_env_unref(env);
}

static bool value_info(const ir_graph *g, int32_t idx, sy_value_info *out)
{
    if (!out || out->struct_size < sizeof *out)
        return false;
    const ir_value *v = &g->values[idx];
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->rank;
    for (int32_t d = 0; d < v->rank && d < SY_MAX_RANK; d++) {
        out->dims[d] = v->dims[d];
        out->dim_names[d] = ir_value_dim_param(v, (int)d);
    }
    return true;
}

SY_EXPORT size_t sy_model_input_count(const sy_model *m) { return m ? m->ir->graph.n_inputs : 0; }
SY_EXPORT size_t sy_model_output_count(const sy_model *m) { return m ? m->ir->graph.n_outputs : 0; }

SY_EXPORT bool sy_model_input_info(const sy_model *m, size_t i, sy_value_info *out)
{
    return m && i < m->ir->graph.n_inputs && value_info(&m->ir->graph, m->ir->graph.inputs[i], out);
}

SY_EXPORT bool sy_model_output_info(const sy_model *m, size_t i, sy_value_info *out)
{
    return m && i < m->ir->graph.n_outputs && value_info(&m->ir->graph, m->ir->graph.outputs[i], out);
}

static sy_value_kind declared_kind(const ir_value *v)
{
    switch (v->kind) {
    case IR_KIND_SEQUENCE:
        return SY_VALUE_SEQUENCE;
    case IR_KIND_OPTIONAL:
        return v->elem_kind == IR_KIND_SEQUENCE ? SY_VALUE_OPTIONAL_SEQUENCE : SY_VALUE_OPTIONAL;
    default:
        return SY_VALUE_TENSOR;
    }
}

SY_EXPORT sy_value_kind sy_model_input_kind(const sy_model *m, size_t i)
{
    return m && i < m->ir->graph.n_inputs ? declared_kind(&m->ir->graph.values[m->ir->graph.inputs[i]])
                                          : SY_VALUE_TENSOR;
}

SY_EXPORT sy_value_kind sy_model_output_kind(const sy_model *m, size_t i)
{
    return m && i < m->ir->graph.n_outputs ? declared_kind(&m->ir->graph.values[m->ir->graph.outputs[i]])
                                           : SY_VALUE_TENSOR;
}

SY_EXPORT int64_t sy_model_ir_version(const sy_model *m) { return m ? m->ir->ir_version : 0; }
SY_EXPORT const char *sy_model_format(const sy_model *m) { return m ? m->ir->format : NULL; }
SY_EXPORT size_t sy_model_opset_count(const sy_model *m) { return m ? m->ir->n_opsets : 0; }

SY_EXPORT bool sy_model_opset(const sy_model *m, size_t i, const char **domain, int64_t *version)
{
    if (!m || i >= m->ir->n_opsets)
        return false;
    if (domain)
        *domain = m->ir->opsets[i].domain;
    if (version)
        *version = m->ir->opsets[i].version;
    return true;
}

SY_EXPORT size_t sy_model_node_count(const sy_model *m) { return m ? m->ir->graph.n_nodes : 0; }

SY_EXPORT bool sy_model_node(const sy_model *m, size_t i, const char **name, const char **domain, const char **op)
{
    if (!m || i >= m->ir->graph.n_nodes)
        return false;
    const ir_node *n = &m->ir->graph.nodes[i];
    if (name)
        *name = n->name;
    if (domain)
        *domain = n->domain;
    if (op)
        *op = n->op;
    return true;
}

SY_EXPORT size_t sy_model_initializer_bytes(const sy_model *m)
{
    if (!m)
        return 0;
    size_t total = 0;
    const ir_graph *g = &m->ir->graph;
    for (uint32_t i = 0; i < g->n_values; i++)
        if (g->values[i].flags & IR_VALUE_INITIALIZER)
            total += g->values[i].nbytes;
    return total;
}
