/* heatmap.c: causal attention maps -> PNG, SVG and PDF (cairo; the PNG
 * bytes through libpng).
 *
 * Layout (all sizes in pixels, points in SVG and PDF; tests/test_heatmap.c
 * mirrors these):
 *
 *   MARGIN | slot | GAP | slot | ... | BAR_GAP | bar | tick | labels | MARGIN
 *
 * Every slot is TITLE_H of title above an S x S square, where S is the
 * largest panel of the grid. A panel's matrix starts at
 *   x = MARGIN + c * (S + GAP),  y = MARGIN + r * (TITLE_H + S + GAP) + TITLE_H
 * with query t on rows (top = query 0) and key j on columns. Entries with
 * j > t (the future), and under a panel's sliding window the keys j <= t - W
 * it does not see, are painted MASK_GREY. A shared colour scale spans all
 * panels; the colour bar on the right runs from the top of the first
 * matrix to the bottom of the last, high values at the top.
 *
 * Cell size: style->cell pixels per entry when >= 1; otherwise automatic,
 * about 384 px per panel, and for T > 512 one pixel shows the max of a
 * block of entries (max keeps a one-column sink visible).
 *
 * style->vmin/vmax are in the data's own (linear) units, also with
 * log_scale; the colour bar labels are always linear values (its middle
 * tick on a log scale at the power of ten nearest halfway).
 *
 * style->title adds a band of TITLE_H per line on top (the grid moves down
 * by it); style->axis_labels adds a band of AXIS_W on the left ("query",
 * with query 0 at the top and T-1 at the bottom, all written
 * horizontally) and one of AXIS_H at the bottom ("0", "key position",
 * "T-1" under each bottom panel). Without them the layout above is exact.
 * Text is DejaVu Sans (fontconfig's "sans-serif") through cairo; text is
 * ASCII (other bytes are drawn as '?'). The matrices are images at the
 * panel's pixel size in all three formats, so the colours of a PNG pixel
 * and of the vector files' image are the same. */
#include "heatmap.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_write.h"
#include "outpath.h"
#include "util.h"

enum {
    MARGIN = 10,
    GAP = 16,
    FONT_PX = 13, /* text size */
    TEXT_H = 16,  /* one line of text */
    TITLE_H = TEXT_H + 8,
    BAR_GAP = 16,
    BAR_W = 16,
    TICK = 4,
    LABEL_GAP = 4,
    AUTO_PANEL = 384, /* target panel size for automatic cells */
    MAX_PANEL = 512,  /* automatic panels never exceed this */
    MAX_T = 8192,
    MAX_GRID = 64,       /* rows, cols each */
    AXIS_W = 56,         /* left band: "query" and the row tick labels */
    AXIS_H = TEXT_H + 8, /* bottom band: one line of text */
};
#define MAX_PIXELS ((size_t)64 * 1024 * 1024)
#define LOG_EPS 1e-4

static const unsigned char MASK_GREY[3] = {160, 160, 160};
static const unsigned char NAN_RGB[3] = {255, 0, 255};
#define INK 20.0 / 255.0

/* ---- text ---- */

/* s with every byte outside printable ASCII as '?', at most n-1 bytes. */
static void ascii(char *out, size_t n, const char *s) {
    size_t i = 0;
    for (; s && s[i] && i + 1 < n; i++) out[i] = s[i] >= 32 && s[i] < 127 ? s[i] : '?';
    out[i] = 0;
}

static void set_font(cairo_t *cr) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, FONT_PX);
}

static double text_w(cairo_t *cr, const char *s) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return e.x_advance;
}

/* The longest prefix of s (in bytes) no wider than w. */
static int fit_prefix(cairo_t *cr, const char *s, double w) {
    char buf[512];
    int n = (int)strlen(s), k = 0;
    if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
    while (k < n) {
        memcpy(buf, s, (size_t)k + 1);
        buf[k + 1] = 0;
        if (text_w(cr, buf) > w) break;
        k++;
    }
    return k;
}

