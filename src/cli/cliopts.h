/* cliopts.h: every subcommand's option table (a CliOpts, cmdutil.h), in
 * one list, so tests/test_usage.c can hold each command's --help to its
 * table: every option in the table is in the help and every option the
 * help names is in the table. */
#ifndef GATELAB_CLIOPTS_H
#define GATELAB_CLIOPTS_H

#include "cmdutil.h"

extern const CliOpts train_options, eval_options, intervene_options, sweep_options, bench_options,
    bench_inspect_options, heatmap_options, plot_options, report_options, inspect_options,
    variants_options, metrics_options;

/* Every command's CliOpts, NULL-terminated. */
extern const CliOpts *const cli_all_options[];

#endif
