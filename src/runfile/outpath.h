/* outpath.h: the one rule for every path a command writes.
 *
 * A command overwrites only (a) a file of its own kind that it was asked
 * to overwrite, or (b) a new path. Anything else is refused with one line
 * naming the path and the reason. Symbolic links are refused, never
 * followed: the last component of an output path must not be a link (a
 * link's target would otherwise be replaced by a regular file, or written
 * half-way behind the link's back). An empty regular file holds nothing
 * to lose and counts as a file of any kind. */
#ifndef GATELAB_OUTPATH_H
#define GATELAB_OUTPATH_H

#include <stddef.h>

typedef enum {
    OUT_RUNFILE,  /* a gatelab run file (HDF5 with the gatelab-run schema) */
    OUT_PNG,      /* a PNG image (heatmap, plot, report figures) */
    OUT_REPORT,   /* REPORT.md: starts "# gatelab report" */
    OUT_CSV,      /* results.csv: starts with its header "file,run," */
    OUT_GNUPLOT,  /* a figure's .gp script or .dat data: "# written by gatelab" */
    OUT_SLURM,    /* sweep --slurm script */
    OUT_SWEEP_TSV /* sweep_status.tsv (appended to) */
} OutKind;

/* The first line of a .gp / .dat file, so a later run knows it as ours. */
#define OUT_GNUPLOT_MAGIC "# written by gatelab"

/* 0 when `path` may be written by a command producing `kind`: the path
 * does not exist, or it is a regular file of that kind and `overwrite` is
 * set. -1 with a one-line reason otherwise (exit code 2: bad input). */
int outpath_check(const char *path, OutKind kind, int overwrite, char *err, size_t errlen);

/* The kind's name for messages ("gatelab run file", "PNG image", ...). */
const char *outpath_kind_name(OutKind kind);

#endif
