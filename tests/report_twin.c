/* report_twin.c: the report over run files and over their results.csv
 * alone (report_twin.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_twin.h"
#include "testutil.h"

/* The section at heading of dir/REPORT.md, malloc'd; NULL when absent. */
static char *section_of(const char *dir, const char *heading) {
    char *md = tu_slurp_ok(tu_join(dir, "REPORT.md"), NULL), *out = tu_md_section(md, heading);
    free(md);
    return out;
}

char *report_twin_section(const char *runs_in, const char *csv_in, const char *heading) {
    char err[512] = "", runs[1024], csv[1024]; /* copies: tu_join's ring may hold the arguments */
    snprintf(runs, sizeof runs, "%s", runs_in);
    snprintf(csv, sizeof csv, "%s", csv_in);
    if (report_run(runs, NULL, err, sizeof err) != 0) fail_msg("%s: %s", runs, err);
    size_t len;
    char *text = tu_slurp_ok(tu_join(runs, "results.csv"), &len);
    tu_write_file(tu_join(csv, "results.csv"), text, len);
    if (report_run(csv, NULL, err, sizeof err) != 0) fail_msg("%s: %s", csv, err);
    char *again = tu_slurp_ok(tu_join(csv, "results.csv"), NULL);
    assert_string_equal(again, text); /* read back and written again */
    char *a = section_of(runs, heading), *b = section_of(csv, heading);
    if (!a) fail_msg("%s/REPORT.md has no section '%s'", runs, heading);
    if (!b) fail_msg("%s/REPORT.md has no section '%s'", csv, heading);
    assert_string_equal(a, b);
    free(text), free(again), free(b);
    return a;
}
