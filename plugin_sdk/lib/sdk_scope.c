/* sy_sdk: run fp32 kernels on f16/bf16/f64 tensors through fp32 shadows. */
#include "switchyard/sy_sdk.h"

static bool needs_shadow(sy_dtype dt) { return dt == SY_DT_FLOAT16 || dt == SY_DT_BFLOAT16 || dt == SY_DT_FLOAT64; }

static size_t shadow_bytes(const sy_tensor *t)
{
    if (!t || !needs_shadow(t->dtype))
        return 0;
    int64_t n = sy_tensor_numel(t);
    if (n < 0)
        n = 0;
    return ((size_t)n * sizeof(float) + 63u) & ~(size_t)63u;
}

size_t sy_f32_scope_bytes(const sy_host_api *host, const sy_node *n)
{
    size_t total = 0;
    uint32_t ni = host->node_num_inputs(n), no = host->node_num_outputs(n);
    for (uint32_t i = 0; i < ni; i++)
        total += shadow_bytes(host->node_input(n, i));
    for (uint32_t o = 0; o < no; o++)
        total += shadow_bytes(host->node_output(n, o));
    return total;
}

sy_status *sy_run_as_f32(const sy_host_api *host, void *state, const sy_kernel_io *io, sy_run_fn fn)
{
    bool any = false;
    for (uint32_t i = 0; i < io->n_inputs; i++)
        any |= io->inputs[i] && needs_shadow(io->inputs[i]->dtype);
    for (uint32_t o = 0; o < io->n_outputs; o++)
        any |= io->outputs[o] && needs_shadow(io->outputs[o]->dtype);
    if (!any)
        return fn(state, io);
    if (io->n_inputs > SY_SCOPE_MAX_IO || io->n_outputs > SY_SCOPE_MAX_IO)
        return host->status_new(SY_ERR_UNSUPPORTED, "fp32 scope supports at most %d inputs/outputs", SY_SCOPE_MAX_IO);
    sy_tensor tin[SY_SCOPE_MAX_IO], tout[SY_SCOPE_MAX_IO];
    const sy_tensor *pin[SY_SCOPE_MAX_IO];
    sy_tensor *pout[SY_SCOPE_MAX_IO];
    size_t need = 0;
    for (uint32_t i = 0; i < io->n_inputs; i++)
        need += shadow_bytes(io->inputs[i]);
    for (uint32_t o = 0; o < io->n_outputs; o++)
        need += shadow_bytes(io->outputs[o]);
    if (need > io->scratch_bytes || (need && !io->scratch))
        return host->status_new(SY_ERR_INTERNAL, "fp32 scope needs %zu scratch bytes, %zu were planned", need,
                                io->scratch_bytes);
    char *cur = io->scratch;
    for (uint32_t i = 0; i < io->n_inputs; i++) {
        const sy_tensor *t = io->inputs[i];
        if (!t || !needs_shadow(t->dtype)) {
            pin[i] = t;
            continue;
        }
        tin[i] = *t;
        tin[i].dtype = SY_DT_FLOAT32;
        tin[i].data = cur;
        size_t ne = (size_t)sy_tensor_numel(t);
        tin[i].nbytes = ne * sizeof(float);
        pin[i] = &tin[i];
        if (!ne)
            continue; /* empty: no shadow, and no offset from a NULL scratch */
        sy_convert(t->data, t->dtype, cur, SY_DT_FLOAT32, ne);
        cur += shadow_bytes(t);
    }
    for (uint32_t o = 0; o < io->n_outputs; o++) {
        sy_tensor *t = io->outputs[o];
        if (!t || !needs_shadow(t->dtype)) {
            pout[o] = t;
            continue;
        }
        tout[o] = *t;
        tout[o].dtype = SY_DT_FLOAT32;
        tout[o].data = cur;
        tout[o].nbytes = (size_t)sy_tensor_numel(t) * sizeof(float);
        pout[o] = &tout[o];
        if (!tout[o].nbytes)
            continue;
        cur += shadow_bytes(t);
    }
    sy_kernel_io sio = *io;
    sio.inputs = pin;
    sio.outputs = pout;
    sio.scratch = need ? cur : io->scratch;
    sio.scratch_bytes = io->scratch_bytes - need;
    sy_status *st = fn(state, &sio);
    if (st)
        return st;
    for (uint32_t o = 0; o < io->n_outputs; o++) {
        sy_tensor *t = io->outputs[o];
        if (t && needs_shadow(t->dtype))
            sy_convert(tout[o].data, SY_DT_FLOAT32, t->data, t->dtype, (size_t)sy_tensor_numel(t));
    }
    return NULL;
}
