/* plot.c: figures with gnuplot. For each figure we write NAME.dat and
 * NAME.gp next to NAME.png and run `gnuplot NAME.gp` in that directory
 * (fork/execvp, no shell), so the user can restyle and rerun the script by
 * hand. The script picks pngcairo when this gnuplot has it and falls back
 * to the libgd png terminal.
 *
 * Layers: generic writers (plot_lines, plot_bars) take arrays; the figure
 * builders (fig_*) read run files through runread.h and compute the
 * metrics of shared/reference/metrics.md with metrics.h. */
#include "plot.h"
#include "runstats.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "commands.h"
#include "metrics.h"
#include "runname.h"
#include "runread.h"
#include "util.h"

#define GNUPLOT_MISSING "gnuplot not found: install it with apt-get install gnuplot-nox"
#define SINK_EPS 0.3
#define FIG_W 900
#define FIG_H 540

/* ---- paths ---- */

typedef struct {
    char dir[PATH_MAX];
    char stem[256];
    char dat[PATH_MAX], gp[PATH_MAX], png[PATH_MAX];
} FigPaths;

/* Split DIR/STEM.png; the stem goes into a quoted gnuplot string, so it
 * may not hold quotes or newlines. */
static int fig_paths(const char *png_path, FigPaths *fp, char *err,
                     size_t errlen) {
    size_t len = strlen(png_path);
    if (len < 5 || strcmp(png_path + len - 4, ".png"))
        return seterr(err, errlen, "%s: output must be a .png file", png_path);
    const char *slash = strrchr(png_path, '/');
    const char *base = slash ? slash + 1 : png_path;
    size_t stem_len = strlen(base) - 4;
    if (stem_len == 0 || stem_len >= sizeof fp->stem)
        return seterr(err, errlen, "%s: bad output file name", png_path);
    if (strpbrk(base, "'\"\n\r\\"))
        return seterr(err, errlen, "%s: output name may not contain quotes, "
                      "backslashes or newlines", png_path);
    memcpy(fp->stem, base, stem_len);
    fp->stem[stem_len] = 0;
    if (!slash) {
        strcpy(fp->dir, ".");
    } else {
        size_t dl = (size_t)(slash - png_path);
        if (dl >= sizeof fp->dir)
            return seterr(err, errlen, "%s: path too long", png_path);
        memcpy(fp->dir, png_path, dl);
        fp->dir[dl] = 0;
        if (dl == 0) strcpy(fp->dir, "/");
    }
    int a = snprintf(fp->dat, sizeof fp->dat, "%s/%s.dat", fp->dir, fp->stem);
    int b = snprintf(fp->gp, sizeof fp->gp, "%s/%s.gp", fp->dir, fp->stem);
    int c = snprintf(fp->png, sizeof fp->png, "%s/%s.png", fp->dir, fp->stem);
    if (a < 0 || b < 0 || c < 0 || (size_t)a >= sizeof fp->dat ||
        (size_t)b >= sizeof fp->gp || (size_t)c >= sizeof fp->png)
        return seterr(err, errlen, "%s: path too long", png_path);
    return 0;
}

/* Close f and report a write error (disk full etc.) naming path. */
static int close_checked(FILE *f, const char *path, char *err, size_t errlen) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return seterr(err, errlen, "%s: write failed: %s", path,
                      strerror(errno ? errno : EIO));
    return 0;
}

