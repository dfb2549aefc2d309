/* report_csv.c: results.csv, one line per readable run file, and the same
 * file read back into Rows, so that a directory holding only results.csv
 * and protocol.ini gives the same REPORT.md tables as its run files did.
 * Its columns: the run's names and seed, every metric of metric_table.c,
 * the protocol hash, the text columns of TEXT_COLS, the config values of
 * CFG_KEYS, then the architecture keys (runstats.h RS_ARCH_KEY), each as
 * "cfg_<key>". A results.csv without an architecture column reads as the
 * paper's architecture there (row_blank). */
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
#include "report.h"
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

/* The columns that are not metrics: LEAD ones open each line, the others
 * follow the metrics. Text, except seed. The file column is Row.file (the
 * base name); read back, it is put after the directory in Row.path. */
typedef struct {
    const char *name;
    size_t off, size;
    int lead, is_ll;
} NamedCol;
#define TEXT(name, field, lead)                                                                    \
    { name, offsetof(Row, field), sizeof((Row *)0)->field, lead, 0 }
/* quant_<mode>_source: the mode's source of the largest damage by name
 * (eval --quant-source; docs/metrics.md "Quantized evaluation") */
#define Q_SOURCE_COL(name_, mode_)                                                                 \
    {"quant_" name_ "_source", offsetof(Row, q_source[(mode_)-1]), Q_SOURCE_LEN, 0, 0},
static const NamedCol NAMED[] = {TEXT("file", path, 1),
                                 TEXT("run", run, 1),
                                 TEXT("variant", variant, 1),
                                 TEXT("data", data, 1),
                                 {"seed", offsetof(Row, seed), sizeof(long long), 1, 1},
                                 TEXT("status", status, 1),
                                 TEXT("protocol_hash", protocol_hash, 0),
                                 TEXT("normaliser", normaliser, 0),
                                 TEXT("probe_error", probe_err, 0),
                                 Q_MODES(Q_SOURCE_COL)};
#define N_NAMED ((int)(sizeof NAMED / sizeof NAMED[0]))
#define CFG_PREFIX "cfg_"    /* + a CFG_KEYS or RS_ARCH_KEY key: that /config value */
#define SPIKES "spike_steps" /* the steps of the first MAX_SPIKE_STEPS spikes */

/* A double as the shortest of %.15g and %.17g that reads back to the same
 * bits, so that results.csv alone gives the same statistics. */
static void put_real(FILE *f, double v) {
    char b[40];
    snprintf(b, sizeof b, "%.15g", v);
    if (strtod(b, NULL) != v) snprintf(b, sizeof b, "%.17g", v);
    fputs(b, f);
}

/* ",value" of metric m of row w as its kind writes it (blank: unknown). */
static void csv_metric(FILE *f, const Row *w, const MetricCol *m) {
    const char *at = (const char *)w + m->off;
    fputc(',', f);
    switch (m->kind) {
    case MK_LL: fprintf(f, "%lld", *(const long long *)at); break;
    case MK_FLAG:
    case MK_INT:
        if (*(const int *)at >= 0) fprintf(f, "%d", *(const int *)at);
        break;
    case MK_REAL:
    case MK_WHOLE: {
        double v = *(const double *)at;
        if (isfinite(v) && m->kind == MK_WHOLE) fprintf(f, "%.0f", v);
        else if (isfinite(v)) put_real(f, v);
        break;
    }
    }
}

/* The named columns with lead == lead, each after a comma unless first. */
static void put_named(FILE *f, const Row *w, int lead, int first) {
    for (int k = 0; k < N_NAMED; k++) {
        if (NAMED[k].lead != lead) continue;
        const char *at = (const char *)w + NAMED[k].off;
        if (!w) fprintf(f, "%s%s", first ? "" : ",", NAMED[k].name);
        else if (NAMED[k].is_ll) fprintf(f, "%s%lld", first ? "" : ",", *(const long long *)at);
        else csv_field(f, k == 0 ? w->file : at, first);
        first = 0;
    }
}

