#include "cli.h"
int cmd_llm(int argc, char **argv) { (void)argc; (void)argv; return 2; }
