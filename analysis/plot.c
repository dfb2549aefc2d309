/* plot.c: not written yet */
