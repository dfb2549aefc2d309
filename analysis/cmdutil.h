/* cmdutil.h: what every analysis subcommand shares: parsing --step, and
 * opening a run file plus one of its probes with a one-line error. */
#ifndef GATELAB_CMDUTIL_H
#define GATELAB_CMDUTIL_H

#include "runread.h"

/* Parse a non-negative integer; 0 ok, -1 if s is not one. */
int cu_parse_ll(const char *s, long long *out);

/* Open path and read its probe at step (last when < 0). Prints
 * "gatelab CMD: reason" to stderr and returns -1 on failure. */
int cu_load(const char *cmd, const char *path, long long step,
            RunReader **r, RunProbe *p);

/* Print s as a JSON string literal (quotes and escapes included). */
void cu_json_str(const char *s);

#endif
