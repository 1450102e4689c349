/* The checks on a plugin file that run before dlopen (plugin_file.c). */
#ifndef SY_PLUGIN_FILE_H
#define SY_PLUGIN_FILE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum sy_plugin_file_verdict {
    SY_PLUGIN_FILE_OK,           /* regular ELF shared object that defines the symbol (and matches the pin) */
    SY_PLUGIN_FILE_BAD,          /* cannot be read, not a regular file, or not an ELF shared object */
    SY_PLUGIN_FILE_PIN_MISMATCH, /* its sha256 is not the pin */
    SY_PLUGIN_FILE_NO_SYMBOL,    /* its dynamic symbol table does not define `symbol` */
} sy_plugin_file_verdict;

/* pin: 64 hex digits or NULL. why: the reason when the verdict is not OK
 * (for PIN_MISMATCH: the file's sha256 in hex). */
sy_plugin_file_verdict sy_plugin_file_check(const char *path, const char *pin, const char *symbol, char *why,
                                            size_t why_len);

#endif
