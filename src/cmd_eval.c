/* cmd_eval.c: placeholder until long-context eval lands */
#include <stdio.h>
#include "commands.h"
int cmd_eval(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "gatelab eval: not built yet\n"); return 1; }