/* Draw s in a line of TEXT_H whose top-left is (x, y); align 0 left,
 * 1 centre, 2 right of x. At most max_w wide (the rest is cut). */
static void draw_text(cairo_t *cr, double x, double y, const char *s, int align, double max_w) {
    char buf[512];
    ascii(buf, sizeof buf, s);
    buf[fit_prefix(cr, buf, max_w)] = 0;
    double w = text_w(cr, buf);
    double tx = align == 1 ? x - w / 2 : align == 2 ? x - w : x;
    cairo_set_source_rgb(cr, INK, INK, INK);
    cairo_move_to(cr, tx, y + TEXT_H - 4);
    cairo_show_text(cr, buf);
}

/* The title in lines no wider than w: one line, or two split at the last
 * space that fits (the rest is cut). Returns the line count. */
static int title_lines(cairo_t *cr, const char *title, double w, char out[2][256]) {
    char t[256];
    ascii(t, sizeof t, title);
    int n = (int)strlen(t), fit = fit_prefix(cr, t, w);
    if (fit >= n) {
        snprintf(out[0], 256, "%s", t);
        return 1;
    }
    int cut = fit;
    while (cut > 0 && t[cut] != ' ') cut--;
    if (cut == 0) cut = fit;
    snprintf(out[0], 256, "%.*s", cut, t);
    snprintf(out[1], 256, "%s", t + cut + (t[cut] == ' '));
    return 2;
}

/* ---- values and scale ---- */

static double transform(double a, int log_scale) {
    if (!log_scale) return a;
    return log10((a > 0 ? a : 0) + LOG_EPS);
}

/* The value a transformed-scale position stands for, for labels. */
static double untransform(double v, int log_scale) {
    if (!log_scale) return v;
    double a = pow(10.0, v) - LOG_EPS;
    return fabs(a) < 1e-12 ? 0.0 : a;
}

/* Whether query t of panel p sees key j: j <= t, and within its window. */
static int visible(const HeatPanel *p, size_t t, size_t j) {
    return j <= t && (p->window <= 0 || j + (size_t)p->window > t);
}

/* Colour range [lo, hi] in transformed units: explicit, or over the visible
 * (visible()), finite entries of every panel. */
static void value_range(const HeatPanel *p, int n, const HeatmapStyle *st, double *lo, double *hi) {
    int ls = st->log_scale;
    if (st->vmin < st->vmax) {
        *lo = transform(st->vmin, ls), *hi = transform(st->vmax, ls);
        return;
    }
    double mn = INFINITY, mx = -INFINITY;
    for (int k = 0; k < n; k++) {
        int T = p[k].T;
        for (int t = 0; t < T; t++)
            for (int j = 0; j <= t; j++) {
                if (!visible(&p[k], (size_t)t, (size_t)j)) continue;
                double a = p[k].A[(size_t)t * (size_t)T + (size_t)j];
                if (!isfinite(a)) continue;
                if (a < mn) mn = a;
                if (a > mx) mx = a;
            }
    }
    if (!isfinite(mn)) mn = 0, mx = 1; /* nothing finite to see */
    if (ls) {
        *lo = transform(mn, 1), *hi = transform(mx, 1);
    } else {
        *lo = mn < 0 ? mn : 0, *hi = mx;
    }
    if (!(*hi > *lo)) *hi = *lo + 1.0;
}

/* Pixel side of a panel of length T. */
static int panel_px(int T, const HeatmapStyle *st) {
    if (st->cell >= 1) return T * st->cell;
    int cell = AUTO_PANEL / T;
    if (cell >= 1) return T * cell;
    return T <= MAX_PANEL ? T : MAX_PANEL;
}

/* Colour of panel pixel (py, px): the max over the visible entries of the
 * block of entries the pixel covers; mask grey when none is visible. */
