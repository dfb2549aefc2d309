/* report_confirm.h: the confirmatory sections of REPORT.md (report_confirm.c). */
#ifndef GATELAB_REPORT_CONFIRM_H
#define GATELAB_REPORT_CONFIRM_H

#include <stdio.h>

#include "protocol.h"
#include "report_priv.h"

/* The headline (one generated sentence per claim of the protocol, citing
 * its test), the primary tests with Holm-adjusted p-values, the sink counts
 * per arm, the equivalence tests and, when sec (the [secondary] family) is
 * not NULL, its tests with their own Holm, for the sorted rows of a
 * report. */
void report_confirm(FILE *f, const Row *rows, int n, const Protocol *pr, const Protocol *sec);

#endif
