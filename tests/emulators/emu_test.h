/*
 * Helpers of the emulator and block-op tests: environments that load
 * exactly the plugins named (from the build tree), ONNX models built in
 * memory (tests/partition/pt_onnx.h plus attributes, node domains and
 * extra opset imports), sessions and tensors.
 *
 * EMU_PLUGIN_DIR is a compile definition (the build tree's plugin folder);
 * EMU_SHARED_DIR the shared data folder; EMU_CONF_DIR the source conf/.
 */
#ifndef EMU_TEST_H
#define EMU_TEST_H

#include "pt_common.h"

#include <math.h>
#include <stdbool.h>

#define PT_BOOL ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
#define PT_I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32

/* ---- models ------------------------------------------------------------- */
static inline void emu_opset(pt_model *m, const char *domain, int64_t version)
{
    Onnx__OperatorSetIdProto *o = pt_alloc(m, sizeof *o);
    onnx__operator_set_id_proto__init(o);
    o->domain = pt_strdup(m, domain);
    o->has_version = 1;
    o->version = version;
    Onnx__OperatorSetIdProto **list = pt_alloc(m, (m->model.n_opset_import + 1) * sizeof *list);
    memcpy(list, m->model.opset_import, m->model.n_opset_import * sizeof *list);
    list[m->model.n_opset_import++] = o;
    m->model.opset_import = list;
}

static inline Onnx__NodeProto *emu_last(pt_model *m) { return m->graph.node[m->graph.n_node - 1]; }

static inline Onnx__AttributeProto *emu_attr(pt_model *m, const char *name, int type)
{
    Onnx__NodeProto *n = emu_last(m);
    Onnx__AttributeProto *a = pt_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = pt_strdup(m, name);
    a->has_type = 1;
    a->type = type;
    n->attribute = (Onnx__AttributeProto **)pt_push(m, (void **)n->attribute, n->n_attribute);
    n->attribute[n->n_attribute++] = a;
    return a;
}
static inline void emu_attr_i(pt_model *m, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = emu_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}
static inline void emu_attr_f(pt_model *m, const char *name, float v)
{
    Onnx__AttributeProto *a = emu_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}
static inline void emu_attr_s(pt_model *m, const char *name, const char *v)
{
    Onnx__AttributeProto *a = emu_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)pt_strdup(m, v);
}
static inline void emu_attr_ints(pt_model *m, const char *name, size_t n, const int64_t *v)
{
    Onnx__AttributeProto *a = emu_attr(m, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n;
    a->ints = pt_alloc(m, n * sizeof *a->ints);
    memcpy(a->ints, v, n * sizeof *a->ints);
}
static inline void emu_domain(pt_model *m, const char *domain) { emu_last(m)->domain = pt_strdup(m, domain); }

/* ---- environments ------------------------------------------------------- */
/* INI text: the [switchyard] section loads the plugins listed (space
 * separated names, from EMU_PLUGIN_DIR), then `rest` follows. */
static inline sy_status *emu_env_st(sy_env **env, const char *plugins, const char *fmt, ...)
{
    char ini[8192], rest[4096], names[512];
    size_t len = (size_t)snprintf(ini, sizeof ini, "[switchyard]\n");
    snprintf(names, sizeof names, "%s", plugins);
    for (char *tok = strtok(names, " "); tok; tok = strtok(NULL, " "))
        len += (size_t)snprintf(ini + len, sizeof ini - len, "plugins = %s/libsy_%s.so\n", EMU_PLUGIN_DIR, tok);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    snprintf(ini + len, sizeof ini - len, "%s\n", rest);
    return sy_env_create_from_string(ini, NULL, env);
}

#define EMU_OPS "cpu_ref ops_math ops_tensor ops_activation ops_nn ops_reduce ops_recurrent qti_aisw"
#define EMU_ALL EMU_OPS " htp lpai aic"

static inline sy_env *emu_env(const char *plugins, const char *fmt, ...)
{
    char rest[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    sy_env *env = NULL;
    sy_status *st = emu_env_st(&env, plugins, "%s", rest);
    if (st) {
        fprintf(stderr, "FAIL: env (%s / %s): %s\n", plugins, rest, pt_msg(st));
        pt_failures++;
        return NULL;
    }
    return env;
}

static inline sy_session *emu_session(sy_env *env, sy_model *m, bool profiling)
{
    if (!env || !m)
        return NULL;
    sy_session_options o = {.struct_size = sizeof o, .threads = 1, .strict = -1, .profiling = profiling};
    sy_session *s = NULL;
    sy_status *st = sy_session_create(env, m, &o, &s);
    if (st) {
        fprintf(stderr, "FAIL: session: %s\n", pt_msg(st));
        pt_failures++;
        return NULL;
    }
    return s;
}

static inline sy_tensor emu_tensor(sy_dtype dt, void *data, int32_t rank, const int64_t *dims)
{
    return pt_tensor(dt, data, rank, dims);
}

static inline bool emu_ok(sy_status *st, const char *what)
{
    if (!st)
        return true;
    PT_CHECK(st == NULL, "%s: %s", what, pt_msg(st));
    return false;
}

/* Placement of node `name` in a session (provider or "" when absent). */
static inline const char *emu_provider_of(const sy_session *s, const char *name, sy_node_placement *out)
{
    for (size_t i = 0; i < sy_session_node_count(s); i++) {
        sy_node_placement p = {.struct_size = sizeof p};
        if (sy_session_node_placement(s, i, &p) && p.name && !strcmp(p.name, name)) {
            if (out)
                *out = p;
            return p.provider ? p.provider : "";
        }
    }
    return "";
}

#endif
