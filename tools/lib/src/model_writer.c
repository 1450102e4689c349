/*
 * sy_model_writer: an ONNX model built in memory (protobuf-c messages in a
 * pool, tl_onnx.c) and packed or saved. Every argument is checked before
 * anything is added, so a refused call leaves the writer as it was.
 */
#include "tl_files.h"
#include "tl_onnx.h"
#include "tl_pool.h"

#include <switchyard/sy_tools.h>
/* after switchyard.h: SY_TRY */
#include <switchyard/sy_sdk.h>

#include <stdlib.h>
#include <string.h>

struct sy_model_writer {
    tl_pool pl;
    Onnx__ModelProto m;
    Onnx__GraphProto g;
    size_t cap_in, cap_out, cap_init, cap_node, cap_opset;
};

static sy_status *oom(void) { return sy_status_create(SY_ERR_OUT_OF_MEMORY, "model writer: out of memory"); }

/* room for one more in a pool array */
static bool grow(tl_pool *pl, void **arr, size_t n, size_t *cap, size_t es)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 8;
    void *g = tl_alloc(pl, nc * es);
    if (!g)
        return false;
    if (n)
        memcpy(g, *arr, n * es);
    *arr = g;
    *cap = nc;
    return true;
}

static sy_status *need_name(const char *what, const char *name)
{
    if (!name || !name[0])
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: %s needs a name", what);
    return NULL;
}

static sy_status *check_shape(const char *what, const char *name, int32_t rank, const int64_t *dims)
{
    if (rank > SY_MAX_RANK || (rank > 0 && !dims))
        return sy_status_create(SY_ERR_SHAPE, "model writer: %s '%s': rank %d (at most %d, with dims)", what, name,
                                (int)rank, SY_MAX_RANK);
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] < 0)
            return sy_status_create(SY_ERR_SHAPE, "model writer: %s '%s': dimension %d is %lld", what, name, (int)d,
                                    (long long)dims[d]);
    return NULL;
}

SY_EXPORT sy_status *sy_model_writer_create(int64_t opset, sy_model_writer **out)
{
    if (!out)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_model_writer_create: out is NULL");
    if (opset < 1 || opset > 1000)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: opset %lld (expected 1 to 1000)",
                                (long long)opset);
    sy_model_writer *w = calloc(1, sizeof *w);
    if (!w)
        return oom();
    onnx__model_proto__init(&w->m);
    onnx__graph_proto__init(&w->g);
    w->m.graph = &w->g;
    w->g.name = tl_strdup(&w->pl, "main");
    w->m.producer_name = tl_strdup(&w->pl, "switchyard");
    sy_status *st = w->g.name && w->m.producer_name ? sy_model_writer_add_opset(w, "", opset) : oom();
    if (st) {
        sy_model_writer_release(w);
        return st;
    }
    *out = w;
    return NULL;
}

SY_EXPORT void sy_model_writer_release(sy_model_writer *w)
{
    if (!w)
        return;
    tl_pool_free(&w->pl);
    free(w);
}

SY_EXPORT sy_status *sy_model_writer_add_opset(sy_model_writer *w, const char *domain, int64_t version)
{
    if (!w || !domain)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_model_writer_add_opset: writer and domain are required");
    if (version < 1)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: domain '%s' version %lld", domain,
                                (long long)version);
    for (size_t i = 0; i < w->m.n_opset_import; i++)
        if (!strcmp(w->m.opset_import[i]->domain, domain))
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: domain '%s' is imported twice", domain);
    Onnx__OperatorSetIdProto *o = tl_alloc(&w->pl, sizeof *o);
    if (!o || !grow(&w->pl, (void **)&w->m.opset_import, w->m.n_opset_import, &w->cap_opset, sizeof *o))
        return oom();
    onnx__operator_set_id_proto__init(o);
    o->domain = tl_strdup(&w->pl, domain);
    o->has_version = 1;
    o->version = version;
    if (!o->domain)
        return oom();
    w->m.opset_import[w->m.n_opset_import++] = o;
    return NULL;
}

SY_EXPORT sy_status *sy_model_writer_set_producer(sy_model_writer *w, const char *producer)
{
    if (!w || !producer)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_model_writer_set_producer: writer and name are required");
    char *p = tl_strdup(&w->pl, producer);
    if (!p)
        return oom();
    w->m.producer_name = p;
    return NULL;
}

