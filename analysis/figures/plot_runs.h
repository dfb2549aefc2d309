/* plot_runs.h: the run set every figure of plot.c draws from (plot_runs.c):
 * the run files opened, labelled and grouped, one series per group. */
#ifndef GATELAB_PLOT_RUNS_H
#define GATELAB_PLOT_RUNS_H

#include <stddef.h>

#include "plot.h"
#include "runfile_read.h"

/* Above this many series a line figure keeps to the key runs and a bar
 * figure puts the series on the x axis. */
#define MAX_SERIES PLOT_MAX_SERIES

/* Figures draw one series per group: per file for `gatelab plot` (the
 * user chose those files), per run name over its seeds for the report. */
typedef struct RunSet {
    RunReader **r;
    char (*label)[300]; /* [n] per-file label */
    int n;
    int agg; /* groups are run names, values mean over seeds */
    int ng;
    int *grp;            /* [n] group of each run */
    char (*glabel)[300]; /* [ng] */
    unsigned char *gkey; /* [ng] drawn in line figures when subset is set */
    int subset;          /* too many groups: line figures draw key ones */
} RunSet;

/* Open the n run files, label them (variant or run name, plus the seed
 * when that repeats) and group them: by run name when agg, else one group
 * per file. 0, or -1 with err (an unreadable run; nothing stays open). */
int plot_runs_open(RunSet *rs, char **paths, int n, int agg, char *err, size_t errlen);
void plot_runs_close(RunSet *rs);

/* The name run i is known by in figures: its variant, or its run name
 * (runname.h) when another run of the same variant has a different run
 * name. */
void plot_runs_base(const RunSet *rs, int i, char *out, size_t n);

/* Whether group g is drawn in a line figure. */
int plot_group_shown(const RunSet *rs, int g);

/* Runs of group g into idx; returns how many. */
int plot_group_members(const RunSet *rs, int g, int *idx);

/* The last probe of a run; *have = 0 (and 0 returned) when it has none. */
int plot_last_probe(RunReader *r, ProbeRecord *p, int *have, char *err, size_t errlen);

#endif
