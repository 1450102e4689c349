/*
 * cpu: the fast host CPU provider (issue 17). It comes before cpu_ref in
 * the default priority (every non-emulator provider, the fallback last) and
 * takes the nodes its kernels accept; cpu_ref runs the rest. Options live in
 * the provider instance (one per environment), never in process globals:
 *   [provider.cpu] threads = N   intra-op workers, 1 to 256; absent: each
 *   session's own thread count (sy_session_options.threads / --threads /
 *   [switchyard] threads), a pool per session made at session_begin
 *   isa = auto | avx512 | avx2 | portable   the path of the hand-written code
 *   (layout changes, fp16 conversion, the integer convolutions); auto picks
 *   from the CPU at run time; avx512 (F/BW/VL + VNNI) only changes the
 *   integer convolutions, everything else runs its AVX2 form there
 *   int8_conv = own | xnnpack   QConv on the provider's kernel (cpu_q8conv.c) or XNNPACK
 *   fuse_bn, fuse_activation, nhwc_chains = true/false   the graph
 *   optimizations of cpu_chain.c, each switchable off for comparison
 * The pools are made at create or session_begin, so no thread is started
 * on the run path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE (before any system header) */
#endif
#include "cpu.h"
#include "cpu_pool.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xnnpack.h>

const sy_host_api *cpu_host; /* process-wide: the same host table in every environment */

static const sy_memory_domain_def host_domain = {
    .struct_size = sizeof(sy_memory_domain_def),
    .name = "host", /* the same domain as cpu_ref: no copies between them */
    .alignment = 64,
    .capacity = 0,
    .host_visible = true,
};

static const char *const provider_keys[] = {"threads", "isa", "fuse_bn", "fuse_activation", "nhwc_chains", "int8_conv", NULL};

static sy_status *bool_option(const sy_options *opts, const char *key, bool *out)
{
    const char *v = cpu_host->option_get(opts, key);
    *out = true;
    if (!v)
        return NULL;
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i]))
            return NULL;
        if (!strcasecmp(v, no[i])) {
            *out = false;
            return NULL;
        }
    }
    return cpu_host->status_new(SY_ERR_INVALID_CONFIG, "[provider.cpu] %s = %s: expected true or false", key, v);
}

/* our pool when XNNPACK's calls reach it (cpu_pool.c), else libpthreadpool's */
static bool pool_start(uint32_t threads, pthreadpool_t *pool, bool *own)
{
    *own = cpu_pool_probe();
    *pool = *own ? (pthreadpool_t)(void *)cpu_pool_create(threads) : pthreadpool_create((size_t)threads);
    return *pool != NULL;
}

static void pool_stop(pthreadpool_t pool, bool own)
{
    if (pool && own)
        cpu_pool_destroy((cpu_pool *)(void *)pool);
    else if (pool)
        pthreadpool_destroy(pool);
}

static sy_status *cpu_create(const sy_options *opts, void **state)
{
    const char *t = cpu_host->option_get(opts, "threads");
    long threads = 1;
    if (t) {
        char *end;
        errno = 0;
        threads = strtol(t, &end, 10);
        if (errno || end == t || *end || threads < 1 || threads > 256)
            return cpu_host->status_new(SY_ERR_INVALID_CONFIG,
                                        "[provider.cpu] threads = %s: expected an integer from 1 to 256", t);
    }
    cpu_provider *p = calloc(1, sizeof *p);
    if (!p)
        return cpu_host->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    sy_status *st = bool_option(opts, "fuse_bn", &p->fuse_bn);
    if (!st)
        st = bool_option(opts, "fuse_activation", &p->fuse_activation);
    if (!st)
        st = bool_option(opts, "nhwc_chains", &p->nhwc_chains);
    if (st) {
        free(p);
        return st;
    }
    const char *i8 = cpu_host->option_get(opts, "int8_conv");
    p->own_q8conv = !i8 || !strcmp(i8, "own");
    if (i8 && !p->own_q8conv && strcmp(i8, "xnnpack")) {
        free(p);
        return cpu_host->status_new(SY_ERR_INVALID_CONFIG, "[provider.cpu] int8_conv = %s: expected own or xnnpack",
                                    i8);
    }
    p->threads = (uint32_t)threads;
    p->threads_set = t != NULL;
    /* isa: the path of the hand-written code; auto = the best this CPU runs */
    cpu_isa best = cpu_isa_detect();
    const char *isa = cpu_host->option_get(opts, "isa");
    p->isa = (int)best;
    if (isa && !strcmp(isa, "portable")) {
        p->isa = CPU_ISA_PORTABLE;
    } else if (isa && !strcmp(isa, "avx2")) {
        if (best < CPU_ISA_AVX2) {
            free(p);
            return cpu_host->status_new(SY_ERR_INVALID_CONFIG,
                                        "[provider.cpu] isa = avx2: this CPU lacks AVX2 or F16C (use auto or portable)");
        }
        p->isa = CPU_ISA_AVX2; /* also on an AVX-512 CPU: the AVX2 kernels, for comparison */
    } else if (isa && !strcmp(isa, "avx512")) {
        if (best < CPU_ISA_AVX512) {
            free(p);
            return cpu_host->status_new(SY_ERR_INVALID_CONFIG,
                                        "[provider.cpu] isa = avx512: this CPU lacks AVX-512 F/BW/VL or VNNI "
                                        "(use auto, avx2 or portable)");
        }
    } else if (isa && strcmp(isa, "auto")) {
        free(p);
        return cpu_host->status_new(SY_ERR_INVALID_CONFIG,
                                    "[provider.cpu] isa = %s: expected auto, avx512, avx2 or portable", isa);
    }
    p->vbmi = p->isa >= CPU_ISA_AVX512 && cpu_has_vbmi(); /* once, after a forced isa */
    if (threads > 1 && !pool_start((uint32_t)threads, &p->pool, &p->own_pool)) {
        free(p);
        return cpu_host->status_new(SY_ERR_RUNTIME, "[provider.cpu] could not start %ld threads", threads);
    }
    *state = p;
    return NULL;
}

