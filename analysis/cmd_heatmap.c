/* cmd_heatmap.c: not written yet */
