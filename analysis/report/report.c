/* report.c: `gatelab report DIR`: REPORT.md + results.csv + figures over
 * every run file in a directory. Each run is reduced to one Row
 * (report_rows.c), rows are grouped by run name (runname.h: the file stem
 * without its _s<seed>; mean +- std over seeds), so one variant trained on
 * two data sources or at two learning rates stays two groups. ΔPPL
 * compares a group with the baseline group trained on the same data with
 * the same seq_len, lr and steps. The paper's own figures
 * (paper_tables.c) are set beside ours as clearly labelled reference data.
 * This file puts the pieces together: results.csv (report_csv.c), the
 * REPORT.md tables (report_md.c), figures (report_figs.c), the
 * long-context and stability sections (report_longctx.c,
 * report_stability.c); REPORT.md's sections are one table, SECTIONS, in
 * the order they are written, each over one context (MdCtx). */
#include "report.h"
#include "protocol_check.h"
#include "report_confirm.h"
#include "report_mechanism.h"
#include "report_sections.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h" /* variant_key */
#include "atomic_write.h"
#include "heatmap.h"
#include "metrics.h"
#include "outpath.h"
#include "plot.h"
#include "report_priv.h"
#include "runfile_read.h"
#include "runname.h"
#include "runstats.h"
#include "util.h"

/* ---- entry points ---- */

/* Every arm of the protocol at path is the run name of a run file here;
 * else -1 with "PATH:LINE: ..." naming the first arm that is not. */
static int arms_are_runs(const char *path, const Protocol *pr, const Row *rows, int n, char *err,
                         size_t errlen) {
    for (int c = 0; c < pr->n_compares; c++)
        for (int side = 0; side < 2; side++) {
            const char *arm = side ? pr->compares[c].ref : pr->compares[c].arm;
            int found = 0;
            for (int i = 0; i < n && !found; i++) found = !strcmp(rows[i].run, arm);
            if (!found)
                return seterr(err, errlen,
                              "%s:%d: compare = %s vs %s: '%s' is the run name of no run file "
                              "here",
                              path, pr->compares[c].line, pr->compares[c].arm, pr->compares[c].ref,
                              arm);
        }
    return 0;
}

/* The rows of rows[n] that are run files, as a malloc'd copy (*ns of
 * them; NULL when out of memory): in a joined report (report_join.c) the
 * rows of results.csv are left out, and the baselines matched among the
 * rest. */
static Row *run_file_rows(const Row *rows, int n, int *ns) {
    Row *sub = malloc((size_t)(n ? n : 1) * sizeof *sub);
    *ns = 0;
    for (int i = 0; sub && i < n; i++)
        if (!rows[i].from_csv) sub[(*ns)++] = rows[i];
    for (int i = 0; sub && i < *ns; i++) sub[i].file = strrchr(sub[i].path, '/') + 1;
    if (sub && *ns < n) fill_dppl(sub, *ns);
    return sub;
}

/* What every section of REPORT.md is written from. */
typedef struct {
    FILE *f;
    const char *dir, *outdir, *figdir; /* the runs' directory, the report's, its figures' */
    const Row *rows;                   /* every row, from_csv of them rows of results.csv */
    int n, from_csv;
    const Protocol *proto, *sec; /* the [primary] and [secondary] families (NULL: none) */
    int trained;                 /* some row trained (or none at all): else checkpoints only */
    const Row *sub;              /* the rows that are run files, baselines matched among them */
    int ns;
    const char *const *paths; /* the readable run files among sub, np of them */
    int np;
} MdCtx;

/* When a section is written: always, with a protocol, when something
 * was trained, when some row is a run file, when those could be listed. */
typedef enum { ON_ALWAYS, ON_PROTOCOL, ON_TRAINED, ON_RUN_FILES, ON_PATHS } MdWhen;

typedef struct {
    const char *name; /* what it is, for a reader of this table */
    void (*write)(const MdCtx *c);
    MdWhen when;
    const char *progress; /* the progress line before it (NULL: none) */
} MdSection;

/* The sections as MdSection.write calls them: each passes the context's
 * fields its section reads (report_priv.h, report_sections.h). */
