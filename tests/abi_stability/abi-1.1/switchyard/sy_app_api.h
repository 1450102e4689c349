/*
 * The application API as a function table, for extension plugins (such as
 * the LLM runtime) that drive models and sessions exactly as a host
 * application does. A plugin gets it from sy_host_api.app; it never links
 * libswitchyard. Every entry has the semantics of the function of the same
 * name in switchyard.h. Part of ABI v1: append-only.
 */
#ifndef SWITCHYARD_SY_APP_API_H
#define SWITCHYARD_SY_APP_API_H

#include "sy_app_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sy_env;
struct sy_model;
struct sy_session;
struct sy_session_options;
struct sy_value_info;

typedef struct sy_app_api {
    uint32_t struct_size;
    /* models */
    sy_status *(*model_load)(struct sy_env *env, const char *path, struct sy_model **out);
    sy_status *(*model_load_buffer)(struct sy_env *env, const void *data, size_t size, const char *name,
                                    const char *base_dir, struct sy_model **out);
    void (*model_release)(struct sy_model *m);
    size_t (*model_input_count)(const struct sy_model *m);
    size_t (*model_output_count)(const struct sy_model *m);
    bool (*model_input_info)(const struct sy_model *m, size_t i, struct sy_value_info *out);
    bool (*model_output_info)(const struct sy_model *m, size_t i, struct sy_value_info *out);
    /* sessions */
    sy_status *(*session_create)(struct sy_env *env, const struct sy_model *m, const struct sy_session_options *o,
                                 struct sy_session **out);
    void (*session_release)(struct sy_session *s);
    sy_status *(*session_set_input)(struct sy_session *s, const char *name, const sy_tensor *t, int mode);
    sy_status *(*session_set_input_by_index)(struct sy_session *s, size_t index, const sy_tensor *t, int mode);
    sy_status *(*session_run)(struct sy_session *s);
    sy_status *(*session_get_output)(struct sy_session *s, size_t index, const sy_tensor **out);
    sy_status *(*session_get_output_by_name)(struct sy_session *s, const char *name, const sy_tensor **out);
    void (*session_reset)(struct sy_session *s);
    /* tensors */
    sy_status *(*tensor_read_file)(const char *path, sy_tensor **out);
    sy_status *(*tensor_write_file)(const char *path, const sy_tensor *t);
    void (*tensor_free)(sy_tensor *t);
} sy_app_api;

#ifdef __cplusplus
}
#endif
#endif
