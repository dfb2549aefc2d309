/* gnuplot.c: the gnuplot runner and the generic figures over arrays
 * (plot_lines, plot_bars; gnuplot.h). For each figure we write NAME.dat
 * and NAME.gp next to NAME.png and run `gnuplot NAME.gp` in that directory
 * (fork/execvp, no shell) once per format, so the user can restyle and
 * rerun the script by hand. The script draws the format its variable
 * gatelab_fmt names: png (pngcairo when this gnuplot has it, else the
 * libgd png terminal), svg, or pdf (pdfcairo), all at the same size in
 * pixels (the PDF at 96 pixels an inch, as pngcairo) and the same font. */
#include "gnuplot.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "atomic_write.h"
#include "figstyle.h"
#include "gnuplot_axes.h"
#include "outpath.h"
#include "util.h"

#define FIG_W 900
#define FIG_H 540

/* ---- paths ---- */

typedef struct {
    char dir[PATH_MAX];
    char stem[256];
    char dat[PATH_MAX], gp[PATH_MAX], png[PATH_MAX], svg[PATH_MAX], pdf[PATH_MAX];
} FigPaths;

/* Split DIR/STEM.png; the stem goes into a quoted gnuplot string, so it
 * may not hold quotes or newlines. */
static int fig_paths(const char *png_path, FigPaths *fp, char *err, size_t errlen) {
    size_t len = strlen(png_path);
    if (len < 5 || strcmp(png_path + len - 4, ".png"))
        return seterr(err, errlen, "%s: output must be a .png file", png_path);
    const char *slash = strrchr(png_path, '/');
    const char *base = slash ? slash + 1 : png_path;
    size_t stem_len = strlen(base) - 4;
    if (stem_len == 0 || stem_len >= sizeof fp->stem)
        return seterr(err, errlen, "%s: bad output file name", png_path);
    if (strpbrk(base, "'\"\n\r\\"))
        return seterr(err, errlen,
                      "%s: output name may not contain quotes, "
                      "backslashes or newlines",
                      png_path);
    memcpy(fp->stem, base, stem_len);
    fp->stem[stem_len] = 0;
    if (!slash) {
        strcpy(fp->dir, ".");
    } else {
        size_t dl = (size_t)(slash - png_path);
        if (dl >= sizeof fp->dir) return seterr(err, errlen, "%s: path too long", png_path);
        memcpy(fp->dir, png_path, dl);
        fp->dir[dl] = 0;
        if (dl == 0) strcpy(fp->dir, "/");
    }
    int a = snprintf(fp->dat, sizeof fp->dat, "%s/%s.dat", fp->dir, fp->stem);
    int b = snprintf(fp->gp, sizeof fp->gp, "%s/%s.gp", fp->dir, fp->stem);
    int c = snprintf(fp->png, sizeof fp->png, "%s/%s.png", fp->dir, fp->stem);
    int d = snprintf(fp->svg, sizeof fp->svg, "%s/%s.svg", fp->dir, fp->stem);
    int e = snprintf(fp->pdf, sizeof fp->pdf, "%s/%s.pdf", fp->dir, fp->stem);
    if (a < 0 || b < 0 || c < 0 || d < 0 || e < 0 || (size_t)a >= sizeof fp->dat ||
        (size_t)b >= sizeof fp->gp || (size_t)c >= sizeof fp->png || (size_t)d >= sizeof fp->svg ||
        (size_t)e >= sizeof fp->pdf)
        return seterr(err, errlen, "%s: path too long", png_path);
    /* the one output rule (outpath.h) for all five files of the figure */
    if (outpath_check(fp->png, OUT_PNG, 1, err, errlen) != 0 ||
        outpath_check(fp->svg, OUT_SVG, 1, err, errlen) != 0 ||
        outpath_check(fp->pdf, OUT_PDF, 1, err, errlen) != 0 ||
        outpath_check(fp->dat, OUT_GNUPLOT, 1, err, errlen) != 0 ||
        outpath_check(fp->gp, OUT_GNUPLOT, 1, err, errlen) != 0)
        return -1;
    return 0;
}

/* n bytes of s as a gnuplot single-quoted string: '' stands for ',
 * newlines become spaces. */
static void gp_strn(FILE *f, const char *s, size_t n) {
    fputc('\'', f);
    for (size_t i = 0; s && i < n && s[i]; i++) {
        if (s[i] == '\'') fputs("''", f);
        else if (s[i] == '\n' || s[i] == '\r') fputc(' ', f);
        else fputc(s[i], f);
    }
    fputc('\'', f);
}

