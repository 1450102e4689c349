/*
 * The "qdq_patterns" table (switchyard/ext/sy_qdq_patterns.h) and the tools
 * library's quantizer that reads it:
 *   table     ops_quant publishes it in the default environment; the ONNX
 *             ops of a QDQ model fold into the switchyard.quant kernels
 *             written out here by hand (Conv -> QConv, Gemm -> QMatMul, ...),
 *             every kernel it names is registered, Reshape & co. only move
 *             codes, and Softmax folds but gets no pairs from the quantizer;
 *   refusal   sy_quantize in an environment without ops_quant refuses an
 *             integer scheme (NOT_FOUND, naming the table) and writes nothing;
 *   memory    sy_quantize of graphs/tiny_cnn from a buffer with calibration
 *             tensors in memory writes the bytes it writes from the file and
 *             the folder (test_data_set_0).
 *
 *   test_qdq_patterns PLUGIN_DIR GRAPHS_DIR WORK_DIR
 */
#include <switchyard/ext/sy_qdq_patterns.h>
#include <switchyard/sy_tools.h>

#include "sy_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ok(sy_status *st, const char *what)
{
    if (st) {
        fprintf(stderr, "FAIL %s: %s: %s\n", what, sy_status_code_name(sy_status_get_code(st)),
                sy_status_get_message(st));
        sy_status_free(st);
        sy_test_failures_++;
        return false;
    }
    return true;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long len = -1;
    if (f && !fseek(f, 0, SEEK_END))
        len = ftell(f);
    if (len > 0 && !fseek(f, 0, SEEK_SET) && (b = malloc((size_t)len)) && fread(b, 1, (size_t)len, f) != (size_t)len) {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    *n = b ? (size_t)len : 0;
    return b;
}

/* what a QDQ model of these ops folds into, from ops_quant's kernels */
static const struct {
    const char *op;
    sy_qdq_fold fold;
    const char *qop;
    bool quantizer_pairs; /* the quantizer puts Q/DQ pairs around it */
    bool shares;          /* its output keeps the input's parameters */
} want[] = {
    {"Conv", SY_QDQ_FOLD_CONV, "QConv", true, false},
    {"ConvTranspose", SY_QDQ_FOLD_CONV_TRANSPOSE, "QConvTranspose", true, false}, /* Table B #113 int8 */
    {"MatMul", SY_QDQ_FOLD_MATMUL, "QMatMul", true, false},
    {"Gemm", SY_QDQ_FOLD_GEMM, "QMatMul", true, false},
    {"Add", SY_QDQ_FOLD_BINARY, "QAdd", true, false},
    {"Sub", SY_QDQ_FOLD_BINARY, "QSub", true, false},
    {"Mul", SY_QDQ_FOLD_BINARY, "QMul", true, false},
    {"Concat", SY_QDQ_FOLD_CONCAT, "QConcat", true, false},
    {"RNN", SY_QDQ_FOLD_RNN, "QRNN", false, false},
    {"MaxPool", SY_QDQ_FOLD_POOL, "QMaxPool", true, true},
    {"GlobalMaxPool", SY_QDQ_FOLD_POOL, "QMaxPool", true, true},
    {"AveragePool", SY_QDQ_FOLD_POOL, "QAveragePool", true, false},
    {"GlobalAveragePool", SY_QDQ_FOLD_POOL, "QAveragePool", true, false},
    {"Relu", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"Clip", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"Sigmoid", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"Tanh", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"LeakyRelu", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"HardSigmoid", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"HardSwish", SY_QDQ_FOLD_LUT, "QUnary", true, false},
    {"Softmax", SY_QDQ_FOLD_SOFTMAX, "QSoftmax", false, false},
    {"LogSoftmax", SY_QDQ_FOLD_SOFTMAX, "QLogSoftmax", true, false},
    {"BatchNormalization", SY_QDQ_FOLD_FLOAT, "QNorm", true, false},
    {"LayerNormalization", SY_QDQ_FOLD_FLOAT, "QNorm", true, false},
    {"LpNormalization", SY_QDQ_FOLD_FLOAT, "QNorm", true, false},
    /* DQ -> PRelu / Pow -> Q (ops-mcu.md Table B #57, #116); the quantizer pairs them */
    {"PRelu", SY_QDQ_FOLD_BINARY, "QPRelu", true, false},
    {"Pow", SY_QDQ_FOLD_BINARY, "QPow", true, false},
    /* folded from a model's DQ -> f -> Q; the quantizer keeps them float */
    {"Abs", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Ceil", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Floor", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Round", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Exp", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Log", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Sqrt", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Neg", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Sin", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Cos", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Tan", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Erf", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Elu", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Celu", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Selu", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"ThresholdedRelu", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Softsign", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Softplus", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Gelu", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Swish", SY_QDQ_FOLD_LUT, "QUnary", false, false},
    {"Reshape", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Flatten", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Squeeze", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Unsqueeze", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Transpose", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Slice", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Identity", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
    {"Pad", SY_QDQ_FOLD_PASSTHROUGH, NULL, true, true},
};

static void test_table(const char *plugin_dir)
{
    char ini[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n", plugin_dir);
    sy_env *env = NULL;
    if (!ok(sy_env_create_from_string(ini, NULL, &env), "env"))
        return;
    const sy_qdq_patterns *t = sy_get_extension(env, SY_QDQ_PATTERNS_EXTENSION, SY_QDQ_PATTERNS_VERSION);
    CHECK(t != NULL, "no loaded plugin publishes %s version %u", SY_QDQ_PATTERNS_EXTENSION, SY_QDQ_PATTERNS_VERSION);
    if (t) {
        CHECK(t->struct_size >= sizeof *t && t->pattern_size == sizeof(sy_qdq_pattern), "struct sizes %u, %u",
              t->struct_size, t->pattern_size);
        CHECK(t->domain && !strcmp(t->domain, "switchyard.quant"), "domain '%s'", t->domain ? t->domain : "(null)");
        /* the default-domain rows below, plus the qti_aisw StatefulGRU and StatefulLSTM rows */
        CHECK(t->n_patterns == sizeof want / sizeof *want + 2, "%u patterns, expected %zu", t->n_patterns,
              sizeof want / sizeof *want + 2);
        const sy_qdq_pattern *l = sy_qdq_find_in(t, "qti_aisw", "StatefulLSTM");
        CHECK(l && l->fold == SY_QDQ_FOLD_STATEFUL_LSTM && l->qop && !strcmp(l->qop, "QStatefulLSTM") &&
                  !strcmp(sy_qdq_qop_domain(t, l), "qti_aisw") && !(l->flags & SY_QDQ_QUANTIZE) &&
                  sy_env_has_op(env, "qti_aisw", "QStatefulLSTM", 1),
              "qti_aisw StatefulLSTM: no fold into a registered qti_aisw QStatefulLSTM without quantizer pairs");
        const sy_qdq_pattern *g = sy_qdq_find_in(t, "qti_aisw", "StatefulGRU");
        CHECK(g && g->fold == SY_QDQ_FOLD_STATEFUL_GRU && g->qop && !strcmp(g->qop, "QStatefulGRU") &&
                  !strcmp(sy_qdq_qop_domain(t, g), "qti_aisw") && !(g->flags & SY_QDQ_QUANTIZE),
              "qti_aisw StatefulGRU: no fold into qti_aisw QStatefulGRU without quantizer pairs");
        CHECK(g && sy_env_has_op(env, "qti_aisw", "QStatefulGRU", 1), "qti_aisw.QStatefulGRU is not registered");
        CHECK(!sy_qdq_find(t, "StatefulGRU"), "a default-domain StatefulGRU must not match the qti_aisw row");
        for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
            const sy_qdq_pattern *p = sy_qdq_find(t, want[i].op);
            CHECK(p != NULL, "%s: no pattern", want[i].op);
            if (!p)
                continue;
            CHECK(p->fold == (uint32_t)want[i].fold, "%s: fold %u, expected %d", want[i].op, p->fold, want[i].fold);
            CHECK((p->qop == NULL) == (want[i].qop == NULL) && (!p->qop || !strcmp(p->qop, want[i].qop)),
                  "%s: kernel %s, expected %s", want[i].op, p->qop ? p->qop : "(none)",
                  want[i].qop ? want[i].qop : "(none)");
            CHECK(!p->qop || sy_env_has_op(env, t->domain, p->qop, 1), "%s: kernel %s.%s is not registered",
                  want[i].op, t->domain, p->qop);
            CHECK(!!(p->flags & SY_QDQ_QUANTIZE) == want[i].quantizer_pairs, "%s: quantizer pairs %d", want[i].op,
                  !!(p->flags & SY_QDQ_QUANTIZE));
            CHECK(!!(p->flags & SY_QDQ_SHARES_PARAMS) == want[i].shares, "%s: shares parameters %d", want[i].op,
                  !!(p->flags & SY_QDQ_SHARES_PARAMS));
        }
        CHECK(sy_qdq_find(t, "Softmax") && !(sy_qdq_find(t, "Softmax")->flags & SY_QDQ_QUANTIZE),
              "Softmax: the quantizer must not put pairs around it");
        CHECK(!sy_qdq_find(t, "Resize") && !sy_qdq_find(t, "DequantizeLinear"), "ops without a kernel have a pattern");
    }
    sy_env_release(env);
}

static void test_refusal(const char *plugin_dir, const char *graphs, const char *work)
{
    char ini[2048], model[1024], calib[1024], out[1024];
    snprintf(ini, sizeof ini,
             /* one plugin a line: the INI reader's lines are short, the build path may be long */
             "[switchyard]\nplugins = %s/libsy_cpu_ref.so\nplugins = %s/libsy_quant_int8.so\nplugins = %s/libsy_ops_nn.so\n",
             plugin_dir,
             plugin_dir, plugin_dir);
    snprintf(model, sizeof model, "%s/tiny_cnn.onnx", graphs);
    snprintf(calib, sizeof calib, "%s/tiny_cnn", graphs);
    snprintf(out, sizeof out, "%s/refused.onnx", work);
    remove(out);
    sy_env *env = NULL;
    if (!ok(sy_env_create_from_string(ini, NULL, &env), "env without ops_quant"))
        return;
    CHECK(!sy_get_extension(env, SY_QDQ_PATTERNS_EXTENSION, SY_QDQ_PATTERNS_VERSION), "the table without ops_quant");
    sy_calib_source cs = {.struct_size = sizeof cs, .dir = calib};
    sy_status *st = sy_quantize(env, model, NULL, 0, NULL, &cs, out, NULL);
    CHECK(st && sy_status_get_code(st) == SY_ERR_NOT_FOUND && strstr(sy_status_get_message(st), "qdq_patterns"),
          "without ops_quant: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
    FILE *f = fopen(out, "rb");
    CHECK(!f, "a refused run wrote %s", out);
    if (f)
        fclose(f);
    sy_env_release(env);
}

static void test_memory(const char *plugin_dir, const char *graphs, const char *work)
{
    char ini[1024], model[1024], calib[1024], in0[1100], a[1024], b[1024];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n", plugin_dir);
    snprintf(model, sizeof model, "%s/tiny_cnn.onnx", graphs);
    snprintf(calib, sizeof calib, "%s/tiny_cnn/test_data_set_0", graphs);
    snprintf(in0, sizeof in0, "%s/input_0.npy", calib);
    snprintf(a, sizeof a, "%s/from_files.onnx", work);
    snprintf(b, sizeof b, "%s/from_memory.onnx", work);
    sy_env *env = NULL;
    sy_tensor *x = NULL;
    size_t mlen = 0, na = 0, nb = 0;
    uint8_t *mbuf = slurp(model, &mlen), *fa = NULL, *fb = NULL;
    CHECK(mbuf != NULL, "cannot read %s", model);
    if (!mbuf || !ok(sy_env_create_from_string(ini, NULL, &env), "env") || !ok(sy_tensor_read_file(in0, &x), in0))
        goto done;
    sy_quantize_options o = {.struct_size = sizeof o, .scheme = "int8", .per_channel = 1};
    sy_calib_source from_dir = {.struct_size = sizeof from_dir, .dir = calib};
    const sy_tensor *const samples[1] = {x};
    sy_calib_source from_mem = {.struct_size = sizeof from_mem, .tensors = samples, .n_samples = 1};
    sy_quantize_report ra = {.struct_size = sizeof ra}, rb = {.struct_size = sizeof rb};
    if (!ok(sy_quantize(env, model, NULL, 0, &o, &from_dir, a, &ra), "from files") ||
        !ok(sy_quantize(env, NULL, mbuf, mlen, &o, &from_mem, b, &rb), "from memory"))
        goto done;
    fa = slurp(a, &na);
    fb = slurp(b, &nb);
    CHECK(fa && fb && na == nb && !memcmp(fa, fb, na), "%s (%zu bytes) and %s (%zu bytes) differ", a, na, b, nb);
    CHECK(ra.n_samples == 1 && rb.n_samples == 1 && ra.output_bytes == na && rb.output_bytes == nb && ra.opset == 13,
          "reports: %zu/%zu samples, %zu/%zu bytes, opset %lld", ra.n_samples, rb.n_samples, ra.output_bytes,
          rb.output_bytes, (long long)ra.opset);
    CHECK(ra.evaluated && ra.argmax_compared == 1 && ra.argmax_agree == 1, "tiny_cnn int8: argmax %zu/%zu",
          ra.argmax_agree, ra.argmax_compared);
    printf("tiny_cnn int8 per-channel: %zu bytes from files and from memory, relative error %.4g\n", na,
           ra.relative_error);
    /* a NULL tensor among the samples is refused by name */
    const sy_tensor *const holes[1] = {NULL};
    sy_calib_source bad = {.struct_size = sizeof bad, .tensors = holes, .n_samples = 1};
    sy_status *st = sy_quantize(env, NULL, mbuf, mlen, &o, &bad, b, NULL);
    CHECK(st && sy_status_get_code(st) == SY_ERR_INVALID_ARGUMENT && strstr(sy_status_get_message(st), "is NULL"),
          "a NULL calibration tensor: %s", st ? sy_status_get_message(st) : "accepted");
    sy_status_free(st);
done:
    free(fa);
    free(fb);
    free(mbuf);
    sy_tensor_free(x);
    sy_env_release(env);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PLUGIN_DIR GRAPHS_DIR WORK_DIR\n", argv[0]);
        return 2;
    }
    test_table(argv[1]);
    test_refusal(argv[1], argv[2], argv[3]);
    test_memory(argv[1], argv[2], argv[3]);
    printf("%s\n", sy_test_failures_ ? "FAILED" : "qdq_patterns: all checks passed");
    return sy_test_failures_ != 0;
}
