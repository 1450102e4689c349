/* ops_tensor internals shared between its source files. */
#ifndef SY_OPS_TENSOR_INTERNAL_H
#define SY_OPS_TENSOR_INTERNAL_H

#include "switchyard/sy_sdk.h"

/* index.c: Scatter*, GatherND, OneHot, Trilu, ReverseSequence, Unique,
 * NonZero, Compress (schemas and cpu_ref kernels) */
sy_status *tensor_index_register(const sy_host_api *host, sy_plugin *p);
/* cache.c: TensorScatter */
sy_status *tensor_cache_register(const sy_host_api *host, sy_plugin *p);
/* optional.c: OptionalHasElement, OptionalGetElement on tensors and omitted inputs */
sy_status *tensor_optional_register(const sy_host_api *host, sy_plugin *p);

/* cast_string.c: Cast / CastLike to and from string tensors */
bool cast_string_supported(sy_dtype from, sy_dtype to);
sy_status *cast_string_run(const sy_host_api *host, const sy_kernel_io *io);

#endif
