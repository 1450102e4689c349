/* The "abi_test" extension table registered by libsy_abi_good.so, so the
 * ABI test can look inside the plugin through the public sy_get_extension. */
#ifndef ABI_TEST_EXT_H
#define ABI_TEST_EXT_H

#include "switchyard/sy_plugin.h"

#define ABI_TEST_EXT_NAME "abi_test"
#define ABI_TEST_EXT_VERSION 1u
#define ABI_TEST_DOMAIN "test.switchyard"

typedef struct abi_test_ext {
    uint32_t struct_size;
    /* calls host->register_schema after init returned: must be refused */
    sy_status *(*late_register)(void);
    /* [plugin.abi_good] greeting as init saw it (NULL when absent) */
    const char *(*greeting)(void);
    /* [provider.abi_prov] level as create saw it (-1 when absent) */
    int (*provider_level)(void);
    /* how many times the AbiScaleOp kernel ran */
    int (*kernel_runs)(void);
} abi_test_ext;

#endif
