/* A host built against the installed package: loads the out-of-tree plugin. */
#include <switchyard/switchyard.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    char ini[4096];
    snprintf(ini, sizeof ini, "[switchyard]\nplugin_dirs = %s\n", argv[1]);
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(ini, NULL, &env);
    if (st) {
        fprintf(stderr, "env: %s\n", sy_status_get_message(st));
        sy_status_free(st);
        return 1;
    }
    int rc = 1;
    sy_plugin_info pi = {.struct_size = sizeof pi};
    if (sy_env_plugin_count(env) == 1 && sy_env_plugin_info(env, 0, &pi) && pi.loaded && pi.name &&
        !strcmp(pi.name, "oot_hello") && sy_env_has_op(env, "com.example", "Hello", 1)) {
        printf("oot_hello loaded from %s\n", pi.path);
        rc = 0;
    } else {
        fprintf(stderr, "oot_hello not loaded: %s\n", pi.refusal ? pi.refusal : "?");
    }
    sy_env_release(env);
    return rc;
}
