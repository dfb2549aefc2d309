/* heatmap.h: attention maps to PNG via libpng. Pure rendering: it takes
 * arrays, never run files. */
#ifndef GATELAB_HEATMAP_H
#define GATELAB_HEATMAP_H

#include <stddef.h>

typedef struct {
    int log_scale;     /* colour by log10(a + 1e-4) so the sink column does
                          not wash out the rest */
    int cell;          /* pixels per matrix entry (>= 1); 0 = automatic */
    float vmin, vmax;  /* colour range; vmin >= vmax means automatic */
    int colorbar;      /* draw a labelled colour bar on the right */
    const char *title; /* figure title in a band above the grid, or NULL */
    int axis_labels;   /* label the axes: "QUERY POSITION" down the left of
                          every row, "KEY POSITION" with its first and last
                          index under every panel of the bottom row */
} HeatmapStyle;

/* One panel of a grid: a causal map A[T,T] (upper triangle masked grey),
 * titled (short ASCII title drawn with a built-in bitmap font). */
typedef struct {
    const float *A;
    int T;
    const char *title;
} HeatPanel;

/* Render rows x cols panels into one PNG at path. -1 with a one-line
 * reason in err. */
int heatmap_write_png(const char *path, const HeatPanel *panels, int rows, int cols,
                      const HeatmapStyle *style, char *err, size_t errlen);

/* viridis-like perceptual colormap: x in [0,1] -> rgb. */
void colormap_viridis(float x, unsigned char rgb[3]);

#endif
