/* heatmap.c: causal attention maps -> PNG, SVG and PDF (cairo; the PNG
 * bytes through libpng).
 *
 * Layout (in units: pixels in a PNG, points in SVG and PDF;
 * tests/test_heatmap.c mirrors these at a figure's own size):
 *
 *   MARGIN | slot | GAP | slot | ... | BAR_GAP | bar | tick | labels | MARGIN
 *
 * Every slot is TITLE_H of title above an S x S square, where S is the
 * largest panel of the grid. A panel's matrix starts at
 *   x = MARGIN + c * (S + GAP),  y = MARGIN + r * (TITLE_H + S + GAP) + TITLE_H
 * with query t on rows (top = query 0) and key j on columns. Entries with
 * j > t (the future), and under a panel's sliding window the keys j <= t - W
 * it does not see, are painted grey (heatmap_scale.c). A shared colour scale spans all
 * panels; the colour bar on the right runs from the top of the first
 * matrix to the bottom of the last, high values at the top.
 *
 * Cell size: style->cell pixels per entry when >= 1; otherwise automatic,
 * about 384 px per panel, and for T > 512 one pixel shows the max of a
 * block of entries (max keeps a one-column sink visible).
 *
 * At a --size (figstyle.h) a unit is a point: every length above scales
 * with the --font (FONT_PX units at the default), the panels take what
 * the W x H box leaves them, square, and the page is the grid's box; the
 * PNG is drawn at FIG_PNG_DPI, each data pixel a square of device pixels.
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
 * With style->tokens the positions are labelled by them instead: each
 * query's label right-aligned left of the first column's panels, each
 * key's written upwards under the bottom row's, at TOKEN_SCALE of the
 * font, every k-th (its position first) when a cell is narrower than a
 * line; the bands grow to the longest label.
 * Text is DejaVu Sans (fontconfig's "sans-serif") through cairo; text is
 * ASCII (other bytes are drawn as '?'), but for the token labels, which
 * are drawn as the UTF-8 they are. The matrices are images at the
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
#include "figstyle.h"
#include "heatmap_scale.h"
#include "outpath.h"
#include "util.h"

enum {
    MARGIN = 10,
    GAP = 16,
    FONT_PX = 13, /* text size at a figure's own size; the text bands below scale with it */
    TEXT_H = 16,  /* one line of text */
    TITLE_H = TEXT_H + 8,
    BAR_GAP = 16,
    BAR_W = 16,
    TICK = 4,
    LABEL_GAP = 4,
    MAX_T = 8192,
    MAX_GRID = 64,       /* rows, cols each */
    AXIS_W = 56,         /* left band: "query" and the row tick labels */
    AXIS_H = TEXT_H + 8, /* bottom band: one line of text */
};
#define MAX_PIXELS ((size_t)64 * 1024 * 1024)
#define MIN_DRAWN 24.0  /* the smallest panel a --size may leave, in points */
#define TOKEN_SCALE 0.8 /* the token labels' font, of the figure's */

#define INK 20.0 / 255.0

/* ---- text ---- */

/* The layout's lengths for a font of `font` units: the enum's at FONT_PX,
 * in proportion at any other size (k = font / FONT_PX). */
typedef struct {
    double font, k, text_h, title_h, axis_w, axis_h, margin, gap, bar_gap, bar_w, tick, label_gap;
} Metrics;

static Metrics metrics_of(double font) {
    double k = font / FONT_PX;
    return (Metrics){font,       k,       k * TEXT_H,  k * TITLE_H, k * AXIS_W, k * AXIS_H,
                     k * MARGIN, k * GAP, k * BAR_GAP, k * BAR_W,   k * TICK,   k * LABEL_GAP};
}

/* s with every byte outside printable ASCII as '?', at most n-1 bytes. */
static void ascii(char *out, size_t n, const char *s) {
    size_t i = 0;
    for (; s && s[i] && i + 1 < n; i++) out[i] = s[i] >= 32 && s[i] < 127 ? s[i] : '?';
    out[i] = 0;
}

static void set_font(cairo_t *cr, const Metrics *m) {
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, m->font);
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

/* Draw s in a line of m->text_h whose top-left is (x, y); align 0 left,
 * 1 centre, 2 right of x. At most max_w wide (the rest is cut). */
