/* gnuplot_axes.h: the ranges and tics the line figures (gnuplot.c) write
 * into their scripts, chosen from the data. */
#ifndef GATELAB_GNUPLOT_AXES_H
#define GATELAB_GNUPLOT_AXES_H

#include <stdio.h>

#include "gnuplot.h"

/* The range of every finite plotted value of panel p on a linear axis,
 * padded by 5% of it (from 0 with yfrom0), so the parts of a split panel
 * share one range. 0 when panel p has no such value. */
int gp_panel_yrange(const PlotAxes *ax, const PlotSeries *s, int ns, int p, double *lo, double *hi);

/* A tic step of 1, 2, 2.5 or 5 times a power of ten that cuts [a, b] into
 * at most 4 intervals (0: no finite range). */
double gp_nice_step(double a, double b);

/* gp_nice_step over the x range of every series: the narrow parts of a
 * grid get tic labels that do not touch. */
double gp_x_tic_step(const PlotSeries *s, int ns);

/* The decades [lo, hi] of a log axis over the positive values v[n]: the
 * power of ten at or below the least and at or above the greatest (one
 * decade more when they are one power); 0 when no value is positive. */
int gp_log_decades(const double *v, size_t n, int *lo, int *hi);

/* "10" and k in superscript digits (UTF-8) into out. */
void gp_pow10_label(int k, char *out, size_t outlen);

/* Panel p's log y axis as `set yrange` and `set ytics` lines: from the
 * decade below its least positive value to the decade above its greatest
 * (a little over when the greatest lies on that decade, so a line there
 * clears the border), tics at powers of ten labelled 10^k, at most
 * GP_LOG_TICS of them. `set autoscale y` when the panel has no positive
 * value. */
#define GP_LOG_TICS 8
void gp_log_axis(FILE *f, const PlotSeries *s, int ns, int p);

#endif
