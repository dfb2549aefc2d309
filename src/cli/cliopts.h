/* cliopts.h: every subcommand's option table (an OptTable, opts.h), in one
 * list, so tests/test_usage.c can run every command's --help and hold the
 * option rules every command shares. */
#ifndef GATELAB_CLIOPTS_H
#define GATELAB_CLIOPTS_H

#include "opts.h"

#include "commands.h"

/* Each command's table (CLI_COMMANDS), and bench --inspect's. */
#define CLIOPTS_DECL(name, help) extern const OptTable name##_options;
CLI_COMMANDS(CLIOPTS_DECL)
#undef CLIOPTS_DECL
extern const OptTable bench_inspect_options;

/* Every command's OptTable, then bench --inspect's, NULL-terminated. */
extern const OptTable *const cli_all_options[];

#endif