static void draw_text(cairo_t *cr, const Metrics *m, double x, double y, const char *s, int align,
                      double max_w) {
    char buf[512];
    ascii(buf, sizeof buf, s);
    buf[fit_prefix(cr, buf, max_w)] = 0;
    double w = text_w(cr, buf);
    double tx = align == 1 ? x - w / 2 : align == 2 ? x - w : x;
    cairo_set_source_rgb(cr, INK, INK, INK);
    cairo_move_to(cr, tx, y + m->text_h - 4 * m->k);
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

/* ---- drawing: one pass over a cairo context, for every format ---- */

/* The layout in units: pixels of a PNG and points of SVG and PDF at a
 * figure's own size; points at a --size (figstyle.h), whose PNG is drawn
 * at FIG_PNG_DPI. S is the largest panel's side in data pixels, D its
 * drawn side (S at a figure's own size; what fills the --size else);
 * x0 centres the grid on a --size's page. */
typedef struct {
    const HeatPanel *panels;
    int rows, cols, n, S, ntitle;
    double W, H, D, left, bottom, top;
    double tok_w;     /* the longest token label's width (style->tokens) */
    int png_w, png_h; /* the PNG's pixels: W x H units at png_scale */
    double png_scale;
    char tl[2][256], lab[3][32];
    double lo, hi;
    Metrics m;
    const HeatmapStyle *st;
} Figure;

/* Paint an RGB image (w x h, 3 bytes a pixel) at (x, y), each pixel zx
 * units wide and zy high. */
static int paint_rgb(cairo_t *cr, const unsigned char *rgb, int w, int h, double x, double y,
                     double zx, double zy) {
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
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_scale(cr, zx, zy);
    cairo_set_source_surface(cr, im, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_fill(cr);
    cairo_restore(cr);
    cairo_surface_destroy(im);
    return 0;
}

/* Panel p at P x P data pixels, drawn z units a pixel from (x0, y0). */
static int draw_panel(cairo_t *cr, const HeatPanel *p, int P, double z, double x0, double y0,
                      const HeatmapStyle *st, double lo, double hi) {
    unsigned char *rgb = malloc((size_t)P * (size_t)P * 3);
    if (!rgb) return -1;
    for (int py = 0; py < P; py++)
        for (int px = 0; px < P; px++)
            heat_pixel_colour(p, P, py, px, st, lo, hi, rgb + ((size_t)py * (size_t)P + px) * 3);
    int rc = paint_rgb(cr, rgb, P, P, x0, y0, z, z);
    free(rgb);
    return rc;
}

/* The colour bar from top to bottom (units) at x, one data pixel a unit. */
static int draw_colorbar(cairo_t *cr, const Metrics *m, double x, double top, double bottom,
                         const char lab[3][32], double midf) {
    int h = (int)lround(bottom - top);
    unsigned char *rgb = malloc((size_t)h * BAR_W * 3);
    if (!rgb) return -1;
    for (int y = 0; y < h; y++) {
        float f = h > 1 ? (float)(h - 1 - y) / (float)(h - 1) : 1.0f;
        for (int i = 0; i < BAR_W; i++) colormap_viridis(f, rgb + ((size_t)y * BAR_W + i) * 3);
    }
    int rc = paint_rgb(cr, rgb, BAR_W, h, x, top, m->bar_w / BAR_W, 1.0);
    free(rgb);
    double ys[3] = {top, top + h - 1 - lround(midf * (h - 1)), top + h - 1};
    for (int i = 0; i < 3; i++) {
        cairo_set_source_rgb(cr, INK, INK, INK);
        cairo_rectangle(cr, x + m->bar_w, ys[i], m->tick, 1);
        cairo_fill(cr);
        draw_text(cr, m, x + m->bar_w + m->tick + m->label_gap, ys[i] + 0.5 - m->text_h / 2.0,
                  lab[i], 0, 200);
    }
    return rc;
}

/* Left of a row whose matrix starts at y0 and is S tall: "0" by the first
 * query, T-1 by the last, "query" between them, right-aligned. */
static void draw_query_label(cairo_t *cr, const Metrics *m, double x1, double y0, double S, int T) {
    char last[16];
    snprintf(last, sizeof last, "%d", T - 1);
    draw_text(cr, m, x1, y0 - 3 * m->k, "0", 2, m->axis_w);
    draw_text(cr, m, x1, y0 + S - m->text_h + 3 * m->k, last, 2, m->axis_w);
    if (S >= 3 * m->text_h) draw_text(cr, m, x1, y0 + (S - m->text_h) / 2.0, "query", 2, m->axis_w);
}

/* Under a panel of side P and length T starting at x0: "0" at the left,
 * T-1 at the right, "key position" (or "key") between when it fits. */
static void draw_key_label(cairo_t *cr, const Metrics *m, double x0, double y, double P, int T) {
    char last[16];
    snprintf(last, sizeof last, "%d", T - 1);
    double wl = text_w(cr, last), w0 = text_w(cr, "0");
    draw_text(cr, m, x0, y, "0", 0, P);
    draw_text(cr, m, x0 + P, y, last, 2, P);
    double room = P - wl - w0 - 2 * m->font;
    const char *s = text_w(cr, "key position") <= room ? "key position" : "key";
    if (text_w(cr, s) <= room) draw_text(cr, m, x0 + P / 2.0, y, s, 1, room);
}

/* Every k-th of T token labels, k the smallest that leaves each a line
 * of the token font in cells of `cell` units. */
static int token_step(const Metrics *m, double cell) {
    double need = m->font * TOKEN_SCALE * 1.15;
    int k = 1;
    while (k * cell < need && k < 1 << 20) k++;
    return k;
}

/* Token t's label as drawn: the token, or with every k-th drawn (k > 1)
 * its position first ("12 the"), so the labels shown never read as
 * neighbours. */
static void token_text(char *out, size_t len, const char *tok, int t, int k) {
    if (k > 1) snprintf(out, len, "%d %s", t, tok);
    else snprintf(out, len, "%s", tok);
}

/* The token labels along one side of a panel of side d: token t's label
 * ends at its cell's centre line, (t + 0.5) * d / T from (x, y) along the
 * side. Queries (keys 0): right-aligned at x, left of the rows, y the
 * matrix's top. Keys (keys 1): written upwards under the columns, x the
 * panel's left, y the labels' top. */
static void draw_tokens(cairo_t *cr, const Metrics *m, const char *const *tok, double x, double y,
                        double d, int T, int keys) {
    const double cell = d / T, fs = m->font * TOKEN_SCALE;
    const int k = token_step(m, cell);
    cairo_save(cr);
    cairo_set_font_size(cr, fs);
    cairo_set_source_rgb(cr, INK, INK, INK);
    for (int t = 0; t < T; t += k) {
        char lab[160];
        token_text(lab, sizeof lab, tok[t], t, k);
        double at = (t + 0.5) * cell + 0.35 * fs;
        cairo_save(cr);
        cairo_translate(cr, keys ? x + at : x, keys ? y : y + at);
        if (keys) cairo_rotate(cr, -M_PI / 2);
        cairo_move_to(cr, -text_w(cr, lab), 0);
        cairo_show_text(cr, lab);
        cairo_restore(cr);
    }
    cairo_restore(cr);
}

static int draw_figure(cairo_t *cr, const Figure *fg) {
    const HeatmapStyle *st = fg->st;
    const Metrics *m = &fg->m;
    set_font(cr, m);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    const double D = fg->D, M = m->margin, G = m->gap, x = M, th = m->title_h;
    for (int i = 0; i < fg->ntitle; i++)
        draw_text(cr, m, x, M + i * th + (th - m->text_h) / 2.0, fg->tl[i], 0, fg->W - 2 * M);
    for (int k = 0; k < fg->n; k++) {
        const HeatPanel *p = &fg->panels[k];
        int r = k / fg->cols, c = k % fg->cols, P = heat_panel_px(p->T, st);
        double sx = x + fg->left + c * (D + G), sy = M + fg->top + r * (th + D + G);
        double z = D / fg->S, d = P * z; /* units a data pixel; the panel's drawn side */
        if (p->title)
            draw_text(cr, m, sx, sy + (th - m->text_h) / 2.0, p->title, 0, D + G - 4 * m->k);
        if (p->A && draw_panel(cr, p, P, z, sx, sy + th, st, fg->lo, fg->hi)) return -1;
        if (st->axis_labels && st->tokens && c == 0)
            draw_tokens(cr, m, st->tokens, x + fg->left - m->label_gap, sy + th, d, p->T, 0);
        else if (st->axis_labels && c == 0)
            draw_query_label(cr, m, x + fg->left - 6 * m->k, sy + th, d, p->T);
        if (st->axis_labels && st->tokens && r == fg->rows - 1)
            draw_tokens(cr, m, st->tokens, sx, sy + th + d + m->label_gap, d, p->T, 1);
        else if (st->axis_labels && r == fg->rows - 1)
            draw_key_label(cr, m, sx, sy + th + d + (m->axis_h - m->text_h) / 2.0, d, p->T);
    }
    double grid_bottom = M + fg->top + fg->rows * (th + D) + (fg->rows - 1) * G;
    if (st->colorbar &&
        draw_colorbar(cr, m, x + fg->left + fg->cols * (D + G) - G + m->bar_gap, M + fg->top + th,
                      grid_bottom, fg->lab,
                      (heat_bar_mid(fg->lo, fg->hi, st->log_scale) - fg->lo) / (fg->hi - fg->lo)))
        return -1;
    return cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : -1;
}

/* The title's lines and the colour bar labels' width, measured in the
 * figure's font; -1 when cairo cannot measure. */
static int measure_text(Figure *fg, double title_w, double *label_w) {
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(s);
    set_font(cr, &fg->m);
    fg->ntitle = fg->st->title ? title_lines(cr, fg->st->title, title_w, fg->tl) : 0;
    heat_bar_labels(fg->lo, fg->hi, fg->st->log_scale, fg->lab);
    *label_w = 0;
    for (int i = 0; i < 3; i++)
        if (text_w(cr, fg->lab[i]) > *label_w) *label_w = text_w(cr, fg->lab[i]);

    int ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    return ok ? 0 : -1;
}

/* The longest token label's width in the token font into fg->tok_w (0
 * without style->tokens); -1 when cairo cannot measure. */
static int measure_tokens(Figure *fg) {
    fg->tok_w = 0;
    if (!fg->st->tokens || !fg->st->axis_labels) return 0;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1);
    cairo_t *cr = cairo_create(s);
    set_font(cr, &fg->m);
    cairo_set_font_size(cr, fg->m.font * TOKEN_SCALE);
    int T = 0;
    for (int k = 0; k < fg->n; k++)
        if (fg->panels[k].T > T) T = fg->panels[k].T;
    for (int t = 0; t < T; t++)
        if (text_w(cr, fg->st->tokens[t]) > fg->tok_w) fg->tok_w = text_w(cr, fg->st->tokens[t]);
    /* room for the positions when the labels may be thinned (token_text):
     * cells of a panel's automatic size narrower than a line of the font */
    char pos[32];
    snprintf(pos, sizeof pos, "%d ", T - 1);
    if (T > 1 && (double)heat_panel_px(T, fg->st) / T < fg->m.font * TOKEN_SCALE * 1.15 * 2)
        fg->tok_w += text_w(cr, pos);
    int ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS;
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    return ok ? 0 : -1;
}

/* Compute the layout at the figure's style (figstyle_get): at its own
 * size the panels at their data pixels; at a size the panels as large as
 * the page leaves them. -1 and why when the image would be too large or
 * the page too small. */
static int layout_styled(Figure *fg, char *err, size_t errlen) {
    const HeatmapStyle *st = fg->st;
    const FigStyle *fs = figstyle_get();
    const int sized = fs->w_in > 0;
    fg->m = metrics_of(sized ? figstyle_font_pt() : fs->font_pt > 0 ? fs->font_pt : FONT_PX);
    fg->S = 0;
    for (int k = 0; k < fg->n; k++)
        if (heat_panel_px(fg->panels[k].T, st) > fg->S) fg->S = heat_panel_px(fg->panels[k].T, st);
    fg->left = st->axis_labels ? fg->m.axis_w : 0, fg->bottom = st->axis_labels ? fg->m.axis_h : 0;
    if (measure_tokens(fg) != 0) return seterr(err, errlen, "heatmap: cairo cannot measure text");
    if (st->tokens && st->axis_labels) /* the bands the token labels take */
        fg->left = fg->bottom = ceil(fg->tok_w) + 2 * fg->m.label_gap;
    heat_value_range(fg->panels, fg->n, st, &fg->lo, &fg->hi);
    const Metrics *m = &fg->m;
    const double fixed_w = 2.0 * m->margin + (fg->cols - 1.0) * m->gap + fg->left;
    double box = sized ? fs->w_in * 72.0 : fixed_w + (double)fg->cols * fg->S, lw;
    /* a --size page narrower than its box (the height bound the panels)
     * breaks the title again at the page's width: a second pass */
    for (int pass = 0; pass < 1 + sized; pass++) {
        if (measure_text(fg, (pass ? fg->W : box) - 2 * m->margin, &lw) != 0)
            return seterr(err, errlen, "heatmap: cairo cannot measure text");
        double bar = st->colorbar ? m->bar_gap + m->bar_w + m->tick + m->label_gap + ceil(lw) : 0;
        fg->top = fg->m.title_h * fg->ntitle;
        double fixed_h = 2.0 * m->margin + fg->rows * m->title_h + (fg->rows - 1.0) * m->gap +
                         fg->bottom + fg->top;
        fg->D = fg->S;
        if (sized)
            fg->D = fmin((box - fixed_w - bar) / fg->cols, (fs->h_in * 72.0 - fixed_h) / fg->rows);
        if (!(fg->D >= MIN_DRAWN))
            return seterr(err, errlen,
                          "heatmap: --size %gx%g leaves no room for %d x %d panels at --font %g: "
                          "give a larger --size or a smaller --font",
                          fs->w_in, fs->h_in, fg->rows, fg->cols, fg->m.font);
        /* the page holds the grid: a --size is the box it fits in, panels square */
        fg->W = fixed_w + bar + (double)fg->cols * fg->D;
        fg->H = fixed_h + (double)fg->rows * fg->D;
    }
    fg->png_scale = sized ? FIG_PNG_DPI / 72.0 : 1.0;
    fg->png_w = (int)lround(fg->W * fg->png_scale), fg->png_h = (int)lround(fg->H * fg->png_scale);
    if ((long long)fg->png_w * fg->png_h > (long long)MAX_PIXELS)
        return seterr(err, errlen,
                      "heatmap: image %d x %d is too large "
                      "(limit %zu pixels); use a smaller cell",
                      fg->png_w, fg->png_h, MAX_PIXELS);
    return 0;
}

/* The layout at the --size (or its own size at --size own), else in the
 * column or page its own size fits (figstyle_begin), else, when that page
 * cannot hold the grid, at its own size. */
static int layout(Figure *fg, char *err, size_t errlen) {
    figstyle_begin(0, 0, 0);
    int rc = layout_styled(fg, err, errlen);
    if (rc != 0 || figstyle_get()->w_in > 0 || figstyle_get()->own) return rc;
    Figure own = *fg;
    figstyle_begin(own.png_w, own.png_h, 1);
    if (layout_styled(fg, err, errlen) == 0) return 0;
    *fg = own;
    figstyle_begin(0, 0, 0);
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
    const int W = fg->png_w, H = fg->png_h;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, H);
    cairo_t *cr = cairo_create(s);
    cairo_scale(cr, fg->png_scale, fg->png_scale);
    int rc = draw_figure(cr, fg);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    if (rc || cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return seterr(err, errlen, "%s: cairo cannot draw the heatmap (out of memory?)", path);
    }
    Canvas cv = {malloc((size_t)W * (size_t)H * 3), W, H};
    if (!cv.px) {
        cairo_surface_destroy(s);
        return seterr(err, errlen, "heatmap: out of memory for %d x %d image", W, H);
    }
    const unsigned char *d = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint32_t v;
            memcpy(&v, d + (size_t)y * (size_t)stride + (size_t)x * 4, 4);
            unsigned char *p = cv.px + ((size_t)y * (size_t)W + (size_t)x) * 3;
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
    int data = 0; /* an absent head's panel (A NULL) is drawn blank, not every one */
    for (int k = 0; k < rows * cols; k++) data += p[k].A != NULL;
    if (!data) return seterr(err, errlen, "heatmap: no panel has data (every head absent)");
    for (int k = 0; k < rows * cols; k++) {
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
    static const HeatmapStyle defaults = {0, 0, 0.0f, 0.0f, 1, NULL, 0, NULL};
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