/* A gnuplot single-quoted string: '' stands for ', newlines become spaces. */
static void gp_str(FILE *f, const char *s) {
    fputc('\'', f);
    for (; s && *s; s++) {
        if (*s == '\'') fputs("''", f);
        else if (*s == '\n' || *s == '\r') fputc(' ', f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

static void gp_prelude(FILE *f, const FigPaths *fp, int w, int h) {
    fprintf(f, "# written by gatelab: edit freely, then redraw with\n"
               "#   cd %s && gnuplot %s.gp\n", fp->dir, fp->stem);
    fprintf(f, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
               "    set terminal pngcairo size %d,%d noenhanced font 'sans,11'\n"
               "} else {\n"
               "    set terminal png size %d,%d noenhanced\n"
               "}\n", w, h, w, h);
    fprintf(f, "set output '%s.png'\n", fp->stem);
    fprintf(f, "set datafile missing 'NaN'\n");
    fprintf(f, "set grid\nset key outside right top\n");
}

/* ---- running gnuplot ---- */

int plot_have_gnuplot(void) {
    const char *path = getenv("PATH");
    if (!path || !*path) return 0;
    char buf[PATH_MAX];
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        /* an empty PATH entry means the current directory */
        int w = n ? snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, p)
                  : snprintf(buf, sizeof buf, "./gnuplot");
        if (w > 0 && (size_t)w < sizeof buf && access(buf, X_OK) == 0)
            return 1;
        if (!colon) return 0;
        p = colon + 1;
    }
}

/* Keep the last non-empty line of gnuplot's stderr (its error message). */
static void last_line(char *buf, char *out, size_t outlen) {
    char *end = buf + strlen(buf);
    while (end > buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        *--end = 0;
    char *start = strrchr(buf, '\n');
    snprintf(out, outlen, "%s", start ? start + 1 : buf);
}

/* Run `gnuplot STEM.gp` in fp->dir; check its exit status and that a
 * non-empty PNG appeared. */
static int run_gnuplot(const FigPaths *fp, char *err, size_t errlen) {
    if (!plot_have_gnuplot()) return seterr(err, errlen, GNUPLOT_MISSING);
    if (unlink(fp->png) != 0 && errno != ENOENT)
        return seterr(err, errlen, "%s: cannot replace: %s", fp->png,
                      strerror(errno));
    char script[300];
    snprintf(script, sizeof script, "%s.gp", fp->stem);
    int pfd[2];
    if (pipe(pfd) != 0)
        return seterr(err, errlen, "gnuplot: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]), close(pfd[1]);
        return seterr(err, errlen, "gnuplot: fork: %s", strerror(errno));
    }
    if (pid == 0) { /* child: stdout+stderr into the pipe, stdin empty */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]), close(pfd[1]);
        if (chdir(fp->dir) != 0) _exit(126);
        char *argv[] = {"gnuplot", script, NULL};
        execvp("gnuplot", argv);
        _exit(127);
    }
    close(pfd[1]);
    char out[4096] = "";
    size_t used = 0;
    for (;;) { /* keep the tail of the output */
        char chunk[1024];
        ssize_t k = read(pfd[0], chunk, sizeof chunk);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        if (used + (size_t)k >= sizeof out) used = 0;
        if ((size_t)k >= sizeof out) continue;
        memcpy(out + used, chunk, (size_t)k);
        used += (size_t)k;
        out[used] = 0;
    }
    close(pfd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return seterr(err, errlen, "gnuplot: waitpid: %s", strerror(errno));
    char msg[512];
    last_line(out, msg, sizeof msg);
    if (!WIFEXITED(status))
        return seterr(err, errlen, "gnuplot killed by signal %d on %s",
                      WTERMSIG(status), fp->gp);
    int code = WEXITSTATUS(status);
    if (code == 126)
        return seterr(err, errlen, "gnuplot: cannot enter %s", fp->dir);
    if (code == 127) return seterr(err, errlen, GNUPLOT_MISSING);
    if (code != 0)
        return seterr(err, errlen, "gnuplot failed on %s (exit %d): %s",
                      fp->gp, code, msg[0] ? msg : "no message");
    struct stat st;
    if (stat(fp->png, &st) != 0 || st.st_size == 0)
        return seterr(err, errlen, "gnuplot wrote no image %s: %s", fp->png,
                      msg[0] ? msg : "no message");
    return 0;
}

/* ---- generic figures ---- */

static const char *style_clause(PlotStyle s) {
    switch (s) {
    case PLOT_POINTS: return "with points pt 7 ps 1.2";
    case PLOT_STEPS: return "with histeps lw 2";
    default: return "with lines lw 2";
    }
}

/* One block per non-empty series, blocks separated by two blank lines so
 * the script can address them with `index`. */
static int write_series_dat(const FigPaths *fp, const PlotSeries *s, int ns,
                            char *err, size_t errlen) {
    FILE *f = fopen(fp->dat, "w");
    if (!f) return seterr(err, errlen, "%s: %s", fp->dat, strerror(errno));
    for (int i = 0; i < ns; i++) {
        if (s[i].n == 0) continue;
        fprintf(f, "# %s\n# x y\n", s[i].label ? s[i].label : "");
        for (size_t k = 0; k < s[i].n; k++) {
            if (isfinite(s[i].y[k]))
                fprintf(f, "%.9g %.9g\n", s[i].x[k], s[i].y[k]);
            else
                fprintf(f, "%.9g NaN\n", s[i].x[k]);
        }
        fprintf(f, "\n\n");
    }
    return close_checked(f, fp->dat, err, errlen);
}

static int write_lines_gp(const FigPaths *fp, const PlotAxes *ax,
                          const PlotSeries *s, int ns, char *err,
                          size_t errlen) {
    FILE *f = fopen(fp->gp, "w");
    if (!f) return seterr(err, errlen, "%s: %s", fp->gp, strerror(errno));
    gp_prelude(f, fp, FIG_W, FIG_H);
    fprintf(f, "set xlabel "), gp_str(f, ax->xlabel), fputc('\n', f);
    /* headroom so a series lying on 0 or 1 is not hidden by the border */
    fprintf(f, "set offsets 0, 0, graph 0.05, graph 0.05\n");
    if (ax->npanels == 2) {
        fprintf(f, "set multiplot layout 2,1 title "), gp_str(f, ax->title);
        fputc('\n', f);
    } else {
        fprintf(f, "set title "), gp_str(f, ax->title), fputc('\n', f);
    }
    for (int p = 0; p < ax->npanels; p++) {
        fprintf(f, "set ylabel "), gp_str(f, ax->ylabel[p]), fputc('\n', f);
        int block = 0, first = 1;
        for (int i = 0; i < ns; i++) {
            if (s[i].n == 0) continue;
            if (s[i].panel == p) {
                fprintf(f, first ? "plot '%s.dat' index %d using 1:2 %s"
                                 : ", \\\n     '%s.dat' index %d using 1:2 %s",
                        fp->stem, block, style_clause(s[i].style));
                if (s[i].color > 0) fprintf(f, " lt %d", s[i].color);
                fprintf(f, " title "), gp_str(f, s[i].label);
                first = 0;
            }
            block++;
        }
        fputc('\n', f);
    }
    if (ax->npanels == 2) fprintf(f, "unset multiplot\n");
    return close_checked(f, fp->gp, err, errlen);
}

int plot_lines(const char *png_path, const PlotAxes *ax, const PlotSeries *s,
               int ns, char *err, size_t errlen) {
    FigPaths fp;
    if (fig_paths(png_path, &fp, err, errlen)) return -1;
    if (ax->npanels != 1 && ax->npanels != 2)
        return seterr(err, errlen, "%s: npanels %d (need 1 or 2)", png_path,
                      ax->npanels);
    for (int p = 0; p < ax->npanels; p++) {
        int have = 0;
        for (int i = 0; i < ns; i++) {
            if (s[i].panel < 0 || s[i].panel >= ax->npanels)
                return seterr(err, errlen, "%s: series %d in panel %d of %d",
                              png_path, i, s[i].panel, ax->npanels);
            if (s[i].panel == p && s[i].n > 0) have = 1;
        }
        if (!have)
            return seterr(err, errlen, "%s: no data to plot (panel %d)",
                          png_path, p);
    }
    if (write_series_dat(&fp, s, ns, err, errlen)) return -1;
    if (write_lines_gp(&fp, ax, s, ns, err, errlen)) return -1;
    return run_gnuplot(&fp, err, errlen);
}

/* Bars as drawn: PlotBars plus what the report's figures add. */
typedef struct {
    PlotBars b;
    const double *lo, *hi;          /* [ngroups, ncat] error bars, or NULL */
    const char *const *cat_labels;  /* [ncat] x tic labels, or NULL: 0.. */
    int wide;                       /* rotated tic labels, wider image */
} BarSpec;

/* A label as a double-quoted data-file string (no quotes inside). */
static void dat_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) fputc(*s == '"' || *s == '\n' || *s == '\t' ? '\'' : *s, f);
    fputc('"', f);
}

static void dat_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "\t%.9g", v);
    else fprintf(f, "\tNaN");
}

static int write_bars_dat(const FigPaths *fp, const BarSpec *bs, char *err,
                          size_t errlen) {
    const PlotBars *b = &bs->b;
    FILE *f = fopen(fp->dat, "w");
    if (!f) return seterr(err, errlen, "%s: %s", fp->dat, strerror(errno));
    fprintf(f, "# %s", b->xlabel ? b->xlabel : "category");
    for (int g = 0; g < b->ngroups; g++) {
        fprintf(f, "\t%s", b->group_labels[g]);
        if (bs->lo) fprintf(f, "\t%s min\t%s max", b->group_labels[g],
                            b->group_labels[g]);
    }
    fputc('\n', f);
    for (int c = 0; c < b->ncat; c++) {
        if (bs->cat_labels) dat_str(f, bs->cat_labels[c]);
        else fprintf(f, "%d", c);
        for (int g = 0; g < b->ngroups; g++) {
            size_t i = (size_t)g * (size_t)b->ncat + (size_t)c;
            dat_num(f, b->v[i]);
            if (bs->lo) dat_num(f, bs->lo[i]), dat_num(f, bs->hi[i]);
        }
        fputc('\n', f);
    }
    return close_checked(f, fp->dat, err, errlen);
}

/* Wide figures grow with the bar count so bars and labels stay legible. */
static int bars_width(const BarSpec *bs) {
    if (!bs->wide) return FIG_W;
    long w = 300 + (long)bs->b.ncat * (long)(bs->b.ngroups + 1) * 8;
    return w < 1600 ? 1600 : w > 4000 ? 4000 : (int)w;
}

