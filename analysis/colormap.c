/* colormap.c: not written yet */
