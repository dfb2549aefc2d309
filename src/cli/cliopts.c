/* cliopts.c: the list of every subcommand's option table (cliopts.h). */
#include "cliopts.h"

#include <stddef.h>

const OptTable *const cli_all_options[] = {
    &train_options,         &eval_options,        &intervene_options,
    &stream_options,        &sweep_options,       &bench_options,
    &bench_inspect_options, &sinks_options,       &gates_options,
    &acts_options,          &heatmap_options,     &plot_options,
    &report_options,        &inspect_options,     &variants_options,
    &metrics_options,       &fingerprint_options, NULL};
