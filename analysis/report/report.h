/* report.h: the sweep report over a directory of run files. */
#ifndef GATELAB_REPORT_H
#define GATELAB_REPORT_H

#include <stddef.h>

/* Read every *.h5 run file in dir (a corrupt one is listed as unreadable,
 * not fatal) and write REPORT.md, results.csv and figures/ into outdir
 * (dir when NULL; created if missing). Each file is read in turn and kept
 * only as its Row of headline numbers; with more than REPORT_PROGRESS_EVERY
 * files a progress line "report: read K of N run files" (report_progress)
 * follows every REPORT_PROGRESS_EVERY of them. 0 ok, -1 with one line in err;
 * REPORT_BADINPUT (with a line) when dir does not exist or holds no run
 * file, a run file's name or protocol.ini is refused, or none of them was
 * readable (the report listing them is still written). */
#define REPORT_PROGRESS_EVERY 50
enum { REPORT_BADINPUT = -2 };
int report_run(const char *dir, const char *outdir, char *err, size_t errlen);

/* Whether report_run draws its figures: on (nonzero, the default), or off,
 * when REPORT.md says in place of each figure that it was not drawn
 * (`--no-figures`) and figures/ is neither made nor written: a quick
 * report of a large study, the tables alone. For the whole process, as
 * figstyle_set is. */
void report_set_figures(int on);

#endif
