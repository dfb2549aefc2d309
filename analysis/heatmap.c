/* heatmap.c: not written yet */