static int write_bars_gp(const FigPaths *fp, const BarSpec *bs, char *err,
                         size_t errlen) {
    const PlotBars *b = &bs->b;
    FILE *f = fopen(fp->gp, "w");
    if (!f) return seterr(err, errlen, "%s: %s", fp->gp, strerror(errno));
    gp_prelude(f, fp, bars_width(bs), bs->wide ? 640 : FIG_H);
    fprintf(f, "set title "), gp_str(f, b->title), fputc('\n', f);
    fprintf(f, "set xlabel "), gp_str(f, b->xlabel), fputc('\n', f);
    fprintf(f, "set ylabel "), gp_str(f, b->ylabel), fputc('\n', f);
    fprintf(f, "set style data histograms\n"
               "set style histogram %s gap 1\n"
               "set style fill solid 0.85 border -1\n"
               "set grid noxtics ytics\n"
               "set yrange [0:*]\n"
               "set offsets 0, 0, graph 0.05, 0\n",
            bs->lo ? "errorbars lw 1" : "clustered");
    if (bs->wide) /* run names hang down from their tics */
        fprintf(f, "set xtics rotate by -45 left nomirror\n"
                   "set bmargin 9\n");
    int step = bs->lo ? 3 : 1;
    for (int g = 0; g < b->ngroups; g++) {
        int col = 2 + g * step;
        if (g == 0) fprintf(f, "plot '%s.dat' using ", fp->stem);
        else fprintf(f, ", \\\n     '' using ");
        if (bs->lo) fprintf(f, "%d:%d:%d", col, col + 1, col + 2);
        else fprintf(f, "%d", col);
        if (g == 0) fprintf(f, ":xtic(1)");
        fprintf(f, " title "), gp_str(f, b->group_labels[g]);
    }
    /* references in black, told apart by dash pattern */
    for (int r = 0; r < b->nref; r++) {
        fprintf(f, ", \\\n     %.9g with lines lt -1 dt %d lw 2 title ",
                b->ref[r], r + 2);
        gp_str(f, b->ref_labels[r]);
    }
    fputc('\n', f);
    return close_checked(f, fp->gp, err, errlen);
}

static int bars_draw(const char *png_path, const BarSpec *bs, char *err,
                     size_t errlen) {
    const PlotBars *b = &bs->b;
    FigPaths fp;
    if (fig_paths(png_path, &fp, err, errlen)) return -1;
    if (b->ncat < 1 || b->ngroups < 1)
        return seterr(err, errlen, "%s: no data to plot (%d categories, %d "
                      "groups)", png_path, b->ncat, b->ngroups);
    int have = 0;
    for (size_t i = 0; i < (size_t)b->ncat * (size_t)b->ngroups; i++)
        if (isfinite(b->v[i])) have = 1;
    if (!have) return seterr(err, errlen, "%s: no data to plot", png_path);
    if (write_bars_dat(&fp, bs, err, errlen)) return -1;
    if (write_bars_gp(&fp, bs, err, errlen)) return -1;
    return run_gnuplot(&fp, err, errlen);
}

int plot_bars(const char *png_path, const PlotBars *b, char *err,
              size_t errlen) {
    BarSpec bs = {*b, NULL, NULL, NULL, 0};
    return bars_draw(png_path, &bs, err, errlen);
}

/* ---- runs ---- */

/* Figures draw one series per group: per file for `gatelab plot` (the
 * user chose those files), per run name over its seeds for the report. */
typedef struct {
    RunReader **r;
    char (*label)[300];  /* [n] per-file label */
    int n;
    int agg;             /* groups are run names, values mean over seeds */
    int ng;
    int *grp;            /* [n] group of each run */
    char (*glabel)[300]; /* [ng] */
    unsigned char *gkey; /* [ng] drawn in line figures when subset is set */
    int subset;          /* too many groups: line figures draw key ones */
} RunSet;

/* Above this many series a line figure keeps to the key runs and a bar
 * figure puts the series on the x axis. */
