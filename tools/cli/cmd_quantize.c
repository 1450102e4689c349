/*
 * switchyard quantize MODEL --calib DIR [--scheme NAME] [--per-channel]
 *                     [--method minmax|percentile] [--percentile P] -o OUT.onnx
 *
 * The command over sy_quantize (libswitchyard_tools, switchyard/sy_tools.h):
 * its arguments, a progress bar, and the report printed.
 */
#include "cli.h"

#include <switchyard/sy_tools.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the header line, then a bar per phase on stderr */
static void progress(void *user, const char *phase, size_t done, size_t total, const char *message)
{
    (void)user;
    if (message) {
        fprintf(stderr, "%s\n", message);
        return;
    }
    if (total < 2)
        return;
    int width = 30, fill = (int)(width * done / total);
    fprintf(stderr, "\r%s [", phase);
    for (int i = 0; i < width; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %zu/%zu", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard quantize MODEL --calib DIR [--scheme NAME] [--per-channel]\n"
            "                           [--method minmax|percentile] [--percentile P]\n"
            "                           [--config INI] -o OUT.onnx\n\n"
            "Post-training static quantization: runs the float MODEL over the calibration\n"
            "inputs, chooses scales and zero points with the scheme's observer, and writes\n"
            "a QDQ ONNX model (QuantizeLinear/DequantizeLinear pairs, quantized weights,\n"
            "int32 biases) that other ONNX runtimes load. Switchyard folds it into integer\n"
            "kernels at load. Ends with an accuracy report against fp32 on the calibration\n"
            "set: max abs error, relative error (||q - f|| / ||f||) and argmax agreement.\n\n"
            "  --calib DIR      folders with input_0.pb ... (or input_N.npy), e.g. the\n"
            "                   test_data_set_* of an ONNX model; DIR itself may be one;\n"
            "                   or .npy files, one sample each, for a one-input model\n"
            "  --scheme NAME    a recipe a quant_* plugin publishes: int8 (default), uint8,\n"
            "                   int16x8 ('switchyard plugins' lists quant_recipe.NAME)\n"
            "  --per-channel    weights per output channel (symmetric), bias per channel\n"
            "  --method M       activation observer: minmax (default) or percentile\n"
            "  --percentile P   percentile of the percentile method (default 99.99)\n"
            "  -o OUT.onnx      written through a temporary file and a rename\n");
}

int cmd_quantize(int argc, char **argv)
{
    const char *model_path = NULL, *calib = NULL, *scheme = "int8", *out_path = NULL, *config = NULL;
    bool per_channel = false;
    long block_size = 0; /* --block-size; 0: the recipe's */
    int observer = SY_QUANTIZE_MINMAX;
    double pct = 99.99;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool v = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return 0;
        } else if (!strcmp(a, "--calib") && v) {
            calib = argv[++i];
        } else if (!strcmp(a, "--scheme") && v) {
            scheme = argv[++i];
        } else if (!strcmp(a, "--per-channel")) {
            per_channel = true;
        } else if (!strcmp(a, "--block-size") && v) {
            if ((block_size = cli_parse_long(argv[++i], 2, 65536)) < 0)
                return cli_usage_error("quantize", "--block-size expects an integer from 2 to 65536, got '%s'",
                                       argv[i]);
        } else if (!strcmp(a, "--method") && v) {
            const char *m = argv[++i];
            if (!strcmp(m, "minmax"))
                observer = SY_QUANTIZE_MINMAX;
            else if (!strcmp(m, "percentile"))
                observer = SY_QUANTIZE_PERCENTILE;
            else
                return cli_usage_error("quantize", "--method expects minmax or percentile, got '%s'", m);
        } else if (!strcmp(a, "--percentile") && v) {
            char *end;
            pct = strtod(argv[++i], &end);
            if (*end || !(pct > 50.0 && pct <= 100.0))
                return cli_usage_error("quantize", "--percentile expects a number in (50, 100], got '%s'", argv[i]);
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v) {
            out_path = argv[++i];
        } else if (!strcmp(a, "--config") && v) {
            config = argv[++i];
        } else if (a[0] != '-' && !model_path) {
            model_path = a;
        } else {
            return cli_usage_error("quantize", "unexpected argument '%s'", a);
        }
    }
    if (!model_path || !calib || !out_path)
        return cli_usage_error("quantize", "MODEL, --calib DIR and -o OUT.onnx are required");

    sy_env *env = NULL;
    sy_status *st = cli_env(config, &env);
    if (st)
        return cli_fail(st, "quantize");
    sy_quantize_options o = {.struct_size = sizeof o,
                             .scheme = scheme,
                             .per_channel = per_channel,
                             .block_size = (int32_t)block_size,
                             .observer = observer,
                             .percentile = pct,
                             .progress = progress};
    sy_calib_source cs = {.struct_size = sizeof cs, .dir = calib};
    sy_quantize_report r = {.struct_size = sizeof r};
    st = sy_quantize(env, model_path, NULL, 0, &o, &cs, out_path, &r);
    if (r.output_bytes) {
        if (r.weight_only && r.block_size > 0)
            printf("%zu weight tensors as int4 blocks of %d (DequantizeLinear-21, block_size %d)\n", r.weight_tensors,
                   (int)r.block_size, (int)r.block_size);
        else if (r.weight_only)
            printf("%zu weight tensors stored as float16 (Cast to float)\n", r.weight_tensors);
        printf("wrote %s: %zu bytes (the float model: %zu bytes), opset %lld\n", out_path, r.output_bytes,
               r.input_bytes, (long long)r.opset);
    }
    if (!st && r.evaluated) {
        printf("accuracy against fp32 on %zu calibration sample%s:\n", r.n_samples, r.n_samples == 1 ? "" : "s");
        printf("  max abs error   %.6g\n", r.max_abs_error);
        printf("  relative error  %.6g (||q - f|| / ||f|| over all outputs)\n", r.relative_error);
        printf("  argmax agrees   %zu/%zu (output 0)\n", r.argmax_agree, r.argmax_compared);
    }
    sy_env_release(env);
    return st ? cli_fail(st, "quantize") : 0;
}
