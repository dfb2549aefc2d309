/* cmd_metrics.c: `gatelab metrics [--json]`: the per-run metric table
 * (analysis/metric_table.c) as it is compiled in: each results.csv column,
 * its threshold, its REPORT.md header and table, and its definition. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "metric_table.h"

static void usage(FILE *f) {
    fprintf(f, "usage: gatelab metrics [--json]\n"
               "  Print the per-run metrics of results.csv and REPORT.md: each column's\n"
               "  name, its threshold, its REPORT.md header and table (1: Results by run,\n"
               "  2: Sink and activation detail, -: results.csv only) and its definition.\n"
               "  --json     machine-readable output\n");
}

static const struct option metrics_long[] = {
    {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
const CliOpts metrics_options = {"metrics", ":jh", "", metrics_long};

static int print_json(void) {
    json_t *a = json_array();
    char name[128], head[128];
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *m = metric_at(i);
        metric_name(m, name, sizeof name);
        metric_head(m, head, sizeof head);
        json_t *o = json_object();
        cj_set(o, "csv", cj_str(name));
        cj_set(o, "threshold", isnan(m->threshold) ? json_null() : json_real(m->threshold));
        cj_set(o, "report_table", json_integer(m->md_table));
        cj_set(o, "report_header", m->md_table ? cj_str(head) : json_null());
        cj_set(o, "definition", m->def ? cj_str(m->def) : json_null());
        json_array_append_new(a, o);
    }
    return cj_print("metrics", a) ? 1 : 0;
}

static int print_text(void) {
    char name[128], head[128], thr[32];
    printf("%-22s %-9s %-5s %-20s %s\n", "csv column", "threshold", "table", "REPORT.md header",
           "definition");
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *m = metric_at(i);
        metric_name(m, name, sizeof name);
        metric_head(m, head, sizeof head);
        if (isnan(m->threshold)) snprintf(thr, sizeof thr, "-");
        else snprintf(thr, sizeof thr, "%g", m->threshold);
        printf("%-22s %-9s %-5c %-20s %s\n", name, thr, m->md_table ? '0' + m->md_table : '-',
               m->md_table ? head : "-", m->def ? m->def : "-");
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int cmd_metrics(int argc, char **argv) {
    int c, json = 0;
    optind = 1;
    opterr = 0;
    unsigned char seen[CU_MAX_OPTS] = {0};
    while ((c = cu_getopt(&metrics_options, argc, argv, seen)) != -1) {
        if (c == 'j') json = 1;
        else if (c == 'h') {
            usage(stdout);
            return 0;
        } else return cu_bad_option("metrics", c, argv);
    }
    if (optind != argc) {
        fprintf(stderr, "gatelab metrics: takes no arguments, got '%s' (gatelab metrics --help)\n",
                argv[optind]);
        return 2;
    }
    return json ? print_json() : print_text();
}
