/* cmd_report.c: `gatelab report DIR [--out DIR2]` (the report itself is
 * analysis/report.c's report_run). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "report.h"

static void usage(FILE *f) {
    fprintf(f, "usage: gatelab report DIR [--out DIR2]\n"
               "  Read every *.h5 run file in DIR; write REPORT.md, results.csv and\n"
               "  figures/ into DIR2 (default DIR). Unreadable files are listed.\n");
}

static const struct option report_long[] = {
    {"out", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
const CliOpts report_options = {"report", ":o:h", "", report_long};

int cmd_report(int argc, char **argv) {
    const char *out = NULL;
    int c;
    optind = 1;
    opterr = 0;
    unsigned char seen[CU_MAX_OPTS] = {0};
    while ((c = cu_getopt(&report_options, argc, argv, seen)) != -1) {
        if (c == 'o') out = optarg;
        else if (c == 'h') {
            usage(stdout);
            return 0;
        } else return cu_bad_option("report", c, argv);
    }
    if (optind != argc - 1) {
        fprintf(stderr, "gatelab report: want exactly one DIR "
                        "(gatelab report --help)\n");
        return 2;
    }
    const char *dir = argv[optind];
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
    char err[512] = "";
    int rc = report_run(dir, out, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "gatelab report: %s\n", err);
        return rc == REPORT_BADINPUT ? 2 : 1;
    }
    printf("wrote %s/REPORT.md and %s/results.csv\n", out ? out : dir, out ? out : dir);
    return 0;
}