static void gp_str(FILE *f, const char *s) { gp_strn(f, s, s ? strlen(s) : 0); }

/* A title as a gnuplot string expression, broken at spaces into lines
 * that fit the --size's width (figstyle_title_chars; one line at a
 * figure's own size). Returns the number of lines. */
static int gp_title(FILE *f, const char *s) {
    size_t max = (size_t)figstyle_title_chars(), n = s ? strlen(s) : 0;
    int lines = 1;
    while (max > 0 && n > max) {
        size_t cut = max;
        while (cut > 0 && s[cut] != ' ') cut--;
        if (cut == 0) break; /* one long word: left whole */
        gp_strn(f, s, cut), fputs(".\"\\n\".", f);
        s += cut + 1, n -= cut + 1, lines++;
    }
    gp_str(f, s);
    return lines;
}

/* The terminal lines: the --size, or the page width and the shape of the
 * figure's own w x h pixels (figstyle_begin), in the --font; the PNG is
 * drawn at FIG_PNG_DPI, its fonts, lines and points scaled to match. */
static void gp_prelude(FILE *f, const FigPaths *fp, int w, int h) {
    fprintf(f,
            "# written by gatelab: edit freely, then redraw with\n"
            "#   cd %s && gnuplot %s.gp\n"
            "# (STEM.png; -e \"gatelab_fmt='svg'\" or 'pdf' draws STEM.svg or STEM.pdf)\n",
            fp->dir, fp->stem);
    figstyle_begin(w, h, 1);
    const FigStyle *fs = figstyle_get();
    const double pt = figstyle_font_pt();
    figstyle_px(w, h, &w, &h);
    const double k = fs->w_in > 0 ? FIG_PNG_DPI / FIG_PX_PER_IN : 1.0;
    const double w_in = fs->w_in > 0 ? fs->w_in : w / FIG_PX_PER_IN,
                 h_in = fs->h_in > 0 ? fs->h_in : h / FIG_PX_PER_IN;
    fprintf(f,
            "set encoding utf8\n"
            "if (!exists('gatelab_fmt')) gatelab_fmt = 'png'\n"
            "if (gatelab_fmt eq 'svg') {\n"
            "    set terminal svg size %d,%d dynamic noenhanced font 'sans,%g'\n"
            "} else { if (gatelab_fmt eq 'pdf') {\n"
            "    set terminal pdfcairo size %g in,%g in noenhanced font 'sans,%g'\n"
            "} else { if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
            "    set terminal pngcairo size %d,%d noenhanced font 'sans,%g' fontscale %g "
            "linewidth %g pointscale %g\n"
            "} else {\n"
            "    set terminal png size %d,%d noenhanced\n"
            "} } }\n",
            w, h, pt, w_in, h_in, pt, (int)lround(w_in * FIG_PX_PER_IN * k),
            (int)lround(h_in * FIG_PX_PER_IN * k), pt, k, k, k, w, h);
    /* gatelab runs the script with gatelab_out set to a temporary that
     * replaces STEM.FMT when complete; by hand it draws STEM.FMT itself */
    fprintf(f, "if (!exists('gatelab_out')) gatelab_out = '%s.'.gatelab_fmt\n", fp->stem);
    fprintf(f, "set output gatelab_out\n");
    fprintf(f, "set datafile missing 'NaN'\n");
    /* a narrow figure keeps its width for the data: the key goes below */
    fprintf(f, "set grid\nset key %s\n",
            figstyle_narrow() ? "below horizontal maxcols 2 samplen 1.5" : "outside right top");
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
        if (w > 0 && (size_t)w < sizeof buf && access(buf, X_OK) == 0) return 1;
        if (!colon) return 0;
        p = colon + 1;
    }
}