#define MAX_SERIES PLOT_MAX_SERIES
#define LOSS_SMOOTH 20       /* moving-average window of report loss lines
                                (the loss figure's title says 20) */
#define LOSS_MAX_POINTS 500  /* per series in loss.dat */

static void runs_close(RunSet *rs) {
    for (int i = 0; i < rs->n; i++)
        if (rs->r[i]) runread_close(rs->r[i]);
    free(rs->r);
    free(rs->label);
    free(rs->grp);
    free(rs->glabel);
    free(rs->gkey);
    memset(rs, 0, sizeof *rs);
}

/* The name a run is known by in figures: its variant, or its run name
 * (runname.h) when another run of the same variant has a different run
 * name (baseline on bigram and baseline-brown on Brown). */
static void runs_base(const RunSet *rs, int i, char *out, size_t n) {
    const RunMeta *m = runread_meta(rs->r[i]);
    char ri[300], rj[300];
    run_name(ri, sizeof ri, m->path);
    for (int j = 0; j < rs->n; j++) {
        const RunMeta *mj = runread_meta(rs->r[j]);
        if (j == i || strcmp(mj->variant, m->variant)) continue;
        run_name(rj, sizeof rj, mj->path);
        if (strcmp(ri, rj)) {
            snprintf(out, n, "%s", ri);
            return;
        }
    }
    snprintf(out, n, "%s", m->variant[0] ? m->variant : ri);
}

/* Label each run by runs_base; add the seed when that repeats. */
static void runs_label(RunSet *rs) {
    char bi[300], bj[300];
    for (int i = 0; i < rs->n; i++) {
        const RunMeta *m = runread_meta(rs->r[i]);
        runs_base(rs, i, bi, sizeof bi);
        const char *v = bi;
        int dup = 0;
        for (int j = 0; j < rs->n && !dup; j++) {
            if (j == i) continue;
            runs_base(rs, j, bj, sizeof bj);
            dup = !strcmp(bi, bj);
        }
        if (dup)
            snprintf(rs->label[i], sizeof rs->label[i], "%.250s seed %lld", v,
                     m->seed);
        else
            snprintf(rs->label[i], sizeof rs->label[i], "%.290s", v);
    }
}

/* The paper's headline comparison: what a line figure keeps when there
 * are too many runs to tell apart. */
int plot_key_run(const char *variant, const char *status) {
    static const char *const key[] = {"baseline", "g1-elem", "g1-head"};
    for (size_t k = 0; k < sizeof key / sizeof key[0]; k++)
        if (!strcmp(variant, key[k])) return 1;
    return !strcmp(status, "diverged"); /* a failure is worth seeing */
}

int plot_key_series(int ng, unsigned char *key) {
    if (ng <= MAX_SERIES) return 0;
    int nkey = 0;
    for (int g = 0; g < ng; g++) nkey += key[g];
    for (int g = 0; !nkey && g < MAX_SERIES; g++)
        key[g] = 1; /* no key variant at all: the first few */
    return 1;
}

/* Group runs: by run name (agg) or one group per file. */
static void runs_group(RunSet *rs, int agg) {
    rs->agg = agg;
    rs->ng = 0;
    for (int i = 0; i < rs->n; i++) {
        const RunMeta *m = runread_meta(rs->r[i]);
        char name[300];
        if (agg) run_name(name, sizeof name, m->path);
        else snprintf(name, sizeof name, "%s", rs->label[i]);
        int g = -1;
        for (int j = 0; agg && j < rs->ng && g < 0; j++)
            if (!strcmp(rs->glabel[j], name)) g = j;
        if (g < 0) {
            g = rs->ng++;
            memcpy(rs->glabel[g], name, sizeof name);
            rs->gkey[g] = 0;
        }
        rs->grp[i] = g;
        if (plot_key_run(m->variant, m->status)) rs->gkey[g] = 1;
    }
    rs->subset = agg && plot_key_series(rs->ng, rs->gkey);
}

/* Whether group g is drawn in a line figure. */
static int group_shown(const RunSet *rs, int g) {
    return !rs->subset || rs->gkey[g];
}

/* Runs of group g into idx; returns how many. */
static int group_members(const RunSet *rs, int g, int *idx) {
    int m = 0;
    for (int i = 0; i < rs->n; i++)
        if (rs->grp[i] == g) idx[m++] = i;
    return m;
}

static int runs_open(RunSet *rs, char **paths, int n, int agg, char *err,
                     size_t errlen) {
    memset(rs, 0, sizeof *rs);
    if (n < 1) return seterr(err, errlen, "plot: no run files given");
    rs->r = calloc((size_t)n, sizeof *rs->r);
    rs->label = calloc((size_t)n, sizeof *rs->label);
    rs->grp = calloc((size_t)n, sizeof *rs->grp);
    rs->glabel = calloc((size_t)n, sizeof *rs->glabel);
    rs->gkey = calloc((size_t)n, sizeof *rs->gkey);
    if (!rs->r || !rs->label || !rs->grp || !rs->glabel || !rs->gkey) {
        runs_close(rs);
        return seterr(err, errlen, "plot: out of memory");
    }
    for (int i = 0; i < n; i++) {
        rs->r[i] = runread_open(paths[i], err, errlen);
        rs->n = i + 1;
        if (!rs->r[i]) {
            runs_close(rs);
            return -1;
        }
    }
    runs_label(rs);
    runs_group(rs, agg);
    return 0;
}

/* The last probe of a run; *have = 0 (and 0 returned) when it has none. */
static int last_probe(RunReader *r, RunProbe *p, int *have, char *err,
                      size_t errlen) {
    long long *steps = NULL;
    int ns = 0;
    *have = 0;
    memset(p, 0, sizeof *p);
    if (runread_probe_steps(r, &steps, &ns, err, errlen)) return -1;
    free(steps);
    if (ns == 0) return 0;
    if (runread_probe(r, -1, p, err, errlen)) return -1;
    *have = 1;
    return 0;
}

/* Builders return 0 ok, -1 error, 1 no data (err says what is missing). */
#define NO_DATA 1

/* Mean over m step series: x takes the steps of the longest; at each index
 * the series logging that same step are averaged (seeds of one run log the
 * same steps, and a shorter one is still running). Non-finite values are
 * left out; NaN where none is left. Returns the length. */
size_t plot_mean_aligned(const long long *const *st, const double *const *v,
                         const size_t *len, int m, double *x, double *y) {
    int lg = 0;
    for (int j = 1; j < m; j++)
        if (len[j] > len[lg]) lg = j;
    for (size_t k = 0; k < len[lg]; k++) {
        double sum = 0;
        int c = 0;
        for (int j = 0; j < m; j++)
            if (k < len[j] && st[j][k] == st[lg][k] && isfinite(v[j][k]))
                sum += v[j][k], c++;
        x[k] = (double)st[lg][k];
        y[k] = c ? sum / c : NAN;
    }
    return len[lg];
}

/* Centred moving average over w points, skipping NaN, into y (tmp[n]). */
static void smooth(double *y, size_t n, int w, double *tmp) {
    size_t h = (size_t)w / 2;
    for (size_t k = 0; k < n; k++) {
        size_t a = k > h ? k - h : 0, b = k + h < n ? k + h : n - 1;
        double sum = 0;
        int c = 0;
        for (size_t j = a; j <= b; j++)
            if (isfinite(y[j])) sum += y[j], c++;
        tmp[k] = c && isfinite(y[k]) ? sum / c : NAN;
    }
    memcpy(y, tmp, n * sizeof *y);
}

/* Keep at most max evenly spaced points (first and last included). */
static size_t subsample(double *x, double *y, size_t n, size_t max) {
    if (n <= max || max < 2) return n;
    for (size_t j = 0; j < max; j++) {
        size_t i = j * (n - 1) / (max - 1); /* i >= j: in place is safe */
        x[j] = x[i], y[j] = y[i];
    }
    return max;
}

/* Group g's mean train loss (and val loss) into the given buffers, each
 * sized for the longest member; returns 0, or -1 out of memory. */
static int group_loss(const RunSet *rs, const RunTrain *tr, const RunEval *ev,
                      int g, double **xy, size_t *nt, size_t *nv) {
    int *idx = malloc((size_t)rs->n * sizeof *idx);
    const long long **st = malloc((size_t)rs->n * sizeof *st);
    const double **v = malloc((size_t)rs->n * sizeof *v);
    size_t *len = malloc((size_t)rs->n * sizeof *len);
    int rc = -1;
    if (!idx || !st || !v || !len) goto done;
    int m = group_members(rs, g, idx);
    size_t maxt = 0, maxv = 0;
    for (int j = 0; j < m; j++) {
        if (tr[idx[j]].n > maxt) maxt = tr[idx[j]].n;
        if (ev[idx[j]].n > maxv) maxv = ev[idx[j]].n;
    }
    for (int k = 0; k < 4; k++)
        xy[k] = malloc(((k < 2 ? maxt : maxv) + 1) * sizeof(double));
    double *tmp = malloc((maxt + 1) * sizeof(double));
    if (!xy[0] || !xy[1] || !xy[2] || !xy[3] || !tmp) {
        free(tmp);
        goto done;
    }
    for (int j = 0; j < m; j++)
        st[j] = tr[idx[j]].step, v[j] = tr[idx[j]].loss, len[j] = tr[idx[j]].n;
    *nt = plot_mean_aligned(st, v, len, m, xy[0], xy[1]);
    for (int j = 0; j < m; j++)
        st[j] = ev[idx[j]].step, v[j] = ev[idx[j]].val_loss, len[j] = ev[idx[j]].n;
    *nv = plot_mean_aligned(st, v, len, m, xy[2], xy[3]);
    if (rs->agg) { /* report: readable lines, small .dat */
        smooth(xy[1], *nt, LOSS_SMOOTH, tmp);
        *nt = subsample(xy[0], xy[1], *nt, LOSS_MAX_POINTS);
        *nv = subsample(xy[2], xy[3], *nv, LOSS_MAX_POINTS);
    }
    free(tmp);
    rc = 0;
done:
    free(idx), free(st), free(v), free(len);
    return rc;
}

/* Figure title plus what was averaged and what was left out. */
static void agg_title(const RunSet *rs, const char *base, char *out,
                      size_t n) {
    snprintf(out, n, "%s%s%s", base, rs->agg ? "; mean over seeds" : "",
             rs->subset ? "; key runs; all runs in results.csv" : "");
}

/* (a) training loss and val-loss points vs step. */
static int fig_loss(RunSet *rs, const char *png, char *err, size_t errlen) {
    int n = rs->n, ng = rs->ng, rc = -1, shown = 0;
    RunTrain *tr = calloc((size_t)n, sizeof *tr);
    RunEval *ev = calloc((size_t)n, sizeof *ev);
    PlotSeries *s = calloc((size_t)2 * (size_t)ng, sizeof *s);
    double **xy = calloc((size_t)4 * (size_t)ng, sizeof *xy);
    char (*vl)[320] = calloc((size_t)ng, sizeof *vl);
    if (!tr || !ev || !s || !xy || !vl) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) { /* only what is drawn is read */
        if (!group_shown(rs, rs->grp[i])) continue;
        if (runread_train(rs->r[i], &tr[i], err, errlen)) goto done;
        if (runread_eval(rs->r[i], &ev[i], err, errlen)) goto done;
    }
    size_t total = 0;
    for (int g = 0; g < ng; g++) {
        if (!group_shown(rs, g)) continue;
        size_t nt = 0, nv = 0;
        if (group_loss(rs, tr, ev, g, xy + 4 * g, &nt, &nv)) {
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        shown++;
        snprintf(vl[g], sizeof vl[g], "%s (val)", rs->glabel[g]);
        s[2 * g] = (PlotSeries){rs->glabel[g], xy[4 * g], xy[4 * g + 1], nt,
                                PLOT_LINES, shown, 0};
        s[2 * g + 1] = (PlotSeries){vl[g], xy[4 * g + 2], xy[4 * g + 3], nv,
                                    PLOT_POINTS, shown, 0};
        total += nt + nv;
    }
    if (total == 0) {
        rc = NO_DATA;
        seterr(err, errlen, "%s: no training metrics in any run", png);
        goto done;
    }
    char title[300];
    agg_title(rs, rs->agg ? "Loss: train (lines, 20-step average), val "
                            "(points)"
                          : "Training loss (lines) and validation loss "
                            "(points)", title, sizeof title);
    PlotAxes ax = {title, "step", {"loss (nats/token)", NULL}, 1};
    rc = plot_lines(png, &ax, s, 2 * ng, err, errlen);
done:
    for (int i = 0; tr && ev && i < n; i++) {
        runread_train_free(&tr[i]);
        runread_eval_free(&ev[i]);
    }
    for (int i = 0; xy && i < 4 * ng; i++) free(xy[i]);
    free(tr), free(ev), free(s), free(xy), free(vl);
    return rc;
}

/* Per-layer value of one probe into out[L]. */
typedef void (*LayerFn)(const RunProbe *p, double *out);

static void layer_first_share(const RunProbe *p, double *out) {
    for (int l = 0; l < p->L; l++) {
        double sum = 0;
        for (int h = 0; h < p->H; h++) sum += rs_head_share(p, l, h);
        out[l] = p->attention && p->H > 0 ? sum / p->H : NAN;
    }
}

static void layer_mact(const RunProbe *p, double *out) {
    for (int l = 0; l < p->L; l++) out[l] = p->h_max ? p->h_max[l] : NAN;
}

/* Per-group mean, min and max over member runs of per-run per-layer
 * values vals[i][L[i]] into [ng, maxL]; *spread = 1 when some group has
 * two or more runs with data (error bars worth drawing). */
static void group_layers(const RunSet *rs, double *const *vals, const int *L,
                         int maxL, double *v, double *lo, double *hi,
                         int *spread) {
    *spread = 0;
    for (int g = 0; g < rs->ng; g++)
        for (int l = 0; l < maxL; l++) {
            double sum = 0, mn = INFINITY, mx = -INFINITY;
            int c = 0;
            for (int i = 0; i < rs->n; i++) {
                if (rs->grp[i] != g || !vals[i] || l >= L[i] ||
                    !isfinite(vals[i][l]))
                    continue;
                double x = vals[i][l];
                sum += x, c++;
                if (x < mn) mn = x;
                if (x > mx) mx = x;
            }
            size_t k = (size_t)g * (size_t)maxL + (size_t)l;
            v[k] = c ? sum / c : NAN;
            lo[k] = c ? mn : NAN;
            hi[k] = c ? mx : NAN;
            if (c >= 2) *spread = 1;
        }
}

/* Draw the [ng, maxL] layer values: layers on x with a bar per group, or,
 * with many groups, groups on x (rotated names) with a bar per layer and
 * the groups without data left out. */
static int layers_draw(const RunSet *rs, const char *png, const char *title,
                       const char *ylabel, int maxL, const double *v,
                       const double *lo, const double *hi, int nref,
                       const double *ref, const char *const *refp, char *err,
                       size_t errlen) {
    int ng = rs->ng, rc = -1;
    const char **glab = calloc((size_t)ng, sizeof *glab);
    char (*lname)[32] = calloc((size_t)maxL, sizeof *lname);
    const char **llab = calloc((size_t)maxL, sizeof *llab);
    size_t cells = (size_t)ng * (size_t)maxL;
    double *t = malloc(3 * cells * sizeof(double) + 1);
    if (!glab || !lname || !llab || !t) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int g = 0; g < ng; g++) glab[g] = rs->glabel[g];
    if (ng <= MAX_SERIES) {
        BarSpec bs = {{title, "layer", ylabel, maxL, ng, glab, v, nref, ref,
                       refp}, lo, hi, NULL, 0};
        rc = bars_draw(png, &bs, err, errlen);
        goto done;
    }
    int nc = 0; /* transpose: t[l, c] for the groups with any data */
    for (int g = 0; g < ng; g++) {
        int have = 0;
        for (int l = 0; l < maxL; l++)
            have |= isfinite(v[(size_t)g * (size_t)maxL + (size_t)l]);
        if (!have) continue;
        glab[nc] = rs->glabel[g];
        for (int l = 0; l < maxL; l++) {
            size_t from = (size_t)g * (size_t)maxL + (size_t)l;
            size_t to = (size_t)l * (size_t)ng + (size_t)nc;
            t[to] = v[from];
            if (lo) t[cells + to] = lo[from], t[2 * cells + to] = hi[from];
        }
        nc++;
    }
    /* rows of t are ng apart; squeeze them to nc */
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < maxL; l++)
            memmove(t + (size_t)k * cells + (size_t)l * (size_t)nc,
                    t + (size_t)k * cells + (size_t)l * (size_t)ng,
                    (size_t)nc * sizeof(double));
    for (int l = 0; l < maxL; l++) {
        snprintf(lname[l], sizeof lname[l], "layer %d", l);
        llab[l] = lname[l];
    }
    BarSpec bs = {{title, "run", ylabel, nc, maxL, llab, t, nref, ref, refp},
                  lo ? t + cells : NULL, lo ? t + 2 * cells : NULL, glab, 1};
    rc = bars_draw(png, &bs, err, errlen);
