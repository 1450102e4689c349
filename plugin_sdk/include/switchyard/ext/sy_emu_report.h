/*
 * Extension "qnn_emu.<provider>" (version SY_EMU_REPORT_VERSION) of the
 * emulated providers (htp, lpai, aic; providers/common): a text report of
 * the provider in the latest environment that created it (the first two
 * functions have no handle: "latest" is process-wide; report_env and
 * compat_env answer for the table's own environment); its
 * compatibility string, a line per node checked: memory verdict, unit,
 * modelled cycles, modelled latency). `switchyard explain --emulator-report`
 * and `bench --emulator-report` print it; a host fetches it with
 * sy_get_extension(env, "qnn_emu.htp", SY_EMU_REPORT_VERSION).
 */
#ifndef SWITCHYARD_EXT_SY_EMU_REPORT_H
#define SWITCHYARD_EXT_SY_EMU_REPORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SY_EMU_REPORT_PREFIX "qnn_emu." /* + the provider's name */
#define SY_EMU_REPORT_VERSION 1u

typedef struct sy_emu_report_ext {
    uint32_t struct_size;
    /* writes the report into buf (NUL-terminated, truncated at len - 1; buf
     * may be NULL) and returns the length it needs without the NUL */
    size_t (*report)(char *buf, size_t len);
    /* the compatibility string of the emulated target */
    const char *(*compat)(void);
    /* Appended (check struct_size): the same two for the environment the
     * table was fetched from, whatever was created since. `self` is that
     * table: each environment registers its own (ABI 1.2 plugin state). */
    size_t (*report_env)(const struct sy_emu_report_ext *self, char *buf, size_t len);
    const char *(*compat_env)(const struct sy_emu_report_ext *self);
} sy_emu_report_ext;

#ifdef __cplusplus
}
#endif

#endif
