/* report_mechanism.h: the "Mechanism" section of REPORT.md
 * (report_mechanism.c), over run files read through runfile_read.h. */
#ifndef GATELAB_REPORT_MECHANISM_H
#define GATELAB_REPORT_MECHANISM_H

#include <stdio.h>

/* Mechanism section (only when some run's last probe has the mechanism
 * fields or some run has /intervene): F-Attn against BOS activation over
 * every run (figures/mech_bos_fattn.png, Spearman's rho and its p-value),
 * and the intervention table: per run name and kind, the change against
 * the run's own /intervene/none of F-Attn, M-Act and probe loss, mean ±
 * std over seeds with n. */
void report_mechanism(FILE *f, const char *figdir, const char *const *paths, int n);

#endif