static void s_title(const MdCtx *c) { md_title(c->f, c->dir, c->rows, c->n, c->from_csv); }
static void s_confirm(const MdCtx *c) { report_confirm(c->f, c->rows, c->n, c->proto, c->sec); }
static void s_settings(const MdCtx *c) { md_settings(c->f, c->rows, c->n); }
static void s_variants(const MdCtx *c) { md_variants(c->f, c->rows, c->n); }
static void s_compare(const MdCtx *c) { md_compare(c->f, c->rows, c->n, c->proto); }
static void s_massive(const MdCtx *c) { md_massive(c->f, c->rows, c->n); }
static void s_compute(const MdCtx *c) { md_compute(c->f, c->rows, c->n); }
static void s_paper(const MdCtx *c) { md_paper(c->f, c->rows, c->n); }
static void s_runs(const MdCtx *c) { md_runs(c->f, c->rows, c->n); }
static void s_figures(const MdCtx *c) { md_figures(c->f, c->outdir, c->sub, c->ns); }
static void s_lr(const MdCtx *c) { md_lr_sensitivity(c->f, c->outdir, c->rows, c->n); }
static void s_quant(const MdCtx *c) { md_quant(c->f, c->rows, c->n); }
static void s_probes(const MdCtx *c) { md_probes(c->f, c->rows, c->n); }
static void s_longctx(const MdCtx *c) { report_longctx(c->f, c->figdir, c->rows, c->n); }
static void s_needle(const MdCtx *c) { md_needle(c->f, c->rows, c->n); }
static void s_stability(const MdCtx *c) { report_stability(c->f, c->figdir, c->paths, c->np); }
static void s_pretrained(const MdCtx *c) { report_pretrained(c->f, c->paths, c->np); }
static void s_stream(const MdCtx *c) { report_stream(c->f, c->paths, c->np); }
static void s_mechanism(const MdCtx *c) { report_mechanism(c->f, c->figdir, c->paths, c->np); }
static void s_definitions(const MdCtx *c) { md_definitions(c->f); }

/* REPORT.md's sections in the order they are written: adding one is a
 * row here. */
static const MdSection SECTIONS[] = {
    {.name = "title", .write = s_title, .when = ON_ALWAYS, .progress = "tables and statistics"},
    {.name = "headline (confirmatory)", .write = s_confirm, .when = ON_PROTOCOL},
    {.name = "settings", .write = s_settings, .when = ON_ALWAYS},
    {.name = "variants", .write = s_variants, .when = ON_ALWAYS},
    {.name = "exploratory comparisons", .write = s_compare, .when = ON_TRAINED},
    {.name = "massive activations", .write = s_massive, .when = ON_ALWAYS},
    {.name = "compute", .write = s_compute, .when = ON_TRAINED},
    {.name = "ours beside the paper", .write = s_paper, .when = ON_TRAINED},
    {.name = "runs", .write = s_runs, .when = ON_ALWAYS},
    {.name = "figures", .write = s_figures, .when = ON_RUN_FILES},
    {.name = "learning-rate sensitivity", .write = s_lr, .when = ON_ALWAYS},
    {.name = "quantization", .write = s_quant, .when = ON_ALWAYS},
    {.name = "probe measures across seeds", .write = s_probes, .when = ON_ALWAYS},
    {.name = "long context", .write = s_longctx, .when = ON_ALWAYS},
    {.name = "needle", .write = s_needle, .when = ON_ALWAYS},
    {.name = "stability",
     .write = s_stability,
     .when = ON_PATHS,
     .progress = "stability, pretrained, stream and mechanism sections"},
    {.name = "pretrained", .write = s_pretrained, .when = ON_PATHS},
    {.name = "stream", .write = s_stream, .when = ON_PATHS},
    {.name = "mechanism", .write = s_mechanism, .when = ON_PATHS},
    {.name = "definitions", .write = s_definitions, .when = ON_ALWAYS},
};

/* 1 when a section of when is written from c. */
static int md_on(MdWhen when, const MdCtx *c) {
    switch (when) {
    case ON_ALWAYS: return 1;
    case ON_PROTOCOL: return c->proto != NULL;
    case ON_TRAINED: return c->trained;
    case ON_RUN_FILES: return c->ns > 0;
    case ON_PATHS: return c->ns > 0 && c->paths != NULL;
    }
    return 0;
}

/* REPORT.md at path over rows[n], of which from_csv are rows of
 * results.csv (all of them: no run file here; fewer: a joined report):
 * every row of SECTIONS whose condition holds, in order. */
static int write_md(const char *path, const char *dir, const char *outdir, const Row *rows, int n,
                    int from_csv, const Protocol *proto, const Protocol *sec, char *err,
                    size_t errlen) {
    if (outpath_check(path, OUT_REPORT, 1, err, errlen) != 0) return -1;
    int ns = 0;
    Row *sub = from_csv < n ? run_file_rows(rows, n, &ns) : NULL;
    if (from_csv < n && !sub) return seterr(err, errlen, "out of memory");
    const char **paths = ns ? calloc((size_t)ns, sizeof *paths) : NULL;
    int np = 0;
    for (int i = 0; paths && i < ns; i++)
        if (sub[i].ok) paths[np++] = sub[i].path;
    char tmp[ATOMIC_TMP_MAX], figdir[1100];
    snprintf(figdir, sizeof figdir, "%s/figures", outdir);
    FILE *f = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (!f) return free(paths), free(sub), -1;
    const MdCtx c = {.f = f,
                     .dir = dir,
                     .outdir = outdir,
                     .figdir = figdir,
                     .rows = rows,
                     .n = n,
                     .from_csv = from_csv,
                     .proto = proto,
                     .sec = sec,
                     .trained = rows_trained(rows, n) || !n,
                     .sub = sub,
                     .ns = ns,
                     .paths = paths,
                     .np = np};
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++) {
        if (!md_on(SECTIONS[i].when, &c)) continue;
        if (SECTIONS[i].progress) report_progress("%s", SECTIONS[i].progress);
        SECTIONS[i].write(&c);
    }
    free(paths), free(sub);
    return atomic_fcommit(f, tmp, path, err, errlen);
}

