/* figstyle.h: the size and font of every figure one command draws, the
 * gnuplot figures and the cairo heatmaps alike, set once from the
 * command's --size and --font (FIGSTYLE_OPT_ROWS). Unset, a figure fits a
 * two-column paper (figstyle_begin): a column (FIG_COLUMN_IN) when its own
 * size at 96 pixels to the inch is no wider than a page, else the page
 * (FIG_PAGE_IN), as high as its own shape makes it, in FIG_FIT_FONT_PT. A
 * heatmap grid too large for the page keeps its own size (FIG_FONT_PT). */
#ifndef GATELAB_FIGSTYLE_H
#define GATELAB_FIGSTYLE_H

#include <stddef.h>

#include "opts.h"

#define FIG_FONT_PT 11     /* points: a figure drawn at its own size */
#define FIG_COLUMN_IN 3.3  /* a two-column paper's column width */
#define FIG_PAGE_IN 6.9    /* and its text width */
#define FIG_PAGE_H_IN 9.0  /* the tallest page-fitted figure */
#define FIG_FIT_FONT_PT 8  /* points: a page-fitted figure's font */
#define FIG_PX_PER_IN 96.0 /* pngcairo's and SVG's pixels to the inch */
#define FIG_PNG_DPI 300.0  /* a PNG drawn at a --size: print resolution */

typedef struct {
    double w_in, h_in; /* the whole image in inches; 0: fitted (figstyle_begin) */
    double font_pt;    /* 0: the default (FIG_FIT_FONT_PT fitted, FIG_FONT_PT at own size) */
    int own;           /* --size own: every figure at its own size, 96 pixels to the inch */
} FigStyle;

/* The option rows --size WxH and --font PT, spliced into the rows of
 * every command that draws figures (their keys FIG_OPT_SIZE and
 * FIG_OPT_FONT go to figstyle_take). */
enum { FIG_OPT_SIZE = OPT_LONG + 64, FIG_OPT_FONT };
/* clang-format off */
#define FIGSTYLE_OPT_ROWS                                                                         \
    {FIG_OPT_SIZE, "size", OPT_STR, "WxH", 0, 0,                                                  \
     "a column or a page wide, by the figure's own size",                                        \
     "figure size in inches, e.g. 3.3x2.5 (a column)\nor 6.9x3 (a page), PNGs at 300 dpi; own: "    \
     "each\nfigure's own pixels (a heatmap's one per cell)\n", 0, 0, OPT_SPECIAL},                 \
    {FIG_OPT_FONT, "font", OPT_STR, "PT", 0, 0, OPT_DEF(FIG_FIT_FONT_PT), "font size in points",    \
     0, 0, OPT_SPECIAL}
/* clang-format on */

/* Take the value of row key (FIG_OPT_SIZE or FIG_OPT_FONT) into *s. 0, or
 * -1 with one line in err naming the option and the value. */
int figstyle_take(FigStyle *s, int key, const char *value, char *err, size_t errlen);

/* Whether key is FIG_OPT_SIZE or FIG_OPT_FONT, taken into *s: 0 when it
 * is not, or is and its value is good; -1 after printing "gatelab CMD:
 * reason" to stderr (the caller exits 2). For opt_parse's loop. */
int figstyle_option(FigStyle *s, const char *cmd, int key, const char *value);

/* The command's style (its --size and --font) for every later figure. */
void figstyle_set(const FigStyle *s);
/* Begin a figure whose own size is w x h pixels: with fit and no --size
 * (nor --size own), it is drawn a column wide (a page wide when
 * w / FIG_PX_PER_IN is more than a page) and h/w of that high (at most
 * FIG_PAGE_H_IN), in FIG_FIT_FONT_PT unless --font says otherwise; else
 * at the command's style. Every call below reads the figure's style. */
void figstyle_begin(int w, int h, int fit);
const FigStyle *figstyle_get(void);

/* The font in points a figure is drawn with. */
double figstyle_font_pt(void);

/* 1 when a --size narrower than FIG_NARROW_IN inches is set: such a
 * figure puts its key below the plot and thins its x tics. */
#define FIG_NARROW_IN 5.0
int figstyle_narrow(void);

/* The characters of the font a line of title holds across a --size's
 * width (FIG_CHAR_EM of the font size a character, on average); 0 at a
 * figure's own size (titles are not broken). */
#define FIG_CHAR_EM 0.55
int figstyle_title_chars(void);

/* The image size in pixels at FIG_PX_PER_IN: the style's, else the
 * figure's own w x h. */
void figstyle_px(int w, int h, int *out_w, int *out_h);

#endif