static void pixel_colour(const HeatPanel *p, int P, int py, int px, const HeatmapStyle *st,
                         double lo, double hi, unsigned char rgb[3]) {
    size_t T = (size_t)p->T;
    size_t r0 = (size_t)py * T / (size_t)P, r1 = (size_t)(py + 1) * T / (size_t)P;
    size_t c0 = (size_t)px * T / (size_t)P, c1 = (size_t)(px + 1) * T / (size_t)P;
    if (r1 <= r0) r1 = r0 + 1;
    if (c1 <= c0) c1 = c0 + 1;
    int seen = 0, bad = 0;
    double best = -INFINITY;
    for (size_t t = r0; t < r1; t++)
        for (size_t j = c0; j < c1 && j <= t; j++) {
            if (!visible(p, t, j)) continue;
            double a = p->A[t * T + j];
            seen = 1;
            if (!isfinite(a)) bad = 1;
            else if (a > best) best = a;
        }
    if (!seen) {
        memcpy(rgb, MASK_GREY, 3);
    } else if (bad && !isfinite(best)) {
        memcpy(rgb, NAN_RGB, 3);
    } else {
        double x = (transform(best, st->log_scale) - lo) / (hi - lo);
        colormap_viridis((float)x, rgb);
    }
}

/* The middle tick of the colour bar in transformed units: halfway, or on
 * a log scale the power of ten nearest halfway when it lies inside. */
static double bar_mid(double lo, double hi, int log_scale) {
    double mid = 0.5 * (lo + hi);
    if (!log_scale) return mid;
    double a = untransform(mid, 1);
    if (!(a > 0)) return mid;
    double t = transform(pow(10.0, round(log10(a))), 1);
    return t > lo && t < hi ? t : mid;
}

/* Tick labels: max, mid, min (top to bottom), as linear values. */
static void bar_labels(double lo, double hi, int log_scale, char lab[3][32]) {
    double v[3] = {hi, bar_mid(lo, hi, log_scale), lo};
    for (int i = 0; i < 3; i++)
        snprintf(lab[i], sizeof lab[i], "%.3g", untransform(v[i], log_scale));
}

/* ---- drawing: one pass over a cairo context, for every format ---- */

typedef struct {
    const HeatPanel *panels;
    int rows, cols, n, S, left, bottom, top, W, H;
    char tl[2][256], lab[3][32];
    double lo, hi;
    const HeatmapStyle *st;
} Figure;

/* Paint an RGB image (w x h, 3 bytes a pixel) at (x, y), pixel for pixel. */
static int paint_rgb(cairo_t *cr, const unsigned char *rgb, int w, int h, int x, int y) {
    cairo_surface_t *im = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    if (cairo_surface_status(im) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(im);
        return -1;
    }
    cairo_surface_flush(im);
    unsigned char *d = cairo_image_surface_get_data(im);
    int stride = cairo_image_surface_get_stride(im);
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            const unsigned char *p = rgb + ((size_t)j * (size_t)w + (size_t)i) * 3;
            uint32_t v = 0xFF000000u | (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
            memcpy(d + (size_t)j * (size_t)stride + (size_t)i * 4, &v, 4);
        }
    cairo_surface_mark_dirty(im);
    cairo_set_source_surface(cr, im, x, y);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
    cairo_surface_destroy(im);
    return 0;
}

static int draw_panel(cairo_t *cr, const HeatPanel *p, int P, int x0, int y0,
                      const HeatmapStyle *st, double lo, double hi) {
    unsigned char *rgb = malloc((size_t)P * (size_t)P * 3);
    if (!rgb) return -1;
    for (int py = 0; py < P; py++)
        for (int px = 0; px < P; px++)
            pixel_colour(p, P, py, px, st, lo, hi, rgb + ((size_t)py * (size_t)P + px) * 3);
    int rc = paint_rgb(cr, rgb, P, P, x0, y0);
    free(rgb);
    return rc;
}