done:
    free(glab), free(lname), free(llab), free(t);
    return rc;
}

/* (b) and (d): per-layer values from each run's last probe, one bar per
 * (layer, group); a group's bar is the mean over its runs, with min..max
 * error bars when a group has several. With with_uniform, a dashed
 * uniform-attention reference per distinct T. */
static int fig_layers(RunSet *rs, const char *png, LayerFn fn,
                      int with_uniform, const char *title, const char *ylabel,
                      char *err, size_t errlen) {
    int n = rs->n, rc = -1, maxL = 0, nref = 0;
    double **vals = calloc((size_t)n, sizeof *vals);
    int *L = calloc((size_t)n, sizeof *L);
    double ref[8];
    char reflab[8][64];
    const char *refp[8];
    double *v = NULL;
    if (!vals || !L) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        RunProbe p;
        int have;
        if (last_probe(rs->r[i], &p, &have, err, errlen)) goto done;
        if (!have) continue;
        vals[i] = malloc(((size_t)p.L + 1) * sizeof(double));
        if (!vals[i]) {
            runread_probe_free(&p);
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        fn(&p, vals[i]);
        L[i] = p.L;
        if (p.L > maxL) maxL = p.L;
        double u = uniform_first_share(p.T);
        int seen = 0;
        for (int r = 0; r < nref; r++)
            if (ref[r] == u) seen = 1;
        if (with_uniform && !seen && nref < 8) {
            ref[nref] = u;
            snprintf(reflab[nref], sizeof reflab[nref], "uniform (T=%d)", p.T);
            refp[nref] = reflab[nref];
            nref++;
        }
        runread_probe_free(&p);
    }
    if (maxL == 0) {
        rc = NO_DATA;
        seterr(err, errlen, "%s: no run has a probe yet", png);
        goto done;
    }
    size_t cells = (size_t)rs->ng * (size_t)maxL;
    v = malloc(3 * cells * sizeof(double));
    if (!v) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    int spread;
    group_layers(rs, vals, L, maxL, v, v + cells, v + 2 * cells, &spread);
    char full[300];
    snprintf(full, sizeof full, "%s%s", title,
             spread ? "; mean over seeds, error bars min..max"
                    : rs->agg ? "; mean over seeds" : "");
    rc = layers_draw(rs, png, full, ylabel, maxL, v,
                     spread ? v + cells : NULL, spread ? v + 2 * cells : NULL,
                     nref, ref, refp, err, errlen);
done:
    for (int i = 0; vals && i < n; i++) free(vals[i]);
    free(vals), free(L), free(v);
    return rc;
}

