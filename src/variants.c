/* variants.c: not written yet */
