/* ops_math internals shared between its source files. */
#ifndef SY_OPS_MATH_INTERNAL_H
#define SY_OPS_MATH_INTERNAL_H

#include "switchyard/sy_sdk.h"

/* einsum.c: Einsum schema and cpu_ref kernel */
sy_status *math_einsum_register(const sy_host_api *host, sy_plugin *p);
/* signal.c: windows, MelWeightMatrix, DFT, STFT */
sy_status *math_signal_register(const sy_host_api *host, sy_plugin *p);
/* linalg.c: Det */
sy_status *math_linalg_register(const sy_host_api *host, sy_plugin *p);

#endif
