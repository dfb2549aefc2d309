/* report_csv.c: results.csv, one line per run file. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_write.h"
#include "config.h" /* variant_key */
#include "heatmap.h"
#include "metric_table.h"
#include "metrics.h"
#include "outpath.h"
#include "plot.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "runname.h"
#include "runstats.h"
#include "util.h"

/* ---- results.csv ---- */

/* One CSV field (RFC 4180): quoted, with inner quotes doubled, when it
 * holds a comma, a quote, CR or LF (a file or run name may); bare
 * otherwise. Every text field of results.csv goes through here. */
void csv_field(FILE *f, const char *s, int first) {
    if (!first) fputc(',', f);
    if (!s[strcspn(s, ",\"\r\n")]) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ",value" of metric m of row w as its kind writes it (blank: unknown). */
static void csv_metric(FILE *f, const Row *w, const MetricCol *m) {
    const char *at = (const char *)w + m->off;
    fputc(',', f);
    switch (m->kind) {
    case MK_LL: fprintf(f, "%lld", *(const long long *)at); break;
    case MK_FLAG:
        if (*(const int *)at >= 0) fprintf(f, "%d", *(const int *)at);
        break;
    case MK_REAL:
    case MK_WHOLE: {
        double v = *(const double *)at;
        if (isfinite(v)) fprintf(f, m->kind == MK_WHOLE ? "%.0f" : "%.10g", v);
        break;
    }
    }
}

int write_csv(const char *path, const Row *rows, int n, char *err, size_t errlen) {
    if (outpath_check(path, OUT_CSV, 1, err, errlen) != 0) return -1;
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    fputs("file,run,variant,data,seed,status", f);
    char name[128];
    for (int k = 0; metric_at(k); k++) {
        metric_name(metric_at(k), name, sizeof name);
        fprintf(f, ",%s", name);
    }
    fputs(",protocol_hash\n", f);
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok) continue; /* unreadable files are listed in REPORT.md */
        csv_field(f, w->file, 1);
        csv_field(f, w->run, 0);
        csv_field(f, w->variant, 0);
        csv_field(f, w->data, 0);
        fprintf(f, ",%lld", w->seed);
        csv_field(f, w->status, 0);
        for (int k = 0; metric_at(k); k++) csv_metric(f, w, metric_at(k));
        csv_field(f, w->protocol_hash, 0);
        fputc('\n', f);
    }
    return atomic_fcommit(f, tmp, path, err, errlen);
}
