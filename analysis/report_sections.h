/* report_sections.h: the long-context (report_longctx.c), stability
 * (report_stability.c) and pretrained (report_pretrained.c) sections of the report, over run files
 * read through runfile_read.h. */
#ifndef GATELAB_REPORT_SECTIONS_H
#define GATELAB_REPORT_SECTIONS_H

#include <stdio.h>

/* Long-context section (only when some run has /lceval data): per mode a
 * table run name x length of val loss and degradation against the shortest
 * length (mean ± std over seeds), a degradation-at-8x summary for baseline,
 * g1-elem and g1-head beside the paper's Table 5 RULER numbers, and
 * figures/lceval_loss.png. */
void report_longctx(FILE *f, const char *figdir, const char *const *paths, int n);

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
