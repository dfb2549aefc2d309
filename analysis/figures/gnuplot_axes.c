/* gnuplot_axes.c: ranges and tics of the line figures (gnuplot_axes.h). */
#include "gnuplot_axes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int gp_panel_yrange(const PlotAxes *ax, const PlotSeries *s, int ns, int p, double *lo,
                    double *hi) {
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < ns; i++)
        for (size_t j = 0; s[i].panel == p && j < s[i].n; j++) {
            double y = s[i].y[j];
            if (isfinite(y) && isfinite(s[i].x[j])) a = fmin(a, y), b = fmax(b, y);
        }
    if (!(a <= b)) return 0;
    double pad = b > a ? 0.05 * (b - a) : 0.5 * (fabs(a) > 0 ? fabs(a) : 1);
    *lo = ax->yfrom0 ? 0 : a - pad, *hi = b + pad;
    return 1;
}

double gp_nice_step(double a, double b) {
    if (!(b > a) || !isfinite(b - a)) return 0;
    double raw = (b - a) / 4, mag = pow(10, floor(log10(raw)));
    static const double NICE[] = {1, 2, 2.5, 5}; /* raw < 10 mag, so 10 ends the list */
    for (size_t k = 0; k < sizeof NICE / sizeof *NICE; k++)
        if (NICE[k] * mag >= raw) return NICE[k] * mag;
    return 10 * mag;
}

double gp_x_tic_step(const PlotSeries *s, int ns) {
    double a = INFINITY, b = -INFINITY;
    for (int i = 0; i < ns; i++)
        for (size_t j = 0; j < s[i].n; j++)
            if (isfinite(s[i].x[j])) a = fmin(a, s[i].x[j]), b = fmax(b, s[i].x[j]);
    return gp_nice_step(a, b);
}

int gp_log_decades(const double *v, size_t n, int *lo, int *hi) {
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) a = fmin(a, v[i]), b = fmax(b, v[i]);
    if (!(a <= b)) return 0;
    /* a hair of slack, so 1e-3 computed as 0.0009999999 is still 10^-3 */
    *lo = (int)floor(log10(a) + 1e-9), *hi = (int)ceil(log10(b) - 1e-9);
    if (*hi <= *lo) *hi = *lo + 1;
    return 1;
}

void gp_pow10_label(int k, char *out, size_t outlen) {
    static const char *const SUP[10] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                        "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
    char digits[16];
    snprintf(digits, sizeof digits, "%d", k < 0 ? -k : k);
    snprintf(out, outlen, "10%s", k < 0 ? "\u207b" : "");
    for (const char *d = digits; *d; d++)
        if (strlen(out) + strlen(SUP[*d - '0']) < outlen) strcat(out, SUP[*d - '0']);
}

/* The positive values of panel p into a log axis's decades. */
static int panel_decades(const PlotSeries *s, int ns, int p, int *lo, int *hi, double *top) {
    int have = 0;
    *top = -INFINITY;
    for (int i = 0; i < ns; i++) {
        int l, h;
        if (s[i].panel != p || !gp_log_decades(s[i].y, s[i].n, &l, &h)) continue;
        for (size_t j = 0; j < s[i].n; j++)
            if (isfinite(s[i].y[j]) && s[i].y[j] > 0) *top = fmax(*top, s[i].y[j]);
        if (!have || l < *lo) *lo = l;
        if (!have || h > *hi) *hi = h;
        have = 1;
    }
    return have;
}

void gp_log_axis(FILE *f, const PlotSeries *s, int ns, int p) {
    int lo, hi;
    double top;
    if (!panel_decades(s, ns, p, &lo, &hi, &top)) {
        fprintf(f, "set autoscale y\nset ytics autofreq\n");
        return;
    }
    double ymax = pow(10, hi);
    if (top > pow(10, hi - 0.02)) ymax = pow(10, hi + 0.08); /* a line on the decade clears it */
    int step = (hi - lo + GP_LOG_TICS - 1) / GP_LOG_TICS;
    fprintf(f, "set yrange [1e%d:%.9g]\nset ytics (", lo, ymax);
    for (int k = lo; k <= hi; k += step) {
        char lab[48];
        gp_pow10_label(k, lab, sizeof lab);
        fprintf(f, "%s'%s' 1e%d", k == lo ? "" : ", ", lab, k);
    }
    fprintf(f, ")\nset mytics 10\n");
}
