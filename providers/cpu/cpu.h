/*
 * cpu: the fast host CPU provider. Its kernels run on XNNPACK (chosen by
 * measurement, docs/cpu.md) with intra-op threads from a pthreadpool the
 * provider instance owns; cpu_ref stays the reference and the fallback for
 * every node these kernels decline.
 */
#ifndef SY_CPU_H
#define SY_CPU_H

#include "switchyard/sy_sdk.h"

#include <pthreadpool.h>
#include <stdint.h>

/* One per provider instance (per environment): its options and its pool. */
typedef struct cpu_provider {
    uint32_t threads;     /* intra-op workers ([provider.cpu] threads) */
    pthreadpool_t pool;   /* NULL when threads == 1: work runs on the caller */
} cpu_provider;

extern const sy_host_api *cpu_host;

/* Registers the Conv kernels (cpu_conv.c). */
sy_status *cpu_conv_register(const sy_host_api *host, sy_plugin *p);

/* NCHW <-> NHWC repacking of n images of c channels x hw pixels; the f16
 * forms convert while they move (cpu_layout.c). Split over the pool. */
void cpu_nchw_to_nhwc_f32(pthreadpool_t pool, const float *src, float *dst, int64_t n, int64_t c, int64_t hw);
void cpu_nhwc_to_nchw_f32(pthreadpool_t pool, const float *src, float *dst, int64_t n, int64_t c, int64_t hw);
void cpu_nchw_f16_to_nhwc_f32(pthreadpool_t pool, const uint16_t *src, float *dst, int64_t n, int64_t c, int64_t hw);
void cpu_nhwc_f32_to_nchw_f16(pthreadpool_t pool, const float *src, uint16_t *dst, int64_t n, int64_t c, int64_t hw);

#endif
