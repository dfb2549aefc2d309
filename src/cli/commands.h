/* commands.h: one entry point per subcommand (git style). Each parses its
 * own flags with getopt_long, prints --help, and returns a process exit
 * code: 0 ok, 1 runtime failure, 2 bad usage or bad input. */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

/* Every subcommand, one row each: its name (the word after gatelab), and
 * the line `gatelab --help` gives it. A row NAME is the entry point
 * cmd_NAME (cmd_NAME.c) and its option table NAME_options (opts.h);
 * main.c dispatches over these rows and cliopts.c lists their tables. */
#define CLI_COMMANDS(X)                                                                            \
    X(train, "train one model and write its run file")                                             \
    X(eval, "evaluate a run at other lengths (RoPE / YaRN)")                                       \
    X(intervene, "rerun a run's probe under an intervention")                                      \
    X(probe, "attention of a prompt of your own, tokens on the axes")                              \
    X(stream, "streaming loss: a window that keeps the first K tokens vs dense")                   \
    X(sweep, "run a sweep file: many variants, seeds, jobs")                                       \
    X(bench, "tokens/s, GFLOP/s and % of the sgemm peak")                                          \
    X(sinks, "first-token share and sink rate of a run")                                           \
    X(gates, "gate mean, sparsity and histogram of a run")                                         \
    X(acts, "massive activations, kurtosis, norm ratio")                                           \
    X(heatmap, "attention heatmaps as PNG, SVG or PDF")                                            \
    X(plot, "loss, sink and gate figures via gnuplot")                                             \
    X(report, "REPORT.md and results.csv over a directory")                                        \
    X(inspect, "probe a Hugging Face checkpoint into a run file")                                  \
    X(variants, "the variant catalog: ids, fields, formulas")                                      \
    X(metrics, "the per-run metrics of results.csv and REPORT.md")                                 \
    X(fingerprint, "this build's training fingerprint (same bits?)")

#define CLI_COMMAND_DECL(name, help) int cmd_##name(int argc, char **argv);
CLI_COMMANDS(CLI_COMMAND_DECL)
#undef CLI_COMMAND_DECL

#endif
