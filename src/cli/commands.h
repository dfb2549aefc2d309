/* commands.h: one entry point per subcommand (git style). Each parses its
 * own flags with getopt_long, prints --help, and returns a process exit
 * code: 0 ok, 1 runtime failure, 2 bad usage or bad input. */
#ifndef GATELAB_COMMANDS_H
#define GATELAB_COMMANDS_H

int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_intervene(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_sinks(int argc, char **argv);
int cmd_gates(int argc, char **argv);
int cmd_acts(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_variants(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_fingerprint(int argc, char **argv);

#endif
