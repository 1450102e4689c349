/* A shared library named like a plugin that does not export sy_plugin_query.
 * Its constructor marks the environment: the loader must refuse it from its
 * dynamic symbol table, before dlopen would run this inside the host. */
#include "switchyard/sy_types.h"

#include <stdlib.h>

__attribute__((constructor)) static void mark_loaded(void) { setenv("SY_ABI_NO_QUERY_LOADED", "1", 1); }

SY_EXPORT int sy_not_a_plugin(int x);
SY_EXPORT int sy_not_a_plugin(int x) { return x + 1; }
