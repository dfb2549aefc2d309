/* cmd_report.c: `gatelab report DIR [--out DIR2]` (the report itself is
 * analysis/report/report.c's report_run). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "figstyle.h"
#include "report.h"

typedef struct {
    const char *out; /* NULL: DIR */
    int no_figures;
} ReportOpts;
static const ReportOpts report_defaults = {NULL, 0};

enum { O_NOFIGURES = OPT_LONG };
static const OptRow report_rows[] = {
    {'o', "out", OPT_STR, "DIR2", 0, 0, "DIR", "where REPORT.md, results.csv and figures/ go", 0, 0,
     &report_defaults.out},
    {O_NOFIGURES, "no-figures", OPT_FLAG, NULL, 0, 0, NULL,
     "the tables alone: draw no figure (a quick look\nat a large study)", 0, 0,
     &report_defaults.no_figures},
    FIGSTYLE_OPT_ROWS,
    {0}};
const OptTable report_options = {
    .cmd = "report",
    .operands = "DIR [options]",
    .about = "Read every *.h5 run file in DIR; write REPORT.md, results.csv and\n"
             "figures/ into DIR2. Unreadable files are listed.\n",
    .rows = report_rows,
    OPT_DEFAULTS(report_defaults),
};

int cmd_report(int argc, char **argv) {
    ReportOpts o = report_defaults;
    FigStyle fs = {0};
    OptParser op;
    opt_init(&op, &report_options, argc, argv);
    for (int c; (c = opt_parse(&op, &o)) != OPT_END;) {
        if (c < 0) return opt_exit(c);
        if (figstyle_option(&fs, "report", c, op.str) != 0) return 2;
    }
    const char *out = o.out;
    char err[512] = "";
    figstyle_set(&fs);
    report_set_figures(!o.no_figures);
    int opnd = op.optind;
    if (opnd != argc - 1) {
        fprintf(stderr, "gatelab report: want exactly one DIR "
                        "(gatelab report --help)\n");
        return 2;
    }
    const char *dir = argv[opnd];
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "gatelab report: %s: %s\n", dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "gatelab report: %s: not a directory\n", dir);
        return 2;
    }
    /* the output-path rule (outpath.h) for the two files it always writes */
    char md[4200], csv[4200];
    snprintf(md, sizeof md, "%s/REPORT.md", out ? out : dir);
    snprintf(csv, sizeof csv, "%s/results.csv", out ? out : dir);
    if (cu_check_out("report", md, OUT_REPORT) < 0 || cu_check_out("report", csv, OUT_CSV) < 0)
        return 2;
    int rc = report_run(dir, out, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "gatelab report: %s\n", err);
        return rc == REPORT_BADINPUT ? 2 : 1;
    }
    printf("wrote %s/REPORT.md and %s/results.csv\n", out ? out : dir, out ? out : dir);
    return 0;
}