/* Keep the last non-empty line of gnuplot's stderr (its error message). */
static void last_line(char *buf, char *out, size_t outlen) {
    char *end = buf + strlen(buf);
    while (end > buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ')) *--end = 0;
    char *start = strrchr(buf, '\n');
    snprintf(out, outlen, "%s", start ? start + 1 : buf);
}

/* Run `gnuplot -e "gatelab_fmt='FMT'; gatelab_out='OUT'" STEM.gp` in
 * fp->dir, OUT being the base name of png (a file in that directory);
 * check its exit status and that a non-empty image appeared. */
static int gnuplot_into(const FigPaths *fp, const char *fmt, const char *png, char *err,
                        size_t errlen) {
    char script[300], setout[ATOMIC_TMP_MAX + 48];
    const char *base = strrchr(png, '/') ? strrchr(png, '/') + 1 : png;
    snprintf(script, sizeof script, "%s.gp", fp->stem);
    snprintf(setout, sizeof setout, "gatelab_fmt='%s'; gatelab_out='%s'", fmt, base);
    int pfd[2];
    if (pipe(pfd) != 0) return seterr(err, errlen, "gnuplot: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]), close(pfd[1]);
        return seterr(err, errlen, "gnuplot: fork: %s", strerror(errno));
    }
    if (pid == 0) {                       /* child: stdout+stderr into the pipe, stdin empty */
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* an interrupted report takes gnuplot with it */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]), close(pfd[1]);
        if (chdir(fp->dir) != 0) _exit(126);
        char *argv[] = {"gnuplot", "-e", setout, script, NULL};
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
        if (errno != EINTR) return seterr(err, errlen, "gnuplot: waitpid: %s", strerror(errno));
    char msg[512];
    last_line(out, msg, sizeof msg);
    if (!WIFEXITED(status))
        return seterr(err, errlen, "gnuplot killed by signal %d on %s", WTERMSIG(status), fp->gp);
    int code = WEXITSTATUS(status);
    if (code == 126) return seterr(err, errlen, "gnuplot: cannot enter %s", fp->dir);
    if (code == 127) return seterr(err, errlen, GNUPLOT_MISSING);
    if (code != 0)
        return seterr(err, errlen, "gnuplot failed on %s (exit %d): %s", fp->gp, code,
                      msg[0] ? msg : "no message");
    struct stat st;
    if (stat(png, &st) != 0 || st.st_size == 0)
        return seterr(err, errlen, "gnuplot wrote no %s image for %s: %s", fmt, fp->png,
                      msg[0] ? msg : "no message");
    return 0;
}

/* Draw fp's figure in each format: gnuplot writes a fresh temporary,
 * which replaces STEM.png (.svg, .pdf) only when gnuplot succeeded
 * (atomic_write.h). */
static int run_gnuplot(const FigPaths *fp, char *err, size_t errlen) {
    if (!plot_have_gnuplot()) return seterr(err, errlen, GNUPLOT_MISSING);
    const char *fmt[3] = {"png", "svg", "pdf"}, *out[3] = {fp->png, fp->svg, fp->pdf};
    for (int i = 0; i < 3; i++) {
        char tmp[ATOMIC_TMP_MAX];
        int tfd = atomic_create(out[i], tmp, sizeof tmp, err, errlen);
        if (tfd < 0) return -1;
        close(tfd);
        if (gnuplot_into(fp, fmt[i], tmp, err, errlen) != 0) {
            atomic_discard(tmp);
            return -1;
        }
        if (atomic_commit(tmp, out[i], 1, err, errlen) != 0) return -1;
    }
    return 0;
}

/* ---- generic figures ---- */

/* One block per non-empty series, blocks separated by two blank lines so
 * the script can address them with `index`. */