/* Every run file in dir read into *rows (n of them, unreadable ones with
 * ok = 0), with the rows of the earlier pieces of a study run in pieces
 * joined from results.csv (report_join.c); a directory with no run file
 * but a results.csv (a committed study: run files do not outlive the
 * machine) gives that file's rows. *from_csv = how many rows came from
 * results.csv. 0, REPORT_BADINPUT or -1 with one line. */
static int load_rows(const char *dir, Row **out, int *n, int *from_csv, char *err, size_t errlen) {
    char **names;
    int listed = list_runs(dir, &names, n, err, errlen);
    *from_csv = 0, *out = NULL;
    if (listed < 0) return listed;
    if (*n == 0) {
        free(names);
        char csv[1100];
        snprintf(csv, sizeof csv, "%s/results.csv", dir);
        if (access(csv, F_OK) != 0) {
            seterr(err, errlen, "%s: no *.h5 run files and no results.csv", dir);
            return REPORT_BADINPUT;
        }
        report_progress("no run files in %s: reading results.csv", dir);
        int rc = csv_read_rows(dir, csv, out, n, err, errlen);
        *from_csv = rc == 0 ? *n : 0;
        return rc;
    }
    Row *rows = calloc((size_t)*n, sizeof *rows);
    if (!rows) {
        for (int i = 0; i < *n; i++) free(names[i]);
        free(names);
        seterr(err, errlen, "out of memory");
        return -1;
    }
    report_progress("reading %d run file%s in %s", *n, *n == 1 ? "" : "s", dir);
    for (int i = 0; i < *n; i++) {
        snprintf(rows[i].path, sizeof rows[i].path, "%s/%s", dir, names[i]);
        rows[i].file = strrchr(rows[i].path, '/') + 1;
        row_read(&rows[i]);
        free(names[i]);
        if (*n > REPORT_PROGRESS_EVERY && ((i + 1) % REPORT_PROGRESS_EVERY == 0 || i + 1 == *n))
            report_progress("read %d of %d run files", i + 1, *n);
    }
    free(names);
    int rc = report_join_csv(dir, &rows, n, from_csv, err, errlen);
    if (rc != 0) free(rows), rows = NULL;
    *out = rows;
    if (*from_csv)
        report_progress("joined %d rows of %s/results.csv (runs of earlier pieces)", *from_csv,
                        dir);
    return rc;
}

int report_run(const char *dir, const char *outdir, char *err, size_t errlen) {
    if (!outdir) outdir = dir;
    int n, from_csv;
    Row *rows;
    int loaded = load_rows(dir, &rows, &n, &from_csv, err, errlen);
    if (loaded != 0) return loaded;
    qsort(rows, (size_t)n, sizeof *rows, cmp_row);
    for (int i = 0; i < n; i++) /* qsort moved the rows: re-point file */
        rows[i].file = strrchr(rows[i].path, '/') + 1;
    fill_dppl(rows, n);
    int rc = dir_make(outdir);
    if (rc) seterr(err, errlen, "%s: cannot create: %s", outdir, strerror(errno));
    char path[1100];
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/results.csv", outdir);
        rc = write_csv(path, rows, n, err, errlen);
    }
    Protocol proto, sec;
    int has_proto = 0, has_sec = 1;
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, PROTO_FILE);
        has_proto = protocol_read(path, &proto, err, errlen);
        if (has_proto == 0) has_sec = protocol_read_family(path, 1, &sec, err, errlen);
        /* a study still running (in pieces) may lack an arm's runs: its
         * report is interim (report_confirm.c), and no arm is refused */
        int interim = has_proto == 0 && protocol_runs_missing(path, rows, n) > 0;
        rc = has_proto < 0 || has_sec < 0 ||
                     (has_proto == 0 && !interim &&
                      arms_are_runs(path, &proto, rows, n, err, errlen)) ||
                     (has_sec == 0 && !interim && arms_are_runs(path, &sec, rows, n, err, errlen))
                 ? REPORT_BADINPUT
                 : 0;
    }
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/REPORT.md", outdir);
        rc = write_md(path, dir, outdir, rows, n, from_csv, has_proto == 0 ? &proto : NULL,
                      has_sec == 0 ? &sec : NULL, err, errlen);
    }
    int readable = 0;
    for (int i = 0; i < n; i++) readable += rows[i].ok;
    if (rc == 0 && readable == 0) {
        seterr(err, errlen,
               "%s: none of its %d run file(s) was readable (listed in "
               "%s/REPORT.md)",
               dir, n, outdir);
        rc = REPORT_BADINPUT;
    }
    free(rows);
    return rc;
}
