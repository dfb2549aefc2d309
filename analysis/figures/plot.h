/* plot.h: the figures over run files (plot.c), drawn with gnuplot.h.
 * Every failure returns -1 with one line in err. */
#ifndef GATELAB_PLOT_H
#define GATELAB_PLOT_H

#include <stddef.h>

#include <stdio.h>

#include "gnuplot.h"

struct RunSet; /* plot_runs.h */

/* One figure kind: its name, its `plot --help` line, how it is drawn
 * (0, 1 when no run has its data, -1 with err) and, for the figures the
 * report draws, its file stem and caption (NULL: not drawn by name). */
typedef struct {
    const char *name, *help;
    int (*draw)(struct RunSet *rs, const char *png, char *err, size_t errlen);
    const char *report_png, *report_caption;
} PlotKind;

/* The figure kinds (plot.c), in `plot --help`'s order and the report's. */
extern const PlotKind PLOT_KINDS[];
extern const int PLOT_N_KINDS;

/* 1 when kind is one plot_figure draws (a PLOT_KINDS name). */
int plot_kind_known(const char *kind);
/* The kinds' names, comma-separated, into out[n]. */
void plot_kind_names(char *out, size_t n);
/* "KIND:" and one wrapped line per kind, for `plot --help`. */
void plot_kinds_help(FILE *f);

/* ---- figures over run files (through runfile_read.h) ----
 * kind: a PLOT_KINDS name. gate-hist takes exactly one run. Runs are labelled by variant, or by
 * run name (runname.h) when two run names share a variant, plus the seed
 * when two runs share that label. Figures over probes use the
 * last probe of each run; a run without probes is left out of those
 * figures, and it is an error only when no run has the data. */
#define PLOT_BAD_INPUT (-2) /* plot_figure: the runs cannot give the figure */
/* 0 drawn; PLOT_BAD_INPUT when the runs cannot give this figure (gate-hist
 * over more than one run or an ungated run, no run with the data); -1 a
 * failure drawing it (gnuplot, memory, writing). err holds the line. */
int plot_figure(const char *kind, char **run_paths, int n, const char *png_path, char *err,
                size_t errlen);

/* All figures for a set of runs into outdir (created if missing), one
 * series per run name (runname.h), the mean over its seeds (bars: min..max
 * over seeds): each PLOT_KINDS row's report_png.png (with more than 8 run names the line figures
 * show only the baseline, g1-elem and g1-head runs and any that diverged), and gate_hist_<name>.png
 * (one per gated variant, its first run; name is the run name instead when two run names share the
 * variant). A figure with no data in any run (e.g. no probes yet, no gated run) is skipped, not an
 * error. 0 ok, -1 with err on an unreadable run or a gnuplot failure. */
int plot_report_figures(const char *outdir, char **run_paths, int n, char *err, size_t errlen);

/* ---- the report's series rule, shared with report_util.c ---- */

/* Above this many series (run names) a line figure draws only the key runs. */
#define PLOT_MAX_SERIES 8

/* 1 for a key run: variant baseline, g1-elem or g1-head (the paper's
 * headline comparison), or status diverged (a failure is worth seeing). */
int plot_key_run(const char *variant, const char *status);

/* key[ng]: 1 for series of a key run. With more than PLOT_MAX_SERIES
 * series returns 1 (draw only those with key[g] set), after marking the
 * first PLOT_MAX_SERIES when none is key; else returns 0 (draw all). */
int plot_key_series(int ng, unsigned char *key);

/* Mean over m step series (seeds of one run name): x takes the steps of the
 * longest; at each index the series logging that same step are averaged,
 * non-finite values left out (NaN where none is left). x, y hold the
 * longest length, which is returned. */
size_t plot_mean_aligned(const long long *const *st, const double *const *v, const size_t *len,
                         int m, double *x, double *y);

#endif
