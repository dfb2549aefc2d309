/* heatmap.c: causal attention maps -> one RGB PNG (libpng).
 *
 * Layout (all sizes in pixels; tests/test_heatmap.c mirrors these):
 *
 *   MARGIN | slot | GAP | slot | ... | BAR_GAP | bar | tick | labels | MARGIN
 *
 * Every slot is TITLE_H of title above an S x S square, where S is the
 * largest panel of the grid. A panel's matrix starts at
 *   x = MARGIN + c * (S + GAP),  y = MARGIN + r * (TITLE_H + S + GAP) + TITLE_H
 * with query t on rows (top = query 0) and key j on columns. Entries with
 * j > t (the future) are painted MASK_GREY. A shared colour scale spans all
 * panels; the colour bar on the right runs from the top of the first
 * matrix to the bottom of the last, high values at the top.
 *
 * Cell size: style->cell pixels per entry when >= 1; otherwise automatic,
 * about 384 px per panel, and for T > 512 one pixel shows the max of a
 * block of entries (max keeps a one-column sink visible).
 *
 * style->vmin/vmax are in the data's own (linear) units, also with
 * log_scale; the colour bar labels are always linear values.
 *
 * style->title adds a band of TITLE_H on top (the grid moves down by it);
 * style->axis_labels adds a band of AXIS_W on the left (vertical
 * "QUERY POSITION", query 0 at the top) and one of AXIS_H at the bottom
 * ("0", "KEY POSITION", "T-1" under each bottom panel). Without them the
 * layout above is exact. */
#include "heatmap.h"

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
    FONT_SCALE = 2,
    GLYPH_W = 5,
    GLYPH_H = 7,
    ADVANCE = (GLYPH_W + 1) * FONT_SCALE,
    TEXT_H = GLYPH_H * FONT_SCALE,
    TITLE_H = TEXT_H + 8,
    BAR_GAP = 16,
    BAR_W = 16,
    TICK = 4,
    LABEL_GAP = 4,
    AUTO_PANEL = 384, /* target panel size for automatic cells */
    MAX_PANEL = 512,  /* automatic panels never exceed this */
    MAX_T = 8192,
    MAX_GRID = 64,        /* rows, cols each */
    AXIS_W = ADVANCE + 8, /* left band: one vertical column of glyphs */
    AXIS_H = TEXT_H + 8,  /* bottom band: one line of text */
    LINE_H = TEXT_H + 2,  /* vertical text: one glyph per line */
};
#define MAX_PIXELS ((size_t)64 * 1024 * 1024)
#define LOG_EPS 1e-4

static const unsigned char MASK_GREY[3] = {160, 160, 160};
static const unsigned char NAN_RGB[3] = {255, 0, 255};
static const unsigned char BG_RGB[3] = {255, 255, 255};
static const unsigned char INK_RGB[3] = {20, 20, 20};

/* ---- a tiny 5x7 bitmap font: 7 rows, bit 4 = leftmost column ---- */

typedef struct {
    char c;
    unsigned char rows[GLYPH_H];
} Glyph;

static const Glyph font[] = {
    {'0', {0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E}},
    {'1', {0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'2', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F}},
    {'3', {0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E}},
    {'4', {0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02}},
    {'5', {0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E}},
    {'6', {0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E}},
    {'7', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E}},
    {'9', {0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C}},
    {'A', {0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'B', {0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E}},
    {'C', {0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E}},
    {'D', {0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C}},
    {'E', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F}},
    {'F', {0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10}},
    {'G', {0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F}},
    {'H', {0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11}},
    {'I', {0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F}},
    {'M', {0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'P', {0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10}},
    {'Q', {0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D}},
    {'R', {0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11}},
    {'S', {0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E}},
    {'T', {0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E}},
    {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A}},
    {'X', {0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04}},
    {'Z', {0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F}},
    {'-', {0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00}},
    {'+', {0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C}},
    {',', {0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08}},
    {'=', {0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00}},
    {'/', {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}},
    {':', {0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00}},
    {'_', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'%', {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}},
    {'?', {0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}},
    {' ', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
};

static const Glyph *find_glyph(char c) {
    if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    for (size_t i = 0; i < sizeof font / sizeof font[0]; i++)
        if (font[i].c == c) return &font[i];
    return find_glyph('?');
}

/* ---- an RGB canvas with clipped drawing ---- */

typedef struct {
    unsigned char *px; /* [h, w, 3] */
    int w, h;
} Canvas;

