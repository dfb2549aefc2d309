/* cmdutil.h: what every analysis subcommand shares: parsing --step,
 * opening a run file plus one of its probes with a one-line error, and the
 * option loop of the one-probe commands (acts, gates, sinks). */
#ifndef GATELAB_CMDUTIL_H
#define GATELAB_CMDUTIL_H

#include "cli_json.h"
#include "opts.h"
#include "outpath.h"
#include "runfile_read.h"

#include <stdio.h>

/* The options of sinks and acts (--step N, --json): their rows, which each
 * command's OptTable (opts.h) shares with OPT_DEFAULTS(cu_probe_defaults);
 * cu_probe_cmd parses them. */
typedef struct {
    long long step; /* the probe's training step; -1: the last */
    int json;
} CuProbeOpts;
extern const CuProbeOpts cu_probe_defaults;
extern const OptRow cu_probe_rows[];

/* The rows --threads N, --json and --no-write of the commands that rerun a
 * run's model and store what they find in it (stream, intervene); they
 * fill the fields threads (0: the online CPUs), json and nowrite of the
 * command's defaults d. */
/* clang-format off */
#define CU_RERUN_ROWS(d)                                                                           \
    {'t', "threads", OPT_INT, "N", 1, 64, "the online CPUs", "threads for a checkpoint", 0, 0,    \
     &(d).threads},                                                                                \
    {'j', "json", OPT_FLAG, NULL, 0, 0, NULL, "print JSON instead of a table", 0, 0, &(d).json},  \
    {'w', "no-write", OPT_FLAG, NULL, 0, 0, NULL, "do not store the results in RUN.h5", 0, 0,     \
     &(d).nowrite}
/* clang-format on */

/* "gatelab CMD: too many OPT (at most N)" on stderr; returns 2. For a
 * repeatable option given more often than the command can hold. */
int cu_too_many(const char *cmd, const char *opt, int n);

/* Parse an integer in [lo, hi] (parse_ll_range, opts.h); 0 ok, -1 if s
 * is not one. For the numbers inside a list (--lengths 256,512). */
int cu_parse_int(const char *s, int lo, int hi, int *out);

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

/* The whole of `gatelab CMD RUN.h5 [--step N] [--json]`: parse the options
 * of t (whose rows are cu_probe_rows), load the probe, hand it to report,
 * free it. Returns the exit status (0, or 2 on a bad call or unreadable
 * run). */
int cu_probe_cmd(const OptTable *t, int argc, char **argv, CuReport report);

/* A one-probe command's JSON object with the fields every such object
 * starts with: {"file", "variant", "seed", "step"} (cli_json.h; the
 * caller adds the rest and prints it with cj_print). */
json_t *cu_json_head(RunReader *r, const ProbeRecord *p);

#endif