static int write_series_dat(const FigPaths *fp, const PlotSeries *s, int ns, char *err,
                            size_t errlen) {
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(fp->dat, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    fprintf(f, OUT_GNUPLOT_MAGIC "\n");
    for (int i = 0; i < ns; i++) {
        if (s[i].n == 0) continue;
        fprintf(f, "# %s\n# x y\n", s[i].label ? s[i].label : "");
        for (size_t k = 0; k < s[i].n; k++) {
            if (isfinite(s[i].y[k])) fprintf(f, "%.9g %.9g\n", s[i].x[k], s[i].y[k]);
            else fprintf(f, "%.9g NaN\n", s[i].x[k]);
        }
        fprintf(f, "\n\n");
    }
    return atomic_fcommit(f, tmp, fp->dat, err, errlen);
}

/* Colour, dash and point type of the k-th series of a drawn panel:
 * Okabe-Ito colours (told apart with colour-blindness), gnuplot's five
 * dash types plus one custom pattern, filled point shapes. */
static const char *const PAL[PLOT_PER_PANEL] = {"#0072B2", "#D55E00", "#009E73",
                                                "#CC79A7", "#E69F00", "#000000"};
static const char *const DASH[PLOT_PER_PANEL] = {"1", "2", "3", "4", "5", "(18,6,3,6,3,6)"};
static const int PT[PLOT_PER_PANEL] = {7, 5, 9, 11, 13, 3};

static void style_of(FILE *f, PlotStyle st, int k) {
    switch (st) {
    case PLOT_POINTS: fprintf(f, "with points pt %d ps 1.2 lc rgb '%s'", PT[k], PAL[k]); break;
    case PLOT_STEPS: fprintf(f, "with histeps lw 2 lc rgb '%s' dt %s", PAL[k], DASH[k]); break;
    default: fprintf(f, "with lines lw 2 lc rgb '%s' dt %s", PAL[k], DASH[k]);
    }
}

/* The series slot of series i within its panel: series with the same
 * nonzero colour share one; slot[i] counts from 0 per panel (-1: empty
 * series). Returns the most slots of any panel. */
static int series_slots(const PlotSeries *s, int ns, int npanels, int *slot) {
    int most = 0;
    for (int p = 0; p < npanels; p++) {
        int k = 0;
        for (int i = 0; i < ns; i++) {
            if (s[i].panel != p || s[i].n == 0) continue;
            slot[i] = -1;
            for (int j = 0; j < i && slot[i] < 0; j++)
                if (s[j].panel == p && s[j].n && s[i].color != 0 && s[j].color == s[i].color)
                    slot[i] = slot[j];
            if (slot[i] < 0) slot[i] = k++;
        }
        if (k > most) most = k;
    }
    for (int i = 0; i < ns; i++)
        if (s[i].n == 0) slot[i] = -1;
    for (int p = 0; p < npanels; p++) { /* a split panel's reference takes slot 0 */
        int k = 0, r = -1;
        for (int i = 0; i < ns; i++)
            if (s[i].panel == p) {
                k = slot[i] + 1 > k ? slot[i] + 1 : k;
                if (s[i].color == PLOT_REF && slot[i] >= 0 && r < 0) r = slot[i];
            }
        for (int i = 0; k > PLOT_PER_PANEL && r > 0 && i < ns; i++)
            if (s[i].panel == p && slot[i] >= 0 && slot[i] <= r)
                slot[i] = slot[i] == r ? 0 : slot[i] + 1;
    }
    return most;
}

/* How many slots panel p uses. */
static int slots_in(const PlotSeries *s, int ns, const int *slot, int p) {
    int k = 0;
    for (int i = 0; i < ns; i++)
        if (s[i].panel == p && slot[i] + 1 > k) k = slot[i] + 1;
    return k;
}

/* 1 when panel p is split and has a reference (series_slots: its slot 0,
 * drawn in every part). */
static int ref_of(const PlotSeries *s, int ns, const int *slot, int p) {
    if (slots_in(s, ns, slot, p) <= PLOT_PER_PANEL) return 0;
    for (int i = 0; i < ns; i++)
        if (s[i].panel == p && s[i].color == PLOT_REF && slot[i] == 0) return 1;
    return 0;
}

static int parts_of(const PlotSeries *s, int ns, const int *slot, int p) {
    int r = ref_of(s, ns, slot, p), k = slots_in(s, ns, slot, p) - r, per = PLOT_PER_PANEL - r;
    return k > 0 ? (k + per - 1) / per : 1;
}

/* The first slot of part `part` of panel p (part = its part count: one
 * past its last slot): the slots after the reference's spread evenly over
 * the parts, 13 as 4 + 4 + 5, not 6 + 6 + 1. */
static int part_start(const PlotSeries *s, int ns, const int *slot, int p, int part) {
    int r = ref_of(s, ns, slot, p);
    return r + part * (slots_in(s, ns, slot, p) - r) / parts_of(s, ns, slot, p);
}

typedef struct {
    int rows, cols;
    int grid; /* 0: one drawn panel, a single plot */
} Layout;

/* Two or fewer panels: one row each, parts side by side. More: every part
 * of every panel in reading order on a grid up to 3 wide. */
static Layout layout_of(const PlotAxes *ax, const PlotSeries *s, int ns, const int *slot) {
    Layout lo = {ax->npanels, 1, 0};
    int total = 0;
    for (int p = 0; p < ax->npanels; p++) {
        int k = parts_of(s, ns, slot, p);
        total += k;
        if (k > lo.cols) lo.cols = k;
    }
    if (ax->npanels > 2) {
        lo.cols = total < 3 ? total : 3;
        lo.rows = (total + lo.cols - 1) / lo.cols;
    }
    lo.grid = total > 1;
    return lo;
}

/* One drawn panel: part `part` of panel p's slots (part_start). */
static void write_part(FILE *f, const FigPaths *fp, const PlotAxes *ax, const PlotSeries *s, int ns,
                       const int *slot, int p, int part, int nparts) {
    const char *yl = p < 2 && ax->ylabel[p] ? ax->ylabel[p] : ax->ylabel[0];
    fprintf(f, "set ylabel "), gp_str(f, yl), fputc('\n', f);
    if (ax->panel_titles || nparts > 1) {
        char t[400];
        snprintf(t, sizeof t, "%s", ax->panel_titles ? ax->panel_titles[p] : "");
        if (nparts > 1)
            snprintf(t + strlen(t), sizeof t - strlen(t), "%s(part %d of %d)", t[0] ? " " : "",
                     part + 1, nparts);
        fprintf(f, "set title "), gp_str(f, t), fputc('\n', f);
    }
    /* lines and steps first, points over them all (with a dark rim), so
     * no later line hides a series' points; within each, the reference
     * first, so it heads the key of every part */
    int first = 1, k0 = part_start(s, ns, slot, p, part), k1 = part_start(s, ns, slot, p, part + 1),
        r = ref_of(s, ns, slot, p);
    for (int pass = 0; pass < 4; pass++) { /* points: pass / 2; reference: pass % 2 == 0 */
        int block = 0;
        for (int i = 0; i < ns; i++) {
            if (s[i].n == 0) continue;
            int ref = r && slot[i] == 0, k = ref ? 0 : slot[i] - k0 + r; /* k: its style */
            if (s[i].panel == p && (ref || (slot[i] >= k0 && slot[i] < k1)) &&
                (s[i].style == PLOT_POINTS) == pass / 2 && ref == (pass % 2 == 0)) {
                fprintf(f,
                        first ? "plot '%s.dat' index %d using 1:2 "
                              : ", \\\n     '%s.dat' index %d using 1:2 ",
                        fp->stem, block);
                style_of(f, s[i].style, k);
                fprintf(f, " title "), gp_str(f, s[i].label);
                if (pass / 2)
                    fprintf(f,
                            ", \\\n     '%s.dat' index %d using 1:2 with points pt %d ps 1.2 "
                            "lc rgb '#202020' notitle",
                            fp->stem, block, PT[k] - 1);
                first = 0;
            }
            block++;
        }
    }
    if (first) fprintf(f, "plot NaN notitle"); /* cannot happen: parts_of */
    fputc('\n', f);
}

/* At a --size, panel p's y tics at most 4 intervals apart, so a small
 * panel's labels do not touch; at a figure's own size gnuplot's. */
static void y_tics(FILE *f, const PlotAxes *ax, const PlotSeries *s, int ns, int p) {
    double lo, hi;
    if (!(figstyle_get()->h_in > 0)) return;
    double step = gp_panel_yrange(ax, s, ns, p, &lo, &hi) ? gp_nice_step(lo, hi) : 0;
    if (step > 0) fprintf(f, "set ytics %.9g\n", step);
    else fprintf(f, "set ytics autofreq\n");
}

static int write_lines_gp(const FigPaths *fp, const PlotAxes *ax, const PlotSeries *s, int ns,
                          const int *slot, char *err, size_t errlen) {
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(fp->gp, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    Layout lo = layout_of(ax, s, ns, slot);
    int w = lo.cols > 1 ? 640 * lo.cols : FIG_W, h = lo.rows > 1 ? 400 * lo.rows : FIG_H;
    gp_prelude(f, fp, w > 4000 ? 4000 : w, h > 4000 ? 4000 : h);
    fprintf(f, "set xlabel "), gp_str(f, ax->xlabel), fputc('\n', f);
    /* headroom so a series lying on 0 or 1 is not hidden by the border;
     * an axis from 0 starts at 0 exactly */
    if (ax->logy) fprintf(f, "set logscale y\n");
    else if (ax->yfrom0) fprintf(f, "set yrange [0:*]\nset offsets 0, 0, graph 0.05, 0\n");
    else fprintf(f, "set offsets 0, 0, graph 0.05, graph 0.05\n");
    /* a narrow figure's x tics must not touch either */
    double xstep = lo.cols > 1 || figstyle_narrow() ? gp_x_tic_step(s, ns) : 0;
    if (xstep > 0) fprintf(f, "set xtics %.9g\n", xstep);
    if (!lo.grid) { /* centred on the image: a long title is not cut by the key */
        fprintf(f, "set label 99 ");
        int lines = gp_title(f, ax->title);
        fprintf(f, " at screen 0.5, screen 0.965 center front\nset tmargin %d\n", 2 + lines);
        if (ax->logy) gp_log_axis(f, s, ns, 0);
        else y_tics(f, ax, s, ns, 0);
        write_part(f, fp, ax, s, ns, slot, 0, 0, 1);
        return atomic_fcommit(f, tmp, fp->gp, err, errlen);
    }
    /* explicit origins under a title band, so ragged rows stay aligned */
    double top = 0.06 * (FIG_H / (double)(h > 4000 ? 4000 : h)) + 0.02;
    double cw = 1.0 / lo.cols, rh = (1.0 - top) / lo.rows;
    fprintf(f, "set multiplot\nset label 99 ");
    gp_title(f, ax->title);
    fprintf(f, " at screen 0.5, screen %.4f center front\n", 1.0 - top / 2);
    int cell = 0;
    for (int p = 0; p < ax->npanels; p++) {
        int np = parts_of(s, ns, slot, p);
        double ylo, yhi;
        if (ax->logy) gp_log_axis(f, s, ns, p); /* every panel its own decades */
        else y_tics(f, ax, s, ns, p);
        int shared = !ax->logy && np > 1 && gp_panel_yrange(ax, s, ns, p, &ylo, &yhi);
        if (shared) fprintf(f, "set yrange [%.9g:%.9g]\n", ylo, yhi);
        if (ax->npanels <= 2) cell = p * lo.cols;
        for (int k = 0; k < np; k++, cell++) {
            int r = cell / lo.cols, c = cell % lo.cols;
            fprintf(f, "set origin %.4f, %.4f\nset size %.4f, %.4f\n", c * cw,
                    1.0 - top - (r + 1) * rh, cw, rh);
            write_part(f, fp, ax, s, ns, slot, p, k, np);
            if (cell == 0 || (p == 0 && k == 0)) fprintf(f, "unset label 99\n");
        }
        if (shared) fprintf(f, ax->yfrom0 ? "set yrange [0:*]\n" : "set autoscale y\n");
    }
    fprintf(f, "unset multiplot\n");
    return atomic_fcommit(f, tmp, fp->gp, err, errlen);
}

int plot_lines(const char *png_path, const PlotAxes *ax, const PlotSeries *s, int ns, char *err,
               size_t errlen) {
    FigPaths fp;
    if (fig_paths(png_path, &fp, err, errlen)) return -1;
    if (ax->npanels < 1 || ax->npanels > PLOT_MAX_PANELS)
        return seterr(err, errlen, "%s: npanels %d (need 1..%d)", png_path, ax->npanels,
                      PLOT_MAX_PANELS);
    for (int p = 0; p < ax->npanels; p++) {
        int have = 0;
        for (int i = 0; i < ns; i++) {
            if (s[i].panel < 0 || s[i].panel >= ax->npanels)
                return seterr(err, errlen, "%s: series %d in panel %d of %d", png_path, i,
                              s[i].panel, ax->npanels);
            if (s[i].panel == p && s[i].n > 0) have = 1;
        }
        if (!have) return seterr(err, errlen, "%s: no data to plot (panel %d)", png_path, p);
    }
    int *slot = calloc((size_t)(ns ? ns : 1), sizeof *slot);
    if (!slot) return seterr(err, errlen, "%s: out of memory", png_path);
    series_slots(s, ns, ax->npanels, slot);
    int rc = write_series_dat(&fp, s, ns, err, errlen);
    if (!rc) rc = write_lines_gp(&fp, ax, s, ns, slot, err, errlen);
    free(slot);
    return rc ? -1 : run_gnuplot(&fp, err, errlen);
}

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

static int write_bars_dat(const FigPaths *fp, const BarSpec *bs, char *err, size_t errlen) {
    const PlotBars *b = &bs->b;
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(fp->dat, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    fprintf(f, OUT_GNUPLOT_MAGIC "\n");
    fprintf(f, "# %s", b->xlabel ? b->xlabel : "category");
    for (int g = 0; g < b->ngroups; g++) {
        fprintf(f, "\t%s", b->group_labels[g]);
        if (bs->lo) fprintf(f, "\t%s min\t%s max", b->group_labels[g], b->group_labels[g]);
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
    return atomic_fcommit(f, tmp, fp->dat, err, errlen);
}

/* Wide figures grow with the bar count so bars and labels stay legible. */
static int bars_width(const BarSpec *bs) {
    if (!bs->wide) return FIG_W;
    long w = 300 + (long)bs->b.ncat * (long)(bs->b.ngroups + 1) * 8;
    return w < 1600 ? 1600 : w > 4000 ? 4000 : (int)w;
}

/* A key outside on the right is as wide as its longest label: past
 * KEY_LONG characters (a checkpoint's variant, a windowed reference) it
 * goes below the plot, so the bars keep the figure's width. */
#define KEY_LONG 32
static void bars_key(FILE *f, const PlotBars *b) {
    size_t w = 0;
    for (int g = 0; g < b->ngroups; g++)
        if (b->group_labels[g] && strlen(b->group_labels[g]) > w) w = strlen(b->group_labels[g]);
    for (int r = 0; r < b->nref; r++)
        if (b->ref_labels && b->ref_labels[r] && strlen(b->ref_labels[r]) > w)
            w = strlen(b->ref_labels[r]);
    if (w > KEY_LONG && !figstyle_narrow()) fprintf(f, "set key below horizontal\n");
}

static int write_bars_gp(const FigPaths *fp, const BarSpec *bs, char *err, size_t errlen) {
    const PlotBars *b = &bs->b;
    char tmp[ATOMIC_TMP_MAX];
    FILE *f = atomic_fopen(fp->gp, tmp, sizeof tmp, err, errlen);
    if (!f) return -1;
    gp_prelude(f, fp, bars_width(bs), bs->wide ? 640 : FIG_H);
    bars_key(f, b);
    fprintf(f, "set title "), gp_title(f, b->title), fputc('\n', f);
    fprintf(f, "set xlabel "), gp_str(f, b->xlabel), fputc('\n', f);
    fprintf(f, "set ylabel "), gp_str(f, b->ylabel), fputc('\n', f);
    fprintf(f,
            "set style data histograms\n"
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
        /* the line figures' colours; past them a hatch tells groups apart */
        fprintf(f, " lc rgb '%s'", PAL[g % PLOT_PER_PANEL]);
        if (g >= PLOT_PER_PANEL) fprintf(f, " fs pattern %d border -1", 1 + g / PLOT_PER_PANEL);
        fprintf(f, " title "), gp_str(f, b->group_labels[g]);
    }
    /* references in black, told apart by dash pattern */
    for (int r = 0; r < b->nref; r++) {
        fprintf(f, ", \\\n     %.9g with lines lt -1 dt %d lw 2 title ", b->ref[r], r + 2);
        gp_str(f, b->ref_labels[r]);
    }
    fputc('\n', f);
    return atomic_fcommit(f, tmp, fp->gp, err, errlen);
}

int plot_bars_spec(const char *png_path, const BarSpec *bs, char *err, size_t errlen) {
    const PlotBars *b = &bs->b;
    FigPaths fp;
    if (fig_paths(png_path, &fp, err, errlen)) return -1;
    if (b->ncat < 1 || b->ngroups < 1)
        return seterr(err, errlen,
                      "%s: no data to plot (%d categories, %d "
                      "groups)",
                      png_path, b->ncat, b->ngroups);
    int have = 0;
    for (size_t i = 0; i < (size_t)b->ncat * (size_t)b->ngroups; i++)
        if (isfinite(b->v[i])) have = 1;
    if (!have) return seterr(err, errlen, "%s: no data to plot", png_path);
    if (write_bars_dat(&fp, bs, err, errlen)) return -1;
    if (write_bars_gp(&fp, bs, err, errlen)) return -1;
    return run_gnuplot(&fp, err, errlen);
}

int plot_bars(const char *png_path, const PlotBars *b, char *err, size_t errlen) {
    BarSpec bs = {*b, NULL, NULL, NULL, 0};
    return plot_bars_spec(png_path, &bs, err, errlen);
}

int plot_check_png(const char *png_path, char *err, size_t errlen) {
    FigPaths fp;
    return fig_paths(png_path, &fp, err, errlen);
}