int write_csv(const char *path, const Row *rows, int n, char *err, size_t errlen) {
    if (outpath_check(path, OUT_CSV, 1, err, errlen) != 0) return -1;
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    char name[128];
    put_named(f, NULL, 1, 1);
    for (int k = 0; metric_at(k); k++) {
        metric_name(metric_at(k), name, sizeof name);
        fprintf(f, ",%s", name);
    }
    put_named(f, NULL, 0, 0);
    fputs("," SPIKES, f);
    for (int k = 0; k < N_CFG; k++) fprintf(f, "," CFG_PREFIX "%s", CFG_KEYS[k]);
    for (int k = 0; k < RS_N_ARCH; k++) fprintf(f, "," CFG_PREFIX "%s", RS_ARCH_KEY[k]);
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        const Row *w = &rows[i];
        if (!w->ok) continue; /* unreadable files are listed in REPORT.md */
        put_named(f, w, 1, 1);
        for (int k = 0; metric_at(k); k++) csv_metric(f, w, metric_at(k));
        put_named(f, w, 0, 0);
        fputc(',', f);
        int spikes = isfinite(w->spikes) ? (int)w->spikes : 0;
        for (int k = 0; k < spikes && k < MAX_SPIKE_STEPS; k++)
            fprintf(f, "%s%lld", k ? " " : "", w->spike_steps[k]);
        for (int k = 0; k < N_CFG; k++) {
            fputc(',', f);
            if (isfinite(w->cfg[k])) put_real(f, w->cfg[k]);
        }
        for (int k = 0; k < RS_N_ARCH; k++) csv_field(f, w->arch[k], 0);
        fputc('\n', f);
    }
    return atomic_fcommit(f, tmp, path, err, errlen);
}

/* ---- results.csv read back ---- */

#define CSV_MAX ((size_t)256 << 20) /* a larger results.csv is refused */
#define CSV_COLS 256

/* The next field of the record at *p (RFC 4180: quoted with doubled inner
 * quotes, or bare), unquoted in place and NUL-ended; *p moves past its
 * comma. *end is set when the field ends its record (a newline or the end
 * of the text). NULL on a quote that never closes. */
static char *csv_next(char **p, int *end) {
    char *s = *p, *out = s, *start = s;
    if (*s == '"') {
        for (s++;; s++) {
            if (!*s) return NULL;
            if (*s == '"' && s[1] != '"') break;
            if (*s == '"') s++;
            *out++ = *s;
        }
        s++;
    } else {
        while (*s && *s != ',' && *s != '\n' && *s != '\r') *out++ = *s++;
    }
    if (*s == '\r') s++;
    *end = *s != ',';
    if (*s) s++;
    *out = '\0';
    *p = s;
    return start;
}

/* The fields of the record at *p into f[CSV_COLS]; how many, 0 at the end
 * of the text, -1 on a malformed record (an open quote, too many
 * fields). */
static int csv_record(char **p, char **f) {
    if (!**p) return 0;
    int n = 0, end = 0;
    while (!end) {
        if (n == CSV_COLS || !(f[n] = csv_next(p, &end))) return -1;
        n++;
    }
    return n;
}

/* Field v of column named col into row w; m is metric_find(col), looked
 * up once per column. -1 when v does not parse as that column's value or
 * does not fit. Unknown columns are ignored (a newer build's). */
