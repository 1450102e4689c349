/* switchyard run: one inference, inputs from files or a deterministic pattern. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void help(FILE *f)
{
    fprintf(f,
            "usage: switchyard run MODEL [--config INI] [--input-dir DIR | --input NAME=FILE ...]\n"
            "                     [--output-dir DIR] [--threads N] [--compiled FILE]\n"
            "                     [--requant onnx|gemmlowp|single_rounding]\n\n"
            "Runs MODEL once and prints each output's name, dtype, shape and a summary\n"
            "(top-5 for a vector).\n\n"
            "  --config INI      configuration (default: the embedded one, see docs/config.md)\n"
            "  --input-dir DIR   reads DIR/input_0.pb, input_1.pb, ... (ONNX TensorProto, or .npy)\n"
            "                    in graph input order: the ONNX test-data convention\n"
            "  --input NAME=FILE one input from a .pb or .npy file (repeatable)\n"
            "  --output-dir DIR  writes output_0.pb, ... in graph output order (TensorProto)\n"
            "  --threads N       worker threads (overrides the INI)\n"
            "  --compiled FILE   load compiled partitions from a cache of 'switchyard compile'\n"
            "  --requant FORM    requantization of the integer kernels for this session:\n"
            "                    onnx (round half to even) or gemmlowp (int32 multiplier +\n"
            "                    shift, half away from zero: TFLite Micro) or single_rounding\n"
            "                    (one rounding half up: TFLite's TFLITE_SINGLE_ROUNDING);\n"
            "                    see docs/quantization.md\n\n"
            "Inputs not given are filled with a deterministic pattern, and the tool says so.\n");
}

int cmd_run(int argc, char **argv)
{
    const char *config = NULL, *path = NULL, *out_dir = NULL, *compiled = NULL, *requant = NULL;
    cli_inputs in = {0};
    const char **pairs = calloc((size_t)argc, sizeof *pairs);
    long threads = 0;
    if (!pairs)
        return 1;
    in.pairs = pairs;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_val = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            free(pairs);
            return 0;
        } else if (!strcmp(a, "--config") && has_val) {
            config = argv[++i];
        } else if (!strcmp(a, "--input-dir") && has_val) {
            in.dir = argv[++i];
        } else if (!strcmp(a, "--input") && has_val) {
            pairs[in.n_pairs++] = argv[++i];
        } else if (!strcmp(a, "--compiled") && has_val) {
            compiled = argv[++i];
        } else if (!strcmp(a, "--requant") && has_val) {
            if (!(requant = cli_requant_arg("run", argv[++i]))) {
                free(pairs);
                return 2;
            }
        } else if (!strcmp(a, "--output-dir") && has_val) {
            out_dir = argv[++i];
        } else if (!strcmp(a, "--threads") && has_val) {
            threads = cli_parse_long(argv[++i], 1, 256);
            if (threads < 0) {
                free(pairs);
                return cli_usage_error("run", "--threads expects an integer from 1 to 256, got '%s'", argv[i]);
            }
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            free(pairs);
            return cli_usage_error("run", "unexpected argument '%s'", a);
        }
    }
    if (!path) {
        free(pairs);
        return cli_usage_error("run", "a MODEL path is required");
    }
    if (in.dir && in.n_pairs) {
        free(pairs);
        return cli_usage_error("run", "--input-dir and --input cannot be combined");
    }
    int rc = 1;
    sy_env *env = NULL;
    sy_model *m = NULL;
    sy_session *s = NULL;
    sy_status *st = cli_env(config, &env);
    if (st) {
        rc = cli_fail(st, config ? config : "default configuration");
        goto done;
    }
    if ((st = sy_model_load(env, path, &m))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    sy_session_options so = {.struct_size = sizeof so, .threads = (int32_t)threads, .strict = -1, .compiled_cache = compiled,
                             .requant = requant};
    if ((st = sy_session_create(env, m, &so, &s))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    if ((st = cli_feed_inputs(s, m, &in, stdout))) {
        rc = cli_fail(st, path);
        goto done;
    }
    if ((st = sy_session_run(s))) {
        rc = cli_fail(st, NULL);
        goto done;
    }
    if (out_dir && mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "switchyard: --output-dir %s: %s\n", out_dir, strerror(errno));
        goto done;
    }
    for (size_t i = 0; i < sy_session_output_count(s); i++) {
        const sy_tensor *t = NULL;
        if ((st = sy_session_get_output(s, i, &t))) {
            rc = cli_fail(st, NULL);
            goto done;
        }
        char label[32];
        snprintf(label, sizeof label, "output %zu", i);
        cli_print_tensor_summary(stdout, label, t);
        if (out_dir) {
            char file[4096];
            snprintf(file, sizeof file, "%s/output_%zu.pb", out_dir, i);
            if ((st = sy_tensor_write_file(file, t))) {
                rc = cli_fail(st, NULL);
                goto done;
            }
            printf("  wrote %s\n", file);
        }
    }
    rc = 0;
done:
    sy_session_release(s);
    sy_model_release(m);
    sy_env_release(env);
    free(pairs);
    return rc;
}
