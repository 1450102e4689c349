/* A shared library named like a plugin that does not export sy_plugin_query. */
#include "switchyard/sy_types.h"

SY_EXPORT int sy_not_a_plugin(int x);
SY_EXPORT int sy_not_a_plugin(int x) { return x + 1; }
