/* cmdutil.h: what every analysis subcommand shares: parsing --step,
 * opening a run file plus one of its probes with a one-line error, and the
 * option loop of the one-probe commands (acts, gates, sinks). */
#ifndef GATELAB_CMDUTIL_H
#define GATELAB_CMDUTIL_H

#include "cli_json.h"
#include "outpath.h"
#include "runfile_read.h"

#include <stdio.h>

/* A bad option, as one line: "gatelab CMD: unknown option '--x' (try
 * gatelab CMD --help)" or "... option '--out' needs a value ...". c is
 * what getopt_long returned ('?' or ':'; the optstring starts with ':' and
 * opterr is 0, so getopt prints nothing itself). Returns 2, the exit code. */
int cu_bad_option(const char *cmd, int c, char **argv);

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
