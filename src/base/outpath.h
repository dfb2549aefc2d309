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
    OUT_RUNFILE,   /* a gatelab run file (HDF5 with the gatelab-run schema) */
    OUT_PNG,       /* a PNG image (heatmap, plot, report figures) */
    OUT_REPORT,    /* REPORT.md: starts "# gatelab report" */
    OUT_CSV,       /* results.csv: starts with its header "file,run," */
    OUT_GNUPLOT,   /* a figure's .gp script or .dat data: "# written by gatelab" */
    OUT_SLURM,     /* sweep --slurm script */
    OUT_SWEEP_TSV, /* sweep_status.tsv (appended to) */
    OUT_SVG,       /* an SVG image (a figure's vector twin): starts "<?xml" */
    OUT_PDF,       /* a PDF document (a figure's vector twin): starts "%PDF-" */
    OUT_JSONL      /* a run's live metrics log RUN.h5.jsonl: starts {"event":"start" */
} OutKind;

/* The first line of a .gp / .dat file, so a later run knows it as ours. */
#define OUT_GNUPLOT_MAGIC "# written by gatelab"

/* 0 when `path` may be written by a command producing `kind`: the path
 * does not exist, or it is a regular file of that kind, `overwrite` is
 * set and its mode lets its owner write it (and access(2) lets us). -1
 * with a one-line reason otherwise (exit code 2: bad input).
 * A file is of the kind when is_ours(path) returns 1, or, with is_ours
 * NULL, when it starts with the kind's leading bytes. OUT_RUNFILE has no
 * leading bytes of its own (any HDF5 file has the same): only the run
 * file's reader knows one, so a run file's path is checked by
 * runfile_outpath_check (runfile_read.h), which passes it here. */
int outpath_check_with(const char *path, OutKind kind, int (*is_ours)(const char *path),
                       int overwrite, char *err, size_t errlen);

/* outpath_check_with without a recognizer. For OUT_RUNFILE that is a new
 * or empty path only (no existing run file counts as one). */
int outpath_check(const char *path, OutKind kind, int overwrite, char *err, size_t errlen);

/* The kind's name for messages ("gatelab run file", "PNG image", ...). */
const char *outpath_kind_name(OutKind kind);

#endif
