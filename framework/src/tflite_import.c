/* Placeholder until the TFLite importer lands: detection works, import
 * says clearly that it is not available yet. */
#include "tflite_import.h"

#include <string.h>

bool sy_tflite_is_tflite(const void *data, size_t size)
{
    return size >= 8 && !memcmp((const char *)data + 4, "TFL3", 4);
}

sy_status *sy_tflite_import_file(const char *path, ir_model **out)
{
    (void)out;
    return sy_error(SY_ERR_NOT_IMPLEMENTED, "%s: TFLite models are not supported by this build yet", path);
}

sy_status *sy_tflite_import_buffer(const void *data, size_t size, const char *name, ir_model **out)
{
    (void)data;
    (void)size;
    (void)out;
    return sy_error(SY_ERR_NOT_IMPLEMENTED, "%s: TFLite models are not supported by this build yet", name);
}