static int draw_colorbar(cairo_t *cr, int x, int top, int bottom, const char lab[3][32],
                         double midf) {
    int h = bottom - top;
    unsigned char *rgb = malloc((size_t)h * BAR_W * 3);
    if (!rgb) return -1;
    for (int y = 0; y < h; y++) {
        float f = h > 1 ? (float)(h - 1 - y) / (float)(h - 1) : 1.0f;
        for (int i = 0; i < BAR_W; i++) colormap_viridis(f, rgb + ((size_t)y * BAR_W + i) * 3);
    }
    int rc = paint_rgb(cr, rgb, BAR_W, h, x, top);
    free(rgb);
    int ys[3] = {top, bottom - 1 - (int)lround(midf * (h - 1)), bottom - 1};
    for (int i = 0; i < 3; i++) {
        cairo_set_source_rgb(cr, INK, INK, INK);
        cairo_rectangle(cr, x + BAR_W, ys[i], TICK, 1);
        cairo_fill(cr);
        draw_text(cr, x + BAR_W + TICK + LABEL_GAP, ys[i] + 0.5 - TEXT_H / 2.0, lab[i], 0, 200);
    }
    return rc;
}

/* Left of a row whose matrix starts at y0 and is S tall: "0" by the first
 * query, T-1 by the last, "query" between them, right-aligned. */
static void draw_query_label(cairo_t *cr, int x1, int y0, int S, int T) {
    char last[16];
    snprintf(last, sizeof last, "%d", T - 1);
    draw_text(cr, x1, y0 - 3, "0", 2, AXIS_W);
    draw_text(cr, x1, y0 + S - TEXT_H + 3, last, 2, AXIS_W);
    if (S >= 3 * TEXT_H) draw_text(cr, x1, y0 + (S - TEXT_H) / 2.0, "query", 2, AXIS_W);
}

/* Under a panel of side P and length T starting at x0: "0" at the left,
 * T-1 at the right, "key position" (or "key") between when it fits. */
static void draw_key_label(cairo_t *cr, int x0, int y, int P, int T) {
    char last[16];
    snprintf(last, sizeof last, "%d", T - 1);
    double wl = text_w(cr, last), w0 = text_w(cr, "0");
    draw_text(cr, x0, y, "0", 0, P);
    draw_text(cr, x0 + P, y, last, 2, P);
    double room = P - wl - w0 - 2 * FONT_PX;
    const char *s = text_w(cr, "key position") <= room ? "key position" : "key";
    if (text_w(cr, s) <= room) draw_text(cr, x0 + P / 2.0, y, s, 1, room);
}

