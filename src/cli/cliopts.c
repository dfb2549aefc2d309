/* cliopts.c: the list of every subcommand's option table (cliopts.h). */
#include "cliopts.h"

#include <stddef.h>

const CliOpts *const cli_all_options[] = {
    &train_options,   &eval_options,          &intervene_options, &sweep_options,
    &bench_options,   &bench_inspect_options, &cu_sinks_options,  &cu_gates_options,
    &cu_acts_options, &heatmap_options,       &plot_options,      &report_options,
    &inspect_options, &variants_options,      &metrics_options,   NULL};
