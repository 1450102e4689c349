/*
 * The provider plumbing the htp and aic emulators share (sy_qnn_emu): the
 * per-environment plugin state (ABI 1.2), the "qnn_emu.<provider>" report
 * table over it, the latest-state record version 1 of that table reads, and
 * the sy_provider_def callbacks that only touch the common fields. A
 * provider writes its options, capability rules, cost model and report
 * body; this file wires them to the host. Each plugin links its own copy of
 * the library, so the process-wide pieces here are per provider.
 */
#ifndef SY_EMU_PROVIDER_H
#define SY_EMU_PROVIDER_H

#include "emu.h"

/* The fields every provider state using this plumbing begins with (the
 * shared callbacks cast the state to it). */
typedef struct emu_pstate {
    char compat[256];    /* the compatibility string (compat, the report) */
    emu_board board;     /* this provider's sessions' records, for the report */
    struct emu_env *env; /* the plugin state of its environment */
} emu_pstate;

/* What the plumbing needs of a provider. */
typedef struct emu_provider_ops {
    /* makes a provider state that begins with emu_pstate, calling
     * emu_pstate_ready on it once its options are taken */
    sy_status *(*create)(const sy_options *o, void **state);
    /* the report of one provider state (never NULL: the plumbing writes
     * the line of "no provider state") */
    size_t (*report_of)(void *state, char *buf, size_t len);
} emu_provider_ops;

/* The plugin's state in one environment (ABI 1.2): its report table (first,
 * so that the table's `self` is the env), its provider definition and the
 * provider state its create_env made. */
typedef struct emu_env {
    emu_report_ext ext;
    sy_provider_def def;
    emu_pstate *s;
    const emu_provider_ops *ops;
} emu_env;

/* The plugin init of such a provider: makes its environment's plugin state
 * (the report table and a provider definition of the entries every such
 * provider shares -- the flag SY_PROVIDER_EMULATOR, a create_env wrapping
 * ops->create, destroy, compat, group, the compiled partitions of emu.h,
 * the sessions' boards -- and the provider's own, read from `provider`:
 * name, description, domain, option keys, check_node, can_copy and copy;
 * its other entries are not read), then emu_plugin_init. */
sy_status *emu_provider_init(const sy_host_api *host, sy_plugin *p, emu_target *rt, const emu_target *tmpl,
                             const char *qio_rule, const sy_provider_def *provider, const emu_provider_ops *ops);

/* A state's options are taken: starts its board, makes it the live one. */
void emu_pstate_ready(emu_pstate *s);

/* Reads the boolean options keys[0..n) into *dst[i]; an INVALID_CONFIG
 * status naming "[provider.<provider>] <key>" when one is not a boolean. */
sy_status *emu_option_bools(const sy_options *o, const char *provider, const char *const *keys, bool *const *dst,
                            int n);

/* A data move of integer codes (a view, Transpose or Slice of an 8- or
 * 16-bit integer input 0): it keeps its producer's encoding. */
bool emu_is_int_view(const sy_node *n, const char *op);

#endif
