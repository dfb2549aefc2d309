/* heatmap_scale.h: a heatmap's values and colours (heatmap_scale.c), for
 * heatmap.c's layout and drawing. Transformed units: the value itself, or
 * with log_scale log10(a + 1e-4). */
#ifndef GATELAB_HEATMAP_SCALE_H
#define GATELAB_HEATMAP_SCALE_H

#include "heatmap.h"

/* The value a transformed-scale position stands for, for labels. */
double heat_untransform(double v, int log_scale);
/* Colour range [lo, hi] in transformed units: st's vmin..vmax when set,
 * else over the finite entries of every panel that their queries see. */
void heat_value_range(const HeatPanel *p, int n, const HeatmapStyle *st, double *lo, double *hi);
/* Pixel side of a panel of length T: st->cell per entry, else about 384
 * pixels (at most 512; one pixel for a block of entries past that). */
int heat_panel_px(int T, const HeatmapStyle *st);
/* Colour of pixel (py, px) of panel p drawn P pixels wide on [lo, hi]:
 * the max over the visible entries it covers; grey when none is visible,
 * magenta when only non-finite ones are. */
void heat_pixel_colour(const HeatPanel *p, int P, int py, int px, const HeatmapStyle *st, double lo,
                       double hi, unsigned char rgb[3]);
/* The colour bar's middle tick: halfway, or on a log scale the power of
 * ten nearest halfway when it lies inside. */
double heat_bar_mid(double lo, double hi, int log_scale);
/* The colour bar's labels: max, mid, min (top to bottom), linear values. */
void heat_bar_labels(double lo, double hi, int log_scale, char lab[3][32]);

#endif
