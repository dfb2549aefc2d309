/* heatmap_scale.c: a heatmap's values and colours (heatmap_scale.h):
 * the linear or log10(a + LOG_EPS) scale, the colour range over the
 * entries a query sees, the panels' pixel sizes, each pixel's colour
 * (viridis, the max of the block of entries it covers) and the colour
 * bar's labels. */
#include "heatmap_scale.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LOG_EPS 1e-4
enum {
    AUTO_PANEL = 384, /* target panel size for automatic cells */
    MAX_PANEL = 512,  /* automatic panels never exceed this */
};

static const unsigned char MASK_GREY[3] = {160, 160, 160}; /* a key the query does not see */
static const unsigned char NAN_RGB[3] = {255, 0, 255};     /* a non-finite entry */

static double heat_transform(double a, int log_scale) {
    if (!log_scale) return a;
    return log10((a > 0 ? a : 0) + LOG_EPS);
}

/* The value a transformed-scale position stands for, for labels. */
double heat_untransform(double v, int log_scale) {
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
void heat_value_range(const HeatPanel *p, int n, const HeatmapStyle *st, double *lo, double *hi) {
    int ls = st->log_scale;
    if (st->vmin < st->vmax) {
        *lo = heat_transform(st->vmin, ls), *hi = heat_transform(st->vmax, ls);
        return;
    }
    double mn = INFINITY, mx = -INFINITY;
    for (int k = 0; k < n; k++) {
        int T = p[k].A ? p[k].T : 0; /* an absent head has no entries */
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
        *lo = heat_transform(mn, 1), *hi = heat_transform(mx, 1);
    } else {
        *lo = mn < 0 ? mn : 0, *hi = mx;
    }
    if (!(*hi > *lo)) *hi = *lo + 1.0;
}

/* Pixel side of a panel of length T. */
int heat_panel_px(int T, const HeatmapStyle *st) {
    if (st->cell >= 1) return T * st->cell;
    int cell = AUTO_PANEL / T;
    if (cell >= 1) return T * cell;
    return T <= MAX_PANEL ? T : MAX_PANEL;
}

/* Colour of panel pixel (py, px): the max over the visible entries of the
 * block of entries the pixel covers; mask grey when none is visible. */
void heat_pixel_colour(const HeatPanel *p, int P, int py, int px, const HeatmapStyle *st, double lo,
                       double hi, unsigned char rgb[3]) {
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
        double x = (heat_transform(best, st->log_scale) - lo) / (hi - lo);
        colormap_viridis((float)x, rgb);
    }
}

/* The middle tick of the colour bar in transformed units: halfway, or on
 * a log scale the power of ten nearest halfway when it lies inside. */
double heat_bar_mid(double lo, double hi, int log_scale) {
    double mid = 0.5 * (lo + hi);
    if (!log_scale) return mid;
    double a = heat_untransform(mid, 1);
    if (!(a > 0)) return mid;
    double t = heat_transform(pow(10.0, round(log10(a))), 1);
    return t > lo && t < hi ? t : mid;
}

/* Tick labels: max, mid, min (top to bottom), as linear values. */
void heat_bar_labels(double lo, double hi, int log_scale, char lab[3][32]) {
    double v[3] = {hi, heat_bar_mid(lo, hi, log_scale), lo};
    for (int i = 0; i < 3; i++)
        snprintf(lab[i], sizeof lab[i], "%.3g", heat_untransform(v[i], log_scale));
}

/* See heatmap.h. */
void heatmap_auto_range(const HeatPanel *panels, int n, int log_scale, float *vmin, float *vmax) {
    HeatmapStyle st = {log_scale, 0, 0.0f, 0.0f, 0, NULL, 0, NULL};
    double lo, hi;
    heat_value_range(panels, n, &st, &lo, &hi);
    double a = heat_untransform(lo, log_scale), b = heat_untransform(hi, log_scale);
    if (log_scale && a <= 0) a = 0;
    *vmin = (float)a, *vmax = (float)b;
}
