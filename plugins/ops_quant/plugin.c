/*
 * ops_quant: the ONNX quantized operator family and the integer kernels of
 * the switchyard.quant domain (what the core's QDQ pass folds
 * DequantizeLinear -> op -> QuantizeLinear chains into), on cpu_ref.
 *
 * Options ([plugin.ops_quant]):
 *   requant = onnx | gemmlowp   the deployment default of the requantization
 *                               form ("onnx" by default, which the ONNX node
 *                               tests expect). Kernels read the form as the
 *                               node's `requant` attribute; in a session the
 *                               host answers for nodes without one (session >
 *                               [provider.P] requant > this key > onnx, see
 *                               framework/src/requant_form.c): this plugin
 *                               publishes the key to the host as the
 *                               extension SY_EXT_REQUANT_DEFAULT, and keeps
 *                               it for hosts that do not answer.
 *
 * The option is per environment: it lives in the state this plugin hands to
 * the host in each environment's init (ABI 1.2), never in a global.
 */
#include "quant_internal.h"

#include <stdlib.h>

const sy_host_api *H; /* process-wide: the same host table in every environment */

static void quant_release(void *state) { free(state); }

static sy_status *quant_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    H = host;
    q_env *e = calloc(1, sizeof *e);
    if (!e)
        return host->status_new(SY_ERR_OUT_OF_MEMORY, "ops_quant: out of memory");
    e->default_rq = SY_RQ_ONNX;
    const char *rq = opts ? host->option_get(opts, "requant") : NULL;
    if (rq && !sy_rq_mode_parse(rq, &e->default_rq)) {
        free(e);
        return host->status_new(SY_ERR_INVALID_CONFIG, "[plugin.ops_quant] requant = %s: expected onnx, gemmlowp or single_rounding",
                                rq);
    }
    sy_status *st = host->plugin_set_state(p, e, quant_release);
    if (st) {
        free(e);
        return st;
    }
    if (rq) {
        e->published = (sy_requant_default){sizeof e->published, sy_rq_mode_name(e->default_rq)};
        SY_TRY(host->register_extension(p, SY_EXT_REQUANT_DEFAULT, SY_EXT_REQUANT_DEFAULT_VERSION, &e->published));
    }
    void (*tables[])(const sy_op_schema **, uint32_t *, const sy_kernel_def **, uint32_t *) = {
        q_tables_qdq, q_tables_gemm, q_tables_elem, q_tables_rnn, q_tables_convt};
    for (size_t t = 0; t < sizeof tables / sizeof *tables; t++) {
        const sy_op_schema *s;
        const sy_kernel_def *k;
        uint32_t ns, nk;
        tables[t](&s, &ns, &k, &nk);
        SY_TRY(sy_register_tables(host, p, s, ns, k, nk));
    }
    return q_register_patterns(host, p);
}

static void quant_fini(void) {}

static const char *const option_keys[] = {"requant", NULL};

static const sy_plugin_desc desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "ops_quant",
    .version = "0.1.0",
    .description = "quantized ops: Quantize/DequantizeLinear, QLinearConv/MatMul, Conv/MatMulInteger, "
                   "DynamicQuantizeLinear, com.microsoft QLinearAdd/Mul/Concat, switchyard.quant integer kernels",
    .kinds = SY_PLUGIN_KIND_OPS,
    .option_keys = option_keys,
    .init = quant_init,
    .fini = quant_fini,
};

SY_PLUGIN_DEFINE(desc)