static int draw_figure(cairo_t *cr, const Figure *fg) {
    const HeatmapStyle *st = fg->st;
    set_font(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    int S = fg->S, left = fg->left;
    for (int i = 0; st->title && i < fg->top / TITLE_H; i++)
        draw_text(cr, MARGIN, MARGIN + i * TITLE_H + (TITLE_H - TEXT_H) / 2.0, fg->tl[i], 0,
                  fg->W - 2 * MARGIN);
    for (int k = 0; k < fg->n; k++) {
        const HeatPanel *p = &fg->panels[k];
        int r = k / fg->cols, c = k % fg->cols;
        int sx = MARGIN + left + c * (S + GAP), sy = MARGIN + fg->top + r * (TITLE_H + S + GAP);
        int P = panel_px(p->T, st);
        if (p->title) draw_text(cr, sx, sy + (TITLE_H - TEXT_H) / 2.0, p->title, 0, S + GAP - 4);
        if (draw_panel(cr, p, P, sx, sy + TITLE_H, st, fg->lo, fg->hi)) return -1;
        if (st->axis_labels && c == 0)
            draw_query_label(cr, MARGIN + left - 6, sy + TITLE_H, P, p->T);
        if (st->axis_labels && r == fg->rows - 1)
            draw_key_label(cr, sx, sy + TITLE_H + P + (AXIS_H - TEXT_H) / 2.0, P, p->T);
    }
    if (st->colorbar &&
        draw_colorbar(cr, MARGIN + left + fg->cols * (S + GAP) - GAP + BAR_GAP,
                      MARGIN + fg->top + TITLE_H, fg->H - MARGIN - fg->bottom, fg->lab,
                      (bar_mid(fg->lo, fg->hi, st->log_scale) - fg->lo) / (fg->hi - fg->lo)))
        return -1;
    return cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : -1;
}

/* Compute the layout; -1 and why when the image would be too large. */
static int layout(Figure *fg, char *err, size_t errlen) {
    const HeatmapStyle *st = fg->st;
    fg->S = 0;
    for (int k = 0; k < fg->n; k++) {
        int P = panel_px(fg->panels[k].T, st);
        if (P > fg->S) fg->S = P;
    }
    fg->left = st->axis_labels ? AXIS_W : 0, fg->bottom = st->axis_labels ? AXIS_H : 0;
    long long W = 2LL * MARGIN + (long long)fg->cols * fg->S + (fg->cols - 1LL) * GAP + fg->left;
    long long H = 2LL * MARGIN + (long long)fg->rows * (TITLE_H + fg->S) + (fg->rows - 1LL) * GAP +
                  fg->bottom;
    if (W * H > (long long)MAX_PIXELS)
        return seterr(err, errlen,
                      "heatmap: image %lld x %lld is too large "
                      "(limit %zu pixels); use a smaller cell",
                      W, H, MAX_PIXELS);
    /* a scratch context measures the text */
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(s);
    set_font(cr);
    fg->top =
        st->title ? TITLE_H * title_lines(cr, st->title, (double)(W - 2 * MARGIN), fg->tl) : 0;
    value_range(fg->panels, fg->n, st, &fg->lo, &fg->hi);
    bar_labels(fg->lo, fg->hi, st->log_scale, fg->lab);
    double lw = 0;
    for (int i = 0; i < 3; i++)
        if (text_w(cr, fg->lab[i]) > lw) lw = text_w(cr, fg->lab[i]);
    int ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    if (!ok) return seterr(err, errlen, "heatmap: cairo cannot measure text");
    if (st->colorbar) W += BAR_GAP + BAR_W + TICK + LABEL_GAP + (int)ceil(lw);
    H += fg->top;
    if (W * H > (long long)MAX_PIXELS)
        return seterr(err, errlen,
                      "heatmap: image %lld x %lld is too large "
                      "(limit %zu pixels); use a smaller cell",
                      W, H, MAX_PIXELS);
    fg->W = (int)W, fg->H = (int)H;
    return 0;
}

/* ---- an RGB buffer for libpng ---- */

typedef struct {
    unsigned char *px; /* [h, w, 3] */
    int w, h;
} Canvas;

/* ---- PNG output ---- */

typedef struct {
    char msg[200];
} PngErr;

static void png_on_error(png_structp png, png_const_charp msg) {
    PngErr *e = png_get_error_ptr(png);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg) {
    (void)png, (void)msg; /* warnings are not failures */
}

/* Write cv as 8-bit RGB into a fresh temporary that replaces path when
 * complete (atomic_write.h); a failed write leaves path as it was. */
static int write_png(const char *path, const Canvas *cv, char *err, size_t errlen) {
    if (outpath_check(path, OUT_PNG, 1, err, errlen) != 0) return -1;
    char tmp[ATOMIC_TMP_MAX];
    FILE *fp = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (!fp) return -1;
    PngErr pe = {"unknown libpng error"};
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, &pe, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        fclose(fp);
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: cannot create libpng writer", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(fp);
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: libpng: %s", path, pe.msg);
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)cv->w, (png_uint_32)cv->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < cv->h; y++) png_write_row(png, cv->px + (size_t)y * (size_t)cv->w * 3);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return atomic_fcommit(fp, tmp, path, err, errlen);
}

/* ---- the three formats ---- */

typedef enum { FMT_PNG, FMT_SVG, FMT_PDF, FMT_NONE } Fmt;

