/* cliopts.h: every subcommand's option table (an OptTable, opts.h), in one
 * list, so tests/test_usage.c can run every command's --help and hold the
 * option rules every command shares. */
#ifndef GATELAB_CLIOPTS_H
#define GATELAB_CLIOPTS_H

#include "opts.h"

extern const OptTable train_options, eval_options, intervene_options, stream_options, sweep_options,
    bench_options, bench_inspect_options, sinks_options, gates_options, acts_options,
    heatmap_options, plot_options, report_options, inspect_options, variants_options,
    metrics_options, fingerprint_options;

/* Every command's OptTable, NULL-terminated. */
extern const OptTable *const cli_all_options[];

#endif
