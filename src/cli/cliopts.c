/* cliopts.c: the list of every subcommand's option table (cliopts.h). */
#include "cliopts.h"

#include <stddef.h>

#define CLIOPTS_ROW(name, help) &name##_options,
/* clang-format off */
const OptTable *const cli_all_options[] = {
    CLI_COMMANDS(CLIOPTS_ROW)
    &bench_inspect_options,
    NULL};
/* clang-format on */
#undef CLIOPTS_ROW
