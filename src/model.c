/* model.c: not written yet */