/* Per-layer normalised histogram [L, nb] of one probe's gate scores:
 * the stored [0,1] histogram for bounded gates, else a histogram of the
 * stored score sample over its own range [*lo, *hi]. */
static int gate_layer_hist(const RunProbe *p, double *hist, int nb,
                           double *lo, double *hi) {
    size_t L = (size_t)p->L;
    *lo = 0, *hi = 1;
    memset(hist, 0, L * (size_t)nb * sizeof(double));
    if (p->gate_bounded && p->gate_hist) {
        for (size_t i = 0; i < L * (size_t)nb; i++) hist[i] = p->gate_hist[i];
    } else if (p->gate_sample && p->gate_sample_n > 0) {
        size_t per = (size_t)p->gate_sample_n * (size_t)p->T *
                     (size_t)p->gate_channels;
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < L * per; i++)
            if (isfinite(p->gate_sample[i])) {
                if (p->gate_sample[i] < mn) mn = p->gate_sample[i];
                if (p->gate_sample[i] > mx) mx = p->gate_sample[i];
            }
        if (!isfinite(mn)) return -1;
        if (!(mx > mn)) mx = mn + 1;
        *lo = mn, *hi = mx;
        for (size_t l = 0; l < L; l++)
            histogram_add(hist + l * (size_t)nb, nb, mn, mx,
                          p->gate_sample + l * per, per);
    } else {
        return -1;
    }
    for (size_t l = 0; l < L; l++) {
        double sum = 0;
        for (int b = 0; b < nb; b++) sum += hist[l * (size_t)nb + (size_t)b];
        for (int b = 0; b < nb; b++)
            hist[l * (size_t)nb + (size_t)b] =
                sum > 0 ? hist[l * (size_t)nb + (size_t)b] / sum : NAN;
    }
    return 0;
}

/* (c) gate score histogram per layer, one run, last probe. */
static int fig_gate_hist(RunReader *r, const char *label, const char *png,
                         char *err, size_t errlen) {
    const int nb = RUNREAD_GATE_BINS;
    RunProbe p;
    int have, rc = -1;
    if (last_probe(r, &p, &have, err, errlen)) return -1;
    if (!have) {
        seterr(err, errlen, "%s: run has no probe yet", runread_meta(r)->path);
        return NO_DATA;
    }
    if (!p.has_gate) {
        runread_probe_free(&p);
        seterr(err, errlen, "%s: variant %s has no gate scores",
               runread_meta(r)->path, runread_meta(r)->variant);
        return NO_DATA;
    }
    size_t L = (size_t)p.L;
    double *hist = malloc(L * (size_t)nb * sizeof(double));
    double *x = malloc((size_t)nb * sizeof(double));
    PlotSeries *s = calloc(L, sizeof *s);
    char (*names)[32] = calloc(L, sizeof *names);
    double lo, hi;
    if (!hist || !x || !s || !names) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    if (gate_layer_hist(&p, hist, nb, &lo, &hi)) {
        seterr(err, errlen, "%s: probe step %lld has neither a gate "
               "histogram nor a gate sample", runread_meta(r)->path, p.step);
        goto done;
    }
    for (int b = 0; b < nb; b++) x[b] = lo + (hi - lo) * (b + 0.5) / nb;
    for (size_t l = 0; l < L; l++) {
        snprintf(names[l], sizeof names[l], "layer %zu", l);
        s[l] = (PlotSeries){names[l], x, hist + l * (size_t)nb, (size_t)nb,
                            PLOT_STEPS, 0, 0};
    }
    char title[400];
    snprintf(title, sizeof title, "Gate scores per layer: %s (step %lld%s)",
             label, p.step, p.gate_bounded ? "" : ", raw act(XW)");
    PlotAxes ax = {title, p.gate_bounded ? "gate score" : "act(XW) value",
                   {"fraction of scores", NULL}, 1};
    rc = plot_lines(png, &ax, s, (int)L, err, errlen);
done:
    runread_probe_free(&p);
    free(hist), free(x), free(s), free(names);
    return rc;
}