/* The format a path's extension names (FMT_NONE for any other). */
static Fmt fmt_of(const char *path) {
    size_t n = strlen(path);
    if (n > 4 && !strcmp(path + n - 4, ".png")) return FMT_PNG;
    if (n > 4 && !strcmp(path + n - 4, ".svg")) return FMT_SVG;
    if (n > 4 && !strcmp(path + n - 4, ".pdf")) return FMT_PDF;
    return FMT_NONE;
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int len) {
    return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

/* fg as PNG: cairo draws into memory, libpng writes RGB. */
static int write_png_fig(const char *path, const Figure *fg, char *err, size_t errlen) {
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, fg->W, fg->H);
    cairo_t *cr = cairo_create(s);
    int rc = draw_figure(cr, fg);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    if (rc || cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return seterr(err, errlen, "%s: cairo cannot draw the heatmap (out of memory?)", path);
    }
    Canvas cv = {malloc((size_t)fg->W * (size_t)fg->H * 3), fg->W, fg->H};
    if (!cv.px) {
        cairo_surface_destroy(s);
        return seterr(err, errlen, "heatmap: out of memory for %d x %d image", fg->W, fg->H);
    }
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < fg->H; y++)
        for (int x = 0; x < fg->W; x++) {
            uint32_t v;
            memcpy(&v, d + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
            unsigned char *p = cv.px + ((size_t)y * (size_t)fg->W + (size_t)x) * 3;
            p[0] = (unsigned char)(v >> 16), p[1] = (unsigned char)(v >> 8),
            p[2] = (unsigned char)v;
        }
    cairo_surface_destroy(s);
    rc = write_png(path, &cv, err, errlen);
    free(cv.px);
    return rc;
}

/* fg as SVG or PDF into a fresh temporary that replaces path when
 * complete (atomic_write.h). */
static int write_vector_fig(const char *path, Fmt fmt, const Figure *fg, char *err, size_t errlen) {
    if (outpath_check(path, fmt == FMT_SVG ? OUT_SVG : OUT_PDF, 1, err, errlen) != 0) return -1;
    char tmp[ATOMIC_TMP_MAX];
    FILE *fp = atomic_fopen(path, tmp, sizeof tmp, err, errlen);
    if (!fp) return -1;
    cairo_surface_t *s = fmt == FMT_SVG
                             ? cairo_svg_surface_create_for_stream(to_file, fp, fg->W, fg->H)
                             : cairo_pdf_surface_create_for_stream(to_file, fp, fg->W, fg->H);
    if (fmt == FMT_PDF) cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "gatelab");
    cairo_t *cr = cairo_create(s);
    int rc = draw_figure(cr, fg);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    cairo_status_t cs = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (rc || cs != CAIRO_STATUS_SUCCESS) {
        fclose(fp);
        atomic_discard(tmp);
        return seterr(err, errlen, "%s: cairo: %s", path,
                      cs != CAIRO_STATUS_SUCCESS ? cairo_status_to_string(cs) : "cannot draw");
    }
    return atomic_fcommit(fp, tmp, path, err, errlen);
}

/* ---- the public entry point ---- */

static int check_input(const HeatPanel *p, int rows, int cols, const HeatmapStyle *st, char *err,
                       size_t errlen) {
    if (rows < 1 || cols < 1 || rows > MAX_GRID || cols > MAX_GRID)
        return seterr(err, errlen, "heatmap: grid %d x %d out of range (1..%d each)", rows, cols,
                      MAX_GRID);
    if (st->cell < 0 || st->cell > 256)
        return seterr(err, errlen,
                      "heatmap: cell size %d out of range "
                      "(0 = automatic, 1..256)",
                      st->cell);
    if (isnan(st->vmin) || isnan(st->vmax)) return seterr(err, errlen, "heatmap: vmin/vmax is NaN");
    if (st->log_scale && st->vmin < st->vmax && st->vmax <= 0)
        return seterr(err, errlen,
                      "heatmap: log scale needs vmax > 0 "
                      "(got %g)",
                      (double)st->vmax);
    for (int k = 0; k < rows * cols; k++) {
        if (!p[k].A) return seterr(err, errlen, "heatmap: panel %d has no data", k);
        if (p[k].T <= 0 || p[k].T > MAX_T)
            return seterr(err, errlen,
                          "heatmap: panel %d has T = %d "
                          "(need 1..%d)",
                          k, p[k].T, MAX_T);
    }
    return 0;
}

