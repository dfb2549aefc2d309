/* report_pretrained.h: the REPORT.md table of pretrained checkpoints
 * (run files written by `gatelab inspect`), beside the paper's Table 4. */
#ifndef GATELAB_REPORT_PRETRAINED_H
#define GATELAB_REPORT_PRETRAINED_H

#include <stdio.h>

/* One row per run whose /pretrained group exists; nothing when none. */
void report_pretrained(FILE *f, const char *const *paths, int n);

#endif
