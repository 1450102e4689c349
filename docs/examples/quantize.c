/* Quantize a model with libswitchyard_tools: quantize MODEL CALIB_DIR OUT.onnx [SCHEME] */
#include <switchyard/sy_tools.h>
#include <stdio.h>

static int failed(sy_status *st)
{
    if (st)
        fprintf(stderr, "%s: %s\n", sy_status_code_name(sy_status_get_code(st)), sy_status_get_message(st));
    sy_status_free(st);
    return st != NULL;
}

int main(int argc, char **argv)
{
    sy_env *env = NULL;
    if (argc != 4 && argc != 5)
        return fprintf(stderr, "usage: %s MODEL CALIB_DIR OUT.onnx [SCHEME]\n", argv[0]), 2;
    sy_quantize_options opts = {.struct_size = sizeof opts, .scheme = argc == 5 ? argv[4] : "int8"};
    sy_calib_source calib = {.struct_size = sizeof calib, .dir = argv[2]};
    sy_quantize_report r = {.struct_size = sizeof r};
    int rc = failed(sy_env_create(NULL, &env)) /* the plugins provide the scheme and run the calibration */
             || failed(sy_quantize(env, argv[1], NULL, 0, &opts, &calib, argv[3], &r));
    if (!rc)
        printf("%s: %zu bytes, opset %lld, %zu samples, relative error %.4g, argmax %zu/%zu\n", argv[3],
               r.output_bytes, (long long)r.opset, r.n_samples, r.relative_error, r.argmax_agree, r.argmax_compared);
    sy_env_release(env);
    return rc;
}
