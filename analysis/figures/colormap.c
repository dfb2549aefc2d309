/* colormap.c: a viridis-like perceptual colormap.
 *
 * Nine control points at x = 0, 1/8, ..., 1 walk from dark purple through
 * blue and teal to green and yellow; between them we interpolate linearly
 * in sRGB. The points were picked so that relative luminance
 * (0.2126 R + 0.7152 G + 0.0722 B) rises at every step (about 21 -> 222),
 * which is what makes the map readable in greyscale and keeps small
 * attention weights from looking larger than big ones. It is an
 * approximation of viridis, not its published table. */
#include "heatmap.h"

#include <math.h>

#define N_STOPS 9

static const unsigned char stops[N_STOPS][3] = {
    {68, 1, 84},    /* 0.000 dark purple */
    {72, 36, 117},  /* 0.125 */
    {59, 82, 139},  /* 0.250 blue */
    {44, 114, 142}, /* 0.375 */
    {33, 145, 140}, /* 0.500 teal */
    {39, 173, 129}, /* 0.625 */
    {94, 201, 98},  /* 0.750 green */
    {170, 220, 50}, /* 0.875 */
    {253, 231, 37}, /* 1.000 yellow */
};

/* x in [0,1] -> rgb; NaN maps to the low end, out-of-range x is clamped. */
void colormap_viridis(float x, unsigned char rgb[3]) {
    if (!(x > 0.0f)) x = 0.0f; /* also catches NaN */
    if (x > 1.0f) x = 1.0f;
    float pos = x * (float)(N_STOPS - 1);
    int i = (int)pos;
    if (i >= N_STOPS - 1) i = N_STOPS - 2;
    float f = pos - (float)i;
    for (int c = 0; c < 3; c++) {
        float v = (1.0f - f) * stops[i][c] + f * stops[i + 1][c];
        rgb[c] = (unsigned char)lrintf(v);
    }
}