static sy_status *add_value(sy_model_writer *w, bool input, const char *name, sy_dtype dtype, int32_t rank,
                            const int64_t *dims)
{
    const char *what = input ? "input" : "output";
    if (!w)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: NULL writer");
    SY_TRY(need_name(what, name));
    bool typed = dtype != SY_DT_UNDEFINED && rank >= 0;
    if (typed)
        SY_TRY(check_shape(what, name, rank, dims));
    Onnx__ValueInfoProto *vi;
    if (typed) {
        vi = tl_value_info(&w->pl, name, (int)dtype, dims, (size_t)rank);
    } else if ((vi = tl_alloc(&w->pl, sizeof *vi))) {
        onnx__value_info_proto__init(vi);
        vi->name = tl_strdup(&w->pl, name);
    }
    Onnx__ValueInfoProto ***arr = input ? &w->g.input : &w->g.output;
    size_t *n = input ? &w->g.n_input : &w->g.n_output;
    if (!vi || w->pl.oom || !grow(&w->pl, (void **)arr, *n, input ? &w->cap_in : &w->cap_out, sizeof *vi))
        return oom();
    (*arr)[(*n)++] = vi;
    return NULL;
}

SY_EXPORT sy_status *sy_model_writer_add_input(sy_model_writer *w, const char *name, sy_dtype dtype, int32_t rank,
                                               const int64_t *dims)
{
    return add_value(w, true, name, dtype, rank, dims);
}

SY_EXPORT sy_status *sy_model_writer_add_output(sy_model_writer *w, const char *name, sy_dtype dtype, int32_t rank,
                                                const int64_t *dims)
{
    return add_value(w, false, name, dtype, rank, dims);
}

SY_EXPORT sy_status *sy_model_writer_add_initializer(sy_model_writer *w, const char *name, const sy_tensor *t)
{
    if (!w || !t)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_model_writer_add_initializer: writer and tensor are required");
    SY_TRY(need_name("initializer", name));
    SY_TRY(check_shape("initializer", name, t->rank, t->dims));
    size_t es = sy_dtype_size(t->dtype);
    if (!es)
        return sy_status_create(SY_ERR_TYPE, "model writer: initializer '%s': dtype %s has no fixed element size",
                                name, sy_dtype_name(t->dtype));
    size_t numel = 1;
    for (int32_t d = 0; d < t->rank; d++)
        numel *= (size_t)t->dims[d];
    if (t->nbytes != numel * es || (t->nbytes && !t->data))
        return sy_status_create(SY_ERR_SHAPE, "model writer: initializer '%s': %zu bytes of data, its shape needs %zu",
                                name, t->data ? t->nbytes : 0, numel * es);
    Onnx__TensorProto *tp = tl_tensor(&w->pl, name, (int)t->dtype, t->dims, (size_t)(t->rank > 0 ? t->rank : 0),
                                      t->data, t->nbytes);
    if (!tp || w->pl.oom || !grow(&w->pl, (void **)&w->g.initializer, w->g.n_initializer, &w->cap_init, sizeof tp))
        return oom();
    w->g.initializer[w->g.n_initializer++] = tp;
    return NULL;
}

static Onnx__AttributeProto *make_attr(sy_model_writer *w, const sy_model_attr *a)
{
    Onnx__AttributeProto *p = NULL;
    switch (a->type) {
    case SY_MODEL_ATTR_INT: return tl_attr_int(&w->pl, a->name, a->i);
    case SY_MODEL_ATTR_INTS: return tl_attr_ints(&w->pl, a->name, a->ints, a->n);
    case SY_MODEL_ATTR_FLOAT:
    case SY_MODEL_ATTR_FLOATS:
    case SY_MODEL_ATTR_STRING:
        if (!(p = tl_alloc(&w->pl, sizeof *p)))
            return NULL;
        onnx__attribute_proto__init(p);
        p->name = tl_strdup(&w->pl, a->name);
        p->has_type = 1;
        p->type = (Onnx__AttributeProto__AttributeType)a->type;
        if (a->type == SY_MODEL_ATTR_FLOAT) {
            p->has_f = 1;
            p->f = a->f;
        } else if (a->type == SY_MODEL_ATTR_STRING) {
            size_t n = strlen(a->s);
            p->has_s = 1;
            p->s.len = n;
            p->s.data = tl_alloc(&w->pl, n + 1);
            if (p->s.data)
                memcpy(p->s.data, a->s, n);
        } else {
            p->n_floats = a->n;
            p->floats = tl_alloc(&w->pl, (a->n ? a->n : 1) * sizeof *p->floats);
            if (p->floats && a->n)
                memcpy(p->floats, a->floats, a->n * sizeof *p->floats);
        }
        return p;
    default: return NULL;
    }
}

