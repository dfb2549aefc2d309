/* report.h: the sweep report over a directory of run files. */
#ifndef GATELAB_REPORT_H
#define GATELAB_REPORT_H

#include <stddef.h>

/* Read every *.h5 run file in dir (a corrupt one is listed as unreadable,
 * not fatal) and write REPORT.md, results.csv and figures/ into outdir
 * (dir when NULL; created if missing). 0 ok, -1 with one line in err;
 * REPORT_BADINPUT (with a line) when dir holds no run file or none of
 * them was readable (the report listing them is still written). */
enum { REPORT_BADINPUT = -2 };
int report_run(const char *dir, const char *outdir, char *err, size_t errlen);

#endif
