/* figstyle.c: the size and font of a command's figures (figstyle.h). */
#include "figstyle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define FIG_MIN_IN 1.0
#define FIG_MAX_IN 40.0
#define FIG_MIN_PT 4.0
#define FIG_MAX_PT 48.0

static FigStyle user;    /* the command's --size and --font */
static FigStyle current; /* the figure being drawn (figstyle_begin) */

/* A number in [lo, hi] at the start of s: its end into *end, or when end
 * is NULL the number must be all of s. */
static int number_in(const char *s, double lo, double hi, double *out, const char **end) {
    char *e;
    double v = strtod(s, &e);
    if (e == s || !(v >= lo && v <= hi)) return -1;
    if (end) *end = e;
    else if (*e) return -1;
    *out = v;
    return 0;
}

int figstyle_take(FigStyle *s, int key, const char *value, char *err, size_t errlen) {
    if (key == FIG_OPT_FONT) {
        if (number_in(value, FIG_MIN_PT, FIG_MAX_PT, &s->font_pt, NULL) != 0)
            return seterr(err, errlen, "--font %s: need points in [%g, %g]", value, FIG_MIN_PT,
                          FIG_MAX_PT);
        return 0;
    }
    if (!strcmp(value, "own")) {
        s->w_in = s->h_in = 0, s->own = 1;
        return 0;
    }
    const char *x;
    double w, h;
    if (number_in(value, FIG_MIN_IN, FIG_MAX_IN, &w, &x) != 0 || (*x != 'x' && *x != 'X') ||
        number_in(x + 1, FIG_MIN_IN, FIG_MAX_IN, &h, NULL) != 0)
        return seterr(err, errlen,
                      "--size %s: need WxH in inches, each in [%g, %g] (e.g. 3.3x2.5), or own",
                      value, FIG_MIN_IN, FIG_MAX_IN);
    s->w_in = w, s->h_in = h, s->own = 0;
    return 0;
}

int figstyle_option(FigStyle *s, const char *cmd, int key, const char *value) {
    char err[256];
    if (key != FIG_OPT_SIZE && key != FIG_OPT_FONT) return 0;
    if (figstyle_take(s, key, value, err, sizeof err) == 0) return 0;
    fprintf(stderr, "gatelab %s: %s\n", cmd, err);
    return -1;
}

void figstyle_set(const FigStyle *s) { user = current = *s; }

void figstyle_begin(int w, int h, int fit) {
    current = user;
    if (!fit || user.own || user.w_in > 0 || w <= 0 || h <= 0) return;
    current.w_in = w / FIG_PX_PER_IN > FIG_PAGE_IN ? FIG_PAGE_IN : FIG_COLUMN_IN;
    current.h_in = fmin(fmax(current.w_in * h / w, FIG_MIN_IN), FIG_PAGE_H_IN);
    if (!(user.font_pt > 0)) current.font_pt = FIG_FIT_FONT_PT;
}

const FigStyle *figstyle_get(void) { return &current; }

double figstyle_font_pt(void) { return current.font_pt > 0 ? current.font_pt : FIG_FONT_PT; }

void figstyle_px(int w, int h, int *out_w, int *out_h) {
    *out_w = current.w_in > 0 ? (int)lround(current.w_in * FIG_PX_PER_IN) : w;
    *out_h = current.h_in > 0 ? (int)lround(current.h_in * FIG_PX_PER_IN) : h;
}

int figstyle_narrow(void) { return current.w_in > 0 && current.w_in < FIG_NARROW_IN; }

int figstyle_title_chars(void) {
    if (!(current.w_in > 0)) return 0;
    int n = (int)(0.9 * current.w_in * 72.0 / (FIG_CHAR_EM * figstyle_font_pt()));
    return n > 10 ? n : 10;
}
