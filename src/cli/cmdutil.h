/* cmdutil.h: what every analysis subcommand shares: parsing --step,
 * opening a run file plus one of its probes with a one-line error, and the
 * option loop of the one-probe commands (acts, gates, sinks). */
#ifndef GATELAB_CMDUTIL_H
#define GATELAB_CMDUTIL_H

#include "cli_json.h"
#include "outpath.h"
#include "runfile_read.h"

#include <getopt.h>
#include <stdio.h>

/* A subcommand's options: getopt_long's table, its short-option string
 * (starting with ':', so a missing value comes back as ':'), and the short
 * letters of the options that may be given more than once. Every command's
 * CliOpts is listed in cli_all_options (cliopts.h), against which
 * tests/test_usage.c checks the command's --help, so the two cannot drift. */
typedef struct {
    const char *cmd;        /* as typed after gatelab: "train", "bench --inspect" */
    const char *shortopts;  /* ":c:s:o:..." */
    const char *repeatable; /* short letters, e.g. "s" for --set */
    const struct option *opts;
} CliOpts;

/* getopt_long over o's table. Returns what getopt_long returns, except
 * that a second use of an option that is not repeatable prints one line,
 * "gatelab CMD: option '--X' given twice (try gatelab CMD --help)", and
 * returns '!' (for which cu_bad_option prints nothing more). seen holds
 * one byte per entry of o->opts (at most CU_MAX_OPTS), zeroed by the
 * caller before the first call. */
#define CU_MAX_OPTS 32
int cu_getopt(const CliOpts *o, int argc, char **argv, unsigned char *seen);

/* The options of sinks, gates and acts (cu_probe_cmd). */
extern const CliOpts cu_sinks_options, cu_gates_options, cu_acts_options;

/* A bad option, as one line: "gatelab CMD: unknown option '--x' (try
 * gatelab CMD --help)" or "... option '--out' needs a value ...". c is
 * what getopt_long returned ('?' or ':'; the optstring starts with ':' and
 * opterr is 0, so getopt prints nothing itself). Returns 2, the exit code. */
int cu_bad_option(const char *cmd, int c, char **argv);

/* "gatelab CMD: too many OPT (at most N)" on stderr; returns 2. For a
 * repeatable option given more often than the command can hold. */
int cu_too_many(const char *cmd, const char *opt, int n);

/* Parse a non-negative integer; 0 ok, -1 if s is not one. */
int cu_parse_ll(const char *s, long long *out);
/* Parse an integer in [lo, hi]; 0 ok, -1 if s is not one. */
int cu_parse_int(const char *s, int lo, int hi, int *out);
/* getopt_long entries the run-file commands share: a checkpoint's
 * --model DIR and --threads N ('m', 't'), and the closing --json,
 * --no-write, --help ('j', 'w', 'h') with the terminator. */
/* clang-format off */
#define CU_OPT_CHECKPOINT {"model", required_argument, 0, 'm'}, {"threads", required_argument, 0, 't'}
#define CU_OPT_TAIL {"json", no_argument, 0, 'j'}, {"no-write", no_argument, 0, 'w'}, \
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}
/* clang-format on */

/* The online CPUs (1..63; 1 when unknown): the default --threads of the
 * checkpoint commands. */
int cu_online_cpus(void);

/* The output-path rule (outpath.h) before any work: 0 when path may be
 * written as `kind`; else prints "gatelab CMD: reason" and returns -1
 * (the caller exits 2). */
int cu_check_out(const char *cmd, const char *path, OutKind kind);

/* Open path and read its probe at step (last when < 0). Prints
 * "gatelab CMD: reason" to stderr and returns -1 on failure. */
int cu_load(const char *cmd, const char *path, long long step, RunReader **r, ProbeRecord *p);

/* Print one probe of a run, as JSON when json is set, else as text;
 * returns the exit code (0, or 1 when the output could not be written). */
typedef int (*CuReport)(RunReader *r, const ProbeRecord *p, int json);

/* The whole of `gatelab CMD RUN.h5 [--step N] [--json]`: parse the options,
 * load the probe, hand it to report, free it. usage prints the command's
 * help. Returns the exit status (0, or 2 on a bad call or unreadable run). */
int cu_probe_cmd(const char *cmd, int argc, char **argv, void (*usage)(FILE *f), CuReport report);

/* A one-probe command's JSON object with the fields every such object
 * starts with: {"file", "variant", "seed", "step"} (cli_json.h; the
 * caller adds the rest and prints it with cj_print). */
json_t *cu_json_head(RunReader *r, const ProbeRecord *p);

#endif
