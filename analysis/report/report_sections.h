/* report_sections.h: the stability (report_stability.c), pretrained
 * (report_pretrained.c) and stream (report_stream.c) sections of the report, over run files
 * read through runfile_read.h (the long-context section reads the rows: report_priv.h). */
#ifndef GATELAB_REPORT_SECTIONS_H
#define GATELAB_REPORT_SECTIONS_H

#include <stdio.h>

/* Stability section (only when one data source holds two or more learning
 * rates): one row per run name (lr, variant, seeds) with spikes,
 * divergence and final PPL over seeds, and figures/stability_loss.png with
 * the loss curves overlaid. */
void report_stability(FILE *f, const char *figdir, const char *const *paths, int n);

/* Pretrained-models section (report_pretrained.c; only when some run was
 * written by `gatelab inspect`): one row per such run with its
 * architecture, dtype and headline numbers, beside the paper's Table 4. */
void report_pretrained(FILE *f, const char *const *paths, int n);

/* Streaming section (report_stream.c; only when some run has /stream
 * data): one row per run file and window with the dense loss, the loss
 * for each number of kept first tokens, and the paired test of the first
 * against the last. */
void report_stream(FILE *f, const char *const *paths, int n);

#endif
