/* switchyard cts: single-node ONNX models, built in memory with the tools
 * library's model writer (switchyard/sy_tools.h). */
#include "cts_model.h"

#include <switchyard/sy_tools.h>

#include <stdio.h>
#include <string.h>

#define TRY(x)                                                                                                     \
    do {                                                                                                           \
        sy_status *st_ = (x);                                                                                      \
        if (st_)                                                                                                   \
            return st_;                                                                                            \
    } while (0)

static sy_status *build(const cts_node *n, sy_model_writer *w)
{
    char in_names[CTS_MAX_IO][16], out_names[CTS_MAX_IO][16]; /* room for any uint32_t: GCC -Wformat-truncation */
    const char *ins[CTS_MAX_IO], *outs[CTS_MAX_IO];
    sy_model_attr attrs[CTS_MAX_ATTRS];
    if (n->domain && n->domain[0])
        TRY(sy_model_writer_add_opset(w, n->domain, 1));
    TRY(sy_model_writer_set_producer(w, "switchyard cts"));
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        snprintf(in_names[i], sizeof in_names[i], "in%u", i);
        ins[i] = in_names[i];
        TRY(sy_model_writer_add_input(w, ins[i], n->in[i].dtype, n->in[i].rank, n->in[i].dims));
    }
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        snprintf(out_names[i], sizeof out_names[i], "out%u", i);
        outs[i] = out_names[i];
        /* graph outputs: the type is left to shape inference */
        TRY(sy_model_writer_add_output(w, outs[i], SY_DT_UNDEFINED, -1, NULL));
    }
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        memset(&attrs[a], 0, sizeof attrs[a]);
        attrs[a].name = n->attrs[a].name;
        attrs[a].type = n->attrs[a].kind == CTS_ATTR_INT ? SY_MODEL_ATTR_INT : SY_MODEL_ATTR_FLOAT;
        attrs[a].i = n->attrs[a].i;
        attrs[a].f = n->attrs[a].f;
    }
    return sy_model_writer_add_node(w, n->domain, n->op, "node", ins, n->n_inputs, outs, n->n_outputs, attrs,
                                    n->n_attrs);
}

bool cts_onnx_single_node(const cts_node *n, uint8_t **buf, size_t *len)
{
    sy_model_writer *w = NULL;
    void *data = NULL;
    sy_status *st = sy_model_writer_create(n->opset, &w);
    if (!st)
        st = build(n, w);
    if (!st)
        st = sy_model_writer_pack(w, &data, len);
    sy_model_writer_release(w);
    if (st) {
        fprintf(stderr, "switchyard cts: %s: %s\n", n->op, sy_status_get_message(st));
        sy_status_free(st);
        return false;
    }
    *buf = data;
    return true;
}