static void put(Canvas *cv, int x, int y, const unsigned char rgb[3]) {
    if (x < 0 || y < 0 || x >= cv->w || y >= cv->h) return;
    unsigned char *p = cv->px + ((size_t)y * (size_t)cv->w + (size_t)x) * 3;
    p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
}

static void fill_rect(Canvas *cv, int x, int y, int w, int h, const unsigned char rgb[3]) {
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) put(cv, i, j, rgb);
}

/* Draw at most max_chars of s with its top-left corner at (x, y). */
static void draw_text(Canvas *cv, int x, int y, const char *s, int max_chars) {
    for (int k = 0; s[k] && k < max_chars; k++) {
        const Glyph *g = find_glyph(s[k]);
        for (int r = 0; r < GLYPH_H; r++)
            for (int c = 0; c < GLYPH_W; c++)
                if (g->rows[r] & (0x10 >> c))
                    fill_rect(cv, x + k * ADVANCE + c * FONT_SCALE, y + r * FONT_SCALE, FONT_SCALE,
                              FONT_SCALE, INK_RGB);
    }
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

/* Colour range [lo, hi] in transformed units: explicit, or over the visible
 * (j <= t), finite entries of every panel. */
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

static void draw_panel(Canvas *cv, const HeatPanel *p, int P, int x0, int y0,
                       const HeatmapStyle *st, double lo, double hi) {
    unsigned char rgb[3];
    for (int py = 0; py < P; py++)
        for (int px = 0; px < P; px++) {
            pixel_colour(p, P, py, px, st, lo, hi, rgb);
            put(cv, x0 + px, y0 + py, rgb);
        }
}

/* Tick labels: max, mid, min (top to bottom), as linear values. */
static void bar_labels(double lo, double hi, int log_scale, char lab[3][32]) {
    double v[3] = {hi, 0.5 * (lo + hi), lo};
    for (int i = 0; i < 3; i++)
        snprintf(lab[i], sizeof lab[i], "%.3g", untransform(v[i], log_scale));
}

static int labels_width(char lab[3][32]) {
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        if (strlen(lab[i]) > n) n = strlen(lab[i]);
    return (int)n * ADVANCE;
}

static void draw_colorbar(Canvas *cv, int x, int top, int bottom, char lab[3][32]) {
    unsigned char rgb[3];
    int h = bottom - top;
    for (int y = top; y < bottom; y++) {
        float f = h > 1 ? (float)(bottom - 1 - y) / (float)(h - 1) : 1.0f;
        colormap_viridis(f, rgb);
        fill_rect(cv, x, y, BAR_W, 1, rgb);
    }
    int ys[3] = {top, top + (h - 1) / 2, bottom - 1};
    for (int i = 0; i < 3; i++) {
        fill_rect(cv, x + BAR_W, ys[i], TICK, 1, INK_RGB);
        draw_text(cv, x + BAR_W + TICK + LABEL_GAP, ys[i] - TEXT_H / 2, lab[i], 32);
    }
}

/* ---- axis labels ---- */

/* s down from (x, y), one glyph per line, as many as fit in h. */
static void draw_vtext(Canvas *cv, int x, int y, int h, const char *s) {
    for (int k = 0; s[k] && (k + 1) * LINE_H <= h; k++) {
        char c[2] = {s[k], 0};
        draw_text(cv, x, y + k * LINE_H, c, 1);
    }
}

/* "QUERY POSITION" left of a row whose matrix starts at y0 and is S tall;
 * "QUERY" when the long form does not fit. */
static void draw_query_label(Canvas *cv, int x, int y0, int S) {
    const char *s = (int)strlen("QUERY POSITION") * LINE_H <= S ? "QUERY POSITION" : "QUERY";
    draw_vtext(cv, x, y0, S, s);
}

/* Under a panel of side P (pixels) and length T starting at x0: "0" at
 * the left, T-1 at the right, "KEY POSITION" (or "KEY") in between when
 * it fits. */
static void draw_key_label(Canvas *cv, int x0, int y, int P, int T) {
    char last[16];
    snprintf(last, sizeof last, "%d", T - 1);
    int wl = (int)strlen(last) * ADVANCE;
    draw_text(cv, x0, y, "0", 1);
    draw_text(cv, x0 + P - wl, y, last, 16);
    int room = P - wl - 2 * ADVANCE;
    const char *s = (int)strlen("KEY POSITION") * ADVANCE <= room ? "KEY POSITION" : "KEY";
    int w = (int)strlen(s) * ADVANCE;
    if (w <= room) draw_text(cv, x0 + (P - w) / 2, y, s, 16);
}

/* The title in lines of at most `fit` glyphs: one line, or two split at
 * the last space that fits (the rest is cut). Returns the line count. */
static int title_lines(const char *t, int fit, char out[2][256]) {
    if (fit < 1) fit = 1;
    if (fit > 255) fit = 255;
    int n = (int)strlen(t);
    if (n <= fit) {
        snprintf(out[0], 256, "%s", t);
        return 1;
    }
    int cut = fit;
    while (cut > 0 && t[cut] != ' ') cut--;
    if (cut == 0) cut = fit;
    snprintf(out[0], 256, "%.*s", cut, t);
    snprintf(out[1], 256, "%.*s", fit, t + cut + (t[cut] == ' '));
    return 2;
}

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

int heatmap_write_png(const char *path, const HeatPanel *panels, int rows, int cols,
                      const HeatmapStyle *style, char *err, size_t errlen) {
    static const HeatmapStyle defaults = {0, 0, 0.0f, 0.0f, 1, NULL, 0};
    const HeatmapStyle *st = style ? style : &defaults;
    if (!path || !panels) return seterr(err, errlen, "heatmap: no output path or no panels");
    if (check_input(panels, rows, cols, st, err, errlen)) return -1;
    int n = rows * cols, S = 0;
    for (int k = 0; k < n; k++) {
        int P = panel_px(panels[k].T, st);
        if (P > S) S = P;
    }
    /* refuse absurd images before touching the data */
    int left = st->axis_labels ? AXIS_W : 0, bottom = st->axis_labels ? AXIS_H : 0;
    long long W = 2LL * MARGIN + (long long)cols * S + (cols - 1LL) * GAP + left;
    char tl[2][256] = {"", ""};
    int top =
        st->title ? TITLE_H * title_lines(st->title, (int)((W - 2 * MARGIN) / ADVANCE), tl) : 0;
    long long H =
        2LL * MARGIN + (long long)rows * (TITLE_H + S) + (rows - 1LL) * GAP + top + bottom;
    if (W * H > (long long)MAX_PIXELS)
        return seterr(err, errlen,
                      "heatmap: image %lld x %lld is too large "
                      "(limit %zu pixels); use a smaller cell",
                      W, H, MAX_PIXELS);
    double lo, hi;
    value_range(panels, n, st, &lo, &hi);
    char lab[3][32];
    bar_labels(lo, hi, st->log_scale, lab);
    int bar_w = st->colorbar ? BAR_GAP + BAR_W + TICK + LABEL_GAP + labels_width(lab) : 0;
    W += bar_w;
    if (W * H > (long long)MAX_PIXELS)
        return seterr(err, errlen,
                      "heatmap: image %lld x %lld is too large "
                      "(limit %zu pixels); use a smaller cell",
                      W, H, MAX_PIXELS);
    Canvas cv = {malloc((size_t)W * (size_t)H * 3), (int)W, (int)H};
    if (!cv.px)
        return seterr(err, errlen,
                      "heatmap: out of memory for %lld x %lld "
                      "image",
                      W, H);
    fill_rect(&cv, 0, 0, cv.w, cv.h, BG_RGB);
    for (int i = 0; st->title && i < top / TITLE_H; i++)
        draw_text(&cv, MARGIN, MARGIN + i * TITLE_H + (TITLE_H - TEXT_H) / 2, tl[i],
                  (cv.w - 2 * MARGIN) / ADVANCE);
    for (int k = 0; k < n; k++) {
        int r = k / cols, c = k % cols;
        int sx = MARGIN + left + c * (S + GAP), sy = MARGIN + top + r * (TITLE_H + S + GAP);
        int P = panel_px(panels[k].T, st);
        if (panels[k].title)
            draw_text(&cv, sx, sy + (TITLE_H - TEXT_H) / 2, panels[k].title, (S + GAP) / ADVANCE);
        draw_panel(&cv, &panels[k], P, sx, sy + TITLE_H, st, lo, hi);
        if (st->axis_labels && c == 0) draw_query_label(&cv, MARGIN, sy + TITLE_H, S);
        if (st->axis_labels && r == rows - 1)
            draw_key_label(&cv, sx, sy + TITLE_H + S + (AXIS_H - TEXT_H) / 2, P, panels[k].T);
    }
    if (st->colorbar)
        draw_colorbar(&cv, MARGIN + left + cols * (S + GAP) - GAP + BAR_GAP, MARGIN + top + TITLE_H,
                      cv.h - MARGIN - bottom, lab);
    int rc = write_png(path, &cv, err, errlen);
    free(cv.px);
    return rc;
}
