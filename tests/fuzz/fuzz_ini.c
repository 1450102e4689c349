/*
 * Fuzz target: INI text -> environment (sy_env_create_from_string). Relative
 * plugin paths resolve against the build tree's plugin folder, so the text
 * can name real plugins; whatever it names is checked (type, pin, ELF symbol
 * table) before anything is dlopen'ed.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_pin_plugins();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    sy_env *env = NULL;
    sy_status *st = sy_env_create_from_string(text, FUZZ_PLUGIN_DIR, &env);
    free(text);
    if (!st) {
        sy_env_set_logger(env, fuzz_quiet, NULL);
        (void)sy_env_provider_count(env);
        for (size_t i = 0; i < sy_env_plugin_count(env); i++) {
            sy_plugin_info pi = {.struct_size = sizeof pi};
            (void)sy_env_plugin_info(env, i, &pi);
        }
    }
    sy_status_free(st);
    sy_env_release(env);
    return 0;
}