static int csv_put(Row *w, const char *col, const MetricCol *m, const char *v) {
    char *end = (char *)v;
    if (m) {
        char *at = (char *)w + m->off;
        if (m->kind == MK_LL) *(long long *)at = strtoll(v, &end, 10);
        else if (m->kind == MK_FLAG || m->kind == MK_INT)
            *(int *)at = *v ? (int)strtol(v, &end, 10) : -1;
        else *(double *)at = *v ? strtod(v, &end) : NAN;
        return *end || (m->kind == MK_LL && !*v) ? -1 : 0;
    }
    for (int k = 0; k < N_NAMED; k++) {
        if (strcmp(col, NAMED[k].name)) continue;
        char *at = (char *)w + NAMED[k].off;
        if (NAMED[k].is_ll) return (*(long long *)at = strtoll(v, &end, 10)), *v && !*end ? 0 : -1;
        return snprintf(at, NAMED[k].size, "%s", v) < (int)NAMED[k].size ? 0 : -1;
    }
    size_t np = strlen(CFG_PREFIX);
    for (int k = 0; k < N_CFG; k++)
        if (!strncmp(col, CFG_PREFIX, np) && !strcmp(col + np, CFG_KEYS[k]))
            return (w->cfg[k] = *v ? strtod(v, &end) : NAN), *end ? -1 : 0;
    for (int k = 0; k < RS_N_ARCH; k++) /* blank: the paper's, as row_blank left it */
        if (!strncmp(col, CFG_PREFIX, np) && !strcmp(col + np, RS_ARCH_KEY[k])) {
            if (strlen(v) >= RS_ARCH_LEN) return -1;
            if (*v) table_name(w->arch[k], RS_ARCH_LEN, v); /* shown as text (runname.h) */
            return 0;
        }
    if (!strcmp(col, SPIKES)) {
        int k = 0;
        for (const char *s = v; *s && k < MAX_SPIKE_STEPS; k++, s = end)
            if (w->spike_steps[k] = strtoll(s, &end, 10), end == s) return -1;
        return 0;
    }
    return 0;
}

/* See report_priv.h. */
int csv_read_rows(const char *dir, const char *path, Row **out, int *n, char *err, size_t errlen) {
    size_t len;
    *out = NULL, *n = 0;
    char *text = input_slurp(path, CSV_MAX, &len, err, errlen);
    if (!text) return REPORT_BADINPUT;
    char *p = text, *head[CSV_COLS], *f[CSV_COLS];
    int nh = strlen(text) == len ? csv_record(&p, head) : -1, lines = 1, rc = 0;
    if (nh <= 0 || strcmp(head[0], NAMED[0].name)) {
        free(text);
        return seterr(err, errlen,
                      "%s: not a results.csv of gatelab report (its first column "
                      "is not 'file')",
                      path),
               REPORT_BADINPUT;
    }
    const MetricCol *hm[CSV_COLS];
    for (int j = 0; j < nh; j++) hm[j] = metric_find(head[j]);
    for (const char *s = p; *s; s++) lines += *s == '\n';
    Row *rows = calloc((size_t)lines, sizeof *rows);
    int k = 0;
    for (int line = 2, nf; rows && rc == 0 && (nf = csv_record(&p, f)) != 0; line++) {
        if (nf != nh) {
            rc = seterr(err, errlen, "%s:%d: %d fields where the header has %d", path, line,
                        nf < 0 ? 0 : nf, nh);
            break;
        }
        Row *w = &rows[k];
        row_blank(w);
        for (int j = 0; j < nh && rc == 0; j++)
            if (csv_put(w, head[j], hm[j], f[j]) != 0)
                rc = seterr(err, errlen, "%s:%d: column %s: '%.80s' is not its kind of value", path,
                            line, head[j], f[j]);
        for (int q = 0; q < Q_NMODES; q++) /* a results.csv from before the flag */
            w->q_destroyed[q] = q_destroyed_flag(w->q_destroyed[q], w->q_dloss[q]);
        char file[256];
        snprintf(file, sizeof file, "%s", w->path);
        if (rc == 0 && (!name_plain(file) || strchr(file, '/')))
            rc = seterr(err, errlen, "%s:%d: file '%.80s' is not a run file's name", path, line,
                        file);
        snprintf(w->path, sizeof w->path, "%s/%s", dir, file);
        w->file = strrchr(w->path, '/') + 1;
        w->ok = 1;
        w->from_csv = 1;
        k++;
    }
    free(text);
    if (!rows) return seterr(err, errlen, "out of memory"), -1;
    if (rc != 0 || k == 0) {
        if (rc == 0) seterr(err, errlen, "%s: no rows", path);
        free(rows);
        return REPORT_BADINPUT;
    }
    *out = rows, *n = k;
    return 0;
}
