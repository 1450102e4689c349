/* A host linked to switchyard::tools: the library answers, and a call
 * without a model is refused with a message (not a crash). */
#include <switchyard/sy_tools.h>
/* every extension header a host may use compiles from the installed tree */
#include <switchyard/ext/sy_emu_report.h>
#include <switchyard/ext/sy_llm.h>
#include <switchyard/ext/sy_mcu_codegen.h>
#include <switchyard/ext/sy_qdq_patterns.h>
#include <stdio.h>

int main(void)
{
    sy_status *st = sy_quantize(NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL);
    printf("sy_tools_version %d, %s: %s\n", sy_tools_version(), st ? sy_status_code_name(sy_status_get_code(st)) : "OK",
           st ? sy_status_get_message(st) : "");
    int rc = st == NULL || sy_tools_version() != SY_TOOLS_VERSION;
    sy_status_free(st);
    return rc;
}
