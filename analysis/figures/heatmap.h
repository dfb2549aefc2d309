/* heatmap.h: attention maps as figures (cairo; PNG through libpng, SVG and
 * PDF through cairo's vector surfaces). Pure rendering: it takes arrays,
 * never run files. */
#ifndef GATELAB_HEATMAP_H
#define GATELAB_HEATMAP_H

#include <stddef.h>

typedef struct {
    int log_scale;             /* colour by log10(a + 1e-4) so the sink column does
                                  not wash out the rest */
    int cell;                  /* pixels per matrix entry (>= 1); 0 = automatic */
    float vmin, vmax;          /* colour range; vmin >= vmax means automatic */
    int colorbar;              /* draw a labelled colour bar on the right */
    const char *title;         /* figure title in a band above the grid, or NULL */
    int axis_labels;           /* label the axes: "query" with the first and last
                                  query left of every row, "key position" with the
                                  first and last key under every panel of the
                                  bottom row, all written horizontally */
    const char *const *tokens; /* T labels (UTF-8, short) of the positions,
                                  or NULL: with axis_labels, every panel's
                                  rows and columns are labelled with them
                                  (left of the first column, under the
                                  bottom row, every k-th when they crowd) */
} HeatmapStyle;

/* One panel of a grid: a causal map A[T,T] (upper triangle masked grey),
 * titled (a short ASCII title). Under a sliding window of `window` keys
 * (> 0; config_layer_window of the panel's layer) query t sees keys
 * t - window < j <= t only, and the keys before the window are masked grey
 * too; 0 is full causal attention. */
typedef struct {
    const float *A; /* [T, T], or NULL: an absent head (its layer has fewer), drawn blank
                       under its title */
    int T;
    const char *title;
    int window;
} HeatPanel;

/* The one-line refusal of an output name that is not a figure's (a
 * printf format taking the path). */
#define HEATMAP_EXT_ERR                                                                            \
    "%s: a figure is written in the format its extension names; name a .png, .svg or .pdf"

/* Render rows x cols panels into one image at path, in the format its
 * extension names (.png, .svg or .pdf; any other is refused). -1 with a
 * one-line reason in err. */
int heatmap_write(const char *path, const HeatPanel *panels, int rows, int cols,
                  const HeatmapStyle *style, char *err, size_t errlen);

/* The same figure as STEM.png, STEM.svg and STEM.pdf side by side, path
 * naming any of the three. Every one of the three paths is checked
 * (outpath.h) before any is written. -1 with a one-line reason in err. */
int heatmap_write_figure(const char *path, const HeatPanel *panels, int rows, int cols,
                         const HeatmapStyle *style, char *err, size_t errlen);

/* 0 when heatmap_write may write path (outpath.h: a new path, or a
 * figure of path's format, PNG, SVG or PDF), else -1 and why (a name that
 * is not .png/.svg/.pdf, or a file not of that format). */
int heatmap_check_out(const char *path, char *err, size_t errlen);

/* path (ending .png, .svg or .pdf) with its extension replaced by ext
 * into out; -1 when path has none of those or out is too small. */
int heatmap_sibling(const char *path, const char *ext, char *out, size_t outlen);

/* The automatic colour range of these panels in linear units (what
 * HeatmapStyle's vmin/vmax 0/0 would use), so several figures can share
 * one range: take the smallest vmin and the largest vmax. */
void heatmap_auto_range(const HeatPanel *panels, int n, int log_scale, float *vmin, float *vmax);

/* viridis-like perceptual colormap: x in [0,1] -> rgb. */
void colormap_viridis(float x, unsigned char rgb[3]);

#endif