/* Sink rate at eps (metrics.md): indicator alpha_0 > eps per probe
 * sequence and (layer, head), averaged. Falls back to the sequence-mean
 * alpha0 (or the mean map) when per-sequence first columns are absent. */
static double sink_rate(const RunProbe *p, double eps) {
    size_t L = (size_t)p->L, H = (size_t)p->H, T = (size_t)p->T;
    size_t N = (size_t)p->N, hits = 0, total = 0;
    if (p->first_col && N > 0) {
        for (size_t i = 0; i < N * L * H; i++, total++)
            hits += alpha0_from_col(p->first_col + i * T, p->T) > eps;
    } else if (p->alpha0) {
        for (size_t i = 0; i < L * H; i++, total++) hits += p->alpha0[i] > eps;
    } else if (p->attention) {
        for (size_t i = 0; i < L * H; i++, total++)
            hits += alpha_k(p->attention + i * p->M * p->M, p->M, 0) > eps;
    }
    return total ? (double)hits / (double)total : NAN;
}

static double mean_first_share(const RunProbe *p) {
    if (!p->attention || p->L * p->H == 0) return NAN;
    size_t LH = (size_t)p->L * (size_t)p->H;
    double sum = 0;
    for (size_t i = 0; i < LH; i++) sum += rs_head_share(p, (int)(i / p->H), (int)(i % p->H));
    return sum / (double)LH;
}

/* One run's sink rate and first-token share at each probe into fresh
 * st, rate, share [*ns]. */
static int run_sink_series(RunReader *r, long long **st, double **rate,
                           double **share, size_t *ns, char *err,
                           size_t errlen) {
    int k = 0;
    *rate = *share = NULL;
    *ns = 0;
    if (runread_probe_steps(r, st, &k, err, errlen)) return -1;
    *rate = malloc(((size_t)k + 1) * sizeof(double));
    *share = malloc(((size_t)k + 1) * sizeof(double));
    if (!*rate || !*share) return seterr(err, errlen, "plot: out of memory");
    for (int j = 0; j < k; j++) {
        RunProbe p;
        if (runread_probe(r, (*st)[j], &p, err, errlen)) return -1;
        (*rate)[j] = sink_rate(&p, SINK_EPS);
        (*share)[j] = mean_first_share(&p);
        runread_probe_free(&p);
    }
    *ns = (size_t)k;
    return 0;
}

/* (e) sink rate and first-token share vs step, two stacked panels; one
 * line per group, the mean over its runs at each probe step. */
