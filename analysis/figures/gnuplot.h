/* gnuplot.h: figures via gnuplot (gnuplot.c). Every figure leaves five
 * files side by side: NAME.dat (the numbers), NAME.gp (a plain gnuplot
 * script that reads NAME.dat by its base name, so `cd DIR && gnuplot
 * NAME.gp` redraws it after a restyle), NAME.png, and its vector twins
 * NAME.svg and NAME.pdf (the same script with gatelab_fmt='svg' or 'pdf').
 * gnuplot is run with fork/execvp in DIR, never through a shell. Every
 * failure returns -1 with one line in err. */
#ifndef GATELAB_GNUPLOT_H
#define GATELAB_GNUPLOT_H

#include <stddef.h>

#define GNUPLOT_MISSING "gnuplot not found: install it with apt-get install gnuplot-nox"

/* ---- generic figures from arrays (no run files) ---- */

typedef enum { PLOT_LINES, PLOT_POINTS, PLOT_STEPS } PlotStyle;

typedef struct {
    const char *label;
    const double *x, *y; /* [n]; NaN y is a gap */
    size_t n;            /* series with n == 0 are left out */
    PlotStyle style;
    int color; /* gnuplot linetype 1.. ; 0 = automatic; PLOT_REF: the reference */
    int panel; /* 0 or 1: which of the stacked panels */
} PlotSeries;

typedef struct {
    const char *title;
    const char *xlabel;
    const char *ylabel[2];           /* panel 0 and 1; panels past 1 take ylabel[0] */
    int npanels;                     /* 1..PLOT_MAX_PANELS (2: stacked, sharing x) */
    const char *const *panel_titles; /* [npanels] or NULL */
    int yfrom0;                      /* y axes start at 0 exactly (rates, fractions) */
    int logy;                        /* log y axes (values <= 0 are left out) */
} PlotAxes;

/* Legibility rules every line figure keeps:
 * - at most PLOT_PER_PANEL series per drawn panel: a panel with more is
 *   split into parts side by side, in order;
 * - within a drawn panel each series differs from every other by colour
 *   AND by dash pattern (lines, steps) or point type (points): the k-th
 *   series of a part gets colour k, dash k and point type k of fixed
 *   tables (the caller's `color` does not pick the colour).
 * Series of one panel with the same nonzero `color` count as ONE series
 * (say a training curve and its validation points): they share colour,
 * dash and point type and always land in the same part.
 * - in a panel split into parts, the series of `color` PLOT_REF (the
 *   baseline, say) come first in every part, so each part reads against
 *   the same reference; the other series spread evenly over the parts. */
#define PLOT_REF (-1)
#define PLOT_PER_PANEL 6
#define PLOT_MAX_PANELS 32

/* Line / point / step plot of ns series into png_path (must end in .png;
 * the .svg and .pdf beside it too). Points are drawn over every line. */
int plot_lines(const char *png_path, const PlotAxes *ax, const PlotSeries *s, int ns, char *err,
               size_t errlen);

typedef struct {
    const char *title, *xlabel, *ylabel;
    int ncat;                        /* categories on x (layers 0..ncat-1) */
    int ngroups;                     /* bars per category (runs) */
    const char *const *group_labels; /* [ngroups] */
    const double *v;                 /* [ngroups, ncat]; NaN = no bar */
    int nref;                        /* dashed horizontal reference lines */
    const double *ref;               /* [nref] */
    const char *const *ref_labels;   /* [nref] */
} PlotBars;

/* Clustered bars: one cluster per category, runs side by side. */
int plot_bars(const char *png_path, const PlotBars *b, char *err, size_t errlen);

/* Bars as drawn: PlotBars plus what the report's figures add. */
typedef struct {
    PlotBars b;
    const double *lo, *hi;         /* [ngroups, ncat] error bars, or NULL */
    const char *const *cat_labels; /* [ncat] x tic labels, or NULL: 0.. */
    int wide;                      /* rotated tic labels, wider image */
} BarSpec;
int plot_bars_spec(const char *png_path, const BarSpec *bs, char *err, size_t errlen);

/* 0 when png_path is a usable DIR/NAME.png output path, else -1 and why. */
int plot_check_png(const char *png_path, char *err, size_t errlen);

/* 1 when an executable `gnuplot` is on PATH. */
int plot_have_gnuplot(void);

#endif
