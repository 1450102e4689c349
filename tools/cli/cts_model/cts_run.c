/* switchyard cts: sessions of generated single-node models (public API only;
 * also used by tests/abi_stability). */
#include "cts_model.h"

#include <switchyard/sy_tools.h>

#include <stdlib.h>
#include <string.h>

sy_status *cts_session(sy_env *env, const cts_node *n, const char *name, sy_model **m, sy_session **s)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    *m = NULL;
    *s = NULL;
    if (!cts_onnx_single_node(n, &buf, &len))
        return sy_status_create(SY_ERR_INVALID_ARGUMENT, "cts: %s: the model writer refused the node", n->op);
    sy_status *st = sy_model_load_buffer(env, buf, len, name, NULL, m);
    sy_tools_free(buf);
    if (!st)
        st = sy_session_create(env, *m, NULL, s);
    if (st) {
        sy_model_release(*m);
        *m = NULL;
    }
    return st;
}

sy_status *cts_feed(sy_session *s, const cts_node *n)
{
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        sy_tensor t = {.struct_size = sizeof t};
        t.dtype = n->in[i].dtype;
        t.rank = n->in[i].rank;
        memcpy(t.dims, n->in[i].dims, sizeof t.dims);
        t.data = n->in[i].data;
        t.nbytes = n->in[i].nbytes;
        sy_status *st = sy_session_set_input_by_index(s, i, &t, SY_INPUT_COPY);
        if (st)
            return st;
    }
    return NULL;
}