static int fig_sink_steps(RunSet *rs, const char *png, char *err,
                          size_t errlen) {
    int n = rs->n, ng = rs->ng, rc = -1, shown = 0;
    size_t any = 0;
    PlotSeries *s = calloc((size_t)2 * (size_t)ng, sizeof *s);
    double **xy = calloc((size_t)3 * (size_t)ng, sizeof *xy);
    long long **st = calloc((size_t)n, sizeof *st);
    double **rate = calloc((size_t)n, sizeof *rate);
    double **share = calloc((size_t)n, sizeof *share);
    size_t *len = calloc((size_t)n, sizeof *len);
    const long long **mst = calloc((size_t)n, sizeof *mst);
    const double **mv = calloc((size_t)n, sizeof *mv);
    size_t *mlen = calloc((size_t)n, sizeof *mlen);
    int *idx = calloc((size_t)n, sizeof *idx);
    if (!s || !xy || !st || !rate || !share || !len || !mst || !mv || !mlen ||
        !idx) {
        seterr(err, errlen, "plot: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (group_shown(rs, rs->grp[i]) &&
            run_sink_series(rs->r[i], &st[i], &rate[i], &share[i], &len[i],
                            err, errlen))
            goto done;
    for (int g = 0; g < ng; g++) {
        if (!group_shown(rs, g)) continue;
        int m = group_members(rs, g, idx);
        size_t maxn = 0;
        for (int j = 0; j < m; j++)
            if (len[idx[j]] > maxn) maxn = len[idx[j]];
        for (int k = 0; k < 3; k++)
            xy[3 * g + k] = malloc((maxn + 1) * sizeof(double));
        if (!xy[3 * g] || !xy[3 * g + 1] || !xy[3 * g + 2]) {
            seterr(err, errlen, "plot: out of memory");
            goto done;
        }
        for (int j = 0; j < m; j++)
            mst[j] = st[idx[j]], mv[j] = rate[idx[j]], mlen[j] = len[idx[j]];
        size_t k = plot_mean_aligned(mst, mv, mlen, m, xy[3 * g], xy[3 * g + 1]);
        for (int j = 0; j < m; j++) mv[j] = share[idx[j]];
        plot_mean_aligned(mst, mv, mlen, m, xy[3 * g], xy[3 * g + 2]);
        any += k;
        shown++;
        s[2 * g] = (PlotSeries){rs->glabel[g], xy[3 * g], xy[3 * g + 1], k,
                                PLOT_LINES, shown, 0};
        s[2 * g + 1] = (PlotSeries){rs->glabel[g], xy[3 * g], xy[3 * g + 2],
                                    k, PLOT_LINES, shown, 1};
    }
    if (!any) {
        rc = NO_DATA;
        seterr(err, errlen, "%s: no run has a probe yet", png);
        goto done;
    }
    char title[300];
    agg_title(rs, "Attention sinks during training", title, sizeof title);
    PlotAxes ax = {title, "step",
                   {"sink rate (alpha_0 > 0.3)", "first-token share"}, 2};
    rc = plot_lines(png, &ax, s, 2 * ng, err, errlen);
done:
    for (int i = 0; st && rate && share && i < n; i++)
        free(st[i]), free(rate[i]), free(share[i]);
    for (int i = 0; xy && i < 3 * ng; i++) free(xy[i]);
    free(s), free(xy), free(st), free(rate), free(share), free(len);
    free(mst), free(mv), free(mlen), free(idx);
    return rc;
}

/* ---- entry points ---- */

static const char *const KINDS[] = {"loss", "first-share", "gate-hist", "mact",
                                    "sink-steps"};

static int figure_on(RunSet *rs, const char *kind, const char *png, char *err,
                     size_t errlen) {
    if (!strcmp(kind, "loss")) return fig_loss(rs, png, err, errlen);
    if (!strcmp(kind, "first-share"))
        return fig_layers(rs, png, layer_first_share, 1,
                          "First-token attention share per layer (last probe)",
                          "first-token share", err, errlen);
    if (!strcmp(kind, "mact"))
        return fig_layers(rs, png, layer_mact, 0,
                          "Massive activations per layer (last probe)",
                          "max |h| of block output", err, errlen);
    if (!strcmp(kind, "sink-steps")) return fig_sink_steps(rs, png, err, errlen);
    if (!strcmp(kind, "gate-hist")) {
        if (rs->n != 1)
            return seterr(err, errlen, "plot gate-hist takes exactly one run "
                          "(got %d)", rs->n);
        return fig_gate_hist(rs->r[0], rs->label[0], png, err, errlen);
    }
    return seterr(err, errlen, "plot: unknown figure kind '%s' (loss, "
                  "first-share, gate-hist, mact, sink-steps)", kind);
}

int plot_figure(const char *kind, char **run_paths, int n,
                const char *png_path, char *err, size_t errlen) {
    RunSet rs;
    FigPaths fp;
    if (fig_paths(png_path, &fp, err, errlen)) return -1;
    if (!plot_have_gnuplot()) return seterr(err, errlen, GNUPLOT_MISSING);
    if (runs_open(&rs, run_paths, n, 0, err, errlen)) return -1;
    int rc = figure_on(&rs, kind, png_path, err, errlen);
    runs_close(&rs);
    return rc == 0 ? 0 : -1;
}

/* A variant id as a file-name piece: keep [A-Za-z0-9._-], map the rest. */
static void safe_name(char *out, size_t outlen, const char *s) {
    size_t k = 0;
    for (; *s && k + 1 < outlen; s++, k++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        out[k] = ok ? c : '_';
    }
    out[k] = 0;
    if (k == 0) snprintf(out, outlen, "run");
}

static int report_one(RunSet *rs, const char *outdir, const char *kind,
                      const char *name, char *err, size_t errlen) {
    char png[PATH_MAX];
    int w = snprintf(png, sizeof png, "%s/%s.png", outdir, name);
    if (w < 0 || (size_t)w >= sizeof png)
        return seterr(err, errlen, "%s: path too long", outdir);
    int rc = figure_on(rs, kind, png, err, errlen);
    return rc == NO_DATA ? 0 : rc;
}

static int report_gate_hists(RunSet *rs, const char *outdir, char *err,
                             size_t errlen) {
    /* one per gated group: named by variant, or by run name when two run
     * names share the variant (runs_base) */
    char v[300], vj[300];
    for (int i = 0; i < rs->n; i++) {
        runs_base(rs, i, v, sizeof v);
        int first = 1;
        for (int j = 0; j < i && first; j++) {
            runs_base(rs, j, vj, sizeof vj);
            first = strcmp(vj, v) != 0;
        }
        if (!first) continue;
        char name[300], png[PATH_MAX], base[270];
        safe_name(base, sizeof base, v);
        snprintf(name, sizeof name, "gate_hist_%s", base);
        int w = snprintf(png, sizeof png, "%s/%s.png", outdir, name);
        if (w < 0 || (size_t)w >= sizeof png)
            return seterr(err, errlen, "%s: path too long", outdir);
        int rc = fig_gate_hist(rs->r[i], rs->label[i], png, err, errlen);
        if (rc < 0) return -1; /* NO_DATA: ungated run or no probe */
    }
    return 0;
}

int plot_report_figures(const char *outdir, char **run_paths, int n,
                        char *err, size_t errlen) {
    if (!plot_have_gnuplot()) return seterr(err, errlen, GNUPLOT_MISSING);
    if (mkdir(outdir, 0777) != 0 && errno != EEXIST)
        return seterr(err, errlen, "%s: cannot create: %s", outdir,
                      strerror(errno));
    RunSet rs;
    if (runs_open(&rs, run_paths, n, 1, err, errlen)) return -1;
    int rc = 0;
    if (!rc) rc = report_one(&rs, outdir, "loss", "loss", err, errlen);
    if (!rc) rc = report_one(&rs, outdir, "first-share", "first_share_layers",
                             err, errlen);
    if (!rc) rc = report_gate_hists(&rs, outdir, err, errlen);
    if (!rc) rc = report_one(&rs, outdir, "mact", "mact_layers", err, errlen);
    if (!rc) rc = report_one(&rs, outdir, "sink-steps", "sink_vs_step", err,
                             errlen);
    runs_close(&rs);
    return rc;
}

/* ---- gatelab plot ---- */

static void plot_usage(FILE *f) {
    fprintf(f,
        "usage: gatelab plot KIND RUN.h5 [RUN2.h5 ...] --out FILE.png\n"
        "\n"
        "Draw one figure with gnuplot. FILE.dat and FILE.gp are written next\n"
        "to FILE.png so the figure can be restyled and redrawn by hand.\n"
        "\n"
        "KIND:\n"
        "  loss         training loss (lines) and val loss (points) vs step\n"
        "  first-share  first-token attention share per layer, runs side by\n"
        "               side, with the uniform-attention reference dashed\n"
        "  gate-hist    gate score histogram per layer (exactly one run)\n"
        "  mact         max |activation| per layer (M-Act), runs side by side\n"
        "  sink-steps   sink rate (eps 0.3) and first-token share vs step\n"
        "\n"
        "options:\n"
        "  -o, --out FILE.png   output image (required)\n"
        "  -h, --help           this help\n");
}

int cmd_plot(int argc, char **argv) {
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int c;
    optind = 0; /* glibc: full reset, so cmd_plot can run twice in-process */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'h': plot_usage(stdout); return 0;
        case ':':
            fprintf(stderr, "gatelab plot: %s needs a value\n", argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr, "gatelab plot: unknown option '%s' (try --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gatelab plot: missing KIND (loss, first-share, "
                "gate-hist, mact, sink-steps; try --help)\n");
        return 2;
    }
    const char *kind = argv[optind++];
    int known = 0;
    for (size_t k = 0; k < sizeof KINDS / sizeof KINDS[0]; k++)
        if (!strcmp(kind, KINDS[k])) known = 1;
    if (!known) {
        fprintf(stderr, "gatelab plot: unknown KIND '%s' (loss, first-share, "
                "gate-hist, mact, sink-steps)\n", kind);
        return 2;
    }
    int n = argc - optind;
    if (n < 1) {
        fprintf(stderr, "gatelab plot: no run files given\n");
        return 2;
    }
    if (!out) {
        fprintf(stderr, "gatelab plot: --out FILE.png is required\n");
        return 2;
    }
    size_t ol = strlen(out);
    if (ol < 5 || strcmp(out + ol - 4, ".png")) {
        fprintf(stderr, "gatelab plot: %s: output must be a .png file\n", out);
        return 2;
    }
    if (!strcmp(kind, "gate-hist") && n != 1) {
        fprintf(stderr, "gatelab plot: gate-hist takes exactly one run "
                "(got %d)\n", n);
        return 2;
    }
    for (int i = optind; i < argc; i++)
        if (!file_exists(argv[i])) {
            fprintf(stderr, "gatelab plot: %s: %s\n", argv[i], strerror(ENOENT));
            return 2;
        }
    char err[1024] = "";
    if (plot_figure(kind, argv + optind, n, out, err, sizeof err)) {
        fprintf(stderr, "gatelab plot: %s\n", err);
        return 1;
    }
    printf("wrote %s\n", out);
    return 0;
}
