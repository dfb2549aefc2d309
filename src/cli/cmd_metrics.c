/* cmd_metrics.c: `gatelab metrics [--json]`: the per-run metric table
 * (analysis/protocol/metric_table.c) as it is compiled in: each results.csv column,
 * its threshold, its REPORT.md header and table, and its definition. */
#include <math.h>
#include <stdio.h>

#include "cliopts.h"
#include "cmdutil.h"
#include "commands.h"
#include "metric_table.h"

typedef struct {
    int json;
} MetricsOpts;
static const MetricsOpts metrics_defaults = {0};

static const OptRow metrics_rows[] = {{'j', "json", OPT_FLAG, NULL, 0, 0, NULL,
                                       "machine-readable output", 0, 0, &metrics_defaults.json},
                                      {0}};
const OptTable metrics_options = {
    .cmd = "metrics",
    .operands = "[options]",
    .about = "Print the per-run metrics of results.csv and REPORT.md: each column's\n"
             "name, its threshold, its REPORT.md header and table (1: Results by run,\n"
             "2: Sink and activation detail, -: results.csv only), whether a sweep's\n"
             "[primary] protocol may declare it (`metric = NAME`) and its definition.\n",
    .rows = metrics_rows,
    OPT_DEFAULTS(metrics_defaults),
};

static int print_json(void) {
    json_t *a = json_array();
    char name[128], head[128], def[2048];
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *m = metric_at(i);
        metric_name(m, name, sizeof name);
        metric_head(m, head, sizeof head);
        metric_def(m, def, sizeof def);
        json_t *o = json_object();
        cj_set(o, "csv", cj_str(name));
        cj_set(o, "threshold", isnan(m->threshold) ? json_null() : json_real(m->threshold));
        cj_set(o, "report_table", json_integer(m->md_table));
        cj_set(o, "report_header", m->md_table ? cj_str(head) : json_null());
        cj_set(o, "definition", m->def ? cj_str(def) : json_null());
        cj_set(o, "protocol", json_boolean(m->proto > 0));
        json_array_append_new(a, o);
    }
    return cj_print("metrics", a) ? 1 : 0;
}

static int print_text(void) {
    char name[128], head[128], thr[32], def[2048];
    printf("%-22s %-9s %-5s %-8s %-20s %s\n", "csv column", "threshold", "table", "protocol",
           "REPORT.md header", "definition");
    for (int i = 0; metric_at(i); i++) {
        const MetricCol *m = metric_at(i);
        metric_name(m, name, sizeof name);
        metric_head(m, head, sizeof head);
        metric_def(m, def, sizeof def);
        if (isnan(m->threshold)) snprintf(thr, sizeof thr, "-");
        else snprintf(thr, sizeof thr, "%g", m->threshold);
        printf("%-22s %-9s %-5c %-8s %-20s %s\n", name, thr, m->md_table ? '0' + m->md_table : '-',
               m->proto ? "yes" : "-", m->md_table ? head : "-", m->def ? def : "-");
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

int cmd_metrics(int argc, char **argv) {
    MetricsOpts o;
    int at = opt_parse_all(&metrics_options, &o, argc, argv);
    if (at < 0) return opt_exit(at);
    if (at != argc) {
        fprintf(stderr, "gatelab metrics: takes no arguments, got '%s' (gatelab metrics --help)\n",
                argv[at]);
        return 2;
    }
    return o.json ? print_json() : print_text();
}