static void cpu_destroy(void *state)
{
    cpu_provider *p = state;
    if (!p)
        return;
    pool_stop(p->pool, p->own_pool);
    free(p);
}

/* Without [provider.cpu] threads the provider follows the session: a pool of
 * the session's threads for that session alone, so concurrent sessions with
 * different counts never share one (a cpu_pool runs one region at a time;
 * a second caller would run serially). A host older than ABI 1.5 cannot say
 * the session's count: one thread, as before. */
static sy_status *cpu_session_begin(void *state, void **session_state)
{
    const cpu_provider *p = state;
    *session_state = NULL;
    if (p->threads_set) { /* the environment's pool serves every session */
        cpu_host->log(SY_LOG_INFO, "cpu", "%u intra-op thread%s ([provider.cpu] threads)", p->threads,
                      p->threads > 1 ? "s" : "");
        return NULL;
    }
    uint32_t threads = sy_host_has_session_threads(cpu_host) ? cpu_host->session_threads() : 1;
    if (threads < 1)
        threads = 1;
    if (threads > 256)
        threads = 256; /* the bound of [provider.cpu] threads */
    cpu_session *cs = calloc(1, sizeof *cs);
    if (!cs)
        return cpu_host->status_new(SY_ERR_OUT_OF_MEMORY, "out of memory");
    cs->threads = threads;
    if (threads > 1 && !pool_start(threads, &cs->pool, &cs->own_pool)) {
        free(cs);
        return cpu_host->status_new(SY_ERR_RUNTIME, "cpu: could not start the session's %u intra-op threads", threads);
    }
    cpu_host->log(SY_LOG_INFO, "cpu", "%u intra-op thread%s (from the session)", threads, threads > 1 ? "s" : "");
    *session_state = cs;
    return NULL;
}

static void cpu_session_end(void *state, void *session_state)
{
    (void)state;
    cpu_session *cs = session_state;
    if (!cs)
        return;
    pool_stop(cs->pool, cs->own_pool);
    free(cs);
}

pthreadpool_t cpu_node_pool(const sy_node *n)
{
    const cpu_session *cs = cpu_host->node_provider_session(n);
    if (cs)
        return cs->pool;
    const cpu_provider *p = cpu_host->node_provider_state(n);
    return p ? p->pool : NULL;
}

static const sy_provider_def cpu_provider_def = {
    .struct_size = sizeof(sy_provider_def),
    .name = "cpu",
    .description = "fast host CPU kernels (XNNPACK, intra-op threads); cpu_ref takes what it declines",
    .flags = 0,
    .domain = &host_domain,
    .option_keys = provider_keys,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .group = cpu_chain_group,
    .compile = cpu_chain_compile,
    .run_compiled = cpu_chain_run,
    .release_compiled = cpu_chain_release,
    .session_begin = cpu_session_begin,
    .session_end = cpu_session_end,
};

/* XNNPACK's state (and cpuinfo's tables under it) is process-wide and made
 * once by xnn_initialize; every environment that loads this plugin shares
 * it. The libraries stay loaded when this plugin is closed (RTLD_NODELETE),
 * so that state is never torn down under another environment and a later
 * load finds it again; xnn_deinitialize is therefore not called. */
static void pin(const void *addr)
{
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* XNNPACK's pthreadpool calls bind to this plugin's entry points
 * (cpu_pool.c), so this plugin stays loaded with it. */
static void pin_xnnpack(void)
{
    pin((const void *)(uintptr_t)xnn_initialize);
    pin((const void *)(uintptr_t)cpu_pool_probe);
}

static sy_status *cpu_init(const sy_host_api *host, sy_plugin *p, const sy_options *opts)
{
    (void)opts;
    cpu_host = host;
    pin_xnnpack();
    if (xnn_initialize(NULL) != xnn_status_success)
        return host->status_new(SY_ERR_UNSUPPORTED, "XNNPACK does not support this CPU");
    sy_status *st = host->register_provider(p, &cpu_provider_def);
    if (!st)
        st = cpu_conv_register(host, p);
    if (!st)
        st = cpu_eltwise_register(host, p);
    if (!st)
        st = cpu_qconv_register(host, p);
    if (!st)
        st = cpu_qdq_register(host, p);
    if (!st)
        st = cpu_qelem_register(host, p);
    if (!st)
        st = cpu_qmatmul_register(host, p);
    if (!st)
        st = cpu_qsoftmax_register(host, p);
    if (!st)
        st = cpu_qconcat_register(host, p);
    if (!st)
        st = cpu_qpool_register(host, p);
    if (!st)
        st = cpu_lstm_register(host, p);
    if (!st)
        st = cpu_copy_register(host, p);
    if (!st)
        st = cpu_softmax_register(host, p);
    return st;
}

static void cpu_fini(void) {}

static const sy_plugin_desc cpu_desc = {
    .struct_size = sizeof(sy_plugin_desc),
    .abi_major = SY_ABI_MAJOR,
    .abi_minor = SY_ABI_MINOR,
    .name = "cpu",
    .version = "0.1.0",
    .description = "fast host CPU provider (XNNPACK kernels, intra-op thread pool)",
    .kinds = SY_PLUGIN_KIND_PROVIDER,
    .option_keys = NULL,
    .init = cpu_init,
    .fini = cpu_fini,
};

SY_PLUGIN_DEFINE(cpu_desc)
