/* Run a model once with libswitchyard: embed MODEL INPUT(.npy|.pb) */
#include <switchyard/switchyard.h>
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
    sy_model *model = NULL;
    sy_session *s = NULL;
    sy_tensor *in = NULL;
    const sy_tensor *out = NULL;
    if (argc != 3)
        return fprintf(stderr, "usage: %s MODEL INPUT\n", argv[0]), 2;
    int rc = failed(sy_env_create(NULL, &env)) /* NULL: embedded default config */
             || failed(sy_model_load(env, argv[1], &model))
             || failed(sy_session_create(env, model, NULL, &s))
             || failed(sy_tensor_read_file(argv[2], &in))
             || failed(sy_session_set_input_by_index(s, 0, in, SY_INPUT_BORROW))
             || failed(sy_session_run(s))
             || failed(sy_session_get_output(s, 0, &out));
    for (int64_t i = 0; !rc && out->dtype == SY_DT_FLOAT32 && i < sy_tensor_numel(out); i++)
        printf("%s[%lld] = %.6g\n", out->name, (long long)i, (double)((const float *)out->data)[i]);
    sy_session_release(s); /* sessions first, then the model, then the env */
    sy_model_release(model);
    sy_env_release(env);
    sy_tensor_free(in);
    return rc;
}