SY_EXPORT sy_status *sy_model_writer_add_node(sy_model_writer *w, const char *domain, const char *op,
                                              const char *name, const char *const *inputs, size_t n_inputs,
                                              const char *const *outputs, size_t n_outputs,
                                              const sy_model_attr *attrs, size_t n_attrs)
{
    if (!w || !op || !op[0] || (n_inputs && !inputs) || (n_outputs && !outputs) || (n_attrs && !attrs))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: a node needs an op and its arrays");
    if (!n_outputs)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: node %s has no output", op);
    for (size_t i = 0; i < n_inputs; i++)
        if (!inputs[i])
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: node %s: input %zu is NULL (\"\" is absent)",
                                    op, i);
    for (size_t i = 0; i < n_outputs; i++)
        SY_TRY(need_name("node output", outputs[i]));
    for (size_t i = 0; i < n_attrs; i++) {
        const sy_model_attr *a = &attrs[i];
        bool known = a->type == SY_MODEL_ATTR_INT || a->type == SY_MODEL_ATTR_FLOAT || a->type == SY_MODEL_ATTR_STRING ||
                     a->type == SY_MODEL_ATTR_INTS || a->type == SY_MODEL_ATTR_FLOATS;
        if (!a->name || !a->name[0] || !known || (a->type == SY_MODEL_ATTR_STRING && !a->s) ||
            (a->type == SY_MODEL_ATTR_INTS && a->n && !a->ints) || (a->type == SY_MODEL_ATTR_FLOATS && a->n && !a->floats))
            return sy_status_create(SY_ERR_INVALID_ARGUMENT, "model writer: node %s: attribute %zu ('%s', type %d) is "
                                    "not a named int, float, string, ints or floats with its values", op, i,
                                    a->name ? a->name : "", a->type);
    }
    Onnx__NodeProto *n = tl_alloc(&w->pl, sizeof *n);
    if (!n)
        return oom();
    onnx__node_proto__init(n);
    n->op_type = tl_strdup(&w->pl, op);
    n->name = name ? tl_strdup(&w->pl, name) : tl_printf(&w->pl, "%s_%zu", op, w->g.n_node);
    if (domain && domain[0])
        n->domain = tl_strdup(&w->pl, domain);
    n->input = tl_alloc(&w->pl, (n_inputs ? n_inputs : 1) * sizeof *n->input);
    n->output = tl_alloc(&w->pl, n_outputs * sizeof *n->output);
    n->attribute = tl_alloc(&w->pl, (n_attrs ? n_attrs : 1) * sizeof *n->attribute);
    if (!n->input || !n->output || !n->attribute)
        return oom();
    for (size_t i = 0; i < n_inputs; i++)
        n->input[i] = tl_strdup(&w->pl, inputs[i]);
    for (size_t i = 0; i < n_outputs; i++)
        n->output[i] = tl_strdup(&w->pl, outputs[i]);
    for (size_t i = 0; i < n_attrs; i++)
        n->attribute[i] = make_attr(w, &attrs[i]);
    n->n_input = n_inputs;
    n->n_output = n_outputs;
    n->n_attribute = n_attrs;
    if (w->pl.oom || !grow(&w->pl, (void **)&w->g.node, w->g.n_node, &w->cap_node, sizeof n))
        return oom();
    w->g.node[w->g.n_node++] = n;
    return NULL;
}

SY_EXPORT sy_status *sy_model_writer_pack(const sy_model_writer *w, void **data, size_t *size)
{
    if (!w || !data || !size)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_model_writer_pack: writer, data and size are required");
    Onnx__ModelProto m = w->m;
    int64_t opset = m.opset_import[0]->version; /* the default domain, added first */
    m.has_ir_version = 1;
    m.ir_version = opset >= 21 ? 10 : opset >= 19 ? 9 : 8;
    size_t len = 0;
    uint8_t *buf = tl_pack_model(&m, &len);
    if (!buf)
        return oom();
    *data = buf;
    *size = len;
    return NULL;
}

SY_EXPORT sy_status *sy_model_writer_save(const sy_model_writer *w, const char *path)
{
    if (!path)
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "sy_model_writer_save: path is NULL");
    void *buf = NULL;
    size_t len = 0;
    SY_TRY(sy_model_writer_pack(w, &buf, &len));
    sy_status *st = tl_write_atomic(path, buf, len, NULL, 0);
    free(buf);
    return st;
}

SY_EXPORT void sy_tools_free(void *p) { free(p); }