static int prepare(Figure *fg, const char *path, const HeatPanel *panels, int rows, int cols,
                   const HeatmapStyle *style, char *err, size_t errlen) {
    static const HeatmapStyle defaults = {0, 0, 0.0f, 0.0f, 1, NULL, 0};
    memset(fg, 0, sizeof *fg);
    fg->st = style ? style : &defaults;
    if (!path || !panels) return seterr(err, errlen, "heatmap: no output path or no panels");
    if (fmt_of(path) == FMT_NONE) return seterr(err, errlen, HEATMAP_EXT_ERR, path);
    if (check_input(panels, rows, cols, fg->st, err, errlen)) return -1;
    fg->panels = panels, fg->rows = rows, fg->cols = cols, fg->n = rows * cols;
    return layout(fg, err, errlen);
}

static int write_one(const char *path, const Figure *fg, char *err, size_t errlen) {
    Fmt f = fmt_of(path);
    return f == FMT_PNG ? write_png_fig(path, fg, err, errlen)
                        : write_vector_fig(path, f, fg, err, errlen);
}

int heatmap_write(const char *path, const HeatPanel *panels, int rows, int cols,
                  const HeatmapStyle *style, char *err, size_t errlen) {
    Figure fg;
    if (prepare(&fg, path, panels, rows, cols, style, err, errlen)) return -1;
    return write_one(path, &fg, err, errlen);
}

int heatmap_sibling(const char *path, const char *ext, char *out, size_t outlen) {
    size_t n = strlen(path);
    if (fmt_of(path) == FMT_NONE) return -1;
    int w = snprintf(out, outlen, "%.*s.%s", (int)(n - 4), path, ext);
    return w < 0 || (size_t)w >= outlen ? -1 : 0;
}

int heatmap_check_out(const char *path, char *err, size_t errlen) {
    Fmt f = fmt_of(path);
    if (f == FMT_NONE) return seterr(err, errlen, HEATMAP_EXT_ERR, path);
    OutKind kind = f == FMT_PNG ? OUT_PNG : f == FMT_SVG ? OUT_SVG : OUT_PDF;
    return outpath_check(path, kind, 1, err, errlen);
}

int heatmap_write_figure(const char *path, const HeatPanel *panels, int rows, int cols,
                         const HeatmapStyle *style, char *err, size_t errlen) {
    static const char *const ext[3] = {"png", "svg", "pdf"};
    Figure fg;
    if (prepare(&fg, path, panels, rows, cols, style, err, errlen)) return -1;
    char p[4200];
    for (int i = 0; i < 3; i++) { /* every twin checked before any is written */
        if (heatmap_sibling(path, ext[i], p, sizeof p))
            return seterr(err, errlen, "%s: path too long", path);
        if (heatmap_check_out(p, err, errlen)) return -1;
    }
    for (int i = 0; i < 3; i++)
        if (heatmap_sibling(path, ext[i], p, sizeof p) || write_one(p, &fg, err, errlen)) return -1;
    return 0;
}

void heatmap_auto_range(const HeatPanel *panels, int n, int log_scale, float *vmin, float *vmax) {
    HeatmapStyle st = {log_scale, 0, 0.0f, 0.0f, 0, NULL, 0};
    double lo, hi;
    value_range(panels, n, &st, &lo, &hi);
    double a = untransform(lo, log_scale), b = untransform(hi, log_scale);
    if (log_scale && a <= 0) a = 0;
    *vmin = (float)a, *vmax = (float)b;
}
