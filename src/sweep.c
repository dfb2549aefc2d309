/* sweep.c: not written yet */
