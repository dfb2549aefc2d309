/* report_extra.h: the long-context and stability sections of the report
 * (gatelab report), over run files read through runread.h. */
#ifndef GATELAB_REPORT_EXTRA_H
#define GATELAB_REPORT_EXTRA_H

#include <stdio.h>

/* Long-context section (only when some run has /lceval data): per mode a
 * table run x length of val loss and degradation against the shortest
 * length, the paper's Table 5 RULER numbers beside it, and
 * figures/lceval_loss.png. */
void report_longctx(FILE *f, const char *figdir, const char *const *paths, int n);

/* Stability section (only when the runs hold two or more learning rates):
 * per lr and variant spikes, divergence and final PPL, and
 * figures/stability_loss.png with the loss curves overlaid. */
void report_stability(FILE *f, const char *figdir, const char *const *paths, int n);

#endif
