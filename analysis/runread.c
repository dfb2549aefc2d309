/* runread.c: not written yet */
